//! # The block map on stable storage: a snapshot plus a journal of operations
//!
//! The [`BlockMap`] lives in memory; this module keeps it on stable storage so that a crash at
//! any instant recovers to the map as it was after the last [`Journal::commit`], with no physical
//! block owned twice. Every mutating call of the map is an operation value ([`MapOp`]); a policy
//! applies an operation to the map, appends it to the journal, and commits before it acknowledges
//! the I/O that depended on it. Now and then a [checkpoint](Journal::checkpoint) writes the whole
//! map as a new snapshot and starts an empty journal.
//!
//! ```text
//!   map.snapshot (replaced atomically)        map.journal (append-only, fsync per commit)
//!   ┌──────────────────────────────┐          ┌────────────┬──────┬──────┬──────┬───────┬╌╌╌╌╌╌╌╌╌┐
//!   │ header: seq S                │ ◄─────── │ header:    │ rec  │ rec  │ rec  │  rec  │ torn    ╎
//!   │ payload: the whole map       │  follows │ base S     │ S+1  │ S+2  │ S+3● │  S+4● │ tail    ╎
//!   │ (MapSnapshot, JSON)          │          └────────────┴──────┴──────┴──────┴───────┴╌╌╌╌╌╌╌╌╌┘
//!   └──────────────────────────────┘                 ● = last record of a commit()     ▲ crash while
//!                                                                                        appending
//!   recovered map = snapshot, then records S+1 … up to the last ● that is intact, in order
//! ```
//!
//! ## On-disk format
//!
//! All integers are little-endian; every CRC is CRC-32 (IEEE, as computed by `crc32fast`).
//!
//! **`map.snapshot`** — a 32-byte header, then the payload:
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `FBMAPSNP` |
//! | 8 | 4 | format version, `1` |
//! | 12 | 8 | `seq`: sequence number of the last journal record the snapshot includes (0 at creation) |
//! | 20 | 8 | payload length `P` |
//! | 28 | 4 | CRC-32 of bytes 0..28 followed by the payload |
//! | 32 | `P` | payload: the [`MapSnapshot`] as JSON |
//!
//! **`map.journal`** — a 72-byte header, then records back to back:
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `FBMAPJNL` |
//! | 8 | 4 | format version, `2` (version `1`, without the synced marks, is still read) |
//! | 12 | 8 | `base`: the `seq` of the snapshot this journal follows |
//! | 20 | 4 | CRC-32 of bytes 0..20 |
//! | 24 | 24 | synced mark 0 |
//! | 48 | 24 | synced mark 1 |
//!
//! **A synced mark** says how far the journal was durable when a commit returned: its length `L`
//! (8 bytes), the `seq` of its last record (8), a CRC-32 of those 16 bytes (4), 4 zero bytes. A
//! commit ending at sequence `q` rewrites mark `q mod 2` in place after its records are synced,
//! and syncs again; recovery believes the valid mark with the highest `seq`. Two marks so that a
//! crash tearing one leaves the other, an older and still true bound.
//!
//! **A record** (17 bytes of frame, then the payload):
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 4 | payload length `N` (at most [`MAX_RECORD_PAYLOAD`]) |
//! | 4 | 4 | CRC-32 of bytes 0..4, then bytes 8..17 + `N` (length, seq, flags, payload) |
//! | 8 | 8 | `seq`: `base + 1` for the first record, then one more for each record |
//! | 16 | 1 | flags: bit 0 set on the last record of a [`Journal::commit`]; other bits zero |
//! | 17 | `N` | payload: the [`MapOp`] as JSON |
//!
//! ## Writing
//!
//! * [`Journal::append`] numbers an operation and buffers it; [`Journal::commit`] writes the
//!   buffered records in one append, the last one flagged, and syncs (`fsync`) them; then it
//!   writes the synced mark and syncs again before returning. A commit is atomic: recovery
//!   applies a commit's records all or not at all. Two syncs per commit is the price of telling
//!   a crash from damage: the first alone cannot say how far the file reached.
//! * [`Journal::checkpoint`] replaces the snapshot atomically (write `map.snapshot.tmp`, `fsync`,
//!   rename over `map.snapshot`, `fsync` the directory), then replaces the journal the same way
//!   with an empty one whose `base` is the new snapshot's `seq`. A crash between the two leaves
//!   a *stale* journal (its `base` below the snapshot's `seq`): its records are all already in the
//!   snapshot and recovery skips them.
//!
//! ## Recovery ([`Journal::recover`])
//!
//! 1. Load and validate the snapshot ([`BlockMap::from_snapshot`]); any damage is an error — the
//!    snapshot is replaced atomically, so a crash cannot tear it.
//! 2. Read the journal header (a bad one is an error: the header is also written atomically), then
//!    the records in order. Only the append a crash interrupted can be torn, and it lies after
//!    the synced mark: every commit before the mark returned to its caller, who may have
//!    acknowledged it. So a file shorter than the mark, or a damaged record before it, is
//!    refused (an error naming the file and the byte offset) — damage, not a crash. After the
//!    mark, a record whose frame runs past the end of the file or whose CRC does not match is
//!    where a crash interrupted an append **if no intact record follows it**: replay ends there
//!    silently and the report says how many bytes were dropped. If an intact record does follow,
//!    the log was damaged in the middle and recovery refuses (an error naming the file, byte
//!    offset and record number) rather than silently lose committed operations. So is a sequence
//!    gap, an unknown flag, an undecodable payload, or an operation the map refuses
//!    ([`LayoutError::Replay`]). A mark at or below the snapshot's `seq` protects nothing the
//!    snapshot does not hold (a stale journal), and is not enforced.
//!
//! | damage | where | recovery |
//! |---|---|---|
//! | frame cut short, CRC mismatch | after the synced mark, nothing intact after it | a torn tail: dropped, reported |
//! | the same | after the mark, an intact record follows | refused |
//! | file shorter than the mark, a damaged record before it | anywhere before the mark | refused |
//! | both marks damaged | the header | refused |
//! 3. Intact records after the last commit flag belong to a commit that never finished: dropped.
//! 4. The [dirty rule](DirtyRule). Paper 002's driver wrote its block table to disk whenever a
//!    block moved in or out of the reserved area, but not on every write to a rearranged block:
//!    the table's dirty bits could be stale. Its rule at start-up was to mark *every* rearranged
//!    block dirty — a block wrongly thought clean would be dropped without being copied home, and
//!    its last writes lost; a block wrongly thought dirty only costs one extra copy-back.
//!    [`DirtyRule::Uncertain`] applies that rule (every mapped block, all of which have at least
//!    one copy, is marked dirty); [`DirtyRule::Logged`] trusts the bits, for callers that log
//!    every [`MapOp::SetDirty`] and commit it before acknowledging the write it describes.
//!
//! [`Journal::open`] recovers and then checkpoints, so the damaged tail is gone before anything
//! new is appended after it.
//!
//! Storage is abstract ([`Storage`]): [`MemStorage`] keeps both files in memory (tests, the
//! simulator) and [`DirStorage`] keeps them as files in a directory.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{LayoutError, Result};
use super::map::{BlockMap, Candidates, MapSnapshot, PhysRange, WriteRequest};

