//! `freeblock write-cache --disk NAME`: what a FLUSH CACHE costs against the number of dirty
//! random 4 KB writes on a drive with a write-back cache (issue 34), beside ublk-disksim's
//! 28 + 9.4·N ms on the 2 TB desktop drive, with the same drive choosing among all its dirty
//! blocks beside it (what the spec's `destage_window` changes). The runs and the report are
//! [`freeblock_repro::drives_of_today::write_cache`]'s.

use clap::Args;
use freeblock_repro::drives_of_today::write_cache::{report, WriteCacheSettings, FLUSH_TRIALS, FLUSH_WRITE_COUNTS};

use crate::output::CmdResult;

#[derive(Debug, Args)]
pub struct WriteCacheArgs {
    /// Built-in disk name or spec file; it needs a `[write_cache]` table (run write-back, on its
    /// media model).
    #[arg(long)]
    pub disk: String,
    /// Writes before each flush (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = FLUSH_WRITE_COUNTS)]
    pub writes: Vec<u64>,
    /// Trials (different random writes) averaged per count.
    #[arg(long, default_value_t = FLUSH_TRIALS)]
    pub trials: u32,
    /// Seed of the random writes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn write_cache(a: &WriteCacheArgs) -> CmdResult {
    let settings = WriteCacheSettings { disk: a.disk.clone(), writes: a.writes.clone(), trials: a.trials, seed: a.seed, json: a.json };
    out!("{}", report(&settings)?.output);
    Ok(())
}
