//! Range writes for ordinary workloads: the `range_writes` layout of an experiment file.
//!
//! The range-write policy of [`super::rangewrite`] serves streams that choose their own
//! candidates (the small-file workload of `freeblock repro range-writes`). This policy gives the
//! same technique to any workload of plain requests — random, OLTP, a trace: every write is
//! offered `candidates` free places spread round the track (or cylinder) nearest the heads, the
//! device writes to whichever it reaches first, and the block map remembers where each block went.
//!
//! ```text
//!   physical blocks, in chunks of about a cylinder (C blocks):
//!     │ H H H H H H H H H · · · │ H H H H H H H H H · · · │ …   H = a logical block's home
//!     └ (1 − spare)·C homes, then spare·C spare blocks ┘        · = spare (whole tracks free)
//!   logical block b's home: chunk ⌊b / H⌋, place b mod H   (H = (1 − spare)·C homes a chunk)
//!
//!   write of blocks b..b+n ─► k free extents of n blocks, equidistant round the track
//!                             nearest the heads ─► the device serves the one it reaches first
//!                             ─► map: b..b+n live there; the old copies become spare
//!                             (no track has room for k of them: the two halves, each offered
//!                             the same way; one block with no room for k: the nearest free one)
//!   read of blocks b..b+n  ─► wherever each block lives now: one I/O per contiguous piece
//! ```
//!
//! | a write of `n` blocks | physical I/Os |
//! |---|---|
//! | `k` runs of `n` fit on one track near the heads | one, with `k` candidates (paper 004) |
//! | they do not (a long write, or free space in scattered blocks) | one per piece of the halving, each with its own candidates |
//! | a single block with no room for `k` | one, at the nearest free block |
//!
//! **Carrying real bytes** ([`RequestRangeWrites::carrying_bytes`], the block server): every map
//! change goes to a [`Journal`] and each write I/O commits at its completion, so a restart finds
//! every completed write where it went ([`RequestRangeWrites::recover`]); a write never lands on
//! its block's current place, so until that commit the old place holds the old bytes. A block a
//! write frees while a read in flight still reads it is held back from other writes until the
//! read is done. A simulation needs neither, and its results do not depend on them.
//!
//! A share `spare` of the disk's blocks is kept free for candidates (the workload sees the rest
//! as its disk): the end of every chunk of about a cylinder, so every cylinder starts with free
//! tracks where equidistant candidates fit. The policy works in blocks of
//! `block_sectors`: a request covers the whole blocks it touches. A block enters the map on its
//! first write, so the map grows with the blocks written, not with the disk; the free-space
//! bitmaps cost three bits per physical block.
//!
//! ```toml
//! [layout]
//! type = "range_writes"
//! candidates = 4        # places offered per write (1: write to the nearest free spot)
//! spread = "track"      # track: round the nearest track with room | cylinder: one per surface
//! block_sectors = 8     # the unit of placement (4 KB)
//! spare = 0.25          # share of the disk kept free for candidates
//! ```
//!
//! Selection among the candidates is the engine's: the scheduler ranks each request by its first
//! candidate and the device serves the best, or with `[sim] selection = { mode = "global" }` the
//! scheduler weighs every candidate of every request.

use std::collections::{HashMap, HashSet};

use freeblock_disk::{Disk, Op};
use serde::{Deserialize, Serialize};

use super::alloc::{offer_equidistant_noting, offer_equidistant_on_cylinder, NoRoom};
use super::error::{LayoutError, Result};
use super::journal::{DirtyRule, Journal, MapOp, MemStorage, RecoveryReport};
use super::map::{BlockMap, Candidates, MapConfig, PhysRange, WriteRequest};
use super::policy::{Completed, LayoutCtx, LayoutPolicy, LogicalIo, PhysIo};

/// Where a write's candidates lie.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Spread {
    /// Equidistant round the nearest track with room (paper 004).
    #[default]
    Track,
    /// One per surface of the nearest cylinder with room, equidistant in angle (OSDI 2008's
    /// small-file runs): no candidate costs a longer seek than another.
    Cylinder,
}

