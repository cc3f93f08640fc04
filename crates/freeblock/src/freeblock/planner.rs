//! The freeblock planner: what to transfer in one foreground request's rotational latency.
//!
//! ```text
//!   free_at                                                     deadline = foreground media start
//!     │◄──────────────── the foreground's seek + rotational latency ────────────►│
//!     │  direct: move src → dst ──►│◄────────── slack (rotational latency) ──────►│
//!
//!   single track (paper 000 §4):   read src ……… move → dst      or   move → dst, read dst ………
//!                                  or  move → X, read X ……, move → dst   (costs extra seek)
//!   two tracks (ours):             read src ……, move → dst, read dst ……    (no extra seek)
//!                                  read src ……, move → X, read X ……, move → dst
//!                                  move → X, read X ……, move → dst, read dst ……
//! ```
//!
//! The foreground request must still find its first sector under the head at exactly the
//! instant it would have without background work: every plan ends with the heads settled on the
//! destination track no later than `deadline` (and, since any detour takes at least the direct
//! move, after `deadline − one revolution`), so the foreground wait lands on the same sector pass.
//!
//! Every track is looked at as a *pass*: the sectors that go by under the head, in order, between
//! arriving on the track and the latest moment the heads can leave it. A single-track plan takes
//! one pass; a two-track plan splits the time between two tracks, and the best split is found by
//! trying departures only at the ends of runs of wanted sectors on the first track (leaving in the
//! middle of a run can only lose), and only at those ends where the sector clock of the second
//! track leaves room to beat the best plan so far. Other tracks are visited in ascending
//! order of extra seek, outward from the source and destination cylinders, skipping empty
//! cylinders through the per-cylinder summary (and a cylinder's tracks at once when its heaviest
//! track holds too little to beat the best plan), and the search stops as soon as the time left
//! after the extra seek could not hold more wanted sectors than the best plan so far (the
//! paper's pruning). An optional budget caps the number of other tracks examined per decision
//! (the paper allowed its search only as long as the current foreground request was being
//! served); a count keeps runs deterministic where a wall-clock limit would not.
//!
//! A pass is weighed from the track's sector weights, kept between decisions until the wanted
//! sets report a change to that track (`planner/weights.rs`); a split is weighed only when its two
//! passes together hold more than the best plan so far.
//!
//! ## One pass: runs, not sectors, set the pace of a scan's tail (`multi_track`)
//!
//! Late in a complete scan every window reads about one *run* of wanted sectors (a stretch of
//! consecutive wanted sectors on a track), however short: the cost of the tail is the number of
//! runs left, not the number of sectors. A plan that enters a run after its first sector leaves
//! that head behind as a sliver, a run of its own that will later need a window to itself. Over a
//! pass the slivers pile up: in a complete 4 KB scan of the Atlas 10K under OLTP (MPL 20, FCFS,
//! budget 12, seed 1), when 1% of the sectors was left it lay in 27,140 runs (6.6 sectors each), at
//! 0.1% in 7,379 runs of 2.4 sectors, and the last 1% of the sectors took 14% of the pass (issue 35).
//! So `multi_track` does two things more:
//!
//! ```text
//!   track  ·· ▓▓▓▓▓▓ ·· ▓▓ ······ ▓▓▓▓ ··    ▓ wanted, · not; ^ run head
//!             ^         ^          ^
//!   head bonus: a run head weighs 1 + RUN_HEAD_BONUS, so among plans reading about as much,
//!   the one taking runs whole (from the head) wins; a plan entering mid-run loses the bonus
//!
//!   chain lanes: source, destination, the best plan's other track,
//!                the best CHAIN_WALK_TRACKS other tracks the search weighed (any cylinder),
//!                then the source's and destination's cylinders' richest surfaces
//! ```
//!
//! | `scan_tail multi 12` (Atlas 10K, OLTP MPL 20, FCFS) | one-pass share | runs left at 1% / 0.1% of sectors | last 1% of sectors |
//! |---|---|---|---|
//! | chains over src/dst cylinders only (before)        | 0.706 | 27,140 / 7,379 | 13.8% of the pass |
//! | + run-head bonus 16                                | 0.731 | — | — |
//! | + chains over the 8 best walked tracks             | 0.731 | — | — |
//! | both (now)                                         | 0.758 | 10,353 / 1,440 | 10.5% of the pass |
//! | both, budget 25 (`scan_tail multi 25`)            | 0.783 | — | — |
//!
//! No foreground request is delayed in any of these runs; seeds 2, 3 and 42 give 0.704 → 0.760,
//! 0.756 and 0.753. The decisions examine more other tracks (10.5 a decision at budget 12, against
//! 6.4) because the bounds are looser (below), and their p99 rose from 47 to 78 µs in one batch and
//! from 55 to 115 µs in another, before and after side by side on a loaded two-core machine.
//!
//! The bonus is in wanted sectors before balance scaling (16: two 4 KB blocks; 8 gave 0.751, 32
//! gave 0.754). A pass can then weigh up to `1 + RUN_HEAD_BONUS` times its wanted sectors (a run
//! may be one sector), so every bound on what a track, cylinder or group holds carries that factor
//! (`Planner::bound_weight`); the bounds stay sound, only looser. `two_track` and paper 000's
//! `single_track` weigh every wanted sector alike, as before.

use freeblock_disk::{Disk, HeadState, Op, SimTime, Target, TrackAngles};
use serde::{Deserialize, Serialize};

use super::sets::{BackgroundSets, GROUP};

mod balance;
mod chain;
mod weights;

pub use balance::{MAX_WEIGHT as BALANCE_MAX_WEIGHT, REFRESH_DECISIONS as BALANCE_REFRESH_DECISIONS, UNIT as BALANCE_UNIT};

/// `multi_track`: what the first sector of a run of wanted sectors weighs more than the others, in
/// wanted sectors (before balance scaling). See "One pass" in the module doc.
pub const RUN_HEAD_BONUS: u16 = 16;
/// `multi_track`: most of the decision's best other tracks (by what their single-track plans
/// read) a chain may hop over, besides the source and destination cylinders' surfaces.
pub const CHAIN_WALK_TRACKS: usize = 8;

