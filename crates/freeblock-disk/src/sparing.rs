//! Spare-sector reservation: which physical sectors of a zone hold no LBN.
//!
//! A zone's physical sectors are numbered in *slot* order: track by track in the mapping order
//! ([`crate::spec::Mapping`]), sector 0 to `sectors_per_track - 1` on each track. The layout maps
//! LBNs onto the slots that are not reserved, in slot order. Reserved slots are spare areas (by
//! [`Sparing`] scheme), slipped sectors, and the zone's empty front.
//!
//! Spares are where defective media goes: a *slip* removes a sector from the LBN sequence, so every
//! later LBN moves up one slot; a *defect* keeps its LBN but redirects it to a spare slot, and the
//! head goes there for it ([`crate::Layout::for_each_media_run`]).
//!
//! The semantics follow DiskSim 4.0's `dm_layout_g1` (the zone capacities agree with its
//! `blksinband` for every scheme):
//!
//! ```text
//!  scheme                          spare area                       a slip in the unit ...
//!  none                  [0]       —                                removes one LBN from the zone
//!  tracks                [1]       last `spares` tracks of the zone uses up one spare track
//!                                  (slips and defects count whole tracks here)
//!  sectors/cylinder      [2]       last `spares` of each cylinder   uses up one of its cylinder's spares
//!  sectors/track         [3]       last `spares` of each track      uses up one of its track's spares
//!  sectors/cyl, slip→end [4]       last `spares` of each cylinder   shifts all later LBNs (zone loses one)
//!  sectors/cyl, at front [5]       first `spares` of each cylinder  uses up one of its cylinder's spares
//!  … at front, slip→end  [6]       first `spares` of each cylinder  shifts all later LBNs
//!  sectors at end        [7]       last `spares` of the zone        shifts all later LBNs
//!  sectors/range         [8]       last `spares` of every whole     uses up one of its range's spares
//!                                  run of `range_size` cylinders    (a partial last range has none)
//!  sectors/zone          [9]       last `spares` of the zone        uses up one of the zone's spares
//!  sectors/zone, slip→end[10]      last `spares` of the zone        shifts all later LBNs
//! ```
//!
//! "Uses up a spare" means the unit's LBNs fill its first `unit size − spares` non-slipped slots
//! (its last ones, for spares at the front). The *empty front* (DiskSim "Empty space at zone
//! front") is counted in LBN positions: the zone's first `empty_front_sectors` slots that would
//! otherwise hold LBNs stay empty.
//!
//! DiskSim also turns each slip before a track into one sector of extra skew for that track when
//! sparing is per cylinder or per track ([`extra_skew_sectors`]).

use crate::spec::{DiskSpec, Sparing, Zone};

/// A run of reserved slots: `(first_slot, count)`, zone-relative.
pub type SlotRange = (u64, u64);

