//! The server: opens the store, starts the engine, listens (TCP on loopback by default, and/or a
//! Unix socket), serves each connection in its own task, and shuts down cleanly.
//!
//! ```text
//!  Server::start ──► Store::open (checks STORE.layout.json) ─► with a layout: the policy recovered
//!                    from STORE.map.*, wrapped in a Placement ─► Timing::start (engine thread)
//!                    ─► bind TCP / Unix / stats
//!  Server::serve ──► accept loop ──► nbd::serve per connection (tokio task)
//!        shutdown ─► stop accepting ─► connections stop reading, send replies in flight
//!                 ─► engine ends (in-flight requests timed) ─► fdatasync the store ─► Summary
//! ```
//!
//! | shutdown step | why |
//! |---|---|
//! | connections finish the requests they have read | nothing a client was told is lost |
//! | a flush through the engine (a placed export) | writes a layout acknowledged from memory (LFS's segment being filled) reach the store |
//! | `fdatasync` of the store | writes acknowledged without FUA/FLUSH are made durable too |
//! | the engine's report and the lateness summary | printed by `freeblock serve` |

use std::future::Future;
use std::net::SocketAddr;
use std::os::fd::AsFd as _;
use std::path::PathBuf;
use std::sync::Arc;

use freeblock::report::RunReport;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::watch;
use tokio::task::JoinSet;

use freeblock::layout::journal::DirStorage;
use freeblock::layout::LayoutPolicy;

