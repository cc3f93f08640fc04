//! Group commit of the layout policy's map: the commits the policy makes while the engine works
//! through a run of completions become durable together, with one `fdatasync` of the store and
//! one of the journal, and no reply that depends on them leaves before they are durable.
//!
//! ```text
//!  engine thread, completion after completion:
//!    placement: bytes pwritten ─► policy commits its map (in memory) ─► MapCommits::stage
//!               (the journal's new records kept here; the places the commit freed noted)
//!    record sink: a reply completed while a commit is staged is held (crate::timing)
//!  when the engine is about to wait (idle, or for the wall clock), no client request is left in
//!  it, the oldest staged commit is [`MapCommits::HOLD_AT_MOST`] old, [`MapCommits::GROUP_AT_MOST`]
//!  commits are staged, or a write is about to land on a place a staged commit freed:
//!    MapCommits::make_durable: fdatasync(store) ─► append the records to STORE.map.journal,
//!                              fdatasync(journal) ─► its synced mark rewritten, fdatasync
//!                              ─► the held replies go
//! ```
//!
//! | ordering | why |
//! |---|---|
//! | the store's sync before the journal's append | a durable map never names bytes that are not (a crash between the two leaves the old map, whose places still hold the old bytes) |
//! | the journal's sync before any held reply | what the server acknowledged survives a crash: the journal's sync *is* the commit |
//! | the synced mark after the records' sync, before any held reply | recovery then knows how far the journal was durable, so a journal cut short or damaged before the mark is refused, not dropped as a torn tail (only the append after the mark can be torn by a crash) |
//! | a staged group made durable before a write lands on a place it freed | until the map naming the new place is durable, the old place holds the only durable copy |
//!
//! Both syncs are needed: the store's is the barrier that orders the data before the record
//! naming it (the journal's records carry no checksum of the data, so recovery could not tell
//! a record whose data never reached the disk), and the journal's is the commit. Grouping makes
//! them two per group instead of two per write.
//!
//! Only range writes group their commits (their crash design is a write never overwriting its
//! block's current place, which the freed-place rule above keeps). Rearrangement and FS2 decide
//! what to write next from what they take to be durable (a write of a block whose table entry is
//! not durable goes to both places; a replica leaves the map durably before its block is
//! written), so their commits are made durable the moment they are staged, as before.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use freeblock::layout::journal::{encode_sync_mark, last_record_seq, DirStorage, Storage, StoreFile, JOURNAL_BASE_BYTES, JOURNAL_HEADER_BYTES, SYNC_MARK_BYTES};
use freeblock::layout::LayoutError;

use crate::placement::PlacementCounters;
use crate::store::Store;

/// What the map's files will hold once the staged commits are durable.
enum Staged {
    /// Nothing staged.
    Nothing,
    /// Records to append to the journal file.
    Append(Vec<u8>),
    /// A checkpoint: both files replaced (later commits appended to the new journal).
    Replace { snapshot: Vec<u8>, journal: Vec<u8> },
}

struct State {
    files: DirStorage,
    /// The journal's header as the files will hold it (its `base` changes at every checkpoint).
    header: Vec<u8>,
    /// The journal's length as the files will hold it.
    len: usize,
    /// The sequence number of the journal's last record as the files will hold it (the
    /// journal's base when it has none): with `len`, its synced mark.
    last_seq: u64,
    staged: Staged,
    /// Commits and checkpoints staged, not yet durable.
    commits: u64,
    checkpoints: u64,
    /// When the oldest staged commit was staged.
    since: Option<Instant>,
    /// Physical places (first sectors of blocks) that staged commits freed.
    freed: HashSet<u64>,
    /// A sync failed: nothing can be made durable any more (a failed `fdatasync` may have
    /// dropped the dirty pages, so a retry that succeeds would prove nothing).
    failed: Option<String>,
    /// The last try failed for lack of space (the file system is full): the staged commits
    /// are kept and tried again, and nothing is lost (a write that fails with `ENOSPC` wrote
    /// nothing the journal's records depend on: its partial bytes are cut off again).
    no_space: bool,
}

/// The layout policy's map on its way to stable storage (see the module doc). Shared by the
/// placement (which stages commits) and the engine thread's source (which makes them durable
/// when the engine is about to wait, and holds the replies until then).
pub struct MapCommits {
    state: Mutex<State>,
    store: Arc<Store>,
    counters: Arc<PlacementCounters>,
}

