//! Adaptive block rearrangement (paper 002) on the engine: the policy's effect, its moves served
//! four ways, and bad input.

use freeblock::layout::rearrange::policy::{Moves, Rearrange, RearrangeConfig};
use freeblock::layout::rearrange::AreaConfig;
use freeblock::rearrangement::{move_services, tables_2_3, RearrangementConfig};
use freeblock::workload::DaysSpec;
use freeblock_disk::library;

fn days(days: u32, requests_per_day: u64) -> RearrangementConfig {
    let d = RearrangementConfig::default();
    RearrangementConfig { workload: DaysSpec { days, requests_per_day, ..d.workload }, ..d }
}

#[test]
fn rearranged_days_cut_seek_time_by_more_than_half() {
    let rows = tables_2_3(&days(4, 20_000)).unwrap();
    let (off, on): (Vec<_>, Vec<_>) = rows.days.iter().partition(|d| !d.on);
    assert_eq!((off.len(), on.len()), (2, 2), "days alternate off and on");
    let mean = |v: &[&freeblock::rearrangement::DayRow], f: &dyn Fn(&freeblock::rearrangement::DayRow) -> f64| v.iter().map(|d| f(d)).sum::<f64>() / v.len() as f64;
    let (off_seek, on_seek) = (mean(&off, &|d| d.all.seek_ms), mean(&on, &|d| d.all.seek_ms));
    assert!(on_seek < off_seek / 2.0, "seek time {off_seek:.2} → {on_seek:.2} ms");
    // The arrival-order seeks are the workload's own: the same on every day.
    let (off_fcfs, on_fcfs) = (mean(&off, &|d| d.all.fcfs_seek_ms), mean(&on, &|d| d.all.fcfs_seek_ms));
    assert!((off_fcfs - on_fcfs).abs() < 0.1 * off_fcfs, "FCFS {off_fcfs:.2} vs {on_fcfs:.2}");
    // Rearrangement makes seeks of length zero common.
    assert!(mean(&on, &|d| d.all.zero_seeks_pct) > 2.0 * mean(&off, &|d| d.all.zero_seeks_pct));
    // Every move planned for an on day was made, three I/Os for each copy-in.
    for p in rows.policy.periods.iter().filter(|p| p.on) {
        assert_eq!(p.committed, p.moves, "period {}", p.period);
    }
    assert_eq!(rows.policy.aborted, 0, "foreground moves are never overtaken by a write");
}

#[test]
fn free_moves_cost_the_foreground_nothing() {
    // A busy day: enough foreground requests for free bandwidth to make most of the moves.
    let mut cfg = days(2, 200_000);
    cfg.workload.write_burst = 1.0;
    let m = move_services(&cfg, &|_| {}).unwrap();
    let free = m.runs.iter().find(|r| r.label == "free").unwrap();
    let on = free.policy.periods.iter().find(|p| p.on).unwrap();
    assert!(on.committed > on.moves / 2, "free moves committed {} of {}", on.committed, on.moves);
    assert_eq!(m.delayed_foreground, 0);
    assert_eq!(m.free_vs_costless_differing, 0, "of {} requests (max {} ns)", m.compared, m.max_difference_ns);
    assert!(m.compared > 0);
    // Foreground moves do delay the foreground, a little.
    let fg = m.runs.iter().find(|r| r.label == "foreground").unwrap();
    let instant = m.runs.iter().find(|r| r.label == "instant").unwrap();
    assert!(fg.response_ms >= instant.response_ms);
}

#[test]
fn bad_settings_are_named() {
    let disk = library::get("toshiba_mk156f").map(|s| freeblock_disk::Disk::new(s).unwrap()).unwrap();
    let err = |c: RearrangeConfig| Rearrange::new(&disk, c).unwrap_err().to_string();
    let e = err(RearrangeConfig { area: AreaConfig { cylinders: 900, ..AreaConfig::default() }, ..RearrangeConfig::default() });
    assert!(e.contains("cylinders") && e.contains("900"), "{e}");
    let e = err(RearrangeConfig { area: AreaConfig { first_cylinder: Some(800), ..AreaConfig::default() }, ..RearrangeConfig::default() });
    assert!(e.contains("800"), "{e}");
    let e = err(RearrangeConfig { blocks: Some(5000), ..RearrangeConfig::default() });
    assert!(e.contains("5000") && e.contains("slots"), "{e}");
    let e = err(RearrangeConfig { period_s: f64::NAN, ..RearrangeConfig::default() });
    assert!(e.contains("period_s"), "{e}");
    let e = err(RearrangeConfig { moves: Moves::Free, area: AreaConfig { block_sectors: 0, ..AreaConfig::default() }, ..RearrangeConfig::default() });
    assert!(e.contains("block_sectors"), "{e}");
}


