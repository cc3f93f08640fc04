//! The external freeblock scheduler (paper 001 §3–4): freeblock scheduling from the host, which
//! knows the drive only from its learned model and the completion times it sees.
//!
//! ```text
//!   engine (sim.rs)                host: ExternalHost                         drive: BlackBox
//!   ───────────────                ──────────────────────────────────         ──────────────────
//!   request pool ── foreground ──► plan free reads in the predicted   ──►    ≤ max_outstanding
//!   (SSTF, SPTF,      pick          latency (learned model + seek              commands; its own
//!    SPTF-SWn%)                     conservatism), then FIFO dispatch          firmware effects
//!        ▲                          queue: [free read] [foreground]
//!        └── completion ◄────────── resync: head = end of the command   ◄──   completion time
//!                                    just done, free = its time − bus tail
//! ```
//!
//! The host keeps a FIFO of commands and at most `max_outstanding` at the drive (two, as in the
//! paper: one in service and one queued, so the queued command's bus and processing overlap the
//! other's media work and its completion time is a matter of media access alone). Each
//! prediction starts from the last completion seen: the head is where that command ended, and the
//! mechanism became free when it completed less the bus tail the model gives it. That is the
//! "resync after each request" of §3.3, and it keeps one misprediction from spreading.
//!
//! How one foreground request `F` gets its free reads:
//!
//! | step | what the host does | why |
//! | --- | --- | --- |
//! | predict | `alone`: `F`'s access from the predicted head and free time, on the learned model | its media start is the deadline |
//! | destination track | the wanted sectors passing under the head between arriving (move + conservatism) and `F`'s first sector, contiguous in LBN with `F`, are *prepended*: one command from the first wanted LBN through `F`'s end | merging: no second command on the track to set off the firmware's read-ahead, and `F` completes when it would have |
//! | other tracks | the contiguous LBN run with the most wanted sectors that fits between arriving (move + conservatism) and leaving in time (move to `F` + conservatism), as its own command queued before `F` | a track seen once per decision, nearest cylinders first, `max_tracks` tracks with wanted sectors at most |
//! | one per track | no free command on the source track (the previous command was sent already and cannot grow; a second read there costs the drive's read-ahead a revolution) nor a separate one on the destination track | the paper's rule (Fig. 10); `one_per_track = false` lifts it on the source track to measure what it costs |
//! | choose | the most wanted sectors (paper 001: greedy, one free read per foreground request); with `combine`, also an other-track read followed by the prepend the time it leaves allows | `combine` is ours |
//!
//! Two knobs are ours, beyond paper 001:
//!
//! | knob | what the host does | measured (`freeblock repro external`, SPTF) |
//! | --- | --- | --- |
//! | `pick_lead_ms` | holds the foreground pick until the lead plus a command's processing before the mechanism is predicted free, instead of picking as a slot frees ([`PickStats`]) | the pick commits 0.2 ms ahead, not ~6.8 ms: the host's SPTF alone matches the firmware's (paper Fig. 6), and a free read no longer makes the foreground *faster* by delaying the pick |
//! | `adaptive_margin` | learns the seek margin per distance bucket from completions ([`AdaptiveMargin`]) | recovers about half the gap to the in-firmware scheduler at a fraction of a percent of foreground cost |
//!
//! Free is measured, not assumed: the drive serves what it is sent with its hidden model and
//! effects, and the foreground response times are what it reports. Comparing a run with
//! background work against the same run without shows the foreground cost.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use freeblock_disk::{Breakdown, Disk, Drive, HeadState, MediaAccess, Op, Service, SimTime, TrackRun};
use serde::{Deserialize, Serialize};

use super::blackbox::{BlackBox, Command, CommandInterface, DriveError, Effects, FirmwareLog, Tag};
use crate::error::{number, Error, Result};
use crate::freeblock::{Accounts, Freeblock, Route};
use crate::report::Histogram;
use crate::sched::Pending;

fn default_conservatism() -> f64 {
    0.4
}
fn default_outstanding() -> u32 {
    2
}
fn default_true() -> bool {
    true
}
fn default_tracks() -> u32 {
    100
}

/// Which disk model the host plans with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostModel {
    /// Learn it first: characterise the drive through the black box ([`super::characterize`]).
    #[default]
    Learned,
    /// The hidden truth itself (an upper bound: a host that characterised perfectly).
    Truth,
}

/// The `[external]` table of an experiment: how the host schedules from outside the drive.
///
/// ```toml
/// [freeblock]
/// placement = "external"
/// [external]
/// conservatism_ms = 0.4      # added to every predicted seek of a free-read decision
/// max_outstanding = 2        # commands at the drive at once
/// pick_lead_ms = 0.2         # ours: hold the foreground pick until just before it is needed
/// adaptive_margin = false    # ours: learn the margin per seek distance, from conservatism_ms
/// model = "learned"          # or "truth"
/// [external.effects]         # the drive's firmware effects (default: all on)
/// reorder_queue = true
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalConfig {
    /// Margin added to each predicted seek (and head switch) before deciding a free read fits,
    /// ms, 0 to 10. Default 0.4.
    #[serde(default = "default_conservatism")]
    pub conservatism_ms: f64,
    /// Commands at the drive at once, 1 to 64. Default 2 (paper 001).
    #[serde(default = "default_outstanding")]
    pub max_outstanding: u32,
    /// At most one free command per track (none on the source track). Default true.
    #[serde(default = "default_true")]
    pub one_per_track: bool,
    /// Ours: also consider an other-track read followed by a prepend on the destination track.
    /// Default false (paper 001's greedy: one free read per foreground request).
    #[serde(default)]
    pub combine: bool,
    /// Other tracks with wanted sectors examined per decision, at least 1. Default 100.
    #[serde(default = "default_tracks")]
    pub max_tracks: u32,
    /// Ours: hold the foreground pick until this long before the mechanism is predicted free
    /// (plus the next command's processing), ms, 0 to 10; `None` (the default, paper 001)
    /// picks as soon as a slot at the drive frees. A pick made a whole service time ahead
    /// chooses from fewer waiting requests (see [`PickStats`]); one made just in time chooses
    /// from as many as the firmware's scheduler would.
    #[serde(default)]
    pub pick_lead_ms: Option<f64>,
    /// Ours: learn the margin per seek distance from the foreground's completions, starting
    /// at `conservatism_ms` (see [`AdaptiveMargin`]). Default false (one margin for every move).
    #[serde(default)]
    pub adaptive_margin: bool,
    /// The model the host plans with. Default learned.
    #[serde(default)]
    pub model: HostModel,
    /// The drive's firmware effects. Default: all on ([`Effects::default`]).
    #[serde(default)]
    pub effects: Effects,
}

impl Default for ExternalConfig {
    fn default() -> Self {
        Self {
            conservatism_ms: default_conservatism(),
            max_outstanding: default_outstanding(),
            one_per_track: true,
            combine: false,
            max_tracks: default_tracks(),
            pick_lead_ms: None,
            adaptive_margin: false,
            model: HostModel::Learned,
            effects: Effects::default(),
        }
    }
}

impl ExternalConfig {
    /// Checks every field.
    ///
    /// # Errors
    /// [`Error::Config`] naming the field (`external.conservatism_ms`, …).
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, message: String| Err(Error::Config { origin: format!("external.{field}"), message });
        if !(self.conservatism_ms.is_finite() && (0.0..=10.0).contains(&self.conservatism_ms)) {
            return bad("conservatism_ms", format!("must be a time from 0 to 10 ms, not {}", number(self.conservatism_ms)));
        }
        if !(1..=64).contains(&self.max_outstanding) {
            return bad("max_outstanding", format!("must be from 1 to 64 commands, not {}", self.max_outstanding));
        }
        if self.max_tracks == 0 {
            return bad("max_tracks", "must be at least 1".into());
        }
        if let Some(lead) = self.pick_lead_ms {
            if !(lead.is_finite() && (0.0..=10.0).contains(&lead)) {
                return bad("pick_lead_ms", format!("must be a time from 0 to 10 ms, not {}", number(lead)));
            }
        }
        if !(self.effects.internal_activity_ms.is_finite() && self.effects.internal_activity_ms >= 0.0) {
            return bad("effects.internal_activity_ms", format!("must be a time ≥ 0, not {}", number(self.effects.internal_activity_ms)));
        }
        Ok(())
    }
}

