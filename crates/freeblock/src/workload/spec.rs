//! [`WorkloadSpec`]: the `[workload]` table of an experiment file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use freeblock_disk::SimTime;

use super::commands::CommandsSpec;
use super::days::DaysSpec;
use super::scattered_files::ScatteredFilesSpec;
use super::synthetic::{LocalitySpec, OltpSpec, RandomSpec, SequentialSpec};
use super::trace::{AddressMap, TraceFormat, TraceReader};
use super::{ArrivalKind, Workload, WorkloadError};

/// A workload, as written in an experiment file. Choose the kind with `type`; the other keys are
/// those of the variant's spec struct, and unknown keys are errors.
///
/// ```
/// use freeblock::workload::{ArrivalKind, WorkloadSpec};
/// let spec: WorkloadSpec = toml::from_str(r#"
///     type = "oltp"
///     count = 1000
///     think_time_ms = 30
/// "#).unwrap();
/// assert_eq!(spec.arrival(), ArrivalKind::Closed);
/// assert_eq!(spec.think_time_ns(), Some(30_000_000));
/// let mut w = spec.build(17_000_000, 42).unwrap();
/// let r = w.next_request().unwrap().unwrap();
/// assert_eq!(r.sectors % 8, 0);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadSpec {
    /// Uniform random requests (paper 000 §3).
    Random(RandomSpec),
    /// Random requests with a fraction of local starts (paper 000 §3.2, Fig. 4).
    Locality(LocalitySpec),
    /// Closed OLTP-like tasks with think time (paper 000 §6.2).
    Oltp(OltpSpec),
    /// Sequential or strided stream.
    Sequential(SequentialSpec),
    /// Days of skewed block references with a drifting hot set (paper 002, Fig. 5).
    Days(DaysSpec),
    /// Files scattered over a mostly full disk, read again and again in the same order (paper
    /// 003's pattern).
    ScatteredFiles(ScatteredFilesSpec),
    /// Replay of a trace file.
    Trace(TraceSpec),
    /// Commands written out one by one: reads, writes, FUA writes, FLUSH CACHE
    /// ([`super::commands`]).
    Commands(CommandsSpec),
}

/// Default block of an address map, sectors (4 KB).
pub const DEFAULT_MAP_ALIGN_SECTORS: u64 = 8;

/// Replay of a trace file.
///
/// ```toml
/// [workload]
/// type = "trace"
/// path = "traces/atlas10k.trace"   # relative to the experiment file, see WorkloadSpec::resolve_paths
/// format = "validate"              # disksim | validate | msr | blkparse | srt | vscsi
/// # limit = 5000                   # first N requests only
/// # device = 1                     # disksim, msr, srt: keep one device's requests
/// # action = "Q"                   # blkparse: which event kind (default "D")
/// # map = "scale"                  # fit a larger traced volume onto the disk: none | modulo | scale
/// # span_sectors = 65595584        # scale: the traced volume (default: scanned from the trace)
/// # align_sectors = 8              # modulo, scale: the block that stays whole (default 8, 4 KB)
/// ```
///
/// Address maps ([`AddressMap`]; the `map` key):
///
/// | `map` | a request at block `b` (of `align_sectors`) goes to | use |
/// |---|---|---|
/// | `none` (default) | `b`; a request past the disk is an error | a trace taken on this disk |
/// | `modulo` | `b mod C`, `C` = the disk's blocks | keep seek distances and runs; the volume wraps around the disk |
/// | `scale` | `floor(b · C / S)`, `S` = the trace's span in blocks | keep the layout, squeezed onto the disk |
///
/// A request keeps its offset within its block; a mapped request that would run past the last
/// sector is moved back to end on it. For `scale` without `span_sectors`, the trace is read once
/// when the workload is built (with the same `device` and `limit`) to find its span, one past its
/// highest sector; errors in the trace then show up at build time.
///
/// ```
/// use freeblock::workload::{AddressMap, TraceFormat, WorkloadSpec};
/// let spec: WorkloadSpec = toml::from_str(r#"
///     type = "trace"
///     path = "cloudPhysicsIO.vscsi"
///     format = "vscsi"
///     map = "scale"
/// "#).unwrap();
/// let WorkloadSpec::Trace(t) = spec else { unreachable!() };
/// assert_eq!((t.format, t.map), (TraceFormat::Vscsi, AddressMap::Scale));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Trace file.
    pub path: PathBuf,
    /// Its format.
    pub format: TraceFormat,
    /// Replay only the first `limit` requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// `disksim`, `msr` and `srt` only: keep requests of this device (disk) number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
    /// `blkparse` only: the action whose events are requests (default `D`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<char>,
    /// How addresses are fitted onto the disk. Default [`AddressMap::None`].
    #[serde(default, skip_serializing_if = "AddressMap::is_none")]
    pub map: AddressMap,
    /// `map = "scale"` only: the traced volume's size, sectors (> 0). Default: the trace's span,
    /// found by reading it once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_sectors: Option<u64>,
    /// `map = "modulo"` or `"scale"` only: the block size the map works in, sectors (≥ 1, at most
    /// the capacity). Default 8 (4 KB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align_sectors: Option<u64>,
}

