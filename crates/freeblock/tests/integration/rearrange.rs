//! Adaptive block rearrangement (paper 002's policy) on the engine: bad settings are refused by
//! name. The reproduction's runs (the policy's effect, its moves served four ways) are tested in
//! `crates/freeblock-repro/tests/integration/p002_rearrangement.rs`.

use freeblock::layout::rearrange::policy::{Moves, Rearrange, RearrangeConfig};
use freeblock::layout::rearrange::AreaConfig;
use freeblock_disk::library;

#[test]
fn bad_settings_are_named() {
    let disk = library::get("toshiba_mk156f").map(|s| freeblock_disk::Disk::new(s).unwrap()).unwrap();
    let err = |c: RearrangeConfig| Rearrange::new(&disk, c).unwrap_err().to_string();
    let e = err(RearrangeConfig { area: AreaConfig { cylinders: 900, ..AreaConfig::default() }, ..RearrangeConfig::default() });
    assert!(e.contains("cylinders") && e.contains("900"), "{e}");
    let e = err(RearrangeConfig { area: AreaConfig { first_cylinder: Some(800), ..AreaConfig::default() }, ..RearrangeConfig::default() });
    assert!(e.contains("800"), "{e}");
    let e = err(RearrangeConfig { blocks: Some(5000), ..RearrangeConfig::default() });
    assert!(e.contains("5000") && e.contains("slots"), "{e}");
    let e = err(RearrangeConfig { period_s: f64::NAN, ..RearrangeConfig::default() });
    assert!(e.contains("period_s"), "{e}");
    let e = err(RearrangeConfig { moves: Moves::Free, area: AreaConfig { block_sectors: 0, ..AreaConfig::default() }, ..RearrangeConfig::default() });
    assert!(e.contains("block_sectors"), "{e}");
}
