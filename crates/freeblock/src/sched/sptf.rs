//! Shortest positioning time first, and its seek-weighted variant SPTF-SWn% (paper 000 §3.3).

use super::{Context, Pending, Scheduler};

/// Picks the request with the least seek + rotational latency from the current head state.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sptf;

impl Scheduler for Sptf {
    fn pick(&mut self, pending: &[Pending], ctx: &Context<'_>) -> usize {
        let disk = ctx.drive.disk();
        let head = ctx.drive.head();
        let mut best = (u64::MAX, 0);
        for (i, p) in pending.iter().enumerate() {
            let (mv, wait) = disk.positioning_to(head, ctx.now, &p.target, p.op);
            if mv + wait < best.0 {
                best = (mv + wait, i);
            }
        }
        best.1
    }
}

/// SPTF-SWn%: among requests whose positioning time is within `window` (a fraction, 0.4 for
/// 40%) of the shortest, the one with the shortest seek. `window = 0` is SPTF; a huge window is
/// SSTF. Favouring short seeks over short rotational waits leaves more rotational latency for
/// freeblock scheduling at a small cost in access time.
#[derive(Debug, Clone, Copy, Default)]
pub struct SptfSw {
    /// Window as a fraction of the shortest positioning time.
    pub window: f64,
}

impl Scheduler for SptfSw {
    fn pick(&mut self, pending: &[Pending], ctx: &Context<'_>) -> usize {
        let disk = ctx.drive.disk();
        let head = ctx.drive.head();
        let mut times = Vec::with_capacity(pending.len());
        let mut shortest = u64::MAX;
        for p in pending {
            let (mv, wait) = disk.positioning_to(head, ctx.now, &p.target, p.op);
            shortest = shortest.min(mv + wait);
            times.push((mv, mv + wait));
        }
        let limit = shortest as f64 * (1.0 + self.window);
        let mut best = (u64::MAX, u64::MAX, 0);
        for (i, &(mv, pos)) in times.iter().enumerate() {
            if (pos as f64) <= limit && (mv, pos) < (best.0, best.1) {
                best = (mv, pos, i);
            }
        }
        best.2
    }
}
