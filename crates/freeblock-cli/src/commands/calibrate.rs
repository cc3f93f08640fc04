//! `freeblock calibrate`: fit a drive model's overheads, settle times, zero-latency switches and
//! cache settings to the first half of a measured trace and score it on the second half. The
//! work, and which shared traces it runs on, is [`freeblock_fit::calibrate`]'s; this module finds
//! the shared data folder, prints and writes the calibrated spec.

use std::path::{Path, PathBuf};

use clap::Args;
use freeblock_fit::calibrate::{
    calibrate_model, judge_model, judge_pairs, CalibrateOptions, Calibration, ChangeInterval, HeldOutChange, Judgement, Objective, ParamKind, Score, DEFAULT_BODY_QUANTILE,
    DEFAULT_CHECK_BLOCKS, DEFAULT_MAX_SWEEPS, DEFAULT_REPLAYS, JUDGE_DEMERIT_MARGIN, JUDGE_RESAMPLES, JUDGE_WITHIN_MS,
};
use freeblock_fit::validate::disksim_published;

use super::args::shared_dir;
use super::validate::MeasuredTraceArgs;
use freeblock_repro::table::Table;
use crate::output::CmdResult;

/// Arguments of `freeblock calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub measured: MeasuredTraceArgs,
    /// Parameters to fit, comma-separated (default: every one the model has; see
    /// docs/calibrate.md).
    #[arg(long, value_delimiter = ',')]
    pub params: Option<Vec<String>>,
    /// Most coordinate-descent sweeps over the parameters.
    #[arg(long, default_value_t = DEFAULT_MAX_SWEEPS)]
    pub sweeps: u32,
    /// Replays of the first half, each with its delays jittered by up to ± half a revolution,
    /// pooled into every fit score of the distribution objectives (more: a smoother score, a
    /// slower search).
    #[arg(long, default_value_t = DEFAULT_REPLAYS)]
    pub replays: u32,
    /// Seed of that jitter.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// What the fit minimises: `per-request` (each request's simulated time against its own
    /// measured one, over the recorded-delay replay); `per-operation` (reads' CDF against reads',
    /// writes' against writes'), `pooled` (all requests' CDF together), both over the
    /// recorded-delay and the jittered replays; `replay` (all requests' CDF, the recorded-delay
    /// replay alone).
    #[arg(long, default_value = "per-request", value_parser = ["per-request", "per-operation", "pooled", "replay"])]
    pub objective: String,
    /// Highest quantile of the CDFs the fit compares, in (0, 1]; 1: the whole distribution.
    #[arg(long, default_value_t = DEFAULT_BODY_QUANTILE)]
    pub body_quantile: f64,
    /// Fit on the whole first half at once, without checking each change on its second quarter
    /// (fits the first half closer, generalises worse on a drifting trace).
    #[arg(long)]
    pub no_check: bool,
    /// The check's split of the first half: 0 (the default), its first and second quarters; n,
    /// alternate blocks of n requests (even blocks against odd ones).
    #[arg(long, default_value_t = DEFAULT_CHECK_BLOCKS)]
    pub check_blocks: usize,
    /// Write the calibrated spec as TOML here (needs --trace and --model: one drive).
    #[arg(long, requires = "trace")]
    pub out: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Judge calibrate (its default options) by the criterion fixed in docs/calibrate.md:
    /// rolling origins, held-out error per request, the demerit within its margin, moving-block
    /// bootstrap intervals; a verdict per drive. Without --trace: every trace in
    /// ../shared/disksim-validation except hp_c2247a (used while calibrate was built).
    #[arg(long, conflicts_with_all = ["params", "out", "no_check"])]
    pub judge: bool,
}

/// Runs `freeblock calibrate`.
pub fn calibrate_cmd(a: &CalibrateArgs) -> CmdResult {
    if a.judge {
        return judge_cmd(a);
    }
    let pairs = a.measured.pairs();
    if a.sweeps == 0 {
        return Err("--sweeps: must be at least 1".into());
    }
    let options = CalibrateOptions { params: a.params.clone(), max_sweeps: a.sweeps, replays: a.replays, seed: a.seed, objective: Objective::from_name(&a.objective)?, body_quantile: a.body_quantile, validate: !a.no_check, check_blocks: a.check_blocks };
    let mut json = Vec::new();
    for (trace, model) in &pairs {
        // The calibrated spec makes a disk (calibrate_model checks): it may be written.
        let c = calibrate_model(trace, model, &options)?;
        if let Some(out) = &a.out {
            std::fs::write(out, c.spec.to_toml_string()).map_err(|e| format!("{}: {e}", out.display()))?;
        }
        let disksim = disksim_published(trace).map(|r| r.rms_demerit_ms);
        if a.json {
            json.push(serde_json::json!({ "model_path": model, "calibration": &c, "disksim_rms_demerit_ms": disksim }));
        } else {
            print_one(&c, model, disksim, a.out.as_deref())?;
        }
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&json)?);
    }
    Ok(())
}

