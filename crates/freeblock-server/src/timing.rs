//! Timing: every request is served by the one engine ([`freeblock::sim::Simulation`], online
//! mode) on the modelled disk, in an engine thread; the reply waits for the model's completion.
//!
//! ```text
//!  connections ──[Submission{op, sectors, received, done}, …]──► channel ──► EngineSource::next_arrival
//!        ▲          (a batch: the requests one socket read brought)           (waits for the wall clock
//!        │                                                                     to reach the next event:
//!        │                                                                     pace real)
//!        └── done(Completion{arrival, end}, outbox) ◄── record sink ◄── engine completes the request
//!            (on the engine thread: it writes the reply itself, see crate::reply)
//! ```
//!
//! | the engine, in `next_arrival` | pace real | pace none |
//! |---|---|---|
//! | has nothing to do (no event) | blocks on the channel | writes the replies it holds, then blocks |
//! | has an event at `t` | takes requests until the wall clock reaches `t` | takes what is in the channel; writes held replies older than [`Outbox::HOLD_AT_MOST`] |
//!
//! With a layout policy whose map commits are grouped ([`crate::commits`]), a request completed
//! while a commit is staged has its [`Done`] held, and called once the group is durable: the
//! engine makes it durable when it is about to wait (no event, or an event the wall clock has
//! not reached), when no client request is left in it, or when the oldest staged commit is
//! [`MapCommits::HOLD_AT_MOST`] old.
//!
//! A request's [`Done`] is called exactly once: with its completion, or with
//! [`TimingError::Stopped`] if the engine stopped first (it is dropped uncalled anywhere: in the
//! channel, in the engine, in a failed send).
//!
//! Model time 0 is the server's start; a request arrives in the model at the instant its bytes
//! reached the socket ([`crate::arrival`]), or at the engine's clock, if that is later.
//!
//! | pace | the engine handles an event at model time `t` | a reply is sent |
//! |---|---|---|
//! | `real` | once the wall clock reaches `start + t` | when the engine completes its request: as the modelled disk would (lateness = sent − `start + end`) |
//! | `none` | as soon as it can; a layout policy's timer with no request in the engine, once the wall clock reaches `start + t` | as soon as the engine has computed its completion |

use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use freeblock::freeblock::{BackgroundApp, Freeblock, FreeblockConfig};
use freeblock::layout::LayoutPolicy;
use freeblock::report::RunReport;
use freeblock::sim::{OnlineNext, OnlineSource, SimConfig, Simulation};
use freeblock::workload::WorkloadError;
use freeblock::Request;
use freeblock_disk::{Disk, Op, SimTime};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::commits::MapCommits;
use crate::pacing::SendPathWarmer;
use crate::placement::{InFlight, RequestBytes};
use crate::reply::Outbox;

/// How replies are paced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pace {
    /// Each reply waits for the model's completion time on the wall clock.
    #[default]
    Real,
    /// Replies go as soon as the model has timed them (model time runs ahead of the wall clock).
    None,
}

impl std::fmt::Display for Pace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Real => "real",
            Self::None => "none",
        })
    }
}

impl std::str::FromStr for Pace {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "real" => Ok(Self::Real),
            "none" => Ok(Self::None),
            other => Err(format!("pace {other:?}: expected \"real\" or \"none\"")),
        }
    }
}

/// When the modelled disk served a request, model ns since the server started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// Arrival in the model.
    pub arrival_ns: SimTime,
    /// Completion in the model.
    pub end_ns: SimTime,
    /// The request's bytes, when the engine carried them (a physically addressed store): a
    /// read's data.
    pub data: Option<Vec<u8>>,
    /// Why the store could not carry the request's bytes, if it could not.
    pub failed: Option<Failure>,
}

