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
//!  ─► then the policy's own complete (which may commit its map) ─► its journal to
//!     STORE.map.snapshot / STORE.map.journal (the store is fdatasync'ed first), at once, or
//!     grouped with the commits of the next completions (range writes: crate::commits)
//! ```
//!
//! | event | bytes | map |
//! |---|---|---|
//! | a move's copy written | at the copy's physical place, before the policy sees the completion | the policy adds the copy, and commits it later (a table write, a job's end) |
//! | a commit of the policy's journal | the store is synced first, so a durable map never names bytes that are not | the new records are appended to `STORE.map.journal` and synced (range writes: a group of commits at once, [`crate::commits`]) |
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
//! LFS is the exception to "bytes at the model's completion": it acknowledges writes from memory,
//! so its bytes are held until their segment write, segment writes are applied in the order they
//! were sealed, its journal is mirrored only up to the last applied one, and reads are filled
//! when they arrive ([`crate::logbytes`]).
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
use freeblock::layout::lfs::{LfsPolicy, Log, Media, TrimQueue};
use freeblock::layout::journal::{DirStorage, MemStorage, Storage, StoreFile};
use freeblock::layout::rearrange::policy::Rearrange;
use freeblock::layout::request_rangewrite::RequestRangeWrites;
use freeblock::layout::{BlockMap, Completed, LayoutCtx, LayoutError, LayoutPolicy, LogicalIo, PhysIo, Service};
use freeblock_disk::Op;

use crate::commits::MapCommits;
use crate::logbytes::{summary_in_block, LogBytes};
use crate::scrub::Checksums;
use crate::store::Store;
use crate::timing::Failure;

/// The bytes of one workload request while the engine serves it.
#[derive(Debug)]
pub struct RequestBytes {
    /// Export byte offset of `data[0]`.
    pub offset: u64,
    /// Write: the payload; read: filled as the engine serves it.
    pub data: Vec<u8>,
    /// The backing file failed this request's bytes: it is answered with an error, and the
    /// engine goes on serving the others.
    pub failed: Option<Failure>,
    /// A WRITE_ZEROES of this many bytes, carrying no data: its places are zeroed by punching
    /// holes ([`Store::zero_range`]), not by writing zero bytes.
    pub zeroes: Option<u64>,
}

/// Requests under way by engine request id (filled when the engine accepts a request).
pub type InFlight = Arc<Mutex<HashMap<u64, RequestBytes>>>;

/// What the physical store has done, for stats and the crash campaign.
#[derive(Debug, Default)]
pub struct PlacementCounters {
    /// Copies made by the policy's moves (a block copied into a slot, written home, replicated;
    /// LFS: a live block the cleaner moved to the segment being filled).
    pub blocks_copied: AtomicU64,
    /// Commits of the policy's journal made durable.
    pub commits: AtomicU64,
    /// Checkpoints (new snapshots) made durable.
    pub checkpoints: AtomicU64,
    /// The layout acknowledges writes from memory (LFS): a FLUSH or FUA must wait for
    /// [`PlacementCounters::wait_durable`].
    pub holds_writes: std::sync::atomic::AtomicBool,
    /// Segment writes sealed (LFS).
    pub sealed: AtomicU64,
    /// Of them, applied to the store with their commit durable, in seal order.
    pub durable: AtomicU64,
    /// The engine dropped the policy (it ended or failed): nothing more becomes durable.
    stopped: std::sync::atomic::AtomicBool,
    durable_changed: tokio::sync::Notify,
    /// Groups of commits made durable together, each with one sync of the store and one of the
    /// journal ([`crate::commits`]).
    pub groups: AtomicU64,
    /// The layout's own writes (a move's or replica's copy, an LFS segment write) that found the
    /// file system full: the copy dropped, or the segment write kept to be tried again.
    pub background_no_space: AtomicU64,
    /// LFS: a segment write is waiting for room in the file system (a FLUSH fails meanwhile).
    log_full: std::sync::atomic::AtomicBool,
}

impl PlacementCounters {
    /// The counters now.
    #[must_use]
    pub fn snapshot(&self) -> PlacementSummary {
        PlacementSummary { background_no_space: self.background_no_space.load(Ordering::Relaxed), blocks_copied: self.blocks_copied.load(Ordering::Relaxed), commits: self.commits.load(Ordering::Relaxed), checkpoints: self.checkpoints.load(Ordering::Relaxed), groups: self.groups.load(Ordering::Relaxed) }
    }

