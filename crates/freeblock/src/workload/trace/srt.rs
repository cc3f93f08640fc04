//! HP Labs SRT disk traces (the 1992 HP-UX traces of Ruemmler & Wilkes, *UNIX disk access
//! patterns*, USENIX Winter 1993: `cello`, `snake`, `hplajw`), in the record layout DiskSim 4.0
//! reads as its `hpl` trace format.
//!
//! A file is an optional text header, then binary records, one per I/O. All numbers are
//! **big-endian** 32-bit words (the traces were taken on HP PA-RISC machines).
//!
//! **Header.** If the file's first byte is not 0 (a record's first byte, the high byte of its
//! length, always is), the file starts with a text header (`tracedate = "…";` and other
//! `name = value` lines) that ends with a form feed byte (0x0C); the first record follows it. The
//! header is skipped unread; a header without a form feed in its first MiB is an error. Files
//! without a header (DiskSim's `hpl2`, written by `hplcomb`) start with a record at byte 0.
//!
//! **Record** (52 bytes; 56 or 60 with the optional words):
//!
//! | offset | word | meaning |
//! |---|---|---|
//! | 0 | size | the record's length in bytes, this word included: 52, +4 with a queue length, +4 for a suspect record |
//! | 4 | id | high 16 bits: record version, 1 to 4; low 16 bits: record type, 1 (short I/O) or 4 (suspect I/O) |
//! | 8 | seconds | arrival (enqueue) time: whole seconds … |
//! | 12 | microseconds | … plus microseconds |
//! | 16 | start | when the disk started the I/O, µs after the enqueue |
//! | 20 | stop | when the I/O completed, µs after the enqueue |
//! | 24 | bytes | transfer size, bytes: a positive multiple of 512 |
//! | 28 | sector | first sector (512-byte) on the disk |
//! | 32 | device | device number; bits 8–15 are the disk number |
//! | 36 | driver type | — |
//! | 40 | cylinder | cylinder of the access (as HP-UX computed it) |
//! | 44 | flags | HP-UX 8.0 buffer flags: bit 0 (0x1) set for a read, clear for a write; 0x100 asynchronous; 0x0100_0000 synchronous write |
//! | 48 | info | where the I/O came from |
//! | 52 | queue length | version 4 only: requests queued at the disk |
//! | 52 or 56 | suspect flags | type 4 (suspect I/O) only |
//!
//! Mapping to a [`Request`]:
//!
//! - `time = seconds · 10⁹ + microseconds · 10³` ns, as recorded (DiskSim does the same: the
//!   times of one file are already relative to its trace start), [`ArrivalKind::Open`].
//! - `lbn = sector`, `sectors = bytes / 512`; read if flag bit 0 is set.
//! - `measured = stop − start` (the disk's service time, without the queueing before it), when
//!   `stop ≥ start`.
//! - Suspect records (type 4: HP flagged some of their fields as unreliable) are skipped, as
//!   DiskSim skips them. The disk number (device bits 8–15) can be filtered on with
//!   [`TraceReader::with_device`](super::TraceReader::with_device).
//!
//! Errors: a version outside 1–4, a type other than 1 or 4, a size word that disagrees with the
//! version and type, a transfer of 0 bytes or not a multiple of 512, and a record cut short by the
//! end of the file, each naming the file, the record and its byte offset.
//!
//! [`ArrivalKind::Open`]: crate::workload::ArrivalKind::Open

// `x % n != 0` rather than `is_multiple_of` (Rust 1.87), as in the rest of the workspace.
#![allow(clippy::manual_is_multiple_of)]

use freeblock_disk::Op;

use super::RecordFormat;
use crate::request::Request;

/// Record type of an ordinary I/O.
pub const SHORT_IO: u32 = 1;
/// Record type of an I/O whose fields HP flagged as suspect.
pub const SUSPECT_IO: u32 = 4;
/// Flag bit set for a read.
pub const FLAG_READ: u32 = 0x1;
/// Length of a record without optional words, bytes.
pub const BASE_RECORD_BYTES: usize = 52;
/// The byte that ends the text header.
pub const HEADER_END: u8 = 0x0C;

#[derive(Debug, Clone, Default)]
pub(crate) struct SrtParser {
    /// Keep only this disk number (device bits 8–15).
    pub(crate) device: Option<u32>,
}

fn word(record: &[u8], index: usize) -> u32 {
    let at = index * 4;
    u32::from_be_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]])
}

/// The record length the id word calls for.
fn expected_len(id: u32) -> Result<usize, String> {
    let (version, kind) = (id >> 16, id & 0xFFFF);
    if !(1..=4).contains(&version) {
        return Err(format!(
            "bad record id 0x{id:08X}: version {version} (high 16 bits) is not 1 to 4"
        ));
    }
    if kind != SHORT_IO && kind != SUSPECT_IO {
        return Err(format!(
            "bad record id 0x{id:08X}: type {kind} (low 16 bits) is not an I/O \
             (1 short I/O, 4 suspect I/O)"
        ));
    }
    let mut len = BASE_RECORD_BYTES;
    if version == 4 {
        len += 4; // queue length
    }
    if kind == SUSPECT_IO {
        len += 4; // suspect flags
    }
    Ok(len)
}

