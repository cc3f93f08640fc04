//! Predictions agree with what the drive then does: the positioning time a scheduler sees is the
//! seek + rotational latency the access reports.

use freeblock_disk::{Drive, Op};

use super::atlas;

#[test]
fn prediction_equals_service() {
    let disk = atlas();
    let mut drive = Drive::new(disk.clone());
    let mut t = 0;
    let cap = disk.capacity();
    for i in 0..5_000u64 {
        let lbn = (i * 2_654_435_761) % (cap - 64);
        let op = if i % 3 == 0 { Op::Write } else { Op::Read };
        let predicted = drive.positioning(t, lbn, op).unwrap();
        let full = drive.predict(t, lbn, 16, op).unwrap();
        let served = drive.serve(t, lbn, 16, op).unwrap();
        assert_eq!(full, served);
        // Single-track requests: positioning is exactly seek + rotational latency.
        let b = served.access.breakdown;
        if served.access.media_end - served.access.media_start == b.transfer {
            assert_eq!(predicted, b.seek + b.rotational_latency, "request {i}");
        }
        t = served.access.end + (i % 7) * 1_000;
    }
}
