//! The freeblock engine: plans and carries out background transfers around each foreground
//! request, keeps the books, and hands delivered blocks to the applications.
//!
//! For each foreground request the engine first computes what the drive would do without
//! background work (the pure [`Disk::access`]); its first sector's start is the deadline. It then
//! asks the [`Planner`] for background segments, carries them out with [`Disk::arc`], and serves
//! the foreground request from wherever the heads ended up with [`Disk::access_when_free`]. That
//! last step is computed, not assumed: a plan that overran would delay the foreground request, and
//! the engine counts such delays (`delayed_foreground`), which tests require to be zero.

use std::sync::Arc;
use std::time::Instant;

use freeblock_disk::{AccessError, Disk, Drive, MediaAccess, Op, SimTime, TrackRun};
use serde::{Deserialize, Serialize};

use super::apps::{BackgroundApp, Promoted, Scan, TaskControl, TaskReport, DEFAULT_PASSES_IN_FLIGHT};
use super::error::{FreeblockError, Result};
use super::planner::{Planner, PlannerKind, Segment, Window};
use super::sets::{BackgroundSets, Route, TaskId};
use crate::report::Histogram;
use crate::sched::Pending;

fn default_true() -> bool {
    true
}
fn default_batch() -> u64 {
    4096
}
fn default_timeline() -> f64 {
    60.0
}
fn default_block_bytes() -> u64 {
    4096
}
fn default_one() -> f64 {
    1.0
}
fn default_passes() -> u32 {
    1
}

/// A built-in background application, as written in an experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TaskSpec {
    /// A scan of the disk (or a region) in application blocks; `fraction` below 1 makes it a
    /// sampling scan whose passes end when any that fraction of the blocks has been read.
    Scan {
        /// Application block size, bytes. Default 4096.
        #[serde(default = "default_block_bytes")]
        block_bytes: u64,
        /// Passes to make; 0 = scan until the run ends. Default 1.
        #[serde(default = "default_passes")]
        passes: u32,
        /// Fraction of the blocks each pass needs. Default 1 (every block).
        #[serde(default = "default_one")]
        fraction: f64,
        /// First LBN of the region (block-aligned). Default: the whole disk.
        #[serde(default)]
        first_lbn: Option<u64>,
        /// Blocks in the region. Default: to the end of the disk.
        #[serde(default)]
        blocks: Option<u64>,
        /// Overlap passes: start another pass once the newest has read this fraction of the
        /// blocks (0 = at once), so younger passes' blocks fill the rotational latency the
        /// oldest pass's sparse tail leaves unused. Full scans of more than one pass only.
        /// Default: one pass at a time (paper 000).
        #[serde(default)]
        next_pass_at: Option<f64>,
        /// With `next_pass_at`: the most passes under way at once (at least 2). A block goes
        /// to the oldest pass lacking it, so more passes in flight keep more blocks wanted while
        /// the oldest pass's tail is read. Default 2.
        #[serde(default)]
        passes_in_flight: Option<u32>,
    },
}

/// The default decision budget, in other tracks examined per decision. Late in a scan, when the
/// wanted blocks are few and scattered one per track, an unlimited search looks at thousands of
/// tracks for one sector (milliseconds), and each track examined costs about 1.5 µs: the p99 of a
/// decision is the budget's worth of tracks. Searching far buys nothing: a far track's sectors
/// are rarely worth its seek. Measured over one complete 4 KB scan of the Atlas 10K (OLTP, MPL 20,
/// FCFS, seed 1; `freeblock bench --only freeblock --max-tracks N`; p99 on a loaded machine):
///
/// | budget | one-pass share single / two / multi track | p99 µs single / two / multi |
/// |---|---|---|
/// | 8 | 57.1 / 65.1 / 70.3% | 27 / 26 / 45 |
/// | 12 | 59.1 / 65.9 / 70.6% | 49 / 34 / 45 |
/// | 16 | 60.1 / 66.2 / 70.3% | 65 / 46 / 63 |
/// | 20 | 60.7 / 66.2 / 70.2% | 83 / 78 / 77 |
/// | 25 | 61.0 / 66.3 / 70.0% | 85 / 63 / 81 |
/// | 100 | 61.3 / 66.2 / 69.4% | 141 / 157 / 223 |
///
/// 25 keeps every planner's share within 0.3 points of 100's (the two- and multi-track ones
/// gain) and the p99 under issue 35's 100 µs; below it the single-track greedy (paper 000's)
/// loses share. The table is from before `multi_track` took runs whole and chained over the
/// search's best tracks; that planner now has its own budget, [`MULTI_TRACK_MAX_TRACKS`].
pub const DEFAULT_MAX_TRACKS: u32 = 25;

