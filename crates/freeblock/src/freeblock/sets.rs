//! The registered background blocks: what every task still wants, and how it is spread over the
//! tracks so the planner can find it quickly.
//!
//! Each task keeps its wanted sectors as a set of disjoint LBN ranges (a whole-disk scan starts as
//! one range, and fragments only as free transfers take arcs out of it), plus the sectors promoted
//! to foreground requests and not yet served. Blocks are the task's application blocks, aligned to
//! their size from LBN 0; a block is delivered once, when the last of its sectors has been
//! transferred, by whatever route (free arc, foreground transfer, idle time, promotion).
//!
//! A task may mark some of its wanted sectors *urgent* (a repeated scan marks the blocks its oldest
//! three passes still lack): the planner then weighs each such sector as [`URGENT_WEIGHT`] (16)
//! ordinary ones, so a sector that has waited long is not passed over for a few more that have not.
//!
//! For the planner the sets also keep, summed over tasks, the weight of the wanted sectors of every
//! track, of every cylinder and of every group of [`GROUP`] cylinders (one per sector, more for an
//! urgent one): enough to skip empty tracks and to jump over empty stretches of the disk without
//! touching the range sets. A log of the last [`CHANGE_LOG`] tracks whose wanted sectors changed
//! lets the planner keep a track's per-sector weights between decisions and know when they went
//! stale.
//!
//! | per                | what                                   | bytes | 20 TB `ultrastar_hc560`      |
//! |--------------------|----------------------------------------|-------|------------------------------|
//! | track              | wanted weight (`u16`; heavier spill)   | 2     | 11.4 M tracks: 22.8 MB       |
//! | cylinder           | wanted weight, heaviest track          | 4 + 2 | 632,576 cylinders: 3.8 MB    |
//! | group of 64 cyl.   | wanted weight                          | 8     | 0.08 MB                      |
//! | change             | the track, in a ring of [`CHANGE_LOG`] | 4     | 16 KB                        |
//!
//! A track's weight fits two bytes unless several tasks pile up on it: a single task weighs at
//! most the urgent weight × the sectors of a track, and the urgent weight is capped per disk so
//! that this fits (14 × 4,547 = 63,658 on that drive). The few heavier tracks are kept in a side
//! map. The range sets themselves start at one range per task and grow as
//! free transfers cut arcs out of them. Before issue 35 a per-track `u32` weight and `u64`
//! version made 12 bytes a track (137 MB on the 20 TB drive, 74 MB on the 8 TB `ultrastar_he8`).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use freeblock_disk::{Disk, Op, SimTime};
use rangemap::RangeSet;

use super::error::{FreeblockError, Result};

/// Cylinders per summary group.
pub const GROUP: u32 = 64;

/// A per-track or per-cylinder weight too heavy for two bytes: the real one is elsewhere.
const SPILLED: u16 = u16::MAX;

/// Tracks remembered in the change log (16 KB). A reader that fell further behind than this
/// learns that it missed some, and forgets everything it kept.
pub const CHANGE_LOG: usize = 4096;

/// What an urgent wanted sector weighs in the planner's choice, in ordinary wanted sectors, on a
/// disk whose widest track times this fits a track's two-byte summary; a disk with wider tracks
/// gets the most that fits ([`BackgroundSets::urgent_weight`]: 14 on the 20 TB `ultrastar_hc560`,
/// 4,547 sectors), so one task's urgent marks never spill.
///
/// Measured on the repeated scan of `freeblock bench` (Atlas 10K, OLTP at MPL 20, FCFS,
/// `multi_track`, 8 passes in flight, next at half, 50,000 simulated s, seed 1; the
/// `repeated_scan` example), the share of the potential that ended in complete passes from the
/// first pass end with the passes in flight full, with what the oldest `n` passes lack marked
/// ([`super::apps::URGENT_PASSES`], now 3):
///
/// | weight | oldest pass only | two oldest passes | three oldest passes |
/// |---|---|---|---|
/// | 4 | 75.7% | 80.0%¹ | 83.6%¹ |
/// | 8 | | 82.4% | |
/// | 16 | 83.8% | 90.3% (counted from pass 8 on: 94.1%; 93.9%¹) | **93.5%** (from pass 8 on: 95.7%) |
/// | 32 | | 93.3% | |
/// | 64 | 88.2% | | |
/// | 256 | 89.4% (80,000 s) | | |
///
/// ¹ A first version that also marked every block when the second pass started (the marks differ
/// only until the passes in flight are full). The inventory (blocks read for passes under way)
/// was still filling in these runs, e.g. 5.27 → 6.08 passes in the 93.5% one (96.2% counting it).
///
/// A heavier mark lets the planner detour for the blocks that hold the oldest passes back while
/// the younger passes' blocks are plentiful, instead of leaving them to a tail at the end of the
/// pass when little else is wanted.
pub const URGENT_WEIGHT: u32 = 16;

