//! Writes pay the bus in the cache-off model, as DiskSim charges them: the data crosses from the
//! command on, overlapping the positioning, and no sector is written before it has arrived.

use std::sync::Arc;

use freeblock_disk::{library, Disk, HeadState, Op};

/// The Atlas 10K, cache off, with a host bus of `bus_ms` a sector both ways.
fn atlas_with_bus(bus_ms: f64) -> Arc<Disk> {
    let mut spec = library::get("atlas10k").unwrap().without_cache();
    spec.controller.bus_sector_ms = bus_ms;
    spec.controller.bus_write_sector_ms = None;
    Arc::new(Disk::new(spec).unwrap())
}

#[test]
fn a_slow_bus_holds_a_write_until_its_last_sector_has_crossed() {
    // 0.099 ms a sector, the Atlas 10K validation host's rate: 64 sectors take 6.34 ms to cross,
    // far longer than the media needs to write them (about a fifth of a revolution).
    let disk = atlas_with_bus(0.099);
    let mut runs = Vec::new();
    let rev = disk.revolution_ns();
    for i in 0..100u64 {
        let start = i * 7_919_000 % rev + i * rev;
        let lbn = i * 104_729 % (disk.capacity() - 64);
        let head = HeadState { cylinder: 0, surface: 0 };
        let w = disk.access(head, start, lbn, 64, Op::Write, &mut runs).unwrap();
        let crossed = start + w.breakdown.overhead + disk.bus_write_ns(64);
        assert!(w.media_end >= crossed, "write {i}: its last sector written by {} before its data crossed at {crossed}", w.media_end);
        assert_eq!(w.breakdown.total(), w.end - start, "write {i}: the breakdown must add up");
    }
}

#[test]
fn a_write_and_a_read_of_a_segment_cost_alike_on_a_slow_bus() {
    // Before writes paid the bus, a 1 MB write cost about a third of the same read on this bus.
    let disk = atlas_with_bus(0.099);
    let mut runs = Vec::new();
    let head = HeadState { cylinder: 0, surface: 0 };
    let (mut reads, mut writes) = (0u64, 0u64);
    for i in 0..50u64 {
        let start = i * 13_000_000;
        let lbn = i * 200_003 % (disk.capacity() - 2048);
        reads += disk.access(head, start, lbn, 2048, Op::Read, &mut runs).unwrap().end - start;
        writes += disk.access(head, start, lbn, 2048, Op::Write, &mut runs).unwrap().end - start;
    }
    let ratio = reads as f64 / writes as f64;
    assert!((0.9..1.25).contains(&ratio), "read/write cost ratio {ratio:.2}");
}

#[test]
fn a_bus_faster_than_the_media_costs_a_write_nothing_after_positioning() {
    // The data is there long before the heads reach the track, so the write ends when a write
    // with no bus at all does.
    let fast = atlas_with_bus(0.0064);
    let none = atlas_with_bus(0.0);
    let mut runs = Vec::new();
    let head = HeadState { cylinder: 0, surface: 0 };
    for i in 0..50u64 {
        let start = i * 11_000_000;
        let lbn = 5_000_000 + i * 99_991;
        let a = fast.access(head, start, lbn, 16, Op::Write, &mut runs).unwrap();
        let b = none.access(head, start, lbn, 16, Op::Write, &mut runs).unwrap();
        assert_eq!(a.end, b.end, "write {i}");
        assert_eq!(a.breakdown.bus, 0);
    }
}