    /// Waits until every segment write sealed so far is in the store and its map commit is
    /// durable (at once for a layout that holds no writes).
    ///
    /// # Errors
    /// The engine stopped first: those writes will never be durable.
    pub async fn wait_durable(&self) -> Result<(), String> {
        let target = self.sealed.load(Ordering::Acquire);
        loop {
            let changed = self.durable_changed.notified();
            let durable = self.durable.load(Ordering::Acquire);
            if durable >= target {
                return Ok(());
            }
            if self.log_full.load(Ordering::Acquire) {
                return Err(format!("the file system under the store is full: {} segment writes wait in memory, tried again at the next segment write", target - durable));
            }
            if self.stopped.load(Ordering::Acquire) {
                return Err(format!("the engine stopped with {} segment writes not in the store", target - durable));
            }
            changed.await;
        }
    }

    /// Counts one of the layout's own writes that found no space, saying so on stderr (the 1st,
    /// 2nd, 4th, 8th… time).
    fn background_no_space(&self, what: &str, e: &std::io::Error) {
        let n = self.background_no_space.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_power_of_two() {
            eprintln!("freeblock serve: the layout's {what} found no space ({n} so far): {e}; clients are still served");
        }
    }

    fn made_durable(&self, writes: u64) {
        if writes > 0 {
            self.durable.fetch_add(writes, Ordering::AcqRel);
            self.durable_changed.notify_waiters();
        }
    }

    /// The Prometheus text of the counters.
    #[must_use]
    pub fn prometheus(&self) -> String {
        let s = self.snapshot();
        format!(
            "# TYPE freeblock_layout_background_no_space_total counter\nfreeblock_layout_background_no_space_total {}\n# TYPE freeblock_layout_blocks_copied_total counter\nfreeblock_layout_blocks_copied_total {}\n# TYPE freeblock_layout_map_commits_total counter\nfreeblock_layout_map_commits_total {}\n# TYPE freeblock_layout_map_checkpoints_total counter\nfreeblock_layout_map_checkpoints_total {}\n# TYPE freeblock_layout_map_groups_total counter\nfreeblock_layout_map_groups_total {}\n",
            s.background_no_space, s.blocks_copied, s.commits, s.checkpoints, s.groups
        )
    }
}

