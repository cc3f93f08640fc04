//! Rust errors as Python exceptions: the one place where they are mapped.
//!
//! ```text
//! FreeblockError                 base of everything raised by freeblock
//! ├── SpecError                  a disk spec is unreadable or makes no disk   (freeblock_disk::SpecError)
//! ├── WorkloadError              a malformed trace line, a bad workload value (freeblock::workload::WorkloadError)
//! ├── RequestError               a request the disk cannot serve              (freeblock::Error::Request)
//! │                              a request the layout policy cannot place     (other LayoutErrors)
//! │                              background blocks outside the disk or not on a block boundary
//! │                                                           (FreeblockError::OutOfRange, ::Misaligned)
//! ├── ConfigError                a malformed experiment: syntax, unknown key  (freeblock::Error::Config)
//! │                              a bad block size, a disk setup freeblock scheduling cannot model
//! │                                                           (FreeblockError::BlockSize, ::Unsupported)
//! │                              a layout setting that makes no layout        (LayoutError::Config)
//! │                              a bad argument from Python (a negative or too large integer, an
//! │                              unknown op): instead of a bare ValueError or OverflowError
//! ├── CharacterizeError          learning a drive through the black box failed: a probe timed
//! │                              out, inconsistent timings, the drive changed (freeblock::Error::Characterize)
//! └── FileError                  a file could not be read or written          (freeblock::Error::Io)
//! ```
//!
//! The message is the Rust error's `Display`, which names the place (file and line, or field).
//! Other freeblock-scheduling errors (an unknown task) are a plain `FreeblockError`; an exception
//! raised by a Python background task is re-raised as it was (see `tasks.rs`).
//! Where the Rust error carries it, the exception also has attributes: `path` (the file), `line`
//! (1-based), `field` (the setting, e.g. `sim.think_ms`), `index` (request number), each `None`
//! when not known.

use freeblock::freeblock::FreeblockError as RsFreeblockError;
use freeblock::layout::LayoutError as RsLayoutError;
use freeblock::workload::WorkloadError as RsWorkloadError;
use freeblock::Error;
use freeblock_disk::SpecError as RsSpecError;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    freeblock,
    FreeblockError,
    PyException,
    "Base class of every error raised by freeblock."
);
create_exception!(
    freeblock,
    SpecError,
    FreeblockError,
    "A disk spec could not be read or makes no disk (non-positive rpm, overlapping zones, unknown field, …)."
);
create_exception!(
    freeblock,
    WorkloadError,
    FreeblockError,
    "A workload could not be built, or a trace line is malformed or reaches past the disk."
);
create_exception!(
    freeblock,
    RequestError,
    FreeblockError,
    "A request the disk cannot serve (e.g. past the last LBN)."
);
create_exception!(
    freeblock,
    ConfigError,
    FreeblockError,
    "An experiment is malformed: TOML syntax, an unknown or missing field, a bad value."
);
create_exception!(
    freeblock,
    CharacterizeError,
    FreeblockError,
    "Learning a drive through the black box failed: a probe timed out or was refused, the timings were inconsistent, or the drive changed under the characteriser."
);
create_exception!(
    freeblock,
    FileError,
    FreeblockError,
    "A file could not be read or written."
);

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FreeblockError", py.get_type::<FreeblockError>())?;
    m.add("SpecError", py.get_type::<SpecError>())?;
    m.add("WorkloadError", py.get_type::<WorkloadError>())?;
    m.add("RequestError", py.get_type::<RequestError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("CharacterizeError", py.get_type::<CharacterizeError>())?;
    m.add("FileError", py.get_type::<FileError>())?;
    Ok(())
}

