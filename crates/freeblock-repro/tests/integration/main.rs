//! The reproductions' integration tests in one binary (one link of the engine, as in
//! `crates/freeblock/tests/integration`): one module per reproduction, named by it.
//! Run one with `cargo test -p freeblock-repro --test integration NAME::`.

mod external;
mod lfs_cleaning;
mod range_writes;
