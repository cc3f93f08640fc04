//! What several commands share: the reproductions' arguments, the data folder, the progress bar of
//! a simulation run. A leaf: it uses no other command module.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

/// A bar over `total` requests, or, when the run's length in requests is not known (a workload
/// without a count, or one stopped by `max_time_s`), a spinner counting the requests served.
pub fn progress_bar(total: u64, enabled: bool) -> Option<ProgressBar> {
    if !enabled {
        return None;
    }
    if total == 0 {
        let pb = ProgressBar::new_spinner();
        pb.set_style(ProgressStyle::with_template("{spinner} {pos} requests served ({elapsed})").ok()?);
        return Some(pb);
    }
    let pb = ProgressBar::new(total);
    pb.set_style(ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} requests ({eta})").ok()?.progress_chars("=> "));
    Some(pb)
}

/// The shared data folder: `arg`, else the one [`freeblock_repro::shared_dir`] finds.
pub(crate) fn shared_dir(arg: Option<&PathBuf>) -> PathBuf {
    arg.cloned().unwrap_or_else(freeblock_repro::shared_dir)
}

/// What this binary says when asked for something that runs on Dask (`freeblock sweep`,
/// `repro free-mining --scheduler-address`); `{what}` is the command.
pub const NEEDS_PYTHON: &str = "`freeblock {what}` runs on Dask and needs the Python package: \
     install it (`make build`, or `pip install .`) and use its `freeblock` command (or `python3 -m freeblock`)";

