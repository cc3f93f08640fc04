//! Hostile disk specs and DiskSim files: each value that used to be clamped, wrapped, taken as 0
//! or made the model panic (or exhaust memory or the stack) is refused with an error naming the
//! field or the file and line. Simulated time far into a run keeps its meaning or is refused.

use std::fs;

use freeblock_disk::time::{CACHED_TIME_LIMIT, NS_PER_DAY};
use freeblock_disk::{disksim, library, AccessError, Disk, DiskSpec, Drive, HeadState, Op};

use crate::scratch_dir;

/// The synthetic test disk's TOML (two zones, 10,042 cylinders, 6 surfaces, a three-point seek).
fn base() -> String {
    library::toml_text("test").unwrap().to_string()
}

fn replaced(from: &str, to: &str) -> String {
    let text = base();
    assert!(text.contains(from), "the test disk has no `{from}`");
    text.replace(from, to)
}

/// The error from parsing and building a disk from `text`: it must be an error (not a panic)
/// and one line long.
fn refusal(text: &str) -> String {
    let built = DiskSpec::from_toml_str(text, "hostile.toml").and_then(Disk::new);
    let e = built.expect_err("a hostile spec was accepted");
    let msg = e.with_origin("hostile.toml").to_string();
    assert!(!msg.contains('\n'), "error spans lines: {msg}");
    msg
}

fn assert_refused(text: &str, field: &str, words: &str) {
    let msg = refusal(text);
    assert!(msg.contains(&format!("field `{field}`")), "expected field `{field}` in: {msg}");
    assert!(msg.contains(words), "expected `{words}` in: {msg}");
}

#[test]
fn absurd_times_are_refused_not_clamped() {
    for (field, line) in [("head_switch_ms", "head_switch_ms = 0.176")] {
        for v in ["1e308", "-0.5", "nan", "inf", "-inf", "60001.0"] {
            let text = replaced(line, &format!("{field} = {v}"));
            let msg = refusal(&text);
            assert!(msg.contains(&format!("field `{field}`")), "{v}: {msg}");
        }
    }
    assert_refused(&replaced("head_switch_ms = 0.176", "head_switch_ms = 0.176\nread_settle_ms = 1e308"), "read_settle_ms", "longer than the 60000 ms");
    let with_controller = |line: &str| format!("{}\n[controller]\n{line}\n", base());
    assert_refused(&with_controller("read_miss_ms = 1e308"), "controller.read_miss_ms", "longer than");
    assert_refused(&with_controller("bus_sector_ms = nan"), "controller.bus_sector_ms", "non-negative");
    assert_refused(&with_controller("write_hit_after_write_ms = inf"), "controller.write_hit_after_write_ms", "non-negative");
    assert_refused(&with_controller("per_request_ms = -1.0"), "controller.per_request_ms", "non-negative");
    // A minute is allowed: the bound is not a clamp of everything slow.
    DiskSpec::from_toml_str(&with_controller("read_miss_ms = 60000.0"), "ok.toml").and_then(Disk::new).unwrap();
}

#[test]
fn an_extreme_spindle_speed_is_refused() {
    // 1e308 rpm made a revolution of 0 ps: the first rotational position divided by zero.
    for rpm in ["1e308", "1e7", "0.5", "nan", "inf"] {
        assert_refused(&replaced("rpm = 10025.0", &format!("rpm = {rpm}")), "rpm", "revolutions per minute");
    }
}

#[test]
fn absurd_geometry_is_refused_before_allocating() {
    // Each of these used to build tables of billions of entries (or overflow on the way).
    assert_refused(&replaced("last_cylinder = 10041", "last_cylinder = 1000000000"), "zones[1].last_cylinder", "at most 4194304 cylinders");
    assert_refused(&replaced("last_cylinder = 10041", "last_cylinder = 4294967295"), "zones[1].last_cylinder", "beyond the last cylinder");
    assert_refused(&replaced("surfaces = 6", "surfaces = 1000000"), "surfaces", "more than the 1024 supported");
    assert_refused(&replaced("sectors_per_track = 229", "sectors_per_track = 4294967295"), "zones[1].sectors_per_track", "supported");
    // Within each limit but too many tracks altogether.
    assert_refused(&replaced("surfaces = 6", "surfaces = 1000").replace("last_cylinder = 10041", "last_cylinder = 100000"), "zones", "tracks");
    let cache = |lines: &str| format!("{}\n[cache]\nenabled = true\n{lines}\n", base());
    assert_refused(&cache("segments = 4000000000"), "cache.segments", "supported");
    assert_refused(&cache("segment_sectors = 4000000000"), "cache.segment_sectors", "supported");
}