impl MapCommits {
    /// Commits staged before they are made durable regardless of the engine.
    pub const GROUP_AT_MOST: u64 = 256;
    /// How long a staged commit (and the replies held behind it) waits at most while the engine
    /// keeps busy.
    pub const HOLD_AT_MOST: Duration = Duration::from_millis(5);

    /// Mirrors a policy's journal into `files` (beside `store`).
    #[must_use]
    pub fn new(files: DirStorage, store: Arc<Store>, counters: Arc<PlacementCounters>) -> Self {
        let state = State { files, header: Vec::new(), len: 0, last_seq: 0, staged: Staged::Nothing, commits: 0, checkpoints: 0, since: None, freed: HashSet::new(), failed: None, no_space: false };
        Self { state: Mutex::new(state), store, counters }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("never poisoned")
    }

    /// Stages what the policy's journal (`snapshot`, `journal`: its in-memory files) committed
    /// since the last call, and notes `freed`, the places the new commits freed. With more than
    /// [`MapCommits::GROUP_AT_MOST`] commits staged, makes them durable.
    ///
    /// # Errors
    /// [`LayoutError::Io`] once a sync has failed, or from making the group durable.
    pub fn stage(&self, snapshot: &[u8], journal: &[u8], freed: impl IntoIterator<Item = u64>) -> Result<(), LayoutError> {
        let mut s = self.lock();
        if let Some(why) = &s.failed {
            return Err(failed(why));
        }
        // The marks after the fixed header change at every commit; the fixed part only when the
        // journal is replaced.
        let head = &journal[..journal.len().min(JOURNAL_BASE_BYTES as usize)];
        if head != s.header.as_slice() || journal.len() < s.len {
            // A checkpoint: the snapshot first (a journal left behind it is stale and skipped).
            let base = journal.get(12..20).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
            s.last_seq = journal.get(JOURNAL_HEADER_BYTES as usize..).and_then(last_record_seq).unwrap_or(base);
            s.staged = Staged::Replace { snapshot: snapshot.to_vec(), journal: journal.to_vec() };
            s.header = head.to_vec();
            s.checkpoints += 1;
        } else if journal.len() > s.len {
            let new = &journal[s.len..];
            s.last_seq = last_record_seq(new).unwrap_or(s.last_seq);
            match &mut s.staged {
                Staged::Nothing => s.staged = Staged::Append(new.to_vec()),
                Staged::Append(bytes) | Staged::Replace { journal: bytes, .. } => bytes.extend_from_slice(new),
            }
            s.commits += 1;
        } else {
            return Ok(());
        }
        s.len = journal.len();
        s.freed.extend(freed);
        s.since.get_or_insert_with(Instant::now);
        if s.commits + s.checkpoints >= Self::GROUP_AT_MOST {
            self.durable(&mut s)?;
        }
        Ok(())
    }

    /// Whether the last try to make the staged commits durable failed because the file system
    /// is full (they stay staged, and the next try may succeed once space is freed).
    #[must_use]
    pub fn out_of_space(&self) -> bool {
        self.lock().no_space
    }

    /// Whether a commit is staged and not durable yet.
    #[must_use]
    pub fn pending(&self) -> bool {
        self.lock().since.is_some()
    }

    /// Whether the oldest staged commit has waited [`MapCommits::HOLD_AT_MOST`].
    #[must_use]
    pub fn overdue(&self) -> bool {
        self.lock().since.is_some_and(|t| t.elapsed() >= Self::HOLD_AT_MOST)
    }

    /// Makes the staged commits durable first if a write of `blocks` blocks of `block_sectors`
    /// sectors at sector `at` would land on a place one of them freed.
    ///
    /// # Errors
    /// As [`MapCommits::make_durable`].
    pub fn before_writing(&self, at: u64, blocks: u64, block_sectors: u64) -> Result<(), LayoutError> {
        let mut s = self.lock();
        if (0..blocks).any(|k| s.freed.contains(&(at + k * block_sectors))) {
            self.durable(&mut s)?;
        }
        Ok(())
    }

    /// Makes every staged commit durable: the store synced, then the map's files written and
    /// synced (see the module doc for the order).
    ///
    /// # Errors
    /// [`LayoutError::Io`] naming the file whose write or sync failed; every later call fails
    /// the same way.
    pub fn make_durable(&self) -> Result<(), LayoutError> {
        self.durable(&mut self.lock())
    }