/// Which plans the planner may choose from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlannerKind {
    /// Paper 000 §4: the single track (source, destination or any other) with the most wanted
    /// sectors.
    SingleTrack,
    /// Ours: the single-track plans plus every split of the time between the source track and
    /// the destination track, and between either and a third track.
    #[default]
    TwoTrack,
    /// Ours, further: the two-track plans, and chains that hop between the runs of wanted
    /// sectors on several tracks (the best other tracks the search weighed, and the surfaces of
    /// the source and destination cylinders) in one window; the first sector of a run weighs
    /// more, so runs are taken whole. See `chain` and "One pass" in the module doc.
    MultiTrack,
}

impl PlannerKind {
    /// Whether this planner balances the wanted set unless told otherwise: ours do, paper
    /// 000's greedy does not.
    #[must_use]
    pub fn balances_by_default(self) -> bool {
        self != PlannerKind::SingleTrack
    }
}

impl std::fmt::Display for PlannerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PlannerKind::SingleTrack => "single_track",
            PlannerKind::TwoTrack => "two_track",
            PlannerKind::MultiTrack => "multi_track",
        })
    }
}

/// The free-bandwidth opportunity of one foreground request.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Where the heads are (the source track).
    pub head: HeadState,
    /// When the heads are free for background work.
    pub free_at: SimTime,
    /// The foreground request's first sector.
    pub dst: Target,
    /// When that sector starts passing under the head: must not change.
    pub deadline: SimTime,
    /// When the foreground command's overhead is over: its own seek cannot start earlier.
    pub fg_ready: SimTime,
    /// The foreground operation (its settle applies to the final move).
    pub fg_op: Op,
}

/// One background transfer on one track: move there (settling for `move_op`), wait for sector
/// `first`, pass over `sectors` sectors. With `sectors == 0` it is only the move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Cylinder.
    pub cylinder: u32,
    /// Surface.
    pub surface: u32,
    /// First physical sector.
    pub first: u32,
    /// Sectors passed over.
    pub sectors: u32,
    /// The settle the move to this track needs.
    pub move_op: Op,
}

/// A plan: segments executed in order, then the foreground request.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The segments.
    pub segments: Vec<Segment>,
    /// Wanted sectors the plan transfers (weighted by how many tasks want each).
    pub wanted: u64,
    /// Other tracks (not source or destination) examined to find it.
    pub examined: u32,
}

impl Plan {
    /// The segments in order.
    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter()
    }
}

/// A track's pass: the sectors that go by between `from` and `until`, in order.
#[derive(Debug, Clone, Copy)]
struct Pass {
    cylinder: u32,
    surface: u32,
    spt: u32,
    angles: TrackAngles,
    /// First sector to start at or after `from`.
    first: u32,
    /// When it starts.
    start: SimTime,
    /// Sectors that pass completely before `until`.
    count: u32,
}

/// The planner and its scratch space.
#[derive(Debug, Clone)]
pub struct Planner {
    /// Which plans it may choose.
    pub kind: PlannerKind,
    /// Most other tracks examined per decision (`None`: no limit).
    pub max_tracks: Option<u32>,
    weights_a: Vec<u16>,
    prefix_b: Vec<u32>,
    weights_b: Vec<u16>,
    max_spt: u32,
    /// Per zone `(last cylinder, most sectors per track in this and all outer zones, in this and
    /// all inner zones)`: how good the tracks further along a cursor can be.
    zone_reach: Vec<(u32, u32, u32)>,
    /// Per cylinder, an index into `zone_kinds`: the search visits hundreds of cylinders a
    /// decision late in a scan, and a binary search over the zones for each was a fifth of the
    /// planner's time. Two bytes a cylinder (1.3 MB on a 20 TB drive's 632,576 cylinders).
    cylinder_zones: Vec<u16>,
    /// The distinct `(index into zone_reach, sectors per track)` of the cylinders.
    zone_kinds: Vec<(u32, u32)>,
    /// Tracks a chain may use, and the chain search's own scratch space.
    chain_tracks: Vec<(u32, u32)>,
    chain: chain::ChainScratch,
    /// Per-group weights that keep the wanted set draining evenly (`None`: every sector weighs
    /// the same, as in paper 000). See [`balance`].
    balance: Option<balance::Balance>,
    /// The current decision's source and destination tracks.
    near: [NearTrack; 2],
    /// Every weighed track's sector weights, kept until its wanted sectors change.
    track_weights: weights::TrackWeights,
    /// How much more a pass can weigh than its wanted sectors: `1 + RUN_HEAD_BONUS` when run
    /// heads weigh more (a run may be one sector long), else 1. Every bound carries it.
    head_factor: u64,
    /// The other tracks this decision weighed and what their single-track plans read, best first
    /// (at most [`CHAIN_WALK_TRACKS`] + 1): a chain's candidate lanes.
    walk_best: Vec<(u64, (u32, u32))>,
    /// Tests turn the split bounds off to check that they change no plan.
    #[cfg(test)]
    prune_splits: bool,
}

/// The source or destination track of a decision, whose angles most splits need again.
#[derive(Debug, Clone, Default)]
struct NearTrack {
    track: (u32, u32),
    angles: Option<TrackAngles>,
}

/// A cursor walking cylinders in one direction from a start, up to a stop.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    next: i64,
    step: i64,
    /// Exclusive bound.
    stop: i64,
}

