//! The rearrangement policy: monitoring, the periodic rearrangement and the moves that carry it
//! out, as a layout policy of the one engine.
//!
//! ```text
//!   request ─► translate: block in the table? ─yes─► its copy in the reserved area (writes: dirty)
//!      │                                     └─no──► its home (logical → physical skips the area)
//!      └─► counter.record(block)                    (exact counts or space-saving)
//!
//!   timer (every period) ─► hot list of the period just ended ─► placement ─► target table
//!        moves: out (cooled or displaced: 1 I/O, or 3 when dirty), then in (3 I/Os)
//!        each I/O served as foreground | idle | free (freeblock)   — or instant (costs nothing)
//! ```
//!
//! | move | I/Os (paper 002 §3.1.3) | the in-memory table changes | durable |
//! |---|---|---|---|
//! | copy in | read home, write slot, write table | when the slot is written (the copy is entered) | when the table write that carries the entry completes |
//! | move out, clean | write table | at once (the home is current) | likewise |
//! | move out, dirty | read copy, write home, write table | when the home is written (the entry is dropped) | likewise |
//!
//! **Consistency with the foreground.** Requests are translated when they arrive, so a move must
//! not race them: a move of a block starts only when no write of it is in flight; a write of a
//! block that arrives while the block is moving aborts the move (the data it copied is stale; it
//! is tried again later); a slot whose old block was moved out is not refilled while workload I/O
//! translated to it is still in flight. A write to a block in the area goes to its copy and sets
//! its dirty bit, so the copy is written back home when the block cools (paper 002 §3.1.2).
//! Whether a move out is clean or dirty is decided when it starts, not when it is planned (a
//! block written in between is dirty).
//!
//! **Table writes.** The paper writes the block table after every move. With one move at a time
//! (foreground or idle service) we do the same. With free service many moves run at once and one
//! table write commits every move whose data is in place (group commit); the report counts every
//! I/O actually issued.
//!
//! ## Persistence: the block table is journalled
//!
//! The table is a [`BlockMap`] (region = the hidden range) kept on stable storage by a
//! [`Journal`]: snapshot + CRC-framed log of [`MapOp`]s ([`Rearrange::journal_storage`]). Every
//! change of the table is an operation applied to the in-memory table and queued; **a table write
//! carries every operation queued before it is issued, and commits them ([`Journal::commit`]) when
//! it completes** — operations queued while it is in flight wait for the next one. That is the
//! paper's rule (the on-disk table changes only by a table write) with group commit. What is
//! logged:
//!
//! | operation | when | committed by |
//! |---|---|---|
//! | `Write` of the block to its slot | a copy-in's slot write completed | the next table write |
//! | `Trim` of the block | a move out: at once (clean) or when the home is written (dirty) | the next table write |
//! | `SetDirty`, `Write` (version) | a workload write to a copy completed | nothing by itself: rides along with the next table write (paper §3.1.2: the on-disk dirty bits may be stale) |
//! | reservation of a slot for a copy-in under way | — | never: in memory only. No move survives a crash, so recovery sees the slot free (the `Write` that fills it replays onto a free slot) |
//!
//! The journal is compacted (a new snapshot of the committed table) after a commit once it has
//! grown past [`JOURNAL_LIMIT_BYTES`]; in the paper every table write rewrites the whole table, so
//! this costs nothing the paper did not pay. [`Rearrange::recover`] rebuilds the policy from the
//! durable table with [`DirtyRule::Uncertain`]: every block in the area is marked dirty (paper
//! §3.1.2), so it is copied back home when it cools; no move is in progress and the counters
//! start afresh.
//!
//! **The rule that keeps acknowledged writes.** From the moment a block's entry changes in memory
//! until that change is durable, a crash may leave either the old or the new entry, so the block
//! has two possible places: home and the slot. *A workload write of such a block goes to both*
//! (two physical I/Os; the request completes when both have), so whichever place the recovered
//! table names holds it. Reads follow the in-memory table: both places are equal. And a slot
//! vacated by a move out is not reused until the drop is durable (the recovered table may still
//! name it). (Sending the write home and dropping the not-yet-durable copy instead is not enough:
//! the table write that carries the entry may already be on its way, and then the durable table
//! names the slot.)
//!
//! | a crash … | the durable table | why no acknowledged write is lost |
//! |---|---|---|
//! | during a copy-in, before its slot write completes | no entry | reads go home; the copy-in started with no write of the block in flight and a write arriving since aborted it, so the home is current |
//! | after the copy-in's slot write, before its table write completes | no entry, or the entry if a table write carrying it completed | home and slot are equal (as above), and writes since went to both |
//! | after the copy-in's table write | the entry, marked dirty | writes went to the copy; on cooling it is copied home |
//! | during a clean move out, before its table write | the entry, marked dirty | clean: no write since the copy was taken, so copy = home; writes since went to both; the slot is not reused |
//! | during a dirty move out, before the home write completes | the entry, marked dirty | the copy is current: a write during the move aborts it |
//! | after the dirty move out's home write, before its table write | the entry, marked dirty | home = copy; writes since went to both; the slot is not reused |
//! | after the move out's table write | no entry | the home is current |
//! | inside a table write's journal append (torn) | as before that table write | a commit is atomic |
//!
//! In [`Moves::Instant`] runs (and replays) no data moves, and each batch of changes is committed
//! at once.
//!
//! **Schedules.** `alternate` (paper 002 Tables 2–3): periods alternate off and on; at the start
//! of an on period the area is filled from the counts of the period just ended, at the start of an
//! off period it is emptied. `always`: every period is rearranged from the previous one's counts.

