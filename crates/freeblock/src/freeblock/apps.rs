//! Background applications: what registers blocks and what it does with them.
//!
//! An application owns one task of the [`super::BackgroundSets`]. It registers blocks when it
//! starts, is handed delivered blocks in batches, and may register more, abort or promote from
//! there. [`Scan`] is the data-mining / scrubbing scan of paper 000 §6: every application block of
//! a region once per pass, in whatever order the foreground lets the head go by; with a
//! `fraction` below 1 it is the sampling scan of Fig. 10, a pass ending as soon as *any* that
//! fraction of the blocks has been read (the rest are aborted).

use freeblock_disk::{Op, SimTime};
use serde::{Deserialize, Serialize};

use rangemap::RangeMap;

use super::error::{FreeblockError, Result};
use super::sets::{BackgroundSets, Delivery, TaskId};

/// A promoted block range on its way to the foreground queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Promoted {
    /// The task it belongs to.
    pub task: TaskId,
    /// First LBN.
    pub lbn: u64,
    /// Sectors.
    pub sectors: u64,
    /// Read or write.
    pub op: Op,
}

/// What an application may do when it is called.
pub struct TaskControl<'a> {
    pub(crate) sets: &'a mut BackgroundSets,
    pub(crate) task: TaskId,
    pub(crate) now: SimTime,
    pub(crate) promoted: &'a mut Vec<Promoted>,
    pub(crate) notify_after: &'a mut u64,
    pub(crate) max_request_sectors: u64,
}

impl TaskControl<'_> {
    /// The simulated time now, ns.
    #[must_use]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// This application's task.
    #[must_use]
    pub fn task(&self) -> TaskId {
        self.task
    }

    /// Registers `blocks` application blocks from LBN `lbn` (which must be block-aligned).
    ///
    /// # Errors
    /// As [`BackgroundSets::register`].
    pub fn register(&mut self, lbn: u64, blocks: u64) -> Result<u64> {
        self.sets.register(self.task, lbn, blocks)
    }

    /// Registers every whole application block of the disk; returns how many.
    ///
    /// # Errors
    /// As [`BackgroundSets::register`].
    pub fn register_whole_disk(&mut self) -> Result<u64> {
        self.sets.register_whole_disk(self.task)
    }

    /// Drops wanted sectors in `lbns` without delivering them.
    ///
    /// # Errors
    /// As [`BackgroundSets::abort`].
    pub fn abort(&mut self, lbns: std::ops::Range<u64>) -> Result<u64> {
        self.sets.abort(self.task, lbns)
    }

    /// Marks the wanted sectors in `lbns` urgent: the planner weighs each as
    /// [`super::sets::URGENT_WEIGHT`] ordinary ones until it is transferred. Returns the sectors
    /// newly marked.
    ///
    /// # Errors
    /// As [`BackgroundSets::mark_urgent`].
    pub fn mark_urgent(&mut self, lbns: std::ops::Range<u64>) -> Result<u64> {
        self.sets.mark_urgent(self.task, lbns)
    }

    /// Makes the wanted sectors in `lbns` foreground requests (contiguous ones merged); their
    /// blocks are delivered when the requests complete. Returns the number of requests.
    ///
    /// # Errors
    /// As [`BackgroundSets::promote`].
    pub fn promote(&mut self, lbns: std::ops::Range<u64>, op: Op) -> Result<usize> {
        let reqs = self.sets.promote(self.task, lbns, self.max_request_sectors)?;
        let n = reqs.len();
        self.promoted.extend(reqs.into_iter().map(|(lbn, sectors)| Promoted { task: self.task, lbn, sectors, op }));
        Ok(n)
    }

    /// Be called again as soon as `blocks` more blocks have been delivered (at most the
    /// engine's batch size).
    pub fn notify_after(&mut self, blocks: u64) {
        *self.notify_after = blocks.max(1);
    }

    /// Sectors still wanted.
    #[must_use]
    pub fn wanted_sectors(&self) -> u64 {
        self.sets.wanted_sectors(self.task)
    }
}

