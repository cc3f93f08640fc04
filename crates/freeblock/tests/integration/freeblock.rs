//! Freeblock scheduling: free means free, and the API behaves as documented.

use std::sync::{Arc, Mutex};

use freeblock::freeblock::{
    BackgroundApp, BackgroundSets, Delivery, Freeblock, FreeblockConfig, FreeblockError, PlannerKind, Route, TaskControl,
    TaskReport, TaskSpec, URGENT_WEIGHT,
};
use freeblock::report::RunReport;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::WorkloadSpec;
use freeblock_disk::{library, Disk, Op};
use proptest::prelude::*;

fn atlas() -> Arc<Disk> {
    library::media("atlas10k").unwrap()
}

fn oltp(disk: &Arc<Disk>, scheduler: SchedulerSpec, requests: u64, fb: Option<FreeblockConfig>) -> RunReport {
    oltp_with(disk, scheduler, requests, fb.map(|cfg| Freeblock::new(disk.clone(), cfg).unwrap()))
}

/// The same OLTP run with freeblock scheduling already set up (applications added).
fn oltp_with(disk: &Arc<Disk>, scheduler: SchedulerSpec, requests: u64, fb: Option<Freeblock>) -> RunReport {
    let spec: WorkloadSpec = toml::from_str("type = \"oltp\"").unwrap();
    let workload = spec.build(disk.capacity(), 7).unwrap();
    let config = SimConfig { scheduler, mpl: 10, think_ms: 30.0, max_requests: requests, keep_records: true, ..SimConfig::default() };
    let mut sim = Simulation::new(disk.clone(), workload, config);
    if let Some(fb) = fb {
        sim = sim.with_freeblock(fb);
    }
    sim.run(None).unwrap()
}

fn scan_config(planner: PlannerKind) -> FreeblockConfig {
    FreeblockConfig {
        planner,
        tasks: vec![TaskSpec::Scan { block_bytes: 4096, passes: 0, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: None, passes_in_flight: None }],
        ..FreeblockConfig::default()
    }
}

#[test]
fn free_means_free_for_every_foreground_scheduler() {
    let disk = atlas();
    let schedulers = [
        SchedulerSpec::Fcfs,
        SchedulerSpec::Clook,
        SchedulerSpec::Sstf,
        SchedulerSpec::Sptf,
        SchedulerSpec::SptfSw { window_pct: 40.0 },
    ];
    for sched in schedulers {
        let alone = oltp(&disk, sched, 4_000, None);
        for planner in [PlannerKind::SingleTrack, PlannerKind::TwoTrack, PlannerKind::MultiTrack] {
            let with = oltp(&disk, sched, 4_000, Some(scan_config(planner)));
            assert_eq!(alone.records.len(), with.records.len());
            for (a, b) in alone.records.iter().zip(&with.records) {
                assert_eq!((a.id, a.lbn, a.start_ns, a.end_ns), (b.id, b.lbn, b.start_ns, b.end_ns), "{sched} {planner}: request {} moved", a.id);
            }
            let fb = with.freeblock.expect("freeblock report");
            assert_eq!(fb.delayed_foreground, 0, "{sched} {planner}");
            assert!(fb.totals.free_bytes > 0, "{sched} {planner}: the scan got nothing");
            assert_eq!(alone.head_usage, with.head_usage, "{sched} {planner}: foreground head usage changed");
        }
    }
}

