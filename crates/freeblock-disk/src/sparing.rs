//! Spare-sector reservation: which physical sectors of a zone hold no LBN.
//!
//! A zone's physical sectors are numbered in *slot* order: track by track in the mapping order
//! ([`crate::spec::Mapping`]), sector 0 to `sectors_per_track - 1` on each track. The layout maps
//! LBNs onto the slots that are not reserved. Reserved slots are the zone's empty front, its spare
//! sectors or tracks (by [`Sparing`] scheme), and slipped sectors.
//!
//! Spares are where defective sectors go: a *slip* removes a sector from the LBN sequence, so every
//! later LBN moves down one slot; a *defect* keeps its LBN but redirects it to a spare slot.

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
    let mut ranges: Vec<SlotRange> = Vec::new();
    if zone.empty_front_sectors > 0 {
        ranges.push((0, zone.empty_front_sectors.min(total)));
    }
    match spec.sparing {
        Sparing::None => {}
        Sparing::Tracks => {
            let n = (spares * spt).min(total);
            ranges.push((total - n, n));
        }
        Sparing::SectorsPerTrack => {
            for t in 0..tracks {
                ranges.push(((t + 1) * spt - spares.min(spt), spares.min(spt)));
            }
        }
        Sparing::SectorsPerCylinder | Sparing::SectorsPerCylinderSlipToEnd => {
            let per_cyl = surfaces * spt;
            for c in 0..cylinders {
                ranges.push(((c + 1) * per_cyl - spares.min(per_cyl), spares.min(per_cyl)));
            }
        }
        Sparing::SectorsPerCylinderAtFront | Sparing::SectorsPerCylinderAtFrontSlipToEnd => {
            let per_cyl = surfaces * spt;
            for c in 0..cylinders {
                ranges.push((c * per_cyl, spares.min(per_cyl)));
            }
        }
        Sparing::SectorsPerRange { range_size } => {
            let per_range = u64::from(range_size) * surfaces * spt;
            let mut start = 0;
            while start < total {
                let end = (start + per_range).min(total);
                let n = spares.min(end - start);
                ranges.push((end - n, n));
                start = end;
            }
        }
        Sparing::SectorsAtEnd | Sparing::SectorsPerZone | Sparing::SectorsPerZoneSlipToEnd => {
            let n = spares.min(total);
            ranges.push((total - n, n));
        }
    }
    for &s in &zone.slips {
        if s < total {
            ranges.push((s, 1));
        }
    }
    normalise(ranges)
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

/// Extra angular offset (in sectors) of a track caused by sparing, added to the track's skew.
/// `track_in_zone` counts tracks from the zone's first, in mapping order.
#[must_use]
pub fn extra_skew_sectors(_spec: &DiskSpec, _zone: &Zone, _track_in_zone: u64) -> f64 {
    0.0
}