#[derive(Debug, Args)]
pub struct ReproArgs {
    /// Which reproduction: head-usage (paper 000 §3), range-writes (paper 004), free-mining
    /// (paper 000 §6), rearrangement (paper 002), fs2 (paper 003), lfs-cleaning (paper 000 §5),
    /// external (paper 001; --quick: 5 s per run, three conservatism values), scrub (issue 35:
    /// five scrub schemes on the 14 TB model beside OpenZFS PR #11166; --quick: 12 s per run),
    /// firmware-queue and write-cache (issue 34: `freeblock firmware-queue --disk ultrastar_hc530`
    /// and `freeblock write-cache --disk st2000dm006` with their defaults; seconds each, no
    /// --quick version).
    pub what: String,
    /// head-usage, range-writes: requests per run (paper: 10000).
    #[arg(long, default_value_t = 10_000)]
    pub requests: u64,
    /// free-mining: a small version (two MPLs, two schedulers, runs capped at 12000 requests).
    /// lfs-cleaning: a 100 MB log, four utilisations, 3000 transactions per phase.
    /// rearrangement: 2 days of 4000 requests, fewer Fig. 4 points, no CloudPhysics part.
    /// head-usage, range-writes and fs2 take seconds and have no smaller version (a note says so).
    /// A quick run's verdicts are indicative only: the paper's figures are for the full runs.
    #[arg(long)]
    pub quick: bool,
    /// free-mining: most foreground requests per simulated run (default 1500000; 12000 with
    /// --quick). A run that reaches it before its scan pass ends is reported as partial.
    #[arg(long)]
    pub max_requests: Option<u64>,
    /// free-mining: also run ours as a repeated scan with overlapping passes (its steady state;
    /// beyond the paper). Four long runs that take more CPU than the rest of the reproduction.
    #[arg(long)]
    pub repeated_scans: bool,
    /// free-mining, rearrangement: simulations run at once (default 2). With the Python
    /// package's `freeblock` command, free-mining runs them as Dask tasks: the number of local
    /// worker processes (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// free-mining, with the Python package's `freeblock` command: run on the Dask scheduler at
    /// this address (e.g. tcp://10.0.0.5:8786) instead of local workers.
    #[arg(long, value_name = "ADDRESS")]
    pub scheduler_address: Option<String>,
    /// rearrangement: days of the workload, alternately off and on (default: the `days`
    /// workload's, 4; 2 with --quick).
    #[arg(long)]
    pub days: Option<u32>,
    /// rearrangement: requests per day (default: the `days` workload's, 20000; 4000 with --quick).
    #[arg(long)]
    pub requests_per_day: Option<u64>,
    /// rearrangement: the CloudPhysics VSCSI trace (default: ../shared/traces/cloudPhysicsIO.vscsi
    /// if it exists, else that part is skipped).
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// external: simulated seconds per run (default 300; 5 with --quick). scrub: default 60; 12
    /// with --quick. firmware-queue: each sequential-reader run (default 30).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// lfs-cleaning: how §5 is read. `today`: the file system is the whole log and ORIGINAL
    /// reads segments whole; `paper`: the file system is 0.8 of the log (its cleaning reserve the
    /// rest) and ORIGINAL reads live blocks one I/O each; `both` (default) runs and prints each.
    #[arg(long, value_parser = ["today", "paper", "both"], default_value = "both")]
    pub reading: String,
    /// lfs-cleaning: the host bus. `parv` (default): DiskSim's Atlas 10K validation host, as §5
    /// configured DiskSim; `ultra2`: the Ultra2 SCSI bus of paper 001's real Atlas 10K host.
    #[arg(long, value_parser = ["parv", "ultra2"], default_value = "parv")]
    pub bus: String,
    /// lfs-cleaning: the file system's share of the log under the paper's reading, its cleaning
    /// reserve the rest (default 0.85: §5 gives none, so it is fitted to ORIGINAL's two ratios).
    #[arg(long, value_name = "SHARE")]
    pub fs_share: Option<f64>,
    /// scrub: share of the disk (from its start) the QD 1 random reads cover, (0, 1] (default 1).
    #[arg(long, value_name = "SHARE")]
    pub fg_span: Option<f64>,
    /// scrub: the idle-class scrubber's (and freeblock's) foreground idle time before it reads, ms
    /// (default 100).
    #[arg(long)]
    pub idle_after_ms: Option<f64>,
    /// scrub: the sampled scrub's share of the blocks read a day, (0, 1] (default 0.05).
    #[arg(long, value_name = "SHARE")]
    pub sample_share: Option<f64>,
    /// scrub: the ZFS-like scrubber's pause after each read, after #11166, ms (default 1).
    #[arg(long)]
    pub zfs_pause_ms: Option<f64>,
    /// scrub: the drive's age limit, ms; `none` for no limit (default 250).
    #[arg(long)]
    pub age_limit_ms: Option<String>,
    /// Folder for plots and CSV.
    #[arg(long, default_value = "out/repro")]
    pub out: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

impl ReproArgs {
    /// The reproduction's settings: these arguments, and the shared data folder found as
    /// `validate` finds it.
    pub fn options(&self) -> freeblock_repro::Options {
        freeblock_repro::Options {
            requests: self.requests,
            quick: self.quick,
            max_requests: self.max_requests,
            repeated_scans: self.repeated_scans,
            threads: self.threads,
            days: self.days,
            requests_per_day: self.requests_per_day,
            trace: self.trace.clone(),
            seconds: self.seconds,
            reading: self.reading.clone(),
            bus: self.bus.clone(),
            fs_share: self.fs_share,
            fg_span: self.fg_span,
            idle_after_ms: self.idle_after_ms,
            sample_share: self.sample_share,
            zfs_pause_ms: self.zfs_pause_ms,
            age_limit_ms: self.age_limit_ms.clone(),
            out: self.out.clone(),
            json: self.json,
            quiet: self.quiet,
            shared: shared_dir(None),
        }
    }
}

/// A `freeblock repro …` command line and nothing else: how the Python package's `freeblock`
/// recognises a reproduction it runs on Dask without this module knowing the whole command set.
#[derive(Debug, Parser)]
#[command(name = "freeblock")]
pub struct ReproCommandLine {
    #[command(subcommand)]
    pub command: ReproOnly,
}

/// The one subcommand [`ReproCommandLine`] knows.
#[derive(Debug, Subcommand)]
pub enum ReproOnly {
    /// `freeblock repro NAME …`.
    Repro(ReproArgs),
}
