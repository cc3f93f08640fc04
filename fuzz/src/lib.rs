//! Fuzz targets for every freeblock parser and for the engine.
//!
//! Each target is a plain function from bytes to nothing that must never panic, abort or
//! allocate more than 1 GB, whatever the bytes. Bad input is fine — it must come back as an
//! `Err`, which the target drops. Two drivers run the same functions:
//!
//! - **libFuzzer** (`cargo fuzz`, the binaries in `fuzz_targets/`): coverage-guided;
//!   `make fuzz` runs 1 M inputs per target (see `docs/fuzzing.md`).
//! - **`cargo test`** (`crates/freeblock/tests/fuzz_regressions.rs`, which includes this file as
//!   a module): every saved crash reproducer in `fuzz/regressions/<target>/`, the seed corpus, and
//!   a few thousand seeded random mutations of it. That is the short run inside `make test`; it
//!   needs no nightly flags and no sanitizer build.
//!
//! | target | parser | input |
//! |---|---|---|
//! | `experiment_toml` | `Experiment::from_toml_str`, then `build` for built-in disks | an experiment file |
//! | `disk_toml` | `DiskSpec::from_toml_str`, `Disk::new`, a few media accesses | a disk spec |
//! | `disksim` | the DiskSim parameter language, `disksim::import`, `bus_transfer_times` | `.diskspecs`, `.model`, `.seek`, `.parv` joined by [`DISKSIM_PART_SEPARATOR`] |
//! | `trace_<format>` | `TraceReader` for one format, plain and with capacity, address maps, limit, device | a trace file |
//! | `engine` | `Experiment::run` on a generated small disk and a short generated experiment | bytes that choose every knob ([`engine_config`]) |
//!
//! Both run under [`CappedAllocator`], this file's global allocator, which refuses allocations
//! past 1 GiB. Besides "no panic", the trace targets check what the reader promises: nothing after an error,
//! open arrivals in time order, every request inside the disk when a capacity is given, and no
//! more requests than the limit.
//!
//! This file depends only on `freeblock`, `freeblock-disk` and `std`, so the `cargo test` driver
//! can include it without a dependency on this crate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use freeblock::experiment::Experiment;
use freeblock::workload::{ArrivalKind, TraceFormat, TraceReader, Workload, WorkloadSpec};
use freeblock_disk::{disksim, Disk, DiskSpec, HeadState, Op};

/// A fuzz target: bytes in, and it returns only if nothing went wrong.
pub type TargetFn = fn(&[u8]);

/// Every target, by name (the names of the binaries in `fuzz_targets/` and of the folders in
/// `fuzz/regressions/` and `fuzz/seeds.txt`).
pub const TARGETS: &[(&str, TargetFn)] = &[
    ("experiment_toml", experiment_toml),
    ("disk_toml", disk_toml),
    ("disksim", disksim_files),
    ("trace_disksim", trace_disksim),
    ("trace_validate", trace_validate),
    ("trace_msr", trace_msr),
    ("trace_blkparse", trace_blkparse),
    ("trace_srt", trace_srt),
    ("trace_vscsi", trace_vscsi),
    ("engine", engine),
];

/// Where relative paths in fuzzed experiment files point: a folder that does not exist, so no
/// input can reach a real file through a relative path.
const NO_SUCH_DIR: &str = "/nonexistent/freeblock-fuzz";

// ---------------------------------------------------------------- the 1 GiB allocation cap

/// The most bytes one allocation may ask for, and the most live at once in the process.
pub const ALLOCATION_CAP: usize = 1 << 30;

/// The system allocator, refusing what would pass [`ALLOCATION_CAP`]: the allocation then fails
/// and Rust aborts with `memory allocation of N bytes failed`, which both drivers report as a
/// crash. It is the global allocator of every binary this file is part of (the libFuzzer
/// targets, the `cargo test` driver), so the 1 GB limit holds with or without a sanitizer.
struct CappedAllocator;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

impl CappedAllocator {
    /// Reserves `size` bytes against the cap; false if they do not fit.
    fn reserve(size: usize) -> bool {
        if size > ALLOCATION_CAP {
            return false;
        }
        let before = LIVE_BYTES.fetch_add(size, Ordering::Relaxed);
        if before + size > ALLOCATION_CAP {
            LIVE_BYTES.fetch_sub(size, Ordering::Relaxed);
            return false;
        }
        true
    }
}

