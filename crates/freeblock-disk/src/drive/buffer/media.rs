//! The media process: how the mechanism serves a segment, seek by seek and sector by sector.
//!
//! The mechanism runs one access at a time ([`Hda`]) for its owner (the request, its
//! read-ahead or its write-back). An access seeks to the track of the next LBN it needs, then
//! passes sector boundaries: at each one the sector just passed is read into (written from) the
//! segment if the head was allowed to ([`Buffer::block_available`]: the sector is wanted, the
//! segment has room, the write's data is there), the data that arrived over the bus is added, and
//! [`Buffer::request_complete`] decides whether the access ends, reads on as read-ahead, or lets
//! the host interface move data.
//!
//! ```text
//!  initiate_seek ─► Seek{at} ─► seek_done ─► Rot{i} ─► boundary ─► Rot{i+1} ─► boundary ─► …
//!        ▲                                                │ next LBN on another track
//!        └────────────────────────────────────────────────┘
//!  request_complete ─► end_access ─► Idle (the request keeps the mechanism) or free (hda_free)
//! ```
//!
//! | switch | what the head does |
//! |---|---|
//! | `zero_latency_reads` / `_writes` | starts with whichever wanted sector comes under it first, and comes back for those it passed |
//! | `read_any_free_blocks` | a read also keeps the sectors before its first one that pass under the head first (while the segment holds nothing else) |
//! | `skip_unmapped_sectors` | steps from a mapped sector straight to the next mapped one (below) |
//!
//! The media process steps sector by sector. On a track whose LBNs fill only part of its sectors
//! (the spares of a cylinder, range or track), DiskSim 4.0 steps through the track's LBNs instead,
//! one sector time each, from the last straight back to the first: a write that missed a sector
//! for want of data meets it again after as many sector times as the track has LBNs, while the
//! platter (the angle the next seek starts from) turns on in real time. That is not physical;
//! [`crate::CacheSpec::skip_unmapped_sectors`] selects it (imported DiskSim drives), and the
//! physical revolution is the default. Zero-latency and "read any free blocks" reads keep the
//! physical order (once seen on the Atlas 10K, whose DiskSim read-any-free turned out to take no
//! effect at all: docs/disksim-compat.md; kept, as nothing on hand refutes it).
//!
//! Runs of boundaries that change nothing are taken at once (`fast_forward.rs`).

use super::host_interface::{Bus, Msg, SegOut};
use super::segments::{Hit, St};
use super::track::Track;
use super::{Buffer, Owner, NONE};
use crate::disk::{Disk, HeadState, Op};
use crate::layout::Pbn;
use crate::spec::ReadAhead;

#[derive(Debug, Clone)]
pub(super) enum Phase {
    /// Seeking; done at `at`, to the track of LBN `target`, which is at `pbn` (looked up once,
    /// when the seek starts).
    Seek { at: u64, target: u64, pbn: Pbn },
    /// Passing sectors: boundary `i` (at `base + i·rev/spt`) ends sector `prev` (processed if its
    /// flag says so) and starts sector `next`.
    Rot { base: u64, i: u64, prev: Option<(u32, bool)>, next: u32 },
    /// No media activity, mechanism still held by the request.
    Idle,
}

/// The mechanism's current access.
#[derive(Debug, Clone)]
pub(super) struct Hda {
    pub(super) owner: Owner,
    pub(super) seg: usize,
    pub(super) read: bool,
    /// Past the request's own data (read-ahead, or write-back after completion).
    pub(super) bg: bool,
    /// Zero-latency access.
    pub(super) immed: bool,
    pub(super) req_start: u64,
    pub(super) req_end: u64,
    pub(super) req_len: u64,
    /// Writes: next LBN to put on the media.
    pub(super) inblkno: u64,
    pub(super) phase: Phase,
    pub(super) track: Track,
    pub(super) immedstart: u64,
    pub(super) immedend: u64,
    pub(super) last_seek: u64,
}

impl Hda {
    pub(super) fn next_time(&self) -> Option<u64> {
        match &self.phase {
            Phase::Seek { at, .. } => Some(*at),
            Phase::Rot { base, i, .. } => Some(self.track.boundary_time(*base, *i)),
            Phase::Idle => None,
        }
    }
}

