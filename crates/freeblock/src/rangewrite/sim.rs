//! Requests with alternatives inside a simulation: closed-loop streams issue reads and writes in
//! *logical* blocks, writes carry candidate locations, reads go to whichever copy of the data is
//! nearest, the scheduler and the device choose ([`SelectionMode`]), and the block map records
//! where every write went.
//!
//! ```text
//!   stream 0 ─┐ next_io(map, head)                         ┌──────── device ────────┐
//!   stream 1 ─┼─► Write{logical, candidates}  ─► queue ──► │ choose (request, cand.)│──► Drive
//!     …       │   Read{logical, blocks}                    │  local | global        │      │
//!   stream n ─┘   (copies looked up in the map)            └────────────────────────┘      │
//!        ▲                                                                                 │
//!        └──── completion: map.write(req, chosen) frees the unchosen candidates ◄──────────┘
//!              and the old copies; the stream issues its next I/O
//! ```
//!
//! Each stream has at most one I/O outstanding (a closed loop, as an application waiting for its
//! file system), so `n` streams keep `n` requests at the disk. A write's candidates are checked
//! against the map when it is issued (bad input surfaces then, naming the request and stream) and
//! any of them still free are reserved for it, so no other write can take them while it waits. The
//! device reports the chosen location at completion, and the map is updated then. A read's
//! copies are every location holding the whole extent ([`BlockMap::extent_copies`]): one for an
//! ordinary block, several when a replication layer added copies (flex reads).
//!
//! The event loop is small and separate from [`crate::sim`]: it has no driver queue or trace
//! replay, but it knows about candidates and the block map. Like the main engine it is
//! deterministic: events at the same instant are handled in insertion order, and the scheduler
//! decides only when no other event is due at that instant.

use std::sync::Arc;

use freeblock_disk::{Disk, Drive, HeadState, Op, Service, SimTime};
use serde::{Deserialize, Serialize};

use super::blockmap::{BlockMap, SpaceStats, WriteRequest};
use super::error::{RangeWriteError, Result};
use super::search::{check_scheduler, choose, Alternatives, CandidateSearch, Choice, SelectionMode};
use crate::des::EventQueue;
use crate::report::{HeadUsage, HeadUsageFractions, Histogram, Summary};
use crate::sched::SchedulerSpec;

/// How a range-write simulation is driven.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RangeSimConfig {
    /// Scheduler: FCFS, SSTF or SPTF. Default SPTF.
    pub scheduler: SchedulerSpec,
    /// Local or global selection among candidates. Default local.
    pub mode: SelectionMode,
    /// Exhaustive or seek-pruned search (same choices, different cost). Default seek-pruned.
    pub search: CandidateSearch,
    /// Think time between a stream's completion and its next I/O, ms. Default 0.
    pub think_ms: f64,
    /// Keep one [`IoRecord`] per I/O. Default false.
    pub keep_records: bool,
}

impl Default for RangeSimConfig {
    fn default() -> Self {
        Self {
            scheduler: SchedulerSpec::Sptf,
            mode: SelectionMode::Local,
            search: CandidateSearch::SeekPruned,
            think_ms: 0.0,
            keep_records: false,
        }
    }
}

/// One I/O a stream asks for, in logical blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum StreamIo {
    /// Write logical blocks to one of the request's candidates.
    Write(WriteRequest),
    /// Read `blocks` logical blocks from `logical`, from the nearest complete copy.
    Read {
        /// First logical block.
        logical: u64,
        /// Number of blocks.
        blocks: u64,
    },
}

impl StreamIo {
    /// The logical blocks it covers, `first..end`.
    #[must_use]
    pub fn logical_range(&self) -> std::ops::Range<u64> {
        let (first, blocks) = match self {
            StreamIo::Write(req) => (req.logical, req.blocks),
            &StreamIo::Read { logical, blocks } => (logical, blocks),
        };
        first..first.saturating_add(blocks)
    }

    /// True for writes.
    #[must_use]
    pub fn is_write(&self) -> bool {
        matches!(self, StreamIo::Write(_))
    }
}

/// What a stream may look at and change when it issues an I/O.
pub struct IssueContext<'a> {
    /// The block map (allocators reserve candidates in it; deletes trim it).
    pub map: &'a mut BlockMap,
    /// The disk model.
    pub disk: &'a Disk,
    /// Where the heads will be when the request in service (if any) ends.
    pub head: HeadState,
    /// The time of issue.
    pub now: SimTime,
}

