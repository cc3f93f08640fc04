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

