//! CloudPhysics VSCSI traces: SCSI commands of one VMware virtual disk, recorded at the
//! hypervisor's VSCSI layer (the traces behind Waldspurger et al., *Efficient MRC construction
//! with SHARDS*, FAST 2015; the sample `cloudPhysicsIO.vscsi` ships with libCacheSim).
//!
//! A file is a sequence of fixed-size **little-endian** records with no header. Two versions,
//! told apart by a version byte whose place differs between them:
//!
//! | version 1 (32 bytes) offset | version 2 (40 bytes) offset | type | field |
//! |---|---|---|---|
//! | 0 | 4 | u32 | serial number |
//! | 4 | 8 | u32 | transfer length, bytes |
//! | 8 | 12 | u32 | scatter-gather entries |
//! | 12 | 0 | u16 | SCSI command (operation code) |
//! | 14 | 2 | u16 | version: high byte (offset 15, resp. 3) is 1, resp. 2 |
//! | 16 | 16 | u64 | first sector (512-byte LBA) |
//! | 24 | 24 | u64 | timestamp, µs |
//! | — | 32 | u64 | response time, µs (version 2 only) |
//!
//! The first record fixes the file's version: version 1 if its byte 15 is 1, else version 2 if
//! its byte 3 is 2, else the file is not a VSCSI trace (an error naming record 1). Every later
//! record must carry the same version byte, or it is an error naming it.
//!
//! Mapping to a [`Request`]:
//!
//! | SCSI command | operation |
//! |---|---|
//! | READ(6) 0x08, READ(10) 0x28, READ(12) 0xA8, READ(16) 0x88 | read |
//! | WRITE(6) 0x0A, WRITE(10) 0x2A, WRITE(12) 0xAA, WRITE(16) 0x8A | write |
//! | anything else (TEST UNIT READY, INQUIRY, …) | skipped, not a request |
//!
//! - `time` = (timestamp − the first record's timestamp) µs, in ns: the first record arrives at 0
//!   and arrivals are [`ArrivalKind::Open`]. A timestamp before the first record's is an error.
//! - `lbn` = the LBA; `sectors = ceil(length / 512)`. A read or write of length 0 is an error.
//! - The version 2 response time includes queueing in the guest and the host, so it is read but
//!   not kept as [`Request::measured`].
//!
//! [`ArrivalKind::Open`]: crate::workload::ArrivalKind::Open

use freeblock_disk::Op;

use super::RecordFormat;
use crate::request::Request;

/// Length of a version 1 record, bytes.
pub const V1_RECORD_BYTES: usize = 32;
/// Length of a version 2 record, bytes.
pub const V2_RECORD_BYTES: usize = 40;

/// A VSCSI record version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VscsiVersion {
    /// 32-byte records, version byte at offset 15.
    V1,
    /// 40-byte records with a response time, version byte at offset 3.
    V2,
}

impl VscsiVersion {
    /// Record length, bytes.
    #[must_use]
    pub fn record_bytes(self) -> usize {
        match self {
            VscsiVersion::V1 => V1_RECORD_BYTES,
            VscsiVersion::V2 => V2_RECORD_BYTES,
        }
    }

    /// Offset of the version byte (the high byte of the little-endian version field).
    #[must_use]
    pub fn version_byte_offset(self) -> usize {
        match self {
            VscsiVersion::V1 => 15,
            VscsiVersion::V2 => 3,
        }
    }

    /// The version byte's value.
    #[must_use]
    pub fn number(self) -> u8 {
        match self {
            VscsiVersion::V1 => 1,
            VscsiVersion::V2 => 2,
        }
    }
}

