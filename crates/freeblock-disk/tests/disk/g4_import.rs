//! Western Digital's DiskSim fork (issue 34): the 4 TB g4 model imported as its files define it
//! (banded serpentine layout, sectors past 2^32, its measured seek table), the dual-seek example's
//! write curve used by writes, and bad g4 / seek input reported by file, line and field.
//!
//! The expectations are read from the fork's files themselves (`../shared/disksim-models-wd`),
//! parsed here independently of the importer, plus the totals issue 34 quotes.

use std::fs;
use std::path::PathBuf;

use freeblock_disk::{disksim, library, Disk, DiskSpec, HeadState, Mapping, Op, Pbn, SeekCurve, SeekModel, SpecError};

use crate::{crate_dir, scratch_dir};

/// `../shared/disksim-models-wd` next to the repository, if present.
fn wd_models() -> Option<PathBuf> {
    let dir = crate_dir().join("../../../shared/disksim-models-wd");
    dir.is_dir().then_some(dir)
}

const G4_DISKSPECS: &str = "test_debug_LBA_64bit/G4_LBA_64bit_4T.diskspecs";

/// What the library keeps: the import with a library name, description and provenance.
fn as_builtin(mut spec: DiskSpec) -> DiskSpec {
    spec.name = "wd_g4_4t".into();
    spec.description = "Western Digital DiskSim fork's g4 4 TB model (banded serpentine layout, 7200 RPM), 3.9 TB".into();
    spec.source = format!("{}; Western Digital DiskSim fork (westerndigitalcorporation/DiskSim, EXPERIMENTAL/Linux_64bit_LBA_20130807_Generic), see disks/COPYING.wd", spec.source);
    spec
}

/// Re-imports the g4 model (when the files are at hand) and checks the built-in TOML agrees.
/// With `FREEBLOCK_REGEN_DISKS=1` it rewrites the TOML instead.
#[test]
fn builtin_wd_g4_matches_a_fresh_import() {
    let Some(wd) = wd_models() else {
        eprintln!("skipped: ../shared/disksim-models-wd not found");
        return;
    };
    let spec = as_builtin(disksim::import(&wd.join(G4_DISKSPECS)).unwrap());
    if std::env::var_os("FREEBLOCK_REGEN_DISKS").is_some() {
        let text = format!(
            "# Generated from Western Digital's DiskSim fork, {G4_DISKSPECS} (with its .model, .layout and .seeks),\n\
             # by freeblock_disk::disksim::import; do not edit.\n\
             # Regenerate: FREEBLOCK_REGEN_DISKS=1 cargo test -p freeblock-disk --test disk g4_import\n\
             # The data is Western Digital's (BSD-3-Clause), with Sandia and CMU notices: see COPYING.wd here.\n\n{}",
            one_line_pairs(&spec.to_toml_string())
        );
        fs::write(crate_dir().join("disks/wd_g4_4t.toml"), text).unwrap();
    } else {
        assert!(library::get("wd_g4_4t").unwrap() == spec, "the built-in wd_g4_4t differs from a fresh import; regenerate it");
    }
}

/// The pretty TOML writer puts each `[distance, ms]` seek point on four lines; one line each keeps
/// the file under the fuzzer's 60 KiB seed limit (it seeds from every library TOML).
fn one_line_pairs(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "[" && i + 3 < lines.len() && lines[i + 3].trim() == "]," {
            out.push_str(&format!("    [{}, {}],\n", lines[i + 1].trim().trim_end_matches(','), lines[i + 2].trim().trim_end_matches(',')));
            i += 4;
        } else {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
        }
    }
    out
}

/// One index entry of the `.layout` file, read with a plain split (not the importer's parser).
#[derive(Debug, Clone)]
struct FileEntry {
    lbn: u64,
    cyl: i64,
    off: f64,
    len: u64,
    alen: f64,
    runlen: u64,
    cylrunlen: i64,
    child: usize,
    head: Option<u32>,
}

