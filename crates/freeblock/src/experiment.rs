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
//! # cache = false            # the DiskSim buffer off: the media model
//! # write_cache = "write_back"  # the spec's [write_cache] write-back (or "write_through")
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
use crate::freeblock::Placement;
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
    /// Set the spec's `[write_cache]` to `write_back` or `write_through` (as `hdparm -W` does on
    /// a real drive); default: as the spec says. Applied after `cache`; a write-back cache needs
    /// `cache = false` on a spec whose DiskSim buffer is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<freeblock_disk::WriteCacheMode>,
}

impl DiskChoice {
    /// A built-in disk by name.
    #[must_use]
    pub fn named(name: &str) -> Self {
        Self { name: Some(name.to_string()), ..Self::default() }
    }

    /// The disk a user names on the command line (`--disk`): a DiskSim `.diskspecs` / `.model`
    /// file, a `.toml` spec file, or a built-in name, as [`library::load`] tells them apart. A
    /// relative path is taken from the current folder (not the experiment file's): `cwd` makes it
    /// absolute. The model switches (`zero_latency`, `cache`) are kept from `self`.
    #[must_use]
    pub fn replaced_by(&self, name_or_path: &str, cwd: &Path) -> Self {
        let path = || Some(cwd.join(name_or_path));
        let (name, spec, disksim) = if name_or_path.ends_with(".diskspecs") || name_or_path.ends_with(".model") {
            (None, None, path())
        } else if name_or_path.ends_with(".toml") {
            (None, path(), None)
        } else {
            (Some(name_or_path.to_string()), None, None)
        };
        Self { name, spec, disksim, ..self.clone() }
    }

    /// Loads the spec and builds the model. `base` resolves relative paths.
    ///
    /// # Errors
    /// [`Error::Config`] when not exactly one source is given; [`Error::Spec`] for a bad spec.
    pub fn build(&self, base: &Path) -> Result<Arc<Disk>> {
        self.build_for(base, None)
    }

    /// As [`DiskChoice::build`], for replaying `trace`: DiskSim's system configuration beside
    /// it (a `.parv` of the same name) sets the bus, the one rule `validate`, `calibrate` and
    /// `run` share ([`apply_parv_beside`]).
    ///
    /// # Errors
    /// As [`DiskChoice::build`], and a malformed `.parv`.
    pub fn build_for(&self, base: &Path, trace: Option<&Path>) -> Result<Arc<Disk>> {
        let mut spec: DiskSpec = match (&self.name, &self.spec, &self.disksim) {
            (Some(n), None, None) => library::get(n)?,
            (None, Some(p), None) => DiskSpec::from_toml_file(&base.join(p))?,
            (None, None, Some(p)) => freeblock_disk::disksim::import(&base.join(p))?,
            (None, None, None) => library::get("atlas10k")?,
            _ => {
                return Err(Error::Config { origin: "disk".into(), message: "give only one of `name`, `spec`, `disksim`".into() })
            }
        };
        if let Some(trace) = trace {
            apply_parv_beside(&mut spec, trace)?;
        }
        let spec = match self.cache {
            Some(false) => spec.without_cache(),
            Some(true) => DiskSpec { cache: freeblock_disk::CacheSpec { enabled: true, ..spec.cache.clone() }, ..spec },
            None => spec,
        };
        let spec = match self.write_cache {
            Some(mode) => spec.with_write_cache_mode(mode).map_err(|e| Error::Config { origin: "disk.write_cache".into(), message: e.to_string() })?,
            None => spec,
        };
        Ok(Arc::new(Disk::new(spec)?.with_zero_latency(self.zero_latency)))
    }
}

/// The disk to replay `trace` on: `spec`, with the bus of DiskSim's system configuration when a
/// `.parv` of the same name sits next to the trace ([`freeblock_disk::disksim::apply_system_config`]).
///
/// # Errors
/// A malformed `.parv` or a spec that makes no disk.
pub fn disk_for_trace(mut spec: DiskSpec, trace: &Path) -> Result<Arc<Disk>> {
    apply_parv_beside(&mut spec, trace)?;
    Ok(Arc::new(Disk::new(spec)?))
}