impl RecordFormat for SrtParser {
    fn head_len(&self) -> usize {
        8
    }

    fn text_header_end(&self, first_byte: u8) -> Option<u8> {
        (first_byte != 0).then_some(HEADER_END)
    }

    fn record_len(&mut self, head: &[u8]) -> Result<usize, String> {
        let (size, id) = (word(head, 0), word(head, 1));
        let want = expected_len(id)?;
        if size as usize != want {
            return Err(format!(
                "record size word says {size} bytes, but a version {} type {} record is {want}",
                id >> 16,
                id & 0xFFFF
            ));
        }
        Ok(want)
    }

    fn parse(&mut self, record: &[u8]) -> Result<Option<Request>, String> {
        let id = word(record, 1);
        if id & 0xFFFF == SUSPECT_IO {
            return Ok(None);
        }
        let (seconds, micros) = (u64::from(word(record, 2)), u64::from(word(record, 3)));
        let (start, stop) = (word(record, 4), word(record, 5));
        let bytes = word(record, 6);
        let sector = word(record, 7);
        let device = (word(record, 8) >> 8) & 0xFF;
        let flags = word(record, 11);
        if self.device.is_some_and(|d| d != device) {
            return Ok(None);
        }
        if bytes == 0 {
            return Err("transfer size is 0 bytes: a request needs at least one sector".to_owned());
        }
        if bytes % 512 != 0 {
            return Err(format!(
                "transfer size {bytes} bytes is not a multiple of 512-byte sectors"
            ));
        }
        // seconds < 2^32, so seconds·10⁹ + micros·10³ < 2^64.
        let time = seconds * 1_000_000_000 + micros * 1_000;
        let op = if flags & FLAG_READ != 0 {
            Op::Read
        } else {
            Op::Write
        };
        let mut request = Request::new(time, u64::from(sector), bytes / 512, op);
        request.measured = stop.checked_sub(start).map(|us| u64::from(us) * 1_000);
        Ok(Some(request))
    }
}

/// Encodes one SRT record (version 1–3 layout without optional words unless `version` is 4 or
/// `suspect` is set): for tests and for writing small traces.
///
/// ```
/// use freeblock::workload::trace::srt;
/// let r = srt::encode_record(&srt::SrtRecord { seconds: 1, micros: 500, bytes: 8192,
///     sector: 1000, device: 6 << 8, flags: srt::FLAG_READ, ..Default::default() });
/// assert_eq!(r.len(), 52);
/// assert_eq!(&r[0..4], &52u32.to_be_bytes());
/// ```
#[must_use]
pub fn encode_record(r: &SrtRecord) -> Vec<u8> {
    let version = if r.version == 0 { 1 } else { r.version };
    let kind = if r.suspect { SUSPECT_IO } else { SHORT_IO };
    let id = (version << 16) | kind;
    let len = expected_len(id).unwrap_or(BASE_RECORD_BYTES);
    let mut words = vec![
        len as u32, id, r.seconds, r.micros, r.start, r.stop, r.bytes, r.sector, r.device, 0, 0,
        r.flags, 0,
    ];
    if version == 4 {
        words.push(r.queue_len);
    }
    if r.suspect {
        words.push(0);
    }
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

/// The fields of one SRT record, for [`encode_record`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SrtRecord {
    /// Record version, 1 to 4 (0 is taken as 1).
    pub version: u32,
    /// Type 4 (suspect I/O) instead of 1.
    pub suspect: bool,
    /// Arrival, whole seconds.
    pub seconds: u32,
    /// Arrival, microseconds past `seconds`.
    pub micros: u32,
    /// Service start, µs after the enqueue.
    pub start: u32,
    /// Completion, µs after the enqueue.
    pub stop: u32,
    /// Transfer size, bytes.
    pub bytes: u32,
    /// First sector.
    pub sector: u32,
    /// Device word (disk number in bits 8–15).
    pub device: u32,
    /// Flags word (bit 0: read).
    pub flags: u32,
    /// Queue length (version 4 only).
    pub queue_len: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_follow_version_and_type() {
        assert_eq!(expected_len(0x0001_0001), Ok(52));
        assert_eq!(expected_len(0x0004_0001), Ok(56));
        assert_eq!(expected_len(0x0004_0004), Ok(60));
        assert_eq!(expected_len(0x0003_0004), Ok(56));
        assert!(expected_len(0x0005_0001).is_err());
        assert!(expected_len(0x0001_0002).is_err());
    }

    #[test]
    fn record_round_trip() {
        let bytes = encode_record(&SrtRecord {
            version: 4,
            seconds: 3,
            micros: 250,
            start: 100,
            stop: 12_100,
            bytes: 4096,
            sector: 77,
            device: 0x0600,
            flags: 0,
            ..SrtRecord::default()
        });
        let mut p = SrtParser::default();
        assert_eq!(p.record_len(&bytes[..8]), Ok(56));
        let r = p.parse(&bytes).unwrap().unwrap();
        assert_eq!(r.time, 3_000_250_000);
        assert_eq!((r.lbn, r.sectors, r.op), (77, 8, Op::Write));
        assert_eq!(r.measured, Some(12_000_000));
        p.device = Some(5);
        assert_eq!(p.parse(&bytes), Ok(None));
    }
}
