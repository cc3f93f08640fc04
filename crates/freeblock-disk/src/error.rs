//! Errors of the disk model. Every variant names where the problem is.

use thiserror::Error;

/// A disk spec could not be read or makes no disk. Fatal for that spec only.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum SpecError {
    /// The file could not be read.
    #[error("{origin}: {message}")]
    Io {
        /// File name.
        origin: String,
        /// OS error text.
        message: String,
    },
    /// TOML syntax error, unknown field, missing field or wrong type.
    #[error("{origin}: {message}")]
    Toml {
        /// File name.
        origin: String,
        /// Parser message, with the line and key of what is wrong.
        message: String,
        /// 1-based line, when known.
        line: Option<u64>,
        /// Dotted key (`controller.bus_sector_ms`), when known.
        key: Option<String>,
    },
    /// DiskSim parameter file problem.
    #[error("{origin}:{line}: {message}")]
    DiskSim {
        /// File name.
        origin: String,
        /// 1-based line number (0 when not tied to a line).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A value that parses but makes no disk.
    #[error("{}field `{field}`: {message}", if origin.is_empty() { String::new() } else { format!("{origin}: ") })]
    Invalid {
        /// File name (empty for specs built in code).
        origin: String,
        /// Dotted path of the field, e.g. `zones[2].last_cylinder`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// No built-in disk has that name.
    #[error("unknown disk `{name}` (known: {known})")]
    UnknownDisk {
        /// Requested name.
        name: String,
        /// Comma-separated list of names.
        known: String,
    },
}

impl SpecError {
    /// Attaches the file name to an error raised without one.
    #[must_use]
    pub fn with_origin(self, new_origin: &str) -> Self {
        match self {
            SpecError::Invalid { origin, field, message } if origin.is_empty() => {
                SpecError::Invalid { origin: new_origin.to_string(), field, message }
            }
            other => other,
        }
    }
}

/// A request the disk cannot serve. Not fatal to the disk.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AccessError {
    /// The request reaches past the last LBN.
    #[error("LBN range {lbn}..{end} is outside the disk (capacity {capacity} sectors)")]
    OutOfRange {
        /// First LBN requested.
        lbn: u64,
        /// One past the last LBN requested.
        end: u64,
        /// Disk capacity in sectors.
        capacity: u64,
    },
    /// A zero-length request.
    #[error("request at LBN {lbn} has zero sectors")]
    Empty {
        /// LBN of the request.
        lbn: u64,
    },
    /// Serving the request would take simulated time past what the model can count (see
    /// [`crate::time`]): the run is longer than the model supports.
    #[error("request at LBN {lbn} starting at {start_ns} ns: {reason}")]
    TimeLimit {
        /// LBN of the request.
        lbn: u64,
        /// When the request would start, ns.
        start_ns: u64,
        /// Which limit it reaches.
        reason: String,
    },
    /// The cache/buffer model reached a state it cannot go on from: no event left while the
    /// request is unfinished, or more events for one request than any consistent run takes. A
    /// bug in the model, not in the request; the answer would be wrong, so there is none.
    #[error("disk buffer model fault serving the {op:?} of {sectors} sectors at LBN {lbn} arriving at {start_ns} ns: {reason}")]
    ModelFault {
        /// First LBN of the request.
        lbn: u64,
        /// Its length in sectors.
        sectors: u64,
        /// Read or write.
        op: crate::Op,
        /// When the request arrived, ns.
        start_ns: u64,
        /// What went wrong, with the model's simulated time.
        reason: String,
    },
}
