//! `freeblock check STORE`: verifies a stopped server's store offline, and with `--repair`
//! fixes what can be fixed.
//!
//! ```text
//!  STORE.layout.json ─► which disk and layout ─► the store's size
//!  STORE.map.snapshot + STORE.map.journal ─► replay (the policy's own recovery) ─► the map:
//!        no physical block owned twice · FS2: every replica's bytes equal its primary's
//!  STORE.sums ─► every block with a checksum: its bytes' crc matches
//! ```
//!
//! | finding | kind | `--repair` |
//! |---|---|---|
//! | no metadata, wrong size, another disk, a map that does not replay or fit the layout | problem | — (reported) |
//! | LFS: a segment holding live blocks whose summary in the store is missing, damaged or names other blocks | problem | — (reported with the segment) |
//! | a block whose bytes do not match its checksum | problem | — (the data is damaged; reported with its block) |
//! | a zeroed (no checksum) entry for a block holding data, in a store the server created | problem | — (the checksum is lost; reported with its block and the entry's bytes) |
//! | an FS2 replica whose bytes differ from its primary | problem | the replica is dropped from the map (journalled) |
//! | a torn journal tail, records of a commit that never finished | recoverable | the journal is rewritten without them |
//! | a checksum being written when the server was killed | recoverable | the bytes' crc is recorded |
//!
//! *Recoverable* findings are what a crash leaves by design; the server's own start deals with
//! them the same way, so they do not make the check fail. A *problem* does, unless repaired.

use std::io::Read as _;
use std::path::Path;

use freeblock::experiment::LayoutSpec;
use freeblock::layout::journal::{DirStorage, DirtyRule, Journal, MapOp, Storage, StoreFile};
use freeblock::layout::BlockMap;

use crate::scrub::{read_block, Checksums, SumEntry, SCRUB_BLOCK};
use crate::store::{beside, Store, StoreMeta};

/// One thing the check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What, naming the file, block or sector.
    pub what: String,
    /// A crash leaves it by design (the server's start handles it): not a failure.
    pub recoverable: bool,
    /// `--repair` fixed it.
    pub repaired: bool,
}

/// What the check looked at and found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// What was verified, one line each.
    pub checked: Vec<String>,
    /// What is wrong or was left by a crash.
    pub findings: Vec<Finding>,
    /// Logical blocks with a copy away from home (rearranged, written by range writes, or FS2
    /// replicas and moved primaries).
    pub moved_blocks: u64,
    /// Copies whose bytes were compared with their primary's.
    pub copies_compared: u64,
    /// Blocks whose checksum was verified.
    pub sums_verified: u64,
}

impl CheckReport {
    /// Problems not repaired: the check fails when there is any.
    #[must_use]
    pub fn unrepaired(&self) -> usize {
        self.findings.iter().filter(|f| !f.recoverable && !f.repaired).count()
    }

    /// True when nothing but what a crash leaves by design was found (or all was repaired).
    #[must_use]
    pub fn clean(&self) -> bool {
        self.unrepaired() == 0
    }

    fn problem(&mut self, what: String) {
        self.findings.push(Finding { what, recoverable: false, repaired: false });
    }

    fn text(&self) -> String {
        let mut out = String::new();
        for c in &self.checked {
            out.push_str(&format!("ok: {c}\n"));
        }
        for f in &self.findings {
            let kind = match (f.recoverable, f.repaired) {
                (_, true) => "repaired",
                (true, false) => "recoverable",
                (false, false) => "PROBLEM",
            };
            out.push_str(&format!("{kind}: {}\n", f.what));
        }
        out
    }
}

