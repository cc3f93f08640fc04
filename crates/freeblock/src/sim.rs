//! The engine: one event loop serving a workload through an optional layout layer, a scheduler
//! choosing among the requests at the disk, optional freeblock background work, and a [`Drive`]
//! serving them in simulated time.
//!
//! ```text
//!  workload ──► arrival ──► layout policy ──► driver queue (FIFO) ──► disk queue (≤ queue_depth)
//!   requests     │           translate: logical → physical I/Os,         │ scheduler: pick, or
//!   or streams   │           each with candidate starts                   │ choose over candidates
//!   (closed,     │                                                        ▼
//!    open)       │    policy I/O (moves, copies) ─ foreground ─► queue    drive ◄── freeblock: free
//!                │                               ─ idle ──────► when the disk has nothing else
//!                │                               ─ free ──────► freeblock sets ──► background transfers
//!                ◄──── completion: policy.complete (map updated), the stream issues its next I/O
//! ```
//!
//! Every technique is a feature of this one loop, not a loop of its own:
//!
//! | feature | how the loop serves it |
//! |---|---|
//! | plain requests | identity layout: one physical I/O per request, at its own LBN |
//! | range writes, flex reads | a policy gives several candidate starts; the scheduler picks by the first ([`SelectionMode::Local`]) or weighs every one ([`SelectionMode::Global`]), the device serves the best |
//! | freeblock scheduling | before each foreground access, [`Freeblock::serve`] plans background transfers into its rotational latency |
//! | freeblock scheduling outside the drive | [`Simulation::with_external`]: the device is a black box ([`crate::external::BlackBox`]); at dispatch the host ([`ExternalHost`]) plans free reads with its learned model (the engine's drive) and queues commands, ≤ `max_outstanding` at the drive; the drive's completions are the completion events |
//! | layout policies | called at arrival, dispatch, completion, background delivery and timers ([`LayoutPolicy`]) |
//! | FLUSH CACHE, FUA writes | a [`Request::flush`] without a layout policy, and a write with [`Request::fua`], go to the drive as such ([`Drive::flush`], [`Drive::serve_fua`]); with a write-back `[write_cache]` writes complete in the drive's memory and are destaged between commands. Not with freeblock, external scheduling or a layout policy on a write-back drive (refused) |
//! | the drive's own queue (NCQ) | [`SimConfig::firmware`]: the scheduler's picks go to a firmware queue while it has room; the mechanism serves whichever the firmware picks (positioning time, overdue commands first: [`crate::firmware`]), completions out of order; freeblock plans into the gap before that pick |
//!
//! ## Online mode
//!
//! A block server does not know its requests in advance: they arrive from clients while the
//! engine runs. [`Simulation::online`] drives the same loop from an [`OnlineSource`]: before the
//! engine handles its next event (at model time `t`), it asks the source for any request arriving
//! no later than `t`; the source may wait (a real-time pace waits for the wall clock to reach `t`)
//! and answers with a request, "none before `t`", or the end. Completions reach the caller
//! through the record sink ([`Simulation::with_record_sink`]), in completion order, each record
//! carrying the id the engine gave the request ([`OnlineSource::accepted`]). Layout policies,
//! timers and freeblock work (idle-time and in rotational latency) run between arrivals exactly
//! as in a batch run, so the same requests at the same times get the same per-request times.
//!
//! ```text
//!   clients ──► OnlineSource::next_arrival(now, until = next event time)
//!                 │ Request(r) ─► Arrival at max(r.time, now)   Later ─► handle the event at `until`
//!                 │ End ───────► serve what is in flight, then the run ends
//!   engine  ──► record sink(record) at each completion (record.end_ns = model completion time)
//! ```
//!
//! Events (arrivals, completions, timers) are kept in an [`EventQueue`] ordered by time and then
//! by insertion, and the scheduler decides only once every event of an instant is in, so the same
//! configuration and seed always give the same run. Statistics are streamed ([`crate::report`]),
//! so memory does not grow with the number of requests unless per-request records are asked for.

// `x % n == 0` rather than `is_multiple_of` (Rust 1.87), as in the rest of the workspace.
#![allow(clippy::manual_is_multiple_of)]

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use freeblock_disk::{Disk, Drive, MediaAccess, Op, SimTime};
use serde::{Deserialize, Serialize};

use crate::des::EventQueue;
use crate::error::{number, Error, Result};
use crate::external::ExternalHost;
use crate::firmware::FirmwareQueue;
use crate::freeblock::{BackgroundApp, Delivery, Freeblock, FreeblockConfig, Promoted, TaskControl, TaskId, TaskReport};
use crate::layout::policy::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo, RequestInfo, Service};
use crate::layout::streams::{IssueContext, StreamIo, StreamWorkload};
use crate::layout::LayoutError;
use crate::report::{HeadUsage, Histogram, Record, RunReport, SelectionStats};
use crate::request::Request;
use crate::sched::alternatives::{best_candidate, choose, Alternatives, CandidateSearch, Choice, Rank, SelectionMode};
use crate::sched::{Context, Pending, Scheduler, SchedulerSpec};
use crate::workload::{ArrivalKind, Workload};

/// How a run is driven. Field defaults are the paper-000 defaults (one outstanding request, no
/// think time, FCFS).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimConfig {
    /// Foreground scheduler. Default FCFS.
    pub scheduler: SchedulerSpec,
    /// Closed workloads: number of request streams (multiprogramming level). Default 1.
    pub mpl: u32,
    /// Closed workloads: think time between a stream's completion and its next request, ms.
    /// Default 0.
    pub think_ms: f64,
    /// Closed workloads: each think time is drawn uniformly from `think_ms` × [1 − spread,
    /// 1 + spread] (deterministic: a hash of the completion count), so no result rests on a
    /// think time being a whole number of revolutions. 0 (the default): every think is `think_ms`.
    pub think_spread: f64,
    /// Requests the disk may hold for its scheduler to choose among; the rest wait in FIFO order in
    /// the driver. 0 means unlimited. Default 0.
    pub queue_depth: u32,
    /// Requests served before statistics start. Default 0.
    pub warmup: u64,
    /// Stop after this many requests (0 = when the workload ends). Default 0.
    pub max_requests: u64,
    /// Stop issuing requests once the simulated clock reaches this many seconds (0 = no limit);
    /// requests already issued are served. For runs whose length should not depend on how fast
    /// the scheduler serves (steady states, background work per simulated day). Default 0.
    pub max_time_s: f64,
    /// Keep a record per request (memory grows with the run). Default false.
    pub keep_records: bool,
    /// How requests with several candidate locations are chosen among. `None` (the default): the
    /// scheduler sees each request's first candidate and the device serves the chosen request at
    /// its best one. `Some`: every decision goes through the candidate search
    /// ([`choose`]: FCFS, SSTF or SPTF, local or global), as range-write experiments do.
    pub selection: Option<Selection>,
    /// The drive's own command queue ([`crate::firmware`], `[sim.firmware]`): up to its depth of
    /// commands at the drive, served in the firmware's positioning-time order with an age limit.
    /// `None` (the default): the scheduler's pick goes straight to the mechanism.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firmware: Option<FirmwareQueue>,
}

/// Candidate-aware scheduling (range writes, flex reads): see [`SimConfig::selection`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Selection {
    /// Local or global selection among candidates. Default local.
    pub mode: SelectionMode,
    /// Exhaustive or seek-pruned search (same choices, different cost). Default seek-pruned.
    pub search: CandidateSearch,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            scheduler: SchedulerSpec::Fcfs,
            mpl: 1,
            think_ms: 0.0,
            think_spread: 0.0,
            queue_depth: 0,
            warmup: 0,
            max_requests: 0,
            max_time_s: 0.0,
            keep_records: false,
            selection: None,
            firmware: None,
        }
    }
}

/// The longest simulated time a run may reach, ns: 100 years. A `u64` of nanoseconds holds 584
/// years; keeping every event time under a sixth of that leaves room for any sum of two of them
/// (an instant plus a think time, an idle delay or a service time) without wrapping. A disk
/// with its cache on allows less ([`time_limit_ns`]).
pub const MAX_SIMULATED_NS: SimTime = 100 * 365 * freeblock_disk::time::NS_PER_DAY;

/// The most closed-loop streams (`mpl`) a run may have: each holds a request slot, and a
/// million outstanding requests is far past any real queue.
pub const MAX_MPL: u32 = 1_000_000;

/// The latest simulated instant a run on `disk` may reach, ns: [`MAX_SIMULATED_NS`], or the
/// on-disk cache model's [`freeblock_disk::time::CACHED_TIME_LIMIT`] (100 days; it counts
/// picoseconds) when the cache is on. A run is refused before it would pass it; it never wraps.
#[must_use]
pub fn time_limit_ns(disk: &Disk) -> SimTime {
    if disk.spec().cache.enabled {
        freeblock_disk::time::CACHED_TIME_LIMIT.min(MAX_SIMULATED_NS)
    } else {
        MAX_SIMULATED_NS
    }
}

/// Simulated nanoseconds as days, for messages.
fn days(ns: SimTime) -> f64 {
    ns as f64 / freeblock_disk::time::NS_PER_DAY as f64
}

