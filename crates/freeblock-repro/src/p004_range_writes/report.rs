//! What `freeblock repro range-writes` prints and writes: the theory check, paper 004's
//! Experiments 1 and 2, local against global selection beside OSDI 2008, `range-writes.csv`,
//! `range-writes-local-global.csv` and three plots (or, with `--json`, one document).

use std::fmt::Write as _;
use std::path::Path;

use super::experiment::{run_offsets, theory_check_reads, theory_check_writes, OffsetExperiment, OffsetRow, TheoryConfig};
use super::localglobal::{local_vs_global_with_progress, LocalGlobalConfig, LocalGlobalReport, Variant};
use super::paper::{self, against_osdi, PAPER004_BEST_OFFSET, PAPER004_POS_REDUCTION_PCT, PAPER004_ROT_REDUCTION_PCT};
use super::smallfile::SmallFileConfig;
use crate::plot::{lines, Line, Reference};
use crate::progress::Runs;
use crate::table::{pct, signed_pct, Table};
use crate::{Options, Outcome, Result};

/// `freeblock repro range-writes`: paper 004 on the HP C2249A, the k-candidate theory check, and
/// local against global selection on the small-file workload (OSDI 2008, HP C2247A).
/// `--requests N` sets the writes per run of Experiments 1 and 2 and the transactions of the
/// small-file workload (default 10 000, the paper's count); the theory check draws 2N trials.
///
/// # Errors
/// A run's error, or a file that cannot be written.
pub fn range_writes(a: &Options) -> Result<Outcome> {
    let mut out = String::new();
    let n = a.requests.max(16);
    let theory = TheoryConfig { trials: u32::try_from(2 * n).unwrap_or(u32::MAX), ..TheoryConfig::default() };
    let writes_per_run = usize::try_from(n)?;
    let lg_cfg = LocalGlobalConfig {
        workload: SmallFileConfig {
            transactions_per_stream: (n / u64::from(SmallFileConfig::default().streams)).max(1),
            ..SmallFileConfig::default()
        },
        ..LocalGlobalConfig::default()
    };
    let lg_runs = lg_cfg.schedulers.len() * (1 + 2 * lg_cfg.candidates.len());
    let pb = Runs::new("range-writes", (4 + lg_runs) as u64, a.quiet || a.json);
    let writes = theory_check_writes(&theory)?;
    pb.inc();
    let reads = theory_check_reads(&theory)?;
    pb.inc();
    let e1 = run_offsets(&OffsetExperiment { writes: writes_per_run, ..OffsetExperiment::paper_exp1() })?;
    pb.inc();
    let e2 = run_offsets(&OffsetExperiment { writes: writes_per_run, ..OffsetExperiment::paper_exp2() })?;
    pb.inc();
    let lg = local_vs_global_with_progress(&lg_cfg, |_, _| pb.inc())?;
    pb.finish();
    std::fs::create_dir_all(&a.out)?;
    let pct_line = |label: &str, rows: &[OffsetRow], f: &dyn Fn(&OffsetRow) -> f64| Line {
        label: label.into(),
        points: rows.iter().map(|r| (r.offset as f64, 100.0 * f(r))).collect(),
    };
    let fig1 = a.out.join("paper004-exp1.svg");
    lines(
        &fig1,
        "Paper 004 Exp. 1: one alternative at an LBN offset (HP C2249A zone 0, FCFS)",
        "offset of the alternative (sectors)",
        "reduction (%)",
        &[
            pct_line("rotational latency", &e1.rows, &|r| r.lbn_offset.rot_reduction),
            pct_line("positioning time", &e1.rows, &|r| r.lbn_offset.pos_reduction),
            pct_line("theory 2f(1-f), same track", &e1.rows, &|r| r.theory_rot_reduction),
        ],
        &[
            Reference::Point { label: "paper 004: rotational latency, best offset".into(), x: PAPER004_BEST_OFFSET, y: PAPER004_ROT_REDUCTION_PCT },
            Reference::Point { label: "paper 004: positioning time, best offset".into(), x: PAPER004_BEST_OFFSET, y: PAPER004_POS_REDUCTION_PCT },
        ],
    )?;
    let fig2 = a.out.join("paper004-exp2.svg");
    lines(
        &fig2,
        "Paper 004 Exp. 2 / Fig. 3: offset swept across tracks",
        "offset of the alternative (sectors)",
        "reduction (%)",
        &[
            pct_line("rotational latency", &e2.rows, &|r| r.lbn_offset.rot_reduction),
            pct_line("positioning time", &e2.rows, &|r| r.lbn_offset.pos_reduction),
            pct_line("geometric theory", &e2.rows, &|r| r.geometric_rot_reduction),
        ],
        &[Reference::Level { label: "paper 004: best rotational reduction (~32%)".into(), y: PAPER004_ROT_REDUCTION_PCT }],
    )?;
    let fig3 = a.out.join("osdi2008-local-global.svg");
    local_global_plot(&lg, &fig3)?;
    let mut csv = String::from("experiment,offset,rot_ms,pos_ms,rot_reduction,pos_reduction,theory_rot_reduction\n");
    for (name, rep) in [("exp1", &e1), ("exp2", &e2)] {
        for r in &rep.rows {
            let o = &r.lbn_offset;
            writeln!(csv, "{name},{},{:.6},{:.6},{:.6},{:.6},{:.6}", r.offset, o.rot_ms, o.pos_ms, o.rot_reduction, o.pos_reduction, r.theory_rot_reduction)?;
        }
    }
    std::fs::write(a.out.join("range-writes.csv"), csv)?;
    let lg_csv = a.out.join("range-writes-local-global.csv");
    write_local_global_csv(&lg, &lg_csv)?;
    let best = e1.best_lbn().ok_or("experiment 1 produced no rows")?;
    let half = e1.rows.iter().find(|r| r.offset == u64::from(e1.sectors_per_track / 2));
    let statements = paper::statements(best, &lg);
    let files = vec![fig1.clone(), fig2.clone(), fig3.clone(), a.out.join("range-writes.csv"), lg_csv.clone()];
    if a.json {
        writeln!(out,
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "theory_writes": writes, "theory_reads": reads,
                "experiment1": e1, "experiment2": e2,
                "local_vs_global": lg, "global_vs_local": lg.global_vs_local(),
                "plots": [fig1.display().to_string(), fig2.display().to_string(), fig3.display().to_string()],
            }))?
        )?;
        return Ok(Outcome { output: out, statements, files });
    }
    writeln!(out, "Theory check: k equidistant candidates on one track (HP C2249A zone 0); theory: revolution/(2k)")?;
    let mut t = Table::new(["k", "writes ours ms", "reads ours ms", "theory ms", "reduction writes", "reduction reads", "theory reduction"]);
    for (w, r) in writes.iter().zip(&reads) {
        t.row([w.k.to_string(), format!("{:.3}", w.ours_ms), format!("{:.3}", r.ours_ms), format!("{:.3}", w.theory_ms), pct(w.reduction_ours), pct(r.reduction_ours), pct(w.reduction_theory)]);
    }
    write!(out, "{}", t.render())?;
    writeln!(out,
        "\nPaper 004 Experiment 1: {} writes of {} sectors, one alternative at an LBN offset, FCFS, one every {} ms",
        e1.config.writes, e1.config.write_sectors, e1.config.interarrival_ms
    )?;
    writeln!(out, "without alternatives: rotational latency {:.3} ms, positioning {:.3} ms", e1.baseline.rot_ms, e1.baseline.pos_ms)?;
    let mut t = Table::new(["", "best offset", "rotational reduction", "positioning reduction"]);
    t.row(["paper 004".to_string(), "40–45 (≈ half a track)".into(), "~32%".into(), "~16%".into()]);
    if let Some(h) = half {
        t.row(["theory (mechanics)".to_string(), format!("{} (half of {})", h.offset, e1.sectors_per_track), pct(h.theory_rot_reduction), "—".into()]);
    }
    t.row(["ours".to_string(), best.offset.to_string(), pct(best.lbn_offset.rot_reduction), pct(best.lbn_offset.pos_reduction)]);
    write!(out, "{}", t.render())?;
    writeln!(out,
        "Ours is close to the mechanics' 50% and well above the paper's 32%, which its authors attributed to their DiskSim set-up."
    )?;
    let peaks: Vec<String> = e2
        .rows
        .windows(3)
        .filter(|w| w[1].lbn_offset.rot_reduction >= w[0].lbn_offset.rot_reduction && w[1].lbn_offset.rot_reduction > w[2].lbn_offset.rot_reduction && w[1].lbn_offset.rot_reduction > 0.4)
        .map(|w| format!("{} ({})", w[1].offset, pct(w[1].lbn_offset.rot_reduction)))
        .collect();
    writeln!(out, "\nPaper 004 Experiment 2 (Fig. 3): offsets 0..{} — periodic, one peak per track; peaks at {}", e2.rows.last().map_or(0, |r| r.offset), peaks.join(", "))?;
    write!(out, "{}", local_global_text(&lg))?;
    writeln!(out, "plots: {}, {}, {}", fig1.display(), fig2.display(), fig3.display())?;
    writeln!(out, "data: {}, {}", a.out.join("range-writes.csv").display(), lg_csv.display())?;
    Ok(Outcome { output: out, statements, files })
}

