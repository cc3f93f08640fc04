//! Workloads: synthetic generators are deterministic and have the right statistics; trace
//! readers parse every format, name file:line on bad input, and check the disk capacity.

use std::path::{Path, PathBuf};

use freeblock::workload::{
    collect_requests, open_trace, ArrivalKind, LocalitySpec, OltpSpec, RandomSpec, Request,
    SizeDist, TraceFormat, TraceReader, TraceSpec, Workload, WorkloadError, WorkloadSpec,
};
use freeblock_disk::Op;
use proptest::prelude::*;

/// Quantum Atlas 10K capacity, sectors (about 9.1 GB).
const ATLAS_CAPACITY: u64 = 17_938_986;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn validation_trace(name: &str) -> PathBuf {
    Path::new("/work/shared/disksim-validation").join(name)
}

fn spec(text: &str) -> WorkloadSpec {
    toml::from_str(text).unwrap_or_else(|e| panic!("{e}"))
}

fn all(spec: &WorkloadSpec, capacity: u64, seed: u64) -> Vec<Request> {
    collect_requests(&mut *spec.build(capacity, seed).unwrap()).unwrap()
}

fn read(format: TraceFormat, origin: &str, text: &'static str) -> TraceReader {
    TraceReader::from_reader(origin, text.as_bytes(), format)
}

fn err_of(mut w: impl Workload) -> WorkloadError {
    loop {
        match w.next_request() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("expected an error"),
            Err(e) => {
                // After an error the workload is finished.
                assert_eq!(w.next_request(), Ok(None));
                return e;
            }
        }
    }
}

#[test]
fn workload_is_object_safe_and_send() {
    fn assert_send<T: Send + ?Sized>() {}
    assert_send::<dyn Workload>();
    assert_send::<Box<dyn Workload>>();
}

// ---------------------------------------------------------------- synthetic: determinism

#[test]
fn same_seed_same_requests_for_every_synthetic_kind() {
    let specs = [
        "type = \"random\"\ncount = 2000",
        "type = \"random\"\ncount = 2000\nrate_per_s = 150.0\nsize = { type = \"exponential\", mean_sectors = 16, multiple_sectors = 8 }",
        "type = \"locality\"\ncount = 2000\nlocal_fraction = 0.5",
        "type = \"oltp\"\ncount = 2000",
        "type = \"sequential\"\ncount = 2000\nrequest_sectors = 64\nread_fraction = 0.5\nrate_per_s = 10",
    ];
    for text in specs {
        let s = spec(text);
        let a = all(&s, ATLAS_CAPACITY, 42);
        let b = all(&s, ATLAS_CAPACITY, 42);
        let c = all(&s, ATLAS_CAPACITY, 43);
        assert_eq!(a.len(), 2000, "{text}");
        assert_eq!(a, b, "{text}");
        assert_ne!(a, c, "a different seed should change the stream: {text}");
    }
}

#[test]
fn random_stream_is_pinned() {
    // Guards against an accidental change of the draw order (which would silently change every
    // reproduced figure). Update deliberately if the generator changes.
    let r = all(&WorkloadSpec::random_4k(3), ATLAS_CAPACITY, 1);
    let summary: Vec<(u64, u32, bool)> = r
        .iter()
        .map(|r| (r.lbn, r.sectors, r.op.is_read()))
        .collect();
    assert_eq!(
        summary,
        [
            (3_934_459, 8, true),
            (8_271_451, 8, true),
            (15_692_679, 8, true)
        ]
    );
}

// ---------------------------------------------------------------- synthetic: statistics