impl SimConfig {
    /// Checks every setting, so a run never starts with a value it would have to clamp or
    /// ignore (called by [`Simulation::run`]; cheap, and never per event).
    ///
    /// # Errors
    /// [`Error::Config`] naming the field (`sim.mpl`, `sim.think_ms`, …): `mpl` outside
    /// `1..=`[`MAX_MPL`], a think time or time limit that is NaN, negative or past
    /// [`MAX_SIMULATED_NS`], an SPTF-SW window that is NaN or negative, or a warm-up that
    /// leaves no request of `max_requests` to measure; a firmware queue setting out of range
    /// (`sim.firmware.queue_depth`, `sim.firmware.age_limit_ms`).
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, message: String| Err(Error::Config { origin: format!("sim.{field}"), message });
        if self.mpl == 0 || self.mpl > MAX_MPL {
            return bad("mpl", format!("must be between 1 and {MAX_MPL} streams, not {}", self.mpl));
        }
        let limit_ms = MAX_SIMULATED_NS as f64 / 1e6;
        if !(self.think_ms.is_finite() && (0.0..=limit_ms).contains(&self.think_ms)) {
            return bad("think_ms", format!("must be a time from 0 to {} ms (100 years), not {}", number(limit_ms), number(self.think_ms)));
        }
        if !(self.think_spread.is_finite() && (0.0..=1.0).contains(&self.think_spread)) {
            return bad("think_spread", format!("must lie in [0, 1], not {}", number(self.think_spread)));
        }
        let limit_s = MAX_SIMULATED_NS as f64 / 1e9;
        if !(self.max_time_s.is_finite() && (0.0..=limit_s).contains(&self.max_time_s)) {
            return bad("max_time_s", format!("must be a number of seconds from 0 (no limit) to {} (100 years), not {}", number(limit_s), number(self.max_time_s)));
        }
        if let SchedulerSpec::SptfSw { window_pct } = self.scheduler {
            if !(window_pct.is_finite() && window_pct >= 0.0) {
                return bad("scheduler.window_pct", format!("must be a percentage ≥ 0, not {}", number(window_pct)));
            }
        }
        if let Some(firmware) = &self.firmware {
            firmware.validate()?;
        }
        if self.max_requests != 0 && self.warmup >= self.max_requests {
            return bad("warmup", format!("{} warm-up requests leave none of max_requests = {} to measure", self.warmup, self.max_requests));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
enum Event {
    /// A request reaches the driver (`stream` is the closed-loop stream that issued it).
    Arrival { stream: u32 },
    /// A closed-loop stream is ready to issue its next request.
    StreamReady { stream: u32 },
    /// The disk finished its current request.
    Completion,
    /// The disk has had no request since `since`: idle-time background work may start.
    IdleCheck { since: SimTime },
    /// Idle-time background work finished.
    IdleDone,
    /// The layout policy asked to be called at this time.
    Timer,
    /// The external host's held foreground pick falls due (nothing else happens).
    HostPick,
}

/// Who a physical I/O at the disk is for: bookkeeping the scheduler does not see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// A workload request from `stream` (its id is the I/O's `pending.id`).
    Workload { stream: u32 },
    /// The layout policy's own I/O.
    Layout,
}

/// The `stream` of a request promoted from a background task (not from the workload).
const PROMOTED: u32 = u32::MAX;

/// A physical I/O waiting at the disk or in service.
#[derive(Debug)]
struct Job {
    pending: Pending,
    meta: Meta,
}

/// What the drive is asked to do with a job (the scheduler sees only its LBN, length and op).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    /// A read or a write.
    Plain,
    /// A write with Force Unit Access ([`Request::fua`]).
    Fua,
    /// FLUSH CACHE ([`Request::flush`] without a layout policy): no sectors of its own.
    Flush,
}

/// A job's bookkeeping beside what the scheduler sees; small, because the disk queue moves it.
#[derive(Debug)]
struct Meta {
    owner: Owner,
    command: Command,
    /// Service time the trace measured, if any.
    measured: Option<SimTime>,
    /// What a layout policy said about it (none without a policy).
    layout: Option<Box<LayoutPart>>,
}

/// A physical I/O as a layout policy described it.
#[derive(Debug)]
struct LayoutPart {
    /// The logical request's first sector.
    logical_lbn: u64,
    /// One of several physical I/Os of its request (kept in the engine's table of open
    /// requests); a whole request is accounted from the job alone.
    split: bool,
    /// The policy's description (its candidates and tag).
    io: PhysIo,
    /// The candidates as the search needs them (candidate-aware selection only).
    alternatives: Option<Alternatives>,
    /// What the candidate search chose, once it has.
    choice: Option<Choice>,
    /// Index of the candidate served, once dispatched.
    chosen: usize,
}

impl Job {
    fn phys(&self) -> Option<&PhysIo> {
        self.meta.layout.as_ref().map(|l| &l.io)
    }
}

/// A logical request that has physical I/Os outstanding.
#[derive(Debug, Clone, Copy)]
struct Open {
    arrival: SimTime,
    lbn: u64,
    phys_lbn: u64,
    sectors: u32,
    measured: Option<SimTime>,
    parts_left: u32,
    start: SimTime,
    breakdown: freeblock_disk::Breakdown,
    cache_hit: bool,
}

/// Where a stream's requests come from.
enum Source<'w> {
    Requests(Box<dyn Workload>),
    Streams(&'w mut dyn StreamWorkload),
    Online(Box<dyn OnlineSource + 'w>),
}

/// What an [`OnlineSource`] answers when the engine asks for the next arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnlineNext {
    /// A request arriving at `request.time` (absolute model ns; the engine takes the later of it
    /// and its own clock).
    Request(Request),
    /// No request arrives before the `until` the engine gave: it may handle its next event.
    Later,
    /// No request will ever arrive again: the engine serves what it holds and the run ends.
    End,
}

/// Requests that arrive while the engine runs ([`Simulation::online`]): a block server's clients.
pub trait OnlineSource: Send {
    /// The next request arriving no later than `until` (model ns), or [`OnlineNext::Later`] if
    /// none does. `until = None` means the engine has nothing to do before the next request: the
    /// source waits for one (or answers [`OnlineNext::End`]). `now` is the engine's clock; a
    /// request's time before it is taken as `now`.
    ///
    /// # Errors
    /// A request the source cannot express (it ends the run).
    fn next_arrival(&mut self, now: SimTime, until: Option<SimTime>) -> std::result::Result<OnlineNext, crate::workload::WorkloadError>;

    /// The engine's next event is the layout policy's timer at `at` (model ns), and no request
    /// is in the engine: nothing a client waits for happens before it. A source whose requests
    /// arrive on a wall clock may hold the engine here until that clock reaches `at` (keeping any
    /// request that comes meanwhile for [`OnlineSource::next_arrival`]), so that a periodic timer
    /// does not carry the model ahead of the clock period after period while the clients are
    /// quiet. The default does not wait.
    fn before_timer(&mut self, _at: SimTime) {}

    /// The request this source handed out last has arrived in the engine as request `id`: the
    /// record of its completion carries this id.
    fn accepted(&mut self, id: u64);

    /// The engine refused request `id` at its arrival: it lies outside the logical disk, or the
    /// layout policy refused to translate it. Nothing of it reached the disk and no record of it
    /// will come. `Ok(())` lets the run go on serving the other requests (the source answers
    /// its client with the error); returning the error stops the run, as a batch run stops.
    /// The default stops the run.
    ///
    /// # Errors
    /// The error, to stop the run.
    fn refused(&mut self, _id: u64, error: Error) -> Result<()> {
        Err(error)
    }
}

/// Hands a finished request's record to the run's sink, or keeps it for the report.
fn keep_record(record: Record, sink: &mut Option<RecordSink<'_>>, records: &mut Vec<Record>) -> Result<()> {
    match sink {
        Some(sink) => sink(&record),
        None => {
            records.push(record);
            Ok(())
        }
    }
}

/// Reports progress every `every` completed requests.
fn tick_progress(completed: u64, every: u64, progress: &mut Option<&mut dyn FnMut(u64)>) {
    if let Some(p) = progress.as_deref_mut() {
        if completed % every == 0 {
            p(completed);
        }
    }
}

/// A policy I/O served with free bandwidth: the sectors still to be delivered.
#[derive(Debug)]
struct FreeJob {
    io: PhysIo,
    left: u64,
}

/// Freeblock tasks (one sector per block) that carry a layout policy's free I/O, and what they
/// delivered since the engine last looked.
struct LayoutTasks {
    read: TaskId,
    write: TaskId,
    inbox: Arc<Mutex<Vec<(TaskId, Delivery)>>>,
    jobs: [BTreeMap<u64, FreeJob>; 2],
}

/// The freeblock application behind [`LayoutTasks`]: hands every delivery to the engine at once.
struct LayoutInbox {
    op: Op,
    sector_bytes: u64,
    inbox: Arc<Mutex<Vec<(TaskId, Delivery)>>>,
    delivered: u64,
}

impl BackgroundApp for LayoutInbox {
    fn name(&self) -> String {
        format!("layout {}", if self.op == Op::Read { "reads" } else { "writes" })
    }
    fn op(&self) -> Op {
        self.op
    }
    fn block_bytes(&self) -> u64 {
        self.sector_bytes
    }
    fn start(&mut self, ctl: &mut TaskControl<'_>) -> crate::freeblock::error::Result<()> {
        ctl.notify_after(1);
        Ok(())
    }
    fn on_blocks(&mut self, ctl: &mut TaskControl<'_>, blocks: &[Delivery]) -> crate::freeblock::error::Result<()> {
        ctl.notify_after(1);
        self.delivered += blocks.len() as u64;
        let task = ctl.task();
        self.inbox.lock().expect("the inbox is never poisoned").extend(blocks.iter().map(|d| (task, *d)));
        Ok(())
    }
    fn is_done(&self) -> bool {
        true
    }
    fn report(&self) -> TaskReport {
        TaskReport { name: self.name(), blocks_delivered: self.delivered, block_bytes: self.sector_bytes, passes: Vec::new(), progress: Vec::new() }
    }
}

