//! Errors of FS2 replication. Each names the setting, block or replica at fault.

use thiserror::Error;

/// Why an FS2 setting, replica table or recovered map was refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Fs2Error {
    /// A watermark outside (0, 1) or the three out of order.
    #[error("layout.watermarks: need 0 < critical < low < high < 1 (fractions of the disk free), got critical = {critical}, low = {low}, high = {high}")]
    WatermarksOutOfOrder {
        /// Free fraction that resumes replication.
        high: f64,
        /// Free fraction that stops it and drops cold replicas.
        low: f64,
        /// Free fraction that drops whole regions' replicas.
        critical: f64,
    },
    /// A numeric setting out of its range.
    #[error("layout.{field} = {value}: {reason}")]
    BadSetting {
        /// The `[layout]` key.
        field: &'static str,
        /// Its value, as written.
        value: String,
        /// The range it must lie in.
        reason: String,
    },
    /// A static extent past the logical disk.
    #[error("layout.static_blocks[{index}]: blocks {first}..{end} lie past the disk's {capacity} blocks")]
    StaticOutside {
        /// Position in the list.
        index: usize,
        /// First block.
        first: u64,
        /// One past the last.
        end: u64,
        /// Blocks on the disk.
        capacity: u64,
    },
    /// The replica table and the block map disagree (what `fs2-check` reports; `--repair` fixes it).
    #[error("the replica table does not match the block map: {count} problem(s), first: {first}")]
    TableMismatch {
        /// Problems found.
        count: usize,
        /// The first one, described.
        first: String,
    },
}
