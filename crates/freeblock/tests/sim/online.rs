//! Online mode: requests handed over while the engine runs get the same per-request times as a
//! batch run of the same requests at the same arrival times.

use std::sync::{Arc, Mutex};

use freeblock::freeblock::{Freeblock, FreeblockConfig, PlannerKind, TaskSpec};
use freeblock::layout::rearrange::policy::{Moves, Rearrange, RearrangeConfig};
use freeblock::report::Record;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{OnlineNext, OnlineSource, SimConfig, Simulation};
use freeblock::workload::{ArrivalKind, Workload, WorkloadError};
use freeblock::Request;
use freeblock_disk::{Disk, Op, SimTime};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::atlas;

/// Open (Poisson) arrivals, mean gap `gap_ms`, 8 KB at 8 KB-aligned starts in the first
/// `span` sectors, a third writes. Times strictly increase.
fn requests(disk: &Disk, count: usize, gap_ms: f64, span: u64, seed: u64) -> Vec<Request> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let span = span.min(disk.capacity()) / 16;
    let mut t: SimTime = 0;
    (0..count)
        .map(|_| {
            let u: f64 = rng.gen_range(f64::EPSILON..1.0);
            t += 1 + (-u.ln() * gap_ms * 1e6) as SimTime;
            let op = if rng.gen_bool(1.0 / 3.0) { Op::Write } else { Op::Read };
            Request::new(t, rng.gen_range(0..span) * 16, 16, op)
        })
        .collect()
}

/// The requests as a batch workload.
struct Batch(std::collections::VecDeque<Request>);

impl Workload for Batch {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        Ok(self.0.pop_front())
    }
    fn arrival(&self) -> ArrivalKind {
        ArrivalKind::Open
    }
}

/// The same requests handed over one at a time, each only once the engine may run up to its
/// arrival, as a server's clients would; remembers which engine id each request got.
struct Scripted {
    left: std::collections::VecDeque<Request>,
    ids: Arc<Mutex<Vec<u64>>>,
}

impl OnlineSource for Scripted {
    fn next_arrival(&mut self, _now: SimTime, until: Option<SimTime>) -> Result<OnlineNext, WorkloadError> {
        match self.left.front() {
            None => Ok(OnlineNext::End),
            Some(r) if !matches!(until, Some(u) if r.time > u) => Ok(OnlineNext::Request(self.left.pop_front().unwrap())),
            Some(_) => Ok(OnlineNext::Later),
        }
    }
    fn accepted(&mut self, id: u64) {
        self.ids.lock().unwrap().push(id);
    }
}

fn times(records: &[Record]) -> Vec<(u64, SimTime, SimTime, SimTime, u64)> {
    records.iter().map(|r| (r.id, r.arrival_ns, r.start_ns, r.end_ns, r.phys_lbn)).collect()
}

type Setup = dyn Fn(Simulation<'static>) -> Simulation<'static>;

/// Runs `reqs` in batch and online under `config` (with `setup` adding freeblock or a layout
/// policy to both) and returns both runs' records.
fn both(disk: &Arc<Disk>, reqs: &[Request], config: SimConfig, setup: &Setup) -> (Vec<Record>, Vec<Record>, Vec<u64>) {
    let batch = setup(Simulation::new(Arc::clone(disk), Box::new(Batch(reqs.iter().copied().collect())), SimConfig { keep_records: true, ..config.clone() }))
        .run(None)
        .unwrap();
    let sunk = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&sunk);
    let ids = Arc::new(Mutex::new(Vec::new()));
    let source = Scripted { left: reqs.iter().copied().collect(), ids: Arc::clone(&ids) };
    let online = setup(Simulation::online(Arc::clone(disk), Box::new(source), config))
        .with_record_sink(Box::new(move |r| {
            sink.lock().unwrap().push(*r);
            Ok(())
        }))
        .run(None)
        .unwrap();
    assert_eq!(online.requests, batch.requests);
    let online_records = sunk.lock().unwrap().clone();
    let ids = ids.lock().unwrap().clone();
    (batch.records, online_records, ids)
}