/// The `[layout]` table of `type = "range_writes"`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RangeWritesConfig {
    /// Places offered per write. Default 4.
    pub candidates: u32,
    /// Where they lie. Default `track`.
    pub spread: Spread,
    /// Sectors per block, the unit of placement. Default 8 (4 KB).
    pub block_sectors: u64,
    /// Share of the disk's blocks kept free for candidates, in (0, 1). Default 0.25.
    pub spare: f64,
}

impl Default for RangeWritesConfig {
    fn default() -> Self {
        Self { candidates: 4, spread: Spread::Track, block_sectors: 8, spare: 0.25 }
    }
}

/// What the policy reports (the run report's `layout.details`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RangeWritesReport {
    /// Write I/Os served (a write with no room for its candidates as one run is served as
    /// several).
    pub writes: u64,
    /// Reads served.
    pub reads: u64,
    /// Physical I/Os the reads became (a read of blocks written apart is one I/O per piece).
    pub read_pieces: u64,
    /// Share of writes served at another candidate than the first.
    pub moved_share: f64,
    /// Mean candidates per write.
    pub candidates_per_write: f64,
    /// Mean positioning (seek, settle, rotational latency) of writes, ms.
    pub write_positioning_ms: f64,
    /// Mean rotational latency of writes, ms.
    pub write_rotational_ms: f64,
    /// Logical blocks the workload sees.
    pub logical_blocks: u64,
    /// Physical blocks free at the end.
    pub free_blocks: u64,
}

/// Range writes for a workload of plain requests (see the module documentation).
#[derive(Debug)]
pub struct RequestRangeWrites {
    config: RangeWritesConfig,
    map: BlockMap,
    logical_blocks: u64,
    /// Physical blocks per chunk, and homes at the start of each.
    chunk_blocks: u64,
    homes_per_chunk: u64,
    /// Blocks on the disk's longest track: a run longer than this (times the candidates round a
    /// track) cannot be offered whole.
    longest_track_blocks: u64,
    /// Physical I/Os in flight, by tag: the logical blocks each carries, and a write's request.
    pieces: HashMap<u64, Piece>,
    next_tag: u64,
    /// Kept only when the policy places real bytes ([`RequestRangeWrites::carrying_bytes`]).
    live: Option<Live>,
    writes: u64,
    reads: u64,
    read_pieces: u64,
    moved: u64,
    candidates: u64,
    positioning_ns: u128,
    rotational_ns: u128,
}

/// One physical I/O of a request: the logical blocks `logical..logical + blocks` it carries.
#[derive(Debug)]
struct Piece {
    logical: u64,
    blocks: u64,
    /// A read's physical start (its blocks are fenced while it runs); `None` for a write.
    read_at: Option<u64>,
    /// A write's request, candidates and all.
    write: Option<WriteRequest>,
}

/// What a policy that places real bytes keeps besides the map (see
/// [`RequestRangeWrites::carrying_bytes`]).
#[derive(Debug)]
struct Live {
    /// The map on stable storage: every map change logged, committed at each write's completion.
    journal: Journal<MemStorage>,
    /// Reads in flight per physical block (its first sector).
    readers: HashMap<u64, u32>,
    /// Blocks a write freed while reads in flight still read them: held reserved (not offered
    /// to other writes) until the last of those reads is done.
    fenced: HashSet<u64>,
}

/// The journal is compacted after a commit once it is longer than this.
const JOURNAL_LIMIT_BYTES: u64 = 8 << 20;

fn bad(field: &'static str, message: String) -> LayoutError {
    LayoutError::Config { field, message }
}

