//! Errors of the freeblock API: each names the offending value.

use thiserror::Error;

/// A registration or control call the subsystem cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FreeblockError {
    /// Block size not a positive multiple of the sector size.
    #[error("block size {block_bytes} bytes is not a positive multiple of the {sector_bytes}-byte sector")]
    BlockSize {
        /// Given size.
        block_bytes: u64,
        /// The disk's sector size.
        sector_bytes: u64,
    },
    /// Blocks running past the end of the disk.
    #[error("blocks {lbn}..+{blocks} of {block_sectors} sectors run past the disk's {capacity} sectors")]
    OutOfRange {
        /// First LBN.
        lbn: u64,
        /// Number of blocks.
        blocks: u64,
        /// Sectors per block.
        block_sectors: u64,
        /// Disk capacity, sectors.
        capacity: u64,
    },
    /// A first LBN that is not on a block boundary.
    #[error("LBN {lbn} is not a multiple of the block size ({block_sectors} sectors)")]
    Misaligned {
        /// Given LBN.
        lbn: u64,
        /// Sectors per block.
        block_sectors: u64,
    },
    /// No such task.
    #[error("no background task {0}")]
    UnknownTask(u32),
    /// The disk or run is set up in a way freeblock scheduling cannot model.
    #[error("{0}")]
    Unsupported(String),
    /// A `[freeblock]` setting or task field out of range; names the field (e.g.
    /// `idle_after_ms`, `tasks[2].blocks`).
    #[error("field `{field}`: {message}")]
    Invalid {
        /// The field, as written in the `[freeblock]` table.
        field: String,
        /// What is wrong with its value.
        message: String,
    },
    /// A background application failed (e.g. a Python task raised); the message says which and why.
    #[error("background application failed: {0}")]
    Application(String),
}

impl FreeblockError {
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        FreeblockError::Invalid { field: field.into(), message: message.into() }
    }
}

/// Result alias.
pub type Result<T, E = FreeblockError> = std::result::Result<T, E>;
