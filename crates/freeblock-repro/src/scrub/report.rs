//! What `freeblock repro scrub` prints and writes: both tables, PR #11166's figures beside ours
//! with the verdicts (and the same as [`Statement`]s), `scrub.csv` and `scrub.svg`.

use std::fmt::Write as _;
use std::path::Path;

use super::paper::{KEEP_SHARE, MEAN_RESPONSE_SLACK, PUBLISHED_AFTER_IOPS, PUBLISHED_BEFORE_IOPS, PUBLISHED_IDLE_IOPS};
use super::runs::{Foreground, Scheme, ScrubReport, ScrubRow, FIRMWARE_QUEUE_DEPTH, IDLE_READ_KIB, ZFS_BEFORE_IN_FLIGHT, ZFS_READ_KIB};
use crate::plot::{lines, Line, Reference};
use crate::table::{signed_pct, Table};
use crate::{Result, Statement};

/// One line per run: the CSV `scrub.csv` holds.
pub fn csv(r: &ScrubReport) -> std::result::Result<String, std::fmt::Error> {
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

/// The printed report — both tables, the published figures beside ours and the verdicts — and
/// the statements it checks, in the order it prints them.
pub fn text(r: &ScrubReport) -> (String, Vec<Statement>) {
    let c = &r.config;
    let mut statements = Vec::new();
    let mut s = format!(
        "A whole-disk scrub five ways on {} ({:.1} TB, media model, a {}-command firmware queue ordering by positioning time, age limit {}), {} simulated s a run, statistics after {} s, seed {}.\n",
        r.disk,
        r.capacity_bytes as f64 / 1e12,
        FIRMWARE_QUEUE_DEPTH,
        c.age_limit_ms.map_or("none".into(), |l| format!("{l} ms")),
        c.seconds,
        c.warmup_s,
        c.seed
    );
    s += &format!(
        "Schemes: ZFS-like before #11166 = {} KiB sequential reads, {} always in flight, no pause; after = 1 in flight, {} ms pause after each read; idle class = {} KiB reads, 1 in flight, only after {} ms without foreground I/O; \
freeblock in the firmware = 4 KB blocks in rotational gaps, idle time after {} ms; freeblock from the host = paper 001's scheduler (0.4 ms margin, 2 commands at the drive, host SPTF; the drive's queue reorders; the true model, as a banded drive cannot be characterised); \
paced = ZFS-like, 1 in flight, a {:.0} ms pause so as to read {}% of the blocks a day.\n",
        ZFS_READ_KIB,
        ZFS_BEFORE_IN_FLIGHT,
        c.zfs_after_pause_ms,
        IDLE_READ_KIB,
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
        // Printed beside the published figures for information: the published drive and pool differ (the "Why" line).
        let mut published = |claim: &str, row: &ScrubRow, figure: f64| {
            statements.push(Statement::new("PR #11166", claim, figure.to_string(), format!("{:.1}", row.iops), Some(row.iops), None));
            against(row.iops, figure)
        };
        let idle = published("QD 1 random 4 KB read IOPS, no scrub", none, PUBLISHED_IDLE_IOPS);
        s += &format!("Idle IOPS: ours {idle} (PR #11166, Seagate 14 TB).\n");
        s += &format!(
            "  Why: 166 IOPS is {:.2} ms a read; ours take {:.2} ms, a seek{span} plus half a turn ({:.2} ms) on average. The published test read a pool's data, not the whole disk, so its seeks were short; `--fg-span` narrows ours.\n",
            1e3 / PUBLISHED_IDLE_IOPS,
            none.mean_ms,
            60_000.0 / 7200.0 / 2.0
        );
        let zfs_before = published("QD 1 random 4 KB read IOPS while a ZFS scrub runs, before the PR", before, PUBLISHED_BEFORE_IOPS);
        let zfs_after = published("QD 1 random 4 KB read IOPS while a ZFS scrub runs, with the PR's throttling", after, PUBLISHED_AFTER_IOPS);
        s += &format!("ZFS-like scrub, before: ours {zfs_before}; after: ours {zfs_after}.\n");
        let (share_before, share_after) = (before.iops / none.iops, after.iops / none.iops);
        let (published_before, published_after) = (PUBLISHED_BEFORE_IOPS / PUBLISHED_IDLE_IOPS, PUBLISHED_AFTER_IOPS / PUBLISHED_IDLE_IOPS);
        for (claim, ours, paper) in [("the IOPS while a ZFS scrub runs before the PR, a share of the idle IOPS", share_before, published_before), ("the same with the PR's throttling", share_after, published_after)] {
            statements.push(Statement::new("PR #11166", claim, format!("{paper:.3}"), format!("{ours:.3}"), Some(ours), None));
        }
        s += &format!("  As shares of the idle IOPS: before {share_before:.3} (published {published_before:.3}), after {share_after:.3} (published {published_after:.3}).\n");
    }
    if let (Some(share), Some(fb)) = (r.iops_share(a, Scheme::FreeblockFirmware), r.row(a, Scheme::FreeblockFirmware)) {
        let keeps = share >= KEEP_SHARE;
        let verdict = if keeps { "KEEPS" } else { "MISSES" };
        let ours = format!("{:.1}%", 100.0 * share);
        let target = format!("≥ {:.0}%", 100.0 * KEEP_SHARE);
        statements.push(Statement::new("issue 35", "freeblock in the firmware keeps the idle IOPS of QD 1 random reads while it scrubs", target.clone(), ours.clone(), Some(share), Some(keeps)));
        s += &format!("Freeblock in the firmware keeps {ours} of the idle IOPS (target {target}): {verdict}; it scrubs {:.2} MB/s, the whole disk in {}.\n", fb.scrub_mb_s, hours(fb.eta_hours));
    }
    if let (Some(share), Some(fb)) = (r.iops_share(a, Scheme::FreeblockHost), r.row(a, Scheme::FreeblockHost)) {
        let own = r.row(a, Scheme::HostAlone).map_or(String::new(), |h| format!(" ({:.1}% of the same black-box drive's without a scrub)", 100.0 * fb.iops / h.iops));
        s += &format!("Freeblock from the host keeps {:.1}% of the idle IOPS{own}; it scrubs {:.2} MB/s, the whole disk in {}.\n", 100.0 * share, fb.scrub_mb_s, hours(fb.eta_hours));
    }
    let b = Foreground::OltpQd8;
    s += &format!("\nForeground {} over the whole disk, no think time:\n", b.label());
    s += &table(r, b);
    if let Some(cost) = r.mean_cost(b, Scheme::FreeblockFirmware) {
        let within = cost <= MEAN_RESPONSE_SLACK;
        let verdict = if within { "WITHIN" } else { "MISSES" };
        let (ours, target) = (signed_pct(cost, 2), format!("within +{:.0}%", 100.0 * MEAN_RESPONSE_SLACK));
        statements.push(Statement::new("issue 35", "freeblock in the firmware: mean response of QD 8 OLTP against no scrub", target.clone(), ours.clone(), Some(cost), Some(within)));
        s += &format!("Freeblock in the firmware: mean response {ours} against none (target {target}): {verdict}.\n");
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
    (s, statements)
}

fn label_of(row: &ScrubRow) -> String {
    row.scheme.label().trim().to_string()
}

/// `scrub.svg`: foreground IOPS against scrub rate, one point per scheme, PR #11166's IOPS as levels.
pub fn plot(r: &ScrubReport, path: &Path) -> Result<()> {
    let a = Foreground::RandomQd1;
    let series: Vec<Line> = r.rows.iter().filter(|x| x.foreground == a && x.scheme != Scheme::HostAlone).map(|x| Line { label: label_of(x), points: vec![(x.scrub_mb_s, x.iops)] }).collect();
    let marks = [
        Reference::Level { label: format!("PR #11166: {} IOPS idle", PUBLISHED_IDLE_IOPS), y: PUBLISHED_IDLE_IOPS },
        Reference::Level { label: format!("PR #11166: {} IOPS scrubbing, before", PUBLISHED_BEFORE_IOPS), y: PUBLISHED_BEFORE_IOPS },
        Reference::Level { label: format!("PR #11166: {} IOPS scrubbing, after", PUBLISHED_AFTER_IOPS), y: PUBLISHED_AFTER_IOPS },
    ];
    lines(path, &format!("Scrub on {}: foreground QD 1 random 4 KB reads against scrub rate", r.disk), "scrub MB/s", "foreground IOPS", &series, &marks)
}
