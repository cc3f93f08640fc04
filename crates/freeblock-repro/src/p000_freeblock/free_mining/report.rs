//! Freeblock scheduling on the command line: `freeblock repro free-mining` (paper 000 §6), the
//! free-scan part of `freeblock demo`, and the planner rows of `freeblock bench`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use freeblock::free_mining::{self, FreeMiningConfig, FreeMiningReport, MiningRun, ScanDetail};
use freeblock::freeblock::{Freeblock, FreeblockConfig, PlannerKind, TaskSpec};
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{OltpSpec, WorkloadSpec};
use freeblock_disk::library;
use indicatif::{ProgressBar, ProgressStyle};

use crate::progress::Runs;
use super::args::ReproArgs;
use crate::plot::{lines, stacked_bars, Line, Reference, SegmentMark, StackedBar};
use crate::table::{pct, signed_pct, Table};

use crate::output::CmdResult;

fn verdict(ok: bool) -> &'static str {
    if ok { "within" } else { "MISSES" }
}

/// A paper-check value in the unit its metric implies.
fn check_value(metric: &str, v: f64) -> String {
    if metric.contains("MB/s") {
        format!("{v:.2} MB/s")
    } else if metric.contains("per day") {
        format!("{v:.1}")
    } else if metric.contains("delayed") {
        format!("{v:.0}")
    } else if metric.contains("gain") {
        signed_pct(v, 1)
    } else {
        pct(v)
    }
}

fn per_day_cell(v: f64, extrapolated: bool) -> String {
    if extrapolated { format!("~{v:.1} (extrap.)") } else { format!("{v:.1}") }
}

fn hours_cell(pass_s: Option<f64>) -> String {
    pass_s.map_or("not done".into(), |s| format!("{:.2}", s / 3600.0))
}

/// `freeblock repro free-mining`: its runs on `--threads` threads of this process. (The
/// `freeblock` command of the Python package runs them as Dask tasks instead, and ends with
/// [`free_mining_output`] as this does.)
pub fn free_mining(a: &ReproArgs) -> CmdResult {
    if a.scheduler_address.is_some() {
        return Err(super::sweep::NEEDS_PYTHON.replace("{what}", "repro free-mining --scheduler-address").into());
    }
    let config = free_mining_config(a);
    let pb = Runs::new("free-mining", 1, a.quiet || a.json);
    let started = Instant::now();
    let report = free_mining::free_mining(&config, &|done, total| pb.set(done, total))?;
    pb.finish();
    free_mining_output(a, &report, &format!("{} threads", config.threads), started.elapsed().as_secs_f64())
}

/// The reproduction `a` asks for: the full one or `--quick`, with its cap and thread count.
pub fn free_mining_config(a: &ReproArgs) -> FreeMiningConfig {
    let mut config = if a.quick { FreeMiningConfig::quick() } else { FreeMiningConfig::default() };
    if let Some(cap) = a.max_requests {
        config.max_requests = cap;
    }
    if let Some(t) = a.threads {
        config.threads = t.max(1);
    }
    config.repeated_scans |= a.repeated_scans;
    config
}

/// Writes the plots and CSVs of `report` and prints it (text or `--json`); `ran_on` says where
/// the runs ran ("2 threads", "2 Dask workers") in the closing line on stderr, `wall_s` how long
/// they took.
pub fn free_mining_output(a: &ReproArgs, report: &FreeMiningReport, ran_on: &str, wall_s: f64) -> CmdResult {
    std::fs::create_dir_all(&a.out)?;
    let plots = free_mining_plots(report, &a.out)?;
    let csvs = free_mining_csvs(report, &a.out)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({ "report": report, "plots": plots, "data": csvs }))?);
        if !report.failed_runs.is_empty() {
            return Err(format!("{} runs failed (see failed_runs)", report.failed_runs.len()).into());
        }
        return Ok(());
    }
    out!("{}", free_mining_text(report));
    outln!("plots: {}", plots.join(", "));
    outln!("data: {}", csvs.join(", "));
    if !a.quiet {
        let _ = writeln!(std::io::stderr(), "free-mining: {} simulated runs on {ran_on} in {wall_s:.1} s", report.runs.len() + report.failed_runs.len());
    }
    if report.failed_runs.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of {} runs failed (listed under FAILED RUNS above)", report.failed_runs.len(), report.runs.len() + report.failed_runs.len()).into())
    }
}

