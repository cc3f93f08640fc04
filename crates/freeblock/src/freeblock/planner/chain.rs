//! Chain plans: reading on several tracks in one rotational latency.
//!
//! Late in a scan the wanted sectors are scattered: a track holds a few short runs at random
//! angles, and no single track (nor any pair) has much to give in one window. Switching heads on
//! the same cylinder costs a fraction of a millisecond (0.18 ms on the Atlas 10K, against a 6 ms
//! revolution), so the head can hop from run to run over the surfaces of the source and
//! destination cylinders, and still settle on the foreground sector in time. A seek of a few
//! cylinders costs little more, so the chain also takes the best other tracks the decision's
//! search weighed on any cylinder (up to [`super::CHAIN_WALK_TRACKS`], best first): late in a
//! scan one window can then pick up a run on each of several nearby tracks.
//!
//! Which runs to read is a longest path over a small time-ordered graph:
//!
//! ```text
//!   lane = one candidate track's pass over the window (earliest arrival … latest departure)
//!   node = the end of one run of wanted sectors on a lane
//!   f(node) = most wanted sectors read by a chain that is on that lane as the run ends
//!           = max( f(previous run on the lane) + this run            (stay on the track),
//!                  f(a node on another lane) + the part of this run   (move here from there),
//!                  the part of this run reached straight from the source )
//! ```
//!
//! Nodes are taken in order of their end times, so every predecessor is final when used. A
//! lane's `f` never falls from one run to the next, so of the nodes on another lane from which a
//! move arrives before a run starts, the latest is the best: one binary search per lane pair.
//! Only moves that land inside the run need looking at one by one, and runs are short.
//!
//! Times in the graph use each lane's sector clock; the chosen chain is then timed again exactly
//! as the engine will carry it out, and kept only if the foreground sector is still reached in
//! time (otherwise the two-track plan stands).

use freeblock_disk::{HeadState, Op, SimTime};

use super::{Pass, Plan, Planner, Segment, Window};
use crate::freeblock::sets::BackgroundSets;

/// Most tracks a chain is built from: the source, the destination, the best plan's other track,
/// [`super::CHAIN_WALK_TRACKS`] more the search weighed, and a few surfaces of the source's and
/// destination's cylinders.
const MAX_LANES: usize = 14;
/// A move must land at least this long before the first sector it reads (ns): the graph's
/// sector clock and the engine's exact angles may disagree by a nanosecond or two.
const ARRIVAL_MARGIN_NS: SimTime = 0;
/// No predecessor: the chain starts here.
const START: u32 = u32::MAX;

/// One candidate track and its pass over the window.
#[derive(Debug, Clone)]
struct Lane {
    pass: Pass,
    /// The settle a move onto this track needs.
    op: Op,
    /// Where its prefix sums start in the scratch space: `prefix[base + i]` is the wanted
    /// weight of pass sectors `0..i`.
    base: usize,
    /// Whether the heads start here.
    is_source: bool,
    /// Whether a chain may end here (the foreground's own move from here arrives in time).
    can_end: bool,
    /// Its nodes: `nodes[first_node..end_node]`, in pass order.
    first_node: usize,
    end_node: usize,
}

/// The end of one run of wanted sectors on a lane.
#[derive(Debug, Clone, Copy)]
struct Node {
    lane: u32,
    /// Pass indices of the run, `lo..hi`.
    lo: u32,
    hi: u32,
    /// When its last sector has passed.
    end: SimTime,
    /// Best weight read by a chain on this lane at `end`.
    value: u64,
    /// The node before, or [`START`].
    pred: u32,
    /// Pass index where the chain's reading on this lane began.
    entry: u32,
    /// Whether `pred` is the run before on the same lane (one segment).
    stayed: bool,
}

/// Scratch space kept between decisions.
#[derive(Debug, Clone, Default)]
pub(super) struct ChainScratch {
    lanes: Vec<Lane>,
    nodes: Vec<Node>,
    order: Vec<u32>,
    moves: Vec<SimTime>,
    weights: Vec<u16>,
    prefix: Vec<u32>,
    /// Single-track passes the search weighed this decision (the same pass a lane takes), and
    /// their weights end to end: a lane reuses them instead of weighing the track again.
    weighed: Vec<(Pass, usize)>,
    weighed_weights: Vec<u16>,
}

impl ChainScratch {
    /// Starts a new decision.
    pub(super) fn forget(&mut self) {
        self.weighed.clear();
        self.weighed_weights.clear();
    }

    /// Keeps a single-track pass and its weights.
    pub(super) fn remember(&mut self, pass: &Pass, weights: &[u16]) {
        self.weighed.push((*pass, self.weighed_weights.len()));
        self.weighed_weights.extend_from_slice(weights);
    }
}

