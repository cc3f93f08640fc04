//! The drive's own command queue (issue 34 part 1): the queue of one changes nothing, the
//! firmware's order is positioning time, freeblock plans before the firmware's pick, and bad
//! settings are refused naming their field. What the queue does to random reads and beside a
//! sequential reader (`freeblock firmware-queue`) is tested with its reproduction, in
//! crates/freeblock-repro.

use std::path::Path;
use std::sync::Arc;

use freeblock::experiment::Experiment;
use freeblock::firmware::FirmwareQueue;
use freeblock::freeblock::{Freeblock, FreeblockConfig, TaskSpec};
use freeblock::report::RunReport;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{RandomSpec, WorkloadSpec};
use freeblock_disk::{library, Disk};

fn he8() -> Arc<Disk> {
    library::media("ultrastar_he8").unwrap()
}

/// 3000 random requests (2:1 reads) with `mpl` outstanding.
fn random_run(disk: &Arc<Disk>, scheduler: SchedulerSpec, mpl: u32, firmware: Option<FirmwareQueue>, freeblock: Option<Freeblock>) -> RunReport {
    let workload = WorkloadSpec::Random(RandomSpec { count: Some(3_000), ..RandomSpec::default() }).build(disk.capacity(), 5).unwrap();
    let config = SimConfig { scheduler, mpl, keep_records: true, firmware, ..SimConfig::default() };
    let mut sim = Simulation::new(Arc::clone(disk), workload, config);
    if let Some(fb) = freeblock {
        sim = sim.with_freeblock(fb);
    }
    sim.run(None).unwrap()
}

fn timeline(r: &RunReport) -> Vec<(u64, u64, u64, u64)> {
    r.records.iter().map(|x| (x.id, x.lbn, x.start_ns, x.end_ns)).collect()
}

#[test]
fn a_queue_of_one_changes_nothing() {
    let disk = he8();
    for scheduler in [SchedulerSpec::Fcfs, SchedulerSpec::Sptf, SchedulerSpec::Clook] {
        let plain = random_run(&disk, scheduler, 8, None, None);
        for limit in [None, Some(0.0), Some(50.0)] {
            let one = random_run(&disk, scheduler, 8, Some(FirmwareQueue::new(1, limit)), None);
            assert_eq!(timeline(&plain), timeline(&one), "{scheduler}, age limit {limit:?}");
        }
    }
}

#[test]
fn a_deep_queue_behind_fcfs_serves_as_host_sptf_and_completes_out_of_order() {
    let disk = he8();
    // Every request fits at the drive, so the firmware chooses among the same requests as host
    // SPTF would, by the same positioning times.
    let host = random_run(&disk, SchedulerSpec::Sptf, 8, None, None);
    let firmware = random_run(&disk, SchedulerSpec::Fcfs, 8, Some(FirmwareQueue::new(32, None)), None);
    assert_eq!(timeline(&host), timeline(&firmware));
    let ids: Vec<u64> = firmware.records.iter().map(|r| r.id).collect();
    assert!(ids.windows(2).any(|w| w[1] < w[0]), "completions came in arrival order");
    // An age limit of 0 makes every command overdue at once: the firmware serves in the order
    // received, which behind FCFS is plain FCFS.
    let fifo = random_run(&disk, SchedulerSpec::Fcfs, 8, Some(FirmwareQueue::new(32, Some(0.0))), None);
    assert_eq!(timeline(&fifo), timeline(&random_run(&disk, SchedulerSpec::Fcfs, 8, None, None)));
    // A depth below the outstanding count lets the host's FCFS hold the rest back.
    let four = random_run(&disk, SchedulerSpec::Fcfs, 8, Some(FirmwareQueue::new(4, None)), None);
    assert!(four.throughput_per_s < firmware.throughput_per_s && four.throughput_per_s > host.throughput_per_s * 0.5);
}

#[test]
fn freeblock_plans_into_the_gap_before_the_firmwares_pick() {
    let disk = he8();
    let firmware = Some(FirmwareQueue::new(32, Some(200.0)));
    let scan = FreeblockConfig {
        tasks: vec![TaskSpec::Scan { block_bytes: 4096, passes: 0, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: None, passes_in_flight: None }],
        ..FreeblockConfig::default()
    };
    let alone = random_run(&disk, SchedulerSpec::Fcfs, 16, firmware, None);
    let with = random_run(&disk, SchedulerSpec::Fcfs, 16, firmware, Some(Freeblock::new(Arc::clone(&disk), scan).unwrap()));
    assert_eq!(timeline(&alone), timeline(&with), "the free scan moved a foreground request");
    let delivered = with.freeblock.as_ref().unwrap().tasks[0].blocks_delivered;
    assert!(delivered > 1_000, "the scan got only {delivered} blocks");
}

fn experiment_error(sim: &str) -> String {
    let text = format!("[disk]\nname = \"ultrastar_he8\"\n[workload]\ntype = \"random\"\ncount = 10\n[sim]\n{sim}");
    match Experiment::from_toml_str(&text, "test.toml", Path::new(".")) {
        Err(e) => e.to_string(),
        Ok(e) => e.run(None).map(|_| String::new()).unwrap_or_else(|e| e.to_string()),
    }
}

#[test]
fn bad_firmware_settings_name_their_field() {
    for depth in ["0", "33", "1000"] {
        let e = experiment_error(&format!("[sim.firmware]\nqueue_depth = {depth}"));
        assert!(e.contains("sim.firmware.queue_depth") && e.contains(depth), "{e}");
    }
    for limit in ["-5.0", "nan", "inf"] {
        let e = experiment_error(&format!("[sim.firmware]\nqueue_depth = 32\nage_limit_ms = {limit}"));
        assert!(e.contains("sim.firmware.age_limit_ms"), "{limit}: {e}");
    }
    let e = experiment_error("[sim.firmware]\nqueue_depth = 8\nage_limit = 5");
    assert!(e.contains("age_limit"), "{e}");
    assert_eq!(experiment_error("[sim.firmware]\nqueue_depth = 32\nage_limit_ms = 500"), "");
}