/// Why a request failed in the engine: the error its client is told, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The reply's error (`crate::protocol::errno`): `ENOSPC` when the file system under the
    /// store is full, `EIO` otherwise.
    pub errno: u32,
    /// What failed, naming the place.
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl Failure {
    /// An `EIO` failure.
    #[must_use]
    pub fn eio(message: impl Into<String>) -> Self {
        Self { errno: crate::protocol::errno::EIO, message: message.into() }
    }

    /// `ENOSPC` when `no_space`, `EIO` otherwise.
    #[must_use]
    pub fn storage(no_space: bool, message: impl Into<String>) -> Self {
        let errno = if no_space { crate::protocol::errno::ENOSPC } else { crate::protocol::errno::EIO };
        Self { errno, message: message.into() }
    }
}

/// What happens when the engine has served a request: called once, on the engine thread, at the
/// model's completion (pace real: once the wall clock reaches it), or with
/// [`TimingError::Stopped`] when the engine stopped before (including when it is dropped). A
/// reply it sends goes through the engine's [`Outbox`].
pub struct Done(Option<DoneFn>);

/// The callback inside a [`Done`].
type DoneFn = Box<dyn FnOnce(Result<Completion, TimingError>, &mut Outbox) + Send>;

impl Done {
    /// Calls `f` with the request's completion and the outbox its reply goes through.
    pub fn new(f: impl FnOnce(Result<Completion, TimingError>, &mut Outbox) + Send + 'static) -> Self {
        Self(Some(Box::new(f)))
    }

    fn call(mut self, result: Result<Completion, TimingError>, outbox: &mut Outbox) {
        if let Some(f) = self.0.take() {
            f(result, outbox);
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f(Err(TimingError::Stopped), &mut Outbox::new(false));
        }
    }
}

/// A request for the engine to time: `sectors` sectors at `lbn`, arrived at `received`
/// ([`crate::arrival`]), with its bytes when the engine carries them; `done` is called at its completion.
pub struct Submission {
    op: Op,
    lbn: u64,
    sectors: u32,
    received: Instant,
    bytes: Option<RequestBytes>,
    done: Done,
    /// A FUA write ([`freeblock::request::Request::fua`]).
    fua: bool,
}

impl Submission {
    /// A request for [`Timing::submit_all`]. A write of no sectors is a flush
    /// ([`freeblock::request::Request::flush`]).
    #[must_use]
    pub fn new(op: Op, lbn: u64, sectors: u32, received: Instant, bytes: Option<RequestBytes>, done: Done) -> Self {
        Self { op, lbn, sectors, received, bytes, done, fua: false }
    }
}

enum Message {
    /// Requests in the order they were read.
    Requests(Vec<Submission>),
    /// No more requests: serve those in flight, then end the run.
    End,
}

/// What the engine thread's source and record sink share: the requests the engine holds, and
/// the outbox their replies go through.
struct Ledger {
    waiters: HashMap<u64, Done>,
    /// Requests completed while a map commit was staged: called once it is durable.
    held: Vec<(Done, Completion)>,
    outbox: Outbox,
}

impl Ledger {
    /// A request is complete: called now, or held while a map commit is staged.
    fn complete(&mut self, done: Done, completion: Completion, commits: Option<&MapCommits>) {
        if commits.is_some_and(MapCommits::pending) {
            self.held.push((done, completion));
            return;
        }
        // The engine made the staged commits durable itself (crate::placement).
        self.settle(None);
        done.call(Ok(completion), &mut self.outbox);
    }

    /// Makes the staged map commits durable and calls the requests held for them, in the order
    /// they completed; if that fails, their clients are told so.
    fn settle(&mut self, commits: Option<&MapCommits>) {
        let durable = commits.map_or(Ok(()), MapCommits::make_durable);
        // A full file system fails these replies alone (the commits stay staged for the next
        // try); any other failure of a sync is for good (see crate::commits).
        let no_space = commits.is_some_and(MapCommits::out_of_space);
        for (done, mut completion) in self.held.drain(..) {
            if let Err(e) = &durable {
                completion.failed.get_or_insert_with(|| Failure::storage(no_space, e.to_string()));
            }
            done.call(Ok(completion), &mut self.outbox);
        }
    }
}

