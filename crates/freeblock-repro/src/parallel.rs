//! Independent simulation runs spread over a few threads (the reproductions' sweeps): each
//! thread takes the next job until none is left, and the results come back in job order
//! whichever finishes first, so a sweep's output does not depend on the thread count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `work` on every job with at most `threads` threads (at least one) and returns the
/// results in job order. `done(n)` is called, from the thread that finished it, after the `n`th
/// job to complete.
pub fn map_in_order<T: Send, J: Sync>(jobs: &[J], threads: usize, work: impl Fn(&J) -> T + Sync, done: impl Fn(usize) + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<T>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1).min(jobs.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let out = work(job);
                *slots[i].lock().expect("result slot") = Some(out);
                done(finished.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    slots.into_iter().map(|m| m.into_inner().expect("result slot").expect("every job ran")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_results_keep_job_order() {
        let jobs: Vec<u64> = (0..20).collect();
        let out = map_in_order(&jobs, 3, |j| j * j, |_| {});
        assert_eq!(out, jobs.iter().map(|j| j * j).collect::<Vec<_>>());
    }
}
