//! The runs of `freeblock repro scrub`: the foregrounds, the scrub schemes, the host-side
//! scrubbers driven through [`Simulation::online`], and one row per foreground and scheme (see
//! [the module](super) for what they reproduce).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use freeblock_disk::{library, Disk, Op, SimTime};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use freeblock::error::{Error, Result};
use freeblock::external::scheduler::{ExternalConfig, ExternalHost, HostModel};
use freeblock::external::{BlackBox, Effects};
use freeblock::firmware::FirmwareQueue;
use freeblock::freeblock::{Freeblock, FreeblockConfig, TaskSpec};
use freeblock::report::Record;
use freeblock::request::Request;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{OnlineNext, OnlineSource, SimConfig, Simulation};
use freeblock::workload::{ArrivalKind, OltpSpec, Workload, WorkloadError, WorkloadSpec};

/// The drive of the repro: the library's 14 TB model.
pub const DRIVE: &str = "ultrastar_hc530";
/// The drive's command queue: NCQ's 32 tags.
pub const FIRMWARE_QUEUE_DEPTH: u32 = 32;
/// The ZFS-like scrubber's read: 1 MiB, the vdev queue's aggregation limit
/// (`zfs_vdev_aggregation_limit`), which the sorted scrub's sequential extents reach.
pub const ZFS_READ_KIB: u32 = 1024;
/// Before #11166: scrub reads kept at the drive (`zfs_vdev_scrub_max_active`, 2 then; the vdev
/// queue sends them whatever the interactive I/O does).
pub const ZFS_BEFORE_IN_FLIGHT: u32 = 2;
/// The idle-class scrubber's read (as the ZFS-like one's).
pub const IDLE_READ_KIB: u32 = 1024;
/// The busier foreground's closed-loop streams.
pub const OLTP_QD: u32 = 8;
/// The OLTP-like load's share of reads (2:1 reads to writes, paper 000's OLTP).
pub const OLTP_READ_FRACTION: f64 = 2.0 / 3.0;

/// Seconds in a day.
const DAY_S: f64 = 86_400.0;

/// The foregrounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Foreground {
    /// Random 4 KB reads, one outstanding (fio `--rw=randread --iodepth=1`), over
    /// [`ScrubReproConfig::fg_span`] of the disk.
    RandomQd1,
    /// [`OLTP_QD`] closed-loop streams with no think time, 2:1 reads to writes, sizes multiples
    /// of 4 KB with mean 8 KB (exponential), uniform over the disk: paper 000's OLTP without
    /// its think time, so [`OLTP_QD`] requests are always outstanding.
    OltpQd8,
}

impl Foreground {
    /// A short label.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::RandomQd1 => "A: QD 1 random 4 KB reads",
            Self::OltpQd8 => "B: QD 8 OLTP (2:1 R:W, mean 8 KB)",
        }
    }

    /// Closed-loop streams.
    #[must_use]
    pub fn streams(self) -> u32 {
        match self {
            Self::RandomQd1 => 1,
            Self::OltpQd8 => OLTP_QD,
        }
    }
}

/// The scrub schemes (see the module doc's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// No scrub: the idle baseline.
    None,
    /// ZFS-like, before PR #11166.
    ZfsBefore,
    /// ZFS-like, after PR #11166.
    ZfsAfter,
    /// Idle I/O class.
    IdleClass,
    /// Freeblock scheduling in the drive's firmware.
    FreeblockFirmware,
    /// Freeblock scheduling from the host (paper 001) through the drive's queue.
    FreeblockHost,
    /// Reference for [`Scheme::FreeblockHost`]: the same black-box drive and host scheduler,
    /// no scrub.
    HostAlone,
    /// ZFS-like, one read at a time, paced to the sampled share a day.
    ZfsSampled,
    /// Check of the host-side driver: the same foreground through it, no scrub (must match
    /// [`Scheme::None`]).
    HostDriven,
}

impl Scheme {
    /// Every scheme in print order.
    pub const ALL: [Scheme; 9] = [Self::None, Self::ZfsBefore, Self::ZfsAfter, Self::IdleClass, Self::FreeblockFirmware, Self::FreeblockHost, Self::HostAlone, Self::ZfsSampled, Self::HostDriven];

