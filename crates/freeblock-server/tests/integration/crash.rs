//! Crash campaign: a server process killed with SIGKILL at a random instant while a client
//! writes with FUA (and reads, so that the layout policies see blocks accessed together)
//! restarts on the same store with every acknowledged write reading back, and `freeblock check`
//! finds the stopped store clean in between.
//!
//! Five stores take turns: the identity layout, adaptive rearrangement moving hot blocks into
//! its reserved cylinders every 50 ms of model time, FS2 replicating blocks read together,
//! range writes placing every write in one of four free places (so each write moves its block
//! and frees the old place), and LFS on a small log (every FUA write a segment write, the
//! cleaner moving live blocks all the time); all with the scrub's checksums kept. So kills land while moves copy
//! bytes, while writes land in new places, and while maps and checksums are being committed.
//! Range writes are written by [`WRITERS`] clients at once, without FUA, so that the map commits
//! of several writes are grouped (`crate::commits`) and the kill lands with a write of each
//! in flight: a reply sent before its group's commit, or a write landing on a place a commit not
//! yet durable freed, would lose an acknowledged write.
//!
//! The server runs in a child process: this test binary itself, re-run with
//! `FREEBLOCK_CRASH_CHILD=<store>` and `FREEBLOCK_CRASH_LAYOUT=<n>` so that only [`crash_child`]
//! does anything. Trials: `FREEBLOCK_CRASH_TRIALS` (default 12; the campaign in docs/server.md
//! runs 200).

use crate::support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use freeblock::experiment::LayoutSpec;
use freeblock_server::check::check_store;
use freeblock_server::config::ScrubConfig;
use freeblock_server::{Pace, Server, ServerConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::client::Client;
use support::{config, fetch_stats, Scratch};

/// The layouts the trials take turns with: (name, `[layout]` table or none).
const LAYOUTS: [(&str, Option<&str>); 5] = [
    ("identity", None),
    ("rearrange", Some("type = \"rearrange\"\nperiod_s = 0.05\nschedule = \"always\"\narea = { cylinders = 40, block_sectors = 8 }")),
    ("fs2", Some("type = \"fs2\"\nepoch_accesses = 4\nthreshold = 1\nservice = \"foreground\"")),
    ("range_writes", Some("type = \"range_writes\"")),
    // An 8 MiB log of 16 segments: every FUA write closes a segment, so the cleaner (ours: free
    // reads, taken over in the foreground when segments run out) runs all the time.
    ("lfs", Some("type = \"lfs\"\npartition_mb = 8\ncleaner = \"freeblock\"\nfree = { parallel = 128, hold_until_read = true, finish_in_foreground = true, choose = \"least_live\" }")),
];

fn child_config(store: &std::path::Path, layout: usize) -> ServerConfig {
    let mut cfg = config("atlas10k", store, Pace::None);
    cfg.listen = Some("127.0.0.1:0".parse().unwrap());
    cfg.stats = Some("127.0.0.1:0".parse().unwrap());
    cfg.scrub = Some(ScrubConfig { passes: 0 });
    cfg.layout = LAYOUTS[layout].1.map(|l| toml::from_str::<LayoutSpec>(l).unwrap());
    cfg
}

/// The child: serves `FREEBLOCK_CRASH_CHILD` on a free loopback port, prints the addresses, and
/// runs until killed. Does nothing in a normal test run.
#[test]
fn crash_child() {
    let Ok(store) = std::env::var("FREEBLOCK_CRASH_CHILD") else { return };
    let layout: usize = std::env::var("FREEBLOCK_CRASH_LAYOUT").unwrap().parse().unwrap();
    let cfg = child_config(std::path::Path::new(&store), layout);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let server = Server::start(&cfg).await.unwrap();
        println!("LISTENING {} {} {}", server.tcp_addr().unwrap(), server.stats_addr().unwrap(), server.export_name());
        server.serve(std::future::pending()).await.unwrap();
    });
}

struct Spawned {
    child: Child,
    addr: SocketAddr,
    stats: SocketAddr,
    export: String,
}

fn spawn_server(store: &std::path::Path, layout: usize) -> Spawned {
    // The harness names a test by its module path less the crate's name: `crash::crash_child` in
    // the integration binary, `crash_child` were this file a binary of its own.
    let child_test = module_path!().split_once("::").map_or("crash_child".to_string(), |(_, module)| format!("{module}::crash_child"));
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &child_test, "--nocapture", "--test-threads=1"])
        .env("FREEBLOCK_CRASH_CHILD", store)
        .env("FREEBLOCK_CRASH_LAYOUT", layout.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let words: Vec<String> = loop {
        let line = lines.next().expect("the child printed its address (did the server refuse to start?)").unwrap();
        // (The test harness prints "test crash::crash_child ... " before it on the same line.)
        if let Some(a) = line.split("LISTENING ").nth(1) {
            break a.split_whitespace().map(String::from).collect();
        }
    };
    Spawned { child, addr: words[0].parse().unwrap(), stats: words[1].parse().unwrap(), export: words[2].clone() }
}