/// Applies DiskSim's system configuration to `spec` when a `.parv` of the same name sits next to
/// `trace` (its bus: [`freeblock_disk::disksim::apply_system_config`]); returns whether one did. The rule for
/// every replay of a trace: `validate`, `calibrate` and `run`.
///
/// # Errors
/// A malformed `.parv`.
pub fn apply_parv_beside(spec: &mut DiskSpec, trace: &Path) -> Result<bool> {
    let parv = trace.with_extension("parv");
    if !parv.is_file() {
        return Ok(false);
    }
    freeblock_disk::disksim::apply_system_config(spec, &parv)?;
    Ok(true)
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
///
/// ```toml
/// [layout]
/// type = "range_writes"       # every write offered several places (papers 004, OSDI 2008)
/// candidates = 4              # default 4
/// spread = "track"            # track (default) | cylinder
/// block_sectors = 8           # default 8
/// spare = 0.25                # share of the disk kept free for candidates; default 0.25
/// ```
///
/// ```toml
/// [layout]
/// type = "fs2"                # replicas in free space (paper 003); every key optional
/// nearest = "positioning"     # lbn (the paper's) | positioning (ours)
/// service = "free"            # foreground (the paper's) | idle | free
/// fill = 0.7                  # share of every region holding user data at the start
/// watermarks = { high = 0.15, low = 0.10, critical = 0.05 }
/// ```
///
/// ```toml
/// [layout]
/// type = "lfs"                # a log-structured layout with segment cleaning (paper 000 §5)
/// partition_mb = 400          # every key optional; these are the defaults
/// logical_share = 0.8         # logical space as a share of the log's data blocks
/// cache_mb = 32
/// cleaner = "freeblock"       # original | freeblock | freeblock_idle
/// free = { below_free = 24, parallel = 8, idle_after_ms = 1.0 }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LayoutSpec {
    /// Adaptive block rearrangement ([`crate::layout::rearrange`]).
    Rearrange(crate::layout::rearrange::policy::RearrangeConfig),
    /// Range writes for the workload's writes ([`crate::layout::request_rangewrite`]).
    RangeWrites(crate::layout::request_rangewrite::RangeWritesConfig),
    /// FS2 replication in free space ([`crate::layout::fs2`]).
    Fs2(crate::layout::fs2::Fs2Config),
    /// A log-structured layout and its cleaners ([`crate::layout::lfs`]).
    Lfs(crate::layout::lfs::LfsSpec),
}

impl LayoutSpec {
    /// Builds the policy for `disk`.
    ///
    /// # Errors
    /// The policy's setup errors, naming the setting.
    pub fn build(&self, disk: &Disk) -> Result<Box<dyn crate::layout::LayoutPolicy>> {
        Ok(match self {
            LayoutSpec::Rearrange(c) => Box::new(crate::layout::rearrange::policy::Rearrange::new(disk, *c)?),
            LayoutSpec::RangeWrites(c) => Box::new(crate::layout::request_rangewrite::RequestRangeWrites::new(disk, *c)?),
            LayoutSpec::Fs2(c) => {
                // Refused here, before a run, rather than at its first free I/O.
                if c.service == crate::layout::Service::Free && disk.spec().cache.enabled {
                    return Err(Error::Config {
                        origin: "layout.service = \"free\"".into(),
                        message: "free service runs on the freeblock engine, which models the media directly: turn the disk's cache off ([disk] cache = false) or use service = \"foreground\" or \"idle\"".into(),
                    });
                }
                Box::new(crate::layout::fs2::Fs2::new(disk, c.clone())?)
            }
            LayoutSpec::Lfs(c) => Box::new(crate::layout::lfs::LfsPolicy::from_spec(c, disk).map_err(crate::layout::LayoutError::from)?),
        })
    }

