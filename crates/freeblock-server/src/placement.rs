//! The physically addressed store: with a layout policy, the backing file holds every block at
//! the *physical* place the policy's map gives it, and the policy's own moves copy real bytes.
//!
//! ```text
//!  connection ─ request + bytes ─► engine ─► Placement::translate ─► policy (rearrange, FS2, …)
//!                                              │ physical I/Os, each carrying logical blocks
//!                                              ▼
//!  the modelled disk serves an I/O ─► Placement::complete:
//!     workload read   pread  the physical blocks the engine chose (primary or copy)
//!     workload write  pwrite the physical blocks the policy wrote (every copy it names, or the
//!                     candidate the device chose: range writes)
//!     policy read     keep the bytes read (source of a move: home, slot or primary)
//!     policy write    pwrite those bytes at the destination (slot, home or replica)
//!  ─► then the policy's own complete (which may commit its map) ─► mirror its journal to
//!     STORE.map.snapshot / STORE.map.journal (the store is fdatasync'ed first)
//! ```
//!
//! | event | bytes | map |
//! |---|---|---|
//! | a move's copy written | at the copy's physical place, before the policy sees the completion | the policy adds the copy, and commits it later (a table write, a job's end) |
//! | a commit of the policy's journal | the store is synced first, so a durable map never names bytes that are not | the new records are appended to `STORE.map.journal` and synced |
//! | a checkpoint of the policy's journal | as above | `STORE.map.snapshot` is replaced atomically, then the journal |
//! | a restart | the file is as the last writes left it | the policy is rebuilt from the two files (its own recovery rules) |
//!
//! Why the data stays right across a crash is each policy's design, which the engine already
//! follows in the model (rearrangement: a write of a block whose entry is not durable goes to
//! both places; FS2: a replica is added only after its bytes are written, and dropped durably
//! before a write of its block is issued; range writes: a write never lands on its block's
//! current place, and the place it frees is reused only once the map naming the new one is
//! durable). This module only makes the bytes follow the model's I/Os exactly, in the model's
//! completion order, and makes the policy's journal durable the moment the policy commits it.
//!
//! Requests reach the engine in whole blocks of the policy (the export asks clients for that
//! alignment and refuses others). FS2 puts user blocks in free space, which may hold a dropped
//! replica's old bytes: a block that was never written reads as zeroes, and a block FS2 maps on
//! its first read is zeroed there first. Range writes keep every block never written at its
//! home, which nothing else is written to: it reads as zeroes in a store the server created.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use freeblock::experiment::LayoutSpec;
use freeblock::layout::fs2::Fs2;
use freeblock::layout::journal::{DirStorage, MemStorage, Storage, StoreFile, JOURNAL_HEADER_BYTES};
use freeblock::layout::rearrange::policy::Rearrange;
use freeblock::layout::request_rangewrite::RequestRangeWrites;
use freeblock::layout::{BlockMap, Completed, LayoutCtx, LayoutError, LayoutPolicy, LogicalIo, PhysIo, Service};
use freeblock_disk::Op;

use crate::scrub::Checksums;
use crate::store::Store;

/// The bytes of one workload request while the engine serves it.
#[derive(Debug)]
pub struct RequestBytes {
    /// Export byte offset of `data[0]`.
    pub offset: u64,
    /// Write: the payload; read: filled as the engine serves it.
    pub data: Vec<u8>,
    /// The backing file failed this request's bytes: it is answered with an error, and the
    /// engine goes on serving the others.
    pub failed: Option<String>,
}

/// Requests under way by engine request id (filled when the engine accepts a request).
pub type InFlight = Arc<Mutex<HashMap<u64, RequestBytes>>>;

/// What the physical store has done, for stats and the crash campaign.
#[derive(Debug, Default)]
pub struct PlacementCounters {
    /// Copies made by the policy's moves (a block copied into a slot, written home, replicated).
    pub blocks_copied: AtomicU64,
    /// Commits of the policy's journal made durable.
    pub commits: AtomicU64,
    /// Checkpoints (new snapshots) made durable.
    pub checkpoints: AtomicU64,
}

