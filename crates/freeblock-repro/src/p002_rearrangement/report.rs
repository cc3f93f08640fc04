//! What the reproduction prints and writes: the text tables (ours beside the paper's), the JSON
//! document, the CSV files and the SVG plots.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::paper::{paper_day, paper_placement, paper_rotation, PaperMix, MAX_WRITE_TOP_SHARE, PAPER_FIG5_TOP100_SHARE, PAPER_FIG4_KNEE_BLOCKS, PAPER_TABLE_2, PAPER_TABLE_3, PAPER_TABLE_4, PAPER_TABLE_6};
use super::runs::{self as rr, DayRow, Metrics, MoveServices, Place, RearrangementConfig, RunRows, TraceSetup};
use super::verdicts::*;
use super::Results;
use crate::plot::{lines_on, Line, Reference, XAxis};
use crate::table::Table;


/// The seven metrics of the paper's Tables 2–5, in their column order: row name, column name,
/// CSV key, unit.
const METRICS: [(&str, &str, &str, Unit); 7] = [
    ("FCFS seek distance (cyl)", "FCFS dist", "fcfs_seek_distance", Unit::Cyl),
    ("seek distance (cyl)", "dist", "seek_distance", Unit::Cyl),
    ("zero-length seeks (%)", "zero %", "zero_seeks_pct", Unit::Pct),
    ("FCFS seek time (ms)", "FCFS seek ms", "fcfs_seek_ms", Unit::Ms),
    ("seek time (ms)", "seek ms", "seek_ms", Unit::Ms),
    ("service time (ms)", "service ms", "service_ms", Unit::Ms),
    ("waiting time (ms)", "waiting ms", "waiting_ms", Unit::Ms),
];
/// Index of the seek time in [`METRICS`].
const SEEK: usize = 4;

#[derive(Clone, Copy)]
enum Unit {
    Cyl,
    Pct,
    Ms,
}

fn values(m: &Metrics) -> [f64; 7] {
    [m.fcfs_seek_distance, m.seek_distance, m.zero_seeks_pct, m.fcfs_seek_ms, m.seek_ms, m.service_ms, m.waiting_ms]
}

fn num(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Cyl | Unit::Pct => format!("{v:.0}"),
        Unit::Ms => format!("{v:.2}"),
    }
}

/// `ours (paper)`, or `ours` when the paper has no such value.
fn cell(unit: Unit, ours: f64, paper: Option<f64>) -> String {
    match paper {
        Some(p) => format!("{} ({})", num(unit, ours), num(unit, p)),
        None => num(unit, ours),
    }
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

#[derive(Serialize)]
struct Report<'a> {
    pub(crate) config: &'a RearrangementConfig,
    pub(crate) disk_description: String,
    pub(crate) area: &'a AreaInfo,
    pub(crate) tables_2_3: &'a RunRows,
    pub(crate) paper_mix: &'a PaperMix,
    pub(crate) tables_2_3_paper_mix: &'a RunRows,
    pub(crate) paper_mix_meets_bar: bool,
    pub(crate) paper_table_2: [[f64; 7]; 4],
    pub(crate) paper_table_3: [[f64; 7]; 4],
    pub(crate) seek_cut: &'a [SeekCut; 2],
    pub(crate) fig4: &'a [Fig4Point],
    pub(crate) knee: &'a Knee,
    pub(crate) placements: &'a [RunRows],
    pub(crate) paper_table_4: [[[f64; 7]; 2]; 3],
    pub(crate) paper_table_6: Vec<(String, f64, f64)>,
    pub(crate) ordering: &'a Ordering,
    pub(crate) move_services: &'a MoveServices,
    pub(crate) moves: &'a [MoveRow],
    pub(crate) free_identical: bool,
    pub(crate) cloudphysics: Option<CloudJson<'a>>,
    pub(crate) cloudphysics_note: Option<&'a str>,
    pub(crate) plots: &'a [String],
    pub(crate) data: &'a [String],
}

#[derive(Serialize)]
struct CloudJson<'a> {
    pub(crate) setup: &'a TraceSetup,
    pub(crate) trace: String,
    pub(crate) runs: &'a [RunRows],
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AreaInfo {
    pub(crate) cylinders: u32,
    pub(crate) first_cylinder: u32,
    pub(crate) disk_cylinders: u32,
    pub(crate) block_sectors: u64,
    pub(crate) slots: usize,
    pub(crate) table_slots: usize,
    pub(crate) free_slots: usize,
    pub(crate) logical_blocks: u64,
}

// ------------------------------------------------------------------------------ text

