//! A full file system under a layout fails only the requests that hit it (issue 37 §1): each
//! with ENOSPC, counted in the stats endpoint; reads, other clients and later requests go on,
//! and every write acknowledged before is intact after a restart. The file system is made full
//! by the store's fault-injection seam ([`freeblock_server::store::Store::limit_space`]): a small
//! tmpfs or loop device needs privileges a test does not have.

mod support;

use freeblock::experiment::LayoutSpec;
use freeblock_server::check::check_store;
use freeblock_server::Pace;
use support::client::Client;
use support::{config, fetch_stats, start, Scratch};

const DISK: &str = "hp_c2247a";

/// Block `b`'s bytes (4 KiB) in these tests.
fn pattern(b: u64) -> Vec<u8> {
    (0..4096u64).map(|i| (b.wrapping_mul(37) ^ i.wrapping_mul(11)) as u8).collect()
}

/// Fills the store of `layout` until a FUA write fails, then checks that the server goes on.
fn fill_until_enospc(layout: &str, space: u64) {
    let dir = Scratch::new(&format!("nospace-{layout}"));
    let mut cfg = config(DISK, &dir.path("disk.img"), Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>(&format!("type = \"{layout}\"")).unwrap());
    cfg.stats = Some("127.0.0.1:0".parse().unwrap());
    let mut limited = cfg.clone();
    limited.store_space_limit = Some(space);
    let server = start(limited);
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    let mut acked = Vec::new();
    let refusal = loop {
        let b = acked.len() as u64;
        assert!(b < 4096, "{layout}: {b} writes of 4 KiB fit in {space} bytes");
        match c.write_fua(b * 4096, &pattern(b)) {
            Ok(()) => acked.push(b),
            Err(e) => break e.to_string(),
        }
    };
    assert!(refusal.contains("error 28"), "{layout}: the write that found no space fails with ENOSPC (28): {refusal}");
    assert!(!acked.is_empty(), "{layout}: some writes fit before the file system filled");
    // The same connection, and a new one, still read every acknowledged write.
    for &b in &acked {
        assert_eq!(c.read(b * 4096, 4096).unwrap(), pattern(b), "{layout}: block {b} after ENOSPC");
    }
    let mut other = Client::connect(server.addr, &server.export).unwrap();
    assert_eq!(other.read(0, 4096).unwrap(), pattern(0));
    // Full stays full: a later write fails the same way, and does not take the server down.
    let later = other.write_fua(4096 * 4000, &pattern(4000)).unwrap_err().to_string();
    assert!(later.contains("error 28"), "{layout}: {later}");
    assert_eq!(other.read(4096 * acked[acked.len() - 1], 4096).unwrap(), pattern(acked[acked.len() - 1]));
    // An overwrite of an acknowledged block that finds no space leaves the block as it was.
    let over = other.write_fua(0, &[0xee; 4096]).unwrap_err().to_string();
    assert!(over.contains("error 28"), "{layout}: {over}");
    assert!(other.read(0, 4096).unwrap() == pattern(0), "{layout}: block 0 after its overwrite failed");
    other.flush().unwrap();
    let stats = fetch_stats(server.stats.unwrap());
    let counted: u64 = stats.lines().find_map(|l| l.strip_prefix("freeblock_no_space_errors_total ")).expect("the counter is exported").trim().parse().unwrap();
    assert!(counted >= 3, "{layout}: both refusals counted: {stats}");
    drop((c, other));
    server.stop();
    // Restarted with room: the store is clean and every acknowledged write reads back.
    let report = check_store(&dir.path("disk.img"), false);
    assert!(report.clean(), "{layout}: {report}");
    let again = start(cfg);
    let mut c = Client::connect(again.addr, &again.export).unwrap();
    for &b in &acked {
        assert_eq!(c.read(b * 4096, 4096).unwrap(), pattern(b), "{layout}: block {b} after the restart");
    }
    c.write_fua(4096 * 4000, &pattern(4000)).unwrap();
}

#[test]
fn range_writes_fail_the_request_that_found_no_space_and_go_on() {
    fill_until_enospc("range_writes", 1 << 20);
}

#[test]
fn fs2_fails_the_request_that_found_no_space_and_goes_on() {
    fill_until_enospc("fs2", 1 << 20);
}
