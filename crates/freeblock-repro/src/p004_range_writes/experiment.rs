//! Measurements: the `1 − 1/k` theory check, and paper 004's Experiments 1 and 2.
//!
//! **Theory check** ([`theory_check_writes`], [`theory_check_reads`]). Each trial picks a random
//! track of a zone, a random phase, a head arriving from a random other cylinder and a random start
//! time (uniform over a thousand revolutions, so the head's angle is uniform). For every `k` the
//! same trial is offered `k` candidates (writes: [`offer_equidistant_on_track`]; reads: `k` copies
//! a `1/k` revolution apart on `k` surfaces of one cylinder, entered with
//! [`BlockMap::add_copy`]), the device selects locally, and the rotational latency of the choice
//! is averaged. Theory: `rev/(2k)`.
//!
//! **Experiments 1 and 2** ([`experiment1`], [`experiment2`], [`run_offsets`]): paper 004 §5 on
//! the HP C2249A. 10,000 writes of 10 sectors at uniformly random LBNs of the first zone arrive at
//! a constant rate and are served FCFS by a [`Drive`]; every write gets one alternative `offset`
//! sectors after the original, and the device picks the one with the least positioning time. Two
//! placements of the alternative are measured:
//!
//! * **LBN offset** — the alternative is LBN `original + offset`, as in the paper. Past the end of
//!   the original's track it lands on the next track, which is skewed (14 sectors on this disk) and
//!   costs a head switch; that is why this curve peaks below half a track and below 50%.
//! * **same track** — the alternative is `offset` sectors further round the *same* track
//!   (wrapping), the mechanical ideal whose rotational reduction is `2f(1 − f)` for
//!   `f = offset/spt`: 50% at half a track.
//!
//! The arrival interval defaults to [`PAPER_INTERARRIVAL_MS`] (one write every 22 ms, 45.5 writes/s),
//! which keeps the disk about 73% busy without range writes (mean service ≈ 16.2 ms) and about 61%
//! with the best alternative; it never saturates.
//! Positioning time is seek + settle + rotational latency to the request's first sector;
//! rotational latency is the wait for that sector after the seek.
//!
//! What the exact model gives (seeded, so these repeat): without an alternative, 5.55 ms mean
//! rotational latency (half of the 11.11 ms revolution) and 14.0 ms positioning. Experiment 1's
//! best LBN offset is 42 sectors: −49.1% rotational, −19.4% positioning (the paper: best at
//! offsets 40–45, −32% and −16%). Same-track placement peaks at half a track with −50%, as the
//! mechanics say. Experiment 2's curve repeats every track, shifted by the 14-sector track skew,
//! and follows the geometric theory column to within a percentage point.

use std::sync::Arc;

use freeblock_disk::{library, Disk, Drive, HeadState, Op, Pbn, SimTime};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use freeblock::layout::alloc::{offer_equidistant_on_track, Track};
use freeblock::layout::map::{BlockMap, Candidates, MapConfig, WriteRequest};
use freeblock::layout::error::{LayoutError, Result};
use freeblock::rangewrite::select::{flex_read, select, select_write, Criterion};

/// The constant arrival interval of Experiments 1 and 2, ms (≈ 73% utilisation without range
/// writes on the HP C2249A's first zone).
pub const PAPER_INTERARRIVAL_MS: f64 = 22.0;

fn ns_ms(ns: f64) -> f64 {
    ns / 1e6
}

/// `(first cylinder, last cylinder, sectors per track, first LBN, LBN count)` of a zone.
fn zone(disk: &Disk, zone: usize) -> Result<(u32, u32, u32, u64, u64)> {
    let table = disk.layout().zone_table();
    table.get(zone).copied().ok_or_else(|| LayoutError::Config {
        field: "zone",
        message: format!("zone {zone} does not exist (the disk has {} zones)", table.len()),
    })
}

// ─────────────────────────────────────────────────────────────────────────── theory check ──

