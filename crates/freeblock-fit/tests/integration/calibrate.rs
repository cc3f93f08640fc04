//! Calibration (`freeblock_fit::calibrate`): a model with deliberately wrong parameters, fitted to a
//! trace "measured" on the true model, must come back close to the true values, and bad input
//! must give errors naming what is wrong. Traces are small (a few hundred requests) so each test
//! takes seconds.

use std::sync::Arc;

use freeblock_fit::calibrate::{calibrate, parameters_of, replay_range, CalibrateOptions, Calibration, MeasuredTrace, Objective};
use freeblock_fit::validate::{replay, rms_demerit};
use freeblock::Request;
use freeblock_disk::{library, Disk, DiskSpec, Op};
use rand::{Rng, SeedableRng};

/// A seeded mix of random reads and writes and sequential read streams, 2–15 ms apart: the
/// streams hit the cache's read-ahead, long random reads feel zero-latency access.
fn workload(capacity: u64, n: usize, seed: u64) -> Vec<Request> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut stream_end = 0u64;
    (0..n)
        .map(|_| {
            let read = rng.gen_bool(0.6);
            let sequential = read && rng.gen_bool(0.4);
            let sectors: u32 = if sequential { rng.gen_range(8..=32) } else if read { rng.gen_range(2..=96) } else { rng.gen_range(2..=32) };
            let lbn = if sequential { stream_end } else { rng.gen_range(0..capacity - 200) };
            if sequential || (read && rng.gen_bool(0.2)) {
                stream_end = (lbn + u64::from(sectors)).min(capacity - 200);
            }
            let delay_ns = rng.gen_range(2_000_000..15_000_000);
            let mut r = Request::new(delay_ns, lbn, sectors, if read { Op::Read } else { Op::Write });
            r.measured = Some(0);
            r
        })
        .collect()
}

/// `requests` with their service times "measured" on `truth`, replayed with the recorded delays.
fn measured_on(truth: &DiskSpec, requests: Vec<Request>) -> MeasuredTrace {
    measured_with_jitter(truth, requests, 0.0)
}

/// `requests` with service times measured on `truth` with each delay moved by up to ± `jitter_ms`
/// / 2 (a real host's delays are not exactly the ones it records), the trace keeping the recorded
/// delays.
fn measured_with_jitter(truth: &DiskSpec, requests: Vec<Request>, jitter_ms: f64) -> MeasuredTrace {
    let disk = Arc::new(Disk::new(truth.clone()).unwrap());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(99);
    let moved: Vec<Request> = requests.iter().map(|r| Request { time: (r.time as f64 + (rng.gen::<f64>() - 0.5) * jitter_ms * 1e6) as u64, ..*r }).collect();
    let placeholder = MeasuredTrace::from_requests("synthetic", moved).unwrap();
    let times = replay_range(disk, &placeholder, 0..requests.len()).unwrap();
    let measured = requests.into_iter().zip(times).map(|(r, ms)| Request { measured: Some((ms * 1e6).round() as u64), ..r }).collect();
    MeasuredTrace::from_requests("synthetic", measured).unwrap()
}

fn truth() -> DiskSpec {
    library::get("hp_c2247a").unwrap()
}

/// Calibrates with the recorded delays only (`replays: 0`): on a trace measured that way the true
/// parameters reproduce every request exactly, so the search must find them.
fn fit(model: &DiskSpec, trace: &MeasuredTrace, params: &[&str]) -> Calibration {
    fit_with(model, trace, params, 0)
}

fn fit_with(model: &DiskSpec, trace: &MeasuredTrace, params: &[&str], replays: u32) -> Calibration {
    let options = CalibrateOptions { params: Some(params.iter().map(|s| (*s).to_string()).collect()), replays, ..CalibrateOptions::default() };
    calibrate(model, trace, &options).unwrap()
}