impl Planner {
    /// A planner of `kind` for `disk`, balancing the wanted set across the disk if `balance`.
    #[must_use]
    pub fn new(disk: &Disk, kind: PlannerKind, max_tracks: Option<u32>, balance: bool) -> Self {
        let zones = disk.layout().zone_table();
        let max_spt = zones.iter().map(|z| z.2).max().unwrap_or(1);
        let mut zone_reach: Vec<(u32, u32, u32)> = Vec::with_capacity(zones.len());
        let mut outer = 0;
        for z in &zones {
            outer = outer.max(z.2);
            zone_reach.push((z.1, outer, 0));
        }
        let mut inner = 0;
        for (i, z) in zones.iter().enumerate().rev() {
            inner = inner.max(z.2);
            zone_reach[i].2 = inner;
        }
        let mut zone_kinds: Vec<(u32, u32)> = Vec::new();
        let cylinder_zones = (0..disk.layout().cylinders())
            .map(|c| {
                let kind = (zone_reach.partition_point(|r| r.0 < c).min(zone_reach.len().saturating_sub(1)) as u32, disk.layout().sectors_per_track(c));
                let i = zone_kinds.iter().position(|&k| k == kind).unwrap_or_else(|| {
                    zone_kinds.push(kind);
                    zone_kinds.len() - 1
                });
                u16::try_from(i).expect("fewer than 65,536 zones")
            })
            .collect();
        let head_bonus = if kind == PlannerKind::MultiTrack { RUN_HEAD_BONUS } else { 0 };
        Self {
            kind,
            max_tracks,
            weights_a: Vec::new(),
            prefix_b: Vec::new(),
            weights_b: Vec::new(),
            max_spt,
            zone_reach,
            cylinder_zones,
            zone_kinds,
            chain_tracks: Vec::new(),
            chain: chain::ChainScratch::default(),
            balance: balance.then(|| balance::Balance::new(disk.layout())),
            near: Default::default(),
            track_weights: weights::TrackWeights::new(disk.layout(), max_spt, head_bonus),
            head_factor: 1 + u64::from(head_bonus),
            walk_best: Vec::with_capacity(CHAIN_WALK_TRACKS + 2),
            #[cfg(test)]
            prune_splits: true,
        }
    }

    /// What one wanted sector on cylinder `c` weighs for balancing (1 without it).
    #[inline]
    fn balance_weight(&self, c: u32) -> u64 {
        u64::from(self.balance_scale(c))
    }

    /// [`Self::balance_weight`] as the per-sector scale of [`BackgroundSets::mark_wanted`].
    fn balance_scale(&self, c: u32) -> u16 {
        self.balance.as_ref().map_or(1, |b| b.weight(c))
    }

    /// The most one wanted sector on cylinder `c` can weigh in a pass: its balance weight, times
    /// the run-head factor. Bounds on what a track, cylinder or group holds use it.
    #[inline]
    fn bound_weight(&self, c: u32) -> u64 {
        self.balance_weight(c) * self.head_factor
    }

    /// The heaviest [`Self::bound_weight`] at cylinder `c` or further along direction `step`.
    fn heaviest_along(&self, c: u32, step: i64) -> u64 {
        self.balance.as_ref().map_or(1, |b| b.heaviest_along(c, step)) * self.head_factor
    }

    /// Keeps `(c, s)` among the decision's best other tracks if its single-track plan reads
    /// `wanted` (ties go to the lower track).
    fn remember_walked(&mut self, wanted: u64, track: (u32, u32)) {
        if self.kind != PlannerKind::MultiTrack || wanted == 0 {
            return;
        }
        let key = (std::cmp::Reverse(wanted), track);
        let at = self.walk_best.partition_point(|&(w, t)| (std::cmp::Reverse(w), t) < key);
        // One more than a chain takes: the best plan's own other track may be among them.
        if at <= CHAIN_WALK_TRACKS {
            self.walk_best.insert(at, (wanted, track));
            self.walk_best.truncate(CHAIN_WALK_TRACKS + 1);
        }
    }

    /// The first sector of a track to start at or after `t`, and when it starts.
    fn first_sector_after(disk: &Disk, angles: &TrackAngles, t: SimTime) -> (u32, SimTime) {
        let (rev, spt) = (disk.revolution_ps(), angles.spt);
        let p0 = angles.sector_start(0);
        let rel = (disk.rot_pos(t) + rev - p0) % rev;
        let guess = ((u128::from(rel) * u128::from(spt)).div_ceil(u128::from(rev)) % u128::from(spt)) as u32;
        // Sector starts are rounded to the picosecond: settle the guess against the exact ones.
        let mut best = (guess, disk.wait_for(t, angles.sector_start(guess)));
        for j in [(guess + spt - 1) % spt, (guess + 1) % spt] {
            let w = disk.wait_for(t, angles.sector_start(j));
            if w < best.1 {
                best = (j, w);
            }
        }
        (best.0, t + best.1)
    }

    /// Most sectors, from `first` starting at `start`, that pass completely by `until` (timed
    /// exactly as [`Disk::arc`] will: see [`Disk::transfer_ns`]).
    fn sectors_by(disk: &Disk, angles: &TrackAngles, first: u32, start: SimTime, until: SimTime) -> u32 {
        if until <= start {
            return 0;
        }
        let spt = angles.spt;
        let span_ps = u128::from(until - start) * 1000;
        let mut k = ((span_ps * u128::from(spt)) / u128::from(disk.revolution_ps())).min(u128::from(spt)) as u32;
        let end = |k: u32| start + disk.transfer_ns(angles, start, first, u64::from(k));
        while k < spt && end(k + 1) <= until {
            k += 1;
        }
        while k > 0 && end(k) > until {
            k -= 1;
        }
        k
    }

    fn pass(disk: &Disk, angles: &TrackAngles, c: u32, s: u32, from: SimTime, until: SimTime) -> Pass {
        let spt = angles.spt;
        let (first, start) = Self::first_sector_after(disk, angles, from);
        Pass { cylinder: c, surface: s, spt, angles: *angles, first, start, count: Self::sectors_by(disk, angles, first, start, until) }
    }

    /// When `pass` has gone on for `k` sectors.
    fn after(disk: &Disk, pass: &Pass, k: u32) -> SimTime {
        pass.start + disk.transfer_ns(&pass.angles, pass.start, pass.first, u64::from(k))
    }

    fn angles(disk: &Disk, c: u32, s: u32) -> TrackAngles {
        disk.layout().track_angles(c, s).expect("planned tracks exist")
    }

    /// [`Self::angles`], looked up once per decision for the source and destination tracks.
    fn track_angles(&self, disk: &Disk, c: u32, s: u32) -> TrackAngles {
        self.near.iter().find(|n| n.track == (c, s)).and_then(|n| n.angles).unwrap_or_else(|| Self::angles(disk, c, s))
    }

    /// Fills the weights of `pass` (`weights_b` if `second`, else `weights_a`) with how much each
    /// of its sectors is wanted, and returns their total.
    fn weigh(&mut self, sets: &BackgroundSets, pass: &Pass, second: bool) -> u64 {
        let w = if second { &mut self.weights_b } else { &mut self.weights_a };
        if pass.count == 0 || sets.track_wanted(pass.cylinder, pass.surface) == 0 {
            w.clear();
            w.resize(pass.count as usize, 0);
            return 0;
        }
        let scale = self.balance.as_ref().map_or(1, |b| b.weight(pass.cylinder));
        self.track_weights.copy_pass(sets, pass.cylinder, pass.surface, pass.spt, pass.first, pass.count, scale, w)
    }

