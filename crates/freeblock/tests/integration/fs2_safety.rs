//! FS2 safety (issue 14): nothing lost, the disk filled to 99%, bad input.
//!
//! **Nothing lost** drives the FS2 policy through its layout-policy hooks, without the engine:
//! random workload reads, writes and trims, replication I/O and workload writes served and
//! completed in a random interleaving, and crashes between two hook calls, each followed by
//! recovery from the map's stable storage. The "disk" is a map from physical block (its first
//! LBN) to the (logical block, version) it holds; a replica job's write stores what its source
//! reads returned when they were served. Every read offers copies (every complete copy with the
//! `positioning` rule, one with the paper's rule); the test serves it at a random one and checks
//! each block holds the latest acknowledged write — so a stale replica offered is a failure. Like
//! an application, the test never reads a block while a write of it is in flight.

use std::collections::HashMap;

use freeblock::layout::fs2::{check, Fs2, Fs2Config, Mode, Nearest, StaticExtent, Watermarks};
use freeblock::layout::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo, RequestInfo, Service};
use freeblock::experiment::Experiment;
use freeblock_disk::{library, Disk, HeadState, Op};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const BS: u64 = 8;
const OWN: u64 = 1 << 63;

fn disk() -> Disk {
    Disk::new(library::get("toshiba_mk156f").unwrap()).unwrap()
}

fn config(nearest: Nearest, max_replicas: u32) -> Fs2Config {
    Fs2Config { fill: 0.5, region_blocks: 64, window: 3, threshold: 1, epoch_accesses: 16, batch_blocks: 4, max_replicas, nearest, service: Service::Foreground, ..Fs2Config::default() }
}

#[derive(Debug, Clone)]
enum Step {
    /// Write blocks `b..b+n`.
    Write(u64, u64),
    /// Read blocks `b..b+n`, served at copy `pick % copies`.
    Read(u64, u64, u8),
    /// Trim blocks `b..b+n`.
    Trim(u64, u64),
    /// Serve the pending I/O at `pick % pending`.
    Serve(u8),
    /// Crash and recover.
    Crash,
}

/// Logical blocks the workload touches: two far-apart groups, so one is outside the hot region.
fn block() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..12, 2000u64..2012, 9000u64..9006]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (block(), 1u64..4).prop_map(|(b, n)| Step::Write(b, n)),
        5 => (block(), 1u64..4, any::<u8>()).prop_map(|(b, n, p)| Step::Read(b, n, p)),
        1 => (block(), 1u64..3).prop_map(|(b, n)| Step::Trim(b, n)),
        6 => any::<u8>().prop_map(Step::Serve),
        1 => Just(Step::Crash),
    ]
}

type Val = (u64, u64);

struct Harness {
    disk: Disk,
    cfg: Fs2Config,
    policy: Fs2,
    store: HashMap<u64, Val>,
    /// Acknowledged version of every written block.
    acked: HashMap<u64, u64>,
    /// Blocks whose write was lost in flight at a crash: either version may be there.
    either: HashMap<u64, (Option<u64>, u64)>,
    /// Workload writes under way: (I/O, version, blocks).
    user: Vec<(PhysIo, u64, Vec<u64>)>,
    writes_in_flight: HashMap<u64, u32>,
    /// Policy I/O under way.
    own: Vec<PhysIo>,
    /// Source data a job's reads returned, by tag, in submission order.
    job_data: HashMap<u64, Vec<(u64, Vec<Val>)>>,
    job_order: HashMap<u64, Vec<u64>>,
    version: u64,
    id: u64,
    served_from_replica: u64,
}

impl Harness {
    fn new(nearest: Nearest, max_replicas: u32) -> Self {
        let disk = disk();
        let cfg = config(nearest, max_replicas);
        let policy = Fs2::new(&disk, cfg.clone()).unwrap();
        Self { disk, cfg, policy, store: HashMap::new(), acked: HashMap::new(), either: HashMap::new(), user: Vec::new(), writes_in_flight: HashMap::new(), own: Vec::new(), job_data: HashMap::new(), job_order: HashMap::new(), version: 0, id: 0, served_from_replica: 0 }
    }