/// The JSON document `--json` prints: everything computed.
pub(crate) fn json(r: &Results) -> serde_json::Result<String> {
    let report = Report {
        config: &r.cfg,
        disk_description: r.disk_description.clone(),
        area: &r.area,
        tables_2_3: &r.days,
        paper_mix: &r.mix,
        tables_2_3_paper_mix: &r.mix_days,
        paper_mix_meets_bar: r.meets_bar,
        paper_table_2: PAPER_TABLE_2,
        paper_table_3: PAPER_TABLE_3,
        seek_cut: &r.cut,
        fig4: &r.points,
        knee: &r.knee,
        placements: &r.placements,
        paper_table_4: PAPER_TABLE_4,
        paper_table_6: PAPER_TABLE_6.iter().map(|(l, a, b)| ((*l).to_string(), *a, *b)).collect(),
        ordering: &r.order,
        move_services: &r.moves,
        moves: &r.move_table,
        free_identical: r.free_identical,
        cloudphysics: r.cloud.as_ref().map(|(setup, runs)| CloudJson { setup, trace: r.cfg.trace.as_ref().map(|p| p.display().to_string()).unwrap_or_default(), runs }),
        cloudphysics_note: r.note.as_deref(),
        plots: &r.plots,
        data: &r.data,
    };
    Ok(serde_json::to_string_pretty(&report)? + "\n")
}

/// The text the command prints: every table, ours beside the paper's, and the verdicts.
pub(crate) fn text(r: &Results) -> String {
    let mut s = String::new();
    header_text(&mut s, &r.cfg, &r.disk_description, &r.area);
    days_text(&mut s, &r.days, &r.cut);
    mix_text(&mut s, &r.mix, &r.days, &r.mix_days, r.meets_bar);
    fig4_text(&mut s, &r.points, &r.knee);
    placements_text(&mut s, &r.placements, &r.order);
    moves_text(&mut s, &r.move_table, &r.moves, r.free_identical, r.cfg.moves_requests_per_day);
    match (&r.cloud, &r.note) {
        (Some((setup, runs)), _) => cloud_text(&mut s, setup, runs, r.cfg.trace.as_deref()),
        (None, Some(n)) => {
            let _ = writeln!(s, "\n{n}");
        }
        (None, None) => {}
    }
    let _ = writeln!(s, "\nplots: {}", r.plots.join(", "));
    let _ = writeln!(s, "data: {}", r.data.join(", "));
    s
}

fn header_text(s: &mut String, cfg: &RearrangementConfig, description: &str, area: &AreaInfo) {
    let w = &cfg.workload;
    let _ = writeln!(s, "Paper 002: adaptive block rearrangement (Akyürek & Salem, USENIX Summer 1993)");
    let _ = writeln!(s, "Disk: {} — {} (cache off), {} cylinders", cfg.disk, description, area.disk_cylinders);
    let _ = writeln!(
        s,
        "Workload: `days`, {} days of {:.0} s, {} requests/day arriving over the first {:.1} h (Poisson, {:.3}/s), {} KB block-aligned, {:.0}% reads, seed {}",
        w.days,
        w.day_s,
        w.requests_per_day,
        w.active_ns() as f64 / 3.6e12,
        w.rate(),
        w.block_sectors / 2,
        100.0 * w.read_fraction,
        cfg.seed
    );
    let _ = writeln!(
        s,
        "  skew: hot set of {} blocks, the {} hottest take {:.0}% of reads and {:.0}% of writes; {:.0}% of the hot set replaced each night",
        w.hot_blocks,
        w.top_blocks,
        100.0 * w.read_top_share,
        100.0 * w.write_top_share,
        100.0 * w.drift
    );
    let _ = writeln!(s, "  (today's mix, `fig5`: Fig. 5's skew with 60% reads and no sequential reads; every table below uses it unless it says \"paper's mix\")");
    let _ = writeln!(s, "Scheduler: {} (the driver's queue; SunOS sorted by cylinder)", cfg.scheduler);
    let _ = writeln!(
        s,
        "Area: {} cylinders from cylinder {} (centred), {} KB slots: {} slots, {} for the block table, {} free for hot blocks; logical disk {} blocks",
        area.cylinders,
        area.first_cylinder,
        area.block_sectors / 2,
        area.slots,
        area.table_slots,
        area.free_slots,
        area.logical_blocks
    );
    let _ = writeln!(s, "Schedule: days alternate off (monitoring only) and on (rearranged organ-pipe from the day before's counts); moves served as foreground I/O.");
    let _ = writeln!(s, "Cells: ours (paper).");
}

