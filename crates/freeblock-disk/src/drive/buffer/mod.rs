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
//! Sequential writes combined into a segment being written back (`Combine seq writes`,
//! [`crate::CacheSpec::combine_sequential_writes`]) are taken at once, as DiskSim 4.0 takes them:
//! the write-back under way goes on through the appended data, and each appended write, once
//! complete, keeps a media pass of its own that writes its data again (DiskSim leaves the
//! appended request in its queue, and serves it when the mechanism frees). Those passes run in
//! arrival order before any later request gets the mechanism.
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
//! Not modelled: several commands queued at the disk, "sneaky" and "almost" read hits, the
//! limited fast-write level as such (with one command at a time it chooses what the full level
//! chooses; `docs/disksim-compat.md`), preseeking, and DiskSim's "keep request data" read-ahead
//! variants (a read-ahead of 0 sectors with a read-ahead mode means the segment size).

use crate::disk::{Disk, HeadState, Op};
use crate::error::AccessError;
use crate::layout::{Pbn, TrackSummary};
use crate::spec::ReadAhead;

/// No LBN (unmapped sector).
const NONE: u64 = u64::MAX;

/// Most events (sector boundaries, seeks, bus messages) serving one request may take, and
/// separately the background work before it. A request's own events are bounded by its sectors,
/// the segment size and a few revolutions per track; runs of the validation drives take at most
/// thousands. Fifty million means a livelock, not a long request.
const EVENT_LIMIT: u64 = 50_000_000;

fn ms_ps(ms: f64) -> u64 {
    (ms * 1e9).round() as u64
}

/// Timings and switches, from the spec (picoseconds).
#[derive(Debug, Clone)]
pub(crate) struct Params {
    /// `[after a read, after a write]` variants.
    read_hit: [u64; 2],
    read_miss: [u64; 2],
    write_hit: [u64; 2],
    write_miss: [u64; 2],
    read_disc: [u64; 2],
    write_disc: u64,
    per_request: u64,
    read_complete: u64,
    write_complete: u64,
    data_prep: u64,
    reselect: u64,
    reselect_other: u64,
    min_write_seek: u64,
    /// command, first disconnect, inter-disconnect, second disconnect, seek delta.
    extra: Option<[u64; 5]>,
    bt_read: u64,
    bt_write: u64,
    hold_read: bool,
    hold_write: bool,
    write_back: bool,
    seg_size: u64,
    write_segs: u32,
    separate_write_seg: bool,
    ra_mode: ReadAhead,
    max_ra: u64,
    min_ra: u64,
    ra_on_hit: bool,
    read_any_free: bool,
    immed_read: bool,
    immed_write: bool,
    hits_on_write: bool,
    combine_writes: bool,
    keep_read_data: bool,
    skip_unmapped: bool,
    stop_in_sector: bool,
    read_water: f64,
    write_water: f64,
    water_by_req: bool,
    capacity: u64,
    rev: u64,
}

impl Params {
    fn new(disk: &Disk) -> Self {
        let s = disk.spec();
        let c = &s.controller;
        let k = &s.cache;
        let pair = |ar: f64, aw: Option<f64>| [ms_ps(ar), ms_ps(aw.unwrap_or(ar))];
        Self {
            read_hit: pair(c.read_hit_ms, c.read_hit_after_write_ms),
            read_miss: pair(c.read_miss_ms, c.read_miss_after_write_ms),
            write_hit: pair(c.write_hit_ms, c.write_hit_after_write_ms),
            write_miss: pair(c.write_miss_ms, c.write_miss_after_write_ms),
            read_disc: pair(c.read_disconnect_ms, c.read_disconnect_after_write_ms),
            write_disc: ms_ps(c.write_disconnect_ms),
            per_request: ms_ps(c.per_request_ms),
            read_complete: ms_ps(c.read_complete_ms),
            write_complete: ms_ps(c.write_complete_ms),
            data_prep: ms_ps(c.data_prep_ms),
            reselect: ms_ps(c.reselect_ms),
            reselect_other: ms_ps(c.reselect_other_ms),
            min_write_seek: ms_ps(c.min_write_seek_ms),
            extra: c.extra_write_disconnect.as_ref().map(|x| {
                [ms_ps(x.command_ms), ms_ps(x.disconnect_ms), ms_ps(x.inter_disconnect_ms), ms_ps(x.second_disconnect_ms), ms_ps(x.seek_delta_ms)]
            }),
            bt_read: ms_ps(c.bus_sector_ms),
            bt_write: ms_ps(c.bus_write_sector_ms.unwrap_or(c.bus_sector_ms)),
            hold_read: c.hold_bus_read,
            hold_write: c.hold_bus_write,
            write_back: c.write_back,
            seg_size: u64::from(k.segment_sectors),
            write_segs: k.write_segments,
            separate_write_seg: k.separate_write_segment,
            ra_mode: k.read_ahead,
            max_ra: u64::from(k.read_ahead_sectors),
            min_ra: if k.read_ahead == ReadAhead::None { 0 } else { u64::from(k.min_read_ahead_sectors) },
            ra_on_hit: k.read_ahead_on_hit,
            read_any_free: k.read_any_free_blocks,
            immed_read: k.zero_latency_reads,
            immed_write: k.zero_latency_writes,
            hits_on_write: k.read_hits_on_write_data,
            combine_writes: k.combine_sequential_writes,
            keep_read_data: k.keep_read_data,
            skip_unmapped: k.skip_unmapped_sectors,
            stop_in_sector: k.stop_read_ahead_mid_sector,
            read_water: k.read_watermark,
            write_water: k.write_watermark,
            water_by_req: k.watermark_of_request,
            capacity: disk.capacity(),
            rev: disk.revolution_ps(),
        }
    }

    /// The after-read or after-write variant.
    fn pick(v: [u64; 2], last_read: bool) -> u64 {
        if last_read {
            v[0]
        } else {
            v[1]
        }
    }
}

/// State of a buffer segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Empty,
    Clean,
    Reading,
    Writing,
    Dirty,
}

