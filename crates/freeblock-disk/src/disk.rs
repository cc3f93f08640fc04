//! Mechanics and service-time computation.
//!
//! ```text
//!  Anatomy of one media access (times add left to right):
//!
//!  command ─► overhead ─► seek (or head switch) + settle ─► rotational latency ─► transfer ─► bus
//!             controller    arm moves to the target track     wait for the first     sectors     last data
//!             work          and settles                       sector to arrive       pass under  to the host
//!                                                                                    the head
//!  positioning time = seek + settle + rotational latency
//!  access time      = overhead + positioning time + transfer (+ switches between tracks) + bus
//! ```
//!
//! [`Disk::access`] computes all of it from a [`HeadState`] and a start time; it is a pure function,
//! so a scheduler's prediction and what the simulated device then does are the same computation
//! and agree to the nanosecond. Both directions pay the bus: a read's data crosses as the media
//! reads it and after; a write's crosses from the command on, overlapping the positioning, and
//! no sector is written before its data has arrived (a slow bus holds the heads, as in DiskSim).
//! The spindle turns continuously from time 0 with its index mark under
//! the heads, so the rotational position at time `t` is `t mod revolution`.

use crate::error::{AccessError, SpecError};
use crate::layout::{Layout, RotPos, TrackAngles, TrackRun};
use crate::seek::SeekCurve;
use crate::spec::DiskSpec;
use crate::time::{ms_to_ns, SimTime, CACHED_TIME_LIMIT, MAX_DURATION_MS, NS_PER_DAY, NS_PER_MS};

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Media to host.
    Read,
    /// Host to media.
    Write,
}

impl Op {
    /// True for reads.
    #[must_use]
    pub fn is_read(self) -> bool {
        self == Op::Read
    }
}

/// Where the heads are: a cylinder and the active surface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HeadState {
    /// Arm position.
    pub cylinder: u32,
    /// Active head.
    pub surface: u32,
}

/// Where the time of one access went, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// Controller command overhead.
    pub overhead: SimTime,
    /// Arm movement, head switches and settling (including switches between tracks mid-request).
    pub seek: SimTime,
    /// Waiting for sectors to rotate under the head.
    pub rotational_latency: SimTime,
    /// Sectors passing under the head.
    pub transfer: SimTime,
    /// Host-interface time not overlapped with the media: a read's data still crossing after
    /// the media is done, or the heads waiting, in place, for a write's data to arrive.
    pub bus: SimTime,
}

impl Breakdown {
    /// Adds another access's parts (a request served in several pieces).
    pub fn add(&mut self, other: &Breakdown) {
        self.overhead += other.overhead;
        self.seek += other.seek;
        self.rotational_latency += other.rotational_latency;
        self.transfer += other.transfer;
        self.bus += other.bus;
    }

    /// Sum of all parts.
    #[must_use]
    pub fn total(&self) -> SimTime {
        self.overhead + self.seek + self.rotational_latency + self.transfer + self.bus
    }

    /// Seek plus rotational latency.
    #[must_use]
    pub fn positioning(&self) -> SimTime {
        self.seek + self.rotational_latency
    }
}

/// The outcome of one media access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaAccess {
    /// When the command started.
    pub start: SimTime,
    /// When the first sector started passing under the head.
    pub media_start: SimTime,
    /// When the last sector finished passing under the head.
    pub media_end: SimTime,
    /// When the command completed (data delivered).
    pub end: SimTime,
    /// Where the time went; `breakdown.total() == end - start`.
    pub breakdown: Breakdown,
    /// Head position after the access.
    pub end_head: HeadState,
}

/// How far past a sector's start (ps) the head may be and still be on time for it: instants are
/// whole nanoseconds rounded up, so anything under a nanosecond may be exactly on time
/// (see [`Disk::wait_for`]).
pub const ON_TIME_PS: u64 = 1000;

/// Timing of one background transfer on one track ([`Disk::arc`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArcAccess {
    /// Arm movement or head switch plus settle, ns.
    pub move_ns: SimTime,
    /// Wait for the first sector, ns.
    pub wait_ns: SimTime,
    /// Sectors passing under the head, ns.
    pub transfer_ns: SimTime,
    /// When the first sector starts passing under the head.
    pub media_start: SimTime,
    /// When the last sector has passed.
    pub end: SimTime,
    /// Where the heads are afterwards.
    pub head: HeadState,
}