/// One simulation run. Build with [`Simulation::new`] (a workload of requests) or
/// [`Simulation::with_streams`] (closed-loop streams that place their own writes), then
/// [`Simulation::run`].
pub struct Simulation<'w> {
    drive: Drive,
    source: Source<'w>,
    scheduler: Box<dyn Scheduler>,
    config: SimConfig,
    progress_every: u64,
    freeblock: Option<Freeblock>,
    layout: Option<Box<dyn LayoutPolicy>>,
    record_sink: Option<RecordSink<'w>>,
    external: Option<ExternalHost>,
}

/// Where per-request records go instead of [`RunReport::records`] (see
/// [`Simulation::with_record_sink`]): called once per served request, in completion order; an
/// error stops the run.
pub type RecordSink<'w> = Box<dyn FnMut(&Record) -> Result<()> + Send + 'w>;

/// What a run leaves behind besides its report.
pub struct Outcome {
    /// The statistics.
    pub report: RunReport,
    /// The freeblock engine, when on (decision times, the registered sets' state).
    pub freeblock: Option<Freeblock>,
    /// The layout policy, when on (its map, its own counts).
    pub layout: Option<Box<dyn LayoutPolicy>>,
    /// The external scheduler's host, when on (its prediction errors and counts).
    pub external: Option<ExternalHost>,
}

/// Wraps a layout error in the request (and stream) it came from.
fn in_request(index: u64, stream: u32) -> impl FnOnce(LayoutError) -> Error {
    move |source| Error::Layout(LayoutError::Request { index, stream, source: Box::new(source) })
}

impl Simulation<'static> {
    /// A run of `workload` on `disk` with `config`.
    #[must_use]
    pub fn new(disk: Arc<Disk>, workload: Box<dyn Workload>, config: SimConfig) -> Self {
        Self {
            drive: Drive::new(disk),
            scheduler: config.scheduler.build(),
            source: Source::Requests(workload),
            config,
            progress_every: 10_000,
            freeblock: None,
            layout: None,
            record_sink: None,
            external: None,
        }
    }
}

impl<'w> Simulation<'w> {
    /// A run serving requests as `source` hands them over while the engine runs (see the module
    /// doc's "Online mode"); it ends when the source answers [`OnlineNext::End`] and every
    /// request in flight is served. Completions reach the record sink
    /// ([`Simulation::with_record_sink`]).
    #[must_use]
    pub fn online(disk: Arc<Disk>, source: Box<dyn OnlineSource + 'w>, config: SimConfig) -> Self {
        Self {
            drive: Drive::new(disk),
            scheduler: config.scheduler.build(),
            source: Source::Online(source),
            config,
            progress_every: 10_000,
            freeblock: None,
            layout: None,
            record_sink: None,
            external: None,
        }
    }

    /// A run of closed-loop `streams` (each keeps one I/O outstanding, issued `think_ms` after
    /// its last completed) through `layout`, which must own a block map
    /// ([`LayoutPolicy::map_mut`]) for the streams to place their writes in.
    #[must_use]
    pub fn with_streams(disk: Arc<Disk>, streams: &'w mut dyn StreamWorkload, layout: Box<dyn LayoutPolicy>, config: SimConfig) -> Self {
        Self {
            drive: Drive::new(disk),
            scheduler: config.scheduler.build(),
            source: Source::Streams(streams),
            config,
            progress_every: 10_000,
            freeblock: None,
            layout: Some(layout),
            record_sink: None,
            external: None,
        }
    }

    /// Adds freeblock scheduling: background applications served in the foreground requests'
    /// rotational latency (and in idle time, if configured).
    #[must_use]
    pub fn with_freeblock(mut self, freeblock: Freeblock) -> Self {
        self.freeblock = Some(freeblock);
        self
    }

    /// Schedules from outside the drive (paper 001): the engine's disk is then the host's
    /// (learned) model, which the foreground scheduler and the freeblock sets see, and `host`
    /// serves every request through its black-box drive. Not with a layout policy,
    /// candidate-aware selection or idle-time freeblock work.
    #[must_use]
    pub fn with_external(mut self, host: ExternalHost) -> Self {
        self.external = Some(host);
        self
    }

    /// Puts a layout policy between the workload and the disk.
    #[must_use]
    pub fn with_layout(mut self, layout: Box<dyn LayoutPolicy>) -> Self {
        self.layout = Some(layout);
        self
    }

    /// Streams the per-request records to `sink` as requests complete, instead of keeping them
    /// in [`RunReport::records`] (which stays empty): memory stays flat however long the run.
    /// Records are produced whether or not [`SimConfig::keep_records`] is set.
    #[must_use]
    pub fn with_record_sink(mut self, sink: RecordSink<'w>) -> Self {
        self.record_sink = Some(sink);
        self
    }

    /// Freeblock scheduling, when on (e.g. to add background applications before the run).
    pub fn freeblock_mut(&mut self) -> Option<&mut Freeblock> {
        self.freeblock.as_mut()
    }

    /// The drive (e.g. to place the heads before a run).
    pub fn drive_mut(&mut self) -> &mut Drive {
        &mut self.drive
    }

    /// Runs to the end of the workload (or `max_requests`). `progress` is called now and then
    /// with the number of requests completed so far.
    ///
    /// # Errors
    /// [`Error::Workload`] for malformed input, [`Error::Request`] for a request the disk cannot
    /// serve, [`Error::Layout`] for one the layout policy refuses.
    pub fn run(self, progress: Option<&mut dyn FnMut(u64)>) -> Result<RunReport> {
        self.run_outcome(progress).map(|o| o.report)
    }

    /// As [`Simulation::run`], and hands back the freeblock engine (when on) for what the report
    /// does not hold, such as measured decision times or the state of the registered sets.
    ///
    /// # Errors
    /// As [`Simulation::run`].
    pub fn run_keeping_freeblock(self, progress: Option<&mut dyn FnMut(u64)>) -> Result<(RunReport, Option<Freeblock>)> {
        self.run_outcome(progress).map(|o| (o.report, o.freeblock))
    }

