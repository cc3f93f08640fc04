//! Binary trace readers (HP Labs SRT, CloudPhysics VSCSI), address maps, and the `days`
//! workload's spec: real-trace counts, record-exact errors, maps that fit a large volume onto a
//! small disk, and field-naming validation.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use freeblock::workload::trace::srt::{self, SrtRecord};
use freeblock::workload::trace::vscsi::{self, VscsiRecord, VscsiVersion};
use freeblock::workload::{
    collect_requests, AddressMap, ArrivalKind, DaysSpec, Request, TraceFormat, TraceReader,
    TraceSpec, Workload, WorkloadError, WorkloadSpec,
};
use freeblock_disk::{library, Disk, Op};
use proptest::prelude::*;

/// Quantum Atlas 10K capacity, sectors (about 9.1 GB).
const ATLAS_CAPACITY: u64 = 17_938_986;

/// The shared real traces, beside the repository (`../shared/traces` from its root).
fn shared_trace(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!(
            "note: skipping, the shared trace {} is absent",
            path.display()
        );
        None
    }
}

fn reader(format: TraceFormat, origin: &str, bytes: Vec<u8>) -> TraceReader {
    TraceReader::from_reader(origin, Cursor::new(bytes), format)
}

fn err_of(mut w: impl Workload) -> WorkloadError {
    loop {
        match w.next_request() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("expected an error"),
            Err(e) => {
                assert_eq!(
                    w.next_request(),
                    Ok(None),
                    "a workload stops after an error"
                );
                return e;
            }
        }
    }
}

fn record_err(e: &WorkloadError) -> (u64, u64, String) {
    match e {
        WorkloadError::Record {
            record,
            offset,
            message,
            ..
        } => (*record, *offset, message.clone()),
        other => panic!("expected a record error, got {other:?}"),
    }
}

/// A file in the temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> Self {
        let path = std::env::temp_dir().join(format!(
            "freeblock-traces-binary-{}-{name}",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

// ---------------------------------------------------------------- VSCSI: the real trace

#[test]
fn cloudphysics_vscsi_counts_and_span() {
    let Some(path) = shared_trace("cloudPhysicsIO.vscsi") else {
        return;
    };
    let mut t = TraceReader::open(&path, TraceFormat::Vscsi).unwrap();
    assert_eq!(t.arrival(), ArrivalKind::Open);
    let (mut n, mut writes, mut last, mut max_end, mut min_lbn) = (0u64, 0u64, 0, 0, u64::MAX);
    let mut bytes = 0u64;
    while let Some(r) = t.next_request().unwrap() {
        n += 1;
        writes += u64::from(r.op == Op::Write);
        last = r.time;
        max_end = max_end.max(r.end());
        min_lbn = min_lbn.min(r.lbn);
        bytes += u64::from(r.sectors) * 512;
    }
    assert_eq!(n, 113_872);
    assert_eq!(writes, 66_898);
    assert_eq!(n - writes, 46_974);
    // 7200.09 s from the first record to the last.
    assert!(
        (7_200.0e9..7_200.2e9).contains(&(last as f64)),
        "span {last} ns"
    );
    assert_eq!(min_lbn, 15_943);
    assert!(
        (65_595_455..65_595_455 + 136).contains(&(max_end - 1)),
        "{max_end}"
    );
    // Mean size 36.9 KB.
    let mean_kb = bytes as f64 / n as f64 / 1024.0;
    assert!((36.0..37.5).contains(&mean_kb), "{mean_kb}");
}

#[test]
fn cloudphysics_vscsi_matches_its_csv() {
    let (Some(bin), Some(csv)) = (
        shared_trace("cloudPhysicsIO.vscsi"),
        shared_trace("cloudPhysicsIO.csv"),
    ) else {
        return;
    };
    // The CSV has absolute whole seconds; the reader's times are relative to the first record.
    let raw = std::fs::read(&bin).unwrap();
    let first_us = u64::from_le_bytes(raw[24..32].try_into().unwrap());
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut t = TraceReader::open(&bin, TraceFormat::Vscsi).unwrap();
    let mut checked = 0;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 5, "{line}");
        let r = t
            .next_request()
            .unwrap()
            .expect("the binary has as many requests");
        let seconds: u64 = f[1].parse().unwrap();
        let op = match f[2] {
            "28" => Op::Read,
            "2a" => Op::Write,
            other => panic!("op {other}"),
        };
        let size: u32 = f[3].parse().unwrap();
        let lbn: u64 = f[4].parse().unwrap();
        assert_eq!(
            (first_us + r.time / 1_000) / 1_000_000,
            seconds,
            "time of CSV row {}",
            checked + 1
        );
        assert_eq!(
            (r.op, r.sectors, r.lbn),
            (op, size.div_ceil(512), lbn),
            "row {}",
            checked + 1
        );
        checked += 1;
    }
    assert_eq!(checked, 113_872);
    assert_eq!(t.next_request().unwrap(), None);
}

