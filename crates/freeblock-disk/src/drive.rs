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

mod buffer;

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
}

impl Drive {
    /// A drive with its heads at cylinder 0, surface 0.
    #[must_use]
    pub fn new(disk: Arc<Disk>) -> Self {
        let buffer = disk.spec().cache.enabled.then(|| Box::new(buffer::Buffer::new(&disk)));
        Self { disk, head: HeadState::default(), scratch: Vec::with_capacity(4), buffer }
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
