//! The FS2 policy: monitoring, replication jobs, nearest-copy reads, invalidation and the
//! watermarks, as a layout policy of the one engine. The concept is taught in the
//! [module docs](super); this file owns the mechanics.
//!
//! ```text
//!   read  ─► translate: each block's primary (+ every complete contiguous replica run)
//!            paper: one start, the copy nearest the last block by LBN, replicas only if all
//!                   the request's blocks have contiguous ones
//!            ours:  every complete copy offered; the scheduler/device picks least positioning
//!   write ─► allocate (home, or the nearest free block if the home is busy) · drop replicas
//!            (committed before the write is issued; the first one's place kept as a hole) ·
//!            abort copies of the block under way
//!   every access ─► monitor ─► candidates (access order) ─► job: read each source, write them
//!            contiguously into free space near the hot region ─► AddCopy, committed
//!            (a candidate with a hole still free goes back into it: a refill job per run of
//!            holes that follow one another)
//! ```
//!
//! | map state of a physical block | meaning |
//! |---|---|
//! | pinned | user data not yet touched by the run (the initial fill) |
//! | live, first copy of its block | a block's primary (its data) |
//! | live, later copy | a replica |
//! | free | free space (a replica job may have claimed it: see `claimed`) |

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use freeblock_disk::{Disk, Op};
use serde::{Deserialize, Serialize};

use super::error::Fs2Error;
use super::regions::AccessMonitor;
use super::replicas::{ReplicaTable, PAPER_ENTRY_BYTES, REPLICA_ENTRY_BYTES};
use super::space::{Band, Throttle, Watermarks};
use crate::layout::error::{LayoutError, Result};
use crate::layout::journal::{DirStorage, DirtyRule, Journal, MapOp, MemStorage, RecoveryReport};
use crate::layout::map::{BlockMap, BlockState, Candidates, MapConfig, PhysRange, WriteRequest};
use crate::layout::policy::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo, Service};

/// Dynamic replication (the paper's FS2) or a fixed set replicated once (FS2-static).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Monitor and replicate as the workload runs.
    #[default]
    Dynamic,
    /// Replicate `static_blocks` toward `static_center` before the run (the paper's `mkfs2`).
    Static,
}

/// How a read chooses among a block's copies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Nearest {
    /// The paper's: the copy whose start is nearest the last block accessed, by LBN distance;
    /// replicas only when every block of the request has one and they are contiguous.
    #[default]
    Lbn,
    /// Ours: every complete copy is offered; the one with least positioning time is served
    /// (flex reads, paper 004).
    Positioning,
}

/// Blocks `first..first + blocks` (logical), for FS2-static.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticExtent {
    /// First logical block.
    pub first: u64,
    /// Blocks.
    pub blocks: u64,
}

/// The `[layout]` table of an FS2 run (`type = "fs2"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Fs2Config {
    /// Sectors per block. Default 8 (4 KB, Ext2's block).
    pub block_sectors: u64,
    /// Share of every region holding user data at the start (the rest is free space). Default 0.7.
    pub fill: f64,
    /// Blocks per region. Default 32 768 (128 MB).
    pub region_blocks: u64,
    /// Co-access window, requests. Default 16 (issue 32: 4 requests missed ~43% of files_tpcw's
    /// outside reads that follow a hot one).
    pub window: usize,
    /// Co-access window in time, ms, beside `window`: a block read within this long of a
    /// hot-region request counts as read with it even when more than `window` requests fall
    /// between. Default 1000 (the second over which the paper's Fig. 1(b) shows the head going
    /// back and forth between two regions); 0: requests only.
    pub window_ms: f64,
    /// Co-accesses with the hot region that make a block a candidate. Default 2.
    pub threshold: u32,
    /// Block accesses between hot-region updates (region counts halve each time). Default 4096.
    pub epoch_accesses: u64,
    /// Block accesses between halvings of the co-access counts; 0 (the default) keeps them for
    /// the whole run, as the paper learns across runs (§4.3.3). Set it longer than one pass of
    /// the workload, or a block's count decays before the pattern repeats.
    pub coaccess_decay_accesses: u64,
    /// Ours, beside the paper's rule: hot-region requests that start more than this many blocks
    /// from where the last request ended are candidates too (§1.2: "accessed together but lack
    /// spatial locality"). Default 0: off, the paper's rule.
    pub inside_jump_blocks: u64,
    /// Candidates per replication job (written contiguously). Default 32.
    pub batch_blocks: usize,
    /// A block whose replica a write invalidated, once detected again (`threshold`
    /// co-accesses, as any candidate), is copied back into the place its replica had, so the run
    /// it belonged to is whole again: contiguous, in the order it was read (paper 003 §2.3:
    /// invalidate, and replicate again in the background; §2.2: replicas adjacent in access
    /// order; which place is ours). Default true; false: it goes wherever its new batch goes.
    pub refill_invalidated: bool,
    /// Replicas per block at most. Default 1 (the paper's evaluation).
    pub max_replicas: u32,
    /// Copy choice for reads. Default the paper's.
    pub nearest: Nearest,
    /// How replica I/O is served. Default foreground (the paper's).
    pub service: Service,
    /// Free-space watermarks.
    pub watermarks: Watermarks,
    /// Reads that make a replica "frequent" at the low watermark. Default 2.
    pub frequent_reads: u64,
    /// Requests within which a read makes a replica "recent". Default 10 000.
    pub recent_requests: u64,
    /// Dynamic or static. Default dynamic.
    pub mode: Mode,
    /// FS2-static: the blocks to replicate, in the order given.
    pub static_blocks: Vec<StaticExtent>,
    /// FS2-static: the sector replicas are placed around. Default the middle of the disk.
    pub static_center: Option<u64>,
}