#[test]
fn cloudphysics_volume_maps_onto_small_and_large_disks() {
    let Some(path) = shared_trace("cloudPhysicsIO.vscsi") else {
        return;
    };
    let path = path.to_str().unwrap().replace('\\', "/");
    // Unmapped, the 33.6 GB volume does not fit a 9.1 GB Atlas 10K: an error naming the record.
    let none: WorkloadSpec = toml::from_str(&format!(
        "type = \"trace\"\npath = \"{path}\"\nformat = \"vscsi\""
    ))
    .unwrap();
    assert_eq!(none.arrival(), ArrivalKind::Open);
    let e = err_of(none.build(ATLAS_CAPACITY, 0).unwrap());
    let (record, offset, message) = record_err(&e);
    assert_eq!(offset, (record - 1) * 32);
    assert!(
        message.contains("past the disk capacity of 17938986 sectors"),
        "{e}"
    );
    assert!(
        e.to_string().contains("cloudPhysicsIO.vscsi:record "),
        "{e}"
    );

    // Scaled and modulo: every request fits, none is lost, block offsets are kept.
    let plain =
        collect_requests(&mut TraceReader::open(&path, TraceFormat::Vscsi).unwrap()).unwrap();
    for map in ["scale", "modulo"] {
        let s: WorkloadSpec = toml::from_str(&format!(
            "type = \"trace\"\npath = \"{path}\"\nformat = \"vscsi\"\nmap = \"{map}\""
        ))
        .unwrap();
        let mapped = collect_requests(&mut *s.build(ATLAS_CAPACITY, 0).unwrap()).unwrap();
        assert_eq!(mapped.len(), 113_872, "{map}");
        for (a, b) in plain.iter().zip(&mapped) {
            assert!(b.end() <= ATLAS_CAPACITY, "{map}: {b:?}");
            assert_eq!((a.time, a.sectors, a.op), (b.time, b.sectors, b.op));
            if b.end() < ATLAS_CAPACITY {
                assert_eq!(a.lbn % 8, b.lbn % 8, "{map}: offset within the 4 KB block");
            }
        }
        if map == "scale" {
            // Order along the volume is kept, and the whole disk is used.
            let lowest = (0..plain.len()).min_by_key(|&i| plain[i].lbn).unwrap();
            let highest = (0..plain.len()).max_by_key(|&i| plain[i].lbn).unwrap();
            assert!(mapped[lowest].lbn < mapped[highest].lbn);
            assert!(mapped[lowest].lbn < ATLAS_CAPACITY / 100);
            assert!(mapped[highest].end() > ATLAS_CAPACITY * 99 / 100);
        }
    }

    // A library disk larger than the volume takes it unmapped.
    let big = library::names()
        .into_iter()
        .filter_map(|n| Disk::new(library::get(n).ok()?).ok())
        .map(|d| d.capacity())
        .max()
        .unwrap();
    if big >= 65_595_455 + 136 {
        let n = collect_requests(&mut *none.build(big, 0).unwrap())
            .unwrap()
            .len();
        assert_eq!(n, 113_872);
    }
}