#[derive(Debug, Clone)]
struct Seg {
    /// The dedicated write segment.
    write_seg: bool,
    state: St,
    /// Valid data: LBNs `start..end`.
    start: u64,
    end: u64,
    /// Read-ahead limits (LBN one past the end).
    min_ra: u64,
    max_ra: u64,
    /// Kind of the last access through the segment (`None`: never used).
    access_read: Option<bool>,
    /// Completed writes appended to the segment while it was being written back, `(lbn, end)`,
    /// oldest first: each still has its own media pass to make (see the module notes).
    appended: Vec<(u64, u64)>,
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

#[derive(Debug, Clone)]
enum Phase {
    /// Seeking; done at `at`, to the track of LBN `target`, which is at `pbn` (looked up once,
    /// when the seek starts).
    Seek { at: u64, target: u64, pbn: Pbn },
    /// Passing sectors: boundary `i` (at `base + i·rev/spt`) ends sector `prev` (processed if its
    /// flag says so) and starts sector `next`.
    Rot { base: u64, i: u64, prev: Option<(u32, bool)>, next: u32 },
    /// No media activity, mechanism still held by the request.
    Idle,
}

/// The LBNs of one track.
#[derive(Debug, Clone, Default)]
struct Track {
    cyl: u32,
    surf: u32,
    spt: u32,
    /// LBN of sector 0 when every sector holds consecutive LBNs (`lbns` empty).
    base: u64,
    /// Per-sector LBN (`NONE` if unmapped), when not consecutive.
    lbns: Vec<u64>,
    first: u64,
    next: u64,
    /// Rotational position of sector 0's start, ps.
    pos0: u64,
    valid: bool,
    /// Sector `s` holds LBN `base + s` for every sector (checked with
    /// `Layout::track_first_lbn`), so an LBN in `first..next` is found without a lookup.
    one_run: bool,
    /// A track whose LBNs are one run in consecutive sectors but fill only part of it: the
    /// sectors of its last and first LBN (for `CacheSpec::skip_unmapped_sectors`).
    short: Option<(u32, u32)>,
    /// Some sectors hold no LBN (spares, slips), and the track is short or none of the disk's
    /// LBNs is remapped elsewhere: with `skip_unmapped_sectors`, a mapped sector is followed by
    /// the next mapped one (on a short track, the first LBN's sector follows the last one's).
    gaps: bool,
    /// The revolution (ps) as `rev_whole·spt + rev_rest`, for [`Track::boundary_time`].
    rev_whole: u64,
    rev_rest: u64,
}

impl Track {
    fn lbn(&self, s: u32) -> u64 {
        if self.lbns.is_empty() {
            self.base + u64::from(s)
        } else {
            self.lbns[s as usize]
        }
    }

    /// Whether some sector of the track holds `lbn`.
    fn holds(&self, lbn: u64) -> bool {
        if self.lbns.is_empty() {
            lbn >= self.first && lbn < self.next
        } else {
            self.lbns.contains(&lbn)
        }
    }

    /// `base + ⌊i·rev/spt⌋`, the time of sector boundary `i` of a pass that starts at `base`.
    /// Written as `base + i·rev_whole + ⌊i·rev_rest/spt⌋`, the same number, so the division is of
    /// a small product: the mechanism asks for it at every event.
    fn boundary_time(&self, base: u64, i: u64) -> u64 {
        base + i * self.rev_whole + i * self.rev_rest / u64::from(self.spt)
    }

    /// Rotational position of sector `s`'s start.
    fn pos(&self, s: u64, rev: u64) -> u64 {
        (self.pos0 + s * rev / u64::from(self.spt)) % rev
    }

    fn is(&self, cyl: u32, surf: u32) -> bool {
        self.valid && self.cyl == cyl && self.surf == surf
    }

    /// The sector after `s` in the sector-by-sector media process. With `skip_unmapped`, DiskSim's
    /// (it steps through the track's LBNs, one sector time each): from a mapped sector, the next
    /// mapped one, at once.
    fn after(&self, s: u32, skip_unmapped: bool) -> u32 {
        let mut n = (s + 1) % self.spt;
        if skip_unmapped && self.gaps && self.lbns[s as usize] != NONE {
            while self.lbns[n as usize] == NONE {
                n = (n + 1) % self.spt;
            }
        }
        n
    }

    fn load(&mut self, disk: &Disk, cyl: u32, surf: u32) {
        if self.is(cyl, surf) {
            return;
        }
        self.fill(disk, cyl, surf, disk.layout().track_summary(cyl, surf));
    }

    /// Loads the track holding `lbn` (an LBN of the disk) and returns the sector holding it.
    fn load_lbn(&mut self, disk: &Disk, lbn: u64) -> Pbn {
        if self.valid && self.one_run && (self.first..self.next).contains(&lbn) {
            return Pbn { cylinder: self.cyl, surface: self.surf, sector: (lbn - self.base) as u32 };
        }
        let (pbn, summary) = disk.layout().lbn_track(lbn).expect("in range");
        if !self.is(pbn.cylinder, pbn.surface) {
            self.fill(disk, pbn.cylinder, pbn.surface, summary);
        }
        pbn
    }

