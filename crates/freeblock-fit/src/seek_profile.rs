//! Seek profile from timing alone (paper 003 §4.2): learn a disk's seek time against *logical*
//! distance and its per-zone transfer rate from a trace that holds only each request's first
//! LBN, its length and its measured access time — what a host sees of a drive that hides its
//! geometry — and with them split any access time into seek, rotation and transfer.
//!
//! Paper 003 records a random-read trace and plots access time against the distance in sectors
//! from the previous request. Rotational latency spreads the points into a band one revolution
//! high; its lower edge is where the sector arrived just as the seek ended, so the **lower
//! envelope** is seek time (plus the small transfer and the fixed command overhead). The paper
//! stays in LBN space — it never converts sectors to cylinders, since the drive does not say how
//! — and so do we: a profile point says "a jump of `x` sectors costs at least `t` ms".
//!
//! ```text
//!  access │ ·  ·:·:·:·::·:·:·::·:·:·:·:·::·:·      ▲
//!   time  │·:·:·:·:·::·:·:·:::·:·:·:·:·:·:·:·      │ one revolution (rotational latency)
//!         │:·:·:·::·:·:·:·::·:·:·:·::··            ▼
//!         │●━━●━━━●━━━━●━━━━━━●━━━━━━━━●━━━━ ← lower envelope = the seek profile
//!         └──────────────────────────────────► distance from the previous request, sectors
//! ```
//!
//! | step | how | parameter (default) |
//! |---|---|---|
//! | timing trace | closed, one request at a time, FCFS, through the one engine ([`Simulation`]) on the disk with its cache off; the next request jumps a log-uniform distance (either way) from where the last ended, so short and long seeks are both well sampled; one-sector reads, so that the transfer (and the error of its estimate) is as small as it can be | `requests` (200 000), `request_sectors` (1), `seed` |
//! | zone rates | per slice of the LBN space, a large read followed at once by the next one; the second starts where the first ended (no seek), so its size over its time is the effective sequential rate (track and cylinder switches included; the host interface's when that is slower), as the paper measures with large sequential I/O | `slices` (32), `slice_read_sectors` (65 536: 32 MB; half a slice on small disks) |
//! | envelope | subtract each read's transfer time at its slice's rate; bin the distances, `bins_per_octave` bins per doubling; a bin's point is first its fastest read (its distance and time), then, twice, the read furthest below the curve through the points so far (so that a shorter jump that waited for the disk to turn does not beat a longer one that did not) | `bins_per_octave` (4), bins with ≥ [`MIN_BIN_SAMPLES`] reads |
//! | profile | linear between points; [`SeekProfile::decompose`] splits an access as the paper does: `T_s` from the profile, `T_t` from the zone rate, `T_r` the rest; an access below the curve is all transfer (a cache hit) | — |
//!
//! The fitter ([`SeekProfile::fit`]) sees [`TimedRead`]s only. The check ([`ProfileCheck`]) is
//! separate and does look inside the model: for each envelope point it takes the model's own
//! seek (the seek curve at that read's cylinder distance, plus settle) and command overhead, and
//! for each slice the model's sequential rate from the zone's geometry.

use std::fmt::Write as _;
use std::sync::Arc;

use freeblock_disk::{Disk, Op};
use serde::Serialize;

use freeblock::report::Record;
use freeblock::request::Request;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{ArrivalKind, Workload, WorkloadError};
use freeblock::{Error, Result};

/// Fewest reads a distance bin needs to give an envelope point: the fastest of `n` reads waits
/// about a revolution / (n + 1), so with fewer the point sits visibly above the seek time.
pub const MIN_BIN_SAMPLES: u64 = 20;

/// Rounds of the envelope fit: the fastest read per bin, then twice the read furthest below the
/// curve so far.
const REFINE_ROUNDS: usize = 3;

