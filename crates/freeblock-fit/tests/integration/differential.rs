//! Agreement with DiskSim 4.0 request by request: every fixture of
//! `../shared/disksim-differential` (11 drives × 2 synthetic traces of 5,000 requests, each with
//! DiskSim 4.0's own service time of every request in the trace's measured field) is replayed on
//! the drive imported from DiskSim's parameter files, as `freeblock validate` replays a trace.
//!
//! Acceptance, per fixture: at least 99.8 % of the requests within 10 µs of DiskSim's time, and an
//! RMS demerit (DiskSim's `rms` tool, see `freeblock_fit::validate`) below 0.01 ms between the two.
//! A fixture that still missed it would be listed in [`KNOWN_MISSES`] (none today), held to what
//! it measures; the differences that remain, and why, are listed in `docs/disksim-compat.md`.
//!
//! The fixtures live outside the repository (they are DiskSim's output, next to its model files);
//! a missing folder is a failure, not a skip. `FREEBLOCK_DIFFERENTIAL_DUMP=<folder>` writes
//! `<drive>_<trace>.csv` there (request, DiskSim ms, freeblock ms) for error analysis.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use freeblock_fit::validate::{disk_for_trace, replay, rms_demerit};
use freeblock_disk::disksim;

/// The drives, and the `.diskspecs` each fixture's `.parv` sources (DiskSim's `runvalid` pairing).
const DRIVES: [(&str, &str); 11] = [
    ("atlas10k", "atlas10k"),
    ("atlas_III", "atlas_III"),
    ("barracuda", "barracuda"),
    ("cheetah4LP", "cheetah4LP"),
    ("cheetah9LP", "cheetah9LP"),
    ("ibm18es", "ibm18es"),
    ("hp_c2247a", "hp_c2247a"),
    ("hp_c2490a", "hp_c2490a"),
    ("hp_c3323a", "hp_c3323a_validate"),
    ("dec_rz26", "dec_rz26"),
    ("st41601n", "st41601n"),
];

const TRACES: [&str; 2] = ["random", "seqmix"];

/// A request agrees with DiskSim when within this, ms.
const TOLERANCE_MS: f64 = 0.010;
/// Share of the requests that must agree.
const MIN_AGREEING: f64 = 0.998;
/// Largest RMS demerit accepted, ms.
const MAX_DEMERIT_MS: f64 = 0.01;

/// Fixtures that miss the acceptance today: `(drive, trace, most mismatches, largest RMS demerit
/// ms)`, each held to what it measures now so that any regression still fails. None: every
/// fixture meets it (the last, barracuda seqmix, since DiskSim's short-track stepping is
/// modelled; `docs/disksim-compat.md`).
const KNOWN_MISSES: [(&str, &str, usize, f64); 0] = [];

use crate::support;

/// The shared folder; the test fails, naming what it looked for, when the fixtures are missing.
fn shared() -> PathBuf {
    support::shared_dir("disksim-differential").unwrap_or_else(|| {
        panic!("the DiskSim differential fixtures are missing: no disksim-differential in $FREEBLOCK_SHARED, a `shared` folder beside the repository, or /work/shared (see docs/disksim-compat.md)")
    })
}

/// One fixture's outcome.
struct Outcome {
    requests: usize,
    disksim_mean: f64,
    freeblock_mean: f64,
    demerit: f64,
    mismatches: usize,
    first: Option<usize>,
    largest: f64,
}

fn run(drive: &str, model: &str, trace: &str, dump: Option<&Path>) -> Outcome {
    let shared = shared();
    let trace_path = shared.join("disksim-differential").join(drive).join(format!("{trace}.trace"));
    let spec = disksim::import(&shared.join("disksim-models").join(format!("{model}.diskspecs")))
        .unwrap_or_else(|e| panic!("{drive}: importing {model}.diskspecs: {e}"));
    let disk = disk_for_trace(spec, &trace_path).unwrap_or_else(|e| panic!("{drive} {trace}: {e}"));
    let records = replay(disk, &trace_path).unwrap_or_else(|e| panic!("{drive} {trace}: {e}"));
    let disksim: Vec<f64> = records.iter().map(|r| r.measured_ms).collect();
    let ours: Vec<f64> = records.iter().map(|r| r.simulated_ms).collect();
    let mut mismatches = 0;
    let mut first = None;
    let mut largest = 0.0f64;
    for (i, (a, b)) in disksim.iter().zip(&ours).enumerate() {
        let d = (b - a).abs();
        if d > TOLERANCE_MS {
            mismatches += 1;
            first.get_or_insert(i);
            largest = largest.max(d);
        }
    }
    if let Some(dir) = dump {
        let mut csv = String::from("idx,lbn,sectors,disksim_ms,freeblock_ms\n");
        for (i, r) in records.iter().enumerate() {
            let _ = writeln!(csv, "{i},{},{},{:.6},{:.6}", r.lbn, r.sectors, r.measured_ms, r.simulated_ms);
        }
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(format!("{drive}_{trace}.csv")), csv).unwrap();
    }
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    Outcome {
        requests: records.len(),
        disksim_mean: mean(&disksim),
        freeblock_mean: mean(&ours),
        demerit: rms_demerit(&disksim, &ours),
        mismatches,
        first,
        largest,
    }
}

