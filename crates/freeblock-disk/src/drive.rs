//! A drive: a [`Disk`] model plus the state that changes as it works (head position, cache).
//!
//! [`Drive::predict`] is pure; [`Drive::serve`] is `predict` followed by committing the new
//! state, so a prediction made from the same state and start time is exactly what happens.

use std::sync::Arc;

use crate::disk::{Disk, HeadState, MediaAccess, Op};
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
}

impl Drive {
    /// A drive with its heads at cylinder 0, surface 0.
    #[must_use]
    pub fn new(disk: Arc<Disk>) -> Self {
        Self { disk, head: HeadState::default(), scratch: Vec::with_capacity(4) }
    }

    /// The model.
    #[must_use]
    pub fn disk(&self) -> &Arc<Disk> {
        &self.disk
    }

    /// Current head position.
    #[must_use]
    pub fn head(&self) -> HeadState {
        self.head
    }

    /// Moves the heads (e.g. to start an experiment elsewhere).
    pub fn set_head(&mut self, head: HeadState) {
        self.head = head;
    }

    /// Positioning time for a request at `lbn` starting at `start`, as schedulers rank it.
    ///
    /// # Errors
    /// [`AccessError::OutOfRange`] past the end of the disk.
    #[inline]
    pub fn positioning(&self, start: SimTime, lbn: u64, op: Op) -> Result<SimTime, AccessError> {
        self.disk.positioning(self.head, start, lbn, op)
    }

    /// What serving the request at `start` would do, without doing it.
    ///
    /// # Errors
    /// [`AccessError`] for an empty or out-of-range request.
    pub fn predict(&self, start: SimTime, lbn: u64, sectors: u64, op: Op) -> Result<Service, AccessError> {
        let mut runs = Vec::with_capacity(4);
        let access = self.disk.access(self.head, start, lbn, sectors, op, &mut runs)?;
        Ok(Service { access, cache_hit: false })
    }

    /// Serves the request at `start` and updates the drive's state.
    ///
    /// # Errors
    /// [`AccessError`] for an empty or out-of-range request; the state is then unchanged.
    pub fn serve(&mut self, start: SimTime, lbn: u64, sectors: u64, op: Op) -> Result<Service, AccessError> {
        let access = self.disk.access(self.head, start, lbn, sectors, op, &mut self.scratch)?;
        self.head = access.end_head;
        Ok(Service { access, cache_hit: false })
    }
}
