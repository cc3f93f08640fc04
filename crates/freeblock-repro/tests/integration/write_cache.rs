//! What a FLUSH CACHE costs on a write-back drive (issue 34; `freeblock write-cache`,
//! `freeblock repro write-cache`): the flush figure's shape on the 2 TB desktop drive beside the
//! published 28 + 9.4·N ms, and the report states what it prints.

use freeblock_disk::{library, Disk};
use freeblock_repro::drives_of_today::write_cache::{fit_line, flush_curve, report, write_back_disk, WriteCacheSettings};

#[test]
fn flush_cost_grows_about_linearly_with_the_dirty_writes() {
    let disk = write_back_disk(&Disk::new(library::get("st2000dm006").unwrap()).unwrap()).unwrap();
    let rows = flush_curve(&disk, &[4, 16, 64, 128], 6, 3).unwrap();
    for r in &rows {
        eprintln!("N {:4}: dirty {:6.1}, flush {:8.1} ms, {:5.2} ms per block (published {:7.1} ms)", r.writes, r.dirty_blocks, r.flush_ms, r.per_block_ms, r.published_ms);
    }
    // Rising with N, every block costing a positioning (several ms on this drive).
    assert!(rows.windows(2).all(|w| w[1].flush_ms > w[0].flush_ms), "{rows:?}");
    assert!(rows.iter().all(|r| r.per_block_ms > 3.0), "{rows:?}");
    // About linear: past the destage window, the cost per block settles (within 25% from 16 to
    // 128 dirty blocks), and the fitted line explains the points.
    let (p16, p128) = (rows[1].per_block_ms, rows[3].per_block_ms);
    assert!((p128 / p16 - 1.0).abs() < 0.25, "per block {p16} ms at 16, {p128} ms at 128");
    let (base, slope) = fit_line(&rows);
    for r in &rows {
        let line = base + slope * r.writes as f64;
        assert!((r.flush_ms - line).abs() < 0.1 * r.flush_ms.max(100.0), "{r:?} vs the line {base} + {slope}·N");
    }
    // Most writes are still dirty when the flush comes (they arrive back to back).
    assert!(rows.iter().all(|r| r.dirty_blocks >= r.writes as f64 - 2.0), "{rows:?}");
}

#[test]
fn the_report_states_each_row_and_both_parts_of_the_line() {
    let small = WriteCacheSettings { writes: vec![1, 4, 16], trials: 2, ..WriteCacheSettings::default() };
    let text = report(&small).unwrap();
    crate::statements_agree_with_text(&text);
    // One per count, then the slope and the fixed part.
    assert_eq!(text.statements.len(), small.writes.len() + 2, "{:?}", text.statements);
    let agree = text.statements[..3].iter().filter(|s| s.agrees == Some(true)).count();
    assert!(text.output.contains(&format!("Verdict: {agree} of 3 rows agree")), "{}", text.output);
    let json = report(&WriteCacheSettings { json: true, ..small.clone() }).unwrap();
    assert_eq!(json.statements, text.statements);
    assert!(serde_json::from_str::<serde_json::Value>(&json.output).unwrap()["flush"].is_array());
    let none = report(&WriteCacheSettings { trials: 0, ..small }).unwrap_err().to_string();
    assert!(none.contains("--trials"), "{none}");
}

#[test]
fn repro_write_cache_is_the_commands_defaults_on_the_2_tb_drive() {
    let entry = freeblock_repro::find("write-cache").unwrap();
    assert_eq!((entry.source, entry.has_quick), ("issue 34", false));
    let outcome = entry.run(&freeblock_repro::Options { quiet: true, ..freeblock_repro::Options::default() }).unwrap();
    crate::statements_agree_with_text(&outcome);
    assert!(outcome.output.contains("on st2000dm006: 64 MiB write-back cache") && outcome.output.contains("mean of 20 trials"), "{}", outcome.output);
    assert_eq!(outcome.statements.len(), WriteCacheSettings::default().writes.len() + 2);
    assert!(outcome.files.is_empty());
}