#[test]
fn random_defaults_match_paper_000_section_3() {
    let s = spec("type = \"random\"\ncount = 60000");
    let w = s.build(ATLAS_CAPACITY, 7).unwrap();
    assert_eq!(w.arrival(), ArrivalKind::Closed);
    assert_eq!(s.think_time_ns(), None);
    let r = all(&s, ATLAS_CAPACITY, 7);
    let reads = r.iter().filter(|r| r.op == Op::Read).count() as f64 / r.len() as f64;
    assert!((reads - 2.0 / 3.0).abs() < 0.01, "read fraction {reads}");
    assert!(r
        .iter()
        .all(|r| r.sectors == 8 && r.time == 0 && r.end() <= ATLAS_CAPACITY));
    // Uniform starts: mean near the middle, every tenth of the disk hit about equally.
    let mean = r.iter().map(|r| r.lbn as f64).sum::<f64>() / r.len() as f64;
    assert!(
        (mean / ATLAS_CAPACITY as f64 - 0.5).abs() < 0.01,
        "mean start {mean}"
    );
    let mut deciles = [0usize; 10];
    for q in &r {
        deciles[(q.lbn * 10 / ATLAS_CAPACITY) as usize] += 1;
    }
    for d in deciles {
        assert!(
            (d as f64 / r.len() as f64 - 0.1).abs() < 0.01,
            "{deciles:?}"
        );
    }
}

#[test]
fn read_fraction_is_honoured() {
    for p in [0.0, 0.25, 1.0] {
        let s = WorkloadSpec::Random(RandomSpec {
            count: Some(20_000),
            read_fraction: p,
            ..RandomSpec::default()
        });
        let r = all(&s, ATLAS_CAPACITY, 3);
        let reads = r.iter().filter(|r| r.op.is_read()).count() as f64 / r.len() as f64;
        assert!((reads - p).abs() < 0.015, "wanted {p}, got {reads}");
    }
}

#[test]
fn alignment_is_respected_and_requests_fit() {
    let s = spec(
        "type = \"random\"\ncount = 20000\nalignment_sectors = 8\nsize = { type = \"fixed\", sectors = 96 }",
    );
    let capacity = 100_003;
    let r = all(&s, capacity, 9);
    assert!(r.iter().all(|r| r.lbn % 8 == 0 && r.end() <= capacity));
    // The last aligned start that fits is reachable.
    let max = r.iter().map(|r| r.lbn).max().unwrap();
    assert!(max > capacity - 96 - 8 * 20, "max start {max}");
}

#[test]
fn exponential_sizes_are_multiples_with_the_documented_mean() {
    let s = WorkloadSpec::Oltp(OltpSpec {
        count: Some(100_000),
        ..OltpSpec::default()
    });
    let r = all(&s, ATLAS_CAPACITY, 5);
    assert!(r.iter().all(|r| r.sectors % 8 == 0 && r.sectors >= 8));
    assert!(r.iter().all(|r| r.lbn % 8 == 0));
    let mean = r.iter().map(|r| f64::from(r.sectors)).sum::<f64>() / r.len() as f64;
    let expected = SizeDist::Exponential {
        mean_sectors: 16.0,
        multiple_sectors: 8,
    }
    .mean_sectors();
    assert!((expected - 17.6).abs() < 0.05, "documented mean {expected}");
    assert!(
        (mean / expected - 1.0).abs() < 0.02,
        "mean {mean} vs {expected}"
    );
    // P(size = 4 KB) = P(round(x / 4 KB) ≤ 1) = P(x < 6 KB) = 1 - e^(-6/8)
    let one = r.iter().filter(|r| r.sectors == 8).count() as f64 / r.len() as f64;
    assert!(
        (one - (1.0 - (-0.75f64).exp())).abs() < 0.01,
        "P(4KB) = {one}"
    );
}

#[test]
fn exponential_sizes_are_capped_at_the_capacity() {
    let s = spec(
        "type = \"random\"\ncount = 5000\nsize = { type = \"exponential\", mean_sectors = 400, multiple_sectors = 8 }",
    );
    let r = all(&s, 100, 1);
    assert!(r
        .iter()
        .all(|r| r.sectors <= 96 && r.sectors % 8 == 0 && r.end() <= 100));
    assert!(r.iter().any(|r| r.sectors == 96));
}

