//! Choosing among alternatives: which pending request the disk serves next, and at which of its
//! candidate locations (a range write) or copies (a flex read).
//!
//! Two ways to divide the work (paper 004 §6; OSDI 2008 §4):
//!
//! * **Local.** The scheduler orders the queue as if each request had only its *first* candidate
//!   (FCFS: the oldest; SSTF: the shortest seek to it; SPTF: the least positioning time to it);
//!   the device then expands only the request it is about to serve and picks the candidate with
//!   the least positioning time. Cheap, and blind to a far request whose *second* candidate is
//!   under the head.
//! * **Global** (expand-and-cancel). The scheduler ranks every request by its *best* candidate
//!   under its own measure, and the chosen request is served at its candidate with the least
//!   positioning time; the siblings are cancelled. SPTF thus picks the pair (request, candidate)
//!   with the least positioning time over the whole queue. SSTF picks the request owning the
//!   nearest candidate (shortest move; equal moves go to the least positioning time), and the
//!   device then picks that request's candidate by positioning time. FCFS still serves the oldest
//!   request at its best candidate, so for FCFS global and local are the same policy.
//!
//! Why SSTF does not also choose the *candidate* by seek: candidates spread round a cylinder sit
//! on different surfaces, and a seek-only measure counts a head switch but not rotation, so it
//! would always take the candidate on the head's own surface and throw the rotational choice
//! away. (Measured on the small-file workload with 8 candidates: writes kept 5.3 ms of rotational
//! latency, where local selection got 0.8 ms.)
//!
//! ## Keeping global selection cheap: the seek-pruned search
//!
//! With 16 pending requests of 8 candidates the scheduler weighs 128 locations at every decision,
//! and range writes offer many more (every aligned start in every range). The pruned search uses
//! two facts:
//!
//! 1. positioning = move + rotational wait, and the wait is at least 0, so the *move* alone is a
//!    lower bound; and every candidate on one track costs the same move.
//! 2. on one track, the candidate with the least wait is simply the first whose sector comes
//!    round after the head arrives: a binary search over the track's candidates sorted by angle.
//!
//! ```text
//!  every request's candidates, grouped by track       ranked by move (seek + settle)
//!  r0: ●(c12,h3) ●(c12,h7)                             c12,h3  2.9 ms  ─► exact: 2.9 + 1.1 = 4.0 ← best
//!  r1: ●(c40,h0)                                       c12,h7  2.9 ms  ─► exact: 2.9 + 3.5 = 6.4
//!  r2: ●(c13,h1) ●(c13,h1) ●(c13,h1)                   c13,h1  3.7 ms  ─► exact: 3.7 + 0.9 = 4.6
//!                                                      c40,h0  6.1 ms  ✗ 6.1 > 4.0: stop, nothing
//!                                                                          later can win
//! ```
//!
//! So the search computes one cheap move per track group, sorts the groups by it, and computes an
//! exact rotational wait only for groups whose move is not already worse than the best positioning
//! found so far, one binary search per group. [`best_seek_pruned`] returns exactly what the
//! exhaustive [`best_exhaustive`] returns (same choice, same tie-breaking: the oldest request,
//! then the earliest candidate), which the unit tests below and `tests/integration/rangewrite.rs` check.

use freeblock_disk::{Disk, HeadState, Op, RotPos, SimTime, Target, ON_TIME_PS};
use serde::{Deserialize, Serialize};

use crate::layout::error::{LayoutError, Result};
use crate::sched::SchedulerSpec;

/// Who chooses among a request's candidates, and when.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectionMode {
    /// The scheduler sees each request's first candidate; the device picks among the dispatched
    /// request's candidates (paper 004's implementation).
    #[default]
    Local,
    /// The scheduler weighs every candidate of every pending request (expand-and-cancel).
    Global,
}

impl std::fmt::Display for SelectionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SelectionMode::Local => "local",
            SelectionMode::Global => "global",
        })
    }
}

/// How the best candidate is searched for. Both give the same answer; only the cost differs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateSearch {
    /// Exact positioning time for every candidate.
    Exhaustive,
    /// Rank track groups by move time, compute exact positioning only while a move could still
    /// beat the best so far (one binary search per track).
    #[default]
    SeekPruned,
}

/// What "best" means when weighing candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rank {
    /// Least positioning time (seek + settle + rotational wait): SPTF, and the device's own choice.
    Positioning,
    /// Least move (seek or head switch, plus settle), then least positioning: SSTF.
    SeekThenPositioning,
}