#[test]
fn two_track_planner_moves_at_least_as_much_as_single_track() {
    let disk = atlas();
    let one = oltp(&disk, SchedulerSpec::Fcfs, 20_000, Some(scan_config(PlannerKind::SingleTrack))).freeblock.unwrap();
    // Without balancing both take the most sectors each window, and two-track plans include
    // every single-track plan.
    let unbalanced = FreeblockConfig { balance: Some(false), ..scan_config(PlannerKind::TwoTrack) };
    let two = oltp(&disk, SchedulerSpec::Fcfs, 20_000, Some(unbalanced)).freeblock.unwrap();
    assert!(two.totals.free_bytes >= one.totals.free_bytes, "two-track {} < single-track {}", two.totals.free_bytes, one.totals.free_bytes);
    // Early in a scan nearly every sector is wanted: the rotational latency is nearly all used.
    assert!(two.free_transfer_fraction > 0.8, "{}", two.free_transfer_fraction);
    let split = two.free_transfer_fraction + two.extra_seek_fraction + two.unused_fraction;
    assert!((split - 1.0).abs() < 1e-9, "the split covers the whole opportunity: {split}");
}

/// A greedy planner leaves the inner zones (fewer sectors per track, fewer foreground visits
/// per cylinder) behind; balancing keeps every part of the disk draining at the same pace.
#[test]
fn balancing_keeps_the_inner_zones_from_falling_behind() {
    let disk = atlas();
    // Blocks of a whole-disk scan delivered in each tenth of the LBNs.
    let tenths = |balance: bool| {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let config = FreeblockConfig { planner: PlannerKind::MultiTrack, balance: Some(balance), ..FreeblockConfig::default() };
        let mut fb = Freeblock::new(disk.clone(), config).unwrap();
        fb.add_app(Box::new(Recorder { batches: batches.clone(), block_bytes: 4096, regions: None })).unwrap();
        let report = oltp_with(&disk, SchedulerSpec::Fcfs, 60_000, Some(fb));
        assert_eq!(report.freeblock.unwrap().delayed_foreground, 0);
        let mut counts = [0u64; 10];
        for d in batches.lock().unwrap().iter().flatten() {
            counts[(d.lbn * 10 / disk.capacity()) as usize] += 1;
        }
        counts
    };
    // Share of each tenth read, innermost over outermost: how far the inside lags.
    let lag = |c: [u64; 10]| c[9] as f64 / c[0] as f64;
    let (greedy, balanced) = (lag(tenths(false)), lag(tenths(true)));
    assert!(greedy < 0.4, "without balancing the innermost tenth lags: {greedy:.3}");
    assert!(balanced > 0.5 && balanced > 2.0 * greedy, "balanced {balanced:.3}, greedy {greedy:.3}");
}

/// Late in a pass the wanted sectors are scattered over the surfaces: chains through several
/// tracks in one rotational latency move more than the best one or two tracks, still for free.
#[test]
fn multi_track_chains_move_more_once_the_sets_are_scattered() {
    let disk = atlas();
    // A tenth of the disk, scanned over and over: most passes spend long in their scattered tail.
    let region = disk.capacity() / 10 / 8;
    let config = |planner| FreeblockConfig {
        planner,
        tasks: vec![TaskSpec::Scan { block_bytes: 4096, passes: 0, fraction: 1.0, first_lbn: Some(0), blocks: Some(region), next_pass_at: None, passes_in_flight: None }],
        ..FreeblockConfig::default()
    };
    let two = oltp(&disk, SchedulerSpec::Fcfs, 20_000, Some(config(PlannerKind::TwoTrack))).freeblock.unwrap();
    let multi = oltp(&disk, SchedulerSpec::Fcfs, 20_000, Some(config(PlannerKind::MultiTrack))).freeblock.unwrap();
    assert_eq!(multi.delayed_foreground, 0);
    assert!(multi.totals.free_bytes > two.totals.free_bytes, "multi-track {} <= two-track {}", multi.totals.free_bytes, two.totals.free_bytes);
}

#[test]
fn same_seed_same_freeblock_report() {
    let disk = atlas();
    let a = oltp(&disk, SchedulerSpec::Sptf, 3_000, Some(scan_config(PlannerKind::TwoTrack)));
    let b = oltp(&disk, SchedulerSpec::Sptf, 3_000, Some(scan_config(PlannerKind::TwoTrack)));
    assert_eq!(a.freeblock, b.freeblock);
}