impl PlacementCounters {
    /// The counters now.
    #[must_use]
    pub fn snapshot(&self) -> PlacementSummary {
        PlacementSummary { blocks_copied: self.blocks_copied.load(Ordering::Relaxed), commits: self.commits.load(Ordering::Relaxed), checkpoints: self.checkpoints.load(Ordering::Relaxed) }
    }

    /// The Prometheus text of the counters.
    #[must_use]
    pub fn prometheus(&self) -> String {
        let s = self.snapshot();
        format!(
            "# TYPE freeblock_layout_blocks_copied_total counter\nfreeblock_layout_blocks_copied_total {}\n# TYPE freeblock_layout_map_commits_total counter\nfreeblock_layout_map_commits_total {}\n# TYPE freeblock_layout_map_checkpoints_total counter\nfreeblock_layout_map_checkpoints_total {}\n",
            s.blocks_copied, s.commits, s.checkpoints
        )
    }
}

/// [`PlacementCounters`] at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlacementSummary {
    /// Blocks the policy's moves copied.
    pub blocks_copied: u64,
    /// Journal commits made durable.
    pub commits: u64,
    /// Snapshots made durable.
    pub checkpoints: u64,
}

/// One read of a move, in the order the policy issued it.
struct Source {
    start: u64,
    data: Option<Vec<u8>>,
}

/// A move under way: its reads, and whether the write they feed has been issued.
#[derive(Default)]
struct MoveBytes {
    sources: Vec<Source>,
    write_issued: bool,
}

/// A layout policy whose I/Os are carried out on the backing file (see the module doc).
pub struct Placement {
    inner: Box<dyn LayoutPolicy>,
    store: Arc<Store>,
    sums: Option<Arc<Checksums>>,
    in_flight: InFlight,
    sector_bytes: u64,
    block_sectors: u64,
    /// Reads of the policy's own moves, by tag, until the write they feed.
    moves: HashMap<u64, MoveBytes>,
    mirror: JournalMirror,
    counters: Arc<PlacementCounters>,
}

impl Placement {
    /// Wraps `inner` (a rearrangement, FS2 or range-writes policy) over `store`; the map's files
    /// are kept beside the store and written now. A range-writes policy is switched to keep its
    /// map in a journal ([`RequestRangeWrites::carrying_bytes`]) if it does not yet.
    ///
    /// # Errors
    /// [`LayoutError::Io`] writing the map's files; [`LayoutError::Config`] for a policy that keeps
    /// no journal.
    #[allow(clippy::too_many_arguments)]
    pub fn new(inner: Box<dyn LayoutPolicy>, store: Arc<Store>, sums: Option<Arc<Checksums>>, in_flight: InFlight, sector_bytes: u64, block_sectors: u64, files: DirStorage, counters: Arc<PlacementCounters>) -> Result<Self, LayoutError> {
        // Range writes keep a journal only when asked to (a simulation needs none).
        let inner = match inner.as_any().is::<RequestRangeWrites>() {
            true => match inner.into_any().downcast::<RequestRangeWrites>() {
                Ok(rw) if rw.journal_storage().is_none() => Box::new((*rw).carrying_bytes()?),
                Ok(rw) => rw,
                Err(_) => unreachable!("checked to be range writes"),
            },
            false => inner,
        };
        let mut p = Self { inner, store, sums, in_flight, sector_bytes, block_sectors, moves: HashMap::new(), mirror: JournalMirror::new(files), counters };
        if p.journal().is_none() {
            return Err(LayoutError::Config { field: "layout.type", message: format!("{} keeps no journal: the physical store cannot persist its map", p.inner.name()) });
        }
        p.mirror_journal()?;
        Ok(p)
    }

    fn journal(&self) -> Option<&MemStorage> {
        self.inner.journal()
    }

    /// FS2's map: its unmapped blocks hold no data (they read as zeroes).
    fn fs2_map(&self) -> Option<&BlockMap> {
        (*self.inner).as_any().downcast_ref::<Fs2>().map(Fs2::map)
    }

