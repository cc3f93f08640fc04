//! The disk buffer: DiskSim 4.0's disk controller with its segmented cache.
//!
//! ```text
//!  host ──command──► overhead ──► READY (hit) ───────────────► data phase ──► completion
//!                        │        DISCONNECT (miss, write …) ─► reconnect ─┘  (+ overheads)
//!                        ▼
//!  mechanism:  seek ─► rotate ─► sector by sector into / out of a buffer segment
//!              (read-ahead and write-back go on after the completion, until a new
//!               command stops them or they finish; they move the heads)
//! ```
//!
//! The model follows DiskSim's `disksim_diskctlr.c` and `disksim_diskcache.c` for a disk that
//! gets one command at a time (the simulator hands the drive its next request only when the
//! previous one completed): the same segment choice and hit rules, the same sector-by-sector media
//! process (zero-latency access, "read any free blocks", data that arrives over the bus while the
//! heads wait for it), the same bus handshakes (watermarks, reconnections, holding the bus) and
//! the same overheads. Host-side components (driver, controller, buses other than the disk's) take
//! no time, as in DiskSim's validation set-ups. Times are kept in picoseconds inside.
//!
//! ## How a request is served
//!
//! [`Buffer::serve`] first runs the background work left by earlier requests (read-ahead,
//! write-back) up to the new request's arrival, then lets the request arrive, then takes the
//! events of its two actors in time order until the completion reaches the host: the mechanism
//! (the access under way, [`media::Hda`]: a seek's end or the next sector boundary) and the bus
//! (the request's next message or the end of the chunk moving, [`host_interface::Bus`]). Each
//! actor's event may start the other's: a sector read may let the disk reconnect, a chunk moved
//! may give a write the data its next sector needs.
//!
//! The mechanism has one owner at a time ([`Owner`]):
//!
//! | owner | from | until |
//! |---|---|---|
//! | `Req` | the request gets the mechanism (at arrival, or when it frees) | the completion, which hands the access on |
//! | `Prefetch` | a read's completion: its access reads on into the segment | the read-ahead limit, or a next command that stops it |
//! | `Destage` | a write-back write's completion: its access writes on | the segment's data is on the media (then the appended writes' passes) |
//!
//! ## The parts
//!
//! | file | part | DiskSim |
//! |---|---|---|
//! | `settings.rs` | the controller's overheads and the cache's switches, in ps | the disk's parameters |
//! | `segments.rs` | segment states; which segment a command uses (hits, collisions); least recently used first | `disk_buffer_select_segment`, `…_set_segment`, `…_attempt_seg_ownership` |
//! | `read_ahead.rs` | how far a read reads on past its end, and stopping it | `disk_buffer_get_max_readahead`, `…_stopable_access`, `…_stop_access` |
//! | `write_back.rs` | writes that complete before their media pass; writes appended to a write-back | `BUFFER_APPEND`, `disk_buffer_seg_owner` |
//! | `arrival.rs` | a command's overhead, segment and mechanism, on arrival or once the mechanism frees | `disk_activate_read` / `…_write`, `disk_check_hda` |
//! | `media.rs` | the mechanism: seeks and the sector-by-sector process | `disk_initiate_seek`, `disk_buffer_seekdone`, `…_sector_done`, `…_request_complete` |
//! | `track.rs` | the LBNs of the track under the head | (layout lookups) |
//! | `fast_forward.rs` | runs of sector boundaries that change nothing, taken at once | (none: the same result, fewer events) |
//! | `host_interface.rs` | the bus: messages, chunks, disconnecting, reconnecting, completion | `disk_reconnection_or_transfer_complete`, `disk_check_bus`, `disk_completion` |
//!
//! Not modelled: several commands queued at the disk, "sneaky" and "almost" read hits, the
//! limited fast-write level as such (with one command at a time it chooses what the full level
//! chooses; `docs/disksim-compat.md`), preseeking, and DiskSim's "keep request data" read-ahead
//! variants (a read-ahead of 0 sectors with a read-ahead mode means the segment size).

mod arrival;
mod fast_forward;
mod host_interface;
mod media;
mod read_ahead;
mod segments;
mod settings;
mod track;
mod write_back;

use crate::disk::{Disk, HeadState, Op};
use crate::error::AccessError;
use host_interface::{Bus, Chunk, SegOut};
use media::Hda;
use segments::{Hit, Seg, St};
use settings::Params;
use track::Track;

/// No LBN (unmapped sector).
const NONE: u64 = u64::MAX;

/// Most events (sector boundaries, seeks, bus messages) serving one request may take, and
/// separately the background work before it. A request's own events are bounded by its sectors,
/// the segment size and a few revolutions per track; runs of the validation drives take at most
/// thousands. Fifty million means a livelock, not a long request.
const EVENT_LIMIT: u64 = 50_000_000;

