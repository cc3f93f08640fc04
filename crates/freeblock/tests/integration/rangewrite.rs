//! Range writes and flex reads: nothing is lost through the block map, bad input gets clear errors,
//! the `1 − 1/k` mechanics hold on a real disk model, and paper 004's offset experiment behaves.

use std::collections::{BTreeMap, HashSet};

use freeblock::rangewrite::{
    flex_read, offer_equidistant, offer_ranges_near, range_write, run_offsets, select_write, theory_check_reads,
    theory_check_writes, BlockMap, BlockState, Candidates, MapConfig, OffsetExperiment, PhysRange, LayoutError,
    TheoryConfig, WriteRequest,
};
use freeblock_disk::{library, Disk, HeadState};
use proptest::prelude::*;

fn test_disk() -> Disk {
    Disk::new(library::get("test").unwrap()).unwrap()
}

/// Sectors per track on the test disk's first zone.
const SPT: u64 = 334;
/// Sectors per block in the property tests.
const BS: u64 = 2;
/// Logical blocks in the property tests (small, so overwrites are frequent).
const LOGICAL: u64 = 48;

/// How a write's candidates are made.
#[derive(Debug, Clone)]
enum Source {
    /// `k` equidistant candidates from the allocator.
    Equidistant(u32),
    /// Up to `n` free ranges near the head, aligned to `align` blocks.
    Ranges(usize, u64),
    /// Arbitrary sectors (often misaligned, outside or taken): must be refused cleanly or accepted.
    Raw(Vec<u64>),
}

#[derive(Debug, Clone)]
enum Step {
    Write {
        logical: u64,
        blocks: u64,
        source: Source,
        start: u64,
    },
    Trim {
        logical: u64,
        blocks: u64,
    },
    /// Offer `k` candidates and cancel the write.
    Cancel(u32),
    AddCopy {
        logical: u64,
        sector: u64,
    },
    DropCopy {
        logical: u64,
    },
    FlexRead {
        logical: u64,
    },
}

fn source() -> impl Strategy<Value = Source> {
    prop_oneof![
        (1u32..=6).prop_map(Source::Equidistant),
        (1usize..=4, 1u64..=3).prop_map(|(n, a)| Source::Ranges(n, a)),
        prop::collection::vec(0u64..(4 * SPT + 40), 0..4).prop_map(Source::Raw),
    ]
}

fn step(copies: bool) -> impl Strategy<Value = Step> {
    let base = prop_oneof![
        6 => (0..LOGICAL, 1u64..=4, source(), 0u64..50_000_000)
            .prop_map(|(logical, blocks, source, start)| Step::Write { logical, blocks, source, start }),
        1 => (0..LOGICAL, 1u64..=6).prop_map(|(logical, blocks)| Step::Trim { logical, blocks }),
        1 => (1u32..=4).prop_map(Step::Cancel),
    ];
    if copies {
        prop_oneof![
            6 => base,
            2 => (0..LOGICAL, 0u64..4 * SPT).prop_map(|(logical, sector)| Step::AddCopy { logical, sector }),
            1 => (0..LOGICAL).prop_map(|logical| Step::DropCopy { logical }),
            2 => (0..LOGICAL).prop_map(|logical| Step::FlexRead { logical }),
        ]
        .boxed()
    } else {
        base.boxed()
    }
}

/// A block map over the first four tracks of the test disk, in 2-sector blocks.
fn small_map() -> BlockMap {
    BlockMap::new(MapConfig { first_lbn: 0, sectors: 4 * SPT, block_sectors: BS, logical_blocks: LOGICAL }).unwrap()
}