use std::collections::{HashMap, VecDeque};

use freeblock_disk::{Disk, Op, SimTime};
use serde::{Deserialize, Serialize};

use super::area::{AreaConfig, ReservedArea};
use super::hotlist::{CounterSpec, HotSpotCounter};
use super::placement::{place, Overflow, Placement};
use super::RearrangeError;
use crate::layout::error::{LayoutError, Result};
use crate::layout::journal::{DirtyRule, Journal, MapOp, MemStorage, RecoveryReport};
use crate::layout::map::{BlockMap, Candidates, MapConfig, PhysRange, WriteRequest};
use crate::layout::policy::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo, Service};

/// When the area is filled and emptied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// Periods alternate: the first is off (monitoring only), the next on, and so on.
    #[default]
    Alternate,
    /// Every period after the first is rearranged from the counts of the one before.
    Always,
}

/// How moves are served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Moves {
    /// As foreground requests, one move at a time (the paper's driver).
    #[default]
    Foreground,
    /// In idle time only, one move at a time.
    Idle,
    /// With free bandwidth through freeblock scheduling, all moves at once (ours).
    Free,
    /// Free bandwidth, and freeblock's idle-time transfers when the disk has had nothing to do
    /// for a while (the run's freeblock configuration sets how long): not free, since an arrival
    /// may wait for the revolution under way, but it finishes where free bandwidth is scarce.
    FreeIdle,
    /// Applied at the period's start without any I/O: what the layout would give if moving cost
    /// nothing (a bound, not a mechanism).
    Instant,
}

impl Moves {
    fn service(self) -> Service {
        match self {
            Moves::Foreground | Moves::Instant => Service::Foreground,
            Moves::Idle => Service::Idle,
            Moves::Free | Moves::FreeIdle => Service::Free,
        }
    }
}

fn day() -> f64 {
    86_400.0
}

fn exact() -> CounterSpec {
    CounterSpec::Exact
}

/// The `[layout]` table of a rearrangement run (`type = "rearrange"`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RearrangeConfig {
    /// The reserved cylinders. Default the paper's: 48 centred cylinders, 8 KB blocks.
    #[serde(default)]
    pub area: AreaConfig,
    /// Blocks to place per rearrangement (the hottest). Default: as many as the area's free slots.
    #[serde(default)]
    pub blocks: Option<usize>,
    /// Placement policy. Default organ-pipe.
    #[serde(default)]
    pub placement: Placement,
    /// Reference counter. Default exact counts.
    #[serde(default = "exact")]
    pub counter: CounterSpec,
    /// Length of a monitoring period, simulated seconds. Default one day.
    #[serde(default = "day")]
    pub period_s: f64,
    /// When the area is filled. Default alternate.
    #[serde(default)]
    pub schedule: Schedule,
    /// How moves are served. Default foreground.
    #[serde(default)]
    pub moves: Moves,
}

impl Default for RearrangeConfig {
    fn default() -> Self {
        Self {
            area: AreaConfig::default(),
            blocks: None,
            placement: Placement::default(),
            counter: CounterSpec::Exact,
            period_s: day(),
            schedule: Schedule::default(),
            moves: Moves::default(),
        }
    }
}

/// A change of the block table, as the foreground sees it (for replaying a run's moves), and the
/// table writes that make changes durable (a replay mirrors them: while a change is not durable,
/// writes of its block go to two places).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TableChange {
    /// The block now lives in the slot at this LBN.
    In {
        /// Logical block.
        block: u64,
        /// The slot's first sector.
        slot_lbn: u64,
    },
    /// The block is back at home only.
    Out {
        /// Logical block.
        block: u64,
    },
    /// A table write was issued: it carries every change so far.
    TableWrite,
    /// The table write under way completed: the changes it carries are durable.
    Commit,
}

/// When a [`TableChange`] took effect, counted in the hook calls the foreground makes (arrivals,
/// dispatches and completions of workload I/O, timers), which are the same in a run whose moves
/// cost nothing: during call `call` (1-based), or after it and before the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct When {
    /// Foreground hook calls begun so far.
    pub call: u64,
    /// Inside that call (else after it).
    pub inside: bool,
}

/// Figures of one period's rearrangement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PeriodReport {
    /// Period index (0-based); the rearrangement ran at its start.
    pub period: u64,
    /// Whether the area was in use in this period.
    pub on: bool,
    /// Blocks the plan wanted in the area.
    pub planned: u64,
    /// Moves planned (outs and ins).
    pub moves: u64,
    /// Moves committed by the end of the period.
    pub committed: u64,
    /// Seconds from the period's start until its last planned move was committed (`None`: not
    /// all were, by the period's end).
    pub done_after_s: Option<f64>,
    /// Seconds until half of the planned moves were committed (`None`: not by the period's end).
    pub half_after_s: Option<f64>,
    /// Seconds until 90% of the planned moves were committed (`None`: not by the period's end).
    pub ninety_after_s: Option<f64>,
    /// References counted in the period before (what the hot list came from).
    pub references: u64,
}