/// The `.layout`'s index nodes, in file order (the last is the root), and its track patterns' sectors per track.
fn read_layout_file(text: &str) -> (Vec<Vec<FileEntry>>, Vec<u32>) {
    let mut nodes: Vec<Vec<FileEntry>> = Vec::new();
    let mut patterns = Vec::new();
    let mut in_tp = false;
    for raw in text.lines() {
        let line = raw.split('#').next().unwrap().trim();
        if raw.trim_start().starts_with("TP") {
            in_tp = true;
            continue;
        }
        if raw.trim_start().starts_with("IDX") {
            in_tp = false;
            continue;
        }
        if raw.trim_start().starts_with('[') {
            nodes.push(Vec::new());
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        if in_tp && f.len() == 3 {
            patterns.push(f[2].parse().unwrap());
        } else if f.len() >= 10 && (f[8] == "TRACK" || f[8] == "IDX") {
            nodes.last_mut().unwrap().push(FileEntry {
                lbn: f[0].parse().unwrap(),
                cyl: f[1].parse().unwrap(),
                off: f[2].parse().unwrap(),
                len: f[3].parse().unwrap(),
                alen: f[5].parse().unwrap(),
                runlen: f[6].parse().unwrap(),
                cylrunlen: f[7].parse().unwrap(),
                child: f[9].parse().unwrap(),
                head: f.get(10).map(|h| h.parse().unwrap()),
            });
        }
    }
    (nodes, patterns)
}

/// Walks every zone, every band pair and every band of the file's tree: the first and last track
/// of each band (its first and last LBN) map where the file puts them, with the skew it gives,
/// and map back. Totals as issue 34 quotes them.
#[test]
fn g4_mapping_follows_the_layout_file_at_every_zone_and_band_boundary() {
    let Some(wd) = wd_models() else {
        eprintln!("skipped: ../shared/disksim-models-wd not found");
        return;
    };
    let spec = library::get("wd_g4_4t").unwrap();
    assert_eq!(spec.mapping, Mapping::Banded { band_cylinders: 128 });
    let disk = Disk::new(spec.clone()).unwrap();
    let layout = disk.layout();
    assert_eq!(layout.capacity(), 7_542_225_920, "mapped sectors");
    assert_eq!(layout.cylinders(), 303_104, "mapped cylinders");
    assert_eq!(layout.surfaces(), 10);
    assert!(layout.capacity() > 1 << 32);

    let text = fs::read_to_string(wd.join("test_debug_LBA_64bit/G4_LBA_64bit_4T.layout")).unwrap();
    let (nodes, patterns) = read_layout_file(&text);
    let root = nodes.last().unwrap();
    assert_eq!(root.len(), 59, "zones");
    assert_eq!(layout.zone_table().len(), 59);
    let (mut bands, mut checked, mut lbn_end) = (0u64, 0u64, 0u64);
    let angle_of = |pbn: Pbn| layout.sector_angle(pbn);
    for (zone, r) in root.iter().enumerate() {
        let (first_cyl, last_cyl, spt, first_lbn, lbns) = layout.zone_table()[zone];
        assert_eq!((u64::from(first_cyl), first_lbn, lbns), (r.cyl as u64, r.lbn, r.runlen), "zone {zone}");
        assert_eq!(i64::from(last_cyl) + 1, r.cyl + r.cylrunlen, "zone {zone}: last cylinder");
        lbn_end = lbn_end.max(r.lbn + r.runlen);
        for u in 0..r.runlen / r.len {
            for e in &nodes[r.child] {
                let tracks = e.cylrunlen.unsigned_abs();
                assert_eq!(tracks, 128, "bands of 128 cylinders per head");
                assert_eq!(u32::try_from(e.len).unwrap(), patterns[e.child]);
                assert_eq!(spt, patterns[e.child], "zone {zone}: sectors per track");
                let dir = e.cylrunlen.signum();
                let start = r.lbn + u * r.len + e.lbn;
                let cyl0 = r.cyl + i64::try_from(u).unwrap() * 256 + e.cyl;
                for i in [0, 1, tracks - 1] {
                    let cylinder = u32::try_from(cyl0 + dir * i64::try_from(i).unwrap()).unwrap();
                    let surface = e.head.unwrap();
                    for (j, sector) in [(0, 0), (e.len - 1, spt - 1)] {
                        let lbn = start + i * e.len + j;
                        let pbn = Pbn { cylinder, surface, sector };
                        assert_eq!(layout.lbn_to_pbn(lbn).unwrap(), pbn, "zone {zone}, pair {u}, head {surface}: LBN {lbn}");
                        assert_eq!(layout.pbn_to_lbn(pbn), Some(lbn), "zone {zone}: {pbn:?}");
                        checked += 1;
                    }
                    // Sector 0 holds the track's first LBN, at angle off + instances·alen.
                    let want = (r.off + u as f64 * r.alen + e.off + i as f64 * e.alen).fract();
                    let got = angle_of(Pbn { cylinder, surface, sector: 0 });
                    assert!((got - want).abs() < 1e-9, "zone {zone}, pair {u}, head {surface}, step {i}: angle {got} against {want}");
                    assert!((e.alen - 0.141669).abs() < 1e-12);
                }
                bands += 1;
            }
        }
    }
    assert_eq!(lbn_end, layout.capacity());
    assert!(layout.lbn_to_pbn(lbn_end).is_err());
    assert_eq!(bands, 303_104 / 128 * 10, "band runs walked");
    println!("g4: {} sectors, {} cylinders, 59 zones; {bands} bands of 128 cylinders walked, {checked} LBN ⇄ sector pairs checked", layout.capacity(), layout.cylinders());
}

/// The seek table is imported as it is: every one of its 1,792 points (dips included) is the
/// model's seek time at that distance, as far as the disk reaches.
#[test]
fn g4_seek_table_is_imported_as_measured() {
    let Some(wd) = wd_models() else {
        eprintln!("skipped: ../shared/disksim-models-wd not found");
        return;
    };
    let text = fs::read_to_string(wd.join("test_debug_LBA_64bit/G4_LBA_64bit_4T.seeks")).unwrap();
    let points: Vec<(u32, f64)> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (d, t) = l.split_once(',').unwrap();
            (d.trim().parse().unwrap(), t.trim().parse().unwrap())
        })
        .collect();
    assert_eq!(points.len(), 1792);
    let drops = points.windows(2).filter(|w| w[1].1 < w[0].1).count();
    let spec = library::get("wd_g4_4t").unwrap();
    let SeekModel::Table { points: imported } = &spec.seek else { panic!("not a table: {:?}", spec.seek) };
    assert_eq!(imported.len(), 1792);
    assert!(spec.write_seek.is_none(), "the g4 file has one time column");
    let disk = Disk::new(spec).unwrap();
    let mut compared = 0;
    for &(d, ms) in &points {
        if d < disk.layout().cylinders() {
            assert_eq!(disk.seek_curve().time(d), (ms * 1e6).round() as u64, "distance {d}");
            compared += 1;
        }
    }
    let average = disk.seek_curve().average() / 1e6;
    println!("g4 seek table: {} points ({compared} within the 303,104 cylinders), {drops} drops kept; average seek {average:.3} ms", points.len());
    assert!(drops > 100, "the table is not monotone and stays so");
}

