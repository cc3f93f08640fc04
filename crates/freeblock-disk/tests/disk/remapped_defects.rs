//! A remapped defect (`defects = [[defective, spare]]`) moves where its LBN is stored, and the
//! access timing follows it: a request over the remapped LBN transfers up to it, goes to the
//! spare, and comes back for the LBN after it — with the cache off ([`Disk::access`]) and on (the
//! buffer's sector-by-sector media process). Each case is checked against times worked out here
//! from the geometry, and against the same disk without the defect.
//!
//! The test disk turns at 6000 rpm (a 10 ms revolution) with 20 sectors a track (0.5 ms a
//! sector), no skews, no overheads and an instant bus, so sector `j` of every track starts
//! passing under the head at `j · 0.5 ms` into each revolution.

use std::sync::Arc;

use freeblock_disk::{Disk, DiskSpec, Drive, HeadState, Op, SimTime};

const REV_MS: f64 = 10.0;
const SECTOR_MS: f64 = 0.5;

/// The test disk. `sparing` and `spares` place the spare area, `defects` the zone's remaps.
fn spec(sparing: &str, spares: u32, defects: &str, cache: bool) -> DiskSpec {
    let cache = if cache {
        r#"[cache]
enabled = true
segments = 2
segment_sectors = 64
read_ahead = "none"
"#
    } else {
        ""
    };
    let toml = format!(
        r#"
name = "remap"
rpm = 6000.0
surfaces = 2
head_switch_ms = 0.7
write_settle_ms = 0.0
read_settle_ms = 0.0
mapping = "cylinder_major"
sparing = {{ scheme = "{sparing}" }}
[[zones]]
first_cylinder = 0
last_cylinder = 9
sectors_per_track = 20
track_skew = 0.0
cylinder_skew = 0.0
first_sector_offset = 0.0
spares = {spares}
defects = {defects}
[seek]
type = "hpl"
boundary = 5.0
sqrt_a = 1.0
sqrt_b = 0.1
linear_a = 1.2
linear_b = 0.05
[controller]
bus_sector_ms = 0.0
{cache}"#
    );
    DiskSpec::from_toml_str(&toml, "remap test").unwrap()
}

fn disk(spec: DiskSpec) -> Disk {
    Disk::new(spec).unwrap()
}

fn ms(ns: SimTime) -> f64 {
    ns as f64 / 1e6
}

/// The next time at or after `t_ms` that sector `j` starts passing under the head.
fn next_pass(t_ms: f64, j: u32) -> f64 {
    let at = f64::from(j) * SECTOR_MS;
    let into = t_ms.rem_euclid(REV_MS);
    let wait = (at - into).rem_euclid(REV_MS);
    // Landing on the boundary itself (within rounding) is on time.
    t_ms + if wait > REV_MS - 1e-6 { 0.0 } else { wait }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.002
}

/// Sectors-per-track sparing with two spares: slots 18 and 19 of each track hold no LBN, so
/// track 0 holds LBNs 0–17. The defect remaps slot 5 (LBN 5) to slot 18 of the same track.
const SAME_TRACK: &str = "[[5, 18]]";

#[test]
fn the_mapping_sends_the_remapped_lbn_to_its_spare() {
    let d = disk(spec("sectors_per_track", 2, SAME_TRACK, false));
    let p = d.layout().lbn_to_pbn(5).unwrap();
    assert_eq!((p.cylinder, p.surface, p.sector), (0, 0, 18));
    assert_eq!(d.layout().pbn_to_lbn(p), Some(5));
    assert_eq!(d.layout().pbn_to_lbn(freeblock_disk::Pbn { cylinder: 0, surface: 0, sector: 5 }), None);
    assert!(d.layout().has_remapped_defects());
    assert!(!disk(spec("sectors_per_track", 2, "[]", false)).layout().has_remapped_defects());
}