fn fitted(c: &Calibration, name: &str) -> f64 {
    c.params.iter().find(|p| p.name == name).unwrap().fitted
}

#[test]
fn doubled_overheads_are_recovered_close_to_the_true_values() {
    let truth = truth();
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 2000, 7));
    let mut model = truth.clone();
    model.controller.read_miss_ms *= 2.0;
    model.controller.write_miss_ms *= 2.0;
    let c = fit(&model, &trace, &["controller.read_miss_ms", "controller.write_miss_ms"]);
    for (name, true_ms) in [("controller.read_miss_ms", truth.controller.read_miss_ms), ("controller.write_miss_ms", truth.controller.write_miss_ms)] {
        let got = fitted(&c, name);
        println!("{name}: true {true_ms:.4} ms, misset {:.4} ms, fitted {got:.4} ms", 2.0 * true_ms);
        // The misset value is off by the whole true value (0.56 and 0.82 ms); the fit must land
        // within 0.1 ms of the truth. (It cannot do much better: a slightly longer overhead that
        // makes no request miss its sector gives the very same service times.)
        assert!((got - true_ms).abs() <= 0.1, "{name}: fitted {got} ms, true {true_ms} ms; {c:#?}");
    }
    println!("held-out RMS demerit {:.4} → {:.4} ms", c.test_before.rms_demerit_ms, c.test_after.rms_demerit_ms);
    assert_eq!(c.fit_after.rms_demerit_exact_ms, 0.0, "the fitted model must reproduce the fit half: {c:?}");
    assert!(c.test_after.rms_demerit_ms < 0.25 * c.test_before.rms_demerit_ms, "held-out demerit {} → {}", c.test_before.rms_demerit_ms, c.test_after.rms_demerit_ms);
    assert!(c.test_after.mean_error_ms.abs() < 0.05, "{:?}", c.test_after);
}

#[test]
fn the_pooled_body_score_matches_the_distribution_but_may_split_overheads_wrongly() {
    // The same doubled overheads as above, fitted with the option that brings both real traces
    // below their models (all requests pooled, the longest 1 % left out): the held-out
    // distribution must come much closer, while the read/write split of the overhead is not
    // pinned down (printed, not asserted: docs/calibrate.md gives the figures).
    let truth = truth();
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 2000, 7));
    let mut model = truth.clone();
    model.controller.read_miss_ms *= 2.0;
    model.controller.write_miss_ms *= 2.0;
    let params = ["controller.read_miss_ms", "controller.write_miss_ms"];
    let options = CalibrateOptions { params: Some(params.iter().map(|s| (*s).to_string()).collect()), replays: 0, objective: Objective::Pooled, body_quantile: 0.99, ..CalibrateOptions::default() };
    let c = calibrate(&model, &trace, &options).unwrap();
    for (name, true_ms) in [(params[0], truth.controller.read_miss_ms), (params[1], truth.controller.write_miss_ms)] {
        println!("pooled: {name}: true {true_ms:.4} ms, misset {:.4} ms, fitted {:.4} ms", 2.0 * true_ms, fitted(&c, name));
    }
    println!("pooled: held-out RMS demerit {:.4} → {:.4} ms", c.test_before.rms_demerit_ms, c.test_after.rms_demerit_ms);
    assert!(c.test_after.rms_demerit_ms < 0.25 * c.test_before.rms_demerit_ms, "held-out demerit {} → {}", c.test_before.rms_demerit_ms, c.test_after.rms_demerit_ms);
}