fn plain(sim: Simulation<'static>) -> Simulation<'static> {
    sim
}

#[test]
fn online_requests_get_the_batch_times_under_each_scheduler() {
    let disk = atlas();
    // Gaps of 4 ms on a ~9 ms disk: queues build, so the scheduler has choices to make.
    let reqs = requests(&disk, 1500, 4.0, u64::MAX, 11);
    for (scheduler, depth) in [(SchedulerSpec::Fcfs, 0), (SchedulerSpec::Sptf, 8), (SchedulerSpec::Clook, 0)] {
        let config = SimConfig { scheduler, queue_depth: depth, ..SimConfig::default() };
        let (batch, online, ids) = both(&disk, &reqs, config, &plain);
        assert_eq!(batch.len(), reqs.len());
        assert_eq!(times(&batch), times(&online), "{scheduler}: an online request got another time");
        // Every request the source handed over was accepted under the id its record carries.
        let mut recorded: Vec<u64> = online.iter().map(|r| r.id).collect();
        recorded.sort_unstable();
        assert_eq!(recorded, ids);
        // Under a queue, completion order differs from arrival order somewhere (so matching by id matters).
        if depth == 8 {
            assert!(online.windows(2).any(|w| w[0].id > w[1].id), "SPTF never reordered: the test does not exercise it");
        }
    }
}

#[test]
fn background_work_runs_between_online_arrivals_as_in_batch() {
    let disk = atlas();
    // Sparse arrivals leave idle time; the freeblock scan works in it and in rotational latency.
    let reqs = requests(&disk, 600, 30.0, u64::MAX, 5);
    let with_scan: &Setup = &|sim: Simulation<'static>| {
        let cfg = FreeblockConfig {
            planner: PlannerKind::TwoTrack,
            idle_after_ms: Some(5.0),
            tasks: vec![TaskSpec::Scan { block_bytes: 4096, passes: 0, fraction: 1.0, first_lbn: None, blocks: None, next_pass_at: None, passes_in_flight: None }],
            ..FreeblockConfig::default()
        };
        sim.with_freeblock(Freeblock::new(atlas(), cfg).unwrap())
    };
    let config = SimConfig { scheduler: SchedulerSpec::Sptf, ..SimConfig::default() };
    let (batch, online, _) = both(&disk, &reqs, config, with_scan);
    assert_eq!(times(&batch), times(&online));
    // The scan moved something (idle-time work delays some arrivals' service): not vacuous.
    let alone = both(&disk, &reqs, SimConfig { scheduler: SchedulerSpec::Sptf, ..SimConfig::default() }, &plain).0;
    assert_ne!(times(&alone), times(&online), "the scan changed nothing: it never ran");
}

#[test]
fn a_layout_policy_moves_blocks_between_online_arrivals_as_in_batch() {
    let disk = atlas();
    // A hot spot (200 blocks of 8 KB) and a short period, so rearrangement moves blocks mid-run.
    let reqs = requests(&disk, 3000, 5.0, 3200, 3);
    let rearrange: &Setup = &|sim: Simulation<'static>| {
        let cfg = RearrangeConfig { period_s: 2.0, moves: Moves::Foreground, ..RearrangeConfig::default() };
        sim.with_layout(Box::new(Rearrange::new(&atlas(), cfg).unwrap()))
    };
    let (batch, online, _) = both(&disk, &reqs, SimConfig::default(), rearrange);
    assert_eq!(times(&batch), times(&online));
    assert!(online.iter().any(|r| r.phys_lbn != r.lbn), "no request was redirected: rearrangement never ran");
}

/// [`Scripted`], noting every layout timer the engine announces before it handles it.
struct Announcing {
    inner: Scripted,
    timers: Arc<Mutex<Vec<SimTime>>>,
}

impl OnlineSource for Announcing {
    fn next_arrival(&mut self, now: SimTime, until: Option<SimTime>) -> Result<OnlineNext, WorkloadError> {
        self.inner.next_arrival(now, until)
    }
    fn accepted(&mut self, id: u64) {
        self.inner.accepted(id);
    }
    fn before_timer(&mut self, at: SimTime) {
        self.timers.lock().unwrap().push(at);
    }
}

