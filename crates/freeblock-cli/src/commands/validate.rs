//! `freeblock validate`: replay real-drive traces on their DiskSim models and compare with the
//! measured service times and DiskSim 4.0's own results. The work and DiskSim's figures are
//! [`freeblock_fit::validate`]'s; this module finds the shared data folder and prints.

use std::path::{Path, PathBuf};

use clap::Args;

use super::args::shared_dir;
use crate::output::{print_json, CmdResult};
use freeblock_repro::table::Table;

/// A measured trace and the model to replay it on, or every pair of the shared validation data.
/// `freeblock validate` and `freeblock calibrate` take the same three options.
#[derive(Debug, Args)]
pub struct MeasuredTraceArgs {
    /// A DiskSim "validate" trace of measured service times. Default: every trace in
    /// ../shared/disksim-validation, each on its DiskSim model.
    #[arg(long, requires = "model")]
    pub trace: Option<PathBuf>,
    /// The disk to replay it on: a DiskSim `.diskspecs`, a TOML spec or a built-in name.
    #[arg(long, requires = "trace")]
    pub model: Option<String>,
    /// Folder of the shared validation data (default: ../shared next to the project).
    #[arg(long)]
    pub shared: Option<PathBuf>,
}

impl MeasuredTraceArgs {
    /// The (trace, model) pairs to run: the one given, or every shared one.
    pub(crate) fn pairs(&self) -> Vec<(PathBuf, String)> {
        if let (Some(t), Some(m)) = (&self.trace, &self.model) {
            return vec![(t.clone(), m.clone())];
        }
        freeblock_fit::validate::shared_pairs(&shared_dir(self.shared.as_ref()))
    }
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub measured: MeasuredTraceArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn validate(a: &ValidateArgs) -> CmdResult {
    let mut results = Vec::new();
    for (trace, model) in &a.measured.pairs() {
        results.push(freeblock_fit::validate::validate_model(trace, model)?);
    }
    if a.json {
        let json: Vec<serde_json::Value> = results
            .iter()
            .map(|c| {
                let v = &c.validation;
                serde_json::json!({
                    "trace": v.trace,
                    "model": c.model,
                    "requests": v.requests,
                    "measured_mean_ms": v.measured_mean_ms,
                    "simulated_mean_ms": v.simulated_mean_ms,
                    "rms_demerit_ms": v.rms_demerit_ms,
                    "rms_demerit_pct": v.rms_demerit_pct,
                    "rms_demerit_exact_ms": v.rms_demerit_exact_ms,
                    "disksim_mean_ms": c.disksim.map(|d| d.mean_ms),
                    "disksim_rms_demerit_ms": c.disksim.map(|d| d.rms_demerit_ms),
                    "meets_disksim": c.meets_disksim(),
                })
            })
            .collect();
        return print_json(&json);
    }
    let mut t = Table::new([
        "trace",
        "requests",
        "measured mean",
        "our mean",
        "our RMS demerit",
        "(exact samples)",
        "DiskSim 4.0 mean",
        "DiskSim RMS demerit",
        "verdict",
    ]);
    // A figure JSON cannot hold (not finite) shows as missing, as in the JSON.
    let ms = |x: Option<f64>| x.filter(|v| v.is_finite()).map_or("—".to_string(), |v| format!("{v:.3} ms"));
    let ms4 = |x: f64| Some(x).filter(|v| v.is_finite()).map_or("—".to_string(), |v| format!("{v:.4} ms"));
    for c in &results {
        let v = &c.validation;
        let name = Path::new(&v.trace).file_name().and_then(|s| s.to_str()).unwrap_or("").to_string();
        t.row([
            name,
            v.requests.to_string(),
            ms(Some(v.measured_mean_ms)),
            ms(Some(v.simulated_mean_ms)),
            ms4(v.rms_demerit_ms),
            ms4(v.rms_demerit_exact_ms),
            ms(c.disksim.map(|d| d.mean_ms)),
            ms(c.disksim.map(|d| d.rms_demerit_ms)),
            c.verdict().to_string(),
        ]);
    }
    outln!("RMS demerit as DiskSim's `rms` tool computes it (binned CDFs); \"exact samples\": the same distance between the raw samples' CDFs.");
    out!("{}", t.render());
    Ok(())
}
