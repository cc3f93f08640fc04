//! # Paper 002: adaptive block rearrangement, reproduced
//!
//! Akyürek & Salem's driver (USENIX Summer 1993) copied the ~1000 hottest 8 KB blocks of a
//! Toshiba MK156F into 48 reserved cylinders in the middle of the disk, placed organ-pipe, every
//! other day, from the previous day's counts, and measured seek distances and times, service and
//! waiting times. We run the same policy ([`crate::layout::rearrange`]) on the same disk model
//! under a synthetic day-structured workload with the skew of their Fig. 5
//! ([`crate::workload::DaysSpec`]), with a C-LOOK driver queue (SunOS sorted its queue by
//! cylinder).
//!
//! | paper | what | ours |
//! |---|---|---|
//! | Tables 2–3 | four days, off/on/off/on: FCFS and actual seek distance, zero-length seeks, FCFS and actual seek time, service and waiting time; all requests and reads | [`tables_2_3`] |
//! | Tables 1–3, Fig. 5 | the request mix they imply (reads ≤ 28%, pinned at ~20% by Fig. 5; writes and a third of the reads on a metadata handful of one cylinder's blocks; writes in bursts of ~4; files read whole), for Tables 2–3 beside today's mix | [`paper_mix`] |
//! | §4.2.1 | where the head still moves on a day: every request that did not seek zero by kind (read or write, area or home, after area or home) | [`SeekCauses`] |
//! | Fig. 4 | seek distance and time against the number of rearranged blocks | [`figure_4`] |
//! | Tables 4–5 | organ-pipe, interleaved and serial placement | [`placements`] |
//! | Table 6 | rotational latency + transfer of reads per placement | from [`placements`] |
//! | — | moves as foreground I/O, in idle time, with free bandwidth, or at no cost | [`move_services`] |
//!
//! **How metrics are computed** (the paper's §3.1.5 and §4.2.1): a request's seek distance is
//! the cylinder distance from the previous request's first sector to its own, in arrival order
//! (FCFS) or in the order the disk served them (actual); seek *times* apply the disk's seek
//! function to those distances, as the paper did with Carson's function for this drive. Service
//! time is dispatch to completion, waiting time arrival to dispatch. Requests of the period in
//! which the area is filled are counted too (the paper measured whole days).

use std::path::PathBuf;
use std::sync::Arc;

use freeblock_disk::{library, Disk};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::freeblock::{Freeblock, FreeblockConfig};
use crate::layout::rearrange::policy::{Moves, PeriodReport, Rearrange, RearrangeConfig, RearrangeReport, Schedule, TableChange, When};
use crate::layout::rearrange::{AreaConfig, Placement, TablePlace};
use crate::report::{Record, RunReport};
use crate::sched::SchedulerSpec;
use crate::sim::{SimConfig, Simulation};
use crate::workload::{DaysSpec, TraceFormat, TraceSpec, Workload, WorkloadSpec};

/// One day's (period's) metrics, over all requests or over reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Metrics {
    /// Requests counted.
    pub requests: u64,
    /// Mean seek distance in arrival order, cylinders.
    pub fcfs_seek_distance: f64,
    /// Mean seek distance in service order, cylinders.
    pub seek_distance: f64,
    /// Share of zero-length seeks in service order, %.
    pub zero_seeks_pct: f64,
    /// Mean seek time in arrival order, ms (the seek function applied to the distances).
    pub fcfs_seek_ms: f64,
    /// Mean seek time in service order, ms.
    pub seek_ms: f64,
    /// Mean service time (dispatch to completion), ms.
    pub service_ms: f64,
    /// Mean waiting time (arrival to dispatch), ms.
    pub waiting_ms: f64,
}

impl Metrics {
    /// Mean rotational latency + transfer (+ overhead): service minus seek time (paper Table 6).
    #[must_use]
    pub fn rotation_transfer_ms(&self) -> f64 {
        self.service_ms - self.seek_ms
    }
}

/// One period of a run.
#[derive(Debug, Clone, Serialize)]
pub struct DayRow {
    /// Period (day) index.
    pub day: u64,
    /// Whether the area was in use.
    pub on: bool,
    /// All requests.
    pub all: Metrics,
    /// Reads only.
    pub reads: Metrics,
}

/// A whole run: per-day metrics and the policy's own report.
#[derive(Debug, Clone, Serialize)]
pub struct RunRows {
    /// A label.
    pub label: String,
    /// Per day.
    pub days: Vec<DayRow>,
    /// What the policy did.
    pub policy: RearrangeReport,
    /// Mean response time of the workload over the run, ms.
    pub response_ms: f64,
    /// Per day, where the head moved: the requests that did not seek zero, by what they were.
    pub causes: Vec<SeekCauses>,
}

/// Where a request was served: a copy in the reserved area, or the block's home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// A rearranged block's copy in the reserved cylinders.
    Area,
    /// A block's original location (not rearranged, or the area off).
    Home,
}