    /// As [`Simulation::run`], handing back everything the run leaves behind.
    ///
    /// # Errors
    /// As [`Simulation::run`].
    #[allow(clippy::too_many_lines)]
    pub fn run_outcome(mut self, mut progress: Option<&mut dyn FnMut(u64)>) -> Result<Outcome> {
        self.config.validate()?;
        let (kind, mpl) = match &self.source {
            Source::Requests(w) => {
                let kind = w.arrival();
                (kind, if kind == ArrivalKind::Closed { self.config.mpl } else { 1 })
            }
            Source::Streams(s) => (ArrivalKind::Closed, s.streams()),
            Source::Online(_) => (ArrivalKind::Open, 1),
        };
        // A run must end: by its workload, a request count, a time limit, or its background
        // applications finishing. One with none of these would run (and grow its timeline) for
        // ever, so it is refused before it starts.
        if let Source::Requests(w) = &self.source {
            let apps_end_it = self.freeblock.as_ref().is_some_and(Freeblock::ends_the_run);
            if w.is_endless() && self.config.max_requests == 0 && self.config.max_time_s == 0.0 && !apps_end_it {
                return Err(Error::Config {
                    origin: "sim.max_requests".into(),
                    message: "the workload is endless (no `count`) and nothing else ends the run: set the workload's `count`, `sim.max_requests` or `sim.max_time_s`, or add freeblock tasks that finish (passes ≥ 1) with stop_when_done".into(),
                });
            }
        }
        let think = freeblock_disk::time::ms_to_ns(self.config.think_ms);
        let think_spread = self.config.think_spread;
        // One think time, drawn from its spread by the completion count `salt` (splitmix64).
        let think_after = move |salt: u64| -> SimTime {
            if think_spread == 0.0 {
                return think;
            }
            let mut z = salt.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let unit = (z ^ (z >> 31)) as f64 / u64::MAX as f64;
            (think as f64 * (1.0 + think_spread * (2.0 * unit - 1.0))).round() as SimTime
        };
        let depth = if self.config.queue_depth == 0 { usize::MAX } else { self.config.queue_depth as usize };
        let limit = if self.config.max_requests == 0 { u64::MAX } else { self.config.max_requests };
        let max_time_s = self.config.max_time_s;
        // Past the disk's limit the run stops with an error; a user's `max_time_s` stops issuing
        // requests quietly, as documented.
        let hard_limit = time_limit_ns(self.drive.disk());
        let user_time_limit = max_time_s > 0.0;
        let time_limit = if user_time_limit { freeblock_disk::time::ms_to_ns(max_time_s * 1e3) } else { hard_limit };
        if time_limit > hard_limit {
            return Err(Error::Config {
                origin: "sim.max_time_s".into(),
                message: format!("{} s is past the longest run this disk allows ({:.0} days: its cache model counts picoseconds)", number(max_time_s), days(hard_limit)),
            });
        }
        let selection = self.config.selection;
        if selection.is_some() {
            crate::sched::check_scheduler(self.config.scheduler).map_err(Error::Layout)?;
        }
        if self.external.is_some() {
            let refuse = |origin: &str, what: &str| Err(Error::Config { origin: origin.into(), message: format!("external (host-side) scheduling does not support {what}") });
            if self.layout.is_some() {
                return refuse("layout", "a layout policy");
            }
            if selection.is_some() {
                return refuse("sim.selection", "candidate-aware selection");
            }
            if self.freeblock.as_ref().and_then(Freeblock::idle_after_ns).is_some() {
                return refuse("freeblock.idle_after_ms", "idle-time background work");
            }
            if self.config.firmware.is_some_and(|f| f.reorders()) {
                return refuse("sim.firmware", "a firmware queue in the engine's drive (the black box keeps its own commands)");
            }
        }
        // A write-back cache destages on its own between commands, moving the heads where neither
        // freeblock's plans nor the external host's model can see them.
        if self.drive.has_write_back_cache() {
            let refuse = |origin: &str, what: &str| {
                Err(Error::Config { origin: origin.into(), message: format!("{what} is not modelled on a drive whose write cache is write-back (its destages move the heads unseen): set write_cache.mode = \"write_through\"") })
            };
            if self.freeblock.is_some() {
                return refuse("freeblock", "freeblock scheduling");
            }
            if self.external.is_some() {
                return refuse("external", "external (host-side) scheduling");
            }
            if self.layout.is_some() {
                return refuse("layout", "a layout policy (its flush writes would stay in the drive's cache)");
            }
        }
        // The drive's own queue, when it reorders: the host's pick waits there for the firmware's.
        let firmware = self.config.firmware.filter(FirmwareQueue::reorders);
        let age_limit = firmware.and_then(|f| f.age_limit_ns());
        if matches!(self.source, Source::Streams(_)) && self.layout.as_mut().and_then(|l| l.map_mut()).is_none() {
            return Err(Error::Config { origin: "layout".into(), message: "streams that place their own writes need a layout policy with a block map".into() });
        }
        let disk = Arc::clone(self.drive.disk());
        let power = disk.spec().power;
        let logical_capacity = self.layout.as_ref().and_then(|l| l.logical_sectors()).unwrap_or_else(|| disk.capacity());

        let mut events: EventQueue<Event> = EventQueue::new();
        // The next request of each stream, fetched when the stream becomes ready.
        let mut staged: Vec<Option<Staged>> = (0..mpl).map(|_| None).collect();
        let issued = std::cell::Cell::new(0u64);
        let workload_done = std::cell::Cell::new(false);

        // I/Os at the disk, as the scheduler sees them, and their bookkeeping (same indices).
        let mut disk_queue: Vec<Pending> = Vec::new();
        let mut disk_meta: Vec<Meta> = Vec::new();
        let mut driver_queue: VecDeque<Job> = VecDeque::new();
        let mut idle_queue: VecDeque<Job> = VecDeque::new();
        let mut busy: Option<(Job, freeblock_disk::Service)> = None;
        // Commands at the drive waiting for the firmware's pick (with a firmware queue), and when
        // each reached the drive (same indices).
        let mut fw_queue: Vec<Pending> = Vec::new();
        let mut fw_meta: Vec<Meta> = Vec::new();
        let mut fw_received: Vec<SimTime> = Vec::new();
        let mut last_lbn = 0u64;
        let mut open: HashMap<u64, Open> = HashMap::new();
        let mut requests_in_flight = 0u64;

        let mut usage = HeadUsage::default();
        let (mut response, mut access) = (Histogram::default(), Histogram::default());
        let (mut read_resp, mut write_resp) = (Histogram::default(), Histogram::default());
        let mut records = Vec::new();
        let mut completed: u64 = 0;
        let mut cache_hits = 0u64;
        let mut stats_start: SimTime = 0;
        let mut idle_since: Option<SimTime> = Some(0);
        let mut sel_stats = SelectionStats::default();
        let mut layout_ios = 0u64;
        // Freeblock: idle-time work in progress, promoted requests in flight (by id).
        let mut idle_busy = false;
        let mut promoted: HashMap<u64, Promoted> = HashMap::new();
        let mut layout_tasks: Option<LayoutTasks> = None;
        let mut submitted: Vec<(PhysIo, Service)> = Vec::new();
        // Free I/O the policy took back (`LayoutCtx::withdraw_free`), applied at the next pump.
        let mut withdrawn: Vec<(Op, u64)> = Vec::new();
        let idle_after = self.freeblock.as_ref().and_then(Freeblock::idle_after_ns);
        // At most one idle check waits in the queue (a stale one re-arms itself for the idle
        // period under way), so a long idle delay does not pile up one event per idle period.
        let mut idle_check_pending = false;
        if let Some(fb) = &mut self.freeblock {
            fb.start(0)?;
            if let Some(after) = idle_after {
                events.push(after, Event::IdleCheck { since: 0 });
                idle_check_pending = true;
            }
        }
        let mut timer_at: Option<SimTime> = None;
        // External scheduling: the requests at the host or its drive, by id, and the time of the
        // drive's next completion as last scheduled.
        let mut external_jobs: HashMap<u64, Job> = HashMap::new();
        let mut external_event_at: Option<SimTime> = None;
        let mut pick_wake_at: Option<SimTime> = None;
        let mut last_event: SimTime = 0;
        let mut next_id = 0u64;

        macro_rules! ctx {
            ($now:expr) => {
                LayoutCtx { disk: &disk, head: self.drive.head(), now: $now, submitted: &mut submitted, withdrawn: Some(&mut withdrawn) }
            };
        }

        // Fetches the next request of a stream and schedules its arrival.
        let fetch = |stream: u32,
                         now: SimTime,
                         prev_delay_base: SimTime,
                         events: &mut EventQueue<Event>,
                         staged: &mut Vec<Option<Staged>>,
                         source: &mut Source<'w>,
                         layout: &mut Option<Box<dyn LayoutPolicy>>,
                         drive: &Drive,
                         next_id: u64|
         -> Result<()> {
            if workload_done.get() || issued.get() >= limit {
                return Ok(());
            }
            let index = issued.get();
            let next = match source {
                // Pulled at the top of the event loop instead, where the engine knows how far it
                // may run before the next arrival.
                Source::Online(_) => return Ok(()),
                Source::Requests(w) => w.next_request_for(stream)?.map(Staged::Request),
                Source::Streams(s) => {
                    let map = layout.as_mut().and_then(|l| l.map_mut()).expect("checked before the run");
                    let mut ictx = IssueContext { map, disk: drive.disk(), head: drive.head(), now };
                    s.next_io(stream, &mut ictx).map_err(in_request(next_id, stream))?.map(Staged::Stream)
                }
            };
            match next {
                // A stream that has finished issues nothing more; a workload of requests is done.
                None => {
                    if matches!(source, Source::Requests(_)) {
                        workload_done.set(true);
                    }
                }
                Some(r) => {
                    let at = match (&r, kind) {
                        (Staged::Request(r), ArrivalKind::Open) => r.time.max(now),
                        (Staged::Request(r), ArrivalKind::ClosedDelay) => prev_delay_base.saturating_add(r.time),
                        _ => now,
                    };
                    if user_time_limit && at >= time_limit {
                        workload_done.set(true);
                        return Ok(());
                    }
                    if at > hard_limit {
                        return Err(Error::Config {
                            origin: "workload".into(),
                            message: format!(
                                "request {index} would arrive at {:.1} simulated days, past the longest run this disk allows ({:.0} days): shorten the run (count, rate, think time, days) or set sim.max_time_s",
                                days(at),
                                days(hard_limit)
                            ),
                        });
                    }
                    staged[stream as usize] = Some(r);
                    issued.set(issued.get() + 1);
                    events.push(at, Event::Arrival { stream });
                }
            }
            Ok(())
        };

        for s in 0..mpl {
            fetch(s, 0, 0, &mut events, &mut staged, &mut self.source, &mut self.layout, &self.drive, next_id)?;
        }
        if let Some(t) = self.layout.as_ref().and_then(|l| l.next_timer()) {
            timer_at = Some(t);
            events.push(t, Event::Timer);
        }

        // Hands the policy what freeblock delivered for it, and queues the I/O the policy's hooks
        // submitted (kept out of line: runs without a policy never get here).
        macro_rules! pump {
            ($layout:expr, $now:expr) => {
                pump_layout(
                    $layout,
                    $now,
                    &mut Pump {
                        tasks: &mut layout_tasks,
                        freeblock: &mut self.freeblock,
                        disk: &disk,
                        drive: &self.drive,
                        submitted: &mut submitted,
                        withdrawn: &mut withdrawn,
                        next_id: &mut next_id,
                        candidate_aware: selection.is_some(),
                        idle_queue: &mut idle_queue,
                        disk_queue: &mut disk_queue,
                        disk_meta: &mut disk_meta,
                        driver_queue: &mut driver_queue,
                        depth,
                    },
                )?
            };
        }

        // Online: the engine's clock (the last event handled). A request the source hands over
        // waits in `staged[0]` for its arrival event.
        let mut clock: SimTime = 0;
        macro_rules! poll_online {
            ($until:expr) => {
                if let Source::Online(src) = &mut self.source {
                    if staged[0].is_none() && !workload_done.get() && issued.get() < limit {
                        match src.next_arrival(clock, $until)? {
                            OnlineNext::Request(r) => {
                                let at = r.time.max(clock);
                                if at > hard_limit {
                                    return Err(Error::Config { origin: "workload".into(), message: format!("an online request would arrive at {:.1} simulated days, past the longest run this disk allows ({:.0} days)", days(at), days(hard_limit)) });
                                }
                                staged[0] = Some(Staged::Request(r));
                                issued.set(issued.get() + 1);
                                events.push(at, Event::Arrival { stream: 0 });
                            }
                            OnlineNext::Later => {}
                            OnlineNext::End => workload_done.set(true),
                        }
                    }
                }
            };
        }
        'events: loop {
            if let (Source::Online(src), Some((at, Event::Timer))) = (&mut self.source, events.peek()) {
                if timer_at == Some(at) && requests_in_flight == 0 && staged[0].is_none() && !workload_done.get() {
                    src.before_timer(at);
                }
            }
            let until = events.peek_time();
            poll_online!(until);
            if events.is_empty() && matches!(self.source, Source::Online(_)) && !workload_done.get() {
                continue; // the source answered `Later` with nothing to wait for: ask again
            }
            let Some((now, ev)) = events.pop() else { break };
            clock = now;
            // An idle check that finds nothing to do does not stretch the run.
            if !matches!(ev, Event::IdleCheck { .. }) {
                last_event = now;
            }
            match ev {
                // The disk has worked since this idle period began: check the one under way, if
                // any, when it has lasted long enough.
                Event::IdleCheck { since } if idle_since != Some(since) => {
                    idle_check_pending = false;
                    if let (Some(start), Some(after)) = (idle_since, idle_after) {
                        events.push(start + after, Event::IdleCheck { since: start });
                        idle_check_pending = true;
                    }
                }
                Event::IdleCheck { .. } | Event::IdleDone => {
                    idle_check_pending &= matches!(ev, Event::IdleDone);
                    // Idle long enough, or still idle after the last piece: more background work.
                    // Once the foreground workload is over, only applications that finish keep
                    // the disk working (an endless scan would never let the run end).
                    idle_busy = false;
                    let foreground_over = (workload_done.get() || issued.get() >= limit) && requests_in_flight == 0 && busy.is_none() && driver_queue.is_empty();
                    if let (Some(fb), true) = (&mut self.freeblock, disk_queue.is_empty() && fw_queue.is_empty()) {
                        if !(foreground_over && fb.has_endless_app()) {
                            if now > hard_limit {
                                return Err(Error::Config {
                                    origin: "freeblock.idle_after_ms".into(),
                                    message: format!("idle-time work would start at {:.1} simulated days, past the longest run this disk allows ({:.0} days)", days(now), days(hard_limit)),
                                });
                            }
                            last_event = now;
                            if let Some(end) = fb.idle_work(&mut self.drive, now)? {
                                idle_busy = true;
                                events.push(end, Event::IdleDone);
                            }
                        }
                    }
                }
                Event::Timer => {
                    // Past the end of the workload, with nothing left to serve, a timer has
                    // nothing to act on (it would only rearrange an idle disk).
                    let over = workload_done.get() && requests_in_flight == 0 && disk_queue.is_empty() && fw_queue.is_empty() && idle_queue.is_empty() && busy.is_none();
                    if timer_at == Some(now) && !over {
                        if now > hard_limit {
                            return Err(Error::Config {
                                origin: "layout".into(),
                                message: format!("the layout policy's timer falls at {:.1} simulated days, past the longest run this disk allows ({:.0} days)", days(now), days(hard_limit)),
                            });
                        }
                        timer_at = None;
                        if let Some(layout) = &mut self.layout {
                            layout.timer(&mut ctx!(now)).map_err(Error::Layout)?;
                        }
                    }
                }
                Event::Arrival { stream } => {
                    let staged_io = staged[stream as usize].take().expect("an arrival has a staged request");
                    let id = next_id;
                    next_id += 1;
                    let owner = Owner::Workload { stream };
                    if let Source::Online(src) = &mut self.source {
                        src.accepted(id);
                    }
                    requests_in_flight += 1;
                    let mut from_memory = None;
                    // Without a layout policy a request goes to the disk as it came (the common,
                    // fast case: nothing is translated).
                    if let (None, Staged::Request(r)) = (&self.layout, &staged_io) {
                        let target = disk.target(r.lbn).map_err(|source| Error::Request { index: id, source })?;
                        let command = command_of(r, id)?;
                        if command != Command::Flush {
                            check_extent(r, logical_capacity, id)?;
                        } else if self.external.is_some() {
                            return Err(Error::Config { origin: "workload".into(), message: format!("request {id} is a flush: external (host-side) scheduling does not serve FLUSH CACHE") });
                        }
                        let pending = Pending { id, arrival: now, lbn: r.lbn, sectors: r.sectors, op: r.op, target };
                        let job = Job { pending, meta: Meta { owner, command, measured: r.measured, layout: None } };
                        enqueue(job, &mut disk_queue, &mut disk_meta, &mut driver_queue, depth);
                    } else {
                        let (logical, measured) = match &staged_io {
                            Staged::Request(r) => (LogicalIo { id, stream, op: r.op, lbn: r.lbn, sectors: u64::from(r.sectors), write: None }, r.measured),
                            Staged::Stream(io) => (LogicalIo::from_stream(id, stream, io, self.layout.as_mut().and_then(|l| l.map_mut()).map_or(1, |m| m.block_sectors())), None),
                        };
                        let Some(layout) = &mut self.layout else {
                            return Err(Error::Config { origin: "layout".into(), message: "streams that place their own writes need a layout policy".into() });
                        };
                        // The request is translated and made into jobs before any is queued, so
                        // that a refused request leaves nothing at the disk.
                        // A write of no sectors is a flush (`Request::flush`): the policy
                        // writes what it holds in memory, or nothing.
                        let flush = matches!(&staged_io, Staged::Request(r) if r.is_flush());
                        let translated = match &staged_io {
                            Staged::Request(r) if !flush => check_extent(r, logical_capacity, id),
                            _ => Ok(()),
                        }
                        .and_then(|()| {
                            let mut parts = Vec::new();
                            let mut lctx = LayoutCtx { disk: &disk, head: self.drive.head(), now, submitted: &mut submitted, withdrawn: Some(&mut withdrawn) };
                            if flush {
                                layout.flush(&mut lctx, &mut parts).map_err(in_request(id, stream))?;
                            } else {
                                layout.translate(&mut lctx, &logical, &mut parts).map_err(in_request(id, stream))?;
                            }
                            if parts.is_empty() && !flush && !layout.serves_from_memory() {
                                return Err(in_request(id, stream)(LayoutError::Config { field: "layout", message: "the layout policy translated a request into no I/O".into() }));
                            }
                            parts.into_iter().map(|io| make_job(&disk, io, owner, id, now, selection.is_some()).map_err(in_request(id, stream))).collect::<Result<Vec<Job>>>()
                        });
                        match (translated, &mut self.source) {
                            // Online, a refused request fails alone if the source says so: the
                            // run goes on serving the others.
                            (Err(e), Source::Online(src)) => {
                                src.refused(id, e)?;
                                requests_in_flight -= 1;
                            }
                            (Err(e), _) => return Err(e),
                            (Ok(jobs), _) => {
                                if jobs.is_empty() {
                                    from_memory = Some((logical.op, logical.lbn, logical.sectors, measured));
                                }
                                let split = jobs.len() > 1;
                                if split {
                                    let mut o = Open::new(now, &logical, measured, jobs.len() as u32);
                                    o.phys_lbn = jobs[0].pending.lbn;
                                    open.insert(id, o);
                                }
                                for mut job in jobs {
                                    job.meta.measured = measured;
                                    if let Some(l) = &mut job.meta.layout {
                                        (l.logical_lbn, l.split) = (logical.lbn, split);
                                    }
                                    enqueue(job, &mut disk_queue, &mut disk_meta, &mut driver_queue, depth);
                                }
                            }
                        }
                    }
                    // Served from the layout policy's memory: complete now, with no disk time.
                    if let Some((op, lbn, sectors, measured)) = from_memory {
                        requests_in_flight -= 1;
                        if completed == self.config.warmup && completed > 0 {
                            stats_start = now;
                            usage = HeadUsage::default();
                        }
                        if completed >= self.config.warmup {
                            response.record(0);
                            access.record(0);
                            if op.is_read() { read_resp.record(0) } else { write_resp.record(0) }
                            cache_hits += 1;
                            if self.config.keep_records || self.record_sink.is_some() {
                                let sectors = u32::try_from(sectors).unwrap_or(u32::MAX);
                                let record = Record { id, arrival_ns: now, start_ns: now, end_ns: now, lbn, phys_lbn: lbn, sectors, op, seek_ns: 0, rotational_latency_ns: 0, transfer_ns: 0, overhead_ns: 0, cache_hit: true, measured_ns: measured, energy_mj: power.map(|_| 0.0) };
                                keep_record(record, &mut self.record_sink, &mut records)?;
                            }
                        }
                        completed += 1;
                        tick_progress(completed, self.progress_every, &mut progress);
                        match kind {
                            ArrivalKind::Open => {}
                            ArrivalKind::ClosedDelay => fetch(stream, now, now, &mut events, &mut staged, &mut self.source, &mut self.layout, &self.drive, next_id)?,
                            ArrivalKind::Closed if think == 0 => fetch(stream, now, now, &mut events, &mut staged, &mut self.source, &mut self.layout, &self.drive, next_id)?,
                            ArrivalKind::Closed => events.push(now + think_after(completed), Event::StreamReady { stream }),
                        }
                    }
                    // Online: a request arriving at this same instant joins it before the
                    // scheduler decides, as the next request of a batch workload would.
                    poll_online!(Some(now));
                    if kind == ArrivalKind::Open {
                        fetch(0, now, 0, &mut events, &mut staged, &mut self.source, &mut self.layout, &self.drive, next_id)?;
                    }
                }
                Event::StreamReady { stream } => fetch(stream, now, now, &mut events, &mut staged, &mut self.source, &mut self.layout, &self.drive, next_id)?,
                // A completion the drive no longer reports then (a later command changed its
                // choice): the event for the one it does report is in the queue.
                Event::Completion if self.external.is_some() && external_event_at != Some(now) => {}
                Event::HostPick => {}
                Event::Completion => 'completion: {
                    let (job, svc) = match &mut self.external {
                        None => busy.take().expect("a completion has a request in service"),
                        Some(host) => {
                            external_event_at = None;
                            // A free read's completion finishes no request.
                            let Some((id, svc)) = host.complete(now, self.freeblock.as_mut(), &mut self.drive)? else { break 'completion };
                            (external_jobs.remove(&id).expect("a foreground completion has its job"), svc)
                        }
                    };
                    let choice = job.meta.layout.as_ref().and_then(|l| l.choice);
                    let a = &svc.access;
                    if let (Some(layout), Some(part)) = (&mut self.layout, job.meta.layout.as_deref()) {
                        let (request, stream) = match job.meta.owner {
                            Owner::Workload { stream } => (Some(RequestInfo { id: job.pending.id, stream, arrival: job.pending.arrival }), stream),
                            Owner::Layout => (None, u32::MAX),
                        };
                        let done = Completed { io: &part.io, chosen: part.chosen, lbn: job.pending.lbn, access: Some(a), time: a.end, request, choice };
                        layout.complete(&mut ctx!(now), &done).map_err(in_request(job.pending.id, stream))?;
                    }
                    match job.meta.owner {
                        Owner::Layout => {
                            layout_ios += 1;
                            if completed >= self.config.warmup {
                                usage.add(&a.breakdown, job.pending.op);
                            }
                        }
                        Owner::Workload { stream } => {
                            let request = job.pending.id;
                            // The whole request, once its last physical I/O is done.
                            let split = job.meta.layout.as_ref().is_some_and(|l| l.split);
                            let mut finished: Option<Open> = None;
                            let whole = if split {
                                let o = open.get_mut(&request).expect("a split I/O belongs to an open request");
                                o.parts_left -= 1;
                                o.start = o.start.min(a.start);
                                o.breakdown.add(&a.breakdown);
                                o.cache_hit |= svc.cache_hit;
                                if o.parts_left == 0 {
                                    finished = open.remove(&request);
                                }
                                finished.is_some()
                            } else {
                                true
                            };
                            // A whole request is accounted from its one access, a split one from
                            // the sums over its parts.
                            let (arrival, start, breakdown, cache_hit) = match &finished {
                                Some(o) => (o.arrival, o.start, &o.breakdown, o.cache_hit),
                                None => (job.pending.arrival, a.start, &a.breakdown, svc.cache_hit),
                            };
                            if completed == self.config.warmup && completed > 0 && whole {
                                stats_start = start;
                                usage = HeadUsage::default();
                            }
                            if completed >= self.config.warmup {
                                usage.add(&a.breakdown, job.pending.op);
                            }
                            if whole {
                                requests_in_flight -= 1;
                                if completed >= self.config.warmup {
                                    let op = job.pending.op;
                                    let resp = a.end - arrival;
                                    response.record(resp);
                                    access.record(a.end - start);
                                    if op.is_read() { read_resp.record(resp) } else { write_resp.record(resp) }
                                    cache_hits += u64::from(cache_hit);
                                    if self.config.keep_records || self.record_sink.is_some() {
                                        let p = &job.pending;
                                        let (lbn, phys_lbn, sectors) = match &finished {
                                            Some(o) => (o.lbn, o.phys_lbn, o.sectors),
                                            None => (job.meta.layout.as_ref().map_or(p.lbn, |l| l.logical_lbn), p.lbn, p.sectors),
                                        };
                                        let b = breakdown;
                                        let record = Record {
                                            id: request,
                                            arrival_ns: arrival,
                                            start_ns: start,
                                            end_ns: a.end,
                                            lbn,
                                            phys_lbn,
                                            sectors,
                                            op,
                                            seek_ns: b.seek,
                                            rotational_latency_ns: b.rotational_latency,
                                            transfer_ns: b.transfer,
                                            overhead_ns: b.overhead + b.bus,
                                            cache_hit,
                                            measured_ns: finished.as_ref().map_or(job.meta.measured, |o| o.measured),
                                            energy_mj: power.map(|w| crate::energy::access_mj(&w, b, op)),
                                        };
                                        keep_record(record, &mut self.record_sink, &mut records)?;
                                    }
                                }
                                completed += 1;
                                tick_progress(completed, self.progress_every, &mut progress);
                                match kind {
                                    _ if stream == PROMOTED => {
                                        if let (Some(fb), Some(p)) = (&mut self.freeblock, promoted.remove(&request)) {
                                            fb.complete_promoted(&p, a.end)?;
                                        }
                                    }
                                    ArrivalKind::Open => {}
                                    ArrivalKind::ClosedDelay => fetch(stream, now, now, &mut events, &mut staged, &mut self.source, &mut self.layout, &self.drive, next_id)?,
                                    ArrivalKind::Closed => {
                                        if think == 0 {
                                            fetch(stream, now, now, &mut events, &mut staged, &mut self.source, &mut self.layout, &self.drive, next_id)?;
                                        } else {
                                            events.push(now + think_after(completed), Event::StreamReady { stream });
                                        }
                                    }
                                }
                            }
                        }
                    }
                    // Online: a request arriving at this same instant (a client's next,
                    // sent as this one completed) joins the queue before the next pick, as
                    // the next request of a batch workload's stream would.
                    poll_online!(Some(now));
                    if self.freeblock.as_ref().is_some_and(Freeblock::should_stop) {
                        break 'events;
                    }
                }
            }
            // Policy I/O submitted by the hooks above, and what freeblock delivered for it.
            if let Some(layout) = &mut self.layout {
                pump!(layout.as_mut(), now);
                let wanted = layout.next_timer();
                // Once nothing else is left to happen, timers do not keep the run going.
                // (An online run is not over while its source may still send requests.)
                let online_open = matches!(self.source, Source::Online(_)) && !workload_done.get();
                let finished = events.is_empty() && requests_in_flight == 0 && disk_queue.is_empty() && fw_queue.is_empty() && idle_queue.is_empty() && busy.is_none() && !online_open;
                if wanted != timer_at && !finished {
                    if let Some(t) = wanted {
                        events.push(t.max(now), Event::Timer);
                    }
                    timer_at = wanted.map(|t| t.max(now));
                }
            }
            // Outside the drive, blocks are delivered at completions (and by a dispatched
            // foreground transfer), so an application may have promoted some since the last
            // decision: they join the foreground requests the host picks from.
            if let (Some(_), Some(fb)) = (&self.external, &mut self.freeblock) {
                for q in fb.take_promoted() {
                    let job = promoted_job(&disk, q, now, &mut next_id, &mut promoted)?;
                    enqueue(job, &mut disk_queue, &mut disk_meta, &mut driver_queue, depth);
                    requests_in_flight += 1;
                }
            }
            // Start the next I/O if the disk is free. Events at the same instant (e.g. the
            // arrival a completion just triggered) are handled first, so the scheduler sees them.
            // The host's pick: the scheduler's choice among the requests waiting in the host (or
            // idle-time work when none waits), with the candidate it is served at; the driver's
            // FIFO moves up and the layout policy hears which candidate was chosen.
            macro_rules! host_pick {
                () => {{
                    let mut job = if disk_queue.is_empty() {
                        idle_queue.pop_front().expect("not empty")
                    } else if let Some(sel) = selection {
                        let refs: Vec<&Alternatives> = disk_meta.iter().map(|m| m.layout.as_ref().and_then(|l| l.alternatives.as_ref()).expect("candidate-aware jobs carry alternatives")).collect();
                        let choice = choose(&disk, self.drive.head(), now, &refs, self.config.scheduler, sel.mode, sel.search).map_err(Error::Layout)?;
                        sel_stats.decisions += 1;
                        sel_stats.evaluated += choice.evaluated as u64;
                        sel_stats.pending_candidates += refs.iter().map(|a| a.len() as u64).sum::<u64>();
                        let mut job = take_job(&mut disk_queue, &mut disk_meta, choice.request);
                        let alt = job.meta.layout.as_ref().and_then(|l| l.alternatives.as_ref()).expect("present");
                        job.pending.lbn = choice.lbn;
                        job.pending.target = alt.target(choice.candidate);
                        if let Some(l) = &mut job.meta.layout {
                            l.choice = Some(choice);
                        }
                        job
                    } else {
                        // Outside the drive, positioning counts from when the commands already in
                        // hand are predicted to be done.
                        let decide_at = self.external.as_ref().map_or(now, |host| host.decision_time(now));
                        let ctx = Context { drive: &self.drive, now: decide_at, last_lbn };
                        let i = if disk_queue.len() == 1 { 0 } else { self.scheduler.pick(&disk_queue, &ctx) };
                        let mut job = take_job(&mut disk_queue, &mut disk_meta, i);
                        // A request with several candidates, chosen by its first: the device serves
                        // it at whichever it reaches first.
                        if let Some(io) = job.phys().filter(|io| io.starts.len() > 1) {
                            let alt = Alternatives::new(&disk, io.op, io.starts.clone(), io.sectors, "dispatch").map_err(Error::Layout)?;
                            let c = best_candidate(&disk, self.drive.head(), now, &[&alt], Rank::Positioning, CandidateSearch::SeekPruned).expect("one request");
                            job.pending.lbn = c.lbn;
                            job.pending.target = alt.target(c.candidate);
                        }
                        job
                    };
                    if let Some(d) = driver_queue.pop_front() {
                        disk_queue.push(d.pending);
                        disk_meta.push(d.meta);
                    }
                    if let (Some(layout), Some(part)) = (&mut self.layout, job.meta.layout.as_deref_mut()) {
                        part.chosen = part.io.starts.iter().position(|&s| s == job.pending.lbn).unwrap_or(0);
                        layout.dispatched(&part.io, part.chosen);
                    }
                    job
                }};
            }
            let settled = !idle_busy && events.peek_time() != Some(now);
            // With a firmware queue, the host sends commands while the drive has room (the one in
            // service counts); idle-time work only to a drive with nothing else.
            if let (Some(fw), true) = (firmware, settled) {
                while usize::from(busy.is_some()) + fw_queue.len() < fw.queue_depth as usize
                    && (!disk_queue.is_empty() || (!idle_queue.is_empty() && busy.is_none() && fw_queue.is_empty()))
                {
                    let job = host_pick!();
                    fw_queue.push(job.pending);
                    fw_meta.push(job.meta);
                    fw_received.push(now);
                }
            }
            let device_free = match &self.external {
                Some(host) => host.wants_request(now),
                None => busy.is_none(),
            };
            let work_waits = if firmware.is_some() { !fw_queue.is_empty() } else { !disk_queue.is_empty() || !idle_queue.is_empty() };
            if device_free && settled && work_waits {
                let job = if firmware.is_some() {
                    // FLUSH CACHE is not a queued command: the commands the drive took before it
                    // are served first, and none after it until it is done.
                    let before = fw_meta.iter().position(|m| m.command == Command::Flush).unwrap_or(fw_queue.len());
                    let i = if before == 0 { 0 } else { crate::firmware::pick(&fw_queue[..before], &fw_received[..before], age_limit, &self.drive, now) };
                    fw_received.remove(i);
                    take_job(&mut fw_queue, &mut fw_meta, i)
                } else {
                    host_pick!()
                };
                let p = job.pending;
                // A FUA write to a drive that holds no writes is a plain write (freeblock
                // plans into it as before).
                let direct = match job.meta.command {
                    Command::Flush => true,
                    Command::Fua => self.drive.has_write_back_cache(),
                    Command::Plain => false,
                };
                let svc = if direct && self.external.is_none() {
                    // FLUSH CACHE and FUA writes go to the drive as they are: freeblock plans only
                    // into plain commands' rotational latency.
                    let served = match job.meta.command {
                        Command::Flush => self.drive.flush(now),
                        _ => self.drive.serve_fua(now, p.lbn, u64::from(p.sectors)),
                    };
                    Some(served.map_err(|source| Error::Request { index: p.id, source })?)
                } else if let Some(host) = &mut self.external {
                    host.dispatch(now, &p, self.freeblock.as_mut(), &mut self.drive)?;
                    None
                } else if let (Some(fb), Owner::Workload { .. }) = (&mut self.freeblock, job.meta.owner) {
                    // Served after the background work planned into its rotational latency; its
                    // own head-usage breakdown is the one it would have had alone.
                    let (done, alone) = fb.serve(&mut self.drive, now, &p)?;
                    for q in fb.take_promoted() {
                        driver_queue.push_back(promoted_job(&disk, q, now, &mut next_id, &mut promoted)?);
                        requests_in_flight += 1;
                    }
                    let svc = freeblock_disk::Service { access: MediaAccess { breakdown: alone.breakdown, ..done }, cache_hit: false };
                    // What the background work delivered counts from this dispatch on.
                    if let Some(layout) = &mut self.layout {
                        pump!(layout.as_mut(), now);
                    }
                    Some(svc)
                } else {
                    Some(self.drive.serve(now, p.lbn, u64::from(p.sectors), p.op).map_err(|source| Error::Request { index: p.id, source })?)
                };
                if let Some(since) = idle_since.take() {
                    if completed >= self.config.warmup {
                        usage.idle_ns += now - since.max(stats_start);
                    }
                }
                last_lbn = p.lbn + u64::from(p.sectors);
                match svc {
                    Some(svc) => {
                        events.push(svc.access.end, Event::Completion);
                        busy = Some((job, svc));
                    }
                    None => {
                        external_jobs.insert(p.id, job);
                    }
                }
            } else if busy.is_none() && !self.external.as_ref().is_some_and(ExternalHost::is_busy) && !idle_busy && idle_since.is_none() && disk_queue.is_empty() && idle_queue.is_empty() && fw_queue.is_empty() {
                idle_since = Some(now);
                if let (Some(after), false) = (idle_after, idle_check_pending) {
                    events.push(now + after, Event::IdleCheck { since: now });
                    idle_check_pending = true;
                }
            }
            // The drive's next completion, as it stands after what was sent and completed.
            if let Some(host) = &mut self.external {
                let next = host.next_completion_time()?;
                if let Some(t) = next.filter(|_| next != external_event_at) {
                    events.push(t, Event::Completion);
                }
                external_event_at = next;
                // A pick the host holds until just before the drive needs it: wake then. A
                // wake-up that a completion made stale only looks at the queue again.
                if let Some(t) = host.pick_due().filter(|&t| t > now && Some(t) != pick_wake_at) {
                    events.push(t, Event::HostPick);
                    pick_wake_at = Some(t);
                }
            }
        }
        // A run that ended inside its warm-up has no statistics: say so rather than report none.
        if completed > 0 && completed <= self.config.warmup {
            return Err(Error::Config {
                origin: "sim.warmup".into(),
                message: format!("the run ended after {completed} requests, all of them warm-up (warmup = {}): no statistics; lower warmup or lengthen the run", self.config.warmup),
            });
        }
        let duration = usage.total_ns();
        let requests = completed.saturating_sub(self.config.warmup);
        // Freeblock keeps its books from time 0, warm-up included.
        let freeblock = match &mut self.freeblock {
            Some(fb) => {
                fb.flush(last_event)?;
                Some(fb.report(last_event))
            }
            None => None,
        };
        if let Some(layout) = &mut self.layout {
            let mut inbox = Inbox { tasks: &mut layout_tasks, freeblock: &mut self.freeblock, submitted: &mut submitted, withdrawn: &mut withdrawn };
            drain_deliveries(&mut inbox, layout.as_mut(), &disk, &self.drive, last_event)?;
        }
        let report = RunReport {
            freeblock,
            disk: disk.spec().name.clone(),
            scheduler: self.config.scheduler.to_string(),
            requests,
            duration_ns: duration,
            head_usage: usage,
            head_usage_fractions: usage.fractions(),
            response: response.summary_ms(),
            access: access.summary_ms(),
            read_response: read_resp.summary_ms(),
            write_response: write_resp.summary_ms(),
            cache_hits,
            throughput_per_s: if duration == 0 { 0.0 } else { requests as f64 / (duration as f64 / 1e9) },
            selection: selection.map(|_| sel_stats),
            layout: self.layout.as_ref().map(|l| crate::report::LayoutSummary { policy: l.name(), policy_ios: layout_ios, details: l.report() }),
            energy: power.map(|w| crate::energy::EnergyReport::new(&w, &usage)),
            records,
        };
        Ok(Outcome { report, freeblock: self.freeblock, layout: self.layout, external: self.external })
    }
}

