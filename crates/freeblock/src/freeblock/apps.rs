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

use super::error::Result;
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

/// A scan of a region in application blocks: full (`fraction` 1) or sampling.
#[derive(Debug, Clone)]
pub struct Scan {
    block_bytes: u64,
    /// Fraction of the blocks a pass needs (1 = every block).
    fraction: f64,
    /// Passes to make (0 = keep scanning).
    passes: u32,
    /// `(first LBN, blocks)`; `None` = the whole disk.
    region: Option<(u64, u64)>,
    batch: u64,
    // State.
    region_blocks: u64,
    needed: u64,
    got: u64,
    pass_start: SimTime,
    next_percent: u64,
    done: Vec<PassRecord>,
    progress: Vec<ProgressPoint>,
    delivered: u64,
}

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
            batch: batch.max(1),
            region_blocks: 0,
            needed: 0,
            got: 0,
            pass_start: 0,
            next_percent: 1,
            done: Vec::new(),
            progress: Vec::new(),
            delivered: 0,
        }
    }

    fn begin_pass(&mut self, ctl: &mut TaskControl<'_>) -> Result<()> {
        self.region_blocks = match self.region {
            Some((lbn, blocks)) => {
                ctl.register(lbn, blocks)?;
                blocks
            }
            None => ctl.register_whole_disk()?,
        };
        self.needed = ((self.region_blocks as f64 * self.fraction).ceil() as u64).clamp(1, self.region_blocks.max(1));
        self.got = 0;
        self.next_percent = 1;
        self.pass_start = ctl.now();
        ctl.notify_after(self.batch.min(self.needed));
        Ok(())
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
        let pass = self.done.len() as u32;
        for d in blocks {
            if self.got >= self.needed {
                break; // surplus of the batch that finished the pass
            }
            self.got += 1;
            while self.next_percent <= 100 && self.got * 100 >= self.next_percent * self.region_blocks {
                self.progress.push(ProgressPoint { pass, time_ns: d.time, fraction: self.next_percent as f64 / 100.0 });
                self.next_percent += 1;
            }
            if self.got == self.needed {
                self.done.push(PassRecord { start_ns: self.pass_start, end_ns: d.time, blocks: self.needed });
            }
        }
        if self.got >= self.needed {
            // A sampling pass leaves the rest of its blocks unread.
            let region = self.region_lbns(ctl)?;
            ctl.abort(region)?;
            if self.passes == 0 || (self.done.len() as u32) < self.passes {
                let end = self.done.last().map_or(ctl.now(), |p| p.end_ns);
                self.begin_pass(ctl)?;
                self.pass_start = end;
            }
        } else {
            ctl.notify_after(self.batch.min(self.needed - self.got));
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.passes != 0 && self.done.len() as u32 >= self.passes
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
