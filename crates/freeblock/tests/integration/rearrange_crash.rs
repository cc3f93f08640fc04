//! Nothing lost (issue 13): adaptive block rearrangement driven through its layout-policy hooks,
//! without the engine, by random workload reads and writes, rearrangements, I/O served and
//! completed in a random interleaving, and crashes — anywhere between two hook calls, or inside
//! the journal append of a table write (a torn commit) — each followed by recovery from the
//! block table's stable storage. After every step:
//!
//! * every completed read returned the latest acknowledged write of its block (or, for a block
//!   whose write was in flight at a crash, one of the two versions — and the same one ever after);
//! * a crash *now* would lose nothing: the place the durable table names for every block holds
//!   what the in-memory table's place holds, and that is an allowed version;
//! * the in-memory and the durable table pass `BlockMap::check` (no physical block owned twice,
//!   free + reserved + pinned + live == total);
//! * after recovery every block in the table is dirty and nothing is reserved.
//!
//! The "disk" is a map from physical block (its first LBN) to the (logical block, version) it
//! holds; home blocks start with `(b, 0)`. A workload write is acknowledged when the completion of
//! its last physical I/O is delivered. Like an application, the test never reads a block while a
//! write of it is in flight, nor writes it while any I/O of it is.

use std::collections::HashMap;

use freeblock::layout::journal::{DirtyRule, Journal, MemStorage};
use freeblock::layout::rearrange::policy::{Moves, Rearrange, RearrangeConfig, Schedule};
use freeblock::layout::rearrange::AreaConfig;
use freeblock::layout::{BlockMap, Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo, RequestInfo, Service};
use freeblock_disk::{library, Disk, HeadState, Op};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Logical blocks the workload touches, around the reserved area (some below it, some above).
const BLOCKS: u64 = 16;

type Val = (u64, u64);

fn disk() -> Disk {
    Disk::new(library::get("toshiba_mk156f").unwrap()).unwrap()
}

#[derive(Debug, Clone, Copy)]
struct Setup {
    moves: Moves,
    schedule: Schedule,
    hot: usize,
    journal_limit: u64,
}

impl Setup {
    fn config(&self) -> RearrangeConfig {
        RearrangeConfig {
            area: AreaConfig { cylinders: 2, ..AreaConfig::default() },
            blocks: Some(self.hot),
            moves: self.moves,
            schedule: self.schedule,
            period_s: 1.0,
            ..RearrangeConfig::default()
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Action {
    Read(u64),
    Write(u64),
    /// Put the data of an in-flight I/O on the media (pick among those not yet served).
    Serve(usize),
    /// Deliver the completion of a served I/O.
    Complete(usize),
    /// The period ends: rearrange.
    Timer,
    /// Crash between hook calls, or (`torn`, when a served table write is waiting for its
    /// completion) inside that table write's journal append, cut at `cut`.
    Crash { torn: bool, cut: usize },
}

fn action() -> impl Strategy<Value = Action> {
    let block = prop_oneof![3 => 0..4u64, 1 => 0..BLOCKS];
    prop_oneof![
        30 => block.clone().prop_map(Action::Read),
        30 => block.prop_map(Action::Write),
        80 => any::<usize>().prop_map(Action::Serve),
        80 => any::<usize>().prop_map(Action::Complete),
        8 => Just(Action::Timer),
        3 => (any::<bool>(), any::<usize>()).prop_map(|(torn, cut)| Action::Crash { torn, cut }),
    ]
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop_oneof![Just(Moves::Foreground), Just(Moves::Idle), Just(Moves::Free)],
        prop_oneof![Just(Schedule::Always), Just(Schedule::Alternate)],
        2..10usize,
        prop_oneof![Just(600u64), Just(5_000), Just(1 << 20)],
    )
        .prop_map(|(moves, schedule, hot, journal_limit)| Setup { moves, schedule, hot, journal_limit })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Work(u64),
    Policy,
}

#[derive(Debug)]
struct Io {
    io: PhysIo,
    owner: Owner,
    served: bool,
    /// What a read found.
    read: Option<Val>,
}

#[derive(Debug)]
struct Req {
    block: u64,
    write: Option<u64>,
    parts_left: usize,
    arrival: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    steps: u64,
    reads_checked: u64,
    acked_writes: u64,
    writes_to_both: u64,
    crashes: u64,
    torn: u64,
    recovered_entries: u64,
    copied_in: u64,
    moved_out_dirty: u64,
}

struct World<'d> {
    disk: &'d Disk,
    setup: Setup,
    policy: Rearrange,
    bs: u64,
    first_block: u64,
    table_lbn: u64,
    store: HashMap<u64, Val>,
    inflight: Vec<Io>,
    reqs: HashMap<u64, Req>,
    next_req: u64,
    next_version: u64,
    now: u64,
    /// Latest acknowledged version of each block (0: the initial contents).
    acked: HashMap<u64, u64>,
    /// Blocks whose write was in flight at a crash: the versions a read may find, until one does.
    uncertain: HashMap<u64, Vec<u64>>,
    /// Data a move read, by tag, for its write.
    buffers: HashMap<u64, Val>,
    tally: Tally,
}

type Res = Result<(), TestCaseError>;

impl<'d> World<'d> {
    fn new(disk: &'d Disk, setup: Setup) -> Self {
        let policy = Rearrange::new(disk, setup.config()).unwrap().with_journal_limit(setup.journal_limit);
        let bs = policy.area().block_sectors();
        let first_block = (policy.area().first() / bs).saturating_sub(BLOCKS / 2);
        let table_lbn = policy.area().table_lbn().unwrap();
        Self {
            disk,
            setup,
            policy,
            bs,
            first_block,
            table_lbn,
            store: HashMap::new(),
            inflight: Vec::new(),
            reqs: HashMap::new(),
            next_req: 0,
            next_version: 1,
            now: 0,
            acked: HashMap::new(),
            uncertain: HashMap::new(),
            buffers: HashMap::new(),
            tally: Tally::default(),
        }
    }

