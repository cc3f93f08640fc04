//! The `freeblock` binary end to end: JSON output parses, and bad input gives a one-line error
//! naming the file and line or field, with a non-zero exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

fn freeblock(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_freeblock")).args(args).output().expect("run freeblock");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("freeblock-cli-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The text of every `<text>` element of an SVG file.
fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    svg.split("<text").skip(1).filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().replace("&apos;", "'"))).collect()
}

/// Issue 37 §4: every plot a reproduction writes in `dir` marks the paper's figure (a legend
/// entry naming the paper, or saying it gives no number) and has no empty legend entry.
fn assert_every_plot_marks_the_paper(dir: &Path) {
    let svgs: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "svg")).collect();
    assert!(!svgs.is_empty(), "no plots in {}", dir.display());
    for svg in svgs {
        let texts = svg_texts(&svg);
        assert!(texts.iter().any(|t| t.starts_with("paper") || t.starts_with("OSDI 2008")), "{} marks no paper figure: {texts:?}", svg.display());
        assert!(texts.iter().all(|t| !t.is_empty()), "{}: an empty label in {texts:?}", svg.display());
    }
}

const GOOD_SPEC: &str = r#"
name = "tiny"
rpm = 7200.0
surfaces = 2
head_switch_ms = 0.5
[seek]
type = "three_point"
single_ms = 1.0
average_ms = 4.0
full_ms = 8.0
[[zones]]
first_cylinder = 0
last_cylinder = 99
sectors_per_track = 100
[[zones]]
first_cylinder = 100
last_cylinder = 199
sectors_per_track = 80
"#;

fn one_error_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected a one-line error, got: {stderr}");
    lines[0]
}

#[test]
fn good_spec_shows_and_json_parses() {
    let dir = scratch("good");
    let p = dir.join("tiny.toml");
    std::fs::write(&p, GOOD_SPEC).unwrap();
    let (code, out, err) = freeblock(&["disk", "show", p.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["capacity_sectors"], 2 * 100 * 100 + 2 * 100 * 80);
}

#[test]
fn invalid_specs_name_the_field() {
    let dir = scratch("bad-spec");
    let cases = [
        ("overlap.toml", GOOD_SPEC.replace("first_cylinder = 100", "first_cylinder = 90"), "zones[1].first_cylinder"),
        ("rpm.toml", GOOD_SPEC.replace("rpm = 7200.0", "rpm = -1.0"), "rpm"),
        ("unknown.toml", GOOD_SPEC.replace("surfaces = 2", "surfaces = 2\nplatters = 1"), "platters"),
    ];
    for (file, text, field) in cases {
        let p = dir.join(file);
        std::fs::write(&p, text).unwrap();
        let (code, _, err) = freeblock(&["disk", "show", p.to_str().unwrap()]);
        assert_ne!(code, 0);
        let line = one_error_line(&err);
        assert!(line.contains(file) && line.contains(field), "{file}: {line}");
    }
}

fn experiment(dir: &Path, trace_lines: &str) -> PathBuf {
    std::fs::write(dir.join("t.trace"), trace_lines).unwrap();
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, "[disk]\nname = \"hp_c2247a\"\n[workload]\ntype = \"trace\"\nformat = \"validate\"\npath = \"t.trace\"\n").unwrap();
    exp
}

#[test]
fn malformed_trace_line_names_file_and_line() {
    let dir = scratch("bad-trace");
    let exp = experiment(&dir, "R Miss 100 8 1000.0 500.0\nR Miss 200 eight 1000.0 500.0\n");
    let (code, _, err) = freeblock(&["run", exp.to_str().unwrap(), "--quiet"]);
    assert_ne!(code, 0);
    let line = one_error_line(&err);
    assert!(line.contains("t.trace:2"), "{line}");
}