    /// What `pass` holds (as [`Self::weigh`] sums it), without its sectors one by one.
    fn pass_total(&mut self, sets: &BackgroundSets, pass: &Pass) -> u64 {
        if pass.count == 0 || sets.track_wanted(pass.cylinder, pass.surface) == 0 {
            return 0;
        }
        let scale = self.balance_scale(pass.cylinder);
        self.track_weights.pass_total(sets, pass.cylinder, pass.surface, pass.spt, pass.first, pass.count, scale)
    }

    /// What passes over track `t` between the window's start and its deadline weighs.
    fn window_weight(&mut self, sets: &BackgroundSets, t: (u32, u32), w: &Window) -> u64 {
        let disk = sets.disk();
        let pass = Self::pass(disk, &self.track_angles(disk, t.0, t.1), t.0, t.1, w.free_at, w.deadline);
        self.weigh(sets, &pass, false)
    }

    /// Whether a plan bounded by `bound` is worth timing against `best` (tests can say always).
    fn may_beat(&self, bound: u64, best: u64) -> bool {
        #[cfg(test)]
        if !self.prune_splits {
            return true;
        }
        bound > best
    }

    /// Best single-track plan on `(c, s)` reached by a move for `move_op` leaving at `leave`,
    /// with reading over by `until`.
    #[allow(clippy::too_many_arguments)]
    fn single(&mut self, sets: &BackgroundSets, head: HeadState, leave: SimTime, c: u32, s: u32, move_op: Op, until: SimTime) -> Plan {
        let arrive = leave + sets.disk().move_ns(head, c, s, move_op);
        self.single_arriving(sets, arrive, c, s, move_op, until)
    }

    /// [`Self::single`] for heads that arrive on `(c, s)` at `arrive`.
    fn single_arriving(&mut self, sets: &BackgroundSets, arrive: SimTime, c: u32, s: u32, move_op: Op, until: SimTime) -> Plan {
        let disk = sets.disk();
        let pass = Self::pass(disk, &self.track_angles(disk, c, s), c, s, arrive, until);
        let wanted = if self.kind == PlannerKind::MultiTrack {
            // Chains may reuse the pass: keep its sectors.
            let wanted = self.weigh(sets, &pass, false);
            self.chain.remember(&pass, &self.weights_a);
            wanted
        } else if pass.count == 0 || sets.track_wanted(c, s) == 0 {
            0
        } else {
            self.track_weights.pass_total(sets, c, s, pass.spt, pass.first, pass.count, self.balance_scale(c))
        };
        let seg = Segment { cylinder: c, surface: s, first: pass.first, sectors: pass.count, move_op };
        Plan { segments: if wanted > 0 { vec![seg] } else { Vec::new() }, wanted, examined: 0 }
    }

    /// Best split of the time between track `a` (reached from `head` leaving at `leave`) and
    /// track `b`, reading on `b` until `until`.
    ///
    /// Plans that read nothing on `b` are left out: their timing assumed the move to `b`, which
    /// is not always longer than the move from `a` straight to the destination (seek curves need
    /// not be subadditive), and the single-track plan on `a` covers them anyway. Splits that
    /// cannot move more than `beat` (the caller's best so far) are not timed exactly.
    #[allow(clippy::too_many_arguments)]
    fn split(&mut self, sets: &BackgroundSets, head: HeadState, leave: SimTime, a: (u32, u32, Op), b: (u32, u32, Op), until: SimTime, beat: u64) -> Plan {
        let disk = sets.disk();
        let a_head = HeadState { cylinder: a.0, surface: a.1 };
        let a_arrive = leave + disk.move_ns(head, a.0, a.1, a.2);
        let move_ab = disk.move_ns(a_head, b.0, b.1, b.2);
        if a_arrive + move_ab > until {
            return Plan::default();
        }
        let pa = Self::pass(disk, &self.track_angles(disk, a.0, a.1), a.0, a.1, a_arrive, until - move_ab);
        let b_angles = self.track_angles(disk, b.0, b.1);
        let pb = Self::pass(disk, &b_angles, b.0, b.1, a_arrive + move_ab, until);
        // With nothing wanted on one of them, the best split is a single-track plan, which the
        // caller looks at anyway (and reaches it no later). Nor can a split read more than both
        // passes hold: their totals (bit counts for most tracks) come before their sectors.
        let (ta, tb) = (self.pass_total(sets, &pa), self.pass_total(sets, &pb));
        if ta == 0 || tb == 0 || !self.may_beat(ta + tb, beat) {
            return Plan::default();
        }
        let a_total = self.weigh(sets, &pa, false);
        let b_total = self.weigh(sets, &pb, true);
        debug_assert_eq!((a_total, b_total), (ta, tb));
        self.prefix_b.clear();
        self.prefix_b.push(0);
        self.prefix_b.extend(self.weights_b.iter().scan(0u32, |acc, &x| {
            *acc += u32::from(x);
            Some(*acc)
        }));
        let mut best = Plan::default();
        let mut a_sum = 0u64;
        let rev = u128::from(disk.revolution_ns());
        let b_prefix_total = self.prefix_b[pb.count as usize];
        for k in 0..=pa.count as usize {
            if k > 0 {
                a_sum += u64::from(self.weights_a[k - 1]);
            }
            // Leaving in the middle of a run of wanted sectors can only lose: try the ends.
            let run_end = k == 0 || (self.weights_a[k - 1] > 0 && (k == pa.count as usize || self.weights_a[k] == 0));
            // Nothing after `k` on `a` and all of `b` (the bound below without its divisions).
            if !run_end || !self.may_beat(a_sum + b_total, best.wanted.max(beat)) {
                continue;
            }
            // Before timing it exactly: at best, `b` is read from the sector its nominal sector
            // clock gives for the earliest departure (less a sector for rounding) to the pass's end.
            let depart_at_least = pa.start + (k as u128 * rev / u128::from(pa.spt)) as SimTime;
            let since = (depart_at_least + move_ab).saturating_sub(pb.start + 1);
            // (Within the pass's last sector of a whole revolution, `b`'s clock wraps to its first.)
            let clock = (u128::from(since) * u128::from(pb.spt) / rev) as usize;
            let skipped_b = if clock + 1 < pb.spt as usize { clock.saturating_sub(1).min(pb.count as usize) } else { 0 };
            if !self.may_beat(a_sum + u64::from(b_prefix_total - self.prefix_b[skipped_b]), best.wanted.max(beat)) {
                continue;
            }
            let depart = if k == 0 { a_arrive } else { Self::after(disk, &pa, k as u32) };
            let (jb, sb) = Self::first_sector_after(disk, &b_angles, depart + move_ab);
            let offset = ((jb + pb.spt - pb.first) % pb.spt) as usize;
            let (b_count, b_sum) = if offset >= pb.count as usize {
                (0, 0)
            } else {
                let n = (Self::sectors_by(disk, &b_angles, jb, sb, until) as usize).min(pb.count as usize - offset);
                (n, u64::from(self.prefix_b[offset + n] - self.prefix_b[offset]))
            };
            let total = a_sum + b_sum;
            if total > best.wanted && b_sum > 0 {
                // With nothing read on `a` the heads still go there first: the timing assumed it.
                let seg_a = Segment { cylinder: a.0, surface: a.1, first: pa.first, sectors: k as u32, move_op: a.2 };
                let seg_b = Segment { cylinder: b.0, surface: b.1, first: jb, sectors: b_count as u32, move_op: b.2 };
                best = Plan { segments: vec![seg_a, seg_b], wanted: total, examined: 0 };
            }
        }
        best
    }

