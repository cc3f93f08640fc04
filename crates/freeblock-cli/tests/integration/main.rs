//! The `freeblock` command end to end, in one binary: one module per former `tests/NAME.rs`.
//! Each test binary links the whole workspace, so on a 2-core machine one per file made linking
//! most of `make test`'s compile time (issue 37 §4); one binary links once.
//!
//! **A new test file** goes here: `tests/integration/NAME.rs` plus a `mod NAME;` line below
//! (alphabetical). Run one file's tests with `cargo test -p freeblock-cli --test integration
//! NAME::`.

mod check;
mod cli;
mod run;
