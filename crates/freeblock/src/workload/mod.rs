//! Workloads: where requests come from.
//!
//! A [`Workload`] is a stream of logical [`Request`]s (time, LBN, sectors, read/write) that the
//! simulator pulls one at a time with [`Workload::next_request`]. Nothing is buffered ahead, so a
//! trace of millions of requests replays in constant memory. Two families:
//!
//! ```text
//!  WorkloadSpec (TOML [workload] table) ──build(capacity, seed)──► Box<dyn Workload>
//!     random | locality | oltp | sequential  ──►  RandomWorkload / SequentialWorkload  (seeded)
//!     days                                   ──►  DaysWorkload (seeded, day-structured)
//!     scattered_files                        ──►  ScatteredFilesWorkload (seeded, repeated passes)
//!     trace { path, format, map }            ──►  TraceReader (streams the file)
//!     commands (reads, writes, FUA, flushes) ──►  RequestList (also built in code)
//!                                                      │ next_request() → Request, …, None
//!                                                      ▼
//!                                         simulator (issues per ArrivalKind)
//! ```
//!
//! ## How requests arrive
//!
//! [`Workload::arrival`] tells the simulator what [`Request::time`] means:
//!
//! - [`ArrivalKind::Open`]: the absolute arrival time. Requests arrive whether or not earlier ones
//!   are done (Poisson synthetic streams, `days`; DiskSim, MSR, blkparse, SRT and VSCSI traces).
//! - [`ArrivalKind::ClosedDelay`]: one request outstanding; each is issued `time` after the previous
//!   one completed (DiskSim "validate" traces, which record those delays).
//! - [`ArrivalKind::Closed`]: `time` is 0 and ignored; the simulator runs a fixed number of tasks
//!   (the multiprogramming level), each issuing its next request after its last one completed plus
//!   a think time ([`WorkloadSpec::think_time_ns`]; none unless the spec says so).
//!
//! ## Synthetic workloads
//!
//! From paper 000 (Lumb et al., *Towards higher disk head utilization: extracting free bandwidth
//! from busy disk drives*):
//!
//! - **`random`** — §3's default workload: 10 000 requests, one at a time with no think time
//!   (closed), 4 KB, starts uniform over the capacity, 2:1 reads to writes. Figure 3 varies the
//!   size; sizes may also be multiples of a unit drawn from an exponential ([`SizeDist`]).
//! - **`locality`** — §3.2, Fig. 4: a fraction of starts are "local", drawn from a normal
//!   distribution centred on the last requested location with a 4 MB standard deviation; the rest
//!   uniform. A crude model of file systems that cluster related data in "cylinder groups": more
//!   locality means shorter seeks, so more of the head's time is rotational latency — and more
//!   potential free bandwidth.
//! - **`oltp`** — §6.2: a closed system of tasks separated by 30 ms think times, requests uniform
//!   over the disk, 2:1 reads, sizes multiples of 4 KB from an exponential with mean 8 KB. The
//!   paper varies the multiprogramming level (an experiment setting) to raise the foreground load
//!   while a background scan uses free bandwidth.
//! - **`sequential`** — a contiguous or strided stream (scans, streaming media, log writes).
//!
//! From paper 002 (Akyürek & Salem, *Adaptive Block Rearrangement Under UNIX*):
//!
//! - **`days`** — several days of 8 KB block references, open (Poisson) arrivals, skewed like
//!   the paper's Fig. 5 (the 100 hottest blocks take ~90% of the requests, fewer than 2000 take
//!   all, writes more skewed than reads), with a hot set that drifts from day to day. Day `d` is
//!   `[d · day_ns, (d + 1) · day_ns)` ([`DaysSpec::day_ns`]); see [`days`].
//!
//! From paper 003 (Huang et al., *FS2: Dynamic Data Replication in Free Disk Space*):
//!
//! - **`scattered_files`** — files whose blocks are scattered over a few regions of a mostly
//!   full disk, read again and again in the same order, with some writes: the shape of the
//!   paper's `cvs update`, TPC-W and web-server runs; see [`scattered_files`].
//!
//! Generators are deterministic per seed ([`rand_chacha::ChaCha8Rng`]); see [`synthetic`] and
//! [`days`].
//!
//! ## Traces
//!
//! [`TraceReader`] replays DiskSim ASCII, DiskSim "validate", MSR Cambridge and blkparse text
//! traces, and HP Labs SRT and CloudPhysics VSCSI binary traces; see [`trace`] for the formats.
//! Malformed lines are errors naming `file:line`, malformed binary records errors naming
//! `file:record N (byte offset X)`; with [`TraceReader::with_capacity`] (always, when built from
//! a [`WorkloadSpec`]) a request past the end of the disk is too, unless an [`AddressMap`] fits
//! the traced volume onto the disk.
//!
//! ```
//! use freeblock::workload::{ArrivalKind, WorkloadSpec};
//! let spec: WorkloadSpec = toml::from_str(r#"
//!     type = "locality"
//!     count = 100
//!     local_fraction = 0.7
//! "#).unwrap();
//! let mut w = spec.build(17_938_986, 1).unwrap();
//! assert_eq!(w.arrival(), ArrivalKind::Closed);
//! let mut n = 0;
//! while let Some(r) = w.next_request().unwrap() {
//!     assert!(r.end() <= 17_938_986);
//!     n += 1;
//! }
//! assert_eq!(n, 100);
//! ```