fn days_text(s: &mut String, rows: &RunRows, cut: &[SeekCut; 2]) {
    for (title, table, pick, c) in [
        ("Table 2: all requests", &PAPER_TABLE_2, (|d: &DayRow| d.all) as fn(&DayRow) -> Metrics, &cut[0]),
        ("Table 3: reads", &PAPER_TABLE_3, |d: &DayRow| d.reads, &cut[1]),
    ] {
        let _ = writeln!(s, "\n{title}");
        let mut header = vec!["metric".to_string()];
        header.extend(rows.days.iter().map(|d| format!("day {} ({})", d.day + 1, if d.on { "on" } else { "off" })));
        let mut t = Table::new(header);
        let mut req = vec!["requests".to_string()];
        req.extend(rows.days.iter().map(|d| pick(d).requests.to_string()));
        t.row(req);
        for (k, (name, _, _, unit)) in METRICS.iter().enumerate() {
            let mut row = vec![(*name).to_string()];
            row.extend(rows.days.iter().map(|d| cell(*unit, values(&pick(d))[k], paper_day(table, d.day).map(|p| p[k]))));
            t.row(row);
        }
        s.push_str(&t.render());
        let _ = writeln!(s, "{}", cut_line(c));
    }
}

fn mix_text(s: &mut String, mix: &PaperMix, today: &RunRows, rows: &RunRows, meets_bar: bool) {
    let w = &mix.spec;
    let _ = writeln!(s, "\nThe paper's mix (`days` with each parameter derived from the paper's own tables and Fig. 5; docs/cli.md explains each):");
    let bounds: Vec<String> = mix.read_share_bounds.iter().map(|(d, z, t)| format!("day {d}: {:.3} from zero-length seeks, {:.3} from seek times", z, t)).collect();
    let _ = writeln!(
        s,
        "  reads {:.1}% of requests — where the 100 hottest blocks take Fig. 5's ~{:.0}% of all requests (ours {:.1}%), below the bound Tables 2–3's on days set ({})",
        100.0 * w.read_fraction,
        100.0 * PAPER_FIG5_TOP100_SHARE,
        100.0 * mix.fig5_top100_share,
        bounds.join("; ")
    );
    let implied: Vec<String> = mix.writes_zero_seeks_pct.iter().map(|(d, z)| format!("day {d} {z:.1}%")).collect();
    let _ = writeln!(
        s,
        "  writes: {:.1}% on the {} hottest blocks (one MK156F cylinder, Table 1): of the writes' non-zero seeks 1 − z_w Tables 2–3 imply at that read share (z_w: {}), the head's returns after a read that moved it, r · (1 − z_r), come first; only the rest are writes off the handful, each out and back: 1 − max(0, (1 − z_w) − r · (1 − z_r))/2, at most {:.1}%. They are metadata blocks of the read-only /usr, single blocks the drift never replaces",
        100.0 * w.write_top_share,
        w.write_top(),
        implied.join(", "),
        100.0 * MAX_WRITE_TOP_SHARE
    );
    let off: Vec<String> = mix.writes_zero_off_pct.iter().map(|(d, z)| format!("day {d} {z:.1}%")).collect();
    let _ = writeln!(
        s,
        "  within the handful: writes ∝ k^-{:.2}, where a generated day's writes repeat the block before them {:.1}% of the time, the mean of the off days' writes' zero-length seeks ({}): there the handful is at home, in many cylinder groups",
        w.write_top_exponent.unwrap_or(f64::NAN),
        mix.writes_repeat_pct,
        off.join(", ")
    );
    let bursts: Vec<String> = mix.write_bursts.iter().map(|(_, b)| format!("{b:.1}")).collect();
    let _ = writeln!(s, "  writes in bursts of mean {:.1} (1 + writes' wait / writes' service, Tables 2–3 days 1–4: {})", w.write_burst, bursts.join(", "));
    let (handful, continuing, elsewhere) = mix.reads_handful_continuing_elsewhere;
    let (off, on) = mix.reads_zero_off_on_pct;
    let _ = writeln!(
        s,
        "  reads: {:.1}% continue a file (Table 3: {off:.1}% seek zero on the off days), {:.1}% read the handful (the on days' {on:.1}% less that), {:.1}% start a file elsewhere; files of mean {:.1} blocks; {} ranks, a hot set of about {} blocks (Fig. 5: under 2000 take all)",
        100.0 * continuing,
        100.0 * handful,
        100.0 * elsewhere,
        1.0 / (1.0 - w.read_sequential),
        w.hot_blocks,
        w.read_top() + ((w.hot_blocks - w.read_top()) as f64 / (1.0 - w.read_sequential)).round() as u32
    );
    let _ = writeln!(s, "Tables 2–3 with both mixes, all requests (reads): today's mix | paper's mix | paper");
    let mut t = Table::new(["day", "area", "zero-length seeks %: today", "paper's mix", "paper", "seek ms: today", "paper's mix", "paper", "FCFS seek distance: today", "paper's mix", "paper"]);
    let pct = |m: &Metrics, r: &Metrics| format!("{:.0} ({:.0})", m.zero_seeks_pct, r.zero_seeks_pct);
    let ms = |m: &Metrics, r: &Metrics| format!("{:.2} ({:.2})", m.seek_ms, r.seek_ms);
    let cyl = |m: &Metrics, r: &Metrics| format!("{:.0} ({:.0})", m.fcfs_seek_distance, r.fcfs_seek_distance);
    for (a, b) in today.days.iter().zip(&rows.days) {
        let p = paper_day(&PAPER_TABLE_2, a.day).zip(paper_day(&PAPER_TABLE_3, a.day));
        let paper = |k: usize, unit: Unit| p.map_or("—".into(), |(all, reads)| format!("{} ({})", num(unit, all[k]), num(unit, reads[k])));
        t.row([
            (a.day + 1).to_string(),
            if b.on { "on".into() } else { "off".into() },
            pct(&a.all, &a.reads),
            pct(&b.all, &b.reads),
            paper(2, Unit::Pct),
            ms(&a.all, &a.reads),
            ms(&b.all, &b.reads),
            paper(SEEK, Unit::Ms),
            cyl(&a.all, &a.reads),
            cyl(&b.all, &b.reads),
            paper(0, Unit::Cyl),
        ]);
    }
    s.push_str(&t.render());
    let on: Vec<String> = rows.days.iter().filter(|d| d.on).map(|d| format!("day {}: {:.1}%, {:.2} ms", d.day + 1, d.all.zero_seeks_pct, d.all.seek_ms)).collect();
    let _ = writeln!(
        s,
        "Paper's mix on the rearranged days, all requests (bar: zero-length seeks ≥ {BAR_ZERO_SEEKS_PCT:.0}% and seek ≤ {BAR_SEEK_MS:.1} ms; paper 88–92%, 0.98–1.55 ms): {} — meets the bar: {}",
        if on.is_empty() { "no on day (run at least 2 days)".into() } else { on.join("; ") },
        yes_no(meets_bar)
    );
    if !meets_bar {
        for line in shortfall(mix, rows) {
            let _ = writeln!(s, "  {line}");
        }
    }
}

