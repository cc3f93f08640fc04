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
//!
//! The engine spins the last stretch before an event without the `pause` hint: in a virtual
//! machine a loop of `pause` makes the hypervisor deschedule the vCPU (pause-loop exiting),
//! which turned a 150 µs spin into milliseconds.

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