/// What the policy did, for reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RearrangeReport {
    /// Moves served how.
    pub moves: Option<Moves>,
    /// Slots for hot blocks.
    pub free_slots: u64,
    /// Copy-ins committed.
    pub copied_in: u64,
    /// Blocks moved out (clean and dirty).
    pub moved_out: u64,
    /// Of those, dirty ones (copied back home).
    pub moved_out_dirty: u64,
    /// Moves aborted by a foreground write of the block (retried).
    pub aborted: u64,
    /// I/Os the moves issued: reads, data writes, table writes.
    pub move_reads: u64,
    /// Data writes of moves.
    pub move_writes: u64,
    /// Block-table writes.
    pub table_writes: u64,
    /// Workload writes that went to a copy (and dirtied it).
    pub writes_to_copies: u64,
    /// Workload block writes sent both home and to the slot, because the block's table entry was
    /// changing and the change was not durable yet (see the [module docs](self)).
    #[serde(default)]
    pub writes_to_both: u64,
    /// Bytes the reference counter holds.
    pub counter_bytes: u64,
    /// Per period.
    pub periods: Vec<PeriodReport>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    In,
    Out { dirty: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Waiting,
    ReadSource,
    WriteTarget,
    AwaitTable,
}

#[derive(Debug, Clone)]
struct Move {
    block: u64,
    slot_lbn: u64,
    kind: Kind,
    stage: Stage,
    aborted: bool,
    period: u64,
}

/// What a workload I/O part covers, to release at completion.
#[derive(Debug, Clone, Default)]
struct Part {
    write: bool,
    blocks: Vec<u64>,
    /// Slots it reads or writes (not refilled until it completes).
    slots: Vec<u64>,
    /// Writes that went to a copy only: (block, slot), dirtied at completion.
    copies_written: Vec<(u64, u64)>,
}

/// Tags of the policy's own I/O have the top bit set; table writes also the next.
const MOVE_TAG: u64 = 1 << 63;
const TABLE_TAG: u64 = 1 << 62;

/// The journal is compacted (a new snapshot) after a commit once it is longer than this.
pub const JOURNAL_LIMIT_BYTES: u64 = 1 << 20;

/// Adaptive block rearrangement (paper 002) as a layout policy. See the [module docs](self).
pub struct Rearrange {
    config: RearrangeConfig,
    area: ReservedArea,
    /// Blocks in the area: region = the hidden range, logical space = the logical disk. The
    /// in-memory table, which requests are translated by.
    map: BlockMap,
    /// The table on stable storage.
    journal: Journal<MemStorage>,
    /// The table as the journal has it: every operation carried by a table write issued so far.
    table: BlockMap,
    /// Operations applied to `map` that no table write has carried yet.
    unsent: Vec<MapOp>,
    /// Operations logged so far (operation `i` is the `i`-th, from 0), carried by table writes
    /// issued, and committed.
    logged: u64,
    carried: u64,
    durable: u64,
    /// Blocks whose last table change is not durable yet: the slot involved, the operation.
    unsettled: HashMap<u64, (u64, u64)>,
    /// Slots vacated by a move out that is not durable yet, with its operation.
    fenced: HashMap<u64, u64>,
    journal_limit: u64,
    counter: Box<dyn HotSpotCounter + Send>,
    capacity_blocks: u64,
    bs: u64,
    period: u64,
    period_start: SimTime,
    next_timer: SimTime,
    calls: u64,
    in_call: bool,
    queue: VecDeque<Move>,
    active: HashMap<u64, Move>,
    next_move: u64,
    moving: HashMap<u64, u64>,
    table_in_flight: Option<Vec<u64>>,
    awaiting_table: Vec<u64>,
    writes_in_flight: HashMap<u64, u32>,
    slot_users: HashMap<u64, u32>,
    parts: HashMap<u64, Part>,
    next_part: u64,
    changes: Vec<(When, TableChange)>,
    replay: Option<VecDeque<(When, TableChange)>>,
    report: RearrangeReport,
}

impl std::fmt::Debug for Rearrange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rearrange").field("config", &self.config).field("period", &self.period).finish_non_exhaustive()
    }
}