impl Buffer {
    /// DiskSim `disk_initiate_seek`. False if read-ahead must stop here instead.
    pub(super) fn initiate_seek(&mut self, disk: &Disk, t: u64, target: u64, delay: u64, mintime: u64) -> bool {
        if target >= self.p.capacity {
            return false;
        }
        // Usually the track a read's read-ahead limit was just looked up on; else the track
        // `seek_done` will want.
        let pbn = self.last_track.load_lbn(disk, target);
        let h = self.hda.as_mut().expect("access");
        let op = if h.read { Op::Read } else { Op::Write };
        let seek = disk.move_ns(self.head, pbn.cylinder, pbn.surface, op) * 1000;
        let mut begin = t + delay;
        if seek < mintime {
            begin += mintime - seek;
        }
        if h.read && h.bg {
            let moved_cyl = pbn.cylinder != self.head.cylinder;
            let moved = moved_cyl || pbn.surface != self.head.surface;
            match self.p.ra_mode {
                ReadAhead::TrackEnd if moved => return false,
                ReadAhead::CylinderEnd if moved_cyl => return false,
                _ => {}
            }
        }
        h.last_seek = seek;
        h.phase = Phase::Seek { at: begin + seek, target, pbn };
        true
    }

    /// The mechanism's next event, due at `now` ([`Hda::next_time`]). Nothing else may happen
    /// before `limit`, which lets a run of sector boundaries that change nothing but the
    /// segment's end be taken at once.
    pub(super) fn hda_event(&mut self, disk: &Disk, now: u64, limit: u64) {
        let phase = self.hda.as_ref().expect("access").phase.clone();
        match phase {
            Phase::Seek { at, target, pbn } => self.seek_done(disk, at, target, pbn),
            Phase::Rot { base, i, prev, next } => {
                self.boundary(disk, now, base, i, prev, next);
                // The runs below step sectors physically, not through a track's LBNs.
                if self.fast_forward && !self.hda.as_ref().is_some_and(|h| self.skips_unmapped(h)) {
                    self.fast_forward(limit);
                }
            }
            Phase::Idle => {}
        }
    }

    /// DiskSim `disk_buffer_seekdone`: on track; find the first sector to pass.
    fn seek_done(&mut self, disk: &Disk, at: u64, target: u64, pbn: Pbn) {
        let rev = self.p.rev;
        self.head = HeadState { cylinder: pbn.cylinder, surface: pbn.surface };
        let read_any_free = self.p.read_any_free;
        let h = self.hda.as_mut().expect("access");
        if !h.track.is(pbn.cylinder, pbn.surface) {
            self.last_track.load(disk, pbn.cylinder, pbn.surface);
            h.track.clone_from(&self.last_track);
        }
        let tr = &h.track;
        let spt = u64::from(tr.spt);
        let immed = h.immed || (read_any_free && h.read && target != tr.first);
        let target_sector = u64::from(pbn.sector);
        let len = tr.next - tr.first;
        let end_sector = (target_sector + len.max(1) - 1).min(spt - 1);
        let theta = at % rev;
        let mut start = target_sector;
        if immed && end_sector != target_sector {
            let sp = tr.pos(target_sector, rev);
            let ep = tr.pos(end_sector, rev);
            let d = (theta + rev - sp) % rev;
            let dd = (ep + rev - sp) % rev;
            if d > 0 && d < dd {
                let rel = (theta + rev - tr.pos0) % rev;
                start = ((u128::from(rel) * u128::from(spt)).div_ceil(u128::from(rev)) as u64) % spt;
            }
        }
        let latency = (tr.pos(start, rev) + rev - theta) % rev;
        h.immedstart = tr.next;
        h.immedend = tr.next;
        h.phase = Phase::Rot { base: at + latency, i: 0, prev: None, next: start as u32 };
        let (owner, last_seek, bg) = (h.owner, h.last_seek, h.bg);
        if owner == Owner::Req && !bg {
            if let Some(r) = self.req.as_mut() {
                if r.media_start.is_none() && r.media_end.is_none() {
                    r.seek = last_seek;
                    r.latency = latency;
                    r.media_start = Some(at + latency);
                }
            }
        }
    }

