//! With a queue to choose from, SPTF beats SSTF and SSTF beats FCFS on mean access time.

use freeblock::sched::SchedulerSpec;

use super::{atlas, random, run};

#[test]
fn sptf_below_sstf_below_fcfs_with_eight_pending() {
    let disk = atlas();
    let w = random(10_000, 8, 2.0 / 3.0);
    let access = |s| run(&disk, &w, s, 8, 3, false).access.mean_ms;
    let (fcfs, sstf, sptf) = (access(SchedulerSpec::Fcfs), access(SchedulerSpec::Sstf), access(SchedulerSpec::Sptf));
    assert!(sptf < sstf, "SPTF {sptf:.3} ms should beat SSTF {sstf:.3} ms");
    assert!(sstf < fcfs, "SSTF {sstf:.3} ms should beat FCFS {fcfs:.3} ms");
}

#[test]
fn clook_serves_in_ascending_sweeps() {
    let disk = atlas();
    let r = run(&disk, &random(2_000, 8, 1.0), SchedulerSpec::Clook, 16, 5, true);
    let mut recs = r.records.clone();
    recs.sort_by_key(|r| r.start_ns);
    let wraps = recs.windows(2).filter(|w| w[1].lbn < w[0].lbn).count();
    // With 16 pending, each upward sweep serves several requests before wrapping.
    assert!(wraps < recs.len() / 3, "{wraps} wraps in {} requests", recs.len());
}
