//! # Range writes and flex reads, on a logical-to-physical block map
//!
//! A rotating disk wastes most of a small write waiting: the arm seeks, then the head waits for
//! the target sector to come round, on average half a revolution. A file system cannot help, because
//! it knows neither the head's angle nor how logical blocks sit on the tracks. **Range writes**
//! move that one decision to where the knowledge is: the host gives the device *several* places
//! the data may go, the device writes it to whichever it reaches first and says where it went.
//! **Flex reads** are the same for reads over several copies of the data.
//!
//! ```text
//!             host / layout layer                              device
//!   ┌─────────────────────────────────────┐        ┌────────────────────────────────┐
//!   │ BlockMap   logical → physical(s),   │ offer  │ select: rank every candidate   │
//!   │            free bitmap, versions    │──────► │ from the head state and start  │
//!   │ allocator  k equidistant on a track │        │ time; serve the best one       │
//!   │            | free ranges near head  │ ◄───── │                                │
//!   │ write(req, chosen): free unchosen   │ chosen │ (Disk::positioning_to is exact)│
//!   │ and old copies, stamp a version     │        └────────────────────────────────┘
//!   └─────────────────────────────────────┘
//! ```
//!
//! ## The mechanics
//!
//! With `k` candidates spread evenly round one track and the head arriving at a uniformly random
//! angle, the wait for the nearest is uniform on `[0, rev/k)`, so the mean rotational latency is
//! `rev/(2k)` instead of `rev/2`: a `1 − 1/k` reduction (50% for two candidates half a track
//! apart, 75% for four). The range-writes reproduction (`freeblock_repro::p004_range_writes`)
//! measures it on a disk model. Two candidates a fraction `f` of a revolution apart give `2f(1 − f)`.
//!
//! ## Two sources
//!
//! * **Paper 004** (Venckevicius & Maheshwari, *Reducing Disk Rotation Delays using Range Writes*,
//!   2007): a write carries a few *discrete* candidate blocks, equidistant on one track; FCFS
//!   orders the queue by each request's first block and only the dispatched request is expanded
//!   ("local" selection: [`select_write`]). On DiskSim's HP C2249A with one alternative they
//!   measured up to 32% less rotational latency and 16% less positioning, best near half a track.
//!   The range-writes reproduction repeats their Experiments 1 and 2.
//! * **OSDI 2008** (Anand, Sen, Krioukov, Popovici, Agrawal, Arpaci-Dusseau & Arpaci-Dusseau,
//!   *Avoiding File System Micromanagement with Range Writes*): a write carries a list of *ranges*
//!   plus an alignment ([`Candidates::Ranges`]), the device returns the address it chose, and
//!   the scheduler may weigh every candidate of every request (expand-and-cancel). The allocator's
//!   [`offer_ranges_near`] produces such offers.
//!
//! ## The block map
//!
//! Range writes only work if something records where each block went: [`BlockMap`] is the first
//! piece of the layout layer. Physical locations are disk LBNs in a block-aligned region; each
//! physical block is free, reserved (offered to a pending write), pinned (owned by another layer)
//! or live; a logical block may have several copies (for replication and rearrangement), and every
//! write gets a fresh version. An allocator offer reserves its candidates; the write frees the
//! unchosen ones and the old copies.
//!
//! ```
//! use freeblock::rangewrite::{offer_equidistant, range_write, BlockMap, MapConfig, WriteRequest};
//! use freeblock_disk::{library, Disk, HeadState};
//!
//! let disk = Disk::new(library::get("hp_c2249a").unwrap()).unwrap();
//! let zone0 = disk.layout().zone_table()[0];
//! let mut map = BlockMap::new(MapConfig::region(zone0.3, zone0.4, 1)).unwrap();
//! let head = HeadState { cylinder: 100, surface: 3 };
//! // Four 8-sector candidates a quarter-revolution apart on the track nearest the head.
//! let (_track, candidates) = offer_equidistant(&mut map, &disk, head, 4, 8).unwrap();
//! let req = WriteRequest { logical: 42, blocks: 8, candidates };
//! let mut scratch = Vec::new();
//! let (sel, written) = range_write(&mut map, &disk, head, 0, &req, &mut scratch).unwrap();
//! assert_eq!(map.read(42).unwrap().copies, vec![sel.lbn]);
//! assert!(sel.rotational_latency <= disk.revolution_ns() / 4 + disk.revolution_ns() / 96);
//! assert_eq!(written.released, 24); // the three unchosen candidates went back to free space
//! assert_eq!(map.stats().reserved, 0);
//! ```
//!
//! ## Inside a simulation: local and global selection
//!
//! [`simulate`] runs closed-loop streams ([`StreamWorkload`]) whose writes carry candidates and
//! whose reads go to wherever the map says the data lives, on a simulated drive. When the disk is
//! free the scheduler picks what to serve ([`choose`]):
//!
//! ```text
//!   queue: r0 {a0, a1}   r1 {b0, b1, b2}   r2 {c0}        (first candidate first)
//!
//!   local   scheduler ranks r0 by a0, r1 by b0, r2 by c0 ─► r1 ─► device picks min(b0, b1, b2)
//!   global  scheduler ranks a0 a1 b0 b1 b2 c0 (expand)   ─► b2 served; b0, b1 cancelled (freed)
//! ```
//!
//! FCFS serves the oldest request either way (at its best candidate); SSTF and SPTF see only first
//! candidates locally and every candidate globally. The global search is kept cheap by ranking
//! candidates' tracks by seek time and computing exact positioning only while a seek could still
//! beat the best so far ([`best_seek_pruned`], proven equal to [`best_exhaustive`] by test). The
//! device reports the location it used at completion, and the map records it and frees the rest.
//!
//! The range-writes reproduction (`freeblock_repro::p004_range_writes`, `freeblock repro
//! range-writes`) drives [`simulate`] with a PostMark-like small-file workload whose creates and
//! appends take candidates from the allocator ([`offer_equidistant_on_cylinder`]: `k` spread round
//! the cylinder nearest the heads, so multi-block files fit; or [`offer_ranges_near`]), with 16
//! outstanding requests under FCFS, SSTF and SPTF, without range writes and with 2, 4 and 8
//! candidates chosen locally and globally, and sets write response times and transactions per
//! second beside OSDI 2008's 16–35% application-level gain.

// `x % n == 0` rather than `is_multiple_of` (Rust 1.87), as in the rest of the workspace.
#![allow(clippy::manual_is_multiple_of)]

pub mod select;
pub mod run;

pub use crate::layout::{
    cylinders_near, offer_equidistant, offer_equidistant_on_cylinder, offer_equidistant_on_track, offer_ranges_near,
    track_lbns, tracks_near, BlockMap, BlockState, Candidates, LayoutError, Location, MapConfig, PhysRange, Result,
    SpaceStats, Track, WriteRequest, Written,
};
pub use crate::sched::alternatives::{
    best_candidate, best_exhaustive, best_seek_pruned, choose, Alternatives, CandidateSearch, Choice, Rank,
    SelectionMode,
};
pub use select::{flex_read, range_write, select, select_read, select_write, Criterion, Selection};
pub use crate::layout::rangewrite::{IoRecord, RangeWrites};
pub use crate::layout::streams::{IssueContext, ScriptedStreams, StreamIo, StreamWorkload};
pub use run::{simulate, RangeSimConfig, RangeSimOutcome, RangeSimReport};
