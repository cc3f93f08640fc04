//! # freeblock-disk: a rotating-disk model
//!
//! This crate answers one question fast and exactly: *if the heads are here at this instant, when
//! will this request's data be done?* It knows nothing of queues or events; the simulator in the
//! `freeblock` crate asks it.
//!
//! ```text
//!  DiskSpec (TOML | DiskSim files | built-in) ──validate──► Disk = Layout + SeekCurve + timings
//!                                                             │
//!          HeadState + start time + (LBN, sectors, op) ──────►│ access() ─► MediaAccess + Breakdown
//! ```
//!
//! ## Terms
//! - **Seek**: moving the arm between cylinders; **head switch**: changing the active surface.
//! - **Settle**: extra time after a move before data can be read or written.
//! - **Rotational latency**: waiting for the first wanted sector to come under the head.
//! - **Positioning time**: seek + settle + rotational latency.
//! - **Transfer**: the wanted sectors passing under the head (media transfer).
//! - **Access time**: overhead + positioning + transfer (+ non-overlapped bus time).
//! - **Free bandwidth**: media transfers that fit in another request's rotational latency.
//!
//! ```
//! use freeblock_disk::{library, Disk, HeadState, Op};
//! let disk = Disk::new(library::get("atlas10k").unwrap()).unwrap();
//! let mut scratch = Vec::new();
//! let a = disk.access(HeadState::default(), 0, 1_000_000, 8, Op::Read, &mut scratch).unwrap();
//! assert_eq!(a.breakdown.total(), a.end - a.start);
//! ```

pub mod disk;
pub mod bands;
pub mod disksim;
pub mod disksim_g4;
pub mod drive;
pub mod error;
pub mod layout;
pub mod library;
pub mod seek;
pub mod sparing;
pub mod spec;
pub mod summary;
pub mod time;
pub mod toml_place;

pub use disk::{ArcAccess, Breakdown, Disk, HeadState, MediaAccess, Op, Target, ON_TIME_PS};
pub use drive::{Drive, Service, WriteCacheStats};
pub use error::{AccessError, SpecError};
pub use layout::{Layout, Pbn, RotPos, TrackAngles, TrackRun, TrackSummary};
pub use seek::SeekCurve;
pub use summary::DiskSummary;
pub use spec::{CacheSpec, Controller, DiskSpec, Mapping, PowerSpec, SeekModel, Sparing, WriteCacheMode, WriteCacheSpec, Zone};
pub use time::SimTime;
