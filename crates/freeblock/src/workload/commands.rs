//! `commands`: a workload written out command by command in the experiment file — reads,
//! writes, FUA writes and FLUSH CACHE — for small experiments on a drive's write cache, and
//! [`RequestList`], the same from code.
//!
//! ```toml
//! [workload]
//! type = "commands"
//! arrival = "closed"          # closed (default): each command after the previous completes
//!                             # open: each at its time_ms
//! commands = [
//!   { op = "write", lbn = 1000, sectors = 8 },
//!   { op = "write", lbn = 900000, sectors = 8, fua = true },
//!   { op = "read", lbn = 1000, sectors = 8 },
//!   { op = "flush" },
//! ]
//! ```
//!
//! | key of a command | meaning |
//! |---|---|
//! | `op` | `read`, `write` or `flush` (FLUSH CACHE: no `lbn`, `sectors` or `fua`) |
//! | `lbn`, `sectors` | first sector and length (≥ 1), required for reads and writes |
//! | `fua` | writes only: Force Unit Access, on the media before it completes (default false) |
//! | `time_ms` | `arrival = "open"` only: arrival time, ms from the start, never decreasing |
//!
//! Mistakes are errors naming the command: `commands[2].fua: only writes may be FUA`.

use serde::{Deserialize, Serialize};

use freeblock_disk::{time::ms_to_ns, Op};

use super::{ArrivalKind, Workload, WorkloadError};
use crate::request::Request;

/// What a command asks of the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandOp {
    /// Read `sectors` at `lbn`.
    Read,
    /// Write `sectors` at `lbn` (FUA with `fua = true`).
    Write,
    /// FLUSH CACHE.
    Flush,
}

/// One command of a `commands` workload.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandLine {
    /// Read, write or flush.
    pub op: CommandOp,
    /// First sector (reads and writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lbn: Option<u64>,
    /// Length in sectors, ≥ 1 (reads and writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sectors: Option<u32>,
    /// Writes only: Force Unit Access.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fua: bool,
    /// Open arrival only: when the command arrives, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<f64>,
}

/// Whether commands wait for the previous one (`closed`) or come at their `time_ms` (`open`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandArrival {
    /// One command outstanding: each is issued when the previous one completes. Default.
    #[default]
    Closed,
    /// Each command arrives at its `time_ms`.
    Open,
}

/// The `commands` workload (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandsSpec {
    /// Closed (default) or open arrivals.
    #[serde(default)]
    pub arrival: CommandArrival,
    /// The commands, in order.
    pub commands: Vec<CommandLine>,
}

impl CommandsSpec {
    /// The requests, checked against a disk of `capacity_sectors`.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] naming `commands[i].<key>`: a read or write without `lbn` or
    /// `sectors`, with 0 sectors or past the disk; a flush with any of them or `fua`; a FUA read;
    /// a `time_ms` with closed arrivals, missing, negative, not finite or going back with open
    /// ones; no commands at all.
    pub fn requests(&self, capacity_sectors: u64) -> Result<Vec<Request>, WorkloadError> {
        if self.commands.is_empty() {
            return Err(WorkloadError::invalid("commands", "no commands: give at least one"));
        }
        let mut last_ns = 0;
        self.commands
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let bad = |key: &str, message: String| WorkloadError::invalid(&format!("commands[{i}].{key}"), message);
                let time = match (self.arrival, c.time_ms) {
                    (CommandArrival::Closed, Some(_)) => return Err(bad("time_ms", "only with arrival = \"open\" (closed commands follow each other's completion)".into())),
                    (CommandArrival::Closed, None) => 0,
                    (CommandArrival::Open, None) => return Err(bad("time_ms", "required with arrival = \"open\"".into())),
                    (CommandArrival::Open, Some(ms)) => {
                        if !(ms.is_finite() && ms >= 0.0 && ms <= crate::sim::MAX_SIMULATED_NS as f64 / 1e6) {
                            return Err(bad("time_ms", format!("must be a time ≥ 0 ms within 100 years, not {ms}")));
                        }
                        let ns = ms_to_ns(ms);
                        if ns < last_ns {
                            return Err(bad("time_ms", format!("{ms} ms is before the previous command's time")));
                        }
                        last_ns = ns;
                        ns
                    }
                };
                if c.op == CommandOp::Flush {
                    for (key, given) in [("lbn", c.lbn.is_some()), ("sectors", c.sectors.is_some()), ("fua", c.fua)] {
                        if given {
                            return Err(bad(key, "a flush has no data: leave it out".into()));
                        }
                    }
                    return Ok(Request::flush(time));
                }
                let op = if c.op == CommandOp::Read { Op::Read } else { Op::Write };
                let lbn = c.lbn.ok_or_else(|| bad("lbn", "required for a read or write".into()))?;
                let sectors = c.sectors.ok_or_else(|| bad("sectors", "required for a read or write".into()))?;
                if sectors == 0 {
                    return Err(bad("sectors", "must be at least 1".into()));
                }
                if lbn.saturating_add(u64::from(sectors)) > capacity_sectors {
                    return Err(bad("lbn", format!("sectors {lbn}..{} run past the disk's {capacity_sectors}", lbn.saturating_add(u64::from(sectors)))));
                }
                if c.fua && op.is_read() {
                    return Err(bad("fua", "only writes may be FUA".into()));
                }
                Ok(Request { fua: c.fua, ..Request::new(time, lbn, sectors, op) })
            })
            .collect()
    }

    /// The workload for a disk of `capacity_sectors`.
    ///
    /// # Errors
    /// As [`CommandsSpec::requests`].
    pub fn build(&self, capacity_sectors: u64) -> Result<RequestList, WorkloadError> {
        let arrival = if self.arrival == CommandArrival::Open { ArrivalKind::Open } else { ArrivalKind::ClosedDelay };
        Ok(RequestList::new(self.requests(capacity_sectors)?, arrival))
    }
}

