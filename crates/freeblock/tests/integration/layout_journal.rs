//! The persistent block map: a crash at any byte of the journal recovers the map as it was after
//! the last committed operation, with no physical block owned twice, and damage a crash cannot
//! explain is refused with an error naming the file and the place.

use freeblock::layout::journal::{
    DirStorage, DirtyRule, Journal, MapOp, MemStorage, RecoveryReport, Storage, StoreFile, JOURNAL_HEADER_BYTES,
    RECORD_FRAME_BYTES, SNAPSHOT_HEADER_BYTES, JOURNAL_BASE_BYTES, encode_sync_mark,
};
use freeblock::layout::{
    BlockMap, Candidates, LayoutError, MapConfig, MapSnapshot, PhysRange, SnapshotEntry, WriteRequest,
};
use proptest::prelude::*;

/// Sectors per block.
const BS: u64 = 4;
/// Physical blocks: `0..HOME` take writes, `HOME..AREA_END` is the rearrangement area copies go
/// to, `AREA_END..BLOCKS` is pinned and unpinned by another layer.
const BLOCKS: u64 = 64;
const HOME: u64 = 40;
const AREA_END: u64 = 56;
/// Logical blocks.
const LOGICAL: u64 = 40;

fn config() -> MapConfig {
    MapConfig { first_lbn: 0, sectors: BLOCKS * BS, block_sectors: BS, logical_blocks: LOGICAL }
}

fn lbn(block: u64) -> u64 {
    block * BS
}

/// One thing a rearrangement-style policy does, to be turned into map operations against the
/// map as it is (indices are taken modulo whatever exists).
#[derive(Debug, Clone)]
enum Act {
    /// Write `blocks` blocks from `logical` to one of up to `k` free home locations; `reserve`
    /// offers them first (a reserve per candidate); `ranges` offers free runs instead;
    /// `batch` commits the write together with setting the blocks dirty.
    Write {
        logical: u64,
        blocks: u64,
        k: usize,
        pick: usize,
        reserve: bool,
        ranges: bool,
        batch: bool,
    },
    /// Copy a mapped block into a free slot of the rearrangement area.
    CopyIn {
        nth: usize,
        slot: u64,
    },
    /// Drop one copy of a block that has several.
    DropCopy {
        nth: usize,
        which: usize,
    },
    SetDirty {
        nth: usize,
        dirty: bool,
    },
    Trim {
        logical: u64,
        blocks: u64,
    },
    Pin {
        at: u64,
        len: u64,
    },
    Unpin {
        at: u64,
        len: u64,
    },
    /// Offer a free home extent and cancel it.
    Offer {
        at: u64,
    },
    /// An operation the map refuses (it must not reach the journal).
    Refused {
        logical: u64,
        block: u64,
    },
    Checkpoint,
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        6 => (0..LOGICAL, 1..4u64, 1..5usize, any::<usize>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
            |(logical, blocks, k, pick, reserve, ranges, batch)| Act::Write { logical, blocks, k, pick, reserve, ranges, batch }
        ),
        3 => (any::<usize>(), HOME..AREA_END).prop_map(|(nth, slot)| Act::CopyIn { nth, slot }),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(nth, which)| Act::DropCopy { nth, which }),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(nth, dirty)| Act::SetDirty { nth, dirty }),
        1 => (0..LOGICAL, 1..4u64).prop_map(|(logical, blocks)| Act::Trim { logical, blocks }),
        1 => (AREA_END..BLOCKS, 1..4u64).prop_map(|(at, len)| Act::Pin { at, len }),
        1 => (AREA_END..BLOCKS, 1..6u64).prop_map(|(at, len)| Act::Unpin { at, len }),
        1 => (0..HOME).prop_map(|at| Act::Offer { at }),
        1 => (0..LOGICAL + 2, 0..BLOCKS + 2).prop_map(|(logical, block)| Act::Refused { logical, block }),
        1 => Just(Act::Checkpoint),
    ]
}

