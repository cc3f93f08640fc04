//! A block server: `freeblock serve` exports a modelled disk over NBD, keeps the bytes in a
//! sparse backing file, and answers each request when the modelled disk would have, every
//! request timed by the one engine ([`freeblock::sim::Simulation`] in online mode).
//!
//! ```text
//!  NBD clients (qemu, nbdcopy, fio, the kernel)
//!     │ TCP 127.0.0.1:10809 / Unix socket
//!     ▼
//!  nbd      handshake, requests, replies      (protocol: the wire format, pure functions)
//!     │ bytes                    │ (op, sectors, arrival)
//!     ▼                          ▼
//!  store    sparse file          timing: engine thread, Simulation::online on the disk model
//!                                   │ completion (model time) ──► reply held until then (pace real)
//!  stats    counts, model response times, lateness ──► Prometheus text on loopback
//! ```
//!
//! | module | owns |
//! |---|---|
//! | [`protocol`] | the NBD wire format: constants, parsers, encoders |
//! | [`arrival`] | when a request arrived: the kernel's receive timestamp of its bytes |
//! | [`nbd`] | one connection: handshake, transmission, requests |
//! | [`reply`] | one connection's replies, written the moment they are due (by the engine thread) |
//! | [`store`] | the backing file and what it belongs to |
//! | [`logbytes`] | with LFS: the bytes it acknowledged from memory, its segment writes applied in seal order |
//! | [`placement`] | with a layout policy: bytes at their physical places, moves copying them, the map's files |
//! | [`commits`] | the policy's map commits made durable in groups, and the replies that wait for them |
//! | [`timing`] | the engine thread and pacing |
//! | [`pacing`] | what the engine thread asks of the kernel to wake on time |
//! | [`scrub`] | per-block checksums and the freeblock scrub that verifies the real bytes |
//! | [`stats`] | counters and their text form |
//! | [`check`] | `freeblock check`: a stopped server's store verified (and repaired) offline |
//! | [`config`] | the TOML configuration |
//! | [`server`] | listeners, connections, shutdown |

pub mod arrival;
pub mod check;
pub mod commits;
pub mod config;
pub mod logbytes;
pub mod nbd;
pub mod pacing;
pub mod placement;
pub mod protocol;
pub mod reply;
pub mod scrub;
pub mod server;
pub mod stats;
pub mod store;
pub mod timing;

pub use config::ServerConfig;
pub use server::{Finished, Server, ServerError};
pub use timing::Pace;
