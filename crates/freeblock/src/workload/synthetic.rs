//! Synthetic workloads: seeded generators of random, local, OLTP-like and sequential requests.
//!
//! Each generator owns one [`ChaCha8Rng`] seeded from the seed given to `build`, and draws from it
//! in a fixed order per request (arrival gap, read/write, size, start), so the same spec, capacity
//! and seed give the same request stream on every platform. Nothing is precomputed: a generator is
//! a few words of state however many requests it yields.
//!
//! | spec type | models | paper |
//! |---|---|---|
//! | [`RandomSpec`] (`random`) | uniform starts, fixed or exponential sizes, 2:1 reads | 000 §3 ("random" workload) |
//! | [`LocalitySpec`] (`locality`) | a fraction of starts near the last request (normal, σ = 4 MB) | 000 §3.2, Fig. 4 |
//! | [`OltpSpec`] (`oltp`) | closed tasks, 30 ms think time, sizes 4 KB multiples, mean 8 KB | 000 §6.2 |
//! | [`SequentialSpec`] (`sequential`) | a stream of adjacent (or strided) requests | scans, streaming |

use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Normal};
use serde::{Deserialize, Serialize};

use crate::request::Request;
use freeblock_disk::{Op, SimTime};

use super::{ArrivalKind, Workload, WorkloadError};

/// Sectors in 4 MB, the standard deviation of "local" starts in paper 000 §3.2.
pub const FOUR_MB_SECTORS: f64 = 8192.0;

fn default_read_fraction() -> f64 {
    2.0 / 3.0
}
fn default_one() -> u64 {
    1
}
fn default_fixed_4k() -> SizeDist {
    SizeDist::Fixed { sectors: 8 }
}
fn default_oltp_size() -> SizeDist {
    SizeDist::Exponential {
        mean_sectors: 16.0,
        multiple_sectors: 8,
    }
}
fn default_oltp_alignment() -> u64 {
    8
}
fn default_think_time_ms() -> f64 {
    30.0
}
fn default_local_stddev() -> f64 {
    FOUR_MB_SECTORS
}
fn default_sequential_read_fraction() -> f64 {
    1.0
}

/// How request sizes are drawn.
///
/// In TOML: `size = { type = "fixed", sectors = 8 }` or
/// `size = { type = "exponential", mean_sectors = 16, multiple_sectors = 8 }`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeDist {
    /// Every request is `sectors` long (at least 1, at most the capacity).
    Fixed {
        /// Request length, sectors.
        sectors: u32,
    },
    /// Multiples of `multiple_sectors` drawn from an exponential distribution (paper 000 §6.2:
    /// "a multiple of 4 kilobytes chosen from an exponential distribution with a mean of 8
    /// kilobytes" is `mean_sectors = 16, multiple_sectors = 8`).
    ///
    /// The exact rule: draw `x ~ Exp(mean = mean_sectors)`, then
    /// `size = max(1, round(x / multiple_sectors)) * multiple_sectors`, capped at the largest
    /// multiple that fits on the disk. Rounding keeps the mean close to `mean_sectors`, but the
    /// `max(1, …)` lifts it a little: the exact mean is
    /// `m · (1 + e^(-1.5/μ) / (1 - e^(-1/μ)))` with `m = multiple_sectors` and
    /// `μ = mean_sectors / m` (for 8 KB / 4 KB: 2.20 multiples, 8.8 KB; see
    /// [`SizeDist::mean_sectors`]).
    Exponential {
        /// Mean of the underlying exponential, sectors (> 0).
        mean_sectors: f64,
        /// Granularity of sizes, sectors (≥ 1).
        multiple_sectors: u32,
    },
}

impl SizeDist {
    /// The exact mean request size this rule yields, sectors (ignoring the capacity cap).
    #[must_use]
    pub fn mean_sectors(&self) -> f64 {
        match *self {
            SizeDist::Fixed { sectors } => f64::from(sectors),
            SizeDist::Exponential {
                mean_sectors,
                multiple_sectors,
            } => {
                let m = f64::from(multiple_sectors);
                let lambda = m / mean_sectors;
                m * (1.0 + (-1.5 * lambda).exp() / (1.0 - (-lambda).exp()))
            }
        }
    }