/// Who holds the mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// The request being served.
    Req,
    /// Read-ahead left over from a completed read.
    Prefetch,
    /// Write-back of a completed write.
    Destage,
}

/// The request being served.
#[derive(Debug, Clone)]
struct Req {
    read: bool,
    lbn: u64,
    end: u64,
    n: u64,
    seg: Option<usize>,
    hit: Hit,
    watermark: u64,
    overhead_done: u64,
    overhead: u64,
    /// DiskSim `EXTRA_WRITE_DISCONNECT`.
    extra: bool,
    /// Still owes the extra disconnect's reconnection.
    extradisc: bool,
    /// Holds the mechanism.
    hda: bool,
    /// Waits for the mechanism.
    waiting: bool,
    outblkno: u64,
    chunk: u64,
    seg_out: SegOut,
    bus: Bus,
    completion_sent: bool,
    media_done: bool,
    done: Option<u64>,
    seek: u64,
    latency: u64,
    media_start: Option<u64>,
    media_end: Option<u64>,
}

impl Req {
    /// A request arriving (its overheads starting) at `t0`, nothing done yet.
    fn new(read: bool, lbn: u64, n: u64, t0: u64) -> Self {
        Self {
            read,
            lbn,
            end: lbn + n,
            n,
            seg: None,
            hit: Hit::NoMatch,
            watermark: 1,
            overhead_done: t0,
            overhead: 0,
            extra: false,
            extradisc: false,
            hda: false,
            waiting: false,
            outblkno: lbn,
            chunk: 0,
            seg_out: SegOut::Idle,
            bus: Bus::Idle,
            completion_sent: false,
            media_done: false,
            done: None,
            seek: 0,
            latency: 0,
            media_start: None,
            media_end: None,
        }
    }

    /// The chunk the bus is moving, at `bt` ps a sector.
    fn chunk_under_way(&self, bt: u64) -> Option<Chunk> {
        match self.bus {
            Bus::Xfer { start, count, .. } => Some(Chunk { start, count, bt }),
            _ => None,
        }
    }
}

/// What serving one request did, for the drive's report.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outcome {
    pub end_ps: u64,
    pub overhead_ps: u64,
    pub seek_ps: u64,
    pub latency_ps: u64,
    pub media: Option<(u64, u64)>,
    pub hit: bool,
}

/// The buffer's state between requests.
#[derive(Debug, Clone)]
pub(crate) struct Buffer {
    p: Params,
    segs: Vec<Seg>,
    /// Segment indices, least recently used first.
    lru: Vec<usize>,
    numdirty: u32,
    last_read: bool,
    /// A stopped seek ends here (DiskSim `disk_seek_stoptime`).
    seek_stop: u64,
    head: HeadState,
    hda: Option<Hda>,
    req: Option<Req>,
    /// The track looked up last: a request's read-ahead limit and its seek are usually on the
    /// same track, and a track's LBNs cost several mapping lookups.
    last_track: Track,
    /// [`EVENT_LIMIT`], lowered by tests to trip the guard.
    event_limit: u64,
    /// The last "dec" read-ahead lookup, `(end, first, next)`: the LBN span of the track holding
    /// LBN `end`. A read asks for it twice (segment taken, access started).
    dec_track: Option<(u64, u64, u64)>,
    /// Take runs of sector boundaries at once (`fast_forward`); tests turn it off to check that
    /// doing so changes no result.
    fast_forward: bool,
}

impl Buffer {
    pub(crate) fn new(disk: &Disk) -> Self {
        let p = Params::new(disk);
        let k = &disk.spec().cache;
        let n = k.segments.max(1) as usize;
        let segs = (0..n)
            .map(|i| Seg {
                write_seg: k.separate_write_segment && i + 1 == n,
                state: St::Empty,
                start: 0,
                end: 0,
                min_ra: 0,
                max_ra: 0,
                access_read: None,
                appended: Vec::new(),
            })
            .collect();
        Self { p, segs, lru: (0..n).collect(), numdirty: 0, last_read: false, seek_stop: 0, head: HeadState::default(), hda: None, req: None, last_track: Track::default(), event_limit: EVENT_LIMIT, dec_track: None, fast_forward: true }
    }

    pub(crate) fn head(&self) -> HeadState {
        self.head
    }

    pub(crate) fn set_head(&mut self, head: HeadState) {
        self.head = head;
    }

