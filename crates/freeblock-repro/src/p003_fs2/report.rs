//! What the reproduction prints and writes: per workload our table beside the paper's rows and
//! ranges, FS2 against rearrangement, the think-time check, the bar's verdicts; the CSV and one
//! plot per workload.

use std::fmt::Write as _;
use std::path::Path;

use freeblock::layout::fs2::{PAPER_ENTRY_BYTES, REPLICA_ENTRY_BYTES};
use freeblock::workload::scattered_files::Paper003Run;

use super::paper::{paper_ext2, ACCESS_CUT_BAR, PAPER_ACCESS_RANGE, PAPER_ENERGY_RANGE, PAPER_ROTATION_RANGE, PAPER_ROWS, PAPER_SEEK_RANGE};
use super::runs::{self as repro, Fs2ReproConfig, Fs2Results, Fs2Row, Variant, MAIN_VARIANTS, VERSUS_VARIANTS};
use crate::plot::{self, BarSeries, CategoryMark};
use crate::table::Table;

pub(crate) fn pct(base: f64, ours: f64) -> String {
    // (improvement is in percent; no "-0%": a change that rounds to nothing prints as 0%.)
    crate::table::signed_pct(-Fs2Row::improvement(base, ours) / 100.0, 0)
}

/// "12% less" or "5% more" (never "−5% less").
pub(crate) fn cut_words(improvement: f64) -> String {
    if improvement.abs() < 0.5 {
        "unchanged".into()
    } else if improvement > 0.0 {
        format!("{improvement:.0}% less")
    } else {
        format!("{:.0}% more", -improvement)
    }
}


/// Why a workload is in the table but not held to the bar.
pub(crate) fn negative_control(name: &str) -> Option<&'static str> {
    match name {
        "days" => Some("negative control: independent single-block references, no access order to preserve, 40% writes to the hottest blocks"),
        "cloudphysics" => Some("negative control: a VM disk with 59% writes whose reads rarely return to far blocks"),
        _ => None,
    }
}

pub(crate) fn within(improvement: f64, range: (f64, f64)) -> &'static str {
    if improvement >= range.0 && improvement <= range.1 {
        "within"
    } else if improvement < range.0 {
        "short of"
    } else {
        "beyond"
    }
}