impl Rearrange {
    /// The policy on `disk` with `config`.
    ///
    /// # Errors
    /// [`LayoutError::Rearrange`] for an area that does not fit, a bad counter, or more blocks
    /// than free slots; [`LayoutError::Config`] for a bad period.
    pub fn new(disk: &Disk, config: RearrangeConfig) -> Result<Self> {
        if !(config.period_s.is_finite() && config.period_s > 0.0) {
            return Err(LayoutError::Config { field: "layout.period_s", message: format!("must be a positive number of seconds, not {}", config.period_s) });
        }
        let area = ReservedArea::new(disk, &config.area)?;
        let free_slots = area.free_slot_count();
        if let Some(n) = config.blocks {
            if n > free_slots {
                return Err(RearrangeError::HotListTooLarge { hot: n, slots: free_slots }.into());
            }
        }
        let bs = area.block_sectors();
        let hidden = area.lbns();
        let logical_blocks = area.logical_blocks();
        let mut map = BlockMap::new(MapConfig { first_lbn: hidden.start, sectors: hidden.end - hidden.start, block_sectors: bs, logical_blocks })?;
        // Everything in the hidden range but the free slots is held: the table, and the pieces
        // at the band's edges that hold no whole slot.
        let mut usable: Vec<u64> = area.slots().iter().enumerate().filter(|(i, _)| !area.is_table_slot(*i)).map(|(_, s)| s.lbn).collect();
        usable.sort_unstable();
        let mut b = hidden.start;
        for &s in &usable {
            if s % bs != 0 {
                return Err(LayoutError::Misaligned { what: "reserved-area slot", value: s, alignment: bs });
            }
            if s > b {
                map.pin(PhysRange::new(b, s - b))?;
            }
            b = s + bs;
        }
        if hidden.end > b {
            map.pin(PhysRange::new(b, hidden.end - b))?;
        }
        if config.moves != Moves::Instant && area.table_lbn().is_none() {
            return Err(LayoutError::Config { field: "layout.area.table_slots", message: "moves commit by writing the block table: it needs at least one slot".into() });
        }
        let journal = Journal::create(MemStorage::new(), &map)?;
        let table = map.clone();
        let counter = config.counter.build()?;
        let period_ns = freeblock_disk::time::ms_to_ns(config.period_s * 1e3);
        let report = RearrangeReport { moves: Some(config.moves), free_slots: free_slots as u64, ..RearrangeReport::default() };
        Ok(Self {
            capacity_blocks: logical_blocks,
            bs,
            config,
            area,
            map,
            journal,
            table,
            unsent: Vec::new(),
            logged: 0,
            carried: 0,
            durable: 0,
            unsettled: HashMap::new(),
            fenced: HashMap::new(),
            journal_limit: JOURNAL_LIMIT_BYTES,
            counter,
            period: 0,
            period_start: 0,
            next_timer: period_ns,
            calls: 0,
            in_call: false,
            queue: VecDeque::new(),
            active: HashMap::new(),
            next_move: 0,
            moving: HashMap::new(),
            table_in_flight: None,
            awaiting_table: Vec::new(),
            writes_in_flight: HashMap::new(),
            slot_users: HashMap::new(),
            parts: HashMap::new(),
            next_part: 0,
            changes: Vec::new(),
            replay: None,
            report,
        })
    }

    /// The policy replaying another run's table changes at the same points, without any move
    /// I/O: the foreground of that run as it would have been had its moves cost nothing.
    ///
    /// # Errors
    /// As [`Rearrange::new`].
    pub fn replaying(disk: &Disk, config: RearrangeConfig, changes: Vec<(When, TableChange)>) -> Result<Self> {
        let mut p = Self::new(disk, RearrangeConfig { moves: Moves::Instant, ..config })?;
        p.replay = Some(changes.into());
        Ok(p)
    }

    /// The policy rebuilt after a crash from the durable block table in `storage` (what
    /// [`Rearrange::journal_storage`] held): the committed table with every block in it marked
    /// dirty ([`DirtyRule::Uncertain`], paper 002 §3.1.2), no move in progress, fresh counters and
    /// period 0. The storage is checkpointed first, so a torn tail is gone before anything is
    /// appended.
    ///
    /// # Errors
    /// As [`Rearrange::new`]; as [`Journal::open`] for damaged storage; [`LayoutError::Config`]
    /// when the recovered table is not one of this area (another region or block size, other
    /// pinned space, reserved space).
    pub fn recover(disk: &Disk, config: RearrangeConfig, storage: MemStorage) -> Result<(Self, RecoveryReport)> {
        let mut p = Self::new(disk, config)?;
        let (journal, map, report) = Journal::open(storage, DirtyRule::Uncertain)?;
        let (want, got) = (p.map.to_snapshot(), map.to_snapshot());
        if got.config != want.config || got.pinned != want.pinned || !got.reserved.is_empty() {
            return Err(LayoutError::Config {
                field: "rearrange journal",
                message: format!("the recovered block table does not fit this area: config {:?}, {} pinned and {} reserved extents (want {:?}, {} pinned, none reserved)", got.config, got.pinned.len(), got.reserved.len(), want.config, want.pinned.len()),
            });
        }
        p.table = map.clone();
        p.map = map;
        p.journal = journal;
        Ok((p, report))
    }

    /// Compacts the journal after a commit once it is longer than `bytes` (default
    /// [`JOURNAL_LIMIT_BYTES`]).
    #[must_use]
    pub fn with_journal_limit(mut self, bytes: u64) -> Self {
        self.journal_limit = bytes;
        self
    }

