//! Where a trace's RMS demerit comes from: per quarter, and how much of each half's squared
//! demerit the longest requests carry (docs/calibrate.md, "Why the held-out figure is fragile").
//!
//! ```sh
//! cargo run --release -p freeblock-fit --example calibrate_tail -- TRACE SPEC [SPEC ...]
//! ```
//!
//! Each SPEC (a `.diskspecs`, a `.toml` or a built-in name) replays the whole TRACE (validate
//! format) as `freeblock calibrate` does; printed per spec: the DiskSim demerit and mean error of
//! each quarter and half, the share of each half's squared (exact-sample) demerit in its longest
//! 1 % and longest 10 requests, the mean error of each quarter per cache class the measuring tool
//! gave (the trace's second field: read Hit or Miss, write Doub or Trip), every request
//! measured or replayed above 49 ms, and the request-by-request tables of [`print_residuals`]
//! (docs/calibrate.md, "Session 19").

use std::path::Path;
use std::sync::Arc;

use freeblock_fit::calibrate::{jittered_copies, replay_range, MeasuredTrace, Score};
use freeblock_fit::validate::rms_demerit;
use freeblock_disk::{library, Disk};

/// Jittered replays in the lock table.
const JITTERED: u32 = 30;

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
        let disk = freeblock_fit::validate::disk_for_trace(library::load(name).map_err(|e| format!("{name}: {e}"))?, trace)?;
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
        print_residuals(trace, &disk, &t, &measured, &replayed)?;
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

/// The request-by-request tables (docs/calibrate.md, "Session 19"): a request's error (replayed −
/// measured) splits into whole revolutions (it paid one more or one fewer than on the drive) and
/// the rest, its *fine* error, within half a revolution.
///
/// | table | shows |
/// |---|---|
/// | lock | each half's demerit with the recorded delays beside 30 replays with every delay jittered by ± half a revolution: a recorded-delay replay far below the jittered ones keeps step with the drive's rotation |
/// | after | median fine error per operation (read hit, read, write) and the operation before it, per half |
/// | direction | revolutions paid more (+) and fewer (−) than on the drive, by the seek's direction (same cylinder, inward to higher cylinders, outward), per quarter |
fn print_residuals(trace: &Path, disk: &Arc<Disk>, t: &MeasuredTrace, measured: &[f64], replayed: &[f64]) -> Result<(), Box<dyn std::error::Error>> {
    let n = t.len();
    print_lock(disk, t, measured, replayed)?;
    // The same replay, each request's error split into revolutions and the fine rest.
    let records = freeblock_fit::validate::replay(Arc::clone(disk), trace)?;
    let hit = hits(trace, n)?;
    let kind = |i: usize| match (records[i].op.is_read(), hit[i]) {
        (true, true) => "read hit",
        (true, false) => "read",
        (false, _) => "write",
    };
    println!("  after: median fine error, ms (requests), first half | second half");
    for now in ["read hit", "read", "write"] {
        for before in ["read", "write"] {
            let cells: Vec<String> = [(1, n / 2), (n / 2, n)]
                .iter()
                .map(|&(a, b)| {
                    let mut fine: Vec<f64> = (a.max(1)..b).filter(|&i| kind(i) == now && records[i - 1].op.is_read() == (before == "read")).map(|i| records[i].fine_error_ms).collect();
                    fine.sort_by(f64::total_cmp);
                    if fine.is_empty() { "–".to_string() } else { format!("{:+.3} ({})", fine[fine.len() / 2], fine.len()) }
                })
                .collect();
            if cells.iter().any(|c| c != "–") {
                println!("    {now:<8} after a {before:<5}  {}", cells.join(" | "));
            }
        }
    }
    println!("  direction: revolutions paid more / fewer than on the drive (requests), per quarter");
    for (what, pick) in [("same cylinder", 0i8), ("inward", 1), ("outward", -1)] {
        let cells: Vec<String> = (0..4)
            .map(|q| {
                let (a, b) = ((q * n / 4).max(1), (q + 1) * n / 4);
                let (mut more, mut fewer, mut count) = (0, 0, 0);
                for i in a..b {
                    if (i64::from(records[i].cylinder) - i64::from(records[i - 1].cylinder)).signum() as i8 != pick {
                        continue;
                    }
                    count += 1;
                    let turns = records[i].revolutions;
                    more += turns.max(0);
                    fewer += (-turns).max(0);
                }
                format!("+{more} −{fewer} ({count})")
            })
            .collect();
        println!("    {what:<13}  {}", cells.join("  "));
    }
    Ok(())
}

/// Each half's demerit with the recorded delays, and the spread over replays with jittered ones.
fn print_lock(disk: &Arc<Disk>, t: &MeasuredTrace, measured: &[f64], replayed: &[f64]) -> Result<(), Box<dyn std::error::Error>> {
    let n = t.len();
    let halves = [(0, n / 2), (n / 2, n)];
    let recorded: Vec<f64> = halves.iter().map(|&(a, b)| rms_demerit(&measured[a..b], &replayed[a..b])).collect();
    let revolution_ns = disk.revolution_ns() as f64;
    let mut jittered = [Vec::new(), Vec::new()];
    // As `freeblock calibrate` jitters its distribution objectives' replays (seed 1).
    for moved in jittered_copies(t.requests(), n, revolution_ns, JITTERED, 1) {
        let times = replay_range(Arc::clone(disk), &MeasuredTrace::from_requests(t.origin(), moved.to_vec())?, 0..n)?;
        for (slot, &(a, b)) in jittered.iter_mut().zip(&halves) {
            slot.push(rms_demerit(&measured[a..b], &times[a..b]));
        }
    }
    println!("  lock: RMS demerit, ms, recorded delays | {JITTERED} jittered replays: min / mean / max");
    for ((what, rec), jit) in ["first half", "second half"].iter().zip(&recorded).zip(&jittered) {
        let (min, max) = jit.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        println!("    {what:<11}  {rec:.4} | {min:.4} / {:.4} / {max:.4}", jit.iter().sum::<f64>() / jit.len() as f64);
    }
    Ok(())
}

/// Whether each request was a cache hit by the measuring tool's class (the trace's second field;
/// the library's parser checks it and drops it, as no model sees it).
fn hits(trace: &Path, n: usize) -> Result<Vec<bool>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(trace)?;
    let hit: Vec<bool> = text.lines().filter(|l| !l.trim().is_empty()).map(|l| l.split_whitespace().nth(1) == Some("Hit")).collect();
    if hit.len() != n {
        return Err(format!("{}: {} lines against {n} requests", trace.display(), hit.len()).into());
    }
    Ok(hit)
}
