//! [`WorkloadSpec`]: the `[workload]` table of an experiment file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use freeblock_disk::SimTime;

use super::synthetic::{LocalitySpec, OltpSpec, RandomSpec, SequentialSpec};
use super::trace::{TraceFormat, TraceReader};
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
    /// Replay of a trace file.
    Trace(TraceSpec),
}

/// Replay of a trace file.
///
/// ```toml
/// [workload]
/// type = "trace"
/// path = "traces/atlas10k.trace"   # relative to the experiment file, see WorkloadSpec::resolve_paths
/// format = "validate"              # disksim | validate | msr | blkparse
/// # limit = 5000                   # first N requests only
/// # device = 1                     # disksim, msr: keep one device's requests
/// # action = "Q"                   # blkparse: which event kind (default "D")
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
    /// `disksim` and `msr` only: keep requests of this device (disk) number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
    /// `blkparse` only: the action whose events are requests (default `D`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<char>,
}

impl TraceSpec {
    /// Opens the trace, checking every request against a disk of `capacity_sectors`.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] for an option the format does not have,
    /// [`WorkloadError::Io`] if the file cannot be opened.
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
        let mut reader =
            TraceReader::open(&self.path, self.format)?.with_capacity(capacity_sectors);
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
            WorkloadSpec::Trace(s) => Box::new(s.open(capacity_sectors)?),
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
            WorkloadSpec::Trace(s) => s.format.arrival(),
        }
    }

    /// Think time between a closed task's completion and its next request, ns: `Some` for `oltp`
    /// (default 30 ms), `None` for the others (closed ones then have no think time).
    #[must_use]
    pub fn think_time_ns(&self) -> Option<SimTime> {
        match self {
            WorkloadSpec::Oltp(s) => Some(s.think_time_ns()),
            _ => None,
        }
    }

    /// The number of requests, when the spec fixes it (`count` of a synthetic workload); `None`
    /// for endless synthetic streams and for traces (whose length is known only after reading;
    /// a trace's `limit` is an upper bound).
    #[must_use]
    pub fn count(&self) -> Option<u64> {
        match self {
            WorkloadSpec::Random(s) => s.count,
            WorkloadSpec::Locality(s) => s.count,
            WorkloadSpec::Oltp(s) => s.count,
            WorkloadSpec::Sequential(s) => s.count,
            WorkloadSpec::Trace(_) => None,
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

    /// A short name of the kind: `random`, `locality`, `oltp`, `sequential` or `trace`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadSpec::Random(_) => "random",
            WorkloadSpec::Locality(_) => "locality",
            WorkloadSpec::Oltp(_) => "oltp",
            WorkloadSpec::Sequential(_) => "sequential",
            WorkloadSpec::Trace(_) => "trace",
        }
    }
}
