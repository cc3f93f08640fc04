//! `freeblock demo`: the quick start, in two parts. First where the Atlas 10K's head time goes
//! under five foreground schedulers (paper 000 §3's point: the rotational latency is the free
//! bandwidth to be had); then OLTP with and without a background whole-disk scan on free
//! bandwidth only (§6's point: the foreground is served exactly as without it).
//!
//! ```text
//!  head_usage_part: 5 schedulers × random 4 KB, MPL 20 ─► table + head-usage.svg
//!  free_scan_part:  OLTP + scan  ┐ same requests,  ─► response times side by side, free MB/s,
//!                   OLTP alone   ┘ same instants?     scans per day
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use freeblock::freeblock::{media_mb_s, Freeblock, FreeblockConfig, PlannerKind, TaskSpec};
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{OltpSpec, RandomSpec, WorkloadSpec};
use freeblock_disk::library;
use indicatif::{ProgressBar, ProgressStyle};

use super::free_mining::runs::{per_day, per_day_extrapolated};
use crate::plot::{stacked_bars, StackedBar};
use crate::progress::Runs;
use crate::table::{pct, Table};
use crate::{Outcome, Result, Statement};

/// What the demo runs.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Folder for the plot.
    pub out: PathBuf,
    /// Requests per scheduler in the first part.
    pub requests: u64,
    /// Second part: most foreground OLTP requests (the run ends when the scan does, after about
    /// 200000; a smaller cap ends it early and extrapolates scans per day).
    pub scan_requests: u64,
}

/// The first part: head usage per scheduler on the Atlas 10K (cache off, 20 outstanding), and
/// its plot `head-usage.svg` under `options.out`. Shows a progress bar.
///
/// # Errors
/// Setup errors; a plot that cannot be written.
pub fn head_usage_part(options: &DemoOptions) -> Result<Outcome> {
    // The paper-000 setting: media behaviour only, so the on-disk cache is off.
    let disk = library::media("atlas10k")?;
    let mut s = String::new();
    writeln!(s, "freeblock demo: {} random 4 KB requests (2:1 reads) per scheduler on the {}, 20 outstanding, cache off\n", options.requests, disk.spec().description)?;
    let scheds = [SchedulerSpec::Fcfs, SchedulerSpec::Clook, SchedulerSpec::Sstf, SchedulerSpec::Sptf, SchedulerSpec::SptfSw { window_pct: 40.0 }];
    let pb = Runs::new("demo", scheds.len() as u64, false);
    let mut t = Table::new(["scheduler", "seek", "rot. latency", "transfer", "overhead", "mean response ms", "p99 ms"]);
    let mut bars = Vec::new();
    for sched in scheds {
        let w = WorkloadSpec::Random(RandomSpec { count: Some(options.requests), ..RandomSpec::default() }).build(disk.capacity(), 42)?;
        let r = Simulation::new(Arc::clone(&disk), w, SimConfig { scheduler: sched, mpl: 20, ..SimConfig::default() }).run(None)?;
        let f = r.head_usage_fractions;
        t.row([sched.to_string(), pct(f.seek), pct(f.rotational_latency), pct(f.transfer), pct(f.overhead), format!("{:.2}", r.response.mean_ms), format!("{:.2}", r.response.p99_ms)]);
        bars.push(StackedBar::new(sched.to_string(), vec![f.seek, f.rotational_latency, f.transfer, f.overhead]));
        pb.inc();
    }
    pb.finish();
    s.push_str(&t.render());
    writeln!(s, "\nThe rotational-latency share is the potential free bandwidth freeblock scheduling can use.")?;
    let path = options.out.join("head-usage.svg");
    stacked_bars(&path, "Atlas 10K head usage per scheduler (20 outstanding)", "% of disk head time", &["seek", "rotational latency", "transfer", "overhead"], &bars)?;
    writeln!(s, "plot written to {}", path.display())?;
    Ok(Outcome { output: s, statements: Vec::new(), files: vec![path] })
}

