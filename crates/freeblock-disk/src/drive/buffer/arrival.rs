//! A command arrives: its overhead, its segment, and the mechanism.
//!
//! ```text
//!  arrival ─► choose a segment ─► usable at once? ──yes──► READY after the hit (write) overhead
//!                                      │ no                 and the data preparation
//!                                      └──────────────► DISCONNECT after the miss overhead,
//!                                                        reconnect when there is data to move
//!  then: stop the read-ahead in the way (or take it over, when the read hits its segment),
//!        take the segment, start the media access now, or wait until the mechanism frees
//! ```
//!
//! "Usable at once" means a segment was found and the background work under way lets the
//! command through: none, a read-ahead that may be stopped (`read_ahead.rs`), or for a write
//! appended to the segment being written back, that write-back (`write_back.rs`).
//!
//! | command | usable at once | otherwise |
//! |---|---|---|
//! | read | a hit (its first LBN is in a segment): READY after `read_hit_ms` + `data_prep_ms` | DISCONNECT after `read_miss_ms` + `read_disconnect_ms` |
//! | write | READY after `write_hit_ms` (write-back) or `write_miss_ms`, + `data_prep_ms`; with DiskSim's extra write disconnect, a DISCONNECT instead | DISCONNECT after the same overhead (+ `write_disconnect_ms` with write-back) |
//!
//! A command that must wait for the mechanism gets it when the access under way ends
//! ([`Buffer::hda_free`]), choosing its segment then if it had none.

use super::host_interface::{Bus, Msg, SegOut};
use super::media::{Hda, Phase};
use super::segments::{Hit, St};
use super::settings::Params;
use super::track::Track;
use super::{Buffer, Owner, NONE};
use crate::disk::Disk;

impl Buffer {
    pub(super) fn read_arrive(&mut self, disk: &Disk, t0: u64) {
        let lr = self.last_read;
        let miss = Params::pick(self.p.read_miss, lr);
        {
            let r = self.req_mut();
            r.overhead_done = t0 + miss;
        }
        let (seg, hit) = self.select_read_segment();
        {
            let r = self.req_mut();
            r.seg = seg;
            r.hit = hit;
        }
        let bg = self.bg_owner();
        let merge = matches!(hit, Hit::Whole | Hit::Partial) && bg.is_some_and(|b| b.0 == Owner::Prefetch && Some(b.1) == seg);
        let stopable = match bg {
            None => true,
            Some((Owner::Prefetch, _)) => merge || self.prefetch_stopable(),
            Some(_) => false,
        };
        let enough = matches!(hit, Hit::Whole | Hit::Partial);
        if enough && stopable {
            let o = Params::pick(self.p.read_hit, lr);
            let data_prep = self.p.data_prep;
            let r = self.req_mut();
            r.overhead = o;
            r.bus = Bus::Msg { at: t0 + o + data_prep, msg: Msg::Ready };
            self.req_mut().seg_out = SegOut::Contacting;
            self.set_segment();
            self.activate(disk, t0, false, stopable, merge);
        } else {
            let d = Params::pick(self.p.read_disc, lr);
            let r = self.req_mut();
            r.overhead = miss;
            r.bus = Bus::Msg { at: t0 + miss + d, msg: Msg::Disconnect };
            self.activate(disk, t0, true, stopable, merge);
        }
    }

    pub(super) fn write_arrive(&mut self, disk: &Disk, t0: u64) {
        let lr = self.last_read;
        let (seg, hit) = self.select_write_segment();
        {
            let r = self.req_mut();
            r.seg = seg;
            r.hit = hit;
        }
        // DiskSim's "extra write disconnect": a write after a write elsewhere.
        if let (Some(_), Some(i)) = (self.p.extra, seg) {
            let s = &self.segs[i];
            if self.lru.last() == Some(&i) && s.access_read == Some(false) && self.req().lbn != s.end {
                self.req_mut().extra = true;
            }
        }
        let o = if self.p.write_back { Params::pick(self.p.write_hit, lr) } else { Params::pick(self.p.write_miss, lr) };
        {
            let r = self.req_mut();
            r.overhead_done = t0 + o;
            r.overhead = o;
        }
        let stopable = match self.bg_owner() {
            None => true,
            Some((Owner::Prefetch, _)) => self.prefetch_stopable(),
            // DiskSim: an append to the segment being written merges with that write-back, unless
            // an earlier appended write still waits for its pass (it is first in the queue).
            Some((Owner::Destage, i)) => {
                hit == Hit::Append && seg == Some(i) && self.segs[i].state == St::Writing && self.segs[i].appended.is_empty()
            }
            Some(_) => false,
        };
        if seg.is_some() && stopable {
            let extra = self.p.extra;
            let data_prep = self.p.data_prep;
            let r = self.req_mut();
            if let (true, Some(x)) = (r.extra, extra) {
                r.overhead_done = t0 + x[0] + x[4];
                r.overhead = x[0];
                r.extradisc = true;
                r.bus = Bus::Msg { at: t0 + x[0] + x[1], msg: Msg::Disconnect };
            } else {
                r.bus = Bus::Msg { at: t0 + o + data_prep, msg: Msg::Ready };
                r.seg_out = SegOut::Contacting;
            }
            self.set_segment();
            self.activate(disk, t0, false, stopable, false);
        } else {
            let d = if self.p.write_back { self.p.write_disc } else { 0 };
            let r = self.req_mut();
            r.extra = false;
            r.bus = Bus::Msg { at: t0 + o + d, msg: Msg::Disconnect };
            self.activate(disk, t0, true, stopable, false);
        }
    }

