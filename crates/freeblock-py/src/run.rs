//! Running an experiment: TOML text in; the report as JSON and the per-request records as
//! columns out, so that Python builds a DataFrame without a loop per request.

use std::path::PathBuf;

use freeblock::experiment::Experiment;
use freeblock::report::Record;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::error::ToPyResult;

/// The records as a dict of equal-length lists, one per field of [`Record`]. `op` is `"R"` or
/// `"W"`; `measured_ns` is `None` where the trace recorded no measured time.
fn records_to_columns<'py>(py: Python<'py>, records: &[Record]) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    macro_rules! column {
        ($name:literal, $get:expr) => {
            dict.set_item($name, PyList::new(py, records.iter().map($get))?)?;
        };
    }
    column!("id", |r| r.id);
    column!("arrival_ns", |r| r.arrival_ns);
    column!("start_ns", |r| r.start_ns);
    column!("end_ns", |r| r.end_ns);
    column!("lbn", |r| r.lbn);
    column!("sectors", |r| r.sectors);
    column!("op", |r| if r.op.is_read() { "R" } else { "W" });
    column!("seek_ns", |r| r.seek_ns);
    column!("rotational_latency_ns", |r| r.rotational_latency_ns);
    column!("transfer_ns", |r| r.transfer_ns);
    column!("overhead_ns", |r| r.overhead_ns);
    column!("cache_hit", |r| r.cache_hit);
    column!("measured_ns", |r| r.measured_ns);
    Ok(dict)
}

/// Parses and runs one experiment.
///
/// `toml_text` is an experiment file's text; `base_dir` resolves the relative paths in it;
/// `origin` names it in error messages. `progress`, if given, is called with the number of
/// requests completed so far, now and then. With `keep_records` the per-request records are
/// returned (otherwise the columns are empty).
///
/// Returns `(report_json, records)`. The GIL is released while the simulation runs; it is taken
/// back briefly for each progress call, which is also where Ctrl-C is noticed (the run then
/// finishes and `KeyboardInterrupt` is raised).
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir, progress=None, *, origin="<experiment>", keep_records=true))]
pub fn run_experiment<'py>(
    py: Python<'py>,
    toml_text: &str,
    base_dir: PathBuf,
    progress: Option<PyObject>,
    origin: &str,
    keep_records: bool,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let mut experiment = Experiment::from_toml_str(toml_text, origin, &base_dir).py_err()?;
    experiment.sim.keep_records = keep_records;

    let mut callback_error: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        let mut on_progress = |done: u64| {
            if callback_error.is_some() {
                return;
            }
            Python::with_gil(|py| {
                let called = py.check_signals().and_then(|()| match &progress {
                    Some(f) => f.call1(py, (done,)).map(drop),
                    None => Ok(()),
                });
                if let Err(e) = called {
                    callback_error = Some(e);
                }
            });
        };
        experiment.run(Some(&mut on_progress))
    });
    if let Some(e) = callback_error {
        return Err(e);
    }
    let report = result.py_err()?;
    let json = serde_json::to_string(&report).py_err()?;
    let columns = records_to_columns(py, &report.records)?;
    Ok((json, columns))
}
