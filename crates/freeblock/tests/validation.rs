//! Fidelity against real drives: replaying DiskSim 4.0's validation traces on the drives imported
//! from DiskSim's own parameter files must do at least as well as DiskSim 4.0 did (RMS demerit as
//! DiskSim's `rms` tool computes it, see `freeblock::validate`).
//!
//! Needs the shared folder (`../shared` next to the repository) with `disksim-models` and
//! `disksim-validation`; without it the test fails (see `support/shared.rs` for where it looks).
//!
//! `FREEBLOCK_VALIDATE_DUMP=<folder>` also writes `<trace>.csv` there: one line per request with
//! the trace's own fields and the simulated service time, for error analysis.

use std::path::PathBuf;

use freeblock::validate::{disk_for_trace, replay, rms_demerit, rms_demerit_exact};
use freeblock_disk::disksim;

/// (trace stem, DiskSim 4.0 mean ms, DiskSim 4.0 RMS demerit ms).
const DISKSIM: [(&str, f64, f64); 2] = [("atlas10k", 3.971, 0.268), ("hp_c2247a", 15.315, 0.090)];

#[path = "support/shared.rs"]
mod support;

fn shared() -> Option<PathBuf> {
    support::shared_dir("disksim-validation").filter(|d| d.join("disksim-models").is_dir())
}

#[test]
fn real_drive_traces_are_replayed_as_well_as_disksim_does() {
    let shared = shared().expect(
        "the shared folder with disksim-models and disksim-validation is missing ($FREEBLOCK_SHARED, a `shared` folder beside the repository, or /work/shared)",
    );
    let dump = std::env::var_os("FREEBLOCK_VALIDATE_DUMP").map(PathBuf::from);
    let mut failures = Vec::new();
    for (stem, disksim_mean, disksim_demerit) in DISKSIM {
        let trace = shared.join("disksim-validation").join(format!("{stem}.trace"));
        let spec = disksim::import(&shared.join("disksim-models").join(format!("{stem}.diskspecs"))).unwrap();
        let records = replay(disk_for_trace(spec, &trace).unwrap(), &trace).unwrap();
        let measured: Vec<f64> = records.iter().map(|r| r.measured_ms).collect();
        let simulated: Vec<f64> = records.iter().map(|r| r.simulated_ms).collect();
        let demerit = rms_demerit(&measured, &simulated);
        let exact = rms_demerit_exact(&measured, &simulated);
        let mean = simulated.iter().sum::<f64>() / simulated.len() as f64;
        eprintln!(
            "{stem}: {} requests, our mean {mean:.3} ms (DiskSim {disksim_mean}), RMS demerit {demerit:.4} ms (DiskSim {disksim_demerit}; exact samples {exact:.4})",
            records.len()
        );
        if let Some(dir) = &dump {
            let lines: Vec<String> = std::fs::read_to_string(&trace).unwrap().lines().map(str::to_string).collect();
            let mut csv = String::from("op,class,lbn,sectors,measured_ms,simulated_ms,delay_ms\n");
            for (r, line) in records.iter().zip(&lines) {
                let f: Vec<&str> = line.split_whitespace().collect();
                let delay: f64 = f[5].parse::<f64>().unwrap() / 1000.0;
                csv.push_str(&format!("{},{},{},{},{:.6},{:.6},{:.6}\n", f[0], f[1], r.lbn, r.sectors, r.measured_ms, r.simulated_ms, delay));
            }
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(format!("{stem}.csv")), csv).unwrap();
        }
        if demerit > disksim_demerit {
            failures.push(format!("{stem}: RMS demerit {demerit:.4} ms is worse than DiskSim 4.0's {disksim_demerit} ms"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("; "));
}

/// Each replayed request's error splits into whole revolutions and a fine rest within half a
/// revolution, and on the HP C2247A the replay keeps step with the drive: most requests pay the
/// drive's own number of revolutions (docs/calibrate.md, "Session 19").
#[test]
fn a_replayed_error_splits_into_revolutions_and_a_fine_rest() {
    let shared = shared().expect("the shared folder with disksim-models and disksim-validation is missing");
    let trace = shared.join("disksim-validation/hp_c2247a.trace");
    let spec = disksim::import(&shared.join("disksim-models/hp_c2247a.diskspecs")).unwrap();
    let disk = disk_for_trace(spec, &trace).unwrap();
    let revolution_ms = disk.revolution_ns() as f64 / 1e6;
    let records = replay(disk, &trace).unwrap();
    for r in &records {
        let error = r.simulated_ms - r.measured_ms;
        assert!((r.revolutions as f64 * revolution_ms + r.fine_error_ms - error).abs() < 1e-9, "{r:?}");
        assert!(r.fine_error_ms.abs() <= revolution_ms / 2.0 + 1e-9, "{r:?}");
    }
    let in_step = records.iter().filter(|r| r.revolutions == 0).count();
    eprintln!("hp_c2247a: {in_step} of {} requests pay the drive's own revolutions", records.len());
    assert!(in_step as f64 > 0.9 * records.len() as f64, "{in_step} of {}", records.len());
}
