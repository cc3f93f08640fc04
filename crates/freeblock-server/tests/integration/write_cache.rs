//! A served drive with a write-back cache (`write_cache = "write_back"`): NBD FLUSH is timed as
//! the model's FLUSH CACHE (its cost grows with the dirty writes) and a FUA write as a FUA write;
//! the store's bytes are durable and readable exactly as without it.

use crate::support;

use freeblock_disk::WriteCacheMode;
use freeblock_server::Pace;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::client::Client;
use support::{config, start, Scratch};

/// `writes` random 4 KB writes, a FLUSH, then one FUA write, on st2000dm006 with its write cache
/// in `mode`: (requests the model timed, the sum of their model response times in ms, what a
/// read of the first write gave back).
fn run(mode: Option<WriteCacheMode>, writes: usize, tag: &str) -> (u64, f64, Vec<u8>) {
    let dir = Scratch::new(tag);
    let mut cfg = config("st2000dm006", &dir.path("store"), Pace::None);
    cfg.write_cache = mode;
    let server = start(cfg);
    let blocks = freeblock_disk::library::media("st2000dm006").unwrap().capacity() / 8;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    let first = rng.gen_range(0..blocks) * 4096;
    let data: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    c.write(first, &data).unwrap();
    for _ in 1..writes {
        c.write(rng.gen_range(0..blocks) * 4096, &data).unwrap();
    }
    c.flush().unwrap();
    c.write_fua(rng.gen_range(0..blocks) * 4096, &data).unwrap();
    let back = c.read(first, 4096).unwrap();
    drop(c);
    let s = server.stop().summary;
    (s.timed, s.response_mean_ms * s.timed as f64, back)
}

#[test]
fn flush_and_fua_are_timed_by_the_write_back_cache() {
    let n = 32;
    let (timed_wb, total_wb, back_wb) = run(Some(WriteCacheMode::WriteBack), n, "wcache-wb");
    let (timed_wt, total_wt, back_wt) = run(None, n, "wcache-wt");
    let (timed_empty, total_empty, _) = run(Some(WriteCacheMode::WriteBack), 1, "wcache-one");
    eprintln!("write-back: {timed_wb} timed, {total_wb:.1} ms in all; write-through: {timed_wt} timed, {total_wt:.1} ms; write-back, one write: {total_empty:.1} ms");
    // Write-through (the spec's own mode): the FLUSH has no media work in the model and is not
    // timed; n writes, the FUA write and the read are.
    assert_eq!(timed_wt, n as u64 + 2);
    // Write-back: the FLUSH is timed too.
    assert_eq!(timed_wb, n as u64 + 3);
    assert_eq!(timed_empty, 4);
    // The writes cost next to nothing; the flush writes the dirty blocks, each a positioning and
    // a transfer (at least a few ms each on this drive: the model's 32-write flush is 280–370 ms),
    // then the FUA write and the read go to the media.
    assert!(total_wb > 5.0 * n as f64, "{total_wb} ms for a flush of {n} dirty writes");
    // One dirty write flushes far cheaper than 32.
    assert!(total_empty < total_wb / 3.0, "{total_empty} vs {total_wb}");
    // The bytes are the store's, whatever the model's cache holds.
    assert_eq!(back_wb, back_wt);
    assert!(back_wb.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
}

#[test]
fn a_write_back_cache_under_a_layout_is_refused_by_name() {
    let dir = Scratch::new("wcache-layout");
    let mut cfg = config("st2000dm006", &dir.path("store"), Pace::None);
    cfg.write_cache = Some(WriteCacheMode::WriteBack);
    cfg.layout = Some(toml::from_str("type = \"range_writes\"").unwrap());
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("write_cache"), "{e}");
}
