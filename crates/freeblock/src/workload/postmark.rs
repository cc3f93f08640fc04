//! A PostMark-like small-file workload at block level, for the log-structured layout (paper 000
//! §5 ran PostMark 1.11 on LLD).
//!
//! PostMark creates a pool of files, then runs transactions, each one access to an existing file
//! (read it whole, or append to it) and one file manipulation (create a file, or delete one), in
//! 1:1 ratios. Here a file is a run of 4 KB logical blocks in a slot of its own, a directory is
//! one block rewritten when a file is created in it or deleted from it, and a delete tells the
//! layout which blocks are free through a [`TrimQueue`].
//!
//! ```text
//!   logical blocks: [ dir 0 … dir 99 | slot 0 (4 blocks) | slot 1 | … ]
//!   pool:         create × files                         (writes: file blocks, its directory)
//!   transaction:  read (all blocks) | append (1 B–4 KB, to 10 KB)  then  create | delete (trim + directory)
//!   phases:       the transactions run twice; only the second is measured
//! ```
//!
//! | setting | paper 000 §5 | here |
//! |---|---|---|
//! | file size | 5–10 KB (PostMark's default) | uniform 5120–10240 bytes, whole 4 KB blocks on disk |
//! | subdirectories | 100 | 100, one block each |
//! | transactions | 25 000, run twice, second measured | the same |
//! | initial pool | varied for the utilisation | sized so the measured phase's *mean* live data is the target ([`PostmarkSpec::for_utilisation`]: appends grow files, so a pool sized at creation drifts up) |
//! | read:append, create:delete | 1:1, 1:1 | the same |
//! | append size | PostMark's | 1 byte–4 KB; a file at 10 KB rewrites its last block instead (our choice: keeps the utilisation near its target) |
//! | CPU time | measured on a 550 MHz Pentium III | a fixed 0.25 ms per file operation (our assumption) |
//! | inode writes | whatever the file system above LLD wrote | none by default; `inode_bytes` adds an inode table whose block every file operation rewrites (a what-if, docs/lfs.md) |
//!
//! Requests are [`ArrivalKind::ClosedDelay`]: one outstanding, each file operation's first
//! request issued its CPU time after the previous request completed.

// `x % n == 0` rather than `is_multiple_of` (Rust 1.87), as in the rest of the workspace.
#![allow(clippy::manual_is_multiple_of)]

use std::collections::VecDeque;

use freeblock_disk::Op;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{ArrivalKind, Request, Workload, WorkloadError};
use crate::layout::lfs::{LfsError, TrimQueue};

/// PostMark's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostmarkSpec {
    /// Files in the initial pool (sets the utilisation).
    pub files: u32,
    /// Transactions per phase. Default 25 000.
    pub transactions: u32,
    /// Transaction phases; only the last is measured. Default 2.
    pub phases: u32,
    /// Subdirectories. Default 100.
    pub directories: u32,
    /// Smallest file, bytes. Default 5120.
    pub min_bytes: u64,
    /// Largest file, bytes (appends stop there). Default 10240.
    pub max_bytes: u64,
    /// Largest append, bytes. Default 4096.
    pub append_max_bytes: u64,
    /// Block size, bytes. Default 4096.
    pub block_bytes: u64,
    /// Blocks in a file's slot (at least `max_bytes`). Default 4.
    pub slot_blocks: u64,
    /// CPU time of one file operation, ns. Default 250 000.
    pub cpu_ns_per_op: u64,
    /// Bytes of a file's inode in an inode table after the file slots; every file operation
    /// (a read's access time, an append's size, a create, a delete) rewrites the block holding
    /// it. 0 (the default): no inode table.
    #[serde(default)]
    pub inode_bytes: u64,
    /// Seed.
    pub seed: u64,
}

impl Default for PostmarkSpec {
    fn default() -> Self {
        Self { files: 1000, transactions: 25_000, phases: 2, directories: 100, min_bytes: 5120, max_bytes: 10_240, append_max_bytes: 4096, block_bytes: 4096, slot_blocks: 4, cpu_ns_per_op: 250_000, inode_bytes: 0, seed: 1 }
    }
}

