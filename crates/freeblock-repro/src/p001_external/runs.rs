//! The runs of paper 001: the drive ([`paper_drive`]), the knobs ([`ExternalReproConfig`]), the
//! runs in a fixed order ([`plan`]), one run ([`run_one`]) and one Fig. 7 error distribution
//! ([`prediction_errors`]), the whole sweep ([`external`]), and the look-ups the statements and
//! tables use ([`find`], [`fg_cost`], [`scheduler_ratios`]).

use std::sync::Arc;

use freeblock_disk::{library, Disk};
use serde::Serialize;

use freeblock::external::scheduler::{host_model, ExternalConfig, ExternalHost, HostModel, HostStats};
use freeblock::external::{AheadBreakdown, BlackBox, Effects, PickStats, ULTRA2_BUS_SECTOR_MS};
use freeblock::freeblock::{Freeblock, FreeblockConfig, PlannerKind, TaskSpec};
use crate::paper_check::PaperCheck;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{OltpSpec, RandomSpec, SizeDist, WorkloadSpec};
use freeblock::{Error, Result};

/// Paper 001's multiprogramming level.
pub const PAPER_MPL: u32 = 10;
/// Paper 001's think time between a task's requests, ms (§5.1).
pub const PAPER_THINK_MS: f64 = 30.0;
/// The think time of the runs that read §5.1's "ten requests active in the system at any given
/// point" literally: none, so all ten are always queued or in service.
pub const LITERAL_POOL_THINK_MS: f64 = 0.0;
/// The MPL of the runs that show what a fuller request pool does to the scheduler comparisons
/// (the paper's scheduler ratios are quoted at MPL 10; at 14 ours reach its free-bandwidth ratio).
pub const DEEPER_POOL_MPL: u32 = 14;

/// The held pick of the main runs, ms before the mechanism is predicted free (beyond the next
/// command's processing): the drive's overhead jitter (40 µs) and a prediction error's usual
/// size, with room to spare.
pub const DEFAULT_PICK_LEAD_MS: f64 = 0.2;

/// The drive of the reproduction: the library's Atlas 10K, cache off, on an Ultra2 bus.
///
/// # Errors
/// A broken library spec.
pub fn paper_drive() -> Result<Arc<Disk>> {
    let mut spec = library::get("atlas10k")?.without_cache();
    spec.controller.bus_sector_ms = ULTRA2_BUS_SECTOR_MS;
    Ok(Arc::new(Disk::new(spec)?))
}

/// Knobs of `freeblock repro external`.
#[derive(Debug, Clone, Serialize)]
pub struct ExternalReproConfig {
    /// Simulated seconds per run.
    pub seconds: f64,
    /// The conservatism values of Figs. 8 and 9, ms.
    pub conservatism_ms: Vec<f64>,
    /// Foreground requests per prediction-error run (Fig. 7).
    pub error_requests: u64,
    /// The host's model.
    pub model: HostModel,
    /// Seed of the workload and the drive's effects.
    pub seed: u64,
    /// Worker threads.
    pub threads: usize,
    /// The host's held pick in the main runs ([`ExternalConfig::pick_lead_ms`]); `None` picks
    /// as soon as a slot frees, as paper 001's host does.
    pub pick_lead_ms: Option<f64>,
}

impl Default for ExternalReproConfig {
    fn default() -> Self {
        Self { seconds: 300.0, conservatism_ms: vec![0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6], error_requests: 10_000, model: HostModel::Learned, seed: 42, threads: 2, pick_lead_ms: Some(DEFAULT_PICK_LEAD_MS) }
    }
}

impl ExternalReproConfig {
    /// A short run for tests and a first look: 5 s per run, three conservatism values.
    #[must_use]
    pub fn quick() -> Self {
        Self { seconds: 5.0, conservatism_ms: vec![0.0, 0.3, 0.6], error_requests: 1_000, ..Self::default() }
    }
}