/// Sectors of the disk's widest track (its widest zone's; 0 without zones).
fn widest_track(layout: &freeblock_disk::Layout) -> u64 {
    layout.zone_table().iter().map(|z| u64::from(z.2)).max().unwrap_or(0)
}

/// The parts of `set` inside `range`.
fn clipped(set: &RangeSet<u64>, range: &Range<u64>) -> Vec<Range<u64>> {
    set.overlapping(range).map(|r| r.start.max(range.start)..r.end.min(range.end)).collect()
}

/// The parts of `set` inside `range`, taken out of it.
fn cut(set: &mut RangeSet<u64>, range: &Range<u64>) -> Vec<Range<u64>> {
    let inside = clipped(set, range);
    if !inside.is_empty() {
        set.remove(range.clone());
    }
    inside
}

/// Total length of the union of `ranges` (sorted in place).
fn union_len(ranges: &mut [Range<u64>]) -> u64 {
    ranges.sort_unstable_by_key(|r| r.start);
    let mut total = 0;
    let mut covered_to = 0;
    for r in ranges.iter() {
        let start = r.start.max(covered_to);
        if r.end > start {
            total += r.end - start;
            covered_to = r.end;
        }
    }
    total
}

/// Identifies a registered task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct TaskId(pub u32);

/// How a block's last sector was transferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// In a foreground request's rotational latency: free.
    Free,
    /// Carried by a foreground transfer of the same sectors: free.
    Piggyback,
    /// During idle time: not free (a foreground arrival may wait for it).
    Idle,
    /// Promoted to a foreground request.
    Promoted,
}

/// One delivered application block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Delivery {
    /// First LBN of the block.
    pub lbn: u64,
    /// When its last sector passed under the head (or the promoted request completed), ns.
    pub time: SimTime,
    /// How.
    pub route: Route,
}

/// One task's registered blocks.
#[derive(Debug, Clone)]
struct TaskSet {
    op: Op,
    block_sectors: u64,
    wanted: RangeSet<u64>,
    /// Sectors taken out of `wanted` by promotion whose foreground request has not completed.
    promoted: RangeSet<u64>,
    wanted_sectors: u64,
    promoted_sectors: u64,
    /// The wanted sectors marked urgent (a subset of `wanted`).
    urgent: RangeSet<u64>,
    /// Delivered and not yet handed to the task.
    pending: Vec<Delivery>,
    delivered_blocks: u64,
}

