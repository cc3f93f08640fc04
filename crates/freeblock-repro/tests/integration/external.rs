//! Paper 001 reproduced, on a short sweep: the statements are those the text prints, the files
//! are written, and a bad knob is a clear error naming it.

use freeblock::external::HostModel;
use freeblock_repro::p001_external::report::report;
use freeblock_repro::p001_external::runs::ExternalReproConfig;
use freeblock_repro::Options;

/// Half a simulated second per run, the true model (no characterisation), three margins.
fn short() -> ExternalReproConfig {
    ExternalReproConfig { seconds: 0.5, error_requests: 300, model: HostModel::Truth, conservatism_ms: vec![0.0, 0.3, 0.4], ..ExternalReproConfig::quick() }
}

#[test]
fn the_statements_are_those_the_text_prints() {
    let out = std::env::temp_dir().join(format!("freeblock-repro-external-{}", std::process::id()));
    let options = Options { quiet: true, out: out.clone(), ..Options::default() };
    let text = report(&options, &short()).unwrap();
    // Fig. 7's three, the two foreground costs, 4 × 3 scheduler comparisons, the headline's two
    // (when a run stays under 2%), Fig. 9's two.
    assert!(text.statements.len() >= 17, "{:#?}", text.statements);
    for st in &text.statements {
        assert!(text.output.contains(&st.claim) && text.output.contains(&st.ours), "{st:?} not in\n{}", text.output);
        assert!(st.source.starts_with("paper 001") && st.agrees.is_some() && st.value.is_some(), "{st:?}");
    }
    let held = text.statements.iter().filter(|s| s.agrees == Some(true)).count();
    let tally = format!("{held} of {} statements of paper 001 matched", text.statements.len());
    assert!(text.output.contains(&tally), "no `{tally}` in\n{}", text.output);
    assert_eq!(text.files.len(), 6);
    assert!(text.files.iter().all(|f| f.is_file()), "{:?}", text.files);
    let json = report(&Options { json: true, ..options }, &short()).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json.output).unwrap();
    assert_eq!(doc["report"]["checks"].as_array().unwrap().len(), json.statements.len());
    assert_eq!(json.statements, text.statements, "the same seeded runs, the same statements");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_bad_knob_is_a_clear_error() {
    let options = Options { quiet: true, ..Options::default() };
    let e = report(&options, &ExternalReproConfig { seconds: -1.0, ..short() }).unwrap_err().to_string();
    assert!(e.contains("--seconds"), "{e}");
    let e = freeblock_repro::find("external").unwrap().run(&Options { seconds: Some(f64::NAN), ..options }).unwrap_err().to_string();
    assert!(e.contains("--seconds"), "{e}");
}
