//! # Paper 000 §6: free data mining on an OLTP system
//!
//! The experiment of paper 000 §6.2: the Quantum Atlas 10K (on-disk cache off, media behaviour
//! only), a closed OLTP workload (tasks separated by 30 ms think times, requests uniform over the
//! disk, 2:1 reads, sizes a multiple of 4 KB from an exponential with mean 8 KB), and in the
//! background a scan of the whole disk in 4 KB blocks served only with free bandwidth.
//!
//! * **Fig. 8** — free and potential free bandwidth against the multiprogramming level, for each
//!   foreground scheduler; scans per day.
//! * **Fig. 9** — one scan in detail: progress over time (the last 5% of the blocks take a large
//!   share of the time) and the split of the potential into free transfer, extra seek and unused
//!   latency over the scan.
//! * **Fig. 10** — sampling scans that need any X% of the blocks: efficiency and samples per day.
//! * **Beyond the paper** — the paper's single-track greedy and ours (`multi_track` by default) on the same
//!   runs (same workload and seed): the share of the potential each realises.
//!
//! Each simulated run makes one pass of its scan and stops when the pass is over
//! ([`crate::freeblock::FreeblockConfig::stop_when_done`]), so "free MB/s" is the average over a
//! whole pass and "scans per day" is `86400 / pass time`. A run that reaches the request cap first
//! is reported as such: its bandwidth covers only the start of a pass (the easy part) and its
//! scans per day are extrapolated from the bytes delivered.
//!
//! The paper's figures are the `PAPER_*` constants below, each with the sentence it comes from;
//! every number of ours is computed by a simulation.

use std::sync::Arc;

use freeblock_disk::{library, Disk};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::freeblock::{Freeblock, FreeblockConfig, FreeblockReport, PassRecord, PlannerKind, ProgressPoint, TaskSpec, TimelineRow};
use crate::report::RunReport;
use crate::repro::PaperCheck;
use crate::sched::SchedulerSpec;
use crate::sim::{SimConfig, Simulation};
use crate::workload::{OltpSpec, WorkloadSpec};

/// "increasing data mining throughput to about 4.9 MB/s" (paper 000 §6.3, high MPL), MB/s.
pub const PAPER_FREE_MB_S: f64 = 4.9;
/// "about 21% of the Atlas 10K's 23MB/s full potential bandwidth": the media bandwidth, MB/s.
pub const PAPER_MEDIA_MB_S: f64 = 23.0;
/// The same sentence: free bandwidth as a share of the media bandwidth.
pub const PAPER_FREE_SHARE_OF_MEDIA: f64 = 0.21;
/// "complete over 47 full scans per day of this 9GB disk".
pub const PAPER_SCANS_PER_DAY: f64 = 47.0;
/// "a 7× increase in useful disk head utilization, from 3% to 24%": without mining.
pub const PAPER_USEFUL_UTILISATION_WITHOUT: f64 = 0.03;
/// The same sentence: with mining.
pub const PAPER_USEFUL_UTILISATION_WITH: f64 = 0.24;
/// "freeblock scheduling realizes only half of the potential free bandwidth".
pub const PAPER_EFFICIENCY: f64 = 0.5;
/// "18% of the remaining potential is lost to extra seek time" (share of the potential).
pub const PAPER_EXTRA_SEEK_SHARE: f64 = 0.18;
/// "The remaining 28% continues to be rotational latency" (unused share of the potential).
pub const PAPER_UNUSED_SHARE: f64 = 0.28;
/// "the last 5% of the freeblock requests take 30% of the total time for a scan".
pub const PAPER_LAST_5PCT_TIME_SHARE: f64 = 0.30;
/// "When any 95% of the dataset is sufficient, efficiency is 40% higher than for full disk scans."
pub const PAPER_SAMPLE_95_EFFICIENCY_GAIN: f64 = 0.40;
/// "For 80% of the dataset, efficiency is at 90%".
pub const PAPER_SAMPLE_80_EFFICIENCY: f64 = 0.90;
/// "… and data mining queries can complete over 90 samples of the dataset per day".
pub const PAPER_SAMPLE_80_PER_DAY: f64 = 90.0;
/// Issue 3's target for our planner: at least this share of the potential realised.
pub const TARGET_EFFICIENCY_OURS: f64 = 0.70;
/// Relative tolerance for "about"-figures read off the paper's text and plots.
pub const TOLERANCE: f64 = 0.2;

/// What to run. [`FreeMiningConfig::default`] is the full reproduction; [`FreeMiningConfig::quick`]
/// a small version for tests.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FreeMiningConfig {
    /// Built-in disk (cache turned off).
    pub disk: String,
    /// Workload seed (every run uses the same foreground request sequence).
    pub seed: u64,
    /// Think time of each OLTP task, ms.
    pub think_ms: f64,
    /// Application block of the scans, bytes.
    pub block_bytes: u64,
    /// Fig. 8: multiprogramming levels swept.
    pub mpls: Vec<u32>,
    /// Fig. 8: foreground schedulers.
    pub schedulers: Vec<SchedulerSpec>,
    /// Planner of Figs. 8–10 (the paper's single-track greedy by default).
    pub paper_planner: PlannerKind,
    /// Our planner, compared with the paper's on the same runs ("beyond the paper") and beside
    /// it in Figs. 9 and 10.
    pub ours_planner: PlannerKind,
    /// Figs. 9 and 10: the foreground scheduler of the detailed runs.
    pub detail_scheduler: SchedulerSpec,
    /// Figs. 9 and 10: their multiprogramming level.
    pub detail_mpl: u32,
    /// Fig. 10: percentages of the blocks a sampling scan needs (100 is the full scan).
    pub sample_percents: Vec<f64>,
    /// Fig. 10: planners run.
    pub sample_planners: Vec<PlannerKind>,
    /// Planner comparison: foreground schedulers.
    pub compare_schedulers: Vec<SchedulerSpec>,
    /// Planner comparison: multiprogramming levels.
    pub compare_mpls: Vec<u32>,
    /// Planner comparison: also run ours as a repeated scan with overlapping passes, for its
    /// steady state. Beyond the paper and the dearest runs by far (four runs of `steady_s`
    /// simulated seconds take more CPU than the rest of the full reproduction), so off by
    /// default (`--repeated-scans`); on in [`FreeMiningConfig::quick`], whose runs are short.
    pub repeated_scans: bool,
    /// Planner comparison, repeated scans: passes ours keeps in flight (overlapping passes).
    pub steady_passes_in_flight: u32,
    /// The same: share of the newest pass read before another starts.
    pub steady_next_pass_at: f64,
    /// The same: simulated seconds per run, long enough for many passes to end after the first
    /// (which, sharing the disk with the younger passes, takes longest). A time rather than a
    /// request count, so that a faster foreground scheduler does not get a shorter run.
    pub steady_s: f64,
    /// Most foreground requests per simulated run (a cap, so no run goes on for ever).
    pub max_requests: u64,
    /// Width of the accounting timeline's buckets, simulated seconds.
    pub timeline_s: f64,
    /// Simulations run at once.
    pub threads: usize,
}