/// What a command at the drive (or waiting in the host's FIFO) is for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Purpose {
    /// A free read of its own; `first_move`: the distance bucket of the move to it, when its
    /// margin was relied on ([`AdaptiveMargin`]).
    Free { first_move: Option<u8> },
    /// Foreground request `id`, with free sectors prepended (`prepended` LBNs before its own);
    /// `behind_free`: a free command of its own was queued just ahead of it.
    /// `moves`: the distance buckets of the moves its plan relied on ([`AdaptiveMargin`]).
    Foreground { id: u64, prepended: Range<u64>, own: Range<u64>, behind_free: bool, moves: Vec<u8> },
}

/// One command as the host tracks it.
#[derive(Debug, Clone)]
struct HostCommand {
    command: Command,
    purpose: Purpose,
    /// The drive's tag, once sent.
    tag: Option<Tag>,
    /// When it was sent.
    sent: Option<SimTime>,
    /// When its group (a free read sent ahead of it, or itself) went out.
    group_sent: SimTime,
    /// The prediction as it stands (from the last completion seen).
    predicted: MediaAccess,
}

/// Counts of what the host did and how well it predicted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostStats {
    /// Foreground commands completed.
    pub foreground: u64,
    /// Of which carried prepended free sectors (merged).
    pub merged: u64,
    /// Free commands of their own.
    pub free_commands: u64,
    /// Free reads planned on the source track (only with `one_per_track = false`).
    pub source_track_reads: u64,
    /// Plans with an other-track read and a prepend (`combine`).
    pub combined: u64,
    /// Wanted sectors the plans expected to read.
    pub planned_sectors: u64,
    /// Foreground completions more than half a revolution later than predicted.
    pub late_by_a_turn: u64,
    /// The foreground completions by what the host sent ahead of them: where the foreground
    /// cost of free reads comes from.
    pub by_ahead: AheadBreakdown,
    /// Free commands of their own that completed more than `LATE_NS` later than predicted
    /// (each one delays the foreground command queued behind it).
    pub free_late: u64,
    /// Plans whose foreground command was predicted, with its free reads, to complete later
    /// than alone (by more than a microsecond), and by how much in all, ns.
    pub planned_later: (u64, u64),
    /// When and what the foreground scheduler picked: the measurement behind the foreground
    /// cost's sign.
    pub picks: PickStats,
    /// Prediction errors of foreground completions (actual − predicted, ns), when kept.
    #[serde(skip)]
    pub errors_ns: Vec<i64>,
    /// |actual − predicted| of foreground completions, ns.
    #[serde(skip)]
    pub abs_error: Histogram,
    /// What the firmware did behind the host's back (for the report; the host never reads it).
    pub firmware: FirmwareLog,
    /// With `adaptive_margin`: the learned margins ([`AdaptiveMargin::table`]).
    pub margins: Vec<(u32, u64, f64)>,
}

/// Lateness beyond which a completion counts as late in [`AheadClass::late`]: more than the
/// bus-overlap and overhead jitter a drive adds to a 40 KB read (paper 001 Fig. 7: 75% within
/// 150 µs).
pub const LATE_NS: SimTime = 150_000;

/// Foreground completions of one kind and how late they came.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AheadClass {
    /// Completions.
    pub commands: u64,
    /// Of which later than predicted by more than [`LATE_NS`].
    pub late: u64,
    /// Of which later by more than half a revolution.
    pub late_by_a_turn: u64,
    /// Their lateness beyond prediction, summed over the late ones, ns.
    pub late_ns: u64,
    /// Of which earlier than predicted by more than [`LATE_NS`] (an over-estimate, Fig. 3a).
    pub early: u64,
    /// Their earliness, summed, ns.
    pub early_ns: u64,
    /// Actual − predicted completion, summed over all of them, ns.
    pub error_sum_ns: i64,
}

impl AheadClass {
    fn record(&mut self, error_ns: i64, revolution_ns: SimTime) {
        self.commands += 1;
        self.error_sum_ns += error_ns;
        if error_ns > LATE_NS as i64 {
            self.late += 1;
            self.late_ns += error_ns as u64;
        }
        if error_ns > (revolution_ns / 2) as i64 {
            self.late_by_a_turn += 1;
        }
        if error_ns < -(LATE_NS as i64) {
            self.early += 1;
            self.early_ns += error_ns.unsigned_abs();
        }
    }
}

/// [`HostStats::by_ahead`]: each foreground completion by what went ahead of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AheadBreakdown {
    /// Nothing of the background's: the command was the foreground request alone.
    pub alone: AheadClass,
    /// Free sectors prepended to it (one merged command).
    pub prepended: AheadClass,
    /// A free command of its own queued just ahead of it (with or without a prepend).
    pub behind_free: AheadClass,
}

/// How far ahead the foreground scheduler committed to each request, and what it chose.
///
/// A host keeping two commands at the drive picks the next foreground request when a slot frees:
/// `lead` is how long before the mechanism is predicted free that was, and `positioning` the
/// chosen request's predicted seek and rotational wait from there. A pick made earlier sees a
/// smaller pool of waiting requests, so its choice positions longer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PickStats {
    /// Foreground requests dispatched.
    pub count: u64,
    /// Sum over them of (predicted free − dispatch), ns.
    pub lead_ns: u64,
    /// Sum over them of the predicted positioning alone (media start − free), ns.
    pub positioning_ns: u64,
}

impl PickStats {
    /// Mean lead, ms.
    #[must_use]
    pub fn mean_lead_ms(&self) -> f64 {
        self.lead_ns as f64 / self.count.max(1) as f64 / 1e6
    }

    /// Mean predicted positioning of the chosen requests, ms.
    #[must_use]
    pub fn mean_positioning_ms(&self) -> f64 {
        self.positioning_ns as f64 / self.count.max(1) as f64 / 1e6
    }
}

/// A free read the planner chose.
#[derive(Debug, Clone, Default)]
struct FreePlan {
    /// Its own command on another track (or the source track), before the foreground one.
    separate: Option<Range<u64>>,
    /// LBNs prepended to the foreground command.
    prepend: Option<Range<u64>>,
    wanted: u64,
    /// The distance buckets of the moves whose margins the plan relied on.
    moves: Vec<u8>,
}

/// Seek margins learned per distance (ours, `adaptive_margin`).
///
/// One margin for every move must cover the worst-predicted distance; the learned seek curve
/// errs differently at different distances, so most moves carry more margin than they need.
/// Each bucket of cylinder distances (0: a head switch; then 1, 2–3, 4–7, … doubling) starts
/// at `conservatism_ms` and moves with what the foreground's completions show:
///
/// | a foreground command planned on moves in a bucket | the bucket's margin |
/// | --- | --- |
/// | completes within half a revolution of its prediction | − [`MARGIN_STEP_DOWN_NS`] (not below 0) |
/// | completes a revolution late (a sector missed) | + [`MARGIN_STEP_UP_NS`] (not above [`MARGIN_MAX_NS`]) |
///
/// A separate free read's plan relies on two moves: the free read's own completion judges the
/// move to it, the foreground's the move on (unless the free read ahead was late already).
/// Only a lateness of about one revolution counts: the drive's internal activity is longer.
///
/// At equilibrium a bucket misses about once per `STEP_UP / STEP_DOWN` (400) plans, which
/// costs the foreground a revolution that often.
#[derive(Debug, Clone)]
pub struct AdaptiveMargin {
    margins_ns: Vec<SimTime>,
    /// Plans seen per bucket.
    seen: Vec<u64>,
}

