//! Characterize: learn a drive through its command interface alone, and grade what was learned
//! against the hidden truth. The learning is the engine's ([`freeblock::external::characterize`],
//! re-exported here: the host-side scheduler of paper 001 learns its model with it); this module
//! hides a known drive behind a [`BlackBox`] and keeps the truth aside to grade against. The
//! characteriser never sees the truth; only this module sees both.
//!
//! ```text
//!  learned DiskSpec ──► Disk ─┐
//!                             ├─► every track: same LBNs on the same sectors? angle of sector 0?
//!  truth Disk ────────────────┘    every seek distance: within 2 % or 50 µs?  rotation within 0.01 %?
//! ```
//!
//! | check | pass when |
//! | --- | --- |
//! | layout | every track holds the same LBNs on the same physical sectors (compared as runs, so every LBN is covered), same cylinders, surfaces, capacity |
//! | angles | sector 0 of every track holding LBNs within 0.05 sector |
//! | rotation | revolution within 0.01 % |
//! | seek | at every distance, learned seek ≤ 2 % or 50 µs from truth seek + read settle |
//!
//! [`characterize_hidden`] runs the whole round for one drive: hide it behind a black box, learn
//! it through the interface alone, grade what was learned.

use std::sync::Arc;

use freeblock_disk::spec::DiskSpec;
use freeblock_disk::{Disk, Op};

use freeblock::external::blackbox::{BlackBox, Effects, FirmwareLog};
pub use freeblock::external::characterize::{characterize, CharacterizeError, Characterized, Options, StepCost};
use freeblock::{Error, Result};

/// One learned parameter beside the truth.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    /// Parameter.
    pub parameter: String,
    /// What characterisation found.
    pub learned: String,
    /// The hidden truth.
    pub truth: String,
    /// Within the acceptance bound (`None`: reported only).
    pub ok: Option<bool>,
}

/// The grade of one characterisation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Grade {
    /// Parameter rows.
    pub rows: Vec<Row>,
    /// Tracks compared, and those whose LBNs differ.
    pub tracks: u64,
    /// Tracks whose LBNs or sectors per track differ.
    pub layout_mismatches: u64,
    /// The first mismatch, described.
    pub first_mismatch: Option<String>,
    /// Largest angle error of a track's sector 0, sectors.
    pub max_angle_error_sectors: f64,
    /// Seek distances checked and those outside 2 % / 50 µs.
    pub seek_distances: u64,
    /// Distances outside the bound.
    pub seek_misses: u64,
    /// Largest seek error, µs.
    pub max_seek_error_us: f64,
    /// The distance (cylinders) where the seek error is largest.
    pub worst_seek_distance: u32,
}

impl Grade {
    /// Every bounded row passed.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.rows.iter().all(|r| r.ok != Some(false))
    }
}

fn ms(ns: u64) -> String {
    format!("{:.4} ms", ns as f64 / 1e6)
}