/// Parameters of the theory check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TheoryConfig {
    /// Built-in disk name. Default `hp_c2249a`.
    pub disk: String,
    /// Zone whose tracks the trials use. Default 0.
    pub zone: usize,
    /// Largest `k`; rows are `k = 1..=max_k`. Default 8.
    pub max_k: u32,
    /// Trials per `k` (the same trials for every `k`). Default 20,000.
    pub trials: u32,
    /// Sectors per access. Default 8 (4 KB).
    pub sectors: u64,
    /// Random seed. Default 4.
    pub seed: u64,
}

impl Default for TheoryConfig {
    fn default() -> Self {
        Self { disk: "hp_c2249a".into(), zone: 0, max_k: 8, trials: 20_000, sectors: 8, seed: 4 }
    }
}

/// One row of the theory check.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TheoryRow {
    /// Candidates (writes) or copies (reads).
    pub k: u32,
    /// Measured mean rotational latency, ms.
    pub ours_ms: f64,
    /// `rev / (2k)`, ms.
    pub theory_ms: f64,
    /// `1 − ours(k) / ours(1)`.
    pub reduction_ours: f64,
    /// `1 − 1/k`.
    pub reduction_theory: f64,
}

/// One random trial: where the candidates go, where the head comes from and when.
#[derive(Debug, Clone, Copy)]
struct Trial {
    cylinder: u32,
    surface: u32,
    /// Sector of the first candidate on `(cylinder, surface)`.
    phase: u32,
    from: HeadState,
    start: SimTime,
}

/// Starts of `k` copies of a `sectors`-sector extent, copy `i` on surface `surface + i` (mod the
/// surfaces) at `i/k` of a revolution after the trial's phase; `None` when one is missing or two
/// overlap.
fn copy_starts(disk: &Disk, t: &Trial, k: u32, sectors: u64) -> Option<Vec<u64>> {
    let layout = disk.layout();
    let spt = layout.sectors_per_track(t.cylinder);
    let rev = disk.revolution_ps() as f64;
    let a0 = layout.sector_start(t.cylinder, t.surface, t.phase) as f64 / rev;
    let mut out: Vec<u64> = Vec::with_capacity(k as usize);
    for i in 0..k {
        let surface = (t.surface + i) % layout.surfaces();
        let a = a0 + f64::from(i) / f64::from(k);
        let off = layout.sector_start(t.cylinder, surface, 0) as f64 / rev;
        let sector = (((a - off) * f64::from(spt)).round() as i64).rem_euclid(i64::from(spt)) as u32;
        let lbn = layout.pbn_to_lbn(Pbn { cylinder: t.cylinder, surface, sector })?;
        if out.iter().any(|&o| lbn < o + sectors && o < lbn + sectors) {
            return None;
        }
        out.push(lbn);
    }
    Some(out)
}

