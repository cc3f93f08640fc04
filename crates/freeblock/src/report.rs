//! Results of a run: head-usage breakdown, response- and access-time statistics, and optional
//! per-request records.
//!
//! Statistics are streamed: means are exact sums and percentiles come from a log-linear histogram
//! (relative error below 0.4%), so memory stays flat however many requests a run serves. Per-request
//! records are kept only when asked for.

use freeblock_disk::{Breakdown, Op, SimTime};

use crate::energy::EnergyReport;
use serde::Serialize;

/// Log-linear histogram of nanosecond values: 256 sub-buckets per power of two.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
    min: u64,
}

const SUB_BITS: u32 = 8;
const SUB: u64 = 1 << SUB_BITS;

impl Default for Histogram {
    fn default() -> Self {
        Self { counts: vec![0; (64 * SUB) as usize], n: 0, sum: 0, max: 0, min: u64::MAX }
    }
}

impl Histogram {
    fn bucket(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let exp = 63 - v.leading_zeros(); // ≥ SUB_BITS
        let shift = exp - SUB_BITS;
        let mantissa = (v >> shift) - SUB; // 0..SUB
        ((u64::from(shift) + 1) * SUB + mantissa) as usize
    }

    /// Lower bound of a bucket's values, and its width.
    fn bucket_range(b: usize) -> (u64, u64) {
        let b = b as u64;
        if b < SUB {
            return (b, 1);
        }
        let shift = b / SUB - 1;
        let mantissa = b % SUB;
        ((SUB + mantissa) << shift, 1 << shift)
    }

    /// Adds one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[Self::bucket(v)] += 1;
        self.n += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
        self.min = self.min.min(v);
    }

    /// Number of values.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Exact mean (0 when empty).
    #[must_use]
    pub fn mean(&self) -> f64 {
        if self.n == 0 { 0.0 } else { self.sum as f64 / self.n as f64 }
    }

    /// The `q` quantile (0..=1), interpolated within its bucket; exact at the extremes.
    #[must_use]
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        if q >= 1.0 {
            return self.max as f64;
        }
        if q <= 0.0 {
            return self.min as f64;
        }
        let rank = q * self.n as f64;
        let mut seen = 0u64;
        for (b, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            if (seen + c) as f64 >= rank {
                let (lo, w) = Self::bucket_range(b);
                let within = (rank - seen as f64) / c as f64;
                return (lo as f64 + within * w as f64).clamp(self.min as f64, self.max as f64);
            }
            seen += c;
        }
        self.max as f64
    }

    /// Summary in milliseconds.
    #[must_use]
    pub fn summary_ms(&self) -> Summary {
        let ms = |v: f64| v / 1e6;
        Summary {
            count: self.n,
            mean_ms: ms(self.mean()),
            p50_ms: ms(self.quantile(0.5)),
            p90_ms: ms(self.quantile(0.9)),
            p95_ms: ms(self.quantile(0.95)),
            p99_ms: ms(self.quantile(0.99)),
            max_ms: ms(self.max as f64),
        }
    }
}

/// Mean and percentiles of a time, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub count: u64,
    /// Mean.
    pub mean_ms: f64,
    /// Median.
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Maximum.
    pub max_ms: f64,
}

/// Where the disk head's time went over a run, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HeadUsage {
    /// Seeking, switching heads and settling.
    pub seek_ns: u64,
    /// Waiting for sectors to rotate under the head.
    pub rotational_latency_ns: u64,
    /// Media transfer.
    pub transfer_ns: u64,
    /// Of `transfer_ns`, writing (the energy model charges reads and writes apart).
    pub write_transfer_ns: u64,
    /// Controller overhead and non-overlapped bus time.
    pub overhead_ns: u64,
    /// Nothing to do.
    pub idle_ns: u64,
    /// Media accesses added.
    pub accesses: u64,
}

