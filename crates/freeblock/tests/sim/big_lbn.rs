//! Sector numbers past 2^32 end to end (issue 34): requests on the imported WD g4 4 TB model
//! (7,542,225,920 sectors) at LBNs above 2^32 are served where its banded layout puts them, with
//! the cache off (each record agreeing with the disk model's own timing) and on.

use std::sync::Arc;

use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{SequentialSpec, WorkloadSpec};
use freeblock_disk::{library, Disk, HeadState, Op};

/// A sequential stream of 64-sector requests from just below a track boundary past 2^32.
fn stream_past_4g(disk: &Disk) -> WorkloadSpec {
    let start = (1u64 << 32) + 12_345;
    assert!(disk.capacity() > start + 64 * 40);
    WorkloadSpec::Sequential(SequentialSpec { count: Some(40), start_lbn: start, request_sectors: 64, stride_sectors: Some(100_003), read_fraction: 0.5, rate_per_s: None })
}

#[test]
fn requests_past_2_pow_32_are_served_on_the_g4_model() {
    let media = library::media("wd_g4_4t").unwrap();
    let config = SimConfig { scheduler: SchedulerSpec::Fcfs, mpl: 1, keep_records: true, ..SimConfig::default() };
    let report = Simulation::new(Arc::clone(&media), stream_past_4g(&media).build(media.capacity(), 1).unwrap(), config.clone()).run(None).unwrap();
    assert_eq!(report.records.len(), 40);
    // One request at a time, closed: each starts where the last left the heads, so the disk
    // model replayed request by request gives every record's completion to the nanosecond.
    let mut head = HeadState::default();
    let mut scratch = Vec::new();
    let mut records = report.records.clone();
    records.sort_by_key(|r| r.start_ns);
    for r in &records {
        assert!(r.lbn > 1 << 32, "LBN {}", r.lbn);
        let a = media.access(head, r.start_ns, r.lbn, u64::from(r.sectors), r.op, &mut scratch).unwrap();
        assert_eq!((r.end_ns, r.seek_ns), (a.end, a.breakdown.seek), "LBN {} ({:?})", r.lbn, r.op);
        head = a.end_head;
    }
    let pbn = media.layout().lbn_to_pbn(records[0].lbn).unwrap();
    println!("g4, cache off: first request LBN {} at cylinder {} head {} sector {}; mean response {:.3} ms", records[0].lbn, pbn.cylinder, pbn.surface, pbn.sector, report.response.mean_ms);

    // The drive as its files define it, cache and write-back on.
    let cached = Arc::new(Disk::new(library::get("wd_g4_4t").unwrap()).unwrap());
    assert!(cached.spec().cache.enabled);
    let report = Simulation::new(Arc::clone(&cached), stream_past_4g(&cached).build(cached.capacity(), 1).unwrap(), config).run(None).unwrap();
    assert_eq!(report.records.len(), 40);
    assert!(report.records.iter().all(|r| r.lbn > 1 << 32 && r.end_ns > r.start_ns));
    assert!(report.records.iter().any(|r| r.op == Op::Write) && report.records.iter().any(|r| r.op == Op::Read));
    println!("g4, cache on: 40 requests past 2^32 served, mean response {:.3} ms", report.response.mean_ms);
}