impl Default for FreeMiningConfig {
    fn default() -> Self {
        Self {
            disk: "atlas10k".into(),
            seed: 42,
            think_ms: 30.0,
            block_bytes: 4096,
            mpls: vec![1, 2, 5, 10, 15, 20, 25, 30],
            schedulers: vec![SchedulerSpec::Fcfs, SchedulerSpec::Clook, SchedulerSpec::Sstf, SchedulerSpec::Sptf, SchedulerSpec::SptfSw { window_pct: 40.0 }],
            paper_planner: PlannerKind::SingleTrack,
            ours_planner: PlannerKind::MultiTrack,
            detail_scheduler: SchedulerSpec::Fcfs,
            detail_mpl: 20,
            sample_percents: vec![10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 100.0],
            sample_planners: vec![PlannerKind::SingleTrack, PlannerKind::MultiTrack],
            compare_schedulers: vec![SchedulerSpec::Fcfs, SchedulerSpec::Sptf],
            compare_mpls: vec![10, 20],
            repeated_scans: false,
            steady_passes_in_flight: 8,
            steady_next_pass_at: 0.5,
            steady_s: 40_000.0,
            max_requests: 1_500_000,
            timeline_s: 20.0,
            threads: 2,
        }
    }
}

impl FreeMiningConfig {
    /// A few seconds' worth: two MPLs, two schedulers, short capped runs (most passes incomplete).
    #[must_use]
    pub fn quick() -> Self {
        Self {
            mpls: vec![2, 10],
            schedulers: vec![SchedulerSpec::Fcfs, SchedulerSpec::Sptf],
            detail_mpl: 10,
            sample_percents: vec![5.0, 10.0, 100.0],
            sample_planners: vec![PlannerKind::SingleTrack, PlannerKind::MultiTrack],
            compare_schedulers: vec![SchedulerSpec::Fcfs],
            compare_mpls: vec![10],
            repeated_scans: true,
            steady_s: 120.0,
            max_requests: 12_000,
            timeline_s: 5.0,
            ..Self::default()
        }
    }
}

/// One simulated run: a foreground setting, a planner, and a scan needing `sample_percent` of
/// the disk's blocks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunKey {
    /// Foreground scheduler.
    pub scheduler: SchedulerSpec,
    /// Multiprogramming level.
    pub mpl: u32,
    /// Freeblock planner.
    pub planner: PlannerKind,
    /// Share of the blocks the scan's pass needs, % (100 = full scan).
    pub sample_percent: f64,
    /// A repeated full scan with overlapping passes, run for [`FreeMiningConfig::steady_s`]
    /// (otherwise one pass).
    pub overlap: bool,
    /// Whether the planner balances the wanted set across the disk (the planner's default,
    /// except for the runs that show what balancing adds).
    pub balance: bool,
}

impl RunKey {
    /// A run with the planner's default balancing.
    #[must_use]
    pub fn new(scheduler: SchedulerSpec, mpl: u32, planner: PlannerKind, sample_percent: f64, overlap: bool) -> Self {
        Self { scheduler, mpl, planner, sample_percent, overlap, balance: planner.balances_by_default() }
    }
}

/// What one run achieved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MiningRun {
    /// Foreground scheduler.
    pub scheduler: String,
    /// Multiprogramming level.
    pub mpl: u32,
    /// Planner (`single_track` = paper 000's greedy; `two_track` and `multi_track` = ours).
    pub planner: String,
    /// Whether the planner balanced the wanted set across the disk.
    pub balance: bool,
    /// Share of the blocks the pass needed, %.
    pub sample_percent: f64,
    /// Foreground requests served.
    pub requests: u64,
    /// Simulated seconds.
    pub simulated_s: f64,
    /// Whether the run stopped at the request cap before its pass was over.
    pub hit_cap: bool,
    /// Duration of the pass, s (`None` when it did not finish).
    pub pass_s: Option<f64>,
    /// Share of the pass's blocks delivered (1 when it finished).
    pub pass_done: f64,
    /// Free bandwidth (background in rotational latency + foreground transfers of wanted
    /// sectors), MB/s.
    pub free_mb_s: f64,
    /// Of which foreground transfers ("piggyback"), MB/s.
    pub piggyback_mb_s: f64,
    /// Potential free bandwidth (foreground rotational latency × media rate), MB/s.
    pub potential_mb_s: f64,
    /// Free bandwidth as a share of the disk's media bandwidth.
    pub media_share: f64,
    /// Free ÷ potential bandwidth.
    pub efficiency: f64,
    /// Bytes the pass needed and got ÷ potential bytes (a sampling scan's efficiency: blocks read
    /// beyond the sample do not count).
    pub pass_efficiency: f64,
    /// Shares of the potential (rotational latency) time: free transfer.
    pub free_transfer_fraction: f64,
    /// Extra seek.
    pub extra_seek_fraction: f64,
    /// Unused latency.
    pub unused_fraction: f64,
    /// Passes per day: `86400 / pass_s`, or extrapolated from the bytes delivered per day when
    /// the pass did not finish.
    pub passes_per_day: f64,
    /// Whether `passes_per_day` is extrapolated.
    pub passes_per_day_extrapolated: bool,
    /// Foreground mean response time, ms.
    pub response_mean_ms: f64,
    /// Foreground head usage, shares of the run's time: seek.
    pub fg_seek: f64,
    /// Rotational latency.
    pub fg_rotational_latency: f64,
    /// Media transfer (the "useful head utilisation" without mining).
    pub fg_transfer: f64,
    /// Idle.
    pub fg_idle: f64,
    /// Useful head utilisation with mining: foreground transfer plus free transfer time.
    pub useful_with_mining: f64,
    /// Time the last 5% of the pass's blocks took, as a share of the pass (paper 000 Fig. 9).
    pub last_5pct_time_share: Option<f64>,
    /// Foreground requests whose timing the background work changed (must be 0).
    pub delayed_foreground: u64,
    /// Planner decisions.
    pub decisions: u64,
    /// For a repeated scan with overlapping passes: its steady state.
    pub steady: Option<SteadyState>,
}

/// The steady state of a repeated scan: how often a whole pass ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// Passes completed in the run.
    pub passes: usize,
    /// Mean time between the ends of consecutive passes, s (`None` with fewer than two).
    pub interval_s: Option<f64>,
    /// Bytes of a pass per interval ÷ potential free bandwidth: the share of the potential that
    /// ends up in complete passes (blocks read for passes still under way do not count).
    pub share: Option<f64>,
    /// Mean time from a pass's start to its end, s.
    pub mean_pass_s: Option<f64>,
}

/// One stretch of a scan: bandwidths and the split of its potential.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SplitSlice {
    /// Start, simulated s.
    pub start_s: f64,
    /// End, simulated s.
    pub end_s: f64,
    /// Free bandwidth, MB/s.
    pub free_mb_s: f64,
    /// Potential free bandwidth, MB/s.
    pub potential_mb_s: f64,
    /// Share of the potential time transferring wanted blocks.
    pub free_transfer: f64,
    /// Share lost to extra seeks.
    pub extra_seek: f64,
    /// Share left unused.
    pub unused: f64,
}

/// A scan's progress at one time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProgressSample {
    /// Simulated s since the pass started.
    pub time_s: f64,
    /// Share of the pass's blocks delivered.
    pub done: f64,
}

/// Paper 000 Fig. 9 for one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScanDetail {
    /// Foreground scheduler.
    pub scheduler: String,
    /// Multiprogramming level.
    pub mpl: u32,
    /// Planner.
    pub planner: String,
    /// Pass duration, s (`None`: not finished).
    pub pass_s: Option<f64>,
    /// Time share of the last 5% of the blocks.
    pub last_5pct_time_share: Option<f64>,
    /// Achieved progress (Fig. 9a), one sample per percent of the pass.
    pub progress: Vec<ProgressSample>,
    /// Potential progress (Fig. 9a): cumulative potential bytes ÷ the pass's bytes, at the end
    /// of each timeline bucket.
    pub potential_progress: Vec<ProgressSample>,
    /// Every timeline bucket (Fig. 9b, 9c).
    pub buckets: Vec<SplitSlice>,
    /// The pass (or run) in ten equal slices of time.
    pub tenths: Vec<SplitSlice>,
}

