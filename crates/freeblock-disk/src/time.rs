//! Simulated time.
//!
//! All simulated time is an integer count of **nanoseconds** ([`SimTime`]). Floating point appears
//! only at the edges (spec files in milliseconds, reports). Rotational positions are computed in
//! picoseconds internally (see [`crate::mech`]) so a revolution that is not a whole number of
//! nanoseconds does not drift.

/// A simulated instant or duration, in nanoseconds.
pub type SimTime = u64;

/// Nanoseconds per millisecond.
pub const NS_PER_MS: f64 = 1_000_000.0;

/// Converts milliseconds (as written in spec files) to nanoseconds, rounding to nearest.
#[must_use]
pub fn ms_to_ns(ms: f64) -> SimTime {
    (ms * NS_PER_MS).round().max(0.0) as SimTime
}

/// Converts nanoseconds to milliseconds (for reports).
#[must_use]
pub fn ns_to_ms(ns: SimTime) -> f64 {
    ns as f64 / NS_PER_MS
}