    /// A sector boundary (DiskSim `disk_buffer_sector_done`).
    /// `t` is the boundary's time, [`Hda::next_time`], which the caller has already computed.
    fn boundary(&mut self, disk: &Disk, t: u64, base: u64, i: u64, prev: Option<(u32, bool)>, next: u32) {
        let spt = self.hda.as_ref().expect("access").track.spt;
        debug_assert_eq!(t, base + i * self.p.rev / u64::from(spt));
        if let Some((s, true)) = prev {
            self.process_sector(s);
        }
        self.update_outbuffer(t);
        {
            let h = self.hda.as_ref().expect("access");
            let size = self.p.seg_size;
            let s = &mut self.segs[h.seg];
            s.start = s.start.max(s.end.saturating_sub(size));
        }
        if self.request_complete(disk, t) {
            return;
        }
        let (first, track_next) = {
            let h = self.hda.as_ref().expect("access");
            (if h.read { self.segs[h.seg].end } else { h.inblkno }, h.track.next)
        };
        // A track whose LBNs are not one run (a defect remapped onto one of its spares) spans
        // [first, next) without holding every LBN in it: the next LBN may be on another track.
        let elsewhere = first < track_next && first < self.p.capacity && !self.hda.as_ref().expect("access").track.holds(first);
        if first >= track_next || elsewhere {
            let target = if elsewhere { first } else { track_next };
            if !self.initiate_seek(disk, t, target, 0, 0) {
                self.end_access(disk, t);
            }
            return;
        }
        let lbn = self.hda.as_ref().expect("access").track.lbn(next);
        let valid = lbn != NONE && self.block_available(lbn, t);
        let skip = self.skips_unmapped(self.hda.as_ref().expect("access"));
        let h = self.hda.as_mut().expect("access");
        h.phase = Phase::Rot { base, i: i + 1, prev: Some((next, valid)), next: h.track.after(next, skip) };
    }

    /// Does the access step from a mapped sector straight to the next mapped one, over a short
    /// track's spares or a slip (`CacheSpec::skip_unmapped_sectors`)? Not a zero-latency or "read any free blocks" read:
    /// DiskSim 4.0 was seen to pass the unmapped sectors there (docs/disksim-compat.md).
    fn skips_unmapped(&self, h: &Hda) -> bool {
        self.p.skip_unmapped && h.track.gaps && !(h.immed || (self.p.read_any_free && h.read))
    }

    /// What the head did with sector `s` (which it was allowed to read or write).
    fn process_sector(&mut self, s: u32) {
        let p_any = self.p.ra_mode != ReadAhead::None;
        let size = self.p.seg_size;
        let h = self.hda.as_mut().expect("access");
        let seg = &mut self.segs[h.seg];
        let cur = h.track.lbn(s);
        let next = h.track.next;
        let mut first = if h.read { seg.end } else { h.inblkno };
        let goal = if h.read {
            if h.bg {
                seg.max_ra
            } else {
                h.req_end
            }
        } else {
            seg.end
        };
        let last = goal.min(next);
        let inblk = if h.read { h.req_start } else { h.inblkno };
        if cur == first {
            first += 1;
            if first == h.immedstart {
                first = h.immedend;
                h.immedstart = next + 1;
                h.immedend = next + 1;
            }
        } else if cur < seg.start {
            seg.start = cur;
            first = cur + 1;
        } else if h.immed && h.immedstart >= next {
            if cur >= last {
                if h.read && p_any && cur < inblk {
                    h.immedstart = cur;
                    h.immedend = cur + 1;
                }
            } else if cur > first {
                h.immedstart = cur;
                h.immedend = cur + 1;
            }
        } else if cur == h.immedend && (cur < last || cur < inblk) {
            h.immedend += 1;
            seg.start = seg.start.max(h.immedend.saturating_sub(size));
        } else if cur > h.immedend && cur < last {
            h.immedstart = cur;
            h.immedend = cur + 1;
        }
        if h.read {
            seg.end = first;
        } else {
            h.inblkno = first;
        }
    }

    /// DiskSim `disk_buffer_update_outbuffer`: written data that has arrived is in the segment.
    pub(super) fn update_outbuffer(&mut self, t: u64) {
        let Some(r) = self.req.as_ref() else { return };
        // The write taking its data into the segment the mechanism is writing: the request that
        // holds it, or one appended to a write-back.
        let on_media = self.hda.as_ref().map(|h| h.seg);
        if r.read || !(r.hda || (r.hit == Hit::Append && r.seg == on_media)) {
            return;
        }
        let Some(seg) = r.seg else { return };
        let got = r.outblkno + self.moved(t);
        let s = &mut self.segs[seg];
        s.end = s.end.max(got);
    }