    /// The policy's block, sectors: the unit its map places (requests are widened to it).
    #[must_use]
    pub fn block_sectors(&self) -> u64 {
        match self {
            LayoutSpec::Rearrange(c) => c.area.block_sectors,
            LayoutSpec::RangeWrites(c) => c.block_sectors,
            LayoutSpec::Fs2(c) => c.block_sectors,
            LayoutSpec::Lfs(_) => crate::layout::lfs::config::BLOCK_SECTORS,
        }
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
    /// Scheduling from outside the drive (paper 001): with `[freeblock] placement = "external"`,
    /// or alone (no `[freeblock]`) for host-side foreground scheduling through the black box.
    #[serde(default)]
    pub external: Option<crate::external::ExternalConfig>,
    /// Folder relative paths are resolved against (the file's folder).
    #[serde(skip)]
    pub base_dir: PathBuf,
}

impl Experiment {
    /// Parses an experiment from TOML. `origin` names it in errors; `base_dir` resolves paths.
    ///
    /// # Errors
    /// [`Error::ConfigFile`] with the line and key of what is wrong.
    pub fn from_toml_str(text: &str, origin: &str, base_dir: &Path) -> Result<Self> {
        let mut e: Experiment = toml::from_str(text)
            .map_err(|err| Error::ConfigFile { origin: origin.to_string(), place: freeblock_disk::toml_place::locate(text, &err) })?;
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

    /// Sets the number of foreground requests (the command line's `--count`): a synthetic
    /// workload's `count`, a trace's `limit`.
    ///
    /// # Errors
    /// [`Error::Config`] naming `workload.count` for 0, and for a `days` workload (whose length
    /// is `days × requests_per_day`: set those instead).
    pub fn set_count(&mut self, count: u64) -> Result<()> {
        let bad = |message: String| Error::Config { origin: "workload.count".into(), message };
        if count == 0 {
            return Err(bad("must be at least 1 request".into()));
        }
        match &mut self.workload {
            WorkloadSpec::Random(w) => w.count = Some(count),
            WorkloadSpec::Locality(w) => w.count = Some(count),
            WorkloadSpec::Oltp(w) => w.count = Some(count),
            WorkloadSpec::Sequential(w) => w.count = Some(count),
            WorkloadSpec::Trace(t) => t.limit = Some(count),
            WorkloadSpec::Days(_) => {
                return Err(bad("a `days` workload has days × requests_per_day requests: set `days` or `requests_per_day` in the file".into()))
            }
            WorkloadSpec::ScatteredFiles(_) => {
                return Err(bad("a `scattered_files` workload reads its files `passes` times: set `passes` or `files` in the file".into()))
            }
            WorkloadSpec::Commands(_) => return Err(bad("a `commands` workload runs the commands it lists: edit the list".into())),
        }
        Ok(())
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
        let trace = match &self.workload {
            WorkloadSpec::Trace(t) => Some(t.path.as_path()),
            _ => None,
        };
        let disk = self.disk.build_for(&self.base_dir, trace)?;
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
        // The one switch: where freeblock planning happens. Outside the drive, the engine's disk
        // is the host's model and the real one hides in a black box.
        let placement = self.freeblock.as_ref().map(|f| f.placement);
        let external = match (placement, &self.external) {
            (Some(Placement::Firmware), Some(_)) => {
                return Err(Error::Config { origin: "external".into(), message: "an [external] table needs [freeblock] placement = \"external\" (or no [freeblock] table)".into() })
            }
            (Some(Placement::External), e) => Some(e.clone().unwrap_or_default()),
            (None, e) => e.clone(),
            (Some(Placement::Firmware), None) => None,
        };
        let (disk, host) = match external {
            None => (disk, None),
            Some(config) => {
                let model = crate::external::scheduler::host_model(&disk, &config, self.seed)?;
                let drive = crate::external::BlackBox::new(disk, config.effects.clone(), self.seed);
                (Arc::clone(&model), Some(crate::external::ExternalHost::new(drive, model, config)?))
            }
        };
        let mut simulation = Simulation::new(disk.clone(), workload, sim);
        if let Some(layout) = layout {
            simulation = simulation.with_layout(layout);
        }
        if self.freeblock.is_some() || freeblock {
            let config = self.freeblock.clone().unwrap_or_default();
            simulation = simulation.with_freeblock(crate::freeblock::Freeblock::new(disk, config)?);
        }
        if let Some(host) = host {
            simulation = simulation.with_external(host);
        }
        Ok(simulation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Record;
    use std::sync::Mutex;

    fn experiment(text: &str) -> Experiment {
        Experiment::from_toml_str(text, "test.toml", Path::new(".")).unwrap()
    }

    const RANDOM: &str = r#"
        [disk]
        name = "hp_c2249a"
        cache = false
        [workload]
        type = "random"
        count = 3000
        [sim]
        scheduler = { type = "sptf" }
        mpl = 4
    "#;

    #[test]
    fn one_switch_runs_the_same_scan_in_firmware_or_from_the_host() {
        let file = |placement: &str, external: &str| {
            format!(
                "[disk]\nname = \"atlas10k\"\ncache = false\n[workload]\ntype = \"oltp\"\n[sim]\nscheduler = {{ type = \"sptf\" }}\nmpl = 10\nmax_time_s = 2\n\
                 [freeblock]\nplacement = \"{placement}\"\nstop_when_done = false\n[[freeblock.tasks]]\ntype = \"scan\"\npasses = 0\n{external}"
            )
        };
        let firmware = experiment(&file("firmware", "")).run(None).unwrap();
        let host = "[external]\nmodel = \"truth\"\nconservatism_ms = 0.3\n";
        let external = experiment(&file("external", host)).run(None).unwrap();
        let (f, e) = (firmware.freeblock.unwrap(), external.freeblock.unwrap());
        assert!(f.free_mb_s > 0.0 && e.free_mb_s > 0.0, "{} {}", f.free_mb_s, e.free_mb_s);
        assert_eq!(f.delayed_foreground, 0);
        // The host's response times are what the black box reported, not the firmware's.
        assert_ne!(firmware.response.mean_ms, external.response.mean_ms);
        let err = experiment(&file("firmware", host)).run(None).err().unwrap().to_string();
        assert!(err.contains("external") && err.contains("placement"), "{err}");
    }

    #[test]
    fn a_record_sink_sees_the_records_the_report_would_keep() {
        let mut kept = experiment(RANDOM);
        kept.sim.keep_records = true;
        let kept = kept.run(None).unwrap();
        let streamed: &'static Mutex<Vec<Record>> = Box::leak(Box::default());
        let report = experiment(RANDOM)
            .build(false)
            .unwrap()
            .with_record_sink(Box::new(|r: &Record| {
                streamed.lock().unwrap().push(*r);
                Ok(())
            }))
            .run(None)
            .unwrap();
        assert!(report.records.is_empty(), "a sink takes the records instead of the report");
        assert_eq!(kept.records.len(), 3000);
        assert_eq!(*streamed.lock().unwrap(), kept.records);
        assert_eq!(report.response, kept.response);
    }

    #[test]
    fn a_failing_sink_stops_the_run_with_its_error() {
        let err = experiment(RANDOM)
            .build(false)
            .unwrap()
            .with_record_sink(Box::new(|r: &Record| {
                if r.id == 10 {
                    return Err(Error::Io { path: "records.csv".into(), message: "disk full".into() });
                }
                Ok(())
            }))
            .run(None)
            .unwrap_err();
        assert_eq!(err.to_string(), Error::Io { path: "records.csv".into(), message: "disk full".into() }.to_string());
    }

    #[test]
    fn count_overrides_every_kind_that_has_one_and_names_the_field_otherwise() {
        let mut e = experiment(RANDOM);
        e.set_count(17).unwrap();
        assert_eq!(e.workload.count(), Some(17));
        assert!(e.set_count(0).unwrap_err().to_string().contains("workload.count"));
        let mut days = experiment("[workload]\ntype = \"days\"\n");
        let err = days.set_count(5).unwrap_err().to_string();
        assert!(err.contains("workload.count") && err.contains("requests_per_day"), "{err}");
    }

    #[test]
    fn a_disk_named_on_the_command_line_is_a_name_or_a_file_by_its_extension() {
        let choice = DiskChoice { zero_latency: true, ..DiskChoice::named("atlas10k") };
        let cwd = Path::new("/work");
        let named = choice.replaced_by("hp_c2249a", cwd);
        assert_eq!((named.name.as_deref(), named.zero_latency), (Some("hp_c2249a"), true));
        let spec = choice.replaced_by("my=disk.toml", cwd);
        assert_eq!((spec.name, spec.spec), (None, Some(cwd.join("my=disk.toml"))));
        let disksim = choice.replaced_by("models/x.diskspecs", cwd);
        assert_eq!(disksim.disksim, Some(cwd.join("models/x.diskspecs")));
    }

    /// Writes only, k candidates per write: the mean rotational latency of a write.
    fn write_rotational_ms(candidates: u32) -> (f64, serde_json::Value) {
        let text = format!(
            r#"
            [disk]
            name = "hp_c2249a"
            cache = false
            [workload]
            type = "random"
            count = 2000
            read_fraction = 0.0
            [layout]
            type = "range_writes"
            candidates = {candidates}
            "#
        );
        let report = experiment(&text).run(None).unwrap();
        let layout = report.layout.expect("the run had a layout");
        assert_eq!(layout.policy, "range-writes");
        (layout.details["write_rotational_ms"].as_f64().unwrap(), layout.details)
    }

    #[test]
    fn range_writes_from_an_experiment_file_cut_rotational_latency() {
        let (one, details) = write_rotational_ms(1);
        assert_eq!(details["writes"], 2000);
        let (four, details) = write_rotational_ms(4);
        assert_eq!(details["candidates_per_write"], 4.0);
        // k equidistant candidates: about rev/(2k) instead of rev/2.
        assert!(four < 0.5 * one, "4 candidates {four} ms, 1 candidate {one} ms");
    }

    #[test]
    fn range_writes_serve_a_mixed_workload_and_move_its_writes() {
        let text = r#"
            [disk]
            name = "hp_c2249a"
            cache = false
            [workload]
            type = "sequential"
            count = 400
            request_sectors = 16
            read_fraction = 0.5
            [layout]
            type = "range_writes"
        "#;
        let mut e = experiment(text);
        e.sim.keep_records = true;
        let report = e.run(None).unwrap();
        assert_eq!(report.requests, 400);
        let layout = report.layout.unwrap();
        assert!(layout.details["reads"].as_u64().unwrap() > 0, "{}", layout.details);
        // Writes went to free places, not their homes; reads of unwritten blocks to their homes.
        assert!(report.records.iter().filter(|r| !r.op.is_read()).all(|r| r.lbn != r.phys_lbn));
    }

    #[test]
    fn a_bad_range_writes_setting_names_its_field() {
        let e = experiment("[workload]\ntype = \"random\"\ncount = 10\n[layout]\ntype = \"range_writes\"\nspare = 1.5\n");
        let err = e.run(None).unwrap_err().to_string();
        assert!(err.contains("layout.spare"), "{err}");
    }
}

#[cfg(test)]
mod trace_bus_tests {
    use super::*;

    /// The HP C2247A validation trace's own `.parv` (DiskSim's system configuration of its host).
    fn real_parv() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/disksim-validation/hp_c2247a.parv")
    }

    /// A small validate-format trace in a folder of its own, the real `.parv` beside it if asked.
    fn trace_in_dir(name: &str, with_parv: bool) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("freeblock-parv-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lines: String = (0..200u64).map(|i| format!("R Miss {} 64 0.0 1000.0\n", (i * 7919 * 64) % 2_000_000)).collect();
        std::fs::write(dir.join("t.trace"), lines).unwrap();
        if with_parv {
            std::fs::copy(real_parv(), dir.join("t.parv")).unwrap();
        }
        dir
    }

    const EXPERIMENT: &str = "[disk]\nname = \"hp_c2247a\"\n[workload]\ntype = \"trace\"\npath = \"t.trace\"\nformat = \"validate\"\n";

    #[test]
    fn a_parv_beside_the_trace_sets_the_bus_in_run_as_in_validate() {
        if !real_parv().is_file() {
            eprintln!("skipped: {} is missing", real_parv().display());
            return;
        }
        let (plain, beside) = (trace_in_dir("plain", false), trace_in_dir("beside", true));
        let run_disk = |dir: &Path| {
            let e = Experiment::from_toml_str(EXPERIMENT, "test", dir).unwrap();
            let WorkloadSpec::Trace(t) = &e.workload else { unreachable!() };
            e.disk.build_for(dir, Some(&t.path)).unwrap()
        };
        let validate_disk = disk_for_trace(library::get("hp_c2247a").unwrap(), &beside.join("t.trace")).unwrap();
        let bus = |d: &Disk| (d.spec().controller.bus_sector_ms, d.spec().controller.bus_write_sector_ms);
        assert_eq!(bus(&run_disk(&beside)), bus(&validate_disk), "run and validate must apply the same .parv");
        assert_ne!(bus(&run_disk(&plain)), bus(&validate_disk), "the .parv must change this drive's bus");
        // And the run itself pays it.
        let mean = |dir: &Path| Experiment::from_toml_str(EXPERIMENT, "test", dir).unwrap().run(None).unwrap().response.mean_ms;
        assert!(mean(&beside) > mean(&plain));
        let _ = std::fs::remove_dir_all(plain);
        let _ = std::fs::remove_dir_all(beside);
    }
}

#[cfg(test)]
mod parse_place_tests {
    use super::*;

    #[test]
    fn a_bad_value_in_the_workload_table_names_its_key_and_line() {
        let text = "seed = 1\n\n[workload]\ntype = \"random\"\ncount = -10\n\n[sim]\nmpl = 2\n";
        let e = Experiment::from_toml_str(text, "x.toml", Path::new(".")).unwrap_err();
        let Error::ConfigFile { place, .. } = &e else { panic!("{e:?}") };
        assert_eq!((place.line, place.key.as_deref()), (Some(5), Some("workload.count")));
        assert!(e.to_string().starts_with("x.toml: line 5, `workload.count`: invalid value: integer `-10`"), "{e}");
    }

    #[test]
    fn a_scheduler_name_that_is_none_names_the_scheduler_key() {
        let text = "[workload]\ntype = \"random\"\ncount = 10\n\n[sim]\nscheduler = \"elevator\"\n";
        let e = Experiment::from_toml_str(text, "x.toml", Path::new(".")).unwrap_err();
        assert!(e.to_string().contains("line 6") && e.to_string().contains("`sim.scheduler`") && e.to_string().contains("unknown scheduler `elevator`"), "{e}");
    }
}