/// How much one on-time completion lowers its buckets' margins, ns.
pub const MARGIN_STEP_DOWN_NS: SimTime = 100;
/// How much one completion a revolution late raises them, ns.
pub const MARGIN_STEP_UP_NS: SimTime = 100_000;
/// The most a learned margin grows to, ns.
pub const MARGIN_MAX_NS: SimTime = 1_000_000;
const MARGIN_BUCKETS: usize = 34;

impl AdaptiveMargin {
    fn new(start_ns: SimTime) -> Self {
        Self { margins_ns: vec![start_ns; MARGIN_BUCKETS], seen: vec![0; MARGIN_BUCKETS] }
    }

    /// The bucket of a move between two cylinders.
    fn bucket(from: u32, to: u32) -> u8 {
        let d = from.abs_diff(to);
        if d == 0 { 0 } else { 1 + d.ilog2() as u8 }
    }

    fn learn(&mut self, moves: &[u8], late_by_a_turn: bool) {
        for &b in moves {
            let (m, seen) = (&mut self.margins_ns[b as usize], &mut self.seen[b as usize]);
            *seen += 1;
            *m = if late_by_a_turn { (*m + MARGIN_STEP_UP_NS).min(MARGIN_MAX_NS) } else { m.saturating_sub(MARGIN_STEP_DOWN_NS) };
        }
    }

    /// `(shortest distance in the bucket, plans seen, margin ms)` for every bucket a plan used.
    #[must_use]
    pub fn table(&self) -> Vec<(u32, u64, f64)> {
        (0..MARGIN_BUCKETS).filter(|&b| self.seen[b] > 0).map(|b| (if b == 0 { 0 } else { 1u32 << (b - 1) }, self.seen[b], self.margins_ns[b] as f64 / 1e6)).collect()
    }
}

/// The host side of external freeblock scheduling; [`crate::sim::Simulation::with_external`]
/// puts it between the engine's foreground scheduler and the drive.
pub struct ExternalHost {
    drive: BlackBox,
    model: Arc<Disk>,
    config: ExternalConfig,
    conservatism_ns: SimTime,
    /// Per-distance margins, with `adaptive_margin`.
    adaptive: Option<AdaptiveMargin>,
    /// The last free read of its own completed a revolution late.
    free_ahead_late: bool,
    /// Sent and not yet complete, in the order sent.
    at_drive: VecDeque<HostCommand>,
    /// Waiting in the host's FIFO dispatch queue.
    fifo: VecDeque<HostCommand>,
    /// Where the heads were, and when the mechanism was free, at the last completion seen.
    base_head: HeadState,
    base_free: SimTime,
    /// Just after the last command sent, or the last completion seen: no command can arrive
    /// before.
    last_seen: SimTime,
    /// When the free read sent ahead of the next foreground command went out.
    group_start: Option<SimTime>,
    /// The last foreground completion.
    last_fg_done: SimTime,
    peeked: Option<Option<SimTime>>,
    /// The foreground completion being planned for, as predicted alone: free reads must not
    /// move it (their data crosses the same serial bus first).
    fg_end: SimTime,
    /// Host-bus time per sector learned from completions, ns (0 until a read shows the bus,
    /// not the media, bounding its completion).
    learned_bus_ns: f64,
    /// Short reads seen, and how many of them the bus bounded: the learned rate is used only
    /// when the bus bounds most of them (one late completion must not make a fast bus slow).
    bus_samples: (u64, u64),
    /// When the foreground command being planned for can be sent if a free read goes ahead of
    /// it (it waits for a slot at the drive).
    fg_send: SimTime,
    keep_errors: bool,
    stats: HostStats,
    runs: Vec<TrackRun>,
    pieces: Vec<(Range<u64>, u32)>,
    weights: Vec<u16>,
}

/// Whether a completion `error_ns` after its prediction is one missed revolution (a sector
/// missed by a margin too small), not the drive's longer internal activity or a bus delay.
fn one_turn_late(error_ns: i64, revolution_ns: SimTime) -> bool {
    (error_ns - revolution_ns as i64).unsigned_abs() <= revolution_ns / 4
}

fn drive_error(e: DriveError) -> Error {
    Error::Config { origin: "external drive".into(), message: e.to_string() }
}

impl ExternalHost {
    /// A host planning with `model` for `drive`.
    ///
    /// # Errors
    /// [`Error::Config`] for an invalid configuration or a model whose capacity differs from the
    /// drive's (a model learned from another drive).
    pub fn new(drive: BlackBox, model: Arc<Disk>, config: ExternalConfig) -> Result<Self> {
        config.validate()?;
        if model.capacity() != drive.capacity() {
            return Err(Error::Config {
                origin: "external.model".into(),
                message: format!("the host's model has {} sectors, the drive reports {}: it was learned from another drive", model.capacity(), drive.capacity()),
            });
        }
        if model.spec().cache.enabled || model.zero_latency() {
            return Err(Error::Config { origin: "external.model".into(), message: "the host's model must have its cache and zero-latency access off".into() });
        }
        let conservatism_ns = freeblock_disk::time::ms_to_ns(config.conservatism_ms);
        Ok(Self {
            adaptive: config.adaptive_margin.then(|| AdaptiveMargin::new(conservatism_ns)),
            free_ahead_late: false,
            drive,
            model,
            config,
            conservatism_ns,
            at_drive: VecDeque::new(),
            fifo: VecDeque::new(),
            base_head: HeadState::default(),
            base_free: 0,
            last_seen: 0,
            group_start: None,
            last_fg_done: 0,
            peeked: None,
            fg_end: SimTime::MAX,
            learned_bus_ns: 0.0,
            bus_samples: (0, 0),
            fg_send: 0,
            keep_errors: false,
            stats: HostStats::default(),
            runs: Vec::new(),
            pieces: Vec::new(),
            weights: Vec::new(),
        })
    }

    /// Keep every foreground prediction error (for the error PDFs), not only their histogram.
    #[must_use]
    pub fn keeping_errors(mut self) -> Self {
        self.keep_errors = true;
        self
    }