/// Applies the steps; `model` is logical block → (version, copy count).
fn run_steps(steps: &[Step], copies: bool) -> Result<(), TestCaseError> {
    let disk = test_disk();
    let mut map = small_map();
    let mut model: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
    let mut head = HeadState::default();
    let mut scratch = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        match s {
            Step::Write { logical, blocks, source, start } => {
                let blocks = (*blocks).min(LOGICAL - logical);
                let candidates = match source {
                    Source::Equidistant(k) => match offer_equidistant(&mut map, &disk, head, *k, blocks) {
                        Ok((_, c)) => c,
                        Err(LayoutError::NoSpace { .. }) => continue,
                        Err(e) => return Err(TestCaseError::fail(format!("step {i}: {e}"))),
                    },
                    Source::Ranges(n, a) => match offer_ranges_near(&mut map, &disk, head, blocks, a * BS, *n) {
                        Ok(c) => c,
                        Err(LayoutError::NoSpace { .. }) => continue,
                        Err(e) => return Err(TestCaseError::fail(format!("step {i}: {e}"))),
                    },
                    Source::Raw(v) => Candidates::discrete(v.clone()),
                };
                let req = WriteRequest { logical: *logical, blocks, candidates };
                let before = map.clone();
                match range_write(&mut map, &disk, head, *start, &req, &mut scratch) {
                    Ok((sel, w)) => {
                        prop_assert!(req.candidates.contains_start(sel.lbn, blocks * BS));
                        for j in 0..blocks {
                            model.insert(logical + j, (w.version, 1));
                            let loc = map.read(logical + j).unwrap();
                            prop_assert_eq!(loc.copies, vec![sel.lbn + j * BS], "step {}: extent not contiguous", i);
                        }
                        head = sel.access.end_head;
                    }
                    Err(e) => {
                        prop_assert!(matches!(source, Source::Raw(_)), "step {}: allocator offer refused: {}", i, e);
                        prop_assert!(
                            matches!(
                                e,
                                LayoutError::EmptyCandidates { .. }
                                    | LayoutError::CandidateOutside { .. }
                                    | LayoutError::Misaligned { .. }
                                    | LayoutError::NotFree { .. }
                            ),
                            "step {}: unexpected error {}",
                            i,
                            e
                        );
                        prop_assert_eq!(&map, &before, "step {}: a refused write changed the map", i);
                    }
                }
            }
            Step::Trim { logical, blocks } => {
                let blocks = (*blocks).min(LOGICAL - logical);
                let expect: u64 =
                    (*logical..logical + blocks).filter_map(|l| model.remove(&l)).map(|(_, c)| c as u64).sum();
                prop_assert_eq!(map.trim(*logical, blocks).unwrap(), expect);
            }
            Step::Cancel(k) => {
                if let Ok((_, c)) = offer_equidistant(&mut map, &disk, head, *k, 1) {
                    prop_assert_eq!(map.stats().reserved, u64::from(*k));
                    prop_assert_eq!(map.release(&c, 1).unwrap(), u64::from(*k));
                }
            }
            Step::AddCopy { logical, sector } => {
                let lbn = sector / BS * BS;
                let free = map.state(lbn).unwrap() == BlockState::Free;
                match (map.add_copy(*logical, lbn), model.get_mut(logical)) {
                    (Ok(()), Some(entry)) => {
                        prop_assert!(free);
                        entry.1 += 1;
                    }
                    (Err(LayoutError::NotMapped { .. }), None) => {}
                    (Err(LayoutError::NotFree { .. }), Some(_)) => prop_assert!(!free),
                    (r, m) => {
                        return Err(TestCaseError::fail(format!("step {i}: add_copy gave {r:?} with model {m:?}")))
                    }
                }
            }
            Step::DropCopy { logical } => {
                if let (Some(loc), Some(entry)) = (map.read(*logical), model.get_mut(logical)) {
                    let r = map.drop_copy(*logical, loc.copies[0]);
                    prop_assert_eq!(r.is_ok(), entry.1 > 1);
                    if r.is_ok() {
                        entry.1 -= 1;
                    }
                }
            }
            Step::FlexRead { logical } => {
                if let Some(&(version, _)) = model.get(logical) {
                    let loc = map.read(*logical).unwrap();
                    prop_assert_eq!(loc.version, version);
                    let sel = flex_read(&map, &disk, head, 1_000_000, *logical, 1, &mut scratch).unwrap();
                    prop_assert!(loc.copies.contains(&sel.lbn));
                    let best = loc
                        .copies
                        .iter()
                        .map(|&c| disk.positioning(head, 1_000_000, c, freeblock_disk::Op::Read).unwrap())
                        .min();
                    prop_assert_eq!(Some(sel.positioning()), best);
                }
            }
        }
        // The invariants, after every step.
        map.check().map_err(|e| TestCaseError::fail(format!("step {i} ({s:?}): {e}")))?;
        let stats = map.stats();
        prop_assert_eq!(stats.reserved, 0, "step {}: an offer leaked reserved blocks", i);
        prop_assert_eq!(stats.free + stats.live, stats.total, "step {}: free + live != total", i);
        prop_assert_eq!(stats.mapped, model.len() as u64);
        prop_assert_eq!(stats.live, model.values().map(|&(_, c)| c as u64).sum::<u64>());
        let mut seen = HashSet::new();
        for l in 0..LOGICAL {
            match (map.read(l), model.get(&l)) {
                (None, None) => {}
                (Some(loc), Some(&(version, count))) => {
                    prop_assert_eq!(loc.version, version, "step {}: logical {} reads a stale version", i, l);
                    prop_assert_eq!(loc.copies.len(), count);
                    if !copies {
                        prop_assert_eq!(loc.copies.len(), 1, "step {}: logical {} has {:?}", i, l, loc.copies);
                    }
                    for c in loc.copies {
                        prop_assert!(seen.insert(c), "step {}: physical {} holds two blocks", i, c);
                        prop_assert_eq!(map.state(c).unwrap(), BlockState::Live { logical: l });
                    }
                }
                (got, want) => {
                    return Err(TestCaseError::fail(format!("step {i}: logical {l}: map {got:?}, model {want:?}")))
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Random writes with alternatives, overwrites, trims and cancelled offers: every logical block
    /// maps to exactly one live physical location, reads return the latest version, and
    /// free + live == total after every step.
    #[test]
    fn nothing_is_lost_through_the_block_map(steps in prop::collection::vec(step(false), 1..120)) {
        run_steps(&steps, false)?;
    }

    /// The same with replicas added and dropped, and flex reads choosing among them.
    #[test]
    fn copies_stay_consistent_and_flex_reads_pick_the_nearest(steps in prop::collection::vec(step(true), 1..120)) {
        run_steps(&steps, true)?;
    }
}

// ───────────────────────────────────────────────────────────────────────────── bad input ──

fn req(logical: u64, blocks: u64, candidates: Candidates) -> WriteRequest {
    WriteRequest { logical, blocks, candidates }
}

#[test]
fn bad_candidates_get_clear_errors() {
    let mut map = BlockMap::new(MapConfig::region(800, 800, 8)).unwrap();
    let e = map.write(&req(0, 1, Candidates::discrete(vec![])), 0).unwrap_err();
    assert_eq!(e.to_string(), "write of logical block 0: the candidate list is empty");
    let e = map.write(&req(0, 1, Candidates::ranges(vec![], 8)), 0).unwrap_err();
    assert!(matches!(e, LayoutError::EmptyCandidates { .. }));

    let e = map.write(&req(0, 1, Candidates::single(1_600)), 1_600).unwrap_err();
    assert_eq!(e.to_string(), "candidate sectors 1600..1608 lie outside the physical space 800..1600 (block map)");
    let e = map.write(&req(0, 2, Candidates::single(1_592)), 1_592).unwrap_err();
    assert!(matches!(e, LayoutError::CandidateOutside { lbn: 1_592, end: 1_608, .. }), "{e}");

    let e = map.write(&req(0, 1, Candidates::single(803)), 803).unwrap_err();
    assert_eq!(e.to_string(), "candidate start 803 is not a multiple of 8 sectors");
    let e = map.write(&req(0, 1, Candidates::ranges(vec![PhysRange::new(804, 16)], 8)), 808).unwrap_err();
    assert_eq!(e, LayoutError::Misaligned { what: "range start", value: 804, alignment: 8 });
    let e = map.write(&req(0, 1, Candidates::ranges(vec![PhysRange::new(808, 12)], 8)), 808).unwrap_err();
    assert_eq!(e, LayoutError::Misaligned { what: "extent length", value: 12, alignment: 8 });
    let e = map.write(&req(0, 1, Candidates::ranges(vec![PhysRange::new(808, 16)], 12)), 808).unwrap_err();
    assert_eq!(e, LayoutError::Misaligned { what: "alignment", value: 12, alignment: 8 });
    let e = map.write(&req(0, 2, Candidates::ranges(vec![PhysRange::new(808, 16)], 16)), 816).unwrap_err();
    assert_eq!(e.to_string(), "candidate range 808..824 holds no aligned start for 16 sectors (alignment 16)");

    map.write(&req(5, 1, Candidates::single(808)), 808).unwrap();
    let e = map.write(&req(6, 1, Candidates::discrete(vec![816, 808])), 816).unwrap_err();
    assert_eq!(e.to_string(), "candidate sector 808 is not free: it is live (logical block 5)");
    map.pin(PhysRange::new(1_584, 16)).unwrap();
    let e = map.write(&req(6, 1, Candidates::single(1_584)), 1_584).unwrap_err();
    assert_eq!(e, LayoutError::NotFree { lbn: 1_584, state: BlockState::Pinned });

    let e = map.write(&req(6, 1, Candidates::discrete(vec![816, 824])), 832).unwrap_err();
    assert_eq!(e.to_string(), "location 832 was not among the write's candidates");
    let e = map.write(&req(99, 2, Candidates::single(816)), 816).unwrap_err();
    assert_eq!(e.to_string(), "logical blocks 99..101 lie outside the logical space 0..100");
    let e = map.write(&req(6, 0, Candidates::single(816)), 816).unwrap_err();
    assert!(matches!(e, LayoutError::EmptyExtent { logical: 6 }));
    map.check().unwrap();
    assert_eq!(map.stats().live, 1);

    assert!(matches!(
        BlockMap::new(MapConfig::region(4, 800, 8)),
        Err(LayoutError::Misaligned { what: "region start", .. })
    ));
    assert!(matches!(
        BlockMap::new(MapConfig::region(0, 0, 0)),
        Err(LayoutError::Config { field: "block_sectors", .. })
    ));
}

#[test]
fn a_candidate_outside_the_disk_is_refused_before_any_change() {
    let disk = test_disk();
    let cap = disk.capacity();
    let mut scratch = Vec::new();
    let e = select_write(&disk, HeadState::default(), 0, &Candidates::discrete(vec![10, cap]), 1, &mut scratch)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("candidate sectors {cap}..{} lie outside the physical space 0..{cap} (disk)", cap + 1)
    );
    // A map larger than the disk cannot smuggle one through either.
    let mut map = BlockMap::new(MapConfig::region(0, cap / 2 * 2 + 2, 2)).unwrap();
    let before = map.clone();
    let r = range_write(
        &mut map,
        &disk,
        HeadState::default(),
        0,
        &req(0, 1, Candidates::single(cap / 2 * 2)),
        &mut scratch,
    );
    assert!(matches!(r, Err(LayoutError::CandidateOutside { what: "disk", .. })), "{r:?}");
    assert_eq!(map, before);
}

// ──────────────────────────────────────────────────────────────────────────────── theory ──

fn assert_close(rows: &[freeblock::rangewrite::TheoryRow], what: &str) {
    for r in rows {
        if r.k == 2 || r.k == 4 {
            let rel = (r.ours_ms - r.theory_ms).abs() / r.theory_ms;
            assert!(rel < 0.03, "{what} k={}: ours {:.3} ms, theory {:.3} ms", r.k, r.ours_ms, r.theory_ms);
            assert!((r.reduction_ours - r.reduction_theory).abs() < 0.02, "{what} {r:?}");
        }
    }
}

#[test]
fn k_equidistant_candidates_cut_rotational_latency_to_rev_over_2k() {
    let cfg = TheoryConfig { max_k: 4, trials: 12_000, ..TheoryConfig::default() };
    let rows = theory_check_writes(&cfg).unwrap();
    assert_eq!(rows.len(), 4);
    assert_close(&rows, "writes");
    assert!((rows[0].ours_ms - rows[0].theory_ms).abs() / rows[0].theory_ms < 0.03, "{:?}", rows[0]);
}

#[test]
fn flex_reads_over_k_copies_cut_rotational_latency_to_rev_over_2k() {
    let cfg = TheoryConfig { max_k: 4, trials: 12_000, ..TheoryConfig::default() };
    assert_close(&theory_check_reads(&cfg).unwrap(), "reads");
}

#[test]
fn theory_check_is_deterministic_and_rejects_impossible_parameters() {
    let cfg = TheoryConfig { max_k: 2, trials: 500, ..TheoryConfig::default() };
    assert_eq!(theory_check_writes(&cfg).unwrap(), theory_check_writes(&cfg).unwrap());
    let e = theory_check_writes(&TheoryConfig { max_k: 13, ..cfg.clone() }).unwrap_err();
    assert!(e.to_string().contains("do not fit on a 96-sector track"), "{e}");
    let e = theory_check_writes(&TheoryConfig { disk: "nope".into(), ..cfg }).unwrap_err();
    assert!(e.to_string().contains("unknown disk `nope`"), "{e}");
}

// ──────────────────────────────────────────────────────────────── paper 004, experiment 1 ──

#[test]
fn half_a_track_away_halves_rotational_latency() {
    let cfg = OffsetExperiment { writes: 3_000, offsets: vec![0, 24, 48, 72], ..OffsetExperiment::paper_exp1() };
    let report = run_offsets(&cfg).unwrap();
    assert_eq!(report.sectors_per_track, 96);
    assert!(report.baseline.utilization > 0.5 && report.baseline.utilization < 0.9, "{:?}", report.baseline);
    let row = |o: u64| report.rows.iter().find(|r| r.offset == o).unwrap();
    // An alternative at the same place changes nothing.
    assert!(row(0).lbn_offset.rot_reduction.abs() < 1e-9 && row(0).lbn_offset.alt_share == 0.0);
    // Same track, half a revolution: the mechanics' 50%.
    let half = row(48).same_track.unwrap();
    assert!((half.rot_reduction - 0.5).abs() < 0.05, "{half:?}");
    assert!(half.pos_reduction > 0.15 && half.pos_reduction < half.rot_reduction, "{half:?}");
    // A quarter track: 2·¼·¾ = 37.5%.
    assert!((row(24).same_track.unwrap().rot_reduction - 0.375).abs() < 0.05);
    // The paper's LBN offset crosses onto a skewed track half the time and gains less.
    assert!(row(48).lbn_offset.rot_reduction < half.rot_reduction);
    assert!(row(48).lbn_offset.rot_reduction > 0.2);
    assert_eq!(run_offsets(&cfg).unwrap(), report);
}

#[test]
fn offsets_that_do_not_fit_are_refused() {
    let cfg = OffsetExperiment { offsets: vec![10_000_000], ..OffsetExperiment::paper_exp1() };
    assert!(matches!(run_offsets(&cfg), Err(LayoutError::Config { field: "offsets", .. })));
    let cfg = OffsetExperiment { interarrival_ms: 0.0, ..OffsetExperiment::paper_exp1() };
    assert!(matches!(run_offsets(&cfg), Err(LayoutError::Config { field: "interarrival_ms", .. })));
}

/// Prints the full tables (`cargo test -p freeblock --test integration rangewrite:: -- --ignored --nocapture`).
#[test]
#[ignore = "prints the full experiment tables; slow"]
fn print_tables() {
    let cfg = TheoryConfig::default();
    for (what, rows) in
        [("writes", theory_check_writes(&cfg).unwrap()), ("flex reads", theory_check_reads(&cfg).unwrap())]
    {
        println!("theory check, {what}: k ours_ms theory_ms red_ours red_theory");
        for r in rows {
            println!(
                "{:2} {:7.3} {:7.3} {:6.1}% {:6.1}%",
                r.k,
                r.ours_ms,
                r.theory_ms,
                100.0 * r.reduction_ours,
                100.0 * r.reduction_theory
            );
        }
    }
    for report in [freeblock::rangewrite::experiment1().unwrap(), freeblock::rangewrite::experiment2().unwrap()] {
        let b = report.baseline;
        println!(
            "baseline: rot {:.3} pos {:.3} resp {:.3} util {:.3} (rev {:.3} ms)",
            b.rot_ms, b.pos_ms, b.response_ms, b.utilization, report.revolution_ms
        );
        println!("offset lbn_rot% lbn_pos% same_rot% same_pos% theory% geometric% lbn_alt_share");
        for r in &report.rows {
            let (sr, sp) =
                r.same_track.map_or((f64::NAN, f64::NAN), |s| (100.0 * s.rot_reduction, 100.0 * s.pos_reduction));
            println!(
                "{:4} {:6.1} {:6.1} {:6.1} {:6.1} {:6.1} {:6.1} {:5.2}",
                r.offset,
                100.0 * r.lbn_offset.rot_reduction,
                100.0 * r.lbn_offset.pos_reduction,
                sr,
                sp,
                100.0 * r.theory_rot_reduction,
                100.0 * r.geometric_rot_reduction,
                r.lbn_offset.alt_share
            );
        }
        if let Some(best) = report.best_lbn() {
            println!("best LBN offset {}: {:?}", best.offset, best.lbn_offset);
        }
        if let Some(best) = report.best_same_track() {
            println!("best same-track offset {}: {:?}", best.offset, best.same_track);
        }
    }
}

// ──────────────────────────────────────────────────── requests with alternatives in a simulation ──

mod simulated {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use freeblock::rangewrite::{
        local_vs_global, offer_equidistant_on_cylinder, offer_ranges_near, run_smallfile, simulate, BlockMap,
        CandidatePolicy, CandidateSearch, Candidates, IoRecord, IssueContext, LocalGlobalConfig, MapConfig, PhysRange,
        RangeSimConfig, RangeSimOutcome, LayoutError, ScriptedStreams, SelectionMode, SmallFileConfig, StreamIo,
        StreamWorkload, Variant, WriteRequest,
    };
    use freeblock::sched::SchedulerSpec;
    use freeblock_disk::{library, Disk, Op};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn c2247a() -> Arc<Disk> {
        library::media("hp_c2247a").unwrap()
    }

    fn quick_workload() -> SmallFileConfig {
        SmallFileConfig { transactions_per_stream: 30, ..SmallFileConfig::default() }
    }

    const SCHEDULERS: [SchedulerSpec; 3] = [SchedulerSpec::Fcfs, SchedulerSpec::Sstf, SchedulerSpec::Sptf];

    /// Replays the records in completion order against a model of where each logical block lives
    /// and checks: every I/O used one of its candidates; reads found the latest version where the
    /// latest write put it; the final map holds exactly what the last write of each mapped block
    /// wrote, and nothing is left reserved.
    fn check_run(out: &RangeSimOutcome, block_sectors: u64) {
        out.map.check().unwrap();
        let space = out.map.stats();
        assert_eq!(space.reserved, 0, "unchosen candidates were not all freed");
        assert_eq!(space.free + space.live + space.pinned, space.total);
        let mut model: BTreeMap<u64, (u64, u64)> = BTreeMap::new(); // logical → (version, lbn)
        let mut last_end = 0;
        for r in &out.records {
            assert!(r.end_ns >= last_end, "records are in completion order");
            last_end = r.end_ns;
            assert!(r.start_ns >= r.arrival_ns && r.end_ns > r.start_ns);
            assert_eq!(r.candidates[r.chosen_index], r.chosen_lbn, "request {}", r.id);
            assert!(r.candidates.contains(&r.chosen_lbn));
            match r.op {
                Op::Write => {
                    let v = r.version.unwrap();
                    for j in 0..r.blocks {
                        if let Some(&(old, _)) = model.get(&(r.logical + j)) {
                            assert!(v > old, "versions grow");
                        }
                        model.insert(r.logical + j, (v, r.chosen_lbn + j * block_sectors));
                    }
                }
                Op::Read => {
                    // A read of a block that was mapped before the run (initial files) has no
                    // write record; otherwise it must find the latest write, where it went.
                    if let Some(&(v, lbn)) = model.get(&r.logical) {
                        assert_eq!(r.version, Some(v), "request {} read a stale version", r.id);
                        assert_eq!(r.chosen_lbn, lbn, "request {} read the wrong place", r.id);
                    }
                }
            }
        }
        for (l, loc) in out.map.mapped() {
            assert_eq!(loc.copies.len(), 1);
            if let Some(&(v, lbn)) = model.get(&l) {
                assert_eq!((loc.version, loc.copies[0]), (v, lbn), "logical {l}");
            }
        }
    }

    #[test]
    fn small_file_runs_keep_the_block_map_consistent() {
        let disk = c2247a();
        let wl = quick_workload();
        for scheduler in SCHEDULERS {
            for mode in [SelectionMode::Local, SelectionMode::Global] {
                for policy in [
                    CandidatePolicy::NONE,
                    CandidatePolicy::Cylinder { k: 4 },
                    CandidatePolicy::Ranges { max_ranges: 3 },
                ] {
                    let sim = RangeSimConfig { scheduler, mode, keep_records: true, ..RangeSimConfig::default() };
                    let out = run_smallfile(&disk, &wl, policy, &sim).unwrap();
                    let what = format!("{scheduler} {mode} {policy}");
                    assert_eq!(out.report.operations, wl.transactions(), "{what}");
                    assert_eq!(out.records.len() as u64, out.report.requests, "{what}");
                    assert!(out.report.writes > 300 && out.report.reads > 200, "{what}: {:?}", out.report);
                    check_run(&out, wl.block_sectors);
                    let expect = match policy {
                        CandidatePolicy::Cylinder { k } => f64::from(k),
                        CandidatePolicy::Ranges { .. } => 4.0, // many aligned starts per range
                    };
                    assert!(
                        out.report.candidates_per_write >= expect - 1e-9,
                        "{what}: {}",
                        out.report.candidates_per_write
                    );
                    if policy == CandidatePolicy::NONE {
                        assert_eq!(out.report.moved_share, 0.0);
                    }
                }
            }
        }
    }

    #[test]
    fn same_seed_same_run_and_another_seed_another() {
        let disk = c2247a();
        let sim = RangeSimConfig {
            scheduler: SchedulerSpec::Sptf,
            mode: SelectionMode::Global,
            keep_records: true,
            ..RangeSimConfig::default()
        };
        let policy = CandidatePolicy::Cylinder { k: 8 };
        let a = run_smallfile(&disk, &quick_workload(), policy, &sim).unwrap();
        let b = run_smallfile(&disk, &quick_workload(), policy, &sim).unwrap();
        assert_eq!(a.report, b.report);
        assert_eq!(a.records, b.records);
        assert_eq!(a.map, b.map);
        let c = run_smallfile(&disk, &SmallFileConfig { seed: 1, ..quick_workload() }, policy, &sim).unwrap();
        assert_ne!(a.records, c.records);
    }

    #[test]
    fn pruned_search_makes_the_same_choices_as_exhaustive_in_a_whole_run() {
        let disk = c2247a();
        for scheduler in SCHEDULERS {
            for policy in [CandidatePolicy::Cylinder { k: 8 }, CandidatePolicy::Ranges { max_ranges: 4 }] {
                let run = |search| {
                    let sim = RangeSimConfig {
                        scheduler,
                        mode: SelectionMode::Global,
                        search,
                        keep_records: true,
                        ..RangeSimConfig::default()
                    };
                    run_smallfile(&disk, &quick_workload(), policy, &sim).unwrap()
                };
                let (pruned, exhaustive) = (run(CandidateSearch::SeekPruned), run(CandidateSearch::Exhaustive));
                assert_eq!(pruned.records, exhaustive.records, "{scheduler} {policy}");
                assert_eq!(pruned.map, exhaustive.map);
                assert_eq!(pruned.report.write_response, exhaustive.report.write_response);
                // Exhaustive computes every pending candidate; pruned far fewer.
                let (p, e) = (pruned.report.positionings_per_decision, exhaustive.report.positionings_per_decision);
                assert!(
                    (e - exhaustive.report.candidates_per_decision).abs() < 1e-9 || scheduler != SchedulerSpec::Sptf
                );
                if scheduler == SchedulerSpec::Sptf {
                    assert!(p * 2.0 < e, "{policy}: pruned {p:.1} vs exhaustive {e:.1} positionings per decision");
                }
            }
        }
    }

    #[test]
    fn fcfs_global_is_fcfs_local() {
        let disk = c2247a();
        let run = |mode| {
            let sim = RangeSimConfig {
                scheduler: SchedulerSpec::Fcfs,
                mode,
                keep_records: true,
                ..RangeSimConfig::default()
            };
            run_smallfile(&disk, &quick_workload(), CandidatePolicy::Cylinder { k: 4 }, &sim).unwrap()
        };
        let (l, g) = (run(SelectionMode::Local), run(SelectionMode::Global));
        assert_eq!(l.records, g.records);
        assert_eq!(l.report.write_response, g.report.write_response);
    }

    #[test]
    fn local_vs_global_table_is_complete_and_independent_of_threads() {
        let cfg = LocalGlobalConfig { threads: 1, ..LocalGlobalConfig::quick() };
        let one = local_vs_global(&cfg).unwrap();
        let two = local_vs_global(&LocalGlobalConfig { threads: 2, ..cfg.clone() }).unwrap();
        assert_eq!(one.rows, two.rows);
        assert_eq!(one.rows.len(), 3 * (1 + 2 * 3));
        for chunk in one.rows.chunks(7) {
            assert_eq!(chunk[0].variant, Variant::NoRangeWrites);
            assert_eq!(chunk[0].k, 1);
            assert_eq!(chunk[0].app_gain, 0.0);
            let ks: Vec<(Variant, u32)> = chunk[1..].iter().map(|r| (r.variant, r.k)).collect();
            assert_eq!(
                ks,
                vec![
                    (Variant::Local, 2),
                    (Variant::Global, 2),
                    (Variant::Local, 4),
                    (Variant::Global, 4),
                    (Variant::Local, 8),
                    (Variant::Global, 8)
                ]
            );
            for r in chunk {
                assert_eq!(r.report.operations, cfg.workload.transactions());
                assert!(r.write_p99_ms >= r.write_mean_ms * 0.5 && r.transactions_per_s > 0.0, "{r:?}");
                let expected = r.transactions_per_s / chunk[0].transactions_per_s - 1.0;
                assert!((r.app_gain - expected).abs() < 1e-12);
            }
        }
        let gl = one.global_vs_local();
        assert_eq!(gl.len(), 9);
        assert!(gl.iter().filter(|g| g.scheduler == "FCFS").all(|g| g.write_mean_reduction == 0.0));
        // With SPTF, weighing every candidate lets a write go wherever the head can reach first.
        assert!(gl.iter().filter(|g| g.scheduler == "SPTF").all(|g| g.write_mean_reduction > 0.0), "{gl:?}");
        let e = local_vs_global(&LocalGlobalConfig { candidates: vec![1], ..cfg.clone() }).unwrap_err();
        assert!(e.to_string().contains("at least 2"), "{e}");
        let e = local_vs_global(&LocalGlobalConfig { schedulers: vec![SchedulerSpec::Clook], ..cfg }).unwrap_err();
        assert!(e.to_string().contains("C-LOOK is not supported"), "{e}");
    }

    /// Random writes with alternatives (allocator offers and raw candidates), overwrites, reads and
    /// trims from several streams at once, each stream in its own logical blocks.
    struct RandomStreams {
        rngs: Vec<ChaCha8Rng>,
        left: Vec<u32>,
        per_stream: u64,
    }

    impl StreamWorkload for RandomStreams {
        fn streams(&self) -> u32 {
            self.rngs.len() as u32
        }

        fn next_io(
            &mut self,
            stream: u32,
            ctx: &mut IssueContext<'_>,
        ) -> freeblock::rangewrite::Result<Option<StreamIo>> {
            let s = stream as usize;
            let base = u64::from(stream) * self.per_stream;
            let rng = &mut self.rngs[s];
            loop {
                if self.left[s] == 0 {
                    return Ok(None);
                }
                self.left[s] -= 1;
                let logical = base + rng.gen_range(0..self.per_stream - 4);
                match rng.gen_range(0..10) {
                    0..=2 => {
                        let blocks = rng.gen_range(1..=4);
                        let candidates = match rng.gen_range(0..3) {
                            0 => {
                                offer_equidistant_on_cylinder(
                                    ctx.map,
                                    ctx.disk,
                                    ctx.head,
                                    rng.gen_range(1..=8),
                                    blocks,
                                )?
                                .1
                            }
                            1 => offer_ranges_near(ctx.map, ctx.disk, ctx.head, blocks, 8, rng.gen_range(1..=4))?,
                            _ => {
                                // Raw candidates that happen to be free (the simulation reserves them).
                                let starts: Vec<u64> = (0..rng.gen_range(1..=3))
                                    .map(|_| rng.gen_range(0..200_000u64) / 8 * 8)
                                    .filter(|&l| ctx.map.is_free(l, blocks * 8))
                                    .collect();
                                let mut distinct: Vec<u64> = Vec::new();
                                for l in starts {
                                    if distinct.iter().all(|&o| l + blocks * 8 <= o || o + blocks * 8 <= l) {
                                        distinct.push(l);
                                    }
                                }
                                if distinct.is_empty() {
                                    continue;
                                }
                                Candidates::discrete(distinct)
                            }
                        };
                        return Ok(Some(StreamIo::Write(WriteRequest { logical, blocks, candidates })));
                    }
                    3..=7 => {
                        // Read one mapped block (its copy is contiguous by itself).
                        if ctx.map.read(logical).is_some() {
                            return Ok(Some(StreamIo::Read { logical, blocks: 1 }));
                        }
                    }
                    _ => {
                        ctx.map.trim(logical, rng.gen_range(1..=4))?;
                    }
                }
            }
        }
    }

    #[test]
    fn random_writes_with_alternatives_lose_nothing() {
        let disk = c2247a();
        for seed in 0..6u64 {
            for scheduler in SCHEDULERS {
                let mode = if seed % 2 == 0 { SelectionMode::Global } else { SelectionMode::Local };
                let mut w = RandomStreams {
                    rngs: (0..6).map(|s| ChaCha8Rng::seed_from_u64(seed * 100 + s)).collect(),
                    left: vec![150; 6],
                    per_stream: 24,
                };
                let map = BlockMap::new(MapConfig::for_disk(&disk, 8)).unwrap();
                let sim = RangeSimConfig { scheduler, mode, keep_records: true, ..RangeSimConfig::default() };
                let out = simulate(Arc::clone(&disk), map, &mut w, &sim).unwrap();
                assert!(out.report.writes > 50 && out.report.reads > 20, "{:?}", out.report);
                check_run(&out, 8);
                // Every read found a block some write had put there.
                assert!(out.records.iter().filter(|r: &&IoRecord| r.op == Op::Read).all(|r| r.version.is_some()));
            }
        }
    }

    fn scripted(ios: Vec<StreamIo>) -> Result<RangeSimOutcome, LayoutError> {
        let disk = c2247a();
        // The map covers only the first 100,000 sectors of the disk.
        let map = BlockMap::new(MapConfig::region(0, 100_000, 8)).unwrap();
        let mut w = ScriptedStreams::new(vec![ios]);
        simulate(disk, map, &mut w, &RangeSimConfig::default())
    }

    fn write(logical: u64, blocks: u64, candidates: Candidates) -> StreamIo {
        StreamIo::Write(WriteRequest { logical, blocks, candidates })
    }

    #[test]
    fn bad_input_surfaces_through_the_simulation_with_clear_errors() {
        let ok = write(0, 1, Candidates::single(800));
        let err = |io: StreamIo| scripted(vec![ok.clone(), io]).unwrap_err().to_string();
        assert_eq!(
            err(write(4, 1, Candidates::discrete(vec![]))),
            "request 1 of stream 0: write of logical block 4: the candidate list is empty"
        );
        assert_eq!(
            err(write(4, 1, Candidates::discrete(vec![1_600, 100_000]))),
            "request 1 of stream 0: candidate sectors 100000..100008 lie outside the physical space 0..100000 (block map)"
        );
        assert_eq!(
            err(write(4, 1, Candidates::ranges(vec![PhysRange::new(1_604, 64)], 8))),
            "request 1 of stream 0: range start 1604 is not a multiple of 8 sectors"
        );
        assert_eq!(
            err(write(4, 1, Candidates::ranges(vec![PhysRange::new(1_600, 64)], 12))),
            "request 1 of stream 0: alignment 12 is not a multiple of 8 sectors"
        );
        assert_eq!(
            err(write(4, 1, Candidates::discrete(vec![1_600, 800]))),
            "request 1 of stream 0: candidate sector 800 is not free: it is live (logical block 0)"
        );
        assert_eq!(
            err(StreamIo::Read { logical: 9, blocks: 1 }),
            "request 1 of stream 0: logical block 9 is not mapped"
        );
        // A map reaching past the end of the disk cannot smuggle a candidate through either.
        let disk = c2247a();
        let cap = disk.capacity() / 8 * 8;
        let map = BlockMap::new(MapConfig::region(0, cap + 64, 8)).unwrap();
        let mut w = ScriptedStreams::new(vec![vec![write(0, 1, Candidates::discrete(vec![0, cap + 8]))]]);
        let e = simulate(disk, map, &mut w, &RangeSimConfig::default()).unwrap_err();
        assert!(
            matches!(&e, LayoutError::Request { index: 0, stream: 0, source } if matches!(**source, LayoutError::CandidateOutside { what: "disk", .. })),
            "{e}"
        );
        assert!(e.to_string().ends_with("(disk)"), "{e}");
    }

    #[test]
    fn a_read_racing_a_write_of_the_same_blocks_is_refused() {
        let disk = c2247a();
        let mut map = BlockMap::new(MapConfig::region(0, 100_000, 8)).unwrap();
        map.write(&WriteRequest { logical: 3, blocks: 2, candidates: Candidates::single(0) }, 0).unwrap();
        let mut w = ScriptedStreams::new(vec![
            vec![write(4, 1, Candidates::discrete(vec![800, 1_600]))],
            vec![StreamIo::Read { logical: 3, blocks: 2 }],
        ]);
        let e = simulate(disk, map, &mut w, &RangeSimConfig::default()).unwrap_err().to_string();
        assert_eq!(
            e,
            "request 1 of stream 1: workload: logical blocks 4..5 are being written by request 0 (stream 0) in flight; a read and a write of the same blocks must not overlap in time"
        );
    }
}

/// Prints the local-vs-global table (`cargo test -p freeblock --test integration rangewrite::print_local_vs_global -- --ignored --nocapture`).
#[test]
#[ignore = "prints the full local-vs-global table; slow"]
fn print_local_vs_global() {
    let t = std::time::Instant::now();
    let report = freeblock::rangewrite::local_vs_global(&freeblock::rangewrite::LocalGlobalConfig::default()).unwrap();
    println!("sched variant k | write mean p99 | read mean | run s | tx/s gain | pos rot moved evals util");
    for r in &report.rows {
        let p = &r.report;
        println!(
            "{:5} {:16} {} | {:7.2} {:7.2} | {:7.2} | {:6.2} | {:7.1} {:+6.1}% | {:5.2} {:5.2} {:4.2} {:5.1} seek {:.2} rot {:.2} xfer {:.2}",
            r.scheduler, r.variant.to_string(), r.k, r.write_mean_ms, r.write_p99_ms, r.read_mean_ms, r.run_time_s,
            r.transactions_per_s, 100.0 * r.app_gain, p.write_positioning_ms, p.write_rotational_ms, p.moved_share,
            p.positionings_per_decision, p.head_usage.seek, p.head_usage.rotational_latency, p.head_usage.transfer
        );
    }
    for g in report.global_vs_local() {
        println!(
            "{} k={} mean {:+.1}% p99 {:+.1}% tput {:+.1}%",
            g.scheduler,
            g.k,
            100.0 * g.write_mean_reduction,
            100.0 * g.write_p99_reduction,
            100.0 * g.throughput_gain
        );
    }
    println!("elapsed {:?}", t.elapsed());
}