    fn durable(&self, s: &mut State) -> Result<(), LayoutError> {
        if let Some(why) = &s.failed {
            return Err(failed(why));
        }
        let staged = std::mem::replace(&mut s.staged, Staged::Nothing);
        if matches!(staged, Staged::Nothing) {
            return Ok(());
        }
        // A full file system fails this try alone: the commits stay staged, the replies held
        // for them are failed with ENOSPC (crate::timing), and a later try may succeed.
        let journal_path = s.files.path(StoreFile::Journal);
        let needed = match &staged {
            Staged::Nothing => 0,
            Staged::Append(bytes) => bytes.len(),
            Staged::Replace { snapshot, journal } => snapshot.len() + journal.len(),
        };
        if let Err(e) = self.store.take_space(needed as u64) {
            s.staged = staged;
            s.no_space = true;
            return Err(LayoutError::Io { file: journal_path.display().to_string(), action: "append", message: e.to_string() });
        }
        // The mark the files get: the policy's in-memory journal may hold later commits than
        // these (LFS mirrors only a prefix), so it is made here from what is written.
        let (mark_at, mark) = encode_sync_mark(s.len as u64, s.last_seq);
        let written = self
            .store
            .sync()
            .map_err(|e| LayoutError::Io { file: "the backing store".into(), action: "fdatasync", message: e.to_string() })
            .and_then(|()| match &staged {
                Staged::Nothing => Ok(()),
                Staged::Append(bytes) => append_or_undo(&journal_path, bytes).and_then(|()| s.files.overwrite(StoreFile::Journal, mark_at, &mark)),
                Staged::Replace { snapshot, journal } => {
                    // Both marks: the in-memory journal's other one may name a commit not written.
                    let mut journal = journal.clone();
                    for k in 0..2 {
                        let at = (JOURNAL_BASE_BYTES + k * SYNC_MARK_BYTES) as usize;
                        if let Some(slot) = journal.get_mut(at..at + mark.len()) {
                            slot.copy_from_slice(&mark);
                        }
                    }
                    s.files.replace(StoreFile::Snapshot, snapshot).and_then(|()| s.files.replace(StoreFile::Journal, &journal))
                }
            });
        if let Err(e) = written {
            // Only a write that found no space; a failed sync is for good (see `State::failed`).
            let full = crate::store::no_space().to_string();
            if matches!(&e, LayoutError::Io { action: "append" | "write" | "create", message, .. } if message.contains(&full)) {
                s.staged = staged;
                s.no_space = true;
            } else {
                s.failed = Some(e.to_string());
            }
            return Err(e);
        }
        s.no_space = false;
        self.counters.commits.fetch_add(s.commits, Ordering::Relaxed);
        self.counters.checkpoints.fetch_add(s.checkpoints, Ordering::Relaxed);
        self.counters.groups.fetch_add(1, Ordering::Relaxed);
        (s.commits, s.checkpoints, s.since) = (0, 0, None);
        s.freed.clear();
        Ok(())
    }
}

/// Appends `bytes` to the journal and syncs them. A write that fails (a full file system) is
/// cut off again, so that a later append lands where this one should have; a failed sync is
/// reported as such (and is for good: see `State::failed`).
fn append_or_undo(path: &std::path::Path, bytes: &[u8]) -> Result<(), LayoutError> {
    use std::io::Write as _;
    let io = |action: &'static str, e: std::io::Error| LayoutError::Io { file: path.display().to_string(), action, message: e.to_string() };
    let mut f = std::fs::OpenOptions::new().append(true).open(path).map_err(|e| io("open", e))?;
    let len = f.metadata().map_err(|e| io("stat", e))?.len();
    if let Err(e) = f.write_all(bytes) {
        let _ = f.set_len(len);
        return Err(io("append", e));
    }
    f.sync_data().map_err(|e| io("fdatasync", e))
}

