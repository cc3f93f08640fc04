//! The scrub: a freeblock background task that reads the real bytes of every block as the
//! modelled head passes over it (free bandwidth, or idle time if configured) and checks each
//! against the checksum recorded when it was written.
//!
//! ```text
//!  WRITE ─► pwrite ─► crc32 of each 4 KiB block it touched ─► Checksums (block → crc)
//!                                                                 ▲ compare
//!  engine: freeblock delivers block b ──► checker thread: read b from the store, crc32
//!          (the modelled head passed it)   (channel)
//! ```
//!
//! The engine thread only names the blocks; the checker thread reads and checks them. A read of
//! the real bytes takes microseconds (milliseconds on a busy disk under the store), and on the
//! engine thread it delayed the next event: with `--realtime` the lateness p99 rose from about
//! 100 µs to 1 ms. The checker runs a little behind the model; it has checked every block
//! delivered once the engine has stopped (the scrub's drop waits for it).
//!
//! | between the engine and the checker | why |
//! |---|---|
//! | runs of blocks in a bounded channel, its slots allocated once | the checker frees nothing the engine allocated: a free into the engine's malloc arena takes its lock, and a checker preempted there (it is not `SCHED_FIFO`) would hold the engine up for milliseconds |
//! | the checker polls every 5 ms | a send never wakes it, so the engine makes no wake-up call on its way to the next event |
//! | runs the channel cannot take wait in the engine's own queue | no block goes unchecked, and the engine never waits |
//!
//! | block | verdict |
//! |---|---|
//! | has a checksum, crc matches | verified |
//! | has a checksum, crc differs | **mismatch** (counted, first ones logged) |
//! | never written, in a store this server created | verified against zeroes |
//! | never written, in a store that existed before its checksums | unverified (no reference yet) |
//! | its checksum was being written when the server was killed | unverified; the bytes' crc is adopted |
//!
//! The checksums are kept in `STORE.sums` beside the store, so a restarted server (and
//! `freeblock check`) verifies blocks written before. Physical block `b` (4 KiB of the store) has
//! 8 bytes at offset `8 b`:
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | CRC-32 of the block (little-endian) |
//! | 4..8 | state: 0 none · 1 valid · 2 being written |
//!
//! A write marks its blocks "being written", writes the data, then records their checksums, all
//! under one lock (the scrub's check of a block takes it too, so it never sees a block
//! half-written). A kill between the steps leaves "being written": that block's bytes are
//! whatever the crash left, so there is nothing to verify them against; they are counted as
//! unverified, and their crc becomes the reference.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use freeblock::freeblock::apps::{BackgroundApp, TaskControl, TaskReport};
use freeblock::freeblock::Delivery;

use crate::store::Store;

/// The scrub's block, bytes.
pub const SCRUB_BLOCK: u64 = 4096;

/// Bytes per block in `STORE.sums`.
const ENTRY_BYTES: u64 = 8;

/// One block's entry in `STORE.sums`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SumEntry {
    /// No checksum recorded.
    None,
    /// The block's CRC-32.
    Valid(u32),
    /// A write of the block was under way when the server stopped.
    BeingWritten,
}

