//! Transitional (issue 36): paper 000 §3's reproduction is `freeblock_repro::p000_freeblock::head_usage`.
//! What stays is its comparison with a published figure, [`PaperCheck`], which
//! `external_repro` (still in this crate) and the reproductions in `freeblock-repro` share; it
//! moves there with `external_repro`.

use serde::Serialize;

/// A published figure to compare against.
#[derive(Debug, Clone, Serialize)]
pub struct PaperCheck {
    /// What is compared, e.g. "rotational latency share".
    pub metric: String,
    /// The paper's statement, e.g. "27–36%".
    pub paper: String,
    /// Accepted range for ours (the paper's value with a stated tolerance).
    pub low: f64,
    /// Upper end of the accepted range.
    pub high: f64,
    /// Ours.
    pub ours: f64,
    /// Whether ours falls in the range.
    pub matches: bool,
}

impl PaperCheck {
    /// A comparison accepted in `low..=high`.
    #[must_use]
    pub fn new(metric: &str, paper: &str, low: f64, high: f64, ours: f64) -> Self {
        Self { metric: metric.into(), paper: paper.into(), low, high, ours, matches: ours >= low && ours <= high }
    }
}