/// How a run schedules.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The host through the black box, no background work.
    ExternalAlone,
    /// The host through the black box, with the scan (paper 001).
    External,
    /// Ours: the host with `combine`.
    ExternalCombine,
    /// Ours: the host learning its margin per seek distance, starting at the conservatism
    /// (`adaptive_margin`).
    ExternalAdaptive,
    /// The host with an exact model and no firmware effects, one free command per track
    /// (the paper's "simulation no track").
    IdealHost,
    /// The ideal host with no background work.
    IdealAlone,
    /// In the firmware, exact, the paper's single-track greedy (the paper's "simulation").
    Firmware,
    /// In the firmware with no background work.
    FirmwareAlone,
}

/// One run of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunKey {
    /// Foreground scheduler.
    pub scheduler: SchedulerSpec,
    /// How it schedules.
    pub mode: Mode,
    /// Conservatism, ms (host modes).
    pub conservatism_ms: f64,
    /// Commands at the drive.
    pub max_outstanding: u32,
    /// The host's held pick ([`ExternalConfig::pick_lead_ms`]); `None`: as soon as a slot frees.
    pub pick_lead_ms: Option<f64>,
    /// Foreground tasks (closed): [`PAPER_MPL`], or [`DEEPER_POOL_MPL`].
    pub mpl: u32,
    /// Think time between a task's requests, ms: [`PAPER_THINK_MS`], or
    /// [`LITERAL_POOL_THINK_MS`].
    pub think_ms: f64,
}

impl RunKey {
    /// Whether the run has the paper's foreground: [`PAPER_MPL`] tasks with
    /// [`PAPER_THINK_MS`] of think time.
    #[must_use]
    pub fn in_paper_pool(&self) -> bool {
        self.mpl == PAPER_MPL && self.think_ms == PAPER_THINK_MS
    }
}

/// What one run measured.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    /// The run.
    #[serde(flatten)]
    pub key: RunKey,
    /// Free bandwidth delivered to the scan (background and piggyback), MB/s.
    pub free_mb_s: f64,
    /// Of which by foreground transfers of wanted blocks, MB/s (0: the paper's scan counts
    /// only what free reads delivered).
    pub piggyback_mb_s: f64,
    /// Mean rotational latency per foreground request, ms: the potential free bandwidth.
    pub rotational_latency_ms: f64,
    /// Mean foreground response time, ms.
    pub response_ms: f64,
    /// Foreground requests served.
    pub requests: u64,
    /// Foreground completions later than predicted by more than half a revolution.
    pub late_by_a_turn: u64,
    /// Foreground commands carrying prepended free sectors.
    pub merged: u64,
    /// Free commands of their own.
    pub free_commands: u64,
    /// Revolutions lost to the drive's read-ahead.
    pub read_ahead_penalties: u64,
    /// Times the drive reordered its queue.
    pub reorders: u64,
    /// Foreground completions by what the host sent ahead of them, and how late they came:
    /// the breakdown of the foreground cost.
    pub by_ahead: AheadBreakdown,
    /// Free commands of their own that completed late (each delays the foreground behind it).
    pub free_late: u64,
    /// Plans predicted to make their foreground complete later than alone, and by how much in
    /// all, ns.
    pub planned_later: (u64, u64),
    /// How far ahead of the mechanism the foreground scheduler picked, and what it chose.
    pub picks: PickStats,
    /// Learned margins, with `adaptive_margin`: `(shortest distance, plans, ms)` per bucket.
    pub margins: Vec<(u32, u64, f64)>,
}

/// A prediction-error distribution (Fig. 7).
#[derive(Debug, Clone, Serialize)]
pub struct ErrorPdf {
    /// Request size, KB.
    pub size_kb: u32,
    /// Foreground completions measured.
    pub samples: usize,
    /// Share within ±50 µs.
    pub within_50us: f64,
    /// Share within ±150 µs.
    pub within_150us: f64,
    /// Share between half and one and a half revolutions late.
    pub one_turn_late: f64,
    /// Share more than 150 µs early.
    pub early: f64,
    /// `(bin centre µs, share)`, 25 µs bins from −1 ms to +1 ms, then one bin per revolution.
    pub bins: Vec<(f64, f64)>,
}