/// Every task's wanted blocks plus the per-track summary the planner searches.
#[derive(Debug, Clone)]
pub struct BackgroundSets {
    disk: Arc<Disk>,
    surfaces: u32,
    sector_bytes: u64,
    tasks: Vec<Option<TaskSet>>,
    /// Per track: its wanted weight, or [`SPILLED`] when that does not fit a `u16` (then it is
    /// in `track_spill`). Two bytes a track: 23 MB for the 11.4 million tracks of a 20 TB drive.
    track_wanted: Vec<u16>,
    /// The wanted weights of the tracks too heavy for `track_wanted` (several tasks, urgent).
    track_spill: HashMap<u32, u32>,
    /// The last [`CHANGE_LOG`] tracks whose wanted sectors changed, in a ring, and how many
    /// changes there have been in all: the planner's kept weights of a track are good until the
    /// track shows up here (see [`BackgroundSets::changes_since`]).
    change_log: Vec<u32>,
    changes: u64,
    cylinder_wanted: Vec<u32>,
    /// Per cylinder: the weight of its heaviest track, [`SPILLED`] when that does not fit (the
    /// planner skips a cylinder's tracks at once when even that one cannot beat its best plan).
    cylinder_heaviest: Vec<u16>,
    group_wanted: Vec<u64>,
    total_wanted: u64,
    /// Urgent sectors over all tasks.
    total_urgent: u64,
    /// What an urgent sector weighs on this disk ([`URGENT_WEIGHT`], or less for wide tracks).
    urgent_weight: u32,
    write_tasks: u32,
    /// Scratch for [`BackgroundSets::transferred`] (kept to spare an allocation per transfer).
    served: Vec<Range<u64>>,
}

impl BackgroundSets {
    /// Empty sets for `disk`.
    #[must_use]
    pub fn new(disk: Arc<Disk>) -> Self {
        let layout = disk.layout();
        let (cylinders, surfaces) = (layout.cylinders(), layout.surfaces());
        let urgent_weight = URGENT_WEIGHT.min((u64::from(SPILLED - 1) / widest_track(layout).max(1)).max(1) as u32);
        Self {
            sector_bytes: u64::from(disk.spec().sector_bytes),
            track_wanted: vec![0; cylinders as usize * surfaces as usize],
            track_spill: HashMap::new(),
            change_log: vec![0; CHANGE_LOG],
            changes: 0,
            cylinder_wanted: vec![0; cylinders as usize],
            cylinder_heaviest: vec![0; cylinders as usize],
            group_wanted: vec![0; cylinders.div_ceil(GROUP) as usize],
            disk,
            surfaces,
            tasks: Vec::new(),
            total_wanted: 0,
            total_urgent: 0,
            urgent_weight,
            write_tasks: 0,
            served: Vec::new(),
        }
    }

    /// The most one task can add to a cylinder's summary weight: every sector of its widest
    /// cylinder, urgent.
    fn max_task_cylinder_weight(&self) -> u64 {
        (widest_track(self.disk.layout()) * u64::from(self.surfaces) * u64::from(self.urgent_weight)).max(1)
    }

    /// The disk.
    #[must_use]
    pub fn disk(&self) -> &Arc<Disk> {
        &self.disk
    }

    /// A new task whose blocks are `block_bytes` long, read or written in the background.
    ///
    /// # Errors
    /// [`FreeblockError::BlockSize`] unless `block_bytes` is a positive multiple of the sector size.
    pub fn add_task(&mut self, op: Op, block_bytes: u64) -> Result<TaskId> {
        if block_bytes == 0 || block_bytes % self.sector_bytes != 0 {
            return Err(FreeblockError::BlockSize { block_bytes, sector_bytes: self.sector_bytes });
        }
        // A cylinder's summary weight is a u32 summed over tasks: refuse the task that could
        // make it overflow (each task weighs at most the urgent weight per sector), here rather
        // than checking every update.
        let tasks = self.tasks.len() as u64 + 1;
        if tasks * self.max_task_cylinder_weight() > u64::from(u32::MAX) {
            return Err(FreeblockError::Unsupported(format!(
                "too many background tasks: task {} would let the wanted weight of a cylinder overflow its counter (at most {} tasks on this disk)",
                tasks - 1,
                u64::from(u32::MAX) / self.max_task_cylinder_weight()
            )));
        }
        self.write_tasks += u32::from(op == Op::Write);
        self.tasks.push(Some(TaskSet {
            op,
            block_sectors: block_bytes / self.sector_bytes,
            wanted: RangeSet::new(),
            promoted: RangeSet::new(),
            wanted_sectors: 0,
            promoted_sectors: 0,
            urgent: RangeSet::new(),
            pending: Vec::new(),
            delivered_blocks: 0,
        }));
        Ok(TaskId(self.tasks.len() as u32 - 1))
    }

