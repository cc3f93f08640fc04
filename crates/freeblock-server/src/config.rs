//! The server's configuration: a TOML file (`freeblock serve --config FILE`), every field
//! overridable on the command line.
//!
//! ```toml
//! disk = "atlas10k"            # a built-in disk, a .toml spec or a DiskSim .diskspecs file
//! store = "atlas.img"          # the sparse backing file (created at the disk's capacity)
//! export = "atlas10k"          # the export's name ("" also reaches it)
//! pace = "real"                # real | none
//! realtime = false             # pace real: the engine thread at SCHED_FIFO (needs CAP_SYS_NICE)
//! listen = "127.0.0.1:10809"   # TCP (loopback by default); omit with unix = … for a socket only
//! unix = "/tmp/freeblock.sock" # a Unix socket (optional)
//! stats = "127.0.0.1:9100"     # Prometheus text over HTTP (optional, loopback)
//! [sim]                        # the engine: scheduler, queue_depth (as in experiment files)
//! scheduler = "sptf"
//! [freeblock]                  # background work in free bandwidth (as in experiment files)
//! [scrub]                      # verify every block's checksum with freeblock scheduling
//! passes = 0                   # 0 = for ever
//! [layout]                     # the model serves requests through a layout policy
//! type = "rearrange"           # or "fs2", "range_writes", "lfs", as in experiment files
//! [connections]                # what one client may take (defaults below)
//! max = 64                     # connections served at once; one more is closed at once
//! in_flight_requests = 128     # per connection: requests read and not yet answered on the socket
//! in_flight_mb = 64            # per connection: their bytes (payloads, read buffers, replies)
//! handshake_timeout_s = 10     # a client that has not finished the handshake by then is closed
//! idle_timeout_s = 0           # a connection with nothing in flight this long is closed (0: never)
//! ```
//!
//! | field | default |
//! |---|---|
//! | `disk` | `atlas10k` |
//! | `store` | required |
//! | `export` | the disk's name |
//! | `pace` | `real` |
//! | `realtime` | `false` |
//! | `listen` | `127.0.0.1:10809` unless `unix` is given |
//! | `sim` | FCFS, no queue limit |

use std::net::SocketAddr;
use std::path::PathBuf;

use freeblock::experiment::LayoutSpec;
use freeblock::freeblock::FreeblockConfig;
use freeblock::sim::SimConfig;
use serde::{Deserialize, Serialize};

use crate::timing::Pace;

/// The default NBD port.
pub const NBD_PORT: u16 = 10809;

/// A server's configuration (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The modelled disk.
    #[serde(default = "default_disk")]
    pub disk: String,
    /// The backing file.
    pub store: PathBuf,
    /// The export's name; default the disk's.
    #[serde(default)]
    pub export: Option<String>,
    /// Reply pacing.
    #[serde(default)]
    pub pace: Pace,
    /// With pace real, run the engine thread at `SCHED_FIFO` priority 1 so that other work on
    /// the machine cannot delay a reply ([`crate::pacing`]); refused without `CAP_SYS_NICE`.
    #[serde(default)]
    pub realtime: bool,
    /// TCP address to listen on.
    #[serde(default)]
    pub listen: Option<SocketAddr>,
    /// Unix socket to listen on.
    #[serde(default)]
    pub unix: Option<PathBuf>,
    /// Loopback address for the Prometheus text endpoint.
    #[serde(default)]
    pub stats: Option<SocketAddr>,
    /// Engine settings (scheduler, queue depth).
    #[serde(default)]
    pub sim: SimConfig,
    /// Freeblock background work.
    #[serde(default)]
    pub freeblock: Option<FreeblockConfig>,
    /// A scrub of the real bytes with freeblock scheduling.
    #[serde(default)]
    pub scrub: Option<ScrubConfig>,
    /// A layout policy the model serves requests through (rearrangement, FS2, range writes): it
    /// also places the bytes in the store ([`crate::placement`]); a store keeps the layout it was made with.
    #[serde(default)]
    pub layout: Option<LayoutSpec>,
    /// Fault injection for tests, not a configuration key: the file system under the store as
    /// if it had only this many bytes left ([`crate::store::Store::limit_space`]).
    #[serde(skip)]
    #[doc(hidden)]
    pub store_space_limit: Option<u64>,
    /// What one client may take: see [`ConnectionLimits`].
    #[serde(default)]
    pub connections: ConnectionLimits,
    /// The modelled drive's `[write_cache]` mode (`write_back` or `write_through`), as
    /// `hdparm -W` sets it; default the spec's. With `write_back`, an NBD FLUSH is also timed in
    /// the model as FLUSH CACHE (its cost grows with the dirty data) and a write with
    /// `NBD_CMD_FLAG_FUA` as a FUA write. The store is made durable exactly as without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<freeblock_disk::WriteCacheMode>,
}

