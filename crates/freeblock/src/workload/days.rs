//! The `days` workload: several days of skewed block references whose hot set drifts from day to
//! day, the setting of adaptive block rearrangement (paper 002: Akyürek & Salem, *Adaptive Block
//! Rearrangement Under UNIX*).
//!
//! The paper's driver counts block references during a day and, at the end of the day, copies
//! the hottest blocks to reserved cylinders in the middle of the disk for the next day. Whether
//! that pays depends on two properties of the reference stream, both modelled here:
//!
//! - **Skew** (§4.2.2, Fig. 5, the /usr file system on a typical day): "fewer than 2000 blocks
//!   absorb all of the requests" and "the 100 hottest blocks absorb around 90% of all the
//!   requests"; "block access distributions for write operations are much more skewed than they
//!   are for read operations" (§4.2.1).
//! - **Stability**: yesterday's hot blocks must still be hot today. The hot set drifts: each
//!   night a fraction of it is replaced by blocks that were cold.
//!
//! ## The model
//!
//! | piece | rule | parameters (defaults) |
//! |---|---|---|
//! | blocks | the disk is cut into blocks of `block_sectors`; every request reads or writes one whole block, block-aligned | `block_sectors` (16: 8 KB, the file system block of §4.1) |
//! | hot set | `hot_blocks` distinct blocks, uniform over the disk, ranked 1 (hottest) to `hot_blocks`; no other block is referenced | `hot_blocks` (1800) |
//! | popularity | rank `k` is chosen with probability ∝ `k^-s` (a Zipf law truncated to the hot set), with separate exponents for reads and writes, each solved so that the `top_blocks` hottest ranks take the set share | `top_blocks` (100), `read_top_share` (0.85), `write_top_share` (0.97) |
//! | mix | each request is a read with probability `read_fraction` | `read_fraction` (0.6); overall top-100 share 0.6 · 0.85 + 0.4 · 0.97 ≈ 0.90 |
//! | days | `days` days of `day_s` seconds; day `d` is `[d · day_ns, (d + 1) · day_ns)` | `days` (4), `day_s` (86 400) |
//! | arrivals | each day exactly `requests_per_day` requests, a Poisson stream of rate `rate_per_s` from the day's start (conditioned on the count: the order statistics of uniform times over the first `requests_per_day / rate_per_s` seconds); the rest of the day is idle | `requests_per_day` (20 000), `rate_per_s` (`requests_per_day` over 15 hours: the paper's statistics cover 7 am to 10 pm) |
//! | drift | at the start of each day after the first, `round(drift · hot_blocks)` ranks, chosen uniformly, get a block that is not in the hot set; the others keep theirs | `drift` (0.1) |
//! | write bursts | a write starts a burst of writes at one instant, geometric with mean `write_burst` | `write_burst` (1) |
//! | files and sequential reads | each rank is a file of consecutive blocks starting at its hot block, its length drawn when it enters the hot set (at least `k + 1` blocks with probability `read_sequential` given at least `k`, at most 64); a read of the rank reads the whole file, block after block, at one instant (FFS reads a file's next block ahead); a write writes its first block | `read_sequential` (0: one-block files) |
//! | write concentration | `write_top_share` may speak of its own number of hottest blocks, `write_top_blocks` (a handful: writes of metadata blocks) | `write_top_blocks` (`top_blocks`) |
//! | read concentration | likewise `read_top_share` of `read_top_blocks` hottest (the reads of that handful) | `read_top_blocks` (`top_blocks`) |
//! | metadata handful | the `write_top_blocks` hottest ranks are single blocks (a read of one reads it alone) that the drift never replaces: the metadata of a file system whose blocks never move; the drift picks its ranks among the rest | `metadata_handful` (false) |
//! | writes within the handful | instead of one Zipf law solved for `write_top_share`, the writes may follow `k^-t` with a set `t`, scaled so the `write_top_blocks` hottest ranks take `write_top_share` and the rest the remainder (`t = 0`: uniform on each side): a handful that takes nearly all writes without one block taking most of them | `write_top_exponent` (none: one law) |
//!
//! Two named mixes are used by `freeblock repro rearrangement`: the defaults above with bursts
//! (Fig. 5's skew, 60% reads, no sequential reads), and the paper's mix derived from its Tables
//! 1–3 and Fig. 5 (about 20% reads, writes and a third of the reads on a metadata handful of one
//! cylinder's blocks, files read whole), which `freeblock_repro::p002_rearrangement::paper_mix` builds and
//! explains number by number.
//!
//! Since every rank keeps the same probability, the blocks that stay keep their popularity, and
//! the expected share of requests going to blocks that were hot the day before is `1 − drift`.
//!
//! Random draws come from one [`ChaCha8Rng`] seeded from the seed given to `build`, in a fixed
//! order (per request: whether it continues a burst or run, arrival, read/write, rank; per night:
//! the replaced ranks, their new blocks), so the same spec, capacity and seed give the same
//! requests. A spec with `read_sequential = 0` draws exactly as before runs existed.

use std::collections::HashSet;

use rand::seq::index::sample;
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::request::Request;
use freeblock_disk::{Op, SimTime};

use super::{ArrivalKind, Workload, WorkloadError};

/// The largest hot set: the generator keeps two popularity tables and a set of this many
/// blocks (about 40 bytes each) and solves for the Zipf exponents over all of them, so the size
/// is bounded (the paper's hot set is under 2000 blocks).
pub const MAX_HOT_BLOCKS: u32 = 10_000_000;

/// The steepest `write_top_exponent` (where the exponent solver's search stops too).
pub const MAX_EXPONENT: f64 = 1e3;

/// The longest file (blocks) when `read_sequential > 0`.
pub const MAX_FILE_BLOCKS: u32 = 64;

/// Hours of activity per day that the default rate assumes (the paper's 7 am to 10 pm).
pub const DEFAULT_ACTIVE_HOURS: f64 = 15.0;