/// Reading or writing LBNs 3–7 from track 0: sectors 3 and 4, then the spare (sector 18) for LBN
/// 5, then round again to sectors 6 and 7. Going to a spare on the same track and back costs
/// one revolution.
#[test]
fn a_spare_on_the_same_track_costs_one_revolution_with_the_cache_off() {
    let remapped = disk(spec("sectors_per_track", 2, SAME_TRACK, false));
    let plain = disk(spec("sectors_per_track", 2, "[]", false));
    for op in [Op::Read, Op::Write] {
        let a = remapped.access(HeadState::default(), 0, 3, 5, op, &mut Vec::new()).unwrap();
        let b = plain.access(HeadState::default(), 0, 3, 5, op, &mut Vec::new()).unwrap();
        // Worked out: sectors 3–4 pass 1.5–2.5 ms, the spare 9.0–9.5 ms, sectors 6–7 13.0–14.0 ms.
        assert!(close(ms(a.media_start), 1.5), "{op:?}: {}", ms(a.media_start));
        assert!(close(ms(a.media_end), 14.0), "{op:?}: {}", ms(a.media_end));
        assert!(close(ms(b.media_end), 4.0), "{op:?}: {}", ms(b.media_end));
        assert!(close(ms(a.end - b.end), REV_MS), "{op:?}: {} ms more", ms(a.end - b.end));
        assert_eq!(a.breakdown.total(), a.end - a.start);
        assert_eq!(a.end_head, HeadState { cylinder: 0, surface: 0 });
    }
}

/// A request that starts at the remapped LBN goes to the spare first, and the positioning time a
/// scheduler ranks it by is the one the access takes.
#[test]
fn a_request_starting_at_a_remapped_lbn_is_positioned_at_the_spare() {
    let d = disk(spec("sectors_per_track", 2, SAME_TRACK, false));
    for start in [0, 3_000_000, 9_200_000] {
        let a = d.access(HeadState::default(), start, 5, 1, Op::Read, &mut Vec::new()).unwrap();
        assert!(close(ms(a.media_start), next_pass(ms(start), 18)), "start {start}: {}", ms(a.media_start));
        let positioning = d.positioning(HeadState::default(), start, 5, Op::Read).unwrap();
        assert_eq!(positioning, a.media_start - start);
    }
}

/// Sectors-per-zone sparing with 20 spares: the zone's last track (cylinder 9, surface 1) is the
/// spare area. LBN 5's slot is remapped to that track's sector 3 (zone slot 383).
#[test]
fn a_spare_on_another_track_costs_the_seek_there_and_back() {
    let remapped = disk(spec("sectors_per_zone", 20, "[[5, 383]]", false));
    let p = remapped.layout().lbn_to_pbn(5).unwrap();
    assert_eq!((p.cylinder, p.surface, p.sector), (9, 1, 3));
    let plain = disk(spec("sectors_per_zone", 20, "[]", false));
    let home = HeadState::default();
    for op in [Op::Read, Op::Write] {
        let a = remapped.access(home, 0, 3, 5, op, &mut Vec::new()).unwrap();
        let b = plain.access(home, 0, 3, 5, op, &mut Vec::new()).unwrap();
        // Sectors 3–4 end at 2.5 ms; the move to (9, 1) and back is the seek curve's.
        let out = ms(remapped.move_ns(home, 9, 1, op));
        let back = ms(remapped.move_ns(HeadState { cylinder: 9, surface: 1 }, 0, 0, op));
        let spare = next_pass(2.5 + out, 3) + SECTOR_MS;
        let end = next_pass(spare + back, 6) + 2.0 * SECTOR_MS;
        assert!(close(ms(a.media_end), end), "{op:?}: {} against {end}", ms(a.media_end));
        assert!(close(ms(b.media_end), 4.0), "{op:?}: {}", ms(b.media_end));
        assert!(a.breakdown.seek > 0 && a.breakdown.seek == remapped.move_ns(home, 9, 1, op) + remapped.move_ns(HeadState { cylinder: 9, surface: 1 }, 0, 0, op));
        assert_eq!(a.end_head, home);
    }
}

