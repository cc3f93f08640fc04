//! Buffer segments: their states, which segment a command uses, and which one is reused.
//!
//! The buffer is `cache.segments` segments of `segment_sectors` each (with
//! `separate_write_segment`, the last one is for writes only). A segment holds one run of LBNs,
//! `start..end`: the mechanism fills it (a read, its read-ahead) or empties it onto the media (a
//! write, its write-back), and the bus moves data between it and the host.
//!
//! ```text
//!  Empty ─read─► Clean ─media access─► Reading ─access over─► Clean ◄──────────────┐
//!    │                                                                            │ (read hits on
//!    └─write─► Dirty ─media access─► Writing ─write-back over─► Empty ──or────────┘  write data)
//! ```
//!
//! A command takes the segment of highest value below; ties go to the least recently used
//! (`Buffer::lru`, which [`Buffer::set_segment`] updates). Some segments cannot be passed over:
//! a collision makes the command wait for the mechanism, and choose again then.
//!
//! | segment | value for a read | value for a write |
//! |---|---|---|
//! | holds the first LBN, dirty / being written | 11 / 10 with read hits on write data, else a collision | — |
//! | holds the first LBN, being read / clean | 9 / 8 (clean: only if last used by a read, or read hits on write data) | — |
//! | the same, holding only the start of the request | 4 less | — |
//! | dirty / being written, the write continues its data | — | 6 / 7 (`combine_sequential_writes`, see `write_back.rs`) |
//! | clean and idle, holding some of the LBNs | — | 4 |
//! | empty | 3 | 3 |
//! | clean and idle, other data | 2 | 2 |
//! | being read ahead | 1 (if the read-ahead may be stopped) | 1 (idem) |
//! | dirty or being written, overlapping the request | a collision | a collision |
//!
//! A write takes a segment that is not already dirty only while fewer than `write_segments`
//! are.

use super::{Buffer, Owner};
use crate::disk::Disk;

/// State of a buffer segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum St {
    Empty,
    Clean,
    Reading,
    Writing,
    Dirty,
}

#[derive(Debug, Clone)]
pub(super) struct Seg {
    /// The dedicated write segment.
    pub(super) write_seg: bool,
    pub(super) state: St,
    /// Valid data: LBNs `start..end`.
    pub(super) start: u64,
    pub(super) end: u64,
    /// Read-ahead limits (LBN one past the end).
    pub(super) min_ra: u64,
    pub(super) max_ra: u64,
    /// Kind of the last access through the segment (`None`: never used).
    pub(super) access_read: Option<bool>,
    /// Completed writes appended to the segment while it was being written back, `(lbn, end)`,
    /// oldest first: each still has its own media pass to make (see the module notes).
    pub(super) appended: Vec<(u64, u64)>,
}

impl Seg {
    fn overlaps(&self, lbn: u64, end: u64) -> bool {
        // `&` and `|`, not `&&` and `||`: the same value without a branch on each comparison,
        // which random requests would mispredict half the time.
        ((lbn >= self.start) & (lbn < self.end)) | ((end > self.start) & (end <= self.end)) | ((lbn <= self.start) & (end >= self.end))
    }

