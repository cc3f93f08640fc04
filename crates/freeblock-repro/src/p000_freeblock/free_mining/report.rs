//! Paper 000 §6's report: the tables of Figs. 8–10 and the planner comparison with the paper's
//! figures beside ours, the CSVs of every run and of Figs. 9 and 10, the SVG plots, and the
//! statements checked.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::paper;
use super::{FreeMiningReport, MiningRun, ScanDetail, SampleRow, SplitSlice};
use crate::plot::{lines, stacked_bars, Line, Reference, SegmentMark, StackedBar};
use crate::reproduction::Incomplete;
use crate::table::{pct, signed_pct, Table};
use crate::{Options, Outcome, Result, Statement};

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

/// The report's outcome: writes its plots and CSVs under `options.out`, and gives its text (or
/// JSON document) and statements; `ran_on` says where the runs ran ("2 threads", "2 Dask
/// workers") in the closing line on standard error (unless quiet), `wall_s` how long they took.
/// Runs that failed make it [`Incomplete`].
pub(super) fn outcome(options: &Options, report: &FreeMiningReport, ran_on: &str, wall_s: f64) -> Result<Outcome> {
    std::fs::create_dir_all(&options.out)?;
    let plots = free_mining_plots(report, &options.out)?;
    let csvs = free_mining_csvs(report, &options.out)?;
    let files: Vec<PathBuf> = plots.iter().chain(&csvs).cloned().collect();
    let (plots, csvs) = (display(&plots), display(&csvs));
    let statements = statements(report);
    let runs = report.runs.len() + report.failed_runs.len();
    if options.json {
        let output = format!("{}\n", serde_json::to_string_pretty(&serde_json::json!({ "report": report, "plots": plots, "data": csvs }))?);
        let outcome = Outcome { output, statements, files };
        return if report.failed_runs.is_empty() { Ok(outcome) } else { Err(Incomplete::error(outcome, format!("{} runs failed (see failed_runs)", report.failed_runs.len()))) };
    }
    let output = format!("{}plots: {}\ndata: {}\n", free_mining_text(report), plots.join(", "), csvs.join(", "));
    if !options.quiet {
        let _ = writeln!(std::io::stderr(), "free-mining: {runs} simulated runs on {ran_on} in {wall_s:.1} s");
    }
    let outcome = Outcome { output, statements, files };
    if report.failed_runs.is_empty() {
        Ok(outcome)
    } else {
        Err(Incomplete::error(outcome, format!("{} of {runs} runs failed (listed under FAILED RUNS above)", report.failed_runs.len())))
    }
}

fn display(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.display().to_string()).collect()
}

