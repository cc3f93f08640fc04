//! # Reference monitoring: which blocks are hot
//!
//! The rearrangement system watches the request stream and periodically produces a *hot list*:
//! the most-referenced blocks, hottest first (paper 002 §2, §3.1.4, §3.2). Two counters implement
//! [`HotSpotCounter`]:
//!
//! ```text
//!   request stream ──record(block, op)──► counter ──hottest(n)──► [(block, count)…] ──► placement
//!   7 7 3 9 7 3 1 7 …                      │                        count ↓, block ↑ on ties
//!                                          └─ reset() at each rearrangement period
//!
//!   ExactCounts: one entry per distinct block        SpaceSaving, k = 3 counters:
//!     7 → 4   3 → 2   9 → 1   1 → 1                    7 → 4 (err 0)  3 → 2 (err 0)  1 → 2 (err 1)
//!                                                      1 took over 9's counter: count 1 + 1, error 1
//! ```
//!
//! | counter | memory | counts | guarantee |
//! |---|---|---|---|
//! | [`ExactCounts`] | one hash entry (25 B, buckets ≤ 7/8 full) per *distinct* block | exact, reads and writes apart | exact |
//! | [`SpaceSaving`] | `k` counters, 63–102 B each, fixed (187 KB for k = 2000) | overestimates by ≤ its `error` ≤ the minimum counter ≤ N/k | every block with count > N/k is listed |
//!
//! **Why an estimator.** The paper's driver kept a small request table and a user process
//! analysed it; it estimated reference counts with one of the space-efficient hot-spot algorithms
//! of Salem, Barbará & Lipton ("Probabilistic Diagnosis of Hot Spots", ICDE 1992), whose details
//! we could not obtain. [`SpaceSaving`] (Metwally, Agrawal & El Abbadi, "Efficient Computation of
//! Frequent and Top-k Elements in Data Streams", ICDT 2005) plays that role here: deterministic,
//! bounded memory, O(log k) per reference, with a proven error bound.
//!
//! **Space-Saving.** Keep `k` (block, count, error) counters. A reference to a monitored block
//! increments its count. A reference to an unmonitored block, with all counters in use, takes
//! over the counter with the least count `m`: the new block gets count `m + 1` and error `m` (it
//! may have been referenced up to `m` times while unmonitored). With `N` references so far:
//!
//! * `count − error ≤ true count ≤ count`, and `error ≤ m ≤ N / k`;
//! * every block referenced more than `N / k` times is monitored (it cannot have been evicted
//!   after its count passed the minimum);
//! * so with a skewed stream and `k` a few times the hot-list length, the top of the list is
//!   exact in practice (tests: `k = 2000` finds ≥ 95% of the exact top 200 of a Zipf stream).
//!
//! Ties in [`HotSpotCounter::hottest`] go to the lower block number, so the hot list, and the
//! placement made from it, do not depend on hash order.

use std::collections::HashMap;
use std::mem::size_of;

use freeblock_disk::Op;
use serde::{Deserialize, Serialize};

use super::error::{RearrangeError, Result};

/// A reference counter over a stream of block references.
pub trait HotSpotCounter {
    /// Counts one reference to `block`.
    fn record(&mut self, block: u64, op: Op);
    /// Up to `n` `(block, count)` pairs, count descending, block ascending on ties; blocks with a
    /// zero count are never listed.
    fn hottest(&self, n: usize) -> Vec<(u64, u64)>;
    /// Forgets everything (start of a new monitoring period).
    fn reset(&mut self);
    /// Heap bytes held (an estimate of what the counter costs, for reports).
    fn memory_bytes(&self) -> u64;
    /// References recorded since the last reset.
    fn total(&self) -> u64;
}

/// Which counter to use, as written in experiment files (`counter = { type = "space_saving",
/// counters = 2000 }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum CounterSpec {
    /// [`ExactCounts`].
    Exact,
    /// [`SpaceSaving`] with `counters` counters.
    SpaceSaving {
        /// Number of counters `k`.
        counters: usize,
    },
}

impl CounterSpec {
    /// Builds the counter.
    ///
    /// # Errors
    /// [`RearrangeError::BadCounters`] for `SpaceSaving { counters: 0 }` or too many to allocate.
    pub fn build(self) -> Result<Box<dyn HotSpotCounter + Send>> {
        Ok(match self {
            CounterSpec::Exact => Box::new(ExactCounts::new()),
            CounterSpec::SpaceSaving { counters } => Box::new(SpaceSaving::new(counters)?),
        })
    }
}