/// What the drive is asked to do with request `index`: a plain read or write, a FUA write, or a
/// flush (a write of no sectors). A FUA read is refused.
fn command_of(r: &Request, index: u64) -> Result<Command> {
    match (r.is_flush(), r.fua, r.op.is_read()) {
        (_, true, true) => Err(Error::Config { origin: "workload".into(), message: format!("request {index} is a read marked FUA: only writes may be FUA") }),
        (true, true, false) => Err(Error::Config { origin: "workload".into(), message: format!("request {index} is a flush marked FUA: a flush has no data to force") }),
        (true, false, _) => Ok(Command::Flush),
        (false, true, false) => Ok(Command::Fua),
        (false, false, _) => Ok(Command::Plain),
    }
}

/// Refuses request `index` when it is empty or runs past the (logical) disk of `capacity` sectors.
fn check_extent(r: &Request, capacity: u64, index: u64) -> Result<()> {
    if r.sectors == 0 || r.lbn.saturating_add(u64::from(r.sectors)) > capacity {
        let source = freeblock_disk::AccessError::OutOfRange { lbn: r.lbn, end: r.end(), capacity };
        return Err(Error::Request { index, source });
    }
    Ok(())
}

/// A stream's next request, fetched and waiting for its arrival time.
enum Staged {
    Request(Request),
    Stream(StreamIo),
}

