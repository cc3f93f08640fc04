//! The replies of one connection, written by whichever thread has a reply when it is due.
//!
//! With `--pace real` a reply is due at the instant the modelled disk completes its request, and
//! the engine thread is the one awake at that instant: it waited for it. Handing the reply to a
//! tokio task adds a wake-up, and on a machine shared with other work that wake-up costs
//! milliseconds at the tail. So the engine writes the reply itself, with a non-blocking `write`
//! on a duplicate of the socket's descriptor. Only what the socket cannot take at once (a client
//! that stopped reading) is queued for the connection's flusher task, so a slow client never
//! holds the engine up.
//!
//! ```text
//!  engine thread, at completion ─┐                     ┌─► write(2) now (nothing queued)
//!  connection task (errors, ...) ┴─► Replies::send ────┤
//!                                                      └─► queue ─► flusher task (tokio write half)
//! ```
//!
//! Replies never interleave: a direct write happens only while nothing is queued or being
//! flushed, under the one lock, and the flusher writes what is queued in order. A connection
//! without a descriptor to duplicate (an in-memory stream) queues every reply.
//!
//! **Held replies** (`--pace none`). Unpaced, the engine completes a client's 32 queued requests
//! back to back within microseconds; one `write` per reply would cost each its own trip through
//! the loopback stack and its own wake-up of the client. The engine then sends through an
//! [`Outbox`] that holds each connection's replies and writes them with one vectored `write` when
//! the engine is about to wait for requests, or when a reply has been held for
//! [`Outbox::HOLD_AT_MOST`].
//!
//! | pace | [`Outbox::send`] | written |
//! |---|---|---|
//! | `real` | writes at once | at the model's completion (its lateness is recorded) |
//! | `none` | holds it in the connection's [`Replies`] | at [`Outbox::flush`], several replies per `write` |
//!
//! **The connection's budget.** [`Replies`] also bounds what one connection holds: requests read
//! and not yet written to its socket, and their bytes (a WRITE's payload or a READ's buffer while
//! it is served, then its reply until the socket took it). The reader asks
//! [`Replies::admit`] before it takes each request off the socket and waits while the budget is
//! spent, so a client that pipelines large READs and never reads the replies stops being read
//! (TCP pushes back on it) instead of making the server allocate for all of them.
//!
//! ```text
//!  reader: header ─► admit(cost) ─(waits while spent)─► payload read, request served
//!  served: reply handed over ─► answered(cost): the request's cost becomes its reply's bytes
//!  the socket took the reply (or the client is gone) ─► the request and its bytes are freed
//! ```

use std::collections::VecDeque;
use std::io::{IoSlice, Write as _};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

use crate::stats::Stats;

/// A duplicate of a connection's socket, written without blocking.
pub enum DirectSocket {
    /// A TCP connection (std writes it with `send(MSG_NOSIGNAL)`: a gone client is an error,
    /// not a SIGPIPE).
    Tcp(std::net::TcpStream),
    /// A Unix-socket connection.
    Unix(std::os::unix::net::UnixStream),
}

impl DirectSocket {
    /// A duplicate of a TCP socket's descriptor (already non-blocking, as tokio keeps it).
    #[must_use]
    pub fn tcp(fd: OwnedFd) -> Self {
        Self::Tcp(fd.into())
    }

    /// A duplicate of a Unix socket's descriptor.
    #[must_use]
    pub fn unix(fd: OwnedFd) -> Self {
        Self::Unix(fd.into())
    }

    fn write(&self, bytes: &[IoSlice<'_>]) -> std::io::Result<usize> {
        match self {
            Self::Tcp(s) => (&*s).write_vectored(bytes),
            Self::Unix(s) => (&*s).write_vectored(bytes),
        }
    }

    /// The descriptor.
    #[must_use]
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd as _;
        match self {
            Self::Tcp(s) => s.as_raw_fd(),
            Self::Unix(s) => s.as_raw_fd(),
        }
    }

