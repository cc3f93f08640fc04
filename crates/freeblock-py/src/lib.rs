//! # freeblock-py: the `freeblock._freeblock` extension module
//!
//! A thin layer over the Rust crates: it converts arguments and results between Python and Rust
//! and nothing else. The Python facade (`python/freeblock/`) builds DataFrames, progress bars and
//! plots on top of it; the simulator, the disk model and the command line live in `freeblock`,
//! `freeblock-disk` and `freeblock-cli`.
//!
//! ```text
//!  freeblock (Python)  ──►  _freeblock (this crate)  ──►  freeblock / freeblock-disk / freeblock-cli
//!   Result, DataFrames        str/dict/list ⇄ Rust          Experiment::run, Disk, validate, cli::run
//! ```
//!
//! | file | what it converts |
//! |---|---|
//! | `error.rs` | every Rust error into one Python exception class (the only place that does) |
//! | `guard.rs` | a Rust panic into a `FreeblockError` (every entry point runs through it) |
//! | `run.rs` | an experiment's TOML text in, the report as JSON and the records as columns out |
//! | `tasks.rs` | Python background tasks as freeblock applications; their control object |
//! | `disk.rs` | built-in disk names, a disk's geometry and seek curve as JSON |
//! | `repro.rs` | `repro free-mining` on Dask: its plan, one run's outcome as bytes, the report from them |
//! | `reproductions.rs` | the reproductions' list; one run's output, statements (as JSON) and files |
//! | `validate.rs` | a trace replay against a disk model, as JSON: the summary, or every request |
//! | `calibrate.rs` | a model fitted to a measured trace: the report as JSON, the spec as TOML; calibrate judged by its criterion |
//! | `characterize.rs` | a drive learned through the black box and graded: the report as JSON, the spec as TOML |
//! | `cli.rs` | argv into `freeblock_cli::run`, its exit code back |
//!
//! Every call that can take long (runs, validation, CLI commands) releases the GIL.

mod calibrate;
mod characterize;
mod cli;
mod disk;
mod error;
mod guard;
mod repro;
mod reproductions;
mod run;
mod tasks;
mod validate;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _freeblock(m: &Bound<'_, PyModule>) -> PyResult<()> {
    error::register(m)?;
    m.add_function(wrap_pyfunction!(run::run_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(run::check_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(disk::disks, m)?)?;
    m.add_function(wrap_pyfunction!(disk::disk_info, m)?)?;
    m.add_function(wrap_pyfunction!(validate::validate, m)?)?;
    m.add_function(wrap_pyfunction!(validate::replay, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate::calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate::calibrate_judge, m)?)?;
    m.add_function(wrap_pyfunction!(characterize::characterize, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(repro::free_mining_plan, m)?)?;
    m.add_function(wrap_pyfunction!(repro::free_mining_run, m)?)?;
    m.add_function(wrap_pyfunction!(repro::free_mining_finish, m)?)?;
    m.add_function(wrap_pyfunction!(reproductions::reproductions, m)?)?;
    m.add_function(wrap_pyfunction!(reproductions::repro_run, m)?)?;
    m.add_class::<tasks::PyTaskControl>()?;
    m.add("ROUTES", pyo3::types::PyTuple::new(m.py(), tasks::ROUTES)?)?;
    m.add("RECORD_SCHEMA", pyo3::types::PyTuple::new(m.py(), run::record_schema())?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
