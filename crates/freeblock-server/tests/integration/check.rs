//! `freeblock check` on stores a server left: clean after a clean stop; a damaged replica, a
//! damaged block under a checksum, a torn journal tail and a store of another layout are each
//! found and named, and `--repair` fixes what it can.

use crate::support;

use std::os::unix::fs::FileExt;

use freeblock::experiment::LayoutSpec;
use freeblock::layout::journal::{DirStorage, DirtyRule, Journal, StoreFile};
use freeblock_server::check::check_store;
use freeblock_server::config::ScrubConfig;
use freeblock_server::{Pace, Server};
use support::client::Client;
use support::{config, start, Scratch};

const FS2: &str = "type = \"fs2\"\nepoch_accesses = 4\nthreshold = 1\nservice = \"foreground\"";

/// The pattern of block `b` (4 KiB) in these tests.
fn pattern(b: u64) -> Vec<u8> {
    (0..4096u64).map(|i| (b.wrapping_mul(31) ^ i.wrapping_mul(7)) as u8).collect()
}

/// Writes blocks near the start and far away, then reads them together so that FS2 replicates.
fn fs2_store(dir: &Scratch) -> freeblock_server::ServerConfig {
    let mut cfg = config("atlas10k", &dir.path("store"), Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>(FS2).unwrap());
    cfg.scrub = Some(ScrubConfig { passes: 0 });
    let server = start(cfg.clone());
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    let far = 300 << 20;
    for b in 0..16 {
        c.write_fua(b * 4096, &pattern(b)).unwrap();
        c.write_fua(far + b * 4096, &pattern(far / 4096 + b)).unwrap();
    }
    for _ in 0..6 {
        for b in 0..16 {
            assert_eq!(c.read(b * 4096, 4096).unwrap(), pattern(b));
            assert_eq!(c.read(far + b * 4096, 4096).unwrap(), pattern(far / 4096 + b));
        }
    }
    drop(c);
    let f = server.stop();
    assert!(f.placement.unwrap().blocks_copied > 0, "FS2 made replicas: {:?}", f.placement);
    cfg
}

#[test]
fn a_damaged_replica_is_found_and_repair_drops_it() {
    let dir = Scratch::new("check-fs2");
    let cfg = fs2_store(&dir);
    let store = dir.path("store");
    let clean = check_store(&store, false);
    assert!(clean.clean() && clean.findings.is_empty(), "{clean}");
    assert!(clean.copies_compared > 0 && clean.sums_verified > 0, "{clean}");

    // Damage one replica in the file behind the map's back.
    let (map, _) = Journal::recover(&DirStorage::beside(&store).unwrap(), DirtyRule::Logged).unwrap();
    let (logical, loc) = map.mapped().find(|(_, l)| l.copies.len() > 1).expect("a replicated block");
    let replica = loc.copies[1];
    let file = std::fs::OpenOptions::new().write(true).open(&store).unwrap();
    file.write_all_at(&[0xde, 0xad], replica * 512 + 100).unwrap();
    let found = check_store(&store, false);
    assert!(!found.clean(), "{found}");
    let text = found.to_string();
    assert!(text.contains(&format!("logical block {logical}: the replica at sector {replica} differs")), "{text}");
    // The scrub's checksum of that physical block names it too.
    assert!(text.contains(&format!("block {} (bytes", replica * 512 / 4096)), "{text}");

    let repaired = check_store(&store, true);
    assert!(repaired.findings.iter().any(|f| f.repaired && f.what.contains("replica")), "{repaired}");
    let (map, _) = Journal::recover(&DirStorage::beside(&store).unwrap(), DirtyRule::Logged).unwrap();
    assert!(!map.read(logical).unwrap().copies.contains(&replica), "the bad replica left the map");

    // The restarted server serves the block from its primary.
    let server = start(cfg);
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    assert_eq!(c.read(logical * 4096, 4096).unwrap(), pattern(logical));
    drop(c);
    server.stop();
}

#[test]
fn a_torn_journal_tail_is_recoverable_and_repair_removes_it() {
    let dir = Scratch::new("check-torn");
    fs2_store(&dir);
    let store = dir.path("store");
    let journal = DirStorage::beside(&store).unwrap().path(StoreFile::Journal);
    let mut bytes = std::fs::read(&journal).unwrap();
    bytes.extend_from_slice(&[0x30, 0, 0, 0, 1, 2, 3]);
    std::fs::write(&journal, &bytes).unwrap();
    let r = check_store(&store, false);
    assert!(r.clean(), "a torn tail is what a crash leaves: {r}");
    assert!(r.findings.iter().any(|f| f.recoverable && f.what.contains("torn tail of 7 bytes")), "{r}");
    let fixed = check_store(&store, true);
    assert!(fixed.findings.iter().all(|f| f.repaired), "{fixed}");
    let again = check_store(&store, false);
    assert!(again.findings.is_empty(), "{again}");
}

#[test]
fn a_store_of_another_layout_is_refused_naming_both() {
    let dir = Scratch::new("check-belongs");
    let cfg = fs2_store(&dir);
    let mut other = cfg.clone();
    other.layout = Some(toml::from_str::<LayoutSpec>("type = \"rearrange\"").unwrap());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let err = rt.block_on(Server::start(&other)).err().expect("refused").to_string();
    assert!(err.contains("belongs to disk") && err.contains("fs2") && err.contains("rearrange"), "{err}");
    // And a store with bytes at logical addresses (no metadata) is not opened with a layout.
    let plain = dir.path("plain");
    std::fs::write(&plain, vec![0u8; 4096]).unwrap();
    let mut c = cfg;
    c.store = plain.clone();
    let err = rt.block_on(Server::start(&c)).err().expect("refused").to_string();
    assert!(err.contains("layout.json"), "{err}");
    let r = check_store(&plain, false);
    assert!(!r.clean() && r.to_string().contains("layout.json: missing"), "{r}");
}