/// Paper 003's own fit of its WD 80 GB drive's profile (§4.2), ms, for a jump of `x` sectors:
/// `8e-21·x³ − 2e-13·x² + 1e-6·x + 1.35` below 1.1·10⁷ sectors, `9e-8·x + 4.16` from there on.
/// As printed, the cubic's coefficients are rounded too far to use near its end (it gives
/// −1.1 ms at 1.08·10⁷ sectors); the linear part is sound.
#[must_use]
pub fn paper003_wd_seek_ms(x: u64) -> f64 {
    let x = x as f64;
    if x < 1.1e7 {
        8e-21 * x.powi(3) - 2e-13 * x.powi(2) + 1e-6 * x + 1.35
    } else {
        9e-8 * x + 4.16
    }
}

/// Paper 003's drive, as our library models it from the paper's Table 1: its reports set the
/// paper's own fitted formula ([`paper003_wd_seek_ms`]) beside ours.
pub const PAPER003_DRIVE: &str = "wd800";

/// Shortest distance, in sectors, from which the paper's printed formula is usable (its linear
/// part; the cubic below it is rounded beyond use).
pub const PAPER003_LINEAR_FROM_SECTORS: u64 = 11_000_000;

/// The disk a timing trace is taken on: `model` (a built-in name or a spec file) with its cache
/// turned off, since cache hits would fall below the seek curve.
///
/// # Errors
/// A model that does not load or makes no disk.
pub fn timing_disk(model: &str) -> Result<Arc<Disk>> {
    Ok(Arc::new(Disk::new(freeblock_disk::library::load(model)?.without_cache())?))
}

/// How the timing trace is taken and binned.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProfileSettings {
    /// Random reads in the trace (≥ 1000).
    pub requests: u64,
    /// Sectors per random read (≥ 1).
    pub request_sectors: u32,
    /// Seed of the jumps.
    pub seed: u64,
    /// Slices of the LBN space whose sequential rate is measured (≥ 1).
    pub slices: u32,
    /// Sectors of each of a slice's two sequential reads (≥ 1; two must fit in a slice).
    /// `None`: 65 536 (32 MB), or half a slice on a disk too small for that.
    pub slice_read_sectors: Option<u32>,
    /// Distance bins per doubling (1 to 64).
    pub bins_per_octave: u32,
}

impl Default for ProfileSettings {
    fn default() -> Self {
        Self { requests: 200_000, request_sectors: 1, seed: 1, slices: 32, slice_read_sectors: None, bins_per_octave: 4 }
    }
}

/// What the fitter may see of one request: where, how long, how long it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimedRead {
    /// First LBN.
    pub lbn: u64,
    /// Sectors.
    pub sectors: u32,
    /// Access time (command start to completion), ns.
    pub access_ns: u64,
}

impl From<&Record> for TimedRead {
    fn from(r: &Record) -> Self {
        Self { lbn: r.lbn, sectors: r.sectors, access_ns: r.end_ns - r.start_ns }
    }
}

/// The trace: the slices' sequential reads, then the random reads, in issue order.
#[derive(Debug, Clone)]
pub struct TimingTrace {
    /// The sequential reads (pairs: a read, then the one continuing it).
    pub sequential: Vec<TimedRead>,
    /// The random reads.
    pub random: Vec<TimedRead>,
    /// The model's records of the same reads, for [`ProfileCheck`] only (same order: sequential,
    /// then random).
    records: Vec<Record>,
}

/// The requests of a timing trace: per slice a read and its continuation, then random jumps.
struct TimingWorkload {
    capacity: u64,
    settings: ProfileSettings,
    rng: rand_chacha::ChaCha8Rng,
    issued: u64,
    last_end: u64,
}

impl TimingWorkload {
    fn slice_start(&self, slice: u64) -> u64 {
        self.capacity / u64::from(self.settings.slices) * slice
    }

