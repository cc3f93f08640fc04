//! The log-structured layout as a policy of the one engine: requests go through the buffer cache
//! and the segment being filled; segment writes, cache misses and foreground cleaning become
//! parts of the request that needs them (it waits for them, as a synchronous file system would);
//! free cleaning reads are the policy's own [`Service::Free`] I/O.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use freeblock_disk::{Op, SimTime};
use serde::Serialize;

use super::cache::BufferCache;
use super::cleaner::{clean_foreground_finishing, Choice, CleanerKind, Finish, FreeCleaning, LogIo};
use super::error::LfsError;
use super::log::{Found, Log};
use super::LfsConfig;
use crate::layout::error::{LayoutError, Result};
use crate::layout::policy::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo, Service};

/// Deletes a workload hands the layout: the engine's requests are reads and writes, so a file
/// system's "these blocks are free now" (a block device's TRIM) travels beside them. The policy
/// applies what is queued before it translates the next request.
#[derive(Debug, Clone, Default)]
pub struct TrimQueue(Arc<Mutex<Vec<(u64, u64)>>>);

impl TrimQueue {
    /// Queues a delete of `blocks` logical blocks from `logical`.
    pub fn push(&self, logical: u64, blocks: u64) {
        self.0.lock().expect("the trim queue is never poisoned").push((logical, blocks));
    }

    fn drain(&self) -> Vec<(u64, u64)> {
        std::mem::take(&mut *self.0.lock().expect("the trim queue is never poisoned"))
    }
}

const KIND_SHIFT: u32 = 56;
const LOW: u64 = (1 << KIND_SHIFT) - 1;
/// A cache miss.
const TAG_READ: u64 = 1;
/// A segment write a request waits for (low bits: cleaned blocks in it).
const TAG_WRITE: u64 = 2;
/// A foreground cleaner's segment read.
const TAG_CLEAN_READ: u64 = 3;
/// A free read of a segment's summary (low bits: the segment).
const TAG_FREE_SUMMARY: u64 = 4;
/// A free read of a live block (low bits: the read's id).
const TAG_FREE_RUN: u64 = 5;
/// A segment write that free cleaning filled (low bits: cleaned blocks in it).
const TAG_FREE_WRITE: u64 = 6;
/// The summary block of a flushed partial segment, written beside its filled slots.
const TAG_SUMMARY_WRITE: u64 = 7;
/// A free write of a cleaned block to a slot of a cleaning destination (low bits: the write's
/// id).
const TAG_DEST_WRITE: u64 = 8;
/// A cleaning destination's summary, written free (low bits: the segment).
const TAG_DEST_SUMMARY: u64 = 9;
/// The foreground's write of what a cleaning destination still missed when it was closed.
const TAG_DEST_CLOSE: u64 = 10;

/// A segment write's low bits: its sequence number above the cleaned blocks in it.
const SEQ_SHIFT: u32 = 16;
const CLEANED: u64 = (1 << SEQ_SHIFT) - 1;

fn tag(kind: u64, low: u64) -> u64 {
    kind << KIND_SHIFT | (low & LOW)
}

/// Counts of what the layout did, for reports and the reproduction.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LfsStats {
    /// Requests translated (all of them).
    pub requests: u64,
    /// Blocks read that the segment being filled or the cache held.
    pub read_hits: u64,
    /// Blocks read from the disk.
    pub read_misses: u64,
    /// Segment writes.
    pub segment_writes: u64,
    /// Foreground cleaner runs.
    pub foreground_cleanings: u64,
    /// Segments the foreground cleaner read.
    pub foreground_segments: u64,
    /// Segments whose summary free cleaning read.
    pub free_segments: u64,
    /// Blocks free cleaning moved.
    pub free_blocks_moved: u64,
    /// Blocks free cleaning read that were dead by then.
    pub free_blocks_dead: u64,
    /// Blocks free cleaning read but left (no room without the last free segments).
    pub free_blocks_left: u64,
    /// Segments the foreground cleaner took over from free cleaning, reading only what free
    /// reads had not brought ([`FreeCleaning::finish_in_foreground`]).
    pub finished_segments: u64,
    /// Blocks (summaries included) those take-overs read in the foreground.
    pub finished_blocks_read: u64,
    /// Segments read ahead whose held blocks were let go because emptier segments had appeared
    /// ([`FreeCleaning::read_ahead`]).
    pub read_ahead_dropped: u64,
    /// Live blocks registered for free reads (what free cleaning asked freeblock for).
    pub free_blocks_wanted: u64,
    /// Free reads registered (summaries and runs of live blocks).
    pub free_reads: u64,
    /// Measured phase: blocks free cleaning read (moved, dead or left).
    pub measured_free_blocks_read: u64,
    /// Measured phase: simulated ns from its first request to its last event.
    pub measured_ns: u64,
    /// Measured phase: simulated ns during which free cleaning had reads registered (free
    /// bandwidth can only be delivered then; blocks read over this is what it delivered while
    /// it asked).
    pub free_active_ns: u64,
    /// Measured phase: free reads of live blocks outstanding, integrated over time (block·ns);
    /// over `measured_ns`, how many blocks freeblock had to look for on average.
    pub free_wanted_block_ns: u128,
    /// Measured phase: disk time of foreground cleaning reads, ns.
    pub clean_read_ns: u64,
    /// Measured phase: disk time of segment writes, ns.
    pub segment_write_ns: u64,
    /// Measured phase: the share of segment writes that carried cleaned blocks, ns.
    pub clean_write_ns: u64,
    /// Measured phase: disk time of cache-miss reads, ns.
    pub read_miss_ns: u64,
    /// Measured phase: segment writes completed.
    pub measured_segment_writes: u64,
    /// Measured phase: cleaned blocks those writes carried.
    pub cleaned_blocks_written: u64,
    /// Measured phase: segments cleaned (by the foreground cleaner, taken over, or read free
    /// to the end); with `cleaned_blocks_written`, the live blocks a cleaned segment held.
    pub measured_segments_cleaned: u64,
    /// Free writes of cleaned blocks to cleaning destinations submitted (ours+FW,
    /// [`FreeCleaning::free_write_segments`]).
    #[serde(skip_serializing_if = "super::is_zero")]
    pub free_writes: u64,
    /// Of them, completed free.
    #[serde(skip_serializing_if = "super::is_zero")]
    pub free_writes_done: u64,
    /// Cleaning destinations committed after all their writes were done free.
    #[serde(skip_serializing_if = "super::is_zero")]
    pub destinations_free: u64,
    /// Cleaning destinations the foreground closed (its missing slots and summary written in
    /// the foreground) before the foreground cleaner ran.
    #[serde(skip_serializing_if = "super::is_zero")]
    pub destinations_closed: u64,
    /// Cleaning destinations given up when the foreground cleaner ran (closing them would have
    /// cost more than appending their live blocks to the segment being filled).
    #[serde(skip_serializing_if = "super::is_zero")]
    pub destinations_abandoned: u64,
    /// Blocks (summaries included) those closings wrote in the foreground.
    #[serde(skip_serializing_if = "super::is_zero")]
    pub destination_close_blocks: u64,
    /// Blocks the map moved to cleaning destinations.
    #[serde(skip_serializing_if = "super::is_zero")]
    pub destination_blocks_moved: u64,
    /// Blocks written to a destination but dead by its commit (rewritten, deleted or moved).
    #[serde(skip_serializing_if = "super::is_zero")]
    pub destination_blocks_dead: u64,
}

