//! The DiskSim importer: the built-in DiskSim drives are exactly what it produces, capacities
//! agree with DiskSim, and bad input is reported with file and line (or key).

use std::fs;

use freeblock_disk::{disksim, library, Disk, DiskSpec, SpecError};

use crate::{crate_dir, disksim_models, scratch_dir, DiskSimDrive, DISKSIM_DRIVES};

/// What the library keeps for an imported drive: the import with a library name, a readable
/// description and the provenance note.
fn as_builtin(drive: &DiskSimDrive, mut spec: DiskSpec) -> DiskSpec {
    let gb = spec.block_count.unwrap_or(0) as f64 * f64::from(spec.sector_bytes) / 1e9;
    spec.name = drive.name.into();
    spec.description = format!("{} (DiskSim 4.0 model), {gb:.1} GB, {} RPM", drive.model, spec.rpm);
    spec.source = format!("{}; (c) Carnegie Mellon University Parallel Data Lab, see disks/COPYING", spec.source);
    spec
}

/// Re-imports every DiskSim drive from `../shared/disksim-models` (when present) and checks the
/// checked-in TOML agrees. With `FREEBLOCK_REGEN_DISKS=1` it rewrites the TOML instead.
#[test]
fn builtin_disksim_drives_match_a_fresh_import() {
    let Some(models) = disksim_models() else {
        eprintln!("skipped: ../shared/disksim-models not found");
        return;
    };
    let regen = std::env::var_os("FREEBLOCK_REGEN_DISKS").is_some();
    for drive in DISKSIM_DRIVES {
        let spec = disksim::import(&models.join(drive.diskspecs)).unwrap_or_else(|e| panic!("{}: {e}", drive.name));
        let spec = as_builtin(drive, spec);
        if regen {
            let text = format!(
                "# Generated from DiskSim 4.0 valid/{} by freeblock_disk::disksim::import; do not edit.\n\
                 # Regenerate: FREEBLOCK_REGEN_DISKS=1 cargo test -p freeblock-disk --test disk disksim_import\n\
                 # The DiskSim data is Copyright (c) Carnegie Mellon University, 2001-2008: see COPYING here.\n\n{}",
                drive.diskspecs,
                spec.to_toml_string()
            );
            fs::write(crate_dir().join("disks").join(format!("{}.toml", drive.name)), text).unwrap();
        } else {
            let builtin = library::get(drive.name).unwrap();
            assert!(builtin == spec, "{}: the built-in TOML differs from a fresh import; regenerate it", drive.name);
        }
    }
}

/// The zones hold exactly what DiskSim's g1 layout puts in them (its `blksinband`), and the
/// exported capacity is the model's `Block count`.
#[test]
fn capacities_match_disksim() {
    for drive in DISKSIM_DRIVES {
        let spec = library::get(drive.name).unwrap();
        assert_eq!(spec.block_count, Some(drive.block_count), "{}", drive.name);
        let disk = Disk::new(spec).unwrap();
        let in_zones: u64 = disk.layout().zone_table().iter().map(|z| z.4).sum();
        assert_eq!(in_zones, drive.zone_lbns, "{}: LBNs held by the zones", drive.name);
        assert_eq!(disk.capacity(), drive.block_count, "{}: capacity", drive.name);
    }
}

/// Every `.diskspecs` and `.model` file in the DiskSim folder imports and builds a disk exporting
/// exactly the model's `Block count`.
#[test]
fn every_disksim_file_imports() {
    let Some(models) = disksim_models() else { return };
    let mut seen = 0;
    for entry in fs::read_dir(&models).unwrap() {
        let path = entry.unwrap().path();
        if !matches!(path.extension().and_then(|e| e.to_str()), Some("diskspecs" | "model")) {
            continue;
        }
        let spec = disksim::import(&path).unwrap_or_else(|e| panic!("{e}"));
        let text = fs::read_to_string(if path.extension().unwrap() == "model" { path.clone() } else { path.with_extension("model") });
        let disk = Disk::new(spec.clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(Some(disk.capacity()), spec.block_count, "{}", path.display());
        if let Ok(text) = text {
            let count = text.lines().find_map(|l| l.trim().strip_prefix("Block count =")).unwrap();
            assert_eq!(disk.capacity(), count.trim().trim_end_matches(',').parse::<u64>().unwrap(), "{}", path.display());
        }
        seen += 1;
    }
    assert!(seen >= 26, "only {seen} DiskSim files found");
}

#[test]
fn a_model_file_imports_on_its_own() {
    let Some(models) = disksim_models() else { return };
    let spec = disksim::import(&models.join("hp_c2249a.model")).unwrap();
    let builtin = library::get("hp_c2249a").unwrap();
    assert_eq!(spec.name, "hp_c2249a");
    assert_eq!(spec.zones, builtin.zones);
    assert_eq!(spec.seek, builtin.seek);
    assert_eq!(spec.controller, Default::default());
}

const MODEL: &str = "dm_disk TINY {
   Number of data surfaces = 2,
   Number of cylinders = 10,
   Block count = 380,
   Mechanical Model = dm_mech_g1 {
      Seek type = hplplus10,
      HPL seek equation values = [ 300, 3.8, 0.33, 7.7, 0.0059, -1.0 ],
      First ten seek times = [ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 ],
      Head switch time = 0.5,
      Rotation speed (in rpms) = 5400
   },
   Layout Model = dm_layout_g1 {
      LBN-to-PBN mapping scheme = 0,
      Sparing scheme used = 3,
      Zones = [
         dm_layout_g1_zone {
            First cylinder number = 0,
            Last cylinder number = 9,
            Blocks per track = 20,
            Skew for track switch = 2,
            Skew for cylinder switch = 4,
            Number of spares = 1,
            slips = [ 5 ]
         }
      ]
   }
}
";

