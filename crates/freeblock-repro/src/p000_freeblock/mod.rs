//! # Paper 000: freeblock scheduling (Lumb et al., OSDI 2000), §3 and §6
//!
//! **What the paper claims.** §3: a disk serving small random requests spends most of its head's
//! time positioning, and a third of it or more (27–36% for random 4 KB requests, more with
//! locality or a seek-reducing scheduler) waiting for the platter to turn — the rotational
//! latency freeblock scheduling can put to use. §6: a whole-disk scan for data mining, served in
//! that latency only, beside an OLTP workload, gets about 4.9 MB/s (21% of the Atlas 10K's
//! 23 MB/s), over 47 scans a day, without delaying a single foreground request; the greedy
//! planner realises about half the potential, and the last 5% of the blocks take ~30% of a scan.
//!
//! **How we reproduce it.** Each figure's runs on the engine's Atlas 10K model (and, for Fig. 2,
//! four more disks of the library), cache off as in the paper; our numbers beside the paper's:
//!
//! ```text
//!  head_usage (§3)  Figs. 2–6: one closed run a bar ──► seek / rot. latency / transfer shares
//!  free_mining (§6) OLTP × MPL × scheduler × planner ──► Figs. 8–10: free MB/s, scans a day,
//!                   + a background scan (free only)      the potential's split, sampling scans
//!  demo             a taste of both (`freeblock demo`)
//! ```
//!
//! **Statements checked** (each run's table prints them as "paper says / ours / verdict"):
//!
//! | source | claim | paper's figure |
//! |---|---|---|
//! | Fig. 2 | rotational latency share, five disks, random 4 KB | 27–36% |
//! | Fig. 3 | 256 KB requests: transfer share; rotational latency share | below 55%; ~15% |
//! | Fig. 4 | 70% local requests: rotational latency share | ~60% |
//! | Fig. 5 | rotational latency share, C-LOOK and SSTF; SPTF | ~50%; ~22% |
//! | Fig. 6 | SPTF-SW40%: rotational latency share; access time vs SPTF; SSTF vs SPTF | ~36%; ~+6%; ~+25% |
//! | Fig. 8 | at the highest MPL: free MB/s; share of media bandwidth; scans a day; efficiency; useful head utilisation | ~4.9; ~21%; over 47; about half; ~24% |
//! | Fig. 9 | last 5% of the blocks' time share; free transfer, extra seek, unused shares of the potential | ~30%; ~54%, ~18%, ~28% |
//! | Fig. 10 | any 95%: efficiency gain over a full scan; any 80%: efficiency, samples a day | ~+40%; ~90%, 90+ |
//! | beyond the paper | our planner's share of the potential; delayed foreground requests | target ≥ 70%; 0 |
//! | §6 | foreground requests delayed by the scan, every run | 0 |

pub mod demo;
pub mod free_mining;
pub mod head_usage;

use crate::{Options, Outcome, Result};

/// `freeblock repro head-usage` (paper 000 §3): [`head_usage::run`].
///
/// # Errors
/// See [`head_usage::run`].
pub fn head_usage(options: &Options) -> Result<Outcome> {
    head_usage::run(options)
}

/// `freeblock repro free-mining` (paper 000 §6): [`free_mining::run`].
///
/// # Errors
/// See [`free_mining::run`].
pub fn free_mining(options: &Options) -> Result<Outcome> {
    free_mining::run(options)
}
