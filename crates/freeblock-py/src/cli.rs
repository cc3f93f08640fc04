//! The command line, reached from Python (`python -m freeblock …`, the `freeblock` script).

use std::ffi::OsString;

use pyo3::prelude::*;

/// Runs the `freeblock` command line with `argv` (program name first) and returns its exit code.
/// Output goes straight to the process's stdout and stderr. The GIL is released meanwhile.
#[pyfunction]
pub fn cli_main(py: Python<'_>, argv: Vec<OsString>) -> PyResult<i32> {
    crate::guard::guarded("cli_main", || Ok(py.allow_threads(|| freeblock_cli::run(argv))))
}