/// "Ours beyond the paper": how much of the gap between the external scheduler and the
/// in-firmware one at 0 ms (SPTF) a host technique recovers.
#[must_use]
pub fn recovered(runs: &[RunRow], mode: Mode, conservatism_ms: f64) -> Option<f64> {
    let sptf = SchedulerSpec::Sptf;
    let (plain, ours, fw) = (find(runs, sptf, Mode::External, conservatism_ms)?, find(runs, sptf, mode, conservatism_ms)?, find(runs, sptf, Mode::Firmware, 0.0)?);
    let gap = fw.free_mb_s - plain.free_mb_s;
    (gap > 0.0).then(|| (ours.free_mb_s - plain.free_mb_s) / gap)
}

/// The whole reproduction.
#[derive(Debug, Clone, Serialize)]
pub struct ExternalReport {
    /// Its knobs.
    pub config: ExternalReproConfig,
    /// The host's model: how it was obtained.
    pub model: String,
    /// The disk's media bandwidth, MB/s.
    pub media_mb_s: f64,
    /// Fig. 7.
    pub errors: Vec<ErrorPdf>,
    /// Every run (Figs. 8, 9 and ours).
    pub runs: Vec<RunRow>,
    /// The paper's numbers beside ours.
    pub checks: Vec<PaperCheck>,
}

/// The three foreground schedulers of Fig. 8.
#[must_use]
pub fn schedulers() -> [SchedulerSpec; 3] {
    [SchedulerSpec::Sstf, SchedulerSpec::Sptf, SchedulerSpec::SptfSw { window_pct: 60.0 }]
}

/// The runs of the reproduction, in a fixed order.
#[must_use]
pub fn plan(c: &ExternalReproConfig) -> Vec<RunKey> {
    let lead = c.pick_lead_ms;
    let key = |scheduler, mode, conservatism_ms, max_outstanding| RunKey { scheduler, mode, conservatism_ms, max_outstanding, pick_lead_ms: lead, mpl: PAPER_MPL, think_ms: PAPER_THINK_MS };
    let firmware = |scheduler, mode| RunKey { scheduler, mode, conservatism_ms: 0.0, max_outstanding: 2, pick_lead_ms: None, mpl: PAPER_MPL, think_ms: PAPER_THINK_MS };
    let mut runs = Vec::new();
    for s in schedulers() {
        runs.push(key(s, Mode::ExternalAlone, 0.0, 2));
        runs.push(firmware(s, Mode::FirmwareAlone));
        runs.push(firmware(s, Mode::Firmware));
        for &m in &c.conservatism_ms {
            runs.push(key(s, Mode::External, m, 2));
        }
        // Paper 001's host, which picks as soon as a slot frees: its foreground "cost" (see
        // `PickStats`).
        if lead.is_some() {
            runs.push(RunKey { pick_lead_ms: None, ..key(s, Mode::ExternalAlone, 0.0, 2) });
            for m in [0.3, 0.4] {
                runs.push(RunKey { pick_lead_ms: None, ..key(s, Mode::External, m, 2) });
            }
        }
    }
    runs.push(key(SchedulerSpec::Sptf, Mode::IdealAlone, 0.0, 2));
    for &m in &c.conservatism_ms {
        // Fig. 9's in-firmware line at the same margin (0 ms is above).
        if m > 0.0 {
            runs.push(RunKey { conservatism_ms: m, ..firmware(SchedulerSpec::Sptf, Mode::Firmware) });
        }
        runs.push(key(SchedulerSpec::Sptf, Mode::IdealHost, m, 2));
        runs.push(key(SchedulerSpec::Sptf, Mode::ExternalCombine, m, 2));
        runs.push(key(SchedulerSpec::Sptf, Mode::ExternalAdaptive, m, 2));
    }
    // The scheduler comparisons with a fuller request pool: more tasks, or the paper's ten with
    // no think time. The literal reading also runs at the margin the statements are checked at.
    let checked = super::paper::statement_margin(c);
    for (mpl, think_ms) in [(DEEPER_POOL_MPL, PAPER_THINK_MS), (PAPER_MPL, LITERAL_POOL_THINK_MS)] {
        for s in schedulers() {
            runs.push(RunKey { mpl, think_ms, ..key(s, Mode::ExternalAlone, 0.0, 2) });
            runs.push(RunKey { mpl, think_ms, ..key(s, Mode::External, 0.4, 2) });
            if think_ms == LITERAL_POOL_THINK_MS && (checked - 0.4).abs() > 1e-9 {
                runs.push(RunKey { mpl, think_ms, ..key(s, Mode::External, checked, 2) });
            }
            runs.push(RunKey { mpl, think_ms, ..firmware(s, Mode::FirmwareAlone) });
        }
    }
    // A deeper queue at a drive that reorders: the host sends as soon as a slot frees.
    for depth in [4, 8] {
        runs.push(RunKey { pick_lead_ms: None, ..key(SchedulerSpec::Sptf, Mode::ExternalAlone, 0.0, depth) });
        runs.push(RunKey { pick_lead_ms: None, ..key(SchedulerSpec::Sptf, Mode::External, 0.4, depth) });
    }
    runs
}