    /// Serves one request arriving at `start_ps`; the drive is otherwise idle (background work
    /// aside). Returns when the completion reaches the host.
    ///
    /// # Errors
    /// [`AccessError::ModelFault`] when the model stalls or runs away (see [`EVENT_LIMIT`]); the
    /// buffer's state is then that of the fault.
    pub(crate) fn serve(&mut self, disk: &Disk, start_ps: u64, lbn: u64, n: u64, op: Op) -> Result<Outcome, AccessError> {
        let t0 = start_ps + self.p.per_request;
        let fault = |reason: String| AccessError::ModelFault { lbn, sectors: n, op, start_ns: start_ps / 1000, reason };
        self.advance(disk, t0).map_err(&fault)?;
        let read = op.is_read();
        self.req = Some(Req::new(read, lbn, n, t0));
        if read {
            self.read_arrive(disk, t0);
        } else {
            self.write_arrive(disk, t0);
        }
        let run = self.run_request(disk);
        let r = self.req.take().expect("request");
        run.map_err(fault)?;
        Ok(Outcome {
            end_ps: r.done.unwrap_or(t0),
            overhead_ps: r.overhead,
            seek_ps: r.seek,
            latency_ps: r.latency,
            media: r.media_start.zip(r.media_end),
            hit: r.read && matches!(r.hit, Hit::Whole | Hit::Partial),
        })
    }

    /// Takes the mechanism's and the bus's events in time order until the request is done.
    /// A consistent model always has a next event while the request is unfinished, and finishes
    /// within [`EVENT_LIMIT`] events; anything else is reported, with the simulated time, so a
    /// broken model gives an error instead of a wrong time.
    fn run_request(&mut self, disk: &Disk) -> Result<(), String> {
        let mut events = 0u64;
        loop {
            let r = self.req.as_ref().expect("request");
            if r.done.is_some() {
                return Ok(());
            }
            let th = self.hda.as_ref().and_then(|h| h.next_time());
            let tb = match r.bus {
                Bus::Msg { at, .. } => Some(at),
                Bus::Xfer { end, .. } => Some(end),
                Bus::Idle | Bus::Outwait => None,
            };
            match (th, tb) {
                (Some(a), Some(b)) if a <= b => self.hda_event(disk, a, b),
                (Some(a), None) => self.hda_event(disk, a, u64::MAX),
                (_, Some(b)) => self.bus_event(disk, b),
                (None, None) => {
                    return Err(format!(
                        "stalled: the request is unfinished (bus {:?}, holds mechanism {}, waits for it {}) and neither the mechanism nor the bus has an event left (last seek ended at {} ns)",
                        r.bus,
                        r.hda,
                        r.waiting,
                        self.seek_stop / 1000
                    ));
                }
            }
            events += 1;
            if events > self.event_limit {
                return Err(format!("runs away: over {} events without completing, at simulated {} ns", self.event_limit, self.now_ns()));
            }
        }
    }

    /// The time of the mechanism's next event, or of the last seek's end, ns: where the model is.
    fn now_ns(&self) -> u64 {
        self.hda.as_ref().and_then(|h| h.next_time()).unwrap_or(self.seek_stop) / 1000
    }

    /// Runs background media work (read-ahead, write-back) up to `t`.
    fn advance(&mut self, disk: &Disk, t: u64) -> Result<(), String> {
        let mut events = 0u64;
        while let Some(at) = self.hda.as_ref().and_then(|h| h.next_time()) {
            if at >= t {
                break;
            }
            self.hda_event(disk, at, t);
            events += 1;
            if events > self.event_limit {
                return Err(format!(
                    "background work before the request runs away: over {} events, at simulated {} ns, to reach {} ns",
                    self.event_limit,
                    self.now_ns(),
                    t / 1000
                ));
            }
        }
        Ok(())
    }

    fn req(&self) -> &Req {
        self.req.as_ref().expect("request")
    }

    fn req_mut(&mut self) -> &mut Req {
        self.req.as_mut().expect("request")
    }

