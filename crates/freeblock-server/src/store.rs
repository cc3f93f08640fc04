//! The bytes: one sparse backing file holding the export, byte `i` of the export at byte `i`
//! of the file. Writes are visible to every connection at once (one file); FLUSH and FUA make
//! them durable with `fdatasync`.
//!
//! ```text
//!  export  [0 ............................................ size)
//!  file    [0 ............................................ size)   sparse: never-written ranges
//!                                                                  take no space and read as zeroes
//! ```
//!
//! | operation | file |
//! |---|---|
//! | READ | `pread` |
//! | WRITE | `pwrite` (then `fdatasync` with FUA) |
//! | WRITE_ZEROES | `pwrite` of zeroes, 1 MiB at a time |
//! | TRIM | nothing: the protocol lets a server ignore it |
//! | FLUSH | `fdatasync` |

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

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
}

impl Store {
    /// Opens (creating, sparse) the backing file for an export of `size` bytes.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn open(path: &Path, size: u64) -> Result<Self, StoreError> {
        let io = |source| StoreError::Io { path: path.to_path_buf(), source };
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)?;
        let found = file.metadata().map_err(io)?.len();
        if found == 0 {
            file.set_len(size).map_err(io)?;
        } else if found != size {
            return Err(StoreError::Size { path: path.to_path_buf(), found, want: size });
        }
        Ok(Self { file, size, created: found == 0 })
    }

    /// Whether this open created the store (so it holds only zeroes).
    #[must_use]
    pub fn created(&self) -> bool {
        self.created
    }

    /// The export's size, bytes.
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

    /// Writes `data` at `offset`.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.file.write_all_at(data, offset)
    }

    /// Writes `length` zero bytes at `offset`.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn write_zeroes(&self, offset: u64, length: u64) -> std::io::Result<()> {
        const CHUNK: u64 = 1 << 20;
        let zeroes = vec![0u8; CHUNK.min(length) as usize];
        let mut at = 0;
        while at < length {
            let n = CHUNK.min(length - at);
            self.file.write_all_at(&zeroes[..n as usize], offset + at)?;
            at += n;
        }
        Ok(())
    }

    /// Makes every completed write durable.
    ///
    /// # Errors
    /// The file's I/O error.
    pub fn sync(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }
}