/// One store's campaign state.
struct Campaign {
    dir_store: std::path::PathBuf,
    /// Block → the content of its last acknowledged write (one 4 KiB block per write, tagged).
    acknowledged: BTreeMap<u64, Vec<u8>>,
    trials: u32,
    /// Blocks copied by the policy's moves, summed over the trials.
    moves: u64,
    /// Commits of the policy's map made durable, summed over the trials.
    commits: u64,
}

/// Clients writing at once in the range-writes trials.
const WRITERS: u64 = 4;

#[derive(Default)]
struct Totals {
    checked: u64,
    failures: u64,
    killed_mid_write: u64,
    recoverable: u64,
}

#[test]
fn acknowledged_writes_survive_kill_9_with_moves_under_way() {
    let trials: u32 = std::env::var("FREEBLOCK_CRASH_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    let dir = Scratch::new("crash");
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let mut stores: Vec<Campaign> = LAYOUTS.iter().map(|(name, _)| Campaign { dir_store: dir.path(name), acknowledged: BTreeMap::new(), trials: 0, moves: 0, commits: 0 }).collect();
    let mut t = Totals::default();
    for trial in 0..trials {
        let layout = trial as usize % LAYOUTS.len();
        let c = &mut stores[layout];
        c.trials += 1;
        let mut server = spawn_server(&c.dir_store, layout);
        let mut client = Client::connect(server.addr, &server.export).unwrap();
        // Every write acknowledged before the last kill reads back.
        check_acknowledged(&mut client, &c.acknowledged, trial, &mut t);
        // Write (and read back what was written) until a random instant, then SIGKILL the
        // server from this thread, mid-stream. Blocks come from a small hot set near the start
        // (rearrangement moves them) and from a far range read with them (FS2 replicates it).
        let deadline = Instant::now() + Duration::from_micros(rng.gen_range(0..60_000));
        let far = client.size / 4096 / 2;
        let pick = |rng: &mut ChaCha8Rng| if rng.gen_bool(0.7) { rng.gen_range(0..64u64) } else { far + rng.gen_range(0..512u64) };
        if LAYOUTS[layout].0 == "range_writes" {
            let (acked, in_flight, commits) = writers_killed(&mut server, deadline, trial, rng.gen(), &c.acknowledged, &mut t);
            c.commits += commits;
            server.child.wait().unwrap();
            c.acknowledged.extend(acked);
            // A write in flight at the kill may or may not have landed: nothing is expected of it.
            for block in in_flight {
                c.acknowledged.remove(&block);
            }
            check_after_kill(&c.dir_store, layout, trial, &mut t);
            continue;
        }
        let mut n = 0u64;
        while Instant::now() < deadline || n == 0 {
            let block = pick(&mut rng);
            let mut data = vec![0u8; 4096];
            rng.fill(&mut data[..]);
            data[..12].copy_from_slice(&[&trial.to_le_bytes()[..], &n.to_le_bytes()[..]].concat());
            client.write_fua(block * 4096, &data).unwrap();
            c.acknowledged.insert(block, data);
            let (&again, want) = c.acknowledged.iter().nth(rng.gen_range(0..c.acknowledged.len())).unwrap();
            t.checked += 1;
            if client.read(again * 4096, 4096).unwrap() != *want {
                t.failures += 1;
                eprintln!("{} trial {trial}: block {again} read back wrong while serving", LAYOUTS[layout].0);
            }
            n += 1;
        }
        c.moves += counter(server.stats, "freeblock_layout_blocks_copied_total");
        c.commits += counter(server.stats, "freeblock_layout_map_commits_total");
        // One more write in flight when the kill lands: it may or may not be applied, but it
        // was never acknowledged, so nothing is expected of it.
        let block = pick(&mut rng);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _ = client.write_fua(block * 4096, &[0xee; 4096]);
            });
            server.child.kill().unwrap();
            t.killed_mid_write += 1;
        });
        // The unacknowledged write may or may not have landed, so the block's old content and
        // the new one are both correct: nothing more is expected of that block.
        server.child.wait().unwrap();
        c.acknowledged.remove(&block);
        check_after_kill(&c.dir_store, layout, trial, &mut t);
    }
    // A last restart of each store checks its final trial's writes.
    for (layout, c) in stores.iter().enumerate() {
        let mut server = spawn_server(&c.dir_store, layout);
        let mut client = Client::connect(server.addr, &server.export).unwrap();
        check_acknowledged(&mut client, &c.acknowledged, trials, &mut t);
        server.child.kill().unwrap();
        server.child.wait().unwrap();
    }
    let per: Vec<String> = LAYOUTS.iter().zip(&stores).map(|((name, _), c)| format!("{name} {} trials, {} blocks copied by moves, {} map commits", c.trials, c.moves, c.commits)).collect();
    eprintln!(
        "crash campaign: {trials} kill -9 trials ({} with a write in flight; {}), {} acknowledged writes checked, freeblock check clean after every kill ({} recoverable findings), {} failures",
        t.killed_mid_write,
        per.join("; "),
        t.checked,
        t.recoverable,
        t.failures
    );
    assert!(t.checked > u64::from(trials), "too few writes checked for the campaign to mean anything");
    // A few trials may end before a policy has moved anything (the kill instants are random);
    // a campaign must have run with moves under way in both.
    if trials >= 30 {
        assert!(stores[1].moves > 0 && stores[2].moves > 0, "the campaign must run with moves under way: {per:?}");
        assert!(stores[3].commits > 0, "range writes must have placed writes: {per:?}");
        assert!(stores[4].moves > 0, "LFS must have cleaned: {per:?}");
    }
    assert_eq!(t.failures, 0);
}