/// The Maxtor dual-seek file's fourth column is a write curve (read + 0.15 ms at every one of
/// its 350 distances), and a drive given it seeks by it for writes and by the read curve for reads.
#[test]
fn dual_seek_write_curve_is_used_by_writes() {
    let Some(wd) = wd_models() else {
        eprintln!("skipped: ../shared/disksim-models-wd not found");
        return;
    };
    let (read, write) = disksim::read_seek_file(&wd.join("dualseek_example/maxtor300g_dual.seek")).unwrap();
    let (SeekModel::Table { points: r }, Some(SeekModel::Table { points: w })) = (&read, &write) else { panic!("expected two tables") };
    assert_eq!(r.len(), 350);
    assert!(r.iter().zip(w).all(|(a, b)| a[0] == b[0] && ((b[1] - a[1]) - 0.15).abs() < 1e-9), "write = read + 0.15 ms");
    // The single-curve file of the same drive reads as one curve.
    let (single, none) = disksim::read_seek_file(&wd.join("dualseek_example/maxtor300g.seek")).unwrap();
    assert!(none.is_none());
    let SeekModel::Table { points: s } = &single else { panic!() };
    assert_eq!(s.len(), 350);

    // The g4 geometry with the Maxtor curves (beyond 80,000 cylinders the last segments extend), cache off.
    let mut spec = library::get("wd_g4_4t").unwrap().without_cache();
    spec.seek = read.clone();
    spec.write_seek = write.clone();
    let dual = Disk::new(spec.clone()).unwrap();
    let single_disk = Disk::new(DiskSpec { write_seek: None, ..spec }).unwrap();
    let head = HeadState { cylinder: 0, surface: 0 };
    for d in [1u32, 10, 100, 1000, 10_000, 40_000, 80_000] {
        let read_ns = dual.move_ns(head, d, 0, Op::Read);
        let write_ns = dual.move_ns(head, d, 0, Op::Write);
        assert_eq!(write_ns - read_ns, 150_000, "distance {d}");
        assert_eq!(single_disk.move_ns(head, d, 0, Op::Write), read_ns, "no write curve: writes seek as reads");
    }
    // Whole accesses: the same LBN, from the same place, read then written.
    let mut scratch = Vec::new();
    let lbn = 5_000_000_000;
    let r = dual.access(head, 0, lbn, 8, Op::Read, &mut scratch).unwrap();
    let wr = dual.access(head, 0, lbn, 8, Op::Write, &mut scratch).unwrap();
    assert_eq!(wr.breakdown.seek - r.breakdown.seek, 150_000, "read {:?} write {:?}", r.breakdown, wr.breakdown);
    // Over the Maxtor's own 80,512 cylinders (the fork's README computes ≈4.84 / ≈4.99 ms).
    let maxtor = SeekCurve::new(&read, 80_512).with_write_curve(&write.unwrap());
    let (read_avg, write_avg) = (maxtor.average() / 1e6, maxtor.write_average() / 1e6);
    println!("dual seek, Maxtor Atlas 10K V (80,512 cylinders): read average {read_avg:.3} ms, write average {write_avg:.3} ms (README: 4.84 / 4.99)");
    assert!((write_avg - read_avg - 0.15).abs() < 1e-3);
}