/// Long (15 s to minutes in a debug build, as the machine is loaded): `cargo test -p freeblock-fit
/// --test integration calibrate:: -- --ignored`.
#[test]
#[ignore = "long: 4000 requests through the per-operation search"]
fn doubled_overheads_are_recovered_with_the_default_search_when_the_drive_phase_is_unknown() {
    // The "drive" saw delays up to ± half a revolution off the recorded ones, so no replay can
    // match requests one by one; the per-operation distribution score (recorded delays plus
    // jittered replays, pooled) must still bring the overheads back near the truth.
    let truth = truth();
    let revolution_ms = 60e3 / truth.rpm;
    let trace = measured_with_jitter(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 4000, 17), revolution_ms);
    let mut model = truth.clone();
    model.controller.read_miss_ms *= 2.0;
    model.controller.write_miss_ms *= 2.0;
    let params = ["controller.read_miss_ms", "controller.write_miss_ms"];
    let options = CalibrateOptions { params: Some(params.iter().map(|s| (*s).to_string()).collect()), objective: Objective::PerOperation, ..CalibrateOptions::default() };
    let c = calibrate(&model, &trace, &options).unwrap();
    for (name, true_ms) in [("controller.read_miss_ms", truth.controller.read_miss_ms), ("controller.write_miss_ms", truth.controller.write_miss_ms)] {
        let got = fitted(&c, name);
        println!("{name}: true {true_ms:.4} ms, misset {:.4} ms, fitted {got:.4} ms", 2.0 * true_ms);
        // With the drive's phase unknown only the share of requests that just miss their sector
        // tells an overhead (about ± 3 ms / √n): with 2000 fitted requests, within 0.15 ms.
        assert!((got - true_ms).abs() <= 0.15, "{name}: fitted {got} ms, true {true_ms} ms (misset at {} ms); {c:#?}", 2.0 * true_ms);
    }
    println!("held-out RMS demerit {:.4} → {:.4} ms", c.test_before.rms_demerit_ms, c.test_after.rms_demerit_ms);
    assert!(c.test_after.rms_demerit_ms < 0.75 * c.test_before.rms_demerit_ms, "held-out demerit {} → {}", c.test_before.rms_demerit_ms, c.test_after.rms_demerit_ms);
}

#[test]
fn a_wrong_write_settle_is_recovered() {
    let truth = truth();
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 1000, 8));
    let mut model = truth.clone();
    model.write_settle_ms += 0.6;
    let c = fit(&model, &trace, &["write_settle_ms"]);
    let got = fitted(&c, "write_settle_ms");
    assert!((got - truth.write_settle_ms).abs() < 0.06, "fitted {got} ms, true {} ms", truth.write_settle_ms);
    assert!(c.test_after.rms_demerit_ms < c.test_before.rms_demerit_ms);
}

#[test]
fn zero_latency_reads_are_switched_to_what_the_drive_does() {
    let mut truth = truth();
    truth.cache.zero_latency_reads = true;
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 300, 9));
    let mut model = truth.clone();
    model.cache.zero_latency_reads = false;
    let c = fit(&model, &trace, &["cache.zero_latency_reads"]);
    assert_eq!(fitted(&c, "cache.zero_latency_reads"), 1.0, "{:?}", c.params);
    // And back: a drive without it is not given it.
    let plain = measured_on(&model, workload(Disk::new(model.clone()).unwrap().capacity(), 300, 9));
    let c = fit(&truth, &plain, &["cache.zero_latency_reads"]);
    assert_eq!(fitted(&c, "cache.zero_latency_reads"), 0.0, "{:?}", c.params);
}

#[test]
fn read_ahead_is_recovered_from_sequential_hits() {
    let truth = truth();
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 600, 10));
    let mut model = truth.clone();
    model.cache.read_ahead_sectors = 32;
    let c = fit(&model, &trace, &["cache.read_ahead_sectors"]);
    // Candidates are eighths of the 256-sector segment; the truth
    // (128) is one of them. Longer read-ahead than the streams use looks the same, so the fit
    // must reproduce the trace with the value nearest the model's that does.
    let got = fitted(&c, "cache.read_ahead_sectors");
    assert!((96.0..=160.0).contains(&got), "fitted {got} sectors, true {}", truth.cache.read_ahead_sectors);
    assert_eq!(c.fit_after.rms_demerit_exact_ms, 0.0, "{c:?}");
    assert!(c.test_after.rms_demerit_ms < c.test_before.rms_demerit_ms);
}

