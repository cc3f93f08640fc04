//! The bytes: one sparse backing file holding the whole modelled disk, byte `s · sector` of
//! the file at disk sector `s`. Without a layout policy byte `i` of the export is byte `i` of
//! the file; with one, the policy's map says where each block is ([`crate::placement`]).
//! Writes are visible to every connection at once (one file); FLUSH and FUA make them durable
//! with `fdatasync`.
//!
//! ```text
//!  disk    [0 ............................................ capacity · sector bytes)
//!  file    [0 ............................................ same)   sparse: never-written ranges
//!                                                                  take no space and read as zeroes
//!  beside it: STORE.layout.json   which disk and layout the bytes belong to (written at creation)
//!             STORE.map.snapshot, STORE.map.journal   the layout policy's map (crate::placement)
//!             STORE.sums          the scrub's checksums (crate::scrub)
//!             STORE.lock          held (flock) by the one server using the store; says its pid
//! ```
//!
//! One store has one server: two would each append to the map's journal and acknowledge writes
//! the other's map does not know, so the second is refused, naming the first's pid. A store file
//! that is missing while its map is there is refused too (the map would place reads in an empty
//! file), and FLUSH checks that the path still names the file being written ([`Store::sync`]).
//!
//! | operation | file |
//! |---|---|
//! | READ | `pread` |
//! | WRITE | `pwrite` (then `fdatasync` with FUA) |
//! | WRITE_ZEROES | `pwrite` of zeroes, 1 MiB at a time |
//! | TRIM | nothing: the protocol lets a server ignore it |
//! | FLUSH | `fdatasync` |

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use freeblock::experiment::LayoutSpec;
use serde::{Deserialize, Serialize};

/// What a store belongs to: kept in `STORE.layout.json`, checked at every open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreMeta {
    /// The disk's name (as its spec gives it).
    pub disk: String,
    /// The disk's capacity, sectors.
    pub disk_sectors: u64,
    /// Bytes per sector.
    pub sector_bytes: u64,
    /// The layout policy whose map places the bytes (`None`: byte `i` of the export is byte `i`).
    pub layout: Option<LayoutSpec>,
    /// Whether the store was created empty by the server (so never-written blocks are zeroes).
    pub created_empty: bool,
}

impl StoreMeta {
    /// The store's size, bytes.
    #[must_use]
    pub fn store_bytes(&self) -> u64 {
        self.disk_sectors * self.sector_bytes
    }

    /// Reads the metadata beside `store`, `None` if there is none.
    ///
    /// # Errors
    /// [`StoreError::Io`], [`StoreError::Meta`] for a file that does not parse.
    pub fn read(store: &Path) -> Result<Option<Self>, StoreError> {
        let path = beside(store, "layout.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| StoreError::Meta { path, message: e.to_string() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { path, source }),
        }
    }

    /// Writes the metadata beside `store` (atomically: a temporary file renamed over it).
    ///
    /// # Errors
    /// [`StoreError::Io`].
    pub fn write(&self, store: &Path) -> Result<(), StoreError> {
        let path = beside(store, "layout.json");
        let tmp = beside(store, "layout.json.tmp");
        let io = |source| StoreError::Io { path: path.clone(), source };
        let text = serde_json::to_string_pretty(self).map_err(|e| StoreError::Meta { path: path.clone(), message: e.to_string() })?;
        std::fs::write(&tmp, text).map_err(io)?;
        File::open(&tmp).and_then(|f| f.sync_all()).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }
}

/// `<store>.<suffix>`: a file kept beside the store.
#[must_use]
pub fn beside(store: &Path, suffix: &str) -> PathBuf {
    let mut name = store.as_os_str().to_os_string();
    name.push(format!(".{suffix}"));
    PathBuf::from(name)
}

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened or sized.
    #[error("store {path}: {source}")]
    Io {
        /// The backing file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The metadata beside the store does not parse.
    #[error("store metadata {path}: {message}")]
    Meta {
        /// The metadata file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The store was made for another disk or layout.
    #[error("store {path} belongs to {found}, but the configuration asks for {want}: a store belongs to one disk and one layout (use another path, or the configuration it was made with)")]
    Belongs {
        /// The backing file.
        path: PathBuf,
        /// What the store's metadata says.
        found: String,
        /// What the configuration says.
        want: String,
    },
    /// A store with bytes at logical addresses (no metadata) opened with a layout policy.
    #[error("store {path} has no {path}.layout.json: its bytes are at the export's addresses, and a layout policy would read them from the wrong places (use a new store for a layout)")]
    Unplaced {
        /// The backing file.
        path: PathBuf,
    },
    /// Another process (or another server in this one) holds the store.
    #[error("store {path} is in use by {holder} (it holds {lock}): one store has one server; stop that one or use another store")]
    InUse {
        /// The backing file.
        path: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// What the lock file says of its holder.
        holder: String,
    },
    /// The map's files are there but the store file is not: its bytes were deleted.
    #[error("store {path} does not exist, but its layout's map {map} does: the map places blocks in a file that is gone, and an empty store would serve them as zeroes (restore the store, or delete the map's files to start anew)")]
    MapWithoutStore {
        /// The backing file.
        path: PathBuf,
        /// The map file found.
        map: PathBuf,
    },
    /// The path no longer names the file being served (deleted or replaced while serving).
    #[error("store {path} was deleted or replaced while serving: writes went to a file nobody can open again")]
    Gone {
        /// The backing file.
        path: PathBuf,
    },
    /// The file exists with another size than the export's.
    #[error("store {path}: {found} bytes, but the disk exports {want}: a store belongs to one disk (use another path, or the disk it was made for)")]
    Size {
        /// The backing file.
        path: PathBuf,
        /// Its size.
        found: u64,
        /// The export's size.
        want: u64,
    },
}

/// The backing file.
pub struct Store {
    file: File,
    size: u64,
    created: bool,
    path: PathBuf,
    /// Held for the store's life: the advisory lock that keeps a second server out.
    _lock: File,
    /// Fault injection ([`Store::limit_space`]): bytes the file system has left (`u64::MAX`:
    /// no limit).
    space_left: AtomicU64,
}

/// The error a full file system gives.
#[must_use]
pub fn no_space() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::ENOSPC)
}