#[test]
fn oltp_spec_defaults_and_think_time() {
    let s = spec("type = \"oltp\"");
    assert_eq!(s.think_time_ns(), Some(30_000_000));
    assert_eq!(s.arrival(), ArrivalKind::Closed);
    assert_eq!(s.count(), None);
    let WorkloadSpec::Oltp(o) = &s else { panic!() };
    assert_eq!(o, &OltpSpec::default());
    assert_eq!(
        spec("type = \"oltp\"\nthink_time_ms = 12.5").think_time_ns(),
        Some(12_500_000)
    );
    // Endless when no count is given.
    let mut w = s.build(ATLAS_CAPACITY, 1).unwrap();
    for _ in 0..10_000 {
        assert!(w.next_request().unwrap().is_some());
    }
}

/// Fraction of requests starting within 4 σ of the previous start.
fn near_fraction(r: &[Request], sigma: f64) -> f64 {
    let near = r
        .windows(2)
        .filter(|w| (w[1].lbn as f64 - w[0].lbn as f64).abs() < 4.0 * sigma)
        .count();
    near as f64 / (r.len() - 1) as f64
}

#[test]
fn locality_fraction_matches_figure_4_model() {
    for p in [0.0, 0.3, 0.7, 1.0] {
        let s = WorkloadSpec::Locality(LocalitySpec {
            count: Some(40_000),
            local_fraction: p,
            ..LocalitySpec::default()
        });
        let r = all(&s, ATLAS_CAPACITY, 11);
        assert!(r.iter().all(|r| r.end() <= ATLAS_CAPACITY));
        // Uniform starts land within ±4σ (±32 MB) of the last one with probability ≈ 0.0037.
        let uniform_near = 8.0 * 8192.0 / ATLAS_CAPACITY as f64;
        let expected = p + (1.0 - p) * uniform_near;
        let got = near_fraction(&r, 8192.0);
        assert!(
            (got - expected).abs() < 0.012,
            "p = {p}: near fraction {got}, expected {expected}"
        );
    }
    // Local jumps have the 4 MB standard deviation.
    let s = WorkloadSpec::Locality(LocalitySpec {
        count: Some(40_000),
        local_fraction: 1.0,
        ..LocalitySpec::default()
    });
    let r = all(&s, ATLAS_CAPACITY, 12);
    let jumps: Vec<f64> = r
        .windows(2)
        .map(|w| w[1].lbn as f64 - w[0].lbn as f64)
        .collect();
    let sd = (jumps.iter().map(|j| j * j).sum::<f64>() / jumps.len() as f64).sqrt();
    assert!((sd / 8192.0 - 1.0).abs() < 0.03, "jump sd {sd}");
}

#[test]
fn locality_clamps_into_a_small_disk() {
    let s = spec(
        "type = \"locality\"\ncount = 20000\nlocal_fraction = 0.9\nlocal_stddev_sectors = 100000\nalignment_sectors = 4",
    );
    let r = all(&s, 50_000, 2);
    assert!(r.iter().all(|r| r.end() <= 50_000 && r.lbn % 4 == 0));
    assert!(r.iter().any(|r| r.lbn == 0) && r.iter().any(|r| r.lbn == 49_992));
}

#[test]
fn poisson_arrivals_are_open_with_the_right_rate() {
    let s = spec("type = \"random\"\ncount = 50000\nrate_per_s = 200");
    assert_eq!(s.arrival(), ArrivalKind::Open);
    let w = s.build(ATLAS_CAPACITY, 4).unwrap();
    assert_eq!(w.arrival(), ArrivalKind::Open);
    let r = all(&s, ATLAS_CAPACITY, 4);
    assert!(r.windows(2).all(|w| w[0].time <= w[1].time));
    let mean_gap_ms = r.last().unwrap().time as f64 / 1e6 / r.len() as f64;
    assert!((mean_gap_ms - 5.0).abs() < 0.1, "mean gap {mean_gap_ms} ms");
    // Exponential gaps: the coefficient of variation is 1.
    let gaps: Vec<f64> = std::iter::once(r[0].time as f64)
        .chain(r.windows(2).map(|w| (w[1].time - w[0].time) as f64))
        .collect();
    let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - m) * (g - m)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((sd / m - 1.0).abs() < 0.03, "cv {}", sd / m);
}

