//! LBN → PBN → LBN is the identity on every built-in disk, and every physical sector either holds
//! an LBN that maps back to it or holds none (spare, slipped or empty).

use std::sync::OnceLock;

use freeblock_disk::{library, Disk, Pbn};
use proptest::prelude::*;

fn disks() -> &'static [(&'static str, Disk)] {
    static DISKS: OnceLock<Vec<(&'static str, Disk)>> = OnceLock::new();
    DISKS.get_or_init(|| library::names().into_iter().map(|n| (n, Disk::new(library::get(n).unwrap()).unwrap())).collect())
}

fn roundtrip(name: &str, disk: &Disk, lbn: u64) {
    let layout = disk.layout();
    let pbn = layout.lbn_to_pbn(lbn).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(pbn.cylinder < layout.cylinders() && pbn.surface < layout.surfaces(), "{name}: LBN {lbn} -> {pbn:?}");
    assert!(pbn.sector < layout.sectors_per_track(pbn.cylinder), "{name}: LBN {lbn} -> {pbn:?}");
    assert_eq!(layout.pbn_to_lbn(pbn), Some(lbn), "{name}: LBN {lbn} -> {pbn:?} -> back");
}

fn check_pbn(name: &str, disk: &Disk, pbn: Pbn) {
    if let Some(lbn) = disk.layout().pbn_to_lbn(pbn) {
        assert!(lbn < disk.capacity(), "{name}: {pbn:?} -> LBN {lbn} past the capacity");
        assert_eq!(disk.layout().lbn_to_pbn(lbn).unwrap(), pbn, "{name}: {pbn:?} -> {lbn} -> back");
    }
}

/// Zone boundaries, the ends of the disk and their neighbours.
#[test]
fn boundary_lbns_roundtrip() {
    for (name, disk) in disks() {
        let cap = disk.capacity();
        let mut lbns = vec![0, 1, cap / 2, cap - 2, cap - 1];
        for (_, _, _, first, count) in disk.layout().zone_table() {
            for l in [first.wrapping_sub(1), first, first + 1, first + count.saturating_sub(1), first + count] {
                if l < cap {
                    lbns.push(l);
                }
            }
        }
        for l in lbns {
            roundtrip(name, disk, l);
        }
        assert!(disk.layout().lbn_to_pbn(cap).is_err(), "{name}: LBN {cap} should be out of range");
    }
}

/// Consecutive LBNs never share a sector, and every track of a few cylinders maps back.
#[test]
fn first_cylinders_are_consistent_sector_by_sector() {
    for (name, disk) in disks() {
        let layout = disk.layout();
        let mut seen = std::collections::HashSet::new();
        for cylinder in [0, 1, layout.cylinders() / 2, layout.cylinders() - 1] {
            for surface in 0..layout.surfaces() {
                for sector in 0..layout.sectors_per_track(cylinder) {
                    let pbn = Pbn { cylinder, surface, sector };
                    check_pbn(name, disk, pbn);
                    if let Some(l) = layout.pbn_to_lbn(pbn) {
                        assert!(seen.insert(l), "{name}: LBN {l} on two sectors");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_lbns_roundtrip(d in any::<prop::sample::Index>(), f in 0.0f64..1.0) {
        let (name, disk) = &disks()[d.index(disks().len())];
        let lbn = ((disk.capacity() as f64 * f) as u64).min(disk.capacity() - 1);
        roundtrip(name, disk, lbn);
    }

    #[test]
    fn random_sectors_map_back_or_are_spare(d in any::<prop::sample::Index>(), c in 0.0f64..1.0, h in any::<prop::sample::Index>(), s in any::<prop::sample::Index>()) {
        let (name, disk) = &disks()[d.index(disks().len())];
        let layout = disk.layout();
        let cylinder = ((f64::from(layout.cylinders()) * c) as u32).min(layout.cylinders() - 1);
        let surface = h.index(layout.surfaces() as usize) as u32;
        let sector = s.index(layout.sectors_per_track(cylinder) as usize) as u32;
        check_pbn(name, disk, Pbn { cylinder, surface, sector });
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// `arc_lbns` names exactly the LBNs `pbn_to_lbn` finds sector by sector round an arc, at the
    /// positions it says.
    #[test]
    fn arcs_map_like_single_sectors(which in 0usize..64, c in 0.0f64..1.0, s in 0u32..64, first in 0u32..4000, count in 1u32..4000) {
        let (name, disk) = &disks()[which % disks().len()];
        let layout = disk.layout();
        let cylinder = ((f64::from(layout.cylinders()) * c) as u32).min(layout.cylinders() - 1);
        let surface = s % layout.surfaces();
        let spt = layout.sectors_per_track(cylinder);
        let (first, count) = (first % spt, count.min(spt));
        let mut pieces = Vec::new();
        layout.arc_lbns(cylinder, surface, first, count, &mut pieces);
        let mut from_pieces = std::collections::BTreeMap::new();
        for (r, at) in &pieces {
            for (i, l) in r.clone().enumerate() {
                prop_assert!(from_pieces.insert(at + i as u32, l).is_none(), "{name}: position {} twice", at + i as u32);
            }
        }
        for k in 0..count {
            let sector = (first + k) % spt;
            let pbn = Pbn { cylinder, surface, sector };
            prop_assert_eq!(from_pieces.get(&k).copied(), layout.pbn_to_lbn(pbn), "{}: {:?}", name, pbn);
        }
    }
}

/// Small disks with defects remapped to spares on other tracks (sector and track sparing).
fn defective_disks() -> Vec<(&'static str, Disk)> {
    let zone = |sparing: &str, defects: &str| {
        format!(
            "name = \"defective\"\nrpm = 10000.0\nsurfaces = 2\nhead_switch_ms = 0.2\nwrite_settle_ms = 0.1\nread_settle_ms = 0.0\nsparing = {{ scheme = \"{sparing}\" }}\n\
             [[zones]]\nfirst_cylinder = 0\nlast_cylinder = 19\nsectors_per_track = 8\nspares = 1\n{defects}\n\
             [seek]\ntype = \"three_point\"\nsingle_ms = 1.0\naverage_ms = 5.0\nfull_ms = 11.0\n"
        )
    };
    [("sectors", zone("sectors_per_track", "defects = [[10, 7], [100, 15], [3, 303]]"))]
        .into_iter()
        .map(|(name, text)| {
            let spec = freeblock_disk::DiskSpec::from_toml_str(&text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, Disk::new(spec).unwrap_or_else(|e| panic!("{name}: {e}")))
        })
        .collect()
}

/// `for_each_remapped_lbn` names exactly the LBNs that a remapped defect moved off the track
/// `for_each_track_run` counts them on, with the spare's track as `lbn_to_pbn` finds it (per-track
/// totals of wanted sectors rely on it: the fuzzer found a scan that never ended without it).
#[test]
fn remapped_lbns_are_reported_on_their_spare_track() {
    let mut checked = 0;
    let defective = defective_disks();
    for (name, disk) in disks().iter().chain(defective.iter()) {
        let layout = disk.layout();
        let mut reported = std::collections::BTreeMap::new();
        layout.for_each_remapped_lbn(0, disk.capacity(), |lbn, counted, actual| {
            reported.insert(lbn, (counted, actual));
        });
        for (&lbn, &(counted, actual)) in &reported {
            let pbn = layout.lbn_to_pbn(lbn).unwrap();
            assert_eq!(actual, (pbn.cylinder, pbn.surface), "{name}: LBN {lbn}");
            let mut run_track = None;
            layout.for_each_track_run(lbn, 1, |r| run_track = Some((r.cylinder, r.surface))).unwrap();
            assert_eq!(Some(counted), run_track, "{name}: LBN {lbn}");
        }
        // Every LBN not reported is counted where it lives (a sample, with every reported one's
        // neighbours; all of a small disk).
        let step = (disk.capacity() / 20_000).max(1);
        let around = reported.keys().flat_map(|&l| [l.saturating_sub(1), l + 1]);
        for lbn in (0..disk.capacity()).step_by(step as usize).chain(around).filter(|l| *l < disk.capacity() && !reported.contains_key(l)) {
            let pbn = layout.lbn_to_pbn(lbn).unwrap();
            let mut run_track = None;
            layout.for_each_track_run(lbn, 1, |r| run_track = Some((r.cylinder, r.surface))).unwrap();
            assert_eq!(run_track, Some((pbn.cylinder, pbn.surface)), "{name}: LBN {lbn} is remapped but not reported");
        }
        checked += reported.len();
    }
    assert!(checked >= 3, "the defective disks' remapped LBNs were not all reported ({checked})");
}

/// `track_first_lbn` (the buffer model's one-lookup test of a track) says a track holds one run
/// of LBNs exactly when sector by sector it does: on every surface of every 101st cylinder, the
/// zones' first and last cylinders, and every cylinder where a defect's sector or its spare
/// lies, of every built-in disk. Both kinds of track occur.
#[test]
fn track_first_lbn_agrees_with_sector_by_sector() {
    let (mut runs, mut others) = (0, 0);
    for (name, disk) in disks() {
        let layout = disk.layout();
        let mut cylinders: Vec<u32> = (0..layout.cylinders()).step_by(101).collect();
        for (first, last, ..) in layout.zone_table() {
            cylinders.extend([first, last]);
        }
        let mut remapped = Vec::new();
        layout.for_each_remapped_lbn(0, disk.capacity(), |_, counted, actual| remapped.extend([counted.0, actual.0]));
        cylinders.extend(remapped);
        for &cylinder in &cylinders {
            let spt = layout.sectors_per_track(cylinder);
            for surface in 0..layout.surfaces() {
                let at = |sector| layout.pbn_to_lbn(Pbn { cylinder, surface, sector });
                let one_run = at(0).is_some_and(|a| (0..spt).all(|k| at(k) == Some(a + u64::from(k))));
                let got = layout.track_first_lbn(cylinder, surface);
                assert_eq!(got, if one_run { at(0) } else { None }, "{name}: cylinder {cylinder} surface {surface}");
                if one_run {
                    runs += 1;
                } else {
                    others += 1;
                }
            }
        }
    }
    assert!(runs > 0 && others > 0, "{runs} tracks of one run, {others} others");
}