/// The handle connections time their requests through.
pub struct Timing {
    tx: mpsc::Sender<Message>,
    start: Instant,
    pace: Pace,
    thread: Mutex<Option<JoinHandle<freeblock::Result<Option<RunReport>>>>>,
}

/// How much of a real-pace wait is spun rather than slept: the sleep's wake-up is late by tens
/// of microseconds (up to about 100); spinning the last stretch keeps replies within a few, and
/// leaves room to warm the send paths before the event.
const SPIN: Duration = Duration::from_micros(250);

/// The least time left before an event for the send paths to be warmed first
/// ([`SendPathWarmer`]): cold, its two warming writes take up to about 75 µs, which must not
/// make the reply late.
const WARM_AHEAD: Duration = Duration::from_micros(120);

/// The engine's view of the channel (see the module doc).
struct EngineSource {
    rx: mpsc::Receiver<Message>,
    start: Instant,
    pace: Pace,
    ledger: Arc<Mutex<Ledger>>,
    in_flight: InFlight,
    commits: Option<Arc<MapCommits>>,
    /// Requests taken from the channel, not yet handed to the engine.
    pending: VecDeque<Submission>,
    handed: Option<(Done, Option<RequestBytes>)>,
    ended: bool,
    /// Pace real: warms the kernel's send path as a wait turns to spinning.
    warmer: Option<SendPathWarmer>,
}

impl EngineSource {
    fn ns_since_start(&self, t: Instant) -> SimTime {
        SimTime::try_from(t.saturating_duration_since(self.start).as_nanos()).unwrap_or(SimTime::MAX)
    }

    /// Keeps what a wait for the channel brought: requests to hand over, or the end.
    fn take(&mut self, message: Option<Message>) {
        match message {
            Some(Message::Requests(batch)) => self.pending.extend(batch),
            Some(Message::End) => self.ended = true,
            None => {}
        }
    }

    /// Waits for a message until `deadline` (spinning the last [`SPIN`], the send path warmed
    /// as the spin begins); `None` at the deadline.
    fn recv_until(&mut self, deadline: Instant) -> Option<Message> {
        let mut slept = false;
        loop {
            let now = Instant::now();
            if now + SPIN < deadline {
                slept = true;
                match self.rx.recv_timeout(deadline - now - SPIN) {
                    Ok(m) => return Some(m),
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return Some(Message::End),
                }
            }
            if std::mem::take(&mut slept) && now + WARM_AHEAD < deadline {
                if let Some(w) = &mut self.warmer {
                    w.warm();
                }
            }
            match self.rx.try_recv() {
                Ok(m) => return Some(m),
                Err(TryRecvError::Disconnected) => return Some(Message::End),
                Err(TryRecvError::Empty) if Instant::now() >= deadline => return None,
                // No `spin_loop` hint: in a VM a `pause` loop gets the vCPU descheduled
                // (crate::pacing).
                Err(TryRecvError::Empty) => {}
            }
        }
    }
}

impl OnlineSource for EngineSource {
    fn next_arrival(&mut self, _now: SimTime, until: Option<SimTime>) -> Result<OnlineNext, WorkloadError> {
        if let Some(commits) = self.commits.as_deref().filter(|c| c.pending()) {
            let waits = self.pending.is_empty() && !self.ended && until.is_none_or(|t| self.pace == Pace::Real && self.start + Duration::from_nanos(t) > Instant::now());
            let mut ledger = self.ledger.lock().expect("never poisoned");
            if waits || ledger.waiters.is_empty() || commits.overdue() {
                ledger.settle(Some(commits));
            }
        }
        if self.pending.is_empty() && !self.ended {
            let message = match (until, self.pace) {
                (None, _) => {
                    // Nothing to do before the next request: the held replies go out first.
                    self.ledger.lock().expect("never poisoned").outbox.flush();
                    Some(self.rx.recv().unwrap_or(Message::End))
                }
                (Some(_), Pace::None) => match self.rx.try_recv() {
                    Ok(m) => Some(m),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => Some(Message::End),
                },
                (Some(t), Pace::Real) => self.recv_until(self.start + Duration::from_nanos(t)),
            };
            self.take(message);
        }
        if let Some(first) = self.pending.front() {
            let time = self.ns_since_start(first.received);
            // A request read after the next event's instant arrives after it (pace real: the
            // wall clock has passed that instant already, so the event is due).
            if until.is_some_and(|t| time > t) {
                return Ok(OnlineNext::Later);
            }
            let s = self.pending.pop_front().expect("a first one");
            self.handed = Some((s.done, s.bytes));
            return Ok(OnlineNext::Request(Request { fua: s.fua, ..Request::new(time, s.lbn, s.sectors, s.op) }));
        }
        if self.ended {
            return Ok(OnlineNext::End);
        }
        let mut ledger = self.ledger.lock().expect("never poisoned");
        if ledger.outbox.overdue() {
            ledger.outbox.flush();
        }
        Ok(OnlineNext::Later)
    }