    /// Removes a task and everything it still wants, without deliveries.
    ///
    /// # Errors
    /// [`FreeblockError::UnknownTask`].
    pub fn remove_task(&mut self, task: TaskId) -> Result<()> {
        let whole = 0..self.disk.capacity();
        self.abort(task, whole)?;
        let t = self.tasks[task.0 as usize].take().expect("checked by abort");
        self.write_tasks -= u32::from(t.op == Op::Write);
        Ok(())
    }

    fn task(&self, task: TaskId) -> Result<&TaskSet> {
        self.tasks.get(task.0 as usize).and_then(Option::as_ref).ok_or(FreeblockError::UnknownTask(task.0))
    }

    fn task_mut(&mut self, task: TaskId) -> Result<&mut TaskSet> {
        self.tasks.get_mut(task.0 as usize).and_then(Option::as_mut).ok_or(FreeblockError::UnknownTask(task.0))
    }

    /// Sectors per application block of `task`.
    ///
    /// # Errors
    /// [`FreeblockError::UnknownTask`].
    pub fn block_sectors(&self, task: TaskId) -> Result<u64> {
        Ok(self.task(task)?.block_sectors)
    }

    /// Registers `blocks` application blocks starting at LBN `lbn` for `task`. Blocks already
    /// registered stay as they are. Returns the number of sectors newly wanted.
    ///
    /// # Errors
    /// [`FreeblockError::Misaligned`] when `lbn` is not a multiple of the block size,
    /// [`FreeblockError::OutOfRange`] when the blocks run past the end of the disk,
    /// [`FreeblockError::UnknownTask`].
    pub fn register(&mut self, task: TaskId, lbn: u64, blocks: u64) -> Result<u64> {
        let capacity = self.disk.capacity();
        let t = self.task(task)?;
        let bs = t.block_sectors;
        if lbn % bs != 0 {
            return Err(FreeblockError::Misaligned { lbn, block_sectors: bs });
        }
        let end = blocks.checked_mul(bs).and_then(|n| n.checked_add(lbn));
        let end = match end {
            Some(e) if e <= capacity => e,
            _ => return Err(FreeblockError::OutOfRange { lbn, blocks, block_sectors: bs, capacity }),
        };
        if blocks == 0 {
            return Ok(0);
        }
        // The parts not already wanted or promoted.
        let mut new: Vec<Range<u64>> = t.wanted.gaps(&(lbn..end)).collect();
        if !t.promoted.is_empty() {
            new = new.into_iter().flat_map(|g| t.promoted.gaps(&g).collect::<Vec<_>>()).collect();
        }
        let mut added = 0;
        for r in new {
            added += r.end - r.start;
            self.count(&r, 1, true);
            let t = self.task_mut(task)?;
            t.wanted.insert(r);
        }
        let t = self.task_mut(task)?;
        t.wanted_sectors += added;
        self.total_wanted += added;
        Ok(added)
    }

    /// Registers every whole application block of the disk. Returns the number of blocks.
    ///
    /// # Errors
    /// As [`BackgroundSets::register`]; [`FreeblockError::OutOfRange`] when the disk holds no
    /// whole block (a scan of nothing would never finish its pass).
    pub fn register_whole_disk(&mut self, task: TaskId) -> Result<u64> {
        let block_sectors = self.block_sectors(task)?;
        let capacity = self.disk.capacity();
        let blocks = capacity / block_sectors;
        if blocks == 0 {
            return Err(FreeblockError::OutOfRange { lbn: 0, blocks: 1, block_sectors, capacity });
        }
        self.register(task, 0, blocks)?;
        Ok(blocks)
    }

    /// Marks `task`'s wanted sectors in `range` urgent (see [`URGENT_WEIGHT`],
    /// [`BackgroundSets::urgent_weight`]); they stay urgent
    /// until transferred, aborted or promoted. Returns the sectors newly marked.
    ///
    /// # Errors
    /// [`FreeblockError::UnknownTask`].
    pub fn mark_urgent(&mut self, task: TaskId, range: Range<u64>) -> Result<u64> {
        let t = self.task(task)?;
        let new: Vec<Range<u64>> = clipped(&t.wanted, &range).iter().flat_map(|w| t.urgent.gaps(w).collect::<Vec<_>>()).collect();
        let mut added = 0;
        for r in new {
            added += r.end - r.start;
            self.count(&r, self.urgent_weight - 1, true);
            self.task_mut(task)?.urgent.insert(r);
        }
        self.total_urgent += added;
        Ok(added)
    }

