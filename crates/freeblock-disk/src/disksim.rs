//! Import of DiskSim 4.0 parameter files (`.diskspecs` + `.model` + `.seek`). (In progress.)

use std::path::Path;

use crate::error::SpecError;
use crate::spec::DiskSpec;

/// Reads a DiskSim disk: `path` is a `.diskspecs` file (or a `.model` file).
///
/// # Errors
/// [`SpecError::DiskSim`] naming the file and line.
pub fn import(path: &Path) -> Result<DiskSpec, SpecError> {
    Err(SpecError::DiskSim { origin: path.display().to_string(), line: 0, message: "DiskSim import not implemented yet".into() })
}
