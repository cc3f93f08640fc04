//! Fast-forward: a run of sector boundaries taken at once, with the result of taking them one by one.
//!
//! The media process steps sector by sector, and most boundaries change nothing but the
//! segment's end (a read keeping the next sector) or nothing at all (the head passing sectors it
//! may not use, waiting for the wanted one to come round or for its data to arrive over a slow
//! bus). Taken one by one, each is an event. The functions here count how many boundaries come
//! before the first that could change anything else, and move the access past them at once.
//!
//! | case | taken by | up to |
//! |---|---|---|
//! | a read keeping consecutive sectors | [`Buffer::fast_forward`] (a) | the first threshold: request end, read-ahead end, watermark, zero-latency run, track end, segment room |
//! | a read passing sectors it does not keep | [`Buffer::fast_forward`] (b) | the first sector it keeps: [`first_kept_piece`] (closed form) or [`idle_run`] (a walk, while the bus moves data) |
//! | a write passing sectors it may not write | [`Buffer::skip_unwritable_sectors`] | [`contiguous_write_wait`] (closed form) or [`idle_run`] |
//! | a write-back writing consecutive sectors | [`Buffer::fast_forward_write_back`] | the segment's data end, track end, zero-latency run |
//!
//! None goes past `limit` (the next event elsewhere) or takes a boundary the host interface could
//! see. `Buffer::fast_forward` (the field) turns them off; the tests here serve request streams
//! both ways and require the same outcome for every request, and in test builds each closed form
//! is checked against the walk it replaces.

use super::host_interface::{Bus, Chunk, SegOut};
use super::media::Phase;
use super::segments::Hit;
use super::{Buffer, Owner, NONE};
use crate::spec::ReadAhead;

/// Sector boundaries that may be taken at once: from boundary `i` (at `base + ⌊i·rev/spt⌋`,
/// ending sector `s` of a track of `spt`), at most `by_time` of them (the next event elsewhere),
/// while the bus moves `chunk` (if any).
#[derive(Debug, Clone, Copy)]
struct IdleRun {
    base: u64,
    i: u64,
    s: u32,
    spt: u64,
    rev: u64,
    by_time: u64,
    chunk: Option<Chunk>,
}

/// How many boundaries of `run` pass sectors that change nothing, before the first sector the
/// head acts on. `needed(x)` says when sector `x` would be acted on: None never (while the run
/// lasts), `Some(n)` once the bus has moved `n` sectors of the chunk (0: now). A sector is judged
/// at the boundary where it starts, as `Buffer::boundary` judges it. The boundaries are walked in
/// time order; after a revolution with nothing to act on, the walk jumps to the instant the bus
/// has moved what the least demanding sector needs, and that sector comes round within the next
/// revolution. So a head waiting many revolutions for a slow bus costs at most two revolutions of
/// this walk instead of a step per sector passed. With nothing to act on at all, at most a
/// revolution is taken. None when fewer than two boundaries would be taken.
fn idle_run(run: IdleRun, needed: impl Fn(u32) -> Option<u64>) -> Option<u64> {
    let IdleRun { base, i, s, spt, rev, by_time, chunk } = run;
    let span = |m: u64| (m >= 2).then_some(m);
    // Boundary j = i + k − 1 starts sector s + k, at base + q, q = ⌊j·rev/spt⌋ (remainder r).
    let at_boundary = |j: u64| {
        let p = u128::from(j) * u128::from(rev);
        ((p / u128::from(spt)) as u64, (p % u128::from(spt)) as u64)
    };
    let (step_q, step_r) = (rev / spt, rev % spt);
    let mut k = 1u64;
    let (mut q, mut r) = at_boundary(i);
    let mut x = (u64::from(s) + 1) % spt;
    let mut moved = 0;
    let mut next_move = chunk.and_then(|c| c.time_moved(1));
    let mut least_need = u64::MAX;
    let mut jumped = false;
    let mut walked = 0u64;
    loop {
        if k > by_time {
            return span(by_time);
        }
        let t = base + q;
        if let (Some(c), Some(at)) = (chunk, next_move) {
            if t >= at {
                moved = c.moved(t);
                next_move = c.time_moved(moved + 1);
            }
        }
        if let Some(n) = needed(x as u32) {
            if n <= moved {
                return span(k);
            }
            least_need = least_need.min(n);
        }
        walked += 1;
        if walked == spt {
            // A revolution with nothing to act on: nothing will be until the bus has moved
            // `least_need` sectors, and then that sector comes round within a revolution.
            let Some(at) = chunk.and_then(|c| c.time_moved(least_need)).filter(|_| !jumped) else {
                return span(k.min(by_time));
            };
            jumped = true;
            walked = 0;
            let j_now = i + k - 1;
            // ⌊j·rev/spt⌋ ≥ at − base ⟺ j ≥ ⌈(at − base)·spt/rev⌉.
            let j_at = (u128::from(at.saturating_sub(base)) * u128::from(spt)).div_ceil(u128::from(rev));
            let j = u128::from(j_now + 1).max(j_at).min(u128::from(i.saturating_add(by_time))) as u64;
            k = j - i + 1;
            (q, r) = at_boundary(j);
            x = (u64::from(s) + k) % spt;
            continue;
        }
        k += 1;
        q += step_q;
        r += step_r;
        if r >= spt {
            r -= spt;
            q += 1;
        }
        x = if x + 1 == spt { 0 } else { x + 1 };
    }
}

