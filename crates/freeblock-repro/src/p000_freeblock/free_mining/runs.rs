//! One simulated run of paper 000 §6: OLTP in the foreground, one pass of a (sampling) scan in
//! the background on free bandwidth only; what it achieved ([`MiningRun`]) and, for the runs
//! Fig. 9 shows, the scan in detail ([`ScanDetail`]). A run's outcome is small and serialisable
//! so that it can come back from any process (a thread of the `freeblock` binary, a Dask worker).

use std::sync::Arc;

use freeblock::freeblock::{media_mb_s, steady_state, Freeblock, FreeblockConfig, FreeblockReport, ProgressPoint, SteadyState, TaskSpec, TimelineRow};
use freeblock::report::RunReport;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{OltpSpec, WorkloadSpec};
use freeblock::Result;
use freeblock_disk::{library, Disk};
use serde::{Deserialize, Serialize};

use super::{shows_detail, FreeMiningConfig, RunKey};

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

/// What one planned run hands to [`assemble`](mod@super::assemble): its row, and for the runs Fig. 9 shows, their
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

/// The disk of the reproduction: the built-in model with its cache off.
pub(super) fn mining_disk(c: &FreeMiningConfig) -> Result<Arc<Disk>> {
    Ok(library::media(&c.disk)?)
}

/// Runs one planned run (one of [`super::simulations`]) on its own: an error or a panic in the engine
/// comes back as the `Err` text, so that one failed run leaves the others' figures standing.
/// The same run gives the same outcome in any process, in any order.
pub fn run_one(c: &FreeMiningConfig, key: RunKey) -> RunResult {
    let disk = mining_disk(c).map_err(|e| e.to_string())?;
    let media = media_mb_s(&disk);
    run_caught(&disk, c, key, media)
}

pub(super) fn run_caught(disk: &Arc<Disk>, c: &FreeMiningConfig, key: RunKey, media: f64) -> RunResult {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| simulate(disk, c, key, media))) {
        Ok(Ok(o)) => Ok(o),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(format!(
            "panicked: {}",
            panic.downcast_ref::<String>().map(String::as_str).or_else(|| panic.downcast_ref::<&str>().copied()).unwrap_or("(no message)")
        )),
    }
}

fn simulate(disk: &Arc<Disk>, c: &FreeMiningConfig, key: RunKey, media: f64) -> Result<RunOutcome> {
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
    let freeblock = report.freeblock.clone().ok_or_else(|| freeblock::Error::Config { origin: "free-mining".into(), message: "the run has no freeblock report".into() })?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use freeblock::freeblock::Accounts;

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
}