/// The first sector of a request: track and rotational position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Cylinder.
    pub cylinder: u32,
    /// Surface.
    pub surface: u32,
    /// Where the sector starts on the rotation.
    pub pos: RotPos,
}

/// An immutable disk model: layout plus mechanics. Cheap to share behind an `Arc`.
#[derive(Debug, Clone)]
pub struct Disk {
    spec: DiskSpec,
    layout: Layout,
    seek: SeekCurve,
    rev_ps: u64,
    head_switch: SimTime,
    read_settle: SimTime,
    /// Signed: DiskSim models may shorten write seeks (see [`DiskSpec::write_settle_ms`]).
    write_settle: i64,
    read_overhead: SimTime,
    write_overhead: SimTime,
    bus_sector_ps: u64,
    /// Host-to-disk bus time per sector for writes, ps (the read rate unless the spec sets one).
    bus_write_sector_ps: u64,
    zero_latency: bool,
    /// Upper bounds for [`Disk::check_time_limit`], ns: all fixed overheads of a request, one
    /// track run's move and rotation, one sector's bus time, and the sectors the cache may work
    /// on in the background.
    worst_fixed_ns: u64,
    worst_run_ns: u64,
    worst_bus_sector_ns: u64,
    background_sectors: u64,
}

impl Disk {
    /// Builds the model from a spec, validating it first.
    ///
    /// # Errors
    /// Any [`SpecError`] from validation or layout construction.
    pub fn new(spec: DiskSpec) -> Result<Self, SpecError> {
        spec.validate()?;
        let rev_ps = (60.0e12 / spec.rpm).round() as u64;
        let layout = Layout::new(&spec, rev_ps)?;
        let asymmetry_ns = (spec.seek_asymmetry_ms * NS_PER_MS).round() as i64;
        let mut seek = SeekCurve::new(&spec.seek, layout.cylinders()).with_asymmetry(asymmetry_ns);
        if let Some(write_model) = &spec.write_seek {
            seek = seek.with_write_curve(write_model);
        }
        if seek.max() > ms_to_ns(MAX_DURATION_MS) {
            let (distance, longest) = (1..layout.cylinders()).map(|d| (d, seek.time(d).max(seek.write_time(d)))).max_by_key(|&(_, t)| t).unwrap_or((0, 0));
            return Err(SpecError::Invalid {
                origin: String::new(),
                field: "seek".into(),
                message: format!(
                    "the curve reaches {} ms at distance {distance}, longer than the {MAX_DURATION_MS} ms a disk time may be",
                    crate::time::ns_to_ms(longest)
                ),
            });
        }
        let bounds = TimeBounds::new(&spec, &seek, rev_ps);
        let write_settle = (spec.write_settle_ms * NS_PER_MS).round() as i64;
        if layout.cylinders() > 1 && asymmetry_ns.unsigned_abs() > seek.time(1).min(seek.write_time(1)) {
            return Err(SpecError::Invalid {
                origin: String::new(),
                field: "seek_asymmetry_ms".into(),
                message: format!(
                    "{} ms is more than the one-cylinder seek ({} ms): seeks {} would take less than nothing",
                    spec.seek_asymmetry_ms,
                    seek.time(1) as f64 / NS_PER_MS,
                    if spec.seek_asymmetry_ms > 0.0 { "outward" } else { "inward" }
                ),
            });
        }
        let shortest_move = (if layout.cylinders() > 1 { seek.shortest(1) } else { SimTime::MAX })
            .min(if spec.surfaces > 1 { ms_to_ns(spec.head_switch_ms) } else { SimTime::MAX });
        if shortest_move != SimTime::MAX && i64::try_from(shortest_move).unwrap_or(i64::MAX).saturating_add(write_settle) < 0 {
            return Err(SpecError::Invalid {
                origin: String::new(),
                field: "write_settle_ms".into(),
                message: format!(
                    "{} ms makes the shortest write move ({} ms) negative",
                    spec.write_settle_ms,
                    shortest_move as f64 / NS_PER_MS
                ),
            });
        }
        Ok(Self {
            worst_fixed_ns: bounds.fixed_ns,
            worst_run_ns: bounds.run_ns,
            worst_bus_sector_ns: bounds.bus_sector_ns,
            background_sectors: bounds.background_sectors,
            head_switch: ms_to_ns(spec.head_switch_ms),
            read_settle: ms_to_ns(spec.read_settle_ms),
            write_settle,
            read_overhead: ms_to_ns(spec.controller.read_miss_ms),
            write_overhead: ms_to_ns(spec.controller.write_miss_ms),
            bus_sector_ps: (spec.controller.bus_sector_ms * 1e9).round() as u64,
            bus_write_sector_ps: (spec.controller.bus_write_sector_ms.unwrap_or(spec.controller.bus_sector_ms) * 1e9).round() as u64,
            zero_latency: false,
            spec,
            layout,
            seek,
            rev_ps,
        })
    }