/// Compares `learned` with `truth` track by track and distance by distance.
#[must_use]
pub fn grade(learned: &Disk, truth: &Disk) -> Grade {
    let (ll, tl) = (learned.layout(), truth.layout());
    let mut rows = Vec::new();
    let same = |a: String, b: String| {
        let ok = a == b;
        (a, b, ok)
    };
    for (name, (a, b, ok)) in [
        ("surfaces", same(ll.surfaces().to_string(), tl.surfaces().to_string())),
        ("cylinders", same(ll.cylinders().to_string(), tl.cylinders().to_string())),
        ("capacity (sectors)", same(ll.capacity().to_string(), tl.capacity().to_string())),
        ("zones (runs of equal sectors per track)", same(spt_runs(learned).to_string(), spt_runs(truth).to_string())),
    ] {
        rows.push(Row { parameter: name.into(), learned: a, truth: b, ok: Some(ok) });
    }

    // Layout and angles, track by track.
    let (mut tracks, mut mismatches, mut first_mismatch, mut max_angle) = (0u64, 0u64, None, 0.0f64);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let cylinders = tl.cylinders().min(ll.cylinders());
    for c in 0..cylinders {
        let spt = tl.sectors_per_track(c);
        for h in 0..tl.surfaces().min(ll.surfaces()) {
            a.clear();
            b.clear();
            tl.arc_lbns(c, h, 0, spt, &mut a);
            ll.arc_lbns(c, h, 0, ll.sectors_per_track(c), &mut b);
            if a.is_empty() && b.is_empty() {
                continue;
            }
            tracks += 1;
            if a != b || spt != ll.sectors_per_track(c) {
                mismatches += 1;
                first_mismatch.get_or_insert_with(|| format!("cylinder {c}, head {h}: truth {a:?} ({spt} sectors), learned {b:?} ({} sectors)", ll.sectors_per_track(c)));
                continue;
            }
            let rev = truth.revolution_ps() as f64;
            let at = |d: &Disk| d.layout().sector_start(c, h, 0) as f64 / d.revolution_ps() as f64;
            let diff = (at(learned) - at(truth)).rem_euclid(1.0);
            let err = diff.min(1.0 - diff) * f64::from(spt);
            let _ = rev;
            max_angle = max_angle.max(err);
        }
    }
    rows.push(Row {
        parameter: "layout: tracks whose LBNs differ".into(),
        learned: format!("{mismatches} of {tracks}"),
        truth: "0".into(),
        ok: Some(mismatches == 0 && ll.cylinders() == tl.cylinders()),
    });
    rows.push(Row {
        parameter: "skews: worst angle of a track's sector 0 (sectors)".into(),
        learned: format!("{max_angle:.4}"),
        truth: "0".into(),
        ok: Some(max_angle <= 0.05),
    });

    // Rotation.
    let (lr, tr) = (learned.revolution_ps() as f64, truth.revolution_ps() as f64);
    let rel = (lr - tr).abs() / tr;
    rows.push(Row {
        parameter: "rotation (rpm)".into(),
        learned: format!("{:.4} ({:.5}% off)", 60.0e12 / lr, rel * 100.0),
        truth: format!("{:.4}", 60.0e12 / tr),
        ok: Some(rel <= 1e-4),
    });

    // Seeks: learned seek vs truth seek + read settle, every distance.
    let settle = u64::try_from(truth.settle_ns(Op::Read)).unwrap_or(0);
    let lsettle = u64::try_from(learned.settle_ns(Op::Read)).unwrap_or(0);
    let (mut misses, mut worst, mut worst_at) = (0u64, 0.0f64, 0u32);
    // Seeks to cylinders past the last LBN cannot be timed from outside: compare up to it.
    let reach = |d: &Disk| d.target(d.capacity() - 1).map_or(0, |t| t.cylinder);
    let full = reach(truth).min(reach(learned));
    for d in 1..=full {
        let t = (truth.seek_curve().time(d) + settle) as f64;
        let l = (learned.seek_curve().time(d) + lsettle) as f64;
        let e = (l - t).abs();
        if e / 1000.0 > worst {
            (worst, worst_at) = (e / 1000.0, d);
        }
        if e > 50_000.0 && e > 0.02 * t {
            misses += 1;
        }
    }
    let probe = [1, full / 100, full / 3, full].map(|d| d.max(1));
    rows.push(Row {
        parameter: format!("seek + read settle at {probe:?} cylinders"),
        learned: probe.iter().map(|&d| format!("{:.3}", (learned.seek_curve().time(d) + lsettle) as f64 / 1e6)).collect::<Vec<_>>().join(" / ") + " ms",
        truth: probe.iter().map(|&d| format!("{:.3}", (truth.seek_curve().time(d) + settle) as f64 / 1e6)).collect::<Vec<_>>().join(" / ") + " ms",
        ok: None,
    });
    rows.push(Row {
        parameter: "seek: distances (to the last LBN's cylinder) off by > 2 % and > 50 µs".into(),
        learned: format!("{misses} of {full} (worst {worst:.1} µs, over {worst_at})"),
        truth: "0".into(),
        ok: Some(misses == 0),
    });
    let hs = |d: &Disk| d.head_switch_ns() + u64::try_from(d.settle_ns(Op::Read)).unwrap_or(0);
    let (lh, th) = (hs(learned), hs(truth));
    // With one surface the heads never switch: the spec's value is never used, nor learnable.
    let switches = truth.layout().surfaces() > 1;
    let close = lh.abs_diff(th) <= 50_000 || lh.abs_diff(th) as f64 <= 0.02 * th as f64;
    let truth_text = if switches { ms(th) } else { format!("{} (one surface: never used)", ms(th)) };
    rows.push(Row { parameter: "head switch + read settle".into(), learned: ms(lh), truth: truth_text, ok: switches.then_some(close) });
    let ws = |d: &Disk| d.settle_ns(Op::Write) - d.settle_ns(Op::Read);
    rows.push(Row { parameter: "write settle − read settle".into(), learned: format!("{:.4} ms", ws(learned) as f64 / 1e6), truth: format!("{:.4} ms", ws(truth) as f64 / 1e6), ok: None });
    rows.push(Row { parameter: "read command overhead".into(), learned: ms(learned.overhead_ns(Op::Read)), truth: format!("{} (+ firmware jitter)", ms(truth.overhead_ns(Op::Read))), ok: None });
    rows.push(Row { parameter: "write command overhead".into(), learned: ms(learned.overhead_ns(Op::Write)), truth: format!("{} (+ firmware jitter)", ms(truth.overhead_ns(Op::Write))), ok: None });
    Grade { rows, tracks, layout_mismatches: mismatches, first_mismatch, max_angle_error_sectors: max_angle, seek_distances: u64::from(full), seek_misses: misses, max_seek_error_us: worst, worst_seek_distance: worst_at }
}