fn free_mining_text(r: &FreeMiningReport) -> String {
    let c = &r.config;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Paper 000 §6: free data mining on an OLTP system — {} (cache off), {:.2} GB, media bandwidth {:.1} MB/s (paper: {:.0} MB/s)",
        c.disk,
        r.capacity_gb,
        r.media_mb_s,
        free_mining::PAPER_MEDIA_MB_S
    );
    let _ = writeln!(
        s,
        "Foreground: OLTP closed workload, MPL tasks, {} ms think time, 2:1 reads, uniform starts, sizes a multiple of 4 KB (exponential, mean 8 KB), seed {}.",
        c.think_ms, c.seed
    );
    let _ = writeln!(
        s,
        "Background: one pass of a scan in {} KB blocks per run, free bandwidth only (in-firmware: foreground timing unchanged); a run ends with its pass, or at {} foreground requests.",
        c.block_bytes / 1024,
        c.max_requests
    );
    let _ = writeln!(
        s,
        "Planners: single_track = paper 000's greedy (§4); {} = ours (two_track also splits between two tracks; multi_track also chains runs on up to 6 tracks). Figs. 8–10 use {} unless a row says otherwise.",
        c.ours_planner, c.paper_planner
    );

    // Fig. 8.
    let _ = writeln!(s, "\nFig. 8: free bandwidth against the multiprogramming level, every foreground scheduler ({} planner, whole-disk scan)", c.paper_planner);
    let mut t = Table::new([
        "scheduler",
        "MPL",
        "fg resp. ms",
        "fg rot. lat.",
        "potential MB/s",
        "free MB/s",
        "of media",
        "efficiency",
        "scan h",
        "scans/day",
        "useful head util.",
        "requests",
    ]);
    for &sched in &c.schedulers {
        let mut first = true;
        for &mpl in &c.mpls {
            let Some(x) = r.run(sched, mpl, c.paper_planner, 100.0) else { continue };
            t.row([
                if first { x.scheduler.clone() } else { String::new() },
                mpl.to_string(),
                format!("{:.1}", x.response_mean_ms),
                pct(x.fg_rotational_latency),
                format!("{:.2}", x.potential_mb_s),
                format!("{:.2}", x.free_mb_s),
                pct(x.media_share),
                pct(x.efficiency),
                hours_cell(x.pass_s),
                per_day_cell(x.passes_per_day, x.passes_per_day_extrapolated),
                format!("{} → {}", pct(x.fg_transfer), pct(x.useful_with_mining)),
                x.requests.to_string(),
            ]);
            first = false;
        }
    }
    s.push_str(&t.render());
    let _ = writeln!(
        s,
        "(potential = foreground rotational latency × media rate; free includes foreground transfers of wanted blocks; scans/day = 86400 s ÷ the pass's time; useful head utilisation = media-transfer share of the head's time without → with the scan.)"
    );
    s.push_str(&checks_text(r, "Fig. 8"));

    // Fig. 9.
    let _ = writeln!(s, "\nFig. 9: one whole-disk scan in detail — {}, MPL {}", c.detail_scheduler, c.detail_mpl);
    let marks = [0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99];
    let mut header = vec!["planner".to_string(), "pass h".into()];
    header.extend(marks.iter().map(|m| format!("{:.0}% read at", 100.0 * m)));
    header.push("last 5% take".into());
    let mut t = Table::new(header);
    for d in &r.fig9 {
        let span = d.pass_s.unwrap_or(f64::NAN);
        let mut row = vec![d.planner.clone(), hours_cell(d.pass_s)];
        for m in marks {
            row.push(d.progress.iter().find(|p| p.done + 1e-9 >= m).map_or("—".into(), |p| if span.is_finite() { pct(p.time_s / span) } else { format!("{:.0} s", p.time_s) }));
        }
        row.push(d.last_5pct_time_share.map_or("—".into(), pct));
        t.row(row);
    }
    s.push_str(&t.render());
    let _ = writeln!(s, "(times as a share of the pass; paper: the last 5% of the blocks take ~30% of the scan's time)");
    for d in &r.fig9 {
        s.push_str(&tenths_text(d));
    }
    s.push_str(&checks_text(r, "Fig. 9"));

    // Fig. 10.
    let _ = writeln!(s, "\nFig. 10: sampling scans needing any X% of the blocks — {}, MPL {}", c.detail_scheduler, c.detail_mpl);
    let mut t = Table::new(["planner", "any X%", "pass h", "samples/day", "efficiency", "vs full scan"]);
    let mut last = String::new();
    for x in &r.fig10 {
        t.row([
            if x.planner == last { String::new() } else { x.planner.clone() },
            format!("{:.0}%", x.percent),
            hours_cell(x.pass_s),
            per_day_cell(x.samples_per_day, x.extrapolated),
            pct(x.efficiency),
            x.gain_over_full_scan.map_or("—".into(), |g| signed_pct(g, 1)),
        ]);
        last = x.planner.clone();
    }
    s.push_str(&t.render());
    let _ = writeln!(s, "(efficiency = bytes the sample needed ÷ potential free bytes during its pass; paper: any 95% → +40% over a full scan, 80% → ~90% and 90+ samples/day)");
    s.push_str(&checks_text(r, "Fig. 10"));

    // Beyond the paper.
    let _ = writeln!(s, "\nBeyond the paper: paper 000's single-track greedy and ours ({}) on the same runs (same foreground workload and seed)", c.ours_planner);
    let mut t = Table::new([
        "scheduler",
        "MPL",
        "greedy: realised",
        "free transfer",
        "free MB/s",
        "scans/day",
        "ours unbalanced",
        "ours: realised",
        "free transfer",
        "free MB/s",
        "scans/day",
        "ours vs target ≥ 70%",
        "delayed fg",
    ]);
    for x in &r.comparison {
        t.row([
            x.scheduler.clone(),
            format!("{}{}", x.mpl, if x.complete { "" } else { " (partial)" }),
            pct(x.paper_efficiency),
            pct(x.paper_free_transfer),
            format!("{:.2}", x.paper_free_mb_s),
            format!("{:.1}", x.paper_scans_per_day),
            x.ours_unbalanced_efficiency.map_or("-".into(), pct),
            pct(x.ours_efficiency),
            pct(x.ours_free_transfer),
            format!("{:.2}", x.ours_free_mb_s),
            format!("{:.1}", x.ours_scans_per_day),
            verdict(x.ours_efficiency >= free_mining::TARGET_EFFICIENCY_OURS).to_string(),
            x.delayed_foreground.to_string(),
        ]);
    }
    s.push_str(&t.render());
    let _ = writeln!(s, "(realised = free bandwidth ÷ potential free bandwidth over one whole pass; the paper's planner realised about half; \"ours unbalanced\" = ours with balance = false)");
    if r.comparison.iter().any(|x| x.ours_repeated.is_some()) {
        let _ = writeln!(
            s,
            "\nRepeated scans, steady state: the greedy one pass at a time (as in the paper) and ours ({}) with passes overlapping (up to {} in flight, the next starting when the newest is {:.0}% read; {:.0} simulated seconds each)",
            c.ours_planner,
            c.steady_passes_in_flight,
            100.0 * c.steady_next_pass_at,
            c.steady_s
        );
        let mut t = Table::new(["scheduler", "MPL", "greedy: share", "ours: passes ended", "interval", "pass start→end", "ours: share", "vs target ≥ 70%", "delayed fg"]);
        let secs = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.0} s"));
        for x in &r.comparison {
            let Some(o) = x.ours_repeated else { continue };
            t.row([
                x.scheduler.clone(),
                x.mpl.to_string(),
                x.paper_repeated_share.map_or("-".into(), pct),
                o.passes.to_string(),
                secs(o.interval_s),
                secs(o.mean_pass_s),
                o.share.map_or("-".into(), pct),
                verdict(o.share.is_some_and(|v| v >= free_mining::TARGET_EFFICIENCY_OURS)).to_string(),
                x.ours_repeated_delayed.to_string(),
            ]);
        }
        s.push_str(&t.render());
        let _ = writeln!(s, "(share = bytes of a whole pass per interval between pass ends ÷ potential free bandwidth: only complete passes count; the greedy's interval is its pass time)");
    }
    s.push_str(&checks_text(r, "beyond the paper"));

    let delayed: u64 = r.runs.iter().map(|x| x.delayed_foreground).sum();
    let _ = writeln!(
        s,
        "\nFree means free: {} foreground requests delayed by background work over all {} runs{}.",
        delayed,
        r.runs.len(),
        if delayed == 0 { " (each foreground request started and ended exactly when it would have without the scan)" } else { " — NOT FREE" }
    );
    let (n, ok) = r.checks.iter().fold((0, 0), |(n, ok), c| (n + 1, ok + usize::from(c.check.matches)));
    let _ = writeln!(s, "{ok} of {n} comparisons with paper 000 and the issue's targets within tolerance (±{:.0}% for \"about\" figures).", 100.0 * free_mining::TOLERANCE);
    if !r.failed_runs.is_empty() {
        let _ = writeln!(s, "FAILED RUNS ({}; left out of every table above):", r.failed_runs.len());
        for f in &r.failed_runs {
            let _ = writeln!(s, "  - {f}");
        }
    }
    if !r.notes.is_empty() {
        let _ = writeln!(s, "Notes:");
        for note in &r.notes {
            let _ = writeln!(s, "  - {note}");
        }
    }
    s
}