impl PostmarkSpec {
    /// Mean blocks of a new file.
    #[must_use]
    pub fn mean_file_blocks(&self) -> f64 {
        let n = (self.max_bytes - self.min_bytes + 1) as f64;
        let total: u64 = (self.min_bytes..=self.max_bytes).map(|b| b.div_ceil(self.block_bytes)).sum();
        total as f64 / n
    }

    /// The spec whose live data fills `utilisation` of `data_blocks` (directories included) on
    /// average over the measured phase.
    ///
    /// Appends grow files towards `max_bytes` and deletes take random files, so a pool sized for
    /// the target at creation ends well above it (a nominal 93% once ended at 99%, and 95% ran out
    /// of space). The pool is therefore sized for the steady state: the workload is generated
    /// without a disk (it depends only on the spec and the seed), the live blocks averaged over
    /// its last phase, and the file count scaled until that average is within 0.2% of the target
    /// (at most eight rounds, keeping the closest). Creates and deletes stay 1:1 as in PostMark, so the file count
    /// only wanders (a random walk of a few hundred files over 50 000 transactions).
    ///
    /// # Errors
    /// [`LfsError::OverFull`] for a utilisation over 100% (or not a positive number).
    pub fn for_utilisation(utilisation: f64, data_blocks: u64, base: PostmarkSpec) -> Result<Self, LfsError> {
        if !(utilisation.is_finite() && utilisation > 0.0 && utilisation <= 1.0) {
            return Err(LfsError::OverFull { utilisation_pct: utilisation * 100.0, data_blocks });
        }
        let dirs = f64::from(base.directories);
        let want = (utilisation * data_blocks as f64 - dirs).max(0.0);
        let mut spec = Self { files: (want / base.mean_file_blocks()).round() as u32, ..base };
        if spec.validate().is_err() || spec.files == 0 {
            // `build` reports the bad field; nothing to steady.
            return Ok(spec);
        }
        // A different pool draws different random numbers, so the rounds do not converge
        // smoothly: keep the closest.
        let mut best = (f64::INFINITY, spec.files);
        for _ in 0..8 {
            let mean = spec.measured_live_blocks() - dirs;
            let miss = (mean - want).abs();
            if miss < best.0 {
                best = (miss, spec.files);
            }
            if mean <= 0.0 || miss <= 0.002 * want {
                break;
            }
            let files = (f64::from(spec.files) * want / mean).round() as u32;
            if files == spec.files || files == 0 {
                break;
            }
            spec.files = files;
        }
        Ok(Self { files: best.1, ..spec })
    }

    /// Live blocks (directories and file blocks) averaged over the last phase's transactions,
    /// from the workload generated without a disk.
    #[must_use]
    pub fn measured_live_blocks(&self) -> f64 {
        let Ok(mut dry) = self.build(TrimQueue::default()) else { return 0.0 };
        let last_phase_start = u64::from(self.transactions) * u64::from(self.phases - 1);
        let (mut sum, mut n) = (0.0, 0u64);
        while dry.generate() {
            dry.queue.clear();
            if dry.created >= self.files && dry.transactions > last_phase_start {
                sum += dry.live_blocks as f64;
                n += 1;
            }
        }
        if n == 0 { dry.live_blocks as f64 } else { sum / n as f64 }
    }

    /// Logical blocks the workload may address: the directories, a slot per file that could
    /// ever exist at once, and their inodes' table.
    #[must_use]
    pub fn logical_blocks(&self) -> u64 {
        self.inode_table_first_block() + (self.max_slots() * self.inode_bytes).div_ceil(self.block_bytes)
    }

    /// Files that could ever exist at once: the pool and one per transaction.
    fn max_slots(&self) -> u64 {
        u64::from(self.files) + u64::from(self.transactions) * u64::from(self.phases)
    }

    /// The first block of the inode table, after the directories and the slots.
    fn inode_table_first_block(&self) -> u64 {
        u64::from(self.directories) + self.max_slots() * self.slot_blocks
    }

