//! Model calibration against a measured trace (`freeblock_fit::calibrate`).

use std::path::PathBuf;

use freeblock_fit::calibrate::{calibrate_model, judge_model, CalibrateOptions, Objective};
use pyo3::prelude::*;

use crate::error::ToPyResult;

/// Fits `model` (a built-in name, a `.toml` or a `.diskspecs` path) to the first half of
/// `trace_path` (DiskSim validate format) and scores it before and after on the second half.
/// `params`: the parameter names to fit (`None`: every one the model has). The other options are
/// `freeblock calibrate`'s (`None`: its default). Returns `(report as JSON, calibrated spec as
/// TOML)`. A `NAME.parv` beside the trace supplies the bus, as in `freeblock calibrate`. The GIL
/// is released during the search.
#[pyfunction]
#[pyo3(signature = (trace_path, model, params=None, objective=None, body_quantile=None, replays=None, seed=None, check=None))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate(
    py: Python<'_>,
    trace_path: PathBuf,
    model: &str,
    params: Option<Vec<String>>,
    objective: Option<&str>,
    body_quantile: Option<f64>,
    replays: Option<u32>,
    seed: Option<u64>,
    check: Option<bool>,
) -> PyResult<(String, String)> {
    crate::guard::guarded("calibrate", || {
        let defaults = CalibrateOptions::default();
        let options = CalibrateOptions {
            params,
            objective: objective.map(Objective::from_name).transpose().py_err()?.unwrap_or(defaults.objective),
            body_quantile: body_quantile.unwrap_or(defaults.body_quantile),
            replays: replays.unwrap_or(defaults.replays),
            seed: seed.unwrap_or(defaults.seed),
            validate: check.unwrap_or(defaults.validate),
            ..defaults
        };
        let outcome = py.allow_threads(|| calibrate_model(&trace_path, model, &options)).py_err()?;
        Ok((serde_json::to_string(&outcome).py_err()?, outcome.spec.to_toml_string()))
    })
}

/// Judges calibrate (its default options) on `trace_path` and `model` by the criterion fixed in
/// docs/calibrate.md (`freeblock calibrate --judge` on one trace): rolling origins, held-out error
/// per request, moving-block bootstrap intervals, the verdict. Returns the judgement as JSON, as
/// `--judge --json` prints it. A `NAME.parv` beside the trace supplies the bus. The GIL is released
/// during the calibrations.
#[pyfunction]
pub fn calibrate_judge(py: Python<'_>, trace_path: PathBuf, model: &str) -> PyResult<String> {
    crate::guard::guarded("calibrate_judge", || {
        let judgement = py.allow_threads(|| judge_model(&trace_path, model)).py_err()?;
        serde_json::to_string(&judgement).py_err()
    })
}
