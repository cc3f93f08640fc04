//! Geometry and the LBN ⇄ physical mapping.
//!
//! ```text
//!   cylinder ──► a set of tracks at one arm position, one per surface
//!   track    ──► (cylinder, surface): `sectors_per_track` sectors around the platter
//!   zone     ──► a run of cylinders with the same sectors per track
//!   slot     ──► a zone-relative physical sector number, track by track in mapping order
//! ```
//!
//! The mapping order is one of [`Mapping`]'s: cylinder-major, serpentine by cylinder, or banded
//! serpentine ([`crate::bands`], whose own skew rule replaces the one below).
//!
//! Each zone lists its *reserved* slots (empty front, spares, slips; see [`crate::sparing`]); LBNs
//! fill the remaining slots in order. Both directions are a binary search over the zone table and
//! then over the zone's reserved ranges, so a lookup costs O(log zones + log ranges).
//!
//! Every physical sector has an angle. Track `(c, h)` of a zone starts at an angular offset of
//! `first_sector_offset + track_skew·(track switches so far) + cylinder_skew·(cylinder switches
//! so far)` sectors, counted from the zone's first track, exactly as DiskSim's g1 layout does; sector
//! `j` of the track then sits at `(j + offset) mod sectors_per_track`. Positions are kept as
//! picoseconds into the revolution ([`RotPos`]) so that time and angle share one unit.
//!
//! A request's sectors are cut into runs of one track each, two ways:
//!
//! | runs | a remapped defect's LBN counts at | used for |
//! |---|---|---|
//! | track runs ([`Layout::for_each_track_run`]) | its defective slot, so runs stay arithmetic | per-track bookkeeping (with [`Layout::for_each_remapped_lbn`] to move the few remapped LBNs) |
//! | media runs ([`Layout::for_each_media_run`]) | its spare, a run of its own between the run before and the run after | timing: the order the head passes the sectors in |

use crate::bands::Bands;
use crate::error::{AccessError, SpecError};
use crate::sparing::{self, SlipSkew, SlotRange};
use crate::spec::{DiskSpec, Mapping};

/// A physical sector address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pbn {
    /// Cylinder, 0 = outermost.
    pub cylinder: u32,
    /// Surface (head).
    pub surface: u32,
    /// Physical sector on the track, 0-based, in rotational order from the track's index.
    pub sector: u32,
}

/// A position on the rotation, in picoseconds after the spindle's index mark (`0..rev_ps`).
pub type RotPos = u64;

/// Where the sectors of one track sit on the rotation ([`Layout::track_angles`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackAngles {
    /// Angular offset of sector 0, in sectors, `0..spt`.
    offset: f64,
    /// Sectors per track.
    pub spt: u32,
    rev_ps: u64,
}

impl TrackAngles {
    /// Rotational position at which physical sector `sector` starts passing under the head.
    #[inline]
    #[must_use]
    pub fn sector_start(&self, sector: u32) -> RotPos {
        let spt = f64::from(self.spt);
        let mut x = f64::from(sector) + self.offset;
        // The same value as `rem_euclid` (exact for one subtraction), without the division.
        if x >= spt {
            x = if x < 2.0 * spt { x - spt } else { x.rem_euclid(spt) };
        }
        ((x / spt * self.rev_ps as f64) as u64).min(self.rev_ps - 1)
    }
}

/// One track as [`Layout::track_summary`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackSummary {
    /// Sectors per track (0 for a cylinder that does not exist).
    pub sectors_per_track: u32,
    /// Rotational position at which physical sector 0 starts passing under the head.
    pub sector0_pos: RotPos,
    /// The LBN of sector 0 when the track's sectors hold consecutive LBNs
    /// ([`Layout::track_first_lbn`]).
    pub first_lbn: Option<u64>,
}

/// One zone, precomputed for lookups.
#[derive(Debug, Clone)]
pub(crate) struct ZoneMap {
    pub first_cylinder: u32,
    pub last_cylinder: u32,
    pub spt: u32,
    pub first_lbn: u64,
    pub lbn_count: u64,
    /// Reserved slot ranges, sorted.
    reserved: Vec<SlotRange>,
    /// `reserved_before[i]` = total reserved slots in `reserved[..i]`.
    reserved_before: Vec<u64>,
    /// Remapped defects: `(defective unit, spare unit)` (units of `remap_unit` slots), sorted.
    remap: Vec<(u64, u64)>,
    /// The same pairs sorted by spare unit, for the reverse lookup.
    remap_by_spare: Vec<(u64, u64)>,
    /// Slots per remapped unit: a track's sectors under track sparing, else 1. Kept per unit so
    /// a remapped track costs one entry, not one per sector.
    remap_unit: u64,
    first_offset: f64,
    track_skew: f64,
    cylinder_skew: f64,
    band_pair_skew: f64,
    /// Extra skew from slips, when the sparing scheme adds any.
    slip_skew: Option<SlipSkew>,
}

