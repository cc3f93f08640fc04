//! The block server's integration tests in one binary: one module per former `tests/NAME.rs`,
//! named by behaviour (docs/server.md tables what each checks). Each test binary links the
//! server, the engine and tokio, so on a 2-core machine ~17 of them made linking most of
//! `make test`'s compile time (issue 37 §4); one binary links once.
//!
//! | binary | why apart |
//! |---|---|
//! | `integration` (here) | — |
//! | `hostile` | measures this process's memory (the server runs in it) and a client's p99 latency |
//! | `timing` | compares the client's wall-clock wait with the model's time (pace real) |
//! | `large_write` | compares the wall-clock cost of 1 and 32 MiB writes |
//! | `scrub_live` | compares fio's wall-clock IOPS with the scrub on and off |
//!
//! Tests in one binary run at the same time; those three would measure their neighbours.
//!
//! **A new test file** goes here: `tests/integration/NAME.rs` plus a `mod NAME;` line below
//! (alphabetical), with `use crate::support;` where a stand-alone file has `mod support;`. Run
//! one file's tests with `cargo test -p freeblock-server --test integration NAME::`. Only a test
//! that measures the whole process or the wall clock against a bound gets a binary of its own.

mod bad_input;
mod check;
mod clients;
mod crash;
mod ext4;
mod journal_damage;
mod layouts;
mod lfs;
mod no_space;
mod qemu;
mod refusal;
mod scrub;
mod store_guard;
mod write_cache;
mod zeroes;

/// A server started by the test on loopback, and real NBD clients run against it.
#[path = "../support/mod.rs"]
mod support;