// ---------------------------------------------------------------- VSCSI: synthetic records

fn vrec(command: u16, length: u32, lba: u64, ts: u64) -> VscsiRecord {
    VscsiRecord {
        serial: 1,
        length,
        sg_entries: 1,
        command,
        lba,
        timestamp_us: ts,
        response_us: 90,
    }
}

fn vfile(version: VscsiVersion, records: &[VscsiRecord]) -> Vec<u8> {
    records
        .iter()
        .flat_map(|r| vscsi::encode_record(r, version))
        .collect()
}

#[test]
fn vscsi_versions_1_and_2_read_alike() {
    let records = [
        vrec(0x12, 0, 0, 5_000),            // INQUIRY: skipped, but the time origin
        vrec(0x28, 4096, 800, 5_250),       // READ(10)
        vrec(0x0A, 512, 7, 5_250),          // WRITE(6)
        vrec(0x88, 65_536, 1 << 33, 6_000), // READ(16), a 64-bit LBA
        vrec(0xAA, 1000, 64, 9_000),        // WRITE(12), not a sector multiple
        vrec(0x00, 0, 0, 9_500),            // TEST UNIT READY: skipped
    ];
    let want = vec![
        Request::new(250_000, 800, 8, Op::Read),
        Request::new(250_000, 7, 1, Op::Write),
        Request::new(1_000_000, 1 << 33, 128, Op::Read),
        Request::new(4_000_000, 64, 2, Op::Write),
    ];
    for v in [VscsiVersion::V1, VscsiVersion::V2] {
        let mut t = reader(TraceFormat::Vscsi, "t.vscsi", vfile(v, &records));
        assert_eq!(collect_requests(&mut t).unwrap(), want, "{v:?}");
    }
}

#[test]
fn vscsi_malformed_records_name_file_record_and_offset() {
    let good = vrec(0x28, 4096, 8, 100);
    // Unknown version in the first record.
    let mut bytes = vfile(VscsiVersion::V1, &[good]);
    bytes[15] = 3;
    let e = err_of(reader(TraceFormat::Vscsi, "a.vscsi", bytes));
    assert_eq!(record_err(&e).0, 1);
    assert!(
        e.to_string()
            .starts_with("a.vscsi:record 1 (byte offset 0): unknown VSCSI version"),
        "{e}"
    );

    // A version 2 record in a version 1 file.
    let mut bytes = vfile(VscsiVersion::V1, &[good, good]);
    bytes.extend(vscsi::encode_record(&good, VscsiVersion::V2));
    let e = err_of(reader(TraceFormat::Vscsi, "b.vscsi", bytes));
    assert_eq!(record_err(&e).0, 3);
    assert!(
        e.to_string()
            .starts_with("b.vscsi:record 3 (byte offset 64): version byte"),
        "{e}"
    );

    // Truncated last record.
    let mut bytes = vfile(VscsiVersion::V2, &[good, good]);
    bytes.extend_from_slice(&vscsi::encode_record(&good, VscsiVersion::V2)[..21]);
    let e = err_of(reader(TraceFormat::Vscsi, "c.vscsi", bytes));
    assert_eq!(
        e.to_string(),
        "c.vscsi:record 3 (byte offset 80): truncated record: 21 of 40 bytes before the end of the file"
    );
    // … also when even the head is cut.
    let mut bytes = vfile(VscsiVersion::V1, &[good]);
    bytes.extend_from_slice(&[1, 2, 3]);
    let e = err_of(reader(TraceFormat::Vscsi, "d.vscsi", bytes));
    assert_eq!(
        e.to_string(),
        "d.vscsi:record 2 (byte offset 32): truncated record: only 3 bytes before the end of the file (a record is at least 16)"
    );

    // A read of length 0.
    let bytes = vfile(VscsiVersion::V1, &[good, vrec(0x28, 0, 8, 200)]);
    let e = err_of(reader(TraceFormat::Vscsi, "e.vscsi", bytes));
    assert!(
        e.to_string()
            .starts_with("e.vscsi:record 2 (byte offset 32): SCSI command 0x28 has length 0"),
        "{e}"
    );

    // Time going back before the first record, and before the previous request.
    let bytes = vfile(VscsiVersion::V1, &[good, vrec(0x2A, 512, 8, 99)]);
    let e = err_of(reader(TraceFormat::Vscsi, "f.vscsi", bytes));
    assert!(
        e.to_string()
            .contains("record 2 (byte offset 32): timestamp 99 µs is before"),
        "{e}"
    );
    let bytes = vfile(
        VscsiVersion::V1,
        &[good, vrec(0x2A, 512, 8, 300), vrec(0x2A, 512, 8, 200)],
    );
    let e = err_of(reader(TraceFormat::Vscsi, "g.vscsi", bytes));
    assert!(
        e.to_string()
            .contains("record 3 (byte offset 64): arrival at"),
        "{e}"
    );

    // An empty file has no requests.
    assert_eq!(
        collect_requests(&mut reader(TraceFormat::Vscsi, "h", vec![])),
        Ok(vec![])
    );
}

