//! The replica table: for every replica, its original block, when it was last read and how
//! often (paper 003 §2.3, Fig. 6). Where the copies are is the block map's business (each
//! replicated block's map entry lists its replicas); this table keeps what the watermarks need
//! to choose what to drop, and is ordered by the replica's disk address, so every replica of a
//! region is one range of it (the paper's grouping for batched invalidation).
//!
//! | per replica | bytes (ours) | the paper |
//! |---|---:|---:|
//! | replica address (key) | 8 | 4 |
//! | original block | 8 | 4 |
//! | last read (request number) | 8 | 4 |
//! | reads | 8 | 4 |
//! | total, stated as [`REPLICA_ENTRY_BYTES`] | 32 | 16 (4 MB per 1 GB of 4 KB replicas) |
//!
//! The in-tree B-tree adds its node overhead on top; [`ReplicaTable::memory_bytes`] states the
//! payload, as the paper does.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One replica's bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaInfo {
    /// The logical block it copies.
    pub logical: u64,
    /// The workload request number of its last read (or of its making, if never read).
    pub last_read: u64,
    /// Reads it served.
    pub reads: u64,
}

/// Bytes of one table entry: key + [`ReplicaInfo`].
pub const REPLICA_ENTRY_BYTES: u64 = (std::mem::size_of::<u64>() + std::mem::size_of::<ReplicaInfo>()) as u64;

/// The paper's figure: 4 MB of table per 1 GB of 4 KB replicas, bytes per replica.
pub const PAPER_ENTRY_BYTES: u64 = (4 << 20) / ((1 << 30) / 4096);

/// Replica address (disk LBN) → its bookkeeping, in disk order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaTable {
    entries: BTreeMap<u64, ReplicaInfo>,
}

impl ReplicaTable {
    /// An empty table.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a fresh replica of `logical` at `lbn`, made at request number `now` (it counts as
    /// read then, so a new replica is not cold at once).
    pub fn insert(&mut self, lbn: u64, logical: u64, now: u64) {
        self.entries.insert(lbn, ReplicaInfo { logical, last_read: now, reads: 0 });
    }

    /// Removes the replica at `lbn`.
    pub fn remove(&mut self, lbn: u64) -> Option<ReplicaInfo> {
        self.entries.remove(&lbn)
    }

    /// The replica at `lbn`.
    #[must_use]
    pub fn get(&self, lbn: u64) -> Option<&ReplicaInfo> {
        self.entries.get(&lbn)
    }

    /// Notes a read served by the replica at `lbn` (request number `request`).
    pub fn note_read(&mut self, lbn: u64, request: u64) {
        if let Some(e) = self.entries.get_mut(&lbn) {
            e.last_read = request;
            e.reads += 1;
        }
    }

    /// Replicas held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every replica, in disk order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &ReplicaInfo)> + '_ {
        self.entries.iter().map(|(&k, v)| (k, v))
    }

    /// The replicas in sectors `start..end`, in disk order (one region's, for batched drops).
    pub fn in_range(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, &ReplicaInfo)> + '_ {
        self.entries.range(start..end).map(|(&k, v)| (k, v))
    }

    /// The table's payload in memory, bytes ([`REPLICA_ENTRY_BYTES`] per replica).
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        self.entries.len() as u64 * REPLICA_ENTRY_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_size_is_stated_beside_the_papers() {
        assert_eq!(PAPER_ENTRY_BYTES, 16);
        assert_eq!(REPLICA_ENTRY_BYTES, 32);
        let mut t = ReplicaTable::new();
        t.insert(800, 3, 0);
        t.insert(16, 9, 0);
        t.note_read(800, 42);
        assert_eq!(t.get(800).map(|e| (e.reads, e.last_read)), Some((1, 42)));
        assert_eq!(t.in_range(0, 100).map(|(l, _)| l).collect::<Vec<_>>(), vec![16]);
        assert_eq!(t.memory_bytes(), 64);
    }
}