    /// What an urgent wanted sector weighs on this disk: [`URGENT_WEIGHT`], or the most that
    /// keeps a wholly urgent track of its widest zone within a two-byte track summary.
    #[must_use]
    pub fn urgent_weight(&self) -> u32 {
        self.urgent_weight
    }

    /// Wanted sectors marked urgent, over all tasks.
    #[must_use]
    pub fn urgent_sectors(&self) -> u64 {
        self.total_urgent
    }

    /// The most one wanted sector can weigh for one task (for bounds on a plan's weight).
    #[must_use]
    pub fn max_sector_weight(&self) -> u64 {
        if self.total_urgent > 0 { u64::from(self.urgent_weight) } else { 1 }
    }

    /// Adds (or takes away) `weight` per sector of `r` to the per-track summary.
    fn count(&mut self, r: &Range<u64>, weight: u32, add: bool) {
        // Track runs count a remapped LBN on its defective sector's track; the planner finds it
        // on the spare's track (`arc_lbns`), so it is moved there, or a task waiting for it would
        // send the planner to a track that can never deliver it. Moved after adding and before
        // taking away, so no count ever goes below zero.
        if !add {
            self.move_remapped(r, weight, false);
        }
        let surfaces = self.surfaces as usize;
        let disk = Arc::clone(&self.disk);
        disk.layout()
            .for_each_track_run(r.start, r.end - r.start, |run| {
                let n = run.lbns * u64::from(weight);
                let track = run.cylinder as usize * surfaces + run.surface as usize;
                let (c, g) = (run.cylinder as usize, (run.cylinder / GROUP) as usize);
                let now = self.track_weight(track);
                self.set_track_weight(track, if add { now + n as u32 } else { now - n as u32 });
                if add {
                    self.cylinder_wanted[c] += n as u32;
                    self.group_wanted[g] += n;
                } else {
                    self.cylinder_wanted[c] -= n as u32;
                    self.group_wanted[g] -= n;
                }
                self.refresh_heaviest(c);
            })
            .expect("ranges are inside the disk");
        if add {
            self.move_remapped(r, weight, true);
        }
    }

    /// Moves `weight` per remapped LBN of `r` from its defective sector's track to its spare's
    /// (`to_spare`), or back.
    fn move_remapped(&mut self, r: &Range<u64>, weight: u32, to_spare: bool) {
        let surfaces = self.surfaces as usize;
        let mut moves = Vec::new();
        self.disk.layout().for_each_remapped_lbn(r.start, r.end, |_, counted, actual| moves.push(if to_spare { (counted, actual) } else { (actual, counted) }));
        for ((c0, s0), (c1, s1)) in moves {
            let (t0, t1) = (c0 as usize * surfaces + s0 as usize, c1 as usize * surfaces + s1 as usize);
            self.set_track_weight(t0, self.track_weight(t0) - weight);
            self.set_track_weight(t1, self.track_weight(t1) + weight);
            self.cylinder_wanted[c0 as usize] -= weight;
            self.cylinder_wanted[c1 as usize] += weight;
            for c in [c0 as usize, c1 as usize] {
                self.refresh_heaviest(c);
            }
            self.group_wanted[(c0 / GROUP) as usize] -= u64::from(weight);
            self.group_wanted[(c1 / GROUP) as usize] += u64::from(weight);
        }
    }

    /// The wanted weight of track index `track`.
    #[inline]
    fn track_weight(&self, track: usize) -> u32 {
        match self.track_wanted[track] {
            SPILLED => self.track_spill[&(track as u32)],
            w => u32::from(w),
        }
    }

