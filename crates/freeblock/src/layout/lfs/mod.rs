//! # A log-structured layout, and cleaning its segments with free bandwidth
//!
//! A log-structured layout (LFS; Rosenblum & Ousterhout) never writes a block in place: every
//! write is appended to the *segment being filled* in memory, and a full segment goes to a free
//! segment on the disk in one large I/O, so writes cost one positioning per segment rather than
//! one per block. The price is *cleaning*: rewritten and deleted blocks leave dead space behind,
//! and before free segments run out some partly live segment must be read and its live blocks
//! written again, so that the segment comes free. Cleaning in the foreground of a busy system
//! can cost it a factor of three or four of its throughput (paper 000 §5); its reads can instead
//! use the free bandwidth of freeblock scheduling, in the rotational latency of foreground
//! requests, where they cost the foreground nothing.
//!
//! ```text
//!   write(l) ─► segment being filled (memory) ── full ──► one I/O: 127 data blocks + summary
//!   read(l) ──► segment being filled? ─► buffer cache (LRU)? ─► disk read of l's block
//!                                                                     │
//!   disk partition:  ┌─────────┬─────────┬─────────┬─────────┬───────┐
//!                    │ seg 0   │ seg 1   │ seg 2   │ seg 3   │  …    │   each: 127 data + summary
//!                    │ ▓▓░▓░░S │ ▓▓▓▓▓▓S │ (free)  │ ░▓░░░░S │       │   ▓ live  ░ dead  S summary
//!                    └─────────┴─────────┴─────────┴─────────┴───────┘
//!   usage table: live blocks per segment (from the block map, on the journal)
//!
//!   cleaning seg 3:  read its summary S ─► which slots are live ─► read those blocks
//!                    ─► append them to the segment being filled ─► seg 3 is free once that is written
//!     ORIGINAL:  all of it in the foreground, when fewer than 2 segments are free
//!     FREEBLOCK: the reads as freeblock requests (any order) when fewer than 24 are free,
//!                8 segments at a time; the foreground cleaner stays as the fallback
//!     ours:      FREEBLOCK with the 128 segments of fewest live blocks at once, each one's
//!                blocks held in memory until all are read; when the foreground cleaner must
//!                run it takes over the segments nearest done: their free reads withdrawn,
//!                only the missing blocks read (ours+IDLE: the same, with idle-time reads too)
//!     ours+FW:   ours, the cleaned blocks also written free into reserved destination
//!                segments, the map committed once all of a destination is on the media
//!                (opt-in, FreeCleaning::free_write_segments; measured no gain, docs/lfs.md)
//! ```
//!
//! **Taking over.** A segment being read free waits on its last few blocks: the planner finds
//! them only when the head passes near. When free segments run out, ours does not read a fresh
//! segment whole (about 100 ms on the Atlas 10K's bus) but finishes the free cleaner's segments,
//! fewest reads outstanding first: it withdraws their free reads ([`LayoutCtx::withdraw_free`](crate::layout::LayoutCtx::withdraw_free))
//! and reads only those blocks in the foreground, neighbours joined where the sectors between
//! cost less than a positioning. Those reads are foreground work and count as cleaning.
//!
//! | free cleaner | segments at once | chosen by | blocks read free | when free segments run out |
//! |---|---|---|---|---|
//! | FREEBLOCK (paper) | 8 | cost-benefit | moved as they arrive | a fresh segment read whole, keeping off the free cleaner's |
//! | ours | 128 | fewest live blocks | held until the segment is read | the free cleaner's segments nearest done, only their missing blocks read |
//!
//! **Free writes (ours+FW).** A destination is a free segment set aside
//! ([`Log::reserve_segment`]); each cleaned block gets a slot and a free write there, in any
//! order; only when every slot's write and the summary are on the media does the map point the
//! blocks there ([`Log::commit_segment`]), and only those still live and unchanged where they
//! were read. Until then the map keeps every block at its old home, so a crash loses nothing.
//! When the foreground cleaner must run, the destinations are closed in the foreground or
//! given up, whichever costs less. At 85–93% no destination filled free (docs/lfs.md): the free
//! cleaner rarely finishes a segment free, and free bandwidth is worth more on reads.
//!
//! **Free reads.** When a segment is chosen, its summary and every live block are registered
//! with freeblock at once, each block a free read of its own (one task for all the cleaner's
//! reads), so the planner takes them in any order. The paper's cleaner reads the summary first
//! to learn which blocks are live; ours knows that from the in-memory usage table and block
//! map. Waiting for the summary left the planner nothing but 8 summary blocks to look for most
//! of the time.
//!
//! **Why free cleaning falls behind on this model.** Measured (`repro lfs-cleaning`): free
//! reads arrive at under 0.5 MB/s while cleaning at 85% needs several times that, so the
//! foreground cleaner still does most of the work. A free scan of the whole log on the same
//! foreground gets about 3.7 MB/s: the paper's cleaner asks for too little (about one segment's
//! worth of live blocks outstanding on average, 0.1% of the log, its segments waiting on their
//! last few blocks), not the planner for too much. Its foreground cleaner keeps off the segments
//! being read free ([`clean_foreground_avoiding`]): cleaning them under the free reads made half
//! the blocks read free dead on arrival. More segments at once (32), moved as they arrive, spend
//! the free segments on copies before their sources are free. Ours (above) asks for thousands of
//! blocks and gets about 2 MB/s at 85% (docs/lfs.md).
//! The bus of DiskSim's Atlas 10K moves a sector in 0.099 ms, so the foreground cleaner's 512 KB
//! segment read costs about 108 ms (18 ms of it media); a segment write, whose bus transfer the
//! drive overlaps, about 32 ms (measured). docs/lfs.md has the runs on an Ultra2 bus, and what the
//! paper's own ratios imply about its set-up.
//!
//! | piece | file | what it owns |
//! |---|---|---|
//! | configuration | [`config`] | the partition, segment shape (4 KB blocks, 128 per segment), thresholds |
//! | segment summary | [`summary`] | the on-disk record of which logical block each slot holds |
//! | the log | [`log`] | segments, the segment being filled, the usage table, the map and journal, recovery |
//! | buffer cache | [`cache`] | the LRU cache of blocks in front of the log |
//! | cleaners | [`cleaner`] | ORIGINAL, FREEBLOCK, ours; cost-benefit choice; the foreground cleaner |
//! | policy | [`policy`] | the layout as a policy of the engine: requests, segment writes, free reads |
//!
//! **Choosing what to clean.** Cost-benefit: the segment with the highest `(1 − u) · age / (1 + u)`
//! (`u` its live fraction, `age` the log time since it was written): space gained, weighted by
//! how long it is likely to stay free, over the cost of reading the segment and writing `u` of it.
//! Ours reads for free, so it pays only the writing and the wait for each live block: it takes the
//! segments with the fewest live blocks ([`Log::least_live`]; at 85%, 90.5 transactions/s
//! against 84.9 by cost-benefit, docs/lfs.md).
//!
//! **Durability.** A segment write is the commit point: the segment and its summary reach the
//! disk, then the block map (the layout layer's [`BlockMap`](crate::layout::BlockMap)) records
//! the blocks' new homes and its [`Journal`](crate::layout::Journal) commits; the segment usage
//! table is the map's count of live blocks per segment. A crash loses the segment being filled
//! and nothing acknowledged; recovery ([`Log::recover`]) replays the journal and checks every
//! segment that holds live data against its summary, refusing a damaged one. A caller that keeps
//! the real bytes (the block server) asks the log to report what it does to each block
//! ([`Log::record_events`], [`LogEvent`]), makes a commit durable only once its segment write is
//! on the media, and forces the segment being filled out with a flush
//! ([`LayoutPolicy::flush`](crate::layout::LayoutPolicy::flush)): a partial segment, closed.
//!
//! **Costs in the engine.** A request that fills the segment being filled waits for its write;
//! a request that finds free segments short waits for the foreground cleaner (its reads and
//! writes become parts of that request); a read that misses the cache waits for the disk; the
//! rest complete from memory ([`LayoutPolicy::serves_from_memory`](crate::layout::LayoutPolicy::serves_from_memory)).
//! Free cleaning reads are [`Service::Free`](crate::layout::Service::Free) I/O; the segment
//! writes they fill are foreground writes, as in the paper.

pub mod cache;
pub mod cleaner;
pub mod config;
pub mod error;
pub mod log;
pub mod policy;
pub mod summary;

/// Whether a count is zero: serde's `skip_serializing_if` for counts and settings that are
/// left out of a report or a configuration while unused.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

pub use cache::BufferCache;
pub use cleaner::{clean_foreground, clean_foreground_avoiding, Choice, CleanerKind, FreeCleaning, LogIo};
pub use config::{LfsConfig, LfsSpec};
pub use error::LfsError;
pub use log::{Flushed, Found, Log, LogEvent, Media, Recovered};
pub use policy::{LfsPolicy, LfsStats, TrimQueue};
pub use summary::SegmentSummary;
