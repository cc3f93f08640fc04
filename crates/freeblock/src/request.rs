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
}

impl Request {
    /// A read or write with no recorded timing.
    #[must_use]
    pub fn new(time: SimTime, lbn: u64, sectors: u32, op: Op) -> Self {
        Self { time, lbn, sectors, op, measured: None }
    }

    /// A flush at `time`: a write of no sectors. With a layout policy, the engine asks the
    /// policy to write what it holds in memory ([`LayoutPolicy::flush`](crate::layout::LayoutPolicy::flush)) and completes
    /// the request when those writes are on the media; without one it is refused as empty.
    #[must_use]
    pub fn flush(time: SimTime) -> Self {
        Self { time, lbn: 0, sectors: 0, op: Op::Write, measured: None }
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