#[test]
fn lbn_past_the_end_is_an_error() {
    let dir = scratch("past-end");
    let exp = experiment(&dir, "R Miss 100 8 1000.0 500.0\nW Miss 999999999 8 1000.0 500.0\n");
    let (code, _, err) = freeblock(&["run", exp.to_str().unwrap(), "--quiet"]);
    assert_ne!(code, 0);
    let line = one_error_line(&err);
    assert!(line.contains("t.trace:2") && line.contains("capacity"), "{line}");
}

#[test]
fn run_json_has_the_report() {
    let dir = scratch("json");
    let exp = experiment(&dir, "R Miss 100 8 1000.0 500.0\nW Miss 5000 8 1000.0 500.0\nR Miss 900000 16 1000.0 0\n");
    let (code, out, err) = freeblock(&["run", exp.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["requests"], 3);
    let f = &v["head_usage_fractions"];
    let sum: f64 = ["seek", "rotational_latency", "transfer", "overhead", "idle"].iter().map(|k| f[k].as_f64().unwrap()).sum();
    assert!((sum - 1.0).abs() < 1e-9);
}

#[test]
fn unknown_experiment_field_is_reported() {
    let dir = scratch("bad-exp");
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, "[workload]\ntype = \"random\"\ncount = 10\nsize_kb = 4\n").unwrap();
    let (code, _, err) = freeblock(&["run", exp.to_str().unwrap()]);
    assert_ne!(code, 0);
    let line = one_error_line(&err);
    assert!(line.contains("exp.toml") && line.contains("size_kb"), "{line}");
}

