//! What a firmware queue does to a drive (issue 34), as `freeblock firmware-queue --disk NAME`
//! prints it:
//!
//! | experiment | workload | published figure beside it |
//! |---|---|---|
//! | [`random_read_depths`] | random 4 KB reads over the whole disk, `QD` outstanding (closed), QD 1 … 32 | QD32 gives 1.6–1.7× the IOPS of QD1 on a 2 TB desktop drive (ublk-disksim's validation) |
//! | [`sequential_starves_random`] | one sequential reader (128 KB reads, 16 outstanding) beside 4 random 4 KB readers | 1–4 s worst random read at deep queue, cured by `queue_depth=1` (openzfs/zfs#10253, #15270) |
//!
//! Both run the drive's media model (its on-disk cache off), with the host scheduler FCFS: every
//! reordering is the firmware's.

use std::sync::Arc;

use freeblock_disk::{Disk, Op, SimTime};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use freeblock::error::Result;
use freeblock::firmware::FirmwareQueue;
use freeblock::request::Request;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{ArrivalKind, RandomSpec, SizeDist, Workload, WorkloadError, WorkloadSpec};

mod report;
pub use report::{report, FirmwareQueueSettings};

/// The queue depths of the random-read curve.
pub const QUEUE_DEPTHS: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// ublk-disksim's validation on a 2 TB desktop drive: random 4 KB reads at QD32 give this much
/// the IOPS of QD1 (low, high).
pub const PUBLISHED_QD32_GAIN: (f64, f64) = (1.6, 1.7);

/// openzfs/zfs#10253 and #15270: the worst random-read latency users saw beside a sequential
/// reader at deep queue, seconds (low, high).
pub const PUBLISHED_STARVATION_S: (f64, f64) = (1.0, 4.0);

/// The drive's queue in these experiments: NCQ's 32 commands.
pub const DRIVE_QUEUE_DEPTH: u32 = 32;

/// One point of the random-read curve.
#[derive(Debug, Clone, Serialize)]
pub struct DepthRow {
    /// Requests outstanding (the host keeps this many at the drive).
    pub queue_depth: u32,
    /// Requests measured (after the warm-up).
    pub requests: u64,
    /// Completed reads per second.
    pub iops: f64,
    /// Mean response, ms.
    pub mean_ms: f64,
    /// 99th-percentile response, ms.
    pub p99_ms: f64,
    /// IOPS over the QD 1 row's.
    pub gain_over_qd1: f64,
}

/// The number of sectors in 4 KB on `disk` (at least one).
fn sectors_4k(disk: &Disk) -> u32 {
    (4096 / disk.spec().sector_bytes).max(1)
}

/// Random 4 KB reads on `disk` at each of `depths` outstanding (closed loop, host FCFS, a
/// 32-command firmware queue with `age_limit_ms`), `requests` measured per depth after a warm-up
/// of `10 × depth`.
///
/// # Errors
/// Setup errors (a depth outside 1 ..= 32, a bad age limit).
pub fn random_read_depths(disk: &Arc<Disk>, depths: &[u32], requests: u64, age_limit_ms: Option<f64>, seed: u64) -> Result<Vec<DepthRow>> {
    let sectors = sectors_4k(disk);
    let mut rows: Vec<DepthRow> = Vec::with_capacity(depths.len());
    for &qd in depths {
        let warmup = 10 * u64::from(qd);
        let spec = RandomSpec { count: Some(requests + warmup), size: SizeDist::Fixed { sectors }, read_fraction: 1.0, alignment_sectors: u64::from(sectors), rate_per_s: None };
        let workload = WorkloadSpec::Random(spec).build(disk.capacity(), seed)?;
        let config = SimConfig { scheduler: SchedulerSpec::Fcfs, mpl: qd, warmup, firmware: Some(FirmwareQueue::new(DRIVE_QUEUE_DEPTH, age_limit_ms)), ..SimConfig::default() };
        let report = Simulation::new(Arc::clone(disk), workload, config).run(None)?;
        let qd1 = rows.first().map_or(report.throughput_per_s, |r| r.iops);
        rows.push(DepthRow {
            queue_depth: qd,
            requests: report.requests,
            iops: report.throughput_per_s,
            mean_ms: report.response.mean_ms,
            p99_ms: report.response.p99_ms,
            gain_over_qd1: report.throughput_per_s / qd1,
        });
    }
    Ok(rows)
}

/// A sequential reader beside random readers, as closed-loop streams: streams `0 .. sequential`
/// read the disk in order in `chunk_sectors` pieces from one shared position (a reader with that
/// many reads in flight), wrapping at the end; the others read `random_sectors` at uniform
/// aligned places. Endless: the run ends by its time limit.
pub struct SequentialBesideRandom {
    sequential: u32,
    chunk_sectors: u32,
    random_sectors: u32,
    capacity: u64,
    next_sequential: u64,
    rng: ChaCha8Rng,
}

impl SequentialBesideRandom {
    /// `sequential` streams share the sequential reader; every other stream reads at random.
    #[must_use]
    pub fn new(capacity: u64, sequential: u32, chunk_sectors: u32, random_sectors: u32, seed: u64) -> Self {
        Self { sequential, chunk_sectors, random_sectors, capacity, next_sequential: 0, rng: ChaCha8Rng::seed_from_u64(seed) }
    }
}