/// Orders `(block, count)` by count descending, then block ascending.
fn hot_order(a: &(u64, u64), b: &(u64, u64)) -> std::cmp::Ordering {
    b.1.cmp(&a.1).then(a.0.cmp(&b.0))
}

/// The `n` hottest of `items` (zero counts dropped), in [`hot_order`]; O(len + n log n).
fn top_n(mut items: Vec<(u64, u64)>, n: usize) -> Vec<(u64, u64)> {
    items.retain(|x| x.1 > 0);
    if n < items.len() {
        items.select_nth_unstable_by(n, hot_order);
        items.truncate(n);
    }
    items.sort_unstable_by(hot_order);
    items
}

/// Bytes of a `HashMap` with `capacity` of entries of `entry` bytes: hashbrown keeps a power of
/// two of buckets at most 7/8 full, each with one control byte.
fn hash_bytes(capacity: usize, entry: usize) -> u64 {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 { (capacity + 1).next_power_of_two() } else { (capacity * 8 / 7).next_power_of_two() };
    (buckets * (entry + 1)) as u64
}

/// Reads and writes of one block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockCounts {
    /// References by reads.
    pub reads: u64,
    /// References by writes.
    pub writes: u64,
}

impl BlockCounts {
    /// Reads plus writes.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.reads + self.writes
    }
}

/// Exact per-block reference counts, reads and writes apart. Memory grows with the number of
/// distinct blocks referenced (a 24-byte entry and a control byte per hash bucket, buckets a
/// power of two at most 7/8 full: 29–57 bytes per block).
#[derive(Debug, Clone, Default)]
pub struct ExactCounts {
    counts: HashMap<u64, BlockCounts>,
    reads: u64,
    writes: u64,
}

impl ExactCounts {
    /// An empty counter.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The counts of `block` (zero if never referenced).
    #[must_use]
    pub fn counts(&self, block: u64) -> BlockCounts {
        self.counts.get(&block).copied().unwrap_or_default()
    }

    /// References to `block`, reads and writes together.
    #[must_use]
    pub fn count(&self, block: u64) -> u64 {
        self.counts(block).total()
    }

    /// Distinct blocks referenced.
    #[must_use]
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }

    /// Read references recorded.
    #[must_use]
    pub fn total_reads(&self) -> u64 {
        self.reads
    }

    /// Write references recorded.
    #[must_use]
    pub fn total_writes(&self) -> u64 {
        self.writes
    }

    /// The `n` most-read blocks as `(block, reads)`, in hot-list order.
    #[must_use]
    pub fn hottest_reads(&self, n: usize) -> Vec<(u64, u64)> {
        top_n(self.counts.iter().map(|(&b, c)| (b, c.reads)).collect(), n)
    }

    /// The `n` most-written blocks as `(block, writes)`, in hot-list order.
    #[must_use]
    pub fn hottest_writes(&self, n: usize) -> Vec<(u64, u64)> {
        top_n(self.counts.iter().map(|(&b, c)| (b, c.writes)).collect(), n)
    }

    /// Every block with its counts, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, BlockCounts)> + '_ {
        self.counts.iter().map(|(&b, &c)| (b, c))
    }
}

impl HotSpotCounter for ExactCounts {
    fn record(&mut self, block: u64, op: Op) {
        let c = self.counts.entry(block).or_default();
        if op.is_read() {
            c.reads += 1;
            self.reads += 1;
        } else {
            c.writes += 1;
            self.writes += 1;
        }
    }

    fn hottest(&self, n: usize) -> Vec<(u64, u64)> {
        top_n(self.counts.iter().map(|(&b, c)| (b, c.total())).collect(), n)
    }

    fn reset(&mut self) {
        // Drop the allocation too: a new period may touch far fewer blocks.
        self.counts = HashMap::new();
        self.reads = 0;
        self.writes = 0;
    }

    fn memory_bytes(&self) -> u64 {
        hash_bytes(self.counts.capacity(), size_of::<(u64, BlockCounts)>())
    }

    fn total(&self) -> u64 {
        self.reads + self.writes
    }
}

/// One Space-Saving counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    /// The monitored block.
    pub block: u64,
    /// Estimated references: at least the true count, at most `error` more.
    pub count: u64,
    /// Most the estimate can exceed the true count by (the count the block inherited).
    pub error: u64,
}

