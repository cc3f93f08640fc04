//! The buffer cache in front of the log: the most recently used blocks, by logical block, with
//! their contents. A read that finds its block here (or in the segment being filled) costs no
//! disk I/O; a miss reads the block and keeps it, evicting the least recently used.

use std::collections::{BTreeMap, HashMap};

/// An LRU cache of `capacity` logical blocks (0: no cache).
#[derive(Debug, Clone, Default)]
pub struct BufferCache {
    capacity: usize,
    /// logical block → (contents, last use).
    blocks: HashMap<u64, (u64, u64)>,
    /// last use → logical block: the oldest first.
    by_use: BTreeMap<u64, u64>,
    clock: u64,
    /// Lookups that found their block.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
}

impl BufferCache {
    /// An empty cache of `capacity` blocks.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self { capacity, ..Self::default() }
    }

    /// Blocks held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True when nothing is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The contents of `logical`, if held (and marks it used).
    pub fn get(&mut self, logical: u64) -> Option<u64> {
        let found = self.touch(logical);
        if found.is_some() {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        found
    }

    fn touch(&mut self, logical: u64) -> Option<u64> {
        let (value, used) = self.blocks.get_mut(&logical)?;
        self.by_use.remove(used);
        self.clock += 1;
        *used = self.clock;
        self.by_use.insert(self.clock, logical);
        Some(*value)
    }

    /// Holds `value` as the contents of `logical` (most recently used), evicting the least
    /// recently used block when full.
    pub fn insert(&mut self, logical: u64, value: u64) {
        if self.capacity == 0 {
            return;
        }
        if self.touch(logical).is_some() {
            self.blocks.get_mut(&logical).expect("just touched").0 = value;
            return;
        }
        if self.blocks.len() >= self.capacity {
            if let Some((_, oldest)) = self.by_use.pop_first() {
                self.blocks.remove(&oldest);
            }
        }
        self.clock += 1;
        self.blocks.insert(logical, (value, self.clock));
        self.by_use.insert(self.clock, logical);
    }

    /// Forgets `logical` (deleted).
    pub fn remove(&mut self, logical: u64) {
        if let Some((_, used)) = self.blocks.remove(&logical) {
            self.by_use.remove(&used);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_block_goes_first() {
        let mut c = BufferCache::new(2);
        c.insert(1, 10);
        c.insert(2, 20);
        assert_eq!(c.get(1), Some(10));
        c.insert(3, 30);
        assert_eq!(c.get(2), None, "2 was the least recently used");
        assert_eq!(c.get(1), Some(10));
        assert_eq!(c.get(3), Some(30));
        c.insert(3, 31);
        assert_eq!(c.get(3), Some(31));
        c.remove(3);
        assert_eq!(c.get(3), None);
        assert_eq!((c.hits, c.misses), (4, 2));
        let mut none = BufferCache::new(0);
        none.insert(1, 1);
        assert!(none.is_empty());
    }
}