    /// Checks the numbers.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] naming the field.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.block_bytes == 0 || self.block_bytes % 512 != 0 {
            return Err(WorkloadError::invalid("block_bytes", format!("must be a positive multiple of 512, not {}", self.block_bytes)));
        }
        if self.min_bytes == 0 || self.min_bytes > self.max_bytes {
            return Err(WorkloadError::invalid("min_bytes", format!("must be from 1 to max_bytes ({}), not {}", self.max_bytes, self.min_bytes)));
        }
        if self.max_bytes > self.slot_blocks * self.block_bytes {
            return Err(WorkloadError::invalid("max_bytes", format!("{} does not fit a slot of {} blocks", self.max_bytes, self.slot_blocks)));
        }
        if self.inode_bytes > self.block_bytes {
            return Err(WorkloadError::invalid("inode_bytes", format!("an inode of {} bytes does not fit a block of {}", self.inode_bytes, self.block_bytes)));
        }
        if self.directories == 0 || self.phases == 0 || self.append_max_bytes == 0 {
            return Err(WorkloadError::invalid("directories", "directories, phases and append_max_bytes must be at least 1"));
        }
        Ok(())
    }

    /// The workload, handing deletes to `trims`.
    ///
    /// # Errors
    /// As [`PostmarkSpec::validate`].
    pub fn build(&self, trims: TrimQueue) -> Result<PostmarkWorkload, WorkloadError> {
        self.validate()?;
        Ok(PostmarkWorkload {
            spec: *self,
            rng: ChaCha8Rng::seed_from_u64(self.seed),
            trims,
            live: Vec::new(),
            size: Vec::new(),
            dir: Vec::new(),
            free_slots: Vec::new(),
            queue: VecDeque::new(),
            created: 0,
            transactions: 0,
            issued: 0,
            last_phase_from: None,
            live_blocks: u64::from(self.directories),
            inode_blocks_used: 0,
        })
    }

    /// Requests issued before the last phase begins (the run's warm-up), found by generating
    /// the workload without running it.
    ///
    /// # Errors
    /// As [`PostmarkSpec::validate`].
    pub fn warmup_requests(&self) -> Result<u64, WorkloadError> {
        let mut dry = self.build(TrimQueue::default())?;
        while dry.last_phase_from.is_none() {
            if dry.next_request()?.is_none() {
                break;
            }
        }
        Ok(dry.last_phase_from.unwrap_or(dry.issued))
    }
}

enum Item {
    Request(Request),
    Trim(u64, u64),
}

/// The running workload (see the module docs).
pub struct PostmarkWorkload {
    spec: PostmarkSpec,
    rng: ChaCha8Rng,
    trims: TrimQueue,
    /// Slots of the files that exist.
    live: Vec<u32>,
    /// Bytes of the file in each slot.
    size: Vec<u64>,
    /// Directory of the file in each slot.
    dir: Vec<u32>,
    free_slots: Vec<u32>,
    queue: VecDeque<Item>,
    created: u32,
    transactions: u64,
    issued: u64,
    last_phase_from: Option<u64>,
    /// Blocks the directories and the existing files take.
    live_blocks: u64,
    /// Inode table blocks written so far (counted live from their first write).
    inode_blocks_used: u64,
}

impl PostmarkWorkload {
    /// Transactions generated so far.
    #[must_use]
    pub fn transactions(&self) -> u64 {
        self.transactions
    }

    /// Files that exist.
    #[must_use]
    pub fn files(&self) -> usize {
        self.live.len()
    }

    /// Blocks the directories and the existing files take (the file system's live data).
    #[must_use]
    pub fn live_blocks(&self) -> u64 {
        self.live_blocks
    }

