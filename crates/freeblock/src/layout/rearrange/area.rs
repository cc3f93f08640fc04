//! # The reserved area: cylinders in the middle of the disk, hidden from the file system
//!
//! Adaptive block rearrangement (Akyürek & Salem, USENIX 1993; paper 002 §2, §3.1.1) copies the
//! hottest blocks into a band of whole cylinders in the middle of the disk. The band is taken away
//! from the logical disk the file system sees: the disk label claims fewer cylinders, and the
//! driver shifts every logical sector at or past the band's start up by the band's length (paper
//! 002 Fig. 2).
//!
//! ```text
//!  physical LBNs  0                 first          end                          capacity
//!                 ├─────────────────┼▓▓▓▓▓▓▓▓▓▓▓▓▓▓┼────────────────────────────┤
//!  cylinders      0 ...            c0    band     c0+n ...                      C
//!                                    │T│s│s│s│s│… ← slots: whole blocks of the band; T = block table
//!  logical disk   ├─────────────────┤               ┌────────────────────────────┤
//!                 0             first               first          capacity − (end − first)
//!
//!  logical s < first  →  physical s          physical p in first..end → hidden (no logical sector)
//!  logical s ≥ first  →  physical s + len    len = end − first
//! ```
//!
//! | item | what | paper 002 (Toshiba MK156F) |
//! |---|---|---|
//! | band | `cylinders` whole cylinders from `first_cylinder` (default: centred) | 48 of 815, from cylinder 383 |
//! | band LBNs | LBNs whose home sectors lie on the band's tracks: contiguous, because LBNs run cylinder by cylinder | 16 320 sectors (48 × 10 × 34) |
//! | hidden range `first..end` | the band LBNs rounded out to whole blocks | 130 208..146 544 |
//! | slot | `block_sectors` consecutive LBNs the band's tracks hold, starting at a multiple of `block_sectors` | 1 019 slots of 16 sectors (8 KB) |
//! | table slots | the first slots, holding the on-disk copy of the block table (§3.1.2) | 2 (1 018 entries × 16 B) |
//! | free slots | the rest: where hot blocks go | 1 017 with two table slots (the paper placed 1 018 blocks) |
//!
//! **Why round out.** The logical disk is addressed in file-system blocks. If the hidden range
//! started mid-block, the logical block across its start would be split into two physical pieces
//! `len` sectors apart. Rounding the range out to whole blocks keeps every logical block in one
//! physical piece at the cost of hiding fewer than `block_sectors` sectors on each neighbouring
//! cylinder, which then hold nothing.
//!
//! **Spares, slips and defects.** Spare and slipped sectors hold no LBN, so the band's LBNs run on
//! across them and a slot may straddle one, as a file-system block does. A defect remapped *out*
//! of the band leaves a hole in the LBNs the band holds: no slot covers a hole (a slot's sectors
//! are all on the band). An LBN remapped *into* a spare on the band from elsewhere is not part of
//! the hidden range and stays in the logical disk.
//!
//! **Cylinders of slots.** A slot that straddles a cylinder boundary belongs to the cylinder that
//! holds most of its sectors (the lower cylinder on a tie); [`ReservedArea::slot_grid`] groups the
//! free slots by cylinder for the placement policies ([`super::placement`]).

use std::ops::Range;

use freeblock_disk::{sparing, Disk};
use serde::{Deserialize, Serialize};

use super::error::{RearrangeError, Result};

/// Cylinders in the paper's reserved area (48 of the Toshiba MK156F's 815, "3 cylinder groups").
pub const PAPER_CYLINDERS: u32 = 48;
/// The paper's block size: 8 KB file-system blocks of 512-byte sectors.
pub const PAPER_BLOCK_SECTORS: u64 = 16;
/// Bytes per block-table entry in our on-disk form: the original LBN (8 bytes), the slot (4) and
/// a dirty flag padded to 4. The paper records "the block's old and new physical addresses and a
/// dirty bit" (§3.1.2) without a size.
pub const TABLE_ENTRY_BYTES: u64 = 16;

/// How to build a [`ReservedArea`]. `Default` is the paper's: 48 centred cylinders, 8 KB blocks of
/// 512-byte sectors, one table slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AreaConfig {
    /// Whole cylinders in the band.
    pub cylinders: u32,
    /// First cylinder of the band; `None` centres it: `(disk cylinders − cylinders) / 2`.
    #[serde(default)]
    pub first_cylinder: Option<u32>,
    /// Sectors per block (slot).
    pub block_sectors: u64,
    /// Slots at the start of the area kept for the on-disk block table.
    #[serde(default = "one")]
    pub table_slots: usize,
    /// Where the table's slots are: at the area's start (the paper) or in its middle, on the
    /// cylinders organ-pipe placement fills first, where the head lingers (so table writes that
    /// wait for free bandwidth find it there).
    #[serde(default)]
    pub table_at: TablePlace,
}