/// The local-vs-global section of `repro range-writes`.
fn local_global_text(lg: &LocalGlobalReport) -> String {
    let w = &lg.config.workload;
    let (lo, hi) = lg.osdi2008_app_gain;
    let osdi = format!("{:.0}–{:.0}%", 100.0 * lo, 100.0 * hi);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nLocal vs global selection (OSDI 2008 comparison): small-file workload on the {} (cache off), {} closed-loop streams = {} outstanding requests, {} transactions",
        lg.config.disk,
        w.streams,
        w.streams,
        w.transactions()
    );
    let _ = writeln!(
        s,
        "(each: read or append one {} KB block, then create a {}–{} KB file or delete one; {} initial files; k candidates spread round the cylinder nearest the heads)",
        w.block_sectors / 2,
        w.min_file_blocks * w.block_sectors / 2,
        w.max_file_blocks * w.block_sectors / 2,
        u64::from(w.streams) * u64::from(w.initial_files_per_stream)
    );
    let mut t = Table::new([
        "scheduler",
        "selection",
        "k",
        "write mean ms",
        "write p99 ms",
        "read mean ms",
        "run time s (simulated)",
        "transactions/s",
        "vs no range writes",
        format!("vs OSDI {osdi}").as_str(),
    ]);
    let mut last = String::new();
    for r in &lg.rows {
        let sched = if r.scheduler == last { String::new() } else { r.scheduler.clone() };
        last = r.scheduler.clone();
        let base = r.variant == Variant::NoRangeWrites;
        t.row([
            sched,
            r.variant.to_string(),
            r.k.to_string(),
            format!("{:.2}", r.write_mean_ms),
            format!("{:.2}", r.write_p99_ms),
            format!("{:.2}", r.read_mean_ms),
            format!("{:.1}", r.run_time_s),
            format!("{:.1}", r.transactions_per_s),
            if base { "—".into() } else { signed_pct(r.app_gain, 1) },
            if base { String::new() } else { against_osdi(r.app_gain, lg.osdi2008_app_gain).to_string() },
        ]);
    }
    s.push_str(&t.render());
    let _ = writeln!(s, "\nGlobal against local (write response time: reduction of the mean and the p99; transactions/s: gain)");
    let mut t = Table::new(["scheduler", "k", "write mean", "write p99", "transactions/s", "candidates pending per decision", "exact positionings computed (seek-pruned)"]);
    for g in lg.global_vs_local() {
        let row = lg.rows.iter().find(|r| r.scheduler == g.scheduler && r.variant == Variant::Global && r.k == g.k);
        let pending = row.map_or(String::new(), |r| format!("{:.1}", r.report.candidates_per_decision));
        let cost = row.map_or(String::new(), |r| format!("{:.1}", r.report.positionings_per_decision));
        let signed = |x: f64| signed_pct(x, 1);
        t.row([g.scheduler.clone(), g.k.to_string(), signed(-g.write_mean_reduction), signed(-g.write_p99_reduction), signed(g.throughput_gain), pending, cost]);
    }
    s.push_str(&t.render());
    let _ = writeln!(s, "(write columns: negative = global is faster. An exhaustive global search computes every pending candidate at each decision; the seek-pruned one returns the same choice. FCFS serves the oldest request either way, at its best candidate, so its global rows equal its local rows by definition.)");
    // Summary per scheduler, global at the largest k, and the best of all.
    let mut summary = Vec::new();
    for sched in lg.config.schedulers.iter().map(ToString::to_string) {
        let kmax = lg.config.candidates.iter().copied().max().unwrap_or(1);
        let find = |v| lg.rows.iter().find(|r| r.scheduler == sched && r.variant == v && r.k == kmax);
        let base = lg.rows.iter().find(|r| r.scheduler == sched && r.variant == Variant::NoRangeWrites);
        if let (Some(l), Some(g), Some(b)) = (find(Variant::Local), find(Variant::Global), base) {
            let mean_change = g.write_mean_ms / l.write_mean_ms - 1.0;
            let tps_change = g.transactions_per_s / l.transactions_per_s - 1.0;
            let verdict = if g.report.write_response == l.report.write_response {
                "global = local (by definition)"
            } else if mean_change.abs() < 0.02 && tps_change.abs() < 0.02 {
                "global ≈ local (under 2% apart: noise for one seed)"
            } else if mean_change < 0.0 && tps_change > 0.0 {
                "global beats local"
            } else {
                "global does NOT beat local"
            };
            summary.push(format!(
                "{sched}: {verdict}: mean write response {:.2} → {:.2} ms ({}), p99 {:.2} → {:.2} ms, transactions/s {}; mean read response {:.2} ms without range writes, {:.2} local, {:.2} global",
                l.write_mean_ms,
                g.write_mean_ms,
                signed_pct(mean_change, 1),
                l.write_p99_ms,
                g.write_p99_ms,
                signed_pct(tps_change, 1),
                b.read_mean_ms,
                l.read_mean_ms,
                g.read_mean_ms,
            ));
        }
    }
    let _ = writeln!(s, "\nAt k = {}:", lg.config.candidates.iter().copied().max().unwrap_or(1));
    for line in summary {
        let _ = writeln!(s, "  {line}");
    }
    let gains: Vec<f64> = lg.rows.iter().filter(|r| r.variant != Variant::NoRangeWrites).map(|r| r.app_gain).collect();
    let (min, max) = gains.iter().fold((f64::MAX, f64::MIN), |(a, b), &g| (a.min(g), b.max(g)));
    let within = gains.iter().filter(|&&g| g >= lo && g <= hi).count();
    let below = gains.iter().filter(|&&g| g < lo).count();
    let _ = writeln!(
        s,
        "Application level (transactions/s over no range writes, same scheduler): ours {} to {} across the {} range-write runs; OSDI 2008 reports {osdi} on the HP C2247A.",
        signed_pct(min, 1),
        signed_pct(max, 1),
        gains.len()
    );
    let _ = writeln!(s, "  {within} of {} runs fall within that range, {below} below it (we miss there), {} above.", gains.len(), gains.len() - within - below);
    if let Some(b) = lg.best_app_gain() {
        let _ = writeln!(s, "  Best: {} {} with {} candidates, {}.", b.scheduler, b.variant, b.k, signed_pct(b.app_gain, 1));
    }
    s
}

