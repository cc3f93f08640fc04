//! The allocator: turns free space in a [`BlockMap`] into candidate locations for a new write.
//!
//! Two shapes of offer, one per paper:
//!
//! ```text
//!  equidistant (paper 004)            free ranges near the head (OSDI 2008)
//!  one track, k starts 1/k apart      every free run on the tracks nearest the head
//!
//!        c0                            track c,h   ░░░░[ free ]░░░░░[  free  ]░░
//!     ╭──●──╮                          track c,h+1 ░[    free    ]░░░░░░░░░░░░░
//!  c2 ●     │   k = 3: whatever the    track c+1,h ░░░░░░░░░░░[ free ]░░░░░░░░
//!     ╰──●──╯   head's angle, a start      → Ranges { ranges, alignment }
//!        c1     is ≤ 1/3 rev away
//! ```
//!
//! Every offer **reserves** what it hands out, so two pending writes are never offered the same
//! block; the write that uses the offer ([`BlockMap::write`]) gives back whatever it did not choose,
//! and [`BlockMap::release`] gives back an offer that is cancelled.

use freeblock_disk::{Disk, HeadState, Pbn};

use super::map::{BlockMap, Candidates, PhysRange};
use super::error::{LayoutError, Result};

/// One track: a cylinder and a surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Track {
    /// Cylinder.
    pub cylinder: u32,
    /// Surface.
    pub surface: u32,
}

/// The LBN held by each physical sector of a track, in rotational (= LBN) order; `None` for
/// spare, slipped or missing sectors.
#[must_use]
pub fn track_lbns(disk: &Disk, track: Track) -> Vec<Option<u64>> {
    let layout = disk.layout();
    let spt = layout.sectors_per_track(track.cylinder);
    (0..spt).map(|sector| layout.pbn_to_lbn(Pbn { cylinder: track.cylinder, surface: track.surface, sector })).collect()
}

/// The maximal runs of consecutive LBNs on a track.
fn track_runs(disk: &Disk, track: Track) -> Vec<PhysRange> {
    let mut out: Vec<PhysRange> = Vec::new();
    for lbn in track_lbns(disk, track).into_iter().flatten() {
        match out.last_mut() {
            Some(r) if r.end() == lbn => r.sectors += 1,
            _ => out.push(PhysRange::new(lbn, 1)),
        }
    }
    out
}

/// The tracks holding the map's region, nearest `near` first: its own cylinder (its own surface
/// first, then the others), then one cylinder out on each side, and so on.
pub fn tracks_near(disk: &Disk, map: &BlockMap, near: HeadState) -> impl Iterator<Item = Track> {
    let layout = disk.layout();
    let r = map.region();
    let cyl = |lbn: u64| layout.lbn_to_pbn(lbn.min(disk.capacity().saturating_sub(1))).map_or(0, |p| p.cylinder);
    let (lo, hi) = (cyl(r.start), cyl(r.end().saturating_sub(1)));
    let c0 = near.cylinder.clamp(lo, hi);
    let surfaces = layout.surfaces();
    let s0 = near.surface.min(surfaces.saturating_sub(1));
    let span = (c0 - lo).max(hi - c0);
    (0..=span)
        .flat_map(move |d| {
            let up = c0.checked_add(d).filter(|&c| c <= hi);
            let down = c0.checked_sub(d).filter(|&c| c >= lo && d > 0);
            up.into_iter().chain(down)
        })
        .flat_map(move |c| {
            std::iter::once(s0)
                .chain((0..surfaces).filter(move |&s| s != s0))
                .map(move |s| Track { cylinder: c, surface: s })
        })
}

fn check_counts(k: u32, blocks: u64) -> Result<()> {
    if k == 0 {
        return Err(LayoutError::Config { field: "k", message: "at least one candidate is needed".into() });
    }
    if blocks == 0 {
        return Err(LayoutError::Config { field: "blocks", message: "a write covers at least one block".into() });
    }
    Ok(())
}

