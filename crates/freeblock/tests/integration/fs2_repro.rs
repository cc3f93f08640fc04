//! FS2's replica table on the engine: a saved table checked against its map and repaired (what
//! `freeblock fs2-check` does), and spread think times checked and repeatable. The reproduction's
//! runs (`repro fs2`) are tested in `crates/freeblock-repro/tests/integration/p003_fs2.rs`.

use std::sync::Arc;

use freeblock::layout::fs2::policy::TABLE_FILE;
use freeblock::layout::fs2::{check, repair, Fs2, Fs2Config, ReplicaTable};
use freeblock::layout::{DirStorage, DirtyRule, Journal};
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{DaysSpec, WorkloadSpec};
use freeblock_disk::library;

#[test]
fn a_saved_table_is_checked_against_its_map_and_repaired() {
    let disk = library::media("wd800").unwrap();
    let days = DaysSpec { days: 1, requests_per_day: 3000, day_s: 3600.0, rate_per_s: Some(2.0), block_sectors: 8, ..DaysSpec::default() };
    let fs2 = Fs2::new(&disk, Fs2Config::default()).unwrap();
    let w = WorkloadSpec::Days(days).build(disk.capacity(), 3).unwrap();
    let outcome = Simulation::new(Arc::clone(&disk), w, SimConfig::default()).with_layout(Box::new(fs2)).run_outcome(None).unwrap();
    let policy = outcome.layout.unwrap().into_any().downcast::<Fs2>().unwrap();
    assert!(!policy.table().is_empty(), "the run made replicas");
    let dir = std::env::temp_dir().join(format!("fs2-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    policy.save(&dir).unwrap();
    let (mut journal, mut map, _) = Journal::open(DirStorage::new(&dir).unwrap(), DirtyRule::Logged).unwrap();
    let mut table: ReplicaTable = serde_json::from_str(&std::fs::read_to_string(dir.join(TABLE_FILE)).unwrap()).unwrap();
    assert!(check(&map, &table, 1).is_empty(), "a saved table matches its map");
    // Damage the table: forget one replica, invent another.
    let (lbn, e) = table.iter().next().map(|(l, e)| (l, *e)).unwrap();
    table.remove(lbn);
    table.insert(8, e.logical, 0);
    let problems = check(&map, &table, 1);
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 2, "{text:?}");
    assert!(text[0].contains("sector 8") && text[1].contains(&format!("sector {lbn}")), "{text:?}");
    let (ops, fixed) = repair(&mut map, &table, 1).unwrap();
    for op in &ops {
        journal.append(op).unwrap();
    }
    journal.commit().unwrap();
    assert!(check(&map, &fixed, 1).is_empty());
    assert_eq!(fixed.len(), policy.table().len());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 32: think times spread over a range are checked, and a spread run is as repeatable as
/// a fixed one but not the same run.
#[test]
fn think_spread_is_checked_and_deterministic() {
    use freeblock::workload::scattered_files::{Paper003Run, ScatteredFilesSpec};
    let bad = SimConfig { think_ms: 10.0, think_spread: 1.5, ..SimConfig::default() };
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("sim.think_spread") && e.contains("1.5"), "{e}");
    let disk = library::media("wd800").unwrap();
    let run = |spread: f64| {
        let spec = ScatteredFilesSpec { passes: 2, ..ScatteredFilesSpec::paper003(Paper003Run::Surge) };
        let w = WorkloadSpec::ScatteredFiles(spec).build(disk.capacity(), 5).unwrap();
        let cfg = SimConfig { think_ms: 50.0, think_spread: spread, ..SimConfig::default() };
        let r = Simulation::new(Arc::clone(&disk), w, cfg).run(None).unwrap();
        (r.duration_ns, r.requests)
    };
    assert_eq!(run(0.5), run(0.5));
    assert_ne!(run(0.5), run(0.0));
}