pub(crate) fn text(cfg: &Fs2ReproConfig, r: &Fs2Results, note: Option<&str>) -> Result<String, std::fmt::Error> {
    let mut s = String::new();
    writeln!(s, "FS2 (paper 003) on {}: replicas of blocks read with the hot region, in free space near it.", cfg.disk)?;
    if cfg.read_cache {
        let c = repro::paper_cache();
        writeln!(s, "Drive: the paper's, its read cache on ({} segments of {} KB, read-ahead after each read; hits count as transfer, as the paper's §3.1 does); fs2_ours runs on the bare media (its free service plans on the media).", c.segments, c.segment_sectors / 2)?;
    } else {
        writeln!(s, "Drive: the bare media (cache off).")?;
    }
    writeln!(s, "Measured: pass {} of {} on the files and ext2 workloads and the last of the real trace's runs (the paper's 7th run), the second half of days and cloudphysics; first pass: mean response over the first pass (the paper: TPC-W's first run 1.7% slower than Ext2).", cfg.scattered_passes, cfg.scattered_passes)?;
    writeln!(s, "files_*: extents scattered over the regions (calibrated to the paper's Ext2 TPC-W: 8.2 ms access); ext2_*: shaped like Ext2 and like §4's runs: files one after another in directories with inode reads and writes on a fifth of the files; ext2_tpcw a MySQL database (four 40 MB files in 20 MB segments at the quadratic hash's groups g..g+127, a 16 KB index page then its row's page per query, queries in a new random order each pass, and a web image); ext2_cvs two regions used alike, each file's first block (the RCS header) in name order; ext2_startx files in the programs' order; ext2_surge two virtual hosts in the order of SURGE's pre-generated requests (ext2_surge_shuffled: a new random order each pass). File system {:.0}% full for the workload and FS2 alike.", 100.0 * cfg.fs2.fill)?;
    writeln!(s, "Improvements are over `none` (the paper's Ext2); negative = faster.")?;
    writeln!(s, "Paper's ranges over its workloads: access −{}…{}%, seek −{}…{}%, rotational −{}…{}%.", PAPER_ACCESS_RANGE.0, PAPER_ACCESS_RANGE.1, PAPER_SEEK_RANGE.0, PAPER_SEEK_RANGE.1, PAPER_ROTATION_RANGE.0, PAPER_ROTATION_RANGE.1)?;
    for w in &r.workloads {
        writeln!(s)?;
        writeln!(s, "## {} — stands in for {}", w.name, w.stands_for)?;
        let Some(base) = r.row(&w.name, Variant::None) else { continue };
        let mut t = Table::new(["variant", "access ms", "seek ms", "rot ms", "xfer ms", "Δaccess", "Δseek", "Δrot", "E mJ", "ΔE", "total J", "busy %", "resp ms", "reads from replicas", "replicas made", "replica I/Os"]);
        for v in MAIN_VARIANTS.into_iter().chain([Variant::NoneMedia, Variant::Oracle]) {
            let (Some(row), Some(base)) = (r.row(&w.name, v), r.base_of(&w.name, v)) else { continue };
            let (made, ios) = row.fs2.as_ref().map_or(("-".into(), "-".into()), |f| (f.replicas_made.to_string(), (f.copy_reads + f.copy_writes).to_string()));
            let [access, seek, rot, d_access, d_seek, d_rot] = timing_cells(base, row);
            t.row([
                v.label().to_string(),
                access,
                seek,
                rot,
                format!("{:.3}", row.transfer_ms),
                d_access,
                d_seek,
                d_rot,
                format!("{:.1}", row.energy_per_access_mj),
                pct(base.energy_per_access_mj, row.energy_per_access_mj),
                format!("{:.0}", row.total_energy_j),
                format!("{:.1}", row.busy_pct),
                format!("{:.2}", row.response_ms),
                format!("{:.0}%", row.reads_from_copies_pct),
                made,
                ios,
            ]);
        }
        s.push_str(&t.render());
        if let Some(run) = w.paper_run {
            writeln!(s, "{}", baseline_beside_paper(base, run))?;
        }
        let first_word = w.stands_for.split_whitespace().next().unwrap_or("");
        for p in PAPER_ROWS.iter().filter(|p| p.label.starts_with(first_word) && !p.label.contains("static")) {
            writeln!(s, "paper, {}: access {:.0}%, seek {:.0}%, rotational {:.0}%, energy {:.0}% less; busy {:.0}% (Ext2 {:.0}%)", p.label, p.access, p.seek, p.rotation, p.energy, p.busy, p.busy_base)?;
        }
        for v in [Variant::Fs2Paper, Variant::Fs2Ours] {
            let (Some(row), Some(base)) = (r.row(&w.name, v), r.base_of(&w.name, v)) else { continue };
            let (ia, is, ir) = (Fs2Row::improvement(base.access_ms, row.access_ms), Fs2Row::improvement(base.seek_ms, row.seek_ms), Fs2Row::improvement(base.rotational_ms, row.rotational_ms));
            let ie = Fs2Row::improvement(base.energy_per_access_mj, row.energy_per_access_mj);
            writeln!(
                s,
                "{} (against {}): access {} ({} the paper's {}…{}%), seek {} ({} {}…{}%), rotational {} ({} {}…{}%), energy per access {} ({} {}…{}%); TPC-W FS2-dynamic (Table 2): 50 / 72 / 31 / 55%.",
                v.label(),
                base.variant,
                cut_words(ia),
                within(ia, PAPER_ACCESS_RANGE),
                PAPER_ACCESS_RANGE.0,
                PAPER_ACCESS_RANGE.1,
                cut_words(is),
                within(is, PAPER_SEEK_RANGE),
                PAPER_SEEK_RANGE.0,
                PAPER_SEEK_RANGE.1,
                cut_words(ir),
                within(ir, PAPER_ROTATION_RANGE),
                PAPER_ROTATION_RANGE.0,
                PAPER_ROTATION_RANGE.1,
                cut_words(ie),
                within(ie, PAPER_ENERGY_RANGE),
                PAPER_ENERGY_RANGE.0,
                PAPER_ENERGY_RANGE.1
            )?;
        }
        if let (Some(oracle), Some(paper)) = (r.row(&w.name, Variant::Oracle), r.row(&w.name, Variant::Fs2Paper)) {
            let (bound, reached) = (Fs2Row::improvement(base.access_ms, oracle.access_ms), Fs2Row::improvement(base.access_ms, paper.access_ms));
            let share = if bound > 0.0 { format!("fs2_paper reaches {}% of that cut", crate::table::plain(100.0 * reached / bound, 0)) } else { "no cut to reach".into() };
            writeln!(s, "oracle (the first run's blocks replicated before the run, in the order read; not a bound where later runs differ): access {}; {share}", cut_words(bound))?;
        }
        if let Some((pass, change)) = r.worst_pass_overhead(&w.name, Variant::Fs2Paper) {
            let first = r.row(&w.name, Variant::Fs2Paper).map_or(f64::NAN, |p| -Fs2Row::improvement(base.first_pass_response_ms, p.first_pass_response_ms));
            writeln!(s, "fs2_paper's mean response against none's: first pass {}, worst pass (#{pass}) {} (the paper's TPC-W: first run +1.7%, the worst)", crate::table::signed_pct(first / 100.0, 1), crate::table::signed_pct(change / 100.0, 1))?;
        }
        if let Some(st) = r.row(&w.name, Variant::Fs2Static) {
            writeln!(
                s,
                "fs2_static against none: access {}, seek {}, rotational {}; the paper's TPC-W FS2-static (Table 2): access 24% less, seek 53% less, rotational 1.6% more.",
                cut_words(Fs2Row::improvement(base.access_ms, st.access_ms)),
                cut_words(Fs2Row::improvement(base.seek_ms, st.seek_ms)),
                cut_words(Fs2Row::improvement(base.rotational_ms, st.rotational_ms))
            )?;
        }
        if let Some(f) = r.row(&w.name, Variant::Fs2Ours).and_then(|x| x.fs2.as_ref()) {
            writeln!(
                s,
                "fs2_ours table: {} replicas alive, {} bytes per entry (the paper: {} — 4 MB per 1 GB of 4 KB replicas; ours is {:.0} MB per GB); {} journal commits; min free share {:.1}%.",
                f.replicas_alive,
                REPLICA_ENTRY_BYTES,
                PAPER_ENTRY_BYTES,
                REPLICA_ENTRY_BYTES as f64 * 262_144.0 / 1048576.0,
                f.commits,
                100.0 * f.min_free_share
            )?;
        }
    }
    writeln!(s)?;
    writeln!(s, "## FS2 against adaptive block rearrangement (paper 002: hottest blocks copied to 48 reserved middle cylinders, every period)")?;
    let mut t = Table::new(["workload", "variant", "access ms", "seek ms", "rot ms", "Δaccess", "Δseek", "Δrot", "busy %", "resp ms"]);
    for w in &r.workloads {
        for v in VERSUS_VARIANTS {
            let (Some(row), Some(base)) = (r.row(&w.name, v), r.base_of(&w.name, v)) else { continue };
            let [access, seek, rot, d_access, d_seek, d_rot] = timing_cells(base, row);
            t.row([
                w.name.clone(),
                v.label().to_string(),
                access,
                seek,
                rot,
                d_access,
                d_seek,
                d_rot,
                format!("{:.1}", row.busy_pct),
                format!("{:.2}", row.response_ms),
            ]);
        }
    }
    s.push_str(&t.render());
    writeln!(s)?;
    if !r.think_sensitivity.is_empty() {
        writeln!(s, "Think time moved ±5% (fs2_paper's access cut; the bar: under 5 points either way, so no result rests on a think time being a whole number of revolutions):")?;
        for w in &r.workloads {
            let Some((at, moved, worst)) = r.think_check(&w.name) else { continue };
            let cells: Vec<String> = moved.iter().map(|t| format!("{:.2} ms: {}%", t.think_ms, crate::table::plain(t.access_cut_pct, 0))).collect();
            writeln!(s, "  {:<13} as run {}%; {}; moves {:.0} points: {}", w.name, crate::table::plain(at, 0), cells.join(", "), worst, if worst < super::THINK_BAR_POINTS { "holds" } else { "MISSES the bar (depends on the think time)" })?;
        }
        writeln!(s)?;
    }
    writeln!(s, "fs2_paper's access cut at the measured pass against the bar of {ACCESS_CUT_BAR:.0}% (the paper's range {}…{}%):", PAPER_ACCESS_RANGE.0, PAPER_ACCESS_RANGE.1)?;
    for w in &r.workloads {
        let Some(cut) = r.paper_access_cut(&w.name) else { continue };
        let base = r.row(&w.name, Variant::None);
        let bound = base.zip(r.row(&w.name, Variant::Oracle)).map(|(b, o)| Fs2Row::improvement(b.access_ms, o.access_ms));
        let verdict = match negative_control(&w.name) {
            Some(why) => why.to_string(),
            None if w.name.starts_with("real_") => match (base, bound, r.row(&w.name, Variant::Fs2Paper), r.row(&w.name, Variant::Oracle)) {
                (Some(b), Some(bound), Some(paper), Some(oracle)) => format!(
                    "the real trace, held to its oracle's {bound:.0}% rather than the bar: seek is {:.0}% of none's access ({:.2} of {:.2} ms), so the cost is rotation among blocks FS2's rule leaves alone (it replicates only blocks outside the hot region): {:.0}% of reads from replicas against the oracle's {:.0}%",
                    100.0 * b.seek_ms / b.access_ms.max(f64::MIN_POSITIVE),
                    b.seek_ms,
                    b.access_ms,
                    paper.reads_from_copies_pct,
                    oracle.reads_from_copies_pct
                ),
                _ => "the real trace".to_string(),
            },
            None if cut >= ACCESS_CUT_BAR => format!("holds ({} the paper's range)", within(cut, PAPER_ACCESS_RANGE)),
            None => format!("MISSES: {}", r.cause(w).unwrap_or_default()),
        };
        writeln!(s, "  {:<13} {:>4}%  {verdict}", w.name, crate::table::plain(cut, 0))?;
    }
    writeln!(s)?;
    writeln!(s, "The paper's rows (improvement %, busy % with FS2 / on Ext2):")?;
    for p in PAPER_ROWS {
        writeln!(s, "  {:<28} access {:>5.1}  seek {:>5.1}  rot {:>5.1}  energy {:>5.1}  busy {:>4.1}/{:>4.1}", p.label, p.access, p.seek, p.rotation, p.energy, p.busy, p.busy_base)?;
    }
    if let Some(n) = note {
        writeln!(s, "{n}")?;
    }
    Ok(s)
}

