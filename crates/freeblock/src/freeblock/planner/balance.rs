//! Balancing: keeping every part of the disk's wanted set draining at the same pace.
//!
//! A greedy planner takes the most wanted sectors it can in each window, and foreground requests
//! spread evenly over LBNs come to an outer cylinder (more sectors per track) more often than to an
//! inner one. Both leave the inner zones behind. In a one-pass scan of the Atlas 10K under OLTP
//! (FCFS, MPL 20), the innermost tenth of the LBNs held 40% of the last 5% of blocks to arrive.
//! Those blocks were then reachable from few windows, and the scan's last stretch crawled.
//!
//! Balancing weighs the wanted sectors of each group of [`GROUP`] cylinders by how dense they
//! still are against the disk-wide mean:
//!
//! ```text
//!   weight(group) = UNIT × (wanted in the group ÷ sectors in the group)
//!                        ÷ (wanted on the disk ÷ sectors on the disk),   clamped to 1 ..= MAX_WEIGHT
//! ```
//!
//! The weights are refreshed every [`REFRESH_DECISIONS`] decisions, and at once when registrations
//! add to the wanted set. While a scan drains evenly, every group weighs `UNIT`, and the planner
//! chooses exactly as without balancing. A group left behind weighs more. The planner then gives up
//! a few sectors elsewhere to take that group's sectors while they are in reach, so the groups
//! finish together instead of the slowest setting the pace at the end.
//!
//! For the planner's pruning, the weights come with two summaries, rebuilt at each refresh: the
//! heaviest group from each group outward (to bound what lies further along a cursor), and the
//! nearest heavier group in each direction (a jump over a zone's poor tracks must stop there).

use freeblock_disk::Layout;

use crate::freeblock::sets::{BackgroundSets, GROUP};

/// What a group at the mean density weighs.
pub const UNIT: u16 = 8;
/// The most a group weighs (8× the mean).
pub const MAX_WEIGHT: u16 = 64;
/// Decisions between refreshes of the weights.
pub const REFRESH_DECISIONS: u32 = 1000;

/// Per-group weights of the wanted sectors, and the summaries that keep pruning sound.
#[derive(Debug, Clone)]
pub(super) struct Balance {
    /// Sectors in each group (its capacity).
    group_sectors: Vec<u64>,
    weight: Vec<u16>,
    /// Per group: the heaviest weight of this and all lower / all higher groups.
    heaviest_down: Vec<u16>,
    heaviest_up: Vec<u16>,
    /// Per group: the nearest lower / higher group that weighs more (`-1` / group count: none).
    heavier_down: Vec<i64>,
    heavier_up: Vec<i64>,
    /// Decisions left before the next refresh.
    countdown: u32,
    /// The wanted total at the last decision: when it grows, something was registered.
    last_total: u64,
}

impl Balance {
    /// Every group at `UNIT` until the first refresh.
    pub(super) fn new(layout: &Layout) -> Self {
        let groups = layout.cylinders().div_ceil(GROUP) as usize;
        let mut group_sectors = vec![0u64; groups];
        for c in 0..layout.cylinders() {
            group_sectors[(c / GROUP) as usize] += u64::from(layout.sectors_per_track(c)) * u64::from(layout.surfaces());
        }
        Self::with_weights(group_sectors, vec![UNIT; groups])
    }

    /// Groups of the given sizes and weights, summarised.
    fn with_weights(group_sectors: Vec<u64>, weight: Vec<u16>) -> Self {
        let mut b = Self {
            group_sectors,
            weight,
            heaviest_down: Vec::new(),
            heaviest_up: Vec::new(),
            heavier_down: Vec::new(),
            heavier_up: Vec::new(),
            countdown: 0,
            last_total: 0,
        };
        b.summarise();
        b
    }

