//! Fidelity against real drives: replay a DiskSim "validate" trace (measured on a real drive) on
//! a disk model and compare the simulated response times with the measured ones.
//!
//! The figure of merit is the **RMS demerit** (Ruemmler and Wilkes): the root-mean-square
//! horizontal distance between the measured and the simulated service-time CDFs, sampled at
//! quantiles 0.0001, 0.0002, …, 1.0. Lower is better; it is in the same unit as the times (ms).
//!
//! [`rms_demerit`] computes it exactly as DiskSim 4.0's validation does (its `valid/runvalid`
//! runs `rms X.outv X.outv -1 -1 1`), so that our figure and DiskSim's published ones are
//! comparable: both service-time sets are first binned into DiskSim's histogram (the `statdefs`
//! entries "Trace access time" and "Physical access time": 1750 buckets over whole
//! microseconds, from 0 in steps of 1 µs that grow by 1 % of the bucket start), each CDF is the
//! polyline through (bucket upper edge, cumulative fraction printed to 6 decimals), and the
//! quantiles are read off those polylines. [`rms_demerit_exact`] is the same distance between
//! the empirical CDFs of the raw samples (order statistics, linearly interpolated); it is
//! reported too.
//!
//! The trace is replayed closed-loop with one request outstanding: each request is issued when the
//! previous one completes plus the delay the trace recorded. Parameters come from the model files
//! only (the drive's DiskSim files and, for its bus, the DiskSim system configuration `.parv`
//! kept next to the trace: see [`disk_for_trace`]); nothing is fitted to the trace.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use freeblock_disk::Disk;
use serde::Serialize;

pub use freeblock::experiment::{apply_parv_beside, disk_for_trace};
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{open_trace, TraceFormat};
use freeblock::Result;

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
    /// RMS demerit between the two CDFs as DiskSim's `rms` tool computes it, ms.
    pub rms_demerit_ms: f64,
    /// RMS demerit as a percentage of the measured mean.
    pub rms_demerit_pct: f64,
    /// RMS demerit between the empirical CDFs of the raw samples, ms.
    pub rms_demerit_exact_ms: f64,
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

/// RMS horizontal distance between the empirical CDFs of `a` and `b` (order statistics, linearly
/// interpolated), sampled at quantiles 1/10000 … 1.
#[must_use]
pub fn rms_demerit_exact(a: &[f64], b: &[f64]) -> f64 {
    body_demerit(a, b, 1.0)
}

/// The same distance over the CDFs' body only: quantiles 1/10000 up to `body` (1: the whole
/// CDF, [`rms_demerit_exact`]). Calibration's fit score leaves the longest requests out because
/// there a replay's figure is decided by chance (see `calibrate`'s module notes).
#[must_use]
pub fn body_demerit(a: &[f64], b: &[f64], body: f64) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let points = 10_000u32;
    let last = ((body.clamp(0.0, 1.0) * f64::from(points)).round() as u32).max(1);
    let sum: f64 = (1..=last)
        .map(|k| {
            let q = f64::from(k) / f64::from(points);
            let d = quantile_sorted(&a, q) - quantile_sorted(&b, q);
            d * d
        })
        .sum();
    (sum / f64::from(last)).sqrt()
}

/// Buckets of DiskSim's access-time histogram (`statdefs`: "Distribution size: 1750").
const DISKSIM_BUCKETS: usize = 1750;

/// Start of each bucket of DiskSim's access-time histogram, µs ("Start 0 step 1 grow 1": each
/// start is the previous one plus 1 plus 1 % of it, rounded down).
fn disksim_bucket_starts() -> &'static [i64] {
    static STARTS: std::sync::OnceLock<Vec<i64>> = std::sync::OnceLock::new();
    STARTS.get_or_init(|| {
        let mut v = Vec::with_capacity(DISKSIM_BUCKETS);
        let mut b: i64 = 0;
        for _ in 0..DISKSIM_BUCKETS {
            v.push(b);
            b += 1 + b.abs() / 100;
        }
        v
    })
}

