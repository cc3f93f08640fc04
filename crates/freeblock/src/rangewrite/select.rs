//! Local selection: once the scheduler has picked a request, the device picks, among that request's
//! candidate locations (a range write) or copies (a flex read), the one it can reach soonest.
//!
//! This is paper 004's implementation ("the scheduler's friend"): the queue is ordered as usual by
//! each request's first candidate, and only the request being dispatched is expanded. Every
//! candidate is ranked from the same head state and start time with
//! [`Disk::positioning_to`], which agrees to the nanosecond with what
//! [`Disk::access`] then does, so the choice is exact, not an estimate.
//!
//! ```
//! use freeblock::rangewrite::{select_write, Candidates};
//! use freeblock_disk::{library, Disk, HeadState};
//!
//! let disk = Disk::new(library::get("hp_c2249a").unwrap()).unwrap();
//! let cands = Candidates::discrete(vec![5_000, 5_048]); // half a track apart (96 sectors/track)
//! let mut scratch = Vec::new();
//! let s = select_write(&disk, HeadState::default(), 1_234_567, &cands, 10, &mut scratch).unwrap();
//! // Neither candidate is ever more than about half a revolution away.
//! assert!(s.rotational_latency <= disk.revolution_ns() / 2 + disk.revolution_ns() / 96);
//! ```

use freeblock_disk::{Disk, HeadState, MediaAccess, Op, SimTime, TrackRun};
use serde::{Deserialize, Serialize};

use crate::layout::map::{BlockMap, Candidates, WriteRequest, Written};
use crate::layout::error::{LayoutError, Result};

/// What "soonest" means.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// Least positioning time (seek + settle + rotational latency to the first sector): paper 004.
    #[default]
    Positioning,
    /// Earliest completion (also counts track switches inside the transfer).
    Completion,
}

/// The candidate chosen and what serving it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    /// The chosen location (disk LBN).
    pub lbn: u64,
    /// Its position among the candidates' starts ([`Candidates::starts`] order).
    pub index: usize,
    /// Seek or head switch plus settle to reach the first sector, ns.
    pub seek: SimTime,
    /// Wait for the first sector after the move, ns.
    pub rotational_latency: SimTime,
    /// The full access at the chosen location.
    pub access: MediaAccess,
    /// How many starts were ranked.
    pub examined: usize,
}

impl Selection {
    /// Positioning time to the first sector: seek + settle + rotational latency, ns.
    #[must_use]
    pub fn positioning(&self) -> SimTime {
        self.seek + self.rotational_latency
    }
}

/// Ranks every start in `starts` for an access of `sectors` sectors from `head` at `start` and
/// returns the best (ties go to the earlier start). `context` names the operation in errors.
///
/// # Errors
/// [`LayoutError::EmptyCandidates`] when `starts` is empty;
/// [`LayoutError::CandidateOutside`] when a candidate reaches past the end of the disk;
/// [`LayoutError::Access`] for a zero-sector access.
#[allow(clippy::too_many_arguments)]
pub fn select(
    disk: &Disk,
    head: HeadState,
    start: SimTime,
    starts: impl IntoIterator<Item = u64>,
    sectors: u64,
    op: Op,
    criterion: Criterion,
    context: &str,
    scratch: &mut Vec<TrackRun>,
) -> Result<Selection> {
    let capacity = disk.capacity();
    let xfer_floor = |cyl: u32| disk.sectors_ns(sectors, disk.layout().sectors_per_track(cyl).max(1));
    // (key, index, lbn, seek, wait)
    let mut best: Option<(SimTime, usize, u64, SimTime, SimTime)> = None;
    let mut examined = 0;
    for (i, lbn) in starts.into_iter().enumerate() {
        examined += 1;
        let end = lbn.saturating_add(sectors);
        if end > capacity {
            return Err(LayoutError::CandidateOutside { lbn, end, first: 0, last: capacity, what: "disk" });
        }
        let target = disk.target(lbn)?;
        let (mv, wait) = disk.positioning_to(head, start, &target, op);
        let key = match criterion {
            Criterion::Positioning => mv + wait,
            Criterion::Completion => {
                // Cheap lower bound first; the full access only when it could win.
                let floor = start + disk.overhead_ns(op) + mv + wait + xfer_floor(target.cylinder);
                if best.is_some_and(|b| floor >= b.0) {
                    continue;
                }
                disk.access(head, start, lbn, sectors, op, scratch)?.end
            }
        };
        if best.is_none_or(|b| key < b.0) {
            best = Some((key, i, lbn, mv, wait));
        }
    }
    let Some((_, index, lbn, seek, rotational_latency)) = best else {
        return Err(LayoutError::EmptyCandidates { context: context.to_string() });
    };
    let access = disk.access(head, start, lbn, sectors, op, scratch)?;
    Ok(Selection { lbn, index, seek, rotational_latency, access, examined })
}

