//! Layout policies live: the model serves the server's requests through rearrangement, FS2 or
//! range writes, the bytes live where the policy's map puts them (moves copy them, writes land
//! where they were placed), and clients read back the bytes they wrote, also after a restart
//! that recovers the map from its files.

use crate::support;

use freeblock::experiment::LayoutSpec;
use freeblock_server::Pace;
use support::{config, have, run, start, text, Scratch};

const READS: [&str; 5] = ["read -P 0x21 0 5000", "read -P 0x42 5000 3000", "read -P 0x21 8000 1040576", "read -P 0x63 300m 64k", "read -P 0 400m 64k"];

/// Writes patterns (qemu aligns the unaligned one to the policy's block, which the export
/// asks for), reads them back, restarts the server on the same store and reads them again.
fn serve_through(layout: &str) -> (String, freeblock_server::Finished) {
    let dir = Scratch::new("layout");
    let mut cfg = config("atlas10k", &dir.path("store"), Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>(layout).unwrap());
    let server = start(cfg.clone());
    let uri = server.uri();
    run("qemu-io", &["-f", "raw", "-c", "write -P 0x21 0 1m", "-c", "write -P 0x42 5000 3000", "-c", "write -P 0x63 300m 64k", "-c", "flush", &uri]);
    let reads: Vec<&str> = READS.iter().flat_map(|r| ["-c", r]).collect();
    let out = text(&run("qemu-io", &[&["-f", "raw"][..], &reads, &[uri.as_str()]].concat()));
    let finished = server.stop();
    assert!(dir.path("store.map.snapshot").is_file() && dir.path("store.map.journal").is_file(), "the map is kept beside the store");
    let again = start(cfg);
    let uri = again.uri();
    let after = text(&run("qemu-io", &[&["-f", "raw"][..], &reads, &[uri.as_str()]].concat()));
    again.stop();
    (format!("{out}{after}"), finished)
}

#[test]
fn rearrangement_serves_the_written_bytes() {
    if !have("qemu-io") {
        return;
    }
    // The default period (a day) only monitors; a 50 ms period rearranges while the clients run.
    for (layout, moves) in [("type = \"rearrange\"", false), ("type = \"rearrange\"\nperiod_s = 0.05\nschedule = \"always\"", true)] {
        let (out, finished) = serve_through(layout);
        assert!(!out.contains("Pattern verification failed") && out.matches("read ").count() == 10, "{layout}: {out}");
        let report = finished.report.unwrap();
        let summary = report.layout.expect("the run had a layout policy");
        let summary_ios = summary.policy_ios;
        let policy = summary.policy;
        assert!(policy.to_lowercase().contains("rearrange"), "{layout}: the engine ran {policy}");
        assert_eq!(summary_ios > 0, moves, "{layout}: {summary_ios} policy I/Os");
        // Pace none runs the model ahead only to answer requests: a period of a day does not
        // end while the clients pause between commands.
        let periods = summary.details["periods"].as_array().map_or(0, Vec::len);
        assert_eq!(periods > 0, moves, "{layout}: {periods} periods ended");
        let copied = finished.placement.expect("a placed store").blocks_copied;
        assert_eq!(copied > 0, moves, "{layout}: {copied} blocks copied by moves");
        // qemu reads and rewrites the blocks around the unaligned write: more than 3 + 5.
        assert!(finished.summary.timed >= 8, "three writes and five reads timed at least: {layout} {:?}", finished.summary);
        assert!(finished.summary.requests >= 9, "{:?}", finished.summary);
    }
}

