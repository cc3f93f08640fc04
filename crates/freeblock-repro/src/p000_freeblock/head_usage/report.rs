//! `freeblock repro …` and `freeblock demo`: run the experiments, print ours beside the paper's,
//! write CSV and SVG plots.

use std::fmt::Write as _;
use std::sync::Arc;

use freeblock::repro::HeadUsageBar;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{RandomSpec, WorkloadSpec};
use freeblock_disk::library;

use crate::progress::Runs;
use super::args::ReproArgs;
use super::demo::DemoArgs;
use crate::plot::{stacked_bars, SegmentMark, StackedBar};
use crate::table::{pct, signed_pct, Table};

use crate::output::CmdResult;

const FIGURE_TITLES: [(u32, &str); 5] = [
    (2, "Fig. 2: head usage of five disks (random 4 KB, one outstanding)"),
    (3, "Fig. 3: head usage vs request size (Atlas 10K)"),
    (4, "Fig. 4: head usage vs locality (Atlas 10K)"),
    (5, "Fig. 5: head usage per scheduler (Atlas 10K, 20 outstanding)"),
    (6, "Fig. 6: SPTF-SWn% (Atlas 10K, 20 outstanding)"),
];

pub fn head_usage(a: &ReproArgs) -> CmdResult {
    let pb = Runs::new("head-usage", 29, a.quiet || a.json);
    let bars = freeblock::repro::head_usage(a.requests, |done, total| pb.set(done, total))?;
    pb.finish();
    std::fs::create_dir_all(&a.out)?;
    write_bars_csv(&bars, &a.out.join("head-usage.csv"))?;
    let mut plots = Vec::new();
    for (fig, title) in FIGURE_TITLES {
        let fig_bars: Vec<StackedBar> = bars
            .iter()
            .filter(|b| b.figure == fig)
            .map(|b| StackedBar { label: b.label.clone(), values: vec![b.seek, b.rotational_latency, b.transfer], marks: paper_marks(b) })
            .collect();
        let path = a.out.join(format!("paper000-fig{fig}.svg"));
        stacked_bars(&path, title, "% of disk head time", &["seek", "rotational latency", "transfer"], &fig_bars)?;
        plots.push(path.display().to_string());
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({ "bars": bars, "plots": plots }))?);
        return Ok(());
    }
    out!("{}", head_usage_text(&bars));
    outln!("plots: {}", plots.join(", "));
    outln!("data: {}", a.out.join("head-usage.csv").display());
    Ok(())
}

/// The paper's figures for a bar's segments: its checks of a segment's share (the accepted
/// range). Checks of other quantities (access time against SPTF) are in the table only.
fn paper_marks(b: &HeadUsageBar) -> Vec<SegmentMark> {
    b.checks
        .iter()
        .filter_map(|c| {
            let segment = if c.metric.starts_with("rotational latency share") {
                1
            } else if c.metric.contains("transfer share") {
                2
            } else {
                return None;
            };
            Some(SegmentMark { segment, low: c.low, high: c.high })
        })
        .collect()
}

fn head_usage_text(bars: &[HeadUsageBar]) -> String {
    let mut s = String::new();
    for (fig, title) in FIGURE_TITLES {
        let _ = writeln!(s, "\n{title}");
        let mut t = Table::new(["bar", "seek", "rot. latency", "transfer", "access ms", "paper says", "ours", "verdict"]);
        for b in bars.iter().filter(|b| b.figure == fig) {
            let first = b.checks.first();
            t.row([
                b.label.clone(),
                pct(b.seek),
                pct(b.rotational_latency),
                pct(b.transfer),
                format!("{:.3}", b.access_mean_ms),
                first.map_or(String::new(), |c| format!("{}: {}", c.metric, c.paper)),
                first.map_or(String::new(), |c| fmt_check_value(&c.metric, c.ours)),
                first.map_or(String::new(), |c| verdict(c.matches)),
            ]);
            for c in b.checks.iter().skip(1) {
                t.row([String::new(), String::new(), String::new(), String::new(), String::new(), format!("{}: {}", c.metric, c.paper), fmt_check_value(&c.metric, c.ours), verdict(c.matches)]);
            }
        }
        s.push_str(&t.render());
    }
    let (n, ok) = bars.iter().flat_map(|b| &b.checks).fold((0, 0), |(n, ok), c| (n + 1, ok + usize::from(c.matches)));
    let _ = writeln!(s, "\n{ok} of {n} comparisons with paper 000 within tolerance");
    s
}

fn fmt_check_value(metric: &str, v: f64) -> String {
    if metric.contains("vs SPTF") { signed_pct(v, 1) } else { pct(v) }
}

fn verdict(ok: bool) -> String {
    if ok { "matches".into() } else { "MISSES".into() }
}

fn write_bars_csv(bars: &[HeadUsageBar], path: &std::path::Path) -> CmdResult {
    let mut s = String::from("figure,bar,seek,rotational_latency,transfer,access_mean_ms\n");
    for b in bars {
        writeln!(s, "{},{},{:.6},{:.6},{:.6},{:.6}", b.figure, b.label, b.seek, b.rotational_latency, b.transfer, b.access_mean_ms)?;
    }
    std::fs::write(path, s)?;
    Ok(())
}

pub fn demo(a: &DemoArgs) -> CmdResult {
    // The paper-000 setting: media behaviour only, so the on-disk cache is off.
    let disk = library::media("atlas10k")?;
    outln!(
        "freeblock demo: {} random 4 KB requests (2:1 reads) per scheduler on the {}, 20 outstanding, cache off\n",
        a.requests,
        disk.spec().description,
    );
    let scheds = [SchedulerSpec::Fcfs, SchedulerSpec::Clook, SchedulerSpec::Sstf, SchedulerSpec::Sptf, SchedulerSpec::SptfSw { window_pct: 40.0 }];
    let pb = Runs::new("demo", scheds.len() as u64, false);
    let mut t = Table::new(["scheduler", "seek", "rot. latency", "transfer", "overhead", "mean response ms", "p99 ms"]);
    let mut bars = Vec::new();
    for s in scheds {
        let w = WorkloadSpec::Random(RandomSpec { count: Some(a.requests), ..RandomSpec::default() }).build(disk.capacity(), 42)?;
        let r = Simulation::new(Arc::clone(&disk), w, SimConfig { scheduler: s, mpl: 20, ..SimConfig::default() }).run(None)?;
        let f = r.head_usage_fractions;
        t.row([s.to_string(), pct(f.seek), pct(f.rotational_latency), pct(f.transfer), pct(f.overhead), format!("{:.2}", r.response.mean_ms), format!("{:.2}", r.response.p99_ms)]);
        bars.push(StackedBar::new(s.to_string(), vec![f.seek, f.rotational_latency, f.transfer, f.overhead]));
        pb.inc();
    }
    pb.finish();
    out!("{}", t.render());
    outln!("\nThe rotational-latency share is the potential free bandwidth freeblock scheduling can use.");
    let path = a.out.join("head-usage.svg");
    stacked_bars(&path, "Atlas 10K head usage per scheduler (20 outstanding)", "% of disk head time", &["seek", "rotational latency", "transfer", "overhead"], &bars)?;
    outln!("plot written to {}", path.display());
    super::free_mining::demo_free_scan(a.scan_requests)
}