/// A free segment reserved as a cleaning destination (ours+FW): the cleaned blocks it takes,
/// each written free to a slot of its own in any order.
#[derive(Debug)]
struct Dest {
    segment: u32,
    /// Slot → the block copied there: (logical block, the sector it was read from, the
    /// contents read).
    slots: Vec<(u64, u64, u64)>,
    /// Free writes not yet on the media (the summary's included).
    outstanding: u32,
    /// The summary's free write: `None` not submitted (the destination still takes blocks),
    /// `Some(done)` once submitted.
    summary: Option<bool>,
}

impl LfsStats {
    /// All cleaning cost in the measured phase: foreground cleaning reads plus the cleaned
    /// blocks' share of segment writes (what IDEAL takes out), ns.
    #[must_use]
    pub fn cleaning_ns(&self) -> u64 {
        self.clean_read_ns + self.clean_write_ns
    }
}

/// A log-structured layout policy (see the module docs).
pub struct LfsPolicy {
    log: Log,
    cache: BufferCache,
    kind: CleanerKind,
    free: FreeCleaning,
    trims: TrimQueue,
    /// Segments free cleaning is reading → reads outstanding.
    in_progress: BTreeMap<u32, u32>,
    /// Free reads of live blocks under way: id → (segment, logical block, its sector).
    runs: HashMap<u64, (u32, u64, u64)>,
    /// Blocks read and held until the rest of their segment is in: segment → (logical, lbn).
    held: HashMap<u32, Vec<(u64, u64)>>,
    /// Segments whose free reads are all in, their blocks held, waiting to be moved when space
    /// is needed ([`FreeCleaning::read_ahead`]).
    ready: BTreeSet<u32>,
    /// Cleaning destinations being written free (ours+FW).
    dests: Vec<Dest>,
    /// Free writes to destinations under way: id → (segment, slot).
    dest_writes: HashMap<u64, (u32, u32)>,
    /// Segments some of whose blocks wait in a destination → how many: the free cleaner does
    /// not choose them again, the foreground cleaner keeps off them while it can.
    pending_src: HashMap<u32, u32>,
    next_run: u64,
    /// Contents stamp of the next block written.
    next_value: u64,
    /// The foreground cleaner reads live blocks one I/O each ([`LfsPolicy::reading_live_blocks_one_by_one`]).
    block_by_block: bool,
    measure_from: u64,
    measure_start: Option<SimTime>,
    last_time: SimTime,
    stats: LfsStats,
}

impl LfsPolicy {
    /// A policy over a new, empty log.
    ///
    /// # Errors
    /// [`LfsError::Config`] for a bad configuration.
    pub fn new(cfg: LfsConfig, kind: CleanerKind, free: FreeCleaning, trims: TrimQueue) -> std::result::Result<Self, LfsError> {
        Self::over(Log::create(cfg)?, kind, free, trims)
    }

    /// A policy for an experiment file's `[layout] type = "lfs"` on `disk` (no deletes: a
    /// plain block workload has none).
    ///
    /// # Errors
    /// As [`LfsSpec::config`](super::LfsSpec::config) and [`LfsPolicy::new`].
    pub fn from_spec(spec: &super::LfsSpec, disk: &freeblock_disk::Disk) -> std::result::Result<Self, LfsError> {
        Self::new(spec.config(disk)?, spec.cleaner, spec.free, TrimQueue::default())
    }

    /// The foreground cleaner reads each live block of a segment (and its summary) with an I/O
    /// of its own instead of the whole segment in one. Not the default: the paper does not say
    /// how LLD's cleaner reads; `repro lfs-cleaning` measures it as a what-if (docs/lfs.md).
    #[must_use]
    pub fn reading_live_blocks_one_by_one(mut self) -> Self {
        self.block_by_block = true;
        self
    }

    /// The policy for a caller that moves the real bytes (the block server): the log records
    /// what happens to each block ([`Log::record_events`]) and checkpoints only when asked.
    #[must_use]
    pub fn live(mut self) -> Self {
        self.log.record_events();
        self
    }

    /// A policy over a log recovered after a crash ([`Log::recover`]).
    ///
    /// # Errors
    /// [`LfsError::Config`] for `free.parallel` 0.
    pub fn over(log: Log, kind: CleanerKind, free: FreeCleaning, trims: TrimQueue) -> std::result::Result<Self, LfsError> {
        if free.parallel == 0 {
            return Err(LfsError::Config { field: "free.parallel", message: "must be at least 1".into() });
        }
        Ok(Self {
            cache: BufferCache::new(log.config().cache_blocks),
            log,
            kind,
            free,
            trims,
            in_progress: BTreeMap::new(),
            runs: HashMap::new(),
            held: HashMap::new(),
            ready: BTreeSet::new(),
            dests: Vec::new(),
            dest_writes: HashMap::new(),
            pending_src: HashMap::new(),
            next_run: 0,
            next_value: 1,
            block_by_block: false,
            measure_from: 0,
            measure_start: None,
            last_time: 0,
            stats: LfsStats::default(),
        })
    }