impl Default for Fs2Config {
    fn default() -> Self {
        Self {
            block_sectors: 8,
            fill: 0.7,
            region_blocks: 32_768,
            window: 16,
            window_ms: 1000.0,
            threshold: 2,
            epoch_accesses: 4096,
            coaccess_decay_accesses: 0,
            inside_jump_blocks: 0,
            batch_blocks: 32,
            refill_invalidated: true,
            max_replicas: 1,
            nearest: Nearest::Lbn,
            service: Service::Foreground,
            watermarks: Watermarks::default(),
            frequent_reads: 2,
            recent_requests: 10_000,
            mode: Mode::Dynamic,
            static_blocks: Vec::new(),
            static_center: None,
        }
    }
}

impl Fs2Config {
    /// Checks every setting.
    ///
    /// # Errors
    /// [`Fs2Error`] naming the field.
    pub fn validate(&self) -> std::result::Result<(), Fs2Error> {
        self.watermarks.validate()?;
        let bad = |field: &'static str, value: String, reason: &str| Err(Fs2Error::BadSetting { field, value, reason: reason.into() });
        if self.block_sectors == 0 {
            return bad("block_sectors", "0".into(), "must be at least 1");
        }
        if !(self.fill.is_finite() && (0.0..1.0).contains(&self.fill)) {
            return bad("fill", self.fill.to_string(), "must lie in [0, 1)");
        }
        if self.region_blocks == 0 {
            return bad("region_blocks", "0".into(), "must be at least 1");
        }
        if self.window == 0 {
            return bad("window", "0".into(), "must be at least 1");
        }
        if !(self.window_ms.is_finite() && self.window_ms >= 0.0) {
            return bad("window_ms", self.window_ms.to_string(), "must be a finite number of ms, 0 or more");
        }
        if self.threshold == 0 {
            return bad("threshold", "0".into(), "must be at least 1");
        }
        if self.epoch_accesses == 0 {
            return bad("epoch_accesses", "0".into(), "must be at least 1");
        }
        if self.batch_blocks == 0 || self.batch_blocks > 4096 {
            return bad("batch_blocks", self.batch_blocks.to_string(), "must lie in 1..=4096");
        }
        if self.max_replicas == 0 || self.max_replicas > 16 {
            return bad("max_replicas", self.max_replicas.to_string(), "must lie in 1..=16");
        }
        if self.mode == Mode::Static && self.static_blocks.is_empty() {
            return bad("static_blocks", "[]".into(), "mode = \"static\" needs the blocks to replicate");
        }
        Ok(())
    }
}

/// What the policy did, for reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fs2Report {
    /// Replicas made (committed).
    pub replicas_made: u64,
    /// Replicas alive at the end.
    pub replicas_alive: u64,
    /// Replication jobs finished.
    pub jobs: u64,
    /// Replica I/Os issued: source reads and destination writes.
    pub copy_reads: u64,
    /// Destination writes.
    pub copy_writes: u64,
    /// Their media time (foreground and idle service; free transfers cost the foreground nothing), ns.
    pub copy_busy_ns: u64,
    /// Candidate blocks whose copy was abandoned because the block was written meanwhile.
    pub copies_aborted: u64,
    /// Workload reads served (at least partly) from replicas.
    pub reads_from_replicas: u64,
    /// Workload reads.
    pub reads: u64,
    /// Replicas invalidated by a write of their block.
    pub invalidated_by_write: u64,
    /// Invalidated replicas made again in their old place (`refill_invalidated`).
    pub refilled: u64,
    /// Invalidated blocks whose old place was taken meanwhile: replicated with the next batch instead.
    pub refill_places_lost: u64,
    /// Replicas invalidated by a trim.
    pub invalidated_by_trim: u64,
    /// Replicas freed because the user wrote a block whose home they occupied.
    pub evicted_by_allocation: u64,
    /// New user blocks placed off their home (the home was a claimed destination or a replica
    /// being read), at the nearest free block: never refused, never waiting.
    pub relocated_allocations: u64,
    /// Replicas dropped at the low watermark (cold ones).
    pub dropped_low: u64,
    /// Replicas dropped at the critical watermark (whole regions).
    pub dropped_critical: u64,
    /// Times replication was suspended (free space fell below low).
    pub suspensions: u64,
    /// Times it resumed (back above high).
    pub resumptions: u64,
    /// Smallest free share seen.
    pub min_free_share: f64,
    /// Bytes per replica-table entry, ours.
    pub table_entry_bytes: u64,
    /// The paper's (4 MB per 1 GB of 4 KB replicas).
    pub paper_entry_bytes: u64,
    /// The table's payload at the end, bytes.
    pub table_bytes: u64,
    /// Most replicas alive at once.
    pub peak_replicas: u64,
    /// Journal commits.
    pub commits: u64,
    /// Times the hot region moved (each clears the co-access counts).
    pub hot_region_changes: u64,
}

#[derive(Debug, Clone)]
struct Job {
    /// Source blocks, in access order.
    blocks: Vec<u64>,
    /// Destination of the first (the rest follow contiguously).
    dest: u64,
    /// Source reads outstanding.
    reads_left: usize,
    /// Blocks written since the job began (their copies are stale).
    stale: HashSet<u64>,
    /// Whether it puts invalidated blocks back into their old places (`holes`).
    refill: bool,
}

/// A workload I/O, remembered until it completes.
#[derive(Debug, Clone, Default)]
struct Part {
    write: bool,
    /// The logical blocks it covers, in order.
    blocks: Vec<u64>,
    /// Replica blocks offered (reads), to release.
    offered: Vec<u64>,
}

/// Tags of the policy's own I/O have the top bit set.
const OWN_TAG: u64 = 1 << 63;

/// The replica table's file beside the map's snapshot and journal ([`Fs2::save`]).
pub const TABLE_FILE: &str = "replicas.json";