    /// A short label.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::None => "1 none (idle baseline)",
            Self::ZfsBefore => "2 ZFS-like, before #11166",
            Self::ZfsAfter => "2 ZFS-like, after #11166",
            Self::IdleClass => "3 idle class",
            Self::FreeblockFirmware => "4 freeblock, firmware",
            Self::FreeblockHost => "5 freeblock, host",
            Self::HostAlone => "  (5's drive, no scrub)",
            Self::ZfsSampled => "  ZFS-like, paced to sample",
            Self::HostDriven => "  (1 through the host driver)",
        }
    }

    /// Whether it scrubs at all.
    #[must_use]
    pub fn scrubs(self) -> bool {
        !matches!(self, Self::None | Self::HostAlone | Self::HostDriven)
    }
}

/// Knobs of `freeblock repro scrub`.
#[derive(Debug, Clone, Serialize)]
pub struct ScrubReproConfig {
    /// Built-in drive name or spec file (run as its media model: cache off).
    pub disk: String,
    /// Simulated seconds per run.
    pub seconds: f64,
    /// Seconds at the start of each run left out of the statistics.
    pub warmup_s: f64,
    /// Share of the disk (from LBN 0) the QD 1 random reads cover, (0, 1].
    pub fg_span: f64,
    /// ZFS-like after #11166: the pause after each scrub read, ms.
    pub zfs_after_pause_ms: f64,
    /// Idle class: the foreground idle time before the scrub may issue, ms.
    pub idle_after_ms: f64,
    /// Freeblock in the firmware: idle time before it reads in idle periods, ms.
    pub freeblock_idle_after_ms: f64,
    /// The sampled scrub: share of the disk's blocks to read a day, (0, 1].
    pub sample_share_per_day: f64,
    /// The drive's age limit, ms (`None`: none).
    pub age_limit_ms: Option<f64>,
    /// Simulations at once.
    pub threads: usize,
    /// Seed of the foreground and the black box.
    pub seed: u64,
}

impl Default for ScrubReproConfig {
    fn default() -> Self {
        Self {
            disk: DRIVE.into(),
            seconds: 60.0,
            warmup_s: 2.0,
            fg_span: 1.0,
            zfs_after_pause_ms: 1.0,
            idle_after_ms: 100.0,
            freeblock_idle_after_ms: 100.0,
            sample_share_per_day: 0.05,
            age_limit_ms: Some(250.0),
            threads: 2,
            seed: 1,
        }
    }
}

impl ScrubReproConfig {
    /// A short version: 12 simulated seconds a run.
    #[must_use]
    pub fn quick() -> Self {
        Self { seconds: 12.0, warmup_s: 1.0, ..Self::default() }
    }

    /// Checks every knob.
    ///
    /// # Errors
    /// [`Error::Config`] naming the knob.
    pub fn validate(&self) -> Result<()> {
        let bad = |origin: &str, message: String| Err(Error::Config { origin: format!("repro scrub --{origin}"), message });
        if !(self.seconds.is_finite() && self.seconds > 0.0 && self.seconds <= 86_400.0) {
            return bad("seconds", format!("must be from above 0 to 86400 simulated seconds, not {}", self.seconds));
        }
        if !(self.warmup_s.is_finite() && self.warmup_s >= 0.0 && self.warmup_s < self.seconds) {
            return bad("warmup", format!("must be ≥ 0 and below the run's {} s, not {}", self.seconds, self.warmup_s));
        }
        if !(self.fg_span.is_finite() && self.fg_span > 0.0 && self.fg_span <= 1.0) {
            return bad("fg-span", format!("must be a share of the disk in (0, 1], not {}", self.fg_span));
        }
        for (name, v) in [("zfs-pause-ms", self.zfs_after_pause_ms), ("idle-after-ms", self.idle_after_ms), ("idle-after-ms", self.freeblock_idle_after_ms)] {
            if !(v.is_finite() && (0.0..=60_000.0).contains(&v)) {
                return bad(name, format!("must be a time from 0 to 60000 ms, not {v}"));
            }
        }
        if !(self.sample_share_per_day.is_finite() && self.sample_share_per_day > 0.0 && self.sample_share_per_day <= 1.0) {
            return bad("sample-share", format!("must be a share of the blocks a day in (0, 1], not {}", self.sample_share_per_day));
        }
        FirmwareQueue::new(FIRMWARE_QUEUE_DEPTH, self.age_limit_ms).validate()
    }
}

