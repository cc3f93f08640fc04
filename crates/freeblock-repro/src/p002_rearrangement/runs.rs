//! The reproduction's runs on the engine: the `days` workload under the rearrangement policy
//! ([`freeblock::layout::rearrange`]) on the MK156F model, and the per-day metrics the paper's
//! tables report, computed from the runs' records as the paper's §3.1.5 and §4.2.1 computed them.

use std::path::PathBuf;
use std::sync::Arc;

use freeblock_disk::{library, Disk};
use serde::Serialize;

use freeblock::error::{Error, Result};
use freeblock::freeblock::{Freeblock, FreeblockConfig};
use freeblock::layout::rearrange::policy::{Moves, PeriodReport, Rearrange, RearrangeConfig, RearrangeReport, Schedule, TableChange, When};
use freeblock::layout::rearrange::{AreaConfig, Placement, TablePlace};
use freeblock::report::{Record, RunReport};
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{DaysSpec, TraceFormat, TraceSpec, Workload, WorkloadSpec};

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