/// FS2-static fills free runs of at most this many blocks at a time, nearest the centre first.
const STATIC_RUN_BLOCKS: usize = 1024;

/// The journal is compacted after a commit once it is longer than this.
pub const JOURNAL_LIMIT_BYTES: u64 = 8 << 20;

/// FS2 as a layout policy. See the [module docs](super).
pub struct Fs2 {
    config: Fs2Config,
    bs: u64,
    capacity_blocks: u64,
    map: BlockMap,
    journal: Journal<MemStorage>,
    table: ReplicaTable,
    monitor: AccessMonitor,
    throttle: Throttle,
    candidates: Vec<u64>,
    candidate_set: HashSet<u64>,
    candidates_since: u64,
    queue: VecDeque<Vec<u64>>,
    /// Blocks whose replica a write invalidated → the place it had (`refill_invalidated`).
    holes: HashMap<u64, u64>,
    /// Refill jobs waiting: blocks in access order and the place of the first (the rest follow).
    refills: VecDeque<(Vec<u64>, u64)>,
    active: HashMap<u64, Job>,
    next_job: u64,
    copying: HashMap<u64, u64>,
    /// Free blocks a job will write (not allocated to anyone meanwhile).
    claimed: BTreeSet<u64>,
    writes_in_flight: HashMap<u64, u32>,
    /// Replica blocks offered to reads in flight.
    readers: BTreeMap<u64, u32>,
    /// Freed replica blocks that reads in flight may still read: not reused until they finish.
    fenced: BTreeSet<u64>,
    parts: HashMap<u64, Part>,
    next_part: u64,
    last_lbn: u64,
    requests: u64,
    last_cold_sweep: Option<u64>,
    report: Fs2Report,
}

impl std::fmt::Debug for Fs2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fs2").field("config", &self.config).field("replicas", &self.table.len()).finish_non_exhaustive()
    }
}

fn fs2_err(e: Fs2Error) -> LayoutError {
    LayoutError::Fs2(e)
}

impl Fs2 {
    /// The policy on `disk`: every region's first `fill` share holds user data, the rest is free;
    /// FS2-static's replicas are placed at once.
    ///
    /// # Errors
    /// [`LayoutError::Fs2`] for a bad setting; map errors.
    pub fn new(disk: &Disk, config: Fs2Config) -> Result<Self> {
        config.validate().map_err(fs2_err)?;
        let bs = config.block_sectors;
        let map_cfg = MapConfig::for_disk(disk, bs);
        let mut map = BlockMap::new(map_cfg)?;
        let total = map_cfg.logical_blocks;
        let region = config.region_blocks;
        let used = (region as f64 * config.fill).floor() as u64;
        let mut r = 0;
        while r < total && used > 0 {
            let n = used.min(total - r);
            map.pin(PhysRange::new(r * bs, n * bs))?;
            r += region;
        }
        for (index, e) in config.static_blocks.iter().enumerate() {
            let end = e.first.saturating_add(e.blocks);
            if e.blocks == 0 || end > total {
                return Err(fs2_err(Fs2Error::StaticOutside { index, first: e.first, end, capacity: total }));
            }
        }
        let journal = Journal::create(MemStorage::new(), &map)?;
        let monitor = AccessMonitor::new(config.region_blocks, config.window, config.threshold, config.epoch_accesses, config.coaccess_decay_accesses).with_inside_candidates(config.inside_jump_blocks).with_time_window((config.window_ms * 1e6).round() as u64);
        let report = Fs2Report { table_entry_bytes: REPLICA_ENTRY_BYTES, paper_entry_bytes: PAPER_ENTRY_BYTES, min_free_share: 1.0, ..Fs2Report::default() };
        let mut p = Self {
            bs,
            capacity_blocks: total,
            map,
            journal,
            table: ReplicaTable::new(),
            monitor,
            throttle: Throttle::default(),
            candidates: Vec::new(),
            candidate_set: HashSet::new(),
            candidates_since: 0,
            queue: VecDeque::new(),
            holes: HashMap::new(),
            refills: VecDeque::new(),
            active: HashMap::new(),
            next_job: 0,
            copying: HashMap::new(),
            claimed: BTreeSet::new(),
            writes_in_flight: HashMap::new(),
            readers: BTreeMap::new(),
            fenced: BTreeSet::new(),
            parts: HashMap::new(),
            next_part: 0,
            last_lbn: 0,
            requests: 0,
            last_cold_sweep: None,
            report,
            config,
        };
        if p.config.mode == Mode::Static {
            p.replicate_static(disk)?;
        }
        p.enforce_space()?;
        Ok(p)
    }

    /// The policy rebuilt after a crash from its durable map (what [`Fs2::journal_storage`]
    /// held): the committed map, the replica table rebuilt from it (read counts start at zero),
    /// no job under way.
    ///
    /// # Errors
    /// As [`Fs2::new`]; as [`crate::layout::Journal::open`] for damaged storage;
    /// [`Fs2Error::TableMismatch`] when the recovered map breaks FS2's rules (another block size,
    /// more replicas than allowed).
    pub fn recover(disk: &Disk, config: Fs2Config, storage: MemStorage) -> Result<(Self, RecoveryReport)> {
        let mut p = Self::new(disk, Fs2Config { mode: Mode::Dynamic, static_blocks: Vec::new(), ..config.clone() })?;
        p.config = config;
        let (journal, map, report) = Journal::open(storage, DirtyRule::Logged)?;
        if map.config() != p.map.config() {
            return Err(fs2_err(Fs2Error::TableMismatch { count: 1, first: format!("the recovered map is {:?}, this disk and block size give {:?}", map.config(), p.map.config()) }));
        }
        let table = super::check::table_from_map(&map);
        let problems = super::check::check(&map, &table, p.config.max_replicas);
        if let Some(first) = problems.first() {
            return Err(fs2_err(Fs2Error::TableMismatch { count: problems.len(), first: first.to_string() }));
        }
        p.map = map;
        p.table = table;
        p.journal = journal;
        p.report.replicas_alive = p.table.len() as u64;
        Ok((p, report))
    }