/// How the crash damages the journal.
#[derive(Debug, Clone)]
enum Crash {
    /// A crash during a commit: the journal cut at a byte (chosen as a fraction of its length),
    /// the synced mark that of the last commit before the cut.
    Truncate(u64),
    /// Flip a byte of the last record (the crash tore the last append, before its mark).
    Flip(u64, u8),
    /// Crash inside a final checkpoint, after the snapshot's rename and before the journal's,
    /// with the old journal cut at a byte.
    InCheckpoint(u64),
}

fn crash() -> impl Strategy<Value = Crash> {
    prop_oneof![
        3 => any::<u64>().prop_map(Crash::Truncate),
        2 => (any::<u64>(), 1..=255u8).prop_map(|(at, mask)| Crash::Flip(at, mask)),
        1 => any::<u64>().prop_map(Crash::InCheckpoint),
    ]
}

/// Free runs of blocks inside `lo..hi` (block indices).
fn free_blocks(map: &BlockMap, lo: u64, hi: u64) -> Vec<u64> {
    (lo..hi).filter(|&b| map.is_free(lbn(b), BS)).collect()
}

/// The commits `act` makes against `map` (each inner list is one commit).
fn commits_for(map: &BlockMap, act: &Act) -> Vec<Vec<MapOp>> {
    let mapped: Vec<(u64, Vec<u64>)> = map.mapped().map(|(l, loc)| (l, loc.copies)).collect();
    let nth = |n: usize| (!mapped.is_empty()).then(|| &mapped[n % mapped.len()]);
    match *act {
        Act::Write { logical, blocks, k, pick, reserve, ranges, batch } => {
            let blocks = blocks.min(LOGICAL - logical);
            let need = blocks * BS;
            let mut commits = Vec::new();
            let candidates = if ranges {
                let runs: Vec<PhysRange> =
                    map.free_runs(0, lbn(HOME)).into_iter().filter(|r| r.sectors >= need).take(k).collect();
                if runs.is_empty() {
                    return Vec::new();
                }
                Candidates::ranges(runs, BS)
            } else {
                let free = free_blocks(map, 0, HOME);
                let starts: Vec<u64> = free
                    .iter()
                    .copied()
                    .filter(|&b| b + blocks <= HOME && map.is_free(lbn(b), need))
                    .step_by(3)
                    .take(k)
                    .map(lbn)
                    .collect();
                if starts.is_empty() {
                    return Vec::new();
                }
                if reserve {
                    // Offer only non-overlapping candidates so each reserve succeeds.
                    let mut taken = Vec::new();
                    for &s in &starts {
                        if taken.iter().all(|&t: &u64| s + need <= t || t + need <= s) {
                            taken.push(s);
                            commits.push(vec![MapOp::Reserve { extent: PhysRange::new(s, need) }]);
                        }
                    }
                    Candidates::discrete(taken)
                } else {
                    Candidates::discrete(starts)
                }
            };
            let all: Vec<u64> = candidates.starts(need).collect();
            let chosen = all[pick % all.len()];
            let write = MapOp::Write { req: WriteRequest { logical, blocks, candidates }, chosen };
            if batch {
                let mut ops = vec![write];
                ops.extend((logical..logical + blocks).map(|l| MapOp::SetDirty { logical: l, dirty: true }));
                commits.push(ops);
            } else {
                commits.push(vec![write]);
            }
            commits
        }
        Act::CopyIn { nth: n, slot } => match nth(n) {
            Some(&(l, _)) if map.is_free(lbn(slot), BS) => vec![
                vec![MapOp::AddCopy { logical: l, lbn: lbn(slot) }],
                vec![MapOp::SetDirty { logical: l, dirty: slot % 2 == 0 }],
            ],
            _ => Vec::new(),
        },
        Act::DropCopy { nth: n, which } => match nth(n) {
            Some((l, copies)) if copies.len() > 1 => {
                vec![vec![MapOp::DropCopy { logical: *l, lbn: copies[which % copies.len()] }]]
            }
            _ => Vec::new(),
        },
        Act::SetDirty { nth: n, dirty } => {
            nth(n).map(|&(l, _)| vec![vec![MapOp::SetDirty { logical: l, dirty }]]).unwrap_or_default()
        }
        Act::Trim { logical, blocks } => {
            vec![vec![MapOp::Trim { logical, blocks: blocks.min(LOGICAL - logical) }]]
        }
        Act::Pin { at, len } => {
            let len = len.min(BLOCKS - at);
            if map.is_free(lbn(at), len * BS) {
                vec![vec![MapOp::Pin { extent: PhysRange::new(lbn(at), len * BS) }]]
            } else {
                Vec::new()
            }
        }
        Act::Unpin { at, len } => {
            vec![vec![MapOp::Unpin { extent: PhysRange::new(lbn(at), len.min(BLOCKS - at) * BS) }]]
        }
        Act::Offer { at } => {
            if map.is_free(lbn(at), BS) {
                let c = Candidates::single(lbn(at));
                vec![
                    vec![MapOp::Reserve { extent: PhysRange::new(lbn(at), BS) }],
                    vec![MapOp::Release { candidates: c, blocks: 1 }],
                ]
            } else {
                Vec::new()
            }
        }
        Act::Refused { logical, block } => vec![vec![MapOp::AddCopy { logical, lbn: lbn(block) }]],
        Act::Checkpoint => Vec::new(),
    }
}

