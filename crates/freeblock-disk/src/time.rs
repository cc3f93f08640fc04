//! Simulated time.
//!
//! All simulated time is an integer count of **nanoseconds** ([`SimTime`]). Floating point appears
//! only at the edges (spec files in milliseconds, reports). Rotational positions are computed in
//! picoseconds internally (see [`crate::Disk::rot_pos`]) so a revolution that is not a whole
//! number of nanoseconds does not drift.
//!
//! # Range
//!
//! A `u64` of nanoseconds reaches 584 years, but the models work in picoseconds inside: the
//! rotational position of an instant `t` and the whole of the on-disk cache model (which keeps
//! `u64` picoseconds, wrapping past 2^64 ps ≈ 213.5 simulated days). So that nothing wraps:
//!
//! - the rotational position is computed without forming `t × 1000` when that would overflow,
//!   so a cache-less [`crate::Disk`] is exact for any `u64` instant;
//! - a [`crate::Drive`] with its cache on refuses ([`crate::AccessError::TimeLimit`]) a request
//!   that starts after [`CACHED_TIME_LIMIT`] (100 simulated days), or whose worst-case service
//!   could carry the buffer model's clock past 2^64 ps;
//! - every duration in a spec is at most [`MAX_DURATION_MS`], so no single overhead, settle or
//!   seek can wrap a time on its own, and the bounds above have room for it.

/// A simulated instant or duration, in nanoseconds.
pub type SimTime = u64;

/// Nanoseconds per millisecond.
pub const NS_PER_MS: f64 = 1_000_000.0;

/// Nanoseconds in one simulated day.
pub const NS_PER_DAY: SimTime = 86_400 * 1_000_000_000;

/// Latest instant at which a drive with its cache on may start a request: 100 simulated days.
/// The buffer model counts `u64` picoseconds, which wrap at about 213.5 days; the rest is headroom
/// for the request's own service and the background work it waits for.
pub const CACHED_TIME_LIMIT: SimTime = 100 * NS_PER_DAY;

/// Largest duration any spec field may hold, ms (one minute). Real overheads, settles and seeks
/// are milliseconds; the cap keeps each one far from wrapping the picosecond arithmetic.
pub const MAX_DURATION_MS: f64 = 60_000.0;

/// Converts milliseconds (as written in spec files) to nanoseconds, rounding to nearest.
///
/// Meant for validated, finite, non-negative values: a negative or NaN input gives 0 and one
/// beyond `u64::MAX` ns gives `u64::MAX`. Use [`checked_ms_to_ns`] for values not yet checked.
#[must_use]
pub fn ms_to_ns(ms: f64) -> SimTime {
    (ms * NS_PER_MS).round().max(0.0) as SimTime
}

/// Converts milliseconds to nanoseconds, or `None` when `ms` is negative, NaN, or too large for a
/// [`SimTime`].
#[must_use]
pub fn checked_ms_to_ns(ms: f64) -> Option<SimTime> {
    let ns = (ms * NS_PER_MS).round();
    // 2^64 as f64 is exact; anything at or above it does not fit.
    (0.0..18_446_744_073_709_551_616.0).contains(&ns).then_some(ns as SimTime)
}

/// Converts nanoseconds to milliseconds (for reports).
#[must_use]
pub fn ns_to_ms(ns: SimTime) -> f64 {
    ns as f64 / NS_PER_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_conversion_refuses_what_does_not_fit() {
        assert_eq!(checked_ms_to_ns(1.5), Some(1_500_000));
        assert_eq!(checked_ms_to_ns(0.0), Some(0));
        assert_eq!(checked_ms_to_ns(-1.0), None);
        assert_eq!(checked_ms_to_ns(f64::NAN), None);
        assert_eq!(checked_ms_to_ns(f64::INFINITY), None);
        assert_eq!(checked_ms_to_ns(1e308), None);
        // 2^64 ns is 18_446_744_073_709.551616 ms: just below fits, just above does not.
        assert!(checked_ms_to_ns(18_446_744_073_709.0).is_some());
        assert_eq!(checked_ms_to_ns(18_446_744_073_710.0), None);
    }

    #[test]
    fn the_cached_limit_leaves_headroom_in_picoseconds() {
        let limit_ps = u128::from(CACHED_TIME_LIMIT) * 1000;
        assert!(limit_ps * 2 < u128::from(u64::MAX), "headroom {limit_ps}");
    }
}
