//! What every reproduction takes and returns, and the list of them.
//!
//! A reproduction runs the engine the way a paper (or an issue about drives of today) ran its
//! system, then sets our numbers beside the published ones. Each returns an [`Outcome`]: the text
//! (or JSON document) the command line prints, the files it wrote under [`Options::out`], and its
//! [`Statement`]s — one per claim checked, "ours / paper / agrees" — which the Python package turns
//! into a DataFrame.
//!
//! ```text
//!  Options ──► REPRODUCTIONS[name].run ──► Outcome { output, statements, files }
//!                                             │          │            └ CSV, SVG under options.out
//!                                             │          └ claim · paper · ours · agrees
//!                                             └ printed by `freeblock repro NAME`
//! ```

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Any error of a reproduction, with the message the command line prints.
pub type Error = Box<dyn std::error::Error>;
/// A reproduction's result.
pub type Result<T> = std::result::Result<T, Error>;

/// The settings of a reproduction run: `freeblock repro`'s options. Each reproduction reads the
/// ones it documents and ignores the rest.
#[derive(Debug, Clone)]
pub struct Options {
    /// head-usage, range-writes: requests per run (paper: 10000).
    pub requests: u64,
    /// A smaller run than the paper's (where the reproduction has one): verdicts indicative only.
    pub quick: bool,
    /// free-mining: most foreground requests per simulated run.
    pub max_requests: Option<u64>,
    /// free-mining: also run ours as a repeated scan with overlapping passes.
    pub repeated_scans: bool,
    /// Simulations run at once.
    pub threads: Option<usize>,
    /// rearrangement: days of the workload.
    pub days: Option<u32>,
    /// rearrangement: requests per day.
    pub requests_per_day: Option<u64>,
    /// rearrangement, fs2: the CloudPhysics VSCSI trace (default: the one in [`Options::shared`]).
    pub trace: Option<PathBuf>,
    /// external, scrub: simulated seconds per run; firmware-queue: per sequential-reader run.
    pub seconds: Option<f64>,
    /// lfs-cleaning: how §5 is read: `today`, `paper` or `both`.
    pub reading: String,
    /// lfs-cleaning: the host bus, `parv` or `ultra2`.
    pub bus: String,
    /// lfs-cleaning: the file system's share of the log under the paper's reading.
    pub fs_share: Option<f64>,
    /// scrub: share of the disk the QD 1 random reads cover.
    pub fg_span: Option<f64>,
    /// scrub: foreground idle time before the idle-class scrubber (and freeblock) reads, ms.
    pub idle_after_ms: Option<f64>,
    /// scrub: the sampled scrub's share of the blocks read a day.
    pub sample_share: Option<f64>,
    /// scrub: the ZFS-like scrubber's pause after each read, after #11166, ms.
    pub zfs_pause_ms: Option<f64>,
    /// scrub: the drive's age limit, ms, or `none`.
    pub age_limit_ms: Option<String>,
    /// Folder for plots and CSV.
    pub out: PathBuf,
    /// The output is one JSON document instead of text.
    pub json: bool,
    /// No progress bar.
    pub quiet: bool,
    /// The shared data folder (validation traces, the CloudPhysics trace).
    pub shared: PathBuf,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            requests: 10_000,
            quick: false,
            max_requests: None,
            repeated_scans: false,
            threads: None,
            days: None,
            requests_per_day: None,
            trace: None,
            seconds: None,
            reading: "both".into(),
            bus: "parv".into(),
            fs_share: None,
            fg_span: None,
            idle_after_ms: None,
            sample_share: None,
            zfs_pause_ms: None,
            age_limit_ms: None,
            out: PathBuf::from("out/repro"),
            json: false,
            quiet: false,
            shared: PathBuf::from("../shared"),
        }
    }
}