impl RequestRangeWrites {
    /// The policy on `disk`: every logical block at its home, the spare blocks free.
    ///
    /// # Errors
    /// [`LayoutError::Config`] naming the setting (`layout.candidates`, `layout.block_sectors`,
    /// `layout.spare`) that makes no layout on this disk.
    pub fn new(disk: &Disk, config: RangeWritesConfig) -> Result<Self> {
        let RangeWritesConfig { candidates, spread, block_sectors, spare } = config;
        if candidates == 0 {
            return Err(bad("layout.candidates", "must be at least 1".into()));
        }
        let surfaces = disk.layout().surfaces();
        if spread == Spread::Cylinder && candidates > surfaces {
            return Err(bad("layout.candidates", format!("{candidates} candidates round a cylinder need as many surfaces; the disk has {surfaces} (or use spread = \"track\")")));
        }
        let max_block = disk.layout().zone_table().iter().map(|z| u64::from(z.2)).min().unwrap_or(1);
        if block_sectors == 0 || block_sectors > max_block {
            return Err(bad("layout.block_sectors", format!("must be 1 to {max_block} sectors (a block must fit on the shortest track), not {block_sectors}")));
        }
        if !(spare.is_finite() && spare > 0.0 && spare < 1.0) {
            return Err(bad("layout.spare", format!("must be a share strictly between 0 and 1, not {spare}")));
        }
        let physical_blocks = disk.capacity() / block_sectors;
        // A chunk: the largest cylinder, or more if that is needed for the spare part to hold
        // two of the longest tracks.
        let zones = disk.layout().zone_table();
        let longest_track = zones.iter().map(|z| u64::from(z.2)).max().unwrap_or(1).div_ceil(block_sectors);
        let cylinder = longest_track * u64::from(surfaces);
        let chunk_blocks = cylinder.max((2.0 * longest_track as f64 / spare).ceil() as u64).min(physical_blocks);
        // Rounded down: at least `spare` of each chunk stays free.
        let homes_per_chunk = ((chunk_blocks as f64) * (1.0 - spare)).floor() as u64;
        if homes_per_chunk == 0 || homes_per_chunk >= chunk_blocks {
            return Err(bad("layout.spare", format!("{spare} leaves {homes_per_chunk} of every {chunk_blocks} blocks to the workload")));
        }
        let logical_blocks = physical_blocks / chunk_blocks * homes_per_chunk + (physical_blocks % chunk_blocks).min(homes_per_chunk);
        let mut map = BlockMap::new(MapConfig { first_lbn: 0, sectors: physical_blocks * block_sectors, block_sectors, logical_blocks })?;
        let mut policy = Self {
            config,
            map: BlockMap::new(MapConfig::region(0, block_sectors, block_sectors))?,
            logical_blocks,
            chunk_blocks,
            homes_per_chunk,
            longest_track_blocks: longest_track,
            pieces: HashMap::new(),
            next_tag: 0,
            live: None,
            writes: 0,
            reads: 0,
            read_pieces: 0,
            moved: 0,
            candidates: 0,
            positioning_ns: 0,
            rotational_ns: 0,
        };
        // Homes hold their blocks until first written: never offered as candidates.
        for b in 0..logical_blocks {
            map.pin(PhysRange::new(policy.home(b), block_sectors))?;
        }
        policy.map = map;
        Ok(policy)
    }

    /// The first sector of logical block `b`'s home.
    fn home(&self, b: u64) -> u64 {
        let block = b / self.homes_per_chunk * self.chunk_blocks + b % self.homes_per_chunk;
        block * self.config.block_sectors
    }

    /// Where logical block `b` lives now (its first sector).
    fn location(&self, b: u64) -> u64 {
        self.map.first_copy(b).unwrap_or_else(|| self.home(b))
    }

    /// Moves logical block `b` from its implicit home into the map (before its first write, so
    /// that the write frees the home).
    fn enter(&mut self, b: u64) -> Result<()> {
        if self.map.first_copy(b).is_some() {
            return Ok(());
        }
        let home = self.home(b);
        let bs = self.config.block_sectors;
        self.apply(MapOp::Unpin { extent: PhysRange::new(home, bs) })?;
        self.apply(MapOp::Write { req: WriteRequest { logical: b, blocks: 1, candidates: Candidates::single(home) }, chosen: home })
    }

    /// Changes the map, logging the change when the map is kept on stable storage.
    fn apply(&mut self, op: MapOp) -> Result<()> {
        match &mut self.live {
            Some(live) => live.journal.log(&mut self.map, op).map(drop),
            None => self.map.apply(&op),
        }
    }

    /// The same policy placing real bytes (the block server): every map change is logged in a
    /// journal ([`RequestRangeWrites::journal_storage`]) and committed when a write completes, and
    /// a block a write frees is not offered to another write while a read in flight still
    /// reads it. A simulation needs neither (the model carries no bytes), so neither is on by
    /// default, and a run's results do not depend on it.
    ///
    /// # Errors
    /// [`LayoutError::Io`] writing the first snapshot.
    pub fn carrying_bytes(mut self) -> Result<Self> {
        let journal = Journal::create(MemStorage::new(), &self.map)?;
        self.live = Some(Live { journal, readers: HashMap::new(), fenced: HashSet::new() });
        Ok(self)
    }

