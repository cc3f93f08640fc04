//! Why the paper's mix misses paper 002's depth on the rearranged days: the measurements behind
//! docs/cli.md's "where it falls short" for `freeblock repro rearrangement`.
//!
//! ```text
//! cargo run --release -p freeblock --example rearrangement_diagnosis -- [SEED]
//! ```
//!
//! For the paper's mix as derived ([`freeblock::rearrangement::paper_mix`]) and for what-ifs that
//! change one thing each (not derived from the paper, and said so), it runs two days (off, on)
//! and prints for the on day, all requests: zero-length seeks and mean seek time; the writes'
//! zero-length seeks and why the others moved the head (the first write of an instant after a
//! request elsewhere, or a write off the previous request's cylinder inside its burst); the share
//! of writes and of reads served on the busiest cylinder (organ-pipe's centre); the reads'
//! zero-length seeks, and those of reads that continue their file.

use std::collections::HashMap;

use freeblock::rearrangement::{base_policy, paper_mix, paper_mix_at, run_days, RearrangementConfig};
use freeblock::workload::{DaysSpec, WorkloadSpec};
use freeblock_disk::library;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seed: u64 = std::env::args().nth(1).map(|s| s.parse()).transpose()?.unwrap_or(1);
    let base = RearrangementConfig::default();
    let mix = paper_mix(&base.workload).spec;
    let variants: Vec<(&str, DaysSpec)> = vec![
        ("paper's mix (derived)", mix.clone()),
        ("what-if: no drift", DaysSpec { drift: 0.0, ..mix.clone() }),
        ("what-if: no drift, the 21 hottest take 67% of file reads", DaysSpec { drift: 0.0, top_blocks: 21, read_top_share: 0.67, ..mix.clone() }),
        ("what-if: no drift, 67% of file reads on the 21 hottest, bursts of 8", DaysSpec { drift: 0.0, top_blocks: 21, read_top_share: 0.67, write_burst: 8.0, ..mix.clone() }),
        ("what-if: reads at half the tables' bound, the rest derived at that share", paper_mix_at(&base.workload, Some(mix.read_fraction / 2.0)).spec),
        ("today's mix (fig5)", base.workload.clone()),
    ];
    let disk = library::media(&base.disk)?;
    let cyl = |lbn: u64| disk.target(lbn).map_or(0, |t| t.cylinder);
    println!("seed {seed}; the on day (day 2) of an off, on pair, all requests");
    for (label, spec) in variants {
        let spec = DaysSpec { days: 2, ..spec };
        let cfg = RearrangementConfig { workload: spec.clone(), seed, ..base.clone() };
        let (rows, _, report) = run_days(&disk, &WorkloadSpec::Days(spec.clone()), seed, cfg.scheduler, base_policy(&cfg), spec.day_ns(), label)?;
        let on = rows.days.iter().find(|d| d.on).ok_or("no on day")?;
        let mut recs: Vec<_> = report.records.iter().filter(|r| r.arrival_ns >= spec.day_ns()).collect();
        recs.sort_by_key(|r| (r.start_ns, r.id));
        let mut per_cyl: HashMap<u32, u64> = HashMap::new();
        for r in &recs {
            *per_cyl.entry(cyl(r.phys_lbn)).or_default() += 1;
        }
        let centre = per_cyl.iter().max_by_key(|(c, n)| (**n, std::cmp::Reverse(**c))).map_or(0, |(c, _)| *c);
        let (mut writes, mut w_zero, mut w_first, mut w_inside, mut w_centre) = (0u64, 0u64, 0u64, 0u64, 0u64);
        let (mut reads, mut r_zero, mut r_centre, mut r_cont, mut r_cont_zero) = (0u64, 0u64, 0u64, 0u64, 0u64);
        for pair in recs.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let zero = cyl(a.phys_lbn) == cyl(b.phys_lbn);
            let same_instant = a.arrival_ns == b.arrival_ns && a.op == b.op;
            if b.op.is_read() {
                reads += 1;
                r_zero += u64::from(zero);
                r_centre += u64::from(cyl(b.phys_lbn) == centre);
                if same_instant {
                    r_cont += 1;
                    r_cont_zero += u64::from(zero);
                }
            } else {
                writes += 1;
                w_zero += u64::from(zero);
                w_centre += u64::from(cyl(b.phys_lbn) == centre);
                if !zero {
                    if same_instant {
                        w_inside += 1;
                    } else {
                        w_first += 1;
                    }
                }
            }
        }
        let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
        println!(
            "\n{label}: {:.1}% reads, bursts {:.1}, drift {}, the {} hottest take {:.0}% of writes",
            100.0 * spec.read_fraction,
            spec.write_burst,
            spec.drift,
            spec.write_top(),
            100.0 * spec.write_top_share
        );
        println!("  all: zero-length seeks {:.1}%, seek {:.2} ms (bar: ≥ 80%, ≤ 2.0 ms; paper 88–92%, 0.98–1.55 ms)", on.all.zero_seeks_pct, on.all.seek_ms);
        println!(
            "  writes: zero-length {:.1}% (the tables imply 96–99.7% at 27.7% reads); moved the head as the first of an instant {:.1}%, inside a burst {:.1}%; on the centre cylinder {:.1}%",
            pct(w_zero, writes),
            pct(w_first, writes),
            pct(w_inside, writes),
            pct(w_centre, writes)
        );
        println!(
            "  reads: zero-length {:.1}% (paper 67–72%); on the centre cylinder {:.1}%; {:.1}% continue their file, of which {:.1}% seek zero",
            pct(r_zero, reads),
            pct(r_centre, reads),
            pct(r_cont, reads),
            pct(r_cont_zero, r_cont)
        );
    }
    Ok(())
}
