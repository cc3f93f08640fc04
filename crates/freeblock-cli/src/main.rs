//! The `freeblock` command. All logic lives in the library's [`freeblock_cli::run`], which the
//! Python package also calls; the binary adds a counting allocator so `freeblock bench` can
//! measure heap use.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use freeblock_repro::bench::AllocationProbe;

/// The system allocator, counting the bytes in use and their peak.
struct CountingAllocator {
    current: AtomicU64,
    peak: AtomicU64,
}

impl CountingAllocator {
    fn grew(&self, bytes: usize) {
        let now = self.current.fetch_add(bytes as u64, Relaxed) + bytes as u64;
        self.peak.fetch_max(now, Relaxed);
    }

    fn shrank(&self, bytes: usize) {
        self.current.fetch_sub(bytes as u64, Relaxed);
    }
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        self.shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                self.grew(new_size - layout.size());
            } else {
                self.shrank(layout.size() - new_size);
            }
        }
        p
    }
}

impl AllocationProbe for CountingAllocator {
    fn current_bytes(&self) -> u64 {
        self.current.load(Relaxed)
    }

    fn peak_bytes(&self) -> u64 {
        self.peak.load(Relaxed)
    }

    fn reset_peak(&self) {
        self.peak.store(self.current.load(Relaxed), Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator { current: AtomicU64::new(0), peak: AtomicU64::new(0) };

fn main() {
    std::process::exit(freeblock_cli::run_with_allocation_probe(std::env::args_os(), Some(&ALLOCATOR)));
}
