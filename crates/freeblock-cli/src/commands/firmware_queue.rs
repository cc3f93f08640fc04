//! `freeblock firmware-queue --disk NAME`: what a drive's own command queue does (issue 34) —
//! random 4 KB reads at queue depths 1 … 32, and a sequential reader starving random reads at
//! deep queue, with the age limit that bounds it — beside the published figures.

use std::sync::Arc;

use clap::Args;
use freeblock::firmware::experiment::{
    random_read_depths, sequential_starves_random, DepthRow, StarvationRow, DRIVE_QUEUE_DEPTH, PUBLISHED_QD32_GAIN, PUBLISHED_STARVATION_S, QUEUE_DEPTHS,
    RANDOM_READERS, SEQUENTIAL_IN_FLIGHT, SEQUENTIAL_READ_BYTES,
};
use freeblock_disk::{library, Disk};

use crate::table::Table;
use crate::output::CmdResult;

#[derive(Debug, Args)]
pub struct FirmwareQueueArgs {
    /// Built-in disk name or spec file (run as its media model: cache off).
    #[arg(long)]
    pub disk: String,
    /// Random-read curve: requests measured per queue depth.
    #[arg(long, default_value_t = 20_000)]
    pub requests: u64,
    /// Sequential-reader runs: simulated seconds each.
    #[arg(long, default_value_t = 30.0)]
    pub seconds: f64,
    /// Sequential-reader runs: the age limits to try at depth 32, ms (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [2000.0, 100.0])]
    pub age_limits_ms: Vec<f64>,
    /// Which part: all, depths (the random-read curve) or starvation.
    #[arg(long, default_value = "all")]
    pub only: String,
    /// Seed of the random reads.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn firmware_queue(a: &FirmwareQueueArgs) -> CmdResult {
    let (depths, starvation) = match a.only.as_str() {
        "all" => (true, true),
        "depths" => (true, false),
        "starvation" => (false, true),
        other => return Err(format!("--only {other}: expected all, depths or starvation").into()),
    };
    let disk = Arc::new(Disk::new(library::load(&a.disk)?.without_cache())?);
    let curve = if depths { random_read_depths(&disk, &QUEUE_DEPTHS, a.requests, None, a.seed)? } else { Vec::new() };
    let mut cases: Vec<StarvationRow> = Vec::new();
    if starvation {
        cases.push(sequential_starves_random(&disk, 1, None, a.seconds, a.seed)?);
        cases.push(sequential_starves_random(&disk, DRIVE_QUEUE_DEPTH, None, a.seconds, a.seed)?);
        for &limit in &a.age_limits_ms {
            cases.push(sequential_starves_random(&disk, DRIVE_QUEUE_DEPTH, Some(limit), a.seconds, a.seed)?);
        }
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({ "disk": disk.spec().name, "random_reads": curve, "sequential_beside_random": cases }))?);
        return Ok(());
    }
    let name = &disk.spec().name;
    if depths {
        out!("{}", depth_text(name, &curve));
    }
    if starvation {
        out!("{}", starvation_text(name, a.seconds, &cases));
    }
    Ok(())
}

fn depth_text(disk: &str, rows: &[DepthRow]) -> String {
    let mut s = format!("Random 4 KB reads on {disk} (media model), host FCFS, a {DRIVE_QUEUE_DEPTH}-command firmware queue ordering by positioning time:\n");
    let mut t = Table::new(["QD", "requests", "IOPS", "mean ms", "p99 ms", "× QD 1"]);
    for r in rows {
        t.row([r.queue_depth.to_string(), r.requests.to_string(), format!("{:.1}", r.iops), format!("{:.2}", r.mean_ms), format!("{:.2}", r.p99_ms), format!("{:.2}", r.gain_over_qd1)]);
    }
    s += &t.render();
    if let Some(r) = rows.iter().find(|r| r.queue_depth == 32) {
        let (lo, hi) = PUBLISHED_QD32_GAIN;
        let verdict = if r.gain_over_qd1 < lo * 0.9 {
            "below it (MISSES)"
        } else if r.gain_over_qd1 > hi * 1.1 {
            "above it (MISSES: that drive gains less than this model's)"
        } else {
            "within 10% of it"
        };
        s += &format!("QD 32 / QD 1 = {:.2}×; published (ublk-disksim's validation, a 2 TB desktop drive): {lo}–{hi}× — ours is {verdict}\n", r.gain_over_qd1);
    }
    s
}

fn limit_text(limit: Option<f64>) -> String {
    limit.map_or_else(|| "none".into(), |l| format!("{l} ms"))
}

fn starvation_text(disk: &str, seconds: f64, rows: &[StarvationRow]) -> String {
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
        let verdict = if (lo..=hi).contains(&worst_s) {
            "within it".to_string()
        } else if worst_s > hi {
            format!("longer (MISSES): with no age limit nothing bounds the wait but the end of the {seconds} s run; a firmware age limit of 1–4 s gives the reported figure (the rows with a limit)")
        } else {
            "shorter (MISSES)".into()
        };
        s += &format!(
            "Worst random read at QD {}: {:.2} s, at QD 1: {:.1} ms; published (openzfs/zfs#10253, #15270) at deep queue: {lo}–{hi} s, cured by queue_depth=1 — ours is {verdict}\n",
            deep.queue_depth, worst_s, one.random_worst_ms
        );
    }
    for r in rows.iter().filter(|r| r.age_bound_ms.is_some()) {
        let bound = r.age_bound_ms.unwrap_or(f64::INFINITY);
        let held = if r.random_worst_ms <= bound { "holds" } else { "BROKEN" };
        s += &format!("Age limit {}: worst random read {:.1} ms ≤ limit + {} accesses of at most {:.1} ms = {bound:.1} ms: {held}\n", limit_text(r.age_limit_ms), r.random_worst_ms, r.queue_depth + 1, r.longest_access_ms);
    }
    s
}