/// `multi_track`'s default budget. Its chains weigh every track it examines against several
/// others and its run-head bonus loosens the bounds that prune the search, so a track costs it
/// more than the other planners. The same complete scan, alone on a quiet machine
/// (`freeblock bench --only freeblock --max-tracks N`): at 25, one pass at 78.3% of the
/// potential with a p99 of 109.5 µs; at 12, 75.8% with 65.6 µs. 12 keeps both of issue 35's
/// targets (≥ 75%, ≤ 100 µs).
pub const MULTI_TRACK_MAX_TRACKS: u32 = 12;

impl PlannerKind {
    /// The decision budget a planner gets when the configuration names none.
    #[must_use]
    pub fn default_max_tracks(self) -> u32 {
        match self {
            Self::MultiTrack => MULTI_TRACK_MAX_TRACKS,
            Self::SingleTrack | Self::TwoTrack => DEFAULT_MAX_TRACKS,
        }
    }
}

/// The `[freeblock]` table of an experiment: turns freeblock scheduling on.
///
/// ```toml
/// [freeblock]
/// planner = "two_track"      # or "single_track" (paper 000 §4), or "multi_track"
/// max_tracks = 25            # other tracks examined per decision, 0 = no limit
/// balance = true             # weigh lagging parts of the disk more (default: not for single_track)
/// piggyback = true           # foreground transfers of wanted blocks count
/// idle_after_ms = 50         # also use idle time after 50 ms without requests (not free)
/// [[freeblock.tasks]]
/// type = "scan"
/// block_bytes = 4096
/// passes = 1
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreeblockConfig {
    /// Which plans the planner may choose. Default `two_track`.
    #[serde(default)]
    pub planner: PlannerKind,
    /// Decision budget: most other tracks examined per decision; 0 = no limit. Default: the
    /// planner's ([`PlannerKind::default_max_tracks`]: [`DEFAULT_MAX_TRACKS`], or
    /// [`MULTI_TRACK_MAX_TRACKS`] for `multi_track`).
    #[serde(default)]
    pub max_tracks: Option<u32>,
    /// Whether the planner weighs the wanted sectors of the parts of the disk left behind more,
    /// so the whole set drains evenly (see `planner::balance`). Default: on, except for
    /// `single_track`, which stays paper 000's greedy.
    #[serde(default)]
    pub balance: Option<bool>,
    /// Whether foreground transfers of wanted sectors deliver them (paper 000 §6). Default true.
    #[serde(default = "default_true")]
    pub piggyback: bool,
    /// Serve background blocks once the disk has been idle this long, ms. Default: never.
    #[serde(default)]
    pub idle_after_ms: Option<f64>,
    /// Blocks handed to an application per call, at most. Default 4096.
    #[serde(default = "default_batch")]
    pub batch_blocks: u64,
    /// End the run when every application is done. Default true.
    #[serde(default = "default_true")]
    pub stop_when_done: bool,
    /// Width of the accounting timeline's buckets, s. Default 60.
    #[serde(default = "default_timeline")]
    pub timeline_s: f64,
    /// Most sectors in one promoted foreground request. Default 256.
    #[serde(default)]
    pub max_promoted_sectors: Option<u64>,
    /// The applications.
    #[serde(default)]
    pub tasks: Vec<TaskSpec>,
    /// Seek conservatism: a margin added to every move the planner predicts (seek or head
    /// switch), ms, 0 to 10. Default 0: the firmware knows its mechanics exactly; paper 001's
    /// Fig. 9 sets it to compare with a host at the same margin. The drive still moves as fast
    /// as it does, so a margin only makes plans read less.
    #[serde(default)]
    pub conservatism_ms: f64,
    /// Where the planning happens: in the drive's firmware (exact knowledge) or on the host
    /// (paper 001: a learned model, completions only; see `crate::external::scheduler` and the
    /// experiment's `[external]` table). Default firmware.
    #[serde(default)]
    pub placement: Placement,
}

/// Where freeblock scheduling runs (the `placement` of [`FreeblockConfig`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Inside the drive: the planner knows the head position and the model exactly.
    #[default]
    Firmware,
    /// On the host, outside a black-box drive (paper 001).
    External,
}

impl FreeblockConfig {
    /// The decision budget in force: as configured, else the planner's default (0 = no limit).
    #[must_use]
    pub fn budget(&self) -> u32 {
        self.max_tracks.unwrap_or(self.planner.default_max_tracks())
    }

    /// Whether the planner balances: as configured, else for every planner but paper 000's.
    #[must_use]
    pub fn balances(&self) -> bool {
        self.balance.unwrap_or(self.planner.balances_by_default())
    }

