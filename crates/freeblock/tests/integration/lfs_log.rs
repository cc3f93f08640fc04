//! The log-structured layout's log, off the engine: nothing acknowledged is ever lost, through
//! random writes, deletes, cleaning and crashes; the segment usage table balances; bad input is
//! refused with a clear error.

use std::collections::HashMap;

use freeblock::layout::lfs::{clean_foreground, clean_foreground_avoiding, Found, LfsConfig, LfsError, Log, LogIo};
use proptest::prelude::*;

/// A small log: 12 segments of 8 blocks (7 data), 64 logical blocks.
fn small() -> LfsConfig {
    LfsConfig { first_lbn: 0, segments: 12, segment_blocks: 8, block_sectors: 8, logical_blocks: 64, cache_blocks: 0, min_free: 2, clean_until: 4, checkpoint_every: 5 }
}

#[derive(Debug, Clone)]
enum Step {
    Write(u64),
    Delete(u64),
    Read(u64),
    Sync,
    Clean,
    /// Free cleaning's path: some of the live blocks of the cost-benefit victim, read "later"
    /// and moved one by one into the segment being filled.
    FreeClean(usize),
    /// Free writes' path (ours+FW): up to this many live blocks of the emptiest segment given
    /// slots of a reserved cleaning destination (one reserved first if none is).
    DestAdd(usize),
    /// Up to this many of the destination's slots reach the platters (in any order).
    DestWrite(usize),
    /// The destination's summary and the map's commit, once every slot is written.
    DestCommit,
    /// The destination given up.
    DestRelease,
    Crash,
}

/// A cleaning destination being written: the reserved segment, each slot's block (logical,
/// where it was read, its contents) and whether its write is on the platters.
#[derive(Debug, Default)]
struct Dest {
    segment: u32,
    slots: Vec<(u64, u64, u64, bool)>,
}

impl Dest {
    fn named(&self) -> Vec<Option<(u64, u64, u64)>> {
        self.slots.iter().map(|&(l, lbn, v, _)| Some((l, lbn, v))).collect()
    }

    /// Writes every slot still missing, then commits: what the policy's foreground closing does.
    fn close(mut self, log: &mut Log) {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if !slot.3 {
                log.write_slot(self.segment, i as u32, slot.2).unwrap();
                slot.3 = true;
            }
        }
        log.commit_segment(self.segment, &self.named()).unwrap();
    }
}

/// A segment write acknowledges everything done before it: every write and delete reaches
/// the disk with the first segment written after it.
fn acknowledge(log: &Log, flushes: &mut u64, latest: &HashMap<u64, Option<u64>>, acked: &mut HashMap<u64, Option<u64>>) {
    if log.flushes() != *flushes {
        *flushes = log.flushes();
        acked.clone_from(latest);
    }
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0u64..40).prop_map(Step::Write),
        2 => (0u64..40).prop_map(Step::Delete),
        3 => (0u64..40).prop_map(Step::Read),
        1 => Just(Step::Sync),
        1 => Just(Step::Clean),
        2 => (1usize..8).prop_map(Step::FreeClean),
        3 => (1usize..8).prop_map(Step::DestAdd),
        3 => (1usize..8).prop_map(Step::DestWrite),
        2 => Just(Step::DestCommit),
        1 => Just(Step::DestRelease),
        1 => Just(Step::Crash),
    ]
}

/// What a read of `l` finds.
fn value(log: &Log, l: u64) -> Option<u64> {
    match log.read(l).unwrap() {
        Found::Open(v) | Found::Disk { value: v, .. } => Some(v),
        Found::Unmapped => None,
    }
}

/// Keeps the log writable the way the policy does: a cleaning destination closed and the
/// foreground cleaner before free segments run short, a segment write when the one being
/// filled is full.
fn make_room_closing(log: &mut Log, dest: &mut Option<Dest>) {
    if log.free_segments() <= log.config().min_free {
        if let Some(d) = dest.take() {
            d.close(log);
        }
    }
    make_room(log);
}

