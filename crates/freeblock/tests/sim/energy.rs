//! Energy is reported with every run on a disk whose spec gives power, and agrees with itself:
//! the per-request records and the run totals are computed apart and must match.

use freeblock::sched::SchedulerSpec;
use freeblock::workload::{RandomSpec, SizeDist, WorkloadSpec};
use freeblock_disk::library;

use crate::{random, run};

#[test]
fn records_and_totals_agree_and_idle_time_costs_idle_power() {
    let disk = library::media("wd800").unwrap();
    let power = disk.spec().power.unwrap();
    // Open arrivals at 20 requests/s leave the disk idle most of the time.
    let open = WorkloadSpec::Random(RandomSpec { count: Some(2000), size: SizeDist::Fixed { sectors: 8 }, read_fraction: 0.5, rate_per_s: Some(20.0), ..RandomSpec::default() });
    let r = run(&disk, &open, SchedulerSpec::Fcfs, 1, 3, true);
    let e = r.energy.expect("wd800 has a [power] table");
    let u = r.head_usage;
    assert_eq!(e.accesses, r.requests);
    assert!(u.idle_ns > u.total_ns() / 2, "the disk should be mostly idle");
    let from_records: f64 = r.records.iter().map(|x| x.energy_mj.unwrap()).sum::<f64>() / 1e3;
    assert!((from_records - e.access_j).abs() < 1e-6 * e.access_j, "{from_records} J from records, {} J from head usage", e.access_j);
    let idle_j = u.idle_ns as f64 * 1e-9 * power.idle_w;
    assert!((e.idle_j - idle_j).abs() < 1e-9 && (e.total_j - e.access_j - e.idle_j).abs() < 1e-9);
    // Busy time costs at least idle power, seeking more: the mean power lies between the two.
    assert!(e.mean_power_w > power.idle_w && e.mean_power_w < power.seek_w, "{}", e.mean_power_w);
}

#[test]
fn shorter_seeks_cost_less_energy_per_access() {
    // SPTF with 16 outstanding seeks shorter than FCFS: less seek energy per access.
    let disk = library::media("wd800").unwrap();
    let w = random(3000, 8, 0.67);
    let fcfs = run(&disk, &w, SchedulerSpec::Fcfs, 16, 5, false).energy.unwrap();
    let sptf = run(&disk, &w, SchedulerSpec::Sptf, 16, 5, false).energy.unwrap();
    assert!(sptf.seek_per_access_mj < 0.6 * fcfs.seek_per_access_mj, "SPTF {sptf:?} vs FCFS {fcfs:?}");
    assert!(sptf.per_access_mj < fcfs.per_access_mj);
}

#[test]
fn a_disk_without_power_reports_no_energy() {
    let r = run(&crate::atlas(), &random(200, 8, 0.5), SchedulerSpec::Fcfs, 1, 1, true);
    assert!(r.energy.is_none() && r.records.iter().all(|x| x.energy_mj.is_none()));
}