/// [`PlacementCounters`] at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlacementSummary {
    /// The layout's own writes that found the file system full.
    pub background_no_space: u64,
    /// Blocks the policy's moves copied.
    pub blocks_copied: u64,
    /// Journal commits made durable.
    pub commits: u64,
    /// Snapshots made durable.
    pub checkpoints: u64,
    /// Groups of commits made durable together.
    pub groups: u64,
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
    commits: Arc<MapCommits>,
    /// Range writes: commits wait for their group ([`crate::commits`]); the others are made
    /// durable at once.
    grouped: bool,
    counters: Arc<PlacementCounters>,
    /// LFS: the bytes it holds in memory, and its segment writes until they are applied.
    log: Option<LogBytes>,
    /// Segment writes applied since the journal was last mirrored.
    applied: u64,
    /// The workload request being translated (its write's bytes go into the log).
    translating: Option<u64>,
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
        let mut inner = inner;
        // LFS tells what happens to its blocks, and checkpoints only when asked.
        let log = inner.as_any_mut().downcast_mut::<LfsPolicy>().map(|l| {
            l.log_mut().record_events();
            counters.holds_writes.store(true, Ordering::Relaxed);
            LogBytes::new(*l.log().config(), sector_bytes)
        });
        let grouped = inner.as_any().is::<RequestRangeWrites>();
        let commits = Arc::new(MapCommits::new(files, Arc::clone(&store), Arc::clone(&counters)));
        let mut p = Self { inner, store, sums, in_flight, sector_bytes, block_sectors, moves: HashMap::new(), commits, grouped, counters, log, applied: 0, translating: None };
        if p.inner.journal().is_none() {
            return Err(LayoutError::Config { field: "layout.type", message: format!("{} keeps no journal: the physical store cannot persist its map", p.inner.name()) });
        }
        p.mirror_journal(Vec::new())?;
        p.commits.make_durable()?;
        Ok(p)
    }

    /// The map's way to stable storage, which the engine thread makes durable when it is about
    /// to wait ([`crate::timing`]).
    #[must_use]
    pub fn commits(&self) -> Arc<MapCommits> {
        Arc::clone(&self.commits)
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

    /// Writes `data` at physical byte `at`, keeping the scrub's checksums; the error as the file
    /// gave it (`ENOSPC` tells a full file system).
    fn write_bytes_io(&self, at: u64, data: &[u8]) -> std::io::Result<()> {
        let write = || self.store.write(at, data);
        match &self.sums {
            Some(s) => s.write_with(&self.store, at, data.len() as u64, write),
            None => write(),
        }
    }

    /// Stages what the policy committed since the last call (`freed`: the places its commits
    /// freed), made durable at once unless the policy's commits are grouped. LFS: only the
    /// commits of segment writes already in the store.
    fn mirror_journal(&mut self, freed: Vec<u64>) -> Result<(), LayoutError> {
        // LFS: a checkpoint only once every segment write is applied (it names them all).
        if self.log.as_ref().is_some_and(|l| l.unapplied() == 0) {
            if let Some(lfs) = self.inner.as_any_mut().downcast_mut::<LfsPolicy>() {
                lfs.log_mut().checkpoint_if_due().map_err(LayoutError::from)?;
            }
        }
        let limit = self.log.as_ref().and_then(LogBytes::durable_journal_len);
        let Some(MemStorage { snapshot: Some(snapshot), journal: Some(journal) }) = self.inner.journal() else { return Ok(()) };
        // LFS: the commits of segment writes not yet applied stay out of the files.
        let journal = match limit {
            Some(limit) => &journal[..journal.len().min(limit as usize)],
            None => &journal[..],
        };
        // A full file system fails only the replies held for these commits (crate::timing):
        // they stay staged, tried again at the next commit and whenever the engine waits.
        let mut durable = self.commits.stage(snapshot, journal, freed);
        if durable.is_ok() && !self.grouped {
            durable = self.commits.make_durable();
        }
        match durable {
            Err(_) if self.commits.out_of_space() => return Ok(()),
            other => other?,
        }
        self.counters.made_durable(std::mem::take(&mut self.applied));
        Ok(())
    }

    /// Calls the policy with a context of its own, then hands its submissions on, noting the
    /// reads of its moves, and makes what it committed durable.
    fn call<T>(&mut self, ctx: &mut LayoutCtx<'_>, f: impl FnOnce(&mut dyn LayoutPolicy, &mut LayoutCtx<'_>) -> Result<T, LayoutError>) -> Result<T, LayoutError> {
        let out = self.call_unmirrored(ctx, f)?;
        self.mirror_journal(Vec::new())?;
        Ok(out)
    }

    /// [`Placement::call`] without the journal's mirroring (the caller does it).
    fn call_unmirrored<T>(&mut self, ctx: &mut LayoutCtx<'_>, f: impl FnOnce(&mut dyn LayoutPolicy, &mut LayoutCtx<'_>) -> Result<T, LayoutError>) -> Result<T, LayoutError> {
        let mut submitted: Vec<(PhysIo, Service)> = Vec::new();
        let mut withdrawn: Vec<(Op, u64)> = Vec::new();
        let out = {
            let mut inner_ctx = LayoutCtx::new(ctx.disk, ctx.head, ctx.now, &mut submitted).collecting_withdrawals(&mut withdrawn);
            f(self.inner.as_mut(), &mut inner_ctx)
        };
        for (op, start) in withdrawn {
            ctx.withdraw_free(&PhysIo::at(op, start, 0, 0))?;
        }
        if self.log.is_some() {
            // LFS's reads need no bytes kept: a block's bytes are taken when the log moves it.
            for (io, service) in submitted {
                ctx.submit(io, service);
            }
            self.follow_log()?;
            return out;
        }
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

    /// LFS: follows what the log did with its blocks since the last call.
    fn follow_log(&mut self) -> Result<(), LayoutError> {
        let Some(lfs) = self.inner.as_any_mut().downcast_mut::<LfsPolicy>() else { return Ok(()) };
        let events = lfs.log_mut().take_events();
        let Some(log) = self.log.as_mut() else { return Ok(()) };
        if events.is_empty() {
            return Ok(());
        }
        let bb = self.block_sectors * self.sector_bytes;
        let in_flight = Arc::clone(&self.in_flight);
        let requests = in_flight.lock().expect("never poisoned");
        let request = self.translating.and_then(|id| requests.get(&id));
        let mut written = |logical: u64| {
            let r = request?;
            let from = usize::try_from((logical * bb).checked_sub(r.offset)?).ok()?;
            r.data.get(from..from + bb as usize).map(<[u8]>::to_vec)
        };
        let (sealed, moved) = log.follow(events, &self.store, &mut written)?;
        self.counters.sealed.fetch_add(sealed, Ordering::AcqRel);
        self.counters.blocks_copied.fetch_add(moved, Ordering::Relaxed);
        Ok(())
    }

    /// LFS: a segment write the model completed; the writes done, in seal order, go to the store.
    fn log_io(&mut self, done: &Completed<'_>) -> Result<(), LayoutError> {
        let Some(seq) = LfsPolicy::segment_write(done.io.tag) else { return Ok(()) };
        let Some(log) = self.log.as_mut() else { return Ok(()) };
        log.completed(seq)?;
        self.apply_segment_writes()
    }

    /// LFS: the segment writes done, in seal order, into the store. One that finds the file
    /// system full stays in memory (its writes were acknowledged) and is tried again at the next
    /// segment write's completion; a FLUSH fails meanwhile.
    fn apply_segment_writes(&mut self) -> Result<(), LayoutError> {
        while let Some(pieces) = self.log.as_ref().and_then(LogBytes::ready) {
            for (lbn, bytes) in pieces {
                if let Err(e) = self.write_bytes_io(lbn * self.sector_bytes, &bytes) {
                    if !crate::store::is_no_space(&e) {
                        return Err(self.io_err("write", &e));
                    }
                    self.counters.log_full.store(true, Ordering::Release);
                    self.counters.background_no_space(&format!("segment write at sector {lbn}"), &e);
                    self.counters.durable_changed.notify_waiters();
                    return Ok(());
                }
            }
            self.log.as_mut().expect("checked").applied();
            self.applied += 1;
        }
        self.counters.log_full.store(false, Ordering::Release);
        Ok(())
    }

    /// LFS: a read's bytes, taken when it arrives from where the log has each block then
    /// ([`crate::logbytes`]).
    fn fill_log_read(&self, io: &LogicalIo<'_>) -> Result<(), LayoutError> {
        let (Some(log), Some(lfs)) = (self.log.as_ref(), (*self.inner).as_any().downcast_ref::<LfsPolicy>()) else { return Ok(()) };
        let bs = self.block_sectors;
        let bb = self.block_bytes() as usize;
        let mut in_flight = self.in_flight.lock().expect("never poisoned");
        let Some(req) = in_flight.get_mut(&io.id) else {
            return Err(LayoutError::Config { field: "layout", message: format!("request {} reached the log without its buffer", io.id) });
        };
        for l in io.lbn / bs..(io.lbn + io.sectors) / bs {
            let Some(from) = usize::try_from((l * bb as u64).saturating_sub(req.offset)).ok().filter(|&o| o + bb <= req.data.len()) else {
                return Err(LayoutError::Config { field: "layout", message: format!("logical block {l} lies outside its request at byte {}", req.offset) });
            };
            let bytes = match lfs.log().read(l).map_err(LayoutError::from)? {
                freeblock::layout::lfs::Found::Open(_) => log.in_open(l).map(<[u8]>::to_vec).ok_or_else(|| LayoutError::Config { field: "layout", message: format!("logical block {l} is in the segment being filled, but its bytes are not held") }),
                freeblock::layout::lfs::Found::Disk { lbn, .. } => log.current(l, lbn, &self.store),
                freeblock::layout::lfs::Found::Unmapped => Ok(vec![0u8; bb]),
            };
            match bytes {
                Ok(b) => req.data[from..from + bb].copy_from_slice(&b),
                // One request's failure is its own.
                Err(e) => {
                    req.failed.get_or_insert_with(|| Failure::eio(e.to_string()));
                }
            }
        }
        Ok(())
    }

    /// A workload I/O is on the media: its bytes go to (or come from) the physical blocks.
    fn workload_io(&self, done: &Completed<'_>, id: u64) -> Result<(), LayoutError> {
        let blocks = self.inner.carried_blocks(done.io.tag).ok_or_else(|| LayoutError::Config { field: "layout.type", message: format!("{} does not say which blocks its I/O {} carries", self.inner.name(), done.io.tag) })?;
        let bb = self.block_bytes();
        if blocks.len() as u64 * self.block_sectors != done.io.sectors {
            return Err(LayoutError::Config { field: "layout", message: format!("an I/O of {} sectors carries {} blocks of {} sectors: requests must be whole blocks", done.io.sectors, blocks.len(), self.block_sectors) });
        }
        // Not on a place whose freeing is not durable yet (its old bytes are the only copy); and,
        // when the policy's commits are not grouped, not while a commit the file system had no
        // room for is still staged (the policy took it to be durable when it chose the place).
        let blocked = if done.io.op != Op::Write {
            Ok(())
        } else if !self.grouped && self.commits.pending() {
            self.commits.make_durable()
        } else {
            self.commits.before_writing(done.lbn, blocks.len() as u64, self.block_sectors)
        };
        let blocked = match blocked {
            Err(e) if self.commits.out_of_space() => Some(e),
            other => {
                other?;
                None
            }
        };
        let mut in_flight = self.in_flight.lock().expect("never poisoned");
        // Every workload request of a placed export is handed over with its bytes.
        let Some(req) = in_flight.get_mut(&id) else {
            return Err(LayoutError::Config { field: "layout", message: format!("request {id} reached the disk without its bytes") });
        };
        if let Some(e) = blocked {
            // Nothing is written: the request fails alone, with ENOSPC.
            req.failed.get_or_insert_with(|| Failure::storage(true, format!("the write at sector {}: {e}", done.lbn)));
            return Ok(());
        }
        let phys = done.lbn * self.sector_bytes;
        if let Some(length) = req.zeroes.filter(|_| done.io.op == Op::Write) {
            // The blocks are one physical run: one hole, however many blocks.
            if let Some(&b) = blocks.iter().find(|&&b| b * bb < req.offset || (b + 1) * bb > req.offset + length) {
                return Err(LayoutError::Config { field: "layout", message: format!("logical block {b} lies outside its request at byte {}", req.offset) });
            }
            let run = blocks.len() as u64 * bb;
            let zeroed = match &self.sums {
                Some(s) => s.write_with(&self.store, phys, run, || self.store.zero_range(phys, run)),
                None => self.store.zero_range(phys, run),
            };
            if let Err(e) = zeroed {
                req.failed.get_or_insert_with(|| Failure::storage(crate::store::is_no_space(&e), format!("zeroes at byte {phys} of the store: {e}")));
            }
            return Ok(());
        }
        for (k, &b) in blocks.iter().enumerate() {
            let at = phys + k as u64 * bb;
            let Some(from) = (b * bb).checked_sub(req.offset).map(|o| o as usize).filter(|&o| o + bb as usize <= req.data.len()) else {
                return Err(LayoutError::Config { field: "layout", message: format!("logical block {b} lies outside its request at byte {}", req.offset) });
            };
            let piece = &mut req.data[from..from + bb as usize];
            let io = if done.io.op == Op::Write {
                self.write_bytes_io(at, piece)
            } else if self.fs2_map().is_some_and(|m| m.first_copy(b).is_none()) {
                // Never written: its home may hold another block's old bytes.
                piece.fill(0);
                Ok(())
            } else {
                self.store.read(at, piece)
            };
            // One request's failure is its own: the engine and the other requests go on (a full
            // file system fails the write with ENOSPC, and reads and other writes go on).
            if let Err(e) = io {
                req.failed.get_or_insert_with(|| Failure::storage(crate::store::is_no_space(&e), format!("logical block {b} at byte {at} of the store: {e}")));
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
        if let Err(e) = self.write_bytes_io(done.lbn * self.sector_bytes, &bytes) {
            // A full file system drops the copy (the policy maps nothing there) and the engine
            // goes on serving clients; any other failure stops it.
            if !crate::store::is_no_space(&e) || !self.inner.own_write_lost(tag)? {
                return Err(self.io_err("write", &e));
            }
            self.counters.background_no_space(&format!("copy of {} sectors to sector {}", done.io.sectors, done.lbn), &e);
            return Ok(());
        }
        self.counters.blocks_copied.fetch_add(done.io.sectors / self.block_sectors, Ordering::Relaxed);
        Ok(())
    }
}

impl Drop for Placement {
    /// A FLUSH waiting for writes the engine will never apply is answered with an error.
    fn drop(&mut self) {
        self.counters.stopped.store(true, Ordering::Release);
        self.counters.durable_changed.notify_waiters();
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
        if self.log.is_some() {
            self.translating = Some(io.id);
            let out = self.call_unmirrored(ctx, |p, c| p.translate(c, io, out));
            self.translating = None;
            out?;
            if io.op == Op::Read {
                self.fill_log_read(io)?;
            }
            return self.mirror_journal(Vec::new());
        }
        self.call_unmirrored(ctx, |p, c| p.translate(c, io, out))?;
        // The zeroes are in place before the map that names the block there is durable.
        for b in fresh {
            if let Some(at) = self.fs2_map().and_then(|m| m.first_copy(b)) {
                // A punched hole: it takes no space, so a full file system cannot stop it.
                let (at, len) = (at * self.sector_bytes, self.block_bytes());
                let zeroed = match &self.sums {
                    Some(s) => s.write_with(&self.store, at, len, || self.store.zero_range(at, len)),
                    None => self.store.zero_range(at, len),
                };
                zeroed.map_err(|e| self.io_err("zero", &e))?;
            }
        }
        self.mirror_journal(Vec::new())
    }

    fn serves_from_memory(&self) -> bool {
        self.inner.serves_from_memory()
    }

    fn dispatched(&mut self, io: &PhysIo, chosen: usize) {
        self.inner.dispatched(io, chosen);
    }

    fn flush(&mut self, ctx: &mut LayoutCtx<'_>, out: &mut Vec<PhysIo>) -> Result<(), LayoutError> {
        // LFS: a segment write that found no space is tried again first.
        if self.log.is_some() {
            self.apply_segment_writes()?;
            self.mirror_journal(Vec::new())?;
        }
        self.call(ctx, |p, c| p.flush(c, out))
    }

    fn complete(&mut self, ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> Result<(), LayoutError> {
        if self.log.is_some() {
            self.log_io(done)?;
            return self.call(ctx, |p, c| p.complete(c, done));
        }
        match done.request {
            Some(r) => self.workload_io(done, r.id)?,
            None => self.own_io(done)?,
        }
        let tag = done.io.tag;
        // A range write whose bytes did not land (a full file system) leaves the map alone: its
        // blocks keep their last written place, not a new one holding nothing.
        let write_failed = done.io.op == Op::Write && done.request.is_some_and(|r| self.in_flight.lock().expect("never poisoned").get(&r.id).is_some_and(|b| b.failed.is_some()));
        if write_failed {
            if let Some(rw) = self.inner.as_any_mut().downcast_mut::<RequestRangeWrites>() {
                if rw.abandon_write(tag)? {
                    return Ok(());
                }
            }
        }
        // A range write frees its blocks' places: noted, so that no write lands there before
        // the commit that frees them is durable.
        let freed = match (done.request, done.io.op, (*self.inner).as_any().downcast_ref::<RequestRangeWrites>()) {
            (Some(_), Op::Write, Some(rw)) => self.inner.carried_blocks(tag).unwrap_or_default().into_iter().filter_map(|b| rw.map().first_copy(b)).collect(),
            _ => Vec::new(),
        };
        self.call_unmirrored(ctx, |p, c| p.complete(c, done))?;
        self.mirror_journal(freed)?;
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

/// The policy's journal as the files beside the store hold it, for recovery; `None` for a map
/// never made (or whose creation a crash interrupted before it held anything).
///
/// [`freeblock::layout::journal::Journal::create`] writes an empty journal (base 0) first, then the snapshot, and every
/// later checkpoint replaces each file by a rename; so the two files exist together from then
/// on, and one without the other is a deleted file, not a crash:
///
/// | snapshot | journal | meaning |
/// |---|---|---|
/// | absent | absent | no map yet: start one |
/// | absent | header only, base 0 | creation interrupted: start one |
/// | absent | anything else | the snapshot was deleted: refused (an empty map would lose every block) |
/// | present | absent | the journal was deleted: refused (its commits are gone) |
///
/// # Errors
/// [`LayoutError::Io`]; [`LayoutError::Corrupt`] naming the missing file.
pub fn read_journal(files: &DirStorage) -> Result<Option<MemStorage>, LayoutError> {
    let snapshot = files.read(StoreFile::Snapshot)?;
    let journal = files.read(StoreFile::Journal)?;
    let missing = |present: StoreFile, gone: StoreFile| LayoutError::Corrupt {
        file: files.describe(gone),
        offset: 0,
        record: None,
        message: format!("missing, but {} is there: the map's two files are made together and neither is ever removed, so one was deleted and the map of every acknowledged write with it", files.describe(present)),
    };
    match (snapshot, journal) {
        (None, None) => Ok(None),
        (None, Some(j)) if creation_interrupted(&j) => Ok(None),
        (None, Some(_)) => Err(missing(StoreFile::Journal, StoreFile::Snapshot)),
        (Some(_), None) => Err(missing(StoreFile::Snapshot, StoreFile::Journal)),
        (Some(s), journal) => Ok(Some(MemStorage { snapshot: Some(s), journal })),
    }
}

/// `e`, from recovering the map read into memory ([`read_journal`]), naming the files it was
/// read from instead of the in-memory copies.
#[must_use]
pub fn naming_files(e: LayoutError, files: &DirStorage) -> LayoutError {
    let name = |file: String| {
        [StoreFile::Snapshot, StoreFile::Journal].into_iter().find(|&f| MemStorage::new().describe(f) == file).map_or(file, |f| files.describe(f))
    };
    match e {
        LayoutError::Corrupt { file, offset, record, message } => LayoutError::Corrupt { file: name(file), offset, record, message },
        LayoutError::Replay { file, offset, record, op, source } => LayoutError::Replay { file: name(file), offset, record, op, source },
        other => other,
    }
}

/// A journal with no record that follows snapshot 0: what `Journal::create` leaves when a
/// crash stops it before the snapshot is written.
fn creation_interrupted(journal: &[u8]) -> bool {
    const BASE: std::ops::Range<usize> = 12..20;
    journal.len() as u64 == freeblock::layout::journal::JOURNAL_HEADER_BYTES && journal[BASE].iter().all(|&b| b == 0)
}

/// The layout policy rebuilt from its recovered journal by the policy's own recovery (which
/// checks that the map fits the layout: area, block size, FS2's rules). `None` for a layout the
/// server does not place bytes for.
pub fn recover_policy(disk: &freeblock_disk::Disk, spec: &LayoutSpec, journal: MemStorage, store: &Store) -> Option<Result<Box<dyn LayoutPolicy>, LayoutError>> {
    match spec {
        LayoutSpec::Rearrange(c) => Some(Rearrange::recover(disk, *c, journal).map(|(p, _)| Box::new(p) as Box<dyn LayoutPolicy>)),
        LayoutSpec::Fs2(c) => Some(Fs2::recover(disk, c.clone(), journal).map(|(p, _)| Box::new(p) as Box<dyn LayoutPolicy>)),
        LayoutSpec::RangeWrites(c) => Some(RequestRangeWrites::recover(disk, *c, journal).map(|(p, _)| Box::new(p) as Box<dyn LayoutPolicy>)),
        LayoutSpec::Lfs(c) => Some(recover_log(disk, c, journal, store).map(|p| Box::new(p) as Box<dyn LayoutPolicy>)),
    }
}

/// LFS rebuilt after a stop or a crash: the map from its journal, checked against the segment
/// summaries in the store (every segment the map puts a live block in).
///
/// # Errors
/// A configuration the disk refuses, a summary that does not match the map (named), a read error.
pub fn recover_log(disk: &freeblock_disk::Disk, spec: &freeblock::layout::lfs::LfsSpec, journal: MemStorage, store: &Store) -> Result<LfsPolicy, LayoutError> {
    let cfg = spec.config(disk).map_err(LayoutError::from)?;
    let sector_bytes = u64::from(disk.spec().sector_bytes);
    let mut block = vec![0u8; (cfg.block_sectors * sector_bytes) as usize];
    let mut summaries = Vec::with_capacity(cfg.segments as usize);
    for s in 0..cfg.segments {
        let at = cfg.summary_lbn(s) * sector_bytes;
        store.read(at, &mut block).map_err(|e| LayoutError::Io { file: "the backing store".into(), action: "read", message: format!("the summary of segment {s} at byte {at}: {e}") })?;
        summaries.push(Some(summary_in_block(&block)));
    }
    let media = Media { data: vec![0; cfg.partition_blocks() as usize], summaries };
    let (log, _) = Log::recover(cfg, journal, media).map_err(LayoutError::from)?;
    LfsPolicy::over(log, spec.cleaner, spec.free, TrimQueue::default()).map_err(LayoutError::from)
}