impl ZoneMap {
    /// Number of reserved slots with index `< slot`.
    fn reserved_below(&self, slot: u64) -> u64 {
        let i = self.reserved.partition_point(|&(s, _)| s < slot);
        if i == 0 {
            return 0;
        }
        let (s, len) = self.reserved[i - 1];
        self.reserved_before[i - 1] + len.min(slot - s)
    }

    fn is_reserved(&self, slot: u64) -> bool {
        let i = self.reserved.partition_point(|&(s, _)| s <= slot);
        i > 0 && {
            let (s, len) = self.reserved[i - 1];
            slot < s + len
        }
    }

    /// Slot holding the zone-relative logical index `k` (before defect remapping).
    fn slot_of(&self, k: u64) -> u64 {
        self.slot_and_ranges_before(k).0
    }

    /// [`ZoneMap::slot_of`], and the number of reserved ranges that lie before that slot (the
    /// next range, if any, starts after it).
    fn slot_and_ranges_before(&self, k: u64) -> (u64, usize) {
        // Ranges whose logical start (start - reserved before them) is ≤ k lie before our slot.
        let mut lo = 0usize;
        let mut hi = self.reserved.len();
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.reserved[mid].0 - self.reserved_before[mid] <= k {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let before = if lo == 0 { 0 } else { self.reserved_before[lo - 1] + self.reserved[lo - 1].1 };
        (k + before, lo)
    }
}

/// The LBN ⇄ physical mapping of one disk.
#[derive(Debug, Clone)]
pub struct Layout {
    pub(crate) zones: Vec<ZoneMap>,
    /// Each zone's last cylinder and its LBNs' end, apart from the zones so that the searches
    /// for a cylinder's or an LBN's zone read a few cache lines, not every zone's record.
    zone_last_cylinders: Vec<u32>,
    zone_lbn_ends: Vec<u64>,
    surfaces: u32,
    capacity: u64,
    mapping: Mapping,
    /// Picoseconds per revolution.
    rev_ps: u64,
    /// Some zone remaps a defect to another sector ([`Layout::for_each_media_run`] then splits
    /// runs; without one it is [`Layout::for_each_track_run`]).
    remaps: bool,
}

/// Sectors of one request on one track: the head passes over slots `first..first+count` of that
/// track (reserved slots in between included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackRun {
    /// Cylinder of the track.
    pub cylinder: u32,
    /// Surface of the track.
    pub surface: u32,
    /// First physical sector of the run.
    pub first_sector: u32,
    /// Number of physical sectors passed over.
    pub sectors: u32,
    /// Number of LBNs served by the run.
    pub lbns: u64,
    /// Sectors per track of this track.
    pub sectors_per_track: u32,
}

impl Layout {
    /// Builds the mapping from a validated spec.
    ///
    /// # Errors
    /// [`SpecError::Invalid`] when `block_count` exceeds what the zones hold, or a remapped
    /// defect is not an LBN's sector or its spare is not a spare sector.
    pub fn new(spec: &DiskSpec, rev_ps: u64) -> Result<Self, SpecError> {
        let mut zones = Vec::with_capacity(spec.zones.len());
        let mut next_lbn = 0u64;
        let surfaces = u64::from(spec.surfaces);
        for (zone_index, z) in spec.zones.iter().enumerate() {
            let spt = u64::from(z.sectors_per_track);
            let tracks = u64::from(z.last_cylinder - z.first_cylinder + 1) * surfaces;
            let reserved = sparing::reserved_ranges(spec, z);
            let mut reserved_before = Vec::with_capacity(reserved.len());
            let mut acc = 0;
            for &(_, len) in &reserved {
                reserved_before.push(acc);
                acc += len;
            }
            let lbn_count = tracks * spt - acc;
            let remap_unit = if spec.sparing == crate::spec::Sparing::Tracks { spt } else { 1 };
            let mut remap: Vec<(u64, u64)> = z.defects.iter().filter(|[d, r]| d != r).map(|&[d, r]| (d, r)).collect();
            remap.sort_unstable();
            let mut remap_by_spare: Vec<(u64, u64)> = remap.iter().map(|&(d, r)| (r, d)).collect();
            remap_by_spare.sort_unstable();
            let zone = ZoneMap {
                first_cylinder: z.first_cylinder,
                last_cylinder: z.last_cylinder,
                spt: z.sectors_per_track,
                first_lbn: next_lbn,
                lbn_count,
                reserved,
                reserved_before,
                remap,
                remap_by_spare,
                remap_unit,
                first_offset: z.first_sector_offset,
                track_skew: z.track_skew,
                cylinder_skew: z.cylinder_skew,
                band_pair_skew: z.band_pair_skew,
                slip_skew: SlipSkew::new(spec, z),
            };
            check_defects(spec, zone_index, &zone)?;
            zones.push(zone);
            next_lbn += lbn_count;
        }
        let capacity = match spec.block_count {
            Some(n) if n > next_lbn => {
                return Err(SpecError::Invalid {
                    origin: String::new(),
                    field: "block_count".into(),
                    message: format!("{n} sectors exceeds the {next_lbn} the zones hold"),
                })
            }
            Some(n) => n,
            None => next_lbn,
        };
        if capacity == 0 {
            return Err(SpecError::Invalid {
                origin: String::new(),
                field: "zones".into(),
                message: "the zones hold no LBNs (every sector is spare, slipped or empty)".into(),
            });
        }
        let remaps = zones.iter().any(|z| !z.remap.is_empty());
        let zone_last_cylinders = zones.iter().map(|z| z.last_cylinder).collect();
        let zone_lbn_ends = zones.iter().map(|z| z.first_lbn + z.lbn_count).collect();
        Ok(Self { zones, zone_last_cylinders, zone_lbn_ends, surfaces: spec.surfaces, capacity, mapping: spec.mapping, rev_ps, remaps })
    }

