//! Disks: the built-in library and a disk's geometry and mechanics, as JSON.

use freeblock_disk::{library, Disk};
use pyo3::prelude::*;

use crate::error::ToPyResult;

/// Seek distances (cylinders) sampled for the seek curve; the full stroke is added.
const SEEK_SAMPLE_DISTANCES: [u32; 19] = [
    1, 2, 3, 5, 10, 20, 50, 100, 200, 300, 500, 1000, 2000, 3000, 5000, 10_000, 20_000, 50_000,
    100_000,
];

/// Names of the built-in disks.
#[pyfunction]
pub fn disks() -> Vec<String> {
    library::names().into_iter().map(str::to_string).collect()
}

/// A disk's geometry and mechanics as a JSON object: name, description, source, capacity,
/// rpm, revolution time, cylinders, surfaces, zones (first/last cylinder, sectors per track,
/// first LBN, LBN count), head-switch and settle times, seek summary and sampled seek curve
/// (`[distance_cylinders, ms]` pairs). `name` is a built-in name or a `.toml` / `.diskspecs` path.
#[pyfunction]
pub fn disk_info(name: &str) -> PyResult<String> {
    let spec = library::load(name).py_err()?;
    let disk = Disk::new(spec.clone()).py_err()?;
    let seek = disk.seek_curve();
    let layout = disk.layout();
    let cylinders = layout.cylinders();
    let ms = |ns: u64| ns as f64 / 1e6;
    let mut distances: Vec<u32> = SEEK_SAMPLE_DISTANCES
        .into_iter()
        .filter(|&d| d < cylinders)
        .collect();
    if cylinders > 1 && distances.last() != Some(&(cylinders - 1)) {
        distances.push(cylinders - 1);
    }
    let zones: Vec<_> = layout
        .zone_table()
        .into_iter()
        .map(|(first, last, spt, first_lbn, lbns)| {
            serde_json::json!({
                "first_cylinder": first,
                "last_cylinder": last,
                "sectors_per_track": spt,
                "first_lbn": first_lbn,
                "lbns": lbns,
            })
        })
        .collect();
    let info = serde_json::json!({
        "name": spec.name,
        "description": spec.description,
        "source": spec.source,
        "capacity_sectors": disk.capacity(),
        "capacity_bytes": disk.capacity() * u64::from(spec.sector_bytes),
        "sector_bytes": spec.sector_bytes,
        "rpm": spec.rpm,
        "revolution_ms": disk.revolution_ps() as f64 / 1e9,
        "cylinders": cylinders,
        "surfaces": layout.surfaces(),
        "zones": zones,
        "head_switch_ms": spec.head_switch_ms,
        "read_settle_ms": spec.read_settle_ms,
        "write_settle_ms": spec.write_settle_ms,
        "seek_single_ms": ms(seek.time(1)),
        "seek_average_ms": seek.average() / 1e6,
        "seek_full_ms": ms(seek.full_stroke()),
        "seek_curve_ms": distances.iter().map(|&d| (d, ms(seek.time(d)))).collect::<Vec<_>>(),
        "cache_enabled": spec.cache.enabled,
    });
    serde_json::to_string(&info).py_err()
}