impl TraceSpec {
    /// A spec replaying `path` in `format` with no options.
    #[must_use]
    pub fn new(path: impl Into<PathBuf>, format: TraceFormat) -> Self {
        Self {
            path: path.into(),
            format,
            limit: None,
            device: None,
            action: None,
            map: AddressMap::None,
            span_sectors: None,
            align_sectors: None,
        }
    }

    /// Opens the trace with the spec's filters, no capacity and no map.
    fn open_filtered(&self) -> Result<TraceReader, WorkloadError> {
        let mut reader = TraceReader::open(&self.path, self.format)?;
        if let Some(limit) = self.limit {
            reader = reader.with_limit(limit);
        }
        if let Some(device) = self.device {
            reader = reader.with_device(device);
        }
        if let Some(action) = self.action {
            reader = reader.with_blkparse_action(action);
        }
        Ok(reader)
    }

    /// Opens the trace, checking every request against a disk of `capacity_sectors` (after the
    /// address map, if any).
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] for an option the format or map does not have,
    /// [`WorkloadError::Io`] if the file cannot be opened; with `map = "scale"` and no
    /// `span_sectors`, the first error of the trace (read once to find its span).
    pub fn open(&self, capacity_sectors: u64) -> Result<TraceReader, WorkloadError> {
        if self.device.is_some() && !self.format.has_device() {
            return Err(WorkloadError::invalid(
                "device",
                format!(
                    "the {} format has no device numbers to filter on",
                    self.format
                ),
            ));
        }
        if self.action.is_some() && self.format != TraceFormat::Blkparse {
            return Err(WorkloadError::invalid(
                "action",
                format!(
                    "only the blkparse format has actions (this is {})",
                    self.format
                ),
            ));
        }
        if self.map.is_none() {
            for (field, set) in [
                ("span_sectors", self.span_sectors.is_some()),
                ("align_sectors", self.align_sectors.is_some()),
            ] {
                if set {
                    return Err(WorkloadError::invalid(
                        field,
                        "only an address map (map = \"modulo\" or \"scale\") uses it",
                    ));
                }
            }
        }
        if self.map == AddressMap::Modulo && self.span_sectors.is_some() {
            return Err(WorkloadError::invalid(
                "span_sectors",
                "only map = \"scale\" uses it",
            ));
        }
        let align = self.align_sectors.unwrap_or(DEFAULT_MAP_ALIGN_SECTORS);
        if !self.map.is_none() {
            if align == 0 {
                return Err(WorkloadError::invalid(
                    "align_sectors",
                    "must be at least 1",
                ));
            }
            if align > capacity_sectors {
                return Err(WorkloadError::invalid(
                    "align_sectors",
                    format!(
                        "a block of {align} sectors does not fit on a disk of \
                         {capacity_sectors} sectors"
                    ),
                ));
            }
        }
        if self.limit == Some(0) {
            return Err(WorkloadError::invalid(
                "limit",
                "must be at least 1 request (omit it to replay the whole trace)",
            ));
        }
        if self.span_sectors == Some(0) {
            return Err(WorkloadError::invalid("span_sectors", "must be at least 1"));
        }
        let mut reader = self.open_filtered()?.with_capacity(capacity_sectors);
        match self.map {
            AddressMap::None => {}
            AddressMap::Modulo => reader = reader.with_modulo_map(align),
            AddressMap::Scale => {
                let span = match self.span_sectors {
                    Some(span) => span,
                    None => self.open_filtered()?.scan_span()?.max(1),
                };
                reader = reader.with_scale_map(span, align);
            }
        }
        Ok(reader)
    }
}

impl WorkloadSpec {
    /// Paper 000 §3's default `random` workload with `count` requests: 4 KB, uniform starts, 2:1
    /// reads, closed with no think time.
    #[must_use]
    pub fn random_4k(count: u64) -> Self {
        WorkloadSpec::Random(RandomSpec {
            count: Some(count),
            ..RandomSpec::default()
        })
    }