/// The whole-disk scan; `conservatism_ms` is the firmware planner's margin (the host has its
/// own). Only free reads deliver blocks (paper 001 §4.3: "sectors that have not yet been
/// touched by freeblock requests"), not foreground transfers of wanted blocks.
fn scan_config(planner: PlannerKind, conservatism_ms: f64) -> FreeblockConfig {
    let scan = TaskSpec::Scan { block_bytes: 4096, passes: 0, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: None, passes_in_flight: None };
    FreeblockConfig { planner, balance: Some(false), stop_when_done: false, tasks: vec![scan], conservatism_ms, piggyback: false, ..FreeblockConfig::default() }
}

/// Runs one key on `truth`, the host planning with `model`.
///
/// # Errors
/// Any setup or run error.
pub fn run_one(truth: &Arc<Disk>, model: &Arc<Disk>, c: &ExternalReproConfig, key: RunKey) -> Result<RunRow> {
    let workload = WorkloadSpec::Oltp(OltpSpec { think_time_ms: key.think_ms, ..OltpSpec::default() }).build(truth.capacity(), c.seed)?;
    let sim = SimConfig { scheduler: key.scheduler, mpl: key.mpl, think_ms: key.think_ms, max_time_s: c.seconds, ..SimConfig::default() };
    let background = !matches!(key.mode, Mode::ExternalAlone | Mode::FirmwareAlone | Mode::IdealAlone);
    let firmware = matches!(key.mode, Mode::Firmware | Mode::FirmwareAlone);
    let ideal = matches!(key.mode, Mode::IdealHost | Mode::IdealAlone);
    let disk = if firmware || ideal { truth } else { model };
    let mut simulation = Simulation::new(Arc::clone(disk), workload, sim);
    if background {
        simulation = simulation.with_freeblock(Freeblock::new(Arc::clone(disk), scan_config(PlannerKind::SingleTrack, if firmware { key.conservatism_ms } else { 0.0 }))?);
    }
    if !firmware {
        let config = ExternalConfig {
            conservatism_ms: key.conservatism_ms,
            max_outstanding: key.max_outstanding,
            combine: key.mode == Mode::ExternalCombine,
            adaptive_margin: key.mode == Mode::ExternalAdaptive,
            pick_lead_ms: key.pick_lead_ms,
            model: if ideal { HostModel::Truth } else { c.model.clone() },
            effects: if ideal { Effects::none() } else { Effects::default() },
            ..ExternalConfig::default()
        };
        let drive = BlackBox::new(Arc::clone(truth), config.effects.clone(), c.seed);
        simulation = simulation.with_external(ExternalHost::new(drive, Arc::clone(disk), config)?);
    }
    let out = simulation.run_outcome(None)?;
    let stats = out.external.as_ref().map(ExternalHost::stats).unwrap_or_default();
    let fb = out.report.freeblock.as_ref();
    let usage = &out.report.head_usage;
    Ok(RunRow {
        key,
        free_mb_s: fb.map_or(0.0, |f| f.free_mb_s),
        piggyback_mb_s: fb.map_or(0.0, |f| f.piggyback_mb_s),
        rotational_latency_ms: usage.rotational_latency_ns as f64 / usage.accesses.max(1) as f64 / 1e6,
        response_ms: out.report.response.mean_ms,
        requests: out.report.requests,
        late_by_a_turn: stats.late_by_a_turn,
        merged: stats.merged,
        free_commands: stats.free_commands,
        read_ahead_penalties: stats.firmware.read_ahead_penalties,
        reorders: stats.firmware.reorders,
        by_ahead: stats.by_ahead,
        free_late: stats.free_late,
        planned_later: stats.planned_later,
        picks: stats.picks,
        margins: stats.margins,
    })
}