/// One kind of head movement: requests of one operation served at `to` whose predecessor (in
/// service order) was served at `from`, on another cylinder.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeekCause {
    /// Read or write.
    pub read: bool,
    /// Where this request was served.
    pub to: Place,
    /// Where the request before it was served.
    pub from: Place,
    /// Requests of this kind that moved the head.
    pub requests: u64,
    /// Their seek time summed, ms (the disk's seek function, as [`Metrics::seek_ms`]).
    pub seek_ms: f64,
}

/// A day's head movements in the paper's terms (§4.2.1: zero-length seeks, reads and writes,
/// rearranged blocks and blocks at home): every request that did not seek zero falls in exactly
/// one [`SeekCause`]. `100 − Σ requests / requests · 100` is the day's zero-length seek share, and
/// `Σ seek_ms / requests` its mean seek time, all requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SeekCauses {
    /// Day index.
    pub day: u64,
    /// Requests counted (all).
    pub requests: u64,
    /// Reads among them.
    pub reads: u64,
    /// Requests served at home, reads and writes.
    pub reads_at_home: u64,
    /// Writes served at home.
    pub writes_at_home: u64,
    /// Of the requests served at home, those whose block no request referenced the day before:
    /// no count of the day before could have placed them (rarely read blocks, the hot set's
    /// drift). The others were
    /// referenced but not among the blocks placed, or came while the area was being filled.
    pub at_home_unseen_before: u64,
    /// The head movements, largest seek time first.
    pub moved: Vec<SeekCause>,
}

impl SeekCauses {
    /// Share of all requests that moved the head in `c`, %.
    #[must_use]
    pub fn pct(&self, c: &SeekCause) -> f64 {
        100.0 * c.requests as f64 / self.requests.max(1) as f64
    }

    /// `c`'s part of the day's mean seek time (all requests), ms.
    #[must_use]
    pub fn ms(&self, c: &SeekCause) -> f64 {
        c.seek_ms / self.requests.max(1) as f64
    }
}

/// The paper's Table 2 (all requests) and Table 3 (reads), days 1–4 (off, on, off, on): FCFS seek
/// distance, seek distance, zero-length seeks %, FCFS seek ms, seek ms, service ms, waiting ms.
pub const PAPER_TABLE_2: [[f64; 7]; 4] = [
    [220.0, 173.0, 23.0, 20.92, 18.21, 38.41, 87.30],
    [225.0, 8.0, 88.0, 21.46, 1.55, 22.95, 50.03],
    [235.0, 183.0, 19.0, 22.33, 19.24, 39.71, 94.51],
    [228.0, 5.0, 92.0, 21.91, 0.98, 22.61, 48.82],
];
/// Table 3: the same for reads.
pub const PAPER_TABLE_3: [[f64; 7]; 4] = [
    [131.0, 123.0, 44.0, 12.97, 12.49, 30.99, 6.64],
    [165.0, 23.0, 67.0, 16.14, 4.49, 24.18, 5.47],
    [182.0, 170.0, 31.0, 17.24, 16.61, 35.32, 4.76],
    [192.0, 17.0, 72.0, 17.91, 3.54, 22.57, 4.46],
];
/// Table 4: organ-pipe, interleaved, serial; (all, reads) each; same seven metrics.
pub const PAPER_TABLE_4: [[[f64; 7]; 2]; 3] = [
    [[225.0, 8.0, 88.0, 21.46, 1.55, 22.95, 50.03], [165.0, 23.0, 67.0, 16.14, 4.49, 24.18, 5.47]],
    [[208.0, 15.0, 83.0, 20.02, 2.50, 23.71, 46.85], [144.0, 24.0, 61.0, 14.39, 5.86, 24.31, 5.14]],
    [[208.0, 22.0, 26.0, 20.02, 8.50, 28.53, 61.32], [142.0, 39.0, 39.0, 14.23, 8.57, 27.8, 6.32]],
];
/// Table 6: mean rotational latency + transfer of reads, ms, on two days each: without
/// rearrangement, organ-pipe, serial, interleaved.
pub const PAPER_TABLE_6: [(&str, f64, f64); 4] =
    [("none", 18.49, 18.72), ("organ_pipe", 19.71, 19.03), ("serial", 19.32, 19.26), ("interleaved", 18.45, 18.47)];
/// Fig. 4 / §4.2.2: "Rearranging blocks in excess of the hottest 200 blocks brings almost no
/// extra benefits."
pub const PAPER_FIG4_KNEE_BLOCKS: usize = 200;
/// §4.2.2 / §5: "Most of the benefits of block rearrangement are obtained by rearranging around
/// 1% of all the blocks on a disk."
pub const PAPER_KNEE_SHARE: f64 = 0.01;

/// Table 1: the MK156F's 8 KB blocks per cylinder (10 tracks × 34 sectors = 340 sectors, 21 whole
/// blocks of 16 sectors): organ-pipe puts the 21 hottest blocks on the centre cylinder.
pub const PAPER_BLOCKS_PER_CYLINDER: u32 = 21;
/// Fig. 5 (§4.2.2): "The 100 hottest blocks absorb around 90% of all the requests."
pub const PAPER_FIG5_TOP100_SHARE: f64 = 0.90;