    /// Turns zero-latency access on or off: with it, a track run the head lands inside is read
    /// from the landing point on, wrapping round, instead of waiting for its first sector.
    #[must_use]
    pub fn with_zero_latency(mut self, on: bool) -> Self {
        self.zero_latency = on;
        self
    }

    /// The spec this disk was built from.
    #[must_use]
    pub fn spec(&self) -> &DiskSpec {
        &self.spec
    }

    /// The LBN mapping.
    #[must_use]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The seek curve.
    #[must_use]
    pub fn seek_curve(&self) -> &SeekCurve {
        &self.seek
    }

    /// Addressable sectors.
    #[must_use]
    pub fn capacity(&self) -> u64 {
        self.layout.capacity()
    }

    /// One revolution, picoseconds.
    #[must_use]
    pub fn revolution_ps(&self) -> u64 {
        self.rev_ps
    }

    /// One revolution, nanoseconds (rounded).
    #[must_use]
    pub fn revolution_ns(&self) -> SimTime {
        (self.rev_ps + 500) / 1000
    }

    /// Head-switch time, ns.
    #[must_use]
    pub fn head_switch_ns(&self) -> SimTime {
        self.head_switch
    }

    /// Settle time for an operation, ns (negative for a write on a DiskSim model whose write seeks
    /// are shorter than its seek curve).
    #[must_use]
    pub fn settle_ns(&self, op: Op) -> i64 {
        if op.is_read() { i64::try_from(self.read_settle).unwrap_or(i64::MAX) } else { self.write_settle }
    }

    /// Command overhead for a media access, ns.
    #[must_use]
    pub fn overhead_ns(&self, op: Op) -> SimTime {
        if op.is_read() { self.read_overhead } else { self.write_overhead }
    }

    /// Time to move `sectors` across the host interface, ns.
    #[must_use]
    pub fn bus_ns(&self, sectors: u64) -> SimTime {
        // Saturates only for requests [`Disk::check_time_limit`] refuses.
        self.bus_sector_ps.saturating_mul(sectors).div_ceil(1000)
    }

    /// Time to move `sectors` of write data across the host interface, ns.
    #[must_use]
    pub fn bus_write_ns(&self, sectors: u64) -> SimTime {
        self.bus_write_sector_ps.saturating_mul(sectors).div_ceil(1000)
    }

    /// Refuses a request whose service could carry simulated time past what the model can count
    /// (see [`crate::time`]): with the cache on, a start after [`CACHED_TIME_LIMIT`] or a
    /// worst-case end past 2^64 ps; with it off, a worst-case end past 2^64 ns. The worst case
    /// is a generous bound (every sector on its own track, a full-stroke seek and three
    /// revolutions each, every overhead), so real requests are nowhere near it.
    ///
    /// # Errors
    /// [`AccessError::TimeLimit`] naming the limit.
    pub fn check_time_limit(&self, lbn: u64, start: SimTime, sectors: u64) -> Result<(), AccessError> {
        let cached = self.spec.cache.enabled;
        let refuse = |reason: String| Err(AccessError::TimeLimit { lbn, start_ns: start, reason });
        if cached && start > CACHED_TIME_LIMIT {
            return refuse(format!(
                "simulated time is past the {} days a drive with its cache on can count (its buffer model keeps u64 picoseconds)",
                CACHED_TIME_LIMIT / NS_PER_DAY
            ));
        }
        let per_sector = u128::from(self.worst_run_ns) + u128::from(self.worst_bus_sector_ns);
        // A remapped sector costs two track runs (to its spare and back).
        let runs_per_sector = if self.layout.has_remapped_defects() { 2 } else { 1 };
        let worst = u128::from(self.worst_fixed_ns) + (u128::from(sectors) * runs_per_sector + u128::from(self.background_sectors)) * per_sector;
        let end = if cached { (u128::from(start) + worst) * 1000 } else { u128::from(start) + worst };
        if end > u128::from(u64::MAX) {
            let unit = if cached { "2^64 ps (213.5 days)" } else { "2^64 ns (584 years)" };
            return refuse(format!("its worst-case service of {worst} ns for {sectors} sectors could end past {unit}, the last instant the model can count"));
        }
        Ok(())
    }

