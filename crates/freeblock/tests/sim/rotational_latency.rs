//! FCFS random single-sector reads wait half a revolution on average.

use freeblock::sched::SchedulerSpec;

use super::{atlas, random, run};

#[test]
fn fcfs_random_single_sector_reads_average_half_a_revolution() {
    let disk = atlas();
    let r = run(&disk, &random(20_000, 1, 1.0), SchedulerSpec::Fcfs, 1, 7, false);
    let mean_rot_ns = r.head_usage.rotational_latency_ns as f64 / r.requests as f64;
    let half_rev = disk.revolution_ps() as f64 / 2000.0;
    let ratio = mean_rot_ns / half_rev;
    assert!((ratio - 1.0).abs() <= 0.02, "mean rotational latency {mean_rot_ns:.0} ns is {ratio:.4} of half a revolution");
}