    /// Pace none runs the model ahead of the wall clock to answer requests at once, but not
    /// for a layout timer alone: a rearrangement period of a day would otherwise pass between
    /// two client requests, and the next one would arrive days after the last.
    fn before_timer(&mut self, at: SimTime) {
        if self.pace != Pace::None || !self.pending.is_empty() || self.ended {
            return;
        }
        {
            // Replies held for a commit, or for a batched write, go out before the wait.
            let mut ledger = self.ledger.lock().expect("never poisoned");
            if let Some(commits) = self.commits.as_deref().filter(|c| c.pending()) {
                ledger.settle(Some(commits));
            }
            ledger.outbox.flush();
        }
        let message = self.recv_until(self.start + Duration::from_nanos(at));
        self.take(message);
    }

    fn accepted(&mut self, id: u64) {
        if let Some((done, bytes)) = self.handed.take() {
            self.ledger.lock().expect("never poisoned").waiters.insert(id, done);
            if let Some(b) = bytes {
                self.in_flight.lock().expect("never poisoned").insert(id, b);
            }
        }
    }

    /// The layout policy refused the request: it fails alone (its client gets an error), and
    /// the engine goes on serving the others.
    fn refused(&mut self, id: u64, error: freeblock::Error) -> freeblock::Result<()> {
        self.in_flight.lock().expect("never poisoned").remove(&id);
        let mut guard = self.ledger.lock().expect("never poisoned");
        let ledger = &mut *guard;
        if let Some(done) = ledger.waiters.remove(&id) {
            done.call(Ok(Completion { arrival_ns: 0, end_ns: 0, data: None, failed: Some(Failure::eio(error.to_string())) }), &mut ledger.outbox);
        }
        Ok(())
    }
}

/// A layout policy for the engine, and the way to stable storage of its map commits when they are
/// grouped ([`crate::commits`]).
pub type EngineLayout = (Box<dyn LayoutPolicy>, Option<Arc<MapCommits>>);

/// Why a request could not be timed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimingError {
    /// The engine stopped (the server is shutting down, or the engine failed: see its report).
    #[error("the engine has stopped")]
    Stopped,
}

