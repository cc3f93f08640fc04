//! Real clients against a server started on loopback: nbdinfo, nbdcopy, fio's nbd engine with
//! crc32c verification (8 jobs on 8 connections, random and sequential).

use crate::support;

use freeblock_server::Pace;
use support::{config, have, run, start, text, Scratch};

#[test]
fn nbdinfo_reports_the_export_and_its_flags() {
    if !have("nbdinfo") {
        return;
    }
    let dir = Scratch::new("nbdinfo");
    let server = start(config("atlas10k", &dir.path("store"), Pace::None));
    let out = text(&run("nbdinfo", &[&server.uri()]));
    let disk = freeblock_disk::library::media("atlas10k").unwrap();
    let bytes = disk.capacity() * u64::from(disk.spec().sector_bytes);
    for want in [format!("export-size: {bytes}"), "is_rotational: true".into(), "can_fua: true".into(), "can_multi_conn: true".into(), "structured".into()] {
        assert!(out.contains(&want), "nbdinfo lacks {want:?}:\n{out}");
    }
    let list = text(&run("nbdinfo", &["--list", &format!("nbd://{}", server.addr)]));
    assert!(list.contains("export=\"atlas10k\""), "{list}");
    server.stop();
}

#[test]
fn nbdcopy_copies_in_and_out() {
    if !have("nbdcopy") {
        return;
    }
    let dir = Scratch::new("nbdcopy");
    // A small disk (the Toshiba MK156F, 156 MB): this nbdcopy copies whole exports out.
    let server = start(config("toshiba_mk156f", &dir.path("store"), Pace::None));
    let image: Vec<u8> = (0..4u32 << 20).map(|i| (i.wrapping_mul(40_503) >> 7) as u8).collect();
    let src = dir.path("in.raw");
    std::fs::write(&src, &image).unwrap();
    run("nbdcopy", &[src.to_str().unwrap(), &server.uri()]);
    let back = dir.path("out.raw");
    // The whole export back, through nbdcopy's own NBD client (several connections).
    run("nbdcopy", &[&server.uri(), back.to_str().unwrap()]);
    let out = std::fs::read(&back).unwrap();
    let disk = freeblock_disk::library::media("toshiba_mk156f").unwrap();
    assert_eq!(out.len() as u64, disk.capacity() * u64::from(disk.spec().sector_bytes));
    assert_eq!(&out[..image.len()], &image[..]);
    assert!(out[image.len()..].iter().all(|&b| b == 0), "past the copied image the export reads as zeroes");
    server.stop();
}

fn fio(uri: &str, rw: &str, bs: &str) -> String {
    let args = [
        "--name=verify",
        "--ioengine=nbd",
        &format!("--uri={uri}"),
        &format!("--rw={rw}"),
        &format!("--bs={bs}"),
        "--size=4m",
        "--offset_increment=4m",
        "--numjobs=8",
        "--iodepth=8",
        "--verify=crc32c",
        "--do_verify=1",
        "--verify_fatal=1",
        // No state files left in the working directory.
        "--verify_state_save=0",
        "--group_reporting",
    ];
    text(&run("fio", &args))
}

#[test]
fn fio_verifies_crc32c_over_eight_connections() {
    if !have("fio") {
        return;
    }
    let dir = Scratch::new("fio");
    let server = start(config("atlas10k", &dir.path("store"), Pace::None));
    for (rw, bs) in [("randwrite", "4k"), ("write", "64k")] {
        let out = fio(&server.uri(), rw, bs);
        assert!(out.contains("err= 0"), "fio {rw}: {out}");
        assert!(out.contains("READ:") && out.contains("WRITE:"), "fio {rw} did not read back to verify: {out}");
    }
    let f = server.stop();
    // 8 jobs × 4 MiB written and read back, twice.
    assert!(f.summary.timed >= 2 * 8 * 64 * 2, "{:?}", f.summary);
}