    /// The log, to take its events and checkpoint it ([`LfsPolicy::live`]).
    pub fn log_mut(&mut self) -> &mut Log {
        &mut self.log
    }

    /// The sequence number ([`Flushed::seq`](super::Flushed::seq)) of the segment write an I/O
    /// of this policy tagged `tag` is, if it is one.
    #[must_use]
    pub fn segment_write(tag: u64) -> Option<u64> {
        matches!(tag >> KIND_SHIFT, TAG_WRITE | TAG_FREE_WRITE).then_some((tag & LOW) >> SEQ_SHIFT)
    }

    /// Measures from the request after the first `requests` (a benchmark's warm-up).
    #[must_use]
    pub fn measuring_after(mut self, requests: u64) -> Self {
        self.measure_from = requests;
        self
    }

    /// What it did.
    #[must_use]
    pub fn stats(&self) -> &LfsStats {
        &self.stats
    }

    /// The log.
    #[must_use]
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// The buffer cache.
    #[must_use]
    pub fn cache(&self) -> &BufferCache {
        &self.cache
    }

    fn bs(&self) -> u64 {
        self.log.config().block_sectors
    }

    fn seen(&mut self, t: SimTime) {
        let since = t.saturating_sub(self.last_time);
        self.last_time = self.last_time.max(t);
        if let Some(start) = self.measure_start {
            if !self.in_progress.is_empty() {
                self.stats.free_active_ns += since;
            }
            self.stats.free_wanted_block_ns += u128::from(since) * self.runs.len() as u128;
            self.stats.measured_ns = self.last_time - start;
        }
    }

    /// The I/O of a segment write or a foreground cleaning read.
    fn phys(&mut self, io: LogIo, write_kind: u64) -> PhysIo {
        let cfg = *self.log.config();
        match io {
            LogIo::Write(f) => {
                self.stats.segment_writes += 1;
                // A summary's slots fit a u16, so the cleaned count fits below the sequence.
                PhysIo::at(Op::Write, cfg.segment_lbn(f.segment), cfg.segment_sectors(), tag(write_kind, f.seq << SEQ_SHIFT | u64::from(f.cleaned)))
            }
            LogIo::CleanRead { segment } => PhysIo::at(Op::Read, cfg.segment_lbn(segment), cfg.segment_sectors(), tag(TAG_CLEAN_READ, u64::from(segment))),
            LogIo::CleanReadPart { lbn, sectors } => PhysIo::at(Op::Read, lbn, sectors, tag(TAG_CLEAN_READ, 0)),
        }
    }

    /// Free segments kept for the foreground cleaner: free cleaning writes a segment of copies
    /// only while at least this many are free.
    fn reserve(&self) -> u32 {
        self.log.config().min_free + 2
    }

    /// Free cleaning runs while fewer segments than this are free: the configured threshold, but
    /// never more than half the dead space (in segments), so that it always gains space and stops
    /// once it has what can be had — on a nearly full log it could otherwise clean for ever.
    fn free_target(&self) -> u32 {
        let cfg = self.log.config();
        let dead = cfg.capacity_blocks().saturating_sub(self.log.live_blocks()) / u64::from(cfg.data_blocks());
        self.free.below_free.min(u32::try_from(dead / 2).unwrap_or(u32::MAX))
    }

    /// Starts free cleaning of more segments when free segments are short: each chosen segment's
    /// summary and live blocks are registered with freeblock at once, every block a free read
    /// of its own, so the planner may take them in any order and a block is moved as soon as it
    /// is in.
    ///
    /// The paper's cleaner reads a summary before it knows which blocks are live; ours knows from
    /// the usage table and the block map, which are in memory, so the live blocks need not wait
    /// for the summary (waiting starved freeblock: with 8 segments chosen the planner had only
    /// their 8 summary blocks to look for until one came in). The summary is still read, as the
    /// paper's cleaner would, and a segment counts as cleaned once all its reads are in.
    ///
    /// Nothing new starts while fewer than the copies' reserve (`min_free + 2`) segments are
    /// free: the blocks read could not be moved, their segment would be chosen again at once,
    /// and with idle-time reads that churned without end (the foreground cleaner runs there).
    fn start_free_cleaning(&mut self, ctx: &mut LayoutCtx<'_>) -> std::result::Result<(), LfsError> {
        if self.free.read_ahead {
            self.move_ready(ctx)?;
        }
        let free = self.log.free_segments();
        let short = free < self.free_target() && free >= self.reserve();
        if !self.kind.cleans_free() || !(short || self.free.read_ahead) {
            return Ok(());
        }
        // A segment the foreground cleaner emptied meanwhile no longer counts, though its reads
        // are still registered (and it stays excluded until they are in).
        self.ready.retain(|&s| self.log.live(s) > 0);
        if self.free.read_ahead {
            self.drop_stale_ready();
        }
        let active = self.in_progress.keys().filter(|&&s| self.log.live(s) > 0).count() + self.ready.len();
        let want = (self.free.parallel as usize).saturating_sub(active);
        if want == 0 {
            return Ok(());
        }
        let exclude = |s| self.taken(s);
        let victims = match self.free.choose {
            Choice::CostBenefit => self.log.cost_benefit(want, &exclude),
            Choice::LeastLive => self.log.least_live(want, &exclude),
        };
        let cfg = *self.log.config();
        // Only segments with something dead to gain (cost-benefit ranks full ones last, but
        // ranks them when asked for more segments than have dead space).
        for s in victims.into_iter().filter(|&s| self.log.live(s) < cfg.data_blocks()) {
            ctx.submit(PhysIo::at(Op::Read, cfg.summary_lbn(s), cfg.block_sectors, tag(TAG_FREE_SUMMARY, u64::from(s))), Service::Free);
            self.stats.free_segments += 1;
            self.stats.free_reads += 1;
            let live = self.log.live_in(s);
            self.in_progress.insert(s, 1 + live.len() as u32);
            for (logical, lbn) in live {
                let id = self.next_run;
                self.next_run += 1;
                ctx.submit(PhysIo::at(Op::Read, lbn, cfg.block_sectors, tag(TAG_FREE_RUN, id)), Service::Free);
                self.stats.free_reads += 1;
                self.stats.free_blocks_wanted += 1;
                self.runs.insert(id, (s, logical, lbn));
            }
        }
        Ok(())
    }