impl Counter {
    /// References the block is guaranteed to have had: `count − error`.
    #[must_use]
    pub fn guaranteed(&self) -> u64 {
        self.count - self.error
    }
}

/// The Space-Saving summary with `k` counters: bounded memory, estimated counts (see the
/// [module documentation](self) for the algorithm and its guarantee).
///
/// Memory: `k` counters of 24 bytes in a binary min-heap plus a block → heap-position index
/// (16 bytes and a control byte per hash bucket; the power of two of buckets ≥ 8(2k + 2)/7, so
/// that evictions' tombstones are cleared in place and the index never grows), allocated once at
/// construction: 63–102 bytes per counter depending on where `k` falls between powers of two,
/// 187 264 bytes for `k = 2000`
/// ([`HotSpotCounter::memory_bytes`] gives the exact figure). Each reference costs one hash lookup
/// and O(log k) heap moves.
#[derive(Debug, Clone)]
pub struct SpaceSaving {
    k: usize,
    /// Min-heap on `count`.
    heap: Vec<Counter>,
    /// Block → position in `heap`.
    pos: HashMap<u64, usize>,
    /// The index's capacity as allocated: `pos.capacity()` counts tombstones against it, so it
    /// drops as blocks are evicted, in an order that depends on the hash seed.
    pos_allocated: usize,
    total: u64,
    reads: u64,
    writes: u64,
}

impl SpaceSaving {
    /// A summary with `k` counters.
    ///
    /// # Errors
    /// [`RearrangeError::BadCounters`] for `k = 0`, or a `k` whose memory cannot be allocated.
    pub fn new(k: usize) -> Result<Self> {
        let bad = |reason: &str| RearrangeError::BadCounters { counters: k, reason: reason.into() };
        if k == 0 {
            return Err(bad("the summary needs at least one counter"));
        }
        // Evictions leave tombstones in the index; hashbrown rehashes in place (no growth) only
        // while it is at most half full, so size it for 2k + 2 from the start.
        let index = k.checked_mul(2).and_then(|x| x.checked_add(2)).ok_or_else(|| bad("too many to index"))?;
        let mut heap = Vec::new();
        heap.try_reserve_exact(k).map_err(|e| bad(&format!("cannot allocate the counters ({e})")))?;
        let mut pos = HashMap::new();
        pos.try_reserve(index).map_err(|e| bad(&format!("cannot allocate the index ({e})")))?;
        let pos_allocated = pos.capacity();
        Ok(Self { k, heap, pos, pos_allocated, total: 0, reads: 0, writes: 0 })
    }

    /// Number of counters `k`.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.k
    }

    /// Counters in use (≤ k).
    #[must_use]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True before the first reference.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The least count while all `k` counters are in use, else 0 (no block has been evicted, so
    /// every count is exact). Bounds every counter's error, and is at most `total / k`.
    #[must_use]
    pub fn min_count(&self) -> u64 {
        if self.heap.len() < self.k {
            0
        } else {
            self.heap.first().map_or(0, |c| c.count)
        }
    }

    /// The counter of `block`, if it is monitored.
    #[must_use]
    pub fn estimate(&self, block: u64) -> Option<Counter> {
        self.pos.get(&block).map(|&i| self.heap[i])
    }

    /// Read references recorded.
    #[must_use]
    pub fn total_reads(&self) -> u64 {
        self.reads
    }

    /// Write references recorded.
    #[must_use]
    pub fn total_writes(&self) -> u64 {
        self.writes
    }

    /// All counters, count descending, block ascending on ties.
    #[must_use]
    pub fn counters(&self) -> Vec<Counter> {
        let mut v = self.heap.clone();
        v.sort_unstable_by(|a, b| b.count.cmp(&a.count).then(a.block.cmp(&b.block)));
        v
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.pos.insert(self.heap[i].block, i);
        self.pos.insert(self.heap[j].block, j);
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].count <= self.heap[i].count {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            if l < n && self.heap[l].count < self.heap[least].count {
                least = l;
            }
            if r < n && self.heap[r].count < self.heap[least].count {
                least = r;
            }
            if least == i {
                break;
            }
            self.swap(i, least);
            i = least;
        }
    }
}

