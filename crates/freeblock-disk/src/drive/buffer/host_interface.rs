//! The host interface: the disk's side of the bus, message by message.
//!
//! The disk talks to the host in messages ([`Msg`]), each taking effect after an overhead;
//! between them it moves data in chunks ([`Chunk`]), a sector every `bus_sector_ms`. A read
//! moves what the segment holds past the request's next sector; a write moves what the segment
//! has room for (`write_back.rs`). When nothing can move, the disk either holds the bus and waits
//! for data ("Hold bus entire read/write xfer") or disconnects, and reconnects once the media
//! process has brought enough data (the watermark) or room ([`Buffer::check_bus`]).
//!
//! ```text
//!  READY / RECONNECT ─► transfer ─► chunk ─► transfer ─► … ─► complete ─► COMPLETION ─► completed
//!                          │ nothing to move                      (background work goes on)
//!                          ├─ hold the bus: wait, RESUME when the media process brings data
//!                          └─ DISCONNECT ─► check_bus at each sector ─► RECONNECT
//! ```
//!
//! | message | sent when | takes effect after |
//! |---|---|---|
//! | `Ready` | a command whose segment is usable at once (`arrival.rs`) | its overhead + `data_prep_ms` |
//! | `Disconnect` | a command that must wait, or nothing to move | the read or write disconnect overhead |
//! | `Reconnect` | the request needs the bus again | `reselect_ms` (+ `data_prep_ms` with data to move) |
//! | `Resume` | data arrived while holding the bus | nothing |
//! | `Prep` | the extra write disconnect's wait | its inter-disconnect time |
//! | `Completion` | a read's data all moved; a write's moved (write-back) or on the media | `read_complete_ms` / `write_complete_ms` |

use super::media::Phase;
use super::segments::{Hit, St};
use super::settings::Params;
use super::{Buffer, Owner};
use crate::disk::Disk;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Msg {
    /// Ready to transfer (answered as a reconnection).
    Ready,
    Reconnect,
    Disconnect,
    Completion,
    /// End of the extra write disconnect's wait.
    Prep,
    /// Data arrived while holding the bus.
    Resume,
}

/// The disk's side of the host interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bus {
    Idle,
    /// A message to the host, answered at `at`.
    Msg { at: u64, msg: Msg },
    /// Moving `count` sectors from `start` to `end`.
    Xfer { start: u64, count: u64, end: u64 },
    /// Holding the bus, waiting for data.
    Outwait,
}

/// The segment's transfer state (DiskSim `seg->outstate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SegOut {
    Idle,
    Contacting,
    Transfering,
}

/// A chunk of sectors moving over the bus, one every `bt` ps from `start`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Chunk {
    pub(super) start: u64,
    pub(super) count: u64,
    pub(super) bt: u64,
}

impl Chunk {
    /// Sectors moved by `t`.
    pub(super) fn moved(self, t: u64) -> u64 {
        t.saturating_sub(self.start).checked_div(self.bt).map_or(self.count, |k| k.min(self.count))
    }

    /// The first instant by which `n` sectors have moved; None if the chunk is smaller.
    pub(super) fn time_moved(self, n: u64) -> Option<u64> {
        (n <= self.count).then(|| self.start.saturating_add(n.saturating_mul(self.bt)))
    }
}

impl Buffer {
    pub(super) fn bus_event(&mut self, disk: &Disk, t: u64) {
        let bus = self.req().bus;
        match bus {
            Bus::Msg { msg, .. } => {
                self.req_mut().bus = Bus::Idle;
                match msg {
                    Msg::Ready | Msg::Reconnect | Msg::Resume => {
                        if msg == Msg::Resume {
                            self.req_mut().bus = Bus::Outwait;
                        }
                        self.transfer(disk, t);
                    }
                    Msg::Disconnect => self.disconnected(disk, t),
                    Msg::Completion => self.completed(disk, t),
                    Msg::Prep => self.check_bus(disk, t),
                }
            }
            Bus::Xfer { .. } => self.transfer(disk, t),
            Bus::Idle | Bus::Outwait => {}
        }
    }

