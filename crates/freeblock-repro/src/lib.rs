//! # freeblock-repro: the papers' figures, reproduced on the engine
//!
//! Each folder is one paper (or one issue about drives of today): its configuration, its runs on
//! the [`freeblock`] engine, the paper's published figures, the statements it checks ("ours /
//! paper / agrees"), the CSV and the plots. The command line (`freeblock repro NAME`) and the
//! Python package (`freeblock.repro(NAME)`) only call [`find`]`(name).run(…)` and print what it
//! returns.
//!
//! | module | reproduces |
//! |---|---|
//! | [`p000_freeblock`] | paper 000 §3 (where a head's time goes) and §6 (free data mining beside OLTP) |
//! | [`p000_lfs_cleaning`] | paper 000 §5: LFS cleaning in free bandwidth |
//! | [`p001_external`] | paper 001: freeblock scheduling from outside the disk |
//! | [`p002_rearrangement`] | paper 002: adaptive block rearrangement |
//! | [`p003_fs2`] | paper 003: FS2, replication in free space |
//! | [`p004_range_writes`] | paper 004: range writes and flex reads |
//! | [`scrub`] | issue 35: a free scrub beside today's throttled scrubs |
//! | [`drives_of_today`] | issue 34: the firmware queue and the write cache against published figures |
//! | [`bench`](mod@bench) | `freeblock bench`: simulator speed and the planner's time and memory beside their targets (issues 3, 18, 35) |
//! | [`reproduction`] | [`Options`], [`Outcome`], [`Statement`], the list [`REPRODUCTIONS`] |
//! | [`paper_check`] | a published figure's accepted range and ours beside it |
//! | [`parallel`] | independent runs over a few threads, results in job order |
//! | [`table`], [`plot`], [`progress`] | text tables, SVG plots (plotters), progress bars |

pub mod bench;
pub mod drives_of_today;
pub mod p000_freeblock;
pub mod p000_lfs_cleaning;
pub mod p001_external;
pub mod p002_rearrangement;
pub mod p003_fs2;
pub mod p004_range_writes;
pub mod paper_check;
pub mod parallel;
pub mod plot;
pub mod progress;
pub mod reproduction;
pub mod scrub;
pub mod table;

pub use reproduction::{find, shared_dir, Error, Options, Outcome, Reproduction, Result, Statement, REPRODUCTIONS};