    /// Sets the wanted weight of track index `track`, and logs the change.
    fn set_track_weight(&mut self, track: usize, weight: u32) {
        if let Some(w) = u16::try_from(weight).ok().filter(|&w| w != SPILLED) {
            if self.track_wanted[track] == SPILLED {
                self.track_spill.remove(&(track as u32));
            }
            self.track_wanted[track] = w;
        } else {
            self.track_wanted[track] = SPILLED;
            self.track_spill.insert(track as u32, weight);
        }
        self.change_log[(self.changes % CHANGE_LOG as u64) as usize] = track as u32;
        self.changes += 1;
    }

    /// Recomputes the heaviest-track summary of cylinder `c`.
    fn refresh_heaviest(&mut self, c: usize) {
        let first = c * self.surfaces as usize;
        let heaviest = (first..first + self.surfaces as usize).map(|t| self.track_weight(t)).max().unwrap_or(0);
        self.cylinder_heaviest[c] = u16::try_from(heaviest).unwrap_or(SPILLED);
    }

    /// Drops `task`'s wanted sectors in `range` without delivering anything. Returns the number of
    /// sectors dropped.
    ///
    /// # Errors
    /// [`FreeblockError::UnknownTask`].
    pub fn abort(&mut self, task: TaskId, range: Range<u64>) -> Result<u64> {
        let dropped = self.take(task, &range)?;
        Ok(dropped.iter().map(|r| r.end - r.start).sum())
    }

    /// Promotes `task`'s wanted sectors in `range` to foreground requests: returns them as
    /// `(lbn, sectors)` requests, contiguous sectors merged into one request of at most
    /// `max_sectors`. Their blocks are delivered when [`BackgroundSets::complete_promoted`] is told
    /// the requests completed.
    ///
    /// # Errors
    /// [`FreeblockError::UnknownTask`].
    pub fn promote(&mut self, task: TaskId, range: Range<u64>, max_sectors: u64) -> Result<Vec<(u64, u64)>> {
        let taken = self.take(task, &range)?;
        let t = self.task_mut(task)?;
        let mut requests = Vec::new();
        for r in &taken {
            t.promoted.insert(r.clone());
            t.promoted_sectors += r.end - r.start;
            let mut at = r.start;
            while at < r.end {
                let n = (r.end - at).min(max_sectors.max(1));
                requests.push((at, n));
                at += n;
            }
        }
        Ok(requests)
    }

    /// A promoted request of `task` completed at `time`: delivers the blocks it finished.
    ///
    /// # Errors
    /// [`FreeblockError::UnknownTask`].
    pub fn complete_promoted(&mut self, task: TaskId, lbn: u64, sectors: u64, time: SimTime) -> Result<()> {
        let t = self.task_mut(task)?;
        let done = cut(&mut t.promoted, &(lbn..lbn + sectors));
        t.promoted_sectors -= done.iter().map(|r| r.end - r.start).sum::<u64>();
        Self::deliver(t, &done, time, Route::Promoted);
        Ok(())
    }

    /// Takes `range` out of `task`'s wanted set (and urgent set) and the summary; returns the
    /// pieces taken.
    fn take(&mut self, task: TaskId, range: &Range<u64>) -> Result<Vec<Range<u64>>> {
        let t = self.task_mut(task)?;
        let taken = cut(&mut t.wanted, range);
        let n: u64 = taken.iter().map(|r| r.end - r.start).sum();
        t.wanted_sectors -= n;
        let urgent = cut(&mut t.urgent, range);
        self.total_wanted -= n;
        for r in &taken {
            self.count(r, 1, false);
        }
        for r in &urgent {
            self.total_urgent -= r.end - r.start;
            self.count(r, self.urgent_weight - 1, false);
        }
        Ok(taken)
    }

