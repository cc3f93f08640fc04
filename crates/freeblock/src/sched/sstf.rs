//! Shortest seek time first.

use super::{Context, Pending, Scheduler};

/// Picks the request whose track the heads reach soonest (seek, or head switch on the same
/// cylinder), ignoring rotation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sstf;

impl Scheduler for Sstf {
    fn pick(&mut self, pending: &[Pending], ctx: &Context<'_>) -> usize {
        let disk = ctx.drive.disk();
        let head = ctx.drive.head();
        let mut best = (u64::MAX, 0);
        for (i, p) in pending.iter().enumerate() {
            let t = disk.move_ns(head, p.target.cylinder, p.target.surface, p.op);
            if t < best.0 {
                best = (t, i);
            }
        }
        best.1
    }
}
