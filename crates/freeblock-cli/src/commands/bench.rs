//! `freeblock bench`: simulator speed and the freeblock planner's decision time and memory, each
//! beside its target. The measurements, the targets and the report are
//! [`freeblock_repro::bench`]'s.

use clap::Args;
use freeblock_repro::bench::{run, AllocationProbe, BenchSettings, STEADY_NEXT_PASS_AT, STEADY_PASSES_IN_FLIGHT};

use crate::output::CmdResult;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Simulator-speed rows: requests per measurement.
    #[arg(long, default_value_t = 1_000_000)]
    pub requests: u64,
    /// Which rows: all, speed (simulated requests per second) or freeblock (planner decision
    /// time and registered-set memory).
    #[arg(long, default_value = "all")]
    pub only: String,
    /// Freeblock rows: foreground requests per decision-time measurement.
    #[arg(long, default_value_t = 50_000)]
    pub decision_requests: u64,
    /// Freeblock rows: most foreground requests of the complete-scan measurement.
    #[arg(long, default_value_t = 2_000_000)]
    pub scan_cap: u64,
    /// Freeblock rows: simulated seconds of the repeated scan whose steady state is measured
    /// (0: leave it out). About 20 minutes of wall-clock time per 40,000 s on one core.
    #[arg(long, default_value_t = 40_000.0)]
    pub steady_s: f64,
    /// Freeblock rows: the repeated scan's most passes in flight (at least 2).
    #[arg(long, default_value_t = STEADY_PASSES_IN_FLIGHT)]
    pub passes_in_flight: u32,
    /// Freeblock rows: the repeated scan starts another pass once the newest has read this share
    /// of the disk (0 to 1).
    #[arg(long, default_value_t = STEADY_NEXT_PASS_AT)]
    pub next_pass_at: f64,
    /// Freeblock rows: the planner's budget of other tracks examined per decision for the
    /// decision-time rows (default: the planner's own, 25, or 12 for multi_track; 0 = no limit).
    #[arg(long)]
    pub max_tracks: Option<u32>,
    /// Freeblock rows in a few seconds: 2000 requests per measurement, the "complete scan" capped
    /// at 4000 (so it does not complete), the repeated scan 200 simulated seconds (no pass ends).
    #[arg(long)]
    pub quick: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn bench(a: &BenchArgs, probe: Option<&'static dyn AllocationProbe>) -> CmdResult {
    let settings = BenchSettings {
        requests: a.requests,
        only: a.only.clone(),
        decision_requests: a.decision_requests,
        scan_cap: a.scan_cap,
        steady_s: a.steady_s,
        passes_in_flight: a.passes_in_flight,
        next_pass_at: a.next_pass_at,
        max_tracks: a.max_tracks,
        quick: a.quick,
        json: a.json,
    };
    out!("{}", run(&settings, probe)?.output);
    Ok(())
}