    /// Sends the completion message.
    fn complete(&mut self, t: u64) {
        if !self.p.keep_read_data {
            // DiskSim "discard request data": the read's own sectors leave the segment.
            let r = self.req();
            if let (true, Some(seg)) = (r.read, r.seg) {
                let out = r.outblkno;
                let s = &mut self.segs[seg];
                // DiskSim keeps it when another request shares the segment (dirty data).
                if !matches!(s.state, St::Dirty | St::Writing) {
                    s.start = s.start.max(out.min(s.end));
                }
            }
        }
        let (rc, wc) = (self.p.read_complete, self.p.write_complete);
        let r = self.req_mut();
        r.seg_out = SegOut::Idle;
        r.completion_sent = true;
        let d = if r.read { rc } else { wc };
        r.bus = Bus::Msg { at: t + d, msg: Msg::Completion };
        self.last_read = self.req().read;
    }

    /// No data can move now: keep the bus and wait for data ("Hold bus entire read/write xfer"),
    /// or disconnect and reconnect later.
    fn hold_bus_or_disconnect(&mut self, t: u64, hold: bool) {
        if hold {
            let r = self.req_mut();
            r.seg_out = SegOut::Transfering;
            r.chunk = 0;
            r.bus = Bus::Outwait;
        } else {
            self.disconnect(t);
        }
    }

    fn disconnect(&mut self, t: u64) {
        let lr = self.last_read;
        let d = {
            let r = self.req();
            if r.read {
                Params::pick(self.p.read_disc, lr)
            } else if r.extra {
                self.p.extra.map_or(self.p.write_disc, |x| x[3])
            } else {
                self.p.write_disc
            }
        };
        let r = self.req_mut();
        r.seg_out = SegOut::Idle;
        r.bus = Bus::Msg { at: t + d, msg: Msg::Disconnect };
    }

    /// DiskSim `disk_reconnection_or_transfer_complete` with `disk_buffer_transfer_size`: after a
    /// reconnection or a finished chunk, move what can be moved, wait, disconnect or complete.
    fn transfer(&mut self, disk: &Disk, t: u64) {
        let _ = disk;
        let was_xfer = self.req().seg_out == SegOut::Transfering;
        let read = self.req().read;
        let seg = self.req().seg.expect("segment");
        if read {
            {
                let r = self.req_mut();
                if was_xfer {
                    r.outblkno += r.chunk;
                }
            }
            let (outblkno, end) = (self.req().outblkno, self.req().end);
            let send = self.segs[seg].end;
            if outblkno >= end {
                self.complete(t);
            } else if send > outblkno {
                let count = send.min(end) - outblkno;
                let bt = self.p.bt_read;
                let r = self.req_mut();
                r.seg_out = SegOut::Transfering;
                r.chunk = count;
                r.bus = Bus::Xfer { start: t, count, end: t + count * bt };
            } else {
                self.hold_bus_or_disconnect(t, self.p.hold_read);
            }
            return;
        }
        // Write.
        {
            let r = self.req();
            if !was_xfer && r.outblkno == r.end && r.media_done {
                self.complete(t);
                return;
            }
        }
        if was_xfer {
            let (outblkno, lbn) = {
                let r = self.req_mut();
                r.outblkno += r.chunk;
                r.chunk = 0;
                (r.outblkno, r.lbn)
            };
            let s = &mut self.segs[seg];
            s.start = s.start.min(lbn);
            s.end = s.end.max(outblkno);
            if outblkno >= self.req().end {
                if self.p.write_back {
                    self.complete(t);
                } else {
                    self.disconnect(t);
                }
                return;
            }
        }
        let owner_in = self.seg_owner_inblkno();
        let (outblkno, end) = (self.req().outblkno, self.req().end);
        let room = (self.p.seg_size + owner_in).saturating_sub(outblkno);
        let count = room.min(end - outblkno);
        if count == 0 {
            self.hold_bus_or_disconnect(t, self.p.hold_write);
            return;
        }
        let bt = self.p.bt_write;
        let r = self.req_mut();
        r.seg_out = SegOut::Transfering;
        r.chunk = count;
        r.bus = Bus::Xfer { start: t, count, end: t + count * bt };
    }