/// A committed state: the journal's length and the map's snapshot just after the commit, and
/// the sequence number of its last record.
type Point = (u64, MapSnapshot, u64);

/// `storage` with its journal's synced mark set to `point` (the mark of the commit that
/// returned last before a crash).
fn with_mark(storage: &mut MemStorage, point: &Point) {
    set_mark(storage.journal.as_mut().unwrap(), point.0, point.2);
}

/// Both synced marks of journal bytes `j` set to `len` bytes, last sequence number `seq`.
fn set_mark(j: &mut [u8], len: u64, seq: u64) {
    for k in 0..2u64 {
        let (_, mark) = encode_sync_mark(len, seq);
        let at = (JOURNAL_BASE_BYTES + k * mark.len() as u64) as usize;
        j[at..at + mark.len()].copy_from_slice(&mark);
    }
}

/// Every record's `(start, end)` in a journal from `from`.
fn record_spans(j: &[u8], from: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = from as usize;
    while at + RECORD_FRAME_BYTES as usize <= j.len() {
        let n = u32::from_le_bytes(j[at..at + 4].try_into().unwrap()) as usize;
        let end = at + RECORD_FRAME_BYTES as usize + n;
        out.push((at as u64, end as u64));
        at = end;
    }
    out
}

fn all_dirty(s: &MapSnapshot) -> MapSnapshot {
    let mut s = s.clone();
    for e in &mut s.entries {
        e.dirty = true;
    }
    s
}