/// The reserved slot ranges of one zone, sorted by start, non-overlapping and merged where
/// adjacent.
#[must_use]
pub fn reserved_ranges(spec: &DiskSpec, zone: &Zone) -> Vec<SlotRange> {
    let spt = u64::from(zone.sectors_per_track);
    let surfaces = u64::from(spec.surfaces);
    let cylinders = u64::from(zone.last_cylinder - zone.first_cylinder + 1);
    let tracks = cylinders * surfaces;
    let total = tracks * spt;
    let spares = u64::from(zone.spares);
    let per_cyl = surfaces * spt;

    // Slipped units: tracks for track sparing, sectors otherwise. Sorted, unique, in range.
    let slip_bound = if spec.sparing == Sparing::Tracks { tracks } else { total };
    let mut slips: Vec<u64> = zone.slips.iter().copied().filter(|&s| s < slip_bound).collect();
    slips.sort_unstable();
    slips.dedup();

    let mut ranges: Vec<SlotRange> = Vec::new();
    // A unit [u0, u1) whose LBNs fill its non-slipped slots except for `spares` spares at the end
    // (or front), slips using those spares up first.
    let consumable_end = |ranges: &mut Vec<SlotRange>, u0: u64, u1: u64, n: u64| {
        let need = n.saturating_sub(count_in(&slips, u0, u1));
        let p = tail_start(&slips, u0, u1, need);
        ranges.push((p, u1 - p));
    };
    let consumable_front = |ranges: &mut Vec<SlotRange>, u0: u64, u1: u64, n: u64| {
        let need = n.saturating_sub(count_in(&slips, u0, u1));
        let p = head_end(&slips, u0, u1, need);
        ranges.push((u0, p - u0));
    };
    match spec.sparing {
        Sparing::None => {}
        Sparing::Tracks => {
            // Work in tracks, then scale to slots.
            let need = spares.saturating_sub(slips.len() as u64);
            let p = tail_start(&slips, 0, tracks, need);
            ranges.push((p * spt, (tracks - p) * spt));
        }
        Sparing::SectorsPerCylinder => {
            for c in 0..cylinders {
                consumable_end(&mut ranges, c * per_cyl, (c + 1) * per_cyl, spares);
            }
        }
        Sparing::SectorsPerTrack => {
            for t in 0..tracks {
                consumable_end(&mut ranges, t * spt, (t + 1) * spt, spares);
            }
        }
        Sparing::SectorsPerCylinderAtFront => {
            for c in 0..cylinders {
                consumable_front(&mut ranges, c * per_cyl, (c + 1) * per_cyl, spares);
            }
        }
        Sparing::SectorsPerCylinderSlipToEnd => {
            let n = spares.min(per_cyl);
            for c in 0..cylinders {
                ranges.push(((c + 1) * per_cyl - n, n));
            }
        }
        Sparing::SectorsPerCylinderAtFrontSlipToEnd => {
            let n = spares.min(per_cyl);
            for c in 0..cylinders {
                ranges.push((c * per_cyl, n));
            }
        }
        Sparing::SectorsPerRange { range_size } => {
            let per_range = u64::from(range_size.max(1)) * per_cyl;
            let whole = total / per_range;
            for r in 0..whole {
                consumable_end(&mut ranges, r * per_range, (r + 1) * per_range, spares);
            }
        }
        Sparing::SectorsPerZone => consumable_end(&mut ranges, 0, total, spares),
        Sparing::SectorsAtEnd | Sparing::SectorsPerZoneSlipToEnd => {
            let n = spares.min(total);
            ranges.push((total - n, n));
        }
    }
    if spec.sparing == Sparing::Tracks {
        ranges.extend(slips.iter().map(|&t| (t * spt, spt)));
    } else {
        ranges.extend(slips.iter().map(|&s| (s, 1)));
    }
    let mut ranges = normalise(ranges);
    let front = empty_front_end(zone, &ranges, total);
    if front > 0 {
        ranges.push((0, front));
        ranges = normalise(ranges);
    }
    ranges
}

/// End of a zone's empty front: the first `empty_front_sectors` slots that would hold LBNs,
/// given the zone's other reserved `ranges` (sorted), and any reserved slots among them.
fn empty_front_end(zone: &Zone, ranges: &[SlotRange], total: u64) -> u64 {
    if zone.empty_front_sectors == 0 {
        return 0;
    }
    let mut p = zone.empty_front_sectors;
    for &(s, len) in ranges {
        if s < p {
            p += len;
        } else {
            break;
        }
    }
    p.min(total)
}

/// The slots `0..n` of a zone's empty front (`n` is 0 without one): reserved, but not spares,
/// so no defect may be remapped there.
#[must_use]
pub fn empty_front(spec: &DiskSpec, zone: &Zone) -> u64 {
    if zone.empty_front_sectors == 0 {
        return 0;
    }
    let without_front = Zone { empty_front_sectors: 0, ..zone.clone() };
    let total = u64::from(zone.last_cylinder - zone.first_cylinder + 1) * u64::from(spec.surfaces) * u64::from(zone.sectors_per_track);
    empty_front_end(zone, &reserved_ranges(spec, &without_front), total)
}

/// Number of sorted `items` in `lo..hi`.
fn count_in(items: &[u64], lo: u64, hi: u64) -> u64 {
    (items.partition_point(|&s| s < hi) - items.partition_point(|&s| s < lo)) as u64
}

/// Start of the last `need` elements of `u0..u1` not in the sorted `slips` (or `u0` if fewer).
fn tail_start(slips: &[u64], u0: u64, u1: u64, need: u64) -> u64 {
    let lo = slips.partition_point(|&s| s < u0);
    let hi = slips.partition_point(|&s| s < u1);
    let mut p = u1.saturating_sub(need).max(u0);
    for &s in slips[lo..hi].iter().rev() {
        if s >= p && p > u0 {
            p -= 1;
        }
    }
    p
}