fn checks_text(r: &FreeMiningReport, figure: &str) -> String {
    let mut t = Table::new(["run", "metric", "paper says", "ours", "verdict"]);
    let mut any = false;
    let mut last = String::new();
    for c in r.checks.iter().filter(|c| c.figure == figure) {
        t.row([
            if c.context == last { String::new() } else { c.context.clone() },
            c.check.metric.clone(),
            c.check.paper.clone(),
            check_value(&c.check.metric, c.check.ours),
            verdict(c.check.matches).to_string(),
        ]);
        last = c.context.clone();
        any = true;
    }
    if any { format!("{figure}, ours against the paper (or the issue's target):\n{}", t.render()) } else { String::new() }
}

fn tenths_text(d: &ScanDetail) -> String {
    let mut s = format!("Split of the potential over the scan, {} planner ({} tenths of the {}):\n", d.planner, d.tenths.len(), if d.pass_s.is_some() { "pass" } else { "run (pass not finished)" });
    let mut t = Table::new(["time", "potential MB/s", "free MB/s", "free transfer", "extra seek", "unused latency"]);
    for (i, x) in d.tenths.iter().enumerate() {
        t.row([
            format!("{}–{}%", 10 * i, 10 * (i + 1)),
            format!("{:.2}", x.potential_mb_s),
            format!("{:.2}", x.free_mb_s),
            pct(x.free_transfer),
            pct(x.extra_seek),
            pct(x.unused),
        ]);
    }
    s.push_str(&t.render());
    s
}