    /// DiskSim `disk_activate_read` / `disk_activate_write` for the arriving request.
    fn activate(&mut self, disk: &Disk, t: u64, setseg: bool, stopable: bool, merge: bool) {
        let hit = self.req().hit;
        if self.hda.is_some() && !matches!(hit, Hit::Collision | Hit::Append) && stopable {
            let dirty = self.req().seg.is_some_and(|s| self.segs[s].state == St::Dirty);
            if !dirty {
                if merge {
                    // Take over the read-ahead: it goes on, now for this request.
                    if let Some(h) = &mut self.hda {
                        h.owner = Owner::Req;
                    }
                } else {
                    self.stop_prefetch();
                }
            }
        }
        if setseg && self.req().seg.is_some() {
            if self.hda.is_some() {
                let r = self.req_mut();
                r.seg = None;
                r.hit = Hit::NoMatch;
            } else {
                self.set_segment();
            }
        }
        if self.req().seg.is_some() {
            self.take_segment(disk);
        }
        let free = self.hda.is_none() || merge;
        if hit != Hit::Collision && free && self.req().seg.is_some() {
            self.req_mut().hda = true;
            self.start_access(disk, t);
        } else {
            self.req_mut().waiting = true;
        }
    }

    /// DiskSim `disk_check_hda` for the request: start its media work (or let the read-ahead it
    /// took over go on).
    fn start_access(&mut self, disk: &Disk, t: u64) {
        let (seg, read, lbn, end, n, od, outblkno) = {
            let r = self.req();
            (r.seg.expect("segment"), r.read, r.lbn, r.end, r.n, r.overhead_done, r.outblkno)
        };
        let delay = od.saturating_sub(t) + self.seek_stop.saturating_sub(t);
        if read {
            let active = self.hda.as_ref().is_some_and(|h| h.owner == Owner::Req && !matches!(h.phase, Phase::Idle));
            self.segs[seg].access_read = Some(true);
            let max = self.update_readahead(disk, seg, lbn, end);
            let s = &mut self.segs[seg];
            s.state = St::Reading;
            let (mut initiate, mut bg) = (false, false);
            if s.end < end || s.start > outblkno {
                initiate = true;
            } else if s.end < s.max_ra.max(max) {
                bg = true;
                initiate = self.p.ra_on_hit;
            }
            let target = s.end;
            if active {
                let h = self.hda.as_mut().expect("access");
                h.bg = bg;
                h.req_start = lbn;
                h.req_end = end;
                h.req_len = n;
                return;
            }
            self.hda = Some(self.new_access(seg, true, bg, lbn, end, n));
            if initiate && !self.initiate_seek(disk, t, target, delay, 0) {
                self.end_access(disk, t);
            }
        } else {
            self.segs[seg].access_read = Some(false);
            if !matches!(self.segs[seg].state, St::Writing | St::Dirty) {
                self.numdirty += 1;
            }
            self.segs[seg].state = St::Writing;
            let mut h = self.new_access(seg, false, false, lbn, end, n);
            h.inblkno = lbn;
            self.hda = Some(h);
            if !self.initiate_seek(disk, t, lbn, delay, self.p.min_write_seek) {
                self.end_access(disk, t);
            }
        }
        self.check_bus(disk, t);
    }

    pub(super) fn new_access(&self, seg: usize, read: bool, bg: bool, lbn: u64, end: u64, n: u64) -> Hda {
        Hda {
            owner: Owner::Req,
            seg,
            read,
            bg,
            immed: if read { self.p.immed_read } else { self.p.immed_write },
            req_start: lbn,
            req_end: end,
            req_len: n,
            inblkno: lbn,
            phase: Phase::Idle,
            track: Track::default(),
            immedstart: NONE,
            immedend: NONE,
            last_seek: 0,
        }
    }

    /// The mechanism is free: start the request waiting for it (DiskSim `disk_check_hda` →
    /// `disk_get_effectivehda`).
    pub(super) fn hda_free(&mut self, disk: &Disk, t: u64) {
        if !self.req.as_ref().is_some_and(|r| r.waiting) {
            return;
        }
        self.req_mut().waiting = false;
        if self.req().seg.is_none() {
            let read = self.req().read;
            let (seg, hit) = if read { self.select_read_segment() } else { self.select_write_segment() };
            let r = self.req_mut();
            r.seg = seg;
            r.hit = hit;
            if seg.is_none() {
                r.waiting = true;
                return;
            }
            self.set_segment();
            self.take_segment(disk);
        }
        self.req_mut().hda = true;
        self.start_access(disk, t);
    }
}
