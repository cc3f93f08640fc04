//! The drive's own command queue (NCQ / TCQ): the firmware holds up to `queue_depth` commands the
//! host has sent and serves them in the order *it* chooses — by positioning time, with an age
//! limit against starvation — so the host sees its completions out of order.
//!
//! A drive of today accepts up to 32 commands at once. The host's scheduler (FCFS, C-LOOK, SPTF …)
//! still orders what waits in the host, but once a command is at the drive the host has no say:
//! the firmware picks whichever command it can reach soonest from where the head is (rotational
//! position ordering, RPO, the firmware's SPTF). That is why a deep queue raises random-read
//! throughput, and also why a sequential reader, whose next block is always just ahead of the head,
//! can starve a random read at the same drive for as long as it keeps reading (openzfs/zfs#10253,
//! #15270, cured there by `queue_depth=1`). Firmware bounds that with an age limit: a command that
//! has waited at the drive for the limit or longer is served next, oldest first.
//!
//! ```text
//!  host: driver queue ──► host scheduler (sim.scheduler) ──sends while the drive has room──┐
//!                                                                                           ▼
//!  drive: firmware queue  [ c1 c2 … cN ]   N ≤ queue_depth, the command in service counted
//!            │ overdue?   any command waiting ≥ age_limit_ms ──► the oldest of them
//!            │ otherwise  shortest positioning time (seek + rotational latency) from the head
//!            ▼
//!         mechanism ──► completion (in the firmware's order) ──► host
//!                   ▲
//!                   └── freeblock: background transfers planned into the rotational gap
//!                       before whichever command the firmware picked
//! ```
//!
//! | setting (`[sim.firmware]`) | meaning | range | without the table |
//! |---|---|---|---|
//! | `queue_depth` | commands the drive holds at once, the one in service included (the host's `/sys/block/sdX/device/queue_depth`) | 1 ..= 32 | 1: the host scheduler's pick goes straight to the mechanism, as in every run before this table existed |
//! | `age_limit_ms` | a command that has waited at the drive this long is served before any younger one | ≥ 0 ms, finite; absent = no limit | — |
//!
//! | depth | who chooses what the mechanism serves next | completions |
//! |---|---|---|
//! | 1 (or no table) | the host scheduler, from everything waiting in the host | in the host's order |
//! | 2 … 32 | the firmware, among the commands the host sent (the host scheduler chooses what to send) | in the firmware's order |
//!
//! The settings live in the experiment's `[sim]` (not in the disk spec) so that any drive in the
//! library can be run with or without a firmware queue; `sim.queue_depth` (how many requests the
//! host scheduler looks at) is a separate, host-side setting.
//!
//! Age is counted from when the command reached the drive, as firmware counts it; response times
//! still count from the request's arrival at the host. An age limit of 0 makes the firmware serve
//! commands in the order it received them.

use freeblock_disk::{Drive, SimTime};
use serde::{Deserialize, Serialize};

use crate::error::{number, Error, Result};
use crate::sched::{Context, Pending, Scheduler, Sptf};

/// The most commands a drive's queue may hold: SATA NCQ's 32 tags.
pub const MAX_FIRMWARE_QUEUE_DEPTH: u32 = 32;

/// The longest age limit accepted, ms (one simulated day: anything longer is "no limit").
pub const MAX_AGE_LIMIT_MS: f64 = 86_400_000.0;

/// The drive's command queue: `[sim.firmware]` in an experiment file (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareQueue {
    /// Commands the drive holds at once, the one in service included: 1 ..= 32.
    pub queue_depth: u32,
    /// A command that has waited at the drive this many ms or more is served next (oldest
    /// first). Absent: no limit (pure positioning-time order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age_limit_ms: Option<f64>,
}

impl FirmwareQueue {
    /// A queue of `queue_depth` commands with an optional age limit, ms.
    #[must_use]
    pub fn new(queue_depth: u32, age_limit_ms: Option<f64>) -> Self {
        Self { queue_depth, age_limit_ms }
    }

    /// Checks both settings.
    ///
    /// # Errors
    /// [`Error::Config`] naming `sim.firmware.queue_depth` (outside 1 ..= 32) or
    /// `sim.firmware.age_limit_ms` (negative, NaN, infinite or longer than a day).
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_FIRMWARE_QUEUE_DEPTH).contains(&self.queue_depth) {
            return Err(Error::Config {
                origin: "sim.firmware.queue_depth".into(),
                message: format!("a drive holds 1 to {MAX_FIRMWARE_QUEUE_DEPTH} commands (NCQ's tags), not {}", self.queue_depth),
            });
        }
        if let Some(limit) = self.age_limit_ms {
            if !(limit.is_finite() && (0.0..=MAX_AGE_LIMIT_MS).contains(&limit)) {
                return Err(Error::Config {
                    origin: "sim.firmware.age_limit_ms".into(),
                    message: format!("must be a time from 0 to {} ms (a day; leave it out for no limit), not {}", number(MAX_AGE_LIMIT_MS), number(limit)),
                });
            }
        }
        Ok(())
    }

    /// The age limit in ns (`None`: no limit).
    #[must_use]
    pub fn age_limit_ns(&self) -> Option<SimTime> {
        self.age_limit_ms.map(freeblock_disk::time::ms_to_ns)
    }

    /// Whether the firmware chooses at all (a queue of one leaves every choice to the host).
    #[must_use]
    pub fn reorders(&self) -> bool {
        self.queue_depth > 1
    }
}

/// The firmware's choice among the commands it holds (`waiting`, in the order received, each
/// received at `received[i]`): the oldest overdue command if any has waited `age_limit` or
/// longer, else the one with the shortest positioning time from the head (ties: the earliest
/// received).
#[must_use]
pub fn pick(waiting: &[Pending], received: &[SimTime], age_limit: Option<SimTime>, drive: &Drive, now: SimTime) -> usize {
    debug_assert_eq!(waiting.len(), received.len());
    if let Some(limit) = age_limit {
        // Received in order, so the first overdue command is the oldest.
        if let Some(i) = received.iter().position(|&r| now.saturating_sub(r) >= limit) {
            return i;
        }
    }
    if waiting.len() == 1 {
        return 0;
    }
    Sptf.pick(waiting, &Context { drive, now, last_lbn: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_range_name_their_field() {
        for depth in [0, 33, 1000] {
            let e = FirmwareQueue::new(depth, None).validate().unwrap_err().to_string();
            assert!(e.contains("sim.firmware.queue_depth") && e.contains(&depth.to_string()), "{e}");
        }
        for limit in [-1.0, f64::NAN, f64::INFINITY, 1e12] {
            let e = FirmwareQueue::new(32, Some(limit)).validate().unwrap_err().to_string();
            assert!(e.contains("sim.firmware.age_limit_ms"), "{e}");
        }
        assert!(FirmwareQueue::new(1, Some(0.0)).validate().is_ok());
        assert!(FirmwareQueue::new(32, Some(500.0)).validate().is_ok());
    }

    #[test]
    fn reads_from_a_table_and_refuses_unknown_keys() {
        let q: FirmwareQueue = toml::from_str("queue_depth = 32\nage_limit_ms = 250").unwrap();
        assert_eq!(q, FirmwareQueue::new(32, Some(250.0)));
        let q: FirmwareQueue = toml::from_str("queue_depth = 8").unwrap();
        assert_eq!(q.age_limit_ns(), None);
        assert!(toml::from_str::<FirmwareQueue>("queue_depth = 8\nage_limit = 3").unwrap_err().to_string().contains("age_limit"));
    }
}
