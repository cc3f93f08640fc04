//! Range-write experiments on the engine: closed-loop streams ([`StreamWorkload`]) issue reads
//! and writes in *logical* blocks, writes carry candidate locations, reads go to whichever copy of
//! the data is nearest, the scheduler and the device choose ([`SelectionMode`]), and the
//! [`RangeWrites`] layout policy records where every write went.
//!
//! ```text
//!   stream 0 ─┐ next_io(map, head)                         ┌──────── engine ─────────┐
//!   stream 1 ─┼─► Write{logical, candidates}  ─► queue ──► │ choose (request, cand.) │──► Drive
//!     …       │   Read{logical, blocks}                    │  local | global         │      │
//!   stream n ─┘   (copies looked up in the map)            └─────────────────────────┘      │
//!        ▲                                                                                  │
//!        └──── completion: RangeWrites.complete → map.write frees the unchosen candidates ◄─┘
//!              and the old copies; the stream issues its next I/O
//! ```
//!
//! [`simulate`] is a thin front on [`crate::sim::Simulation::with_streams`]: it sets
//! candidate-aware selection on, runs, and gathers the range-write figures ([`RangeSimReport`]).
//! Each stream keeps at most one I/O outstanding (a closed loop, as an application waiting for its
//! file system), so `n` streams keep `n` requests at the disk. A write's candidates are checked
//! against the map when it is issued (bad input surfaces then, naming the request and stream) and
//! any of them still free are reserved for it, so no other write can take them while it waits.

use std::sync::Arc;

use freeblock_disk::Disk;
use serde::{Deserialize, Serialize};

use crate::layout::error::{LayoutError, Result};
use crate::layout::map::{BlockMap, SpaceStats};
use crate::layout::rangewrite::{IoRecord, RangeWrites};
use crate::layout::streams::StreamWorkload;
use crate::report::{HeadUsageFractions, Summary};
use crate::sched::alternatives::{check_scheduler, CandidateSearch, SelectionMode};
use crate::sched::SchedulerSpec;
use crate::sim::{Selection, SimConfig, Simulation};

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

/// Runs `workload` on `disk` over `map` until every stream has finished.
///
/// # Errors
/// [`LayoutError::Config`] for an unsupported scheduler or a bad think time;
/// [`LayoutError::Request`] wrapping whatever was wrong with one I/O (an empty candidate
/// list, a candidate outside the disk or the map, a misaligned range, a read of an unmapped block,
/// a workload that ran out of space), naming the I/O and its stream.
pub fn simulate(disk: Arc<Disk>, map: BlockMap, workload: &mut dyn StreamWorkload, config: &RangeSimConfig) -> Result<RangeSimOutcome> {
    check_scheduler(config.scheduler)?;
    if !(config.think_ms >= 0.0 && config.think_ms.is_finite()) {
        return Err(LayoutError::Config { field: "think_ms", message: format!("{} is not a non-negative time", config.think_ms) });
    }
    let sim = SimConfig {
        scheduler: config.scheduler,
        think_ms: config.think_ms,
        selection: Some(Selection { mode: config.mode, search: config.search }),
        ..SimConfig::default()
    };
    let policy = Box::new(RangeWrites::new(map, config.keep_records));
    let outcome = Simulation::with_streams(Arc::clone(&disk), workload, policy, sim).run_outcome(None).map_err(|e| match e {
        crate::Error::Layout(e) => e,
        crate::Error::Request { source, .. } => LayoutError::Access(source),
        other => LayoutError::Config { field: "run", message: other.to_string() },
    })?;
    let policy = outcome.layout.expect("the run had a layout policy").into_any().downcast::<RangeWrites>().expect("the run's policy is RangeWrites");
    let stats = policy.stats();
    let (map, records) = policy.into_parts();
    let run = outcome.report;
    let selection = run.selection.unwrap_or_default();
    let operations = workload.operations();
    let per = |sum: u128, n: u64| if n == 0 { 0.0 } else { sum as f64 / n as f64 / 1e6 };
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let duration_ms = stats.last_end_ns as f64 / 1e6;
    let report = RangeSimReport {
        disk: disk.spec().name.clone(),
        scheduler: config.scheduler.to_string(),
        mode: config.mode,
        search: config.search,
        requests: stats.writes + stats.reads,
        writes: stats.writes,
        reads: stats.reads,
        operations,
        duration_ms,
        operations_per_s: if stats.last_end_ns == 0 { 0.0 } else { operations as f64 / (duration_ms / 1e3) },
        response: run.response,
        write_response: run.write_response,
        read_response: run.read_response,
        write_positioning_ms: per(stats.write_positioning_ns, stats.writes),
        write_rotational_ms: per(stats.write_rotational_ns, stats.writes),
        candidates_per_write: ratio(stats.write_candidates, stats.writes),
        moved_share: ratio(stats.moved, stats.writes),
        positionings_per_decision: ratio(selection.evaluated, selection.decisions),
        candidates_per_decision: ratio(selection.pending_candidates, selection.decisions),
        head_usage: run.head_usage_fractions,
        space: map.stats(),
    };
    Ok(RangeSimOutcome { report, map, records })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::streams::{ScriptedStreams, StreamIo};
    use crate::rangewrite::{Candidates, MapConfig, PhysRange, WriteRequest};
    use freeblock_disk::Op;
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
