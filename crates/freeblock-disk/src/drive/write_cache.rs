//! The write cache of a drive of today (`[write_cache]`, issue 34): writes complete once their
//! data is in the drive's memory, and the drive writes that dirty data to the media later, in
//! the order *it* finds cheapest, whenever the mechanism has nothing else to do.
//!
//! ```text
//!  host write ──► room? ── yes ──► dirty set (extents by LBN) ──► completion (overhead + bus)
//!                  │ no: destage until there is (the write waits: a "full-cache stall")
//!                  ▼
//!  mechanism ── idle? ──► destage: the dirty extent with the least positioning time from the
//!                         head (seek + rotational wait), ≤ 1 MiB of it at a time
//!  host read ───► all sectors dirty? ── yes ──► answered from memory (hit overhead + bus)
//!                  └─ no ──► media read, after any destage under way
//!  FUA write ───► media write (after any destage under way); its sectors stop being dirty
//!  FLUSH CACHE ─► flush overhead, then destage everything dirty, nearest first; completes when
//!                 the last destage is on the media: its cost grows with the dirty count
//! ```
//!
//! | command | write-back cache | write-through (or no `[write_cache]`) |
//! |---|---|---|
//! | write | in the cache: `write_hit_ms` + bus; waits for room when full | media write |
//! | FUA write | media write, overlapping dirty data dropped | media write |
//! | read | dirty data: `read_hit_ms` + bus; else media read | media read |
//! | FLUSH CACHE | `flush_overhead_ms` + every dirty extent destaged | `flush_overhead_ms` |
//!
//! **When destages run.** The mechanism is free once its last media command or destage ends; a
//! destage starts whenever it is free and something is dirty, and runs to its end (a command
//! arriving meanwhile waits for it, as one arriving during a DiskSim buffer's write-back does).
//! Commands the cache answers do not need the mechanism, so destaging goes on under a stream of
//! cached writes. A media command completes before the mechanism counts as free again, so a
//! drive kept busy by back-to-back media commands destages nothing until it idles, a FLUSH
//! comes, or a write finds the cache full.
//!
//! **What is simplified.** Destages are internal: no command overhead and no bus (the data is
//! already in the drive). A read that is only partly dirty goes to the media whole. A write
//! larger than the whole cache goes to the media as a write-through one. The time a write waits
//! for room is reported as its command overhead. The firmware queue (`[sim.firmware]`) ranks
//! commands by their media positioning time and does not know which the cache will answer.
//!
//! **How far the firmware looks.** `destage_window` (absent: every dirty extent) limits each
//! pick to that many of the oldest dirty extents, as firmware that runs its positioning-time
//! order over a queue of bounded depth would. With the whole cache to choose from, the nearest
//! of N scattered blocks gets nearer as N grows, so a flush's cost per block falls with N; with
//! a window of W it stays near the cost of the best of W once N passes W.
//!
//! Picking the nearest extent scans every dirty extent (the seek alone bounds the positioning
//! time from below, so most are skipped without a rotational computation); a flush of N random
//! dirty blocks costs O(N²) move computations, fine for the thousands a 64 MiB cache holds.

use std::collections::{BTreeMap, BTreeSet};

use crate::disk::{Breakdown, Disk, HeadState, MediaAccess, Op, Target};
use crate::error::AccessError;
use crate::layout::TrackRun;
use crate::spec::WriteCacheSpec;
use crate::time::{ms_to_ns, SimTime};

/// Most sectors one destage writes: a long dirty run goes to the media a piece at a time, so a
/// read arriving meanwhile waits for one piece, not the whole run (1 MiB of 512-byte sectors).
pub const MAX_DESTAGE_SECTORS: u64 = 2048;