#[test]
fn other_out_of_range_values_are_refused() {
    assert_refused(&replaced("surfaces = 6", "surfaces = 6\nsector_bytes = 4294966784"), "sector_bytes", "up to 65536");
    assert_refused(&replaced("surfaces = 6", "surfaces = 6\nblock_count = 0"), "block_count", "at least 1");
    assert_refused(&replaced("track_skew = 63.0", "track_skew = 1e300"), "zones[0].track_skew", "supported");
    assert_refused(&replaced("cylinder_skew = 80.0", "cylinder_skew = inf"), "zones[1].cylinder_skew", "non-negative");
    // Every sector empty: a disk with no LBNs at all.
    let empty = replaced("sectors_per_track = 334\n", "sectors_per_track = 334\nempty_front_sectors = 10020000\n")
        .replace("sectors_per_track = 229\n", "sectors_per_track = 229\nempty_front_sectors = 6927708\n");
    assert_refused(&empty, "zones", "hold no LBNs");
}

#[test]
fn deeply_nested_toml_is_an_error_not_a_stack_overflow() {
    let text = replaced("track_skew = 63.0", &format!("track_skew = 63.0\nslips = {}{}", "[".repeat(20_000), "]".repeat(20_000)));
    let e = DiskSpec::from_toml_str(&text, "deep.toml").unwrap_err();
    assert!(e.to_string().starts_with("deep.toml: "), "{e}");
}

