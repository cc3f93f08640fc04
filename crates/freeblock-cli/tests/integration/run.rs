//! `freeblock run` as a user meets it: the text summary, the overrides, the files of `--out`
//! and `--csv` (one column set, streamed), range writes from an experiment file, and output to
//! a closed pipe.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use freeblock::report::RECORD_COLUMNS;

fn freeblock(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_freeblock")).args(args).output().expect("run freeblock");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("freeblock-run-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = freeblock(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

/// OLTP with a background scan, short.
const FREE_SCAN: &str = r#"
seed = 42
[disk]
name = "atlas10k"
cache = false
[workload]
type = "oltp"
[sim]
scheduler = { type = "sptf" }
mpl = 10
max_requests = 1500
[freeblock]
[[freeblock.tasks]]
type = "scan"
block_bytes = 4096
"#;

#[test]
fn the_text_output_has_the_freeblock_summary_and_throughput() {
    let dir = scratch("summary");
    let exp = write(&dir, "scan.toml", FREE_SCAN);
    let report = json(&["run", &exp, "--json"]);
    let (code, text, err) = freeblock(&["run", &exp, "--quiet"]);
    assert_eq!(code, 0, "{err}");
    let fb = &report["freeblock"];
    let figure = |v: &serde_json::Value| format!("{:.2}", v.as_f64().unwrap());
    let line = text.lines().find(|l| l.starts_with("freeblock (")).unwrap_or_else(|| panic!("no freeblock line in:\n{text}"));
    for (what, value) in [("free", &fb["free_mb_s"]), ("a potential", &fb["potential_mb_s"])] {
        assert!(line.contains(&format!("{what} {} MB/s", figure(value))), "{what} in {line}");
    }
    let efficiency = format!("efficiency {:.1}%", 100.0 * fb["efficiency"].as_f64().unwrap());
    assert!(line.contains(&efficiency) && line.contains("complete scan passes"), "{line}");
    let throughput = format!("throughput: {:.1} requests/s", report["throughput_per_s"].as_f64().unwrap());
    assert!(text.contains(&throughput), "{throughput} in:\n{text}");
}

#[test]
fn overrides_give_the_run_the_file_would_give_with_those_values() {
    let dir = scratch("overrides");
    let base = write(&dir, "base.toml", "seed = 1\n[workload]\ntype = \"random\"\ncount = 5000\n[sim]\nmpl = 2\n");
    let edited = write(
        &dir,
        "edited.toml",
        "seed = 7\n[disk]\nname = \"hp_c2249a\"\n[workload]\ntype = \"random\"\ncount = 900\n[sim]\nmpl = 5\nmax_requests = 600\nscheduler = { type = \"sstf\" }\n",
    );
    let overridden = json(&[
        "run", &base, "--json", "--seed", "7", "--disk", "hp_c2249a", "--count", "900", "--mpl", "5", "--max-requests", "600", "--scheduler", "sstf",
    ]);
    assert_eq!(overridden, json(&["run", &edited, "--json"]));
    assert_eq!(overridden["requests"], 600);
    // --count alone: the workload's count.
    assert_eq!(json(&["run", &base, "--json", "--count", "321"])["requests"], 321);
}

#[test]
fn bad_overrides_are_refused_with_the_option_or_field_named() {
    let dir = scratch("bad-overrides");
    let base = write(&dir, "base.toml", "[workload]\ntype = \"random\"\ncount = 50\n");
    let (code, _, err) = freeblock(&["run", &base, "--mpl", "0"]);
    assert_eq!(code, 2, "a usage error: {err}");
    assert!(err.contains("--mpl"), "{err}");
    let days = write(&dir, "days.toml", "[workload]\ntype = \"days\"\n");
    let (code, _, err) = freeblock(&["run", &days, "--count", "10"]);
    assert_eq!(code, 1);
    assert!(err.contains("workload.count"), "{err}");
    let (code, _, err) = freeblock(&["run", &base, "--disk", "no-such-disk"]);
    assert_eq!(code, 1);
    assert!(err.contains("no-such-disk"), "{err}");
}

#[test]
fn out_writes_records_as_csv_and_parquet_with_one_column_set_and_plots() {
    let dir = scratch("out");
    let exp = write(&dir, "scan.toml", FREE_SCAN);
    let out = dir.join("results");
    let csv = dir.join("records.csv");
    let (code, text, err) = freeblock(&["run", &exp, "--quiet", "--out", out.to_str().unwrap(), "--csv", csv.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let requests = report["requests"].as_u64().unwrap();
    let records = std::fs::read_to_string(out.join("records.csv")).unwrap();
    let header: Vec<&str> = records.lines().next().unwrap().split(',').collect();
    assert_eq!(header, RECORD_COLUMNS.map(|c| c.name));
    assert_eq!(records.lines().count() as u64, requests + 1);
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), records, "--csv and --out write the same records");
    // The response column is end − arrival of each row.
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in records.lines().skip(1).take(50) {
        let cells: Vec<f64> = line.split(',').map(|c| c.parse().unwrap_or(f64::NAN)).collect();
        assert!((cells[col("response_ms")] - (cells[col("end_ms")] - cells[col("arrival_ms")])).abs() < 2e-6, "{line}");
    }

    let file = std::fs::File::open(out.join("records.parquet")).unwrap();
    let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
    let meta = parquet::file::reader::FileReader::metadata(&reader).file_metadata();
    assert_eq!(meta.num_rows() as u64, requests);
    let names: Vec<&str> = meta.schema_descr().columns().iter().map(|c| c.name()).collect();
    assert_eq!(names, RECORD_COLUMNS.map(|c| c.name));

    for plot in ["head-usage.svg", "response.svg", "freeblock.svg"] {
        let svg = std::fs::read_to_string(out.join(plot)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("</svg>"), "{plot}");
        assert!(text.contains(plot), "the run names {plot}");
    }
}

#[test]
fn an_experiment_path_with_an_equals_sign_is_a_path() {
    let dir = scratch("equals");
    let exp = write(&dir, "mpl=4.toml", "[workload]\ntype = \"random\"\ncount = 40\n");
    assert_eq!(json(&["run", &exp, "--json"])["requests"], 40);
}

#[test]
fn range_writes_run_from_the_example_file() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/range-writes.toml");
    let one = json(&["run", example.to_str().unwrap(), "--json", "--count", "1500"]);
    let layout = &one["layout"];
    assert_eq!(layout["policy"], "range-writes");
    assert_eq!(layout["details"]["candidates_per_write"], 4.0);
    assert!(layout["details"]["writes"].as_u64().unwrap() > 0);
}

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let dir = scratch("pipe");
    let exp = write(&dir, "exp.toml", "[workload]\ntype = \"random\"\ncount = 2000\n");
    for args in [vec!["run", exp.as_str(), "--json"], vec!["run", exp.as_str()], vec!["disks"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_freeblock")).args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // The reader goes away before the command writes (`freeblock … | true`).
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
}

#[test]
fn the_scattered_files_example_reports_energy_on_the_papers_drive() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scattered-files.toml");
    let (code, out, err) = freeblock(&["run", example.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("on wd800") && out.contains("mJ per access") && out.contains("total"), "{out}");
    let report = json(&["run", example.to_str().unwrap(), "--json"]);
    let energy = &report["energy"];
    let (per_access, accesses, access_j) = (energy["per_access_mj"].as_f64().unwrap(), energy["accesses"].as_f64().unwrap(), energy["access_j"].as_f64().unwrap());
    assert!((per_access * accesses / 1e3 - access_j).abs() < 1e-6 * access_j, "{energy}");
    // A disk without a [power] table reports none.
    let dir = scratch("no-power");
    let exp = write(&dir, "plain.toml", "[workload]\ntype = \"random\"\ncount = 40\n");
    assert!(json(&["run", &exp, "--json"]).get("energy").is_none());
}

#[test]
fn seek_profile_prints_the_fit_beside_the_model_and_writes_its_files() {
    let dir = scratch("seek-profile");
    let (code, out, err) = freeblock(&["seek-profile", "--disk", "wd800", "--requests", "20000", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("max |error|") && out.contains("paper 003 fit") && out.contains("54."), "{out}");
    for file in ["envelope.csv", "zones.csv", "seek-profile.svg"] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    let envelope = std::fs::read_to_string(dir.join("envelope.csv")).unwrap();
    assert!(envelope.starts_with("distance_sectors,reads,fit_ms,cylinders,seek_curve_ms,model_ms,error\n") && envelope.lines().count() > 40);
    let (code, _, err) = freeblock(&["seek-profile", "--disk", "wd800", "--requests", "5"]);
    assert_ne!(code, 0);
    assert!(err.contains("requests"), "{err}");
    let (code, _, err) = freeblock(&["seek-profile", "--disk", "no-such-disk"]);
    assert_ne!(code, 0);
    assert!(err.contains("no-such-disk"), "{err}");
}

/// Issue 37 §4: `--freeblock both` runs the experiment without its tasks and with them and says
/// what they cost the foreground (nothing: free means free); `off` on a file without tasks is
/// refused naming the file.
#[test]
fn run_switches_freeblock_off_and_compares_both() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/free-scan.toml");
    let (code, out, err) = freeblock(&["run", example.to_str().unwrap(), "--freeblock", "both", "--count", "2000", "--quiet"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("== without [freeblock]") && out.contains("== with [freeblock]"), "{out}");
    let cost = out.split("What [freeblock] cost the foreground").nth(1).expect("a cost table");
    let mean = cost.lines().find(|l| l.starts_with("response mean")).expect("a mean row");
    // (A change that rounds to nothing prints unsigned.)
    assert!(mean.trim_end().ends_with(" 0.00%"), "free scans must not slow the foreground: {mean}");
    let (code, off, _) = freeblock(&["run", example.to_str().unwrap(), "--freeblock", "off", "--count", "2000", "--quiet"]);
    assert_eq!(code, 0);
    assert!(!off.contains("freeblock (") && out.contains("freeblock ("), "off runs no tasks:\n{off}");
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/random-sptf.toml");
    let (code, _, err) = freeblock(&["run", plain.to_str().unwrap(), "--freeblock", "both"]);
    assert_ne!(code, 0);
    assert!(err.contains("no [freeblock] table") && err.contains("random-sptf.toml"), "{err}");
}
