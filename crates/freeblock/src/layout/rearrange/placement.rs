//! # Placement: which hot block goes in which slot of the reserved area
//!
//! Given the hot list (hottest first) and the reserved area's free slots grouped by cylinder
//! ([`ReservedArea::slot_grid`](super::area::ReservedArea::slot_grid)), a policy assigns each
//! chosen block a slot. The three policies of paper 002 §3.2, on the paper's Figure 3 setting
//! (three cylinders of four slots, file-system interleave 1, 50% rule; the hot list is ours, as
//! the figure itself is not in the text):
//!
//! ```text
//!  hot list (block:count): 10:100 40:90 12:70 25:60 42:50 44:40 46:35 14:30 70:20 71:15
//!
//!               cylinder 0        cylinder 1 (centre)   cylinder 2
//!  organ-pipe   70 71 ·  ·        10 40 12 25           42 44 46 14     hottest in the centre,
//!                                                                        then centre+1, centre−1
//!  interleaved  70 71 ·  ·        10 40 12 42           25 44 14 46     chains 10→12, 40→42 and
//!                                                                        44→46 keep the FS's gap
//!                                                                        of one slot
//!  serial       10 12 14 25       40 42 44 46           70 71 ·  ·      block-number order
//! ```
//!
//! | policy | order of blocks | order of slots | paper 002 §4.2.3 |
//! |---|---|---|---|
//! | [`Placement::OrganPipe`] | hottest first | centre cylinder, then centre+1, centre−1, centre+2, …; each filled in slot order | best seek and service times |
//! | [`Placement::Interleaved`] | hottest first, but each block followed by its *could-be successor* chain | organ-pipe cylinders; a successor goes `interleave` slots after its predecessor | close to organ-pipe; keeps rotational delays |
//! | [`Placement::Serial`] | ascending block number | cylinders outward to inward, slot order | worst: ignores frequency |
//!
//! **Could-be successor (interleaved).** The file system (FFS/UFS) lays a file's consecutive
//! blocks `interleave` blocks apart on the platter, so that the gap covers the time the host needs
//! between two requests. Block numbers here are positions of the blocks' *original* locations in
//! whole blocks, so block `b`'s could-be successor is block `b + 1 + interleave`. It is chained
//! after `b` when it is in the hot list, not yet placed, and its count is at least
//! `successor_ratio × count(b)` (the paper uses 50%, "selected arbitrarily"; this is its test of
//! "same file"). It goes `interleave` slots after `b` on the current cylinder (slot positions
//! `p` and `p + 1 + interleave`), or the first free slot after that; the chain stops when there
//! is no successor or the cylinder has no such slot, and placement resumes with the hottest block
//! not yet placed, in the first free slot of the current cylinder. Chains never cross cylinders.
//!
//! To apply the rule to physical locations exactly as the paper does, pass home *disk* blocks
//! ([`ReservedArea::home_block`](super::area::ReservedArea::home_block)) as block numbers and map
//! the result back; logical block numbers give the same chains except for the `1 + interleave`
//! pairs of blocks that straddle the hidden band.
//!
//! **How many.** Only as many blocks as there are free slots are placed: the hottest ones. A hot
//! list longer than that is an error ([`RearrangeError::HotListTooLarge`]) unless the caller asks
//! for [`Overflow::Truncate`]. The hot list is put in canonical order first (count descending,
//! block ascending), so its input order does not matter and every policy is deterministic.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::error::{RearrangeError, Result};

/// The paper's "close frequency" threshold for a could-be successor: at least 50% of the previous
/// block's count.
pub const PAPER_SUCCESSOR_RATIO: f64 = 0.5;

fn paper_ratio() -> f64 {
    PAPER_SUCCESSOR_RATIO
}

/// A placement policy, as written in experiment files (`placement = { type = "interleaved",
/// interleave = 1 }`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Placement {
    /// Hottest blocks on the centre cylinder, then alternating outward (the paper's default).
    #[default]
    OrganPipe,
    /// Organ-pipe order, keeping the file system's interleaved chains together.
    Interleaved {
        /// The file system's interleave factor in blocks (the gap between consecutive blocks of a
        /// file): 0 = contiguous, 1 = every other block.
        interleave: u64,
        /// A successor's count must be at least this fraction of its predecessor's (default 0.5).
        #[serde(default = "paper_ratio")]
        successor_ratio: f64,
    },
    /// Ascending original block numbers, slots in disk order.
    Serial,
}