    fn block(&self, i: u64) -> u64 {
        self.first_block + i
    }

    fn home(&self, block: u64) -> u64 {
        self.policy.area().home_lbn(block).unwrap()
    }

    fn at(&self, lbn: u64) -> Val {
        self.store.get(&lbn).copied().unwrap_or_else(|| match self.policy.area().to_logical(lbn) {
            Some(s) => (s / self.bs, 0),
            None => (u64::MAX, 0),
        })
    }

    /// Versions of `block` a crash or a read may find now.
    fn allowed(&self, block: u64) -> Vec<u64> {
        let mut v = self.uncertain.get(&block).cloned().unwrap_or_else(|| vec![self.acked.get(&block).copied().unwrap_or(0)]);
        v.extend(self.write_in_flight(block));
        v
    }

    fn write_in_flight(&self, block: u64) -> Option<u64> {
        self.reqs.values().find(|r| r.block == block && r.write.is_some()).and_then(|r| r.write)
    }

    fn io_in_flight(&self, block: u64) -> bool {
        self.reqs.values().any(|r| r.block == block)
    }

    /// Calls a hook with a context and collects what the policy submitted.
    fn call<T>(&mut self, f: impl FnOnce(&mut Rearrange, &mut LayoutCtx<'_>) -> T) -> T {
        self.now += 1_000;
        let mut submitted: Vec<(PhysIo, Service)> = Vec::new();
        let out = {
            let mut ctx = LayoutCtx::new(self.disk, HeadState::default(), self.now, &mut submitted);
            f(&mut self.policy, &mut ctx)
        };
        for (io, _) in submitted {
            assert_eq!(io.starts.len(), 1);
            assert_eq!(io.sectors, self.bs, "policy I/O is one block");
            self.inflight.push(Io { io, owner: Owner::Policy, served: false, read: None });
        }
        out
    }

    fn issue(&mut self, block: u64, write: bool) -> Res {
        if (write && self.io_in_flight(block)) || (!write && self.write_in_flight(block).is_some()) {
            return Ok(());
        }
        let id = self.next_req;
        self.next_req += 1;
        let op = if write { Op::Write } else { Op::Read };
        let bs = self.bs;
        let mut out = Vec::new();
        self.call(|p, ctx| p.translate(ctx, &LogicalIo { id, stream: 0, op, lbn: block * bs, sectors: bs, write: None }, &mut out)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(if write { (1..=2).contains(&out.len()) } else { out.len() == 1 }, "{} of one block became {} I/Os", if write { "a write" } else { "a read" }, out.len());
        if out.len() == 2 {
            self.tally.writes_to_both += 1;
        }
        let version = write.then(|| {
            self.next_version += 1;
            self.next_version - 1
        });
        self.reqs.insert(id, Req { block, write: version, parts_left: out.len(), arrival: self.now });
        for io in out {
            prop_assert_eq!(io.sectors, bs);
            prop_assert_eq!(io.starts.len(), 1);
            self.inflight.push(Io { io, owner: Owner::Work(id), served: false, read: None });
        }
        Ok(())
    }

    fn serve(&mut self, pick: usize) -> Res {
        let waiting: Vec<usize> = (0..self.inflight.len()).filter(|&i| !self.inflight[i].served).collect();
        if waiting.is_empty() {
            return Ok(());
        }
        let i = waiting[pick % waiting.len()];
        let io = self.inflight[i].io.clone();
        self.policy.dispatched(&io, 0);
        let lbn = io.starts[0];
        match (self.inflight[i].owner, io.op) {
            (Owner::Work(_), Op::Read) => self.inflight[i].read = Some(self.at(lbn)),
            (Owner::Work(id), Op::Write) => {
                let r = &self.reqs[&id];
                self.store.insert(lbn, (r.block, r.write.expect("a write request")));
            }
            (Owner::Policy, Op::Read) => {
                self.buffers.insert(io.tag, self.at(lbn));
            }
            (Owner::Policy, Op::Write) => {
                if lbn != self.table_lbn {
                    let v = self.buffers.get(&io.tag).copied();
                    prop_assert!(v.is_some(), "a move writes {lbn} without having read anything");
                    self.store.insert(lbn, v.unwrap());
                }
            }
        }
        self.inflight[i].served = true;
        Ok(())
    }

    /// Delivers the completion of the served I/O `i`.
    fn complete_at(&mut self, i: usize) -> Res {
        let io = self.inflight.remove(i);
        let request = match io.owner {
            Owner::Work(id) => Some(RequestInfo { id, stream: 0, arrival: self.reqs[&id].arrival }),
            Owner::Policy => None,
        };
        let now = self.now + 1_000;
        let done = Completed { io: &io.io, chosen: 0, lbn: io.io.starts[0], access: None, time: now, request, choice: None };
        self.call(|p, ctx| p.complete(ctx, &done)).map_err(|e| TestCaseError::fail(format!("complete({:?}): {e}", io.io)))?;
        if let Owner::Work(id) = io.owner {
            let (block, left) = {
                let r = self.reqs.get_mut(&id).expect("open request");
                r.parts_left -= 1;
                (r.block, r.parts_left)
            };
            if let Some(v) = io.read {
                let allowed = self.allowed(block);
                prop_assert!(v.0 == block && allowed.contains(&v.1), "read of block {block} returned {v:?}; allowed versions {allowed:?}");
                if self.uncertain.remove(&block).is_some() {
                    self.acked.insert(block, v.1);
                }
                self.tally.reads_checked += 1;
            }
            if left == 0 {
                let r = self.reqs.remove(&id).expect("open request");
                if let Some(v) = r.write {
                    self.acked.insert(r.block, v);
                    self.uncertain.remove(&r.block);
                    self.tally.acked_writes += 1;
                }
            }
        }
        Ok(())
    }

    fn complete(&mut self, pick: usize) -> Res {
        let served: Vec<usize> = (0..self.inflight.len()).filter(|&i| self.inflight[i].served).collect();
        if served.is_empty() {
            return Ok(());
        }
        self.complete_at(served[pick % served.len()])
    }

    fn crash(&mut self, torn: bool, cut: usize) -> Res {
        let table_write = self.inflight.iter().position(|io| io.served && io.owner == Owner::Policy && io.io.op == Op::Write && io.io.starts[0] == self.table_lbn);
        let storage = match (torn, table_write) {
            (true, Some(i)) => {
                // The table write reached the media; the crash comes inside its journal append.
                let before = self.policy.journal_storage().clone();
                self.complete_at(i)?;
                let after = self.policy.journal_storage().clone();
                let (b, a) = (before.journal.clone().unwrap(), after.journal.clone().unwrap());
                // The synced marks (bytes 24..72) change with every commit; the rest is appended.
                let marks = 24..72;
                let appended = a.len() > b.len() && a[..marks.start] == b[..marks.start] && a[marks.end..b.len()] == b[marks.end..];
                if after.snapshot == before.snapshot && appended {
                    let mut s = after;
                    let j = s.journal.as_mut().unwrap();
                    j.truncate(b.len() + cut % (a.len() - b.len()));
                    // The crash came before the append's synced mark was written.
                    j[marks.clone()].copy_from_slice(&b[marks]);
                    self.tally.torn += 1;
                    s
                } else {
                    // A checkpoint replaces the snapshot, then the journal, each atomically: the
                    // crash leaves the old files, the new ones, or the new snapshot with the old
                    // (stale) journal.
                    match cut % 3 {
                        0 => before,
                        1 => after,
                        _ => MemStorage { snapshot: after.snapshot, journal: before.journal },
                    }
                }
            }
            _ => self.policy.journal_storage().clone(),
        };
        self.tally.crashes += 1;
        self.tally_policy();
        // Every I/O in flight is lost; a write in flight may or may not have reached its places.
        for r in self.reqs.values() {
            if let Some(v) = r.write {
                let mut set = self.uncertain.remove(&r.block).unwrap_or_else(|| vec![self.acked.get(&r.block).copied().unwrap_or(0)]);
                set.push(v);
                self.uncertain.insert(r.block, set);
            }
        }
        self.reqs.clear();
        self.inflight.clear();
        self.buffers.clear();
        let (p, report) = Rearrange::recover(self.disk, self.setup.config(), storage).map_err(|e| TestCaseError::fail(format!("recovery: {e}")))?;
        self.policy = p.with_journal_limit(self.setup.journal_limit);
        let map = self.policy.map();
        let mapped: Vec<_> = map.mapped().collect();
        prop_assert!(mapped.iter().all(|(_, l)| l.dirty), "after recovery every block in the table is dirty");
        prop_assert!(report.marked_dirty <= mapped.len() as u64);
        prop_assert_eq!(map.stats().reserved, 0, "no move survives a crash");
        self.tally.recovered_entries += mapped.len() as u64;
        Ok(())
    }

    fn location(&self, map: &BlockMap, block: u64) -> u64 {
        map.read(block).map_or_else(|| self.home(block), |l| l.copies[0])
    }

    /// The invariants that hold between any two steps.
    fn check(&self) -> Res {
        let memory = self.policy.map();
        memory.check().map_err(|e| TestCaseError::fail(format!("in-memory table: {e}")))?;
        let (durable, _) = Journal::recover(self.policy.journal_storage(), DirtyRule::Logged).map_err(|e| TestCaseError::fail(format!("durable table: {e}")))?;
        durable.check().map_err(|e| TestCaseError::fail(format!("durable table: {e}")))?;
        for i in 0..BLOCKS {
            let b = self.block(i);
            let allowed = self.allowed(b);
            let (m, d) = (self.location(memory, b), self.location(&durable, b));
            let (vm, vd) = (self.at(m), self.at(d));
            prop_assert!(vd.0 == b && allowed.contains(&vd.1), "a crash now would lose block {b}: the durable table names {d}, which holds {vd:?}; allowed versions {allowed:?}");
            if self.write_in_flight(b).is_none() {
                prop_assert!(vm == vd, "block {b}: the in-memory table names {m} holding {vm:?}, the durable one {d} holding {vd:?}");
            }
        }
        Ok(())
    }

    fn step(&mut self, a: Action) -> Res {
        self.tally.steps += 1;
        match a {
            Action::Read(i) => self.issue(self.block(i), false)?,
            Action::Write(i) => self.issue(self.block(i), true)?,
            Action::Serve(pick) => self.serve(pick)?,
            Action::Complete(pick) => self.complete(pick)?,
            Action::Timer => self.call(|p, ctx| p.timer(ctx)).map_err(|e| TestCaseError::fail(format!("timer: {e}")))?,
            Action::Crash { torn, cut } => self.crash(torn, cut)?,
        }
        self.check()
    }

    /// Serves and completes everything (and what that submits), then reads every block.
    fn drain_and_read_all(&mut self) -> Res {
        for round in 0.. {
            prop_assert!(round < 100_000, "the policy keeps submitting I/O");
            if let Some(i) = self.inflight.iter().position(|io| !io.served) {
                self.serve(i)?;
            } else if !self.inflight.is_empty() {
                self.complete_at(0)?;
            } else {
                break;
            }
            self.check()?;
        }
        for i in 0..BLOCKS {
            let before = self.tally.reads_checked;
            self.issue(self.block(i), false)?;
            while !self.inflight.is_empty() {
                if let Some(i) = self.inflight.iter().position(|io| !io.served) {
                    self.serve(i)?;
                } else {
                    self.complete_at(0)?;
                }
            }
            prop_assert_eq!(self.tally.reads_checked, before + 1);
        }
        self.tally_policy();
        self.check()
    }

    fn tally_policy(&mut self) {
        let r = self.policy.rearrange_report();
        self.tally.copied_in += r.copied_in;
        self.tally.moved_out_dirty += r.moved_out_dirty;
    }
}

fn run(disk: &Disk, setup: Setup, actions: &[Action]) -> Result<Tally, TestCaseError> {
    let mut w = World::new(disk, setup);
    w.check()?;
    for &a in actions {
        w.step(a)?;
    }
    w.drain_and_read_all()?;
    Ok(w.tally)
}

#[test]
fn nothing_acknowledged_is_lost_across_moves_and_crashes() {
    let disk = disk();
    // PROPTEST_CASES=n runs more.
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let total = std::cell::RefCell::new(Tally::default());
    runner
        .run(&(setup(), prop::collection::vec(action(), 200..800)), |(setup, actions)| {
            let t = run(&disk, setup, &actions)?;
            let mut s = total.borrow_mut();
            s.steps += t.steps;
            s.reads_checked += t.reads_checked;
            s.acked_writes += t.acked_writes;
            s.writes_to_both += t.writes_to_both;
            s.crashes += t.crashes;
            s.torn += t.torn;
            s.recovered_entries += t.recovered_entries;
            s.copied_in += t.copied_in;
            s.moved_out_dirty += t.moved_out_dirty;
            Ok(())
        })
        .unwrap();
    let t = total.into_inner();
    eprintln!("{cases} cases: {t:?}");
    // The runs exercised what they are about (counted over shrinking too, so only lower bounds).
    assert!(t.crashes > 100 && t.torn > 10 && t.recovered_entries > 100, "{t:?}");
    assert!(t.writes_to_both > 20 && t.copied_in > 200 && t.moved_out_dirty > 50 && t.reads_checked > 2_000, "{t:?}");
}

/// The case the rule is for: a block's copy-in has written its slot and entered the block in the
/// in-memory table, the table write that makes the entry durable is on its way, and a write of
/// the block is acknowledged. A crash before the table write completes recovers a table without
/// the entry: the write must be at home too.
#[test]
fn a_write_acknowledged_before_the_copy_in_is_durable_survives_a_crash() {
    let disk = disk();
    let setup = Setup { moves: Moves::Foreground, schedule: Schedule::Always, hot: 1, journal_limit: 1 << 20 };
    let mut w = World::new(&disk, setup);
    let run = |w: &mut World<'_>| -> Res {
        for _ in 0..3 {
            w.issue(w.block(0), false)?;
            w.serve(0)?;
            w.complete(0)?;
        }
        w.step(Action::Timer)?;
        // Read home, write the slot: the block is entered in memory and the table write issued.
        for _ in 0..2 {
            w.serve(0)?;
            w.complete(0)?;
        }
        prop_assert!(w.policy.map().read(w.block(0)).is_some());
        prop_assert_eq!(w.inflight.len(), 1, "the table write");
        w.step(Action::Write(0))?;
        prop_assert_eq!(w.inflight.len(), 3, "the table write, and the write home and to the slot");
        // Serve and acknowledge the workload write, not the table write.
        while w.inflight.len() > 1 {
            let i = w.inflight.iter().position(|io| io.owner != Owner::Policy).unwrap();
            w.serve(i)?;
            let i = w.inflight.iter().position(|io| io.owner != Owner::Policy).unwrap();
            w.complete_at(i)?;
            w.check()?;
        }
        prop_assert_eq!(w.tally.acked_writes, 1);
        w.step(Action::Crash { torn: false, cut: 0 })?;
        prop_assert!(w.policy.map().read(w.block(0)).is_none(), "the entry was not durable");
        w.drain_and_read_all()
    };
    run(&mut w).unwrap();
}
