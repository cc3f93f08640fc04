//! First come, first served.

use super::{Context, Pending, Scheduler};

/// Serves requests in arrival order.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fcfs;

impl Scheduler for Fcfs {
    fn pick(&mut self, pending: &[Pending], _ctx: &Context<'_>) -> usize {
        // Pending requests are kept in arrival order.
        let _ = pending;
        0
    }
}