/// Where in the area the block table lives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TablePlace {
    /// The area's first slots (paper 002 §3.1.2).
    #[default]
    Start,
    /// The slots in the middle of the area.
    Middle,
}

fn one() -> usize {
    1
}

impl Default for AreaConfig {
    fn default() -> Self {
        Self { cylinders: PAPER_CYLINDERS, first_cylinder: None, block_sectors: PAPER_BLOCK_SECTORS, table_slots: 1, table_at: TablePlace::Start }
    }
}

/// One whole-block place in the reserved area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slot {
    /// First sector (disk LBN); the slot is `lbn..lbn + block_sectors`.
    pub lbn: u64,
    /// Cylinder holding most of the slot's sectors.
    pub cylinder: u32,
}

/// A band of whole cylinders hidden from the logical disk, cut into block-sized slots.
/// Immutable once built; see the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReservedArea {
    first_cylinder: u32,
    cylinders: u32,
    block_sectors: u64,
    /// LBNs whose home sectors lie on the band.
    band: Range<u64>,
    /// `band` rounded out to whole blocks: what the logical disk skips.
    hidden: Range<u64>,
    /// Disk capacity, sectors.
    capacity: u64,
    /// All slots, in LBN order; `table_slots` of them from `table_first` hold the block table.
    slots: Vec<Slot>,
    table_slots: usize,
    table_first: usize,
}

impl ReservedArea {
    /// Builds the area for `disk`.
    ///
    /// # Errors
    /// [`RearrangeError::ZeroCylinders`]; [`RearrangeError::AreaDoesNotFit`] when the band runs off
    /// the disk or leaves no cylinder visible; [`RearrangeError::NotWholeBandPairs`] on a banded
    /// disk when the band is not whole band pairs; [`RearrangeError::AreaPastCapacity`] when the band
    /// holds no LBNs (it lies past the disk's `block_count`); [`RearrangeError::BadBlockSize`] for a zero block size or
    /// one larger than every run of LBNs on the band; [`RearrangeError::TooFewSlots`] when the
    /// table needs more slots than there are.
    pub fn new(disk: &Disk, config: &AreaConfig) -> Result<Self> {
        let layout = disk.layout();
        let disk_cylinders = layout.cylinders();
        let n = config.cylinders;
        if n == 0 {
            return Err(RearrangeError::ZeroCylinders);
        }
        let c0 = config.first_cylinder.unwrap_or(disk_cylinders.saturating_sub(n) / 2);
        let end_cyl = u64::from(c0) + u64::from(n);
        if n >= disk_cylinders || end_cyl > u64::from(disk_cylinders) {
            return Err(RearrangeError::AreaDoesNotFit { first_cylinder: u64::from(c0), cylinders: n, disk_cylinders });
        }
        let c1 = c0 + n;
        check_band_pairs(disk, c0, c1)?;
        let bs = config.block_sectors;
        if bs == 0 {
            return Err(RearrangeError::BadBlockSize { block_sectors: 0, reason: "a block needs at least one sector".into() });
        }
        let capacity = layout.capacity();
        let band = home_lbn(disk, c0)..home_lbn(disk, c1);
        if band.is_empty() {
            return Err(RearrangeError::AreaPastCapacity { first_cylinder: c0, end_cylinder: c1, capacity });
        }
        // Rounded out to whole blocks; at the disk's end there is nothing to keep aligned.
        let hidden = (band.start / bs * bs)..band.end.div_ceil(bs).saturating_mul(bs).min(capacity);
        let slots = carve_slots(disk, c0..c1, &band, bs);
        if slots.is_empty() {
            return Err(RearrangeError::BadBlockSize {
                block_sectors: bs,
                reason: format!(
                    "no whole block fits in the band's runs of LBNs (cylinders {c0}..{c1}, {} sectors)",
                    band.end - band.start
                ),
            });
        }
        if slots.len() < config.table_slots {
            return Err(RearrangeError::TooFewSlots { slots: slots.len(), table_slots: config.table_slots });
        }
        let table_first = match config.table_at {
            TablePlace::Start => 0,
            TablePlace::Middle => (slots.len() - config.table_slots) / 2,
        };
        Ok(Self {
            first_cylinder: c0,
            cylinders: n,
            block_sectors: bs,
            band,
            hidden,
            capacity,
            slots,
            table_slots: config.table_slots,
            table_first,
        })
    }