    /// The media transferred LBNs `range` at `time` (the head passed over them by `route`):
    /// every task wanting any of them gets them, and blocks completed by them are delivered.
    /// `only` limits it to the tasks of one op: a foreground transfer passes through the drive's
    /// buffer and can serve read tasks (piggybacking), never background writes.
    ///
    /// Returns the sectors of `range` that served at least one task: media sectors, each counted
    /// once however many tasks wanted it (ten tasks scanning the same disk share one transfer;
    /// each task's own deliveries are in its report).
    pub fn transferred(&mut self, range: Range<u64>, time: SimTime, route: Route, only: Option<Op>) -> u64 {
        if self.total_wanted == 0 {
            return 0;
        }
        // The pieces taken, over all tasks; their union is what the media transfer served.
        let mut served = std::mem::take(&mut self.served);
        served.clear();
        let mut tasks_served = 0u32;
        for i in 0..self.tasks.len() {
            let Some(t) = &self.tasks[i] else { continue };
            if only.is_some_and(|o| o != t.op) || t.wanted_sectors == 0 {
                continue;
            }
            let taken = self.take(TaskId(i as u32), &range).expect("task exists");
            if taken.is_empty() {
                continue;
            }
            tasks_served += 1;
            served.extend(taken.iter().cloned());
            let t = self.tasks[i].as_mut().expect("task exists");
            Self::deliver(t, &taken, time, route);
        }
        let sectors = if tasks_served <= 1 {
            // One task's pieces are disjoint already (the common case: nothing to merge).
            served.iter().map(|r| r.end - r.start).sum()
        } else {
            union_len(&mut served)
        };
        self.served = served;
        sectors
    }

    /// Delivers the blocks touched by `taken` that have nothing left to transfer.
    fn deliver(t: &mut TaskSet, taken: &[Range<u64>], time: SimTime, route: Route) {
        let bs = t.block_sectors;
        let mut last_block = u64::MAX;
        for r in taken {
            let first = r.start / bs;
            let end = r.end.div_ceil(bs);
            for b in first..end {
                if b == last_block {
                    continue;
                }
                last_block = b;
                let block = b * bs..(b + 1) * bs;
                // Blocks wholly inside the piece just taken are complete; edge blocks may still
                // have sectors wanted or promoted elsewhere.
                let inside = block.start >= r.start && block.end <= r.end;
                if inside || (!t.wanted.overlaps(&block) && !t.promoted.overlaps(&block)) {
                    t.pending.push(Delivery { lbn: block.start, time, route });
                    t.delivered_blocks += 1;
                }
            }
        }
    }

    /// Deliveries of `task` waiting to be handed over.
    #[must_use]
    pub fn pending(&self, task: TaskId) -> usize {
        self.task(task).map_or(0, |t| t.pending.len())
    }

    /// Hands over `task`'s waiting deliveries.
    pub fn take_deliveries(&mut self, task: TaskId) -> Vec<Delivery> {
        self.task_mut(task).map(|t| std::mem::take(&mut t.pending)).unwrap_or_default()
    }

    /// Sectors `task` still wants (not counting promoted ones in flight).
    #[must_use]
    pub fn wanted_sectors(&self, task: TaskId) -> u64 {
        self.task(task).map_or(0, |t| t.wanted_sectors)
    }

    /// Whether `task` has nothing left to transfer (wanted or promoted).
    #[must_use]
    pub fn is_idle(&self, task: TaskId) -> bool {
        self.task(task).map_or(true, |t| t.wanted_sectors == 0 && t.promoted_sectors == 0)
    }

    /// Blocks delivered to `task` so far.
    #[must_use]
    pub fn delivered_blocks(&self, task: TaskId) -> u64 {
        self.task(task).map_or(0, |t| t.delivered_blocks)
    }

    /// Sectors wanted by all tasks (a sector two tasks want counts twice).
    #[must_use]
    pub fn total_wanted(&self) -> u64 {
        self.total_wanted
    }

    /// Whether any task writes: background moves then settle for writing.
    #[must_use]
    pub fn any_writes(&self) -> bool {
        self.write_tasks > 0
    }

    /// Weight of the wanted sectors on track `(cylinder, surface)` (one per sector, more if
    /// urgent), summed over tasks.
    #[inline]
    #[must_use]
    pub fn track_wanted(&self, cylinder: u32, surface: u32) -> u32 {
        self.track_weight(cylinder as usize * self.surfaces as usize + surface as usize)
    }

