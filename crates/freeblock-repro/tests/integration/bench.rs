//! `freeblock bench`'s report: each verdict it prints is a statement (the speed rows on a few
//! requests; the freeblock rows take too long for a test and are checked by their unit tests).

use freeblock_repro::bench::{run, BenchSettings};

#[test]
fn the_speed_rows_state_each_cache_on_over_off_ratio() {
    let outcome = run(&BenchSettings { requests: 50, only: "speed".into(), ..BenchSettings::default() }, None).unwrap();
    crate::statements_agree_with_text(&outcome);
    // The five cases with the cache on, each against its twin with the cache off.
    assert_eq!(outcome.statements.len(), 5, "{:?}", outcome.statements);
    for s in &outcome.statements {
        let verdict = if s.agrees == Some(true) { format!("{} (≥ 0.5)", s.ours) } else { format!("{} (< 0.5, MISSES)", s.ours) };
        assert!(s.source == "issue 18" && outcome.output.contains(&verdict), "{s:?}\n{}", outcome.output);
    }
    let e = run(&BenchSettings { only: "fast".into(), ..BenchSettings::default() }, None).unwrap_err().to_string();
    assert!(e.contains("--only fast"), "{e}");
}
