//! Trace readers: replay recorded request streams, one line or one record at a time.
//!
//! A [`TraceReader`] reads its input through a [`BufRead`] and keeps one line (or record) buffer,
//! so replaying a trace of millions of requests uses the same memory as replaying ten. Six
//! formats, four text and two binary:
//!
//! | [`TraceFormat`] | source | one line / record | arrivals |
//! |---|---|---|---|
//! | `disksim` | DiskSim 4.0 ASCII input traces | `arrival_ms device block sectors flags` | [`Open`](ArrivalKind::Open), times as recorded |
//! | `validate` | DiskSim `valid/` real-drive traces | `R Hit 4583176 4 663.0 45422.0` | [`ClosedDelay`](ArrivalKind::ClosedDelay) |
//! | `msr` | MSR Cambridge block traces (SNIA IOTTA) | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | [`Open`](ArrivalKind::Open), from the first record |
//! | `blkparse` | Linux `blkparse` default text output | `8,0 3 1 0.000000000 697 D R 223490 + 8 [kjournald]` | [`Open`](ArrivalKind::Open), times as recorded |
//! | `srt` | HP Labs 1992 disk traces (cello, snake), as DiskSim's `hpl` format reads them | 52–60-byte big-endian record: size, id, s, µs, …, bytes, sector, device, …, flags | [`Open`](ArrivalKind::Open), times as recorded |
//! | `vscsi` | CloudPhysics VMware VSCSI traces (SHARDS, FAST 2015) | 32-byte (v1) or 40-byte (v2) little-endian record: …, length, SCSI command, version, LBA, µs | [`Open`](ArrivalKind::Open), from the first record |
//!
//! Details of each format are in its module: [`disksim`], [`validate`], [`msr`], [`blkparse`],
//! [`srt`], [`vscsi`]. Common rules:
//!
//! - Text formats: blank lines, and lines whose first non-blank character is `#`, are skipped.
//!   Any other line that does not parse is an error naming the file and the 1-based line, e.g.
//!   `trace.txt:17: expected 5 fields, got 3` ([`WorkloadError::Parse`]).
//! - Binary formats: records are read whole, one after the other. A record that does not parse,
//!   and a last record cut short by the end of the file, are errors naming the file, the 1-based
//!   record and its byte offset, e.g. `t.vscsi:record 3 (byte offset 64): truncated record: 12 of
//!   32 bytes before the end of the file` ([`WorkloadError::Record`]).
//! - Readers never panic on bad input; after an error they yield nothing more.
//! - Open-arrival traces must not go back in time (equal times are fine).
//! - With [`TraceReader::with_capacity`] every request must end within the disk, or the reader
//!   fails naming the line (record) and the capacity. A trace recorded on a larger volume can be
//!   fitted onto the disk with an address map ([`AddressMap`]: `modulo` or `scale`, see
//!   [`TraceReader::with_modulo_map`] and [`TraceReader::with_scale_map`]).
//! - Text times are parsed as exact decimals (no float rounding) to the nanosecond; binary times
//!   are integers converted exactly.

pub mod blkparse;
pub mod disksim;
pub mod msr;
pub mod srt;
pub mod validate;
pub mod vscsi;

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::request::Request;
use freeblock_disk::SimTime;

use super::{ArrivalKind, Workload, WorkloadError};

/// The format of a trace file. In TOML:
/// `format = "disksim" | "validate" | "msr" | "blkparse" | "srt" | "vscsi"` (`ascii`,
/// `disksim_validate` and `hpl` are accepted too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// DiskSim ASCII input trace (see [`disksim`]). Also accepted as `ascii`.
    #[serde(alias = "ascii")]
    Disksim,
    /// DiskSim "validate" real-drive trace (see [`validate`]). Also accepted as
    /// `disksim_validate`.
    #[serde(alias = "disksim_validate")]
    Validate,
    /// MSR Cambridge CSV trace (see [`msr`]).
    Msr,
    /// `blkparse` default text output (see [`blkparse`]).
    Blkparse,
    /// HP Labs SRT disk trace, binary, as DiskSim's `hpl` format (see [`srt`]). Also accepted as
    /// `hpl`.
    #[serde(alias = "hpl")]
    Srt,
    /// CloudPhysics VSCSI trace, binary, version 1 or 2 (see [`vscsi`]).
    Vscsi,
}

