//! Where the head works and what is read with it: regions, the hot region, and the blocks
//! accessed together with the hot region's blocks (paper 003 §3.1).
//!
//! ```text
//!  disk  │ region 0 │ region 1 │ region 2 (hot) │ region 3 │ …        counts decay by half every
//!  count │    12    │     3    │      140       │    31    │          `epoch_accesses` block accesses
//!
//!  last `window` block accesses:   h h x h h y h …      h = in the hot region, x, y = outside
//!  an outside access within `window` accesses of a hot one counts once for that block;
//!  at `threshold` counts the block becomes a candidate, in the order the counts were reached
//! ```
//!
//! | setting | default | why |
//! |---|---|---|
//! | `region_blocks` | 32 768 (128 MB of 4 KB blocks) | the paper's region is a few Ext2 block groups (a group is 128 MB) |
//! | `window` | 16 block accesses | a few requests either way: the interleaving the paper's Fig. 1(b) shows between two regions |
//! | `threshold` | 2 | seen with the hot region twice, so a one-off access is not copied; the paper leaves both open |
//! | `epoch_accesses` | 4 096 | the hot region is recomputed (and counts halved) this often, so it follows the workload |
//!
//! A block that is itself in the hot region is never a candidate: copying it nearer itself gains
//! nothing (the paper replicates only "outside disk blocks").

use std::collections::{HashMap, VecDeque};

/// Region counts, the hot region, and co-access counting.
#[derive(Debug, Clone)]
pub struct AccessMonitor {
    region_blocks: u64,
    window: usize,
    threshold: u32,
    epoch_accesses: u64,
    counts: HashMap<u64, u64>,
    hot: Option<u64>,
    seen_in_epoch: u64,
    /// The last `window` accesses: (block, in the hot region, credited).
    recent: VecDeque<(u64, bool, bool)>,
    together: HashMap<u64, u32>,
}

impl AccessMonitor {
    /// A monitor with the given settings (validated by the policy's configuration).
    #[must_use]
    pub fn new(region_blocks: u64, window: usize, threshold: u32, epoch_accesses: u64) -> Self {
        Self {
            region_blocks: region_blocks.max(1),
            window: window.max(1),
            threshold: threshold.max(1),
            epoch_accesses: epoch_accesses.max(1),
            counts: HashMap::new(),
            hot: None,
            seen_in_epoch: 0,
            recent: VecDeque::new(),
            together: HashMap::new(),
        }
    }

    /// The region a block lies in.
    #[must_use]
    pub fn region_of(&self, block: u64) -> u64 {
        block / self.region_blocks
    }

    /// Blocks per region.
    #[must_use]
    pub fn region_blocks(&self) -> u64 {
        self.region_blocks
    }

    /// The hot region, once one epoch has been seen.
    #[must_use]
    pub fn hot_region(&self) -> Option<u64> {
        self.hot
    }

    /// Records one block access; pushes onto `candidates` every block that reached the threshold
    /// with it (in the order reached).
    pub fn record(&mut self, block: u64, candidates: &mut Vec<u64>) {
        let region = self.region_of(block);
        *self.counts.entry(region).or_insert(0) += 1;
        self.seen_in_epoch += 1;
        if self.seen_in_epoch >= self.epoch_accesses || self.hot.is_none() && self.seen_in_epoch >= self.epoch_accesses.min(256) {
            self.new_epoch();
        }
        let in_hot = self.hot == Some(region);
        let mut credited = false;
        if in_hot {
            // Outside accesses just before this one are accessed together with it.
            for i in 0..self.recent.len() {
                let (b, hot, done) = self.recent[i];
                if !hot && !done {
                    self.recent[i].2 = true;
                    self.credit(b, candidates);
                }
            }
        } else if self.hot.is_some() && self.recent.iter().any(|&(_, hot, _)| hot) {
            credited = true;
            self.credit(block, candidates);
        }
        self.recent.push_back((block, in_hot, credited));
        while self.recent.len() > self.window {
            self.recent.pop_front();
        }
    }

    fn credit(&mut self, block: u64, candidates: &mut Vec<u64>) {
        let n = self.together.entry(block).or_insert(0);
        *n += 1;
        if *n == self.threshold {
            candidates.push(block);
        }
    }

    /// Forgets a block's co-access count (it was replicated, or written).
    pub fn forget(&mut self, block: u64) {
        self.together.remove(&block);
    }

    /// Recomputes the hot region from the counts and halves them all (ties: the lower region).
    fn new_epoch(&mut self) {
        let hot = self.counts.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(&r, _)| r);
        if hot != self.hot {
            // Co-access counts speak of the old hot region.
            self.together.clear();
            let rb = self.region_blocks;
            for e in &mut self.recent {
                e.1 = Some(e.0 / rb) == hot;
            }
        }
        self.hot = hot;
        self.seen_in_epoch = 0;
        self.counts.retain(|_, c| {
            *c /= 2;
            *c > 0
        });
        self.together.retain(|_, c| {
            *c /= 2;
            *c > 0
        });
    }

    /// Bytes the counters hold (approximate: entries × their size).
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        (self.counts.len() * 16 + self.together.len() * 12 + self.recent.len() * 10) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_read_with_the_hot_region_become_candidates_in_access_order() {
        let mut m = AccessMonitor::new(100, 4, 2, 8);
        let mut c = Vec::new();
        // Region 0 is hot; blocks 500 and 900 are read between hot blocks, twice.
        for _ in 0..4 {
            for b in [1, 2, 500, 3, 900, 4] {
                m.record(b, &mut c);
            }
        }
        assert_eq!(m.hot_region(), Some(0));
        assert_eq!(c, vec![500, 900]);
        // A far block never read near the hot region is not a candidate.
        let mut c2 = Vec::new();
        for b in [700, 701, 702, 703, 704, 705] {
            m.record(b, &mut c2);
        }
        assert!(!c2.contains(&705), "{c2:?}");
    }
}