impl std::fmt::Display for CheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// Checks the store at `store` (the server must not be running), repairing what it can when
/// `repair` is set. Errors opening the files are findings, so the report says everything found.
#[must_use]
pub fn check_store(store: &Path, repair: bool) -> CheckReport {
    let mut r = CheckReport::default();
    let meta = match StoreMeta::read(store) {
        Ok(Some(m)) => m,
        Ok(None) => {
            r.problem(format!("{}: missing: not a store made by freeblock serve (or made before it kept one), so there is nothing to check it against", beside(store, "layout.json").display()));
            return r;
        }
        Err(e) => {
            r.problem(e.to_string());
            return r;
        }
    };
    let size = match std::fs::metadata(store) {
        Ok(m) => m.len(),
        Err(e) => {
            r.problem(format!("{}: {e}", store.display()));
            return r;
        }
    };
    if size != meta.store_bytes() {
        r.problem(format!("{}: {size} bytes, but {} has {} sectors of {} bytes ({} bytes)", store.display(), meta.disk, meta.disk_sectors, meta.sector_bytes, meta.store_bytes()));
        return r;
    }
    r.checked.push(format!("{}: {size} bytes, disk {}, layout {}", store.display(), meta.disk, meta.layout.as_ref().map_or("none (byte i of the export is byte i of the store)".into(), |l| serde_json::to_string(l).unwrap_or_default())));
    let (file, _) = match Store::open(store, &meta) {
        Ok(s) => s,
        Err(e) => {
            r.problem(e.to_string());
            return r;
        }
    };
    if let Some(spec) = &meta.layout {
        check_map(store, &meta, spec, &file, repair, &mut r);
    }
    check_sums(store, &meta, &file, repair, &mut r);
    r
}