/// The `[connections]` table: bounds that keep one client from hurting another. A connection
/// past its in-flight bounds is not read from until replies go out (its client is pushed back
/// by TCP); the engine and the other connections go on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConnectionLimits {
    /// Connections served at once; one more is closed at once (and counted). Default 64.
    pub max: usize,
    /// Requests one connection may have read and not yet answered on its socket. Default 128.
    pub in_flight_requests: u64,
    /// MiB one connection may hold for them: WRITE payloads, READ buffers, replies its client
    /// has not read yet. Default 64 (two of the largest READs).
    pub in_flight_mb: u64,
    /// Seconds a client may take from connecting to choosing the export. Default 10.
    pub handshake_timeout_s: f64,
    /// Seconds a connection may wait for its next request with nothing in flight before it is
    /// closed; 0 never closes it (an idle block device is normal). Default 0.
    pub idle_timeout_s: f64,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self { max: 64, in_flight_requests: 128, in_flight_mb: 64, handshake_timeout_s: 10.0, idle_timeout_s: 0.0 }
    }
}

impl ConnectionLimits {
    /// The handshake's time limit.
    #[must_use]
    pub fn handshake_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.handshake_timeout_s)
    }

    /// The idle time limit, if any.
    #[must_use]
    pub fn idle_timeout(&self) -> Option<std::time::Duration> {
        (self.idle_timeout_s > 0.0).then(|| std::time::Duration::from_secs_f64(self.idle_timeout_s))
    }

    /// Bytes one connection may hold.
    #[must_use]
    pub fn in_flight_bytes(&self) -> u64 {
        self.in_flight_mb.saturating_mul(1 << 20)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, message: &str| Err(ConfigError::Invalid { field, message: message.into() });
        if self.max == 0 {
            return invalid("connections.max", "0 would serve nobody");
        }
        if self.in_flight_requests == 0 {
            return invalid("connections.in_flight_requests", "0 would read no request");
        }
        if self.in_flight_mb == 0 {
            return invalid("connections.in_flight_mb", "0 would hold no request (give at least 1)");
        }
        if !(self.handshake_timeout_s.is_finite() && self.handshake_timeout_s > 0.0 && self.handshake_timeout_s <= 86_400.0) {
            return invalid("connections.handshake_timeout_s", "must be a number of seconds in (0, 86400]");
        }
        if !(self.idle_timeout_s.is_finite() && (0.0..=31_536_000.0).contains(&self.idle_timeout_s)) {
            return invalid("connections.idle_timeout_s", "must be a number of seconds in [0, 31536000] (0: never)");
        }
        Ok(())
    }
}

/// The `[scrub]` table: verify every block's checksum as the modelled head passes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScrubConfig {
    /// Whole passes over the disk, then stop (0: scrub for ever). Default 0.
    #[serde(default)]
    pub passes: u64,
}

fn default_disk() -> String {
    "atlas10k".into()
}

/// A configuration that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a valid configuration: where (line and dotted key, as experiment files
    /// say it: [`freeblock_disk::toml_place`]) and what.
    #[error("{path}: {}", place.describe())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line, the key and the parser's message.
        place: freeblock_disk::toml_place::TomlPlace,
    },
    /// A field has a value the server refuses.
    #[error("{field}: {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// Why.
        message: String,
    },
}

impl ServerConfig {
    /// A configuration with every default, storing in `store`.
    #[must_use]
    pub fn new(store: PathBuf) -> Self {
        Self { disk: default_disk(), store, export: None, pace: Pace::Real, realtime: false, listen: None, unix: None, stats: None, sim: SimConfig::default(), freeblock: None, scrub: None, layout: None, store_space_limit: None, connections: ConnectionLimits::default(), write_cache: None }
    }

    /// Reads a TOML configuration file.
    ///
    /// # Errors
    /// [`ConfigError::Read`], [`ConfigError::Parse`].
    pub fn from_file(path: &std::path::Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
        toml::from_str(&text).map_err(|e| ConfigError::Parse { path: path.into(), place: freeblock_disk::toml_place::locate(&text, &e) })
    }

    /// Where to listen on TCP: the configured address, or loopback on the NBD port when no Unix
    /// socket is configured either.
    #[must_use]
    pub fn tcp(&self) -> Option<SocketAddr> {
        self.listen.or(if self.unix.is_none() { Some(SocketAddr::from(([127, 0, 0, 1], NBD_PORT))) } else { None })
    }