/// The first `i` in `lo..hi` for which `before(i)` is false (`hi` if none), when it is true for
/// the indices below some point and false from there on: a binary search.
fn first_not(mut lo: u32, mut hi: u32, before: impl Fn(u32) -> bool) -> u32 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Lane {
    /// When pass sector `i` starts.
    #[inline]
    fn at(&self, disk: &freeblock_disk::Disk, i: u32) -> SimTime {
        Planner::after(disk, &self.pass, i)
    }

    fn head(&self) -> HeadState {
        HeadState { cylinder: self.pass.cylinder, surface: self.pass.surface }
    }
}

impl Planner {
    /// The best chain over `tracks` (source and destination are always lanes), or `None` when
    /// none beats `beat` wanted sectors.
    pub(super) fn chain(&mut self, sets: &BackgroundSets, w: &Window, tracks: &[(u32, u32)], beat: u64) -> Option<Plan> {
        let disk = sets.disk();
        let bg_op = if sets.any_writes() { Op::Write } else { Op::Read };
        let src = (w.head.cylinder, w.head.surface);
        let dst = (w.dst.cylinder, w.dst.surface);
        let mut scratch = std::mem::take(&mut self.chain);
        scratch.lanes.clear();
        scratch.nodes.clear();
        scratch.prefix.clear();
        let mut upper = 0u64;
        let mut seen = [(u32::MAX, u32::MAX); MAX_LANES];
        let mut n_seen = 0;
        for &(c, s) in [src, dst].iter().chain(tracks) {
            if n_seen >= MAX_LANES || seen[..n_seen].contains(&(c, s)) {
                continue;
            }
            seen[n_seen] = (c, s);
            n_seen += 1;
            let op = if (c, s) == dst { w.fg_op } else { bg_op };
            let is_source = (c, s) == src;
            let arrive = w.free_at + if is_source { 0 } else { disk.move_ns(w.head, c, s, op) };
            let to_dst = if (c, s) == dst { 0 } else { disk.move_ns(HeadState { cylinder: c, surface: s }, dst.0, dst.1, w.fg_op) };
            let until = w.deadline.saturating_sub(to_dst);
            if until <= arrive || (sets.track_wanted(c, s) == 0 && !is_source) {
                continue;
            }
            scratch.weights.clear();
            let pass = if let Some(&(pass, at)) = scratch.weighed.iter().find(|(p, _)| (p.cylinder, p.surface) == (c, s)) {
                scratch.weights.extend_from_slice(&scratch.weighed_weights[at..at + pass.count as usize]);
                pass
            } else {
                let pass = Self::pass(disk, &Self::angles(disk, c, s), c, s, arrive, until);
                if pass.count > 0 && sets.track_wanted(c, s) > 0 {
                    self.track_weights.copy_pass(sets, c, s, pass.spt, pass.first, pass.count, self.balance_scale(c), &mut scratch.weights);
                } else {
                    scratch.weights.resize(pass.count as usize, 0);
                }
                pass
            };
            let base = scratch.prefix.len();
            scratch.prefix.push(0u32);
            let mut acc = 0u32;
            for &x in &scratch.weights {
                acc += u32::from(x);
                scratch.prefix.push(acc);
            }
            upper += u64::from(acc);
            let lane_index = scratch.lanes.len() as u32;
            let first_node = scratch.nodes.len();
            let mut i = 0usize;
            let n = scratch.weights.len();
            while i < n {
                if scratch.weights[i] == 0 {
                    i += 1;
                    continue;
                }
                let lo = i;
                while i < n && scratch.weights[i] > 0 {
                    i += 1;
                }
                let end = Self::after(disk, &pass, i as u32);
                scratch.nodes.push(Node { lane: lane_index, lo: lo as u32, hi: i as u32, end, value: 0, pred: START, entry: lo as u32, stayed: false });
            }
            let can_end = (c, s) == dst || w.fg_ready + to_dst <= w.deadline;
            let end_node = scratch.nodes.len();
            scratch.lanes.push(Lane { pass, op, base, is_source, can_end, first_node, end_node });
        }
        let result = if upper <= beat || scratch.nodes.is_empty() { None } else { Self::longest_chain(disk, w, &mut scratch, beat) };
        self.chain = scratch;
        result
    }