/// The operation of a SCSI command: `Some` for the READ and WRITE commands, `None` for the rest.
#[must_use]
pub fn scsi_op(command: u16) -> Option<Op> {
    match command {
        0x08 | 0x28 | 0xA8 | 0x88 => Some(Op::Read),
        0x0A | 0x2A | 0xAA | 0x8A => Some(Op::Write),
        _ => None,
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct VscsiParser {
    version: Option<VscsiVersion>,
    /// Timestamp of the first record, µs.
    first: Option<u64>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

impl RecordFormat for VscsiParser {
    fn head_len(&self) -> usize {
        16
    }

    fn record_len(&mut self, head: &[u8]) -> Result<usize, String> {
        let version = match self.version {
            Some(v) => {
                let at = v.version_byte_offset();
                if head[at] != v.number() {
                    return Err(format!(
                        "version byte (offset {at}) is 0x{:02X}; the file's first record made \
                         it a version {} trace (0x{:02X})",
                        head[at],
                        v.number(),
                        v.number()
                    ));
                }
                v
            }
            None => {
                let v = if head[15] == 1 {
                    VscsiVersion::V1
                } else if head[3] == 2 {
                    VscsiVersion::V2
                } else {
                    return Err(format!(
                        "unknown VSCSI version: byte 15 is 0x{:02X} (1 for version 1) and byte 3 \
                         is 0x{:02X} (2 for version 2)",
                        head[15], head[3]
                    ));
                };
                self.version = Some(v);
                v
            }
        };
        Ok(version.record_bytes())
    }

    fn parse(&mut self, record: &[u8]) -> Result<Option<Request>, String> {
        let (command, length) = match self.version {
            Some(VscsiVersion::V2) => (u16_at(record, 0), u32_at(record, 8)),
            _ => (u16_at(record, 12), u32_at(record, 4)),
        };
        let lba = u64_at(record, 16);
        let ts = u64_at(record, 24);
        let first = *self.first.get_or_insert(ts);
        let Some(us) = ts.checked_sub(first) else {
            return Err(format!(
                "timestamp {ts} µs is before the first record's {first} µs"
            ));
        };
        let Some(op) = scsi_op(command) else {
            return Ok(None);
        };
        if length == 0 {
            return Err(format!(
                "SCSI command 0x{command:02X} has length 0 bytes: a request needs at least one \
                 sector"
            ));
        }
        let sectors = length.div_ceil(512);
        if lba.checked_add(u64::from(sectors)).is_none() {
            return Err(format!("LBA {lba} + {sectors} sectors overflows"));
        }
        let time = us
            .checked_mul(1_000)
            .ok_or_else(|| format!("timestamp {ts} µs is too large"))?;
        Ok(Some(Request::new(time, lba, sectors, op)))
    }
}

/// The fields of one VSCSI record, for [`encode_record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VscsiRecord {
    /// Serial number.
    pub serial: u32,
    /// Transfer length, bytes.
    pub length: u32,
    /// Scatter-gather entries.
    pub sg_entries: u32,
    /// SCSI operation code.
    pub command: u16,
    /// First sector.
    pub lba: u64,
    /// Timestamp, µs.
    pub timestamp_us: u64,
    /// Response time, µs (version 2 only).
    pub response_us: u64,
}

/// Encodes one record in `version`'s layout: for tests and for writing small traces.
///
/// ```
/// use freeblock::workload::trace::vscsi::{encode_record, VscsiRecord, VscsiVersion};
/// let r = VscsiRecord { serial: 1, length: 4096, sg_entries: 1, command: 0x28, lba: 8,
///     timestamp_us: 10, response_us: 0 };
/// assert_eq!(encode_record(&r, VscsiVersion::V1).len(), 32);
/// assert_eq!(encode_record(&r, VscsiVersion::V2).len(), 40);
/// ```
#[must_use]
pub fn encode_record(r: &VscsiRecord, version: VscsiVersion) -> Vec<u8> {
    let ver = u16::from(version.number()) << 8;
    let mut out = Vec::with_capacity(version.record_bytes());
    match version {
        VscsiVersion::V1 => {
            out.extend_from_slice(&r.serial.to_le_bytes());
            out.extend_from_slice(&r.length.to_le_bytes());
            out.extend_from_slice(&r.sg_entries.to_le_bytes());
            out.extend_from_slice(&r.command.to_le_bytes());
            out.extend_from_slice(&ver.to_le_bytes());
        }
        VscsiVersion::V2 => {
            out.extend_from_slice(&r.command.to_le_bytes());
            out.extend_from_slice(&ver.to_le_bytes());
            out.extend_from_slice(&r.serial.to_le_bytes());
            out.extend_from_slice(&r.length.to_le_bytes());
            out.extend_from_slice(&r.sg_entries.to_le_bytes());
        }
    }
    out.extend_from_slice(&r.lba.to_le_bytes());
    out.extend_from_slice(&r.timestamp_us.to_le_bytes());
    if version == VscsiVersion::V2 {
        out.extend_from_slice(&r.response_us.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(command: u16, length: u32, lba: u64, ts: u64) -> VscsiRecord {
        VscsiRecord {
            serial: 7,
            length,
            sg_entries: 1,
            command,
            lba,
            timestamp_us: ts,
            response_us: 250,
        }
    }

    #[test]
    fn both_versions_parse_alike() {
        for v in [VscsiVersion::V1, VscsiVersion::V2] {
            let mut p = VscsiParser::default();
            let a = encode_record(&rec(0x2A, 6656, 40_409_911, 1_000), v);
            assert_eq!(p.record_len(&a[..16]), Ok(v.record_bytes()));
            let r = p.parse(&a).unwrap().unwrap();
            assert_eq!(
                (r.time, r.lbn, r.sectors, r.op),
                (0, 40_409_911, 13, Op::Write)
            );
            let b = encode_record(&rec(0x88, 513, 5, 1_750), v);
            assert_eq!(p.record_len(&b[..16]), Ok(v.record_bytes()));
            let r = p.parse(&b).unwrap().unwrap();
            assert_eq!((r.time, r.lbn, r.sectors, r.op), (750_000, 5, 2, Op::Read));
            let c = encode_record(&rec(0x00, 0, 0, 2_000), v);
            assert_eq!(p.parse(&c), Ok(None));
        }
    }

    #[test]
    fn opcodes() {
        for c in [0x08, 0x28, 0xA8, 0x88] {
            assert_eq!(scsi_op(c), Some(Op::Read));
        }
        for c in [0x0A, 0x2A, 0xAA, 0x8A] {
            assert_eq!(scsi_op(c), Some(Op::Write));
        }
        for c in [0x00, 0x12, 0x25, 0x35, 0x9E, 0x128] {
            assert_eq!(scsi_op(c), None);
        }
    }
}