/// [`make_room_closing`] without a destination.
fn make_room(log: &mut Log) {
    if log.free_segments() <= log.config().min_free {
        clean_foreground(log, &mut Vec::new()).unwrap();
    }
    if log.open_full() {
        log.flush().unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every read returns the latest write (before a crash) or the latest acknowledged one (a
    /// write is acknowledged when its segment is written); the usage table balances after
    /// every step.
    #[test]
    fn nothing_acknowledged_is_lost(steps in prop::collection::vec(step(), 1..400)) {
        let cfg = small();
        let mut log = Log::create(cfg).unwrap();
        // Latest contents (None: deleted) and what the disk has acknowledged.
        let mut latest: HashMap<u64, Option<u64>> = HashMap::new();
        let mut acked: HashMap<u64, Option<u64>> = HashMap::new();
        let mut flushes = log.flushes();
        let mut next = 1u64;
        let mut dest: Option<Dest> = None;
        for s in steps {
            match s {
                Step::Write(l) => {
                    make_room_closing(&mut log, &mut dest);
                    acknowledge(&log, &mut flushes, &latest, &mut acked);
                    log.append(l, next, false).unwrap();
                    latest.insert(l, Some(next));
                    next += 1;
                }
                Step::Delete(l) => {
                    log.delete(l).unwrap();
                    latest.insert(l, None);
                }
                Step::Read(l) => {
                    prop_assert_eq!(value(&log, l), latest.get(&l).copied().flatten(), "read of {}", l);
                }
                Step::Sync => {
                    make_room_closing(&mut log, &mut dest);
                    log.flush().unwrap();
                    acknowledge(&log, &mut flushes, &latest, &mut acked);
                }
                Step::Clean => {
                    make_room_closing(&mut log, &mut dest);
                    clean_foreground(&mut log, &mut Vec::new()).unwrap();
                    acknowledge(&log, &mut flushes, &latest, &mut acked);
                }
                Step::FreeClean(take) => {
                    if let Some(&victim) = log.cost_benefit(1, &|_| false).first() {
                        for (logical, lbn) in log.live_in(victim).into_iter().take(take) {
                            make_room_closing(&mut log, &mut dest);
                            acknowledge(&log, &mut flushes, &latest, &mut acked);
                            // A move never changes what a read returns.
                            log.relocate(logical, lbn).unwrap();
                        }
                    }
                }
                Step::DestAdd(take) => {
                    if dest.is_none() && log.free_segments() > log.config().min_free + 1 {
                        dest = log.reserve_segment().map(|segment| Dest { segment, slots: Vec::new() });
                    }
                    if let Some(d) = dest.as_mut() {
                        let room = log.config().data_blocks() as usize - d.slots.len();
                        if let Some(&victim) = log.least_live(1, &|_| false).first() {
                            for (logical, lbn) in log.live_in(victim).into_iter().take(take.min(room)) {
                                // A block already waiting (named twice) moves once.
                                d.slots.push((logical, lbn, log.value_at(lbn), false));
                            }
                        }
                    }
                }
                Step::DestWrite(k) => {
                    if let Some(d) = dest.as_mut() {
                        // From the back: the writes land in any order.
                        for (i, slot) in d.slots.iter_mut().enumerate().rev().filter(|(_, s)| !s.3).take(k) {
                            log.write_slot(d.segment, i as u32, slot.2).unwrap();
                            slot.3 = true;
                        }
                    }
                }
                Step::DestCommit => {
                    if dest.as_ref().is_some_and(|d| d.slots.iter().all(|s| s.3)) {
                        let d = dest.take().expect("checked");
                        let before = log.free_segments();
                        let moved = log.commit_segment(d.segment, &d.named()).unwrap();
                        prop_assert!(moved as usize <= d.slots.len());
                        // The destination is no longer reserved: counted free again unless it
                        // now holds blocks.
                        prop_assert_eq!(log.reserved_segments(), 0);
                        prop_assert!(log.free_segments() + u32::from(moved > 0) >= before);
                    }
                }
                Step::DestRelease => {
                    if let Some(d) = dest.take() {
                        log.release_segment(d.segment).unwrap();
                    }
                }
                Step::Crash => {
                    dest = None;
                    let (storage, media) = log.crash();
                    let (recovered, _) = Log::recover(cfg, storage, media).unwrap();
                    log = recovered;
                    latest = acked.clone();
                    flushes = log.flushes();
                }
            }
            log.check_usage().map_err(|e| TestCaseError::fail(e.to_string()))?;
            for (&l, &v) in &latest {
                prop_assert_eq!(value(&log, l), v, "logical block {} after a step", l);
            }
        }
    }
}

/// Fills a small log and writes a few segments.
fn filled() -> (LfsConfig, Log) {
    let cfg = small();
    let mut log = Log::create(cfg).unwrap();
    for i in 0..30u64 {
        make_room(&mut log);
        log.append(i % 20, 100 + i, false).unwrap();
    }
    log.flush().unwrap();
    (cfg, log)
}

#[test]
fn recovery_refuses_a_corrupt_segment_summary() {
    let (cfg, mut log) = filled();
    let seg = (0..cfg.segments).find(|&s| log.usage(s) > 0).unwrap();
    let summary = log.media_mut().summaries[seg as usize].as_mut().unwrap();
    summary[30] ^= 0xff;
    let (storage, media) = log.crash();
    let e = Log::recover(cfg, storage, media).unwrap_err();
    assert!(matches!(e, LfsError::CorruptSummary { segment, .. } if segment == seg), "{e}");
    let msg = e.to_string();
    assert!(msg.contains(&format!("segment {seg}'s summary")) && msg.contains("CRC"), "{msg}");
}

#[test]
fn recovery_refuses_a_summary_that_disagrees_with_the_map() {
    let (cfg, mut log) = filled();
    let seg = (0..cfg.segments).find(|&s| log.usage(s) > 0).unwrap();
    // A summary that is intact but describes another segment's blocks.
    let other = (0..cfg.segments).find(|&s| s != seg && log.usage(s) > 0).unwrap();
    let mut wrong = freeblock::layout::lfs::SegmentSummary::decode(log.media_mut().summaries[other as usize].as_ref().unwrap(), other).unwrap();
    wrong.segment = seg;
    wrong.slots.iter_mut().for_each(|l| *l = l.wrapping_add(1));
    log.media_mut().summaries[seg as usize] = Some(wrong.encode());
    let (storage, media) = log.crash();
    let e = Log::recover(cfg, storage, media).unwrap_err().to_string();
    assert!(e.contains(&format!("segment {seg}")) && e.contains("the map puts logical block"), "{e}");
}

#[test]
fn a_clean_recovery_checks_every_segment_with_live_data() {
    let (cfg, log) = filled();
    let live = log.live_blocks();
    let used = (0..cfg.segments).filter(|&s| log.usage(s) > 0).count() as u32;
    let (storage, media) = log.crash();
    let (back, report) = Log::recover(cfg, storage, media).unwrap();
    assert_eq!(report.segments_checked, used);
    assert_eq!(back.live_blocks(), live);
    back.check_usage().unwrap();
}

#[test]
fn a_segment_that_does_not_fit_the_disk_is_refused() {
    let disk = freeblock_disk::library::media("atlas10k").unwrap();
    // 64 MB segments, 400 of them: far past a 9 GB disk.
    let cfg = LfsConfig { segments: 400, segment_blocks: 16_384, ..LfsConfig::new(0, 400 << 20, 1000, 0) };
    let e = cfg.validate_for(&disk).unwrap_err().to_string();
    assert!(e.contains("past the disk's") && e.contains("16384 blocks"), "{e}");
    // A segment larger than the whole partition.
    let none = LfsConfig::new(0, 100_000, 1000, 0);
    let e = none.validate_for(&disk).unwrap_err().to_string();
    assert!(e.contains("no whole segment"), "{e}");
    // A summary that cannot fit its one block.
    let big = LfsConfig { segment_blocks: 1000, ..LfsConfig::new(0, 400 << 20, 1000, 0) };
    let e = big.validate().unwrap_err().to_string();
    assert!(e.contains("lfs.segment_blocks") && e.contains("more than one 4096-byte block"), "{e}");
}

#[test]
fn a_log_with_nothing_dead_to_clean_says_it_is_out_of_space() {
    let cfg = LfsConfig { logical_blocks: 100, ..small() };
    let mut log = Log::create(cfg).unwrap();
    let mut err = None;
    for l in 0..cfg.logical_blocks {
        if log.free_segments() <= cfg.min_free {
            if let Err(e) = clean_foreground(&mut log, &mut Vec::new()) {
                err = Some(e);
                break;
            }
        }
        if log.open_full() {
            log.flush().unwrap();
        }
        log.append(l, l, false).unwrap();
    }
    let e = err.expect("100 live blocks cannot fit 84 slots");
    assert!(matches!(e, LfsError::OutOfSpace { .. }), "{e}");
    assert!(e.to_string().contains("out of space"), "{e}");
}

/// The foreground cleaner passes over the free cleaner's segments while another has dead space,
/// and takes them when nothing else is left to gain.
#[test]
fn the_foreground_cleaner_avoids_the_free_cleaners_segments_while_it_can() {
    // Cleaning until all but two segments are free, so that it runs at once.
    let cfg = LfsConfig {
        segments: 14,
        clean_until: 12,
        ..small()
    };
    let mut log = Log::create(cfg).unwrap();
    // Segments 0, 1 and 2: seven blocks each, then most of segment 0 dead and one block of
    // segment 1, so cost-benefit prefers 0.
    for l in 0..21 {
        log.append(l, l + 1, false).unwrap();
        if log.open_full() {
            log.flush().unwrap();
        }
    }
    for l in [0, 1, 2, 3, 4, 5, 7] {
        log.delete(l).unwrap();
    }
    log.flush().unwrap();
    let best = log.cost_benefit(1, &|_| false)[0];
    assert_eq!(best, 0, "segment 0 is the emptiest");
    let mut out = Vec::new();
    clean_foreground_avoiding(&mut log, &mut out, &|s| s == best).unwrap();
    let read: Vec<u32> = out
        .iter()
        .filter_map(|io| {
            if let LogIo::CleanRead { segment } = io {
                Some(*segment)
            } else {
                None
            }
        })
        .collect();
    assert!(
        read.first().is_some_and(|&s| s != best),
        "cleaned {read:?}, avoiding {best}"
    );

    // Only the avoided segment has dead space: it is cleaned after all.
    let mut log = Log::create(cfg).unwrap();
    for l in 0..21 {
        log.append(l, l + 1, false).unwrap();
        if log.open_full() {
            log.flush().unwrap();
        }
    }
    log.delete(0).unwrap();
    log.flush().unwrap();
    let mut out = Vec::new();
    clean_foreground_avoiding(&mut log, &mut out, &|s| s == 0).unwrap();
    assert!(
        out.iter()
            .any(|io| matches!(io, LogIo::CleanRead { segment: 0 })),
        "{out:?}"
    );
    log.check_usage().unwrap();
}

/// The free cleaner's greedy choice (fewest live blocks) and cost-benefit disagree over an old,
/// fuller segment and a young, emptier one: cost-benefit takes the old one, greedy the young.
#[test]
fn least_live_takes_the_emptiest_segment_where_cost_benefit_takes_the_oldest() {
    let mut log = Log::create(small()).unwrap();
    // Eight segments of 7 blocks: segment 0 written first, segment 7 last.
    for l in 0..56 {
        log.append(l, l + 1, false).unwrap();
        if log.open_full() {
            log.flush().unwrap();
        }
    }
    // Segment 0 keeps 4 of 7, segment 7 keeps 2 of 7.
    for l in [0, 1, 2, 49, 50, 51, 52, 53] {
        log.delete(l).unwrap();
    }
    assert_eq!((log.live(0), log.live(7)), (4, 2));
    assert_eq!(log.cost_benefit(1, &|_| false), [0], "old and three-sevenths dead beats young and five-sevenths dead");
    assert_eq!(log.least_live(2, &|_| false), [7, 0]);
    assert_eq!(log.least_live(1, &|s| s == 7), [0], "an excluded segment is passed over");
    // Among equally live segments the older goes first.
    assert_eq!(log.least_live(3, &|s| s == 0 || s == 7), [1, 2, 3]);
}

#[test]
fn a_partial_flush_covers_its_holes() {
    // Three blocks appended, the middle one deleted while the segment is being filled: the
    // write holds two blocks but covers three slots from the segment's start.
    let mut log = Log::create(small()).unwrap();
    for l in 0..3u64 {
        log.append(l, 100 + l, false).unwrap();
    }
    log.delete(1).unwrap();
    let f = log.flush().unwrap().expect("a segment write");
    assert_eq!((f.blocks, f.extent), (2, 3));
    assert!(f.extent < small().data_blocks(), "a partial segment");
}

/// A cleaning destination moves its blocks only once every write is in: committing with a slot
/// not written is refused and changes nothing; once written, the map points there, reads
/// return the same contents, the segments they came from come free, and a crash keeps it all.
#[test]
fn a_cleaning_destination_commits_only_what_was_written() {
    let (cfg, mut log) = filled();
    let victim = log.least_live(1, &|_| false)[0];
    let live = log.live_in(victim);
    assert!(!live.is_empty());
    let values: Vec<u64> = live.iter().map(|&(_, lbn)| log.value_at(lbn)).collect();
    let free_before = log.free_segments();
    let dest = log.reserve_segment().unwrap();
    assert_eq!(log.free_segments(), free_before - 1, "a reserved segment is not counted free");
    assert_eq!(log.usage(dest), 0);
    let slots: Vec<Option<(u64, u64, u64)>> = live.iter().zip(&values).map(|(&(l, lbn), &v)| Some((l, lbn, v))).collect();
    // All but the last slot written.
    for (i, &v) in values.iter().enumerate().take(values.len() - 1) {
        log.write_slot(dest, i as u32, v).unwrap();
    }
    if values.len() > 1 || log.value_at(cfg.slot_lbn(dest, 0)) != values[0] {
        let e = log.commit_segment(dest, &slots).unwrap_err().to_string();
        assert!(e.contains("its write is missing"), "{e}");
        assert_eq!(log.reserved_segments(), 1);
        log.check_usage().unwrap();
    }
    // A segment write meanwhile passes the reserved segment over.
    log.append(63, 999, false).unwrap();
    let f = log.flush().unwrap().unwrap();
    assert_ne!(f.segment, dest);
    log.write_slot(dest, values.len() as u32 - 1, values[values.len() - 1]).unwrap();
    let moved = log.commit_segment(dest, &slots).unwrap();
    assert_eq!(moved as usize, live.len());
    assert_eq!(log.usage(victim), 0, "the segment the blocks came from is free");
    assert_eq!(log.usage(dest) as usize, live.len());
    log.check_usage().unwrap();
    let read = |log: &Log, l: u64| match log.read(l).unwrap() {
        Found::Disk { lbn, value } => (lbn, value),
        other => panic!("{other:?}"),
    };
    for (i, &(l, _)) in live.iter().enumerate() {
        assert_eq!(read(&log, l), (cfg.slot_lbn(dest, i as u32), values[i]));
    }
    let (storage, media) = log.crash();
    let (back, _) = Log::recover(cfg, storage, media).unwrap();
    back.check_usage().unwrap();
    for (i, &(l, _)) in live.iter().enumerate() {
        assert_eq!(read(&back, l), (cfg.slot_lbn(dest, i as u32), values[i]));
    }
    // A segment not reserved is refused.
    let mut back = back;
    assert!(back.write_slot(dest, 0, 1).unwrap_err().to_string().contains("not reserved"));
}