/// Checks an access of `sectors` sectors that may start at any of `starts`: at least one start,
/// a non-zero length, and every extent on the disk. Errors name `context`.
///
/// # Errors
/// As [`Alternatives::new`].
pub fn check_starts(disk: &Disk, starts: &[u64], sectors: u64, context: &str) -> Result<()> {
    if starts.is_empty() {
        return Err(LayoutError::EmptyCandidates { context: context.to_string() });
    }
    if sectors == 0 {
        return Err(LayoutError::Config { field: "sectors", message: format!("{context}: zero sectors") });
    }
    let capacity = disk.capacity();
    for &lbn in starts {
        let end = lbn.saturating_add(sectors);
        if end > capacity {
            return Err(LayoutError::CandidateOutside { lbn, end, first: 0, last: capacity, what: "disk" });
        }
    }
    Ok(())
}

/// The candidates of one pending request in the form the search needs: every start's target
/// (track and angle), computed once when the request arrives, and the starts grouped by track and
/// sorted by angle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alternatives {
    op: Op,
    sectors: u64,
    starts: Vec<u64>,
    targets: Vec<Target>,
    groups: Vec<TrackGroup>,
}

/// The candidates of one request that lie on one track, sorted by angle (then by candidate index).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TrackGroup {
    cylinder: u32,
    surface: u32,
    by_angle: Vec<(RotPos, u32)>,
}

impl Alternatives {
    /// The alternatives of an access of `sectors` sectors that may start at any of `starts`
    /// (candidates in preference order; the first is the one a local scheduler sees).
    ///
    /// # Errors
    /// [`LayoutError::EmptyCandidates`] (naming `context`) for no start;
    /// [`LayoutError::CandidateOutside`] for a start whose extent runs past the end of the
    /// disk; [`LayoutError::Config`] for a zero-sector access.
    pub fn new(disk: &Disk, op: Op, starts: Vec<u64>, sectors: u64, context: &str) -> Result<Self> {
        check_starts(disk, &starts, sectors, context)?;
        let targets = starts.iter().map(|&lbn| disk.target(lbn)).collect::<std::result::Result<Vec<_>, _>>()?;
        let mut groups: Vec<TrackGroup> = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            let entry = (t.pos, i as u32);
            match groups.iter_mut().find(|g| g.cylinder == t.cylinder && g.surface == t.surface) {
                Some(g) => g.by_angle.push(entry),
                None => groups.push(TrackGroup { cylinder: t.cylinder, surface: t.surface, by_angle: vec![entry] }),
            }
        }
        for g in &mut groups {
            g.by_angle.sort_unstable();
        }
        Ok(Self { op, sectors, starts, targets, groups })
    }

    /// Read or write.
    #[must_use]
    pub fn op(&self) -> Op {
        self.op
    }

    /// Sectors of the access.
    #[must_use]
    pub fn sectors(&self) -> u64 {
        self.sectors
    }

    /// The candidate starts (disk LBNs), in preference order.
    #[must_use]
    pub fn starts(&self) -> &[u64] {
        &self.starts
    }

    /// Number of candidates.
    #[must_use]
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Never true: construction refuses an empty list.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Number of distinct tracks the candidates lie on.
    #[must_use]
    pub fn tracks(&self) -> usize {
        self.groups.len()
    }

    /// Candidate `i`'s first sector: its track and rotational position.
    ///
    /// # Panics
    /// When `i` is not a candidate index.
    #[must_use]
    pub fn target(&self, i: usize) -> Target {
        self.targets[i]
    }

    /// The first candidate's target (all a local scheduler sees).
    fn first_target(&self) -> &Target {
        &self.targets[0]
    }
}

/// A (request, candidate) pair chosen by a search, with what reaching it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// Index of the request among those searched.
    pub request: usize,
    /// Index of the candidate among the request's starts.
    pub candidate: usize,
    /// The candidate's start (disk LBN).
    pub lbn: u64,
    /// Seek or head switch plus settle to reach it, ns.
    pub seek: SimTime,
    /// Rotational wait after the move, ns.
    pub rotational_latency: SimTime,
    /// Exact positioning times computed (one per candidate exhaustively; one per track group
    /// evaluated when pruned).
    pub evaluated: usize,
}

impl Choice {
    /// Seek + settle + rotational latency, ns.
    #[must_use]
    pub fn positioning(&self) -> SimTime {
        self.seek + self.rotational_latency
    }
}