impl SumEntry {
    fn encode(self) -> [u8; 8] {
        let (crc, state) = match self {
            SumEntry::None => (0, 0u32),
            SumEntry::Valid(c) => (c, 1),
            SumEntry::BeingWritten => (0, 2),
        };
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&crc.to_le_bytes());
        b[4..].copy_from_slice(&state.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> Result<Self, u32> {
        let crc = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        match u32::from_le_bytes([b[4], b[5], b[6], b[7]]) {
            0 => Ok(SumEntry::None),
            1 => Ok(SumEntry::Valid(crc)),
            2 => Ok(SumEntry::BeingWritten),
            other => Err(other),
        }
    }
}

/// The checksums of the store's 4 KiB blocks, in `STORE.sums` (see the module doc).
pub struct Checksums {
    file: File,
    path: PathBuf,
    lock: Mutex<()>,
    /// Whether blocks never written read as zeroes (the store was created empty by the server).
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
    /// When the scrub started (its rate and ETA are measured from here).
    pub started: std::sync::OnceLock<std::time::Instant>,
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
    /// Bytes scrubbed since the scrub started (every pass).
    pub bytes: u64,
    /// Mean scrub rate since it started, bytes a second (wall clock: the model's time under
    /// `--pace real`).
    pub bytes_per_s: f64,
    /// Seconds to finish the pass under way at that rate (`None`: nothing scrubbed yet).
    pub pass_eta_s: Option<f64>,
    /// Seconds a whole pass over the disk takes at that rate (`None`: nothing scrubbed yet).
    pub whole_disk_s: Option<f64>,
}

impl ScrubCounters {
    /// The counters now.
    #[must_use]
    pub fn snapshot(&self) -> ScrubSummary {
        let per = self.per_pass.load(Ordering::Relaxed);
        let in_pass = self.in_pass.load(Ordering::Relaxed);
        let bytes = (self.passes.load(Ordering::Relaxed) * per + in_pass) * SCRUB_BLOCK;
        let elapsed_s = self.started.get().map_or(0.0, |t| t.elapsed().as_secs_f64());
        let bytes_per_s = if elapsed_s > 0.0 { bytes as f64 / elapsed_s } else { 0.0 };
        let at_rate = |blocks: u64| (bytes_per_s > 0.0).then(|| (blocks * SCRUB_BLOCK) as f64 / bytes_per_s);
        ScrubSummary {
            bytes,
            bytes_per_s,
            pass_eta_s: at_rate(per.saturating_sub(in_pass)),
            whole_disk_s: at_rate(per),
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
    /// The checksums of `store` (its path and size), kept in `<store>.sums` (created sparse if
    /// missing); `fresh` when never-written blocks are zeroes.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn open(store: &Path, store_bytes: u64, fresh: bool) -> std::io::Result<Self> {
        let path = crate::store::beside(store, "sums");
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)?;
        let want = store_bytes.div_ceil(SCRUB_BLOCK) * ENTRY_BYTES;
        if file.metadata()?.len() < want {
            file.set_len(want)?;
        }
        Ok(Self { file, path, lock: Mutex::new(()), fresh, zero_crc: crc32fast::hash(&[0u8; SCRUB_BLOCK as usize]) })
    }

    /// The checksum file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether never-written blocks are zeroes.
    #[must_use]
    pub fn fresh(&self) -> bool {
        self.fresh
    }

    /// Block `block`'s entry.
    ///
    /// # Errors
    /// The file's I/O error, or `InvalidData` for an unknown state (naming the block).
    pub fn entry(&self, block: u64) -> std::io::Result<SumEntry> {
        let mut b = [0u8; 8];
        self.file.read_exact_at(&mut b, block * ENTRY_BYTES)?;
        SumEntry::decode(&b).map_err(|state| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: block {block} has state {state} (want 0, 1 or 2)", self.path.display())))
    }

    /// Sets block `block`'s entry.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn set(&self, block: u64, entry: SumEntry) -> std::io::Result<()> {
        self.file.write_all_at(&entry.encode(), block * ENTRY_BYTES)
    }

    fn set_run(&self, first: u64, entries: &[SumEntry]) -> std::io::Result<()> {
        let bytes: Vec<u8> = entries.iter().flat_map(|e| e.encode()).collect();
        self.file.write_all_at(&bytes, first * ENTRY_BYTES)
    }

    /// Makes the checksums durable.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn sync(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    /// A second handle on the checksums file, for a sync made off the calling thread.
    ///
    /// # Errors
    /// The descriptor could not be duplicated.
    pub fn sync_handle(&self) -> std::io::Result<std::fs::File> {
        self.file.try_clone()
    }

