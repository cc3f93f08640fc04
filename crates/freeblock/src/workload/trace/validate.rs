//! DiskSim "validate" traces: requests measured on a real drive (DiskSim 4.0 `valid/`).
//!
//! One request per line, six whitespace-separated fields:
//!
//! ```text
//! <R|W> <Hit|Miss|Doub|Trip> <LBN> <sectors> <measured service time, µs> <delay before next, µs>
//! W Hit    4583176   4    663.00000  45422.00000
//! ```
//!
//! The drive was driven as a closed loop with one request outstanding: the next request was issued
//! when the previous one completed, plus the recorded delay. So arrivals are
//! [`ArrivalKind::ClosedDelay`]: request *i*'s [`Request::time`] is the delay recorded on line
//! *i − 1* (0 for the first request), and [`Request::measured`] is its measured service time, to
//! compare with the simulated one. The second field is the measuring tool's cache classification;
//! it is checked but not kept.
//!
//! [`ArrivalKind::ClosedDelay`]: crate::workload::ArrivalKind::ClosedDelay

use freeblock_disk::{Op, SimTime};

use super::{fields, int, sectors, time_ns};
use crate::request::Request;

#[derive(Debug, Clone, Default)]
pub(crate) struct ValidateParser {
    /// Delay recorded on the previous request's line, ns.
    prev_delay: SimTime,
}

impl ValidateParser {
    pub(crate) fn parse(&mut self, line: &str) -> Result<Option<Request>, String> {
        let ([op, class, lbn, size, service, delay], n) = fields::<6>(line);
        if n != 6 {
            return Err(format!(
                "expected 6 fields (R|W class LBN sectors service_us delay_us), got {n}"
            ));
        }
        let op = match op {
            "R" | "r" => Op::Read,
            "W" | "w" => Op::Write,
            other => return Err(format!("bad operation `{other}`: expected R or W")),
        };
        if !matches!(class, "Hit" | "Miss" | "Doub" | "Trip") {
            return Err(format!(
                "bad cache classification `{class}`: expected Hit, Miss, Doub or Trip"
            ));
        }
        let lbn: u64 = int(lbn, "LBN")?;
        let sectors = sectors(size, "request size (sectors)")?;
        let service = time_ns(service, 3, "measured service time (µs)")?;
        let delay = time_ns(delay, 3, "delay (µs)")?;
        let mut request = Request::new(self.prev_delay, lbn, sectors, op);
        request.measured = Some(service);
        self.prev_delay = delay;
        Ok(Some(request))
    }
}