    /// Number of addressable sectors (LBNs `0..capacity`).
    #[must_use]
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Number of surfaces.
    #[must_use]
    pub fn surfaces(&self) -> u32 {
        self.surfaces
    }

    /// Number of cylinders.
    #[must_use]
    pub fn cylinders(&self) -> u32 {
        self.zones.last().map_or(0, |z| z.last_cylinder + 1)
    }

    /// Sectors per track at `cylinder` (0 if the cylinder does not exist).
    #[must_use]
    pub fn sectors_per_track(&self, cylinder: u32) -> u32 {
        self.zone_of_cylinder(cylinder).map_or(0, |z| self.zones[z].spt)
    }

    /// Index of the zone holding `cylinder`.
    pub(crate) fn zone_of_cylinder(&self, cylinder: u32) -> Option<usize> {
        let i = self.zone_last_cylinders.partition_point(|&last| last < cylinder);
        (i < self.zones.len() && self.zones[i].first_cylinder <= cylinder).then_some(i)
    }

    fn zone_of_lbn(&self, lbn: u64) -> usize {
        self.zone_lbn_ends.partition_point(|&end| end <= lbn)
    }

    /// Zone-relative track index (mapping order) of `(cylinder, surface)`.
    fn track_in_zone(&self, z: &ZoneMap, cylinder: u32, surface: u32) -> u64 {
        if let Mapping::Banded { band_cylinders } = self.mapping {
            return Bands { band: band_cylinders, surfaces: self.surfaces }.track_index(cylinder - z.first_cylinder, surface);
        }
        let c = u64::from(cylinder - z.first_cylinder);
        let h = match self.mapping {
            // DiskSim mapping scheme 1: parity counted from the zone's first cylinder.
            Mapping::Serpentine if (cylinder - z.first_cylinder) % 2 == 1 => self.surfaces - 1 - surface,
            _ => surface,
        };
        c * u64::from(self.surfaces) + u64::from(h)
    }

    fn track_at(&self, z: &ZoneMap, track_in_zone: u64) -> (u32, u32) {
        if let Mapping::Banded { band_cylinders } = self.mapping {
            let (c, surface) = Bands { band: band_cylinders, surfaces: self.surfaces }.track_at(track_in_zone);
            return (z.first_cylinder + c, surface);
        }
        let s = u64::from(self.surfaces);
        let cylinder = z.first_cylinder + (track_in_zone / s) as u32;
        let h = (track_in_zone % s) as u32;
        let surface = match self.mapping {
            Mapping::Serpentine if (cylinder - z.first_cylinder) % 2 == 1 => self.surfaces - 1 - h,
            _ => h,
        };
        (cylinder, surface)
    }

    /// The physical sector holding `lbn`.
    ///
    /// # Errors
    /// [`AccessError::OutOfRange`] for an LBN at or past the capacity.
    pub fn lbn_to_pbn(&self, lbn: u64) -> Result<Pbn, AccessError> {
        if lbn >= self.capacity {
            return Err(AccessError::OutOfRange { lbn, end: lbn + 1, capacity: self.capacity });
        }
        let zi = self.zone_of_lbn(lbn);
        let z = &self.zones[zi];
        let mut slot = z.slot_of(lbn - z.first_lbn);
        if !z.remap.is_empty() {
            let (unit, within) = (slot / z.remap_unit, slot % z.remap_unit);
            if let Ok(i) = z.remap.binary_search_by_key(&unit, |r| r.0) {
                slot = z.remap[i].1 * z.remap_unit + within;
            }
        }
        Ok(self.slot_to_pbn(z, slot))
    }

    /// Calls `f(lbn, counted, actual)` for each LBN of `lbn..end` that a remapped defect moved:
    /// `counted` is the (cylinder, surface) of the track its slot lies on — where
    /// [`Layout::for_each_track_run`] counts it — and `actual` the track of the spare that holds
    /// it. Track runs follow slots so that they stay arithmetic; a caller keeping per-track
    /// totals of wanted LBNs moves these few from `counted` to `actual` (real drives have a
    /// handful of defects, so this walks the zones' remap lists, not the range).
    pub fn for_each_remapped_lbn(&self, lbn: u64, end: u64, mut f: impl FnMut(u64, (u32, u32), (u32, u32))) {
        let spt_track = |z: &ZoneMap, slot: u64| self.track_at(z, slot / u64::from(z.spt));
        self.visit_remapped(lbn, end, |z, l, slot, spare_slot| {
            let (counted, actual) = (spt_track(z, slot), spt_track(z, spare_slot));
            if counted != actual {
                f(l, counted, actual);
            }
        });
    }

