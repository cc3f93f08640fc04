//! The log itself: segments on the disk, the segment being filled in memory, the segment usage
//! table, and the block map (on the layout layer's [`Journal`]) that says where every logical
//! block lives. Everything here is instantaneous state; the policy ([`super::policy`]) turns
//! what it does into timed disk I/O.
//!
//! A segment write is the durability point: the blocks go to a free segment with their summary,
//! then the map records every block's new home and the journal commits. A crash loses the
//! segment being filled (never acknowledged) and nothing else; recovery reads the map back from
//! the journal, rebuilds the usage table from it, and checks every segment that holds live data
//! against its on-disk summary.

use std::collections::{BTreeSet, HashMap};

use super::error::LfsError;
use super::summary::{SegmentSummary, HOLE};
use super::LfsConfig;
use crate::layout::journal::{DirtyRule, Journal, MapOp, MemStorage};
use crate::layout::map::{BlockMap, BlockState, Candidates, MapConfig, PhysRange, WriteRequest};

type Result<T> = std::result::Result<T, LfsError>;

/// What is on the platters of the partition: each block's contents (a value standing for its
/// data) and each segment's summary block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    /// Contents of every block of the partition, by block index.
    pub data: Vec<u64>,
    /// Each segment's summary bytes, once written.
    pub summaries: Vec<Option<Vec<u8>>>,
}

/// Where a read finds its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// In the segment being filled (memory).
    Open(u64),
    /// On the disk at sector `lbn`, holding `value`.
    Disk {
        /// First sector of the block.
        lbn: u64,
        /// Its contents.
        value: u64,
    },
    /// Never written, or deleted.
    Unmapped,
}

/// One segment write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flushed {
    /// Segment writes before it (since the log was created or recovered): names this one.
    pub seq: u64,
    /// The segment written.
    pub segment: u32,
    /// Data slots used.
    pub blocks: u32,
    /// Data slots the write covers from the segment's start: `blocks` and the holes among them
    /// (blocks rewritten or deleted while the segment was being filled).
    pub extent: u32,
    /// Of them, blocks the cleaner moved there.
    pub cleaned: u32,
}

/// What the log did to its blocks, in order, for a caller that keeps the real bytes (the block
/// server): recorded only once [`Log::record_events`] asks for it.
///
/// | event | the bytes of `logical` |
/// |---|---|
/// | `Appended { from: None }` | the workload's write: they come with the request |
/// | `Appended { from: Some(lbn) }` | the cleaner moved the block: its current bytes, found at `lbn` (or wherever the caller still holds them) |
/// | `Sealed` | every block of the segment being filled now belongs to segment write `seq`, whose bytes go to `segment` with `summary` as its last block |
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEvent {
    /// `logical` was put in the segment being filled.
    Appended {
        /// The logical block.
        logical: u64,
        /// Where the cleaner moved it from (`None`: a workload write).
        from: Option<u64>,
    },
    /// The segment being filled was handed to segment write `seq` and the map committed.
    Sealed {
        /// The write ([`Flushed::seq`]).
        seq: u64,
        /// The segment it goes to.
        segment: u32,
        /// The summary's bytes ([`SegmentSummary::encode`]); its slots name the blocks.
        summary: Vec<u8>,
        /// Bytes of the journal before the write's commit: all a crash may keep while the write
        /// is not on the media.
        journal_before: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    logical: u64,
    value: u64,
    cleaned: bool,
}

/// The segment being filled.
#[derive(Debug, Clone, Default)]
struct OpenSegment {
    slots: Vec<Option<Slot>>,
    index: HashMap<u64, usize>,
    /// Deleted blocks whose on-disk copy the next segment write unmaps.
    deletes: BTreeSet<u64>,
}

/// What recovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Journal bytes dropped as a torn tail.
    pub dropped_bytes: u64,
    /// Segments holding live data, each checked against its summary.
    pub segments_checked: u32,
    /// Live blocks.
    pub live_blocks: u64,
}