    fn block_bytes(&self) -> u64 {
        self.block_sectors * self.sector_bytes
    }

    fn io_err(&self, action: &'static str, e: &std::io::Error) -> LayoutError {
        LayoutError::Io { file: "the backing store".into(), action, message: e.to_string() }
    }

    /// Writes `data` at physical byte `at`, keeping the scrub's checksums.
    fn write_bytes(&self, at: u64, data: &[u8]) -> Result<(), LayoutError> {
        let write = || self.store.write(at, data);
        match &self.sums {
            Some(s) => s.write_with(&self.store, at, data.len() as u64, write),
            None => write(),
        }
        .map_err(|e| self.io_err("write", &e))
    }

    fn mirror_journal(&mut self) -> Result<(), LayoutError> {
        let Some(mem) = self.journal() else { return Ok(()) };
        let (snapshot, journal) = (mem.snapshot.clone(), mem.journal.clone());
        self.mirror.follow(snapshot.as_deref(), journal.as_deref(), &self.store, &self.counters)
    }

    /// Calls the policy with a context of its own, then hands its submissions on, noting the
    /// reads of its moves, and makes what it committed durable.
    fn call<T>(&mut self, ctx: &mut LayoutCtx<'_>, f: impl FnOnce(&mut dyn LayoutPolicy, &mut LayoutCtx<'_>) -> Result<T, LayoutError>) -> Result<T, LayoutError> {
        let out = self.call_unmirrored(ctx, f)?;
        self.mirror_journal()?;
        Ok(out)
    }

    /// [`Placement::call`] without the journal's mirroring (the caller does it).
    fn call_unmirrored<T>(&mut self, ctx: &mut LayoutCtx<'_>, f: impl FnOnce(&mut dyn LayoutPolicy, &mut LayoutCtx<'_>) -> Result<T, LayoutError>) -> Result<T, LayoutError> {
        let mut submitted: Vec<(PhysIo, Service)> = Vec::new();
        let out = {
            let mut inner_ctx = LayoutCtx::new(ctx.disk, ctx.head, ctx.now, &mut submitted);
            f(self.inner.as_mut(), &mut inner_ctx)
        };
        // What the policy issued stands even when the call failed (a refused request).
        for (io, service) in submitted {
            let m = self.moves.entry(io.tag).or_default();
            if io.op == Op::Read {
                m.sources.push(Source { start: io.starts[0], data: None });
            } else {
                m.write_issued = true;
            }
            ctx.submit(io, service);
        }
        out
    }

    /// A workload I/O is on the media: its bytes go to (or come from) the physical blocks.
    fn workload_io(&self, done: &Completed<'_>, id: u64) -> Result<(), LayoutError> {
        let blocks = self.inner.carried_blocks(done.io.tag).ok_or_else(|| LayoutError::Config { field: "layout.type", message: format!("{} does not say which blocks its I/O {} carries", self.inner.name(), done.io.tag) })?;
        let bb = self.block_bytes();
        if blocks.len() as u64 * self.block_sectors != done.io.sectors {
            return Err(LayoutError::Config { field: "layout", message: format!("an I/O of {} sectors carries {} blocks of {} sectors: requests must be whole blocks", done.io.sectors, blocks.len(), self.block_sectors) });
        }
        let mut in_flight = self.in_flight.lock().expect("never poisoned");
        // Every workload request of a placed export is handed over with its bytes.
        let Some(req) = in_flight.get_mut(&id) else {
            return Err(LayoutError::Config { field: "layout", message: format!("request {id} reached the disk without its bytes") });
        };
        let phys = done.lbn * self.sector_bytes;
        for (k, &b) in blocks.iter().enumerate() {
            let at = phys + k as u64 * bb;
            let Some(from) = (b * bb).checked_sub(req.offset).map(|o| o as usize).filter(|&o| o + bb as usize <= req.data.len()) else {
                return Err(LayoutError::Config { field: "layout", message: format!("logical block {b} lies outside its request at byte {}", req.offset) });
            };
            let piece = &mut req.data[from..from + bb as usize];
            let io = if done.io.op == Op::Write {
                self.write_bytes(at, piece)
            } else if self.fs2_map().is_some_and(|m| m.first_copy(b).is_none()) {
                // Never written: its home may hold another block's old bytes.
                piece.fill(0);
                Ok(())
            } else {
                self.store.read(at, piece).map_err(|e| self.io_err("read", &e))
            };
            // One request's failure is its own: the engine and the other requests go on.
            if let Err(e) = io {
                req.failed.get_or_insert_with(|| format!("logical block {b} at byte {at} of the store: {e}"));
            }
        }
        Ok(())
    }

    /// One of the policy's own I/Os is on the media: a move's read keeps the bytes, the write
    /// they feed puts them at the destination.
    fn own_io(&mut self, done: &Completed<'_>) -> Result<(), LayoutError> {
        let tag = done.io.tag;
        let len = (done.io.sectors * self.sector_bytes) as usize;
        if done.io.op == Op::Read {
            let mut data = vec![0u8; len];
            self.store.read(done.lbn * self.sector_bytes, &mut data).map_err(|e| self.io_err("read", &e))?;
            if let Some(s) = self.moves.get_mut(&tag).and_then(|m| m.sources.iter_mut().find(|s| s.start == done.lbn && s.data.is_none())) {
                s.data = Some(data);
            }
            return Ok(());
        }
        // A write with no reads before it carries no block (rearrangement's table write: the
        // table is the journal files).
        let Some(m) = self.moves.remove(&tag).filter(|m| !m.sources.is_empty()) else { return Ok(()) };
        let mut bytes = Vec::with_capacity(len);
        for s in m.sources {
            let data = s.data.ok_or_else(|| LayoutError::Config { field: "layout", message: format!("a move wrote sector {} before reading its source at sector {}", done.lbn, s.start) })?;
            bytes.extend_from_slice(&data);
        }
        if bytes.len() != len {
            return Err(LayoutError::Config { field: "layout", message: format!("a move read {} bytes and writes {len} at sector {}", bytes.len(), done.lbn) });
        }
        self.write_bytes(done.lbn * self.sector_bytes, &bytes)?;
        self.counters.blocks_copied.fetch_add(done.io.sectors / self.block_sectors, Ordering::Relaxed);
        Ok(())
    }
}

