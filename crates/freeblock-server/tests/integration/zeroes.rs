//! WRITE_ZEROES under a layout (issue 37 §2): the places the policy chooses are zeroed by
//! punching holes, not by writing zero bytes, and the zeroes are what reads return, across a
//! restart; blocks outside the range keep their bytes.

use crate::support;

use freeblock::experiment::LayoutSpec;
use freeblock_server::check::check_store;
use freeblock_server::Pace;
use support::client::Client;
use support::{config, start, Scratch};

fn pattern(b: u64) -> Vec<u8> {
    (0..4096u64).map(|i| (b.wrapping_mul(53) ^ i.wrapping_mul(13)) as u8 | 1).collect()
}

/// KiB the file system allocated for `path`.
fn allocated_kib(path: &std::path::Path) -> u64 {
    std::os::unix::fs::MetadataExt::blocks(&std::fs::metadata(path).unwrap()) / 2
}

#[test]
fn zeroes_under_a_layout_are_holes_and_read_back_as_zeroes() {
    // Range writes place a large write in time quadratic in its size (issue 37 §2, not yet
    // fixed): 1 MiB of zeroes there, 64 MiB (two pieces of 32 MiB) under FS2.
    for (layout, length) in [("range_writes", 1u32 << 20), ("fs2", 64 << 20)] {
        let dir = Scratch::new(&format!("zeroes-{layout}"));
        let store = dir.path("disk.img");
        let mut cfg = config("hp_c2247a", &store, Pace::None);
        cfg.layout = Some(toml::from_str::<LayoutSpec>(&format!("type = \"{layout}\"")).unwrap());
        let server = start(cfg.clone());
        let mut c = Client::connect(server.addr, &server.export).unwrap();
        let far = u64::from(length) / 4096;
        for b in (0..16).chain(far..far + 4) {
            c.write_fua(b * 4096, &pattern(b)).unwrap();
        }
        let before = allocated_kib(&store);
        c.write_zeroes(0, length).unwrap();
        c.flush().unwrap();
        let grown = allocated_kib(&store).saturating_sub(before);
        assert!(grown < 1 << 10, "{layout}: {length} bytes of zeroes allocated {grown} KiB of the store");
        for b in 0..16 {
            assert!(c.read(b * 4096, 4096).unwrap().iter().all(|&x| x == 0), "{layout}: block {b} after the zeroes");
        }
        assert_eq!(c.read(far * 4096, 4096).unwrap(), pattern(far), "{layout}: a block past the zeroes");
        drop(c);
        server.stop();
        let report = check_store(&store, false);
        assert!(report.clean(), "{layout}: {report}");
        let again = start(cfg);
        let mut c = Client::connect(again.addr, &again.export).unwrap();
        assert!(c.read(5 * 4096, 4096).unwrap().iter().all(|&x| x == 0), "{layout}: zeroes after the restart");
        assert_eq!(c.read((far + 3) * 4096, 4096).unwrap(), pattern(far + 3));
    }
}
