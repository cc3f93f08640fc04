//! The scrub reads the real bytes in free bandwidth and finds blocks changed behind the
//! server's back, and only those.

use crate::support;

use std::io::Write as _;
use std::os::unix::fs::FileExt;
use std::process::{Command, Stdio};

use freeblock_server::config::ScrubConfig;
use freeblock_server::Pace;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{config, have, run, start, Scratch};

#[test]
fn the_scrub_finds_corrupted_blocks_and_no_others() {
    if !have("qemu-io") {
        return;
    }
    let dir = Scratch::new("scrub");
    let store = dir.path("store");
    let mut cfg = config("toshiba_mk156f", &store, Pace::None);
    cfg.scrub = Some(ScrubConfig { passes: 0 });
    let server = start(cfg);
    // 8 MiB of data (2048 blocks), then 200 of its blocks corrupted in the file directly.
    run("qemu-io", &["-f", "raw", "-c", "write -P 0x6b 0 8m", "-c", "flush", &server.uri()]);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let file = std::fs::OpenOptions::new().write(true).open(&store).unwrap();
    let mut corrupted = std::collections::BTreeSet::new();
    while corrupted.len() < 200 {
        let block: u64 = rng.gen_range(0..2048);
        file.write_all_at(&[0x00, 0xff, 0x13], block * 4096 + rng.gen_range(0..4093)).unwrap();
        corrupted.insert(block);
    }
    // Foreground load: random 4 KiB reads; the scrub works in their rotational latency.
    let disk = freeblock_disk::library::media("toshiba_mk156f").unwrap();
    let blocks = disk.capacity() / 8;
    let mut child = Command::new("qemu-io").args(["-f", "raw", &server.uri()]).stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for _ in 0..3000 {
            writeln!(stdin, "read {} 4k", rng.gen_range(0..blocks) * 4096).unwrap();
        }
    }
    assert!(child.wait().unwrap().success());
    let f = server.stop();
    let s = f.scrub.unwrap();
    eprintln!("scrub after 3000 reads: {} verified, {} mismatched of 200 corrupted, {:.1}% of a pass", s.verified, s.mismatched, s.progress * 100.0);
    assert!(s.verified > 1000, "the scrub barely ran: {s:?}");
    assert!(s.mismatched > 0, "no corrupted block found: {s:?}");
    assert_eq!(s.mismatched, s.mismatches.len() as u64);
    for b in &s.mismatches {
        assert!(corrupted.contains(b), "block {b} reported but never corrupted");
    }
    assert_eq!(s.read_errors, 0);
    assert_eq!(s.unverified, 0, "a store this server created has a reference for every block");
    let fb = f.report.unwrap().freeblock.unwrap();
    assert!(fb.free_mb_s > 0.0, "the scrub's reads were free: {fb:?}");
}
