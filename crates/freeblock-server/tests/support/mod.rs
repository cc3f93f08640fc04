//! A server started by the test on loopback, and real NBD clients run against it.

#![allow(dead_code)]

pub mod client;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

use freeblock_server::{Finished, Pace, Server, ServerConfig};
use tokio::sync::oneshot;

/// A scratch directory removed at the end of the test.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!("freeblock-server-{tag}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running server; [`Running::stop`] shuts it down cleanly and returns its summary.
pub struct Running {
    pub addr: SocketAddr,
    pub export: String,
    pub stats: Option<SocketAddr>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Finished>>,
}

impl Running {
    /// An `nbd://` URI of the export.
    pub fn uri(&self) -> String {
        format!("nbd://{}/{}", self.addr, self.export)
    }

    /// qemu's `--image-opts` / JSON form of the export.
    pub fn qemu(&self) -> String {
        format!("nbd://{}/{}", self.addr, self.export)
    }

    pub fn stop(mut self) -> Finished {
        let _ = self.stop.take().unwrap().send(());
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts a server on 127.0.0.1 (a free port) with `config` (its `listen` is replaced).
pub fn start(mut config: ServerConfig) -> Running {
    config.listen = Some("127.0.0.1:0".parse().unwrap());
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async move {
            let server = Server::start(&config).await.unwrap();
            ready_tx.send((server.tcp_addr().unwrap(), server.export_name().to_string(), server.stats_addr())).unwrap();
            server
                .serve(async move {
                    let _ = stop_rx.await;
                })
                .await
                .unwrap()
        })
    });
    let (addr, export, stats) = ready_rx.recv().expect("the server started");
    Running { addr, export, stats, stop: Some(stop_tx), thread: Some(thread) }
}

/// A configuration on `disk` storing in `store`, paced `pace`.
pub fn config(disk: &str, store: &Path, pace: Pace) -> ServerConfig {
    ServerConfig { disk: disk.into(), pace, ..ServerConfig::new(store.to_path_buf()) }
}

/// Whether a missing client fails the test (CI sets FREEBLOCK_REQUIRE_CLIENTS=1) or skips it.
pub fn require_clients() -> bool {
    std::env::var("FREEBLOCK_REQUIRE_CLIENTS").is_ok_and(|v| v == "1")
}

/// Whether `program` is on PATH; if not, says the test is skipped (or fails in CI).
pub fn have(program: &str) -> bool {
    let found = Command::new("sh").arg("-c").arg(format!("command -v {program}")).output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(!require_clients(), "{program} is not installed and FREEBLOCK_REQUIRE_CLIENTS=1: install it (.ci/run does)");
        eprintln!("SKIPPED: {program} is not installed (set FREEBLOCK_REQUIRE_CLIENTS=1 to make this a failure)");
    }
    found
}

/// Runs a command, failing the test with its output if it fails.
pub fn run(program: &str, args: &[&str]) -> Output {
    let out = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(out.status.success(), "{program} {args:?} failed ({}):\nstdout:\n{}\nstderr:\n{}", out.status, String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    out
}

/// stdout as text.
pub fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The Prometheus text of a server's stats endpoint.
pub fn fetch_stats(addr: SocketAddr) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
    let mut body = String::new();
    let _ = s.read_to_string(&mut body);
    body
}