fn write_local_global_csv(lg: &LocalGlobalReport, path: &Path) -> Result<()> {
    let mut s = String::from("scheduler,selection,k,write_mean_ms,write_p99_ms,read_mean_ms,run_time_s,transactions_per_s,app_gain,write_positioning_ms,write_rotational_ms,moved_share,positionings_per_decision,candidates_per_decision\n");
    for r in &lg.rows {
        let p = &r.report;
        writeln!(
            s,
            "{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6}",
            r.scheduler,
            r.variant.to_string().replace(' ', "_"),
            r.k,
            r.write_mean_ms,
            r.write_p99_ms,
            r.read_mean_ms,
            r.run_time_s,
            r.transactions_per_s,
            r.app_gain,
            p.write_positioning_ms,
            p.write_rotational_ms,
            p.moved_share,
            p.positionings_per_decision,
            p.candidates_per_decision
        )?;
    }
    std::fs::write(path, s)?;
    Ok(())
}

/// Application-level gain against k, one line per scheduler and selection, with OSDI 2008's range.
fn local_global_plot(lg: &LocalGlobalReport, path: &Path) -> Result<()> {
    let mut series = Vec::new();
    for sched in lg.config.schedulers.iter().map(ToString::to_string) {
        let base = lg.rows.iter().find(|r| r.scheduler == sched && r.variant == Variant::NoRangeWrites);
        for v in [Variant::Local, Variant::Global] {
            if sched == "FCFS" && v == Variant::Global {
                continue; // identical to FCFS local
            }
            let points = base
                .into_iter()
                .chain(lg.rows.iter().filter(|r| r.scheduler == sched && r.variant == v))
                .map(|r| (f64::from(r.k), 100.0 * r.app_gain))
                .collect();
            let label = if sched == "FCFS" { "FCFS (local = global)".to_string() } else { format!("{sched} {v}") };
            series.push(Line { label, points });
        }
    }
    let (lo, hi) = lg.osdi2008_app_gain;
    let title = format!(
        "Small-file workload, {}, {} outstanding: transactions/s gain (OSDI 2008: {:.0}–{:.0}%)",
        lg.config.disk,
        lg.config.workload.streams,
        100.0 * lo,
        100.0 * hi
    );
    lines(
        path,
        &title,
        "candidates per write (k)",
        "application-level gain (%)",
        &series,
        &[Reference::Band { label: format!("OSDI 2008: {:.0}–{:.0}% (HP C2247A)", 100.0 * lo, 100.0 * hi), low: 100.0 * lo, high: 100.0 * hi }],
    )
}