/// Magic bytes at the start of `map.snapshot`.
pub const SNAPSHOT_MAGIC: [u8; 8] = *b"FBMAPSNP";
/// Magic bytes at the start of `map.journal`.
pub const JOURNAL_MAGIC: [u8; 8] = *b"FBMAPJNL";
/// The snapshot's format version, written and read.
pub const FORMAT_VERSION: u32 = 1;
/// The journal's format version written (with the synced marks).
pub const JOURNAL_FORMAT_VERSION: u32 = 2;
/// The journal's first format version, without the synced marks: still read.
const JOURNAL_FORMAT_UNMARKED: u32 = 1;
/// Bytes of the snapshot header.
pub const SNAPSHOT_HEADER_BYTES: u64 = 32;
/// Bytes of the journal header, the synced marks included (where the first record starts).
pub const JOURNAL_HEADER_BYTES: u64 = 72;
/// Bytes of the journal header's fixed part: magic, version, base and its CRC. It changes only
/// when the journal is replaced (a checkpoint); the synced marks after it change at every commit.
pub const JOURNAL_BASE_BYTES: u64 = 24;
/// Bytes of one synced mark.
pub const SYNC_MARK_BYTES: u64 = 24;
/// Bytes of a record's frame before its payload.
pub const RECORD_FRAME_BYTES: u64 = 17;
/// Largest record payload accepted (16 MiB).
pub const MAX_RECORD_PAYLOAD: u32 = 16 << 20;
/// Record flag: the last record of a commit.
const FLAG_COMMIT: u8 = 1;

/// One mutating call of a [`BlockMap`], as data: what the journal logs and
/// [`BlockMap::apply`] replays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum MapOp {
    /// [`BlockMap::write`]`(req, chosen)`.
    Write {
        /// The request.
        req: WriteRequest,
        /// The start chosen among its candidates.
        chosen: u64,
    },
    /// [`BlockMap::trim`]`(logical, blocks)`.
    Trim {
        /// First logical block.
        logical: u64,
        /// Number of blocks.
        blocks: u64,
    },
    /// [`BlockMap::add_copy`]`(logical, lbn)`.
    AddCopy {
        /// The logical block.
        logical: u64,
        /// Where the new copy is (disk LBN).
        lbn: u64,
    },
    /// [`BlockMap::drop_copy`]`(logical, lbn)`.
    DropCopy {
        /// The logical block.
        logical: u64,
        /// The copy dropped (disk LBN).
        lbn: u64,
    },
    /// [`BlockMap::reserve`]`(extent)`.
    Reserve {
        /// The extent.
        extent: PhysRange,
    },
    /// [`BlockMap::release`]`(candidates, blocks)`.
    Release {
        /// The offer's candidates.
        candidates: Candidates,
        /// Blocks of the cancelled write.
        blocks: u64,
    },
    /// [`BlockMap::pin`]`(extent)`.
    Pin {
        /// The extent.
        extent: PhysRange,
    },
    /// [`BlockMap::unpin`]`(extent)`.
    Unpin {
        /// The extent.
        extent: PhysRange,
    },
    /// [`BlockMap::set_dirty`]`(logical, dirty)`.
    SetDirty {
        /// The logical block.
        logical: u64,
        /// The new bit.
        dirty: bool,
    },
}

impl fmt::Display for MapOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapOp::Write { req, chosen } => write!(
                f,
                "write of logical blocks {}..{} to sector {chosen}",
                req.logical,
                req.logical.saturating_add(req.blocks)
            ),
            MapOp::Trim { logical, blocks } => {
                write!(f, "trim of logical blocks {logical}..{}", logical.saturating_add(*blocks))
            }
            MapOp::AddCopy { logical, lbn } => write!(f, "add_copy of logical block {logical} at sector {lbn}"),
            MapOp::DropCopy { logical, lbn } => write!(f, "drop_copy of logical block {logical} at sector {lbn}"),
            MapOp::Reserve { extent } => write!(f, "reserve of sectors {}..{}", extent.start, extent.end()),
            MapOp::Release { blocks, .. } => write!(f, "release of an offer for {blocks} blocks"),
            MapOp::Pin { extent } => write!(f, "pin of sectors {}..{}", extent.start, extent.end()),
            MapOp::Unpin { extent } => write!(f, "unpin of sectors {}..{}", extent.start, extent.end()),
            MapOp::SetDirty { logical, dirty } => write!(f, "set_dirty({dirty}) of logical block {logical}"),
        }
    }
}

impl BlockMap {
    /// Performs one operation (the call the [`MapOp`] names). On error the map is unchanged.
    ///
    /// # Errors
    /// Whatever the called method returns.
    pub fn apply(&mut self, op: &MapOp) -> Result<()> {
        match op {
            MapOp::Write { req, chosen } => self.write(req, *chosen).map(drop),
            MapOp::Trim { logical, blocks } => self.trim(*logical, *blocks).map(drop),
            MapOp::AddCopy { logical, lbn } => self.add_copy(*logical, *lbn),
            MapOp::DropCopy { logical, lbn } => self.drop_copy(*logical, *lbn),
            MapOp::Reserve { extent } => self.reserve(*extent),
            MapOp::Release { candidates, blocks } => self.release(candidates, *blocks).map(drop),
            MapOp::Pin { extent } => self.pin(*extent),
            MapOp::Unpin { extent } => self.unpin(*extent).map(drop),
            MapOp::SetDirty { logical, dirty } => self.set_dirty(*logical, *dirty),
        }
    }
}

/// What to believe about dirty bits after a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DirtyRule {
    /// Dirty-bit changes were not all logged (paper 002's driver): mark every mapped block dirty.
    Uncertain,
    /// Every dirty-bit change was logged and committed: trust the recovered bits.
    Logged,
}

/// What recovery found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecoveryReport {
    /// The snapshot's sequence number.
    pub snapshot_seq: u64,
    /// The journal's base (`None` when there was no journal file).
    pub journal_base: Option<u64>,
    /// Records applied to the snapshot.
    pub records_replayed: u64,
    /// Records skipped because the snapshot already includes them (a stale journal left by a
    /// crash during a checkpoint).
    pub records_skipped: u64,
    /// Intact records dropped because their commit never finished.
    pub uncommitted_dropped: u64,
    /// Bytes dropped at the end of the journal (a torn or corrupt tail, plus unfinished commits).
    pub bytes_dropped: u64,
    /// Sequence number of the last operation in the recovered map.
    pub last_seq: u64,
    /// Blocks whose dirty bit the [`DirtyRule`] set.
    pub marked_dirty: u64,
}

/// The two files of a persistent map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreFile {
    /// `map.snapshot`.
    Snapshot,
    /// `map.journal`.
    Journal,
}

impl StoreFile {
    /// The file's name.
    #[must_use]
    pub fn file_name(self) -> &'static str {
        match self {
            StoreFile::Snapshot => "map.snapshot",
            StoreFile::Journal => "map.journal",
        }
    }
}

/// Where the snapshot and journal are kept.
pub trait Storage {
    /// A name for the file in error messages (a path, or `memory:map.journal`).
    fn describe(&self, file: StoreFile) -> String;
    /// The whole file, or `None` if it does not exist.
    ///
    /// # Errors
    /// [`LayoutError::Io`].
    fn read(&self, file: StoreFile) -> Result<Option<Vec<u8>>>;
    /// Replaces the file's contents atomically and durably: after a crash the file holds either
    /// the old contents or the new, never a mix.
    ///
    /// # Errors
    /// [`LayoutError::Io`].
    fn replace(&mut self, file: StoreFile, bytes: &[u8]) -> Result<()>;
    /// Appends to the file and makes the bytes durable before returning. A crash during the call
    /// may leave any prefix of `bytes` appended.
    ///
    /// # Errors
    /// [`LayoutError::Io`], also when the file does not exist.
    fn append(&mut self, file: StoreFile, bytes: &[u8]) -> Result<()>;
    /// Overwrites `bytes` at `offset` inside the file (which must already reach past them) and
    /// makes them durable before returning.
    ///
    /// # Errors
    /// [`LayoutError::Io`], also when the file does not exist or is shorter.
    fn overwrite(&mut self, file: StoreFile, offset: u64, bytes: &[u8]) -> Result<()>;
}