    /// The block table's stable storage: the snapshot and the journal as committed. Clone it (and
    /// truncate the journal, for a torn append) to simulate a crash, then [`Rearrange::recover`].
    #[must_use]
    pub fn journal_storage(&self) -> &MemStorage {
        self.journal.storage()
    }

    /// The reserved area.
    #[must_use]
    pub fn area(&self) -> &ReservedArea {
        &self.area
    }

    /// The table of blocks in the area.
    #[must_use]
    pub fn map(&self) -> &BlockMap {
        &self.map
    }

    /// Every change of the table and when it took effect.
    #[must_use]
    pub fn changes(&self) -> &[(When, TableChange)] {
        &self.changes
    }

    /// The report so far.
    #[must_use]
    pub fn rearrange_report(&self) -> RearrangeReport {
        RearrangeReport { counter_bytes: self.counter.memory_bytes(), ..self.report.clone() }
    }

    fn on_period(&self, period: u64) -> bool {
        match self.config.schedule {
            Schedule::Alternate => period % 2 == 1,
            Schedule::Always => period >= 1,
        }
    }

    fn slot_of(&self, block: u64) -> Option<u64> {
        self.map.first_copy(block)
    }

    /// Applies `op` to the in-memory table and queues it for the next table write; returns its
    /// index.
    fn log(&mut self, op: MapOp) -> Result<u64> {
        self.map.apply(&op)?;
        self.unsent.push(op);
        self.logged += 1;
        Ok(self.logged - 1)
    }

    /// A table write is issued: it carries every operation queued so far.
    fn carry(&mut self) -> Result<()> {
        for op in std::mem::take(&mut self.unsent) {
            self.table.apply(&op)?;
            self.journal.append(&op)?;
        }
        self.carried = self.logged;
        Ok(())
    }

    /// The table write under way completed: what it carries is durable.
    fn commit_table(&mut self) -> Result<()> {
        self.journal.commit()?;
        self.durable = self.carried;
        let d = self.durable;
        self.unsettled.retain(|_, e| e.1 >= d);
        self.fenced.retain(|_, op| *op >= d);
        if self.journal.journal_len() > self.journal_limit {
            // Everything appended is committed, and `table` is exactly that.
            self.journal.checkpoint(&self.table)?;
        }
        Ok(())
    }

    fn apply(&mut self, change: TableChange, when: When) -> Result<()> {
        match change {
            TableChange::In { block, slot_lbn } => {
                let req = WriteRequest { logical: block, blocks: 1, candidates: Candidates::single(slot_lbn) };
                let i = self.log(MapOp::Write { req, chosen: slot_lbn })?;
                self.unsettled.insert(block, (slot_lbn, i));
                self.report.copied_in += 1;
            }
            TableChange::Out { block } => {
                let slot = self.slot_of(block);
                let i = self.log(MapOp::Trim { logical: block, blocks: 1 })?;
                if let Some(slot) = slot {
                    self.unsettled.insert(block, (slot, i));
                    self.fenced.insert(slot, i);
                }
                self.report.moved_out += 1;
            }
            TableChange::TableWrite => self.carry()?,
            TableChange::Commit => self.commit_table()?,
        }
        if self.replay.is_none() {
            self.changes.push((when, change));
        }
        Ok(())
    }

    /// The plan at a period's start: moves out (blocks leaving or changing slot), then moves in.
    fn plan(&mut self, now: SimTime) -> Result<()> {
        let period = self.period;
        let on = self.on_period(period);
        let references = self.counter.total();
        let target: Vec<(u64, u64)> = if on {
            let n = self.config.blocks.unwrap_or(self.area.free_slot_count());
            let hot = self.counter.hottest(n);
            let grid = self.area.slot_grid();
            place(self.config.placement, &hot, &grid, Overflow::Truncate)?
                .into_iter()
                .filter_map(|a| self.area.slot(a.slot).map(|s| (a.block, s.lbn)))
                .collect()
        } else {
            Vec::new()
        };
        self.counter.reset();
        // Moves not started are replaced by the new plan; moves under way finish.
        self.queue.clear();
        let wanted: HashMap<u64, u64> = target.iter().copied().collect();
        let current: Vec<(u64, u64)> = self.map.mapped().map(|(b, l)| (b, l.copies[0])).collect();
        let mut moves = 0u64;
        for &(block, slot_lbn) in &current {
            if wanted.get(&block) != Some(&slot_lbn) && !self.moving.contains_key(&block) {
                let dirty = self.map.is_dirty(block);
                self.queue.push_back(Move { block, slot_lbn, kind: Kind::Out { dirty }, stage: Stage::Waiting, aborted: false, period });
                moves += 1;
            }
        }
        for &(block, slot_lbn) in &target {
            if self.slot_of(block) != Some(slot_lbn) {
                self.queue.push_back(Move { block, slot_lbn, kind: Kind::In, stage: Stage::Waiting, aborted: false, period });
                moves += 1;
            }
        }
        self.report.periods.push(PeriodReport { period, on, planned: target.len() as u64, moves, committed: 0, done_after_s: (moves == 0).then_some(0.0), half_after_s: (moves == 0).then_some(0.0), ninety_after_s: (moves == 0).then_some(0.0), references });
        self.period_start = now;
        Ok(())
    }