    /// Slots a block table of `entries` entries needs ([`TABLE_ENTRY_BYTES`] each) in blocks of
    /// `block_bytes` bytes; at least one. The paper's 1 018 entries in 8 KB blocks need 2.
    #[must_use]
    pub fn table_slots_needed(entries: usize, block_bytes: u64) -> usize {
        let bytes = (entries as u64).saturating_mul(TABLE_ENTRY_BYTES);
        usize::try_from(bytes.div_ceil(block_bytes.max(1)).max(1)).unwrap_or(usize::MAX)
    }

    /// First cylinder of the band.
    #[must_use]
    pub fn first_cylinder(&self) -> u32 {
        self.first_cylinder
    }

    /// Cylinders in the band.
    #[must_use]
    pub fn cylinders(&self) -> u32 {
        self.cylinders
    }

    /// The band's cylinders, `first..first + cylinders`.
    #[must_use]
    pub fn cylinder_range(&self) -> Range<u32> {
        self.first_cylinder..self.first_cylinder + self.cylinders
    }

    /// Sectors per block (slot).
    #[must_use]
    pub fn block_sectors(&self) -> u64 {
        self.block_sectors
    }

    /// LBNs whose home sectors lie on the band (not rounded to blocks).
    #[must_use]
    pub fn band_lbns(&self) -> Range<u64> {
        self.band.clone()
    }

    /// First hidden LBN: logical sectors from here on are shifted by [`ReservedArea::len`].
    /// A multiple of the block size.
    #[must_use]
    pub fn first(&self) -> u64 {
        self.hidden.start
    }

    /// One past the last hidden LBN (a multiple of the block size, or the disk's capacity when the
    /// area ends the disk).
    #[must_use]
    pub fn end(&self) -> u64 {
        self.hidden.end
    }

    /// The hidden LBNs, `first..end`.
    #[must_use]
    pub fn lbns(&self) -> Range<u64> {
        self.hidden.clone()
    }

    /// Hidden sectors (a multiple of the block size unless the area ends the disk).
    #[must_use]
    pub fn len(&self) -> u64 {
        self.hidden.end - self.hidden.start
    }

