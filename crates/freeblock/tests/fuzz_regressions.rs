//! The fuzz targets of `fuzz/` under plain `cargo test`: the short fuzz run of `make test`.
//!
//! For every target in `fuzz/src/lib.rs` (included here as a module, so this test needs neither
//! cargo-fuzz nor nightly flags), one test runs:
//!
//! 1. every crash reproducer saved in `fuzz/regressions/<target>/` (each was a panic, an abort
//!    or an oversized allocation once, and must stay fixed);
//! 2. every seed input (`fuzz/seeds.txt` and the generated ones);
//! 3. `FREEBLOCK_FUZZ_ITERS` (default per target, a few seconds each) random mutations of the
//!    seeds, from a fixed-seed RNG so every run tries the same inputs.
//!
//! A panic fails the test naming the input; a mutated input is saved under
//! `fuzz/artifacts/cargo-test/` to replay. The allocator of this test binary refuses any single
//! allocation over 1 GiB, and any that would take the bytes live in the process over 1 GiB, as
//! libFuzzer's `-malloc_limit_mb=1024 -rss_limit_mb=1024` do: the process then aborts with
//! `memory allocation of N bytes failed` (rerun with `FREEBLOCK_FUZZ_VERBOSE=1 -- --nocapture
//! --test-threads=1` to see which input was running).
//!
//! `FREEBLOCK_FUZZ_CORPUS_DIR=DIR cargo test -p freeblock --test fuzz_regressions seed_corpus`
//! writes the seeds to `DIR/<target>/`, the starting corpus of the libFuzzer runs (`make fuzz`).

#[path = "../../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fuzz_targets;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---------------------------------------------------------------- the driver

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Mutated inputs per target unless `FREEBLOCK_FUZZ_ITERS` says otherwise: about two seconds
/// each on one core of the reference machine (the engine runs a simulation per input).
fn default_iterations(target: &str) -> u64 {
    match target {
        "engine" => 1_500,
        "experiment_toml" | "disksim" => 2_000,
        _ => 20_000,
    }
}

fn target_fn(target: &str) -> fuzz_targets::TargetFn {
    fuzz_targets::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("no fuzz target `{target}`"))
}

/// The longest one input may take: a hang is a failure too (libFuzzer's `-timeout`).
const INPUT_TIME_LIMIT: Duration = Duration::from_secs(20);

/// Runs `input` through the target on a thread of its own; on a panic, or if it runs past
/// [`INPUT_TIME_LIMIT`], fails naming the input (`describe` returns where it came from, and may
/// save it).
fn run_one(
    target: &str,
    f: fuzz_targets::TargetFn,
    input: &[u8],
    describe: impl FnOnce() -> String,
) {
    if std::env::var_os("FREEBLOCK_FUZZ_VERBOSE").is_some() {
        eprintln!("{target}: {} bytes", input.len());
    }
    let (done_tx, done_rx) = mpsc::channel();
    let owned = input.to_vec();
    let worker = thread::Builder::new()
        .name(format!("fuzz-{target}"))
        .spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(|| f(&owned)));
            let _ = done_tx.send(result.is_ok());
        })
        .expect("spawn a fuzz worker thread");
    match done_rx.recv_timeout(INPUT_TIME_LIMIT) {
        Ok(true) => {
            let _ = worker.join();
        }
        Ok(false) | Err(RecvTimeoutError::Disconnected) => {
            panic!(
                "fuzz target `{target}` panicked on {}{}",
                describe(),
                fuzz_targets::explain(target, input)
            )
        }
        // The worker is left running: a thread cannot be stopped from outside.
        Err(RecvTimeoutError::Timeout) => panic!(
            "fuzz target `{target}` ran for over {} s on {}{}",
            INPUT_TIME_LIMIT.as_secs(),
            describe(),
            fuzz_targets::explain(target, input)
        ),
    }
}

