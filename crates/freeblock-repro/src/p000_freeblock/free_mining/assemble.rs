//! The report of paper 000 §6 from every run's outcome: Figs. 8–10, the planner comparison,
//! the comparisons with the paper and the notes — the same whether the runs ran on this
//! process's threads ([`free_mining`]) or anywhere else ([`assemble`]).

use freeblock::freeblock::{share_of_potential, PlannerKind, SteadyState};
use crate::paper_check::PaperCheck;
use freeblock::sched::SchedulerSpec;
use freeblock::Result;
use serde::Serialize;

use super::paper::*;
use freeblock::freeblock::media_mb_s;

use super::runs::{mining_disk, run_caught, MiningRun, RunOutcome, RunResult, ScanDetail};
use super::{dearest_first, detail_planners, plan_runs, simulations, stand_in, FreeMiningConfig, RunKey};

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

/// Marks a check's context when its run did not finish its pass.
fn partial(r: &MiningRun) -> &'static str {
    if r.pass_s.is_some() { "" } else { " (PARTIAL: pass not finished)" }
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
        return Err(freeblock::Error::Config {
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