/// Local selection for a range write of `sectors` sectors: the candidate start with the least
/// positioning time.
///
/// # Errors
/// As [`select`].
pub fn select_write(
    disk: &Disk,
    head: HeadState,
    start: SimTime,
    candidates: &Candidates,
    sectors: u64,
    scratch: &mut Vec<TrackRun>,
) -> Result<Selection> {
    select(
        disk,
        head,
        start,
        candidates.starts(sectors),
        sectors,
        Op::Write,
        Criterion::Positioning,
        "range write",
        scratch,
    )
}

/// Flex read: the copy of a `sectors`-sector extent with the least positioning time.
///
/// # Errors
/// As [`select`].
pub fn select_read(
    disk: &Disk,
    head: HeadState,
    start: SimTime,
    copies: &[u64],
    sectors: u64,
    scratch: &mut Vec<TrackRun>,
) -> Result<Selection> {
    select(disk, head, start, copies.iter().copied(), sectors, Op::Read, Criterion::Positioning, "flex read", scratch)
}

/// A range write end to end: checks the request against the map, lets the device choose among its
/// candidates, and records the choice (freeing the unchosen candidates and the old copies).
///
/// # Errors
/// Any [`BlockMap::validate`] error (the map is unchanged), or a [`select`] error.
pub fn range_write(
    map: &mut BlockMap,
    disk: &Disk,
    head: HeadState,
    start: SimTime,
    req: &WriteRequest,
    scratch: &mut Vec<TrackRun>,
) -> Result<(Selection, Written)> {
    map.validate(req)?;
    let sectors = req.blocks * map.block_sectors();
    let sel = select_write(disk, head, start, &req.candidates, sectors, scratch)?;
    let written = map.write(req, sel.lbn)?;
    Ok((sel, written))
}

/// A flex read end to end: looks up every complete copy of the extent and lets the device choose.
///
/// # Errors
/// [`BlockMap::extent_copies`] errors; [`LayoutError::EmptyCandidates`] when no copy of the
/// whole extent is contiguous; [`select`] errors.
pub fn flex_read(
    map: &BlockMap,
    disk: &Disk,
    head: HeadState,
    start: SimTime,
    logical: u64,
    blocks: u64,
    scratch: &mut Vec<TrackRun>,
) -> Result<Selection> {
    let copies = map.extent_copies(logical, blocks)?;
    select_read(disk, head, start, &copies, blocks * map.block_sectors(), scratch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use freeblock_disk::library;

    #[test]
    fn picks_the_nearest_and_matches_the_access() {
        let disk = Disk::new(library::get("test").unwrap()).unwrap();
        let head = HeadState { cylinder: 10, surface: 0 };
        let cands: Vec<u64> = (0..6).map(|i| 100_000 + i * 50).collect();
        let mut scratch = Vec::new();
        for start in [0, 1_000_000, 3_333_333] {
            let s = select(&disk, head, start, cands.clone(), 8, Op::Write, Criterion::Positioning, "t", &mut scratch)
                .unwrap();
            let best = cands.iter().map(|&l| disk.positioning(head, start, l, Op::Write).unwrap()).min().unwrap();
            assert_eq!(s.positioning(), best);
            assert!(s.access.breakdown.seek + s.access.breakdown.rotational_latency >= s.positioning());
            assert_eq!(s.access.media_start, start + disk.overhead_ns(Op::Write) + s.positioning());
            let c = select(&disk, head, start, cands.clone(), 8, Op::Write, Criterion::Completion, "t", &mut scratch)
                .unwrap();
            assert!(c.access.end <= s.access.end);
        }
    }

    #[test]
    fn bad_candidates_are_named() {
        let disk = Disk::new(library::get("test").unwrap()).unwrap();
        let mut scratch = Vec::new();
        let cap = disk.capacity();
        let e = select_write(&disk, HeadState::default(), 0, &Candidates::discrete(vec![0, cap - 2]), 8, &mut scratch)
            .unwrap_err();
        assert!(matches!(e, LayoutError::CandidateOutside { what: "disk", .. }), "{e}");
        let e = select_read(&disk, HeadState::default(), 0, &[], 8, &mut scratch).unwrap_err();
        assert_eq!(e.to_string(), "flex read: the candidate list is empty");
    }
}
