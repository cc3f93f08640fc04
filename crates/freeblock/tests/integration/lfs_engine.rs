//! The log-structured layout in the engine: an experiment file runs it and it cleans with free
//! reads, a flush writes the partial segment, and the engine refuses an empty translation from a
//! policy that does not serve from memory. (Paper 000 §5's runs of it are tested with the
//! reproduction, `crates/freeblock-repro/tests/integration/lfs_cleaning.rs`.)

use std::sync::Arc;

use freeblock::layout::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo};
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{RandomSpec, WorkloadSpec};

/// A policy that answers every request from memory without saying it does.
struct Forgetful;

impl LayoutPolicy for Forgetful {
    fn name(&self) -> String {
        "forgetful".into()
    }
    fn translate(&mut self, _: &mut LayoutCtx<'_>, _: &LogicalIo<'_>, _: &mut Vec<PhysIo>) -> freeblock::layout::Result<()> {
        Ok(())
    }
    fn complete(&mut self, _: &mut LayoutCtx<'_>, _: &Completed<'_>) -> freeblock::layout::Result<()> {
        Ok(())
    }
}

#[test]
fn an_empty_translation_is_an_error_unless_the_policy_serves_from_memory() {
    let disk = Arc::new(freeblock_disk::Disk::new(freeblock_disk::library::get("atlas10k").unwrap().without_cache()).unwrap());
    let spec = WorkloadSpec::Random(RandomSpec { count: Some(10), ..RandomSpec::default() });
    let w = spec.build(disk.capacity(), 1).unwrap();
    let e = Simulation::new(Arc::clone(&disk), w, SimConfig::default()).with_layout(Box::new(Forgetful)).run(None).unwrap_err().to_string();
    assert!(e.contains("no I/O"), "{e}");
}

const LFS_EXPERIMENT: &str = r#"
    [disk]
    name = "atlas10k"
    cache = false
    [workload]
    type = "random"
    count = 30000
    size = { type = "fixed", sectors = 8 }
    alignment_sectors = 8
    read_fraction = 0.3
    [layout]
    type = "lfs"
    partition_mb = 32
    logical_share = 0.6
    cache_mb = 1
"#;

#[test]
fn an_experiment_file_runs_the_lfs_and_it_cleans_with_free_reads() {
    let e = freeblock::experiment::Experiment::from_toml_str(LFS_EXPERIMENT, "lfs.toml", std::path::Path::new(".")).unwrap();
    let report = e.run(None).unwrap();
    let layout = report.layout.expect("the run had a layout");
    assert!(layout.policy.contains("lfs (FREEBLOCK)"), "{}", layout.policy);
    let d = &layout.details;
    // 21 000 writes of 4 KB into a log of 64 segments: it must have cleaned, and freely.
    assert!(d["segment_writes"].as_u64().unwrap() > 64, "{d}");
    assert!(d["free_segments"].as_u64().unwrap() > 0 && d["free_blocks_moved"].as_u64().unwrap() > 0, "{d}");
    assert_eq!(report.freeblock.as_ref().map_or(0, |f| f.delayed_foreground), 0, "free means free");
}

#[test]
fn the_lfs_example_file_parses_and_a_bad_share_names_its_field() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/lfs.toml");
    let e = freeblock::experiment::Experiment::from_file(&path).unwrap();
    assert!(matches!(e.layout, Some(freeblock::experiment::LayoutSpec::Lfs(_))));
    let bad = LFS_EXPERIMENT.replace("logical_share = 0.6", "logical_share = 1.5");
    let e = freeblock::experiment::Experiment::from_toml_str(&bad, "lfs.toml", std::path::Path::new(".")).unwrap();
    let err = e.run(None).unwrap_err().to_string();
    assert!(err.contains("logical_share") && err.contains("1.5"), "{err}");
    let far = LFS_EXPERIMENT.replace("partition_mb = 32", "partition_mb = 20000");
    let e = freeblock::experiment::Experiment::from_toml_str(&far, "lfs.toml", std::path::Path::new(".")).unwrap();
    let err = e.run(None).unwrap_err().to_string();
    assert!(err.contains("past the disk's"), "{err}");
}