    /// A segment free cleaning may not choose: being read free, waiting for a destination, or
    /// read ahead and waiting.
    fn taken(&self, segment: u32) -> bool {
        self.in_progress.contains_key(&segment) || self.pending_src.contains_key(&segment) || self.ready.contains(&segment)
    }

    /// Reading ahead: a waiting segment whose live blocks are more than an eighth of a segment
    /// above the emptiest segment no one is reading is no longer worth cleaning before it: its
    /// held blocks are let go, so that its place in the wanted set goes to the segments that are
    /// now the emptiest (it may be chosen, and read, again later).
    fn drop_stale_ready(&mut self) {
        let Some(&frontier) = self.log.least_live(1, &|s| self.taken(s)).first() else { return };
        let limit = self.log.live(frontier) + self.log.config().data_blocks() / 8;
        let stale: Vec<u32> = self.ready.iter().copied().filter(|&s| self.log.live(s) > limit).collect();
        for s in stale {
            self.ready.remove(&s);
            self.held.remove(&s);
            self.stats.read_ahead_dropped += 1;
        }
    }

    /// Reading ahead: while free segments are short (and the copies' reserve is there), the
    /// waiting segments with the fewest live blocks move, emptiest first.
    fn move_ready(&mut self, ctx: &mut LayoutCtx<'_>) -> std::result::Result<(), LfsError> {
        let data = self.log.config().data_blocks();
        self.ready.retain(|&s| self.log.live(s) > 0);
        while self.log.free_segments() < self.free_target() && self.log.free_segments() >= self.reserve() {
            let log = &self.log;
            let Some(segment) = self.ready.iter().copied().filter(|&s| log.live(s) < data).min_by_key(|&s| (log.live(s), s)) else { break };
            self.ready.remove(&segment);
            if self.measure_start.is_some() {
                self.stats.measured_segments_cleaned += 1;
            }
            for (logical, lbn) in self.held.remove(&segment).unwrap_or_default() {
                self.place_cleaned(ctx, logical, lbn)?;
            }
        }
        Ok(())
    }

    /// One of `segment`'s free reads is in; when it was the last, the blocks held for it move
    /// (or, reading ahead, wait for space to be needed).
    fn read_done(&mut self, ctx: &mut LayoutCtx<'_>, segment: u32) -> std::result::Result<(), LfsError> {
        if let Some(n) = self.in_progress.get_mut(&segment) {
            *n -= 1;
            if *n == 0 {
                self.in_progress.remove(&segment);
                if self.free.read_ahead && self.free.hold_until_read {
                    self.ready.insert(segment);
                    return Ok(());
                }
                if self.measure_start.is_some() {
                    self.stats.measured_segments_cleaned += 1;
                }
                for (logical, lbn) in self.held.remove(&segment).unwrap_or_default() {
                    self.place_cleaned(ctx, logical, lbn)?;
                }
            }
        }
        Ok(())
    }

    /// A live block read with free bandwidth: moved at once (the paper's), or held until the
    /// rest of its segment is in ([`FreeCleaning::hold_until_read`]).
    fn block_read(&mut self, ctx: &mut LayoutCtx<'_>, id: u64) -> std::result::Result<(), LfsError> {
        let Some((segment, logical, lbn)) = self.runs.remove(&id) else { return Ok(()) };
        if self.measure_start.is_some() {
            self.stats.measured_free_blocks_read += 1;
        }
        if self.free.hold_until_read {
            self.held.entry(segment).or_default().push((logical, lbn));
        } else {
            self.place_cleaned(ctx, logical, lbn)?;
        }
        self.read_done(ctx, segment)
    }

    /// Appends a block free cleaning read to the segment being filled, if it is still live. A
    /// full segment is written (a foreground write) only while that leaves the foreground
    /// cleaner its reserve; otherwise the block stays for a later cleaning.
    fn move_block(&mut self, ctx: &mut LayoutCtx<'_>, logical: u64, lbn: u64) -> std::result::Result<(), LfsError> {
        if !self.log.is_live_at(logical, lbn) {
            self.stats.free_blocks_dead += 1;
            return Ok(());
        }
        if self.log.open_full() {
            if self.log.free_segments() < self.reserve() {
                self.stats.free_blocks_left += 1;
                return Ok(());
            }
            if let Some(f) = self.log.flush()? {
                let io = self.phys(LogIo::Write(f), TAG_FREE_WRITE);
                ctx.submit(io, Service::Foreground);
            }
        }
        if self.log.relocate(logical, lbn)? {
            self.stats.free_blocks_moved += 1;
        }
        Ok(())
    }

    /// A block free cleaning read goes where the cleaner puts it: a cleaning destination
    /// (ours+FW), or the segment being filled.
    fn place_cleaned(&mut self, ctx: &mut LayoutCtx<'_>, logical: u64, lbn: u64) -> std::result::Result<(), LfsError> {
        if self.free.free_write_segments > 0 {
            self.place_free(ctx, logical, lbn)
        } else {
            self.move_block(ctx, logical, lbn)
        }
    }