/// [`idle_run`] for a write on a track whose sector `x` holds LBN `first_lbn + x`, in closed
/// form: the head may write now the LBNs `writable` (from the next to write to the segment's
/// data end), one run of sectors; the sectors past it become writable as the request's data
/// arrives over the bus (`outblkno`: the LBN the chunk under way starts at). When the bus is no
/// faster than the media (a sector's data takes at least a sector's time), a sector of that second
/// run that is not writable when the head reaches it has every later one of the run unwritable
/// too on that revolution, so only the run's first sector need be checked, once on the first
/// revolution and then at its first pass after its data is in. None (walk instead) when the bus
/// is faster.
#[allow(clippy::option_option)]
fn contiguous_write_wait(run: IdleRun, first_lbn: u64, writable: (u64, u64), outblkno: Option<u64>) -> Option<Option<u64>> {
    let IdleRun { base, i, s, spt, rev, by_time, chunk } = run;
    let x1 = (u64::from(s) + 1) % spt;
    // k of the first boundary that starts sector x (the walk's k).
    let first_visit = |x: u64| (x + spt - x1) % spt + 1;
    let sector = |lbn: u64| lbn.saturating_sub(first_lbn).min(spt);
    let (lo, hi) = writable;
    let (xa, xb) = (sector(lo), sector(hi.max(lo)));
    let mut best = (xa < xb).then(|| if (xa..xb).contains(&x1) { 1 } else { first_visit(xa) });
    if let (Some(c), Some(outblkno)) = (chunk, outblkno) {
        if rev.div_ceil(spt) > c.bt {
            return None;
        }
        if xb < spt {
            let need = |x: u64| (first_lbn + x + 1).saturating_sub(outblkno);
            let y = x1.max(xb);
            let ky = first_visit(y);
            let t_y = base + (i + ky - 1) * rev / spt;
            let k = if c.moved(t_y) >= need(y) {
                Some(ky)
            } else {
                let j0 = if y == xb { i + ky - 1 + spt } else { i + first_visit(xb) - 1 };
                c.time_moved(need(xb)).map(|at| first_pass(base, rev, spt, j0, at).saturating_sub(i).saturating_add(1))
            };
            if let Some(k) = k {
                best = Some(best.map_or(k, |b| b.min(k)));
            }
        }
    }
    let m = best.unwrap_or(spt).min(by_time);
    Some((m >= 2).then_some(m))
}