/// One point of paper 000 Fig. 10.
#[derive(Debug, Clone, Serialize)]
pub struct SampleRow {
    /// Planner.
    pub planner: String,
    /// Share of the blocks needed, %.
    pub percent: f64,
    /// Pass duration, s.
    pub pass_s: Option<f64>,
    /// Samples per day.
    pub samples_per_day: f64,
    /// Whether `samples_per_day` is extrapolated (the pass hit the cap).
    pub extrapolated: bool,
    /// Free bandwidth delivered to the sample ÷ potential.
    pub efficiency: f64,
    /// Efficiency relative to the full scan's, minus 1 (`None` without a full-scan row).
    pub gain_over_full_scan: Option<f64>,
}

/// The paper's greedy and ours on the same foreground run.
#[derive(Debug, Clone, Serialize)]
pub struct PlannerComparison {
    /// Foreground scheduler.
    pub scheduler: String,
    /// Multiprogramming level.
    pub mpl: u32,
    /// Paper 000's single-track greedy: share of the potential realised.
    pub paper_efficiency: f64,
    /// Ours (two-track).
    pub ours_efficiency: f64,
    /// Ours without balancing (what balancing adds is the difference).
    pub ours_unbalanced_efficiency: Option<f64>,
    /// Free-transfer share of the potential time, paper's planner.
    pub paper_free_transfer: f64,
    /// The same, ours.
    pub ours_free_transfer: f64,
    /// Free MB/s, paper's planner.
    pub paper_free_mb_s: f64,
    /// Free MB/s, ours.
    pub ours_free_mb_s: f64,
    /// Scans per day, paper's planner.
    pub paper_scans_per_day: f64,
    /// Scans per day, ours.
    pub ours_scans_per_day: f64,
    /// Delayed foreground requests, both runs together (must be 0).
    pub delayed_foreground: u64,
    /// Whether both passes finished (otherwise the figures cover the start of a pass).
    pub complete: bool,
    /// Repeated scans, paper's planner one pass at a time: a pass's bytes per pass time ÷
    /// potential (its steady state, the passes following one another).
    pub paper_repeated_share: Option<f64>,
    /// Repeated scans, ours with overlapping passes: its steady state.
    pub ours_repeated: Option<SteadyState>,
    /// Delayed foreground requests in ours' repeated-scan run (must be 0).
    pub ours_repeated_delayed: u64,
}

/// A paper figure compared, with where it applies.
#[derive(Debug, Clone, Serialize)]
pub struct FigureCheck {
    /// "Fig. 8", "Fig. 9", "Fig. 10", "beyond the paper".
    pub figure: String,
    /// Which run(s), e.g. "FCFS, MPL 30, single_track".
    pub context: String,
    /// The comparison.
    #[serde(flatten)]
    pub check: PaperCheck,
}

/// Everything `repro free-mining` computes.
#[derive(Debug, Clone, Serialize)]
pub struct FreeMiningReport {
    /// What was run.
    pub config: FreeMiningConfig,
    /// Disk capacity, GB.
    pub capacity_gb: f64,
    /// The disk's media bandwidth averaged over its capacity, MB/s.
    pub media_mb_s: f64,
    /// Every run that succeeded, in the order of [`plan_runs`].
    pub runs: Vec<MiningRun>,
    /// Fig. 9: the detailed runs (paper's planner, then ours).
    pub fig9: Vec<ScanDetail>,
    /// Fig. 10.
    pub fig10: Vec<SampleRow>,
    /// Beyond the paper.
    pub comparison: Vec<PlannerComparison>,
    /// Comparisons with the paper and the targets.
    pub checks: Vec<FigureCheck>,
    /// Runs that hit the cap, and other caveats.
    pub notes: Vec<String>,
    /// Runs that failed (an error or a panic), left out of every table.
    pub failed_runs: Vec<String>,
}

impl FreeMiningReport {
    /// The one-pass run with `planner` at its default balancing, if it was made.
    #[must_use]
    pub fn run(&self, scheduler: SchedulerSpec, mpl: u32, planner: PlannerKind, sample_percent: f64) -> Option<&MiningRun> {
        let (s, p) = (scheduler.to_string(), planner.to_string());
        let balance = planner.balances_by_default();
        self.runs.iter().find(|r| r.scheduler == s && r.mpl == mpl && r.planner == p && r.sample_percent == sample_percent && r.balance == balance && r.steady.is_none())
    }
}

/// Seconds in a day.
pub const DAY_S: f64 = 86_400.0;

/// Passes per day for a pass of `pass_s` seconds.
#[must_use]
pub fn per_day(pass_s: f64) -> f64 {
    if pass_s > 0.0 { DAY_S / pass_s } else { 0.0 }
}

/// Passes per day extrapolated from a partial pass: `delivered` of `needed` blocks in
/// `elapsed_s` seconds, at that rate.
#[must_use]
pub fn per_day_extrapolated(delivered: u64, needed: u64, elapsed_s: f64) -> f64 {
    if needed == 0 || elapsed_s <= 0.0 {
        return 0.0;
    }
    delivered as f64 / needed as f64 * DAY_S / elapsed_s
}

/// The disk's media bandwidth averaged over its capacity (every track read in one revolution,
/// no switches), MB/s.
#[must_use]
pub fn media_mb_s(disk: &Disk) -> f64 {
    let bytes = disk.capacity() as f64 * f64::from(disk.spec().sector_bytes);
    let tracks = f64::from(disk.layout().cylinders()) * f64::from(disk.layout().surfaces());
    bytes / (tracks * disk.revolution_ps() as f64 * 1e-12) / 1e6
}

/// Share of a pass's time (`start_ns..end_ns`) that its blocks after `from` (e.g. 0.95) took,
/// from the pass's progress points. `None` if the progress never reached `from`.
#[must_use]
pub fn tail_time_share(progress: &[ProgressPoint], pass: u32, start_ns: u64, end_ns: u64, from: f64) -> Option<f64> {
    let at = progress.iter().find(|p| p.pass == pass && p.fraction + 1e-9 >= from)?;
    let total = end_ns.saturating_sub(start_ns);
    (total > 0).then(|| end_ns.saturating_sub(at.time_ns) as f64 / total as f64)
}

/// Adds up timeline buckets into `slices` equal slices of `span_s` seconds (a bucket goes to the
/// slice its start falls in; buckets past the span are left out). Bandwidths are per second of
/// the slice (buckets of `bucket_s` seconds; a slice is never taken as shorter than one bucket).
#[must_use]
pub fn slice_timeline(rows: &[TimelineRow], bucket_s: f64, span_s: f64, slices: usize) -> Vec<SplitSlice> {
    if slices == 0 || span_s <= 0.0 {
        return Vec::new();
    }
    let width = span_s / slices as f64;
    let mut sums = vec![BucketSum::default(); slices];
    for r in rows {
        if r.start_s >= span_s {
            continue;
        }
        let i = ((r.start_s / width) as usize).min(slices - 1);
        sums[i].add(r);
    }
    sums.iter()
        .enumerate()
        .map(|(i, s)| {
            let start = i as f64 * width;
            s.slice(start, start + width, width.max(bucket_s.min(span_s)))
        })
        .collect()
}