/// Where the head still moved on the paper's mix's rearranged days, in the paper's terms: the
/// writes' and reads' zero-length seeks beside what Tables 2–3 imply, and the kinds of requests
/// that moved the head (share of all requests, part of the mean seek time), over the on days.
fn shortfall(mix: &PaperMix, rows: &RunRows) -> Vec<String> {
    let on: Vec<&DayRow> = rows.days.iter().filter(|d| d.on).collect();
    if on.is_empty() {
        return Vec::new();
    }
    let (mut n, mut reads, mut zero, mut reads_zero) = (0.0, 0.0, 0.0, 0.0);
    for d in &on {
        n += d.all.requests as f64;
        reads += d.reads.requests as f64;
        zero += d.all.zero_seeks_pct / 100.0 * d.all.requests as f64;
        reads_zero += d.reads.zero_seeks_pct / 100.0 * d.reads.requests as f64;
    }
    let writes_zero = 100.0 * (zero - reads_zero) / (n - reads).max(1.0);
    let implied = mix.writes_zero_seeks_pct.iter().map(|w| w.1).fold(f64::INFINITY, f64::min);
    let (_, reads_on) = mix.reads_zero_off_on_pct;
    let mut out = vec![format!(
        "MISS — measured on the on days: writes seek zero {writes_zero:.1}% (the tables imply ≥ {implied:.1}% at this read share), reads {:.1}% (paper {reads_on:.1}%). The requests that moved the head (share of all requests, part of the mean seek time):",
        100.0 * reads_zero / reads.max(1.0)
    )];
    let mut kinds: Vec<(String, f64, f64)> = Vec::new();
    for d in &on {
        let Some(c) = rows.causes.get(d.day as usize) else { continue };
        for m in &c.moved {
            let name = cause_name(m);
            match kinds.iter_mut().find(|k| k.0 == name) {
                Some(k) => {
                    k.1 += m.requests as f64;
                    k.2 += m.seek_ms;
                }
                None => kinds.push((name, m.requests as f64, m.seek_ms)),
            }
        }
    }
    kinds.sort_by(|a, b| b.2.total_cmp(&a.2));
    let parts: Vec<String> = kinds.iter().map(|(name, k, ms)| format!("{name} {:.1}% ({:.2} ms)", 100.0 * k / n, ms / n)).collect();
    out.push(parts.join("; "));
    let (mut home, mut unseen) = (0u64, 0u64);
    for d in &on {
        if let Some(c) = rows.causes.get(d.day as usize) {
            home += c.reads_at_home + c.writes_at_home;
            unseen += c.at_home_unseen_before;
        }
    }
    out.push(format!(
        "Served at home: {:.1}% of requests; {:.0}% of those of blocks no request referenced the day before (rarely read files and the drift's new ranks: the day before's counts cannot place them), the rest referenced but not among the blocks placed",
        100.0 * home as f64 / n,
        100.0 * unseen as f64 / home.max(1) as f64
    ));
    out
}