/// [`idle_run`] with no bus to wait for, on a track whose sector `x` holds LBN `first_lbn + x`,
/// when whether the head acts on a sector (`acts(x)`) changes only at the LBNs `thresholds`
/// (each rule compares the LBN with one of them): the track falls into runs of sectors between
/// thresholds, `acts` is asked once per run, and the first sector of an acting run to come under
/// the head ends the wait.
fn first_kept_piece<const N: usize>(run: IdleRun, first_lbn: u64, thresholds: [u64; N], acts: impl Fn(u32) -> bool) -> Option<u64> {
    let IdleRun { s, spt, by_time, .. } = run;
    let x1 = (u64::from(s) + 1) % spt;
    let mut cuts = [0u64; N];
    for (cut, lbn) in cuts.iter_mut().zip(thresholds) {
        *cut = lbn.saturating_sub(first_lbn).min(spt);
    }
    cuts.sort_unstable();
    let mut best: Option<u64> = None;
    let mut from = 0;
    for to in cuts.into_iter().chain([spt]) {
        if to > from && acts(from as u32) {
            let k = if (from..to).contains(&x1) { 1 } else { (from + spt - x1) % spt + 1 };
            best = Some(best.map_or(k, |b| b.min(k)));
        }
        from = from.max(to);
    }
    let m = best.unwrap_or(spt).min(by_time);
    (m >= 2).then_some(m)
}

/// The last boundary `j` (at `base + ⌊j·rev/spt⌋`) before `limit`, for `limit > base`: the
/// boundaries `j` with `⌊j·rev/spt⌋ < limit − base` are those below `⌈(limit − base)·spt/rev⌉`.
/// In `u64` when the product fits (always, for real drives and runs), as `u128` division is a
/// library call.
fn last_boundary_before(base: u64, rev: u64, spt: u64, limit: u64) -> u64 {
    let d = limit - base;
    match d.checked_mul(spt) {
        Some(p) => p.div_ceil(rev) - 1,
        None => ((u128::from(d) * u128::from(spt)).div_ceil(u128::from(rev)) - 1).min(u128::from(u64::MAX)) as u64,
    }
}

/// The first boundary `j ≥ j0` with `j ≡ j0 (mod spt)` (the same sector on a later revolution)
/// at or after `at`, boundary `j` being at `base + ⌊j·rev/spt⌋`.
fn first_pass(base: u64, rev: u64, spt: u64, j0: u64, at: u64) -> u64 {
    if at <= base {
        return j0;
    }
    // ⌊j·rev/spt⌋ ≥ at − base ⟺ j ≥ ⌈(at − base)·spt/rev⌉.
    let j_min = (u128::from(at - base) * u128::from(spt)).div_ceil(u128::from(rev));
    let j0 = u128::from(j0);
    let j = if j_min <= j0 { j0 } else { j0 + (j_min - j0).div_ceil(u128::from(spt)) * u128::from(spt) };
    j.min(u128::from(u64::MAX)) as u64
}

