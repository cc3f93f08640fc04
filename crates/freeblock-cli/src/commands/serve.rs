//! `freeblock serve`: export a modelled disk over NBD (the `freeblock-server` crate), and
//! `freeblock stats`: read a running server's counters from its loopback stats endpoint.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use freeblock_server::{Pace, Server, ServerConfig};

use crate::output::CmdResult;

/// `freeblock serve` arguments: a config file, each field overridable.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A TOML configuration (disk, store, export, pace, listen, unix, stats, [sim], [freeblock]).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The modelled disk: a built-in name, a TOML spec or a DiskSim .diskspecs file.
    #[arg(long)]
    disk: Option<String>,
    /// The sparse backing file (created at the disk's capacity).
    #[arg(long)]
    store: Option<PathBuf>,
    /// The export's name (default: the disk's).
    #[arg(long)]
    export: Option<String>,
    /// real: hold each reply until the model's completion time; none: answer at once.
    #[arg(long)]
    pace: Option<Pace>,
    /// With pace real: run the engine thread at SCHED_FIFO priority 1, so that other work on the
    /// machine cannot delay replies (needs root or CAP_SYS_NICE).
    #[arg(long)]
    realtime: bool,
    /// TCP address (default 127.0.0.1:10809 unless --unix is given).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// A Unix socket to listen on.
    #[arg(long)]
    unix: Option<PathBuf>,
    /// Loopback address for the stats endpoint (Prometheus text over HTTP).
    #[arg(long)]
    stats: Option<SocketAddr>,
}

impl ServeArgs {
    fn config(&self) -> Result<ServerConfig, Box<dyn std::error::Error>> {
        let mut c = match (&self.config, &self.store) {
            (Some(path), _) => ServerConfig::from_file(path)?,
            (None, Some(store)) => ServerConfig::new(store.clone()),
            (None, None) => return Err("freeblock serve needs --store FILE or --config FILE".into()),
        };
        if let Some(v) = &self.disk {
            c.disk.clone_from(v);
        }
        if let Some(v) = &self.store {
            c.store.clone_from(v);
        }
        if let Some(v) = &self.export {
            c.export = Some(v.clone());
        }
        if let Some(v) = self.pace {
            c.pace = v;
        }
        if self.realtime {
            c.realtime = true;
        }
        if let Some(v) = self.listen {
            c.listen = Some(v);
        }
        if let Some(v) = &self.unix {
            c.unix = Some(v.clone());
        }
        if let Some(v) = self.stats {
            c.stats = Some(v);
        }
        Ok(c)
    }
}

/// Runs the server until SIGINT or SIGTERM, then prints what it served.
pub fn serve(args: &ServeArgs) -> CmdResult {
    let config = args.config()?;
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    // The engine thread keeps one core busy; the workers (reading requests, the store's bytes)
    // take the others. On two cores a second worker only contends with the engine and the
    // clients: with one, the server spent 6.0–6.9 µs of CPU per 4 KB read at 100k IOPS,
    // against 7.5–8.4 µs with two (docs/server.md, "Throughput").
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    runtime.worker_threads(cores.saturating_sub(1).max(1));
    if config.pace == Pace::Real {
        // The workers read the requests, whose arrival instants the model takes: they too
        // should wake on time. A refused SCHED_FIFO is reported by the engine's start.
        let realtime = config.realtime;
        runtime.on_thread_start(move || {
            let _ = freeblock_server::pacing::wake_on_time(realtime);
        });
    }
    let runtime = runtime.enable_all().build()?;
    let finished = runtime.block_on(async {
        let server = Server::start(&config).await?;
        let mut listening = Vec::new();
        if let Some(a) = server.tcp_addr() {
            listening.push(format!("nbd://{a}/{}", server.export_name()));
        }
        if let Some(u) = &config.unix {
            listening.push(format!("nbd+unix:///{}?socket={}", server.export_name(), u.display()));
        }
        if let Some(a) = server.stats_addr() {
            listening.push(format!("stats http://{a}/metrics"));
        }
        eprintln!("freeblock serve: {} on {} (pace {}); {}", server.export_name(), config.disk, config.pace, listening.join(", "));
        let stop = async {
            if let Err(e) = freeblock_server::server::signals().await {
                eprintln!("freeblock serve: cannot watch SIGINT/SIGTERM ({e}); stop with kill -9 only");
                std::future::pending::<()>().await;
            }
        };
        server.serve(stop).await
    })?;
    let s = finished.summary;
    outln!("requests           {}", s.requests);
    outln!("timed by the model {}  mean response {:.3} ms", s.timed, s.response_mean_ms);
    if config.pace == Pace::Real {
        outln!("lateness           p50 {:.1} µs  p99 {:.1} µs  max {:.1} µs", s.lateness_p50_us, s.lateness_p99_us, s.lateness_max_us);
    }
    if let Some(sc) = &finished.scrub {
        outln!("scrub              {} verified, {} mismatched, {} without a checksum, {} read errors; {} passes + {:.1}%", sc.verified, sc.mismatched, sc.unverified, sc.read_errors, sc.passes, sc.progress * 100.0);
    }
    if let Some(fb) = finished.report.as_ref().and_then(|r| r.freeblock.as_ref()) {
        outln!("freeblock          free {:.3} MB/s  idle {:.3} MB/s over {:.1} s", fb.free_mb_s, fb.idle_mb_s, fb.duration_s);
        for t in &fb.tasks {
            outln!("  task {:<24} {} blocks of {} bytes", t.name, t.blocks_delivered, t.block_bytes);
        }
    }
    Ok(())
}

/// `freeblock stats` arguments.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The server's stats endpoint (its --stats address).
    #[arg(default_value = "127.0.0.1:9100")]
    addr: SocketAddr,
    /// Print the endpoint's Prometheus text as served, not the summary.
    #[arg(long)]
    raw: bool,
}

/// Prints a running server's counters: a summary, or the raw Prometheus text (`--raw`).
pub fn stats(args: &StatsArgs) -> CmdResult {
    let mut s = TcpStream::connect_timeout(&args.addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n")?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let body = text.split_once("\r\n\r\n").map_or(text.as_str(), |(_, b)| b);
    if args.raw {
        out!("{body}");
    } else {
        out!("{}", freeblock_server::stats::readable(body));
    }
    Ok(())
}
