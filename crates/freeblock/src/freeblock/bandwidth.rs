//! Two bandwidth figures every user of freeblock scheduling reports against: the disk's media
//! bandwidth (the yardstick of "free bandwidth as a share of the disk's") and the steady state of
//! a repeated scan (how much of the potential ends up in *complete* passes).
//!
//! ```text
//!  media_mb_s   = capacity bytes ÷ (tracks × one revolution)      every track read in one turn
//!  steady share = pass bytes ÷ interval between pass ends ÷ potential MB/s
//! ```
//!
//! A repeated scan with overlapping passes keeps an *inventory*: the blocks read for passes still
//! under way, which no pass end has counted yet. It starts empty and fills while the scan starts
//! more passes (up to its `passes_in_flight`); while it fills, the pass ends lag the reading, and
//! a steady share counted from the first pass end can understate what the scan keeps up once it
//! is full. [`settled_steady_state`] therefore counts only the pass ends after the passes in
//! flight reached their cap, and reports the inventory at both ends of that span, so that a
//! reader sees whether it was still moving:
//!
//! ```text
//!  passes under way  1 2 3 … cap ───────────────────────────────────────►
//!  inventory         ▁▂▃▄▅▆▇ filling        ▇▆▇▆▇▆ settled (what the oldest pass's end frees
//!                                                           the newest pass takes up)
//!  pass ends                    │  │   │  ↑ first end with `cap` under way   │ … │  last end
//!  steady_state                 ├──────────── counted ───────────────────────────┤
//!  settled_steady_state                   ├────────── counted ───────────────────┤
//! ```
//!
//! | figure | counts | over |
//! |---|---|---|
//! | [`steady_state`] | complete passes | the first to the last pass end |
//! | [`settled_steady_state`] `share` | complete passes | the first pass end after the cap was reached to the last |
//! | [`settled_steady_state`] `with_inventory_share` | complete passes plus the change of inventory (every block read for a pass) | the same span |
//!
//! Measured (`freeblock bench`, docs/freeblock.md "Scale"): a whole-disk scan of the Atlas 10K
//! under OLTP with 8 passes in flight reaches its cap before its first pass ends, and its
//! inventory stays at 6.8–6.9 passes from the first pass end to the last, over 60,000 simulated
//! seconds: both figures count the same span, and it is a steady state.

use freeblock_disk::{Disk, SimTime};
use serde::{Deserialize, Serialize};

use super::{PassRecord, ProgressPoint};

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

/// Passes under way at `time_ns` (those that have not ended and have recorded progress) and
/// their summed progress, in passes: the scan's inventory, to the whole percent its progress
/// records.
#[must_use]
pub fn inventory_at(passes: &[PassRecord], progress: &[ProgressPoint], time_ns: SimTime) -> (usize, f64) {
    let ended = passes.iter().filter(|p| p.end_ns <= time_ns).count();
    let mut latest: std::collections::BTreeMap<u32, f64> = std::collections::BTreeMap::new();
    for p in progress.iter().filter(|p| p.time_ns <= time_ns && p.pass as usize >= ended) {
        let f = latest.entry(p.pass).or_insert(0.0);
        *f = f.max(p.fraction);
    }
    (latest.len(), latest.values().sum())
}

/// The steady state of a repeated scan once its passes in flight have filled up (see the module
/// docs): the pass ends counted start at the first one by which `passes_in_flight` passes had
/// started.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SettledSteadyState {
    /// Passes completed in the run.
    pub passes: usize,
    /// The pass (0-based) whose end starts the counted span (`None`: the passes in flight never
    /// reached their cap before a pass ended).
    pub from_pass: Option<usize>,
    /// Pass ends in the span after its first.
    pub counted: usize,
    /// Mean time between those pass ends, s (`None` when none was counted).
    pub interval_s: Option<f64>,
    /// A pass's bytes per interval ÷ potential: the share of the potential that ended up in
    /// complete passes over the span.
    pub share: Option<f64>,
    /// The inventory (passes' worth of blocks read for passes under way, [`inventory_at`]) at the
    /// span's first and last pass end.
    pub inventory: Option<(f64, f64)>,
    /// Every block read for a pass over the span (its complete passes plus the change of
    /// inventory) per second ÷ potential. Equal to `share` when the inventory did not move.
    pub with_inventory_share: Option<f64>,
    /// Mean time from a pass's start to its end, s, of the passes ending in the span.
    pub mean_pass_s: Option<f64>,
}