#[test]
fn calibration_is_deterministic() {
    let truth = truth();
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 120, 11));
    let mut model = truth.clone();
    model.controller.read_hit_ms *= 1.5;
    model.read_settle_ms = 0.3;
    let params = ["controller.read_hit_ms", "read_settle_ms"];
    let (a, b) = (fit(&model, &trace, &params), fit(&model, &trace, &params));
    assert_eq!(a.spec, b.spec);
    assert_eq!((a.evaluations, a.sweeps), (b.evaluations, b.sweeps));
    assert_eq!(a.test_after, b.test_after);
}

#[test]
fn the_written_spec_replays_the_trace_to_the_reported_held_out_demerit() {
    let truth = truth();
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 200, 12));
    let mut model = truth.clone();
    model.controller.write_miss_ms *= 2.0;
    let c = fit(&model, &trace, &["controller.write_miss_ms"]);
    // Write the trace in the validate format and the spec as TOML, then replay the file the way
    // `freeblock validate` does.
    let dir = std::env::temp_dir().join(format!("freeblock-calibrate-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("synthetic.trace");
    std::fs::write(&path, validate_text(trace.requests())).unwrap();
    let spec = DiskSpec::from_toml_str(&c.spec.to_toml_string(), "calibrated.toml").unwrap();
    let records = replay(Arc::new(Disk::new(spec).unwrap()), &path).unwrap();
    let half = records.len() / 2;
    let measured: Vec<f64> = records[half..].iter().map(|r| r.measured_ms).collect();
    let simulated: Vec<f64> = records[half..].iter().map(|r| r.simulated_ms).collect();
    assert_eq!(rms_demerit(&measured, &simulated), c.test_after.rms_demerit_ms);
    // The loaded trace is the same trace.
    let loaded = MeasuredTrace::load(&path, Disk::new(truth).unwrap().capacity()).unwrap();
    assert_eq!(loaded.len(), trace.len());
    std::fs::remove_dir_all(&dir).ok();
}

/// Validate-format text: each line carries the delay *after* its request, which is the next
/// request's `time`.
fn validate_text(requests: &[Request]) -> String {
    let mut s = String::new();
    for (i, r) in requests.iter().enumerate() {
        let delay = requests.get(i + 1).map_or(0, |n| n.time);
        let op = if r.op.is_read() { "R" } else { "W" };
        let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
        s.push_str(&format!("{op} Miss {} {} {} {}\n", r.lbn, r.sectors, us(r.measured.unwrap()), us(delay)));
    }
    s
}

#[test]
fn short_or_empty_traces_are_refused_with_the_count_needed() {
    let e = MeasuredTrace::from_requests("empty.trace", Vec::new()).unwrap_err().to_string();
    assert!(e.starts_with("empty.trace: ") && e.contains("holds no requests") && e.contains("at least 20"), "{e}");
    let few = workload(1_000_000, 15, 1);
    let e = MeasuredTrace::from_requests("few.trace", few).unwrap_err().to_string();
    assert!(e.contains("only 15 requests") && e.contains("10 to fit on, 10 to test on"), "{e}");
    let mut unmeasured = workload(1_000_000, 30, 1);
    unmeasured[4].measured = None;
    let e = MeasuredTrace::from_requests("u.trace", unmeasured).unwrap_err().to_string();
    assert!(e.contains("request 4 (line 5) has no measured service time"), "{e}");
    // A file: a malformed line is named by file and line; an empty file is refused.
    let dir = std::env::temp_dir().join(format!("freeblock-calibrate-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.trace");
    std::fs::write(&bad, "R Miss 100 8 5000.0 1000.0\nR Miss 200 eight 5000.0 1000.0\n").unwrap();
    let e = MeasuredTrace::load(&bad, 1_000_000).unwrap_err().to_string();
    assert!(e.contains("bad.trace:2"), "{e}");
    let empty = dir.join("empty.trace");
    std::fs::write(&empty, "").unwrap();
    let e = MeasuredTrace::load(&empty, 1_000_000).unwrap_err().to_string();
    assert!(e.contains("empty.trace") && e.contains("no requests"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn parameters_the_model_lacks_or_that_do_not_exist_are_refused() {
    let truth = truth();
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 40, 2));
    let opts = |names: &[&str]| CalibrateOptions { params: Some(names.iter().map(|s| (*s).to_string()).collect()), ..CalibrateOptions::default() };
    let e = calibrate(&truth, &trace, &opts(&["controller.seek_ms"])).unwrap_err().to_string();
    assert!(e.contains("unknown parameter `controller.seek_ms`") && e.contains("controller.read_miss_ms"), "{e}");
    let e = calibrate(&truth, &trace, &opts(&[])).unwrap_err().to_string();
    assert!(e.contains("no parameter to fit"), "{e}");
    // Without a cache there are no cache parameters, and the default set leaves them out.
    let plain = truth.clone().without_cache();
    let e = calibrate(&plain, &trace, &opts(&["cache.segments"])).unwrap_err().to_string();
    assert!(e.contains("has no cache") && e.contains("cache.segments"), "{e}");
    let names = parameters_of(&plain);
    assert_eq!(names, ["controller.read_miss_ms", "controller.write_miss_ms", "read_settle_ms", "write_settle_ms", "seek_asymmetry_ms"]);
    // A trace past the model's last sector.
    let mut small = truth.clone();
    small.block_count = Some(1000);
    let e = calibrate(&small, &trace, &CalibrateOptions::default()).unwrap_err().to_string();
    assert!(e.contains("ends past the model's 1000 sectors"), "{e}");
}

#[test]
fn a_change_fitted_on_the_first_quarter_that_does_not_hold_on_the_second_is_left_out() {
    // A drifting "drive": its first quarter measured with a read overhead 0.3 ms longer, the rest
    // on the true model. Fitted on the first half at once by the per-operation distribution
    // score the overhead moves towards the first quarter's; checked on the second quarter the
    // change does not help and is left out. (The per-request score, a capped absolute error,
    // is not pulled by a quarter of the requests at all: that is tested below.)
    let truth = truth();
    let capacity = Disk::new(truth.clone()).unwrap().capacity();
    let requests = workload(capacity, 800, 13);
    let mut slow = truth.clone();
    slow.controller.read_miss_ms += 0.3;
    let early = measured_on(&slow, requests.clone());
    let late = measured_on(&truth, requests);
    let mixed: Vec<Request> = early.requests()[..200].iter().chain(&late.requests()[200..]).copied().collect();
    let trace = MeasuredTrace::from_requests("drifting", mixed).unwrap();
    let params = ["controller.read_miss_ms"];
    let options = CalibrateOptions { params: Some(vec![params[0].into()]), replays: 0, objective: Objective::PerOperation, ..CalibrateOptions::default() };
    let unchecked = calibrate(&truth, &trace, &CalibrateOptions { validate: false, ..options.clone() }).unwrap();
    assert_ne!(fitted(&unchecked, params[0]), truth.controller.read_miss_ms, "{:?}", unchecked.params);
    let checked = calibrate(&truth, &trace, &options).unwrap();
    assert_eq!(fitted(&checked, params[0]), truth.controller.read_miss_ms, "{:?}", checked.params);
    assert_eq!(checked.rejected, params);
    assert!(checked.test_after.rms_demerit_ms <= unchecked.test_after.rms_demerit_ms);
    // Request by request, even unchecked, the three quarters on the true model hold the fit.
    let robust = calibrate(&truth, &trace, &CalibrateOptions { validate: false, objective: Objective::PerRequest, ..options }).unwrap();
    assert_eq!(fitted(&robust, params[0]), truth.controller.read_miss_ms, "{:?}", robust.params);
}

#[test]
fn an_overhead_after_writes_the_model_does_not_set_apart_is_fitted_apart() {
    // The drive reads 0.17 ms quicker after a write than after a read (the HP C2247A's trace
    // shows this); the model uses one read overhead for both and leaves the other unset.
    let mut truth = truth();
    truth.controller.read_miss_after_write_ms = Some(truth.controller.read_miss_ms - 0.17);
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 2000, 14));
    let model = DiskSpec { controller: freeblock_disk::Controller { read_miss_after_write_ms: None, ..truth.controller.clone() }, ..truth.clone() };
    let name = "controller.read_miss_after_write_ms";
    let c = fit(&model, &trace, &[name]);
    let (got, want) = (fitted(&c, name), truth.controller.read_miss_after_write_ms.unwrap());
    println!("{name}: true {want:.4} ms, model {:.4} ms (unset), fitted {got:.4} ms", model.controller.read_miss_ms);
    // As for the doubled overheads: an overhead before the media shows only in the requests it
    // makes miss or catch their sector.
    assert!((got - want).abs() <= 0.1, "fitted {got} ms, true {want} ms; {c:?}");
    assert_eq!(c.spec.controller.read_miss_after_write_ms, Some(got), "the written spec sets it apart");
    assert_eq!(c.spec.controller.read_miss_ms, truth.controller.read_miss_ms, "the after-read one is left alone");
}

#[test]
fn a_completion_overhead_is_recovered_request_by_request() {
    // What follows the transfer moves every completion, so with the recorded delays each
    // request's own error shows it, not only the ones that miss a sector.
    let mut truth = truth();
    truth.controller.write_complete_ms += 0.18;
    let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 1000, 15));
    let model = library::get("hp_c2247a").unwrap();
    let name = "controller.write_complete_ms";
    let c = fit(&model, &trace, &[name]);
    let got = fitted(&c, name);
    println!("{name}: true {:.4} ms, model {:.4} ms, fitted {got:.4} ms", truth.controller.write_complete_ms, model.controller.write_complete_ms);
    assert!((got - truth.controller.write_complete_ms).abs() <= 0.01, "fitted {got} ms, true {} ms", truth.controller.write_complete_ms);
    assert!(c.test_after.mean_abs_error_ms < 0.1 * c.test_before.mean_abs_error_ms, "{:?} → {:?}", c.test_before, c.test_after);
}

