//! `repro fs2` in its quick form, and a saved replica table checked and repaired (what
//! `freeblock fs2-check` does).

use std::sync::Arc;

use freeblock::fs2::{run_one, workloads, Drives, Fs2ReproConfig, Fs2Results, Fs2Row, Variant};
use freeblock::layout::fs2::policy::TABLE_FILE;
use freeblock::layout::fs2::{check, repair, Fs2, Fs2Config, ReplicaTable};
use freeblock::layout::{DirStorage, DirtyRule, Journal};
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{DaysSpec, WorkloadSpec};
use freeblock_disk::library;

#[test]
fn quick_day_runs_replicate_read_replicas_and_repeat_exactly() {
    let cfg = Fs2ReproConfig::quick();
    let disk = Drives::new(&cfg).unwrap();
    let w = &workloads(&cfg)[0];
    let base = run_one(&disk, &cfg, w, Variant::None).unwrap();
    let paper = run_one(&disk, &cfg, w, Variant::Fs2Paper).unwrap();
    let again = run_one(&disk, &cfg, w, Variant::Fs2Paper).unwrap();
    let f = paper.fs2.as_ref().unwrap();
    println!("none: access {:.2} ms, seek {:.2}; fs2_paper: access {:.2}, seek {:.2}, {} replicas, {:.0}% reads from replicas", base.access_ms, base.seek_ms, paper.access_ms, paper.seek_ms, f.replicas_made, paper.reads_from_copies_pct);
    assert!(f.replicas_made > 0 && paper.reads_from_copies_pct > 0.0);
    assert_eq!(base.reads_from_copies_pct, 0.0);
    assert!(paper.seek_ms < base.seek_ms, "replicas near the hot region shorten seeks");
    // Same seed, same run.
    assert_eq!((paper.access_ms, paper.seek_ms, paper.rotational_ms, f.replicas_made), (again.access_ms, again.seek_ms, again.rotational_ms, again.fs2.as_ref().unwrap().replicas_made));
}

/// Issue 32: on the paper's drive (read cache on) the files stand-in's last pass is measured,
/// FS2 learns in the passes before it and cuts access time there; `fs2_ours`, which runs on the
/// bare media, is compared with `none` on the bare media.
#[test]
fn fs2_on_the_cached_drive_cuts_the_last_pass_and_ours_has_a_bare_media_baseline() {
    let cfg = Fs2ReproConfig { scattered_passes: 3, ..Fs2ReproConfig::quick() };
    assert!(cfg.read_cache);
    let drives = Drives::new(&cfg).unwrap();
    assert!(drives.paper.spec().cache.enabled && !drives.media.spec().cache.enabled);
    let w = workloads(&cfg).into_iter().find(|w| w.name == "files_startx").unwrap();
    let rows: Vec<_> = [Variant::None, Variant::Fs2Paper, Variant::NoneMedia].iter().map(|&v| run_one(&drives, &cfg, &w, v).unwrap()).collect();
    let (none, paper, bare) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!(paper.measured, "pass 3 of 3");
    assert_eq!(paper.pass_response_ms.len(), 3);
    let cut = Fs2Row::improvement(none.access_ms, paper.access_ms);
    println!("files_startx, 3 passes: none {:.2} ms, fs2_paper {:.2} ms ({cut:.0}% less), bare media none {:.2} ms", none.access_ms, paper.access_ms, bare.access_ms);
    assert!(cut >= 35.0, "fs2_paper cut pass 3's access time by {cut:.0}%");
    // Nothing is replicated in the first pass (a block needs two co-accesses): no cost there.
    assert!((paper.first_pass_response_ms - none.first_pass_response_ms).abs() < 0.02 * none.first_pass_response_ms);
    let results = Fs2Results { workloads: vec![w.clone()], rows: rows.clone(), think_sensitivity: Vec::new() };
    assert_eq!(results.base_of(&w.name, Variant::Fs2Ours).unwrap().variant, "none_media");
    assert_eq!(results.base_of(&w.name, Variant::Fs2Paper).unwrap().variant, "none");
    let (pass, _) = results.worst_pass_overhead(&w.name, Variant::Fs2Paper).unwrap();
    assert!((1..=3).contains(&pass));
}

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