impl Open {
    fn new(arrival: SimTime, io: &LogicalIo<'_>, measured: Option<SimTime>, parts: u32) -> Self {
        Self {
            arrival,
            lbn: io.lbn,
            phys_lbn: io.lbn,
            sectors: u32::try_from(io.sectors).unwrap_or(u32::MAX),
            measured,
            parts_left: parts,
            start: SimTime::MAX,
            breakdown: freeblock_disk::Breakdown::default(),
            cache_hit: false,
        }
    }
}


/// Takes job `i` off the disk's queue, keeping the others in order (the last one is simply
/// popped: with one request at the disk, the common case, nothing moves).
#[inline]
fn take_job(disk_queue: &mut Vec<Pending>, disk_meta: &mut Vec<Meta>, i: usize) -> Job {
    if i + 1 == disk_queue.len() {
        let pending = disk_queue.pop().expect("i is an index");
        Job { pending, meta: disk_meta.pop().expect("parallel to the queue") }
    } else {
        Job { pending: disk_queue.remove(i), meta: disk_meta.remove(i) }
    }
}

/// A foreground job for blocks a background application promoted, remembered under its id so
/// its completion delivers them.
fn promoted_job(disk: &Disk, q: Promoted, now: SimTime, next_id: &mut u64, promoted: &mut HashMap<u64, Promoted>) -> Result<Job> {
    let id = *next_id;
    let target = disk.target(q.lbn).map_err(|source| Error::Request { index: id, source })?;
    let sectors = u32::try_from(q.sectors).unwrap_or(u32::MAX);
    let pending = Pending { id, arrival: now, lbn: q.lbn, sectors, op: q.op, target };
    promoted.insert(id, q);
    *next_id += 1;
    Ok(Job { pending, meta: Meta { owner: Owner::Workload { stream: PROMOTED }, command: Command::Plain, measured: None, layout: None } })
}