/// A background application.
pub trait BackgroundApp: Send {
    /// A short name for reports.
    fn name(&self) -> String;
    /// Whether it reads or writes.
    fn op(&self) -> Op {
        Op::Read
    }
    /// Its application block size, bytes.
    fn block_bytes(&self) -> u64;
    /// Called once, before the first foreground request.
    ///
    /// # Errors
    /// Registration errors.
    fn start(&mut self, ctl: &mut TaskControl<'_>) -> Result<()>;
    /// Called with delivered blocks, in delivery order.
    ///
    /// # Errors
    /// Registration errors.
    fn on_blocks(&mut self, ctl: &mut TaskControl<'_>, blocks: &[Delivery]) -> Result<()>;
    /// Whether it has nothing more to do (the run may stop when every application is done).
    fn is_done(&self) -> bool;
    /// Whether it never finishes on its own (an endless scan): the run must then have another
    /// end (a request count or a time limit), and idle-time work stops with the foreground.
    /// Default false.
    fn is_endless(&self) -> bool {
        false
    }
    /// What it achieved.
    fn report(&self) -> TaskReport;
}

/// One completed pass of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PassRecord {
    /// When it started, ns.
    pub start_ns: SimTime,
    /// When its last needed block arrived, ns.
    pub end_ns: SimTime,
    /// Blocks it needed.
    pub blocks: u64,
}

/// A point of a scan's progress: `fraction` of pass `pass` read at `time_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProgressPoint {
    /// Which pass (0-based).
    pub pass: u32,
    /// Simulated time, ns.
    pub time_ns: SimTime,
    /// Fraction of the pass's region delivered.
    pub fraction: f64,
}

/// What a background application achieved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskReport {
    /// Its name.
    pub name: String,
    /// Blocks delivered in all.
    pub blocks_delivered: u64,
    /// Bytes per block.
    pub block_bytes: u64,
    /// Completed passes.
    pub passes: Vec<PassRecord>,
    /// Progress at every percent of each pass.
    pub progress: Vec<ProgressPoint>,
}

/// One pass of a scan in progress.
#[derive(Debug, Clone, Copy)]
struct PassState {
    /// Which pass (0-based).
    index: u32,
    start: SimTime,
    /// Blocks it needs.
    needed: u64,
    /// Blocks it has.
    got: u64,
    /// The next whole percent of the region to record in the progress.
    next_percent: u64,
}

/// A scan of a region in application blocks: full (`fraction` 1) or sampling.
///
/// A repeated full scan may *overlap* its passes (`next_pass_at`, `passes_in_flight`): once the
/// newest pass has read that fraction of the region, a further pass starts and the blocks the
/// newest pass has already read are registered again, for it. A delivered block goes to the
/// oldest pass that still lacks it (and stays registered if a younger pass lacks it too). Each
/// block is thus read once per pass and every read serves a pass, but the sparse tail of the
/// oldest pass no longer leaves the rotational latency unused: the younger passes' blocks fill
/// it. Because a block goes to the oldest pass lacking it, a block read `n` times has exactly
/// passes `0..n`, so one count per block (kept as ranges of equal counts) says which passes
/// lack it, and the task's wanted set is what the newest pass lacks. The blocks the
/// [`URGENT_PASSES`] oldest passes lack are marked urgent at every pass end, so the planner
/// reaches for them first.
///
/// Why the three oldest and not only the oldest: with one, the passes in flight bunch up. Each
/// younger pass reads the easy blocks at once and then lacks exactly what the oldest lacks; when
/// the oldest ends, the next oldest has the same few hard blocks left, with nothing else wanted
/// for the windows to fill, and the scan idles through a tail at every pass end. Marking what the
/// next oldest passes lack too has the planner fetch those blocks while plenty else is wanted, so
/// the tails overlap the younger passes' reading. Measured on `freeblock bench`'s repeated scan
/// (see [`super::sets::URGENT_WEIGHT`] for the table): with the mark weighing 16, 83.8% of the
/// potential ended in complete passes with one pass marked, 90.3% with two, 93.5% with three.
#[derive(Debug, Clone)]
pub struct Scan {
    block_bytes: u64,
    /// Fraction of the blocks a pass needs (1 = every block).
    fraction: f64,
    /// Passes to make (0 = keep scanning).
    passes: u32,
    /// `(first LBN, blocks)`; `None` = the whole disk.
    region: Option<(u64, u64)>,
    /// From this LBN to the end of the disk (the block count is known once the disk is).
    to_end_from: Option<u64>,
    batch: u64,
    /// Fraction of the newest pass after which another starts (`None`: one at a time).
    next_pass_at: Option<f64>,
    /// Most passes in flight at once when overlapping.
    max_in_flight: usize,
    // State.
    region_blocks: u64,
    started: u32,
    /// The passes in flight, oldest first (never empty once started).
    in_flight: Vec<PassState>,
    /// When overlapping: how many times each block (index, LBN / block sectors) of the region
    /// has been read, i.e. the index of the oldest pass lacking it.
    reads: RangeMap<u64, u32>,
    done: Vec<PassRecord>,
    progress: Vec<ProgressPoint>,
    delivered: u64,
}