impl HotSpotCounter for SpaceSaving {
    fn record(&mut self, block: u64, op: Op) {
        self.total += 1;
        if op.is_read() {
            self.reads += 1;
        } else {
            self.writes += 1;
        }
        if let Some(&i) = self.pos.get(&block) {
            self.heap[i].count += 1;
            self.sift_down(i);
        } else if self.heap.len() < self.k {
            let i = self.heap.len();
            self.heap.push(Counter { block, count: 1, error: 0 });
            self.pos.insert(block, i);
            self.sift_up(i);
        } else {
            // Take over the least counter: the newcomer may have had up to `min` references.
            let min = self.heap[0];
            self.pos.remove(&min.block);
            self.heap[0] = Counter { block, count: min.count + 1, error: min.count };
            self.pos.insert(block, 0);
            self.sift_down(0);
        }
    }

    fn hottest(&self, n: usize) -> Vec<(u64, u64)> {
        top_n(self.heap.iter().map(|c| (c.block, c.count)).collect(), n)
    }

    fn reset(&mut self) {
        // Keep the allocations: the summary's size is fixed by k.
        self.heap.clear();
        self.pos.clear();
        self.total = 0;
        self.reads = 0;
        self.writes = 0;
    }

    fn memory_bytes(&self) -> u64 {
        // The allocation, not `capacity()` (which tombstones lower): it changes only if the
        // index really grows.
        let index = self.pos_allocated.max(self.pos.capacity());
        (self.heap.capacity() * size_of::<Counter>()) as u64 + hash_bytes(index, size_of::<(u64, usize)>())
    }

    fn total(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, Zipf};