/// The log-structured layout's state: see the module docs.
pub struct Log {
    cfg: LfsConfig,
    map: BlockMap,
    journal: Journal<MemStorage>,
    media: Media,
    /// The usage table: live blocks of each segment as the map has them.
    durable_live: Vec<u32>,
    /// Live blocks of each segment less those superseded in memory (rewritten or deleted in the
    /// segment being filled): what cleaning it would have to move.
    live: Vec<u32>,
    /// Log clock at each segment's last write.
    written_at: Vec<u64>,
    /// Blocks appended to the log so far.
    clock: u64,
    open: OpenSegment,
    free: u32,
    cursor: u32,
    flushes: u64,
    /// What happened to the blocks, when a caller asked ([`Log::record_events`]).
    events: Option<Vec<LogEvent>>,
    /// Checkpoints wait for [`Log::checkpoint_if_due`] (a caller that writes the segments after
    /// the map commits must checkpoint only when every segment write is on the media).
    checkpoint_due: Option<bool>,
    /// Free segments set aside as cleaning destinations ([`Log::reserve_segment`]): segment
    /// writes pass them over and [`Log::free_segments`] does not count them.
    reserved: BTreeSet<u32>,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log").field("free", &self.free).field("clock", &self.clock).field("open", &self.open.slots.len()).finish_non_exhaustive()
    }
}

impl Log {
    /// An empty log on the partition `cfg` describes.
    ///
    /// # Errors
    /// [`LfsError::Config`] for a bad configuration ([`LfsConfig::validate`]), and whatever the
    /// journal refuses.
    pub fn create(cfg: LfsConfig) -> Result<Self> {
        cfg.validate()?;
        let mut map = BlockMap::new(cfg.map_config())?;
        for s in 0..cfg.segments {
            map.pin(PhysRange::new(cfg.summary_lbn(s), cfg.block_sectors))?;
        }
        let journal = Journal::create(MemStorage::new(), &map)?;
        let blocks = cfg.partition_blocks() as usize;
        let media = Media { data: vec![0; blocks], summaries: vec![None; cfg.segments as usize] };
        let n = cfg.segments as usize;
        Ok(Self { free: cfg.segments, cfg, map, journal, media, durable_live: vec![0; n], live: vec![0; n], written_at: vec![0; n], clock: 0, open: OpenSegment::default(), cursor: 0, flushes: 0, events: None, checkpoint_due: None, reserved: BTreeSet::new() })
    }

    /// Records what happens to the blocks ([`LogEvent`], taken with [`Log::take_events`]), and
    /// leaves checkpoints to [`Log::checkpoint_if_due`]: what a caller that moves the real bytes
    /// needs. A simulation does neither.
    pub fn record_events(&mut self) {
        self.events.get_or_insert_with(Vec::new);
        self.checkpoint_due.get_or_insert(false);
    }

