//! `freeblock repro scrub` (issue 35) end to end on short runs: its files, its statements and
//! what it prints. The runs themselves are tested in `scrub::runs`.

use freeblock_repro::{find, Options};

#[test]
fn a_short_scrub_writes_its_files_and_states_what_it_prints() {
    let out = std::env::temp_dir().join(format!("freeblock-repro-scrub-test-{}", std::process::id()));
    let options = Options { quick: true, seconds: Some(2.0), quiet: true, out: out.clone(), ..Options::default() };
    let outcome = find("scrub").unwrap().run(&options).unwrap();
    crate::statements_agree_with_text(&outcome);
    // Five published figures for information, then issue 35's two targets with verdicts.
    let verdicts: Vec<_> = outcome.statements.iter().filter(|s| s.agrees.is_some()).collect();
    assert_eq!(outcome.statements.len(), 7, "{:?}", outcome.statements);
    assert!(verdicts.iter().all(|s| s.source == "issue 35") && verdicts.len() == 2, "{verdicts:?}");
    let keeps = verdicts[0].agrees == Some(true);
    assert!(outcome.output.contains(if keeps { ": KEEPS;" } else { ": MISSES;" }), "{}", outcome.output);
    assert_eq!(outcome.files, vec![out.join("scrub.csv"), out.join("scrub.svg")]);
    let csv = std::fs::read_to_string(&outcome.files[0]).unwrap();
    assert_eq!(csv.lines().count(), 1 + 18, "{csv}");
    std::fs::remove_dir_all(&out).unwrap();
    let bad = Options { age_limit_ms: Some("soon".into()), ..options };
    let e = find("scrub").unwrap().run(&bad).unwrap_err().to_string();
    assert!(e.contains("--age-limit-ms soon"), "{e}");
}