/// One foreground with one scrub scheme.
#[derive(Debug, Clone, Serialize)]
pub struct ScrubRow {
    /// The foreground.
    pub foreground: Foreground,
    /// The scheme.
    pub scheme: Scheme,
    /// Foreground requests completed in the measured window.
    pub requests: u64,
    /// Foreground completions a second.
    pub iops: f64,
    /// Mean foreground response, ms.
    pub mean_ms: f64,
    /// 99th-percentile foreground response, ms.
    pub p99_ms: f64,
    /// Scrub rate, MB/s (10⁶ bytes).
    pub scrub_mb_s: f64,
    /// Of which read in idle time (freeblock in the firmware), MB/s.
    pub idle_mb_s: f64,
    /// Time to scrub the whole disk at this rate, hours (`None`: never).
    pub eta_hours: Option<f64>,
    /// Whole-disk scrubs a day at this rate.
    pub scrubs_per_day: f64,
    /// Hours to read the sampled share of the blocks at this rate (`None`: never).
    pub sample_hours: Option<f64>,
}

/// The repro's results.
#[derive(Debug, Clone, Serialize)]
pub struct ScrubReport {
    /// The knobs.
    pub config: ScrubReproConfig,
    /// The drive's name.
    pub disk: String,
    /// Its capacity, bytes.
    pub capacity_bytes: u64,
    /// The ZFS-like paced scrubber's pause, ms (from the sampled share).
    pub sampled_pause_ms: f64,
    /// Every run.
    pub rows: Vec<ScrubRow>,
}

impl ScrubReport {
    /// The row of `scheme` under `fg`.
    #[must_use]
    pub fn row(&self, fg: Foreground, scheme: Scheme) -> Option<&ScrubRow> {
        self.rows.iter().find(|r| r.foreground == fg && r.scheme == scheme)
    }

    /// `scheme`'s IOPS over no scrub's under `fg`.
    #[must_use]
    pub fn iops_share(&self, fg: Foreground, scheme: Scheme) -> Option<f64> {
        Some(self.row(fg, scheme)?.iops / self.row(fg, Scheme::None)?.iops)
    }

    /// `scheme`'s mean response over no scrub's, less 1, under `fg`.
    #[must_use]
    pub fn mean_cost(&self, fg: Foreground, scheme: Scheme) -> Option<f64> {
        Some(self.row(fg, scheme)?.mean_ms / self.row(fg, Scheme::None)?.mean_ms - 1.0)
    }
}

/// QD 1 random 4 KB reads over the first `span_sectors` of the disk, aligned to 4 KB.
struct SpanReads {
    sectors: u32,
    units: u64,
    rng: ChaCha8Rng,
}

impl Workload for SpanReads {
    fn next_request(&mut self) -> std::result::Result<Option<Request>, WorkloadError> {
        let lbn = self.rng.gen_range(0..self.units) * u64::from(self.sectors);
        Ok(Some(Request { time: 0, lbn, sectors: self.sectors, op: Op::Read, measured: None, fua: false }))
    }
    fn arrival(&self) -> ArrivalKind {
        ArrivalKind::Closed
    }
    fn is_endless(&self) -> bool {
        true
    }
}

/// The foreground's request generator (the same for every scheme, by the seed).
fn foreground_workload(disk: &Disk, fg: Foreground, c: &ScrubReproConfig) -> Result<Box<dyn Workload>> {
    match fg {
        Foreground::RandomQd1 => {
            let sectors = (4096 / disk.spec().sector_bytes).max(1);
            let span = ((disk.capacity() as f64 * c.fg_span) as u64).max(u64::from(sectors));
            Ok(Box::new(SpanReads { sectors, units: span / u64::from(sectors), rng: ChaCha8Rng::seed_from_u64(c.seed) }))
        }
        Foreground::OltpQd8 => {
            let spec = OltpSpec { count: None, think_time_ms: 0.0, read_fraction: OLTP_READ_FRACTION, ..OltpSpec::default() };
            Ok(WorkloadSpec::Oltp(spec).build(disk.capacity(), c.seed)?)
        }
    }
}

