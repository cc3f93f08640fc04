//! What a FLUSH CACHE costs on a drive with a write-back cache (issue 34), as
//! `freeblock write-cache --disk NAME` prints it: N random 4 KB writes, back to back at queue
//! depth 1 (each completes in the cache), then one flush, timed; beside ublk-disksim's
//! measurement on the 2 TB desktop drive (`st2000dm006`), a flush after N scattered writes
//! taking about 28 + 9.4·N ms.
//!
//! ```text
//!  t=0   W W W … W (N × 4 KB, random, each done in ~µs: in the cache)    FLUSH ─────────► done
//!        │ the mechanism destages in the gaps it gets (few: the writes     │ flush cost: every
//!        │ come back to back, so most are still dirty at the flush)        │ dirty block written,
//!        ▼                                                                  ▼ nearest first
//! ```
//!
//! | column | meaning |
//! |---|---|
//! | N | writes before the flush |
//! | dirty | mean dirty 4 KB blocks when the flush arrived (N less what was destaged meanwhile) |
//! | flush ms | mean time from the flush's arrival to its completion, over the trials |
//! | per block | flush ms / dirty |
//! | published | 28 + 9.4·N ms |
//!
//! The runs use the drive's media model (`[cache]` off) with its `[write_cache]` switched to
//! write-back, the host scheduler FCFS and no firmware queue (one command at a time).

use std::sync::Arc;

use freeblock_disk::{Disk, Drive, Op, WriteCacheMode};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use freeblock::error::{Error, Result};
use freeblock::request::Request;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::commands::RequestList;
use freeblock::workload::ArrivalKind;

mod report;
pub use report::{report, WriteCacheSettings};

/// ublk-disksim's fit to its measured flushes on the 2 TB desktop drive: a fixed part, ms.
pub const PUBLISHED_FLUSH_BASE_MS: f64 = 28.0;

/// … and a part per dirty write, ms.
pub const PUBLISHED_FLUSH_PER_WRITE_MS: f64 = 9.4;

/// The write counts of the flush curve.
pub const FLUSH_WRITE_COUNTS: [u64; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// Trials (different random writes) averaged per write count.
pub const FLUSH_TRIALS: u32 = 20;

/// Within this fraction of the published figure a row "agrees".
pub const AGREEMENT: f64 = 0.25;

/// ublk-disksim's figure for a flush after `writes` scattered writes, ms.
#[must_use]
pub fn published_flush_ms(writes: u64) -> f64 {
    PUBLISHED_FLUSH_BASE_MS + PUBLISHED_FLUSH_PER_WRITE_MS * writes as f64
}

/// One point of the flush curve.
#[derive(Debug, Clone, Serialize)]
pub struct FlushRow {
    /// Writes before the flush.
    pub writes: u64,
    /// Trials averaged.
    pub trials: u32,
    /// Mean dirty blocks when the flush arrived.
    pub dirty_blocks: f64,
    /// Mean flush time, ms.
    pub flush_ms: f64,
    /// The shortest and longest flush of the trials, ms.
    pub min_ms: f64,
    /// See `min_ms`.
    pub max_ms: f64,
    /// `flush_ms / dirty_blocks` (0 with nothing dirty).
    pub per_block_ms: f64,
    /// ublk-disksim's 28 + 9.4·N, ms.
    pub published_ms: f64,
}

impl FlushRow {
    /// Whether the mean lies within [`AGREEMENT`] of the published figure.
    #[must_use]
    pub fn agrees(&self) -> bool {
        (self.flush_ms - self.published_ms).abs() <= AGREEMENT * self.published_ms
    }
}

/// `disk` as the flush runs use it: the media model with its `[write_cache]` write-back.
///
/// # Errors
/// [`Error::Config`] naming `write_cache` when the spec has none.
pub fn write_back_disk(disk: &Disk) -> Result<Arc<Disk>> {
    let spec = disk.spec().clone().without_cache().with_write_cache_mode(WriteCacheMode::WriteBack).map_err(|e| Error::Config { origin: "write_cache".into(), message: e.to_string() })?;
    Ok(Arc::new(Disk::new(spec)?))
}

/// `writes` random 4 KB-aligned writes over the whole of `disk`, from `seed`.
fn random_writes(disk: &Disk, writes: u64, seed: u64) -> Vec<Request> {
    let block = u64::from((4096 / disk.spec().sector_bytes).max(1));
    let blocks = disk.capacity() / block;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..writes).map(|_| Request::new(0, rng.gen_range(0..blocks) * block, block as u32, Op::Write)).collect()
}

