//! Logical requests, as workloads produce them and the simulator serves them.

use freeblock_disk::{Op, SimTime};
use serde::{Deserialize, Serialize};

/// One logical request from a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Open arrivals: absolute arrival time, ns. Closed arrivals with recorded delays (DiskSim
    /// "validate" traces): the delay after the previous request completed, ns. Closed arrivals
    /// with a think-time model: ignored (0).
    pub time: SimTime,
    /// First logical block (sector).
    pub lbn: u64,
    /// Length in sectors, at least 1.
    pub sectors: u32,
    /// Read or write.
    pub op: Op,
    /// Service time measured on a real drive, when the trace records one, ns.
    pub measured: Option<SimTime>,
    /// A write with Force Unit Access: on the media before it completes, even on a drive whose
    /// write cache is write-back (`[write_cache]`). Meaningless (and refused) on a read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fua: bool,
}

impl Request {
    /// A read or write with no recorded timing.
    #[must_use]
    pub fn new(time: SimTime, lbn: u64, sectors: u32, op: Op) -> Self {
        Self { time, lbn, sectors, op, measured: None, fua: false }
    }

    /// A FUA write ([`Request::fua`]) at `time`.
    #[must_use]
    pub fn write_fua(time: SimTime, lbn: u64, sectors: u32) -> Self {
        Self { fua: true, ..Self::new(time, lbn, sectors, Op::Write) }
    }

    /// A flush at `time`: a write of no sectors. The drive serves it as FLUSH CACHE: it
    /// completes once everything its write cache holds is on the media (at once, or after
    /// `write_cache.flush_overhead_ms`, on a drive that holds no writes). With a layout policy, the engine
    /// first asks the policy to write what it holds in memory
    /// ([`LayoutPolicy::flush`](crate::layout::LayoutPolicy::flush)), as FUA writes, and
    /// completes the request when those writes and the drive's FLUSH CACHE are done.
    #[must_use]
    pub fn flush(time: SimTime) -> Self {
        Self { time, lbn: 0, sectors: 0, op: Op::Write, measured: None, fua: false }
    }

    /// Whether this is a flush ([`Request::flush`]).
    #[must_use]
    pub fn is_flush(&self) -> bool {
        self.sectors == 0 && self.op == Op::Write
    }

    /// One past the last sector.
    #[must_use]
    pub fn end(&self) -> u64 {
        self.lbn + u64::from(self.sectors)
    }
}