/// Each timeline bucket as a slice; the last one ends at `end_s`.
#[must_use]
pub fn timeline_slices(rows: &[TimelineRow], bucket_s: f64, end_s: f64) -> Vec<SplitSlice> {
    rows.iter()
        .map(|r| {
            let end = (r.start_s + bucket_s).min(end_s.max(r.start_s));
            let mut s = BucketSum::default();
            s.add(r);
            s.slice(r.start_s, end, end - r.start_s)
        })
        .collect()
}

/// Running sums of a few timeline buckets.
#[derive(Debug, Clone, Copy, Default)]
struct BucketSum {
    potential_ns: u64,
    potential_bytes: f64,
    free_transfer_ns: u64,
    extra_seek_ns: u64,
    free_bytes: u64,
}

impl BucketSum {
    fn add(&mut self, r: &TimelineRow) {
        let a = &r.accounts;
        self.potential_ns += a.potential_ns;
        self.potential_bytes += a.potential_bytes;
        self.free_transfer_ns += a.free_transfer_ns;
        self.extra_seek_ns += a.extra_seek_ns;
        self.free_bytes += a.free_bytes + a.piggyback_bytes;
    }

    fn slice(&self, start_s: f64, end_s: f64, seconds: f64) -> SplitSlice {
        let pot = self.potential_ns.max(1) as f64;
        let mb_s = |b: f64| if seconds > 0.0 { b / 1e6 / seconds } else { 0.0 };
        let used = (self.free_transfer_ns + self.extra_seek_ns).min(self.potential_ns);
        SplitSlice {
            start_s,
            end_s,
            free_mb_s: mb_s(self.free_bytes as f64),
            potential_mb_s: mb_s(self.potential_bytes),
            free_transfer: if self.potential_ns == 0 { 0.0 } else { self.free_transfer_ns as f64 / pot },
            extra_seek: if self.potential_ns == 0 { 0.0 } else { self.extra_seek_ns as f64 / pot },
            unused: if self.potential_ns == 0 { 0.0 } else { (self.potential_ns - used) as f64 / pot },
        }
    }
}

/// A comparison with an "about" figure: accepted within ±[`TOLERANCE`] of `paper_value`.
#[must_use]
pub fn about(metric: &str, paper: &str, paper_value: f64, ours: f64) -> PaperCheck {
    bounded(metric, paper, paper_value * (1.0 - TOLERANCE), paper_value * (1.0 + TOLERANCE), ours)
}

/// A comparison with an "over" figure: accepted from `(1 − TOLERANCE) × paper_value` up.
#[must_use]
pub fn at_least(metric: &str, paper: &str, paper_value: f64, ours: f64) -> PaperCheck {
    bounded(metric, paper, paper_value * (1.0 - TOLERANCE), f64::INFINITY, ours)
}

/// A comparison accepted in `low..=high`.
#[must_use]
pub fn bounded(metric: &str, paper: &str, low: f64, high: f64, ours: f64) -> PaperCheck {
    PaperCheck { metric: metric.into(), paper: paper.into(), low, high, ours, matches: ours >= low && ours <= high }
}

/// The runs the report needs, each once, in a fixed order: the Fig. 8 grid, the planner
/// comparison, then the sampling scans.
#[must_use]
pub fn plan_runs(c: &FreeMiningConfig) -> Vec<RunKey> {
    let mut keys: Vec<RunKey> = Vec::new();
    let mut add = |k: RunKey| {
        if !keys.contains(&k) {
            keys.push(k);
        }
    };
    for &scheduler in &c.schedulers {
        for &mpl in &c.mpls {
            add(RunKey::new(scheduler, mpl, c.paper_planner, 100.0, false));
        }
    }
    for &scheduler in &c.compare_schedulers {
        for &mpl in &c.compare_mpls {
            for planner in [PlannerKind::SingleTrack, c.ours_planner] {
                add(RunKey::new(scheduler, mpl, planner, 100.0, false));
            }
            add(RunKey { balance: false, ..RunKey::new(scheduler, mpl, c.ours_planner, 100.0, false) });
            if c.repeated_scans {
                add(RunKey::new(scheduler, mpl, c.ours_planner, 100.0, true));
            }
        }
    }
    for &planner in &c.sample_planners {
        for &p in &c.sample_percents {
            add(RunKey::new(c.detail_scheduler, c.detail_mpl, planner, p, false));
        }
    }
    keys
}

/// The simulation that gives `key`'s figures: at MPL 1 the queue never holds more than one
/// request, so every foreground scheduler serves the same requests at the same instants and the
/// freeblock planner sees the same windows: one FCFS run stands for all of them (the rows differ
/// only in the scheduler's name). Any other run stands for itself.
#[must_use]
pub fn stand_in(key: RunKey) -> RunKey {
    if key.mpl == 1 { RunKey { scheduler: SchedulerSpec::Fcfs, ..key } } else { key }
}

/// The simulations the report needs: the [`stand_in`]s of [`plan_runs`], each once, in plan
/// order. What [`free_mining`] runs, and what [`assemble`] takes the outcomes of.
#[must_use]
pub fn simulations(c: &FreeMiningConfig) -> Vec<RunKey> {
    let mut runs: Vec<RunKey> = Vec::new();
    for k in plan_runs(c) {
        let s = stand_in(k);
        if !runs.contains(&s) {
            runs.push(s);
        }
    }
    runs
}

/// Marks a check's context when its run did not finish its pass.
fn partial(r: &MiningRun) -> &'static str {
    if r.pass_s.is_some() { "" } else { " (PARTIAL: pass not finished)" }
}

/// What one planned run hands to [`assemble`]: its row, and for the runs Fig. 9 shows, their
/// detail (computed where the run's full freeblock report is, so the outcome stays small: it
/// travels between processes when the runs are spread over Dask workers).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOutcome {
    /// The run's figures.
    pub row: MiningRun,
    /// Fig. 9's view of the run, for the runs [`shows_detail`] picks.
    pub detail: Option<ScanDetail>,
}

/// A run's outcome, or why it failed (an error or a panic, as text).
pub type RunResult = std::result::Result<RunOutcome, String>;

/// Whether Fig. 9 shows `key`'s run: the detailed scheduler and MPL, one full pass, the
/// planner's default balancing, and the paper's planner or ours.
#[must_use]
pub fn shows_detail(c: &FreeMiningConfig, key: &RunKey) -> bool {
    detail_planners(c).contains(&key.planner) && *key == RunKey::new(c.detail_scheduler, c.detail_mpl, key.planner, 100.0, false)
}

/// Fig. 9's planners: the paper's, then ours (or, when they are the same, the single-track greedy).
fn detail_planners(c: &FreeMiningConfig) -> [PlannerKind; 2] {
    [c.paper_planner, if c.paper_planner == c.ours_planner { PlannerKind::SingleTrack } else { c.ours_planner }]
}

/// The disk of the reproduction: the built-in model with its cache off.
fn mining_disk(c: &FreeMiningConfig) -> Result<Arc<Disk>> {
    Ok(library::media(&c.disk)?)
}

/// Runs one planned run (one of [`plan_runs`]) on its own: an error or a panic in the engine
/// comes back as the `Err` text, so that one failed run leaves the others' figures standing.
/// The same run gives the same outcome in any process, in any order.
pub fn run_planned(c: &FreeMiningConfig, key: RunKey) -> RunResult {
    let disk = mining_disk(c).map_err(|e| e.to_string())?;
    let media = media_mb_s(&disk);
    run_caught(&disk, c, key, media)
}