#[test]
fn a_seek_table_that_slopes_down_is_refused() {
    let table = |points: &str| replaced("type = \"three_point\"\nsingle_ms = 1.245\naverage_ms = 5.0\nfull_ms = 11.175", &format!("type = \"table\"\npoints = {points}"));
    // Extended past its last point (the disk has 10,042 cylinders), a falling last segment made
    // the longest seeks 0 ms (clamped from below zero).
    assert_refused(&table("[[1.0, 5.0], [2.0, 1.0]]"), "seek.points[1]", "slopes down");
    assert_refused(&table("[[1.0, 1.0], [100.0, 5.0], [200.0, 4.0]]"), "seek.points[2]", "slopes down");
    // Measured tables dip (DiskSim's atlas10k: 1.245 ms at one cylinder, 1.157 at two): data,
    // accepted, as is a falling last segment that is never extended.
    for ok in ["[[1.0, 1.245], [2.0, 1.157], [10041.0, 11.0]]", "[[1.0, 1.0], [10041.0, 12.0], [20000.0, 11.0]]"] {
        DiskSpec::from_toml_str(&table(ok), "ok.toml").and_then(Disk::new).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    // A huge entry: with the cache on, the buffer model multiplied it into picoseconds and panicked.
    let huge = format!("{}\n[cache]\nenabled = true\n", table("[[1.0, 1.0], [2.0, 1e300]]"));
    assert_refused(&huge, "seek.points[1]", "longer than the 60000 ms");
}

#[test]
fn a_seek_formula_that_runs_past_the_limit_is_refused() {
    let hpl = replaced(
        "type = \"three_point\"\nsingle_ms = 1.245\naverage_ms = 5.0\nfull_ms = 11.175",
        "type = \"hpl\"\nboundary = 300.0\nsqrt_a = 3.0\nsqrt_b = 0.3\nlinear_a = 7.0\nlinear_b = 1e300",
    );
    assert_refused(&hpl, "seek", "the curve reaches");
}

#[test]
fn a_three_point_average_no_rising_curve_can_have_is_refused() {
    let three = |single: f64, average: f64, full: f64| {
        replaced("single_ms = 1.245\naverage_ms = 5.0\nfull_ms = 11.175", &format!("single_ms = {single}\naverage_ms = {average}\nfull_ms = {full}"))
    };
    // The average of a curve rising from 1 to 10 ms is strictly between 1 and 10 (nearly).
    assert_refused(&three(1.0, 1.0, 10.0), "seek.average_ms", "strictly between");
    assert_refused(&three(1.0, 10.0, 10.0), "seek.average_ms", "strictly between");
    // Averages far from the square-root-plus-line band fit (the other form of the curve).
    for (single, average, full) in [(1.0, 1.5, 10.0), (1.0, 9.5, 10.0), (2.0, 2.0, 2.0)] {
        let disk = DiskSpec::from_toml_str(&three(single, average, full), "ok.toml").and_then(Disk::new).unwrap();
        let curve = disk.seek_curve();
        assert!((curve.average() - average * 1e6).abs() < 1.0, "{single}/{average}/{full}: average {}", curve.average());
    }
    // Too few cylinders to fit an average.
    let tiny = three(1.0, 4.0, 8.0).replace("last_cylinder = 4999", "last_cylinder = 0").replace("first_cylinder = 5000\nlast_cylinder = 10041", "first_cylinder = 1\nlast_cylinder = 1");
    assert_refused(&tiny, "seek", "at least 4 cylinders");
}

/// The test disk with one zone's sparing fields set (`zone_lines` go into the first zone).
fn spared(scheme: &str, zone_lines: &str) -> String {
    replaced("rpm = 10025.0", &format!("rpm = 10025.0\nsparing = {{ scheme = \"{scheme}\" }}"))
        .replacen("sectors_per_track = 334\n", &format!("sectors_per_track = 334\n{zone_lines}\n"), 1)
}

#[test]
fn invalid_slips_are_refused() {
    // Zone 0: 5000 cylinders × 6 surfaces × 334 sectors = 10,020,000 slots.
    assert_refused(&spared("sectors_per_track", "spares = 1\nslips = [10020000]"), "zones[0].slips[0]", "outside the zone");
    assert_refused(&spared("sectors_per_track", "spares = 1\nslips = [7, 3, 7]"), "zones[0].slips[2]", "listed twice");
    // Track sparing counts whole tracks: 30,000 of them.
    assert_refused(&spared("tracks", "spares = 2\nslips = [30000]"), "zones[0].slips[0]", "30000 tracks");
    // Unsorted but distinct is fine (the layout sorts them), and gives the sorted list's answer.
    let unsorted = DiskSpec::from_toml_str(&spared("sectors_per_track", "spares = 1\nslips = [900, 5]"), "u.toml").and_then(Disk::new).unwrap();
    let sorted = DiskSpec::from_toml_str(&spared("sectors_per_track", "spares = 1\nslips = [5, 900]"), "s.toml").and_then(Disk::new).unwrap();
    for lbn in [0, 4, 5, 333, 900, 2000, 3_000_000] {
        assert_eq!(unsorted.layout().lbn_to_pbn(lbn), sorted.layout().lbn_to_pbn(lbn), "LBN {lbn}");
        assert_eq!(unsorted.layout().track_angles(0, 3), sorted.layout().track_angles(0, 3));
    }
}

#[test]
fn invalid_defects_are_refused() {
    // One spare at the end of each track: slot 333 of track 0 is a spare, slot 0 holds LBN 0.
    let with = |defects: &str| spared("sectors_per_track", &format!("spares = 1\ndefects = {defects}"));
    let ok = DiskSpec::from_toml_str(&with("[[10, 333]]"), "ok.toml").and_then(Disk::new).unwrap();
    assert_eq!(ok.layout().lbn_to_pbn(10).unwrap().sector, 333);
    assert_refused(&with("[[10, 10020000]]"), "zones[0].defects[0]", "outside the zone");
    assert_refused(&with("[[10, 333], [10, 667]]"), "zones[0].defects[1]", "listed twice");
    assert_refused(&with("[[10, 333], [11, 333]]"), "zones[0].defects[1]", "two defects");
    // Remapping onto a sector that holds an LBN would give two LBNs one sector.
    assert_refused(&with("[[10, 20]]"), "zones[0].defects[0]", "holds an LBN");
    // A spare cannot be "defective": it holds no LBN to move.
    assert_refused(&with("[[333, 667]]"), "zones[0].defects[0]", "holds no LBN");
    assert_refused(&with("[[10, 333], [333, 667]]"), "zones[0].defects[1]", "also a defect's spare");
}

/// The fuzz finding crash-256f5d01's disk: 6 tracks of 17 sectors, spares at the zone's end, an
/// empty front of 5 slots, and a defect at slot 50 (LBN 45) "remapped" to slot 2, in the empty
/// front. That put LBN 45 in space the spec says is unused; it is refused, and the same defect
/// remapped to a real spare maps LBN 45 there and leaves the front empty.
#[test]
fn a_defect_remapped_into_the_empty_front_is_refused() {
    let disk = |defects: &str| {
        format!(
            "name = \"front\"\nrpm = 7200.0\nsurfaces = 1\nhead_switch_ms = 0.176\nwrite_settle_ms = 0.1\nread_settle_ms = 0.0\n\
             mapping = \"serpentine\"\nsparing = {{ scheme = \"sectors_per_zone\" }}\n[[zones]]\nfirst_cylinder = 0\nlast_cylinder = 5\n\
             sectors_per_track = 17\nspares = 4\nempty_front_sectors = 5\nslips = [100]\ndefects = {defects}\n\
             [seek]\ntype = \"three_point\"\nsingle_ms = 1.0\naverage_ms = 5.0\nfull_ms = 11.0\n"
        )
    };
    assert_refused(&disk("[[50, 2]]"), "zones[0].defects[0]", "spare 2 is in the zone's empty front (slots 0..5)");
    // Slot 98 is the first spare (98, 99 and 101; 100 is slipped).
    let ok = DiskSpec::from_toml_str(&disk("[[50, 98]]"), "ok.toml").and_then(Disk::new).unwrap();
    let layout = ok.layout();
    assert_eq!(layout.lbn_to_pbn(45).unwrap(), freeblock_disk::Pbn { cylinder: 5, surface: 0, sector: 98 - 85 });
    for lbn in 0..layout.capacity() {
        let pbn = layout.lbn_to_pbn(lbn).unwrap();
        assert!(pbn.cylinder > 0 || pbn.sector >= 5, "LBN {lbn} is in the empty front: {pbn:?}");
        assert_eq!(layout.pbn_to_lbn(pbn), Some(lbn), "LBN {lbn} at {pbn:?}");
    }
    for sector in 0..5 {
        assert_eq!(layout.pbn_to_lbn(freeblock_disk::Pbn { cylinder: 0, surface: 0, sector }), None);
    }
}

#[test]
fn spares_and_empty_fronts_beyond_their_unit_are_refused() {
    assert_refused(&spared("sectors_per_track", "spares = 335"), "zones[0].spares", "334 sectors on a track");
    assert_refused(&spared("tracks", "spares = 30001"), "zones[0].spares", "tracks in the zone");
    assert_refused(&spared("sectors_per_cylinder", "spares = 2005"), "zones[0].spares", "sectors in a cylinder");
    assert_refused(&spared("none", "empty_front_sectors = 10020001"), "zones[0].empty_front_sectors", "more than the zone's");
}

fn test_disk() -> Disk {
    Disk::new(library::get("test").unwrap()).unwrap()
}

/// A request's service time depends only on the rotational phase of its start: the same request
/// a whole number of revolutions later takes exactly as long, however late that is.
#[test]
fn rotational_position_is_exact_past_two_to_the_64_picoseconds() {
    let disk = test_disk();
    let rev_ps = disk.revolution_ps();
    // `rev_ps` ns later is exactly 1000 revolutions later; a few million of those pass 213 days.
    let early = 1_234_567;
    let late = early + rev_ps * 4_000_000;
    assert!(u128::from(late) * 1000 > u128::from(u64::MAX), "not past 2^64 ps");
    assert_eq!(disk.rot_pos(late), disk.rot_pos(early));
    assert_eq!(u128::from(disk.rot_pos(late)), u128::from(late) * 1000 % u128::from(rev_ps));
    let mut runs = Vec::new();
    let a = disk.access(HeadState::default(), early, 5_000_000, 64, Op::Read, &mut runs).unwrap();
    let b = disk.access(HeadState::default(), late, 5_000_000, 64, Op::Read, &mut runs).unwrap();
    assert_eq!(a.breakdown, b.breakdown);
    assert!(b.end - b.start > 1_000_000, "a seek of half the disk takes more than 1 ms: {:?}", b.breakdown);
}

#[test]
fn a_request_that_cannot_end_before_the_end_of_time_is_refused() {
    let disk = test_disk();
    let mut runs = Vec::new();
    let e = disk.access(HeadState::default(), u64::MAX - 1000, 0, 8, Op::Read, &mut runs).unwrap_err();
    assert!(matches!(e, AccessError::TimeLimit { .. }), "{e}");
    assert!(e.to_string().contains("2^64 ns"), "{e}");
}

/// With the cache on the buffer model counts u64 picoseconds, which used to wrap after 213.5
/// days: requests then completed in 0 ms. Now a request either takes its real time or, after
/// [`CACHED_TIME_LIMIT`], is refused.
#[test]
fn a_cached_drive_keeps_time_until_its_limit_then_refuses() {
    let mut spec = library::get("atlas10k").unwrap();
    assert!(spec.cache.enabled, "atlas10k has its cache on");
    spec.cache.read_ahead_sectors = 0;
    let disk = std::sync::Arc::new(Disk::new(spec).unwrap());
    let mut drive = Drive::new(disk.clone());
    let mut t = CACHED_TIME_LIMIT - NS_PER_DAY;
    for i in 0..50u64 {
        let lbn = (i * 7_919_113) % (disk.capacity() - 64);
        let s = drive.serve(t, lbn, 16, Op::Read).unwrap();
        assert!(s.access.end - s.access.start > 100_000, "request {i} at day 99 took {} ns", s.access.end - s.access.start);
        t = s.access.end + 1000;
    }
    for start in [CACHED_TIME_LIMIT + 1, 214 * NS_PER_DAY, u64::MAX / 2] {
        let e = drive.serve(start, 1000, 16, Op::Read).unwrap_err();
        assert!(matches!(e, AccessError::TimeLimit { .. }), "{e}");
        assert!(e.to_string().contains("100 days"), "{e}");
        assert!(drive.predict(start, 1000, 16, Op::Read).is_err());
    }
}

// ---- DiskSim files -------------------------------------------------------------------------

fn diskspecs_error(tag: &str, text: &str) -> String {
    let dir = scratch_dir(tag);
    let path = dir.join("hostile.diskspecs");
    fs::write(&path, text).unwrap();
    let msg = disksim::import(&path).unwrap_err().to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    msg
}

#[test]
fn deeply_nested_brackets_are_an_error_not_a_stack_overflow() {
    // 20,000 levels overflowed the stack (and killed the Python process that asked).
    let lists = format!("disksim_disk D {{\n  Model = {}1{}\n}}\n", "[".repeat(20_000), "]".repeat(20_000));
    let msg = diskspecs_error("lists", &lists);
    assert!(msg.contains(":2: list of `Model` nested more than 64 deep"), "{msg}");
    let blocks = format!("disksim_disk D {{\n{}\n}}\n", "k = b {\n".repeat(20_000));
    let msg = diskspecs_error("blocks", &blocks);
    assert!(msg.contains("block `b` nested more than 64 deep"), "{msg}");
    // Real files nest four deep; sixty levels still parse.
    let fine = format!("x D {{\n  k = {}1{}\n}}\n", "[".repeat(60), "]".repeat(60));
    assert_eq!(disksim::parse_str(&fine, "fine", std::path::Path::new(".")).unwrap().len(), 1);
}

const MODEL: &str = "dm_disk TINY {
   Number of data surfaces = 2,
   Number of cylinders = 10,
   Block count = 380,
   Mechanical Model = dm_mech_g1 {
      Seek type = extracted,
      Full seek curve = tiny.seek,
      Head switch time = 0.5,
      Rotation speed (in rpms) = 5400
   },
   Layout Model = dm_layout_g1 {
      LBN-to-PBN mapping scheme = 0,
      Sparing scheme used = 3,
      Zones = [
         dm_layout_g1_zone {
            First cylinder number = 0,
            Last cylinder number = 9,
            Blocks per track = 20,
            Number of spares = 1,
            slips = [ 5 ]
         }
      ]
   }
}
";

