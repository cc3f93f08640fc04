//! What a firmware queue does to a drive (issue 34; `freeblock firmware-queue`,
//! `freeblock repro firmware-queue`): deeper queues raise random-read IOPS, a sequential reader
//! starves random reads and the age limit bounds it, and the report states what it prints.

use std::sync::Arc;

use freeblock_disk::{library, Disk};
use freeblock_repro::drives_of_today::firmware_queue::{random_read_depths, report, sequential_starves_random, FirmwareQueueSettings};

fn he8() -> Arc<Disk> {
    library::media("ultrastar_he8").unwrap()
}

#[test]
fn the_age_limit_bounds_the_worst_wait_beside_a_sequential_reader() {
    let disk = he8();
    let seconds = 6.0;
    let shallow = sequential_starves_random(&disk, 1, None, seconds, 1).unwrap();
    let starved = sequential_starves_random(&disk, 32, None, seconds, 1).unwrap();
    let bounded = sequential_starves_random(&disk, 32, Some(100.0), seconds, 1).unwrap();
    // Pure positioning order: the sequential reader's next block is always nearer, so the random
    // reads wait until the reader stops at the end of the run.
    assert!(starved.random_worst_ms > 0.8 * seconds * 1e3, "no starvation at QD 32: worst {} ms", starved.random_worst_ms);
    assert!(shallow.random_worst_ms < 1_000.0, "QD 1 starved too: worst {} ms", shallow.random_worst_ms);
    // With the limit, every random read is served within limit + one access per command it can
    // wait behind, and far sooner than without.
    let bound = bounded.age_bound_ms.expect("a limit gives a bound");
    assert!(bounded.random_worst_ms <= bound, "worst {} ms past the bound {bound} ms", bounded.random_worst_ms);
    assert!(bounded.random_worst_ms >= 100.0, "the limit should be what the worst random read waits for: {} ms", bounded.random_worst_ms);
    assert!(bounded.random_reads > 10 * starved.random_reads.max(1), "{} random reads with the limit, {} without", bounded.random_reads, starved.random_reads);
    // The price: the sequential reader loses bandwidth to the random reads' seeks.
    assert!(bounded.sequential_mb_s < starved.sequential_mb_s);
}

#[test]
fn deeper_queues_raise_random_read_iops() {
    let rows = random_read_depths(&he8(), &[1, 4, 32], 2_000, None, 3).unwrap();
    assert!(rows.windows(2).all(|w| w[1].iops > w[0].iops), "{rows:?}");
    assert!((rows[0].gain_over_qd1 - 1.0).abs() < 1e-12);
    assert!(rows[2].gain_over_qd1 > 1.5, "{rows:?}");
}

#[test]
fn the_report_states_what_it_prints_and_the_same_in_json() {
    let small = FirmwareQueueSettings { requests: 300, seconds: 2.0, ..FirmwareQueueSettings::default() };
    let text = report(&small).unwrap();
    crate::statements_agree_with_text(&text);
    // The QD 32 gain, the worst read at QD 32 and at QD 1, and one bound per age limit.
    assert_eq!(text.statements.len(), 3 + small.age_limits_ms.len(), "{:?}", text.statements);
    assert!(text.statements.iter().filter(|s| s.source == "issue 34").all(|s| s.agrees.is_some()));
    let json = report(&FirmwareQueueSettings { json: true, ..small.clone() }).unwrap();
    assert_eq!(json.statements, text.statements);
    let doc: serde_json::Value = serde_json::from_str(&json.output).unwrap();
    assert_eq!(doc["random_reads"].as_array().map(Vec::len), Some(6));
    let only = report(&FirmwareQueueSettings { only: "everything".into(), ..small }).unwrap_err().to_string();
    assert!(only.contains("--only everything"), "{only}");
}