    /// Checks every setting and task: [`Freeblock::new`] does, so a run never starts with a
    /// value it would have to clamp or ignore.
    ///
    /// # Errors
    /// [`FreeblockError::Invalid`] naming the first bad field: `idle_after_ms` not a time in
    /// `0..=` the longest simulated run, `batch_blocks` 0, `timeline_s` not finite or below
    /// [`MIN_TIMELINE_S`], `max_promoted_sectors` outside `1..=u32::MAX`, or a task's (see
    /// [`TaskSpec::validate`]).
    pub fn validate(&self) -> Result<()> {
        if let Some(ms) = self.idle_after_ms {
            let limit_ms = crate::sim::MAX_SIMULATED_NS as f64 / 1e6;
            if !(ms.is_finite() && (0.0..=limit_ms).contains(&ms)) {
                return Err(FreeblockError::invalid(
                    "idle_after_ms",
                    format!("must be a time from 0 to {} ms (the longest simulated run), not {}", crate::error::number(limit_ms), crate::error::number(ms)),
                ));
            }
        }
        if !(self.conservatism_ms.is_finite() && (0.0..=10.0).contains(&self.conservatism_ms)) {
            return Err(FreeblockError::invalid("conservatism_ms", format!("must be a time from 0 to 10 ms, not {}", crate::error::number(self.conservatism_ms))));
        }
        if self.batch_blocks == 0 {
            return Err(FreeblockError::invalid("batch_blocks", "must be at least 1 block per call"));
        }
        if !(self.timeline_s.is_finite() && self.timeline_s >= MIN_TIMELINE_S) {
            return Err(FreeblockError::invalid("timeline_s", format!("must be a bucket width of at least {} s, not {}", crate::error::number(MIN_TIMELINE_S), crate::error::number(self.timeline_s))));
        }
        if let Some(n) = self.max_promoted_sectors {
            if n == 0 || n > u64::from(u32::MAX) {
                return Err(FreeblockError::invalid("max_promoted_sectors", format!("must be between 1 and {} sectors (one request), not {n}", u32::MAX)));
            }
        }
        for (i, task) in self.tasks.iter().enumerate() {
            task.validate(&format!("tasks[{i}]"))?;
        }
        Ok(())
    }
}

impl Default for FreeblockConfig {
    fn default() -> Self {
        Self {
            planner: PlannerKind::default(),
            max_tracks: None,
            balance: None,
            piggyback: true,
            idle_after_ms: None,
            batch_blocks: default_batch(),
            stop_when_done: true,
            timeline_s: default_timeline(),
            max_promoted_sectors: None,
            tasks: Vec::new(),
            conservatism_ms: 0.0,
            placement: Placement::Firmware,
        }
    }
}

/// The most passes a scan may have under way at once (`passes_in_flight`): each is a pass
/// over the region in memory and in the planner's weights, and more than a few buys nothing.
pub const MAX_PASSES_IN_FLIGHT: u32 = 1024;

/// The most rows the accounting timeline may grow to (`timeline_s` buckets over the run, about
/// 100 bytes each): a run that would need more stops with an error asking for wider buckets.
pub const MAX_TIMELINE_ROWS: u64 = 1_000_000;

/// The narrowest timeline bucket, s.
pub const MIN_TIMELINE_S: f64 = 1e-6;