/// The paper's request mix, each parameter derived from its tables (see [`paper_mix`]).
#[derive(Debug, Clone, Serialize)]
pub struct PaperMix {
    /// The `days` workload with the paper's mix (the other settings from the base given).
    pub spec: DaysSpec,
    /// Per on day (1-based, as the paper numbers them): the largest read share its Tables 2–3
    /// figures allow, from zero-length seeks and from seek times.
    pub read_share_bounds: Vec<(u64, f64, f64)>,
    /// Per on day: the writes' zero-length seeks (%) the tables imply at `spec.read_fraction`.
    pub writes_zero_seeks_pct: Vec<(u64, f64)>,
    /// Per day: the mean write burst the writes' waiting and service times imply.
    pub write_bursts: Vec<(u64, f64)>,
    /// Table 3: the reads' zero-length seeks, mean of the off days and of the on days, %.
    pub reads_zero_off_on_pct: (f64, f64),
    /// What the reads that reach the disk are, as shares of reads: of the handful, continuing a
    /// file, starting a file elsewhere.
    pub reads_handful_continuing_elsewhere: (f64, f64, f64),
    /// The share of all requests the 100 hottest blocks take under the derived mix (Fig. 5: ~90%,
    /// read off its curve; not an input here, a check).
    pub fig5_top100_share: f64,
}

