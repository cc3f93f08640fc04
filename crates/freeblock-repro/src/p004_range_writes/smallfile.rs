//! A small-file workload in the spirit of PostMark: streams of transactions that create, append
//! to, read and delete files of a few KB, with every new block placed by the range-write
//! allocator.
//!
//! PostMark (Katcher, NetApp TR3022, 1997) models mail and news servers: a pool of small files
//! and a run of transactions, each one *read or append* followed by *create or delete*. Here:
//!
//! ```text
//!  initial pool: initial_files_per_stream files per stream, min..=max_file_blocks blocks each,
//!                laid down (without I/O) at random spots in the first initial_area of the disk
//!  transaction:  ┌ read a random file of the stream  (one read per contiguous piece)  p = read_bias
//!                └ or append one block to one       (one write, candidates from the allocator)
//!                ┌ create a file                    (one write of the whole file)    p = create_bias
//!                └ or delete one                    (no I/O: its blocks go back to free space)
//! ```
//!
//! Each stream owns its files, has its own random sequence and keeps one I/O outstanding, so the
//! *logical* work (which files, what sizes, in what order) is the same whatever the disk does; only
//! where the blocks land and how long it takes depend on the [`CandidatePolicy`] and the
//! scheduler. Every create and append asks the allocator for candidates near where the heads are
//! at the time of issue: `k` spread round the nearest cylinder with room
//! ([`offer_equidistant_on_cylinder`]; `k = 1` is an ordinary write, the baseline), or free ranges
//! on the nearest tracks ([`offer_ranges_near`]). A read goes to wherever the block map says the
//! file lives. A file occupies one fixed slot of `slot_blocks` logical blocks; an append to a full
//! slot becomes a read of the file.

use std::collections::VecDeque;

use freeblock_disk::Disk;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use freeblock::layout::alloc::{offer_equidistant_on_cylinder, offer_ranges_near};
use freeblock::layout::map::{BlockMap, Candidates, MapConfig, WriteRequest};
use freeblock::layout::error::{LayoutError, Result};
use freeblock::layout::streams::{IssueContext, StreamIo, StreamWorkload};

/// Where a new write may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CandidatePolicy {
    /// `k` candidates spread round the cylinder nearest the heads; `k = 1` is an ordinary write.
    Cylinder {
        /// Candidates per write.
        k: u32,
    },
    /// Up to `max_ranges` free block-aligned ranges on the tracks nearest the heads (OSDI 2008).
    Ranges {
        /// Ranges per write.
        max_ranges: usize,
    },
}

impl CandidatePolicy {
    /// No range writes: one candidate.
    pub const NONE: Self = CandidatePolicy::Cylinder { k: 1 };
}

impl std::fmt::Display for CandidatePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CandidatePolicy::Cylinder { k: 1 } => f.write_str("1 candidate"),
            CandidatePolicy::Cylinder { k } => write!(f, "{k} candidates"),
            CandidatePolicy::Ranges { max_ranges } => write!(f, "{max_ranges} ranges"),
        }
    }
}

/// Parameters of the small-file workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SmallFileConfig {
    /// Closed-loop streams (outstanding requests). Default 16.
    pub streams: u32,
    /// Transactions each stream runs. Default 600.
    pub transactions_per_stream: u64,
    /// Files each stream starts with. Default 40.
    pub initial_files_per_stream: u32,
    /// Smallest new file, blocks. Default 1.
    pub min_file_blocks: u64,
    /// Largest new file, blocks. Default 4 (16 KB).
    pub max_file_blocks: u64,
    /// Logical blocks reserved per file (appends stop there). Default 16.
    pub slot_blocks: u64,
    /// Sectors per block. Default 8 (4 KB).
    pub block_sectors: u64,
    /// Share of transactions whose first half is a read (the rest append). Default 0.5.
    pub read_bias: f64,
    /// Share of transactions whose second half is a create (the rest delete). Default 0.5.
    pub create_bias: f64,
    /// Fraction of the disk (from LBN 0) the initial files are scattered over. Default 0.1.
    pub initial_area: f64,
    /// Random seed. Default 2008.
    pub seed: u64,
}