#[test]
fn a_layout_timer_is_announced_to_the_source_when_no_request_waits() {
    let disk = atlas();
    // Sparse arrivals (50 ms apart on a ~6 ms disk): at most period ends the engine is empty.
    let reqs = requests(&disk, 300, 50.0, 3200, 3);
    let period_ns: SimTime = 2_000_000_000;
    let cfg = RearrangeConfig { period_s: 2.0, moves: Moves::Foreground, ..RearrangeConfig::default() };
    let timers = Arc::new(Mutex::new(Vec::new()));
    let source = Announcing { inner: Scripted { left: reqs.iter().copied().collect(), ids: Arc::default() }, timers: Arc::clone(&timers) };
    let report = Simulation::online(Arc::clone(&disk), Box::new(source), SimConfig::default()).with_layout(Box::new(Rearrange::new(&atlas(), cfg).unwrap())).run(None).unwrap();
    assert_eq!(report.requests, reqs.len() as u64);
    let timers = timers.lock().unwrap().clone();
    let last = reqs.last().unwrap().time;
    // Only the period ends, in order (again after each request that came before one), and
    // none past the last arrival's period (the run is over then).
    assert!(timers.windows(2).all(|w| w[0] <= w[1]), "{timers:?}");
    let mut distinct = timers.clone();
    distinct.dedup();
    assert!(distinct.len() >= 3, "announced {distinct:?}");
    assert!(timers.iter().all(|&t| t % period_ns == 0 && t <= last + period_ns), "{timers:?}");
}

#[path = "../support/picky_layout.rs"]
mod picky_layout;

use picky_layout::Picky;

/// [`Scripted`], answering refusals itself (as a server answers its client) instead of stopping
/// the run.
struct Forgiving {
    inner: Scripted,
    refused: Arc<Mutex<Vec<(u64, String)>>>,
}

impl OnlineSource for Forgiving {
    fn next_arrival(&mut self, now: SimTime, until: Option<SimTime>) -> Result<OnlineNext, WorkloadError> {
        self.inner.next_arrival(now, until)
    }
    fn accepted(&mut self, id: u64) {
        self.inner.accepted(id);
    }
    fn refused(&mut self, id: u64, error: freeblock::Error) -> freeblock::Result<()> {
        self.refused.lock().unwrap().push((id, error.to_string()));
        Ok(())
    }
}

#[test]
fn a_refused_online_request_fails_alone_when_its_source_answers_it() {
    let disk = atlas();
    let reqs = requests(&disk, 400, 2.0, 1 << 20, 7);
    let every = 48;
    let refusable = reqs.iter().filter(|r| r.lbn % every == 0).count();
    assert!(refusable > 5 && refusable < reqs.len() / 2, "{refusable} of {} requests start on a multiple of {every}", reqs.len());
    let config = SimConfig { scheduler: SchedulerSpec::Sptf, queue_depth: 4, ..SimConfig::default() };
    // Batch: the first refusal stops the run, naming the request.
    let err = Simulation::new(Arc::clone(&disk), Box::new(Batch(reqs.iter().copied().collect())), config.clone()).with_layout(Box::new(Picky { every })).run(None).unwrap_err().to_string();
    assert!(err.contains("is refused"), "{err}");
    // Online, a source that does not answer refusals stops the same way (the default).
    let plain = Scripted { left: reqs.iter().copied().collect(), ids: Arc::default() };
    let err = Simulation::online(Arc::clone(&disk), Box::new(plain), config.clone()).with_layout(Box::new(Picky { every })).run(None).unwrap_err().to_string();
    assert!(err.contains("is refused"), "{err}");
    // Online, a source that answers them: every other request is served, in a run that goes on.
    let refused = Arc::new(Mutex::new(Vec::new()));
    let ids = Arc::new(Mutex::new(Vec::new()));
    let source = Forgiving { inner: Scripted { left: reqs.iter().copied().collect(), ids: Arc::clone(&ids) }, refused: Arc::clone(&refused) };
    let served = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&served);
    Simulation::online(Arc::clone(&disk), Box::new(source), config)
        .with_layout(Box::new(Picky { every }))
        .with_record_sink(Box::new(move |r| {
            sink.lock().unwrap().push(*r);
            Ok(())
        }))
        .run(None)
        .unwrap();
    let (refused, served, ids) = (refused.lock().unwrap(), served.lock().unwrap(), ids.lock().unwrap());
    assert_eq!(refused.len(), refusable);
    assert!(refused.iter().all(|(_, e)| e.contains("is refused")), "{refused:?}");
    assert_eq!(served.len(), reqs.len() - refusable, "every request not refused is served");
    // Each request has one outcome: served or refused, by its engine id.
    let mut outcomes: Vec<u64> = served.iter().map(|r| r.id).chain(refused.iter().map(|(id, _)| *id)).collect();
    outcomes.sort_unstable();
    assert_eq!(outcomes, *ids);
    assert!(served.iter().all(|r| r.lbn % every != 0));
    // The run went on after its first refusal.
    let first_refused = refused.iter().map(|(id, _)| *id).min().unwrap();
    assert!(served.iter().filter(|r| r.id > first_refused).count() > reqs.len() / 2, "the run went on after its first refusal");
}