/// Requests handed over in order: a workload built in code (or from a `commands` table).
/// With [`ArrivalKind::ClosedDelay`] each request's `time` is the delay after the previous
/// completion, so 0 issues them back to back.
#[derive(Debug, Clone)]
pub struct RequestList {
    requests: std::vec::IntoIter<Request>,
    arrival: ArrivalKind,
}

impl RequestList {
    /// `requests`, issued as `arrival` says.
    #[must_use]
    pub fn new(requests: Vec<Request>, arrival: ArrivalKind) -> Self {
        Self { requests: requests.into_iter(), arrival }
    }
}

impl Workload for RequestList {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        Ok(self.requests.next())
    }

    fn arrival(&self) -> ArrivalKind {
        self.arrival
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Result<CommandsSpec, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn reads_writes_fua_and_flush() {
        let s = spec("commands = [{ op = \"write\", lbn = 8, sectors = 8, fua = true }, { op = \"read\", lbn = 8, sectors = 8 }, { op = \"flush\" }]").unwrap();
        let r = s.requests(1000).unwrap();
        assert_eq!(r[0], Request::write_fua(0, 8, 8));
        assert_eq!(r[1], Request::new(0, 8, 8, Op::Read));
        assert!(r[2].is_flush() && !r[2].fua);
    }

    #[test]
    fn bad_commands_name_their_place() {
        for (text, want) in [
            ("commands = [{ op = \"read\", lbn = 8, sectors = 8, fua = true }]", "commands[0].fua"),
            ("commands = [{ op = \"read\", lbn = 8, sectors = 8 }, { op = \"flush\", lbn = 3 }]", "commands[1].lbn"),
            ("commands = [{ op = \"flush\", fua = true }]", "commands[0].fua"),
            ("commands = [{ op = \"write\", sectors = 8 }]", "commands[0].lbn"),
            ("commands = [{ op = \"write\", lbn = 0, sectors = 0 }]", "commands[0].sectors"),
            ("commands = [{ op = \"write\", lbn = 996, sectors = 8 }]", "commands[0].lbn"),
            ("commands = [{ op = \"flush\", time_ms = 3 }]", "commands[0].time_ms"),
            ("arrival = \"open\"\ncommands = [{ op = \"flush\" }]", "commands[0].time_ms"),
            ("arrival = \"open\"\ncommands = [{ op = \"flush\", time_ms = 2 }, { op = \"flush\", time_ms = 1 }]", "commands[1].time_ms"),
            ("arrival = \"open\"\ncommands = [{ op = \"flush\", time_ms = -1 }]", "commands[0].time_ms"),
            ("commands = []", "commands"),
        ] {
            let e = spec(text).unwrap().requests(1000).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        let e = spec("commands = [{ op = \"trim\" }]").unwrap_err().to_string();
        assert!(e.contains("trim"), "{e}");
    }

    #[test]
    fn open_commands_arrive_at_their_times() {
        let s = spec("arrival = \"open\"\ncommands = [{ op = \"write\", lbn = 0, sectors = 8, time_ms = 1.5 }, { op = \"flush\", time_ms = 2 }]").unwrap();
        let mut w = s.build(1000).unwrap();
        assert_eq!(w.arrival(), ArrivalKind::Open);
        assert_eq!(w.next_request().unwrap().unwrap().time, 1_500_000);
        assert_eq!(w.next_request().unwrap().unwrap().time, 2_000_000);
        assert!(w.next_request().unwrap().is_none());
    }
}