impl Default for SmallFileConfig {
    fn default() -> Self {
        Self {
            streams: 16,
            transactions_per_stream: 600,
            initial_files_per_stream: 40,
            min_file_blocks: 1,
            max_file_blocks: 4,
            slot_blocks: 16,
            block_sectors: 8,
            read_bias: 0.5,
            create_bias: 0.5,
            initial_area: 0.1,
            seed: 2008,
        }
    }
}

impl SmallFileConfig {
    fn check(&self) -> Result<()> {
        let bad = |field: &'static str, message: &str| Err(LayoutError::Config { field, message: message.into() });
        if self.streams == 0 {
            return bad("streams", "at least one stream is needed");
        }
        if self.block_sectors == 0 {
            return bad("block_sectors", "must be at least 1");
        }
        if self.min_file_blocks == 0 || self.min_file_blocks > self.max_file_blocks {
            return bad("min_file_blocks", "need 1 <= min_file_blocks <= max_file_blocks");
        }
        if self.max_file_blocks > self.slot_blocks {
            return bad("slot_blocks", "a slot must hold the largest new file");
        }
        for (field, p) in [("read_bias", self.read_bias), ("create_bias", self.create_bias)] {
            if !(0.0..=1.0).contains(&p) {
                return bad(field, "must be a probability in 0..=1");
            }
        }
        if !(self.initial_area > 0.0 && self.initial_area <= 1.0) {
            return bad("initial_area", "must be a fraction in (0, 1]");
        }
        Ok(())
    }

    /// Transactions over all streams.
    #[must_use]
    pub fn transactions(&self) -> u64 {
        u64::from(self.streams) * self.transactions_per_stream
    }
}

/// One step of a stream's current transaction.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Read the whole file (expands into one read per contiguous piece).
    ReadFile { first: u64, blocks: u64 },
    /// Read one contiguous piece.
    ReadPiece { first: u64, blocks: u64 },
    /// Write blocks of a file (a create writes them all, an append one).
    Write { first: u64, blocks: u64 },
    /// Free a file's blocks.
    Delete { first: u64, blocks: u64 },
}

#[derive(Debug, Clone, Copy)]
struct File {
    slot: u64,
    blocks: u64,
}

#[derive(Debug)]
struct Stream {
    rng: ChaCha8Rng,
    files: Vec<File>,
    free_slots: Vec<u64>,
    steps: VecDeque<Step>,
    left: u64,
    in_transaction: bool,
}

/// The workload; see the [module docs](self). Build with [`SmallFileWorkload::new`], which also
/// lays the initial files into the block map.
#[derive(Debug)]
pub struct SmallFileWorkload {
    cfg: SmallFileConfig,
    policy: CandidatePolicy,
    streams: Vec<Stream>,
    finished: u64,
}

/// A block map covering the whole disk in the workload's blocks.
#[must_use]
pub fn smallfile_map_config(disk: &Disk, cfg: &SmallFileConfig) -> MapConfig {
    MapConfig::for_disk(disk, cfg.block_sectors)
}