/// How a host-side scrubber issues its reads.
#[derive(Debug, Clone, Copy)]
struct HostScrub {
    /// Sectors a read.
    sectors: u64,
    /// Reads at the drive at once, at most.
    in_flight: u32,
    /// Pause after each read completes before its slot issues again, ns.
    pause_ns: SimTime,
    /// Issue only after the foreground has had nothing outstanding for this long, ns.
    idle_after_ns: Option<SimTime>,
}

/// What a request handed to the engine was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Foreground,
    Scrub,
}

/// Measurements over the window, from completion records.
#[derive(Debug, Default)]
struct Tally {
    from: SimTime,
    to: SimTime,
    responses: Vec<SimTime>,
    scrub_bytes: u64,
}

impl Tally {
    fn foreground(&mut self, r: &Record) {
        if r.end_ns >= self.from && r.end_ns < self.to {
            self.responses.push(r.end_ns - r.arrival_ns);
        }
    }
}

/// The host: a closed-loop foreground and a host-side scrubber, handing requests to the
/// engine as an [`OnlineSource`]; completions come back through the record sink.
struct Host {
    fg: Box<dyn Workload>,
    fg_delay: bool,
    /// Streams ready to issue, and from when.
    fg_ready: VecDeque<SimTime>,
    fg_outstanding: u32,
    /// When the foreground last had nothing outstanding (with nothing ready).
    fg_idle_since: Option<SimTime>,
    scrub: Option<HostScrub>,
    /// When each free scrub slot may issue.
    scrub_slots: Vec<SimTime>,
    cursor: u64,
    capacity: u64,
    sector_bytes: u64,
    end: SimTime,
    last: Option<Kind>,
    ids: HashMap<u64, Kind>,
    tally: Tally,
}

impl Host {
    fn next_fg(&mut self) -> Option<SimTime> {
        self.fg_ready.front().copied()
    }

    fn next_scrub(&self) -> Option<SimTime> {
        let s = self.scrub?;
        let slot = self.scrub_slots.iter().copied().min()?;
        match s.idle_after_ns {
            None => Some(slot),
            Some(after) => {
                if self.fg_outstanding > 0 || !self.fg_ready.is_empty() {
                    return None;
                }
                Some(slot.max(self.fg_idle_since? + after))
            }
        }
    }

    fn complete(&mut self, r: &Record) {
        match self.ids.remove(&r.id) {
            Some(Kind::Foreground) => {
                self.tally.foreground(r);
                self.fg_outstanding -= 1;
                if self.fg_outstanding == 0 {
                    self.fg_idle_since = Some(r.end_ns);
                }
                // The stream's next request is ready at once: a closed loop with no think time
                // leaves no idle period for the idle class.
                self.fg_ready.push_back(r.end_ns);
            }
            Some(Kind::Scrub) => {
                if r.end_ns >= self.tally.from && r.end_ns < self.tally.to {
                    self.tally.scrub_bytes += u64::from(r.sectors) * self.sector_bytes;
                }
                if let Some(s) = self.scrub {
                    self.scrub_slots.push(r.end_ns + s.pause_ns);
                }
            }
            None => {}
        }
    }
}

/// The host as the engine's request source; the record sink holds it too, to hand completions back.
struct SharedHost(Arc<Mutex<Host>>);

