//! The reproductions (`freeblock_repro`): their list, and one run's output, statements and files.

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::error::ToPyResult;

/// Every reproduction as `(name, source, title, has_quick)`, in the order of the papers.
#[pyfunction]
pub fn reproductions() -> Vec<(&'static str, &'static str, &'static str, bool)> {
    freeblock_repro::REPRODUCTIONS.iter().map(|r| (r.name, r.source, r.title, r.has_quick)).collect()
}

/// Runs the reproduction `name` with `freeblock repro`'s options and returns `(output,
/// statements as JSON, files written)`: the text the command prints, every claim checked
/// (`source`, `claim`, `paper`, `ours`, `value`, `agrees`), and the CSV and plots under `out`.
/// `shared` is the shared data folder, by default the one `freeblock repro` finds.
/// The GIL is released during the run.
#[pyfunction]
#[pyo3(signature = (name, out, shared = None, quick = false, requests = None, seconds = None, days = None, requests_per_day = None, threads = None, trace = None))]
#[allow(clippy::too_many_arguments)] // the keyword arguments of `freeblock.repro`, converted one by one
pub fn repro_run(
    py: Python<'_>,
    name: &str,
    out: PathBuf,
    shared: Option<PathBuf>,
    quick: bool,
    requests: Option<u64>,
    seconds: Option<f64>,
    days: Option<u32>,
    requests_per_day: Option<u64>,
    threads: Option<usize>,
    trace: Option<PathBuf>,
) -> PyResult<(String, String, Vec<String>)> {
    crate::guard::guarded("repro_run", || {
        let reproduction = freeblock_repro::find(name).map_err(|e| e.to_string()).py_err()?;
        let defaults = freeblock_repro::Options::default();
        let options = freeblock_repro::Options {
            quick,
            requests: requests.unwrap_or(defaults.requests),
            seconds,
            days,
            requests_per_day,
            threads,
            trace,
            out,
            shared: shared.unwrap_or_else(freeblock_repro::shared_dir),
            quiet: true,
            ..defaults
        };
        // A reproduction's error is a boxed error that is not `Send`: it leaves the GIL-free
        // section as its message.
        let outcome = py.allow_threads(|| reproduction.run(&options).map_err(|e| e.to_string())).py_err()?;
        let statements = serde_json::to_string(&outcome.statements).py_err()?;
        Ok((outcome.output, statements, outcome.files.iter().map(|p| p.display().to_string()).collect()))
    })
}