    /// The policy rebuilt after a crash from its committed map (what
    /// [`RequestRangeWrites::journal_storage`] held), carrying bytes. Offers of writes that were
    /// in flight, and blocks fenced for reads, died with the server: they are free again.
    ///
    /// # Errors
    /// As [`RequestRangeWrites::new`]; as [`Journal::open`] for damaged storage;
    /// [`LayoutError::Config`] (`layout`) when the map is another layout's (block size, disk) or
    /// a block that was never written has lost its home.
    pub fn recover(disk: &Disk, config: RangeWritesConfig, storage: MemStorage) -> Result<(Self, RecoveryReport)> {
        let mut p = Self::new(disk, config)?;
        let (mut journal, map, report) = Journal::open(storage, DirtyRule::Logged)?;
        if map.config() != p.map.config() {
            return Err(bad("layout", format!("the recovered map is {:?}; this disk and these settings give {:?}", map.config(), p.map.config())));
        }
        let mut snapshot = map.to_snapshot();
        snapshot.reserved.clear();
        let map = BlockMap::from_snapshot(snapshot)?;
        let bs = p.config.block_sectors;
        if let Some(b) = (0..p.logical_blocks).find(|&b| map.first_copy(b).is_none() && map.state(p.home(b)).ok() != Some(super::map::BlockState::Pinned)) {
            return Err(bad("layout", format!("logical block {b} was never written, but its home (sectors {}..{}) is not kept for it", p.home(b), p.home(b) + bs)));
        }
        journal.checkpoint(&map)?;
        p.map = map;
        p.live = Some(Live { journal, readers: HashMap::new(), fenced: HashSet::new() });
        Ok((p, report))
    }

    /// The map's stable storage as committed, when the policy carries bytes. Clone it to
    /// simulate a crash, then [`RequestRangeWrites::recover`].
    #[must_use]
    pub fn journal_storage(&self) -> Option<&MemStorage> {
        self.live.as_ref().map(|l| l.journal.storage())
    }

    /// The block map (blocks written at least once; the others are at their homes).
    #[must_use]
    pub fn map(&self) -> &BlockMap {
        &self.map
    }

    /// A write (the I/O `tag`) whose bytes did not reach the store (the file system was full,
    /// say): its offer is given back and the map left as it was, so its blocks keep the place of
    /// their last write. Call it instead of [`LayoutPolicy::complete`] for that I/O. Nothing is
    /// logged (reservations are not). Returns whether `tag` was a write in flight.
    ///
    /// # Errors
    /// As [`BlockMap::release`].
    pub fn abandon_write(&mut self, tag: u64) -> Result<bool> {
        let Some(req) = self.pieces.get(&tag).and_then(|p| p.write.clone()) else { return Ok(false) };
        self.map.release(&req.candidates, req.blocks)?;
        self.pieces.remove(&tag);
        Ok(true)
    }

    /// A fresh tag for a physical I/O.
    fn tag(&mut self) -> u64 {
        self.next_tag += 1;
        self.next_tag
    }

    /// A read of `blocks` blocks from `logical`, lying one after the other from sector `at`.
    fn push_read(&mut self, out: &mut Vec<PhysIo>, logical: u64, blocks: u64, at: u64) {
        let tag = self.tag();
        let bs = self.config.block_sectors;
        if let Some(live) = &mut self.live {
            for k in 0..blocks {
                *live.readers.entry(at + k * bs).or_default() += 1;
            }
        }
        self.pieces.insert(tag, Piece { logical, blocks, read_at: Some(at), write: None });
        out.push(PhysIo::at(Op::Read, at, blocks * bs, tag));
    }

    /// A read is done: its blocks are no longer fenced for it.
    fn read_done(&mut self, at: u64, blocks: u64) -> Result<()> {
        let bs = self.config.block_sectors;
        let Some(live) = &mut self.live else { return Ok(()) };
        for k in 0..blocks {
            let block = at + k * bs;
            let Some(n) = live.readers.get_mut(&block) else { continue };
            *n -= 1;
            if *n == 0 {
                live.readers.remove(&block);
                if live.fenced.remove(&block) {
                    self.map.release(&Candidates::single(block), 1)?;
                }
            }
        }
        Ok(())
    }