fn free_mining_plots(r: &FreeMiningReport, out: &Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let c = &r.config;
    let mut written = Vec::new();
    let per_sched = |f: &dyn Fn(&MiningRun) -> f64| -> Vec<Line> {
        c.schedulers
            .iter()
            .map(|&s| Line { label: s.to_string(), points: c.mpls.iter().filter_map(|&m| r.run(s, m, c.paper_planner, 100.0)).map(|x| (f64::from(x.mpl), f(x))).collect() })
            .collect()
    };
    let p = out.join("paper000-fig8.svg");
    lines(
        &p,
        &format!("Paper 000 Fig. 8b: free bandwidth for data mining, {}", c.disk),
        "multiprogramming level",
        "free bandwidth (MB/s)",
        &per_sched(&|x| x.free_mb_s),
        &[Reference::Level { label: format!("paper 000: ~{} MB/s at high MPL", free_mining::PAPER_FREE_MB_S), y: free_mining::PAPER_FREE_MB_S }],
    )?;
    written.push(p);
    let p = out.join("paper000-fig8-potential.svg");
    // The paper prints no potential of its own; it says the 4.9 MB/s are about half of it.
    let potential = free_mining::PAPER_FREE_MB_S / free_mining::PAPER_EFFICIENCY;
    let potential_mark = Reference::Level { label: format!("paper 000: ~{potential:.1} MB/s at high MPL ({} MB/s realise ~{:.0}% of it)", free_mining::PAPER_FREE_MB_S, 100.0 * free_mining::PAPER_EFFICIENCY), y: potential };
    lines(&p, "Paper 000 Fig. 8b: potential free bandwidth (rotational latency × media rate)", "multiprogramming level", "potential free bandwidth (MB/s)", &per_sched(&|x| x.potential_mb_s), &[potential_mark])?;
    written.push(p);
    let bars: Vec<StackedBar> = c
        .mpls
        .iter()
        .filter_map(|&m| r.run(c.detail_scheduler, m, c.paper_planner, 100.0))
        .map(|x| StackedBar {
            label: format!("MPL {}", x.mpl),
            marks: fig8c_marks(x.fg_rotational_latency),
            values: vec![
                x.fg_seek,
                x.fg_transfer,
                x.fg_rotational_latency * x.free_transfer_fraction,
                x.fg_rotational_latency * x.extra_seek_fraction,
                x.fg_rotational_latency * x.unused_fraction,
            ],
        })
        .collect();
    let p = out.join("paper000-fig8c.svg");
    stacked_bars(
        &p,
        &format!("Paper 000 Fig. 8c: head usage with the scan ({}, {})", c.detail_scheduler, c.paper_planner),
        "% of disk head time (rest: overhead, idle)",
        &["seek", "foreground transfer", "free transfer", "extra seek", "unused latency"],
        &bars,
    )?;
    written.push(p);

    let mut series = Vec::new();
    for d in &r.fig9 {
        let span = d.pass_s.unwrap_or_else(|| d.buckets.last().map_or(1.0, |b| b.end_s));
        let mut points = vec![(0.0, 0.0)];
        points.extend(d.progress.iter().map(|p| (100.0 * p.time_s / span, 100.0 * p.done)));
        series.push(Line { label: format!("achieved, {}", d.planner), points });
    }
    if let Some(d) = r.fig9.first() {
        let span = d.pass_s.unwrap_or_else(|| d.buckets.last().map_or(1.0, |b| b.end_s));
        let mut points = vec![(0.0, 0.0)];
        for p in &d.potential_progress {
            if p.time_s > span {
                break;
            }
            points.push((100.0 * p.time_s / span, 100.0 * p.done.min(1.0)));
            if p.done >= 1.0 {
                break;
            }
        }
        series.push(Line { label: format!("potential, {}", d.planner), points });
    }
    let p = out.join("paper000-fig9.svg");
    lines(
        &p,
        &format!("Paper 000 Fig. 9a: scan progress ({}, MPL {})", c.detail_scheduler, c.detail_mpl),
        "time (% of the pass)",
        "blocks read (% of the disk)",
        &series,
        &[Reference::Point {
            label: format!("paper 000: the last 5% take ~{:.0}% of the time", 100.0 * free_mining::PAPER_LAST_5PCT_TIME_SHARE),
            x: 100.0 * (1.0 - free_mining::PAPER_LAST_5PCT_TIME_SHARE),
            y: 95.0,
        }],
    )?;
    written.push(p);
    for d in &r.fig9 {
        let span = d.pass_s.unwrap_or_else(|| d.buckets.last().map_or(1.0, |b| b.end_s));
        let x = |b: &free_mining::SplitSlice| 100.0 * (b.start_s + b.end_s) / 2.0 / span;
        let inside: Vec<&free_mining::SplitSlice> = d.buckets.iter().filter(|b| b.start_s < span).collect();
        let split = [
            Line { label: "free transfer".into(), points: inside.iter().map(|b| (x(b), 100.0 * b.free_transfer)).collect() },
            Line { label: "extra seek".into(), points: inside.iter().map(|b| (x(b), 100.0 * b.extra_seek)).collect() },
            Line { label: "unused latency".into(), points: inside.iter().map(|b| (x(b), 100.0 * b.unused)).collect() },
        ];
        let p = out.join(format!("paper000-fig9c-{}.svg", d.planner));
        let paper_split = [("free transfer", 1.0 - free_mining::PAPER_EXTRA_SEEK_SHARE - free_mining::PAPER_UNUSED_SHARE), ("extra seek", free_mining::PAPER_EXTRA_SEEK_SHARE), ("unused latency", free_mining::PAPER_UNUSED_SHARE)]
            .map(|(what, share)| Reference::Level { label: format!("paper 000: {what} ~{:.0}% over the scan", 100.0 * share), y: 100.0 * share });
        lines(&p, &format!("Paper 000 Fig. 9c: use of the potential over the scan ({}, MPL {}, {})", c.detail_scheduler, c.detail_mpl, d.planner), "time (% of the pass)", "% of the potential", &split, &paper_split)?;
        written.push(p);
        let bw = [
            Line { label: "free".into(), points: inside.iter().map(|b| (x(b), b.free_mb_s)).collect() },
            Line { label: "potential".into(), points: inside.iter().map(|b| (x(b), b.potential_mb_s)).collect() },
        ];
        let p = out.join(format!("paper000-fig9b-{}.svg", d.planner));
        // Fig. 9b's curve has no figure in the paper's text to set beside ours: the legend says so.
        let no_figure = Reference::Note { label: "paper 000: no number for this curve (free above potential early in the scan)".into() };
        lines(&p, &format!("Paper 000 Fig. 9b: instantaneous free bandwidth ({}, MPL {}, {})", c.detail_scheduler, c.detail_mpl, d.planner), "time (% of the pass)", "MB/s", &bw, &[no_figure])?;
        written.push(p);
    }

    let fig10 = |f: &dyn Fn(&free_mining::SampleRow) -> f64| -> Vec<Line> {
        c.sample_planners
            .iter()
            .map(|p| Line { label: p.to_string(), points: r.fig10.iter().filter(|x| x.planner == p.to_string()).map(|x| (x.percent, f(x))).collect() })
            .collect()
    };
    let p = out.join("paper000-fig10.svg");
    lines(
        &p,
        &format!("Paper 000 Fig. 10: sampling efficiency ({}, MPL {})", c.detail_scheduler, c.detail_mpl),
        "share of the disk needed (%)",
        "efficiency (% of potential)",
        &fig10(&|x| 100.0 * x.efficiency),
        &[Reference::Point { label: format!("paper 000: ~{:.0}% for any 80%", 100.0 * free_mining::PAPER_SAMPLE_80_EFFICIENCY), x: 80.0, y: 100.0 * free_mining::PAPER_SAMPLE_80_EFFICIENCY }],
    )?;
    written.push(p);
    let p = out.join("paper000-fig10-per-day.svg");
    lines(
        &p,
        &format!("Paper 000 Fig. 10: samples per day ({}, MPL {})", c.detail_scheduler, c.detail_mpl),
        "share of the disk needed (%)",
        "samples per day",
        &fig10(&|x| x.samples_per_day),
        &[Reference::Point { label: format!("paper 000: {:.0}+ a day for any 80%", free_mining::PAPER_SAMPLE_80_PER_DAY), x: 80.0, y: free_mining::PAPER_SAMPLE_80_PER_DAY }],
    )?;
    written.push(p);
    Ok(written.iter().map(|p| p.display().to_string()).collect())
}