// ---------------------------------------------------------------- SRT

const HEADER: &[u8] = b"tracename\t= \"cello\";\ntracedate\t= \"Sun Apr 12 00:00:00 1992\";\n\x0C";

fn srt_file(header: bool, records: &[SrtRecord]) -> Vec<u8> {
    let mut out = if header { HEADER.to_vec() } else { Vec::new() };
    for r in records {
        out.extend(srt::encode_record(r));
    }
    out
}

fn io(seconds: u32, micros: u32, sector: u32, bytes: u32, disk: u32, read: bool) -> SrtRecord {
    SrtRecord {
        seconds,
        micros,
        start: 1_000,
        stop: 13_500,
        bytes,
        sector,
        device: disk << 8,
        flags: if read { srt::FLAG_READ } else { 0x0100_0000 },
        ..SrtRecord::default()
    }
}

#[test]
fn srt_reads_records_with_and_without_a_header() {
    let records = [
        io(0, 500, 1000, 8192, 6, true),
        SrtRecord {
            suspect: true,
            ..io(1, 0, 5, 512, 6, true)
        },
        SrtRecord {
            version: 4,
            queue_len: 3,
            ..io(2, 250, 20_000, 1024, 5, false)
        },
        SrtRecord {
            version: 4,
            suspect: true,
            ..io(2, 300, 1, 512, 6, false)
        },
        io(3, 999_999, 64, 4096, 6, false),
    ];
    let mut expected = vec![
        Request::new(500_000, 1000, 16, Op::Read),
        Request::new(2_000_250_000, 20_000, 2, Op::Write),
        Request::new(3_999_999_000, 64, 8, Op::Write),
    ];
    for r in &mut expected {
        r.measured = Some(12_500_000);
    }
    for header in [true, false] {
        let mut t = reader(TraceFormat::Srt, "cello.srt", srt_file(header, &records));
        assert_eq!(t.arrival(), ArrivalKind::Open);
        assert_eq!(
            collect_requests(&mut t).unwrap(),
            expected,
            "header {header}"
        );
        // The disk number (device bits 8–15) filters.
        let mut t =
            reader(TraceFormat::Srt, "cello.srt", srt_file(header, &records)).with_device(6);
        let kept = collect_requests(&mut t).unwrap();
        assert_eq!(
            kept.iter().map(|r| r.lbn).collect::<Vec<_>>(),
            vec![1000, 64]
        );
    }
    // `hpl` names the same format.
    assert_eq!("hpl".parse::<TraceFormat>(), Ok(TraceFormat::Srt));
    assert!(TraceFormat::Srt.has_device() && !TraceFormat::Vscsi.has_device());
}

