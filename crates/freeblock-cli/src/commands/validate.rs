//! `freeblock validate`: replay real-drive traces on their DiskSim models and compare with the
//! measured service times and DiskSim 4.0's own results.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use freeblock_disk::{library, Disk};

use super::args::shared_dir;
use crate::output::{print_json, CmdResult};
use crate::table::Table;

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
        let shared = shared_dir(self.shared.as_ref());
        DISKSIM_RESULTS
            .iter()
            .map(|(stem, ..)| {
                (
                    shared.join("disksim-validation").join(format!("{stem}.trace")),
                    shared.join("disksim-models").join(format!("{stem}.diskspecs")).display().to_string(),
                )
            })
            .collect()
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

/// DiskSim 4.0's published results on the shared traces: (trace stem, measured mean ms, DiskSim
/// mean ms, DiskSim RMS demerit ms).
pub(crate) const DISKSIM_RESULTS: [(&str, f64, f64, f64); 2] = [("atlas10k", 3.893, 3.971, 0.268), ("hp_c2247a", 15.298, 15.315, 0.090)];

pub fn validate(a: &ValidateArgs) -> CmdResult {
    let pairs = a.measured.pairs();
    let mut results = Vec::new();
    for (trace, model) in &pairs {
        // The disk's bus is part of DiskSim's system configuration, the `.parv` next to the trace.
        let disk: Arc<Disk> = freeblock::validate::disk_for_trace(library::load(model)?, trace)?;
        let v = freeblock::validate::validate(disk, trace)?;
        let stem = trace.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let reference = DISKSIM_RESULTS.iter().find(|r| r.0 == stem);
        results.push(serde_json::json!({
            "trace": v.trace,
            "model": model,
            "requests": v.requests,
            "measured_mean_ms": v.measured_mean_ms,
            "simulated_mean_ms": v.simulated_mean_ms,
            "rms_demerit_ms": v.rms_demerit_ms,
            "rms_demerit_pct": v.rms_demerit_pct,
            "rms_demerit_exact_ms": v.rms_demerit_exact_ms,
            "disksim_mean_ms": reference.map(|r| r.2),
            "disksim_rms_demerit_ms": reference.map(|r| r.3),
            "meets_disksim": reference.map(|r| v.rms_demerit_ms <= r.3),
        }));
    }
    if a.json {
        return print_json(&results);
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
    for r in &results {
        let ms = |k: &str| r[k].as_f64().map_or("—".to_string(), |v| format!("{v:.3} ms"));
        let ms4 = |k: &str| r[k].as_f64().map_or("—".to_string(), |v| format!("{v:.4} ms"));
        let verdict = match r["meets_disksim"].as_bool() {
            Some(true) => "as good as DiskSim or better",
            Some(false) => "WORSE than DiskSim",
            None => "",
        };
        let name = Path::new(r["trace"].as_str().unwrap_or("")).file_name().and_then(|s| s.to_str()).unwrap_or("").to_string();
        t.row([
            name,
            r["requests"].to_string(),
            ms("measured_mean_ms"),
            ms("simulated_mean_ms"),
            ms4("rms_demerit_ms"),
            ms4("rms_demerit_exact_ms"),
            ms("disksim_mean_ms"),
            ms("disksim_rms_demerit_ms"),
            verdict.to_string(),
        ]);
    }
    outln!("RMS demerit as DiskSim's `rms` tool computes it (binned CDFs); \"exact samples\": the same distance between the raw samples' CDFs.");
    out!("{}", t.render());
    Ok(())
}
