//! `freeblock repro scrub`: a whole-disk scrub done five ways under the same foreground on the
//! 14 TB model (issue 35), beside OpenZFS PR #11166's published IOPS; CSV and a plot of
//! foreground IOPS against scrub MB/s.

use std::fmt::Write as _;

use freeblock::scrub_repro::{self as sr, Foreground, Scheme, ScrubReport, ScrubRow};

use super::args::ReproArgs;
use crate::plot::{lines, Line, Reference};
use crate::table::{signed_pct, Table};
use crate::output::CmdResult;

/// The knobs from the command line.
fn config(a: &ReproArgs) -> Result<sr::ScrubReproConfig, Box<dyn std::error::Error>> {
    let mut c = if a.quick { sr::ScrubReproConfig::quick() } else { sr::ScrubReproConfig::default() };
    if let Some(s) = a.seconds {
        c.seconds = s;
    }
    if let Some(t) = a.threads {
        c.threads = t.max(1);
    }
    if let Some(x) = a.fg_span {
        c.fg_span = x;
    }
    if let Some(x) = a.idle_after_ms {
        c.idle_after_ms = x;
        c.freeblock_idle_after_ms = x;
    }
    if let Some(x) = a.sample_share {
        c.sample_share_per_day = x;
    }
    if let Some(x) = a.zfs_pause_ms {
        c.zfs_after_pause_ms = x;
    }
    if let Some(x) = &a.age_limit_ms {
        c.age_limit_ms = match x.as_str() {
            "none" => None,
            ms => Some(ms.parse().map_err(|_| format!("--age-limit-ms {ms}: expected a number of ms or `none`"))?),
        };
    }
    Ok(c)
}

pub fn repro_scrub(a: &ReproArgs) -> CmdResult {
    let c = config(a)?;
    c.validate()?;
    let total = (Scheme::ALL.len() * 2) as u64;
    let pb = crate::progress::Runs::new("scrub", total, a.quiet || a.json);
    let report = sr::scrub(&c, &|done, total| pb.set(done, total))?;
    pb.finish();
    std::fs::create_dir_all(&a.out)?;
    let csv_path = a.out.join("scrub.csv");
    std::fs::write(&csv_path, csv(&report)?).map_err(|e| format!("{}: {e}", csv_path.display()))?;
    let svg_path = a.out.join("scrub.svg");
    plot(&report, &svg_path)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    out!("{}", text(&report));
    outln!("CSV: {}; plot: {}", csv_path.display(), svg_path.display());
    Ok(())
}

fn csv(r: &ScrubReport) -> Result<String, std::fmt::Error> {
    let mut s = String::from("foreground,scheme,requests,iops,mean_ms,p99_ms,scrub_mb_s,idle_mb_s,eta_hours,scrubs_per_day,sample_hours\n");
    for row in &r.rows {
        let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.3}"));
        writeln!(
            s,
            "{:?},{:?},{},{:.3},{:.4},{:.4},{:.4},{:.4},{},{:.4},{}",
            row.foreground, row.scheme, row.requests, row.iops, row.mean_ms, row.p99_ms, row.scrub_mb_s, row.idle_mb_s, opt(row.eta_hours), row.scrubs_per_day, opt(row.sample_hours)
        )?;
    }
    Ok(s)
}

fn hours(h: Option<f64>) -> String {
    match h {
        None => "never".into(),
        Some(h) if h >= 48.0 => format!("{:.1} d", h / 24.0),
        Some(h) => format!("{h:.1} h"),
    }
}

fn table(r: &ScrubReport, fg: Foreground) -> String {
    let share = 100.0 * r.config.sample_share_per_day;
    let mut t = Table::new(["scheme".to_string(), "IOPS".into(), "× none".into(), "mean ms".into(), "p99 ms".into(), "scrub MB/s".into(), "whole-disk ETA".into(), "scrubs/day".into(), format!("{share}% of blocks in")]);
    for row in r.rows.iter().filter(|x| x.foreground == fg) {
        let times = r.iops_share(fg, row.scheme).map_or(String::new(), |x| format!("{x:.3}"));
        t.row([
            row.scheme.label().to_string(),
            format!("{:.1}", row.iops),
            times,
            format!("{:.2}", row.mean_ms),
            format!("{:.2}", row.p99_ms),
            if row.idle_mb_s > 0.0 { format!("{:.2} ({:.2} idle)", row.scrub_mb_s, row.idle_mb_s) } else { format!("{:.2}", row.scrub_mb_s) },
            if row.scheme.scrubs() { hours(row.eta_hours) } else { String::new() },
            if row.scheme.scrubs() { format!("{:.3}", row.scrubs_per_day) } else { String::new() },
            if row.scheme.scrubs() { hours(row.sample_hours) } else { String::new() },
        ]);
    }
    t.render()
}