#[test]
fn srt_malformed_records_name_file_record_and_offset() {
    let h = HEADER.len() as u64;
    let good = io(0, 0, 8, 4096, 1, true);
    let bad = |mutate: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = srt_file(true, &[good, good]);
        mutate(&mut bytes);
        err_of(reader(TraceFormat::Srt, "s.srt", bytes))
    };
    let second = HEADER.len() + 52;
    // A size word that disagrees with the id.
    let e = bad(&|b| b[second + 3] = 56);
    assert_eq!(record_err(&e).0, 2);
    assert!(
        e.to_string().starts_with(&format!(
            "s.srt:record 2 (byte offset {}): record size word says 56 bytes",
            h + 52
        )),
        "{e}"
    );
    // A version outside 1–4, a type that is not an I/O.
    let e = bad(&|b| b[second + 5] = 9);
    assert!(
        e.to_string()
            .contains("version 9 (high 16 bits) is not 1 to 4"),
        "{e}"
    );
    let e = bad(&|b| b[second + 7] = 2);
    assert!(
        e.to_string().contains("type 2 (low 16 bits) is not an I/O"),
        "{e}"
    );
    // Transfer sizes of 0 and of a partial sector.
    let e = bad(&|b| b[second + 24..second + 28].copy_from_slice(&0u32.to_be_bytes()));
    assert!(e.to_string().contains("transfer size is 0 bytes"), "{e}");
    let e = bad(&|b| b[second + 24..second + 28].copy_from_slice(&700u32.to_be_bytes()));
    assert!(
        e.to_string().contains("700 bytes is not a multiple of 512"),
        "{e}"
    );
    // Truncated last record.
    let e = bad(&|b| b.truncate(second + 30));
    assert_eq!(
        e.to_string(),
        format!("s.srt:record 2 (byte offset {}): truncated record: 30 of 52 bytes before the end of the file", h + 52)
    );
    // A header without its form feed.
    let e = err_of(reader(
        TraceFormat::Srt,
        "n.srt",
        b"tracedate = \"x\";\nno end".to_vec(),
    ));
    assert!(
        e.to_string()
            .starts_with("n.srt:record 1 (byte offset 0): the file ends inside the text header"),
        "{e}"
    );
    // Past the disk: the record is named.
    let e = err_of(
        reader(
            TraceFormat::Srt,
            "s.srt",
            srt_file(true, &[good, io(1, 0, 100, 4096, 1, true)]),
        )
        .with_capacity(104),
    );
    assert_eq!(record_err(&e).0, 2);
    assert!(
        e.to_string()
            .contains("ends at 108, past the disk capacity of 104 sectors"),
        "{e}"
    );
}

// ---------------------------------------------------------------- address maps

fn vscsi_at(lbas: &[(u64, u32)]) -> Vec<u8> {
    let recs: Vec<VscsiRecord> = lbas
        .iter()
        .enumerate()
        .map(|(i, &(lba, len))| vrec(0x28, len, lba, i as u64))
        .collect();
    vfile(VscsiVersion::V1, &recs)
}