fn failed(why: &str) -> LayoutError {
    LayoutError::Io { file: "the layout's map".into(), action: "commit", message: format!("an earlier sync failed ({why}); nothing more can be made durable") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use freeblock::layout::journal::{Journal, MemStorage};
    use freeblock::layout::{BlockMap, Candidates, MapConfig, MapOp, WriteRequest};

    /// A store in a fresh directory, its map's commits mirrored beside it, and an empty map
    /// whose first checkpoint is durable.
    struct Started {
        dir: std::path::PathBuf,
        commits: MapCommits,
        counters: Arc<PlacementCounters>,
        store: Arc<Store>,
        map: BlockMap,
        journal: Journal<MemStorage>,
    }

    fn started(tag: &str) -> Started {
        let dir = std::env::temp_dir().join(format!("freeblock-commits-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let meta = crate::store::StoreMeta { disk: "test".into(), disk_sectors: 64, sector_bytes: 512, layout: None, created_empty: true };
        let store = Arc::new(Store::open(&dir.join("store"), &meta).unwrap().0);
        let counters = Arc::new(PlacementCounters::default());
        let commits = MapCommits::new(DirStorage::beside(&dir.join("store")).unwrap(), Arc::clone(&store), Arc::clone(&counters));
        let map = BlockMap::new(MapConfig::region(0, 64, 8)).unwrap();
        let journal = Journal::create(MemStorage::new(), &map).unwrap();
        let (snap, jour) = mem(&journal);
        commits.stage(&snap, &jour, []).unwrap();
        commits.make_durable().unwrap();
        Started { dir, commits, counters, store, map, journal }
    }

    /// The policy's in-memory files.
    fn mem(j: &Journal<MemStorage>) -> (Vec<u8>, Vec<u8>) {
        (j.storage().snapshot.clone().unwrap(), j.storage().journal.clone().unwrap())
    }

    #[test]
    fn a_full_file_system_keeps_the_commits_staged_until_there_is_room() {
        let Started { dir, commits: c, store, mut map, mut journal, .. } = started("full");
        store.limit_space(0);
        write(&mut journal, &mut map, 0, 16);
        let (snap, jour) = mem(&journal);
        c.stage(&snap, &jour, []).unwrap();
        let e = c.make_durable().unwrap_err().to_string();
        assert!(e.contains("No space left") && c.out_of_space() && c.pending(), "{e}");
        let files = DirStorage::beside(&dir.join("store")).unwrap();
        let on_disk = crate::placement::read_journal(&files).unwrap().unwrap();
        let (recovered, _) = Journal::recover(&on_disk, freeblock::layout::journal::DirtyRule::Logged).unwrap();
        assert_eq!(recovered.first_copy(0), None, "nothing of the commit reached the files");
        // A second commit while full, then room: both become durable, in order.
        write(&mut journal, &mut map, 1, 24);
        let (snap, jour) = mem(&journal);
        c.stage(&snap, &jour, []).unwrap();
        assert!(c.make_durable().is_err());
        store.limit_space(u64::MAX);
        c.make_durable().unwrap();
        assert!(!c.out_of_space() && !c.pending());
        let on_disk = crate::placement::read_journal(&files).unwrap().unwrap();
        let (recovered, report) = Journal::recover(&on_disk, freeblock::layout::journal::DirtyRule::Logged).unwrap();
        assert_eq!((recovered.first_copy(0), recovered.first_copy(1), report.bytes_dropped), (Some(16), Some(24), 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn write(journal: &mut Journal<MemStorage>, map: &mut BlockMap, logical: u64, at: u64) {
        let req = WriteRequest { logical, blocks: 1, candidates: Candidates::single(at) };
        journal.log(map, MapOp::Write { req, chosen: at }).unwrap();
        journal.commit().unwrap();
    }

    #[test]
    fn staged_commits_reach_the_files_together_and_recover_as_committed() {
        let Started { dir, commits: c, counters, mut map, mut journal, .. } = started("group");
        assert_eq!(counters.snapshot().checkpoints, 1);
        for (logical, at) in [(0, 16), (1, 24), (2, 32)] {
            write(&mut journal, &mut map, logical, at);
            let (snap, jour) = mem(&journal);
            c.stage(&snap, &jour, [at + 8]).unwrap();
        }
        assert!(c.pending());
        // Nothing reached the journal file yet: a crash now recovers the empty map.
        let files = DirStorage::beside(&dir.join("store")).unwrap();
        let on_disk = crate::placement::read_journal(&files).unwrap().unwrap();
        let (_, recovered, _) = Journal::open(on_disk, freeblock::layout::journal::DirtyRule::Logged).unwrap();
        assert_eq!(recovered.first_copy(0), None);
        // A write on a place a staged commit freed makes the group durable first; others do not.
        c.before_writing(48, 1, 8).unwrap();
        assert!(c.pending());
        c.before_writing(40, 2, 8).unwrap();
        assert!(!c.pending());
        let on_disk = crate::placement::read_journal(&files).unwrap().unwrap();
        let (_, recovered, _) = Journal::open(on_disk, freeblock::layout::journal::DirtyRule::Logged).unwrap();
        assert_eq!((0..3).map(|b| recovered.first_copy(b)).collect::<Vec<_>>(), vec![Some(16), Some(24), Some(32)]);
        let s = counters.snapshot();
        assert_eq!((s.commits, s.groups), (3, 2), "three commits in one group, after the first snapshot's");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
