//! A real file system over the server, under every layout technique: ext4 made on the export
//! (through `nbdfuse` and a loop device of 4 KiB sectors), 40 files written, unmounted; the server
//! restarted on the same store, `e2fsck -f -n` clean, every file compared, and the file system
//! rewritten (files appended to, overwritten in place, deleted, created; synced); the server
//! restarted again, `e2fsck` clean and every file compared again. After every stop `freeblock
//! check` must find the store clean, and the scrub (on in every leg) must find no block that does
//! not match its checksum.
//!
//! | leg | disk | what acts while ext4 writes, rewrites and reads |
//! |---|---|---|
//! | identity | MK156F | the scrub alone (the bytes at their addresses) |
//! | rearrange | Atlas 10K | hot blocks moved to the reserved cylinders every 50 ms of model time |
//! | fs2 | Atlas 10K | blocks read with the hot region replicated near it |
//! | range writes | Atlas 10K | every write placed in one of four free places |
//! | lfs | Atlas 10K | a 16 MiB log written a segment at a time, cleaned free and in the foreground |
//!
//! Each leg requires its technique to have acted (blocks copied by moves, replicas made, writes
//! placed away, segments cleaned): a leg where it did not would prove nothing.

use crate::support;

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use freeblock::experiment::LayoutSpec;
use freeblock_server::check::{check_store, CheckReport};
use freeblock_server::config::ScrubConfig;
use freeblock_server::{Finished, Pace, ServerConfig};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{config, have, require_clients, run, start, text, Scratch};

/// The export as a block device: `nbdfuse` exposing it as the file `dir/nbd`, a loop device of
/// 4 KiB sectors over that file (so the kernel sends only whole, aligned 4 KiB blocks, as a
/// layout policy's export requires), and the file system mounted on it, each undone in reverse
/// order by [`Attached::detach`] (or, best effort, when a failing test drops it).
struct Attached {
    fuse_dir: PathBuf,
    fuse: Option<Child>,
    dev: Option<String>,
    mounted: Option<PathBuf>,
}

