//! The drive's buffer (DiskSim's disk controller and cache, used when `cache.enabled`): the
//! prediction is what serving does, the cache off changes nothing, and the DiskSim behaviours
//! the validation traces depend on (write-back, read hits after read-ahead, the bus handshakes)
//! take the times DiskSim's parameters say.

use std::sync::Arc;

use freeblock_disk::spec::ReadAhead;
use freeblock_disk::{library, Disk, DiskSpec, Drive, HeadState, Op, SimTime};

/// A small deterministic generator (no dependency needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

fn drive(spec: DiskSpec) -> Drive {
    Drive::new(Arc::new(Disk::new(spec).unwrap()))
}

/// Serves `n` random requests (mixed sizes, reads and writes, sequential runs, idle gaps from
/// none to tens of ms) and checks each prediction against what serving then does.
fn exercise(spec: &DiskSpec, n: usize, seed: u64) -> Vec<(SimTime, SimTime)> {
    let mut d = drive(spec.clone());
    let cap = d.disk().capacity();
    let mut rng = Lcg(seed);
    let mut now: SimTime = 0;
    let mut next_lbn = 0u64;
    let mut out = Vec::new();
    for _ in 0..n {
        let sectors = 1 + rng.next() % 48;
        let lbn = if rng.next().is_multiple_of(3) { next_lbn } else { rng.next() % (cap - sectors) };
        let lbn = lbn.min(cap - sectors);
        let op = if rng.next().is_multiple_of(3) { Op::Write } else { Op::Read };
        let predicted = d.predict(now, lbn, sectors, op).unwrap();
        let served = d.serve(now, lbn, sectors, op).unwrap();
        assert_eq!(predicted, served, "{}: prediction differs from service at {now} for {lbn}+{sectors} {op:?}", spec.name);
        let a = served.access;
        assert!(a.end >= a.start && a.start == now, "{}: {a:?}", spec.name);
        assert_eq!(a.breakdown.total(), a.end - a.start, "{}: breakdown", spec.name);
        out.push((a.start, a.end));
        next_lbn = lbn + sectors;
        now = a.end + [0, 100_000, 2_000_000, 20_000_000][(rng.next() % 4) as usize];
    }
    out
}

#[test]
fn every_cached_builtin_serves_as_predicted_and_deterministically() {
    for name in library::names() {
        let mut spec = library::get(name).unwrap();
        if !spec.cache.enabled {
            spec.cache.enabled = true;
        }
        let a = exercise(&spec, 300, 7);
        let b = exercise(&spec, 300, 7);
        assert_eq!(a, b, "{name}: not deterministic");
    }
}

#[test]
fn with_the_cache_off_a_request_is_one_media_access() {
    let mut d = drive(library::get("atlas10k").unwrap().without_cache());
    let disk = d.disk().clone();
    let mut head = HeadState::default();
    let mut scratch = Vec::new();
    let mut now = 0;
    for (i, lbn) in [1_000u64, 9_000_000, 9_000_008, 17_000_000, 5].into_iter().enumerate() {
        let op = if i % 2 == 0 { Op::Read } else { Op::Write };
        let want = disk.access(head, now, lbn, 8, op, &mut scratch).unwrap();
        let got = d.serve(now, lbn, 8, op).unwrap();
        assert_eq!(got.access, want);
        assert!(!got.cache_hit);
        head = want.end_head;
        now = want.end + 1_000_000;
    }
}

/// The Atlas 10K's DiskSim parameters: write-back, overheads, 0.099 ms per sector on the bus.
fn atlas() -> DiskSpec {
    let spec = library::get("atlas10k").unwrap();
    assert!(spec.cache.enabled && spec.controller.write_back);
    spec
}

fn ms(ns: SimTime) -> f64 {
    ns as f64 / 1e6
}

#[test]
fn write_back_reports_a_write_once_its_data_is_in_the_buffer() {
    // DiskSim: write hit overhead (after a write, the drive's initial state) + 0.099 ms per sector.
    let mut d = drive(atlas());
    let s = d.serve(0, 5_000_000, 8, Op::Write).unwrap();
    assert!((ms(s.access.end) - (0.189 + 8.0 * 0.099)).abs() < 1e-5, "{}", ms(s.access.end));
    // The write-back then moves the heads: a read issued at once waits for it.
    let mut idle = drive(atlas());
    let alone = idle.serve(s.access.end, 12_000_000, 8, Op::Read).unwrap();
    let after = d.serve(s.access.end, 12_000_000, 8, Op::Read).unwrap();
    let alone_ms = ms(alone.access.end - alone.access.start);
    let after_ms = ms(after.access.end - after.access.start);
    assert!(after_ms > alone_ms.min(2.0), "read after a write-back {after_ms} ms vs alone {alone_ms} ms");
    assert!(d.head().cylinder > 0, "the heads moved");
}