#[test]
fn every_fixture_agrees_with_disksim_request_by_request() {
    let dir = shared().join("disksim-differential");
    assert!(
        dir.join("atlas10k").join("random.trace").is_file() && shared().join("disksim-models").is_dir(),
        "the DiskSim differential fixtures are missing: expected {} and {} (see docs/disksim-compat.md)",
        dir.display(),
        shared().join("disksim-models").display()
    );
    let dump = std::env::var_os("FREEBLOCK_DIFFERENTIAL_DUMP").map(PathBuf::from);
    let mut table = String::from(
        "drive       trace    requests  DiskSim ms  freeblock ms  RMS demerit ms  mismatches >10 µs  first  largest |d| ms\n",
    );
    let mut failures = Vec::new();
    for (drive, model) in DRIVES {
        for trace in TRACES {
            let o = run(drive, model, trace, dump.as_deref());
            let _ = writeln!(
                table,
                "{drive:<11} {trace:<7} {:>9} {:>11.4} {:>13.4} {:>15.4} {:>18} {:>6} {:>15.3}",
                o.requests,
                o.disksim_mean,
                o.freeblock_mean,
                o.demerit,
                o.mismatches,
                o.first.map_or("–".to_string(), |i| i.to_string()),
                o.largest
            );
            let known = KNOWN_MISSES.iter().find(|k| k.0 == drive && k.1 == trace);
            let allowed = known.map_or(((1.0 - MIN_AGREEING) * o.requests as f64).floor() as usize, |k| k.2);
            let max_demerit = known.map_or(MAX_DEMERIT_MS, |k| k.3);
            if o.requests == 0 {
                failures.push(format!("{drive} {trace}: the trace is empty"));
            }
            if o.mismatches > allowed {
                failures.push(format!(
                    "{drive} {trace}: {} of {} requests differ from DiskSim by more than {TOLERANCE_MS} ms (at most {allowed} may), the first at request {}",
                    o.mismatches,
                    o.requests,
                    o.first.unwrap_or(0)
                ));
            }
            if o.demerit.is_nan() || o.demerit >= max_demerit {
                failures.push(format!("{drive} {trace}: RMS demerit {:.4} ms, not below {max_demerit} ms", o.demerit));
            }
        }
    }
    eprintln!("{table}");
    assert!(failures.is_empty(), "{} fixture checks failed:\n{}\n\n{table}", failures.len(), failures.join("\n"));
}

/// Re-reads behind an earlier read (issue 37 §3): a read whose sectors end at or before the first
/// sector of one of the 30 requests before it, within 600 LBNs (about a track), is where
/// "read any free blocks" could serve from the buffer what passed under the head before that
/// earlier read. DiskSim 4.0 itself is not at hand to run new traces, so these are the ones its
/// existing outputs hold: every one must be within 10 µs of DiskSim's time. On the two
/// read-any-free drives there is one (random #3784, 21 requests after the read it lies behind), a
/// miss in DiskSim and in freeblock, with the option on or off; the check that tells the two apart
/// is the Atlas 10K's real trace (`tests/integration/validation.rs`).
#[test]
fn re_reads_behind_an_earlier_read_agree_with_disksim() {
    const LOOK_BACK: usize = 30;
    const WITHIN_LBNS: u64 = 600;
    let shared = shared();
    let (mut total, mut report, mut failures) = (0, String::new(), Vec::new());
    for (drive, model) in DRIVES {
        for trace in TRACES {
            let trace_path = shared.join("disksim-differential").join(drive).join(format!("{trace}.trace"));
            let ops: Vec<bool> = std::fs::read_to_string(&trace_path).unwrap().lines().map(|l| l.starts_with('R')).collect();
            let spec = disksim::import(&shared.join("disksim-models").join(format!("{model}.diskspecs"))).unwrap();
            let records = replay(disk_for_trace(spec, &trace_path).unwrap(), &trace_path).unwrap();
            assert_eq!(ops.len(), records.len(), "{drive} {trace}");
            let behind: Vec<usize> = (0..records.len())
                .filter(|&i| {
                    let end = records[i].lbn + u64::from(records[i].sectors);
                    ops[i] && (i.saturating_sub(LOOK_BACK)..i).any(|j| ops[j] && end <= records[j].lbn && records[j].lbn - end < WITHIN_LBNS)
                })
                .collect();
            for &i in &behind {
                let (d, f) = (records[i].measured_ms, records[i].simulated_ms);
                if (d - f).abs() > TOLERANCE_MS {
                    failures.push(format!("{drive} {trace} #{i}: DiskSim {d:.4} ms, freeblock {f:.4} ms"));
                }
            }
            total += behind.len();
            let _ = write!(report, "{drive} {trace} {}; ", behind.len());
        }
    }
    eprintln!("re-reads behind an earlier read: {total} ({report})");
    assert!(total > 50, "the fixtures should hold re-reads behind an earlier read: {total}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