impl Buffer {
    /// Takes the coming sector boundaries of a read at once while each of them would only (a)
    /// append the sector just read to the segment, with no threshold reached (request end,
    /// read-ahead end, watermark, zero-latency run, track end, segment room), or (b) let a sector
    /// pass that the read does not keep. Stops before `limit` and whenever the host interface
    /// could be involved, so the result is exactly that of taking the boundaries one by one.
    pub(super) fn fast_forward(&mut self, limit: u64) {
        let Some(h) = self.hda.as_ref() else { return };
        if !h.read {
            self.fast_forward_write_back(limit);
            self.skip_unwritable_sectors(limit);
            return;
        }
        let Phase::Rot { base, i, prev: Some((s, valid)), .. } = h.phase else { return };
        // The boundary just taken may itself have set the host interface going. While a read's
        // data moves over the bus, a boundary depends on the bus only through how much room the
        // transfer has freed in the segment (`block_available`); the bounds below assume none,
        // which is exact for every sector they let through.
        let (limit, moving) = match self.req.as_ref().map(|r| (r.bus, r.read)) {
            Some((Bus::Outwait, _) | (Bus::Xfer { .. }, false)) => return,
            Some((Bus::Xfer { end, .. }, true)) => (limit.min(end), true),
            Some((Bus::Msg { at, .. }, _)) => (limit.min(at), false),
            Some((Bus::Idle, _)) | None => (limit, false),
        };
        let rev = self.p.rev;
        let spt = u64::from(h.track.spt);
        if h.track.boundary_time(base, i) >= limit {
            return;
        }
        // Boundaries j ≥ i with base + ⌊j·rev/spt⌋ < limit.
        let last_j = last_boundary_before(base, rev, spt, limit);
        let by_time = (last_j - i).saturating_add(1);
        let (outblkno, size_limited, watching) = match (&self.req, h.owner) {
            (Some(r), Owner::Req) => (r.outblkno, !r.completion_sent, (r.seg_out == SegOut::Idle).then_some(r.watermark)),
            _ => (0, false, None),
        };
        let size = self.p.seg_size;
        let seg = &self.segs[h.seg];
        let tr = &h.track;
        let l0 = tr.lbn(s);
        if valid && l0 == seg.end && tr.lbns.is_empty() {
            // (a) A contiguous run: boundary i + k leaves the segment ending at l0 + k + 1.
            let mut emax = tr.next - 1;
            if h.immedstart > l0 {
                emax = emax.min(h.immedstart - 1);
            }
            if h.bg {
                emax = emax.min(seg.max_ra.saturating_sub(1));
            } else {
                emax = emax.min(h.req_end.saturating_sub(1));
                if let Some(wm) = watching {
                    emax = emax.min((outblkno + wm).saturating_sub(1));
                }
            }
            if size_limited {
                emax = emax.min((outblkno + size).saturating_sub(1));
            }
            if emax <= l0 {
                return;
            }
            let m = (emax - l0).min(by_time);
            if m < 2 {
                return;
            }
            let end = l0 + m;
            let h = self.hda.as_mut().expect("access");
            let seg = &mut self.segs[h.seg];
            seg.end = end;
            seg.start = seg.start.max(end.saturating_sub(size));
            let x = s + m as u32;
            h.phase = Phase::Rot { base, i: i + m, prev: Some((x, true)), next: (x + 1) % h.track.spt };
            return;
        }
        // (b) Sectors that pass without effect, up to the first that the read would keep. While
        // the bus empties the segment, a sector refused for want of room is kept once the bus has
        // moved enough of the chunk out, so its first pass after that instant is found instead.
        let first = seg.end;
        let goal = if h.bg { seg.max_ra } else { h.req_end };
        let last = goal.min(tr.next);
        let p_any = self.p.ra_mode != ReadAhead::None;
        let any_free = self.p.read_any_free;
        // `block_available` without the bus: None if the sector is refused whatever the bus does,
        // else how many sectors of the chunk under way must have left the segment first.
        let room_needed = |cur: u64| {
            if cur == NONE || (cur < seg.end && cur >= seg.start) || (cur < seg.start && (!any_free || seg.end != seg.start)) {
                None
            } else if size_limited && cur >= outblkno + size {
                Some(cur - (outblkno + size) + 1)
            } else {
                Some(0)
            }
        };
        let idle = |x: u32, valid: bool| {
            let cur = tr.lbn(x);
            if !valid {
                return true;
            }
            if cur == first || cur < seg.start {
                return false;
            }
            if h.immed && h.immedstart >= tr.next {
                return if cur >= last { !(p_any && cur < h.req_start) } else { cur <= first };
            }
            !((cur == h.immedend && (cur < last || cur < h.req_start)) || (cur > h.immedend && cur < last))
        };
        if !idle(s, valid) {
            return;
        }
        let chunk = self.req.as_ref().and_then(|r| r.chunk_under_way(self.p.bt_read)).filter(|_| moving);
        let kept_after = |x: u32| room_needed(tr.lbn(x)).filter(|_| !idle(x, true));
        let run = IdleRun { base, i, s, spt, rev, by_time, chunk };
        let m = if chunk.is_none() && tr.lbns.is_empty() {
            // Every rule above compares the sector's LBN with one of these.
            let size_end = if size_limited { outblkno + size } else { seg.start };
            let (e, ie) = (seg.end, h.immedend);
            let thresholds = [seg.start, e, e.saturating_add(1), size_end, last, h.req_start, ie, ie.saturating_add(1)];
            let m = first_kept_piece(run, tr.base, thresholds, |x| kept_after(x) == Some(0));
            // Tests check the closed form against the walk it replaces.
            #[cfg(test)]
            assert_eq!(m, idle_run(run, kept_after), "read wait: closed form and walk differ");
            m
        } else {
            idle_run(run, kept_after)
        };
        let Some(m) = m else { return };
        let x = ((u64::from(s) + m) % spt) as u32;
        let moved = chunk.map_or(0, |c| c.moved(base + (i + m - 1) * rev / spt));
        let v = room_needed(tr.lbn(x)).is_some_and(|need| need <= moved);
        let h = self.hda.as_mut().expect("access");
        h.phase = Phase::Rot { base, i: i + m, prev: Some((x, v)), next: ((u64::from(x) + 1) % spt) as u32 };
    }