fn run_caught(disk: &Arc<Disk>, c: &FreeMiningConfig, key: RunKey, media: f64) -> RunResult {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_one(disk, c, key, media))) {
        Ok(Ok(o)) => Ok(o),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(format!(
            "panicked: {}",
            panic.downcast_ref::<String>().map(String::as_str).or_else(|| panic.downcast_ref::<&str>().copied()).unwrap_or("(no message)")
        )),
    }
}

/// The order to start the runs in: dearest first (our planner searches more per decision; a
/// pass's tail costs most), so that the workers finish together on the cheap short samples.
/// Indexes into `keys`.
#[must_use]
pub fn dearest_first(keys: &[RunKey]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let dearest = |k: &RunKey| (u8::from(!k.overlap), u8::from(k.planner == PlannerKind::SingleTrack));
    order.sort_by(|&a, &b| dearest(&keys[a]).cmp(&dearest(&keys[b])).then(keys[b].sample_percent.total_cmp(&keys[a].sample_percent)).then(a.cmp(&b)));
    order
}

fn run_one(disk: &Arc<Disk>, c: &FreeMiningConfig, key: RunKey, media: f64) -> Result<RunOutcome> {
    let workload = WorkloadSpec::Oltp(OltpSpec { think_time_ms: c.think_ms, ..OltpSpec::default() }).build(disk.capacity(), c.seed)?;
    // One pass, or (overlap) passes until the run ends.
    let scan = TaskSpec::Scan {
        block_bytes: c.block_bytes,
        passes: u32::from(!key.overlap),
        fraction: key.sample_percent / 100.0,
        first_lbn: None,
        blocks: None,
        next_pass_at: key.overlap.then_some(c.steady_next_pass_at),
        passes_in_flight: key.overlap.then_some(c.steady_passes_in_flight),
    };
    let fb = Freeblock::new(
        Arc::clone(disk),
        FreeblockConfig { planner: key.planner, balance: Some(key.balance), timeline_s: c.timeline_s, tasks: vec![scan], ..FreeblockConfig::default() },
    )?;
    let (max_requests, max_time_s) = if key.overlap { (0, c.steady_s) } else { (c.max_requests, 0.0) };
    let sim = SimConfig { scheduler: key.scheduler, mpl: key.mpl, think_ms: c.think_ms, max_requests, max_time_s, ..SimConfig::default() };
    let report = Simulation::new(Arc::clone(disk), workload, sim).with_freeblock(fb).run(None)?;
    let freeblock = report.freeblock.clone().ok_or_else(|| crate::Error::Config { origin: "free-mining".into(), message: "the run has no freeblock report".into() })?;
    let row = summarise(disk, c, key, &report, &freeblock, media);
    let capacity_bytes = disk.capacity() as f64 * f64::from(disk.spec().sector_bytes);
    let detail = shows_detail(c, &key).then(|| detail(c, &row, &freeblock, capacity_bytes));
    Ok(RunOutcome { row, detail })
}

fn summarise(disk: &Disk, c: &FreeMiningConfig, key: RunKey, r: &RunReport, fb: &FreeblockReport, media: f64) -> MiningRun {
    let block_sectors = (c.block_bytes / u64::from(disk.spec().sector_bytes)).max(1);
    let region_blocks = disk.capacity() / block_sectors;
    let needed = ((region_blocks as f64 * key.sample_percent / 100.0).ceil() as u64).clamp(1, region_blocks.max(1));
    let task = fb.tasks.first();
    let pass = task.and_then(|t| t.passes.first());
    let pass_s = pass.map(|p| (p.end_ns - p.start_ns) as f64 / 1e9);
    let delivered = pass.map_or_else(|| task.map_or(0, |t| t.blocks_delivered.min(needed)), |p| p.blocks);
    let (passes_per_day, extrapolated) = match pass_s {
        Some(s) => (per_day(s), false),
        None => (per_day_extrapolated(delivered, needed, fb.duration_s), true),
    };
    let last5 = match (task, pass) {
        (Some(t), Some(p)) if key.sample_percent >= 100.0 => tail_time_share(&t.progress, 0, p.start_ns, p.end_ns, 0.95),
        _ => None,
    };
    let f = r.head_usage_fractions;
    let duration_ns = (fb.duration_s * 1e9).max(1.0);
    MiningRun {
        scheduler: key.scheduler.to_string(),
        mpl: key.mpl,
        planner: key.planner.to_string(),
        balance: key.balance,
        sample_percent: key.sample_percent,
        requests: r.requests,
        simulated_s: fb.duration_s,
        // A repeated scan runs to its request count by design.
        hit_cap: !key.overlap && pass.is_none() && r.requests >= c.max_requests,
        pass_s,
        pass_done: delivered as f64 / needed as f64,
        free_mb_s: fb.free_mb_s,
        piggyback_mb_s: fb.piggyback_mb_s,
        potential_mb_s: fb.potential_mb_s,
        media_share: if media > 0.0 { fb.free_mb_s / media } else { 0.0 },
        efficiency: fb.efficiency,
        pass_efficiency: if fb.totals.potential_bytes > 0.0 { (delivered * c.block_bytes) as f64 / fb.totals.potential_bytes } else { 0.0 },
        free_transfer_fraction: fb.free_transfer_fraction,
        extra_seek_fraction: fb.extra_seek_fraction,
        unused_fraction: fb.unused_fraction,
        passes_per_day,
        passes_per_day_extrapolated: extrapolated,
        response_mean_ms: r.response.mean_ms,
        fg_seek: f.seek,
        fg_rotational_latency: f.rotational_latency,
        fg_transfer: f.transfer,
        fg_idle: f.idle,
        useful_with_mining: f.transfer + fb.totals.free_transfer_ns as f64 / duration_ns,
        last_5pct_time_share: last5,
        delayed_foreground: fb.delayed_foreground,
        decisions: fb.decisions,
        steady: key.overlap.then(|| steady_state(task.map_or(&[][..], |t| &t.passes), (needed * c.block_bytes) as f64, fb.potential_mb_s)),
    }
}

/// `pass_bytes` read every `seconds` as a share of `potential_mb_s` (`None` without time or
/// potential).
fn share_of_potential(pass_bytes: f64, seconds: f64, potential_mb_s: f64) -> Option<f64> {
    (seconds > 0.0 && potential_mb_s > 0.0).then(|| pass_bytes / 1e6 / seconds / potential_mb_s)
}

/// The steady state of a repeated scan from its completed passes (`pass_bytes` each).
#[must_use]
pub fn steady_state(passes: &[PassRecord], pass_bytes: f64, potential_mb_s: f64) -> SteadyState {
    let interval_s = match passes {
        [first, .., last] => Some((last.end_ns - first.end_ns) as f64 / 1e9 / (passes.len() - 1) as f64),
        _ => None,
    };
    let share = interval_s.and_then(|i| share_of_potential(pass_bytes, i, potential_mb_s));
    let mean_pass_s = (!passes.is_empty()).then(|| passes.iter().map(|p| (p.end_ns - p.start_ns) as f64 / 1e9).sum::<f64>() / passes.len() as f64);
    SteadyState { passes: passes.len(), interval_s, share, mean_pass_s }
}

