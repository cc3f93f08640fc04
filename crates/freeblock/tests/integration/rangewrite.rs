//! Range writes and flex reads: nothing is lost through the block map, bad input gets clear errors,
//! and requests with alternatives keep the map consistent inside a simulation. (The `1 − 1/k`
//! theory check, paper 004's offset experiment and the small-file runs are tested with the
//! reproduction: `crates/freeblock-repro/tests/integration/range_writes.rs`.)

use std::collections::{BTreeMap, HashSet};

use freeblock::rangewrite::{
    flex_read, offer_equidistant, offer_ranges_near, range_write, select_write, BlockMap, BlockState, Candidates,
    LayoutError, MapConfig, PhysRange, WriteRequest,
};
use freeblock_disk::{library, Disk, HeadState};
use proptest::prelude::*;

/// The schedulers and the record check shared with the range-writes reproduction's tests.
#[path = "../support/range_records.rs"]
mod range_records;

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

// ──────────────────────────────────────────────────── requests with alternatives in a simulation ──

mod simulated {
    use std::sync::Arc;

    use freeblock::rangewrite::{
        offer_equidistant_on_cylinder, offer_ranges_near, simulate, BlockMap, Candidates, IoRecord, IssueContext,
        LayoutError, MapConfig, PhysRange, RangeSimConfig, RangeSimOutcome, ScriptedStreams, SelectionMode, StreamIo,
        StreamWorkload, WriteRequest,
    };
    use freeblock_disk::{library, Disk, Op};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::range_records::{check_run, SCHEDULERS};

    fn c2247a() -> Arc<Disk> {
        library::media("hp_c2247a").unwrap()
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