fn value(kind: ParamKind, v: f64) -> String {
    match kind {
        ParamKind::Switch => (if v > 0.5 { "on" } else { "off" }).to_string(),
        ParamKind::Count => format!("{v:.0}"),
        ParamKind::Ms | ParamKind::SignedMs => format!("{v:.4} ms"),
    }
}

fn print_one(c: &Calibration, model: &str, disksim: Option<f64>, out: Option<&Path>) -> CmdResult {
    let name = Path::new(&c.trace).file_name().and_then(|s| s.to_str()).unwrap_or(&c.trace).to_string();
    outln!(
        "{name} on {model}: fitted on requests 1–{} (first half; {} score, CDFs up to quantile {}), tested on {}–{} (second half); {} candidate specs replayed in {} sweep(s)",
        c.fit_requests,
        c.objective.name(),
        c.body_quantile,
        c.fit_requests + 1,
        c.fit_requests + c.test_requests,
        c.evaluations,
        c.sweeps
    );
    let mut t = Table::new(["parameter", "model", "calibrated"]);
    for p in &c.params {
        let mark = if p.fitted == p.original { "" } else { " *" };
        // An after-write overhead left unset moves with the plain one: say so, not "fitted".
        let fitted = match p.follows {
            Some(plain) => format!("{} (as {})", value(p.kind, p.fitted), plain.trim_start_matches("controller.")),
            None => format!("{}{mark}", value(p.kind, p.fitted)),
        };
        t.row([p.name.to_string(), value(p.kind, p.original), fitted]);
    }
    out!("{}", t.render());
    if !c.rejected.is_empty() {
        outln!("left at the model's values (moved by a fit, refused by the two-fold check or by the first half's own replay): {}", c.rejected.join(", "));
    }
    let mut s = Table::new(["requests scored", "", "measured mean", "simulated mean", "mean error", "mean |error|", "RMS demerit", "(exact samples)"]);
    let mut row = |what: &str, who: &str, x: &Score| {
        s.row([
            format!("{what} ({})", x.requests),
            who.to_string(),
            format!("{:.3} ms", x.measured_mean_ms),
            format!("{:.3} ms", x.simulated_mean_ms),
            format!("{:+.4} ms", x.mean_error_ms),
            format!("{:.4} ms", x.mean_abs_error_ms),
            format!("{:.4} ms", x.rms_demerit_ms),
            format!("{:.4} ms", x.rms_demerit_exact_ms),
        ]);
    };
    row("first half, fitted on", "model", &c.fit_before);
    row("first half, fitted on", "calibrated", &c.fit_after);
    row("second half, held out", "model", &c.test_before);
    row("second half, held out", "calibrated", &c.test_after);
    row("whole trace", "model", &c.whole_before);
    row("whole trace", "calibrated", &c.whole_after);
    out!("{}", s.render());
    let (before, after) = (c.test_before.rms_demerit_ms, c.test_after.rms_demerit_ms);
    let change = 100.0 * (after - before) / before.max(f64::MIN_POSITIVE);
    let verdict = format!(
        "held-out RMS demerit {before:.4} → {after:.4} ms ({change:+.1}%): {}",
        if c.helps_held_out() { "calibration helps" } else { "NO better than the model" }
    );
    outln!("{verdict}");
    // A demerit of a few thousand samples moves with which requests are in the half: say whether
    // this change stands out of that.
    outln!("{}", noise_line("held-out demerit change", &c.held_out_demerit_change));
    // The demerit compares distributions; each request's own error says how well the model
    // predicts requests it never saw, which is what the default objective fits.
    let (abs_before, abs_after) = (c.test_before.mean_abs_error_ms, c.test_after.mean_abs_error_ms);
    let abs_change = 100.0 * (abs_after - abs_before) / abs_before.max(f64::MIN_POSITIVE);
    outln!("held-out mean |error| per request {abs_before:.4} → {abs_after:.4} ms ({abs_change:+.1}%)");
    outln!("{}", noise_line("held-out mean |error| change", &c.held_out_error_change));
    if let Some(d) = disksim {
        // DiskSim publishes a whole-trace figure only. freeblock reproduces DiskSim 4.0 per
        // request on its fixtures, so where the imported model's whole-trace figure matches
        // DiskSim's, its second-half figure is the best estimate of DiskSim's second half.
        let (whole_model, whole_after) = (c.whole_before.rms_demerit_ms, c.whole_after.rms_demerit_ms);
        let cmp = if c.helps_held_out() { "below" } else { "NOT below" };
        outln!(
            "DiskSim 4.0: published {d:.3} ms over the whole trace (the imported model: {whole_model:.4} ms); its second half is not published, estimated by the imported model's {before:.4} ms: calibrated {after:.4} ms is {cmp} that estimate"
        );
        let cmp = if c.whole_trace_below(d) { "below" } else { "NOT below" };
        outln!("whole trace, calibrated, INCLUDING the fitted first half: {whole_after:.4} ms, {cmp} DiskSim's {d:.3} ms");
    }
    outln!(
        "(the measured halves differ from each other by {:.4} ms RMS demerit: held-out figures near that are as close as this trace can tell)",
        c.halves_demerit_ms
    );
    if let Some(out) = out {
        outln!("calibrated spec written to {}", out.display());
    }
    outln!();
    Ok(())
}