#[test]
fn modulo_and_scale_maps_keep_block_offsets_and_fit() {
    let lbas = [
        (0, 4096),
        (3, 512),
        (1000, 4096),
        (1003, 1024),
        (4095, 512),
        (4088, 8192),
    ];
    // Modulo onto 1000 sectors in 8-sector blocks: 125 blocks.
    let mut t = reader(TraceFormat::Vscsi, "m", vscsi_at(&lbas))
        .with_capacity(1000)
        .with_modulo_map(8);
    let got: Vec<u64> = collect_requests(&mut t)
        .unwrap()
        .iter()
        .map(|r| r.lbn)
        .collect();
    // 1000 = block 125 → 0; 4095 = block 511 (511 mod 125 = 11) + 7 → 95; 4088 → 88.
    assert_eq!(got, vec![0, 3, 0, 3, 95, 88]);
    // Scale a 4096-sector span onto 1024 sectors: block b → b / 4.
    let mut t = reader(TraceFormat::Vscsi, "s", vscsi_at(&lbas))
        .with_capacity(1024)
        .with_scale_map(4096, 8);
    let got: Vec<u64> = collect_requests(&mut t)
        .unwrap()
        .iter()
        .map(|r| r.lbn)
        .collect();
    // 1000 = block 125 → 31 → 248; 1003 → 251; 4095 = block 511 → 127 → 1016 + 7 = 1023;
    // 4088 (16 sectors) → 1016, moved back to end on the last sector: 1008.
    assert_eq!(got, vec![0, 3, 248, 251, 1023, 1008]);
    // An address past the given span is an error naming the record.
    let t = reader(TraceFormat::Vscsi, "s", vscsi_at(&lbas))
        .with_capacity(1024)
        .with_scale_map(2048, 8);
    let e = err_of(t);
    assert!(
        e.to_string().starts_with(
            "s:record 5 (byte offset 128): LBN 4095 is past the mapped span of 2048 sectors"
        ),
        "{e}"
    );
    // Text traces map too.
    let text = "0.0 0 5000 8 1\n1.0 0 5003 1 0\n";
    let mut t = TraceReader::from_reader("d.trace", text.as_bytes(), TraceFormat::Disksim)
        .with_capacity(1000)
        .with_modulo_map(8);
    let got: Vec<u64> = collect_requests(&mut t)
        .unwrap()
        .iter()
        .map(|r| r.lbn)
        .collect();
    assert_eq!(got, vec![0, 3]);
}

#[test]
fn trace_spec_map_from_toml_and_scanned_span() {
    let f = TempFile::new(
        "span.vscsi",
        &vscsi_at(&[(0, 4096), (8000, 4096), (16_376, 4096)]),
    );
    let path = f.0.to_str().unwrap().replace('\\', "/");
    let s: WorkloadSpec = toml::from_str(&format!(
        "type = \"trace\"\npath = \"{path}\"\nformat = \"vscsi\"\nmap = \"scale\"\nalign_sectors = 8"
    ))
    .unwrap();
    // The span is scanned: 16 384 sectors onto 4096 → a factor of 4.
    let got: Vec<u64> = collect_requests(&mut *s.build(4096, 0).unwrap())
        .unwrap()
        .iter()
        .map(|r| r.lbn)
        .collect();
    assert_eq!(got, vec![0, 2000, 4088]);
    // An explicit span.
    let mut t = TraceSpec {
        map: AddressMap::Scale,
        span_sectors: Some(32_768),
        ..TraceSpec::new(&f.0, TraceFormat::Vscsi)
    }
    .open(4096)
    .unwrap();
    let got: Vec<u64> = collect_requests(&mut t)
        .unwrap()
        .iter()
        .map(|r| r.lbn)
        .collect();
    assert_eq!(got, vec![0, 1000, 2040]);
    // Serialization keeps the map and omits it when none.
    let text = toml::to_string(&s).unwrap();
    assert!(text.contains("map = \"scale\""), "{text}");
    let plain =
        toml::to_string(&WorkloadSpec::Trace(TraceSpec::new("x", TraceFormat::Srt))).unwrap();
    assert!(!plain.contains("map"), "{plain}");
    assert!(plain.contains("format = \"srt\""), "{plain}");
}

#[test]
fn trace_spec_map_options_are_validated() {
    let cases: [(&str, &str); 6] = [
        ("span_sectors = 100", "span_sectors"),
        ("align_sectors = 8", "align_sectors"),
        ("map = \"modulo\"\nspan_sectors = 100", "span_sectors"),
        ("map = \"scale\"\nspan_sectors = 0", "span_sectors"),
        ("map = \"scale\"\nalign_sectors = 0", "align_sectors"),
        ("map = \"modulo\"\nalign_sectors = 5000", "align_sectors"),
    ];
    for (extra, field) in cases {
        let s: WorkloadSpec = toml::from_str(&format!(
            "type = \"trace\"\npath = \"/nonexistent/t.vscsi\"\nformat = \"vscsi\"\n{extra}"
        ))
        .unwrap();
        let e = s.build(4096, 0).err().unwrap();
        assert!(
            matches!(&e, WorkloadError::Invalid { field: f, .. } if f == field),
            "{extra}: {e}"
        );
    }
    let e = toml::from_str::<WorkloadSpec>(
        "type = \"trace\"\npath = \"x\"\nformat = \"vscsi\"\nmap = \"wrap\"",
    )
    .unwrap_err();
    assert!(e.to_string().contains("wrap"), "{e}");
    // VSCSI has no device numbers.
    let s: WorkloadSpec =
        toml::from_str("type = \"trace\"\npath = \"x\"\nformat = \"vscsi\"\ndevice = 1").unwrap();
    assert!(
        matches!(s.build(4096, 0).err().unwrap(), WorkloadError::Invalid { field, .. } if field == "device")
    );
}

