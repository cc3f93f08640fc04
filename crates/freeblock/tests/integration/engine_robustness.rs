//! Hostile experiment values reach the engine as clear errors naming the field, never as a
//! clamped or ignored value, a panic, a wrapped clock or a run that never ends; and free
//! bandwidth is media bandwidth, counted once however many tasks share it.
//!
//! Each case here once ran "successfully" with a silently wrong answer (or hung, or ran out of
//! memory, or panicked); the comment on each says what it did.

use std::path::Path;

use freeblock::experiment::Experiment;
use freeblock::report::RunReport;
use freeblock_disk::library;

/// An experiment on the Atlas 10K (cache off, as freeblock scheduling needs) with `rest` after
/// its `[disk]` table.
fn experiment(rest: &str) -> String {
    format!("seed = 3\n[disk]\nname = \"atlas10k\"\ncache = false\n{rest}")
}

fn run(rest: &str) -> freeblock::Result<RunReport> {
    Experiment::from_toml_str(&experiment(rest), "test.toml", Path::new("."))?.run(None)
}

/// Runs `rest` and returns its error's text, failing if it ran.
fn error_of(rest: &str) -> String {
    match run(rest) {
        Ok(r) => panic!("ran ({} requests, {} ns) instead of refusing:\n{rest}", r.requests, r.duration_ns),
        Err(e) => e.to_string(),
    }
}

/// Asserts that `rest` is refused with a message holding every one of `needles`.
fn refused(rest: &str, needles: &[&str]) {
    let message = error_of(rest);
    for n in needles {
        assert!(message.contains(n), "error {message:?} lacks {n:?} for:\n{rest}");
    }
}

const RANDOM_100: &str = "[workload]\ntype = \"random\"\ncount = 100\n";

#[test]
fn out_of_range_sim_settings_are_refused_naming_the_field() {
    // mpl = 0 ran as mpl = 1.
    refused(&format!("{RANDOM_100}[sim]\nmpl = 0"), &["sim.mpl", "not 0"]);
    // mpl = 4e9 tried to allocate 192 GB of stream slots.
    refused(&format!("{RANDOM_100}[sim]\nmpl = 4000000000"), &["sim.mpl"]);
    // NaN and negative windows made SPTF-SW serve in arrival order (FCFS) without a word.
    for window in ["nan", "-50", "-inf"] {
        refused(&format!("{RANDOM_100}[sim]\nmpl = 4\nscheduler = {{ type = \"sptf_sw\", window_pct = {window} }}"), &["sim.scheduler", "window_pct"]);
    }
    refused(&format!("{RANDOM_100}[sim]\nthink_ms = nan"), &["sim.think_ms"]);
    refused(&format!("{RANDOM_100}[sim]\nthink_ms = -1"), &["sim.think_ms"]);
    // 1e15 ms saturated to u64::MAX ns and wrapped the clock: 100 requests "took" 10 ms each.
    refused(&format!("{RANDOM_100}[sim]\nthink_ms = 1e15"), &["sim.think_ms"]);
    // An endless workload with a time limit of 1e300 s ran for ever.
    refused("[workload]\ntype = \"random\"\n[sim]\nmax_time_s = 1e300", &["sim.max_time_s"]);
    // warmup ≥ max_requests: a report of 0 requests.
    refused(&format!("{RANDOM_100}[sim]\nwarmup = 50\nmax_requests = 50"), &["sim.warmup"]);
    // A warm-up longer than the workload: a report of 0 requests.
    refused(&format!("{RANDOM_100}[sim]\nwarmup = 1000"), &["sim.warmup", "all of them warm-up"]);
    // Huge values are shown readably, not as 300 digits.
    let message = error_of(&format!("{RANDOM_100}[sim]\nthink_ms = 1e300"));
    assert!(message.contains("1e300") && message.len() < 200, "{message}");
}