/// A set of closed-loop streams producing I/Os with alternatives.
pub trait StreamWorkload {
    /// Number of streams (each keeps one I/O outstanding).
    fn streams(&self) -> u32;

    /// The next I/O of `stream`, or `None` when it has finished. Called at time 0 and each time
    /// the stream's previous I/O completes (after the map records it).
    ///
    /// # Errors
    /// Whatever the workload cannot do (no free space, …); the run stops with it.
    fn next_io(&mut self, stream: u32, ctx: &mut IssueContext<'_>) -> Result<Option<StreamIo>>;

    /// Application-level operations finished so far (e.g. file-system transactions), for a
    /// throughput figure. Default 0.
    fn operations(&self) -> u64 {
        0
    }
}

/// Fixed I/O lists, one per stream, issued in order. Write candidates are used as given (the
/// simulation reserves those still free when the write is issued), so any bad candidate surfaces
/// through the run.
#[derive(Debug, Clone, Default)]
pub struct ScriptedStreams {
    scripts: Vec<std::collections::VecDeque<StreamIo>>,
    done: u64,
}

impl ScriptedStreams {
    /// One list of I/Os per stream.
    #[must_use]
    pub fn new(scripts: Vec<Vec<StreamIo>>) -> Self {
        Self { scripts: scripts.into_iter().map(Into::into).collect(), done: 0 }
    }
}

impl StreamWorkload for ScriptedStreams {
    fn streams(&self) -> u32 {
        self.scripts.len() as u32
    }

    fn next_io(&mut self, stream: u32, _ctx: &mut IssueContext<'_>) -> Result<Option<StreamIo>> {
        let next = self.scripts[stream as usize].pop_front();
        self.done += u64::from(next.is_some());
        Ok(next)
    }

    fn operations(&self) -> u64 {
        self.done
    }
}

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
    /// The start the device used.
    pub chosen_lbn: u64,
    /// Its index in `candidates`.
    pub chosen_index: usize,
    /// Seek + settle + rotational latency to the first sector, ns.
    pub positioning_ns: SimTime,
    /// Rotational latency to the first sector, ns.
    pub rotational_latency_ns: SimTime,
    /// The version the map stamped on a write, or the version a read returned (of its first
    /// block).
    pub version: Option<u64>,
}

/// Statistics of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RangeSimReport {
    /// Disk name.
    pub disk: String,
    /// Scheduler.
    pub scheduler: String,
    /// Local or global selection.
    pub mode: SelectionMode,
    /// Search used.
    pub search: CandidateSearch,
    /// I/Os served.
    pub requests: u64,
    /// Writes served.
    pub writes: u64,
    /// Reads served.
    pub reads: u64,
    /// Application-level operations finished ([`StreamWorkload::operations`]).
    pub operations: u64,
    /// Time from the start to the last completion, ms.
    pub duration_ms: f64,
    /// `operations / duration`.
    pub operations_per_s: f64,
    /// Response time (issue to completion) of every I/O.
    pub response: Summary,
    /// Response time of writes.
    pub write_response: Summary,
    /// Response time of reads.
    pub read_response: Summary,
    /// Mean positioning time of writes, ms.
    pub write_positioning_ms: f64,
    /// Mean rotational latency of writes (first sector), ms.
    pub write_rotational_ms: f64,
    /// Mean candidates per write.
    pub candidates_per_write: f64,
    /// Share of writes that went somewhere other than their first candidate.
    pub moved_share: f64,
    /// Mean exact positioning computations per scheduling decision (the search's cost).
    pub positionings_per_decision: f64,
    /// Mean candidates pending at a decision: what an exhaustive global search computes.
    pub candidates_per_decision: f64,
    /// Where the head's time went.
    pub head_usage: HeadUsageFractions,
    /// The map's space accounting at the end.
    pub space: SpaceStats,
}

/// A finished run: the report, the block map as the run left it, and the records if kept.
#[derive(Debug, Clone)]
pub struct RangeSimOutcome {
    /// Statistics.
    pub report: RangeSimReport,
    /// The block map after the run (for checks, or to continue from).
    pub map: BlockMap,
    /// One record per I/O when [`RangeSimConfig::keep_records`] was set.
    pub records: Vec<IoRecord>,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    /// A stream is ready to issue its next I/O.
    Issue { stream: u32 },
    /// The disk finished the I/O in service.
    Completion,
}