    /// Writes as much of `replies`, in order, as the socket takes now: the number written whole,
    /// and the bytes written of the next one.
    fn write_now(&self, replies: &[Vec<u8>]) -> std::io::Result<(usize, usize)> {
        // Slices per call, under the kernel's IOV_MAX (1024).
        const SLICES: usize = 64;
        let (mut whole, mut part) = (0, 0);
        while whole < replies.len() {
            let rest = &replies[whole..(whole + SLICES).min(replies.len())];
            let slices: Vec<IoSlice<'_>> = rest.iter().enumerate().map(|(i, r)| IoSlice::new(if i == 0 { &r[part..] } else { r })).collect();
            match self.write(&slices) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(mut n) => {
                    while n > 0 {
                        let left = replies[whole].len() - part;
                        if n < left {
                            part += n;
                            break;
                        }
                        n -= left;
                        whole += 1;
                        part = 0;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok((whole, part))
    }
}

/// A reply waiting for the flusher, from byte `from` on.
struct Queued {
    bytes: Vec<u8>,
    from: usize,
    due: Option<Instant>,
}

struct State {
    direct: Option<DirectSocket>,
    queue: VecDeque<Queued>,
    /// The flusher holds replies taken from the queue: no direct write until it is done.
    flushing: bool,
    /// No more replies will come: the flusher ends once the queue is empty.
    closing: bool,
    /// The socket failed (the client is gone): replies are dropped.
    broken: bool,
    /// Replies an [`Outbox`] holds (pace none), written together at its flush.
    held: Vec<Vec<u8>>,
}

/// What one connection holds: requests read and not yet written to its socket, and their bytes
/// (see the module doc).
struct Budget {
    requests: AtomicU64,
    bytes: AtomicU64,
    max_requests: u64,
    max_bytes: u64,
    /// Notified whenever some of it is freed.
    freed: Notify,
}

impl Budget {
    fn free(&self, requests: u64, bytes: u64) {
        let sub = |a: &AtomicU64, n: u64| {
            let _ = a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(v.saturating_sub(n)));
        };
        sub(&self.requests, requests);
        sub(&self.bytes, bytes);
        self.freed.notify_waiters();
    }
}

/// One connection's replies (see the module doc).
pub struct Replies {
    state: Mutex<State>,
    wake: Notify,
    stats: Arc<Stats>,
    budget: Budget,
}

impl Replies {
    /// Replies written directly to `direct` when it can take them, else by the flusher; the
    /// lateness of replies with a due instant is recorded in `stats`.
    #[must_use]
    pub fn new(direct: Option<DirectSocket>, stats: Arc<Stats>) -> Self {
        let budget = Budget { requests: AtomicU64::new(0), bytes: AtomicU64::new(0), max_requests: u64::MAX, max_bytes: u64::MAX, freed: Notify::new() };
        Self { state: Mutex::new(State { direct, queue: VecDeque::new(), flushing: false, closing: false, broken: false, held: Vec::new() }), wake: Notify::new(), stats, budget }
    }

    /// The same, with the connection's budget: at most `requests` requests and `bytes` bytes
    /// held (see the module doc).
    #[must_use]
    pub fn bounded(mut self, requests: u64, bytes: u64) -> Self {
        (self.budget.max_requests, self.budget.max_bytes) = (requests.max(1), bytes.max(1));
        self
    }

    /// Waits until the budget has room for one more request of `cost` bytes (a request larger
    /// than the whole budget waits until nothing else is held), then takes it.
    pub async fn admit(&self, cost: u64) {
        loop {
            let freed = self.budget.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.try_admit(cost) {
                return;
            }
            freed.await;
        }
    }

    /// [`Replies::admit`] without waiting: whether the request was taken.
    pub fn try_admit(&self, cost: u64) -> bool {
        let b = &self.budget;
        let cost = cost.min(b.max_bytes);
        let (requests, bytes) = (b.requests.load(Ordering::Acquire), b.bytes.load(Ordering::Acquire));
        let room = requests < b.max_requests && (bytes == 0 || bytes.saturating_add(cost) <= b.max_bytes);
        if room {
            // Only the connection's reader admits: nothing takes room between the check and here.
            b.requests.fetch_add(1, Ordering::AcqRel);
            b.bytes.fetch_add(cost, Ordering::AcqRel);
        }
        room
    }

    /// A request admitted with `cost` has been answered (its reply handed to [`Replies::send`]
    /// or an [`Outbox`]): its cost is freed; the reply's own bytes are held until written.
    pub fn answered(&self, cost: u64) {
        self.budget.free(0, cost.min(self.budget.max_bytes));
    }

    /// Requests and bytes the connection holds now.
    #[must_use]
    pub fn held(&self) -> (u64, u64) {
        (self.budget.requests.load(Ordering::Acquire), self.budget.bytes.load(Ordering::Acquire))
    }

    /// A reply of `len` bytes is on its way: held until written.
    fn hold_bytes(&self, len: usize) {
        self.budget.bytes.fetch_add(len as u64, Ordering::AcqRel);
    }

    /// Replies (`count`, of `len` bytes in all) written, or dropped with the client gone.
    fn written(&self, count: usize, len: usize) {
        self.budget.free(count as u64, len as u64);
    }

    /// Sends one whole reply. `due` is the wall-clock instant the model completed its request
    /// (pace real), for the lateness.
    pub fn send(&self, bytes: Vec<u8>, due: Option<Instant>) {
        let mut s = self.state.lock().expect("never poisoned");
        if s.broken {
            drop(s);
            self.written(1, 0);
            return;
        }
        let replies = [bytes];
        let sending = Instant::now();
        let written = Self::write_direct(&mut s, &replies);
        if s.broken {
            drop(s);
            self.written(1, 0);
            return;
        }
        let from = match written {
            Some((1, _)) => {
                drop(s);
                self.written(1, 0);
                self.record(due, sending);
                return;
            }
            Some((_, part)) => part,
            None => 0,
        };
        let [bytes] = replies;
        self.hold_bytes(bytes.len());
        s.queue.push_back(Queued { bytes, from, due });
        drop(s);
        self.wake.notify_one();
    }

    /// Writes `replies` to the socket directly if nothing is queued or being flushed: the number
    /// written whole and the bytes of the next (`None`: not written at all, they must be
    /// queued). A failed socket marks the connection broken.
    fn write_direct(s: &mut State, replies: &[Vec<u8>]) -> Option<(usize, usize)> {
        if !s.queue.is_empty() || s.flushing {
            return None;
        }
        match s.direct.as_ref()?.write_now(replies) {
            Ok(written) => Some(written),
            Err(_) => {
                // The client is gone; its reader sees that too and ends the connection.
                s.broken = true;
                Some((replies.len(), 0))
            }
        }
    }

    /// Holds a reply for the next [`Replies::release`]; `true` when it is the first one held
    /// (the caller must then release this connection later).
    fn hold(&self, bytes: Vec<u8>) -> bool {
        let mut s = self.state.lock().expect("never poisoned");
        if s.broken {
            drop(s);
            self.written(1, 0);
            return false;
        }
        self.hold_bytes(bytes.len());
        s.held.push(bytes);
        s.held.len() == 1
    }

    /// Writes the held replies, with one vectored `write` when the socket takes them; what it
    /// does not take goes to the flusher, in order.
    fn release(&self) {
        let mut s = self.state.lock().expect("never poisoned");
        let held = std::mem::take(&mut s.held);
        if held.is_empty() {
            return;
        }
        if s.broken {
            drop(s);
            self.written(held.len(), held.iter().map(Vec::len).sum());
            return;
        }
        let (whole, part) = Self::write_direct(&mut s, &held).unwrap_or((0, 0));
        let whole = if s.broken { held.len() } else { whole };
        self.written(whole, held[..whole].iter().map(Vec::len).sum());
        if whole == held.len() {
            if s.closing {
                // The flusher may be waiting for the held replies before it ends.
                drop(s);
                self.wake.notify_one();
            }
            return;
        }
        for (i, bytes) in held.into_iter().enumerate().skip(whole) {
            let from = if i == whole { part } else { 0 };
            s.queue.push_back(Queued { bytes, from, due: None });
        }
        drop(s);
        self.wake.notify_one();
    }

    /// Records the lateness of a reply whose `write` began at `sending`: the instant the server
    /// hands it to the kernel. On loopback that `write` also runs the receiver's side of TCP and
    /// wakes the client before it returns (about 50 µs here), which is not the server's delay.
    fn record(&self, due: Option<Instant>, sending: Instant) {
        if let Some(due) = due {
            self.stats.lateness(u64::try_from(sending.saturating_duration_since(due).as_nanos()).unwrap_or(u64::MAX));
        }
    }

    /// No more replies will be sent: [`Replies::flush_until_closed`] returns once the queue is
    /// written.
    pub fn close(&self) {
        self.state.lock().expect("never poisoned").closing = true;
        self.wake.notify_one();
    }

    /// The flusher: writes queued replies to `wr` in order until [`Replies::close`], then gives
    /// the write half back.
    pub async fn flush_until_closed<W: AsyncWrite + Unpin>(&self, mut wr: W) -> W {
        loop {
            let batch = {
                let mut s = self.state.lock().expect("never poisoned");
                if s.queue.is_empty() {
                    s.flushing = false;
                    if s.closing && s.held.is_empty() {
                        return wr;
                    }
                    None
                } else {
                    s.flushing = true;
                    Some(std::mem::take(&mut s.queue))
                }
            };
            let Some(batch) = batch else {
                self.wake.notified().await;
                continue;
            };
            let mut batch = batch.into_iter();
            while let Some(q) = batch.next() {
                let sending = Instant::now();
                if wr.write_all(&q.bytes[q.from..]).await.is_err() {
                    let mut s = self.state.lock().expect("never poisoned");
                    s.broken = true;
                    let dropped: Vec<Queued> = std::iter::once(q).chain(batch).chain(s.queue.drain(..)).collect();
                    drop(s);
                    self.written(dropped.len(), dropped.iter().map(|q| q.bytes.len()).sum());
                    break;
                }
                self.written(1, q.bytes.len());
                self.record(q.due, sending);
            }
        }
    }
}

/// The engine thread's replies on their way out (see the module doc): written at once when
/// replies are paced, else held per connection until [`Outbox::flush`].
pub struct Outbox {
    hold: bool,
    /// Connections with held replies.
    held: Vec<Arc<Replies>>,
    /// When the oldest held reply was made.
    since: Option<Instant>,
}

impl Outbox {
    /// The longest a reply is held while the engine keeps working (the engine flushes sooner
    /// whenever it waits for requests).
    pub const HOLD_AT_MOST: Duration = Duration::from_micros(50);

    /// An outbox that holds replies (`hold`, for pace none) or writes each at once.
    #[must_use]
    pub fn new(hold: bool) -> Self {
        Self { hold, held: Vec::new(), since: None }
    }

    /// Sends one whole reply of `replies`' connection. `due` is the instant the model completed
    /// its request when replies are paced (a held reply is not paced and has none).
    pub fn send(&mut self, replies: &Arc<Replies>, bytes: Vec<u8>, due: Option<Instant>) {
        if !self.hold {
            replies.send(bytes, due);
            return;
        }
        if replies.hold(bytes) {
            self.held.push(Arc::clone(replies));
        }
        self.since.get_or_insert_with(Instant::now);
    }

    /// Whether a reply has been held for [`Outbox::HOLD_AT_MOST`].
    #[must_use]
    pub fn overdue(&self) -> bool {
        self.since.is_some_and(|t| t.elapsed() >= Self::HOLD_AT_MOST)
    }

    /// Writes every held reply, one vectored `write` per connection.
    pub fn flush(&mut self) {
        for r in self.held.drain(..) {
            r.release();
        }
        self.since = None;
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    /// A socket pair: the server's end (non-blocking, as tokio keeps it) and the client's.
    fn pair() -> (std::os::unix::net::UnixStream, std::os::unix::net::UnixStream) {
        let (server, client) = std::os::unix::net::UnixStream::pair().unwrap();
        server.set_nonblocking(true).unwrap();
        (server, client)
    }

    /// What the client's end can read now, without waiting.
    fn readable_now(client: &mut std::os::unix::net::UnixStream) -> Vec<u8> {
        client.set_nonblocking(true).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match client.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        got
    }

    /// Everything the client's end receives until the server's end is shut, read on a thread.
    fn read_to_end_in_thread(mut client: std::os::unix::net::UnixStream) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut all = Vec::new();
            client.read_to_end(&mut all).unwrap();
            all
        })
    }