pub mod commands;
pub mod days;
pub mod error;
pub mod postmark;
pub mod scattered_files;
pub mod spec;
pub mod synthetic;
pub mod trace;

use serde::{Deserialize, Serialize};

pub use crate::request::Request;
pub use days::{DaysSpec, DaysWorkload};
pub use error::WorkloadError;
pub use scattered_files::{FilePlan, Paper003Run, ScatteredFilesSpec, ScatteredFilesWorkload};
pub use spec::{TraceSpec, WorkloadSpec};
pub use synthetic::{
    LocalitySpec, OltpSpec, RandomSpec, RandomWorkload, SequentialSpec, SequentialWorkload,
    SizeDist,
};
pub use trace::{open_trace, AddressMap, TraceFormat, TraceReader};

/// What [`Request::time`] means for a workload, and so how the simulator issues its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalKind {
    /// `time` is the absolute arrival time, ns; times never decrease.
    Open,
    /// One stream, one request outstanding: `time` is the delay after the previous request
    /// completed (for the first request, after the start), ns.
    ClosedDelay,
    /// `time` is ignored (0): the simulator issues requests as its tasks complete, applying its
    /// own think time and multiprogramming level.
    Closed,
}

/// A stream of requests.
///
/// Object-safe and [`Send`]: the simulator holds a `Box<dyn Workload>`.
pub trait Workload: Send {
    /// The next request, or `Ok(None)` when the workload is exhausted (then always `None`).
    ///
    /// # Errors
    /// A trace line that does not parse or lies past the disk ([`WorkloadError::Parse`],
    /// [`WorkloadError::PastCapacity`]), or a read failure ([`WorkloadError::Io`]). After an error
    /// the workload yields nothing more.
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError>;

    /// The next request of closed-loop stream `stream` (`0 .. mpl`), for a workload whose
    /// streams differ (a sequential reader beside random readers). Default: the shared
    /// [`Workload::next_request`], whichever stream asks.
    ///
    /// # Errors
    /// As [`Workload::next_request`].
    fn next_request_for(&mut self, _stream: u32) -> Result<Option<Request>, WorkloadError> {
        self.next_request()
    }

    /// How the simulator must issue this workload's requests; constant for a workload.
    fn arrival(&self) -> ArrivalKind;

    /// Whether the stream never ends (a synthetic workload without a `count`): the simulator
    /// then needs another end for the run. Default false.
    fn is_endless(&self) -> bool {
        false
    }
}

impl<W: Workload + ?Sized> Workload for Box<W> {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        (**self).next_request()
    }

    fn next_request_for(&mut self, stream: u32) -> Result<Option<Request>, WorkloadError> {
        (**self).next_request_for(stream)
    }

    fn arrival(&self) -> ArrivalKind {
        (**self).arrival()
    }

    fn is_endless(&self) -> bool {
        (**self).is_endless()
    }
}

/// Drains a workload into a vector (for tests and small traces; an endless workload never
/// returns).
///
/// # Errors
/// The first error of the workload.
pub fn collect_requests(workload: &mut dyn Workload) -> Result<Vec<Request>, WorkloadError> {
    let mut out = Vec::new();
    while let Some(r) = workload.next_request()? {
        out.push(r);
    }
    Ok(out)
}