    /// Calls `f(zone, lbn, slot, spare slot)` for each LBN of `lbn..end` that a remapped defect
    /// moved, zone by zone in the order of the zones' remap lists.
    fn visit_remapped(&self, lbn: u64, end: u64, mut f: impl FnMut(&ZoneMap, u64, u64, u64)) {
        for z in self.zones.iter().filter(|z| !z.remap.is_empty() && z.first_lbn < end && lbn < z.first_lbn + z.lbn_count) {
            for &(defective, spare) in &z.remap {
                for within in 0..z.remap_unit {
                    let slot = defective * z.remap_unit + within;
                    if z.is_reserved(slot) {
                        continue;
                    }
                    let l = z.first_lbn + slot - z.reserved_below(slot);
                    if l >= lbn && l < end && l < z.first_lbn + z.lbn_count {
                        f(z, l, slot, spare * z.remap_unit + within);
                    }
                }
            }
        }
    }

    fn slot_to_pbn(&self, z: &ZoneMap, slot: u64) -> Pbn {
        let spt = u64::from(z.spt);
        let (cylinder, surface) = self.track_at(z, slot / spt);
        Pbn { cylinder, surface, sector: (slot % spt) as u32 }
    }

    /// The LBN stored at a physical sector, or `None` for a spare, slipped, empty or out-of-range
    /// sector.
    #[must_use]
    pub fn pbn_to_lbn(&self, pbn: Pbn) -> Option<u64> {
        let zi = self.zone_of_cylinder(pbn.cylinder)?;
        let z = &self.zones[zi];
        if pbn.surface >= self.surfaces || pbn.sector >= z.spt {
            return None;
        }
        let mut slot = self.track_in_zone(z, pbn.cylinder, pbn.surface) * u64::from(z.spt) + u64::from(pbn.sector);
        if !z.remap.is_empty() {
            let (unit, within) = (slot / z.remap_unit, slot % z.remap_unit);
            if let Ok(i) = z.remap_by_spare.binary_search_by_key(&unit, |r| r.0) {
                slot = z.remap_by_spare[i].1 * z.remap_unit + within;
            } else if z.remap.binary_search_by_key(&unit, |r| r.0).is_ok() {
                return None;
            }
        }
        if z.is_reserved(slot) {
            return None;
        }
        let lbn = z.first_lbn + slot - z.reserved_below(slot);
        (lbn < self.capacity).then_some(lbn)
    }

    /// The LBN of sector 0 of track `(cylinder, surface)` when the track's sectors hold
    /// consecutive LBNs, sector `k` holding that LBN + `k`: no spare, slipped, empty or remapped
    /// sector on it. `None` otherwise (then ask [`Layout::pbn_to_lbn`] sector by sector). One zone
    /// lookup, where checking the first and last sectors takes two.
    #[must_use]
    pub fn track_first_lbn(&self, cylinder: u32, surface: u32) -> Option<u64> {
        self.first_lbn_in_zone(&self.zones[self.zone_of_cylinder(cylinder)?], cylinder, surface)
    }

    /// [`Layout::track_first_lbn`] for a track of zone `z`.
    fn first_lbn_in_zone(&self, z: &ZoneMap, cylinder: u32, surface: u32) -> Option<u64> {
        if surface >= self.surfaces {
            return None;
        }
        let spt = u64::from(z.spt);
        let first_slot = self.track_in_zone(z, cylinder, surface) * spt;
        let end_slot = first_slot + spt;
        if z.reserved_below(end_slot) != z.reserved_below(first_slot) {
            return None;
        }
        if !z.remap.is_empty() {
            let units = first_slot / z.remap_unit..=(end_slot - 1) / z.remap_unit;
            let touches = |list: &[(u64, u64)]| {
                let i = list.partition_point(|r| r.0 < *units.start());
                i < list.len() && list[i].0 <= *units.end()
            };
            if touches(&z.remap) || touches(&z.remap_by_spare) {
                return None;
            }
        }
        let lbn = z.first_lbn + first_slot - z.reserved_below(first_slot);
        (lbn + spt <= self.capacity).then_some(lbn)
    }

