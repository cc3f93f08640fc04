//! # freeblock: positioning-aware storage for rotating disks
//!
//! The core of the project: a deterministic discrete-event simulator of a disk serving a
//! workload under a foreground scheduler, built on the disk model in [`freeblock_disk`].
//!
//! ```text
//!  WorkloadSpec ─build─► Workload ─┐
//!  DiskSpec ──────────► Disk ──────┼─► Simulation::run ─► RunReport (head usage, response times)
//!  SimConfig (scheduler, MPL…) ────┘
//! ```
//!
//! ```
//! use std::sync::Arc;
//! use freeblock::{sim::{SimConfig, Simulation}, sched::SchedulerSpec, workload::WorkloadSpec};
//! use freeblock_disk::{library, Disk};
//!
//! let disk = Arc::new(Disk::new(library::get("atlas10k").unwrap()).unwrap());
//! let workload = WorkloadSpec::random_4k(2_000).build(disk.capacity(), 42).unwrap();
//! let config = SimConfig { scheduler: SchedulerSpec::Sptf, mpl: 8, ..SimConfig::default() };
//! let report = Simulation::new(disk, workload, config).run(None).unwrap();
//! assert_eq!(report.requests, 2_000);
//! ```
//!
//! The engine and the model's users only; the papers' reproductions are `freeblock-repro`'s, the
//! tools that fit a model to a real drive `freeblock-fit`'s.
//!
//! | module | owns |
//! |---|---|
//! | [`sim`] | the one event loop: arrivals, the host scheduler, the drive, completions; the hooks where policies are called |
//! | [`des`] | the event queue and simulated time |
//! | [`request`] | a logical request (time, block, length, read or write, FUA, flush) |
//! | [`workload`] | where requests come from: synthetic, traces, PostMark, the papers' workloads |
//! | [`sched`] | host schedulers (FCFS, SSTF, C-LOOK, SPTF and its variants) and requests with alternatives |
//! | [`layout`] | the layout layer: block map, journal, allocator, one file per policy (range writes, rearrangement, FS2, LFS) |
//! | [`freeblock`] | freeblock scheduling: background transfers in rotational gaps, the planner, registered sets, applications |
//! | [`firmware`] | the drive's own command queue and write cache, as a host sees them |
//! | [`external`] | freeblock scheduling from the host: the black-box drive, characterisation, the host-side scheduler |
//! | [`rangewrite`] | range writes' device side: candidate selection and a run over a block map |
//! | [`experiment`] | an experiment file (TOML) into a run |
//! | [`report`], [`energy`] | what a run reports: head usage, response times, energy |
//! | [`error`] | the crate's error type |

pub mod des;
pub mod energy;
pub mod error;
pub mod experiment;
pub mod external;
pub mod firmware;
pub mod freeblock;
pub mod layout;
pub mod rangewrite;
pub mod report;
pub mod request;
pub mod sched;
pub mod sim;
pub mod workload;

pub use error::{Error, Result};
pub use request::Request;
