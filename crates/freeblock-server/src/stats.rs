//! Counters a running server keeps, rendered as Prometheus text (`freeblock serve --stats ADDR`
//! serves them over HTTP on loopback) and summarised at shutdown.
//!
//! | metric | what |
//! |---|---|
//! | `freeblock_requests_total{op}` | requests answered, by command |
//! | `freeblock_bytes_total{op}` | bytes read and written |
//! | `freeblock_errors_total` | requests answered with an error |
//! | `freeblock_model_response_seconds` | the model's response time (completion − arrival), quantiles |
//! | `freeblock_lateness_seconds` | reply sent − model completion (pace real), quantiles |

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use freeblock::report::Histogram;

/// Commands counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// READ.
    Read,
    /// WRITE.
    Write,
    /// FLUSH.
    Flush,
    /// TRIM.
    Trim,
    /// WRITE_ZEROES.
    WriteZeroes,
}

const COUNTED: [(Counted, &str); 5] =
    [(Counted::Read, "read"), (Counted::Write, "write"), (Counted::Flush, "flush"), (Counted::Trim, "trim"), (Counted::WriteZeroes, "write_zeroes")];

/// The server's counters.
#[derive(Default)]
pub struct Stats {
    requests: [AtomicU64; 5],
    bytes: [AtomicU64; 5],
    errors: AtomicU64,
    /// Requests failed with ENOSPC because the file system under the store is full.
    no_space: AtomicU64,
    connections: AtomicU64,
    /// Connections closed at once because `connections.max` were served.
    refused_connections: AtomicU64,
    response: Mutex<Histogram>,
    lateness: Mutex<Histogram>,
}

/// Lateness and model response time, summarised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Requests answered.
    pub requests: u64,
    /// Requests timed by the model.
    pub timed: u64,
    /// Mean model response time, ms.
    pub response_mean_ms: f64,
    /// Lateness p50, µs (pace real; 0 otherwise).
    pub lateness_p50_us: f64,
    /// Lateness p99, µs.
    pub lateness_p99_us: f64,
    /// Lateness max, µs.
    pub lateness_max_us: f64,
}