fn detail(c: &FreeMiningConfig, row: &MiningRun, fb: &FreeblockReport, needed_bytes: f64) -> ScanDetail {
    let task = fb.tasks.first();
    let pass = task.and_then(|t| t.passes.first());
    let start_ns = pass.map_or(0, |p| p.start_ns);
    let progress = task
        .map(|t| t.progress.iter().filter(|p| p.pass == 0).map(|p| ProgressSample { time_s: (p.time_ns - start_ns) as f64 / 1e9, done: p.fraction }).collect())
        .unwrap_or_default();
    let mut cumulative = 0.0;
    let potential_progress = fb
        .timeline
        .iter()
        .map(|r| {
            cumulative += r.accounts.potential_bytes;
            ProgressSample { time_s: (r.start_s + c.timeline_s).min(fb.duration_s), done: if needed_bytes > 0.0 { cumulative / needed_bytes } else { 0.0 } }
        })
        .collect();
    let span = row.pass_s.unwrap_or(fb.duration_s);
    ScanDetail {
        scheduler: row.scheduler.clone(),
        mpl: row.mpl,
        planner: row.planner.clone(),
        pass_s: row.pass_s,
        last_5pct_time_share: row.last_5pct_time_share,
        progress,
        potential_progress,
        buckets: timeline_slices(&fb.timeline, c.timeline_s, fb.duration_s),
        tenths: slice_timeline(&fb.timeline, c.timeline_s, span, 10),
    }
}