impl OnlineSource for SharedHost {
    fn next_arrival(&mut self, now: SimTime, until: Option<SimTime>) -> std::result::Result<OnlineNext, WorkloadError> {
        let mut h = self.0.lock().expect("host state");
        let fg = h.next_fg();
        let scrub = h.next_scrub();
        let (at, kind) = match (fg, scrub) {
            (Some(f), Some(s)) if s < f => (s, Kind::Scrub),
            (Some(f), _) => (f, Kind::Foreground),
            (None, Some(s)) => (s, Kind::Scrub),
            (None, None) => return Ok(if until.is_none() { OnlineNext::End } else { OnlineNext::Later }),
        };
        let at = at.max(now);
        if at >= h.end {
            return Ok(OnlineNext::End);
        }
        if until.is_some_and(|u| at > u) {
            return Ok(OnlineNext::Later);
        }
        let request = match kind {
            Kind::Foreground => {
                h.fg_ready.pop_front();
                let Some(mut r) = h.fg.next_request()? else { return Ok(OnlineNext::End) };
                r.time = if h.fg_delay { at + r.time } else { at };
                h.fg_outstanding += 1;
                h.fg_idle_since = None;
                r
            }
            Kind::Scrub => {
                let s = h.scrub.expect("a scrub was chosen");
                let slot = h.scrub_slots.iter().enumerate().min_by_key(|(_, &t)| t).map(|(i, _)| i).expect("a free slot");
                h.scrub_slots.swap_remove(slot);
                if h.cursor >= h.capacity {
                    h.cursor = 0;
                }
                let sectors = s.sectors.min(h.capacity - h.cursor);
                let lbn = h.cursor;
                h.cursor += sectors;
                Request { time: at, lbn, sectors: sectors as u32, op: Op::Read, measured: None, fua: false }
            }
        };
        h.last = Some(kind);
        Ok(OnlineNext::Request(request))
    }

    fn accepted(&mut self, id: u64) {
        let mut h = self.0.lock().expect("host state");
        if let Some(kind) = h.last.take() {
            h.ids.insert(id, kind);
        }
    }
}

/// The black box's firmware effects for `disk`: every effect on as [`Effects::default`] (paper
/// 001's Atlas 10K on Ultra2 SCSI), with the bus-overlap jitter scaled to this drive's bus. That
/// jitter is per sector: 2 µs on a bus taking 6.4 µs a sector is a third of it; unscaled on SATA's
/// 0.85 µs a sector it would be more than twice the transfer itself, up to 4 ms on a free read of
/// half a 14 TB track, which the host cannot predict.
#[must_use]
pub fn drive_effects(disk: &Disk) -> Effects {
    let atlas = Effects::default();
    let scale = disk.spec().controller.bus_sector_ms / freeblock::external::ULTRA2_BUS_SECTOR_MS;
    Effects { bus_overlap_jitter_ns_per_sector: (atlas.bus_overlap_jitter_ns_per_sector as f64 * scale.min(1.0)).round() as u64, ..atlas }
}

/// The drive of the repro, its media model (cache off).
///
/// # Errors
/// An unknown name or a bad spec.
pub fn drive(name: &str) -> Result<Arc<Disk>> {
    Ok(Arc::new(Disk::new(library::load(name)?.without_cache())?))
}

fn ms(ns: SimTime) -> f64 {
    ns as f64 / 1e6
}

fn ns(ms: f64) -> SimTime {
    freeblock_disk::time::ms_to_ns(ms)
}

/// The pause that paces a one-at-a-time scrubber of `read_kib` reads to `share` of `capacity_bytes` a day, ms.
#[must_use]
pub fn sampled_pause_ms(capacity_bytes: u64, share: f64, read_kib: u32) -> f64 {
    let rate = share * capacity_bytes as f64 / DAY_S; // bytes a second
    f64::from(read_kib) * 1024.0 / rate * 1e3
}