    /// The map's stable storage as committed. Clone it to simulate a crash, then [`Fs2::recover`].
    #[must_use]
    pub fn journal_storage(&self) -> &MemStorage {
        self.journal.storage()
    }

    /// Writes the map (as a snapshot and an empty journal, [`DirStorage`]) and the replica table
    /// (`replicas.json`) into `dir`: what `freeblock fs2-check` reads.
    ///
    /// # Errors
    /// [`LayoutError::Io`].
    pub fn save(&self, dir: &std::path::Path) -> Result<()> {
        Journal::create(DirStorage::new(dir)?, &self.map)?;
        let text = serde_json::to_string(&self.table).map_err(|e| LayoutError::Config { field: "replicas.json", message: e.to_string() })?;
        let path = dir.join(TABLE_FILE);
        std::fs::write(&path, text).map_err(|e| LayoutError::Io { file: path.display().to_string(), action: "write", message: e.to_string() })
    }

    /// The block map (primaries and replicas).
    #[must_use]
    pub fn map(&self) -> &BlockMap {
        &self.map
    }

    /// The replica table.
    #[must_use]
    pub fn table(&self) -> &ReplicaTable {
        &self.table
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &Fs2Config {
        &self.config
    }

    /// The report so far.
    #[must_use]
    pub fn fs2_report(&self) -> Fs2Report {
        Fs2Report { replicas_alive: self.table.len() as u64, table_bytes: self.table.memory_bytes(), hot_region_changes: self.monitor.hot_changes(), ..self.report.clone() }
    }

    /// Share of the disk's blocks that are free (claimed destinations count as used).
    #[must_use]
    pub fn free_share(&self) -> f64 {
        let s = self.map.stats();
        s.free.saturating_sub(self.claimed.len() as u64) as f64 / s.total.max(1) as f64
    }

    /// The logical block's primary (where its data is), if it holds data.
    #[must_use]
    pub fn primary(&self, logical: u64) -> Option<u64> {
        self.map.first_copy(logical)
    }

    /// The file system freed `blocks` blocks from `logical` (a file deleted or truncated): their
    /// replicas are invalidated with them (paper 003 §3.2), durably.
    ///
    /// # Errors
    /// [`LayoutError::LogicalOutside`].
    pub fn trim(&mut self, logical: u64, blocks: u64) -> Result<()> {
        let end = logical.saturating_add(blocks);
        if blocks == 0 || end > self.capacity_blocks {
            return Err(LayoutError::LogicalOutside { logical, end, capacity: self.capacity_blocks });
        }
        for b in logical..end {
            self.abort_copy(b);
            self.holes.remove(&b);
            if let Some(loc) = self.map.read(b) {
                for &r in &loc.copies[1..] {
                    self.forget_replica(r);
                    self.report.invalidated_by_trim += 1;
                }
                self.log(MapOp::Trim { logical: b, blocks: 1 })?;
            } else if self.map.state(b * self.bs)? == BlockState::Pinned {
                self.log(MapOp::Unpin { extent: PhysRange::new(b * self.bs, self.bs) })?;
            }
        }
        self.commit()?;
        self.enforce_space()
    }

    fn log(&mut self, op: MapOp) -> Result<()> {
        self.journal.log(&mut self.map, op).map(drop)
    }

    fn commit(&mut self) -> Result<()> {
        if self.journal.pending() == 0 {
            return Ok(());
        }
        self.journal.commit()?;
        self.report.commits += 1;
        if self.journal.journal_len() > JOURNAL_LIMIT_BYTES {
            self.journal.checkpoint(&self.map)?;
        }
        Ok(())
    }

    /// A replica block leaves the table; reads in flight fence it from reuse.
    fn forget_replica(&mut self, lbn: u64) {
        self.table.remove(lbn);
        if self.readers.contains_key(&lbn) {
            self.fenced.insert(lbn);
        }
    }

    /// The block was written (or freed): a copy of it under way is stale. The block stays
    /// `copying` until its job ends, so no second job reads it meanwhile (freeblock refuses two
    /// pending free reads of one sector).
    fn abort_copy(&mut self, block: u64) {
        if let Some(&id) = self.copying.get(&block) {
            if let Some(j) = self.active.get_mut(&id) {
                if j.stale.insert(block) {
                    self.report.copies_aborted += 1;
                }
            }
        }
        self.monitor.forget(block);
    }

    /// Whether a free block may be handed out now (to the user or to a job).
    fn usable(&self, lbn: u64) -> bool {
        !self.claimed.contains(&lbn) && !self.fenced.contains(&lbn) && !self.readers.contains_key(&lbn)
    }

    /// Makes `b` hold data: at its home if that is free and usable, or a replica nobody is
    /// reading (dropped), or user data not yet touched (pinned); else at the nearest usable free
    /// block. Returns its primary.
    fn allocate(&mut self, b: u64) -> Result<u64> {
        if let Some(p) = self.map.first_copy(b) {
            return Ok(p);
        }
        let home = b * self.bs;
        let place = match self.map.state(home)? {
            BlockState::Pinned => {
                self.log(MapOp::Unpin { extent: PhysRange::new(home, self.bs) })?;
                home
            }
            BlockState::Free if self.usable(home) => home,
            BlockState::Live { logical } if logical != b && self.map.first_copy(logical) != Some(home) && !self.readers.contains_key(&home) => {
                self.table.remove(home);
                self.log(MapOp::DropCopy { logical, lbn: home })?;
                self.report.evicted_by_allocation += 1;
                home
            }
            _ => {
                let place = match self.nearest_free(home, 1) {
                    Some(p) => p,
                    None => {
                        self.drop_regions(1.0)?;
                        self.nearest_free(home, 1).ok_or_else(|| LayoutError::NoSpace { what: format!("logical block {b}: the disk is full of user data") })?
                    }
                };
                self.report.relocated_allocations += 1;
                place
            }
        };
        let req = WriteRequest { logical: b, blocks: 1, candidates: Candidates::single(place) };
        self.log(MapOp::Write { req, chosen: place })?;
        Ok(place)
    }

    /// The usable free run of `blocks` blocks nearest `center` (its start), searching outward;
    /// for `blocks > 1`, falls back to the longest usable run found if none is long enough.
    fn nearest_free(&self, center: u64, blocks: u64) -> Option<u64> {
        self.free_run_near(center, blocks).and_then(|(s, n)| (n >= blocks).then_some(s))
    }

    /// (start, blocks) of the best usable free run near `center`: the nearest with at least
    /// `want` blocks, else the longest seen.
    fn free_run_near(&self, center: u64, want: u64) -> Option<(u64, u64)> {
        let bs = self.bs;
        let region = self.map.region();
        let mut half = (self.config.region_blocks * bs / 2).max(bs * 64);
        let mut longest: Option<(u64, u64)> = None;
        loop {
            let lo = center.saturating_sub(half);
            let hi = center.saturating_add(half).min(region.end());
            let mut best: Option<(u64, u64, u64)> = None;
            for run in self.map.free_runs(lo, hi) {
                // Split the run around blocks that may not be handed out.
                let mut blockers: Vec<u64> = self.claimed.range(run.start..run.end()).chain(self.fenced.range(run.start..run.end())).chain(self.readers.range(run.start..run.end()).map(|(k, _)| k)).copied().collect();
                blockers.sort_unstable();
                blockers.push(run.end());
                let mut s = run.start;
                for stop in blockers {
                    if stop > s {
                        let n = (stop - s) / bs;
                        if longest.is_none_or(|(_, m)| n > m) {
                            longest = Some((s, n));
                        }
                        if n >= want {
                            // The start nearest the centre that still fits.
                            let st = center.clamp(s, stop - want * bs);
                            let st = st - (st - s) % bs;
                            let d = st.abs_diff(center);
                            if best.is_none_or(|(_, _, bd)| d < bd) {
                                best = Some((st, (stop - st) / bs, d));
                            }
                        }
                    }
                    s = s.max(stop + bs);
                }
            }
            if let Some((s, n, _)) = best {
                return Some((s, n));
            }
            if lo == 0 && hi >= region.end() {
                return longest;
            }
            half = half.saturating_mul(4);
        }
    }

    fn replicas_of(&self, b: u64) -> Vec<u64> {
        self.map.read(b).map(|l| l.copies[1..].to_vec()).unwrap_or_default()
    }

    /// FS2-static: every listed block gets a replica, in the order listed, packed into the free
    /// space nearest `static_center`; done before the run (the paper's `mkfs2`).
    fn replicate_static(&mut self, disk: &Disk) -> Result<()> {
        let center = self.config.static_center.unwrap_or(disk.capacity() / 2 / self.bs * self.bs);
        let blocks: Vec<u64> = self.config.static_blocks.iter().flat_map(|e| e.first..e.first + e.blocks).collect();
        let mut i = 0;
        while i < blocks.len() {
            let b = blocks[i];
            self.allocate(b)?;
            i += 1;
        }
        let mut i = 0;
        while i < blocks.len() {
            let want = (blocks.len() - i).min(STATIC_RUN_BLOCKS) as u64;
            let Some((start, n)) = self.free_run_near(center, want) else { break };
            let n = (n as usize).min(blocks.len() - i);
            for (j, &b) in blocks[i..i + n].iter().enumerate() {
                let lbn = start + j as u64 * self.bs;
                if self.replicas_of(b).len() < self.config.max_replicas as usize {
                    self.log(MapOp::AddCopy { logical: b, lbn })?;
                    self.table.insert(lbn, b, 0);
                    self.report.replicas_made += 1;
                }
            }
            i += n;
            if self.free_share() < self.config.watermarks.high {
                break;
            }
        }
        self.report.peak_replicas = self.table.len() as u64;
        self.commit()
    }

    /// Applies the watermarks (paper 003 §2.3).
    fn enforce_space(&mut self) -> Result<()> {
        let share = self.free_share();
        self.report.min_free_share = self.report.min_free_share.min(share);
        let band = self.config.watermarks.band(share);
        let was = self.throttle.on();
        let on = self.throttle.update(band);
        if was && !on {
            self.report.suspensions += 1;
            self.queue.clear();
            for b in self.candidates.drain(..) {
                self.candidate_set.remove(&b);
            }
            self.refills.clear();
        } else if !was && on {
            self.report.resumptions += 1;
        }
        match band {
            Band::Critical => self.drop_regions(self.config.watermarks.low)?,
            Band::Low => {
                let due = self.last_cold_sweep.is_none_or(|t| self.requests >= t + (self.config.recent_requests / 10).max(1));
                if due && !self.table.is_empty() {
                    self.drop_cold()?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Drops replicas neither recently nor frequently read.
    fn drop_cold(&mut self) -> Result<()> {
        self.last_cold_sweep = Some(self.requests);
        let now = self.requests;
        let cold: Vec<(u64, u64)> = self
            .table
            .iter()
            .filter(|(_, e)| e.reads < self.config.frequent_reads && now.saturating_sub(e.last_read) > self.config.recent_requests)
            .map(|(l, e)| (l, e.logical))
            .collect();
        for (lbn, logical) in cold {
            self.forget_replica(lbn);
            self.log(MapOp::DropCopy { logical, lbn })?;
            self.report.dropped_low += 1;
        }
        self.commit()
    }

    /// Drops every replica of a region at a time (most replicas first) until free ≥ `target`.
    fn drop_regions(&mut self, target: f64) -> Result<()> {
        let region_sectors = self.config.region_blocks * self.bs;
        while self.free_share() < target && !self.table.is_empty() {
            let mut per: HashMap<u64, u64> = HashMap::new();
            for (l, _) in self.table.iter() {
                *per.entry(l / region_sectors).or_insert(0) += 1;
            }
            let Some((&r, _)) = per.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))) else { break };
            let victims: Vec<(u64, u64)> = self.table.in_range(r * region_sectors, (r + 1) * region_sectors).map(|(l, e)| (l, e.logical)).collect();
            for (lbn, logical) in victims {
                self.forget_replica(lbn);
                self.log(MapOp::DropCopy { logical, lbn })?;
                self.report.dropped_critical += 1;
            }
        }
        self.commit()
    }

    /// Turns gathered candidates into a job once a batch is full (or has waited long enough).
    fn gather(&mut self, new: Vec<u64>) {
        if self.config.mode != Mode::Dynamic || !self.throttle.on() {
            return;
        }
        for b in new {
            if self.candidate_set.contains(&b) || self.copying.contains_key(&b) {
                continue;
            }
            if self.candidates.is_empty() {
                self.candidates_since = self.requests;
            }
            self.candidate_set.insert(b);
            self.candidates.push(b);
        }
        let waited = self.requests.saturating_sub(self.candidates_since) >= 4 * self.config.window as u64;
        if self.candidates.len() >= self.config.batch_blocks || (!self.candidates.is_empty() && waited) {
            let batch = std::mem::take(&mut self.candidates);
            self.candidate_set.clear();
            if self.queue.len() < 64 {
                self.queue.push_back(batch);
            }
        }
    }

    fn max_jobs(&self) -> usize {
        match self.config.service {
            Service::Free => 4,
            Service::Foreground | Service::Idle => 1,
        }
    }

    /// Starts queued jobs, as many as the service allows: a batch's blocks that had a replica a
    /// write invalidated go back into their old places (refill runs, started first), the rest
    /// contiguously into free space near the hot region.
    fn start_jobs(&mut self, ctx: &mut LayoutCtx<'_>) -> Result<()> {
        while self.active.len() < self.max_jobs() && self.throttle.on() {
            if let Some((blocks, dest)) = self.refills.pop_front() {
                self.start_refill(ctx, &blocks, dest);
                continue;
            }
            let Some(batch) = self.queue.pop_front() else { break };
            let max = self.config.max_replicas as usize;
            let blocks: Vec<u64> = batch
                .into_iter()
                .filter(|&b| self.map.first_copy(b).is_some() && self.replicas_of(b).len() < max && !self.copying.contains_key(&b) && !self.writes_in_flight.contains_key(&b))
                .collect();
            let blocks = self.take_holes(blocks);
            if blocks.is_empty() {
                continue;
            }
            let center = self.monitor.hot_region().map_or(self.last_lbn, |r| (r * self.config.region_blocks + self.config.region_blocks / 2) * self.bs);
            let Some((dest, n)) = self.free_run_near(center, blocks.len() as u64) else { continue };
            let n = (n as usize).min(blocks.len());
            if n == 0 {
                continue;
            }
            let (now, later) = blocks.split_at(n);
            if !later.is_empty() {
                self.queue.push_front(later.to_vec());
            }
            self.launch(ctx, now, dest, false);
        }
        Ok(())
    }

    /// A job copying `blocks` (access order) to `dest` onward: claims the places, reads the sources.
    fn launch(&mut self, ctx: &mut LayoutCtx<'_>, blocks: &[u64], dest: u64, refill: bool) {
        let id = self.next_job;
        self.next_job += 1;
        for j in 0..blocks.len() as u64 {
            self.claimed.insert(dest + j * self.bs);
        }
        // Source reads: maximal runs of contiguous primaries, in access order.
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for &b in blocks {
            self.copying.insert(b, id);
            let p = self.map.first_copy(b).expect("the caller checked it holds data");
            match runs.last_mut() {
                Some((s, k)) if *s + *k * self.bs == p => *k += 1,
                _ => runs.push((p, 1)),
            }
        }
        for &(s, k) in &runs {
            ctx.submit(PhysIo::at(Op::Read, s, k * self.bs, OWN_TAG | id), self.config.service);
            self.report.copy_reads += 1;
        }
        self.active.insert(id, Job { blocks: blocks.to_vec(), dest, reads_left: runs.len(), stale: HashSet::new(), refill });
    }

    /// Moves the blocks of a batch that have a hole whose place is still free into refill runs;
    /// returns the others (a hole whose place was taken is forgotten).
    fn take_holes(&mut self, blocks: Vec<u64>) -> Vec<u64> {
        if self.holes.is_empty() {
            return blocks;
        }
        let mut rest = Vec::new();
        let mut pairs = Vec::new();
        for b in blocks {
            match self.holes.get(&b) {
                Some(&place) if self.map.is_free(place, self.bs) && self.usable(place) => pairs.push((b, place)),
                Some(_) => {
                    self.holes.remove(&b);
                    self.report.refill_places_lost += 1;
                    rest.push(b);
                }
                None => rest.push(b),
            }
        }
        self.refills.extend(self.contiguous_runs(&pairs));
        rest
    }

    /// Starts the first run of a refill whose blocks may still go back into their holes; blocks
    /// whose place was taken meanwhile go to the front of the queue as a batch; blocks being
    /// written or copied meanwhile wait until they are candidates again.
    fn start_refill(&mut self, ctx: &mut LayoutCtx<'_>, blocks: &[u64], dest: u64) {
        let max = self.config.max_replicas as usize;
        let mut ready: Vec<(u64, u64)> = Vec::new();
        let mut lost = Vec::new();
        for (j, &b) in blocks.iter().enumerate() {
            let place = dest + j as u64 * self.bs;
            if self.holes.get(&b) != Some(&place) || self.copying.contains_key(&b) || self.writes_in_flight.contains_key(&b) {
                continue;
            }
            if self.map.first_copy(b).is_none() || self.replicas_of(b).len() >= max {
                self.holes.remove(&b);
            } else if self.map.is_free(place, self.bs) && self.usable(place) {
                ready.push((b, place));
            } else {
                self.holes.remove(&b);
                self.report.refill_places_lost += 1;
                lost.push(b);
            }
        }
        let mut runs = self.contiguous_runs(&ready);
        if !runs.is_empty() {
            let (first, at) = runs.remove(0);
            for run in runs.into_iter().rev() {
                self.refills.push_front(run);
            }
            self.launch(ctx, &first, at, true);
        }
        if !lost.is_empty() {
            self.queue.push_front(lost);
        }
    }

    /// (block, place) pairs in order, cut into runs whose places follow one another.
    fn contiguous_runs(&self, pairs: &[(u64, u64)]) -> Vec<(Vec<u64>, u64)> {
        let mut runs: Vec<(Vec<u64>, u64)> = Vec::new();
        for &(b, place) in pairs {
            match runs.last_mut() {
                Some((bl, at)) if *at + bl.len() as u64 * self.bs == place => bl.push(b),
                _ => runs.push((vec![b], place)),
            }
        }
        runs
    }

    /// One of a job's I/Os completed.
    fn job_io_done(&mut self, ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> Result<()> {
        if let Some(a) = done.access {
            self.report.copy_busy_ns += a.end.saturating_sub(a.start);
        }
        let id = done.io.tag & !OWN_TAG;
        let Some(job) = self.active.get_mut(&id) else { return Ok(()) };
        if done.io.op.is_read() {
            job.reads_left = job.reads_left.saturating_sub(1);
            if job.reads_left == 0 {
                let sectors = job.blocks.len() as u64 * self.bs;
                ctx.submit(PhysIo::at(Op::Write, job.dest, sectors, done.io.tag), self.config.service);
                self.report.copy_writes += 1;
            }
            return Ok(());
        }
        let job = self.active.remove(&id).expect("present");
        let max = self.config.max_replicas as usize;
        for (j, &b) in job.blocks.iter().enumerate() {
            let lbn = job.dest + j as u64 * self.bs;
            self.claimed.remove(&lbn);
            if self.copying.get(&b) == Some(&id) {
                self.copying.remove(&b);
            }
            if job.stale.contains(&b) || self.map.first_copy(b).is_none() || self.replicas_of(b).len() >= max || !self.map.is_free(lbn, self.bs) {
                continue;
            }
            self.log(MapOp::AddCopy { logical: b, lbn })?;
            self.table.insert(lbn, b, self.requests);
            self.monitor.forget(b);
            self.holes.remove(&b);
            self.report.replicas_made += 1;
            self.report.refilled += u64::from(job.refill);
        }
        self.report.jobs += 1;
        self.report.peak_replicas = self.report.peak_replicas.max(self.table.len() as u64);
        self.commit()?;
        self.enforce_space()
    }

    /// Walks a logical request block by block: (block, first sector offset in it, sectors).
    fn pieces(&self, lbn: u64, sectors: u64) -> Result<Vec<(u64, u64, u64)>> {
        let end = lbn.saturating_add(sectors);
        if sectors == 0 || end > self.capacity_blocks * self.bs {
            return Err(LayoutError::LogicalOutside { logical: lbn / self.bs, end: end.div_ceil(self.bs), capacity: self.capacity_blocks });
        }
        let mut out = Vec::new();
        let mut s = lbn;
        while s < end {
            let b = s / self.bs;
            let e = end.min((b + 1) * self.bs);
            out.push((b, s - b * self.bs, e - s));
            s = e;
        }
        Ok(out)
    }

    fn translate_write(&mut self, pieces: &[(u64, u64, u64)]) -> Result<Vec<(u64, u64, Part)>> {
        let mut runs: Vec<(u64, u64, Part)> = Vec::new();
        for &(b, off, len) in pieces {
            self.abort_copy(b);
            let primary = self.allocate(b)?;
            let replicas = self.replicas_of(b);
            if !replicas.is_empty() {
                if self.config.refill_invalidated && self.config.mode == Mode::Dynamic {
                    // The first replica's place, to be filled again when the block is a candidate again.
                    self.holes.entry(b).or_insert(replicas[0]);
                }
                // A write replaces every copy with the primary (the map frees the replicas).
                for &r in &replicas {
                    self.forget_replica(r);
                    self.report.invalidated_by_write += 1;
                }
                let req = WriteRequest { logical: b, blocks: 1, candidates: Candidates::single(primary) };
                self.log(MapOp::Write { req, chosen: primary })?;
            }
            *self.writes_in_flight.entry(b).or_insert(0) += 1;
            let at = primary + off;
            match runs.last_mut() {
                Some((s, n, p)) if *s + *n == at => {
                    *n += len;
                    p.blocks.push(b);
                }
                _ => runs.push((at, len, Part { write: true, blocks: vec![b], offered: Vec::new() })),
            }
        }
        // The invalidations are durable before the write is issued: no stale replica can be
        // named by the table after a crash.
        self.commit()?;
        Ok(runs)
    }

    fn translate_read(&mut self, pieces: &[(u64, u64, u64)]) -> Result<Vec<(Vec<u64>, u64, Part)>> {
        // Runs of contiguous primaries, (start, sectors, (block, offset) of each); a block never
        // written reads its home.
        type Run = (u64, u64, Vec<(u64, u64)>);
        let mut runs: Vec<Run> = Vec::new();
        for &(b, off, len) in pieces {
            let primary = match self.map.first_copy(b) {
                Some(p) => p,
                None => {
                    let home = b * self.bs;
                    // Data that was on the disk before the run: it holds data now.
                    let untouched = matches!(self.map.state(home)?, BlockState::Pinned) || (self.map.is_free(home, self.bs) && self.usable(home));
                    if untouched {
                        self.allocate(b)?
                    } else {
                        home
                    }
                }
            };
            let at = primary + off;
            match runs.last_mut() {
                Some((s, n, bl)) if *s + *n == at => {
                    *n += len;
                    bl.push((b, off));
                }
                _ => runs.push((at, len, vec![(b, off)])),
            }
        }
        self.commit()?;
        let mut out = Vec::new();
        for (start, len, blocks) in runs {
            let (b0, off0) = blocks[0];
            // Every complete replica run of these blocks.
            let mut replica_starts = Vec::new();
            let mut offered = Vec::new();
            for r0 in self.replicas_of(b0) {
                let complete = blocks.iter().enumerate().all(|(j, &(b, _))| self.replicas_of(b).contains(&(r0 + j as u64 * self.bs)));
                if complete {
                    replica_starts.push(r0 + off0);
                    offered.extend((0..blocks.len() as u64).map(|j| r0 + j * self.bs));
                }
            }
            let starts = match self.config.nearest {
                Nearest::Positioning => std::iter::once(start).chain(replica_starts).collect(),
                Nearest::Lbn => {
                    // The paper: the copy nearest the last block accessed, by LBN distance.
                    let last = self.last_lbn;
                    let best = replica_starts.iter().copied().filter(|r| r.abs_diff(last) < start.abs_diff(last)).min_by_key(|r| r.abs_diff(last));
                    match best {
                        Some(r) => {
                            offered.retain(|&o| o >= r - off0 && o < r - off0 + blocks.len() as u64 * self.bs);
                            vec![r]
                        }
                        None => {
                            offered.clear();
                            vec![start]
                        }
                    }
                }
            };
            for &o in &offered {
                *self.readers.entry(o).or_insert(0) += 1;
            }
            out.push((starts, len, Part { write: false, blocks: blocks.iter().map(|x| x.0).collect(), offered }));
        }
        Ok(out)
    }
}

impl LayoutPolicy for Fs2 {
    fn name(&self) -> String {
        "fs2".into()
    }

    fn logical_sectors(&self) -> Option<u64> {
        Some(self.capacity_blocks * self.bs)
    }

    fn carried_blocks(&self, tag: u64) -> Option<Vec<u64>> {
        self.parts.get(&tag).map(|p| p.blocks.clone())
    }

    fn journal(&self) -> Option<&MemStorage> {
        Some(self.journal_storage())
    }

    fn translate(&mut self, ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> Result<()> {
        self.requests += 1;
        let pieces = self.pieces(io.lbn, io.sectors)?;
        let mut found = Vec::new();
        let blocks: Vec<u64> = pieces.iter().map(|p| p.0).collect();
        self.monitor.record(&blocks, ctx.now, &mut found);
        let ios: Vec<(Vec<u64>, u64, Part)> = if io.op.is_read() {
            self.report.reads += 1;
            self.translate_read(&pieces)?
        } else {
            self.translate_write(&pieces)?.into_iter().map(|(s, n, p)| (vec![s], n, p)).collect()
        };
        for (starts, sectors, part) in ios {
            let tag = self.next_part;
            self.next_part += 1;
            out.push(PhysIo { op: io.op, starts, sectors, tag });
            self.parts.insert(tag, part);
        }
        self.enforce_space()?;
        self.gather(found);
        self.start_jobs(ctx)
    }

    fn complete(&mut self, ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> Result<()> {
        if done.request.is_none() && done.io.tag & OWN_TAG != 0 {
            self.job_io_done(ctx, done)?;
            return self.start_jobs(ctx);
        }
        self.last_lbn = done.lbn + done.io.sectors;
        let Some(part) = self.parts.remove(&done.io.tag) else { return Ok(()) };
        if part.write {
            for b in &part.blocks {
                if let Some(n) = self.writes_in_flight.get_mut(b) {
                    *n -= 1;
                    if *n == 0 {
                        self.writes_in_flight.remove(b);
                    }
                }
            }
        } else {
            let from_replica = done.chosen > 0 || done.io.starts.len() == 1 && !part.offered.is_empty();
            if from_replica {
                self.report.reads_from_replicas += 1;
                let bs = self.bs;
                let first = done.lbn - done.lbn % bs;
                for j in 0..part.blocks.len() as u64 {
                    self.table.note_read(first + j * bs, self.requests);
                }
            }
            for o in part.offered {
                if let Some(n) = self.readers.get_mut(&o) {
                    *n -= 1;
                    if *n == 0 {
                        self.readers.remove(&o);
                        self.fenced.remove(&o);
                    }
                }
            }
        }
        self.start_jobs(ctx)
    }

    fn own_write_lost(&mut self, tag: u64) -> Result<bool> {
        let Some(job) = self.active.get_mut(&(tag & !OWN_TAG)).filter(|j| tag & OWN_TAG != 0 && j.reads_left == 0) else { return Ok(false) };
        // Every copy of the job is stale: its completion adds no replica, and frees the place.
        for &b in &job.blocks {
            if job.stale.insert(b) {
                self.report.copies_aborted += 1;
            }
        }
        Ok(true)
    }

    fn report(&self) -> serde_json::Value {
        serde_json::to_value(self.fs2_report()).unwrap_or(serde_json::Value::Null)
    }
}