/// How many of the oldest passes in flight have what they lack marked urgent (see the
/// [`Scan`] docs for the measurements behind 3).
pub const URGENT_PASSES: u32 = 3;

/// Passes in flight when overlapping and no number is given.
pub const DEFAULT_PASSES_IN_FLIGHT: u32 = 2;

impl Scan {
    /// A scan of `region` (or the whole disk) in blocks of `block_bytes`, making `passes`
    /// passes (0 = endless), each needing `fraction` of the blocks. Hands blocks over in batches
    /// of `batch`.
    #[must_use]
    pub fn new(block_bytes: u64, fraction: f64, passes: u32, region: Option<(u64, u64)>, batch: u64) -> Self {
        Self {
            block_bytes,
            fraction: fraction.clamp(0.0, 1.0),
            passes,
            region,
            to_end_from: None,
            batch: batch.max(1),
            next_pass_at: None,
            max_in_flight: 1,
            region_blocks: 0,
            started: 0,
            in_flight: Vec::new(),
            reads: RangeMap::new(),
            done: Vec::new(),
            progress: Vec::new(),
            delivered: 0,
        }
    }

    /// Scans from `first_lbn` (block-aligned) to the last whole block of the disk instead.
    #[must_use]
    pub fn to_end_of_disk_from(mut self, first_lbn: u64) -> Self {
        self.region = None;
        self.to_end_from = Some(first_lbn);
        self
    }

    /// Overlaps passes: another starts once the newest has read `at` of the region (0 = right
    /// away), with at most `in_flight` passes (at least 2) under way. Full repeated scans only.
    ///
    /// # Errors
    /// [`FreeblockError::Application`] for a sampling scan, a single pass, `at` outside 0..=1
    /// or fewer than two passes in flight.
    pub fn overlapping(mut self, at: f64, in_flight: u32) -> Result<Self> {
        if !(0.0..=1.0).contains(&at) {
            return Err(FreeblockError::Application(format!("next_pass_at must be between 0 and 1, not {at}")));
        }
        if !(2..=super::engine::MAX_PASSES_IN_FLIGHT).contains(&in_flight) {
            return Err(FreeblockError::Application(format!(
                "passes_in_flight must be at least 2 and at most {} to overlap passes, not {in_flight}",
                super::engine::MAX_PASSES_IN_FLIGHT
            )));
        }
        if self.fraction < 1.0 || self.passes == 1 {
            return Err(FreeblockError::Application(
                "next_pass_at needs a full scan (fraction = 1) of more than one pass (passes = 0 or > 1)".into(),
            ));
        }
        self.next_pass_at = Some(at);
        self.max_in_flight = in_flight as usize;
        Ok(self)
    }

    fn more_passes(&self) -> bool {
        self.passes == 0 || self.started < self.passes
    }

    fn new_pass(&mut self, start: SimTime) -> PassState {
        let needed = ((self.region_blocks as f64 * self.fraction).ceil() as u64).clamp(1, self.region_blocks.max(1));
        self.started += 1;
        PassState { index: self.started - 1, start, needed, got: 0, next_percent: 1 }
    }

    fn begin_pass(&mut self, ctl: &mut TaskControl<'_>) -> Result<()> {
        if let Some(first) = self.to_end_from.take() {
            let capacity = ctl.sets.disk().capacity();
            let bs = ctl.sets.block_sectors(ctl.task)?;
            // Not even one whole block left after `first`: a scan of nothing would never end.
            if first >= capacity || (capacity - first) / bs == 0 {
                return Err(FreeblockError::OutOfRange { lbn: first, blocks: 1, block_sectors: bs, capacity });
            }
            self.region = Some((first, (capacity - first) / bs));
        }
        self.region_blocks = match self.region {
            Some((lbn, blocks)) => {
                ctl.register(lbn, blocks)?;
                blocks
            }
            None => ctl.register_whole_disk()?,
        };
        let pass = self.new_pass(ctl.now());
        self.in_flight = vec![pass];
        if self.next_pass_at.is_some() {
            let bs = ctl.sets.block_sectors(ctl.task)?;
            let region = self.region_lbns(ctl)?;
            self.reads = RangeMap::new();
            self.reads.insert(region.start / bs..region.end / bs, pass.index);
        }
        self.maybe_start_next(ctl)?;
        self.ask_again(ctl);
        Ok(())
    }