/// The flush curve on `disk` (already write-back: [`write_back_disk`]): for each count, `trials`
/// runs of that many random writes and a flush through the engine.
///
/// # Errors
/// A request the engine refuses, or [`Error::Config`] when the engine's flush time and the
/// drive's own replay of the same commands disagree (they must be identical).
pub fn flush_curve(disk: &Arc<Disk>, counts: &[u64], trials: u32, seed: u64) -> Result<Vec<FlushRow>> {
    if !disk.spec().write_cache.is_some_and(|w| w.is_write_back()) {
        return Err(Error::Config { origin: "write_cache.mode".into(), message: format!("`{}` is not write-back: nothing stays dirty for a flush to write", disk.spec().name) });
    }
    let block = u64::from((4096 / disk.spec().sector_bytes).max(1));
    counts
        .iter()
        .map(|&writes| {
            let (mut sum_ms, mut sum_dirty, mut min_ms, mut max_ms) = (0.0, 0.0, f64::INFINITY, 0.0f64);
            for trial in 0..trials {
                let writes_list = random_writes(disk, writes, seed.wrapping_mul(1_000_003).wrapping_add(writes * 1000 + u64::from(trial)));
                let (flush_ns, dirty) = replay_on_drive(disk, &writes_list)?;
                let mut requests = writes_list;
                requests.push(Request::flush(0));
                let config = SimConfig { keep_records: true, ..SimConfig::default() };
                let report = Simulation::new(Arc::clone(disk), Box::new(RequestList::new(requests, ArrivalKind::ClosedDelay)), config).run(None)?;
                let flush = report.records.last().expect("the flush completes last");
                let engine_ns = flush.end_ns - flush.arrival_ns;
                if engine_ns != flush_ns {
                    return Err(Error::Config { origin: "write_cache".into(), message: format!("model fault: the engine's flush took {engine_ns} ns, the drive's replay {flush_ns} ns") });
                }
                let ms = flush_ns as f64 / 1e6;
                sum_ms += ms;
                sum_dirty += (dirty / block) as f64;
                min_ms = min_ms.min(ms);
                max_ms = max_ms.max(ms);
            }
            let flush_ms = sum_ms / f64::from(trials);
            let dirty_blocks = sum_dirty / f64::from(trials);
            let per_block_ms = if dirty_blocks > 0.0 { flush_ms / dirty_blocks } else { 0.0 };
            Ok(FlushRow { writes, trials, dirty_blocks, flush_ms, min_ms, max_ms, per_block_ms, published_ms: published_flush_ms(writes) })
        })
        .collect()
}

/// The same commands on a bare [`Drive`], back to back: the flush's time, ns, and the dirty
/// sectors when it arrived.
fn replay_on_drive(disk: &Arc<Disk>, writes: &[Request]) -> Result<(u64, u64)> {
    let mut drive = Drive::new(Arc::clone(disk));
    let mut now = 0;
    for (i, w) in writes.iter().enumerate() {
        now = drive.serve(now, w.lbn, u64::from(w.sectors), w.op).map_err(|source| Error::Request { index: i as u64, source })?.access.end;
    }
    let dirty = drive.dirty_sectors();
    let flush = drive.flush(now).map_err(|source| Error::Request { index: writes.len() as u64, source })?;
    Ok((flush.access.end - now, dirty))
}

/// Least-squares line through `(writes, flush_ms)`: `(intercept ms, ms per write)`.
#[must_use]
pub fn fit_line(rows: &[FlushRow]) -> (f64, f64) {
    let n = rows.len() as f64;
    let (sx, sy) = rows.iter().fold((0.0, 0.0), |(x, y), r| (x + r.writes as f64, y + r.flush_ms));
    let (mx, my) = (sx / n, sy / n);
    let (sxy, sxx) = rows.iter().fold((0.0, 0.0), |(a, b), r| (a + (r.writes as f64 - mx) * (r.flush_ms - my), b + (r.writes as f64 - mx).powi(2)));
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (my - slope * mx, slope)
}
