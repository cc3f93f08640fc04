//! Transitional (issue 36): paper 000 §6's reproduction is `freeblock_repro::p000_freeblock::free_mining`.
//! The two figures of it that `bench` and `external_repro` use, still in this crate, are the
//! engine's ([`crate::freeblock::bandwidth`]); these names stay until those two modules move.

pub use crate::freeblock::bandwidth::{media_mb_s, steady_state, SteadyState};