impl Stats {
    /// Counts one request of `bytes` bytes.
    pub fn count(&self, what: Counted, bytes: u64) {
        let i = COUNTED.iter().position(|(c, _)| *c == what).expect("every kind is listed");
        self.requests[i].fetch_add(1, Ordering::Relaxed);
        self.bytes[i].fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts a request answered with an error.
    pub fn error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request failed because the file system under the store is full; returns how
    /// many so far.
    pub fn no_space(&self) -> u64 {
        self.no_space.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Counts a connection closed at once because the server served its maximum.
    pub fn refused_connection(&self) {
        self.refused_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a connection that reached transmission.
    pub fn connection(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a model response time, ns.
    pub fn response(&self, ns: u64) {
        self.response.lock().expect("never poisoned").record(ns);
    }

    /// Records a reply's lateness, ns.
    pub fn lateness(&self, ns: u64) {
        self.lateness.lock().expect("never poisoned").record(ns);
    }

    /// The summary printed at shutdown.
    #[must_use]
    pub fn summary(&self) -> Summary {
        let response = self.response.lock().expect("never poisoned");
        let late = self.lateness.lock().expect("never poisoned");
        Summary {
            requests: self.requests.iter().map(|c| c.load(Ordering::Relaxed)).sum(),
            timed: response.count(),
            response_mean_ms: response.mean() / 1e6,
            lateness_p50_us: late.quantile(0.5) / 1e3,
            lateness_p99_us: late.quantile(0.99) / 1e3,
            lateness_max_us: late.quantile(1.0) / 1e3,
        }
    }

    /// Prometheus text exposition.
    #[must_use]
    pub fn prometheus(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# TYPE freeblock_requests_total counter");
        for (i, (_, name)) in COUNTED.iter().enumerate() {
            let _ = writeln!(s, "freeblock_requests_total{{op=\"{name}\"}} {}", self.requests[i].load(Ordering::Relaxed));
        }
        let _ = writeln!(s, "# TYPE freeblock_bytes_total counter");
        for (i, (_, name)) in COUNTED.iter().enumerate() {
            let _ = writeln!(s, "freeblock_bytes_total{{op=\"{name}\"}} {}", self.bytes[i].load(Ordering::Relaxed));
        }
        let _ = writeln!(s, "# TYPE freeblock_errors_total counter\nfreeblock_errors_total {}", self.errors.load(Ordering::Relaxed));
        let _ = writeln!(s, "# TYPE freeblock_no_space_errors_total counter\nfreeblock_no_space_errors_total {}", self.no_space.load(Ordering::Relaxed));
        let _ = writeln!(s, "# TYPE freeblock_connections_refused_total counter\nfreeblock_connections_refused_total {}", self.refused_connections.load(Ordering::Relaxed));
        let _ = writeln!(s, "# TYPE freeblock_connections_total counter\nfreeblock_connections_total {}", self.connections.load(Ordering::Relaxed));
        for (name, h) in [("freeblock_model_response_seconds", &self.response), ("freeblock_lateness_seconds", &self.lateness)] {
            let h = h.lock().expect("never poisoned");
            let _ = writeln!(s, "# TYPE {name} summary");
            for q in [0.5, 0.9, 0.99, 1.0] {
                let _ = writeln!(s, "{name}{{quantile=\"{q}\"}} {:.9}", h.quantile(q) / 1e9);
            }
            let _ = writeln!(s, "{name}_sum {:.9}\n{name}_count {}", h.mean() * h.count() as f64 / 1e9, h.count());
        }
        s
    }
}

/// The scrub's rate and ETA as Prometheus text: bytes scrubbed (a counter, for `rate()`), the
/// mean rate since the scrub started, and at that rate the seconds to finish the pass under way
/// and to scrub the whole disk (`+Inf` before anything is scrubbed).
#[must_use]
pub fn scrub_rate_prometheus(s: &crate::scrub::ScrubSummary) -> String {
    let secs = |x: Option<f64>| x.map_or_else(|| "+Inf".to_string(), |v| format!("{v:.1}"));
    format!(
        "# TYPE freeblock_scrub_bytes_total counter\nfreeblock_scrub_bytes_total {}\n# TYPE freeblock_scrub_bytes_per_second gauge\nfreeblock_scrub_bytes_per_second {:.1}\n# TYPE freeblock_scrub_pass_eta_seconds gauge\nfreeblock_scrub_pass_eta_seconds {}\n# TYPE freeblock_scrub_whole_disk_seconds gauge\nfreeblock_scrub_whole_disk_seconds {}\n",
        s.bytes,
        s.bytes_per_s,
        secs(s.pass_eta_s),
        secs(s.whole_disk_s)
    )
}

/// A duration for a person: seconds, minutes, hours or days.
fn duration_text(s: f64) -> String {
    if !s.is_finite() {
        "never (nothing scrubbed yet)".into()
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86_400.0)
    }
}

/// A person's view of the Prometheus text the stats endpoint serves (`freeblock stats`; the raw
/// text is `freeblock stats --raw`): requests and bytes by command, errors, the model's response
/// time and the replies' lateness, connections, the layout's own work and the scrub's progress,
/// each section only when the server exports it. Lines it does not know are left out.
#[must_use]
pub fn readable(prometheus: &str) -> String {
    use std::collections::BTreeMap;
    // name{labels} value, comments skipped.
    let metrics: BTreeMap<&str, f64> = prometheus
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .filter_map(|(k, v)| v.trim().parse::<f64>().ok().map(|v| (k.trim(), v)))
        .collect();
    let get = |k: &str| metrics.get(k).copied();
    let int = |k: &str| get(k).map_or(0, |v| v as u64);
    let mut s = String::new();
    let _ = writeln!(s, "requests");
    let mut total = 0;
    for (_, op) in COUNTED {
        let (n, b) = (int(&format!("freeblock_requests_total{{op=\"{op}\"}}")), int(&format!("freeblock_bytes_total{{op=\"{op}\"}}")));
        total += n;
        if n > 0 {
            let _ = writeln!(s, "  {op:<13} {n:>10}  {:>12.1} MiB", b as f64 / (1u64 << 20) as f64);
        }
    }
    let _ = writeln!(s, "  {:<13} {total:>10}", "all");
    let _ = writeln!(s, "errors          {} ({} for a full file system)", int("freeblock_errors_total"), int("freeblock_no_space_errors_total"));
    for (name, title) in [("freeblock_model_response_seconds", "model response"), ("freeblock_lateness_seconds", "reply lateness")] {
        let count = int(&format!("{name}_count"));
        if count == 0 {
            continue;
        }
        let q = |p: &str| get(&format!("{name}{{quantile=\"{p}\"}}")).unwrap_or(0.0) * 1e3;
        let mean = get(&format!("{name}_sum")).unwrap_or(0.0) * 1e3 / count as f64;
        let _ = writeln!(s, "{title:<15} mean {mean:.3} ms, p50 {:.3}, p99 {:.3}, max {:.3} ms ({count} requests)", q("0.5"), q("0.99"), q("1"));
    }
    let _ = writeln!(s, "connections     {} served, {} refused (at the cap)", int("freeblock_connections_total"), int("freeblock_connections_refused_total"));
    if get("freeblock_layout_map_commits_total").is_some() {
        let _ = writeln!(
            s,
            "layout          {} blocks copied by its moves, {} map commits in {} groups, {} snapshots; {} of its own writes found no space",
            int("freeblock_layout_blocks_copied_total"),
            int("freeblock_layout_map_commits_total"),
            int("freeblock_layout_map_groups_total"),
            int("freeblock_layout_map_checkpoints_total"),
            int("freeblock_layout_background_no_space_total")
        );
    }
    if let Some(progress) = get("freeblock_scrub_pass_progress") {
        let v = |verdict: &str| int(&format!("freeblock_scrub_blocks_total{{verdict=\"{verdict}\"}}"));
        let _ = writeln!(
            s,
            "scrub           pass {} at {:.1}%; blocks verified {}, mismatched {}, unverified {}, read errors {}",
            int("freeblock_scrub_passes_total") + 1,
            progress * 100.0,
            v("verified"),
            v("mismatched"),
            v("unverified"),
            v("read_error")
        );
    }
    if let Some(rate) = get("freeblock_scrub_bytes_per_second") {
        let _ = writeln!(
            s,
            "                {:.2} MB/s (mean since it started), this pass done in {}, the whole disk in {}",
            rate / 1e6,
            duration_text(get("freeblock_scrub_pass_eta_seconds").unwrap_or(f64::INFINITY)),
            duration_text(get("freeblock_scrub_whole_disk_seconds").unwrap_or(f64::INFINITY))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readable_view_says_what_the_counters_hold() {
        let stats = Stats::default();
        for _ in 0..3 {
            stats.count(Counted::Read, 1 << 20);
        }
        stats.count(Counted::Write, 4096);
        stats.error();
        stats.no_space();
        stats.connection();
        for ms in [2, 4, 6] {
            stats.response(ms * 1_000_000);
        }
        let text = format!("{}# TYPE freeblock_scrub_pass_progress gauge\nfreeblock_scrub_pass_progress 0.25\nfreeblock_scrub_passes_total 1\n", stats.prometheus());
        let view = readable(&text);
        assert!(view.contains("read                   3           3.0 MiB"), "{view}");
        assert!(view.contains("all                    4"), "{view}");
        assert!(view.contains("errors          1 (1 for a full file system)"), "{view}");
        assert!(view.contains("model response  mean 4.000 ms"), "{view}");
        assert!(!view.contains("reply lateness"), "nothing timed late: {view}");
        assert!(view.contains("connections     1 served, 0 refused"), "{view}");
        assert!(view.contains("scrub           pass 2 at 25.0%"), "{view}");
        assert!(!view.contains("layout"), "no layout exported: {view}");
    }

    #[test]
    fn the_scrub_rate_and_eta_reach_the_readable_view() {
        let counters = crate::scrub::ScrubCounters::default();
        let empty = crate::scrub::ScrubCounters::default().snapshot();
        assert!(readable(&scrub_rate_prometheus(&empty)).contains("the whole disk in never"), "nothing scrubbed: no ETA");
        counters.per_pass.store(1000, std::sync::atomic::Ordering::Relaxed);
        counters.in_pass.store(250, std::sync::atomic::Ordering::Relaxed);
        counters.started.get_or_init(|| std::time::Instant::now() - std::time::Duration::from_secs(10));
        let s = counters.snapshot();
        assert_eq!(s.bytes, 250 * crate::scrub::SCRUB_BLOCK);
        // 250 blocks in about 10 s: the 750 left take about 30 s, a whole pass about 40 s.
        let (eta, whole) = (s.pass_eta_s.unwrap(), s.whole_disk_s.unwrap());
        assert!((29.0..31.0).contains(&eta) && (39.0..41.0).contains(&whole), "{eta} {whole}");
        let text = scrub_rate_prometheus(&s);
        assert!(text.contains(&format!("freeblock_scrub_bytes_total {}", s.bytes)), "{text}");
        let view = readable(&text);
        assert!(view.contains("MB/s (mean since it started), this pass done in 30 s, the whole disk in 40 s"), "{view}");
    }
}