/// A kind of head movement in the paper's words.
fn cause_name(m: &rr::SeekCause) -> String {
    let what = if m.read { "reads" } else { "writes" };
    match (m.to, m.from) {
        (Place::Area, Place::Area) => format!("{what} moving between cylinders of the area"),
        (Place::Home, Place::Area) => format!("{what} of blocks not rearranged (at home), from the area"),
        (Place::Area, Place::Home) => format!("{what} back to the area from a block at home"),
        (Place::Home, Place::Home) => format!("{what} between blocks at home"),
    }
}

fn cut_line(c: &SeekCut) -> String {
    let who = if c.subset == "all" { "All requests" } else { "Reads" };
    let paper = format!("paper: {:.2} → {:.2} ms, −{:.0}%", c.paper_day1_ms, c.paper_day2_ms, 100.0 * c.paper_cut);
    let paper_mean = match (c.paper_off_ms, c.paper_on_ms) {
        (Some(off), Some(on)) if (off - c.paper_day1_ms).abs() > 1e-9 || (on - c.paper_day2_ms).abs() > 1e-9 => {
            format!("; over the same days {off:.2} → {on:.2} ms, −{:.0}%", 100.0 * (1.0 - on / off))
        }
        _ => String::new(),
    };
    match (c.off_ms, c.on_ms, c.cut) {
        (Some(off), Some(on), Some(cut)) => format!(
            "{who}: seek time cut by {:.0}% (ours, mean of off days {off:.2} → on days {on:.2} ms; {paper}{paper_mean}); more than half: {}",
            100.0 * cut,
            yes_no(c.more_than_half)
        ),
        _ => format!("{who}: no off day and on day to compare (run at least 2 days; {paper})"),
    }
}

fn fig4_text(s: &mut String, pts: &[Fig4Point], k: &Knee) {
    let _ = writeln!(s, "\nFig. 4: blocks placed on the on day (day 2 of an off, on pair), all requests");
    let mut t = Table::new(["blocks", "seek distance (cyl)", "seek ms", "FCFS seek ms", "zero-length seeks", "reads seek ms", "seek ms saved"]);
    for p in pts {
        t.row([
            p.blocks.to_string(),
            format!("{:.1}", p.all.seek_distance),
            format!("{:.2}", p.all.seek_ms),
            format!("{:.2}", p.all.fcfs_seek_ms),
            format!("{:.0}%", p.all.zero_seeks_pct),
            format!("{:.2}", p.reads.seek_ms),
            format!("{:.2}", p.reduction_ms),
        ]);
    }
    s.push_str(&t.render());
    let paper = format!(
        "paper: little gain past the hottest ~{} blocks (about {:.0}% of the blocks)",
        k.paper_blocks,
        100.0 * k.paper_share
    );
    match (k.blocks, k.share) {
        (Some(b), Some(share)) => {
            let _ = writeln!(
                s,
                "Knee: {b} blocks = {:.2}% of the logical disk's {} blocks (the fewest within {:.0}% of the final reduction, {:.2} ms); {paper}",
                100.0 * share,
                k.logical_blocks,
                100.0 * KNEE_WITHIN,
                k.final_reduction_ms
            );
        }
        _ => {
            let _ = writeln!(s, "Knee: none (placing blocks did not reduce seek time); {paper}");
        }
    }
}