#[test]
fn fs2_serves_the_written_bytes() {
    if !have("qemu-io") {
        return;
    }
    // A small epoch and threshold 1 so that the few requests of the test make replicas.
    let layout = "type = \"fs2\"\nepoch_accesses = 4\nthreshold = 1\nservice = \"foreground\"";
    let (out, finished) = serve_through(layout);
    assert!(!out.contains("Pattern verification failed") && out.matches("read ").count() == 10, "{out}");
    let summary = finished.report.unwrap().layout.expect("the run had a layout policy");
    assert!(summary.policy.to_lowercase().contains("fs2"), "the engine ran {}", summary.policy);
    assert!(finished.placement.expect("a placed store").blocks_copied > 0, "FS2 replicated blocks: {:?}", finished.placement);
    assert!(finished.summary.timed >= 8, "three writes and five reads timed at least: {:?}", finished.summary);
}

#[test]
fn range_writes_serve_the_written_bytes() {
    if !have("qemu-io") {
        return;
    }
    // The 1 MiB write is longer than four candidates of it fit on a track: it is placed in pieces.
    let (out, finished) = serve_through("type = \"range_writes\"");
    assert!(!out.contains("Pattern verification failed") && out.matches("read ").count() == 10, "{out}");
    let report = finished.report.unwrap();
    let summary = report.layout.expect("the run had a layout policy");
    assert!(summary.policy.contains("range-writes"), "the engine ran {}", summary.policy);
    let writes = summary.details["writes"].as_u64().unwrap();
    let moved = summary.details["moved_share"].as_f64().unwrap();
    // qemu's writes are 3, and its read-modify-write of the unaligned one: pieces are more.
    assert!(writes > 4, "{writes} write I/Os");
    assert!(moved > 0.0, "no write went anywhere but its first candidate: {:?}", summary.details);
    let placement = finished.placement.expect("a placed store");
    assert!(placement.commits >= writes, "a commit per write I/O at least: {placement:?}");
}

/// Range writes under concurrent writers on several connections: fio writes random 4 KiB
/// blocks from 4 jobs at queue depth 4 and reads every one back against its crc32c, so writes
/// are placed while reads of the blocks they move are in flight.
#[test]
fn range_writes_keep_every_block_under_concurrent_writers() {
    if !have("fio") {
        return;
    }
    let dir = Scratch::new("layout-rw-fio");
    let mut cfg = config("atlas10k", &dir.path("store"), Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>("type = \"range_writes\"").unwrap());
    let server = start(cfg);
    let uri = format!("--uri={}", server.uri());
    // 256 KiB a job: every write commits the map with two syncs, so keep it small.
    let args = ["--name=verify", "--ioengine=nbd", &uri, "--rw=randwrite", "--bs=4k", "--size=256k", "--offset_increment=1m", "--numjobs=4", "--iodepth=4", "--verify=crc32c", "--do_verify=1", "--verify_fatal=1", "--verify_state_save=0", "--group_reporting"];
    let out = text(&run("fio", &args));
    assert!(out.contains("err= 0") && out.contains("READ:") && out.contains("WRITE:"), "{out}");
    let finished = server.stop();
    let summary = finished.report.unwrap().layout.expect("the run had a layout policy");
    assert_eq!(summary.details["writes"].as_u64(), Some(4 * 64), "{:?}", summary.details);
}

/// The backing file failing one request's bytes (here: the file cut short behind the server's
/// back, so a read past the cut fails) fails that request with EIO; the engine and the other
/// requests go on.
#[test]
fn a_store_failure_fails_only_its_request() {
    let dir = Scratch::new("layout-eio");
    let store = dir.path("store");
    let mut cfg = config("atlas10k", &store, Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>("type = \"rearrange\"").unwrap());
    let server = start(cfg);
    let mut c = support::client::Client::connect(server.addr, &server.export).unwrap();
    c.write_fua(0, &[0x5a; 8192]).unwrap();
    std::fs::OpenOptions::new().write(true).open(&store).unwrap().set_len(1 << 20).unwrap();
    let err = c.read(512 << 20, 8192).unwrap_err().to_string();
    assert!(err.contains(&format!("error {}", freeblock_server::protocol::errno::EIO)), "{err}");
    assert_eq!(c.read(0, 8192).unwrap(), vec![0x5a; 8192], "the next request is served");
    drop(c);
    server.stop();
}
