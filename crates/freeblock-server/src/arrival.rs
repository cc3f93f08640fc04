//! When a request arrived: the kernel's receive timestamp of its bytes, not the instant a worker
//! got round to reading them.
//!
//! With `--pace real` the model takes a request's arrival as its start, and the reply is due
//! at arrival + the model's response time. Between the request's packet reaching the socket and
//! a tokio worker reading it lies the worker's wake-up, tens of microseconds (more on a busy
//! machine), which the client sees and the model does not. The kernel stamps every packet as it
//! is received (`SO_TIMESTAMPNS`); peeking at the first unread byte before each read gives the
//! stamp of the data that read will bring.
//!
//! ```text
//!  client send ─► packet received: kernel stamps it (t0) ─► worker wakes ─► peek: t0 ─► read
//!                                                                           (arrival = t0, not now)
//! ```
//!
//! | request | its arrival |
//! |---|---|
//! | the first one a fresh read completes | the stamp of the first packet that read brought (its header ends in it, unless split: below) |
//! | a later one from the same read | the instant it is parsed (it may have come in a later packet: never taken earlier than it was) |
//! | no stamp (not pace real, a socket without timestamps, the first packets after stamping is turned on, a stamp more than a second old) | the instant it is parsed |
//!
//! One case is taken early: a header the client split over two packets that were both waiting
//! when the worker read them gets the first packet's stamp, earlier than its last byte by the
//! gap between the two. Clients write a header whole; a batching client can still have one
//! straddle two segments, and then the gap is what separated two packets already queued.

use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use tokio::io::{AsyncRead, ReadBuf};

/// A stamp older than this is taken as a clock step, not an arrival, and ignored.
const OLDEST: Duration = Duration::from_secs(1);

/// A socket's read half that notes when the data each read brings arrived (see the module doc).
pub struct Stamped<R> {
    inner: R,
    /// The socket's descriptor (the same socket as `inner`), when arrivals are stamped.
    fd: Option<RawFd>,
    /// Reads that brought data.
    reads: u64,
    /// When the first packet of the latest read arrived.
    latest: Option<Instant>,
}

impl<R> Stamped<R> {
    /// `inner`, stamped through `fd` (a descriptor of the same socket, valid while this lives)
    /// when given; the kernel is asked to stamp the socket's packets.
    pub fn new(inner: R, fd: Option<RawFd>) -> Self {
        let on: libc::c_int = 1;
        // SAFETY: setsockopt reads `on` (an int, its size given) and acts on `fd` only.
        let fd = fd.filter(|&fd| unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, (&raw const on).cast(), size_of::<libc::c_int>() as libc::socklen_t) } == 0);
        Self { inner, fd, reads: 0, latest: None }
    }

    /// Reads that brought data so far, and when the latest one's first packet arrived.
    pub fn latest(&self) -> (u64, Option<Instant>) {
        (self.reads, self.latest)
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Stamped<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let stamp = this.fd.and_then(peek_arrival);
        let before = buf.filled().len();
        let read = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.reads += 1;
            this.latest = stamp;
        }
        read
    }
}

/// When the first unread byte of socket `fd` arrived, if it has one and the kernel stamped it.
fn peek_arrival(fd: RawFd) -> Option<Instant> {
    let mut byte = 0u8;
    let mut iov = libc::iovec { iov_base: (&raw mut byte).cast(), iov_len: 1 };
    // Room for one control message with a timespec, aligned as cmsghdr wants.
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; zeroed is a valid empty header, filled in below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control);
    // SAFETY: every pointer in `msg` points at a live buffer of the length given; a peek takes
    // nothing from the socket.
    if unsafe { libc::recvmsg(fd, &raw mut msg, libc::MSG_PEEK | libc::MSG_DONTWAIT) } <= 0 {
        return None;
    }
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, within its length.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&raw const msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                return since_epoch(ts);
            }
            c = libc::CMSG_NXTHDR(&raw const msg, c);
        }
    }
    None
}

/// The `Instant` of a wall-clock stamp, if it is recent (the two clocks are read together).
fn since_epoch(ts: libc::timespec) -> Option<Instant> {
    let stamp = SystemTime::UNIX_EPOCH + Duration::new(u64::try_from(ts.tv_sec).ok()?, u32::try_from(ts.tv_nsec).ok()?);
    let (now, wall) = (Instant::now(), SystemTime::now());
    let age = wall.duration_since(stamp).unwrap_or(Duration::ZERO);
    if age > OLDEST {
        return None;
    }
    now.checked_sub(age)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::os::fd::AsRawFd as _;
    use tokio::io::AsyncReadExt as _;

    #[test]
    fn a_read_is_stamped_with_when_its_bytes_arrived_not_when_they_were_read() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (server, _) = listener.accept().unwrap();
            server.set_nonblocking(true).unwrap();
            let fd = server.as_raw_fd();
            let mut stamped = Stamped::new(tokio::net::TcpStream::from_std(server).unwrap(), Some(fd));
            // The kernel turns packet stamping on for the whole system when the first socket asks
            // for it, a moment later (deferred work): packets before that carry no stamp.
            let mut byte = [0u8; 1];
            for _ in 0..2000 {
                client.write_all(b"x").unwrap();
                stamped.read_exact(&mut byte).await.unwrap();
                if stamped.latest().1.is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            let reads_before = stamped.latest().0;
            let sent = Instant::now();
            client.write_all(b"hello").unwrap();
            std::thread::sleep(Duration::from_millis(30));
            let mut got = [0u8; 5];
            stamped.read_exact(&mut got).await.unwrap();
            let read = Instant::now();
            let (reads, arrived) = stamped.latest();
            let arrived = arrived.expect("loopback TCP packets are stamped");
            assert_eq!((&got, reads), (b"hello", reads_before + 1));
            assert!(arrived >= sent - Duration::from_millis(1), "stamped {:?} before the send", sent - arrived);
            assert!(read - arrived >= Duration::from_millis(29), "the stamp is the read's instant, not the packet's: {:?} before the read", read - arrived);
        });
    }
}