    /// What the on-disk cache model asks of a track it moves to, with one zone lookup where
    /// asking [`Layout::sectors_per_track`], [`Layout::sector_start`] of sector 0 and
    /// [`Layout::track_first_lbn`] in turn takes three; the same values those give.
    #[must_use]
    pub fn track_summary(&self, cylinder: u32, surface: u32) -> TrackSummary {
        let Some(zi) = self.zone_of_cylinder(cylinder) else { return TrackSummary { sectors_per_track: 0, sector0_pos: 0, first_lbn: None } };
        let z = &self.zones[zi];
        let angles = TrackAngles { offset: self.track_offset_sectors(z, cylinder, surface), spt: z.spt, rev_ps: self.rev_ps };
        TrackSummary { sectors_per_track: z.spt, sector0_pos: angles.sector_start(0), first_lbn: self.first_lbn_in_zone(z, cylinder, surface) }
    }

    /// The sector holding `lbn` and its track's [`Layout::track_summary`]: the same values as
    /// [`Layout::lbn_to_pbn`] followed by `track_summary`, with one zone lookup and one search of
    /// the zone's reserved ranges where those take two and four (the on-disk cache model asks
    /// this for every request).
    ///
    /// # Errors
    /// [`AccessError::OutOfRange`] for an LBN at or past the capacity.
    pub fn lbn_track(&self, lbn: u64) -> Result<(Pbn, TrackSummary), AccessError> {
        if lbn >= self.capacity {
            return Err(AccessError::OutOfRange { lbn, end: lbn + 1, capacity: self.capacity });
        }
        let z = &self.zones[self.zone_of_lbn(lbn)];
        if !z.remap.is_empty() {
            let pbn = self.lbn_to_pbn(lbn)?;
            return Ok((pbn, self.track_summary(pbn.cylinder, pbn.surface)));
        }
        let (slot, ranges_before) = z.slot_and_ranges_before(lbn - z.first_lbn);
        let pbn = self.slot_to_pbn(z, slot);
        let angles = TrackAngles { offset: self.track_offset_sectors(z, pbn.cylinder, pbn.surface), spt: z.spt, rev_ps: self.rev_ps };
        // The track's slots hold one run of LBNs when no reserved range reaches into them: the
        // ranges before the slot end by the track's first slot, the next starts past its last.
        let spt = u64::from(z.spt);
        let first_slot = slot / spt * spt;
        let clear_before = ranges_before == 0 || {
            let (start, len) = z.reserved[ranges_before - 1];
            start + len <= first_slot
        };
        let clear_after = z.reserved.get(ranges_before).is_none_or(|&(start, _)| start >= first_slot + spt);
        let first_lbn = (clear_before && clear_after)
            .then(|| lbn - (slot - first_slot))
            .filter(|&first| first + spt <= self.capacity);
        Ok((pbn, TrackSummary { sectors_per_track: z.spt, sector0_pos: angles.sector_start(0), first_lbn }))
    }

    /// Angular offset of physical sector 0 of a track, in sectors (fractional, `0..spt`).
    fn track_offset_sectors(&self, z: &ZoneMap, cylinder: u32, surface: u32) -> f64 {
        let t = self.track_in_zone(z, cylinder, surface);
        if let Mapping::Banded { band_cylinders } = self.mapping {
            let place = Bands { band: band_cylinders, surfaces: self.surfaces }.place(t);
            let off = z.first_offset + z.track_skew * f64::from(place.step) + z.band_pair_skew * place.pair as f64;
            return rem_whole(off, z.spt);
        }
        let c = f64::from(cylinder - z.first_cylinder);
        let switches_in_cyl = f64::from(self.surfaces - 1) * c + (t % u64::from(self.surfaces)) as f64;
        let mut off = z.first_offset + z.track_skew * switches_in_cyl + z.cylinder_skew * c;
        if let Some(skew) = &z.slip_skew {
            off += skew.sectors(t);
        }
        rem_whole(off, z.spt)
    }

    /// Rotational position at which physical sector `sector` of track `(cylinder, surface)`
    /// starts passing under the head.
    #[must_use]
    pub fn sector_start(&self, cylinder: u32, surface: u32, sector: u32) -> RotPos {
        self.track_angles(cylinder, surface).map_or(0, |a| a.sector_start(sector))
    }

    /// The angles of one track's sectors, looked up once for many [`TrackAngles::sector_start`]
    /// calls. `None` for a cylinder that does not exist.
    #[must_use]
    pub fn track_angles(&self, cylinder: u32, surface: u32) -> Option<TrackAngles> {
        let z = &self.zones[self.zone_of_cylinder(cylinder)?];
        Some(TrackAngles { offset: self.track_offset_sectors(z, cylinder, surface), spt: z.spt, rev_ps: self.rev_ps })
    }

    /// The angle of a physical sector's start as a fraction of a revolution, `0.0..1.0`.
    #[must_use]
    pub fn sector_angle(&self, pbn: Pbn) -> f64 {
        self.sector_start(pbn.cylinder, pbn.surface, pbn.sector) as f64 / self.rev_ps as f64
    }

    /// Splits `lbn..lbn+count` into the track runs the head must pass over, in LBN order.
    ///
    /// # Errors
    /// [`AccessError::Empty`] for `count == 0`, [`AccessError::OutOfRange`] past the capacity.
    pub fn track_runs(&self, lbn: u64, count: u64, out: &mut Vec<TrackRun>) -> Result<(), AccessError> {
        out.clear();
        self.for_each_track_run(lbn, count, |run| out.push(run))
    }

