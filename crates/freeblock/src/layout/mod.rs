//! # The layout layer: where logical blocks live on the disk
//!
//! A workload names *logical* blocks; the disk serves *physical* sectors. Between them sits one
//! layer that decides where every logical block lives, may keep several copies of it, and may
//! move it. Every technique that changes placement is a policy of this layer, called by the one
//! engine ([`crate::sim`]) at fixed points (see [`policy`]).
//!
//! ```text
//!   workload ── logical request (time, logical block, length, read/write) ──┐
//!                                                                          ▼
//!   ┌──────────────────────────── layout layer ─────────────────────────────────────┐
//!   │ BlockMap   logical → physical copies · free/reserved/pinned/live · versions   │
//!   │            · dirty bits (a copy that differs from the block's home)           │
//!   │ allocator  free space near the head, k equidistant candidates (alloc)         │
//!   │ journal    the map on stable storage: snapshot + journal, crash-safe          │
//!   │ policies   range writes · rearrangement (hot list) · FS2 replicas · LFS       │
//!   └───────────────────────────────────────────────────────────────────────────────┘
//!        │ physical I/Os, each with candidate starts   ▲ completion: where it went
//!        ▼                                             │
//!   driver (scheduler, freeblock) ─────────────► device (the disk model)
//! ```
//!
//! | piece | file | what it owns |
//! |---|---|---|
//! | block map | [`map`] | every logical block's copies, each physical block's state, versions |
//! | allocator | [`alloc`] | turning free space into candidate locations |
//! | policy hooks | [`policy`] | what the engine calls, and how a policy issues its own I/O |
//! | journal | [`journal`] | the map on stable storage: snapshot + log of [`MapOp`]s, crash recovery |
//! | FS2 replication | [`fs2`] | replicas of blocks read with the hot region, in free space near it; nearest copy; watermarks (paper 003) |
//! | range writes | [`rangewrite`] | writes that place themselves, reads of the nearest copy |
//! | range writes for plain requests | [`request_rangewrite`] | any workload's writes offered free places near the heads (an experiment's `[layout] type = "range_writes"`) |
//! | streams | [`streams`] | workloads that allocate their own writes through the map |
//! | log-structured layout | [`lfs`] | segments, a buffer cache, cleaning in the foreground or with free bandwidth |
//!
//! A policy's own I/O (copying a block in, writing a replica) is served one of three ways, chosen
//! per I/O ([`Service`]): as foreground requests, in idle time, or with free bandwidth through
//! the freeblock subsystem, which costs the foreground nothing.


// `x % n == 0` rather than `is_multiple_of` (Rust 1.87), as in the rest of the workspace.
#![allow(clippy::manual_is_multiple_of)]

pub mod alloc;
pub mod error;
pub mod fs2;
pub mod journal;
pub mod lfs;
pub mod map;
pub mod policy;
pub mod rangewrite;
pub mod rearrange;
pub mod request_rangewrite;
pub mod streams;

pub use alloc::{
    cylinders_near, offer_equidistant, offer_equidistant_on_cylinder, offer_equidistant_on_track, offer_ranges_near,
    track_lbns, tracks_near, Track,
};
pub use error::{LayoutError, Result};
pub use journal::{DirStorage, DirtyRule, Journal, MapOp, MemStorage, RecoveryReport, Storage, StoreFile};
pub use policy::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo, RequestInfo, Service};
pub use streams::{IssueContext, ScriptedStreams, StreamIo, StreamWorkload};
pub use map::{BlockMap, BlockState, Candidates, Location, MapConfig, PhysRange, SpaceStats, WriteRequest, Written};
pub use map::{MapSnapshot, SnapshotEntry};