impl LayoutPolicy for Placement {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn logical_sectors(&self) -> Option<u64> {
        self.inner.logical_sectors()
    }

    fn translate(&mut self, ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> Result<(), LayoutError> {
        // FS2 maps a block never written on its first read, maybe in space a dropped replica
        // used: zero it there, so the block reads as it should (zeroes).
        let bs = self.block_sectors;
        let fresh: Vec<u64> = match (self.fs2_map(), io.op) {
            (Some(m), Op::Read) => (io.lbn / bs..(io.lbn + io.sectors).div_ceil(bs)).filter(|&b| m.first_copy(b).is_none()).collect(),
            _ => Vec::new(),
        };
        self.call_unmirrored(ctx, |p, c| p.translate(c, io, out))?;
        // The zeroes are in place before the map that names the block there is durable.
        for b in fresh {
            if let Some(at) = self.fs2_map().and_then(|m| m.first_copy(b)) {
                self.write_bytes(at * self.sector_bytes, &vec![0u8; self.block_bytes() as usize])?;
            }
        }
        self.mirror_journal()
    }

    fn serves_from_memory(&self) -> bool {
        self.inner.serves_from_memory()
    }

    fn dispatched(&mut self, io: &PhysIo, chosen: usize) {
        self.inner.dispatched(io, chosen);
    }

    fn complete(&mut self, ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> Result<(), LayoutError> {
        match done.request {
            Some(r) => self.workload_io(done, r.id)?,
            None => self.own_io(done)?,
        }
        let tag = done.io.tag;
        self.call(ctx, |p, c| p.complete(c, done))?;
        // A move the policy dropped after its reads (aborted, or moot) feeds no write.
        if done.request.is_none() && done.io.op == Op::Read && self.moves.get(&tag).is_some_and(|m| !m.write_issued && m.sources.iter().all(|s| s.data.is_some())) {
            self.moves.remove(&tag);
        }
        Ok(())
    }

    fn next_timer(&self) -> Option<freeblock_disk::SimTime> {
        self.inner.next_timer()
    }

    fn timer(&mut self, ctx: &mut LayoutCtx<'_>) -> Result<(), LayoutError> {
        self.call(ctx, |p, c| p.timer(c))
    }

    fn carried_blocks(&self, tag: u64) -> Option<Vec<u64>> {
        self.inner.carried_blocks(tag)
    }

    fn report(&self) -> serde_json::Value {
        self.inner.report()
    }
}

/// Keeps two files equal to a policy's in-memory journal ([`MemStorage`]): appends what was
/// committed since, or replaces both after a checkpoint.
struct JournalMirror {
    files: DirStorage,
    /// The journal header written (its `base` changes at every checkpoint).
    header: Vec<u8>,
    /// Bytes of the journal written.
    len: usize,
}

impl JournalMirror {
    fn new(files: DirStorage) -> Self {
        Self { files, header: Vec::new(), len: 0 }
    }

    fn follow(&mut self, snapshot: Option<&[u8]>, journal: Option<&[u8]>, store: &Store, counters: &PlacementCounters) -> Result<(), LayoutError> {
        let (Some(snapshot), Some(journal)) = (snapshot, journal) else { return Ok(()) };
        let head = &journal[..journal.len().min(JOURNAL_HEADER_BYTES as usize)];
        let sync = |store: &Store| store.sync().map_err(|e| LayoutError::Io { file: "the backing store".into(), action: "fdatasync", message: e.to_string() });
        if head != self.header.as_slice() || journal.len() < self.len {
            // A checkpoint: the snapshot first (a journal left behind it is stale and skipped).
            sync(store)?;
            self.files.replace(StoreFile::Snapshot, snapshot)?;
            self.files.replace(StoreFile::Journal, journal)?;
            self.header = head.to_vec();
            self.len = journal.len();
            counters.checkpoints.fetch_add(1, Ordering::Relaxed);
        } else if journal.len() > self.len {
            sync(store)?;
            self.files.append(StoreFile::Journal, &journal[self.len..])?;
            self.len = journal.len();
            counters.commits.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// The policy's journal as the files beside the store hold it, for recovery.
///
/// # Errors
/// [`LayoutError::Io`].
pub fn read_journal(files: &DirStorage) -> Result<Option<MemStorage>, LayoutError> {
    let snapshot = files.read(StoreFile::Snapshot)?;
    let journal = files.read(StoreFile::Journal)?;
    Ok(snapshot.map(|s| MemStorage { snapshot: Some(s), journal }))
}

/// The layout policy rebuilt from its recovered journal by the policy's own recovery (which
/// checks that the map fits the layout: area, block size, FS2's rules). `None` for a layout the
/// server does not place bytes for.
pub fn recover_policy(disk: &freeblock_disk::Disk, spec: &LayoutSpec, journal: MemStorage) -> Option<Result<Box<dyn LayoutPolicy>, LayoutError>> {
    match spec {
        LayoutSpec::Rearrange(c) => Some(Rearrange::recover(disk, *c, journal).map(|(p, _)| Box::new(p) as Box<dyn LayoutPolicy>)),
        LayoutSpec::Fs2(c) => Some(Fs2::recover(disk, c.clone(), journal).map(|(p, _)| Box::new(p) as Box<dyn LayoutPolicy>)),
        LayoutSpec::RangeWrites(c) => Some(RequestRangeWrites::recover(disk, *c, journal).map(|(p, _)| Box::new(p) as Box<dyn LayoutPolicy>)),
        LayoutSpec::Lfs(_) => None,
    }
}
