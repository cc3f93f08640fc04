//! A drive: a [`Disk`] model plus the state that changes as it works (head position, cache).
//!
//! [`Drive::predict`] is pure; [`Drive::serve`] is `predict` followed by committing the new
//! state, so a prediction made from the same state and start time is exactly what happens.
//!
//! With the spec's cache off, serving a request is one [`Disk::access`] from the current head
//! position. With it on, requests go through a model of DiskSim 4.0's disk controller and buffer
//! (module `buffer`): read hits, read-ahead and write-back that go on in the background after a
//! request completes (and move the heads), and the bus handshakes and overheads of the spec's
//! [`crate::Controller`]. Background work started by one request is carried out, in simulated
//! time, when the next request is served, so `serve(start, …)` begins media work only once the
//! mechanism is free.
//!
//! With a write-back `[write_cache]` (module `write_cache`, drives of today), writes complete in
//! the drive's memory and are destaged later by position; [`Drive::serve_fua`] writes through
//! it and [`Drive::flush`] (FLUSH CACHE) writes everything dirty. Without one, both are what
//! they are on a drive whose cache holds no writes: a FUA write is a write, and a flush costs
//! only the spec's `write_cache.flush_overhead_ms` (0 without the table). The DiskSim buffer's
//! own write-back (`controller.write_back`) is not flushed: its dirty segments are written back
//! as its model does, whenever the next command comes.

mod buffer;
mod write_cache;

pub use write_cache::{WriteCacheStats, MAX_DESTAGE_SECTORS};

use std::sync::Arc;

use crate::disk::{Breakdown, Disk, HeadState, MediaAccess, Op};
use crate::error::AccessError;
use crate::layout::TrackRun;
use crate::time::SimTime;

/// The result of serving one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    /// Timing of the access (for a cache hit, no media time).
    pub access: MediaAccess,
    /// Whether the cache served it without touching the media.
    pub cache_hit: bool,
}

/// A disk with state.
#[derive(Debug, Clone)]
pub struct Drive {
    disk: Arc<Disk>,
    head: HeadState,
    scratch: Vec<TrackRun>,
    /// The buffer controller, when the spec's cache is on.
    buffer: Option<Box<buffer::Buffer>>,
    /// The write-back cache, when the spec's `[write_cache]` is in write-back mode.
    write_cache: Option<Box<write_cache::WriteCache>>,
}

impl Drive {
    /// A drive with its heads at cylinder 0, surface 0.
    #[must_use]
    pub fn new(disk: Arc<Disk>) -> Self {
        let buffer = disk.spec().cache.enabled.then(|| Box::new(buffer::Buffer::new(&disk)));
        let write_cache = disk.spec().write_cache.filter(|w| w.is_write_back()).map(|w| Box::new(write_cache::WriteCache::new(&disk, &w)));
        Self { disk, head: HeadState::default(), scratch: Vec::with_capacity(4), buffer, write_cache }
    }

    /// The model.
    #[must_use]
    pub fn disk(&self) -> &Arc<Disk> {
        &self.disk
    }

    /// Current head position.
    #[must_use]
    pub fn head(&self) -> HeadState {
        self.buffer.as_ref().map_or(self.head, |b| b.head())
    }

    /// Moves the heads (e.g. to start an experiment elsewhere).
    pub fn set_head(&mut self, head: HeadState) {
        self.head = head;
        if let Some(b) = &mut self.buffer {
            b.set_head(head);
        }
    }

    /// Positioning time for a request at `lbn` starting at `start`, as schedulers rank it.
    ///
    /// # Errors
    /// [`AccessError::OutOfRange`] past the end of the disk.
    #[inline]
    pub fn positioning(&self, start: SimTime, lbn: u64, op: Op) -> Result<SimTime, AccessError> {
        self.disk.positioning(self.head(), start, lbn, op)
    }

    /// What serving the request at `start` would do, without doing it.
    ///
    /// # Errors
    /// [`AccessError`] for an empty or out-of-range request, or [`AccessError::ModelFault`] when
    /// the buffer model cannot finish it.
    pub fn predict(&self, start: SimTime, lbn: u64, sectors: u64, op: Op) -> Result<Service, AccessError> {
        if self.write_cache.is_some() {
            return self.clone().serve(start, lbn, sectors, op);
        }
        if let Some(b) = &self.buffer {
            Self::check(&self.disk, lbn, sectors)?;
            self.disk.check_time_limit(lbn, start, sectors)?;
            let mut b = b.clone();
            return Self::buffered(&self.disk, &mut b, start, lbn, sectors, op);
        }
        let mut runs = Vec::with_capacity(4);
        let access = self.disk.access(self.head, start, lbn, sectors, op, &mut runs)?;
        Ok(Service { access, cache_hit: false })
    }

