//! The same configuration and seed give identical output; another seed does not.

use freeblock::sched::SchedulerSpec;

use super::{atlas, random, run};

#[test]
fn same_seed_same_records_and_report() {
    let disk = atlas();
    let w = random(3_000, 8, 2.0 / 3.0);
    for s in [SchedulerSpec::Fcfs, SchedulerSpec::Sptf, SchedulerSpec::SptfSw { window_pct: 40.0 }] {
        let a = run(&disk, &w, s, 8, 11, true);
        let b = run(&disk, &w, s, 8, 11, true);
        assert_eq!(a.records, b.records);
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
        let c = run(&disk, &w, s, 8, 12, true);
        assert_ne!(a.records, c.records);
    }
}
