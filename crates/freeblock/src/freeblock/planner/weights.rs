//! The wanted weight of every sector of a track, kept between decisions.
//!
//! Each decision weighs the passes of tens to hundreds of tracks, and late in a scan nearly every
//! track holds some wanted sectors. Weighing a pass from the wanted sets means mapping its
//! sectors to LBNs and looking each task's range sets up. Yet a track's wanted sectors change
//! only when a transfer or a registration touches it: a few tracks per decision. So the planner
//! weighs a whole track once, keeps the weights by sector number, and copies any pass out of
//! them until the sets report a change to that track:
//!
//! ```text
//!   track (c, s)    sector:   0   1   2   3   4   5   6   7  …  spt−1
//!   slot weights            [ 0   1   1   0   4   4   0   1  …   0 ]   unscaled, summed over tasks
//!                                       └── a pass: first = 2, count = 5 ──┘  (wraps past spt−1)
//!   pass weights            = slot weights[2..7] × the cylinder's balance weight (saturating)
//! ```
//!
//! | what                      | where                                   | when it is refreshed            |
//! |---------------------------|-----------------------------------------|---------------------------------|
//! | a track's slot            | slot `track % slots` (direct-mapped)    | on use; the track there goes    |
//! | the slot's weights        | `weights[slot × max_spt ..]`, unscaled  | when the slot is (re)filled     |
//! | which tracks went stale   | [`BackgroundSets::changes_since`]       | read before every use           |
//! | the balance scale         | applied on the way out                  | each copy                       |
//!
//! The weights are exactly what [`BackgroundSets::mark_wanted`] gives for the pass: it adds one
//! saturating increment per task (and per urgent mark) and every increment is scaled alike, so
//! scaling the unscaled sum afterwards and saturating once is the same number. The cache changes
//! no plan, only how fast it is found.
//!
//! It keeps nothing per track of the disk. A slot is found from the track's number, and a slot
//! whose track changed is emptied from the sets' change log (the tracks touched since the last
//! decision, a few per decision). A reader that missed more than the log holds (a whole-disk
//! registration) empties every slot. Its memory is capped ([`MAX_BYTES`]).

use freeblock_disk::Layout;

use crate::freeblock::sets::BackgroundSets;

/// Most bytes of weights kept. The Atlas 10K's 60,000 tracks need 40 MB to be kept whole; a
/// 20 TB drive's 11.4 million would need 100 GB, so a big drive keeps the tracks it weighed last.
pub(super) const MAX_BYTES: usize = 2 << 20;

/// No track.
const NONE: u32 = u32::MAX;

/// Per-track sector weights for the tracks the planner has weighed.
#[derive(Debug, Clone)]
pub(super) struct TrackWeights {
    surfaces: u32,
    /// Length of every slot: the most sectors any track has.
    max_spt: usize,
    /// Slots kept: track `t` lives in slot `t % slots` (a track pushes out the one there before).
    slots: usize,
    /// Per slot: the track it holds ([`NONE`]: none), and its heaviest sector (when that times
    /// the scale fits a `u16`, nothing saturates).
    owner: Vec<(u32, u16)>,
    /// Every slot's weights, `max_spt` apiece (allocated on first use).
    weights: Vec<u16>,
    /// [`BackgroundSets::changes`] when the kept weights were last brought up to date.
    seen: u64,
    /// Scratch for the track's LBN pieces.
    pieces: Vec<(std::ops::Range<u64>, u32)>,
}

impl TrackWeights {
    /// An empty cache for the tracks of `layout`; `max_spt` is its most sectors per track.
    pub(super) fn new(layout: &Layout, max_spt: u32) -> Self {
        let tracks = layout.cylinders() as usize * layout.surfaces() as usize;
        let max_spt = (max_spt as usize).max(1);
        Self::with_slots(layout.surfaces(), max_spt, (MAX_BYTES / (2 * max_spt)).clamp(1, tracks.max(1)))
    }

    fn with_slots(surfaces: u32, max_spt: usize, slots: usize) -> Self {
        Self { surfaces, max_spt, slots, owner: Vec::new(), weights: Vec::new(), seen: 0, pieces: Vec::new() }
    }