    /// A server end with more replies to send than a socket buffer holds, so some must wait
    /// for the flusher, and the client's end read to its close on a thread.
    struct Overfull {
        server: std::os::unix::net::UnixStream,
        replies: Arc<Replies>,
        replies_sent: Vec<Vec<u8>>,
        rt: tokio::runtime::Runtime,
        reader: std::thread::JoinHandle<Vec<u8>>,
    }

    fn overfull() -> Overfull {
        let (server, client) = pair();
        let direct = DirectSocket::unix(server.try_clone().unwrap().into());
        Overfull {
            server,
            replies: Arc::new(Replies::new(Some(direct), Arc::default())),
            replies_sent: (0..64u8).map(|i| vec![i; 64 * 1024]).collect(),
            rt: tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap(),
            reader: read_to_end_in_thread(client),
        }
    }

    #[test]
    fn an_outbox_that_holds_writes_nothing_until_its_flush_then_every_reply_in_order() {
        let (server, mut client) = pair();
        let replies = Arc::new(Replies::new(Some(DirectSocket::unix(server.into())), Arc::default()));
        let mut outbox = Outbox::new(true);
        for i in 0..3u8 {
            outbox.send(&replies, vec![i; 100], None);
        }
        assert!(readable_now(&mut client).is_empty(), "held replies were written before the flush");
        outbox.flush();
        assert_eq!(readable_now(&mut client), [vec![0u8; 100], vec![1; 100], vec![2; 100]].concat());
        // Unpaced or not, an outbox that does not hold writes at once.
        Outbox::new(false).send(&replies, vec![7; 10], None);
        assert_eq!(readable_now(&mut client), vec![7u8; 10]);
    }