/// Our Ext2 (`none`) beside what the paper says of its Ext2 run.
fn baseline_beside_paper(base: &Fs2Row, run: Paper003Run) -> String {
    let p = paper_ext2(run);
    let paper_access = p.access_ms.map_or(String::new(), |(a, sk, rot)| format!("access {a} ms = seek {sk} + rotation {rot}, "));
    format!(
        "our Ext2 (none): access {:.2} ms = seek {:.2} + rotation {:.2} + transfer {:.2}, seek {:.0}% of access, {:.0}% of requests unpositioned (read-ahead hits), busy {:.0}%; the paper's Ext2: {paper_access}seek about {:.0}% of busy time (from {}), busy {:.0}%",
        base.access_ms,
        base.seek_ms,
        base.rotational_ms,
        base.transfer_ms,
        100.0 * base.seek_ms / base.access_ms.max(f64::MIN_POSITIVE),
        base.unpositioned_pct,
        base.busy_pct,
        p.seek_share_pct,
        p.seek_share_from,
        p.busy_pct
    )
}

/// Mean access, seek and rotational time of `row`, then each one's change from `base`.
fn timing_cells(base: &Fs2Row, row: &Fs2Row) -> [String; 6] {
    [
        format!("{:.2}", row.access_ms),
        format!("{:.2}", row.seek_ms),
        format!("{:.2}", row.rotational_ms),
        pct(base.access_ms, row.access_ms),
        pct(base.seek_ms, row.seek_ms),
        pct(base.rotational_ms, row.rotational_ms),
    ]
}