impl TraceFormat {
    /// All formats, in documentation order.
    pub const ALL: [TraceFormat; 6] = [
        TraceFormat::Disksim,
        TraceFormat::Validate,
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::Srt,
        TraceFormat::Vscsi,
    ];

    /// The name used in specs and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Disksim => "disksim",
            TraceFormat::Validate => "validate",
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Srt => "srt",
            TraceFormat::Vscsi => "vscsi",
        }
    }

    /// How the simulator must issue this format's requests.
    #[must_use]
    pub fn arrival(self) -> ArrivalKind {
        match self {
            TraceFormat::Validate => ArrivalKind::ClosedDelay,
            TraceFormat::Disksim
            | TraceFormat::Msr
            | TraceFormat::Blkparse
            | TraceFormat::Srt
            | TraceFormat::Vscsi => ArrivalKind::Open,
        }
    }

    /// True if lines (records) carry a device number that [`TraceReader::with_device`] can filter
    /// on.
    #[must_use]
    pub fn has_device(self) -> bool {
        matches!(
            self,
            TraceFormat::Disksim | TraceFormat::Msr | TraceFormat::Srt
        )
    }

    /// True for the binary record formats (`srt`, `vscsi`), whose errors name a record and its
    /// byte offset rather than a line.
    #[must_use]
    pub fn is_binary(self) -> bool {
        matches!(self, TraceFormat::Srt | TraceFormat::Vscsi)
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s_lower = s.to_ascii_lowercase();
        match s_lower.as_str() {
            "ascii" => return Ok(TraceFormat::Disksim),
            "disksim_validate" => return Ok(TraceFormat::Validate),
            "hpl" => return Ok(TraceFormat::Srt),
            _ => {}
        }
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name() == s_lower)
            .ok_or_else(|| {
                format!(
                    "unknown trace format `{s}` \
                     (known: disksim, validate, msr, blkparse, srt, vscsi)"
                )
            })
    }
}

/// The per-format parser. `Ok(None)` skips the line or record (filtered out, or not a request).
#[derive(Debug, Clone)]
enum Parser {
    Disksim(disksim::DisksimParser),
    Validate(validate::ValidateParser),
    Msr(msr::MsrParser),
    Blkparse(blkparse::BlkparseParser),
    Srt(srt::SrtParser),
    Vscsi(vscsi::VscsiParser),
}

impl Parser {
    fn new(format: TraceFormat) -> Self {
        match format {
            TraceFormat::Disksim => Parser::Disksim(disksim::DisksimParser::default()),
            TraceFormat::Validate => Parser::Validate(validate::ValidateParser::default()),
            TraceFormat::Msr => Parser::Msr(msr::MsrParser::default()),
            TraceFormat::Blkparse => Parser::Blkparse(blkparse::BlkparseParser::default()),
            TraceFormat::Srt => Parser::Srt(srt::SrtParser::default()),
            TraceFormat::Vscsi => Parser::Vscsi(vscsi::VscsiParser::default()),
        }
    }

    fn format(&self) -> TraceFormat {
        match self {
            Parser::Disksim(_) => TraceFormat::Disksim,
            Parser::Validate(_) => TraceFormat::Validate,
            Parser::Msr(_) => TraceFormat::Msr,
            Parser::Blkparse(_) => TraceFormat::Blkparse,
            Parser::Srt(_) => TraceFormat::Srt,
            Parser::Vscsi(_) => TraceFormat::Vscsi,
        }
    }