    /// Offers candidates for a write of `blocks` blocks from `logical`: the whole run where the
    /// free space near the heads has `candidates` places for it, else its two halves, each
    /// offered the same way; a single block with no room for all its candidates gets one
    /// place, the nearest free one. Each piece is one physical I/O.
    fn offer_write(&mut self, ctx: &LayoutCtx<'_>, logical: u64, blocks: u64, pieces: &mut Vec<PhysIo>, no_room: &mut NoRoom) -> Result<()> {
        let k = self.config.candidates;
        // A run longer than a track (for all its candidates) fits nowhere: no search.
        let per_track = match self.config.spread {
            Spread::Track => u64::from(k),
            Spread::Cylinder => 1,
        };
        let offered = if blocks * per_track > self.longest_track_blocks {
            Err(LayoutError::NoSpace { what: format!("{k} candidates of {blocks} blocks (longer than a track)") })
        } else {
            match self.config.spread {
                Spread::Track => offer_equidistant_noting(&mut self.map, ctx.disk, ctx.head, k, blocks, no_room).map(|o| o.1),
                Spread::Cylinder => offer_equidistant_on_cylinder(&mut self.map, ctx.disk, ctx.head, k, blocks).map(|o| o.1),
            }
        };
        let candidates = match offered {
            Ok(c) => c,
            Err(LayoutError::NoSpace { .. }) if blocks > 1 => {
                let half = blocks / 2;
                self.offer_write(ctx, logical, half, pieces, no_room)?;
                return self.offer_write(ctx, logical + half, blocks - half, pieces, no_room);
            }
            Err(LayoutError::NoSpace { .. }) if k > 1 => offer_equidistant_noting(&mut self.map, ctx.disk, ctx.head, 1, 1, no_room)?.1,
            Err(e) => return Err(e),
        };
        let sectors = blocks * self.config.block_sectors;
        let tag = self.tag();
        pieces.push(PhysIo { op: Op::Write, starts: candidates.starts(sectors).collect(), sectors, tag });
        self.pieces.insert(tag, Piece { logical, blocks, read_at: None, write: Some(WriteRequest { logical, blocks, candidates }) });
        Ok(())
    }

    /// The policy's figures so far.
    #[must_use]
    pub fn summary(&self) -> RangeWritesReport {
        let ratio = |a: f64, b: u64| if b == 0 { 0.0 } else { a / b as f64 };
        RangeWritesReport {
            writes: self.writes,
            reads: self.reads,
            read_pieces: self.read_pieces,
            moved_share: ratio(self.moved as f64, self.writes),
            candidates_per_write: ratio(self.candidates as f64, self.writes),
            write_positioning_ms: ratio(self.positioning_ns as f64 / 1e6, self.writes),
            write_rotational_ms: ratio(self.rotational_ns as f64 / 1e6, self.writes),
            logical_blocks: self.logical_blocks,
            free_blocks: self.map.stats().free,
        }
    }
}

impl LayoutPolicy for RequestRangeWrites {
    fn name(&self) -> String {
        "range-writes".into()
    }

    fn logical_sectors(&self) -> Option<u64> {
        Some(self.logical_blocks * self.config.block_sectors)
    }

