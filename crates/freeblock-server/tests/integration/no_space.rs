//! A full file system under a layout fails only the requests that hit it (issue 37 §1): each
//! with ENOSPC, counted in the stats endpoint; reads, other clients and later requests go on,
//! and every write acknowledged before is intact after a restart. The file system is made full
//! by the store's fault-injection seam ([`freeblock_server::store::Store::limit_space`]): a small
//! tmpfs or loop device needs privileges a test does not have.

use crate::support;

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

/// Writes blocks under `layout` (a policy that copies blocks on its own), restarts it with no
/// room left in the file system, then reads the written blocks over and over so that the policy copies them (FS2 replicas,
/// rearrangement's moves into its area; blocks `apart` bytes apart): each copy finds the file system full. The copy alone
/// is dropped (counted in the stats), the engine goes on serving every client, and every
/// acknowledged block reads back right, also after a restart.
fn background_copies_find_no_space(layout: &str, space: u64, apart: u64) {
    let dir = Scratch::new("nospace-background");
    let mut cfg = config(DISK, &dir.path("disk.img"), Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>(layout).unwrap());
    cfg.stats = Some("127.0.0.1:0".parse().unwrap());
    // Written with room, then served again with none left: every copy the policy makes finds
    // the file system full.
    // Whole blocks of every policy (rearrangement's are larger than 4 KiB).
    const PIECE: usize = 64 << 10;
    let at = |b: u64| b * apart;
    let pattern = |b: u64| pattern(b).repeat(PIECE / 4096);
    let acked: Vec<u64> = (0..24).collect();
    let first = start(cfg.clone());
    let mut c = Client::connect(first.addr, &first.export).unwrap();
    for &b in &acked {
        c.write_fua(at(b), &pattern(b)).unwrap();
    }
    drop(c);
    first.stop();
    let mut limited = cfg.clone();
    limited.store_space_limit = Some(space);
    let server = start(limited);
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    let background = |s: &str| -> u64 { s.lines().find_map(|l| l.strip_prefix("freeblock_layout_background_no_space_total ")).expect("the counter is exported").trim().parse().unwrap() };
    let started = std::time::Instant::now();
    let mut rounds = 0;
    while background(&fetch_stats(server.stats.unwrap())) == 0 && started.elapsed() < std::time::Duration::from_secs(20) {
        for &b in &acked {
            assert_eq!(c.read(at(b), PIECE as u32).unwrap(), pattern(b), "{layout}: block {b} while copies find no space");
        }
        rounds += 1;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let stats = fetch_stats(server.stats.unwrap());
    assert!(background(&stats) > 0, "{layout}: no copy of the layout found the file system full in {rounds} rounds of reads: {stats}");
    // The engine still serves every client, and every acknowledged block.
    let mut other = Client::connect(server.addr, &server.export).unwrap();
    for &b in &acked {
        assert_eq!(other.read(at(b), PIECE as u32).unwrap(), pattern(b), "{layout}: block {b} after a copy found no space");
    }
    drop((c, other));
    let finished = server.stop();
    assert!(finished.placement.is_some_and(|p| p.background_no_space > 0), "{layout}: the summary counts the dropped copies");
    let report = check_store(&dir.path("disk.img"), false);
    assert!(report.clean(), "{layout}: {report}");
    let again = start(cfg);
    let mut c = Client::connect(again.addr, &again.export).unwrap();
    for &b in &acked {
        assert_eq!(c.read(at(b), PIECE as u32).unwrap(), pattern(b), "{layout}: block {b} after the restart");
    }
}

#[test]
fn rearrangement_drops_a_move_that_found_no_space_and_goes_on() {
    background_copies_find_no_space("type = \"rearrange\"\nperiod_s = 0.05\nschedule = \"always\"", 64 << 10, 64 << 10);
}
