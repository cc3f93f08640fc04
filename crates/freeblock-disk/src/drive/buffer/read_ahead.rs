//! Read-ahead: a read reads on past its last sector, into its segment, after it completes.
//!
//! Once a read has its data the mechanism does not stop: the access becomes background work
//! (owner `Prefetch`) that reads on until the segment's read-ahead limit (`Seg::max_ra`), unless
//! a next command stops it first. The limit is set by the mode:
//!
//! | `cache.read_ahead` | reads on to | DiskSim `Buffer continuous read` |
//! |---|---|---|
//! | `none` | the request's end (no read-ahead) | 0 |
//! | `track_end` | `read_ahead_sectors` past the request, or the end of the track | 1 |
//! | `cylinder_end` | `read_ahead_sectors` past the request, or the end of the cylinder | 2 |
//! | `sectors` | `read_ahead_sectors` past the request (the segment size when 0) | 3 |
//! | `dec` | the end of the track holding the sector after the request, one track more when the segment started on an earlier track | 4 |
//!
//! A next command that would stop the read-ahead waits while it has not read
//! `min_read_ahead_sectors` past its request (`Seg::min_ra`); the read-ahead then ends there.
//! Stopped, a seek under way still ends where it was going, and (without
//! `stop_read_ahead_mid_sector`) so does the sector under the head: the next media work starts
//! after that. A read whose data is already in the segment starts read-ahead at once with
//! `read_ahead_on_hit` (`arrival.rs`).

use super::media::Phase;
use super::segments::St;
use super::{Buffer, Owner};
use crate::disk::{Disk, HeadState};
use crate::spec::ReadAhead;

impl Buffer {
    /// A pure read-ahead may be stopped (DiskSim `disk_buffer_stopable_access` for a segment
    /// being read).
    pub(super) fn prefetch_stopable(&mut self) -> bool {
        let Some(h) = &self.hda else { return true };
        if h.owner != Owner::Prefetch {
            return false;
        }
        let s = &mut self.segs[h.seg];
        if s.end < s.min_ra {
            s.max_ra = s.min_ra;
            return false;
        }
        true
    }

    /// Where read-ahead for a request ending at `end` may go (DiskSim
    /// `disk_buffer_get_max_readahead`).
    fn max_readahead(&mut self, disk: &Disk, seg: usize, lbn: u64, end: u64) -> u64 {
        let cap = self.p.capacity;
        let v = match self.p.ra_mode {
            ReadAhead::None => end,
            ReadAhead::Dec => {
                if end >= cap {
                    cap
                } else {
                    let (first, next) = match self.dec_track {
                        Some((e, first, next)) if e == end => (first, next),
                        _ => {
                            self.last_track.load_lbn(disk, end);
                            let found = (self.last_track.first, self.last_track.next);
                            self.dec_track = Some((end, found.0, found.1));
                            found
                        }
                    };
                    if self.segs[seg].start < first {
                        let spt = disk.layout().lbn_to_pbn(lbn).map_or(0, |p| disk.layout().sectors_per_track(p.cylinder));
                        next + u64::from(spt)
                    } else {
                        next
                    }
                }
            }
            _ => end + if self.p.max_ra > 0 { self.p.max_ra } else { self.p.seg_size },
        };
        v.min(cap)
    }

    /// Raises the segment's read-ahead limits for a request ending at `end`; returns
    /// [`Self::max_readahead`] (which the update leaves unchanged).
    pub(super) fn update_readahead(&mut self, disk: &Disk, seg: usize, lbn: u64, end: u64) -> u64 {
        let cap = self.p.capacity;
        let max = self.max_readahead(disk, seg, lbn, end);
        let s = &mut self.segs[seg];
        s.min_ra = s.min_ra.max((end + self.p.min_ra).min(cap));
        s.max_ra = s.max_ra.max(max);
        max
    }

    /// Stops the read-ahead in progress (DiskSim `disk_buffer_stopable_access` and
    /// `disk_buffer_stop_access`): a seek under way still ends where it was going, and without
    /// "stop in sector" so does the sector under the head; the next media work waits for that.
    pub(super) fn stop_prefetch(&mut self) {
        let Some(h) = self.hda.take() else { return };
        match h.phase {
            Phase::Seek { at, pbn, .. } => {
                self.head = HeadState { cylinder: pbn.cylinder, surface: pbn.surface };
                self.seek_stop = at;
            }
            Phase::Rot { .. } if !self.p.stop_in_sector => {
                self.seek_stop = h.next_time().unwrap_or(self.seek_stop);
            }
            _ => {}
        }
        self.segs[h.seg].state = St::Clean;
    }
}