/// Draws the trials, keeping only those every `k` can use.
fn trials(disk: &Disk, cfg: &TheoryConfig, region_end: u64) -> Result<Vec<Trial>> {
    let (c_lo, c_hi, spt, _, _) = zone(disk, cfg.zone)?;
    if cfg.max_k == 0 || cfg.trials == 0 || cfg.sectors == 0 {
        return Err(LayoutError::Config {
            field: "theory",
            message: "max_k, trials and sectors must be positive".into(),
        });
    }
    if u64::from(cfg.max_k) * cfg.sectors > u64::from(spt) {
        return Err(LayoutError::Config {
            field: "max_k",
            message: format!("{} candidates of {} sectors do not fit on a {spt}-sector track", cfg.max_k, cfg.sectors),
        });
    }
    let layout = disk.layout();
    let surfaces = layout.surfaces();
    let cylinders = layout.cylinders();
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let horizon = disk.revolution_ns() * 1000;
    let mut out = Vec::with_capacity(cfg.trials as usize);
    let mut attempts = 0u64;
    while out.len() < cfg.trials as usize {
        attempts += 1;
        if attempts > 100 * u64::from(cfg.trials) + 10_000 {
            return Err(LayoutError::NoSpace { what: format!("usable tracks in zone {}", cfg.zone) });
        }
        let cylinder = rng.gen_range(c_lo..=c_hi);
        let from_cyl = rng.gen_range(0..cylinders);
        let t = Trial {
            cylinder,
            surface: rng.gen_range(0..surfaces),
            phase: rng.gen_range(0..spt),
            from: HeadState { cylinder: from_cyl, surface: rng.gen_range(0..surfaces) },
            start: rng.gen_range(0..horizon),
        };
        // Every surface of the cylinder holds data inside the region (no spare tracks), and the
        // seek from the head's cylinder costs at least a head switch, so every surface of the
        // cylinder is equally far for the head.
        let whole = (0..surfaces).all(|s| {
            [0, spt - 1].iter().all(|&sector| {
                layout.pbn_to_lbn(Pbn { cylinder, surface: s, sector }).is_some_and(|l| l + cfg.sectors <= region_end)
            })
        });
        if !whole || disk.seek_curve().between(from_cyl, cylinder) < disk.head_switch_ns() {
            continue;
        }
        if (1..=cfg.max_k).all(|k| copy_starts(disk, &t, k, cfg.sectors).is_some()) {
            out.push(t);
        }
    }
    Ok(out)
}

fn theory_rows(disk: &Disk, cfg: &TheoryConfig, mut measure: impl FnMut(u32) -> Result<f64>) -> Result<Vec<TheoryRow>> {
    let rev_ms = ns_ms(disk.revolution_ps() as f64 / 1000.0);
    let mut rows: Vec<TheoryRow> = Vec::with_capacity(cfg.max_k as usize);
    for k in 1..=cfg.max_k {
        let ours_ms = measure(k)?;
        let base = rows.first().map_or(ours_ms, |r| r.ours_ms);
        rows.push(TheoryRow {
            k,
            ours_ms,
            theory_ms: rev_ms / (2.0 * f64::from(k)),
            reduction_ours: 1.0 - ours_ms / base,
            reduction_theory: 1.0 - 1.0 / f64::from(k),
        });
    }
    Ok(rows)
}

fn zone_map(disk: &Disk, zone_index: usize) -> Result<BlockMap> {
    let (_, _, _, first, count) = zone(disk, zone_index)?;
    BlockMap::new(MapConfig::region(first, count, 1))
}

/// Range writes with `k` equidistant candidates on one track: mean rotational latency against
/// `rev/(2k)` for `k = 1..=max_k`. Candidates come from the allocator and are released after each
/// trial, so the map stays empty.
///
/// # Errors
/// An unknown disk or zone, or parameters that do not fit the zone's tracks.
pub fn theory_check_writes(cfg: &TheoryConfig) -> Result<Vec<TheoryRow>> {
    let disk = library::media(&cfg.disk)?; // media positioning: no cache hit or write-back may bypass it
    let mut map = zone_map(&disk, cfg.zone)?;
    let trials = trials(&disk, cfg, map.region().end())?;
    let mut scratch = Vec::new();
    theory_rows(&disk, cfg, |k| {
        let mut sum = 0.0;
        for t in &trials {
            let track = Track { cylinder: t.cylinder, surface: t.surface };
            let cands = offer_equidistant_on_track(&mut map, &disk, track, k, cfg.sectors, t.phase)?;
            let sel = select_write(&disk, t.from, t.start, &cands, cfg.sectors, &mut scratch)?;
            sum += sel.rotational_latency as f64;
            map.release(&cands, cfg.sectors)?;
        }
        Ok(ns_ms(sum / trials.len() as f64))
    })
}