/// The steady state of a repeated scan with at most `passes_in_flight` passes under way (1: one
/// at a time), `pass_bytes` a pass, from its completed passes and its progress.
#[must_use]
pub fn settled_steady_state(passes: &[PassRecord], progress: &[ProgressPoint], passes_in_flight: u32, pass_bytes: f64, potential_mb_s: f64) -> SettledSteadyState {
    // When pass `k + cap - 1` started (its record once it ended, else its first 1%): the cap was
    // reached by then.
    let started = |k: usize| passes.get(k).map(|p| p.start_ns).or_else(|| progress.iter().filter(|p| p.pass as usize == k).map(|p| p.time_ns).min());
    let cap = passes_in_flight.max(1) as usize;
    let from_pass = passes.iter().enumerate().position(|(k, p)| started(k + cap - 1).is_some_and(|s| s <= p.end_ns));
    let span = from_pass.map_or(&[][..], |k| &passes[k..]);
    let counted = span.len().saturating_sub(1);
    let (mut interval_s, mut share, mut inventory, mut with_inventory_share, mut mean_pass_s) = (None, None, None, None, None);
    if let ([first, .., last], true) = (span, counted > 0) {
        let seconds = (last.end_ns - first.end_ns) as f64 / 1e9;
        interval_s = Some(seconds / counted as f64);
        share = share_of_potential(pass_bytes * counted as f64, seconds, potential_mb_s);
        let (a, b) = (inventory_at(passes, progress, first.end_ns).1, inventory_at(passes, progress, last.end_ns).1);
        inventory = Some((a, b));
        with_inventory_share = share_of_potential(pass_bytes * (counted as f64 + b - a), seconds, potential_mb_s);
        mean_pass_s = Some(span[1..].iter().map(|p| (p.end_ns - p.start_ns) as f64 / 1e9).sum::<f64>() / counted as f64);
    }
    SettledSteadyState { passes: passes.len(), from_pass, counted, interval_s, share, inventory, with_inventory_share, mean_pass_s }
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
    fn settled_steady_state_starts_once_the_passes_in_flight_are_full_and_reports_the_inventory() {
        let s = |x: u64| x * 1_000_000_000;
        let pass = |start: u64, end: u64| PassRecord { start_ns: s(start), end_ns: s(end), blocks: 10 };
        let at = |pass: u32, time: u64, fraction: f64| ProgressPoint { pass, time_ns: s(time), fraction };
        // Three in flight at most: pass 2 starts at 150 s, after pass 0 ended (100 s), and pass
        // 3 at 300 s, when pass 1 ends: the cap is first full at pass 1's end.
        let passes = [pass(0, 100), pass(50, 300), pass(150, 500), pass(300, 700)];
        let progress = [at(0, 100, 1.0), at(1, 300, 1.0), at(2, 200, 0.3), at(2, 300, 0.4), at(2, 500, 1.0), at(3, 350, 0.01), at(3, 700, 1.0), at(4, 650, 0.2), at(5, 690, 0.05)];
        // Pass 1's own end is not inventory; pass 3 has no percent yet at 300 s.
        assert_eq!(inventory_at(&passes, &progress, s(300)), (1, 0.4));
        let (open, inv) = inventory_at(&passes, &progress, s(700));
        assert!(open == 2 && (inv - 0.25).abs() < 1e-12, "{open} {inv}");
        let r = settled_steady_state(&passes, &progress, 3, 1e9, 10.0);
        // Ends at 300, 500 and 700 s: one every 200 s, 1000 MB each at 10 MB/s potential.
        assert_eq!((r.passes, r.from_pass, r.counted, r.interval_s), (4, Some(1), 2, Some(200.0)));
        assert!((r.share.unwrap() - 0.5).abs() < 1e-12);
        // The inventory fell from 0.4 to 0.25 passes: 1.85 passes read in 400 s.
        assert_eq!(r.inventory, Some((0.4, 0.25)));
        assert!((r.with_inventory_share.unwrap() - 0.4625).abs() < 1e-12, "{r:?}");
        assert!((r.mean_pass_s.unwrap() - 375.0).abs() < 1e-9);
        // The whole run counts from the first end: 3 intervals in 600 s.
        assert!((steady_state(&passes, 1e9, 10.0).share.unwrap() - 0.5).abs() < 1e-12);
        // One pass at a time counts from the first end; a cap never reached counts nothing.
        assert_eq!(settled_steady_state(&passes, &progress, 1, 1e9, 10.0).from_pass, Some(0));
        let never = settled_steady_state(&passes, &progress, 8, 1e9, 10.0);
        assert_eq!((never.from_pass, never.counted, never.share, never.inventory), (None, 0, None, None));
    }

    #[test]
    fn media_bandwidth_of_the_atlas_is_near_the_papers() {
        let disk = Disk::new(library::get("atlas10k").unwrap().without_cache()).unwrap();
        let mb_s = media_mb_s(&disk);
        assert!(mb_s > 18.0 && mb_s < 30.0, "{mb_s}");
    }
}
