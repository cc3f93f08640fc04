//! Experiment files: one TOML document naming a disk, a workload and how to drive it.
//!
//! ```toml
//! seed = 42
//!
//! [disk]
//! name = "atlas10k"          # a built-in disk, or:
//! # spec = "my-disk.toml"    # a TOML disk spec, or:
//! # disksim = "atlas10k.diskspecs"
//! zero_latency = false
//!
//! [workload]
//! type = "random"
//! count = 10000
//!
//! [sim]
//! scheduler = { type = "sptf" }
//! mpl = 8
//! ```
//!
//! Relative paths are resolved against the experiment file's folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use freeblock_disk::{library, Disk, DiskSpec};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::report::RunReport;
use crate::sim::{SimConfig, Simulation};
use crate::workload::WorkloadSpec;

/// Which disk to simulate, and model switches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskChoice {
    /// A built-in disk (see `freeblock disks`).
    #[serde(default)]
    pub name: Option<String>,
    /// A TOML disk spec file.
    #[serde(default)]
    pub spec: Option<PathBuf>,
    /// A DiskSim `.diskspecs` file.
    #[serde(default)]
    pub disksim: Option<PathBuf>,
    /// Zero-latency access (read a track from wherever the head lands). Default off.
    #[serde(default)]
    pub zero_latency: bool,
    /// Force the on-disk cache on or off; default: as the spec says.
    #[serde(default)]
    pub cache: Option<bool>,
}

impl DiskChoice {
    /// A built-in disk by name.
    #[must_use]
    pub fn named(name: &str) -> Self {
        Self { name: Some(name.to_string()), ..Self::default() }
    }

    /// Loads the spec and builds the model. `base` resolves relative paths.
    ///
    /// # Errors
    /// [`Error::Config`] when not exactly one source is given; [`Error::Spec`] for a bad spec.
    pub fn build(&self, base: &Path) -> Result<Arc<Disk>> {
        let spec: DiskSpec = match (&self.name, &self.spec, &self.disksim) {
            (Some(n), None, None) => library::get(n)?,
            (None, Some(p), None) => DiskSpec::from_toml_file(&base.join(p))?,
            (None, None, Some(p)) => freeblock_disk::disksim::import(&base.join(p))?,
            (None, None, None) => library::get("atlas10k")?,
            _ => {
                return Err(Error::Config { origin: "disk".into(), message: "give only one of `name`, `spec`, `disksim`".into() })
            }
        };
        let spec = match self.cache {
            Some(false) => spec.without_cache(),
            Some(true) => DiskSpec { cache: freeblock_disk::CacheSpec { enabled: true, ..spec.cache.clone() }, ..spec },
            None => spec,
        };
        Ok(Arc::new(Disk::new(spec)?.with_zero_latency(self.zero_latency)))
    }
}

fn default_seed() -> u64 {
    42
}

/// A layout policy, as the `[layout]` table of an experiment file names it.
///
/// ```toml
/// [layout]
/// type = "rearrange"          # adaptive block rearrangement (paper 002)
/// moves = "free"              # foreground | idle | free | instant
/// period_s = 86400
/// area = { cylinders = 48, block_sectors = 16, table_slots = 2 }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LayoutSpec {
    /// Adaptive block rearrangement ([`crate::layout::rearrange`]).
    Rearrange(crate::layout::rearrange::policy::RearrangeConfig),
}

impl LayoutSpec {
    /// Builds the policy for `disk`.
    ///
    /// # Errors
    /// The policy's setup errors, naming the setting.
    pub fn build(&self, disk: &Disk) -> Result<Box<dyn crate::layout::LayoutPolicy>> {
        Ok(match self {
            LayoutSpec::Rearrange(c) => Box::new(crate::layout::rearrange::policy::Rearrange::new(disk, *c)?),
        })
    }
}

/// One experiment: disk, workload, simulation settings and seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Seed for every random choice in the run. Default 42.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The disk.
    #[serde(default)]
    pub disk: DiskChoice,
    /// The foreground workload.
    pub workload: WorkloadSpec,
    /// Scheduler, MPL, queue depth, records.
    #[serde(default)]
    pub sim: SimConfig,
    /// Freeblock scheduling and its background applications; off when absent.
    #[serde(default)]
    pub freeblock: Option<crate::freeblock::FreeblockConfig>,
    /// A layout policy between the workload and the disk; none when absent.
    #[serde(default)]
    pub layout: Option<LayoutSpec>,
    /// Folder relative paths are resolved against (the file's folder).
    #[serde(skip)]
    pub base_dir: PathBuf,
}

impl Experiment {
    /// Parses an experiment from TOML. `origin` names it in errors; `base_dir` resolves paths.
    ///
    /// # Errors
    /// [`Error::Config`] with the parser's line and column.
    pub fn from_toml_str(text: &str, origin: &str, base_dir: &Path) -> Result<Self> {
        let mut e: Experiment = toml::from_str(text).map_err(|err| Error::Config {
            origin: origin.to_string(),
            message: err.to_string().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" "),
        })?;
        e.base_dir = base_dir.to_path_buf();
        e.workload.resolve_paths(base_dir);
        Ok(e)
    }

    /// Reads an experiment file.
    ///
    /// # Errors
    /// [`Error::Io`] or as [`Experiment::from_toml_str`].
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io { path: path.display().to_string(), message: e.to_string() })?;
        Self::from_toml_str(&text, &path.display().to_string(), path.parent().unwrap_or(Path::new(".")))
    }

    /// Builds everything and runs it.
    ///
    /// # Errors
    /// Any setup or run error.
    pub fn run(&self, progress: Option<&mut dyn FnMut(u64)>) -> Result<RunReport> {
        self.build(false)?.run(progress)
    }

    /// Builds the simulation: disk, workload, settings (the workload's think time unless `[sim]`
    /// sets one) and freeblock scheduling when the experiment has a `[freeblock]` table, or with
    /// its defaults when `freeblock` is true (to add applications from code through
    /// [`Simulation::freeblock_mut`]).
    ///
    /// # Errors
    /// Any setup error.
    pub fn build(&self, freeblock: bool) -> Result<Simulation<'static>> {
        let disk = self.disk.build(&self.base_dir)?;
        let layout = self.layout.as_ref().map(|l| l.build(&disk)).transpose()?;
        // The workload sees the logical disk: a policy may hide part of the physical one.
        let capacity = layout.as_ref().and_then(|l| l.logical_sectors()).unwrap_or_else(|| disk.capacity());
        let workload = self.workload.build(capacity, self.seed)?;
        let mut sim = self.sim.clone();
        if let Some(think) = self.workload.think_time_ns() {
            if sim.think_ms == 0.0 {
                sim.think_ms = think as f64 / 1e6;
            }
        }
        let mut simulation = Simulation::new(disk.clone(), workload, sim);
        if let Some(layout) = layout {
            simulation = simulation.with_layout(layout);
        }
        if self.freeblock.is_some() || freeblock {
            let config = self.freeblock.clone().unwrap_or_default();
            simulation = simulation.with_freeblock(crate::freeblock::Freeblock::new(disk, config)?);
        }
        Ok(simulation)
    }
}