    /// Never true: an area holds at least one slot. (For clippy's `len_without_is_empty`.)
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.hidden.is_empty()
    }

    /// True when the disk LBN `lbn` is hidden from the logical disk.
    #[must_use]
    pub fn contains(&self, lbn: u64) -> bool {
        self.hidden.contains(&lbn)
    }

    /// Sectors of the whole disk.
    #[must_use]
    pub fn disk_capacity(&self) -> u64 {
        self.capacity
    }

    /// Sectors of the logical disk: the disk without the hidden range.
    #[must_use]
    pub fn logical_capacity(&self) -> u64 {
        self.capacity - self.len()
    }

    /// Whole blocks of the logical disk (a partial last block is not counted).
    #[must_use]
    pub fn logical_blocks(&self) -> u64 {
        self.logical_capacity() / self.block_sectors
    }

    /// The disk LBN of logical sector `sector` (paper 002 Fig. 2).
    ///
    /// # Errors
    /// [`RearrangeError::LogicalOutside`] past the logical capacity.
    pub fn to_physical(&self, sector: u64) -> Result<u64> {
        if sector >= self.logical_capacity() {
            return Err(RearrangeError::LogicalOutside { sector, capacity: self.logical_capacity() });
        }
        Ok(if sector < self.hidden.start { sector } else { sector + self.len() })
    }

    /// The logical sector stored at disk LBN `lbn`, or `None` for a hidden LBN or one past the disk.
    #[must_use]
    pub fn to_logical(&self, lbn: u64) -> Option<u64> {
        if lbn < self.hidden.start {
            Some(lbn)
        } else if lbn < self.hidden.end || lbn >= self.capacity {
            None
        } else {
            Some(lbn - self.len())
        }
    }

    /// The home (original) disk LBN of logical block `block`: where the block lives when it is
    /// not rearranged. The block's sectors are `home..home + block_sectors`, all outside the area.
    ///
    /// # Errors
    /// [`RearrangeError::LogicalOutside`] when the block does not lie wholly in the logical disk.
    pub fn home_lbn(&self, block: u64) -> Result<u64> {
        let bs = self.block_sectors;
        let cap = self.logical_capacity();
        match block.checked_mul(bs) {
            Some(s) if s + bs <= cap => self.to_physical(s),
            s => Err(RearrangeError::LogicalOutside { sector: s.unwrap_or(u64::MAX), capacity: cap }),
        }
    }

    /// The home location of logical block `block` in whole blocks of the disk
    /// (`home_lbn / block_sectors`, exact because the hidden range is block-aligned). Two blocks'
    /// physical distance is the difference of their home blocks; use these as the block numbers
    /// of the interleaved placement ([`super::placement`]) to apply its successor rule to the
    /// *physical* layout, as the paper does.
    ///
    /// # Errors
    /// As [`ReservedArea::home_lbn`].
    pub fn home_block(&self, block: u64) -> Result<u64> {
        Ok(self.home_lbn(block)? / self.block_sectors)
    }

    /// The logical block whose home is disk block `home_block` (inverse of
    /// [`ReservedArea::home_block`]); `None` inside the area or past the disk.
    #[must_use]
    pub fn logical_block_of_home(&self, home_block: u64) -> Option<u64> {
        let lbn = home_block.checked_mul(self.block_sectors)?;
        let block = self.to_logical(lbn)? / self.block_sectors;
        // A partial last block is not a block of the logical disk.
        (block < self.logical_blocks()).then_some(block)
    }

    /// All slots in LBN order, table slots first.
    #[must_use]
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// Slot `index`, if there is one.
    #[must_use]
    pub fn slot(&self, index: usize) -> Option<Slot> {
        self.slots.get(index).copied()
    }

    /// The slot starting at disk LBN `lbn`, if any.
    #[must_use]
    pub fn slot_at(&self, lbn: u64) -> Option<usize> {
        self.slots.binary_search_by_key(&lbn, |s| s.lbn).ok()
    }

    /// The slot whose sectors include disk LBN `lbn`, if any.
    #[must_use]
    pub fn slot_containing(&self, lbn: u64) -> Option<usize> {
        let i = self.slots.partition_point(|s| s.lbn <= lbn).checked_sub(1)?;
        (lbn < self.slots[i].lbn + self.block_sectors).then_some(i)
    }

    /// Number of slots kept for the block table.
    #[must_use]
    pub fn table_slot_count(&self) -> usize {
        self.table_slots
    }

    /// The table's slots (in LBN order; the area's first ones unless `table_at = "middle"`).
    #[must_use]
    pub fn table_slots(&self) -> &[Slot] {
        &self.slots[self.table_first..self.table_first + self.table_slots]
    }

    /// First sector of the on-disk block table, at the beginning of the reserved area (paper 002
    /// §3.1.2); `None` when `table_slots = 0`. The table slots are contiguous unless a remapped
    /// defect splits them: write them one slot at a time from [`ReservedArea::table_slots`].
    #[must_use]
    pub fn table_lbn(&self) -> Option<u64> {
        self.table_slots().first().map(|s| s.lbn)
    }

    /// True for a slot index that holds the block table.
    #[must_use]
    pub fn is_table_slot(&self, index: usize) -> bool {
        (self.table_first..self.table_first + self.table_slots).contains(&index)
    }

    /// Slots free for hot blocks (all but the table's).
    #[must_use]
    pub fn free_slot_count(&self) -> usize {
        self.slots.len() - self.table_slots
    }

    /// The free slots grouped by cylinder: entry `i` lists, in LBN (= rotational) order, the
    /// indices into [`ReservedArea::slots`] of the free slots on cylinder `first_cylinder + i`.
    /// One entry per band cylinder (possibly empty: spare tracks hold no slots), so index
    /// `(cylinders − 1) / 2` is the band's centre, where organ-pipe placement starts.
    #[must_use]
    pub fn slot_grid(&self) -> Vec<Vec<usize>> {
        let mut grid = vec![Vec::new(); self.cylinders as usize];
        for (i, s) in self.slots.iter().enumerate().filter(|(i, _)| !self.is_table_slot(*i)) {
            // Every slot's majority cylinder is on the band (its sectors all are).
            if let Some(g) = grid.get_mut((s.cylinder - self.first_cylinder) as usize) {
                g.push(i);
            }
        }
        grid
    }
}

