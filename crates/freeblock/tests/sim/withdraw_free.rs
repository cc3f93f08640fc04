//! A layout policy can take back a free I/O it submitted (`LayoutCtx::withdraw_free`): the
//! engine drops its sectors from freeblock's wanted set and never completes it; submitted again
//! as foreground work it completes as foreground work. Withdrawing what is not pending is an
//! error naming the sector.

use std::sync::{Arc, Mutex};

use freeblock::layout::policy::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo, Service};
use freeblock::layout::Result as LayoutResult;
use freeblock::sim::{SimConfig, Simulation};
use freeblock_disk::Op;

use super::{atlas, random};

/// Far from where the test's first requests land, so it is not transferred before request 3.
const KEPT: u64 = 2_000_000;
const TAKEN_BACK: u64 = 3_000_000;
const NEVER_REGISTERED: u64 = 4_000_000;
const READ_AGAIN: u64 = 6_000_000;

const TAG_KEPT: u64 = 1;
const TAG_TAKEN_BACK: u64 = 2;
const TAG_PROMOTED: u64 = 3;
const TAG_NEVER_REGISTERED: u64 = 4;
const TAG_FIRST_TRY: u64 = 5;
const TAG_SECOND_TRY: u64 = 6;

/// Requests go to the disk as they came; on the first one the policy registers two free reads
/// and submits and withdraws a third at once; on the third it withdraws one of the two and
/// submits it as foreground work (or, `bogus`, withdraws a read it never submitted), and
/// withdraws a third and registers the same sectors again in the same call.
struct Withdrawing {
    seen: u64,
    bogus: bool,
    completed: Arc<Mutex<Vec<(u64, bool)>>>,
}

impl LayoutPolicy for Withdrawing {
    fn name(&self) -> String {
        "withdrawing".into()
    }

    fn translate(&mut self, ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> LayoutResult<()> {
        self.seen += 1;
        out.push(PhysIo::at(io.op, io.lbn, io.sectors, 0));
        if self.seen == 1 {
            ctx.submit(PhysIo::at(Op::Read, KEPT, 16, TAG_KEPT), Service::Free);
            ctx.submit(PhysIo::at(Op::Read, TAKEN_BACK, 16, TAG_TAKEN_BACK), Service::Free);
            ctx.submit(PhysIo::at(Op::Read, READ_AGAIN, 16, TAG_FIRST_TRY), Service::Free);
            let never = PhysIo::at(Op::Read, NEVER_REGISTERED, 16, TAG_NEVER_REGISTERED);
            ctx.submit(never.clone(), Service::Free);
            ctx.withdraw_free(&never)?;
        }
        if self.seen == 3 {
            let at = if self.bogus { 5_000_000 } else { TAKEN_BACK };
            let taken = PhysIo::at(Op::Read, at, 16, TAG_TAKEN_BACK);
            ctx.withdraw_free(&taken)?;
            ctx.submit(PhysIo { tag: TAG_PROMOTED, ..taken }, Service::Foreground);
            ctx.withdraw_free(&PhysIo::at(Op::Read, READ_AGAIN, 16, TAG_FIRST_TRY))?;
            ctx.submit(PhysIo::at(Op::Read, READ_AGAIN, 16, TAG_SECOND_TRY), Service::Free);
        }
        Ok(())
    }

    fn complete(&mut self, _ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> LayoutResult<()> {
        if done.io.tag != 0 {
            self.completed.lock().unwrap().push((done.io.tag, done.access.is_some()));
        }
        Ok(())
    }
}

fn run(bogus: bool) -> (freeblock::error::Result<freeblock::sim::Outcome>, Vec<(u64, bool)>) {
    let disk = atlas();
    let workload = random(400, 8, 1.0).build(disk.capacity(), 7).unwrap();
    let completed = Arc::new(Mutex::new(Vec::new()));
    let policy = Withdrawing { seen: 0, bogus, completed: Arc::clone(&completed) };
    let out = Simulation::new(Arc::clone(&disk), workload, SimConfig { mpl: 2, ..SimConfig::default() }).with_layout(Box::new(policy)).run_outcome(None);
    let done = completed.lock().unwrap().clone();
    (out, done)
}

#[test]
fn a_withdrawn_free_read_never_completes_and_its_foreground_copy_does() {
    let (out, done) = run(false);
    let out = out.unwrap();
    let count = |tag| done.iter().filter(|(t, _)| *t == tag).count();
    assert_eq!(count(TAG_TAKEN_BACK), 0, "{done:?}");
    assert_eq!(count(TAG_NEVER_REGISTERED), 0, "{done:?}");
    // Withdrawn and registered again in one call: the new read is the one that completes.
    assert_eq!(count(TAG_FIRST_TRY), 0, "{done:?}");
    assert_eq!(done.iter().filter(|&&(t, _)| t == TAG_SECOND_TRY).collect::<Vec<_>>(), [&(TAG_SECOND_TRY, false)]);
    // The kept one is delivered free (no media access of its own), the promoted one by the disk.
    assert_eq!(done.iter().filter(|&&(t, _)| t == TAG_KEPT).collect::<Vec<_>>(), [&(TAG_KEPT, false)]);
    assert_eq!(done.iter().filter(|&&(t, _)| t == TAG_PROMOTED).collect::<Vec<_>>(), [&(TAG_PROMOTED, true)]);
    // Nothing of the withdrawn read is still wanted.
    let fb = out.freeblock.expect("the policy's free reads started freeblock");
    assert_eq!(fb.sets().total_wanted(), 0);
}

#[test]
fn withdrawing_a_read_that_is_not_pending_names_its_sector() {
    let (out, _) = run(true);
    let err = out.err().expect("the engine refuses it").to_string();
    assert!(err.contains("withdrew a free read at sector 5000000 that is not pending"), "{err}");
}
