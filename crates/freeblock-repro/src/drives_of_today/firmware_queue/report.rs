//! What `freeblock firmware-queue` (and `freeblock repro firmware-queue`) prints: the random-read
//! curve and the sequential reader beside random readers, each beside its published figure, with
//! the verdicts as [`Statement`]s; or the rows as one JSON document.

use std::sync::Arc;

use freeblock_disk::{library, Disk};

use super::{
    random_read_depths, sequential_starves_random, DepthRow, StarvationRow, DRIVE_QUEUE_DEPTH, PUBLISHED_QD32_GAIN, PUBLISHED_STARVATION_S, QUEUE_DEPTHS, RANDOM_READERS,
    SEQUENTIAL_IN_FLIGHT, SEQUENTIAL_READ_BYTES,
};
use crate::table::Table;
use crate::{Outcome, Result, Statement};

/// The settings of `freeblock firmware-queue`; the default is its defaults on
/// [`DRIVE`](crate::drives_of_today::DRIVE), as `freeblock repro firmware-queue` runs it.
#[derive(Debug, Clone)]
pub struct FirmwareQueueSettings {
    /// Built-in disk name or spec file (run as its media model: cache off).
    pub disk: String,
    /// Random-read curve: requests measured per queue depth.
    pub requests: u64,
    /// Sequential-reader runs: simulated seconds each.
    pub seconds: f64,
    /// Sequential-reader runs: the age limits to try at depth 32, ms.
    pub age_limits_ms: Vec<f64>,
    /// Which part: `all`, `depths` (the random-read curve) or `starvation`.
    pub only: String,
    /// Seed of the random reads.
    pub seed: u64,
    /// The output is one JSON document instead of text.
    pub json: bool,
}

impl Default for FirmwareQueueSettings {
    fn default() -> Self {
        Self { disk: crate::drives_of_today::DRIVE.into(), requests: 20_000, seconds: 30.0, age_limits_ms: vec![2000.0, 100.0], only: "all".into(), seed: 1, json: false }
    }
}

/// Runs the parts `s.only` asks for and returns the text (or JSON) and the statements.
///
/// # Errors
/// An unknown `only`, an unknown disk, or a run's error.
pub fn report(s: &FirmwareQueueSettings) -> Result<Outcome> {
    let (depths, starvation) = match s.only.as_str() {
        "all" => (true, true),
        "depths" => (true, false),
        "starvation" => (false, true),
        other => return Err(format!("--only {other}: expected all, depths or starvation").into()),
    };
    let disk = Arc::new(Disk::new(library::load(&s.disk)?.without_cache())?);
    let curve = if depths { random_read_depths(&disk, &QUEUE_DEPTHS, s.requests, None, s.seed)? } else { Vec::new() };
    let mut cases: Vec<StarvationRow> = Vec::new();
    if starvation {
        cases.push(sequential_starves_random(&disk, 1, None, s.seconds, s.seed)?);
        cases.push(sequential_starves_random(&disk, DRIVE_QUEUE_DEPTH, None, s.seconds, s.seed)?);
        for &limit in &s.age_limits_ms {
            cases.push(sequential_starves_random(&disk, DRIVE_QUEUE_DEPTH, Some(limit), s.seconds, s.seed)?);
        }
    }
    let name = &disk.spec().name;
    let mut statements = Vec::new();
    let mut text = String::new();
    if depths {
        text += &depth_text(name, &curve, &mut statements);
    }
    if starvation {
        text += &starvation_text(name, s.seconds, &cases, &mut statements);
    }
    let output = if s.json { format!("{}\n", serde_json::to_string_pretty(&serde_json::json!({ "disk": name, "random_reads": curve, "sequential_beside_random": cases }))?) } else { text };
    Ok(Outcome { output, statements, files: Vec::new() })
}

fn depth_text(disk: &str, rows: &[DepthRow], statements: &mut Vec<Statement>) -> String {
    let mut s = format!("Random 4 KB reads on {disk} (media model), host FCFS, a {DRIVE_QUEUE_DEPTH}-command firmware queue ordering by positioning time:\n");
    let mut t = Table::new(["QD", "requests", "IOPS", "mean ms", "p99 ms", "× QD 1"]);
    for r in rows {
        t.row([r.queue_depth.to_string(), r.requests.to_string(), format!("{:.1}", r.iops), format!("{:.2}", r.mean_ms), format!("{:.2}", r.p99_ms), format!("{:.2}", r.gain_over_qd1)]);
    }
    s += &t.render();
    if let Some(r) = rows.iter().find(|r| r.queue_depth == 32) {
        let (lo, hi) = PUBLISHED_QD32_GAIN;
        let (below, above) = (r.gain_over_qd1 < lo * 0.9, r.gain_over_qd1 > hi * 1.1);
        let verdict = if below {
            "below it (MISSES)"
        } else if above {
            "above it (MISSES: that drive gains less than this model's)"
        } else {
            "within 10% of it"
        };
        let ours = format!("{:.2}", r.gain_over_qd1);
        statements.push(Statement::new("ublk-disksim's validation (2 TB desktop drive)", "random 4 KB reads: IOPS at QD 32 over QD 1, within 10%", format!("{lo}–{hi}×"), ours.clone(), Some(r.gain_over_qd1), Some(!below && !above)));
        s += &format!("QD 32 / QD 1 = {ours}×; published (ublk-disksim's validation, a 2 TB desktop drive): {lo}–{hi}× — ours is {verdict}\n");
    }
    s
}