/// End of the first `need` elements of `u0..u1` not in the sorted `slips` (or `u1` if fewer).
fn head_end(slips: &[u64], u0: u64, u1: u64, need: u64) -> u64 {
    let lo = slips.partition_point(|&s| s < u0);
    let hi = slips.partition_point(|&s| s < u1);
    let mut p = (u0 + need).min(u1);
    for &s in &slips[lo..hi] {
        if s < p && p < u1 {
            p += 1;
        }
    }
    p
}

/// Sorts ranges and merges overlapping or adjacent ones.
fn normalise(mut ranges: Vec<SlotRange>) -> Vec<SlotRange> {
    ranges.retain(|r| r.1 > 0);
    ranges.sort_unstable();
    let mut out: Vec<SlotRange> = Vec::with_capacity(ranges.len());
    for (start, len) in ranges {
        if let Some(last) = out.last_mut() {
            let last_end = last.0 + last.1;
            if start <= last_end {
                last.1 = last.1.max(start + len - last.0);
                continue;
            }
        }
        out.push((start, len));
    }
    out
}

/// Remapped defects of a zone as `(defective_slot, spare_slot)` pairs, sorted by defective slot.
/// With track sparing the spec lists whole tracks; each becomes one pair per sector.
#[must_use]
pub fn remapped_slots(spec: &DiskSpec, zone: &Zone) -> Vec<(u64, u64)> {
    let spt = u64::from(zone.sectors_per_track);
    let mut out: Vec<(u64, u64)> = if spec.sparing == Sparing::Tracks {
        zone.defects.iter().flat_map(|&[d, r]| (0..spt).map(move |j| (d * spt + j, r * spt + j))).collect()
    } else {
        zone.defects.iter().map(|&[d, r]| (d, r)).collect()
    };
    out.sort_unstable();
    out
}

/// Extra angular offset (in sectors) of a track caused by sparing, added to the track's skew.
/// `track_in_zone` counts tracks from the zone's first, in mapping order.
///
/// As in DiskSim, with per-cylinder sparing (schemes 2, 4, 5, 6) every slip in an earlier cylinder
/// of the zone, and with per-track sparing (scheme 3) every slip on an earlier track, pushes the
/// track's first sector one sector further round. Other schemes add nothing.
#[must_use]
pub fn extra_skew_sectors(spec: &DiskSpec, zone: &Zone, track_in_zone: u64) -> f64 {
    SlipSkew::new(spec, zone).map_or(0.0, |s| s.sectors(track_in_zone))
}

/// The skew slips add to a zone's tracks ([`extra_skew_sectors`]), kept as the sorted slips so a
/// track's extra skew is one binary search, with no per-track table.
#[derive(Debug, Clone)]
pub(crate) struct SlipSkew {
    /// Slipped slots, sorted.
    slips: Vec<u64>,
    /// Tracks per sparing unit: 1 (per track) or the surface count (per cylinder).
    unit_tracks: u64,
    /// Sectors per track.
    spt: u64,
}

impl SlipSkew {
    /// `None` when the scheme adds no skew or the zone has no slips.
    pub(crate) fn new(spec: &DiskSpec, zone: &Zone) -> Option<Self> {
        let unit_tracks = match spec.sparing {
            Sparing::SectorsPerCylinder
            | Sparing::SectorsPerCylinderSlipToEnd
            | Sparing::SectorsPerCylinderAtFront
            | Sparing::SectorsPerCylinderAtFrontSlipToEnd => u64::from(spec.surfaces),
            Sparing::SectorsPerTrack => 1,
            _ => return None,
        };
        if zone.slips.is_empty() {
            return None;
        }
        let mut slips = zone.slips.clone();
        slips.sort_unstable();
        Some(Self { slips, unit_tracks, spt: u64::from(zone.sectors_per_track) })
    }

    /// Extra skew of a track, in sectors: the slips before its sparing unit.
    pub(crate) fn sectors(&self, track_in_zone: u64) -> f64 {
        let cutoff = (track_in_zone - track_in_zone % self.unit_tracks) * self.spt;
        self.slips.partition_point(|&s| s < cutoff) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Mapping, SeekModel};

    fn spec(sparing: Sparing, zone: Zone) -> DiskSpec {
        DiskSpec {
            name: "t".into(),
            description: String::new(),
            source: String::new(),
            rpm: 7200.0,
            surfaces: 2,
            sector_bytes: 512,
            block_count: None,
            mapping: Mapping::CylinderMajor,
            sparing,
            zones: vec![zone],
            seek: SeekModel::ToshibaMk156f,
            head_switch_ms: 0.0,
            read_settle_ms: 0.0,
            write_settle_ms: 0.0,
            write_seek: None,
            seek_asymmetry_ms: 0.0,
            controller: Default::default(),
            cache: Default::default(),
            write_cache: None,
            power: None,
        }
    }