/// Runs `scheme` under `fg` on `disk`.
///
/// # Errors
/// Any setup or run error.
pub fn run_one(disk: &Arc<Disk>, c: &ScrubReproConfig, fg: Foreground, scheme: Scheme) -> Result<ScrubRow> {
    let end = ns(c.seconds * 1e3);
    let from = ns(c.warmup_s * 1e3);
    let firmware = Some(FirmwareQueue::new(FIRMWARE_QUEUE_DEPTH, c.age_limit_ms));
    let sector_bytes = u64::from(disk.spec().sector_bytes);
    let capacity_bytes = disk.capacity() * sector_bytes;
    let workload = foreground_workload(disk, fg, c)?;
    let (tally, scrub_mb_s, idle_mb_s) = match scheme {
        Scheme::HostDriven | Scheme::ZfsBefore | Scheme::ZfsAfter | Scheme::IdleClass | Scheme::ZfsSampled => {
            let read = |kib: u32| (u64::from(kib) * 1024 / sector_bytes).max(1);
            let scrub = match scheme {
                Scheme::ZfsBefore => Some(HostScrub { sectors: read(ZFS_READ_KIB), in_flight: ZFS_BEFORE_IN_FLIGHT, pause_ns: 0, idle_after_ns: None }),
                Scheme::ZfsAfter => Some(HostScrub { sectors: read(ZFS_READ_KIB), in_flight: 1, pause_ns: ns(c.zfs_after_pause_ms), idle_after_ns: None }),
                Scheme::IdleClass => Some(HostScrub { sectors: read(IDLE_READ_KIB), in_flight: 1, pause_ns: 0, idle_after_ns: Some(ns(c.idle_after_ms)) }),
                Scheme::ZfsSampled => Some(HostScrub {
                    sectors: read(ZFS_READ_KIB),
                    in_flight: 1,
                    pause_ns: ns(sampled_pause_ms(capacity_bytes, c.sample_share_per_day, ZFS_READ_KIB)),
                    idle_after_ns: None,
                }),
                _ => None,
            };
            let fg_delay = workload.arrival() == ArrivalKind::ClosedDelay;
            let host = Arc::new(Mutex::new(Host {
                fg: workload,
                fg_delay,
                fg_ready: (0..fg.streams()).map(|_| 0).collect(),
                fg_outstanding: 0,
                fg_idle_since: None,
                scrub,
                scrub_slots: scrub.map_or(Vec::new(), |s| vec![0; s.in_flight as usize]),
                cursor: 0,
                capacity: disk.capacity(),
                sector_bytes,
                end,
                last: None,
                ids: HashMap::new(),
                tally: Tally { from, to: end, ..Tally::default() },
            }));
            let sink_host = Arc::clone(&host);
            let config = SimConfig { scheduler: SchedulerSpec::Fcfs, firmware, ..SimConfig::default() };
            Simulation::online(Arc::clone(disk), Box::new(SharedHost(Arc::clone(&host))), config)
                .with_record_sink(Box::new(move |r: &Record| {
                    sink_host.lock().expect("host state").complete(r);
                    Ok(())
                }))
                .run(None)?;
            let tally = std::mem::take(&mut host.lock().expect("host state").tally);
            let window_s = (end - from) as f64 / 1e9;
            let mb_s = tally.scrub_bytes as f64 / 1e6 / window_s;
            (tally, mb_s, 0.0)
        }
        Scheme::None | Scheme::FreeblockFirmware | Scheme::FreeblockHost | Scheme::HostAlone => {
            let tally = Arc::new(Mutex::new(Tally { from, to: end, ..Tally::default() }));
            let sink_tally = Arc::clone(&tally);
            let sink = Box::new(move |r: &Record| {
                sink_tally.lock().expect("tally").foreground(r);
                Ok(())
            });
            let external = matches!(scheme, Scheme::FreeblockHost | Scheme::HostAlone);
            let scan = TaskSpec::Scan { block_bytes: 4096, passes: 0, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: None, passes_in_flight: None };
            let fb_config = FreeblockConfig {
                stop_when_done: false,
                tasks: vec![scan],
                idle_after_ms: (!external).then_some(c.freeblock_idle_after_ms),
                ..FreeblockConfig::default()
            };
            let sim_config = SimConfig {
                // From the host the foreground is the host's SPTF (the drive holds only two
                // commands); in the firmware the drive's queue orders the foreground.
                scheduler: if external { SchedulerSpec::Sptf } else { SchedulerSpec::Fcfs },
                mpl: fg.streams(),
                max_time_s: c.seconds,
                firmware: if external { None } else { firmware },
                ..SimConfig::default()
            };
            let mut sim = Simulation::new(Arc::clone(disk), workload, sim_config).with_record_sink(sink);
            if scheme.scrubs() {
                sim = sim.with_freeblock(Freeblock::new(Arc::clone(disk), fb_config)?);
            }
            if external {
                // A banded drive cannot be characterised through the black box (docs/external.md),
                // so the host plans with the true model: a host that characterised perfectly.
                let host_config = ExternalConfig { model: HostModel::Truth, ..ExternalConfig::default() };
                let black_box = BlackBox::new(Arc::clone(disk), drive_effects(disk), c.seed);
                sim = sim.with_external(ExternalHost::new(black_box, Arc::clone(disk), host_config)?);
            }
            let report = sim.run(None)?;
            let (free, idle) = report.freeblock.as_ref().map_or((0.0, 0.0), |f| (f.free_mb_s + f.idle_mb_s, f.idle_mb_s));
            let tally = std::mem::take(&mut *tally.lock().expect("tally"));
            (tally, free, idle)
        }
    };
    let mut responses = tally.responses;
    responses.sort_unstable();
    let n = responses.len();
    let window_s = (end - from) as f64 / 1e9;
    let mean_ms = if n == 0 { 0.0 } else { responses.iter().map(|&r| ms(r)).sum::<f64>() / n as f64 };
    let p99_ms = responses.get(((n as f64 * 0.99).ceil() as usize).saturating_sub(1)).map_or(0.0, |&r| ms(r));
    let bytes_per_s = scrub_mb_s * 1e6;
    let hours = |bytes: f64| (bytes_per_s > 0.0).then(|| bytes / bytes_per_s / 3600.0);
    Ok(ScrubRow {
        foreground: fg,
        scheme,
        requests: n as u64,
        iops: n as f64 / window_s,
        mean_ms,
        p99_ms,
        scrub_mb_s,
        idle_mb_s,
        eta_hours: hours(capacity_bytes as f64),
        scrubs_per_day: bytes_per_s * DAY_S / capacity_bytes as f64,
        sample_hours: hours(capacity_bytes as f64 * c.sample_share_per_day),
    })
}