/// Flex reads over `k` copies a `1/k` revolution apart (on `k` surfaces of one cylinder, so a head
/// arriving by a seek reaches them all after the same move): mean rotational latency against
/// `rev/(2k)` for `k = 1..=max_k`. The copies are written through the block map, read with
/// [`flex_read`] and trimmed after each trial.
///
/// # Errors
/// As [`theory_check_writes`].
pub fn theory_check_reads(cfg: &TheoryConfig) -> Result<Vec<TheoryRow>> {
    let disk = library::media(&cfg.disk)?;
    let mut map = zone_map(&disk, cfg.zone)?;
    let trials = trials(&disk, cfg, map.region().end())?;
    let mut scratch = Vec::new();
    theory_rows(&disk, cfg, |k| {
        let mut sum = 0.0;
        for t in &trials {
            let copies = copy_starts(&disk, t, k, cfg.sectors).expect("trials are filtered");
            let req = WriteRequest { logical: 0, blocks: cfg.sectors, candidates: Candidates::single(copies[0]) };
            map.write(&req, copies[0])?;
            for &c in &copies[1..] {
                for j in 0..cfg.sectors {
                    map.add_copy(j, c + j)?;
                }
            }
            let sel = flex_read(&map, &disk, t.from, t.start, 0, cfg.sectors, &mut scratch)?;
            sum += sel.rotational_latency as f64;
            map.trim(0, cfg.sectors)?;
        }
        Ok(ns_ms(sum / trials.len() as f64))
    })
}

// ─────────────────────────────────────────────────────────────────── experiments 1 and 2 ──

/// Parameters of an offset sweep (paper 004 Experiments 1 and 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OffsetExperiment {
    /// Built-in disk name.
    pub disk: String,
    /// Zone the writes go to.
    pub zone: usize,
    /// Number of writes.
    pub writes: usize,
    /// Sectors per write.
    pub write_sectors: u64,
    /// Constant arrival interval, ms.
    pub interarrival_ms: f64,
    /// Offsets of the alternative from the original, sectors.
    pub offsets: Vec<u64>,
    /// Also measure the same-track placement (for offsets below the sectors per track).
    pub same_track: bool,
    /// Random seed (the original locations).
    pub seed: u64,
}

impl OffsetExperiment {
    /// Experiment 1: HP C2249A, first zone, 10,000 writes of 10 sectors every
    /// [`PAPER_INTERARRIVAL_MS`], offsets `0..96` (one track), both placements.
    #[must_use]
    pub fn paper_exp1() -> Self {
        Self {
            disk: "hp_c2249a".into(),
            zone: 0,
            writes: 10_000,
            write_sectors: 10,
            interarrival_ms: PAPER_INTERARRIVAL_MS,
            offsets: (0..96).collect(),
            same_track: true,
            seed: 2007,
        }
    }

    /// Experiment 2: as Experiment 1 with LBN offsets `0..=384` (four tracks), the periodic curve
    /// of the paper's Figure 3.
    #[must_use]
    pub fn paper_exp2() -> Self {
        Self { offsets: (0..=4 * 96).collect(), same_track: false, ..Self::paper_exp1() }
    }
}

/// Means over one run of the FCFS loop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Mean rotational latency, ms.
    pub rot_ms: f64,
    /// Mean positioning time (seek + settle + rotational latency), ms.
    pub pos_ms: f64,
    /// Mean response time (arrival to completion), ms.
    pub response_ms: f64,
    /// Fraction of the time the disk was busy.
    pub utilization: f64,
    /// `1 − rot_ms / baseline rot_ms` (0 for the baseline itself).
    pub rot_reduction: f64,
    /// `1 − pos_ms / baseline pos_ms`.
    pub pos_reduction: f64,
    /// Fraction of writes that went to the alternative.
    pub alt_share: f64,
}