/// Imports `model` with `seek` as its `.seek` file, then builds the disk (cache on, as the
/// panics needed it); returns the error text.
fn import_error(tag: &str, model: &str, seek: &str) -> String {
    let dir = scratch_dir(tag);
    fs::write(dir.join("tiny.model"), model).unwrap();
    fs::write(dir.join("tiny.seek"), seek).unwrap();
    let built = disksim::import(&dir.join("tiny.model")).and_then(|mut spec| {
        spec.cache.enabled = true;
        let disk = std::sync::Arc::new(Disk::new(spec)?);
        Drive::new(disk).serve(0, 0, 8, Op::Read).expect("served");
        Ok(())
    });
    built.unwrap_err().to_string()
}

const SEEK: &str = "Seek distances measured: 3\n1, 1.0\n5, 2.0\n9, 3.0\n";

#[test]
fn the_valid_tiny_model_builds() {
    let dir = scratch_dir("tiny-ok");
    fs::write(dir.join("tiny.model"), MODEL).unwrap();
    fs::write(dir.join("tiny.seek"), SEEK).unwrap();
    let mut spec = disksim::import(&dir.join("tiny.model")).unwrap();
    spec.cache.enabled = true;
    let mut drive = Drive::new(std::sync::Arc::new(Disk::new(spec).unwrap()));
    assert!(drive.serve(0, 0, 8, Op::Read).unwrap().access.end > 0);
}