/// Fig. 7: prediction errors of random reads of `size_kb`, SPTF, MPL 10, no think time, no
/// background work.
///
/// # Errors
/// Any setup or run error.
pub fn prediction_errors(truth: &Arc<Disk>, model: &Arc<Disk>, c: &ExternalReproConfig, size_kb: u32) -> Result<ErrorPdf> {
    let spec = RandomSpec { count: Some(c.error_requests), size: SizeDist::Fixed { sectors: size_kb * 2 }, read_fraction: 1.0, ..RandomSpec::default() };
    let workload = WorkloadSpec::Random(spec).build(truth.capacity(), c.seed)?;
    let sim = SimConfig { scheduler: SchedulerSpec::Sptf, mpl: 10, ..SimConfig::default() };
    let config = ExternalConfig { model: c.model.clone(), ..ExternalConfig::default() };
    let drive = BlackBox::new(Arc::clone(truth), config.effects.clone(), c.seed);
    let host = ExternalHost::new(drive, Arc::clone(model), config)?.keeping_errors();
    let out = Simulation::new(Arc::clone(model), workload, sim).with_external(host).run_outcome(None)?;
    let stats: HostStats = out.external.as_ref().map(ExternalHost::stats).unwrap_or_default();
    Ok(error_pdf(size_kb, &stats.errors_ns, truth.revolution_ns()))
}

/// The distribution of `errors` (actual − predicted, ns).
#[must_use]
pub fn error_pdf(size_kb: u32, errors: &[i64], revolution_ns: u64) -> ErrorPdf {
    let n = errors.len().max(1) as f64;
    let share = |f: &dyn Fn(i64) -> bool| errors.iter().filter(|&&e| f(e)).count() as f64 / n;
    let rev = revolution_ns as i64;
    let mut bins: Vec<(f64, f64)> = (-40..40).map(|i| (f64::from(i) * 25.0 + 12.5, 0.0)).collect();
    let mut turns: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
    for &e in errors {
        if e.abs() < 1_000_000 {
            let i = ((e.div_euclid(25_000)) + 40) as usize;
            bins[i].1 += 1.0 / n;
        } else {
            *turns.entry((e as f64 / rev as f64).round() as i64).or_default() += 1.0 / n;
        }
    }
    bins.extend(turns.into_iter().map(|(t, s)| ((t * rev) as f64 / 1e3, s)));
    bins.sort_by(|a, b| a.0.total_cmp(&b.0));
    ErrorPdf {
        size_kb,
        samples: errors.len(),
        within_50us: share(&|e| e.abs() <= 50_000),
        within_150us: share(&|e| e.abs() <= 150_000),
        one_turn_late: share(&|e| e > rev / 2 && e < rev * 3 / 2),
        early: share(&|e| e < -150_000),
        bins,
    }
}

