//! # freeblock-fit: fitting a drive model to a real drive
//!
//! The engine ([`freeblock`]) simulates a disk from a model: zones, seek curve, rotation,
//! overheads, cache. Its figures are only as good as that model. *Fitting* is the other
//! direction: start from what a real drive did — a trace of measured service times, or the
//! answers it gives through its command interface — and find the model that does the same, or
//! say how far the model we have is from it.
//!
//! ```text
//!   the real drive (or one hidden behind a black box)         the model (a DiskSpec)
//!   ───────────────────────────────────────────────           ──────────────────────
//!   measured trace ──► validate ─── replay on the model, score (RMS demerit) ──► how close
//!        │        └──► calibrate ── fit overheads, settle, cache to one half, ──► a better spec
//!        │                          score on the other half
//!   command interface ─► characterize ─ learn layout, rotation, seeks by probing ─► a spec learned
//!   timings only ──────► seek-profile ─ lower envelope of access time vs distance ─► seek curve, zones
//! ```
//!
//! Each tool runs the one engine: a replay is a [`freeblock::sim::Simulation`] of the trace on
//! the model, a probe is a command to a [`freeblock::external::BlackBox`]. What a tool fits is
//! judged on data it did not fit (calibrate's held-out half, characterize's hidden truth, the
//! seek profile's check against the model's own curve), so a figure here says how well the model
//! predicts, not how well it was tuned.
//!
//! | module | question it answers | how |
//! |---|---|---|
//! | [`validate`] | how close is this model to the drive that measured this trace? | replay the trace closed-loop with its recorded delays; RMS demerit between the measured and the simulated service-time CDFs, as DiskSim computes it, beside DiskSim 4.0's published figures |
//! | [`calibrate`] | which overheads, settle times and cache settings make the model match? | coordinate descent on the first half of the trace, each change checked on a part it was not fitted on; scored on the second half; `judge` applies the fixed criterion of docs/calibrate.md |
//! | [`characterize`] | what is a drive we may only send commands to? | the engine's characteriser ([`freeblock::external::characterize`]) learns it through the black box; here it is graded against the hidden truth |
//! | [`seek_profile`] | what do seeks and zones cost, from timings alone? | paper 003 §4.2: the lower envelope of access time against the distance in sectors, and each slice's sequential rate, checked against the model |
//!
//! The command line (`freeblock validate`, `calibrate`, `characterize`, `seek-profile`) and the
//! Python package call these and print what they return; the shared data folder (DiskSim's
//! models and measured traces) is found by the caller and passed in.

pub mod calibrate;
pub mod characterize;
pub mod seek_profile;
pub mod validate;