/// [`WRITERS`] clients write (without FUA) and read back blocks of their own (block mod
/// [`WRITERS`]) until `deadline`, when the server is killed with their writes in flight. Returns
/// the writes acknowledged (block → content), the blocks whose write was in flight, and the map
/// commits the server had made durable just before the kill.
fn writers_killed(server: &mut Spawned, deadline: Instant, trial: u32, seed: u64, before: &BTreeMap<u64, Vec<u8>>, t: &mut Totals) -> (BTreeMap<u64, Vec<u8>>, Vec<u64>, u64) {
    let (addr, export) = (server.addr, server.export.clone());
    let (mut acked, mut in_flight, mut commits) = (BTreeMap::new(), Vec::new(), 0);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let export = export.clone();
                let mut known: BTreeMap<u64, Vec<u8>> = before.iter().filter(|(b, _)| *b % WRITERS == w).map(|(b, d)| (*b, d.clone())).collect();
                s.spawn(move || {
                    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ w);
                    let (mut acked, mut checked, mut failures) = (BTreeMap::new(), 0u64, 0u64);
                    // The kill may come before this writer is connected.
                    let Ok(mut client) = Client::connect(addr, &export) else { return (acked, None, checked, failures) };
                    let far = client.size / 4096 / 2;
                    for n in 0u64.. {
                        let block = if rng.gen_bool(0.7) { rng.gen_range(0..64u64) } else { far + rng.gen_range(0..512u64) } / WRITERS * WRITERS + w;
                        let mut data = vec![0u8; 4096];
                        rng.fill(&mut data[..]);
                        data[..12].copy_from_slice(&[&trial.to_le_bytes()[..], &n.to_le_bytes()[..]].concat());
                        // Written until the kill: the write it interrupts was never acknowledged.
                        if client.write(block * 4096, &data).is_err() {
                            return (acked, Some(block), checked, failures);
                        }
                        known.insert(block, data.clone());
                        acked.insert(block, data);
                        let (&again, want) = known.iter().nth(rng.gen_range(0..known.len())).unwrap();
                        match client.read(again * 4096, 4096) {
                            Ok(got) => {
                                checked += 1;
                                if got != *want {
                                    failures += 1;
                                    eprintln!("range_writes trial {trial}: block {again} read back wrong while serving");
                                }
                            }
                            Err(_) => return (acked, None, checked, failures),
                        }
                    }
                    unreachable!("the writers stop at the kill")
                })
            })
            .collect();
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
        }
        commits = counter(server.stats, "freeblock_layout_map_commits_total");
        server.child.kill().unwrap();
        t.killed_mid_write += 1;
        for w in writers {
            let (a, block, checked, failures) = w.join().unwrap();
            acked.extend(a);
            in_flight.extend(block);
            t.checked += checked;
            t.failures += failures;
        }
    });
    (acked, in_flight, commits)
}

/// A counter of this server's life from its stats endpoint (0 when it has none).
/// `freeblock check` on the killed server's store: clean, or a failure naming the trial.
fn check_after_kill(store: &std::path::Path, layout: usize, trial: u32, t: &mut Totals) {
    let report = check_store(store, false);
    t.recoverable += report.findings.iter().filter(|f| f.recoverable).count() as u64;
    if !report.clean() {
        t.failures += 1;
        eprintln!("{} trial {trial}: freeblock check after the kill:\n{report}", LAYOUTS[layout].0);
    }
}

fn counter(stats: SocketAddr, name: &str) -> u64 {
    fetch_stats(stats).lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// Reads back every acknowledged block, counting the reads and the blocks that lost their write.
fn check_acknowledged(client: &mut Client, acknowledged: &BTreeMap<u64, Vec<u8>>, trial: u32, t: &mut Totals) {
    for (&block, want) in acknowledged {
        t.checked += 1;
        if client.read(block * 4096, 4096).unwrap() != *want {
            t.failures += 1;
            eprintln!("after trial {trial}: block {block} lost its acknowledged write");
        }
    }
}
