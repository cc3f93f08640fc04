//! The verdicts: the comparisons that decide whether our runs show what the paper's tables and
//! Fig. 4 show — the seek cut of the rearranged days, Fig. 4's knee, Tables 4–5's ordering of the
//! placements — and the summary of how the moves were served.

use serde::Serialize;

use super::paper::{paper_day, PAPER_FIG4_KNEE_BLOCKS, PAPER_KNEE_SHARE, PAPER_TABLE_2, PAPER_TABLE_3, SEEK_COLUMN as SEEK};
use super::runs::{DayRow, Metrics, MoveServices, RunRows};

/// Fig. 4's knee: the fewest blocks whose seek-time reduction is within this share of the final one.
pub(crate) const KNEE_WITHIN: f64 = 0.10;
/// Tables 4–5's ordering: "≥" allows organ-pipe this much (relative) above interleaved.
pub(crate) const ORDER_TOLERANCE: f64 = 0.05;
/// Tables 4–5's ordering: "≫" means serial's seek time is at least this multiple of interleaved's.
pub(crate) const CLEARLY_WORSE: f64 = 1.5;
/// Table 6: rotational latency + transfer within this many ms counts as no difference.
pub(crate) const SAME_ROTATION_MS: f64 = 0.3;
/// Issue 32's bar for the paper's mix on the rearranged days: at least this share of zero-length
/// seeks (%)…
pub(crate) const BAR_ZERO_SEEKS_PCT: f64 = 80.0;
/// …and at most this mean seek time (ms), all requests.
pub(crate) const BAR_SEEK_MS: f64 = 2.0;

/// Whether the paper's mix meets issue 32's bar on every rearranged day (and has one).
pub(crate) fn meets_bar(mix_days: &RunRows) -> bool {
    mix_days.days.iter().any(|d| d.on) && mix_days.days.iter().filter(|d| d.on).all(|d| d.all.zero_seeks_pct >= BAR_ZERO_SEEKS_PCT && d.all.seek_ms <= BAR_SEEK_MS)
}


pub(crate) fn mean(xs: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (n, s) = xs.into_iter().fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    (n > 0).then(|| s / n as f64)
}

/// The paper's Table 2 or 3 row of a day (0-based), if it has one.
/// The on day of a two-day run (off, then on).
pub(crate) fn on_day(r: &RunRows) -> Option<&DayRow> {
    r.days.iter().find(|d| d.on).or_else(|| r.days.get(1))
}

/// The off day of a two-day run.
pub(crate) fn off_day(r: &RunRows) -> Option<&DayRow> {
    r.days.iter().find(|d| !d.on)
}

// ------------------------------------------------------------------------------ results

/// Off days against on days, ours and the paper's.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SeekCut {
    /// `all` or `reads`.
    pub(crate) subset: &'static str,
    /// Ours: mean seek time over the off days, ms (`None`: no off day).
    pub(crate) off_ms: Option<f64>,
    /// Ours: mean seek time over the on days, ms.
    pub(crate) on_ms: Option<f64>,
    /// Ours: 1 − on / off.
    pub(crate) cut: Option<f64>,
    /// The paper's day 1 → day 2.
    pub(crate) paper_day1_ms: f64,
    pub(crate) paper_day2_ms: f64,
    pub(crate) paper_cut: f64,
    /// The paper's off and on means over the days we ran too (up to four).
    pub(crate) paper_off_ms: Option<f64>,
    pub(crate) paper_on_ms: Option<f64>,
    /// Ours cut seek time by more than half.
    pub(crate) more_than_half: bool,
}

pub(crate) fn seek_cut(subset: &'static str, rows: &RunRows) -> SeekCut {
    type Pick = fn(&DayRow) -> &Metrics;
    let (table, pick): (&[[f64; 7]; 4], Pick) = if subset == "all" { (&PAPER_TABLE_2, |d| &d.all) } else { (&PAPER_TABLE_3, |d| &d.reads) };
    let off_ms = mean(rows.days.iter().filter(|d| !d.on).map(|d| pick(d).seek_ms));
    let on_ms = mean(rows.days.iter().filter(|d| d.on).map(|d| pick(d).seek_ms));
    let cut = off_ms.zip(on_ms).filter(|(off, _)| *off > 0.0).map(|(off, on)| 1.0 - on / off);
    // The paper's days are off, on, off, on.
    let paper_days = || rows.days.iter().filter_map(|d| paper_day(table, d.day).map(|p| (d.day, p[SEEK])));
    SeekCut {
        subset,
        off_ms,
        on_ms,
        cut,
        paper_day1_ms: table[0][SEEK],
        paper_day2_ms: table[1][SEEK],
        paper_cut: 1.0 - table[1][SEEK] / table[0][SEEK],
        paper_off_ms: mean(paper_days().filter(|(d, _)| d % 2 == 0).map(|p| p.1)),
        paper_on_ms: mean(paper_days().filter(|(d, _)| d % 2 == 1).map(|p| p.1)),
        more_than_half: cut.is_some_and(|c| c > 0.5),
    }
}

