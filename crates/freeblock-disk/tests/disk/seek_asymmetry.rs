//! `seek_asymmetry_ms`: inward seeks (towards higher cylinders) slower than the curve by it,
//! outward ones quicker by as much; 0 leaves every move as it was; a value that would make a
//! seek negative, or that is not a number, is refused naming the field.

use freeblock_disk::{library, Disk, DiskSpec, HeadState, Op};

fn spec_with(asymmetry_ms: f64) -> DiskSpec {
    DiskSpec { seek_asymmetry_ms: asymmetry_ms, ..library::get("hp_c2247a").unwrap() }
}

#[test]
fn inward_seeks_take_longer_and_outward_ones_shorter_by_the_asymmetry() {
    let plain = Disk::new(spec_with(0.0)).unwrap();
    let skewed = Disk::new(spec_with(0.4)).unwrap();
    for (from, to) in [(100, 101), (100, 600), (1500, 10)] {
        for op in [Op::Read, Op::Write] {
            let at = |disk: &Disk, a: u32, b: u32| disk.move_ns(HeadState { cylinder: a, surface: 0 }, b, 0, op) as i64;
            let (base_in, base_out) = (at(&plain, from.min(to), from.max(to)), at(&plain, from.max(to), from.min(to)));
            assert_eq!(base_in, base_out, "the curve alone is symmetric");
            assert_eq!(at(&skewed, from.min(to), from.max(to)) - base_in, 400_000, "{from} → {to} inward, {op:?}");
            assert_eq!(at(&skewed, from.max(to), from.min(to)) - base_out, -400_000, "{from} → {to} outward, {op:?}");
        }
    }
    // A head switch on the same cylinder is no seek; a negative asymmetry slows outward seeks.
    let same = |disk: &Disk| disk.move_ns(HeadState { cylinder: 50, surface: 0 }, 50, 1, Op::Read);
    assert_eq!(same(&skewed), same(&plain));
    let outward_slow = Disk::new(spec_with(-0.25)).unwrap();
    let out = |disk: &Disk| disk.move_ns(HeadState { cylinder: 900, surface: 0 }, 300, 0, Op::Read) as i64;
    assert_eq!(out(&outward_slow) - out(&plain), 250_000);
    // The quicker direction bounds every seek of a distance from below.
    assert_eq!(skewed.seek_curve().shortest(500), plain.seek_curve().time(500) - 400_000);
}

#[test]
fn a_symmetric_spec_writes_no_asymmetry_and_an_asymmetric_one_round_trips() {
    assert!(!spec_with(0.0).to_toml_string().contains("seek_asymmetry_ms"));
    let text = spec_with(0.3125).to_toml_string();
    assert!(text.contains("seek_asymmetry_ms = 0.3125"), "{text}");
    assert_eq!(DiskSpec::from_toml_str(&text, "skewed.toml").unwrap().seek_asymmetry_ms, 0.3125);
}

#[test]
fn an_asymmetry_past_the_shortest_seek_or_not_a_number_is_refused() {
    let one_cylinder_ms = Disk::new(spec_with(0.0)).unwrap().seek_curve().time(1) as f64 / 1e6;
    for bad in [one_cylinder_ms + 0.01, -(one_cylinder_ms + 0.01)] {
        let e = Disk::new(spec_with(bad)).unwrap_err().to_string();
        assert!(e.contains("seek_asymmetry_ms") && e.contains("less than nothing"), "{bad}: {e}");
    }
    let e = Disk::new(spec_with(f64::NAN)).unwrap_err().to_string();
    assert!(e.contains("seek_asymmetry_ms"), "{e}");
    let text = library::toml_text("test").unwrap().replace("head_switch_ms", "seek_asymmetry_ms = \"fast\"\nhead_switch_ms");
    let e = DiskSpec::from_toml_str(&text, "my.toml").unwrap_err().to_string();
    assert!(e.contains("seek_asymmetry_ms"), "{e}");
}
