//! The simulation: a workload feeding a driver queue, a scheduler choosing among the requests at
//! the disk, and a [`Drive`] serving them in simulated time.
//!
//! ```text
//!  workload ──► arrivals ──► driver queue (FIFO) ──► disk queue (≤ queue_depth) ──scheduler──► drive
//!     ▲   open: trace times / Poisson                                                         │
//!     └── closed: each of `mpl` streams issues its next request `think` after its last completes ◄┘
//! ```
//!
//! Events (arrivals, completions) are kept in an [`EventQueue`] ordered by time and then by
//! insertion, so the same configuration and seed always give the same run. Statistics are streamed
//! ([`crate::report`]) so memory does not grow with the number of requests unless per-request
//! records are asked for.

use std::sync::Arc;

use freeblock_disk::{Disk, Drive, SimTime};
use serde::{Deserialize, Serialize};

use crate::des::EventQueue;
use crate::error::{Error, Result};
use crate::freeblock::{Freeblock, Promoted};
use crate::report::{HeadUsage, Histogram, Record, RunReport};
use crate::request::Request;
use crate::sched::{Context, Pending, Scheduler, SchedulerSpec};
use crate::workload::{ArrivalKind, Workload};

/// How a run is driven. Field defaults are the paper-000 defaults (one outstanding request, no
/// think time, FCFS).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimConfig {
    /// Foreground scheduler. Default FCFS.
    pub scheduler: SchedulerSpec,
    /// Closed workloads: number of request streams (multiprogramming level). Default 1.
    pub mpl: u32,
    /// Closed workloads: think time between a stream's completion and its next request, ms.
    /// Default 0.
    pub think_ms: f64,
    /// Requests the disk may hold for its scheduler to choose among; the rest wait in FIFO order in
    /// the driver. 0 means unlimited. Default 0.
    pub queue_depth: u32,
    /// Requests served before statistics start. Default 0.
    pub warmup: u64,
    /// Stop after this many requests (0 = when the workload ends). Default 0.
    pub max_requests: u64,
    /// Stop issuing requests once the simulated clock reaches this many seconds (0 = no limit);
    /// requests already issued are served. For runs whose length should not depend on how fast
    /// the scheduler serves (steady states, background work per simulated day). Default 0.
    pub max_time_s: f64,
    /// Keep a record per request (memory grows with the run). Default false.
    pub keep_records: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self { scheduler: SchedulerSpec::Fcfs, mpl: 1, think_ms: 0.0, queue_depth: 0, warmup: 0, max_requests: 0, max_time_s: 0.0, keep_records: false }
    }
}

#[derive(Debug, Clone, Copy)]
enum Event {
    /// A request reaches the driver (`stream` is the closed-loop stream that issued it).
    Arrival { stream: u32 },
    /// A closed-loop stream is ready to issue its next request.
    StreamReady { stream: u32 },
    /// The disk finished its current request.
    Completion,
    /// The disk has had no request since `since`: idle-time background work may start.
    IdleCheck { since: SimTime },
    /// Idle-time background work finished.
    IdleDone,
}

/// The `stream` of a request promoted from a background task (not from the workload).
const PROMOTED: u32 = u32::MAX;

/// Where a request came from: bookkeeping the scheduler does not see.
#[derive(Debug, Clone, Copy)]
struct Origin {
    /// The closed-loop stream that issued it.
    stream: u32,
    /// Service time the trace measured, if any.
    measured: Option<SimTime>,
}

/// A request in flight.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    pending: Pending,
    origin: Origin,
}

/// One simulation run. Build with [`Simulation::new`], then [`Simulation::run`].
pub struct Simulation {
    drive: Drive,
    workload: Box<dyn Workload>,
    scheduler: Box<dyn Scheduler>,
    config: SimConfig,
    progress_every: u64,
    freeblock: Option<Freeblock>,
}

impl Simulation {
    /// A run of `workload` on `disk` with `config`.
    #[must_use]
    pub fn new(disk: Arc<Disk>, workload: Box<dyn Workload>, config: SimConfig) -> Self {
        Self { drive: Drive::new(disk), scheduler: config.scheduler.build(), workload, config, progress_every: 10_000, freeblock: None }
    }