#[test]
fn out_of_range_workload_values_are_refused_naming_the_field() {
    // Every request silently started at LBN 0.
    refused("[workload]\ntype = \"random\"\ncount = 10\nalignment_sectors = 100000000000", &["alignment_sectors"]);
    // Every request after the first silently wrapped to LBN 0.
    refused("[workload]\ntype = \"sequential\"\ncount = 10\nrequest_sectors = 8\nstride_sectors = 100000000000", &["stride_sectors"]);
    // count = 0: an empty report.
    refused("[workload]\ntype = \"random\"\ncount = 0", &["count"]);
    refused("[workload]\ntype = \"oltp\"\ncount = 10\nthink_time_ms = -5", &["think_time_ms"]);
    // 1e15 ms saturated to u64::MAX ns and wrapped the clock.
    refused("[workload]\ntype = \"oltp\"\ncount = 10\nthink_time_ms = 1e15", &["workload field `think_time_ms`"]);
    // Three days of 1e12 s saturated the day length and wrapped request times.
    refused("[workload]\ntype = \"days\"\ndays = 3\nrequests_per_day = 10\nday_s = 1e12", &["day_s"]);
    refused("[workload]\ntype = \"days\"\ndays = 1\nrequests_per_day = 10\nhot_blocks = 4000000000\nblock_sectors = 1", &["hot_blocks"]);
    // A coarse alignment that still leaves two starts is fine.
    let r = run("[workload]\ntype = \"random\"\ncount = 20\nalignment_sectors = 8000000").expect("two aligned starts fit");
    assert_eq!(r.requests, 20);
}

#[test]
fn out_of_range_freeblock_values_are_refused_naming_the_field() {
    let scan = "[[freeblock.tasks]]\ntype = \"scan\"";
    // NaN and negative idle delays were taken as 0.
    for idle in ["nan", "-1", "1e300"] {
        refused(&format!("{RANDOM_100}[freeblock]\nidle_after_ms = {idle}\n{scan}"), &["idle_after_ms"]);
    }
    // 0 was taken as 1.
    refused(&format!("{RANDOM_100}[freeblock]\nbatch_blocks = 0\n{scan}"), &["batch_blocks"]);
    refused(&format!("{RANDOM_100}[freeblock]\nmax_promoted_sectors = 0\n{scan}"), &["max_promoted_sectors"]);
    // 1e-300 s buckets: a division by zero (panic).
    refused(&format!("{RANDOM_100}[freeblock]\ntimeline_s = 1e-300\n{scan}"), &["timeline_s"]);
    // 1 ns buckets over a long run: a timeline of billions of rows (out of memory).
    refused(&format!("[workload]\ntype = \"random\"\ncount = 100\nrate_per_s = 0.01\n[freeblock]\ntimeline_s = 1e-6\n{scan}"), &["timeline_s", "wider"]);
    // A scan of no blocks never ended (the run hung).
    refused(&format!("{RANDOM_100}[freeblock]\n{scan}\nblocks = 0"), &["tasks[0].blocks"]);
    // 4e9 passes in flight: one allocation of 2.7 GB, then out of memory.
    refused(&format!("{RANDOM_100}[freeblock]\n{scan}\npasses = 0\nnext_pass_at = 0\npasses_in_flight = 4000000000"), &["tasks[0].passes_in_flight"]);
    refused(&format!("{RANDOM_100}[freeblock]\n{scan}\nfraction = nan"), &["tasks[0].fraction"]);
}

#[test]
fn a_scan_from_first_lbn_alone_runs_to_the_end_of_the_disk() {
    // Documented as "to the end of the disk", it was an error about 2^64 blocks.
    let capacity = library::media("atlas10k").unwrap().capacity();
    let first = (capacity / 8 - 100) * 8;
    let r = run(&format!("{RANDOM_100}[freeblock]\n[[freeblock.tasks]]\ntype = \"scan\"\nfirst_lbn = {first}")).unwrap();
    let task = &r.freeblock.unwrap().tasks[0];
    assert!(task.blocks_delivered <= 100, "{} blocks delivered from a region of 100", task.blocks_delivered);
    // Past the last whole block there is nothing to scan.
    let message = error_of(&format!("{RANDOM_100}[freeblock]\n[[freeblock.tasks]]\ntype = \"scan\"\nfirst_lbn = {capacity}"));
    assert!(message.contains(&capacity.to_string()), "{message}");
}

#[test]
fn a_run_nothing_ends_is_refused() {
    // No count, no max_requests, no time limit: it ran until killed.
    refused("[workload]\ntype = \"random\"", &["sim.max_requests", "endless"]);
    // An endless scan does not end it either.
    refused("[workload]\ntype = \"oltp\"\n[freeblock]\n[[freeblock.tasks]]\ntype = \"scan\"\npasses = 0", &["endless"]);
    // Each of these does.
    run("[workload]\ntype = \"random\"\n[sim]\nmax_requests = 50").unwrap();
    run("[workload]\ntype = \"random\"\n[sim]\nmax_time_s = 0.2").unwrap();
    let r = run("[workload]\ntype = \"random\"\n[freeblock]\n[[freeblock.tasks]]\ntype = \"scan\"\nfirst_lbn = 0\nblocks = 8").unwrap();
    assert_eq!(r.freeblock.unwrap().tasks[0].passes.len(), 1);
}