fn against(ours: f64, published: f64) -> String {
    format!("{ours:.1} beside {published} ({:.0}% of it)", 100.0 * ours / published)
}

/// The printed report: both tables, the published figures beside ours and the verdicts.
pub fn text(r: &ScrubReport) -> String {
    let c = &r.config;
    let mut s = format!(
        "A whole-disk scrub five ways on {} ({:.1} TB, media model, a {}-command firmware queue ordering by positioning time, age limit {}), {} simulated s a run, statistics after {} s, seed {}.\n",
        r.disk,
        r.capacity_bytes as f64 / 1e12,
        sr::FIRMWARE_QUEUE_DEPTH,
        c.age_limit_ms.map_or("none".into(), |l| format!("{l} ms")),
        c.seconds,
        c.warmup_s,
        c.seed
    );
    s += &format!(
        "Schemes: ZFS-like before #11166 = {} KiB sequential reads, {} always in flight, no pause; after = 1 in flight, {} ms pause after each read; idle class = {} KiB reads, 1 in flight, only after {} ms without foreground I/O; \
freeblock in the firmware = 4 KB blocks in rotational gaps, idle time after {} ms; freeblock from the host = paper 001's scheduler (0.4 ms margin, 2 commands at the drive, host SPTF; the drive's queue reorders; the true model, as a banded drive cannot be characterised); \
paced = ZFS-like, 1 in flight, a {:.0} ms pause so as to read {}% of the blocks a day.\n",
        sr::ZFS_READ_KIB,
        sr::ZFS_BEFORE_IN_FLIGHT,
        c.zfs_after_pause_ms,
        sr::IDLE_READ_KIB,
        c.idle_after_ms,
        c.freeblock_idle_after_ms,
        r.sampled_pause_ms,
        100.0 * c.sample_share_per_day
    );
    s += "ETA and scrubs a day are extrapolated from the scrub rate measured in the window; a freeblock scan's tail is slower than its start, so its ETA is a lower bound.\n";
    let span = if c.fg_span < 1.0 { format!(" over the first {:.1}% of the disk", 100.0 * c.fg_span) } else { " over the whole disk".into() };
    s += &format!("\nForeground {}{span}:\n", Foreground::RandomQd1.label());
    s += &table(r, Foreground::RandomQd1);
    let a = Foreground::RandomQd1;
    if let (Some(none), Some(before), Some(after)) = (r.row(a, Scheme::None), r.row(a, Scheme::ZfsBefore), r.row(a, Scheme::ZfsAfter)) {
        s += &format!("Idle IOPS: ours {} (PR #11166, Seagate 14 TB).\n", against(none.iops, sr::PUBLISHED_IDLE_IOPS));
        s += &format!(
            "  Why: 166 IOPS is {:.2} ms a read; ours take {:.2} ms, a seek{span} plus half a turn ({:.2} ms) on average. The published test read a pool's data, not the whole disk, so its seeks were short; `--fg-span` narrows ours.\n",
            1e3 / sr::PUBLISHED_IDLE_IOPS,
            none.mean_ms,
            60_000.0 / 7200.0 / 2.0
        );
        s += &format!("ZFS-like scrub, before: ours {}; after: ours {}.\n", against(before.iops, sr::PUBLISHED_BEFORE_IOPS), against(after.iops, sr::PUBLISHED_AFTER_IOPS));
        s += &format!(
            "  As shares of the idle IOPS: before {:.3} (published {:.3}), after {:.3} (published {:.3}).\n",
            before.iops / none.iops,
            sr::PUBLISHED_BEFORE_IOPS / sr::PUBLISHED_IDLE_IOPS,
            after.iops / none.iops,
            sr::PUBLISHED_AFTER_IOPS / sr::PUBLISHED_IDLE_IOPS
        );
    }
    if let (Some(share), Some(fb)) = (r.iops_share(a, Scheme::FreeblockFirmware), r.row(a, Scheme::FreeblockFirmware)) {
        let verdict = if share >= sr::KEEP_SHARE { "KEEPS" } else { "MISSES" };
        s += &format!(
            "Freeblock in the firmware keeps {:.1}% of the idle IOPS (target ≥ {:.0}%): {verdict}; it scrubs {:.2} MB/s, the whole disk in {}.\n",
            100.0 * share,
            100.0 * sr::KEEP_SHARE,
            fb.scrub_mb_s,
            hours(fb.eta_hours)
        );
    }
    if let (Some(share), Some(fb)) = (r.iops_share(a, Scheme::FreeblockHost), r.row(a, Scheme::FreeblockHost)) {
        let own = r.row(a, Scheme::HostAlone).map_or(String::new(), |h| format!(" ({:.1}% of the same black-box drive's without a scrub)", 100.0 * fb.iops / h.iops));
        s += &format!("Freeblock from the host keeps {:.1}% of the idle IOPS{own}; it scrubs {:.2} MB/s, the whole disk in {}.\n", 100.0 * share, fb.scrub_mb_s, hours(fb.eta_hours));
    }
    let b = Foreground::OltpQd8;
    s += &format!("\nForeground {} over the whole disk, no think time:\n", b.label());
    s += &table(r, b);
    if let Some(cost) = r.mean_cost(b, Scheme::FreeblockFirmware) {
        let verdict = if cost <= sr::MEAN_RESPONSE_SLACK { "WITHIN" } else { "MISSES" };
        s += &format!("Freeblock in the firmware: mean response {} against none (target within +{:.0}%): {verdict}.\n", signed_pct(cost, 2), 100.0 * sr::MEAN_RESPONSE_SLACK);
    }
    let costs: Vec<String> = Scheme::ALL
        .iter()
        .filter(|&&x| x.scrubs() && x != Scheme::FreeblockFirmware)
        .filter_map(|&x| r.mean_cost(b, x).map(|cost| format!("{} {}", x.label().trim_start_matches(|ch: char| ch.is_ascii_digit() || ch == ' '), signed_pct(cost, 1))))
        .collect();
    s += &format!("The others' mean response against none: {}.\n", costs.join(", "));
    if let (Some(fb), Some(alone)) = (r.row(b, Scheme::FreeblockHost), r.row(b, Scheme::HostAlone)) {
        s += &format!("Freeblock from the host against its own drive without a scrub: mean {}.\n", signed_pct(fb.mean_ms / alone.mean_ms - 1.0, 2));
    }
    s
}