    fn random_lbn(&mut self) -> u64 {
        use rand::Rng;
        let sectors = u64::from(self.settings.request_sectors);
        let top = self.capacity - sectors; // highest start
        let jump = (self.rng.gen::<f64>() * (top.max(2) as f64).ln()).exp().floor() as u64;
        let (down, up) = (self.last_end.checked_sub(jump), self.last_end.checked_add(jump).filter(|&l| l <= top));
        match (down, up) {
            (Some(d), Some(u)) => {
                if self.rng.gen_bool(0.5) {
                    d
                } else {
                    u
                }
            }
            (Some(l), None) | (None, Some(l)) => l.min(top),
            (None, None) => self.rng.gen_range(0..=top),
        }
    }
}

impl Workload for TimingWorkload {
    fn next_request(&mut self) -> std::result::Result<Option<Request>, WorkloadError> {
        let seq = 2 * u64::from(self.settings.slices);
        let n = self.issued;
        if n >= seq + self.settings.requests {
            return Ok(None);
        }
        self.issued += 1;
        let (lbn, sectors) = if n < seq {
            let len = self.settings.slice_read(self.capacity);
            (self.slice_start(n / 2) + (n % 2) * u64::from(len), len)
        } else {
            (self.random_lbn(), self.settings.request_sectors)
        };
        self.last_end = lbn + u64::from(sectors);
        Ok(Some(Request { time: 0, lbn, sectors, op: Op::Read, measured: None, fua: false }))
    }

    fn arrival(&self) -> ArrivalKind {
        ArrivalKind::Closed
    }
}

fn bad(field: &str, message: String) -> Error {
    Error::Config { origin: format!("seek-profile {field}"), message }
}

impl ProfileSettings {
    fn validate(&self, capacity: u64) -> Result<()> {
        if self.requests < 1000 || self.requests > 100_000_000 {
            return Err(bad("requests", format!("must be between 1000 and 100000000, got {}", self.requests)));
        }
        if self.request_sectors == 0 || u64::from(self.request_sectors) * 4 > capacity {
            return Err(bad("request_sectors", format!("must be between 1 and a quarter of the disk ({capacity} sectors), got {}", self.request_sectors)));
        }
        if !(1..=64).contains(&self.bins_per_octave) {
            return Err(bad("bins_per_octave", format!("must be between 1 and 64, got {}", self.bins_per_octave)));
        }
        if self.slices == 0 || u64::from(self.slices) * 2 > capacity {
            return Err(bad("slices", format!("must be between 1 and half the disk's {capacity} sectors, got {}", self.slices)));
        }
        if self.slice_read_sectors == Some(0) {
            return Err(bad("slice_read_sectors", "must be at least 1".into()));
        }
        let slice = capacity / u64::from(self.slices);
        if 2 * u64::from(self.slice_read(capacity)) > slice {
            return Err(bad(
                "slice_read_sectors",
                format!("two reads of {} sectors do not fit in a slice of {slice} sectors ({} slices of a {capacity}-sector disk)", self.slice_read(capacity), self.slices),
            ));
        }
        Ok(())
    }

    /// Sectors of each sequential read on a disk of `capacity` sectors.
    fn slice_read(&self, capacity: u64) -> u32 {
        self.slice_read_sectors.unwrap_or_else(|| {
            let half_slice = capacity / u64::from(self.slices.max(1)) / 2;
            u32::try_from(half_slice.min(65_536)).unwrap_or(65_536).max(1)
        })
    }
}

/// Takes the timing trace on `disk` (which should have its cache off: hits would fall below the
/// curve): one request at a time, FCFS, through the simulator.
///
/// # Errors
/// [`Error::Config`] naming the setting for settings that make no trace on this disk.
pub fn take_trace(disk: &Arc<Disk>, settings: &ProfileSettings) -> Result<TimingTrace> {
    use rand_chacha::rand_core::SeedableRng;
    settings.validate(disk.capacity())?;
    let workload = TimingWorkload { capacity: disk.capacity(), settings: *settings, rng: rand_chacha::ChaCha8Rng::seed_from_u64(settings.seed), issued: 0, last_end: 0 };
    let config = SimConfig { scheduler: SchedulerSpec::Fcfs, mpl: 1, keep_records: true, ..SimConfig::default() };
    let report = Simulation::new(Arc::clone(disk), Box::new(workload), config).run(None)?;
    let records = report.records;
    let seq = 2 * settings.slices as usize;
    let reads: Vec<TimedRead> = records.iter().map(TimedRead::from).collect();
    Ok(TimingTrace { sequential: reads[..seq].to_vec(), random: reads[seq..].to_vec(), records })
}

