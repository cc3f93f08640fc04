//! The LBNs of the track under the head, looked up once per track.
//!
//! At every sector boundary the media process asks which LBN the next sector holds. A track is
//! loaded once ([`crate::Layout::track_summary`]) and kept with the access; most tracks hold one
//! run of consecutive LBNs, so the answer is an addition.
//!
//! | track | kept | LBN of sector `s` |
//! |---|---|---|
//! | every sector holds the next LBN (the layout says so) | `base`, `one_run` | `base + s`; an LBN of the track is found without a lookup |
//! | first and last sectors a run apart, no remapped defect on the disk | `base` | `base + s` |
//! | anything else (spares, slips, remapped defects) | `lbns`, one per sector (`NONE`: unmapped) | `lbns[s]` |
//!
//! For the last kind, `short` and `gaps` say how DiskSim's step through the LBNs
//! (`skip_unmapped_sectors`, `media.rs`) passes the unmapped sectors ([`Track::after`]). Sector
//! times are integer picoseconds: boundary `i` of a pass starting at `base` is at
//! `base + ⌊i·rev/spt⌋` ([`Track::boundary_time`]).

use super::NONE;
use crate::disk::Disk;
use crate::layout::{Pbn, TrackSummary};

/// The LBNs of one track.
#[derive(Debug, Clone, Default)]
pub(super) struct Track {
    cyl: u32,
    surf: u32,
    pub(super) spt: u32,
    /// LBN of sector 0 when every sector holds consecutive LBNs (`lbns` empty).
    pub(super) base: u64,
    /// Per-sector LBN (`NONE` if unmapped), when not consecutive.
    pub(super) lbns: Vec<u64>,
    pub(super) first: u64,
    pub(super) next: u64,
    /// Rotational position of sector 0's start, ps.
    pub(super) pos0: u64,
    valid: bool,
    /// Sector `s` holds LBN `base + s` for every sector (checked with
    /// `Layout::track_first_lbn`), so an LBN in `first..next` is found without a lookup.
    one_run: bool,
    /// A track whose LBNs are one run in consecutive sectors but fill only part of it: the
    /// sectors of its last and first LBN (for `CacheSpec::skip_unmapped_sectors`).
    short: Option<(u32, u32)>,
    /// Some sectors hold no LBN (spares, slips), and the track is short or none of the disk's
    /// LBNs is remapped elsewhere: with `skip_unmapped_sectors`, a mapped sector is followed by
    /// the next mapped one (on a short track, the first LBN's sector follows the last one's).
    pub(super) gaps: bool,
    /// The revolution (ps) as `rev_whole·spt + rev_rest`, for [`Track::boundary_time`].
    rev_whole: u64,
    rev_rest: u64,
}

impl Track {
    pub(super) fn lbn(&self, s: u32) -> u64 {
        if self.lbns.is_empty() {
            self.base + u64::from(s)
        } else {
            self.lbns[s as usize]
        }
    }

    /// Whether some sector of the track holds `lbn`.
    pub(super) fn holds(&self, lbn: u64) -> bool {
        if self.lbns.is_empty() {
            lbn >= self.first && lbn < self.next
        } else {
            self.lbns.contains(&lbn)
        }
    }

    /// `base + ⌊i·rev/spt⌋`, the time of sector boundary `i` of a pass that starts at `base`.
    /// Written as `base + i·rev_whole + ⌊i·rev_rest/spt⌋`, the same number, so the division is of
    /// a small product: the mechanism asks for it at every event.
    pub(super) fn boundary_time(&self, base: u64, i: u64) -> u64 {
        base + i * self.rev_whole + i * self.rev_rest / u64::from(self.spt)
    }

    /// Rotational position of sector `s`'s start.
    pub(super) fn pos(&self, s: u64, rev: u64) -> u64 {
        (self.pos0 + s * rev / u64::from(self.spt)) % rev
    }

    pub(super) fn is(&self, cyl: u32, surf: u32) -> bool {
        self.valid && self.cyl == cyl && self.surf == surf
    }

    /// The sector after `s` in the sector-by-sector media process. With `skip_unmapped`, DiskSim's
    /// (it steps through the track's LBNs, one sector time each): from a mapped sector, the next
    /// mapped one, at once.
    pub(super) fn after(&self, s: u32, skip_unmapped: bool) -> u32 {
        let mut n = (s + 1) % self.spt;
        if skip_unmapped && self.gaps && self.lbns[s as usize] != NONE {
            while self.lbns[n as usize] == NONE {
                n = (n + 1) % self.spt;
            }
        }
        n
    }

    pub(super) fn load(&mut self, disk: &Disk, cyl: u32, surf: u32) {
        if self.is(cyl, surf) {
            return;
        }
        self.fill(disk, cyl, surf, disk.layout().track_summary(cyl, surf));
    }

    /// Loads the track holding `lbn` (an LBN of the disk) and returns the sector holding it.
    pub(super) fn load_lbn(&mut self, disk: &Disk, lbn: u64) -> Pbn {
        if self.valid && self.one_run && (self.first..self.next).contains(&lbn) {
            return Pbn { cylinder: self.cyl, surface: self.surf, sector: (lbn - self.base) as u32 };
        }
        let (pbn, summary) = disk.layout().lbn_track(lbn).expect("in range");
        if !self.is(pbn.cylinder, pbn.surface) {
            self.fill(disk, pbn.cylinder, pbn.surface, summary);
        }
        pbn
    }

