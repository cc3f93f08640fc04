//! Paper 003's reproduction (`repro fs2`) in its quick form: day runs replicate and repeat, the
//! files stand-in on the cached drive; and the reproduction's statements agree with its text.

use freeblock_repro::p003_fs2::runs::{run_one, workloads, Drives, Fs2ReproConfig, Fs2Results, Fs2Row, Variant};

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


/// A quick run: its statements are there, each one's "ours" as the text prints it; a workload
/// held to the bar agrees exactly when its text line says it holds.
#[test]
fn quick_run_states_what_its_text_says() {
    let options = crate::quick_options("fs2");
    let outcome = freeblock_repro::find("fs2").unwrap().run(&options).unwrap();
    crate::statements_agree_with_text(&outcome);
    // The bar's verdicts: one line per workload between these two headings.
    let bar_section = outcome.output.split("against the bar of").nth(1).and_then(|rest| rest.split("The paper's rows").next()).expect("the bar's section");
    let held: Vec<_> = outcome.statements.iter().filter(|s| s.source.ends_with("bar")).collect();
    assert_eq!(held.len(), bar_section.lines().filter(|l| l.starts_with("  ")).count());
    for s in held {
        let workload = s.claim.split(':').next().unwrap();
        let line = bar_section.lines().find(|l| l.trim_start().starts_with(&format!("{workload} ")) && l.contains(&s.ours)).unwrap_or_else(|| panic!("no bar line for {workload}"));
        match s.agrees {
            Some(true) => assert!(line.contains("holds"), "{line}"),
            Some(false) => assert!(line.contains("MISSES"), "{line}"),
            None => assert!(!line.contains("holds") && !line.contains("MISSES"), "{line}"),
        }
    }
    // A negative control is compared with the paper's ranges for information, never held to them;
    // a paper-shaped workload is.
    for s in outcome.statements.iter().filter(|s| s.source == "abstract") {
        let control = s.claim.starts_with("days:") || s.claim.starts_with("cloudphysics:") || s.claim.starts_with("real_");
        assert_eq!(s.agrees.is_none(), control, "{s:?}");
    }
    assert!(outcome.files.iter().any(|f| f.ends_with("fs2.csv") && f.is_file()));
    std::fs::remove_dir_all(&options.out).unwrap();
}
