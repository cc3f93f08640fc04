//! MSR Cambridge block traces (Narayanan et al., "Write off-loading", FAST 2008; SNIA IOTTA).
//!
//! CSV, one request per line, seven fields:
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166372003061629,hm,1,Read,3154149376,32768,1185
//! ```
//!
//! - `Timestamp` is a Windows FILETIME (100 ns ticks). Arrival times are measured from the first
//!   record in the file (so it arrives at 0), and are [`ArrivalKind::Open`]. With a disk filter the
//!   first kept request may arrive later than 0; the disks of one server stay aligned in time.
//! - `Type` is `Read` or `Write` (any case).
//! - `Offset` and `Size` are bytes. The request covers every 512-byte sector the byte range
//!   touches: `lbn = offset / 512`, `sectors = ceil((offset + size) / 512) - lbn` (for the
//!   sector-aligned offsets of the published traces this is `ceil(size / 512)`). A size of 0 is an
//!   error.
//! - `ResponseTime` (100 ns ticks) includes queueing, so it is checked but not kept as
//!   [`Request::measured`].
//! - A header line whose first field is `Timestamp` is skipped. `DiskNumber` can be filtered on
//!   with [`TraceReader::with_device`](super::TraceReader::with_device).
//!
//! [`ArrivalKind::Open`]: crate::workload::ArrivalKind::Open

use freeblock_disk::Op;

use super::int;
use crate::request::Request;

#[derive(Debug, Clone, Default)]
pub(crate) struct MsrParser {
    pub(crate) disk: Option<u32>,
    /// Timestamp of the first record, 100 ns ticks.
    first: Option<u64>,
}

impl MsrParser {
    pub(crate) fn parse(&mut self, line: &str) -> Result<Option<Request>, String> {
        let mut f = [""; 7];
        let mut n = 0;
        for field in line.split(',') {
            if n < 7 {
                f[n] = field.trim();
            }
            n += 1;
        }
        if n == 7 && f[0].eq_ignore_ascii_case("timestamp") {
            return Ok(None);
        }
        if n != 7 {
            return Err(format!(
                "expected 7 comma-separated fields \
                 (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), got {n}"
            ));
        }
        let ts: u64 = int(f[0], "timestamp (100 ns ticks)")?;
        let disk: u32 = int(f[2], "disk number")?;
        let op = if f[3].eq_ignore_ascii_case("read") {
            Op::Read
        } else if f[3].eq_ignore_ascii_case("write") {
            Op::Write
        } else {
            return Err(format!("bad type `{}`: expected Read or Write", f[3]));
        };
        let offset: u64 = int(f[4], "offset (bytes)")?;
        let size: u64 = int(f[5], "size (bytes)")?;
        let _response: u64 = int(f[6], "response time (100 ns ticks)")?;
        let first = *self.first.get_or_insert(ts);
        let Some(ticks) = ts.checked_sub(first) else {
            return Err(format!(
                "timestamp {ts} is before the first record's {first}"
            ));
        };
        if self.disk.is_some_and(|d| d != disk) {
            return Ok(None);
        }
        if size == 0 {
            return Err("size is 0 bytes: a request needs at least one sector".to_owned());
        }
        let lbn = offset / 512;
        let end = offset
            .checked_add(size)
            .map(|e| e.div_ceil(512))
            .ok_or_else(|| format!("offset {offset} + size {size} overflows"))?;
        let sectors = u32::try_from(end - lbn)
            .map_err(|_| format!("size {size} bytes is too large for one request"))?;
        let time = ticks
            .checked_mul(100)
            .ok_or_else(|| format!("timestamp {ts} is too large"))?;
        Ok(Some(Request::new(time, lbn, sectors, op)))
    }
}
