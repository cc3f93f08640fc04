//! One client must not hurt another (issue 37 §2). While one client pipelines 200 READs of
//! 32 MiB and never reads a reply, another sends a 4 GiB WRITE_ZEROES and a third reads its
//! replies slowly, a well-behaved client's requests keep a bounded p99 latency and the server's
//! memory stays bounded (the server runs in this process: its RSS is this process's). And the
//! connection limits: a handshake timeout, an idle timeout and a connection cap.

mod support;

use std::io::Read as _;
use std::time::{Duration, Instant};

use freeblock_server::config::ConnectionLimits;
use freeblock_server::Pace;
use support::client::Client;
use support::{config, fetch_stats, start, Scratch};

const READ: u16 = 0;

/// A field of /proc/self/status, KiB.
fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn p99(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[(v.len() * 99).div_ceil(100) - 1]
}

#[test]
fn a_well_behaved_client_keeps_its_latency_and_the_server_its_memory_under_hostile_clients() {
    let dir = Scratch::new("hostile");
    let mut cfg = config("atlas10k", &dir.path("disk.img"), Pace::None);
    cfg.stats = Some("127.0.0.1:0".parse().unwrap());
    let limits = cfg.connections;
    let server = start(cfg);
    let (addr, export) = (server.addr, server.export.clone());
    let mut good = Client::connect(addr, &export).unwrap();
    // The well-behaved client alone first: its latency without the others.
    let pattern: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    let timed = |c: &mut Client, n: u64| -> Vec<Duration> {
        (0..n)
            .map(|i| {
                let t = Instant::now();
                if i % 2 == 0 {
                    c.write(i * 4096, &pattern).unwrap();
                } else {
                    assert_eq!(c.read((i - 1) * 4096, 4096).unwrap(), pattern);
                }
                t.elapsed()
            })
            .collect()
    };
    let alone = p99(timed(&mut good, 200));
    let rss_before = status_kib("VmRSS:");

    // 1. 200 READs of 32 MiB pipelined (5.6 KB sent), no reply ever read.
    let mut greedy = Client::connect(addr, &export).unwrap();
    for i in 0..200u64 {
        greedy.send(READ, 0, (i % 64) << 25, 32 << 20, &[]).unwrap();
    }
    // 2. A WRITE_ZEROES of 4 GiB (less one block: the protocol's length is 32 bits), at 4 GiB.
    let zeroes = std::thread::spawn(move || {
        let mut c = Client::connect(addr, &export).unwrap();
        c.socket().set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let t = Instant::now();
        c.write_zeroes(4 << 30, u32::MAX - 4095).unwrap();
        t.elapsed()
    });
    // 3. A slow reader: 64 READs of 1 MiB pipelined, its replies read at about 16 MiB/s.
    let export = server.export.clone();
    let slow = std::thread::spawn(move || {
        let mut c = Client::connect(addr, &export).unwrap();
        for i in 0..64u64 {
            c.send(READ, 0, i << 20, 1 << 20, &[]).unwrap();
        }
        let mut buf = vec![0u8; 64 << 10];
        for _ in 0..64 {
            let (_, error) = c.reply_header().unwrap();
            assert_eq!(error, 0);
            for _ in 0..16 {
                c.socket().read_exact(&mut buf).unwrap();
                std::thread::sleep(Duration::from_millis(4));
            }
        }
    });
    std::thread::sleep(Duration::from_millis(300));
    let busy = timed(&mut good, 600);
    let busy_p99 = p99(busy);
    let zero_time = zeroes.join().unwrap();
    slow.join().unwrap();
    let peak = status_kib("VmHWM:");
    let rss_after = status_kib("VmRSS:");
    println!(
        "well-behaved client p99: {:.2} ms alone, {:.2} ms beside the hostile clients; 4 GiB WRITE_ZEROES answered in {:.2} s; RSS {} MiB before, {} MiB after, peak {} MiB (budget per connection {} MiB)",
        alone.as_secs_f64() * 1e3,
        busy_p99.as_secs_f64() * 1e3,
        zero_time.as_secs_f64(),
        rss_before >> 10,
        rss_after >> 10,
        peak >> 10,
        limits.in_flight_mb
    );
    // The greedy client holds at most its budget (64 MiB) and its socket; without the budget
    // it made the server allocate 200 x 32 MiB = 6.4 GB. The slow reader at most 64 MiB.
    assert!(peak.saturating_sub(rss_before) < 512 << 10, "the server's memory grew by {} MiB", peak.saturating_sub(rss_before) >> 10);
    assert!(busy_p99 < Duration::from_millis(250), "the well-behaved client's p99 was {busy_p99:?} beside the hostile clients ({alone:?} alone)");
    // The zeroes are there (holes, not 4 GiB of written zeroes): the store stayed sparse.
    let blocks_kib = std::fs::metadata(dir.path("disk.img")).map(|m| std::os::unix::fs::MetadataExt::blocks(&m) / 2).unwrap();
    assert!(blocks_kib < 256 << 10, "the store allocated {} MiB for zeroes", blocks_kib >> 10);
    assert_eq!(good.read(4 << 30, 4096).unwrap(), vec![0u8; 4096]);
    // The greedy client was served as far as its budget allowed, and is still connected.
    let stats = fetch_stats(server.stats.unwrap());
    assert!(stats.contains("freeblock_requests_total{op=\"write_zeroes\"} 1"), "{stats}");
    drop(greedy);
}

/// Raw TCP: the server's greeting and then whether it closes the connection within `within`.
fn closed_within(s: &mut std::net::TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn handshake_and_idle_timeouts_and_the_connection_cap_hold() {
    let dir = Scratch::new("limits");
    let mut cfg = config("hp_c2247a", &dir.path("disk.img"), Pace::None);
    cfg.stats = Some("127.0.0.1:0".parse().unwrap());
    cfg.connections = ConnectionLimits { max: 3, handshake_timeout_s: 0.5, idle_timeout_s: 0.5, ..ConnectionLimits::default() };
    let server = start(cfg);
    // A client that never finishes the handshake is closed after 0.5 s.
    let mut mute = std::net::TcpStream::connect(server.addr).unwrap();
    let t = Instant::now();
    assert!(closed_within(&mut mute, Duration::from_secs(5)), "the silent client is closed");
    assert!(t.elapsed() >= Duration::from_millis(400), "closed after its handshake time, not before: {:?}", t.elapsed());
    // An idle connection is closed after 0.5 s with nothing in flight; a busy one is not.
    let mut idle = Client::connect(server.addr, &server.export).unwrap();
    let mut busy = Client::connect(server.addr, &server.export).unwrap();
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(100));
        busy.read(0, 4096).unwrap();
    }
    assert!(closed_within(idle.socket(), Duration::from_secs(5)), "the idle client is closed");
    drop(idle);
    // The cap: three connections served; a fourth is closed at once and counted.
    let a = Client::connect(server.addr, &server.export).unwrap();
    let b = Client::connect(server.addr, &server.export).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut fourth = std::net::TcpStream::connect(server.addr).unwrap();
    assert!(closed_within(&mut fourth, Duration::from_secs(2)), "a fourth connection is closed");
    let stats = fetch_stats(server.stats.unwrap());
    assert!(stats.contains("freeblock_connections_refused_total 1"), "{stats}");
    // One leaves: there is room again.
    drop((a, b));
    std::thread::sleep(Duration::from_millis(200));
    busy.read(0, 4096).unwrap();
    let mut again = Client::connect(server.addr, &server.export).unwrap();
    again.read(4096, 4096).unwrap();
}
