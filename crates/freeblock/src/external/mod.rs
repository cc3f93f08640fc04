//! # Freeblock scheduling outside the firmware (paper 001)
//!
//! A host cannot read its drive's spec: it submits commands and sees when they complete. This
//! module holds the two sides of that boundary.
//!
//! ```text
//!   host side                                   │ drive side (hidden)
//!   ────────────────────────────────────────────┼──────────────────────────────────────────
//!   characterize: probes ──► DiskSpec (TOML)    │
//!                     │   translate / time      │   BlackBox = Disk + firmware effects
//!                     └──────────────────────── ┼ ─► (jitter, bus overlap, read-ahead,
//!                        &mut dyn CommandInterface   queue reordering, internal activity)
//! ```
//!
//! | file | concept |
//! | --- | --- |
//! | [`blackbox`] | the drive behind a command interface; the firmware effects, each on or off |
//! | [`characterize`] | learning the drive from translate-address diagnostics and timing alone (after DIXtrac) |
//! | [`scheduler`] | the host-side freeblock scheduler: predictions from the learned model, resync, conservatism, merging, ≤ 2 outstanding |
//!
//! The host-side code takes `&mut dyn CommandInterface`, so the type system keeps it from the
//! spec: what it knows of the drive it learned through the interface.

pub mod blackbox;
pub mod characterize;
pub mod scheduler;

pub use blackbox::{BlackBox, Command, CommandInterface, Completion, DriveError, Effects, FirmwareLog, PhysAddr, Tag};
pub use scheduler::{AdaptiveMargin, AheadBreakdown, AheadClass, ExternalConfig, ExternalHost, HostModel, HostStats, PickStats};

/// Ultra2 Wide SCSI (80 MB/s), the bus between paper 001's host and its Atlas 10K (§5.1), as ms
/// per 512-byte sector; the default [`Effects`] (its bus-overlap jitter) are those of a drive on
/// it. The library's Atlas 10K carries the slower bus of DiskSim's validation host (0.099 ms per
/// sector); on that every free read would hold the bus, and the foreground completion behind it,
/// for longer than the media work.
pub const ULTRA2_BUS_SECTOR_MS: f64 = 512.0 / 80e6 * 1e3;