/// The Maxtor's extracted layout has slips, per-head sectors per track and single-track entries:
/// refused by name (file and line), not approximated.
#[test]
fn maxtor_layout_is_refused_by_name() {
    let Some(wd) = wd_models() else {
        eprintln!("skipped: ../shared/disksim-models-wd not found");
        return;
    };
    let e = disksim::import(&wd.join("dualseek_example/maxtor300g.diskspecs")).unwrap_err().to_string();
    assert!(e.contains("maxtor300g-layout.model:") && e.contains("`Slips`"), "{e}");
}

/// A scratch copy of the g4 files with `edit` applied to the `.layout` text.
fn g4_with_layout(tag: &str, edit: impl Fn(&str) -> String) -> Option<PathBuf> {
    let wd = wd_models()?;
    let dir = scratch_dir(tag);
    for f in ["G4_LBA_64bit_4T.diskspecs", "G4_LBA_64bit_4T.model", "G4_LBA_64bit_4T.seeks", "G4_LBA_64bit_4T.layout"] {
        fs::copy(wd.join("test_debug_LBA_64bit").join(f), dir.join(f)).unwrap();
    }
    let layout = dir.join("G4_LBA_64bit_4T.layout");
    let text = fs::read_to_string(&layout).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    fs::write(&layout, edited).unwrap();
    Some(dir.join("G4_LBA_64bit_4T.diskspecs"))
}

/// The 1-based line of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn g4_bands_overlapping_in_lbns_are_an_error_naming_the_line() {
    let needle = "            393216,      127,";
    let Some(path) = g4_with_layout("g4-overlap", |t| t.replacen(needle, "            393000,      127,", 1)) else { return };
    let text = fs::read_to_string(path.with_extension("layout")).unwrap();
    let e = disksim::import(&path).unwrap_err().to_string();
    let line = line_of(&text, "            393000,      127,");
    assert!(e.contains(&format!("G4_LBA_64bit_4T.layout:{line}:")) && e.contains("`lbn` 393000 overlaps") && e.contains("bands overlap"), "{e}");
}

#[test]
fn g4_bands_overlapping_on_a_surface_are_an_error_naming_the_line() {
    // Head 1's band claims head 0's cylinders: same LBN tiling, same cylinders, same surface.
    let old = "TRACK,      0,     1,\n            786432,";
    let Some(path) = g4_with_layout("g4-overlap-head", |t| t.replacen(old, "TRACK,      0,     0,\n            786432,", 1)) else { return };
    let e = disksim::import(&path).unwrap_err().to_string();
    assert!(e.contains("G4_LBA_64bit_4T.layout:") && e.contains("overlap cylinders 0..127") && e.contains("on head 0"), "{e}");
}

#[test]
fn g4_bands_leaving_declared_sectors_unmapped_are_an_error_naming_the_line() {
    // Drop head 0's last band of node 0: the root declares 7,864,320 LBNs per instance of it.
    let last = "           7471104,      255,   0.000000,     3072,        1,   0.141669,     393216,        -128,      TRACK,      0,     0 \n";
    let Some(path) = g4_with_layout("g4-hole", |t| t.replacen(last, "", 1)) else { return };
    let e = disksim::import(&path).unwrap_err().to_string();
    assert!(e.contains("G4_LBA_64bit_4T.layout:") && e.contains("leave LBNs 7471104..7864319 of the 7864320 it declares unmapped"), "{e}");
    // A hole in the middle: one band's run shortened.
    let Some(path) = g4_with_layout("g4-gap", |t| t.replacen("393216,        -128,      TRACK,      0,     1", "390144,        -127,      TRACK,      0,     1", 1)) else { return };
    let text = fs::read_to_string(path.with_extension("layout")).unwrap();
    let e = disksim::import(&path).unwrap_err().to_string();
    let line = line_of(&text, "            786432,        0,");
    assert!(e.contains(&format!("G4_LBA_64bit_4T.layout:{line}:")) && e.contains("leaves LBNs 783360..786431 unmapped"), "{e}");
}

