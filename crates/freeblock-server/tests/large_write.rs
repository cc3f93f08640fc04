//! One large WRITE under the range-writes layout costs time linear in its size (issue 37 §2:
//! it was quadratic, stalling the engine for every client). Prints the wall time per MiB of a
//! 1, 8 and 32 MiB write and asserts the 32 MiB one costs per MiB at most a few times the 1 MiB
//! one (quadratic would be 32×).

mod support;

use std::time::Instant;

use freeblock::experiment::LayoutSpec;
use freeblock_server::Pace;
use support::client::Client;
use support::{config, start, Scratch};

#[test]
fn a_large_range_write_costs_time_linear_in_its_size() {
    let dir = Scratch::new("large-write");
    let mut cfg = config("atlas10k", &dir.path("store"), Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>("type = \"range_writes\"").unwrap());
    let server = start(cfg);
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    let mut per_mib = Vec::new();
    let mut at = 0u64;
    for mib in [1u64, 8, 32] {
        let data: Vec<u8> = (0..mib << 20).map(|i| (i % 251) as u8).collect();
        let t = Instant::now();
        c.write_fua(at, &data).unwrap();
        let ms = t.elapsed().as_secs_f64() * 1e3 / mib as f64;
        println!("range_writes: one {mib} MiB WRITE (FUA): {ms:.2} ms per MiB");
        per_mib.push((mib, ms, at, data));
        at += (mib << 20) + (64 << 20);
    }
    for (mib, _, at, data) in &per_mib {
        assert!(c.read(*at, (*mib << 20) as u32).unwrap() == *data, "{mib} MiB read back");
    }
    let (small, large) = (per_mib[0].1, per_mib[2].1);
    assert!(large < 4.0 * small.max(1.0), "32 MiB costs {large:.2} ms per MiB, 1 MiB {small:.2}: not linear");
}