    /// Takes at once the coming sector boundaries of a write (the request's own, or a
    /// write-back) at which the head passes sectors it may not write: the sector to write next
    /// comes round once a revolution, and on a slow bus its data arrives a sector at a time. The
    /// boundaries taken each change nothing but, when the request's data is arriving into the
    /// segment, how much of it is there, which is brought up to date at the last of them.
    fn skip_unwritable_sectors(&mut self, limit: u64) {
        let Some(h) = self.hda.as_ref() else { return };
        if h.read {
            return;
        }
        let Phase::Rot { base, i, prev: Some((s, false)), .. } = h.phase else { return };
        // Data arriving into this segment over the bus (`update_outbuffer`).
        let (limit, arriving) = match self.req.as_ref() {
            None => (limit, None),
            Some(r) => {
                let feeds = !r.read && (r.hda || (r.hit == Hit::Append && r.seg == Some(h.seg)));
                match r.bus {
                    Bus::Outwait => return,
                    Bus::Xfer { end, .. } if feeds => (limit.min(end), r.chunk_under_way(self.p.bt_write).map(|c| (c, r.outblkno))),
                    Bus::Msg { at, .. } => (limit.min(at), None),
                    Bus::Xfer { .. } | Bus::Idle => (limit, None),
                }
            }
        };
        let seg = &self.segs[h.seg];
        // DiskSim's extra write disconnect asks for a fill level of the segment, whose start moves
        // with its end: left to the step-by-step path while data arrives.
        let fill_rule = h.owner == Owner::Req && self.p.extra.is_some();
        if fill_rule && arriving.is_some() {
            return;
        }
        let fill_ok = !fill_rule || {
            let have = seg.end - seg.start;
            if h.req_len < 45 {
                have >= h.req_len.min(10)
            } else {
                have >= 15
            }
        };
        let rev = self.p.rev;
        let tr = &h.track;
        let spt = u64::from(tr.spt);
        if tr.boundary_time(base, i) >= limit {
            return;
        }
        let last_j = last_boundary_before(base, rev, spt, limit);
        let by_time = (last_j - i).saturating_add(1);
        let inblkno = h.inblkno;
        // `block_available` for a write: None if the sector is never writable meanwhile, else how
        // many sectors of the chunk under way must have arrived first.
        let arrival_needed = |x: u32| {
            let cur = tr.lbn(x);
            if !fill_ok || cur == NONE || cur < inblkno {
                None
            } else if cur < seg.end {
                Some(0)
            } else {
                arriving.map(|(_, outblkno)| (cur + 1).saturating_sub(outblkno))
            }
        };
        let run = IdleRun { base, i, s, spt, rev, by_time, chunk: arriving.map(|(c, _)| c) };
        let closed_form = if tr.lbns.is_empty() {
            let writable = if fill_ok { (inblkno, seg.end) } else { (0, 0) };
            contiguous_write_wait(run, tr.base, writable, arriving.filter(|_| fill_ok).map(|(_, outblkno)| outblkno))
        } else {
            None
        };
        // Tests check the closed form against the walk it replaces.
        #[cfg(test)]
        if let Some(m) = closed_form {
            assert_eq!(m, idle_run(run, arrival_needed), "write wait: closed form and walk differ");
        }
        let Some(m) = closed_form.unwrap_or_else(|| idle_run(run, arrival_needed)) else { return };
        let t_last = base + (i + m - 1) * rev / spt;
        let x = ((u64::from(s) + m) % spt) as u32;
        let cur = tr.lbn(x);
        let seg_id = h.seg;
        self.update_outbuffer(t_last);
        let size = self.p.seg_size;
        let seg = &mut self.segs[seg_id];
        seg.start = seg.start.max(seg.end.saturating_sub(size));
        let v = fill_ok && cur != NONE && cur >= inblkno && cur < seg.end;
        let h = self.hda.as_mut().expect("access");
        h.phase = Phase::Rot { base, i: i + m, prev: Some((x, v)), next: ((u64::from(x) + 1) % spt) as u32 };
    }

