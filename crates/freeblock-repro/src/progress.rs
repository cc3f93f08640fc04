//! The progress bar of commands that run many simulations: hidden when quiet or printing JSON,
//! the same look everywhere.

use indicatif::{ProgressBar, ProgressStyle};

/// Progress through a number of runs.
pub struct Runs(Option<ProgressBar>);

impl Runs {
    /// A bar for `total` runs labelled `label`, or none when `quiet`.
    pub fn new(label: &str, total: u64, quiet: bool) -> Self {
        if quiet {
            return Self(None);
        }
        let pb = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} runs ({elapsed}, {eta} left)") {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.set_message(label.to_string());
        Self(Some(pb))
    }

    /// `done` of `total` runs are finished.
    pub fn set(&self, done: usize, total: usize) {
        if let Some(pb) = &self.0 {
            pb.set_length(total as u64);
            pb.set_position(done as u64);
        }
    }

    /// One more run is finished.
    pub fn inc(&self) {
        if let Some(pb) = &self.0 {
            pb.inc(1);
        }
    }

    /// Removes the bar.
    pub fn finish(self) {
        if let Some(pb) = self.0 {
            pb.finish_and_clear();
        }
    }
}