/// Offers `k` candidate starts for a write of `blocks` blocks, spaced as evenly round one track as
/// the sectors allow (starts `round(i·spt/k)` sectors after `phase`, rounded down to a block
/// boundary). If those are not all free it tries the next phase, round the whole track. The
/// candidates are reserved in `map`.
///
/// # Errors
/// [`LayoutError::Config`] for `k == 0`, `blocks == 0` or a track that does not exist;
/// [`LayoutError::NoSpace`] when `k` such extents do not fit on the track or no phase has them
/// all free.
pub fn offer_equidistant_on_track(
    map: &mut BlockMap,
    disk: &Disk,
    track: Track,
    k: u32,
    blocks: u64,
    phase: u32,
) -> Result<Candidates> {
    check_counts(k, blocks)?;
    let starts = equidistant_starts(map, disk, track, k, blocks, phase)?;
    let need = blocks * map.block_sectors();
    for &s in &starts {
        map.reserve(PhysRange::new(s, need))?;
    }
    Ok(Candidates::discrete(starts))
}

/// The starts [`offer_equidistant_on_track`] would offer, without reserving them.
fn equidistant_starts(map: &BlockMap, disk: &Disk, track: Track, k: u32, blocks: u64, phase: u32) -> Result<Vec<u64>> {
    let layout = disk.layout();
    let spt = layout.sectors_per_track(track.cylinder);
    if spt == 0 || track.surface >= layout.surfaces() {
        return Err(LayoutError::Config {
            field: "track",
            message: format!("cylinder {} surface {} is not on the disk", track.cylinder, track.surface),
        });
    }
    let bs = map.block_sectors();
    let need = blocks * bs;
    let what = || format!("{k} candidates of {need} sectors on track ({}, {})", track.cylinder, track.surface);
    if u64::from(k) * need > u64::from(spt) {
        return Err(LayoutError::NoSpace { what: what() });
    }
    // A track of consecutive LBNs with no free block where a candidate could start has no offer:
    // said before its sectors' LBNs are computed and its phases tried, since most tracks near
    // the heads are full (of range writes' homes, say).
    if let Some(track_first) = layout.track_first_lbn(track.cylinder, track.surface) {
        if map.free_runs(track_first.saturating_sub(bs), track_first + u64::from(spt) + need).is_empty() {
            return Err(LayoutError::NoSpace { what: what() });
        }
    }
    phase_scan(map, disk, track, k, blocks, phase).ok_or_else(|| LayoutError::NoSpace { what: what() })
}