/// Puts a job at the disk, or in the driver's FIFO when the disk's queue is full.
#[inline]
fn enqueue(job: Job, disk_queue: &mut Vec<Pending>, disk_meta: &mut Vec<Meta>, driver_queue: &mut VecDeque<Job>, depth: usize) {
    if disk_queue.len() < depth {
        disk_queue.push(job.pending);
        disk_meta.push(job.meta);
    } else {
        driver_queue.push_back(job);
    }
}

/// A physical I/O as the scheduler sees it (first candidate) plus, for candidate-aware
/// selection, every candidate's target.
fn make_job(disk: &Disk, io: PhysIo, owner: Owner, id: u64, now: SimTime, candidate_aware: bool) -> std::result::Result<Job, LayoutError> {
    let context = match owner {
        Owner::Layout => "layout I/O".to_string(),
        _ => format!("{} of sector {}", if io.op.is_read() { "read" } else { "write" }, io.starts.first().copied().unwrap_or(0)),
    };
    let alternatives = Alternatives::new(disk, io.op, io.starts.clone(), io.sectors, &context)?;
    let sectors = u32::try_from(io.sectors).map_err(|_| LayoutError::Config { field: "sectors", message: format!("{context}: {} sectors is too long for one request", io.sectors) })?;
    let pending = Pending { id, arrival: now, lbn: io.starts[0], sectors, op: io.op, target: alternatives.target(0) };
    let layout = LayoutPart { logical_lbn: pending.lbn, split: false, io, alternatives: candidate_aware.then_some(alternatives), choice: None, chosen: 0 };
    Ok(Job { pending, meta: Meta { owner, command: Command::Plain, measured: None, layout: Some(Box::new(layout)) } })
}

