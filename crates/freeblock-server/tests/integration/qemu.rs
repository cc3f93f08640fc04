//! Real clients against a server started on loopback: qemu-img and qemu-io.

use crate::support;

use freeblock_server::Pace;
use support::{config, have, run, start, text, Scratch};

#[test]
fn qemu_img_info_sees_the_disks_capacity() {
    if !have("qemu-img") {
        return;
    }
    let dir = Scratch::new("info");
    let server = start(config("atlas10k", &dir.path("store"), Pace::None));
    let out = text(&run("qemu-img", &["info", "--output=json", &server.uri()]));
    let disk = freeblock_disk::library::media("atlas10k").unwrap();
    let bytes = disk.capacity() * u64::from(disk.spec().sector_bytes);
    assert!(out.contains(&format!("\"virtual-size\": {bytes}")), "qemu-img info: {out}");
    server.stop();
}

#[test]
fn qemu_io_patterns_write_and_verify_across_connections() {
    if !have("qemu-io") {
        return;
    }
    let dir = Scratch::new("io");
    let server = start(config("atlas10k", &dir.path("store"), Pace::None));
    let uri = server.uri();
    // Writes of three patterns (one FUA, one at an odd sector, one large), then a flush.
    run("qemu-io", &["-f", "raw", "-c", "write -P 0xa5 0 64k", "-c", "write -P 0x5a -f 1m 4k", "-c", "write -P 0x3c 7680 1536", "-c", "write -P 0x11 100m 4m", "-c", "flush", &uri]);
    // A second connection reads them back, and the zeroes around them.
    let out = text(&run("qemu-io", &["-f", "raw", "-c", "read -P 0xa5 0 7680", "-c", "read -P 0x3c 7680 1536", "-c", "read -P 0xa5 9216 55k", "-c", "read -P 0x5a 1m 4k", "-c", "read -P 0x11 100m 4m", "-c", "read -P 0 200m 64k", &uri]));
    assert!(!out.contains("Pattern verification failed"), "{out}");
    assert_eq!(out.matches("read ").count(), 6, "{out}");
    // A wrong pattern is caught: the check is real.
    let bad = std::process::Command::new("qemu-io").args(["-f", "raw", "-c", "read -P 0x77 0 4k", &uri]).output().unwrap();
    assert!(String::from_utf8_lossy(&bad.stdout).contains("Pattern verification failed"), "{bad:?}");
    // Zeroes over data, and a discard (which may leave anything but must succeed).
    let out = text(&run("qemu-io", &["-f", "raw", "-c", "write -z 16k 16k", "-c", "read -P 0 16k 16k", "-c", "read -P 0xa5 32k 32k", "-c", "discard 300m 1m", &uri]));
    assert!(!out.contains("failed"), "{out}");
    let finished = server.stop();
    assert!(finished.summary.requests >= 15, "{:?}", finished.summary);
}

#[test]
fn qemu_img_convert_in_and_out_round_trips_an_image() {
    if !have("qemu-img") {
        return;
    }
    let dir = Scratch::new("convert");
    let server = start(config("atlas10k", &dir.path("store"), Pace::None));
    // An 8 MiB image of a known pattern (not all one byte), in; then the export's first 8 MiB out.
    let image: Vec<u8> = (0..8u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let src = dir.path("in.raw");
    std::fs::write(&src, &image).unwrap();
    run("qemu-img", &["convert", "-n", "-f", "raw", "-O", "raw", src.to_str().unwrap(), &server.uri()]);
    let back = dir.path("out.raw");
    run("qemu-img", &["convert", "-O", "raw", "--image-opts", &format!("driver=raw,offset=0,size={},file.driver=nbd,file.host={},file.port={},file.export={}", image.len(), server.addr.ip(), server.addr.port(), server.export), back.to_str().unwrap()]);
    assert_eq!(std::fs::read(&back).unwrap(), image);
    server.stop();
}