    /// DiskSim `disk_buffer_block_available`: may the head read (write) `lbn` now?
    fn block_available(&self, lbn: u64, t: u64) -> bool {
        let h = self.hda.as_ref().expect("access");
        let s = &self.segs[h.seg];
        if h.read {
            if lbn < s.end && lbn >= s.start {
                return false;
            }
            if lbn < s.start && (!self.p.read_any_free || s.end != s.start) {
                return false;
            }
            if h.owner == Owner::Req {
                if let Some(r) = &self.req {
                    if !r.completion_sent && lbn >= r.outblkno + self.moved(t) + self.p.seg_size {
                        return false;
                    }
                }
            }
            true
        } else {
            if lbn < h.inblkno || lbn >= s.end {
                return false;
            }
            if h.owner == Owner::Req && self.p.extra.is_some() {
                let have = s.end - s.start;
                return if h.req_len < 45 { have >= h.req_len.min(10) } else { have >= 15 };
            }
            true
        }
    }

    /// DiskSim `disk_buffer_request_complete`, after each sector. True if the access ended.
    fn request_complete(&mut self, disk: &Disk, t: u64) -> bool {
        let (owner, read, bg, seg, req_end, inblkno) = {
            let h = self.hda.as_ref().expect("access");
            (h.owner, h.read, h.bg, h.seg, h.req_end, h.inblkno)
        };
        if owner == Owner::Req && self.req.as_ref().is_some_and(|r| r.bus == Bus::Outwait) {
            // DiskSim retries the held transfer after every sector; a retry with nothing new to
            // move just waits again, so only retries that can move data are made.
            let useful = {
                let r = self.req();
                let s = &self.segs[seg];
                if r.read {
                    s.end > r.outblkno
                } else {
                    self.p.seg_size + self.owner_inblkno() > r.outblkno
                }
            };
            if useful {
                self.req_mut().bus = Bus::Msg { at: t, msg: Msg::Resume };
            }
        }
        let s = &self.segs[seg];
        let mut mark = false;
        let mut done;
        if read {
            if bg {
                done = s.end >= s.max_ra;
            } else {
                let r = self.req();
                mark = s.end.saturating_sub(r.outblkno) >= r.watermark;
                done = s.end >= req_end;
            }
        } else if bg {
            done = s.end == inblkno;
        } else {
            let r = self.req();
            mark = s.end.saturating_sub(inblkno) <= r.watermark && s.end < req_end;
            done = inblkno >= req_end;
        }
        if bg && done && read {
            self.end_access(disk, t);
            return true;
        }
        if !bg && owner == Owner::Req && self.req().seg_out == SegOut::Idle && (done || mark) {
            self.check_bus(disk, t);
        }
        if (!bg || !read) && done {
            if owner == Owner::Req && self.req().media_end.is_none() {
                self.req_mut().media_end = Some(t);
            }
            let s = &self.segs[seg];
            if !read || self.p.ra_mode == ReadAhead::None || s.end >= s.max_ra {
                // fall through: the access is over
            } else {
                self.hda.as_mut().expect("access").bg = true;
                done = false;
            }
        }
        if done {
            if !read && owner == Owner::Req {
                self.req_mut().media_done = true;
                let r = self.req();
                if !r.completion_sent && r.seg_out == SegOut::Idle {
                    self.check_bus(disk, t);
                }
            }
            self.end_access(disk, t);
            return true;
        }
        false
    }

    /// The access is over (DiskSim sets `seg->access->type = NULL_EVENT` and releases the
    /// mechanism, which a request keeps until its completion).
    pub(super) fn end_access(&mut self, disk: &Disk, t: u64) {
        let h = self.hda.as_mut().expect("access");
        h.phase = Phase::Idle;
        match h.owner {
            Owner::Req => {}
            Owner::Prefetch => {
                let seg = h.seg;
                self.hda = None;
                self.segs[seg].state = St::Clean;
                self.hda_free(disk, t);
            }
            Owner::Destage => {
                let seg = h.seg;
                self.hda = None;
                if !self.segs[seg].appended.is_empty() {
                    let (lbn, end) = self.segs[seg].appended.remove(0);
                    self.start_appended_pass(disk, t, seg, lbn, end);
                    return;
                }
                let live_append = self.req.as_ref().is_some_and(|r| r.waiting && r.hit == Hit::Append && r.seg == Some(seg));
                if !live_append {
                    self.segs[seg].state = if self.p.hits_on_write { St::Clean } else { St::Empty };
                    self.numdirty = self.numdirty.saturating_sub(1);
                }
                // An append still taking its data gets the mechanism as the request it is.
                self.hda_free(disk, t);
            }
        }
    }
}