/// Whether `e` says the file system is full (or the user's quota is).
#[must_use]
pub fn is_no_space(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// How long [`lock`] waits for a held lock before saying the store is in use. A lock just let
/// go can stay held for a moment: the open file description it belongs to is shared with any
/// child another thread of this process forked and has not yet exec'd (close-on-exec closes it
/// only at the exec), so a server restarted on its store in the same process can find its own
/// pid's lock still there. A server really using the store holds it far longer than this.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Takes the store's advisory lock (`STORE.lock`, `flock` exclusive, retrying for
/// [`LOCK_PATIENCE`]) and writes the holder's pid into it. The kernel drops the lock when the
/// process ends, however it ends, so a lock file left by a killed server is taken over.
fn lock(store: &Path) -> Result<File, StoreError> {
    let path = beside(store, "lock");
    let io = |source| StoreError::Io { path: path.clone(), source };
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
    let began = std::time::Instant::now();
    // SAFETY: flock on a descriptor this function owns; no memory is passed.
    while unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(io(err));
        }
        if began.elapsed() < LOCK_PATIENCE {
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        }
        let mut said = String::new();
        let _ = file.take(256).read_to_string(&mut said);
        let holder = if said.trim().is_empty() { "another server (its pid not yet written)".to_string() } else { said.trim().to_string() };
        return Err(StoreError::InUse { path: store.to_path_buf(), lock: path, holder });
    }
    file.set_len(0).map_err(io)?;
    file.write_all_at(format!("pid {}\n", std::process::id()).as_bytes(), 0).map_err(io)?;
    Ok(file)
}

