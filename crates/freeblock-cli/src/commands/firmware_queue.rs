//! `freeblock firmware-queue --disk NAME`: what a drive's own command queue does (issue 34) —
//! random 4 KB reads at queue depths 1 … 32, and a sequential reader starving random reads at
//! deep queue, with the age limit that bounds it — beside the published figures. The runs and the
//! report are [`freeblock_repro::drives_of_today::firmware_queue`]'s.

use clap::Args;
use freeblock_repro::drives_of_today::firmware_queue::{report, FirmwareQueueSettings};

use crate::output::CmdResult;

#[derive(Debug, Args)]
pub struct FirmwareQueueArgs {
    /// Built-in disk name or spec file (run as its media model: cache off).
    #[arg(long)]
    pub disk: String,
    /// Random-read curve: requests measured per queue depth.
    #[arg(long, default_value_t = 20_000)]
    pub requests: u64,
    /// Sequential-reader runs: simulated seconds each.
    #[arg(long, default_value_t = 30.0)]
    pub seconds: f64,
    /// Sequential-reader runs: the age limits to try at depth 32, ms (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [2000.0, 100.0])]
    pub age_limits_ms: Vec<f64>,
    /// Which part: all, depths (the random-read curve) or starvation.
    #[arg(long, default_value = "all")]
    pub only: String,
    /// Seed of the random reads.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn firmware_queue(a: &FirmwareQueueArgs) -> CmdResult {
    let settings = FirmwareQueueSettings { disk: a.disk.clone(), requests: a.requests, seconds: a.seconds, age_limits_ms: a.age_limits_ms.clone(), only: a.only.clone(), seed: a.seed, json: a.json };
    out!("{}", report(&settings)?.output);
    Ok(())
}