/// What to do with a hot list longer than the free slots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    /// Refuse: [`RearrangeError::HotListTooLarge`].
    #[default]
    Error,
    /// Place the hottest blocks that fit and leave the rest.
    Truncate,
}

/// One block's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assignment {
    /// The block (as numbered in the hot list).
    pub block: u64,
    /// Its count in the hot list.
    pub count: u64,
    /// The slot (as numbered in the grid).
    pub slot: usize,
    /// Index of the slot's cylinder in the grid (0 = the band's first cylinder).
    pub cylinder: usize,
    /// Index of the slot within its cylinder's list.
    pub position: usize,
}

/// Cylinder indices `0..n` in organ-pipe order: the centre `(n − 1) / 2`, then centre+1,
/// centre−1, centre+2, … For `n = 5`: 2 3 1 4 0; for `n = 4`: 1 2 0 3.
#[must_use]
pub fn organ_pipe_order(n: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let c = (n - 1) / 2;
    let mut v = Vec::with_capacity(n);
    v.push(c);
    for d in 1..n {
        if c + d < n {
            v.push(c + d);
        }
        if d <= c {
            v.push(c - d);
        }
    }
    v
}

/// Assigns the hot blocks in `hot` (`(block, count)`, any order) to the slots of `grid` (one list
/// per cylinder in disk order, each listing slot ids in rotational order) by `policy`. Returns
/// the assignments in the order the policy made them.
///
/// # Errors
/// [`RearrangeError::DuplicateBlock`], [`RearrangeError::DuplicateSlot`],
/// [`RearrangeError::BadSuccessorRatio`], and [`RearrangeError::HotListTooLarge`] when `hot` has
/// more blocks than `grid` has slots and `overflow` is [`Overflow::Error`].
pub fn place(policy: Placement, hot: &[(u64, u64)], grid: &[Vec<usize>], overflow: Overflow) -> Result<Vec<Assignment>> {
    let mut seen = HashSet::with_capacity(hot.len());
    for &(b, _) in hot {
        if !seen.insert(b) {
            return Err(RearrangeError::DuplicateBlock { block: b });
        }
    }
    let mut seen = HashSet::new();
    for &s in grid.iter().flatten() {
        if !seen.insert(s) {
            return Err(RearrangeError::DuplicateSlot { slot: s });
        }
    }
    let slots = seen.len();
    if hot.len() > slots && overflow == Overflow::Error {
        return Err(RearrangeError::HotListTooLarge { hot: hot.len(), slots });
    }
    let mut chosen = hot.to_vec();
    chosen.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    chosen.truncate(slots);
    Ok(match policy {
        Placement::OrganPipe => fill(&chosen, grid, &organ_pipe_order(grid.len())),
        Placement::Serial => {
            chosen.sort_unstable_by_key(|x| x.0);
            fill(&chosen, grid, &(0..grid.len()).collect::<Vec<_>>())
        }
        Placement::Interleaved { interleave, successor_ratio } => {
            if !(successor_ratio.is_finite() && successor_ratio >= 0.0) {
                return Err(RearrangeError::BadSuccessorRatio { successor_ratio });
            }
            interleaved(&chosen, grid, interleave, successor_ratio)
        }
    })
}

/// `blocks` in order into the slots of the cylinders in `order`, each cylinder filled in turn.
fn fill(blocks: &[(u64, u64)], grid: &[Vec<usize>], order: &[usize]) -> Vec<Assignment> {
    let places = order.iter().flat_map(|&c| grid[c].iter().enumerate().map(move |(p, &slot)| (c, p, slot)));
    blocks
        .iter()
        .zip(places)
        .map(|(&(block, count), (cylinder, position, slot))| Assignment { block, count, slot, cylinder, position })
        .collect()
}