#[test]
fn repro_range_writes_prints_local_vs_global_and_writes_its_files() {
    let dir = scratch("range-writes");
    let out = dir.to_str().unwrap();
    let (code, text, err) = freeblock(&["repro", "range-writes", "--requests", "160", "--quiet", "--out", out]);
    assert_eq!(code, 0, "{err}");
    for needle in ["Local vs global selection", "16 outstanding requests", "Global against local", "OSDI 2008 reports 16–35%"] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
    let csv = std::fs::read_to_string(dir.join("range-writes-local-global.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3 * 7, "{csv}");
    for sched in ["FCFS", "SSTF", "SPTF"] {
        let mine: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == sched).collect();
        let variants: Vec<(&str, &str)> = mine.iter().map(|r| (r[1], r[2])).collect();
        assert_eq!(variants, [("no_range_writes", "1"), ("local", "2"), ("global", "2"), ("local", "4"), ("global", "4"), ("local", "8"), ("global", "8")]);
        assert_eq!(mine[0][8].parse::<f64>().unwrap(), 0.0, "no range writes is the baseline");
    }
    assert!(dir.join("osdi2008-local-global.svg").exists());
    assert_every_plot_marks_the_paper(&dir);

    let (code, json, err) = freeblock(&["repro", "range-writes", "--requests", "160", "--json", "--out", out]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let lg = &v["local_vs_global"];
    assert_eq!(lg["rows"].as_array().unwrap().len(), 21);
    assert_eq!(lg["rows"][0]["report"]["operations"], 160);
    assert_eq!(v["global_vs_local"].as_array().unwrap().len(), 9);
}

#[test]
fn repro_free_mining_quick_prints_every_figure_and_writes_its_files() {
    let dir = scratch("free-mining");
    let out = dir.to_str().unwrap();
    let (code, text, err) = freeblock(&["repro", "free-mining", "--quick", "--quiet", "--out", out]);
    assert_eq!(code, 0, "{err}");
    for needle in [
        "Fig. 8: free bandwidth against the multiprogramming level",
        "Fig. 9: one whole-disk scan in detail — FCFS, MPL 10",
        "Fig. 10: sampling scans needing any X% of the blocks",
        "Beyond the paper",
        "~4.9 MB/s",
        "paper says",
        "Free means free: 0 foreground requests delayed",
        "stopped at the cap of 12000 foreground requests",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
    assert!(text.contains("within") || text.contains("MISSES"));
    let csv = std::fs::read_to_string(dir.join("free-mining.csv")).unwrap();
    // Quick: 2 schedulers × 2 MPLs, ours at FCFS MPL 10 (one pass with and without balancing,
    // and repeated), 5% and 10% samples for both planners.
    assert_eq!(csv.lines().count(), 1 + 11, "{csv}");
    assert!(text.contains("ours unbalanced"), "{text}");
    assert!(text.contains("Repeated scans, steady state"), "{text}");
    for plot in ["paper000-fig8.svg", "paper000-fig8c.svg", "paper000-fig9.svg", "paper000-fig9c-single_track.svg", "paper000-fig10.svg"] {
        assert!(dir.join(plot).exists(), "{plot}");
    }
    assert!(std::fs::read_to_string(dir.join("free-mining-fig10.csv")).unwrap().lines().count() > 1);
    assert_every_plot_marks_the_paper(&dir);
    // Fig. 9c's three paper levels: one legend entry each.
    let fig9c = svg_texts(&dir.join("paper000-fig9c-single_track.svg"));
    for what in ["free transfer", "extra seek", "unused latency"] {
        assert_eq!(fig9c.iter().filter(|t| t.starts_with(&format!("paper 000: {what}"))).count(), 1, "{what}: {fig9c:?}");
    }

    // JSON, and the same figures from a second run on two threads (deterministic).
    let json_run = || {
        let (code, json, err) = freeblock(&["repro", "free-mining", "--quick", "--json", "--out", out]);
        assert_eq!(code, 0, "{err}");
        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v["report"].take()
    };
    let (a, b) = (json_run(), json_run());
    assert_eq!(a, b, "two runs differ");
    let runs = a["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 11);
    assert_eq!(runs.iter().filter(|r| r["steady"].is_object()).count(), 1);
    assert!(runs.iter().all(|r| r["delayed_foreground"] == 0));
    assert!(runs.iter().all(|r| r["free_mb_s"].as_f64().unwrap() > 0.0));
    // The 5% samples finish within the cap: a real pass time, not an extrapolation.
    let sample = a["fig10"].as_array().unwrap().iter().find(|r| r["percent"] == 5.0).unwrap();
    assert!(sample["pass_s"].as_f64().unwrap() > 0.0 && sample["extrapolated"] == false, "{sample}");
    assert!(!a["checks"].as_array().unwrap().is_empty());
    assert!(a["failed_runs"].as_array().unwrap().is_empty(), "{}", a["failed_runs"]);
}

#[test]
fn bench_freeblock_rows_measure_decisions_and_the_registered_set() {
    let (code, json, err) = freeblock(&["bench", "--only", "freeblock", "--quick", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["speed"].as_array().unwrap().is_empty());
    let rows = v["freeblock"]["decisions"].as_array().unwrap();
    assert_eq!(rows.len(), 9); // three planners × (Atlas 10K, Ultrastar He8, a complete Atlas scan)
    for r in rows {
        assert!(r["decisions"].as_u64().unwrap() > 0, "{r}");
        assert!(r["median_us"].as_f64().unwrap() > 0.0 && r["p99_us"].as_f64().unwrap() >= r["median_us"].as_f64().unwrap(), "{r}");
    }
    for planner in ["single_track", "two_track", "multi_track"] {
        assert!(rows.iter().any(|r| r["disk"] == "ultrastar_he8" && r["planner"] == planner), "{planner}");
    }
    let sets = v["freeblock"]["sets"].as_array().unwrap();
    let he8 = sets.iter().find(|r| r["disk"] == "ultrastar_he8").unwrap();
    // The binary's counting allocator measured the set.
    let measured = he8["measured_bytes"].as_u64().expect("measured by the counting allocator");
    assert!(measured > 0 && he8["blocks"].as_u64().unwrap() > 1_000_000_000, "{he8}");
    // Issue 35: the whole engine's state on the 20 TB drive, measured, within its 32 MB.
    let state = &v["freeblock"]["state"][0];
    assert_eq!(state["disk"], "ultrastar_hc560", "{state}");
    let bytes = state["measured_bytes"].as_u64().expect("measured by the counting allocator");
    assert!(bytes > 20_000_000 && bytes <= state["target_bytes"].as_u64().unwrap(), "{state}");
    let steady = &v["freeblock"]["steady"];
    assert!(steady["simulated_s"].as_f64().unwrap() > 0.0 && steady["delayed_foreground"] == 0, "{steady}");

    let (code, text, err) = freeblock(&["bench", "--only", "freeblock", "--quick"]);
    assert_eq!(code, 0, "{err}");
    for needle in ["median ≤ 20 µs, p99 ≤ 500 µs", "ultrastar_he8", "Registered set of a whole-disk scan", "heap measured MB", "Scale (issue 35)", "whole freeblock state", "≤ 32 MB", "≥ 90.0%"] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
    let (code, _, err) = freeblock(&["bench", "--only", "nothing"]);
    assert_ne!(code, 0);
    assert!(one_error_line(&err).contains("--only nothing"), "{err}");
}

#[test]
fn repro_rearrangement_quick_prints_the_tables_and_writes_its_files() {
    let dir = scratch("rearrangement");
    let out = dir.to_str().unwrap();
    let (code, text, err) = freeblock(&["repro", "rearrangement", "--quick", "--quiet", "--out", out]);
    assert_eq!(code, 0, "{err}");
    for needle in [
        "Table 2: all requests",
        "Table 3: reads",
        "Fig. 4:",
        "Knee:",
        "Tables 4–5:",
        "Table 6:",
        "no sequential file reads",
        "Ours beyond the paper",
        "Free moves vs the same table changes at no cost",
        "paper: 18.21 → 1.55 ms",
        "more than half:",
        "CloudPhysics part skipped",
        "The paper's mix",
        "Tables 2–3 with both mixes",
        "meets the bar:",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
    for file in ["rearrangement-days.csv", "rearrangement-fig4.csv", "rearrangement-moves.csv", "paper002-fig4.svg", "paper002-days.svg"] {
        assert!(dir.join(file).exists(), "{file}");
    }
    assert_every_plot_marks_the_paper(&dir);
    // Days are whole: the day axis labels days 1 and 2 and nothing between (its ticks print as
    // whole numbers; the y axis's, in ms, with a decimal).
    let texts = svg_texts(&dir.join("paper002-days.svg"));
    let whole: Vec<&String> = texts.iter().filter(|t| t.parse::<u32>().is_ok()).collect();
    assert_eq!(whole, ["1", "2"], "{texts:?}");
    assert!(!texts.iter().any(|t| t.parse::<f64>().is_ok_and(|v| v > 1.0 && v < 2.0)), "a tick between days: {texts:?}");
    let days = std::fs::read_to_string(dir.join("rearrangement-days.csv")).unwrap();
    // Tables 2-3: 2 days (--quick), all and reads, each with the paper's value beside.
    let t23: Vec<&str> = days.lines().filter(|l| l.starts_with("tables_2_3,")).collect();
    assert_eq!(t23.len(), 4, "{days}");
    assert!(t23[0].contains(",220.000000,"), "paper's Table 2 day 1 FCFS distance: {}", t23[0]);
    // The same for the paper's mix.
    let mix: Vec<&str> = days.lines().filter(|l| l.starts_with("tables_2_3_paper_mix,")).collect();
    assert_eq!(mix.len(), 4, "{days}");
    assert!(mix[0].contains(",220.000000,"), "{}", mix[0]);
    let moves = std::fs::read_to_string(dir.join("rearrangement-moves.csv")).unwrap();
    assert_eq!(moves.lines().count(), 1 + 5, "{moves}");
    assert!(std::fs::read_to_string(dir.join("rearrangement-fig4.csv")).unwrap().lines().count() > 2);

    let (code, json, err) = freeblock(&["repro", "rearrangement", "--quick", "--json", "--out", out]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["tables_2_3"]["days"].as_array().unwrap().len(), 2);
    assert_eq!(v["tables_2_3_paper_mix"]["days"].as_array().unwrap().len(), 2);
    // The read share: under the tables' bound (day 4's seek times), where Fig. 5's ~90% holds.
    let reads = v["paper_mix"]["spec"]["read_fraction"].as_f64().unwrap();
    assert!(reads > 0.0 && reads <= 0.98 / 3.54, "the paper's mix's read share: {reads}");
    let top100 = v["paper_mix"]["fig5_top100_share"].as_f64().unwrap();
    assert!((top100 - 0.90).abs() < 0.01, "Fig. 5's top-100 share: {top100}");
    // Every on day's head movements are accounted for: the kinds sum to the non-zero seeks.
    for (day, causes) in v["tables_2_3_paper_mix"]["days"].as_array().unwrap().iter().zip(v["tables_2_3_paper_mix"]["causes"].as_array().unwrap()) {
        let moved: f64 = causes["moved"].as_array().unwrap().iter().map(|m| m["requests"].as_f64().unwrap()).sum();
        let n = causes["requests"].as_f64().unwrap();
        let zero = day["all"]["zero_seeks_pct"].as_f64().unwrap();
        assert!((100.0 * (1.0 - moved / n) - zero).abs() < 1e-6, "{zero} vs {moved} of {n}");
    }
    assert!(v["paper_mix_meets_bar"].is_boolean());
    assert_eq!(v["placements"].as_array().unwrap().len(), 3);
    assert_eq!(v["moves"].as_array().unwrap().len(), 5);
    assert!(v["cloudphysics"].is_null());

    // An explicit --trace that is not there is an error naming it.
    let missing = dir.join("no-such-trace.vscsi");
    let (code, _, err) = freeblock(&["repro", "rearrangement", "--quick", "--quiet", "--out", out, "--trace", missing.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(one_error_line(&err).contains("no-such-trace.vscsi"), "{err}");
}

#[test]
fn characterize_learns_the_test_disk_and_writes_a_loadable_spec() {
    let dir = scratch("characterize");
    let (code, json, err) = freeblock(&["characterize", "test", "--json", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["disk"], "test");
    assert_eq!(v[0]["passed"], true, "{json}");
    let learned = dir.join("test.learned.toml");
    let (code, text, err) = freeblock(&["disk", "show", learned.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("test_learned"), "{text}");
    let (code, _, err) = freeblock(&["characterize", "no_such_disk"]);
    assert_eq!(code, 1);
    assert!(err.contains("no_such_disk"), "{err}");
}

#[test]
#[allow(clippy::manual_is_multiple_of)] // `%` as in the rest of the workspace (Rust 1.87's is_multiple_of is newer)
fn repro_lfs_cleaning_quick_prints_the_paper_beside_ours_and_writes_its_files() {
    let dir = scratch("lfs-cleaning");
    let out = dir.to_str().unwrap();
    let (code, text, err) = freeblock(&["repro", "lfs-cleaning", "--quick", "--quiet", "--out", out]);
    assert_eq!(code, 0, "{err}");
    for needle in ["The paper's statements beside ours", "ORIGINAL halves at 60%", "FREEBLOCK close to IDEAL up to 93%", "cut to 1 surface", "Bus 0.0990 ms/sector", "scan of the log", "Where ORIGINAL's time goes", "R/W the paper needs"] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
    assert!(dir.join("lfs-cleaning.svg").exists());
    assert_every_plot_marks_the_paper(&dir);
    let csv = std::fs::read_to_string(dir.join("lfs-cleaning.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    // Five cleaners at each utilisation of the quick sweep, every one with a throughput.
    assert!(!rows.is_empty() && rows.len() % 5 == 0, "{csv}");
    for cleaner in ["ORIGINAL", "IDEAL", "FREEBLOCK", "ours", "ours+IDLE"] {
        assert!(rows.iter().any(|r| r.split(',').nth(2) == Some(cleaner)), "{cleaner} missing:\n{csv}");
    }
    // Free means free: no cleaning read ever delayed a foreground request.
    assert!(rows.iter().all(|r| r.split(',').nth(11) == Some("0")), "{csv}");
}

/// A small validate-format trace on the built-in HP C2247A: its service times are made up but
/// plausible (a few ms plus a share of a revolution), so the command has something to fit.
fn small_measured_trace(dir: &Path, lines: usize) -> PathBuf {
    let mut text = String::new();
    for i in 0..lines {
        let op = if i % 3 == 0 { "W" } else { "R" };
        let lbn = (i * 7919 * 13) % 2_000_000;
        let service_us = 4000 + (i * 3571) % 11_000;
        text.push_str(&format!("{op} Miss {lbn} 8 {service_us}.000 5000.000\n"));
    }
    let path = dir.join("small.trace");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn calibrate_writes_a_spec_that_validate_loads_and_refuses_bad_input() {
    let dir = scratch("calibrate");
    let trace = small_measured_trace(&dir, 60);
    let out = dir.join("calibrated.toml");
    let args = ["calibrate", "--trace", trace.to_str().unwrap(), "--model", "hp_c2247a", "--params", "controller.read_miss_ms,controller.write_miss_ms", "--replays", "1", "--sweeps", "1"];
    let (code, json, err) = freeblock(&[&args[..], &["--json", "--out", out.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let c = &v[0]["calibration"];
    assert_eq!((c["fit_requests"].as_u64(), c["test_requests"].as_u64()), (Some(30), Some(30)));
    assert_eq!(c["params"].as_array().map(Vec::len), Some(2), "{json}");
    for key in ["test_before", "test_after"] {
        assert!(c[key]["rms_demerit_ms"].as_f64().is_some_and(f64::is_finite), "{json}");
    }
    // The written spec loads, and `validate` replays the trace on it.
    let (code, text, err) = freeblock(&["validate", "--trace", trace.to_str().unwrap(), "--model", out.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let w: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(w[0]["requests"], 60);
    // Plain output names the parameters and the verdict.
    let (code, text, err) = freeblock(&args);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("controller.read_miss_ms") && text.contains("held-out RMS demerit"), "{text}");
    // Bad input: a parameter the model lacks, an unknown one, a too-short trace.
    let (code, _, err) = freeblock(&["calibrate", "--trace", trace.to_str().unwrap(), "--model", "wd800", "--params", "cache.segments"]);
    assert_eq!(code, 1);
    assert!(one_error_line(&err).contains("has no cache"), "{err}");
    let (code, _, err) = freeblock(&["calibrate", "--trace", trace.to_str().unwrap(), "--model", "hp_c2247a", "--params", "seek_ms"]);
    assert_eq!(code, 1);
    assert!(one_error_line(&err).contains("unknown parameter `seek_ms`"), "{err}");
    let (code, _, err) = freeblock(&["calibrate", "--trace", trace.to_str().unwrap(), "--model", "hp_c2247a", "--body-quantile", "0"]);
    assert_eq!(code, 1);
    assert!(one_error_line(&err).contains("body quantile 0: must be above 0"), "{err}");
    let (code, _, err) = freeblock(&["calibrate", "--trace", trace.to_str().unwrap(), "--model", "hp_c2247a", "--objective", "median"]);
    assert_ne!(code, 0);
    assert!(err.contains("median") && err.contains("per-operation"), "{err}");
    let short = small_measured_trace(&dir.join(""), 5);
    let (code, _, err) = freeblock(&["calibrate", "--trace", short.to_str().unwrap(), "--model", "hp_c2247a"]);
    assert_eq!(code, 1);
    let line = one_error_line(&err);
    assert!(line.contains("small.trace") && line.contains("only 5 requests"), "{err}");
}

#[test]
fn repro_external_tiny_prints_the_paper_beside_ours_and_writes_its_files() {
    let dir = scratch("external");
    let out = dir.to_str().unwrap();
    let (code, text, err) = freeblock(&["repro", "external", "--quick", "--seconds", "0.5", "--quiet", "--out", out]);
    assert_eq!(code, 0, "{err}");
    for needle in ["Fig. 7", "97.5%", "Why the scheduler comparisons miss", "no think (always 10 waiting)", "The paper beside ours", "statements of paper 001 matched"] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
    for plot in ["external-fig7.svg", "external-fig8-free.svg", "external-fig8-response.svg", "external-fig9.svg"] {
        assert!(dir.join(plot).exists(), "{plot}");
    }
    assert_every_plot_marks_the_paper(&dir);
    let csv = std::fs::read_to_string(dir.join("external-runs.csv")).unwrap();
    // Runs with the scan deliver free bandwidth; runs without deliver none.
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().filter(|r| r[1].ends_with("alone")).all(|r| r[4].parse::<f64>().unwrap() == 0.0), "{csv}");
    assert!(rows.iter().filter(|r| r[1] == "external").all(|r| r[4].parse::<f64>().unwrap() > 0.0), "{csv}");
    let (code, _, err) = freeblock(&["repro", "external", "--seconds", "0", "--out", out]);
    assert_eq!(code, 1);
    assert!(one_error_line(&err).contains("--seconds"), "{err}");
}

/// Issue 37 §4: head usage's paper marks stay within the bars (a one-sided "transfer below 55%"
/// drawn from its segment's start once reached 102%), and every figure marks the paper.
#[test]
fn repro_head_usage_marks_the_paper_within_the_bars() {
    let dir = scratch("head-usage");
    let (code, text, err) = freeblock(&["repro", "head-usage", "--requests", "300", "--quiet", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("comparisons with paper 000 within tolerance"), "{text}");
    assert_every_plot_marks_the_paper(&dir);
    for fig in 2..=6 {
        let texts = svg_texts(&dir.join(format!("paper000-fig{fig}.svg")));
        let top = texts.iter().filter_map(|t| t.parse::<f64>().ok()).fold(0.0, f64::max);
        assert!(top <= 100.0, "fig. {fig}: the axis runs to {top}%");
    }
}

/// A free loopback port (bound and let go: another process could take it in between, which
/// makes the test fail, never pass wrongly).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn stats_prints_a_summary_and_the_raw_text_on_request() {
    let dir = scratch("stats-view");
    let (nbd, stats) = (format!("127.0.0.1:{}", free_port()), format!("127.0.0.1:{}", free_port()));
    let store = dir.join("disk.img");
    let mut server = Command::new(env!("CARGO_BIN_EXE_freeblock"))
        .args(["serve", "--disk", "hp_c2247a", "--store", store.to_str().unwrap(), "--pace", "none", "--listen", &nbd, "--stats", &stats])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start freeblock serve");
    let started = std::time::Instant::now();
    let summary = loop {
        let (code, out, err) = freeblock(&["stats", &stats]);
        if code == 0 {
            break out;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "the stats endpoint never answered: {err}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let (code, raw, err) = freeblock(&["stats", "--raw", &stats]);
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 0, "{err}");
    assert!(summary.starts_with("requests\n") && summary.contains("errors          0 (0 for a full file system)") && summary.contains("connections     0 served"), "{summary}");
    assert!(!summary.contains("# TYPE"), "the summary is not the raw text: {summary}");
    assert!(raw.contains("# TYPE freeblock_requests_total counter\nfreeblock_requests_total{op=\"read\"} 0"), "{raw}");
}
