//! Foreground schedulers: which pending request the disk serves next.
//!
//! Each policy is one file implementing [`Scheduler`]; [`SchedulerSpec`] names them in
//! experiment files (`scheduler = "sptf"` or `scheduler = { type = "sptf_sw", window_pct = 40 }`).
//! Policies see the pending requests with their first sector's position precomputed, and the
//! drive (for positioning predictions that match what it will do exactly).
//!
//! | policy | picks | paper 000 §3.3 |
//! |---|---|---|
//! | FCFS | oldest | arrival order |
//! | C-LOOK | next starting LBN at or after the last one served, else the lowest | ascending address sweep |
//! | SSTF | shortest seek (cylinder move or head switch) | seek only |
//! | SPTF | shortest positioning time (seek + rotational latency) | full prediction |
//! | SPTF-SW*n*% | shortest seek among those within *n*% of SPTF's positioning time | between SPTF and SSTF |
//!
//! Ties go to the oldest request, so every policy is deterministic.

pub mod alternatives;
mod clook;
mod fcfs;
mod sptf;
mod sstf;

use std::fmt;

use freeblock_disk::{Drive, Op, SimTime, Target};
use serde::{Deserialize, Serialize};

pub use alternatives::{
    best_candidate, best_exhaustive, best_seek_pruned, check_scheduler, choose, Alternatives, CandidateSearch, Choice, Rank,
    SelectionMode,
};
pub use clook::CLook;
pub use fcfs::Fcfs;
pub use sptf::{Sptf, SptfSw};
pub use sstf::Sstf;

/// A request waiting at the disk.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    /// Index of the request in the run (arrival order).
    pub id: u64,
    /// Arrival time.
    pub arrival: SimTime,
    /// First LBN.
    pub lbn: u64,
    /// Sectors.
    pub sectors: u32,
    /// Read or write.
    pub op: Op,
    /// First sector's track and rotational position.
    pub target: Target,
}

/// What a policy may look at when choosing.
pub struct Context<'a> {
    /// The drive, for positioning predictions.
    pub drive: &'a Drive,
    /// When the chosen request would start.
    pub now: SimTime,
    /// LBN after the last one served (C-LOOK's sweep position).
    pub last_lbn: u64,
}

/// A foreground scheduling policy.
pub trait Scheduler: Send {
    /// Index into `pending` (never empty) of the request to serve next.
    fn pick(&mut self, pending: &[Pending], ctx: &Context<'_>) -> usize;
}

/// The policies, by name, as written in experiment files: a name as [`SchedulerSpec::parse`]
/// takes it (`scheduler = "sptf-sw40"`), or a table (`scheduler = { type = "sptf_sw",
/// window_pct = 40 }`). Both spellings are read everywhere a scheduler is named (experiment,
/// server and sweep files); a table is written.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SchedulerSpec {
    /// First come, first served.
    Fcfs,
    /// Circular LOOK over starting LBNs.
    Clook,
    /// Shortest seek time first.
    Sstf,
    /// Shortest positioning time first.
    Sptf,
    /// SPTF with a seek-weighted window of `window_pct` percent (paper 000's SPTF-SWn%).
    SptfSw {
        /// Requests whose positioning time is within this percentage of the best qualify.
        window_pct: f64,
    },
}

impl SchedulerSpec {
    /// Builds the policy.
    #[must_use]
    pub fn build(&self) -> Box<dyn Scheduler> {
        match *self {
            SchedulerSpec::Fcfs => Box::new(Fcfs),
            SchedulerSpec::Clook => Box::new(CLook),
            SchedulerSpec::Sstf => Box::new(Sstf),
            SchedulerSpec::Sptf => Box::new(Sptf),
            SchedulerSpec::SptfSw { window_pct } => Box::new(SptfSw { window: window_pct / 100.0 }),
        }
    }

    /// Parses `fcfs`, `clook`/`c-look`, `sstf`, `sptf`, `sptf-sw40`/`sptf_sw40`/`sptf-sw:40`.
    ///
    /// # Errors
    /// A message listing the known names.
    pub fn parse(s: &str) -> Result<Self, String> {
        let l = s.trim().to_ascii_lowercase().replace('_', "-");
        Ok(match l.as_str() {
            "fcfs" => Self::Fcfs,
            "clook" | "c-look" => Self::Clook,
            "sstf" => Self::Sstf,
            "sptf" => Self::Sptf,
            _ => {
                let n = l.strip_prefix("sptf-sw").map(|r| r.trim_start_matches(':').trim_end_matches('%'));
                match n.and_then(|n| n.parse::<f64>().ok()).filter(|n| n.is_finite() && *n >= 0.0) {
                    Some(window_pct) => Self::SptfSw { window_pct },
                    None => return Err(format!("unknown scheduler `{s}` (known: fcfs, clook, sstf, sptf, sptf-swN e.g. sptf-sw40)")),
                }
            }
        })
    }
}