    /// Whether zero-latency access is on.
    #[must_use]
    pub fn zero_latency(&self) -> bool {
        self.zero_latency
    }

    /// Rotational position at time `t`.
    #[inline]
    #[must_use]
    pub fn rot_pos(&self, t: SimTime) -> RotPos {
        match t.checked_mul(1000) {
            Some(ps) => ps % self.rev_ps,
            // Past 2^64 ps (213.5 days): (t·1000) mod r = ((t mod r)·1000) mod r, and
            // (t mod r)·1000 fits, as a revolution is at most a minute (6·10^13 ps).
            None => (t % self.rev_ps) * 1000 % self.rev_ps,
        }
    }

    /// Nanoseconds from `t` until rotational position `target` is under the head, rounded up so
    /// the head is never early.
    ///
    /// Instants are whole nanoseconds rounded up from exact (picosecond) ones, so a head less than
    /// a nanosecond past `target` may have reached it exactly on time: it waits 0. This is what
    /// lets one transfer follow another on the next sector without losing a revolution (see
    /// [`Disk::transfer_ns`]).
    #[inline]
    #[must_use]
    pub fn wait_for(&self, t: SimTime, target: RotPos) -> SimTime {
        let now = self.rot_pos(t);
        let ps = (target + self.rev_ps - now) % self.rev_ps;
        if self.rev_ps - ps < ON_TIME_PS {
            return 0;
        }
        ps.div_ceil(1000)
    }

    /// Time for `sectors` sectors from physical sector `first` of a track to pass under the head
    /// when the first of them starts at `media_start` (as [`Disk::wait_for`] gives it), ns.
    ///
    /// It ends as the next sector starts, rounded up to a whole nanosecond — never more than a
    /// nanosecond past it — so a following transfer from that sector begins at once. (Adding
    /// [`Disk::sectors_ns`] to an instant already rounded up could end up to 2 ns past it and miss
    /// the sector by a revolution.) When `media_start` is not at `first`'s start, the plain
    /// [`Disk::sectors_ns`].
    #[must_use]
    pub fn transfer_ns(&self, angles: &TrackAngles, media_start: SimTime, first: u32, sectors: u64) -> SimTime {
        let spt = u64::from(angles.spt);
        let start = angles.sector_start(first);
        let past = (self.rot_pos(media_start) + self.rev_ps - start) % self.rev_ps;
        if past >= ON_TIME_PS || sectors == 0 {
            return self.sectors_ns(sectors, angles.spt);
        }
        let last = ((u64::from(first) + sectors) % spt) as u32;
        let within = (angles.sector_start(last) + self.rev_ps - start) % self.rev_ps;
        // Saturating: only a request `check_time_limit` refuses could reach it.
        let span = (sectors / spt).saturating_mul(self.rev_ps).saturating_add(within);
        span.saturating_sub(past).div_ceil(1000)
    }

    /// Time for `sectors` sectors to pass under the head on a track of `spt` sectors, ns.
    #[inline]
    #[must_use]
    pub fn sectors_ns(&self, sectors: u64, spt: u32) -> SimTime {
        // A track (≤ 2^20 sectors) of the slowest spindle (10^12 ps) fits; more saturates, and
        // only requests `check_time_limit` refuses ask for more.
        (sectors.saturating_mul(self.rev_ps) / u64::from(spt)).div_ceil(1000)
    }

    /// Time to move the heads from `from` to a track, ns (seek, or head switch on the same
    /// cylinder, plus settle when anything moved).
    #[inline]
    #[must_use]
    pub fn move_ns(&self, from: HeadState, cylinder: u32, surface: u32, op: Op) -> SimTime {
        let m = if from.cylinder != cylinder {
            self.seek.between_for(from.cylinder, cylinder, !op.is_read()).max(if from.surface == surface { 0 } else { self.head_switch })
        } else if from.surface != surface {
            self.head_switch
        } else {
            return 0;
        };
        // `Disk::new` checked that the shortest move plus a negative settle stays ≥ 0.
        m.saturating_add_signed(self.settle_ns(op))
    }