fn default_days() -> u32 {
    4
}
fn default_requests_per_day() -> u64 {
    20_000
}
fn default_day_s() -> f64 {
    86_400.0
}
fn default_block_sectors() -> u32 {
    16
}
fn default_read_fraction() -> f64 {
    0.6
}
fn default_hot_blocks() -> u32 {
    1800
}
fn default_top_blocks() -> u32 {
    100
}
fn default_read_top_share() -> f64 {
    0.85
}
fn default_write_top_share() -> f64 {
    0.97
}
fn default_drift() -> f64 {
    0.1
}

/// Day-structured skewed workload imitating paper 002's Fig. 5 (Akyürek & Salem, block access
/// distribution of the /usr file system on a typical day: the 100 hottest blocks take about 90%
/// of the requests, fewer than 2000 blocks take all, writes more skewed than reads), with a hot
/// set that drifts from day to day. See the [module documentation](self) for the model.
///
/// Defaults: 4 days of 86 400 s, 20 000 requests a day arriving over the first 15 hours (Poisson,
/// 0.37 requests/s), 8 KB block-aligned requests (`block_sectors = 16`), 60% reads, a hot set of
/// 1800 blocks in which the 100 hottest take 85% of the reads and 97% of the writes (≈ 90% of all
/// requests), and 10% of the hot set replaced each night.
///
/// ```toml
/// [workload]
/// type = "days"
/// days = 4
/// requests_per_day = 20000
/// # rate_per_s = 0.37         # default: requests_per_day over 15 hours
/// # day_s = 86400
/// # block_sectors = 16        # 8 KB on 512-byte sectors
/// # read_fraction = 0.6
/// # hot_blocks = 1800         # blocks referenced at all on a day
/// # top_blocks = 100
/// # read_top_share = 0.85     # share of reads that go to the top_blocks hottest blocks
/// # write_top_share = 0.97    # the same for writes (more skewed)
/// # drift = 0.1               # fraction of the hot set replaced each night
/// # write_burst = 1           # mean writes arriving together
/// # read_sequential = 0       # chance a read is followed by its file's next block
/// # write_top_blocks = 100    # the hottest blocks write_top_share speaks of (default top_blocks)
/// # read_top_blocks = 100     # the hottest blocks read_top_share speaks of (default top_blocks)
/// # metadata_handful = false  # the write_top_blocks hottest: single blocks that never drift
/// # write_top_exponent = 0    # writes ∝ k^-t within (and beyond) their top blocks (default: one Zipf law)
/// ```
///
/// ```
/// use freeblock::workload::{DaysSpec, Workload};
/// let spec = DaysSpec { days: 2, requests_per_day: 1000, ..DaysSpec::default() };
/// let mut w = spec.build(17_938_986, 7).unwrap();
/// let mut n = 0;
/// while let Some(r) = w.next_request().unwrap() {
///     assert_eq!((r.lbn % 16, r.sectors), (0, 16));
///     assert_eq!(r.time / spec.day_ns(), n / 1000); // the day of the request
///     n += 1;
/// }
/// assert_eq!(n, 2000);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaysSpec {
    /// Number of days (≥ 1). Default 4 (the paper's tables show four consecutive days).
    #[serde(default = "default_days")]
    pub days: u32,
    /// Requests each day (≥ 1). Default 20 000.
    #[serde(default = "default_requests_per_day")]
    pub requests_per_day: u64,
    /// Length of a day, seconds (> 0). Default 86 400.
    #[serde(default = "default_day_s")]
    pub day_s: f64,
    /// Poisson arrival rate while a day's requests arrive, requests per second (> 0); the day's
    /// requests then take `requests_per_day / rate_per_s` seconds, which must fit in `day_s`.
    /// Default: `requests_per_day` over 15 hours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    /// Request (and block) size, sectors (≥ 1). Default 16 (8 KB).
    #[serde(default = "default_block_sectors")]
    pub block_sectors: u32,
    /// Probability that a request is a read, in [0, 1]. Default 0.6.
    #[serde(default = "default_read_fraction")]
    pub read_fraction: f64,
    /// Blocks in the hot set: the only blocks referenced on a day (≥ 2). Default 1800.
    #[serde(default = "default_hot_blocks")]
    pub hot_blocks: u32,
    /// How many of the hottest blocks `read_top_share` and `write_top_share` speak of
    /// (1 ≤ `top_blocks` < `hot_blocks`). Default 100.
    #[serde(default = "default_top_blocks")]
    pub top_blocks: u32,
    /// Share of reads that go to the `top_blocks` hottest blocks, above the uniform share
    /// `top_blocks / hot_blocks` and below 1. Default 0.85.
    #[serde(default = "default_read_top_share")]
    pub read_top_share: f64,
    /// Share of writes that go to the `top_blocks` hottest blocks (same bounds). Default 0.97.
    #[serde(default = "default_write_top_share")]
    pub write_top_share: f64,
    /// Fraction of the hot set replaced at the start of each day after the first, in [0, 1].
    /// Default 0.1.
    #[serde(default = "default_drift")]
    pub drift: f64,
    /// Mean number of writes that arrive together (≥ 1): UNIX writes back dirty blocks in bursts
    /// (paper 002 §4.2.1: "write requests arrive in bursts in UNIX systems", which is why its
    /// waiting times are long for writes and short for reads). A write starts a burst; each
    /// further write joins it with probability `1 − 1/write_burst`, so burst sizes are geometric.
    /// The share of reads stays `read_fraction`. Default 1 (no bursts).
    #[serde(default = "default_write_burst")]
    pub write_burst: f64,
    /// Sequential reads, in [0, 1): each rank of the hot set is a file of consecutive blocks
    /// starting at its hot block, whose length is drawn when it enters the hot set (at least
    /// `k + 1` blocks with this probability given at least `k`; mean `1 / (1 − read_sequential)`,
    /// at most [`MAX_FILE_BLOCKS`]). A read of the rank reads the whole file, block after block,
    /// at one instant (a file read with its next block read ahead); a write writes its first
    /// block. So this is the expected share of reads that follow their file's previous block
    /// (with `metadata_handful`, of the reads outside the handful, whose ranks are one block);
    /// `read_top_share` is the share of file reads (run starts), and a file's later blocks may
    /// lie outside the hot set. The share of reads stays `read_fraction`. Default 0 (one-block
    /// files: every read one block, as before files existed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_sequential: f64,
    /// How many of the hottest blocks `write_top_share` speaks of (1 ≤ n < `hot_blocks`), when
    /// it is not `top_blocks`: writes concentrated on a handful of blocks. Default `top_blocks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_top_blocks: Option<u32>,
    /// How many of the hottest blocks `read_top_share` speaks of (1 ≤ n < `hot_blocks`), when it
    /// is not `top_blocks`: file reads concentrated on the handful the writes hit. Default
    /// `top_blocks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_top_blocks: Option<u32>,
    /// The `write_top()` hottest ranks are metadata blocks of a file system whose blocks never
    /// move (paper 002's `/usr`, exported read-only): each is one block (a read of it reads that
    /// block only), and the nightly drift never replaces them (their heat sums the use of many
    /// files, so it does not come and go with one user's work); the drift replaces ranks among
    /// the others. Default false (every rank a file, any rank may drift).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub metadata_handful: bool,
    /// The writes' Zipf exponent `t` (finite, in [0, [`MAX_EXPONENT`]]) within their
    /// `write_top()` hottest ranks, and beyond them: rank `k` is written with probability ∝
    /// `k^-t`, scaled so that those ranks take `write_top_share` and the others the rest. One law
    /// solved for a share near 1 over a few ranks puts most writes on its first rank; this keeps
    /// the handful's total and sets how the writes spread inside it (0: evenly). Default none:
    /// one Zipf law over all ranks, its exponent solved for `write_top_share`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_top_exponent: Option<f64>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn default_write_burst() -> f64 {
    1.0
}