    #[test]
    fn replies_go_out_whole_and_in_order_when_the_socket_is_full() {
        let Overfull { server, replies, replies_sent, rt, reader } = overfull();
        rt.block_on(async {
            let wr = tokio::net::UnixStream::from_std(server).unwrap();
            let flusher = {
                let replies = Arc::clone(&replies);
                tokio::spawn(async move { replies.flush_until_closed(wr).await })
            };
            for r in &replies_sent {
                replies.send(r.clone(), None);
                tokio::task::yield_now().await;
            }
            replies.close();
            let mut wr = flusher.await.unwrap();
            wr.shutdown().await.unwrap();
        });
        let got = reader.join().unwrap();
        assert_eq!(got, replies_sent.concat(), "every reply whole, in the order sent");
    }

    #[test]
    fn held_replies_the_socket_cannot_take_go_to_the_flusher_in_order() {
        let Overfull { server, replies, replies_sent, rt, reader } = overfull();
        rt.block_on(async {
            let wr = tokio::net::UnixStream::from_std(server).unwrap();
            // As a connection does: the write half is shut the moment the flusher ends.
            let flusher = {
                let replies = Arc::clone(&replies);
                tokio::spawn(async move {
                    let mut wr = replies.flush_until_closed(wr).await;
                    wr.shutdown().await.unwrap();
                })
            };
            let mut outbox = Outbox::new(true);
            for r in &replies_sent[..32] {
                outbox.send(&replies, r.clone(), None);
            }
            outbox.flush();
            for r in &replies_sent[32..] {
                outbox.send(&replies, r.clone(), None);
            }
            // Closed with replies still held: the flusher must wait for them.
            replies.close();
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            outbox.flush();
            flusher.await.unwrap();
        });
        let got = reader.join().unwrap();
        assert_eq!(got.len(), 64 * 64 * 1024, "every held reply written");
        assert_eq!(got, replies_sent.concat(), "every reply whole, in the order held");
    }
}
