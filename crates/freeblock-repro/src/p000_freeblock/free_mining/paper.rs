//! Paper 000 §6's published figures, each with the sentence it comes from, and how ours is
//! compared with them: within ±[`TOLERANCE`] of an "about" figure, above `1 − TOLERANCE` of an
//! "over" figure, or inside stated bounds.

use crate::paper_check::PaperCheck;

/// "increasing data mining throughput to about 4.9 MB/s" (paper 000 §6.3, high MPL), MB/s.
pub const PAPER_FREE_MB_S: f64 = 4.9;
/// "about 21% of the Atlas 10K's 23MB/s full potential bandwidth": the media bandwidth, MB/s.
pub const PAPER_MEDIA_MB_S: f64 = 23.0;
/// The same sentence: free bandwidth as a share of the media bandwidth.
pub const PAPER_FREE_SHARE_OF_MEDIA: f64 = 0.21;
/// "complete over 47 full scans per day of this 9GB disk".
pub const PAPER_SCANS_PER_DAY: f64 = 47.0;
/// "a 7× increase in useful disk head utilization, from 3% to 24%": without mining.
pub const PAPER_USEFUL_UTILISATION_WITHOUT: f64 = 0.03;
/// The same sentence: with mining.
pub const PAPER_USEFUL_UTILISATION_WITH: f64 = 0.24;
/// "freeblock scheduling realizes only half of the potential free bandwidth".
pub const PAPER_EFFICIENCY: f64 = 0.5;
/// "18% of the remaining potential is lost to extra seek time" (share of the potential).
pub const PAPER_EXTRA_SEEK_SHARE: f64 = 0.18;
/// "The remaining 28% continues to be rotational latency" (unused share of the potential).
pub const PAPER_UNUSED_SHARE: f64 = 0.28;
/// "the last 5% of the freeblock requests take 30% of the total time for a scan".
pub const PAPER_LAST_5PCT_TIME_SHARE: f64 = 0.30;
/// "When any 95% of the dataset is sufficient, efficiency is 40% higher than for full disk scans."
pub const PAPER_SAMPLE_95_EFFICIENCY_GAIN: f64 = 0.40;
/// "For 80% of the dataset, efficiency is at 90%".
pub const PAPER_SAMPLE_80_EFFICIENCY: f64 = 0.90;
/// "… and data mining queries can complete over 90 samples of the dataset per day".
pub const PAPER_SAMPLE_80_PER_DAY: f64 = 90.0;
/// Issue 3's target for our planner: at least this share of the potential realised.
pub const TARGET_EFFICIENCY_OURS: f64 = 0.70;
/// Relative tolerance for "about"-figures read off the paper's text and plots.
pub const TOLERANCE: f64 = 0.2;

/// A comparison with an "about" figure: accepted within ±[`TOLERANCE`] of `paper_value`.
#[must_use]
pub fn about(metric: &str, paper: &str, paper_value: f64, ours: f64) -> PaperCheck {
    bounded(metric, paper, paper_value * (1.0 - TOLERANCE), paper_value * (1.0 + TOLERANCE), ours)
}

/// A comparison with an "over" figure: accepted from `(1 − TOLERANCE) × paper_value` up.
#[must_use]
pub fn at_least(metric: &str, paper: &str, paper_value: f64, ours: f64) -> PaperCheck {
    bounded(metric, paper, paper_value * (1.0 - TOLERANCE), f64::INFINITY, ours)
}

/// A comparison accepted in `low..=high`.
#[must_use]
pub fn bounded(metric: &str, paper: &str, low: f64, high: f64, ours: f64) -> PaperCheck {
    PaperCheck { metric: metric.into(), paper: paper.into(), low, high, ours, matches: ours >= low && ours <= high }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_use_the_stated_tolerance() {
        assert!(about("x", "~30%", 0.30, 0.35).matches);
        assert!(!about("x", "~30%", 0.30, 0.37).matches);
        assert!(at_least("x", "over 47", 47.0, 400.0).matches);
        assert!(!at_least("x", "over 47", 47.0, 30.0).matches);
        assert!(bounded("x", "0", 0.0, 0.0, 0.0).matches);
    }
}