impl HeadUsage {
    /// Adds one access's breakdown.
    pub fn add(&mut self, b: &Breakdown, op: Op) {
        self.seek_ns += b.seek;
        self.rotational_latency_ns += b.rotational_latency;
        self.transfer_ns += b.transfer;
        if !op.is_read() {
            self.write_transfer_ns += b.transfer;
        }
        self.overhead_ns += b.overhead + b.bus;
        self.accesses += 1;
    }

    /// Total time accounted for.
    #[must_use]
    pub fn total_ns(&self) -> u64 {
        self.seek_ns + self.rotational_latency_ns + self.transfer_ns + self.overhead_ns + self.idle_ns
    }

    /// Fractions of the total (seek, rotational latency, transfer, overhead, idle).
    #[must_use]
    pub fn fractions(&self) -> HeadUsageFractions {
        let t = self.total_ns().max(1) as f64;
        HeadUsageFractions {
            seek: self.seek_ns as f64 / t,
            rotational_latency: self.rotational_latency_ns as f64 / t,
            transfer: self.transfer_ns as f64 / t,
            overhead: self.overhead_ns as f64 / t,
            idle: self.idle_ns as f64 / t,
        }
    }
}

/// [`HeadUsage`] as fractions of the run's time (summing to 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HeadUsageFractions {
    /// Seek share.
    pub seek: f64,
    /// Rotational-latency share (the potential free bandwidth).
    pub rotational_latency: f64,
    /// Media-transfer share.
    pub transfer: f64,
    /// Overhead share.
    pub overhead: f64,
    /// Idle share.
    pub idle: f64,
}

/// One served request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Record {
    /// Index in arrival order.
    pub id: u64,
    /// Arrival, ns.
    pub arrival_ns: SimTime,
    /// Service start, ns.
    pub start_ns: SimTime,
    /// Completion, ns.
    pub end_ns: SimTime,
    /// First LBN (logical: as the workload asked).
    pub lbn: u64,
    /// Where it was served (the first physical I/O's start): equal to `lbn` unless a layout
    /// policy placed the block elsewhere.
    pub phys_lbn: u64,
    /// Sectors.
    pub sectors: u32,
    /// Read or write.
    pub op: Op,
    /// Seek, ns.
    pub seek_ns: SimTime,
    /// Rotational latency, ns.
    pub rotational_latency_ns: SimTime,
    /// Media transfer, ns.
    pub transfer_ns: SimTime,
    /// Overhead + bus, ns.
    pub overhead_ns: SimTime,
    /// Served from the cache.
    pub cache_hit: bool,
    /// Service time measured on a real drive (traces that record it), ns.
    pub measured_ns: Option<SimTime>,
    /// Energy of the access, mJ ([`crate::energy::access_mj`]), on a disk whose spec gives power.
    pub energy_mj: Option<f64>,
}

/// What one record column holds (for writers that need a type per column, such as Parquet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// An unsigned integer (always present).
    Int,
    /// Milliseconds (always present).
    Ms,
    /// Milliseconds, absent where not known.
    OptionalMs,
    /// Millijoules, absent where not known.
    OptionalMj,
    /// A flag.
    Bool,
    /// A short label.
    Text,
}

/// One per-request column: its name and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordColumn {
    /// Column name (a unit suffix says the unit: `_ms`).
    pub name: &'static str,
    /// What it holds.
    pub kind: RecordKind,
}

const fn column(name: &'static str, kind: RecordKind) -> RecordColumn {
    RecordColumn { name, kind }
}

/// The per-request columns, in order, as the command line writes them (`freeblock run --csv`,
/// `--out`) and as Python's `Result.records` holds them: one column set everywhere. Times are
/// milliseconds; `op` is `R` or `W`; `measured_ms` is empty (Python: NaN) unless the trace
/// recorded a measured service time, `energy_mj` unless the disk's spec gives power.
/// [`Record::values`] gives a record's cells in this order.
pub const RECORD_COLUMNS: [RecordColumn; 17] = {
    use RecordKind::{Bool, Int, Ms, OptionalMj, OptionalMs, Text};
    [
        column("id", Int),
        column("arrival_ms", Ms),
        column("start_ms", Ms),
        column("end_ms", Ms),
        column("response_ms", Ms),
        column("access_ms", Ms),
        column("lbn", Int),
        column("phys_lbn", Int),
        column("sectors", Int),
        column("op", Text),
        column("seek_ms", Ms),
        column("rotational_latency_ms", Ms),
        column("transfer_ms", Ms),
        column("overhead_ms", Ms),
        column("cache_hit", Bool),
        column("measured_ms", OptionalMs),
        column("energy_mj", OptionalMj),
    ]
};