/// One offset of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OffsetRow {
    /// Offset of the alternative, sectors.
    pub offset: u64,
    /// Alternative at LBN `original + offset` (the paper's setup).
    pub lbn_offset: Outcome,
    /// Alternative `offset` sectors round the same track (when measured and `offset < spt`).
    pub same_track: Option<Outcome>,
    /// Rotation-only theory for two candidates `f = (offset mod spt)/spt` of a revolution apart on
    /// one track: `2f(1 − f)` (exact for the same-track placement; 50% at half a track).
    pub theory_rot_reduction: f64,
    /// Rotation-only theory for the LBN-offset pairs actually drawn: the mean of `2f(1 − f)` with
    /// `f` each pair's real angular separation (track and cylinder skew included, head switches
    /// and seeks ignored). This is what makes Experiment 2's curve periodic with the skew.
    pub geometric_rot_reduction: f64,
}

/// The result of an offset sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffsetReport {
    /// The parameters.
    pub config: OffsetExperiment,
    /// First LBN of the zone.
    pub zone_first_lbn: u64,
    /// LBNs in the zone.
    pub zone_sectors: u64,
    /// Sectors per track in the zone.
    pub sectors_per_track: u32,
    /// One revolution, ms.
    pub revolution_ms: f64,
    /// No alternative.
    pub baseline: Outcome,
    /// One row per offset, in the configured order.
    pub rows: Vec<OffsetRow>,
}

impl OffsetReport {
    /// The row with the largest rotational reduction for LBN offsets.
    #[must_use]
    pub fn best_lbn(&self) -> Option<&OffsetRow> {
        self.rows.iter().max_by(|a, b| a.lbn_offset.rot_reduction.total_cmp(&b.lbn_offset.rot_reduction))
    }

    /// The row with the largest rotational reduction for same-track placement.
    #[must_use]
    pub fn best_same_track(&self) -> Option<&OffsetRow> {
        self.rows
            .iter()
            .filter(|r| r.same_track.is_some())
            .max_by(|a, b| a.same_track.unwrap().rot_reduction.total_cmp(&b.same_track.unwrap().rot_reduction))
    }
}

/// Serves `reqs` (original, optional alternative) arriving every `interarrival` ns, FCFS, with
/// local selection; returns the means (reductions left at 0).
fn fcfs(disk: &Arc<Disk>, interarrival: SimTime, reqs: &[(u64, Option<u64>)], sectors: u64) -> Result<Outcome> {
    let mut drive = Drive::new(Arc::clone(disk));
    let mut scratch = Vec::new();
    let (mut rot, mut pos, mut resp, mut busy, mut alt) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut free_at: SimTime = 0;
    for (i, &(orig, alternative)) in reqs.iter().enumerate() {
        let arrival = i as u64 * interarrival;
        let start = arrival.max(free_at);
        let sel = select(
            disk,
            drive.head(),
            start,
            std::iter::once(orig).chain(alternative),
            sectors,
            Op::Write,
            Criterion::Positioning,
            "offset experiment",
            &mut scratch,
        )?;
        let served = drive.serve(start, sel.lbn, sectors, Op::Write)?;
        debug_assert_eq!(served.access, sel.access);
        let end = served.access.end;
        rot += sel.rotational_latency;
        pos += sel.positioning();
        resp += end - arrival;
        busy += end - start;
        alt += u64::from(sel.index == 1);
        free_at = end;
    }
    let n = reqs.len().max(1) as f64;
    Ok(Outcome {
        rot_ms: ns_ms(rot as f64 / n),
        pos_ms: ns_ms(pos as f64 / n),
        response_ms: ns_ms(resp as f64 / n),
        utilization: if free_at == 0 { 0.0 } else { busy as f64 / free_at as f64 },
        rot_reduction: 0.0,
        pos_reduction: 0.0,
        alt_share: alt as f64 / n,
    })
}

fn relative(mut o: Outcome, base: &Outcome) -> Outcome {
    o.rot_reduction = 1.0 - o.rot_ms / base.rot_ms;
    o.pos_reduction = 1.0 - o.pos_ms / base.pos_ms;
    o
}

