//! # Paper 000 §3: where a disk head's time goes
//!
//! Random 4 KB requests, 2:1 reads, uniform over the disk, closed with no think time, 10,000
//! requests a bar (paper 000 §3.1). Shares are of the head's *mechanical* time — seek, rotational
//! latency and media transfer — as the paper's bars are; controller and bus overheads are left
//! out. The rotational-latency share is what freeblock scheduling can turn into free bandwidth.
//!
//! ```text
//!  Fig. 2  five disks          ┐
//!  Fig. 3  request size        │  one run a bar ─► HeadUsageBar { seek, rot. latency, transfer,
//!  Fig. 4  locality            ├─►                               access ms, checks }
//!  Fig. 5  schedulers, MPL 20  │                  ─► table, CSV, one SVG per figure (report.rs)
//!  Fig. 6  SPTF-SWn%, MPL 20   ┘
//! ```
//!
//! [`head_usage`] makes the bars and compares them with the paper ([`PaperCheck`]); [`run`]
//! is the reproduction's entry point (text or JSON, CSV, plots, statements).

use std::sync::Arc;

use freeblock_disk::{library, Disk};
use serde::Serialize;

use freeblock::report::RunReport;
use crate::paper_check::PaperCheck;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{LocalitySpec, RandomSpec, SizeDist, WorkloadSpec};
use freeblock::Result;

mod report;

pub use report::run;

/// One bar of a head-usage figure.
#[derive(Debug, Clone, Serialize)]
pub struct HeadUsageBar {
    /// Figure number in paper 000.
    pub figure: u32,
    /// The bar's label (disk, size, locality, scheduler).
    pub label: String,
    /// Seek share of mechanical time.
    pub seek: f64,
    /// Rotational-latency share.
    pub rotational_latency: f64,
    /// Transfer share.
    pub transfer: f64,
    /// Mean access time, ms.
    pub access_mean_ms: f64,
    /// Comparisons with the paper for this bar.
    pub checks: Vec<PaperCheck>,
}

fn bar(figure: u32, label: String, r: &RunReport) -> HeadUsageBar {
    let u = r.head_usage;
    let mech = (u.seek_ns + u.rotational_latency_ns + u.transfer_ns).max(1) as f64;
    HeadUsageBar {
        figure,
        label,
        seek: u.seek_ns as f64 / mech,
        rotational_latency: u.rotational_latency_ns as f64 / mech,
        transfer: u.transfer_ns as f64 / mech,
        access_mean_ms: r.access.mean_ms,
        checks: Vec::new(),
    }
}

fn simulate(disk: &Arc<Disk>, workload: &WorkloadSpec, scheduler: SchedulerSpec, mpl: u32) -> Result<RunReport> {
    let w = workload.build(disk.capacity(), 42)?;
    Simulation::new(Arc::clone(disk), w, SimConfig { scheduler, mpl, ..SimConfig::default() }).run(None)
}

fn random(requests: u64, sectors: u32) -> WorkloadSpec {
    WorkloadSpec::Random(RandomSpec { count: Some(requests), size: SizeDist::Fixed { sectors }, ..RandomSpec::default() })
}

