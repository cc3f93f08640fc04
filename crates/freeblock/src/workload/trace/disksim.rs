//! DiskSim ASCII input traces.
//!
//! DiskSim 4.0's `ascii` trace format: one request per line, five whitespace-separated fields:
//!
//! ```text
//! <arrival time, ms> <device number> <block number> <request size, sectors> <flags>
//! 0.000000   0   4583176   8   1
//! ```
//!
//! The arrival time is absolute (the simulator issues the request then: [`ArrivalKind::Open`]);
//! the block number is the request's first LBN; bit 0 of the (decimal) flags is set for a read and
//! clear for a write (other bits are ignored). The device number can be filtered on with
//! [`TraceReader::with_device`](super::TraceReader::with_device); by default all devices' requests
//! are replayed on the one simulated disk.
//!
//! [`ArrivalKind::Open`]: crate::workload::ArrivalKind::Open

use freeblock_disk::Op;

use super::{fields, int, sectors, time_ns};
use crate::request::Request;

#[derive(Debug, Clone, Default)]
pub(crate) struct DisksimParser {
    pub(crate) device: Option<u32>,
}

impl DisksimParser {
    pub(crate) fn parse(&mut self, line: &str) -> Result<Option<Request>, String> {
        let ([time, device, block, size, flags], n) = fields::<5>(line);
        if n != 5 {
            return Err(format!(
                "expected 5 fields (arrival_ms device block sectors flags), got {n}"
            ));
        }
        let time = time_ns(time, 6, "arrival time (ms)")?;
        let device: u32 = int(device, "device number")?;
        let lbn: u64 = int(block, "block number")?;
        let sectors = sectors(size, "request size (sectors)")?;
        let flags: u32 = int(flags, "flags")?;
        if self.device.is_some_and(|d| d != device) {
            return Ok(None);
        }
        let op = if flags & 1 == 1 { Op::Read } else { Op::Write };
        Ok(Some(Request::new(time, lbn, sectors, op)))
    }
}