impl Store {
    /// Opens (creating, sparse, with its metadata) the backing file of the disk and layout `meta`
    /// describes. A store made for another disk or layout is refused, naming both; so is a store
    /// without metadata (its bytes are at logical addresses) opened with a layout. Returns the
    /// store and the metadata it holds (whose `created_empty` says what its bytes were).
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn open(path: &Path, meta: &StoreMeta) -> Result<(Self, StoreMeta), StoreError> {
        let io = |source| StoreError::Io { path: path.to_path_buf(), source };
        let size = meta.store_bytes();
        let lock = lock(path)?;
        let existing = StoreMeta::read(path)?;
        if meta.layout.is_some() && !path.exists() {
            if let Some(map) = ["map.snapshot", "map.journal"].iter().map(|s| beside(path, s)).find(|m| m.exists()) {
                return Err(StoreError::MapWithoutStore { path: path.to_path_buf(), map });
            }
        }
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)?;
        let found = file.metadata().map_err(io)?.len();
        let describe = |m: &StoreMeta| format!("disk {} ({} sectors of {} bytes), layout {}", m.disk, m.disk_sectors, m.sector_bytes, m.layout.as_ref().map_or("none".into(), |l| serde_json::to_string(l).unwrap_or_default()));
        let held = match existing {
            Some(m) => {
                if (&m.disk, m.disk_sectors, m.sector_bytes, &m.layout) != (&meta.disk, meta.disk_sectors, meta.sector_bytes, &meta.layout) {
                    return Err(StoreError::Belongs { path: path.to_path_buf(), found: describe(&m), want: describe(meta) });
                }
                m
            }
            None if found != 0 && meta.layout.is_some() => return Err(StoreError::Unplaced { path: path.to_path_buf() }),
            None => {
                let m = StoreMeta { created_empty: found == 0, ..meta.clone() };
                m.write(path)?;
                m
            }
        };
        if found == 0 {
            file.set_len(size).map_err(io)?;
        } else if found != size {
            return Err(StoreError::Size { path: path.to_path_buf(), found, want: size });
        }
        Ok((Self { file, size, created: found == 0, path: path.to_path_buf(), _lock: lock, space_left: AtomicU64::new(u64::MAX) }, held))
    }

    /// Whether this open created the store (so it holds only zeroes).
    #[must_use]
    pub fn created(&self) -> bool {
        self.created
    }

    /// The store's size (the whole disk), bytes.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Reads `buf.len()` bytes at `offset`.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    /// The first byte at or after `from` that holds data (not a hole of the sparse file), and
    /// the end of that data run; `None` past the last data.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn data_run(&self, from: u64) -> std::io::Result<Option<(u64, u64)>> {
        let seek = |whence, at: u64| -> std::io::Result<Option<u64>> {
            let at = libc::off_t::try_from(at).map_err(std::io::Error::other)?;
            // SAFETY: lseek on a descriptor the store owns; every access is positioned (pread,
            // pwrite), so moving the file offset disturbs nothing.
            let r = unsafe { libc::lseek(self.file.as_raw_fd(), at, whence) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                return if e.raw_os_error() == Some(libc::ENXIO) { Ok(None) } else { Err(e) };
            }
            Ok(Some(r as u64))
        };
        let Some(start) = seek(libc::SEEK_DATA, from)? else { return Ok(None) };
        let end = seek(libc::SEEK_HOLE, start)?.unwrap_or(self.size);
        Ok(Some((start, end)))
    }

    /// Fault injection, for tests of a full file system (a small tmpfs needs privileges a test
    /// does not have): from now on the store and its map's journal may take `bytes` more bytes
    /// of writes, every byte counted (overwrites too); past that each write fails with `ENOSPC`
    /// and writes nothing, as on a full file system.
    /// `u64::MAX` lifts the limit.
    pub fn limit_space(&self, bytes: u64) {
        self.space_left.store(bytes, AtomicOrdering::Relaxed);
    }

    /// Takes `bytes` of the space [`Store::limit_space`] left (always succeeds without a limit).
    ///
    /// # Errors
    /// `ENOSPC` when less is left; nothing is taken then.
    pub fn take_space(&self, bytes: u64) -> std::io::Result<()> {
        let take = |left: u64| if left == u64::MAX { Some(left) } else { left.checked_sub(bytes) };
        self.space_left.fetch_update(AtomicOrdering::Relaxed, AtomicOrdering::Relaxed, take).map(drop).map_err(|_| no_space())
    }

    /// Writes `data` at `offset`.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.take_space(data.len() as u64)?;
        self.file.write_all_at(data, offset)
    }

    /// Writes `length` zero bytes at `offset`.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn write_zeroes(&self, offset: u64, length: u64) -> std::io::Result<()> {
        const CHUNK: u64 = 1 << 20;
        self.take_space(length)?;
        let zeroes = vec![0u8; CHUNK.min(length) as usize];
        let mut at = 0;
        while at < length {
            let n = CHUNK.min(length - at);
            self.file.write_all_at(&zeroes[..n as usize], offset + at)?;
            at += n;
        }
        Ok(())
    }

    /// Zeroes `length` bytes at `offset` by punching a hole in the sparse file (the file system
    /// zeroes the partial blocks at the ends and frees the whole ones), falling back to writing
    /// zeroes where punching is not supported. Costs no space and no data copied, however long.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn zero_range(&self, offset: u64, length: u64) -> std::io::Result<()> {
        if length == 0 {
            return Ok(());
        }
        let (Ok(at), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(length)) else {
            return Err(std::io::Error::other(format!("{length} bytes at {offset} do not fit a file offset")));
        };
        // SAFETY: fallocate on a descriptor the store owns; no memory is passed.
        let r = unsafe { libc::fallocate(self.file.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, at, len) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::ENOSYS) => self.write_zeroes(offset, length),
            _ => Err(e),
        }
    }

    /// Makes every completed write durable, and checks that they went to the store: a file
    /// deleted or replaced while serving takes writes nobody can read after a restart, so its
    /// FLUSH fails (the open file's device and inode against the path's).
    ///
    /// # Errors
    /// The file's I/O error; [`std::io::ErrorKind::NotFound`] for a store deleted or replaced.
    pub fn sync(&self) -> std::io::Result<()> {
        self.file.sync_data()?;
        self.check_identity()
    }

    /// Fails when the store's path no longer names the open file.
    ///
    /// # Errors
    /// [`std::io::ErrorKind::NotFound`] naming the store.
    pub fn check_identity(&self) -> std::io::Result<()> {
        let open = self.file.metadata()?;
        let same = std::fs::metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == (open.dev(), open.ino()));
        if same {
            Ok(())
        } else {
            Err(std::io::Error::new(std::io::ErrorKind::NotFound, StoreError::Gone { path: self.path.clone() }.to_string()))
        }
    }

    /// A second handle on the backing file, for a sync made off the calling thread.
    ///
    /// # Errors
    /// The descriptor could not be duplicated.
    pub fn sync_handle(&self) -> std::io::Result<std::fs::File> {
        self.file.try_clone()
    }
}