/// The CDF DiskSim prints for service times `ms`: `(bucket upper edge ms, cumulative fraction to 6
/// decimals)` per bucket, up to the first point at 1 (DiskSim `stat_update` and
/// `stat_print_large_dist`).
fn disksim_cdf(ms: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let starts = disksim_bucket_starts();
    let mut counts = vec![0u64; DISKSIM_BUCKETS];
    for &v in ms {
        let us = (v * 1000.0) as i64;
        // The bucket after the last start at or below the value; the last bucket takes the rest.
        let below = starts.partition_point(|&s| s <= us);
        let i = if below == 0 { 0 } else { below.min(DISKSIM_BUCKETS - 1) };
        counts[i] += 1;
    }
    let n = ms.len().max(1) as f64;
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let mut cum = 0.0;
    for (i, &c) in counts.iter().enumerate() {
        cum += c as f64 / n;
        let y: f64 = format!("{cum:.6}").parse().unwrap_or(cum);
        xs.push(starts[i] as f64 / 1000.0);
        ys.push(y);
        if y >= 1.0 {
            break;
        }
    }
    (xs, ys)
}

/// RMS horizontal distance between the CDFs of `a` and `b` as DiskSim 4.0's `rms` tool computes it
/// on its histograms (see the module notes), sampled at quantiles 0.0001, 0.0002, … up to 1.
#[must_use]
pub fn rms_demerit(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (x1, y1) = disksim_cdf(a);
    let (x2, y2) = disksim_cdf(b);
    let at = |x: &[f64], y: &[f64], i: &mut usize, p: f64| -> f64 {
        while *i + 1 < y.len() && y[*i] < p {
            *i += 1;
        }
        let j = (*i).max(1);
        let span = y[j] - y[j - 1];
        let f = if span > 0.0 { (p - y[j - 1]) / span } else { 1.0 };
        x[j - 1] + f * (x[j] - x[j - 1])
    };
    let (mut i1, mut i2) = (0usize, 0usize);
    let (mut sum, mut count) = (0.0, 0u32);
    // DiskSim steps the quantile by repeated addition; so do we (same number of points).
    let mut p = 0.0001;
    while p <= 1.0 {
        let d = at(&x1, &y1, &mut i1, p) - at(&x2, &y2, &mut i2, p);
        sum += d * d;
        count += 1;
        p += 0.0001;
    }
    (sum / f64::from(count.max(1))).sqrt()
}

/// One replayed request: what the trace measured and what the model did, ms.
///
/// A replay with the recorded delays keeps step with the drive's rotation (each media access
/// ends when its last sector passes the head, on the model as on the drive), so a request's
/// error splits usefully in two: whole revolutions, paid more (positive) or fewer than on the
/// drive, and the *fine* error within half a revolution (docs/calibrate.md, "Session 19").
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Replayed {
    /// Read or write.
    pub op: freeblock_disk::Op,
    /// First LBN.
    pub lbn: u64,
    /// Sectors.
    pub sectors: u32,
    /// Cylinder of the first LBN on the model.
    pub cylinder: u32,
    /// Measured service time.
    pub measured_ms: f64,
    /// Simulated service time.
    pub simulated_ms: f64,
    /// Revolutions the model paid more (positive) or fewer than the drive: the error divided by
    /// a revolution, rounded.
    pub revolutions: i64,
    /// The error less those revolutions, within ± half a revolution.
    pub fine_error_ms: f64,
}

/// Replays `trace` (DiskSim validate format) on `disk`, request by request.
///
/// # Errors
/// A malformed trace line (naming file and line) or a request outside the disk.
pub fn replay(disk: Arc<Disk>, trace: &Path) -> Result<Vec<Replayed>> {
    let workload = Box::new(open_trace(trace, TraceFormat::Validate)?.with_capacity(disk.capacity()));
    let config = SimConfig { keep_records: true, ..SimConfig::default() };
    let revolution_ms = disk.revolution_ns() as f64 / 1e6;
    let layout_disk = Arc::clone(&disk);
    let report = Simulation::new(disk, workload, config).run(None)?;
    Ok(report
        .records
        .iter()
        .map(|r| {
            let (measured_ms, simulated_ms) = (r.measured_ns.unwrap_or(0) as f64 / 1e6, (r.end_ns - r.arrival_ns) as f64 / 1e6);
            let turns = ((simulated_ms - measured_ms) / revolution_ms).round();
            Replayed {
                op: r.op,
                lbn: r.lbn,
                sectors: r.sectors,
                // The simulation served it, so the LBN maps.
                cylinder: layout_disk.layout().lbn_to_pbn(r.lbn).map_or(0, |p| p.cylinder),
                measured_ms,
                simulated_ms,
                revolutions: turns as i64,
                fine_error_ms: simulated_ms - measured_ms - turns * revolution_ms,
            }
        })
        .collect())
}