    /// A block free cleaning read, its segment all in, given a slot of a cleaning destination
    /// and written there with free bandwidth (ours+FW). A destination is reserved when none has
    /// room, while that leaves the foreground cleaner its reserve and fewer than
    /// `free_write_segments` are open; otherwise the block goes to the segment being filled
    /// ([`LfsPolicy::move_block`]). A full destination's summary is submitted (free) at once.
    fn place_free(&mut self, ctx: &mut LayoutCtx<'_>, logical: u64, lbn: u64) -> std::result::Result<(), LfsError> {
        if !self.log.is_live_at(logical, lbn) {
            self.stats.free_blocks_dead += 1;
            return Ok(());
        }
        let cfg = *self.log.config();
        let data = cfg.data_blocks() as usize;
        let i = match self.dests.iter().position(|d| d.summary.is_none()) {
            Some(i) => i,
            None => {
                let room = self.dests.len() < self.free.free_write_segments as usize && self.log.free_segments() > self.reserve();
                let Some(segment) = room.then(|| self.log.reserve_segment()).flatten() else { return self.move_block(ctx, logical, lbn) };
                self.dests.push(Dest { segment, slots: Vec::with_capacity(data), outstanding: 0, summary: None });
                self.dests.len() - 1
            }
        };
        let value = self.log.value_at(lbn);
        let id = self.next_run;
        self.next_run += 1;
        let d = &mut self.dests[i];
        let slot = d.slots.len() as u32;
        d.slots.push((logical, lbn, value));
        d.outstanding += 1;
        self.dest_writes.insert(id, (d.segment, slot));
        ctx.submit(PhysIo::at(Op::Write, cfg.slot_lbn(d.segment, slot), cfg.block_sectors, tag(TAG_DEST_WRITE, id)), Service::Free);
        self.stats.free_writes += 1;
        if let Some(src) = cfg.segment_of(lbn) {
            *self.pending_src.entry(src).or_default() += 1;
        }
        if d.slots.len() == data {
            d.summary = Some(false);
            d.outstanding += 1;
            ctx.submit(PhysIo::at(Op::Write, cfg.summary_lbn(d.segment), cfg.block_sectors, tag(TAG_DEST_SUMMARY, u64::from(d.segment))), Service::Free);
        }
        Ok(())
    }

    /// A free write to a destination is on the media: a slot's block, or (`slot` `None`) its
    /// summary. The last one commits the destination.
    fn dest_written(&mut self, segment: u32, slot: Option<u32>) -> std::result::Result<(), LfsError> {
        let Some(i) = self.dests.iter().position(|d| d.segment == segment) else { return Ok(()) };
        let d = &mut self.dests[i];
        match slot {
            Some(slot) => {
                self.log.write_slot(segment, slot, d.slots[slot as usize].2)?;
                self.stats.free_writes_done += 1;
            }
            None => d.summary = Some(true),
        }
        d.outstanding -= 1;
        if d.outstanding == 0 && d.summary == Some(true) {
            let d = self.dests.remove(i);
            self.commit_dest(&d)?;
            self.stats.destinations_free += 1;
        }
        Ok(())
    }

    /// Points the map at a destination's blocks (those still live where they were read).
    fn commit_dest(&mut self, d: &Dest) -> std::result::Result<(), LfsError> {
        let named = d.slots.len() as u64;
        let slots: Vec<Option<(u64, u64, u64)>> = d.slots.iter().copied().map(Some).collect();
        let moved = if named == 0 { self.log.release_segment(d.segment).map(|()| 0)? } else { self.log.commit_segment(d.segment, &slots)? };
        self.stats.destination_blocks_moved += u64::from(moved);
        self.stats.destination_blocks_dead += named - u64::from(moved);
        if self.measure_start.is_some() {
            self.stats.cleaned_blocks_written += u64::from(moved);
        }
        self.unpend(d);
        Ok(())
    }

    /// `d`'s blocks no longer wait in a destination.
    fn unpend(&mut self, d: &Dest) {
        let cfg = *self.log.config();
        for &(_, lbn, _) in &d.slots {
            if let Some(src) = cfg.segment_of(lbn) {
                if let Some(n) = self.pending_src.get_mut(&src) {
                    *n -= 1;
                    if *n == 0 {
                        self.pending_src.remove(&src);
                    }
                }
            }
        }
    }

    /// Settles every cleaning destination before the foreground cleaner runs: its outstanding
    /// free writes withdrawn, then either closed (the slots still missing whose blocks are live,
    /// and the summary, written in the foreground, neighbours joined as the foreground cleaner's
    /// reads are, and the map committed) or given up (released, its live blocks appended to the
    /// segment being filled, as ours does), whichever costs the foreground less: a closing
    /// pays a positioning per piece it writes, an append only the blocks' transfer in a
    /// segment write. The writes become parts of the request that found free segments short.
    fn close_dests(&mut self, ctx: &mut LayoutCtx<'_>, out: &mut Vec<PhysIo>) -> std::result::Result<(), LfsError> {
        let cfg = *self.log.config();
        for d in std::mem::take(&mut self.dests) {
            let mut ids: Vec<(u64, u32)> = self.dest_writes.iter().filter(|(_, w)| w.0 == d.segment).map(|(&id, w)| (id, w.1)).collect();
            ids.sort_unstable();
            let mut missing = Vec::with_capacity(ids.len() + 1);
            for &(id, slot) in &ids {
                self.dest_writes.remove(&id);
                ctx.withdraw_free(&PhysIo::at(Op::Write, cfg.slot_lbn(d.segment, slot), cfg.block_sectors, tag(TAG_DEST_WRITE, id)))?;
                let (logical, from, value) = d.slots[slot as usize];
                // (Unchanged since it was read: only those move.)
                if self.log.is_live_at(logical, from) && self.log.value_at(from) == value {
                    missing.push(slot);
                }
            }
            if d.summary == Some(false) {
                ctx.withdraw_free(&PhysIo::at(Op::Write, cfg.summary_lbn(d.segment), cfg.block_sectors, tag(TAG_DEST_SUMMARY, u64::from(d.segment))))?;
            }
            let live: Vec<(u64, u64)> = d.slots.iter().map(|&(l, from, _)| (l, from)).filter(|&(l, from)| self.log.is_live_at(l, from)).collect();
            let mut lbns: Vec<u64> = missing.iter().map(|&slot| cfg.slot_lbn(d.segment, slot)).collect();
            if d.summary != Some(true) {
                lbns.push(cfg.summary_lbn(d.segment));
            }
            lbns.sort_unstable();
            let costs = ReadCosts::at(ctx.disk, cfg.segment_lbn(d.segment))?;
            let (pieces, sectors) = costs.plan(&lbns, cfg.block_sectors);
            let close_ns = pieces.len() as f64 * costs.positioning_ns + sectors as f64 * costs.sector_ns;
            let append_ns = (live.len() as u64 * cfg.block_sectors) as f64 * costs.media_sector_ns;
            if !live.is_empty() && close_ns < append_ns {
                for &slot in &missing {
                    self.log.write_slot(d.segment, slot, d.slots[slot as usize].2)?;
                }
                for p in pieces {
                    if let LogIo::CleanReadPart { lbn, sectors } = p {
                        out.push(PhysIo::at(Op::Write, lbn, sectors, tag(TAG_DEST_CLOSE, 0)));
                    }
                }
                self.stats.destination_close_blocks += sectors / cfg.block_sectors;
                self.commit_dest(&d)?;
                self.stats.destinations_closed += 1;
            } else {
                self.log.release_segment(d.segment)?;
                self.unpend(&d);
                self.stats.destinations_abandoned += 1;
                for (logical, from) in live {
                    if self.log.open_full() {
                        let f = self.log.flush()?.expect("a full segment has blocks");
                        let p = self.phys(LogIo::Write(f), TAG_WRITE);
                        out.push(p);
                    }
                    self.log.relocate(logical, from)?;
                }
            }
        }
        Ok(())
    }