    /// Checks what can be checked before anything is opened.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(a) = self.stats.filter(|a| !a.ip().is_loopback()) {
            return Err(ConfigError::Invalid { field: "stats", message: format!("{a} is not a loopback address: the stats endpoint has no authentication") });
        }
        if let Some(u) = &self.unix {
            if u.as_os_str().as_encoded_bytes().first().is_none_or(|&b| b == 0) {
                return Err(ConfigError::Invalid { field: "unix", message: "an empty name, or one starting with NUL, binds an abstract socket no file names: give a file path".into() });
            }
        }
        if self.export.as_ref().is_some_and(|e| e.len() > 4096) {
            return Err(ConfigError::Invalid { field: "export", message: "longer than the protocol's 4096 bytes".into() });
        }
        if self.write_cache == Some(freeblock_disk::WriteCacheMode::WriteBack) && self.layout.is_some() {
            return Err(ConfigError::Invalid { field: "write_cache", message: "a write-back drive cache is not modelled under a layout policy (the engine refuses the pair): leave write_cache out or the layout".into() });
        }
        if self.sim.max_requests != 0 || self.sim.max_time_s != 0.0 || self.sim.warmup != 0 {
            return Err(ConfigError::Invalid { field: "sim", message: "max_requests, max_time_s and warmup do not apply to a server (it runs until stopped)".into() });
        }
        if let Some(LayoutSpec::Rearrange(c)) = &self.layout {
            if c.moves == freeblock::layout::rearrange::policy::Moves::Instant {
                return Err(ConfigError::Invalid { field: "layout.moves", message: "instant moves change the map without moving any data, and the server keeps real bytes where the map says: use foreground, idle, free or free_idle".into() });
            }
        }
        let idle = self.freeblock.as_ref().is_some_and(|f| f.idle_after_ms.is_some());
        if self.pace == Pace::None && idle && self.scrub.is_some_and(|s| s.passes == 0) {
            return Err(ConfigError::Invalid { field: "scrub.passes", message: "an endless scrub in idle time with pace none would run the model ahead as fast as the CPU allows, for ever: give it a number of passes, or use pace real".into() });
        }
        self.connections.validate()?;
        self.sim.validate().map_err(|e| ConfigError::Invalid { field: "sim", message: e.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ServerConfig, String> {
        let c: ServerConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }

    #[test]
    fn a_file_sets_every_field_and_defaults_fill_the_rest() {
        let c = parse("store = \"a.img\"\npace = \"none\"\nunix = \"/tmp/s\"\n[sim]\nscheduler = { type = \"sptf\" }\nqueue_depth = 8\n[scrub]\npasses = 2\n").unwrap();
        assert_eq!((c.disk.as_str(), c.pace, c.sim.queue_depth, c.scrub), ("atlas10k", Pace::None, 8, Some(ScrubConfig { passes: 2 })));
        // A Unix socket alone: no TCP listener unless asked for.
        assert_eq!(c.tcp(), None);
        assert_eq!(parse("store = \"a.img\"").unwrap().tcp(), Some(SocketAddr::from(([127, 0, 0, 1], NBD_PORT))));
    }

    #[test]
    fn settings_a_server_cannot_honour_are_refused_by_name() {
        let err = |t: &str| parse(t).unwrap_err();
        assert!(err("store = \"a\"\nstats = \"0.0.0.0:9100\"").starts_with("stats:"));
        assert!(err("store = \"a\"\n[sim]\nmax_requests = 10").starts_with("sim:"));
        assert!(err("store = \"a\"\npace = \"none\"\n[freeblock]\nidle_after_ms = 5\n[scrub]\n").starts_with("scrub.passes:"));
        assert!(err("store = \"a\"\npace = \"fast\"").contains("pace"));
        assert!(parse("store = \"a\"\n[layout]\ntype = \"range_writes\"").is_ok(), "range writes are served");
        assert!(parse("store = \"a\"\n[layout]\ntype = \"lfs\"").is_ok(), "LFS is served");
        let bad = err("store = \"a\"\n[layout]\ntype = \"lfs\"\npartition_mb = \"big\"");
        assert!(bad.contains("big"), "{bad}");
        assert!(err("store = \"a\"\n[layout]\ntype = \"rearrange\"\nmoves = \"instant\"").starts_with("layout.moves:"));
        assert!(err("store = \"a\"\nlisten_on = 1").contains("listen_on"));
        assert!(err("store = \"a\"\n[connections]\nmax = 0").starts_with("connections.max:"));
        assert!(err("store = \"a\"\n[connections]\nhandshake_timeout_s = -1").starts_with("connections.handshake_timeout_s:"));
        assert!(err("store = \"a\"\n[connections]\nin_flight_mb = 0").starts_with("connections.in_flight_mb:"));
        assert!(err("store = \"a\"\n[connections]\nbacklog = 5").contains("backlog"));
        let c = parse("store = \"a\"\n[connections]\nmax = 8\nidle_timeout_s = 30").unwrap();
        assert_eq!((c.connections.max, c.connections.in_flight_mb, c.connections.idle_timeout()), (8, 64, Some(std::time::Duration::from_secs(30))));
    }

    #[test]
    fn a_bad_value_in_a_server_file_is_named_by_its_line_and_key() {
        let dir = std::env::temp_dir().join(format!("freeblock-config-place-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            // A value the tagged [layout] table refuses: toml alone names the header (line 3).
            ("store = \"a.img\"\npace = \"none\"\n[layout]\ntype = \"lfs\"\npartition_mb = \"big\"\n", "line 5", "layout.partition_mb"),
            ("store = \"a.img\"\n[sim]\nqueue_depth = -3\n", "line 3", "sim.queue_depth"),
            ("store = \"a.img\"\n\n[connections]\nmax = 8\nbacklog = 5\n", "line 5", "connections.backlog"),
        ];
        for (i, (text, line, key)) in cases.into_iter().enumerate() {
            let path = dir.join(format!("server{i}.toml"));
            std::fs::write(&path, text).unwrap();
            let e = ServerConfig::from_file(&path).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{}: {line}", path.display())) && e.contains(key), "{text}: {e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
