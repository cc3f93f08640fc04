//! Transfers that follow one another on the next sector do so at once: instants are whole
//! nanoseconds rounded up, and neither the end of one transfer nor the start of the next may lose
//! a revolution to that rounding.

use std::sync::{Arc, OnceLock};

use freeblock_disk::{library, Disk, HeadState, Op};
use proptest::prelude::*;

fn atlas() -> &'static Arc<Disk> {
    static DISK: OnceLock<Arc<Disk>> = OnceLock::new();
    DISK.get_or_init(|| library::media("atlas10k").unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// An arc of `n` sectors, then one from the sector after it on the same track: the second
    /// starts as the first ends, and the first ends less than a nanosecond after the exact instant.
    #[test]
    fn an_arc_continues_on_the_next_sector_without_waiting(cylinder in 0u32..10_000, surface in 0u32..6, first in 0u32..229, n in 1u32..228, m in 1u32..50, t in 0u64..50_000_000) {
        let disk = atlas();
        let cylinder = cylinder % disk.layout().cylinders();
        let spt = disk.layout().sectors_per_track(cylinder);
        let head = HeadState { cylinder, surface };
        let a = disk.arc(head, t, cylinder, surface, first % spt, n.min(spt - 1), Op::Read);
        let next = (first % spt + n.min(spt - 1)) % spt;
        let b = disk.arc(a.head, a.end, cylinder, surface, next, m, Op::Read);
        prop_assert_eq!(b.wait_ns, 0, "the next sector was missed");
        prop_assert_eq!(b.media_start, a.end);
        // The exact end, in ps: the next sector's position, reached from the transfer's start.
        let angles = disk.layout().track_angles(cylinder, surface).unwrap();
        let rev = disk.revolution_ps();
        let start_ps = u128::from(a.media_start) * 1000 - u128::from((disk.rot_pos(a.media_start) + rev - angles.sector_start(first % spt)) % rev);
        let span = u128::from((angles.sector_start(next) + rev - angles.sector_start(first % spt)) % rev);
        prop_assert_eq!(u128::from(a.end), (start_ps + span).div_ceil(1000));
    }

    /// A foreground read that starts on the sector right after a background arc starts as the
    /// arc ends.
    #[test]
    fn a_request_on_the_next_sector_starts_as_the_arc_ends(lbn in 0u64..17_000_000, n in 1u32..60, t in 0u64..50_000_000) {
        let disk = atlas();
        let pbn = disk.layout().lbn_to_pbn(lbn).unwrap();
        let spt = disk.layout().sectors_per_track(pbn.cylinder);
        let first = (pbn.sector + spt - n) % spt;
        // Only where the sectors before the request hold data on the same track.
        prop_assume!(disk.layout().pbn_to_lbn(freeblock_disk::Pbn { sector: first, ..pbn }).is_some());
        let head = HeadState { cylinder: pbn.cylinder, surface: pbn.surface };
        let a = disk.arc(head, t, pbn.cylinder, pbn.surface, first, n, Op::Read);
        let mut runs = Vec::new();
        let fg = disk.access_when_free(a.head, a.end, a.end, lbn, 1, Op::Read, &mut runs).unwrap();
        prop_assume!(disk.overhead_ns(Op::Read) == 0);
        prop_assert_eq!(fg.media_start, a.end);
    }
}