#[test]
fn checksums_survive_a_restart_and_name_a_damaged_block() {
    let dir = Scratch::new("check-sums");
    let store = dir.path("store");
    let mut cfg = config("toshiba_mk156f", &store, Pace::None);
    cfg.scrub = Some(ScrubConfig { passes: 0 });
    let server = start(cfg.clone());
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    for b in 0..64 {
        c.write_fua(b * 4096, &pattern(b)).unwrap();
    }
    drop(c);
    server.stop();
    let file = std::fs::OpenOptions::new().write(true).open(&store).unwrap();
    file.write_all_at(&[0x55], 17 * 4096 + 9).unwrap();
    let r = check_store(&store, false);
    let text = r.to_string();
    assert_eq!(r.unrepaired(), 1, "{text}");
    assert!(text.contains("block 17 (bytes 69632..73728) does not match its checksum"), "{text}");
    assert!(r.sums_verified >= 63, "{text}");

    // A restarted server's scrub (one pass in idle time) verifies the blocks written before the
    // restart against the kept checksums, and finds the damaged one.
    cfg.scrub = Some(ScrubConfig { passes: 1 });
    cfg.freeblock = Some(toml::from_str("idle_after_ms = 1").unwrap());
    cfg.stats = Some("127.0.0.1:0".parse().unwrap());
    let server = start(cfg);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline && !support::fetch_stats(server.stats.unwrap()).contains("freeblock_scrub_passes_total 1") {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let s = server.stop().scrub.unwrap();
    eprintln!("scrub after the restart: {s:?}");
    assert!(s.mismatches.contains(&17), "{s:?}");
    assert_eq!((s.mismatched, s.unverified), (1, 0), "{s:?}");
}

/// A range-writes store: every written block lives where its last write was placed; the check
/// replays that map, and the checksums kept with the placed bytes name a block damaged there.
#[test]
fn a_range_writes_store_is_checked_where_its_writes_were_placed() {
    let dir = Scratch::new("check-rw");
    let store = dir.path("store");
    let mut cfg = config("atlas10k", &store, Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>("type = \"range_writes\"").unwrap());
    cfg.scrub = Some(ScrubConfig { passes: 0 });
    let server = start(cfg);
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    // 24 blocks in one write, then 8 of them written again one by one.
    let run: Vec<u8> = (0..24).flat_map(pattern).collect();
    c.write_fua(0, &run).unwrap();
    for b in (0..24).step_by(3) {
        c.write_fua(b * 4096, &pattern(b + 1000)).unwrap();
    }
    drop(c);
    server.stop();
    let report = check_store(&store, false);
    assert!(report.clean() && report.findings.is_empty(), "{report}");
    assert_eq!(report.moved_blocks, 24, "{report}");
    assert!(report.checked.iter().any(|l| l.starts_with("range writes: 24 blocks written")), "{report}");
    assert!(report.sums_verified >= 24, "{report}");
    // Block 3's bytes are where the map says, and nowhere near its address in the export.
    let (map, _) = Journal::recover(&DirStorage::beside(&store).unwrap(), DirtyRule::Logged).unwrap();
    let at = map.first_copy(3).expect("block 3 was written");
    assert_ne!(at, 3 * 8, "written in place");
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&store).unwrap();
    let mut bytes = vec![0u8; 4096];
    file.read_exact_at(&mut bytes, at * 512).unwrap();
    assert_eq!(bytes, pattern(1003));
    file.write_all_at(&[0xff; 16], at * 512).unwrap();
    let damaged = check_store(&store, false);
    assert!(!damaged.clean(), "{damaged}");
    let named = format!("block {} ", at * 512 / 4096);
    assert!(damaged.findings.iter().any(|f| f.what.contains(&named) && f.what.contains("does not match its checksum")), "{damaged}");
}

/// An LFS store: clean after a stop; a segment's summary damaged in the file is found, naming the
/// segment, and a server refuses to start on it rather than serve blocks it cannot vouch for.
#[test]
fn a_damaged_lfs_summary_is_found() {
    let dir = Scratch::new("check-lfs");
    let store = dir.path("store");
    let mut cfg = config("atlas10k", &store, Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>("type = \"lfs\"\npartition_mb = 8").unwrap());
    let server = start(cfg.clone());
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    for b in 0..200 {
        c.write_fua(b * 4096, &pattern(b)).unwrap();
    }
    drop(c);
    server.stop();
    let clean = check_store(&store, false);
    assert!(clean.clean() && clean.checked.iter().any(|l| l.contains("summary")), "{clean}");

    // The live blocks' segments: the last 200 FUA writes each closed one. Damage the summary
    // (the last 4 KiB block) of the segment holding block 0.
    let (map, _) = Journal::recover(&DirStorage::beside(&store).unwrap(), DirtyRule::Logged).unwrap();
    let lbn = map.first_copy(0).expect("block 0 is in the log");
    let segment = lbn / 1024;
    let summary_at = (segment * 1024 + 127 * 8) * 512;
    std::fs::OpenOptions::new().write(true).open(&store).unwrap().write_all_at(&[0xff; 64], summary_at + 8).unwrap();
    let report = check_store(&store, false);
    assert!(!report.clean(), "{report}");
    assert!(report.to_string().contains(&format!("segment {segment}")), "names the segment: {report}");
    let refused = tokio::runtime::Runtime::new().unwrap().block_on(Server::start(&cfg)).err().expect("the server refuses the store");
    assert!(refused.to_string().contains(&format!("segment {segment}")), "{refused}");
}
