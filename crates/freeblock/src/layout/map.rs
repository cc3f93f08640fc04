//! The logical → physical block map: where every logical block lives, which physical blocks are
//! free, and the version of every write.
//!
//! ```text
//!   logical space  0 ─────────────────────────────── logical_blocks
//!                      │ l          │ m (two copies)
//!                      ▼            ▼        ▼
//!   physical space first_lbn ──[live]───[live]─[live]──[reserved·offer]──[pinned]── first_lbn+sectors
//!   (disk LBNs,      each physical block (block_sectors sectors) is exactly one of:
//!    block-aligned)  free · reserved (offered to a pending write) · pinned (held by another layer) · live
//! ```
//!
//! Physical locations are **disk LBNs** (sectors), so a location goes straight to
//! [`Disk::access`](freeblock_disk::Disk::access); the map manages a block-aligned region of the
//! disk in blocks of `block_sectors` sectors. A logical block may have several physical copies
//! (FS2 replicas, a rearranged copy); a write replaces all of them with the one chosen location,
//! stamps a new version and gives every old copy back to free space.
//!
//! Extension points for the layers still to come: [`BlockMap::add_copy`] / [`BlockMap::drop_copy`]
//! (FS2 replicas and rearranged copies, chosen among by flex reads), [`BlockMap::pin`] (regions
//! such as rearrangement's reserved cylinders that the allocator must never hand out), and
//! per-block **dirty bits** ([`BlockMap::set_dirty`]): a mapped block whose copy in the map is newer
//! than its home copy outside the map, and must be written back before the mapping is dropped
//! (paper 002's block table, §3.1.2).
//!
//! **Persistence.** [`BlockMap::to_snapshot`] turns the state into plain data ([`MapSnapshot`]) and
//! [`BlockMap::from_snapshot`] validates and rebuilds it; every mutating call is also an operation
//! value ([`MapOp`](super::journal::MapOp), replayed by [`BlockMap::apply`]) so the
//! [journal](super::journal) can log it and recover the map after a crash.
//!
//! Invariants, checked by [`BlockMap::check`] and by the property test in `tests/integration/rangewrite.rs`:
//! every live physical block is owned by exactly one logical block and appears among that block's
//! copies; every copy of a logical block is live and owned by it; and
//! `free + reserved + pinned + live == total`.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use freeblock_disk::Disk;
use serde::{Deserialize, Serialize};

use super::error::{LayoutError, Result};

/// A run of physical sectors (disk LBNs `start..start + sectors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PhysRange {
    /// First sector.
    pub start: u64,
    /// Length in sectors.
    pub sectors: u64,
}

impl PhysRange {
    /// `start..start + sectors`.
    #[must_use]
    pub fn new(start: u64, sectors: u64) -> Self {
        Self { start, sectors }
    }

    /// One past the last sector.
    #[must_use]
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.sectors)
    }
}

/// Where a write may go.
///
/// * `Discrete` — a few candidate starting sectors, e.g. `k` equidistant on one track (paper 004).
/// * `Ranges` — free ranges plus an alignment: the write may start at any sector that is a multiple
///   of `alignment` and lets the whole write fit inside one range (OSDI 2008 range writes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Candidates {
    /// Candidate starting sectors, in preference order (ties go to the earlier one).
    Discrete {
        /// Starting sectors (disk LBNs).
        starts: Vec<u64>,
    },
    /// Free ranges and the alignment of an acceptable start.
    Ranges {
        /// The ranges, in preference order.
        ranges: Vec<PhysRange>,
        /// A start must be a multiple of this many sectors.
        alignment: u64,
    },
}

impl Candidates {
    /// Discrete candidates.
    #[must_use]
    pub fn discrete(starts: Vec<u64>) -> Self {
        Candidates::Discrete { starts }
    }

    /// One fixed location: an ordinary write.
    #[must_use]
    pub fn single(lbn: u64) -> Self {
        Candidates::Discrete { starts: vec![lbn] }
    }

    /// Ranges with an alignment.
    #[must_use]
    pub fn ranges(ranges: Vec<PhysRange>, alignment: u64) -> Self {
        Candidates::Ranges { ranges, alignment }
    }

    /// True when nothing is offered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        match self {
            Candidates::Discrete { starts } => starts.is_empty(),
            Candidates::Ranges { ranges, .. } => ranges.is_empty(),
        }
    }

    /// Every acceptable start for a write of `sectors` sectors, in preference order. For ranges
    /// this is every aligned start at which the write fits (an alignment of 0 counts as 1).
    pub fn starts(&self, sectors: u64) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            Candidates::Discrete { starts } => Box::new(starts.iter().copied()),
            Candidates::Ranges { ranges, alignment } => {
                let a = (*alignment).max(1);
                Box::new(ranges.iter().flat_map(move |r| range_starts(*r, a, sectors)))
            }
        }
    }

    /// Whether `lbn` is an acceptable start for a write of `sectors` sectors.
    #[must_use]
    pub fn contains_start(&self, lbn: u64, sectors: u64) -> bool {
        match self {
            Candidates::Discrete { starts } => starts.contains(&lbn),
            Candidates::Ranges { ranges, alignment } => {
                let a = (*alignment).max(1);
                lbn % a == 0 && ranges.iter().any(|r| lbn >= r.start && lbn.saturating_add(sectors) <= r.end())
            }
        }
    }

    /// The physical sectors the candidates cover for a write of `sectors` sectors (what an
    /// allocator reserves and a write releases).
    #[must_use]
    pub fn extents(&self, sectors: u64) -> Vec<PhysRange> {
        match self {
            Candidates::Discrete { starts } => starts.iter().map(|&s| PhysRange::new(s, sectors)).collect(),
            Candidates::Ranges { ranges, .. } => ranges.clone(),
        }
    }
}

/// Aligned starts inside `r` at which `sectors` sectors fit.
fn range_starts(r: PhysRange, alignment: u64, sectors: u64) -> impl Iterator<Item = u64> {
    let first = r.start.div_ceil(alignment).saturating_mul(alignment);
    let end = r.end();
    (0..)
        .map(move |i: u64| first.saturating_add(i.saturating_mul(alignment)))
        .take_while(move |&s| s.checked_add(sectors).is_some_and(|e| e <= end))
}