    /// 4 cylinders × 2 surfaces × 10 sectors = 80 slots.
    fn zone(spares: u32, slips: Vec<u64>, empty: u64) -> Zone {
        Zone {
            first_cylinder: 0,
            last_cylinder: 3,
            sectors_per_track: 10,
            first_sector_offset: 0.0,
            empty_front_sectors: empty,
            track_skew: 0.0,
            cylinder_skew: 0.0,
            band_pair_skew: 0.0,
            spares,
            slips,
            defects: vec![],
        }
    }

    fn held(sparing: Sparing, z: Zone) -> u64 {
        let s = spec(sparing, z.clone());
        80 - reserved_ranges(&s, &z).iter().map(|r| r.1).sum::<u64>()
    }

    #[test]
    fn capacities_follow_disksim() {
        // blksinband for each scheme: total − empty − (scheme term).
        assert_eq!(held(Sparing::None, zone(3, vec![], 5)), 75);
        assert_eq!(held(Sparing::Tracks, zone(2, vec![1], 5)), 80 - 20 - 5);
        assert_eq!(held(Sparing::SectorsPerCylinder, zone(2, vec![3, 25], 0)), 80 - 8);
        assert_eq!(held(Sparing::SectorsPerTrack, zone(1, vec![3], 7)), 80 - 8 - 7);
        assert_eq!(held(Sparing::SectorsPerCylinderSlipToEnd, zone(2, vec![3, 25], 0)), 80 - 8 - 2);
        assert_eq!(held(Sparing::SectorsPerCylinderAtFront, zone(2, vec![3, 25], 0)), 80 - 8);
        assert_eq!(held(Sparing::SectorsPerCylinderAtFrontSlipToEnd, zone(2, vec![3, 25], 0)), 80 - 8 - 2);
        assert_eq!(held(Sparing::SectorsAtEnd, zone(0, vec![3, 25], 0)), 80 - 2);
        // Ranges of 3 cylinders: one whole range (60 slots) and a partial one without spares.
        assert_eq!(held(Sparing::SectorsPerRange { range_size: 3 }, zone(4, vec![10], 0)), 80 - 4);
        assert_eq!(held(Sparing::SectorsPerZone, zone(4, vec![10, 11], 0)), 80 - 4);
        assert_eq!(held(Sparing::SectorsPerZoneSlipToEnd, zone(4, vec![10, 11], 0)), 80 - 6);
    }

    #[test]
    fn slips_use_up_the_units_spares() {
        let z = zone(2, vec![3], 0);
        let s = spec(Sparing::SectorsPerCylinder, z.clone());
        // Cylinder 0 (slots 0..20): slot 3 slipped, one spare left at slot 19.
        assert_eq!(reserved_ranges(&s, &z), vec![(3, 1), (19, 1), (38, 2), (58, 2), (78, 2)]);
    }

    #[test]
    fn empty_front_counts_lbn_positions() {
        // One spare at the end of each track: 9 LBNs a track; 12 empty = track 0 and 3 of track 1.
        let z = zone(1, vec![], 12);
        let s = spec(Sparing::SectorsPerTrack, z.clone());
        let r = reserved_ranges(&s, &z);
        assert_eq!(r[0], (0, 13));
        assert_eq!(r[1], (19, 1));
    }

    #[test]
    fn track_sparing_slips_whole_tracks() {
        let mut z = zone(2, vec![1], 0);
        z.defects = vec![[2, 7]];
        let s = spec(Sparing::Tracks, z.clone());
        assert_eq!(reserved_ranges(&s, &z), vec![(10, 10), (70, 10)]);
        let m = remapped_slots(&s, &z);
        assert_eq!(m.len(), 10);
        assert_eq!(m[0], (20, 70));
    }

    #[test]
    fn slips_add_skew_for_per_cylinder_sparing() {
        let z = zone(2, vec![3, 25], 0);
        let s = spec(Sparing::SectorsPerCylinder, z.clone());
        assert_eq!(extra_skew_sectors(&s, &z, 1), 0.0);
        assert_eq!(extra_skew_sectors(&s, &z, 2), 1.0);
        assert_eq!(extra_skew_sectors(&s, &z, 4), 2.0);
        let s = spec(Sparing::SectorsPerZone, z.clone());
        assert_eq!(extra_skew_sectors(&s, &z, 4), 0.0);
    }
}