/// What a write cache has done so far ([`crate::Drive::write_cache_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteCacheStats {
    /// Writes that completed in the cache.
    pub absorbed_writes: u64,
    /// Of those, writes that had to wait for room.
    pub stalled_writes: u64,
    /// Total time writes waited for room, ns.
    pub stall_ns: u64,
    /// Writes that went to the media before completing: FUA, or larger than the whole cache.
    pub media_writes: u64,
    /// Reads answered from dirty data.
    pub read_hits: u64,
    /// Destages (media writes of dirty data).
    pub destages: u64,
    /// Sectors the destages wrote.
    pub destaged_sectors: u64,
    /// FLUSH CACHE commands served.
    pub flushes: u64,
}

/// A run of dirty sectors `start..end`, where its first sector is, and when its oldest data
/// came in (a sequence number: merged runs keep the oldest).
#[derive(Debug, Clone, Copy)]
struct Extent {
    end: u64,
    target: Target,
    seq: u64,
}

/// A write-back cache's state: the dirty extents and the mechanism's timeline.
#[derive(Debug, Clone)]
pub(super) struct WriteCache {
    capacity: u64,
    flush_overhead: SimTime,
    read_hit_overhead: SimTime,
    write_hit_overhead: SimTime,
    /// Disjoint, non-adjacent dirty extents by first sector.
    dirty: BTreeMap<u64, Extent>,
    /// The same extents oldest first, `(seq, start)`.
    age: BTreeSet<(u64, u64)>,
    next_seq: u64,
    /// Destages choose among this many of the oldest extents (`None`: all of them).
    window: Option<usize>,
    dirty_sectors: u64,
    /// The mechanism is busy (a media command or a destage) until then.
    free_at: SimTime,
    stats: WriteCacheStats,
    runs: Vec<TrackRun>,
}

impl WriteCache {
    pub(super) fn new(disk: &Disk, spec: &WriteCacheSpec) -> Self {
        let c = &disk.spec().controller;
        Self {
            capacity: spec.capacity_sectors(disk.spec().sector_bytes),
            flush_overhead: ms_to_ns(spec.flush_overhead_ms),
            read_hit_overhead: ms_to_ns(c.read_hit_ms),
            write_hit_overhead: ms_to_ns(c.write_hit_ms),
            dirty: BTreeMap::new(),
            age: BTreeSet::new(),
            next_seq: 0,
            window: spec.destage_window.map(|w| w as usize),
            dirty_sectors: 0,
            free_at: 0,
            stats: WriteCacheStats::default(),
            runs: Vec::with_capacity(4),
        }
    }

    pub(super) fn dirty_sectors(&self) -> u64 {
        self.dirty_sectors
    }

    pub(super) fn dirty_extents(&self) -> usize {
        self.dirty.len()
    }

    pub(super) fn stats(&self) -> WriteCacheStats {
        self.stats
    }

    /// A read or a write (not FUA) at `start`.
    pub(super) fn serve(&mut self, disk: &Disk, head: &mut HeadState, start: SimTime, lbn: u64, sectors: u64, op: Op) -> Result<(MediaAccess, bool), AccessError> {
        self.catch_up(disk, head, start)?;
        let end_lbn = lbn + sectors;
        if op.is_read() {
            if self.contains(lbn, end_lbn) {
                self.stats.read_hits += 1;
                return Ok((Self::answered_in_memory(start, 0, self.read_hit_overhead, disk.bus_ns(sectors), *head), true));
            }
            return Ok((self.media(disk, head, start, lbn, sectors, op)?, false));
        }
        if sectors > self.capacity {
            return self.fua(disk, head, start, lbn, sectors).map(|a| (a, false));
        }
        // Room for what is not dirty already: destage (the write waiting) until there is.
        let mut room_at = start;
        while self.dirty_sectors + self.newly_dirty(lbn, end_lbn) > self.capacity {
            let from = self.free_at.max(start);
            self.destage_one(disk, head, from)?;
            room_at = self.free_at;
        }
        let stall = room_at - start;
        if stall > 0 {
            self.stats.stalled_writes += 1;
            self.stats.stall_ns += stall;
        }
        self.stats.absorbed_writes += 1;
        let access = Self::answered_in_memory(start, stall, self.write_hit_overhead, disk.bus_write_ns(sectors), *head);
        let was_clean = self.dirty.is_empty();
        self.insert(disk, lbn, end_lbn)?;
        if was_clean {
            // Nothing was dirty: the mechanism may start on this data once it is in.
            self.free_at = self.free_at.max(access.end);
        }
        Ok((access, true))
    }

