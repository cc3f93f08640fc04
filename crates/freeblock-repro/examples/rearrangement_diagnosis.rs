//! Where the head still moves on paper 002's rearranged days: the measurements behind docs/cli.md's
//! "The paper's mix" for `freeblock repro rearrangement`.
//!
//! ```text
//! cargo run --release -p freeblock-repro --example rearrangement_diagnosis -- [SEED] [DAYS]
//! ```
//!
//! For the paper's mix as derived ([`freeblock_repro::p002_rearrangement::paper_mix`]), what-ifs
//! beside it, the previous derivation's settings and today's mix, it runs DAYS days (default 2:
//! off, on) and prints for each off day its zero-length seeks and mean seek time (all requests,
//! and the writes' zero-length seeks), and for each on day, all requests: zero-length seeks and
//! mean seek time, and every request that moved the head by kind
//! ([`freeblock_repro::p002_rearrangement::runs::SeekCauses`]: read or write, served in the area
//! or at home, after a request in the area or at home), with its share of requests and its part
//! of the mean seek time.

use freeblock_repro::p002_rearrangement::runs::{base_policy, run_days};
use freeblock_repro::p002_rearrangement::{paper_mix, RearrangementConfig};
use freeblock::layout::rearrange::{AreaConfig, TablePlace};
use freeblock::workload::{DaysSpec, WorkloadSpec};
use freeblock_disk::library;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1);
    let days: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(2);
    let base = RearrangementConfig::default();
    let mix = paper_mix(&base.workload);
    println!("paper's mix: {:?}", mix.spec);
    println!("  reads (handful, continuing, elsewhere) {:?}; Fig. 5 top-100 share {:.3}", mix.reads_handful_continuing_elsewhere, mix.fig5_top100_share);
    let variants: Vec<(&str, DaysSpec)> = vec![
        ("paper's mix (derived)", mix.spec.clone()),
        ("what-if: reads at the tables' bound, the rest derived at that share", freeblock_repro::p002_rearrangement::paper_mix_at(&base.workload, None).spec),
        ("what-if: no drift (the 5% is today's guess, not the paper's)", DaysSpec { drift: 0.0, ..mix.spec.clone() }),
        ("what-if: one Zipf law for the writes (no write_top_exponent: 83% of them on one block)", DaysSpec { write_top_exponent: None, ..mix.spec.clone() }),
        ("the earlier derivation (every rank a file, drift anywhere, writes 96% and reads by Fig. 5)", DaysSpec { metadata_handful: false, read_top_blocks: None, read_top_share: 0.66, read_sequential: 0.375, write_top_share: 0.96, hot_blocks: 1125, ..mix.spec.clone() }),
        ("today's mix (fig5)", base.workload.clone()),
    ];
    let disk = library::media(&base.disk)?;
    // The block table at the area's start (the paper's place) rather than in its middle (ours),
    // where it takes one of the centre cylinder's 21 slots from the handful.
    let table_at_start = || RearrangementConfig { area: AreaConfig { table_at: TablePlace::Start, ..base.area }, ..base.clone() };
    let runs: Vec<(&str, DaysSpec, RearrangementConfig)> = variants
        .into_iter()
        .map(|(label, spec)| (label, spec, base.clone()))
        .chain([("what-if: the paper's mix with the block table at the area's start (the paper's place)", mix.spec.clone(), table_at_start())])
        .collect();
    for (label, spec, setup) in runs {
        let spec = DaysSpec { days, ..spec };
        let cfg = RearrangementConfig { workload: spec.clone(), seed, ..setup };
        let (rows, _, _) = run_days(&disk, &WorkloadSpec::Days(spec.clone()), seed, cfg.scheduler, base_policy(&cfg), spec.day_ns(), label)?;
        println!("\n{label} (seed {seed})");
        for off in rows.days.iter().filter(|d| !d.on) {
            let writes = (off.all.requests - off.reads.requests) as f64;
            let writes_zero = (off.all.zero_seeks_pct * off.all.requests as f64 - off.reads.zero_seeks_pct * off.reads.requests as f64) / writes.max(1.0);
            println!("  day {} (off): zero-length seeks {:.1}%, seek {:.2} ms; writes {writes_zero:.1}% zero (paper: days 1/3 23/19%, 18.21/19.24 ms)", off.day + 1, off.all.zero_seeks_pct, off.all.seek_ms);
        }
        for on in rows.days.iter().filter(|d| d.on) {
            let c = &rows.causes[on.day as usize];
            println!(
                "  day {}: zero-length seeks {:.1}%, seek {:.2} ms; reads {:.1}% zero, {:.2} ms (bar: ≥ 80%, ≤ 2.0 ms; paper 88–92%, 0.98–1.55 ms); reads at home {}, writes at home {} of {} ({} of blocks unseen the day before)",
                on.day + 1,
                on.all.zero_seeks_pct,
                on.all.seek_ms,
                on.reads.zero_seeks_pct,
                on.reads.seek_ms,
                c.reads_at_home,
                c.writes_at_home,
                c.requests,
                c.at_home_unseen_before
            );
            for m in &c.moved {
                println!("    {} to {:?} after {:?}: {:.2}% of requests, {:.3} ms", if m.read { "read " } else { "write" }, m.to, m.from, c.pct(m), c.ms(m));
            }
        }
    }
    Ok(())
}