/// Runs every scheme under both foregrounds. `progress(done, total)` after each run.
///
/// # Errors
/// A bad knob, or any run's error.
pub fn scrub(c: &ScrubReproConfig, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<ScrubReport> {
    c.validate()?;
    let disk = drive(&c.disk)?;
    let jobs: Vec<(Foreground, Scheme)> = [Foreground::RandomQd1, Foreground::OltpQd8].into_iter().flat_map(|fg| Scheme::ALL.into_iter().map(move |s| (fg, s))).collect();
    let total = jobs.len();
    let rows = crate::parallel::map_in_order(&jobs, c.threads, |&(fg, s)| run_one(&disk, c, fg, s), |n| progress(n, total));
    let rows = rows.into_iter().collect::<Result<Vec<_>>>()?;
    let capacity_bytes = disk.capacity() * u64::from(disk.spec().sector_bytes);
    Ok(ScrubReport {
        config: c.clone(),
        disk: disk.spec().name.clone(),
        capacity_bytes,
        sampled_pause_ms: sampled_pause_ms(capacity_bytes, c.sample_share_per_day, ZFS_READ_KIB),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scrub::paper::{KEEP_SHARE, MEAN_RESPONSE_SLACK};

    /// A short window: the shape of the results, not their values.
    fn short() -> ScrubReproConfig {
        ScrubReproConfig { seconds: 3.0, warmup_s: 0.5, ..ScrubReproConfig::default() }
    }

    #[test]
    fn the_host_driver_alone_serves_the_foreground_as_a_plain_run_does() {
        let disk = drive(DRIVE).unwrap();
        let c = short();
        for fg in [Foreground::RandomQd1, Foreground::OltpQd8] {
            let plain = run_one(&disk, &c, fg, Scheme::None).unwrap();
            let hosted = run_one(&disk, &c, fg, Scheme::HostDriven).unwrap();
            assert!(plain.requests > 0);
            assert_eq!((plain.requests, plain.mean_ms, plain.p99_ms), (hosted.requests, hosted.mean_ms, hosted.p99_ms), "{fg:?}");
            assert_eq!(hosted.scrub_mb_s, 0.0);
        }
    }

    #[test]
    fn freeblock_scrubs_and_keeps_its_foreground_where_throttled_scrubs_do_not() {
        let disk = drive(DRIVE).unwrap();
        let c = short();
        let a = Foreground::RandomQd1;
        let none = run_one(&disk, &c, a, Scheme::None).unwrap();
        let fb = run_one(&disk, &c, a, Scheme::FreeblockFirmware).unwrap();
        assert!(fb.scrub_mb_s > 1.0, "freeblock scrubbed: {fb:?}");
        assert!(fb.iops >= KEEP_SHARE * none.iops, "freeblock keeps the foreground: {fb:?} against {none:?}");
        assert!(fb.eta_hours.is_some_and(|h| h > 0.0) && fb.scrubs_per_day > 0.0);
        let before = run_one(&disk, &c, a, Scheme::ZfsBefore).unwrap();
        let after = run_one(&disk, &c, a, Scheme::ZfsAfter).unwrap();
        assert!(before.scrub_mb_s > 0.0 && after.scrub_mb_s > 0.0);
        assert!(before.iops < after.iops && after.iops < none.iops, "the throttle helps, and still costs: {before:?} {after:?} {none:?}");
        // A closed loop with no think time leaves the disk no idle time: the idle class never runs.
        let idle = run_one(&disk, &c, a, Scheme::IdleClass).unwrap();
        assert_eq!((idle.scrub_mb_s, idle.eta_hours, idle.requests), (0.0, None, none.requests));
        let b = Foreground::OltpQd8;
        let none = run_one(&disk, &c, b, Scheme::None).unwrap();
        let fb = run_one(&disk, &c, b, Scheme::FreeblockFirmware).unwrap();
        assert!(fb.scrub_mb_s > 1.0 && fb.mean_ms <= none.mean_ms * (1.0 + MEAN_RESPONSE_SLACK), "{fb:?} against {none:?}");
    }

    #[test]
    fn the_sampled_scrub_is_paced_to_its_share() {
        let disk = drive(DRIVE).unwrap();
        let c = short();
        let capacity_bytes = disk.capacity() * u64::from(disk.spec().sector_bytes);
        // 5% of 14 TB a day is 8.1 MB/s: a MiB every 129 ms.
        let pause = sampled_pause_ms(capacity_bytes, 0.05, ZFS_READ_KIB);
        assert!((pause - 1_048_576.0 / (0.05 * capacity_bytes as f64 / 86_400.0) * 1e3).abs() < 1e-9);
        let row = run_one(&disk, &c, Foreground::RandomQd1, Scheme::ZfsSampled).unwrap();
        let wanted_mb_s = c.sample_share_per_day * capacity_bytes as f64 / 86_400.0 / 1e6;
        assert!(row.scrub_mb_s > 0.5 * wanted_mb_s && row.scrub_mb_s <= 1.1 * wanted_mb_s, "{row:?} against {wanted_mb_s} MB/s");
        assert!(row.sample_hours.is_some_and(|h| h >= 24.0 * 0.9), "paced to the share a day: {row:?}");
    }

    #[test]
    fn bad_knobs_are_named() {
        let d = ScrubReproConfig::default;
        let cases = [
            (ScrubReproConfig { seconds: 0.0, ..d() }, "--seconds"),
            (ScrubReproConfig { warmup_s: 100.0, ..d() }, "--warmup"),
            (ScrubReproConfig { fg_span: 1.5, ..d() }, "--fg-span"),
            (ScrubReproConfig { sample_share_per_day: f64::NAN, ..d() }, "--sample-share"),
            (ScrubReproConfig { idle_after_ms: -1.0, ..d() }, "--idle-after-ms"),
            (ScrubReproConfig { age_limit_ms: Some(-3.0), ..d() }, "age_limit_ms"),
        ];
        for (c, name) in cases {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(name), "{name}: {e}");
        }
        assert!(ScrubReproConfig::quick().validate().is_ok());
    }
}