// SAFETY: every method forwards to `System` with the same layout; the counter only decides
// whether to forward, and returning null is how an allocator refuses.
unsafe impl GlobalAlloc for CappedAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Self::reserve(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc(layout);
        if p.is_null() {
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !Self::reserve(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !Self::reserve(new_size - old) {
            return std::ptr::null_mut();
        }
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            if new_size > old {
                LIVE_BYTES.fetch_sub(new_size - old, Ordering::Relaxed);
            }
        } else if new_size < old {
            LIVE_BYTES.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: CappedAllocator = CappedAllocator;

// ---------------------------------------------------------------- experiment and disk TOML

/// An experiment file: parse it and, when it names no file (a built-in disk, a synthetic
/// workload), build the disk, workload and simulation — every check short of running.
pub fn experiment_toml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(experiment) = Experiment::from_toml_str(&text, "fuzz.toml", Path::new(NO_SUCH_DIR))
    else {
        return;
    };
    // Files are fuzzed by their own targets; an absolute path here could name a device file.
    let names_a_file = experiment.disk.spec.is_some()
        || experiment.disk.disksim.is_some()
        || matches!(experiment.workload, WorkloadSpec::Trace(_));
    if !names_a_file {
        let _ = experiment.build(false);
    }
}

/// A disk spec: parse it, build the model, and time accesses at its first, middle and last
/// sectors (reads and writes, from cylinder 0).
pub fn disk_toml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(spec) = DiskSpec::from_toml_str(&text, "fuzz.toml") else {
        return;
    };
    exercise_disk(spec);
}

/// Builds a disk from `spec` and times a few accesses on it.
fn exercise_disk(spec: DiskSpec) {
    let Ok(disk) = Disk::new(spec) else {
        return;
    };
    let capacity = disk.capacity();
    let mut runs = Vec::new();
    for lbn in [0, capacity / 2, capacity.saturating_sub(1)] {
        for (op, sectors) in [(Op::Read, 1), (Op::Write, 8)] {
            let _ = disk.access(HeadState::default(), 0, lbn, sectors, op, &mut runs);
        }
    }
}

// ---------------------------------------------------------------- DiskSim parameter files

/// Separates the files of a `disksim` input: `.diskspecs`, `.model`, `.seek`, `.parv`, in that
/// order (missing parts are empty files).
pub const DISKSIM_PART_SEPARATOR: &[u8] = b"\n%%%%\n";

/// The names the `disksim` target gives its files; seed inputs refer to the model and seek file
/// by these names.
pub const DISKSIM_FILE_NAMES: [&str; 4] =
    ["fuzz.diskspecs", "fuzz.model", "fuzz.seek", "fuzz.parv"];

/// DiskSim files: the parameter language on the whole input, then the import of the
/// `.diskspecs` (with its `.model` and `.seek`) into a disk spec and a disk, then the bus times
/// of the `.parv`.
pub fn disksim_files(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let dir = scratch_dir();
    let _ = disksim::parse_str(&text, "fuzz.diskspecs", Path::new(NO_SUCH_DIR));

    let mut parts = split_bytes(data, DISKSIM_PART_SEPARATOR);
    for (name, part) in DISKSIM_FILE_NAMES
        .iter()
        .zip(parts.by_ref().chain(std::iter::repeat(&[][..])))
    {
        if std::fs::write(dir.join(name), part).is_err() {
            return;
        }
    }
    if let Ok(mut spec) = disksim::import(&dir.join(DISKSIM_FILE_NAMES[0])) {
        let _ = disksim::apply_system_config(&mut spec, &dir.join(DISKSIM_FILE_NAMES[3]));
        exercise_disk(spec);
    }
    let _ = disksim::bus_transfer_times(&dir.join(DISKSIM_FILE_NAMES[3]));
}

/// Splits `data` at every `separator`.
fn split_bytes<'a>(data: &'a [u8], separator: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
    let mut rest = Some(data);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.windows(separator.len()).position(|w| w == separator) {
            Some(i) => {
                rest = Some(&r[i + separator.len()..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

thread_local! {
    static SCRATCH: RefCell<Option<ScratchDir>> = const { RefCell::new(None) };
}

/// A folder of this thread's own for the files a target writes, removed when the thread ends.
struct ScratchDir(PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_dir() -> PathBuf {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let dir = s.get_or_insert_with(|| {
            let thread = format!("{:?}", std::thread::current().id());
            let name: String = thread.chars().filter(char::is_ascii_digit).collect();
            // Memory-backed where there is one: a write to a busy disk can take milliseconds.
            let shm = Path::new("/dev/shm");
            let base = if shm.is_dir() {
                shm.to_path_buf()
            } else {
                std::env::temp_dir()
            };
            ScratchDir(base.join(format!("freeblock-fuzz-{}-{name}", std::process::id())))
        });
        let _ = std::fs::create_dir_all(&dir.0);
        dir.0.clone()
    })
}

// ---------------------------------------------------------------- traces

pub fn trace_disksim(data: &[u8]) {
    trace(TraceFormat::Disksim, data);
}
pub fn trace_validate(data: &[u8]) {
    trace(TraceFormat::Validate, data);
}
pub fn trace_msr(data: &[u8]) {
    trace(TraceFormat::Msr, data);
}
pub fn trace_blkparse(data: &[u8]) {
    trace(TraceFormat::Blkparse, data);
}
pub fn trace_srt(data: &[u8]) {
    trace(TraceFormat::Srt, data);
}
pub fn trace_vscsi(data: &[u8]) {
    trace(TraceFormat::Vscsi, data);
}

/// Reads `data` as a trace of `format` three ways: as it is; onto a disk, with an address map,
/// a limit and a device filter chosen from a hash of the input (so the trace's own bytes stay a
/// valid trace for the mutator); and with the `scale` map over the span `scan_span` finds.
pub fn trace(format: TraceFormat, data: &[u8]) {
    let reader = || TraceReader::from_reader("fuzz.trace", Cursor::new(data.to_vec()), format);
    drain(reader(), None, None);

    let hash = fnv1a(data).to_le_bytes();
    let mut knobs = ByteSource::new(&hash);
    let capacity = [1, 7, 8, 1000, 17_938_986, u64::MAX][knobs.below(6) as usize];
    let align = [0, 1, 8, 4096, u64::MAX][knobs.below(5) as usize];
    let limit = [None, Some(0), Some(1), Some(3)][knobs.below(4) as usize];
    let mut r = reader()
        .with_capacity(capacity)
        .with_device(u32::from(knobs.byte() % 3));
    r = match knobs.below(3) {
        0 => r,
        1 => r.with_modulo_map(align),
        _ => r.with_scale_map(capacity.saturating_mul(u64::from(knobs.byte())), align),
    };
    if knobs.byte() % 2 == 1 {
        r = r.with_blkparse_action('Q');
    }
    if let Some(limit) = limit {
        r = r.with_limit(limit);
    }
    drain(r, Some(capacity), limit);

    if let Ok(span) = reader().scan_span() {
        drain(
            reader().with_capacity(capacity).with_scale_map(span, align),
            Some(capacity),
            None,
        );
    }
}

/// Reads a trace to its end or first error, checking the reader's promises.
fn drain(mut reader: TraceReader, capacity: Option<u64>, limit: Option<u64>) {
    let open = reader.arrival() == ArrivalKind::Open;
    let (mut count, mut last_time) = (0u64, 0);
    loop {
        match reader.next_request() {
            Ok(Some(r)) => {
                count += 1;
                if open {
                    assert!(
                        r.time >= last_time,
                        "open arrivals went back in time: {} after {last_time}",
                        r.time
                    );
                    last_time = r.time;
                }
                if let Some(capacity) = capacity {
                    let end = r.lbn.checked_add(u64::from(r.sectors));
                    assert!(
                        end.is_some_and(|e| e <= capacity),
                        "request {r:?} is past the capacity {capacity}"
                    );
                }
                assert!(r.sectors > 0, "request {r:?} has no sectors");
            }
            Ok(None) => break,
            Err(_) => {
                assert_eq!(
                    reader.next_request(),
                    Ok(None),
                    "a reader yields nothing after an error"
                );
                break;
            }
        }
    }
    if let Some(limit) = limit {
        assert!(count <= limit, "{count} requests past the limit {limit}");
    }
}

/// FNV-1a, 64-bit: a fixed hash (unlike std's, the same in every run and build).
fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

// ---------------------------------------------------------------- the engine

/// The engine: a small disk and a short experiment, every knob chosen by the input (see
/// [`engine_config`]), built and run to the end.
pub fn engine(data: &[u8]) {
    let (disk, experiment) = engine_config(data);
    let path = scratch_dir().join("engine-disk.toml");
    if std::fs::write(&path, disk).is_err() {
        return;
    }
    let experiment = experiment.replace("@DISK@", &toml_string(&path.display().to_string()));
    if let Ok(e) = Experiment::from_toml_str(&experiment, "engine.toml", Path::new(NO_SUCH_DIR)) {
        // A refused run is fine; a fault of the disk's buffer model is a bug the error only
        // keeps from being a wrong answer, so the fuzzer must see it.
        if let Err(error) = e.run(None) {
            let message = error.to_string();
            assert!(!message.contains("disk buffer model fault"), "{message}");
        }
    }
}

/// The disk spec and experiment (TOML; the experiment's `[disk] spec` is the placeholder
/// `@DISK@`) that the `engine` target runs for `data`.
///
/// The input is read a byte at a time, each byte choosing one knob; past the end every byte is 0
/// (the first choice of every knob). Most choices are sensible values for a small disk
/// (1–4 surfaces, up to 3 zones of up to 64 cylinders) and a short run (at most 64 requests); a
/// few are edge values (0, negative, NaN, infinite, huge) that must be refused or handled.
pub fn engine_config(data: &[u8]) -> (String, String) {
    let mut b = ByteSource::new(data);
    let disk = engine_disk(&mut b);
    let experiment = engine_experiment(&mut b);
    (disk, experiment)
}

/// What `input` means to `target`, for a failure message: the generated disk spec and
/// experiment for `engine`, nothing for the parsers (their input is the file itself).
pub fn explain(target: &str, input: &[u8]) -> String {
    if target == "engine" {
        let (disk, experiment) = engine_config(input);
        format!("\n--- disk spec ---\n{disk}--- experiment ---\n{experiment}")
    } else {
        String::new()
    }
}

fn engine_disk(b: &mut ByteSource) -> String {
    let mut t = String::from("name = \"fuzz\"\n");
    push(
        &mut t,
        "rpm",
        &b.float(&[5400.0, 7200.0, 10025.0, 15000.0, 3600.0]),
    );
    push(&mut t, "surfaces", &b.int(&[1, 2, 4, 3]));
    push(&mut t, "head_switch_ms", &b.float(&[0.5, 0.0, 0.176, 1.0]));
    push(&mut t, "write_settle_ms", &b.float(&[0.0, 0.487, 0.1]));
    push(&mut t, "read_settle_ms", &b.float(&[0.0, 0.2]));
    if b.flag() {
        push(&mut t, "mapping", "\"serpentine\"");
    }
    if b.flag() {
        t.push_str("block_count = ");
        t.push_str(&b.int(&[1000, 100, 1]));
        t.push('\n');
    }
    let sparing = [
        "\"none\"",
        "\"tracks\"",
        "\"sectors_per_cylinder\"",
        "\"sectors_per_track\"",
        "\"sectors_per_zone\"",
        "\"sectors_at_end\"",
    ];
    let scheme = sparing[b.below(sparing.len() as u32 + 1) as usize % sparing.len()];
    t.push_str(&format!("sparing = {{ scheme = {scheme} }}\n"));

    let zones = 1 + b.below(3);
    let mut first = 0u64;
    for _ in 0..zones {
        // 1 to 64 cylinders; 32 for the byte 0.
        let cylinders = 1 + (u64::from(b.byte()) + 31) % 64;
        t.push_str("[[zones]]\n");
        push(&mut t, "first_cylinder", &first.to_string());
        push(
            &mut t,
            "last_cylinder",
            &(first + cylinders - 1).to_string(),
        );
        first += cylinders;
        push(&mut t, "sectors_per_track", &b.int(&[64, 100, 17, 1, 333]));
        push(&mut t, "track_skew", &b.float(&[0.0, 10.0, 63.5]));
        push(&mut t, "cylinder_skew", &b.float(&[0.0, 20.0, 113.0]));
        push(&mut t, "first_sector_offset", &b.float(&[0.0, 3.0]));
        push(&mut t, "spares", &b.int(&[0, 1, 4]));
        if b.flag() {
            push(&mut t, "empty_front_sectors", &b.int(&[0, 5, 64]));
        }
        if b.flag() {
            t.push_str(&format!("slips = [{}]\n", b.int(&[0, 3, 100])));
        }
        if b.flag() {
            t.push_str(&format!(
                "defects = [[{}, {}]]\n",
                b.int(&[1, 10, 50]),
                b.int(&[0, 2, 60])
            ));
        }
    }

    t.push_str("[seek]\n");
    match b.below(3) {
        0 => {
            push(&mut t, "type", "\"three_point\"");
            push(&mut t, "single_ms", &b.float(&[1.0, 0.5, 2.0]));
            push(&mut t, "average_ms", &b.float(&[5.0, 3.0, 8.0]));
            push(&mut t, "full_ms", &b.float(&[11.0, 6.0, 20.0]));
        }
        1 => {
            push(&mut t, "type", "\"hpl\"");
            push(&mut t, "boundary", &b.float(&[100.0, 10.0, 1.0]));
            push(&mut t, "sqrt_a", &b.float(&[0.5, 0.1]));
            push(&mut t, "sqrt_b", &b.float(&[0.1, 0.05]));
            push(&mut t, "linear_a", &b.float(&[2.0, 1.0]));
            push(&mut t, "linear_b", &b.float(&[0.01, 0.005]));
        }
        _ => {
            push(&mut t, "type", "\"table\"");
            let (mut distance, mut ms) = (1.0, b.float_value(&[0.8, 1.0, 0.1]));
            let mut points = Vec::new();
            for _ in 0..1 + b.below(4) {
                points.push(format!("[{}, {}]", toml_float(distance), toml_float(ms)));
                distance *= b.float_value(&[4.0, 2.0, 10.0]);
                ms += b.float_value(&[1.0, 0.5, 3.0]);
            }
            t.push_str(&format!("points = [{}]\n", points.join(", ")));
        }
    }

    t.push_str("[controller]\n");
    push(&mut t, "read_miss_ms", &b.float(&[0.0, 0.1, 0.3]));
    push(&mut t, "write_miss_ms", &b.float(&[0.0, 0.1, 0.3]));
    push(&mut t, "bus_sector_ms", &b.float(&[0.0, 0.01, 0.1]));
    push(&mut t, "write_back", &b.flag().to_string());

    t.push_str("[cache]\n");
    push(&mut t, "enabled", &b.flag().to_string());
    push(&mut t, "segments", &b.int(&[1, 2, 8]));
    push(&mut t, "segment_sectors", &b.int(&[256, 64, 8, 1]));
    push(&mut t, "read_ahead_sectors", &b.int(&[0, 64, 8]));
    let read_ahead = [
        "\"sectors\"",
        "\"none\"",
        "\"track_end\"",
        "\"cylinder_end\"",
        "\"dec\"",
    ];
    push(&mut t, "read_ahead", read_ahead[b.below(5) as usize]);
    push(&mut t, "zero_latency_reads", &b.flag().to_string());
    push(&mut t, "zero_latency_writes", &b.flag().to_string());
    push(&mut t, "separate_write_segment", &b.flag().to_string());
    push(&mut t, "read_ahead_on_hit", &b.flag().to_string());
    t
}

fn engine_experiment(b: &mut ByteSource) -> String {
    let mut t = format!("seed = {}\n[disk]\nspec = @DISK@\n", b.byte());
    push(&mut t, "zero_latency", &b.flag().to_string());
    match b.below(3) {
        0 => {}
        1 => push(&mut t, "cache", "true"),
        _ => push(&mut t, "cache", "false"),
    }

    t.push_str("[workload]\n");
    let count = (1 + b.below(64)).to_string();
    let kind = b.below(4);
    push(
        &mut t,
        "type",
        ["\"random\"", "\"sequential\"", "\"oltp\"", "\"locality\""][kind as usize],
    );
    push(&mut t, "count", &count);
    push(&mut t, "read_fraction", &b.float(&[0.5, 1.0, 0.0, 0.6667]));
    if kind == 1 {
        push(&mut t, "start_lbn", &b.int(&[0, 100, 5000]));
        push(&mut t, "request_sectors", &b.int(&[8, 1, 64]));
        if b.flag() {
            push(&mut t, "stride_sectors", &b.int(&[16, 8, 1000]));
        }
    } else {
        if b.flag() {
            push(
                &mut t,
                "size",
                &format!("{{ type = \"fixed\", sectors = {} }}", b.int(&[8, 1, 64])),
            );
        } else {
            push(
                &mut t,
                "size",
                &format!(
                    "{{ type = \"exponential\", mean_sectors = {}, multiple_sectors = {} }}",
                    b.float(&[16.0, 4.0, 100.0]),
                    b.int(&[8, 1, 2])
                ),
            );
        }
        push(&mut t, "alignment_sectors", &b.int(&[1, 8, 64]));
    }
    match kind {
        // No valid huge think time: years of think time with an endless idle-time scan is a
        // valid request for a run that scans for years (finding fe3171a7, closed as by design).
        2 => push(&mut t, "think_time_ms", &b.float_refused_if_huge(&[30.0, 0.0, 1.0])),
        3 => push(&mut t, "local_fraction", &b.float(&[0.5, 0.0, 1.0])),
        _ => {}
    }
    if kind != 2 && b.flag() {
        push(&mut t, "rate_per_s", &b.float(&[100.0, 1000.0, 1.0]));
    }

    t.push_str("[sim]\n");
    let scheduler = match b.below(5) {
        0 => "{ type = \"fcfs\" }".to_owned(),
        1 => "{ type = \"clook\" }".to_owned(),
        2 => "{ type = \"sstf\" }".to_owned(),
        3 => "{ type = \"sptf\" }".to_owned(),
        _ => format!(
            "{{ type = \"sptf_sw\", window_pct = {} }}",
            b.float(&[40.0, 0.0, 100.0])
        ),
    };
    push(&mut t, "scheduler", &scheduler);
    push(&mut t, "mpl", &b.int(&[1, 4, 16, 2]));
    push(&mut t, "queue_depth", &b.int(&[0, 1, 4]));
    push(&mut t, "warmup", &b.int(&[0, 1, 10]));
    push(&mut t, "max_requests", &b.int(&[0, 1, 10, 64]));
    push(&mut t, "max_time_s", &b.float(&[0.0, 0.01, 1.0]));
    push(&mut t, "keep_records", &b.flag().to_string());

    if b.flag() {
        t.push_str("[freeblock]\n");
        push(
            &mut t,
            "planner",
            ["\"two_track\"", "\"single_track\"", "\"multi_track\""][b.below(3) as usize],
        );
        push(&mut t, "piggyback", &b.flag().to_string());
        push(&mut t, "max_tracks", &b.int(&[100, 0, 1]));
        push(&mut t, "batch_blocks", &b.int(&[4096, 1, 16]));
        if b.flag() {
            push(&mut t, "idle_after_ms", &b.float(&[1.0, 0.0, 10.0]));
        }
        for _ in 0..b.below(3) {
            t.push_str("[[freeblock.tasks]]\ntype = \"scan\"\n");
            push(&mut t, "block_bytes", &b.int(&[4096, 512, 65536, 1024]));
            // No edge values: a billion passes is a valid request for a run without end.
            push(&mut t, "passes", ["1", "0", "2", "3"][b.below(4) as usize]);
            push(&mut t, "fraction", &b.float(&[1.0, 0.5, 0.01]));
            if b.flag() {
                push(&mut t, "first_lbn", &b.int(&[0, 64, 4096]));
                push(&mut t, "blocks", &b.int(&[1, 10, 1000]));
            }
            if b.flag() {
                push(&mut t, "next_pass_at", &b.float(&[0.5, 0.0, 0.9]));
                push(&mut t, "passes_in_flight", &b.int(&[2, 3]));
            }
        }
    }
    t
}

fn push(t: &mut String, key: &str, value: &str) {
    t.push_str(key);
    t.push_str(" = ");
    t.push_str(value);
    t.push('\n');
}

/// A TOML basic string holding `s`.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML float literal (TOML spells the special values `nan`, `inf`, `-inf`).
fn toml_float(v: f64) -> String {
    if v.is_nan() {
        "nan".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{v:?}")
    }
}

/// Edge values every float knob may take instead of a sensible one.
const EDGE_FLOATS: [f64; 8] = [
    0.0,
    -1.0,
    f64::NAN,
    f64::INFINITY,
    1e308,
    1e-300,
    1e12,
    -0.0,
];
/// Edge values every integer knob may take instead of a sensible one.
const EDGE_INTS: [u64; 6] = [
    0,
    1,
    u32::MAX as u64,
    i64::MAX as u64,
    1 << 40,
    1_000_000_000,
];

/// Reads knobs from fuzz input, one byte each; past the end every byte is 0.
pub struct ByteSource<'a> {
    data: &'a [u8],
}

impl<'a> ByteSource<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// A number below `n` (at least 1).
    pub fn below(&mut self, n: u32) -> u32 {
        u32::from(self.byte()) % n.max(1)
    }

    pub fn flag(&mut self) -> bool {
        self.byte() % 2 == 1
    }

    /// One of `sensible` most of the time (bytes 0–239), else an edge value: 1 in 16.
    fn choice(&mut self, sensible: usize, edges: usize) -> Result<usize, usize> {
        let b = usize::from(self.byte());
        if b < 240 {
            Ok(b % sensible)
        } else {
            Err((b - 240) % edges)
        }
    }

    pub fn float_value(&mut self, sensible: &[f64]) -> f64 {
        match self.choice(sensible.len(), EDGE_FLOATS.len()) {
            Ok(i) => sensible[i],
            Err(i) => EDGE_FLOATS[i],
        }
    }

    /// A float knob as a TOML literal, whose huge edge value is one the field refuses (1e308)
    /// rather than a valid long time (1e12): for times that make a run simulate for that long.
    pub fn float_refused_if_huge(&mut self, sensible: &[f64]) -> String {
        let v = self.float_value(sensible);
        toml_float(if v == 1e12 { 1e308 } else { v })
    }

    /// A float knob as a TOML literal.
    pub fn float(&mut self, sensible: &[f64]) -> String {
        toml_float(self.float_value(sensible))
    }

    /// An integer knob as a TOML literal (edge values include ones too large for the field).
    pub fn int(&mut self, sensible: &[u64]) -> String {
        match self.choice(sensible.len(), EDGE_INTS.len()) {
            Ok(i) => sensible[i].to_string(),
            Err(i) => EDGE_INTS[i].to_string(),
        }
    }
}

// ---------------------------------------------------------------- seed inputs

/// The longest seed, bytes: a multiple of both VSCSI record lengths (32 and 40); text seeds are
/// cut back further, to their last whole line.
pub const MAX_SEED_BYTES: usize = 60 * 1024;

/// The seed inputs of `target`, named: those `fuzz/seeds.txt` lists (read from `repo_root`,
/// skipping missing paths) and those [`generated_seeds`] makes.
///
/// # Errors
/// A line of `seeds.txt` that does not parse, or a listed file that exists but cannot be read.
pub fn seed_inputs(repo_root: &Path, target: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    let list_path = repo_root.join("fuzz/seeds.txt");
    let list =
        std::fs::read_to_string(&list_path).map_err(|e| format!("{}: {e}", list_path.display()))?;
    let mut seeds = Vec::new();
    for (i, line) in list.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, paths)) = line.split_once(' ') else {
            return Err(format!(
                "{}:{}: expected `target path`",
                list_path.display(),
                i + 1
            ));
        };
        if !TARGETS.iter().any(|(t, _)| *t == name) {
            return Err(format!(
                "{}:{}: unknown target `{name}`",
                list_path.display(),
                i + 1
            ));
        }
        if name != target {
            continue;
        }
        let paths = paths.trim();
        if name == "disksim" {
            if let Some(seed) = disksim_seed(repo_root, paths)? {
                seeds.push((paths.to_owned(), seed));
            }
            continue;
        }
        // `folder/*.ext`: the files of the folder whose names end in `.ext`.
        let (path, suffix) = match paths.rsplit_once("/*") {
            Some((folder, suffix)) => (repo_root.join(folder), Some(suffix)),
            None => (repo_root.join(paths), None),
        };
        let files = if path.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .filter(|p| suffix.is_none_or(|s| p.to_string_lossy().ends_with(s)))
                .collect();
            files.sort();
            files
        } else if path.is_file() {
            vec![path]
        } else {
            Vec::new()
        };
        for file in files {
            let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            seeds.push((file.display().to_string(), cut_seed(bytes)));
        }
    }
    seeds.extend(generated_seeds(target));
    Ok(seeds)
}