    /// Takes the coming sector boundaries of a write-back at once while each of them only writes
    /// the next sector of the segment, with no threshold reached (end of the segment's data,
    /// track end, zero-latency run). Only for a write-back that no request holds and whose
    /// segment takes no data from the host meanwhile, so nothing else can see the steps.
    fn fast_forward_write_back(&mut self, limit: u64) {
        let Some(h) = self.hda.as_ref() else { return };
        if h.owner != Owner::Destage || !h.bg || h.immed || !h.track.lbns.is_empty() {
            return;
        }
        let Phase::Rot { base, i, prev: Some((s, true)), .. } = h.phase else { return };
        let limit = match self.req.as_ref() {
            None => limit,
            // `update_outbuffer` would add the request's arriving data to this segment.
            Some(r) if !r.read && (r.hda || (r.hit == Hit::Append && r.seg == Some(h.seg))) => return,
            Some(r) => match r.bus {
                Bus::Msg { at, .. } => limit.min(at),
                _ => limit,
            },
        };
        let tr = &h.track;
        let w = tr.base + u64::from(s);
        if w != h.inblkno {
            return;
        }
        let rev = self.p.rev;
        let spt = u64::from(tr.spt);
        if tr.boundary_time(base, i) >= limit {
            return;
        }
        // Boundaries j ≥ i with base + ⌊j·rev/spt⌋ < limit.
        let last_j = last_boundary_before(base, rev, spt, limit);
        let by_time = (last_j - i).saturating_add(1);
        // Boundary i + k writes LBN w + k and leaves the next one to write at w + k + 1, which
        // must stay short of the segment's end (write-back done), the track's end (seek) and
        // the zero-latency run's start.
        let seg = &self.segs[h.seg];
        let mut stop = seg.end.min(tr.next);
        if h.immedstart > w {
            stop = stop.min(h.immedstart);
        }
        if stop <= w + 1 {
            return;
        }
        let m = (stop - 1 - w).min(by_time);
        if m < 2 {
            return;
        }
        let size = self.p.seg_size;
        let h = self.hda.as_mut().expect("access");
        let seg = &mut self.segs[h.seg];
        seg.start = seg.start.max(seg.end.saturating_sub(size));
        h.inblkno = w + m;
        let x = s + m as u32;
        h.phase = Phase::Rot { base, i: i + m, prev: Some((x, true)), next: (x + 1) % h.track.spt };
    }
}

#[cfg(test)]
mod tests {
    use crate::disk::{Disk, Op};
    use crate::drive::buffer::tests::{cached, fast_forward_changes_nothing, SLOW_BUS_DISK};
    use crate::drive::buffer::{Buffer, Outcome};
    use crate::layout::Pbn;
    use crate::library;

    #[test]
    fn fast_forward_matches_sector_by_sector_on_a_slow_bus() {
        let base = crate::DiskSpec::from_toml_str(SLOW_BUS_DISK, "slow-bus.toml").unwrap();
        let mut variants = vec![base.clone()];
        let mut v = base.clone();
        v.controller.write_back = true;
        variants.push(v);
        let mut v = base.clone();
        v.controller.hold_bus_read = true;
        v.controller.hold_bus_write = true;
        v.cache.zero_latency_reads = false;
        v.cache.zero_latency_writes = false;
        variants.push(v);
        // Chunks longer than a revolution: the head meets a sector again while its data arrives.
        let mut v = base.clone();
        v.cache.segment_sectors = 200;
        variants.push(v);
        let mut v = base.clone();
        v.controller.bus_sector_ms = 0.004;
        v.cache.segment_sectors = 32;
        variants.push(v);
        for (k, spec) in variants.into_iter().enumerate() {
            let disk = Disk::new(spec).unwrap();
            for seed in 0..4 {
                fast_forward_changes_nothing(&disk, 200, 400, 17 + 4 * k as u64 + seed);
            }
        }
    }