    /// Makes the workload for a disk of `capacity_sectors`. Synthetic generators are seeded with
    /// `seed` (same spec, capacity and seed: same requests); traces ignore it and check every
    /// request against the capacity.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] for a value that makes no workload on this disk,
    /// [`WorkloadError::Io`] if a trace cannot be opened. Parse errors of a trace come later, from
    /// [`Workload::next_request`].
    pub fn build(
        &self,
        capacity_sectors: u64,
        seed: u64,
    ) -> Result<Box<dyn Workload>, WorkloadError> {
        Ok(match self {
            WorkloadSpec::Random(s) => Box::new(s.build(capacity_sectors, seed)?),
            WorkloadSpec::Locality(s) => Box::new(s.build(capacity_sectors, seed)?),
            WorkloadSpec::Oltp(s) => Box::new(s.build(capacity_sectors, seed)?),
            WorkloadSpec::Sequential(s) => Box::new(s.build(capacity_sectors, seed)?),
            WorkloadSpec::Days(s) => Box::new(s.build(capacity_sectors, seed)?),
            WorkloadSpec::ScatteredFiles(s) => Box::new(s.build(capacity_sectors, seed)?),
            WorkloadSpec::Trace(s) => Box::new(s.open(capacity_sectors)?),
            WorkloadSpec::Commands(s) => Box::new(s.build(capacity_sectors)?),
        })
    }

    /// How the simulator must issue the built workload's requests (the same as
    /// [`Workload::arrival`] on it).
    #[must_use]
    pub fn arrival(&self) -> ArrivalKind {
        let open_if = |rate: Option<f64>| {
            if rate.is_some() {
                ArrivalKind::Open
            } else {
                ArrivalKind::Closed
            }
        };
        match self {
            WorkloadSpec::Random(s) => open_if(s.rate_per_s),
            WorkloadSpec::Locality(s) => open_if(s.rate_per_s),
            WorkloadSpec::Oltp(_) => ArrivalKind::Closed,
            WorkloadSpec::Sequential(s) => open_if(s.rate_per_s),
            WorkloadSpec::Days(_) => ArrivalKind::Open,
            WorkloadSpec::ScatteredFiles(_) => ArrivalKind::Closed,
            WorkloadSpec::Trace(s) => s.format.arrival(),
            WorkloadSpec::Commands(s) => {
                if s.arrival == super::commands::CommandArrival::Open {
                    ArrivalKind::Open
                } else {
                    ArrivalKind::ClosedDelay
                }
            }
        }
    }

    /// Think time between a closed task's completion and its next request, ns: `Some` for `oltp`
    /// (default 30 ms) and `scattered_files` (default 0), `None` for the others (closed ones then
    /// have no think time).
    #[must_use]
    pub fn think_time_ns(&self) -> Option<SimTime> {
        match self {
            WorkloadSpec::Oltp(s) => Some(s.think_time_ns()),
            WorkloadSpec::ScatteredFiles(s) => Some(s.think_time_ns()),
            _ => None,
        }
    }

    /// The number of requests, when the spec fixes it (`count` of a synthetic workload,
    /// `days · requests_per_day` of `days`); `None`
    /// for endless synthetic streams, for `scattered_files` (its pass length depends on the
    /// seed's file sizes) and for traces (whose length is known only after reading;
    /// a trace's `limit` is an upper bound).
    #[must_use]
    pub fn count(&self) -> Option<u64> {
        match self {
            WorkloadSpec::Random(s) => s.count,
            WorkloadSpec::Locality(s) => s.count,
            WorkloadSpec::Oltp(s) => s.count,
            WorkloadSpec::Sequential(s) => s.count,
            WorkloadSpec::Days(s) => Some(s.total_requests()),
            WorkloadSpec::ScatteredFiles(_) | WorkloadSpec::Trace(_) => None,
            WorkloadSpec::Commands(s) => Some(s.commands.len() as u64),
        }
    }

    /// Makes a relative trace path relative to `base_dir` (the experiment file's directory).
    /// Absolute paths and synthetic specs are unchanged.
    pub fn resolve_paths(&mut self, base_dir: &Path) {
        if let WorkloadSpec::Trace(t) = self {
            if t.path.is_relative() {
                t.path = base_dir.join(&t.path);
            }
        }
    }

    /// A short name of the kind: `random`, `locality`, `oltp`, `sequential`, `days`,
    /// `scattered_files`, `trace` or `commands`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadSpec::Random(_) => "random",
            WorkloadSpec::Locality(_) => "locality",
            WorkloadSpec::Oltp(_) => "oltp",
            WorkloadSpec::Sequential(_) => "sequential",
            WorkloadSpec::Days(_) => "days",
            WorkloadSpec::ScatteredFiles(_) => "scattered_files",
            WorkloadSpec::Commands(_) => "commands",
            WorkloadSpec::Trace(_) => "trace",
        }
    }
}
