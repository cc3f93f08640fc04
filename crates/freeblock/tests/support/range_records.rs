//! What the range-write tests of the engine (`tests/integration/rangewrite.rs`) and of the
//! range-writes reproduction (`freeblock-repro`'s `tests/integration/range_writes.rs`) share: the
//! schedulers that weigh candidates, and the check that a run's records agree with its block map.

use std::collections::BTreeMap;

use freeblock::rangewrite::RangeSimOutcome;
use freeblock::sched::SchedulerSpec;
use freeblock_disk::Op;

/// The schedulers range writes run under (C-LOOK is refused).
pub const SCHEDULERS: [SchedulerSpec; 3] = [SchedulerSpec::Fcfs, SchedulerSpec::Sstf, SchedulerSpec::Sptf];

/// Replays the records in completion order against a model of where each logical block lives
/// and checks: every I/O used one of its candidates; reads found the latest version where the
/// latest write put it; the final map holds exactly what the last write of each mapped block
/// wrote, and nothing is left reserved.
pub fn check_run(out: &RangeSimOutcome, block_sectors: u64) {
    out.map.check().unwrap();
    let space = out.map.stats();
    assert_eq!(space.reserved, 0, "unchosen candidates were not all freed");
    assert_eq!(space.free + space.live + space.pinned, space.total);
    let mut model: BTreeMap<u64, (u64, u64)> = BTreeMap::new(); // logical → (version, lbn)
    let mut last_end = 0;
    for r in &out.records {
        assert!(r.end_ns >= last_end, "records are in completion order");
        last_end = r.end_ns;
        assert!(r.start_ns >= r.arrival_ns && r.end_ns > r.start_ns);
        assert_eq!(r.candidates[r.chosen_index], r.chosen_lbn, "request {}", r.id);
        assert!(r.candidates.contains(&r.chosen_lbn));
        match r.op {
            Op::Write => {
                let v = r.version.unwrap();
                for j in 0..r.blocks {
                    if let Some(&(old, _)) = model.get(&(r.logical + j)) {
                        assert!(v > old, "versions grow");
                    }
                    model.insert(r.logical + j, (v, r.chosen_lbn + j * block_sectors));
                }
            }
            Op::Read => {
                // A read of a block that was mapped before the run (initial files) has no
                // write record; otherwise it must find the latest write, where it went.
                if let Some(&(v, lbn)) = model.get(&r.logical) {
                    assert_eq!(r.version, Some(v), "request {} read a stale version", r.id);
                    assert_eq!(r.chosen_lbn, lbn, "request {} read the wrong place", r.id);
                }
            }
        }
    }
    for (l, loc) in out.map.mapped() {
        assert_eq!(loc.copies.len(), 1);
        if let Some(&(v, lbn)) = model.get(&l) {
            assert_eq!((loc.version, loc.copies[0]), (v, lbn), "logical {l}");
        }
    }
}