#[test]
fn sequential_is_contiguous_or_strided_and_wraps() {
    let r = all(
        &spec("type = \"sequential\"\ncount = 5\nrequest_sectors = 64\nstart_lbn = 1000"),
        10_000,
        0,
    );
    let lbns: Vec<u64> = r.iter().map(|r| r.lbn).collect();
    assert_eq!(lbns, [1000, 1064, 1128, 1192, 1256]);
    assert!(r
        .iter()
        .all(|r| r.op == Op::Read && r.sectors == 64 && r.time == 0));
    let r = all(
        &spec("type = \"sequential\"\ncount = 4\nrequest_sectors = 8\nstride_sectors = 4000"),
        10_000,
        0,
    );
    let lbns: Vec<u64> = r.iter().map(|r| r.lbn).collect();
    assert_eq!(lbns, [0, 4000, 8000, 0]);
}

// ---------------------------------------------------------------- specs: validation

#[test]
fn spec_rejects_unknown_keys_types_and_bad_values() {
    for text in [
        "type = \"random\"\ncount = 1\nsize_sectors = 8",
        "type = \"random\"\nsize = { type = \"fixed\", sectors = 8, mean = 3 }",
        "type = \"oltp\"\nthink_ms = 30",
        "type = \"zipf\"",
        "type = \"trace\"\npath = \"x\"\nformat = \"csv\"",
        "type = \"locality\"\ncount = 1",
    ] {
        assert!(
            toml::from_str::<WorkloadSpec>(text).is_err(),
            "should not parse: {text}"
        );
    }
    let bad = |text: &str, field: &str| {
        let e = spec(text)
            .build(ATLAS_CAPACITY, 0)
            .err()
            .unwrap_or_else(|| panic!("built: {text}"));
        assert!(
            matches!(&e, WorkloadError::Invalid { field: f, .. } if f == field),
            "{text}: {e}"
        );
        assert!(e.to_string().contains(field), "{e}");
    };
    bad("type = \"random\"\nread_fraction = 1.5", "read_fraction");
    bad(
        "type = \"random\"\nalignment_sectors = 0",
        "alignment_sectors",
    );
    bad("type = \"random\"\nrate_per_s = -3", "rate_per_s");
    bad(
        "type = \"random\"\nsize = { type = \"fixed\", sectors = 0 }",
        "size.sectors",
    );
    bad(
        "type = \"random\"\nsize = { type = \"fixed\", sectors = 4000000000 }",
        "size.sectors",
    );
    bad("type = \"random\"\nsize = { type = \"exponential\", mean_sectors = 0, multiple_sectors = 8 }", "size.mean_sectors");
    bad("type = \"random\"\nsize = { type = \"exponential\", mean_sectors = 8, multiple_sectors = 0 }", "size.multiple_sectors");
    bad(
        "type = \"locality\"\nlocal_fraction = -0.1",
        "local_fraction",
    );
    bad(
        "type = \"locality\"\nlocal_fraction = 0.5\nlocal_stddev_sectors = -1",
        "local_stddev_sectors",
    );
    bad("type = \"oltp\"\nthink_time_ms = -1", "think_time_ms");
    bad(
        "type = \"sequential\"\nrequest_sectors = 0",
        "request_sectors",
    );
    bad(
        "type = \"sequential\"\nrequest_sectors = 8\nstart_lbn = 17938980",
        "start_lbn",
    );
    bad(
        "type = \"trace\"\npath = \"x\"\nformat = \"validate\"\ndevice = 1",
        "device",
    );
    bad(
        "type = \"trace\"\npath = \"x\"\nformat = \"msr\"\naction = \"Q\"",
        "action",
    );
    let e = WorkloadSpec::random_4k(1).build(0, 0).err().unwrap();
    assert!(matches!(e, WorkloadError::Invalid { .. }), "{e}");
}