/// The shared data folder (validation traces, DiskSim models, the CloudPhysics trace): `../shared`
/// (or further up) from the current folder, else the one beside the repository this was built in.
pub fn shared_dir() -> PathBuf {
    for candidate in ["../shared", "../../shared", "../../../shared"] {
        if Path::new(candidate).join("disksim-validation").is_dir() {
            return PathBuf::from(candidate);
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// One claim checked against the paper: what the paper says, what we measured, whether they agree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Statement {
    /// Where the claim is: "Fig. 5", "§5.2", "Table 3", "PR #11166".
    pub source: String,
    /// What is compared, in words.
    pub claim: String,
    /// The paper's figure as the paper gives it (a value, a range, a bound).
    pub paper: String,
    /// Ours, as the table prints it.
    pub ours: String,
    /// Ours as a number, where there is one.
    pub value: Option<f64>,
    /// Whether ours agrees with the paper; `None` where the row is printed for information only.
    pub agrees: Option<bool>,
}

impl Statement {
    /// A claim checked: `agrees` is `None` for a row printed for information only.
    #[must_use]
    pub fn new(source: impl Into<String>, claim: impl Into<String>, paper: impl Into<String>, ours: impl Into<String>, value: Option<f64>, agrees: Option<bool>) -> Self {
        Self { source: source.into(), claim: claim.into(), paper: paper.into(), ours: ours.into(), value, agrees }
    }
}

/// What a reproduction returns.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// What `freeblock repro NAME` prints: tables and verdicts, or the JSON document when
    /// [`Options::json`] is set.
    pub output: String,
    /// Every claim checked, in the order the output gives them.
    pub statements: Vec<Statement>,
    /// The files written under [`Options::out`].
    pub files: Vec<PathBuf>,
}

/// The error of a reproduction that ran but part of which failed (runs that ended in an error,
/// which its output lists): the outcome all the same, and what failed. The command line prints
/// the outcome's output, then the error, and exits with an error.
#[derive(Debug)]
pub struct Incomplete {
    /// What the reproduction produced.
    pub outcome: Outcome,
    /// What failed.
    pub message: String,
}

impl Incomplete {
    /// `outcome`, incomplete for the reason `message`, as a reproduction's [`Error`].
    #[must_use]
    pub fn error(outcome: Outcome, message: String) -> Error {
        Box::new(Self { outcome, message })
    }
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Incomplete {}

/// A reproduction: its name on the command line, what it reproduces, and how to run it.
pub struct Reproduction {
    /// The name `freeblock repro NAME` takes.
    pub name: &'static str,
    /// The source: "paper 000 §3", "issue 35".
    pub source: &'static str,
    /// What it reproduces, in a line.
    pub title: &'static str,
    /// Whether `quick` gives a smaller run (the others take seconds in full).
    pub has_quick: bool,
    run: fn(&Options) -> Result<Outcome>,
}

impl Reproduction {
    /// Runs it.
    pub fn run(&self, options: &Options) -> Result<Outcome> {
        (self.run)(options)
    }
}

/// Every reproduction, in the order of the papers.
pub const REPRODUCTIONS: &[Reproduction] = &[
    Reproduction { name: "head-usage", source: "paper 000 §3", title: "where a disk head's time goes: seek, rotational latency, transfer", has_quick: false, run: crate::p000_freeblock::head_usage },
    Reproduction { name: "free-mining", source: "paper 000 §6", title: "data mining in free bandwidth beside OLTP", has_quick: true, run: crate::p000_freeblock::free_mining },
    Reproduction { name: "lfs-cleaning", source: "paper 000 §5", title: "LFS segment cleaning in free bandwidth", has_quick: true, run: crate::p000_lfs_cleaning::run },
    Reproduction { name: "external", source: "paper 001", title: "freeblock scheduling from outside the disk", has_quick: true, run: crate::p001_external::run },
    Reproduction { name: "rearrangement", source: "paper 002", title: "adaptive block rearrangement", has_quick: true, run: crate::p002_rearrangement::run },
    Reproduction { name: "fs2", source: "paper 003", title: "FS2: replication in free disk space", has_quick: true, run: crate::p003_fs2::run },
    Reproduction { name: "range-writes", source: "paper 004", title: "range writes and flex reads", has_quick: false, run: crate::p004_range_writes::run },
    Reproduction { name: "scrub", source: "issue 35", title: "a whole-disk scrub on a 14 TB drive beside the throttled scrubs of today", has_quick: true, run: crate::scrub::run },
    Reproduction { name: "firmware-queue", source: "issue 34", title: "a drive's firmware queue: random reads at QD 1 to 32, a sequential reader starving random reads, the age limit", has_quick: false, run: crate::drives_of_today::run_firmware_queue },
    Reproduction { name: "write-cache", source: "issue 34", title: "what a FLUSH CACHE costs against the dirty writes on a write-back drive", has_quick: false, run: crate::drives_of_today::run_write_cache },
];

/// The reproduction called `name`, or an error listing the known names.
pub fn find(name: &str) -> Result<&'static Reproduction> {
    REPRODUCTIONS.iter().find(|r| r.name == name).ok_or_else(|| {
        let known: Vec<&str> = REPRODUCTIONS.iter().map(|r| r.name).collect();
        format!("unknown reproduction `{name}` (known: {})", known.join(", ")).into()
    })
}