/// Runs the whole reproduction. `progress(done, total)` after each run.
///
/// # Errors
/// Characterisation or any run's error.
pub fn external(c: &ExternalReproConfig, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<ExternalReport> {
    let truth = paper_drive()?;
    let host_config = ExternalConfig { model: c.model.clone(), ..ExternalConfig::default() };
    let model = host_model(&truth, &host_config, c.seed)?;
    let model_name = match c.model {
        HostModel::Learned => "learned: characterised through the black box (effects on), as `freeblock characterize` does".to_string(),
        HostModel::Truth => "the hidden truth (no characterisation)".to_string(),
    };
    let keys = plan(c);
    let total = keys.len() + 2;
    let jobs: Vec<Option<RunKey>> = [None, None].into_iter().chain(keys.iter().copied().map(Some)).collect();
    enum Out {
        Pdf(ErrorPdf),
        Row(Box<RunRow>),
    }
    let results = crate::parallel::map_in_order(
        &(0..jobs.len()).collect::<Vec<_>>(),
        c.threads,
        |&i| -> Result<Out> {
            match jobs[i] {
                None => prediction_errors(&truth, &model, c, if i == 0 { 4 } else { 40 }).map(Out::Pdf),
                Some(key) => run_one(&truth, &model, c, key).map(|r| Out::Row(Box::new(r))),
            }
        },
        |n| progress(n, total),
    );
    let mut errors = Vec::new();
    let mut runs = Vec::new();
    for r in results {
        match r? {
            Out::Pdf(p) => errors.push(p),
            Out::Row(r) => runs.push(*r),
        }
    }
    let media_mb_s = freeblock::freeblock::bandwidth::media_mb_s(&truth);
    let checks = super::paper::checks(c, &errors, &runs, media_mb_s);
    Ok(ExternalReport { config: c.clone(), model: model_name, media_mb_s, errors, runs, checks })
}

/// The run of `scheduler` in `mode` at `conservatism_ms` with two commands outstanding and the
/// paper's MPL, with the main runs' pick (the first such run in [`plan`]'s order).
#[must_use]
pub fn find(runs: &[RunRow], scheduler: SchedulerSpec, mode: Mode, conservatism_ms: f64) -> Option<&RunRow> {
    find_at(runs, scheduler, mode, conservatism_ms, PAPER_MPL, PAPER_THINK_MS)
}

/// As [`find`], at `mpl` foreground tasks thinking `think_ms` between requests.
#[must_use]
pub fn find_at(runs: &[RunRow], scheduler: SchedulerSpec, mode: Mode, conservatism_ms: f64, mpl: u32, think_ms: f64) -> Option<&RunRow> {
    runs.iter().find(|r| r.key.scheduler == scheduler && r.key.mode == mode && r.key.max_outstanding == 2 && r.key.mpl == mpl && r.key.think_ms == think_ms && (r.key.conservatism_ms - conservatism_ms).abs() < 1e-9)
}

/// Foreground cost of a run: its mean response time over the same scheduler's without
/// background work, less one.
#[must_use]
pub fn fg_cost(runs: &[RunRow], row: &RunRow) -> Option<f64> {
    let alone_mode = match row.key.mode {
        Mode::Firmware | Mode::FirmwareAlone => Mode::FirmwareAlone,
        Mode::IdealHost | Mode::IdealAlone => Mode::IdealAlone,
        _ => Mode::ExternalAlone,
    };
    let alone = runs.iter().find(|r| r.key.scheduler == row.key.scheduler && r.key.mode == alone_mode && r.key.max_outstanding == row.key.max_outstanding && r.key.pick_lead_ms == row.key.pick_lead_ms && r.key.mpl == row.key.mpl && r.key.think_ms == row.key.think_ms)?;
    (alone.response_ms > 0.0).then(|| row.response_ms / alone.response_ms - 1.0)
}

/// The scheduler comparisons of Fig. 8 at `mpl` tasks thinking `think_ms`, and what drives them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SchedulerRatios {
    /// Foreground tasks.
    pub mpl: u32,
    /// Their think time between requests, ms.
    pub think_ms: f64,
    /// Mean rotational latency per request, in the firmware without background work, ms:
    /// SSTF, SPTF, SPTF-SW60% (the potential free bandwidth each leaves).
    pub latency_ms: [f64; 3],
    /// SSTF's rotational latency over SPTF's.
    pub latency_ratio: f64,
    /// SSTF's free bandwidth over SPTF's, from the host at 0.4 ms.
    pub free_ratio: f64,
    /// SSTF's response over SPTF's, less one (the host alone).
    pub sstf_penalty: f64,
    /// SPTF-SW60%'s free bandwidth over SSTF's.
    pub sw60_of_sstf: f64,
    /// SPTF-SW60%'s response over SPTF's, less one.
    pub sw60_penalty: f64,
}