    /// Starts further passes while the newest has gone far enough and fewer than the most are
    /// in flight: what the newest pass has read (read more times than its index) is wanted
    /// again, for the one after.
    fn maybe_start_next(&mut self, ctl: &mut TaskControl<'_>) -> Result<()> {
        let Some(at) = self.next_pass_at else { return Ok(()) };
        while self.in_flight.len() < self.max_in_flight && self.more_passes() {
            let newest = self.in_flight.last().expect("a pass is in flight");
            if (newest.got as f64) < at * self.region_blocks as f64 {
                break;
            }
            let bs = ctl.sets.block_sectors(ctl.task)?;
            for (r, _) in self.reads.iter().filter(|(_, &n)| n > newest.index) {
                ctl.register(r.start * bs, r.end - r.start)?;
            }
            let pass = self.new_pass(ctl.now());
            self.in_flight.push(pass);
            if self.in_flight.len() == 2 {
                self.mark_lagging_urgent(ctl)?;
            }
        }
        Ok(())
    }

    /// Marks urgent what the [`URGENT_PASSES`] oldest passes in flight lack (never what only the
    /// newest lacks: it is behind no one), so the planner does not starve the blocks hardest to
    /// reach while younger passes' blocks are plentiful. Called when a second pass starts and at
    /// every pass end; a block read since loses its mark (it is registered again, unmarked).
    fn mark_lagging_urgent(&self, ctl: &mut TaskControl<'_>) -> Result<()> {
        let oldest = self.in_flight[0].index;
        let depth = URGENT_PASSES.min(self.in_flight.len() as u32 - 1).max(1);
        let bs = ctl.sets.block_sectors(ctl.task)?;
        for (r, _) in self.reads.iter().filter(|(_, &n)| n < oldest + depth) {
            ctl.mark_urgent(r.start * bs..r.end * bs)?;
        }
        Ok(())
    }

    fn ask_again(&mut self, ctl: &mut TaskControl<'_>) {
        let current = self.in_flight[0];
        let left = current.needed - current.got.min(current.needed);
        ctl.notify_after(if self.in_flight.len() > 1 { self.batch } else { self.batch.min(left.max(1)) });
    }

    /// Counts one block for `pass`, recording progress; true when that completes it.
    fn credit(pass: &mut PassState, region_blocks: u64, time: SimTime, progress: &mut Vec<ProgressPoint>) -> bool {
        pass.got += 1;
        while pass.next_percent <= 100 && pass.got * 100 >= pass.next_percent * region_blocks {
            progress.push(ProgressPoint { pass: pass.index, time_ns: time, fraction: pass.next_percent as f64 / 100.0 });
            pass.next_percent += 1;
        }
        pass.got == pass.needed
    }

    fn region_lbns(&self, ctl: &TaskControl<'_>) -> Result<std::ops::Range<u64>> {
        Ok(match self.region {
            Some((lbn, blocks)) => lbn..lbn + blocks * ctl.sets.block_sectors(ctl.task)?,
            None => 0..ctl.sets.disk().capacity(),
        })
    }
}

impl BackgroundApp for Scan {
    fn name(&self) -> String {
        if self.fraction >= 1.0 {
            "scan".into()
        } else {
            format!("sample {:.0}%", self.fraction * 100.0)
        }
    }

    fn block_bytes(&self) -> u64 {
        self.block_bytes
    }

    fn start(&mut self, ctl: &mut TaskControl<'_>) -> Result<()> {
        self.begin_pass(ctl)
    }

