//! The cleaners: which segments to clean, and the foreground cleaner that every kind falls back
//! on when free segments run out.

use serde::{Deserialize, Serialize};

use super::error::LfsError;
use super::log::{Flushed, Log};

/// How segments are cleaned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CleanerKind {
    /// Paper 000's ORIGINAL: LLD's cleaner with cost-benefit selection, in the foreground, when
    /// free segments drop below `min_free`.
    Original,
    /// Paper 000's FREEBLOCK: below a higher threshold, several segments' summaries and live
    /// blocks are read with free bandwidth (in any order) and the live blocks appended to the
    /// segment being filled; the foreground cleaner stays as the fallback.
    Freeblock,
    /// Ours: FREEBLOCK whose reads are also served in idle time (the freeblock subsystem's
    /// idle-time service, which the engine's `[freeblock]` table turns on with
    /// `idle_after_ms`), so the gaps between requests clean too. `repro lfs-cleaning` runs it
    /// with [`FreeCleaning::ours`].
    FreeblockIdle,
}

impl CleanerKind {
    /// Every kind.
    pub const ALL: [CleanerKind; 3] = [CleanerKind::Original, CleanerKind::Freeblock, CleanerKind::FreeblockIdle];

    /// Whether background (free) cleaning runs.
    #[must_use]
    pub fn cleans_free(self) -> bool {
        !matches!(self, CleanerKind::Original)
    }

    /// The name used in reports.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            CleanerKind::Original => "ORIGINAL",
            CleanerKind::Freeblock => "FREEBLOCK",
            CleanerKind::FreeblockIdle => "FREEBLOCK+IDLE (ours)",
        }
    }
}

/// The background cleaner's settings (FREEBLOCK kinds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FreeCleaning {
    /// Start cleaning with free bandwidth when fewer segments than this are free. Default 24.
    pub below_free: u32,
    /// Segments being cleaned at once (more gives the freeblock planner more choice). Default 8.
    pub parallel: u32,
    /// Idle time before idle-time service starts, ms (FREEBLOCK+IDLE only). Default 1.
    pub idle_after_ms: f64,
    /// Keep the blocks read from a segment in memory until all its reads are in, then move
    /// them together (ours), instead of moving each as it arrives (the paper's). Moving early
    /// spends free segments on the copies before the segments they came from are free, which
    /// bounds how many segments can be cleaned at once; holding them costs memory instead (up
    /// to `parallel` segments). Default false.
    pub hold_until_read: bool,
    /// When free segments run out and the foreground cleaner must run, it first takes over the
    /// segments being read free, fewest reads outstanding first: their outstanding free reads
    /// are withdrawn and only those blocks read in the foreground (joined into one read where
    /// that is cheaper), so a segment waiting on its last few blocks is freed for a few small
    /// reads instead of a whole-segment read of another (ours). False: the foreground cleaner
    /// keeps off them (the paper does not say what it does). Default false.
    pub finish_in_foreground: bool,
    /// How the free cleaner chooses its segments. Default cost-benefit (the paper's).
    pub choose: Choice,
    /// Write the cleaned blocks with free bandwidth too (ours+FW), into up to this many free
    /// segments reserved as cleaning destinations at once: a segment's blocks, once all are read
    /// (with `hold_until_read`), each get a slot of a destination and a free write there, in
    /// any order; a full destination's summary is written free as well, and only when every
    /// write of it is on the media does the map point the blocks there (those still live where
    /// they were read), in one commit. When the foreground cleaner must run, it first settles
    /// the destinations, their outstanding free writes withdrawn: each is closed (the missing
    /// slots and the summary written in the foreground, the map committed) or given up (its live
    /// blocks appended to the segment being filled), whichever costs the foreground less. 0 (the
    /// default): cleaned blocks go to the segment being filled, a foreground write (the paper's,
    /// and ours).
    #[serde(skip_serializing_if = "super::is_zero")]
    pub free_write_segments: u32,
    /// Read ahead of need (ours, issue 33): free reads of up to `parallel` segments run at all
    /// times, not only once free segments are short, and a segment whose reads are all in waits,
    /// its blocks held, until free segments drop below `below_free`; then the waiting segments
    /// with the fewest live blocks are moved first, and the foreground cleaner, when it must run,
    /// takes them before any it would have to read. Reading is decoupled from cleaning: the
    /// wanted set stays large (free bandwidth as a scan gets it) while what is cleaned is still
    /// the emptiest at the moment space is needed. Needs `hold_until_read`. Default false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_ahead: bool,
}