#[test]
fn spec_round_trips_through_toml() {
    for text in [
        "type = \"random\"\ncount = 10\nrate_per_s = 5.0",
        "type = \"locality\"\nlocal_fraction = 0.7",
        "type = \"oltp\"\ncount = 3",
        "type = \"sequential\"\nrequest_sectors = 8\nstride_sectors = 16",
        "type = \"trace\"\npath = \"t.csv\"\nformat = \"msr\"\ndevice = 2\nlimit = 10",
    ] {
        let s = spec(text);
        let back: WorkloadSpec = toml::from_str(&toml::to_string(&s).unwrap()).unwrap();
        assert_eq!(s, back);
    }
}

// ---------------------------------------------------------------- traces: DiskSim ASCII

#[test]
fn disksim_ascii_sample() {
    let mut t = open_trace(data("sample.disksim"), TraceFormat::Disksim).unwrap();
    assert_eq!(t.arrival(), ArrivalKind::Open);
    let r = collect_requests(&mut t).unwrap();
    let got: Vec<(u64, u64, u32, Op)> =
        r.iter().map(|r| (r.time, r.lbn, r.sectors, r.op)).collect();
    assert_eq!(
        got,
        [
            (0, 4_583_176, 8, Op::Read),
            (1_250_000, 1000, 16, Op::Write),
            (1_250_000, 2000, 8, Op::Read),
            (7_500_000, 17_000_000, 4, Op::Read),
        ]
    );
    assert!(r.iter().all(|r| r.measured.is_none()));
    let devs = collect_requests(
        &mut open_trace(data("sample.disksim"), TraceFormat::Disksim)
            .unwrap()
            .with_device(1),
    )
    .unwrap();
    assert_eq!(devs.len(), 1);
    assert_eq!(devs[0].lbn, 2000);
}

#[test]
fn disksim_ascii_malformed_lines_name_the_line() {
    let cases = [
        (
            "0.0 0 100 8 1\n1.0 0 200 8\n",
            "trace.txt:2: expected 5 fields",
        ),
        (
            "0.0 0 100 8 1\n\n# c\n1.0 0 x 8 1\n",
            "trace.txt:4: bad block number `x`",
        ),
        (
            "0.0 0 100 0 1\n",
            "trace.txt:1: request size (sectors) is 0",
        ),
        (
            "-1.0 0 100 8 1\n",
            "trace.txt:1: bad arrival time (ms) `-1.0`",
        ),
        (
            "2.0 0 100 8 1\n1.0 0 100 8 1\n",
            "trace.txt:2: arrival at 1.000000 ms is earlier",
        ),
        ("0.0 0 100 8 1.5\n", "trace.txt:1: bad flags `1.5`"),
    ];
    for (text, want) in cases {
        let e = err_of(read(TraceFormat::Disksim, "trace.txt", text));
        assert!(e.to_string().starts_with(want), "got `{e}`, want `{want}`");
    }
    let bytes: &'static [u8] = b"0 0 0 8 1\n0 0 0 8 1\n\xff\n";
    let e = err_of(TraceReader::from_reader(
        "trace.txt",
        bytes,
        TraceFormat::Disksim,
    ));
    assert!(e.to_string().starts_with("trace.txt:3:"), "{e}");
}

// ---------------------------------------------------------------- traces: DiskSim validate

