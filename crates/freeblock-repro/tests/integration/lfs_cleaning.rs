//! Paper 000 §5's runs of the log-structured layout: free cleaning never delays a foreground
//! request, ORIGINAL's cleaning costs time that IDEAL takes out, ours holds and takes over
//! segments, runs are deterministic, and bad settings are clear errors.

use freeblock::layout::lfs::{CleanerKind, FreeCleaning};
use freeblock::workload::postmark::PostmarkSpec;
use freeblock_repro::p000_lfs_cleaning::runs::{run_one, run_one_with, sweep, LfsCleaningConfig};

/// A 24 MB log under 1500 transactions per phase: small enough for a test, busy enough to clean.
fn small() -> LfsCleaningConfig {
    LfsCleaningConfig { lfs_bytes: 24 << 20, cache_blocks: 512, postmark: PostmarkSpec { transactions: 1500, ..PostmarkSpec::default() }, ..LfsCleaningConfig::quick() }
}

#[test]
fn free_cleaning_never_delays_the_foreground() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    let (_, run) = run_one(&cfg, &disk, 0.7, CleanerKind::Freeblock).unwrap();
    assert!(run.stats.free_segments > 0 && run.stats.free_blocks_moved > 0, "free cleaning ran: {:?}", run.stats);
    assert_eq!(run.delayed_foreground, 0, "free means free");
    assert!(run.tps > 0.0);
    // The same run again gives the same answer.
    let (_, again) = run_one(&cfg, &disk, 0.7, CleanerKind::Freeblock).unwrap();
    assert_eq!(serde_json::to_string(&run.stats).unwrap(), serde_json::to_string(&again.stats).unwrap());
}

#[test]
fn the_foreground_cleaner_costs_time_that_ideal_takes_out() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    let (_, run) = run_one(&cfg, &disk, 0.8, CleanerKind::Original).unwrap();
    assert!(run.stats.foreground_segments > 0, "{:?}", run.stats);
    assert!(run.stats.cleaning_ns() > 0 && run.stats.cleaning_ns() < run.stats.measured_ns, "{:?}", run.stats);
    // Most requests are served from memory (the cache and the segment being filled).
    assert!(run.stats.read_hits > 0);
}

#[test]
fn over_full_is_a_clear_error() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    let e = run_one(&cfg, &disk, 1.2, CleanerKind::Original).unwrap_err().to_string();
    assert!(e.contains("120.0% is over 100%"), "{e}");
}

#[test]
fn ours_holds_blocks_until_their_segment_is_read_and_still_never_delays_the_foreground() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    let (_, run) = run_one(&cfg, &disk, 0.7, CleanerKind::FreeblockIdle).unwrap();
    assert!(run.stats.free_blocks_moved > 0, "{:?}", run.stats);
    // The paper's FREEBLOCK never delays the foreground; idle-time service may, and is counted.
    let (_, paper) = run_one(&cfg, &disk, 0.7, CleanerKind::Freeblock).unwrap();
    assert_eq!(paper.delayed_foreground, 0);
    // The pool is sized for the measured phase's mean; appends still raise it within the phase.
    assert!((run.end_utilisation_pct - 70.0).abs() < 6.0 && (paper.end_utilisation_pct - 70.0).abs() < 6.0, "{} {}", run.end_utilisation_pct, paper.end_utilisation_pct);
}

/// The free-bandwidth diagnostics: a scan of the whole log on ORIGINAL's foreground gets more
/// free bandwidth than the cleaner, whose wanted set is a few segments; the cleaner's figures
/// come from its own counts.
#[test]
fn a_scan_of_the_log_gets_more_free_bandwidth_than_the_cleaner() {
    let cfg = LfsCleaningConfig { utilisations: vec![0.7], ..small() };
    let points = sweep(&cfg, &|_| {}).unwrap();
    let p = &points[0];
    let free = &p.freeblock;
    assert!(free.stats.free_active_ns > 0 && free.stats.free_active_ns <= free.stats.measured_ns, "{:?}", free.stats);
    assert!(free.mean_wanted_blocks() > 0.0 && free.free_mb_s_while_asking() > 0.0);
    assert!(free.potential_free_mb_s > 0.0);
    assert!(p.scan_free_mb_s > free.free_mb_s_while_asking(), "scan {} against the cleaner's {}", p.scan_free_mb_s, free.free_mb_s_while_asking());
    // The scan runs beside ORIGINAL for free: ORIGINAL's own run has no freeblock at all.
    assert_eq!(p.original.delivered_free_mb_s, 0.0);
}