    fn translate(&mut self, ctx: &mut LayoutCtx<'_>, io: &LogicalIo<'_>, out: &mut Vec<PhysIo>) -> Result<()> {
        if io.write.is_some() {
            return Err(bad("layout", "the range_writes layout places plain requests; a stream's write with its own candidates needs the streams' policy".into()));
        }
        let bs = self.config.block_sectors;
        let first = io.lbn / bs;
        let end = io.lbn.saturating_add(io.sectors).div_ceil(bs);
        if end > self.logical_blocks || end <= first {
            return Err(LayoutError::LogicalOutside { logical: first, end, capacity: self.logical_blocks });
        }
        if io.op == Op::Read {
            self.reads += 1;
            // One I/O per run of blocks that lie one after the other on the disk.
            let (mut piece, mut start, mut len) = (first, self.location(first), 1);
            let mut n = 1;
            for b in first + 1..end {
                let at = self.location(b);
                if at == start + len * bs {
                    len += 1;
                } else {
                    self.push_read(out, piece, len, start);
                    (piece, start, len) = (b, at, 1);
                    n += 1;
                }
            }
            self.push_read(out, piece, len, start);
            self.read_pieces += n;
            return Ok(());
        }
        for b in first..end {
            self.enter(b)?;
        }
        let mut pieces = Vec::new();
        // One search memory for all the pieces: the offers only take free space meanwhile.
        if let Err(e) = self.offer_write(ctx, first, end - first, &mut pieces, &mut NoRoom::default()) {
            // Refused whole: the pieces already offered give their places back.
            for io in &pieces {
                if let Some(Piece { write: Some(req), .. }) = self.pieces.remove(&io.tag) {
                    self.map.release(&req.candidates, req.blocks)?;
                }
            }
            return Err(e);
        }
        out.append(&mut pieces);
        Ok(())
    }

    fn complete(&mut self, _ctx: &mut LayoutCtx<'_>, done: &Completed<'_>) -> Result<()> {
        let Some(piece) = self.pieces.remove(&done.io.tag) else { return Ok(()) };
        let Some(req) = piece.write else {
            return self.read_done(piece.read_at.unwrap_or(done.lbn), piece.blocks);
        };
        let bs = self.config.block_sectors;
        let old: Vec<u64> = (req.logical..req.logical + req.blocks).filter_map(|b| self.map.first_copy(b)).collect();
        self.map.write(&req, done.lbn)?;
        if let Some(live) = &mut self.live {
            // Logged with the chosen place alone: the other candidates were only an offer, and a
            // replay finds the chosen place free (it was reserved for this write alone).
            let chosen = WriteRequest { logical: req.logical, blocks: req.blocks, candidates: Candidates::single(done.lbn) };
            live.journal.append(&MapOp::Write { req: chosen, chosen: done.lbn })?;
            for at in old {
                if live.readers.contains_key(&at) && self.map.is_free(at, bs) {
                    self.map.reserve(PhysRange::new(at, bs))?;
                    live.fenced.insert(at);
                }
            }
            live.journal.commit()?;
            if live.journal.journal_len() > JOURNAL_LIMIT_BYTES {
                live.journal.checkpoint(&self.map)?;
            }
        }
        let (seek, rot) = match (done.choice, done.access) {
            (Some(c), _) => (c.seek, c.rotational_latency),
            (None, Some(a)) => (a.breakdown.seek, a.breakdown.rotational_latency),
            (None, None) => (0, 0),
        };
        self.writes += 1;
        self.moved += u64::from(done.chosen != 0);
        self.candidates += done.io.starts.len() as u64;
        self.positioning_ns += u128::from(seek + rot);
        self.rotational_ns += u128::from(rot);
        Ok(())
    }

    fn carried_blocks(&self, tag: u64) -> Option<Vec<u64>> {
        self.pieces.get(&tag).map(|p| (p.logical..p.logical + p.blocks).collect())
    }

    fn journal(&self) -> Option<&MemStorage> {
        self.journal_storage()
    }