    /// Whether the segment's data `start..end` holds `lbn` (without branches, as `overlaps`).
    fn holds(&self, lbn: u64) -> bool {
        (lbn >= self.start) & (lbn < self.end)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hit {
    NoMatch,
    Whole,
    Partial,
    Collision,
    /// A write that continues the data of a segment being written back.
    Append,
}

impl Buffer {
    pub(super) fn select_read_segment(&mut self) -> (Option<usize>, Hit) {
        let (lbn, end) = (self.req().lbn, self.req().end);
        let bg = self.bg_owner();
        let mut best = 0i32;
        let mut sel = None;
        let mut hit = Hit::NoMatch;
        for &i in &self.lru {
            let s = &self.segs[i];
            let busy = bg.is_some_and(|b| b.1 == i);
            if self.p.separate_write_seg && s.write_seg {
                if matches!(s.state, St::Dirty | St::Writing) && s.overlaps(lbn, end) {
                    return (None, Hit::Collision);
                }
                continue;
            }
            let mut v = -1;
            let mut ht = Hit::NoMatch;
            if s.state == St::Empty {
                v = 3;
            } else if !s.holds(lbn) {
                if s.state == St::Clean && !busy {
                    v = 2;
                } else if s.state == St::Reading {
                    if busy && bg.is_some_and(|b| b.0 == Owner::Prefetch) {
                        v = 1;
                    }
                } else if lbn < s.start && matches!(s.state, St::Dirty | St::Writing) && s.overlaps(lbn, end) {
                    return (None, Hit::Collision);
                }
            } else {
                match s.state {
                    St::Dirty | St::Writing => {
                        let val = if s.state == St::Dirty { 11 } else { 10 };
                        if self.p.hits_on_write && best < 10 {
                            v = val;
                        } else if !self.p.hits_on_write {
                            return (None, Hit::Collision);
                        }
                    }
                    St::Reading => v = 9,
                    St::Clean => {
                        if self.p.hits_on_write || s.access_read == Some(true) {
                            v = 8;
                        }
                    }
                    St::Empty => {}
                }
                if s.end >= end {
                    ht = Hit::Whole;
                } else {
                    ht = Hit::Partial;
                    v -= 4;
                }
            }
            if v > best {
                best = v;
                sel = Some(i);
                hit = ht;
            }
        }
        if best == 1 && !self.prefetch_stopable() {
            sel = None;
        }
        if sel.is_none() {
            hit = Hit::NoMatch;
        }
        (sel, hit)
    }

    pub(super) fn select_write_segment(&mut self) -> (Option<usize>, Hit) {
        let (lbn, end) = (self.req().lbn, self.req().end);
        let bg = self.bg_owner();
        let room = self.numdirty < self.p.write_segs;
        let mut best = 0i32;
        let mut sel = None;
        let mut append = false;
        for &i in &self.lru {
            let s = &self.segs[i];
            let busy = bg.is_some_and(|b| b.1 == i);
            let pure = busy && bg.is_some_and(|b| b.0 == Owner::Prefetch);
            if self.p.separate_write_seg && !s.write_seg {
                // Reads' segments: only collisions with data that cannot be dropped matter.
                let blocked = (s.state == St::Clean && busy) || (s.state == St::Reading && !pure);
                if blocked && s.overlaps(lbn, end) {
                    return (None, Hit::Collision);
                }
                continue;
            }
            let mut v = -1;
            match s.state {
                St::Empty => {
                    if room {
                        v = 3;
                    }
                }
                St::Reading => {
                    if pure {
                        if room {
                            v = 1;
                        }
                    } else if s.overlaps(lbn, end) {
                        return (None, Hit::Collision);
                    }
                }
                St::Clean => {
                    if !busy {
                        if room {
                            v = if s.overlaps(lbn, end) { 4 } else { 2 };
                        }
                    } else if s.overlaps(lbn, end) {
                        return (None, Hit::Collision);
                    }
                }
                St::Dirty | St::Writing => {
                    if self.appendable(i, lbn) {
                        v = if s.state == St::Writing { 7 } else { 6 };
                        if v > best {
                            best = v;
                            sel = Some(i);
                            append = true;
                        }
                        continue;
                    }
                    if s.overlaps(lbn, end) {
                        return (None, Hit::Collision);
                    }
                }
            }
            if v > best {
                best = v;
                sel = Some(i);
                append = false;
            }
        }
        if best == 1 && !self.prefetch_stopable() {
            sel = None;
        }
        (sel, if append && sel.is_some() { Hit::Append } else { Hit::NoMatch })
    }

    /// DiskSim `disk_buffer_set_segment`: most recently used, drop stale clean copies of written
    /// data, set the watermark.
    pub(super) fn set_segment(&mut self) {
        let (seg, read, lbn, end, n) = {
            let r = self.req();
            (r.seg.expect("segment"), r.read, r.lbn, r.end, r.n)
        };
        if let Some(pos) = self.lru.iter().position(|&i| i == seg) {
            self.lru.remove(pos);
            self.lru.push(seg);
        }
        if !read {
            let busy = self.hda.as_ref().map(|h| h.seg);
            for (i, s) in self.segs.iter_mut().enumerate() {
                if i != seg && s.state == St::Clean && busy != Some(i) && s.overlaps(lbn, end) {
                    s.state = St::Empty;
                }
            }
        }
        let water = if read { self.p.read_water } else { self.p.write_water };
        let size = self.p.seg_size;
        let wm = if self.p.water_by_req { ((size.min(n) as f64 * water) as u64).max(1) } else { (size as f64 * water + 0.999_999_999_9) as u64 };
        self.req_mut().watermark = wm;
    }

    /// DiskSim `disk_buffer_attempt_seg_ownership`.
    pub(super) fn take_segment(&mut self, disk: &Disk) {
        let (seg, read, hit, lbn, end) = {
            let r = self.req();
            (r.seg.expect("segment"), r.read, r.hit, r.lbn, r.end)
        };
        if read {
            if hit == Hit::NoMatch {
                let s = &mut self.segs[seg];
                s.state = St::Clean;
                s.start = lbn;
                s.end = lbn;
                s.min_ra = 0;
                s.max_ra = 0;
            }
            self.update_readahead(disk, seg, lbn, end);
            self.segs[seg].access_read = Some(true);
        } else {
            let s = &mut self.segs[seg];
            if hit == Hit::NoMatch {
                s.min_ra = 0;
                s.max_ra = 0;
                s.start = lbn;
                s.end = lbn;
                if s.state != St::Dirty && s.state != St::Writing {
                    self.numdirty += 1;
                }
                s.state = St::Dirty;
            }
            s.access_read = Some(false);
        }
    }
}
