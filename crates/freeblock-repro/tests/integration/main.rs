//! The reproductions' integration tests in one binary (one link on a 2-core machine): one module
//! per reproduction (or per part of one), named by behaviour.
//!
//! **A new test file** goes here: `tests/integration/NAME.rs` plus a `mod NAME;` line below
//! (alphabetical). Run one file's tests with `cargo test -p freeblock-repro --test integration NAME::`.

mod bench;
mod firmware_queue;
mod p000_freeblock;
mod scrub;
mod write_cache;

/// Checks that `outcome` states something and that each statement is what its output prints:
/// every `ours` appears in the output.
pub fn assert_statements_in_output(outcome: &freeblock_repro::Outcome) {
    assert!(!outcome.statements.is_empty(), "no statements; output:\n{}", outcome.output);
    for s in &outcome.statements {
        assert!(!s.ours.is_empty() && outcome.output.contains(&s.ours), "statement {s:?}: its figure is not in the output:\n{}", outcome.output);
    }
}