#[test]
fn read_ahead_turns_the_next_sequential_read_into_a_hit() {
    let mut d = drive(atlas());
    let first = d.serve(0, 3_000_000, 8, Op::Read).unwrap();
    assert!(!first.cache_hit);
    // 30 ms later the read-ahead (to the end of the track) has the next sectors.
    let t = first.access.end + 30_000_000;
    let second = d.serve(t, 3_000_008, 8, Op::Read).unwrap();
    assert!(second.cache_hit);
    // DiskSim: read hit overhead 0.184 ms (after a read) + 8 × 0.099 ms.
    assert!((ms(second.access.end - t) - (0.184 + 8.0 * 0.099)).abs() < 1e-5, "{}", ms(second.access.end - t));
    // So does reading the data the write-back just wrote.
    let w = d.serve(t + 40_000_000, 7_000_000, 4, Op::Write).unwrap();
    let r = d.serve(w.access.end + 40_000_000, 7_000_000, 4, Op::Read).unwrap();
    assert!(r.cache_hit);
}

#[test]
fn without_read_ahead_or_hits_every_read_goes_to_the_media() {
    let mut spec = atlas();
    spec.cache.read_ahead = ReadAhead::None;
    spec.cache.read_any_free_blocks = false;
    let mut d = drive(spec);
    let first = d.serve(0, 3_000_000, 8, Op::Read).unwrap();
    let t = first.access.end + 30_000_000;
    let second = d.serve(t, 3_000_008, 8, Op::Read).unwrap();
    assert!(!second.cache_hit);
    // Re-reading the same sectors hits.
    let third = d.serve(second.access.end + 30_000_000, 3_000_008, 8, Op::Read).unwrap();
    assert!(third.cache_hit);
}

/// The HP C2247A with its validation bus (DiskSim `.parv`: 0.1701 / 0.18686 ms per sector).
fn hp() -> DiskSpec {
    let mut spec = library::get("hp_c2247a").unwrap();
    spec.controller.bus_sector_ms = 0.1701;
    spec.controller.bus_write_sector_ms = Some(0.18686);
    spec
}

#[test]
fn a_read_hit_costs_the_hit_overhead_the_bus_and_the_completion() {
    let mut d = drive(hp());
    let first = d.serve(0, 564_347, 2, Op::Read).unwrap();
    let t = first.access.end + 18_000_000;
    let hit = d.serve(t, 564_349, 2, Op::Read).unwrap();
    assert!(hit.cache_hit);
    // 0.95343 (read hit) + 0.02519 (data preparation) + 2 × 0.1701 + 0.05665 (completion).
    let want = 0.95343 + 0.02519 + 2.0 * 0.1701 + 0.05665;
    assert!((ms(hit.access.end - t) - want).abs() < 1e-5, "{} vs {want}", ms(hit.access.end - t));
}

#[test]
fn a_write_without_write_back_completes_after_its_media_access() {
    let mut d = drive(hp());
    let s = d.serve(0, 1_194_877, 15, Op::Write).unwrap();
    let a = s.access;
    // Media first (the mechanism needs 10 sectors of data and the minimum seek delay), then the
    // reconnection (0.16249) and the completion (0.05045).
    assert!(a.media_end > a.media_start);
    let tail = ms(a.end) - ms(a.media_end);
    assert!((tail - (0.16249 + 0.05045)).abs() < 2e-6, "{tail}");
    assert!(ms(a.media_start) >= 0.82391 + 0.6 - 1e-6);
}

#[test]
fn a_sequential_write_joins_the_segment_being_written_back() {
    let mut spec = atlas();
    spec.cache.combine_sequential_writes = true;
    let mut combined = drive(spec.clone());
    let first = combined.serve(0, 5_000_000, 8, Op::Write).unwrap();
    let t = first.access.end;
    // Taken at once, with the write-back of the first still under way: write hit overhead after
    // a write (0.189 ms) + 8 × 0.099 ms on the bus, as DiskSim 4.0 takes an append.
    let second = combined.serve(t, 5_000_008, 8, Op::Write).unwrap();
    let took = ms(second.access.end - t);
    assert!((took - (0.189 + 8.0 * 0.099)).abs() < 1e-5, "append took {took} ms");
    // Without combining it waits for the write-back of the first write.
    spec.cache.combine_sequential_writes = false;
    let mut apart = drive(spec);
    let first = apart.serve(0, 5_000_000, 8, Op::Write).unwrap();
    let waited = apart.serve(first.access.end, 5_000_008, 8, Op::Write).unwrap();
    assert!(ms(waited.access.end - first.access.end) > took + 1.0, "{waited:?}");
    // The appended write's own media pass (DiskSim writes its data again) comes before a read
    // issued next: that read ends later than after the first write-back alone.
    let read_after = |d: &mut Drive, t: SimTime| {
        let r = d.serve(t, 12_000_000, 8, Op::Read).unwrap();
        r.access.end - t
    };
    let mut single = drive(atlas());
    let w = single.serve(0, 5_000_000, 16, Op::Write).unwrap();
    let alone = read_after(&mut single, w.access.end);
    let with_pass = read_after(&mut combined, second.access.end);
    assert!(with_pass > alone, "read after the appended write {} ms, after one write {} ms", ms(with_pass), ms(alone));
}