impl Workload for SequentialBesideRandom {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        self.next_request_for(self.sequential)
    }

    fn next_request_for(&mut self, stream: u32) -> Result<Option<Request>, WorkloadError> {
        let (lbn, sectors) = if stream < self.sequential {
            let chunk = u64::from(self.chunk_sectors);
            if self.next_sequential + chunk > self.capacity {
                self.next_sequential = 0;
            }
            let lbn = self.next_sequential;
            self.next_sequential += chunk;
            (lbn, self.chunk_sectors)
        } else {
            let unit = u64::from(self.random_sectors);
            (self.rng.gen_range(0..self.capacity / unit) * unit, self.random_sectors)
        };
        Ok(Some(Request { time: 0, lbn, sectors, op: Op::Read, measured: None, fua: false }))
    }

    fn arrival(&self) -> ArrivalKind {
        ArrivalKind::Closed
    }

    fn is_endless(&self) -> bool {
        true
    }
}

/// Reads the sequential reader keeps in flight.
pub const SEQUENTIAL_IN_FLIGHT: u32 = 16;
/// The sequential reader's read size, bytes.
pub const SEQUENTIAL_READ_BYTES: u32 = 128 * 1024;
/// Random 4 KB readers beside it.
pub const RANDOM_READERS: u32 = 4;

/// What the random reads met beside the sequential reader.
#[derive(Debug, Clone, Serialize)]
pub struct StarvationRow {
    /// The drive's queue depth (1: no reordering at the drive).
    pub queue_depth: u32,
    /// The firmware's age limit, ms (`None`: none).
    pub age_limit_ms: Option<f64>,
    /// Random reads completed.
    pub random_reads: u64,
    /// Their mean response, ms.
    pub random_mean_ms: f64,
    /// Their 99th-percentile response, ms.
    pub random_p99_ms: f64,
    /// The worst of them, ms.
    pub random_worst_ms: f64,
    /// The sequential reader's rate, MB/s.
    pub sequential_mb_s: f64,
    /// The longest single access (seek + rotation + transfer + overhead) of the run, ms.
    pub longest_access_ms: f64,
    /// What the age limit guarantees a command that reaches the drive with nothing waiting in
    /// the host: served within the limit plus one access for each command it can wait behind
    /// (the one in service and those received before it: `queue_depth` in all), plus its own,
    /// with the run's longest access for each, ms. `None` without an age limit.
    pub age_bound_ms: Option<f64>,
}

/// Runs [`SequentialBesideRandom`] (a sequential reader of [`SEQUENTIAL_IN_FLIGHT`] ×
/// [`SEQUENTIAL_READ_BYTES`] beside [`RANDOM_READERS`] random 4 KB readers) on `disk` for
/// `seconds` of simulated time with the drive's queue `queue_depth` deep and `age_limit_ms`.
///
/// # Errors
/// Setup errors (a depth outside 1 ..= 32, a bad age limit).
pub fn sequential_starves_random(disk: &Arc<Disk>, queue_depth: u32, age_limit_ms: Option<f64>, seconds: f64, seed: u64) -> Result<StarvationRow> {
    let sector_bytes = disk.spec().sector_bytes;
    let chunk = (SEQUENTIAL_READ_BYTES / sector_bytes).max(1);
    let workload = SequentialBesideRandom::new(disk.capacity(), SEQUENTIAL_IN_FLIGHT, chunk, sectors_4k(disk), seed);
    let random_sectors = sectors_4k(disk);
    let config = SimConfig {
        scheduler: SchedulerSpec::Fcfs,
        mpl: SEQUENTIAL_IN_FLIGHT + RANDOM_READERS,
        max_time_s: seconds,
        keep_records: true,
        firmware: Some(FirmwareQueue::new(queue_depth, age_limit_ms)),
        ..SimConfig::default()
    };
    let report = Simulation::new(Arc::clone(disk), Box::new(workload), config).run(None)?;
    let ms = |ns: SimTime| ns as f64 / 1e6;
    let mut random: Vec<SimTime> = Vec::new();
    let mut sequential_sectors = 0u64;
    let mut longest_access: SimTime = 0;
    for r in &report.records {
        longest_access = longest_access.max(r.end_ns - r.start_ns);
        if r.sectors == random_sectors {
            random.push(r.end_ns - r.arrival_ns);
        } else {
            sequential_sectors += u64::from(r.sectors);
        }
    }
    random.sort_unstable();
    let quantile = |q: f64| random.get(((random.len() as f64 * q).ceil() as usize).saturating_sub(1)).map_or(0.0, |&ns| ms(ns));
    let duration_s = report.duration_ns as f64 / 1e9;
    Ok(StarvationRow {
        queue_depth,
        age_limit_ms,
        random_reads: random.len() as u64,
        random_mean_ms: if random.is_empty() { 0.0 } else { random.iter().map(|&ns| ms(ns)).sum::<f64>() / random.len() as f64 },
        random_p99_ms: quantile(0.99),
        random_worst_ms: quantile(1.0),
        sequential_mb_s: if duration_s > 0.0 { sequential_sectors as f64 * f64::from(sector_bytes) / 1e6 / duration_s } else { 0.0 },
        longest_access_ms: ms(longest_access),
        age_bound_ms: age_limit_ms.filter(|_| queue_depth > 1).map(|limit| limit + f64::from(queue_depth + 1) * ms(longest_access)),
    })
}