/// The layout's map: it replays, fits the layout, owns no block twice; FS2's copies equal.
fn check_map(store: &Path, meta: &StoreMeta, spec: &LayoutSpec, file: &Store, repair: bool, r: &mut CheckReport) {
    let files = match DirStorage::beside(store) {
        Ok(f) => f,
        Err(e) => return r.problem(e.to_string()),
    };
    let snapshot = files.path(StoreFile::Snapshot);
    match files.read(StoreFile::Snapshot) {
        Ok(Some(_)) => {}
        Ok(None) => return r.problem(format!("{}: missing: the layout's map is gone, so where the blocks are is unknown", snapshot.display())),
        Err(e) => return r.problem(e.to_string()),
    }
    // A snapshot without its journal replays as a clean, empty log: it is not.
    if let Err(e) = crate::placement::read_journal(&files) {
        return r.problem(e.to_string());
    }
    let rule = match spec {
        LayoutSpec::Rearrange(_) => DirtyRule::Uncertain,
        _ => DirtyRule::Logged,
    };
    let (map, rec) = match Journal::recover(&files, rule) {
        Ok(x) => x,
        Err(e) => return r.problem(format!("the map does not replay: {e}")),
    };
    if let Err(e) = map.check() {
        return r.problem(format!("the recovered map breaks its invariants: {e}"));
    }
    let disk = match freeblock_disk::library::load(&meta.disk).and_then(|s| freeblock_disk::Disk::new(s.without_cache())) {
        Ok(d) => d,
        Err(e) => return r.problem(format!("disk {}: {e}", meta.disk)),
    };
    // The policy's own recovery: the map fits this layout (area, block size, FS2's rules).
    let mem = match crate::placement::read_journal(&files) {
        Ok(Some(m)) => m,
        Ok(None) => return,
        Err(e) => return r.problem(e.to_string()),
    };
    match crate::placement::recover_policy(&disk, spec, mem, file) {
        Some(Err(e)) => return r.problem(format!("the recovered map does not fit the layout: {}", crate::placement::naming_files(e, &files))),
        // LFS's recovery checked every segment holding live data against its summary.
        Some(Ok(p)) if matches!(spec, LayoutSpec::Lfs(_)) => {
            let live = (*p).as_any().downcast_ref::<freeblock::layout::lfs::LfsPolicy>().map_or(0, |l| (0..l.log().config().segments).filter(|&s| l.log().usage(s) > 0).count());
            r.checked.push(format!("LFS: {live} segments holding live blocks, each block in the slot its segment's summary (read from the store) names"));
        }
        _ => {}
    }
    let s = map.stats();
    r.checked.push(format!(
        "map: snapshot at sequence {}, {} journal records replayed; {} logical blocks mapped to {} live physical blocks, none owned twice",
        rec.snapshot_seq, rec.records_replayed, s.mapped, s.live
    ));
    if rec.bytes_dropped > 0 || rec.uncommitted_dropped > 0 {
        r.findings.push(Finding {
            what: format!("{}: a torn tail of {} bytes ({} records of an unfinished commit) after the last commit; recovery drops it", files.path(StoreFile::Journal).display(), rec.bytes_dropped, rec.uncommitted_dropped),
            recoverable: true,
            repaired: false,
        });
    }
    let bb = spec.block_sectors() * meta.sector_bytes;
    let mut drop: Vec<MapOp> = Vec::new();
    match spec {
        LayoutSpec::Fs2(c) => {
            let (mut a, mut b) = (vec![0u8; bb as usize], vec![0u8; bb as usize]);
            for (logical, loc) in map.mapped() {
                let primary = loc.copies[0];
                r.moved_blocks += u64::from(loc.copies.len() > 1 || primary != logical * c.block_sectors);
                if loc.copies.len() < 2 {
                    continue;
                }
                if let Err(e) = file.read(primary * meta.sector_bytes, &mut a) {
                    r.problem(format!("logical block {logical}: its primary at sector {primary} cannot be read: {e}"));
                    continue;
                }
                for &copy in &loc.copies[1..] {
                    r.copies_compared += 1;
                    let same = file.read(copy * meta.sector_bytes, &mut b).is_ok() && a == b;
                    if !same {
                        r.findings.push(Finding { what: format!("logical block {logical}: the replica at sector {copy} differs from its primary at sector {primary}"), recoverable: false, repaired: repair });
                        drop.push(MapOp::DropCopy { logical, lbn: copy });
                    }
                }
            }
            r.checked.push(format!("FS2: {} replicas compared byte for byte with their primaries", r.copies_compared));
        }
        LayoutSpec::RangeWrites(_) => {
            r.moved_blocks = s.mapped;
            r.checked.push(format!("range writes: {} blocks written at least once, each where its last committed write went; every other block at its home (kept for it)", s.mapped));
        }
        LayoutSpec::Lfs(_) => {
            r.moved_blocks = s.mapped;
            r.checked.push(format!("LFS: {} blocks in the log's segments, none owned twice", s.mapped));
        }
        _ => {
            r.moved_blocks = s.mapped;
            r.checked.push(format!("rearrangement: {} blocks in the reserved area (each slot holds its block's data; the home of a dirty block is stale by design)", s.mapped));
        }
    }
    let torn = rec.bytes_dropped > 0 || rec.uncommitted_dropped > 0;
    if repair && (torn || !drop.is_empty()) {
        match repair_map(files, rule, &drop) {
            Ok(()) => {
                for f in r.findings.iter_mut().filter(|f| f.recoverable && f.what.contains("torn tail")) {
                    f.repaired = true;
                }
            }
            Err(e) => {
                for f in &mut r.findings {
                    f.repaired = false;
                }
                r.problem(format!("repair failed: {e}"));
            }
        }
    }
}

/// Rewrites the map without its torn tail and with the bad copies dropped.
fn repair_map(files: DirStorage, rule: DirtyRule, drop: &[MapOp]) -> freeblock::layout::Result<()> {
    let (mut journal, mut map, _): (Journal<DirStorage>, BlockMap, _) = Journal::open(files, rule)?;
    for op in drop {
        journal.log(&mut map, op.clone())?;
    }
    journal.commit()
}

