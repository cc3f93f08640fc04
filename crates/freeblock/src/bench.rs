//! Simulator speed: simulated requests per wall-clock second on the Atlas 10K, for the cases the
//! foundation issue sets targets for. A benchmark, not a test: the figures depend on the machine.

use std::sync::Arc;
use std::time::Instant;

use freeblock_disk::{library, Disk};
use serde::Serialize;

use crate::error::Result;
use crate::sched::SchedulerSpec;
use crate::sim::{SimConfig, Simulation};
use crate::workload::{RandomSpec, WorkloadSpec};

/// One measured case.
#[derive(Debug, Clone, Serialize)]
pub struct SpeedRow {
    /// What was run.
    pub case: String,
    /// Requests simulated.
    pub requests: u64,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// Simulated requests per wall-clock second.
    pub requests_per_s: f64,
    /// The target on one core of the project machine, when it sets one.
    pub target_per_s: Option<f64>,
    /// Peak resident memory of the process after the case, MB (Linux only; 0 elsewhere).
    pub peak_rss_mb: f64,
}

/// Peak resident set size of this process, MB (reads `/proc/self/status`).
#[must_use]
pub fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Runs `requests` random 4 KB requests on the Atlas 10K under `scheduler` with `mpl` requests
/// outstanding, and times it. `cache` keeps the model's on-disk cache (DiskSim's buffer
/// controller: segments, read-ahead, write-back); without it the drive is the media model the
/// paper reproductions use.
///
/// # Errors
/// Setup errors only.
pub fn time_case(scheduler: SchedulerSpec, mpl: u32, requests: u64, cache: bool) -> Result<SpeedRow> {
    let spec = library::get("atlas10k")?;
    let disk = Arc::new(Disk::new(if cache { spec } else { spec.without_cache() })?);
    let spec = WorkloadSpec::Random(RandomSpec { count: Some(requests), ..RandomSpec::default() });
    let workload = spec.build(disk.capacity(), 1)?;
    let config = SimConfig { scheduler, mpl, ..SimConfig::default() };
    let t0 = Instant::now();
    let report = Simulation::new(disk, workload, config).run(None)?;
    let wall = t0.elapsed().as_secs_f64();
    let name = format!("{scheduler}, {mpl} outstanding, cache {}", if cache { "on" } else { "off" });
    Ok(SpeedRow {
        case: name,
        requests: report.requests,
        wall_s: wall,
        requests_per_s: report.requests as f64 / wall.max(1e-9),
        target_per_s: None,
        peak_rss_mb: peak_rss_mb(),
    })
}

/// The foundation issue's four speed cases (FCFS with 1 and 8 outstanding, SPTF with 8 and 32)
/// on the media model, where the targets apply, then the same with the on-disk cache on.
///
/// # Errors
/// Setup errors only.
pub fn simulator_speed(requests: u64) -> Result<Vec<SpeedRow>> {
    let cases = [
        (SchedulerSpec::Fcfs, 1, Some(1.5e6)),
        (SchedulerSpec::Fcfs, 8, Some(1.5e6)),
        (SchedulerSpec::Sptf, 8, Some(1.0e6)),
        (SchedulerSpec::Sptf, 32, Some(5.0e5)),
    ];
    let mut rows = Vec::new();
    for cache in [false, true] {
        for (s, mpl, target) in cases {
            let mut row = time_case(s, mpl, requests, cache)?;
            row.target_per_s = if cache { None } else { target };
            rows.push(row);
        }
    }
    Ok(rows)
}
