//! Criterion benchmarks of the simulator's hot paths: the positioning prediction schedulers make,
//! a full media access, and whole runs (reported as simulated requests per second).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock::workload::{RandomSpec, WorkloadSpec};
use freeblock_disk::{library, Disk, HeadState, Op};

fn atlas() -> Arc<Disk> {
    Arc::new(Disk::new(library::get("atlas10k").unwrap()).unwrap())
}

fn disk_model(c: &mut Criterion) {
    let disk = atlas();
    let cap = disk.capacity();
    let targets: Vec<_> = (0..1024u64).map(|i| disk.target((i * 2_654_435_761) % cap).unwrap()).collect();
    let head = HeadState { cylinder: 5000, surface: 2 };
    let mut g = c.benchmark_group("disk");
    g.throughput(Throughput::Elements(targets.len() as u64));
    g.bench_function("positioning_to (1024 targets)", |b| {
        b.iter(|| targets.iter().map(|t| disk.positioning_to(head, 123_456, t, Op::Read).1).sum::<u64>());
    });
    g.bench_function("lbn_to_pbn (1024 LBNs)", |b| {
        b.iter(|| (0..1024u64).map(|i| u64::from(disk.layout().lbn_to_pbn((i * 2_654_435_761) % cap).unwrap().sector)).sum::<u64>());
    });
    let mut runs = Vec::new();
    g.bench_function("access 8 sectors (1024)", |b| {
        b.iter(|| (0..1024u64).map(|i| disk.access(head, 0, (i * 2_654_435_761) % (cap - 8), 8, Op::Read, &mut runs).unwrap().end).sum::<u64>());
    });
    g.finish();
}

fn end_to_end(c: &mut Criterion) {
    let disk = atlas();
    let n = 100_000u64;
    let mut g = c.benchmark_group("simulate 100k random 4 KB");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    for (s, mpl) in [(SchedulerSpec::Fcfs, 1), (SchedulerSpec::Fcfs, 8), (SchedulerSpec::Sptf, 8), (SchedulerSpec::Sptf, 32)] {
        g.bench_with_input(BenchmarkId::new(s.to_string(), mpl), &mpl, |b, &mpl| {
            b.iter(|| {
                let w = WorkloadSpec::Random(RandomSpec { count: Some(n), ..RandomSpec::default() }).build(disk.capacity(), 1).unwrap();
                Simulation::new(Arc::clone(&disk), w, SimConfig { scheduler: s, mpl, ..SimConfig::default() }).run(None).unwrap().requests
            });
        });
    }
    g.finish();
}

criterion_group!(benches, disk_model, end_to_end);
criterion_main!(benches);