    /// Loads track `(cyl, surf)`, whose [`crate::Layout::track_summary`] is `summary`.
    fn fill(&mut self, disk: &Disk, cyl: u32, surf: u32, summary: TrackSummary) {
        let layout = disk.layout();
        let TrackSummary { sectors_per_track: spt, sector0_pos: pos0, first_lbn } = summary;
        let rev = disk.revolution_ps();
        self.rev_whole = rev.checked_div(u64::from(spt)).unwrap_or(0);
        self.rev_rest = rev.checked_rem(u64::from(spt)).unwrap_or(0);
        self.cyl = cyl;
        self.surf = surf;
        self.spt = spt;
        self.valid = true;
        self.one_run = false;
        self.short = None;
        self.gaps = false;
        self.pos0 = pos0;
        self.lbns.clear();
        if let Some(a) = first_lbn {
            self.one_run = true;
            self.base = a;
            self.first = a;
            self.next = a + u64::from(spt);
            return;
        }
        let at = |s: u32| layout.pbn_to_lbn(Pbn { cylinder: cyl, surface: surf, sector: s });
        // First and last sectors a run apart say nothing of a defective sector between them,
        // whose LBN is on its spare: with remapped defects, look at every sector.
        if let (Some(a), Some(b), false) = (at(0), at(spt - 1), layout.has_remapped_defects()) {
            if b >= a && b - a == u64::from(spt - 1) {
                self.base = a;
                self.first = a;
                self.next = b + 1;
                return;
            }
        }
        let (mut first, mut last) = (NONE, 0);
        for s in 0..spt {
            let l = at(s).unwrap_or(NONE);
            if l != NONE {
                first = first.min(l);
                last = last.max(l);
            }
            self.lbns.push(l);
        }
        self.first = first;
        self.next = if first == NONE { NONE } else { last + 1 };
        if first != NONE {
            let s0 = self.lbns.iter().position(|&l| l == first).expect("first LBN") as u32;
            let n = last + 1 - first;
            let run = (0..n).all(|k| {
                let s = s0 as u64 + k;
                s < u64::from(spt) && self.lbns[s as usize] == first + k
            });
            let mapped = self.lbns.iter().filter(|&&l| l != NONE).count() as u64;
            if run && mapped == n && n < u64::from(spt) {
                self.short = Some(((u64::from(s0) + n - 1) as u32, s0));
            }
            self.gaps = mapped < u64::from(spt) && (self.short.is_some() || !layout.has_remapped_defects());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Track;
    use crate::disk::{Disk, Op};
    use crate::drive::buffer::tests::{fast_forward_changes_nothing, SLOW_BUS_DISK};
    use crate::drive::buffer::Buffer;
    use crate::layout::Pbn;

    /// DiskSim's short-track stepping (`skip_unmapped_sectors`): the last track of a cylinder
    /// of the slow-bus disk's third zone holds 329 LBNs in 333 sectors (4 spares per cylinder).
    /// A write there that outruns its data over the slow bus waits for a missed sector 329
    /// sector times with the option, a revolution without; on a full track the option changes
    /// nothing. Both ways the fast-forwards change nothing.
    #[test]
    fn a_short_track_is_stepped_through_its_lbns_with_skip_unmapped_sectors() {
        let mut base = crate::DiskSpec::from_toml_str(SLOW_BUS_DISK, "slow-bus.toml").unwrap();
        base.cache.zero_latency_writes = false;
        base.cache.segment_sectors = 64;
        let with = |skip: bool| {
            let mut s = base.clone();
            s.cache.skip_unmapped_sectors = skip;
            Disk::new(s).unwrap()
        };
        let (off, on) = (with(false), with(true));
        let mut tr = Track::default();
        tr.load(&off, 66, 3);
        assert_eq!((tr.short, tr.next - tr.first, tr.spt), (Some((328, 0)), 329, 333));
        assert_eq!((tr.after(328, true), tr.after(328, false), tr.after(5, true)), (0, 329, 6));
        tr.load(&off, 66, 0);
        assert_eq!(tr.short, None);
        let sector_ps = off.revolution_ps() / 333;
        let end = |disk: &Disk, surface: u32| {
            let lbn = disk.layout().pbn_to_lbn(Pbn { cylinder: 66, surface, sector: 0 }).unwrap() + 20;
            Buffer::new(disk).serve(disk, 0, lbn, 200, Op::Write).unwrap().end_ps
        };
        assert_eq!(end(&on, 0), end(&off, 0), "a full track");
        let (a, b) = (end(&on, 3), end(&off, 3));
        // Each wait for a missed sector is 4 sector times shorter (ps rounding aside).
        let saved = b.checked_sub(a).expect("shorter with the option");
        let waits = (saved + sector_ps) / (4 * sector_ps);
        assert!(waits >= 1 && saved.abs_diff(waits * off.revolution_ps() * 4 / 333) <= 4 * waits, "saved {saved} ps");
        for disk in [&off, &on] {
            for seed in 0..2 {
                fast_forward_changes_nothing(disk, 200, 400, 91 + seed);
            }
        }
    }

    /// A slipped sector inside a track (zone 0's sector 3, on track 0/0): with
    /// `skip_unmapped_sectors` the mapped sector before it is followed by the one after it, as
    /// DiskSim steps from LBN to LBN (st41601n random #3247); the head still passes an unmapped
    /// sector it starts on one sector at a time; without the option nothing is skipped.
    #[test]
    fn a_slipped_sector_is_stepped_over_with_skip_unmapped_sectors() {
        let disk = Disk::new(crate::DiskSpec::from_toml_str(SLOW_BUS_DISK, "slow-bus.toml").unwrap()).unwrap();
        let mut tr = Track::default();
        tr.load(&disk, 0, 0);
        assert!(tr.gaps && tr.short.is_none());
        assert_eq!((tr.after(2, true), tr.after(2, false), tr.after(3, true), tr.after(63, true)), (4, 3, 4, 0));
        tr.load(&disk, 0, 1);
        assert!(!tr.gaps);
        assert_eq!(tr.after(2, true), 3);
    }
}
