//! Crash campaign: a server process killed with SIGKILL at a random instant while a client
//! writes with FUA restarts on the same store with every acknowledged write reading back.
//!
//! The server runs in a child process: this test binary itself, re-run with
//! `FREEBLOCK_CRASH_CHILD=<store>` so that only [`crash_child`] does anything. Trials:
//! `FREEBLOCK_CRASH_TRIALS` (default 10; the campaign in docs/server.md runs 200).

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use freeblock_server::{Pace, Server};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::client::Client;
use support::{config, Scratch};

/// The child: serves `FREEBLOCK_CRASH_CHILD` on a free loopback port, prints the address, and
/// runs until killed. Does nothing in a normal test run.
#[test]
fn crash_child() {
    let Ok(store) = std::env::var("FREEBLOCK_CRASH_CHILD") else { return };
    let mut cfg = config("toshiba_mk156f", std::path::Path::new(&store), Pace::None);
    cfg.listen = Some("127.0.0.1:0".parse().unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let server = Server::start(&cfg).await.unwrap();
        println!("LISTENING {}", server.tcp_addr().unwrap());
        server.serve(std::future::pending()).await.unwrap();
    });
}

fn spawn_server(store: &std::path::Path) -> (Child, SocketAddr) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env("FREEBLOCK_CRASH_CHILD", store)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("the child printed its address").unwrap();
        // (The test harness prints "test crash_child ... " before it on the same line.)
        if let Some(a) = line.split("LISTENING ").nth(1) {
            break a.parse().unwrap();
        }
    };
    (child, addr)
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let trials: u32 = std::env::var("FREEBLOCK_CRASH_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let dir = Scratch::new("crash");
    let store = dir.path("store");
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    // Block → the content of its last acknowledged write (one 4 KiB block per write, tagged).
    let mut acknowledged: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let (mut checked, mut failures, mut killed_mid_write) = (0u64, 0u64, 0u64);
    for trial in 0..trials {
        let (mut child, addr) = spawn_server(&store);
        let mut client = Client::connect(addr, "toshiba_mk156f").unwrap();
        // Every write acknowledged before the last kill reads back.
        check_acknowledged(&mut client, &acknowledged, trial, &mut checked, &mut failures);
        // Write until a random instant, then SIGKILL the server (from this thread, mid-stream).
        let deadline = Instant::now() + Duration::from_micros(rng.gen_range(0..30_000));
        let blocks = client.size / 4096;
        let mut n = 0u64;
        while Instant::now() < deadline || n == 0 {
            let block = rng.gen_range(0..blocks.min(4096));
            let mut data = vec![0u8; 4096];
            rng.fill(&mut data[..]);
            data[..12].copy_from_slice(&[&trial.to_le_bytes()[..], &n.to_le_bytes()[..]].concat());
            client.write_fua(block * 4096, &data).unwrap();
            acknowledged.insert(block, data);
            n += 1;
        }
        // One more write in flight when the kill lands: it may or may not be applied, but it
        // was never acknowledged, so nothing is expected of it.
        let block = rng.gen_range(0..blocks.min(4096));
        std::thread::scope(|s| {
            s.spawn(|| {
                let _ = client.write_fua(block * 4096, &[0xee; 4096]);
            });
            child.kill().unwrap();
            killed_mid_write += 1;
        });
        // The unacknowledged write may or may not have landed, so the block's old content and
        // the new one are both correct: nothing more is expected of that block.
        child.wait().unwrap();
        acknowledged.remove(&block);
    }
    // A last restart checks the final trial's writes.
    let (mut child, addr) = spawn_server(&store);
    let mut client = Client::connect(addr, "toshiba_mk156f").unwrap();
    check_acknowledged(&mut client, &acknowledged, trials, &mut checked, &mut failures);
    child.kill().unwrap();
    child.wait().unwrap();
    eprintln!("crash campaign: {trials} kill -9 trials ({killed_mid_write} with a write in flight), {checked} acknowledged writes checked, {failures} failures");
    assert!(checked > u64::from(trials), "too few writes checked for the campaign to mean anything");
    assert_eq!(failures, 0);
}

/// Reads back every acknowledged block, counting the reads and the blocks that lost their write.
fn check_acknowledged(client: &mut Client, acknowledged: &BTreeMap<u64, Vec<u8>>, trial: u32, checked: &mut u64, failures: &mut u64) {
    for (&block, want) in acknowledged {
        *checked += 1;
        if client.read(block * 4096, 4096).unwrap() != *want {
            *failures += 1;
            eprintln!("after trial {trial}: block {block} lost its acknowledged write");
        }
    }
}
