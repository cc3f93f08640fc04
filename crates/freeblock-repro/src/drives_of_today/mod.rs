//! # Drives of today (issue 34): the firmware command queue and the write cache
//!
//! What users of today's disks run into is documented and measurable, and the engine's model of
//! a drive must show the same:
//!
//! - a 32-command firmware queue that reorders by positioning time gains only 1.6–1.7× the
//!   random-read IOPS of one command at a time on a 2 TB desktop drive (ublk-disksim's
//!   validation);
//! - a sequential reader at the same drive starves random reads for 1–4 s at deep queue, cured by
//!   `queue_depth=1` (openzfs/zfs#10253, #15270); a firmware age limit bounds it;
//! - a FLUSH CACHE after N scattered writes costs about 28 + 9.4·N ms on the 2 TB desktop drive
//!   (ublk-disksim's measurement).
//!
//! ```text
//!  firmware_queue:  host FCFS ──► drive queue (1 … 32, positioning-time order, age limit) ──► media model
//!                   random 4 KB reads at QD 1 … 32        ► IOPS, × QD 1       beside 1.6–1.7×
//!                   16 × 128 KB sequential + 4 random     ► worst random read  beside 1–4 s, and the age bound
//!  write_cache:     N × 4 KB random writes (done in the cache) ──► FLUSH CACHE ► flush ms beside 28 + 9.4·N
//!                   through the engine, checked against the bare drive's replay of the same commands
//! ```
//!
//! `freeblock firmware-queue --disk NAME` and `freeblock write-cache --disk NAME` run them on any
//! drive; `freeblock repro firmware-queue` and `freeblock repro write-cache` run them with those
//! commands' defaults on [`DRIVE`] and [`WRITE_CACHE_DRIVE`]; each takes seconds in full, so neither
//! has a smaller `--quick` version. Statements checked:
//!
//! | source | claim | published figure |
//! |---|---|---|
//! | ublk-disksim's validation | random 4 KB reads: IOPS at QD 32 over QD 1, within 10% | 1.6–1.7× ([`firmware_queue::PUBLISHED_QD32_GAIN`]) |
//! | openzfs/zfs#10253, #15270 | worst random read beside a sequential reader at QD 32, no age limit | 1–4 s ([`firmware_queue::PUBLISHED_STARVATION_S`]) |
//! | openzfs/zfs#10253, #15270 | the same at QD 1 (information) | cured by `queue_depth=1` |
//! | issue 34 | each age limit: worst random read within the limit plus one longest access per command ahead | the bound, computed |
//! | ublk-disksim's validation | FLUSH CACHE after N random 4 KB writes, within 25%, one per N | 28 + 9.4·N ms ([`write_cache::published_flush_ms`]) |
//! | ublk-disksim's validation | least-squares slope and fixed part of the flush time | 9.4 ms a write, 28 ms |
//!
//! | module | holds |
//! |---|---|
//! | [`firmware_queue`] | the random-read curve, the sequential reader beside random readers, their report |
//! | [`write_cache`] | the flush curve through the engine and the drive's replay, its report |

pub mod firmware_queue;
pub mod write_cache;

use crate::{Options, Outcome, Result};
use firmware_queue::FirmwareQueueSettings;
use write_cache::WriteCacheSettings;

/// The drive `freeblock repro firmware-queue` runs: the library's 14 TB model.
pub const DRIVE: &str = "ultrastar_hc530";
/// The drive `freeblock repro write-cache` runs: the 2 TB desktop drive the published flush line
/// was measured on (the only library drive with a `[write_cache]`).
pub const WRITE_CACHE_DRIVE: &str = "st2000dm006";

/// `freeblock repro firmware-queue`: `freeblock firmware-queue`'s defaults on [`DRIVE`];
/// `o.seconds` sets the sequential-reader runs' length.
///
/// # Errors
/// A run's error.
pub fn run_firmware_queue(o: &Options) -> Result<Outcome> {
    let defaults = FirmwareQueueSettings::default();
    firmware_queue::report(&FirmwareQueueSettings { seconds: o.seconds.unwrap_or(defaults.seconds), json: o.json, ..defaults })
}

/// `freeblock repro write-cache`: `freeblock write-cache`'s defaults on [`WRITE_CACHE_DRIVE`].
///
/// # Errors
/// A run's error.
pub fn run_write_cache(o: &Options) -> Result<Outcome> {
    write_cache::report(&WriteCacheSettings { json: o.json, ..WriteCacheSettings::default() })
}