fn sets() -> BackgroundSets {
    BackgroundSets::new(atlas())
}

#[test]
fn bad_registrations_are_clear_errors() {
    let mut s = sets();
    let cap = s.disk().capacity();
    assert!(matches!(s.add_task(Op::Read, 1000), Err(FreeblockError::BlockSize { block_bytes: 1000, .. })));
    assert!(matches!(s.add_task(Op::Read, 0), Err(FreeblockError::BlockSize { .. })));
    let t = s.add_task(Op::Read, 4096).unwrap();
    let e = s.register(t, cap / 8 * 8, 2).unwrap_err();
    assert!(matches!(e, FreeblockError::OutOfRange { .. }), "{e}");
    assert!(e.to_string().contains(&cap.to_string()), "{e}");
    let e = s.register(t, 4, 1).unwrap_err();
    assert!(matches!(e, FreeblockError::Misaligned { lbn: 4, block_sectors: 8 }), "{e}");
    assert!(matches!(s.register(freeblock::freeblock::TaskId(9), 0, 1), Err(FreeblockError::UnknownTask(9))));
    assert_eq!(s.total_wanted(), 0, "a failed registration must not leave anything behind");
}

#[test]
fn abort_removes_blocks_without_deliveries() {
    let mut s = sets();
    let t = s.add_task(Op::Read, 4096).unwrap();
    s.register(t, 0, 100).unwrap();
    assert_eq!(s.abort(t, 0..400).unwrap(), 400);
    s.transferred(0..800, 10, Route::Free, None);
    let got = s.take_deliveries(t);
    assert_eq!(got.len(), 50);
    assert!(got.iter().all(|d| d.lbn >= 400 && d.lbn % 8 == 0));
    assert_eq!(s.total_wanted(), 0);
}

#[test]
fn urgent_sectors_weigh_more_until_transferred() {
    let mut s = sets();
    let t = s.add_task(Op::Read, 4096).unwrap();
    s.register(t, 0, 4).unwrap(); // LBNs 0..32, on the first track
    let track = |s: &BackgroundSets| s.track_wanted(0, 0);
    assert_eq!((track(&s), s.max_sector_weight()), (32, 1));
    // Urgent only where wanted: LBNs 32..40 are not registered.
    assert_eq!(s.mark_urgent(t, 8..40).unwrap(), 24);
    assert_eq!(s.mark_urgent(t, 8..16).unwrap(), 0, "already urgent");
    // The Atlas 10K's tracks are narrow enough for the full weight.
    assert_eq!(s.urgent_weight(), URGENT_WEIGHT);
    let w = u64::from(URGENT_WEIGHT);
    assert_eq!((u64::from(track(&s)), s.max_sector_weight()), (8 + 24 * w, w));
    let mut weights = vec![0u16; 40];
    s.mark_wanted(&[(0..40, 0)], &mut weights, 1);
    assert_eq!((weights[7], weights[8], weights[31], weights[32]), (1, URGENT_WEIGHT as u16, URGENT_WEIGHT as u16, 0));
    // Scaled (balancing): every weight times the scale.
    let mut scaled = vec![0u16; 40];
    s.mark_wanted(&[(0..40, 0)], &mut scaled, 8);
    assert_eq!((scaled[7], scaled[8], scaled[32]), (8, 8 * URGENT_WEIGHT as u16, 0));
    // Transferred or aborted sectors lose their urgency with their wantedness; registered again,
    // they are ordinary.
    s.transferred(8..16, 5, Route::Free, None);
    assert_eq!(s.abort(t, 16..24).unwrap(), 8);
    assert_eq!(u64::from(track(&s)), 8 + 8 * w);
    s.register(t, 8, 2).unwrap();
    assert_eq!(u64::from(track(&s)), 24 + 8 * w);
    s.transferred(0..32, 6, Route::Free, None);
    assert_eq!((track(&s), s.max_sector_weight(), s.total_wanted()), (0, 1, 0));
    assert!(matches!(s.mark_urgent(freeblock::freeblock::TaskId(9), 0..8), Err(FreeblockError::UnknownTask(9))));
}