fn check_recovered(storage: &MemStorage, expected: &MapSnapshot) -> Result<RecoveryReport, TestCaseError> {
    let (map, report) = Journal::recover(storage, DirtyRule::Logged).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&map.to_snapshot(), expected);
    map.check().map_err(TestCaseError::fail)?;
    let st = map.stats();
    prop_assert_eq!(st.free + st.reserved + st.pinned + st.live, st.total);

    let (map_u, report_u) =
        Journal::recover(storage, DirtyRule::Uncertain).map_err(|e| TestCaseError::fail(e.to_string()))?;
    map_u.check().map_err(TestCaseError::fail)?;
    prop_assert_eq!(map_u.to_snapshot(), all_dirty(expected));
    prop_assert!(map_u.mapped().all(|(_, loc)| loc.dirty && !loc.copies.is_empty()));
    let clean = expected.entries.iter().filter(|e| !e.dirty).count() as u64;
    prop_assert_eq!(report_u.marked_dirty, clean);
    prop_assert_eq!(report.marked_dirty, 0);
    Ok(report)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn crash_anywhere_recovers_the_last_commit(acts in prop::collection::vec(act(), 1..70), crash in crash()) {
        let mut map = BlockMap::new(config()).unwrap();
        let mut journal = Journal::create(MemStorage::new(), &map).unwrap();
        let mut points: Vec<Point> = vec![(JOURNAL_HEADER_BYTES, map.to_snapshot(), 0)];
        for a in &acts {
            if matches!(a, Act::Checkpoint) {
                journal.checkpoint(&map).unwrap();
                points = vec![(JOURNAL_HEADER_BYTES, map.to_snapshot(), journal.committed_seq())];
                continue;
            }
            for commit in commits_for(&map, a) {
                let mut logged = 0;
                for op in commit {
                    let before = map.clone();
                    match journal.log(&mut map, op) {
                        Ok(_) => logged += 1,
                        // A refused operation changes nothing and is not logged.
                        Err(_) => prop_assert_eq!(&map, &before),
                    }
                }
                journal.commit().unwrap();
                if logged > 0 {
                    points.push((journal.journal_len(), map.to_snapshot(), journal.committed_seq()));
                }
            }
        }
        let len = journal.journal_len();
        prop_assert_eq!(len, journal.storage().journal.as_ref().unwrap().len() as u64);
        // Without a crash, recovery gives the map itself.
        let report = check_recovered(journal.storage(), &map.to_snapshot())?;
        prop_assert_eq!(report.bytes_dropped, 0);
        prop_assert_eq!(report.records_replayed, record_spans(journal.storage().journal.as_ref().unwrap(), JOURNAL_HEADER_BYTES).len() as u64);

        let mut storage = journal.storage().clone();
        let (expected, dropped) = match crash {
            Crash::Truncate(x) => {
                let cut = JOURNAL_HEADER_BYTES + x % (len - JOURNAL_HEADER_BYTES + 1);
                let p = points.iter().rev().find(|p| p.0 <= cut).unwrap();
                // The same cut under the mark of a later commit is damage, not a crash.
                if let Some(later) = points.iter().find(|q| q.0 > cut) {
                    let mut damaged = storage.clone();
                    damaged.journal.as_mut().unwrap().truncate(cut as usize);
                    with_mark(&mut damaged, later);
                    let e = Journal::recover(&damaged, DirtyRule::Logged).err().map(|e| e.to_string()).unwrap_or_default();
                    prop_assert!(e.contains("synced through byte"), "a cut at {} under the mark at {}: {}", cut, later.0, e);
                }
                storage.journal.as_mut().unwrap().truncate(cut as usize);
                with_mark(&mut storage, p);
                (p.1.clone(), cut - p.0)
            }
            Crash::Flip(x, mask) => {
                if points.len() < 2 {
                    (points[0].1.clone(), 0)
                } else {
                    let prev = &points[points.len() - 2];
                    let j = storage.journal.as_mut().unwrap();
                    let (start, end) = *record_spans(j, prev.0).last().unwrap();
                    j[(start + x % (end - start)) as usize] ^= mask;
                    // Under the last commit's own mark the flip is damage to a synced commit.
                    let e = Journal::recover(&storage, DirtyRule::Logged).err().map(|e| e.to_string()).unwrap_or_default();
                    prop_assert!(e.contains(&format!("at byte {start}")) && e.contains("damage"), "a flip in the last synced record: {}", e);
                    with_mark(&mut storage, prev);
                    (prev.1.clone(), len - prev.0)
                }
            }
            Crash::InCheckpoint(x) => {
                let mut old = storage.journal.clone().unwrap();
                old.truncate((JOURNAL_HEADER_BYTES + x % (len - JOURNAL_HEADER_BYTES + 1)) as usize);
                journal.checkpoint(&map).unwrap();
                storage = journal.storage().clone();
                storage.journal = Some(old);
                (map.to_snapshot(), 0)
            }
        };
        let report = check_recovered(&storage, &expected)?;
        if !matches!(crash, Crash::InCheckpoint(_)) {
            prop_assert_eq!(report.bytes_dropped, dropped);
        }

        // Opening recovers, checkpoints, and goes on: a further commit is recovered too.
        let (mut j2, mut m2, _) = Journal::open(storage, DirtyRule::Logged).unwrap();
        prop_assert_eq!(&m2.to_snapshot(), &expected);
        if let Some(b) = free_blocks(&m2, 0, HOME).first() {
            let req = WriteRequest { logical: 0, blocks: 1, candidates: Candidates::single(lbn(*b)) };
            j2.log(&mut m2, MapOp::Write { req, chosen: lbn(*b) }).unwrap();
            j2.commit().unwrap();
        }
        check_recovered(j2.storage(), &m2.to_snapshot())?;
    }
}