    /// Splits an LBN range into track runs (see [`Layout::track_runs`]).
    ///
    /// # Errors
    /// As [`Layout::track_runs`].
    pub fn track_runs(&self, lbn: u64, sectors: u64, out: &mut Vec<TrackRun>) -> Result<(), AccessError> {
        self.layout.track_runs(lbn, sectors, out)
    }

    /// Where a request's first sector is: its track and rotational position. Computing it once
    /// per request lets schedulers rank many requests cheaply.
    ///
    /// # Errors
    /// [`AccessError::OutOfRange`] for an LBN past the end.
    #[inline]
    pub fn target(&self, lbn: u64) -> Result<Target, AccessError> {
        let pbn = self.layout.lbn_to_pbn(lbn)?;
        Ok(Target { cylinder: pbn.cylinder, surface: pbn.surface, pos: self.layout.sector_start(pbn.cylinder, pbn.surface, pbn.sector) })
    }

    /// Positioning to a precomputed [`Target`]: `(move, rotational wait)` in ns, for a command
    /// starting at `start`. Agrees exactly with [`Disk::access`]'s first run.
    #[inline]
    #[must_use]
    pub fn positioning_to(&self, head: HeadState, start: SimTime, target: &Target, op: Op) -> (SimTime, SimTime) {
        // Saturating: a start near the end of time ranks, and `access` then refuses it.
        let t = start.saturating_add(self.overhead_ns(op));
        let mv = self.move_ns(head, target.cylinder, target.surface, op);
        (mv, self.wait_for(t.saturating_add(mv), target.pos))
    }

    /// Positioning time (seek + settle + rotational latency, ns) to start a media access at `lbn`
    /// from `head`, with the command starting at `start` (overhead included in the time line but
    /// not in the result). Agrees exactly with [`Disk::access`]'s first run.
    ///
    /// # Errors
    /// [`AccessError::OutOfRange`] for an LBN past the end.
    #[inline]
    pub fn positioning(&self, head: HeadState, start: SimTime, lbn: u64, op: Op) -> Result<SimTime, AccessError> {
        let pbn = self.layout.lbn_to_pbn(lbn)?;
        let t = start.saturating_add(self.overhead_ns(op));
        let mv = self.move_ns(head, pbn.cylinder, pbn.surface, op);
        let target = self.layout.sector_start(pbn.cylinder, pbn.surface, pbn.sector);
        Ok(mv + self.wait_for(t.saturating_add(mv), target))
    }

    /// Full media access for `sectors` sectors at `lbn`, starting at `start` from `head`.
    /// `runs` is scratch space (reused to avoid allocation).
    ///
    /// # Errors
    /// [`AccessError`] for an empty or out-of-range request.
    pub fn access(
        &self,
        head: HeadState,
        start: SimTime,
        lbn: u64,
        sectors: u64,
        op: Op,
        runs: &mut Vec<TrackRun>,
    ) -> Result<MediaAccess, AccessError> {
        self.access_when_free(head, start, 0, lbn, sectors, op, runs)
    }