    fn on_blocks(&mut self, ctl: &mut TaskControl<'_>, blocks: &[Delivery]) -> Result<()> {
        self.delivered += blocks.len() as u64;
        let bs = ctl.sets.block_sectors(ctl.task)?;
        let mut pass_ended = false;
        for d in blocks {
            if self.in_flight[0].got >= self.in_flight[0].needed {
                break; // surplus of the batch that finished a sampling pass
            }
            let block = d.lbn / bs;
            // The oldest pass lacking it (the newest lacks every block delivered).
            let mut owner = 0;
            if self.next_pass_at.is_some() {
                let reads = self.reads.get(&block).copied().unwrap_or(self.in_flight[0].index);
                self.reads.insert(block..block + 1, reads + 1);
                owner = (reads.saturating_sub(self.in_flight[0].index) as usize).min(self.in_flight.len() - 1);
                if owner + 1 < self.in_flight.len() {
                    // A younger pass lacks it too: wanted again.
                    ctl.register(block * bs, 1)?;
                }
            }
            if Self::credit(&mut self.in_flight[owner], self.region_blocks, d.time, &mut self.progress) {
                // Passes end oldest first: a younger one lacks all the older one lacks.
                let c = self.in_flight[0];
                self.done.push(PassRecord { start_ns: c.start, end_ns: d.time, blocks: c.needed });
                if self.in_flight.len() > 1 {
                    self.in_flight.remove(0);
                    pass_ended = true;
                }
            }
        }
        let current = self.in_flight[0];
        if current.got >= current.needed {
            // A pass over with nothing overlapping it: a sampling pass leaves the rest of its
            // blocks unread; the next pass starts where it ended.
            let region = self.region_lbns(ctl)?;
            ctl.abort(region)?;
            if self.more_passes() {
                let end = self.done.last().map_or(ctl.now(), |p| p.end_ns);
                self.begin_pass(ctl)?;
                self.in_flight[0].start = end;
            }
        } else {
            self.maybe_start_next(ctl)?;
            if pass_ended {
                // Once the pass that replaces it has started, so that what the newest lacks
                // alone stays unmarked.
                self.mark_lagging_urgent(ctl)?;
            }
            self.ask_again(ctl);
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.passes != 0 && self.done.len() as u32 >= self.passes
    }

    fn is_endless(&self) -> bool {
        self.passes == 0
    }

    fn report(&self) -> TaskReport {
        TaskReport {
            name: self.name(),
            blocks_delivered: self.delivered,
            block_bytes: self.block_bytes,
            passes: self.done.clone(),
            progress: self.progress.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use freeblock_disk::library;

    use super::*;
    use crate::freeblock::sets::Route;

    /// Reads `blocks` (4 KB, from LBN 0) through the sets, as the planner's transfers would, and
    /// hands what they delivered to `scan`.
    fn read(scan: &mut Scan, sets: &mut BackgroundSets, task: TaskId, blocks: std::ops::Range<u64>) {
        let (mut promoted, mut notify) = (Vec::new(), 0);
        for b in blocks {
            sets.transferred(b * 8..(b + 1) * 8, 0, Route::Free, None);
            let delivered = sets.take_deliveries(task);
            let mut ctl = TaskControl { sets: &mut *sets, task, now: 0, promoted: &mut promoted, notify_after: &mut notify, max_request_sectors: 1024 };
            scan.on_blocks(&mut ctl, &delivered).unwrap();
        }
    }

    #[test]
    fn the_oldest_passes_lack_what_is_urgent_and_the_newest_alone_never() {
        let mut sets = BackgroundSets::new(library::media("atlas10k").unwrap());
        let task = sets.add_task(Op::Read, 4096).unwrap();
        // Ten blocks, three passes in flight, each next pass at once.
        let mut scan = Scan::new(4096, 1.0, 0, Some((0, 10)), 1).overlapping(0.0, 3).unwrap();
        let (mut promoted, mut notify) = (Vec::new(), 0);
        scan.start(&mut TaskControl { sets: &mut sets, task, now: 0, promoted: &mut promoted, notify_after: &mut notify, max_request_sectors: 1024 }).unwrap();
        // Passes 0, 1 and 2 under way; only what pass 0 lacks is urgent (pass 1 is the newest
        // when the mark is made): every block.
        assert_eq!(scan.in_flight.len(), 3);
        assert_eq!(sets.urgent_sectors(), 80);
        // Blocks 0..3 read three times (passes 0, 1, 2), 3..6 twice, 6..10 once: pass 0 ends.
        read(&mut scan, &mut sets, task, 0..3);
        read(&mut scan, &mut sets, task, 0..3);
        read(&mut scan, &mut sets, task, 0..3);
        read(&mut scan, &mut sets, task, 3..6);
        read(&mut scan, &mut sets, task, 3..6);
        read(&mut scan, &mut sets, task, 6..10);
        assert_eq!(scan.done.len(), 1, "pass 0 ended");
        assert_eq!(scan.in_flight.iter().map(|p| p.index).collect::<Vec<_>>(), [1, 2, 3]);
        // Pass 1 lacks 6..10 and pass 2 lacks 3..10 as well: 3..10 urgent, not only what the
        // oldest lacks; 0..3 only the newest pass (3) lacks, so they are wanted but not urgent.
        assert_eq!(sets.urgent_sectors(), 7 * 8);
        assert_eq!(sets.wanted_sectors(task), 10 * 8);
    }
}