    /// Loads track `(cyl, surf)`, whose [`crate::Layout::track_summary`] is `summary`.
    fn fill(&mut self, disk: &Disk, cyl: u32, surf: u32, summary: TrackSummary) {
        let layout = disk.layout();
        let TrackSummary { sectors_per_track: spt, sector0_pos: pos0, first_lbn } = summary;
        let rev = disk.revolution_ps();
        self.rev_whole = rev.checked_div(u64::from(spt)).unwrap_or(0);
        self.rev_rest = rev.checked_rem(u64::from(spt)).unwrap_or(0);
        self.cyl = cyl;
        self.surf = surf;
        self.spt = spt;
        self.valid = true;
        self.one_run = false;
        self.short = None;
        self.gaps = false;
        self.pos0 = pos0;
        self.lbns.clear();
        if let Some(a) = first_lbn {
            self.one_run = true;
            self.base = a;
            self.first = a;
            self.next = a + u64::from(spt);
            return;
        }
        let at = |s: u32| layout.pbn_to_lbn(Pbn { cylinder: cyl, surface: surf, sector: s });
        // First and last sectors a run apart say nothing of a defective sector between them,
        // whose LBN is on its spare: with remapped defects, look at every sector.
        if let (Some(a), Some(b), false) = (at(0), at(spt - 1), layout.has_remapped_defects()) {
            if b >= a && b - a == u64::from(spt - 1) {
                self.base = a;
                self.first = a;
                self.next = b + 1;
                return;
            }
        }
        let (mut first, mut last) = (NONE, 0);
        for s in 0..spt {
            let l = at(s).unwrap_or(NONE);
            if l != NONE {
                first = first.min(l);
                last = last.max(l);
            }
            self.lbns.push(l);
        }
        self.first = first;
        self.next = if first == NONE { NONE } else { last + 1 };
        if first != NONE {
            let s0 = self.lbns.iter().position(|&l| l == first).expect("first LBN") as u32;
            let n = last + 1 - first;
            let run = (0..n).all(|k| {
                let s = s0 as u64 + k;
                s < u64::from(spt) && self.lbns[s as usize] == first + k
            });
            let mapped = self.lbns.iter().filter(|&&l| l != NONE).count() as u64;
            if run && mapped == n && n < u64::from(spt) {
                self.short = Some(((u64::from(s0) + n - 1) as u32, s0));
            }
            self.gaps = mapped < u64::from(spt) && (self.short.is_some() || !layout.has_remapped_defects());
        }
    }
}

/// The mechanism's current access.
#[derive(Debug, Clone)]
struct Hda {
    owner: Owner,
    seg: usize,
    read: bool,
    /// Past the request's own data (read-ahead, or write-back after completion).
    bg: bool,
    /// Zero-latency access.
    immed: bool,
    req_start: u64,
    req_end: u64,
    req_len: u64,
    /// Writes: next LBN to put on the media.
    inblkno: u64,
    phase: Phase,
    track: Track,
    immedstart: u64,
    immedend: u64,
    last_seek: u64,
}

impl Hda {
    fn next_time(&self) -> Option<u64> {
        match &self.phase {
            Phase::Seek { at, .. } => Some(*at),
            Phase::Rot { base, i, .. } => Some(self.track.boundary_time(*base, *i)),
            Phase::Idle => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hit {
    NoMatch,
    Whole,
    Partial,
    Collision,
    /// A write that continues the data of a segment being written back.
    Append,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Msg {
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
enum Bus {
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
enum SegOut {
    Idle,
    Contacting,
    Transfering,
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

/// A chunk of sectors moving over the bus, one every `bt` ps from `start`.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    start: u64,
    count: u64,
    bt: u64,
}

impl Chunk {
    /// Sectors moved by `t`.
    fn moved(self, t: u64) -> u64 {
        t.saturating_sub(self.start).checked_div(self.bt).map_or(self.count, |k| k.min(self.count))
    }

    /// The first instant by which `n` sectors have moved; None if the chunk is smaller.
    fn time_moved(self, n: u64) -> Option<u64> {
        (n <= self.count).then(|| self.start.saturating_add(n.saturating_mul(self.bt)))
    }
}

/// Sector boundaries that may be taken at once: from boundary `i` (at `base + ⌊i·rev/spt⌋`,
/// ending sector `s` of a track of `spt`), at most `by_time` of them (the next event elsewhere),
/// while the bus moves `chunk` (if any).
#[derive(Debug, Clone, Copy)]
struct IdleRun {
    base: u64,
    i: u64,
    s: u32,
    spt: u64,
    rev: u64,
    by_time: u64,
    chunk: Option<Chunk>,
}

/// How many boundaries of `run` pass sectors that change nothing, before the first sector the
/// head acts on. `needed(x)` says when sector `x` would be acted on: None never (while the run
/// lasts), `Some(n)` once the bus has moved `n` sectors of the chunk (0: now). A sector is judged
/// at the boundary where it starts, as `Buffer::boundary` judges it. The boundaries are walked in
/// time order; after a revolution with nothing to act on, the walk jumps to the instant the bus
/// has moved what the least demanding sector needs, and that sector comes round within the next
/// revolution. So a head waiting many revolutions for a slow bus costs at most two revolutions of
/// this walk instead of a step per sector passed. With nothing to act on at all, at most a
/// revolution is taken. None when fewer than two boundaries would be taken.
fn idle_run(run: IdleRun, needed: impl Fn(u32) -> Option<u64>) -> Option<u64> {
    let IdleRun { base, i, s, spt, rev, by_time, chunk } = run;
    let span = |m: u64| (m >= 2).then_some(m);
    // Boundary j = i + k − 1 starts sector s + k, at base + q, q = ⌊j·rev/spt⌋ (remainder r).
    let at_boundary = |j: u64| {
        let p = u128::from(j) * u128::from(rev);
        ((p / u128::from(spt)) as u64, (p % u128::from(spt)) as u64)
    };
    let (step_q, step_r) = (rev / spt, rev % spt);
    let mut k = 1u64;
    let (mut q, mut r) = at_boundary(i);
    let mut x = (u64::from(s) + 1) % spt;
    let mut moved = 0;
    let mut next_move = chunk.and_then(|c| c.time_moved(1));
    let mut least_need = u64::MAX;
    let mut jumped = false;
    let mut walked = 0u64;
    loop {
        if k > by_time {
            return span(by_time);
        }
        let t = base + q;
        if let (Some(c), Some(at)) = (chunk, next_move) {
            if t >= at {
                moved = c.moved(t);
                next_move = c.time_moved(moved + 1);
            }
        }
        if let Some(n) = needed(x as u32) {
            if n <= moved {
                return span(k);
            }
            least_need = least_need.min(n);
        }
        walked += 1;
        if walked == spt {
            // A revolution with nothing to act on: nothing will be until the bus has moved
            // `least_need` sectors, and then that sector comes round within a revolution.
            let Some(at) = chunk.and_then(|c| c.time_moved(least_need)).filter(|_| !jumped) else {
                return span(k.min(by_time));
            };
            jumped = true;
            walked = 0;
            let j_now = i + k - 1;
            // ⌊j·rev/spt⌋ ≥ at − base ⟺ j ≥ ⌈(at − base)·spt/rev⌉.
            let j_at = (u128::from(at.saturating_sub(base)) * u128::from(spt)).div_ceil(u128::from(rev));
            let j = u128::from(j_now + 1).max(j_at).min(u128::from(i.saturating_add(by_time))) as u64;
            k = j - i + 1;
            (q, r) = at_boundary(j);
            x = (u64::from(s) + k) % spt;
            continue;
        }
        k += 1;
        q += step_q;
        r += step_r;
        if r >= spt {
            r -= spt;
            q += 1;
        }
        x = if x + 1 == spt { 0 } else { x + 1 };
    }
}

/// [`idle_run`] for a write on a track whose sector `x` holds LBN `first_lbn + x`, in closed
/// form: the head may write now the LBNs `writable` (from the next to write to the segment's
/// data end), one run of sectors; the sectors past it become writable as the request's data
/// arrives over the bus (`outblkno`: the LBN the chunk under way starts at). When the bus is no
/// faster than the media (a sector's data takes at least a sector's time), a sector of that second
/// run that is not writable when the head reaches it has every later one of the run unwritable
/// too on that revolution, so only the run's first sector need be checked, once on the first
/// revolution and then at its first pass after its data is in. None (walk instead) when the bus
/// is faster.
#[allow(clippy::option_option)]
fn contiguous_write_wait(run: IdleRun, first_lbn: u64, writable: (u64, u64), outblkno: Option<u64>) -> Option<Option<u64>> {
    let IdleRun { base, i, s, spt, rev, by_time, chunk } = run;
    let x1 = (u64::from(s) + 1) % spt;
    // k of the first boundary that starts sector x (the walk's k).
    let first_visit = |x: u64| (x + spt - x1) % spt + 1;
    let sector = |lbn: u64| lbn.saturating_sub(first_lbn).min(spt);
    let (lo, hi) = writable;
    let (xa, xb) = (sector(lo), sector(hi.max(lo)));
    let mut best = (xa < xb).then(|| if (xa..xb).contains(&x1) { 1 } else { first_visit(xa) });
    if let (Some(c), Some(outblkno)) = (chunk, outblkno) {
        if rev.div_ceil(spt) > c.bt {
            return None;
        }
        if xb < spt {
            let need = |x: u64| (first_lbn + x + 1).saturating_sub(outblkno);
            let y = x1.max(xb);
            let ky = first_visit(y);
            let t_y = base + (i + ky - 1) * rev / spt;
            let k = if c.moved(t_y) >= need(y) {
                Some(ky)
            } else {
                let j0 = if y == xb { i + ky - 1 + spt } else { i + first_visit(xb) - 1 };
                c.time_moved(need(xb)).map(|at| first_pass(base, rev, spt, j0, at).saturating_sub(i).saturating_add(1))
            };
            if let Some(k) = k {
                best = Some(best.map_or(k, |b| b.min(k)));
            }
        }
    }
    let m = best.unwrap_or(spt).min(by_time);
    Some((m >= 2).then_some(m))
}

/// [`idle_run`] with no bus to wait for, on a track whose sector `x` holds LBN `first_lbn + x`,
/// when whether the head acts on a sector (`acts(x)`) changes only at the LBNs `thresholds`
/// (each rule compares the LBN with one of them): the track falls into runs of sectors between
/// thresholds, `acts` is asked once per run, and the first sector of an acting run to come under
/// the head ends the wait.
fn first_kept_piece<const N: usize>(run: IdleRun, first_lbn: u64, thresholds: [u64; N], acts: impl Fn(u32) -> bool) -> Option<u64> {
    let IdleRun { s, spt, by_time, .. } = run;
    let x1 = (u64::from(s) + 1) % spt;
    let mut cuts = [0u64; N];
    for (cut, lbn) in cuts.iter_mut().zip(thresholds) {
        *cut = lbn.saturating_sub(first_lbn).min(spt);
    }
    cuts.sort_unstable();
    let mut best: Option<u64> = None;
    let mut from = 0;
    for to in cuts.into_iter().chain([spt]) {
        if to > from && acts(from as u32) {
            let k = if (from..to).contains(&x1) { 1 } else { (from + spt - x1) % spt + 1 };
            best = Some(best.map_or(k, |b| b.min(k)));
        }
        from = from.max(to);
    }
    let m = best.unwrap_or(spt).min(by_time);
    (m >= 2).then_some(m)
}

/// The last boundary `j` (at `base + ⌊j·rev/spt⌋`) before `limit`, for `limit > base`: the
/// boundaries `j` with `⌊j·rev/spt⌋ < limit − base` are those below `⌈(limit − base)·spt/rev⌉`.
/// In `u64` when the product fits (always, for real drives and runs), as `u128` division is a
/// library call.
fn last_boundary_before(base: u64, rev: u64, spt: u64, limit: u64) -> u64 {
    let d = limit - base;
    match d.checked_mul(spt) {
        Some(p) => p.div_ceil(rev) - 1,
        None => ((u128::from(d) * u128::from(spt)).div_ceil(u128::from(rev)) - 1).min(u128::from(u64::MAX)) as u64,
    }
}

/// The first boundary `j ≥ j0` with `j ≡ j0 (mod spt)` (the same sector on a later revolution)
/// at or after `at`, boundary `j` being at `base + ⌊j·rev/spt⌋`.
fn first_pass(base: u64, rev: u64, spt: u64, j0: u64, at: u64) -> u64 {
    if at <= base {
        return j0;
    }
    // ⌊j·rev/spt⌋ ≥ at − base ⟺ j ≥ ⌈(at − base)·spt/rev⌉.
    let j_min = (u128::from(at - base) * u128::from(spt)).div_ceil(u128::from(rev));
    let j0 = u128::from(j0);
    let j = if j_min <= j0 { j0 } else { j0 + (j_min - j0).div_ceil(u128::from(spt)) * u128::from(spt) };
    j.min(u128::from(u64::MAX)) as u64
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

    // ----- segments -------------------------------------------------------------------------

    fn req(&self) -> &Req {
        self.req.as_ref().expect("request")
    }

    fn req_mut(&mut self) -> &mut Req {
        self.req.as_mut().expect("request")
    }

    fn bg_owner(&self) -> Option<(Owner, usize)> {
        self.hda.as_ref().map(|h| (h.owner, h.seg))
    }

    /// A pure read-ahead may be stopped (DiskSim `disk_buffer_stopable_access` for a segment
    /// being read).
    fn prefetch_stopable(&mut self) -> bool {
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

    fn select_read_segment(&mut self) -> (Option<usize>, Hit) {
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

    fn select_write_segment(&mut self) -> (Option<usize>, Hit) {
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

    /// May a write starting at `lbn` be appended to segment `i` (DiskSim `BUFFER_APPEND`)? It
    /// must start where the segment's data ends, with room left in the segment past what the
    /// write-back under way has put on the media.
    fn appendable(&self, i: usize, lbn: u64) -> bool {
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

    /// DiskSim `disk_buffer_set_segment`: most recently used, drop stale clean copies of written
    /// data, set the watermark.
    fn set_segment(&mut self) {
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

    /// DiskSim `disk_buffer_attempt_seg_ownership`.
    fn take_segment(&mut self, disk: &Disk) {
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

    /// Raises the segment's read-ahead limits for a request ending at `end`; returns
    /// [`Self::max_readahead`] (which the update leaves unchanged).
    fn update_readahead(&mut self, disk: &Disk, seg: usize, lbn: u64, end: u64) -> u64 {
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
    fn stop_prefetch(&mut self) {
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

    // ----- arrivals ------------------------------------------------------------------------

    fn read_arrive(&mut self, disk: &Disk, t0: u64) {
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

    fn write_arrive(&mut self, disk: &Disk, t0: u64) {
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

    fn new_access(&self, seg: usize, read: bool, bg: bool, lbn: u64, end: u64, n: u64) -> Hda {
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

    // ----- the mechanism ---------------------------------------------------------------------

    /// DiskSim `disk_initiate_seek`. False if read-ahead must stop here instead.
    fn initiate_seek(&mut self, disk: &Disk, t: u64, target: u64, delay: u64, mintime: u64) -> bool {
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
    fn hda_event(&mut self, disk: &Disk, now: u64, limit: u64) {
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

    /// Takes the coming sector boundaries of a read at once while each of them would only (a)
    /// append the sector just read to the segment, with no threshold reached (request end,
    /// read-ahead end, watermark, zero-latency run, track end, segment room), or (b) let a sector
    /// pass that the read does not keep. Stops before `limit` and whenever the host interface
    /// could be involved, so the result is exactly that of taking the boundaries one by one.
    fn fast_forward(&mut self, limit: u64) {
        let Some(h) = self.hda.as_ref() else { return };
        if !h.read {
            self.fast_forward_write_back(limit);
            self.skip_unwritable_sectors(limit);
            return;
        }
        let Phase::Rot { base, i, prev: Some((s, valid)), .. } = h.phase else { return };
        // The boundary just taken may itself have set the host interface going. While a read's
        // data moves over the bus, a boundary depends on the bus only through how much room the
        // transfer has freed in the segment (`block_available`); the bounds below assume none,
        // which is exact for every sector they let through.
        let (limit, moving) = match self.req.as_ref().map(|r| (r.bus, r.read)) {
            Some((Bus::Outwait, _) | (Bus::Xfer { .. }, false)) => return,
            Some((Bus::Xfer { end, .. }, true)) => (limit.min(end), true),
            Some((Bus::Msg { at, .. }, _)) => (limit.min(at), false),
            Some((Bus::Idle, _)) | None => (limit, false),
        };
        let rev = self.p.rev;
        let spt = u64::from(h.track.spt);
        if h.track.boundary_time(base, i) >= limit {
            return;
        }
        // Boundaries j ≥ i with base + ⌊j·rev/spt⌋ < limit.
        let last_j = last_boundary_before(base, rev, spt, limit);
        let by_time = (last_j - i).saturating_add(1);
        let (outblkno, size_limited, watching) = match (&self.req, h.owner) {
            (Some(r), Owner::Req) => (r.outblkno, !r.completion_sent, (r.seg_out == SegOut::Idle).then_some(r.watermark)),
            _ => (0, false, None),
        };
        let size = self.p.seg_size;
        let seg = &self.segs[h.seg];
        let tr = &h.track;
        let l0 = tr.lbn(s);
        if valid && l0 == seg.end && tr.lbns.is_empty() {
            // (a) A contiguous run: boundary i + k leaves the segment ending at l0 + k + 1.
            let mut emax = tr.next - 1;
            if h.immedstart > l0 {
                emax = emax.min(h.immedstart - 1);
            }
            if h.bg {
                emax = emax.min(seg.max_ra.saturating_sub(1));
            } else {
                emax = emax.min(h.req_end.saturating_sub(1));
                if let Some(wm) = watching {
                    emax = emax.min((outblkno + wm).saturating_sub(1));
                }
            }
            if size_limited {
                emax = emax.min((outblkno + size).saturating_sub(1));
            }
            if emax <= l0 {
                return;
            }
            let m = (emax - l0).min(by_time);
            if m < 2 {
                return;
            }
            let end = l0 + m;
            let h = self.hda.as_mut().expect("access");
            let seg = &mut self.segs[h.seg];
            seg.end = end;
            seg.start = seg.start.max(end.saturating_sub(size));
            let x = s + m as u32;
            h.phase = Phase::Rot { base, i: i + m, prev: Some((x, true)), next: (x + 1) % h.track.spt };
            return;
        }
        // (b) Sectors that pass without effect, up to the first that the read would keep. While
        // the bus empties the segment, a sector refused for want of room is kept once the bus has
        // moved enough of the chunk out, so its first pass after that instant is found instead.
        let first = seg.end;
        let goal = if h.bg { seg.max_ra } else { h.req_end };
        let last = goal.min(tr.next);
        let p_any = self.p.ra_mode != ReadAhead::None;
        let any_free = self.p.read_any_free;
        // `block_available` without the bus: None if the sector is refused whatever the bus does,
        // else how many sectors of the chunk under way must have left the segment first.
        let room_needed = |cur: u64| {
            if cur == NONE || (cur < seg.end && cur >= seg.start) || (cur < seg.start && (!any_free || seg.end != seg.start)) {
                None
            } else if size_limited && cur >= outblkno + size {
                Some(cur - (outblkno + size) + 1)
            } else {
                Some(0)
            }
        };
        let idle = |x: u32, valid: bool| {
            let cur = tr.lbn(x);
            if !valid {
                return true;
            }
            if cur == first || cur < seg.start {
                return false;
            }
            if h.immed && h.immedstart >= tr.next {
                return if cur >= last { !(p_any && cur < h.req_start) } else { cur <= first };
            }
            !((cur == h.immedend && (cur < last || cur < h.req_start)) || (cur > h.immedend && cur < last))
        };
        if !idle(s, valid) {
            return;
        }
        let chunk = self.req.as_ref().and_then(|r| r.chunk_under_way(self.p.bt_read)).filter(|_| moving);
        let kept_after = |x: u32| room_needed(tr.lbn(x)).filter(|_| !idle(x, true));
        let run = IdleRun { base, i, s, spt, rev, by_time, chunk };
        let m = if chunk.is_none() && tr.lbns.is_empty() {
            // Every rule above compares the sector's LBN with one of these.
            let size_end = if size_limited { outblkno + size } else { seg.start };
            let (e, ie) = (seg.end, h.immedend);
            let thresholds = [seg.start, e, e.saturating_add(1), size_end, last, h.req_start, ie, ie.saturating_add(1)];
            let m = first_kept_piece(run, tr.base, thresholds, |x| kept_after(x) == Some(0));
            // Tests check the closed form against the walk it replaces.
            #[cfg(test)]
            assert_eq!(m, idle_run(run, kept_after), "read wait: closed form and walk differ");
            m
        } else {
            idle_run(run, kept_after)
        };
        let Some(m) = m else { return };
        let x = ((u64::from(s) + m) % spt) as u32;
        let moved = chunk.map_or(0, |c| c.moved(base + (i + m - 1) * rev / spt));
        let v = room_needed(tr.lbn(x)).is_some_and(|need| need <= moved);
        let h = self.hda.as_mut().expect("access");
        h.phase = Phase::Rot { base, i: i + m, prev: Some((x, v)), next: ((u64::from(x) + 1) % spt) as u32 };
    }

    /// Takes at once the coming sector boundaries of a write (the request's own, or a
    /// write-back) at which the head passes sectors it may not write: the sector to write next
    /// comes round once a revolution, and on a slow bus its data arrives a sector at a time. The
    /// boundaries taken each change nothing but, when the request's data is arriving into the
    /// segment, how much of it is there, which is brought up to date at the last of them.
    fn skip_unwritable_sectors(&mut self, limit: u64) {
        let Some(h) = self.hda.as_ref() else { return };
        if h.read {
            return;
        }
        let Phase::Rot { base, i, prev: Some((s, false)), .. } = h.phase else { return };
        // Data arriving into this segment over the bus (`update_outbuffer`).
        let (limit, arriving) = match self.req.as_ref() {
            None => (limit, None),
            Some(r) => {
                let feeds = !r.read && (r.hda || (r.hit == Hit::Append && r.seg == Some(h.seg)));
                match r.bus {
                    Bus::Outwait => return,
                    Bus::Xfer { end, .. } if feeds => (limit.min(end), r.chunk_under_way(self.p.bt_write).map(|c| (c, r.outblkno))),
                    Bus::Msg { at, .. } => (limit.min(at), None),
                    Bus::Xfer { .. } | Bus::Idle => (limit, None),
                }
            }
        };
        let seg = &self.segs[h.seg];
        // DiskSim's extra write disconnect asks for a fill level of the segment, whose start moves
        // with its end: left to the step-by-step path while data arrives.
        let fill_rule = h.owner == Owner::Req && self.p.extra.is_some();
        if fill_rule && arriving.is_some() {
            return;
        }
        let fill_ok = !fill_rule || {
            let have = seg.end - seg.start;
            if h.req_len < 45 {
                have >= h.req_len.min(10)
            } else {
                have >= 15
            }
        };
        let rev = self.p.rev;
        let tr = &h.track;
        let spt = u64::from(tr.spt);
        if tr.boundary_time(base, i) >= limit {
            return;
        }
        let last_j = last_boundary_before(base, rev, spt, limit);
        let by_time = (last_j - i).saturating_add(1);
        let inblkno = h.inblkno;
        // `block_available` for a write: None if the sector is never writable meanwhile, else how
        // many sectors of the chunk under way must have arrived first.
        let arrival_needed = |x: u32| {
            let cur = tr.lbn(x);
            if !fill_ok || cur == NONE || cur < inblkno {
                None
            } else if cur < seg.end {
                Some(0)
            } else {
                arriving.map(|(_, outblkno)| (cur + 1).saturating_sub(outblkno))
            }
        };
        let run = IdleRun { base, i, s, spt, rev, by_time, chunk: arriving.map(|(c, _)| c) };
        let closed_form = if tr.lbns.is_empty() {
            let writable = if fill_ok { (inblkno, seg.end) } else { (0, 0) };
            contiguous_write_wait(run, tr.base, writable, arriving.filter(|_| fill_ok).map(|(_, outblkno)| outblkno))
        } else {
            None
        };
        // Tests check the closed form against the walk it replaces.
        #[cfg(test)]
        if let Some(m) = closed_form {
            assert_eq!(m, idle_run(run, arrival_needed), "write wait: closed form and walk differ");
        }
        let Some(m) = closed_form.unwrap_or_else(|| idle_run(run, arrival_needed)) else { return };
        let t_last = base + (i + m - 1) * rev / spt;
        let x = ((u64::from(s) + m) % spt) as u32;
        let cur = tr.lbn(x);
        let seg_id = h.seg;
        self.update_outbuffer(t_last);
        let size = self.p.seg_size;
        let seg = &mut self.segs[seg_id];
        seg.start = seg.start.max(seg.end.saturating_sub(size));
        let v = fill_ok && cur != NONE && cur >= inblkno && cur < seg.end;
        let h = self.hda.as_mut().expect("access");
        h.phase = Phase::Rot { base, i: i + m, prev: Some((x, v)), next: ((u64::from(x) + 1) % spt) as u32 };
    }

    /// Takes the coming sector boundaries of a write-back at once while each of them only writes
    /// the next sector of the segment, with no threshold reached (end of the segment's data,
    /// track end, zero-latency run). Only for a write-back that no request holds and whose
    /// segment takes no data from the host meanwhile, so nothing else can see the steps.
    fn fast_forward_write_back(&mut self, limit: u64) {
        let Some(h) = self.hda.as_ref() else { return };
        if h.owner != Owner::Destage || !h.bg || h.immed || !h.track.lbns.is_empty() {
            return;
        }
        let Phase::Rot { base, i, prev: Some((s, true)), .. } = h.phase else { return };
        let limit = match self.req.as_ref() {
            None => limit,
            // `update_outbuffer` would add the request's arriving data to this segment.
            Some(r) if !r.read && (r.hda || (r.hit == Hit::Append && r.seg == Some(h.seg))) => return,
            Some(r) => match r.bus {
                Bus::Msg { at, .. } => limit.min(at),
                _ => limit,
            },
        };
        let tr = &h.track;
        let w = tr.base + u64::from(s);
        if w != h.inblkno {
            return;
        }
        let rev = self.p.rev;
        let spt = u64::from(tr.spt);
        if tr.boundary_time(base, i) >= limit {
            return;
        }
        // Boundaries j ≥ i with base + ⌊j·rev/spt⌋ < limit.
        let last_j = last_boundary_before(base, rev, spt, limit);
        let by_time = (last_j - i).saturating_add(1);
        // Boundary i + k writes LBN w + k and leaves the next one to write at w + k + 1, which
        // must stay short of the segment's end (write-back done), the track's end (seek) and
        // the zero-latency run's start.
        let seg = &self.segs[h.seg];
        let mut stop = seg.end.min(tr.next);
        if h.immedstart > w {
            stop = stop.min(h.immedstart);
        }
        if stop <= w + 1 {
            return;
        }
        let m = (stop - 1 - w).min(by_time);
        if m < 2 {
            return;
        }
        let size = self.p.seg_size;
        let h = self.hda.as_mut().expect("access");
        let seg = &mut self.segs[h.seg];
        seg.start = seg.start.max(seg.end.saturating_sub(size));
        h.inblkno = w + m;
        let x = s + m as u32;
        h.phase = Phase::Rot { base, i: i + m, prev: Some((x, true)), next: (x + 1) % h.track.spt };
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

    /// Sectors moved over the bus so far in the chunk under way.
    fn moved(&self, t: u64) -> u64 {
        let Some(r) = self.req.as_ref() else { return 0 };
        let bt = if r.read { self.p.bt_read } else { self.p.bt_write };
        r.chunk_under_way(bt).map_or(0, |c| c.moved(t))
    }

    /// DiskSim `disk_buffer_update_outbuffer`: written data that has arrived is in the segment.
    fn update_outbuffer(&mut self, t: u64) {
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
    fn end_access(&mut self, disk: &Disk, t: u64) {
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

    /// The media pass of a completed appended write (DiskSim serves the appended request from its
    /// queue once the write-back before it released the mechanism): it writes from its first
    /// sector to the end of the segment's data, in the background.
    fn start_appended_pass(&mut self, disk: &Disk, t: u64, seg: usize, lbn: u64, end: u64) {
        self.segs[seg].state = St::Writing;
        let mut h = self.new_access(seg, false, true, lbn, end, end - lbn);
        h.owner = Owner::Destage;
        self.hda = Some(h);
        let delay = self.seek_stop.saturating_sub(t);
        if !self.initiate_seek(disk, t, lbn, delay, self.p.min_write_seek) {
            self.end_access(disk, t);
        }
    }

    /// The mechanism is free: start the request waiting for it (DiskSim `disk_check_hda` →
    /// `disk_get_effectivehda`).
    fn hda_free(&mut self, disk: &Disk, t: u64) {
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

    // ----- the host interface ----------------------------------------------------------------

    fn bus_event(&mut self, disk: &Disk, t: u64) {
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

    /// The write's own media progress (its `inblkno`).
    fn owner_inblkno(&self) -> u64 {
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
    fn seg_owner_inblkno(&self) -> u64 {
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
    fn check_bus(&mut self, _disk: &Disk, t: u64) {
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


#[cfg(test)]
mod tests {
    use super::*;
    use crate::library;

    fn cached(name: &str) -> Disk {
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
    const SLOW_BUS_DISK: &str = r#"
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
    fn fast_forward_changes_nothing(disk: &Disk, requests: usize, max_sectors: u64, seed: u64) {
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

    #[test]
    fn fast_forward_matches_sector_by_sector_on_a_slow_bus() {
        let base = crate::DiskSpec::from_toml_str(SLOW_BUS_DISK, "slow-bus.toml").unwrap();
        let mut variants = vec![base.clone()];
        let mut v = base.clone();
        v.controller.write_back = true;
        variants.push(v);
        let mut v = base.clone();
        v.controller.hold_bus_read = true;
        v.controller.hold_bus_write = true;
        v.cache.zero_latency_reads = false;
        v.cache.zero_latency_writes = false;
        variants.push(v);
        // Chunks longer than a revolution: the head meets a sector again while its data arrives.
        let mut v = base.clone();
        v.cache.segment_sectors = 200;
        variants.push(v);
        let mut v = base.clone();
        v.controller.bus_sector_ms = 0.004;
        v.cache.segment_sectors = 32;
        variants.push(v);
        for (k, spec) in variants.into_iter().enumerate() {
            let disk = Disk::new(spec).unwrap();
            for seed in 0..4 {
                fast_forward_changes_nothing(&disk, 200, 400, 17 + 4 * k as u64 + seed);
            }
        }
    }

    /// DiskSim's short-track stepping (`skip_unmapped_sectors`): the last track of a cylinder
    /// of the slow-bus disk's third zone holds 329 LBNs in 333 sectors (4 spares per cylinder).
    /// A write there that outruns its data over the slow bus waits for a missed sector 329
    /// sector times with the option, a revolution without; on a full track the option changes
    /// nothing. Both ways the fast-forwards change nothing.
    #[test]
    fn a_short_track_is_stepped_through_its_lbns_with_skip_unmapped_sectors() {
        let mut base = crate::DiskSpec::from_toml_str(SLOW_BUS_DISK, "slow-bus.toml").unwrap();
        base.cache.zero_latency_writes = false;
        base.cache.segment_sectors = 64;
        let with = |skip: bool| {
            let mut s = base.clone();
            s.cache.skip_unmapped_sectors = skip;
            Disk::new(s).unwrap()
        };
        let (off, on) = (with(false), with(true));
        let mut tr = Track::default();
        tr.load(&off, 66, 3);
        assert_eq!((tr.short, tr.next - tr.first, tr.spt), (Some((328, 0)), 329, 333));
        assert_eq!((tr.after(328, true), tr.after(328, false), tr.after(5, true)), (0, 329, 6));
        tr.load(&off, 66, 0);
        assert_eq!(tr.short, None);
        let sector_ps = off.revolution_ps() / 333;
        let end = |disk: &Disk, surface: u32| {
            let lbn = disk.layout().pbn_to_lbn(Pbn { cylinder: 66, surface, sector: 0 }).unwrap() + 20;
            Buffer::new(disk).serve(disk, 0, lbn, 200, Op::Write).unwrap().end_ps
        };
        assert_eq!(end(&on, 0), end(&off, 0), "a full track");
        let (a, b) = (end(&on, 3), end(&off, 3));
        // Each wait for a missed sector is 4 sector times shorter (ps rounding aside).
        let saved = b.checked_sub(a).expect("shorter with the option");
        let waits = (saved + sector_ps) / (4 * sector_ps);
        assert!(waits >= 1 && saved.abs_diff(waits * off.revolution_ps() * 4 / 333) <= 4 * waits, "saved {saved} ps");
        for disk in [&off, &on] {
            for seed in 0..2 {
                fast_forward_changes_nothing(disk, 200, 400, 91 + seed);
            }
        }
    }

    /// A slipped sector inside a track (zone 0's sector 3, on track 0/0): with
    /// `skip_unmapped_sectors` the mapped sector before it is followed by the one after it, as
    /// DiskSim steps from LBN to LBN (st41601n random #3247); the head still passes an unmapped
    /// sector it starts on one sector at a time; without the option nothing is skipped.
    #[test]
    fn a_slipped_sector_is_stepped_over_with_skip_unmapped_sectors() {
        let disk = Disk::new(crate::DiskSpec::from_toml_str(SLOW_BUS_DISK, "slow-bus.toml").unwrap()).unwrap();
        let mut tr = Track::default();
        tr.load(&disk, 0, 0);
        assert!(tr.gaps && tr.short.is_none());
        assert_eq!((tr.after(2, true), tr.after(2, false), tr.after(3, true), tr.after(63, true)), (4, 3, 4, 0));
        tr.load(&disk, 0, 1);
        assert!(!tr.gaps);
        assert_eq!(tr.after(2, true), 3);
    }

    /// Requests over remapped defects, whose spares are on the same track, on another surface
    /// of the cylinder and many cylinders away: the fast-forwards change nothing, the model
    /// neither stalls nor runs away, and the head goes to the spare and back (a request over
    /// the remapped LBN takes longer than the same request where nothing is remapped).
    #[test]
    fn fast_forward_matches_sector_by_sector_over_remapped_defects() {
        let mut base = crate::DiskSpec::from_toml_str(SLOW_BUS_DISK, "slow-bus.toml").unwrap();
        base.cache.segment_sectors = 64;
        // Without zero latency, so that a spare just before the sector it stands for still costs
        // time (with it, the head takes whichever comes first).
        base.cache.zero_latency_reads = false;
        base.cache.zero_latency_writes = false;
        // Zone 2 (cylinders 66–97, 333 sectors a track, 4 spares at the end of each cylinder):
        // zone slots 1328–1331 are cylinder 66's spares (surface 3, sectors 329–332).
        let mut remapped = base.clone();
        remapped.zones[2].defects = vec![[1000, 1331], [10, 1328], [5, 20 * 1332 + 1330]];
        let plain_disk = Disk::new(base).unwrap();
        for write_back in [false, true] {
            let mut spec = remapped.clone();
            spec.controller.write_back = write_back;
            let disk = Disk::new(spec).unwrap();
            // The LBNs the defects moved, found where their spares are.
            let spare = |zone_slot: u64| Pbn { cylinder: 66 + (zone_slot / 333 / 4) as u32, surface: (zone_slot / 333 % 4) as u32, sector: (zone_slot % 333) as u32 };
            let moved: Vec<u64> = [1331, 1328, 20 * 1332 + 1330].iter().map(|&z| disk.layout().pbn_to_lbn(spare(z)).unwrap()).collect();
            let mut fast = Buffer::new(&disk);
            let mut slow = Buffer::new(&disk);
            slow.fast_forward = false;
            let mut t = 0u64;
            for (k, &l) in moved.iter().enumerate() {
                for (back, n) in [(0, 1), (1, 2), (3, 8), (6, 24), (20, 60)] {
                    for op in [Op::Read, Op::Write] {
                        let lbn = l - back;
                        let a = fast.serve(&disk, t, lbn, n, op).unwrap();
                        let b = slow.serve(&disk, t, lbn, n, op).unwrap();
                        let key = |o: &Outcome| (o.end_ps, o.overhead_ps, o.seek_ps, o.latency_ps, o.media, o.hit);
                        assert_eq!(key(&a), key(&b), "defect {k}: {op:?} LBN {lbn} + {n} at {t} ps");
                        // Alone on an idle drive, the same request where nothing is remapped is
                        // quicker: it does not go to the spare and back.
                        if back > 0 && n > back && !write_back {
                            let mut alone = Buffer::new(&disk);
                            let mut plain = Buffer::new(&plain_disk);
                            let x = alone.serve(&disk, 0, lbn, n, op).unwrap();
                            let y = plain.serve(&plain_disk, 0, lbn, n, op).unwrap();
                            assert!(x.end_ps > y.end_ps, "defect {k}: {op:?} LBN {lbn} + {n}: {} ps, without the defect {} ps", x.end_ps, y.end_ps);
                        }
                        t = a.end_ps + 2_000_000_000;
                    }
                }
            }
        }
    }

    #[test]
    fn fast_forward_matches_sector_by_sector_on_the_built_in_drives() {
        for name in library::names() {
            let disk = cached(name);
            fast_forward_changes_nothing(&disk, 300, 600, 5);
        }
    }
}
