//! # Freeblock scheduling: free bandwidth from a busy disk
//!
//! A disk serving small random requests spends most of its time positioning, and about a third
//! of it just waiting for the platter to bring the wanted sector round (paper 000 §3). Freeblock
//! scheduling (Lumb, Schindler, Ganger, Nagle & Riedel, OSDI 2000; paper 000) turns that wait into
//! work: before each foreground request, the disk reads background blocks that pass under the head
//! anyway, or makes a short detour to a nearby track, and still arrives at the foreground sector
//! at exactly the instant it would have. In firmware, where the drive knows its own geometry and
//! timing exactly, the background work is *free*: no foreground request is served a nanosecond
//! later.
//!
//! ```text
//!   application ──register blocks──► BackgroundSets ◄──count / take── Planner (one decision per
//!   (Scan, …)   ◄──batches of blocks──       ▲                          foreground request)
//!                                            │ transferred                  │ plan
//!   Simulation ──foreground request──► Freeblock::serve ──segments──► Disk::arc … Disk::access_when_free
//! ```
//!
//! * [`BackgroundSets`] holds what each task still wants (the API of paper 000 Table 1: register
//!   read or write sets of application blocks, abort, promote; deliveries in batches).
//! * [`Planner`] chooses what to transfer in one request's rotational latency: the paper's
//!   single-track greedy ([`PlannerKind::SingleTrack`]) or ours, which also splits the time
//!   between two tracks ([`PlannerKind::TwoTrack`]).
//! * [`Freeblock`] executes plans around each foreground request, keeps the books (potential,
//!   free transfer, extra seek, unused latency; paper 000 Fig. 9c) and drives the applications.
//! * [`Scan`] is the full-disk or sampling scan of paper 000 §6.
//! * [`bandwidth`]: the disk's media bandwidth and a repeated scan's steady state, the figures
//!   free bandwidth is reported against.
//!
//! Switch it on for a run with a `[freeblock]` table in the experiment file
//! ([`FreeblockConfig`]), or [`crate::sim::Simulation::with_freeblock`] from Rust.

// `x % n == 0` rather than `is_multiple_of` (Rust 1.87), as in the rest of the workspace.
#![allow(clippy::manual_is_multiple_of)]

pub mod apps;
pub mod bandwidth;
pub mod engine;
pub mod error;
pub mod planner;
pub mod sets;

pub use apps::{BackgroundApp, PassRecord, ProgressPoint, Promoted, Scan, TaskControl, TaskReport, DEFAULT_PASSES_IN_FLIGHT};
pub use bandwidth::{inventory_at, media_mb_s, settled_steady_state, share_of_potential, steady_state, SettledSteadyState, SteadyState};
pub use engine::{Accounts, Freeblock, DEFAULT_MAX_TRACKS, FreeblockConfig, FreeblockReport, Placement, TaskSpec, TimelineRow};
pub use error::FreeblockError;
pub use planner::{Plan, Planner, PlannerKind, Segment, Window};
pub use sets::{BackgroundSets, Delivery, Route, TaskId, URGENT_WEIGHT};