/// The second part: OLTP on the Atlas 10K with and without a background whole-disk scan; the
/// foreground is the same, the scan's bandwidth is free. The run with the scan ends when the scan
/// does (or at `options.scan_requests`); the run without it serves exactly as many requests, so
/// the two can be compared request for request. Shows a spinner. Its statement: the foreground
/// is identical with and without the scan.
///
/// # Errors
/// Setup errors.
pub fn free_scan_part(options: &DemoOptions) -> Result<Outcome> {
    let max_requests = options.scan_requests;
    let disk = library::media("atlas10k")?;
    let (scheduler, mpl, think_ms) = (SchedulerSpec::Fcfs, 10, 30.0);
    let workload = || WorkloadSpec::Oltp(OltpSpec { think_time_ms: think_ms, ..OltpSpec::default() }).build(disk.capacity(), 42);
    let scan = TaskSpec::Scan { block_bytes: 4096, passes: 1, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: None, passes_in_flight: None };
    let fb = Freeblock::new(Arc::clone(&disk), FreeblockConfig { planner: PlannerKind::TwoTrack, tasks: vec![scan], ..FreeblockConfig::default() })?;
    let mut s = String::new();
    writeln!(
        s,
        "\nFree scan: OLTP on the {} (cache off), MPL {mpl}, {scheduler}, {think_ms} ms think time; in the background one whole-disk scan in 4 KB blocks ({} planner), until it ends (at most {max_requests} foreground requests)\n",
        disk.spec().description,
        PlannerKind::TwoTrack
    )?;
    let pb = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} scanning: {pos} foreground requests served ({elapsed})") {
        pb.set_style(style);
    }
    let mut tick = |n: u64| pb.set_position(n);
    let sim = SimConfig { scheduler, mpl, think_ms, max_requests, ..SimConfig::default() };
    let with = Simulation::new(Arc::clone(&disk), workload()?, sim.clone()).with_freeblock(fb).run(Some(&mut tick))?;
    pb.finish_and_clear();
    let alone = Simulation::new(Arc::clone(&disk), workload()?, SimConfig { max_requests: with.requests, ..sim }).run(None)?;
    let f = with.freeblock.as_ref().ok_or("the run has no freeblock report")?;
    let mut t = Table::new(["", "requests", "mean response ms", "p99 ms", "max ms", "requests/s"]);
    for (name, r) in [("without the scan", &alone), ("with the scan", &with)] {
        t.row([name.to_string(), r.requests.to_string(), format!("{:.3}", r.response.mean_ms), format!("{:.3}", r.response.p99_ms), format!("{:.3}", r.response.max_ms), format!("{:.1}", r.throughput_per_s)]);
    }
    s.push_str(&t.render());
    let identical = alone.response == with.response && alone.requests == with.requests && alone.duration_ns == with.duration_ns && f.delayed_foreground == 0;
    if identical {
        writeln!(s, "Foreground identical with and without the scan: every response-time statistic is equal, and no request was delayed (in-firmware freeblock scheduling is free).")?;
    } else {
        writeln!(s, "Foreground NOT identical ({} requests delayed by background work).", f.delayed_foreground)?;
    }
    let task = f.tasks.first();
    let blocks = disk.capacity() / 8;
    let done = task.map_or(0, |t| t.passes.first().map_or(t.blocks_delivered, |p| p.blocks)) as f64 / blocks as f64;
    let per_day = match task.and_then(|t| t.passes.first()) {
        Some(p) => {
            let secs = (p.end_ns - p.start_ns) as f64 / 1e9;
            format!("{:.1} scans per day (the whole pass took {secs:.0} simulated s)", per_day(secs))
        }
        None => format!(
            "≈ {:.1} scans per day, EXTRAPOLATED from the first {} of a scan in {:.0} simulated s (optimistic: a scan's tail is slower)",
            per_day_extrapolated((done * blocks as f64) as u64, blocks, f.duration_s),
            pct(done),
            f.duration_s
        ),
    };
    writeln!(
        s,
        "Free bandwidth: {:.2} MB/s of a potential {:.2} MB/s ({} realised; {} of the disk's media bandwidth); {per_day}.",
        f.free_mb_s,
        f.potential_mb_s,
        pct(f.efficiency),
        pct(f.free_mb_s / media_mb_s(&disk))
    )?;
    writeln!(s, "(`freeblock repro free-mining` sweeps MPL and schedulers and compares with paper 000 §6.)")?;
    let free = Statement {
        source: "paper 000 §6".into(),
        claim: "foreground requests delayed by the background scan (responses identical with and without it)".into(),
        paper: "0: in-firmware freeblock scheduling is free".into(),
        ours: f.delayed_foreground.to_string(),
        value: Some(f.delayed_foreground as f64),
        agrees: Some(identical),
    };
    Ok(Outcome { output: s, statements: vec![free], files: Vec::new() })
}