    /// Forgets the tracks whose wanted sectors changed since the last call (all of them when the
    /// sets' change log no longer reaches back that far).
    fn catch_up(&mut self, sets: &BackgroundSets) {
        if sets.changes() == self.seen {
            return;
        }
        match sets.changes_since(self.seen) {
            Some(changed) => {
                for t in changed {
                    if let Some(o) = self.owner.get_mut(t as usize % self.slots) {
                        if o.0 == t {
                            o.0 = NONE;
                        }
                    }
                }
            }
            None => self.owner.iter_mut().for_each(|o| o.0 = NONE),
        }
        self.seen = sets.changes();
    }

    /// The unscaled weight of every sector of track `(c, s)` (`spt` sectors), by sector number,
    /// weighed again if the track changed since it was last weighed; and the heaviest of them.
    pub(super) fn track(&mut self, sets: &BackgroundSets, c: u32, s: u32, spt: u32) -> (&[u16], u16) {
        self.catch_up(sets);
        if self.owner.is_empty() {
            self.owner = vec![(NONE, 0); self.slots];
            self.weights = vec![0; self.slots * self.max_spt];
        }
        let track = c * self.surfaces + s;
        let slot = track as usize % self.slots;
        let at = slot * self.max_spt;
        if self.owner[slot].0 == track {
            return (&self.weights[at..at + spt as usize], self.owner[slot].1);
        }
        let w = &mut self.weights[at..at + spt as usize];
        w.fill(0);
        self.pieces.clear();
        sets.disk().layout().arc_lbns(c, s, 0, spt, &mut self.pieces);
        sets.mark_wanted(&self.pieces, w, 1);
        let heaviest = w.iter().copied().max().unwrap_or(0);
        self.owner[slot] = (track, heaviest);
        (w, heaviest)
    }