impl Timing {
    /// Starts the engine thread on `disk` with `sim` settings and, if given, freeblock
    /// background work (the configured tasks, and `apps` such as the scrub), serving requests
    /// through `layout` if given (with its grouped map commits, made durable when the engine is
    /// about to wait). Requests handed over with bytes keep them in `in_flight` while the engine
    /// serves them (the layout moves them: [`crate::placement`]).
    ///
    /// # Errors
    /// A freeblock configuration the engine refuses.
    #[allow(clippy::too_many_arguments)]
    pub fn start(disk: Arc<Disk>, sim: SimConfig, freeblock: Option<FreeblockConfig>, apps: Vec<Box<dyn BackgroundApp>>, layout: Option<EngineLayout>, pace: Pace, realtime: bool, in_flight: InFlight) -> freeblock::Result<Self> {
        sim.validate()?;
        // Background applications need freeblock scheduling; a server never stops because its
        // background work is done.
        let freeblock = match (freeblock, apps.is_empty()) {
            (None, true) => None,
            (cfg, _) => Some(FreeblockConfig { stop_when_done: false, ..cfg.unwrap_or_default() }),
        };
        let freeblock = match freeblock {
            Some(cfg) => {
                let mut fb = Freeblock::new(Arc::clone(&disk), cfg)?;
                for app in apps {
                    fb.add_app(app)?;
                }
                Some(fb)
            }
            None => None,
        };
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let start = Instant::now();
        // Unpaced, the engine holds replies to write several at once (crate::reply).
        let ledger = Arc::new(Mutex::new(Ledger { waiters: HashMap::new(), held: Vec::new(), outbox: Outbox::new(pace == Pace::None) }));
        // Map commits grouped by the layout: made durable when the engine is about to wait.
        let (layout, commits) = layout.map_or((None, None), |(l, c)| (Some(l), c));
        let source = EngineSource { rx, start, pace, ledger: Arc::clone(&ledger), in_flight: Arc::clone(&in_flight), commits: commits.clone(), pending: VecDeque::new(), handed: None, ended: false, warmer: (pace == Pace::Real).then(SendPathWarmer::new).flatten() };
        let thread = std::thread::Builder::new()
            .name("freeblock-engine".into())
            .spawn(move || {
                let tuned = if pace == Pace::Real { crate::pacing::wake_on_time(realtime) } else { Ok(()) };
                if let Err(e) = tuned {
                    let refused = freeblock::Error::Config { origin: "realtime".into(), message: format!("the kernel refused SCHED_FIFO for the engine thread ({e}): run as root or with CAP_SYS_NICE, or without realtime") };
                    let _ = ready_tx.send(Err(refused));
                    return Ok(None);
                }
                let _ = ready_tx.send(Ok(()));
                let sink_ledger = Arc::clone(&ledger);
                let sink_commits = commits.clone();
                let mut sim = Simulation::online(disk, Box::new(source), sim).with_record_sink(Box::new(move |r| {
                    let mut ledger = sink_ledger.lock().expect("never poisoned");
                    // Requests freeblock promoted have no waiter.
                    if let Some(done) = ledger.waiters.remove(&r.id) {
                        let (data, failed) = match in_flight.lock().expect("never poisoned").remove(&r.id) {
                            Some(b) => (Some(b.data), b.failed),
                            None => (None, None),
                        };
                        ledger.complete(done, Completion { arrival_ns: r.arrival_ns, end_ns: r.end_ns, data, failed }, sink_commits.as_deref());
                    }
                    Ok(())
                }));
                if let Some(fb) = freeblock {
                    sim = sim.with_freeblock(fb);
                }
                // The hook every layout technique runs through (FS2 too, once it exists).
                if let Some(layout) = layout {
                    sim = sim.with_layout(layout);
                }
                let report = sim.run(None).map(Some);
                let mut ledger = ledger.lock().expect("never poisoned");
                ledger.settle(commits.as_deref());
                ledger.outbox.flush();
                // Requests the engine accepted but never completed (it failed): their Done says
                // so as it drops.
                ledger.waiters.clear();
                report
            })
            .map_err(|e| freeblock::Error::Config { origin: "server".into(), message: format!("cannot start the engine thread: {e}") })?;
        // The engine thread's scheduling is settled before the first request.
        if let Ok(Err(refused)) = ready_rx.recv() {
            let _ = thread.join();
            return Err(refused);
        }
        Ok(Self { tx, start, pace, thread: Mutex::new(Some(thread)) })
    }

    /// The wall-clock instant of model time 0.
    #[must_use]
    pub fn start_instant(&self) -> Instant {
        self.start
    }

    /// The pace.
    #[must_use]
    pub fn pace(&self) -> Pace {
        self.pace
    }