/// How the free cleaner chooses the segments it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// Cost-benefit, `(1 − u)·age/(1 + u)` ([`Log::cost_benefit`]), as the foreground cleaner
    /// (the paper's).
    #[default]
    CostBenefit,
    /// Fewest live blocks first ([`Log::least_live`]): a free read costs nothing, so what
    /// cleaning a segment costs is the live blocks written again and the wait for each to pass
    /// under the head; the segment with the fewest is the cheapest to free.
    LeastLive,
}

impl Default for FreeCleaning {
    fn default() -> Self {
        Self { below_free: 24, parallel: 8, idle_after_ms: 1.0, hold_until_read: false, finish_in_foreground: false, choose: Choice::CostBenefit, free_write_segments: 0, read_ahead: false }
    }
}

impl FreeCleaning {
    /// Ours: 128 segments read free at once, those with the fewest live blocks, each one's
    /// blocks held until all are in, and the foreground cleaner taking over the segments nearest
    /// done when it must run. Holding the blocks keeps the copies from spending free segments
    /// before their sources are free, so many segments can be read at once; taking over frees a
    /// segment for the few blocks it still misses; the fewest live blocks are the fewest to wait
    /// for and to write again. Measured against the paper's way in docs/lfs.md.
    #[must_use]
    pub fn ours() -> Self {
        Self { parallel: 128, hold_until_read: true, finish_in_foreground: true, choose: Choice::LeastLive, ..Self::default() }
    }

    /// Ours reading ahead ([`FreeCleaning::read_ahead`]): `parallel` segments, the fewest live
    /// blocks first, read free at all times and moved only when space is needed.
    #[must_use]
    pub fn ours_read_ahead(parallel: u32) -> Self {
        Self { parallel, read_ahead: true, ..Self::ours() }
    }

    /// Ours+FW: ours, with the cleaned blocks written free as well, into two destination
    /// segments at once ([`FreeCleaning::free_write_segments`]).
    #[must_use]
    pub fn ours_free_writes() -> Self {
        Self { free_write_segments: 2, ..Self::ours() }
    }
}

/// One I/O the cleaner or a segment write needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogIo {
    /// A segment written (one I/O of the whole segment).
    Write(Flushed),
    /// A whole segment read by the foreground cleaner.
    CleanRead {
        /// The segment.
        segment: u32,
    },
    /// Part of a segment read by the foreground cleaner: what free reads had not brought yet of
    /// a segment the free cleaner was reading.
    CleanReadPart {
        /// First sector.
        lbn: u64,
        /// Sectors.
        sectors: u64,
    },
}

/// A segment the foreground cleaner takes over from the free cleaner, and the reads that
/// finish it (only its blocks free reads have not brought yet).
pub type Finish = (u32, Vec<LogIo>);

/// The foreground cleaner: writes the segment being filled if it holds anything, then cleans
/// segments chosen by cost-benefit — reading each whole and appending its live blocks to the
/// segment being filled, writing that whenever it is full — until `clean_until` segments are
/// free. Every I/O it needs is pushed to `out`, in order.
///
/// It starts with at least one free segment for the first write, and each later write carries
/// the last blocks of at least one cleaned segment (a segment's live blocks fit in one), so a
/// write never finds the log without a free segment.
///
/// On a nearly full log `clean_until` may be more than can be had: the cleaner then stops with
/// what it has, as long as more than `min_free` segments are free.
///
/// # Errors
/// [`LfsError::OutOfSpace`] when no segment has a dead block to gain and no more than
/// `min_free` segments are free; a segment write's error.
pub fn clean_foreground(log: &mut Log, out: &mut Vec<LogIo>) -> Result<u32, LfsError> {
    clean_foreground_avoiding(log, out, &|_| false)
}

