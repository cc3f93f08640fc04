//! Invalid TOML specs get one-line errors naming the offending field.

use freeblock_disk::{library, DiskSpec, SpecError};

fn base() -> String {
    library::toml_text("test").unwrap().to_string()
}

fn error_for(text: &str) -> String {
    let e = DiskSpec::from_toml_str(text, "my.toml").unwrap_err();
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "error spans lines: {msg}");
    assert!(msg.starts_with("my.toml: "), "{msg}");
    msg
}

#[test]
fn the_base_spec_is_valid() {
    DiskSpec::from_toml_str(&base(), "my.toml").unwrap();
}

#[test]
fn overlapping_zones_name_the_zone() {
    let text = base().replace("first_cylinder = 5000", "first_cylinder = 4990");
    let msg = error_for(&text);
    assert!(msg.contains("zones[1].first_cylinder") && msg.contains("overlaps"), "{msg}");
}

#[test]
fn non_positive_rpm_names_rpm() {
    for rpm in ["0.0", "-7200.0"] {
        let msg = error_for(&base().replace("rpm = 10025.0", &format!("rpm = {rpm}")));
        assert!(msg.contains("field `rpm`"), "{msg}");
    }
}

#[test]
fn an_unknown_field_is_named() {
    let msg = error_for(&base().replace("surfaces = 6", "surfaces = 6\nspindles = 2"));
    assert!(msg.contains("unknown field `spindles`"), "{msg}");
    let e = DiskSpec::from_toml_str(&base().replace("track_skew = 63.0", "track_skew = 63.0\nskew = 1"), "my.toml").unwrap_err();
    assert!(matches!(e, SpecError::Toml { .. }) && e.to_string().contains("`skew`"), "{e}");
}

#[test]
fn block_count_beyond_the_zones_is_refused() {
    let spec = DiskSpec::from_toml_str(&base().replace("surfaces = 6", "surfaces = 6\nblock_count = 99999999999"), "my.toml").unwrap();
    let msg = freeblock_disk::Disk::new(spec).unwrap_err().to_string();
    assert!(msg.contains("block_count"), "{msg}");
}

/// The example in docs/disk-spec.md parses and builds a disk (the docs cannot drift from the code).
#[test]
fn the_documented_example_is_valid() {
    let doc = std::fs::read_to_string(crate::crate_dir().join("../../docs/disk-spec.md")).unwrap();
    let start = doc.find("```toml\n").expect("a toml example") + "```toml\n".len();
    let text = &doc[start..start + doc[start..].find("```").unwrap()];
    let spec = DiskSpec::from_toml_str(text, "docs/disk-spec.md").unwrap_or_else(|e| panic!("{e}"));
    let disk = freeblock_disk::Disk::new(spec).unwrap();
    assert_eq!(disk.capacity(), 1_000_000);
}

const POWER: &str = "\n[power]\nseek_w = 14.0\nread_w = 8.0\nwrite_w = 8.0\nidle_w = 8.0\nstartup_w = 17.0\n";

#[test]
fn a_power_table_is_read_and_checked() {
    let spec = DiskSpec::from_toml_str(&format!("{}{POWER}", base()), "my.toml").unwrap();
    let power = spec.power.expect("read");
    assert_eq!((power.seek_w, power.idle_w, power.startup_w), (14.0, 8.0, 17.0));
    // It survives a round trip through TOML.
    assert_eq!(DiskSpec::from_toml_str(&spec.to_toml_string(), "again.toml").unwrap().power, Some(power));
    // The paper's WD drive carries its Table 1 figures.
    assert_eq!(library::get("wd800").unwrap().power.map(|p| (p.seek_w, p.read_w, p.write_w, p.idle_w, p.startup_w)), Some((14.0, 8.0, 8.0, 8.0, 17.0)));
    assert!(library::get("test").unwrap().power.is_none());

    let msg = error_for(&format!("{}{}", base(), POWER.replace("idle_w = 8.0", "idle_w = 8.0\nstandby_w = 1.0")));
    assert!(msg.contains("unknown field `standby_w`"), "{msg}");
    let msg = error_for(&format!("{}{}", base(), POWER.replace("startup_w = 17.0\n", "")));
    assert!(msg.contains("missing field `startup_w`"), "{msg}");
    for (bad, why) in [("-1.0", "non-negative"), ("nan", "non-negative"), ("inf", "non-negative"), ("1e6", "more than the 1000 W")] {
        let msg = error_for(&format!("{}{}", base(), POWER.replace("seek_w = 14.0", &format!("seek_w = {bad}"))));
        assert!(msg.contains("power.seek_w") && msg.contains(why), "{bad}: {msg}");
    }
}
