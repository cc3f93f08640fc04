//! The hooks through which the engine drives a layout policy.
//!
//! A layout policy owns where logical blocks live. The engine ([`crate::sim::Simulation`]) calls
//! it at five fixed points and never asks what kind of policy it is:
//!
//! ```text
//!   arrival ──► translate(logical request) ──► physical I/Os (each: op, sectors, candidate starts)
//!   dispatch ─► the scheduler/device chose one candidate (Selected)
//!   completion► complete(I/O, where it went, when)    map updated, versions stamped
//!   idle ─────► the disk has nothing queued: policy I/Os marked `Idle` are served now
//!   background► blocks the freeblock subsystem moved for the policy (`Free` I/Os) are complete
//!   timer ────► at a time the policy asked for (e.g. each day's rearrangement)
//! ```
//!
//! | hook | when | typical use |
//! |---|---|---|
//! | [`LayoutPolicy::translate`] | a workload request arrives | map logical → physical copies, offer write candidates |
//! | [`LayoutPolicy::dispatched`] | a physical I/O starts | count how often a write moved off its first candidate |
//! | [`LayoutPolicy::complete`] | a physical I/O ends (any service) | record where a write went; commit a move |
//! | [`LayoutPolicy::timer`] | at [`LayoutPolicy::next_timer`] | periodic rearrangement |
//!
//! A policy issues I/O of its own (copying a block into place, writing a replica) through
//! [`LayoutCtx::submit`], choosing per I/O how it is served ([`Service`]): as a foreground request
//! (it queues with the workload's and delays them), in idle time (only when the disk has nothing
//! else; a request arriving meanwhile waits for at most the one I/O under way), or with free
//! bandwidth through the freeblock subsystem (in the rotational latency of foreground requests:
//! it costs them nothing, but takes as long as the foreground takes to pass by).
//!
//! A free I/O may be taken back before it completes ([`LayoutCtx::withdraw_free`]): the engine
//! drops what freeblock still wants of it, and the policy never hears of it again. That is how a
//! policy turns free work into foreground work (withdraw it, then submit it as
//! [`Service::Foreground`]) when it cannot wait for the free bandwidth any longer:
//!
//! | call | the engine | completion |
//! |---|---|---|
//! | `submit(io, Free)` | registers `io`'s sectors with freeblock | once every sector was transferred free |
//! | `withdraw_free(&io)` | forgets `io`, drops its sectors from freeblock's wanted set | never |
//! | `submit(io, Foreground)` | queues `io` with the workload's requests | when the disk has served it |

use freeblock_disk::{Disk, HeadState, MediaAccess, Op, SimTime};

use super::error::Result;
use super::map::{BlockMap, WriteRequest};
use super::streams::StreamIo;
use crate::sched::alternatives::Choice;

/// One physical I/O a policy wants: `sectors` sectors starting at any one of `starts` (in
/// preference order; reads over several copies or writes with candidate locations have more
/// than one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysIo {
    /// Read or write.
    pub op: Op,
    /// Candidate starting sectors (disk LBNs), at least one.
    pub starts: Vec<u64>,
    /// Sectors.
    pub sectors: u64,
    /// The policy's own label, handed back at completion.
    pub tag: u64,
}

impl PhysIo {
    /// An I/O with one place to go.
    #[must_use]
    pub fn at(op: Op, lbn: u64, sectors: u64, tag: u64) -> Self {
        Self { op, starts: vec![lbn], sectors, tag }
    }
}

/// How a policy's own I/O is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Service {
    /// Queued with the workload's requests: costs the foreground what it costs the disk.
    Foreground,
    /// Served only when no workload request is queued.
    Idle,
    /// Transferred by freeblock scheduling in foreground requests' rotational latency.
    Free,
}

/// A logical request as the engine hands it to [`LayoutPolicy::translate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogicalIo<'a> {
    /// Issue order over the run.
    pub id: u64,
    /// The closed-loop stream that issued it (0 for open arrivals).
    pub stream: u32,
    /// Read or write.
    pub op: Op,
    /// First logical sector.
    pub lbn: u64,
    /// Sectors.
    pub sectors: u64,
    /// A write that carries its own candidate locations (a stream's range write).
    pub write: Option<&'a WriteRequest>,
}