fn placements_text(s: &mut String, runs: &[RunRows], o: &Ordering) {
    let _ = writeln!(s, "\nTables 4–5: placement policies, the on day (day 2 of an off, on pair)");
    let mut header = vec!["placement".to_string(), "requests".into()];
    header.extend(METRICS.iter().map(|m| m.1.to_string()));
    let mut t = Table::new(header);
    for r in runs {
        let Some(d) = on_day(r) else { continue };
        let paper = paper_placement(&r.label);
        for (i, (subset, m)) in [("all", &d.all), ("reads", &d.reads)].into_iter().enumerate() {
            let label = if i == 0 { format!("{} {subset}", r.label) } else { format!("  {subset}") };
            let mut row = vec![label, m.requests.to_string()];
            let v = values(m);
            row.extend(METRICS.iter().enumerate().map(|(k, (_, _, _, unit))| cell(*unit, v[k], paper.map(|p| p[i][k]))));
            t.row(row);
        }
    }
    s.push_str(&t.render());
    let ms = |v: Option<f64>| v.map_or("—".into(), |v| format!("{v:.2}"));
    let _ = writeln!(
        s,
        "Ordering by seek time, organ-pipe ≥ interleaved ≫ serial (paper: 1.55, 2.50, 8.50 ms): ours {}, {}, {} ms — organ-pipe ≤ interleaved (+{:.0}%): {}; interleaved ≤ serial: {}; serial ≥ {:.1}× interleaved: {}; holds: {}",
        ms(o.organ_pipe_ms),
        ms(o.interleaved_ms),
        ms(o.serial_ms),
        100.0 * ORDER_TOLERANCE,
        yes_no(o.organ_pipe_at_least_interleaved),
        yes_no(o.interleaved_at_least_serial),
        CLEARLY_WORSE,
        yes_no(o.serial_clearly_worse),
        yes_no(o.holds)
    );

    let _ = writeln!(s, "\nTable 6: rotational latency + transfer of reads (service − seek), ms");
    let mut t = Table::new(["placement", "ours", "paper (two days)"]);
    let mut rot = Vec::new();
    if let Some(d) = runs.first().and_then(off_day) {
        let p = paper_rotation("none");
        t.row(["none (off day)".to_string(), format!("{:.2}", d.reads.rotation_transfer_ms()), p.map_or("—".into(), |(a, b)| format!("{a:.2}, {b:.2}"))]);
    }
    for r in runs {
        let Some(d) = on_day(r) else { continue };
        let p = paper_rotation(&r.label);
        rot.push((r.label.as_str(), d.reads.rotation_transfer_ms()));
        t.row([r.label.clone(), format!("{:.2}", d.reads.rotation_transfer_ms()), p.map_or("—".into(), |(a, b)| format!("{a:.2}, {b:.2}"))]);
    }
    s.push_str(&t.render());
    let get = |l: &str| rot.iter().find(|r| r.0 == l).map(|r| r.1);
    let same = get("organ_pipe").zip(get("interleaved")).map(|(o, i)| (o - i).abs() < SAME_ROTATION_MS);
    let _ = writeln!(
        s,
        "Our synthetic workload has no sequential file reads: every request is one 8 KB block drawn from the hot set, so interleaved placement has no rotational optimisation to preserve (the paper's ~1 ms gain of interleaved over organ-pipe came from keeping files' interleaved blocks together)."
    );
    match same {
        Some(true) => {
            let _ = writeln!(s, "Interleaved and organ-pipe differ by less than {SAME_ROTATION_MS} ms here: that is why.");
        }
        Some(false) => {
            let _ = writeln!(s, "Interleaved and organ-pipe differ by {SAME_ROTATION_MS} ms or more here; with no file chains to keep together, that difference comes from where each places the blocks, not from a preserved interleave.");
        }
        None => {}
    }
}

fn moves_text(s: &mut String, rows: &[MoveRow], m: &MoveServices, identical: bool, requests_per_day: u64) {
    let _ = writeln!(s, "\nOurs beyond the paper: the on day with its moves served five ways (organ-pipe, all requests; a busier day: {requests_per_day} requests/day)");
    let mut t = Table::new(["moves served", "response ms", "seek ms", "50% moved after", "90% moved after", "rearrangement done after", "moves committed", "move reads", "move writes", "table writes"]);
    let secs = |v: Option<f64>, none: &str| v.map_or(none.to_string(), |v| format!("{v:.1} s"));
    for r in rows {
        t.row([
            r.service.clone(),
            r.on_day_response_ms.map_or("—".into(), |v| format!("{v:.2}")),
            r.on_day_seek_ms.map_or("—".into(), |v| format!("{v:.2}")),
            secs(r.half_after_s, "—"),
            secs(r.ninety_after_s, "—"),
            secs(r.done_after_s, "not complete"),
            format!("{} of {}", r.committed_moves, r.planned_moves),
            r.move_reads.to_string(),
            r.move_writes.to_string(),
            r.table_writes.to_string(),
        ]);
    }
    s.push_str(&t.render());
    let _ = writeln!(s, "(foreground: as the paper's driver, one move at a time among the requests; idle: only when the disk is idle; free: freeblock scheduling only, in foreground requests' rotational latency; freeidle: freeblock scheduling plus its idle-time transfers after {} ms idle; instant: the layout at no cost, a bound)", rr::FREE_IDLE_AFTER_MS);
    let _ = writeln!(
        s,
        "Free moves vs the same table changes at no cost: {} of {} requests differ (max Δ {} ns), freeblock delayed {} foreground requests — identical: {}",
        m.free_vs_costless_differing,
        m.compared,
        m.max_difference_ns,
        m.delayed_foreground,
        yes_no(identical)
    );
    if let Some(free) = rows.iter().find(|r| r.service == "free") {
        if free.committed_moves == 0 && free.planned_moves > 0 {
            let _ = writeln!(
                s,
                "  Note: the free run committed none of its {} moves by the day's end, so that check compares two days on which the area was never filled; it shows freeblock's I/O stayed off the foreground, not that free moves give the rearranged layout.",
                free.planned_moves
            );
        }
    }
}