/// Paper 000 Figures 2–6. `requests` per bar (the paper used 10,000); `tick` is called after each
/// bar with (bars done, bars in all).
///
/// # Errors
/// Setup errors only.
pub fn head_usage(requests: u64, mut tick: impl FnMut(usize, usize)) -> Result<Vec<HeadUsageBar>> {
    let total = 5 + 5 + 6 + 4 + 9;
    let mut bars = Vec::new();
    let mut done = |bars: &Vec<HeadUsageBar>| tick(bars.len(), total);

    // Fig. 2: five disks, random 4 KB, one outstanding.
    for name in ["atlas10k", "cheetah4lp", "cheetah9lp", "cheetah18lp", "ibm18es"] {
        let d = library::media(name)?;
        let r = simulate(&d, &random(requests, 8), SchedulerSpec::Fcfs, 1)?;
        let mut b = bar(2, name.into(), &r);
        b.checks.push(PaperCheck::new("rotational latency share", "27–36%", 0.25, 0.38, b.rotational_latency));
        bars.push(b);
        done(&bars);
    }

    // Fig. 3: request size sweep on the Atlas 10K.
    let atlas = library::media("atlas10k")?;
    for kb in [4u32, 16, 32, 64, 128, 256] {
        let r = simulate(&atlas, &random(requests, kb * 2), SchedulerSpec::Fcfs, 1)?;
        let mut b = bar(3, format!("{kb} KB"), &r);
        if kb == 256 {
            b.checks.push(PaperCheck::new("head utilisation (transfer share)", "below 55%", 0.0, 0.55, b.transfer));
            b.checks.push(PaperCheck::new("rotational latency share", "~15%", 0.12, 0.18, b.rotational_latency));
        }
        bars.push(b);
        done(&bars);
    }

    // Fig. 4: locality sweep (normal, σ = 4 MB, around the last request).
    for pct in [0u32, 30, 50, 70, 90] {
        let w = WorkloadSpec::Locality(LocalitySpec {
            count: Some(requests),
            size: SizeDist::Fixed { sectors: 8 },
            read_fraction: 2.0 / 3.0,
            alignment_sectors: 1,
            rate_per_s: None,
            local_fraction: f64::from(pct) / 100.0,
            local_stddev_sectors: 8192.0,
        });
        let r = simulate(&atlas, &w, SchedulerSpec::Fcfs, 1)?;
        let mut b = bar(4, format!("{pct}% local"), &r);
        if pct == 70 {
            b.checks.push(PaperCheck::new("rotational latency share", "~60%", 0.54, 0.66, b.rotational_latency));
        }
        bars.push(b);
        done(&bars);
    }

    // Fig. 5: schedulers with 20 outstanding.
    for s in [SchedulerSpec::Fcfs, SchedulerSpec::Clook, SchedulerSpec::Sstf, SchedulerSpec::Sptf] {
        let r = simulate(&atlas, &random(requests, 8), s, 20)?;
        let mut b = bar(5, s.to_string(), &r);
        match s {
            SchedulerSpec::Clook | SchedulerSpec::Sstf => b.checks.push(PaperCheck::new("rotational latency share", "~50%", 0.45, 0.55, b.rotational_latency)),
            SchedulerSpec::Sptf => b.checks.push(PaperCheck::new("rotational latency share", "~22%", 0.18, 0.26, b.rotational_latency)),
            _ => {}
        }
        bars.push(b);
        done(&bars);
    }

    // Fig. 6: SPTF-SWn% with 20 outstanding; access time relative to SPTF.
    let mut sptf_access = 0.0;
    for n in [0.0, 5.0, 10.0, 20.0, 30.0, 40.0, 60.0, 100.0] {
        let s = if n == 0.0 { SchedulerSpec::Sptf } else { SchedulerSpec::SptfSw { window_pct: n } };
        let r = simulate(&atlas, &random(requests, 8), s, 20)?;
        let mut b = bar(6, s.to_string(), &r);
        if n == 0.0 {
            sptf_access = b.access_mean_ms;
        }
        if n == 40.0 {
            b.checks.push(PaperCheck::new("rotational latency share", "~36%", 0.31, 0.41, b.rotational_latency));
            b.checks.push(PaperCheck::new("access time vs SPTF", "~+6%", 0.02, 0.10, b.access_mean_ms / sptf_access - 1.0));
        }
        bars.push(b);
        done(&bars);
    }
    let r = simulate(&atlas, &random(requests, 8), SchedulerSpec::Sstf, 20)?;
    let mut b = bar(6, "SSTF".into(), &r);
    b.checks.push(PaperCheck::new("access time vs SPTF", "~+25%", 0.18, 0.32, b.access_mean_ms / sptf_access - 1.0));
    bars.push(b);
    done(&bars);
    Ok(bars)
}
