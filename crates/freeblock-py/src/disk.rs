//! Disks: the built-in library and a disk's geometry and mechanics, as JSON.

use freeblock_disk::{library, Disk, DiskSummary};
use pyo3::prelude::*;

use crate::error::ToPyResult;

/// Names of the built-in disks.
#[pyfunction]
pub fn disks() -> PyResult<Vec<String>> {
    crate::guard::guarded("disks", || Ok(library::names().into_iter().map(str::to_string).collect()))
}

/// A disk's geometry and mechanics as a JSON object: name, description, source, capacity,
/// rpm, revolution time, cylinders, surfaces, zones (first/last cylinder, sectors per track,
/// first LBN, LBN count), head-switch and settle times, seek summary and sampled seek curve
/// (`[distance_cylinders, ms]` pairs). `name` is a built-in name or a `.toml` / `.diskspecs` path.
#[pyfunction]
pub fn disk_info(name: &str) -> PyResult<String> {
    crate::guard::guarded("disk_info", || {
        let disk = Disk::new(library::load(name).py_err()?).py_err()?;
        serde_json::to_string(&DiskSummary::of(&disk)).py_err()
    })
}
