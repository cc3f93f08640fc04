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
//! | its weights, all 0 or 1   | a bitmap slot, one bit a sector         | when the slot is (re)filled     |
//! | its weights, some heavier | a wide slot, a `u16` a sector, unscaled | when the slot is (re)filled     |
//! | which tracks went stale   | [`BackgroundSets::changes_since`]       | read before every use           |
//! | the balance scale         | applied on the way out                  | each copy                       |
//!
//! The weights are exactly what [`BackgroundSets::mark_wanted`] gives for the pass: it adds one
//! saturating increment per task (and per urgent mark) and every increment is scaled alike, so
//! scaling the unscaled sum afterwards and saturating once is the same number. The cache changes
//! no plan, only how fast it is found.
//!
//! ## Run heads
//!
//! With a *run-head bonus* (`multi_track`; see the planner's module doc, "One pass"), the first
//! sector of every run of wanted sectors on the track (wanted, with the sector before it in
//! rotation order not wanted, round the track's end) weighs `bonus` more before scaling:
//!
//! ```text
//!   slot bits         0 1 1 1 0 0 1 1 0 1          a full track is one run with no head
//!   run heads         . ^ . . . . ^ . . ^
//!   pass weights      0 (1+b) 1 1 0 0 (1+b) 1 0 (1+b)    × the balance scale, saturating
//! ```
//!
//! A plan that enters a run at its head takes it whole and is worth `bonus` more than one that
//! enters after it and leaves a sliver behind. The heads come from the kept bits word by word
//! (a bit set whose lower neighbour is clear), so they cost no memory and stay exact as the
//! track changes.
//!
//! It keeps nothing per track of the disk. A slot is found from the track's number, and a slot
//! whose track changed is emptied from the sets' change log (the tracks touched since the last
//! decision, a few per decision). A reader that missed more than the log holds (a whole-disk
//! registration) empties every slot. Its memory is capped ([`MAX_BYTES`]).

use freeblock_disk::Layout;

use crate::freeblock::sets::BackgroundSets;

/// Most bytes of kept weights, in all. A one-pass scan's tracks weigh 0 or 1 per sector and are
/// kept as bitmaps: the Atlas 10K's 60,000 tracks in 2.5 MB, 1.8 million sectors per MB. Heavier
/// tracks (urgent sectors, several tasks) keep a `u16` per sector. The cap keeps a 20 TB drive's
/// whole freeblock state within 32 MB (issue 35); the 11.4 million tracks of that drive could not
/// be kept whole in any reasonable memory, so a big drive keeps the tracks it weighed last.
pub(super) const MAX_BYTES: usize = 2 << 20;
/// Of which the bitmaps.
const BITMAP_BYTES: usize = MAX_BYTES / 2;

/// No track.
const NONE: u32 = u32::MAX;

/// Direct-mapped slots of `stride` values each: track `t` lives in slot `t % slots`.
#[derive(Debug, Clone)]
struct Pool<T> {
    slots: usize,
    stride: usize,
    /// Per slot: the track it holds ([`NONE`]: none) and its heaviest sector.
    owner: Vec<(u32, u16)>,
    /// Every slot's values (allocated on first use).
    data: Vec<T>,
}

impl<T: Copy + Default> Pool<T> {
    fn new(slots: usize, stride: usize) -> Self {
        Self { slots: slots.max(1), stride: stride.max(1), owner: Vec::new(), data: Vec::new() }
    }

    /// Slots that fit `bytes`, at most one per track.
    fn fitting(bytes: usize, stride: usize, tracks: usize) -> Self {
        Self::new((bytes / (stride.max(1) * std::mem::size_of::<T>())).clamp(1, tracks.max(1)), stride)
    }

    fn find(&self, track: u32) -> Option<usize> {
        let slot = track as usize % self.slots;
        self.owner.get(slot).is_some_and(|o| o.0 == track).then_some(slot)
    }

    fn forget(&mut self, track: u32) {
        if let Some(o) = self.owner.get_mut(track as usize % self.slots) {
            if o.0 == track {
                o.0 = NONE;
            }
        }
    }