    fn bg_owner(&self) -> Option<(Owner, usize)> {
        self.hda.as_ref().map(|h| (h.owner, h.seg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library;

    pub(super) fn cached(name: &str) -> Disk {
        let mut spec = library::get(name).unwrap();
        spec.cache.enabled = true;
        Disk::new(spec).unwrap()
    }

    fn fault_reason(e: AccessError) -> (u64, u64, Op, String) {
        match e {
            AccessError::ModelFault { lbn, sectors, op, reason, .. } => (lbn, sectors, op, reason),
            other => panic!("not a model fault: {other}"),
        }
    }

    #[test]
    fn a_request_past_the_event_limit_is_an_error_naming_it() {
        let disk = cached("atlas10k");
        let mut b = Buffer::new(&disk);
        // A 64-sector read miss takes a seek and dozens of sector boundaries: well over 3 events.
        b.event_limit = 3;
        let e = b.serve(&disk, 5_000_000_000, 123_456, 64, Op::Read).unwrap_err();
        let message = e.to_string();
        let (lbn, sectors, op, reason) = fault_reason(e);
        assert_eq!((lbn, sectors, op), (123_456, 64, Op::Read));
        assert!(reason.starts_with("runs away: over 3 events"), "{reason}");
        assert!(message.contains("LBN 123456") && message.contains("5000000 ns"), "{message}");
        // With the real limit, the same request completes.
        let mut b = Buffer::new(&disk);
        assert!(b.serve(&disk, 5_000_000_000, 123_456, 64, Op::Read).is_ok());
    }

    #[test]
    fn background_work_past_the_event_limit_is_an_error_naming_the_next_request() {
        let disk = cached("atlas10k");
        let mut b = Buffer::new(&disk);
        // A read leaves read-ahead going after its completion; a write long afterwards must first
        // run that read-ahead to its end.
        b.serve(&disk, 0, 1_000, 8, Op::Read).unwrap();
        assert!(b.hda.is_some(), "the read left no background work");
        b.event_limit = 0;
        let e = b.serve(&disk, 1_000_000_000_000, 500_000, 8, Op::Write).unwrap_err();
        let (lbn, sectors, op, reason) = fault_reason(e);
        assert_eq!((lbn, sectors, op), (500_000, 8, Op::Write));
        assert!(reason.starts_with("background work before the request runs away"), "{reason}");
    }

    #[test]
    fn an_unfinished_request_with_no_event_left_is_a_stall_error() {
        let disk = cached("atlas10k");
        let mut b = Buffer::new(&disk);
        // The state the guard is for: a request neither done nor waiting on the mechanism (idle)
        // or on the bus (idle).
        b.req = Some(Req::new(true, 42, 8, 1_000));
        assert!(b.hda.is_none());
        let reason = b.run_request(&disk).unwrap_err();
        assert!(reason.starts_with("stalled: the request is unfinished (bus Idle"), "{reason}");
    }

    /// A small drive with the buffer settings that make the head wait on the bus: two 8-sector
    /// segments, a bus five times slower than the media, zero-latency access, a slipped sector
    /// and spares (tracks whose LBNs are not one run). The fuzz finding `timeout-ece24bcf…`.
    pub(super) const SLOW_BUS_DISK: &str = r#"
name = "slow-bus"
rpm = 10025.0
surfaces = 4
head_switch_ms = 0.176
write_settle_ms = 0.1
sparing = { scheme = "sectors_per_cylinder" }
[[zones]]
first_cylinder = 0
last_cylinder = 31
sectors_per_track = 64
cylinder_skew = 20.0
slips = [3]
[[zones]]
first_cylinder = 32
last_cylinder = 65
sectors_per_track = 17
track_skew = 10.0
cylinder_skew = 20.0
empty_front_sectors = 64
[[zones]]
first_cylinder = 66
last_cylinder = 97
sectors_per_track = 333
track_skew = 63.5
cylinder_skew = 113.0
spares = 4
[seek]
type = "table"
points = [[1.0, 0.8], [4.0, 1.3], [40.0, 2.3]]
[controller]
read_miss_ms = 0.1
write_miss_ms = 0.3
bus_sector_ms = 0.1
write_back = false
[cache]
enabled = true
segments = 2
segment_sectors = 8
read_ahead_sectors = 64
read_ahead = "dec"
zero_latency_reads = true
zero_latency_writes = true
separate_write_segment = true
read_ahead_on_hit = true
"#;

    /// Serves the same pseudo-random request stream (random and sequential, small and large,
    /// reads and writes, back to back and spaced out) with the fast-forwards on and off, and
    /// requires the same outcome for every request.
    pub(super) fn fast_forward_changes_nothing(disk: &Disk, requests: usize, max_sectors: u64, seed: u64) {
        let mut fast = Buffer::new(disk);
        let mut slow = Buffer::new(disk);
        slow.fast_forward = false;
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        let capacity = disk.capacity();
        let (mut t, mut lbn) = (0u64, 0u64);
        for k in 0..requests {
            let n = if next() % 8 == 0 { 1 + next() % max_sectors } else { 1 + next() % 16 };
            if next() % 3 != 0 {
                lbn = next() % capacity;
            }
            let n = n.min(capacity - lbn).max(1);
            let lbn_now = lbn.min(capacity - n);
            let op = if next() % 2 == 0 { Op::Read } else { Op::Write };
            let a = fast.serve(disk, t, lbn_now, n, op).unwrap();
            let b = slow.serve(disk, t, lbn_now, n, op).unwrap();
            let key = |o: &Outcome| (o.end_ps, o.overhead_ps, o.seek_ps, o.latency_ps, o.media, o.hit);
            assert_eq!(key(&a), key(&b), "{}: request {k} ({op:?} LBN {lbn_now} + {n} at {t} ps)", disk.spec().name);
            lbn = lbn_now + n;
            if lbn >= capacity {
                lbn = 0;
            }
            t = a.end_ps + [0, 0, 50_000, 1_000_000_000, 20_000_000_000][(next() % 5) as usize];
        }
    }
}
