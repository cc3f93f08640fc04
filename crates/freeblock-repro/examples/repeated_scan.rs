//! A repeated freeblock scan's steady state (issue 35): a repeated 4 KB scan of the Atlas 10K under OLTP (MPL 20, FCFS) with
//! chosen overlap settings and decision budget; prints its steady state both ways (from the first pass end, and once the
//! passes in flight are full, with the inventory) and every pass's start and end.
//!
//! Usage: `repeated_scan SIMULATED_S PASSES_IN_FLIGHT NEXT_PASS_AT [BUDGET]` (budget: the planner's default).
use std::sync::Arc;

use freeblock::freeblock::{Freeblock, FreeblockConfig, PlannerKind, TaskSpec};
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{OltpSpec, WorkloadSpec};
use freeblock_disk::library;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let simulated_s: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000.0);
    let in_flight: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(8);
    let next_at: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0.5);
    let max_tracks: Option<u32> = args.get(4).and_then(|s| s.parse().ok());
    let disk = library::media("atlas10k").expect("disk");
    let scan = TaskSpec::Scan { block_bytes: 4096, passes: 0, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: Some(next_at), passes_in_flight: Some(in_flight) };
    let fb = Freeblock::new(Arc::clone(&disk), FreeblockConfig { planner: PlannerKind::MultiTrack, tasks: vec![scan], max_tracks, ..FreeblockConfig::default() }).expect("config");
    let spec = OltpSpec::default();
    let think_ms = spec.think_time_ns() as f64 / 1e6;
    let workload = WorkloadSpec::Oltp(spec).build(disk.capacity(), 1).expect("workload");
    let sim = SimConfig { scheduler: SchedulerSpec::Fcfs, mpl: 20, think_ms, max_time_s: simulated_s, ..SimConfig::default() };
    let run = Simulation::new(Arc::clone(&disk), workload, sim).with_freeblock(fb).run(None).expect("run");
    let rep = run.freeblock.expect("freeblock");
    let blocks = disk.capacity() / (4096 / u64::from(disk.spec().sector_bytes));
    let passes = rep.tasks.first().map_or(&[][..], |t| &t.passes[..]);
    let progress = rep.tasks.first().map_or(&[][..], |t| &t.progress[..]);
    let steady = freeblock::freeblock::bandwidth::steady_state(passes, (blocks * 4096) as f64, rep.potential_mb_s);
    let settled = freeblock::freeblock::settled_steady_state(passes, progress, in_flight, (blocks * 4096) as f64, rep.potential_mb_s);
    println!("steady {simulated_s} s, {in_flight} in flight, next at {next_at}, budget {max_tracks:?}: {steady:?}; efficiency {:.3}; passes ended {}; delayed {}", rep.efficiency, passes.len(), rep.delayed_foreground);
    println!("settled (from the first pass end with the passes in flight full): {settled:?}");
    for (k, p) in passes.iter().enumerate() {
        println!("pass {k}: {:.0} s to {:.0} s", p.start_ns as f64 / 1e9, p.end_ns as f64 / 1e9);
    }
}