/// Both files in memory. The bytes are public to tests, which simulate crashes by truncating or
/// damaging them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemStorage {
    /// `map.snapshot`, if it exists.
    pub snapshot: Option<Vec<u8>>,
    /// `map.journal`, if it exists.
    pub journal: Option<Vec<u8>>,
}

impl MemStorage {
    /// No files.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The file's bytes.
    #[must_use]
    pub fn file(&self, file: StoreFile) -> Option<&Vec<u8>> {
        match file {
            StoreFile::Snapshot => self.snapshot.as_ref(),
            StoreFile::Journal => self.journal.as_ref(),
        }
    }

    /// The file's bytes, to damage them.
    pub fn file_mut(&mut self, file: StoreFile) -> &mut Option<Vec<u8>> {
        match file {
            StoreFile::Snapshot => &mut self.snapshot,
            StoreFile::Journal => &mut self.journal,
        }
    }
}

impl Storage for MemStorage {
    fn describe(&self, file: StoreFile) -> String {
        format!("memory:{}", file.file_name())
    }

    fn read(&self, file: StoreFile) -> Result<Option<Vec<u8>>> {
        Ok(self.file(file).cloned())
    }

    fn replace(&mut self, file: StoreFile, bytes: &[u8]) -> Result<()> {
        *self.file_mut(file) = Some(bytes.to_vec());
        Ok(())
    }

    fn append(&mut self, file: StoreFile, bytes: &[u8]) -> Result<()> {
        let name = self.describe(file);
        match self.file_mut(file) {
            Some(v) => {
                v.extend_from_slice(bytes);
                Ok(())
            }
            None => Err(LayoutError::Io { file: name, action: "append", message: "the file does not exist".into() }),
        }
    }

    fn overwrite(&mut self, file: StoreFile, offset: u64, bytes: &[u8]) -> Result<()> {
        let name = self.describe(file);
        let short = || LayoutError::Io { file: name.clone(), action: "overwrite", message: "the file does not exist or is too short".into() };
        let v = self.file_mut(file).as_mut().ok_or_else(short)?;
        let at = usize::try_from(offset).map_err(|_| short())?;
        let end = at.checked_add(bytes.len()).filter(|&e| e <= v.len()).ok_or_else(short)?;
        v[at..end].copy_from_slice(bytes);
        Ok(())
    }
}

/// Both files in a directory: `map.snapshot` and `map.journal` (or, made by
/// [`DirStorage::beside`], `<file>.map.snapshot` and `<file>.map.journal` next to a file they
/// describe). Replacement writes `<name>.tmp`, syncs it, renames it over the file and syncs the
/// directory; appends are synced before they return.
#[derive(Debug)]
pub struct DirStorage {
    dir: PathBuf,
    /// Put before each file's name (empty, or `<file>.` for [`DirStorage::beside`]).
    prefix: String,
    /// The journal, open for appending (dropped whenever the file is replaced).
    journal: Option<File>,
}

impl DirStorage {
    /// Uses (and creates if needed) the directory `dir`.
    ///
    /// # Errors
    /// [`LayoutError::Io`] when the directory cannot be created.
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir).map_err(|e| io_err(&dir, "create directory", &e))?;
        Ok(Self { dir, prefix: String::new(), journal: None })
    }

    /// The files of the map that belongs to `file` (a block server's backing file), kept beside
    /// it: `<file>.map.snapshot` and `<file>.map.journal`. The directory must exist.
    ///
    /// # Errors
    /// [`LayoutError::Io`] when `file` has no file name.
    pub fn beside(file: &Path) -> Result<Self> {
        let name = file.file_name().ok_or_else(|| io_err(file, "name the map's files after", &std::io::Error::other("the path has no file name")))?;
        let dir = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok(Self { dir, prefix: format!("{}.", name.to_string_lossy()), journal: None })
    }

    /// The directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of one of the files.
    #[must_use]
    pub fn path(&self, file: StoreFile) -> PathBuf {
        self.dir.join(format!("{}{}", self.prefix, file.file_name()))
    }

    fn sync_dir(&self) -> Result<()> {
        #[cfg(unix)]
        {
            File::open(&self.dir).and_then(|d| d.sync_all()).map_err(|e| io_err(&self.dir, "fsync directory", &e))?;
        }
        Ok(())
    }
}

fn io_err(path: &Path, action: &'static str, e: &std::io::Error) -> LayoutError {
    LayoutError::Io { file: path.display().to_string(), action, message: e.to_string() }
}

impl Storage for DirStorage {
    fn describe(&self, file: StoreFile) -> String {
        self.path(file).display().to_string()
    }

    fn read(&self, file: StoreFile) -> Result<Option<Vec<u8>>> {
        let path = self.path(file);
        match fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&path, "read", &e)),
        }
    }

    fn replace(&mut self, file: StoreFile, bytes: &[u8]) -> Result<()> {
        if file == StoreFile::Journal {
            self.journal = None;
        }
        let path = self.path(file);
        let tmp = self.dir.join(format!("{}{}.tmp", self.prefix, file.file_name()));
        let mut f = File::create(&tmp).map_err(|e| io_err(&tmp, "create", &e))?;
        f.write_all(bytes).map_err(|e| io_err(&tmp, "write", &e))?;
        f.sync_all().map_err(|e| io_err(&tmp, "fsync", &e))?;
        drop(f);
        fs::rename(&tmp, &path).map_err(|e| io_err(&path, "rename", &e))?;
        self.sync_dir()
    }

    fn append(&mut self, file: StoreFile, bytes: &[u8]) -> Result<()> {
        let path = self.path(file);
        let cached = if file == StoreFile::Journal { self.journal.take() } else { None };
        let mut f = match cached {
            Some(f) => f,
            None => OpenOptions::new().append(true).open(&path).map_err(|e| io_err(&path, "open", &e))?,
        };
        f.write_all(bytes).map_err(|e| io_err(&path, "append", &e))?;
        f.sync_data().map_err(|e| io_err(&path, "fsync", &e))?;
        if file == StoreFile::Journal {
            self.journal = Some(f);
        }
        Ok(())
    }

    fn overwrite(&mut self, file: StoreFile, offset: u64, bytes: &[u8]) -> Result<()> {
        use std::os::unix::fs::FileExt as _;
        let path = self.path(file);
        // Not the cached append handle: a positioned write to an O_APPEND file lands at its end.
        let f = OpenOptions::new().write(true).open(&path).map_err(|e| io_err(&path, "open", &e))?;
        let len = f.metadata().map_err(|e| io_err(&path, "stat", &e))?.len();
        if offset.saturating_add(bytes.len() as u64) > len {
            return Err(io_err(&path, "overwrite", &std::io::Error::other(format!("the file is {len} bytes, too short for {} bytes at {offset}", bytes.len()))));
        }
        f.write_all_at(bytes, offset).map_err(|e| io_err(&path, "overwrite", &e))?;
        f.sync_data().map_err(|e| io_err(&path, "fsync", &e))
    }
}

