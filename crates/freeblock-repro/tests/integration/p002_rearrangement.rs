//! Paper 002's reproduction: the policy's effect on the reproduction's days, its moves served
//! four ways, the paper's mix as derived and generated, where the head still moves; and the
//! reproduction's statements agree with its text on a quick run.

use freeblock::workload::DaysSpec;
use freeblock_repro::p002_rearrangement::runs::{move_services, tables_2_3, DayRow, RunRows};
use freeblock_repro::p002_rearrangement::RearrangementConfig;

fn days(days: u32, requests_per_day: u64) -> RearrangementConfig {
    let d = RearrangementConfig::default();
    RearrangementConfig { workload: DaysSpec { days, requests_per_day, ..d.workload }, ..d }
}

#[test]
fn rearranged_days_cut_seek_time_by_more_than_half() {
    let rows = tables_2_3(&days(4, 20_000)).unwrap();
    let (off, on): (Vec<_>, Vec<_>) = rows.days.iter().partition(|d| !d.on);
    assert_eq!((off.len(), on.len()), (2, 2), "days alternate off and on");
    let mean = |v: &[&DayRow], f: &dyn Fn(&DayRow) -> f64| v.iter().map(|d| f(d)).sum::<f64>() / v.len() as f64;
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

/// The paper's mix as derived and as generated: the read share under the tables' bound where
/// Fig. 5's ~90% holds; per day, the write share, the writes' concentration on the 21 hottest
/// blocks (the same blocks every day: the metadata handful does not drift), the reads of the
/// handful and of files, the write bursts and Fig. 5's skew are those its parameters ask for.
#[test]
fn paper_mix_generator_has_its_parameters() {
    use std::collections::HashMap;
    use freeblock_repro::p002_rearrangement::paper::{paper_mix, PAPER_TABLE_2, PAPER_TABLE_3};
    use freeblock::workload::Workload;
    let mix = paper_mix(&RearrangementConfig::default().workload);
    let spec = mix.spec.clone();
    let r = spec.read_fraction;
    // Under the tightest bound of Tables 2–3's on days (day 4's seek times), where the 100 hottest
    // take Fig. 5's ~90%.
    assert!(r > 0.0 && r <= PAPER_TABLE_2[3][4] / PAPER_TABLE_3[3][4], "{r}");
    assert!((mix.fig5_top100_share - 0.90).abs() < 0.01, "{}", mix.fig5_top100_share);
    assert_eq!((spec.write_top(), spec.read_top()), (21, 21));
    assert!(spec.metadata_handful);
    // The writes' handful: the writes' non-zero seeks less the head's returns after reads that
    // moved it, out and back for every write elsewhere, at the smaller share of the two on days.
    let elsewhere = [1, 3].map(|d| {
        let writes_zero = (PAPER_TABLE_2[d][2] - r * PAPER_TABLE_3[d][2]) / (1.0 - r) / 100.0;
        ((1.0 - writes_zero) - r * (1.0 - PAPER_TABLE_3[d][2] / 100.0)).max(0.0) / 2.0
    });
    assert!((spec.write_top_share - (1.0 - elsewhere[0].max(elsewhere[1])).min(0.999)).abs() < 1e-9, "{}", spec.write_top_share);
    // Within the handful, the law the off days' writes imply (16–17% repeat the block before).
    let off_writes_zero = [0, 2].map(|d| (PAPER_TABLE_2[d][2] - r * PAPER_TABLE_3[d][2]) / (1.0 - r));
    assert!((mix.writes_repeat_pct - (off_writes_zero[0] + off_writes_zero[1]) / 2.0).abs() < 1.0, "{}", mix.writes_repeat_pct);
    let (handful_reads_share, continuing, elsewhere) = mix.reads_handful_continuing_elsewhere;
    assert!((continuing - (PAPER_TABLE_3[0][2] + PAPER_TABLE_3[2][2]) / 200.0).abs() < 1e-12);
    assert!((handful_reads_share + continuing - (PAPER_TABLE_3[1][2] + PAPER_TABLE_3[3][2]) / 200.0).abs() < 1e-12);
    assert!((handful_reads_share + continuing + elsewhere - 1.0).abs() < 1e-12);
    assert!((3.0..4.5).contains(&spec.write_burst), "{}", spec.write_burst);
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
        repeats: u64,
    }
    let mut days: Vec<Day> = Vec::new();
    let mut prev: Option<freeblock::request::Request> = None;
    let handful: Vec<u64> = w.hot_set()[..21].to_vec();
    while let Some(r) = w.next_request().unwrap() {
        let d = spec.day_of(r.time) as usize;
        if days.len() <= d {
            days.push(Day::default());
            assert_eq!(w.hot_set()[..21], handful[..], "day {d}: the metadata handful drifted");
        }
        let day = &mut days[d];
        let block = r.lbn / u64::from(spec.block_sectors);
        *day.all.entry(block).or_default() += 1;
        let same_instant = prev.as_ref().is_some_and(|p| p.time == r.time && p.op == r.op);
        day.repeats += u64::from(!r.op.is_read() && prev.as_ref().is_some_and(|p| p.lbn == r.lbn));
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
    let hottest = |counts: &HashMap<u64, u64>, n: usize| {
        let mut c: Vec<(u64, u64)> = counts.iter().map(|(&b, &k)| (k, b)).collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c.truncate(n);
        c
    };
    let top = |counts: &HashMap<u64, u64>, n: usize| hottest(counts, n).iter().map(|x| x.0).sum::<u64>() as f64 / counts.values().sum::<u64>() as f64;
    for (i, day) in days.iter().enumerate() {
        let n = spec.requests_per_day as f64;
        let writes: u64 = day.writes.values().sum();
        let write_share = writes as f64 / n;
        let writes_top = top(&day.writes, spec.write_top() as usize);
        let all_top100 = top(&day.all, 100);
        let continuing_share = day.continuing as f64 / day.reads as f64;
        let handful_reads: u64 = handful.iter().map(|b| day.all.get(b).copied().unwrap_or(0) - day.writes.get(b).copied().unwrap_or(0)).sum();
        let handful_share = handful_reads as f64 / day.reads as f64;
        let burst = writes as f64 / day.write_instants as f64;
        eprintln!("day {}: writes {write_share:.3}, the 21 hottest take {writes_top:.3} of writes and {handful_share:.3} of reads, the 100 hottest {all_top100:.3} of all, {continuing_share:.3} of reads continue a file, bursts {burst:.2}, {} blocks", i + 1, day.all.len());
        assert!((write_share - (1.0 - r)).abs() < 0.02, "day {i}: write share {write_share}");
        assert!((writes_top - spec.write_top_share).abs() < 0.02, "day {i}: writes' top-21 share {writes_top}");
        assert!((all_top100 - 0.90).abs() < 0.03, "day {i}: Fig. 5's top-100 share {all_top100}");
        assert!((continuing_share - continuing).abs() < 0.05, "day {i}: sequential reads {continuing_share}");
        assert!((handful_share - handful_reads_share).abs() < 0.05, "day {i}: reads of the handful {handful_share}");
        assert!((burst - spec.write_burst).abs() < 0.5, "day {i}: mean burst {burst}");
        let repeats = day.repeats as f64 / writes as f64;
        assert!((100.0 * repeats - mix.writes_repeat_pct).abs() < 3.0, "day {i}: writes repeating the block before {repeats}");
        let (first, _) = hottest(&day.writes, 1)[0];
        assert!((first as f64) < 0.5 * writes as f64, "day {i}: one block takes {first} of {writes} writes");
        assert!(day.all.len() < 2000, "Fig. 5: fewer than 2000 blocks take all ({})", day.all.len());
    }
}

/// On the rearranged days of the paper's mix, every request that moved the head is one kind of
/// [`freeblock_repro::p002_rearrangement::runs::SeekCause`]: the kinds add up to the day's non-zero seeks and its
/// mean seek time; and the paper's mix seeks zero more often and seeks less than today's.
#[test]
fn seek_causes_account_for_every_head_movement() {
    use freeblock_repro::p002_rearrangement::paper_mix;
    use freeblock_repro::p002_rearrangement::runs::Place;
    let today = days(4, 20_000);
    let paper = RearrangementConfig { workload: paper_mix(&today.workload).spec, ..today.clone() };
    let (a, b) = (tables_2_3(&today).unwrap(), tables_2_3(&paper).unwrap());
    for rows in [&a, &b] {
        assert_eq!(rows.causes.len(), rows.days.len());
        for (d, c) in rows.days.iter().zip(&rows.causes) {
            assert_eq!((c.day, c.requests), (d.day, d.all.requests));
            let moved: u64 = c.moved.iter().map(|m| m.requests).sum();
            let ms: f64 = c.moved.iter().map(|m| m.seek_ms).sum();
            assert!((100.0 * (1.0 - moved as f64 / c.requests as f64) - d.all.zero_seeks_pct).abs() < 1e-9, "day {}", d.day);
            assert!((ms / c.requests as f64 - d.all.seek_ms).abs() < 1e-9, "day {}", d.day);
            // Before the first rearrangement nothing is served from the area.
            if d.day == 0 {
                assert!(c.moved.iter().all(|m| m.to == Place::Home && m.from == Place::Home));
            }
        }
    }
    let on = |rows: &RunRows, f: &dyn Fn(&DayRow) -> f64| rows.days.iter().filter(|d| d.on).map(f).sum::<f64>() / 2.0;
    assert!(on(&b, &|d| d.all.zero_seeks_pct) > on(&a, &|d| d.all.zero_seeks_pct));
    assert!(on(&b, &|d| d.all.seek_ms) < on(&a, &|d| d.all.seek_ms));
}

/// A quick run: its statements are there, each one's "ours" as the text prints it, the verdicts
/// those the text gives, and the files it names written.
#[test]
fn quick_run_states_what_its_text_says() {
    let mut options = crate::quick_options("rearrangement");
    options.requests_per_day = Some(1_500);
    let outcome = freeblock_repro::find("rearrangement").unwrap().run(&options).unwrap();
    crate::statements_agree_with_text(&outcome);
    let ordering = outcome.statements.iter().find(|s| s.source == "Tables 4–5").unwrap();
    assert!(outcome.output.contains(&format!("holds: {}", if ordering.agrees == Some(true) { "yes" } else { "no" })), "{}", outcome.output);
    let bar = outcome.statements.iter().find(|s| s.source == "Tables 2–3").unwrap();
    assert!(outcome.output.contains(&format!("meets the bar: {}", if bar.agrees == Some(true) { "yes" } else { "no" })));
    assert_eq!(outcome.files.len(), 5, "{:?}", outcome.files);
    assert!(outcome.files.iter().all(|f| f.is_file()), "{:?}", outcome.files);
    std::fs::remove_dir_all(&options.out).unwrap();
}