    fn blocks_of(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.spec.block_bytes)
    }

    fn sectors_per_block(&self) -> u64 {
        self.spec.block_bytes / 512
    }

    fn slot_first_block(&self, slot: u32) -> u64 {
        u64::from(self.spec.directories) + u64::from(slot) * self.spec.slot_blocks
    }

    fn request(&mut self, first_block: u64, blocks: u64, op: Op, cpu: bool) {
        let spb = self.sectors_per_block();
        let time = if cpu { self.spec.cpu_ns_per_op } else { 0 };
        let sectors = u32::try_from(blocks * spb).unwrap_or(u32::MAX);
        self.queue.push_back(Item::Request(Request::new(time, first_block * spb, sectors, op)));
    }

    /// The write of `slot`'s inode block, when there is an inode table.
    fn touch_inode(&mut self, slot: u32) {
        if self.spec.inode_bytes == 0 {
            return;
        }
        let table = self.spec.inode_table_first_block();
        let index = u64::from(slot) * self.spec.inode_bytes / self.spec.block_bytes;
        if index >= self.inode_blocks_used {
            self.live_blocks += index + 1 - self.inode_blocks_used;
            self.inode_blocks_used = index + 1;
        }
        self.request(table + index, 1, Op::Write, false);
    }

    fn create(&mut self) {
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.size.push(0);
            self.dir.push(0);
            (self.size.len() - 1) as u32
        });
        let bytes = self.rng.gen_range(self.spec.min_bytes..=self.spec.max_bytes);
        let dir = self.rng.gen_range(0..self.spec.directories);
        self.size[slot as usize] = bytes;
        self.dir[slot as usize] = dir;
        self.live.push(slot);
        self.live_blocks += self.blocks_of(bytes);
        let first = self.slot_first_block(slot);
        self.request(first, bytes.div_ceil(self.spec.block_bytes), Op::Write, true);
        self.request(u64::from(dir), 1, Op::Write, false);
        self.touch_inode(slot);
    }

    fn delete(&mut self) {
        let i = self.rng.gen_range(0..self.live.len());
        let slot = self.live.swap_remove(i);
        self.queue.push_back(Item::Trim(self.slot_first_block(slot), self.spec.slot_blocks));
        let dir = u64::from(self.dir[slot as usize]);
        self.live_blocks -= self.blocks_of(self.size[slot as usize]);
        self.free_slots.push(slot);
        self.request(dir, 1, Op::Write, true);
        self.touch_inode(slot);
    }

    fn access(&mut self) {
        let slot = self.live[self.rng.gen_range(0..self.live.len())];
        let first = self.slot_first_block(slot);
        let bs = self.spec.block_bytes;
        let old = self.size[slot as usize];
        if self.rng.gen_bool(0.5) {
            self.request(first, old.div_ceil(bs), Op::Read, true);
            self.touch_inode(slot);
        } else {
            let add = self.rng.gen_range(1..=self.spec.append_max_bytes);
            let new = (old + add).min(self.spec.max_bytes);
            self.size[slot as usize] = new;
            self.live_blocks += self.blocks_of(new) - self.blocks_of(old);
            // From the block holding the old end (rewritten when partly full) to the new end; a
            // full file rewrites its last block.
            let from = if new == old { (new - 1) / bs } else { old / bs };
            let to = new.div_ceil(bs);
            self.request(first + from, to - from, Op::Write, true);
            self.touch_inode(slot);
        }
    }

    fn generate(&mut self) -> bool {
        if self.created < self.spec.files {
            self.created += 1;
            self.create();
            return true;
        }
        let total = u64::from(self.spec.transactions) * u64::from(self.spec.phases);
        if self.transactions >= total {
            return false;
        }
        let last_phase_start = u64::from(self.spec.transactions) * u64::from(self.spec.phases - 1);
        if self.transactions == last_phase_start {
            self.last_phase_from = Some(self.issued);
        }
        self.transactions += 1;
        if self.live.is_empty() {
            self.create();
            return true;
        }
        self.access();
        if self.rng.gen_bool(0.5) || self.live.len() <= 1 {
            self.create();
        } else {
            self.delete();
        }
        true
    }
}