/// [`SchedulerRatios`] at `mpl` tasks thinking `think_ms`, when every run it needs is there.
#[must_use]
pub fn scheduler_ratios(runs: &[RunRow], mpl: u32, think_ms: f64) -> Option<SchedulerRatios> {
    let [sstf, sptf, sw] = schedulers();
    let latency = |s| find_at(runs, s, Mode::FirmwareAlone, 0.0, mpl, think_ms).map(|r| r.rotational_latency_ms);
    let free = |s| find_at(runs, s, Mode::External, 0.4, mpl, think_ms).map(|r| r.free_mb_s);
    let response = |s| find_at(runs, s, Mode::ExternalAlone, 0.0, mpl, think_ms).map(|r| r.response_ms);
    let latency_ms = [latency(sstf)?, latency(sptf)?, latency(sw)?];
    Some(SchedulerRatios {
        mpl,
        think_ms,
        latency_ms,
        latency_ratio: latency_ms[0] / latency_ms[1].max(1e-9),
        free_ratio: free(sstf)? / free(sptf)?.max(1e-9),
        sstf_penalty: response(sstf)? / response(sptf)? - 1.0,
        sw60_of_sstf: free(sw)? / free(sstf)?.max(1e-9),
        sw60_penalty: response(sw)? / response(sptf)? - 1.0,
    })
}

