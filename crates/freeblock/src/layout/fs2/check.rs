//! `fs2-check`: the replica table verified (and repaired) against the block map — the paper's
//! `chkfs2` (§3.3).
//!
//! The map is the durable truth (it is journalled; the table's read counts are hints kept in
//! memory). A table that disagrees with it, or a map that breaks FS2's rules, is reported
//! problem by problem; [`repair`] makes both agree by trusting the map for where replicas are
//! and dropping what the rules forbid.
//!
//! | problem | repair |
//! |---|---|
//! | the table lists a replica the map does not hold | drop the table entry |
//! | the table names another original than the map | take the map's |
//! | the map holds a replica the table lacks | add a table entry (no reads yet) |
//! | a block has more replicas than `max_replicas` | drop the newest from the map |

use std::fmt;

use super::replicas::ReplicaTable;
use crate::layout::error::Result;
use crate::layout::journal::MapOp;
use crate::layout::map::BlockMap;

/// One disagreement between the table and the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The table lists a replica at `lbn` that the map does not hold as a replica.
    NotInMap {
        /// Replica address.
        lbn: u64,
        /// The original the table names.
        logical: u64,
    },
    /// The table and the map name different originals for the replica at `lbn`.
    WrongOriginal {
        /// Replica address.
        lbn: u64,
        /// The table's.
        table: u64,
        /// The map's.
        map: u64,
    },
    /// The map holds a replica the table lacks.
    NotInTable {
        /// Replica address.
        lbn: u64,
        /// Its original.
        logical: u64,
    },
    /// A block with more replicas than allowed.
    TooManyReplicas {
        /// The block.
        logical: u64,
        /// Replicas it has.
        replicas: usize,
        /// The limit.
        max: u32,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotInMap { lbn, logical } => write!(f, "table entry at sector {lbn} (a replica of block {logical}): the map holds no replica there"),
            Problem::WrongOriginal { lbn, table, map } => write!(f, "replica at sector {lbn}: the table says it copies block {table}, the map says block {map}"),
            Problem::NotInTable { lbn, logical } => write!(f, "the map holds a replica of block {logical} at sector {lbn} that the table lacks"),
            Problem::TooManyReplicas { logical, replicas, max } => write!(f, "block {logical} has {replicas} replicas, more than max_replicas = {max}"),
        }
    }
}

/// The table the map implies: every copy after a block's first is a replica.
#[must_use]
pub fn table_from_map(map: &BlockMap) -> ReplicaTable {
    let mut t = ReplicaTable::new();
    for (logical, loc) in map.mapped() {
        for &r in &loc.copies[1..] {
            t.insert(r, logical, 0);
        }
    }
    t
}

/// Every disagreement between `table` and `map`, and every block over `max_replicas`.
#[must_use]
pub fn check(map: &BlockMap, table: &ReplicaTable, max_replicas: u32) -> Vec<Problem> {
    let mut out = Vec::new();
    let implied = table_from_map(map);
    for (lbn, e) in table.iter() {
        match implied.get(lbn) {
            None => out.push(Problem::NotInMap { lbn, logical: e.logical }),
            Some(m) if m.logical != e.logical => out.push(Problem::WrongOriginal { lbn, table: e.logical, map: m.logical }),
            Some(_) => {}
        }
    }
    for (lbn, e) in implied.iter() {
        if table.get(lbn).is_none() {
            out.push(Problem::NotInTable { lbn, logical: e.logical });
        }
    }
    for (logical, loc) in map.mapped() {
        let replicas = loc.copies.len() - 1;
        if replicas > max_replicas as usize {
            out.push(Problem::TooManyReplicas { logical, replicas, max: max_replicas });
        }
    }
    out
}

/// Repairs as the [module table](self) says: returns the operations applied to the map (to be
/// journalled by the caller) and the repaired table, which keeps the read counts of entries the
/// map confirms.
///
/// # Errors
/// A map operation refused (cannot happen for a map that passed [`BlockMap::check`]).
pub fn repair(map: &mut BlockMap, table: &ReplicaTable, max_replicas: u32) -> Result<(Vec<MapOp>, ReplicaTable)> {
    let mut ops = Vec::new();
    let over: Vec<(u64, Vec<u64>)> = map.mapped().filter(|(_, l)| l.copies.len() - 1 > max_replicas as usize).map(|(b, l)| (b, l.copies[1 + max_replicas as usize..].to_vec())).collect();
    for (logical, extra) in over {
        for lbn in extra {
            let op = MapOp::DropCopy { logical, lbn };
            map.apply(&op)?;
            ops.push(op);
        }
    }
    let mut fixed = table_from_map(map);
    for (lbn, e) in table.iter() {
        if fixed.get(lbn).is_some_and(|m| m.logical == e.logical) {
            fixed.insert(lbn, e.logical, e.last_read);
            for _ in 0..e.reads {
                fixed.note_read(lbn, e.last_read);
            }
        }
    }
    Ok((ops, fixed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::map::{Candidates, MapConfig, WriteRequest};

    fn map_with_replica() -> BlockMap {
        let mut m = BlockMap::new(MapConfig::region(0, 8 * 64, 8)).unwrap();
        m.write(&WriteRequest { logical: 3, blocks: 1, candidates: Candidates::single(24) }, 24).unwrap();
        m.add_copy(3, 400).unwrap();
        m.add_copy(3, 408).unwrap();
        m
    }

    #[test]
    fn a_table_that_does_not_match_the_map_is_reported_and_repaired() {
        let mut map = map_with_replica();
        let mut table = ReplicaTable::new();
        table.insert(400, 3, 0);
        table.insert(480, 5, 0); // not in the map
        let problems = check(&map, &table, 1);
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(text.iter().any(|t| t.contains("sector 480") && t.contains("no replica there")), "{text:?}");
        assert!(text.iter().any(|t| t.contains("sector 408") && t.contains("lacks")), "{text:?}");
        assert!(text.iter().any(|t| t.contains("2 replicas")), "{text:?}");
        let (ops, fixed) = repair(&mut map, &table, 1).unwrap();
        assert_eq!(ops, vec![MapOp::DropCopy { logical: 3, lbn: 408 }]);
        assert!(check(&map, &fixed, 1).is_empty());
        assert_eq!(fixed.len(), 1);
    }
}
