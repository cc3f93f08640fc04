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

use std::collections::VecDeque;
use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::Instant;

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

    fn write(&self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Self::Tcp(s) => (&*s).write(bytes),
            Self::Unix(s) => (&*s).write(bytes),
        }
    }

    /// Writes as much of `bytes` as the socket takes now; the count written.
    fn write_now(&self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut done = 0;
        while done < bytes.len() {
            match self.write(&bytes[done..]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(done)
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
}

/// One connection's replies (see the module doc).
pub struct Replies {
    state: Mutex<State>,
    wake: Notify,
    stats: Arc<Stats>,
}

impl Replies {
    /// Replies written directly to `direct` when it can take them, else by the flusher; the
    /// lateness of replies with a due instant is recorded in `stats`.
    #[must_use]
    pub fn new(direct: Option<DirectSocket>, stats: Arc<Stats>) -> Self {
        Self { state: Mutex::new(State { direct, queue: VecDeque::new(), flushing: false, closing: false, broken: false }), wake: Notify::new(), stats }
    }

    /// Sends one whole reply. `due` is the wall-clock instant the model completed its request
    /// (pace real), for the lateness.
    pub fn send(&self, bytes: Vec<u8>, due: Option<Instant>) {
        let mut s = self.state.lock().expect("never poisoned");
        if s.broken {
            return;
        }
        let mut from = 0;
        if s.queue.is_empty() && !s.flushing {
            if let Some(direct) = &s.direct {
                match direct.write_now(&bytes) {
                    Ok(n) if n == bytes.len() => {
                        drop(s);
                        self.record(due);
                        return;
                    }
                    Ok(n) => from = n,
                    Err(_) => {
                        // The client is gone; its reader sees that too and ends the connection.
                        s.broken = true;
                        return;
                    }
                }
            }
        }
        s.queue.push_back(Queued { bytes, from, due });
        drop(s);
        self.wake.notify_one();
    }

    fn record(&self, due: Option<Instant>) {
        if let Some(due) = due {
            self.stats.lateness(u64::try_from(Instant::now().saturating_duration_since(due).as_nanos()).unwrap_or(u64::MAX));
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
                    if s.closing {
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
            for q in batch {
                if wr.write_all(&q.bytes[q.from..]).await.is_err() {
                    let mut s = self.state.lock().expect("never poisoned");
                    s.broken = true;
                    s.queue.clear();
                    break;
                }
                self.record(q.due);
            }
        }
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

    #[test]
    fn replies_go_out_whole_and_in_order_when_the_socket_is_full() {
        let (server, mut client) = pair();
        let direct = DirectSocket::unix(server.try_clone().unwrap().into());
        let replies = Arc::new(Replies::new(Some(direct), Arc::default()));
        // More than a socket buffer holds, so some replies must wait for the flusher.
        let replies_sent: Vec<Vec<u8>> = (0..64u8).map(|i| vec![i; 64 * 1024]).collect();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            client.read_to_end(&mut all).unwrap();
            all
        });
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
}