    /// The foreground cleaner, when free segments are down to `min_free`: its reads and writes
    /// become parts of the request that found them short. Cleaning destinations (ours+FW) are
    /// closed first, which may free enough.
    fn clean_if_short(&mut self, ctx: &mut LayoutCtx<'_>, out: &mut Vec<PhysIo>) -> std::result::Result<(), LfsError> {
        if self.log.free_segments() <= self.log.config().min_free && !self.dests.is_empty() {
            self.close_dests(ctx, out)?;
        }
        if self.log.free_segments() <= self.log.config().min_free {
            let mut ios = Vec::new();
            let take_over = self.free.finish_in_foreground;
            // The segments being read free when the cleaner starts: those it takes over are
            // cleaned by then, the others it keeps off (and off those waiting in a destination).
            let reading: std::collections::BTreeSet<u32> = self.in_progress.keys().chain(self.pending_src.keys()).copied().collect();
            let mut free_reads = FreeReads { in_progress: &mut self.in_progress, runs: &mut self.runs, held: &mut self.held, ready: &mut self.ready, stats: &mut self.stats };
            let block_by_block = self.block_by_block;
            let mut finish = |log: &Log| {
                let taken = if take_over { free_reads.take_over(log, ctx)? } else { None };
                Ok(taken.or_else(|| block_by_block.then(|| one_by_one(log, &|s| reading.contains(&s))).flatten()))
            };
            let segments = clean_foreground_finishing(&mut self.log, &mut ios, &|s| reading.contains(&s), &mut finish)?;
            self.stats.foreground_cleanings += 1;
            self.stats.foreground_segments += u64::from(segments);
            if self.measure_start.is_some() {
                self.stats.measured_segments_cleaned += u64::from(segments);
            }
            for x in ios {
                let p = self.phys(x, TAG_WRITE);
                out.push(p);
            }
        }
        Ok(())
    }

    fn translate_inner(&mut self, ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> std::result::Result<(), LfsError> {
        for (logical, blocks) in self.trims.drain() {
            for l in logical..logical.saturating_add(blocks) {
                self.log.delete(l)?;
                self.cache.remove(l);
            }
        }
        self.clean_if_short(ctx, out)?;
        let bs = self.bs();
        if io.lbn % bs != 0 || io.sectors % bs != 0 || io.sectors == 0 {
            return Err(LfsError::Config { field: "request", message: format!("sectors {}..{} are not whole {bs}-sector blocks", io.lbn, io.lbn + io.sectors) });
        }
        let first = io.lbn / bs;
        let blocks = io.sectors / bs;
        if io.op.is_read() {
            let mut misses: Vec<(u64, u64)> = Vec::new();
            for l in first..first + blocks {
                match self.log.read(l)? {
                    Found::Open(_) | Found::Unmapped => self.stats.read_hits += 1,
                    Found::Disk { lbn, value } => {
                        if self.cache.get(l).is_some() {
                            self.stats.read_hits += 1;
                        } else {
                            self.stats.read_misses += 1;
                            self.cache.insert(l, value);
                            match misses.last_mut() {
                                Some((start, n)) if *start + *n * bs == lbn => *n += 1,
                                _ => misses.push((lbn, 1)),
                            }
                        }
                    }
                }
            }
            out.extend(misses.into_iter().map(|(lbn, n)| PhysIo::at(Op::Read, lbn, n * bs, tag(TAG_READ, 0))));
        } else {
            for l in first..first + blocks {
                if self.log.open_full() {
                    if let Some(f) = self.log.flush()? {
                        let p = self.phys(LogIo::Write(f), TAG_WRITE);
                        out.push(p);
                    }
                }
                self.log.append(l, self.next_value, false)?;
                self.cache.insert(l, self.next_value);
                self.next_value += 1;
            }
        }
        self.start_free_cleaning(ctx)
    }
}

/// The foreground cleaner's next victim (cost-benefit, keeping off `avoid` while another has a
/// dead block, as [`clean_foreground_finishing`] chooses) with a read of its own for each live
/// block and for its summary; `None` when no segment has a dead block to gain.
fn one_by_one(log: &Log, avoid: &dyn Fn(u32) -> bool) -> Option<Finish> {
    let cfg = log.config();
    let gains = |s: &u32| log.live(*s) < cfg.data_blocks();
    let victim = log.cost_benefit(1, avoid).into_iter().find(gains).or_else(|| log.cost_benefit(1, &|_| false).into_iter().find(gains))?;
    let mut reads: Vec<LogIo> = log.live_in(victim).into_iter().map(|(_, lbn)| LogIo::CleanReadPart { lbn, sectors: cfg.block_sectors }).collect();
    reads.push(LogIo::CleanReadPart { lbn: cfg.summary_lbn(victim), sectors: cfg.block_sectors });
    Some((victim, reads))
}

/// What reading a few blocks costs against reading a whole segment, to choose how the
/// foreground cleaner reads what a segment still misses.
#[derive(Debug, Clone, Copy)]
struct ReadCosts {
    /// Positioning a read saves by joining the next one: half a revolution, ns.
    positioning_ns: f64,
    /// Moving one sector to the host, ns (the bus, or the media when the bus is faster).
    sector_ns: f64,
    /// A sector of the track passing under the head, ns: what a block appended to a segment
    /// write costs (the drive overlaps a write's bus transfer).
    media_sector_ns: f64,
}

impl ReadCosts {
    /// The costs of reading near `lbn`: the media rate is that of `lbn`'s own zone.
    fn at(disk: &freeblock_disk::Disk, lbn: u64) -> std::result::Result<Self, LfsError> {
        let mut runs = Vec::new();
        disk.track_runs(lbn, 1, &mut runs).map_err(|e| LfsError::Config { field: "segment", message: format!("sector {lbn}: {e}") })?;
        let track = runs.first().map_or(1, |r| r.sectors_per_track.max(1));
        let revolution = disk.revolution_ns() as f64;
        let media_sector_ns = revolution / f64::from(track);
        let sector_ns = (disk.spec().controller.bus_sector_ms * 1e6).max(media_sector_ns);
        Ok(Self { positioning_ns: revolution / 2.0, sector_ns, media_sector_ns })
    }

