//! `max_time_s` stops issuing requests at a simulated time, whatever the scheduler's pace.

use std::sync::Arc;

use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};

use super::{atlas, random};

#[test]
fn no_request_arrives_after_the_time_limit_and_those_issued_are_served() {
    let disk = atlas();
    let w = random(1_000_000, 8, 2.0 / 3.0);
    for scheduler in [SchedulerSpec::Fcfs, SchedulerSpec::Sptf] {
        let config = SimConfig { scheduler, mpl: 8, max_time_s: 2.0, keep_records: true, ..SimConfig::default() };
        let report = Simulation::new(Arc::clone(&disk), w.build(disk.capacity(), 3).unwrap(), config).run(None).unwrap();
        let last_arrival = report.records.iter().map(|r| r.arrival_ns).max().unwrap();
        assert!(last_arrival < 2_000_000_000, "{scheduler}: a request arrived at {last_arrival} ns");
        // Served up to the limit: the last arrival is within a few services of it.
        assert!(last_arrival > 1_900_000_000, "{scheduler}: stopped early, last arrival {last_arrival} ns");
        assert_eq!(report.records.len() as u64, report.requests, "{scheduler}: every issued request is served");
    }
}

#[test]
fn a_negative_or_nan_time_limit_is_an_error_naming_the_key() {
    let disk = atlas();
    for bad in [-1.0, f64::NAN] {
        let config = SimConfig { max_time_s: bad, ..SimConfig::default() };
        let err = Simulation::new(Arc::clone(&disk), random(10, 8, 1.0).build(disk.capacity(), 1).unwrap(), config).run(None).unwrap_err();
        assert!(err.to_string().contains("sim.max_time_s"), "{err}");
    }
}
