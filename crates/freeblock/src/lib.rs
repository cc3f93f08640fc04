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
