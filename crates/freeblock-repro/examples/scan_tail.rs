//! The tail of a complete freeblock scan (issue 35): one complete scan of the Atlas 10K under OLTP (MPL 20, FCFS) for one
//! planner, budget of other tracks per decision and idle threshold; prints the decision-time
//! quantiles, the one-pass share, when each fraction of the scan was reached, and the share of
//! the potential realised in each phase of the pass (from the engine's timeline).
//!
//! Usage: `scan_tail [single|two|multi] [BUDGET] [IDLE_MS|none] [MAX_REQUESTS] [balance|nobalance] [SEED]`
//! (defaults: two_track, the planner's default budget, no idle work, 2,000,000, the planner's default balance, seed 1).
use std::sync::Arc;

use freeblock::freeblock::{Freeblock, FreeblockConfig, PlannerKind, TaskSpec};
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{OltpSpec, WorkloadSpec};
use freeblock_disk::library;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let planner = match args.get(1).map(String::as_str) {
        Some("single") => PlannerKind::SingleTrack,
        Some("multi") => PlannerKind::MultiTrack,
        _ => PlannerKind::TwoTrack,
    };
    let max_tracks: Option<u32> = args.get(2).and_then(|s| s.parse().ok());
    let idle_after_ms: Option<f64> = args.get(3).and_then(|s| s.parse().ok());
    let balance: Option<bool> = args.get(5).map(|s| s == "balance");
    let cap: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(2_000_000);
    let seed: u64 = args.get(6).and_then(|s| s.parse().ok()).unwrap_or(1);
    let disk = library::media("atlas10k").expect("disk");
    let scan = TaskSpec::Scan { block_bytes: 4096, passes: 1, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: None, passes_in_flight: None };
    let config = FreeblockConfig { planner, tasks: vec![scan], max_tracks, idle_after_ms, balance, timeline_s: 10.0, ..FreeblockConfig::default() };
    let mut fb = Freeblock::new(Arc::clone(&disk), config).expect("config");
    fb.measure_decisions();
    let spec = OltpSpec::default();
    let think_ms = spec.think_time_ns() as f64 / 1e6;
    let workload = WorkloadSpec::Oltp(spec).build(disk.capacity(), seed).expect("workload");
    let sim = SimConfig { scheduler: SchedulerSpec::Fcfs, mpl: 20, think_ms, max_requests: cap, ..SimConfig::default() };
    let t0 = std::time::Instant::now();
    let (run, fb) = Simulation::new(Arc::clone(&disk), workload, sim).with_freeblock(fb).run_keeping_freeblock(None).expect("run");
    let wall = t0.elapsed().as_secs_f64();
    let fb = fb.expect("freeblock");
    let rep = run.freeblock.expect("freeblock");
    let h = fb.decision_times().cloned().unwrap_or_default();
    let task = &rep.tasks[0];
    let pass = task.passes.first();
    let share = pass.map(|p| (p.blocks * 4096) as f64 / 1e6 / ((p.end_ns - p.start_ns) as f64 / 1e9) / rep.potential_mb_s);
    println!("planner {planner} budget {max_tracks:?} idle {idle_after_ms:?} balance {balance:?} seed {seed}: requests {} decisions {} examined/decision {:.2} median {:.1} p90 {:.1} p99 {:.1} p99.9 {:.1} max {:.1} us; one-pass share {share:?}; efficiency {:.3}; idle MB/s {:.3}; delayed {}; wall {wall:.0} s",
        run.requests, rep.decisions, rep.tracks_examined as f64 / rep.decisions.max(1) as f64, h.quantile(0.5) / 1e3, h.quantile(0.9) / 1e3, h.quantile(0.99) / 1e3, h.quantile(0.999) / 1e3, h.quantile(1.0) / 1e3, rep.efficiency, rep.idle_mb_s, rep.delayed_foreground);
    let end = pass.map_or(rep.duration_s, |p| p.end_ns as f64 / 1e9);
    let when = |f: f64| task.progress.iter().find(|p| p.pass == 0 && p.fraction >= f).map(|p| p.time_ns as f64 / 1e9);
    let marks = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0];
    let line: Vec<String> = marks.iter().map(|&f| format!("{f}: {:?}", when(f).map(|t| format!("{t:.0} s ({:.1}%)", 100.0 * t / end)))).collect();
    println!("  reached (share of pass time): {}", line.join(", "));
    // Share of the potential per tenth of the pass time.
    for k in 0..10 {
        let (a, b) = (end * k as f64 / 10.0, end * (k + 1) as f64 / 10.0);
        let (mut pot, mut free, mut seek, mut fbytes) = (0u64, 0u64, 0u64, 0u64);
        for row in rep.timeline.iter().filter(|r| r.start_s >= a && r.start_s < b) {
            pot += row.accounts.potential_ns;
            free += row.accounts.free_transfer_ns;
            seek += row.accounts.extra_seek_ns;
            fbytes += row.accounts.free_bytes;
        }
        println!("  tenth {k}: free transfer {:.3} extra seek {:.3} of potential time; free MB {:.0}", free as f64 / pot.max(1) as f64, seek as f64 / pot.max(1) as f64, fbytes as f64 / 1e6);
    }
}