#[test]
fn format_names_and_errors() {
    assert_eq!(TraceFormat::ALL.len(), 6);
    for f in TraceFormat::ALL {
        assert_eq!(f.name().parse::<TraceFormat>(), Ok(f));
        assert_eq!(
            f.is_binary(),
            matches!(f, TraceFormat::Srt | TraceFormat::Vscsi)
        );
    }
    let e = "csv".parse::<TraceFormat>().unwrap_err();
    assert!(e.contains("srt, vscsi"), "{e}");
}

// ---------------------------------------------------------------- days

#[test]
fn days_spec_from_toml() {
    let s: WorkloadSpec = toml::from_str(
        "type = \"days\"\ndays = 2\nrequests_per_day = 300\nrate_per_s = 1.0\nday_s = 3600",
    )
    .unwrap();
    assert_eq!(
        (s.kind(), s.arrival(), s.count(), s.think_time_ns()),
        ("days", ArrivalKind::Open, Some(600), None)
    );
    let WorkloadSpec::Days(d) = &s else { panic!() };
    assert_eq!(
        (d.day_ns(), d.active_ns()),
        (3_600_000_000_000, 300_000_000_000)
    );
    let r = collect_requests(&mut *s.build(ATLAS_CAPACITY, 9).unwrap()).unwrap();
    assert_eq!(r.len(), 600);
    assert!(r[..300].iter().all(|q| q.time < 300_000_000_001));
    assert!(r[300..]
        .iter()
        .all(|q| (3_600_000_000_000..3_900_000_000_001).contains(&q.time)));
    assert_eq!(
        r,
        collect_requests(&mut *s.build(ATLAS_CAPACITY, 9).unwrap()).unwrap()
    );
    assert!(toml::from_str::<WorkloadSpec>("type = \"days\"\nhot = 5").is_err());
}