/// One point of the lower envelope.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EnvelopePoint {
    /// Distance from the previous request's end, sectors (of the bin's fastest read).
    pub distance_sectors: u64,
    /// Seek time (with the fixed command overhead), ms: the bin's fastest access less its
    /// transfer.
    pub seek_ms: f64,
    /// Reads in the bin.
    pub samples: u64,
    /// Index in the random reads of the fastest one.
    pub read: usize,
}

/// The effective sequential rate of a span of LBNs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ZoneRate {
    /// First LBN the rate applies to.
    pub first_lbn: u64,
    /// Where the measuring read started.
    pub measured_at: u64,
    /// MB/s (10^6 bytes).
    pub mb_s: f64,
    /// Transfer time per sector, ms.
    pub sector_ms: f64,
}

/// A disk's seek profile and zone rates, learnt from timing (paper 003 §4.2).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeekProfile {
    /// The lower envelope, by increasing distance.
    pub points: Vec<EnvelopePoint>,
    /// Sequential rates, by increasing LBN; each applies up to the next one's `first_lbn`.
    pub zones: Vec<ZoneRate>,
}

/// An access time split as paper 003 does it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Decomposed {
    /// Seek (with the fixed command overhead), ms.
    pub seek_ms: f64,
    /// Rotational latency, ms.
    pub rotation_ms: f64,
    /// Transfer, ms.
    pub transfer_ms: f64,
}

impl SeekProfile {
    /// Fits the profile from the trace's reads alone.
    ///
    /// `sequential` is searched for reads that start where the one before ended; each gives the
    /// rate of the LBNs from its slice on. `random` gives the envelope.
    ///
    /// # Errors
    /// [`Error::Config`] when the reads give no rate or no envelope point.
    pub fn fit(sequential: &[TimedRead], random: &[TimedRead], sector_bytes: u32, bins_per_octave: u32) -> Result<Self> {
        let mut zones: Vec<ZoneRate> = sequential
            .windows(2)
            .filter(|w| w[1].lbn == w[0].lbn + u64::from(w[0].sectors) && w[1].access_ns > 0)
            .map(|w| {
                let r = w[1];
                let sector_ms = r.access_ns as f64 / 1e6 / f64::from(r.sectors);
                ZoneRate { first_lbn: w[0].lbn, measured_at: r.lbn, mb_s: f64::from(sector_bytes) / (sector_ms * 1e3), sector_ms }
            })
            .collect();
        zones.sort_by_key(|z| z.first_lbn);
        if let Some(first) = zones.first_mut() {
            first.first_lbn = 0;
        } else {
            return Err(bad("trace", "no sequential read continues the one before it: no transfer rate can be measured".into()));
        }
        let mut profile = Self { points: Vec::new(), zones };
        // Each read: its distance, its time less its transfer, its bin.
        let reads: Vec<(u64, f64, u64)> = random
            .windows(2)
            .map(|w| {
                let (prev, r) = (w[0], w[1]);
                let distance = r.lbn.abs_diff(prev.lbn + u64::from(prev.sectors));
                let bin = if distance == 0 { 0 } else { 1 + ((distance as f64).log2() * f64::from(bins_per_octave)).floor() as u64 };
                (distance, r.access_ns as f64 / 1e6 - profile.transfer_ms(r.lbn, r.sectors), bin)
            })
            .collect();
        // First the fastest read of each bin. A bin spans a range of distances, so its fastest
        // read trades seek for rotation: a shorter jump that waited a little beats a longer one
        // that did not. The later rounds pick the read furthest below the curve so far instead,
        // which follows the curve's slope across the bin and leaves only rotation to minimise.
        for _round in 0..REFINE_ROUNDS {
            let mut bins: std::collections::BTreeMap<u64, (u64, f64, usize)> = std::collections::BTreeMap::new();
            for (i, &(distance, t, bin)) in reads.iter().enumerate() {
                let below = if profile.points.is_empty() { t } else { t - profile.seek_ms(distance) };
                let e = bins.entry(bin).or_insert((0, f64::INFINITY, 0));
                e.0 += 1;
                if below < e.1 {
                    (e.1, e.2) = (below, i);
                }
            }
            let mut points: Vec<EnvelopePoint> = bins
                .into_values()
                .filter(|b| b.0 >= MIN_BIN_SAMPLES)
                .map(|(samples, _, i)| EnvelopePoint { distance_sectors: reads[i].0, seek_ms: reads[i].1, samples, read: i + 1 })
                .collect();
            points.sort_by_key(|p| p.distance_sectors);
            points.dedup_by_key(|p| p.distance_sectors);
            profile.points = points;
        }
        if profile.points.is_empty() {
            return Err(bad("requests", format!("no distance bin has the {MIN_BIN_SAMPLES} reads an envelope point needs: take more requests")));
        }
        Ok(profile)
    }