/// Under track sparing a whole track is remapped; a request crossing it reads the spare track
/// in one pass, in the same sectors.
#[test]
fn a_remapped_track_is_read_on_the_spare_track() {
    // Track sparing with two spare tracks: the zone's last two tracks (cylinder 9). Track 1
    // (cylinder 0, surface 1: LBNs 20–39) is remapped to track 18 (cylinder 9, surface 0).
    let remapped = disk(spec("tracks", 2, "[[1, 18]]", false));
    let plain = disk(spec("tracks", 2, "[]", false));
    let home = HeadState::default();
    let a = remapped.access(home, 0, 15, 30, Op::Read, &mut Vec::new()).unwrap();
    let b = plain.access(home, 0, 15, 30, Op::Read, &mut Vec::new()).unwrap();
    // Sectors 15–19 of track 0 end at 10.0 ms; LBNs 20–39 are sectors 0–19 of (9, 0); LBNs
    // 40–44 sectors 0–4 of (1, 0).
    let out = ms(remapped.move_ns(home, 9, 0, Op::Read));
    let spare_end = next_pass(10.0 + out, 0) + 20.0 * SECTOR_MS;
    let back = ms(remapped.move_ns(HeadState { cylinder: 9, surface: 0 }, 1, 0, Op::Read));
    let end = next_pass(spare_end + back, 0) + 5.0 * SECTOR_MS;
    assert!(close(ms(a.media_end), end), "{} against {end}", ms(a.media_end));
    // Here the detour happens to end as the plain pass does (every wait ends at sector 0), but
    // the head went out to cylinder 9 and back instead of switching to surface 1.
    assert!(close(ms(b.media_end), ms(a.media_end)));
    let to_spare = remapped.move_ns(home, 9, 0, Op::Read) + remapped.move_ns(HeadState { cylinder: 9, surface: 0 }, 1, 0, Op::Read);
    assert_eq!(a.breakdown.seek, to_spare);
    assert_eq!(b.breakdown.seek, plain.move_ns(home, 0, 1, Op::Read) + plain.move_ns(HeadState { cylinder: 0, surface: 1 }, 1, 0, Op::Read));
    assert_eq!(a.end_head, HeadState { cylinder: 1, surface: 0 });
}

fn drive(spec: DiskSpec) -> Drive {
    Drive::new(Arc::new(Disk::new(spec).unwrap()))
}

/// With the cache on the buffer's media process reads sector by sector; it too goes to the
/// spare and back, so the read over the remapped LBN ends one revolution later than without
/// the defect, and its prediction is what serving does.
#[test]
fn a_spare_on_the_same_track_costs_one_revolution_with_the_cache_on() {
    for op in [Op::Read, Op::Write] {
        let mut remapped = drive(spec("sectors_per_track", 2, SAME_TRACK, true));
        let mut plain = drive(spec("sectors_per_track", 2, "[]", true));
        let predicted = remapped.predict(0, 3, 5, op).unwrap();
        let a = remapped.serve(0, 3, 5, op).unwrap();
        let b = plain.serve(0, 3, 5, op).unwrap();
        assert_eq!(predicted, a);
        assert!(close(ms(a.access.media_start), 1.5), "{op:?}: {}", ms(a.access.media_start));
        assert!(close(ms(a.access.end - b.access.end), REV_MS), "{op:?}: {} ms more", ms(a.access.end - b.access.end));
    }
}

#[test]
fn a_spare_on_another_track_costs_the_seek_there_and_back_with_the_cache_on() {
    let home = HeadState::default();
    for op in [Op::Read, Op::Write] {
        let remapped_disk = disk(spec("sectors_per_zone", 20, "[[5, 383]]", false));
        let out = ms(remapped_disk.move_ns(home, 9, 1, op));
        let back = ms(remapped_disk.move_ns(HeadState { cylinder: 9, surface: 1 }, 0, 0, op));
        let spare = next_pass(2.5 + out, 3) + SECTOR_MS;
        let end = next_pass(spare + back, 6) + 2.0 * SECTOR_MS;
        let mut remapped = drive(spec("sectors_per_zone", 20, "[[5, 383]]", true));
        let a = remapped.serve(0, 3, 5, op).unwrap();
        assert!(close(ms(a.access.end), end), "{op:?}: {} against {end}", ms(a.access.end));
    }
}

/// A request starting at the remapped LBN, cache on: the head goes to the spare first.
#[test]
fn with_the_cache_on_a_request_starting_at_a_remapped_lbn_goes_to_the_spare() {
    for op in [Op::Read, Op::Write] {
        let mut d = drive(spec("sectors_per_track", 2, SAME_TRACK, true));
        let a = d.serve(0, 5, 1, op).unwrap();
        assert!(close(ms(a.access.media_start), 9.0), "{op:?}: {}", ms(a.access.media_start));
        assert!(close(ms(a.access.end), 9.5), "{op:?}: {}", ms(a.access.end));
    }
}
