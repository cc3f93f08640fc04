//! One store has one server, and a server serves only the store its map belongs to (issue 37 §1):
//! a second server on a store in use, or on a live server's Unix socket, is refused naming the
//! holder; a socket name no file names is refused; a map without its store is refused at start;
//! a store deleted while serving fails the next FLUSH.

use crate::support;

use freeblock::experiment::LayoutSpec;
use freeblock_server::{Pace, Server, ServerConfig};
use support::client::Client;
use support::{config, start, Scratch};

const DISK: &str = "hp_c2247a";

fn refused(cfg: &ServerConfig) -> String {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(Server::start(cfg)).err().expect("the second start is refused").to_string()
}

/// A server of `store` placing every write anew (range writes): a layout with a map.
fn range_writes(store: &std::path::Path) -> ServerConfig {
    let mut cfg = config(DISK, store, Pace::None);
    cfg.layout = Some(toml::from_str::<LayoutSpec>("type = \"range_writes\"").unwrap());
    cfg
}

#[test]
fn a_second_server_on_a_store_in_use_is_refused_naming_the_first() {
    let dir = Scratch::new("guard-lock");
    let store = dir.path("disk.img");
    let mut cfg = range_writes(&store);
    let first = start(cfg.clone());
    let mut c = Client::connect(first.addr, &first.export).unwrap();
    c.write_fua(0, &[7; 4096]).unwrap();
    cfg.listen = Some("127.0.0.1:0".parse().unwrap());
    let err = refused(&cfg);
    assert!(err.contains("in use by pid") && err.contains(&std::process::id().to_string()) && err.contains("disk.img"), "{err}");
    // The first server goes on, its write intact.
    assert_eq!(c.read(0, 4096).unwrap(), vec![7; 4096]);
    drop(c);
    first.stop();
    // Stopped, the store is free again.
    let again = start(cfg);
    let mut c = Client::connect(again.addr, &again.export).unwrap();
    assert_eq!(c.read(0, 4096).unwrap(), vec![7; 4096]);
}

#[test]
fn a_live_servers_unix_socket_is_not_taken() {
    let dir = Scratch::new("guard-sock");
    let socket = dir.path("nbd.sock");
    let mut a = config(DISK, &dir.path("a.img"), Pace::None);
    a.unix = Some(socket.clone());
    let first = start(a);
    let mut b = config(DISK, &dir.path("b.img"), Pace::None);
    b.unix = Some(socket.clone());
    b.listen = Some("127.0.0.1:0".parse().unwrap());
    let err = refused(&b);
    assert!(err.contains("live server") && err.contains("nbd.sock"), "{err}");
    assert!(std::os::unix::net::UnixStream::connect(&socket).is_ok(), "the first server still answers on its socket");
    first.stop();
    // A socket file left behind by a server that is gone is taken over.
    let _ = std::os::unix::net::UnixListener::bind(&socket);
    let again = start(b);
    drop(again);
}

#[test]
fn a_unix_socket_name_no_file_names_is_refused() {
    for name in ["", "\0freeblock"] {
        let mut cfg = ServerConfig::new("unused.img".into());
        cfg.unix = Some(name.into());
        let err = cfg.validate().err().unwrap_or_else(|| panic!("unix = {name:?} is accepted")).to_string();
        assert!(err.contains("unix") && err.contains("abstract socket"), "{err}");
    }
}

#[test]
fn a_map_without_its_store_is_refused() {
    let dir = Scratch::new("guard-nomap");
    let store = dir.path("disk.img");
    let mut cfg = store_with_a_write(&dir);
    cfg.listen = Some("127.0.0.1:0".parse().unwrap());
    std::fs::remove_file(&store).unwrap();
    let err = refused(&cfg);
    assert!(err.contains("disk.img does not exist") && err.contains("map."), "{err}");
    assert!(!store.exists(), "no empty store was created in its place");
}

#[test]
fn a_store_deleted_while_serving_fails_the_flush() {
    let dir = Scratch::new("guard-deleted");
    let store = dir.path("disk.img");
    let s = start(config(DISK, &store, Pace::None));
    let mut c = Client::connect(s.addr, &s.export).unwrap();
    c.write(0, &[3; 4096]).unwrap();
    c.flush().expect("the store is there: FLUSH succeeds");
    std::fs::remove_file(&store).unwrap();
    c.write(4096, &[4; 4096]).unwrap();
    c.flush().expect_err("FLUSH into a deleted store must fail");
    assert!(c.write_fua(8192, &[5; 4096]).is_err(), "FUA into a deleted store must fail too");
}

/// A range-writes store holding one acknowledged FUA write, stopped; returns its configuration.
fn store_with_a_write(dir: &Scratch) -> ServerConfig {
    let cfg = range_writes(&dir.path("disk.img"));
    let s = start(cfg.clone());
    let mut c = Client::connect(s.addr, &s.export).unwrap();
    c.write_fua(1 << 20, &[9; 8192]).unwrap();
    drop(c);
    s.stop();
    cfg
}

#[test]
fn a_deleted_snapshot_is_refused_not_served_as_an_empty_map() {
    let dir = Scratch::new("guard-nosnap");
    let mut cfg = store_with_a_write(&dir);
    let journal = std::fs::read(dir.path("disk.img.map.journal")).unwrap();
    std::fs::remove_file(dir.path("disk.img.map.snapshot")).unwrap();
    cfg.listen = Some("127.0.0.1:0".parse().unwrap());
    let err = refused(&cfg);
    assert!(err.contains("disk.img.map.snapshot") && err.contains("missing"), "{err}");
    assert_eq!(std::fs::read(dir.path("disk.img.map.journal")).unwrap(), journal, "the journal is left as it was");
    let report = freeblock_server::check::check_store(&dir.path("disk.img"), false);
    assert!(!report.clean(), "check calls a store without its snapshot clean: {report:?}");
}

#[test]
fn a_deleted_journal_is_refused_and_check_reports_it() {
    let dir = Scratch::new("guard-nojournal");
    let mut cfg = store_with_a_write(&dir);
    std::fs::remove_file(dir.path("disk.img.map.journal")).unwrap();
    let report = freeblock_server::check::check_store(&dir.path("disk.img"), false);
    assert!(!report.clean() && report.findings.iter().any(|f| f.what.contains("disk.img.map.journal") && f.what.contains("missing")), "{report:?}");
    cfg.listen = Some("127.0.0.1:0".parse().unwrap());
    let err = refused(&cfg);
    assert!(err.contains("disk.img.map.journal") && err.contains("missing"), "{err}");
}

#[test]
fn a_lock_let_go_a_moment_later_is_waited_for() {
    // As a child forked by another thread holds a just-closed lock until it execs: the store's
    // lock is held here for 300 ms, and a server started meanwhile waits for it, not refuses.
    let dir = Scratch::new("guard-wait");
    let store = dir.path("disk.img");
    let held = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(dir.path("disk.img.lock")).unwrap();
    held.lock().unwrap();
    let letting_go = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(held);
    });
    let server = start(range_writes(&store));
    letting_go.join().unwrap();
    let mut c = Client::connect(server.addr, &server.export).unwrap();
    c.write_fua(0, &[9; 4096]).unwrap();
    assert_eq!(c.read(0, 4096).unwrap(), vec![9; 4096]);
}