fn write_model(tag: &str, text: &str) -> std::path::PathBuf {
    let dir = scratch_dir(tag);
    let path = dir.join("tiny.model");
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_small_model_imports() {
    let spec = disksim::import(&write_model("ok", MODEL)).unwrap();
    assert_eq!(spec.name, "tiny");
    assert_eq!(spec.zones[0].slips, vec![5]);
    let disk = Disk::new(spec).unwrap();
    assert_eq!(disk.capacity(), 380);
}

#[test]
fn a_malformed_line_names_file_and_line() {
    let bad = MODEL.replace("Head switch time = 0.5,", "Head switch time 0.5,");
    let path = write_model("malformed", &bad);
    let e = disksim::import(&path).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, SpecError::DiskSim { line: 9, .. }), "{msg}");
    assert!(msg.starts_with(&format!("{}:9: expected `key = value`", path.display())), "{msg}");
}

#[test]
fn a_missing_required_key_names_file_and_key() {
    let bad = MODEL.replace("      Rotation speed (in rpms) = 5400\n", "      Percent error in rpms = 0.0\n");
    let path = write_model("missing", &bad);
    let msg = disksim::import(&path).unwrap_err().to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("missing required parameter `Rotation speed (in rpms)`"), "{msg}");
}

#[test]
fn a_missing_seek_file_is_reported_where_it_is_named() {
    let bad = MODEL.replace("Seek type = hplplus10,", "Seek type = extracted,\n      Full seek curve = nowhere.seek,");
    let path = write_model("noseek", &bad);
    let msg = disksim::import(&path).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("{}:7: cannot read `Full seek curve = nowhere.seek`", path.display())), "{msg}");
}

#[test]
fn a_bad_sourced_file_is_reported_in_that_file() {
    let dir = scratch_dir("source");
    fs::write(dir.join("tiny.model"), MODEL.replace("Block count = 380,", "Block count = = 380,")).unwrap();
    fs::write(dir.join("tiny.diskspecs"), "disksim_disk TINY {\n  Model = source tiny.model,\n  Bulk sector transfer time = 0.1\n}\n").unwrap();
    let msg = disksim::import(&dir.join("tiny.diskspecs")).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("{}:4: expected a value for `Block count`", dir.join("tiny.model").display())), "{msg}");
    fs::write(dir.join("tiny.diskspecs"), "disksim_disk TINY {\n  Model = source gone.model\n}\n").unwrap();
    let msg = disksim::import(&dir.join("tiny.diskspecs")).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("{}:2: cannot read `source gone.model`", dir.join("tiny.diskspecs").display())), "{msg}");
}

#[test]
fn unsupported_schemes_are_named() {
    let bad = MODEL.replace("LBN-to-PBN mapping scheme = 0,", "LBN-to-PBN mapping scheme = 2,");
    let msg = disksim::import(&write_model("mapping", &bad)).unwrap_err().to_string();
    assert!(msg.contains(":13: unsupported `LBN-to-PBN mapping scheme` 2"), "{msg}");
}

/// DiskSim 4.0 applies a negative "Add. write settling delay" (write seeks shorter than the
/// curve): so does the import, and a settle that would make a move negative is refused.
#[test]
fn a_negative_write_settle_shortens_write_moves() {
    let model = MODEL.replace("Head switch time = 0.5,", "Head switch time = 0.5,\n      Add. write settling delay = -0.3,");
    let spec = disksim::import(&write_model("negsettle", &model)).unwrap();
    assert_eq!(spec.write_settle_ms, -0.3);
    let disk = Disk::new(spec.clone()).unwrap();
    let from = freeblock_disk::HeadState { cylinder: 0, surface: 0 };
    let read = disk.move_ns(from, 1, 0, freeblock_disk::Op::Read);
    let write = disk.move_ns(from, 1, 0, freeblock_disk::Op::Write);
    assert_eq!(read - write, 300_000, "one-cylinder seek: read {read} ns, write {write} ns");
    // The head switch (0.5 ms) is the shortest move: −0.6 ms would make it negative.
    let too_much = DiskSpec { write_settle_ms: -0.6, ..spec };
    let e = Disk::new(too_much).unwrap_err().to_string();
    assert!(e.contains("write_settle_ms") && e.contains("negative"), "{e}");
}

/// "Immediate buffer read/write" are read but, as in DiskSim 4.0, not applied; the import says
/// so in `source`.
#[test]
fn immediate_buffer_access_is_noted_not_applied() {
    let Some(models) = disksim_models() else {
        eprintln!("skipped: ../shared/disksim-models not found");
        return;
    };
    let spec = disksim::import(&models.join("atlas10k.diskspecs")).unwrap();
    assert!(!spec.cache.zero_latency_reads && !spec.cache.zero_latency_writes);
    assert!(spec.source.contains("`Immediate buffer read` not applied"), "{}", spec.source);
    assert!(spec.cache.combine_sequential_writes && spec.cache.keep_read_data);
    let st = disksim::import(&models.join("st41601n.diskspecs")).unwrap();
    assert!(!st.cache.keep_read_data, "Read-ahead over requested = -1");
}
