//! Two bandwidth figures every user of freeblock scheduling reports against: the disk's media
//! bandwidth (the yardstick of "free bandwidth as a share of the disk's") and the steady state of
//! a repeated scan (how much of the potential ends up in *complete* passes).
//!
//! ```text
//!  media_mb_s   = capacity bytes ÷ (tracks × one revolution)      every track read in one turn
//!  steady share = pass bytes ÷ interval between pass ends ÷ potential MB/s
//! ```

use freeblock_disk::Disk;
use serde::{Deserialize, Serialize};

use super::PassRecord;

/// The disk's media bandwidth averaged over its capacity (every track read in one revolution,
/// no switches), MB/s.
#[must_use]
pub fn media_mb_s(disk: &Disk) -> f64 {
    let bytes = disk.capacity() as f64 * f64::from(disk.spec().sector_bytes);
    let tracks = f64::from(disk.layout().cylinders()) * f64::from(disk.layout().surfaces());
    bytes / (tracks * disk.revolution_ps() as f64 * 1e-12) / 1e6
}

/// The steady state of a repeated scan: how often a whole pass ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// Passes completed in the run.
    pub passes: usize,
    /// Mean time between the ends of consecutive passes, s (`None` with fewer than two).
    pub interval_s: Option<f64>,
    /// Bytes of a pass per interval ÷ potential free bandwidth: the share of the potential that
    /// ends up in complete passes (blocks read for passes still under way do not count).
    pub share: Option<f64>,
    /// Mean time from a pass's start to its end, s.
    pub mean_pass_s: Option<f64>,
}

/// `pass_bytes` read every `seconds` as a share of `potential_mb_s` (`None` without time or
/// potential).
#[must_use]
pub fn share_of_potential(pass_bytes: f64, seconds: f64, potential_mb_s: f64) -> Option<f64> {
    (seconds > 0.0 && potential_mb_s > 0.0).then(|| pass_bytes / 1e6 / seconds / potential_mb_s)
}

/// The steady state of a repeated scan from its completed passes (`pass_bytes` each).
#[must_use]
pub fn steady_state(passes: &[PassRecord], pass_bytes: f64, potential_mb_s: f64) -> SteadyState {
    let interval_s = match passes {
        [first, .., last] => Some((last.end_ns - first.end_ns) as f64 / 1e9 / (passes.len() - 1) as f64),
        _ => None,
    };
    let share = interval_s.and_then(|i| share_of_potential(pass_bytes, i, potential_mb_s));
    let mean_pass_s = (!passes.is_empty()).then(|| passes.iter().map(|p| (p.end_ns - p.start_ns) as f64 / 1e9).sum::<f64>() / passes.len() as f64);
    SteadyState { passes: passes.len(), interval_s, share, mean_pass_s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use freeblock_disk::library;

    #[test]
    fn steady_state_counts_only_complete_passes() {
        let pass = |start_s: u64, end_s: u64| PassRecord { start_ns: start_s * 1_000_000_000, end_ns: end_s * 1_000_000_000, blocks: 10 };
        // Passes end at 100, 300 and 500 s: one every 200 s; 1000 MB per pass at a potential of
        // 10 MB/s is half the potential.
        let s = steady_state(&[pass(0, 100), pass(50, 300), pass(100, 500)], 1e9, 10.0);
        assert_eq!((s.passes, s.interval_s), (3, Some(200.0)));
        assert!((s.share.unwrap() - 0.5).abs() < 1e-12);
        assert!((s.mean_pass_s.unwrap() - 250.0).abs() < 1e-9);
        // One pass has no interval, none has no mean either.
        let one = steady_state(&[pass(0, 100)], 1e9, 10.0);
        assert_eq!((one.interval_s, one.share), (None, None));
        assert_eq!(steady_state(&[], 1e9, 10.0).mean_pass_s, None);
    }

    #[test]
    fn media_bandwidth_of_the_atlas_is_near_the_papers() {
        let disk = Disk::new(library::get("atlas10k").unwrap().without_cache()).unwrap();
        let mb_s = media_mb_s(&disk);
        assert!(mb_s > 18.0 && mb_s < 30.0, "{mb_s}");
    }
}
