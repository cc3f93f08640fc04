//! Paper 000 §3's report: the table of each figure with the paper's figures beside ours, the CSV
//! of every bar, one SVG per figure (the paper's accepted ranges marked on the bars), and the
//! statements checked.

use std::fmt::Write as _;
use std::path::Path;

use super::HeadUsageBar;
use crate::plot::{stacked_bars, SegmentMark, StackedBar};
use crate::progress::Runs;
use crate::table::{pct, signed_pct, Table};
use crate::{Options, Outcome, Result, Statement};

const FIGURE_TITLES: [(u32, &str); 5] = [
    (2, "Fig. 2: head usage of five disks (random 4 KB, one outstanding)"),
    (3, "Fig. 3: head usage vs request size (Atlas 10K)"),
    (4, "Fig. 4: head usage vs locality (Atlas 10K)"),
    (5, "Fig. 5: head usage per scheduler (Atlas 10K, 20 outstanding)"),
    (6, "Fig. 6: SPTF-SWn% (Atlas 10K, 20 outstanding)"),
];

/// `freeblock repro head-usage`: `options.requests` per bar; the CSV and plots under
/// `options.out`.
///
/// # Errors
/// Setup errors; a file that cannot be written.
pub fn run(options: &Options) -> Result<Outcome> {
    let pb = Runs::new("head-usage", 29, options.quiet || options.json);
    let bars = super::head_usage(options.requests, |done, total| pb.set(done, total))?;
    pb.finish();
    std::fs::create_dir_all(&options.out)?;
    let csv = options.out.join("head-usage.csv");
    write_bars_csv(&bars, &csv)?;
    let mut files = vec![csv.clone()];
    for (fig, title) in FIGURE_TITLES {
        let fig_bars: Vec<StackedBar> = bars
            .iter()
            .filter(|b| b.figure == fig)
            .map(|b| StackedBar { label: b.label.clone(), values: vec![b.seek, b.rotational_latency, b.transfer], marks: paper_marks(b) })
            .collect();
        let path = options.out.join(format!("paper000-fig{fig}.svg"));
        stacked_bars(&path, title, "% of disk head time", &["seek", "rotational latency", "transfer"], &fig_bars)?;
        files.push(path);
    }
    let plots: Vec<String> = files[1..].iter().map(|p| p.display().to_string()).collect();
    let output = if options.json {
        format!("{}\n", serde_json::to_string_pretty(&serde_json::json!({ "bars": bars, "plots": plots }))?)
    } else {
        format!("{}plots: {}\ndata: {}\n", head_usage_text(&bars), plots.join(", "), csv.display())
    };
    Ok(Outcome { output, statements: statements(&bars), files })
}

/// Every comparison with the paper, as the table prints it.
fn statements(bars: &[HeadUsageBar]) -> Vec<Statement> {
    bars.iter()
        .flat_map(|b| {
            b.checks.iter().map(move |c| Statement {
                source: format!("Fig. {}", b.figure),
                claim: format!("{}: {}", b.label, c.metric),
                paper: c.paper.clone(),
                ours: fmt_check_value(&c.metric, c.ours),
                value: Some(c.ours),
                agrees: Some(c.matches),
            })
        })
        .collect()
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

fn write_bars_csv(bars: &[HeadUsageBar], path: &Path) -> Result<()> {
    let mut s = String::from("figure,bar,seek,rotational_latency,transfer,access_mean_ms\n");
    for b in bars {
        writeln!(s, "{},{},{:.6},{:.6},{:.6},{:.6}", b.figure, b.label, b.seek, b.rotational_latency, b.transfer, b.access_mean_ms)?;
    }
    std::fs::write(path, s)?;
    Ok(())
}

