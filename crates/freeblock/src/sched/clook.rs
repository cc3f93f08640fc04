//! Circular LOOK: sweep upward through starting LBNs, then jump back to the lowest.

use super::{Context, Pending, Scheduler};

/// Picks the lowest starting LBN at or above the sweep position, else the lowest overall.
#[derive(Debug, Clone, Copy, Default)]
pub struct CLook;

impl Scheduler for CLook {
    fn pick(&mut self, pending: &[Pending], ctx: &Context<'_>) -> usize {
        let mut ahead: Option<(u64, usize)> = None;
        let mut lowest: Option<(u64, usize)> = None;
        for (i, p) in pending.iter().enumerate() {
            if p.lbn >= ctx.last_lbn && ahead.is_none_or(|(l, _)| p.lbn < l) {
                ahead = Some((p.lbn, i));
            }
            if lowest.is_none_or(|(l, _)| p.lbn < l) {
                lowest = Some((p.lbn, i));
            }
        }
        ahead.or(lowest).map_or(0, |(_, i)| i)
    }
}
