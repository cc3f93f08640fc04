//! # Paper 000 §5: cleaning a log-structured layout with free bandwidth, reproduced
//!
//! Lumb et al. ran PostMark on LLD, a log-structured logical disk, over DiskSim's Atlas 10K cut
//! to one surface (1.5 GB) with a 400 MB LLD partition, and compared three cleaners (their
//! Fig. 7): ORIGINAL (LLD's foreground cleaner with cost-benefit selection), FREEBLOCK (cleaning
//! reads as freeblock requests) and IDEAL (ORIGINAL with every cleaning cost taken out). We run
//! the same cleaners ([`freeblock::layout::lfs`]) under a PostMark-like workload
//! ([`freeblock::workload::postmark`]) through the one engine, plus ours ([`FreeCleaning::ours`](freeblock::layout::lfs::FreeCleaning::ours):
//! the 128 segments of fewest live blocks read free at once, blocks held until their segment is
//! read, the foreground cleaner taking over the segments nearest done), with and without
//! idle-time reads.
//!
//! | paper | what | ours |
//! |---|---|---|
//! | Fig. 7 | transactions/s against file-system utilisation, three cleaners | [`runs::sweep`], one [`runs::Point`] per utilisation |
//! | §5.3 | ORIGINAL halves at 60% and quarters at 85% of IDEAL | [`paper::statements`] |
//! | §5.3 | FREEBLOCK close to IDEAL up to 93%, then degrades; up to ~3× ORIGINAL | [`paper::statements`] |
//! | §5.3 | FREEBLOCK "charged for the write cost of cleaned segments" | [`runs::Point::free_reads_bound_tps`] |
//! | §5.3 | what ORIGINAL's and FREEBLOCK's ratios together need of a cleaning read | [`runs::CostSplit`] |
//!
//! ## How it runs
//!
//! ```text
//!  Options (quick?, reading, bus, fs_share, threads)
//!     │ readings(): today's reading ─┐   the paper's reading (issue 33: the file system 0.85
//!     │                              │   of the log, live blocks read one I/O each)
//!     ▼                              ▼
//!  runs::sweep: per utilisation ── ORIGINAL, FREEBLOCK, ours, ours+IDLE, ORIGINAL + free scan
//!     │                             (PostMark on LfsPolicy over the Atlas 10K cut to one surface)
//!     ├─► IDEAL = ORIGINAL's measured time less its cleaning
//!     ├─► paper::statements ──► "paper value / ours / verdict" rows, a cause beside each MISS
//!     └─► report: tables, lfs-cleaning[-paper-reading].csv, .svg (Fig. 7 with the paper's marks)
//! ```
//!
//! ## The statements checked (each under every reading run)
//!
//! | source | claim | paper's figure |
//! |---|---|---|
//! | §5.3 | ORIGINAL halves at 60% (ORIGINAL/IDEAL) | 0.50 ± 0.05 |
//! | §5.3 | ORIGINAL quarters at 85% (ORIGINAL/IDEAL) | 0.25 ± 0.05 |
//! | §5.3 | FREEBLOCK close to IDEAL up to 93% (lowest FREEBLOCK/IDEAL) | 1 (held to ≥ 0.9) |
//! | §5.3 | FREEBLOCK degrades past 93% | below 0.9 of IDEAL |
//! | §5.3 | FREEBLOCK up to ~3× ORIGINAL (best FREEBLOCK/ORIGINAL) | 3 (2.5–3.5) |
//! | ours | ours close to IDEAL up to 93%; up to ~3× ORIGINAL | as FREEBLOCK's |
//! | issue 33 | the best free cleaner at least 3× ORIGINAL somewhere | ≥ 3 |
//! | issue 33 | the best free cleaner close to IDEAL up to 85% | ≥ 0.85 |
//!
//! **IDEAL** is computed as the paper did: ORIGINAL's measured time less all its cleaning cost,
//! the disk time of the foreground cleaner's segment reads plus the cleaned blocks' share of
//! every segment write (a write of `k` cleaned blocks among 127 counts `k/127` of its time);
//! its throughput is the transactions over what is left. The order of the disk's other requests
//! is ORIGINAL's, so IDEAL keeps ORIGINAL's cache behaviour and seek pattern.
//!
//! **The bus.** §5 says "DiskSim was configured to model a modified Quantum Atlas 10K disk":
//! DiskSim's Atlas 10K, cut to one surface, not a bus of the authors' choosing. DiskSim's Atlas
//! 10K comes with the bus of its validation host, 0.099 ms a sector (5.2 MB/s, a quarter of the
//! media rate), and so does the library's drive; on it a foreground cleaner's 512 KB segment
//! read takes about 100 ms, 18 ms of it media. We keep it
//! ([`runs::LfsCleaningConfig::bus_sector_ms`] `None`). The same group's real Atlas 10K hangs on an
//! Ultra2 Wide SCSI bus (80 MB/s, paper 001 §5.1); on that ORIGINAL's cleaning costs far less
//! and ORIGINAL no longer halves at 60% (measured in docs/lfs.md).
//!
//! **Free bandwidth, measured.** Each point also runs ORIGINAL with an endless free scan of the
//! whole log partition ([`runs::Point::scan_free_mb_s`]): what freeblock delivers on the same foreground
//! when everything is wanted. Beside it, each free cleaner's delivered MB/s while it had reads
//! registered, and how many live blocks it had registered on average
//! ([`LfsStats::free_wanted_block_ns`](freeblock::layout::lfs::LfsStats::free_wanted_block_ns)): the cleaner's wanted set is a few segments, a small
//! fraction of the partition, and that, not the planner, limits what it gets.
//!
//! **CPU time.** The paper measured the real processing time of PostMark and LLD on a 550 MHz
//! Pentium III between disk I/Os; we charge a fixed CPU time per file operation
//! ([`PostmarkSpec::cpu_ns_per_op`](freeblock::workload::postmark::PostmarkSpec::cpu_ns_per_op)), so absolute transactions/s are not the paper's; the
//! statements compare ratios.


pub mod paper;
pub mod report;
pub mod runs;

/// `freeblock repro lfs-cleaning`: every reading of §5 asked for, as text (or JSON), the
/// statements beside the paper's, and the CSV and plots written under `options.out`.
///
/// # Errors
/// A bad option, a run's error, or a file that cannot be written.
pub fn run(options: &crate::Options) -> crate::Result<crate::Outcome> {
    report::lfs_cleaning(options)
}