/// Requests given in order, each arriving at its own time.
struct Given(std::vec::IntoIter<freeblock::request::Request>);

impl freeblock::workload::Workload for Given {
    fn next_request(&mut self) -> Result<Option<freeblock::request::Request>, freeblock::workload::WorkloadError> {
        Ok(self.0.next())
    }
    fn arrival(&self) -> freeblock::workload::ArrivalKind {
        freeblock::workload::ArrivalKind::Open
    }
}

/// A flush request (a write of no sectors): LFS writes the segment being filled, however little
/// it holds, and the flush completes when that write is on the media; a flush with nothing held
/// completes at once; a layout that holds nothing translates it to nothing; without a layout it is
/// the drive's FLUSH CACHE.
#[test]
fn a_flush_writes_the_partial_segment_and_waits_for_it() {
    use freeblock::request::Request;
    use freeblock_disk::Op;
    let disk = Arc::new(freeblock_disk::Disk::new(freeblock_disk::library::get("atlas10k").unwrap().without_cache()).unwrap());
    let requests = |flushes: &[u64]| {
        let mut r: Vec<Request> = (0..3).map(|i| Request::new(i * 1_000_000, i * 8, 8, Op::Write)).collect();
        r.extend(flushes.iter().map(|&t| Request::flush(t)));
        Given(r.into_iter())
    };
    let lfs = || {
        let spec = freeblock::layout::lfs::LfsSpec { partition_mb: 32, cache_mb: 0, ..Default::default() };
        Box::new(freeblock::layout::lfs::LfsPolicy::from_spec(&spec, &disk).unwrap())
    };
    let config = SimConfig { keep_records: true, ..SimConfig::default() };
    let report = Simulation::new(Arc::clone(&disk), Box::new(requests(&[10_000_000, 20_000_000_000])), config.clone()).with_layout(lfs()).run(None).unwrap();
    let r = &report.records;
    assert_eq!(r.len(), 5);
    assert!(r[..3].iter().all(|w| w.end_ns == w.arrival_ns), "writes are acknowledged from memory");
    // The flush waits for two writes, the segment's three filled slots and its summary block,
    // not for all 128 blocks of the segment (about 28 ms on this disk).
    let waited = r[3].end_ns - r[3].arrival_ns;
    eprintln!("a flush of 3 blocks waited {:.3} ms", waited as f64 / 1e6);
    assert!((2_000_000..20_000_000).contains(&waited), "the first flush waits for a partial segment write: {:?}", r[3]);
    assert_eq!(r[4].end_ns, r[4].arrival_ns, "nothing left to write");
    let details = &report.layout.as_ref().unwrap().details;
    assert_eq!(details["segment_writes"].as_u64(), Some(1), "{details}");
    // Rearrangement holds nothing: a flush is answered at once.
    let rearrange = freeblock::experiment::LayoutSpec::Rearrange(Default::default()).build(&disk).unwrap();
    let report = Simulation::new(Arc::clone(&disk), Box::new(requests(&[10_000_000])), config.clone()).with_layout(rearrange).run(None).unwrap();
    let flush = report.records.iter().find(|r| r.arrival_ns == 10_000_000).unwrap();
    assert_eq!((flush.sectors, flush.end_ns), (0, flush.arrival_ns));
    // Without a layout the flush reaches the drive as FLUSH CACHE (issue 34): a write-through
    // drive holds nothing dirty, so it costs nothing once the writes before it are done.
    let report = Simulation::new(Arc::clone(&disk), Box::new(requests(&[10_000_000])), config).run(None).unwrap();
    let flush = report.records.iter().find(|r| r.arrival_ns == 10_000_000).unwrap();
    let writes_done = report.records.iter().filter(|r| r.sectors > 0).map(|r| r.end_ns).max().unwrap();
    assert_eq!((flush.sectors, flush.start_ns, flush.end_ns), (0, writes_done, writes_done), "{flush:?}");
}