    /// As [`Disk::access`], but the mechanism is busy with other work until `free_at`: the
    /// command starts at `start`, and the heads leave `head` at the later of `start + overhead`
    /// and `free_at`. Freeblock scheduling serves a foreground request this way after the
    /// background transfers it slipped into the request's rotational latency.
    ///
    /// # Errors
    /// As [`Disk::access`].
    #[allow(clippy::too_many_arguments)]
    pub fn access_when_free(
        &self,
        head: HeadState,
        start: SimTime,
        free_at: SimTime,
        lbn: u64,
        sectors: u64,
        op: Op,
        runs: &mut Vec<TrackRun>,
    ) -> Result<MediaAccess, AccessError> {
        // The runs the head passes over, a remapped defect's spare in its place.
        runs.clear();
        self.layout.for_each_media_run(lbn, sectors, |run| runs.push(run))?;
        self.check_time_limit(lbn, start.max(free_at), sectors)?;
        let mut b = Breakdown { overhead: self.overhead_ns(op), ..Breakdown::default() };
        let mut t = (start + b.overhead).max(free_at);
        let mut pos = head;
        let mut media_start = None;
        // A write's data crosses the bus from the moment the command is taken, during the
        // positioning and the media transfer; a sector is written only once it has arrived.
        let bus_start = start + b.overhead;
        let mut written = 0u64;
        for run in runs.iter() {
            let mv = self.move_ns(pos, run.cylinder, run.surface, op);
            b.seek += mv;
            t += mv;
            let angles = self.layout.track_angles(run.cylinder, run.surface);
            let first = angles.map_or(0, |a| a.sector_start(run.first_sector));
            if !op.is_read() {
                let ready = self.write_data_ready(bus_start, written, run);
                written += u64::from(run.sectors);
                // The heads are in place but the data is not: the bus holds the write up. The
                // rotational latency stays what the heads would have waited anyway (what a
                // scheduler's positioning time predicts); the rest is the bus's.
                let held = if self.zero_latency { ready.saturating_sub(t) } else { self.write_hold(t, ready, first) };
                b.bus += held;
                t += held;
            }
            let wait = self.wait_for(t, first);
            let xfer = match angles {
                Some(a) if !self.zero_latency => self.transfer_ns(&a, t + wait, run.first_sector, u64::from(run.sectors)),
                _ => self.sectors_ns(u64::from(run.sectors), run.sectors_per_track),
            };
            let (wait, busy) = self.track_time(t, wait, first, run, xfer);
            media_start.get_or_insert(t + wait);
            b.rotational_latency += busy - xfer;
            b.transfer += xfer;
            t += busy;
            let _ = wait;
            pos = HeadState { cylinder: run.cylinder, surface: run.surface };
        }
        let media_end = t;
        let media_start = media_start.unwrap_or(t);
        let end = if op.is_read() {
            (media_end + self.bus_ns(1)).max(media_start + self.bus_ns(sectors))
        } else {
            // Every sector was written after its data arrived (`write_data_ready`).
            media_end
        };
        b.bus += end - media_end;
        Ok(MediaAccess { start, media_start, media_end, end, breakdown: b, end_head: pos })
    }

    /// Background media work on one track with no command of its own: move the heads from
    /// `head` to track `(cylinder, surface)` leaving at `t`, wait for physical sector `first`, and
    /// pass over `sectors` sectors from it (not wrapping past a full revolution). Pure, like
    /// [`Disk::access`], so a planned background transfer and its execution agree exactly.
    #[inline]
    #[must_use]
    #[allow(clippy::too_many_arguments)]
    pub fn arc(&self, head: HeadState, t: SimTime, cylinder: u32, surface: u32, first: u32, sectors: u32, op: Op) -> ArcAccess {
        let mv = self.move_ns(head, cylinder, surface, op);
        let angles = self.layout.track_angles(cylinder, surface);
        // Saturating, like `positioning_to`: no panic near the end of time (`access` refuses).
        let wait = self.wait_for(t.saturating_add(mv), angles.map_or(0, |a| a.sector_start(first)));
        let media_start = t.saturating_add(mv).saturating_add(wait);
        let transfer = match angles {
            Some(a) => self.transfer_ns(&a, media_start, first, u64::from(sectors)),
            None => self.sectors_ns(u64::from(sectors), self.layout.sectors_per_track(cylinder)),
        };
        ArcAccess { move_ns: mv, wait_ns: wait, transfer_ns: transfer, media_start, end: media_start.saturating_add(transfer), head: HeadState { cylinder, surface } }
    }

    /// The earliest time the media may start writing `run`, the request's sectors before it
    /// (`written`) having gone first: each of its sectors must have crossed the bus (from
    /// `bus_start`, at the write bus rate) before the head reaches it. With a bus slower than the
    /// media, the last sector binds; with a faster one, the first. Zero-latency writes may
    /// start anywhere in the run, so they wait for all of it.
    fn write_data_ready(&self, bus_start: SimTime, written: u64, run: &TrackRun) -> SimTime {
        let n = u64::from(run.sectors);
        let first_arrives = bus_start + self.bus_write_ns(written + 1);
        let last_arrives = bus_start + self.bus_write_ns(written + n);
        if self.zero_latency {
            return last_arrives;
        }
        let before_last = self.sectors_ns(n.saturating_sub(1), run.sectors_per_track);
        first_arrives.max(last_arrives.saturating_sub(before_last))
    }