    /// Parses one text line (text formats only).
    fn parse_line(&mut self, line: &str) -> Result<Option<Request>, String> {
        match self {
            Parser::Disksim(p) => p.parse(line),
            Parser::Validate(p) => p.parse(line),
            Parser::Msr(p) => p.parse(line),
            Parser::Blkparse(p) => p.parse(line),
            Parser::Srt(_) | Parser::Vscsi(_) => Err("a binary format has no lines".to_owned()),
        }
    }

    /// The binary record format, if this is one.
    fn records(&mut self) -> Option<&mut dyn RecordFormat> {
        match self {
            Parser::Srt(p) => Some(p),
            Parser::Vscsi(p) => Some(p),
            _ => None,
        }
    }
}

/// A binary record format, read by [`TraceReader`]'s generic record path.
///
/// The reader reads the first [`head_len`](RecordFormat::head_len) bytes of a record, asks the
/// format how long the whole record is, reads the rest, and hands the record over. Error strings
/// are one line, without the `file:record N (byte offset X)` prefix, which the reader adds.
pub(crate) trait RecordFormat {
    /// Bytes that tell a record's length (no record is shorter). At least 1.
    fn head_len(&self) -> usize;

    /// The byte that ends a text header in front of the first record, if the file has one:
    /// called with the file's first byte. `None`: the first record starts at byte 0.
    fn text_header_end(&self, _first_byte: u8) -> Option<u8> {
        None
    }

    /// The whole length of the record that begins with `head` (`head_len` bytes), at least
    /// `head_len` and at most [`MAX_RECORD`].
    fn record_len(&mut self, head: &[u8]) -> Result<usize, String>;

    /// Parses one whole record. `Ok(None)` skips it (not a request, or filtered out).
    fn parse(&mut self, record: &[u8]) -> Result<Option<Request>, String>;
}

/// The longest record a binary format may declare, bytes (a sanity bound on a corrupt length).
pub(crate) const MAX_RECORD: usize = 4096;

/// The longest text header in front of a binary trace's first record, bytes.
pub(crate) const MAX_TEXT_HEADER: u64 = 1 << 20;

/// How trace addresses are fitted onto a disk smaller than the traced volume. In TOML:
/// `map = "none" | "modulo" | "scale"` (see [`TraceSpec`](super::TraceSpec)).
///
/// Both maps work on blocks of `align_sectors` (default 8, 4 KB): a request keeps its offset
/// within its block, so block-aligned requests stay block-aligned and requests to one block stay
/// together. `C` is the disk's capacity in whole blocks, `b` a request's block
/// (`lbn / align_sectors`):
///
/// | map | block on the disk | keeps |
/// |---|---|---|
/// | `none` | `b` (a request past the disk is an error) | everything |
/// | `modulo` | `b mod C` | short seek distances, sequential runs (except across a wrap) |
/// | `scale` | `floor(b · C / S)`, `S` = the trace's span in blocks | the address layout, squeezed (or stretched) to the disk; neighbouring blocks may merge |
///
/// A mapped request that would still run past the last sector is moved back to end on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressMap {
    /// Addresses as recorded; a request past the disk is an error.
    #[default]
    None,
    /// Block `b` goes to block `b mod C`.
    Modulo,
    /// Block `b` goes to block `floor(b · C / S)` of the disk, `S` the trace's span.
    Scale,
}

impl AddressMap {
    /// The name used in specs.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            AddressMap::None => "none",
            AddressMap::Modulo => "modulo",
            AddressMap::Scale => "scale",
        }
    }

    /// True for [`AddressMap::None`].
    #[must_use]
    pub fn is_none(&self) -> bool {
        *self == AddressMap::None
    }
}

impl fmt::Display for AddressMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An address map with its parameters, as a reader applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mapper {
    Modulo { align: u64 },
    Scale { align: u64, span_blocks: u64 },
}