/// Runs of cylinders with equal sectors per track (what translate-address can tell of zones).
fn spt_runs(d: &Disk) -> usize {
    let l = d.layout();
    (0..l.cylinders()).filter(|&c| c == 0 || l.sectors_per_track(c) != l.sectors_per_track(c - 1)).count()
}

/// The drives of the acceptance run (`freeblock characterize` without names): spare and slipped
/// sectors per zone with serpentine mapping (Atlas 10K), spare sectors per cylinder range
/// (Cheetah 4LP), spares per zone (Cheetah 9LP), no spares (WD800), and a modern 8 TB drive
/// (Ultrastar He8). `docs/external.md` lists the library drives where characterisation still
/// misses a bound.
pub const ACCEPTANCE_DRIVES: [&str; 5] = ["atlas10k", "cheetah4lp", "cheetah9lp", "wd800", "ultrastar_he8"];

/// DIXtrac's probing time per drive, at most (3–5 minutes): a characterisation that takes longer
/// is slower than the tool it follows.
pub const DIXTRAC_MAX_S: f64 = 300.0;

/// One drive learned through the black box and graded against its hidden truth: what
/// `freeblock characterize` prints for each drive, and `freeblock.characterize` returns.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GradedDrive {
    /// The drive's name.
    pub disk: String,
    /// Every bounded row of the grade passed.
    pub passed: bool,
    /// The learned parameters beside the truth.
    pub grade: Grade,
    /// Simulated probing time, s (DIXtrac: 3–5 minutes per drive).
    pub simulated_s: f64,
    /// Probes and simulated time of each step, in order.
    pub costs: Vec<StepRow>,
    /// Findings that did not stop characterisation but a user should know.
    pub flags: Vec<String>,
    /// What the firmware did behind the host's back while it probed.
    pub firmware: FirmwareLog,
    /// The learned spec.
    #[serde(skip)]
    pub spec: DiskSpec,
}

impl GradedDrive {
    /// The probing took longer than DIXtrac's 3–5 minutes ([`DIXTRAC_MAX_S`]).
    #[must_use]
    pub fn longer_than_dixtrac(&self) -> bool {
        self.simulated_s > DIXTRAC_MAX_S
    }
}

/// One step's cost, named.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct StepRow {
    /// The step.
    pub step: &'static str,
    /// Its probes and time.
    pub cost: StepCost,
}

/// Hides `truth` (its cache turned off) behind a [`BlackBox`] with `effects` seeded by `seed`,
/// learns it through the command interface alone, and grades what was learned. `name` names
/// the drive in the report and the learned spec (`<name>_learned`).
///
/// # Errors
/// A spec that makes no disk, or [`Error::Characterize`]: a probe failed or timed out, the
/// timings were inconsistent, or the drive changed under the characteriser.
pub fn characterize_hidden(name: &str, truth: DiskSpec, effects: Effects, seed: u64) -> Result<GradedDrive> {
    let truth = Arc::new(Disk::new(truth.without_cache())?);
    let mut drive = BlackBox::new(Arc::clone(&truth), effects, seed);
    let learned = characterize(&mut drive, &Options { name: format!("{name}_learned"), ..Options::default() }).map_err(|source| Error::Characterize { disk: name.to_string(), source })?;
    let grade = grade(&Disk::new(learned.spec.clone())?, &truth);
    Ok(GradedDrive {
        disk: name.to_string(),
        passed: grade.passed(),
        grade,
        simulated_s: learned.simulated_ns() as f64 / 1e9,
        costs: learned.costs.iter().map(|&(step, cost)| StepRow { step, cost }).collect(),
        flags: learned.flags,
        firmware: drive.firmware_log(),
        spec: learned.spec,
    })
}