/// One cell of a record row (see [`Record::values`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RecordValue {
    /// A count or an address.
    Int(u64),
    /// A time in milliseconds.
    Ms(f64),
    /// An energy in millijoules.
    Mj(f64),
    /// A yes/no flag.
    Bool(bool),
    /// A short label (`R` / `W`).
    Text(&'static str),
    /// No value (a measured time the trace did not record).
    Missing,
}

impl std::fmt::Display for RecordValue {
    /// The CSV form: integers as they are, times and energies with 6 decimals (1 ns, 1 nJ), flags as `true`/`false`,
    /// a missing value as nothing.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordValue::Int(v) => write!(f, "{v}"),
            RecordValue::Ms(v) | RecordValue::Mj(v) => write!(f, "{v:.6}"),
            RecordValue::Bool(v) => write!(f, "{v}"),
            RecordValue::Text(v) => f.write_str(v),
            RecordValue::Missing => Ok(()),
        }
    }
}

impl Record {
    /// This record's cells, in [`RECORD_COLUMNS`] order.
    #[must_use]
    pub fn values(&self) -> [RecordValue; RECORD_COLUMNS.len()] {
        use RecordValue::{Bool, Int, Missing, Mj, Ms, Text};
        let ms = |ns: SimTime| Ms(ns as f64 / 1e6);
        [
            Int(self.id),
            ms(self.arrival_ns),
            ms(self.start_ns),
            ms(self.end_ns),
            ms(self.end_ns - self.arrival_ns),
            ms(self.end_ns - self.start_ns),
            Int(self.lbn),
            Int(self.phys_lbn),
            Int(u64::from(self.sectors)),
            Text(if self.op.is_read() { "R" } else { "W" }),
            ms(self.seek_ns),
            ms(self.rotational_latency_ns),
            ms(self.transfer_ns),
            ms(self.overhead_ns),
            Bool(self.cache_hit),
            self.measured_ns.map_or(Missing, ms),
            self.energy_mj.map_or(Missing, Mj),
        ]
    }

    /// The CSV header line (with its newline) of [`Record::write_csv_row`]'s rows.
    #[must_use]
    pub fn csv_header() -> String {
        let mut s = RECORD_COLUMNS.map(|c| c.name).join(",");
        s.push('\n');
        s
    }

    /// Writes this record as one CSV line (no quoting is needed: no cell holds a comma).
    ///
    /// # Errors
    /// The writer's.
    pub fn write_csv_row(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        for (i, v) in self.values().iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write!(out, "{v}")?;
        }
        out.write_all(b"\n")
    }
}

/// Everything a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// Disk name.
    pub disk: String,
    /// Scheduler name.
    pub scheduler: String,
    /// Requests served (after warm-up).
    pub requests: u64,
    /// Simulated time covered by the statistics, ns.
    pub duration_ns: SimTime,
    /// Where the head's time went.
    pub head_usage: HeadUsage,
    /// The same as fractions.
    pub head_usage_fractions: HeadUsageFractions,
    /// Response time: arrival to completion.
    pub response: Summary,
    /// Access (service) time: start to completion.
    pub access: Summary,
    /// Response time of reads.
    pub read_response: Summary,
    /// Response time of writes.
    pub write_response: Summary,
    /// Requests served from the cache.
    pub cache_hits: u64,
    /// Requests served per simulated second.
    pub throughput_per_s: f64,
    /// Freeblock scheduling's results, when it was on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freeblock: Option<crate::freeblock::FreeblockReport>,
    /// Candidate-aware selection's cost, when the run used it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<SelectionStats>,
    /// The layout policy's results, when one was on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutSummary>,
    /// Energy over the run ([`crate::energy`]), when the disk's spec gives power.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<EnergyReport>,
    /// Per-request records, when kept.
    #[serde(skip)]
    pub records: Vec<Record>,
}