    /// Calls `f` with each track run of `lbn..lbn+count` in LBN order, without collecting them
    /// (a whole multi-terabyte disk is millions of runs).
    ///
    /// # Errors
    /// As [`Layout::track_runs`]; `f` is not called then.
    pub fn for_each_track_run(&self, lbn: u64, count: u64, mut f: impl FnMut(TrackRun)) -> Result<(), AccessError> {
        let end = self.request_end(lbn, count)?;
        let mut cur = lbn;
        while cur < end {
            let zi = self.zone_of_lbn(cur);
            let z = &self.zones[zi];
            let spt = u64::from(z.spt);
            let k = cur - z.first_lbn;
            let slot = z.slot_of(k);
            let track = slot / spt;
            let track_end_slot = (track + 1) * spt;
            // LBNs in slots below the track's end.
            let lbns_below_end = track_end_slot - z.reserved_below(track_end_slot);
            let run_end = (z.first_lbn + lbns_below_end).min(end);
            let n = run_end - cur;
            let last_slot = z.slot_of(run_end - 1 - z.first_lbn);
            let (cylinder, surface) = self.track_at(z, track);
            f(TrackRun {
                cylinder,
                surface,
                first_sector: (slot % spt) as u32,
                sectors: (last_slot - slot + 1) as u32,
                lbns: n,
                sectors_per_track: z.spt,
            });
            cur = run_end;
        }
        Ok(())
    }

    /// The end of `lbn..lbn+count`, or the error for an empty or out-of-range request.
    fn request_end(&self, lbn: u64, count: u64) -> Result<u64, AccessError> {
        if count == 0 {
            return Err(AccessError::Empty { lbn });
        }
        lbn.checked_add(count).filter(|&e| e <= self.capacity).ok_or(AccessError::OutOfRange {
            lbn,
            end: lbn.saturating_add(count),
            capacity: self.capacity,
        })
    }

    /// Whether some zone stores a defective sector's LBN in a spare elsewhere.
    #[must_use]
    pub fn has_remapped_defects(&self) -> bool {
        self.remaps
    }

    /// Calls `f` with the track runs the head passes over to read or write `lbn..lbn+count`, in
    /// the order it passes them. Without remapped defects these are [`Layout::for_each_track_run`]'s.
    /// With them, a run stops before a remapped LBN, the remapped LBNs (consecutive ones whose
    /// spares are consecutive sectors of one track together) are a run of their own on the
    /// spare's track, and the next run starts at the LBN after them, where its slot is:
    ///
    /// ```text
    ///  slots of one track   …  l-2  l-1  [defect]  l+1  l+2  …  [spare: l]
    ///  runs                 ─────────┘  ① to the spare, 1 sector ② back to l+1 ──────
    /// ```
    ///
    /// So the spare costs what going there and back costs: a revolution when it is on the same
    /// track, a head switch or seek each way and the rotation to it when it is not (as DiskSim
    /// 4.0's controller does: at the defective sector it accesses the spare, then seeks back).
    ///
    /// # Errors
    /// As [`Layout::track_runs`]; `f` is not called then.
    pub fn for_each_media_run(&self, lbn: u64, count: u64, mut f: impl FnMut(TrackRun)) -> Result<(), AccessError> {
        if !self.remaps {
            return self.for_each_track_run(lbn, count, f);
        }
        let end = self.request_end(lbn, count)?;
        let moved = self.remapped_lbns(lbn, end);
        let mut cur = lbn;
        let mut i = 0;
        while cur < end {
            let stop = moved.get(i).map_or(end, |m| m.0);
            if cur < stop {
                self.for_each_track_run(cur, stop - cur, &mut f)?;
                cur = stop;
                continue;
            }
            let (first, at, spt) = moved[i];
            let mut n = 1u32;
            while let Some(&(l, p, _)) = moved.get(i + n as usize) {
                if l != first + u64::from(n) || (p.cylinder, p.surface) != (at.cylinder, at.surface) || p.sector != at.sector + n {
                    break;
                }
                n += 1;
            }
            f(TrackRun { cylinder: at.cylinder, surface: at.surface, first_sector: at.sector, sectors: n, lbns: u64::from(n), sectors_per_track: spt });
            cur = first + u64::from(n);
            i += n as usize;
        }
        Ok(())
    }

    /// The LBNs of `lbn..end` that a defect moved to another sector: `(lbn, spare, sectors per
    /// track)`, by LBN.
    fn remapped_lbns(&self, lbn: u64, end: u64) -> Vec<(u64, Pbn, u32)> {
        let mut out = Vec::new();
        self.visit_remapped(lbn, end, |z, l, _, spare_slot| out.push((l, self.slot_to_pbn(z, spare_slot), z.spt)));
        out.sort_unstable_by_key(|m| m.0);
        out
    }