impl<'a> LogicalIo<'a> {
    /// A stream's I/O in sectors (its logical blocks are `block_sectors` long), a write with its
    /// candidates.
    #[must_use]
    pub fn from_stream(id: u64, stream: u32, io: &'a StreamIo, block_sectors: u64) -> Self {
        let r = io.logical_range();
        let op = if io.is_write() { Op::Write } else { Op::Read };
        let lbn = r.start.saturating_mul(block_sectors);
        let write = match io {
            StreamIo::Write(w) => Some(w),
            StreamIo::Read { .. } => None,
        };
        Self { id, stream, op, lbn, sectors: (r.end - r.start).saturating_mul(block_sectors), write }
    }
}

/// The workload request a physical I/O belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestInfo {
    /// Issue order of the logical request over the run.
    pub id: u64,
    /// The closed-loop stream that issued it.
    pub stream: u32,
    /// When it arrived.
    pub arrival: SimTime,
}

/// Where a physical I/O went and what it cost, as the engine reports it to the policy.
#[derive(Debug, Clone, Copy)]
pub struct Completed<'a> {
    /// The I/O as the policy described it.
    pub io: &'a PhysIo,
    /// Index of the candidate served.
    pub chosen: usize,
    /// Its start (disk LBN).
    pub lbn: u64,
    /// The media access (times, breakdown); `None` for freeblock transfers, which happen inside
    /// other requests' accesses.
    pub access: Option<&'a MediaAccess>,
    /// When the data was on the media (the access's end, or the delivery time).
    pub time: SimTime,
    /// The workload request it served; `None` for the policy's own I/O.
    pub request: Option<RequestInfo>,
    /// The candidate search's choice, when the run chooses among candidates
    /// ([`crate::sim::SimConfig::selection`]).
    pub choice: Option<Choice>,
}

/// What a policy may look at and do when it is called.
pub struct LayoutCtx<'a> {
    /// The disk model.
    pub disk: &'a Disk,
    /// Where the heads are (or will be when the access under way ends).
    pub head: HeadState,
    /// The time of the call.
    pub now: SimTime,
    pub(crate) submitted: &'a mut Vec<(PhysIo, Service)>,
    /// Free I/O taken back, by op and start; `None` outside an engine until
    /// [`LayoutCtx::collecting_withdrawals`].
    pub(crate) withdrawn: Option<&'a mut Vec<(Op, u64)>>,
}

impl<'a> LayoutCtx<'a> {
    /// A context for calling a policy outside an engine (tests, offline tools): what it submits
    /// is collected in `submitted`.
    pub fn new(disk: &'a Disk, head: HeadState, now: SimTime, submitted: &'a mut Vec<(PhysIo, Service)>) -> Self {
        Self { disk, head, now, submitted, withdrawn: None }
    }

    /// The same context, collecting what the policy withdraws ([`LayoutCtx::withdraw_free`]) in
    /// `withdrawn`, as `(op, first sector)`.
    #[must_use]
    pub fn collecting_withdrawals(mut self, withdrawn: &'a mut Vec<(Op, u64)>) -> Self {
        self.withdrawn = Some(withdrawn);
        self
    }

    /// Issues an I/O of the policy's own, served as `service` says. Its completion comes back
    /// through [`LayoutPolicy::complete`] with `io.tag`.
    pub fn submit(&mut self, io: PhysIo, service: Service) {
        self.submitted.push((io, service));
    }

    /// Takes back a [`Service::Free`] I/O submitted earlier whose completion has not come yet:
    /// freeblock stops looking for its sectors and [`LayoutPolicy::complete`] is never called
    /// for it. Sectors already transferred are dropped. To have it served anyway, submit it
    /// again as [`Service::Foreground`] (it is then foreground work, and costs what it costs).
    ///
    /// # Errors
    /// [`LayoutError::Config`](super::error::LayoutError::Config) when the context has nowhere
    /// to send it (built with [`LayoutCtx::new`] without
    /// [`LayoutCtx::collecting_withdrawals`]). The engine refuses, with an error naming the
    /// sector, an I/O that is not pending.
    pub fn withdraw_free(&mut self, io: &PhysIo) -> Result<()> {
        let Some(w) = self.withdrawn.as_deref_mut() else {
            return Err(super::error::LayoutError::Config { field: "layout", message: format!("withdrawing the free I/O at sector {}: this context collects no withdrawals", io.starts[0]) });
        };
        w.push((io.op, io.starts[0]));
        Ok(())
    }
}