/// The saved crash reproducers of `target`.
fn regressions(target: &str) -> Vec<PathBuf> {
    let dir = repo_root().join("fuzz/regressions").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Mutates `input` with 1 to 8 random edits, splicing from `seeds`: the kinds of change that
/// find parser bugs (bit flips, boundary bytes and numbers, cut and repeated spans).
fn mutate(rng: &mut ChaCha8Rng, input: &[u8], seeds: &[(String, Vec<u8>)]) -> Vec<u8> {
    const TOKENS: &[&str] = &[
        "0",
        "-1",
        "1e308",
        "-1e308",
        "nan",
        "inf",
        "4294967296",
        "18446744073709551615",
        "9223372036854775808",
        "0.0000000001",
        "[",
        "]",
        "{",
        "}",
        "=",
        ",",
        "\"",
        "\n",
        " ",
        "#",
        "[[",
        "source ",
        "+",
        ".",
        "e",
    ];
    let mut out = input.to_vec();
    for _ in 0..rng.gen_range(1..=8) {
        let len = out.len();
        let at = if len == 0 { 0 } else { rng.gen_range(0..len) };
        match rng.gen_range(0..8) {
            0 if len > 0 => out[at] ^= 1 << rng.gen_range(0..8),
            1 if len > 0 => {
                out[at] = [0, 0xFF, 0x7F, 0x80, b'0', b'9', b'\n', b' '][rng.gen_range(0..8)]
            }
            2 => {
                let token = TOKENS[rng.gen_range(0..TOKENS.len())].as_bytes();
                out.splice(at..at, token.iter().copied());
            }
            3 if len > 0 => {
                // Replace a number (or a run of digits) with a token.
                let end = (at..len)
                    .find(|&i| !out[i].is_ascii_alphanumeric() && out[i] != b'.')
                    .unwrap_or(len);
                let token = TOKENS[rng.gen_range(0..9)].as_bytes();
                out.splice(at..end, token.iter().copied());
            }
            4 if len > 0 => {
                let end = rng.gen_range(at..=len.min(at + 64));
                out.drain(at..end);
            }
            5 if len > 0 => {
                let end = rng.gen_range(at..=len.min(at + 64));
                let span = out[at..end].to_vec();
                for _ in 0..rng.gen_range(1..=4) {
                    out.splice(at..at, span.iter().copied());
                }
            }
            6 if !seeds.is_empty() => {
                let other = &seeds[rng.gen_range(0..seeds.len())].1;
                if !other.is_empty() {
                    let from = rng.gen_range(0..other.len());
                    let to = rng.gen_range(from..=other.len().min(from + 256));
                    out.splice(at..at, other[from..to].iter().copied());
                }
            }
            _ => {
                let n = rng.gen_range(1..=16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                out.splice(at..at, bytes);
            }
        }
    }
    out.truncate(fuzz_targets::MAX_SEED_BYTES * 2);
    out
}

fn fuzz(target: &str) {
    let f = target_fn(target);
    for path in regressions(target) {
        let input = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        run_one(target, f, &input, || {
            format!("the reproducer {}", path.display())
        });
    }

    let seeds = fuzz_targets::seed_inputs(&repo_root(), target).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !seeds.is_empty() || target == "disksim",
        "no seed inputs for `{target}`"
    );
    for (name, input) in &seeds {
        run_one(target, f, input, || format!("the seed {name}"));
    }
    if seeds.is_empty() {
        return;
    }

    let iterations = std::env::var("FREEBLOCK_FUZZ_ITERS")
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("FREEBLOCK_FUZZ_ITERS `{v}` is not a count"))
        })
        .unwrap_or_else(|| default_iterations(target));
    let target_hash = target
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let mut rng = ChaCha8Rng::seed_from_u64(0xF022_u64 ^ target_hash);
    for i in 0..iterations {
        let base = &seeds[rng.gen_range(0..seeds.len())];
        let input = mutate(&mut rng, &base.1, &seeds);
        run_one(target, f, &input, || {
            let dir = repo_root().join("fuzz/artifacts/cargo-test");
            let path = dir.join(format!("{target}-{i}"));
            let saved = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &input));
            match saved {
                Ok(()) => format!(
                    "mutation {i} of the seed {} (saved as {})",
                    base.0,
                    path.display()
                ),
                Err(e) => format!("mutation {i} of the seed {} (not saved: {e})", base.0),
            }
        });
    }
}

#[test]
fn experiment_toml() {
    fuzz("experiment_toml");
}

#[test]
fn disk_toml() {
    fuzz("disk_toml");
}

#[test]
fn disksim() {
    fuzz("disksim");
}

#[test]
fn trace_disksim() {
    fuzz("trace_disksim");
}

#[test]
fn trace_validate() {
    fuzz("trace_validate");
}

#[test]
fn trace_msr() {
    fuzz("trace_msr");
}

#[test]
fn trace_blkparse() {
    fuzz("trace_blkparse");
}

#[test]
fn trace_srt() {
    fuzz("trace_srt");
}

#[test]
fn trace_vscsi() {
    fuzz("trace_vscsi");
}

#[test]
fn engine() {
    fuzz("engine");
}

/// Reproducers of findings not fixed yet (`fuzz/regressions/open/<target>/`): they still hang, so
/// they do not run in `make test`; `cargo test -p freeblock --test fuzz_regressions --
/// --ignored` runs them, and a fixed one moves up to `fuzz/regressions/<target>/`.
#[test]
#[ignore = "open fuzz findings (engine hangs): see fuzz/regressions/README.md"]
fn open_findings() {
    for (target, _) in fuzz_targets::TARGETS {
        let dir = repo_root().join("fuzz/regressions/open").join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect();
        files.sort();
        for path in files {
            let input = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            run_one(target, target_fn(target), &input, || format!("the open finding {}", path.display()));
        }
    }
}

