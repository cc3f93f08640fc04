//! Zero-latency access: a whole-track read costs at most one revolution once the head is on the
//! track, wherever it lands; without it, the head waits for the first sector.

use freeblock_disk::{Disk, HeadState, Op};

use super::atlas;

#[test]
fn whole_track_reads_take_one_revolution_with_zero_latency() {
    let plain = atlas();
    let zl = std::sync::Arc::new(Disk::clone(&plain).with_zero_latency(true));
    let spt = u64::from(plain.layout().sectors_per_track(0));
    let rev = plain.revolution_ns();
    let mut runs = Vec::new();
    let (mut sum_plain, mut sum_zl) = (0u64, 0u64);
    for i in 0..200u64 {
        let start = i * 7_919_000 % rev + i * rev;
        let head = HeadState { cylinder: 0, surface: 0 };
        let a = plain.access(head, start, 0, spt, Op::Read, &mut runs).unwrap();
        let z = zl.access(head, start, 0, spt, Op::Read, &mut runs).unwrap();
        let on_track_z = z.media_end - start - z.breakdown.overhead;
        assert!(on_track_z <= rev + 2 * rev / spt, "zero-latency track read took {on_track_z} ns");
        assert!(z.media_end <= a.media_end);
        sum_plain += a.media_end - start;
        sum_zl += z.media_end - start;
    }
    assert!(sum_zl < sum_plain, "zero latency should help on average");
}
