//! Range writes and flex reads as a layout policy (papers 004 and OSDI 2008; the concept is taught
//! in [`crate::rangewrite`]).
//!
//! ```text
//!   stream write {logical, candidates} ─translate─► reserve the free candidates ─► PhysIo{starts…}
//!   stream read  {logical, blocks}     ─translate─► every complete copy          ─► PhysIo{starts…}
//!   completion at the chosen start ───────────────► map.write: old copies and unchosen candidates
//!                                                   freed, a new version stamped
//! ```
//!
//! | hook | what it does |
//! |---|---|
//! | translate | validates a write against the map and the disk, reserves its candidates that are still free; a read offers every contiguous copy |
//! | complete | records where a write went; keeps the per-write figures of the report |
//!
//! A read resolves its copies when it arrives, so a write of the same blocks must not be in flight
//! at the same time (in either order): that would make the read's copies stale. The policy refuses
//! such a workload with an error naming both requests.

use std::collections::HashMap;

use freeblock_disk::{Disk, Op, SimTime};
use serde::{Deserialize, Serialize};

use super::error::{LayoutError, Result};
use super::map::{BlockMap, WriteRequest};
use super::policy::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo};
use crate::sched::alternatives::check_starts;

/// One I/O as it was served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoRecord {
    /// Issue order over the run.
    pub id: u64,
    /// The stream that issued it.
    pub stream: u32,
    /// Read or write.
    pub op: Op,
    /// First logical block.
    pub logical: u64,
    /// Logical blocks.
    pub blocks: u64,
    /// Issue time, ns.
    pub arrival_ns: SimTime,
    /// Dispatch time, ns.
    pub start_ns: SimTime,
    /// Completion time, ns.
    pub end_ns: SimTime,
    /// Every start the request offered (write candidates, or read copies), in order.
    pub candidates: Vec<u64>,
    /// The start the device chose.
    pub chosen_lbn: u64,
    /// Its index in `candidates`.
    pub chosen_index: usize,
    /// Seek + settle + rotational latency to the chosen start, ns.
    pub positioning_ns: SimTime,
    /// Rotational latency to it, ns.
    pub rotational_latency_ns: SimTime,
    /// Version of the data: the new version for a write, the version read for a read.
    pub version: Option<u64>,
}

/// The per-write figures a range-write run reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RangeWriteStats {
    /// Writes completed.
    pub writes: u64,
    /// Reads completed.
    pub reads: u64,
    /// Writes that went somewhere other than their first candidate.
    pub moved: u64,
    /// Candidates offered, summed over writes.
    pub write_candidates: u64,
    /// Positioning of writes, summed, ns.
    pub write_positioning_ns: u128,
    /// Rotational latency of writes, summed, ns.
    pub write_rotational_ns: u128,
    /// Completion time of the last I/O, ns.
    pub last_end_ns: SimTime,
}

/// An I/O in flight: what it covers and, for a read, the version it reads.
#[derive(Debug, Clone)]
struct InFlight {
    stream_request: u64,
    stream: u32,
    range: std::ops::Range<u64>,
    write: Option<WriteRequest>,
    read_version: Option<u64>,
}

/// The range-write layout policy: a [`BlockMap`] whose writes place themselves.
#[derive(Debug)]
pub struct RangeWrites {
    map: BlockMap,
    keep_records: bool,
    in_flight: HashMap<u64, InFlight>,
    stats: RangeWriteStats,
    records: Vec<IoRecord>,
}

impl RangeWrites {
    /// The policy over `map`; with `keep_records`, one [`IoRecord`] per I/O.
    #[must_use]
    pub fn new(map: BlockMap, keep_records: bool) -> Self {
        Self { map, keep_records, in_flight: HashMap::new(), stats: RangeWriteStats::default(), records: Vec::new() }
    }

    /// The block map.
    #[must_use]
    pub fn map(&self) -> &BlockMap {
        &self.map
    }

    /// The per-write figures so far.
    #[must_use]
    pub fn stats(&self) -> RangeWriteStats {
        self.stats
    }

    /// Gives back the map and the records.
    #[must_use]
    pub fn into_parts(self) -> (BlockMap, Vec<IoRecord>) {
        (self.map, self.records)
    }

