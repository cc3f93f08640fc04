//! The library's integration tests in one binary: one module per former `tests/NAME.rs`, named by
//! behaviour. Each test binary links the whole library, so on a 2-core machine ~20 of them made
//! linking most of `make test`'s compile time (issue 37 §4); one binary links once.
//!
//! | binary | what | why apart |
//! |---|---|---|
//! | `integration` (here) | every behaviour below | — |
//! | `sim` (`tests/sim/`) | simulator properties, sharing the helpers of its `main.rs` | its own helpers |
//! | `fuzz_regressions` | the fuzz targets under plain `cargo test` | its allocator caps the process at 1 GiB |
//!
//! **A new test file** goes here: `tests/integration/NAME.rs` plus a `mod NAME;` line below
//! (alphabetical). It is a module, not a crate; a `proptest` regressions file moves beside it
//! (`NAME.proptest-regressions`). Tests of the drive-fitting tools (validate, calibrate,
//! characterize, seek profile) live in `crates/freeblock-fit/tests/`. Run one file's tests with
//! `cargo test -p freeblock --test integration NAME::`. Only a test that measures or changes the
//! whole process (its allocator, memory, global state, wall-clock ratios) gets a binary of its own.

mod engine_robustness;
mod firmware_queue;
mod freeblock;
mod fs2_repro;
mod fs2_safety;
mod layout_journal;
mod lfs_engine;
mod lfs_log;
mod modern_drives;
mod rangewrite;
mod rearrange;
mod rearrange_crash;
mod traces_binary;
mod workload;
mod write_cache;