    /// How much longer than the rotation alone the heads, on the track at `t`, wait before
    /// writing a run whose first sector starts at `first` when its data is ready at `ready`:
    /// whole revolutions, since the sector must come round again. The hold keeps `t + hold`
    /// at the same rotational position as `t`, so the wait after it is the wait before it.
    fn write_hold(&self, t: SimTime, ready: SimTime, first: RotPos) -> SimTime {
        let wait = self.wait_for(t, first);
        if ready <= t + wait {
            return 0;
        }
        let late_ps = u128::from(ready - (t + wait)) * 1000;
        let revolutions = late_ps.div_ceil(u128::from(self.rev_ps));
        let hold_ps = revolutions * u128::from(self.rev_ps);
        // Whole nanoseconds, rounded down: the heads may already be up to `ON_TIME_PS` late for
        // the sector at `t` (an instant rounded up to the nanosecond), and rounding the hold up too
        // could take them past it and cost a revolution. Rounded down they are at most a
        // nanosecond early, and the wait after the hold covers it.
        SimTime::try_from(hold_ps / 1000).unwrap_or(SimTime::MAX)
    }

    /// For a run whose first sector starts at `first`, arriving at `t` with `wait` =
    /// [`Disk::wait_for`] until it: returns (wait before the first sector, total time on the track
    /// including transfer).
    fn track_time(&self, t: SimTime, wait: SimTime, first: RotPos, run: &TrackRun, xfer: SimTime) -> (SimTime, SimTime) {
        if !self.zero_latency || wait == 0 {
            return (wait, wait + xfer);
        }
        // How far past the run's first sector the head is, in ps.
        let rel = (self.rot_pos(t) + self.rev_ps - first) % self.rev_ps;
        let run_ps = u64::from(run.sectors) * self.rev_ps / u64::from(run.sectors_per_track);
        if rel >= run_ps {
            return (wait, wait + xfer);
        }
        // Landed inside the run: wait for the next sector boundary, then one full revolution
        // covers every sector of the run.
        let sector_ps = self.rev_ps / u64::from(run.sectors_per_track);
        let to_boundary = (sector_ps - rel % sector_ps) % sector_ps;
        let busy = (to_boundary + self.rev_ps).div_ceil(1000);
        (to_boundary.div_ceil(1000), busy.max(xfer))
    }
}

/// Generous upper bounds on the parts of a request's service, for [`Disk::check_time_limit`].
struct TimeBounds {
    fixed_ns: u64,
    run_ns: u64,
    bus_sector_ns: u64,
    background_sectors: u64,
}

impl TimeBounds {
    fn new(spec: &DiskSpec, seek: &SeekCurve, rev_ps: u64) -> Self {
        let c = &spec.controller;
        let x = c.extra_write_disconnect.clone().unwrap_or_default();
        // Every controller time at once: more than any one request pays.
        let fixed_ms: f64 = [
            c.read_miss_ms,
            c.read_hit_ms,
            c.write_miss_ms,
            c.write_hit_ms,
            c.per_request_ms,
            c.read_complete_ms,
            c.write_complete_ms,
            c.data_prep_ms,
            c.reselect_ms,
            c.reselect_other_ms,
            c.read_disconnect_ms,
            c.write_disconnect_ms,
            c.min_write_seek_ms,
            c.read_miss_after_write_ms.unwrap_or(0.0),
            c.read_hit_after_write_ms.unwrap_or(0.0),
            c.write_miss_after_write_ms.unwrap_or(0.0),
            c.write_hit_after_write_ms.unwrap_or(0.0),
            c.read_disconnect_after_write_ms.unwrap_or(0.0),
            x.command_ms,
            x.disconnect_ms,
            x.inter_disconnect_ms,
            x.second_disconnect_ms,
            x.seek_delta_ms,
        ]
        .iter()
        .sum();
        let settle_ms = spec.read_settle_ms.max(spec.write_settle_ms).max(0.0);
        // A track run: the longest move and settle, then at most three revolutions (wait, pass,
        // and a zero-latency wrap).
        let run_ns = seek.max().max(ms_to_ns(spec.head_switch_ms)) + ms_to_ns(settle_ms) + 3 * rev_ps.div_ceil(1000) + 1;
        let background_sectors = if spec.cache.enabled {
            u64::from(spec.cache.segments) * u64::from(spec.cache.segment_sectors) + u64::from(spec.cache.read_ahead_sectors)
        } else {
            0
        };
        Self {
            fixed_ns: ms_to_ns(fixed_ms),
            run_ns,
            bus_sector_ns: ms_to_ns(c.bus_sector_ms.max(c.bus_write_sector_ms.unwrap_or(0.0))) + 1,
            background_sectors,
        }
    }
}
