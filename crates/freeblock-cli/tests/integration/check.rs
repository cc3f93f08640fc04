//! `freeblock check` end to end: the exit code and what it prints.

use std::process::Command;

use freeblock_server::store::{Store, StoreMeta};

fn freeblock(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_freeblock")).args(args).output().expect("run freeblock");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn check_passes_a_clean_store_and_fails_a_foreign_file() {
    let dir = std::env::temp_dir().join(format!("freeblock-cli-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A store as the server makes it (identity layout), on a small disk.
    let disk = freeblock_disk::library::media("toshiba_mk156f").unwrap();
    let meta = StoreMeta { disk: disk.spec().name.clone(), disk_sectors: disk.capacity(), sector_bytes: u64::from(disk.spec().sector_bytes), layout: None, created_empty: true };
    let store = dir.join("store");
    Store::open(&store, &meta).unwrap();
    let (code, out, err) = freeblock(&["check", store.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("disk toshiba_mk156f") && out.trim_end().ends_with("clean"), "{out}");

    // A file the server never made: named, and the exit code says so.
    let foreign = dir.join("foreign");
    std::fs::write(&foreign, [0u8; 512]).unwrap();
    let (code, out, err) = freeblock(&["check", foreign.to_str().unwrap()]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(out.contains("foreign.layout.json: missing"), "{out}");
    assert!(err.contains("1 problem(s)"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
