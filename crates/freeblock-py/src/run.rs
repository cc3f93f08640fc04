//! Running an experiment: TOML text in; the report as JSON and the per-request records as
//! columns out, so that Python builds a DataFrame without a loop per request.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use freeblock::experiment::Experiment;
use freeblock::freeblock::FreeblockError;
use freeblock::report::{Record, RecordKind, RecordValue, RunReport, RECORD_COLUMNS};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::error::{self, ToPyResult};
use crate::tasks::PyApp;

/// Reads an experiment without running it: the same errors `run_experiment` would raise for its
/// text (syntax, unknown keys, bad values), so a sweep can refuse a bad point before any runs.
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir, *, origin="<experiment>"))]
pub fn check_experiment(toml_text: &str, base_dir: PathBuf, origin: &str) -> PyResult<()> {
    crate::guard::guarded("check_experiment", || Experiment::from_toml_str(toml_text, origin, &base_dir).map(drop).py_err())
}

/// The records as a dict of equal-length lists, one per column of [`RECORD_COLUMNS`] (the
/// command line's CSV columns): counts as `int`, times in milliseconds as `float`, `op` as
/// `"R"` or `"W"`, `cache_hit` as `bool`, energies in millijoules as `float`, and `None` where a
/// measured time or an energy is missing.
fn records_to_columns<'py>(py: Python<'py>, records: &[Record]) -> PyResult<Bound<'py, PyDict>> {
    let rows: Vec<[RecordValue; RECORD_COLUMNS.len()]> = records.iter().map(Record::values).collect();
    let dict = PyDict::new(py);
    for (i, column) in RECORD_COLUMNS.iter().enumerate() {
        let cells = rows.iter().map(|row| -> PyResult<Bound<'py, PyAny>> {
            Ok(match row[i] {
                RecordValue::Int(v) => v.into_pyobject(py)?.into_any(),
                RecordValue::Ms(v) | RecordValue::Mj(v) => v.into_pyobject(py)?.into_any(),
                RecordValue::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
                RecordValue::Text(v) => v.into_pyobject(py)?.into_any(),
                RecordValue::Missing => py.None().into_bound(py),
            })
        });
        dict.set_item(column.name, PyList::new(py, cells.collect::<PyResult<Vec<_>>>()?)?)?;
    }
    Ok(dict)
}

/// The record columns as `(name, kind)` pairs, kind one of `int`, `ms`, `optional_ms`,
/// `optional_mj`, `bool`, `text`: Python's `RECORD_COLUMNS` and its DataFrame types come from here.
pub fn record_schema() -> Vec<(&'static str, &'static str)> {
    RECORD_COLUMNS
        .iter()
        .map(|c| {
            let kind = match c.kind {
                RecordKind::Int => "int",
                RecordKind::Ms => "ms",
                RecordKind::OptionalMs => "optional_ms",
                RecordKind::OptionalMj => "optional_mj",
                RecordKind::Bool => "bool",
                RecordKind::Text => "text",
            };
            (c.name, kind)
        })
        .collect()
}

/// Runs `experiment` with the Python background tasks `apps` added to its freeblock scheduling
/// (switched on with the default settings when the experiment has no `[freeblock]` table).
///
/// This is [`Experiment::run`] with a hook for applications built outside the experiment file.
/// A task whose block size the subsystem refuses is reported, with its name, through `failure`.
fn run_with_apps(
    experiment: &Experiment,
    apps: Vec<PyApp>,
    failure: &Mutex<Option<PyErr>>,
    progress: Option<&mut dyn FnMut(u64)>,
) -> freeblock::Result<RunReport> {
    let mut simulation = experiment.build(true)?;
    let disk = simulation.drive_mut().disk().clone();
    let fb = simulation.freeblock_mut().expect("built with freeblock on");
    let sector_bytes = u64::from(disk.spec().sector_bytes);
    for mut app in apps {
        app.set_disk(disk.capacity(), sector_bytes);
        let name = freeblock::freeblock::BackgroundApp::name(&app);
        if let Err(e) = fb.add_app(Box::new(app)) {
            let message = format!("freeblock: task {name:?}: {e}");
            let mut slot = failure
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            slot.get_or_insert(error::from_freeblock(&e, message.clone()));
            return Err(FreeblockError::Application(message).into());
        }
    }
    simulation.run(progress)
}

/// Parses and runs one experiment.
///
/// `toml_text` is an experiment file's text; `base_dir` resolves the relative paths in it;
/// `origin` names it in error messages. `progress`, if given, is called with the number of
/// requests completed so far, now and then. With `keep_records` the per-request records are
/// returned (otherwise the columns are empty). `tasks` are Python background tasks
/// (`freeblock.BackgroundTask` objects, see `tasks.rs`), added after the experiment's own.
///
/// Returns `(report_json, records)`. The GIL is released while the simulation runs; it is taken
/// back briefly for each progress call, which is also where Ctrl-C is noticed (the run then
/// finishes and `KeyboardInterrupt` is raised), and for each call of a Python task. An exception
/// raised by a task stops the run and is raised here.
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir, progress=None, *, origin="<experiment>", keep_records=true, tasks=None))]
pub fn run_experiment<'py>(
    py: Python<'py>,
    toml_text: &str,
    base_dir: PathBuf,
    progress: Option<PyObject>,
    origin: &str,
    keep_records: bool,
    tasks: Option<Vec<Bound<'py, PyAny>>>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    // Inside the panic guard (`guard.rs`): a Rust panic reaches Python as a FreeblockError.
    crate::guard::guarded("run_experiment", || {
        let mut experiment = Experiment::from_toml_str(toml_text, origin, &base_dir).py_err()?;
        experiment.sim.keep_records = keep_records;
        let task_error: Arc<Mutex<Option<PyErr>>> = Arc::default();
        let apps = tasks
            .unwrap_or_default()
            .iter()
            .map(|t| PyApp::new(t, task_error.clone()))
            .collect::<PyResult<Vec<_>>>()?;

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
            if apps.is_empty() {
                experiment.run(Some(&mut on_progress))
            } else {
                run_with_apps(&experiment, apps, &task_error, Some(&mut on_progress))
            }
        });
        let task_error = task_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(e) = task_error.or(callback_error) {
            return Err(e);
        }
        let report = result.py_err()?;
        let json = serde_json::to_string(&report).py_err()?;
        let columns = records_to_columns(py, &report.records)?;
        Ok((json, columns))
    })
}