impl Mapper {
    /// The request's LBN on a disk of `capacity` sectors.
    fn apply(self, lbn: u64, sectors: u32, capacity: u64) -> Result<u64, String> {
        let sectors = u64::from(sectors);
        if sectors > capacity {
            return Err(format!(
                "request of {sectors} sectors is larger than the disk ({capacity} sectors)"
            ));
        }
        let align = match self {
            Mapper::Modulo { align } | Mapper::Scale { align, .. } => align,
        };
        let disk_blocks = capacity / align;
        if disk_blocks == 0 {
            return Err(format!(
                "the disk ({capacity} sectors) is smaller than one {align}-sector block"
            ));
        }
        let (block, within) = (lbn / align, lbn % align);
        let mapped = match self {
            Mapper::Modulo { .. } => block % disk_blocks,
            Mapper::Scale { span_blocks, .. } => {
                if block >= span_blocks {
                    return Err(format!(
                        "LBN {lbn} is past the mapped span of {} sectors (`span_sectors`)",
                        span_blocks.saturating_mul(align)
                    ));
                }
                // b < S, so b·C/S < C: the product needs 128 bits, the result fits.
                (u128::from(block) * u128::from(disk_blocks) / u128::from(span_blocks)) as u64
            }
        };
        let lbn = mapped * align + within;
        Ok(lbn.min(capacity - sectors))
    }
}

/// A streaming trace reader; a [`Workload`].
///
/// ```
/// use freeblock::workload::{TraceFormat, TraceReader, Workload};
/// let text = "0.0 0 1000 8 1\n2.5 0 5000 16 0\n";
/// let mut t = TraceReader::from_reader("inline.trace", text.as_bytes(), TraceFormat::Disksim)
///     .with_capacity(1_000_000);
/// let r = t.next_request().unwrap().unwrap();
/// assert_eq!((r.time, r.lbn, r.sectors, r.op.is_read()), (0, 1000, 8, true));
/// let r = t.next_request().unwrap().unwrap();
/// assert_eq!((r.time, r.lbn, r.sectors, r.op.is_read()), (2_500_000, 5000, 16, false));
/// assert!(t.next_request().unwrap().is_none());
/// ```
pub struct TraceReader {
    origin: String,
    input: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    /// Text: the last line read. Binary: the last record read (1-based).
    line: u64,
    /// Binary: bytes consumed so far (the offset of the next record).
    pos: u64,
    /// Binary: the offset of the last record read.
    record_offset: u64,
    /// Binary: the text header (if any) has been skipped.
    started: bool,
    parser: Parser,
    capacity: Option<u64>,
    map: Option<Mapper>,
    limit: Option<u64>,
    emitted: u64,
    last_time: SimTime,
    done: bool,
}

impl fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceReader")
            .field("origin", &self.origin)
            .field("format", &self.parser.format())
            .field("line", &self.line)
            .field("capacity", &self.capacity)
            .field("map", &self.map)
            .field("limit", &self.limit)
            .field("emitted", &self.emitted)
            .finish_non_exhaustive()
    }
}