/// The first LBN whose home sector is at or after the first sector of cylinder `c` (in mapping
/// order), from the zone table and each zone's reserved slots; the disk's capacity past the end.
/// LBNs fill a zone's unreserved slots in order, and slots run cylinder by cylinder, so the LBNs
/// homed on cylinders `a..b` are exactly `home_lbn(a)..home_lbn(b)`.
/// On a banded disk, `c0` and `c1` must be band-pair boundaries of their zones (the cylinders
/// between then hold whole band pairs, so one run of LBNs, and [`home_lbn`]'s count of the slots
/// before a cylinder holds there too).
fn check_band_pairs(disk: &Disk, c0: u32, c1: u32) -> Result<()> {
    let freeblock_disk::Mapping::Banded { band_cylinders } = disk.spec().mapping else { return Ok(()) };
    let pair = 2 * band_cylinders;
    let zones = disk.layout().zone_table();
    let on_boundary = |c: u32| {
        let i = zones.partition_point(|z| z.1 < c);
        zones.get(i).is_none_or(|z| (c - z.0).is_multiple_of(pair))
    };
    if on_boundary(c0) && on_boundary(c1) {
        Ok(())
    } else {
        Err(RearrangeError::NotWholeBandPairs { first_cylinder: c0, end_cylinder: c1, pair_cylinders: pair })
    }
}

fn home_lbn(disk: &Disk, c: u32) -> u64 {
    let layout = disk.layout();
    let capacity = layout.capacity();
    let zones = layout.zone_table();
    let i = zones.partition_point(|z| z.1 < c);
    let Some(&(first_cyl, _, spt, first_lbn, _)) = zones.get(i) else { return capacity };
    if first_cyl > c {
        return first_lbn.min(capacity);
    }
    let Some(zone) = disk.spec().zones.get(i) else { return capacity };
    let slot = u64::from(c - first_cyl) * u64::from(layout.surfaces()) * u64::from(spt);
    let reserved_below: u64 =
        sparing::reserved_ranges(disk.spec(), zone).iter().map(|&(start, len)| len.min(slot.saturating_sub(start))).sum();
    (first_lbn + slot - reserved_below).min(capacity)
}

/// Cuts the LBNs in `band` that the band's tracks hold into slots of `bs` sectors, each run of
/// consecutive LBNs from its start, in LBN order.
fn carve_slots(disk: &Disk, cylinders: Range<u32>, band: &Range<u64>, bs: u64) -> Vec<Slot> {
    let layout = disk.layout();
    // (first LBN, end LBN, cylinder) of every piece of the band's LBNs the band's tracks hold.
    let mut pieces: Vec<(u64, u64, u32)> = Vec::new();
    let mut scratch = Vec::new();
    for c in cylinders {
        let spt = layout.sectors_per_track(c);
        for h in 0..layout.surfaces() {
            scratch.clear();
            layout.arc_lbns(c, h, 0, spt, &mut scratch);
            for (r, _) in &scratch {
                let (a, b) = (r.start.max(band.start), r.end.min(band.end));
                if a < b {
                    pieces.push((a, b, c));
                }
            }
        }
    }
    pieces.sort_unstable();
    let mut slots = Vec::new();
    let mut i = 0;
    while i < pieces.len() {
        // A maximal run of consecutive LBNs: pieces[i..j].
        let mut j = i + 1;
        while j < pieces.len() && pieces[j].0 == pieces[j - 1].1 {
            j += 1;
        }
        let run = &pieces[i..j];
        let end = run[run.len() - 1].1;
        // Slots start at whole multiples of the block size, so the block map that tracks them
        // (whose blocks are aligned so) sees each slot as one of its blocks.
        let mut start = run[0].0.div_ceil(bs) * bs;
        let mut k = 0;
        while end.saturating_sub(start) >= bs {
            while run[k].1 <= start {
                k += 1;
            }
            slots.push(Slot { lbn: start, cylinder: majority_cylinder(&run[k..], start, start + bs) });
            start += bs;
        }
        i = j;
    }
    slots
}