    /// Seek time (with the fixed command overhead) for a jump of `distance` sectors, ms: linear
    /// between the envelope points, flat beyond the ends.
    #[must_use]
    pub fn seek_ms(&self, distance: u64) -> f64 {
        let i = self.points.partition_point(|p| p.distance_sectors <= distance);
        match (i.checked_sub(1).map(|j| self.points[j]), self.points.get(i)) {
            (Some(a), Some(b)) => {
                let f = (distance - a.distance_sectors) as f64 / (b.distance_sectors - a.distance_sectors) as f64;
                a.seek_ms + f * (b.seek_ms - a.seek_ms)
            }
            (Some(a), None) => a.seek_ms,
            (None, Some(b)) => b.seek_ms,
            (None, None) => 0.0,
        }
    }

    /// Transfer time of `sectors` sectors from `lbn`, ms, at the rate measured there.
    #[must_use]
    pub fn transfer_ms(&self, lbn: u64, sectors: u32) -> f64 {
        let i = self.zones.partition_point(|z| z.first_lbn <= lbn).saturating_sub(1);
        self.zones.get(i).map_or(0.0, |z| z.sector_ms * f64::from(sectors))
    }

    /// Splits an access of `access_ms` that jumped `distance` sectors to read `sectors` from
    /// `lbn`, as paper 003 §4.2 does: seek from the profile, transfer from the zone rate,
    /// rotation the rest; an access faster than seek plus transfer moved nothing (a cache hit)
    /// and is all transfer.
    #[must_use]
    pub fn decompose(&self, access_ms: f64, distance: u64, lbn: u64, sectors: u32) -> Decomposed {
        let (seek, transfer) = (self.seek_ms(distance), self.transfer_ms(lbn, sectors));
        if access_ms < seek + transfer {
            return Decomposed { seek_ms: 0.0, rotation_ms: 0.0, transfer_ms: access_ms };
        }
        Decomposed { seek_ms: seek, rotation_ms: access_ms - seek - transfer, transfer_ms: transfer }
    }
}

/// One envelope point beside the model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PointCheck {
    /// The point.
    pub point: EnvelopePoint,
    /// Cylinders the read's seek crossed.
    pub cylinders: u32,
    /// The model's seek curve at that distance, ms.
    pub curve_ms: f64,
    /// What the model charged the read besides rotation and transfer (seek curve, settle, head
    /// switch, command overhead, bus), ms: what the point should equal.
    pub model_ms: f64,
    /// `(fit − model) / model`.
    pub error: f64,
}