    /// The longest path through the lanes' nodes; `None` unless it beats `beat` and times out
    /// exactly.
    fn longest_chain(disk: &freeblock_disk::Disk, w: &Window, sc: &mut ChainScratch, beat: u64) -> Option<Plan> {
        let k = sc.lanes.len();
        sc.moves.clear();
        for a in &sc.lanes {
            for b in &sc.lanes {
                sc.moves.push(if std::ptr::eq(a, b) { 0 } else { disk.move_ns(a.head(), b.pass.cylinder, b.pass.surface, b.op) });
            }
        }
        sc.order.clear();
        sc.order.extend(0..sc.nodes.len() as u32);
        let nodes = &mut sc.nodes;
        sc.order.sort_by_key(|&i| (nodes[i as usize].end, i));
        for &ni in &sc.order {
            let n = nodes[ni as usize];
            let lane = &sc.lanes[n.lane as usize];
            let run = u64::from(sc.prefix[lane.base + n.hi as usize] - sc.prefix[lane.base + n.lo as usize]);
            // Straight from the source: stay there from the start, or move here first.
            let mut best = if lane.is_source {
                (u64::from(sc.prefix[lane.base + n.hi as usize]), START, 0, false)
            } else {
                (run, START, n.lo, false)
            };
            // Stay on from the run before.
            if ni as usize > lane.first_node {
                let p = &nodes[ni as usize - 1];
                if p.value + run > best.0 {
                    best = (p.value + run, ni - 1, p.entry, true);
                }
            }
            // Move here from another lane.
            let run_start = lane.at(disk, n.lo);
            let last_start = lane.at(disk, n.hi - 1);
            for (li, other) in sc.lanes.iter().enumerate() {
                if li == n.lane as usize || other.first_node == other.end_node {
                    continue;
                }
                let mv = sc.moves[li * k + n.lane as usize] + ARRIVAL_MARGIN_NS;
                let span = &nodes[other.first_node..other.end_node];
                // Nodes whose move lands before this run starts: the latest is the best.
                let full = span.partition_point(|m| m.end + mv <= run_start);
                if full > 0 {
                    let m = &span[full - 1];
                    if m.value + run > best.0 {
                        best = (m.value + run, (other.first_node + full - 1) as u32, n.lo, false);
                    }
                }
                // Nodes whose move lands inside the run: read what is left of it.
                for (j, m) in span.iter().enumerate().skip(full) {
                    let arrive = m.end + mv;
                    if arrive > last_start {
                        break;
                    }
                    // The first sector of the run to start after arriving (sector starts only
                    // grow along a pass, and the run's last one starts after `arrive`).
                    let i = first_not(n.lo, n.hi, |i| lane.at(disk, i) < arrive);
                    let got = m.value + u64::from(sc.prefix[lane.base + n.hi as usize] - sc.prefix[lane.base + i as usize]);
                    if got > best.0 {
                        best = (got, (other.first_node + j) as u32, i, false);
                    }
                }
            }
            let node = &mut nodes[ni as usize];
            (node.value, node.pred, node.entry, node.stayed) = best;
        }
        let (end, value) = nodes.iter().enumerate().filter(|(_, n)| sc.lanes[n.lane as usize].can_end).map(|(i, n)| (i, n.value)).max_by_key(|&(i, v)| (v, std::cmp::Reverse(i)))?;
        if value <= beat {
            return None;
        }
        // Walk back: consecutive runs on one lane read as one segment.
        let mut segments = Vec::new();
        let mut at = end as u32;
        while at != START {
            let last = nodes[at as usize];
            let mut n = last;
            while n.stayed {
                n = nodes[n.pred as usize];
            }
            let lane = &sc.lanes[last.lane as usize];
            // Staying on carries the segment's entry forward.
            let p = &lane.pass;
            segments.push(Segment { cylinder: p.cylinder, surface: p.surface, first: (p.first + last.entry) % p.spt, sectors: last.hi - last.entry, move_op: lane.op });
            at = n.pred;
        }
        segments.reverse();
        // Time it exactly as the engine will.
        let (mut head, mut t) = (w.head, w.free_at);
        for seg in &segments {
            let a = disk.arc(head, t, seg.cylinder, seg.surface, seg.first, seg.sectors, seg.move_op);
            (head, t) = (a.head, a.end);
        }
        let to_dst = disk.move_ns(head, w.dst.cylinder, w.dst.surface, w.fg_op);
        let on_dst = (head.cylinder, head.surface) == (w.dst.cylinder, w.dst.surface);
        if t + to_dst > w.deadline || (!on_dst && w.fg_ready + to_dst > w.deadline) {
            return None;
        }
        Some(Plan { segments, wanted: value, examined: 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::first_not;

    /// The binary search finds what a walk from the start finds, for every split point.
    #[test]
    fn first_not_matches_a_linear_walk() {
        for lo in 0..5u32 {
            for hi in lo..12 {
                for point in 0..14u32 {
                    let before = |i: u32| i < point;
                    let walked = (lo..hi).find(|&i| !before(i)).unwrap_or(hi);
                    assert_eq!(first_not(lo, hi, before), walked, "lo {lo}, hi {hi}, point {point}");
                }
            }
        }
    }
}
