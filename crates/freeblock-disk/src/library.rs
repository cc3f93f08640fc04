//! Built-in named disks. (In progress: only a synthetic test disk so far.)

use crate::error::SpecError;
use crate::spec::{DiskSpec, SeekModel, Zone};

/// Names of the built-in disks.
#[must_use]
pub fn names() -> Vec<&'static str> {
    vec!["test"]
}

/// A built-in disk by name.
///
/// # Errors
/// [`SpecError::UnknownDisk`].
pub fn get(name: &str) -> Result<DiskSpec, SpecError> {
    match name {
        "test" | "atlas10k" => Ok(test_disk()),
        _ => Err(SpecError::UnknownDisk { name: name.into(), known: names().join(", ") }),
    }
}

fn test_disk() -> DiskSpec {
    DiskSpec {
        name: "test".into(),
        description: "synthetic 10k RPM test disk".into(),
        source: String::new(),
        rpm: 10025.0,
        surfaces: 6,
        sector_bytes: 512,
        block_count: None,
        mapping: Default::default(),
        sparing: Default::default(),
        zones: vec![
            Zone { first_cylinder: 0, last_cylinder: 4999, sectors_per_track: 334, first_sector_offset: 0.0, empty_front_sectors: 0, track_skew: 63.0, cylinder_skew: 113.0, spares: 0, slips: vec![], defects: vec![] },
            Zone { first_cylinder: 5000, last_cylinder: 10041, sectors_per_track: 229, first_sector_offset: 0.0, empty_front_sectors: 0, track_skew: 44.0, cylinder_skew: 80.0, spares: 0, slips: vec![], defects: vec![] },
        ],
        seek: SeekModel::ThreePoint { single_ms: 1.245, average_ms: 5.0, full_ms: 11.175 },
        head_switch_ms: 0.176,
        read_settle_ms: 0.0,
        write_settle_ms: 0.487,
        controller: Default::default(),
        cache: Default::default(),
    }
}
