//! The synthetic workload of Western Digital's g4 `.parv` run (`G4_LBA_64bit_4T.parv`, its
//! `disksim_synthio` block, run by `run_synthio_LBA_64bit` with 1,000,000 requests), served by
//! freeblock's model of the imported `wd_g4_4t` drive, and its figures printed. The default is the
//! `.parv`'s own 10,000 requests; pass 1000000 for the run script's count (minutes: the FCFS queue
//! grows without bound, below).
//!
//! ```text
//! cargo run --release -p freeblock --example g4_synthio [-- REQUESTS]
//! ```
//!
//! The workload, as the `.parv` gives it (../shared/disksim-models-wd/README.md tables it):
//!
//! | per generator (six alike) | value |
//! |---|---|
//! | arrivals | open, exponential gaps of mean 50 ms (no time-critical or time-limited requests) |
//! | start | P 0.2 sequential (right after this generator's last request), P 0.3 local (its last start + normal(0, variance 40,000) sectors), else uniform over the 7,542,225,919 sectors the generator names |
//! | size | exponential of mean 8 sectors |
//! | blocking factor 8 | starts rounded down and sizes up to multiples of 8 sectors (at least 8) |
//! | reads | P 0.66 |
//!
//! DiskSim takes a normal distribution's second parameter as its variance, so local starts fall
//! within about ±200 sectors (the fork's README reads it as a standard deviation of 40,000). The
//! driver and the disk both queue FCFS; the runs use FCFS, and one SPTF run shows what reordering
//! the queue (as a drive's firmware queue would) does to the same stream. Each generator draws from its own
//! seeded generator, so the stream is the same on every run, but it is not DiskSim's stream (its
//! random number generator is not reproduced).
//!
//! At 120 requests/s offered, FCFS overloads the drive: the sequential and local requests of six
//! interleaved generators are random to the head, so nearly every request costs a random access
//! (about 11.6 ms), and the queue grows for the whole run. The example says so beside its figures.
//!
//! DiskSim's figures for this run: none exist. The fork's output file
//! (`G4_LBA_64bit_4T_synthio.outv`) stops after initialisation and holds no statistics, and the
//! fork publishes none elsewhere; the example says so beside ours.

use std::sync::Arc;

use freeblock::request::Request;
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{ArrivalKind, Workload, WorkloadError};
use freeblock_disk::{library, Disk, Op, SimTime};
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Normal};

/// The `.parv`'s generator settings (all six generators are alike).
const GENERATORS: usize = 6;
const CAPACITY_NAMED: u64 = 7_542_225_919;
const BLOCKING: u64 = 8;
const P_SEQUENTIAL: f64 = 0.2;
const P_LOCAL: f64 = 0.3;
const P_READ: f64 = 0.66;
const MEAN_GAP_MS: f64 = 50.0;
const LOCAL_VARIANCE: f64 = 40_000.0;
const MEAN_SIZE_SECTORS: f64 = 8.0;
/// The `.parv`'s seed.
const SEED: u64 = 42;

/// One `disksim_synthgen`: its next arrival and where its last request was.
struct Generator {
    rng: ChaCha8Rng,
    next_ns: f64,
    last_start: u64,
    last_end: u64,
}

/// The six generators merged in arrival order.
struct Synthio {
    generators: Vec<Generator>,
    remaining: u64,
    gap: Exp<f64>,
    local: Normal<f64>,
    size: Exp<f64>,
}

impl Synthio {
    fn new(requests: u64) -> Self {
        let gap = Exp::new(1.0 / MEAN_GAP_MS).expect("positive rate");
        let generators = (0..GENERATORS)
            .map(|g| {
                let mut rng = ChaCha8Rng::seed_from_u64(SEED + g as u64);
                let next_ns = gap.sample(&mut rng) * 1e6;
                let last_start = rng.gen_range(0..CAPACITY_NAMED) / BLOCKING * BLOCKING;
                Generator { rng, next_ns, last_start, last_end: last_start + BLOCKING }
            })
            .collect();
        Self { generators, remaining: requests, gap, local: Normal::new(0.0, LOCAL_VARIANCE.sqrt()).expect("finite"), size: Exp::new(1.0 / MEAN_SIZE_SECTORS).expect("positive rate") }
    }
}

impl Workload for Synthio {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        let (gap, local, size) = (self.gap, self.local, self.size);
        let g = self.generators.iter_mut().min_by(|a, b| a.next_ns.total_cmp(&b.next_ns)).expect("six generators");
        let time = g.next_ns as SimTime;
        let sectors = ((size.sample(&mut g.rng) / BLOCKING as f64).ceil().max(1.0) as u64) * BLOCKING;
        let kind: f64 = g.rng.gen();
        let start = if kind < P_SEQUENTIAL {
            g.last_end
        } else if kind < P_SEQUENTIAL + P_LOCAL {
            (g.last_start as f64 + local.sample(&mut g.rng)).max(0.0) as u64
        } else {
            g.rng.gen_range(0..CAPACITY_NAMED)
        };
        // Blocking factor, and the request kept inside the capacity the generator names.
        let start = (start / BLOCKING * BLOCKING).min((CAPACITY_NAMED - sectors) / BLOCKING * BLOCKING);
        let op = if g.rng.gen_bool(P_READ) { Op::Read } else { Op::Write };
        (g.last_start, g.last_end) = (start, start + sectors);
        g.next_ns += gap.sample(&mut g.rng) * 1e6;
        Ok(Some(Request::new(time, start, sectors as u32, op)))
    }

    fn arrival(&self) -> ArrivalKind {
        ArrivalKind::Open
    }
}

fn main() {
    let requests: u64 = std::env::args().nth(1).map_or(10_000, |a| a.parse().expect("REQUESTS must be a whole number"));
    println!("g4 .parv synthio workload: {requests} requests, {GENERATORS} generators (P seq {P_SEQUENTIAL}, local {P_LOCAL}, read {P_READ}, 50 ms mean gaps each) on wd_g4_4t");
    println!("{:<34} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>8}", "model", "mean ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "read ms", "write ms", "IO/s");
    let offered_per_s = GENERATORS as f64 * 1000.0 / MEAN_GAP_MS;
    let runs = [
        ("FCFS, cache as its files say", SchedulerSpec::Fcfs, true),
        ("FCFS, media only (cache off)", SchedulerSpec::Fcfs, false),
        ("SPTF, media only (not the .parv)", SchedulerSpec::Sptf, false),
    ];
    for (label, scheduler, cache) in runs {
        let spec = library::get("wd_g4_4t").expect("built-in");
        let disk = Arc::new(Disk::new(if cache { spec } else { spec.without_cache() }).expect("valid spec"));
        let config = SimConfig { scheduler, ..SimConfig::default() };
        let report = Simulation::new(disk, Box::new(Synthio::new(requests)), config).run(None).expect("the run completes");
        let r = &report.response;
        println!(
            "{label:<34} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.1} {:>10.3} {:>10.3} {:>8.1}",
            r.mean_ms, r.p50_ms, r.p90_ms, r.p99_ms, r.max_ms, report.read_response.mean_ms, report.write_response.mean_ms, report.throughput_per_s
        );
        if report.throughput_per_s < 0.95 * offered_per_s {
            println!("  overloaded: {offered_per_s:.0} requests/s offered, {:.1}/s served; the queue grows all run, so the response times grow with its length", report.throughput_per_s);
        }
    }
    println!("{:<34} {:>9}", "DiskSim (fork's .outv)", "none: the output file holds no statistics, and the fork publishes none");
}
