//! Errors of the log-structured layout. Each names the parameter, segment or block at fault.
//!
//! Configuration errors are returned before anything is built. A run-time error
//! ([`LfsError::OutOfSpace`], [`LfsError::NoFreeSegment`]) leaves the log as it was before the
//! call that failed began its segment write, so nothing stored is lost. Recovery errors
//! ([`LfsError::CorruptSummary`]) refuse the whole recovery rather than trust a damaged log.

use thiserror::Error;

/// Why a log-structured layout refused a configuration, an operation or a recovery.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LfsError {
    /// A configuration value out of range.
    #[error("lfs.{field}: {message}")]
    Config {
        /// The field (`segment_blocks`, `cache_blocks`, …).
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The partition (its segments) does not fit the disk.
    #[error(
        "lfs: {segments} segments of {segment_blocks} blocks of {block_sectors} sectors from sector {first_lbn} \
         end at sector {end}, past the disk's {capacity} sectors"
    )]
    SegmentsDoNotFit {
        /// First sector of the partition.
        first_lbn: u64,
        /// Segments asked for.
        segments: u32,
        /// Blocks per segment.
        segment_blocks: u32,
        /// Sectors per block.
        block_sectors: u64,
        /// One past the partition's last sector.
        end: u64,
        /// The disk's capacity, sectors.
        capacity: u64,
    },
    /// A workload that would fill more than the log holds.
    #[error("lfs: a utilisation of {utilisation_pct:.1}% is over 100% of the log's {data_blocks} data blocks")]
    OverFull {
        /// The utilisation asked for, percent.
        utilisation_pct: f64,
        /// Data blocks the log holds.
        data_blocks: u64,
    },
    /// A logical block outside the logical space.
    #[error("lfs: logical block {logical} is outside the logical space 0..{logical_blocks}")]
    LogicalOutside {
        /// The block.
        logical: u64,
        /// Size of the logical space.
        logical_blocks: u64,
    },
    /// The cleaner found no segment it could gain space from: every non-free segment is full of
    /// live data.
    #[error("lfs: out of space: {free} free segments and no segment with a dead block to clean ({live_blocks} live blocks in {data_blocks})")]
    OutOfSpace {
        /// Free segments left.
        free: u32,
        /// Live data blocks.
        live_blocks: u64,
        /// Data blocks the log holds.
        data_blocks: u64,
    },
    /// A segment write found no free segment (the cleaner did not run in time).
    #[error("lfs: no free segment for the next segment write ({live_blocks} live blocks in {data_blocks})")]
    NoFreeSegment {
        /// Live data blocks.
        live_blocks: u64,
        /// Data blocks the log holds.
        data_blocks: u64,
    },
    /// A segment summary that recovery cannot trust.
    #[error("lfs recovery: segment {segment}'s summary (sector {lbn}): {reason}")]
    CorruptSummary {
        /// The segment.
        segment: u32,
        /// The summary block's first sector.
        lbn: u64,
        /// What is wrong.
        reason: String,
    },
    /// The segment usage table disagrees with the block map (a bug, or damaged state).
    #[error("lfs: segment usage does not balance: segment {segment}: {message}")]
    Unbalanced {
        /// The segment.
        segment: u32,
        /// How.
        message: String,
    },
    /// The block map or its journal refused an operation.
    #[error("lfs: block map: {0}")]
    Map(Box<crate::layout::LayoutError>),
}

impl From<crate::layout::LayoutError> for LfsError {
    fn from(e: crate::layout::LayoutError) -> Self {
        LfsError::Map(Box::new(e))
    }
}
