//! Pace real: replies are held until the model's completion time, and not much longer.

mod support;

use std::io::Write as _;
use std::process::{Command, Stdio};

use freeblock_server::Pace;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{config, have, start, Scratch};

/// Per-request latencies qemu-io reports ("… ops; 00.01 sec (… and 168.0672 ops/sec)"), ms.
fn latencies_ms(stdout: &str) -> Vec<f64> {
    stdout
        .lines()
        .filter_map(|l| l.split(" and ").nth(1)?.strip_suffix(" ops/sec)")?.trim().parse::<f64>().ok())
        .map(|ops| 1e3 / ops)
        .collect()
}

#[test]
fn pace_real_replies_arrive_when_the_model_completes_them() {
    if !have("qemu-io") {
        return;
    }
    let dir = Scratch::new("timing");
    let server = start(config("atlas10k", &dir.path("store"), Pace::Real));
    let disk = freeblock_disk::library::media("atlas10k").unwrap();
    let blocks = disk.capacity() / 8;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let n = 300;
    let mut child = Command::new("qemu-io").args(["-f", "raw", &server.uri()]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for _ in 0..n {
            writeln!(stdin, "read {} 4k", rng.gen_range(0..blocks) * 4096).unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let client = latencies_ms(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(client.len(), n, "one latency per read");
    let finished = server.stop();
    let s = finished.summary;
    let client_mean = client.iter().sum::<f64>() / n as f64;
    eprintln!(
        "{n} random 4 KB reads at QD 1, pace real: model mean {:.3} ms, client-observed mean {client_mean:.3} ms, lateness p50 {:.1} µs p99 {:.1} µs max {:.1} µs",
        s.response_mean_ms, s.lateness_p50_us, s.lateness_p99_us, s.lateness_max_us
    );
    assert_eq!(s.timed, n as u64);
    // The Atlas 10K serves a random 4 KB read in 5-10 ms on average: the model ran.
    assert!((5.0..10.0).contains(&s.response_mean_ms), "{s:?}");
    // The client waited at least the model's time (replies are never early), and not much more.
    assert!(client_mean >= s.response_mean_ms * 0.99, "client {client_mean} ms < model {} ms: replies came early", s.response_mean_ms);
    // A loose bound: tests share the machine with builds (bench/timing.sh measures it properly).
    assert!(client_mean <= s.response_mean_ms * 1.5, "client {client_mean} ms, model {} ms: replies came late", s.response_mean_ms);
}
