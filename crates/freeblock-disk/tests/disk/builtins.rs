//! The built-in library: every name builds a disk, the required disks are there, and the
//! published figures of the non-DiskSim disks come out of their specs.

use freeblock_disk::{library, Disk, SeekCurve};

#[test]
fn every_builtin_disk_builds() {
    for name in library::names() {
        let spec = library::get(name).unwrap_or_else(|e| panic!("{e}"));
        let disk = Disk::new(spec.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(disk.capacity() > 0, "{name}");
        let round = freeblock_disk::DiskSpec::from_toml_str(&spec.to_toml_string(), name).unwrap();
        assert_eq!(round, spec, "{name}: TOML round trip");
    }
}

#[test]
fn the_required_disks_are_present() {
    let names = library::names();
    for want in [
        "atlas10k",
        "cheetah4lp",
        "cheetah9lp",
        "cheetah18lp",
        "ibm18es",
        "hp_c2247a",
        "hp_c2249a",
        "toshiba_mk156f",
        "wd800",
        "ultrastar_he8",
        "wd_g4_4t",
        "ultrastar_hc530",
        "ultrastar_hc560",
        "st2000dm006",
        "atlas_iii",
        "barracuda",
        "dec_rz26",
        "hp_c2490a",
        "hp_c3323a",
        "st41601n",
        "test",
    ] {
        assert!(names.contains(&want), "missing built-in disk {want}");
    }
    let described = library::describe();
    assert_eq!(described.len(), names.len());
    assert!(described.iter().all(|(_, d)| !d.is_empty() && !d.contains('\n')));
}

fn gb(name: &str) -> f64 {
    let spec = library::get(name).unwrap();
    Disk::new(spec.clone()).unwrap().capacity() as f64 * f64::from(spec.sector_bytes) / 1e9
}

fn seek(name: &str) -> SeekCurve {
    let spec = library::get(name).unwrap();
    SeekCurve::new(&spec.seek, spec.cylinders())
}

#[test]
fn cheetah18lp_matches_paper_000_table_2() {
    let spec = library::get("cheetah18lp").unwrap();
    assert_eq!(spec.cylinders(), 9772);
    assert_eq!(spec.rpm, 10025.0);
    let spt: Vec<u32> = spec.zones.iter().map(|z| z.sectors_per_track).collect();
    assert_eq!(spt.iter().max(), Some(&360));
    assert_eq!(spt.iter().min(), Some(&252));
    assert!((gb("cheetah18lp") - 9.1).abs() < 0.1, "{}", gb("cheetah18lp"));
    assert!((seek("cheetah18lp").average() / 1e6 - 5.2).abs() < 0.05);
}

#[test]
fn toshiba_mk156f_matches_paper_002_table_1() {
    let spec = library::get("toshiba_mk156f").unwrap();
    assert_eq!(spec.cylinders(), 815);
    assert_eq!(spec.surfaces, 10);
    assert_eq!(spec.zones.len(), 1);
    assert_eq!(spec.zones[0].sectors_per_track, 34);
    assert_eq!(spec.rpm, 3600.0);
    assert_eq!(spec.seek, freeblock_disk::SeekModel::ToshibaMk156f);
}

#[test]
fn wd800_matches_paper_003_table_1() {
    let spec = library::get("wd800").unwrap();
    assert_eq!(spec.rpm, 7200.0);
    // 78.15 GB as the paper counts it: 156,301,488 sectors = 78,150,744 KiB.
    assert_eq!(spec.block_count, Some(156_301_488));
    let s = seek("wd800");
    assert!((s.average() / 1e6 - 9.9).abs() < 0.05);
    assert!((s.full_stroke() as f64 / 1e6 - 21.0).abs() < 0.05);
    assert!((s.time(1) as f64 / 1e6 - 2.0).abs() < 1e-9);
}

#[test]
fn the_modern_drive_is_multi_terabyte_at_7200_rpm() {
    let spec = library::get("ultrastar_he8").unwrap();
    assert_eq!(spec.rpm, 7200.0);
    assert!(gb("ultrastar_he8") > 7999.0);
}

/// Paper 000 §5 ran its LFS on the Atlas 10K cut to one data surface: 1.5 GB.
#[test]
fn atlas10k_cut_to_one_surface_holds_a_sixth() {
    let full = Disk::new(library::get("atlas10k").unwrap()).unwrap();
    let spec = library::get("atlas10k").unwrap().with_surfaces(1).unwrap();
    assert_eq!(spec.surfaces, 1);
    assert_eq!(spec.name, "atlas10k-1s");
    let one = Disk::new(spec).unwrap();
    let gb = one.capacity() as f64 * 512.0 / 1e9;
    assert!((1.45..1.60).contains(&gb), "one surface holds {gb:.3} GB");
    let ratio = one.capacity() as f64 / full.capacity() as f64;
    assert!((ratio - 1.0 / 6.0).abs() < 0.005, "{ratio}");
    // Every LBN still maps to a sector and back.
    for lbn in (0..one.capacity()).step_by(9973) {
        let t = one.target(lbn).unwrap();
        assert!(t.cylinder < one.spec().cylinders());
    }
}

#[test]
fn a_cut_to_no_surfaces_or_more_than_the_drive_has_is_refused() {
    for n in [0, 7] {
        let e = library::get("atlas10k").unwrap().with_surfaces(n).unwrap_err().to_string();
        assert!(e.contains("surfaces"), "{e}");
    }
}
