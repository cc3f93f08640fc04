//! Write-back: a write completes once its data is in the buffer; the media catch up afterwards.
//!
//! With `controller.write_back`, the completion goes to the host as soon as the write's last
//! sector has crossed the bus; its media access goes on in the background (owner `Destage`)
//! until the segment's data is on the media, and the segment stays dirty until then (at most
//! `cache.write_segments` dirty segments). Without it, the completion waits for the media.
//!
//! The data arriving for a write may run ahead of the media by at most a segment: the room the
//! host may fill ends a segment's size past the next LBN the write owning the segment puts on the
//! media ([`Buffer::seg_owner_inblkno`]).
//!
//! ```text
//!  LBNs:   start ········ inblkno ·················· end ··············· inblkno + size
//!          └ on the media ┘└ in the segment, to write ┘└ room for the host ┘
//! ```
//!
//! Sequential writes combined into a segment being written back (`Combine seq writes`,
//! [`crate::CacheSpec::combine_sequential_writes`]) are taken at once, as DiskSim 4.0 takes them:
//! the write-back under way goes on through the appended data, and each appended write, once
//! complete, keeps a media pass of its own that writes its data again (DiskSim leaves the
//! appended request in its queue, and serves it when the mechanism frees). Those passes run in
//! arrival order before any later request gets the mechanism.

use super::segments::{Hit, St};
use super::{Buffer, Owner};
use crate::disk::Disk;

impl Buffer {
    /// May a write starting at `lbn` be appended to segment `i` (DiskSim `BUFFER_APPEND`)? It
    /// must start where the segment's data ends, with room left in the segment past what the
    /// write-back under way has put on the media.
    pub(super) fn appendable(&self, i: usize, lbn: u64) -> bool {
        let s = &self.segs[i];
        if !self.p.combine_writes || lbn != s.end {
            return false;
        }
        let owner_in = match &self.hda {
            Some(h) if h.seg == i && !h.read => h.inblkno,
            _ => match s.appended.first() {
                Some(&(first, _)) => first,
                None => return false,
            },
        };
        self.p.seg_size > lbn.saturating_sub(owner_in)
    }

    /// The media pass of a completed appended write (DiskSim serves the appended request from its
    /// queue once the write-back before it released the mechanism): it writes from its first
    /// sector to the end of the segment's data, in the background.
    pub(super) fn start_appended_pass(&mut self, disk: &Disk, t: u64, seg: usize, lbn: u64, end: u64) {
        self.segs[seg].state = St::Writing;
        let mut h = self.new_access(seg, false, true, lbn, end, end - lbn);
        h.owner = Owner::Destage;
        self.hda = Some(h);
        let delay = self.seek_stop.saturating_sub(t);
        if !self.initiate_seek(disk, t, lbn, delay, self.p.min_write_seek) {
            self.end_access(disk, t);
        }
    }

    /// The write's own media progress (its `inblkno`).
    pub(super) fn owner_inblkno(&self) -> u64 {
        let r = self.req();
        match &self.hda {
            Some(h) if r.hda && h.owner == Owner::Req && !h.read => h.inblkno,
            _ if r.media_done => r.end,
            _ => r.lbn,
        }
    }

    /// Media progress of the write that owns the request's segment (DiskSim
    /// `disk_buffer_seg_owner`): the request itself, or for a write appended to a segment being
    /// written back, that write-back (or the oldest appended write still to make its pass).
    pub(super) fn seg_owner_inblkno(&self) -> u64 {
        let r = self.req();
        if r.hit == Hit::Append && !r.hda {
            if let Some(seg) = r.seg {
                match &self.hda {
                    Some(h) if h.seg == seg && !h.read => return h.inblkno,
                    _ => {
                        if let Some(&(first, _)) = self.segs[seg].appended.first() {
                            return first;
                        }
                    }
                }
            }
        }
        self.owner_inblkno()
    }
}