    /// Serves the request at `start` and updates the drive's state.
    ///
    /// # Errors
    /// [`AccessError`] for an empty or out-of-range request; the state is then unchanged.
    /// [`AccessError::ModelFault`] when the buffer model cannot finish it; the buffer is then
    /// left as the fault found it (a bug in the model: the drive's answers are not to be trusted
    /// after it).
    pub fn serve(&mut self, start: SimTime, lbn: u64, sectors: u64, op: Op) -> Result<Service, AccessError> {
        if let Some(wc) = &mut self.write_cache {
            Self::check(&self.disk, lbn, sectors)?;
            let (access, cache_hit) = wc.serve(&self.disk, &mut self.head, start, lbn, sectors, op)?;
            return Ok(Service { access, cache_hit });
        }
        if let Some(b) = &mut self.buffer {
            Self::check(&self.disk, lbn, sectors)?;
            self.disk.check_time_limit(lbn, start, sectors)?;
            // The buffer is served in place: moving it out and back costs more than a cache hit.
            return Self::buffered(&self.disk, b, start, lbn, sectors, op);
        }
        let access = self.disk.access(self.head, start, lbn, sectors, op, &mut self.scratch)?;
        self.head = access.end_head;
        Ok(Service { access, cache_hit: false })
    }

    /// Serves a FUA write (Force Unit Access) at `start`: on the media before it completes, even
    /// with a write-back cache. Without one it is [`Drive::serve`]'s write.
    ///
    /// # Errors
    /// As [`Drive::serve`].
    pub fn serve_fua(&mut self, start: SimTime, lbn: u64, sectors: u64) -> Result<Service, AccessError> {
        match &mut self.write_cache {
            Some(wc) => {
                Self::check(&self.disk, lbn, sectors)?;
                let access = wc.fua(&self.disk, &mut self.head, start, lbn, sectors)?;
                Ok(Service { access, cache_hit: false })
            }
            None => self.serve(start, lbn, sectors, Op::Write),
        }
    }

    /// Serves a FLUSH CACHE command at `start`: it completes once everything the write cache
    /// holds is on the media (see the module doc for a drive without a write-back cache).
    ///
    /// # Errors
    /// [`AccessError`] only if the layout cannot map a dirty sector, which cannot happen: the
    /// write that made it dirty was checked.
    pub fn flush(&mut self, start: SimTime) -> Result<Service, AccessError> {
        if let Some(wc) = &mut self.write_cache {
            let access = wc.flush(&self.disk, &mut self.head, start)?;
            return Ok(Service { access, cache_hit: false });
        }
        let overhead = self.disk.spec().write_cache.map_or(0, |w| crate::time::ms_to_ns(w.flush_overhead_ms));
        let end = start + overhead;
        let breakdown = Breakdown { overhead, ..Breakdown::default() };
        Ok(Service { access: MediaAccess { start, media_start: end, media_end: end, end, breakdown, end_head: self.head() }, cache_hit: false })
    }

    /// Whether writes complete in a write-back `[write_cache]`.
    #[must_use]
    pub fn has_write_back_cache(&self) -> bool {
        self.write_cache.is_some()
    }

    /// Sectors the write-back cache holds that are not on the media yet (0 without one).
    #[must_use]
    pub fn dirty_sectors(&self) -> u64 {
        self.write_cache.as_ref().map_or(0, |w| w.dirty_sectors())
    }

    /// Runs of consecutive dirty sectors in the write-back cache (0 without one).
    #[must_use]
    pub fn dirty_extents(&self) -> usize {
        self.write_cache.as_ref().map_or(0, |w| w.dirty_extents())
    }

    /// What the write-back cache has done so far (`None` without one).
    #[must_use]
    pub fn write_cache_stats(&self) -> Option<WriteCacheStats> {
        self.write_cache.as_ref().map(|w| w.stats())
    }

    fn check(disk: &Disk, lbn: u64, sectors: u64) -> Result<(), AccessError> {
        let capacity = disk.capacity();
        if sectors == 0 {
            return Err(AccessError::Empty { lbn });
        }
        match lbn.checked_add(sectors) {
            Some(end) if end <= capacity => Ok(()),
            _ => Err(AccessError::OutOfRange { lbn, end: lbn.saturating_add(sectors), capacity }),
        }
    }

    /// Serves a request through the buffer model and reports it like a media access.
    fn buffered(disk: &Disk, b: &mut buffer::Buffer, start: SimTime, lbn: u64, sectors: u64, op: Op) -> Result<Service, AccessError> {
        let o = b.serve(disk, start * 1000, lbn, sectors, op)?;
        let ns = |ps: u64| ps.div_ceil(1000);
        let end = ns(o.end_ps).max(start);
        let total = end - start;
        let (media_start, media_end) = o.media.map_or((start, start), |(a, z)| (ns(a).clamp(start, end), ns(z).clamp(start, end).max(ns(a).clamp(start, end))));
        let mut left = total;
        let mut take = |v: SimTime| {
            let v = v.min(left);
            left -= v;
            v
        };
        let overhead = take(ns(o.overhead_ps));
        let seek = take(ns(o.seek_ps));
        let rotational_latency = take(ns(o.latency_ps));
        let transfer = take(media_end.saturating_sub(media_start));
        let breakdown = Breakdown { overhead, seek, rotational_latency, transfer, bus: left };
        let access = MediaAccess { start, media_start, media_end, end, breakdown, end_head: b.head() };
        Ok(Service { access, cache_hit: o.hit })
    }
}
