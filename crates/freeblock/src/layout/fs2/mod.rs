//! # FS2: replicas in free disk space (paper 003)
//!
//! Blocks that are read together but lie far apart make the head travel. FS2 watches where the
//! head works (the *hot region*), notices blocks outside it that are read together with the hot
//! region's blocks, and copies them — in the order they were read, contiguously — into free space
//! near the hot region. A read then takes whichever copy is nearest. Replicas live only in space
//! the user is not using: a write invalidates them, and as the disk fills they are given back.
//!
//! ```text
//!   before                                   after (replicas of x y z in access order, near H)
//!   ├──H──────────────x─────y──────z────┤     ├──H[x'y'z']────────x─────y──────z────┤
//!     ▲ reads: h x h y h z  (long seeks)        ▲ reads: h x' h y' h z'  (short seeks, x'y'z'
//!                                                          read in one rotation when adjacent)
//!
//!   request ─► monitor (regions, hot region, co-access window) ─► candidates ─► job:
//!              read each source (primary) ─► write them contiguously into free space near H
//!              ─► AddCopy in the block map, journalled and committed
//!   read    ─► primary + every complete contiguous replica run: the nearest is served
//!   write   ─► replicas dropped in the map (committed before the write is issued); the
//!              replica's place is remembered, and when the block is a candidate again its new
//!              copy goes back there, so the run it was part of is whole again:
//!                 [x'y'z'] ─ write y ─► [x' _ z'] ─ y a candidate again ─► [x'y'z']
//! ```
//!
//! | piece | file | what it owns |
//! |---|---|---|
//! | regions, hot region, co-access | [`regions`] | which blocks to replicate: window 16 requests or 1 s, threshold 2 (the paper leaves both open) |
//! | replica table | [`replicas`] | per replica: original, last read, reads; 32 bytes per replica (the paper: 16) |
//! | watermarks | [`space`] | free-space bands 15% / 10% / 5%: resume, stop + drop cold, drop whole regions |
//! | the policy | [`policy`] | jobs, nearest-copy reads (the paper's LBN rule or least positioning time), invalidation, allocation |
//! | check/repair | [`check`](mod@check) | the paper's `chkfs2`: the table against the map |
//!
//! **Invalidated runs re-placed contiguously** ([`Fs2Config::refill_invalidated`], issue 32).
//! The paper invalidates a written block's replicas rather than updating them, "because both
//! block invalidation and block replication can be done cheaply and in the background" (§2.3),
//! and lays replicas out adjacent in the order read (§2.2). It does not say where a block goes
//! when it is replicated again. Left to a new batch, it lands wherever that batch fits, and a
//! request spanning its old run can no longer be served from replicas (under the paper's rule
//! every block of the request needs one, contiguous). Ours: the block is detected again as any
//! candidate is (the paper's timing, so a block written between every two reads is not copied
//! after every write, which is the updating the paper rejected), and its copy goes back into its
//! old place if that is still free; if the place was taken meanwhile it goes with its batch.
//! The remembered places live in memory only; after a crash a block simply goes with its batch.
//!
//! **Ways to write replicas** ([`Fs2Config::service`]): as foreground I/O competing with the
//! workload (the paper's), in idle time, or with free bandwidth through freeblock scheduling
//! (paper 003 §6.2 names it as future work). **FS2-static** ([`Mode::Static`]) replicates a given
//! block set toward the middle of the disk once, before the run (the paper's `mkfs2`).
//!
//! **The disk model of the file system.** Logical block `b`'s home is physical block `b`. At the
//! start each region's first `fill` share holds user data (pinned in the [`BlockMap`]); the rest
//! is free. A block the workload touches becomes a map entry whose first copy is its *primary*
//! (its data) and whose later copies are *replicas*. A new user block goes to its home unless a
//! replica job has claimed that block or a read of a replica there is in flight; then it goes to
//! the nearest free block, as Ext2's allocator would: a user write is never refused (while any
//! block is free) and never waits for replicas.
//!
//! **Crash safety.** The map is journalled ([`crate::layout::Journal`]); every change is
//! committed before the I/O that depends on it is acknowledged or issued:
//!
//! | event | committed | why no acknowledged write is lost and no stale replica is read |
//! |---|---|---|
//! | user write of a replicated block | the replicas' drop, before the write is issued | after any crash the table names no replica older than the primary |
//! | replica made | `AddCopy` after the replica's data write completed, only if the block was not written since its source was read | a recovered replica is always a full, current copy |
//! | new block allocated | its entry, before its write is issued | the recovered map finds its data |
//! | watermark drops, trims | before returning | a dropped replica's space may be reused at once |
//! | job under way | nothing (claims are in memory) | recovery sees the destination free; the copy is simply not made |
//!
//! Table writes are not charged disk time (the paper flushes its table periodically, or keeps it
//! in flash); the read counts and last-read times are memory-only hints, zero after recovery.
//!
//! [`BlockMap`]: crate::layout::BlockMap

pub mod check;
pub mod error;
pub mod policy;
pub mod regions;
pub mod replicas;
pub mod space;

pub use check::{check, repair, table_from_map, Problem};
pub use error::Fs2Error;
pub use policy::{Fs2, Fs2Config, Fs2Report, Mode, Nearest, StaticExtent};
pub use regions::AccessMonitor;
pub use replicas::{ReplicaInfo, ReplicaTable, PAPER_ENTRY_BYTES, REPLICA_ENTRY_BYTES};
pub use space::{Band, Throttle, Watermarks};