/// The phase search of [`equidistant_starts`] on a track it has checked: the first phase from
/// `phase` whose `k` starts are all free.
fn phase_scan(map: &BlockMap, disk: &Disk, track: Track, k: u32, blocks: u64, phase: u32) -> Option<Vec<u64>> {
    let spt = disk.layout().sectors_per_track(track.cylinder);
    let bs = map.block_sectors();
    let need = blocks * bs;
    let lbns = track_lbns(disk, track);
    let first = map.region().start;
    'phase: for shift in 0..spt {
        let base = (phase % spt + shift) % spt;
        let mut starts: Vec<u64> = Vec::with_capacity(k as usize);
        for i in 0..k {
            let off = (f64::from(i) * f64::from(spt) / f64::from(k)).round() as u32;
            let Some(lbn) = lbns[((base + off) % spt) as usize] else { continue 'phase };
            let Some(s) = lbn.checked_sub((lbn.saturating_sub(first)) % bs) else { continue 'phase };
            if !map.is_free(s, need) || starts.iter().any(|&o| s < o + need && o < s + need) {
                continue 'phase;
            }
            starts.push(s);
        }
        return Some(starts);
    }
    None
}

/// Offers `k` equidistant candidates on the track nearest `near` (in the order of
/// [`tracks_near`]) that has room for them; returns the track and the (reserved) candidates.
///
/// # Errors
/// As [`offer_equidistant_on_track`]; [`LayoutError::NoSpace`] when no track has room.
pub fn offer_equidistant(
    map: &mut BlockMap,
    disk: &Disk,
    near: HeadState,
    k: u32,
    blocks: u64,
) -> Result<(Track, Candidates)> {
    offer_equidistant_noting(map, disk, near, k, blocks, &mut NoRoom::default())
}

/// Tracks found with no room during a batch of offers that only take free space (the pieces of
/// one long write): a track with no place for `k` equidistant runs of `b` blocks has none for
/// longer runs either, and none later in the batch, so the next search skips it without
/// scanning it again. Without it, each piece of a long write walked every track the earlier
/// pieces filled: time quadratic in the write's length (issue 37 §2). The offers are the same
/// with it or without it.
#[derive(Debug, Default)]
pub struct NoRoom {
    /// Per track and candidate count, the fewest blocks found not to fit.
    tracks: std::collections::HashMap<(Track, u32), u64>,
    /// `(k, blocks, n)`: the first `n` tracks of the walk have no room for `k` runs of `blocks`
    /// or more, so a search skips them without looking (the walk is the same for the batch).
    prefixes: Vec<(u32, u64, usize)>,
}

impl NoRoom {
    /// Whether `track` is known to have no place for `k` runs of `blocks` blocks.
    fn known_full(&self, track: Track, k: u32, blocks: u64) -> bool {
        self.tracks.get(&(track, k)).is_some_and(|&fewest| blocks >= fewest)
    }

    fn note(&mut self, track: Track, k: u32, blocks: u64) {
        let fewest = self.tracks.entry((track, k)).or_insert(blocks);
        *fewest = (*fewest).min(blocks);
    }

    /// Leading tracks of the walk a search for `k` runs of `blocks` may skip.
    fn skip(&self, k: u32, blocks: u64) -> usize {
        self.prefixes.iter().filter(|&&(pk, pb, _)| pk == k && pb <= blocks).map(|p| p.2).max().unwrap_or(0)
    }

    /// The search for `k` runs of `blocks` found room first at walk position `found`.
    fn full_before(&mut self, k: u32, blocks: u64, found: usize) {
        match self.prefixes.iter_mut().find(|p| p.0 == k && p.1 == blocks) {
            Some(p) => p.2 = p.2.max(found),
            None => self.prefixes.push((k, blocks, found)),
        }
    }
}

/// [`offer_equidistant`] within a batch of offers sharing `no_room`: the map may only lose free
/// space between the calls of one batch (offers reserve; nothing is freed), or a track skipped
/// may have room again.
///
/// # Errors
/// As [`offer_equidistant`].
pub fn offer_equidistant_noting(map: &mut BlockMap, disk: &Disk, near: HeadState, k: u32, blocks: u64, no_room: &mut NoRoom) -> Result<(Track, Candidates)> {
    check_counts(k, blocks)?;
    // Walked lazily: the nearest tracks with room are usually a few, the disk's tracks many.
    let skip = no_room.skip(k, blocks);
    let found = tracks_near(disk, map, near).enumerate().skip(skip).find_map(|(i, track)| {
        if no_room.known_full(track, k, blocks) {
            return None;
        }
        let starts = equidistant_starts(map, disk, track, k, blocks, 0);
        if starts.is_err() {
            no_room.note(track, k, blocks);
        }
        starts.ok().map(|starts| (i, track, starts))
    });
    let Some((i, track, starts)) = found else {
        return Err(LayoutError::NoSpace { what: format!("{k} equidistant candidates of {blocks} blocks on any track") });
    };
    no_room.full_before(k, blocks, i);
    let need = blocks * map.block_sectors();
    for &s in &starts {
        map.reserve(PhysRange::new(s, need))?;
    }
    Ok((track, Candidates::discrete(starts)))
}

/// The cylinders holding the map's region, nearest `near.cylinder` first (the cylinder order of
/// [`tracks_near`]).
pub fn cylinders_near(disk: &Disk, map: &BlockMap, near: HeadState) -> impl Iterator<Item = u32> {
    let mut last = None;
    tracks_near(disk, map, near).filter_map(move |t| {
        let fresh = last != Some(t.cylinder);
        last = Some(t.cylinder);
        fresh.then_some(t.cylinder)
    })
}

/// Free, block-aligned starts for `need` sectors lying wholly on one track, each with the angle
/// (fraction of a revolution, `0.0..1.0`) at which its first sector passes under the head.
///
/// On a track of consecutive LBNs the starts come from the map's free runs among them, without
/// computing every sector's LBN: a cylinder walk that finds no room visits every track of the
/// disk (range writes spread round cylinders, under ext4 on the Atlas 10K, spent most of their
/// time there). Other tracks are scanned sector by sector.
fn free_starts_on_track(map: &BlockMap, disk: &Disk, track: Track, need: u64) -> Vec<(u64, f64)> {
    let layout = disk.layout();
    let Some(first) = layout.track_first_lbn(track.cylinder, track.surface) else { return free_starts_scan(map, disk, track, need) };
    let end = first + u64::from(layout.sectors_per_track(track.cylinder));
    let rev = disk.revolution_ps() as f64;
    let mut out = Vec::new();
    // The runs are whole blocks (aligned as the map's are) inside the track.
    for run in map.free_runs(first, end) {
        let mut l = run.start;
        while l + need <= run.end() {
            out.push((l, layout.sector_start(track.cylinder, track.surface, (l - first) as u32) as f64 / rev));
            l += map.block_sectors();
        }
    }
    out
}

/// [`free_starts_on_track`] sector by sector, for any track.
fn free_starts_scan(map: &BlockMap, disk: &Disk, track: Track, need: u64) -> Vec<(u64, f64)> {
    #[cfg(test)]
    tests::SCANNED.with(|n| n.set(n.get() + 1));
    let layout = disk.layout();
    let lbns = track_lbns(disk, track);
    let bs = map.block_sectors();
    let first = map.region().start;
    let rev = disk.revolution_ps() as f64;
    let mut out = Vec::new();
    for (sector, lbn) in lbns.iter().enumerate() {
        let Some(l) = *lbn else { continue };
        if l < first || (l - first) % bs != 0 {
            continue;
        }
        // The whole extent must follow on this track, in LBN order, without a spare in between.
        let on_track = (0..need).all(|j| lbns.get(sector + j as usize).copied().flatten() == Some(l + j));
        if on_track && map.is_free(l, need) {
            let at = layout.sector_start(track.cylinder, track.surface, sector as u32) as f64 / rev;
            out.push((l, at));
        }
    }
    out
}

/// Offers `k` candidates for a write of `blocks` blocks spread round one **cylinder**: the first on
/// a free block-aligned spot (on the head's surface when a spot there has partners, else on the
/// next surface that does), candidate `i` on another surface as close as the block alignment
/// allows to `i/k` of a revolution after the first (within `1/(4k)` of a revolution). A head arriving by a seek reaches every surface of a cylinder after
/// the same move, so rotation alone separates the candidates and the mean wait for the nearest
/// is about `rev/(2k)`, as with [`offer_equidistant_on_track`], but the candidates need not fit on
/// one track together: eight 16 KB candidates fit on a cylinder of any disk, not on a 96-sector
/// track. (A head already on the cylinder pays a head switch to reach the other surfaces.)
/// Cylinders are tried nearest `near` first; the candidates are reserved in `map`.
///
/// ```text
///   surface 0  ──●────────────────   candidate 0 at angle a
///   surface 1  ──────────●────────   candidate 1 at a + 1/k
///   surface 2  ────────────────●──   candidate 2 at a + 2/k      (k = 3)
/// ```
///
/// # Errors
/// [`LayoutError::Config`] for `k == 0`, `blocks == 0` or more candidates than surfaces;
/// [`LayoutError::NoSpace`] when no cylinder has room.
pub fn offer_equidistant_on_cylinder(
    map: &mut BlockMap,
    disk: &Disk,
    near: HeadState,
    k: u32,
    blocks: u64,
) -> Result<(u32, Candidates)> {
    check_counts(k, blocks)?;
    let surfaces = disk.layout().surfaces();
    if k > surfaces {
        return Err(LayoutError::Config {
            field: "k",
            message: format!("{k} candidates on one cylinder need {k} surfaces; the disk has {surfaces}"),
        });
    }
    let need = blocks * map.block_sectors();
    let tolerance = 1.0 / (4.0 * f64::from(k));
    let s0 = near.surface.min(surfaces - 1);
    let order: Vec<u32> = std::iter::once(s0).chain((0..surfaces).filter(|&s| s != s0)).collect();
    let cylinders: Vec<u32> = cylinders_near(disk, map, near).collect();
    for cylinder in cylinders {
        let slots: Vec<Vec<(u64, f64)>> =
            order.iter().map(|&surface| free_starts_on_track(map, disk, Track { cylinder, surface }, need)).collect();
        if slots.iter().filter(|s| !s.is_empty()).count() < k as usize {
            continue;
        }
        for (base_surface, base_slots) in slots.iter().enumerate() {
            'base: for &(base_lbn, base_angle) in base_slots {
                let mut starts = vec![base_lbn];
                let mut used = vec![base_surface];
                for i in 1..k {
                    let want = (base_angle + f64::from(i) / f64::from(k)).rem_euclid(1.0);
                    let mut best: Option<(f64, usize, u64)> = None;
                    for (si, list) in slots.iter().enumerate().filter(|(si, _)| !used.contains(si)) {
                        for &(lbn, angle) in list {
                            let d = (angle - want).rem_euclid(1.0);
                            let dist = d.min(1.0 - d);
                            if best.is_none_or(|b| dist < b.0) {
                                best = Some((dist, si, lbn));
                            }
                        }
                    }
                    match best {
                        Some((dist, si, lbn)) if dist <= tolerance => {
                            starts.push(lbn);
                            used.push(si);
                        }
                        _ => continue 'base,
                    }
                }
                for &s in &starts {
                    map.reserve(PhysRange::new(s, need))?;
                }
                return Ok((cylinder, Candidates::discrete(starts)));
            }
        }
    }
    Err(LayoutError::NoSpace { what: format!("{k} candidates of {blocks} blocks spread round any cylinder") })
}