/// A seek file in a scratch folder.
fn seek_file(tag: &str, text: &str) -> PathBuf {
    let p = scratch_dir(tag).join("bad.seek");
    fs::write(&p, text).unwrap();
    p
}

#[test]
fn seek_table_with_a_negative_time_is_an_error_naming_line_and_column() {
    let p = seek_file("seek-neg", "Seek distances measured: 3\n1, 0.5, 0.01, 0.6\n2, 0.7, 0.02, -0.1\n3, 0.8, 0.02, 0.9\n");
    let e = disksim::read_seek_file(&p).unwrap_err();
    assert!(matches!(&e, SpecError::DiskSim { line: 3, .. }), "{e:?}");
    assert!(e.to_string().contains("bad.seek:3: column 4 (write time (ms)) is negative: -0.1"), "{e}");
    let p = seek_file("seek-neg-read", "1, -0.5\n2, 0.7\n");
    let e = disksim::read_seek_file(&p).unwrap_err().to_string();
    assert!(e.contains("bad.seek:1: column 2 (read time (ms)) is negative"), "{e}");
}

#[test]
fn seek_table_with_distances_out_of_order_is_an_error_naming_line_and_column() {
    let p = seek_file("seek-order", "Seek distances measured: 3\n1, 0.5\n5, 0.7\n4, 0.8\n");
    let e = disksim::read_seek_file(&p).unwrap_err().to_string();
    assert!(e.contains("bad.seek:4: column 1 (distance) 4 does not follow 5"), "{e}");
    let p = seek_file("seek-columns", "1, 0.5, 0.01, 0.6\n2, 0.7\n");
    let e = disksim::read_seek_file(&p).unwrap_err().to_string();
    assert!(e.contains("bad.seek:2: has 2 columns where the lines before have 4"), "{e}");
}

/// The stated choice for the g4 `.diskspecs`'s `Bulk sector transfer time = -0.015`: taken as 0,
/// with a note naming the file, line and field in the spec's `source`; a negative
/// `controller.bus_sector_ms` in a TOML spec is an error naming the field.
#[test]
fn negative_bulk_transfer_time_is_taken_as_zero_and_said() {
    let Some(wd) = wd_models() else {
        eprintln!("skipped: ../shared/disksim-models-wd not found");
        return;
    };
    let spec = disksim::import(&wd.join(G4_DISKSPECS)).unwrap();
    assert_eq!(spec.controller.bus_sector_ms, 0.0);
    assert!(spec.source.contains("`Bulk sector transfer time` -0.015 ms (G4_LBA_64bit_4T.diskspecs:5) is negative: taken as 0"), "{}", spec.source);
    let mut toml = library::toml_text("test").unwrap().to_string();
    toml.push_str("\n[controller]\nbus_sector_ms = -0.015\n");
    let e = DiskSpec::from_toml_str(&toml, "neg.toml").unwrap_err().to_string();
    assert!(e.contains("neg.toml") && e.contains("controller.bus_sector_ms") && e.contains("non-negative"), "{e}");
}

/// A `[write_seek]` table in a TOML spec is checked as `[seek]` is, errors naming `write_seek.…`.
#[test]
fn write_seek_in_toml_is_checked_like_seek() {
    let base = library::toml_text("test").unwrap();
    let e = DiskSpec::from_toml_str(&format!("{base}\n[write_seek]\ntype = \"table\"\npoints = [[1.0, 0.5], [2.0, -0.1]]\n"), "w.toml").unwrap_err().to_string();
    assert!(e.contains("w.toml") && e.contains("write_seek.points[1]") && e.contains("non-negative"), "{e}");
    let e = DiskSpec::from_toml_str(&format!("{base}\n[write_seek]\ntype = \"table\"\npoints = [[5.0, 0.5], [2.0, 0.7]]\n"), "w.toml").unwrap_err().to_string();
    assert!(e.contains("write_seek.points[1]") && e.contains("strictly increasing"), "{e}");
    let ok = DiskSpec::from_toml_str(&format!("{base}\n[write_seek]\ntype = \"table\"\npoints = [[1.0, 0.9], [2.0, 1.2]]\n"), "w.toml").unwrap();
    let disk = Disk::new(ok).unwrap();
    assert!(disk.seek_curve().has_write_curve());
    assert_eq!(disk.seek_curve().write_time(1), 900_000);
}