impl Default for DaysSpec {
    fn default() -> Self {
        Self {
            days: default_days(),
            requests_per_day: default_requests_per_day(),
            day_s: default_day_s(),
            rate_per_s: None,
            block_sectors: default_block_sectors(),
            read_fraction: default_read_fraction(),
            hot_blocks: default_hot_blocks(),
            top_blocks: default_top_blocks(),
            read_top_share: default_read_top_share(),
            write_top_share: default_write_top_share(),
            drift: default_drift(),
            write_burst: default_write_burst(),
            read_sequential: 0.0,
            write_top_blocks: None,
            read_top_blocks: None,
            metadata_handful: false,
            write_top_exponent: None,
        }
    }
}

fn invalid(field: &str, message: impl Into<String>) -> WorkloadError {
    WorkloadError::invalid(field, message)
}

fn positive(field: &str, value: f64, what: &str) -> Result<(), WorkloadError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("must be a positive number of {what}, got {value}"),
        ))
    }
}

fn fraction(field: &str, value: f64) -> Result<(), WorkloadError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("must be within [0, 1], got {value}"),
        ))
    }
}

/// Share of a Zipf law `k^-s` over ranks `1..=hot` that falls on ranks `1..=top`.
fn zipf_top_share(s: f64, top: u32, hot: u32) -> f64 {
    let mut head = 0.0;
    let mut all = 0.0;
    for k in 1..=hot {
        let p = f64::from(k).powf(-s);
        if k <= top {
            head += p;
        }
        all += p;
    }
    head / all
}