    fn move_tag(id: u64) -> u64 {
        MOVE_TAG | id
    }

    fn max_parallel(&self) -> usize {
        match self.config.moves {
            Moves::Free | Moves::FreeIdle => usize::MAX,
            _ => 1,
        }
    }

    /// Starts queued moves whose block and slot are ready, as many as the service allows.
    fn start_moves(&mut self, ctx: &mut LayoutCtx<'_>) -> Result<()> {
        if self.config.moves == Moves::Instant {
            let mut changed = false;
            while let Some(m) = self.queue.pop_front() {
                let change = match m.kind {
                    Kind::In => {
                        if self.slot_of(m.block).is_some() || !self.map.is_free(m.slot_lbn, self.bs) {
                            continue;
                        }
                        TableChange::In { block: m.block, slot_lbn: m.slot_lbn }
                    }
                    Kind::Out { .. } => TableChange::Out { block: m.block },
                };
                self.apply(change, self.when())?;
                changed = true;
                self.committed(m.period, ctx.now);
            }
            if changed {
                // Moving costs nothing here: the batch is durable at once.
                self.apply(TableChange::TableWrite, self.when())?;
                self.apply(TableChange::Commit, self.when())?;
            }
            return Ok(());
        }
        let mut looked = 0;
        let n = self.queue.len();
        while self.active.len() < self.max_parallel() && looked < n {
            let Some(mut m) = self.queue.pop_front() else { break };
            looked += 1;
            let busy_block = self.writes_in_flight.get(&m.block).is_some_and(|&n| n > 0) || self.moving.contains_key(&m.block) || self.unsettled.contains_key(&m.block);
            let ready = !busy_block
                && match m.kind {
                    Kind::In => {
                        self.slot_of(m.block).is_none()
                            && self.map.is_free(m.slot_lbn, self.bs)
                            && !self.fenced.contains_key(&m.slot_lbn)
                            && !self.slot_users.contains_key(&m.slot_lbn)
                    }
                    Kind::Out { .. } => self.slot_of(m.block) == Some(m.slot_lbn),
                };
            if !ready {
                // A move whose block left the area meanwhile is moot.
                if !(matches!(m.kind, Kind::Out { .. }) && self.slot_of(m.block) != Some(m.slot_lbn)) {
                    self.queue.push_back(m);
                }
                continue;
            }
            let id = self.next_move;
            self.next_move += 1;
            let service = self.config.moves.service();
            if let Kind::Out { .. } = m.kind {
                // Clean or dirty as it is now: a write since the plan dirtied it.
                m.kind = Kind::Out { dirty: self.map.is_dirty(m.block) };
            }
            match m.kind {
                Kind::In => {
                    self.map.reserve(PhysRange::new(m.slot_lbn, self.bs))?;
                    let home = self.area.home_lbn(m.block)?;
                    m.stage = Stage::ReadSource;
                    ctx.submit(PhysIo::at(Op::Read, home, self.bs, Self::move_tag(id)), service);
                    self.report.move_reads += 1;
                }
                Kind::Out { dirty: true } => {
                    m.stage = Stage::ReadSource;
                    ctx.submit(PhysIo::at(Op::Read, m.slot_lbn, self.bs, Self::move_tag(id)), service);
                    self.report.move_reads += 1;
                }
                Kind::Out { dirty: false } => {
                    // The home is current: drop the copy now; the table write makes it durable.
                    self.apply(TableChange::Out { block: m.block }, self.when())?;
                    m.stage = Stage::AwaitTable;
                    self.awaiting_table.push(id);
                }
            }
            self.moving.insert(m.block, id);
            self.active.insert(id, m);
        }
        self.write_table(ctx)
    }

    /// One table write for every move whose data is in place, if none is under way. It carries
    /// every operation queued so far (dirty bits included).
    fn write_table(&mut self, ctx: &mut LayoutCtx<'_>) -> Result<()> {
        if self.table_in_flight.is_some() || self.awaiting_table.is_empty() {
            return Ok(());
        }
        // `new` refuses moves with I/O and no table slot.
        let Some(table) = self.area.table_lbn() else { return Ok(()) };
        let ids = std::mem::take(&mut self.awaiting_table);
        self.apply(TableChange::TableWrite, self.when())?;
        self.table_in_flight = Some(ids);
        self.report.table_writes += 1;
        ctx.submit(PhysIo::at(Op::Write, table, self.bs, MOVE_TAG | TABLE_TAG), self.config.moves.service());
        Ok(())
    }

    fn committed(&mut self, period: u64, now: SimTime) {
        let start = self.period_start;
        if let Some(p) = self.report.periods.iter_mut().find(|p| p.period == period) {
            p.committed += 1;
            let after = Some(now.saturating_sub(start) as f64 / 1e9);
            if p.half_after_s.is_none() && 2 * p.committed >= p.moves {
                p.half_after_s = after;
            }
            if p.ninety_after_s.is_none() && 10 * p.committed >= 9 * p.moves {
                p.ninety_after_s = after;
            }
            if p.committed == p.moves {
                p.done_after_s = after;
            }
        }
    }