/// Every comparison with the paper (or the target), as the tables print them, and
/// whether the foreground was left alone in every run.
fn statements(r: &FreeMiningReport) -> Vec<Statement> {
    let mut out: Vec<Statement> = r
        .checks
        .iter()
        .map(|c| Statement {
            source: c.figure.clone(),
            claim: format!("{}: {}", c.context, c.check.metric),
            paper: c.check.paper.clone(),
            ours: check_value(&c.check.metric, c.check.ours),
            value: Some(c.check.ours),
            agrees: Some(c.check.matches),
        })
        .collect();
    let delayed: u64 = r.runs.iter().map(|x| x.delayed_foreground).sum();
    out.push(Statement {
        source: "§6".into(),
        claim: format!("free means free: foreground requests delayed by background work over all {} runs", r.runs.len()),
        paper: "0 (in-firmware freeblock scheduling is free)".into(),
        ours: delayed.to_string(),
        value: Some(delayed as f64),
        agrees: Some(delayed == 0),
    });
    out
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
        paper::PAPER_MEDIA_MB_S
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
        "Planners: single_track = paper 000's greedy (§4); {} = ours (two_track also splits between two tracks; multi_track also chains runs on up to 14 tracks and takes runs whole). Figs. 8–10 use {} unless a row says otherwise.",
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
            verdict(x.ours_efficiency >= paper::TARGET_EFFICIENCY_OURS).to_string(),
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
                verdict(o.share.is_some_and(|v| v >= paper::TARGET_EFFICIENCY_OURS)).to_string(),
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
    let _ = writeln!(s, "{ok} of {n} comparisons with paper 000 and the issue's targets within tolerance (±{:.0}% for \"about\" figures).", 100.0 * paper::TOLERANCE);
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

fn free_mining_plots(r: &FreeMiningReport, out: &Path) -> Result<Vec<PathBuf>> {
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
        &[Reference::Level { label: format!("paper 000: ~{} MB/s at high MPL", paper::PAPER_FREE_MB_S), y: paper::PAPER_FREE_MB_S }],
    )?;
    written.push(p);
    let p = out.join("paper000-fig8-potential.svg");
    // The paper prints no potential of its own; it says the 4.9 MB/s are about half of it.
    let potential = paper::PAPER_FREE_MB_S / paper::PAPER_EFFICIENCY;
    let potential_mark = Reference::Level { label: format!("paper 000: ~{potential:.1} MB/s at high MPL ({} MB/s realise ~{:.0}% of it)", paper::PAPER_FREE_MB_S, 100.0 * paper::PAPER_EFFICIENCY), y: potential };
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
            label: format!("paper 000: the last 5% take ~{:.0}% of the time", 100.0 * paper::PAPER_LAST_5PCT_TIME_SHARE),
            x: 100.0 * (1.0 - paper::PAPER_LAST_5PCT_TIME_SHARE),
            y: 95.0,
        }],
    )?;
    written.push(p);
    for d in &r.fig9 {
        let span = d.pass_s.unwrap_or_else(|| d.buckets.last().map_or(1.0, |b| b.end_s));
        let x = |b: &SplitSlice| 100.0 * (b.start_s + b.end_s) / 2.0 / span;
        let inside: Vec<&SplitSlice> = d.buckets.iter().filter(|b| b.start_s < span).collect();
        let split = [
            Line { label: "free transfer".into(), points: inside.iter().map(|b| (x(b), 100.0 * b.free_transfer)).collect() },
            Line { label: "extra seek".into(), points: inside.iter().map(|b| (x(b), 100.0 * b.extra_seek)).collect() },
            Line { label: "unused latency".into(), points: inside.iter().map(|b| (x(b), 100.0 * b.unused)).collect() },
        ];
        let p = out.join(format!("paper000-fig9c-{}.svg", d.planner));
        let paper_split = [("free transfer", 1.0 - paper::PAPER_EXTRA_SEEK_SHARE - paper::PAPER_UNUSED_SHARE), ("extra seek", paper::PAPER_EXTRA_SEEK_SHARE), ("unused latency", paper::PAPER_UNUSED_SHARE)]
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

    let fig10 = |f: &dyn Fn(&SampleRow) -> f64| -> Vec<Line> {
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
        &[Reference::Point { label: format!("paper 000: ~{:.0}% for any 80%", 100.0 * paper::PAPER_SAMPLE_80_EFFICIENCY), x: 80.0, y: 100.0 * paper::PAPER_SAMPLE_80_EFFICIENCY }],
    )?;
    written.push(p);
    let p = out.join("paper000-fig10-per-day.svg");
    lines(
        &p,
        &format!("Paper 000 Fig. 10: samples per day ({}, MPL {})", c.detail_scheduler, c.detail_mpl),
        "share of the disk needed (%)",
        "samples per day",
        &fig10(&|x| x.samples_per_day),
        &[Reference::Point { label: format!("paper 000: {:.0}+ a day for any 80%", paper::PAPER_SAMPLE_80_PER_DAY), x: 80.0, y: paper::PAPER_SAMPLE_80_PER_DAY }],
    )?;
    written.push(p);
    Ok(written)
}

/// Fig. 8c's paper marks: the paper's split of the potential (the foreground's rotational
/// latency) into free transfer, extra seek and unused latency, applied to each bar's own
/// rotational latency `rotational` (a share of the head's time; segments 2–4 of the bar).
fn fig8c_marks(rotational: f64) -> Vec<SegmentMark> {
    let unused = paper::PAPER_UNUSED_SHARE;
    let extra = paper::PAPER_EXTRA_SEEK_SHARE;
    let free = 1.0 - extra - unused;
    [(2, free), (3, extra), (4, unused)].into_iter().map(|(segment, share)| SegmentMark { segment, low: rotational * share, high: rotational * share }).collect()
}

fn free_mining_csvs(r: &FreeMiningReport, out: &Path) -> Result<Vec<PathBuf>> {
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
    Ok(vec![runs, fig9, fig10])
}
