//! Integration tests of the disk model's data: the built-in library, the LBN ⇄ PBN mapping of
//! every built-in disk, the DiskSim importer and spec validation. One binary (see the nexosim
//! note in STYLE.md); files are named by behaviour.

mod back_to_back;
mod buffer;
mod builtins;
mod disksim_import;
mod g4_import;
mod hostile_specs;
mod mapping_roundtrip;
mod modern_drives;
mod remapped_defects;
mod seek_asymmetry;
mod spec_errors;
mod write_cache_spec;

use std::path::PathBuf;

/// A DiskSim 4.0 drive of the built-in library.
pub struct DiskSimDrive {
    /// Library name.
    pub name: &'static str,
    /// The `.diskspecs` file in the DiskSim `valid/` folder.
    pub diskspecs: &'static str,
    /// Maker and model, for the description.
    pub model: &'static str,
    /// The model's `Block count`.
    pub block_count: u64,
    /// What DiskSim's own g1 layout puts in the zones (the sum of its `blksinband`). Where it
    /// exceeds `Block count`, the drive exports fewer sectors than its zones hold (capacity
    /// clipped to a standard size); `block_count` stops the LBNs there.
    pub zone_lbns: u64,
}

pub const DISKSIM_DRIVES: &[DiskSimDrive] = &[
    DiskSimDrive { name: "atlas10k", diskspecs: "atlas10k.diskspecs", model: "Quantum Atlas 10K", block_count: 17_938_986, zone_lbns: 17_966_953 },
    DiskSimDrive {
        name: "atlas_iii",
        diskspecs: "atlas_III.diskspecs",
        model: "Quantum Atlas III QM39100TD-SW",
        block_count: 17_783_250,
        zone_lbns: 17_797_944,
    },
    DiskSimDrive {
        name: "barracuda",
        diskspecs: "barracuda.diskspecs",
        model: "Seagate Barracuda ST32171W",
        block_count: 4_110_000,
        zone_lbns: 4_217_670,
    },
    DiskSimDrive {
        name: "cheetah4lp",
        diskspecs: "cheetah4LP.diskspecs",
        model: "Seagate Cheetah 4LP ST34501N",
        block_count: 8_887_200,
        zone_lbns: 8_887_940,
    },
    DiskSimDrive {
        name: "cheetah9lp",
        diskspecs: "cheetah9LP.diskspecs",
        model: "Seagate Cheetah 9LP ST39102LW",
        block_count: 17_783_240,
        zone_lbns: 17_918_387,
    },
    DiskSimDrive { name: "dec_rz26", diskspecs: "dec_rz26.diskspecs", model: "DEC RZ26", block_count: 2_050_860, zone_lbns: 2_050_860 },
    DiskSimDrive { name: "hp_c2247a", diskspecs: "hp_c2247a.diskspecs", model: "HP C2247A", block_count: 2_054_864, zone_lbns: 2_054_864 },
    DiskSimDrive { name: "hp_c2249a", diskspecs: "hp_c2249a.diskspecs", model: "HP C2249A", block_count: 2_687_632, zone_lbns: 2_687_632 },
    DiskSimDrive { name: "hp_c2490a", diskspecs: "hp_c2490a.diskspecs", model: "HP C2490A", block_count: 4_165_272, zone_lbns: 4_165_272 },
    DiskSimDrive { name: "hp_c3323a", diskspecs: "hp_c3323a.diskspecs", model: "HP C3323A", block_count: 2_056_008, zone_lbns: 2_056_008 },
    DiskSimDrive {
        name: "ibm18es",
        diskspecs: "ibm18es.diskspecs",
        model: "IBM Ultrastar 18ES DNES-309170W",
        block_count: 17_916_240,
        zone_lbns: 18_033_753,
    },
    DiskSimDrive { name: "st41601n", diskspecs: "st41601n.diskspecs", model: "Seagate Elite ST41601N", block_count: 2_676_846, zone_lbns: 2_676_846 },
];

/// The crate's folder.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/disksim-models` next to the repository, if present.
pub fn disksim_models() -> Option<PathBuf> {
    let dir = crate_dir().join("../../../shared/disksim-models");
    dir.is_dir().then_some(dir)
}

/// A fresh scratch folder for this test process.
pub fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("freeblock-disk-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
