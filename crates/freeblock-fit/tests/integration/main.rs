//! The drive-fitting tools' integration tests in one binary: one module per tool, named by
//! behaviour. Each test binary links the engine and the disk model; one binary links once.
//!
//! | module | what |
//! |---|---|
//! | `calibrate` | a model with deliberately wrong parameters, fitted to a trace it made, gets them back |
//! | `characterize` | drives learned through the black box only, graded against the hidden truth |
//! | `differential` | request by request against DiskSim 4.0's own output on the shared fixtures |
//! | `validation` | the RMS demerit on the shared measured traces, beside DiskSim's published figures |
//!
//! **A new test file** goes here: `tests/integration/NAME.rs` plus a `mod NAME;` line below
//! (alphabetical); see `tests/README.md`. Run one file's tests with
//! `cargo test -p freeblock-fit --test integration NAME::`.

mod calibrate;
mod characterize;
mod differential;
mod validation;

/// Where the shared reference data lives (`support/shared.rs`).
#[path = "../support/shared.rs"]
mod support;