use crate::config::{ConfigError, ServerConfig};
use crate::nbd::{self, Export};
use crate::placement::{InFlight, Placement, PlacementCounters, PlacementSummary};
use crate::reply::DirectSocket;
use crate::scrub::{Checksums, Scrub, ScrubCounters, ScrubSummary};
use crate::stats::Summary;
use crate::store::{Store, StoreError, StoreMeta};
use crate::timing::Timing;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The configuration.
    #[error("config: {0}")]
    Config(#[from] ConfigError),
    /// The disk could not be loaded.
    #[error("disk {name}: {source}")]
    Disk {
        /// The name or path given.
        name: String,
        /// The cause.
        source: freeblock_disk::SpecError,
    },
    /// The backing file.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The engine refused its configuration or failed.
    #[error("engine: {0}")]
    Engine(#[from] freeblock::Error),
    /// A listener could not be opened.
    #[error("listen on {address}: {source}")]
    Listen {
        /// The address or socket path.
        address: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The final sync of the store failed: writes acknowledged without FLUSH may be lost.
    #[error("store sync at shutdown: {0}")]
    Sync(std::io::Error),
}

/// What a finished server reports.
#[derive(Debug)]
pub struct Finished {
    /// Requests, model response time and lateness.
    pub summary: Summary,
    /// The engine's run report (head usage, freeblock work).
    pub report: Option<RunReport>,
    /// What the scrub found, when one ran.
    pub scrub: Option<ScrubSummary>,
    /// What the physical store did, with a layout policy.
    pub placement: Option<PlacementSummary>,
}

/// A started server (listening), ready to [`Server::serve`].
pub struct Server {
    export: Arc<Export>,
    tcp: Option<TcpListener>,
    unix: Option<(UnixListener, PathBuf)>,
    stats: Option<TcpListener>,
}

impl Server {
    /// Opens the store, starts the engine and binds the listeners.
    ///
    /// # Errors
    /// [`ServerError`] naming what failed.
    pub async fn start(config: &ServerConfig) -> Result<Self, ServerError> {
        config.validate()?;
        let spec = freeblock_disk::library::load(&config.disk).map_err(|source| ServerError::Disk { name: config.disk.clone(), source })?;
        let spec = match config.write_cache {
            Some(mode) => spec.without_cache().with_write_cache_mode(mode),
            None => Ok(spec.without_cache()),
        };
        let disk = Arc::new(spec.and_then(freeblock_disk::Disk::new).map_err(|source| ServerError::Disk { name: config.disk.clone(), source })?);
        let write_back = disk.spec().write_cache.is_some_and(|w| w.is_write_back());
        let sector_bytes = u64::from(disk.spec().sector_bytes);
        let meta = StoreMeta { disk: disk.spec().name.clone(), disk_sectors: disk.capacity(), sector_bytes, layout: config.layout.clone(), created_empty: true };
        let (store, meta) = Store::open(&config.store, &meta)?;
        if let Some(bytes) = config.store_space_limit {
            store.limit_space(bytes);
        }
        let store = Arc::new(store);
        let name = config.export.clone().unwrap_or_else(|| disk.spec().name.clone());
        let checksums = match config.scrub {
            Some(_) => Some(Arc::new(Checksums::open(&config.store, store.size(), meta.created_empty).map_err(|source| StoreError::Io { path: crate::store::beside(&config.store, "sums"), source })?)),
            None => None,
        };
        let in_flight: InFlight = Arc::default();
        // A layout policy keeps part of the disk for itself (the export is what it offers) and
        // places the bytes by its map, which is recovered from the files beside the store.
        let (layout, block_sectors, placement) = match &config.layout {
            Some(spec) => {
                let files = DirStorage::beside(&config.store).map_err(freeblock::Error::Layout)?;
                let policy: Box<dyn LayoutPolicy> = match crate::placement::read_journal(&files).map_err(freeblock::Error::Layout)? {
                    None => spec.build(&disk)?,
                    Some(mem) => match crate::placement::recover_policy(&disk, spec, mem, &store) {
                        Some(recovered) => recovered.map_err(|e| freeblock::Error::Layout(crate::placement::naming_files(e, &files)))?,
                        None => return Err(ConfigError::Invalid { field: "layout.type", message: "only rearrange and fs2 are served".into() }.into()),
                    },
                };
                let block_sectors = spec.block_sectors();
                let counters = Arc::new(PlacementCounters::default());
                let placed = Placement::new(policy, Arc::clone(&store), checksums.clone(), Arc::clone(&in_flight), sector_bytes, block_sectors, files, Arc::clone(&counters)).map_err(freeblock::Error::Layout)?;
                let commits = placed.commits();
                (Some((Box::new(placed) as Box<dyn LayoutPolicy>, Some(commits))), block_sectors, Some(counters))
            }
            None => (None, 1, None),
        };
        let logical_sectors = layout.as_ref().and_then(|(l, _)| l.logical_sectors()).unwrap_or(disk.capacity());
        // Whole blocks only, so that a request widened to blocks never passes the end.
        let size = logical_sectors / block_sectors * block_sectors * sector_bytes;
        let (scrub, apps) = match (config.scrub, &checksums) {
            (Some(s), Some(sums)) => {
                let counters = Arc::new(ScrubCounters::default());
                let scrub = Scrub::new(Arc::clone(&store), Arc::clone(sums), sector_bytes, Arc::clone(&counters), s.passes).map_err(|e| freeblock::Error::Config { origin: "scrub".into(), message: format!("cannot start the scrub's checker thread: {e}") })?;
                let app: Box<dyn freeblock::freeblock::BackgroundApp> = Box::new(scrub);
                (Some(counters), vec![app])
            }
            _ => (None, Vec::new()),
        };
        let timing = Timing::start(disk, config.sim.clone(), config.freeblock.clone(), apps, layout, config.pace, config.realtime, in_flight)?;
        let placed = placement.is_some();
        let export = Arc::new(Export { name, store, checksums, scrub, timing, stats: Arc::default(), sector_bytes, block_sectors, size, placed, placement, limits: config.connections, write_back });
        let listen_err = |address: String| move |source| ServerError::Listen { address, source };
        let tcp = match config.tcp() {
            Some(a) => Some(TcpListener::bind(a).await.map_err(listen_err(a.to_string()))?),
            None => None,
        };
        let unix = match &config.unix {
            Some(path) => {
                // A socket file left by a server that was killed would refuse the bind; one a
                // live server answers on is that server's, and taking it would steal its clients.
                if std::fs::symlink_metadata(path).is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type())) {
                    if std::os::unix::net::UnixStream::connect(path).is_ok() {
                        return Err(ServerError::Listen { address: path.display().to_string(), source: std::io::Error::new(std::io::ErrorKind::AddrInUse, "a live server answers on this socket") });
                    }
                    let _ = std::fs::remove_file(path);
                }
                Some((UnixListener::bind(path).map_err(listen_err(path.display().to_string()))?, path.clone()))
            }
            None => None,
        };
        let stats = match config.stats {
            Some(a) => Some(TcpListener::bind(a).await.map_err(listen_err(a.to_string()))?),
            None => None,
        };
        Ok(Self { export, tcp, unix, stats })
    }

    /// The TCP address bound (port 0 in the configuration picks a free one).
    #[must_use]
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        self.tcp.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The stats endpoint's address.
    #[must_use]
    pub fn stats_addr(&self) -> Option<SocketAddr> {
        self.stats.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The export's name.
    #[must_use]
    pub fn export_name(&self) -> &str {
        &self.export.name
    }

    /// Serves until `stop` resolves, then shuts down cleanly (see the module doc).
    ///
    /// # Errors
    /// [`ServerError::Engine`] if the engine failed, [`ServerError::Sync`] if the final sync did.
    pub async fn serve(self, stop: impl Future<Output = ()>) -> Result<Finished, ServerError> {
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut connections = JoinSet::new();
        tokio::pin!(stop);
        let spawn = |set: &mut JoinSet<()>, socket: Box<dyn Socket>, direct: Option<DirectSocket>, export: &Arc<Export>| {
            let (export, stop_rx) = (Arc::clone(export), stop_rx.clone());
            set.spawn(async move {
                // A connection's failure is its own: the others go on.
                let _ = nbd::serve(socket, direct, export, stop_rx).await;
            });
        };
        loop {
            tokio::select! {
                () = &mut stop => break,
                Ok((s, _)) = accept_tcp(self.tcp.as_ref()) => {
                    if full(&connections, &self.export) {
                        continue;
                    }
                    let _ = s.set_nodelay(true);
                    // Without a duplicate descriptor the replies still go out, through the flusher.
                    let direct = s.as_fd().try_clone_to_owned().ok().map(DirectSocket::tcp);
                    spawn(&mut connections, Box::new(s), direct, &self.export);
                }
                Ok((s, _)) = accept_unix(self.unix.as_ref().map(|(l, _)| l)) => {
                    if full(&connections, &self.export) {
                        continue;
                    }
                    let direct = s.as_fd().try_clone_to_owned().ok().map(DirectSocket::unix);
                    spawn(&mut connections, Box::new(s), direct, &self.export);
                }
                Ok((s, _)) = accept_tcp(self.stats.as_ref()) => {
                    let export = Arc::clone(&self.export);
                    tokio::spawn(serve_stats(s, export));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        let _ = stop_tx.send(true);
        while connections.join_next().await.is_some() {}
        // A layout that acknowledged writes from memory (LFS) writes them before the engine ends.
        let written = match self.export.placed {
            true => nbd::flush_placed(&self.export, std::time::Instant::now()).await.map(|_| ()),
            false => Ok(()),
        };
        let export = Arc::clone(&self.export);
        // (An engine that failed says why, rather than the flush that it stopped.)
        let report = tokio::task::spawn_blocking(move || export.timing.finish()).await.map_err(|e| freeblock::Error::Config { origin: "server".into(), message: e.to_string() })??;
        written.map_err(|e| ServerError::Sync(std::io::Error::other(e)))?;
        self.export.store.sync().map_err(ServerError::Sync)?;
        if let Some(sums) = &self.export.checksums {
            sums.sync().map_err(ServerError::Sync)?;
        }
        if let Some((_, path)) = &self.unix {
            let _ = std::fs::remove_file(path);
        }
        let scrub = self.export.scrub.as_ref().map(|c| c.snapshot());
        let placement = self.export.placement.as_ref().map(|c| c.snapshot());
        Ok(Finished { summary: self.export.stats.summary(), report, scrub, placement })
    }
}

/// Whether the server already serves as many connections as it may: the one just accepted is
/// then closed at once (dropped), and counted.
fn full(connections: &JoinSet<()>, export: &Export) -> bool {
    let full = connections.len() >= export.limits.max;
    if full {
        export.stats.refused_connection();
    }
    full
}

/// A socket a connection is served on.
trait Socket: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Socket for T {}

async fn accept_tcp(l: Option<&TcpListener>) -> std::io::Result<(tokio::net::TcpStream, SocketAddr)> {
    match l {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

async fn accept_unix(l: Option<&UnixListener>) -> std::io::Result<(tokio::net::UnixStream, tokio::net::unix::SocketAddr)> {
    match l {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

/// Answers one HTTP request on the stats endpoint with the Prometheus text, whatever the path.
async fn serve_stats(mut s: tokio::net::TcpStream, export: Arc<Export>) {
    let mut buf = [0u8; 1024];
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), s.read(&mut buf)).await;
    let mut body = export.stats.prometheus();
    if let Some(c) = &export.scrub {
        let s = c.snapshot();
        body.push_str(&format!(
            "# TYPE freeblock_scrub_blocks_total counter\nfreeblock_scrub_blocks_total{{verdict=\"verified\"}} {}\nfreeblock_scrub_blocks_total{{verdict=\"mismatched\"}} {}\nfreeblock_scrub_blocks_total{{verdict=\"unverified\"}} {}\nfreeblock_scrub_blocks_total{{verdict=\"read_error\"}} {}\n# TYPE freeblock_scrub_passes_total counter\nfreeblock_scrub_passes_total {}\n# TYPE freeblock_scrub_pass_progress gauge\nfreeblock_scrub_pass_progress {:.6}\n",
            s.verified, s.mismatched, s.unverified, s.read_errors, s.passes, s.progress
        ));
        body.push_str(&crate::stats::scrub_rate_prometheus(&s));
    }
    if let Some(c) = &export.placement {
        body.push_str(&c.prometheus());
    }
    let head = format!("HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    let _ = s.write_all(head.as_bytes()).await;
    let _ = s.write_all(body.as_bytes()).await;
    let _ = s.shutdown().await;
}

/// Resolves on SIGINT or SIGTERM.
///
/// # Errors
/// When the signal handlers cannot be installed.
pub async fn signals() -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}