impl Workload for PostmarkWorkload {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        loop {
            match self.queue.pop_front() {
                Some(Item::Trim(first, blocks)) => self.trims.push(first, blocks),
                Some(Item::Request(r)) => {
                    self.issued += 1;
                    return Ok(Some(r));
                }
                None => {
                    if !self.generate() {
                        return Ok(None);
                    }
                }
            }
        }
    }

    fn arrival(&self) -> ArrivalKind {
        ArrivalKind::ClosedDelay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_fills_its_share_and_the_same_seed_gives_the_same_requests() {
        let spec = PostmarkSpec::for_utilisation(0.5, 10_000, PostmarkSpec { transactions: 500, ..PostmarkSpec::default() }).unwrap();
        assert!((spec.mean_file_blocks() - 2.4).abs() < 0.01, "{}", spec.mean_file_blocks());
        let collect = || {
            let q = TrimQueue::default();
            let mut w = spec.build(q).unwrap();
            let mut v = Vec::new();
            while let Some(r) = w.next_request().unwrap() {
                assert!(r.end() <= spec.logical_blocks() * 8);
                v.push(r);
            }
            (v, w.transactions())
        };
        let (a, t) = collect();
        assert_eq!(t, 1000);
        assert_eq!(a, collect().0);
        let warm = spec.warmup_requests().unwrap();
        assert!(warm > u64::from(spec.files) && warm < a.len() as u64, "{warm} of {}", a.len());
        // The pool as created is what the dry run counts at the start.
        let pool_blocks: u64 = a[..2 * spec.files as usize].iter().filter(|r| r.lbn >= 800).map(|r| u64::from(r.sectors) / 8).sum();
        let mut w = spec.build(TrimQueue::default()).unwrap();
        for _ in 0..2 * spec.files {
            w.next_request().unwrap();
        }
        assert_eq!(w.live_blocks(), pool_blocks + 100);
    }

    #[test]
    fn the_pool_is_sized_so_the_measured_phase_holds_the_target() {
        // Many transactions on few files: appends would push a pool sized at creation far up.
        let base = PostmarkSpec { transactions: 4000, ..PostmarkSpec::default() };
        for target in [0.3, 0.95] {
            let spec = PostmarkSpec::for_utilisation(target, 10_000, base).unwrap();
            let naive = ((target * 10_000.0 - 100.0) / spec.mean_file_blocks()).round() as u32;
            assert!(spec.files < naive, "steady state needs fewer files than the pool at creation: {} vs {naive}", spec.files);
            let mean = spec.measured_live_blocks() / 10_000.0;
            // A pool of the naive size ends above the target.
            let drifted = PostmarkSpec { files: naive, ..spec }.measured_live_blocks() / 10_000.0;
            // Small pools wander (creates and deletes are a random walk of ±60 files here), so
            // the steady pool is judged against the drift it removes.
            assert!((mean - target).abs() < 0.015 && (mean - target).abs() < (drifted - target) / 2.0, "{target}: the measured phase averages {mean}, the naive pool {drifted}");
            assert!(drifted > target + 0.02, "{target}: {drifted}");
        }
    }

    #[test]
    fn with_an_inode_table_every_file_operation_rewrites_its_inode_block() {
        let plain = PostmarkSpec { files: 200, transactions: 300, ..PostmarkSpec::default() };
        let with = PostmarkSpec { inode_bytes: 128, ..plain };
        let table = u64::from(plain.directories) + (200 + 600) * plain.slot_blocks;
        assert_eq!(with.logical_blocks(), table + (800 * 128u64).div_ceil(4096));
        let run = |spec: PostmarkSpec| {
            let mut w = spec.build(TrimQueue::default()).unwrap();
            let mut v = Vec::new();
            while let Some(r) = w.next_request().unwrap() {
                v.push(r);
            }
            (v, w.live_blocks())
        };
        let (a, live_a) = run(plain);
        let (b, live_b) = run(with);
        let inode_writes: Vec<_> = b.iter().filter(|r| r.lbn >= table * 8).collect();
        assert!(inode_writes.iter().all(|r| r.op == Op::Write && r.sectors == 8 && r.end() <= with.logical_blocks() * 8));
        // One per pool create and two per transaction (its access and its create or delete).
        assert_eq!(inode_writes.len(), 200 + 2 * 600);
        // The rest is the plain workload, request for request.
        let rest: Vec<_> = b.iter().filter(|r| r.lbn < table * 8).cloned().collect();
        assert_eq!(rest, a);
        // The table's blocks in use count as live data: the slots ever used, 32 inodes a block.
        let slots_used = b.iter().filter(|r| r.lbn >= u64::from(plain.directories) * 8 && r.lbn < table * 8).map(|r| (r.lbn / 8 - 100) / plain.slot_blocks).max().unwrap() + 1;
        assert_eq!(live_b - live_a, slots_used.div_ceil(32));
    }

    #[test]
    fn over_full_is_refused() {
        let e = PostmarkSpec::for_utilisation(1.05, 1000, PostmarkSpec::default()).unwrap_err().to_string();
        assert!(e.contains("105.0%") && e.contains("over 100%"), "{e}");
        let e = PostmarkSpec { inode_bytes: 8192, ..PostmarkSpec::default() }.validate().unwrap_err().to_string();
        assert!(e.contains("inode_bytes") && e.contains("8192"), "{e}");
    }
}
