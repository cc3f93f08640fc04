//! `freeblock repro free-mining` with its runs as Dask tasks (driven by
//! `python/freeblock/sweep.py`): the plan, one run, and the report from all the runs' outcomes.
//!
//! ```text
//!  free_mining_plan(argv)            → {"config": JSON, "runs": [JSON], "labels", "start_order", …} or None
//!  free_mining_run(config, run)      → bytes: the run's outcome (or its error), in any process
//!  free_mining_finish(argv, [bytes]) → exit code, having written and printed the Rust command's report
//! ```
//!
//! A run's outcome crosses processes as postcard bytes: its floating-point figures are copied bit
//! for bit (NaN included), so the report assembled from Dask workers is the one the threads of
//! the `freeblock` binary give. The settings and runs travel as JSON (readable in the Dask
//! dashboard), read back exactly (serde_json's `float_roundtrip`).

use std::ffi::OsString;

use freeblock_repro::p000_freeblock::free_mining::{self, FreeMiningConfig, RunKey, RunResult};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::error::ConfigError;
use crate::guard::guarded;

/// A name for a run in progress bars and error messages.
fn label(k: &RunKey) -> String {
    let mut s = format!("{} MPL {} {} {}%", k.scheduler, k.mpl, k.planner, k.sample_percent);
    if k.overlap {
        s.push_str(" repeated");
    }
    if k.balance != k.planner.balances_by_default() {
        s.push_str(if k.balance { " balanced" } else { " unbalanced" });
    }
    s
}

fn json_error(what: &str, e: &dyn std::fmt::Display) -> PyErr {
    ConfigError::new_err(format!("free-mining: {what}: {e}"))
}

/// The runs of `argv` (program name first) when it is `freeblock repro free-mining …`, else
/// `None` (the caller then hands `argv` to `cli_main`, which prints help or errors as usual).
#[pyfunction]
pub fn free_mining_plan(py: Python<'_>, argv: Vec<OsString>) -> PyResult<Option<PyObject>> {
    guarded("free_mining_plan", || {
        let Some(cli) = freeblock_cli::commands::sweep::free_mining_plan(argv) else { return Ok(None) };
        let plan = cli.plan;
        let config = serde_json::to_string(&plan.config).map_err(|e| json_error("settings", &e))?;
        let runs = plan.runs.iter().map(serde_json::to_string).collect::<Result<Vec<_>, _>>().map_err(|e| json_error("runs", &e))?;
        let d = PyDict::new(py);
        d.set_item("config", config)?;
        d.set_item("runs", runs)?;
        d.set_item("labels", plan.runs.iter().map(label).collect::<Vec<_>>())?;
        d.set_item("start_order", plan.start_order)?;
        d.set_item("workers", cli.workers)?;
        d.set_item("scheduler_address", cli.scheduler_address)?;
        d.set_item("quiet", cli.quiet)?;
        Ok(Some(d.into_any().unbind()))
    })
}

/// Runs one planned run (`run`, one of the plan's JSON runs, with the plan's `config`) and returns
/// its outcome as bytes for [`free_mining_finish`]. A failed run is an outcome too (its error
/// text), as with the binary's threads. The GIL is released meanwhile.
#[pyfunction]
pub fn free_mining_run<'py>(py: Python<'py>, config: &str, run: &str) -> PyResult<Bound<'py, PyBytes>> {
    guarded("free_mining_run", || {
        let config: FreeMiningConfig = serde_json::from_str(config).map_err(|e| json_error("settings", &e))?;
        let key: RunKey = serde_json::from_str(run).map_err(|e| json_error("run", &e))?;
        let outcome: RunResult = py.allow_threads(|| free_mining::run_one(&config, key));
        let bytes = postcard::to_stdvec(&outcome).map_err(|e| json_error("encoding the outcome", &e))?;
        Ok(PyBytes::new(py, &bytes))
    })
}

/// Assembles the report of `argv`'s reproduction from `outcomes` (the bytes of
/// [`free_mining_run`], one per planned run, in plan order), writes its plots and CSVs and prints
/// it as the Rust command does; returns the exit code. `ran_on` ("2 Dask workers") and `wall_s`
/// go into the closing line on stderr.
#[pyfunction]
pub fn free_mining_finish(py: Python<'_>, argv: Vec<OsString>, outcomes: Vec<Vec<u8>>, ran_on: &str, wall_s: f64) -> PyResult<i32> {
    guarded("free_mining_finish", || {
        let decoded = outcomes
            .iter()
            .enumerate()
            .map(|(i, b)| postcard::from_bytes::<RunResult>(b).map_err(|e| ConfigError::new_err(format!("free-mining: outcome of run {i} is not one of free_mining_run's: {e}"))))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(py.allow_threads(|| freeblock_cli::commands::sweep::free_mining_finish(argv, decoded, ran_on, wall_s)))
    })
}