/// The writer of a persistent map: see the [module docs](self).
///
/// ```
/// use freeblock::layout::journal::{DirtyRule, Journal, MapOp, MemStorage};
/// use freeblock::layout::{BlockMap, Candidates, MapConfig, WriteRequest};
///
/// let mut map = BlockMap::new(MapConfig::region(0, 64, 8)).unwrap();
/// let mut journal = Journal::create(MemStorage::new(), &map).unwrap();
/// let req = WriteRequest { logical: 2, blocks: 1, candidates: Candidates::single(16) };
/// journal.log(&mut map, MapOp::Write { req, chosen: 16 }).unwrap();
/// journal.log(&mut map, MapOp::SetDirty { logical: 2, dirty: true }).unwrap();
/// journal.commit().unwrap();
///
/// let (recovered, report) = Journal::recover(journal.storage(), DirtyRule::Logged).unwrap();
/// assert_eq!(recovered.to_snapshot(), map.to_snapshot());
/// assert_eq!(report.records_replayed, 2);
/// ```
#[derive(Debug)]
pub struct Journal<S: Storage> {
    storage: S,
    /// Sequence number the next appended operation gets.
    next_seq: u64,
    /// Sequence number of the last committed operation (or of the snapshot).
    committed_seq: u64,
    /// Operations appended but not committed, with their sequence numbers.
    pending: Vec<(u64, Vec<u8>)>,
    /// Bytes of the journal file (header and committed records).
    journal_len: u64,
    /// An earlier write failed: refuse to append until a checkpoint.
    failed: bool,
}

impl<S: Storage> Journal<S> {
    /// Starts a persistent map: writes `map` as the snapshot (sequence number 0) and an empty
    /// journal, replacing whatever the storage held.
    ///
    /// The empty journal is written *first*: a crash in between leaves the old snapshot (if any)
    /// with an empty journal, never the new snapshot under the old map's records.
    ///
    /// # Errors
    /// [`LayoutError::Io`].
    pub fn create(mut storage: S, map: &BlockMap) -> Result<Self> {
        storage.replace(StoreFile::Journal, &encode_journal_header(0))?;
        let mut j = Self { storage, next_seq: 1, committed_seq: 0, pending: Vec::new(), journal_len: 0, failed: false };
        j.write_checkpoint(map, 0)?;
        Ok(j)
    }

    /// Recovers the map ([`Journal::recover`]) and checkpoints it, so that new records are never
    /// appended after a damaged tail. Returns the journal, ready to append, the map and the report.
    ///
    /// # Errors
    /// As [`Journal::recover`], and [`LayoutError::Io`].
    pub fn open(storage: S, rule: DirtyRule) -> Result<(Self, BlockMap, RecoveryReport)> {
        let (map, report) = Self::recover(&storage, rule)?;
        let seq = report.last_seq;
        let mut j = Self {
            storage,
            next_seq: seq.saturating_add(1),
            committed_seq: seq,
            pending: Vec::new(),
            journal_len: 0,
            failed: false,
        };
        j.write_checkpoint(&map, seq)?;
        Ok((j, map, report))
    }

    /// Numbers `op` and buffers it for the next [`Journal::commit`]; returns its sequence number.
    /// Nothing reaches storage yet.
    ///
    /// # Errors
    /// [`LayoutError::Config`] after a failed write (checkpoint first) or for an operation whose
    /// encoding exceeds [`MAX_RECORD_PAYLOAD`].
    pub fn append(&mut self, op: &MapOp) -> Result<u64> {
        self.usable()?;
        let payload = serde_json::to_vec(op)
            .map_err(|e| LayoutError::Config { field: "journal", message: format!("cannot encode {op}: {e}") })?;
        if payload.len() > MAX_RECORD_PAYLOAD as usize {
            return Err(LayoutError::Config {
                field: "journal",
                message: format!("{op} encodes to {} bytes, over the record limit {MAX_RECORD_PAYLOAD}", payload.len()),
            });
        }
        let seq = self.next_seq;
        self.next_seq = seq.checked_add(1).ok_or_else(exhausted)?;
        self.pending.push((seq, payload));
        Ok(seq)
    }

    /// Applies `op` to `map` and, if the map accepted it, appends it ([`Journal::append`]). A
    /// refused operation is not logged.
    ///
    /// # Errors
    /// The map's error (nothing changed), or [`Journal::append`]'s (the map has changed but the
    /// operation is not logged: checkpoint before going on).
    pub fn log(&mut self, map: &mut BlockMap, op: MapOp) -> Result<u64> {
        self.usable()?;
        map.apply(&op)?;
        self.append(&op)
    }

    /// Writes every appended operation to the journal in one append, the last flagged as the end
    /// of a commit, and makes it durable. After it returns, recovery yields them all; a crash
    /// during it yields all or none.
    ///
    /// # Errors
    /// [`LayoutError::Io`]; then the journal refuses further appends until a checkpoint.
    pub fn commit(&mut self) -> Result<()> {
        self.usable()?;
        if self.pending.is_empty() {
            return Ok(());
        }
        let n = self.pending.len();
        let mut bytes = Vec::new();
        for (i, (seq, payload)) in self.pending.iter().enumerate() {
            let flags = if i + 1 == n { FLAG_COMMIT } else { 0 };
            encode_record(&mut bytes, *seq, flags, payload);
        }
        if let Err(e) = self.storage.append(StoreFile::Journal, &bytes) {
            self.failed = true;
            return Err(e);
        }
        self.journal_len += bytes.len() as u64;
        self.committed_seq = self.pending.last().map_or(self.committed_seq, |p| p.0);
        self.pending.clear();
        let (at, mark) = encode_sync_mark(self.journal_len, self.committed_seq);
        if let Err(e) = self.storage.overwrite(StoreFile::Journal, at, &mark) {
            self.failed = true;
            return Err(e);
        }
        Ok(())
    }

    /// Writes `map` as the new snapshot and starts an empty journal. `map` must include every
    /// operation appended so far (committed or not): the snapshot stands for all of them, and the
    /// uncommitted ones are not written separately.
    ///
    /// # Errors
    /// [`LayoutError::Io`].
    pub fn checkpoint(&mut self, map: &BlockMap) -> Result<()> {
        let seq = self.next_seq.saturating_sub(1);
        self.write_checkpoint(map, seq)
    }

    fn write_checkpoint(&mut self, map: &BlockMap, seq: u64) -> Result<()> {
        let next = seq.checked_add(1).ok_or_else(exhausted)?;
        self.pending.clear();
        let snap = encode_snapshot(map, seq)?;
        let header = encode_journal_header(seq);
        let res = self
            .storage
            .replace(StoreFile::Snapshot, &snap)
            .and_then(|()| self.storage.replace(StoreFile::Journal, &header));
        if let Err(e) = res {
            self.failed = true;
            return Err(e);
        }
        self.failed = false;
        self.committed_seq = seq;
        self.next_seq = next;
        self.journal_len = JOURNAL_HEADER_BYTES;
        Ok(())
    }

    fn usable(&self) -> Result<()> {
        if self.failed {
            return Err(LayoutError::Config {
                field: "journal",
                message: "an earlier write to stable storage failed; checkpoint (or recover) before logging more"
                    .into(),
            });
        }
        Ok(())
    }

