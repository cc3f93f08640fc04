//! Waking on time on a shared machine (pace real): what the engine thread asks of the kernel so
//! that it handles an event within microseconds of its wall-clock instant.
//!
//! Measured on this 2-core machine under other users' builds (load about 10): the engine thread
//! woke 3–4 ms late on about one event in ten, which was the whole of the lateness tail. Three
//! causes, three remedies:
//!
//! | cause | remedy | privilege |
//! |---|---|---|
//! | the timer slack (50 µs by default) lets the kernel batch wake-ups | slack 1 ns (`PR_SET_TIMERSLACK`) | none |
//! | EEVDF lets a running CPU-bound task finish its slice (about 3 ms) before a woken thread runs | a short slice for the engine thread (`sched_setattr`, 100 µs), which lets it preempt | none (Linux 6.12+; older kernels ignore it) |
//! | the same, and every other scheduling delay | `SCHED_FIFO` priority 1 (`realtime = true`) | `CAP_SYS_NICE` (or root) |
//! | after milliseconds asleep the kernel's send path is cold: a reply's `write` took 43 µs to reach the loopback device (3 µs when warm) | a [`SendPathWarmer`] write on private connections (loopback TCP and a Unix socket pair) as the spin begins, up to 250 µs before the reply is due (then 8.5 µs) | none |
//!
//! The engine spins the last stretch before an event without the `pause` hint: in a virtual
//! machine a loop of `pause` makes the hypervisor deschedule the vCPU (pause-loop exiting),
//! which turned a 150 µs spin into milliseconds.

/// Two connections to itself, one over loopback TCP and one over a Unix socket pair (the two
/// transports clients reach the server by), written and drained just before a reply is due.
///
/// Asleep for the milliseconds between two requests, the vCPU's caches lose the kernel's send
/// path; the first `write` after that spends tens of microseconds in it before its bytes leave,
/// time the client sees and the lateness (stamped as the `write` begins) does not. Measured on
/// this machine after 9 ms asleep, a `write` of 4 KiB: over TCP 43 µs to the loopback device
/// (`SO_TIMESTAMPING` transmit stamps; 3 µs back to back, 8.5 µs with one warming write 100 µs
/// before); over a Unix socket pair 32 µs for the whole `send` (4.6 µs warmed). The warming
/// costs the engine one write and read per transport per wait.
pub struct SendPathWarmer {
    tcp: Option<(std::net::TcpStream, std::net::TcpStream)>,
    unix: Option<(std::os::unix::net::UnixStream, std::os::unix::net::UnixStream)>,
    bytes: Vec<u8>,
}

impl SendPathWarmer {
    /// The size of a warming write: a 4 KiB read's reply and its header.
    const BYTES: usize = 4096 + 32;

    /// The two connections, or `None` if neither can be made (replies are then sent cold).
    /// Neither end ever blocks the engine: a write a connection cannot take is skipped.
    #[must_use]
    pub fn new() -> Option<Self> {
        let tcp = (|| {
            let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).ok()?;
            let writer = std::net::TcpStream::connect(listener.local_addr().ok()?).ok()?;
            let (reader, _) = listener.accept().ok()?;
            writer.set_nodelay(true).ok()?;
            writer.set_nonblocking(true).ok()?;
            reader.set_nonblocking(true).ok()?;
            Some((writer, reader))
        })();
        let unix = std::os::unix::net::UnixStream::pair().ok().filter(|(w, r)| w.set_nonblocking(true).is_ok() && r.set_nonblocking(true).is_ok());
        (tcp.is_some() || unix.is_some()).then(|| Self { tcp, unix, bytes: vec![0; Self::BYTES] })
    }

    /// One write through each send path, and its bytes read back so that the connections never
    /// fill (they are in the reader's queue when the write returns).
    pub fn warm(&mut self) {
        if let Some((w, r)) = &mut self.tcp {
            warm_through(w, r, &mut self.bytes);
        }
        if let Some((w, r)) = &mut self.unix {
            warm_through(w, r, &mut self.bytes);
        }
    }
}

/// Writes `bytes` to `writer` and reads back what it took from `reader`, the other end.
fn warm_through(mut writer: impl std::io::Write, mut reader: impl std::io::Read, bytes: &mut [u8]) {
    let Ok(sent) = writer.write(bytes) else { return };
    let mut read = 0;
    while read < sent {
        match reader.read(bytes) {
            Ok(0) | Err(_) => return,
            Ok(n) => read += n,
        }
    }
}

/// `struct sched_attr` as `sched_setattr(2)` takes it (`SCHED_ATTR_SIZE_VER0`).
#[repr(C)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime_ns: u64,
    deadline_ns: u64,
    period_ns: u64,
}

/// The EEVDF slice asked for the engine thread (the kernel's minimum is 100 µs).
const SLICE_NS: u64 = 100_000;

/// Tunes the calling thread to wake on time (see the module doc): timer slack and a short
/// slice always (ignored where the kernel lacks them), `SCHED_FIFO` when `realtime`.
///
/// # Errors
/// `realtime` was asked and the kernel refused `SCHED_FIFO` (no `CAP_SYS_NICE`).
pub fn wake_on_time(realtime: bool) -> std::io::Result<()> {
    // SAFETY: prctl, getpriority and sched_setattr act on the calling thread only; the attribute
    // struct is fully initialised and its size is given in it.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        // getpriority returns the nice value (which may be -1): keep it.
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        let size = std::mem::size_of::<SchedAttr>() as u32;
        let short_slice = SchedAttr { size, policy: libc::SCHED_OTHER as u32, flags: 0, nice, priority: 0, runtime_ns: SLICE_NS, deadline_ns: 0, period_ns: 0 };
        // A kernel without custom slices refuses it: the default slice stays.
        libc::syscall(libc::SYS_sched_setattr, 0, &raw const short_slice, 0);
        if realtime {
            let fifo = SchedAttr { size, policy: libc::SCHED_FIFO as u32, flags: 0, nice: 0, priority: 1, runtime_ns: 0, deadline_ns: 0, period_ns: 0 };
            if libc::syscall(libc::SYS_sched_setattr, 0, &raw const fifo, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read as _, Write as _};

    #[test]
    fn warming_drains_what_it_writes() {
        let mut warmer = SendPathWarmer::new().expect("loopback and a socket pair");
        assert!(warmer.tcp.is_some() && warmer.unix.is_some());
        // Far more than any socket buffer: undrained, the writes would stop being taken.
        for _ in 0..5_000 {
            warmer.warm();
        }
        let mut byte = [0u8; 1];
        let (tcp_writer, tcp_reader) = warmer.tcp.as_mut().expect("tcp");
        let left = tcp_reader.read(&mut byte);
        assert!(matches!(&left, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock), "TCP bytes left unread: {left:?}");
        // And the last write went through whole.
        assert_eq!(tcp_writer.write(&warmer.bytes).expect("still writable"), SendPathWarmer::BYTES);
        let (unix_writer, unix_reader) = warmer.unix.as_mut().expect("unix");
        let left = unix_reader.read(&mut byte);
        assert!(matches!(&left, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock), "Unix bytes left unread: {left:?}");
        assert_eq!(unix_writer.write(&warmer.bytes).expect("still writable"), SendPathWarmer::BYTES);
    }
}