/// One zone rate beside the model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ZoneCheck {
    /// The rate.
    pub zone: ZoneRate,
    /// The model zone holding the measuring read, when all of it lies in one zone.
    pub model_zone: Option<usize>,
    /// That zone's sequential rate from its geometry (sectors per track, surfaces, skews), or
    /// the host interface's when slower, MB/s.
    pub model_mb_s: f64,
    /// `(fit − model) / model`.
    pub error: f64,
}

/// The fit beside the model's truth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileCheck {
    /// Every envelope point.
    pub points: Vec<PointCheck>,
    /// Shortest distance that matters, sectors: the disk's largest cylinder. From there on every
    /// jump moves the arm and where it lands on the rotation no longer follows from the
    /// distance; shorter jumps mostly stay on the cylinder, and those that cross one land at an
    /// angle the distance fixes, so their fastest read is not one that waited no rotation (the
    /// "irregular bump" paper 003 sees at small distances).
    pub min_distance_sectors: u64,
    /// Largest |error| over the points at `min_distance_sectors` or more whose read crossed at
    /// least one cylinder (the distances that matter: one cylinder's worth to the full stroke).
    pub max_seek_error: f64,
    /// Of those points, how many.
    pub seek_points: usize,
    /// Every zone rate.
    pub zones: Vec<ZoneCheck>,
    /// Largest |error| over the rates measured inside one zone.
    pub max_zone_error: f64,
    /// Over all random reads: mean seek (with overhead) the model charged, ms.
    pub trace_model_seek_ms: f64,
    /// The same as the profile decomposes it (paper 003's way), ms.
    pub trace_profile_seek_ms: f64,
}

/// Sequential rate of zone `z` of `disk`, MB/s: per cylinder, `spt × surfaces` sectors pass in
/// `spt × surfaces + (surfaces − 1) × track_skew + cylinder_skew` sector times; a host interface
/// slower than that (`controller.bus_sector_ms`) sets the rate instead.
fn zone_rate_mb_s(disk: &Disk, z: usize) -> f64 {
    let spec = disk.spec();
    let zone = &spec.zones[z];
    let (spt, surfaces) = (f64::from(zone.sectors_per_track), f64::from(spec.surfaces));
    let sector_s = disk.revolution_ns() as f64 / 1e9 / spt;
    let cylinder_s = sector_s * (spt * surfaces + (surfaces - 1.0) * zone.track_skew + zone.cylinder_skew);
    let media = spt * surfaces * f64::from(spec.sector_bytes) / cylinder_s / 1e6;
    let bus_ms = spec.controller.bus_sector_ms;
    if bus_ms > 0.0 {
        media.min(f64::from(spec.sector_bytes) / (bus_ms * 1e3))
    } else {
        media
    }
}

fn zone_of(disk: &Disk, lbn: u64) -> Option<usize> {
    let cylinder = disk.layout().lbn_to_pbn(lbn).ok()?.cylinder;
    disk.spec().zones.iter().position(|z| (z.first_cylinder..=z.last_cylinder).contains(&cylinder))
}