    /// A FUA write at `start`: to the media before it completes; its sectors are clean after.
    pub(super) fn fua(&mut self, disk: &Disk, head: &mut HeadState, start: SimTime, lbn: u64, sectors: u64) -> Result<MediaAccess, AccessError> {
        self.catch_up(disk, head, start)?;
        let access = self.media(disk, head, start, lbn, sectors, Op::Write)?;
        self.remove(disk, lbn, lbn + sectors)?;
        self.stats.media_writes += 1;
        Ok(access)
    }

    /// FLUSH CACHE at `start`: the overhead, then every dirty extent destaged, nearest first.
    pub(super) fn flush(&mut self, disk: &Disk, head: &mut HeadState, start: SimTime) -> Result<MediaAccess, AccessError> {
        self.catch_up(disk, head, start)?;
        self.stats.flushes += 1;
        let begin = start + self.flush_overhead;
        let mut media = Breakdown::default();
        let mut media_start = None;
        while !self.dirty.is_empty() {
            let from = self.free_at.max(begin);
            media_start.get_or_insert(from);
            media.add(&self.destage_one(disk, head, from)?);
        }
        // A destage under way when the flush came must end too.
        let end = begin.max(self.free_at);
        let media_start = media_start.unwrap_or(end);
        let moved = media.seek + media.rotational_latency + media.transfer;
        let breakdown = Breakdown { overhead: (end - start) - moved, ..media };
        Ok(MediaAccess { start, media_start, media_end: end, end, breakdown, end_head: *head })
    }

    /// Destages while the mechanism is free before `t`; each destage started runs to its end.
    fn catch_up(&mut self, disk: &Disk, head: &mut HeadState, t: SimTime) -> Result<(), AccessError> {
        while self.free_at < t && !self.dirty.is_empty() {
            self.destage_one(disk, head, self.free_at)?;
        }
        Ok(())
    }

    /// A media command at `start`, after whatever the mechanism is busy with.
    fn media(&mut self, disk: &Disk, head: &mut HeadState, start: SimTime, lbn: u64, sectors: u64, op: Op) -> Result<MediaAccess, AccessError> {
        let access = disk.access_when_free(*head, start, self.free_at, lbn, sectors, op, &mut self.runs)?;
        *head = access.end_head;
        // Free only once the command has completed: the host's next command comes first.
        self.free_at = self.free_at.max(access.end);
        Ok(access)
    }

    /// A command the cache answers: `overhead` then `bus`, after waiting `stall`.
    fn answered_in_memory(start: SimTime, stall: SimTime, overhead: SimTime, bus: SimTime, head: HeadState) -> MediaAccess {
        let end = start + stall + overhead + bus;
        let breakdown = Breakdown { overhead: stall + overhead, bus, ..Breakdown::default() };
        MediaAccess { start, media_start: end - bus, media_end: end - bus, end, breakdown, end_head: head }
    }