#[test]
fn a_bad_bus_time_is_a_clear_error() {
    let cfg = LfsCleaningConfig { bus_sector_ms: Some(-1.0), ..small() };
    let e = cfg.disk().unwrap_err().to_string();
    assert!(e.contains("bus_sector_ms") && e.contains("-1"), "{e}");
    // The Ultra2 bus of paper 001's host is accepted and used.
    let cfg = LfsCleaningConfig { bus_sector_ms: Some(freeblock::external::ULTRA2_BUS_SECTOR_MS), ..small() };
    assert!((cfg.disk().unwrap().spec().controller.bus_sector_ms - 0.0064).abs() < 1e-9);
}

#[test]
fn ours_takes_over_the_segments_nearest_done_and_still_never_delays_the_foreground() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    // The paper's FREEBLOCK keeps off the free cleaner's segments; ours takes them over.
    let (_, paper) = run_one(&cfg, &disk, 0.8, CleanerKind::Freeblock).unwrap();
    assert_eq!(paper.stats.finished_segments, 0, "{:?}", paper.stats);
    let (_, ours) = run_one_with(&cfg, &disk, 0.8, CleanerKind::Freeblock, FreeCleaning::ours()).unwrap();
    let s = &ours.stats;
    assert!(s.finished_segments > 0 && s.finished_blocks_read > 0, "{s:?}");
    // A take-over reads only what the free reads had not brought: fewer blocks than whole
    // segments would be (128 a segment, summary included).
    assert!(s.finished_blocks_read < 128 * s.finished_segments, "{s:?}");
    assert_eq!(ours.delayed_foreground, 0, "free means free");
    // (run_one_with checks the usage table against the map at the end of every run.)
    let (_, again) = run_one_with(&cfg, &disk, 0.8, CleanerKind::Freeblock, FreeCleaning::ours()).unwrap();
    assert_eq!(serde_json::to_string(&ours.stats).unwrap(), serde_json::to_string(&again.stats).unwrap());
}

/// The what-if of a foreground cleaner reading live blocks one I/O each: the same segments are
/// cleaned (the choice is the same), nothing is lost (each run checks the usage table), and
/// reading a block at a time costs more disk time than reading each segment whole.
#[test]
fn a_cleaner_reading_block_by_block_cleans_the_same_segments_at_a_higher_cost() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    let (_, whole) = run_one(&cfg, &disk, 0.8, CleanerKind::Original).unwrap();
    let by_block = LfsCleaningConfig { clean_reads_one_by_one: true, ..small() };
    let (_, blocks) = run_one(&by_block, &disk, 0.8, CleanerKind::Original).unwrap();
    assert!(whole.stats.foreground_segments > 0);
    assert_eq!(blocks.stats.foreground_segments, whole.stats.foreground_segments, "the same victims");
    assert!(blocks.stats.clean_read_ns > whole.stats.clean_read_ns, "{} ns one by one against {} ns whole", blocks.stats.clean_read_ns, whole.stats.clean_read_ns);
    assert!(blocks.tps < whole.tps);
}

/// Ours+FW: cleaned blocks written free into reserved destination segments. Its free writes are
/// freeblock requests like its reads, so the foreground is never delayed; whatever a
/// destination holds when the foreground cleaner must run is closed or given up, and the run
/// ends with the usage table balanced against the map (run_one_with checks it). Placing each
/// block as soon as it is read (not held) exercises many more free writes.
#[test]
fn ours_with_free_writes_never_delays_the_foreground_and_loses_nothing() {
    let cfg = small();
    let disk = cfg.disk().unwrap();
    for free in [FreeCleaning::ours_free_writes(), FreeCleaning { hold_until_read: false, ..FreeCleaning::ours_free_writes() }] {
        let (_, run) = run_one_with(&cfg, &disk, 0.8, CleanerKind::Freeblock, free).unwrap();
        let s = &run.stats;
        assert!(s.free_writes > 0 && s.free_writes_done <= s.free_writes, "{s:?}");
        assert!(s.destinations_free + s.destinations_closed + s.destinations_abandoned > 0, "{s:?}");
        assert_eq!(run.delayed_foreground, 0, "free means free");
        let (_, again) = run_one_with(&cfg, &disk, 0.8, CleanerKind::Freeblock, free).unwrap();
        assert_eq!(serde_json::to_string(&run.stats).unwrap(), serde_json::to_string(&again.stats).unwrap());
    }
    // Without free writes, no destination and none of their counts in the report.
    let (_, ours) = run_one_with(&cfg, &disk, 0.8, CleanerKind::Freeblock, FreeCleaning::ours()).unwrap();
    let report = serde_json::to_string(&ours.stats).unwrap();
    assert!(!report.contains("free_writes") && !report.contains("destination"), "{report}");
}