impl TraceReader {
    /// Opens a trace file. Errors name the file as given.
    ///
    /// # Errors
    /// [`WorkloadError::Io`] if the file cannot be opened.
    pub fn open(path: impl AsRef<Path>, format: TraceFormat) -> Result<Self, WorkloadError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let file = File::open(path).map_err(|e| WorkloadError::Io {
            origin: origin.clone(),
            message: e.to_string(),
        })?;
        Ok(Self::from_reader(
            origin,
            BufReader::with_capacity(64 * 1024, file),
            format,
        ))
    }

    /// Reads a trace from any buffered reader; `origin` names it in errors (a file name, or
    /// something like `<stdin>`).
    #[must_use]
    pub fn from_reader(
        origin: impl Into<String>,
        reader: impl BufRead + Send + 'static,
        format: TraceFormat,
    ) -> Self {
        Self {
            origin: origin.into(),
            input: Box::new(reader),
            buf: Vec::with_capacity(256),
            line: 0,
            pos: 0,
            record_offset: 0,
            started: false,
            parser: Parser::new(format),
            capacity: None,
            map: None,
            limit: None,
            emitted: 0,
            last_time: 0,
            done: false,
        }
    }

    /// Checks every request against a disk of `capacity_sectors`: a request that ends past it is a
    /// [`WorkloadError::PastCapacity`] naming the line (for binary formats, a
    /// [`WorkloadError::Record`] naming the record). With an address map, requests are mapped
    /// onto this capacity first.
    #[must_use]
    pub fn with_capacity(mut self, capacity_sectors: u64) -> Self {
        self.capacity = Some(capacity_sectors);
        self
    }

    /// Maps addresses with [`AddressMap::Modulo`] on blocks of `align_sectors` (0 is taken as 1):
    /// block `b` goes to block `b mod C` of the disk. Applies only with
    /// [`with_capacity`](Self::with_capacity).
    #[must_use]
    pub fn with_modulo_map(mut self, align_sectors: u64) -> Self {
        self.map = Some(Mapper::Modulo {
            align: align_sectors.max(1),
        });
        self
    }

    /// Maps addresses with [`AddressMap::Scale`] on blocks of `align_sectors` (0 is taken as 1):
    /// the trace's addresses `0 .. span_sectors` are squeezed (or stretched) onto the disk, block
    /// `b` going to block `floor(b · C / S)`. A request at or past `span_sectors` is an error.
    /// Applies only with [`with_capacity`](Self::with_capacity). [`scan_span`](Self::scan_span)
    /// finds a trace's span.
    #[must_use]
    pub fn with_scale_map(mut self, span_sectors: u64, align_sectors: u64) -> Self {
        let align = align_sectors.max(1);
        self.map = Some(Mapper::Scale {
            align,
            span_blocks: span_sectors.div_ceil(align).max(1),
        });
        self
    }

    /// Stops after `count` requests (the rest of the file is not read).
    #[must_use]
    pub fn with_limit(mut self, count: u64) -> Self {
        self.limit = Some(count);
        self
    }

    /// Keeps only requests to device (`disksim`, `srt`) or disk (`msr`) number `device`. Ignored
    /// by the formats without device numbers (see [`TraceFormat::has_device`]); a
    /// [`TraceSpec`](super::TraceSpec) rejects it for them.
    #[must_use]
    pub fn with_device(mut self, device: u32) -> Self {
        match &mut self.parser {
            Parser::Disksim(p) => p.device = Some(device),
            Parser::Msr(p) => p.disk = Some(device),
            Parser::Srt(p) => p.device = Some(device),
            Parser::Validate(_) | Parser::Blkparse(_) | Parser::Vscsi(_) => {}
        }
        self
    }

    /// `blkparse` only: which action's events become requests. Default `D` (issued to the
    /// driver); `Q` (queued) gives the stream before the OS I/O scheduler merged and reordered it.
    /// Ignored by the other formats.
    #[must_use]
    pub fn with_blkparse_action(mut self, action: char) -> Self {
        if let Parser::Blkparse(p) = &mut self.parser {
            p.action = action;
        }
        self
    }

    /// The trace format.
    #[must_use]
    pub fn format(&self) -> TraceFormat {
        self.parser.format()
    }

    /// The name used in errors.
    #[must_use]
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The 1-based number of the last line read (for binary formats, of the last record read);
    /// 0 before the first.
    #[must_use]
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Reads the rest of the trace (without capacity check or address map) and returns its span:
    /// one past the highest sector any request touches, 0 for a trace without requests. The
    /// reader's device filter and limit apply. Constant memory, like replaying.
    ///
    /// # Errors
    /// The first error of the trace.
    pub fn scan_span(mut self) -> Result<u64, WorkloadError> {
        self.capacity = None;
        self.map = None;
        let mut span = 0;
        while let Some(r) = self.next_request()? {
            span = span.max(r.lbn.saturating_add(u64::from(r.sectors)));
        }
        Ok(span)
    }

    /// An error at the current line (text) or record (binary); the reader yields nothing more.
    fn parse_error(&mut self, message: String) -> WorkloadError {
        self.done = true;
        if self.parser.format().is_binary() {
            WorkloadError::Record {
                origin: self.origin.clone(),
                record: self.line,
                offset: self.record_offset,
                message,
            }
        } else {
            WorkloadError::Parse {
                origin: self.origin.clone(),
                line: self.line,
                message,
            }
        }
    }

    fn io_error(&mut self, what: String, e: &io::Error) -> WorkloadError {
        self.done = true;
        WorkloadError::Io {
            origin: self.origin.clone(),
            message: format!("reading {what}: {e}"),
        }
    }

    /// The next parsed text request, before the common checks.
    fn next_text(&mut self) -> Result<Option<Request>, WorkloadError> {
        loop {
            self.buf.clear();
            let n = match self.input.read_until(b'\n', &mut self.buf) {
                Ok(n) => n,
                Err(e) => return Err(self.io_error(format!("line {}", self.line + 1), &e)),
            };
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            let Ok(text) = std::str::from_utf8(&self.buf) else {
                return Err(self.parse_error("line is not valid UTF-8 text".to_owned()));
            };
            let text = text.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            match self.parser.parse_line(text) {
                Ok(None) => continue,
                Ok(Some(r)) => return Ok(Some(r)),
                Err(message) => return Err(self.parse_error(message)),
            }
        }
    }

    /// Skips a binary trace's text header, if the format has one and the file starts with it.
    fn skip_text_header(&mut self) -> Result<(), WorkloadError> {
        self.started = true;
        let first = match self.input.fill_buf() {
            Ok([]) => return Ok(()),
            Ok(b) => b[0],
            Err(e) => return Err(self.io_error("the trace header".to_owned(), &e)),
        };
        let Some(end) = self.parser.records().and_then(|f| f.text_header_end(first)) else {
            return Ok(());
        };
        self.buf.clear();
        let mut limited = (&mut self.input).take(MAX_TEXT_HEADER);
        let n = match limited.read_until(end, &mut self.buf) {
            Ok(n) => n as u64,
            Err(e) => return Err(self.io_error("the trace header".to_owned(), &e)),
        };
        if self.buf.last() != Some(&end) {
            self.line = 1;
            self.record_offset = 0;
            let message = if n >= MAX_TEXT_HEADER {
                format!(
                    "the text header has no end byte 0x{end:02X} within its first {MAX_TEXT_HEADER} bytes"
                )
            } else {
                format!("the file ends inside the text header ({n} bytes, no end byte 0x{end:02X})")
            };
            return Err(self.parse_error(message));
        }
        self.pos = n;
        Ok(())
    }

    /// The next parsed binary record's request, before the common checks.
    fn next_binary(&mut self) -> Result<Option<Request>, WorkloadError> {
        if !self.started {
            self.skip_text_header()?;
        }
        loop {
            let head_len = self.parser.records().map_or(1, |f| f.head_len()).max(1);
            self.buf.clear();
            self.buf.resize(head_len, 0);
            let got = match read_full(&mut self.input, &mut self.buf) {
                Ok(n) => n,
                Err(e) => return Err(self.io_error(format!("record {}", self.line + 1), &e)),
            };
            if got == 0 {
                return Ok(None);
            }
            self.line += 1;
            self.record_offset = self.pos;
            if got < head_len {
                let message = format!("truncated record: only {got} bytes before the end of the file (a record is at least {head_len})");
                return Err(self.parse_error(message));
            }
            let len = match self.parser.records().map(|f| f.record_len(&self.buf)) {
                Some(Ok(len)) if (head_len..=MAX_RECORD).contains(&len) => len,
                Some(Ok(len)) => {
                    let message = format!(
                        "record length {len} bytes is out of range ({head_len} to {MAX_RECORD})"
                    );
                    return Err(self.parse_error(message));
                }
                Some(Err(message)) => return Err(self.parse_error(message)),
                None => return Err(self.parse_error("not a binary format".to_owned())),
            };
            self.buf.resize(len, 0);
            let rest = match read_full(&mut self.input, &mut self.buf[head_len..]) {
                Ok(n) => n,
                Err(e) => return Err(self.io_error(format!("record {}", self.line), &e)),
            };
            if head_len + rest < len {
                return Err(self.truncated(head_len + rest, len));
            }
            self.pos += len as u64;
            let parsed = match self.parser.records() {
                Some(f) => f.parse(&self.buf),
                None => Err("not a binary format".to_owned()),
            };
            match parsed {
                Ok(None) => continue,
                Ok(Some(r)) => return Ok(Some(r)),
                Err(message) => return Err(self.parse_error(message)),
            }
        }
    }

    fn truncated(&mut self, got: usize, want: usize) -> WorkloadError {
        self.parse_error(format!(
            "truncated record: {got} of {want} bytes before the end of the file"
        ))
    }

    /// The checks every request passes: address map, capacity, time order.
    fn accept(&mut self, mut request: Request) -> Result<Request, WorkloadError> {
        if let (Some(map), Some(capacity)) = (self.map, self.capacity) {
            match map.apply(request.lbn, request.sectors, capacity) {
                Ok(lbn) => request.lbn = lbn,
                Err(message) => return Err(self.parse_error(message)),
            }
        }
        if let Some(capacity) = self.capacity {
            if request.lbn.saturating_add(u64::from(request.sectors)) > capacity {
                if self.parser.format().is_binary() {
                    let message = format!(
                        "request at LBN {} of {} sectors ends at {}, past the disk capacity of \
                         {capacity} sectors (an address map, map = \"scale\" or \"modulo\", fits \
                         a larger volume onto the disk)",
                        request.lbn,
                        request.sectors,
                        request.lbn.saturating_add(u64::from(request.sectors))
                    );
                    return Err(self.parse_error(message));
                }
                self.done = true;
                return Err(WorkloadError::PastCapacity {
                    origin: self.origin.clone(),
                    line: self.line,
                    lbn: request.lbn,
                    sectors: request.sectors,
                    capacity,
                });
            }
        }
        if self.parser.format().arrival() == ArrivalKind::Open {
            if request.time < self.last_time {
                let message = format!(
                    "arrival at {} is earlier than the previous request's {}",
                    fmt_ms(request.time),
                    fmt_ms(self.last_time)
                );
                return Err(self.parse_error(message));
            }
            self.last_time = request.time;
        }
        Ok(request)
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut dyn BufRead, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Opens a trace file; the same as [`TraceReader::open`]. Chain
/// [`TraceReader::with_capacity`] to check requests against the disk, and box the reader for a
/// `Box<dyn Workload>`:
///
/// ```no_run
/// use freeblock::workload::{open_trace, TraceFormat, Workload};
/// let w: Box<dyn Workload> =
///     Box::new(open_trace("atlas10k.trace", TraceFormat::Validate)?.with_capacity(17_938_986));
/// # Ok::<(), freeblock::workload::WorkloadError>(())
/// ```
///
/// # Errors
/// [`WorkloadError::Io`] if the file cannot be opened.
pub fn open_trace(
    path: impl AsRef<Path>,
    format: TraceFormat,
) -> Result<TraceReader, WorkloadError> {
    TraceReader::open(path, format)
}

impl Workload for TraceReader {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        if self.done {
            return Ok(None);
        }
        if self.limit.is_some_and(|limit| self.emitted >= limit) {
            self.done = true;
            return Ok(None);
        }
        let next = if self.parser.format().is_binary() {
            self.next_binary()?
        } else {
            self.next_text()?
        };
        let Some(request) = next else {
            self.done = true;
            return Ok(None);
        };
        let request = self.accept(request)?;
        self.emitted += 1;
        Ok(Some(request))
    }

    fn arrival(&self) -> ArrivalKind {
        self.parser.format().arrival()
    }
}