impl SmallFileWorkload {
    /// Sets the workload up on `map` (which must be empty and use the workload's block size):
    /// lays down every stream's initial files at random free spots of the initial area, directly
    /// in the map (no I/O).
    ///
    /// # Errors
    /// [`LayoutError::Config`] for bad parameters or a map of another block size;
    /// [`LayoutError::NoSpace`] when the initial files do not fit.
    pub fn new(cfg: &SmallFileConfig, policy: CandidatePolicy, map: &mut BlockMap) -> Result<Self> {
        cfg.check()?;
        if map.block_sectors() != cfg.block_sectors {
            return Err(LayoutError::Config {
                field: "block_sectors",
                message: format!(
                    "the map has {}-sector blocks, the workload {}",
                    map.block_sectors(),
                    cfg.block_sectors
                ),
            });
        }
        let slots = map.config().logical_blocks / cfg.slot_blocks;
        let per_stream = slots / u64::from(cfg.streams);
        if per_stream <= u64::from(cfg.initial_files_per_stream) {
            return Err(LayoutError::NoSpace { what: format!("{} file slots per stream", per_stream) });
        }
        let mut streams: Vec<Stream> = (0..cfg.streams)
            .map(|s| Stream {
                rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ (u64::from(s) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                files: Vec::new(),
                // Stream s owns slots s, s + streams, …; popped from the end, lowest first.
                free_slots: (0..per_stream).rev().map(|i| i * u64::from(cfg.streams) + u64::from(s)).collect(),
                steps: VecDeque::new(),
                left: cfg.transactions_per_stream,
                in_transaction: false,
            })
            .collect();
        // The initial pool, file by file round the streams, each at a random free spot.
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let region = map.region();
        let bs = cfg.block_sectors;
        let area_blocks = ((region.sectors as f64 * cfg.initial_area) as u64 / bs).max(1);
        for _ in 0..cfg.initial_files_per_stream {
            for stream in &mut streams {
                let blocks = rng.gen_range(cfg.min_file_blocks..=cfg.max_file_blocks);
                let slot = stream.free_slots.pop().expect("checked above");
                let need = blocks * bs;
                let mut placed = false;
                for _ in 0..10_000 {
                    let start = region.start + rng.gen_range(0..area_blocks) * bs;
                    if start + need <= region.end() && map.is_free(start, need) {
                        let req = WriteRequest {
                            logical: slot * cfg.slot_blocks,
                            blocks,
                            candidates: Candidates::single(start),
                        };
                        map.write(&req, start)?;
                        placed = true;
                        break;
                    }
                }
                if !placed {
                    return Err(LayoutError::NoSpace { what: "the initial files in the initial area".into() });
                }
                stream.files.push(File { slot, blocks });
            }
        }
        Ok(Self { cfg: cfg.clone(), policy, streams, finished: 0 })
    }

    /// Transactions finished so far.
    #[must_use]
    pub fn finished(&self) -> u64 {
        self.finished
    }

    /// Draws the next transaction of a stream and queues its steps (the stream's logical file list
    /// changes now; the I/Os follow).
    fn draw_transaction(cfg: &SmallFileConfig, s: &mut Stream) {
        let first = |f: &File| f.slot * cfg.slot_blocks;
        // First half: read or append.
        if !s.files.is_empty() {
            let i = s.rng.gen_range(0..s.files.len());
            let read = s.rng.gen_bool(cfg.read_bias);
            let f = &mut s.files[i];
            if read || f.blocks == cfg.slot_blocks {
                s.steps.push_back(Step::ReadFile { first: first(f), blocks: f.blocks });
            } else {
                s.steps.push_back(Step::Write { first: first(f) + f.blocks, blocks: 1 });
                f.blocks += 1;
            }
        }
        // Second half: create or delete.
        let create = s.rng.gen_bool(cfg.create_bias);
        if (create || s.files.is_empty()) && !s.free_slots.is_empty() {
            let blocks = s.rng.gen_range(cfg.min_file_blocks..=cfg.max_file_blocks);
            let slot = s.free_slots.pop().expect("checked");
            s.files.push(File { slot, blocks });
            s.steps.push_back(Step::Write { first: slot * cfg.slot_blocks, blocks });
        } else if !s.files.is_empty() {
            let i = s.rng.gen_range(0..s.files.len());
            let f = s.files.swap_remove(i);
            s.free_slots.push(f.slot);
            s.steps.push_back(Step::Delete { first: first(&f), blocks: f.blocks });
        }
    }
}

/// Splits logical blocks `first..first + blocks` into maximal pieces whose first copies are
/// physically contiguous: one read each.
fn contiguous_pieces(map: &BlockMap, first: u64, blocks: u64) -> Result<Vec<(u64, u64)>> {
    let bs = map.block_sectors();
    let mut pieces: Vec<(u64, u64)> = Vec::new();
    let mut prev: Option<u64> = None;
    for l in first..first + blocks {
        let at = map.read(l).ok_or(LayoutError::NotMapped { logical: l })?.copies[0];
        match (pieces.last_mut(), prev) {
            (Some(p), Some(q)) if at == q + bs => p.1 += 1,
            _ => pieces.push((l, 1)),
        }
        prev = Some(at);
    }
    Ok(pieces)
}

impl StreamWorkload for SmallFileWorkload {
    fn streams(&self) -> u32 {
        self.cfg.streams
    }

