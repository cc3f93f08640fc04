//! The scrub: a freeblock background task that reads the real bytes of every block as the
//! modelled head passes over it (free bandwidth, or idle time if configured) and checks each
//! against the checksum recorded when it was written.
//!
//! ```text
//!  WRITE ─► pwrite ─► crc32 of each 4 KiB block it touched ─► Checksums (block → crc)
//!                                                                 ▲ compare
//!  engine: freeblock delivers block b (modelled head passed it) ─► read b from the store, crc32
//! ```
//!
//! | block | verdict |
//! |---|---|
//! | written since the server started, crc matches | verified |
//! | written since the server started, crc differs | **mismatch** (counted, first ones logged) |
//! | never written, in a store this server created | verified against zeroes |
//! | never written since start, in a store that existed | unverified (no reference yet) |
//!
//! Checksums live in memory: a restarted server has no reference for blocks written before.
//! A write and the scrub's check of the same block take one lock, so the scrub never sees a
//! block half-written.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use freeblock::freeblock::apps::{BackgroundApp, TaskControl, TaskReport};
use freeblock::freeblock::Delivery;

use crate::store::Store;

/// The scrub's block, bytes.
pub const SCRUB_BLOCK: u64 = 4096;

/// Checksums of the blocks written since the server started.
pub struct Checksums {
    sums: Mutex<HashMap<u64, u32>>,
    /// Whether blocks never written read as zeroes (the store was created empty by this server).
    fresh: bool,
    zero_crc: u32,
}

/// What the scrub has found so far.
#[derive(Debug, Default)]
pub struct ScrubCounters {
    /// Blocks whose bytes matched their checksum.
    pub verified: AtomicU64,
    /// Blocks whose bytes did not.
    pub mismatched: AtomicU64,
    /// Blocks read with no checksum to compare against.
    pub unverified: AtomicU64,
    /// Blocks the store could not read.
    pub read_errors: AtomicU64,
    /// Whole passes over the disk completed.
    pub passes: AtomicU64,
    /// Blocks delivered in the pass under way.
    pub in_pass: AtomicU64,
    /// Blocks in a pass.
    pub per_pass: AtomicU64,
    /// The first blocks found not to match (at most [`MISMATCHES_KEPT`]).
    pub mismatches: Mutex<Vec<u64>>,
}

/// How many mismatched blocks are kept by number (all are counted).
pub const MISMATCHES_KEPT: usize = 1000;

/// [`ScrubCounters`] at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrubSummary {
    /// The first blocks found not to match, in the order found.
    pub mismatches: Vec<u64>,
    /// Blocks verified.
    pub verified: u64,
    /// Blocks that did not match.
    pub mismatched: u64,
    /// Blocks without a reference.
    pub unverified: u64,
    /// Blocks the store could not read.
    pub read_errors: u64,
    /// Whole passes completed.
    pub passes: u64,
    /// Fraction of the pass under way delivered.
    pub progress: f64,
}

impl ScrubCounters {
    /// The counters now.
    #[must_use]
    pub fn snapshot(&self) -> ScrubSummary {
        let per = self.per_pass.load(Ordering::Relaxed);
        ScrubSummary {
            mismatches: self.mismatches.lock().expect("never poisoned").clone(),
            verified: self.verified.load(Ordering::Relaxed),
            mismatched: self.mismatched.load(Ordering::Relaxed),
            unverified: self.unverified.load(Ordering::Relaxed),
            read_errors: self.read_errors.load(Ordering::Relaxed),
            passes: self.passes.load(Ordering::Relaxed),
            progress: if per == 0 { 0.0 } else { self.in_pass.load(Ordering::Relaxed) as f64 / per as f64 },
        }
    }
}

impl Checksums {
    /// An empty table; `fresh` when the store was just created (all zeroes).
    #[must_use]
    pub fn new(fresh: bool) -> Self {
        Self { sums: Mutex::new(HashMap::new()), fresh, zero_crc: crc32fast::hash(&[0u8; SCRUB_BLOCK as usize]) }
    }

