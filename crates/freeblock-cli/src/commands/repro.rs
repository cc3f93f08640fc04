//! `freeblock repro NAME`: run a reproduction and print what it returns.

use super::args::ReproArgs;
use crate::output::CmdResult;

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

/// `freeblock repro NAME`: the reproduction from [`freeblock_repro::REPRODUCTIONS`], run on this
/// binary's threads, its output printed.
pub fn repro(a: &ReproArgs) -> CmdResult {
    let reproduction = freeblock_repro::find(&a.what)?;
    // Said, not silently ignored: these run in full in seconds, so they have no smaller version.
    if a.quick && !reproduction.has_quick {
        eprintln!("note: {} has no --quick version (the full reproduction takes seconds); running it in full", a.what);
    }
    // Dask lives in Python: this binary runs free-mining on its own threads.
    if a.what == "free-mining" && a.scheduler_address.is_some() {
        return Err(super::args::NEEDS_PYTHON.replace("{what}", "repro free-mining --scheduler-address").into());
    }
    print_outcome(reproduction.run(&a.options()))?;
    quick_note(a)
}

/// After a `--quick` reproduction's text: its verdicts are indicative only. Printed by every path
/// that finishes a reproduction (this binary's threads, or the Python package's Dask tasks).
pub fn quick_note(a: &ReproArgs) -> CmdResult {
    if a.quick && !a.json && freeblock_repro::find(&a.what).is_ok_and(|r| r.has_quick) {
        outln!("--quick: a smaller run than the paper's, so every verdict above is indicative only; run without --quick to compare with the paper");
    }
    Ok(())
}