    /// Sectors moved over the bus so far in the chunk under way.
    pub(super) fn moved(&self, t: u64) -> u64 {
        let Some(r) = self.req.as_ref() else { return 0 };
        let bt = if r.read { self.p.bt_read } else { self.p.bt_write };
        r.chunk_under_way(bt).map_or(0, |c| c.moved(t))
    }

    /// DiskSim `disk_disconnect`.
    fn disconnected(&mut self, disk: &Disk, t: u64) {
        let extra = self.p.extra;
        let r = self.req_mut();
        r.bus = Bus::Idle;
        if r.extradisc && r.extra {
            if let Some(x) = extra {
                r.bus = Bus::Msg { at: t + x[2], msg: Msg::Prep };
                return;
            }
        }
        if r.hda {
            self.check_bus(disk, t);
        }
    }

    /// Would the request use the bus now (DiskSim `disk_request_needs_bus`)? The sectors to move.
    fn needs_bus(&self) -> Option<u64> {
        let r = self.req();
        if r.bus != Bus::Idle || r.completion_sent {
            return None;
        }
        let s = &self.segs[r.seg?];
        if r.read {
            (s.end > r.outblkno && s.start <= r.outblkno && (s.end >= r.end || s.end - r.outblkno >= r.watermark))
                .then(|| s.end.min(r.end) - r.outblkno)
        } else {
            let own = self.owner_inblkno();
            let owner = self.seg_owner_inblkno();
            let size = self.p.seg_size;
            // An append's first data goes by the segment's room, like the rest of it.
            let first = r.outblkno == r.lbn && r.hit != Hit::Append;
            let more = s.end == r.outblkno
                && s.end < r.end
                && s.end.saturating_sub(owner) < size
                && s.end.saturating_sub(own) <= r.watermark;
            (own >= r.end || first || more).then(|| if first { r.n.min(size) } else { (r.end - r.outblkno).min((size + owner).saturating_sub(s.end)) })
        }
    }

    /// DiskSim `disk_check_bus` for the request: reconnect if it needs the bus.
    pub(super) fn check_bus(&mut self, _disk: &Disk, t: u64) {
        let Some(count) = self.needs_bus() else { return };
        let (reselect, other, prep) = (self.p.reselect, self.p.reselect_other, self.p.data_prep);
        let r = self.req_mut();
        let mut d = if r.extradisc {
            r.extradisc = false;
            reselect
        } else if r.extra {
            other
        } else {
            reselect
        };
        if count > 0 {
            d += prep;
        }
        r.seg_out = SegOut::Contacting;
        r.bus = Bus::Msg { at: t + d, msg: Msg::Reconnect };
    }

    /// The host has the completion (DiskSim `disk_completion`): the read-ahead or write-back the
    /// request started goes on in the background.
    fn completed(&mut self, disk: &Disk, t: u64) {
        let (read, hda, media_done) = {
            let r = self.req_mut();
            r.done = Some(t);
            (r.read, r.hda, r.media_done)
        };
        if !hda {
            let r = self.req();
            if let (Hit::Append, Some(seg)) = (r.hit, r.seg) {
                // Its data is in the segment; its own media pass comes when the mechanism frees.
                let range = (r.lbn, r.end);
                self.segs[seg].appended.push(range);
            }
            return;
        }
        let Some(h) = self.hda.as_mut() else { return };
        if h.owner != Owner::Req {
            return;
        }
        if read {
            h.owner = Owner::Prefetch;
            h.bg = true;
            if matches!(h.phase, Phase::Idle) {
                self.end_access(disk, t);
            }
        } else if media_done {
            h.owner = Owner::Destage;
            self.end_access(disk, t);
        } else {
            h.owner = Owner::Destage;
            h.bg = true;
        }
    }
}