/// An I/O at the disk.
struct Pending {
    id: u64,
    stream: u32,
    arrival: SimTime,
    io: StreamIo,
    alternatives: Alternatives,
    /// For a read: the version of its first block when it was issued.
    read_version: Option<u64>,
}

/// A read resolves its copies when it is issued, so a write of the same blocks must not be in
/// flight at the same time (in either order): that would make the read's copies stale.
fn check_overlap<'a>(io: &StreamIo, in_flight: impl IntoIterator<Item = &'a Pending>) -> Result<()> {
    let r = io.logical_range();
    for p in in_flight {
        let q = p.io.logical_range();
        if io.is_write() != p.io.is_write() && r.start < q.end && q.start < r.end {
            return Err(RangeWriteError::Config {
                field: "workload",
                message: format!(
                    "logical blocks {}..{} are being {} by request {} (stream {}) in flight; a read and a write of the same blocks must not overlap in time",
                    q.start,
                    q.end,
                    if p.io.is_write() { "written" } else { "read" },
                    p.id,
                    p.stream
                ),
            });
        }
    }
    Ok(())
}

fn in_request(index: u64, stream: u32) -> impl FnOnce(RangeWriteError) -> RangeWriteError {
    move |source| RangeWriteError::Request { index, stream, source: Box::new(source) }
}

/// Checks an I/O against the map and the disk and turns it into alternatives; reserves a write's
/// candidates that are still free.
fn admit(map: &mut BlockMap, disk: &Disk, io: &StreamIo) -> Result<Alternatives> {
    let bs = map.block_sectors();
    match io {
        StreamIo::Write(req) => {
            map.validate(req)?;
            let need = req.blocks * bs;
            let context = format!("write of logical block {}", req.logical);
            let alternatives =
                Alternatives::new(disk, Op::Write, req.candidates.starts(need).collect(), need, &context)?;
            for ext in req.candidates.extents(need) {
                if map.is_free(ext.start, ext.sectors) {
                    map.reserve(ext)?;
                }
            }
            Ok(alternatives)
        }
        &StreamIo::Read { logical, blocks } => {
            let copies = map.extent_copies(logical, blocks)?;
            let context = format!(
                "read of logical blocks {logical}..{} (no copy holds them contiguously)",
                logical.saturating_add(blocks)
            );
            Alternatives::new(disk, Op::Read, copies, blocks * bs, &context)
        }
    }
}