/// Every block with a checksum in `STORE.sums`: its bytes match.
fn check_sums(store: &Path, meta: &StoreMeta, file: &Store, repair: bool, r: &mut CheckReport) {
    let path = beside(store, "sums");
    if !path.exists() {
        return;
    }
    let sums = match Checksums::open(store, file.size(), meta.created_empty) {
        Ok(s) => s,
        Err(e) => return r.problem(format!("{}: {e}", path.display())),
    };
    let blocks = file.size().div_ceil(SCRUB_BLOCK);
    // Read the entries in large pieces: most of a sparse file is holes (no checksum).
    let mut raw = match std::fs::File::open(&path) {
        Ok(f) => std::io::BufReader::with_capacity(1 << 20, f),
        Err(e) => return r.problem(format!("{}: {e}", path.display())),
    };
    let (mut entry, mut buf) = ([0u8; 8], vec![0u8; SCRUB_BLOCK as usize]);
    let (mut mismatched, mut pending, mut lost) = (0u64, 0u64, 0u64);
    // The store's data run at or after the block in hand (holes are never-written zeroes).
    let mut run: Option<(u64, u64)> = Some((0, 0));
    for block in 0..blocks {
        if let Err(e) = raw.read_exact(&mut entry) {
            return r.problem(format!("{}: {e} at block {block}", path.display()));
        }
        if entry == [0u8; 8] {
            // No checksum: in a store the server created, the block was never written and reads
            // as zeroes (the scrub verifies it against them). Bytes there mean a lost entry.
            let at = block * SCRUB_BLOCK;
            if !meta.created_empty || run.is_none() {
                continue;
            }
            if run.is_some_and(|(_, end)| at >= end) {
                run = match file.data_run(at) {
                    Ok(x) => x,
                    Err(e) => return r.problem(format!("{}: cannot find its data runs: {e}", store.display())),
                };
            }
            if !run.is_some_and(|(start, end)| (start..end).contains(&at)) {
                continue;
            }
            match read_block(file, block, &mut buf) {
                Ok(n) if buf[..n].iter().any(|&b| b != 0) => {
                    lost += 1;
                    r.problem(format!("{}: block {block}'s entry (bytes {}..{}) is zeroed, but the block (bytes {at}..{}) holds data: its checksum was lost", path.display(), block * 8, block * 8 + 8, at + n as u64));
                }
                Ok(_) => {}
                Err(e) => r.problem(format!("{}: block {block} cannot be read: {e}", store.display())),
            }
            continue;
        }
        let state = match sums.entry(block) {
            Ok(s) => s,
            Err(e) => {
                r.problem(e.to_string());
                continue;
            }
        };
        let n = match read_block(file, block, &mut buf) {
            Ok(n) => n,
            Err(e) => {
                r.problem(format!("{}: block {block} cannot be read: {e}", store.display()));
                continue;
            }
        };
        let crc = crc32fast::hash(&buf[..n]);
        match state {
            SumEntry::Valid(want) if want == crc => r.sums_verified += 1,
            SumEntry::Valid(want) => {
                mismatched += 1;
                r.problem(format!("{}: block {block} (bytes {}..{}) does not match its checksum (crc {crc:08x}, recorded {want:08x}): its data is damaged", store.display(), block * SCRUB_BLOCK, block * SCRUB_BLOCK + n as u64));
            }
            SumEntry::BeingWritten => {
                pending += 1;
                let repaired = repair && sums.set(block, SumEntry::Valid(crc)).is_ok();
                r.findings.push(Finding { what: format!("{}: block {block}'s checksum was being written when the server stopped; its bytes' crc becomes the reference", path.display()), recoverable: true, repaired });
            }
            SumEntry::None => {}
        }
    }
    if repair && pending > 0 {
        let _ = sums.sync();
    }
    r.checked.push(format!("{}: {} blocks match their checksums, {mismatched} do not, {pending} were being written, {lost} hold data but lost their entry", path.display(), r.sums_verified));
}