fn cloud_text(s: &mut String, setup: &TraceSetup, runs: &[RunRows], trace: Option<&Path>) {
    let _ = writeln!(
        s,
        "\nCloudPhysics VSCSI trace{} on the {} ({}-minute periods alternating off and on)",
        trace.map_or(String::new(), |p| format!(" ({})", p.display())),
        setup.disk,
        setup.period_s / 60.0
    );
    let _ = writeln!(s, "Mapping: {}", setup.mapping);
    let mut t = Table::new(["placement", "period", "area", "requests", "seek distance (cyl)", "zero-length seeks", "seek ms", "service ms", "waiting ms", "reads seek ms"]);
    for r in runs {
        for (i, d) in r.days.iter().enumerate() {
            t.row([
                if i == 0 { r.label.clone() } else { String::new() },
                (d.day + 1).to_string(),
                if d.on { "on".into() } else { "off".into() },
                d.all.requests.to_string(),
                format!("{:.1}", d.all.seek_distance),
                format!("{:.0}%", d.all.zero_seeks_pct),
                format!("{:.2}", d.all.seek_ms),
                format!("{:.2}", d.all.service_ms),
                format!("{:.2}", d.all.waiting_ms),
                format!("{:.2}", d.reads.seek_ms),
            ]);
        }
    }
    s.push_str(&t.render());
    // Request-weighted: the periods hold very different numbers of requests (the last one only
    // the trace's final moments).
    let weighted = |r: &RunRows, on: bool| {
        let (n, sum) = r.days.iter().filter(|d| d.on == on).fold((0u64, 0.0), |(n, s), d| (n + d.all.requests, s + d.all.seek_ms * d.all.requests as f64));
        (n > 0).then(|| sum / n as f64)
    };
    for r in runs {
        if let (Some(off), Some(on)) = (weighted(r, false), weighted(r, true)) {
            let cut = if off > 0.0 { crate::table::signed_pct(on / off - 1.0, 0) } else { "—".into() };
            let _ = writeln!(s, "{}: mean seek time over off periods {off:.2} ms → on periods {on:.2} ms ({cut}; means over requests)", r.label);
        }
    }
}

// ------------------------------------------------------------------------------ files

pub(crate) fn write_csv(path: &Path, text: &str) -> Result<String, Box<dyn std::error::Error>> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path.display().to_string())
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.6}"))
}

pub(crate) fn days_csv(days: &RunRows, mix_days: &RunRows, fig4: &[(usize, RunRows)], placements: &[RunRows], moves: &MoveServices) -> Result<String, std::fmt::Error> {
    let mut s = String::from("experiment,run,day,on,subset,requests");
    for (_, _, key, _) in METRICS {
        write!(s, ",{key},paper_{key}")?;
    }
    s.push_str(",rotation_transfer_ms,paper_rotation_transfer_ms\n");
    let mut runs: Vec<(&str, &RunRows)> = vec![("tables_2_3", days), ("tables_2_3_paper_mix", mix_days)];
    runs.extend(fig4.iter().map(|(_, r)| ("fig4", r)));
    runs.extend(placements.iter().map(|r| ("placements", r)));
    runs.extend(moves.runs.iter().map(|r| ("moves", r)));
    for (experiment, r) in runs {
        for d in &r.days {
            for (i, (subset, m)) in [("all", &d.all), ("reads", &d.reads)].into_iter().enumerate() {
                // The paper's value of this cell, where it printed one.
                let paper: Option<[f64; 7]> = match experiment {
                    "tables_2_3" | "tables_2_3_paper_mix" => paper_day(if i == 0 { &PAPER_TABLE_2 } else { &PAPER_TABLE_3 }, d.day),
                    "placements" if d.on => paper_placement(&r.label).map(|p| p[i]),
                    _ => None,
                };
                let rot_label = match experiment {
                    "placements" if d.on => Some(r.label.as_str()),
                    "placements" | "tables_2_3" | "tables_2_3_paper_mix" if !d.on => Some("none"),
                    _ => None,
                };
                let paper_rot = if i == 1 { rot_label.and_then(paper_rotation).map(|(a, b)| (a + b) / 2.0) } else { None };
                write!(s, "{experiment},{},{},{},{subset},{}", r.label.replace(',', ";"), d.day + 1, d.on, m.requests)?;
                let v = values(m);
                for k in 0..METRICS.len() {
                    write!(s, ",{:.6},{}", v[k], opt(paper.map(|p| p[k])))?;
                }
                writeln!(s, ",{:.6},{}", m.rotation_transfer_ms(), opt(paper_rot))?;
            }
        }
    }
    Ok(s)
}

pub(crate) fn fig4_csv(pts: &[Fig4Point]) -> Result<String, std::fmt::Error> {
    let mut s = String::from("blocks,seek_distance,seek_ms,fcfs_seek_distance,fcfs_seek_ms,zero_seeks_pct,service_ms,waiting_ms,reads_seek_ms,seek_ms_saved\n");
    for p in pts {
        let a = &p.all;
        writeln!(
            s,
            "{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6}",
            p.blocks, a.seek_distance, a.seek_ms, a.fcfs_seek_distance, a.fcfs_seek_ms, a.zero_seeks_pct, a.service_ms, a.waiting_ms, p.reads.seek_ms, p.reduction_ms
        )?;
    }
    Ok(s)
}