    /// The events recorded since the last call (none unless [`Log::record_events`]).
    pub fn take_events(&mut self) -> Vec<LogEvent> {
        self.events.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Writes the checkpoint a segment write made due, under [`Log::record_events`]; the
    /// caller calls it when every segment write is on the media. Returns whether it did.
    ///
    /// # Errors
    /// The journal's.
    pub fn checkpoint_if_due(&mut self) -> Result<bool> {
        if self.checkpoint_due != Some(true) {
            return Ok(false);
        }
        self.journal.checkpoint(&self.map)?;
        self.checkpoint_due = Some(false);
        Ok(true)
    }

    /// The journal as committed so far (snapshot and log).
    #[must_use]
    pub fn journal_storage(&self) -> &MemStorage {
        self.journal.storage()
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &LfsConfig {
        &self.cfg
    }

    /// Free segments (no live data on the disk), less those reserved as cleaning destinations.
    #[must_use]
    pub fn free_segments(&self) -> u32 {
        self.free - self.reserved.len() as u32
    }

    /// Live blocks of `segment` that cleaning it would move.
    #[must_use]
    pub fn live(&self, segment: u32) -> u32 {
        self.live[segment as usize]
    }

    /// Live blocks on the disk in `segment` (the usage table).
    #[must_use]
    pub fn usage(&self, segment: u32) -> u32 {
        self.durable_live[segment as usize]
    }

    /// Segments whose live blocks have all moved to (or been superseded in) the segment being
    /// filled: the next segment write frees them.
    #[must_use]
    pub fn emptied_in_memory(&self) -> u32 {
        self.durable_live.iter().zip(&self.live).filter(|&(&on_disk, &left)| on_disk > 0 && left == 0).count() as u32
    }

    /// Live data blocks on the disk.
    #[must_use]
    pub fn live_blocks(&self) -> u64 {
        self.map.stats().live
    }

    /// Data slots used in the segment being filled.
    #[must_use]
    pub fn open_len(&self) -> usize {
        self.open.slots.len()
    }

    /// True when the segment being filled has no room left.
    #[must_use]
    pub fn open_full(&self) -> bool {
        self.open.slots.len() >= self.cfg.data_blocks() as usize
    }

    /// True when the segment being filled is empty and no delete waits for the next write.
    #[must_use]
    pub fn open_empty(&self) -> bool {
        self.open.slots.is_empty() && self.open.deletes.is_empty()
    }

    /// The log clock: blocks appended so far.
    #[must_use]
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Segment writes so far.
    #[must_use]
    pub fn flushes(&self) -> u64 {
        self.flushes
    }

    /// The segment holding sector `lbn`, if it is in the partition.
    #[must_use]
    pub fn segment_of(&self, lbn: u64) -> Option<u32> {
        self.cfg.segment_of(lbn)
    }

    fn check_logical(&self, logical: u64) -> Result<()> {
        if logical >= self.cfg.logical_blocks {
            return Err(LfsError::LogicalOutside { logical, logical_blocks: self.cfg.logical_blocks });
        }
        Ok(())
    }

    fn block_index(&self, lbn: u64) -> usize {
        ((lbn - self.cfg.first_lbn) / self.cfg.block_sectors) as usize
    }

    /// Where `logical` is, and what it holds.
    ///
    /// # Errors
    /// [`LfsError::LogicalOutside`].
    pub fn read(&self, logical: u64) -> Result<Found> {
        self.check_logical(logical)?;
        if let Some(&i) = self.open.index.get(&logical) {
            return Ok(Found::Open(self.open.slots[i].expect("indexed slots are filled").value));
        }
        if self.open.deletes.contains(&logical) {
            return Ok(Found::Unmapped);
        }
        Ok(match self.map.first_copy(logical) {
            Some(lbn) => Found::Disk { lbn, value: self.media.data[self.block_index(lbn)] },
            None => Found::Unmapped,
        })
    }

    /// The on-disk copy of `logical` stops counting as live in its segment (it is superseded in
    /// memory), unless it already has.
    fn supersede(&mut self, logical: u64) {
        if self.open.index.contains_key(&logical) || self.open.deletes.contains(&logical) {
            return;
        }
        if let Some(s) = self.map.first_copy(logical).and_then(|lbn| self.cfg.segment_of(lbn)) {
            self.live[s as usize] -= 1;
        }
    }

    /// Appends `value` as the new contents of `logical` to the segment being filled (or updates
    /// it there). `cleaned` marks a block the cleaner moved.
    ///
    /// # Errors
    /// [`LfsError::LogicalOutside`]; [`LfsError::Config`] if the segment being filled is full
    /// (the caller writes it first).
    pub fn append(&mut self, logical: u64, value: u64, cleaned: bool) -> Result<()> {
        self.check_logical(logical)?;
        if let Some(&i) = self.open.index.get(&logical) {
            self.open.slots[i] = Some(Slot { logical, value, cleaned });
            if let Some(e) = &mut self.events {
                e.push(LogEvent::Appended { logical, from: None });
            }
            return Ok(());
        }
        if self.open_full() {
            return Err(LfsError::Config { field: "segment_blocks", message: "append to a full segment (write it first)".into() });
        }
        self.supersede(logical);
        self.open.deletes.remove(&logical);
        self.open.index.insert(logical, self.open.slots.len());
        self.open.slots.push(Some(Slot { logical, value, cleaned }));
        if let Some(e) = &mut self.events {
            e.push(LogEvent::Appended { logical, from: None });
        }
        Ok(())
    }

    /// Deletes `logical`: the next segment write unmaps its on-disk copy.
    ///
    /// # Errors
    /// [`LfsError::LogicalOutside`].
    pub fn delete(&mut self, logical: u64) -> Result<()> {
        self.check_logical(logical)?;
        self.supersede(logical);
        if let Some(i) = self.open.index.remove(&logical) {
            self.open.slots[i] = None;
        }
        if self.map.first_copy(logical).is_some() {
            self.open.deletes.insert(logical);
        }
        Ok(())
    }

    /// The on-disk blocks of `segment` that are still live: `(logical, lbn)` in slot order.
    #[must_use]
    pub fn live_in(&self, segment: u32) -> Vec<(u64, u64)> {
        (0..self.cfg.data_blocks())
            .filter_map(|slot| {
                let lbn = self.cfg.slot_lbn(segment, slot);
                match self.map.state(lbn) {
                    Ok(BlockState::Live { logical }) if self.is_live_at(logical, lbn) => Some((logical, lbn)),
                    _ => None,
                }
            })
            .collect()
    }

    /// True when `lbn` holds the current contents of `logical` (not superseded in memory).
    #[must_use]
    pub fn is_live_at(&self, logical: u64, lbn: u64) -> bool {
        !self.open.index.contains_key(&logical) && !self.open.deletes.contains(&logical) && self.map.first_copy(logical) == Some(lbn)
    }

    /// Moves `logical`'s block at `lbn` into the segment being filled, if it is still live there
    /// and the segment has room. Returns whether it moved.
    ///
    /// # Errors
    /// As [`Log::append`].
    pub fn relocate(&mut self, logical: u64, lbn: u64) -> Result<bool> {
        if !self.is_live_at(logical, lbn) || self.open_full() {
            return Ok(false);
        }
        let value = self.media.data[self.block_index(lbn)];
        self.append(logical, value, true)?;
        if let Some(LogEvent::Appended { from, .. }) = self.events.as_mut().and_then(|e| e.last_mut()) {
            *from = Some(lbn);
        }
        Ok(true)
    }

    /// The next free segment after the last one written, in log order.
    fn next_free(&self) -> Option<u32> {
        let n = self.cfg.segments;
        (0..n).map(|i| (self.cursor + i) % n).find(|&s| self.durable_live[s as usize] == 0 && !self.reserved.contains(&s))
    }

    /// The contents of the block at sector `lbn` (what a read of it brings).
    #[must_use]
    pub fn value_at(&self, lbn: u64) -> u64 {
        self.media.data[self.block_index(lbn)]
    }

    /// Sets a free segment aside as a cleaning destination: its slots are written one by one
    /// ([`Log::write_slot`], in any order), then its summary and the map's commit together
    /// ([`Log::commit_segment`]). Until then the map still points at every block's old home,
    /// so a crash loses nothing (recovery finds the segment free, as the map has it). Segment
    /// writes pass it over and it is no longer counted free. `None` when no segment is free
    /// but the last one.
    pub fn reserve_segment(&mut self) -> Option<u32> {
        if self.free_segments() <= 1 {
            return None;
        }
        let n = self.cfg.segments;
        let s = (0..n).map(|i| (self.cursor + i) % n).find(|&s| self.durable_live[s as usize] == 0 && !self.reserved.contains(&s))?;
        self.reserved.insert(s);
        Some(s)
    }

    /// Segments reserved as cleaning destinations.
    #[must_use]
    pub fn reserved_segments(&self) -> usize {
        self.reserved.len()
    }

    fn check_reserved(&self, segment: u32) -> Result<()> {
        if !self.reserved.contains(&segment) {
            return Err(LfsError::Config { field: "segment", message: format!("segment {segment} is not reserved as a cleaning destination") });
        }
        Ok(())
    }

    /// A block of a reserved destination reached the platters: `value` in data slot `slot` of
    /// `segment`. The map does not point there yet.
    ///
    /// # Errors
    /// [`LfsError::Config`] for a segment not reserved or a slot past its data.
    pub fn write_slot(&mut self, segment: u32, slot: u32, value: u64) -> Result<()> {
        self.check_reserved(segment)?;
        if slot >= self.cfg.data_blocks() {
            return Err(LfsError::Config { field: "slot", message: format!("slot {slot} is past the segment's {} data slots", self.cfg.data_blocks()) });
        }
        let b = self.block_index(self.cfg.slot_lbn(segment, slot));
        self.media.data[b] = value;
        Ok(())
    }

    /// A reserved destination is complete: `slots[i]` is `(logical, lbn, value)`, the block
    /// copied to data slot `i` from sector `lbn` holding `value` (its slot written with
    /// [`Log::write_slot`]), or `None` for a slot left empty. The summary goes to the platters,
    /// then the map points every block still live and unchanged at its old home to its slot, in
    /// one commit; a block rewritten, deleted or moved meanwhile stays where the map has it (its
    /// slot is dead space), even one that came back to the same sector with other contents. The
    /// segment is no longer reserved. Returns the blocks moved.
    ///
    /// # Errors
    /// [`LfsError::Config`] for a segment not reserved, more slots than the segment has, or a
    /// slot whose contents differ from the block it copies (its write is missing); a map or
    /// journal error; [`LfsError::Config`] under [`Log::record_events`] (a caller moving the
    /// real bytes does not use destinations).
    pub fn commit_segment(&mut self, segment: u32, slots: &[Option<(u64, u64, u64)>]) -> Result<u32> {
        self.check_reserved(segment)?;
        if self.events.is_some() {
            return Err(LfsError::Config { field: "free.free_write_segments", message: "cleaning destinations are not recorded as events".into() });
        }
        if slots.len() > self.cfg.data_blocks() as usize {
            return Err(LfsError::Config { field: "slots", message: format!("{} slots, the segment has {}", slots.len(), self.cfg.data_blocks()) });
        }
        // A block named twice moves once, to its first slot.
        let mut seen = std::collections::HashSet::new();
        let moving: Vec<(u32, u64, u64)> = slots.iter().enumerate().filter_map(|(i, s)| s.map(|(l, lbn, v)| (i as u32, l, lbn, v))).filter(|&(_, l, lbn, v)| self.is_live_at(l, lbn) && self.value_at(lbn) == v && seen.insert(l)).map(|(i, l, lbn, _)| (i, l, lbn)).collect();
        for &(i, l, lbn) in &moving {
            let to = self.cfg.slot_lbn(segment, i);
            if self.value_at(to) != self.value_at(lbn) {
                return Err(LfsError::Config { field: "slots", message: format!("slot {i} of segment {segment} does not hold logical block {l}'s contents (its write is missing)") });
            }
        }
        // The summary reaches the platters first…
        let names: Vec<u64> = slots.iter().map(|s| s.map_or(HOLE, |(l, _, _)| l)).collect();
        let summary = SegmentSummary { segment, written_at: self.clock, slots: names };
        self.media.summaries[segment as usize] = Some(summary.encode());
        // …then the map points at the copies, in one commit.
        for &(i, logical, old) in &moving {
            let lbn = self.cfg.slot_lbn(segment, i);
            let req = WriteRequest { logical, blocks: 1, candidates: Candidates::single(lbn) };
            self.journal.log(&mut self.map, MapOp::Write { req, chosen: lbn })?;
            if let Some(s) = self.cfg.segment_of(old) {
                // Live at its old home (not superseded in memory): it counted there.
                self.live[s as usize] -= 1;
            }
            self.unuse(old);
            self.durable_live[segment as usize] += 1;
        }
        self.journal.commit()?;
        self.reserved.remove(&segment);
        self.live[segment as usize] = self.durable_live[segment as usize];
        if self.durable_live[segment as usize] > 0 {
            self.free -= 1;
        }
        self.written_at[segment as usize] = self.clock;
        self.clock += slots.len() as u64;
        Ok(moving.len() as u32)
    }

    /// Gives a reserved destination back without committing it: the map never pointed there,
    /// so whatever its slots hold is dead space, and it is free again.
    ///
    /// # Errors
    /// [`LfsError::Config`] for a segment not reserved.
    pub fn release_segment(&mut self, segment: u32) -> Result<()> {
        self.check_reserved(segment)?;
        self.reserved.remove(&segment);
        Ok(())
    }

    /// Writes the segment being filled to a free segment with its summary, records the blocks'
    /// new homes in the map and commits the journal. Returns `None` when there was nothing to
    /// write.
    ///
    /// # Errors
    /// [`LfsError::NoFreeSegment`]; a map or journal error (then nothing has changed on the
    /// disk that the map points to).
    pub fn flush(&mut self) -> Result<Option<Flushed>> {
        if self.open_empty() {
            return Ok(None);
        }
        if self.open.slots.is_empty() {
            // Only deletes: they ride on the next segment write.
            return Ok(None);
        }
        let segment = self.next_free().ok_or(LfsError::NoFreeSegment { live_blocks: self.live_blocks(), data_blocks: self.cfg.capacity_blocks() })?;
        let open = std::mem::take(&mut self.open);
        let slots: Vec<u64> = open.slots.iter().map(|s| s.map_or(HOLE, |s| s.logical)).collect();
        let summary = SegmentSummary { segment, written_at: self.clock, slots };
        // The segment (data and summary) reaches the platters first…
        for (i, s) in open.slots.iter().enumerate() {
            if let Some(s) = s {
                let b = self.block_index(self.cfg.slot_lbn(segment, i as u32));
                self.media.data[b] = s.value;
            }
        }
        let encoded = summary.encode();
        if let Some(e) = &mut self.events {
            e.push(LogEvent::Sealed { seq: self.flushes, segment, summary: encoded.clone(), journal_before: self.journal.storage().journal.as_ref().map_or(0, |j| j.len() as u64) });
        }
        self.media.summaries[segment as usize] = Some(encoded);
        // …then the map points at it, in one commit.
        for &logical in open.deletes.iter().filter(|l| !open.index.contains_key(l)) {
            if let Some(old) = self.map.first_copy(logical) {
                self.journal.log(&mut self.map, MapOp::Trim { logical, blocks: 1 })?;
                self.unuse(old);
            }
        }
        let mut blocks = 0;
        let mut cleaned = 0;
        for (i, s) in open.slots.iter().enumerate() {
            let Some(s) = s else { continue };
            let lbn = self.cfg.slot_lbn(segment, i as u32);
            let old = self.map.first_copy(s.logical);
            let req = WriteRequest { logical: s.logical, blocks: 1, candidates: Candidates::single(lbn) };
            self.journal.log(&mut self.map, MapOp::Write { req, chosen: lbn })?;
            if let Some(old) = old {
                self.unuse(old);
            }
            self.durable_live[segment as usize] += 1;
            blocks += 1;
            cleaned += u32::from(s.cleaned);
        }
        self.journal.commit()?;
        let seq = self.flushes;
        self.flushes += 1;
        if self.cfg.checkpoint_every > 0 && self.flushes % u64::from(self.cfg.checkpoint_every) == 0 {
            match &mut self.checkpoint_due {
                Some(due) => *due = true,
                None => self.journal.checkpoint(&self.map)?,
            }
        }
        self.live[segment as usize] = self.durable_live[segment as usize];
        if self.durable_live[segment as usize] > 0 {
            self.free -= 1;
        }
        self.written_at[segment as usize] = self.clock;
        self.clock += open.slots.len() as u64;
        self.cursor = (segment + 1) % self.cfg.segments;
        let extent = u32::try_from(open.slots.len()).expect("a segment's slots fit a u32");
        Ok(Some(Flushed { seq, segment, blocks, extent, cleaned }))
    }

    /// The on-disk block at `lbn` is no longer live (its block was rewritten or deleted).
    fn unuse(&mut self, lbn: u64) {
        if let Some(s) = self.cfg.segment_of(lbn) {
            let s = s as usize;
            self.durable_live[s] -= 1;
            if self.durable_live[s] == 0 {
                self.free += 1;
            }
            // Superseded in memory already, or (a trim of a block not in memory) not counted.
            self.live[s] = self.live[s].min(self.durable_live[s]);
        }
    }

    /// The segments the cost-benefit policy (Rosenblum & Ousterhout) would clean first, best
    /// first, at most `n`, skipping `exclude`: highest `(1 − u) · age / (1 + u)`, where `u` is the
    /// fraction of the segment still live and `age` the log time since it was written. Free
    /// segments, and segments already emptied in memory, are not candidates.
    #[must_use]
    pub fn cost_benefit(&self, n: usize, exclude: &dyn Fn(u32) -> bool) -> Vec<u32> {
        let data = f64::from(self.cfg.data_blocks());
        self.best(n, exclude, &|live, age| {
            let u = f64::from(live) / data;
            (1.0 - u) * age as f64 / (1.0 + u)
        })
    }

    /// The segments with the fewest live blocks, at most `n`, fewest first (ties to the older,
    /// then the lower segment), skipping `exclude`: the greedy policy. A free cleaner pays
    /// nothing for a segment's reads but still writes its live blocks, and waits for each of
    /// them to pass under the head, so the fewest live blocks per segment freed is the cheapest
    /// cleaning it can do. Candidates as in [`Log::cost_benefit`].
    #[must_use]
    pub fn least_live(&self, n: usize, exclude: &dyn Fn(u32) -> bool) -> Vec<u32> {
        let data = f64::from(self.cfg.data_blocks());
        // Fewer live blocks always wins; among equals the older (a tiny age term, < 1 block).
        self.best(n, exclude, &|live, age| (data - f64::from(live)) + age as f64 / (age as f64 + 1.0) / 2.0)
    }

    /// The `n` candidates with the highest `score(live blocks, age)`, best first (ties to the
    /// lower segment), skipping `exclude`.
    fn best(&self, n: usize, exclude: &dyn Fn(u32) -> bool, score: &dyn Fn(u32, u64) -> f64) -> Vec<u32> {
        // Kept by insertion: `n` is small.
        let mut best: Vec<(f64, u32)> = Vec::with_capacity(n + 1);
        for s in 0..self.cfg.segments {
            let i = s as usize;
            if self.durable_live[i] == 0 || self.live[i] == 0 || n == 0 {
                continue;
            }
            let score = score(self.live[i], self.clock - self.written_at[i] + 1);
            if best.len() == n && best.last().is_some_and(|w| w.0 >= score) {
                continue;
            }
            if exclude(s) {
                continue;
            }
            let at = best.partition_point(|b| b.0 >= score);
            best.insert(at, (score, s));
            best.truncate(n);
        }
        best.into_iter().map(|(_, s)| s).collect()
    }

    /// Checks the usage table against the map: each segment's count equals its live blocks in
    /// the map, the free count matches, and no segment counts more in memory than on disk.
    ///
    /// # Errors
    /// [`LfsError::Unbalanced`] naming the first segment that does not balance.
    pub fn check_usage(&self) -> Result<()> {
        let mut counted = vec![0u32; self.cfg.segments as usize];
        for (logical, loc) in self.map.mapped() {
            let lbn = loc.copies[0];
            let s = self.cfg.segment_of(lbn).ok_or(LfsError::Unbalanced { segment: u32::MAX, message: format!("logical block {logical} maps to sector {lbn}, outside every segment's data") })?;
            counted[s as usize] += 1;
        }
        for s in 0..self.cfg.segments {
            let i = s as usize;
            if counted[i] != self.durable_live[i] {
                return Err(LfsError::Unbalanced { segment: s, message: format!("the usage table says {} live blocks, the map {}", self.durable_live[i], counted[i]) });
            }
            let superseded = self.live_in(s).len() as u32;
            if superseded != self.live[i] {
                return Err(LfsError::Unbalanced { segment: s, message: format!("{} blocks counted live after the segment being filled, {superseded} found", self.live[i]) });
            }
        }
        let free = self.durable_live.iter().filter(|&&n| n == 0).count() as u32;
        if free != self.free {
            return Err(LfsError::Unbalanced { segment: u32::MAX, message: format!("{} free segments counted, {free} found", self.free) });
        }
        Ok(())
    }

    /// A crash: everything in memory is lost; what survives is the journal's storage and the
    /// platters.
    #[must_use]
    pub fn crash(self) -> (MemStorage, Media) {
        (self.journal.into_storage(), self.media)
    }

    /// Mutable access to the platters, for tests that damage them.
    pub fn media_mut(&mut self) -> &mut Media {
        &mut self.media
    }

    /// Recovers a log after a crash: the map from the journal, the usage table from the map, and
    /// every segment holding live data checked against its summary.
    ///
    /// # Errors
    /// [`LfsError::CorruptSummary`] naming the segment whose summary is missing, damaged, or
    /// names other blocks than the map puts there; a journal error ([`LfsError::Map`]).
    pub fn recover(cfg: LfsConfig, storage: MemStorage, media: Media) -> Result<(Self, Recovered)> {
        cfg.validate()?;
        let (journal, map, report) = Journal::open(storage, DirtyRule::Logged)?;
        if *map.config() != cfg.map_config() {
            return Err(LfsError::Config { field: "segments", message: "the journal's map was made for another partition".into() });
        }
        let n = cfg.segments as usize;
        let mut durable_live = vec![0u32; n];
        let mut slots_of: Vec<Vec<(u32, u64)>> = vec![Vec::new(); n];
        for (logical, loc) in map.mapped() {
            let lbn = loc.copies[0];
            let s = cfg.segment_of(lbn).ok_or_else(|| LfsError::CorruptSummary { segment: u32::MAX, lbn, reason: format!("the map puts logical block {logical} outside every segment's data") })?;
            durable_live[s as usize] += 1;
            slots_of[s as usize].push((cfg.slot_of(lbn), logical));
        }
        let mut written_at = vec![0u64; n];
        let mut clock = 0;
        let mut checked = 0;
        for s in 0..cfg.segments {
            if durable_live[s as usize] == 0 {
                continue;
            }
            let lbn = cfg.summary_lbn(s);
            let corrupt = |reason: String| LfsError::CorruptSummary { segment: s, lbn, reason };
            let bytes = media.summaries.get(s as usize).and_then(Option::as_ref).ok_or_else(|| corrupt("missing, but the map has live blocks there".into()))?;
            let summary = SegmentSummary::decode(bytes, s).map_err(corrupt)?;
            for &(slot, logical) in &slots_of[s as usize] {
                let named = summary.slots.get(slot as usize).copied();
                if named != Some(logical) {
                    let says = named.map_or("nothing".to_string(), |l| if l == HOLE { "a hole".into() } else { format!("logical block {l}") });
                    return Err(corrupt(format!("slot {slot} holds {says}, but the map puts logical block {logical} there")));
                }
            }
            written_at[s as usize] = summary.written_at;
            clock = clock.max(summary.written_at + summary.slots.len() as u64);
            checked += 1;
        }
        let free = durable_live.iter().filter(|&&c| c == 0).count() as u32;
        let live_blocks = map.stats().live;
        let log = Self { live: durable_live.clone(), durable_live, written_at, clock, open: OpenSegment::default(), free, cursor: 0, flushes: 0, events: None, checkpoint_due: None, reserved: BTreeSet::new(), cfg, map, journal, media };
        Ok((log, Recovered { dropped_bytes: report.bytes_dropped, segments_checked: checked, live_blocks }))
    }

    /// The block map (read-only).
    #[must_use]
    pub fn map(&self) -> &BlockMap {
        &self.map
    }
}

impl LfsConfig {
    /// The block map's configuration: the partition, with `logical_blocks` addresses.
    #[must_use]
    pub fn map_config(&self) -> MapConfig {
        MapConfig { first_lbn: self.first_lbn, sectors: self.partition_blocks() * self.block_sectors, block_sectors: self.block_sectors, logical_blocks: self.logical_blocks }
    }
}