    fn finish_move(&mut self, id: u64, now: SimTime) {
        if let Some(m) = self.active.remove(&id) {
            self.moving.remove(&m.block);
            self.committed(m.period, now);
        }
    }

    fn abort_move(&mut self, id: u64) -> Result<()> {
        if let Some(m) = self.active.remove(&id) {
            self.moving.remove(&m.block);
            self.report.aborted += 1;
            if m.kind == Kind::In {
                // Reservations are in memory only (see the module docs).
                self.map.release(&Candidates::single(m.slot_lbn), 1)?;
            }
            // Tried again later in this period.
            self.queue.push_back(Move { stage: Stage::Waiting, aborted: false, ..m });
        }
        Ok(())
    }

    /// A move's I/O finished: the next stage, or the commit.
    fn move_io_done(&mut self, ctx: &mut LayoutCtx<'_>, tag: u64) -> Result<()> {
        if tag & TABLE_TAG != 0 {
            let Some(ids) = self.table_in_flight.take() else { return Ok(()) };
            self.apply(TableChange::Commit, self.when())?;
            for id in ids {
                self.finish_move(id, ctx.now);
            }
            return self.write_table(ctx);
        }
        let id = tag & !MOVE_TAG;
        let Some(m) = self.active.get(&id).cloned() else { return Ok(()) };
        if m.aborted {
            return self.abort_move(id);
        }
        let service = self.config.moves.service();
        match (m.kind, m.stage) {
            (Kind::In, Stage::ReadSource) => {
                ctx.submit(PhysIo::at(Op::Write, m.slot_lbn, self.bs, tag), service);
                self.report.move_writes += 1;
                self.active.get_mut(&id).expect("present").stage = Stage::WriteTarget;
            }
            (Kind::Out { .. }, Stage::ReadSource) => {
                let home = self.area.home_lbn(m.block)?;
                ctx.submit(PhysIo::at(Op::Write, home, self.bs, tag), service);
                self.report.move_writes += 1;
                self.active.get_mut(&id).expect("present").stage = Stage::WriteTarget;
            }
            (Kind::In, Stage::WriteTarget) => {
                self.apply(TableChange::In { block: m.block, slot_lbn: m.slot_lbn }, self.when())?;
                self.active.get_mut(&id).expect("present").stage = Stage::AwaitTable;
                self.awaiting_table.push(id);
            }
            (Kind::Out { .. }, Stage::WriteTarget) => {
                self.apply(TableChange::Out { block: m.block }, self.when())?;
                self.report.moved_out_dirty += 1;
                self.active.get_mut(&id).expect("present").stage = Stage::AwaitTable;
                self.awaiting_table.push(id);
            }
            _ => {}
        }
        self.write_table(ctx)
    }

    fn when(&self) -> When {
        When { call: self.calls, inside: self.in_call }
    }

    /// Starts a foreground hook call; when replaying, applies the changes due before it.
    fn begin_call(&mut self) -> Result<()> {
        self.calls += 1;
        self.in_call = true;
        while let Some(&(w, change)) = self.replay.as_ref().and_then(|r| r.front()) {
            if !(w.call < self.calls || (w.call == self.calls && w.inside)) {
                break;
            }
            self.replay.as_mut().expect("present").pop_front();
            self.apply(change, w)?;
        }
        Ok(())
    }
}

impl LayoutPolicy for Rearrange {
    fn name(&self) -> String {
        "rearrange".into()
    }

    fn logical_sectors(&self) -> Option<u64> {
        Some(self.area.logical_capacity())
    }

    fn carried_blocks(&self, tag: u64) -> Option<Vec<u64>> {
        self.parts.get(&tag).map(|p| p.blocks.clone())
    }

    fn journal(&self) -> Option<&MemStorage> {
        Some(self.journal_storage())
    }