/// A held-out change with its spread over resamples of the held-out requests; when the two
/// figures differ in sign, a line says what each is (the demerit compares whole distributions,
/// so resampling with replacement shifts its mean; a mean |error| would not).
fn noise_line(what: &str, h: &HeldOutChange) -> String {
    let why = if h.observed_ms * h.mean_ms < 0.0 {
        "\n  (the first is the change on the held-out requests as they are; the second the mean over resamples drawn with replacement, which repeat some requests and drop others: a demerit compares whole distributions, so that shifts it, here past zero; the verdict compares the first with the spread)"
    } else {
        ""
    };
    format!(
        "{what} {:+.4} ms; over {} resamples of the held-out requests (paired bootstrap) {:+.4} ± {:.4} ms, the calibrated model lower in {:.0}%: {}{why}",
        h.observed_ms,
        h.resamples,
        h.mean_ms,
        h.sd_ms,
        100.0 * h.calibrated_better_share,
        if h.beyond_noise() { "beyond the trace's noise (more than 2 sd from none)" } else { "within the trace's noise (less than 2 sd from none)" }
    )
}

/// The traces `--judge` runs on: the one given, or every shared one but the development drive.
fn judge_traces(a: &CalibrateArgs) -> Result<Vec<(PathBuf, String)>, String> {
    if a.measured.trace.is_some() {
        return Ok(a.measured.pairs());
    }
    judge_pairs(&shared_dir(a.measured.shared.as_ref()))
}

/// `freeblock calibrate --judge`.
fn judge_cmd(a: &CalibrateArgs) -> CmdResult {
    let mut json = Vec::new();
    for (trace, model) in judge_traces(a)? {
        let j = judge_model(&trace, &model)?;
        if a.json {
            json.push(serde_json::json!({ "model_path": model, "judgement": &j }));
        } else {
            print_judgement(&j, &model)?;
        }
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&json)?);
    }
    Ok(())
}

fn interval(c: &ChangeInterval, scale: f64, unit: &str) -> String {
    format!("{:+.4}{unit}, 95% interval [{:+.4}, {:+.4}]{unit}", c.observed * scale, c.low * scale, c.high * scale)
}

fn print_judgement(j: &Judgement, model: &str) -> CmdResult {
    let name = Path::new(&j.trace).file_name().and_then(|s| s.to_str()).unwrap_or(&j.trace).to_string();
    outln!("{name} on {model}: calibrate (default options) judged by the criterion fixed in docs/calibrate.md; {} requests, {} rolling origins, {} held out", j.requests, j.folds.len(), j.held_out);
    let mut t = Table::new(["fitted on", "tested on", "model kept", "mean |error| model → calibrated", "within 150 µs", "RMS demerit"]);
    for f in &j.folds {
        t.row([
            format!("1–{}", f.origin),
            format!("{}–{}", f.origin + 1, f.end),
            (if f.model_kept { "yes" } else { "no" }).to_string(),
            format!("{:.4} → {:.4} ms", f.model.mean_abs_error_ms, f.calibrated.mean_abs_error_ms),
            format!("{:.1}% → {:.1}%", 100.0 * f.model.within_share, 100.0 * f.calibrated.within_share),
            format!("{:.4} → {:.4} ms", f.model.rms_demerit_ms, f.calibrated.rms_demerit_ms),
        ]);
    }
    out!("{}", t.render());
    for f in j.folds.iter().filter(|f| !f.moved.is_empty()) {
        let moved: Vec<String> = f.moved.iter().map(|(name, from, to)| format!("{name} {from:.4} → {to:.4}")).collect();
        outln!("fitted on 1–{}, moved: {}", f.origin, moved.join(", "));
    }
    let (m, c) = (&j.model_figures, &j.calibrated_figures);
    let how = format!("moving-block bootstrap, blocks of {} requests, {} resamples, percentile interval", j.block, JUDGE_RESAMPLES);
    outln!("held out: mean |error| {:.4} → {:.4} ms, change {} ({how})", m.mean_abs_error_ms, c.mean_abs_error_ms, interval(&j.error_change, 1.0, " ms"));
    outln!(
        "held out: within {:.0} µs {:.1}% → {:.1}%, change {}",
        JUDGE_WITHIN_MS * 1e3,
        100.0 * m.within_share,
        100.0 * c.within_share,
        interval(&j.within_change, 100.0, " points")
    );
    outln!(
        "held out: RMS demerit {:.4} → {:.4} ms, change {}; margin +{:.4} ms ({:.0}% of the model's)",
        m.rms_demerit_ms,
        c.rms_demerit_ms,
        interval(&j.demerit_change, 1.0, " ms"),
        j.demerit_margin_ms,
        100.0 * JUDGE_DEMERIT_MARGIN
    );
    outln!("verdict: {} ({})", j.verdict.name(), j.verdict.reason());
    outln!();
    Ok(())
}
