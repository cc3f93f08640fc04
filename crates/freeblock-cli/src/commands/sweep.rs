//! The commands that run on Dask: `freeblock sweep FILE`, and `freeblock repro free-mining` when
//! it is started from the Python package.
//!
//! Dask lives in Python, so both are driven from there (`python/freeblock/sweep.py`): the
//! Python `freeblock` command intercepts them before forwarding its argv to [`crate::run`].
//! This binary, without Python, says so for `sweep` and runs free-mining on its own threads.
//!
//! For free-mining the Python side needs three things, so that the reproduction is parsed,
//! planned, assembled and printed by the same code either way. The reproduction's own are in
//! `freeblock_repro::p000_freeblock::free_mining` (`plan`, `run_one`, `finish`); here the argv is
//! parsed as this binary parses it, and the report printed as it prints it:
//!
//! ```text
//!  free_mining_plan(argv)                 the argv parsed as `freeblock repro free-mining …`: its plan
//!  free_mining::run_one(config, run)      one run, in any worker process
//!  free_mining_finish(argv, outcomes, …)  the report: the plots, CSVs and text of the Rust command
//! ```

use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;

use clap::{Args, Parser};
use freeblock_repro::p000_freeblock::free_mining::{self, RunResult};

use super::args::{ReproArgs, ReproCommandLine, ReproOnly, NEEDS_PYTHON};

use crate::output::CmdResult;


/// `freeblock sweep FILE` (implemented in Python; here for the help and the message).
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The sweep file (TOML): the base `experiment` (an inline table, or the path of an
    /// experiment file), a `[grid]` table of dotted experiment keys, each with its list of values
    /// (e.g. "sim.mpl" = [1, 5, 10]), and optionally `seeds`, `workers`, `scheduler_address`,
    /// `out`. See docs/python.md.
    pub file: PathBuf,
    /// Where to write the table: `.csv` or `.parquet` (default: the file's `out`, else
    /// `out/sweep/<file name>.csv`, both beside the sweep file).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Local Dask worker processes (default: the file's `workers`, else one per core).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Run on the Dask scheduler at this address (e.g. tcp://10.0.0.5:8786) instead of local
    /// workers.
    #[arg(long, value_name = "ADDRESS")]
    pub scheduler_address: Option<String>,
    /// No progress bar and no table on standard output.
    #[arg(long)]
    pub quiet: bool,
}

/// `freeblock sweep` reached without Python.
pub fn sweep(_a: &SweepArgs) -> CmdResult {
    Err(NEEDS_PYTHON.replace("{what}", "sweep").into())
}

/// `freeblock repro free-mining …` as its runs: what the Python side needs to run them.
#[derive(Debug)]
pub struct FreeMiningPlan {
    /// The reproduction's simulations, and the order to start them in.
    pub plan: free_mining::Plan,
    /// `--threads`: local worker processes.
    pub workers: Option<usize>,
    /// `--scheduler-address`.
    pub scheduler_address: Option<String>,
    /// No progress bar (`--quiet` or `--json`).
    pub quiet: bool,
}

/// The free-mining arguments of `argv` (program name first), when it is a valid
/// `freeblock repro free-mining …` command line; `None` for anything else (including `--help` and
/// errors, which [`crate::run`] then prints as usual).
fn free_mining_args<I, T>(argv: I) -> Option<ReproArgs>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match ReproCommandLine::try_parse_from(argv) {
        Ok(ReproCommandLine { command: ReproOnly::Repro(a) }) if a.what == "free-mining" => Some(a),
        _ => None,
    }
}

/// The plan of `argv` when it is `freeblock repro free-mining …`, else `None`.
pub fn free_mining_plan<I, T>(argv: I) -> Option<FreeMiningPlan>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let a = free_mining_args(argv)?;
    Some(FreeMiningPlan {
        plan: free_mining::plan(&a.options()),
        workers: a.threads,
        scheduler_address: a.scheduler_address,
        quiet: a.quiet || a.json,
    })
}

/// Assembles the report of `argv`'s reproduction from `outcomes` (one per simulation of the plan,
/// in its order), writes and prints it exactly as `freeblock repro free-mining` does, and returns the
/// exit code. `ran_on` and `wall_s` go into the closing line on stderr.
pub fn free_mining_finish<I, T>(argv: I, outcomes: Vec<RunResult>, ran_on: &str, wall_s: f64) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let result: CmdResult = match free_mining_args(argv) {
        None => Err("free_mining_finish: the arguments are not a `freeblock repro free-mining` command line".into()),
        Some(a) => super::repro::print_outcome(free_mining::finish(&a.options(), outcomes, ran_on, wall_s)).and_then(|()| super::repro::quick_note(&a)),
    };
    let flushed = result.and_then(|()| std::io::stdout().flush().map_err(Into::into));
    match flushed {
        Ok(()) => 0,
        // As `crate::run`: a closed pipe ends quietly, any other error is printed.
        Err(e) if crate::output::is_broken_pipe(e.as_ref()) => 0,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_free_mining_is_planned() {
        let plan = free_mining_plan(["freeblock", "repro", "free-mining", "--quick", "--threads", "3", "--scheduler-address", "tcp://h:8786"]).expect("a plan");
        assert_eq!(plan.plan.runs, free_mining::simulations(&free_mining::FreeMiningConfig::quick()));
        assert_eq!((plan.workers, plan.scheduler_address.as_deref(), plan.quiet), (Some(3), Some("tcp://h:8786"), false));
        let mut order = plan.plan.start_order.clone();
        order.sort_unstable();
        assert_eq!(order, (0..plan.plan.runs.len()).collect::<Vec<_>>());
        assert!(free_mining_plan(["freeblock", "repro", "head-usage"]).is_none());
        assert!(free_mining_plan(["freeblock", "repro", "free-mining", "--no-such-flag"]).is_none());
        assert!(free_mining_plan(["freeblock", "disks"]).is_none());
    }

    #[test]
    fn finish_refuses_outcomes_that_do_not_match_the_plan() {
        let out = std::env::temp_dir().join(format!("freeblock-sweep-finish-{}", std::process::id()));
        let argv = ["freeblock", "repro", "free-mining", "--quick", "--quiet", "--out", out.to_str().unwrap()];
        assert_eq!(free_mining_finish(argv, Vec::new(), "no workers", 0.0), 1);
        let _ = std::fs::remove_dir_all(out);
    }

    #[test]
    fn the_binary_points_sweep_to_python() {
        let a = SweepArgs { file: "s.toml".into(), out: None, workers: None, scheduler_address: None, quiet: false };
        let e = sweep(&a).unwrap_err().to_string();
        assert!(e.contains("freeblock sweep") && e.contains("Python"), "{e}");
    }
}
