//! Simulator properties: one integration binary, one module per behaviour.

mod determinism;
mod online;
mod big_lbn;
mod energy;
mod external_promotion;
mod prediction;
mod rotational_latency;
mod scheduler_order;
mod time_limit;
mod write_bus;
mod withdraw_free;
mod zero_latency;

use std::sync::Arc;

use freeblock::report::RunReport;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{RandomSpec, SizeDist, WorkloadSpec};
use freeblock_disk::{library, Disk};

/// The Atlas 10K with its cache off.
pub fn atlas() -> Arc<Disk> {
    library::media("atlas10k").unwrap()
}

/// Random requests of `sectors` sectors with the given read fraction.
pub fn random(count: u64, sectors: u32, read_fraction: f64) -> WorkloadSpec {
    WorkloadSpec::Random(RandomSpec { count: Some(count), size: SizeDist::Fixed { sectors }, read_fraction, ..RandomSpec::default() })
}

/// Runs `workload` closed-loop with `mpl` outstanding under `scheduler`.
pub fn run(disk: &Arc<Disk>, workload: &WorkloadSpec, scheduler: SchedulerSpec, mpl: u32, seed: u64, keep_records: bool) -> RunReport {
    let w = workload.build(disk.capacity(), seed).unwrap();
    Simulation::new(Arc::clone(disk), w, SimConfig { scheduler, mpl, keep_records, ..SimConfig::default() }).run(None).unwrap()
}
