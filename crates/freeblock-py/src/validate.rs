//! Fidelity check: replay a real-drive trace on a disk model (`freeblock_fit::validate`).

use std::path::PathBuf;

use freeblock_disk::library;
use pyo3::prelude::*;

use crate::error::ToPyResult;

/// Replays `trace_path` (DiskSim validate format) on `model` (a built-in name, a `.toml` or a
/// `.diskspecs` path) and returns the comparison as JSON: requests, measured and simulated mean
/// service times and the RMS demerit. A DiskSim system configuration beside the trace
/// (`NAME.parv`) supplies the bus timing, as in `freeblock validate`. The GIL is released during
/// the replay.
#[pyfunction]
pub fn validate(py: Python<'_>, trace_path: PathBuf, model: &str) -> PyResult<String> {
    crate::guard::guarded("validate", || {
        let outcome = py.allow_threads(|| freeblock_fit::validate::validate_model(&trace_path, model)).py_err()?;
        serde_json::to_string(&outcome.validation).py_err()
    })
}

/// Replays `trace_path` on `model` as [`validate`] does and returns every request as JSON: its
/// operation, LBN, sectors and cylinder, measured and simulated times, and the error split into
/// whole revolutions and the fine rest (`freeblock_fit::validate::Replayed`). The GIL is released
/// during the replay.
#[pyfunction]
pub fn replay(py: Python<'_>, trace_path: PathBuf, model: &str) -> PyResult<String> {
    crate::guard::guarded("replay", || {
        let spec = library::load(model).py_err()?;
        let disk = freeblock_fit::validate::disk_for_trace(spec, &trace_path).py_err()?;
        let records = py.allow_threads(|| freeblock_fit::validate::replay(disk, &trace_path)).py_err()?;
        serde_json::to_string(&records).py_err()
    })
}
