//! Free-space watermarks: replicas live only in space the user is not using, and give it back
//! before the user could notice (paper 003 §2.3, §3.2).
//!
//! ```text
//!  free share of the disk
//!  1.0 ┤ replicating
//!      │
//! high ┤ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─  resume replicating once back above (15%)
//!  low ┤ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─  stop replicating; drop replicas neither recent nor frequent (10%)
//! crit ┤ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─  drop every replica of a region, region after region, until above low (5%)
//!  0.0 ┘
//! ```
//!
//! | band | replication | replicas dropped |
//! |---|---|---|
//! | free ≥ high | on | none |
//! | low ≤ free < high | as it was (hysteresis) | none |
//! | critical ≤ free < low | off | cold ones: read fewer than `frequent_reads` times and not within the last `recent_requests` requests |
//! | free < critical | off | whole regions (most replicas first) until free ≥ low |
//!
//! A user write never waits for any of this: a write to a block whose home holds a replica drops
//! that replica in the map and goes ahead (no I/O is needed to free a replica).

use serde::{Deserialize, Serialize};

use super::error::Fs2Error;

/// The three watermarks, as fractions of the disk's blocks that are free.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Watermarks {
    /// Replication resumes at or above this. Default 0.15.
    pub high: f64,
    /// Below this replication stops and cold replicas are dropped. Default 0.10.
    pub low: f64,
    /// Below this whole regions' replicas are dropped. Default 0.05.
    pub critical: f64,
}

impl Default for Watermarks {
    fn default() -> Self {
        Self { high: 0.15, low: 0.10, critical: 0.05 }
    }
}

impl Watermarks {
    /// Checks `0 < critical < low < high < 1`.
    ///
    /// # Errors
    /// [`Fs2Error::WatermarksOutOfOrder`].
    pub fn validate(&self) -> Result<(), Fs2Error> {
        let ordered = 0.0 < self.critical && self.critical < self.low && self.low < self.high && self.high < 1.0;
        if ordered {
            Ok(())
        } else {
            Err(Fs2Error::WatermarksOutOfOrder { high: self.high, low: self.low, critical: self.critical })
        }
    }

    /// The band a free share falls in.
    #[must_use]
    pub fn band(&self, free_share: f64) -> Band {
        if free_share < self.critical {
            Band::Critical
        } else if free_share < self.low {
            Band::Low
        } else if free_share < self.high {
            Band::Between
        } else {
            Band::High
        }
    }
}

/// Where the free share stands against the watermarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Band {
    /// At or above high.
    High,
    /// Between low and high.
    Between,
    /// Between critical and low.
    Low,
    /// Below critical.
    Critical,
}

/// Replication on or off, with the hysteresis between low and high.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttle {
    on: bool,
}

impl Default for Throttle {
    fn default() -> Self {
        Self { on: true }
    }
}

impl Throttle {
    /// Moves to the state the band asks for and says whether replication may run.
    pub fn update(&mut self, band: Band) -> bool {
        match band {
            Band::High => self.on = true,
            Band::Low | Band::Critical => self.on = false,
            Band::Between => {}
        }
        self.on
    }

    /// Whether replication may run.
    #[must_use]
    pub fn on(&self) -> bool {
        self.on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_watermarks_are_refused_by_name() {
        let bad = Watermarks { high: 0.10, low: 0.15, critical: 0.05 };
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("critical < low < high") && e.contains("low = 0.15"), "{e}");
        assert!(Watermarks { high: 1.2, ..Watermarks::default() }.validate().is_err());
        assert!(Watermarks { critical: 0.0, ..Watermarks::default() }.validate().is_err());
        assert!(Watermarks::default().validate().is_ok());
    }

    #[test]
    fn hysteresis_between_low_and_high() {
        let w = Watermarks::default();
        let mut t = Throttle::default();
        assert!(t.update(w.band(0.5)));
        assert!(t.update(w.band(0.12)), "still on between low and high");
        assert!(!t.update(w.band(0.09)));
        assert!(!t.update(w.band(0.12)), "stays off until high");
        assert!(t.update(w.band(0.15)));
        assert_eq!(w.band(0.01), Band::Critical);
    }
}