/// [`clean_foreground`], passing over the segments `avoid` names while another segment has a
/// dead block to gain: the free cleaner's segments, whose reads are registered with freeblock
/// and cannot be withdrawn. Cleaning one of them in the foreground makes every block those
/// reads bring back dead on arrival, free bandwidth spent for nothing (measured at 85%: half
/// the blocks read free; see docs/lfs.md).
///
/// # Errors
/// As [`clean_foreground`].
pub fn clean_foreground_avoiding(log: &mut Log, out: &mut Vec<LogIo>, avoid: &dyn Fn(u32) -> bool) -> Result<u32, LfsError> {
    clean_foreground_finishing(log, out, avoid, &mut |_| Ok(None))
}

/// [`clean_foreground_avoiding`] that first finishes segments the free cleaner has partly read:
/// `finish` names the next one to take over and the reads of what is still missing (it
/// withdraws those free reads), or `None` when no such segment is left; its live blocks are
/// then appended like any victim's; an error from `finish` stops the cleaner. A segment waiting on a few blocks is freed for a few small
/// reads instead of a whole-segment read of another (ours, see docs/lfs.md).
///
/// # Errors
/// As [`clean_foreground`].
pub fn clean_foreground_finishing(log: &mut Log, out: &mut Vec<LogIo>, avoid: &dyn Fn(u32) -> bool, finish: &mut dyn FnMut(&Log) -> Result<Option<Finish>, LfsError>) -> Result<u32, LfsError> {
    let target = log.config().clean_until;
    let data = log.config().data_blocks();
    if let Some(f) = log.flush()? {
        out.push(LogIo::Write(f));
    }
    let mut cleaned = 0;
    // At most one write for the segments emptied in memory (below): it frees all of them.
    let mut flushed_for_emptied = false;
    while log.free_segments() < target {
        if log.open_full() {
            let f = log.flush()?.expect("a full segment has blocks");
            out.push(LogIo::Write(f));
            continue;
        }
        if let Some((segment, reads)) = finish(log)? {
            out.extend(reads);
            relocate_live(log, segment, out)?;
            cleaned += 1;
            continue;
        }
        let preferred = log.cost_benefit(1, avoid).first().copied().filter(|&s| log.live(s) < data);
        let Some(victim) = preferred.or_else(|| log.cost_benefit(1, &|_| false).first().copied()) else {
            // Everything live is in memory: writing it frees what it came from.
            match log.flush()? {
                Some(f) => {
                    out.push(LogIo::Write(f));
                    continue;
                }
                None => return out_of_space(log).map(|()| cleaned),
            }
        };
        if log.live(victim) >= data {
            // Nothing dead left on the disk but what segments emptied in memory hold (taken over
            // from the free cleaner, say): writing the segment being filled frees them. (Only
            // then: a partial write that frees nothing spends a free segment for nothing.)
            if !flushed_for_emptied && log.emptied_in_memory() > 0 {
                flushed_for_emptied = true;
                if let Some(f) = log.flush()? {
                    out.push(LogIo::Write(f));
                    continue;
                }
            }
            return out_of_space(log).map(|()| cleaned);
        }
        out.push(LogIo::CleanRead { segment: victim });
        relocate_live(log, victim, out)?;
        cleaned += 1;
    }
    Ok(cleaned)
}

/// Appends `segment`'s live blocks to the segment being filled, writing it whenever it is full.
fn relocate_live(log: &mut Log, segment: u32, out: &mut Vec<LogIo>) -> Result<(), LfsError> {
    for (logical, lbn) in log.live_in(segment) {
        if log.open_full() {
            let f = log.flush()?.expect("a full segment has blocks");
            out.push(LogIo::Write(f));
        }
        log.relocate(logical, lbn)?;
    }
    Ok(())
}

/// The cleaner can gain nothing more: enough if the writes still have their reserve.
fn out_of_space(log: &Log) -> Result<(), LfsError> {
    if log.free_segments() > log.config().min_free {
        return Ok(());
    }
    Err(LfsError::OutOfSpace { free: log.free_segments(), live_blocks: log.live_blocks(), data_blocks: log.config().capacity_blocks() })
}
