//! `freeblock demo`: the quick-start experiment.

use std::path::PathBuf;

use clap::Args;
use freeblock_repro::p000_freeblock::demo::{self, DemoOptions};

use crate::output::CmdResult;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the plot and CSV.
    #[arg(long, default_value = "out/demo")]
    pub out: PathBuf,
    /// Requests per scheduler.
    #[arg(long, default_value_t = 10_000)]
    pub requests: u64,
    /// Free-scan part: most foreground OLTP requests (the run ends when the scan does, after
    /// about 200000; a smaller cap ends it early and extrapolates scans per day).
    #[arg(long, default_value_t = 400_000)]
    pub scan_requests: u64,
}

/// Prints each part of the demo as it ends (the second runs a while).
pub fn demo(a: &DemoArgs) -> CmdResult {
    let options = DemoOptions { out: a.out.clone(), requests: a.requests, scan_requests: a.scan_requests };
    out!("{}", demo::head_usage_part(&options)?.output);
    out!("{}", demo::free_scan_part(&options)?.output);
    Ok(())
}