    /// Runs `write` (which writes `length` bytes at `offset` of `store`) between marking the
    /// blocks it touches "being written" and recording their checksums, under the lock.
    ///
    /// # Errors
    /// The store's or the checksum file's I/O error.
    pub fn write_with(&self, store: &Store, offset: u64, length: u64, write: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<()> {
        let _held = self.lock.lock().expect("never poisoned");
        if length == 0 {
            return write();
        }
        let (first, last) = (offset / SCRUB_BLOCK, (offset + length - 1) / SCRUB_BLOCK);
        let n = (last - first + 1) as usize;
        self.set_run(first, &vec![SumEntry::BeingWritten; n])?;
        write()?;
        let mut buf = vec![0u8; SCRUB_BLOCK as usize];
        let mut sums = Vec::with_capacity(n);
        for block in first..=last {
            let k = read_block(store, block, &mut buf)?;
            sums.push(SumEntry::Valid(crc32fast::hash(&buf[..k])));
        }
        self.set_run(first, &sums)
    }

    /// Reads block `block` and compares it with its checksum: `Some(matches)`, or `None` when
    /// there is no reference (a block being written at a crash gets its crc adopted).
    ///
    /// # Errors
    /// The store's or the checksum file's I/O error.
    pub fn check(&self, store: &Store, block: u64, buf: &mut [u8]) -> std::io::Result<Option<bool>> {
        let _held = self.lock.lock().expect("never poisoned");
        let want = match self.entry(block)? {
            SumEntry::Valid(c) => c,
            SumEntry::None if self.fresh => self.zero_crc,
            SumEntry::None => return Ok(None),
            SumEntry::BeingWritten => {
                let n = read_block(store, block, buf)?;
                self.set(block, SumEntry::Valid(crc32fast::hash(&buf[..n])))?;
                return Ok(None);
            }
        };
        let n = read_block(store, block, buf)?;
        Ok(Some(crc32fast::hash(&buf[..n]) == want))
    }
}

/// Reads block `block` (the last one may be short); returns its length.
///
/// # Errors
/// The store's I/O error.
pub fn read_block(store: &Store, block: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    let at = block * SCRUB_BLOCK;
    let n = SCRUB_BLOCK.min(store.size().saturating_sub(at)) as usize;
    store.read(at, &mut buf[..n])?;
    Ok(n)
}

/// How often the checker thread looks for blocks to check.
const CHECKER_POLL: std::time::Duration = std::time::Duration::from_millis(5);

/// The freeblock application (see the module doc); `passes = 0` scrubs for ever.
pub struct Scrub {
    sector_bytes: u64,
    counters: Arc<ScrubCounters>,
    passes: u64,
    done: bool,
    /// Runs of blocks (first, count) for the checker thread, in the order the modelled head
    /// passed them.
    to_check: Option<mpsc::SyncSender<(u64, u64)>>,
    /// Runs the channel had no room for yet.
    waiting: VecDeque<(u64, u64)>,
    checker: Option<JoinHandle<()>>,
}

/// Runs of blocks the channel to the checker holds (its slots are allocated once, here).
const CHANNEL_RUNS: usize = 4096;

impl Scrub {
    /// A scrub of `store` against `sums`, `passes` times (0: for ever), counting into `counters`;
    /// its checker thread starts now.
    ///
    /// # Errors
    /// The thread could not be started.
    pub fn new(store: Arc<Store>, sums: Arc<Checksums>, sector_bytes: u64, counters: Arc<ScrubCounters>, passes: u64) -> std::io::Result<Self> {
        counters.started.get_or_init(std::time::Instant::now);
        let (to_check, runs) = mpsc::sync_channel::<(u64, u64)>(CHANNEL_RUNS);
        let checked = Arc::clone(&counters);
        let checker = std::thread::Builder::new().name("freeblock-scrub".into()).spawn(move || {
            let mut buf = vec![0u8; SCRUB_BLOCK as usize];
            loop {
                // Polled, not waited on: a send to a waiting receiver would make the engine
                // thread wake this one, on its way to the next event.
                match runs.try_recv() {
                    Ok((first, count)) => {
                        for block in first..first + count {
                            check_one(&store, &sums, &checked, block, &mut buf);
                        }
                    }
                    Err(mpsc::TryRecvError::Empty) => std::thread::sleep(CHECKER_POLL),
                    Err(mpsc::TryRecvError::Disconnected) => return,
                }
            }
        })?;
        Ok(Self { sector_bytes, counters, passes, done: false, to_check: Some(to_check), waiting: VecDeque::new(), checker: Some(checker) })
    }

    /// Hands the checker the waiting runs the channel has room for (all of them when `block`);
    /// runs for a checker that is gone (it panicked) count as read errors.
    fn hand_over(&mut self, block: bool) {
        while let Some(&run) = self.waiting.front() {
            let sent = match &self.to_check {
                Some(tx) if block => tx.send(run).map_err(|_| ()),
                Some(tx) => match tx.try_send(run) {
                    Ok(()) => Ok(()),
                    Err(mpsc::TrySendError::Full(_)) => return,
                    Err(mpsc::TrySendError::Disconnected(_)) => Err(()),
                },
                None => Err(()),
            };
            if sent.is_err() {
                self.counters.read_errors.fetch_add(run.1, Ordering::Relaxed);
            }
            self.waiting.pop_front();
        }
    }
}

/// Checks block `block` against its checksum and counts the verdict.
fn check_one(store: &Store, sums: &Checksums, c: &ScrubCounters, block: u64, buf: &mut [u8]) {
    match sums.check(store, block, buf) {
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

impl Drop for Scrub {
    /// Waits for the checker to check every block already delivered.
    fn drop(&mut self) {
        self.hand_over(true);
        drop(self.to_check.take());
        if let Some(t) = self.checker.take() {
            let _ = t.join();
        }
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
        for d in blocks {
            let block = d.lbn * self.sector_bytes / SCRUB_BLOCK;
            match self.waiting.back_mut() {
                Some((first, count)) if *first + *count == block => *count += 1,
                _ => self.waiting.push_back((block, 1)),
            }
        }
        self.hand_over(false);
        let c = &self.counters;
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
