//! The log-structured layout in the engine: free cleaning never delays a foreground request,
//! requests served from memory complete with no disk time, runs are deterministic, and the
//! engine still refuses an empty translation from a policy that does not serve from memory.

use std::sync::Arc;

use freeblock::layout::lfs::CleanerKind;
use freeblock::layout::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo};
use freeblock::lfs_cleaning::{run_one, LfsCleaningConfig};
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::postmark::PostmarkSpec;
use freeblock::workload::{RandomSpec, WorkloadSpec};

/// A 24 MB log under 1500 transactions per phase: small enough for a test, busy enough to clean.
fn small() -> LfsCleaningConfig {
    LfsCleaningConfig { lfs_bytes: 24 << 20, cache_blocks: 512, postmark: PostmarkSpec { transactions: 1500, ..PostmarkSpec::default() }, ..LfsCleaningConfig::quick() }
}

#[test]
fn free_cleaning_never_delays_the_foreground() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    let (_, run) = run_one(&cfg, &disk, 0.7, CleanerKind::Freeblock).unwrap();
    assert!(run.stats.free_segments > 0 && run.stats.free_blocks_moved > 0, "free cleaning ran: {:?}", run.stats);
    assert_eq!(run.delayed_foreground, 0, "free means free");
    assert!(run.tps > 0.0);
    // The same run again gives the same answer.
    let (_, again) = run_one(&cfg, &disk, 0.7, CleanerKind::Freeblock).unwrap();
    assert_eq!(serde_json::to_string(&run.stats).unwrap(), serde_json::to_string(&again.stats).unwrap());
}

#[test]
fn the_foreground_cleaner_costs_time_that_ideal_takes_out() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    let (_, run) = run_one(&cfg, &disk, 0.8, CleanerKind::Original).unwrap();
    assert!(run.stats.foreground_segments > 0, "{:?}", run.stats);
    assert!(run.stats.cleaning_ns() > 0 && run.stats.cleaning_ns() < run.stats.measured_ns, "{:?}", run.stats);
    // Most requests are served from memory (the cache and the segment being filled).
    assert!(run.stats.read_hits > 0);
}

#[test]
fn over_full_is_a_clear_error() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    let e = run_one(&cfg, &disk, 1.2, CleanerKind::Original).unwrap_err().to_string();
    assert!(e.contains("120.0% is over 100%"), "{e}");
}

/// A policy that answers every request from memory without saying it does.
struct Forgetful;

impl LayoutPolicy for Forgetful {
    fn name(&self) -> String {
        "forgetful".into()
    }
    fn translate(&mut self, _: &mut LayoutCtx<'_>, _: &LogicalIo<'_>, _: &mut Vec<PhysIo>) -> freeblock::layout::Result<()> {
        Ok(())
    }
    fn complete(&mut self, _: &mut LayoutCtx<'_>, _: &Completed<'_>) -> freeblock::layout::Result<()> {
        Ok(())
    }
}

#[test]
fn an_empty_translation_is_an_error_unless_the_policy_serves_from_memory() {
    let disk = Arc::new(freeblock_disk::Disk::new(freeblock_disk::library::get("atlas10k").unwrap().without_cache()).unwrap());
    let spec = WorkloadSpec::Random(RandomSpec { count: Some(10), ..RandomSpec::default() });
    let w = spec.build(disk.capacity(), 1).unwrap();
    let e = Simulation::new(Arc::clone(&disk), w, SimConfig::default()).with_layout(Box::new(Forgetful)).run(None).unwrap_err().to_string();
    assert!(e.contains("no I/O"), "{e}");
}