#[test]
fn days_spec_bad_values_name_the_field() {
    let cases: Vec<(DaysSpec, &str)> = vec![
        (
            DaysSpec {
                days: 0,
                ..DaysSpec::default()
            },
            "days",
        ),
        (
            DaysSpec {
                requests_per_day: 0,
                ..DaysSpec::default()
            },
            "requests_per_day",
        ),
        (
            DaysSpec {
                day_s: f64::NAN,
                ..DaysSpec::default()
            },
            "day_s",
        ),
        (
            DaysSpec {
                day_s: -1.0,
                ..DaysSpec::default()
            },
            "day_s",
        ),
        (
            DaysSpec {
                rate_per_s: Some(f64::NAN),
                ..DaysSpec::default()
            },
            "rate_per_s",
        ),
        (
            DaysSpec {
                rate_per_s: Some(0.0),
                ..DaysSpec::default()
            },
            "rate_per_s",
        ),
        (
            DaysSpec {
                rate_per_s: Some(f64::INFINITY),
                ..DaysSpec::default()
            },
            "rate_per_s",
        ),
        (
            DaysSpec {
                rate_per_s: Some(0.1),
                ..DaysSpec::default()
            },
            "rate_per_s",
        ), // 2.3 days of requests a day
        (
            DaysSpec {
                block_sectors: 0,
                ..DaysSpec::default()
            },
            "block_sectors",
        ),
        (
            DaysSpec {
                read_fraction: f64::NAN,
                ..DaysSpec::default()
            },
            "read_fraction",
        ),
        (
            DaysSpec {
                read_fraction: 1.5,
                ..DaysSpec::default()
            },
            "read_fraction",
        ),
        (
            DaysSpec {
                drift: -0.1,
                ..DaysSpec::default()
            },
            "drift",
        ),
        (
            DaysSpec {
                drift: f64::NAN,
                ..DaysSpec::default()
            },
            "drift",
        ),
        (
            DaysSpec {
                hot_blocks: 1,
                ..DaysSpec::default()
            },
            "hot_blocks",
        ),
        (
            DaysSpec {
                top_blocks: 0,
                ..DaysSpec::default()
            },
            "top_blocks",
        ),
        (
            DaysSpec {
                top_blocks: 1800,
                ..DaysSpec::default()
            },
            "top_blocks",
        ),
        (
            DaysSpec {
                read_top_share: f64::NAN,
                ..DaysSpec::default()
            },
            "read_top_share",
        ),
        (
            DaysSpec {
                read_top_share: 0.05,
                ..DaysSpec::default()
            },
            "read_top_share",
        ), // below uniform 100/1800
        (
            DaysSpec {
                write_top_share: 1.0,
                ..DaysSpec::default()
            },
            "write_top_share",
        ),
        (
            DaysSpec {
                hot_blocks: 120_000,
                ..DaysSpec::default()
            },
            "hot_blocks",
        ), // with drift, more than a 1 GB disk holds
    ];
    for (spec, field) in cases {
        let e = spec
            .build(2_000_000, 1)
            .err()
            .unwrap_or_else(|| panic!("{field}: accepted"));
        assert!(
            matches!(&e, WorkloadError::Invalid { field: f, .. } if f == field),
            "{field}: {e}"
        );
        assert!(
            e.to_string()
                .starts_with(&format!("workload field `{field}`")),
            "{e}"
        );
    }
    DaysSpec::default().build(2_000_000, 1).unwrap();
}

// ---------------------------------------------------------------- robustness

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn binary_readers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600), vscsi in any::<bool>(), map in 0u8..3) {
        let format = if vscsi { TraceFormat::Vscsi } else { TraceFormat::Srt };
        let mut t = TraceReader::from_reader("fuzz", Cursor::new(bytes), format).with_capacity(1000);
        t = match map {
            1 => t.with_modulo_map(8),
            2 => t.with_scale_map(1 << 40, 8),
            _ => t,
        };
        for _ in 0..100 {
            match t.next_request() {
                Ok(Some(r)) => prop_assert!(r.sectors >= 1 && r.end() <= 1000),
                Ok(None) => break,
                Err(e) => { prop_assert!(e.to_string().starts_with("fuzz:")); break; }
            }
        }
    }

    #[test]
    fn valid_vscsi_files_round_trip(recs in proptest::collection::vec((prop_oneof![Just(0x28u16), Just(0x2A), Just(0x88), Just(0x00)], 1u32..1 << 20, 0u64..1 << 40, 0u64..1000), 1..40), v2 in any::<bool>()) {
        let version = if v2 { VscsiVersion::V2 } else { VscsiVersion::V1 };
        let mut ts = 0;
        let records: Vec<VscsiRecord> = recs.iter().map(|&(c, len, lba, dt)| { ts += dt; vrec(c, len, lba, ts) }).collect();
        let got = collect_requests(&mut reader(TraceFormat::Vscsi, "v", vfile(version, &records))).unwrap();
        let want: Vec<Request> = records.iter().filter(|r| r.command != 0).map(|r| {
            let op = if matches!(r.command, 0x28 | 0x88) { Op::Read } else { Op::Write };
            Request::new((r.timestamp_us - records[0].timestamp_us) * 1000, r.lba, r.length.div_ceil(512), op)
        }).collect();
        prop_assert_eq!(got, want);
    }
}