    /// Times one request of `sectors` sectors at `lbn` that was read off the socket at
    /// `received`; resolves when the model completes it (paced).
    ///
    /// # Errors
    /// [`TimingError::Stopped`] once the engine has stopped.
    pub async fn time(&self, op: Op, lbn: u64, sectors: u32, received: Instant) -> Result<Completion, TimingError> {
        self.serve(op, lbn, sectors, received, None).await
    }

    /// As [`Timing::time`], with the request's bytes for the engine to carry (a write's payload,
    /// or a read's buffer, given back filled in [`Completion::data`]).
    ///
    /// # Errors
    /// [`TimingError::Stopped`] once the engine has stopped.
    pub async fn serve(&self, op: Op, lbn: u64, sectors: u32, received: Instant, bytes: Option<RequestBytes>) -> Result<Completion, TimingError> {
        let (tell, wait) = oneshot::channel();
        self.submit(
            op,
            lbn,
            sectors,
            received,
            bytes,
            Done::new(move |r, _| {
                let _ = tell.send(r);
            }),
        );
        wait.await.unwrap_or(Err(TimingError::Stopped))
    }

    /// Times a FUA write of `sectors` sectors at `lbn` (on the media before it completes, on a
    /// drive whose write cache is write-back).
    ///
    /// # Errors
    /// [`TimingError::Stopped`] once the engine has stopped.
    pub async fn time_fua(&self, lbn: u64, sectors: u32, received: Instant) -> Result<Completion, TimingError> {
        let (tell, wait) = oneshot::channel();
        let done = Done::new(move |r, _| {
            let _ = tell.send(r);
        });
        self.submit_all(vec![Submission { fua: true, ..Submission::new(Op::Write, lbn, sectors, received, None, done) }]);
        wait.await.unwrap_or(Err(TimingError::Stopped))
    }

    /// Times a FLUSH CACHE: resolves when the model has written everything its drive's cache
    /// holds dirty (at once on a drive that holds none).
    ///
    /// # Errors
    /// [`TimingError::Stopped`] once the engine has stopped.
    pub async fn time_flush(&self, received: Instant) -> Result<Completion, TimingError> {
        self.time(Op::Write, 0, 0, received).await
    }

    /// Hands a request to the engine without waiting: `done` is called on the engine thread when
    /// the model completes it (or with [`TimingError::Stopped`]).
    pub fn submit(&self, op: Op, lbn: u64, sectors: u32, received: Instant, bytes: Option<RequestBytes>, done: Done) {
        self.submit_all(vec![Submission::new(op, lbn, sectors, received, bytes, done)]);
    }

    /// Hands requests to the engine in one message (one wake-up of the engine thread), in the
    /// order given; as [`Timing::submit`] for each.
    pub fn submit_all(&self, requests: Vec<Submission>) {
        if requests.is_empty() {
            return;
        }
        // A send to a stopped engine gives the requests back; dropping them calls their `done`.
        let _ = self.tx.send(Message::Requests(requests));
    }

    /// Ends the run once the requests in flight are served, and returns the engine's report.
    ///
    /// # Errors
    /// The engine's error, if it failed.
    pub fn finish(&self) -> freeblock::Result<Option<RunReport>> {
        let _ = self.tx.send(Message::End);
        match self.thread.lock().expect("never poisoned").take() {
            Some(t) => t.join().map_err(|_| freeblock::Error::Config { origin: "server".into(), message: "the engine thread panicked".into() })?,
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_done_is_called_once_and_a_dropped_one_says_the_engine_stopped() {
        let (tx, rx) = mpsc::channel();
        let called = tx.clone();
        Done::new(move |r, _| called.send(r).unwrap()).call(Ok(Completion { arrival_ns: 1, end_ns: 2, data: None, failed: None }), &mut Outbox::new(true));
        drop(Done::new(move |r, _| tx.send(r).unwrap()));
        let got: Vec<_> = rx.iter().collect();
        assert_eq!(got, vec![Ok(Completion { arrival_ns: 1, end_ns: 2, data: None, failed: None }), Err(TimingError::Stopped)]);
    }
}