impl ProfileCheck {
    /// Compares `profile` with the model that produced `trace`.
    #[must_use]
    pub fn new(disk: &Disk, trace: &TimingTrace, profile: &SeekProfile) -> Self {
        let seq = trace.sequential.len();
        let random = &trace.records[seq..];
        let cylinder = |lbn: u64| disk.layout().lbn_to_pbn(lbn).map_or(0, |p| p.cylinder);
        let charged_ms = |r: &Record| (r.seek_ns + r.overhead_ns) as f64 / 1e6;
        let points: Vec<PointCheck> = profile
            .points
            .iter()
            .map(|p| {
                let (prev, r) = (&random[p.read - 1], &random[p.read]);
                let cylinders = cylinder(prev.lbn + u64::from(prev.sectors) - 1).abs_diff(cylinder(r.lbn));
                let model_ms = charged_ms(r);
                let error = if model_ms > 0.0 { (p.seek_ms - model_ms) / model_ms } else { f64::INFINITY };
                PointCheck { point: *p, cylinders, curve_ms: disk.seek_curve().time(cylinders) as f64 / 1e6, model_ms, error }
            })
            .collect();
        let spec = disk.spec();
        let min_distance_sectors = spec.zones.iter().map(|z| u64::from(z.sectors_per_track) * u64::from(spec.surfaces)).max().unwrap_or(0);
        let seeks: Vec<&PointCheck> = points.iter().filter(|c| c.cylinders >= 1 && c.point.distance_sectors >= min_distance_sectors).collect();
        let zones: Vec<ZoneCheck> = profile
            .zones
            .iter()
            .map(|z| {
                let read = trace.sequential.iter().find(|r| r.lbn == z.measured_at).expect("a rate comes from a read");
                let (first, last) = (zone_of(disk, read.lbn), zone_of(disk, read.lbn + u64::from(read.sectors) - 1));
                let model_zone = first.filter(|_| first == last);
                let model_mb_s = zone_rate_mb_s(disk, first.unwrap_or(0));
                ZoneCheck { zone: *z, model_zone, model_mb_s, error: (z.mb_s - model_mb_s) / model_mb_s }
            })
            .collect();
        let (mut model_sum, mut profile_sum) = (0.0, 0.0);
        for w in random.windows(2) {
            let distance = w[1].lbn.abs_diff(w[0].lbn + u64::from(w[0].sectors));
            model_sum += charged_ms(&w[1]);
            let access = (w[1].end_ns - w[1].start_ns) as f64 / 1e6;
            profile_sum += profile.decompose(access, distance, w[1].lbn, w[1].sectors).seek_ms;
        }
        let n = random.len().saturating_sub(1).max(1) as f64;
        Self {
            min_distance_sectors,
            max_seek_error: seeks.iter().map(|c| c.error.abs()).fold(0.0, f64::max),
            seek_points: seeks.len(),
            max_zone_error: zones.iter().filter(|z| z.model_zone.is_some()).map(|z| z.error.abs()).fold(0.0, f64::max),
            points,
            zones,
            trace_model_seek_ms: model_sum / n,
            trace_profile_seek_ms: profile_sum / n,
        }
    }

    /// Every envelope point beside the model, as CSV (`freeblock seek-profile --out`'s
    /// `envelope.csv`).
    #[must_use]
    pub fn envelope_csv(&self) -> String {
        let mut csv = String::from("distance_sectors,reads,fit_ms,cylinders,seek_curve_ms,model_ms,error\n");
        for p in &self.points {
            let _ = writeln!(csv, "{},{},{:.6},{},{:.6},{:.6},{:.6}", p.point.distance_sectors, p.point.samples, p.point.seek_ms, p.cylinders, p.curve_ms, p.model_ms, p.error);
        }
        csv
    }

    /// Every slice's sequential rate beside the model's zone, as CSV (`zones.csv`).
    #[must_use]
    pub fn zones_csv(&self) -> String {
        let mut csv = String::from("first_lbn,measured_at,fit_mb_s,model_zone,model_mb_s,error\n");
        for z in &self.zones {
            let _ = writeln!(csv, "{},{},{:.6},{},{:.6},{:.6}", z.zone.first_lbn, z.zone.measured_at, z.zone.mb_s, z.model_zone.map_or(String::new(), |i| i.to_string()), z.model_mb_s, z.error);
        }
        csv
    }
}

