//! Trace readers: replay recorded request streams, one line at a time.
//!
//! A [`TraceReader`] reads its input through a [`BufRead`] and keeps one line buffer, so replaying
//! a trace of millions of requests uses the same memory as replaying ten. Four formats:
//!
//! | [`TraceFormat`] | source | one line | arrivals |
//! |---|---|---|---|
//! | `disksim` | DiskSim 4.0 ASCII input traces | `arrival_ms device block sectors flags` | [`Open`](ArrivalKind::Open), times as recorded |
//! | `validate` | DiskSim `valid/` real-drive traces | `R Hit 4583176 4 663.0 45422.0` | [`ClosedDelay`](ArrivalKind::ClosedDelay) |
//! | `msr` | MSR Cambridge block traces (SNIA IOTTA) | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | [`Open`](ArrivalKind::Open), from the first record |
//! | `blkparse` | Linux `blkparse` default text output | `8,0 3 1 0.000000000 697 D R 223490 + 8 [kjournald]` | [`Open`](ArrivalKind::Open), times as recorded |
//!
//! Details of each format are in its module: [`disksim`], [`validate`], [`msr`], [`blkparse`].
//! Common rules:
//!
//! - Blank lines, and lines whose first non-blank character is `#`, are skipped.
//! - Any other line that does not parse is an error naming the file and the 1-based line, e.g.
//!   `trace.txt:17: expected 5 fields, got 3`. Readers never panic on bad input; after an error
//!   they yield nothing more.
//! - Open-arrival traces must not go back in time (equal times are fine).
//! - With [`TraceReader::with_capacity`] every request must end within the disk, or the reader
//!   fails with [`WorkloadError::PastCapacity`] naming the line and the capacity.
//! - Times are parsed as exact decimals (no float rounding) to the nanosecond.

pub mod blkparse;
pub mod disksim;
pub mod msr;
pub mod validate;

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::request::Request;
use freeblock_disk::SimTime;

use super::{ArrivalKind, Workload, WorkloadError};

/// The format of a trace file. In TOML:
/// `format = "disksim" | "validate" | "msr" | "blkparse"` (`ascii` and `disksim_validate` are
/// accepted too).
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
}

impl TraceFormat {
    /// All formats, in documentation order.
    pub const ALL: [TraceFormat; 4] = [
        TraceFormat::Disksim,
        TraceFormat::Validate,
        TraceFormat::Msr,
        TraceFormat::Blkparse,
    ];

    /// The name used in specs and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Disksim => "disksim",
            TraceFormat::Validate => "validate",
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
        }
    }

    /// How the simulator must issue this format's requests.
    #[must_use]
    pub fn arrival(self) -> ArrivalKind {
        match self {
            TraceFormat::Validate => ArrivalKind::ClosedDelay,
            TraceFormat::Disksim | TraceFormat::Msr | TraceFormat::Blkparse => ArrivalKind::Open,
        }
    }

    /// True if lines carry a device number that [`TraceReader::with_device`] can filter on.
    #[must_use]
    pub fn has_device(self) -> bool {
        matches!(self, TraceFormat::Disksim | TraceFormat::Msr)
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
            _ => {}
        }
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name() == s_lower)
            .ok_or_else(|| {
                format!("unknown trace format `{s}` (known: disksim, validate, msr, blkparse)")
            })
    }
}

/// The per-format line parser. `Ok(None)` skips the line (filtered out, or not a request).
#[derive(Debug, Clone)]
enum Parser {
    Disksim(disksim::DisksimParser),
    Validate(validate::ValidateParser),
    Msr(msr::MsrParser),
    Blkparse(blkparse::BlkparseParser),
}

impl Parser {
    fn new(format: TraceFormat) -> Self {
        match format {
            TraceFormat::Disksim => Parser::Disksim(disksim::DisksimParser::default()),
            TraceFormat::Validate => Parser::Validate(validate::ValidateParser::default()),
            TraceFormat::Msr => Parser::Msr(msr::MsrParser::default()),
            TraceFormat::Blkparse => Parser::Blkparse(blkparse::BlkparseParser::default()),
        }
    }

    fn format(&self) -> TraceFormat {
        match self {
            Parser::Disksim(_) => TraceFormat::Disksim,
            Parser::Validate(_) => TraceFormat::Validate,
            Parser::Msr(_) => TraceFormat::Msr,
            Parser::Blkparse(_) => TraceFormat::Blkparse,
        }
    }

    fn parse(&mut self, line: &str) -> Result<Option<Request>, String> {
        match self {
            Parser::Disksim(p) => p.parse(line),
            Parser::Validate(p) => p.parse(line),
            Parser::Msr(p) => p.parse(line),
            Parser::Blkparse(p) => p.parse(line),
        }
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
    line: u64,
    parser: Parser,
    capacity: Option<u64>,
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
            parser: Parser::new(format),
            capacity: None,
            limit: None,
            emitted: 0,
            last_time: 0,
            done: false,
        }
    }

    /// Checks every request against a disk of `capacity_sectors`: a request that ends past it is a
    /// [`WorkloadError::PastCapacity`] naming the line.
    #[must_use]
    pub fn with_capacity(mut self, capacity_sectors: u64) -> Self {
        self.capacity = Some(capacity_sectors);
        self
    }

    /// Stops after `count` requests (the rest of the file is not read).
    #[must_use]
    pub fn with_limit(mut self, count: u64) -> Self {
        self.limit = Some(count);
        self
    }

    /// Keeps only requests to device (`disksim`) or disk (`msr`) number `device`. Ignored by the
    /// formats without device numbers (see [`TraceFormat::has_device`]); a
    /// [`TraceSpec`](super::TraceSpec) rejects it for them.
    #[must_use]
    pub fn with_device(mut self, device: u32) -> Self {
        match &mut self.parser {
            Parser::Disksim(p) => p.device = Some(device),
            Parser::Msr(p) => p.disk = Some(device),
            Parser::Validate(_) | Parser::Blkparse(_) => {}
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

    /// The 1-based number of the last line read (0 before the first).
    #[must_use]
    pub fn line(&self) -> u64 {
        self.line
    }

    fn parse_error(&mut self, message: String) -> WorkloadError {
        self.done = true;
        WorkloadError::Parse {
            origin: self.origin.clone(),
            line: self.line,
            message,
        }
    }
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
        loop {
            self.buf.clear();
            let n = match self.input.read_until(b'\n', &mut self.buf) {
                Ok(n) => n,
                Err(e) => {
                    self.done = true;
                    return Err(WorkloadError::Io {
                        origin: self.origin.clone(),
                        message: format!("reading line {}: {e}", self.line + 1),
                    });
                }
            };
            if n == 0 {
                self.done = true;
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
            let request = match self.parser.parse(text) {
                Ok(None) => continue,
                Ok(Some(r)) => r,
                Err(message) => return Err(self.parse_error(message)),
            };
            if let Some(capacity) = self.capacity {
                if request.lbn.saturating_add(u64::from(request.sectors)) > capacity {
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
            self.emitted += 1;
            return Ok(Some(request));
        }
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