    /// `lbns` (sorted, `sectors` each) as reads: neighbours joined where the sectors between
    /// cost less to move than a positioning. (So the pieces never cost more than one read of
    /// the whole segment: every gap left open costs more to read through than the positioning
    /// it takes.) Returns the reads and the sectors they move.
    fn plan(self, lbns: &[u64], sectors: u64) -> (Vec<LogIo>, u64) {
        let mut pieces: Vec<(u64, u64)> = Vec::new();
        for &lbn in lbns {
            match pieces.last_mut() {
                Some((start, n)) if ((lbn - (*start + *n)) as f64) * self.sector_ns < self.positioning_ns => *n = lbn + sectors - *start,
                _ => pieces.push((lbn, sectors)),
            }
        }
        let moved: u64 = pieces.iter().map(|p| p.1).sum();
        (pieces.into_iter().map(|(lbn, sectors)| LogIo::CleanReadPart { lbn, sectors }).collect(), moved)
    }
}

/// The free cleaner's reads in flight, as the foreground cleaner takes segments over from it.
struct FreeReads<'a> {
    in_progress: &'a mut BTreeMap<u32, u32>,
    runs: &'a mut HashMap<u64, (u32, u64, u64)>,
    held: &'a mut HashMap<u32, Vec<(u64, u64)>>,
    ready: &'a mut BTreeSet<u32>,
    stats: &'a mut LfsStats,
}

impl FreeReads<'_> {
    /// The segment being read free with the fewest reads outstanding (that still has live
    /// blocks and a dead one to gain), taken over: its outstanding free reads withdrawn, and the reads of those blocks
    /// (and of its summary, if that is outstanding) returned for the foreground cleaner. Blocks
    /// already read and held stay live where they are and move with the rest.
    fn take_over(&mut self, log: &Log, ctx: &mut LayoutCtx<'_>) -> std::result::Result<Option<Finish>, LfsError> {
        // A segment with nothing dead gains nothing: moving its blocks fills the segment it frees.
        let gains = |s: u32| log.live(s) > 0 && log.live(s) < log.config().data_blocks();
        // A segment read ahead and waiting needs no read at all: the emptiest goes first.
        if let Some(segment) = self.ready.iter().copied().filter(|&s| gains(s)).min_by_key(|&s| (log.live(s), s)) {
            self.ready.remove(&segment);
            self.held.remove(&segment);
            self.stats.finished_segments += 1;
            return Ok(Some((segment, Vec::new())));
        }
        let Some(segment) = self.in_progress.iter().filter(|(&s, _)| gains(s)).min_by_key(|(&s, &n)| (n, s)).map(|(&s, _)| s) else { return Ok(None) };
        let outstanding = self.in_progress.remove(&segment).unwrap_or(0);
        self.held.remove(&segment);
        let cfg = *log.config();
        let mut ids: Vec<u64> = self.runs.iter().filter(|(_, r)| r.0 == segment).map(|(&id, _)| id).collect();
        ids.sort_unstable();
        let mut lbns = Vec::with_capacity(ids.len() + 1);
        for id in ids {
            let (_, _, lbn) = self.runs.remove(&id).expect("listed above");
            ctx.withdraw_free(&PhysIo::at(Op::Read, lbn, cfg.block_sectors, tag(TAG_FREE_RUN, id)))?;
            lbns.push(lbn);
        }
        if outstanding as usize > lbns.len() {
            let summary = cfg.summary_lbn(segment);
            ctx.withdraw_free(&PhysIo::at(Op::Read, summary, cfg.block_sectors, tag(TAG_FREE_SUMMARY, u64::from(segment))))?;
            lbns.push(summary);
        }
        lbns.sort_unstable();
        let (reads, sectors) = ReadCosts::at(ctx.disk, cfg.segment_lbn(segment))?.plan(&lbns, cfg.block_sectors);
        self.stats.finished_segments += 1;
        self.stats.finished_blocks_read += sectors / cfg.block_sectors;
        Ok(Some((segment, reads)))
    }
}

impl LayoutPolicy for LfsPolicy {
    fn name(&self) -> String {
        format!("lfs ({})", self.kind.label())
    }

    fn logical_sectors(&self) -> Option<u64> {
        Some(self.log.config().logical_blocks * self.bs())
    }

    fn serves_from_memory(&self) -> bool {
        true
    }