#[test]
fn validate_sample_delays_shift_by_one() {
    let text = "W Hit    4583176   4    663.00000  45422.00000\nR Miss   3962268  12   6657.5  64047.00000\nR Doub 10 2 1.0 0.0\n";
    let mut t = read(TraceFormat::Validate, "v.trace", text);
    assert_eq!(t.arrival(), ArrivalKind::ClosedDelay);
    let r = collect_requests(&mut t).unwrap();
    assert_eq!(
        r[0],
        Request {
            time: 0,
            lbn: 4_583_176,
            sectors: 4,
            op: Op::Write,
            measured: Some(663_000),
            fua: false
        }
    );
    assert_eq!(
        r[1],
        Request {
            time: 45_422_000,
            lbn: 3_962_268,
            sectors: 12,
            op: Op::Read,
            measured: Some(6_657_500),
            fua: false
        }
    );
    assert_eq!(r[2].time, 64_047_000);
}

#[test]
fn validate_malformed_lines_name_the_line() {
    for (text, want) in [
        ("R Hit 1 2 3.0\n", "v.trace:1: expected 6 fields"),
        (
            "R Hit 1 2 3 4\nX Hit 1 2 3 4\n",
            "v.trace:2: bad operation `X`",
        ),
        (
            "R Cold 1 2 3 4\n",
            "v.trace:1: bad cache classification `Cold`",
        ),
        ("R Hit 1 2 3 four\n", "v.trace:1: bad delay (µs) `four`"),
    ] {
        let e = err_of(read(TraceFormat::Validate, "v.trace", text));
        assert!(e.to_string().starts_with(want), "got `{e}`, want `{want}`");
    }
}

fn check_real_validation_trace(name: &str, count: usize, measured_mean_ms: f64) {
    let path = validation_trace(name);
    let mut t = open_trace(&path, TraceFormat::Validate)
        .unwrap()
        .with_capacity(ATLAS_CAPACITY);
    let r = collect_requests(&mut t).unwrap();
    assert_eq!(r.len(), count, "{name}");
    assert_eq!(r[0].time, 0);
    assert!(r.iter().all(|r| r.measured.is_some() && r.sectors >= 1));
    let mean = r.iter().map(|r| r.measured.unwrap() as f64).sum::<f64>() / r.len() as f64 / 1e6;
    assert!(
        (mean - measured_mean_ms).abs() < 0.001,
        "{name}: measured mean {mean} ms"
    );
}

#[test]
fn real_validation_traces_parse_fully() {
    check_real_validation_trace("atlas10k.trace", 10_000, 3.893);
    check_real_validation_trace("hp_c2247a.trace", 9_999, 15.298);
    // The second request's delay is the first line's recorded delay.
    let mut t = open_trace(validation_trace("atlas10k.trace"), TraceFormat::Validate).unwrap();
    let first = t.next_request().unwrap().unwrap();
    let second = t.next_request().unwrap().unwrap();
    assert_eq!((first.time, first.measured), (0, Some(663_000)));
    assert_eq!((second.time, second.measured), (45_422_000, Some(607_000)));
    assert_eq!(t.line(), 2);
}

#[test]
fn real_validation_trace_past_a_small_disk_names_line_and_capacity() {
    let path = validation_trace("atlas10k.trace");
    let e = err_of(
        open_trace(&path, TraceFormat::Validate)
            .unwrap()
            .with_capacity(4_000_000),
    );
    let WorkloadError::PastCapacity {
        line,
        capacity,
        lbn,
        ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!((*line, *capacity, *lbn), (1, 4_000_000, 4_583_176));
    let msg = e.to_string();
    assert!(msg.starts_with(&format!("{}:1: ", path.display())), "{msg}");
    assert!(msg.contains("capacity of 4000000 sectors"), "{msg}");
}

// ---------------------------------------------------------------- traces: MSR Cambridge

#[test]
fn msr_sample() {
    let mut t = open_trace(data("sample_msr.csv"), TraceFormat::Msr).unwrap();
    assert_eq!(t.arrival(), ArrivalKind::Open);
    let r = collect_requests(&mut t).unwrap();
    let got: Vec<(u64, u64, u32, Op)> =
        r.iter().map(|r| (r.time, r.lbn, r.sectors, r.op)).collect();
    assert_eq!(
        got,
        [
            (0, 6_160_448, 64, Op::Read),
            (1_332_052_600, 6_160_448, 8, Op::Write),
            (2_332_061_600, 1, 1, Op::Write),
            // bytes 1000..1100 touch sectors 1 and 2
            (3_332_061_600, 1, 2, Op::Read),
        ]
    );
    // Disk filter keeps times relative to the file's first record.
    let r = collect_requests(
        &mut open_trace(data("sample_msr.csv"), TraceFormat::Msr)
            .unwrap()
            .with_device(0),
    )
    .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].time, 2_332_061_600);
    // Limit.
    let r = collect_requests(
        &mut open_trace(data("sample_msr.csv"), TraceFormat::Msr)
            .unwrap()
            .with_limit(2),
    )
    .unwrap();
    assert_eq!(r.len(), 2);
}