    fn validate(&self, capacity: u64) -> Result<(), WorkloadError> {
        match *self {
            SizeDist::Fixed { sectors } => {
                if sectors == 0 {
                    return Err(WorkloadError::invalid("size.sectors", "must be at least 1"));
                }
                if u64::from(sectors) > capacity {
                    return Err(WorkloadError::invalid(
                        "size.sectors",
                        format!("{sectors} sectors do not fit on a disk of {capacity} sectors"),
                    ));
                }
            }
            SizeDist::Exponential {
                mean_sectors,
                multiple_sectors,
            } => {
                if !(mean_sectors.is_finite() && mean_sectors > 0.0) {
                    return Err(WorkloadError::invalid(
                        "size.mean_sectors",
                        format!("must be a positive number, got {mean_sectors}"),
                    ));
                }
                if multiple_sectors == 0 {
                    return Err(WorkloadError::invalid(
                        "size.multiple_sectors",
                        "must be at least 1",
                    ));
                }
                if u64::from(multiple_sectors) > capacity {
                    return Err(WorkloadError::invalid(
                        "size.multiple_sectors",
                        format!(
                            "{multiple_sectors} sectors do not fit on a disk of {capacity} sectors"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn sampler(&self, capacity: u64) -> SizeSampler {
        match *self {
            SizeDist::Fixed { sectors } => SizeSampler::Fixed(sectors),
            SizeDist::Exponential {
                mean_sectors,
                multiple_sectors,
            } => {
                let m = u64::from(multiple_sectors);
                let max_multiples = (capacity.min(u64::from(u32::MAX)) / m).max(1);
                SizeSampler::Exponential {
                    exp: Exp::new(1.0 / mean_sectors).expect("mean validated positive"),
                    multiple: multiple_sectors,
                    max_multiples,
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
enum SizeSampler {
    Fixed(u32),
    Exponential {
        exp: Exp<f64>,
        multiple: u32,
        max_multiples: u64,
    },
}

impl SizeSampler {
    fn sample(&self, rng: &mut ChaCha8Rng) -> u32 {
        match self {
            SizeSampler::Fixed(s) => *s,
            SizeSampler::Exponential {
                exp,
                multiple,
                max_multiples,
            } => {
                let x: f64 = exp.sample(rng);
                // `as` saturates for huge values; the cap below bounds it anyway.
                let k = ((x / f64::from(*multiple)).round() as u64).clamp(1, *max_multiples);
                // k * multiple ≤ min(capacity, u32::MAX) by construction of `max_multiples`.
                u32::try_from(k * u64::from(*multiple)).unwrap_or(u32::MAX)
            }
        }
    }
}

/// Open (Poisson) or closed arrivals of a synthetic generator.
#[derive(Debug, Clone)]
enum Arrivals {
    Closed,
    Poisson { gap_ns: Exp<f64>, now_ns: f64 },
}

impl Arrivals {
    fn new(rate_per_s: Option<f64>) -> Self {
        match rate_per_s {
            None => Arrivals::Closed,
            Some(rate) => Arrivals::Poisson {
                gap_ns: Exp::new(rate / 1e9).expect("rate validated positive"),
                now_ns: 0.0,
            },
        }
    }

    fn kind(&self) -> ArrivalKind {
        match self {
            Arrivals::Closed => ArrivalKind::Closed,
            Arrivals::Poisson { .. } => ArrivalKind::Open,
        }
    }

    fn next(&mut self, rng: &mut ChaCha8Rng) -> SimTime {
        match self {
            Arrivals::Closed => 0,
            Arrivals::Poisson { gap_ns, now_ns } => {
                *now_ns += gap_ns.sample(rng);
                now_ns.round() as SimTime
            }
        }
    }
}

fn check_capacity(capacity: u64) -> Result<(), WorkloadError> {
    if capacity == 0 {
        return Err(WorkloadError::invalid(
            "capacity_sectors",
            "the disk has no sectors",
        ));
    }
    Ok(())
}

fn check_fraction(field: &str, value: f64) -> Result<(), WorkloadError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(WorkloadError::invalid(
            field,
            format!("must be within [0, 1], got {value}"),
        ))
    }
}

fn check_rate(rate: Option<f64>) -> Result<(), WorkloadError> {
    match rate {
        Some(r) if !(r.is_finite() && r > 0.0) => Err(WorkloadError::invalid(
            "rate_per_s",
            format!("must be a positive number of requests per second, got {r}"),
        )),
        _ => Ok(()),
    }
}

/// `count = 0` makes an empty run; an endless stream is written by omitting `count`.
fn check_count(count: Option<u64>) -> Result<(), WorkloadError> {
    if count == Some(0) {
        return Err(WorkloadError::invalid(
            "count",
            "must be at least 1 request (omit it for an endless stream)",
        ));
    }
    Ok(())
}

/// Starts are multiples of `alignment`: past the disk, or so coarse that only LBN 0 leaves room
/// for the smallest request, every request would silently start at LBN 0.
fn check_alignment(alignment: u64, smallest: u64, capacity: u64) -> Result<(), WorkloadError> {
    if alignment == 0 {
        return Err(WorkloadError::invalid(
            "alignment_sectors",
            "must be at least 1",
        ));
    }
    if alignment > 1 && alignment.saturating_add(smallest) > capacity {
        return Err(WorkloadError::invalid(
            "alignment_sectors",
            format!(
                "starts every {alignment} sectors leave room for a request of {smallest} \
                 sectors only at LBN 0 on a disk of {capacity} sectors"
            ),
        ));
    }
    Ok(())
}

fn draw_op(rng: &mut ChaCha8Rng, read_fraction: f64) -> Op {
    if rng.gen_bool(read_fraction) {
        Op::Read
    } else {
        Op::Write
    }
}

/// The `random` workload (paper 000 §3's default): starts uniform over the disk, sizes fixed or
/// exponential, reads with probability `read_fraction`.
///
/// ```toml
/// [workload]
/// type = "random"
/// count = 10000
/// size = { type = "fixed", sectors = 8 }   # default: 4 KB
/// read_fraction = 0.6667                   # default: 2/3
/// alignment_sectors = 1                    # default: 1
/// # rate_per_s = 100.0                     # Poisson arrivals (open); omit for closed
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomSpec {
    /// Number of requests; omitted means an endless stream (the simulator must stop on its own
    /// criterion, e.g. a time limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Request sizes. Default: fixed 8 sectors (4 KB).
    #[serde(default = "default_fixed_4k")]
    pub size: SizeDist,
    /// Probability that a request is a read, in [0, 1]. Default 2/3 (2:1 reads to writes).
    #[serde(default = "default_read_fraction")]
    pub read_fraction: f64,
    /// Starts are multiples of this many sectors (≥ 1). Default 1. Requests never run past the
    /// last sector: the start is drawn uniformly over the aligned positions where the whole
    /// request fits.
    #[serde(default = "default_one")]
    pub alignment_sectors: u64,
    /// Mean arrival rate of a Poisson process, requests per second: arrivals are
    /// [`ArrivalKind::Open`]. Omitted: [`ArrivalKind::Closed`] (the simulator issues the next
    /// request when one completes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
}

impl Default for RandomSpec {
    /// Paper 000 §3's default: 10 000 requests of 4 KB, 2:1 reads, closed, alignment 1.
    fn default() -> Self {
        Self {
            count: Some(10_000),
            size: default_fixed_4k(),
            read_fraction: default_read_fraction(),
            alignment_sectors: 1,
            rate_per_s: None,
        }
    }
}

impl RandomSpec {
    /// Checks the spec against a disk of `capacity_sectors` and makes the generator.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] naming the offending field.
    ///
    /// ```
    /// use freeblock::workload::{RandomSpec, Workload};
    /// let mut w = RandomSpec { count: Some(3), ..RandomSpec::default() }.build(1_000_000, 7).unwrap();
    /// let mut n = 0;
    /// while let Some(r) = w.next_request().unwrap() {
    ///     assert!(r.end() <= 1_000_000);
    ///     n += 1;
    /// }
    /// assert_eq!(n, 3);
    /// ```
    pub fn build(&self, capacity_sectors: u64, seed: u64) -> Result<RandomWorkload, WorkloadError> {
        RandomWorkload::new(
            RandomParams {
                count: self.count,
                size: self.size,
                read_fraction: self.read_fraction,
                alignment: self.alignment_sectors,
                rate_per_s: self.rate_per_s,
                locality: None,
            },
            capacity_sectors,
            seed,
        )
    }
}

/// The `locality` workload (paper 000 §3.2, Fig. 4): the `random` workload, except that a fraction
/// `local_fraction` of request starts are "local" — drawn from a normal distribution centred on
/// the previous request's start with a standard deviation of 4 MB — and the rest uniform. This
/// crudely models file systems that keep related data in one cylinder group.
///
/// Local starts are rounded to a sector, clamped into the disk so the whole request fits, then
/// aligned down to `alignment_sectors`. The first request has no predecessor and is uniform.
///
/// ```toml
/// [workload]
/// type = "locality"
/// count = 10000
/// local_fraction = 0.7
/// local_stddev_sectors = 8192   # default: 4 MB
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalitySpec {
    /// Number of requests; omitted means endless.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Request sizes. Default: fixed 8 sectors (4 KB).
    #[serde(default = "default_fixed_4k")]
    pub size: SizeDist,
    /// Probability of a read, in [0, 1]. Default 2/3.
    #[serde(default = "default_read_fraction")]
    pub read_fraction: f64,
    /// Starts are multiples of this many sectors (≥ 1). Default 1.
    #[serde(default = "default_one")]
    pub alignment_sectors: u64,
    /// Poisson arrival rate, requests per second (open); omitted: closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    /// Fraction of requests whose start is local, in [0, 1] (the x axis of Fig. 4).
    pub local_fraction: f64,
    /// Standard deviation of local starts around the previous start, sectors (≥ 0). Default 8192
    /// (4 MB).
    #[serde(default = "default_local_stddev")]
    pub local_stddev_sectors: f64,
}

impl Default for LocalitySpec {
    /// 10 000 requests of 4 KB, 2:1 reads, closed, `local_fraction` 0 (set it), σ = 4 MB.
    fn default() -> Self {
        Self {
            count: Some(10_000),
            size: default_fixed_4k(),
            read_fraction: default_read_fraction(),
            alignment_sectors: 1,
            rate_per_s: None,
            local_fraction: 0.0,
            local_stddev_sectors: default_local_stddev(),
        }
    }
}

impl LocalitySpec {
    /// Checks the spec and makes the generator.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] naming the offending field.
    pub fn build(&self, capacity_sectors: u64, seed: u64) -> Result<RandomWorkload, WorkloadError> {
        check_fraction("local_fraction", self.local_fraction)?;
        if !(self.local_stddev_sectors.is_finite() && self.local_stddev_sectors >= 0.0) {
            return Err(WorkloadError::invalid(
                "local_stddev_sectors",
                format!(
                    "must be a non-negative number, got {}",
                    self.local_stddev_sectors
                ),
            ));
        }
        RandomWorkload::new(
            RandomParams {
                count: self.count,
                size: self.size,
                read_fraction: self.read_fraction,
                alignment: self.alignment_sectors,
                rate_per_s: self.rate_per_s,
                locality: Some((self.local_fraction, self.local_stddev_sectors)),
            },
            capacity_sectors,
            seed,
        )
    }
}

/// The `oltp` workload (paper 000 §6.2): a closed system of tasks, each issuing one request and
/// then thinking for 30 ms; starts uniform over the disk, 2:1 reads, sizes multiples of 4 KB from
/// an exponential with mean 8 KB (see [`SizeDist::Exponential`] for the exact rule). The paper
/// reports that this approximates Microsoft SQL Server running TPC-C well enough for freeblock
/// studies.
///
/// The generator yields the request *sequence*; arrivals are [`ArrivalKind::Closed`] and the
/// simulator runs the tasks: it applies `think_time_ms` (read it with
/// [`WorkloadSpec::think_time_ns`](super::WorkloadSpec::think_time_ns)) and the multiprogramming
/// level (the number of tasks), which is an experiment parameter, not part of this spec.
///
/// Starts default to 4 KB alignment (`alignment_sectors = 8`), as in DiskSim's synthetic generator
/// whose "blocking factor" aligns both sizes and starts; set it to 1 for unaligned starts.
///
/// ```toml
/// [workload]
/// type = "oltp"
/// think_time_ms = 30.0      # default
/// # count = 100000          # omit for an endless stream
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OltpSpec {
    /// Number of requests; omitted means endless (paper 000 runs until the background scans end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Think time of each task between its request's completion and its next request, ms (≥ 0).
    /// Default 30.
    #[serde(default = "default_think_time_ms")]
    pub think_time_ms: f64,
    /// Probability of a read, in [0, 1]. Default 2/3.
    #[serde(default = "default_read_fraction")]
    pub read_fraction: f64,
    /// Request sizes. Default: exponential, mean 16 sectors (8 KB), multiples of 8 sectors (4 KB).
    #[serde(default = "default_oltp_size")]
    pub size: SizeDist,
    /// Starts are multiples of this many sectors (≥ 1). Default 8 (4 KB).
    #[serde(default = "default_oltp_alignment")]
    pub alignment_sectors: u64,
}

impl Default for OltpSpec {
    fn default() -> Self {
        Self {
            count: None,
            think_time_ms: default_think_time_ms(),
            read_fraction: default_read_fraction(),
            size: default_oltp_size(),
            alignment_sectors: default_oltp_alignment(),
        }
    }
}

impl OltpSpec {
    /// Think time in nanoseconds.
    #[must_use]
    pub fn think_time_ns(&self) -> SimTime {
        freeblock_disk::time::ms_to_ns(self.think_time_ms)
    }

    /// Checks the spec and makes the generator.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] naming the offending field.
    pub fn build(&self, capacity_sectors: u64, seed: u64) -> Result<RandomWorkload, WorkloadError> {
        let limit_ms = crate::sim::MAX_SIMULATED_NS as f64 / 1e6;
        if !(self.think_time_ms.is_finite() && (0.0..=limit_ms).contains(&self.think_time_ms)) {
            return Err(WorkloadError::invalid(
                "think_time_ms",
                format!(
                    "must be a time from 0 to {} ms (the longest simulated run), got {}",
                    crate::error::number(limit_ms),
                    crate::error::number(self.think_time_ms)
                ),
            ));
        }
        RandomWorkload::new(
            RandomParams {
                count: self.count,
                size: self.size,
                read_fraction: self.read_fraction,
                alignment: self.alignment_sectors,
                rate_per_s: None,
                locality: None,
            },
            capacity_sectors,
            seed,
        )
    }
}

struct RandomParams {
    count: Option<u64>,
    size: SizeDist,
    read_fraction: f64,
    alignment: u64,
    rate_per_s: Option<f64>,
    /// (fraction local, standard deviation in sectors)
    locality: Option<(f64, f64)>,
}

/// Generator behind `random`, `locality` and `oltp`. Build it from a spec.
#[derive(Debug, Clone)]
pub struct RandomWorkload {
    rng: ChaCha8Rng,
    capacity: u64,
    remaining: Option<u64>,
    size: SizeSampler,
    read_fraction: f64,
    alignment: u64,
    arrivals: Arrivals,
    locality: Option<(f64, Normal<f64>)>,
    last_lbn: Option<u64>,
}

impl RandomWorkload {
    fn new(p: RandomParams, capacity: u64, seed: u64) -> Result<Self, WorkloadError> {
        check_capacity(capacity)?;
        check_count(p.count)?;
        p.size.validate(capacity)?;
        check_fraction("read_fraction", p.read_fraction)?;
        let smallest = match p.size {
            SizeDist::Fixed { sectors } => u64::from(sectors),
            SizeDist::Exponential { multiple_sectors, .. } => u64::from(multiple_sectors),
        };
        check_alignment(p.alignment, smallest, capacity)?;
        check_rate(p.rate_per_s)?;
        Ok(Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
            capacity,
            remaining: p.count,
            size: p.size.sampler(capacity),
            read_fraction: p.read_fraction,
            alignment: p.alignment,
            arrivals: Arrivals::new(p.rate_per_s),
            locality: p.locality.map(|(frac, sd)| {
                (
                    frac,
                    Normal::new(0.0, sd).expect("standard deviation validated"),
                )
            }),
            last_lbn: None,
        })
    }

    fn draw_start(&mut self, sectors: u32) -> u64 {
        let max_start = self.capacity - u64::from(sectors);
        let a = self.alignment;
        if let Some((frac, normal)) = &self.locality {
            let local = self.rng.gen_bool(*frac);
            if let (true, Some(last)) = (local, self.last_lbn) {
                let offset: f64 = normal.sample(&mut self.rng);
                let x = (last as f64 + offset).round().clamp(0.0, max_start as f64) as u64;
                return x.min(max_start) / a * a;
            }
        }
        self.rng.gen_range(0..=max_start / a) * a
    }
}

impl Workload for RandomWorkload {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        if let Some(remaining) = &mut self.remaining {
            if *remaining == 0 {
                return Ok(None);
            }
            *remaining -= 1;
        }
        let time = self.arrivals.next(&mut self.rng);
        let op = draw_op(&mut self.rng, self.read_fraction);
        let sectors = self.size.sample(&mut self.rng);
        let lbn = self.draw_start(sectors);
        self.last_lbn = Some(lbn);
        Ok(Some(Request::new(time, lbn, sectors, op)))
    }

    fn arrival(&self) -> ArrivalKind {
        self.arrivals.kind()
    }

    fn is_endless(&self) -> bool {
        self.remaining.is_none()
    }
}

/// The `sequential` workload: requests of `request_sectors` starting at `start_lbn`, each starting
/// `stride_sectors` after the previous one (default: right after it, so the stream is contiguous).
/// When the next request would run past the end of the disk the stream wraps to LBN 0.
///
/// ```toml
/// [workload]
/// type = "sequential"
/// count = 1000
/// request_sectors = 128
/// start_lbn = 0            # default
/// # stride_sectors = 256   # default: request_sectors
/// read_fraction = 1.0      # default: all reads
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequentialSpec {
    /// Number of requests; omitted means endless.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// First request's start. Default 0.
    #[serde(default)]
    pub start_lbn: u64,
    /// Length of every request, sectors (≥ 1).
    pub request_sectors: u32,
    /// Distance from one request's start to the next one's, sectors. Default `request_sectors`.
    /// 0 repeats the same request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_sectors: Option<u64>,
    /// Probability of a read, in [0, 1]. Default 1 (a read stream).
    #[serde(default = "default_sequential_read_fraction")]
    pub read_fraction: f64,
    /// Poisson arrival rate, requests per second (open); omitted: closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
}

impl SequentialSpec {
    /// Checks the spec and makes the generator.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] naming the offending field.
    pub fn build(
        &self,
        capacity_sectors: u64,
        seed: u64,
    ) -> Result<SequentialWorkload, WorkloadError> {
        check_capacity(capacity_sectors)?;
        check_count(self.count)?;
        check_fraction("read_fraction", self.read_fraction)?;
        check_rate(self.rate_per_s)?;
        if self.request_sectors == 0 {
            return Err(WorkloadError::invalid(
                "request_sectors",
                "must be at least 1",
            ));
        }
        let sectors = u64::from(self.request_sectors);
        if sectors > capacity_sectors {
            return Err(WorkloadError::invalid(
                "request_sectors",
                format!("{sectors} sectors do not fit on a disk of {capacity_sectors} sectors"),
            ));
        }
        if self.start_lbn.saturating_add(sectors) > capacity_sectors {
            return Err(WorkloadError::invalid(
                "start_lbn",
                format!(
                    "a request of {sectors} sectors at {} runs past the disk capacity of \
                     {capacity_sectors} sectors",
                    self.start_lbn
                ),
            ));
        }
        let stride = self.stride_sectors.unwrap_or(sectors);
        // A stride past the last start that fits would wrap every request after the first to
        // LBN 0.
        if stride > capacity_sectors - sectors {
            return Err(WorkloadError::invalid(
                "stride_sectors",
                format!(
                    "a stride of {stride} sectors jumps past the disk ({capacity_sectors} sectors) \
                     from every start: every request after the first would wrap to LBN 0"
                ),
            ));
        }
        Ok(SequentialWorkload {
            rng: ChaCha8Rng::seed_from_u64(seed),
            capacity: capacity_sectors,
            remaining: self.count,
            sectors: self.request_sectors,
            stride,
            next_lbn: self.start_lbn,
            read_fraction: self.read_fraction,
            arrivals: Arrivals::new(self.rate_per_s),
        })
    }
}

/// Generator behind `sequential`. Build it from a [`SequentialSpec`].
#[derive(Debug, Clone)]
pub struct SequentialWorkload {
    rng: ChaCha8Rng,
    capacity: u64,
    remaining: Option<u64>,
    sectors: u32,
    stride: u64,
    next_lbn: u64,
    read_fraction: f64,
    arrivals: Arrivals,
}

impl Workload for SequentialWorkload {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        if let Some(remaining) = &mut self.remaining {
            if *remaining == 0 {
                return Ok(None);
            }
            *remaining -= 1;
        }
        let time = self.arrivals.next(&mut self.rng);
        let op = draw_op(&mut self.rng, self.read_fraction);
        let len = u64::from(self.sectors);
        if self.next_lbn.saturating_add(len) > self.capacity {
            self.next_lbn = 0;
        }
        let lbn = self.next_lbn;
        self.next_lbn = lbn.saturating_add(self.stride);
        Ok(Some(Request::new(time, lbn, self.sectors, op)))
    }

    fn arrival(&self) -> ArrivalKind {
        self.arrivals.kind()
    }

    fn is_endless(&self) -> bool {
        self.remaining.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_mean_formula_matches_a_sum() {
        let d = SizeDist::Exponential {
            mean_sectors: 16.0,
            multiple_sectors: 8,
        };
        // Σ_k k·P(max(1, round(Y)) = k) with Y ~ Exp(mean 2), by direct summation.
        let lambda: f64 = 0.5;
        let cdf = |y: f64| 1.0 - (-lambda * y).exp();
        let mut mean = cdf(1.5);
        for k in 2..2000 {
            let k = f64::from(k);
            mean += k * (cdf(k + 0.5) - cdf(k - 0.5));
        }
        assert!(
            (d.mean_sectors() - 8.0 * mean).abs() < 1e-9,
            "{} vs {}",
            d.mean_sectors(),
            8.0 * mean
        );
        assert!((d.mean_sectors() - 17.6).abs() < 0.1);
    }

    #[test]
    fn sequential_wraps_to_zero() {
        let spec = SequentialSpec {
            count: Some(4),
            start_lbn: 80,
            request_sectors: 8,
            stride_sectors: None,
            read_fraction: 1.0,
            rate_per_s: None,
        };
        let mut w = spec.build(100, 0).unwrap();
        let lbns: Vec<u64> = std::iter::from_fn(|| w.next_request().unwrap())
            .map(|r| r.lbn)
            .collect();
        assert_eq!(lbns, vec![80, 88, 0, 8]);
    }
}