/// The cylinder holding most of `a..b` among `pieces` (sorted, consecutive); the lowest on a tie.
fn majority_cylinder(pieces: &[(u64, u64, u32)], a: u64, b: u64) -> u32 {
    let mut tally: Vec<(u32, u64)> = Vec::new();
    for &(s, e, c) in pieces.iter().take_while(|p| p.0 < b) {
        let n = e.min(b) - s.max(a);
        match tally.iter_mut().find(|t| t.0 == c) {
            Some(t) => t.1 += n,
            None => tally.push((c, n)),
        }
    }
    tally.iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0))).map_or(0, |t| t.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use freeblock_disk::{library, Pbn};
    use proptest::prelude::*;

    fn disk(name: &str) -> Disk {
        Disk::new(library::get(name).unwrap()).unwrap()
    }

    fn paper() -> (Disk, ReservedArea) {
        let d = disk("toshiba_mk156f");
        let a = ReservedArea::new(&d, &AreaConfig { table_slots: 2, ..AreaConfig::default() }).unwrap();
        (d, a)
    }

    /// Every sector of every slot is on the band's cylinders, inside the band's LBNs, and the
    /// slots do not overlap; the table slots come first.
    fn check_slots(d: &Disk, a: &ReservedArea) {
        let bs = a.block_sectors();
        let cyls = a.cylinder_range();
        let mut prev_end = 0;
        for (i, s) in a.slots().iter().enumerate() {
            assert!(s.lbn >= prev_end, "slot {i} overlaps the previous one");
            prev_end = s.lbn + bs;
            assert!(a.band_lbns().start <= s.lbn && s.lbn + bs <= a.band_lbns().end, "slot {i} leaves the band's LBNs");
            for l in s.lbn..s.lbn + bs {
                let p = d.layout().lbn_to_pbn(l).unwrap();
                assert!(cyls.contains(&p.cylinder), "slot {i} sector {l} on cylinder {}", p.cylinder);
            }
            assert!(cyls.contains(&s.cylinder));
        }
        let table: Vec<usize> = (0..a.slots().len()).filter(|&i| a.is_table_slot(i)).collect();
        assert_eq!(table.len(), a.table_slot_count());
        assert!(table.windows(2).all(|w| w[1] == w[0] + 1), "the table's slots are consecutive");
        assert_eq!(a.table_slots().first().map(|s| s.lbn), table.first().map(|&i| a.slots()[i].lbn));
        let grid = a.slot_grid();
        assert_eq!(grid.len(), a.cylinders() as usize);
        assert_eq!(grid.iter().map(Vec::len).sum::<usize>(), a.free_slot_count());
        for (ci, g) in grid.iter().enumerate() {
            for &s in g {
                assert!(!a.is_table_slot(s));
                assert_eq!(a.slots()[s].cylinder, a.first_cylinder() + ci as u32);
            }
        }
    }

    #[test]
    fn paper_area_on_the_toshiba() {
        let (d, a) = paper();
        assert_eq!(a.cylinder_range(), 383..431);
        assert_eq!(a.band_lbns(), 383 * 340..431 * 340);
        assert_eq!(a.lbns(), 130_208..146_544, "rounded out to 16-sector blocks");
        assert_eq!(a.slots().len(), 1_019, "48 × 10 × 34 / 16, less the partial blocks at the band's aligned ends");
        assert_eq!(a.free_slot_count(), 1_017, "the paper placed 1 018 blocks");
        assert_eq!(ReservedArea::table_slots_needed(1_018, 16 * 512), 2, "and a table of 1 018 entries fills 2 slots");
        assert_eq!(a.table_lbn(), Some(130_224), "the first 16-sector boundary in the band");
        assert_eq!(a.logical_capacity(), d.capacity() - 16_336);
        check_slots(&d, &a);
        // 340 sectors per cylinder, 16 per slot: cylinders hold 21 or 22 slots.
        let grid = a.slot_grid();
        assert!(
            grid[1..grid.len() - 1].iter().all(|g| g.len() == 21 || g.len() == 22),
            "{:?}",
            grid.iter().map(Vec::len).collect::<Vec<_>>()
        );
    }

    #[test]
    fn logical_mapping_skips_the_area() {
        let (_, a) = paper();
        assert_eq!(a.to_physical(0).unwrap(), 0);
        assert_eq!(a.to_physical(a.first() - 1).unwrap(), a.first() - 1);
        assert_eq!(a.to_physical(a.first()).unwrap(), a.end());
        let last = a.logical_capacity() - 1;
        assert_eq!(a.to_physical(last).unwrap(), a.disk_capacity() - 1);
        assert!(matches!(a.to_physical(last + 1), Err(RearrangeError::LogicalOutside { .. })));
        assert_eq!(a.to_logical(a.first()), None);
        assert_eq!(a.to_logical(a.end() - 1), None);
        assert_eq!(a.to_logical(a.end()), Some(a.first()));
        assert_eq!(a.to_logical(a.disk_capacity()), None);
        // Blocks: the one just before the area and the one just after.
        let b = a.first() / 16;
        assert_eq!(a.home_lbn(b - 1).unwrap(), a.first() - 16);
        assert_eq!(a.home_lbn(b).unwrap(), a.end());
        assert_eq!(a.home_block(b).unwrap(), a.end() / 16);
        assert_eq!(a.logical_block_of_home(a.end() / 16), Some(b));
        assert_eq!(a.logical_block_of_home(a.first() / 16), None);
        assert!(a.home_lbn(a.logical_blocks()).is_err());
        assert!(a.home_lbn(u64::MAX).is_err());
        // Slot lookups.
        let s = a.slots()[5];
        assert_eq!(a.slot_at(s.lbn), Some(5));
        assert_eq!(a.slot_containing(s.lbn + 15), Some(5));
        assert_eq!(a.slot_at(s.lbn + 1), None);
        assert_eq!(a.slot_containing(a.first()), None, "hidden but before the first slot");
    }

    #[test]
    fn errors_name_the_parameter() {
        let d = disk("toshiba_mk156f");
        let e = |c: AreaConfig| ReservedArea::new(&d, &c).unwrap_err();
        let base = AreaConfig::default();
        assert_eq!(e(AreaConfig { cylinders: 0, ..base }), RearrangeError::ZeroCylinders);
        let msg = e(AreaConfig { first_cylinder: Some(800), ..base }).to_string();
        assert!(msg.contains("first_cylinder = 800") && msg.contains("815"), "{msg}");
        assert!(matches!(e(AreaConfig { cylinders: 815, ..base }), RearrangeError::AreaDoesNotFit { .. }));
        assert!(matches!(e(AreaConfig { first_cylinder: Some(u32::MAX), ..base }), RearrangeError::AreaDoesNotFit { .. }));
        let msg = e(AreaConfig { block_sectors: 0, ..base }).to_string();
        assert!(msg.contains("block_sectors = 0"), "{msg}");
        let msg = e(AreaConfig { cylinders: 1, block_sectors: 341, ..base }).to_string();
        assert!(msg.contains("block_sectors = 341"), "{msg}");
        let msg = e(AreaConfig { cylinders: 1, table_slots: 22, ..base }).to_string();
        assert!(msg.contains("table_slots = 22") && msg.contains("21 slots"), "{msg}");
        // The last cylinders of a disk whose block_count stops short of them.
        let mut spec = library::get("toshiba_mk156f").unwrap();
        spec.block_count = Some(100 * 340);
        let short = Disk::new(spec).unwrap();
        let r = ReservedArea::new(&short, &AreaConfig { first_cylinder: Some(200), ..base });
        assert!(matches!(r, Err(RearrangeError::AreaPastCapacity { .. })), "{r:?}");
    }

    #[test]
    fn no_table_and_edges() {
        let d = disk("toshiba_mk156f");
        let a = ReservedArea::new(&d, &AreaConfig { table_slots: 0, first_cylinder: Some(0), ..AreaConfig::default() }).unwrap();
        assert_eq!(a.table_lbn(), None);
        assert_eq!(a.first(), 0);
        assert_eq!(a.free_slot_count(), a.slots().len());
        assert_eq!(a.to_physical(0).unwrap(), a.end());
        let a = ReservedArea::new(&d, &AreaConfig { first_cylinder: Some(815 - 48), ..AreaConfig::default() }).unwrap();
        assert_eq!(a.end(), d.capacity());
        assert_eq!(a.to_physical(a.logical_capacity() - 1).unwrap(), a.first() - 1);
        check_slots(&d, &a);
    }

    /// On every built-in disk (zones, spares, slips, serpentine mapping) the band's home LBNs are
    /// exactly the LBNs its tracks hold: one contiguous range.
    #[test]
    fn band_is_contiguous_on_every_library_disk() {
        for name in library::names() {
            let d = disk(name);
            if d.layout().cylinders() <= PAPER_CYLINDERS {
                continue;
            }
            // A banded disk's band must be whole band pairs (256 cylinders on wd_g4_4t), the
            // paper's centred 48 cylinders are refused by name.
            let config = match d.spec().mapping {
                freeblock_disk::Mapping::Banded { band_cylinders } => {
                    let e = ReservedArea::new(&d, &AreaConfig::default()).unwrap_err();
                    assert!(matches!(e, RearrangeError::NotWholeBandPairs { .. }), "{name}: {e}");
                    let pair = 2 * band_cylinders;
                    AreaConfig { cylinders: pair, first_cylinder: Some(d.layout().cylinders() / 2 / pair * pair), ..AreaConfig::default() }
                }
                _ => AreaConfig::default(),
            };
            let a = ReservedArea::new(&d, &config).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut held: Vec<(u64, u64)> = Vec::new();
            let mut scratch = Vec::new();
            for c in a.cylinder_range() {
                for h in 0..d.layout().surfaces() {
                    scratch.clear();
                    d.layout().arc_lbns(c, h, 0, d.layout().sectors_per_track(c), &mut scratch);
                    held.extend(scratch.iter().map(|(r, _)| (r.start, r.end)));
                }
            }
            held.sort_unstable();
            assert!(held.windows(2).all(|w| w[0].1 == w[1].0), "{name}: band LBNs not contiguous");
            assert_eq!(a.band_lbns(), held[0].0..held[held.len() - 1].1, "{name}");
            // No holes: the slots tile the band from its first block boundary.
            let bs = a.block_sectors();
            let first = a.band_lbns().start.div_ceil(bs) * bs;
            assert_eq!(a.slots().len() as u64, (a.band_lbns().end - first) / bs, "{name}");
            assert_eq!(a.slots()[0].lbn, first, "{name}");
            assert!(a.slots().iter().all(|s| s.lbn % bs == 0), "{name}: slots are block-aligned");
            // Just outside the band is outside its cylinders (past spare tracks, on hp_c2247a).
            let l = d.layout();
            assert!(l.lbn_to_pbn(a.band_lbns().start - 1).unwrap().cylinder < a.first_cylinder(), "{name}");
            assert!(l.lbn_to_pbn(a.band_lbns().end).unwrap().cylinder >= a.cylinder_range().end, "{name}");
            check_slots(&d, &a);
        }
    }

    /// A defect on the band remapped to a spare elsewhere leaves a hole no slot covers; a defect
    /// elsewhere remapped into a spare on the band adds nothing to the area.
    #[test]
    fn remapped_defects_leave_holes() {
        let mut spec = library::get("toshiba_mk156f").unwrap();
        spec.sparing = freeblock_disk::Sparing::SectorsPerTrack;
        let z = &mut spec.zones[0];
        z.spares = 2;
        let spt = 34u64;
        let track = |c: u64, h: u64| (c * 10 + h) * spt;
        // On the band (cylinder 400, surface 3, sector 5) → a spare on cylinder 10.
        // On cylinder 10 (sector 7) → a spare on the band (cylinder 401, surface 0, sector 33).
        z.defects = vec![[track(400, 3) + 5, track(10, 0) + 32], [track(10, 1) + 7, track(401, 0) + 33]];
        let d = Disk::new(spec).unwrap();
        let a = ReservedArea::new(&d, &AreaConfig::default()).unwrap();
        let hole = d.layout().pbn_to_lbn(Pbn { cylinder: 10, surface: 0, sector: 32 }).unwrap();
        assert!(a.band_lbns().contains(&hole));
        assert_eq!(a.slot_containing(hole), None, "no slot covers the remapped-out sector");
        let stray = d.layout().pbn_to_lbn(Pbn { cylinder: 401, surface: 0, sector: 33 }).unwrap();
        assert!(!a.contains(stray), "an LBN remapped onto the band stays logical");
        // 48 × 10 × 32 sectors, one missing: the run it splits loses at most one slot.
        let band = a.band_lbns().end - a.band_lbns().start;
        assert_eq!(band, 48 * 10 * 32);
        assert!(a.slots().len() as u64 >= band / 16 - 1);
        check_slots(&d, &a);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn any_area_is_consistent(
            which in 0usize..3,
            cylinders in 1u32..40,
            first in proptest::option::of(0u32..1000),
            block_sectors in 1u64..70,
            table_slots in 0usize..4,
            probes in proptest::collection::vec(any::<u64>(), 8),
        ) {
            let d = disk(["toshiba_mk156f", "hp_c2247a", "dec_rz26"][which]);
            let cfg = AreaConfig { cylinders, first_cylinder: first, block_sectors, table_slots, table_at: if table_slots % 2 == 0 { TablePlace::Start } else { TablePlace::Middle } };
            let Ok(a) = ReservedArea::new(&d, &cfg) else { return Ok(()) };
            prop_assert_eq!(a.first() % block_sectors, 0);
            prop_assert!(a.len() % block_sectors == 0 || a.end() == d.capacity());
            check_slots(&d, &a);
            for p in probes {
                let s = p % a.logical_capacity();
                let phys = a.to_physical(s).unwrap();
                prop_assert!(!a.contains(phys));
                prop_assert_eq!(a.to_logical(phys), Some(s));
                let b = s / block_sectors;
                if let Ok(h) = a.home_lbn(b) {
                    prop_assert!(!a.contains(h) && !a.contains(h + block_sectors - 1));
                    prop_assert_eq!(a.to_logical(h + block_sectors - 1), Some(b * block_sectors + block_sectors - 1));
                    prop_assert_eq!(a.logical_block_of_home(a.home_block(b).unwrap()), Some(b));
                }
            }
        }
    }
}