    /// The model the host plans with.
    #[must_use]
    pub fn model(&self) -> &Arc<Disk> {
        &self.model
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &ExternalConfig {
        &self.config
    }

    /// What the host did and how well it predicted.
    #[must_use]
    pub fn stats(&self) -> HostStats {
        HostStats { firmware: self.drive.firmware_log(), margins: self.adaptive.as_ref().map(AdaptiveMargin::table).unwrap_or_default(), ..self.stats.clone() }
    }

    /// Commands at the drive.
    #[must_use]
    pub fn outstanding(&self) -> usize {
        self.at_drive.len()
    }

    /// Whether the host has work in hand (at the drive or in its FIFO).
    #[must_use]
    pub fn is_busy(&self) -> bool {
        !self.at_drive.is_empty() || !self.fifo.is_empty()
    }

    /// Whether the foreground scheduler should pick another request now: the FIFO is empty,
    /// the drive has room and (with `pick_lead_ms`) the pick is due.
    #[must_use]
    pub fn wants_request(&self, now: SimTime) -> bool {
        self.fifo.is_empty() && self.at_drive.len() < self.config.max_outstanding as usize && self.pick_due().is_none_or(|t| now >= t)
    }

    /// When a held pick falls due (for the engine's wake-up), `None` when the host is not
    /// holding one: with `pick_lead_ms`, the lead plus the next command's processing before the
    /// mechanism is predicted free after the commands at the drive.
    #[must_use]
    pub fn pick_due(&self) -> Option<SimTime> {
        let lead = self.config.pick_lead_ms?;
        if !self.fifo.is_empty() || self.at_drive.len() >= self.config.max_outstanding as usize {
            return None;
        }
        let last = self.at_drive.back()?;
        Some(last.predicted.media_end.saturating_sub(freeblock_disk::time::ms_to_ns(lead) + self.model.overhead_ns(Op::Read)))
    }

    /// The instant from which the foreground scheduler should rank positioning: the mechanism
    /// is predicted free after everything sent or queued, and a queued command's processing
    /// overlaps the work before it.
    #[must_use]
    pub fn decision_time(&self, now: SimTime) -> SimTime {
        match self.fifo.back().or(self.at_drive.back()) {
            Some(c) => c.predicted.media_end.saturating_sub(self.model.overhead_ns(Op::Read)).max(now),
            None => now,
        }
    }

    /// When the drive next reports a completion (for the engine's event queue), `None` with
    /// nothing at the drive.
    ///
    /// # Errors
    /// A drive that does not answer.
    pub fn next_completion_time(&mut self) -> Result<Option<SimTime>> {
        if let Some(t) = self.peeked {
            return Ok(t);
        }
        let t = if self.at_drive.is_empty() { None } else { Some(self.drive.peek_completion().map_err(drive_error)?.time) };
        self.peeked = Some(t);
        Ok(t)
    }

    /// Re-predicts every command in hand from the last completion seen, in order, and puts the
    /// model drive's heads where the last of them ends (the foreground scheduler ranks from
    /// there).
    fn repredict(&mut self, drive: &mut Drive) {
        let (mut head, mut free) = (self.base_head, self.base_free);
        for c in self.at_drive.iter_mut().chain(self.fifo.iter_mut()) {
            // A command not yet sent goes out when one completes: its processing overlaps.
            let arrival = c.sent.unwrap_or(free.saturating_sub(self.model.overhead_ns(c.command.op)));
            if let Ok(a) = self.model.access_when_free(head, arrival, free, c.command.lbn, c.command.sectors, c.command.op, &mut self.runs) {
                c.predicted = a;
                head = a.end_head;
                free = a.media_end;
            }
        }
        drive.set_head(head);
    }

    /// Sends commands from the FIFO while the drive has room.
    fn send(&mut self, now: SimTime) -> Result<()> {
        // Never at the instant of an earlier command, even one sent by an earlier call: two
        // commands arriving together at an idle drive are both waiting when it chooses, and its
        // own scheduler would reorder them (§4.1: one in service, one queued, in the host's order).
        let mut at = now.max(self.drive.now()).max(self.last_seen);
        while self.at_drive.len() < self.config.max_outstanding as usize {
            let Some(mut c) = self.fifo.pop_front() else { break };
            c.tag = Some(self.drive.submit(at, c.command).map_err(drive_error)?);
            c.sent = Some(at);
            c.group_sent = match c.purpose {
                Purpose::Free { .. } => *self.group_start.insert(at),
                Purpose::Foreground { .. } => self.group_start.take().unwrap_or(at),
            };
            self.at_drive.push_back(c);
            // One nanosecond apart: the drive sees them in this order.
            at += 1;
            self.last_seen = self.last_seen.max(at);
            self.peeked = None;
        }
        self.last_seen = self.last_seen.max(at);
        Ok(())
    }

    /// Takes foreground request `p`: plans free reads into its predicted rotational latency,
    /// queues the commands and sends what the drive has room for.
    ///
    /// # Errors
    /// A request outside the model, a drive that refuses a command, an application error.
    pub fn dispatch(&mut self, now: SimTime, p: &Pending, freeblock: Option<&mut Freeblock>, drive: &mut Drive) -> Result<()> {
        let sectors = u64::from(p.sectors);
        let req = |source| Error::Request { index: p.id, source };
        // Where and when the mechanism is predicted free for this request.
        let (head, free, queued_behind) = match self.fifo.back().or(self.at_drive.back()) {
            Some(c) => (c.predicted.end_head, c.predicted.media_end, true),
            None => (self.base_head, self.base_free.max(self.last_seen), false),
        };
        let alone = self.model.access_when_free(head, now, free, p.lbn, sectors, p.op, &mut self.runs).map_err(req)?;
        self.stats.picks.count += 1;
        self.stats.picks.lead_ns += free.saturating_sub(now);
        self.stats.picks.positioning_ns += alone.media_start.saturating_sub(free.max(now));
        let mut plan = FreePlan::default();
        if let Some(fb) = freeblock {
            // Background work may start once the mechanism is free and a command could be there.
            let fb_free = if queued_behind { free } else { free.max(now + self.model.overhead_ns(Op::Read)) };
            let direct = self.model.move_ns(head, p.target.cylinder, p.target.surface, p.op);
            let fg_ready = now + self.model.overhead_ns(p.op);
            let potential = alone.media_start.saturating_sub(fb_free.max(fg_ready) + direct);
            let spt = self.model.layout().sectors_per_track(p.target.cylinder);
            let sector_bytes = f64::from(self.model.spec().sector_bytes);
            let acc = Accounts {
                potential_ns: potential,
                window_ns: alone.media_start.saturating_sub(fb_free + direct),
                potential_bytes: potential as f64 * f64::from(spt) * sector_bytes / self.model.revolution_ps() as f64 * 1000.0,
                requests: 1,
                ..Accounts::default()
            };
            if fb.sets().total_wanted() > 0 && alone.media_start > fb_free {
                self.fg_end = alone.end;
                // With a free read sent first, the foreground waits for the next completion
                // when that fills the drive.
                let full = self.at_drive.len() + 1 >= self.config.max_outstanding as usize;
                self.fg_send = if full { self.at_drive.front().map_or(now, |c| c.predicted.end.max(now)) } else { now };
                plan = self.plan(fb, head, fb_free, p, alone.media_start);
            }
            let acc = Accounts { free_transfer_ns: self.model.sectors_ns(plan.wanted, spt.max(1)), ..acc };
            fb.book_outside(now, &acc)?;
        }
        self.stats.planned_sectors += plan.wanted;
        if let Some(r) = plan.separate.clone() {
            self.stats.free_commands += 1;
            let command = Command { lbn: r.start, sectors: r.end - r.start, op: Op::Read };
            // A separate read's plan relies on two moves: the free read's completion shows the
            // first, the foreground's the second.
            let first_move = (plan.moves.len() == 2).then(|| plan.moves.remove(0));
            self.fifo.push_back(HostCommand { command, purpose: Purpose::Free { first_move }, tag: None, sent: None, group_sent: 0, predicted: alone });
        }
        let own = p.lbn..p.lbn + sectors;
        let (lbn, prepended) = match plan.prepend {
            Some(r) => (r.start, r),
            None => (p.lbn, p.lbn..p.lbn),
        };
        let command = Command { lbn, sectors: own.end - lbn, op: p.op };
        let behind_free = plan.separate.is_some();
        self.fifo.push_back(HostCommand { command, purpose: Purpose::Foreground { id: p.id, prepended, own, behind_free, moves: plan.moves }, tag: None, sent: None, group_sent: 0, predicted: alone });
        self.send(now)?;
        self.repredict(drive);
        if let Some(c) = self.fifo.back().or(self.at_drive.back()) {
            let later = c.predicted.end.saturating_sub(alone.end);
            if later > 1_000 {
                self.stats.planned_later.0 += 1;
                self.stats.planned_later.1 += later;
            }
        }
        Ok(())
    }

    /// Takes the completion the drive reports now. Returns the foreground request it finished
    /// (its id and service as the host saw it), or `None` for a free read.
    ///
    /// # Errors
    /// A drive that does not answer; an application error.
    pub fn complete(&mut self, now: SimTime, freeblock: Option<&mut Freeblock>, drive: &mut Drive) -> Result<Option<(u64, Service)>> {
        let done = self.drive.next_completion().map_err(drive_error)?;
        self.peeked = None;
        let i = self.at_drive.iter().position(|c| c.tag == Some(done.tag)).ok_or_else(|| Error::Config { origin: "external drive".into(), message: format!("completion of command {} the host never sent", done.tag) })?;
        let c = self.at_drive.remove(i).expect("found");
        debug_assert_eq!(done.time, now, "the engine's event is the drive's completion");
        // Resync: the heads are where this command ended, and its media work ended as its last
        // sector passed under the head: at the instant nearest the completion less the model's
        // bus tail when that sector's end came round (media transfers end at a fixed angle, so
        // a bus tail that varied does not move the resync).
        let mut tail = c.predicted.end - c.predicted.media_end;
        if c.command.op.is_read() {
            // What the learned bus says the data took past the media work.
            let media = c.predicted.media_end.saturating_sub(c.predicted.media_start) as f64;
            tail = tail.max((self.bus_per_sector_ns() * c.command.sectors as f64 - media).max(0.0) as SimTime);
        }
        self.base_head = c.predicted.end_head;
        let estimate = done.time.saturating_sub(tail);
        let media_end = self.snap_to_sector_end(c.command.lbn + c.command.sectors - 1, estimate);
        self.base_free = media_end.min(done.time).max(c.sent.unwrap_or(0));
        self.learn_bus(&c, done.time.saturating_sub(media_end));
        self.last_seen = self.last_seen.max(done.time);
        let mut result = None;
        match &c.purpose {
            Purpose::Free { first_move } => {
                if done.time > c.predicted.end + LATE_NS {
                    self.stats.free_late += 1;
                }
                let turn = one_turn_late(done.time as i64 - c.predicted.end as i64, self.model.revolution_ns());
                self.free_ahead_late = turn;
                if let (Some(a), Some(b)) = (&mut self.adaptive, first_move) {
                    a.learn(&[*b], turn);
                }
                if let Some(fb) = freeblock {
                    fb.transferred_outside(c.command.lbn..c.command.lbn + c.command.sectors, done.time, Route::Free)?;
                }
            }
            Purpose::Foreground { id, prepended, own, behind_free, moves } => {
                if let Some(fb) = freeblock {
                    if !prepended.is_empty() {
                        fb.transferred_outside(prepended.clone(), done.time, Route::Free)?;
                    }
                    // A foreground write of wanted sectors delivers them too, as in the firmware
                    // (`Freeblock::serve`): the host holds the data it wrote.
                    if own.start < own.end {
                        fb.transferred_outside(own.clone(), done.time, Route::Piggyback)?;
                    }
                }
                self.stats.foreground += 1;
                self.stats.merged += u64::from(!prepended.is_empty());
                let error = done.time as i64 - c.predicted.end as i64;
                let late_by_a_turn = error > (self.model.revolution_ns() / 2) as i64;
                if late_by_a_turn {
                    self.stats.late_by_a_turn += 1;
                }
                // A revolution late behind a free read that was itself a revolution late says
                // nothing of the move to this track.
                if let Some(a) = self.adaptive.as_mut().filter(|_| !(*behind_free && self.free_ahead_late)) {
                    a.learn(moves, one_turn_late(error, self.model.revolution_ns()));
                }
                let class = match (*behind_free, prepended.is_empty()) {
                    (true, _) => &mut self.stats.by_ahead.behind_free,
                    (false, false) => &mut self.stats.by_ahead.prepended,
                    (false, true) => &mut self.stats.by_ahead.alone,
                };
                class.record(error, self.model.revolution_ns());
                self.stats.abs_error.record(error.unsigned_abs());
                if self.keep_errors {
                    self.stats.errors_ns.push(error);
                }
                // What the host knows of its service: from when the drive could start it to its
                // completion; the parts are the model's.
                let start = self.last_fg_done.max(c.group_sent).min(done.time);
                self.last_fg_done = done.time;
                let b = c.predicted.breakdown;
                let total = done.time - start;
                let seek = b.seek.min(total);
                let transfer = b.transfer.min(total - seek);
                let breakdown = Breakdown { seek, transfer, rotational_latency: total - seek - transfer, ..Breakdown::default() };
                let access = MediaAccess { start, media_start: c.predicted.media_start.clamp(start, done.time), media_end: done.time, end: done.time, breakdown, end_head: c.predicted.end_head };
                result = Some((*id, Service { access, cache_hit: false }));
            }
        }
        self.send(now)?;
        self.repredict(drive);
        Ok(result)
    }

    /// Learns the host bus from a read whose data took longer than its media transfer to
    /// cross (its tail past the media end is several sectors long): the bus moved `n` sectors
    /// in the media time plus the tail. Jitter only lengthens tails, so the least such estimate
    /// is kept.
    fn learn_bus(&mut self, c: &HostCommand, tail_ns: SimTime) {
        let n = c.command.sectors;
        // Short reads only: their tail stays under half a revolution, so the resync that
        // measured it found the right turn.
        if !c.command.op.is_read() || !(8..=16).contains(&n) {
            return;
        }
        let media = c.predicted.media_end.saturating_sub(c.predicted.media_start) as f64;
        let per_sector_media = media / n as f64;
        self.bus_samples.0 += 1;
        if (tail_ns as f64) < 3.0 * per_sector_media {
            return;
        }
        self.bus_samples.1 += 1;
        let estimate = (tail_ns as f64 + media) / n as f64;
        self.learned_bus_ns = if self.learned_bus_ns == 0.0 { estimate } else { self.learned_bus_ns.min(estimate) };
    }

    /// Host-bus time per sector as the host knows it, ns: the model's, or what it learned.
    fn bus_per_sector_ns(&self) -> f64 {
        let (seen, bounded) = self.bus_samples;
        let learned = if bounded >= 8 && 2 * bounded > seen { self.learned_bus_ns } else { 0.0 };
        (self.model.bus_ns(1_000) as f64 / 1e3).max(learned)
    }

    /// The instant nearest `estimate` (within half a revolution) at which the sector holding
    /// `lbn` finishes passing under the head.
    fn snap_to_sector_end(&self, lbn: u64, estimate: SimTime) -> SimTime {
        let layout = self.model.layout();
        let Ok(pbn) = layout.lbn_to_pbn(lbn) else { return estimate };
        let spt = layout.sectors_per_track(pbn.cylinder);
        let Some(angles) = layout.track_angles(pbn.cylinder, pbn.surface) else { return estimate };
        let rev = u128::from(self.model.revolution_ps());
        let end_pos = u128::from(angles.sector_start((pbn.sector + 1) % spt.max(1)));
        let at_ps = u128::from(estimate) * 1000;
        let past = (u128::from(self.model.rot_pos(estimate)) + rev - end_pos) % rev;
        let exact = if past <= rev / 2 { at_ps - past.min(at_ps) } else { at_ps + (rev - past) };
        exact.div_ceil(1000) as SimTime
    }

    /// The first sector of a track to start passing under the head at or after `t`, and when.
    fn first_sector_after(&self, cylinder: u32, surface: u32, t: SimTime) -> Option<(u32, SimTime)> {
        let angles = self.model.layout().track_angles(cylinder, surface)?;
        let spt = angles.spt;
        let rev = self.model.revolution_ps();
        let pos0 = angles.sector_start(0);
        let delta = (self.model.rot_pos(t) + rev - pos0) % rev;
        let guess = ((u128::from(delta) * u128::from(spt)).div_ceil(u128::from(rev)) % u128::from(spt)) as u32;
        // The guess is off by at most one sector either way (rounding of the skew offset).
        let mut best: Option<(u32, SimTime)> = None;
        for s in [guess + spt - 1, guess, guess + 1] {
            let s = s % spt;
            let w = self.model.wait_for(t, angles.sector_start(s));
            if best.is_none_or(|(_, bw)| w < bw) {
                best = Some((s, w));
            }
        }
        best.map(|(s, w)| (s, t + w))
    }

    /// Whole sectors of a track (of `spt`) passing between `from` and `until`.
    fn sectors_between(&self, spt: u32, from: SimTime, until: SimTime) -> u32 {
        if until <= from {
            return 0;
        }
        // One nanosecond of slack for the rounding of instants.
        let span_ps = u128::from(until - from - 1) * 1000;
        ((span_ps * u128::from(spt) / u128::from(self.model.revolution_ps())) as u32).min(spt)
    }

    /// The wanted sectors of an arc: fills `pieces` and `weights` (one per position).
    fn weigh_arc(&mut self, fb: &Freeblock, cylinder: u32, surface: u32, first: u32, count: u32) {
        self.pieces.clear();
        self.model.layout().arc_lbns(cylinder, surface, first, count, &mut self.pieces);
        self.weights.clear();
        self.weights.resize(count as usize, 0);
        fb.sets().mark_wanted(&self.pieces, &mut self.weights, 1);
    }

    /// The LBN-contiguous piece of the last weighed arc with the most wanted sectors, trimmed to
    /// its first and last wanted sector: `(lbns, wanted)`.
    fn best_piece(&self) -> Option<(Range<u64>, u64)> {
        let mut best: Option<(Range<u64>, u64)> = None;
        for (r, pos) in &self.pieces {
            let n = (r.end - r.start) as usize;
            let w = &self.weights[*pos as usize..*pos as usize + n];
            let wanted: u64 = w.iter().map(|&x| u64::from(x.min(1))).sum();
            if wanted == 0 || best.as_ref().is_some_and(|b| b.1 >= wanted) {
                continue;
            }
            let first = w.iter().position(|&x| x > 0).expect("wanted > 0") as u64;
            let last = w.iter().rposition(|&x| x > 0).expect("wanted > 0") as u64;
            best = Some((r.start + first..r.start + last + 1, wanted));
        }
        best
    }

    /// The prepend on the destination track: wanted sectors passing between `arrive` and the
    /// foreground's first sector, contiguous in LBN with it.
    fn prepend(&mut self, fb: &Freeblock, p: &Pending, arrive: SimTime, deadline: SimTime) -> Option<(Range<u64>, u64)> {
        if !p.op.is_read() {
            return None;
        }
        let (cyl, surf) = (p.target.cylinder, p.target.surface);
        let spt = self.model.layout().sectors_per_track(cyl);
        let mut k = self.sectors_between(spt, arrive, deadline).min(spt.saturating_sub(1));
        // A bus slower than the media: the merged command's data, prepended sectors first,
        // must still reach the host by the foreground's own completion.
        let (bus, sector) = (self.bus_per_sector_ns(), self.model.sectors_ns(1_000, spt.max(1)) as f64 / 1e3);
        if bus > sector {
            let room = self.fg_end.saturating_sub(deadline) as f64 - bus * f64::from(p.sectors);
            k = k.min((room.max(0.0) / (bus - sector)) as u32);
        }
        if k == 0 || fb.sets().track_wanted(cyl, surf) == 0 {
            return None;
        }
        let fg_sector = self.model.layout().lbn_to_pbn(p.lbn).ok()?.sector;
        self.weigh_arc(fb, cyl, surf, (fg_sector + spt - k) % spt, k);
        // Only the piece that runs into the foreground's first LBN can be merged (Fig. 10).
        let (r, pos) = self.pieces.iter().find(|(r, _)| r.end == p.lbn)?.clone();
        let n = (r.end - r.start) as usize;
        let w = &self.weights[pos as usize..pos as usize + n];
        let first = w.iter().position(|&x| x > 0)? as u64;
        let wanted = w.iter().filter(|&&x| x > 0).count() as u64;
        Some((r.start + first..r.end, wanted))
    }

    /// The margin on a move between two tracks (none without a move): the one conservatism, or
    /// the distance's learned margin.
    fn margin(&self, from: HeadState, to: HeadState) -> SimTime {
        if from == to {
            return 0;
        }
        match &self.adaptive {
            Some(a) => a.margins_ns[AdaptiveMargin::bucket(from.cylinder, to.cylinder) as usize],
            None => self.conservatism_ns,
        }
    }

    /// A separate read on track `(cylinder, surface)` reached from `head` at `free`, leaving in
    /// time to reach the foreground's track by `deadline`.
    #[allow(clippy::too_many_arguments)]
    fn other_track(&mut self, fb: &Freeblock, head: HeadState, free: SimTime, cylinder: u32, surface: u32, p: &Pending, deadline: SimTime) -> Option<(Range<u64>, u64, SimTime)> {
        let (here, dst) = (HeadState { cylinder, surface }, HeadState { cylinder: p.target.cylinder, surface: p.target.surface });
        let arrive = free + self.model.move_ns(head, cylinder, surface, Op::Read) + self.margin(head, here);
        let to_dst = self.model.move_ns(here, p.target.cylinder, p.target.surface, p.op) + self.margin(here, dst);
        let leave = deadline.checked_sub(to_dst)?;
        // The foreground command must be at the drive in time to follow: it is sent only when
        // a slot frees, and its seek cannot start before its processing is over.
        if self.fg_send + self.model.overhead_ns(p.op) + to_dst > deadline {
            return None;
        }
        let (first, start) = self.first_sector_after(cylinder, surface, arrive)?;
        let spt = self.model.layout().sectors_per_track(cylinder);
        // Its completion frees the slot the next foreground command takes: its data must be
        // across the bus by the time the foreground's media work starts, or the drive idles
        // waiting for that next command.
        let bus_room = (deadline.saturating_sub(start) as f64 / self.bus_per_sector_ns().max(1e-9)).min(f64::from(u32::MAX)) as u32;
        let n = self.sectors_between(spt, start, leave).min(bus_room);
        if n == 0 {
            return None;
        }
        self.weigh_arc(fb, cylinder, surface, first, n);
        let (r, wanted) = self.best_piece()?;
        // When the read ends: the last wanted sector's pass.
        let pos_last = self.pieces.iter().find(|(q, _)| q.start < r.end && r.end <= q.end).map(|(q, pos)| pos + (r.end - 1 - q.start) as u32)?;
        let end = start + self.model.sectors_ns(u64::from(pos_last) + 1, spt);
        Some((r, wanted, end))
    }

    /// The best separate read on a track other than the source and destination, leaving in
    /// time to reach the foreground's track by `deadline`: nearest cylinders to the source and
    /// destination first, at most `max_tracks` tracks with wanted sectors.
    fn search_other(&mut self, fb: &Freeblock, head: HeadState, free: SimTime, p: &Pending, deadline: SimTime) -> Option<(Range<u64>, u64, SimTime)> {
        let dst = HeadState { cylinder: p.target.cylinder, surface: p.target.surface };
        let direct = self.model.move_ns(head, dst.cylinder, dst.surface, p.op);
        let slack = deadline.saturating_sub(free + direct);
        let cylinders = self.model.layout().cylinders();
        let surfaces = self.model.layout().surfaces();
        let mut examined = 0u32;
        let mut best: Option<(Range<u64>, u64, SimTime)> = None;
        let centres = [head.cylinder, dst.cylinder];
        for d in 0..cylinders {
            let mut any_in_reach = false;
            for (ci, &centre) in centres.iter().enumerate() {
                for cyl in [centre.checked_sub(d), centre.checked_add(d).filter(|&x| x < cylinders && d > 0)].into_iter().flatten() {
                    // The other centre's ring covers this cylinder already.
                    if ci == 1 && cyl.abs_diff(head.cylinder) <= d {
                        continue;
                    }
                    // A lower bound on the detour (a head switch may be saved on one leg).
                    let extra = (self.model.move_ns(head, cyl, 0, Op::Read) + self.model.move_ns(HeadState { cylinder: cyl, surface: 0 }, dst.cylinder, dst.surface, p.op)).saturating_sub(direct + self.model.head_switch_ns());
                    let ring = HeadState { cylinder: cyl, surface: u32::MAX };
                    if extra + self.margin(head, ring) + self.margin(ring, dst) >= slack {
                        continue;
                    }
                    any_in_reach = true;
                    if fb.sets().cylinder_wanted(cyl) == 0 {
                        continue;
                    }
                    for surf in 0..surfaces {
                        let here = HeadState { cylinder: cyl, surface: surf };
                        if here == head || here == dst || fb.sets().track_wanted(cyl, surf) == 0 {
                            continue;
                        }
                        examined += 1;
                        if let Some(o) = self.other_track(fb, head, free, cyl, surf, p, deadline) {
                            if best.as_ref().is_none_or(|b| o.1 > b.1) {
                                best = Some(o);
                            }
                        }
                        if examined >= self.config.max_tracks {
                            return best;
                        }
                    }
                }
            }
            if !any_in_reach && d > 0 {
                break;
            }
        }
        best
    }

    /// The free reads for foreground request `p` whose first sector passes at `deadline`, with
    /// the heads at `head` free from `free`.
    fn plan(&mut self, fb: &Freeblock, head: HeadState, free: SimTime, p: &Pending, deadline: SimTime) -> FreePlan {
        let dst = HeadState { cylinder: p.target.cylinder, surface: p.target.surface };
        let mut best = FreePlan::default();
        // The destination track: merge.
        let arrive = free + self.model.move_ns(head, dst.cylinder, dst.surface, p.op) + self.margin(head, dst);
        let prepend = self.prepend(fb, p, arrive, deadline);
        if let Some((r, wanted)) = prepend.clone() {
            best = FreePlan { separate: None, prepend: Some(r), wanted, moves: Vec::new() };
        }
        // The source track: only without the one-per-track rule.
        if !self.config.one_per_track && head != dst && fb.sets().track_wanted(head.cylinder, head.surface) > 0 {
            if let Some((r, wanted, _)) = self.other_track(fb, head, free, head.cylinder, head.surface, p, deadline) {
                if wanted > best.wanted {
                    self.stats.source_track_reads += 1;
                    best = FreePlan { separate: Some(r), prepend: None, wanted, moves: Vec::new() };
                }
            }
        }
        if let Some((r, wanted, _)) = self.search_other(fb, head, free, p, deadline) {
            if wanted > best.wanted {
                best = FreePlan { separate: Some(r), prepend: None, wanted, moves: Vec::new() };
            }
        }
        // Ours: when the prepend cannot fill the opportunity (the track's LBNs wrap before the
        // foreground's, Fig. 10, or few sectors there are wanted), read another track first and
        // leave it in time to reach the prepend's first sector.
        if self.config.combine {
            if let Some((pr, pw)) = prepend {
                let spt = self.model.layout().sectors_per_track(dst.cylinder);
                let prepend_start = deadline.saturating_sub(self.model.sectors_ns(p.lbn - pr.start, spt.max(1)));
                if let Some((r, wanted, _)) = self.search_other(fb, head, free, p, prepend_start) {
                    if wanted + pw > best.wanted {
                        self.stats.combined += 1;
                        best = FreePlan { separate: Some(r), prepend: Some(pr), wanted: wanted + pw, moves: Vec::new() };
                    }
                }
            }
        }
        // The moves whose margins the plan relied on: to a separate read's track and on, or
        // straight to the destination for a prepend.
        let mut via = vec![head];
        if let Some(pbn) = best.separate.as_ref().and_then(|r| self.model.layout().lbn_to_pbn(r.start).ok()) {
            via.push(HeadState { cylinder: pbn.cylinder, surface: pbn.surface });
        }
        via.push(dst);
        if best.wanted > 0 {
            best.moves = via.windows(2).filter(|w| w[0] != w[1]).map(|w| AdaptiveMargin::bucket(w[0].cylinder, w[1].cylinder)).collect();
        }
        best
    }
}

/// Builds the host's model for `truth` behind a black box: learned by characterising a drive
/// of the same kind (its own seeded black box), or the truth itself.
///
/// # Errors
/// Characterisation errors, as [`Error::Config`] naming `external.model`.
pub fn host_model(truth: &Arc<Disk>, config: &ExternalConfig, seed: u64) -> Result<Arc<Disk>> {
    match config.model {
        HostModel::Truth => Ok(Arc::clone(truth)),
        HostModel::Learned => {
            let mut probe = BlackBox::new(Arc::clone(truth), config.effects.clone(), seed ^ 0xC4A7);
            let options = super::characterize::Options { name: format!("{}_learned", truth.spec().name), ..super::characterize::Options::default() };
            let learned = super::characterize::characterize(&mut probe, &options).map_err(|e| Error::Config { origin: "external.model".into(), message: format!("characterising the drive: {e}") })?;
            Ok(Arc::new(Disk::new(learned.spec)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::freeblock::FreeblockConfig;
    use freeblock_disk::library;

    /// The Atlas 10K on paper 001's Ultra2 SCSI bus (the library's bus is 15 times slower).
    fn atlas() -> Arc<Disk> {
        let mut spec = library::get("atlas10k").unwrap().without_cache();
        spec.controller.bus_sector_ms = crate::external::ULTRA2_BUS_SECTOR_MS;
        Arc::new(Disk::new(spec).unwrap())
    }

    fn pending(disk: &Disk, id: u64, lbn: u64, sectors: u32) -> Pending {
        Pending { id, arrival: 0, lbn, sectors, op: Op::Read, target: disk.target(lbn).unwrap() }
    }

    fn scan(disk: &Arc<Disk>) -> Freeblock {
        let config: FreeblockConfig = toml::from_str("[[tasks]]\ntype = \"scan\"\n").unwrap();
        let mut fb = Freeblock::new(Arc::clone(disk), config).unwrap();
        fb.start(0).unwrap();
        fb
    }

    /// Serves `lbns` through a host, the next one picked as soon as the host wants one; returns
    /// the host.
    fn serve(config: ExternalConfig, lbns: &[u64], mut fb: Option<&mut Freeblock>) -> ExternalHost {
        let disk = atlas();
        let bb = BlackBox::new(Arc::clone(&disk), config.effects.clone(), 7);
        let mut host = ExternalHost::new(bb, Arc::clone(&disk), config).unwrap().keeping_errors();
        let mut drive = Drive::new(Arc::clone(&disk));
        let mut now = 0;
        let mut next = 0;
        loop {
            while next < lbns.len() && host.wants_request(now) {
                host.dispatch(now, &pending(&disk, next as u64, lbns[next], 8), fb.as_deref_mut(), &mut drive).unwrap();
                next += 1;
                assert!(host.outstanding() <= host.config.max_outstanding as usize);
            }
            let Some(t) = host.next_completion_time().unwrap() else { break };
            now = t;
            host.complete(now, fb.as_deref_mut(), &mut drive).unwrap();
        }
        host
    }

    fn random_lbns(n: usize, capacity: u64) -> Vec<u64> {
        (0..n as u64).map(|i| (i * 2_654_435_761) % (capacity - 8)).collect()
    }

    #[test]
    fn predictions_are_exact_on_a_drive_without_effects() {
        let config = ExternalConfig { effects: Effects::none(), model: HostModel::Truth, ..ExternalConfig::default() };
        let host = serve(config, &random_lbns(200, atlas().capacity()), None);
        let s = host.stats();
        assert_eq!(s.foreground, 200);
        let worst = s.errors_ns.iter().map(|e| e.unsigned_abs()).max().unwrap();
        assert!(worst <= 2, "worst prediction error {worst} ns");
    }

    #[test]
    fn effects_make_predictions_err() {
        let host = serve(ExternalConfig { model: HostModel::Truth, ..ExternalConfig::default() }, &random_lbns(300, atlas().capacity()), None);
        let worst = host.stats().errors_ns.iter().map(|e| e.unsigned_abs()).max().unwrap();
        assert!(worst > 1_000, "a drive with effects should surprise the host ({worst} ns)");
    }

    #[test]
    fn free_reads_merge_into_one_command_on_one_track_and_stay_within_two_outstanding() {
        let disk = atlas();
        let mut fb = scan(&disk);
        let config = ExternalConfig { effects: Effects::none(), model: HostModel::Truth, conservatism_ms: 0.0, ..ExternalConfig::default() };
        let host = serve(config, &random_lbns(400, disk.capacity()), Some(&mut fb));
        let s = host.stats();
        assert!(s.merged > 0 && s.free_commands > 0, "merged {}, free commands {}", s.merged, s.free_commands);
        assert_eq!(s.late_by_a_turn, 0, "exact predictions never cost the foreground a turn");
        assert!(fb.report(1).totals.free_bytes > 0);
    }

    #[test]
    fn a_merged_command_is_one_command_on_the_foreground_track() {
        let disk = atlas();
        let mut fb = scan(&disk);
        let config = ExternalConfig { effects: Effects::none(), model: HostModel::Truth, conservatism_ms: 0.0, ..ExternalConfig::default() };
        let bb = BlackBox::new(Arc::clone(&disk), Effects::none(), 1);
        let mut host = ExternalHost::new(bb, Arc::clone(&disk), config).unwrap();
        let mut drive = Drive::new(Arc::clone(&disk));
        // A read well into a track, far from the heads at cylinder 0: its latency has room.
        let mut merged = None;
        for lbn in (3_000_000..3_100_000).step_by(997) {
            let p = pending(&disk, 0, lbn, 8);
            let (head, free) = (host.base_head, host.base_free.max(host.last_seen));
            let alone = disk.access_when_free(head, 0, free, p.lbn, 8, p.op, &mut Vec::new()).unwrap();
            let plan = host.plan(&fb, head, free.max(disk.overhead_ns(Op::Read)), &p, alone.media_start);
            if let (Some(r), None) = (plan.prepend, plan.separate) {
                merged = Some((p, r));
                break;
            }
        }
        let (p, r) = merged.expect("some request gets a prepend");
        assert_eq!(r.end, p.lbn, "the prepend runs into the foreground's first LBN");
        let track = |l| disk.target(l).map(|t| (t.cylinder, t.surface)).unwrap();
        assert_eq!(track(r.start), track(p.lbn), "on the foreground's track");
        host.dispatch(0, &p, Some(&mut fb), &mut drive).unwrap();
        assert_eq!(host.outstanding(), 1, "one command");
        assert_eq!(host.at_drive[0].command.lbn, r.start);
        assert_eq!(host.at_drive[0].command.sectors, u64::from(p.sectors) + (r.end - r.start));
    }

    #[test]
    fn a_held_pick_falls_due_just_before_the_mechanism_frees() {
        let disk = atlas();
        let mut drive = Drive::new(Arc::clone(&disk));
        let p = pending(&disk, 0, disk.capacity() / 2, 8);
        let host_with = |pick_lead_ms| {
            let config = ExternalConfig { effects: Effects::none(), model: HostModel::Truth, pick_lead_ms, ..ExternalConfig::default() };
            ExternalHost::new(BlackBox::new(Arc::clone(&disk), Effects::none(), 1), Arc::clone(&disk), config).unwrap()
        };
        // Paper 001's host: the next pick as soon as a slot frees.
        let mut at_slot = host_with(None);
        at_slot.dispatch(0, &p, None, &mut drive).unwrap();
        assert!(at_slot.wants_request(0) && at_slot.pick_due().is_none());
        // Held: due the lead and the next command's processing before the predicted media end.
        let mut held = host_with(Some(0.2));
        assert!(held.wants_request(0), "an idle drive takes a request at once");
        held.dispatch(0, &p, None, &mut drive).unwrap();
        let end = held.at_drive[0].predicted.media_end;
        let due = held.pick_due().expect("one command at the drive");
        assert_eq!(due, end - 200_000 - disk.overhead_ns(Op::Read));
        assert!(!held.wants_request(due - 1) && held.wants_request(due));
        let bad = ExternalConfig { pick_lead_ms: Some(f64::NAN), ..ExternalConfig::default() };
        let e = ExternalHost::new(BlackBox::new(Arc::clone(&disk), Effects::none(), 1), Arc::clone(&disk), bad).err().unwrap();
        assert!(e.to_string().contains("external.pick_lead_ms"), "{e}");
    }

    #[test]
    fn margins_are_learned_per_distance_bucket() {
        assert_eq!([AdaptiveMargin::bucket(5, 5), AdaptiveMargin::bucket(5, 6), AdaptiveMargin::bucket(9, 6), AdaptiveMargin::bucket(0, 4), AdaptiveMargin::bucket(0, 7), AdaptiveMargin::bucket(0, 8)], [0, 1, 2, 3, 3, 4]);
        let mut a = AdaptiveMargin::new(400_000);
        a.learn(&[3], false);
        a.learn(&[3], false);
        assert_eq!(a.margins_ns[3], 400_000 - 2 * MARGIN_STEP_DOWN_NS);
        a.learn(&[3, 5], true);
        assert_eq!((a.margins_ns[3], a.margins_ns[5]), (500_000 - 2 * MARGIN_STEP_DOWN_NS, 500_000));
        for _ in 0..20 {
            a.learn(&[5], true);
        }
        assert_eq!(a.margins_ns[5], MARGIN_MAX_NS);
        let bucket3_ms = (500_000 - 2 * MARGIN_STEP_DOWN_NS) as f64 / 1e6;
        assert_eq!(a.table(), vec![(4, 3, bucket3_ms), (16, 21, 1.0)]);
    }

    #[test]
    fn exact_predictions_teach_smaller_margins_and_more_free_sectors() {
        let disk = atlas();
        let lbns = random_lbns(600, disk.capacity());
        let run = |adaptive_margin| {
            let mut fb = scan(&disk);
            let config = ExternalConfig { effects: Effects::none(), model: HostModel::Truth, adaptive_margin, ..ExternalConfig::default() };
            serve(config, &lbns, Some(&mut fb)).stats()
        };
        let (fixed, learned) = (run(false), run(true));
        assert!(learned.margins.iter().all(|m| m.2 < 0.4) && !learned.margins.is_empty(), "{:?}", learned.margins);
        assert!(learned.planned_sectors > fixed.planned_sectors, "{} vs {}", learned.planned_sectors, fixed.planned_sectors);
        assert_eq!(learned.late_by_a_turn, 0);
    }

    #[test]
    fn one_per_track_keeps_free_reads_off_the_source_track() {
        let disk = atlas();
        let lbns = random_lbns(300, disk.capacity());
        let run = |one_per_track| {
            let mut fb = scan(&disk);
            let config = ExternalConfig { effects: Effects::none(), model: HostModel::Truth, one_per_track, ..ExternalConfig::default() };
            serve(config, &lbns, Some(&mut fb)).stats()
        };
        let paper = run(true);
        assert_eq!(paper.source_track_reads, 0);
        assert!(run(false).source_track_reads > 0);
    }

    #[test]
    fn never_more_than_max_outstanding_at_the_drive() {
        for max_outstanding in [1, 2, 4] {
            let disk = atlas();
            let mut fb = scan(&disk);
            let config = ExternalConfig { max_outstanding, model: HostModel::Truth, ..ExternalConfig::default() };
            // `serve` asserts the bound after every dispatch; completions only lower it.
            let s = serve(config, &random_lbns(100, disk.capacity()), Some(&mut fb)).stats();
            assert_eq!(s.foreground, 100);
        }
    }

    #[test]
    fn same_seed_same_run() {
        let disk = atlas();
        let run = || {
            let mut fb = scan(&disk);
            let s = serve(ExternalConfig { model: HostModel::Truth, ..ExternalConfig::default() }, &random_lbns(150, disk.capacity()), Some(&mut fb)).stats();
            (s.errors_ns, fb.report(1).totals)
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn bad_settings_are_refused_by_name() {
        let disk = atlas();
        let bad = ExternalConfig { conservatism_ms: -1.0, ..ExternalConfig::default() };
        let e = ExternalHost::new(BlackBox::new(Arc::clone(&disk), Effects::none(), 1), Arc::clone(&disk), bad).err().unwrap();
        assert!(e.to_string().contains("external.conservatism_ms"), "{e}");
        let other = Arc::new(Disk::new(library::get("cheetah9lp").unwrap().without_cache()).unwrap());
        let e = ExternalHost::new(BlackBox::new(other, Effects::none(), 1), disk, ExternalConfig::default()).err().unwrap();
        assert!(e.to_string().contains("another drive"), "{e}");
    }
}