#[test]
fn hostile_seek_files_are_errors_naming_the_line() {
    // A count of 2^63 reserved 2^63 points up front: capacity overflow.
    let msg = import_error("count", MODEL, "Seek distances measured: 9223372036854775808\n1, 1.0\n");
    assert!(msg.contains("tiny.seek:1: announces 9223372036854775808 points but has 1"), "{msg}");
    // A huge entry passed the file's checks, then overflowed the cached drive's picoseconds.
    let msg = import_error("huge", MODEL, "Seek distances measured: 2\n1, 1.0\n5, 1e300\n");
    assert!(msg.contains("field `seek.points[1]`") && msg.contains("longer than"), "{msg}");
    let msg = import_error("falls", MODEL, "Seek distances measured: 2\n1, 3.0\n5, 2.0\n");
    assert!(msg.contains("field `seek.points[1]`") && msg.contains("slopes down"), "{msg}");
}

#[test]
fn hostile_disksim_geometry_is_an_error_naming_the_line() {
    let msg = import_error("surfaces", &MODEL.replace("Number of data surfaces = 2", "Number of data surfaces = 1000000"), SEEK);
    assert!(msg.contains("tiny.model:2: `Number of data surfaces` 1000000 is more than the 1024 supported"), "{msg}");
    let msg = import_error("cyl", &MODEL.replace("Last cylinder number = 9", "Last cylinder number = 4294967295"), SEEK);
    assert!(msg.contains("tiny.model:17: `Last cylinder number` 4294967295 is beyond the last cylinder"), "{msg}");
    let msg = import_error("header", &MODEL.replace("Number of cylinders = 10", "Number of cylinders = 1000000000"), SEEK);
    assert!(msg.contains("tiny.model:3: `Number of cylinders` 1000000000 is more than"), "{msg}");
    let msg = import_error("spt", &MODEL.replace("Blocks per track = 20", "Blocks per track = 4000000000"), SEEK);
    assert!(msg.contains("tiny.model:18: `Blocks per track` 4000000000 is more than"), "{msg}");
    let msg = import_error("rpm", &MODEL.replace("Rotation speed (in rpms) = 5400", "Rotation speed (in rpms) = 1e308"), SEEK);
    assert!(msg.contains("field `rpm`"), "{msg}");
    let msg = import_error("slips", &MODEL.replace("slips = [ 5 ]", "slips = [ 5, 5 ]"), SEEK);
    assert!(msg.contains("field `zones[0].slips[1]`: 5 is listed twice"), "{msg}");
    let msg = import_error("slip-range", &MODEL.replace("slips = [ 5 ]", "slips = [ 400 ]"), SEEK);
    assert!(msg.contains("field `zones[0].slips[0]`: 400 is outside the zone (400 sectors"), "{msg}");
}

#[test]
fn a_negative_bus_time_in_a_system_config_is_an_error_naming_the_line() {
    let dir = scratch_dir("parv");
    let parv = dir.join("hostile.parv");
    let text = |read: &str| {
        format!(
            "disksim_bus BUS {{\n  Arbitration type = 1,\n  Read block transfer time = {read},\n  Write block transfer time = 0.1\n}}\n\
             topology disksim_bus bus0 [ disksim_disk disk0 [] ]\ninstantiate [ bus0 ] as BUS\n"
        )
    };
    fs::write(&parv, text("0.05")).unwrap();
    assert_eq!(disksim::bus_transfer_times(&parv).unwrap(), Some((0.05, 0.1)));
    // A negative time was dropped by a `max` with the disk's own transfer time, without a word.
    fs::write(&parv, text("-0.05")).unwrap();
    let msg = disksim::bus_transfer_times(&parv).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("{}:3: `Read block transfer time` must be between 0", parv.display())), "{msg}");
}