    fn translate(&mut self, _ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> Result<()> {
        self.begin_call()?;
        self.in_call = false;
        let bs = self.bs;
        let end = io.lbn + io.sectors;
        let write = !io.op.is_read();
        let mut s = io.lbn;
        // (physical start, sectors) runs, merged when contiguous.
        let mut runs: Vec<(u64, u64, Part)> = Vec::new();
        while s < end {
            let block = s / bs;
            if block >= self.capacity_blocks {
                return Err(LayoutError::LogicalOutside { logical: block, end: end.div_ceil(bs), capacity: self.capacity_blocks });
            }
            let piece_end = end.min((block + 1) * bs);
            let offset = s - block * bs;
            self.counter.record(block, io.op);
            let home = self.area.to_physical(s)?;
            let slot = self.slot_of(block);
            // A block whose table change is not durable yet: a write goes to both places.
            let unsettled = self.unsettled.get(&block).map(|&(slot, _)| slot).filter(|_| write);
            let len = piece_end - s;
            let mut piece = Part { write, blocks: vec![block], ..Part::default() };
            let phys = match slot {
                Some(slot) => {
                    piece.slots.push(slot);
                    if write && unsettled.is_none() {
                        piece.copies_written.push((block, slot));
                    }
                    slot + offset
                }
                None => home,
            };
            let mut pieces = vec![(phys, piece)];
            if let Some(other) = unsettled {
                let mut extra = Part { write, blocks: vec![block], ..Part::default() };
                let at = if slot.is_some() {
                    home
                } else {
                    extra.slots.push(other);
                    other + offset
                };
                pieces.push((at, extra));
                self.report.writes_to_both += 1;
            }
            for (phys, piece) in pieces {
                match runs.last_mut() {
                    Some((start, n, p)) if *start + *n == phys => {
                        *n += len;
                        p.blocks.extend(piece.blocks);
                        p.slots.extend(piece.slots);
                        p.copies_written.extend(piece.copies_written);
                    }
                    _ => runs.push((phys, len, piece)),
                }
            }
            s = piece_end;
        }
        for (phys, len, p) in runs {
            let tag = self.next_part;
            self.next_part += 1;
            for &b in &p.blocks {
                if write {
                    *self.writes_in_flight.entry(b).or_insert(0) += 1;
                    // The copy a move is making (or writing back) is stale now.
                    if let Some(id) = self.moving.get(&b) {
                        if let Some(m) = self.active.get_mut(id) {
                            if m.stage != Stage::AwaitTable {
                                m.aborted = true;
                            }
                        }
                    }
                }
            }
            for &slot in &p.slots {
                *self.slot_users.entry(slot).or_insert(0) += 1;
            }
            out.push(PhysIo::at(io.op, phys, len, tag));
            self.parts.insert(tag, p);
        }
        Ok(())
    }

    fn dispatched(&mut self, io: &PhysIo, _chosen: usize) {
        if io.tag & MOVE_TAG == 0 {
            // A replayed change cannot fail where the original succeeded; if it does, the
            // comparison run shows it (its map differs).
            let _ = self.begin_call();
            self.in_call = false;
        }
    }

    fn complete(&mut self, ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> Result<()> {
        let tag = done.io.tag;
        if done.request.is_none() && tag & MOVE_TAG != 0 {
            self.move_io_done(ctx, tag)?;
            return self.start_moves(ctx);
        }
        self.begin_call()?;
        if let Some(p) = self.parts.remove(&tag) {
            for &b in &p.blocks {
                if p.write {
                    if let Some(n) = self.writes_in_flight.get_mut(&b) {
                        *n -= 1;
                        if *n == 0 {
                            self.writes_in_flight.remove(&b);
                        }
                    }
                }
            }
            for &slot in &p.slots {
                if let Some(n) = self.slot_users.get_mut(&slot) {
                    *n -= 1;
                    if *n == 0 {
                        self.slot_users.remove(&slot);
                    }
                }
            }
            for &(block, slot) in &p.copies_written {
                // The write went to the copy (it was translated there): the copy is newer than
                // the home now. A block moved out meanwhile cannot be: moves wait for writes.
                // Logged, not committed: the dirty bit rides along with the next table write.
                if self.slot_of(block) == Some(slot) {
                    let req = WriteRequest { logical: block, blocks: 1, candidates: Candidates::single(slot) };
                    self.log(MapOp::Write { req, chosen: slot })?;
                    if !self.map.is_dirty(block) {
                        self.log(MapOp::SetDirty { logical: block, dirty: true })?;
                    }
                    self.report.writes_to_copies += 1;
                }
            }
        }
        if !self.queue.is_empty() {
            self.start_moves(ctx)?;
        }
        self.in_call = false;
        Ok(())
    }

    fn own_write_lost(&mut self, tag: u64) -> Result<bool> {
        // Only a move's data write carries bytes (the table write is the journal files).
        if tag & MOVE_TAG == 0 || tag & TABLE_TAG != 0 {
            return Ok(false);
        }
        let id = tag & !MOVE_TAG;
        if self.active.get(&id).is_none_or(|m| m.stage != Stage::WriteTarget) {
            return Ok(false);
        }
        // Dropped, not queued again: retried at once it would fail again on a full file system;
        // the next period plans it anew. The block stays where the map has it.
        let m = self.active.remove(&id).expect("checked");
        self.moving.remove(&m.block);
        self.report.aborted += 1;
        if m.kind == Kind::In {
            // Reservations are in memory only (see the module docs).
            self.map.release(&Candidates::single(m.slot_lbn), 1)?;
        }
        Ok(true)
    }

    fn next_timer(&self) -> Option<SimTime> {
        Some(self.next_timer)
    }

    fn timer(&mut self, ctx: &mut LayoutCtx<'_>) -> Result<()> {
        self.begin_call()?;
        self.period += 1;
        self.next_timer = self.next_timer.saturating_add(freeblock_disk::time::ms_to_ns(self.config.period_s * 1e3));
        if self.replay.is_some() {
            self.counter.reset();
        } else {
            self.plan(ctx.now)?;
            self.start_moves(ctx)?;
        }
        self.in_call = false;
        Ok(())
    }

    fn map_mut(&mut self) -> Option<&mut BlockMap> {
        None
    }

    fn report(&self) -> serde_json::Value {
        serde_json::to_value(self.rearrange_report()).unwrap_or(serde_json::Value::Null)
    }
}