/// What candidate-aware selection computed ([`crate::sim::SimConfig::selection`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SelectionStats {
    /// Scheduling decisions.
    pub decisions: u64,
    /// Exact positioning computations over all decisions.
    pub evaluated: u64,
    /// Candidates pending over all decisions (what an exhaustive search would compute).
    pub pending_candidates: u64,
}

/// A layout policy's part of a run report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayoutSummary {
    /// The policy.
    pub policy: String,
    /// I/Os the policy issued itself and the disk served (foreground or idle; free ones are in
    /// the freeblock report).
    pub policy_ios: u64,
    /// The policy's own figures.
    pub details: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_close() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.quantile(0.5);
        assert!((p50 / 50_000_000.0 - 1.0).abs() < 0.005, "{p50}");
        assert!((h.quantile(0.99) / 99_000_000.0 - 1.0).abs() < 0.005);
        assert_eq!(h.quantile(1.0), 100_000_000.0);
        assert!((h.mean() - 50_000_500.0).abs() < 1.0);
    }

    #[test]
    fn record_values_follow_the_columns() {
        let r = Record {
            id: 7,
            arrival_ns: 1_000_000,
            start_ns: 1_500_000,
            end_ns: 4_250_000,
            lbn: 100,
            phys_lbn: 200,
            sectors: 8,
            op: Op::Write,
            seek_ns: 1_000_000,
            rotational_latency_ns: 1_250_000,
            transfer_ns: 400_000,
            overhead_ns: 100_000,
            cache_hit: false,
            measured_ns: None,
            energy_mj: Some(12.5),
        };
        let mut line = Vec::new();
        r.write_csv_row(&mut line).unwrap();
        let line = String::from_utf8(line).unwrap();
        let cells: Vec<&str> = line.trim_end().split(',').collect();
        assert_eq!(cells.len(), RECORD_COLUMNS.len());
        let cell = |name: &str| cells[RECORD_COLUMNS.iter().position(|c| c.name == name).unwrap()];
        assert_eq!(cell("id"), "7");
        assert_eq!(cell("response_ms"), "3.250000");
        assert_eq!(cell("access_ms"), "2.750000");
        assert_eq!(cell("phys_lbn"), "200");
        assert_eq!(cell("op"), "W");
        assert_eq!(cell("measured_ms"), "");
        assert_eq!(cell("energy_mj"), "12.500000");
        assert_eq!(Record::csv_header().trim_end().split(',').count(), RECORD_COLUMNS.len());
        // Every cell is of its column's kind (a measured time may be missing).
        let measured = Record { measured_ns: Some(2_000_000), energy_mj: None, ..r };
        for record in [r, measured] {
            for (value, col) in record.values().iter().zip(RECORD_COLUMNS) {
                let fits = matches!(
                    (value, col.kind),
                    (RecordValue::Int(_), RecordKind::Int)
                        | (RecordValue::Ms(_), RecordKind::Ms | RecordKind::OptionalMs)
                        | (RecordValue::Missing, RecordKind::OptionalMs | RecordKind::OptionalMj)
                        | (RecordValue::Mj(_), RecordKind::OptionalMj)
                        | (RecordValue::Bool(_), RecordKind::Bool)
                        | (RecordValue::Text(_), RecordKind::Text)
                );
                assert!(fits, "{}: {value:?} is not a {:?}", col.name, col.kind);
            }
        }
    }

    #[test]
    fn bucket_ranges_contain_their_values() {
        for v in [0u64, 1, 255, 256, 257, 1000, 123_456_789, u64::MAX / 3] {
            let (lo, w) = Histogram::bucket_range(Histogram::bucket(v));
            assert!(lo <= v && v < lo + w, "{v}: {lo}+{w}");
        }
    }
}