    /// Runs `write` (which writes `length` bytes at `offset` of `store`), then records the
    /// checksums of every block it touched, all under the table's lock.
    ///
    /// # Errors
    /// The store's I/O error.
    pub fn write_with(&self, store: &Store, offset: u64, length: u64, write: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<()> {
        let mut sums = self.sums.lock().expect("never poisoned");
        write()?;
        if length == 0 {
            return Ok(());
        }
        let mut buf = vec![0u8; SCRUB_BLOCK as usize];
        for block in offset / SCRUB_BLOCK..=(offset + length - 1) / SCRUB_BLOCK {
            let n = read_block(store, block, &mut buf)?;
            sums.insert(block, crc32fast::hash(&buf[..n]));
        }
        Ok(())
    }

    /// Reads block `block` and compares it with its checksum: `Some(matches)`, or `None` when
    /// there is no reference.
    fn check(&self, store: &Store, block: u64, buf: &mut [u8]) -> std::io::Result<Option<bool>> {
        let sums = self.sums.lock().expect("never poisoned");
        let want = match sums.get(&block) {
            Some(&c) => c,
            None if self.fresh => self.zero_crc,
            None => return Ok(None),
        };
        let n = read_block(store, block, buf)?;
        Ok(Some(crc32fast::hash(&buf[..n]) == want))
    }
}

/// Reads block `block` (the last one may be short); returns its length.
fn read_block(store: &Store, block: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    let at = block * SCRUB_BLOCK;
    let n = SCRUB_BLOCK.min(store.size().saturating_sub(at)) as usize;
    store.read(at, &mut buf[..n])?;
    Ok(n)
}

/// The freeblock application (see the module doc); `passes = 0` scrubs for ever.
pub struct Scrub {
    store: Arc<Store>,
    sums: Arc<Checksums>,
    sector_bytes: u64,
    counters: Arc<ScrubCounters>,
    passes: u64,
    done: bool,
    buf: Vec<u8>,
}

impl Scrub {
    /// A scrub of `store` against `sums`, `passes` times (0: for ever), counting into `counters`.
    #[must_use]
    pub fn new(store: Arc<Store>, sums: Arc<Checksums>, sector_bytes: u64, counters: Arc<ScrubCounters>, passes: u64) -> Self {
        Self { store, sums, sector_bytes, counters, passes, done: false, buf: vec![0u8; SCRUB_BLOCK as usize] }
    }
}

impl BackgroundApp for Scrub {
    fn name(&self) -> String {
        "scrub".into()
    }

    fn block_bytes(&self) -> u64 {
        SCRUB_BLOCK
    }

    fn start(&mut self, ctl: &mut TaskControl<'_>) -> freeblock::freeblock::error::Result<()> {
        let blocks = ctl.register_whole_disk()?;
        self.counters.per_pass.store(blocks, Ordering::Relaxed);
        Ok(())
    }

    fn on_blocks(&mut self, ctl: &mut TaskControl<'_>, blocks: &[Delivery]) -> freeblock::freeblock::error::Result<()> {
        let c = &self.counters;
        for d in blocks {
            let block = d.lbn * self.sector_bytes / SCRUB_BLOCK;
            match self.sums.check(&self.store, block, &mut self.buf) {
                Ok(Some(true)) => c.verified.fetch_add(1, Ordering::Relaxed),
                Ok(Some(false)) => {
                    let mut kept = c.mismatches.lock().expect("never poisoned");
                    if kept.len() < MISMATCHES_KEPT {
                        kept.push(block);
                    }
                    c.mismatched.fetch_add(1, Ordering::Relaxed)
                }
                Ok(None) => c.unverified.fetch_add(1, Ordering::Relaxed),
                Err(_) => c.read_errors.fetch_add(1, Ordering::Relaxed),
            };
        }
        c.in_pass.fetch_add(blocks.len() as u64, Ordering::Relaxed);
        if ctl.wanted_sectors() == 0 {
            let passes = c.passes.fetch_add(1, Ordering::Relaxed) + 1;
            c.in_pass.store(0, Ordering::Relaxed);
            if self.passes == 0 || passes < self.passes {
                ctl.register_whole_disk()?;
            } else {
                self.done = true;
            }
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn is_endless(&self) -> bool {
        self.passes == 0
    }

    fn report(&self) -> TaskReport {
        let c = &self.counters;
        let delivered = c.passes.load(Ordering::Relaxed) * c.per_pass.load(Ordering::Relaxed) + c.in_pass.load(Ordering::Relaxed);
        TaskReport { name: self.name(), blocks_delivered: delivered, block_bytes: SCRUB_BLOCK, passes: Vec::new(), progress: Vec::new() }
    }
}