    /// The dirty extent with the least positioning time from `head` at `at` (ties: the lowest
    /// LBN), destaged (≤ [`MAX_DESTAGE_SECTORS`] of it) from `at`; returns its media time.
    fn destage_one(&mut self, disk: &Disk, head: &mut HeadState, at: SimTime) -> Result<Breakdown, AccessError> {
        let mut best: Option<(SimTime, u64)> = None;
        let window = self.window.unwrap_or(usize::MAX);
        let candidates: Box<dyn Iterator<Item = (u64, &Extent)>> = if window >= self.dirty.len() {
            Box::new(self.dirty.iter().map(|(&s, e)| (s, e)))
        } else {
            Box::new(self.age.iter().take(window).map(|&(_, s)| (s, &self.dirty[&s])))
        };
        for (first, e) in candidates {
            let mv = disk.move_ns(*head, e.target.cylinder, e.target.surface, Op::Write);
            // The move alone is a lower bound on the positioning time.
            if matches!(best, Some((b, _)) if mv >= b) {
                continue;
            }
            let cost = mv + disk.wait_for(at.saturating_add(mv), e.target.pos);
            if best.is_none_or(|(b, f)| cost < b || (cost == b && first < f)) {
                best = Some((cost, first));
            }
        }
        let Some((_, first)) = best else { return Ok(Breakdown::default()) };
        let e = self.take(first);
        let n = (e.end - first).min(MAX_DESTAGE_SECTORS);
        if first + n < e.end {
            self.put(first + n, Extent { target: disk.target(first + n)?, ..e });
        }
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        disk.layout().for_each_media_run(first, n, |r| runs.push(r))?;
        let (mut t, mut b) = (at, Breakdown::default());
        for r in &runs {
            let a = disk.arc(*head, t, r.cylinder, r.surface, r.first_sector, r.sectors, Op::Write);
            b.seek += a.move_ns;
            b.rotational_latency += a.wait_ns;
            b.transfer += a.transfer_ns;
            t = a.end;
            *head = a.head;
        }
        self.runs = runs;
        self.free_at = t;
        self.stats.destages += 1;
        self.stats.destaged_sectors += n;
        Ok(b)
    }

    /// Whether every sector of `lbn..end` is dirty (extents are merged, so one holds them all).
    fn contains(&self, lbn: u64, end: u64) -> bool {
        self.dirty.range(..=lbn).next_back().is_some_and(|(_, e)| e.end >= end)
    }

    /// Sectors of `lbn..end` that are not dirty yet.
    fn newly_dirty(&self, lbn: u64, end: u64) -> u64 {
        let overlap: u64 = self.dirty.range(..end).rev().take_while(|(_, e)| e.end > lbn).map(|(&s, e)| e.end.min(end) - s.max(lbn)).sum();
        (end - lbn) - overlap
    }

    /// Marks `lbn..end` dirty, merging it with the extents it overlaps or touches.
    fn insert(&mut self, disk: &Disk, lbn: u64, end: u64) -> Result<(), AccessError> {
        let touching: Vec<u64> = self.dirty.range(..=end).rev().take_while(|(_, e)| e.end >= lbn).map(|(&s, _)| s).collect();
        let (mut lo, mut hi) = (lbn, end);
        let mut target = None;
        let mut seq = self.next_seq;
        self.next_seq += 1;
        for s in touching {
            let e = self.take(s);
            if s <= lo {
                (lo, target) = (s, Some(e.target));
            }
            hi = hi.max(e.end);
            seq = seq.min(e.seq);
        }
        let target = match target {
            Some(t) => t,
            None => disk.target(lo)?,
        };
        self.put(lo, Extent { end: hi, target, seq });
        Ok(())
    }

    /// Forgets `lbn..end` (written to the media by a FUA write).
    fn remove(&mut self, disk: &Disk, lbn: u64, end: u64) -> Result<(), AccessError> {
        let overlapping: Vec<u64> = self.dirty.range(..end).rev().take_while(|(_, e)| e.end > lbn).map(|(&s, _)| s).collect();
        for s in overlapping {
            let e = self.take(s);
            if s < lbn {
                self.put(s, Extent { end: lbn, ..e });
            }
            if e.end > end {
                self.put(end, Extent { target: disk.target(end)?, ..e });
            }
        }
        Ok(())
    }

    /// Adds extent `start..e.end` to both indexes.
    fn put(&mut self, start: u64, e: Extent) {
        self.dirty_sectors += e.end - start;
        self.age.insert((e.seq, start));
        self.dirty.insert(start, e);
    }