/// Paper 000 §6 (Figs. 8–10) and the planner comparison, its runs on `c.threads` threads.
/// `progress` is called after each run with (runs done, runs in all), from whichever thread
/// finished it.
///
/// # Errors
/// Setup errors (unknown disk, invalid workload). A run that fails is listed in the report's
/// `failed_runs` and left out of its figures.
pub fn free_mining(c: &FreeMiningConfig, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FreeMiningReport> {
    let disk = mining_disk(c)?;
    let media = media_mb_s(&disk);
    let runs = simulations(c);
    let total = runs.len();
    progress(0, total);
    let order = dearest_first(&runs);
    let ordered: Vec<RunKey> = order.iter().map(|&i| runs[i]).collect();
    let results = crate::parallel::map_in_order(&ordered, c.threads, |k| run_caught(&disk, c, *k, media), |n| progress(n, total));
    let mut in_plan_order: Vec<Option<RunResult>> = (0..total).map(|_| None).collect();
    for (slot, result) in order.into_iter().zip(results) {
        in_plan_order[slot] = Some(result);
    }
    assemble(c, in_plan_order.into_iter().map(|r| r.expect("every simulation ran")).collect())
}

/// The report from the outcomes of the [`simulations`]`(c)`, in that order, wherever they were
/// run.
///
/// # Errors
/// Setup errors (unknown disk); a number of outcomes that is not the number of simulations.
pub fn assemble(c: &FreeMiningConfig, results: Vec<RunResult>) -> Result<FreeMiningReport> {
    let disk = mining_disk(c)?;
    let media = media_mb_s(&disk);
    let capacity_bytes = disk.capacity() as f64 * f64::from(disk.spec().sector_bytes);
    let runs = simulations(c);
    if results.len() != runs.len() {
        return Err(crate::Error::Config {
            origin: "free-mining".into(),
            message: format!("{} run outcomes for {} simulations", results.len(), runs.len()),
        });
    }
    // Each planned run's outcome: its stand-in's, under its own scheduler's name.
    let keys = plan_runs(c);
    let mut shared = false;
    let results: Vec<RunResult> = keys
        .iter()
        .map(|&k| {
            let s = stand_in(k);
            shared |= s != k;
            let i = runs.iter().position(|r| *r == s).expect("simulations() holds every stand-in");
            results[i].clone().map(|mut o| {
                o.row.scheduler = k.scheduler.to_string();
                if let Some(d) = &mut o.detail {
                    d.scheduler = k.scheduler.to_string();
                }
                o
            })
        })
        .collect();
    let mut outcomes: Vec<Option<RunOutcome>> = (0..keys.len()).map(|_| None).collect();
    let mut failed = Vec::new();
    for (slot, result) in results.into_iter().enumerate() {
        match result {
            Ok(o) => outcomes[slot] = Some(o),
            Err(e) => {
                let k = keys[slot];
                failed.push((slot, format!("{} MPL {} {} {}%: {e}", k.scheduler, k.mpl, k.planner, k.sample_percent)));
            }
        }
    }
    failed.sort();
    let failed_runs: Vec<String> = failed.into_iter().map(|(_, e)| e).collect();
    let find_key = |key: RunKey| keys.iter().position(|k| *k == key).and_then(|i| outcomes[i].as_ref());
    let find_run = |s: SchedulerSpec, mpl: u32, p: PlannerKind, pct: f64, overlap: bool| find_key(RunKey::new(s, mpl, p, pct, overlap));
    let find = |s: SchedulerSpec, mpl: u32, p: PlannerKind, pct: f64| find_run(s, mpl, p, pct, false);

    let mut checks = Vec::new();
    let mut notes = Vec::new();
    if shared {
        notes.push("MPL 1: at most one request is ever queued, so every scheduler serves the same requests at the same instants; one simulated run (FCFS) gives the rows of all of them".to_string());
    }
    let mut check = |figure: &str, context: String, c: PaperCheck| checks.push(FigureCheck { figure: figure.into(), context, check: c });

    // Fig. 8 at the highest MPL swept, each scheduler.
    if let Some(&high) = c.mpls.iter().max() {
        for &s in &c.schedulers {
            let Some(o) = find(s, high, c.paper_planner, 100.0) else { continue };
            let r = &o.row;
            let ctx = format!("{s}, MPL {high}, {}{}", c.paper_planner, partial(r));
            check("Fig. 8", ctx.clone(), about("free bandwidth (MB/s)", "~4.9 MB/s", PAPER_FREE_MB_S, r.free_mb_s));
            check("Fig. 8", ctx.clone(), about("free share of media bandwidth", "~21% of 23 MB/s", PAPER_FREE_SHARE_OF_MEDIA, r.media_share));
            check("Fig. 8", ctx.clone(), at_least("scans per day", "over 47", PAPER_SCANS_PER_DAY, r.passes_per_day));
            check("Fig. 8", ctx.clone(), about("efficiency (free ÷ potential)", "about half", PAPER_EFFICIENCY, r.efficiency));
            check("Fig. 8", ctx, about("useful head utilisation with mining", "~24% (3% without)", PAPER_USEFUL_UTILISATION_WITH, r.useful_with_mining));
        }
    }

    // Fig. 9: the detailed runs, the paper's planner first.
    let mut fig9 = Vec::new();
    for p in detail_planners(c) {
        if let Some(d) = find(c.detail_scheduler, c.detail_mpl, p, 100.0).and_then(|o| o.detail.clone()) {
            fig9.push(d);
        }
    }
    if let Some(o) = find(c.detail_scheduler, c.detail_mpl, c.paper_planner, 100.0) {
        let r = &o.row;
        let ctx = format!("{}, MPL {}, {}{}", c.detail_scheduler, c.detail_mpl, c.paper_planner, partial(r));
        match r.last_5pct_time_share {
            Some(v) => check("Fig. 9", ctx.clone(), about("time share of the last 5% of the blocks", "~30%", PAPER_LAST_5PCT_TIME_SHARE, v)),
            None => notes.push(format!("Fig. 9: {ctx}: the pass did not finish, so the last 5% cannot be timed")),
        }
        let free_transfer_share = 1.0 - PAPER_EXTRA_SEEK_SHARE - PAPER_UNUSED_SHARE;
        check("Fig. 9", ctx.clone(), about("free transfer share of the potential", "~54% (the rest)", free_transfer_share, r.free_transfer_fraction));
        check("Fig. 9", ctx.clone(), about("extra seek share of the potential", "~18%", PAPER_EXTRA_SEEK_SHARE, r.extra_seek_fraction));
        check("Fig. 9", ctx, about("unused latency share of the potential", "~28%", PAPER_UNUSED_SHARE, r.unused_fraction));
    }

    // Fig. 10: sampling scans.
    let mut fig10 = Vec::new();
    for &p in &c.sample_planners {
        let full = find(c.detail_scheduler, c.detail_mpl, p, 100.0).map(|o| o.row.pass_efficiency);
        for &pct in &c.sample_percents {
            let Some(o) = find(c.detail_scheduler, c.detail_mpl, p, pct) else { continue };
            let r = &o.row;
            fig10.push(SampleRow {
                planner: p.to_string(),
                percent: pct,
                pass_s: r.pass_s,
                samples_per_day: r.passes_per_day,
                extrapolated: r.passes_per_day_extrapolated,
                efficiency: r.pass_efficiency,
                gain_over_full_scan: full.filter(|f| *f > 0.0).map(|f| r.pass_efficiency / f - 1.0),
            });
        }
    }
    let ctx10 = |p: PlannerKind, pct: f64| {
        let cut = find(c.detail_scheduler, c.detail_mpl, p, pct).map_or("", |o| partial(&o.row));
        format!("{}, MPL {}, {p}, any {pct}%{cut}", c.detail_scheduler, c.detail_mpl)
    };
    if let Some(r) = fig10.iter().find(|r| r.planner == c.paper_planner.to_string() && r.percent == 95.0) {
        if let Some(g) = r.gain_over_full_scan {
            check("Fig. 10", ctx10(c.paper_planner, 95.0), about("efficiency gain over a full scan", "~+40%", PAPER_SAMPLE_95_EFFICIENCY_GAIN, g));
        }
    }
    if let Some(r) = fig10.iter().find(|r| r.planner == c.paper_planner.to_string() && r.percent == 80.0) {
        check("Fig. 10", ctx10(c.paper_planner, 80.0), about("efficiency", "~90%", PAPER_SAMPLE_80_EFFICIENCY, r.efficiency));
        check("Fig. 10", ctx10(c.paper_planner, 80.0), at_least("samples per day", "90+", PAPER_SAMPLE_80_PER_DAY, r.samples_per_day));
    }

    // Beyond the paper: both planners on the same runs.
    let mut comparison = Vec::new();
    for (&s, &mpl) in c.compare_schedulers.iter().flat_map(|s| c.compare_mpls.iter().map(move |m| (s, m))) {
        let (Some(a), Some(b)) = (find(s, mpl, PlannerKind::SingleTrack, 100.0), find(s, mpl, c.ours_planner, 100.0)) else { continue };
        let (a, b) = (&a.row, &b.row);
        let repeated = find_run(s, mpl, c.ours_planner, 100.0, true).map(|o| &o.row);
        let unbalanced = find_key(RunKey { balance: false, ..RunKey::new(s, mpl, c.ours_planner, 100.0, false) }).map(|o| &o.row);
        let pass_bytes = capacity_bytes - capacity_bytes % c.block_bytes as f64;
        comparison.push(PlannerComparison {
            paper_repeated_share: a.pass_s.and_then(|p| share_of_potential(pass_bytes, p, a.potential_mb_s)),
            ours_repeated: repeated.and_then(|r| r.steady),
            ours_repeated_delayed: repeated.map_or(0, |r| r.delayed_foreground),
            scheduler: s.to_string(),
            mpl,
            paper_efficiency: a.efficiency,
            ours_efficiency: b.efficiency,
            ours_unbalanced_efficiency: unbalanced.filter(|u| u.balance != b.balance).map(|u| u.efficiency),
            paper_free_transfer: a.free_transfer_fraction,
            ours_free_transfer: b.free_transfer_fraction,
            paper_free_mb_s: a.free_mb_s,
            ours_free_mb_s: b.free_mb_s,
            paper_scans_per_day: a.passes_per_day,
            ours_scans_per_day: b.passes_per_day,
            delayed_foreground: a.delayed_foreground + b.delayed_foreground,
            complete: a.pass_s.is_some() && b.pass_s.is_some(),
        });
        let ctx = format!("{s}, MPL {mpl}, {}{}", c.ours_planner, partial(b));
        check("beyond the paper", ctx.clone(), bounded("share of the potential realised (ours)", "target ≥ 70%", TARGET_EFFICIENCY_OURS, f64::INFINITY, b.efficiency));
        check("beyond the paper", ctx, bounded("delayed foreground requests (both planners)", "must be 0", 0.0, 0.0, (a.delayed_foreground + b.delayed_foreground) as f64));
        if let Some(r) = repeated {
            let ctx = format!("{s}, MPL {mpl}, {}, repeated scan, {} passes in flight", c.ours_planner, c.steady_passes_in_flight);
            let share = r.steady.and_then(|x| x.share).unwrap_or(0.0);
            check("beyond the paper", ctx.clone(), bounded("share of the potential in complete passes (ours, steady state)", "target ≥ 70%", TARGET_EFFICIENCY_OURS, f64::INFINITY, share));
            check("beyond the paper", ctx, bounded("delayed foreground requests", "must be 0", 0.0, 0.0, r.delayed_foreground as f64));
        }
    }

    // Runs that coincide with the previous MPL's (e.g. FCFS once the disk is saturated: the
    // same requests served back to back in the same order, whatever the queue length).
    for &s in &c.schedulers {
        let rows: Vec<&MiningRun> = c.mpls.iter().filter_map(|&m| find(s, m, c.paper_planner, 100.0)).map(|o| &o.row).collect();
        let same: Vec<String> = rows
            .windows(2)
            .filter(|w| w[0].requests == w[1].requests && w[0].potential_mb_s == w[1].potential_mb_s && w[0].free_mb_s == w[1].free_mb_s)
            .map(|w| w[1].mpl.to_string())
            .collect();
        if !same.is_empty() {
            notes.push(format!(
                "{s}: the runs at MPL {} serve the same requests at the same instants as the MPL below them (the disk is saturated and the service order does not depend on the queue), so only the response time differs",
                same.join(", ")
            ));
        }
    }
    for o in outcomes.iter().flatten() {
        let r = &o.row;
        if r.hit_cap {
            notes.push(format!(
                "{} MPL {} {} {}%: stopped at the cap of {} foreground requests with {:.1}% of the pass done; its MB/s cover only the start of a pass (optimistic) and its passes per day are extrapolated",
                r.scheduler,
                r.mpl,
                r.planner,
                r.sample_percent,
                c.max_requests,
                100.0 * r.pass_done
            ));
        }
        if r.delayed_foreground > 0 {
            let plural = if r.delayed_foreground == 1 { "request" } else { "requests" };
            notes.push(format!("{} MPL {} {} {}%: {} foreground {plural} DELAYED by background work (not free)", r.scheduler, r.mpl, r.planner, r.sample_percent, r.delayed_foreground));
        }
    }

    Ok(FreeMiningReport {
        config: c.clone(),
        capacity_gb: capacity_bytes / 1e9,
        media_mb_s: media,
        runs: outcomes.into_iter().flatten().map(|o| o.row).collect(),
        failed_runs,
        fig9,
        fig10,
        comparison,
        checks,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::freeblock::Accounts;

    fn row(start_s: f64, potential_ns: u64, free_transfer_ns: u64, extra_seek_ns: u64, free_bytes: u64) -> TimelineRow {
        TimelineRow {
            start_s,
            accounts: Accounts { potential_ns, potential_bytes: potential_ns as f64, free_transfer_ns, extra_seek_ns, free_bytes, ..Accounts::default() },
        }
    }

    #[test]
    fn per_day_counts_whole_and_partial_passes() {
        assert_eq!(per_day(1800.0), 48.0);
        assert_eq!(per_day(0.0), 0.0);
        // Half the blocks in an hour: a pass every two hours.
        assert!((per_day_extrapolated(50, 100, 3600.0) - 12.0).abs() < 1e-12);
        assert_eq!(per_day_extrapolated(5, 0, 10.0), 0.0);
    }

    #[test]
    fn tail_share_times_the_last_blocks() {
        let points: Vec<ProgressPoint> = (1..=100).map(|p| ProgressPoint { pass: 0, time_ns: if p < 95 { p * 10 } else { 950 + (p - 95) * 100 }, fraction: p as f64 / 100.0 }).collect();
        // 95% at 950 ns, done at 1450 ns: the last 5% took 500 of 1450 ns.
        let share = tail_time_share(&points, 0, 0, 1450, 0.95).unwrap();
        assert!((share - 500.0 / 1450.0).abs() < 1e-12, "{share}");
        assert_eq!(tail_time_share(&points, 1, 0, 1450, 0.95), None);
        assert_eq!(tail_time_share(&points[..50], 0, 0, 1450, 0.95), None);
    }

    #[test]
    fn timeline_slices_split_the_potential() {
        let rows = [row(0.0, 100, 50, 20, 1_000_000), row(10.0, 100, 30, 30, 500_000), row(20.0, 200, 0, 0, 0)];
        let s = timeline_slices(&rows, 10.0, 25.0);
        assert_eq!(s.len(), 3);
        assert!((s[0].free_transfer - 0.5).abs() < 1e-12 && (s[0].extra_seek - 0.2).abs() < 1e-12 && (s[0].unused - 0.3).abs() < 1e-12);
        assert!((s[0].free_mb_s - 0.1).abs() < 1e-12);
        assert_eq!(s[2].end_s, 25.0);
        assert!((s[2].unused - 1.0).abs() < 1e-12);
        // Two slices of 20 s: the first holds buckets 0 and 1.
        let t = slice_timeline(&rows, 10.0, 40.0, 2);
        assert!((t[0].free_transfer - 0.4).abs() < 1e-12 && (t[0].extra_seek - 0.25).abs() < 1e-12, "{t:?}");
        assert!((t[0].free_mb_s - 1.5 / 20.0).abs() < 1e-12);
        assert!((t[1].unused - 1.0).abs() < 1e-12);
        assert!(slice_timeline(&rows, 10.0, 0.0, 10).is_empty());
    }

    #[test]
    fn checks_use_the_stated_tolerance() {
        assert!(about("x", "~30%", 0.30, 0.35).matches);
        assert!(!about("x", "~30%", 0.30, 0.37).matches);
        assert!(at_least("x", "over 47", 47.0, 400.0).matches);
        assert!(!at_least("x", "over 47", 47.0, 30.0).matches);
        assert!(bounded("x", "0", 0.0, 0.0, 0.0).matches);
    }

    #[test]
    fn steady_state_counts_only_complete_passes() {
        let pass = |start_s: u64, end_s: u64| PassRecord { start_ns: start_s * 1_000_000_000, end_ns: end_s * 1_000_000_000, blocks: 10 };
        // Passes end at 100, 300 and 500 s: one every 200 s; 1000 MB per pass at a potential of
        // 10 MB/s is half the potential.
        let s = steady_state(&[pass(0, 100), pass(50, 300), pass(100, 500)], 1e9, 10.0);
        assert_eq!((s.passes, s.interval_s), (3, Some(200.0)));
        assert!((s.share.unwrap() - 0.5).abs() < 1e-12);
        assert!((s.mean_pass_s.unwrap() - 250.0).abs() < 1e-9);
        // One pass has no interval, none has no mean either.
        let one = steady_state(&[pass(0, 100)], 1e9, 10.0);
        assert_eq!((one.interval_s, one.share), (None, None));
        assert_eq!(steady_state(&[], 1e9, 10.0).mean_pass_s, None);
    }

    #[test]
    fn media_bandwidth_of_the_atlas_is_near_the_papers() {
        let disk = Disk::new(library::get("atlas10k").unwrap().without_cache()).unwrap();
        let mb_s = media_mb_s(&disk);
        assert!(mb_s > 18.0 && mb_s < 30.0, "{mb_s}");
    }

    #[test]
    fn one_run_stands_for_every_scheduler_at_mpl_1() {
        let c = FreeMiningConfig { max_requests: 3000, ..FreeMiningConfig::default() };
        // Five schedulers at MPL 1 in the Fig. 8 grid: one simulation instead of five.
        assert_eq!(simulations(&c).len(), plan_runs(&c).len() - 4);
        assert!(simulations(&c).iter().all(|k| k.mpl != 1 || k.scheduler == SchedulerSpec::Fcfs));
        // What makes that right: the rows of two schedulers that do differ at MPL 5 are the same
        // at MPL 1, save the name.
        let row = |s: SchedulerSpec, mpl: u32| run_planned(&c, RunKey::new(s, mpl, c.paper_planner, 100.0, false)).expect("run").row;
        let (fcfs, sptf) = (row(SchedulerSpec::Fcfs, 1), row(SchedulerSpec::SptfSw { window_pct: 40.0 }, 1));
        assert_eq!(serde_json::to_value(MiningRun { scheduler: String::new(), ..fcfs }).unwrap(), serde_json::to_value(MiningRun { scheduler: String::new(), ..sptf }).unwrap());
        assert_ne!(row(SchedulerSpec::Fcfs, 5).response_mean_ms, row(SchedulerSpec::SptfSw { window_pct: 40.0 }, 5).response_mean_ms);
    }

    #[test]
    fn assembly_takes_one_outcome_per_simulation() {
        let c = FreeMiningConfig::quick();
        let e = assemble(&c, Vec::new()).unwrap_err().to_string();
        assert!(e.contains(&format!("0 run outcomes for {} simulations", simulations(&c).len())), "{e}");
        // A failed simulation is listed, under every run it stands for.
        let failed: Vec<RunResult> = simulations(&c).iter().map(|_| Err("no disk today".to_string())).collect();
        let report = assemble(&c, failed).expect("a report of failures");
        assert!(report.runs.is_empty());
        assert_eq!(report.failed_runs.len(), plan_runs(&c).len());
        assert!(report.failed_runs[0].ends_with("no disk today"), "{:?}", report.failed_runs);
    }

    #[test]
    fn each_run_is_planned_once() {
        let c = FreeMiningConfig { repeated_scans: true, ..FreeMiningConfig::default() };
        let keys = plan_runs(&c);
        // 40 grid runs; the comparison adds ours for FCFS and SPTF at MPL 10 and 20: one pass
        // with and without balancing, and repeated; the samples add 10 + 10 (both full scans at
        // FCFS MPL 20 are already there).
        assert_eq!(keys.len(), 40 + 4 + 4 + 4 + 10 + 10);
        assert_eq!(keys.iter().filter(|k| k.planner == c.ours_planner && !k.balance).count(), 4);
        assert_eq!(keys.iter().filter(|k| k.overlap).count(), 4);
        for (i, k) in keys.iter().enumerate() {
            assert!(!keys[i + 1..].contains(k));
        }
        // Without the repeated scans (the default), the same runs less those four.
        let default = plan_runs(&FreeMiningConfig::default());
        assert_eq!(default, keys.iter().copied().filter(|k| !k.overlap).collect::<Vec<_>>());
    }
}