    /// Recovers the map from `storage`: the snapshot, then every committed record of the journal,
    /// then the dirty rule. Reads only. See the [module docs](self) for what is tolerated.
    ///
    /// # Errors
    /// [`LayoutError::Corrupt`] (missing or damaged snapshot, bad journal header, a corrupt record
    /// followed by intact ones, a sequence gap, an undecodable record), [`LayoutError::Replay`]
    /// (an operation the map refuses), [`LayoutError::Io`].
    pub fn recover(storage: &S, rule: DirtyRule) -> Result<(BlockMap, RecoveryReport)> {
        let snap_name = storage.describe(StoreFile::Snapshot);
        let snap_bytes = storage.read(StoreFile::Snapshot)?.ok_or_else(|| LayoutError::Corrupt {
            file: snap_name.clone(),
            offset: 0,
            record: None,
            message: "the snapshot does not exist: there is no map to recover".into(),
        })?;
        let (snap_seq, mut map) = decode_snapshot(&snap_name, &snap_bytes)?;
        let mut report = RecoveryReport { snapshot_seq: snap_seq, last_seq: snap_seq, ..RecoveryReport::default() };

        let jname = storage.describe(StoreFile::Journal);
        if let Some(bytes) = storage.read(StoreFile::Journal)? {
            let (base, synced) = decode_journal_header(&jname, &bytes)?;
            report.journal_base = Some(base);
            if base > snap_seq {
                return Err(LayoutError::Corrupt {
                    file: jname,
                    offset: 12,
                    record: None,
                    message: format!(
                        "the journal follows snapshot sequence {base}, but {snap_name} is at sequence {snap_seq}: \
                         the snapshot is older than its journal"
                    ),
                });
            }
            // A mark the snapshot covers protects nothing the snapshot lacks (a stale journal).
            let synced = synced.filter(|m| m.seq > snap_seq);
            let scan = scan_records(&jname, &bytes, base, synced)?;
            check_reaches_mark(&jname, &scan, base, synced)?;
            report.bytes_dropped = scan.dropped_bytes;
            for rec in &scan.records[..scan.committed] {
                if rec.seq <= snap_seq {
                    report.records_skipped += 1;
                    continue;
                }
                if Some(rec.seq) != report.last_seq.checked_add(1) {
                    // Only a stale journal can get here (its records run past the snapshot).
                    return Err(LayoutError::Corrupt {
                        file: jname,
                        offset: rec.offset,
                        record: Some(rec.number),
                        message: format!(
                            "sequence number {} does not follow the snapshot's {snap_seq} (journal base {base})",
                            rec.seq
                        ),
                    });
                }
                map.apply(&rec.op).map_err(|e| LayoutError::Replay {
                    file: jname.clone(),
                    offset: rec.offset,
                    record: rec.number,
                    op: rec.op.to_string(),
                    source: Box::new(e),
                })?;
                report.records_replayed += 1;
                report.last_seq = rec.seq;
            }
            let uncommitted = &scan.records[scan.committed..];
            report.uncommitted_dropped = uncommitted.len() as u64;
            report.bytes_dropped += uncommitted.iter().map(|r| r.len).sum::<u64>();
        }

        if rule == DirtyRule::Uncertain {
            let clean: Vec<u64> =
                map.mapped().filter(|(_, loc)| !loc.dirty && !loc.copies.is_empty()).map(|(l, _)| l).collect();
            for l in clean {
                map.set_dirty(l, true)?;
                report.marked_dirty += 1;
            }
        }
        Ok((map, report))
    }

    /// The storage.
    #[must_use]
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// The storage, mutably (tests damage it through this).
    pub fn storage_mut(&mut self) -> &mut S {
        &mut self.storage
    }

    /// Gives the storage back.
    #[must_use]
    pub fn into_storage(self) -> S {
        self.storage
    }

    /// Sequence number of the last committed operation (or of the last checkpoint).
    #[must_use]
    pub fn committed_seq(&self) -> u64 {
        self.committed_seq
    }

    /// Operations appended but not yet committed.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Bytes of the journal file as committed (header included).
    #[must_use]
    pub fn journal_len(&self) -> u64 {
        self.journal_len
    }
}

fn exhausted() -> LayoutError {
    LayoutError::Config { field: "journal", message: "sequence numbers are exhausted (2^64 operations)".into() }
}

// ---------------------------------------------------------------------------------------------
// Encoding and decoding.

fn encode_snapshot(map: &BlockMap, seq: u64) -> Result<Vec<u8>> {
    let payload = serde_json::to_vec(&map.to_snapshot())
        .map_err(|e| LayoutError::Config { field: "snapshot", message: format!("cannot encode the map: {e}") })?;
    let mut out = Vec::with_capacity(SNAPSHOT_HEADER_BYTES as usize + payload.len());
    out.extend_from_slice(&SNAPSHOT_MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&out);
    h.update(&payload);
    out.extend_from_slice(&h.finalize().to_le_bytes());
    out.extend_from_slice(&payload);
    Ok(out)
}

/// An empty journal following snapshot `base`: the header, both marks at its end.
fn encode_journal_header(base: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(JOURNAL_HEADER_BYTES as usize);
    out.extend_from_slice(&JOURNAL_MAGIC);
    out.extend_from_slice(&JOURNAL_FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&base.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    let mark = encode_mark_bytes(JOURNAL_HEADER_BYTES, base);
    out.extend_from_slice(&mark);
    out.extend_from_slice(&mark);
    out
}

/// How far a journal was durable when a commit returned: see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncedMark {
    /// Bytes of the journal, header included.
    pub len: u64,
    /// Sequence number of its last record (the base when it has none).
    pub seq: u64,
}

fn encode_mark_bytes(len: u64, seq: u64) -> [u8; SYNC_MARK_BYTES as usize] {
    let mut out = [0u8; SYNC_MARK_BYTES as usize];
    out[..8].copy_from_slice(&len.to_le_bytes());
    out[8..16].copy_from_slice(&seq.to_le_bytes());
    let crc = crc32fast::hash(&out[..16]);
    out[16..20].copy_from_slice(&crc.to_le_bytes());
    out
}

/// The synced mark for a journal of `len` bytes whose last record is `seq`, and the offset it is
/// written at (mark `seq mod 2`). For whoever writes a journal file other than through
/// [`Journal::commit`] (the block server mirrors an in-memory journal): write it in place after
/// the records are durable, then sync.
#[must_use]
pub fn encode_sync_mark(len: u64, seq: u64) -> (u64, [u8; SYNC_MARK_BYTES as usize]) {
    (JOURNAL_BASE_BYTES + (seq % 2) * SYNC_MARK_BYTES, encode_mark_bytes(len, seq))
}

/// The sequence number of the last whole record in `records` (records back to back, as a
/// commit appends them); `None` when there is none.
#[must_use]
pub fn last_record_seq(records: &[u8]) -> Option<u64> {
    let frame = RECORD_FRAME_BYTES as usize;
    let mut at = 0usize;
    let mut last = None;
    while records.len().saturating_sub(at) >= frame {
        let end = at.checked_add(frame)?.checked_add(u32_at(records, at) as usize)?;
        if end > records.len() {
            break;
        }
        last = Some(u64_at(records, at + 8));
        at = end;
    }
    last
}

/// The valid mark with the highest `seq`, or an error when both are damaged.
fn decode_sync_marks(file: &str, b: &[u8], base: u64) -> Result<SyncedMark> {
    let mut best: Option<SyncedMark> = None;
    for k in 0..2u64 {
        let at = (JOURNAL_BASE_BYTES + k * SYNC_MARK_BYTES) as usize;
        let m = &b[at..at + SYNC_MARK_BYTES as usize];
        let valid = u32_at(m, 16) == crc32fast::hash(&m[..16]) && m[20..].iter().all(|&x| x == 0);
        let mark = SyncedMark { len: u64_at(m, 0), seq: u64_at(m, 8) };
        if valid && mark.len >= JOURNAL_HEADER_BYTES && mark.seq >= base && best.is_none_or(|b| mark.seq > b.seq) {
            best = Some(mark);
        }
    }
    best.ok_or_else(|| LayoutError::Corrupt {
        file: file.to_string(),
        offset: JOURNAL_BASE_BYTES,
        record: None,
        message: "bad header: both synced marks are damaged, so how far the journal was durable is unknown".into(),
    })
}