    fn report(&self) -> serde_json::Value {
        serde_json::to_value(self.summary()).unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use freeblock_disk::library;

    fn disk() -> Disk {
        Disk::new(library::get("hp_c2249a").unwrap().without_cache()).unwrap()
    }

    #[test]
    fn settings_that_make_no_layout_name_their_field() {
        let d = disk();
        for (config, field) in [
            (RangeWritesConfig { candidates: 0, ..RangeWritesConfig::default() }, "layout.candidates"),
            (RangeWritesConfig { candidates: 99, spread: Spread::Cylinder, ..RangeWritesConfig::default() }, "layout.candidates"),
            (RangeWritesConfig { block_sectors: 0, ..RangeWritesConfig::default() }, "layout.block_sectors"),
            (RangeWritesConfig { block_sectors: 1 << 20, ..RangeWritesConfig::default() }, "layout.block_sectors"),
            (RangeWritesConfig { spare: 0.0, ..RangeWritesConfig::default() }, "layout.spare"),
            (RangeWritesConfig { spare: f64::NAN, ..RangeWritesConfig::default() }, "layout.spare"),
            (RangeWritesConfig { spare: 1.0, ..RangeWritesConfig::default() }, "layout.spare"),
        ] {
            let e = RequestRangeWrites::new(&d, config).unwrap_err().to_string();
            assert!(e.starts_with(field), "{config:?}: {e}");
        }
    }

    #[test]
    fn a_read_goes_where_the_last_write_put_the_block() {
        let d = disk();
        let mut p = RequestRangeWrites::new(&d, RangeWritesConfig::default()).unwrap();
        let mut submitted = Vec::new();
        let head = freeblock_disk::HeadState { cylinder: 500, surface: 2 };
        let mut ctx = LayoutCtx::new(&d, head, 0, &mut submitted);
        let request = |id, op, lbn| LogicalIo { id, stream: 0, op, lbn, sectors: 8, write: None };
        // Before any write: the block is read at its home.
        let mut out = Vec::new();
        p.translate(&mut ctx, &request(1, Op::Read, 8 * 1000), &mut out).unwrap();
        assert_eq!(out[0].starts, vec![p.home(1000)]);
        let mut out = Vec::new();
        p.translate(&mut ctx, &request(2, Op::Write, 8 * 1000), &mut out).unwrap();
        let write = out.remove(0);
        assert_eq!(write.starts.len(), 4);
        assert!(!write.starts.contains(&p.home(1000)), "candidates are spare blocks");
        let chosen = write.starts[2];
        let done = Completed { io: &write, chosen: 2, lbn: chosen, access: None, time: 1, request: None, choice: None };
        p.complete(&mut ctx, &done).unwrap();
        let mut out = Vec::new();
        p.translate(&mut ctx, &request(3, Op::Read, 8 * 1000), &mut out).unwrap();
        assert_eq!(out[0].starts, vec![chosen]);
        // The home and the three unchosen candidates are free again.
        assert!(p.map.is_free(p.home(1000), 8));
        assert_eq!(p.map.stats().free, p.map.stats().total - p.logical_blocks);
        assert_eq!(p.summary().moved_share, 1.0);
    }

    #[test]
    fn homes_are_spread_and_leave_the_spare_free() {
        let d = disk();
        let p = RequestRangeWrites::new(&d, RangeWritesConfig::default()).unwrap();
        let s = p.map.stats();
        assert_eq!(s.pinned, p.logical_blocks);
        assert_eq!(s.free, s.total - p.logical_blocks);
        // Strictly increasing homes, none past the disk.
        let homes: Vec<u64> = (0..p.logical_blocks).map(|b| p.home(b)).collect();
        assert!(homes.windows(2).all(|w| w[0] < w[1]));
        assert!(*homes.last().unwrap() / 8 < s.total);
        // Every chunk of about a cylinder ends with whole tracks of spare blocks.
        let longest_track = d.layout().zone_table().iter().map(|z| u64::from(z.2)).max().unwrap().div_ceil(8);
        assert!(p.chunk_blocks - p.homes_per_chunk >= 2 * longest_track, "{} of {}", p.homes_per_chunk, p.chunk_blocks);
    }

    /// Completes `io` at its candidate `chosen`.
    fn finish(p: &mut RequestRangeWrites, d: &Disk, io: &PhysIo, chosen: usize) {
        let mut submitted = Vec::new();
        let mut ctx = LayoutCtx::new(d, freeblock_disk::HeadState { cylinder: 0, surface: 0 }, 0, &mut submitted);
        let done = Completed { io, chosen, lbn: io.starts[chosen], access: None, time: 1, request: None, choice: None };
        p.complete(&mut ctx, &done).unwrap();
    }

    fn translate(p: &mut RequestRangeWrites, d: &Disk, id: u64, op: Op, lbn: u64, sectors: u64) -> Vec<PhysIo> {
        let mut submitted = Vec::new();
        let mut ctx = LayoutCtx::new(d, freeblock_disk::HeadState { cylinder: 500, surface: 2 }, 0, &mut submitted);
        let mut out = Vec::new();
        p.translate(&mut ctx, &LogicalIo { id, stream: 0, op, lbn, sectors, write: None }, &mut out).unwrap();
        out
    }

    #[test]
    fn a_write_longer_than_a_track_is_offered_in_pieces_that_cover_it_in_order() {
        let d = disk();
        let mut p = RequestRangeWrites::new(&d, RangeWritesConfig::default()).unwrap();
        // 1 MiB: 256 blocks, more than four candidates of it fit on any track.
        let pieces = translate(&mut p, &d, 1, Op::Write, 8 * 4000, 2048);
        assert!(pieces.len() > 1, "{} pieces", pieces.len());
        let carried: Vec<u64> = pieces.iter().flat_map(|io| p.carried_blocks(io.tag).unwrap()).collect();
        assert_eq!(carried, (4000..4256).collect::<Vec<_>>());
        for io in &pieces {
            assert_eq!(io.sectors, p.carried_blocks(io.tag).unwrap().len() as u64 * 8);
            assert!(io.sectors * 4 <= p.longest_track_blocks * 8 * 4, "each piece fits its candidates on a track");
        }
        for io in &pieces {
            finish(&mut p, &d, io, io.starts.len() - 1);
        }
        // Read back: every block where its piece went.
        let reads = translate(&mut p, &d, 2, Op::Read, 8 * 4000, 2048);
        let read_at: Vec<u64> = reads.iter().flat_map(|io| (0..io.sectors / 8).map(move |k| io.starts[0] + k * 8)).collect();
        let written_at: Vec<u64> = pieces.iter().flat_map(|io| (0..io.sectors / 8).map(move |k| io.starts[io.starts.len() - 1] + k * 8)).collect();
        assert_eq!(read_at, written_at);
        assert_eq!(p.map.stats().reserved, 0, "the unchosen candidates went back");
    }

    #[test]
    fn a_recovered_map_holds_the_completed_writes_and_none_in_flight() {
        let d = disk();
        let mut p = RequestRangeWrites::new(&d, RangeWritesConfig::default()).unwrap().carrying_bytes().unwrap();
        let done = translate(&mut p, &d, 1, Op::Write, 8 * 100, 32);
        for io in &done {
            finish(&mut p, &d, io, 1);
        }
        let went: Vec<u64> = done.iter().flat_map(|io| (0..io.sectors / 8).map(move |k| io.starts[1] + 8 * k)).collect();
        // Written again, but the server dies before this write completes.
        let lost = translate(&mut p, &d, 2, Op::Write, 8 * 100, 8);
        let storage = p.journal_storage().unwrap().clone();
        let (q, _) = RequestRangeWrites::recover(&d, RangeWritesConfig::default(), storage).unwrap();
        assert_eq!((0..4).map(|k| q.location(100 + k)).collect::<Vec<_>>(), went);
        assert_eq!(q.location(5000), q.home(5000), "never written: at its home");
        assert!(q.map.is_free(lost[0].starts[0], 8), "the lost write's offer is free again");
        assert_eq!(q.map.stats().reserved, 0);
        assert!(q.map.is_free(q.home(100), 8), "the written block's home is spare");
        // Another disk's map is refused by name.
        let other = Disk::new(library::get("atlas10k").unwrap().without_cache()).unwrap();
        let e = RequestRangeWrites::recover(&other, RangeWritesConfig::default(), p.journal_storage().unwrap().clone()).unwrap_err().to_string();
        assert!(e.starts_with("layout:"), "{e}");
    }

    #[test]
    fn a_block_a_read_in_flight_still_reads_is_not_offered_until_it_is_done() {
        let d = disk();
        let mut p = RequestRangeWrites::new(&d, RangeWritesConfig::default()).unwrap().carrying_bytes().unwrap();
        let first = translate(&mut p, &d, 1, Op::Write, 8 * 7, 8);
        finish(&mut p, &d, &first[0], 0);
        let old = first[0].starts[0];
        let read = translate(&mut p, &d, 2, Op::Read, 8 * 7, 8);
        assert_eq!(read[0].starts, vec![old]);
        let second = translate(&mut p, &d, 3, Op::Write, 8 * 7, 8);
        finish(&mut p, &d, &second[0], 0);
        assert!(!p.map.is_free(old, 8), "fenced while the read runs");
        finish(&mut p, &d, &read[0], 0);
        assert!(p.map.is_free(old, 8), "free once the read is done");
    }
}
