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