fn label_of(row: &ScrubRow) -> String {
    row.scheme.label().trim().to_string()
}

fn plot(r: &ScrubReport, path: &std::path::Path) -> CmdResult {
    let a = Foreground::RandomQd1;
    let series: Vec<Line> = r.rows.iter().filter(|x| x.foreground == a && x.scheme != Scheme::HostAlone).map(|x| Line { label: label_of(x), points: vec![(x.scrub_mb_s, x.iops)] }).collect();
    let marks = [
        Reference::Level { label: format!("PR #11166: {} IOPS idle", sr::PUBLISHED_IDLE_IOPS), y: sr::PUBLISHED_IDLE_IOPS },
        Reference::Level { label: format!("PR #11166: {} IOPS scrubbing, before", sr::PUBLISHED_BEFORE_IOPS), y: sr::PUBLISHED_BEFORE_IOPS },
        Reference::Level { label: format!("PR #11166: {} IOPS scrubbing, after", sr::PUBLISHED_AFTER_IOPS), y: sr::PUBLISHED_AFTER_IOPS },
    ];
    lines(path, &format!("Scrub on {}: foreground QD 1 random 4 KB reads against scrub rate", r.disk), "scrub MB/s", "foreground IOPS", &series, &marks)?;
    Ok(())
}