/// Sort key of a candidate under a rank; smaller is better. Ties go to the earlier request, then
/// the earlier candidate.
fn key(rank: Rank, mv: SimTime, wait: SimTime) -> (SimTime, SimTime) {
    match rank {
        Rank::Positioning => (mv + wait, 0),
        Rank::SeekThenPositioning => (mv, mv + wait),
    }
}

type Best = ((SimTime, SimTime), usize, usize, SimTime, SimTime);

fn better(candidate: &Best, best: Option<&Best>) -> bool {
    best.is_none_or(|b| (candidate.0, candidate.1, candidate.2) < (b.0, b.1, b.2))
}

fn to_choice(best: Option<Best>, requests: &[&Alternatives], evaluated: usize) -> Option<Choice> {
    best.map(|(_, request, candidate, seek, rotational_latency)| Choice {
        request,
        candidate,
        lbn: requests[request].starts[candidate],
        seek,
        rotational_latency,
        evaluated,
    })
}

/// The best (request, candidate) pair by computing the exact positioning of every candidate of
/// every request from `head`, for a command starting at `now`. `None` when `requests` is empty.
#[must_use]
pub fn best_exhaustive(
    disk: &Disk,
    head: HeadState,
    now: SimTime,
    requests: &[&Alternatives],
    rank: Rank,
) -> Option<Choice> {
    let mut best: Option<Best> = None;
    let mut evaluated = 0;
    for (r, alt) in requests.iter().enumerate() {
        for (c, target) in alt.targets.iter().enumerate() {
            evaluated += 1;
            let (mv, wait) = disk.positioning_to(head, now, target, alt.op);
            let cand = (key(rank, mv, wait), r, c, mv, wait);
            if better(&cand, best.as_ref()) {
                best = Some(cand);
            }
        }
    }
    to_choice(best, requests, evaluated)
}

/// The same choice as [`best_exhaustive`], found by the seek-pruned search described in the
/// [module docs](self).
#[must_use]
pub fn best_seek_pruned(
    disk: &Disk,
    head: HeadState,
    now: SimTime,
    requests: &[&Alternatives],
    rank: Rank,
) -> Option<Choice> {
    // (move, request, group): the cheap lower bound for every track group.
    let mut ranked: Vec<(SimTime, usize, &TrackGroup)> =
        Vec::with_capacity(requests.iter().map(|a| a.groups.len()).sum());
    for (r, alt) in requests.iter().enumerate() {
        for g in &alt.groups {
            ranked.push((disk.move_ns(head, g.cylinder, g.surface, alt.op), r, g));
        }
    }
    // Stable: equal moves keep request order, so ties resolve as in the exhaustive search.
    ranked.sort_by_key(|&(mv, _, _)| mv);
    let mut best: Option<Best> = None;
    let mut evaluated = 0;
    for (mv, r, g) in ranked {
        // Both ranks' first key is at least the move: a group whose move already exceeds the
        // best first key cannot win, nor can any after it.
        if best.is_some_and(|b| mv > b.0 .0) {
            break;
        }
        evaluated += 1;
        let op = requests[r].op;
        let arrive = now + disk.overhead_ns(op) + mv;
        let angle = disk.rot_pos(arrive);
        // The first candidate the head is in time for: its sector starts at or after the head's
        // angle, or less than a nanosecond before it (`Disk::wait_for`'s rounding); else wrap round.
        let i = g.by_angle.partition_point(|&(pos, _)| pos + ON_TIME_PS <= angle);
        let mut pick = g.by_angle.get(i).copied().unwrap_or(g.by_angle[0]);
        // Just after the index, the last sectors of the revolution can still be on time.
        if let Some(&last) = g.by_angle.last().filter(|_| angle < ON_TIME_PS) {
            if disk.wait_for(arrive, last.0) == 0 {
                pick = last;
            }
        }
        let (pos, c) = pick;
        let wait = disk.wait_for(arrive, pos);
        let cand = (key(rank, mv, wait), r, c as usize, mv, wait);
        if better(&cand, best.as_ref()) {
            best = Some(cand);
        }
    }
    to_choice(best, requests, evaluated)
}

/// The best pair with the chosen search.
#[must_use]
pub fn best_candidate(
    disk: &Disk,
    head: HeadState,
    now: SimTime,
    requests: &[&Alternatives],
    rank: Rank,
    search: CandidateSearch,
) -> Option<Choice> {
    match search {
        CandidateSearch::Exhaustive => best_exhaustive(disk, head, now, requests, rank),
        CandidateSearch::SeekPruned => best_seek_pruned(disk, head, now, requests, rank),
    }
}