impl LayoutTasks {
    fn new(fb: &mut Freeblock, disk: &Disk, now: SimTime) -> Result<Self> {
        let inbox = Arc::new(Mutex::new(Vec::new()));
        let sector_bytes = u64::from(disk.spec().sector_bytes);
        let mut add = |op| fb.add_app(Box::new(LayoutInbox { op, sector_bytes, inbox: Arc::clone(&inbox), delivered: 0 }));
        let read = add(Op::Read)?;
        let write = add(Op::Write)?;
        fb.start(now)?;
        Ok(Self { read, write, inbox, jobs: [BTreeMap::new(), BTreeMap::new()] })
    }

    /// Forgets the free I/O of `op` starting at `start` (the policy withdrew it): freeblock
    /// stops wanting its sectors, and what it already delivered is dropped.
    fn withdraw(&mut self, fb: &mut Freeblock, op: Op, start: u64) -> Result<()> {
        let (task, slot) = if op.is_read() { (self.read, 0) } else { (self.write, 1) };
        let Some(job) = self.jobs[slot].remove(&start) else {
            return Err(Error::Layout(LayoutError::Config { field: "layout", message: format!("withdrew a free {} at sector {start} that is not pending", if op.is_read() { "read" } else { "write" }) }));
        };
        let range = start..start + job.io.sectors;
        fb.sets_mut().abort(task, range.clone())?;
        self.inbox.lock().expect("the inbox is never poisoned").retain(|(t, d)| *t != task || !range.contains(&d.lbn));
        Ok(())
    }

    fn register(&mut self, fb: &mut Freeblock, io: PhysIo) -> Result<()> {
        let (task, slot) = if io.op.is_read() { (self.read, 0) } else { (self.write, 1) };
        let start = io.starts[0];
        let end = start.saturating_add(io.sectors);
        let jobs = &mut self.jobs[slot];
        let overlaps = jobs.range(..end).next_back().is_some_and(|(&s, j)| s + j.io.sectors > start);
        if overlaps || io.sectors == 0 {
            return Err(Error::Layout(LayoutError::Config {
                field: "layout",
                message: format!("free {} of sectors {start}..{end} overlaps one still pending (or is empty)", if io.op.is_read() { "read" } else { "write" }),
            }));
        }
        fb.sets_mut().register(task, start, io.sectors)?;
        jobs.insert(start, FreeJob { left: io.sectors, io });
        Ok(())
    }
}

/// What [`pump_layout`] works on: the engine's queues and counters.
struct Pump<'a> {
    tasks: &'a mut Option<LayoutTasks>,
    freeblock: &'a mut Option<Freeblock>,
    disk: &'a Arc<Disk>,
    drive: &'a Drive,
    submitted: &'a mut Vec<(PhysIo, Service)>,
    withdrawn: &'a mut Vec<(Op, u64)>,
    next_id: &'a mut u64,
    candidate_aware: bool,
    idle_queue: &'a mut VecDeque<Job>,
    disk_queue: &'a mut Vec<Pending>,
    disk_meta: &'a mut Vec<Meta>,
    driver_queue: &'a mut VecDeque<Job>,
    depth: usize,
}

/// Hands the policy what freeblock delivered for it, and queues the I/O its hooks submitted
/// (which may deliver more, so round again until nothing is left).
#[inline(never)]
fn pump_layout(layout: &mut dyn LayoutPolicy, now: SimTime, p: &mut Pump<'_>) -> Result<()> {
    loop {
        let mut inbox = Inbox { tasks: p.tasks, freeblock: p.freeblock, submitted: p.submitted, withdrawn: p.withdrawn };
        inbox.apply_withdrawals()?;
        drain_deliveries(&mut inbox, layout, p.disk, p.drive, now)?;
        if p.submitted.is_empty() {
            return Ok(());
        }
        for (io, service) in std::mem::take(p.submitted) {
            match service {
                Service::Foreground | Service::Idle => {
                    let id = *p.next_id;
                    *p.next_id += 1;
                    let job = make_job(p.disk, io, Owner::Layout, id, now, p.candidate_aware).map_err(Error::Layout)?;
                    if service == Service::Idle {
                        p.idle_queue.push_back(job);
                    } else {
                        enqueue(job, p.disk_queue, p.disk_meta, p.driver_queue, p.depth);
                    }
                }
                Service::Free => {
                    let disk = p.disk;
                    // Free service runs on the freeblock engine, which plans the bare media: a
                    // disk it cannot model (cache on, zero latency) is refused, not a panic.
                    let engine = match p.freeblock.take() {
                        Some(engine) => engine,
                        None => Freeblock::new(Arc::clone(disk), FreeblockConfig { stop_when_done: false, ..FreeblockConfig::default() }).map_err(|e| Error::Config {
                            origin: "layout service = \"free\"".into(),
                            message: format!("{e}; or serve the layout's I/O as \"foreground\" or \"idle\""),
                        })?,
                    };
                    let fb = p.freeblock.insert(engine);
                    let tasks = match p.tasks {
                        Some(t) => t,
                        None => p.tasks.insert(LayoutTasks::new(fb, disk, now)?),
                    };
                    tasks.register(fb, io)?;
                }
            }
        }
    }
}

/// What [`drain_deliveries`] works on: the policy's free I/O and what its hooks hand back.
struct Inbox<'a> {
    tasks: &'a mut Option<LayoutTasks>,
    freeblock: &'a mut Option<Freeblock>,
    submitted: &'a mut Vec<(PhysIo, Service)>,
    withdrawn: &'a mut Vec<(Op, u64)>,
}

impl Inbox<'_> {
    /// Applies the withdrawals the policy asked for since the last call.
    fn apply_withdrawals(&mut self) -> Result<()> {
        for (op, start) in std::mem::take(self.withdrawn) {
            // Not registered yet (submitted in the same round): it never will be. A registered
            // one goes first: a policy may withdraw it and submit a new read of the same sectors
            // in one call.
            let registered = self.tasks.as_ref().is_some_and(|t| t.jobs[usize::from(!op.is_read())].contains_key(&start));
            if !registered {
                if let Some(i) = self.submitted.iter().position(|(io, service)| *service == Service::Free && io.op == op && io.starts[0] == start) {
                    self.submitted.remove(i);
                    continue;
                }
            }
            match (self.tasks.as_mut(), self.freeblock.as_mut()) {
                (Some(tasks), Some(fb)) => tasks.withdraw(fb, op, start)?,
                _ => return Err(Error::Layout(LayoutError::Config { field: "layout", message: format!("withdrew a free I/O at sector {start}, but none was ever submitted") })),
            }
        }
        Ok(())
    }
}

/// Hands the layout policy every free I/O that freeblock has finished delivering. What the
/// policy withdraws while it is called is applied at once, so it never hears of that I/O again.
fn drain_deliveries(inbox: &mut Inbox<'_>, layout: &mut dyn LayoutPolicy, disk: &Disk, drive: &Drive, now: SimTime) -> Result<()> {
    let Some(tasks) = inbox.tasks.as_ref() else { return Ok(()) };
    let delivered = std::mem::take(&mut *tasks.inbox.lock().expect("the inbox is never poisoned"));
    for (task, d) in delivered {
        let tasks = inbox.tasks.as_mut().expect("checked above");
        let jobs = &mut tasks.jobs[usize::from(task != tasks.read)];
        let Some((&start, job)) = jobs.range_mut(..=d.lbn).next_back() else { continue };
        if d.lbn >= start + job.io.sectors {
            continue;
        }
        job.left -= 1;
        if job.left == 0 {
            let job = jobs.remove(&start).expect("present");
            let done = Completed { io: &job.io, chosen: 0, lbn: start, access: None, time: d.time, request: None, choice: None };
            let mut ctx = LayoutCtx { disk, head: drive.head(), now, submitted: inbox.submitted, withdrawn: Some(inbox.withdrawn) };
            layout.complete(&mut ctx, &done).map_err(Error::Layout)?;
            inbox.apply_withdrawals()?;
        }
    }
    Ok(())
}