    /// Adds freeblock scheduling: background applications served in the foreground requests'
    /// rotational latency (and in idle time, if configured).
    #[must_use]
    pub fn with_freeblock(mut self, freeblock: Freeblock) -> Self {
        self.freeblock = Some(freeblock);
        self
    }

    /// Freeblock scheduling, when on (e.g. to add background applications before the run).
    pub fn freeblock_mut(&mut self) -> Option<&mut Freeblock> {
        self.freeblock.as_mut()
    }

    /// The drive (e.g. to place the heads before a run).
    pub fn drive_mut(&mut self) -> &mut Drive {
        &mut self.drive
    }

    /// Runs to the end of the workload (or `max_requests`). `progress` is called now and then
    /// with the number of requests completed so far.
    ///
    /// # Errors
    /// [`Error::Workload`] for malformed input, [`Error::Request`] for a request the disk cannot
    /// serve.
    pub fn run(self, progress: Option<&mut dyn FnMut(u64)>) -> Result<RunReport> {
        self.run_keeping_freeblock(progress).map(|(report, _)| report)
    }

    /// As [`Simulation::run`], and hands back the freeblock engine (when on) for what the report
    /// does not hold, such as measured decision times or the state of the registered sets.
    ///
    /// # Errors
    /// As [`Simulation::run`].
    pub fn run_keeping_freeblock(mut self, mut progress: Option<&mut dyn FnMut(u64)>) -> Result<(RunReport, Option<Freeblock>)> {
        let kind = self.workload.arrival();
        let mpl = match kind {
            ArrivalKind::Open => 1,
            ArrivalKind::ClosedDelay => 1,
            ArrivalKind::Closed => self.config.mpl.max(1),
        };
        let think = freeblock_disk::time::ms_to_ns(self.config.think_ms);
        let depth = if self.config.queue_depth == 0 { usize::MAX } else { self.config.queue_depth as usize };
        let limit = if self.config.max_requests == 0 { u64::MAX } else { self.config.max_requests };
        let max_time_s = self.config.max_time_s;
        if !(max_time_s.is_finite() && max_time_s >= 0.0) {
            return Err(Error::Config { origin: "sim.max_time_s".into(), message: format!("must be a number of seconds ≥ 0 (0 = no limit), not {max_time_s}") });
        }
        let time_limit = if max_time_s == 0.0 { SimTime::MAX } else { freeblock_disk::time::ms_to_ns(max_time_s * 1e3) };

        let mut events: EventQueue<Event> = EventQueue::new();
        // The next request of each stream, fetched when the stream becomes ready.
        let mut staged: Vec<Option<Request>> = vec![None; mpl as usize];
        let mut issued: u64 = 0;
        let mut workload_done = false;

        // Requests at the disk, as the scheduler sees them, and their bookkeeping (same indices).
        let mut disk_queue: Vec<Pending> = Vec::new();
        let mut disk_meta: Vec<Origin> = Vec::new();
        let mut driver_queue: std::collections::VecDeque<InFlight> = std::collections::VecDeque::new();
        let mut busy: Option<(InFlight, freeblock_disk::Service)> = None;
        let mut last_lbn = 0u64;

        let mut usage = HeadUsage::default();
        let (mut response, mut access) = (Histogram::default(), Histogram::default());
        let (mut read_resp, mut write_resp) = (Histogram::default(), Histogram::default());
        let mut records = Vec::new();
        let mut completed: u64 = 0;
        let mut cache_hits = 0u64;
        let mut stats_start: SimTime = 0;
        let mut idle_since: Option<SimTime> = Some(0);
        // Freeblock: idle-time work in progress, promoted requests in flight (by id).
        let mut idle_busy = false;
        let mut promoted: std::collections::HashMap<u64, Promoted> = std::collections::HashMap::new();
        let idle_after = self.freeblock.as_ref().and_then(Freeblock::idle_after_ns);
        if let Some(fb) = &mut self.freeblock {
            fb.start(0)?;
            if let Some(after) = idle_after {
                events.push(after, Event::IdleCheck { since: 0 });
            }
        }
        let mut last_event: SimTime = 0;

        // Fetches the next request for a stream and schedules its arrival.
        let mut fetch = |stream: u32, now: SimTime, prev_delay_base: SimTime, events: &mut EventQueue<Event>, staged: &mut Vec<Option<Request>>| -> Result<()> {
            if workload_done || issued >= limit {
                return Ok(());
            }
            match self.workload.next_request()? {
                None => workload_done = true,
                Some(r) => {
                    let at = match kind {
                        ArrivalKind::Open => r.time.max(now),
                        ArrivalKind::ClosedDelay => prev_delay_base + r.time,
                        ArrivalKind::Closed => now,
                    };
                    if at >= time_limit {
                        workload_done = true;
                        return Ok(());
                    }
                    staged[stream as usize] = Some(r);
                    issued += 1;
                    events.push(at, Event::Arrival { stream });
                }
            }
            Ok(())
        };

        for s in 0..mpl {
            fetch(s, 0, 0, &mut events, &mut staged)?;
        }
        let mut next_id = 0u64;

        while let Some((now, ev)) = events.pop() {
            last_event = now;
            match ev {
                // The disk has worked since this idle period began: nothing to do.
                Event::IdleCheck { since } if idle_since != Some(since) => {}
                Event::IdleCheck { .. } | Event::IdleDone => {
                    // Idle long enough, or still idle after the last piece: more background work.
                    idle_busy = false;
                    if let (Some(fb), true) = (&mut self.freeblock, disk_queue.is_empty()) {
                        if let Some(end) = fb.idle_work(&mut self.drive, now)? {
                            idle_busy = true;
                            events.push(end, Event::IdleDone);
                        }
                    }
                }
                Event::Arrival { stream } => {
                    let r = staged[stream as usize].take().expect("an arrival has a staged request");
                    let target = self.drive.disk().target(r.lbn).map_err(|source| Error::Request { index: next_id, source })?;
                    if r.sectors == 0 || r.lbn + u64::from(r.sectors) > self.drive.disk().capacity() {
                        let source = freeblock_disk::AccessError::OutOfRange { lbn: r.lbn, end: r.end(), capacity: self.drive.disk().capacity() };
                        return Err(Error::Request { index: next_id, source });
                    }
                    let f = InFlight {
                        pending: Pending { id: next_id, arrival: now, lbn: r.lbn, sectors: r.sectors, op: r.op, target },
                        origin: Origin { stream, measured: r.measured },
                    };
                    next_id += 1;
                    if disk_queue.len() < depth {
                        disk_queue.push(f.pending);
                        disk_meta.push(f.origin);
                    } else {
                        driver_queue.push_back(f);
                    }
                    if kind == ArrivalKind::Open {
                        fetch(0, now, 0, &mut events, &mut staged)?;
                    }
                }
                Event::StreamReady { stream } => fetch(stream, now, now, &mut events, &mut staged)?,
                Event::Completion => {
                    let (f, svc) = busy.take().expect("a completion has a request in service");
                    let a = &svc.access;
                    if completed == self.config.warmup && completed > 0 {
                        stats_start = a.start;
                        usage = HeadUsage::default();
                    }
                    if completed >= self.config.warmup {
                        usage.add(&a.breakdown);
                        let resp = a.end - f.pending.arrival;
                        response.record(resp);
                        access.record(a.end - a.start);
                        if f.pending.op.is_read() { read_resp.record(resp) } else { write_resp.record(resp) }
                        cache_hits += u64::from(svc.cache_hit);
                        if self.config.keep_records {
                            let b = &a.breakdown;
                            records.push(Record {
                                id: f.pending.id,
                                arrival_ns: f.pending.arrival,
                                start_ns: a.start,
                                end_ns: a.end,
                                lbn: f.pending.lbn,
                                sectors: f.pending.sectors,
                                op: f.pending.op,
                                seek_ns: b.seek,
                                rotational_latency_ns: b.rotational_latency,
                                transfer_ns: b.transfer,
                                overhead_ns: b.overhead + b.bus,
                                cache_hit: svc.cache_hit,
                                measured_ns: f.origin.measured,
                            });
                        }
                    }
                    completed += 1;
                    if let Some(p) = progress.as_deref_mut() {
                        if completed % self.progress_every == 0 {
                            p(completed);
                        }
                    }
                    if f.origin.stream == PROMOTED {
                        if let (Some(fb), Some(p)) = (&mut self.freeblock, promoted.remove(&f.pending.id)) {
                            fb.complete_promoted(&p, a.end)?;
                        }
                    } else {
                        match kind {
                            ArrivalKind::Open => {}
                            ArrivalKind::ClosedDelay => fetch(f.origin.stream, now, now, &mut events, &mut staged)?,
                            ArrivalKind::Closed => {
                                if think == 0 {
                                    fetch(f.origin.stream, now, now, &mut events, &mut staged)?;
                                } else {
                                    events.push(now + think, Event::StreamReady { stream: f.origin.stream });
                                }
                            }
                        }
                    }
                    if self.freeblock.as_ref().is_some_and(Freeblock::should_stop) {
                        break;
                    }
                }
            }
            // Start the next request if the disk is free. Events at the same instant (e.g. the
            // arrival a completion just triggered) are handled first, so the scheduler sees them.
            if busy.is_none() && !idle_busy && !disk_queue.is_empty() && events.peek_time() != Some(now) {
                let ctx = Context { drive: &self.drive, now, last_lbn };
                let i = if disk_queue.len() == 1 { 0 } else { self.scheduler.pick(&disk_queue, &ctx) };
                let f = InFlight { pending: disk_queue.remove(i), origin: disk_meta.remove(i) };
                if let Some(d) = driver_queue.pop_front() {
                    disk_queue.push(d.pending);
                    disk_meta.push(d.origin);
                }
                let p = f.pending;
                let svc = if let Some(fb) = &mut self.freeblock {
                    // Served after the background work planned into its rotational latency; its
                    // own head-usage breakdown is the one it would have had alone.
                    let (done, alone) = fb.serve(&mut self.drive, now, &p)?;
                    for q in fb.take_promoted() {
                        let target = self.drive.disk().target(q.lbn).map_err(|source| Error::Request { index: next_id, source })?;
                        let sectors = u32::try_from(q.sectors).unwrap_or(u32::MAX);
                        let pending = Pending { id: next_id, arrival: now, lbn: q.lbn, sectors, op: q.op, target };
                        promoted.insert(next_id, q);
                        next_id += 1;
                        driver_queue.push_back(InFlight { pending, origin: Origin { stream: PROMOTED, measured: None } });
                    }
                    freeblock_disk::Service { access: freeblock_disk::MediaAccess { breakdown: alone.breakdown, ..done }, cache_hit: false }
                } else {
                    self.drive
                        .serve(now, p.lbn, u64::from(p.sectors), p.op)
                        .map_err(|source| Error::Request { index: p.id, source })?
                };
                if let Some(since) = idle_since.take() {
                    if completed >= self.config.warmup {
                        usage.idle_ns += now - since.max(stats_start);
                    }
                }
                last_lbn = p.lbn + u64::from(p.sectors);
                events.push(svc.access.end, Event::Completion);
                busy = Some((f, svc));
            } else if busy.is_none() && !idle_busy && idle_since.is_none() && disk_queue.is_empty() {
                idle_since = Some(now);
                if let Some(after) = idle_after {
                    events.push(now + after, Event::IdleCheck { since: now });
                }
            }
        }
        let duration = usage.total_ns();
        let requests = completed.saturating_sub(self.config.warmup);
        // Freeblock keeps its books from time 0, warm-up included.
        let freeblock = match &mut self.freeblock {
            Some(fb) => {
                fb.flush(last_event)?;
                Some(fb.report(last_event))
            }
            None => None,
        };
        let report = RunReport {
            freeblock,
            disk: self.drive.disk().spec().name.clone(),
            scheduler: self.config.scheduler.to_string(),
            requests,
            duration_ns: duration,
            head_usage: usage,
            head_usage_fractions: usage.fractions(),
            response: response.summary_ms(),
            access: access.summary_ms(),
            read_response: read_resp.summary_ms(),
            write_response: write_resp.summary_ms(),
            cache_hits,
            throughput_per_s: if duration == 0 { 0.0 } else { requests as f64 / (duration as f64 / 1e9) },
            records,
        };
        Ok((report, self.freeblock))
    }
}