    fn collect(&mut self, submitted: Vec<(PhysIo, Service)>) {
        for (io, _) in submitted {
            if io.op.is_read() {
                self.job_order.entry(io.tag).or_default().push(io.starts[0]);
            }
            self.own.push(io);
        }
    }

    fn call<T>(&mut self, f: impl FnOnce(&mut Fs2, &mut LayoutCtx<'_>) -> T) -> T {
        let mut submitted = Vec::new();
        let disk = self.disk.clone();
        let out = {
            let mut ctx = LayoutCtx::new(&disk, HeadState { cylinder: 0, surface: 0 }, 0, &mut submitted);
            f(&mut self.policy, &mut ctx)
        };
        self.collect(submitted);
        out
    }

    fn complete(&mut self, io: &PhysIo, chosen: usize, request: bool) -> Result<(), TestCaseError> {
        let info = request.then_some(RequestInfo { id: self.id, stream: 0, arrival: 0 });
        let done = Completed { io, chosen, lbn: io.starts[chosen], access: None, time: 0, request: info, choice: None };
        self.call(|p, ctx| p.complete(ctx, &done)).map_err(|e| TestCaseError::fail(format!("complete: {e}")))
    }

    fn translate(&mut self, op: Op, b: u64, n: u64) -> Result<Vec<PhysIo>, TestCaseError> {
        self.id += 1;
        let io = LogicalIo { id: self.id, stream: 0, op, lbn: b * BS, sectors: n * BS, write: None };
        let mut out = Vec::new();
        self.call(|p, ctx| p.translate(ctx, &io, &mut out)).map_err(|e| TestCaseError::fail(format!("translate {op:?} {b}+{n}: {e}")))?;
        Ok(out)
    }

    fn write(&mut self, b: u64, n: u64) -> Result<(), TestCaseError> {
        if (b..b + n).any(|x| self.writes_in_flight.contains_key(&x)) {
            return Ok(());
        }
        let ios = self.translate(Op::Write, b, n)?;
        self.version += 1;
        let mut covered = 0;
        for io in ios {
            let k = io.sectors / BS;
            let blocks: Vec<u64> = (b + covered..b + covered + k).collect();
            covered += k;
            for &x in &blocks {
                *self.writes_in_flight.entry(x).or_insert(0) += 1;
            }
            self.user.push((io, self.version, blocks));
        }
        prop_assert_eq!(covered, n, "a write's I/Os cover every block once");
        Ok(())
    }

    fn read(&mut self, b: u64, n: u64, pick: u8) -> Result<(), TestCaseError> {
        if (b..b + n).any(|x| self.writes_in_flight.contains_key(&x)) {
            return Ok(());
        }
        let ios = self.translate(Op::Read, b, n)?;
        let mut first = b;
        for io in ios {
            let chosen = pick as usize % io.starts.len();
            let at = io.starts[chosen];
            if at != self.policy.primary(first).unwrap_or(first * BS) {
                self.served_from_replica += 1;
            }
            for j in 0..io.sectors / BS {
                let logical = first + j;
                let got = self.store.get(&(at + j * BS)).copied();
                if let Some((old, new)) = self.either.remove(&logical) {
                    // A write lost in flight at a crash: either version, and that one from now on.
                    // (A block never written before may hold anything but the new version.)
                    let v = got.filter(|g| g.0 == logical).map(|g| g.1);
                    prop_assert!(v == Some(new) || v == old || old.is_none(), "block {logical} after a crash: got {got:?}, want {old:?} or {new}");
                    if v == Some(new) {
                        self.acked.insert(logical, new);
                    } else if let Some(o) = old {
                        self.acked.insert(logical, o);
                    }
                    continue;
                }
                if let Some(&v) = self.acked.get(&logical) {
                    prop_assert_eq!(got, Some((logical, v)), "read of block {} at sector {} (copy {} of {:?})", logical, at + j * BS, chosen, io.starts);
                }
            }
            first += io.sectors / BS;
            self.complete(&io, chosen, true)?;
        }
        Ok(())
    }

    fn trim(&mut self, b: u64, n: u64) -> Result<(), TestCaseError> {
        if (b..b + n).any(|x| self.writes_in_flight.contains_key(&x)) {
            return Ok(());
        }
        self.policy.trim(b, n).map_err(|e| TestCaseError::fail(format!("trim: {e}")))?;
        for x in b..b + n {
            self.acked.remove(&x);
            self.either.remove(&x);
        }
        Ok(())
    }

    fn serve(&mut self, pick: u8) -> Result<(), TestCaseError> {
        let total = self.user.len() + self.own.len();
        if total == 0 {
            return Ok(());
        }
        let i = pick as usize % total;
        if i < self.user.len() {
            let (io, v, blocks) = self.user.remove(i);
            for (j, &x) in blocks.iter().enumerate() {
                self.store.insert(io.starts[0] + j as u64 * BS, (x, v));
            }
            self.complete(&io, 0, true)?;
            for x in blocks {
                let n = self.writes_in_flight.get_mut(&x).unwrap();
                *n -= 1;
                if *n == 0 {
                    self.writes_in_flight.remove(&x);
                }
                self.acked.insert(x, v);
                self.either.remove(&x);
            }
            return Ok(());
        }
        let io = self.own.remove(i - self.user.len());
        prop_assert!(io.tag & OWN != 0);
        let blocks = io.sectors / BS;
        if io.op.is_read() {
            let data: Vec<Val> = (0..blocks).map(|j| self.store.get(&(io.starts[0] + j * BS)).copied().unwrap_or((u64::MAX, 0))).collect();
            self.job_data.entry(io.tag).or_default().push((io.starts[0], data));
        } else {
            let order = self.job_order.remove(&io.tag).unwrap_or_default();
            let reads = self.job_data.remove(&io.tag).unwrap_or_default();
            let mut data = Vec::new();
            for start in order {
                let d = reads.iter().find(|(s, _)| *s == start).map(|(_, d)| d.clone());
                prop_assert!(d.is_some(), "a job wrote before all its sources were read");
                data.extend(d.unwrap());
            }
            prop_assert_eq!(data.len() as u64, blocks, "a job's write covers its sources");
            for (j, val) in data.into_iter().enumerate() {
                self.store.insert(io.starts[0] + j as u64 * BS, val);
            }
        }
        self.complete(&io, 0, false)
    }

    fn crash(&mut self) -> Result<(), TestCaseError> {
        let storage = self.policy.journal_storage().clone();
        let (p, _) = Fs2::recover(&self.disk, self.cfg.clone(), storage).map_err(|e| TestCaseError::fail(format!("recover: {e}")))?;
        self.policy = p;
        // Writes in flight never happened, or happened whole; policy I/O under way is gone.
        for (_, v, blocks) in std::mem::take(&mut self.user) {
            for x in blocks {
                self.either.insert(x, (self.acked.get(&x).copied(), v));
                self.acked.remove(&x);
            }
        }
        self.writes_in_flight.clear();
        self.own.clear();
        self.job_data.clear();
        self.job_order.clear();
        let problems = check(self.policy.map(), self.policy.table(), self.cfg.max_replicas);
        prop_assert!(problems.is_empty(), "after recovery: {:?}", problems);
        Ok(())
    }
}

fn run_steps(nearest: Nearest, max_replicas: u32, steps: &[Step]) -> Result<u64, TestCaseError> {
    let mut h = Harness::new(nearest, max_replicas);
    for s in steps {
        match *s {
            Step::Write(b, n) => h.write(b, n)?,
            Step::Read(b, n, p) => h.read(b, n, p)?,
            Step::Trim(b, n) => h.trim(b, n)?,
            Step::Serve(p) => h.serve(p)?,
            Step::Crash => h.crash()?,
        }
        h.policy.map().check().map_err(|e| TestCaseError::fail(format!("map: {e}")))?;
    }
    Ok(h.served_from_replica)
}

#[test]
fn nothing_lost_through_replication_writes_trims_and_crashes() {
    let mut runner = TestRunner::new(Config { cases: 48, failure_persistence: None, ..Config::default() });
    let mut from_replicas = 0;
    let strategy = (prop_oneof![Just(Nearest::Positioning), Just(Nearest::Lbn)], 1u32..3, proptest::collection::vec(step(), 20..160));
    let total = std::sync::Mutex::new(0u64);
    runner
        .run(&strategy, |(nearest, max, steps)| {
            let n = run_steps(nearest, max, &steps)?;
            *total.lock().unwrap() += n;
            Ok(())
        })
        .unwrap();
    from_replicas += *total.lock().unwrap();
    // The property is only worth something if replicas were actually read.
    assert!(from_replicas > 0, "no read was ever served from a replica");
}

#[test]
fn a_scripted_pattern_replicates_reads_the_replica_and_a_write_invalidates_it() {
    // Hot blocks 0..3, far block 9000 read between them: it is replicated near block 0.
    let mut h = Harness::new(Nearest::Positioning, 1);
    for b in [0u64, 1, 2, 3, 9000, 9001] {
        h.write(b, 1).unwrap();
    }
    while !h.user.is_empty() {
        h.serve(0).unwrap();
    }
    for _ in 0..30 {
        for b in [0u64, 9000, 1, 9001, 2, 3] {
            h.read(b, 1, 1).unwrap();
        }
        while !h.own.is_empty() {
            h.serve(0).unwrap();
        }
    }
    let replicas = h.policy.map().read(9000).unwrap().copies;
    assert_eq!(replicas.len(), 2, "block 9000 got a replica: {replicas:?}");
    assert!(replicas[1] < 64 * 8 * 4, "the replica is near the hot region: {replicas:?}");
    assert!(h.served_from_replica > 0);
    h.write(9000, 1).unwrap();
    assert_eq!(h.policy.map().read(9000).unwrap().copies.len(), 1, "the write invalidated the replica at once");
    while !h.user.is_empty() {
        h.serve(0).unwrap();
    }
    h.read(9000, 1, 1).unwrap();
}

#[test]
fn filling_the_disk_to_99_percent_refuses_no_write_and_drops_replicas_at_the_watermarks() {
    // Replicas unread for 1000 requests are cold: the low watermark drops them.
    let r = fill_to_99(1000);
    assert!(r.dropped_low > 0, "cold replicas dropped at the low watermark");
    // Nothing is cold for a million requests: the low watermark finds nothing to drop, and the
    // critical one gives whole regions back.
    let r = fill_to_99(1_000_000);
    assert_eq!(r.dropped_low, 0);
    assert!(r.dropped_critical > 0, "whole regions dropped at the critical watermark");
}

fn fill_to_99(recent_requests: u64) -> freeblock::layout::fs2::Fs2Report {
    // Replicas first, then a user who writes new blocks until 99% of the disk holds data.
    let disk = disk();
    let cfg = Fs2Config { fill: 0.5, region_blocks: 256, window: 3, threshold: 1, epoch_accesses: 32, batch_blocks: 16, recent_requests, ..Fs2Config::default() };
    let blocks = disk.capacity() / BS;
    // FS2-static fills free space with replicas of the first data blocks, up to the high watermark.
    let statics = vec![StaticExtent { first: 0, blocks: blocks / 4 }];
    let mut h = Harness::new(Nearest::Positioning, 1);
    h.cfg = Fs2Config { mode: Mode::Static, static_blocks: statics, ..cfg };
    h.policy = Fs2::new(&h.disk, h.cfg.clone()).unwrap();
    let start = h.policy.fs2_report();
    println!("start: {} replicas, free share {:.3}", start.replicas_made, h.policy.free_share());
    assert!(start.replicas_made > 1000, "static replicas made: {}", start.replicas_made);
    // Write every block not yet holding data, from the disk's ends toward its middle (where the
    // replicas are), until 99% do.
    let mid = blocks / 2;
    let mut order: Vec<u64> = (0..blocks).collect();
    order.sort_by_key(|&b| std::cmp::Reverse(b.abs_diff(mid)));
    let mut written = 0u64;
    for b in order {
        let s = h.policy.map().stats();
        let data = s.mapped + s.pinned;
        if data as f64 >= 0.99 * s.total as f64 {
            break;
        }
        if h.policy.primary(b).is_none() {
            h.write(b, 1).unwrap();
            while !h.user.is_empty() {
                h.serve(0).unwrap();
            }
            written += 1;
        }
    }
    let r = h.policy.fs2_report();
    let s = h.policy.map().stats();
    println!(
        "recent_requests {recent_requests}: user blocks written: {written}; data {:.1}% of the disk; replicas made {}, alive {}, dropped at low {}, at critical {}, evicted by allocation {}, relocated allocations {}, suspensions {}, min free share {:.3}",
        100.0 * (s.mapped + s.pinned) as f64 / s.total as f64,
        r.replicas_made,
        r.replicas_alive,
        r.dropped_low,
        r.dropped_critical,
        r.evicted_by_allocation,
        r.relocated_allocations,
        r.suspensions,
        r.min_free_share
    );
    assert!((s.mapped + s.pinned) as f64 >= 0.99 * s.total as f64, "the disk reached 99% user data");
    assert!(r.dropped_low + r.dropped_critical + r.evicted_by_allocation >= start.replicas_made - r.replicas_alive, "every replica gone was dropped or evicted");
    assert!(r.suspensions >= 1);
    assert!(r.replicas_alive < start.replicas_made);
    // Every write acknowledged is readable, at its primary or any copy.
    for (&blk, &v) in h.acked.clone().iter() {
        let loc = h.policy.map().read(blk).expect("written blocks hold data");
        for c in loc.copies {
            assert_eq!(h.store.get(&c), Some(&(blk, v)), "block {blk} at {c}");
        }
    }
    r
}

#[test]
fn bad_input_gets_clear_errors() {
    let d = disk();
    let bad = Fs2Config { watermarks: Watermarks { high: 0.05, low: 0.10, critical: 0.15 }, ..Fs2Config::default() };
    let e = Fs2::new(&d, bad).unwrap_err().to_string();
    assert!(e.contains("watermarks") && e.contains("critical < low < high"), "{e}");
    let e = Fs2::new(&d, Fs2Config { fill: 1.5, ..Fs2Config::default() }).unwrap_err().to_string();
    assert!(e.contains("layout.fill = 1.5"), "{e}");
    let e = Fs2::new(&d, Fs2Config { mode: Mode::Static, ..Fs2Config::default() }).unwrap_err().to_string();
    assert!(e.contains("static_blocks"), "{e}");
    let e = Fs2::new(&d, Fs2Config { mode: Mode::Static, static_blocks: vec![StaticExtent { first: u64::MAX / 2, blocks: 3 }], ..Fs2Config::default() }).unwrap_err().to_string();
    assert!(e.contains("static_blocks[0]") && e.contains("past the disk"), "{e}");
    // An unknown key in an experiment's [layout] table is named.
    let text = "[workload]\ntype = \"random\"\n[layout]\ntype = \"fs2\"\nwatermark = 0.1\n";
    let e = Experiment::from_toml_str(text, "exp.toml", std::path::Path::new(".")).unwrap_err().to_string();
    assert!(e.contains("exp.toml") && e.contains("watermark"), "{e}");
    let text = "[workload]\ntype = \"random\"\n[layout]\ntype = \"fs2\"\nwatermarks = { high = 0.1, low = 0.1, critical = 0.05 }\n";
    let exp = Experiment::from_toml_str(text, "exp.toml", std::path::Path::new(".")).unwrap();
    let Err(e) = exp.layout.unwrap().build(&d) else { panic!("watermarks out of order were accepted") };
    let e = e.to_string();
    assert!(e.contains("low = 0.1") && e.contains("high = 0.1"), "{e}");
}

#[test]
fn recovery_refuses_a_map_that_breaks_the_replica_limit() {
    // A policy allowing two replicas, recovered under a limit of one: a table that does not
    // match its rules is named, not silently trimmed.
    let mut h = Harness::new(Nearest::Positioning, 2);
    for b in [0u64, 1, 9000] {
        h.write(b, 1).unwrap();
        h.serve(0).unwrap();
    }
    for _ in 0..60 {
        for b in [0u64, 9000, 1] {
            h.read(b, 1, 0).unwrap();
        }
        while !h.own.is_empty() {
            h.serve(0).unwrap();
        }
    }
    assert_eq!(h.policy.map().read(9000).unwrap().copies.len(), 3, "two replicas of 9000");
    let storage = h.policy.journal_storage().clone();
    let e = Fs2::recover(&h.disk, config(Nearest::Positioning, 1), storage).unwrap_err().to_string();
    assert!(e.contains("replica table does not match") && e.contains("max_replicas = 1"), "{e}");
}

/// Issue 32 item 7: free service on a disk with its cache on is refused with an error naming the
/// setting, both when an experiment builds the policy and when a policy built directly submits
/// its first free I/O mid-run (that path used to panic).
#[test]
fn free_service_on_a_cached_disk_is_refused_not_a_panic() {
    use freeblock::sim::{SimConfig, Simulation};
    use freeblock::workload::{DaysSpec, WorkloadSpec};
    use freeblock_disk::{CacheSpec, DiskSpec};
    use std::sync::Arc;
    let spec = library::get("wd800").unwrap();
    let cached = DiskSpec { cache: CacheSpec { enabled: true, ..spec.cache.clone() }, ..spec };
    let disk = Arc::new(Disk::new(cached).unwrap());
    let free = Fs2Config { service: Service::Free, ..Fs2Config::default() };
    // Built directly, the policy runs until its first free I/O, then the run stops with an error.
    let days = DaysSpec { days: 1, requests_per_day: 3000, day_s: 3600.0, rate_per_s: Some(2.0), block_sectors: 8, ..DaysSpec::default() };
    let w = WorkloadSpec::Days(days).build(disk.capacity(), 3).unwrap();
    let fs2 = Fs2::new(&disk, free).unwrap();
    let e = Simulation::new(Arc::clone(&disk), w, SimConfig::default()).with_layout(Box::new(fs2)).run(None).unwrap_err().to_string();
    assert!(e.contains("service = \"free\"") && e.contains("cache = false"), "{e}");
    // The same policy with foreground service runs on the cached disk.
    let days = DaysSpec { days: 1, requests_per_day: 3000, day_s: 3600.0, rate_per_s: Some(2.0), block_sectors: 8, ..DaysSpec::default() };
    let w = WorkloadSpec::Days(days).build(disk.capacity(), 3).unwrap();
    let fs2 = Fs2::new(&disk, Fs2Config { service: Service::Foreground, ..Fs2Config::default() }).unwrap();
    Simulation::new(Arc::clone(&disk), w, SimConfig::default()).with_layout(Box::new(fs2)).run(None).unwrap();
    // Through an experiment file, refused before the run starts.
    let text = "[disk]\nname = \"wd800\"\ncache = true\n[workload]\ntype = \"random\"\n[layout]\ntype = \"fs2\"\nservice = \"free\"\n";
    let exp = Experiment::from_toml_str(text, "exp.toml", std::path::Path::new(".")).unwrap();
    let Err(e) = exp.layout.as_ref().unwrap().build(&disk) else { panic!("free service on a cached disk was accepted") };
    let e = e.to_string();
    assert!(e.contains("layout.service = \"free\"") && e.contains("cache = false"), "{e}");
}

/// Issue 32, "invalidated runs re-placed contiguously": writes invalidate two replicas of a run
/// of four; once the blocks are candidates again they go back into their old places, so the run
/// is whole and one read of all four blocks is served from it. Without the refill the two go
/// together wherever a new batch of two fits, and the run stays broken.
#[test]
fn invalidated_replicas_go_back_into_their_places_so_the_run_is_whole_again() {
    let run = |refill: bool| {
        let mut h = Harness::new(Nearest::Lbn, 1);
        h.cfg = Fs2Config { threshold: 2, refill_invalidated: refill, ..h.cfg.clone() };
        h.policy = Fs2::new(&h.disk, h.cfg.clone()).unwrap();
        let drain = |h: &mut Harness| {
            while !h.user.is_empty() || !h.own.is_empty() {
                h.serve(0).unwrap();
            }
        };
        for b in [0u64, 1, 2, 3, 4, 5, 6, 7, 9000, 9001, 9002, 9003] {
            h.write(b, 1).unwrap();
        }
        drain(&mut h);
        // Hot blocks 0..7 with 9000..9003 read one by one among them: one run of four replicas.
        let round = |h: &mut Harness| {
            for b in [0u64, 9000, 1, 9001, 2, 9002, 3, 9003, 4, 5, 6, 7] {
                h.read(b, 1, 0).unwrap();
                drain(h);
            }
        };
        // The first 16 accesses find the hot region; counting starts after them.
        for b in 4..8 {
            h.read(b, 1, 0).unwrap();
            drain(&mut h);
        }
        for _ in 0..6 {
            round(&mut h);
        }
        let replica = |h: &Harness, b: u64| h.policy.map().read(b).unwrap().copies.get(1).copied();
        let first = replica(&h, 9000).expect("9000 replicated");
        let run_places: Vec<Option<u64>> = (0..4).map(|j| Some(first + j * BS)).collect();
        assert_eq!((9000..9004).map(|b| replica(&h, b)).collect::<Vec<_>>(), run_places, "one contiguous run in access order");
        for b in [9001, 9003] {
            h.write(b, 1).unwrap();
        }
        drain(&mut h);
        assert_eq!((replica(&h, 9001), replica(&h, 9003)), (None, None), "the writes invalidated the replicas");
        assert_eq!(h.policy.fs2_report().hot_region_changes, 0, "region 0 stays the hot region");
        for _ in 0..4 {
            round(&mut h);
        }
        let before = h.served_from_replica;
        h.read(9000, 4, 0).unwrap();
        drain(&mut h);
        let places: Vec<Option<u64>> = (9000..9004).map(|b| replica(&h, b)).collect();
        (run_places, places, h.served_from_replica - before, h.policy.fs2_report())
    };
    let (run_places, places, whole_run_reads, report) = run(true);
    assert_eq!(places, run_places, "9001 and 9003 are back in their places: {report:?}");
    assert_eq!(whole_run_reads, 1, "a read of 9000..9003 is served from the run");
    assert_eq!((report.refilled, report.refill_places_lost), (2, 0));
    let (run_places, places, whole_run_reads, report) = run(false);
    assert!(places.iter().all(Option::is_some), "the two are replicated again: {places:?}");
    assert_ne!(places, run_places, "without the refill they go elsewhere");
    assert_eq!(whole_run_reads, 0, "the broken run serves no read of all four blocks");
    assert_eq!(report.refilled, 0);
}