/// A layout policy: the engine's one extension point between logical requests and the disk.
///
/// Every method but [`translate`](Self::translate), [`complete`](Self::complete) and
/// [`name`](Self::name) has a default that does nothing.
pub trait LayoutPolicy: Send + AsAny {
    /// A short name for reports.
    fn name(&self) -> String;

    /// Sectors of the logical disk the workload sees (a policy may hide space, e.g. reserved
    /// cylinders). `None`: the whole disk.
    fn logical_sectors(&self) -> Option<u64> {
        None
    }

    /// Translates a workload request into physical I/Os (usually one; a request whose blocks lie
    /// in several places becomes several, and completes when all have).
    ///
    /// # Errors
    /// Whatever makes the request unservable (an unmapped block, a bad candidate…).
    fn translate(&mut self, ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> Result<()>;

    /// A flush arrived ([`Request::flush`](crate::request::Request::flush)): push the writes
    /// that put on the media what the policy acknowledged from memory (a log's segment being
    /// filled); the flush completes when they have. Default: nothing held, no I/O.
    ///
    /// # Errors
    /// What keeps the policy from writing it (no free space).
    fn flush(&mut self, _ctx: &mut LayoutCtx<'_>, _out: &mut Vec<PhysIo>) -> Result<()> {
        Ok(())
    }

    /// Whether the policy may serve a request from memory (a buffer cache, a write buffer):
    /// [`translate`](Self::translate) then returns no I/O and the engine completes the request
    /// at once, with no disk time. Default false: an empty translation is an error.
    fn serves_from_memory(&self) -> bool {
        false
    }

    /// A physical I/O was chosen and starts now at candidate `chosen`.
    fn dispatched(&mut self, _io: &PhysIo, _chosen: usize) {}

    /// A physical I/O (the workload's, via `translate`, or the policy's own) is on the media.
    ///
    /// # Errors
    /// A map update the policy refuses.
    fn complete(&mut self, ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> Result<()>;

    /// The bytes of the policy's own write `tag` (a move's or a replica's copy) did not reach
    /// stable storage: the block server's file system was full. Called before that write's
    /// [`complete`](Self::complete), which must then add nothing to the map: the move or copy is
    /// dropped (a later period or job may make it again) and every block keeps the places it
    /// had. Returns whether the policy dropped it; `false` (the default) when it cannot, and the
    /// caller must stop rather than map a place that holds nothing.
    ///
    /// # Errors
    /// A map update the policy refuses.
    fn own_write_lost(&mut self, _tag: u64) -> Result<bool> {
        Ok(false)
    }

    /// When the policy next wants [`timer`](Self::timer) called, if ever.
    fn next_timer(&self) -> Option<SimTime> {
        None
    }

    /// Called at [`next_timer`](Self::next_timer).
    ///
    /// # Errors
    /// What the policy cannot do.
    fn timer(&mut self, _ctx: &mut LayoutCtx<'_>) -> Result<()> {
        Ok(())
    }

    /// The logical blocks a workload I/O from [`translate`](Self::translate) carries, one per
    /// block of the policy, in physical order: what a caller that moves real bytes (the block
    /// server) needs to know which bytes go where. Asked before [`complete`](Self::complete) is
    /// called for the I/O. `None`: the policy does not say (the default).
    fn carried_blocks(&self, _tag: u64) -> Option<Vec<u64>> {
        None
    }

    /// The policy's map on stable storage (a snapshot and a journal, [`super::journal`]), as
    /// committed so far, for a caller that keeps it in files (the block server mirrors it beside
    /// its store after every call). `None`: the policy keeps no journal (the default).
    fn journal(&self) -> Option<&super::journal::MemStorage> {
        None
    }

    /// The block map, for workloads that place their own writes (range writes).
    fn map_mut(&mut self) -> Option<&mut BlockMap> {
        None
    }

    /// What the policy did, for the run report.
    fn report(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// Lets a caller get its concrete policy back from the engine (`Box<dyn LayoutPolicy>` →
/// `Box<RangeWrites>`). Implemented for every type.
pub trait AsAny {
    /// The policy as [`std::any::Any`], for `downcast`.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
    /// The same, borrowed.
    fn as_any(&self) -> &dyn std::any::Any;
    /// The same, borrowed mutably.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

impl<T: std::any::Any> AsAny for T {
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
