//! Every technique runs on the 20 TB drive of the 2020s library (issue 34, item 5): a short run
//! of each — freeblock scan, range writes, block rearrangement, FS2, LFS — as an experiment file
//! names it, on `ultrastar_hc560` (banded layout, 39,063,650,304 sectors, past 2^32). Small runs:
//! they show each technique works on the drive and does what it is for, not its figures.

use freeblock::experiment::Experiment;
use freeblock::report::RunReport;

const DISK: &str = "ultrastar_hc560";

fn run(name: &str, toml: &str) -> RunReport {
    let text = format!("seed = 7\n[disk]\nname = \"{DISK}\"\ncache = false\n{toml}");
    let e = Experiment::from_toml_str(&text, &format!("{name}.toml"), std::path::Path::new(".")).unwrap_or_else(|err| panic!("{name}: {err}"));
    let report = e.run(None).unwrap_or_else(|err| panic!("{name} on {DISK}: {err}"));
    println!("{name} on {DISK}: {} requests, mean response {:.2} ms", report.response.count, report.response.mean_ms);
    report
}

fn details(report: &RunReport) -> serde_json::Value {
    serde_json::to_value(report).unwrap()
}

#[test]
fn a_freeblock_scan_reads_for_free_on_the_20tb_drive() {
    let report = run(
        "free-scan",
        r#"
        [workload]
        type = "oltp"
        [sim]
        scheduler = { type = "sptf" }
        mpl = 10
        max_requests = 3000
        [freeblock]
        planner = "two_track"
        [[freeblock.tasks]]
        type = "scan"
        block_bytes = 4096
        passes = 1
        "#,
    );
    let fb = report.freeblock.as_ref().unwrap();
    println!("  free bandwidth {:.2} MB/s", fb.free_mb_s);
    assert_eq!(report.response.count, 3000);
    assert!(fb.free_mb_s > 0.1, "{} MB/s", fb.free_mb_s);
}

#[test]
fn range_writes_run_on_the_20tb_drive() {
    let report = run(
        "range-writes",
        r#"
        [workload]
        type = "random"
        count = 2000
        size = { type = "fixed", sectors = 8 }
        read_fraction = 0.3333
        [sim]
        scheduler = { type = "sptf" }
        mpl = 8
        [layout]
        type = "range_writes"
        candidates = 4
        block_sectors = 64   # 32 KB blocks: the map pins every home block at setup, 610 million here (3.7 billion of 4 KB take minutes)
        "#,
    );
    let d = details(&report)["layout"]["details"].clone();
    println!("  {d}");
    assert_eq!(report.response.count, 2000);
    // Writes go where the head reaches first: a good share to another candidate than their home.
    assert!(d["writes"].as_u64().unwrap() > 1000 && d["moved_share"].as_f64().unwrap() > 0.3, "{d}");
}

#[test]
fn block_rearrangement_runs_on_the_20tb_drive() {
    let report = run(
        "rearrange-days",
        r#"
        [workload]
        type = "days"
        days = 2
        requests_per_day = 3000
        [sim]
        scheduler = { type = "clook" }
        [layout]
        type = "rearrange"
        schedule = "alternate"
        moves = "foreground"
        placement = { type = "organ_pipe" }
        area = { cylinders = 256, first_cylinder = 316160, block_sectors = 16 }   # one band pair mid-disk (bands need whole pairs)
        "#,
    );
    let d = details(&report)["layout"]["details"].clone();
    println!("  {d}");
    assert_eq!(report.response.count, 6000);
    // Day 1 moves day 0's hot blocks into the band.
    assert!(d["move_writes"].as_u64().unwrap() > 100, "{d}");
}

#[test]
fn fs2_runs_on_the_20tb_drive() {
    let report = run(
        "fs2-days",
        r#"
        [workload]
        type = "days"
        days = 1
        requests_per_day = 3000
        day_s = 600
        rate_per_s = 5.0
        block_sectors = 8
        [sim]
        scheduler = { type = "clook" }
        [layout]
        type = "fs2"
        nearest = "positioning"
        service = "free"
        fill = 0.7
        max_replicas = 1
        "#,
    );
    let d = details(&report)["layout"]["details"].clone();
    println!("  {d}");
    assert_eq!(report.response.count, 3000);
    assert!(d["replicas_made"].as_u64().unwrap() > 0 && d["reads_from_replicas"].as_u64().unwrap() > 0, "{d}");
}

#[test]
fn the_lfs_cleans_on_the_20tb_drive() {
    let report = run(
        "lfs",
        r#"
        [workload]
        type = "random"
        count = 20000
        size = { type = "fixed", sectors = 8 }
        alignment_sectors = 8
        read_fraction = 0.3
        [layout]
        type = "lfs"
        partition_mb = 32
        logical_share = 0.6
        cache_mb = 1
        cleaner = "freeblock"
        "#,
    );
    let d = details(&report)["layout"]["details"].clone();
    println!("  {d}");
    assert_eq!(report.response.count, 20000);
    // The log filled and was cleaned, with blocks read for free.
    assert!(d["measured_segments_cleaned"].as_u64().unwrap() > 0 && d["free_blocks_moved"].as_u64().unwrap() > 0, "{d}");
}
