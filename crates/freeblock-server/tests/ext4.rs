//! A real file system over the server: ext4 made on the export through `nbdfuse`, mounted with a
//! loop device, files written, unmounted; the server restarted on the same store; the files
//! checked and the file system checked with `e2fsck`.

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use freeblock_server::Pace;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{config, have, require_clients, run, start, Scratch};

/// `nbdfuse` exposing `uri` as `dir/nbd`, until unmounted.
fn fuse(dir: &Path, uri: &str) -> Child {
    let mut child = Command::new("nbdfuse").arg(dir).arg(uri).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    for _ in 0..100 {
        if dir.join("nbd").exists() {
            return child;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Do not leave a stuck nbdfuse behind the failing test.
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    panic!("nbdfuse did not expose {uri}: {}", String::from_utf8_lossy(&out.stderr));
}

fn unfuse(dir: &Path, mut child: Child) {
    run("umount", &[dir.to_str().unwrap()]);
    child.wait().unwrap();
}

/// Whether this machine lets the test mount (root, /dev/fuse, loop devices); if not, skips (or
/// fails under FREEBLOCK_REQUIRE_CLIENTS=1).
fn can_mount() -> bool {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let ok = root && Path::new("/dev/fuse").exists() && Path::new("/dev/loop-control").exists();
    if !ok {
        assert!(!require_clients(), "ext4 over nbdfuse needs root, /dev/fuse and loop devices");
        eprintln!("SKIPPED: ext4 over nbdfuse needs root, /dev/fuse and loop devices");
    }
    ok
}

#[test]
fn ext4_files_survive_a_server_restart() {
    if !(have("nbdfuse") && have("mkfs.ext4") && have("e2fsck") && can_mount()) {
        return;
    }
    let dir = Scratch::new("ext4");
    let (fuse_dir, mount_dir) = (dir.path("fuse"), dir.path("mnt"));
    std::fs::create_dir_all(&fuse_dir).unwrap();
    std::fs::create_dir_all(&mount_dir).unwrap();
    let store = dir.path("store");
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let files: Vec<(String, Vec<u8>)> = (0..40)
        .map(|i| {
            let mut data = vec![0u8; 1000 + (rng.next_u32() % 300_000) as usize];
            rng.fill_bytes(&mut data);
            (format!("f{i:02}.bin"), data)
        })
        .collect();

    let server = start(config("toshiba_mk156f", &store, Pace::None));
    let fuse_child = fuse(&fuse_dir, &server.uri());
    let image = fuse_dir.join("nbd");
    run("mkfs.ext4", &["-q", "-F", image.to_str().unwrap()]);
    run("mount", &["-o", "loop", image.to_str().unwrap(), mount_dir.to_str().unwrap()]);
    for (name, data) in &files {
        std::fs::write(mount_dir.join(name), data).unwrap();
    }
    run("umount", &[mount_dir.to_str().unwrap()]);
    unfuse(&fuse_dir, fuse_child);
    let first = server.stop();

    let server = start(config("toshiba_mk156f", &store, Pace::None));
    let fuse_child = fuse(&fuse_dir, &server.uri());
    run("e2fsck", &["-f", "-n", image.to_str().unwrap()]);
    run("mount", &["-o", "loop,ro", image.to_str().unwrap(), mount_dir.to_str().unwrap()]);
    let mut checked = 0;
    for (name, data) in &files {
        assert_eq!(&std::fs::read(mount_dir.join(name)).unwrap(), data, "{name} changed across the restart");
        checked += 1;
    }
    run("umount", &[mount_dir.to_str().unwrap()]);
    unfuse(&fuse_dir, fuse_child);
    let second = server.stop();
    eprintln!("ext4: {checked} files checked after a restart; {} requests before, {} after", first.summary.requests, second.summary.requests);
    assert_eq!(checked, files.len());
}
