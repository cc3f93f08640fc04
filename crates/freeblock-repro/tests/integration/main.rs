//! The reproductions' integration tests in one binary (one link on a 2-core machine): one module
//! per reproduction (or per part of one), named by behaviour.
//!
//! **A new test file** goes here: `tests/integration/NAME.rs` plus a `mod NAME;` line below
//! (alphabetical). Run one file's tests with `cargo test -p freeblock-repro --test integration NAME::`.

mod bench;
mod external;
mod firmware_queue;
mod lfs_cleaning;
mod p000_freeblock;
mod p002_rearrangement;
mod p003_fs2;
mod range_writes;
mod scrub;
mod write_cache;

/// Options for a quick reproduction writing under a scratch folder of the system's temp folder.
pub fn quick_options(name: &str) -> freeblock_repro::Options {
    let out = std::env::temp_dir().join(format!("freeblock-repro-{name}-{}", std::process::id()));
    freeblock_repro::Options { quick: true, quiet: true, out, ..freeblock_repro::Options::default() }
}

/// Every statement of `outcome` names what it compares and shows ours as the text prints it.
pub fn statements_agree_with_text(outcome: &freeblock_repro::Outcome) {
    assert!(!outcome.statements.is_empty(), "no statements");
    for s in &outcome.statements {
        assert!(!s.source.is_empty() && !s.claim.is_empty() && !s.paper.is_empty(), "{s:?}");
        assert!(!s.ours.is_empty() && outcome.output.contains(&s.ours), "ours `{}` of `{}` is not in the text:\n{}", s.ours, s.claim, outcome.output);
    }
}