#[test]
fn a_seek_asymmetry_is_recovered_either_way() {
    // Inward seeks slower than the curve and outward ones quicker (or the other way round), as
    // on the HP C2247A: the search reaches below 0 as far as above.
    for asymmetry_ms in [0.4, -0.3] {
        let truth = DiskSpec { seek_asymmetry_ms: asymmetry_ms, ..truth() };
        let trace = measured_on(&truth, workload(Disk::new(truth.clone()).unwrap().capacity(), 1500, 16));
        let model = library::get("hp_c2247a").unwrap();
        let c = fit(&model, &trace, &["seek_asymmetry_ms"]);
        let got = fitted(&c, "seek_asymmetry_ms");
        println!("seek_asymmetry_ms: true {asymmetry_ms:.4} ms, fitted {got:.4} ms; held-out mean |error| {:.4} → {:.4} ms", c.test_before.mean_abs_error_ms, c.test_after.mean_abs_error_ms);
        assert!((got - asymmetry_ms).abs() <= 0.1, "fitted {got} ms, true {asymmetry_ms} ms; {:?}", c.rejected);
        assert!(c.test_after.mean_abs_error_ms < 0.5 * c.test_before.mean_abs_error_ms, "{:?} → {:?}", c.test_before, c.test_after);
    }
}
