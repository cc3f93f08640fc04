//! Adaptive block rearrangement (paper 002) — TEMPORARY module file: the coordinator replaces it
//! with the engine policy. The pure building blocks: [`area`] (the reserved cylinders and the
//! logical ⇄ physical mapping), [`hotlist`] (reference counting), [`placement`] (organ-pipe,
//! interleaved and serial placement).

pub mod area;
pub mod error;
pub mod hotlist;
pub mod placement;
pub mod policy;

pub use area::{AreaConfig, ReservedArea, Slot, TablePlace, PAPER_BLOCK_SECTORS, PAPER_CYLINDERS, TABLE_ENTRY_BYTES};
pub use error::RearrangeError;
pub use hotlist::{BlockCounts, Counter, CounterSpec, ExactCounts, HotSpotCounter, SpaceSaving};
pub use placement::{organ_pipe_order, place, Assignment, Overflow, Placement, PAPER_SUCCESSOR_RATIO};