    /// The best plan for `w` against the wanted sets. An empty plan when nothing fits.
    pub fn plan(&mut self, sets: &BackgroundSets, w: &Window) -> Plan {
        if sets.total_wanted() == 0 || w.deadline <= w.free_at {
            return Plan::default();
        }
        self.chain.forget();
        self.walk_best.clear();
        let disk = sets.disk();
        if let Some(b) = self.balance.as_mut() {
            b.refresh(sets);
        }
        let bg_op = if sets.any_writes() { Op::Write } else { Op::Read };
        let (src, dst) = ((w.head.cylinder, w.head.surface), (w.dst.cylinder, w.dst.surface));
        let direct = disk.move_ns(w.head, dst.0, dst.1, w.fg_op);
        let slack = w.deadline.saturating_sub(w.free_at + direct);
        let rev = disk.revolution_ns();
        // Time bounds count sectors; a plan's worth weighs urgent ones more, and balancing weighs
        // each group's sectors by how far behind it is.
        let weight = sets.max_sector_weight();
        if slack * u64::from(self.max_spt) < rev {
            return Plan::default(); // not even one sector's time
        }
        for (n, t) in self.near.iter_mut().zip([src, dst]) {
            n.track = t;
            n.angles = Some(Self::angles(disk, t.0, t.1));
        }
        let two = self.kind != PlannerKind::SingleTrack;
        let mut best = Plan::default();
        let consider = |best: &mut Plan, p: Plan| {
            if p.wanted > best.wanted {
                *best = p;
            }
        };
        // The source and destination tracks first: no extra seek. What their passes hold bounds
        // what a split with a third track can add to that track's own sectors.
        let mut near_wanted = 0u64;
        if src == dst {
            let p = self.single(sets, w.head, w.free_at, src.0, src.1, w.fg_op, w.deadline);
            near_wanted = p.wanted;
            consider(&mut best, p);
        } else {
            let p = self.single(sets, w.head, w.free_at, src.0, src.1, bg_op, w.deadline - direct);
            near_wanted = near_wanted.max(p.wanted);
            consider(&mut best, p);
            let p = self.single(sets, w.head, w.free_at, dst.0, dst.1, w.fg_op, w.deadline);
            near_wanted = near_wanted.max(p.wanted);
            consider(&mut best, p);
            if two && (sets.track_wanted(src.0, src.1) > 0 || sets.track_wanted(dst.0, dst.1) > 0) {
                let p = self.split(sets, w.head, w.free_at, (src.0, src.1, bg_op), (dst.0, dst.1, w.fg_op), w.deadline, best.wanted);
                consider(&mut best, p);
            }
        }
        // Other tracks in ascending extra seek.
        let cylinders = i64::from(disk.layout().cylinders());
        let surfaces = disk.layout().surfaces();
        let other = surfaces; // matches no surface: moves count a head switch
        let extra = |c: u32| -> SimTime {
            let there = disk.move_ns(w.head, c, other, bg_op) + disk.move_ns(HeadState { cylinder: c, surface: other }, dst.0, dst.1, w.fg_op);
            there.saturating_sub(direct)
        };
        let zone_reach = std::mem::take(&mut self.zone_reach);
        let cylinder_zones = std::mem::take(&mut self.cylinder_zones);
        // The zone holding cylinder `c`, and its sectors per track.
        let zone_kinds = std::mem::take(&mut self.zone_kinds);
        let zone_of = |c: u32| zone_kinds[usize::from(cylinder_zones[c as usize])].0 as usize;
        let spt_of = |c: u32| zone_kinds[usize::from(cylinder_zones[c as usize])].1;
        // Most sectors a track at `c` or further along direction `step` could pass in the time
        // left after extra seek `e`.
        let bound = |e: SimTime, c: u32, step: i64| -> u64 {
            let z = zone_of(c);
            let spt = if step < 0 { zone_reach[z].1 } else { zone_reach[z].2 };
            (slack.saturating_sub(e) * u64::from(spt)).div_ceil(rev) * weight
        };
        let head_switch = disk.head_switch_ns();
        let (s, d) = (i64::from(src.0), i64::from(dst.0));
        let mut cursors: Vec<Cursor> = Vec::with_capacity(4);
        if s == d {
            cursors.push(Cursor { next: s + 1, step: 1, stop: cylinders });
            cursors.push(Cursor { next: s - 1, step: -1, stop: -1 });
        } else {
            // Outward from each, and inward from each to the midpoint (each cylinder once).
            let mid = (s + d).div_euclid(2);
            let (lo, hi) = (s.min(d), s.max(d));
            cursors.push(Cursor { next: lo - 1, step: -1, stop: -1 });
            cursors.push(Cursor { next: hi + 1, step: 1, stop: cylinders });
            cursors.push(Cursor { next: lo + 1, step: 1, stop: mid + 1 });
            cursors.push(Cursor { next: hi - 1, step: -1, stop: mid });
        }
        let mut examined = 0u32;
        let budget = self.max_tracks.unwrap_or(u32::MAX);
        // The source and destination cylinders' other surfaces: only a head switch away.
        let mut queue: Vec<u32> = vec![src.0];
        if d != s {
            queue.push(dst.0);
        }
        // Each cursor's next cylinder with wanted sectors and its extra seek.
        let mut heads: [Option<(u32, SimTime)>; 4] = [None; 4];
        let split_adds = if two { near_wanted } else { 0 };
        // The most a split can read on the source and on the destination track: what passes over
        // each in the whole window (a split's arc there lies inside). Weighed when first needed.
        let mut near_caps: Option<(u64, u64)> = None;
        loop {
            let c = if let Some(c) = queue.pop() {
                c
            } else {
                // Advance each cursor to its next cylinder with wanted sectors.
                for (i, cur) in cursors.iter_mut().enumerate() {
                    if heads[i].is_some() {
                        continue;
                    }
                    while (cur.step > 0 && cur.next < cur.stop) || (cur.step < 0 && cur.next > cur.stop) {
                        let c = cur.next as u32;
                        // A group or cylinder holding too few wanted sectors to beat the best
                        // (with, for a split, the most the source or destination pass adds).
                        if sets.group_wanted(c) * self.bound_weight(c) + split_adds <= best.wanted {
                            // Jump to the edge of this group in the cursor's direction.
                            let edge = if cur.step > 0 { i64::from((c / GROUP + 1) * GROUP) } else { i64::from((c / GROUP) * GROUP) - 1 };
                            cur.next = if cur.step > 0 { edge.min(cur.stop) } else { edge.max(cur.stop) };
                            continue;
                        }
                        cur.next += cur.step;
                        if u64::from(sets.cylinder_wanted(c)) * self.bound_weight(c) + split_adds > best.wanted {
                            heads[i] = Some((c, extra(c)));
                            break;
                        }
                    }
                }
                // The head with the least extra seek (then the lowest cylinder, then cursor).
                let mut pick: Option<(SimTime, u32, usize)> = None;
                for (i, h) in heads.iter().enumerate().take(cursors.len()) {
                    if let Some((c, e)) = *h {
                        if pick.is_none_or(|p| (e, c, i) < p) {
                            pick = Some((e, c, i));
                        }
                    }
                }
                let Some((e, c, i)) = pick else { break };
                heads[i] = None;
                if e >= slack || bound(e, c, cursors[i].step) * self.heaviest_along(c, cursors[i].step) <= best.wanted {
                    // Extra seek only grows along a cursor: it has nothing better left.
                    cursors[i].next = cursors[i].stop;
                    continue;
                }
                // This cylinder's own tracks (the estimate counts a head switch some may not need).
                let own = (slack.saturating_sub(e.saturating_sub(head_switch)) * u64::from(spt_of(c))).div_ceil(rev) * weight * self.bound_weight(c);
                if own <= best.wanted {
                    // The rest of this zone has the same sectors per track and no less extra
                    // seek: nothing there can beat the best either, up to a group that weighs
                    // more. Jump to the zone's edge or that group, whichever comes first.
                    let z = zone_of(c);
                    let step = cursors[i].step;
                    let edge = if step > 0 {
                        i64::from(zone_reach[z].0) + 1
                    } else {
                        z.checked_sub(1).map_or(-1, |p| i64::from(zone_reach[p].0))
                    };
                    let edge = match self.balance.as_ref().map(|b| b.heavier_from(c, step)) {
                        Some(h) if step > 0 => edge.min(h),
                        Some(h) => edge.max(h),
                        None => edge,
                    };
                    let cur = &mut cursors[i];
                    cur.next = if cur.step > 0 { edge.min(cur.stop).max(cur.next) } else { edge.max(cur.stop).min(cur.next) };
                    continue;
                }
                c
            };
            let spt = u64::from(spt_of(c));
            // Not even the cylinder's heaviest track passes the first test below: none does.
            let heaviest = u64::from(sets.cylinder_heaviest_track(c)) * self.bound_weight(c);
            let look_at = if heaviest == 0 || (if two { heaviest + near_wanted } else { heaviest }) <= best.wanted { 0 } else { surfaces };
            // A move between cylinders depends on the surfaces only through whether they are the
            // same (a head switch may outlast a short seek), and within a cylinder it is a head
            // switch: so every surface's moves to and from this cylinder are one of two.
            let (to_c, from_c) = if look_at > 0 {
                let to = |sf: u32| disk.move_ns(w.head, c, sf, bg_op);
                let from = |sf: u32| disk.move_ns(HeadState { cylinder: c, surface: sf }, dst.0, dst.1, w.fg_op);
                ([to(w.head.surface), to(other)], [from(dst.1), from(other)])
            } else {
                ([0; 2], [0; 2])
            };
            for sf in 0..look_at {
                if (c, sf) == src || (c, sf) == dst {
                    continue;
                }
                let n = u64::from(sets.track_wanted(c, sf)) * self.bound_weight(c);
                // Pruning: neither the sectors there (plus, for a split, the most the source or
                // destination pass holds) nor the time left after the extra seek can beat the best.
                let reachable = if two { n + near_wanted } else { n };
                if n == 0 || reachable <= best.wanted {
                    continue;
                }
                let to_x = to_c[usize::from(sf != w.head.surface)];
                let to_dst = from_c[usize::from(sf != dst.1)];
                debug_assert_eq!((to_x, to_dst), (disk.move_ns(w.head, c, sf, bg_op), disk.move_ns(HeadState { cylinder: c, surface: sf }, dst.0, dst.1, w.fg_op)));
                let e = (to_x + to_dst).saturating_sub(direct);
                if e >= slack || (slack - e) * spt / rev * weight * self.bound_weight(c) < best.wanted {
                    continue;
                }
                if examined >= budget {
                    break;
                }
                examined += 1;
                let until = w.deadline.saturating_sub(to_dst);
                // A plan may end on this track only if the foreground's own seek from it, which
                // cannot start before its command overhead is over, still arrives in time.
                let can_end_here = w.fg_ready + to_dst <= w.deadline;
                // The single-track pass is the widest arc any plan can read here (a split arrives
                // later or leaves earlier): with nothing wanted in it, or too little to make a
                // split beat the best, the splits need not be looked at.
                let p = self.single_arriving(sets, w.free_at + to_x, c, sf, bg_op, until);
                let in_reach = p.wanted;
                self.remember_walked(in_reach, (c, sf));
                if can_end_here {
                    consider(&mut best, p);
                }
                if two && in_reach > 0 && in_reach + near_wanted > best.wanted {
                    let (src_cap, dst_cap) = *near_caps.get_or_insert_with(|| (self.window_weight(sets, src, w), self.window_weight(sets, dst, w)));
                    if can_end_here && self.may_beat(in_reach + src_cap, best.wanted) {
                        let p = self.split(sets, w.head, w.free_at, (src.0, src.1, bg_op), (c, sf, bg_op), until, best.wanted);
                        consider(&mut best, p);
                    }
                    if self.may_beat(in_reach + dst_cap, best.wanted) {
                        let p = self.split(sets, w.head, w.free_at, (c, sf, bg_op), (dst.0, dst.1, w.fg_op), w.deadline, best.wanted);
                        consider(&mut best, p);
                    }
                }
            }
            if examined >= budget {
                break;
            }
        }
        self.zone_reach = zone_reach;
        self.cylinder_zones = cylinder_zones;
        self.zone_kinds = zone_kinds;
        // Chains: only when the best plan leaves room. A chain that is not one of the plans above
        // moves the heads at least once more, so it reads for at most the slack less a head switch.
        let chain_room = |c: u32| (slack.saturating_sub(head_switch) * u64::from(disk.layout().sectors_per_track(c))).div_ceil(rev) * weight * self.bound_weight(c);
        let other = best.segments.iter().map(|g| (g.cylinder, g.surface)).find(|&t| t != src && t != dst);
        if self.kind == PlannerKind::MultiTrack && best.wanted < chain_room(src.0).max(chain_room(dst.0)).max(other.map_or(0, |t| chain_room(t.0))) {
            let mut tracks = std::mem::take(&mut self.chain_tracks);
            tracks.clear();
            // The best plan's other track, then the richest tracks on the source's, the
            // destination's and that track's cylinders (the chain takes the first few).
            let cylinders = [Some(src.0), Some(dst.0), other.map(|t| t.0)];
            for (i, &c) in cylinders.iter().enumerate() {
                let Some(c) = c else { continue };
                if cylinders[..i].contains(&Some(c)) || sets.cylinder_wanted(c) == 0 {
                    continue;
                }
                tracks.extend((0..surfaces).map(|sf| (c, sf)).filter(|&t| sets.track_wanted(t.0, t.1) > 0 && t != src && t != dst && Some(t) != other));
            }
            tracks.sort_by_key(|&(c, sf)| (std::cmp::Reverse(u64::from(sets.track_wanted(c, sf)) * self.balance_weight(c)), c, sf));
            // Before them, the best other tracks the search weighed (on any cylinder), best first.
            let mut walked = [(0u32, 0u32); CHAIN_WALK_TRACKS];
            let mut n_walked = 0;
            for t in self.walk_best.iter().map(|&(_, t)| t).filter(|&t| Some(t) != other).take(CHAIN_WALK_TRACKS) {
                walked[n_walked] = t;
                n_walked += 1;
            }
            tracks.retain(|t| !walked[..n_walked].contains(t));
            tracks.splice(0..0, walked[..n_walked].iter().copied());
            if let Some(t) = other {
                tracks.insert(0, t);
            }
            // Nor can it read more than the lanes hold.
            let held: u64 = tracks.iter().chain([&src, &dst]).map(|&(c, sf)| u64::from(sets.track_wanted(c, sf)) * self.bound_weight(c)).sum();
            if held > best.wanted {
                if let Some(p) = self.chain(sets, w, &tracks, best.wanted) {
                    best = p;
                }
            }
            self.chain_tracks = tracks;
        }
        best.examined = examined;
        best
    }