/// Cuts a seed to [`MAX_SEED_BYTES`], text to its last whole line.
fn cut_seed(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() > MAX_SEED_BYTES {
        bytes.truncate(MAX_SEED_BYTES);
        if !bytes.contains(&0) {
            if let Some(end) = bytes.iter().rposition(|&b| b == b'\n') {
                bytes.truncate(end + 1);
            }
        }
    }
    bytes
}

/// A `disksim` seed from `a.diskspecs+b.model+c.seek+d.parv` (empty or missing parts are empty
/// files), with the model and seek file names renamed to the target's; `None` if the
/// `.diskspecs` is missing.
fn disksim_seed(repo_root: &Path, joined: &str) -> Result<Option<Vec<u8>>, String> {
    let paths: Vec<&str> = joined.split('+').collect();
    let mut parts = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        if p.is_empty() {
            parts.push(String::new());
            continue;
        }
        let path = repo_root.join(p);
        if !path.is_file() {
            if i == 0 {
                return Ok(None);
            }
            parts.push(String::new());
            continue;
        }
        parts.push(std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    for (i, p) in paths.iter().enumerate().skip(1).take(2) {
        if let Some(original) = Path::new(p).file_name().and_then(|n| n.to_str()) {
            for part in &mut parts {
                *part = part.replace(original, DISKSIM_FILE_NAMES[i]);
            }
        }
    }
    Ok(Some(
        parts
            .join(std::str::from_utf8(DISKSIM_PART_SEPARATOR).unwrap_or("\n"))
            .into_bytes(),
    ))
}

/// Seeds made in code: binary trace records (no sample files ship), and engine knob bytes.
pub fn generated_seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    use freeblock::workload::trace::{srt, vscsi};
    match target {
        "trace_srt" => (1..=4)
            .map(|version| {
                let bytes = (0..8u32)
                    .flat_map(|i| {
                        srt::encode_record(&srt::SrtRecord {
                            version,
                            suspect: i == 5,
                            seconds: 100 + i * 250_000 / 1_000_000,
                            micros: i * 250_000 % 1_000_000,
                            sector: 1000 * i,
                            bytes: 4096 * (1 + i % 3),
                            device: i % 2,
                            flags: i % 2,
                            ..Default::default()
                        })
                    })
                    .collect();
                (format!("generated srt version {version}"), bytes)
            })
            .collect(),
        "trace_vscsi" => [vscsi::VscsiVersion::V1, vscsi::VscsiVersion::V2]
            .into_iter()
            .map(|version| {
                let bytes = (0..8u32)
                    .flat_map(|i| {
                        let record = vscsi::VscsiRecord {
                            serial: i,
                            length: 4096 * (1 + i % 3),
                            sg_entries: 1,
                            command: [0x28, 0x2A, 0x00, 0x88, 0x8A, 0x08, 0x0A, 0x12][i as usize],
                            lba: 8 * u64::from(i),
                            timestamp_us: 5_000_000 + 100 * u64::from(i),
                            response_us: 50,
                        };
                        vscsi::encode_record(&record, version)
                    })
                    .collect();
                (format!("generated vscsi {version:?}"), bytes)
            })
            .collect(),
        "engine" => {
            let ramp: Vec<u8> = (0..=255).collect();
            vec![
                ("generated engine zeros".to_owned(), Vec::new()),
                ("generated engine ones".to_owned(), vec![1; 128]),
                ("generated engine twos".to_owned(), vec![2; 128]),
                ("generated engine ramp".to_owned(), ramp),
            ]
        }
        _ => Vec::new(),
    }
}