/// Every target has a test here, and a binary in `fuzz/fuzz_targets/`.
#[test]
fn every_target_is_driven() {
    let this_file = include_str!("fuzz_regressions.rs");
    for (name, _) in fuzz_targets::TARGETS {
        assert!(
            this_file.contains(&format!("fuzz(\"{name}\")")),
            "no test runs the fuzz target `{name}`"
        );
        let binary = repo_root()
            .join("fuzz/fuzz_targets")
            .join(format!("{name}.rs"));
        assert!(binary.is_file(), "no libFuzzer binary {}", binary.display());
    }
}

/// The seeds load; with `FREEBLOCK_FUZZ_CORPUS_DIR` set, they are written there, one folder
/// per target, as the starting corpus of the libFuzzer runs.
#[test]
fn seed_corpus() {
    let out = std::env::var_os("FREEBLOCK_FUZZ_CORPUS_DIR").map(PathBuf::from);
    for (target, _) in fuzz_targets::TARGETS {
        let seeds =
            fuzz_targets::seed_inputs(&repo_root(), target).unwrap_or_else(|e| panic!("{e}"));
        let Some(out) = &out else { continue };
        let dir = out.join(target);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for (i, (_, bytes)) in seeds.iter().enumerate() {
            let path = dir.join(format!("seed-{i:03}"));
            std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

/// The fuzzers start from inputs that go deep: every seed trace reads to its end without an
/// error, and the engine's all-zero knobs make an experiment that runs.
#[test]
fn seeds_are_valid_inputs() {
    use freeblock::workload::{TraceFormat, TraceReader, Workload};
    let formats = [
        ("trace_disksim", TraceFormat::Disksim),
        ("trace_validate", TraceFormat::Validate),
        ("trace_msr", TraceFormat::Msr),
        ("trace_blkparse", TraceFormat::Blkparse),
        ("trace_srt", TraceFormat::Srt),
        ("trace_vscsi", TraceFormat::Vscsi),
    ];
    for (target, format) in formats {
        for (name, bytes) in fuzz_targets::seed_inputs(&repo_root(), target).unwrap() {
            let mut reader =
                TraceReader::from_reader(name.clone(), std::io::Cursor::new(bytes), format);
            let mut requests = 0;
            while reader
                .next_request()
                .unwrap_or_else(|e| panic!("seed {name}: {e}"))
                .is_some()
            {
                requests += 1;
            }
            assert!(requests > 0, "seed {name} holds no request");
        }
    }
    for (name, bytes) in fuzz_targets::seed_inputs(&repo_root(), "disk_toml").unwrap() {
        let text = String::from_utf8(bytes).unwrap();
        freeblock_disk::DiskSpec::from_toml_str(&text, &name)
            .unwrap_or_else(|e| panic!("seed {name}: {e}"));
    }
    let (disk, experiment) = fuzz_targets::engine_config(&[]);
    let dir = std::env::temp_dir().join(format!("freeblock-fuzz-seed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("disk.toml");
    std::fs::write(&path, &disk).unwrap();
    let experiment = experiment.replace("@DISK@", &format!("{:?}", path.display().to_string()));
    let result = freeblock::experiment::Experiment::from_toml_str(&experiment, "engine.toml", &dir)
        .and_then(|e| e.run(None));
    let _ = std::fs::remove_dir_all(&dir);
    let report = result
        .unwrap_or_else(|e| panic!("the all-zero engine config fails: {e}\n{disk}\n{experiment}"));
    assert!(
        report.requests > 0,
        "the all-zero engine config serves no request"
    );
}

/// The cap is in force: an allocation over 1 GiB is refused (`try_reserve` sees the refusal
/// that would abort an ordinary allocation), one well under it is not.
#[test]
fn allocation_cap_refuses_over_1_gib() {
    let mut big: Vec<u8> = Vec::new();
    assert!(big
        .try_reserve_exact(fuzz_targets::ALLOCATION_CAP + 1)
        .is_err());
    let mut small: Vec<u8> = Vec::new();
    assert!(small.try_reserve_exact(1 << 20).is_ok());
}

/// `FREEBLOCK_FUZZ_EXPLAIN=FILE cargo test -p freeblock --test fuzz_regressions explain_input --
/// --nocapture` prints what the `engine` input FILE runs (disk spec and experiment) and how long
/// it takes: to see what a slow or crashing libFuzzer input is.
#[test]
fn explain_input() {
    let Some(path) = std::env::var_os("FREEBLOCK_FUZZ_EXPLAIN") else { return };
    let input = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", Path::new(&path).display()));
    println!("{}", fuzz_targets::explain("engine", &input));
    let start = std::time::Instant::now();
    fuzz_targets::engine(&input);
    println!("ran in {:.3} s", start.elapsed().as_secs_f64());
}