    /// How many changes to tracks' wanted sectors there have been since the sets were made (each
    /// change of one track counts one).
    #[inline]
    #[must_use]
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The track indices (`cylinder × surfaces + surface`) whose wanted sectors changed since
    /// [`BackgroundSets::changes`] was `since`, oldest first and possibly repeated; `None` when
    /// more than [`CHANGE_LOG`] changes have happened since (the log no longer holds them all).
    /// What [`BackgroundSets::mark_wanted`] gives for a track's sectors stays the same while the
    /// track does not appear here.
    #[must_use]
    pub fn changes_since(&self, since: u64) -> Option<impl Iterator<Item = u32> + '_> {
        (self.changes - since <= CHANGE_LOG as u64).then(|| (since..self.changes).map(|i| self.change_log[(i % CHANGE_LOG as u64) as usize]))
    }

    /// Weight of the wanted sectors on a cylinder, summed over tasks.
    #[inline]
    #[must_use]
    pub fn cylinder_wanted(&self, cylinder: u32) -> u32 {
        self.cylinder_wanted[cylinder as usize]
    }

    /// Weight of the wanted sectors of the heaviest track of a cylinder.
    #[inline]
    #[must_use]
    pub fn cylinder_heaviest_track(&self, cylinder: u32) -> u32 {
        match self.cylinder_heaviest[cylinder as usize] {
            SPILLED => (0..self.surfaces).map(|s| self.track_wanted(cylinder, s)).max().unwrap_or(0),
            w => u32::from(w),
        }
    }

    /// Weight of the wanted sectors in the group of [`GROUP`] cylinders holding `cylinder`.
    #[inline]
    #[must_use]
    pub fn group_wanted(&self, cylinder: u32) -> u64 {
        self.group_wanted[(cylinder / GROUP) as usize]
    }

    /// Adds, for each sector of an arc, its weight summed over the tasks wanting it (one per
    /// task, [`BackgroundSets::urgent_weight`] where urgent): `pieces` are `(lbns, position)` as
    /// [`freeblock_disk::Layout::arc_lbns`] gives them; `weights[position]` is incremented. Each
    /// weight is multiplied by `scale` on the way in (the planner's balancing: one pass over the
    /// arc instead of a second to scale it).
    pub fn mark_wanted(&self, pieces: &[(Range<u64>, u32)], weights: &mut [u16], scale: u16) {
        fn add(set: &RangeSet<u64>, pieces: &[(Range<u64>, u32)], weights: &mut [u16], weight: u16) {
            for (r, position) in pieces {
                for w in set.overlapping(r) {
                    let (a, b) = (w.start.max(r.start), w.end.min(r.end));
                    let p0 = *position as usize + (a - r.start) as usize;
                    for x in &mut weights[p0..p0 + (b - a) as usize] {
                        *x = x.saturating_add(weight);
                    }
                }
            }
        }
        for t in self.tasks.iter().flatten() {
            if t.wanted_sectors == 0 {
                continue;
            }
            add(&t.wanted, pieces, weights, scale);
            if !t.urgent.is_empty() {
                // Saturating, as every increment is: a heavy mark times a large scale does not fit.
                add(&t.urgent, pieces, weights, ((self.urgent_weight - 1) as u16).saturating_mul(scale));
            }
        }
    }

    /// Bytes of memory the sets hold: the summaries plus an estimate of the range sets (each
    /// stored range costs at most 48 bytes in the B-tree, with its share of node overhead).
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        let summary = self.track_wanted.capacity() * 2
            + self.track_spill.capacity() * 9
            + self.change_log.capacity() * 4
            + self.cylinder_wanted.capacity() * 4
            + self.cylinder_heaviest.capacity() * 2
            + self.group_wanted.capacity() * 8;
        let ranges: usize = self.tasks.iter().flatten().map(|t| t.wanted.iter().count() + t.promoted.iter().count() + t.urgent.iter().count()).sum();
        (summary + ranges * 48) as u64
    }

    /// Number of disjoint wanted ranges over all tasks (how fragmented the sets are).
    #[must_use]
    pub fn ranges(&self) -> u64 {
        self.tasks.iter().flatten().map(|t| t.wanted.iter().count() as u64).sum()
    }
}