pub(crate) fn moves_csv(rows: &[MoveRow], m: &MoveServices) -> Result<String, std::fmt::Error> {
    let mut s = String::from(
        "service,on_day_response_ms,on_day_seek_ms,half_after_s,ninety_after_s,done_after_s,complete,planned,moves,committed,copied_in,moved_out,moved_out_dirty,aborted,move_reads,move_writes,table_writes,writes_to_copies,differs_from_costless,compared,max_difference_ns,delayed_foreground\n",
    );
    for (row, run) in rows.iter().zip(&m.runs) {
        let p = &run.policy;
        let period = on_day(run).and_then(|d| p.periods.iter().find(|q| q.period == d.day));
        let free = row.service == "free";
        let free_cols = if free {
            format!("{},{},{},{}", m.free_vs_costless_differing, m.compared, m.max_difference_ns, m.delayed_foreground)
        } else {
            ",,,".into()
        };
        writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{free_cols}",
            row.service,
            opt(row.on_day_response_ms),
            opt(row.on_day_seek_ms),
            opt(row.half_after_s),
            opt(row.ninety_after_s),
            opt(row.done_after_s),
            row.complete,
            period.map_or(0, |q| q.planned),
            period.map_or(0, |q| q.moves),
            period.map_or(0, |q| q.committed),
            p.copied_in,
            p.moved_out,
            p.moved_out_dirty,
            p.aborted,
            p.move_reads,
            p.move_writes,
            p.table_writes,
            p.writes_to_copies,
        )?;
    }
    Ok(s)
}

pub(crate) fn cloud_csv(runs: &[RunRows]) -> Result<String, std::fmt::Error> {
    let mut s = String::from("placement,period,on,subset,requests");
    for (_, _, key, _) in METRICS {
        write!(s, ",{key}")?;
    }
    s.push_str(",rotation_transfer_ms,done_after_s\n");
    for r in runs {
        for d in &r.days {
            let done = r.policy.periods.iter().find(|p| p.period == d.day && p.on).and_then(|p| p.done_after_s);
            for (subset, m) in [("all", &d.all), ("reads", &d.reads)] {
                write!(s, "{},{},{},{subset},{}", r.label, d.day + 1, d.on, m.requests)?;
                for v in values(m) {
                    write!(s, ",{v:.6}")?;
                }
                writeln!(s, ",{:.6},{}", m.rotation_transfer_ms(), opt(done))?;
            }
        }
    }
    Ok(s)
}

pub(crate) fn plots(out: &Path, days: &RunRows, pts: &[Fig4Point]) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let fig4 = out.join("paper002-fig4.svg");
    let x = |p: &Fig4Point| p.blocks as f64;
    lines_on(
        &fig4,
        "Paper 002 Fig. 4: seek time against the number of rearranged blocks",
        ("blocks placed in the reserved area", XAxis::Integers),
        "mean seek time (ms)",
        &[
            Line { label: "seek time".into(), points: pts.iter().map(|p| (x(p), p.all.seek_ms)).collect() },
            Line { label: "FCFS seek time".into(), points: pts.iter().map(|p| (x(p), p.all.fcfs_seek_ms)).collect() },
        ],
        &[Reference::At { label: format!("paper 002: little gain past ~{PAPER_FIG4_KNEE_BLOCKS} blocks"), xs: vec![PAPER_FIG4_KNEE_BLOCKS as f64] }],
    )?;
    let per_day = out.join("paper002-days.svg");
    let day = |d: &DayRow| (d.day + 1) as f64;
    let paper = |t: &[[f64; 7]; 4]| days.days.iter().filter_map(|d| paper_day(t, d.day).map(|p| (day(d), p[SEEK]))).collect();
    lines_on(
        &per_day,
        "Paper 002 Tables 2–3: seek time per day (days alternate off, on)",
        ("day", XAxis::Integers),
        "mean seek time (ms)",
        &[
            Line { label: "ours, all requests".into(), points: days.days.iter().map(|d| (day(d), d.all.seek_ms)).collect() },
            Line { label: "ours, reads".into(), points: days.days.iter().map(|d| (day(d), d.reads.seek_ms)).collect() },
        ],
        &[Reference::Curve { label: "paper 002 Table 2: all requests".into(), points: paper(&PAPER_TABLE_2) }, Reference::Curve { label: "paper 002 Table 3: reads".into(), points: paper(&PAPER_TABLE_3) }],
    )?;
    Ok(vec![fig4.display().to_string(), per_day.display().to_string()])
}

