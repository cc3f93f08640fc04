//! `freeblock repro NAME`: run a reproduction and print what it returns.

use super::args::ReproArgs;
use crate::output::CmdResult;

/// Runs the reproduction `a.what` from the library and prints what it returns.
fn run_and_print(a: &ReproArgs) -> CmdResult {
    print_outcome(freeblock_repro::find(&a.what)?.run(&a.options()))
}

/// Prints a reproduction's output; when part of it failed
/// ([`freeblock_repro::reproduction::Incomplete`]), its output all the same, then the error.
pub fn print_outcome(result: freeblock_repro::Result<freeblock_repro::Outcome>) -> CmdResult {
    match result {
        Ok(outcome) => {
            out!("{}", outcome.output);
            Ok(())
        }
        Err(e) => match e.downcast::<freeblock_repro::reproduction::Incomplete>() {
            Ok(incomplete) => {
                out!("{}", incomplete.outcome.output);
                Err(incomplete.message.into())
            }
            Err(e) => Err(e),
        },
    }
}

pub fn repro(a: &ReproArgs) -> CmdResult {
    // Said, not silently ignored: these run in full in seconds, so they have no smaller version.
    if a.quick && matches!(a.what.as_str(), "head-usage" | "range-writes" | "firmware-queue" | "write-cache") {
        eprintln!("note: {} has no --quick version (the full reproduction takes seconds); running it in full", a.what);
    }
    let result = match a.what.as_str() {
        "head-usage" => run_and_print(a),
        "range-writes" => run_and_print(a),
        // Dask lives in Python: this binary runs free-mining on its own threads.
        "free-mining" if a.scheduler_address.is_some() => Err(super::args::NEEDS_PYTHON.replace("{what}", "repro free-mining --scheduler-address").into()),
        "free-mining" => run_and_print(a),
        "rearrangement" => run_and_print(a),
        "fs2" => run_and_print(a),
        "lfs-cleaning" => run_and_print(a),
        "external" => run_and_print(a),
        "scrub" => run_and_print(a),
        "firmware-queue" => run_and_print(a),
        "write-cache" => run_and_print(a),
        other => Err(format!("unknown reproduction `{other}` (known: head-usage, range-writes, free-mining, rearrangement, fs2, lfs-cleaning, external, scrub, firmware-queue, write-cache)").into()),
    };
    result.and_then(|()| quick_note(a))
}

/// After a `--quick` reproduction's text: its verdicts are indicative only. Printed by every path
/// that finishes a reproduction (this binary's threads, or the Python package's Dask tasks).
pub fn quick_note(a: &ReproArgs) -> CmdResult {
    if a.quick && !a.json && matches!(a.what.as_str(), "free-mining" | "rearrangement" | "fs2" | "lfs-cleaning" | "external" | "scrub") {
        outln!("--quick: a smaller run than the paper's, so every verdict above is indicative only; run without --quick to compare with the paper");
    }
    Ok(())
}