/// The Zipf exponent whose `top` hottest of `hot` ranks take `share` (bisection; the share grows
/// with the exponent from `top / hot` at 0 towards 1).
fn solve_exponent(share: f64, top: u32, hot: u32) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while hi < MAX_EXPONENT && zipf_top_share(hi, top, hot) < share {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if zipf_top_share(mid, top, hot) < share {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The cumulative distribution of ranks `1..=hot` under `k^-s`; the last entry is exactly 1.
fn zipf_cdf(s: f64, hot: u32) -> Vec<f64> {
    let mut cdf: Vec<f64> = Vec::with_capacity(hot as usize);
    let mut acc = 0.0;
    for k in 1..=hot {
        acc += f64::from(k).powf(-s);
        cdf.push(acc);
    }
    for c in &mut cdf {
        *c /= acc;
    }
    if let Some(last) = cdf.last_mut() {
        *last = 1.0;
    }
    cdf
}

/// The cumulative distribution of ranks `1..=hot` under `k^-t` scaled so that ranks `1..=top`
/// take `share` and the others `1 − share`; the last entry is exactly 1.
fn split_zipf_cdf(t: f64, top: u32, share: f64, hot: u32) -> Vec<f64> {
    let weight = |k: u32| f64::from(k).powf(-t);
    let head: f64 = (1..=top).map(weight).sum();
    let tail: f64 = (top + 1..=hot).map(weight).sum();
    let mut acc = 0.0;
    let mut cdf: Vec<f64> = (1..=hot)
        .map(|k| {
            acc += if k <= top { share * weight(k) / head } else { (1.0 - share) * weight(k) / tail };
            acc
        })
        .collect();
    if let Some(last) = cdf.last_mut() {
        *last = 1.0;
    }
    cdf
}

/// A file's length, blocks: at least `k + 1` with probability `p` given at least `k`, at most
/// [`MAX_FILE_BLOCKS`].
fn file_length(rng: &mut ChaCha8Rng, p: f64) -> u32 {
    let mut n = 1;
    while n < MAX_FILE_BLOCKS && rng.gen_bool(p) {
        n += 1;
    }
    n
}

/// The mean blocks a read reads: file lengths weighted by the rank law `cdf` (1 with no files).
fn mean_read_run(cdf: &[f64], file_blocks: &[u32]) -> f64 {
    if file_blocks.is_empty() {
        return 1.0;
    }
    let mut prev = 0.0;
    let mut mean = 0.0;
    for (c, &n) in cdf.iter().zip(file_blocks) {
        mean += (c - prev) * f64::from(n);
        prev = *c;
    }
    mean
}

impl DaysSpec {
    /// Length of a day, ns. Day `d` is `[d · day_ns, (d + 1) · day_ns)`: a request's day is
    /// `time / day_ns()`.
    #[must_use]
    pub fn day_ns(&self) -> SimTime {
        (self.day_s * 1e9).round() as SimTime
    }

    /// The day a request time falls in (0-based).
    #[must_use]
    pub fn day_of(&self, time: SimTime) -> u64 {
        time / self.day_ns().max(1)
    }

    /// The arrival rate, requests per second: `rate_per_s`, or `requests_per_day` over 15 hours.
    #[must_use]
    pub fn rate(&self) -> f64 {
        self.rate_per_s
            .unwrap_or(self.requests_per_day as f64 / (DEFAULT_ACTIVE_HOURS * 3600.0))
    }

    /// How long a day's requests take to arrive, ns: `requests_per_day / rate`.
    #[must_use]
    pub fn active_ns(&self) -> SimTime {
        (self.requests_per_day as f64 / self.rate() * 1e9).round() as SimTime
    }

    /// All requests of all days.
    #[must_use]
    pub fn total_requests(&self) -> u64 {
        u64::from(self.days).saturating_mul(self.requests_per_day)
    }

    /// Ranks of the hot set replaced each night: `round(drift · hot_blocks)`.
    #[must_use]
    pub fn replaced_per_day(&self) -> u32 {
        (self.drift * f64::from(self.hot_blocks)).round() as u32
    }

    /// How many of the hottest blocks `write_top_share` speaks of: `write_top_blocks`, or
    /// `top_blocks`.
    #[must_use]
    pub fn write_top(&self) -> u32 {
        self.write_top_blocks.unwrap_or(self.top_blocks)
    }

    /// How many of the hottest blocks `read_top_share` speaks of: `read_top_blocks`, or
    /// `top_blocks`.
    #[must_use]
    pub fn read_top(&self) -> u32 {
        self.read_top_blocks.unwrap_or(self.top_blocks)
    }

    /// Ranks the nightly drift may replace: all of them, or those below the metadata handful.
    fn drifting_ranks(&self) -> u32 {
        if self.metadata_handful {
            self.hot_blocks.saturating_sub(self.write_top())
        } else {
            self.hot_blocks
        }
    }

    /// The expected share of all requests that go to the `top_blocks` hottest blocks:
    /// `read_fraction · read_top_share + (1 − read_fraction) · w`, where `w` is the writes' share
    /// of those blocks (`write_top_share` when `write_top_blocks` is `top_blocks`, else what the
    /// writes' Zipf law gives them). Reads and writes rank the hot set alike, so their hottest
    /// blocks are the same. With `read_sequential > 0` the reads' term counts run starts.
    #[must_use]
    pub fn expected_top_share(&self) -> f64 {
        self.read_fraction * self.reads_share_of_top_blocks() + (1.0 - self.read_fraction) * self.writes_share_of_top_blocks()
    }

    /// The file reads' share of the `top_blocks` hottest blocks: `read_top_share` when
    /// `read_top_blocks` is `top_blocks`, else what the reads' Zipf law gives those blocks.
    #[must_use]
    pub fn reads_share_of_top_blocks(&self) -> f64 {
        self.share_of_top_blocks(self.read_top_share, self.read_top())
    }

    /// The writes' share of the `top_blocks` hottest blocks: `write_top_share` when
    /// `write_top_blocks` is `top_blocks`, else what the writes' law gives those blocks.
    #[must_use]
    pub fn writes_share_of_top_blocks(&self) -> f64 {
        match self.write_top_exponent {
            Some(t) if self.write_top() != self.top_blocks => {
                let cdf = split_zipf_cdf(t, self.write_top(), self.write_top_share, self.hot_blocks);
                cdf.get(self.top_blocks as usize - 1).copied().unwrap_or(1.0)
            }
            _ => self.share_of_top_blocks(self.write_top_share, self.write_top()),
        }
    }

    /// The writes' rank law as a cumulative distribution over ranks `1..=hot_blocks`: one Zipf
    /// law of exponent `write_s`, or the split law of `write_top_exponent`.
    fn write_cdf(&self, write_s: f64) -> Vec<f64> {
        match self.write_top_exponent {
            Some(t) => split_zipf_cdf(t, self.write_top(), self.write_top_share, self.hot_blocks),
            None => zipf_cdf(write_s, self.hot_blocks),
        }
    }

    /// The `top_blocks` hottest blocks' share under the Zipf law whose `top` hottest take `share`.
    fn share_of_top_blocks(&self, share: f64, top: u32) -> f64 {
        if top == self.top_blocks {
            share
        } else {
            zipf_top_share(solve_exponent(share, top, self.hot_blocks), self.top_blocks, self.hot_blocks)
        }
    }

    /// The Zipf exponents `(reads, writes)` that give the set top shares (the writes':
    /// `write_top_exponent` when it is set).
    ///
    /// # Errors
    /// As [`DaysSpec::validate`] for the popularity fields.
    pub fn zipf_exponents(&self) -> Result<(f64, f64), WorkloadError> {
        self.validate_popularity()?;
        Ok((
            solve_exponent(self.read_top_share, self.read_top(), self.hot_blocks),
            self.write_top_exponent.unwrap_or_else(|| solve_exponent(self.write_top_share, self.write_top(), self.hot_blocks)),
        ))
    }

    fn validate_popularity(&self) -> Result<(), WorkloadError> {
        if !(2..=MAX_HOT_BLOCKS).contains(&self.hot_blocks) {
            return Err(invalid(
                "hot_blocks",
                format!(
                    "must be between 2 and {MAX_HOT_BLOCKS}, got {}",
                    self.hot_blocks
                ),
            ));
        }
        if self.top_blocks == 0 || self.top_blocks >= self.hot_blocks {
            return Err(invalid(
                "top_blocks",
                format!(
                    "must be at least 1 and below hot_blocks ({}), got {}",
                    self.hot_blocks, self.top_blocks
                ),
            ));
        }
        for (field, n) in [("write_top_blocks", self.write_top_blocks), ("read_top_blocks", self.read_top_blocks)] {
            if let Some(n) = n {
                if n == 0 || n >= self.hot_blocks {
                    return Err(invalid(field, format!("must be at least 1 and below hot_blocks ({}), got {n}", self.hot_blocks)));
                }
            }
        }
        for (field, share, top, top_field) in [
            ("read_top_share", self.read_top_share, self.read_top(), if self.read_top_blocks.is_some() { "read_top_blocks" } else { "top_blocks" }),
            ("write_top_share", self.write_top_share, self.write_top(), if self.write_top_blocks.is_some() { "write_top_blocks" } else { "top_blocks" }),
        ] {
            let uniform = f64::from(top) / f64::from(self.hot_blocks);
            if !(share.is_finite() && share > uniform && share < 1.0) {
                return Err(invalid(
                    field,
                    format!(
                        "must be above the uniform share {top_field} / hot_blocks = {uniform} \
                         and below 1, got {share}"
                    ),
                ));
            }
        }
        if let Some(t) = self.write_top_exponent {
            if !(t.is_finite() && (0.0..=MAX_EXPONENT).contains(&t)) {
                return Err(invalid("write_top_exponent", format!("must be a Zipf exponent within [0, {MAX_EXPONENT}], got {t}")));
            }
        }
        Ok(())
    }

    /// Checks the spec against a disk of `capacity_sectors`.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] naming the first offending field: a count of 0, a NaN,
    /// infinite or non-positive time or rate, a fraction outside [0, 1], top shares outside
    /// (uniform, 1), a day too short for its requests, or a disk with too few blocks for the hot
    /// set and its replacements.
    pub fn validate(&self, capacity_sectors: u64) -> Result<(), WorkloadError> {
        if self.days == 0 {
            return Err(invalid("days", "must be at least 1"));
        }
        if self.requests_per_day == 0 {
            return Err(invalid("requests_per_day", "must be at least 1"));
        }
        positive("day_s", self.day_s, "seconds")?;
        if self.day_ns() == 0 {
            return Err(invalid(
                "day_s",
                format!("{} s is shorter than a nanosecond", self.day_s),
            ));
        }
        let span_ns = f64::from(self.days) * self.day_s * 1e9;
        if span_ns > crate::sim::MAX_SIMULATED_NS as f64 {
            return Err(invalid(
                "day_s",
                format!(
                    "{} days of {} s are past the longest simulated run ({} s)",
                    self.days,
                    crate::error::number(self.day_s),
                    crate::sim::MAX_SIMULATED_NS / 1_000_000_000
                ),
            ));
        }
        if let Some(rate) = self.rate_per_s {
            positive("rate_per_s", rate, "requests per second")?;
        }
        let active_s = self.requests_per_day as f64 / self.rate();
        if active_s > self.day_s {
            return Err(invalid(
                "rate_per_s",
                format!(
                    "{} requests at {} per second take {active_s} s, longer than a day \
                     (day_s = {})",
                    self.requests_per_day,
                    self.rate(),
                    self.day_s
                ),
            ));
        }
        if self.block_sectors == 0 {
            return Err(invalid("block_sectors", "must be at least 1"));
        }
        fraction("read_fraction", self.read_fraction)?;
        fraction("drift", self.drift)?;
        if !(0.0..1.0).contains(&self.read_sequential) {
            return Err(invalid("read_sequential", format!("must be within [0, 1), got {}", self.read_sequential)));
        }
        if !(self.write_burst.is_finite() && self.write_burst >= 1.0) {
            return Err(invalid("write_burst", format!("must be a mean burst size ≥ 1, not {}", self.write_burst)));
        }
        self.validate_popularity()?;
        if self.days > 1 && self.replaced_per_day() > self.drifting_ranks() {
            return Err(invalid(
                "drift",
                format!("replaces {} ranks a night, but only {} may drift (the metadata handful of write_top_blocks stays)", self.replaced_per_day(), self.drifting_ranks()),
            ));
        }
        let blocks = capacity_sectors / u64::from(self.block_sectors);
        let needed = u64::from(self.hot_blocks)
            + if self.days > 1 {
                u64::from(self.replaced_per_day())
            } else {
                0
            };
        if blocks < needed {
            return Err(invalid(
                "hot_blocks",
                format!(
                    "{} hot blocks (plus {} replaced each day) of {} sectors need {needed} \
                     blocks; the disk ({capacity_sectors} sectors) has {blocks}",
                    self.hot_blocks,
                    self.replaced_per_day(),
                    self.block_sectors
                ),
            ));
        }
        Ok(())
    }

    /// Checks the spec against a disk of `capacity_sectors` and makes the generator.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] naming the offending field (see [`DaysSpec::validate`]).
    pub fn build(&self, capacity_sectors: u64, seed: u64) -> Result<DaysWorkload, WorkloadError> {
        self.validate(capacity_sectors)?;
        let (read_s, write_s) = self.zipf_exponents()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let blocks = capacity_sectors / u64::from(self.block_sectors);
        let mut members = HashSet::with_capacity(self.hot_blocks as usize * 2);
        let mut hot = Vec::with_capacity(self.hot_blocks as usize);
        while hot.len() < self.hot_blocks as usize {
            let b = rng.gen_range(0..blocks);
            if members.insert(b) {
                hot.push(b);
            }
        }
        // File lengths only when files are on, so that other specs draw as before.
        let handful = if self.metadata_handful { self.write_top() as usize } else { 0 };
        let file_blocks: Vec<u32> = if self.read_sequential > 0.0 {
            (0..hot.len()).map(|rank| if rank < handful { 1 } else { file_length(&mut rng, self.read_sequential) }).collect()
        } else {
            Vec::new()
        };
        let read_cdf = zipf_cdf(read_s, self.hot_blocks);
        let mean_read_run = mean_read_run(&read_cdf, &file_blocks);
        Ok(DaysWorkload {
            spec: self.clone(),
            rng,
            blocks,
            hot,
            members,
            read_cdf,
            file_blocks,
            mean_read_run,
            write_cdf: self.write_cdf(write_s),
            day_ns: self.day_ns(),
            active_ns: self.active_ns() as f64,
            day: 0,
            in_day: 0,
            position: 0.0,
            burst_at: None,
            read_run: None,
            done: false,
        })
    }
}

/// The generator of a [`DaysSpec`]: a [`Workload`] with open arrivals.
#[derive(Debug, Clone)]
pub struct DaysWorkload {
    spec: DaysSpec,
    rng: ChaCha8Rng,
    /// Blocks on the disk.
    blocks: u64,
    /// Today's hot set, hottest rank first.
    hot: Vec<u64>,
    /// The blocks in `hot`.
    members: HashSet<u64>,
    read_cdf: Vec<f64>,
    write_cdf: Vec<f64>,
    /// Each rank's file length, blocks (empty: one-block files).
    file_blocks: Vec<u32>,
    /// The mean blocks of a read instant: the file lengths weighted by the reads' rank law.
    mean_read_run: f64,
    day_ns: SimTime,
    active_ns: f64,
    /// The current day (0-based).
    day: u32,
    /// Requests issued today.
    in_day: u64,
    /// Today's last arrival as a fraction of the active period, in [0, 1].
    position: f64,
    /// The time of the write burst under way, if the next request may join it.
    burst_at: Option<SimTime>,
    /// The time and block of the last read, and the blocks of its file still to read.
    read_run: Option<(SimTime, u64, u32)>,
    /// All days are done.
    done: bool,
}

impl DaysWorkload {
    /// The day of the last request returned (0-based; 0 before the first).
    #[must_use]
    pub fn day(&self) -> u32 {
        self.day
    }

    /// Today's hot set, hottest first, as block numbers: block `b` is sectors
    /// `b · block_sectors ..` `(b + 1) · block_sectors`. It changes when the first request of a
    /// new day is drawn.
    #[must_use]
    pub fn hot_set(&self) -> &[u64] {
        &self.hot
    }

    /// The spec this generator follows.
    #[must_use]
    pub fn spec(&self) -> &DaysSpec {
        &self.spec
    }

    /// Replaces `replaced_per_day` uniformly chosen ranks with blocks not in the hot set.
    fn drift(&mut self) {
        let k = self.spec.replaced_per_day() as usize;
        if k == 0 {
            return;
        }
        // The metadata handful (the hottest ranks, when it is kept) never drifts.
        let fixed = self.hot.len() - self.spec.drifting_ranks() as usize;
        let ranks: Vec<usize> = sample(&mut self.rng, self.hot.len() - fixed, k).into_iter().map(|i| i + fixed).collect();
        let mut old = Vec::with_capacity(k);
        for rank in ranks {
            let fresh = loop {
                let b = self.rng.gen_range(0..self.blocks);
                if self.members.insert(b) {
                    break b;
                }
            };
            old.push(std::mem::replace(&mut self.hot[rank], fresh));
            if !self.file_blocks.is_empty() {
                self.file_blocks[rank] = file_length(&mut self.rng, self.spec.read_sequential);
            }
        }
        for b in old {
            self.members.remove(&b);
        }
        self.mean_read_run = mean_read_run(&self.read_cdf, &self.file_blocks);
    }
}

impl Workload for DaysWorkload {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        if self.done {
            return Ok(None);
        }
        if self.in_day == self.spec.requests_per_day {
            if self.day + 1 >= self.spec.days {
                self.done = true;
                return Ok(None);
            }
            self.day += 1;
            self.in_day = 0;
            self.position = 0.0;
            self.burst_at = None;
            self.read_run = None;
            self.drift();
        }
        let burst = self.spec.write_burst;
        let rf = self.spec.read_fraction;
        // A further write of the burst under way, at its time; or the next block of the file
        // the last read read, with it (no draw: the file's length is set).
        let joined = match (self.burst_at, self.read_run) {
            (Some(t), _) if self.rng.gen_bool(1.0 - 1.0 / burst) => Some((t, Op::Write, None)),
            (_, Some((t, b, left))) if left > 0 && b + 1 < self.blocks => Some((t, Op::Read, Some((b + 1, left - 1)))),
            _ => None,
        };
        // The next of the remaining n uniform order statistics on [position, 1):
        // position + (1 − position) · (1 − U^(1/n)), U uniform on (0, 1].
        let (time, op, next_block) = match joined {
            Some(j) => j,
            None => {
                // Arrival instants: a file read of mean `read_run` blocks, or a write burst of
                // mean `burst`. Reads take the share `r` of instants that keeps `read_fraction`
                // of requests: r · read_run / (r · read_run + (1 − r) · burst) = read_fraction.
                let read_run = self.mean_read_run;
                let r = if burst > 1.0 || read_run > 1.0 { rf * burst / ((1.0 - rf) * read_run + rf * burst) } else { rf };
                let per_instant = r * read_run + (1.0 - r) * burst;
                let left = ((self.spec.requests_per_day - self.in_day) as f64 / per_instant).max(1.0);
                let u: f64 = 1.0 - self.rng.gen::<f64>();
                let step = -(u.ln() / left).exp_m1();
                self.position = (self.position + (1.0 - self.position) * step).clamp(0.0, 1.0);
                let time = u64::from(self.day) * self.day_ns + (self.position * self.active_ns) as SimTime;
                let op = if self.rng.gen_bool(r) { Op::Read } else { Op::Write };
                (time, op, None)
            }
        };
        self.burst_at = (op == Op::Write).then_some(time);
        let (block, left) = match next_block {
            Some(b) => b,
            None => {
                let cdf = if op == Op::Read { &self.read_cdf } else { &self.write_cdf };
                let x: f64 = self.rng.gen();
                let rank = cdf.partition_point(|&c| c <= x).min(cdf.len() - 1);
                (self.hot[rank], self.file_blocks.get(rank).map_or(0, |n| n - 1))
            }
        };
        self.read_run = (op == Op::Read).then_some((time, block, left));
        self.in_day += 1;
        let sectors = self.spec.block_sectors;
        Ok(Some(Request::new(
            time,
            block * u64::from(sectors),
            sectors,
            op,
        )))
    }

    fn arrival(&self) -> ArrivalKind {
        ArrivalKind::Open
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const CAPACITY: u64 = 17_938_986; // Quantum Atlas 10K

    /// Per-day block reference counts: all requests, reads, writes.
    struct Day {
        all: HashMap<u64, u64>,
        reads: HashMap<u64, u64>,
        writes: HashMap<u64, u64>,
    }

    fn top_share(counts: &HashMap<u64, u64>, top: usize) -> f64 {
        let mut c: Vec<u64> = counts.values().copied().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        let total: u64 = c.iter().sum();
        c.iter().take(top).sum::<u64>() as f64 / total as f64
    }

    fn run(spec: &DaysSpec, seed: u64) -> Vec<Day> {
        let mut w = spec.build(CAPACITY, seed).unwrap();
        let mut days: Vec<Day> = Vec::new();
        let mut last = 0;
        while let Some(r) = w.next_request().unwrap() {
            assert!(r.time >= last, "arrivals go back in time");
            last = r.time;
            let d = spec.day_of(r.time) as usize;
            assert_eq!(d, w.day() as usize);
            assert!(r.time - d as u64 * spec.day_ns() <= spec.active_ns());
            assert_eq!((r.lbn % 16, r.sectors), (0, 16));
            assert!(r.end() <= CAPACITY);
            if days.len() <= d {
                days.push(Day {
                    all: HashMap::new(),
                    reads: HashMap::new(),
                    writes: HashMap::new(),
                });
            }
            let day = &mut days[d];
            *day.all.entry(r.lbn).or_default() += 1;
            let by_op = if r.op.is_read() {
                &mut day.reads
            } else {
                &mut day.writes
            };
            *by_op.entry(r.lbn).or_default() += 1;
        }
        days
    }

    #[test]
    fn default_skew_matches_the_paper_and_the_settings() {
        let spec = DaysSpec::default();
        let days = run(&spec, 42);
        assert_eq!(days.len(), 4);
        let mut shares = Vec::new();
        for (d, day) in days.iter().enumerate() {
            let n: u64 = day.all.values().sum();
            assert_eq!(n, spec.requests_per_day);
            let all = top_share(&day.all, 100);
            let reads = top_share(&day.reads, 100);
            let writes = top_share(&day.writes, 100);
            let blocks = day.all.len();
            eprintln!(
                "day {d}: top-100 share {all:.3} (reads {reads:.3}, writes {writes:.3}), \
                 {blocks} blocks take all requests"
            );
            // Fig. 5: the 100 hottest take ~90%; fewer than 2000 blocks take all.
            assert!((all - spec.expected_top_share()).abs() < 0.02, "{all}");
            assert!((all - 0.90).abs() < 0.03, "{all}");
            assert!(blocks < 2000 && blocks <= spec.hot_blocks as usize);
            // Writes more skewed than reads, each near its setting.
            assert!(writes > reads + 0.05, "{writes} vs {reads}");
            assert!((reads - spec.read_top_share).abs() < 0.02, "{reads}");
            assert!((writes - spec.write_top_share).abs() < 0.02, "{writes}");
            shares.push(all);
        }
        // Drift: of the blocks clearly hot today (≥ 5 references), the share that was referenced
        // yesterday is about 1 − drift.
        for d in 1..days.len() {
            let hot_today: Vec<u64> = days[d]
                .all
                .iter()
                .filter(|&(_, &c)| c >= 5)
                .map(|(&b, _)| b)
                .collect();
            let kept = hot_today
                .iter()
                .filter(|b| days[d - 1].all.contains_key(b))
                .count();
            let overlap = kept as f64 / hot_today.len() as f64;
            eprintln!(
                "day {} → {d}: {overlap:.3} of {} hot blocks were referenced the day before",
                d - 1,
                hot_today.len()
            );
            assert!((overlap - (1.0 - spec.drift)).abs() < 0.05, "{overlap}");
        }
    }

    #[test]
    fn hot_set_drifts_by_the_set_fraction() {
        let spec = DaysSpec {
            requests_per_day: 10,
            drift: 0.25,
            hot_blocks: 400,
            ..DaysSpec::default()
        };
        let mut w = spec.build(CAPACITY, 3).unwrap();
        let mut prev: Vec<u64> = w.hot_set().to_vec();
        let mut day = 0;
        while w.next_request().unwrap().is_some() {
            if w.day() != day {
                day = w.day();
                let now = w.hot_set();
                let same = now.iter().zip(&prev).filter(|(a, b)| a == b).count();
                assert_eq!(same, 300, "ranks that kept their block");
                let set: HashSet<u64> = now.iter().copied().collect();
                assert_eq!(set.len(), 400, "hot set blocks are distinct");
                let old: HashSet<u64> = prev.iter().copied().collect();
                assert_eq!(set.intersection(&old).count(), 300);
                prev = now.to_vec();
            }
        }
        assert_eq!(day, 3);
    }

    #[test]
    fn exponents_reach_the_target_shares() {
        let spec = DaysSpec::default();
        let (r, w) = spec.zipf_exponents().unwrap();
        assert!(w > r && r > 0.0);
        assert!((zipf_top_share(r, 100, 1800) - 0.85).abs() < 1e-9);
        assert!((zipf_top_share(w, 100, 1800) - 0.97).abs() < 1e-9);
    }

    #[test]
    fn bad_files_and_write_handfuls_are_named() {
        let err = |spec: DaysSpec| spec.validate(CAPACITY).unwrap_err().to_string();
        for bad in [1.0, -0.1, f64::NAN] {
            let e = err(DaysSpec { read_sequential: bad, ..DaysSpec::default() });
            assert!(e.contains("read_sequential"), "{e}");
        }
        for bad in [0, 1800, 5000] {
            let e = err(DaysSpec { write_top_blocks: Some(bad), ..DaysSpec::default() });
            assert!(e.contains("write_top_blocks") && e.contains(&bad.to_string()), "{e}");
        }
        // A share at or below the uniform share of its own handful is refused, naming the handful.
        let e = err(DaysSpec { write_top_blocks: Some(900), write_top_share: 0.4, ..DaysSpec::default() });
        assert!(e.contains("write_top_share") && e.contains("write_top_blocks"), "{e}");
        for bad in [0, 1800] {
            let e = err(DaysSpec { read_top_blocks: Some(bad), ..DaysSpec::default() });
            assert!(e.contains("read_top_blocks") && e.contains(&bad.to_string()), "{e}");
        }
        let e = err(DaysSpec { read_top_blocks: Some(900), read_top_share: 0.4, ..DaysSpec::default() });
        assert!(e.contains("read_top_share") && e.contains("read_top_blocks"), "{e}");
        // A drift that would need the metadata handful's ranks is refused.
        let e = err(DaysSpec { metadata_handful: true, write_top_blocks: Some(21), hot_blocks: 100, top_blocks: 50, drift: 0.9, ..DaysSpec::default() });
        assert!(e.contains("drift") && e.contains("79"), "{e}");
    }

    #[test]
    fn the_metadata_handful_is_single_blocks_that_never_drift() {
        let spec = DaysSpec {
            days: 4,
            requests_per_day: 4000,
            read_fraction: 0.5,
            read_sequential: 0.6,
            write_top_blocks: Some(21),
            read_top_blocks: Some(21),
            read_top_share: 0.5,
            metadata_handful: true,
            drift: 0.3,
            ..DaysSpec::default()
        };
        let mut w = spec.build(CAPACITY, 4).unwrap();
        let handful: Vec<u64> = w.hot_set()[..21].to_vec();
        let starts: HashSet<u64> = handful.iter().map(|b| b * 16).collect();
        let (mut day, mut replaced) = (0, 0);
        let mut prev_set: Vec<u64> = w.hot_set().to_vec();
        let mut prev: Option<Request> = None;
        let (mut handful_reads, mut continued) = (0u64, 0u64);
        while let Some(r) = w.next_request().unwrap() {
            if w.day() != day {
                day = w.day();
                assert_eq!(w.hot_set()[..21], handful[..], "day {day}: the handful drifted");
                replaced += w.hot_set().iter().zip(&prev_set).filter(|(a, b)| a != b).count();
                prev_set = w.hot_set().to_vec();
            }
            // A read that follows a read of a handful block at the same instant is another file's
            // start, never the handful block's next block.
            if let Some(p) = prev.as_ref().filter(|p| p.op.is_read() && r.op.is_read() && p.time == r.time && starts.contains(&p.lbn)) {
                assert_ne!(r.lbn, p.lbn + 16, "a handful block was read as a file");
            }
            if r.op.is_read() && starts.contains(&r.lbn) {
                handful_reads += 1;
                continued += u64::from(prev.as_ref().is_some_and(|p| p.time == r.time && p.op.is_read() && p.lbn + 16 == r.lbn));
            }
            prev = Some(r);
        }
        assert_eq!(day, 3);
        // The drift still replaced its share, all of it below the handful.
        assert_eq!(replaced, 3 * spec.replaced_per_day() as usize);
        assert!(handful_reads > 0);
        assert_eq!(continued, 0);
    }

    #[test]
    fn files_are_read_whole_at_one_instant() {
        let spec = DaysSpec { days: 1, requests_per_day: 5000, read_fraction: 1.0, read_sequential: 0.5, ..DaysSpec::default() };
        let mut w = spec.build(CAPACITY, 9).unwrap();
        let starts: HashSet<u64> = w.hot_set().iter().map(|b| b * 16).collect();
        let (mut reads, mut continuing) = (0u64, 0u64);
        let mut prev: Option<Request> = None;
        while let Some(r) = w.next_request().unwrap() {
            reads += 1;
            let follows = prev.as_ref().is_some_and(|p| p.time == r.time && p.lbn + 16 == r.lbn);
            // A read either starts a file (a hot block) or follows its file's previous block.
            assert!(follows || starts.contains(&r.lbn), "read at {} neither starts nor continues a file", r.lbn);
            continuing += u64::from(follows);
            prev = Some(r);
        }
        let share = continuing as f64 / reads as f64;
        assert!((share - 0.5).abs() < 0.1, "{share}");
    }

    /// `write_top_exponent` keeps the handful's total and spreads the writes inside it by
    /// `k^-t`: 0 evenly, where one law solved for the same share puts most of them on rank 1.
    #[test]
    fn write_top_exponent_spreads_the_handful() {
        let base = DaysSpec { days: 1, requests_per_day: 40_000, read_fraction: 0.0, write_top_blocks: Some(21), write_top_share: 0.99, ..DaysSpec::default() };
        let write_counts = |spec: &DaysSpec| {
            let mut w = spec.build(CAPACITY, 3).unwrap();
            let handful: Vec<u64> = w.hot_set()[..21].iter().map(|b| b * 16).collect();
            let mut per_rank = [0u64; 21];
            let mut writes = 0u64;
            while let Some(r) = w.next_request().unwrap() {
                writes += 1;
                if let Some(k) = handful.iter().position(|&b| b == r.lbn) {
                    per_rank[k] += 1;
                }
            }
            (per_rank.map(|c| c as f64 / writes as f64), writes)
        };
        let (one_law, _) = write_counts(&base);
        assert!(one_law[0] > 0.5, "one law: rank 1 takes {}", one_law[0]);
        for t in [0.0, 1.0] {
            let (shares, _) = write_counts(&DaysSpec { write_top_exponent: Some(t), ..base.clone() });
            let total: f64 = shares.iter().sum();
            assert!((total - 0.99).abs() < 0.01, "t {t}: the handful takes {total}");
            let norm: f64 = (1..=21).map(|k| f64::from(k).powf(-t)).sum();
            for (k, share) in shares.iter().enumerate() {
                let expected = 0.99 * ((k + 1) as f64).powf(-t) / norm;
                assert!((share - expected).abs() < 0.01, "t {t}, rank {}: {share} against {expected}", k + 1);
            }
        }
        // The writes' share of the top_blocks follows the split law, not the one law.
        let even = DaysSpec { write_top_exponent: Some(0.0), ..base.clone() };
        assert!((even.writes_share_of_top_blocks() - (0.99 + 0.01 * 79.0 / 1779.0)).abs() < 1e-9);
        for bad in [-0.5, f64::NAN, f64::INFINITY, 2e3] {
            let e = DaysSpec { write_top_exponent: Some(bad), ..base.clone() }.validate(CAPACITY).unwrap_err().to_string();
            assert!(e.contains("write_top_exponent"), "{e}");
        }
    }

    #[test]
    fn deterministic_per_seed() {
        let spec = DaysSpec {
            requests_per_day: 500,
            ..DaysSpec::default()
        };
        let take = |seed| {
            let mut w = spec.build(CAPACITY, seed).unwrap();
            let mut v = Vec::new();
            while let Some(r) = w.next_request().unwrap() {
                v.push(r);
            }
            v
        };
        assert_eq!(take(5), take(5));
        assert_ne!(take(5), take(6));
    }
}
