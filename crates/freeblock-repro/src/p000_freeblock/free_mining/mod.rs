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
//! ([`freeblock::freeblock::FreeblockConfig::stop_when_done`]), so "free MB/s" is the average over a
//! whole pass and "scans per day" is `86400 / pass time`. A run that reaches the request cap first
//! is reported as such: its bandwidth covers only the start of a pass (the easy part) and its
//! scans per day are extrapolated from the bytes delivered.
//!
//! The paper's figures are the `PAPER_*` constants of [`paper`], each with the sentence it comes
//! from; every number of ours is computed by a simulation.
//!
//! ```text
//!  Options ─► config ─► plan: simulations (one per RunKey, MPL 1 shared), dearest first
//!                         │
//!            run_one ◄────┘  on this process's threads (run), or on Dask workers (the Python
//!               │            package's `freeblock`: plan / run_one / finish)
//!               ▼
//!            RunOutcome ×N ─► assemble ─► FreeMiningReport ─► report: text or JSON, CSV,
//!                                          (Figs. 8–10,        SVG plots, statements
//!                                           checks, notes)
//! ```
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the settings ([`FreeMiningConfig`]), the runs ([`RunKey`], [`simulations`]), the entry points |
//! | [`paper`] | the paper's figures and the tolerances ours is held to |
//! | [`runs`] | one simulated run and what it achieved |
//! | [`assemble`](mod@assemble) | the report from every run's outcome |
//! | `report.rs` | its text, CSV, plots and statements |

use std::time::Instant;

use freeblock::freeblock::PlannerKind;
use freeblock::sched::SchedulerSpec;
use serde::{Deserialize, Serialize};

use crate::progress::Runs;
use crate::{Options, Outcome, Result};

pub mod assemble;
pub mod paper;
mod report;
pub mod runs;

pub use assemble::{assemble, free_mining, FigureCheck, FreeMiningReport, PlannerComparison, SampleRow};
pub use runs::{run_one, MiningRun, RunOutcome, RunResult, ScanDetail, SplitSlice};

/// `freeblock repro free-mining`: every run on `options.threads` threads of this process (default
/// 2), then the report. (The Python package's `freeblock` command runs them as Dask tasks
/// instead: [`plan`], [`run_one`], [`finish`].)
///
/// # Errors
/// Setup errors; a file that cannot be written. Runs that fail are listed in the output, which
/// then comes back as [`crate::reproduction::Incomplete`].
pub fn run(options: &Options) -> Result<Outcome> {
    let config = config(options);
    let pb = Runs::new("free-mining", 1, options.quiet || options.json);
    let started = Instant::now();
    let report = free_mining(&config, &|done, total| pb.set(done, total))?;
    pb.finish();
    report::outcome(options, &report, &format!("{} threads", config.threads), started.elapsed().as_secs_f64())
}

/// The reproduction `options` ask for: the full one or `quick`, with their cap and thread count.
#[must_use]
pub fn config(options: &Options) -> FreeMiningConfig {
    let mut config = if options.quick { FreeMiningConfig::quick() } else { FreeMiningConfig::default() };
    if let Some(cap) = options.max_requests {
        config.max_requests = cap;
    }
    if let Some(t) = options.threads {
        config.threads = t.max(1);
    }
    config.repeated_scans |= options.repeated_scans;
    config
}

/// The reproduction as its simulations, to run anywhere ([`run_one`] each, in any process and
/// order), then [`finish`].
#[derive(Debug, Clone)]
pub struct Plan {
    /// The settings: the argument of [`run_one`].
    pub config: FreeMiningConfig,
    /// Every simulation ([`simulations`]), in the order [`finish`] takes their outcomes.
    pub runs: Vec<RunKey>,
    /// The order to start them in (indexes into `runs`, dearest first).
    pub start_order: Vec<usize>,
}

/// The simulations of the reproduction `options` ask for.
#[must_use]
pub fn plan(options: &Options) -> Plan {
    let config = config(options);
    let runs = simulations(&config);
    Plan { start_order: dearest_first(&runs), runs, config }
}

/// The report of `options`' reproduction from `outcomes` (one per simulation of its [`plan`], in
/// that order), exactly as [`run`] gives it: the same text or JSON, files and statements.
/// `ran_on` ("2 Dask workers") and `wall_s` go into the closing line on standard error.
///
/// # Errors
/// Outcomes that are not one per simulation; a file that cannot be written; failed runs, as for
/// [`run`].
pub fn finish(options: &Options, outcomes: Vec<RunResult>, ran_on: &str, wall_s: f64) -> Result<Outcome> {
    let report = assemble(&config(options), outcomes)?;
    report::outcome(options, &report, ran_on, wall_s)
}

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
/// order. What [`free_mining`] runs, and what [`assemble()`] takes the outcomes of.
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

/// Whether Fig. 9 shows `key`'s run: the detailed scheduler and MPL, one full pass, the
/// planner's default balancing, and the paper's planner or ours.
#[must_use]
pub fn shows_detail(c: &FreeMiningConfig, key: &RunKey) -> bool {
    detail_planners(c).contains(&key.planner) && *key == RunKey::new(c.detail_scheduler, c.detail_mpl, key.planner, 100.0, false)
}

/// Fig. 9's planners: the paper's, then ours (or, when they are the same, the single-track greedy).
pub(super) fn detail_planners(c: &FreeMiningConfig) -> [PlannerKind; 2] {
    [c.paper_planner, if c.paper_planner == c.ours_planner { PlannerKind::SingleTrack } else { c.ours_planner }]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_stands_for_every_scheduler_at_mpl_1() {
        let c = FreeMiningConfig { max_requests: 3000, ..FreeMiningConfig::default() };
        // Five schedulers at MPL 1 in the Fig. 8 grid: one simulation instead of five.
        assert_eq!(simulations(&c).len(), plan_runs(&c).len() - 4);
        assert!(simulations(&c).iter().all(|k| k.mpl != 1 || k.scheduler == SchedulerSpec::Fcfs));
        // What makes that right: the rows of two schedulers that do differ at MPL 5 are the same
        // at MPL 1, save the name.
        let row = |s: SchedulerSpec, mpl: u32| run_one(&c, RunKey::new(s, mpl, c.paper_planner, 100.0, false)).expect("run").row;
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