impl Attached {
    fn new(fuse_dir: &Path, uri: &str) -> Self {
        let mut child = Command::new("nbdfuse").arg(fuse_dir).arg(uri).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let image = fuse_dir.join("nbd");
        for _ in 0..100 {
            if image.exists() {
                let mut a = Self { fuse_dir: fuse_dir.into(), fuse: Some(child), dev: None, mounted: None };
                let dev = text(&run("losetup", &["--find", "--show", "--sector-size", "4096", image.to_str().unwrap()])).trim().to_string();
                a.dev = Some(dev);
                return a;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Do not leave a stuck nbdfuse behind the failing test.
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        panic!("nbdfuse did not expose {uri}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn dev(&self) -> &str {
        self.dev.as_deref().unwrap()
    }

    fn mount(&mut self, at: &Path, options: &str) {
        run("mount", &["-t", "ext4", "-o", options, self.dev(), at.to_str().unwrap()]);
        self.mounted = Some(at.into());
    }

    fn umount(&mut self) {
        if let Some(at) = self.mounted.take() {
            run("umount", &[at.to_str().unwrap()]);
        }
    }

    /// Unmounts, detaches the loop device and ends `nbdfuse` (which flushes and disconnects).
    fn detach(mut self) {
        self.umount();
        run("losetup", &["-d", self.dev.take().unwrap().as_str()]);
        // The loop device lets go of the file a moment after it is detached.
        let fuse_dir = self.fuse_dir.to_str().unwrap().to_string();
        for tries in 0.. {
            let out = Command::new("umount").arg(&fuse_dir).output().unwrap();
            if out.status.success() {
                break;
            }
            assert!(tries < 100, "umount {fuse_dir}: {}", String::from_utf8_lossy(&out.stderr));
            std::thread::sleep(Duration::from_millis(20));
        }
        self.fuse.take().unwrap().wait().unwrap();
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        if let Some(at) = self.mounted.take() {
            let _ = Command::new("umount").arg(&at).output();
        }
        if let Some(dev) = self.dev.take() {
            let _ = Command::new("losetup").args(["-d", &dev]).output();
        }
        if let Some(mut child) = self.fuse.take() {
            let _ = Command::new("umount").arg("-l").arg(&self.fuse_dir).output();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
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

/// What shows that a leg's technique acted (the scrub, in every leg, verified blocks too).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Acted {
    /// Nothing but the scrub: the bytes stay at their addresses.
    Scrubbed,
    /// Rearrangement's moves copied blocks while ext4 wrote.
    Moved,
    /// FS2 made replicas.
    Replicated,
    /// Range writes placed writes away from their blocks' first place.
    Placed,
    /// The log was written over and cleaned, its live blocks copied.
    Cleaned,
}

/// One leg: a store of its own on `disk`, served through `layout` (none: the identity).
struct Leg {
    name: &'static str,
    disk: &'static str,
    layout: Option<&'static str>,
    acted: Acted,
}

const LEGS: [Leg; 5] = [
    Leg { name: "identity", disk: "toshiba_mk156f", layout: None, acted: Acted::Scrubbed },
    // A 50 ms period, always on: hot blocks move to the reserved cylinders while ext4 writes.
    Leg { name: "rearrange", disk: "atlas10k", layout: Some("type = \"rearrange\"\nperiod_s = 0.05\nschedule = \"always\"\narea = { cylinders = 40, block_sectors = 8 }"), acted: Acted::Moved },
    // Regions of 4 MiB (not 128 MiB): the file system's 64 MiB span 16 of them, so reads leave
    // the hot one, and a block read once with it is replicated.
    Leg { name: "fs2", disk: "atlas10k", layout: Some("type = \"fs2\"\nepoch_accesses = 4\nthreshold = 1\nservice = \"foreground\"\nregion_blocks = 1024"), acted: Acted::Replicated },
    Leg { name: "range_writes", disk: "atlas10k", layout: Some("type = \"range_writes\""), acted: Acted::Placed },
    // A 16 MiB log (32 segments) offering 12.7 MiB: the file system (made over all of it) is
    // nearly full after the rewrites, so the log wraps and the FREEBLOCK cleaner copies live
    // blocks, some read with free bandwidth, the rest in the foreground when segments run out.
    Leg { name: "lfs", disk: "atlas10k", layout: Some("type = \"lfs\"\npartition_mb = 16\ncache_mb = 1\ncleaner = \"freeblock\""), acted: Acted::Cleaned },
];

/// The file system's size, 4 KiB blocks (or the export's, if smaller): 64 MiB.
const FS_BLOCKS: u64 = 16384;

/// What one server run did, and what `freeblock check` found of the store it left.
struct Ran {
    finished: Finished,
    check: CheckReport,
}

impl Ran {
    fn copied(&self) -> u64 {
        self.finished.placement.as_ref().map_or(0, |p| p.blocks_copied)
    }

    /// A figure of the layout policy's report (0 when it has none).
    fn detail(&self, key: &str) -> f64 {
        self.finished.report.as_ref().and_then(|r| r.layout.as_ref()).and_then(|l| l.details[key].as_f64()).unwrap_or(0.0)
    }
}

/// Stops the server, and requires `freeblock check` to find the stopped store clean.
fn stop(server: support::Running, store: &Path, leg: &str, what: &str) -> Ran {
    let finished = server.stop();
    let check = check_store(store, false);
    assert!(check.clean(), "{leg}, after {what}: freeblock check: {check}");
    Ran { finished, check }
}

/// Random bytes, `least` to `least + spread - 1` of them.
fn random(rng: &mut ChaCha8Rng, least: usize, spread: u32) -> Vec<u8> {
    let mut data = vec![0u8; least + (rng.next_u32() % spread) as usize];
    rng.fill_bytes(&mut data);
    data
}

/// Every file of the mounted file system (but `lost+found`) equals `files`, and there is no other.
fn compare(mount: &Path, files: &BTreeMap<String, Vec<u8>>, leg: &str) {
    let mut found: Vec<String> = std::fs::read_dir(mount).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| n != "lost+found").collect();
    found.sort();
    assert_eq!(found, files.keys().cloned().collect::<Vec<_>>(), "{leg}: the files in the file system");
    for (name, data) in files {
        assert!(&std::fs::read(mount.join(name)).unwrap() == data, "{leg}: {name} changed across the restarts");
    }
}

/// A file system's rewrite pattern: of every four files one is appended to, one has its middle
/// third overwritten in place, one is deleted; then new files are created, and all is synced.
/// `files` follows.
fn rewrite(mount: &Path, files: &mut BTreeMap<String, Vec<u8>>, rng: &mut ChaCha8Rng) {
    let names: Vec<String> = files.keys().cloned().collect();
    for (i, name) in names.iter().enumerate() {
        let path = mount.join(name);
        match i % 4 {
            0 => {
                let more = random(rng, 1, 100_000);
                std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(&more).unwrap();
                files.get_mut(name).unwrap().extend_from_slice(&more);
            }
            1 => {
                let data = files.get_mut(name).unwrap();
                let at = data.len() / 3;
                let patch = random(rng, (data.len() / 3).max(1), 1);
                let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                f.seek(SeekFrom::Start(at as u64)).unwrap();
                f.write_all(&patch).unwrap();
                data[at..at + patch.len()].copy_from_slice(&patch);
            }
            2 => {
                std::fs::remove_file(&path).unwrap();
                files.remove(name);
            }
            _ => {}
        }
    }
    for i in 0..12 {
        let data = random(rng, 1000, 200_000);
        std::fs::write(mount.join(format!("g{i:02}.bin")), &data).unwrap();
        files.insert(format!("g{i:02}.bin"), data);
    }
    // syncfs(2) of this file system alone: a plain `sync` would wait for every other writer on the machine.
    run("sync", &["-f", mount.to_str().unwrap()]);
}

/// Runs one leg (write, restart, check and rewrite, restart, check); returns its line for the
/// closing note.
fn run_leg(leg: &Leg) -> String {
    let began = Instant::now();
    let dir = Scratch::new(&format!("ext4-{}", leg.name));
    let (fuse_dir, mount_dir, store) = (dir.path("fuse"), dir.path("mnt"), dir.path("store"));
    std::fs::create_dir_all(&fuse_dir).unwrap();
    std::fs::create_dir_all(&mount_dir).unwrap();
    let mut cfg: ServerConfig = config(leg.disk, &store, Pace::None);
    cfg.layout = leg.layout.map(|l| toml::from_str::<LayoutSpec>(l).unwrap());
    cfg.scrub = Some(ScrubConfig { passes: 0 });
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut files: BTreeMap<String, Vec<u8>> = (0..40).map(|i| (format!("f{i:02}.bin"), random(&mut rng, 1000, 300_000))).collect();
    let mut runs = Vec::new();

    // ext4 made and written.
    let server = start(cfg.clone());
    let mut a = Attached::new(&fuse_dir, &server.uri());
    let export_blocks = text(&run("blockdev", &["--getsize64", a.dev()])).trim().parse::<u64>().unwrap() / 4096;
    run("mkfs.ext4", &["-q", "-F", "-b", "4096", a.dev(), &FS_BLOCKS.min(export_blocks).to_string()]);
    a.mount(&mount_dir, "rw");
    for (name, data) in &files {
        std::fs::write(mount_dir.join(name), data).unwrap();
    }
    a.detach();
    runs.push(stop(server, &store, leg.name, "writing"));

    // Restarted: checked, then rewritten.
    let server = start(cfg.clone());
    let mut a = Attached::new(&fuse_dir, &server.uri());
    run("e2fsck", &["-f", "-n", a.dev()]);
    a.mount(&mount_dir, "rw");
    compare(&mount_dir, &files, leg.name);
    rewrite(&mount_dir, &mut files, &mut rng);
    let df = text(&run("df", &["--output=size,pcent", mount_dir.to_str().unwrap()]));
    a.detach();
    runs.push(stop(server, &store, leg.name, "rewriting"));

    // Restarted again: checked read-only.
    let server = start(cfg);
    let mut a = Attached::new(&fuse_dir, &server.uri());
    run("e2fsck", &["-f", "-n", a.dev()]);
    a.mount(&mount_dir, "ro");
    compare(&mount_dir, &files, leg.name);
    a.detach();
    runs.push(stop(server, &store, leg.name, "checking"));

    let name = leg.name;
    let scrubs: Vec<_> = runs.iter().map(|r| r.finished.scrub.clone().expect("the scrub ran")).collect();
    let verified: u64 = scrubs.iter().map(|s| s.verified).sum();
    assert!(scrubs.iter().all(|s| s.mismatched == 0 && s.read_errors == 0), "{name}: the scrub found blocks not matching their checksums: {scrubs:?}");
    assert!(verified > 0, "{name}: the scrub verified no block: {scrubs:?}");
    let copied: Vec<u64> = runs.iter().map(Ran::copied).collect();
    let sum = |key: &str| runs.iter().map(|r| r.detail(key)).sum::<f64>();
    let last = &runs[2].check;
    let acted = match leg.acted {
        Acted::Scrubbed => String::new(),
        Acted::Moved => {
            assert!(copied[0] > 0 && copied[1] > 0, "{name}: rearrangement moved no block while ext4 wrote or rewrote: {copied:?}");
            format!(", blocks copied by moves {copied:?}")
        }
        Acted::Replicated => {
            assert!(sum("replicas_made") > 0.0 && copied.iter().sum::<u64>() > 0, "{name}: FS2 made no replica: {copied:?}");
            format!(", blocks copied to replicas {copied:?}, {} reads from replicas, {} copies compared by the check", sum("reads_from_replicas"), last.copies_compared)
        }
        Acted::Placed => {
            let moved: Vec<f64> = runs.iter().map(|r| r.detail("moved_share")).collect();
            assert!(moved[0] > 0.0 && moved[1] > 0.0 && last.moved_blocks > 0, "{name}: no write was placed away from its first candidate: {moved:?}, {last}");
            format!(", write I/Os {} ({:.0}% and {:.0}% placed away from the first candidate), {} blocks away from home at the end", sum("writes"), moved[0] * 100.0, moved[1] * 100.0, last.moved_blocks)
        }
        Acted::Cleaned => {
            let cleaned = sum("foreground_segments") > 0.0 && sum("free_blocks_moved") > 0.0;
            assert!(cleaned && copied.iter().sum::<u64>() > 0, "{name}: the log was not cleaned both free and in the foreground: {copied:?}");
            format!(", {} segment writes, {} segments cleaned in the foreground, {} blocks moved free, blocks copied by cleaning {copied:?}", sum("segment_writes"), sum("foreground_segments"), sum("free_blocks_moved"))
        }
    };
    let requests: Vec<u64> = runs.iter().map(|r| r.finished.summary.requests).collect();
    let df: Vec<&str> = df.split_whitespace().collect();
    format!("{name} on {}: {:.1} s, requests {requests:?} (write, rewrite, check), {} files in {} KiB ({} used), {verified} blocks scrubbed{acted}; freeblock check clean 3 times", leg.disk, began.elapsed().as_secs_f64(), files.len(), df[2], df[3])
}

#[test]
fn ext4_files_survive_restarts_under_every_layout() {
    if !(have("nbdfuse") && have("mkfs.ext4") && have("e2fsck") && have("losetup") && can_mount()) {
        return;
    }
    let began = Instant::now();
    for leg in &LEGS {
        let line = run_leg(leg);
        eprintln!("ext4 {line}");
    }
    eprintln!("ext4: {} legs in {:.1} s", LEGS.len(), began.elapsed().as_secs_f64());
}
