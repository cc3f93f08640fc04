//! A published figure and ours beside it: the range the paper's value (with a stated tolerance)
//! allows, and whether ours falls in it. The reproductions' statements are built from these.

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