impl TaskSpec {
    /// Checks the fields that need no disk; `at` names the task in errors (`tasks[2]`).
    ///
    /// # Errors
    /// [`FreeblockError::Invalid`] naming the field: a fraction outside (0, 1], an empty region,
    /// `next_pass_at` outside [0, 1], `passes_in_flight` outside 2..=[`MAX_PASSES_IN_FLIGHT`].
    pub fn validate(&self, at: &str) -> Result<()> {
        match self {
            TaskSpec::Scan { fraction, blocks, next_pass_at, passes_in_flight, .. } => {
                if !(*fraction > 0.0 && *fraction <= 1.0) {
                    return Err(FreeblockError::invalid(format!("{at}.fraction"), format!("a scan's fraction must be in (0, 1], not {}", crate::error::number(*fraction))));
                }
                if *blocks == Some(0) {
                    return Err(FreeblockError::invalid(format!("{at}.blocks"), "a scan of no blocks never ends: give at least 1 (or omit it to scan to the end of the disk)"));
                }
                if let Some(at_fraction) = next_pass_at {
                    if !(0.0..=1.0).contains(at_fraction) {
                        return Err(FreeblockError::invalid(format!("{at}.next_pass_at"), format!("must be between 0 and 1, not {}", crate::error::number(*at_fraction))));
                    }
                }
                if let Some(n) = passes_in_flight {
                    if !(2..=MAX_PASSES_IN_FLIGHT).contains(n) {
                        return Err(FreeblockError::invalid(
                            format!("{at}.passes_in_flight"),
                            format!("must be at least 2 and at most {MAX_PASSES_IN_FLIGHT} passes under way at once, not {n}"),
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// Builds the application.
    ///
    /// # Errors
    /// As [`TaskSpec::validate`], and [`FreeblockError::Application`] for a `next_pass_at` the
    /// scan cannot use.
    pub fn build(&self, batch: u64) -> Result<Box<dyn BackgroundApp>> {
        self.validate("task")?;
        match self {
            TaskSpec::Scan { block_bytes, passes, fraction, first_lbn, blocks, next_pass_at, passes_in_flight } => {
                let scan = match (first_lbn, blocks) {
                    (None, None) => Scan::new(*block_bytes, *fraction, *passes, None, batch),
                    (first, Some(blocks)) => Scan::new(*block_bytes, *fraction, *passes, Some((first.unwrap_or(0), *blocks)), batch),
                    (Some(first), None) => Scan::new(*block_bytes, *fraction, *passes, None, batch).to_end_of_disk_from(*first),
                };
                Ok(Box::new(match (next_pass_at, passes_in_flight) {
                    (Some(at), n) => scan.overlapping(*at, n.unwrap_or(DEFAULT_PASSES_IN_FLIGHT))?,
                    (None, Some(_)) => return Err(FreeblockError::Application("passes_in_flight needs next_pass_at (when the next pass starts)".into())),
                    (None, None) => scan,
                }))
            }
        }
    }
}

/// Time and bytes of one stretch of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Accounts {
    /// Foreground rotational latency (first sector of each request): the potential, ns.
    pub potential_ns: u64,
    /// The potential as bytes at each request's media rate.
    pub potential_bytes: f64,
    /// The whole opportunity: the potential plus the command overhead, during which the heads
    /// are free too, ns. The split below divides this.
    pub window_ns: u64,
    /// Time spent transferring wanted sectors in the background, ns.
    pub free_transfer_ns: u64,
    /// Extra arm and head movement the background plans cost, ns.
    pub extra_seek_ns: u64,
    /// Bytes delivered by background transfers in rotational latency (free).
    pub free_bytes: u64,
    /// Bytes delivered by foreground transfers of wanted sectors (free).
    pub piggyback_bytes: u64,
    /// Bytes delivered in idle time (not free).
    pub idle_bytes: u64,
    /// Idle time spent on background work, ns.
    pub idle_busy_ns: u64,
    /// Foreground requests seen.
    pub requests: u64,
}

impl Accounts {
    fn add(&mut self, o: &Accounts) {
        self.potential_ns += o.potential_ns;
        self.potential_bytes += o.potential_bytes;
        self.window_ns += o.window_ns;
        self.free_transfer_ns += o.free_transfer_ns;
        self.extra_seek_ns += o.extra_seek_ns;
        self.free_bytes += o.free_bytes;
        self.piggyback_bytes += o.piggyback_bytes;
        self.idle_bytes += o.idle_bytes;
        self.idle_busy_ns += o.idle_busy_ns;
        self.requests += o.requests;
    }

    /// Opportunity neither transferring nor seeking, ns.
    #[must_use]
    pub fn unused_ns(&self) -> u64 {
        self.window_ns.saturating_sub(self.free_transfer_ns + self.extra_seek_ns)
    }
}

/// One bucket of the accounting timeline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimelineRow {
    /// Start of the bucket, s.
    pub start_s: f64,
    /// Its accounts.
    #[serde(flatten)]
    pub accounts: Accounts,
}

/// What freeblock scheduling achieved in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FreeblockReport {
    /// Planner used.
    pub planner: String,
    /// Decision budget (0 = none).
    pub max_tracks: u32,
    /// Whether the planner balanced the wanted set across the disk.
    pub balance: bool,
    /// Totals over the run.
    pub totals: Accounts,
    /// Simulated seconds covered.
    pub duration_s: f64,
    /// Free bandwidth delivered (background in rotational latency + piggyback), MB/s.
    pub free_mb_s: f64,
    /// Of which background transfers in rotational latency, MB/s.
    pub free_background_mb_s: f64,
    /// Of which foreground transfers, MB/s.
    pub piggyback_mb_s: f64,
    /// Potential free bandwidth (rotational latency × media rate), MB/s.
    pub potential_mb_s: f64,
    /// `free_mb_s / potential_mb_s`.
    pub efficiency: f64,
    /// Fractions of the opportunity (rotational latency plus command overhead): free transfer,
    /// extra seek, unused latency (paper 000 Fig. 9c splits the rotational latency alone).
    pub free_transfer_fraction: f64,
    /// See `free_transfer_fraction`.
    pub extra_seek_fraction: f64,
    /// See `free_transfer_fraction`.
    pub unused_fraction: f64,
    /// Idle-time bandwidth (not free), MB/s.
    pub idle_mb_s: f64,
    /// Foreground requests whose timing the background work changed (must be 0).
    pub delayed_foreground: u64,
    /// Planner decisions made.
    pub decisions: u64,
    /// Other tracks examined, summed over decisions.
    pub tracks_examined: u64,
    /// Accounts per timeline bucket.
    pub timeline: Vec<TimelineRow>,
    /// Each application's results.
    pub tasks: Vec<TaskReport>,
}

/// One application and its bookkeeping.
struct AppSlot {
    task: TaskId,
    app: Box<dyn BackgroundApp>,
    notify_after: u64,
}

/// Freeblock scheduling for one drive.
pub struct Freeblock {
    disk: Arc<Disk>,
    sets: BackgroundSets,
    planner: Planner,
    config: FreeblockConfig,
    apps: Vec<AppSlot>,
    totals: Accounts,
    timeline: Vec<TimelineRow>,
    timeline_ns: u64,
    promoted: Vec<Promoted>,
    /// Most sectors in one promoted foreground request.
    max_promoted: u64,
    runs: Vec<TrackRun>,
    pieces: Vec<(std::ops::Range<u64>, u32)>,
    delayed: u64,
    decisions: u64,
    examined: u64,
    decision_times: Option<Histogram>,
    started: bool,
}

impl Freeblock {
    /// Freeblock scheduling on `disk` with `config`'s settings and applications.
    ///
    /// # Errors
    /// [`FreeblockError::Unsupported`] for a disk with its cache on or zero-latency access (the
    /// engine plans the bare media), and any application registration error.
    pub fn new(disk: Arc<Disk>, config: FreeblockConfig) -> Result<Self> {
        if disk.spec().cache.enabled {
            return Err(FreeblockError::Unsupported(
                "freeblock scheduling models the media directly: turn the disk's cache off ([disk] cache = false)".into(),
            ));
        }
        if disk.zero_latency() {
            return Err(FreeblockError::Unsupported("freeblock scheduling needs zero_latency = false".into()));
        }
        config.validate()?;
        let max_tracks = Some(config.budget()).filter(|&n| n > 0);
        // The planner times its moves on the sets' disk: with a margin, a copy whose every move
        // settles that much longer (the layout and rotation are the same; `execute` and the
        // foreground are timed on `disk`).
        let planning = if config.conservatism_ms > 0.0 {
            let mut spec = disk.spec().clone();
            spec.read_settle_ms += config.conservatism_ms;
            spec.write_settle_ms += config.conservatism_ms;
            Arc::new(Disk::new(spec).map_err(|e| FreeblockError::invalid("conservatism_ms", e.to_string()))?)
        } else {
            disk.clone()
        };
        let mut fb = Self {
            sets: BackgroundSets::new(planning),
            planner: Planner::new(&disk, config.planner, max_tracks, config.balances()),
            // At least MIN_TIMELINE_S (validated): a whole number of ns, never 0.
            timeline_ns: ((config.timeline_s * 1e9).round() as u64).max(1),
            disk,
            apps: Vec::new(),
            totals: Accounts::default(),
            timeline: Vec::new(),
            promoted: Vec::new(),
            max_promoted: config.max_promoted_sectors.unwrap_or(256),
            runs: Vec::new(),
            pieces: Vec::new(),
            delayed: 0,
            decisions: 0,
            examined: 0,
            decision_times: None,
            started: false,
            config: FreeblockConfig { tasks: Vec::new(), ..config.clone() },
        };
        for t in &config.tasks {
            fb.add_app(t.build(config.batch_blocks)?)?;
        }
        Ok(fb)
    }

    /// Adds an application; it starts with the run (or now, if the run has started).
    ///
    /// # Errors
    /// [`FreeblockError::BlockSize`] for a bad block size; registration errors.
    pub fn add_app(&mut self, app: Box<dyn BackgroundApp>) -> Result<TaskId> {
        let task = self.sets.add_task(app.op(), app.block_bytes())?;
        self.apps.push(AppSlot { task, app, notify_after: self.config.batch_blocks });
        if self.started {
            self.start_app(self.apps.len() - 1, 0)?;
        }
        Ok(task)
    }

    /// The registered sets (for direct use of the API).
    pub fn sets_mut(&mut self) -> &mut BackgroundSets {
        &mut self.sets
    }

    /// The registered sets.
    #[must_use]
    pub fn sets(&self) -> &BackgroundSets {
        &self.sets
    }

    /// Measure the wall-clock time of each planner decision (for benchmarks; not deterministic).
    pub fn measure_decisions(&mut self) {
        self.decision_times = Some(Histogram::default());
    }

    /// The decision-time histogram, when measured.
    #[must_use]
    pub fn decision_times(&self) -> Option<&Histogram> {
        self.decision_times.as_ref()
    }

    fn control<'a>(sets: &'a mut BackgroundSets, promoted: &'a mut Vec<Promoted>, slot_notify: &'a mut u64, task: TaskId, now: SimTime, max: u64) -> TaskControl<'a> {
        TaskControl { sets, task, now, promoted, notify_after: slot_notify, max_request_sectors: max }
    }

    fn start_app(&mut self, i: usize, now: SimTime) -> Result<()> {
        let slot = &mut self.apps[i];
        let mut ctl = Self::control(&mut self.sets, &mut self.promoted, &mut slot.notify_after, slot.task, now, self.max_promoted);
        slot.app.start(&mut ctl)
    }

    /// Starts every application (once, before the first foreground request).
    ///
    /// # Errors
    /// Registration errors.
    pub fn start(&mut self, now: SimTime) -> Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        for i in 0..self.apps.len() {
            self.start_app(i, now)?;
        }
        Ok(())
    }

    /// Whether every application is done (and there is at least one).
    #[must_use]
    pub fn all_done(&self) -> bool {
        !self.apps.is_empty() && self.apps.iter().all(|a| a.app.is_done())
    }

    /// Whether some application never finishes on its own (an endless scan): idle-time work
    /// then stops with the foreground workload instead of going on for ever.
    #[must_use]
    pub fn has_endless_app(&self) -> bool {
        self.apps.iter().any(|a| a.app.is_endless())
    }

    /// Whether the run ends once every application is done (`stop_when_done`, at least one
    /// application, none endless): then it may run without its own end.
    #[must_use]
    pub fn ends_the_run(&self) -> bool {
        self.config.stop_when_done && !self.apps.is_empty() && !self.has_endless_app()
    }

    /// Whether the run should stop now.
    #[must_use]
    pub fn should_stop(&self) -> bool {
        self.config.stop_when_done && self.all_done()
    }

    /// Foreground requests the applications promoted since the last call.
    pub fn take_promoted(&mut self) -> Vec<Promoted> {
        std::mem::take(&mut self.promoted)
    }

    /// Idle time after which background work may use an idle disk, ns.
    #[must_use]
    pub fn idle_after_ns(&self) -> Option<SimTime> {
        self.config.idle_after_ms.map(freeblock_disk::time::ms_to_ns)
    }

    /// The timeline bucket of time `t`, growing the timeline to it.
    ///
    /// # Errors
    /// [`FreeblockError::Invalid`] (`timeline_s`) when that would take the timeline past
    /// [`MAX_TIMELINE_ROWS`].
    fn bucket(&mut self, t: SimTime) -> Result<&mut Accounts> {
        let i = t / self.timeline_ns;
        if i >= MAX_TIMELINE_ROWS {
            return Err(FreeblockError::invalid(
                "timeline_s",
                format!(
                    "buckets of {} s would need more than {MAX_TIMELINE_ROWS} timeline rows to reach {:.3} s of simulated time: make them wider",
                    self.config.timeline_s,
                    t as f64 / 1e9
                ),
            ));
        }
        let i = i as usize;
        while self.timeline.len() <= i {
            let start_s = (self.timeline.len() as u64 * self.timeline_ns) as f64 / 1e9;
            self.timeline.push(TimelineRow { start_s, accounts: Accounts::default() });
        }
        Ok(&mut self.timeline[i].accounts)
    }

    /// Carries out one background segment from `head` leaving at `t`; returns where and when it
    /// ended, and the sectors it delivered.
    fn execute(&mut self, head: freeblock_disk::HeadState, t: SimTime, seg: &Segment, route: Route) -> (freeblock_disk::HeadState, SimTime, SimTime, u64) {
        if seg.sectors == 0 {
            let mv = self.disk.move_ns(head, seg.cylinder, seg.surface, seg.move_op);
            return (freeblock_disk::HeadState { cylinder: seg.cylinder, surface: seg.surface }, t + mv, mv, 0);
        }
        let a = self.disk.arc(head, t, seg.cylinder, seg.surface, seg.first, seg.sectors, seg.move_op);
        self.pieces.clear();
        self.disk.layout().arc_lbns(seg.cylinder, seg.surface, seg.first, seg.sectors, &mut self.pieces);
        let mut got = 0;
        for i in 0..self.pieces.len() {
            let r = self.pieces[i].0.clone();
            got += self.sets.transferred(r, a.end, route, None);
        }
        (a.head, a.end, a.move_ns, got)
    }

    /// Serves foreground request `id` at `now` on `drive`, with background work in its
    /// rotational latency. Returns the access as carried out and as it would have been alone.
    ///
    /// # Errors
    /// [`crate::Error::Request`] for a request the disk cannot serve; an application's
    /// registration error as [`crate::Error::Freeblock`].
    pub fn serve(&mut self, drive: &mut Drive, now: SimTime, request: &Pending) -> crate::Result<(MediaAccess, MediaAccess)> {
        let Pending { id, lbn, op, target, .. } = *request;
        let sectors = u64::from(request.sectors);
        let req = |source: AccessError| crate::Error::Request { index: id, source };
        let head = drive.head();
        let alone = self.disk.access(head, now, lbn, sectors, op, &mut self.runs).map_err(req)?;
        // The heads are free from the moment the command arrives: the controller's overhead
        // keeps the foreground from moving them, not the background (the paper's potential is
        // the rotational latency alone, so using the overhead too is extra).
        let free_at = now;
        let fg_ready = now + self.disk.overhead_ns(op);
        let direct = self.disk.move_ns(head, target.cylinder, target.surface, op);
        let potential = alone.media_start.saturating_sub(fg_ready + direct);
        let spt = self.disk.layout().sectors_per_track(target.cylinder);
        let sector_bytes = u64::from(self.disk.spec().sector_bytes);
        let mut acc = Accounts {
            potential_ns: potential,
            window_ns: alone.media_start.saturating_sub(now + direct),
            potential_bytes: potential as f64 * f64::from(spt) * sector_bytes as f64 / self.disk.revolution_ps() as f64 * 1000.0,
            requests: 1,
            ..Accounts::default()
        };
        let (mut h, mut t) = (head, free_at);
        if self.sets.total_wanted() > 0 {
            let window = Window { head, free_at, dst: target, deadline: alone.media_start, fg_ready, fg_op: op };
            let clock = self.decision_times.is_some().then(Instant::now);
            let plan = self.planner.plan(&self.sets, &window);
            if let (Some(c), Some(hist)) = (clock, self.decision_times.as_mut()) {
                hist.record(c.elapsed().as_nanos() as u64);
            }
            self.decisions += 1;
            self.examined += u64::from(plan.examined);
            let mut moved = 0;
            for seg in plan.iter() {
                let (nh, nt, mv, got) = self.execute(h, t, seg, Route::Free);
                let seg_spt = self.disk.layout().sectors_per_track(seg.cylinder);
                acc.free_transfer_ns += self.disk.sectors_ns(got.min(u64::from(seg.sectors)), seg_spt);
                acc.free_bytes += got * sector_bytes;
                moved += mv;
                h = nh;
                t = nt;
            }
            if !plan.segments.is_empty() {
                let last = self.disk.move_ns(h, target.cylinder, target.surface, op);
                acc.extra_seek_ns = (moved + last).saturating_sub(direct);
            }
        }
        // With no background work the heads never left: the foreground is served as alone.
        let done = if (h, t) == (head, free_at) { alone } else { self.disk.access_when_free(h, now, t, lbn, sectors, op, &mut self.runs).map_err(req)? };
        if done.media_start != alone.media_start || done.end != alone.end {
            self.delayed += 1;
        }
        drive.set_head(done.end_head);
        if self.config.piggyback {
            let got = self.sets.transferred(lbn..lbn + sectors, done.media_end, Route::Piggyback, Some(Op::Read));
            acc.piggyback_bytes += got * sector_bytes;
        }
        self.totals.add(&acc);
        self.bucket(now)?.add(&acc);
        self.hand_over(done.end)?;
        Ok((done, alone))
    }

    /// Books media transfers an external (host-side) scheduler had a drive carry out: the LBNs
    /// `range` passed under the head at `time` by `route` (free background or piggyback). The
    /// sectors that served a task count in the accounts, and the applications get their blocks
    /// as [`Freeblock::serve`] would hand them over (a foreground transfer only with
    /// `piggyback` on). Returns those sectors.
    ///
    /// # Errors
    /// An application's registration error.
    pub fn transferred_outside(&mut self, range: std::ops::Range<u64>, time: SimTime, route: Route) -> Result<u64> {
        if route == Route::Piggyback && !self.config.piggyback {
            return Ok(0);
        }
        let got = self.sets.transferred(range, time, route, Some(Op::Read));
        let bytes = got * u64::from(self.disk.spec().sector_bytes);
        let acc = match route {
            Route::Piggyback => Accounts { piggyback_bytes: bytes, ..Accounts::default() },
            _ => Accounts { free_bytes: bytes, ..Accounts::default() },
        };
        self.totals.add(&acc);
        self.bucket(time)?.add(&acc);
        self.hand_over(time)?;
        Ok(got)
    }

    /// Books one foreground request's opportunity as an external scheduler predicted it (the
    /// potential and window, from its learned model), and a planner decision.
    ///
    /// # Errors
    /// [`FreeblockError::Invalid`] past the timeline's end.
    pub fn book_outside(&mut self, now: SimTime, acc: &Accounts) -> Result<()> {
        self.totals.add(acc);
        self.decisions += 1;
        self.bucket(now)?.add(acc);
        Ok(())
    }

    /// Idle-time work from `now`: reads the nearest wanted track for one revolution. Returns when
    /// the disk is free again, or `None` when there is nothing to do.
    ///
    /// # Errors
    /// An application's registration error.
    pub fn idle_work(&mut self, drive: &mut Drive, now: SimTime) -> Result<Option<SimTime>> {
        let Some(seg) = self.planner.plan_idle(&self.sets, drive.head(), now) else { return Ok(None) };
        let (h, end, _, got) = self.execute(drive.head(), now, &seg, Route::Idle);
        drive.set_head(h);
        let sector_bytes = u64::from(self.disk.spec().sector_bytes);
        let acc = Accounts { idle_bytes: got * sector_bytes, idle_busy_ns: end - now, ..Accounts::default() };
        self.totals.add(&acc);
        self.bucket(now)?.add(&acc);
        self.hand_over(end)?;
        Ok(Some(end))
    }

    /// A promoted request finished at `time`.
    ///
    /// # Errors
    /// An application's registration error.
    pub fn complete_promoted(&mut self, p: &Promoted, time: SimTime) -> Result<()> {
        self.sets.complete_promoted(p.task, p.lbn, p.sectors, time)?;
        self.hand_over(time)
    }

    /// Hands each application its deliveries when it asked to be told, or when it has nothing
    /// left to wait for.
    fn hand_over(&mut self, now: SimTime) -> Result<()> {
        for slot in &mut self.apps {
            let pending = self.sets.pending(slot.task) as u64;
            if pending == 0 || (pending < slot.notify_after && !self.sets.is_idle(slot.task)) {
                continue;
            }
            let batch = self.sets.take_deliveries(slot.task);
            slot.notify_after = self.config.batch_blocks;
            let mut ctl = Self::control(&mut self.sets, &mut self.promoted, &mut slot.notify_after, slot.task, now, self.max_promoted);
            slot.app.on_blocks(&mut ctl, &batch)?;
        }
        Ok(())
    }

    /// Gives every application what is still waiting (at the end of a run).
    ///
    /// # Errors
    /// An application's registration error.
    pub fn flush(&mut self, now: SimTime) -> Result<()> {
        for slot in &mut self.apps {
            slot.notify_after = 1;
        }
        self.hand_over(now)
    }

    /// The run's results over `duration_ns` of simulated time.
    #[must_use]
    pub fn report(&self, duration_ns: SimTime) -> FreeblockReport {
        let t = &self.totals;
        let secs = duration_ns as f64 / 1e9;
        let mb_s = |bytes: f64| if secs > 0.0 { bytes / 1e6 / secs } else { 0.0 };
        let pot = t.window_ns.max(1) as f64;
        let free = t.free_bytes as f64 + t.piggyback_bytes as f64;
        FreeblockReport {
            planner: self.planner.kind.to_string(),
            max_tracks: self.config.budget(),
            balance: self.config.balances(),
            totals: *t,
            duration_s: secs,
            free_mb_s: mb_s(free),
            free_background_mb_s: mb_s(t.free_bytes as f64),
            piggyback_mb_s: mb_s(t.piggyback_bytes as f64),
            potential_mb_s: mb_s(t.potential_bytes),
            efficiency: if t.potential_bytes > 0.0 { free / t.potential_bytes } else { 0.0 },
            free_transfer_fraction: t.free_transfer_ns as f64 / pot,
            extra_seek_fraction: t.extra_seek_ns as f64 / pot,
            unused_fraction: t.unused_ns() as f64 / pot,
            idle_mb_s: mb_s(t.idle_bytes as f64),
            delayed_foreground: self.delayed,
            decisions: self.decisions,
            tracks_examined: self.examined,
            timeline: self.timeline.clone(),
            tasks: self.apps.iter().map(|a| a.app.report()).collect(),
        }
    }
}