#[test]
fn msr_header_and_malformed_lines() {
    let ok = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n100,h,0,read,0,512,1\n";
    assert_eq!(
        collect_requests(&mut read(TraceFormat::Msr, "m.csv", ok))
            .unwrap()
            .len(),
        1
    );
    for (text, want) in [
        (
            "100,h,0,Read,0,512\n",
            "m.csv:1: expected 7 comma-separated fields",
        ),
        (
            "100,h,0,Read,0,512,1\n200,h,0,Trim,0,512,1\n",
            "m.csv:2: bad type `Trim`",
        ),
        ("100,h,0,Read,0,0,1\n", "m.csv:1: size is 0 bytes"),
        (
            "100,h,0,Read,0,512,1\n50,h,0,Read,0,512,1\n",
            "m.csv:2: timestamp 50 is before",
        ),
        (
            "100,h,0,Read,-512,512,1\n",
            "m.csv:1: bad offset (bytes) `-512`",
        ),
    ] {
        let e = err_of(read(TraceFormat::Msr, "m.csv", text));
        assert!(e.to_string().starts_with(want), "got `{e}`, want `{want}`");
    }
}

// ---------------------------------------------------------------- traces: blkparse

#[test]
fn blkparse_sample_dispatch_and_queue() {
    let mut t = open_trace(data("sample.blkparse"), TraceFormat::Blkparse).unwrap();
    assert_eq!(t.arrival(), ArrivalKind::Open);
    let r = collect_requests(&mut t).unwrap();
    let got: Vec<(u64, u64, u32, Op)> =
        r.iter().map(|r| (r.time, r.lbn, r.sectors, r.op)).collect();
    assert_eq!(
        got,
        [(2871, 223_490, 8, Op::Read), (700_000, 1000, 16, Op::Write)]
    );
    let r = collect_requests(
        &mut open_trace(data("sample.blkparse"), TraceFormat::Blkparse)
            .unwrap()
            .with_blkparse_action('Q'),
    )
    .unwrap();
    let got: Vec<(u64, u64)> = r.iter().map(|r| (r.time, r.lbn)).collect();
    assert_eq!(got, [(0, 223_490), (500_000, 1000)]);
    let r = collect_requests(
        &mut open_trace(data("sample.blkparse"), TraceFormat::Blkparse)
            .unwrap()
            .with_blkparse_action('C'),
    )
    .unwrap();
    assert_eq!(r.len(), 2);
}

#[test]
fn blkparse_malformed_event_lines() {
    for (text, want) in [
        (
            "  8,0 3 1 0.1 697 D\n",
            "b.txt:1: expected at least 7 fields",
        ),
        (
            "Summary\n  8,0 3 x 0.1 697 D R 1 + 8 [p]\n",
            "b.txt:2: bad sequence number `x`",
        ),
        (
            "  8,0 3 1 0.1 697 D R 1 8 [p]\n",
            "b.txt:1: expected `<sector> + <count>`",
        ),
        (
            "  8,0 3 1 0.1 697 D R 1 + y [p]\n",
            "b.txt:1: bad sector count `y`",
        ),
        (
            "  8,0 3 1 zero 697 D R 1 + 8 [p]\n",
            "b.txt:1: bad time (s) `zero`",
        ),
    ] {
        let e = err_of(read(TraceFormat::Blkparse, "b.txt", text));
        assert!(e.to_string().starts_with(want), "got `{e}`, want `{want}`");
    }
}

