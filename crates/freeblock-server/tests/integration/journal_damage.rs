//! Damage no crash could cause is refused, never replayed as a torn tail (issue 37 §1): a journal
//! cut short in the middle, or one flipped byte in the last record of a synced, acknowledged
//! commit, is refused at start and by `freeblock check`, naming the byte offset; a torn tail
//! after the synced mark is still what a crash leaves. A zeroed entry in the store's checksum
//! file is reported by `check`.

use crate::support;

use freeblock::experiment::LayoutSpec;
use freeblock::layout::journal::{JOURNAL_HEADER_BYTES, RECORD_FRAME_BYTES};
use freeblock_server::check::check_store;
use freeblock_server::config::ScrubConfig;
use freeblock_server::{Pace, Server, ServerConfig};
use support::client::Client;
use support::{config, start, Scratch};

const DISK: &str = "hp_c2247a";

/// Block `b`'s bytes (4 KiB) in these tests.
fn pattern(b: u64) -> Vec<u8> {
    (0..4096u64).map(|i| (b.wrapping_mul(131) ^ i.wrapping_mul(7)) as u8).collect()
}

/// A range-writes store holding six acknowledged FUA writes, stopped; its configuration.
fn store_with_writes(dir: &Scratch) -> ServerConfig {
    let mut cfg = config(DISK, &dir.path("disk.img"), Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>("type = \"range_writes\"").unwrap());
    let s = start(cfg.clone());
    let mut c = Client::connect(s.addr, &s.export).unwrap();
    for b in 0..6 {
        c.write_fua(b * 4096, &pattern(b)).unwrap();
    }
    drop(c);
    s.stop();
    cfg
}

fn refused(cfg: &ServerConfig) -> String {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(Server::start(cfg)).err().expect("the start is refused").to_string()
}

/// Every record's `(start, end)` after the header.
fn record_spans(j: &[u8]) -> Vec<(usize, usize)> {
    let (mut out, mut at) = (Vec::new(), JOURNAL_HEADER_BYTES as usize);
    while at + RECORD_FRAME_BYTES as usize <= j.len() {
        let end = at + RECORD_FRAME_BYTES as usize + u32::from_le_bytes(j[at..at + 4].try_into().unwrap()) as usize;
        out.push((at, end));
        at = end;
    }
    out
}

#[test]
fn a_journal_cut_short_in_the_middle_is_refused_naming_the_offset() {
    let dir = Scratch::new("jdamage-cut");
    let cfg = store_with_writes(&dir);
    let path = dir.path("disk.img.map.journal");
    let journal = std::fs::read(&path).unwrap();
    assert!(record_spans(&journal).len() >= 6, "the stopped server's journal holds the six commits ({} bytes)", journal.len());
    let cut = (JOURNAL_HEADER_BYTES as usize + journal.len()) / 2;
    std::fs::write(&path, &journal[..cut]).unwrap();
    let err = refused(&cfg);
    assert!(err.contains("disk.img.map.journal") && err.contains(&format!("byte {cut}")) && err.contains("cut short"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), &journal[..cut], "the refused start left the journal as it was");
    let report = check_store(&dir.path("disk.img"), false);
    assert!(!report.clean(), "check calls a journal cut short clean: {report}");
    assert!(report.findings.iter().any(|f| !f.recoverable && f.what.contains(&format!("byte {cut}")) && f.what.contains("cut short")), "{report}");
}

#[test]
fn a_flipped_byte_in_the_last_synced_commit_is_refused_not_dropped() {
    let dir = Scratch::new("jdamage-flip");
    let cfg = store_with_writes(&dir);
    let path = dir.path("disk.img.map.journal");
    let mut journal = std::fs::read(&path).unwrap();
    let (start, end) = *record_spans(&journal).last().expect("records");
    journal[(start + end) / 2] ^= 0x20;
    std::fs::write(&path, &journal).unwrap();
    let err = refused(&cfg);
    assert!(err.contains(&format!("at byte {start}")) && err.contains("damage, not a torn tail"), "{err}");
    let report = check_store(&dir.path("disk.img"), false);
    assert!(report.findings.iter().any(|f| !f.recoverable && f.what.contains(&format!("at byte {start}"))), "{report}");
}

#[test]
fn a_torn_tail_after_the_synced_mark_is_still_a_crash_and_every_write_reads_back() {
    let dir = Scratch::new("jdamage-torn");
    let cfg = store_with_writes(&dir);
    let path = dir.path("disk.img.map.journal");
    let mut journal = std::fs::read(&path).unwrap();
    // Half a record frame: what a crash during the next append leaves.
    journal.extend_from_slice(&[0x40, 0, 0, 0, 9, 9, 9, 9]);
    std::fs::write(&path, &journal).unwrap();
    let report = check_store(&dir.path("disk.img"), false);
    assert!(report.clean() && report.findings.iter().any(|f| f.recoverable && f.what.contains("torn tail of 8 bytes")), "{report}");
    let s = start(cfg);
    let mut c = Client::connect(s.addr, &s.export).unwrap();
    for b in 0..6 {
        assert_eq!(c.read(b * 4096, 4096).unwrap(), pattern(b), "block {b}");
    }
}

#[test]
fn a_zeroed_checksum_entry_is_reported_by_check() {
    let dir = Scratch::new("jdamage-sums");
    let mut cfg = config(DISK, &dir.path("plain.img"), Pace::None);
    cfg.scrub = Some(ScrubConfig { passes: 0 });
    let s = start(cfg);
    let mut c = Client::connect(s.addr, &s.export).unwrap();
    for b in [3u64, 40] {
        c.write_fua(b * 4096, &pattern(b)).unwrap();
    }
    drop(c);
    s.stop();
    let store = dir.path("plain.img");
    assert!(check_store(&store, false).clean());
    let sums = dir.path("plain.img.sums");
    let mut bytes = std::fs::read(&sums).unwrap();
    assert_ne!(bytes[40 * 8..41 * 8], [0u8; 8], "block 40 has a checksum");
    bytes[40 * 8..41 * 8].fill(0);
    std::fs::write(&sums, &bytes).unwrap();
    let report = check_store(&store, false);
    assert!(!report.clean(), "{report}");
    assert!(report.findings.iter().any(|f| f.what.contains("plain.img.sums: block 40's entry (bytes 320..328) is zeroed")), "{report}");
}