pub(crate) fn csv_text(r: &Fs2Results) -> Result<String, std::fmt::Error> {
    let mut s = String::new();
    writeln!(s, "workload,variant,requests,access_ms,seek_ms,rotational_ms,transfer_ms,response_ms,busy_pct,reads_from_copies_pct,access_improvement_pct,seek_improvement_pct,rotational_improvement_pct,replicas_made,replica_ios,energy_per_access_mj,energy_improvement_pct,total_energy_j")?;
    for row in &r.rows {
        let base = Variant::ALL.into_iter().find(|v| v.label() == row.variant).and_then(|v| r.base_of(&row.workload, v));
        let imp = |f: fn(&Fs2Row) -> f64| base.map_or(String::new(), |b| format!("{:.2}", Fs2Row::improvement(f(b), f(row))));
        let (made, ios) = row.fs2.as_ref().map_or((String::new(), String::new()), |f| (f.replicas_made.to_string(), (f.copy_reads + f.copy_writes).to_string()));
        writeln!(
            s,
            "{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.2},{},{},{},{},{},{},{:.3},{},{:.3}",
            row.workload,
            row.variant,
            row.requests,
            row.access_ms,
            row.seek_ms,
            row.rotational_ms,
            row.transfer_ms,
            row.response_ms,
            row.busy_pct,
            if row.reads_from_copies_pct.is_nan() { String::new() } else { format!("{:.2}", row.reads_from_copies_pct) },
            imp(|x| x.access_ms),
            imp(|x| x.seek_ms),
            imp(|x| x.rotational_ms),
            made,
            ios,
            row.energy_per_access_mj,
            imp(|x| x.energy_per_access_mj),
            row.total_energy_j
        )?;
    }
    Ok(s)
}