// ---------------------------------------------------------------- traces via specs

#[test]
fn trace_spec_builds_with_capacity_check_and_relative_paths() {
    let mut s = spec("type = \"trace\"\npath = \"sample.disksim\"\nformat = \"disksim\"");
    s.resolve_paths(&data(""));
    assert_eq!(s.arrival(), ArrivalKind::Open);
    assert_eq!(all(&s, ATLAS_CAPACITY, 0).len(), 4);
    // 17 000 000 + 4 sectors is past a 10 M-sector disk: line 5 of the file.
    let mut w = s.build(10_000_000, 0).unwrap();
    let e = loop {
        match w.next_request() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    assert!(e.to_string().ends_with("sample.disksim:5: request at LBN 17000000 of 4 sectors ends at 17000004, past the disk capacity of 10000000 sectors"), "{e}");

    let s = spec(&format!(
        "type = \"trace\"\npath = \"{}\"\nformat = \"blkparse\"\naction = \"Q\"\nlimit = 1",
        data("sample.blkparse").display()
    ));
    let r = all(&s, ATLAS_CAPACITY, 0);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].time, 0);

    let e = spec("type = \"trace\"\npath = \"/nonexistent/t.csv\"\nformat = \"msr\"")
        .build(1, 0)
        .err()
        .unwrap();
    assert!(matches!(e, WorkloadError::Io { .. }));
    assert!(e.to_string().starts_with("/nonexistent/t.csv: "), "{e}");
}

#[test]
fn format_aliases_parse() {
    let s = spec("type = \"trace\"\npath = \"x\"\nformat = \"disksim_validate\"");
    assert_eq!(s.arrival(), ArrivalKind::ClosedDelay);
    assert_eq!("ascii".parse::<TraceFormat>(), Ok(TraceFormat::Disksim));
    assert_eq!(
        TraceSpec {
            path: "x".into(),
            format: TraceFormat::Msr,
            limit: None,
            device: None,
            action: None,
            map: Default::default(),
            span_sectors: None,
            align_sectors: None,
        }
        .format
        .arrival(),
        ArrivalKind::Open
    );
}

// ---------------------------------------------------------------- properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn synthetic_requests_always_fit_and_align(
        capacity in 1u64..5_000_000,
        alignment in 1u64..64,
        sectors in 1u32..512,
        local in 0.0f64..=1.0,
        exp in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let size = if exp {
            SizeDist::Exponential { mean_sectors: f64::from(sectors), multiple_sectors: sectors.min(capacity as u32).max(1) }
        } else {
            SizeDist::Fixed { sectors: sectors.min(capacity as u32).max(1) }
        };
        let s = WorkloadSpec::Locality(LocalitySpec {
            count: Some(200), size, alignment_sectors: alignment, local_fraction: local, ..LocalitySpec::default()
        });
        for r in all(&s, capacity, seed) {
            prop_assert!(r.sectors >= 1 && r.end() <= capacity);
            prop_assert_eq!(r.lbn % alignment, 0);
        }
    }

    #[test]
    fn trace_readers_never_panic(text in "[ -~\n]{0,400}", f in 0usize..4) {
        let format = TraceFormat::ALL[f];
        let mut t = TraceReader::from_reader("fuzz", std::io::Cursor::new(text.into_bytes()), format).with_capacity(1000);
        for _ in 0..100 {
            match t.next_request() {
                Ok(Some(r)) => prop_assert!(r.sectors >= 1 && r.end() <= 1000),
                Ok(None) => break,
                Err(e) => { prop_assert!(e.to_string().starts_with("fuzz:")); break; }
            }
        }
    }
}