/// A write of `blocks` consecutive logical blocks starting at `logical`, with the physical
/// locations it may go to. The chosen location receives the blocks contiguously.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteRequest {
    /// First logical block.
    pub logical: u64,
    /// Number of logical blocks.
    pub blocks: u64,
    /// Where it may go.
    pub candidates: Candidates,
}

/// What a physical block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum BlockState {
    /// Unused and available to the allocator.
    Free,
    /// Offered to a pending write (not offered again until the write or a release).
    Reserved,
    /// Held by another layer (a rearrangement area, metadata); never allocated.
    Pinned,
    /// Holds a copy of a logical block.
    Live {
        /// The logical block stored there.
        logical: u64,
    },
}

impl fmt::Display for BlockState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockState::Free => f.write_str("free"),
            BlockState::Reserved => f.write_str("reserved by a pending offer"),
            BlockState::Pinned => f.write_str("pinned"),
            BlockState::Live { logical } => write!(f, "live (logical block {logical})"),
        }
    }
}

/// The physical region a map manages and the size of its logical space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapConfig {
    /// First managed sector (disk LBN); a multiple of `block_sectors`.
    pub first_lbn: u64,
    /// Managed sectors; a multiple of `block_sectors`.
    pub sectors: u64,
    /// Sectors per block (≥ 1). Every location the map hands out or accepts is aligned to it.
    pub block_sectors: u64,
    /// Number of logical blocks (addresses `0..logical_blocks`).
    pub logical_blocks: u64,
}

impl MapConfig {
    /// The whole disk (rounded down to whole blocks), with as many logical blocks as physical ones.
    #[must_use]
    pub fn for_disk(disk: &Disk, block_sectors: u64) -> Self {
        let bs = block_sectors.max(1);
        let sectors = disk.capacity() / bs * bs;
        Self { first_lbn: 0, sectors, block_sectors: bs, logical_blocks: sectors / bs }
    }

    /// A region `first_lbn..first_lbn + sectors` with as many logical blocks as physical ones.
    #[must_use]
    pub fn region(first_lbn: u64, sectors: u64, block_sectors: u64) -> Self {
        let bs = block_sectors.max(1);
        Self { first_lbn, sectors, block_sectors, logical_blocks: sectors / bs }
    }
}

/// Physical-space accounting, in blocks. `free + reserved + pinned + live == total` always.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpaceStats {
    /// Physical blocks managed.
    pub total: u64,
    /// Available to the allocator.
    pub free: u64,
    /// Offered to pending writes.
    pub reserved: u64,
    /// Held by another layer.
    pub pinned: u64,
    /// Holding data (every copy counts).
    pub live: u64,
    /// Logical blocks mapped.
    pub mapped: u64,
    /// Mapped logical blocks whose dirty bit is set (see [`BlockMap::set_dirty`]).
    #[serde(default)]
    pub dirty: u64,
}

/// Where a logical block lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Version of the data (the write sequence number that produced it; strictly increasing over
    /// the map's life).
    pub version: u64,
    /// Every physical copy (disk LBNs), first written first.
    pub copies: Vec<u64>,
    /// The dirty bit: this block's copy in the map differs from its home copy outside the map and
    /// must be written back before the mapping is dropped (paper 002 §3.1.2). Set only by
    /// [`BlockMap::set_dirty`].
    #[serde(default)]
    pub dirty: bool,
}

/// The outcome of [`BlockMap::write`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    /// Where the write went (disk LBN of its first block).
    pub lbn: u64,
    /// The version stamped on every block of the write.
    pub version: u64,
    /// Old copies given back to free space.
    pub freed_old: u64,
    /// Reserved candidate blocks given back to free space (the unchosen candidates).
    pub released: u64,
}

/// One mapped logical block in a [`MapSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotEntry {
    /// The logical block.
    pub logical: u64,
    /// Version of its data (below the snapshot's `next_version`).
    pub version: u64,
    /// Every physical copy (disk LBNs, block-aligned, inside the region), first written first.
    pub copies: Vec<u64>,
    /// Its dirty bit.
    pub dirty: bool,
}

/// The whole state of a [`BlockMap`] as plain data: what [`BlockMap::to_snapshot`] produces,
/// [`BlockMap::from_snapshot`] validates and rebuilds, and the journal stores.
///
/// The form is canonical: entries in logical order, reserved and pinned space as maximal runs in
/// physical order, so two maps are equal exactly when their snapshots are. Free space is
/// whatever is neither live, reserved nor pinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapSnapshot {
    /// The region and the logical space.
    pub config: MapConfig,
    /// The version the next write will get (every entry's version is below it).
    pub next_version: u64,
    /// Every mapped logical block.
    pub entries: Vec<SnapshotEntry>,
    /// Reserved space (blocks offered to pending writes), sector ranges.
    pub reserved: Vec<PhysRange>,
    /// Pinned space, sector ranges.
    pub pinned: Vec<PhysRange>,
}

/// A fixed-size bitmap.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bits {
    words: Vec<u64>,
    len: u64,
}

impl Bits {
    fn new(len: u64, set: bool) -> Self {
        let n = len.div_ceil(64) as usize;
        let mut words = vec![if set { u64::MAX } else { 0 }; n];
        if set && len % 64 != 0 {
            if let Some(w) = words.last_mut() {
                *w = (1u64 << (len % 64)) - 1;
            }
        }
        Self { words, len }
    }