fn fmt_ms(ns: SimTime) -> String {
    format!("{}.{:06} ms", ns / 1_000_000, ns % 1_000_000)
}

// ----- shared field parsers (messages are one line, without the file:line prefix) -----

/// Parses an integer field, naming it in the error.
pub(crate) fn int<T: FromStr>(s: &str, what: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("bad {what} `{s}`: expected a non-negative integer"))
}

/// A request length of at least one sector.
pub(crate) fn sectors(s: &str, what: &str) -> Result<u32, String> {
    let n: u32 = s.parse().map_err(|_| {
        format!(
            "bad {what} `{s}`: expected an integer from 1 to {}",
            u32::MAX
        )
    })?;
    if n == 0 {
        return Err(format!("{what} is 0: a request needs at least one sector"));
    }
    Ok(n)
}

/// Parses a non-negative decimal `s` in a unit of `10^unit_exp` ns (ms: 6, µs: 3, s: 9) into ns,
/// exactly: digits beyond the nanosecond are rounded half up. Also accepts exponent notation
/// (`1.5e3`), through `f64`.
pub(crate) fn time_ns(s: &str, unit_exp: u32, what: &str) -> Result<SimTime, String> {
    let bad = || format!("bad {what} `{s}`: expected a non-negative number");
    let (int_part, frac_part) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty()) || !digits(int_part) || !digits(frac_part) {
        // Exponent notation or garbage: go through f64.
        let v: f64 = s.parse().map_err(|_| bad())?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(bad());
        }
        let ns = v * 10f64.powi(unit_exp as i32);
        if ns >= u64::MAX as f64 {
            return Err(format!("{what} `{s}` is too large"));
        }
        return Ok(ns.round() as SimTime);
    }
    let too_large = || format!("{what} `{s}` is too large");
    let scale = 10u64.pow(unit_exp);
    let whole: u64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| too_large())?
    };
    let mut ns = whole.checked_mul(scale).ok_or_else(too_large)?;
    let frac = frac_part.as_bytes();
    let mut place = scale;
    for &b in frac {
        if place == 1 {
            // Round on the first digit past the nanosecond.
            if b >= b'5' {
                ns = ns.checked_add(1).ok_or_else(too_large)?;
            }
            break;
        }
        place /= 10;
        ns = ns
            .checked_add(u64::from(b - b'0') * place)
            .ok_or_else(too_large)?;
    }
    Ok(ns)
}

