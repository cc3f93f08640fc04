//! Errors of workloads. Every variant names where the problem is: the spec field, the text trace
//! file and its 1-based line, or the binary trace file, its 1-based record and the record's byte
//! offset.

use thiserror::Error;

/// A workload could not be built, or a trace could not be read.
///
/// All variants are fatal for the workload that raised them: after an error,
/// [`Workload::next_request`](super::Workload::next_request) should not be called again (the
/// trace readers return `Ok(None)` if it is).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkloadError {
    /// The trace file could not be opened or read.
    #[error("{origin}: {message}")]
    Io {
        /// File name, as given.
        origin: String,
        /// OS error text.
        message: String,
    },
    /// A trace line is malformed: wrong field count, a number that does not parse, an unknown
    /// operation, time going backwards, …
    #[error("{origin}:{line}: {message}")]
    Parse {
        /// File name, as given.
        origin: String,
        /// 1-based line number.
        line: u64,
        /// What is wrong, one line.
        message: String,
    },
    /// A trace request ends past the last sector of the disk it is replayed on.
    #[error(
        "{origin}:{line}: request at LBN {lbn} of {sectors} sectors ends at {}, past the disk \
         capacity of {capacity} sectors",
        lbn + u64::from(*sectors)
    )]
    PastCapacity {
        /// File name, as given.
        origin: String,
        /// 1-based line number.
        line: u64,
        /// First sector of the request.
        lbn: u64,
        /// Length of the request, sectors.
        sectors: u32,
        /// Disk capacity, sectors.
        capacity: u64,
    },
    /// A record of a binary trace (`srt`, `vscsi`) is malformed, truncated, or lies past the disk.
    #[error("{origin}:record {record} (byte offset {offset}): {message}")]
    Record {
        /// File name, as given.
        origin: String,
        /// 1-based record number.
        record: u64,
        /// Byte offset of the record's first byte in the file.
        offset: u64,
        /// What is wrong, one line.
        message: String,
    },
    /// A workload spec value that parses but makes no workload (a read fraction above 1, a
    /// request larger than the disk, …).
    #[error("workload field `{field}`: {message}")]
    Invalid {
        /// Field name, e.g. `read_fraction` or `size.mean_sectors`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl WorkloadError {
    pub(crate) fn invalid(field: &str, message: impl Into<String>) -> Self {
        WorkloadError::Invalid {
            field: field.to_owned(),
            message: message.into(),
        }
    }
}
