//! Fidelity against real drives: replay a DiskSim "validate" trace (measured on a real drive) on
//! a disk model and compare the simulated response times with the measured ones.
//!
//! The figure of merit is the **RMS demerit** (Ruemmler and Wilkes; DiskSim's `rms` tool): the
//! root-mean-square horizontal distance between the measured and the simulated response-time
//! CDFs, sampled at quantiles 0.0001, 0.0002, …, 1.0 with linear interpolation. Lower is better; it
//! is in the same unit as the times (ms here).
//!
//! The trace is replayed closed-loop with one request outstanding: each request is issued when the
//! previous one completes plus the delay the trace recorded. Parameters come from the model files
//! only; nothing is fitted to the trace.

use std::path::Path;
use std::sync::Arc;

use freeblock_disk::Disk;
use serde::Serialize;

use crate::error::Result;
use crate::sim::{SimConfig, Simulation};
use crate::workload::{open_trace, TraceFormat};

/// Outcome of one validation run.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    /// Trace file.
    pub trace: String,
    /// Disk model name.
    pub disk: String,
    /// Requests replayed.
    pub requests: u64,
    /// Mean measured service time, ms.
    pub measured_mean_ms: f64,
    /// Mean simulated service time, ms.
    pub simulated_mean_ms: f64,
    /// RMS demerit between the two CDFs, ms.
    pub rms_demerit_ms: f64,
    /// RMS demerit as a percentage of the measured mean.
    pub rms_demerit_pct: f64,
}

/// Value at quantile `q` of sorted `xs`, linearly interpolated between order statistics.
#[must_use]
pub fn quantile_sorted(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let pos = q.clamp(0.0, 1.0) * (xs.len() - 1) as f64;
    let i = pos.floor() as usize;
    let frac = pos - i as f64;
    if i + 1 < xs.len() { xs[i] + frac * (xs[i + 1] - xs[i]) } else { xs[i] }
}

/// RMS horizontal distance between the CDFs of `a` and `b`, sampled at quantiles 1/10000 … 1.
#[must_use]
pub fn rms_demerit(a: &[f64], b: &[f64]) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let n = 10_000;
    let sum: f64 = (1..=n)
        .map(|k| {
            let q = f64::from(k) / f64::from(n);
            let d = quantile_sorted(&a, q) - quantile_sorted(&b, q);
            d * d
        })
        .sum();
    (sum / f64::from(n)).sqrt()
}

/// Replays `trace` (DiskSim validate format) on `disk`.
///
/// # Errors
/// A malformed trace line (naming file and line) or a request outside the disk.
pub fn validate(disk: Arc<Disk>, trace: &Path) -> Result<Validation> {
    let workload = Box::new(open_trace(trace, TraceFormat::Validate)?.with_capacity(disk.capacity()));
    let config = SimConfig { keep_records: true, ..SimConfig::default() };
    let name = disk.spec().name.clone();
    let report = Simulation::new(disk, workload, config).run(None)?;
    let measured: Vec<f64> = report.records.iter().map(|r| r.measured_ns.unwrap_or(0) as f64 / 1e6).collect();
    let simulated: Vec<f64> = report.records.iter().map(|r| (r.end_ns - r.arrival_ns) as f64 / 1e6).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let demerit = rms_demerit(&measured, &simulated);
    Ok(Validation {
        trace: trace.display().to_string(),
        disk: name,
        requests: report.requests,
        measured_mean_ms: mean(&measured),
        simulated_mean_ms: mean(&simulated),
        rms_demerit_ms: demerit,
        rms_demerit_pct: 100.0 * demerit / mean(&measured).max(f64::MIN_POSITIVE),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demerit_of_identical_is_zero_and_of_shift_is_shift() {
        let a: Vec<f64> = (0..1000).map(f64::from).collect();
        assert_eq!(rms_demerit(&a, &a), 0.0);
        let b: Vec<f64> = a.iter().map(|x| x + 2.5).collect();
        assert!((rms_demerit(&a, &b) - 2.5).abs() < 1e-9);
    }
}