/// The interleaved policy over `chosen` (hot-list order, all of which fit).
fn interleaved(chosen: &[(u64, u64)], grid: &[Vec<usize>], interleave: u64, ratio: f64) -> Vec<Assignment> {
    let index: HashMap<u64, usize> = chosen.iter().enumerate().map(|(i, &(b, _))| (b, i)).collect();
    let mut placed = vec![false; chosen.len()];
    let mut taken: Vec<Vec<bool>> = grid.iter().map(|g| vec![false; g.len()]).collect();
    let mut free: Vec<usize> = grid.iter().map(Vec::len).collect();
    let order = organ_pipe_order(grid.len());
    // A successor goes `1 + interleave` positions after its predecessor; beyond usize it never fits.
    let step = usize::try_from(interleave).ok().and_then(|i| i.checked_add(1));
    let mut out = Vec::with_capacity(chosen.len());
    let (mut next, mut oi) = (0usize, 0usize);
    let mut put = |i: usize, c: usize, p: usize, placed: &mut Vec<bool>, taken: &mut Vec<Vec<bool>>, free: &mut Vec<usize>| {
        placed[i] = true;
        taken[c][p] = true;
        free[c] -= 1;
        out.push(Assignment { block: chosen[i].0, count: chosen[i].1, slot: grid[c][p], cylinder: c, position: p });
    };
    loop {
        while next < chosen.len() && placed[next] {
            next += 1;
        }
        while oi < order.len() && free[order[oi]] == 0 {
            oi += 1;
        }
        if next == chosen.len() || oi == order.len() {
            break;
        }
        let c = order[oi];
        let Some(mut pos) = taken[c].iter().position(|&t| !t) else { break };
        put(next, c, pos, &mut placed, &mut taken, &mut free);
        let mut prev = next;
        // Follow the chain of could-be successors along this cylinder.
        while let Some(s) = chosen[prev].0.checked_add(interleave).and_then(|b| b.checked_add(1)).and_then(|b| index.get(&b)) {
            let s = *s;
            if placed[s] || (chosen[s].1 as f64) < ratio * chosen[prev].1 as f64 {
                break;
            }
            let Some(target) = step.and_then(|st| pos.checked_add(st)) else { break };
            let Some(p) = (target..taken[c].len()).find(|&p| !taken[c][p]) else { break };
            put(s, c, p, &mut placed, &mut taken, &mut free);
            (prev, pos) = (s, p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `cylinders` cylinders of `per` slots, numbered in disk order.
    fn grid(cylinders: usize, per: usize) -> Vec<Vec<usize>> {
        (0..cylinders).map(|c| (c * per..(c + 1) * per).collect()).collect()
    }

    /// Block ids per cylinder, `None` for an empty slot.
    fn layout(a: &[Assignment], g: &[Vec<usize>]) -> Vec<Vec<Option<u64>>> {
        let mut v: Vec<Vec<Option<u64>>> = g.iter().map(|c| vec![None; c.len()]).collect();
        for x in a {
            assert_eq!(g[x.cylinder][x.position], x.slot);
            v[x.cylinder][x.position] = Some(x.block);
        }
        v
    }

    /// Paper 002 Fig. 3's setting: the reserved area has three cylinders of four blocks; the file
    /// system's interleave is one block; a successor is "close" at ≥ 50% of its predecessor's
    /// count. The figure's block list is not in the text, so this one is ours, built to show each
    /// rule: 10→12 and 40→42→44→46 are file chains (stride 2), 12→14 fails the 50% rule
    /// (30 < 35), 42→44 is cut by the end of the cylinder, and 70, 71 are adjacent but not
    /// successors under interleave 1.
    const FIG3_HOT: [(u64, u64); 10] =
        [(10, 100), (40, 90), (12, 70), (25, 60), (42, 50), (44, 40), (46, 35), (14, 30), (70, 20), (71, 15)];

    #[test]
    fn figure_3_organ_pipe() {
        let g = grid(3, 4);
        let a = place(Placement::OrganPipe, &FIG3_HOT, &g, Overflow::Error).unwrap();
        // The four hottest on the centre cylinder, the next four on centre+1, the rest on centre−1.
        assert_eq!(
            layout(&a, &g),
            vec![
                vec![Some(70), Some(71), None, None],
                vec![Some(10), Some(40), Some(12), Some(25)],
                vec![Some(42), Some(44), Some(46), Some(14)],
            ]
        );
        let cyl = |b: u64| a.iter().find(|x| x.block == b).unwrap().cylinder;
        assert_eq!([10, 40, 12, 25].map(cyl), [1; 4]);
        assert_eq!([42, 44, 46, 14].map(cyl), [2; 4]);
        assert_eq!([70, 71].map(cyl), [0; 2]);
    }

    #[test]
    fn figure_3_interleaved() {
        let g = grid(3, 4);
        let p = Placement::Interleaved { interleave: 1, successor_ratio: 0.5 };
        let a = place(p, &FIG3_HOT, &g, Overflow::Error).unwrap();
        assert_eq!(
            layout(&a, &g),
            vec![
                vec![Some(70), Some(71), None, None],
                vec![Some(10), Some(40), Some(12), Some(42)],
                vec![Some(25), Some(44), Some(14), Some(46)],
            ]
        );
        // Decision order: chain 10→12; chain 40→42 (44 would be position 5: off the cylinder);
        // 25 opens centre+1; chain 44→46; 14 (no successor 16); 70; 71 (not 70's successor).
        assert_eq!(a.iter().map(|x| x.block).collect::<Vec<_>>(), vec![10, 12, 40, 42, 25, 44, 46, 14, 70, 71]);
        // Without the 50% rule, 14 follows 12 — but position 4 is off the cylinder, so it still
        // does not chain; a ratio of 0 on a wider area chains it.
        let wide = grid(3, 6);
        let a = place(Placement::Interleaved { interleave: 1, successor_ratio: 0.0 }, &FIG3_HOT, &wide, Overflow::Error).unwrap();
        assert_eq!(layout(&a, &wide)[1], vec![Some(10), Some(40), Some(12), Some(42), Some(14), Some(44)]);
    }

    #[test]
    fn figure_3_serial() {
        let g = grid(3, 4);
        let a = place(Placement::Serial, &FIG3_HOT, &g, Overflow::Error).unwrap();
        assert_eq!(
            layout(&a, &g),
            vec![
                vec![Some(10), Some(12), Some(14), Some(25)],
                vec![Some(40), Some(42), Some(44), Some(46)],
                vec![Some(70), Some(71), None, None],
            ]
        );
    }

    #[test]
    fn organ_pipe_orders() {
        assert_eq!(organ_pipe_order(0), Vec::<usize>::new());
        assert_eq!(organ_pipe_order(1), vec![0]);
        assert_eq!(organ_pipe_order(3), vec![1, 2, 0]);
        assert_eq!(organ_pipe_order(4), vec![1, 2, 0, 3]);
        assert_eq!(organ_pipe_order(5), vec![2, 3, 1, 4, 0]);
        for n in 0..50 {
            let mut v = organ_pipe_order(n);
            v.sort_unstable();
            assert_eq!(v, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn bad_input_is_refused() {
        let g = grid(2, 2);
        let too_many: Vec<(u64, u64)> = (0..5).map(|b| (b, 10)).collect();
        let e = place(Placement::OrganPipe, &too_many, &g, Overflow::Error).unwrap_err();
        assert_eq!(e, RearrangeError::HotListTooLarge { hot: 5, slots: 4 });
        assert!(e.to_string().contains("5 blocks") && e.to_string().contains("4 free slots"));
        let a = place(Placement::OrganPipe, &too_many, &g, Overflow::Truncate).unwrap();
        assert_eq!(a.iter().map(|x| x.block).collect::<Vec<_>>(), vec![0, 1, 2, 3], "ties: lower blocks first");
        assert_eq!(
            place(Placement::Serial, &[(1, 2), (1, 3)], &g, Overflow::Error),
            Err(RearrangeError::DuplicateBlock { block: 1 })
        );
        assert_eq!(
            place(Placement::Serial, &[], &[vec![1, 2], vec![2]], Overflow::Error),
            Err(RearrangeError::DuplicateSlot { slot: 2 })
        );
        for r in [f64::NAN, -0.5, f64::INFINITY] {
            let p = Placement::Interleaved { interleave: 1, successor_ratio: r };
            assert!(matches!(place(p, &[(1, 1)], &g, Overflow::Error), Err(RearrangeError::BadSuccessorRatio { .. })));
        }
        // Empty inputs and an interleave too large to ever chain.
        assert!(place(Placement::OrganPipe, &[], &[], Overflow::Error).unwrap().is_empty());
        let p = Placement::Interleaved { interleave: u64::MAX, successor_ratio: 0.5 };
        assert_eq!(place(p, &[(u64::MAX, 3), (0, 2)], &g, Overflow::Error).unwrap().len(), 2);
    }

    #[test]
    fn placement_spec_parses() {
        let p: Placement = toml::from_str("type = \"interleaved\"\ninterleave = 1").unwrap();
        assert_eq!(p, Placement::Interleaved { interleave: 1, successor_ratio: 0.5 });
        let p: Placement = toml::from_str("type = \"organ_pipe\"").unwrap();
        assert_eq!(p, Placement::OrganPipe);
    }

    fn arb_policy() -> impl Strategy<Value = Placement> {
        prop_oneof![
            Just(Placement::OrganPipe),
            Just(Placement::Serial),
            (0u64..4, 0.0f64..1.5)
                .prop_map(|(interleave, successor_ratio)| Placement::Interleaved { interleave, successor_ratio }),
        ]
    }

    proptest! {
        #[test]
        fn placements_are_valid(
            per_cyl in proptest::collection::vec(0usize..8, 0..7),
            hot in proptest::collection::btree_map(0u64..64, 1u64..100, 0..40),
            policy in arb_policy(),
            shuffle in any::<u64>(),
        ) {
            // Slot ids scattered (not 0..n) so ids and positions cannot be confused.
            let mut next = 0usize;
            let g: Vec<Vec<usize>> = per_cyl.iter().map(|&n| (0..n).map(|_| { next += 1; (next * 7919) ^ (shuffle as usize & 0xff) }).collect()).collect();
            let slots = next;
            let mut hot: Vec<(u64, u64)> = hot.into_iter().collect();
            let turn = (shuffle as usize) % hot.len().max(1);
            hot.rotate_left(turn);
            let strict = place(policy, &hot, &g, Overflow::Error);
            if hot.len() > slots {
                prop_assert_eq!(strict, Err(RearrangeError::HotListTooLarge { hot: hot.len(), slots }));
            } else {
                prop_assert_eq!(strict, place(policy, &hot, &g, Overflow::Truncate));
            }
            let a = place(policy, &hot, &g, Overflow::Truncate).unwrap();
            prop_assert_eq!(a.len(), hot.len().min(slots));
            // Distinct slots, each the grid's, each block once and from the hot list.
            let all: HashSet<usize> = g.iter().flatten().copied().collect();
            let mut used = HashSet::new();
            let mut blocks = HashSet::new();
            for x in &a {
                prop_assert!(all.contains(&x.slot));
                prop_assert_eq!(g[x.cylinder][x.position], x.slot);
                prop_assert!(used.insert(x.slot));
                prop_assert!(blocks.insert(x.block));
                prop_assert!(hot.contains(&(x.block, x.count)));
            }
            // Every policy places the same set: the hottest that fit.
            let mut canon = hot.clone();
            canon.sort_unstable_by(|p, q| q.1.cmp(&p.1).then(p.0.cmp(&q.0)));
            let want: HashSet<u64> = canon.iter().take(slots).map(|x| x.0).collect();
            prop_assert_eq!(&blocks, &want);
            let centre = (g.len().max(1) - 1) / 2;
            let dist = |c: usize| c.abs_diff(centre);
            match policy {
                Placement::OrganPipe => {
                    // In hot-list order the distance from the centre never decreases.
                    prop_assert!(a.windows(2).all(|w| dist(w[0].cylinder) <= dist(w[1].cylinder)));
                    prop_assert!(a.windows(2).all(|w| w[0].count >= w[1].count));
                }
                Placement::Serial => {
                    // Block order is disk order.
                    prop_assert!(a.windows(2).all(|w| w[0].block < w[1].block && (w[0].cylinder, w[0].position) < (w[1].cylinder, w[1].position)));
                }
                Placement::Interleaved { interleave, successor_ratio } => {
                    // A could-be successor placed right after its predecessor on the same
                    // cylinder sits 1 + interleave positions further on, or at the first free
                    // position after that, or — when none was free — it was not chained.
                    for j in 1..a.len() {
                        let (w0, w1) = (a[j - 1], a[j]);
                        let step = 1 + interleave as usize;
                        if w1.block != w0.block + 1 + interleave || w1.cylinder != w0.cylinder
                            || (w1.count as f64) < successor_ratio * w0.count as f64 {
                            continue;
                        }
                        let taken: HashSet<usize> = a[..j].iter().filter(|x| x.cylinder == w0.cylinder).map(|x| x.position).collect();
                        let first_free = (w0.position + step..g[w0.cylinder].len()).find(|p| !taken.contains(p));
                        match first_free {
                            Some(p) => prop_assert_eq!(w1.position, p),
                            None => prop_assert_eq!(Some(w1.position), (0..g[w0.cylinder].len()).find(|p| !taken.contains(p))),
                        }
                    }
                    // A cylinder gets blocks only once every cylinder before it in organ-pipe
                    // order is full.
                    let order = organ_pipe_order(g.len());
                    let rank = |c: usize| order.iter().position(|&o| o == c).unwrap();
                    let mut filled = vec![0usize; g.len()];
                    for x in &a {
                        for &c in &order[..rank(x.cylinder)] {
                            prop_assert_eq!(filled[c], g[c].len());
                        }
                        filled[x.cylinder] += 1;
                    }
                }
            }
            // Deterministic and independent of the hot list's order.
            let mut rev = hot.clone();
            rev.reverse();
            prop_assert_eq!(place(policy, &rev, &g, Overflow::Truncate).unwrap(), a);
        }
    }
}