/// Issue 33: the paper's reading keeps a cleaning reserve (the file system 0.85 of the log), so
/// at the same file-system utilisation the log is emptier and ORIGINAL cleans less per new
/// segment; an out-of-range share is refused naming its field.
#[test]
fn the_papers_reading_keeps_a_reserve_and_a_bad_share_is_refused() {
    let today = small();
    let paper = small().paper_reading();
    assert!(paper.fs_share < 1.0 && paper.clean_reads_one_by_one && !today.clean_reads_one_by_one);
    assert!(paper.reading_settings().iter().any(|s| s.contains("cleaning reserve 15%")), "{:?}", paper.reading_settings());
    let disk = today.disk().unwrap();
    let (_, t) = run_one(&today, &disk, 0.8, CleanerKind::Original).unwrap();
    let (_, p) = run_one(&paper, &disk, 0.8, CleanerKind::Original).unwrap();
    assert!(p.end_utilisation_pct < t.end_utilisation_pct, "log utilisation: paper reading {:.1}%, today's {:.1}%", p.end_utilisation_pct, t.end_utilisation_pct);
    for share in [0.0, 1.5, f64::NAN] {
        let bad = LfsCleaningConfig { fs_share: share, ..small() };
        let e = run_one(&bad, &disk, 0.5, CleanerKind::Original).unwrap_err().to_string();
        assert!(e.contains("fs_share"), "{e}");
    }
}

/// The reproduction's outcome on a small sweep: its statements are those of its text — each one's
/// "ours" printed, as many misses as the text names with a measured cause — its files are
/// written, and the same run as JSON carries the same statements.
#[test]
fn the_statements_are_those_the_text_prints() {
    use freeblock_repro::p000_lfs_cleaning::report::report_readings;
    let out = std::env::temp_dir().join(format!("freeblock-repro-lfs-cleaning-{}", std::process::id()));
    let options = freeblock_repro::Options { quiet: true, out: out.clone(), ..freeblock_repro::Options::default() };
    let cfg = LfsCleaningConfig { utilisations: vec![0.6, 0.85, 0.95], scan_reference: false, ..small() };
    let readings = [("today's reading", "lfs-cleaning", cfg)];
    let text = report_readings(&options, &readings).unwrap();
    assert!(text.statements.len() >= 8, "{:?}", text.statements);
    for st in &text.statements {
        assert!(text.output.contains(&st.ours), "{st:?} not in\n{}", text.output);
        assert!(st.claim.ends_with("(today's reading)") && st.agrees.is_some(), "{st:?}");
    }
    let misses = text.statements.iter().filter(|s| s.agrees == Some(false)).count();
    assert_eq!(text.output.matches("MISS, measured cause").count(), misses, "{}", text.output);
    assert_eq!(text.files.len(), 2);
    assert!(text.files.iter().all(|f| f.is_file()), "{:?}", text.files);
    let json = report_readings(&freeblock_repro::Options { json: true, ..options }, &readings).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json.output).unwrap();
    assert_eq!(doc["readings"][0]["statements"].as_array().unwrap().len(), json.statements.len());
    assert_eq!(json.statements, text.statements, "the same seeded runs, the same statements");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn an_unknown_reading_or_bus_is_a_clear_error() {
    let run = |reading: &str, bus: &str| freeblock_repro::find("lfs-cleaning").unwrap().run(&freeblock_repro::Options { reading: reading.into(), bus: bus.into(), quiet: true, ..freeblock_repro::Options::default() });
    let e = run("yesterday", "parv").unwrap_err().to_string();
    assert!(e.contains("reading `yesterday`"), "{e}");
    let e = run("both", "usb").unwrap_err().to_string();
    assert!(e.contains("bus `usb`"), "{e}");
}
