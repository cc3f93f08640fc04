//! # Paper 004: range writes and flex reads, reproduced (with OSDI 2008's comparison)
//!
//! **What the papers claim.** Paper 004 (Venckevicius & Maheshwari, *Reducing Disk Rotation
//! Delays using Range Writes*, 2007) gives each small write one alternative location `offset`
//! sectors after the original and lets the device write whichever it reaches first: on DiskSim's
//! HP C2249A, FCFS, one write every 22 ms, the best offsets (40–45 sectors, about half a track)
//! cut rotational latency by ~32% and positioning time by ~16%. OSDI 2008 (Anand et al.,
//! *Avoiding File System Micromanagement with Range Writes*) reports 16–35% better application
//! performance on the HP C2247A, and lets the scheduler weigh every candidate (global selection)
//! rather than only the dispatched request's (local).
//!
//! **How we reproduce it.** The technique — the block map, the allocator's offers, local
//! selection and [`simulate`](freeblock::rangewrite::simulate) — is the engine's
//! ([`freeblock::rangewrite`], [`freeblock::layout`]). Here are the experiments run on it:
//!
//! ```text
//!  theory check (experiment.rs)   k = 1,2,4,8 candidates equidistant on a track ─► mean rotational
//!                                 latency against rev/(2k), for writes and for flex reads
//!  Experiments 1, 2 (experiment.rs)  HP C2249A zone 0, FCFS Drive, 10 000 writes of 10 sectors,
//!                                 one alternative at each offset ─► rotational / positioning reduction
//!  local vs global (localglobal.rs)  small-file workload (smallfile.rs: PostMark-like, 16 streams)
//!                                 on the HP C2247A, FCFS/SSTF/SPTF × {no range writes, k local, k global}
//!                                 ─► write response, transactions/s gain over no range writes
//!        └──► paper.rs: the statements ──► report.rs: tables, range-writes.csv,
//!             range-writes-local-global.csv, paper004-exp1/2.svg, osdi2008-local-global.svg
//! ```
//!
//! ## The statements checked
//!
//! | source | claim | paper's figure |
//! |---|---|---|
//! | paper 004 Exp. 1 | best LBN offset of one alternative | 40–45 sectors |
//! | paper 004 Exp. 1 | rotational latency reduction at the best offset | ~32% (± 5 points) |
//! | paper 004 Exp. 1 | positioning time reduction at the best offset | ~16% (± 5 points) |
//! | OSDI 2008 | transactions/s over no range writes, each scheduler × selection × k | 16–35% (below misses) |
//!
//! Ours meets the mechanics (a half-track alternative halves rotational latency) and so is well
//! above paper 004's 32%, which its authors put down to their DiskSim set-up; the report says so.
//!
//! | file | what |
//! |---|---|
//! | [`experiment`] | the `1 − 1/k` theory check; paper 004's Experiments 1 and 2 |
//! | [`smallfile`] | the PostMark-like small-file workload whose writes take candidates |
//! | [`localglobal`] | local against global selection on it (OSDI 2008) |
//! | [`paper`] | the papers' figures and the statements |
//! | [`report`] | the text, CSV and plots |

// `x % n == 0` rather than `is_multiple_of` (Rust 1.87), as in the rest of the workspace.
#![allow(clippy::manual_is_multiple_of)]

pub mod experiment;
pub mod localglobal;
pub mod paper;
pub mod report;
pub mod smallfile;

/// `freeblock repro range-writes`: `options.requests` sets the writes per run of Experiments 1
/// and 2 and the transactions of the small-file workload (default 10 000, the paper's count);
/// the theory check draws twice as many trials.
///
/// # Errors
/// A run's error, or a file that cannot be written.
pub fn run(options: &crate::Options) -> crate::Result<crate::Outcome> {
    report::range_writes(options)
}