/// One plot per workload: improvement in access, seek, rotational time and energy per variant
/// (grouped bars), with the paper's row for the workload it stands in for (its Table 2–5 figures).
pub(crate) fn plots(out: &Path, r: &Fs2Results) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut written = Vec::new();
    for w in &r.workloads {
        let series: Vec<BarSeries> = [Variant::Fs2Paper, Variant::Fs2Static, Variant::Fs2Ours, Variant::Rearrange, Variant::Oracle]
            .iter()
            .filter_map(|&v| r.row(&w.name, v).zip(r.base_of(&w.name, v)))
            .map(|(row, base)| BarSeries {
                label: format!("{} (against {})", row.variant, base.variant),
                values: vec![
                    Fs2Row::improvement(base.access_ms, row.access_ms),
                    Fs2Row::improvement(base.seek_ms, row.seek_ms),
                    Fs2Row::improvement(base.rotational_ms, row.rotational_ms),
                    Fs2Row::improvement(base.energy_per_access_mj, row.energy_per_access_mj),
                ],
            })
            .collect();
        // The paper's row for the workload this one stands in for; the range over its workloads
        // where it stands in for none in particular.
        let first_word = w.stands_for.split_whitespace().next().unwrap_or("");
        let (marks, mark_label) = match PAPER_ROWS.iter().find(|p| p.label.starts_with(first_word) && !p.label.contains("static")) {
            Some(p) => ([p.access, p.seek, p.rotation, p.energy].iter().enumerate().map(|(c, &v)| CategoryMark { category: c, low: v, high: v }).collect::<Vec<_>>(), format!("paper, {}", p.label)),
            None => (
                [PAPER_ACCESS_RANGE, PAPER_SEEK_RANGE, PAPER_ROTATION_RANGE, PAPER_ENERGY_RANGE].iter().enumerate().map(|(c, &(low, high))| CategoryMark { category: c, low, high }).collect(),
                "paper: range over its workloads".to_string(),
            ),
        };
        let path = out.join(format!("fs2-{}.svg", w.name));
        plot::grouped_bars(&path, &format!("FS2 on {}: improvement over no replication", w.name), "improvement, %", &["access", "seek", "rotational", "energy"], &series, &marks, &mark_label)?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::runs::Fs2Workload;
    use freeblock::workload::{ScatteredFilesSpec, WorkloadSpec};

    /// The text puts our Ext2 beside the paper's and a miss beside its cause.
    #[test]
    fn a_stand_in_prints_its_baseline_beside_the_papers_and_a_miss_its_cause() {
        let spec = ScatteredFilesSpec { shuffle_files: true, ..ScatteredFilesSpec::paper003(Paper003Run::Surge) };
        let w = Fs2Workload { name: "ext2_surge_shuffled".into(), spec: WorkloadSpec::ScatteredFiles(spec), stands_for: "SURGE (Table 5)".into(), period_s: 60.0, passes: 7, paper_run: Some(Paper003Run::Surge) };
        let row = |v: Variant, access_ms: f64| Fs2Row { workload: w.name.clone(), variant: v.label().into(), access_ms, seek_ms: access_ms / 3.0, rotational_ms: access_ms / 2.0, busy_pct: 13.0, ..Fs2Row::default() };
        let r = Fs2Results { workloads: vec![w.clone()], rows: vec![row(Variant::None, 3.0), row(Variant::Fs2Paper, 2.7)], think_sensitivity: Vec::new() };
        let s = text(&Fs2ReproConfig { trace: None, fs_trace: None, ..Fs2ReproConfig::default() }, &r, None).unwrap();
        assert!(s.contains("our Ext2 (none): access 3.00 ms") && s.contains("the paper's Ext2:") && s.contains("busy 13%"), "{s}");
        let verdict = s.lines().find(|l| l.contains("MISSES")).unwrap_or_else(|| panic!("no miss in:\n{s}"));
        assert!(verdict.trim_start().starts_with("ext2_surge_shuffled") && verdict.contains("MISSES: the files are read in a new random order each pass"), "{verdict}");
    }
}
