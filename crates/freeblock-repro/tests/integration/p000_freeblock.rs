//! Paper 000 §3 (head-usage), §6 (free-mining) and the demo, run small: their statements, their
//! text and JSON, and free-mining run the way the Python package's Dask tasks run it.

use std::path::PathBuf;

use freeblock_repro::p000_freeblock::demo::{self, DemoOptions};
use freeblock_repro::p000_freeblock::free_mining;
use freeblock_repro::{find, Options, Outcome};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("freeblock-repro-p000-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Every statement has a claim and the paper's figure, and its `ours` is printed in the text.
fn statements_agree_with_text(o: &Outcome) {
    assert!(!o.statements.is_empty(), "no statements:\n{}", o.output);
    for s in &o.statements {
        assert!(!s.claim.is_empty() && !s.paper.is_empty() && !s.source.is_empty(), "{s:?}");
        assert!(o.output.contains(&s.ours), "statement {s:?} not in the output:\n{}", o.output);
        assert!(s.agrees.is_some(), "{s:?}");
    }
}

#[test]
fn head_usage_states_each_comparison_it_prints() {
    let out = scratch("head-usage");
    let options = Options { requests: 300, quiet: true, out: out.clone(), ..Options::default() };
    let o = find("head-usage").unwrap().run(&options).unwrap();
    statements_agree_with_text(&o);
    // One statement per "matches"/"MISSES" verdict of the tables.
    let verdicts = o.output.matches(" matches").count() + o.output.matches(" MISSES").count();
    assert_eq!(o.statements.len(), verdicts, "{}", o.output);
    let tally = format!("{} of {} comparisons with paper 000 within tolerance", o.statements.iter().filter(|s| s.agrees == Some(true)).count(), o.statements.len());
    assert!(o.output.contains(&tally), "{tally}\n{}", o.output);
    assert_eq!(o.files.len(), 6);
    assert!(o.files.iter().all(|f| f.is_file()), "{:?}", o.files);
    // The JSON document has the same bars and the same files.
    let j = find("head-usage").unwrap().run(&Options { json: true, ..options }).unwrap();
    let v: serde_json::Value = serde_json::from_str(&j.output).unwrap();
    assert_eq!(v["bars"].as_array().unwrap().len(), 29);
    assert_eq!(j.statements, o.statements);
    let _ = std::fs::remove_dir_all(out);
}

fn small_free_mining(out: PathBuf) -> Options {
    Options { quick: true, max_requests: Some(2000), threads: Some(2), quiet: true, out, ..Options::default() }
}

#[test]
fn free_mining_states_each_comparison_it_prints() {
    let out = scratch("free-mining");
    let o = find("free-mining").unwrap().run(&small_free_mining(out.clone())).unwrap();
    statements_agree_with_text(&o);
    let free = o.statements.last().unwrap();
    assert_eq!((free.ours.as_str(), free.agrees), ("0", Some(true)), "{free:?}");
    assert!(o.output.contains("Free means free: 0 foreground requests delayed"), "{}", o.output);
    for name in ["free-mining.csv", "free-mining-fig9.csv", "free-mining-fig10.csv", "paper000-fig8.svg", "paper000-fig10.svg"] {
        assert!(o.files.contains(&out.join(name)) && out.join(name).is_file(), "{name}: {:?}", o.files);
    }
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn free_mining_planned_runs_give_what_the_threads_give() {
    // The Python package's path: the plan, each run on its own (in any order), then finish.
    let (threads, tasks) = (scratch("fm-threads"), scratch("fm-tasks"));
    let on_threads = free_mining::run(&Options { json: true, ..small_free_mining(threads.clone()) }).unwrap();
    let options = Options { json: true, ..small_free_mining(tasks.clone()) };
    let plan = free_mining::plan(&options);
    assert_eq!(plan.runs, free_mining::simulations(&plan.config));
    let mut outcomes: Vec<Option<free_mining::RunResult>> = vec![None; plan.runs.len()];
    for &i in &plan.start_order {
        outcomes[i] = Some(free_mining::run_one(&plan.config, plan.runs[i]));
    }
    let on_tasks = free_mining::finish(&options, outcomes.into_iter().map(Option::unwrap).collect(), "tasks", 0.0).unwrap();
    // The same document but for the folder it names.
    assert_eq!(on_tasks.output.replace(tasks.to_str().unwrap(), "OUT"), on_threads.output.replace(threads.to_str().unwrap(), "OUT"));
    assert_eq!(on_tasks.statements, on_threads.statements);
    // One statement per comparison of the report, and the "free means free" line.
    let v: serde_json::Value = serde_json::from_str(&on_threads.output).unwrap();
    assert_eq!(on_threads.statements.len(), v["report"]["checks"].as_array().unwrap().len() + 1);
    for f in &on_threads.files {
        let twin = tasks.join(f.file_name().unwrap());
        if f.extension().is_some_and(|e| e == "csv") {
            assert_eq!(std::fs::read(f).unwrap(), std::fs::read(&twin).unwrap(), "{}", f.display());
        }
    }
    // Outcomes that are not one per simulation are refused.
    let e = free_mining::finish(&options, Vec::new(), "tasks", 0.0).unwrap_err().to_string();
    assert!(e.contains("0 run outcomes for"), "{e}");
    let _ = std::fs::remove_dir_all(threads);
    let _ = std::fs::remove_dir_all(tasks);
}

#[test]
fn free_mining_lists_failed_runs_and_is_incomplete() {
    let out = scratch("fm-failed");
    let options = small_free_mining(out.clone());
    let plan = free_mining::plan(&options);
    let mut outcomes: Vec<free_mining::RunResult> = plan.runs.iter().map(|&k| free_mining::run_one(&plan.config, k)).collect();
    outcomes[0] = Err("no disk today".into());
    let e = free_mining::finish(&options, outcomes, "tasks", 0.0).unwrap_err();
    let incomplete = e.downcast::<freeblock_repro::reproduction::Incomplete>().expect("an incomplete outcome");
    assert!(incomplete.message.contains("runs failed"), "{}", incomplete.message);
    assert!(incomplete.outcome.output.contains("FAILED RUNS") && incomplete.outcome.output.contains("no disk today"), "{}", incomplete.outcome.output);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn demo_free_scan_leaves_the_foreground_alone() {
    let out = scratch("demo");
    let options = DemoOptions { out: out.clone(), requests: 300, scan_requests: 3000 };
    let first = demo::head_usage_part(&options).unwrap();
    assert!(first.output.starts_with("freeblock demo: 300 random 4 KB requests") && first.files[0].is_file(), "{}", first.output);
    let scan = demo::free_scan_part(&options).unwrap();
    assert_eq!(scan.statements.len(), 1);
    assert_eq!(scan.statements[0].agrees, Some(true), "{}", scan.output);
    assert!(scan.output.contains("Foreground identical with and without the scan") && scan.output.contains("EXTRAPOLATED"), "{}", scan.output);
    let _ = std::fs::remove_dir_all(out);
}