    /// Idle-time work: the nearest track with wanted sectors, read for one revolution from the
    /// first sector after arriving. `None` when nothing is wanted.
    #[must_use]
    pub fn plan_idle(&self, sets: &BackgroundSets, head: HeadState, t: SimTime) -> Option<Segment> {
        if sets.total_wanted() == 0 {
            return None;
        }
        let disk = sets.disk();
        let op = if sets.any_writes() { Op::Write } else { Op::Read };
        let cylinders = disk.layout().cylinders();
        let best_surface = |c: u32| (0..disk.layout().surfaces()).max_by_key(|&s| (sets.track_wanted(c, s), std::cmp::Reverse(s)));
        let mut found: Option<(SimTime, u32, u32)> = None;
        for dist in 0..cylinders {
            if let Some((best_move, _, _)) = found {
                if disk.seek_curve().shortest(dist) > best_move {
                    break;
                }
            }
            for c in [head.cylinder.checked_sub(dist), head.cylinder.checked_add(dist).filter(|&c| c < cylinders)].into_iter().flatten() {
                if sets.cylinder_wanted(c) == 0 {
                    continue;
                }
                let s = best_surface(c)?;
                let mv = disk.move_ns(head, c, s, op);
                if !matches!(found, Some((m, _, _)) if mv >= m) {
                    found = Some((mv, c, s));
                }
            }
        }
        let (mv, c, s) = found?;
        let angles = Self::angles(disk, c, s);
        let (first, _) = Self::first_sector_after(disk, &angles, t + mv);
        Some(Segment { cylinder: c, surface: s, first, sectors: angles.spt, move_op: op })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use freeblock_disk::library;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// The split bound only skips departures that cannot beat the best plan: with it off, every
    /// plan comes out the same, over scattered wanted blocks (as late in a scan) and random windows.
    #[test]
    fn the_split_bound_changes_no_plan() {
        let disk = library::media("atlas10k").unwrap();
        let mut sets = BackgroundSets::new(Arc::clone(&disk));
        let task = sets.add_task(Op::Read, 4096).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let blocks = disk.capacity() / 8;
        for _ in 0..40_000 {
            sets.register(task, rng.gen_range(0..blocks) * 8, 1).unwrap();
        }
        let mut differ_from_greedy = 0;
        for kind in [PlannerKind::TwoTrack, PlannerKind::MultiTrack] {
            let mut pruned = Planner::new(&disk, kind, Some(100), true);
            let mut exhaustive = pruned.clone();
            exhaustive.prune_splits = false;
            let mut greedy = Planner::new(&disk, PlannerKind::SingleTrack, Some(100), true);
            for _ in 0..2000 {
                let src = disk.target(rng.gen_range(0..disk.capacity())).unwrap();
                let dst = disk.target(rng.gen_range(0..disk.capacity())).unwrap();
                let fg_op = if rng.gen_bool(0.5) { Op::Read } else { Op::Write };
                let free_at = rng.gen_range(0..1_000_000_000);
                // Sometimes a revolution later (the foreground's sector has passed once): passes
                // then cover whole tracks and the second track's sector clock wraps.
                let w = window_between(&disk, src, dst, fg_op, free_at, rng.gen_range(0..2));
                let (a, b) = (pruned.plan(&sets, &w), exhaustive.plan(&sets, &w));
                assert_eq!((a.segments, a.wanted), (b.segments, b.wanted), "{kind}: {w:?}");
                differ_from_greedy += usize::from(a.wanted != greedy.plan(&sets, &w).wanted);
            }
        }
        // The windows exercise the splits: they often beat the single-track plans.
        assert!(differ_from_greedy > 200, "only {differ_from_greedy} plans used a split or chain");
    }

    /// A scattered wanted set, as late in a scan: random 4 KB blocks and a few longer runs.
    fn scattered(disk: &Arc<Disk>, rng: &mut ChaCha8Rng, blocks: usize) -> BackgroundSets {
        let mut sets = BackgroundSets::new(Arc::clone(disk));
        let task = sets.add_task(Op::Read, 4096).unwrap();
        let capacity_blocks = disk.capacity() / 8;
        for _ in 0..blocks {
            let first = rng.gen_range(0..capacity_blocks - 8);
            sets.register(task, first * 8, if rng.gen_bool(0.2) { rng.gen_range(2..8) } else { 1 }).unwrap();
        }
        sets
    }

    /// The window of a foreground `fg_op` to `dst` with the heads on `src`'s track, free from
    /// `free_at`, its sector met after `late_revs` whole revolutions more than the first pass.
    fn window_between(disk: &Disk, src: Target, dst: Target, fg_op: Op, free_at: SimTime, late_revs: u64) -> Window {
        let head = HeadState { cylinder: src.cylinder, surface: src.surface };
        let arrive = free_at + disk.move_ns(head, dst.cylinder, dst.surface, fg_op);
        let deadline = arrive + disk.wait_for(arrive, dst.pos) + late_revs * disk.revolution_ns();
        Window { head, free_at, dst, deadline, fg_ready: free_at, fg_op }
    }

    /// A random window: heads on a random track, the foreground's sector a random one.
    fn random_window(disk: &Disk, rng: &mut ChaCha8Rng) -> Window {
        let src = disk.target(rng.gen_range(0..disk.capacity())).unwrap();
        let dst = disk.target(rng.gen_range(0..disk.capacity())).unwrap();
        window_between(disk, src, dst, Op::Read, rng.gen_range(0..1_000_000_000), 0)
    }

    /// Chains hop over the best other tracks the search weighed, wherever they are: some plans
    /// read on two or more cylinders besides the source's and the destination's (before, a
    /// chain's lanes lay on at most one other cylinder, the best plan's other track's).
    #[test]
    fn chains_take_runs_on_several_other_cylinders() {
        let disk = library::media("atlas10k").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let sets = scattered(&disk, &mut rng, 60_000);
        let mut planner = Planner::new(&disk, PlannerKind::MultiTrack, Some(12), true);
        let mut spread = 0;
        for _ in 0..2000 {
            let w = random_window(&disk, &mut rng);
            let plan = planner.plan(&sets, &w);
            let mut others: Vec<u32> = plan.iter().filter(|g| g.sectors > 0).map(|g| g.cylinder).filter(|&c| c != w.head.cylinder && c != w.dst.cylinder).collect();
            others.dedup();
            others.sort_unstable();
            others.dedup();
            spread += usize::from(others.len() >= 2);
        }
        // 13 of 2000 with the walked tracks; none can without them.
        assert!(spread >= 5, "only {spread} of 2000 plans read on two or more other cylinders");
    }

    /// With run heads weighing more, `multi_track` enters runs of wanted sectors in their middle
    /// (leaving a sliver) less often than the same planner weighing every sector alike (973
    /// against 1610 of these plans' segments).
    #[test]
    fn run_head_bonus_takes_runs_whole() {
        let disk = library::media("atlas10k").unwrap();
        let layout = disk.layout();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let sets = scattered(&disk, &mut rng, 60_000);
        let with_bonus = Planner::new(&disk, PlannerKind::MultiTrack, Some(12), true);
        assert_eq!(with_bonus.head_factor, 1 + u64::from(RUN_HEAD_BONUS));
        let mut without = with_bonus.clone();
        without.track_weights = weights::TrackWeights::new(layout, without.max_spt, 0);
        without.head_factor = 1;
        // Whether sector `i` of track `(c, s)` is wanted (round the track).
        let wanted = |c: u32, s: u32, i: u32| {
            let spt = layout.sectors_per_track(c);
            let mut pieces = Vec::new();
            layout.arc_lbns(c, s, (i + spt) % spt, 1, &mut pieces);
            let mut w = [0u16];
            sets.mark_wanted(&pieces, &mut w, 1);
            w[0] > 0
        };
        let windows: Vec<Window> = (0..2000).map(|_| random_window(&disk, &mut rng)).collect();
        let mut cut = [0usize; 2];
        for (k, planner) in [with_bonus, without].iter_mut().enumerate() {
            for w in &windows {
                for g in planner.plan(&sets, w).iter().filter(|g| g.sectors > 0) {
                    let spt = layout.sectors_per_track(g.cylinder);
                    // Reading starts on a wanted sector whose predecessor is wanted too: mid-run.
                    cut[k] += usize::from(wanted(g.cylinder, g.surface, g.first) && wanted(g.cylinder, g.surface, g.first + spt - 1));
                }
            }
        }
        assert!(cut[1] > 100 && cut[0] * 4 < cut[1] * 3, "mid-run entries: with the bonus {}, without {}", cut[0], cut[1]);
    }
}
