//! The reproductions' integration tests in one binary (one link on a 2-core machine): one module
//! per reproduction folder, each running its reproduction small (seconds) and checking that its
//! statements are there and agree with its text. Run one module's tests with
//! `cargo test -p freeblock-repro --test integration NAME::`.

mod p000_freeblock;