#[test]
fn a_wholly_urgent_track_of_one_task_fits_two_bytes_on_the_widest_drive() {
    // The 20 TB drive's outer tracks (4,547 sectors) take a lighter urgent mark than 16: a whole
    // track of it must stay within the two-byte track summary instead of spilling.
    let disk = library::media("ultrastar_hc560").unwrap();
    let spt = u64::from(disk.layout().sectors_per_track(0));
    let mut s = BackgroundSets::new(disk);
    let w = s.urgent_weight();
    assert!(w < URGENT_WEIGHT && u64::from(w) * spt < u64::from(u16::MAX) && u64::from(w + 1) * spt >= u64::from(u16::MAX), "weight {w} for {spt} sectors a track");
    let t = s.add_task(Op::Read, 4096).unwrap();
    s.register(t, 0, spt.div_ceil(8)).unwrap();
    s.mark_urgent(t, 0..spt).unwrap();
    assert_eq!(u64::from(s.track_wanted(0, 0)), spt * u64::from(w));
}

#[test]
fn promote_merges_contiguous_blocks_into_requests() {
    let mut s = sets();
    let t = s.add_task(Op::Read, 4096).unwrap();
    s.register(t, 0, 10).unwrap();
    s.register(t, 160, 10).unwrap();
    // Half of block 0 was already read for free: it is not promoted again, and not delivered yet.
    s.transferred(0..4, 5, Route::Free, None);
    assert!(s.take_deliveries(t).is_empty());
    let reqs = s.promote(t, 0..1000, 256).unwrap();
    assert_eq!(reqs, vec![(4, 76), (160, 80)]);
    assert_eq!(s.total_wanted(), 0);
    // Nothing can be delivered for free while promoted.
    s.transferred(0..1000, 6, Route::Free, None);
    assert!(s.take_deliveries(t).is_empty());
    s.complete_promoted(t, 4, 76, 7).unwrap();
    s.complete_promoted(t, 160, 80, 8).unwrap();
    let got = s.take_deliveries(t);
    assert_eq!(got.len(), 20);
    assert!(got.iter().all(|d| d.route == Route::Promoted));
    // A long run is split at the request size limit.
    s.register(t, 800, 100).unwrap();
    let reqs = s.promote(t, 0..u64::MAX, 256).unwrap();
    assert_eq!(reqs, vec![(800, 256), (1056, 256), (1312, 256), (1568, 32)]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// However transfers chop a registered region up, every block is delivered exactly once,
    /// when its last sector arrives.
    #[test]
    fn every_block_delivered_exactly_once(cuts in proptest::collection::vec((0u64..4000, 1u64..300), 1..60), bs in prop_oneof![Just(512u64), Just(4096), Just(8192)]) {
        let mut s = sets();
        let t = s.add_task(Op::Read, bs).unwrap();
        let spb = bs / 512;
        let blocks = 4000 / spb;
        s.register(t, 0, blocks).unwrap();
        let mut delivered = std::collections::HashMap::new();
        let mut read = vec![false; (blocks * spb) as usize];
        for (i, (lbn, n)) in cuts.iter().enumerate() {
            s.transferred(*lbn..(*lbn + *n).min(blocks * spb), i as u64, Route::Free, None);
            for x in *lbn..(*lbn + *n).min(blocks * spb) { read[x as usize] = true; }
            for d in s.take_deliveries(t) {
                prop_assert!(delivered.insert(d.lbn, d.time).is_none(), "block {} delivered twice", d.lbn);
                let b = d.lbn;
                prop_assert!((b..b + spb).all(|x| read[x as usize]), "block {} delivered before all its sectors were read", b);
            }
        }
        // Finish the rest: every block exactly once in all.
        s.transferred(0..blocks * spb, 999, Route::Free, None);
        for d in s.take_deliveries(t) {
            prop_assert!(delivered.insert(d.lbn, d.time).is_none());
        }
        prop_assert_eq!(delivered.len() as u64, blocks);
        prop_assert_eq!(s.total_wanted(), 0);
    }
}

/// A task written against the Rust API: registers its regions (or the whole disk), records
/// every batch.
struct Recorder {
    batches: Arc<Mutex<Vec<Vec<Delivery>>>>,
    block_bytes: u64,
    /// `(first LBN, blocks)` to register; `None`: the whole disk.
    regions: Option<Vec<(u64, u64)>>,
}

impl BackgroundApp for Recorder {
    fn name(&self) -> String {
        "recorder".into()
    }
    fn block_bytes(&self) -> u64 {
        self.block_bytes
    }
    fn start(&mut self, ctl: &mut TaskControl<'_>) -> freeblock::freeblock::error::Result<()> {
        match &self.regions {
            Some(regions) => {
                for &(lbn, blocks) in regions {
                    ctl.register(lbn, blocks)?;
                }
            }
            None => {
                ctl.register_whole_disk()?;
            }
        }
        Ok(())
    }
    fn on_blocks(&mut self, ctl: &mut TaskControl<'_>, blocks: &[Delivery]) -> freeblock::freeblock::error::Result<()> {
        self.batches.lock().unwrap().push(blocks.to_vec());
        ctl.notify_after(500);
        Ok(())
    }
    fn is_done(&self) -> bool {
        false
    }
    fn report(&self) -> TaskReport {
        TaskReport { name: self.name(), blocks_delivered: 0, block_bytes: self.block_bytes, passes: vec![], progress: vec![] }
    }
}

#[test]
fn applications_get_each_block_once_in_batches() {
    let disk = atlas();
    let batches = Arc::new(Mutex::new(Vec::new()));
    let mut fb = Freeblock::new(disk.clone(), FreeblockConfig { batch_blocks: 1000, ..FreeblockConfig::default() }).unwrap();
    fb.add_app(Box::new(Recorder { batches: batches.clone(), block_bytes: 8192, regions: Some(vec![(0, 20_000), (1_000_000, 20_000)]) })).unwrap();
    // A second task at the same time, over part of the same blocks.
    fb.add_app(TaskSpec::Scan { block_bytes: 4096, passes: 1, fraction: 1.0, first_lbn: Some(0), blocks: Some(1000), next_pass_at: None, passes_in_flight: None }.build(64).unwrap()).unwrap();
    let spec: WorkloadSpec = toml::from_str("type = \"random\"\ncount = 20000\nlocality = 0.0").unwrap_or_else(|_| WorkloadSpec::random_4k(20_000));
    let workload = spec.build(disk.capacity(), 3).unwrap();
    let config = SimConfig { scheduler: SchedulerSpec::Sptf, mpl: 8, ..SimConfig::default() };
    let report = Simulation::new(disk, workload, config).with_freeblock(fb).run(None).unwrap();
    let fbr = report.freeblock.unwrap();
    assert_eq!(fbr.delayed_foreground, 0);
    let batches = batches.lock().unwrap();
    assert!(batches.len() > 1, "deliveries come in several batches");
    let mut seen = std::collections::HashSet::new();
    for b in batches.iter() {
        for d in b {
            assert!(d.lbn % 16 == 0, "8 KB blocks start on 16-sector boundaries");
            assert!(d.lbn < 320_000 || (1_000_000..1_320_000).contains(&d.lbn), "block {} was never registered", d.lbn);
            assert!(seen.insert(d.lbn), "block {} delivered twice", d.lbn);
        }
    }
    assert!(!seen.is_empty());
    assert_eq!(fbr.tasks.len(), 2);
    assert!(fbr.tasks[1].blocks_delivered > 0, "the second task got blocks too");
}

fn region_scan(passes: u32, next_pass_at: Option<f64>, passes_in_flight: Option<u32>) -> FreeblockConfig {
    let scan = TaskSpec::Scan { block_bytes: 4096, passes, fraction: 1.0, first_lbn: Some(800_000), blocks: Some(3000), next_pass_at, passes_in_flight };
    // Small batches: the next pass starts close to its threshold.
    FreeblockConfig { tasks: vec![scan], batch_blocks: 16, ..FreeblockConfig::default() }
}

#[test]
fn overlapping_passes_read_each_block_once_per_pass() {
    let disk = atlas();
    let spec = WorkloadSpec::random_4k(200_000);
    let run = |fb: FreeblockConfig| {
        let workload = spec.build(disk.capacity(), 5).unwrap();
        let config = SimConfig { scheduler: SchedulerSpec::Fcfs, mpl: 4, ..SimConfig::default() };
        let report = Simulation::new(disk.clone(), workload, config).with_freeblock(Freeblock::new(disk.clone(), fb).unwrap()).run(None).unwrap();
        report.freeblock.unwrap()
    };
    for (threshold, in_flight) in [(0.0, None), (0.5, None), (0.9, None), (0.0, Some(3)), (0.5, Some(4))] {
        let fb = run(region_scan(4, Some(threshold), in_flight));
        let at = format!("{threshold} with {in_flight:?} in flight");
        assert_eq!(fb.delayed_foreground, 0);
        let task = &fb.tasks[0];
        assert_eq!(task.passes.len(), 4, "at {at}: every pass completes");
        // Every block read served exactly one pass: no read was wasted and none counted twice.
        assert_eq!(task.blocks_delivered, 4 * 3000, "at {at}");
        for w in task.passes.windows(2) {
            assert!(w[0].end_ns <= w[1].end_ns, "at {at}: passes end in order");
            assert!(w[1].start_ns < w[0].end_ns, "at {at}: the next pass started before this one ended");
        }
        for pass in 0..4 {
            let last = task.progress.iter().filter(|p| p.pass == pass).map(|p| p.fraction).fold(0.0, f64::max);
            assert!((last - 1.0).abs() < 1e-12, "at {at}: pass {pass} progress reaches 100%, not {last}");
        }
    }
    // Without overlap the passes follow one another.
    let fb = run(region_scan(4, None, None));
    let task = &fb.tasks[0];
    assert_eq!((task.passes.len(), task.blocks_delivered), (4, 4 * 3000));
    for w in task.passes.windows(2) {
        assert!(w[1].start_ns >= w[0].end_ns);
    }
}

#[test]
fn overlapping_passes_reject_what_they_cannot_do() {
    let disk = atlas();
    let bad = |spec: TaskSpec| match Freeblock::new(disk.clone(), FreeblockConfig { tasks: vec![spec], ..FreeblockConfig::default() }) {
        Err(e @ (FreeblockError::Application(_) | FreeblockError::Invalid { .. })) => e.to_string(),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("accepted"),
    };
    let scan = |passes, fraction, at| TaskSpec::Scan { block_bytes: 4096, passes, fraction, first_lbn: None, blocks: None, next_pass_at: Some(at), passes_in_flight: None };
    assert!(bad(scan(1, 1.0, 0.5)).contains("more than one pass"));
    assert!(bad(scan(3, 0.8, 0.5)).contains("fraction = 1"));
    assert!(bad(scan(3, 1.0, 1.5)).contains("between 0 and 1, not 1.5"));
    let in_flight = |at: Option<f64>, n| TaskSpec::Scan { block_bytes: 4096, passes: 0, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: at, passes_in_flight: Some(n) };
    assert!(bad(in_flight(Some(0.5), 1)).contains("at least 2"));
    assert!(bad(in_flight(None, 4)).contains("needs next_pass_at"));
    assert!(bad(TaskSpec::Scan { block_bytes: 4096, passes: 1, fraction: 0.0, first_lbn: None, blocks: None, next_pass_at: None, passes_in_flight: None }).contains("(0, 1], not 0"));
}