fn encode_record(out: &mut Vec<u8>, seq: u64, flags: u8, payload: &[u8]) {
    // `append` bounds the payload by MAX_RECORD_PAYLOAD, so the length fits.
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX).to_le_bytes();
    out.extend_from_slice(&len);
    out.extend_from_slice(&record_crc(&len, &seq.to_le_bytes(), flags, payload).to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.push(flags);
    out.extend_from_slice(payload);
}

fn record_crc(len: &[u8], seq: &[u8], flags: u8, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(len);
    h.update(seq);
    h.update(&[flags]);
    h.update(payload);
    h.finalize()
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn check_magic_version(file: &str, b: &[u8], magic: &[u8; 8], what: &str, versions: &[u32]) -> Result<u32> {
    if b[..8] != magic[..] {
        return Err(LayoutError::Corrupt {
            file: file.to_string(),
            offset: 0,
            record: None,
            message: format!(
                "bad header: magic {:?} is not {:?}: not a freeblock {what}",
                String::from_utf8_lossy(&b[..8]),
                String::from_utf8_lossy(magic)
            ),
        });
    }
    let v = u32_at(b, 8);
    if !versions.contains(&v) {
        let read: Vec<String> = versions.iter().map(u32::to_string).collect();
        return Err(LayoutError::Corrupt {
            file: file.to_string(),
            offset: 8,
            record: None,
            message: format!("bad header: format version {v} is not supported (this build reads {})", read.join(" and ")),
        });
    }
    Ok(v)
}

/// The snapshot's sequence number and map.
fn decode_snapshot(file: &str, b: &[u8]) -> Result<(u64, BlockMap)> {
    let corrupt =
        |offset: u64, message: String| LayoutError::Corrupt { file: file.to_string(), offset, record: None, message };
    let hdr = SNAPSHOT_HEADER_BYTES as usize;
    if b.len() < hdr {
        return Err(corrupt(
            0,
            format!("truncated snapshot: the file is {} bytes, the header alone is {hdr}", b.len()),
        ));
    }
    check_magic_version(file, b, &SNAPSHOT_MAGIC, "map snapshot", &[FORMAT_VERSION])?;
    let seq = u64_at(b, 12);
    let plen = u64_at(b, 20);
    let have = (b.len() - hdr) as u64;
    if have < plen {
        return Err(corrupt(
            SNAPSHOT_HEADER_BYTES + have,
            format!("truncated snapshot: the header promises {plen} payload bytes, the file holds {have}"),
        ));
    }
    if have > plen {
        return Err(corrupt(
            SNAPSHOT_HEADER_BYTES + plen,
            format!("{} unexpected bytes after the {plen}-byte payload", have - plen),
        ));
    }
    let stored = u32_at(b, 28);
    let mut h = crc32fast::Hasher::new();
    h.update(&b[..28]);
    h.update(&b[hdr..]);
    let computed = h.finalize();
    if stored != computed {
        return Err(corrupt(
            28,
            format!("snapshot checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"),
        ));
    }
    let snap: MapSnapshot = serde_json::from_slice(&b[hdr..])
        .map_err(|e| corrupt(SNAPSHOT_HEADER_BYTES, format!("snapshot payload does not decode: {e}")))?;
    let map = BlockMap::from_snapshot(snap).map_err(|e| corrupt(SNAPSHOT_HEADER_BYTES, e.to_string()))?;
    Ok((seq, map))
}

/// The journal's base sequence number and its synced mark (`None` for a version-1 journal).
fn decode_journal_header(file: &str, b: &[u8]) -> Result<(u64, Option<SyncedMark>)> {
    let short = |hdr: u64| LayoutError::Corrupt {
        file: file.to_string(),
        offset: 0,
        record: None,
        message: format!("bad header: the file is {} bytes, the header is {hdr}", b.len()),
    };
    if b.len() < JOURNAL_BASE_BYTES as usize {
        return Err(short(JOURNAL_BASE_BYTES));
    }
    let version = check_magic_version(file, b, &JOURNAL_MAGIC, "map journal", &[JOURNAL_FORMAT_UNMARKED, JOURNAL_FORMAT_VERSION])?;
    let stored = u32_at(b, 20);
    let computed = crc32fast::hash(&b[..20]);
    if stored != computed {
        return Err(LayoutError::Corrupt {
            file: file.to_string(),
            offset: 20,
            record: None,
            message: format!("bad header: checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"),
        });
    }
    let base = u64_at(b, 12);
    if version == JOURNAL_FORMAT_UNMARKED {
        return Ok((base, None));
    }
    if b.len() < JOURNAL_HEADER_BYTES as usize {
        return Err(short(JOURNAL_HEADER_BYTES));
    }
    Ok((base, Some(decode_sync_marks(file, b, base)?)))
}

/// Where the records of a journal start.
fn records_start(b: &[u8]) -> usize {
    if u32_at(b, 8) == JOURNAL_FORMAT_UNMARKED { JOURNAL_BASE_BYTES as usize } else { JOURNAL_HEADER_BYTES as usize }
}

/// One intact record.
struct Record {
    /// 1 = first after the header.
    number: u64,
    offset: u64,
    /// Frame and payload bytes.
    len: u64,
    seq: u64,
    op: MapOp,
}

struct Scan {
    records: Vec<Record>,
    /// Records `..committed` end with a commit flag; the rest belong to an unfinished commit.
    committed: usize,
    /// Bytes of the torn or corrupt tail.
    dropped_bytes: u64,
}

/// A frame at `at` that is complete and whose CRC matches: `(seq, flags, payload range end)`.
fn intact_frame(b: &[u8], at: usize) -> Option<(u64, u8, usize)> {
    let frame = RECORD_FRAME_BYTES as usize;
    if b.len().saturating_sub(at) < frame {
        return None;
    }
    let n = u32_at(b, at);
    if n > MAX_RECORD_PAYLOAD {
        return None;
    }
    let end = at.checked_add(frame)?.checked_add(n as usize)?;
    if end > b.len() {
        return None;
    }
    let stored = u32_at(b, at + 4);
    let flags = b[at + 16];
    if record_crc(&b[at..at + 4], &b[at + 8..at + 16], flags, &b[at + frame..end]) != stored {
        return None;
    }
    Some((u64_at(b, at + 8), flags, end))
}

/// Reads every intact record after the header, stopping at a torn or corrupt tail after the
/// synced mark (`synced`); damage before it is refused.
fn scan_records(file: &str, b: &[u8], base: u64, synced: Option<SyncedMark>) -> Result<Scan> {
    let mut records = Vec::new();
    let mut committed = 0;
    let mut at = records_start(b);
    let mut expected = base.wrapping_add(1);
    if let Some(m) = synced.filter(|m| (b.len() as u64) < m.len) {
        return Err(LayoutError::Corrupt {
            file: file.to_string(),
            offset: b.len() as u64,
            record: None,
            message: format!(
                "the journal ends at byte {}, but commits up to sequence {} were synced through byte {}: it was cut short, \
                 which no crash does (only the append after the synced mark can be torn)",
                b.len(),
                m.seq,
                m.len
            ),
        });
    }
    while at < b.len() {
        let number = records.len() as u64 + 1;
        let corrupt = |message: String| LayoutError::Corrupt {
            file: file.to_string(),
            offset: at as u64,
            record: Some(number),
            message,
        };
        let Some((seq, flags, end)) = intact_frame(b, at) else {
            // Torn or corrupt. A crash explains it only after the synced mark, and only if
            // nothing intact follows.
            let why = describe_damage(b, at);
            if let Some(m) = synced.filter(|m| (at as u64) < m.len) {
                return Err(corrupt(format!(
                    "{why} in a commit synced before the crash (commits up to sequence {} were synced through byte {}): \
                     damage, not a torn tail",
                    m.seq, m.len
                )));
            }
            if let Some(next) = next_intact(b, at, expected) {
                return Err(corrupt(format!(
                    "{why}, but an intact record follows at byte {next}: the journal is damaged in the middle, \
                     not torn by a crash"
                )));
            }
            return Ok(Scan { records, committed, dropped_bytes: (b.len() - at) as u64 });
        };
        if seq != expected {
            return Err(corrupt(format!("sequence gap: sequence number {seq}, expected {expected}")));
        }
        if flags & !FLAG_COMMIT != 0 {
            return Err(corrupt(format!("unknown flags {flags:#04x}")));
        }
        let frame = RECORD_FRAME_BYTES as usize;
        let op: MapOp = serde_json::from_slice(&b[at + frame..end])
            .map_err(|e| corrupt(format!("the operation does not decode: {e}")))?;
        records.push(Record { number, offset: at as u64, len: (end - at) as u64, seq, op });
        if flags & FLAG_COMMIT != 0 {
            committed = records.len();
        }
        expected = expected.wrapping_add(1);
        at = end;
    }
    Ok(Scan { records, committed, dropped_bytes: 0 })
}

/// Refuses a scan whose commits stop short of the synced mark (records intact but a commit flag
/// or a record missing before it: damage).
fn check_reaches_mark(file: &str, scan: &Scan, base: u64, synced: Option<SyncedMark>) -> Result<()> {
    let Some(m) = synced else { return Ok(()) };
    let last = scan.records[..scan.committed].last();
    let (end, seq) = last.map_or((JOURNAL_HEADER_BYTES, base), |r| (r.offset + r.len, r.seq));
    if seq < m.seq || end < m.len {
        return Err(LayoutError::Corrupt {
            file: file.to_string(),
            offset: end,
            record: None,
            message: format!(
                "the last whole commit ends at byte {end} (sequence {seq}), but commits up to sequence {} were synced through byte {}: \
                 damage, not a torn tail",
                m.seq, m.len
            ),
        });
    }
    Ok(())
}

fn describe_damage(b: &[u8], at: usize) -> String {
    let frame = RECORD_FRAME_BYTES as usize;
    let left = b.len() - at;
    if left < frame {
        return format!("a {left}-byte fragment of a record frame");
    }
    let n = u32_at(b, at);
    if n > MAX_RECORD_PAYLOAD {
        return format!("payload length {n} is over the limit {MAX_RECORD_PAYLOAD}");
    }
    if (n as usize).saturating_add(frame) > left {
        return format!("the record needs {} bytes, the file has {left} left", n as usize + frame);
    }
    "checksum mismatch".into()
}

/// The offset of the first intact record after the damaged one at `at`, with a plausible
/// sequence number (from `expected`, allowing one per record that could fit in between).
fn next_intact(b: &[u8], at: usize, expected: u64) -> Option<usize> {
    let frame = RECORD_FRAME_BYTES as usize;
    let max_skipped = (b.len() - at) as u64 / RECORD_FRAME_BYTES + 1;
    (at + 1..b.len().saturating_sub(frame - 1)).find(|&q| {
        let seq = u64_at(b, q + 8);
        seq >= expected && seq - expected <= max_skipped && intact_frame(b, q).is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::map::MapConfig;

    fn map() -> BlockMap {
        BlockMap::new(MapConfig::region(0, 64, 4)).unwrap()
    }

    fn write(l: u64, at: u64) -> MapOp {
        MapOp::Write { req: WriteRequest { logical: l, blocks: 1, candidates: Candidates::single(at) }, chosen: at }
    }

    #[test]
    fn ops_round_trip_through_json() {
        let ops = [
            write(1, 8),
            MapOp::Trim { logical: 0, blocks: 3 },
            MapOp::AddCopy { logical: 1, lbn: 12 },
            MapOp::DropCopy { logical: 1, lbn: 12 },
            MapOp::Reserve { extent: PhysRange::new(0, 8) },
            MapOp::Release { candidates: Candidates::ranges(vec![PhysRange::new(0, 8)], 4), blocks: 1 },
            MapOp::Pin { extent: PhysRange::new(0, 8) },
            MapOp::Unpin { extent: PhysRange::new(0, 8) },
            MapOp::SetDirty { logical: 3, dirty: true },
        ];
        for op in ops {
            let s = serde_json::to_string(&op).unwrap();
            assert_eq!(serde_json::from_str::<MapOp>(&s).unwrap(), op, "{s}");
        }
    }

    /// The files a crash during the last commit leaves: its records cut at `cut`, the synced
    /// marks as they were `before` it (the crash came before its mark was written).
    fn crashed_in_last_commit(before: &MemStorage, after: &MemStorage, cut: usize) -> MemStorage {
        let mut crashed = after.clone();
        let j = crashed.journal.as_mut().unwrap();
        j.truncate(cut);
        let marks = JOURNAL_BASE_BYTES as usize..JOURNAL_HEADER_BYTES as usize;
        j[marks.clone()].copy_from_slice(&before.journal.as_ref().unwrap()[marks]);
        crashed
    }

    #[test]
    fn unfinished_commit_is_dropped_whole() {
        let mut m = map();
        let mut j = Journal::create(MemStorage::new(), &m).unwrap();
        j.log(&mut m, write(1, 8)).unwrap();
        j.commit().unwrap();
        let committed = m.to_snapshot();
        let before = j.journal_len() as usize;
        let files_before = j.storage().clone();
        j.log(&mut m, write(2, 16)).unwrap();
        j.log(&mut m, MapOp::SetDirty { logical: 2, dirty: true }).unwrap();
        j.commit().unwrap();
        // The crash kept the first record of the second commit, not its last.
        let bytes = j.storage().journal.clone().unwrap();
        let first_len = intact_frame(&bytes, before).unwrap().2;
        *j.storage_mut() = crashed_in_last_commit(&files_before, j.storage(), first_len);
        let (r, rep) = Journal::recover(j.storage(), DirtyRule::Logged).unwrap();
        assert_eq!(r.to_snapshot(), committed);
        assert_eq!((rep.records_replayed, rep.uncommitted_dropped), (1, 1));
        assert_eq!(rep.bytes_dropped, (first_len - before) as u64);
    }

    #[test]
    fn create_over_old_files_never_replays_their_records() {
        let mut m = map();
        let mut j = Journal::create(MemStorage::new(), &m).unwrap();
        j.log(&mut m, write(1, 8)).unwrap();
        j.commit().unwrap();
        let old = j.into_storage();
        let mut fresh = map();
        fresh.pin(PhysRange::new(0, 4)).unwrap();
        let j = Journal::create(old.clone(), &fresh).unwrap();
        let (r, rep) = Journal::recover(j.storage(), DirtyRule::Logged).unwrap();
        assert_eq!((r.to_snapshot(), rep.records_replayed), (fresh.to_snapshot(), 0));
        // A crash inside `create`, after the empty journal and before the snapshot: the old
        // snapshot without the old records, never the new snapshot with them.
        let mut crashed = old;
        crashed.journal = Some(encode_journal_header(0));
        let (r, _) = Journal::recover(&crashed, DirtyRule::Logged).unwrap();
        assert_eq!(r.to_snapshot(), map().to_snapshot());
    }

    #[test]
    fn stale_journal_after_checkpoint_crash_is_skipped() {
        let mut m = map();
        let mut j = Journal::create(MemStorage::new(), &m).unwrap();
        j.log(&mut m, write(1, 8)).unwrap();
        j.commit().unwrap();
        let old_journal = j.storage().journal.clone();
        j.log(&mut m, write(2, 12)).unwrap();
        j.checkpoint(&m).unwrap();
        // Crash between the snapshot's rename and the journal's.
        j.storage_mut().journal = old_journal;
        let (r, rep) = Journal::recover(j.storage(), DirtyRule::Logged).unwrap();
        assert_eq!(r.to_snapshot(), m.to_snapshot());
        assert_eq!((rep.records_skipped, rep.records_replayed, rep.snapshot_seq), (1, 0, 2));
    }

    #[test]
    fn open_continues_the_sequence_after_a_torn_tail() {
        let mut m = map();
        let mut j = Journal::create(MemStorage::new(), &m).unwrap();
        j.log(&mut m, write(1, 8)).unwrap();
        j.commit().unwrap();
        let files_before = j.storage().clone();
        j.log(&mut m, write(2, 12)).unwrap();
        j.commit().unwrap();
        let len = j.storage().journal.as_ref().unwrap().len();
        let crashed = crashed_in_last_commit(&files_before, j.storage(), len - 3);
        let (mut j2, mut m2, rep) = Journal::open(crashed, DirtyRule::Uncertain).unwrap();
        assert!(rep.bytes_dropped > 0);
        assert_eq!(rep.marked_dirty, 1);
        j2.log(&mut m2, write(3, 20)).unwrap();
        j2.commit().unwrap();
        let (r, rep) = Journal::recover(j2.storage(), DirtyRule::Logged).unwrap();
        assert_eq!(r.to_snapshot(), m2.to_snapshot());
        assert_eq!((rep.snapshot_seq, rep.last_seq, rep.bytes_dropped), (1, 2, 0));
        assert!(r.is_dirty(1) && !r.is_dirty(3));
    }

    #[test]
    fn damage_before_the_synced_mark_is_refused_naming_the_offset() {
        let mut m = map();
        let mut j = Journal::create(MemStorage::new(), &m).unwrap();
        let mut ends = Vec::new();
        for (l, at) in [(1, 8), (2, 12), (3, 16)] {
            j.log(&mut m, write(l, at)).unwrap();
            j.commit().unwrap();
            ends.push(j.journal_len() as usize);
        }
        // Cut in the middle of the second commit: the third was synced, so no crash did this.
        let mut cut = j.storage().clone();
        cut.journal.as_mut().unwrap().truncate(ends[0] + 5);
        let msg = Journal::recover(&cut, DirtyRule::Logged).unwrap_err().to_string();
        let want = format!("memory:map.journal, byte {}: the journal ends at byte {}, but commits up to sequence 3 were synced through byte {}", ends[0] + 5, ends[0] + 5, ends[2]);
        assert!(msg.starts_with(&want), "{msg}");
        // Cut at a record boundary: every record left is intact, still refused.
        cut.journal.as_mut().unwrap().truncate(ends[0]);
        let msg = Journal::recover(&cut, DirtyRule::Logged).unwrap_err().to_string();
        assert!(msg.contains(&format!("the journal ends at byte {}", ends[0])), "{msg}");
        // One flipped byte in the last record of the last synced commit.
        let mut flipped = j.storage().clone();
        flipped.journal.as_mut().unwrap()[ends[1] + 20] ^= 0x10;
        let msg = Journal::recover(&flipped, DirtyRule::Logged).unwrap_err().to_string();
        assert!(msg.starts_with(&format!("memory:map.journal, record 3 at byte {}: checksum mismatch in a commit synced before the crash", ends[1])), "{msg}");
        // Both marks damaged: refused, naming the header.
        let mut marks = j.storage().clone();
        for at in [JOURNAL_BASE_BYTES as usize + 3, (JOURNAL_BASE_BYTES + SYNC_MARK_BYTES) as usize + 3] {
            marks.journal.as_mut().unwrap()[at] ^= 1;
        }
        let msg = Journal::recover(&marks, DirtyRule::Logged).unwrap_err().to_string();
        assert!(msg.starts_with("memory:map.journal, byte 24: bad header: both synced marks are damaged"), "{msg}");
        // One mark damaged (a crash tearing it): the other, older, bound is used.
        let mut one = j.storage().clone();
        one.journal.as_mut().unwrap()[encode_sync_mark(0, 3).0 as usize] ^= 1;
        let (r, rep) = Journal::recover(&one, DirtyRule::Logged).unwrap();
        assert_eq!((r.to_snapshot(), rep.records_replayed), (m.to_snapshot(), 3));
    }

    #[test]
    fn a_version_1_journal_is_still_read() {
        let mut m = map();
        let mut j = Journal::create(MemStorage::new(), &m).unwrap();
        j.log(&mut m, write(1, 8)).unwrap();
        j.commit().unwrap();
        let mut old = j.storage().clone();
        let bytes = old.journal.as_mut().unwrap();
        bytes.drain(JOURNAL_BASE_BYTES as usize..JOURNAL_HEADER_BYTES as usize);
        bytes[8..12].copy_from_slice(&JOURNAL_FORMAT_UNMARKED.to_le_bytes());
        let crc = crc32fast::hash(&bytes[..20]);
        bytes[20..24].copy_from_slice(&crc.to_le_bytes());
        let (r, rep) = Journal::recover(&old, DirtyRule::Logged).unwrap();
        assert_eq!((r.to_snapshot(), rep.records_replayed), (m.to_snapshot(), 1));
    }

    #[test]
    fn refused_ops_are_not_logged_and_replay_failures_name_the_record() {
        let mut m = map();
        let mut j = Journal::create(MemStorage::new(), &m).unwrap();
        assert!(j.log(&mut m, MapOp::SetDirty { logical: 4, dirty: true }).is_err());
        assert_eq!(j.pending(), 0);
        // Log an operation the map refuses on replay by appending it behind the map's back.
        j.append(&MapOp::DropCopy { logical: 4, lbn: 8 }).unwrap();
        j.commit().unwrap();
        let e = Journal::recover(j.storage(), DirtyRule::Logged).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, LayoutError::Replay { record: 1, offset: 72, .. }), "{msg}");
        assert!(msg.contains("memory:map.journal") && msg.contains("record 1 at byte 72"), "{msg}");
    }

    #[test]
    fn files_beside_a_store_are_named_after_it() {
        let dir = std::env::temp_dir().join(format!("freeblock-journal-beside-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let store = dir.join("disk.img");
        let mut m = map();
        let mut j = Journal::create(DirStorage::beside(&store).unwrap(), &m).unwrap();
        j.log(&mut m, write(2, 16)).unwrap();
        j.commit().unwrap();
        assert!(dir.join("disk.img.map.snapshot").is_file() && dir.join("disk.img.map.journal").is_file());
        assert!(!dir.join("map.snapshot").exists(), "a store's map files carry its name");
        let (r, rep) = Journal::recover(&DirStorage::beside(&store).unwrap(), DirtyRule::Logged).unwrap();
        assert_eq!((r.to_snapshot(), rep.records_replayed), (m.to_snapshot(), 1));
        fs::remove_dir_all(&dir).unwrap();
    }
}
