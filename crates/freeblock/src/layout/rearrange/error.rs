//! Errors of adaptive block rearrangement. Each message names the parameter and the value at
//! fault, so a caller can fix its configuration without reading the source.
//!
//! None is fatal: a constructor that fails builds nothing, and a placement that fails assigns
//! nothing, so the caller may retry with other parameters (or, for
//! [`RearrangeError::HotListTooLarge`], with [`Overflow::Truncate`](super::placement::Overflow)).

use thiserror::Error;

/// Why a reserved area, hot-spot counter or placement was refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RearrangeError {
    /// `cylinders = 0`.
    #[error("reserved area: cylinders = 0, but the area needs at least one cylinder")]
    ZeroCylinders,
    /// The band `first_cylinder..first_cylinder + cylinders` runs off the disk, or hides all of it.
    #[error(
        "reserved area: first_cylinder = {first_cylinder}, cylinders = {cylinders} does not fit a disk of \
         {disk_cylinders} cylinders (the band must end by cylinder {disk_cylinders} and leave at least one cylinder visible)"
    )]
    AreaDoesNotFit {
        /// First cylinder of the band.
        first_cylinder: u64,
        /// Cylinders asked for.
        cylinders: u32,
        /// Cylinders on the disk.
        disk_cylinders: u32,
    },
    /// The band lies past the disk's last LBN (a disk whose `block_count` stops before it), so it
    /// holds no LBNs.
    #[error(
        "reserved area: first_cylinder = {first_cylinder}: cylinders {first_cylinder}..{end_cylinder} hold no LBNs, \
         the disk's capacity of {capacity} sectors ends before them"
    )]
    AreaPastCapacity {
        /// First cylinder of the band.
        first_cylinder: u32,
        /// One past its last cylinder.
        end_cylinder: u32,
        /// Disk capacity, sectors.
        capacity: u64,
    },
    /// On a disk with banded serpentine mapping ([`freeblock_disk::Mapping::Banded`]) the band
    /// does not start and end on band-pair boundaries, so its cylinders hold no single run of
    /// LBNs (each surface crosses them in a different stretch of the LBN space).
    #[error(
        "reserved area: cylinders {first_cylinder}..{end_cylinder} of a banded disk must start and end on band-pair \
         boundaries (every {pair_cylinders} cylinders from each zone's first): otherwise they hold no single run of LBNs"
    )]
    NotWholeBandPairs {
        /// First cylinder of the band.
        first_cylinder: u32,
        /// One past its last cylinder.
        end_cylinder: u32,
        /// Cylinders in a band pair.
        pair_cylinders: u32,
    },
    /// The block size is zero, or no whole block fits in the band.
    #[error("reserved area: block_sectors = {block_sectors}: {reason}")]
    BadBlockSize {
        /// Block size asked for, sectors.
        block_sectors: u64,
        /// What is wrong.
        reason: String,
    },
    /// The area holds fewer slots than the on-disk block table needs.
    #[error("reserved area: table_slots = {table_slots}, but the area holds only {slots} slots")]
    TooFewSlots {
        /// Whole-block slots in the area.
        slots: usize,
        /// Slots asked for the block table.
        table_slots: usize,
    },
    /// A logical sector (or block) past the end of the logical disk.
    #[error("logical sector {sector} lies outside the logical disk 0..{capacity}")]
    LogicalOutside {
        /// The sector asked for.
        sector: u64,
        /// Logical capacity, sectors.
        capacity: u64,
    },
    /// A Space-Saving summary with no counters, or more than can be allocated.
    #[error("space-saving: counters = {counters}: {reason}")]
    BadCounters {
        /// Counters asked for.
        counters: usize,
        /// What is wrong.
        reason: String,
    },
    /// More hot blocks than free slots, and the caller did not ask to truncate.
    #[error("hot list of {hot} blocks does not fit the {slots} free slots of the reserved area")]
    HotListTooLarge {
        /// Blocks in the hot list.
        hot: usize,
        /// Free (non-table) slots.
        slots: usize,
    },
    /// The same block twice in a hot list.
    #[error("hot list: block {block} appears more than once")]
    DuplicateBlock {
        /// The repeated block.
        block: u64,
    },
    /// The same slot twice in a slot grid.
    #[error("slot grid: slot {slot} appears more than once")]
    DuplicateSlot {
        /// The repeated slot.
        slot: usize,
    },
    /// `successor_ratio` is negative, infinite or NaN.
    #[error("interleaved placement: successor_ratio = {successor_ratio}, but it must be a finite number ≥ 0")]
    BadSuccessorRatio {
        /// The ratio asked for.
        successor_ratio: f64,
    },
}

/// Result alias for this module.
pub type Result<T, E = RearrangeError> = std::result::Result<T, E>;