    /// Writes the segment being filled, however little it holds, with its summary: the filled
    /// slots (from the segment's start) and the summary block (its last), two I/Os unless the
    /// segment is full, rather than all 128 blocks. The segment is closed (its unused slots are
    /// dead space for the cleaner) and the next write starts another.
    fn flush(&mut self, ctx: &mut LayoutCtx<'_>, out: &mut Vec<PhysIo>) -> Result<()> {
        self.seen(ctx.now);
        self.clean_if_short(ctx, out).map_err(LayoutError::from)?;
        if let Some(f) = self.log.flush().map_err(LayoutError::from)? {
            let cfg = *self.log.config();
            let mut p = self.phys(LogIo::Write(f), TAG_WRITE);
            let partial = f.extent < cfg.data_blocks();
            if partial {
                p.sectors = u64::from(f.extent) * cfg.block_sectors;
            }
            out.push(p);
            if partial {
                out.push(PhysIo::at(Op::Write, cfg.summary_lbn(f.segment), cfg.block_sectors, tag(TAG_SUMMARY_WRITE, 0)));
            }
        }
        self.start_free_cleaning(ctx).map_err(LayoutError::from)?;
        Ok(())
    }

    fn translate(&mut self, ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> Result<()> {
        if self.stats.requests == self.measure_from && self.measure_start.is_none() {
            self.measure_start = Some(ctx.now);
            self.stats.clean_read_ns = 0;
            self.stats.segment_write_ns = 0;
            self.stats.clean_write_ns = 0;
            self.stats.read_miss_ns = 0;
            self.stats.measured_segment_writes = 0;
            self.stats.cleaned_blocks_written = 0;
            self.stats.measured_segments_cleaned = 0;
            self.stats.measured_free_blocks_read = 0;
            self.stats.free_active_ns = 0;
            self.stats.free_wanted_block_ns = 0;
        }
        self.stats.requests += 1;
        self.seen(ctx.now);
        self.translate_inner(ctx, io, out).map_err(LayoutError::from)
    }

    fn complete(&mut self, ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> Result<()> {
        self.seen(done.time);
        let (kind, low) = (done.io.tag >> KIND_SHIFT, done.io.tag & LOW);
        let busy = done.access.map_or(0, |a| a.end - a.start);
        let measuring = self.measure_start.is_some();
        match kind {
            TAG_WRITE | TAG_FREE_WRITE if measuring => {
                self.stats.measured_segment_writes += 1;
                let cleaned = low & CLEANED;
                self.stats.cleaned_blocks_written += cleaned;
                self.stats.segment_write_ns += busy;
                self.stats.clean_write_ns += busy * cleaned / u64::from(self.log.config().data_blocks());
            }
            TAG_SUMMARY_WRITE if measuring => self.stats.segment_write_ns += busy,
            TAG_DEST_CLOSE if measuring => {
                self.stats.segment_write_ns += busy;
                self.stats.clean_write_ns += busy;
            }
            TAG_DEST_WRITE => {
                if let Some((segment, slot)) = self.dest_writes.remove(&low) {
                    self.dest_written(segment, Some(slot)).map_err(LayoutError::from)?;
                }
            }
            TAG_DEST_SUMMARY => self.dest_written(low as u32, None).map_err(LayoutError::from)?,
            TAG_CLEAN_READ if measuring => self.stats.clean_read_ns += busy,
            TAG_READ if measuring => self.stats.read_miss_ns += busy,
            TAG_FREE_SUMMARY => self.read_done(ctx, low as u32).map_err(LayoutError::from)?,
            TAG_FREE_RUN => self.block_read(ctx, low).map_err(LayoutError::from)?,
            _ => {}
        }
        self.start_free_cleaning(ctx).map_err(LayoutError::from)?;
        Ok(())
    }

    fn journal(&self) -> Option<&crate::layout::journal::MemStorage> {
        Some(self.log.journal_storage())
    }

    fn report(&self) -> serde_json::Value {
        serde_json::to_value(&self.stats).unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::{LogIo, ReadCosts};

    /// 1 ms positioning, 0.1 ms a sector: a gap of under 10 sectors is cheaper to read through.
    const COSTS: ReadCosts = ReadCosts { positioning_ns: 1e6, sector_ns: 1e5, media_sector_ns: 1e5 };

    fn part(lbn: u64, sectors: u64) -> LogIo {
        LogIo::CleanReadPart { lbn, sectors }
    }

    #[test]
    fn near_blocks_are_read_together_and_far_ones_apart() {
        // 8-sector blocks at 0 and 8 (adjacent), 24 (a gap of 8 sectors: joined), 100 (a gap of
        // 68: apart), 116 (a gap of 8 again: joined).
        let (reads, sectors) = COSTS.plan(&[0, 8, 24, 100, 116], 8);
        assert_eq!(reads, [part(0, 32), part(100, 24)]);
        assert_eq!(sectors, 56);
        // Without a bus to pay for, every gap is worth reading through.
        let (reads, _) = ReadCosts { positioning_ns: 1e6, sector_ns: 0.0, media_sector_ns: 0.0 }.plan(&[0, 500, 1000], 8);
        assert_eq!(reads, [part(0, 1008)]);
        assert_eq!(COSTS.plan(&[], 8), (vec![], 0));
    }

    #[test]
    fn a_segment_is_costed_at_its_own_zones_media_rate() {
        // Without a bus to wait for, a sector costs what it takes to pass under the head: longer
        // on an inner track, which holds fewer sectors.
        let mut spec = freeblock_disk::library::get("atlas10k").unwrap().without_cache();
        spec.controller.bus_sector_ms = 0.0;
        let disk = freeblock_disk::Disk::new(spec).unwrap();
        let outer = ReadCosts::at(&disk, 0).unwrap();
        let inner = ReadCosts::at(&disk, disk.capacity() - 1).unwrap();
        let (first, last) = (disk.spec().zones.first().unwrap(), disk.spec().zones.last().unwrap());
        let rev = disk.revolution_ns() as f64;
        assert!((outer.sector_ns - rev / f64::from(first.sectors_per_track)).abs() < 1e-6);
        assert!((inner.sector_ns - rev / f64::from(last.sectors_per_track)).abs() < 1e-6);
        assert!(inner.sector_ns > outer.sector_ns);
        // A sector past the end is an error naming it, not a guess.
        let err = ReadCosts::at(&disk, disk.capacity()).unwrap_err().to_string();
        assert!(err.contains(&disk.capacity().to_string()), "{err}");
    }
}