#[test]
fn a_clock_past_the_longest_run_is_an_error_not_a_wrap() {
    // Ten requests at 1e-12 per second: the first arrival saturated to u64::MAX ns and the run
    // reported 0 requests.
    refused("[workload]\ntype = \"random\"\ncount = 10\nrate_per_s = 1e-12", &["request 0", "simulated days"]);
    // A sequential stream at 1e-9 per second reported a run of 434 years with 5 ms responses.
    refused("[workload]\ntype = \"sequential\"\nrequest_sectors = 8\ncount = 10\nrate_per_s = 1e-9", &["simulated days"]);
    // With the cache on, the limit is the cache model's (100 days), and it is said up front.
    let cached = "seed = 3\n[disk]\nname = \"atlas10k\"\ncache = true\n[workload]\ntype = \"random\"\n[sim]\nmax_time_s = 1e8";
    let e = Experiment::from_toml_str(cached, "test.toml", Path::new(".")).unwrap().run(None).unwrap_err().to_string();
    assert!(e.contains("sim.max_time_s") && e.contains("100 days"), "{e}");
}

#[test]
fn idle_time_work_ends_with_the_workload_when_a_task_is_endless() {
    // An endless scan with idle-time work after a finite workload: the idle work went on for
    // ever (the run hung).
    let r = run(&format!("{RANDOM_100}[sim]\nthink_ms = 30\n[freeblock]\nidle_after_ms = 10\n[[freeblock.tasks]]\ntype = \"scan\"\npasses = 0")).unwrap();
    let fb = r.freeblock.unwrap();
    assert!(fb.idle_mb_s > 0.0, "idle time was used while the workload ran");
    assert!(fb.duration_s < 2.0 * r.duration_ns as f64 / 1e9 + 0.1, "freeblock ran {} s past a {} ns workload", fb.duration_s, r.duration_ns);
    // A long idle delay never reached while the workload runs: the last idle check does not
    // stretch the run to it (it made a timeline of 16 million rows and ran out of memory).
    let r = run("[workload]\ntype = \"random\"\ncount = 300\nrate_per_s = 20\n[freeblock]\nidle_after_ms = 1e10\n[[freeblock.tasks]]\ntype = \"scan\"\npasses = 0").unwrap();
    let fb = r.freeblock.unwrap();
    assert!(fb.duration_s < 100.0, "the run was stretched to {} s", fb.duration_s);
    assert_eq!(fb.idle_mb_s, 0.0);
}

/// The Atlas 10K's fastest media rate, bytes per second: the outer zone's track per revolution.
fn media_bytes_per_s() -> f64 {
    let disk = library::media("atlas10k").unwrap();
    let widest = disk.layout().zone_table().iter().map(|z| z.2).max().unwrap();
    f64::from(widest) * f64::from(disk.spec().sector_bytes) / (disk.revolution_ps() as f64 / 1e12)
}

#[test]
fn free_bandwidth_is_media_bandwidth_counted_once_for_identical_tasks() {
    // 40 identical whole-disk scans: every sector the head passes serves all 40. It was counted
    // 40 times, reporting several times the media rate as "free".
    let tasks: String = (0..40).map(|_| "[[freeblock.tasks]]\ntype = \"scan\"\n").collect();
    let r = run(&format!("[workload]\ntype = \"oltp\"\n[sim]\nscheduler = {{ type = \"sptf\" }}\nmpl = 10\nmax_requests = 1500\n[freeblock]\n{tasks}")).unwrap();
    let fb = r.freeblock.unwrap();
    let media = (fb.totals.free_bytes + fb.totals.piggyback_bytes) as f64;
    assert!(media > 0.0);
    let bound = media_bytes_per_s() / 1e6;
    assert!(fb.free_mb_s <= bound, "free {} MB/s beyond the media's {bound} MB/s", fb.free_mb_s);
    // Each task received what the media delivered (whole blocks only), no more.
    for t in &fb.tasks {
        let own = (t.blocks_delivered * t.block_bytes) as f64;
        assert!(own <= media, "{} delivered {own} bytes of {media} transferred", t.name);
        assert!(own >= 0.9 * media, "{} delivered {own} bytes of {media} transferred", t.name);
    }
}