    /// The LBNs stored in the `count` physical sectors of track `(cylinder, surface)` that pass
    /// under the head from sector `first` on (wrapping round past the track's last sector;
    /// `count` is capped at a full track). Appends `(lbns, position)` pieces to `out`: the piece's
    /// first LBN sits `position` sectors after `first`, and the rest follow it sector by sector.
    /// Spare, slipped and empty sectors hold no LBN and split pieces; remapped defects are looked
    /// up one by one.
    pub fn arc_lbns(&self, cylinder: u32, surface: u32, first: u32, count: u32, out: &mut Vec<(std::ops::Range<u64>, u32)>) {
        let Some(zi) = self.zone_of_cylinder(cylinder) else { return };
        let z = &self.zones[zi];
        if surface >= self.surfaces || count == 0 {
            return;
        }
        let spt = z.spt;
        let count = count.min(spt);
        let base = self.track_in_zone(z, cylinder, surface) * u64::from(spt);
        let first = first % spt;
        let pieces = if first + count <= spt { [(first, first + count, 0), (0, 0, 0)] } else { [(first, spt, 0), (0, first + count - spt, spt - first)] };
        for (a, b, position) in pieces {
            if a >= b {
                continue;
            }
            let (s0, s1) = (base + u64::from(a), base + u64::from(b));
            if z.remap.is_empty() {
                self.slot_lbns(z, s0, s1, position, out);
            } else {
                for sector in a..b {
                    if let Some(l) = self.pbn_to_lbn(Pbn { cylinder, surface, sector }) {
                        push_piece(out, l..l + 1, position + sector - a);
                    }
                }
            }
        }
    }

    /// LBN pieces held by zone slots `s0..s1` (no remapped defects in the zone); slot `s0` is
    /// `position` sectors into the arc.
    fn slot_lbns(&self, z: &ZoneMap, s0: u64, s1: u64, position: u32, out: &mut Vec<(std::ops::Range<u64>, u32)>) {
        let lbn_of = |slot: u64| z.first_lbn + slot - z.reserved_below(slot);
        let mut cur = s0;
        let mut i = z.reserved.partition_point(|&(s, len)| s + len <= s0);
        while cur < s1 {
            let (next_reserved, len) = z.reserved.get(i).copied().unwrap_or((u64::MAX, 0));
            if next_reserved <= cur {
                cur = (next_reserved + len).max(cur);
                i += 1;
                continue;
            }
            let stop = next_reserved.min(s1);
            let (l0, l1) = (lbn_of(cur), lbn_of(stop).min(self.capacity));
            if l0 < l1 {
                push_piece(out, l0..l1, position + (cur - s0) as u32);
            }
            cur = stop;
        }
    }

    /// First LBN of each zone and its sectors per track: `(first_cylinder, last_cylinder, spt,
    /// first_lbn, lbn_count)` per zone.
    #[must_use]
    pub fn zone_table(&self) -> Vec<(u32, u32, u32, u64, u64)> {
        self.zones.iter().map(|z| (z.first_cylinder, z.last_cylinder, z.spt, z.first_lbn, z.lbn_count)).collect()
    }
}

/// A remapped defect must move an LBN's sector to a spare one: its defective slot must hold an
/// LBN (not a spare, slipped or empty one) and its spare slot must hold none (and be neither a
/// slip, which is bad media, nor in the empty front, which is unused space). Otherwise two LBNs would share a sector or an LBN would vanish.
fn check_defects(spec: &DiskSpec, zone_index: usize, zone: &ZoneMap) -> Result<(), SpecError> {
    let z = &spec.zones[zone_index];
    let spt = u64::from(z.sectors_per_track);
    let per_unit = if spec.sparing == crate::spec::Sparing::Tracks { spt } else { 1 };
    for (j, &[from, to]) in z.defects.iter().enumerate() {
        let bad = |message: String| Err(SpecError::Invalid { origin: String::new(), field: format!("zones[{zone_index}].defects[{j}]"), message });
        if from == to {
            continue; // remapped to itself: nothing moves
        }
        if z.slips.contains(&to) {
            return bad(format!("spare {to} is slipped (bad media), not a spare"));
        }
        // Reserved slots in the unit (a sector, or a track under track sparing).
        let reserved_in = |unit: u64| zone.reserved_below((unit + 1) * per_unit) - zone.reserved_below(unit * per_unit);
        if reserved_in(from) > 0 {
            return bad(format!("defective {from} holds no LBN (it is a spare, slipped or empty sector)"));
        }
        if reserved_in(to) < per_unit {
            return bad(format!("spare {to} is not a spare sector of the zone (it holds an LBN)"));
        }
        // The empty front holds no LBN either, but it is not spare space: data remapped there
        // would sit in the area the spec says is unused.
        let front = crate::sparing::empty_front(spec, z);
        if to * per_unit < front {
            return bad(format!("spare {to} is in the zone's empty front (slots 0..{front}), not a spare"));
        }
    }
    Ok(())
}