/// Replays `trace` (DiskSim validate format) on `disk`.
///
/// # Errors
/// A malformed trace line (naming file and line) or a request outside the disk.
pub fn validate(disk: Arc<Disk>, trace: &Path) -> Result<Validation> {
    let name = disk.spec().name.clone();
    let records = replay(disk, trace)?;
    let measured: Vec<f64> = records.iter().map(|r| r.measured_ms).collect();
    let simulated: Vec<f64> = records.iter().map(|r| r.simulated_ms).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let demerit = rms_demerit(&measured, &simulated);
    let exact = rms_demerit_exact(&measured, &simulated);
    Ok(Validation {
        trace: trace.display().to_string(),
        disk: name,
        requests: records.len() as u64,
        measured_mean_ms: mean(&measured),
        simulated_mean_ms: mean(&simulated),
        rms_demerit_ms: demerit,
        rms_demerit_pct: 100.0 * demerit / mean(&measured).max(f64::MIN_POSITIVE),
        rms_demerit_exact_ms: exact,
    })
}

/// DiskSim 4.0's published validation of one of the shared measured traces (its `valid/`
/// results): the figures `freeblock validate` prints beside ours.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DiskSimPublished {
    /// The trace's file stem in the shared `disksim-validation` folder (its model has the same
    /// stem in `disksim-models`).
    pub trace: &'static str,
    /// Mean measured service time, ms.
    pub measured_mean_ms: f64,
    /// DiskSim's mean simulated service time, ms.
    pub mean_ms: f64,
    /// DiskSim's RMS demerit over the whole trace, ms.
    pub rms_demerit_ms: f64,
}

/// DiskSim 4.0's published results on the shared traces.
pub const DISKSIM_RESULTS: [DiskSimPublished; 2] = [
    DiskSimPublished { trace: "atlas10k", measured_mean_ms: 3.893, mean_ms: 3.971, rms_demerit_ms: 0.268 },
    DiskSimPublished { trace: "hp_c2247a", measured_mean_ms: 15.298, mean_ms: 15.315, rms_demerit_ms: 0.090 },
];

/// DiskSim's published figures for `trace`, found by its file stem; `None` for a trace DiskSim
/// did not publish.
#[must_use]
pub fn disksim_published(trace: &Path) -> Option<DiskSimPublished> {
    let stem = trace.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    DISKSIM_RESULTS.iter().find(|r| r.trace == stem).copied()
}

/// Every (trace, model) pair DiskSim published figures for, in the shared data folder `shared`:
/// `disksim-validation/<stem>.trace` on `disksim-models/<stem>.diskspecs`.
#[must_use]
pub fn shared_pairs(shared: &Path) -> Vec<(PathBuf, String)> {
    DISKSIM_RESULTS
        .iter()
        .map(|r| {
            (
                shared.join("disksim-validation").join(format!("{}.trace", r.trace)),
                shared.join("disksim-models").join(format!("{}.diskspecs", r.trace)).display().to_string(),
            )
        })
        .collect()
}

/// One validation beside DiskSim's published figures for the same trace.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The model as given (a DiskSim `.diskspecs`, a TOML spec or a built-in name).
    pub model: String,
    /// Our replay's figures.
    pub validation: Validation,
    /// DiskSim's, when it published this trace.
    pub disksim: Option<DiskSimPublished>,
}