/// Refuses a configuration that cannot run.
///
/// # Errors
/// [`Error::Config`] naming the knob.
pub fn validate(c: &ExternalReproConfig) -> Result<()> {
    let bad = |origin: &str, message: String| Err(Error::Config { origin: origin.into(), message });
    if !(c.seconds.is_finite() && c.seconds > 0.0 && c.seconds <= 86_400.0) {
        return bad("--seconds", format!("must be from 0 to 86400 simulated seconds, not {}", c.seconds));
    }
    if c.conservatism_ms.is_empty() || c.conservatism_ms.iter().any(|m| !(m.is_finite() && (0.0..=10.0).contains(m))) {
        return bad("--conservatism", "needs one or more values from 0 to 10 ms".into());
    }
    if c.error_requests == 0 {
        return bad("--error-requests", "must be at least 1".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_pdf_bins_and_shares() {
        let rev = 6_000_000;
        let errors = [0, 10_000, -40_000, 120_000, -200_000, 6_010_000];
        let p = error_pdf(4, &errors, rev);
        assert!((p.within_50us - 3.0 / 6.0).abs() < 1e-12);
        assert!((p.within_150us - 4.0 / 6.0).abs() < 1e-12);
        assert!((p.one_turn_late - 1.0 / 6.0).abs() < 1e-12);
        assert!((p.early - 1.0 / 6.0).abs() < 1e-12);
        let total: f64 = p.bins.iter().map(|b| b.1).sum();
        assert!((total - 1.0).abs() < 1e-9);
    }

    #[test]
    fn both_readings_of_the_foreground_are_run_at_the_checked_margin() {
        for c in [ExternalReproConfig::quick(), ExternalReproConfig::default()] {
            let m = super::super::paper::statement_margin(&c);
            let plan = plan(&c);
            for s in schedulers() {
                for think_ms in [PAPER_THINK_MS, LITERAL_POOL_THINK_MS] {
                    let found = plan.iter().any(|k| k.scheduler == s && k.mode == Mode::External && k.mpl == PAPER_MPL && k.think_ms == think_ms && (k.conservatism_ms - m).abs() < 1e-9);
                    assert!(found, "{s} at {m} ms, {think_ms} ms think is not run");
                }
            }
        }
    }

    #[test]
    fn the_drive_is_the_atlas_on_a_fast_bus() {
        let d = paper_drive().unwrap();
        assert_eq!(d.spec().name, "atlas10k");
        assert!(d.bus_ns(1) < 10_000);
    }

    #[test]
    fn a_tiny_sweep_measures_free_bandwidth_and_its_cost() {
        let truth = paper_drive().unwrap();
        let c = ExternalReproConfig { seconds: 1.0, model: HostModel::Truth, ..ExternalReproConfig::quick() };
        let key = |mode, m| RunKey { scheduler: SchedulerSpec::Sptf, mode, conservatism_ms: m, max_outstanding: 2, pick_lead_ms: None, mpl: PAPER_MPL, think_ms: PAPER_THINK_MS };
        let alone = run_one(&truth, &truth, &c, key(Mode::ExternalAlone, 0.0)).unwrap();
        let with = run_one(&truth, &truth, &c, key(Mode::External, 0.6)).unwrap();
        assert_eq!(alone.free_mb_s, 0.0);
        assert!(with.free_mb_s > 0.0 && with.merged + with.free_commands > 0, "{with:?}");
        assert!(alone.requests > 100 && with.requests > 100);
        // The firmware at a margin reads less, and its foreground is still untouched.
        let fw = |m| run_one(&truth, &truth, &c, RunKey { mode: Mode::Firmware, ..key(Mode::Firmware, m) }).unwrap();
        let fw_alone = run_one(&truth, &truth, &c, key(Mode::FirmwareAlone, 0.0)).unwrap();
        let (exact, margin) = (fw(0.0), fw(0.6));
        assert!(margin.free_mb_s > 0.0 && margin.free_mb_s < exact.free_mb_s, "{} vs {}", margin.free_mb_s, exact.free_mb_s);
        assert_eq!((exact.response_ms, margin.response_ms), (fw_alone.response_ms, fw_alone.response_ms));
        let e = Freeblock::new(Arc::clone(&truth), FreeblockConfig { conservatism_ms: -0.1, ..FreeblockConfig::default() }).err().unwrap();
        assert!(e.to_string().contains("conservatism_ms"), "{e}");
        // Picking as a slot frees commits a whole service time ahead; a held pick, just before.
        let held = run_one(&truth, &truth, &c, RunKey { pick_lead_ms: Some(0.2), ..key(Mode::ExternalAlone, 0.0) }).unwrap();
        assert!(alone.picks.mean_lead_ms() > 2.0 && held.picks.mean_lead_ms() < 0.5, "{:?} {:?}", alone.picks, held.picks);
        assert!(held.picks.mean_positioning_ms() < alone.picks.mean_positioning_ms(), "a fuller pool positions shorter");
        // Same inputs, same run.
        let again = run_one(&truth, &truth, &c, key(Mode::External, 0.6)).unwrap();
        assert_eq!((again.free_mb_s, again.response_ms), (with.free_mb_s, with.response_ms));
    }
}