    fn forget_all(&mut self) {
        self.owner.iter_mut().for_each(|o| o.0 = NONE);
    }

    /// The slot of `track`, given to it (whatever track held it before goes), cleared.
    fn claim(&mut self, track: u32, heaviest: u16) -> &mut [T] {
        if self.owner.is_empty() {
            self.owner = vec![(NONE, 0); self.slots];
            self.data = vec![T::default(); self.slots * self.stride];
        }
        let slot = track as usize % self.slots;
        self.owner[slot] = (track, heaviest);
        let v = &mut self.data[slot * self.stride..(slot + 1) * self.stride];
        v.fill(T::default());
        v
    }

    fn values(&self, slot: usize) -> &[T] {
        &self.data[slot * self.stride..(slot + 1) * self.stride]
    }
}

/// A kept track's weights.
enum Kept<'a> {
    /// Every sector weighs 0 or 1: bit `i` of the words is sector `i`.
    Bits(&'a [u64]),
    /// Each sector's weight, and the heaviest.
    Wide(&'a [u16], u16),
}

/// Wanted sectors among bits `lo..hi` of `words`.
fn ones(words: &[u64], lo: usize, hi: usize) -> u64 {
    ones_of(|k| words[k], lo, hi)
}

/// Set bits among bits `lo..hi` of the words `word(0)`, `word(1)`, ….
#[inline]
fn ones_of(word: impl Fn(usize) -> u64, lo: usize, hi: usize) -> u64 {
    if lo >= hi {
        return 0;
    }
    let (wl, wh) = (lo / 64, (hi - 1) / 64);
    let low_mask = !0u64 << (lo % 64);
    let high_mask = !0u64 >> (63 - (hi - 1) % 64);
    if wl == wh {
        return u64::from((word(wl) & low_mask & high_mask).count_ones());
    }
    let inner: u32 = (wl + 1..wh).map(|k| word(k).count_ones()).sum();
    u64::from((word(wl) & low_mask).count_ones() + inner + (word(wh) & high_mask).count_ones())
}

/// Word `k` of the run heads of a track of `spt` sectors kept as bits `words`: the wanted sectors
/// whose predecessor round the track is not wanted.
#[inline]
fn run_heads(words: &[u64], spt: usize, k: usize) -> u64 {
    let before = if k == 0 { (words[(spt - 1) / 64] >> ((spt - 1) % 64)) & 1 } else { words[k - 1] >> 63 };
    words[k] & !((words[k] << 1) | before)
}

/// Sets `out[at + i - lo]` to `value` for every run head `i` in `lo..hi`.
fn mark_heads(words: &[u64], spt: usize, lo: usize, hi: usize, value: u16, out: &mut [u16], at: usize) {
    if lo >= hi {
        return;
    }
    for k in lo / 64..=(hi - 1) / 64 {
        let mut m = run_heads(words, spt, k);
        while m != 0 {
            let i = k * 64 + m.trailing_zeros() as usize;
            m &= m - 1;
            if (lo..hi).contains(&i) {
                out[at + i - lo] = value;
            }
        }
    }
}

/// What a sector of weight `x` weighs, times `scale` and saturated, when it is a run head (`head`)
/// and heads weigh `bonus` more.
#[inline]
fn scaled(x: u16, head: bool, bonus: u16, scale: u16) -> u16 {
    let x = u32::from(x) + if head { u32::from(bonus) } else { 0 };
    (x * u32::from(scale)).min(u32::from(u16::MAX)) as u16
}

/// Appends bits `lo..hi` of `words`, each as 0 or `scale`, to `out`.
fn expand(words: &[u64], lo: usize, hi: usize, scale: u16, out: &mut Vec<u16>) {
    let mut i = lo;
    while i < hi {
        let (word, from) = (words[i / 64] >> (i % 64), i % 64);
        let n = (64 - from).min(hi - i);
        out.extend((0..n).map(|j| ((word >> j) & 1) as u16 * scale));
        i += n;
    }
}

/// Per-track sector weights for the tracks the planner has weighed.
#[derive(Debug, Clone)]
pub(super) struct TrackWeights {
    surfaces: u32,
    /// Tracks whose sectors weigh 0 or 1, one bit a sector.
    bits: Pool<u64>,
    /// The other tracks, a `u16` a sector.
    wide: Pool<u16>,
    /// [`BackgroundSets::changes`] when the kept weights were last brought up to date.
    seen: u64,
    /// Scratch for the track's LBN pieces and its weights as they are weighed.
    pieces: Vec<(std::ops::Range<u64>, u32)>,
    scratch: Vec<u16>,
    /// What a run head weighs more than its wanted weight, before scaling (0: nothing).
    head_bonus: u16,
}

impl TrackWeights {
    /// An empty cache for the tracks of `layout`; `max_spt` is its most sectors per track; run
    /// heads weigh `head_bonus` more.
    pub(super) fn new(layout: &Layout, max_spt: u32, head_bonus: u16) -> Self {
        let tracks = layout.cylinders() as usize * layout.surfaces() as usize;
        let max_spt = (max_spt as usize).max(1);
        Self {
            surfaces: layout.surfaces(),
            bits: Pool::fitting(BITMAP_BYTES, max_spt.div_ceil(64), tracks),
            wide: Pool::fitting(MAX_BYTES - BITMAP_BYTES, max_spt, tracks),
            seen: 0,
            pieces: Vec::new(),
            scratch: Vec::new(),
            head_bonus,
        }
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
                    self.bits.forget(t);
                    self.wide.forget(t);
                }
            }
            None => {
                self.bits.forget_all();
                self.wide.forget_all();
            }
        }
        self.seen = sets.changes();
    }

    /// The unscaled weights of every sector of track `(c, s)` (`spt` sectors), weighed again if
    /// the track changed since it was last weighed.
    fn track(&mut self, sets: &BackgroundSets, c: u32, s: u32, spt: u32) -> Kept<'_> {
        self.catch_up(sets);
        let track = c * self.surfaces + s;
        if let Some(slot) = self.bits.find(track) {
            return Kept::Bits(self.bits.values(slot));
        }
        if let Some(slot) = self.wide.find(track) {
            return Kept::Wide(&self.wide.values(slot)[..spt as usize], self.wide.owner[slot].1);
        }
        let w = &mut self.scratch;
        w.clear();
        w.resize(spt as usize, 0);
        self.pieces.clear();
        sets.disk().layout().arc_lbns(c, s, 0, spt, &mut self.pieces);
        sets.mark_wanted(&self.pieces, w, 1);
        let heaviest = w.iter().copied().max().unwrap_or(0);
        if heaviest <= 1 {
            let words = self.bits.claim(track, heaviest);
            for (i, &x) in w.iter().enumerate() {
                words[i / 64] |= u64::from(x) << (i % 64);
            }
            Kept::Bits(words)
        } else {
            let kept = self.wide.claim(track, heaviest);
            kept[..w.len()].copy_from_slice(w);
            Kept::Wide(&kept[..w.len()], heaviest)
        }
    }

    /// The total weight of `count` sectors of track `(c, s)` from sector `first` on (wrapping
    /// round the track), each times `scale` and saturated as [`TrackWeights::copy_pass`] copies
    /// them: what a pass holds when its sectors one by one are not needed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pass_total(&mut self, sets: &BackgroundSets, c: u32, s: u32, spt: u32, first: u32, count: u32, scale: u16) -> u64 {
        let (first, count) = (first as usize, (count as usize).min(spt as usize));
        let head = count.min(spt as usize - first);
        let bonus = self.head_bonus;
        let n = spt as usize;
        match self.track(sets, c, s, spt) {
            // A weight of one times a `u16` scale never saturates.
            Kept::Bits(words) => {
                let wanted = ones(words, first, first + head) + ones(words, 0, count - head);
                if bonus == 0 {
                    return wanted * u64::from(scale);
                }
                let heads_of = |k| run_heads(words, n, k);
                let heads = ones_of(heads_of, first, first + head) + ones_of(heads_of, 0, count - head);
                (wanted - heads) * u64::from(scale) + heads * u64::from(scaled(1, true, bonus, scale))
            }
            Kept::Wide(full, heaviest) => {
                let (a, b) = (&full[first..first + head], &full[..count - head]);
                let sum = |w: &[u16]| w.iter().map(|&x| u64::from(x)).sum::<u64>();
                if bonus > 0 {
                    (first..first + count).map(|i| i % n).map(|i| u64::from(scaled(full[i], full[i] > 0 && full[(i + n - 1) % n] == 0, bonus, scale))).sum()
                } else if u32::from(heaviest) * u32::from(scale) <= u32::from(u16::MAX) {
                    // Nothing saturates: scale the sum once.
                    (sum(a) + sum(b)) * u64::from(scale)
                } else {
                    a.iter().chain(b).map(|&x| u64::from(scaled(x, false, 0, scale))).sum()
                }
            }
        }
    }

    /// Copies the weights of `count` sectors of track `(c, s)` from sector `first` on (wrapping
    /// round the track) into `out`, each times `scale`, saturating as
    /// [`BackgroundSets::mark_wanted`] does; returns their sum.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn copy_pass(&mut self, sets: &BackgroundSets, c: u32, s: u32, spt: u32, first: u32, count: u32, scale: u16, out: &mut Vec<u16>) -> u64 {
        let (first, count) = (first as usize, (count as usize).min(spt as usize));
        let head = count.min(spt as usize - first);
        let bonus = self.head_bonus;
        let n = spt as usize;
        out.clear();
        match self.track(sets, c, s, spt) {
            Kept::Bits(words) => {
                expand(words, first, first + head, scale, out);
                expand(words, 0, count - head, scale, out);
                let wanted = ones(words, first, first + head) + ones(words, 0, count - head);
                if bonus == 0 {
                    return wanted * u64::from(scale);
                }
                let value = scaled(1, true, bonus, scale);
                mark_heads(words, n, first, first + head, value, out, 0);
                mark_heads(words, n, 0, count - head, value, out, head);
                let heads_of = |k| run_heads(words, n, k);
                let heads = ones_of(heads_of, first, first + head) + ones_of(heads_of, 0, count - head);
                (wanted - heads) * u64::from(scale) + heads * u64::from(value)
            }
            Kept::Wide(full, heaviest) => {
                let (a, b) = (&full[first..first + head], &full[..count - head]);
                let saturates = u32::from(heaviest) * u32::from(scale) > u32::from(u16::MAX);
                if bonus > 0 {
                    out.extend((first..first + count).map(|i| i % n).map(|i| scaled(full[i], full[i] > 0 && full[(i + n - 1) % n] == 0, bonus, scale)));
                    return out.iter().map(|&x| u64::from(x)).sum();
                }
                for part in [a, b] {
                    if saturates {
                        out.extend(part.iter().map(|&x| scaled(x, false, 0, scale)));
                    } else {
                        // A plain product, which vectorises.
                        out.extend(part.iter().map(|&x| x * scale));
                    }
                }
                out.iter().map(|&x| u64::from(x)).sum()
            }
        }
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

    /// [`fresh`] with every run head (round the whole track) weighing `bonus` more before scaling.
    fn fresh_headed(sets: &BackgroundSets, c: u32, s: u32, first: u32, count: u32, scale: u16, bonus: u16) -> Vec<u16> {
        let spt = sets.disk().layout().sectors_per_track(c) as usize;
        let full = fresh(sets, c, s, 0, spt as u32, 1);
        (first as usize..(first + count) as usize)
            .map(|i| i % spt)
            .map(|i| {
                let head = full[i] > 0 && full[(i + spt - 1) % spt] == 0;
                ((u32::from(full[i]) + if head { u32::from(bonus) } else { 0 }) * u32::from(scale)).min(u32::from(u16::MAX)) as u16
            })
            .collect()
    }

    /// Run heads are the set bits whose predecessor round the track is clear, across word
    /// boundaries and the track's end; a full track has none.
    #[test]
    fn run_heads_are_the_first_sectors_of_runs_round_the_track() {
        let spt = 130;
        for words in [[0xF0F0_1234_8000_0001u64, 0xFFFF_0000_0F0F_AAAA, 0x3], [!0, !0, 0x3], [0x1, 0, 0x2]] {
            let bit = |i: usize| (words[i / 64] >> (i % 64)) & 1 == 1;
            let walked: Vec<usize> = (0..spt).filter(|&i| bit(i) && !bit((i + spt - 1) % spt)).collect();
            let found: Vec<usize> = (0..3).flat_map(|k| (0..64).filter(move |b| (run_heads(&words, spt, k) >> b) & 1 == 1).map(move |b| k * 64 + b)).collect();
            assert_eq!(found, walked, "{words:x?}");
            let mut out = vec![0u16; spt];
            mark_heads(&words, spt, 5, 125, 9, &mut out, 0);
            let marked: Vec<usize> = (0..spt).filter(|&i| out[i] == 9).map(|i| i + 5).collect();
            assert_eq!(marked, walked.iter().copied().filter(|i| (5..125).contains(i)).collect::<Vec<_>>());
        }
        // A track with every sector wanted is one run round the track: no head.
        assert_eq!((0..3).map(|k| run_heads(&[!0, !0, 0x3], spt, k)).fold(0, |a, m| a | m), 0);
    }

    /// Counting the bits of a range word by word matches counting them one at a time.
    #[test]
    fn ones_counts_every_range() {
        let words = [0xF0F0_1234_8000_0001u64, 0xFFFF_0000_0F0F_AAAA, 0x1];
        let bit = |i: usize| (words[i / 64] >> (i % 64)) & 1;
        for lo in 0..=129 {
            for hi in lo..=129 {
                assert_eq!(ones(&words, lo, hi), (lo..hi).map(bit).sum::<u64>(), "{lo}..{hi}");
            }
        }
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
        let mut big = TrackWeights::new(layout, max_spt, 0);
        let mut small = TrackWeights::new(layout, max_spt, 0);
        small.bits = Pool::new(3, (max_spt as usize).div_ceil(64));
        small.wide = Pool::new(3, max_spt as usize);
        // With run heads weighing more (a bonus that saturates at the largest scales too).
        let mut headed = TrackWeights::new(layout, max_spt, 16);
        let mut headed_small = TrackWeights::new(layout, max_spt, 16);
        headed_small.bits = Pool::new(3, (max_spt as usize).div_ceil(64));
        headed_small.wide = Pool::new(3, max_spt as usize);
        let mut heads_weighed = 0;
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
                let plain = fresh(&sets, c, s, first, count, scale);
                let with_heads = fresh_headed(&sets, c, s, first, count, scale, 16);
                for (want, caches) in [(&plain, [&mut big, &mut small]), (&with_heads, [&mut headed, &mut headed_small])] {
                    let want_sum = want.iter().map(|&x| u64::from(x)).sum::<u64>();
                    for cache in caches {
                        let sum = cache.copy_pass(&sets, c, s, spt, first, count, scale, &mut out);
                        assert_eq!(&out, want, "step {step}, track ({c}, {s}), sectors {first}+{count}, scale {scale}, head bonus {}", cache.head_bonus);
                        assert_eq!(sum, want_sum);
                        assert_eq!(cache.pass_total(&sets, c, s, spt, first, count, scale), want_sum);
                    }
                }
                heads_weighed += usize::from(with_heads != plain);
                compared += usize::from(plain.iter().any(|&x| x > 0));
            }
        }
        // The passes were not all empty.
        assert!(compared > 300, "only {compared} passes held wanted sectors");
        // And many held a run head.
        assert!(heads_weighed > 200, "only {heads_weighed} passes held a run head");
    }
}