    /// Called once per decision: recomputes the weights from the wanted set when due.
    pub(super) fn refresh(&mut self, sets: &BackgroundSets) {
        let total = sets.total_wanted();
        if self.countdown > 0 && total <= self.last_total {
            self.countdown -= 1;
            self.last_total = total;
            return;
        }
        self.countdown = REFRESH_DECISIONS;
        self.last_total = total;
        let (mut all, mut disk_sectors) = (0u64, 0u64);
        for (g, &sectors) in self.group_sectors.iter().enumerate() {
            all += sets.group_wanted(g as u32 * GROUP);
            disk_sectors += sectors;
        }
        if all == 0 {
            return;
        }
        let mean = all as f64 / disk_sectors as f64;
        for (g, w) in self.weight.iter_mut().enumerate() {
            let density = sets.group_wanted(g as u32 * GROUP) as f64 / self.group_sectors[g] as f64;
            *w = (f64::from(UNIT) * density / mean).round().clamp(1.0, f64::from(MAX_WEIGHT)) as u16;
        }
        self.summarise();
    }

    fn summarise(&mut self) {
        let n = self.weight.len();
        self.heaviest_down = self.weight.iter().scan(0, |m, &w| { *m = w.max(*m); Some(*m) }).collect();
        self.heaviest_up = vec![0; n];
        let mut m = 0;
        for g in (0..n).rev() {
            m = m.max(self.weight[g]);
            self.heaviest_up[g] = m;
        }
        // Nearest heavier group on each side: the usual stack walk, once each way.
        self.heavier_down = vec![-1; n];
        self.heavier_up = vec![n as i64; n];
        let mut stack: Vec<usize> = Vec::new();
        for g in 0..n {
            while stack.last().is_some_and(|&h| self.weight[h] <= self.weight[g]) {
                stack.pop();
            }
            self.heavier_down[g] = stack.last().map_or(-1, |&h| h as i64);
            stack.push(g);
        }
        stack.clear();
        for g in (0..n).rev() {
            while stack.last().is_some_and(|&h| self.weight[h] <= self.weight[g]) {
                stack.pop();
            }
            self.heavier_up[g] = stack.last().map_or(n as i64, |&h| h as i64);
            stack.push(g);
        }
    }

    /// What one wanted sector on cylinder `c` weighs.
    #[inline]
    pub(super) fn weight(&self, c: u32) -> u16 {
        self.weight[(c / GROUP) as usize]
    }

    /// The heaviest group at cylinder `c` or further along direction `step`.
    pub(super) fn heaviest_along(&self, c: u32, step: i64) -> u64 {
        let g = (c / GROUP) as usize;
        u64::from(if step < 0 { self.heaviest_down[g] } else { self.heaviest_up[g] })
    }

    /// The first cylinder along `step` from `c` in a group heavier than `c`'s: a cursor skipping
    /// tracks that cannot beat the best must stop there. Past the disk's end when there is none.
    pub(super) fn heavier_from(&self, c: u32, step: i64) -> i64 {
        let g = (c / GROUP) as usize;
        let group = i64::from(GROUP);
        if step < 0 {
            let h = self.heavier_down[g];
            if h < 0 { -1 } else { (h + 1) * group - 1 }
        } else {
            self.heavier_up[g] * group
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_bound_and_stop_cursors() {
        let b = Balance::with_weights(vec![1; 6], vec![8, 3, 20, 8, 8, 2]);
        let g = |i: u32| i * GROUP;
        assert_eq!(b.heaviest_along(g(1), -1), 8);
        assert_eq!(b.heaviest_along(g(3), -1), 20);
        assert_eq!(b.heaviest_along(g(3), 1), 8);
        assert_eq!(b.heaviest_along(g(5), 1), 2);
        // From group 1 (weight 3) the nearest heavier groups are 0 and 2.
        assert_eq!(b.heavier_from(g(1) + 5, -1), i64::from(GROUP) - 1);
        assert_eq!(b.heavier_from(g(1) + 5, 1), i64::from(g(2)));
        // Group 3 (8): nothing heavier above (group 4 weighs the same), group 2 below.
        assert_eq!(b.heavier_from(g(3), 1), 6 * i64::from(GROUP));
        assert_eq!(b.heavier_from(g(3), -1), i64::from(g(3)) - 1);
        // Group 2 (20) is the heaviest: no stop either way.
        assert_eq!(b.heavier_from(g(2), -1), -1);
        assert_eq!(b.heavier_from(g(2), 1), 6 * i64::from(GROUP));
    }
}
