//! Errors of the range-write layer. Each names the logical block or physical address at fault.
//!
//! None of them is fatal: a rejected operation leaves the [`BlockMap`](super::BlockMap) exactly as
//! it was, so a caller can fix the request and try again.

use freeblock_disk::{AccessError, SpecError};
use thiserror::Error;

use super::map::BlockState;

/// Why a range-write, flex-read or block-map operation was refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// A write (or offer) named no candidate locations at all.
    #[error("{context}: the candidate list is empty")]
    EmptyCandidates {
        /// Which operation, e.g. `write of logical block 7`, `flex read`.
        context: String,
    },
    /// A candidate (or copy) does not lie inside the physical space: past the end of the disk, or
    /// outside the region the block map manages.
    #[error("candidate sectors {lbn}..{end} lie outside the physical space {first}..{last} ({what})")]
    CandidateOutside {
        /// First sector (disk LBN) of the candidate.
        lbn: u64,
        /// One past its last sector.
        end: u64,
        /// First sector of the space it must lie in.
        first: u64,
        /// One past the last sector of that space.
        last: u64,
        /// Which space: `"disk"` or `"block map"`.
        what: &'static str,
    },
    /// A candidate start, range bound or alignment is not a multiple of what it must be.
    #[error("{what} {value} is not a multiple of {alignment} sectors")]
    Misaligned {
        /// What is misaligned, e.g. `"candidate start"`, `"range length"`, `"alignment"`.
        what: &'static str,
        /// The offending value (sectors).
        value: u64,
        /// The required multiple (sectors).
        alignment: u64,
    },
    /// A candidate covers a physical block that is neither free nor reserved for this write.
    #[error("candidate sector {lbn} is not free: it is {state}")]
    NotFree {
        /// First sector of the block in the way.
        lbn: u64,
        /// What holds it.
        state: BlockState,
    },
    /// A candidate range is too short to hold the write at any aligned start.
    #[error("candidate range {start}..{end} holds no aligned start for {needed} sectors (alignment {alignment})")]
    RangeTooSmall {
        /// First sector of the range.
        start: u64,
        /// One past its last sector.
        end: u64,
        /// Sectors the write needs.
        needed: u64,
        /// Alignment of the start, sectors.
        alignment: u64,
    },
    /// The location given to [`BlockMap::write`](super::BlockMap::write) is not one the request offered.
    #[error("location {lbn} was not among the write's candidates")]
    NotACandidate {
        /// The rejected location (disk LBN).
        lbn: u64,
    },
    /// A write or read of zero blocks.
    #[error("operation on logical block {logical} covers zero blocks")]
    EmptyExtent {
        /// First logical block.
        logical: u64,
    },
    /// Logical blocks past the end of the logical space.
    #[error("logical blocks {logical}..{end} lie outside the logical space 0..{capacity}")]
    LogicalOutside {
        /// First logical block.
        logical: u64,
        /// One past the last.
        end: u64,
        /// Number of logical blocks.
        capacity: u64,
    },
    /// A logical block that has never been written (or was trimmed).
    #[error("logical block {logical} is not mapped")]
    NotMapped {
        /// The block.
        logical: u64,
    },
    /// The allocator found no place for the offer.
    #[error("no free space for {what}")]
    NoSpace {
        /// What was asked for.
        what: String,
    },
    /// A parameter makes no sense (zero block size, zero candidates, …).
    #[error("{field}: {message}")]
    Config {
        /// Parameter name.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// One I/O of a range-write simulation was refused; `source` says why.
    #[error("request {index} of stream {stream}: {source}")]
    Request {
        /// Issue order of the I/O in the run.
        index: u64,
        /// The stream that issued it.
        stream: u32,
        /// What was wrong.
        source: Box<LayoutError>,
    },
    /// A map snapshot (read from a file or built by hand) breaks an invariant of the block map;
    /// nothing was loaded.
    #[error("invalid map snapshot: {place}: {message}")]
    InvalidSnapshot {
        /// The part at fault, e.g. `entry 3 (logical block 7)`, `pinned extent 0 (sectors 0..8)`.
        place: String,
        /// What is wrong with it.
        message: String,
    },
    /// A snapshot or journal file is damaged in a way a crash cannot explain (a bad header, a
    /// corrupt record followed by valid ones, a sequence gap, a truncated snapshot).
    #[error("{file}, {}: {message}", place(*.offset, *.record))]
    Corrupt {
        /// The file, e.g. `/var/lib/fb/map.journal` or `memory:map.journal`.
        file: String,
        /// Byte offset in the file of the header or record at fault.
        offset: u64,
        /// The record's number (1 = first record after the header), for journal records.
        record: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// A journal record was read intact but its operation cannot be applied to the map rebuilt
    /// so far: the journal does not belong to this snapshot, or a bug logged a refused operation.
    #[error("{file}, record {record} at byte {offset}: replaying {op} failed: {source}")]
    Replay {
        /// The journal file.
        file: String,
        /// Byte offset of the record.
        offset: u64,
        /// The record's number (1 = first record after the header).
        record: u64,
        /// The operation, in short.
        op: String,
        /// Why the map refused it.
        source: Box<LayoutError>,
    },
    /// Reading, writing or syncing a persistent file failed.
    #[error("{file}: {action} failed: {message}")]
    Io {
        /// The file (or directory).
        file: String,
        /// What was being done: `read`, `append`, `fsync`, `rename`, …
        action: &'static str,
        /// The operating system's message.
        message: String,
    },
    /// The disk refused an access (only for requests built outside this module).
    #[error(transparent)]
    Access(#[from] AccessError),
    /// A named disk could not be loaded.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// Adaptive block rearrangement refused a setting or a hot list.
    #[error(transparent)]
    Rearrange(#[from] super::rearrange::RearrangeError),
    /// FS2 refused a setting, or its replica table does not match the map.
    #[error(transparent)]
    Fs2(#[from] super::fs2::Fs2Error),
    /// The log-structured layout refused a configuration, an operation or a recovery.
    #[error(transparent)]
    Lfs(#[from] super::lfs::LfsError),
}

/// `byte N` or `record R at byte N`, for [`LayoutError::Corrupt`].
fn place(offset: u64, record: Option<u64>) -> String {
    match record {
        Some(r) => format!("record {r} at byte {offset}"),
        None => format!("byte {offset}"),
    }
}

/// Result alias for this module.
pub type Result<T, E = LayoutError> = std::result::Result<T, E>;