/// One point of Fig. 4 (the on day of a run placing `blocks` blocks).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Fig4Point {
    pub(crate) blocks: usize,
    pub(crate) all: Metrics,
    pub(crate) reads: Metrics,
    /// Seek time saved against the first point (the fewest blocks), ms.
    pub(crate) reduction_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Knee {
    /// The fewest blocks within [`KNEE_WITHIN`] of the final reduction (`None`: no reduction).
    pub(crate) blocks: Option<usize>,
    /// As a share of the logical disk's blocks.
    pub(crate) share: Option<f64>,
    /// Blocks of the logical disk (8 KB).
    pub(crate) logical_blocks: u64,
    /// The final (largest number of blocks) reduction, ms.
    pub(crate) final_reduction_ms: f64,
    /// The paper's: little gain past the hottest ~200 blocks, about 1% of the disk.
    pub(crate) paper_blocks: usize,
    pub(crate) paper_share: f64,
}

pub(crate) fn fig4_points(fig4: &[(usize, RunRows)]) -> Vec<Fig4Point> {
    let mut pts: Vec<Fig4Point> = fig4
        .iter()
        .filter_map(|(n, r)| on_day(r).map(|d| Fig4Point { blocks: *n, all: d.all, reads: d.reads, reduction_ms: 0.0 }))
        .collect();
    pts.sort_by_key(|p| p.blocks);
    let base = pts.first().map_or(0.0, |p| p.all.seek_ms);
    for p in &mut pts {
        p.reduction_ms = base - p.all.seek_ms;
    }
    pts
}

pub(crate) fn knee(pts: &[Fig4Point], logical_blocks: u64) -> Knee {
    let final_reduction_ms = pts.last().map_or(0.0, |p| p.reduction_ms);
    let blocks = (final_reduction_ms > 0.0)
        .then(|| pts.iter().find(|p| p.reduction_ms >= (1.0 - KNEE_WITHIN) * final_reduction_ms).map(|p| p.blocks))
        .flatten();
    Knee {
        blocks,
        share: blocks.map(|b| b as f64 / logical_blocks.max(1) as f64),
        logical_blocks,
        final_reduction_ms,
        paper_blocks: PAPER_FIG4_KNEE_BLOCKS,
        paper_share: PAPER_KNEE_SHARE,
    }
}

/// Tables 4–5's ordering by seek time (all requests, on day).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Ordering {
    pub(crate) organ_pipe_ms: Option<f64>,
    pub(crate) interleaved_ms: Option<f64>,
    pub(crate) serial_ms: Option<f64>,
    /// organ-pipe ≤ interleaved (within [`ORDER_TOLERANCE`]).
    pub(crate) organ_pipe_at_least_interleaved: bool,
    /// interleaved ≤ serial.
    pub(crate) interleaved_at_least_serial: bool,
    /// serial ≥ [`CLEARLY_WORSE`] × interleaved.
    pub(crate) serial_clearly_worse: bool,
    pub(crate) holds: bool,
}

pub(crate) fn ordering(placements: &[RunRows]) -> Ordering {
    let seek = |label: &str| placements.iter().find(|r| r.label == label).and_then(on_day).map(|d| d.all.seek_ms);
    let (o, i, s) = (seek("organ_pipe"), seek("interleaved"), seek("serial"));
    let oi = o.zip(i).is_some_and(|(o, i)| o <= i * (1.0 + ORDER_TOLERANCE) + 1e-9);
    let is = i.zip(s).is_some_and(|(i, s)| i <= s);
    let clear = i.zip(s).is_some_and(|(i, s)| s >= CLEARLY_WORSE * i);
    Ordering {
        organ_pipe_ms: o,
        interleaved_ms: i,
        serial_ms: s,
        organ_pipe_at_least_interleaved: oi,
        interleaved_at_least_serial: is,
        serial_clearly_worse: clear,
        holds: oi && is && clear,
    }
}

/// One row of "how the moves are served".
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MoveRow {
    pub(crate) service: String,
    pub(crate) on_day_response_ms: Option<f64>,
    pub(crate) on_day_seek_ms: Option<f64>,
    /// Seconds from the on day's start until its rearrangement was complete (`None`: not by the
    /// day's end, or no on day).
    pub(crate) done_after_s: Option<f64>,
    /// Seconds until half, and until 90%, of the moves were committed.
    pub(crate) half_after_s: Option<f64>,
    pub(crate) ninety_after_s: Option<f64>,
    pub(crate) complete: bool,
    /// The on day's moves: planned, and committed by the day's end.
    pub(crate) planned_moves: u64,
    pub(crate) committed_moves: u64,
    pub(crate) move_reads: u64,
    pub(crate) move_writes: u64,
    pub(crate) table_writes: u64,
}

pub(crate) fn move_rows(m: &MoveServices) -> Vec<MoveRow> {
    m.runs
        .iter()
        .map(|r| {
            let day = on_day(r);
            let period = day.and_then(|d| r.policy.periods.iter().find(|p| p.period == d.day));
            MoveRow {
                service: r.label.clone(),
                on_day_response_ms: day.map(|d| d.all.waiting_ms + d.all.service_ms),
                on_day_seek_ms: day.map(|d| d.all.seek_ms),
                done_after_s: period.and_then(|p| p.done_after_s),
                half_after_s: period.and_then(|p| p.half_after_s),
                ninety_after_s: period.and_then(|p| p.ninety_after_s),
                complete: period.is_some_and(|p| p.done_after_s.is_some()),
                planned_moves: period.map_or(0, |p| p.moves),
                committed_moves: period.map_or(0, |p| p.committed),
                move_reads: r.policy.move_reads,
                move_writes: r.policy.move_writes,
                table_writes: r.policy.table_writes,
            }
        })
        .collect()
}