/// The table spelling, read as a tagged enum (empty struct variants, so that serde refuses a
/// key a policy does not take).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum SchedulerTable {
    Fcfs {},
    Clook {},
    Sstf {},
    Sptf {},
    SptfSw { window_pct: f64 },
}

impl<'de> Deserialize<'de> for SchedulerSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SpecVisitor;
        impl<'de> serde::de::Visitor<'de> for SpecVisitor {
            type Value = SchedulerSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scheduler name (fcfs, clook, sstf, sptf, sptf-swN) or a table with `type`")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<SchedulerSpec, E> {
                SchedulerSpec::parse(name).map_err(E::custom)
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<SchedulerSpec, M::Error> {
                let table = SchedulerTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(match table {
                    SchedulerTable::Fcfs {} => SchedulerSpec::Fcfs,
                    SchedulerTable::Clook {} => SchedulerSpec::Clook,
                    SchedulerTable::Sstf {} => SchedulerSpec::Sstf,
                    SchedulerTable::Sptf {} => SchedulerSpec::Sptf,
                    SchedulerTable::SptfSw { window_pct } if window_pct.is_finite() && window_pct >= 0.0 => SchedulerSpec::SptfSw { window_pct },
                    SchedulerTable::SptfSw { window_pct } => {
                        return Err(serde::de::Error::custom(format!("window_pct must be a percentage of at least 0, not {window_pct}")))
                    }
                })
            }
        }
        deserializer.deserialize_any(SpecVisitor)
    }
}

impl fmt::Display for SchedulerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fcfs => write!(f, "FCFS"),
            Self::Clook => write!(f, "C-LOOK"),
            Self::Sstf => write!(f, "SSTF"),
            Self::Sptf => write!(f, "SPTF"),
            Self::SptfSw { window_pct } => write!(f, "SPTF-SW{window_pct}%"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names() {
        assert_eq!(SchedulerSpec::parse("C-LOOK").unwrap(), SchedulerSpec::Clook);
        assert_eq!(SchedulerSpec::parse("sptf-sw40").unwrap(), SchedulerSpec::SptfSw { window_pct: 40.0 });
        assert_eq!(SchedulerSpec::parse("sptf_sw:10%").unwrap(), SchedulerSpec::SptfSw { window_pct: 10.0 });
        assert!(SchedulerSpec::parse("elevator").unwrap_err().contains("unknown scheduler"));
    }

    #[derive(Deserialize)]
    struct File {
        scheduler: SchedulerSpec,
    }

    fn read(text: &str) -> Result<SchedulerSpec, String> {
        toml::from_str::<File>(text).map(|f| f.scheduler).map_err(|e| e.to_string())
    }

    #[test]
    fn files_take_a_name_or_a_table() {
        assert_eq!(read(r#"scheduler = "sptf""#).unwrap(), SchedulerSpec::Sptf);
        assert_eq!(read(r#"scheduler = "sptf-sw40""#).unwrap(), SchedulerSpec::SptfSw { window_pct: 40.0 });
        assert_eq!(read(r#"scheduler = { type = "clook" }"#).unwrap(), SchedulerSpec::Clook);
        assert_eq!(read(r#"scheduler = { type = "sptf_sw", window_pct = 10 }"#).unwrap(), SchedulerSpec::SptfSw { window_pct: 10.0 });
        let e = read(r#"scheduler = "elevator""#).unwrap_err();
        assert!(e.contains("unknown scheduler `elevator`") && !e.contains("SchedulerSpec"), "{e}");
        let e = read(r#"scheduler = { type = "sptf_sw", window_pct = -5 }"#).unwrap_err();
        assert!(e.contains("window_pct") && e.contains("-5"), "{e}");
        assert!(read(r#"scheduler = { type = "sptf", window = 3 }"#).unwrap_err().contains("window"));
    }
}