    fn check_overlap(&self, range: &std::ops::Range<u64>, is_write: bool) -> Result<()> {
        // In issue order, so the error names the oldest conflicting request.
        let mut conflicting: Vec<&InFlight> = self
            .in_flight
            .values()
            .filter(|p| is_write != p.write.is_some() && range.start < p.range.end && p.range.start < range.end)
            .collect();
        conflicting.sort_by_key(|p| p.stream_request);
        if let Some(p) = conflicting.first() {
            return Err(LayoutError::Config {
                field: "workload",
                message: format!(
                    "logical blocks {}..{} are being {} by request {} (stream {}) in flight; a read and a write of the same blocks must not overlap in time",
                    p.range.start,
                    p.range.end,
                    if p.write.is_some() { "written" } else { "read" },
                    p.stream_request,
                    p.stream,
                ),
            });
        }
        Ok(())
    }
}

/// Checks a write against the map and the disk and reserves its candidates that are still free;
/// returns its candidate starts.
fn admit_write(map: &mut BlockMap, disk: &Disk, req: &WriteRequest) -> Result<Vec<u64>> {
    map.validate(req)?;
    let need = req.blocks * map.block_sectors();
    let context = format!("write of logical block {}", req.logical);
    let starts: Vec<u64> = req.candidates.starts(need).collect();
    check_starts(disk, &starts, need, &context)?;
    for ext in req.candidates.extents(need) {
        if map.is_free(ext.start, ext.sectors) {
            map.reserve(ext)?;
        }
    }
    Ok(starts)
}

impl LayoutPolicy for RangeWrites {
    fn name(&self) -> String {
        "range-writes".into()
    }

    fn translate(&mut self, ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> Result<()> {
        let bs = self.map.block_sectors();
        let (first, blocks) = match io.write {
            Some(w) => (w.logical, w.blocks),
            None => (io.lbn / bs, io.sectors / bs),
        };
        let range = first..first.saturating_add(blocks);
        self.check_overlap(&range, io.write.is_some())?;
        let (starts, read_version) = match io.write {
            Some(w) => (admit_write(&mut self.map, ctx.disk, w)?, None),
            None => {
                let copies = self.map.extent_copies(first, blocks)?;
                let context = format!("read of logical blocks {first}..{} (no copy holds them contiguously)", range.end);
                check_starts(ctx.disk, &copies, blocks * bs, &context)?;
                (copies, self.map.read(first).map(|l| l.version))
            }
        };
        out.push(PhysIo { op: io.op, starts, sectors: blocks * bs, tag: io.id });
        self.in_flight.insert(io.id, InFlight { stream_request: io.id, stream: io.stream, range, write: io.write.cloned(), read_version });
        Ok(())
    }

    fn complete(&mut self, _ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> Result<()> {
        let Some(flight) = self.in_flight.remove(&done.io.tag) else { return Ok(()) };
        let (seek, rot) = match (done.choice, done.access) {
            (Some(c), _) => (c.seek, c.rotational_latency),
            (None, Some(a)) => (a.breakdown.seek, a.breakdown.rotational_latency),
            (None, None) => (0, 0),
        };
        let version = match &flight.write {
            Some(req) => {
                let written = self.map.write(req, done.lbn)?;
                self.stats.writes += 1;
                self.stats.write_positioning_ns += u128::from(seek + rot);
                self.stats.write_rotational_ns += u128::from(rot);
                self.stats.moved += u64::from(done.chosen != 0);
                self.stats.write_candidates += done.io.starts.len() as u64;
                Some(written.version)
            }
            None => {
                self.stats.reads += 1;
                flight.read_version
            }
        };
        if let Some(a) = done.access {
            self.stats.last_end_ns = self.stats.last_end_ns.max(a.end);
        }
        if self.keep_records {
            let (start_ns, end_ns) = done.access.map_or((done.time, done.time), |a| (a.start, a.end));
            let request = done.request;
            self.records.push(IoRecord {
                id: request.map_or(done.io.tag, |r| r.id),
                stream: request.map_or(u32::MAX, |r| r.stream),
                op: done.io.op,
                logical: flight.range.start,
                blocks: flight.range.end - flight.range.start,
                arrival_ns: request.map_or(start_ns, |r| r.arrival),
                start_ns,
                end_ns,
                candidates: done.io.starts.clone(),
                chosen_lbn: done.lbn,
                chosen_index: done.chosen,
                positioning_ns: seek + rot,
                rotational_latency_ns: rot,
                version,
            });
        }
        Ok(())
    }

    fn map_mut(&mut self) -> Option<&mut BlockMap> {
        Some(&mut self.map)
    }

    fn report(&self) -> serde_json::Value {
        serde_json::to_value(self.stats).unwrap_or(serde_json::Value::Null)
    }
}
