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

#[test]
fn the_paper003_scattered_presets_are_as_busy_as_the_papers_disk_and_tpcw_matches_ext2() {
    // The scattered stand-ins are the calibrated ones; the Ext2-shaped presets (`paper003`) keep
    // their think times and come out less busy (docs/fs2.md).
    use freeblock::sim::{SimConfig, Simulation};
    use freeblock::workload::{Paper003Run, ScatteredFilesSpec};
    let disk = library::media("wd800").unwrap();
    for run in Paper003Run::ALL {
        let spec = WorkloadSpec::ScatteredFiles(ScatteredFilesSpec::paper003_scattered(run));
        let config = SimConfig { think_ms: spec.think_time_ns().unwrap() as f64 / 1e6, ..SimConfig::default() };
        let r = Simulation::new(disk.clone(), spec.build(disk.capacity(), 1).unwrap(), config).run(None).unwrap();
        let busy = 1.0 - r.head_usage_fractions.idle;
        assert!((busy - run.ext2_busy()).abs() < 0.06, "{}: busy {busy:.2}, paper {}", run.name(), run.ext2_busy());
        if run == Paper003Run::Tpcw {
            // Paper 003 §4.3.1, Ext2: 8.2 ms access, 3.8 ms seek, 4.3 ms rotation, 90 mJ.
            let (e, n) = (r.energy.unwrap(), r.head_usage.accesses as f64);
            let seek = r.head_usage.seek_ns as f64 / n / 1e6;
            let rotation = r.head_usage.rotational_latency_ns as f64 / n / 1e6;
            for (ours, paper, what) in [(r.access.mean_ms, 8.2, "access"), (seek, 3.8, "seek"), (rotation, 4.3, "rotation"), (e.per_access_mj, 90.0, "energy")] {
                assert!((ours / paper - 1.0).abs() < 0.15, "TPC-W {what}: ours {ours:.2}, paper {paper}");
            }
        }
    }
}