/// Offers up to `max_ranges` free ranges on the tracks nearest `near`, each able to hold a write of
/// `blocks` blocks at a start aligned to `alignment` sectors (a multiple of the block size). Ranges
/// never cross a track boundary, so every start in one range costs the same seek. The ranges are
/// reserved in `map`.
///
/// # Errors
/// [`LayoutError::Config`] for zero counts, [`LayoutError::Misaligned`] for an alignment
/// that is not a multiple of the block size, [`LayoutError::NoSpace`] when nothing fits.
pub fn offer_ranges_near(
    map: &mut BlockMap,
    disk: &Disk,
    near: HeadState,
    blocks: u64,
    alignment: u64,
    max_ranges: usize,
) -> Result<Candidates> {
    check_counts(1, blocks)?;
    if max_ranges == 0 {
        return Err(LayoutError::Config { field: "max_ranges", message: "at least one range is needed".into() });
    }
    let bs = map.block_sectors();
    if alignment == 0 || alignment % bs != 0 {
        return Err(LayoutError::Misaligned { what: "alignment", value: alignment, alignment: bs });
    }
    let need = blocks * bs;
    let mut ranges = Vec::new();
    let tracks: Vec<Track> = tracks_near(disk, map, near).collect();
    'tracks: for track in tracks {
        for run in track_runs(disk, track) {
            for free in map.free_runs(run.start, run.end()) {
                let first = free.start.div_ceil(alignment) * alignment;
                if first + need <= free.end() {
                    ranges.push(free);
                    if ranges.len() == max_ranges {
                        break 'tracks;
                    }
                }
            }
        }
    }
    if ranges.is_empty() {
        return Err(LayoutError::NoSpace {
            what: format!("a free range of {need} sectors aligned to {alignment}"),
        });
    }
    for &r in &ranges {
        map.reserve(r)?;
    }
    Ok(Candidates::ranges(ranges, alignment))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::map::{MapConfig, WriteRequest};
    use freeblock_disk::library;

    fn disk() -> Disk {
        Disk::new(library::get("test").unwrap()).unwrap()
    }

    thread_local! {
        /// Tracks [`free_starts_scan`] read sector by sector, on this thread.
        pub(super) static SCANNED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// Every track of the first `cylinders` cylinders, and their sectors in all.
    fn first_tracks(d: &Disk, cylinders: u32) -> (Vec<Track>, u64) {
        let layout = d.layout();
        let tracks: Vec<Track> = (0..cylinders).flat_map(|cylinder| (0..layout.surfaces()).map(move |surface| Track { cylinder, surface })).collect();
        let sectors = tracks.iter().map(|t| u64::from(layout.sectors_per_track(t.cylinder))).sum::<u64>();
        (tracks, sectors)
    }

    #[test]
    fn the_full_track_test_refuses_only_tracks_the_phase_search_refuses() {
        use rand::{Rng, SeedableRng};
        let d = disk();
        let layout = d.layout();
        let (tracks, sectors) = first_tracks(&d, 6);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
        let (mut refused, mut offered) = (0, 0);
        for _ in 0..20 {
            let mut map = BlockMap::new(MapConfig::region(0, sectors / 8 * 8, 8)).unwrap();
            // Tracks from full to nearly empty, blocks pinned at random.
            for b in 0..sectors / 8 {
                let density = [1.0, 0.98, 0.9, 0.5, 0.0][(b * 8 / 97 % 5) as usize];
                if rng.gen_bool(density) {
                    map.pin(PhysRange::new(b * 8, 8)).unwrap();
                }
            }
            for &track in &tracks {
                for (k, blocks) in [(1, 1), (2, 1), (4, 1), (3, 2)] {
                    let checked = equidistant_starts(&map, &d, track, k, blocks, 0).ok();
                    assert_eq!(checked, phase_scan(&map, &d, track, k, blocks, 0), "{track:?}, k {k}, {blocks} blocks");
                    if checked.is_some() { offered += 1 } else { refused += 1 }
                }
            }
        }
        assert!(refused > 0 && offered > 0, "{refused} refused, {offered} offered");
        // One free block, at either end of a track: offered to a write of one block.
        let blocks = sectors / 8;
        for &track in &tracks {
            let Some(first) = layout.track_first_lbn(track.cylinder, track.surface) else { continue };
            let last = first + u64::from(layout.sectors_per_track(track.cylinder)) - 1;
            for free in [first / 8, last / 8] {
                let mut map = BlockMap::new(MapConfig::region(0, blocks * 8, 8)).unwrap();
                for b in (0..blocks).filter(|&b| b != free) {
                    map.pin(PhysRange::new(b * 8, 8)).unwrap();
                }
                let checked = equidistant_starts(&map, &d, track, 1, 1, 0).ok();
                assert_eq!(checked, phase_scan(&map, &d, track, 1, 1, 0), "{track:?}, block {free} free");
                assert_eq!(checked, Some(vec![free * 8]), "{track:?}, block {free} free");
            }
        }
    }

    #[test]
    fn equidistant_candidates_are_evenly_spread() {
        let d = disk();
        let spt = d.layout().sectors_per_track(0);
        let mut map = BlockMap::new(MapConfig::region(0, u64::from(spt) * 12, 1)).unwrap();
        let track = Track { cylinder: 0, surface: 1 };
        let c = offer_equidistant_on_track(&mut map, &d, track, 4, 8, 0).unwrap();
        let starts: Vec<u64> = c.starts(8).collect();
        assert_eq!(starts.len(), 4);
        let angles: Vec<f64> =
            starts.iter().map(|&l| d.layout().sector_angle(d.layout().lbn_to_pbn(l).unwrap())).collect();
        for w in angles.windows(2) {
            let gap = (w[1] - w[0]).rem_euclid(1.0);
            assert!((gap - 0.25).abs() < 1.0 / f64::from(spt), "{angles:?}");
        }
        assert_eq!(map.stats().reserved, 32);
        // The same phase is taken now: the next offer moves on.
        let c2 = offer_equidistant_on_track(&mut map, &d, track, 4, 8, 0).unwrap();
        assert_ne!(c, c2);
        assert_eq!(map.release(&c2, 8).unwrap(), 32);
        let w = map.write(&WriteRequest { logical: 0, blocks: 8, candidates: c.clone() }, starts[2]).unwrap();
        assert_eq!(w.released, 24);
        map.check().unwrap();
    }

    #[test]
    fn too_many_candidates_do_not_fit() {
        let d = disk();
        let mut map = BlockMap::new(MapConfig::region(0, 10_000, 1)).unwrap();
        let e = offer_equidistant_on_track(&mut map, &d, Track { cylinder: 0, surface: 0 }, 8, 50, 0).unwrap_err();
        assert!(matches!(e, LayoutError::NoSpace { .. }), "{e}");
    }

    #[test]
    fn cylinder_candidates_are_evenly_spread_over_surfaces() {
        let d = Disk::new(library::get("hp_c2247a").unwrap().without_cache()).unwrap();
        let mut map = BlockMap::new(MapConfig::for_disk(&d, 8)).unwrap();
        let head = HeadState { cylinder: 40, surface: 5 };
        for k in [1u32, 2, 4, 8] {
            let (cyl, c) = offer_equidistant_on_cylinder(&mut map, &d, head, k, 4).unwrap();
            assert_eq!(cyl, 40);
            let starts: Vec<u64> = c.starts(32).collect();
            assert_eq!(starts.len(), k as usize);
            let pbns: Vec<Pbn> = starts.iter().map(|&l| d.layout().lbn_to_pbn(l).unwrap()).collect();
            if k <= 4 {
                // (For k = 8 no spot on surface 5 has seven partners close enough to the ideal
                // angles, so the first candidate moves to another surface.)
                assert_eq!(pbns[0].surface, 5, "k={k}: the first candidate is on the head's surface");
            }
            let mut surfaces: Vec<u32> = pbns.iter().map(|p| p.surface).collect();
            surfaces.sort_unstable();
            surfaces.dedup();
            assert_eq!(surfaces.len(), k as usize, "one candidate per surface");
            let a0 = d.layout().sector_angle(pbns[0]);
            for (i, p) in pbns.iter().enumerate() {
                // The whole extent stays on the candidate's track.
                assert_eq!(d.layout().lbn_to_pbn(starts[i] + 31).unwrap().surface, p.surface);
                let want = (a0 + i as f64 / f64::from(k)).rem_euclid(1.0);
                let dd = (d.layout().sector_angle(*p) - want).rem_euclid(1.0);
                assert!(dd.min(1.0 - dd) <= 1.0 / (4.0 * f64::from(k)) + 1e-9, "k={k} candidate {i}");
            }
        }
        assert_eq!(map.stats().reserved, 4 * (1 + 2 + 4 + 8));
        map.check().unwrap();
        let e = offer_equidistant_on_cylinder(&mut map, &d, head, 14, 1).unwrap_err();
        assert!(e.to_string().contains("the disk has 13"), "{e}");
    }

    #[test]
    fn free_starts_from_the_free_runs_are_those_of_the_sector_scan() {
        use rand::{Rng, SeedableRng};
        let d = disk();
        let (tracks, sectors) = first_tracks(&d, 4);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
        let mut found = 0;
        // Regions from sector 0 and from a later one, blocks of 8 sectors and of 3 (blocks that
        // do not start where tracks do), tracks from full to empty.
        for (first, bs) in [(0, 8), (24, 8), (0, 3), (9, 3)] {
            for _ in 0..10 {
                let mut map = BlockMap::new(MapConfig::region(first, (sectors - first) / bs * bs, bs)).unwrap();
                for b in 0..(sectors - first) / bs {
                    let density = [1.0, 0.9, 0.5, 0.1, 0.0][(b * bs / 97 % 5) as usize];
                    if rng.gen_bool(density) {
                        map.pin(PhysRange::new(first + b * bs, bs)).unwrap();
                    }
                }
                for &track in &tracks {
                    for blocks in [1, 2, 5] {
                        let fast = free_starts_on_track(&map, &d, track, blocks * bs);
                        assert_eq!(fast, free_starts_scan(&map, &d, track, blocks * bs), "{track:?}, region from {first}, {blocks} blocks of {bs}");
                        found += fast.len();
                    }
                }
            }
        }
        assert!(found > 0);
    }

    #[test]
    fn a_cylinder_walk_with_no_room_reads_no_track_sector_by_sector() {
        // Range writes spread round cylinders on the Atlas 10K, every fourth block free: no free
        // run holds two blocks, so no cylinder has room and the walk visits every track of the
        // disk. It computed every sector's LBN on each (ext4 through the server spent most of
        // its time there); only tracks whose LBNs are not consecutive are scanned now.
        let d = Disk::new(library::get("atlas10k").unwrap().without_cache()).unwrap();
        let mut map = BlockMap::new(MapConfig::for_disk(&d, 8)).unwrap();
        let blocks = map.region().sectors / 8;
        for b in (0..blocks).step_by(4) {
            map.pin(PhysRange::new(b * 8, 8 * 3.min(blocks - b))).unwrap();
        }
        let head = HeadState { cylinder: 5000, surface: 2 };
        let irregular = tracks_near(&d, &map, head).filter(|t| d.layout().track_first_lbn(t.cylinder, t.surface).is_none()).count() as u64;
        let tracks = tracks_near(&d, &map, head).count() as u64;
        SCANNED.with(|n| n.set(0));
        let began = std::time::Instant::now();
        let e = offer_equidistant_on_cylinder(&mut map, &d, head, 4, 2).unwrap_err();
        let took = began.elapsed();
        assert!(matches!(e, LayoutError::NoSpace { .. }), "{e}");
        assert_eq!(map.stats().reserved, 0);
        let scanned = SCANNED.with(std::cell::Cell::get);
        eprintln!("a cylinder walk over {tracks} tracks ({irregular} not consecutive), no room: {took:?}, {scanned} scanned");
        assert_eq!(scanned, irregular, "of {tracks} tracks");
        assert!(irregular * 10 < tracks, "{irregular} of {tracks} tracks");
    }

    #[test]
    fn ranges_start_on_the_heads_track() {
        let d = disk();
        let spt = u64::from(d.layout().sectors_per_track(0));
        let mut map = BlockMap::new(MapConfig::region(0, spt * 6 * 4, 2)).unwrap();
        let head = HeadState { cylinder: 1, surface: 3 };
        let c = offer_ranges_near(&mut map, &d, head, 4, 4, 3).unwrap();
        let Candidates::Ranges { ranges, alignment } = &c else { panic!() };
        assert_eq!(*alignment, 4);
        assert_eq!(ranges.len(), 3);
        let p = d.layout().lbn_to_pbn(ranges[0].start).unwrap();
        assert_eq!((p.cylinder, p.surface), (1, 3));
        assert_eq!(map.stats().reserved * 2, ranges.iter().map(|r| r.sectors).sum::<u64>());
        let order: Vec<Track> = tracks_near(&d, &map, head).take(8).collect();
        assert_eq!(order[6], Track { cylinder: 2, surface: 3 });
        assert_eq!(order[7], Track { cylinder: 2, surface: 0 });
    }
}