/// Fig. 8c's paper marks: the paper's split of the potential (the foreground's rotational
/// latency) into free transfer, extra seek and unused latency, applied to each bar's own
/// rotational latency `rotational` (a share of the head's time; segments 2–4 of the bar).
fn fig8c_marks(rotational: f64) -> Vec<SegmentMark> {
    let unused = free_mining::PAPER_UNUSED_SHARE;
    let extra = free_mining::PAPER_EXTRA_SEEK_SHARE;
    let free = 1.0 - extra - unused;
    [(2, free), (3, extra), (4, unused)].into_iter().map(|(segment, share)| SegmentMark { segment, low: rotational * share, high: rotational * share }).collect()
}

fn free_mining_csvs(r: &FreeMiningReport, out: &Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
    let mut s = String::from(
        "scheduler,mpl,planner,balance,sample_percent,requests,simulated_s,hit_cap,pass_s,pass_done,free_mb_s,piggyback_mb_s,potential_mb_s,media_share,efficiency,pass_efficiency,free_transfer_fraction,extra_seek_fraction,unused_fraction,passes_per_day,passes_per_day_extrapolated,response_mean_ms,fg_seek,fg_rotational_latency,fg_transfer,fg_idle,useful_with_mining,last_5pct_time_share,delayed_foreground,decisions,repeated_passes_ended,repeated_interval_s,repeated_share\n",
    );
    for x in &r.runs {
        writeln!(
            s,
            "{},{},{},{},{},{},{:.6},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{},{},{},{},{},{}",
            x.scheduler,
            x.mpl,
            x.planner,
            x.balance,
            x.sample_percent,
            x.requests,
            x.simulated_s,
            x.hit_cap,
            opt(x.pass_s),
            x.pass_done,
            x.free_mb_s,
            x.piggyback_mb_s,
            x.potential_mb_s,
            x.media_share,
            x.efficiency,
            x.pass_efficiency,
            x.free_transfer_fraction,
            x.extra_seek_fraction,
            x.unused_fraction,
            x.passes_per_day,
            x.passes_per_day_extrapolated,
            x.response_mean_ms,
            x.fg_seek,
            x.fg_rotational_latency,
            x.fg_transfer,
            x.fg_idle,
            x.useful_with_mining,
            opt(x.last_5pct_time_share),
            x.delayed_foreground,
            x.decisions,
            x.steady.map_or(String::new(), |st| st.passes.to_string()),
            opt(x.steady.and_then(|st| st.interval_s)),
            opt(x.steady.and_then(|st| st.share))
        )?;
    }
    let runs = out.join("free-mining.csv");
    std::fs::write(&runs, s)?;
    let mut s = String::from("planner,start_s,end_s,free_mb_s,potential_mb_s,free_transfer,extra_seek,unused\n");
    for d in &r.fig9 {
        for b in &d.buckets {
            writeln!(s, "{},{:.3},{:.3},{:.6},{:.6},{:.6},{:.6},{:.6}", d.planner, b.start_s, b.end_s, b.free_mb_s, b.potential_mb_s, b.free_transfer, b.extra_seek, b.unused)?;
        }
    }
    let fig9 = out.join("free-mining-fig9.csv");
    std::fs::write(&fig9, s)?;
    let mut s = String::from("planner,percent,pass_s,samples_per_day,extrapolated,efficiency,gain_over_full_scan\n");
    for x in &r.fig10 {
        writeln!(s, "{},{},{},{:.6},{},{:.6},{}", x.planner, x.percent, opt(x.pass_s), x.samples_per_day, x.extrapolated, x.efficiency, opt(x.gain_over_full_scan))?;
    }
    let fig10 = out.join("free-mining-fig10.csv");
    std::fs::write(&fig10, s)?;
    Ok([runs, fig9, fig10].iter().map(|p| p.display().to_string()).collect())
}