/// The paper's request mix, derived from its own tables, on top of `base` (days, requests, rate,
/// drift and hot set size are kept). The tables are the paper's measurements of all requests
/// (Table 2) and of reads (Table 3); every "all requests" figure is `r · reads + (1 − r) · writes`.
///
/// | parameter | value | from |
/// |---|---|---|
/// | `read_fraction` | ≈ 0.20 | Tables 2–3, on days 2 and 4, bound it from above: writes cannot seek zero more than 100% of the time nor seek less than 0 ms, so `r ≤ (100 − all%) / (100 − reads%)` (day 2: 12/33 = 0.364, day 4: 8/28 = 0.286) and `r ≤ all ms / reads ms` (1.55/4.49 = 0.345, 0.98/3.54 = 0.277): writes ≥ 72%. At the bound day 4's writes would never move the head all day. Fig. 5 pins it: the 100 hottest blocks take ~90% of all requests, and the writes, on a handful, take more of them than the reads, so that share falls as `r` grows; `r` is where the mix below gives 90% (bisection over generated days), at most the bound |
/// | `write_top_blocks`, `write_top_share` | 21, ≈ 0.97 | At that `r`, writes seek zero `z_w = (all% − r · reads%) / (1 − r)` on the on days (93.3% and 96.6% at 0.20). Organ-pipe puts the 21 hottest blocks (one MK156F cylinder, Table 1) on the centre cylinder. A write elsewhere moves the head twice (out, and back for the request after it), so the writes' share on the 21 is `1 − (1 − z_w) / 2` at the smaller `z_w` |
/// | `metadata_handful` | true | `/usr` was exported read-only: its blocks never move, and writes to it can only be the server's metadata updates (inode access times), a handful of inode blocks, each one block, whose heat sums many files' use; so they are single blocks and the nightly drift leaves them |
/// | `read_sequential` | ≈ 0.55 | Table 3, off days 1 and 3: 44% and 31% of reads seek zero with every block at home, scattered: a read seeks zero there by following its file's previous block, so `c` = 37.5% of reads continue a file; on the rearranged days 67% and 72% (mean 69.5%) seek zero, the extra 32% being reads of the handful, where the head is (the writes keep it there). The remaining 30.5% start a file elsewhere; files of mean length `1 + c / 0.305` = 2.2 blocks, continuation probability `1 − 1 / 2.2` |
/// | `read_top_blocks`, `read_top_share` | 21, ≈ 0.51 | the reads of the handful are 32% of reads but one block each, so as file-read instants they are `0.32 / (0.32 + 0.305)` = 51% |
/// | `hot_blocks` | ≈ 820 ranks | Fig. 5: "fewer than 2000 blocks absorb all of the requests": the base's 1800 blocks stay about 1800 blocks: the handful and `(1800 − 21) / 2.2` files |
/// | `write_burst` | ≈ 4 | Tables 2–3, all four days: writes' waiting and service times, `(all − r · reads) / (1 − r)`. A write of a geometric burst of mean `m` finds on average `m − 1` writes of its burst ahead of it (the disk is otherwise nearly idle), so `m = 1 + wait / service`: 3.9, 4.0, 4.1, 3.9; the mean |
///
/// Fig. 5's "the 100 hottest blocks absorb around 90% of all the requests" is not an input: the
/// mix's share ([`PaperMix::fig5_top100_share`]) is printed beside it as a check.
#[must_use]
pub fn paper_mix(base: &DaysSpec) -> PaperMix {
    let at_bound = paper_mix_at(base, None);
    if at_bound.fig5_top100_share >= PAPER_FIG5_TOP100_SHARE {
        return at_bound;
    }
    // The top-100 share falls as the read share grows: bisect for Fig. 5's 90% below the bound.
    let (mut lo, mut hi) = (0.0, at_bound.spec.read_fraction);
    for _ in 0..READ_SHARE_STEPS {
        let mid = 0.5 * (lo + hi);
        if paper_mix_at(base, Some(mid)).fig5_top100_share >= PAPER_FIG5_TOP100_SHARE {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    paper_mix_at(base, Some(lo))
}

/// Requests of the generated day on which Fig. 5's top-100 share is measured.
const FIG5_SAMPLE_REQUESTS: u64 = 20_000;

/// Bisection steps for the paper's read share: 2⁻¹² of the bound, finer than one day's sampling
/// of Fig. 5's share can tell apart.
const READ_SHARE_STEPS: usize = 12;

/// [`paper_mix`] with the read share set rather than pinned by Fig. 5 (`None`: the tables'
/// bound): the other parameters derived at that share. A share above the bound would give writes
/// more than 100% zero-length seeks; it is taken as given.
#[must_use]
pub fn paper_mix_at(base: &DaysSpec, read_share: Option<f64>) -> PaperMix {
    // The on days are the paper's days 2 and 4 (index 1 and 3), the off days 1 and 3 (index 0
    // and 2); columns 2 and 4 are zero-length seeks (%) and seek time (ms).
    let (zero, seek) = (2, SEEK_COLUMN);
    let (on_days, off_days) = ([1usize, 3], [0usize, 2]);
    let read_share_bounds: Vec<(u64, f64, f64)> = on_days
        .iter()
        .map(|&d| {
            let (all, reads) = (PAPER_TABLE_2[d], PAPER_TABLE_3[d]);
            (d as u64 + 1, (100.0 - all[zero]) / (100.0 - reads[zero]), all[seek] / reads[seek])
        })
        .collect();
    let r = read_share.unwrap_or_else(|| read_share_bounds.iter().flat_map(|&(_, a, b)| [a, b]).fold(1.0, f64::min));
    let writes_zero_seeks_pct: Vec<(u64, f64)> = on_days.iter().map(|&d| (d as u64 + 1, (PAPER_TABLE_2[d][zero] - r * PAPER_TABLE_3[d][zero]) / (1.0 - r))).collect();
    let writes_zero = writes_zero_seeks_pct.iter().map(|w| w.1).fold(100.0, f64::min) / 100.0;
    // A write off the handful costs two moves of the head: its own and the next request's.
    let write_top_share = 1.0 - (1.0 - writes_zero.min(1.0)) / 2.0;
    let mean_of = |days: [usize; 2]| days.iter().map(|&d| PAPER_TABLE_3[d][zero]).sum::<f64>() / 2.0 / 100.0;
    let (reads_zero_off, reads_zero_on) = (mean_of(off_days), mean_of(on_days));
    // Reads: continuing a file (seek zero on every day), of the handful (seek zero once it sits
    // under the head, on the rearranged days), starting a file elsewhere (the rest).
    let continuing = reads_zero_off;
    let handful = (reads_zero_on - reads_zero_off).max(0.0);
    let elsewhere = (1.0 - continuing - handful).max(f64::EPSILON);
    let file_length = 1.0 + continuing / elsewhere;
    let read_sequential = 1.0 - 1.0 / file_length;
    let read_top_share = handful / (handful + elsewhere);
    let (service, waiting) = (5, 6);
    let writes_only = |all: f64, reads: f64| (all - r * reads) / (1.0 - r);
    let write_bursts: Vec<(u64, f64)> = (0..4)
        .map(|d| {
            let (all, reads) = (PAPER_TABLE_2[d], PAPER_TABLE_3[d]);
            (d as u64 + 1, 1.0 + writes_only(all[waiting], reads[waiting]) / writes_only(all[service], reads[service]))
        })
        .collect();
    let write_burst = write_bursts.iter().map(|b| b.1).sum::<f64>() / write_bursts.len() as f64;
    // The base's blocks stay that many blocks: the handful and files of `file_length` blocks.
    let handful_blocks = PAPER_BLOCKS_PER_CYLINDER;
    let hot_blocks = handful_blocks + (f64::from(base.hot_blocks.saturating_sub(handful_blocks)) / file_length).round() as u32;
    let spec = DaysSpec {
        hot_blocks,
        read_fraction: r,
        write_top_blocks: Some(PAPER_BLOCKS_PER_CYLINDER),
        write_top_share,
        read_top_blocks: Some(PAPER_BLOCKS_PER_CYLINDER),
        read_top_share,
        read_sequential,
        metadata_handful: true,
        write_burst,
        ..base.clone()
    };
    let fig5_top100_share = top100_share(&spec);
    PaperMix { spec, read_share_bounds, writes_zero_seeks_pct, write_bursts, reads_zero_off_on_pct: (100.0 * reads_zero_off, 100.0 * reads_zero_on), reads_handful_continuing_elsewhere: (handful, continuing, elsewhere), fig5_top100_share }
}

/// The share of all requests the 100 hottest blocks take under `spec`, estimated from a day of
/// its own requests (files make the per-block law differ from the per-rank one).
fn top100_share(spec: &DaysSpec) -> f64 {
    use crate::workload::Workload;
    // A fixed day, so that the derived mix does not depend on the run's length.
    let one_day = DaysSpec { days: 1, requests_per_day: FIG5_SAMPLE_REQUESTS, rate_per_s: None, ..spec.clone() };
    // Any disk with room for the hot set: the MK156F's logical disk beside the paper's area.
    let Ok(mut w) = one_day.build(16_297 * u64::from(spec.block_sectors.max(1)), 1) else { return f64::NAN };
    let mut counts: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    while let Ok(Some(r)) = w.next_request() {
        *counts.entry(r.lbn).or_default() += 1;
    }
    let mut c: Vec<u64> = counts.into_values().collect();
    c.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = c.iter().sum();
    c.iter().take(100).sum::<u64>() as f64 / total.max(1) as f64
}

/// Index of the seek time (ms) in the paper's table rows.
const SEEK_COLUMN: usize = 4;

/// What the reproduction runs.
#[derive(Debug, Clone, Serialize)]
pub struct RearrangementConfig {
    /// Disk (library name).
    pub disk: String,
    /// The workload (its `days` is the run length).
    pub workload: DaysSpec,
    /// The driver's queue discipline.
    pub scheduler: SchedulerSpec,
    /// Reserved area.
    pub area: AreaConfig,
    /// Fig. 4: numbers of blocks placed.
    pub fig4_blocks: Vec<usize>,
    /// Requests per day of the move-service comparison ([`move_services`]): a busier day than the
    /// paper's, so that the foreground passes by often enough for free bandwidth to matter.
    pub moves_requests_per_day: u64,
    /// Workload seed.
    pub seed: u64,
    /// The CloudPhysics VSCSI trace, if it is to be run too.
    pub trace: Option<PathBuf>,
    /// Simulations at once.
    pub threads: usize,
}

impl Default for RearrangementConfig {
    fn default() -> Self {
        Self {
            disk: "toshiba_mk156f".into(),
            // Writes in bursts (the paper's §4.2.1: UNIX writes back in bursts, which its waiting
            // times show) and a hot set that drifts slowly (its rearranged days 2 and 4 agree).
            workload: DaysSpec { write_burst: 8.0, drift: 0.05, ..DaysSpec::default() },
            scheduler: SchedulerSpec::Clook,
            // The table in the area's middle rather than at its start (the paper): free table
            // writes then pass where the head lingers. One slot either way.
            area: AreaConfig { table_at: TablePlace::Middle, ..AreaConfig::default() },
            fig4_blocks: vec![0, 10, 25, 50, 100, 200, 400, 700, 1017],
            moves_requests_per_day: 200_000,
            seed: 1,
            trace: None,
            threads: 2,
        }
    }
}

/// Computes per-day metrics from a run's records. `day_ns` is the period length; `home` maps a
/// logical sector to its home (original) physical sector, where the arrival-order (FCFS)
/// distances are measured: the paper's FCFS figures stay as high on rearranged days as on the
/// others (Table 2: 220–235 cylinders every day), so they are the seeks the request stream asks
/// for before the driver redirects or reorders anything.
#[must_use]
pub fn day_metrics(disk: &Disk, records: &[Record], day_ns: u64, periods: &[PeriodReport], home: &dyn Fn(u64) -> u64) -> Vec<DayRow> {
    let cyl = |lbn: u64| disk.target(lbn).map_or(0, |t| t.cylinder);
    let curve = disk.seek_curve();
    let seek_ms = |d: u32| if d == 0 { 0.0 } else { curve.time(d) as f64 / 1e6 };
    // Seek distance of each request in arrival order and in service order.
    let mut by_arrival: Vec<&Record> = records.iter().collect();
    by_arrival.sort_by_key(|r| (r.arrival_ns, r.id));
    let mut by_start: Vec<&Record> = records.iter().collect();
    by_start.sort_by_key(|r| (r.start_ns, r.id));
    let mut fcfs = std::collections::HashMap::with_capacity(records.len());
    let mut prev: Option<u32> = None;
    for r in &by_arrival {
        let c = cyl(home(r.lbn));
        fcfs.insert(r.id, prev.map_or(0, |p| p.abs_diff(c)));
        prev = Some(c);
    }
    let days = records.iter().map(|r| r.arrival_ns / day_ns.max(1)).max().map_or(0, |d| d + 1);
    #[derive(Default, Clone, Copy)]
    struct Acc {
        n: u64,
        fcfs_d: f64,
        d: f64,
        zero: u64,
        fcfs_s: f64,
        s: f64,
        service: f64,
        waiting: f64,
    }
    let mut acc = vec![[Acc::default(); 2]; days as usize];
    prev = None;
    for r in &by_start {
        let c = cyl(r.phys_lbn);
        let d = prev.map_or(0, |p| p.abs_diff(c));
        prev = Some(c);
        let f = fcfs[&r.id];
        let day = (r.arrival_ns / day_ns.max(1)) as usize;
        for (i, a) in acc[day].iter_mut().enumerate() {
            if i == 1 && !r.op.is_read() {
                continue;
            }
            a.n += 1;
            a.fcfs_d += f64::from(f);
            a.d += f64::from(d);
            a.zero += u64::from(d == 0);
            a.fcfs_s += seek_ms(f);
            a.s += seek_ms(d);
            a.service += (r.end_ns - r.start_ns) as f64 / 1e6;
            a.waiting += (r.start_ns - r.arrival_ns) as f64 / 1e6;
        }
    }
    let metrics = |a: &Acc| {
        let n = a.n.max(1) as f64;
        Metrics {
            requests: a.n,
            fcfs_seek_distance: a.fcfs_d / n,
            seek_distance: a.d / n,
            zero_seeks_pct: 100.0 * a.zero as f64 / n,
            fcfs_seek_ms: a.fcfs_s / n,
            seek_ms: a.s / n,
            service_ms: a.service / n,
            waiting_ms: a.waiting / n,
        }
    };
    acc.iter()
        .enumerate()
        .map(|(day, a)| DayRow {
            day: day as u64,
            on: periods.iter().any(|p| p.period == day as u64 && p.on && p.planned > 0),
            all: metrics(&a[0]),
            reads: metrics(&a[1]),
        })
        .collect()
}

/// Per day, the head movements of [`SeekCauses`]: requests in service order, each against the
/// one served before it; `in_area` says whether a physical sector lies in the reserved area.
#[must_use]
pub fn seek_causes(disk: &Disk, records: &[Record], day_ns: u64, in_area: &dyn Fn(u64) -> bool) -> Vec<SeekCauses> {
    let cyl = |lbn: u64| disk.target(lbn).map_or(0, |t| t.cylinder);
    let curve = disk.seek_curve();
    let mut by_start: Vec<&Record> = records.iter().collect();
    by_start.sort_by_key(|r| (r.start_ns, r.id));
    let place = |lbn: u64| if in_area(lbn) { Place::Area } else { Place::Home };
    // The logical blocks (first sectors) each day referenced.
    let mut seen: Vec<std::collections::HashSet<u64>> = Vec::new();
    for r in records {
        let day = (r.arrival_ns / day_ns.max(1)) as usize;
        if seen.len() <= day {
            seen.resize_with(day + 1, Default::default);
        }
        seen[day].insert(r.lbn);
    }
    let mut out: Vec<SeekCauses> = Vec::new();
    let mut prev: Option<(u32, Place)> = None;
    for r in by_start {
        let day = r.arrival_ns / day_ns.max(1);
        while out.len() as u64 <= day {
            out.push(SeekCauses { day: out.len() as u64, ..SeekCauses::default() });
        }
        let c = &mut out[day as usize];
        let (here, to) = (cyl(r.phys_lbn), place(r.phys_lbn));
        let read = r.op.is_read();
        c.requests += 1;
        c.reads += u64::from(read);
        if to == Place::Home {
            if read {
                c.reads_at_home += 1;
            } else {
                c.writes_at_home += 1;
            }
            let before = day.checked_sub(1).and_then(|d| seen.get(d as usize));
            c.at_home_unseen_before += u64::from(before.is_some_and(|b| !b.contains(&r.lbn)));
        }
        if let Some((was, from)) = prev.filter(|(was, _)| *was != here) {
            let ms = curve.time(was.abs_diff(here)) as f64 / 1e6;
            match c.moved.iter_mut().find(|m| m.read == read && m.to == to && m.from == from) {
                Some(m) => {
                    m.requests += 1;
                    m.seek_ms += ms;
                }
                None => c.moved.push(SeekCause { read, to, from, requests: 1, seek_ms: ms }),
            }
        }
        prev = Some((here, to));
    }
    for c in &mut out {
        c.moved.sort_by(|a, b| b.seek_ms.total_cmp(&a.seek_ms));
    }
    out
}

/// A run's rows, its table changes and when they took effect (for a costless replay), and the
/// engine's report.
pub type DaysRun = (RunRows, Vec<(When, TableChange)>, RunReport);

/// One rearrangement run of `workload` on `disk`.
///
/// # Errors
/// Setup errors (a bad area or workload), and whatever the run refuses.
pub fn run_days(disk: &Arc<Disk>, workload: &WorkloadSpec, seed: u64, scheduler: SchedulerSpec, policy: RearrangeConfig, day_ns: u64, label: &str) -> Result<DaysRun> {
    let rearrange = Rearrange::new(disk, policy)?;
    let w = workload.build(rearrange.area().logical_capacity(), seed)?;
    // Free-and-idle moves use freeblock's idle-time transfers once the disk has been idle this long.
    let freeblock = (policy.moves == Moves::FreeIdle).then(|| FreeblockConfig { idle_after_ms: Some(FREE_IDLE_AFTER_MS), stop_when_done: false, ..FreeblockConfig::default() });
    run_policy(disk, w, scheduler, rearrange, day_ns, label, freeblock)
}

/// How long the disk must have been idle before free-and-idle moves use it, ms.
pub const FREE_IDLE_AFTER_MS: f64 = 100.0;

fn run_policy(disk: &Arc<Disk>, w: Box<dyn Workload>, scheduler: SchedulerSpec, rearrange: Rearrange, day_ns: u64, label: &str, freeblock: Option<FreeblockConfig>) -> Result<DaysRun> {
    let area = rearrange.area().clone();
    let sim = SimConfig { scheduler, keep_records: true, ..SimConfig::default() };
    let mut simulation = Simulation::new(Arc::clone(disk), w, sim).with_layout(Box::new(rearrange));
    if let Some(config) = freeblock {
        simulation = simulation.with_freeblock(Freeblock::new(Arc::clone(disk), config)?);
    }
    let outcome = simulation.run_outcome(None)?;
    let policy = outcome.layout.and_then(|l| l.into_any().downcast::<Rearrange>().ok()).ok_or_else(|| Error::Config { origin: "rearrangement".into(), message: "the run lost its policy".into() })?;
    let report = policy.rearrange_report();
    let home = |lbn: u64| area.to_physical(lbn).unwrap_or(lbn);
    let days = day_metrics(disk, &outcome.report.records, day_ns, &report.periods, &home);
    let hidden = area.lbns();
    let causes = seek_causes(disk, &outcome.report.records, day_ns, &|lbn| hidden.contains(&lbn));
    let rows = RunRows { label: label.into(), days, policy: report, response_ms: outcome.report.response.mean_ms, causes };
    Ok((rows, policy.changes().to_vec(), outcome.report))
}

/// The policy of the reproduction's runs: the configured area, one period a day, days
/// alternating off and on, organ-pipe, moves as foreground I/O.
#[must_use]
pub fn base_policy(cfg: &RearrangementConfig) -> RearrangeConfig {
    RearrangeConfig { area: cfg.area, period_s: cfg.workload.day_s, schedule: Schedule::Alternate, ..RearrangeConfig::default() }
}

/// Tables 2–3: the configured days, alternately off and on, organ-pipe, moves as foreground I/O.
///
/// # Errors
/// As [`run_days`].
pub fn tables_2_3(cfg: &RearrangementConfig) -> Result<RunRows> {
    let disk = library::media(&cfg.disk)?;
    let w = WorkloadSpec::Days(cfg.workload.clone());
    Ok(run_days(&disk, &w, cfg.seed, cfg.scheduler, base_policy(cfg), cfg.workload.day_ns(), "tables 2-3")?.0)
}

/// Two days (off, then on) per setting: the second day's metrics.
fn two_day_runs(cfg: &RearrangementConfig, settings: &[(String, RearrangeConfig)], tick: &(dyn Fn(usize) + Sync)) -> Result<Vec<RunRows>> {
    let disk = library::media(&cfg.disk)?;
    let w = WorkloadSpec::Days(DaysSpec { days: 2, ..cfg.workload.clone() });
    let day_ns = cfg.workload.day_ns();
    let out = crate::parallel::map_in_order(settings, cfg.threads, |(label, p)| run_days(&disk, &w, cfg.seed, cfg.scheduler, *p, day_ns, label).map(|r| r.0), tick);
    out.into_iter().collect()
}

/// Fig. 4: the number of blocks placed on the on day.
///
/// # Errors
/// As [`run_days`].
pub fn figure_4(cfg: &RearrangementConfig, tick: &(dyn Fn(usize) + Sync)) -> Result<Vec<(usize, RunRows)>> {
    let settings: Vec<(String, RearrangeConfig)> = cfg.fig4_blocks.iter().map(|&n| (format!("{n} blocks"), RearrangeConfig { blocks: Some(n), ..base_policy(cfg) })).collect();
    let rows = two_day_runs(cfg, &settings, tick)?;
    Ok(cfg.fig4_blocks.iter().copied().zip(rows).collect())
}

/// Tables 4–6: organ-pipe, interleaved (interleave 1, the 50% successor rule) and serial.
///
/// # Errors
/// As [`run_days`].
pub fn placements(cfg: &RearrangementConfig, tick: &(dyn Fn(usize) + Sync)) -> Result<Vec<RunRows>> {
    let settings: Vec<(String, RearrangeConfig)> = [
        ("organ_pipe", Placement::OrganPipe),
        ("interleaved", Placement::Interleaved { interleave: 1, successor_ratio: 0.5 }),
        ("serial", Placement::Serial),
    ]
    .into_iter()
    .map(|(l, p)| (l.to_string(), RearrangeConfig { placement: p, ..base_policy(cfg) }))
    .collect();
    two_day_runs(cfg, &settings, tick)
}

/// Ours: the on day with moves served four ways, and the free run's foreground compared request
/// by request with a replay of its table changes at no cost.
#[derive(Debug, Clone, Serialize)]
pub struct MoveServices {
    /// One run per service: foreground, idle, free, free and idle, instant.
    pub runs: Vec<RunRows>,
    /// Requests of the free run whose response time differs from the zero-cost replay's.
    pub free_vs_costless_differing: u64,
    /// Requests compared.
    pub compared: u64,
    /// Largest difference, ns.
    pub max_difference_ns: u64,
    /// Foreground requests freeblock delayed (its own count; 0 means free).
    pub delayed_foreground: u64,
}

/// Ours beyond the paper: how the moves are served.
///
/// # Errors
/// As [`run_days`].
pub fn move_services(cfg: &RearrangementConfig, tick: &(dyn Fn(usize) + Sync)) -> Result<MoveServices> {
    let disk = library::media(&cfg.disk)?;
    let w = WorkloadSpec::Days(DaysSpec { days: 2, requests_per_day: cfg.moves_requests_per_day, ..cfg.workload.clone() });
    let day_ns = cfg.workload.day_ns();
    let kinds = [Moves::Foreground, Moves::Idle, Moves::Free, Moves::FreeIdle, Moves::Instant];
    let results = crate::parallel::map_in_order(&kinds, cfg.threads, |&m| run_days(&disk, &w, cfg.seed, cfg.scheduler, RearrangeConfig { moves: m, ..base_policy(cfg) }, day_ns, &format!("{m:?}").to_lowercase()), tick);
    let mut runs = Vec::new();
    let mut free = None;
    for (m, r) in kinds.iter().zip(results) {
        let (rows, changes, report) = r?;
        if *m == Moves::Free {
            free = Some((changes, report));
        }
        runs.push(rows);
    }
    let (changes, free_report) = free.expect("the free run is among the kinds");
    let replay = Rearrange::replaying(&disk, base_policy(cfg), changes)?;
    let wl = w.build(replay.area().logical_capacity(), cfg.seed)?;
    let (_, _, replay_report) = run_policy(&disk, wl, cfg.scheduler, replay, day_ns, "costless replay", None)?;
    let (mut differing, mut max_diff) = (0u64, 0u64);
    let replay_resp: std::collections::HashMap<u64, u64> = replay_report.records.iter().map(|r| (r.id, r.end_ns - r.arrival_ns)).collect();
    for r in &free_report.records {
        let a = r.end_ns - r.arrival_ns;
        let b = replay_resp.get(&r.id).copied().unwrap_or(u64::MAX);
        if a != b {
            differing += 1;
            max_diff = max_diff.max(a.abs_diff(b));
        }
    }
    Ok(MoveServices {
        runs,
        free_vs_costless_differing: differing,
        compared: free_report.records.len() as u64,
        max_difference_ns: max_diff,
        delayed_foreground: free_report.freeblock.map_or(0, |f| f.delayed_foreground),
    })
}

/// The CloudPhysics trace on a modern disk: how its addresses are mapped, and the area.
#[derive(Debug, Clone, Serialize)]
pub struct TraceSetup {
    /// Disk.
    pub disk: String,
    /// Period length, s.
    pub period_s: f64,
    /// Reserved area.
    pub area: AreaConfig,
    /// How the trace's addresses are mapped.
    pub mapping: String,
}

/// The CloudPhysics VSCSI trace (two hours of a VM disk) on the HGST Ultrastar He8: the volume's
/// sectors are the disk's first sectors (identity), the reserved area is centred on the cylinders
/// the volume occupies, periods of 30 minutes alternate off and on.
///
/// # Errors
/// The trace cannot be read, or setup errors.
pub fn cloudphysics(cfg: &RearrangementConfig, path: &std::path::Path, tick: &(dyn Fn(usize) + Sync)) -> Result<(TraceSetup, Vec<RunRows>)> {
    let disk = library::media("ultrastar_he8")?;
    // The volume spans sectors 0..65,595,456 (README of the trace): its middle cylinder.
    let volume_end = 65_595_456u64;
    let mid = disk.target(volume_end / 2).map_err(|source| Error::Request { index: 0, source })?.cylinder;
    let area = AreaConfig { cylinders: 2, first_cylinder: Some(mid - 1), block_sectors: 8, table_slots: 4, table_at: TablePlace::Middle };
    let period_s = 1800.0;
    let setup = TraceSetup {
        disk: "ultrastar_he8".into(),
        period_s,
        area,
        mapping: format!("identity: trace sector s is disk sector s (the 33.6 GB volume is the disk's first cylinders); the area (2 cylinders, 4 KB blocks) is centred on the volume, at cylinder {}", mid - 1),
    };
    let spec = TraceSpec::new(path, TraceFormat::Vscsi);
    let settings: Vec<(String, Placement)> = vec![
        ("organ_pipe".into(), Placement::OrganPipe),
        ("interleaved".into(), Placement::Interleaved { interleave: 0, successor_ratio: 0.5 }),
        ("serial".into(), Placement::Serial),
    ];
    let out = crate::parallel::map_in_order(
        &settings,
        cfg.threads,
        |(label, placement)| -> Result<RunRows> {
            let policy = RearrangeConfig { area, period_s, placement: *placement, schedule: Schedule::Alternate, ..RearrangeConfig::default() };
            let rearrange = Rearrange::new(&disk, policy)?;
            let w: Box<dyn Workload> = Box::new(spec.open(rearrange.area().logical_capacity())?);
            Ok(run_policy(&disk, w, cfg.scheduler, rearrange, freeblock_disk::time::ms_to_ns(period_s * 1e3), label, None)?.0)
        },
        tick,
    );
    Ok((setup, out.into_iter().collect::<Result<_>>()?))
}