/// Splits on whitespace into at most `N` fields; returns the fields and the total count.
pub(crate) fn fields<const N: usize>(line: &str) -> ([&str; N], usize) {
    let mut out = [""; N];
    let mut n = 0;
    for f in line.split_whitespace() {
        if n < N {
            out[n] = f;
        }
        n += 1;
    }
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_decimal_times() {
        assert_eq!(time_ns("0.000000478", 9, "t"), Ok(478));
        assert_eq!(time_ns("12", 6, "t"), Ok(12_000_000));
        assert_eq!(time_ns("663.00000", 3, "t"), Ok(663_000));
        assert_eq!(time_ns("14095.370", 3, "t"), Ok(14_095_370));
        assert_eq!(time_ns("1.0000005", 6, "t"), Ok(1_000_001));
        assert_eq!(time_ns(".5", 6, "t"), Ok(500_000));
        assert_eq!(time_ns("1.5e3", 6, "t"), Ok(1_500_000_000));
        assert!(time_ns("-1", 6, "t").is_err());
        assert!(time_ns("abc", 6, "t").is_err());
        assert!(time_ns(".", 6, "t").is_err());
        assert!(time_ns("nan", 6, "t").is_err());
        assert!(time_ns("99999999999999999999", 6, "t").is_err());
    }

    #[test]
    fn format_names_round_trip() {
        for f in TraceFormat::ALL {
            assert_eq!(f.name().parse::<TraceFormat>(), Ok(f));
        }
        assert!("csv".parse::<TraceFormat>().is_err());
    }
}