impl Compared {
    /// Our RMS demerit is DiskSim's or lower; `None` without a published figure.
    #[must_use]
    pub fn meets_disksim(&self) -> Option<bool> {
        self.disksim.map(|d| self.validation.rms_demerit_ms <= d.rms_demerit_ms)
    }

    /// [`Compared::meets_disksim`] in words (empty without a published figure).
    #[must_use]
    pub fn verdict(&self) -> &'static str {
        match self.meets_disksim() {
            Some(true) => "as good as DiskSim or better",
            Some(false) => "WORSE than DiskSim",
            None => "",
        }
    }
}

/// Replays `trace` on `model` (a DiskSim `.diskspecs`, a TOML spec or a built-in name; its bus
/// from the `.parv` beside the trace, [`disk_for_trace`]) and sets the result beside DiskSim's
/// published figures.
///
/// # Errors
/// A model that does not load, a malformed `.parv` or trace line, a request outside the disk.
pub fn validate_model(trace: &Path, model: &str) -> Result<Compared> {
    let disk = disk_for_trace(freeblock_disk::library::load(model)?, trace)?;
    let validation = validate(disk, trace)?;
    Ok(Compared { model: model.to_string(), validation, disksim: disksim_published(trace) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demerit_of_identical_is_zero_and_of_shift_is_shift() {
        let a: Vec<f64> = (0..1000).map(f64::from).collect();
        assert_eq!(rms_demerit_exact(&a, &a), 0.0);
        let b: Vec<f64> = a.iter().map(|x| x + 2.5).collect();
        assert!((rms_demerit_exact(&a, &b) - 2.5).abs() < 1e-9);
    }

    #[test]
    fn disksim_demerit_bins_like_disksim() {
        // Buckets: 0, 1, …, 100, 102, 104, … µs.
        let s = disksim_bucket_starts();
        assert_eq!((s[0], s[1], s[100], s[101], s[102]), (0, 1, 100, 102, 104));
        assert_eq!(s[DISKSIM_BUCKETS - 1], 2_049_165_458);
        // Identical samples: zero. A shift by a bucket-aligned amount is seen in full.
        let a: Vec<f64> = (0..2000).map(|i| 5.0 + f64::from(i) * 0.001).collect();
        assert_eq!(rms_demerit(&a, &a), 0.0);
        let one: Vec<f64> = vec![3.0005; 100];
        let two: Vec<f64> = vec![4.0005; 100];
        let d = rms_demerit(&one, &two);
        assert!((d - 1.0).abs() < 0.05, "{d}");
        // Values in one bucket spread uniformly over it: the CDF is the bucket's straight line.
        let (x, y) = disksim_cdf(&[0.0505, 0.0505]);
        assert_eq!((x.len(), x[51], y[50], y[51]), (52, 0.051, 0.0, 1.0));
    }

    #[test]
    fn published_figures_are_found_by_the_trace_stem_and_judge_ours() {
        let pairs = shared_pairs(Path::new("/shared"));
        assert_eq!(pairs.len(), DISKSIM_RESULTS.len());
        assert_eq!(pairs[1], (PathBuf::from("/shared/disksim-validation/hp_c2247a.trace"), "/shared/disksim-models/hp_c2247a.diskspecs".to_string()));
        let hp = disksim_published(&pairs[1].0).unwrap();
        assert_eq!((hp.mean_ms, hp.rms_demerit_ms), (15.315, 0.090));
        assert_eq!(disksim_published(Path::new("/elsewhere/other.trace")), None);
        let validation = |demerit: f64| Validation {
            trace: String::new(),
            disk: String::new(),
            requests: 1,
            measured_mean_ms: 1.0,
            simulated_mean_ms: 1.0,
            rms_demerit_ms: demerit,
            rms_demerit_pct: 0.0,
            rms_demerit_exact_ms: demerit,
        };
        let compared = |demerit: f64, disksim: Option<DiskSimPublished>| Compared { model: String::new(), validation: validation(demerit), disksim };
        assert_eq!(compared(0.090, Some(hp)).verdict(), "as good as DiskSim or better");
        assert_eq!(compared(0.0901, Some(hp)).meets_disksim(), Some(false));
        assert_eq!(compared(0.0, None).verdict(), "");
    }
}