    /// Removes the extent starting at `start` from both indexes.
    fn take(&mut self, start: u64) -> Extent {
        let e = self.dirty.remove(&start).expect("a listed extent");
        self.age.remove(&(e.seq, start));
        self.dirty_sectors -= e.end - start;
        e
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::spec::{WriteCacheMode, WriteCacheSpec};
    use crate::{library, Drive};

    /// The 2 TB desktop drive's media model with a write cache of `sectors` sectors in `mode`.
    fn disk(sectors: u64, mode: WriteCacheMode) -> Arc<Disk> {
        let mut spec = library::get("st2000dm006").unwrap().without_cache();
        spec.write_cache = Some(WriteCacheSpec { flush_overhead_ms: 2.0, ..WriteCacheSpec::new(sectors as f64 * 512.0 / 1_048_576.0, mode) });
        Arc::new(Disk::new(spec).unwrap())
    }

    fn write_back(sectors: u64) -> Drive {
        Drive::new(disk(sectors, WriteCacheMode::WriteBack))
    }

    const FAR: u64 = 3_900_000_000;

    #[test]
    fn a_write_completes_in_the_cache_and_a_read_of_it_hits() {
        let mut d = write_back(1 << 17);
        let w = d.serve(0, 1_000_000, 8, Op::Write).unwrap();
        assert!(w.cache_hit);
        assert_eq!(w.access.end, d.disk().bus_write_ns(8), "a write hit costs its bus transfer (no overheads in this spec)");
        assert_eq!((d.dirty_sectors(), d.dirty_extents()), (8, 1));
        let r = d.serve(w.access.end, 1_000_002, 4, Op::Read).unwrap();
        assert!(r.cache_hit, "a read of dirty sectors is answered from memory");
        let miss = d.serve(r.access.end, 5_000_000, 8, Op::Read).unwrap();
        assert!(!miss.cache_hit && miss.access.breakdown.seek > 0);
        assert_eq!(d.write_cache_stats().unwrap().read_hits, 1);
    }

    #[test]
    fn destages_take_the_nearest_dirty_run_first() {
        let disk = disk(1 << 17, WriteCacheMode::WriteBack);
        let mut wc = WriteCache::new(&disk, &disk.spec().write_cache.unwrap());
        // Heads at cylinder 0: a run there, one half-way in, one at the far end (inserted first).
        let middle = disk.capacity() / 2;
        for lbn in [FAR, middle, 64] {
            wc.insert(&disk, lbn, lbn + 8).unwrap();
        }
        let mut head = HeadState::default();
        let mut order = Vec::new();
        while wc.dirty_sectors() > 0 {
            let before: Vec<u64> = wc.dirty.keys().copied().collect();
            wc.destage_one(&disk, &mut head, wc.free_at).unwrap();
            order.extend(before.into_iter().filter(|s| !wc.dirty.contains_key(s)));
        }
        assert_eq!(order, vec![64, middle, FAR]);
        assert_eq!(wc.stats().destages, 3);
        // The age window: only the oldest (the far one) may go first.
        let mut oldest_only = WriteCache { window: Some(1), ..WriteCache::new(&disk, &disk.spec().write_cache.unwrap()) };
        for lbn in [FAR, middle, 64] {
            oldest_only.insert(&disk, lbn, lbn + 8).unwrap();
        }
        oldest_only.destage_one(&disk, &mut HeadState::default(), 0).unwrap();
        assert!(!oldest_only.dirty.contains_key(&FAR) && oldest_only.dirty.contains_key(&64));
    }

    #[test]
    fn a_write_into_a_full_cache_waits_for_a_destage() {
        let mut d = write_back(16);
        let mut t = d.serve(0, 1000, 8, Op::Write).unwrap().access.end;
        t = d.serve(t, 2_000_000_000, 8, Op::Write).unwrap().access.end;
        // Rewriting dirty sectors needs no room.
        let again = d.serve(t, 1000, 8, Op::Write).unwrap();
        assert_eq!(again.access.end - t, d.disk().bus_write_ns(8));
        let stalled = d.serve(again.access.end, 3_000_000_000, 8, Op::Write).unwrap();
        assert!(stalled.cache_hit);
        assert!(stalled.access.end - stalled.access.start > 1_000_000, "waited for a destage: {:?}", stalled.access);
        let s = d.write_cache_stats().unwrap();
        assert_eq!((s.stalled_writes, s.absorbed_writes), (1, 4));
        assert!(d.dirty_sectors() <= 16);
        // A write larger than the whole cache goes to the media.
        let big = d.serve(stalled.access.end, 10_000, 32, Op::Write).unwrap();
        assert!(!big.cache_hit);
    }

    /// A flush after `n` random writes at `seed`'s LBNs, back to back: its cost, ns.
    fn flush_after(n: u64, seed: u64) -> (SimTime, Drive) {
        let mut d = write_back(1 << 17);
        let mut t = 0;
        let mut x = seed;
        for _ in 0..n {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            t = d.serve(t, (x >> 33) % (d.disk().capacity() / 8) * 8, 8, Op::Write).unwrap().access.end;
        }
        let f = d.flush(t).unwrap();
        assert_eq!(f.access.breakdown.total(), f.access.end - t);
        (f.access.end - t, d)
    }

    #[test]
    fn a_flush_costs_more_the_more_is_dirty_and_leaves_nothing() {
        let (empty, _) = flush_after(0, 1);
        assert_eq!(empty, 2_000_000, "nothing dirty: the flush overhead alone");
        let costs: Vec<SimTime> = [1, 8, 32].iter().map(|&n| flush_after(n, 1).0).collect();
        assert!(costs[0] < costs[1] && costs[1] < costs[2], "{costs:?}");
        // Each dirty block costs a positioning at least: more than a millisecond apiece.
        assert!(costs[2] > 32 * 1_000_000, "{costs:?}");
        let (_, d) = flush_after(32, 1);
        assert_eq!(d.dirty_sectors(), 0);
        assert_eq!(d.write_cache_stats().unwrap().flushes, 1);
    }

    #[test]
    fn a_fua_write_goes_to_the_media_and_cleans_its_sectors() {
        let mut d = write_back(1 << 17);
        let t = d.serve(0, 5000, 16, Op::Write).unwrap().access.end;
        let fua = d.serve_fua(t, 5004, 4).unwrap();
        assert!(!fua.cache_hit);
        assert!(fua.access.media_end > fua.access.media_start, "written to the media: {:?}", fua.access);
        // The dirty run is split around the FUA write's sectors.
        assert_eq!((d.dirty_sectors(), d.dirty_extents()), (12, 2));
        assert_eq!(d.write_cache_stats().unwrap().media_writes, 1);
    }

    #[test]
    fn write_through_is_the_drive_without_a_write_cache() {
        let plain = Arc::new(Disk::new(library::get("st2000dm006").unwrap().without_cache()).unwrap());
        let mut a = Drive::new(plain);
        let mut b = Drive::new(disk(1 << 17, WriteCacheMode::WriteThrough));
        assert!(!b.has_write_back_cache());
        let mut t = 0;
        for i in 0..50u64 {
            let (lbn, op) = ((i * 77_777_777) % 3_900_000_000, if i % 3 == 0 { Op::Write } else { Op::Read });
            let (x, y) = (a.serve(t, lbn, 8, op).unwrap(), if i % 5 == 0 && op == Op::Write { b.serve_fua(t, lbn, 8).unwrap() } else { b.serve(t, lbn, 8, op).unwrap() });
            assert_eq!(x, y, "request {i}");
            t = x.access.end;
        }
        // FLUSH on a drive that holds no writes: its overhead only.
        assert_eq!(b.flush(t).unwrap().access.end, t + 2_000_000);
        assert_eq!(a.flush(t).unwrap().access.end, t);
    }
}