    /// The total weight of `count` sectors of track `(c, s)` from sector `first` on (wrapping
    /// round the track), each times `scale` and saturated as [`TrackWeights::copy_pass`] copies
    /// them: what a pass holds when its sectors one by one are not needed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pass_total(&mut self, sets: &BackgroundSets, c: u32, s: u32, spt: u32, first: u32, count: u32, scale: u16) -> u64 {
        let (full, heaviest) = self.track(sets, c, s, spt);
        let (first, count) = (first as usize, (count as usize).min(full.len()));
        let head = count.min(full.len() - first);
        let (a, b) = (&full[first..first + head], &full[..count - head]);
        let sum = |w: &[u16]| w.iter().map(|&x| u64::from(x)).sum::<u64>();
        if u32::from(heaviest) * u32::from(scale) <= u32::from(u16::MAX) {
            // Nothing saturates: scale the sum once.
            (sum(a) + sum(b)) * u64::from(scale)
        } else {
            a.iter().chain(b).map(|&x| (u32::from(x) * u32::from(scale)).min(u32::from(u16::MAX)) as u64).sum()
        }
    }

    /// Copies the weights of `count` sectors of track `(c, s)` from sector `first` on (wrapping
    /// round the track) into `out`, each times `scale`, saturating as
    /// [`BackgroundSets::mark_wanted`] does; returns their sum.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn copy_pass(&mut self, sets: &BackgroundSets, c: u32, s: u32, spt: u32, first: u32, count: u32, scale: u16, out: &mut Vec<u16>) -> u64 {
        let (full, heaviest) = self.track(sets, c, s, spt);
        let (first, count) = (first as usize, (count as usize).min(full.len()));
        let head = count.min(full.len() - first);
        let (a, b) = (&full[first..first + head], &full[..count - head]);
        out.clear();
        let saturates = u32::from(heaviest) * u32::from(scale) > u32::from(u16::MAX);
        for part in [a, b] {
            if saturates {
                out.extend(part.iter().map(|&x| (u32::from(x) * u32::from(scale)).min(u32::from(u16::MAX)) as u16));
            } else {
                // A plain product, which vectorises.
                out.extend(part.iter().map(|&x| x * scale));
            }
        }
        out.iter().map(|&x| u64::from(x)).sum()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use freeblock_disk::{library, Op};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// What the range sets give for the pass, the slow way.
    fn fresh(sets: &BackgroundSets, c: u32, s: u32, first: u32, count: u32, scale: u16) -> Vec<u16> {
        let mut pieces = Vec::new();
        sets.disk().layout().arc_lbns(c, s, first, count, &mut pieces);
        let mut w = vec![0; count as usize];
        sets.mark_wanted(&pieces, &mut w, scale);
        w
    }

    /// Kept weights match the range sets after every kind of change (registrations, urgent
    /// marks, transfers, aborts), for passes that wrap, with balance scales, and with a cache too
    /// small to hold every track (slots reused).
    #[test]
    fn kept_weights_match_the_sets_after_every_change() {
        let disk = library::media("atlas10k").unwrap();
        let layout = disk.layout();
        let max_spt = layout.zone_table().iter().map(|z| z.2).max().unwrap();
        let mut sets = BackgroundSets::new(Arc::clone(&disk));
        let tasks = [sets.add_task(Op::Read, 4096).unwrap(), sets.add_task(Op::Read, 512).unwrap()];
        let mut big = TrackWeights::new(layout, max_spt);
        let mut small = TrackWeights::with_slots(layout.surfaces(), max_spt as usize, 3);
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        // A few cylinders, so the same tracks are weighed again after changes.
        let cylinders: Vec<u32> = (0..4).map(|_| rng.gen_range(0..layout.cylinders())).collect();
        let lbns_of = |c: u32| {
            let mut p = Vec::new();
            layout.arc_lbns(c, 0, 0, layout.sectors_per_track(c), &mut p);
            p[0].0.start
        };
        let mut out = Vec::new();
        let mut compared = 0;
        for step in 0..400 {
            let c = cylinders[rng.gen_range(0..cylinders.len())];
            let near = lbns_of(c) / 8 * 8;
            let task = tasks[rng.gen_range(0..2)];
            let lbn = near + rng.gen_range(0..2000) / 8 * 8;
            match step % 4 {
                0 => {
                    let _ = sets.register(task, lbn, rng.gen_range(1..40));
                }
                1 => {
                    let _ = sets.mark_urgent(task, lbn..lbn + rng.gen_range(1..200));
                }
                2 => {
                    sets.transferred(lbn..lbn + rng.gen_range(1..300), 0, crate::freeblock::Route::Free, None);
                }
                _ => {
                    let _ = sets.abort(task, lbn..lbn + rng.gen_range(1..100));
                }
            }
            // The per-cylinder summary the planner skips cylinders by stays the heaviest track's.
            for &c in &cylinders {
                let heaviest = (0..layout.surfaces()).map(|s| sets.track_wanted(c, s)).max().unwrap();
                assert_eq!(sets.cylinder_heaviest_track(c), heaviest, "step {step}, cylinder {c}");
            }
            for _ in 0..6 {
                let c = cylinders[rng.gen_range(0..cylinders.len())];
                let s = rng.gen_range(0..layout.surfaces());
                let spt = layout.sectors_per_track(c);
                let (first, count) = (rng.gen_range(0..spt), rng.gen_range(0..=spt));
                // The last one saturates: two tasks, urgent, weigh up to 8 × 9000.
                let scale = [1, 8, 64, 9000][rng.gen_range(0..4)];
                let want = fresh(&sets, c, s, first, count, scale);
                let want_sum = want.iter().map(|&x| u64::from(x)).sum::<u64>();
                for cache in [&mut big, &mut small] {
                    let sum = cache.copy_pass(&sets, c, s, spt, first, count, scale, &mut out);
                    assert_eq!(out, want, "step {step}, track ({c}, {s}), sectors {first}+{count}, scale {scale}");
                    assert_eq!(sum, want_sum);
                    assert_eq!(cache.pass_total(&sets, c, s, spt, first, count, scale), want_sum);
                }
                compared += usize::from(want.iter().any(|&x| x > 0));
            }
        }
        // The passes were not all empty.
        assert!(compared > 300, "only {compared} passes held wanted sectors");
    }
}