/// Where an error happened, as exception attributes.
#[derive(Default)]
struct Place {
    path: Option<String>,
    line: Option<u64>,
    field: Option<String>,
    index: Option<u64>,
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

fn spec_place(e: &RsSpecError) -> Place {
    match e {
        RsSpecError::Io { origin, .. } => Place {
            path: non_empty(origin),
            ..Place::default()
        },
        RsSpecError::Toml { origin, line, key, .. } => Place {
            path: non_empty(origin),
            line: *line,
            field: key.clone(),
            ..Place::default()
        },
        RsSpecError::DiskSim { origin, line, .. } => Place {
            path: non_empty(origin),
            line: (*line > 0).then_some(*line as u64),
            ..Place::default()
        },
        RsSpecError::Invalid { origin, field, .. } => Place {
            path: non_empty(origin),
            field: Some(field.clone()),
            ..Place::default()
        },
        _ => Place::default(),
    }
}

fn workload_place(e: &RsWorkloadError) -> Place {
    match e {
        RsWorkloadError::Io { origin, .. } => Place {
            path: non_empty(origin),
            ..Place::default()
        },
        RsWorkloadError::Parse { origin, line, .. }
        | RsWorkloadError::PastCapacity { origin, line, .. } => Place {
            path: non_empty(origin),
            line: Some(*line),
            ..Place::default()
        },
        RsWorkloadError::Invalid { field, .. } => Place {
            field: Some(field.clone()),
            ..Place::default()
        },
        _ => Place::default(),
    }
}

/// Builds an exception of class `T` with `message` and the place attributes.
fn raise<T: pyo3::PyTypeInfo>(message: String, place: Place) -> PyErr {
    let err = PyErr::new::<T, _>(message);
    Python::with_gil(|py| {
        let value = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail in practice; if it did,
        // the exception would still carry its message.
        let _ = value.setattr("path", place.path);
        let _ = value.setattr("line", place.line);
        let _ = value.setattr("field", place.field);
        let _ = value.setattr("index", place.index);
    });
    err
}

/// The Python exception for a simulator error.
pub fn from_core(e: &Error) -> PyErr {
    let message = e.to_string();
    match e {
        Error::Spec(s) => raise::<SpecError>(message, spec_place(s)),
        Error::Workload(w) => raise::<WorkloadError>(message, workload_place(w)),
        Error::Request { index, .. } => raise::<RequestError>(
            message,
            Place {
                index: Some(*index),
                ..Place::default()
            },
        ),
        Error::Config { origin, .. } => raise::<ConfigError>(message, config_place(origin)),
        Error::ConfigFile { origin, place } => raise::<ConfigError>(
            message,
            Place {
                line: place.line,
                field: place.key.clone(),
                ..config_place(origin)
            },
        ),
        Error::Io { path, .. } => raise::<FileError>(
            message,
            Place {
                path: non_empty(path),
                ..Place::default()
            },
        ),
        Error::Freeblock(f) => from_freeblock(f, message),
        Error::Layout(l) => from_layout(l, message),
        Error::Characterize { .. } => raise::<CharacterizeError>(message, Place::default()),
        _ => raise::<FreeblockError>(message, Place::default()),
    }
}

/// Where a configuration error is: a file (the experiment's path, or `<experiment dict>` /
/// `<experiment text>`) or a field (`sim.think_ms`, `workload.count`).
fn config_place(origin: &str) -> Place {
    let is_file = origin.starts_with('<')
        || origin.contains(std::path::MAIN_SEPARATOR)
        || origin.contains('/')
        || origin.ends_with(".toml");
    if is_file {
        Place {
            path: non_empty(origin),
            ..Place::default()
        }
    } else {
        Place {
            field: non_empty(origin),
            ..Place::default()
        }
    }
}

/// The Python exception for a layout-policy error: a setting that makes no layout is a
/// `ConfigError` naming it; what goes wrong with a request while serving is a `RequestError`.
fn from_layout(e: &RsLayoutError, message: String) -> PyErr {
    match e {
        RsLayoutError::Config { field, .. } => raise::<ConfigError>(
            message,
            Place {
                field: Some((*field).to_string()),
                ..Place::default()
            },
        ),
        RsLayoutError::Request { index, .. } => raise::<RequestError>(
            message,
            Place {
                index: Some(*index),
                ..Place::default()
            },
        ),
        _ => raise::<RequestError>(message, Place::default()),
    }
}

/// A `ConfigError` for a bad argument given from Python: the message is `"{what}: {message}"`,
/// the `field` attribute `field` (`what` may add context: `task "scan": block_bytes`).
pub fn config_error_at(what: &str, field: &str, message: &str) -> PyErr {
    raise::<ConfigError>(
        format!("{what}: {message}"),
        Place {
            field: Some(field.to_string()),
            ..Place::default()
        },
    )
}

/// An integer argument that must be ≥ 0 and fit 64 bits; otherwise a `ConfigError` naming it
/// (instead of Python's bare `OverflowError`). `what` and `field` as in [`config_error_at`].
pub fn unsigned_arg_at(value: &Bound<'_, PyAny>, what: &str, field: &str) -> PyResult<u64> {
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(config_error_at(what, field, "must be a whole number, not a bool"));
    }
    let as_int: i128 = value.extract().map_err(|_| {
        let kind = value
            .get_type()
            .name()
            .map_or_else(|_| "something else".to_string(), |n| n.to_string());
        config_error_at(what, field, &format!("must be a whole number, not {kind}"))
    })?;
    u64::try_from(as_int).map_err(|_| {
        config_error_at(what, field, &format!("must be 0 to {}, not {as_int}", u64::MAX))
    })
}

/// [`unsigned_arg_at`] without context.
pub fn unsigned_arg(value: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    unsigned_arg_at(value, field, field)
}

/// The Python exception for a freeblock-scheduling error, with `message` (the error's `Display`,
/// possibly with the task and call that caused it in front).
pub fn from_freeblock(e: &RsFreeblockError, message: String) -> PyErr {
    match e {
        RsFreeblockError::BlockSize { .. } => raise::<ConfigError>(
            message,
            Place {
                field: Some("block_bytes".into()),
                ..Place::default()
            },
        ),
        RsFreeblockError::Unsupported(_) => raise::<ConfigError>(message, Place::default()),
        RsFreeblockError::Invalid { field, .. } => raise::<ConfigError>(
            message,
            Place {
                field: Some(field.clone()),
                ..Place::default()
            },
        ),
        RsFreeblockError::OutOfRange { .. } | RsFreeblockError::Misaligned { .. } => {
            raise::<RequestError>(message, Place::default())
        }
        _ => raise::<FreeblockError>(message, Place::default()),
    }
}

/// The Python exception for a disk-spec error.
pub fn from_spec(e: &RsSpecError) -> PyErr {
    raise::<SpecError>(e.to_string(), spec_place(e))
}

/// `?`-friendly conversion of Rust results into Python results.
pub trait ToPyResult<T> {
    /// Maps the error into its Python exception.
    fn py_err(self) -> PyResult<T>;
}

impl<T> ToPyResult<T> for Result<T, Error> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(|e| from_core(&e))
    }
}

impl<T> ToPyResult<T> for Result<T, RsSpecError> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(|e| from_spec(&e))
    }
}

impl<T> ToPyResult<T> for Result<T, serde_json::Error> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(|e| {
            raise::<FreeblockError>(
                format!("cannot encode the result as JSON: {e}"),
                Place::default(),
            )
        })
    }
}

/// A reproduction's error, as its message (`freeblock_repro::Error` is not `Send`, so it leaves
/// a GIL-free run as text): a `FreeblockError`.
impl<T> ToPyResult<T> for Result<T, String> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(|message| raise::<FreeblockError>(message, Place::default()))
    }
}