    fn next_io(&mut self, stream: u32, ctx: &mut IssueContext<'_>) -> Result<Option<StreamIo>> {
        let s = &mut self.streams[stream as usize];
        loop {
            match s.steps.pop_front() {
                Some(Step::ReadFile { first, blocks }) => {
                    for (i, (l, n)) in contiguous_pieces(ctx.map, first, blocks)?.into_iter().enumerate() {
                        s.steps.insert(i, Step::ReadPiece { first: l, blocks: n });
                    }
                }
                Some(Step::ReadPiece { first, blocks }) => return Ok(Some(StreamIo::Read { logical: first, blocks })),
                Some(Step::Write { first, blocks }) => {
                    let candidates = match self.policy {
                        CandidatePolicy::Cylinder { k } => {
                            offer_equidistant_on_cylinder(ctx.map, ctx.disk, ctx.head, k, blocks)?.1
                        }
                        CandidatePolicy::Ranges { max_ranges } => {
                            offer_ranges_near(ctx.map, ctx.disk, ctx.head, blocks, self.cfg.block_sectors, max_ranges)?
                        }
                    };
                    return Ok(Some(StreamIo::Write(WriteRequest { logical: first, blocks, candidates })));
                }
                Some(Step::Delete { first, blocks }) => {
                    ctx.map.trim(first, blocks)?;
                }
                None => {
                    if s.in_transaction {
                        s.in_transaction = false;
                        self.finished += 1;
                    }
                    if s.left == 0 {
                        return Ok(None);
                    }
                    s.left -= 1;
                    s.in_transaction = true;
                    Self::draw_transaction(&self.cfg, s);
                }
            }
        }
    }

    fn operations(&self) -> u64 {
        self.finished
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use freeblock_disk::library;

    #[test]
    fn the_initial_pool_is_laid_down_and_deterministic() {
        let d = Disk::new(library::get("hp_c2247a").unwrap().without_cache()).unwrap();
        let cfg = SmallFileConfig { initial_files_per_stream: 10, ..SmallFileConfig::default() };
        let mut a = BlockMap::new(smallfile_map_config(&d, &cfg)).unwrap();
        let mut b = a.clone();
        SmallFileWorkload::new(&cfg, CandidatePolicy::NONE, &mut a).unwrap();
        SmallFileWorkload::new(&cfg, CandidatePolicy::Cylinder { k: 8 }, &mut b).unwrap();
        assert_eq!(a, b, "the pool does not depend on the policy");
        assert_eq!(a.stats().mapped, a.stats().live);
        assert!(a.stats().live >= 160 && a.stats().live <= 640);
        let area = (d.capacity() as f64 * 0.1) as u64;
        assert!(a.mapped().all(|(_, loc)| loc.copies[0] < area + 32));
        a.check().unwrap();
        let e = SmallFileWorkload::new(&SmallFileConfig { read_bias: 1.5, ..cfg }, CandidatePolicy::NONE, &mut a)
            .unwrap_err();
        assert_eq!(e.to_string(), "read_bias: must be a probability in 0..=1");
    }
}