#[test]
fn combined_writes_serve_as_predicted_and_deterministically() {
    let mut spec = atlas();
    spec.cache.combine_sequential_writes = true;
    let a = exercise(&spec, 600, 11);
    assert_eq!(a, exercise(&spec, 600, 11));
}

#[test]
fn discarding_read_data_sends_a_re_read_to_the_media() {
    let mut spec = atlas();
    spec.cache.read_ahead = ReadAhead::None;
    spec.cache.read_any_free_blocks = false;
    spec.cache.keep_read_data = false;
    let mut d = drive(spec);
    let first = d.serve(0, 3_000_000, 8, Op::Read).unwrap();
    // DiskSim "Read-ahead over requested = -1": the read's sectors left the segment.
    let again = d.serve(first.access.end + 30_000_000, 3_000_000, 8, Op::Read).unwrap();
    assert!(!again.cache_hit);
    assert!(again.access.media_end > again.access.media_start);
}

/// `cache.read_any_free_blocks` (the drive's own "read any free blocks") keeps the sectors that
/// pass under the head before a read's first one, so a re-read just behind it can hit; imported
/// from DiskSim with DEC read-ahead (the Atlas 10K) it is off, as DiskSim 4.0 runs it, and the
/// same re-reads go to the media.
#[test]
fn read_any_free_blocks_serves_a_re_read_behind_the_previous_read_only_when_on() {
    let re_read_hits = |on: bool| {
        let mut spec = atlas();
        spec.cache.read_any_free_blocks = on;
        let mut d = drive(spec);
        let mut rng = Lcg(11);
        let (mut t, mut hits) = (0, 0);
        for _ in 0..40 {
            let lbn = 1_000_000 + rng.next() % 15_000_000;
            let first = d.serve(t, lbn, 8, Op::Read).unwrap();
            // The 8 sectors just before it, right after it (no time for read-ahead to matter).
            let behind = d.serve(first.access.end, lbn - 8, 8, Op::Read).unwrap();
            hits += usize::from(behind.cache_hit);
            t = behind.access.end + 20_000_000 + rng.next() % 10_000_000;
        }
        hits
    };
    assert!(!library::get("atlas10k").unwrap().cache.read_any_free_blocks, "the built-in Atlas 10K is DiskSim's: read-any-free off");
    let (off, on) = (re_read_hits(false), re_read_hits(true));
    assert_eq!(off, 0);
    assert!(on >= 10, "{on} of 40 re-reads behind hit with read-any-free on");
}

/// Fuzz finding (crash-256f5d01): a defect remapped onto a sector of another track leaves that
/// track holding LBNs that are not one run, so the track seemed to span every LBN between them and
/// a write waited on it for ever instead of seeking. (The finding remapped LBN 45 into track 0's
/// empty front, which the spec now refuses; here it goes to the zone's first spare, slot 98 on
/// the last track, which then holds LBNs 80–92 and 45.)
#[test]
fn a_write_past_a_track_holding_a_remapped_lbn_moves_on() {
    let spec = DiskSpec::from_toml_str(
        r#"
name = "remap"
rpm = 7200.0
surfaces = 1
head_switch_ms = 0.176
write_settle_ms = 0.1
read_settle_ms = 0.0
mapping = "serpentine"
sparing = { scheme = "sectors_per_zone" }
[[zones]]
first_cylinder = 0
last_cylinder = 5
sectors_per_track = 17
track_skew = 0.0
cylinder_skew = 0.0
first_sector_offset = 0.0
spares = 4
empty_front_sectors = 5
slips = [100]
defects = [[50, 98]]
[seek]
type = "hpl"
boundary = 10.0
sqrt_a = 0.1
sqrt_b = 0.05
linear_a = 1.0
linear_b = 0.005
[controller]
read_miss_ms = 0.3
write_miss_ms = 0.1
bus_sector_ms = 0.01
write_back = false
[cache]
enabled = true
segments = 2
segment_sectors = 64
read_ahead_sectors = 64
read_ahead = "dec"
zero_latency_reads = true
zero_latency_writes = true
separate_write_segment = true
read_ahead_on_hit = true
"#,
        "test",
    )
    .unwrap();
    for op in [Op::Write, Op::Read] {
        let mut d = drive(spec.clone());
        // LBNs 40–63: 40–44 on track 2, 45 on track 5, 46–63 on tracks 3 and 4. On track 5
        // after LBN 45, LBN 46 lies between the track's first and last LBNs but on no sector
        // of it; a model that waits there runs away (a model fault error).
        let s = d.serve(0, 40, 24, op).unwrap();
        // The media passes cover 24 sectors (17 a revolution of 8.33 ms) with three seeks, and
        // end within six revolutions.
        let end = ms(s.access.end);
        assert!(end > 24.0 / 17.0 * 8.33 && end < 6.0 * 8.34, "{op:?}: {end}");
    }
}