/// Runs an offset sweep: one baseline run without alternatives, then one run per offset and
/// placement, all with the same original locations and arrival times.
///
/// # Errors
/// An unknown disk or zone; offsets or writes that do not fit the zone; a non-positive interval.
pub fn run_offsets(cfg: &OffsetExperiment) -> Result<OffsetReport> {
    let disk = library::media(&cfg.disk)?;
    let (_, _, spt, first, count) = zone(&disk, cfg.zone)?;
    if !(cfg.interarrival_ms > 0.0 && cfg.interarrival_ms.is_finite()) {
        return Err(LayoutError::Config {
            field: "interarrival_ms",
            message: format!("{} is not a positive time", cfg.interarrival_ms),
        });
    }
    if cfg.write_sectors == 0 || cfg.writes == 0 {
        return Err(LayoutError::Config {
            field: "writes",
            message: "writes and write_sectors must be positive".into(),
        });
    }
    let max_off = cfg.offsets.iter().copied().max().unwrap_or(0);
    let room =
        count.checked_sub(cfg.write_sectors + max_off).filter(|&r| r > 0).ok_or_else(|| LayoutError::Config {
            field: "offsets",
            message: format!(
                "offset {max_off} plus {} sectors does not fit in the zone's {count} sectors",
                cfg.write_sectors
            ),
        })?;
    let interarrival = freeblock_disk::time::ms_to_ns(cfg.interarrival_ms);
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let originals: Vec<u64> = (0..cfg.writes).map(|_| first + rng.gen_range(0..room)).collect();
    let layout = disk.layout();

    let plain: Vec<(u64, Option<u64>)> = originals.iter().map(|&o| (o, None)).collect();
    let baseline = fcfs(&disk, interarrival, &plain, cfg.write_sectors)?;
    let mut rows = Vec::with_capacity(cfg.offsets.len());
    for &offset in &cfg.offsets {
        let with_lbn: Vec<_> = originals.iter().map(|&o| (o, Some(o + offset))).collect();
        let lbn_offset = relative(fcfs(&disk, interarrival, &with_lbn, cfg.write_sectors)?, &baseline);
        let same_track = if cfg.same_track && offset < u64::from(spt) {
            let mut reqs = Vec::with_capacity(originals.len());
            for &o in &originals {
                let p = layout.lbn_to_pbn(o)?;
                let sector = ((u64::from(p.sector) + offset) % u64::from(spt)) as u32;
                let alt = layout.pbn_to_lbn(Pbn { sector, ..p }).unwrap_or(o);
                reqs.push((o, Some(alt)));
            }
            Some(relative(fcfs(&disk, interarrival, &reqs, cfg.write_sectors)?, &baseline))
        } else {
            None
        };
        let f = (offset % u64::from(spt)) as f64 / f64::from(spt);
        let mut geometric = 0.0;
        for &o in &originals {
            let a = layout.sector_angle(layout.lbn_to_pbn(o)?);
            let b = layout.sector_angle(layout.lbn_to_pbn(o + offset)?);
            let g = (b - a).rem_euclid(1.0);
            geometric += 2.0 * g * (1.0 - g);
        }
        rows.push(OffsetRow {
            offset,
            lbn_offset,
            same_track,
            theory_rot_reduction: 2.0 * f * (1.0 - f),
            geometric_rot_reduction: geometric / originals.len() as f64,
        });
    }
    Ok(OffsetReport {
        config: cfg.clone(),
        zone_first_lbn: first,
        zone_sectors: count,
        sectors_per_track: spt,
        revolution_ms: ns_ms(disk.revolution_ps() as f64 / 1000.0),
        baseline,
        rows,
    })
}

/// Paper 004 Experiment 1 ([`OffsetExperiment::paper_exp1`]).
///
/// # Errors
/// As [`run_offsets`].
pub fn experiment1() -> Result<OffsetReport> {
    run_offsets(&OffsetExperiment::paper_exp1())
}

/// Paper 004 Experiment 2 ([`OffsetExperiment::paper_exp2`]).
///
/// # Errors
/// As [`run_offsets`].
pub fn experiment2() -> Result<OffsetReport> {
    run_offsets(&OffsetExperiment::paper_exp2())
}