/// The free-scan part of `freeblock demo`: OLTP on the Atlas 10K with and without a background
/// whole-disk scan; the foreground is the same, the scan's bandwidth is free. The run with the
/// scan ends when the scan does (or at `max_requests`); the run without it serves exactly as many
/// requests, so the two can be compared request for request.
pub fn demo_free_scan(max_requests: u64) -> CmdResult {
    let disk = library::media("atlas10k")?;
    let (scheduler, mpl, think_ms) = (SchedulerSpec::Fcfs, 10, 30.0);
    let workload = || WorkloadSpec::Oltp(OltpSpec { think_time_ms: think_ms, ..OltpSpec::default() }).build(disk.capacity(), 42);
    let scan = TaskSpec::Scan { block_bytes: 4096, passes: 1, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: None, passes_in_flight: None };
    let fb = Freeblock::new(Arc::clone(&disk), FreeblockConfig { planner: PlannerKind::TwoTrack, tasks: vec![scan], ..FreeblockConfig::default() })?;
    outln!(
        "\nFree scan: OLTP on the {} (cache off), MPL {mpl}, {scheduler}, {think_ms} ms think time; in the background one whole-disk scan in 4 KB blocks ({} planner), until it ends (at most {max_requests} foreground requests)\n",
        disk.spec().description,
        PlannerKind::TwoTrack
    );
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
    out!("{}", t.render());
    let identical = alone.response == with.response && alone.requests == with.requests && alone.duration_ns == with.duration_ns && f.delayed_foreground == 0;
    if identical {
        outln!("Foreground identical with and without the scan: every response-time statistic is equal, and no request was delayed (in-firmware freeblock scheduling is free).");
    } else {
        outln!("Foreground NOT identical ({} requests delayed by background work).", f.delayed_foreground);
    }
    let task = f.tasks.first();
    let blocks = disk.capacity() / 8;
    let done = task.map_or(0, |t| t.passes.first().map_or(t.blocks_delivered, |p| p.blocks)) as f64 / blocks as f64;
    let per_day = match task.and_then(|t| t.passes.first()) {
        Some(p) => {
            let secs = (p.end_ns - p.start_ns) as f64 / 1e9;
            format!("{:.1} scans per day (the whole pass took {secs:.0} simulated s)", free_mining::per_day(secs))
        }
        None => format!(
            "≈ {:.1} scans per day, EXTRAPOLATED from the first {} of a scan in {:.0} simulated s (optimistic: a scan's tail is slower)",
            free_mining::per_day_extrapolated((done * blocks as f64) as u64, blocks, f.duration_s),
            pct(done),
            f.duration_s
        ),
    };
    outln!(
        "Free bandwidth: {:.2} MB/s of a potential {:.2} MB/s ({} realised; {} of the disk's media bandwidth); {per_day}.",
        f.free_mb_s,
        f.potential_mb_s,
        pct(f.efficiency),
        pct(f.free_mb_s / free_mining::media_mb_s(&disk))
    );
    outln!("(`freeblock repro free-mining` sweeps MPL and schedulers and compares with paper 000 §6.)");
    Ok(())
}