/// Runs `workload` on `disk` over `map` until every stream has finished.
///
/// # Errors
/// [`RangeWriteError::Config`] for an unsupported scheduler or a bad think time;
/// [`RangeWriteError::Request`] wrapping whatever was wrong with one I/O (an empty candidate
/// list, a candidate outside the disk or the map, a misaligned range, a read of an unmapped block,
/// a workload that ran out of space), naming the I/O and its stream.
pub fn simulate(
    disk: Arc<Disk>,
    mut map: BlockMap,
    workload: &mut dyn StreamWorkload,
    config: &RangeSimConfig,
) -> Result<RangeSimOutcome> {
    check_scheduler(config.scheduler)?;
    if !(config.think_ms >= 0.0 && config.think_ms.is_finite()) {
        return Err(RangeWriteError::Config {
            field: "think_ms",
            message: format!("{} is not a non-negative time", config.think_ms),
        });
    }
    let think = freeblock_disk::time::ms_to_ns(config.think_ms);
    let mut drive = Drive::new(Arc::clone(&disk));
    let mut events: EventQueue<Event> = EventQueue::new();
    for stream in 0..workload.streams() {
        events.push(0, Event::Issue { stream });
    }
    let mut queue: Vec<Pending> = Vec::new();
    let mut busy: Option<(Pending, Choice, Service)> = None;
    let mut next_id = 0u64;

    let (mut response, mut write_resp, mut read_resp) =
        (Histogram::default(), Histogram::default(), Histogram::default());
    let mut usage = HeadUsage::default();
    let mut idle_since: Option<SimTime> = Some(0);
    let (mut writes, mut reads, mut moved, mut write_candidates) = (0u64, 0u64, 0u64, 0u64);
    let (mut write_pos, mut write_rot) = (0u128, 0u128);
    let (mut decisions, mut evaluated, mut pending_candidates) = (0u64, 0u64, 0u64);
    let mut last_end: SimTime = 0;
    let mut records = Vec::new();

    while let Some((now, event)) = events.pop() {
        match event {
            Event::Issue { stream } => {
                let id = next_id;
                let mut ctx = IssueContext { map: &mut map, disk: &disk, head: drive.head(), now };
                if let Some(io) = workload.next_io(stream, &mut ctx).map_err(in_request(id, stream))? {
                    check_overlap(&io, queue.iter().chain(busy.as_ref().map(|b| &b.0)))
                        .map_err(in_request(id, stream))?;
                    let alternatives = admit(&mut map, &disk, &io).map_err(in_request(id, stream))?;
                    let read_version =
                        if io.is_write() { None } else { map.read(io.logical_range().start).map(|l| l.version) };
                    next_id += 1;
                    queue.push(Pending { id, stream, arrival: now, io, alternatives, read_version });
                }
            }
            Event::Completion => {
                let (p, choice, svc) = busy.take().expect("a completion has an I/O in service");
                let a = svc.access;
                usage.add(&a.breakdown);
                let resp = a.end - p.arrival;
                response.record(resp);
                last_end = a.end;
                let version = match &p.io {
                    StreamIo::Write(req) => {
                        let written = map.write(req, choice.lbn).map_err(in_request(p.id, p.stream))?;
                        writes += 1;
                        write_resp.record(resp);
                        write_pos += u128::from(choice.positioning());
                        write_rot += u128::from(choice.rotational_latency);
                        moved += u64::from(choice.candidate != 0);
                        write_candidates += p.alternatives.len() as u64;
                        Some(written.version)
                    }
                    StreamIo::Read { .. } => {
                        reads += 1;
                        read_resp.record(resp);
                        p.read_version
                    }
                };
                if config.keep_records {
                    let (logical, blocks) = match &p.io {
                        StreamIo::Write(req) => (req.logical, req.blocks),
                        &StreamIo::Read { logical, blocks } => (logical, blocks),
                    };
                    records.push(IoRecord {
                        id: p.id,
                        stream: p.stream,
                        op: p.alternatives.op(),
                        logical,
                        blocks,
                        arrival_ns: p.arrival,
                        start_ns: a.start,
                        end_ns: a.end,
                        candidates: p.alternatives.starts().to_vec(),
                        chosen_lbn: choice.lbn,
                        chosen_index: choice.candidate,
                        positioning_ns: choice.positioning(),
                        rotational_latency_ns: choice.rotational_latency,
                        version,
                    });
                }
                events.push(now + think, Event::Issue { stream: p.stream });
            }
        }
        // Decide only once every event of this instant is in (an I/O issued by the completion
        // just handled must be seen by the scheduler).
        if busy.is_none() && !queue.is_empty() && events.peek_time() != Some(now) {
            let refs: Vec<&Alternatives> = queue.iter().map(|p| &p.alternatives).collect();
            let choice = choose(&disk, drive.head(), now, &refs, config.scheduler, config.mode, config.search)?;
            decisions += 1;
            evaluated += choice.evaluated as u64;
            pending_candidates += refs.iter().map(|a| a.len() as u64).sum::<u64>();
            let p = queue.remove(choice.request);
            let svc = drive
                .serve(now, choice.lbn, p.alternatives.sectors(), p.alternatives.op())
                .map_err(|e| in_request(p.id, p.stream)(e.into()))?;
            debug_assert_eq!(
                svc.access.media_start,
                now + disk.overhead_ns(p.alternatives.op()) + choice.positioning(),
                "the choice's prediction is what the drive does"
            );
            if let Some(since) = idle_since.take() {
                usage.idle_ns += now - since;
            }
            events.push(svc.access.end, Event::Completion);
            busy = Some((p, choice, svc));
        } else if busy.is_none() && queue.is_empty() && idle_since.is_none() {
            idle_since = Some(now);
        }
    }
    let operations = workload.operations();
    let per = |sum: u128, n: u64| if n == 0 { 0.0 } else { sum as f64 / n as f64 / 1e6 };
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let duration_ms = last_end as f64 / 1e6;
    let report = RangeSimReport {
        disk: disk.spec().name.clone(),
        scheduler: config.scheduler.to_string(),
        mode: config.mode,
        search: config.search,
        requests: writes + reads,
        writes,
        reads,
        operations,
        duration_ms,
        operations_per_s: if last_end == 0 { 0.0 } else { operations as f64 / (duration_ms / 1e3) },
        response: response.summary_ms(),
        write_response: write_resp.summary_ms(),
        read_response: read_resp.summary_ms(),
        write_positioning_ms: per(write_pos, writes),
        write_rotational_ms: per(write_rot, writes),
        candidates_per_write: ratio(write_candidates, writes),
        moved_share: ratio(moved, writes),
        positionings_per_decision: ratio(evaluated, decisions),
        candidates_per_decision: ratio(pending_candidates, decisions),
        head_usage: usage.fractions(),
        space: map.stats(),
    };
    Ok(RangeSimOutcome { report, map, records })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rangewrite::{Candidates, MapConfig, PhysRange};
    use freeblock_disk::library;

    fn disk() -> Arc<Disk> {
        library::media("hp_c2247a").unwrap()
    }

    fn write(logical: u64, blocks: u64, candidates: Candidates) -> StreamIo {
        StreamIo::Write(WriteRequest { logical, blocks, candidates })
    }

    #[test]
    fn writes_land_on_a_candidate_and_reads_find_them() {
        let d = disk();
        let map = BlockMap::new(MapConfig::for_disk(&d, 8)).unwrap();
        let scripts = vec![
            vec![
                write(0, 2, Candidates::discrete(vec![8_000, 8_048, 90_000])),
                StreamIo::Read { logical: 0, blocks: 2 },
                write(0, 1, Candidates::ranges(vec![PhysRange::new(16_000, 96)], 8)),
            ],
            vec![write(10, 1, Candidates::single(400_000)), StreamIo::Read { logical: 10, blocks: 1 }],
        ];
        let mut w = ScriptedStreams::new(scripts);
        let cfg = RangeSimConfig { mode: SelectionMode::Global, keep_records: true, ..RangeSimConfig::default() };
        let out = simulate(d, map, &mut w, &cfg).unwrap();
        out.map.check().unwrap();
        assert_eq!((out.report.writes, out.report.reads, out.report.operations), (3, 2, 5));
        assert_eq!(out.map.stats().reserved, 0, "unchosen candidates were all freed");
        assert_eq!(out.map.stats().live, 3, "logical 0, 1 and 10");
        for r in &out.records {
            assert_eq!(r.candidates[r.chosen_index], r.chosen_lbn);
        }
        // The second write of logical 0 moved it into the range; block 1 stayed where the first went.
        let first = out.records.iter().find(|r| r.op == Op::Write && r.logical == 0).unwrap().chosen_lbn;
        let read = out.records.iter().find(|r| r.op == Op::Read && r.logical == 0).unwrap();
        assert_eq!(read.candidates, vec![first]);
        let l0 = out.map.read(0).unwrap().copies[0];
        assert!((16_000..16_096).contains(&l0) && l0 % 8 == 0);
        assert_eq!(out.map.read(1).unwrap().copies, vec![first + 8]);
    }

    #[test]
    fn bad_input_names_the_request_and_stream() {
        let d = disk();
        let cap = d.capacity();
        let map = || BlockMap::new(MapConfig::for_disk(&d, 8)).unwrap();
        let run = |io: StreamIo| {
            let mut w = ScriptedStreams::new(vec![vec![write(5, 1, Candidates::single(0))], vec![io]]);
            simulate(Arc::clone(&d), map(), &mut w, &RangeSimConfig::default()).unwrap_err().to_string()
        };
        assert_eq!(
            run(write(3, 1, Candidates::discrete(vec![]))),
            "request 1 of stream 1: write of logical block 3: the candidate list is empty"
        );
        let e = run(write(3, 1, Candidates::single(cap / 8 * 8)));
        assert!(e.starts_with("request 1 of stream 1: candidate sectors") && e.contains("outside"), "{e}");
        assert_eq!(
            run(write(3, 1, Candidates::ranges(vec![PhysRange::new(804, 16)], 8))),
            "request 1 of stream 1: range start 804 is not a multiple of 8 sectors"
        );
        assert_eq!(
            run(StreamIo::Read { logical: 77, blocks: 1 }),
            "request 1 of stream 1: logical block 77 is not mapped"
        );
        let mut w = ScriptedStreams::new(vec![]);
        let cfg = RangeSimConfig { scheduler: SchedulerSpec::Clook, ..RangeSimConfig::default() };
        assert!(simulate(Arc::clone(&d), map(), &mut w, &cfg).unwrap_err().to_string().contains("C-LOOK"));
    }
}