fn limit_text(limit: Option<f64>) -> String {
    limit.map_or_else(|| "none".into(), |l| format!("{l} ms"))
}

fn starvation_text(disk: &str, seconds: f64, rows: &[StarvationRow], statements: &mut Vec<Statement>) -> String {
    let mut s = format!(
        "\nA sequential reader ({} KB reads, {SEQUENTIAL_IN_FLIGHT} in flight) beside {RANDOM_READERS} random 4 KB readers on {disk} (media model), host FCFS, {seconds} s each:\n",
        SEQUENTIAL_READ_BYTES / 1024
    );
    let mut t = Table::new(["drive queue", "age limit", "random reads", "mean ms", "p99 ms", "worst ms", "age bound ms", "sequential MB/s"]);
    for r in rows {
        t.row([
            r.queue_depth.to_string(),
            limit_text(r.age_limit_ms),
            r.random_reads.to_string(),
            format!("{:.1}", r.random_mean_ms),
            format!("{:.1}", r.random_p99_ms),
            format!("{:.1}", r.random_worst_ms),
            r.age_bound_ms.map_or(String::new(), |b| format!("{b:.1}")),
            format!("{:.1}", r.sequential_mb_s),
        ]);
    }
    s += &t.render();
    let qd1 = rows.iter().find(|r| r.queue_depth == 1);
    let unlimited = rows.iter().find(|r| r.queue_depth > 1 && r.age_limit_ms.is_none());
    if let (Some(one), Some(deep)) = (qd1, unlimited) {
        let (lo, hi) = PUBLISHED_STARVATION_S;
        let worst_s = deep.random_worst_ms / 1e3;
        let within = (lo..=hi).contains(&worst_s);
        let verdict = if within {
            "within it".to_string()
        } else if worst_s > hi {
            format!("longer (MISSES): with no age limit nothing bounds the wait but the end of the {seconds} s run; a firmware age limit of 1–4 s gives the reported figure (the rows with a limit)")
        } else {
            "shorter (MISSES)".into()
        };
        let source = "openzfs/zfs#10253, #15270";
        let (deep_ours, one_ours) = (format!("{worst_s:.2} s"), format!("{:.1} ms", one.random_worst_ms));
        statements.push(Statement::new(source, format!("worst random read beside a sequential reader at QD {}, no age limit", deep.queue_depth), format!("{lo}–{hi} s"), deep_ours.clone(), Some(worst_s), Some(within)));
        statements.push(Statement::new(source, "worst random read beside a sequential reader at QD 1", "cured by queue_depth=1", one_ours.clone(), Some(one.random_worst_ms), None));
        s += &format!(
            "Worst random read at QD {}: {deep_ours}, at QD 1: {one_ours}; published (openzfs/zfs#10253, #15270) at deep queue: {lo}–{hi} s, cured by queue_depth=1 — ours is {verdict}\n",
            deep.queue_depth
        );
    }
    for r in rows.iter().filter(|r| r.age_bound_ms.is_some()) {
        let bound = r.age_bound_ms.unwrap_or(f64::INFINITY);
        let holds = r.random_worst_ms <= bound;
        let held = if holds { "holds" } else { "BROKEN" };
        let limit = limit_text(r.age_limit_ms);
        let ours = format!("{:.1} ms", r.random_worst_ms);
        statements.push(Statement::new("issue 34", format!("age limit {limit}: worst random read within the limit plus {} of the run's longest accesses", r.queue_depth + 1), format!("≤ {bound:.1} ms"), ours.clone(), Some(r.random_worst_ms), Some(holds)));
        s += &format!("Age limit {limit}: worst random read {ours} ≤ limit + {} accesses of at most {:.1} ms = {bound:.1} ms: {held}\n", r.queue_depth + 1, r.longest_access_ms);
    }
    s
}
