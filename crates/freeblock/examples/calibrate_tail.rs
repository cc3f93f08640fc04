//! Where a trace's RMS demerit comes from: per quarter, and how much of each half's squared
//! demerit the longest requests carry (docs/calibrate.md, "Why the held-out figure is fragile").
//!
//! ```sh
//! cargo run --release -p freeblock --example calibrate_tail -- TRACE SPEC [SPEC ...]
//! ```
//!
//! Each SPEC (a `.diskspecs`, a `.toml` or a built-in name) replays the whole TRACE (validate
//! format) as `freeblock calibrate` does; printed per spec: the DiskSim demerit and mean error of
//! each quarter and half, the share of each half's squared (exact-sample) demerit in its longest
//! 1 % and longest 10 requests, the mean error of each quarter per cache class the measuring tool
//! gave (the trace's second field: read Hit or Miss, write Doub or Trip), and every request
//! measured or replayed above 49 ms.

use std::path::Path;
use std::sync::Arc;

use freeblock::calibrate::{replay_range, MeasuredTrace, Score};
use freeblock_disk::library;

fn main() {
    if let Err(e) = run() {
        eprintln!("calibrate_tail: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [trace, specs @ ..] = args.as_slice() else { return Err("usage: calibrate_tail TRACE SPEC [SPEC ...]".into()) };
    if specs.is_empty() {
        return Err("usage: calibrate_tail TRACE SPEC [SPEC ...]: no SPEC given".into());
    }
    let trace = Path::new(trace);
    for name in specs {
        let disk = freeblock::validate::disk_for_trace(library::load(name).map_err(|e| format!("{name}: {e}"))?, trace)?;
        let t = MeasuredTrace::load(trace, disk.capacity())?;
        let n = t.len();
        let measured: Vec<f64> = t.requests().iter().map(|r| r.measured.unwrap_or(0) as f64 / 1e6).collect();
        let replayed = replay_range(Arc::clone(&disk), &t, 0..n)?;
        println!("{name}: RMS demerit (mean error), ms");
        let parts = [("Q1", 0, n / 4), ("Q2", n / 4, n / 2), ("Q3", n / 2, 3 * n / 4), ("Q4", 3 * n / 4, n), ("first half", 0, n / 2), ("second half", n / 2, n)];
        let line: Vec<String> = parts
            .iter()
            .map(|&(what, a, b)| {
                let s = Score::of(&measured[a..b], &replayed[a..b]);
                format!("{what} {:.4} ({:+.3})", s.rms_demerit_ms, s.mean_error_ms)
            })
            .collect();
        println!("  {}", line.join(", "));
        for (what, a, b) in [("first half", 0, n / 2), ("second half", n / 2, n)] {
            let mut m = measured[a..b].to_vec();
            let mut r = replayed[a..b].to_vec();
            m.sort_by(f64::total_cmp);
            r.sort_by(f64::total_cmp);
            // Order statistics paired: the exact-sample demerit, and its share in the top ranks.
            let squared: Vec<f64> = m.iter().zip(&r).map(|(x, y)| (x - y).powi(2)).collect();
            let total: f64 = squared.iter().sum();
            let k = squared.len();
            let share = |top: usize| 100.0 * squared[k - top..].iter().sum::<f64>() / total.max(f64::MIN_POSITIVE);
            println!("  {what}: {:.0} % of the squared demerit in the longest 1 % ({} requests), {:.0} % in the longest 10", share(k / 100), k / 100, share(10));
        }
        print_class_errors(trace, &measured, &replayed)?;
        for (i, (m, r)) in measured.iter().zip(&replayed).enumerate() {
            if *m > 49.0 || *r > 49.0 {
                let q = t.requests()[i];
                println!("  line {}: {:?} of {} sectors at {}: measured {m:.2} ms, replayed {r:.2} ms", i + 1, q.op, q.sectors, q.lbn);
            }
        }
    }
    Ok(())
}

/// Mean error (replayed − measured) per quarter of the trace, for each operation and cache class
/// the trace records. The library's parser checks the class and drops it (no model sees it), so
/// it is read here from the lines themselves.
fn print_class_errors(trace: &Path, measured: &[f64], replayed: &[f64]) -> Result<(), Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(trace)?;
    let classes: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 6).then(|| format!("{} {}", f[0], f[1]))
        })
        .collect();
    let n = measured.len();
    if classes.len() != n {
        println!("  (cache classes: {} lines of six fields against {n} requests; not tabled)", classes.len());
        return Ok(());
    }
    let mut names: Vec<&String> = classes.iter().collect();
    names.sort();
    names.dedup();
    println!("  mean error by cache class, ms (requests), per quarter:");
    for name in names {
        let cells: Vec<String> = (0..4)
            .map(|q| {
                let (a, b) = (q * n / 4, (q + 1) * n / 4);
                let errors: Vec<f64> = (a..b).filter(|&i| classes[i] == *name).map(|i| replayed[i] - measured[i]).collect();
                format!("{:+.3} ({})", errors.iter().sum::<f64>() / errors.len().max(1) as f64, errors.len())
            })
            .collect();
        println!("    {name:<6} {}", cells.join("  "));
    }
    Ok(())
}