/// Takes the trace, fits the profile and checks it: everything `freeblock seek-profile` prints.
///
/// # Errors
/// As [`take_trace`] and [`SeekProfile::fit`].
pub fn measure(disk: &Arc<Disk>, settings: &ProfileSettings) -> Result<(TimingTrace, SeekProfile, ProfileCheck)> {
    let trace = take_trace(disk, settings)?;
    let profile = SeekProfile::fit(&trace.sequential, &trace.random, disk.spec().sector_bytes, settings.bins_per_octave)?;
    let check = ProfileCheck::new(disk, &trace, &profile);
    Ok((trace, profile, check))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, requests: u64) -> ProfileCheck {
        let disk = freeblock_disk::library::media(name).unwrap();
        let settings = ProfileSettings { requests, ..ProfileSettings::default() };
        let (_, profile, check) = measure(&disk, &settings).unwrap();
        assert!(profile.points.len() > 40, "{name}: {} points", profile.points.len());
        check
    }

    #[test]
    fn the_envelope_is_the_seek_curve_within_five_percent() {
        // Paper 003's drive, and an HP C3323A (a measured seek table, DiskSim overheads).
        for (name, requests) in [("wd800", 100_000), ("hp_c3323a", 200_000)] {
            let c = check(name, requests);
            assert!(c.seek_points > 25, "{name}: {} seek points", c.seek_points);
            let worst = c.points.iter().filter(|p| p.cylinders >= 1 && p.point.distance_sectors >= c.min_distance_sectors).max_by(|a, b| a.error.abs().total_cmp(&b.error.abs()));
            assert!(c.max_seek_error < 0.05, "{name}: max error {:.2}% at {worst:?}", c.max_seek_error * 100.0);
            assert!(c.max_zone_error < 0.02, "{name}: zone rate error {:.2}%", c.max_zone_error * 100.0);
            // The profile's decomposition of the whole trace (by LBN distance, as the paper
            // does it) comes near the model's mean seek.
            assert!((c.trace_profile_seek_ms / c.trace_model_seek_ms - 1.0).abs() < 0.1, "{name}: {c:?}");
        }
    }

    #[test]
    fn the_papers_outer_zone_rate_is_measured_on_wd800() {
        // Paper 003 §4.2: 54 MB/s in the outermost zone of its WD drive.
        let c = check("wd800", 5_000);
        assert!((c.zones[0].zone.mb_s - 54.0).abs() < 0.5, "{}", c.zones[0].zone.mb_s);
    }

    #[test]
    fn decompose_splits_as_the_paper_does() {
        let profile = SeekProfile {
            points: vec![EnvelopePoint { distance_sectors: 0, seek_ms: 1.0, samples: 50, read: 1 }, EnvelopePoint { distance_sectors: 1000, seek_ms: 3.0, samples: 50, read: 2 }],
            zones: vec![ZoneRate { first_lbn: 0, measured_at: 10, mb_s: 51.2, sector_ms: 0.01 }],
        };
        assert!((profile.seek_ms(500) - 2.0).abs() < 1e-12 && profile.seek_ms(5000) == 3.0);
        let d = profile.decompose(10.0, 500, 7, 100);
        assert!((d.seek_ms - 2.0).abs() < 1e-12 && (d.transfer_ms - 1.0).abs() < 1e-12 && (d.rotation_ms - 7.0).abs() < 1e-12);
        // Faster than the curve: no mechanical movement, all transfer.
        assert_eq!(profile.decompose(0.5, 500, 7, 8), Decomposed { seek_ms: 0.0, rotation_ms: 0.0, transfer_ms: 0.5 });
    }

    #[test]
    fn bad_settings_name_the_setting() {
        let disk = freeblock_disk::library::media("wd800").unwrap();
        for (settings, field) in [
            (ProfileSettings { requests: 10, ..ProfileSettings::default() }, "requests"),
            (ProfileSettings { request_sectors: 0, ..ProfileSettings::default() }, "request_sectors"),
            (ProfileSettings { bins_per_octave: 0, ..ProfileSettings::default() }, "bins_per_octave"),
            (ProfileSettings { slice_read_sectors: Some(u32::MAX), ..ProfileSettings::default() }, "slice_read_sectors"),
            (ProfileSettings { slices: 0, ..ProfileSettings::default() }, "slices"),
        ] {
            let e = take_trace(&disk, &settings).unwrap_err().to_string();
            assert!(e.contains(field), "{field}: {e}");
        }
    }
}