// ------------------------------------------------------------------------------------------------
// Damage a crash cannot explain: each is an error naming the file and the place.

/// A journal with three committed single-op records.
fn three_records() -> (Journal<MemStorage>, BlockMap) {
    let mut map = BlockMap::new(config()).unwrap();
    let mut j = Journal::create(MemStorage::new(), &map).unwrap();
    for (l, b) in [(1, 2), (2, 5), (3, 9)] {
        let req = WriteRequest { logical: l, blocks: 1, candidates: Candidates::single(lbn(b)) };
        j.log(&mut map, MapOp::Write { req, chosen: lbn(b) }).unwrap();
        j.commit().unwrap();
    }
    (j, map)
}

fn recover_err(s: &MemStorage) -> String {
    match Journal::recover(s, DirtyRule::Logged) {
        Ok(_) => panic!("recovery accepted damaged storage"),
        Err(e) => e.to_string(),
    }
}

fn journal_bytes(s: &mut MemStorage) -> &mut Vec<u8> {
    s.journal.as_mut().unwrap()
}

fn crc(parts: &[&[u8]]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

/// A snapshot file in the documented format.
fn snapshot_file(seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = b"FBMAPSNP".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    let c = crc(&[&out, payload]);
    out.extend_from_slice(&c.to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// A record in the documented format.
fn record(seq: u64, flags: u8, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u32).to_le_bytes();
    let mut out = len.to_vec();
    out.extend_from_slice(&crc(&[&len, &seq.to_le_bytes(), &[flags], payload]).to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.push(flags);
    out.extend_from_slice(payload);
    out
}

#[test]
fn the_format_is_as_documented() {
    let (j, map) = three_records();
    let s = j.storage();
    let snap = s.snapshot.as_ref().unwrap();
    let empty = BlockMap::new(config()).unwrap();
    assert_eq!(snap, &snapshot_file(0, &serde_json::to_vec(&empty.to_snapshot()).unwrap()));
    let jr = s.journal.as_ref().unwrap();
    let mut header = b"FBMAPJNL".to_vec();
    header.extend_from_slice(&2u32.to_le_bytes());
    header.extend_from_slice(&0u64.to_le_bytes());
    let c = crc(&[&header]);
    header.extend_from_slice(&c.to_le_bytes());
    assert_eq!(&jr[..24], &header[..]);
    // The synced marks: the last commit (sequence 3) in mark 3 mod 2 = 1, the one before in 0.
    let mark = |len: u64, seq: u64| {
        let mut m = len.to_le_bytes().to_vec();
        m.extend_from_slice(&seq.to_le_bytes());
        let c = crc(&[&m]);
        m.extend_from_slice(&c.to_le_bytes());
        m.extend_from_slice(&[0; 4]);
        m
    };
    assert_eq!(&jr[48..72], &mark(jr.len() as u64, 3)[..]);
    let op = MapOp::Write { req: WriteRequest { logical: 1, blocks: 1, candidates: Candidates::single(8) }, chosen: 8 };
    let first = record(1, 1, &serde_json::to_vec(&op).unwrap());
    assert_eq!(&jr[72..72 + first.len()], &first[..]);
    assert_eq!(SNAPSHOT_HEADER_BYTES, 32);
    let _ = map;
}

#[test]
fn bad_journal_header_is_an_error_at_its_byte() {
    let (j, _) = three_records();
    let mut s = j.storage().clone();
    journal_bytes(&mut s)[0] = b'X';
    let m = recover_err(&s);
    assert!(m.starts_with("memory:map.journal, byte 0: bad header: magic"), "{m}");

    let mut s = j.storage().clone();
    journal_bytes(&mut s)[8] = 9;
    let m = recover_err(&s);
    assert!(m.contains("memory:map.journal, byte 8: bad header: format version 9"), "{m}");

    let mut s = j.storage().clone();
    journal_bytes(&mut s)[12] ^= 1;
    let m = recover_err(&s);
    assert!(m.contains("memory:map.journal, byte 20: bad header: checksum mismatch"), "{m}");

    let mut s = j.storage().clone();
    journal_bytes(&mut s).truncate(10);
    let m = recover_err(&s);
    assert!(m.contains("memory:map.journal, byte 0: bad header: the file is 10 bytes"), "{m}");
}

#[test]
fn corrupt_middle_record_is_an_error_naming_it() {
    let (j, _) = three_records();
    let spans = record_spans(j.storage().journal.as_ref().unwrap(), JOURNAL_HEADER_BYTES);
    assert_eq!(spans.len(), 3);
    for at in [spans[1].0 + 2, spans[1].0 + 20, spans[1].1 - 1] {
        let mut s = j.storage().clone();
        journal_bytes(&mut s)[at as usize] ^= 0x40;
        let m = recover_err(&s);
        assert!(m.starts_with(&format!("memory:map.journal, record 2 at byte {}:", spans[1].0)), "flip at {at}: {m}");
        assert!(m.contains("in a commit synced before the crash") && m.contains("damage, not a torn tail"), "{m}");
        // Even after the synced mark (as if the last two commits had not returned), an intact
        // record after the damage says it is not a crash's.
        set_mark(journal_bytes(&mut s), spans[0].1, 1);
        let m = recover_err(&s);
        assert!(m.starts_with(&format!("memory:map.journal, record 2 at byte {}:", spans[1].0)), "flip at {at}: {m}");
        assert!(m.contains(&format!("an intact record follows at byte {}", spans[2].0)), "{m}");
    }
    // The same damage in the last record, after the synced mark, is a torn tail: dropped, and
    // reported. Under the mark of its own commit it is refused.
    let mut s = j.storage().clone();
    journal_bytes(&mut s)[spans[2].0 as usize + 20] ^= 0x40;
    let m = recover_err(&s);
    assert!(m.starts_with(&format!("memory:map.journal, record 3 at byte {}: checksum mismatch in a commit synced", spans[2].0)), "{m}");
    set_mark(journal_bytes(&mut s), spans[1].1, 2);
    let (_, r) = Journal::recover(&s, DirtyRule::Logged).unwrap();
    assert_eq!((r.records_replayed, r.bytes_dropped), (2, spans[2].1 - spans[2].0));
}

#[test]
fn sequence_gap_is_an_error_naming_the_record() {
    let (j, _) = three_records();
    let mut s = j.storage().clone();
    let spans = record_spans(s.journal.as_ref().unwrap(), JOURNAL_HEADER_BYTES);
    journal_bytes(&mut s).drain(spans[1].0 as usize..spans[1].1 as usize);
    // Under its synced mark the journal is too short; with the mark lowered, the gap shows.
    assert!(recover_err(&s).contains("cut short"));
    set_mark(journal_bytes(&mut s), JOURNAL_HEADER_BYTES, 0);
    let m = recover_err(&s);
    assert_eq!(
        m,
        format!("memory:map.journal, record 2 at byte {}: sequence gap: sequence number 3, expected 2", spans[1].0)
    );
}

#[test]
fn undecodable_or_refused_records_are_errors() {
    let (j, _) = three_records();
    let end = j.journal_len();
    let mut s = j.storage().clone();
    journal_bytes(&mut s).extend(record(4, 1, b"{\"op\":\"defragment\"}"));
    let m = recover_err(&s);
    assert!(
        m.starts_with(&format!("memory:map.journal, record 4 at byte {end}: the operation does not decode")),
        "{m}"
    );

    let mut s = j.storage().clone();
    journal_bytes(&mut s).extend(record(4, 2, b"{}"));
    assert!(recover_err(&s).contains("unknown flags 0x02"));

    // Intact, but the map refuses it: logical block 1 lives at block 2, so block 5 is taken.
    let op = MapOp::AddCopy { logical: 1, lbn: lbn(5) };
    let mut s = j.storage().clone();
    journal_bytes(&mut s).extend(record(4, 1, &serde_json::to_vec(&op).unwrap()));
    let e = Journal::recover(&s, DirtyRule::Logged).unwrap_err();
    assert!(matches!(e, LayoutError::Replay { record: 4, .. }));
    let m = e.to_string();
    assert!(
        m.starts_with(&format!(
            "memory:map.journal, record 4 at byte {end}: replaying add_copy of logical block 1 at sector 20 failed"
        )),
        "{m}"
    );
}

#[test]
fn truncated_or_damaged_snapshot_is_an_error() {
    let (j, _) = three_records();
    let full = j.storage().snapshot.clone().unwrap();

    let mut s = j.storage().clone();
    s.snapshot.as_mut().unwrap().truncate(full.len() - 5);
    let m = recover_err(&s);
    let have = full.len() as u64 - 5 - SNAPSHOT_HEADER_BYTES;
    assert_eq!(
        m,
        format!(
            "memory:map.snapshot, byte {}: truncated snapshot: the header promises {} payload bytes, the file holds {have}",
            full.len() - 5,
            have + 5
        )
    );

    let mut s = j.storage().clone();
    s.snapshot.as_mut().unwrap().truncate(20);
    assert!(recover_err(&s).contains("memory:map.snapshot, byte 0: truncated snapshot: the file is 20 bytes"));

    let mut s = j.storage().clone();
    s.snapshot.as_mut().unwrap()[40] ^= 1;
    assert!(recover_err(&s).contains("memory:map.snapshot, byte 28: snapshot checksum mismatch"));

    let mut s = j.storage().clone();
    s.snapshot.as_mut().unwrap()[3] = 0;
    assert!(recover_err(&s).contains("memory:map.snapshot, byte 0: bad header: magic"));

    let mut s = j.storage().clone();
    s.snapshot = None;
    assert!(recover_err(&s).contains("memory:map.snapshot, byte 0: the snapshot does not exist"));
}

#[test]
fn snapshot_with_a_block_owned_twice_is_refused() {
    let snap = MapSnapshot {
        config: config(),
        next_version: 3,
        entries: vec![
            SnapshotEntry { logical: 4, version: 1, copies: vec![lbn(7)], dirty: false },
            SnapshotEntry { logical: 6, version: 2, copies: vec![lbn(50), lbn(7)], dirty: true },
        ],
        reserved: vec![],
        pinned: vec![],
    };
    let mut s = MemStorage::new();
    s.snapshot = Some(snapshot_file(0, &serde_json::to_vec(&snap).unwrap()));
    let m = recover_err(&s);
    assert_eq!(
        m,
        "memory:map.snapshot, byte 32: invalid map snapshot: entry 1 (logical block 6): physical block at \
         sector 28 is owned twice: logical block 4 holds it too"
    );
    // A reserved extent over live data and a version from the future, likewise.
    let mut bad = snap.clone();
    bad.entries[1].copies = vec![lbn(50)];
    bad.pinned = vec![PhysRange::new(lbn(49), 2 * BS)];
    s.snapshot = Some(snapshot_file(0, &serde_json::to_vec(&bad).unwrap()));
    assert_eq!(
        recover_err(&s),
        "memory:map.snapshot, byte 32: invalid map snapshot: pinned extent 0 (sectors 196..204): the block at \
         sector 200 is live (logical block 6)"
    );
    bad.pinned.clear();
    bad.entries[0].version = 3;
    s.snapshot = Some(snapshot_file(0, &serde_json::to_vec(&bad).unwrap()));
    assert!(recover_err(&s).contains("entry 0 (logical block 4): version 3 is not below next_version 3"));
    // Unknown fields are refused too.
    let mut v: serde_json::Value = serde_json::to_value(&snap).unwrap();
    v["extra"] = serde_json::json!(1);
    s.snapshot = Some(snapshot_file(0, &serde_json::to_vec(&v).unwrap()));
    assert!(recover_err(&s).contains("byte 32: snapshot payload does not decode"));
}

#[test]
fn journal_newer_than_its_snapshot_is_refused() {
    let (mut j, mut map) = three_records();
    let old_snapshot = j.storage().snapshot.clone();
    j.checkpoint(&map).unwrap();
    let req = WriteRequest { logical: 7, blocks: 1, candidates: Candidates::single(lbn(30)) };
    j.log(&mut map, MapOp::Write { req, chosen: lbn(30) }).unwrap();
    j.commit().unwrap();
    let mut s = j.storage().clone();
    s.snapshot = old_snapshot;
    let m = recover_err(&s);
    assert!(m.starts_with("memory:map.journal, byte 12: the journal follows snapshot sequence 3"), "{m}");
}

#[test]
fn directory_storage_survives_a_torn_append() {
    let dir = std::env::temp_dir().join(format!("freeblock-journal-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut map = BlockMap::new(config()).unwrap();
    let mut j = Journal::create(DirStorage::new(&dir).unwrap(), &map).unwrap();
    let commit = |j: &mut Journal<DirStorage>, map: &mut BlockMap, op: MapOp| {
        j.log(map, op).unwrap();
        j.commit().unwrap();
    };
    let w = |l: u64, b: u64| MapOp::Write {
        req: WriteRequest { logical: l, blocks: 1, candidates: Candidates::single(lbn(b)) },
        chosen: lbn(b),
    };
    commit(&mut j, &mut map, w(1, 3));
    commit(&mut j, &mut map, MapOp::AddCopy { logical: 1, lbn: lbn(45) });
    j.checkpoint(&map).unwrap();
    commit(&mut j, &mut map, MapOp::SetDirty { logical: 1, dirty: true });
    let committed = map.to_snapshot();
    let path = dir.join("map.journal");
    let marks_before = std::fs::read(&path).unwrap()[24..72].to_vec();
    commit(&mut j, &mut map, w(2, 4));
    drop(j);
    assert!(!dir.join("map.snapshot.tmp").exists() && !dir.join("map.journal.tmp").exists());

    // Tear the last append: a crash before its synced mark was written.
    let len = std::fs::metadata(&path).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(len - 7).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&file, &marks_before, 24).unwrap();
    drop(file);
    let storage = DirStorage::new(&dir).unwrap();
    let (m, r) = Journal::recover(&storage, DirtyRule::Logged).unwrap();
    assert_eq!(m.to_snapshot(), committed);
    assert_eq!((r.records_replayed, r.snapshot_seq), (1, 2));
    assert!(r.bytes_dropped > 0);

    // Open, go on, recover again.
    let (mut j, mut m, _) = Journal::open(storage, DirtyRule::Uncertain).unwrap();
    assert!(m.is_dirty(1));
    commit(&mut j, &mut m, w(3, 10));
    let (again, _) = Journal::recover(j.storage(), DirtyRule::Logged).unwrap();
    assert_eq!(again.to_snapshot(), m.to_snapshot());

    // Errors name the path.
    std::fs::write(&path, b"not a journal at all, no").unwrap();
    let e = Journal::recover(j.storage(), DirtyRule::Logged).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}, byte 0: bad header", path.display())), "{e}");
    assert_eq!(j.storage().describe(StoreFile::Journal), path.display().to_string());
    drop(j);
    std::fs::remove_dir_all(&dir).unwrap();
}
