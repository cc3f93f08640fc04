//! `freeblock check STORE`: verify a block server's store offline (the server stopped), and
//! repair what can be repaired with `--repair` (`freeblock_server::check`).

use std::path::PathBuf;

use clap::Args;

use crate::output::CmdResult;

/// `freeblock check` arguments.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The store (the backing file `freeblock serve --store` was given).
    store: PathBuf,
    /// Fix what can be fixed: drop a replica that differs from its primary, rewrite the journal
    /// without a torn tail, record the checksums a crash left half-written.
    #[arg(long)]
    repair: bool,
}

/// Runs `freeblock check`: prints what was checked and found; fails on an unrepaired problem.
pub fn check(a: &CheckArgs) -> CmdResult {
    let report = freeblock_server::check::check_store(&a.store, a.repair);
    for line in report.to_string().lines() {
        outln!("{line}");
    }
    let n = report.unrepaired();
    if n > 0 {
        let hint = if a.repair { "" } else { " (--repair fixes what can be fixed)" };
        return Err(format!("{}: {n} problem(s){hint}", a.store.display()).into());
    }
    outln!("{}: clean", a.store.display());
    Ok(())
}