/// The paper's mix as generated: per day, the write share, the writes' concentration on the 21
/// hottest blocks, the sequential reads, the write bursts and Fig. 5's skew are those its
/// parameters ask for.
#[test]
fn paper_mix_generator_has_its_parameters() {
    use std::collections::HashMap;
    use freeblock::rearrangement::{paper_mix, PAPER_TABLE_2, PAPER_TABLE_3};
    use freeblock::workload::Workload;
    let mix = paper_mix(&RearrangementConfig::default().workload);
    let spec = mix.spec.clone();
    // The read share is the tightest bound of Tables 2–3's on days: day 4's seek times.
    assert!((spec.read_fraction - PAPER_TABLE_2[3][4] / PAPER_TABLE_3[3][4]).abs() < 1e-12, "{}", spec.read_fraction);
    assert_eq!(spec.write_top(), 21);
    assert!((spec.write_top_share - 0.9604).abs() < 1e-3 && (spec.read_sequential - 0.375).abs() < 1e-12);
    assert!((3.5..4.5).contains(&spec.write_burst), "{}", spec.write_burst);
    let capacity = 16_297 * 16; // the MK156F's logical disk beside the paper's area
    let mut w = spec.build(capacity, 11).unwrap();
    // Per day: writes per block, all references per block, reads, reads continuing their file,
    // write instants.
    #[derive(Default)]
    struct Day {
        writes: HashMap<u64, u64>,
        all: HashMap<u64, u64>,
        reads: u64,
        continuing: u64,
        write_instants: u64,
    }
    let mut days: Vec<Day> = Vec::new();
    let mut prev: Option<freeblock::request::Request> = None;
    while let Some(r) = w.next_request().unwrap() {
        let d = spec.day_of(r.time) as usize;
        if days.len() <= d {
            days.push(Day::default());
        }
        let day = &mut days[d];
        let block = r.lbn / u64::from(spec.block_sectors);
        *day.all.entry(block).or_default() += 1;
        let same_instant = prev.as_ref().is_some_and(|p| p.time == r.time && p.op == r.op);
        if r.op.is_read() {
            day.reads += 1;
            day.continuing += u64::from(same_instant && prev.as_ref().is_some_and(|p| p.lbn + u64::from(spec.block_sectors) == r.lbn));
        } else {
            *day.writes.entry(block).or_default() += 1;
            day.write_instants += u64::from(!same_instant);
        }
        prev = Some(r);
    }
    assert_eq!(days.len(), spec.days as usize);
    let top = |counts: &HashMap<u64, u64>, n: usize| {
        let mut c: Vec<u64> = counts.values().copied().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c.iter().take(n).sum::<u64>() as f64 / c.iter().sum::<u64>() as f64
    };
    for (i, day) in days.iter().enumerate() {
        let n = spec.requests_per_day as f64;
        let writes: u64 = day.writes.values().sum();
        let write_share = writes as f64 / n;
        let writes_top = top(&day.writes, spec.write_top() as usize);
        let all_top100 = top(&day.all, 100);
        let continuing = day.continuing as f64 / day.reads as f64;
        let burst = writes as f64 / day.write_instants as f64;
        eprintln!("day {}: writes {write_share:.3}, the 21 hottest take {writes_top:.3} of writes, the 100 hottest {all_top100:.3} of all, {continuing:.3} of reads continue a file, bursts {burst:.2}, {} blocks", i + 1, day.all.len());
        assert!((write_share - (1.0 - spec.read_fraction)).abs() < 0.02, "day {i}: write share {write_share}");
        assert!((writes_top - spec.write_top_share).abs() < 0.02, "day {i}: writes' top-21 share {writes_top}");
        assert!((all_top100 - 0.90).abs() < 0.05, "day {i}: Fig. 5's top-100 share {all_top100}");
        assert!((continuing - spec.read_sequential).abs() < 0.08, "day {i}: sequential reads {continuing}");
        assert!((burst - spec.write_burst).abs() < 0.5, "day {i}: mean burst {burst}");
        assert!(day.all.len() < 2000, "Fig. 5: fewer than 2000 blocks take all ({})", day.all.len());
    }
}
