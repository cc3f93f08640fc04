//! A drive learned through the black box and graded against its hidden truth
//! (`freeblock_fit::characterize::characterize_hidden`).

use freeblock_fit::characterize::characterize_hidden;
use freeblock::external::Effects;
use freeblock_disk::library;
use pyo3::prelude::*;

use crate::error::ToPyResult;

/// Hides `disk` (a built-in name, a `.toml` or a `.diskspecs` path) behind the black box, every
/// firmware effect on (`effects`) or off, seeded by `seed`; learns it through the command
/// interface alone and grades it against the truth. Returns `(report as JSON, learned spec as
/// TOML)`. The GIL is released while it probes.
#[pyfunction]
#[pyo3(signature = (disk, effects=true, seed=1))]
pub fn characterize(py: Python<'_>, disk: &str, effects: bool, seed: u64) -> PyResult<(String, String)> {
    crate::guard::guarded("characterize", || {
        let truth = library::load(disk).py_err()?;
        let effects = if effects { Effects::default() } else { Effects::none() };
        let report = py.allow_threads(|| characterize_hidden(disk, truth, effects, seed)).py_err()?;
        Ok((serde_json::to_string(&report).py_err()?, report.spec.to_toml_string()))
    })
}
