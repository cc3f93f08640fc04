//! Errors of the simulator. Each names where the problem is (file and line, field, request).

use freeblock_disk::{AccessError, SpecError};
use thiserror::Error;

use crate::workload::WorkloadError;

/// Anything that stops a run or an experiment from being set up.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The disk spec is unreadable or invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The workload or trace is malformed.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A request the disk cannot serve (e.g. past the last LBN).
    #[error("request {index}: {source}")]
    Request {
        /// Index of the request in arrival order (0-based).
        index: u64,
        /// Why.
        source: AccessError,
    },
    /// An experiment file or option is invalid.
    #[error("{origin}: {message}")]
    Config {
        /// File or option name.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// An experiment file that does not parse, with the line and key of what is wrong
    /// ([`freeblock_disk::toml_place`]).
    #[error("{origin}: {}", .place.describe())]
    ConfigFile {
        /// File (or `<experiment text>`).
        origin: String,
        /// Line, key and the parser's message.
        place: freeblock_disk::toml_place::TomlPlace,
    },
    /// A freeblock registration or setting the subsystem cannot honour.
    #[error("freeblock: {0}")]
    Freeblock(#[from] crate::freeblock::FreeblockError),
    /// The layout layer refused a request or an update (names the request and what is wrong).
    #[error(transparent)]
    Layout(#[from] crate::layout::LayoutError),
    /// Characterisation through the black box failed: a probe timed out or was refused, the
    /// timings were inconsistent, or the drive changed under the characteriser.
    #[error("characterizing {disk}: {source}")]
    Characterize {
        /// The drive behind the black box.
        disk: String,
        /// Why.
        source: crate::external::characterize::CharacterizeError,
    },
    /// File I/O.
    #[error("{path}: {message}")]
    Io {
        /// File.
        path: String,
        /// OS error.
        message: String,
    },
}

/// A user's number as messages show it: plain when short, in exponent form when a plain
/// rendering would run to dozens of digits (`1e300`, `1e-300`).
pub(crate) fn number(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e12).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;
