//! `freeblock repro NAME`: run a reproduction and print what it returns.

use super::args::ReproArgs;
use crate::output::CmdResult;

/// Runs the reproduction `a.what` from the library and prints what it returns.
#[allow(dead_code)] // each reproduction moves to it in turn (issue 36)
fn run_and_print(a: &ReproArgs) -> CmdResult {
    let outcome = freeblock_repro::find(&a.what)?.run(&a.options())?;
    out!("{}", outcome.output);
    Ok(())
}

pub fn repro(a: &ReproArgs) -> CmdResult {
    // Said, not silently ignored: these run in full in seconds, so they have no smaller version.
    if a.quick && matches!(a.what.as_str(), "head-usage" | "range-writes") {
        eprintln!("note: {} has no --quick version (the full reproduction takes seconds); running it in full", a.what);
    }
    let result = match a.what.as_str() {
        "head-usage" => super::head_usage::head_usage(a),
        "range-writes" => run_and_print(a),
        "free-mining" => super::free_mining::free_mining(a),
        "rearrangement" => super::rearrangement::rearrangement(a),
        "fs2" => super::fs2::fs2(a),
        "lfs-cleaning" => run_and_print(a),
        "external" => run_and_print(a),
        "scrub" => super::scrub::repro_scrub(a),
        other => Err(format!("unknown reproduction `{other}` (known: head-usage, range-writes, free-mining, rearrangement, fs2, lfs-cleaning, external, scrub)").into()),
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