/// `x.rem_euclid(m)`, bit for bit, without `fmod`'s loop over the quotient's bits when `x` is
/// a non-negative value below 2^52 (a track's offset always is); any other `x` goes to
/// `rem_euclid` itself.
///
/// Why it is exact: `q = ⌊fl(x/m)⌋` (below 2^52) is the true quotient `⌊x/m⌋` or one more (rounding is
/// monotonic and whole numbers below 2^53 are representable, so it is never less); `q·m` is a
/// whole number below 2^53, so exact; `x − q·m` and, when `q` was one too many, the `+ m` that
/// corrects it, are multiples of `ulp(x)` no larger than `x` (or equal to it), so exact too.
/// `fmod`, and so `rem_euclid` on a non-negative `x`, is the exact remainder as well.
#[inline]
fn rem_whole(x: f64, m: u32) -> f64 {
    let mf = f64::from(m);
    if m > 0 && x.is_sign_positive() && x < 4_503_599_627_370_496.0 {
        // The quotient is below 2^52, so truncating it through `u64` is `floor`, exactly,
        // without the library call `floor` is on targets before SSE4.1.
        let r = x - ((x / mf) as u64) as f64 * mf;
        return if r < 0.0 { r + mf } else { r };
    }
    x.rem_euclid(mf)
}

/// Appends a piece to `out`, extending the last one when both LBNs and sectors continue it.
fn push_piece(out: &mut Vec<(std::ops::Range<u64>, u32)>, r: std::ops::Range<u64>, position: u32) {
    if let Some((last, at)) = out.last_mut() {
        if last.end == r.start && u64::from(*at) + (last.end - last.start) == u64::from(position) {
            last.end = r.end;
            return;
        }
    }
    out.push((r, position));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rem_whole` must give `rem_euclid`'s bits: track angles feed every service time.
    #[test]
    fn rem_whole_is_rem_euclid_bit_for_bit() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut checked = 0;
        let mut check = |x: f64, m: u32| {
            let (ours, std) = (rem_whole(x, m), x.rem_euclid(f64::from(m)));
            assert!(ours.to_bits() == std.to_bits() || (ours.is_nan() && std.is_nan()), "{x:e} mod {m}: {ours:e} against {std:e}");
            checked += 1;
        };
        for _ in 0..200_000 {
            let m = [1, 2, 3, 7, 17, 63, 229, 334, 500, 1023, 4096, 1 << 20, u32::MAX][(next() % 13) as usize];
            // Offsets as layouts form them (skews are fractions of sectors times track counts),
            // raw bit patterns, and values a few ulps from a multiple of `m`, where the quotient
            // rounds up.
            let scale = [1.0, 100.0, 1e4, 1e7, 1e12, 4e15][(next() % 6) as usize];
            let x = (next() >> 11) as f64 / (1u64 << 53) as f64 * scale;
            check(x, m);
            check(f64::from_bits(next() >> 2), m);
            let k = (next() % 1_000_000) as f64 * f64::from(m);
            let mut y = k;
            for _ in 0..4 {
                y = f64::from_bits(y.to_bits().saturating_sub(1));
                check(y, m);
            }
            check(k, m);
            check(f64::from_bits(k.to_bits() + 1), m);
        }
        for x in [0.0, -0.0, -1.5, -1e9, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 4_503_599_627_370_495.5, 4_503_599_627_370_496.0, 1e300, f64::MIN_POSITIVE, 5e-324] {
            for m in [1, 3, 334, u32::MAX] {
                check(x, m);
            }
        }
        assert!(checked > 1_000_000);
    }

    /// `lbn_track` must agree with `lbn_to_pbn` then `track_summary`, which it stands in for in
    /// the cache model: on every built-in disk (slips, spares per track, cylinder, range, zone
    /// and at the end, track sparing, a remapped defect), across each zone's first and last
    /// few thousand LBNs and at random ones.
    #[test]
    fn lbn_track_is_lbn_to_pbn_then_track_summary() {
        let mut state = 7u64;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            state >> 11
        };
        for name in crate::library::names() {
            let disk = crate::Disk::new(crate::library::get(name).unwrap()).unwrap();
            let layout = disk.layout();
            let capacity = layout.capacity();
            let mut lbns: Vec<u64> = (0..5000).map(|_| next() % capacity).collect();
            for &(_, _, _, first, count) in &layout.zone_table() {
                let end = (first + count).min(capacity);
                lbns.extend(first..end.min(first + 3000));
                lbns.extend(end.saturating_sub(3000).max(first)..end);
            }
            for lbn in lbns {
                let pbn = layout.lbn_to_pbn(lbn).unwrap();
                let expected = (pbn, layout.track_summary(pbn.cylinder, pbn.surface));
                assert_eq!(layout.lbn_track(lbn).unwrap(), expected, "{name}: LBN {lbn}");
            }
            assert!(layout.lbn_track(capacity).is_err(), "{name}");
        }
    }
}