    #[inline]
    fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    #[inline]
    fn put(&mut self, i: u64, on: bool) {
        let w = &mut self.words[(i / 64) as usize];
        if on {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    /// First index `>= from` whose bit equals `on`, or `len`.
    fn next(&self, from: u64, on: bool) -> u64 {
        if from >= self.len {
            return self.len;
        }
        let mut wi = (from / 64) as usize;
        let flip = if on { 0 } else { u64::MAX };
        let mut w = (self.words[wi] ^ flip) & (u64::MAX << (from % 64));
        loop {
            if w != 0 {
                return (wi as u64 * 64 + u64::from(w.trailing_zeros())).min(self.len);
            }
            wi += 1;
            if wi >= self.words.len() {
                return self.len;
            }
            w = self.words[wi] ^ flip;
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    version: u64,
    /// Physical block indices.
    copies: Vec<u64>,
    /// See [`Location::dirty`].
    dirty: bool,
}

/// The logical → physical map with free-space tracking. See the [module docs](self).
///
/// ```
/// use freeblock::rangewrite::{BlockMap, Candidates, MapConfig, WriteRequest};
///
/// let mut map = BlockMap::new(MapConfig::region(0, 1_000, 10)).unwrap();
/// let req = WriteRequest { logical: 7, blocks: 1, candidates: Candidates::discrete(vec![100, 600]) };
/// let w = map.write(&req, 600).unwrap();
/// assert_eq!(map.read(7).unwrap().copies, vec![600]);
/// // Overwrite elsewhere: the old copy at 600 is freed.
/// let req = WriteRequest { logical: 7, blocks: 1, candidates: Candidates::single(300) };
/// let w2 = map.write(&req, 300).unwrap();
/// assert!(w2.version > w.version);
/// assert_eq!(map.stats().live, 1);
/// assert_eq!(map.stats().free, 99);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockMap {
    cfg: MapConfig,
    blocks: u64,
    /// 1 = free (available to the allocator).
    free: Bits,
    reserved: Bits,
    pinned: Bits,
    /// Live physical block → logical block.
    owner: HashMap<u64, u64>,
    entries: BTreeMap<u64, Entry>,
    next_version: u64,
    stats: SpaceStats,
}

impl BlockMap {
    /// An empty map: every physical block free, no logical block mapped.
    ///
    /// # Errors
    /// [`LayoutError::Config`] for a zero block size or an empty region;
    /// [`LayoutError::Misaligned`] when the region is not block-aligned.
    pub fn new(cfg: MapConfig) -> Result<Self> {
        let bs = cfg.block_sectors;
        if bs == 0 {
            return Err(LayoutError::Config { field: "block_sectors", message: "must be at least 1".into() });
        }
        if cfg.first_lbn % bs != 0 {
            return Err(LayoutError::Misaligned { what: "region start", value: cfg.first_lbn, alignment: bs });
        }
        if cfg.sectors % bs != 0 {
            return Err(LayoutError::Misaligned { what: "region length", value: cfg.sectors, alignment: bs });
        }
        if cfg.sectors == 0 {
            return Err(LayoutError::Config { field: "sectors", message: "the region is empty".into() });
        }
        let blocks = cfg.sectors / bs;
        Ok(Self {
            cfg,
            blocks,
            free: Bits::new(blocks, true),
            reserved: Bits::new(blocks, false),
            pinned: Bits::new(blocks, false),
            owner: HashMap::new(),
            entries: BTreeMap::new(),
            next_version: 1,
            stats: SpaceStats { total: blocks, free: blocks, ..SpaceStats::default() },
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &MapConfig {
        &self.cfg
    }

    /// Sectors per block.
    #[must_use]
    pub fn block_sectors(&self) -> u64 {
        self.cfg.block_sectors
    }

    /// The managed physical sectors.
    #[must_use]
    pub fn region(&self) -> PhysRange {
        PhysRange::new(self.cfg.first_lbn, self.cfg.sectors)
    }

    /// Space accounting.
    #[must_use]
    pub fn stats(&self) -> SpaceStats {
        self.stats
    }

    /// Version the next write will get.
    #[must_use]
    pub fn next_version(&self) -> u64 {
        self.next_version
    }

    fn lbn_of(&self, block: u64) -> u64 {
        self.cfg.first_lbn + block * self.cfg.block_sectors
    }

    /// Physical block index of an extent's first sector, checking it lies in the region and is
    /// block-aligned. Returns `(first block, block count)`.
    fn extent_blocks(&self, lbn: u64, sectors: u64, what: &'static str) -> Result<(u64, u64)> {
        let r = self.region();
        let end = lbn.saturating_add(sectors);
        if lbn < r.start || end > r.end() {
            return Err(LayoutError::CandidateOutside {
                lbn,
                end,
                first: r.start,
                last: r.end(),
                what: "block map",
            });
        }
        let bs = self.cfg.block_sectors;
        if lbn % bs != 0 {
            return Err(LayoutError::Misaligned { what, value: lbn, alignment: bs });
        }
        if sectors % bs != 0 {
            return Err(LayoutError::Misaligned { what: "extent length", value: sectors, alignment: bs });
        }
        Ok(((lbn - r.start) / bs, sectors / bs))
    }

    fn block_state(&self, b: u64) -> BlockState {
        if self.free.get(b) {
            BlockState::Free
        } else if self.reserved.get(b) {
            BlockState::Reserved
        } else if self.pinned.get(b) {
            BlockState::Pinned
        } else {
            BlockState::Live { logical: self.owner[&b] }
        }
    }

    /// What the block holding sector `lbn` holds.
    ///
    /// # Errors
    /// [`LayoutError::CandidateOutside`] outside the region.
    pub fn state(&self, lbn: u64) -> Result<BlockState> {
        let bs = self.cfg.block_sectors;
        let aligned = lbn.saturating_sub(lbn.saturating_sub(self.cfg.first_lbn) % bs);
        let (b, _) = self.extent_blocks(aligned, bs, "sector")?;
        Ok(self.block_state(b))
    }

    /// Whether every block of `sectors` sectors at `lbn` is free (false outside the region or when
    /// misaligned).
    #[must_use]
    pub fn is_free(&self, lbn: u64, sectors: u64) -> bool {
        self.extent_blocks(lbn, sectors, "extent start").is_ok_and(|(b, n)| self.free.next(b, false) >= b + n)
    }

    /// Maximal runs of free blocks inside `start..end` (sectors, clipped to the region), in order.
    #[must_use]
    pub fn free_runs(&self, start: u64, end: u64) -> Vec<PhysRange> {
        let r = self.region();
        let bs = self.cfg.block_sectors;
        let lo = start.max(r.start);
        let hi = end.min(r.end());
        if lo >= hi {
            return Vec::new();
        }
        let b_lo = (lo - r.start).div_ceil(bs);
        let b_hi = (hi - r.start) / bs;
        let mut out = Vec::new();
        let mut b = b_lo;
        while b < b_hi {
            let s = self.free.next(b, true);
            if s >= b_hi {
                break;
            }
            let e = self.free.next(s, false).min(b_hi);
            out.push(PhysRange::new(self.lbn_of(s), (e - s) * bs));
            b = e;
        }
        out
    }

    fn check_logical(&self, logical: u64, blocks: u64) -> Result<()> {
        if blocks == 0 {
            return Err(LayoutError::EmptyExtent { logical });
        }
        let end = logical.saturating_add(blocks);
        if end > self.cfg.logical_blocks || logical.checked_add(blocks).is_none() {
            return Err(LayoutError::LogicalOutside { logical, end, capacity: self.cfg.logical_blocks });
        }
        Ok(())
    }

    /// Checks a write request without changing anything: the logical extent, every candidate's
    /// bounds and alignment, and that every candidate block is free, reserved, or already holds one
    /// of the blocks being written.
    ///
    /// # Errors
    /// [`LayoutError::EmptyExtent`], [`LayoutError::LogicalOutside`],
    /// [`LayoutError::EmptyCandidates`], [`LayoutError::CandidateOutside`],
    /// [`LayoutError::Misaligned`], [`LayoutError::RangeTooSmall`],
    /// [`LayoutError::NotFree`].
    pub fn validate(&self, req: &WriteRequest) -> Result<()> {
        self.check_logical(req.logical, req.blocks)?;
        if req.candidates.is_empty() {
            return Err(LayoutError::EmptyCandidates {
                context: format!("write of logical block {}", req.logical),
            });
        }
        let bs = self.cfg.block_sectors;
        let need = req.blocks.saturating_mul(bs);
        if let Candidates::Ranges { alignment, .. } = &req.candidates {
            if *alignment == 0 || alignment % bs != 0 {
                return Err(LayoutError::Misaligned { what: "alignment", value: *alignment, alignment: bs });
            }
        }
        let (what, ranges) = match &req.candidates {
            Candidates::Discrete { .. } => ("candidate start", false),
            Candidates::Ranges { .. } => ("range start", true),
        };
        for ext in req.candidates.extents(need) {
            let (b, n) = self.extent_blocks(ext.start, ext.sectors, what)?;
            if let (true, Candidates::Ranges { alignment, .. }) = (ranges, &req.candidates) {
                if range_starts(ext, *alignment, need).next().is_none() {
                    return Err(LayoutError::RangeTooSmall {
                        start: ext.start,
                        end: ext.end(),
                        needed: need,
                        alignment: *alignment,
                    });
                }
            }
            for i in b..b + n {
                match self.block_state(i) {
                    BlockState::Free | BlockState::Reserved => {}
                    BlockState::Live { logical } if logical >= req.logical && logical < req.logical + req.blocks => {}
                    state => return Err(LayoutError::NotFree { lbn: self.lbn_of(i), state }),
                }
            }
        }
        Ok(())
    }

    /// Commits a write to `chosen`, one of the request's acceptable starts: frees every old copy of
    /// the written blocks, gives the unchosen candidates' reserved blocks back to free space, and
    /// maps the blocks to `chosen` with a new version. On error nothing changes.
    ///
    /// # Errors
    /// As [`BlockMap::validate`], and [`LayoutError::NotACandidate`] when `chosen` is not an
    /// acceptable start.
    pub fn write(&mut self, req: &WriteRequest, chosen: u64) -> Result<Written> {
        self.validate(req)?;
        let bs = self.cfg.block_sectors;
        let need = req.blocks.saturating_mul(bs);
        if !req.candidates.contains_start(chosen, need) {
            return Err(LayoutError::NotACandidate { lbn: chosen });
        }
        let (first, _) = self.extent_blocks(chosen, need, "chosen start")?;
        // 1. Old copies of every written block go back to free space. A block's dirty bit stays
        //    as it was (the caller decides what a write means for the home copy).
        let mut freed_old = 0;
        let mut was_dirty = Vec::new();
        for l in req.logical..req.logical + req.blocks {
            let e = self.entries.remove(&l);
            was_dirty.push(e.as_ref().is_some_and(|e| e.dirty));
            if let Some(e) = e {
                for b in e.copies {
                    self.owner.remove(&b);
                    self.free.put(b, true);
                    self.stats.live -= 1;
                    self.stats.free += 1;
                    freed_old += 1;
                }
                self.stats.mapped -= 1;
                self.stats.dirty -= u64::from(e.dirty);
            }
        }
        // 2. Every reserved candidate block is released; the chosen ones are claimed next, so only
        //    the others count as given back.
        let chosen_range = first..first + req.blocks;
        let mut released = 0;
        for ext in req.candidates.extents(need) {
            let (b, n) = self.extent_blocks(ext.start, ext.sectors, "candidate start")?;
            for i in b..b + n {
                if self.reserved.get(i) {
                    self.reserved.put(i, false);
                    self.free.put(i, true);
                    self.stats.reserved -= 1;
                    self.stats.free += 1;
                    released += u64::from(!chosen_range.contains(&i));
                }
            }
        }
        // 3. Claim the chosen extent.
        let version = self.next_version;
        self.next_version += 1;
        for (j, l) in (req.logical..req.logical + req.blocks).enumerate() {
            let b = first + j as u64;
            debug_assert!(self.free.get(b), "chosen block {b} not free after release");
            self.free.put(b, false);
            self.owner.insert(b, l);
            self.entries.insert(l, Entry { version, copies: vec![b], dirty: was_dirty[j] });
            self.stats.free -= 1;
            self.stats.live += 1;
            self.stats.mapped += 1;
            self.stats.dirty += u64::from(was_dirty[j]);
        }
        Ok(Written { lbn: chosen, version, freed_old, released })
    }

    /// The first copy of a logical block (disk LBN), without building its [`Location`].
    #[must_use]
    pub fn first_copy(&self, logical: u64) -> Option<u64> {
        self.entries.get(&logical).and_then(|e| e.copies.first()).map(|&b| self.lbn_of(b))
    }

    /// Where a logical block lives, or `None` if it is not mapped.
    #[must_use]
    pub fn read(&self, logical: u64) -> Option<Location> {
        self.entries.get(&logical).map(|e| Location {
            version: e.version,
            copies: e.copies.iter().map(|&b| self.lbn_of(b)).collect(),
            dirty: e.dirty,
        })
    }

    /// Whether a logical block's dirty bit is set (false for an unmapped block).
    #[must_use]
    pub fn is_dirty(&self, logical: u64) -> bool {
        self.entries.get(&logical).is_some_and(|e| e.dirty)
    }

    /// Sets or clears the dirty bit of a mapped logical block: set it when the copy in the map
    /// becomes newer than the block's home copy outside the map, clear it once the home copy has
    /// been brought up to date. [`BlockMap::write`] leaves the bit as it was; [`BlockMap::trim`]
    /// drops it with the mapping.
    ///
    /// # Errors
    /// [`LayoutError::NotMapped`] for a block that is not mapped.
    pub fn set_dirty(&mut self, logical: u64, dirty: bool) -> Result<()> {
        let e = self.entries.get_mut(&logical).ok_or(LayoutError::NotMapped { logical })?;
        if e.dirty != dirty {
            e.dirty = dirty;
            if dirty {
                self.stats.dirty += 1;
            } else {
                self.stats.dirty -= 1;
            }
        }
        Ok(())
    }

    /// The starts of every complete, contiguous copy of `blocks` logical blocks from `logical`:
    /// the locations a flex read of that extent may choose among.
    ///
    /// # Errors
    /// [`LayoutError::EmptyExtent`], [`LayoutError::LogicalOutside`], or
    /// [`LayoutError::NotMapped`] for the first unmapped block.
    pub fn extent_copies(&self, logical: u64, blocks: u64) -> Result<Vec<u64>> {
        self.check_logical(logical, blocks)?;
        let mut out = Vec::new();
        for l in logical..logical + blocks {
            if !self.entries.contains_key(&l) {
                return Err(LayoutError::NotMapped { logical: l });
            }
        }
        let first = &self.entries[&logical];
        'copy: for &b0 in &first.copies {
            for j in 1..blocks {
                let b = b0 + j;
                if self.owner.get(&b) != Some(&(logical + j)) {
                    continue 'copy;
                }
            }
            out.push(self.lbn_of(b0));
        }
        Ok(out)
    }

    /// Unmaps `blocks` logical blocks from `logical` and frees all their copies. Unmapped blocks in
    /// the extent are skipped. Returns the physical blocks freed.
    ///
    /// # Errors
    /// [`LayoutError::EmptyExtent`], [`LayoutError::LogicalOutside`].
    pub fn trim(&mut self, logical: u64, blocks: u64) -> Result<u64> {
        self.check_logical(logical, blocks)?;
        let mut freed = 0;
        // Only the mapped blocks of the extent are visited, however long it is.
        let mapped: Vec<u64> = self.entries.range(logical..logical + blocks).map(|(&l, _)| l).collect();
        for l in mapped {
            if let Some(e) = self.entries.remove(&l) {
                for b in e.copies {
                    self.owner.remove(&b);
                    self.free.put(b, true);
                    freed += 1;
                }
                self.stats.mapped -= 1;
                self.stats.dirty -= u64::from(e.dirty);
            }
        }
        self.stats.live -= freed;
        self.stats.free += freed;
        Ok(freed)
    }

    /// Adds a physical copy of a mapped logical block at `lbn` (a free or reserved block); the copy
    /// carries the block's current version. This is how replication and rearrangement layers add
    /// copies that flex reads then choose among.
    ///
    /// # Errors
    /// [`LayoutError::NotMapped`], [`LayoutError::CandidateOutside`],
    /// [`LayoutError::Misaligned`], [`LayoutError::NotFree`].
    pub fn add_copy(&mut self, logical: u64, lbn: u64) -> Result<()> {
        if !self.entries.contains_key(&logical) {
            return Err(LayoutError::NotMapped { logical });
        }
        let (b, _) = self.extent_blocks(lbn, self.cfg.block_sectors, "copy location")?;
        match self.block_state(b) {
            BlockState::Free => self.stats.free -= 1,
            BlockState::Reserved => {
                self.reserved.put(b, false);
                self.stats.reserved -= 1;
            }
            state => return Err(LayoutError::NotFree { lbn, state }),
        }
        self.free.put(b, false);
        self.owner.insert(b, logical);
        self.stats.live += 1;
        self.entries.get_mut(&logical).expect("checked above").copies.push(b);
        Ok(())
    }

    /// Removes the copy of `logical` at `lbn`, freeing it. The last copy cannot be dropped (use
    /// [`BlockMap::trim`]).
    ///
    /// # Errors
    /// [`LayoutError::NotMapped`] when `logical` has no copy at `lbn`;
    /// [`LayoutError::Config`] for the last copy.
    pub fn drop_copy(&mut self, logical: u64, lbn: u64) -> Result<()> {
        let bs = self.cfg.block_sectors;
        let b = self.extent_blocks(lbn, bs, "copy location")?.0;
        let e = self.entries.get_mut(&logical).ok_or(LayoutError::NotMapped { logical })?;
        let i = e.copies.iter().position(|&c| c == b).ok_or(LayoutError::NotMapped { logical })?;
        if e.copies.len() == 1 {
            return Err(LayoutError::Config {
                field: "drop_copy",
                message: format!("{lbn} is the last copy of logical block {logical}; trim it instead"),
            });
        }
        e.copies.remove(i);
        self.owner.remove(&b);
        self.free.put(b, true);
        self.stats.live -= 1;
        self.stats.free += 1;
        Ok(())
    }

    /// Marks every block of a free extent reserved (what an allocator does when it offers
    /// candidates).
    ///
    /// # Errors
    /// Bounds/alignment errors, or [`LayoutError::NotFree`] if any block is not free (then
    /// nothing is reserved).
    pub fn reserve(&mut self, extent: PhysRange) -> Result<()> {
        self.claim_free(extent, true)
    }

    /// Pins a free extent: it is never allocated until [`BlockMap::unpin`].
    ///
    /// # Errors
    /// As [`BlockMap::reserve`].
    pub fn pin(&mut self, extent: PhysRange) -> Result<()> {
        self.claim_free(extent, false)
    }

    fn claim_free(&mut self, extent: PhysRange, reserve: bool) -> Result<()> {
        let (b, n) = self.extent_blocks(extent.start, extent.sectors, "extent start")?;
        if let Some(i) = (b..b + n).find(|&i| !self.free.get(i)) {
            return Err(LayoutError::NotFree { lbn: self.lbn_of(i), state: self.block_state(i) });
        }
        for i in b..b + n {
            self.free.put(i, false);
            if reserve {
                self.reserved.put(i, true);
            } else {
                self.pinned.put(i, true);
            }
        }
        self.stats.free -= n;
        if reserve {
            self.stats.reserved += n;
        } else {
            self.stats.pinned += n;
        }
        Ok(())
    }

    /// Gives an offer's reserved blocks back to free space without writing (the write was
    /// cancelled). Blocks in the candidates that are not reserved are left alone. Returns the
    /// blocks released.
    ///
    /// # Errors
    /// Bounds/alignment errors for a candidate outside the region.
    pub fn release(&mut self, candidates: &Candidates, blocks: u64) -> Result<u64> {
        let need = blocks.saturating_mul(self.cfg.block_sectors);
        let exts = candidates
            .extents(need)
            .into_iter()
            .map(|e| self.extent_blocks(e.start, e.sectors, "candidate start"))
            .collect::<Result<Vec<_>>>()?;
        let mut n = 0;
        for (b, len) in exts {
            for i in b..b + len {
                if self.reserved.get(i) {
                    self.reserved.put(i, false);
                    self.free.put(i, true);
                    n += 1;
                }
            }
        }
        self.stats.reserved -= n;
        self.stats.free += n;
        Ok(n)
    }

    /// Unpins an extent (pinned blocks become free; others are left alone). Returns the blocks
    /// unpinned.
    ///
    /// # Errors
    /// Bounds/alignment errors.
    pub fn unpin(&mut self, extent: PhysRange) -> Result<u64> {
        let (b, len) = self.extent_blocks(extent.start, extent.sectors, "extent start")?;
        let mut n = 0;
        for i in b..b + len {
            if self.pinned.get(i) {
                self.pinned.put(i, false);
                self.free.put(i, true);
                n += 1;
            }
        }
        self.stats.pinned -= n;
        self.stats.free += n;
        Ok(n)
    }

    /// The whole state as plain data (see [`MapSnapshot`]).
    #[must_use]
    pub fn to_snapshot(&self) -> MapSnapshot {
        let entries = self
            .entries
            .iter()
            .map(|(&logical, e)| SnapshotEntry {
                logical,
                version: e.version,
                copies: e.copies.iter().map(|&b| self.lbn_of(b)).collect(),
                dirty: e.dirty,
            })
            .collect();
        MapSnapshot {
            config: self.cfg,
            next_version: self.next_version,
            entries,
            reserved: self.runs(&self.reserved),
            pinned: self.runs(&self.pinned),
        }
    }

    /// Maximal runs of set bits, as sector ranges.
    fn runs(&self, bits: &Bits) -> Vec<PhysRange> {
        let bs = self.cfg.block_sectors;
        let mut out = Vec::new();
        let mut b = 0;
        while b < self.blocks {
            let s = bits.next(b, true);
            if s >= self.blocks {
                break;
            }
            let e = bits.next(s, false);
            out.push(PhysRange::new(self.lbn_of(s), (e - s) * bs));
            b = e;
        }
        out
    }

    /// Rebuilds a map from a snapshot, validating everything first: the configuration, every
    /// entry (logical block in range and listed once, at least one copy, every copy inside the
    /// region, block-aligned and owned by no other copy, version below `next_version`), and every
    /// reserved and pinned extent (inside the region, aligned, overlapping no live block and no
    /// other extent). The result passes [`BlockMap::check`].
    ///
    /// # Errors
    /// [`LayoutError::InvalidSnapshot`] naming the entry or extent at fault and what is wrong.
    pub fn from_snapshot(snap: MapSnapshot) -> Result<Self> {
        let bad = |place: String, message: String| LayoutError::InvalidSnapshot { place, message };
        let mut map = Self::new(snap.config).map_err(|e| bad("config".into(), e.to_string()))?;
        if snap.next_version == 0 {
            return Err(bad("next_version".into(), "must be at least 1".into()));
        }
        map.next_version = snap.next_version;
        let bs = map.cfg.block_sectors;
        let describe = |map: &Self, b: u64| -> String {
            match map.block_state(b) {
                BlockState::Live { logical } => format!("logical block {logical} holds it too"),
                state => format!("already {state}"),
            }
        };
        for (i, e) in snap.entries.iter().enumerate() {
            let place = || format!("entry {i} (logical block {})", e.logical);
            if e.logical >= map.cfg.logical_blocks {
                return Err(bad(place(), format!("the logical space is 0..{}", map.cfg.logical_blocks)));
            }
            if map.entries.contains_key(&e.logical) {
                return Err(bad(place(), "the logical block is listed twice".into()));
            }
            if e.copies.is_empty() {
                return Err(bad(place(), "no physical copy".into()));
            }
            if e.version >= snap.next_version {
                return Err(bad(
                    place(),
                    format!("version {} is not below next_version {}", e.version, snap.next_version),
                ));
            }
            let mut copies = Vec::with_capacity(e.copies.len());
            for &lbn in &e.copies {
                let (b, _) = map
                    .extent_blocks(lbn, bs, "copy location")
                    .map_err(|err| bad(place(), format!("copy at sector {lbn}: {err}")))?;
                if !map.free.get(b) {
                    return Err(bad(
                        place(),
                        format!("physical block at sector {lbn} is owned twice: {}", describe(&map, b)),
                    ));
                }
                map.free.put(b, false);
                map.owner.insert(b, e.logical);
                copies.push(b);
            }
            map.stats.free -= copies.len() as u64;
            map.stats.live += copies.len() as u64;
            map.stats.mapped += 1;
            map.stats.dirty += u64::from(e.dirty);
            map.entries.insert(e.logical, Entry { version: e.version, copies, dirty: e.dirty });
        }
        for (what, list, reserve) in [("reserved", &snap.reserved, true), ("pinned", &snap.pinned, false)] {
            for (i, r) in list.iter().enumerate() {
                let place = || format!("{what} extent {i} (sectors {}..{})", r.start, r.end());
                let (b, n) = map
                    .extent_blocks(r.start, r.sectors, "extent start")
                    .map_err(|err| bad(place(), err.to_string()))?;
                if let Some(j) = (b..b + n).find(|&j| !map.free.get(j)) {
                    return Err(bad(
                        place(),
                        format!("the block at sector {} is {}", map.lbn_of(j), map.block_state(j)),
                    ));
                }
                map.claim_free(*r, reserve).map_err(|err| bad(place(), err.to_string()))?;
            }
        }
        map.check().map_err(|m| bad("map".into(), m))?;
        Ok(map)
    }

    /// Every mapped logical block with its location, in logical order.
    pub fn mapped(&self) -> impl Iterator<Item = (u64, Location)> + '_ {
        self.entries.keys().map(|&l| (l, self.read(l).expect("key present")))
    }

    /// Verifies the map's invariants by brute force (for tests and debugging): each live block has
    /// exactly one owner, which lists it among its copies; each copy is live and owned by its
    /// logical block; the counters match the bitmaps.
    ///
    /// # Errors
    /// A description of the first violation found.
    pub fn check(&self) -> std::result::Result<(), String> {
        let mut counts = SpaceStats { total: self.blocks, mapped: self.entries.len() as u64, ..SpaceStats::default() };
        for b in 0..self.blocks {
            let flags = [self.free.get(b), self.reserved.get(b), self.pinned.get(b), self.owner.contains_key(&b)];
            if flags.iter().filter(|&&f| f).count() != 1 {
                return Err(format!("physical block {b} has state flags {flags:?} (want exactly one)"));
            }
            match self.block_state(b) {
                BlockState::Free => counts.free += 1,
                BlockState::Reserved => counts.reserved += 1,
                BlockState::Pinned => counts.pinned += 1,
                BlockState::Live { logical } => {
                    counts.live += 1;
                    let listed = self.entries.get(&logical).is_some_and(|e| e.copies.contains(&b));
                    if !listed {
                        return Err(format!(
                            "physical block {b} is owned by logical {logical}, which does not list it"
                        ));
                    }
                }
            }
        }
        counts.dirty = self.entries.values().filter(|e| e.dirty).count() as u64;
        for (&l, e) in &self.entries {
            if e.copies.is_empty() {
                return Err(format!("logical block {l} is mapped with no copy"));
            }
            if e.version >= self.next_version {
                return Err(format!("logical block {l} has version {} from the future", e.version));
            }
            for &b in &e.copies {
                if self.owner.get(&b) != Some(&l) {
                    return Err(format!(
                        "logical block {l} lists physical block {b}, owned by {:?}",
                        self.owner.get(&b)
                    ));
                }
            }
        }
        if counts != self.stats {
            return Err(format!("counters {:?} disagree with the bitmaps {counts:?}", self.stats));
        }
        if counts.free + counts.reserved + counts.pinned + counts.live != counts.total {
            return Err(format!("space does not balance: {counts:?}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> BlockMap {
        BlockMap::new(MapConfig::region(0, 100, 1)).unwrap()
    }

    #[test]
    fn bits_scan_both_ways() {
        let mut b = Bits::new(130, false);
        b.put(3, true);
        b.put(70, true);
        b.put(129, true);
        assert_eq!(b.next(0, true), 3);
        assert_eq!(b.next(4, true), 70);
        assert_eq!(b.next(71, true), 129);
        assert_eq!(b.next(3, false), 4);
        let f = Bits::new(130, true);
        assert_eq!(f.next(0, false), 130);
        assert_eq!(f.next(129, true), 129);
    }

    #[test]
    fn write_frees_unchosen_reserved_and_old_copy() {
        let mut m = map();
        let c = Candidates::discrete(vec![10, 40, 70]);
        for s in [10, 40, 70] {
            m.reserve(PhysRange::new(s, 2)).unwrap();
        }
        assert_eq!(m.stats().reserved, 6);
        let w = m.write(&WriteRequest { logical: 5, blocks: 2, candidates: c }, 40).unwrap();
        assert_eq!(w.released, 4);
        assert_eq!(m.stats(), SpaceStats { total: 100, free: 98, live: 2, mapped: 2, ..SpaceStats::default() });
        let w2 = m.write(&WriteRequest { logical: 5, blocks: 2, candidates: Candidates::single(0) }, 0).unwrap();
        assert_eq!(w2.freed_old, 2);
        assert_eq!(m.read(6).unwrap(), Location { version: w2.version, copies: vec![1], dirty: false });
        m.check().unwrap();
    }

    #[test]
    fn ranges_accept_aligned_starts_that_fit() {
        let c = Candidates::ranges(vec![PhysRange::new(3, 10)], 4);
        assert_eq!(c.starts(4).collect::<Vec<_>>(), vec![4, 8]);
        assert!(c.contains_start(8, 4) && !c.contains_start(12, 4) && !c.contains_start(6, 4));
    }

    #[test]
    fn in_place_and_shifted_overwrites_are_allowed() {
        let mut m = map();
        m.write(&WriteRequest { logical: 0, blocks: 3, candidates: Candidates::single(20) }, 20).unwrap();
        // Shifted by one: block 21 holds logical 1, which is being rewritten.
        m.write(&WriteRequest { logical: 0, blocks: 3, candidates: Candidates::single(21) }, 21).unwrap();
        assert_eq!(m.extent_copies(0, 3).unwrap(), vec![21]);
        assert_eq!(m.stats().live, 3);
        m.check().unwrap();
    }

    #[test]
    fn copies_and_trim() {
        let mut m = map();
        m.write(&WriteRequest { logical: 9, blocks: 1, candidates: Candidates::single(5) }, 5).unwrap();
        m.add_copy(9, 50).unwrap();
        assert_eq!(m.read(9).unwrap().copies, vec![5, 50]);
        assert!(matches!(m.add_copy(9, 50), Err(LayoutError::NotFree { lbn: 50, .. })));
        m.drop_copy(9, 5).unwrap();
        assert!(m.drop_copy(9, 50).is_err());
        assert_eq!(m.trim(0, 20).unwrap(), 1);
        assert_eq!(m.stats().free, 100);
        m.check().unwrap();
    }

    fn w(m: &mut BlockMap, l: u64, n: u64, at: u64) {
        m.write(&WriteRequest { logical: l, blocks: n, candidates: Candidates::single(at) }, at).unwrap();
    }

    #[test]
    fn dirty_bits_follow_the_caller_not_the_write() {
        let mut m = map();
        assert_eq!(m.set_dirty(3, true), Err(LayoutError::NotMapped { logical: 3 }));
        w(&mut m, 3, 2, 10);
        assert!(!m.is_dirty(3) && !m.read(3).unwrap().dirty);
        m.set_dirty(3, true).unwrap();
        m.set_dirty(3, true).unwrap();
        assert_eq!(m.stats().dirty, 1);
        // A write keeps each block's bit; a write over an unmapped block starts clean.
        w(&mut m, 2, 3, 40);
        assert!(m.is_dirty(3) && !m.is_dirty(2) && !m.is_dirty(4));
        assert_eq!(m.read(3).unwrap(), Location { version: 2, copies: vec![41], dirty: true });
        m.add_copy(3, 80).unwrap();
        m.drop_copy(3, 41).unwrap();
        assert!(m.is_dirty(3));
        m.check().unwrap();
        assert_eq!(m.trim(3, 1).unwrap(), 1);
        assert!(!m.is_dirty(3));
        assert_eq!(m.stats().dirty, 0);
        w(&mut m, 3, 1, 41);
        assert!(!m.is_dirty(3), "a trimmed block comes back clean");
        m.set_dirty(2, true).unwrap();
        m.set_dirty(2, false).unwrap();
        assert_eq!(m.stats().dirty, 0);
        m.check().unwrap();
    }

    fn busy_map() -> BlockMap {
        let mut m = BlockMap::new(MapConfig::region(100, 400, 4)).unwrap();
        m.write(&WriteRequest { logical: 5, blocks: 2, candidates: Candidates::single(200) }, 200).unwrap();
        m.write(&WriteRequest { logical: 9, blocks: 1, candidates: Candidates::single(120) }, 120).unwrap();
        m.add_copy(9, 400).unwrap();
        m.set_dirty(9, true).unwrap();
        m.reserve(PhysRange::new(300, 12)).unwrap();
        m.pin(PhysRange::new(460, 40)).unwrap();
        m.pin(PhysRange::new(104, 4)).unwrap();
        m
    }

    #[test]
    fn snapshot_round_trips_and_is_canonical() {
        let m = busy_map();
        let s = m.to_snapshot();
        assert_eq!(s.reserved, vec![PhysRange::new(300, 12)]);
        assert_eq!(s.pinned, vec![PhysRange::new(104, 4), PhysRange::new(460, 40)]);
        assert_eq!(s.entries[2], SnapshotEntry { logical: 9, version: 2, copies: vec![120, 400], dirty: true });
        let json = serde_json::to_string(&s).unwrap();
        let back = BlockMap::from_snapshot(serde_json::from_str(&json).unwrap()).unwrap();
        assert_eq!(back, m);
        back.check().unwrap();
        assert_eq!(back.stats(), m.stats());
    }

    fn refused(edit: impl FnOnce(&mut MapSnapshot)) -> String {
        let mut s = busy_map().to_snapshot();
        edit(&mut s);
        match BlockMap::from_snapshot(s) {
            Err(e @ LayoutError::InvalidSnapshot { .. }) => e.to_string(),
            other => panic!("expected an invalid-snapshot error, got {other:?}"),
        }
    }

    #[test]
    fn snapshot_validation_names_the_fault() {
        let m = refused(|s| s.entries[0].copies[0] = 600);
        assert!(m.contains("entry 0 (logical block 5)") && m.contains("600..604"), "{m}");
        let m = refused(|s| s.entries[1].copies[0] = 120);
        assert!(m.contains("entry 2 (logical block 9)") && m.contains("sector 120 is owned twice"), "{m}");
        assert!(m.contains("logical block 6 holds it too"), "{m}");
        let m = refused(|s| s.entries[2].copies.push(120));
        assert!(m.contains("owned twice"), "{m}");
        let m = refused(|s| s.entries[0].copies[0] = 201);
        assert!(m.contains("entry 0") && m.contains("201"), "{m}");
        let m = refused(|s| s.entries[1].version = 3);
        assert!(m.contains("entry 1") && m.contains("not below next_version 3"), "{m}");
        let m = refused(|s| s.entries[1].logical = 5);
        assert!(m.contains("listed twice"), "{m}");
        let m = refused(|s| s.entries[1].logical = 1_000);
        assert!(m.contains("logical space is 0..100"), "{m}");
        let m = refused(|s| s.entries[2].copies.clear());
        assert!(m.contains("entry 2 (logical block 9): no physical copy"), "{m}");
        let m = refused(|s| s.reserved.push(PhysRange::new(116, 8)));
        assert!(
            m.contains("reserved extent 1 (sectors 116..124)") && m.contains("sector 120 is live (logical block 9)"),
            "{m}"
        );
        let m = refused(|s| s.pinned.push(PhysRange::new(296, 8)));
        assert!(m.contains("pinned extent 2") && m.contains("reserved by a pending offer"), "{m}");
        let m = refused(|s| s.pinned[0] = PhysRange::new(104, 3));
        assert!(m.contains("pinned extent 0") && m.contains("extent length 3"), "{m}");
        let m = refused(|s| s.next_version = 0);
        assert!(m.contains("next_version"), "{m}");
        let m = refused(|s| s.config.block_sectors = 0);
        assert!(m.contains("config") && m.contains("block_sectors"), "{m}");
    }

    #[test]
    fn pinned_blocks_refuse_writes() {
        let mut m = map();
        m.pin(PhysRange::new(90, 10)).unwrap();
        let e = m.write(&WriteRequest { logical: 0, blocks: 1, candidates: Candidates::single(95) }, 95).unwrap_err();
        assert_eq!(e, LayoutError::NotFree { lbn: 95, state: BlockState::Pinned });
        assert_eq!(m.free_runs(0, 100), vec![PhysRange::new(0, 90)]);
        assert_eq!(m.unpin(PhysRange::new(90, 10)).unwrap(), 10);
        m.check().unwrap();
    }
}