/// The schedulers the range-write simulation supports.
///
/// # Errors
/// [`LayoutError::Config`] for C-LOOK and SPTF-SWn%, which have no candidate-aware form here.
pub fn check_scheduler(scheduler: SchedulerSpec) -> Result<()> {
    match scheduler {
        SchedulerSpec::Fcfs | SchedulerSpec::Sstf | SchedulerSpec::Sptf => Ok(()),
        other => Err(LayoutError::Config {
            field: "scheduler",
            message: format!("{other} is not supported with range writes (use FCFS, SSTF or SPTF)"),
        }),
    }
}

/// The next (request, candidate) to serve from `queue` (oldest first, never empty) under
/// `scheduler` and `mode`. Local: the scheduler ranks requests by their first candidate. Global:
/// it ranks them by their best candidate (FCFS: the oldest either way). The chosen request is
/// served at its candidate with the least positioning time. See the [module docs](self).
///
/// # Errors
/// [`check_scheduler`]'s error for an unsupported scheduler.
///
/// # Panics
/// When `queue` is empty.
pub fn choose(
    disk: &Disk,
    head: HeadState,
    now: SimTime,
    queue: &[&Alternatives],
    scheduler: SchedulerSpec,
    mode: SelectionMode,
    search: CandidateSearch,
) -> Result<Choice> {
    check_scheduler(scheduler)?;
    assert!(!queue.is_empty(), "choose from an empty queue");
    let device_choice = |request: usize, examined: usize| {
        let mut c = best_candidate(disk, head, now, &[queue[request]], Rank::Positioning, search)
            .expect("a request has at least one candidate");
        c.request = request;
        c.evaluated += examined;
        c
    };
    let global = |rank| best_candidate(disk, head, now, queue, rank, search).expect("queue is not empty");
    Ok(match (scheduler, mode) {
        (SchedulerSpec::Fcfs, _) => device_choice(0, 0),
        (SchedulerSpec::Sstf, SelectionMode::Local) => {
            let mut best = (SimTime::MAX, 0);
            for (i, alt) in queue.iter().enumerate() {
                let t = alt.first_target();
                let mv = disk.move_ns(head, t.cylinder, t.surface, alt.op);
                if mv < best.0 {
                    best = (mv, i);
                }
            }
            // Moves only: no exact positioning was computed for the ranking.
            device_choice(best.1, 0)
        }
        (SchedulerSpec::Sptf, SelectionMode::Local) => {
            let mut best = (SimTime::MAX, 0);
            for (i, alt) in queue.iter().enumerate() {
                let (mv, wait) = disk.positioning_to(head, now, alt.first_target(), alt.op);
                if mv + wait < best.0 {
                    best = (mv + wait, i);
                }
            }
            device_choice(best.1, queue.len())
        }
        (SchedulerSpec::Sstf, SelectionMode::Global) => {
            let nearest = global(Rank::SeekThenPositioning);
            device_choice(nearest.request, nearest.evaluated)
        }
        (SchedulerSpec::Sptf, SelectionMode::Global) => global(Rank::Positioning),
        _ => unreachable!("checked above"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use freeblock_disk::library;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn disk() -> Disk {
        Disk::new(library::get("hp_c2247a").unwrap().without_cache()).unwrap()
    }

    /// Random queues: some requests with candidates scattered over the disk, some with many
    /// candidates on a few tracks (as range writes give), some duplicated (ties).
    fn random_queue(d: &Disk, rng: &mut ChaCha8Rng) -> Vec<Alternatives> {
        let n = rng.gen_range(1..=20);
        (0..n)
            .map(|_| {
                let op = if rng.gen_bool(0.3) { Op::Read } else { Op::Write };
                let k = rng.gen_range(1..=12);
                let near = rng.gen_range(0..d.capacity() - 10_000);
                let spread = if rng.gen_bool(0.5) { 400 } else { d.capacity() - 10_000 };
                let mut starts: Vec<u64> =
                    (0..k).map(|_| (near + rng.gen_range(0..spread)) % (d.capacity() - 8)).collect();
                if rng.gen_bool(0.2) {
                    starts.push(starts[0]);
                }
                Alternatives::new(d, op, starts, 8, "test").unwrap()
            })
            .collect()
    }

    #[test]
    fn pruned_search_returns_the_exhaustive_choice() {
        let d = disk();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut exhaustive_work, mut pruned_work) = (0, 0);
        for _ in 0..3_000 {
            let queue = random_queue(&d, &mut rng);
            let refs: Vec<&Alternatives> = queue.iter().collect();
            let head = HeadState { cylinder: rng.gen_range(0..d.layout().cylinders()), surface: rng.gen_range(0..13) };
            let now = rng.gen_range(0..1_000_000_000);
            for rank in [Rank::Positioning, Rank::SeekThenPositioning] {
                let a = best_exhaustive(&d, head, now, &refs, rank).unwrap();
                let b = best_seek_pruned(&d, head, now, &refs, rank).unwrap();
                assert_eq!(
                    (a.request, a.candidate, a.lbn, a.seek, a.rotational_latency),
                    (b.request, b.candidate, b.lbn, b.seek, b.rotational_latency),
                    "{rank:?}"
                );
                exhaustive_work += a.evaluated;
                pruned_work += b.evaluated;
            }
        }
        assert!(pruned_work * 3 < exhaustive_work, "pruned {pruned_work} vs exhaustive {exhaustive_work}");
    }

    #[test]
    fn the_choice_agrees_with_the_access() {
        let d = disk();
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut scratch = Vec::new();
        for _ in 0..200 {
            let queue = random_queue(&d, &mut rng);
            let refs: Vec<&Alternatives> = queue.iter().collect();
            let head = HeadState { cylinder: rng.gen_range(0..2000), surface: 3 };
            let now = rng.gen_range(0..1_000_000_000);
            let c = best_seek_pruned(&d, head, now, &refs, Rank::Positioning).unwrap();
            let alt = refs[c.request];
            let a = d.access(head, now, c.lbn, alt.sectors(), alt.op(), &mut scratch).unwrap();
            assert_eq!(a.media_start, now + d.overhead_ns(alt.op()) + c.positioning());
            // No candidate anywhere is reached sooner.
            for alt in &refs {
                for &s in alt.starts() {
                    assert!(d.positioning(head, now, s, alt.op()).unwrap() >= c.positioning());
                }
            }
        }
    }

    #[test]
    fn local_sees_only_the_first_candidate_and_global_sees_all() {
        let d = disk();
        // The head is on cylinder 0. Request 0's only candidate is far away; request 1's first
        // candidate is farther still, but its second is on the head's cylinder.
        let far = d.layout().zone_table()[7].3;
        let mid = d.layout().zone_table()[4].3;
        let r0 = Alternatives::new(&d, Op::Write, vec![mid], 8, "r0").unwrap();
        let r1 = Alternatives::new(&d, Op::Write, vec![far, 200], 8, "r1").unwrap();
        let q = [&r0, &r1];
        let head = HeadState::default();
        for s in [SchedulerSpec::Sstf, SchedulerSpec::Sptf] {
            let local = choose(&d, head, 0, &q, s, SelectionMode::Local, CandidateSearch::SeekPruned).unwrap();
            assert_eq!((local.request, local.lbn), (0, mid), "{s}");
            let global = choose(&d, head, 0, &q, s, SelectionMode::Global, CandidateSearch::SeekPruned).unwrap();
            assert_eq!((global.request, global.lbn), (1, 200), "{s}");
        }
        // FCFS serves the oldest either way, at its best candidate.
        let q = [&r1, &r0];
        for m in [SelectionMode::Local, SelectionMode::Global] {
            let c = choose(&d, head, 0, &q, SchedulerSpec::Fcfs, m, CandidateSearch::Exhaustive).unwrap();
            assert_eq!((c.request, c.lbn), (0, 200));
        }
        let e = choose(&d, head, 0, &q, SchedulerSpec::Clook, SelectionMode::Local, CandidateSearch::Exhaustive)
            .unwrap_err();
        assert!(e.to_string().contains("C-LOOK is not supported"), "{e}");
    }

    #[test]
    fn bad_alternatives_are_refused() {
        let d = disk();
        let e = Alternatives::new(&d, Op::Write, vec![], 8, "write of logical block 3").unwrap_err();
        assert_eq!(e.to_string(), "write of logical block 3: the candidate list is empty");
        let cap = d.capacity();
        let e = Alternatives::new(&d, Op::Write, vec![0, cap - 4], 8, "w").unwrap_err();
        assert!(matches!(e, LayoutError::CandidateOutside { what: "disk", .. }), "{e}");
    }
}