    /// A Zipf(s) stream over `blocks` ranks, ranks scattered over block numbers (so block order
    /// says nothing about heat), with 30% writes.
    fn zipf_stream(len: usize, blocks: u64, s: f64, seed: u64) -> Vec<(u64, Op)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let z = Zipf::new(blocks, s).unwrap();
        (0..len)
            .map(|_| {
                let rank = z.sample(&mut rng) as u64;
                // An odd multiplier is a bijection on u32.
                let block = u64::from((rank as u32).wrapping_mul(0x9E37_79B9));
                (block, if rng.gen_bool(0.3) { Op::Write } else { Op::Read })
            })
            .collect()
    }

    fn feed(c: &mut dyn HotSpotCounter, stream: &[(u64, Op)]) {
        for &(b, op) in stream {
            c.record(b, op);
        }
    }

    #[test]
    fn exact_counts_reads_writes_and_ties() {
        let mut c = ExactCounts::new();
        for (b, op) in [(7, Op::Read), (3, Op::Write), (7, Op::Write), (9, Op::Read), (3, Op::Read), (1, Op::Read), (7, Op::Read)]
        {
            c.record(b, op);
        }
        assert_eq!(c.counts(7), BlockCounts { reads: 2, writes: 1 });
        assert_eq!(c.count(42), 0);
        assert_eq!(c.hottest(10), vec![(7, 3), (3, 2), (1, 1), (9, 1)], "ties by block ascending");
        assert_eq!(c.hottest(2), vec![(7, 3), (3, 2)]);
        assert_eq!(c.hottest(3), vec![(7, 3), (3, 2), (1, 1)]);
        assert_eq!(c.hottest_reads(10), vec![(7, 2), (1, 1), (3, 1), (9, 1)]);
        assert_eq!(c.hottest_writes(10), vec![(3, 1), (7, 1)], "blocks never written are not listed");
        assert_eq!((c.total(), c.total_reads(), c.total_writes(), c.distinct()), (7, 5, 2, 4));
        assert!(c.memory_bytes() > 0);
        c.reset();
        assert_eq!((c.total(), c.distinct(), c.memory_bytes()), (0, 0, 0));
        assert!(c.hottest(5).is_empty());
    }

    #[test]
    fn space_saving_small_example() {
        // The module doc's example: k = 3, stream 7 7 3 9 7 3 1 7.
        let mut s = SpaceSaving::new(3).unwrap();
        for b in [7, 7, 3, 9, 7, 3, 1, 7] {
            s.record(b, Op::Read);
        }
        assert_eq!(
            s.counters(),
            vec![
                Counter { block: 7, count: 4, error: 0 },
                Counter { block: 1, count: 2, error: 1 },
                Counter { block: 3, count: 2, error: 0 },
            ]
        );
        assert_eq!(s.min_count(), 2);
        assert_eq!(s.estimate(9), None);
        let e = SpaceSaving::new(0).unwrap_err().to_string();
        assert!(e.contains("counters = 0"), "{e}");
        for k in [usize::MAX, 1 << 60] {
            let e = SpaceSaving::new(k).unwrap_err().to_string();
            assert!(e.contains(&format!("counters = {k}")), "{e}");
        }
        assert!(CounterSpec::SpaceSaving { counters: 0 }.build().is_err());
    }

    #[test]
    fn space_saving_is_exact_while_counters_last() {
        let stream = zipf_stream(20_000, 500, 1.0, 3);
        let (mut exact, mut ss) = (ExactCounts::new(), SpaceSaving::new(600).unwrap());
        feed(&mut exact, &stream);
        feed(&mut ss, &stream);
        assert_eq!(ss.min_count(), 0);
        assert!(ss.counters().iter().all(|c| c.error == 0));
        assert_eq!(ss.hottest(usize::MAX), exact.hottest(usize::MAX));
        assert_eq!((ss.total_reads(), ss.total_writes()), (exact.total_reads(), exact.total_writes()));
    }

    /// The guarantee on a skewed stream: estimates bracket the truth, the error is at most the
    /// minimum counter ≤ N/k, and every block above N/k is monitored.
    #[test]
    fn space_saving_guarantee_holds() {
        for (k, s, seed) in [(50, 1.2, 1), (200, 0.9, 2), (2_000, 1.0, 5)] {
            let stream = zipf_stream(100_000, 200_000, s, seed);
            let (mut exact, mut ss) = (ExactCounts::new(), SpaceSaving::new(k).unwrap());
            feed(&mut exact, &stream);
            feed(&mut ss, &stream);
            let n = ss.total();
            let min = ss.min_count();
            assert!(min > 0 && min <= n / k as u64, "k {k}: min {min} > N/k {}", n / k as u64);
            for c in ss.counters() {
                let truth = exact.count(c.block);
                assert!(c.guaranteed() <= truth && truth <= c.count, "k {k}: {c:?} true {truth}");
                assert!(c.error <= min);
            }
            for (b, count) in exact.iter().map(|(b, c)| (b, c.total())) {
                if count * k as u64 > n {
                    assert!(ss.estimate(b).is_some(), "k {k}: block {b} with {count} > N/k is missing");
                }
            }
        }
    }

    #[test]
    fn space_saving_finds_the_top_200() {
        let stream = zipf_stream(400_000, 1_000_000, 1.0, 42);
        let (mut exact, mut ss) = (ExactCounts::new(), SpaceSaving::new(2_000).unwrap());
        feed(&mut exact, &stream);
        feed(&mut ss, &stream);
        let truth: std::collections::HashSet<u64> = exact.hottest(200).into_iter().map(|x| x.0).collect();
        let found = ss.hottest(200).into_iter().filter(|x| truth.contains(&x.0)).count();
        assert!(found >= 190, "found {found} of the exact top 200");
        // Bounded memory: far below the exact counter's on a stream with many distinct blocks.
        assert_eq!(ss.memory_bytes(), 187_264, "the figure in the docs");
        assert!(exact.memory_bytes() > 4 * ss.memory_bytes(), "exact {} vs {}", exact.memory_bytes(), ss.memory_bytes());
    }

    #[test]
    fn space_saving_memory_is_fixed_and_runs_are_deterministic() {
        let stream = zipf_stream(50_000, 100_000, 0.8, 9);
        let mut a = SpaceSaving::new(300).unwrap();
        let before = a.memory_bytes();
        feed(&mut a, &stream);
        assert_eq!(a.memory_bytes(), before, "no growth after construction");
        let mut b = SpaceSaving::new(300).unwrap();
        feed(&mut b, &stream);
        assert_eq!(a.counters(), b.counters());
        a.reset();
        assert_eq!((a.total(), a.len(), a.memory_bytes()), (0, 0, before));
        feed(&mut a, &stream);
        assert_eq!(a.counters(), b.counters(), "a reset counter behaves like a new one");
    }

    #[test]
    fn counter_spec_builds_both() {
        let spec: CounterSpec = toml::from_str("type = \"space_saving\"\ncounters = 10").unwrap();
        assert_eq!(spec, CounterSpec::SpaceSaving { counters: 10 });
        for spec in [CounterSpec::Exact, spec] {
            let mut c = spec.build().unwrap();
            c.record(5, Op::Read);
            c.record(5, Op::Write);
            assert_eq!(c.hottest(1), vec![(5, 2)]);
        }
    }
}