    /// Requests over remapped defects, whose spares are on the same track, on another surface
    /// of the cylinder and many cylinders away: the fast-forwards change nothing, the model
    /// neither stalls nor runs away, and the head goes to the spare and back (a request over
    /// the remapped LBN takes longer than the same request where nothing is remapped).
    #[test]
    fn fast_forward_matches_sector_by_sector_over_remapped_defects() {
        let mut base = crate::DiskSpec::from_toml_str(SLOW_BUS_DISK, "slow-bus.toml").unwrap();
        base.cache.segment_sectors = 64;
        // Without zero latency, so that a spare just before the sector it stands for still costs
        // time (with it, the head takes whichever comes first).
        base.cache.zero_latency_reads = false;
        base.cache.zero_latency_writes = false;
        // Zone 2 (cylinders 66–97, 333 sectors a track, 4 spares at the end of each cylinder):
        // zone slots 1328–1331 are cylinder 66's spares (surface 3, sectors 329–332).
        let mut remapped = base.clone();
        remapped.zones[2].defects = vec![[1000, 1331], [10, 1328], [5, 20 * 1332 + 1330]];
        let plain_disk = Disk::new(base).unwrap();
        for write_back in [false, true] {
            let mut spec = remapped.clone();
            spec.controller.write_back = write_back;
            let disk = Disk::new(spec).unwrap();
            // The LBNs the defects moved, found where their spares are.
            let spare = |zone_slot: u64| Pbn { cylinder: 66 + (zone_slot / 333 / 4) as u32, surface: (zone_slot / 333 % 4) as u32, sector: (zone_slot % 333) as u32 };
            let moved: Vec<u64> = [1331, 1328, 20 * 1332 + 1330].iter().map(|&z| disk.layout().pbn_to_lbn(spare(z)).unwrap()).collect();
            let mut fast = Buffer::new(&disk);
            let mut slow = Buffer::new(&disk);
            slow.fast_forward = false;
            let mut t = 0u64;
            for (k, &l) in moved.iter().enumerate() {
                for (back, n) in [(0, 1), (1, 2), (3, 8), (6, 24), (20, 60)] {
                    for op in [Op::Read, Op::Write] {
                        let lbn = l - back;
                        let a = fast.serve(&disk, t, lbn, n, op).unwrap();
                        let b = slow.serve(&disk, t, lbn, n, op).unwrap();
                        let key = |o: &Outcome| (o.end_ps, o.overhead_ps, o.seek_ps, o.latency_ps, o.media, o.hit);
                        assert_eq!(key(&a), key(&b), "defect {k}: {op:?} LBN {lbn} + {n} at {t} ps");
                        // Alone on an idle drive, the same request where nothing is remapped is
                        // quicker: it does not go to the spare and back.
                        if back > 0 && n > back && !write_back {
                            let mut alone = Buffer::new(&disk);
                            let mut plain = Buffer::new(&plain_disk);
                            let x = alone.serve(&disk, 0, lbn, n, op).unwrap();
                            let y = plain.serve(&plain_disk, 0, lbn, n, op).unwrap();
                            assert!(x.end_ps > y.end_ps, "defect {k}: {op:?} LBN {lbn} + {n}: {} ps, without the defect {} ps", x.end_ps, y.end_ps);
                        }
                        t = a.end_ps + 2_000_000_000;
                    }
                }
            }
        }
    }

    #[test]
    fn fast_forward_matches_sector_by_sector_on_the_built_in_drives() {
        for name in library::names() {
            let disk = cached(name);
            fast_forward_changes_nothing(&disk, 300, 600, 5);
        }
    }
}
