//! The `scattered_files` workload: files whose blocks lie scattered over a mostly full disk, read
//! again and again in the same order — the access pattern FS2 (paper 003: Huang et al., *FS2:
//! Dynamic Data Replication in Free Disk Space*) was built for.
//!
//! Paper 003's runs share one shape: a file system on a disk that has been in use, so files are
//! split over block groups far apart, and an application that reads the same files in the same
//! order each time it runs, so the head travels back and forth between a few regions:
//!
//! | paper 003 run | what it does | how this workload stands in |
//! |---|---|---|
//! | `cvs update` (§4.4, Table 3; Fig. 1) | the working copy and the repository sit in two regions; files of each are read in turn | `regions = 2`, one request at a time, no think time (the disk was 82% busy) |
//! | TPC-W (§4.3, Table 2) | database files split into segments in several block groups, web images elsewhere | `regions` of 3–6, a think time (`think_time_ms`) so the disk is busy about 30% of the time |
//! | SURGE web server, `startx` (§4.5–4.6, Tables 4–5) | the same static files (or binaries and libraries) read on every run | several regions, writes off, think time for a lightly loaded disk |
//!
//! ## The model
//!
//! ```text
//!  disk: │ group 0          │ group 1          │ …  │ group g          │ …
//!        │ used ████████░░░ │ used ████████░░░ │    │ used ████████░░░ │     ░ = free tail
//!                ▲ region r: `region_groups` consecutive groups at a random place on the disk
//!  file f: extent ─► region 3, extent ─► region 0, extent ─► region 3 …  (each ≤ extent_blocks)
//!  a pass: file 0's extents, file 1's, …, file n−1's, split into requests ≤ request_blocks
//!  the run: pass, pass, … (`passes` times, the same LBNs in the same order; some requests writes)
//! ```
//!
//! | piece | rule | parameters (defaults) |
//! |---|---|---|
//! | blocks | the disk is cut into blocks of `block_sectors`; requests cover whole blocks | `block_sectors` (8: ext2's 4 KB) |
//! | block groups | groups of `group_blocks` blocks; the first `fill_fraction` of each is occupied, the rest is free (the free space FS2 may fill) | `group_blocks` (32 768: ext2's 128 MB), `fill_fraction` (0.9) |
//! | regions | `regions` areas of `region_groups` consecutive groups each, at distinct places drawn uniformly within a span of `spread` of the disk (itself at a place drawn uniformly) | `regions` (4), `region_groups` (2), `spread` (1: the whole disk) |
//! | files | `files` files of ⌈Exp(`mean_file_blocks`)⌉ blocks each, at most `max_file_blocks` | `files` (200), `mean_file_blocks` (8), `max_file_blocks` (256) |
//! | scattering | a file is cut into extents of `extent_blocks` blocks (the last may be shorter); each extent goes to a region drawn uniformly and to a free slot of the occupied area drawn uniformly in it, so no two extents overlap | `extent_blocks` (4) |
//! | a pass | every file in order, each extent read with requests of at most `request_blocks` blocks | `request_blocks` (16: 64 KB) |
//! | repetition | `passes` passes, all with the same LBNs in the same order | `passes` (10) |
//! | writes | each request of each pass is a write of the same blocks with probability `write_fraction` (drawn per pass) | `write_fraction` (0.05) |
//! | arrivals | closed: the simulator's tasks issue the next request when the last is done, after `think_time_ms` | `think_time_ms` (0) |
//! | Ext2 shape | `placement = "ext2"`: a region is a directory; its files lie one after another in its groups' data blocks (after 260 blocks of group metadata), in pieces of at most `extent_blocks` with holes of 1..=`gap_blocks` between pieces and between files (an aged disk) | `placement` (`scattered`), `gap_blocks` (0) |
//! | inodes | `inode_reads`: the file's inode-table block (its group's, 32 inodes a block) is read before the file unless it was the last inode block read | `inode_reads` (false) |
//! | skew, order, writes | `dominant_share` of the files go to the first region (one dominant directory); `shuffle_files` reads the files in a new random order each pass, `fixed_order` in one random order drawn once (a program's order, not the allocator's); only a `written_files` share of the files are ever written | `dominant_share` (0), `shuffle_files` (false), `fixed_order` (false), `written_files` (1) |
//! | a database | `placement = "database"` (TPC-W, §4.3.1): `db_files` files of `db_file_blocks` grown together `extent_blocks` at a time, `db_group_blocks` in each group Ext2's quadratic hash picks (g, g+1, g+3, g+7, …); each of the `files` queries reads an index page and its row's data page (`page_blocks`, places drawn once), then a web image file laid out as `ext2` does | `db_files` (4), `db_file_blocks` (10 240), `db_group_blocks` (8 192), `page_blocks` (4) |
//!
//! Everything is drawn from one [`ChaCha8Rng`] seeded from the seed given to `build`, in a fixed
//! order (the span, the regions, then per file its size and per extent its region and slot, then per pass per
//! request read or write), so the same spec, capacity and seed give the same requests.
//! [`ScatteredFilesSpec::plan`] hands the layout out (files, free space) for a layout policy or
//! a reproduction to use.

use rand::seq::index::sample;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::request::Request;
use freeblock_disk::{Op, SimTime};

use super::{ArrivalKind, Workload, WorkloadError};

/// Most files a spec may have (each keeps its extents in memory).
pub const MAX_FILES: u32 = 1_000_000;
/// Most passes a spec may have.
pub const MAX_PASSES: u32 = 1_000_000;

fn default_files() -> u32 {
    200
}
fn default_mean_file_blocks() -> f64 {
    8.0
}
fn default_max_file_blocks() -> u32 {
    256
}
fn default_block_sectors() -> u32 {
    8
}
fn default_group_blocks() -> u64 {
    32_768
}
fn default_fill_fraction() -> f64 {
    0.9
}
fn default_regions() -> u32 {
    4
}
fn default_region_groups() -> u32 {
    2
}
fn default_spread() -> f64 {
    1.0
}
fn default_extent_blocks() -> u32 {
    4
}
fn default_request_blocks() -> u32 {
    16
}
fn default_passes() -> u32 {
    10
}
fn default_write_fraction() -> f64 {
    0.05
}

/// Files scattered over a mostly full disk, read again and again in the same order (paper 003's
/// pattern). See the [module documentation](self) for the model and which paper runs it stands
/// in for.
///
/// ```toml
/// [workload]
/// type = "scattered_files"
/// files = 200
/// passes = 10
/// # regions = 4               # areas of the disk the files are spread over (2: cvs update)
/// # region_groups = 2         # block groups per region
/// # spread = 1.0              # share of the disk the regions lie within
/// # mean_file_blocks = 8      # file size: ceil(Exp(mean)) blocks, at most max_file_blocks
/// # max_file_blocks = 256
/// # extent_blocks = 4         # largest contiguous piece of a file
/// # request_blocks = 16       # largest request
/// # block_sectors = 8         # 4 KB blocks
/// # group_blocks = 32768      # 128 MB block groups
/// # fill_fraction = 0.9       # occupied share of each group; the rest is free space
/// # write_fraction = 0.05
/// # think_time_ms = 0
/// ```
///
/// ```
/// use freeblock::workload::{ScatteredFilesSpec, Workload};
/// let spec = ScatteredFilesSpec { files: 20, passes: 3, ..ScatteredFilesSpec::default() };
/// let plan = spec.plan(156_301_488, 7).unwrap();
/// let mut w = spec.build(156_301_488, 7).unwrap();
/// let mut lbns = Vec::new();
/// while let Some(r) = w.next_request().unwrap() {
///     lbns.push(r.lbn);
/// }
/// assert_eq!(lbns.len(), 3 * plan.pass.len());
/// assert_eq!(lbns[..plan.pass.len()], lbns[plan.pass.len()..2 * plan.pass.len()]);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScatteredFilesSpec {
    /// Number of files (1 to [`MAX_FILES`]). Default 200.
    #[serde(default = "default_files")]
    pub files: u32,
    /// Mean file size, blocks (≥ 1): sizes are ⌈Exp(mean)⌉. Default 8 (32 KB).
    #[serde(default = "default_mean_file_blocks")]
    pub mean_file_blocks: f64,
    /// Largest file, blocks (≥ 1). Default 256 (1 MB).
    #[serde(default = "default_max_file_blocks")]
    pub max_file_blocks: u32,
    /// Block size, sectors (≥ 1). Default 8 (4 KB).
    #[serde(default = "default_block_sectors")]
    pub block_sectors: u32,
    /// Block group size, blocks (at least `extent_blocks`). Default 32 768 (128 MB).
    #[serde(default = "default_group_blocks")]
    pub group_blocks: u64,
    /// Occupied share of each block group, in (0, 1]; the rest of the group is free. Default 0.9.
    #[serde(default = "default_fill_fraction")]
    pub fill_fraction: f64,
    /// Regions the files are spread over (≥ 1). Default 4.
    #[serde(default = "default_regions")]
    pub regions: u32,
    /// Consecutive block groups per region (≥ 1). Default 2.
    #[serde(default = "default_region_groups")]
    pub region_groups: u32,
    /// Share of the disk the regions lie within, in (0, 1] (at least room for the regions).
    /// Default 1: anywhere on the disk; smaller keeps the head's travel between regions short.
    #[serde(default = "default_spread")]
    pub spread: f64,
    /// Largest contiguous piece of a file, blocks (≥ 1). Default 4.
    #[serde(default = "default_extent_blocks")]
    pub extent_blocks: u32,
    /// Largest request, blocks (≥ 1). Default 16 (64 KB).
    #[serde(default = "default_request_blocks")]
    pub request_blocks: u32,
    /// Times the files are read, in the same order (1 to [`MAX_PASSES`]). Default 10.
    #[serde(default = "default_passes")]
    pub passes: u32,
    /// Probability that a request is a write of its blocks, in [0, 1]. Default 0.05.
    #[serde(default = "default_write_fraction")]
    pub write_fraction: f64,
    /// Think time between a task's completion and its next request, ms (≥ 0). Default 0.
    #[serde(default)]
    pub think_time_ms: f64,
    /// Where files go: `scattered` (the default: every extent at a random slot of a random
    /// region) or `ext2` (a region is a directory: its files one after another in its groups).
    #[serde(default)]
    pub placement: Placement,
    /// `ext2` only: most free blocks left between two files of a directory (an aged file
    /// system's holes; each gap uniform in 0..=this). Default 0.
    #[serde(default)]
    pub gap_blocks: u32,
    /// Read the block of the group's inode table that holds a file's inode before the file
    /// (when it is not the inode block read last). Default false.
    #[serde(default)]
    pub inode_reads: bool,
    /// Share of the files in the first region drawn (a dominant directory), in [0, 1); 0 (the
    /// default) spreads files uniformly over the regions.
    #[serde(default)]
    pub dominant_share: f64,
    /// Each pass reads the files in a new random order (file-level random order, as a web or
    /// database server serves them). Default false: the same order every pass.
    #[serde(default)]
    pub shuffle_files: bool,
    /// Read the files in one random order drawn once, the same every pass: the order a program
    /// asks for them (CVS walks a directory's names sorted; a program loads what it needs),
    /// which is not the order Ext2 laid them out. Default false (allocation order).
    #[serde(default)]
    pub fixed_order: bool,
    /// Read only each file's first this many blocks (`cvs update` reads an RCS file's header
    /// for its head revision, not the whole file); 0 (the default): the whole file.
    #[serde(default)]
    pub head_blocks: u32,
    /// Share of the files that are ever written, in (0, 1]: `write_fraction` applies to their
    /// requests only. Default 1 (every file).
    #[serde(default = "default_written_files")]
    pub written_files: f64,
    /// `database` only: the database's files (≥ 2, even: an index and its table per pair).
    /// Default 4.
    #[serde(default = "default_db_files")]
    pub db_files: u32,
    /// `database` only: size of each database file, blocks. Default 10 240 (40 MB).
    #[serde(default = "default_db_file_blocks")]
    pub db_file_blocks: u64,
    /// `database` only: blocks the database took in each block group it grew into (the room an
    /// aged group had left), at the end of the group's occupied share. Default 8 192 (32 MB).
    #[serde(default = "default_db_group_blocks")]
    pub db_group_blocks: u64,
    /// `database` only: the database's page, blocks (a divisor of `extent_blocks`). Default 4
    /// (16 KB, InnoDB's page).
    #[serde(default = "default_page_blocks")]
    pub page_blocks: u32,
}

fn default_written_files() -> f64 {
    1.0
}
fn default_db_files() -> u32 {
    4
}
fn default_db_file_blocks() -> u64 {
    10_240
}
fn default_db_group_blocks() -> u64 {
    8_192
}
fn default_page_blocks() -> u32 {
    4
}

/// How a [`ScatteredFilesSpec`] places files in their regions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Every extent of `extent_blocks` at a random free slot of a random region.
    #[default]
    Scattered,
    /// Ext2's allocator on an aged disk: a region is a directory; its files are laid one after
    /// another (each contiguous, `gap_blocks` holes between them) from a random place in the
    /// region's first group, running on into its next groups.
    Ext2,
    /// A database server on Ext2 (paper 003 §4.3.1, TPC-W on MySQL): `db_files` large files
    /// that grew together, `extent_blocks` at a time, through the groups Ext2's quadratic hash
    /// picks when a group is full (the first region's first group g, then g+1, g+3, g+7, …), so
    /// each file lies in segments several groups apart; each of the `files` units is a query —
    /// an index page then its row's data page (pages of `page_blocks` at places drawn once, so
    /// the query reads the same pages every pass) — followed by a web image file laid out as
    /// `ext2` lays out files.
    Database,
}

/// Blocks at the start of every group before its data (ext2: superblock copy, descriptors,
/// bitmaps and the inode table: 8192 inodes of 128 bytes per 128 MB group is 256 blocks).
pub const GROUP_METADATA_BLOCKS: u64 = 260;
/// Inodes per 4 KB inode-table block (128-byte inodes).
pub const INODES_PER_BLOCK: u64 = 32;

impl Default for ScatteredFilesSpec {
    fn default() -> Self {
        Self {
            files: default_files(),
            mean_file_blocks: default_mean_file_blocks(),
            max_file_blocks: default_max_file_blocks(),
            block_sectors: default_block_sectors(),
            group_blocks: default_group_blocks(),
            fill_fraction: default_fill_fraction(),
            regions: default_regions(),
            region_groups: default_region_groups(),
            spread: default_spread(),
            extent_blocks: default_extent_blocks(),
            request_blocks: default_request_blocks(),
            passes: default_passes(),
            write_fraction: default_write_fraction(),
            think_time_ms: 0.0,
            placement: Placement::Scattered,
            gap_blocks: 0,
            inode_reads: false,
            dominant_share: 0.0,
            shuffle_files: false,
            fixed_order: false,
            head_blocks: 0,
            written_files: 1.0,
            db_files: default_db_files(),
            db_file_blocks: default_db_file_blocks(),
            db_group_blocks: default_db_group_blocks(),
            page_blocks: default_page_blocks(),
        }
    }
}

/// A run of contiguous sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Extent {
    /// First sector.
    pub lbn: u64,
    /// Length, sectors.
    pub sectors: u64,
}

impl Extent {
    /// One past the last sector.
    #[must_use]
    pub fn end(&self) -> u64 {
        self.lbn + self.sectors
    }
}

/// Where a [`ScatteredFilesSpec`] put everything on a disk, for a given seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilePlan {
    /// Each file's extents, in file order.
    pub files: Vec<Vec<Extent>>,
    /// The regions, in the order drawn (each `region_groups` whole groups).
    pub regions: Vec<Extent>,
    /// Free space: the tail of every block group past its occupied share, in disk order.
    pub free: Vec<Extent>,
    /// One pass in file order: the requests' (first sector, sectors), in order.
    pub pass: Vec<Extent>,
    /// Each file's requests, in file order.
    pub file_requests: Vec<Vec<Extent>>,
    /// Each file's inode-table block (read before the file with `inode_reads`).
    pub inodes: Vec<Extent>,
    /// Whether each file is ever written.
    pub writable: Vec<bool>,
    /// `database` placement: each database file's extents in file order (empty otherwise);
    /// `files` then holds the web image files, one per query.
    pub database: Vec<Vec<Extent>>,
}

impl FilePlan {
    /// Free sectors in all.
    #[must_use]
    pub fn free_sectors(&self) -> u64 {
        self.free.iter().map(|e| e.sectors).sum()
    }
}

fn invalid(field: &str, message: impl Into<String>) -> WorkloadError {
    WorkloadError::invalid(field, message)
}

/// Which of paper 003's runs a [`ScatteredFilesSpec::paper003`] preset stands in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Paper003Run {
    /// TPC-W (§4.3, Table 2): Ext2 busy 31%, access 8.2 ms (3.8 seek, 4.3 rotation), 90 mJ.
    Tpcw,
    /// `cvs update` (§4.4, Table 3): Ext2 busy 82%.
    CvsUpdate,
    /// `startx` (§4.5, Table 4): Ext2 busy 37%.
    Startx,
    /// SURGE web server (§4.6, Table 5): Ext2 busy 13%.
    Surge,
}

impl Paper003Run {
    /// All four, in the paper's order.
    pub const ALL: [Paper003Run; 4] = [Paper003Run::Tpcw, Paper003Run::CvsUpdate, Paper003Run::Startx, Paper003Run::Surge];

    /// Short name (`tpcw`, `cvs`, `startx`, `surge`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Paper003Run::Tpcw => "tpcw",
            Paper003Run::CvsUpdate => "cvs",
            Paper003Run::Startx => "startx",
            Paper003Run::Surge => "surge",
        }
    }

    /// The share of time the paper's disk was busy on Ext2 (the table captions).
    #[must_use]
    pub fn ext2_busy(self) -> f64 {
        match self {
            Paper003Run::Tpcw => 0.31,
            Paper003Run::CvsUpdate => 0.82,
            Paper003Run::Startx => 0.37,
            Paper003Run::Surge => 0.13,
        }
    }
}

impl ScatteredFilesSpec {
    /// A preset with the shape of one of paper 003's runs, for the WD 80 GB drive (`wd800`): 7
    /// passes (the paper reports the 7th run), regions within a tenth of the disk, and a think
    /// time chosen so that the disk is about as busy as the paper's was on Ext2. The file
    /// counts and sizes are ours (the paper does not give them): TPC-W has a few large database
    /// files in five regions with 10% writes; `cvs update` many small files in two regions (the
    /// working copy and the repository) with 5% writes; `startx` binaries and libraries in four
    /// regions; SURGE many small static files in three, read-only. On `wd800` the TPC-W preset
    /// gives Ext2's access breakdown: about 8.2 ms, 3.5 ms of seek, 4.1 of rotation.
    #[must_use]
    pub fn paper003_scattered(run: Paper003Run) -> Self {
        let base = Self { passes: 7, spread: 0.1, ..Self::default() };
        match run {
            Paper003Run::Tpcw => Self { regions: 5, files: 300, mean_file_blocks: 16.0, extent_blocks: 8, write_fraction: 0.1, think_time_ms: 18.0, ..base },
            Paper003Run::CvsUpdate => Self { regions: 2, files: 400, mean_file_blocks: 8.0, extent_blocks: 4, write_fraction: 0.05, think_time_ms: 1.5, ..base },
            Paper003Run::Startx => Self { regions: 4, files: 150, mean_file_blocks: 24.0, extent_blocks: 8, write_fraction: 0.0, think_time_ms: 14.0, ..base },
            Paper003Run::Surge => Self { regions: 3, files: 500, mean_file_blocks: 4.0, extent_blocks: 4, write_fraction: 0.0, think_time_ms: 50.0, ..base },
        }
    }

    /// The preset of [`paper003_scattered`](Self::paper003_scattered) shaped like Ext2 on an
    /// aged disk and like each run as §4 describes it (issue 32): each region a directory with
    /// its files one after another (`placement = "ext2"`, holes of up to 8 blocks between
    /// them), the inode-table block read before a file, writes on a fifth of the files only,
    /// and per run: TPC-W a MySQL database whose files span groups at the quadratic hash's
    /// distances, read a page at a time in a new random order of queries each pass
    /// (`placement = "database"`); `cvs update` two regions used alike, each file's first block
    /// (the RCS header) in name order; `startx` one directory with 40% of the files, read in
    /// the programs' order; SURGE two virtual hosts used alike, in the order of its
    /// pre-generated request sequences. The comments at each arm say which sentence of the
    /// paper each choice follows.
    #[must_use]
    pub fn paper003(run: Paper003Run) -> Self {
        let scattered = Self::paper003_scattered(run);
        let ext2 = Self { placement: Placement::Ext2, gap_blocks: 8, inode_reads: true, dominant_share: 0.4, shuffle_files: run == Paper003Run::Tpcw, written_files: 0.2, ..scattered };
        match run {
            // §4.3.1: MySQL's data and index files span several block groups at the quadratic
            // hash's distances, read a page at a time; the web images sit in the database's
            // first group (the region accessed most, §4.3.3). 4 files of 40 MB at 32 MB a group:
            // five groups, g to g+15 (2 GB).
            // The database took 20 MB of each group it grew into, so its 160 MB lie in eight
            // groups from g to g+127 (16 GB): none's seek comes to the paper's Ext2 (3.5 ms
            // against 3.8). No inode reads: mysqld holds its files open and the image inodes
            // stay in the inode cache (the paper's 4.3 ms of rotation is a half revolution:
            // almost every Ext2 access was positioned).
            Paper003Run::Tpcw => Self { placement: Placement::Database, regions: 1, region_groups: 1, files: 600, mean_file_blocks: 4.0, dominant_share: 0.0, inode_reads: false, db_group_blocks: 5120, ..ext2 },
            // §4.4, Fig. 1: the working copy and the repository, two regions used alike (each
            // file is looked at in both); `cvs update` reads an RCS file's header for its head
            // revision, not the file; it walks a directory's names sorted, not in the order
            // Ext2 allocated the files.
            // Think times here and below make `none` as busy as the paper's Ext2 was (82, 37, 13%).
            Paper003Run::CvsUpdate => Self { dominant_share: 0.0, head_blocks: 1, fixed_order: true, think_time_ms: 0.9, ..ext2 },
            // §4.5: binaries, libraries and files loaded in the order the programs need them.
            Paper003Run::Startx => Self { fixed_order: true, think_time_ms: 2.8, ..ext2 },
            // §4.6: two virtual hosts with 200 clients each (two regions used alike); SURGE
            // replays request sequences it generated beforehand (its reference [3]), so each run
            // asks for the files in the same order, which is not the allocator's.
            Paper003Run::Surge => Self { regions: 2, dominant_share: 0.0, shuffle_files: false, fixed_order: true, think_time_ms: 20.0, ..ext2 },
        }
    }

    /// Think time, ns.
    #[must_use]
    pub fn think_time_ns(&self) -> SimTime {
        freeblock_disk::time::ms_to_ns(self.think_time_ms)
    }

    /// Checks the values that do not depend on the disk.
    fn validate(&self) -> Result<(), WorkloadError> {
        for (field, v, max) in [("files", self.files, MAX_FILES), ("passes", self.passes, MAX_PASSES)] {
            if v == 0 || v > max {
                return Err(invalid(field, format!("must be between 1 and {max}, got {v}")));
            }
        }
        for (field, v) in [
            ("max_file_blocks", self.max_file_blocks),
            ("block_sectors", self.block_sectors),
            ("regions", self.regions),
            ("region_groups", self.region_groups),
            ("extent_blocks", self.extent_blocks),
            ("request_blocks", self.request_blocks),
        ] {
            if v == 0 {
                return Err(invalid(field, "must be at least 1"));
            }
        }
        if !(self.mean_file_blocks.is_finite() && self.mean_file_blocks >= 1.0) {
            return Err(invalid("mean_file_blocks", format!("must be a number of blocks of at least 1, got {}", self.mean_file_blocks)));
        }
        if !(self.fill_fraction.is_finite() && self.fill_fraction > 0.0 && self.fill_fraction <= 1.0) {
            return Err(invalid("fill_fraction", format!("must be a fraction in (0, 1], got {}", self.fill_fraction)));
        }
        if !(self.spread.is_finite() && self.spread > 0.0 && self.spread <= 1.0) {
            return Err(invalid("spread", format!("must be a fraction in (0, 1], got {}", self.spread)));
        }
        if !(self.write_fraction.is_finite() && (0.0..=1.0).contains(&self.write_fraction)) {
            return Err(invalid("write_fraction", format!("must be a fraction in [0, 1], got {}", self.write_fraction)));
        }
        if !(self.think_time_ms.is_finite() && (0.0..=freeblock_disk::time::MAX_DURATION_MS).contains(&self.think_time_ms)) {
            return Err(invalid("think_time_ms", format!("must be a time of 0 to {} ms, got {}", freeblock_disk::time::MAX_DURATION_MS, self.think_time_ms)));
        }
        if !(self.dominant_share.is_finite() && (0.0..1.0).contains(&self.dominant_share)) {
            return Err(invalid("dominant_share", format!("must be a fraction in [0, 1), got {}", self.dominant_share)));
        }
        if !(self.written_files.is_finite() && self.written_files > 0.0 && self.written_files <= 1.0) {
            return Err(invalid("written_files", format!("must be a fraction in (0, 1], got {}", self.written_files)));
        }
        if self.placement != Placement::Scattered && self.group_blocks <= GROUP_METADATA_BLOCKS {
            return Err(invalid("group_blocks", format!("an ext2 group of {} blocks has no room after its {GROUP_METADATA_BLOCKS} blocks of metadata", self.group_blocks)));
        }
        if self.placement == Placement::Database {
            if self.db_files < 2 || !self.db_files.is_multiple_of(2) {
                return Err(invalid("db_files", format!("must be an even number of at least 2 (an index and its table per pair), got {}", self.db_files)));
            }
            if self.page_blocks == 0 || !self.extent_blocks.is_multiple_of(self.page_blocks) {
                return Err(invalid("page_blocks", format!("must divide extent_blocks = {} (a page never straddles two pieces of a file), got {}", self.extent_blocks, self.page_blocks)));
            }
            if self.db_file_blocks < u64::from(self.page_blocks) {
                return Err(invalid("db_file_blocks", format!("must hold at least one page of {} blocks, got {}", self.page_blocks, self.db_file_blocks)));
            }
            if self.db_group_blocks < u64::from(self.extent_blocks) {
                return Err(invalid("db_group_blocks", format!("must hold at least one piece of extent_blocks = {}, got {}", self.extent_blocks, self.db_group_blocks)));
            }
        }
        if self.group_blocks < u64::from(self.extent_blocks) {
            return Err(invalid("group_blocks", format!("a group of {} blocks cannot hold an extent of extent_blocks = {}", self.group_blocks, self.extent_blocks)));
        }
        Ok(())
    }

    /// Places the regions and the files on a disk of `capacity_sectors` and lays out one pass.
    ///
    /// # Errors
    /// [`WorkloadError::Invalid`] naming the field for a value that makes no workload, or when
    /// the disk has too few groups for the regions or the regions too little occupied space for
    /// the files.
    pub fn plan(&self, capacity_sectors: u64, seed: u64) -> Result<FilePlan, WorkloadError> {
        self.validate()?;
        let block = u64::from(self.block_sectors);
        let group_sectors = self.group_blocks.checked_mul(block).ok_or_else(|| invalid("group_blocks", "a group of this many blocks overflows the sector count"))?;
        let groups = capacity_sectors / group_sectors;
        let region_groups = u64::from(self.region_groups);
        let slots_of_regions = groups / region_groups;
        if slots_of_regions < u64::from(self.regions) {
            return Err(invalid(
                "regions",
                format!(
                    "{} regions of {} groups of {group_sectors} sectors need {} groups; a disk of {capacity_sectors} sectors has {groups}",
                    self.regions,
                    self.region_groups,
                    u64::from(self.regions) * region_groups
                ),
            ));
        }
        let used_blocks = ((self.group_blocks as f64 * self.fill_fraction).floor() as u64).min(self.group_blocks);
        let extent_blocks = u64::from(self.extent_blocks);
        let slots_per_group = used_blocks / extent_blocks;
        if slots_per_group == 0 {
            return Err(invalid("fill_fraction", format!("{} of a {}-block group leaves no room for an extent of {extent_blocks} blocks", self.fill_fraction, self.group_blocks)));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // The span the regions lie in (at least room for them all), then the regions on
        // distinct, non-overlapping runs of groups in it, numbered in the order drawn.
        let span_slots = ((slots_of_regions as f64 * self.spread).floor() as u64).clamp(u64::from(self.regions), slots_of_regions);
        let span_start = rng.gen_range(0..=slots_of_regions - span_slots);
        let regions: Vec<Extent> = sample(&mut rng, usize::try_from(span_slots).unwrap_or(usize::MAX), self.regions as usize)
            .into_iter()
            .map(|i| Extent { lbn: (span_start + i as u64) * region_groups * group_sectors, sectors: region_groups * group_sectors })
            .collect();

        let files = match self.placement {
            Placement::Scattered => self.place_scattered(&mut rng, &regions, group_sectors, slots_per_group)?,
            Placement::Ext2 => self.place_ext2(&mut rng, &regions, group_sectors, used_blocks)?,
            Placement::Database => {
                // The image files stay out of the share of every group the database may take.
                if self.db_group_blocks + GROUP_METADATA_BLOCKS >= used_blocks {
                    return Err(invalid("db_group_blocks", format!("{} blocks of a group for the database leave no room for files in a group of {used_blocks} occupied blocks", self.db_group_blocks)));
                }
                self.place_ext2(&mut rng, &regions, group_sectors, used_blocks - self.db_group_blocks)?
            }
        };
        // The database (drawn after the files, so the other placements' draws stay as they were).
        let (database, pages) = if self.placement == Placement::Database { self.place_database(&mut rng, &regions, groups, group_sectors, used_blocks)? } else { (Vec::new(), Vec::new()) };
        // The inode-table block of each file: its group's, numbered by the files whose first
        // block lies in that group, in file order.
        let mut inodes_in_group: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
        let inodes: Vec<Extent> = files
            .iter()
            .map(|extents| {
                let group = extents[0].lbn / group_sectors;
                let number = inodes_in_group.entry(group).or_insert(0);
                let inode_block = 4 + *number / INODES_PER_BLOCK;
                *number += 1;
                Extent { lbn: group * group_sectors + inode_block.min(self.group_blocks - 1) * block, sectors: block }
            })
            .collect();
        // Which files are ever written (drawn only when not all are, so that the default draws
        // stay as they were).
        let writable: Vec<bool> = if self.written_files >= 1.0 { vec![true; files.len()] } else { (0..files.len()).map(|_| rng.gen_bool(self.written_files)).collect() };

        let request_sectors = u64::from(self.request_blocks) * block;
        // What each unit of a pass reads: a file; under `database` a query's two pages, then its image.
        let read_of = |extents: &Vec<Extent>| if self.head_blocks == 0 { extents.clone() } else { head(extents, u64::from(self.head_blocks) * block) };
        let units: Vec<Vec<Extent>> = if pages.is_empty() { files.iter().map(read_of).collect() } else { pages.iter().zip(&files).map(|(p, image)| p.iter().copied().chain(read_of(image)).collect()).collect() };
        let file_requests: Vec<Vec<Extent>> = units
            .iter()
            .map(|extents| {
                let mut requests = Vec::new();
                for e in extents {
                    let mut at = e.lbn;
                    while at < e.end() {
                        let sectors = request_sectors.min(e.end() - at);
                        requests.push(Extent { lbn: at, sectors });
                        at += sectors;
                    }
                }
                requests
            })
            .collect();
        let mut pass = Vec::new();
        let mut last_inode = None;
        for (f, requests) in file_requests.iter().enumerate() {
            if self.inode_reads && last_inode != Some(inodes[f].lbn) {
                last_inode = Some(inodes[f].lbn);
                pass.push(inodes[f]);
            }
            pass.extend_from_slice(requests);
        }
        let free = (0..groups)
            .map(|g| Extent { lbn: g * group_sectors + used_blocks * block, sectors: (self.group_blocks - used_blocks) * block })
            .filter(|e| e.sectors > 0)
            .chain((groups * group_sectors < capacity_sectors).then(|| Extent { lbn: groups * group_sectors, sectors: capacity_sectors - groups * group_sectors }))
            .collect();
        Ok(FilePlan { files, regions, free, pass, file_requests, inodes, writable, database })
    }

    /// Every extent of `extent_blocks` at a random free slot of a random region.
    fn place_scattered(&self, rng: &mut ChaCha8Rng, regions: &[Extent], group_sectors: u64, slots_per_group: u64) -> Result<Vec<Vec<Extent>>, WorkloadError> {
        let block = u64::from(self.block_sectors);
        let extent_blocks = u64::from(self.extent_blocks);
        let region_groups = u64::from(self.region_groups);
        // File sizes, then per extent a region and a slot; slots taken are remembered so that
        // no two extents overlap.
        let slots_per_region = slots_per_group * region_groups;
        let mut taken: Vec<std::collections::HashSet<u64>> = vec![std::collections::HashSet::new(); regions.len()];
        let mut files = Vec::with_capacity(self.files as usize);
        for f in 0..self.files {
            let u: f64 = rng.gen::<f64>();
            let size = (-(1.0 - u).ln() * self.mean_file_blocks).ceil().clamp(1.0, f64::from(self.max_file_blocks)) as u64;
            let mut extents = Vec::new();
            let mut left = size;
            while left > 0 {
                let len = left.min(extent_blocks);
                left -= len;
                let r = rng.gen_range(0..regions.len());
                if taken[r].len() as u64 >= slots_per_region {
                    return Err(invalid(
                        "files",
                        format!("file {f} does not fit: region {r} has room for {slots_per_region} extents of {extent_blocks} blocks and all are taken (fewer or smaller files, more regions or region_groups, or a higher fill_fraction)"),
                    ));
                }
                // Rejection sampling; the error above keeps it from looping for ever, and a
                // region is rarely more than a small fraction full.
                let slot = loop {
                    let s = rng.gen_range(0..slots_per_region);
                    if taken[r].insert(s) {
                        break s;
                    }
                };
                let (group, within) = (slot / slots_per_group, slot % slots_per_group);
                let lbn = regions[r].lbn + group * group_sectors + within * extent_blocks * block;
                extents.push(Extent { lbn, sectors: len * block });
            }
            files.push(extents);
        }
        Ok(files)
    }

    /// Ext2's allocator on an aged disk: each region a directory whose files lie one after
    /// another, `gap_blocks` holes between them, from a random place in its first group, in
    /// each group's blocks before `used_blocks`.
    fn place_ext2(&self, rng: &mut ChaCha8Rng, regions: &[Extent], group_sectors: u64, used_blocks: u64) -> Result<Vec<Vec<Extent>>, WorkloadError> {
        let block = u64::from(self.block_sectors);
        if used_blocks <= GROUP_METADATA_BLOCKS {
            return Err(invalid("fill_fraction", format!("{} of a {}-block group leaves no data blocks after its {GROUP_METADATA_BLOCKS} blocks of metadata", self.fill_fraction, self.group_blocks)));
        }
        let data_blocks = used_blocks - GROUP_METADATA_BLOCKS;
        let extent_blocks = u64::from(self.extent_blocks);
        // Each directory's next free block: (group within the region, block within the group).
        let mut cursor: Vec<(u64, u64)> = regions.iter().map(|_| (0, GROUP_METADATA_BLOCKS + rng.gen_range(0..data_blocks.div_ceil(2)))).collect();
        let mut files = Vec::with_capacity(self.files as usize);
        for f in 0..self.files {
            let u: f64 = rng.gen::<f64>();
            let size = (-(1.0 - u).ln() * self.mean_file_blocks).ceil().clamp(1.0, f64::from(self.max_file_blocks)) as u64;
            let r = if self.dominant_share > 0.0 && rng.gen_bool(self.dominant_share) { 0 } else { rng.gen_range(0..regions.len()) };
            let mut extents: Vec<Extent> = Vec::new();
            let mut left = size;
            while left > 0 {
                let (group, at) = &mut cursor[r];
                if *at >= used_blocks {
                    *group += 1;
                    *at = GROUP_METADATA_BLOCKS;
                }
                if *group >= u64::from(self.region_groups) {
                    return Err(invalid("files", format!("file {f} does not fit: directory (region) {r} is full (fewer or smaller files, more regions or region_groups, a smaller gap_blocks or a higher fill_fraction)")));
                }
                let len = left.min(used_blocks - *at).min(extent_blocks);
                let lbn = regions[r].lbn + *group * group_sectors + *at * block;
                match extents.last_mut() {
                    Some(e) if e.end() == lbn => e.sectors += len * block,
                    _ => extents.push(Extent { lbn, sectors: len * block }),
                }
                *at += len;
                left -= len;
                // An aged disk: the file's next piece lies past blocks other files hold.
                if left > 0 && self.gap_blocks > 0 {
                    *at += rng.gen_range(1..=u64::from(self.gap_blocks));
                }
            }
            if self.gap_blocks > 0 {
                cursor[r].1 += rng.gen_range(0..=u64::from(self.gap_blocks));
            }
            files.push(extents);
        }
        Ok(files)
    }

    /// The database's files grown together, `extent_blocks` at a time in turn, at the end of
    /// each group's occupied share (`db_group_blocks` a group), moving on when a group is full
    /// to the next group of Ext2's quadratic hash from the first region's first group g: g+1,
    /// g+3, g+7, … (a group already used is skipped); then each query's index page and data page.
    #[allow(clippy::type_complexity)]
    fn place_database(&self, rng: &mut ChaCha8Rng, regions: &[Extent], groups: u64, group_sectors: u64, used_blocks: u64) -> Result<(Vec<Vec<Extent>>, Vec<[Extent; 2]>), WorkloadError> {
        let block = u64::from(self.block_sectors);
        let chunk = u64::from(self.extent_blocks);
        let page = u64::from(self.page_blocks);
        let first = regions[0].lbn / group_sectors;
        let start = used_blocks - self.db_group_blocks;
        let mut files: Vec<Vec<Extent>> = vec![Vec::new(); self.db_files as usize];
        let mut grown = vec![0u64; files.len()];
        let mut used_groups = std::collections::HashSet::from([first]);
        let (mut group, mut at, mut probe) = (first, start, 0u32);
        while grown.iter().any(|&g| g < self.db_file_blocks) {
            for (f, extents) in files.iter_mut().enumerate() {
                let len = chunk.min(self.db_file_blocks - grown[f]);
                if len == 0 {
                    continue;
                }
                while at + len > used_blocks {
                    // This group is full: the quadratic hash's next group not yet used.
                    loop {
                        probe += 1;
                        if probe > 40 {
                            return Err(invalid("db_file_blocks", format!("{} database files of {} blocks do not fit in {} blocks of the groups Ext2's quadratic hash reaches from group {first}", self.db_files, self.db_file_blocks, self.db_group_blocks)));
                        }
                        group = (first + (1u64 << probe) - 1) % groups;
                        if used_groups.insert(group) {
                            break;
                        }
                    }
                    at = start;
                }
                let lbn = group * group_sectors + at * block;
                match extents.last_mut() {
                    Some(e) if e.end() == lbn => e.sectors += len * block,
                    _ => extents.push(Extent { lbn, sectors: len * block }),
                }
                at += len;
                grown[f] += len;
            }
        }
        // A query: a leaf page of an index, then the page of its table holding the row (the
        // B-tree's upper levels stay in the server's buffer pool), each at a page drawn once.
        let pages_per_file = self.db_file_blocks / page;
        let page_at = |extents: &[Extent], index: u64| {
            let mut offset = index * page * block;
            for e in extents {
                if offset < e.sectors {
                    return Extent { lbn: e.lbn + offset, sectors: page * block };
                }
                offset -= e.sectors;
            }
            unreachable!("page {index} lies inside a file of {} blocks", self.db_file_blocks)
        };
        let pages = (0..self.files)
            .map(|_| {
                let table = 2 * rng.gen_range(0..files.len() / 2);
                let (leaf, row) = (rng.gen_range(0..pages_per_file), rng.gen_range(0..pages_per_file));
                [page_at(&files[table], leaf), page_at(&files[table + 1], row)]
            })
            .collect();
        Ok((files, pages))
    }

    /// Makes the workload for a disk of `capacity_sectors`, seeded with `seed`.
    ///
    /// # Errors
    /// As [`ScatteredFilesSpec::plan`].
    pub fn build(&self, capacity_sectors: u64, seed: u64) -> Result<ScatteredFilesWorkload, WorkloadError> {
        let plan = self.plan(capacity_sectors, seed)?;
        // Reads and writes come from a stream of their own, after the layout's draws.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(1);
        let mut order: Vec<usize> = (0..plan.file_requests.len()).collect();
        if self.shuffle_files || self.fixed_order {
            order.shuffle(&mut rng);
        }
        Ok(ScatteredFilesWorkload {
            inodes: self.inode_reads.then_some(plan.inodes),
            files: plan.file_requests,
            writable: plan.writable,
            order,
            shuffle: self.shuffle_files,
            passes: self.passes,
            write_fraction: self.write_fraction,
            rng,
            at: Cursor::default(),
        })
    }
}

/// Where a [`ScatteredFilesWorkload`] is: pass, file (index into the pass's order), request.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    pass: u32,
    file: usize,
    request: usize,
    inode_done: bool,
    last_inode: Option<u64>,
}

/// The requests of a [`ScatteredFilesSpec`]: every file's requests, in file order (or a new
/// random order each pass with `shuffle_files`), `passes` times.
#[derive(Debug, Clone)]
pub struct ScatteredFilesWorkload {
    files: Vec<Vec<Extent>>,
    inodes: Option<Vec<Extent>>,
    writable: Vec<bool>,
    order: Vec<usize>,
    shuffle: bool,
    passes: u32,
    write_fraction: f64,
    rng: ChaCha8Rng,
    at: Cursor,
}

impl Workload for ScatteredFilesWorkload {
    fn next_request(&mut self) -> Result<Option<Request>, WorkloadError> {
        loop {
            if self.at.pass >= self.passes {
                return Ok(None);
            }
            let Some(&f) = self.order.get(self.at.file) else {
                self.at = Cursor { pass: self.at.pass + 1, last_inode: self.at.last_inode, ..Cursor::default() };
                if self.shuffle && self.at.pass < self.passes {
                    self.order.shuffle(&mut self.rng);
                }
                continue;
            };
            if !self.at.inode_done {
                self.at.inode_done = true;
                if let Some(inode) = self.inodes.as_ref().map(|i| i[f]) {
                    if self.at.last_inode != Some(inode.lbn) {
                        self.at.last_inode = Some(inode.lbn);
                        return Ok(Some(Request { time: 0, lbn: inode.lbn, sectors: sectors_of(inode), op: Op::Read, measured: None, fua: false }));
                    }
                }
            }
            let Some(&e) = self.files[f].get(self.at.request) else {
                self.at = Cursor { pass: self.at.pass, file: self.at.file + 1, last_inode: self.at.last_inode, ..Cursor::default() };
                continue;
            };
            self.at.request += 1;
            let op = if self.writable[f] && self.write_fraction > 0.0 && self.rng.gen_bool(self.write_fraction) { Op::Write } else { Op::Read };
            return Ok(Some(Request { time: 0, lbn: e.lbn, sectors: sectors_of(e), op, measured: None, fua: false }));
        }
    }

    fn arrival(&self) -> ArrivalKind {
        ArrivalKind::Closed
    }
}

/// The first `sectors` of a file's extents.
fn head(extents: &[Extent], sectors: u64) -> Vec<Extent> {
    let mut left = sectors;
    let mut out = Vec::new();
    for e in extents {
        if left == 0 {
            break;
        }
        out.push(Extent { lbn: e.lbn, sectors: e.sectors.min(left) });
        left -= e.sectors.min(left);
    }
    out
}

fn sectors_of(e: Extent) -> u32 {
    u32::try_from(e.sectors).expect("at most request_blocks × block_sectors, both u32 and checked")
}

#[cfg(test)]
mod tests {
    use super::*;

    const WD800: u64 = 156_301_488;

    fn drain(spec: &ScatteredFilesSpec, seed: u64) -> Vec<Request> {
        let mut w = spec.build(WD800, seed).unwrap();
        crate::workload::collect_requests(&mut w).unwrap()
    }

    #[test]
    fn the_same_seed_gives_the_same_requests() {
        let spec = ScatteredFilesSpec { files: 50, passes: 4, write_fraction: 0.2, ..ScatteredFilesSpec::default() };
        assert_eq!(drain(&spec, 11), drain(&spec, 11));
        assert_ne!(drain(&spec, 11), drain(&spec, 12));
    }

    #[test]
    fn every_pass_reads_the_same_blocks_in_the_same_order() {
        let spec = ScatteredFilesSpec { files: 100, passes: 6, write_fraction: 0.1, ..ScatteredFilesSpec::default() };
        let plan = spec.plan(WD800, 3).unwrap();
        let requests = drain(&spec, 3);
        let n = plan.pass.len();
        assert_eq!(requests.len(), 6 * n);
        for (i, r) in requests.iter().enumerate() {
            let e = plan.pass[i % n];
            assert_eq!((r.lbn, u64::from(r.sectors)), (e.lbn, e.sectors), "request {i}");
        }
        // The pass covers every file block once, in file order.
        let blocks: Vec<Extent> = plan.files.iter().flatten().copied().collect();
        assert_eq!(plan.pass.iter().map(|e| e.sectors).sum::<u64>(), blocks.iter().map(|e| e.sectors).sum::<u64>());
        assert_eq!(plan.pass[0].lbn, blocks[0].lbn);
        // Writes at about the share asked for, and not the same requests on every pass.
        let writes = requests.iter().filter(|r| !r.op.is_read()).count() as f64 / requests.len() as f64;
        assert!((writes - 0.1).abs() < 0.03, "{writes}");
        let ops = |p: usize| requests[p * n..(p + 1) * n].iter().map(|r| r.op).collect::<Vec<_>>();
        assert_ne!(ops(0), ops(1));
    }

    #[test]
    fn files_are_scattered_over_occupied_space_and_never_overlap() {
        let spec = ScatteredFilesSpec { files: 300, passes: 1, ..ScatteredFilesSpec::default() };
        let plan = spec.plan(WD800, 5).unwrap();
        let mut extents: Vec<Extent> = plan.files.iter().flatten().copied().collect();
        let group = spec.group_blocks * u64::from(spec.block_sectors);
        let used = (spec.group_blocks as f64 * spec.fill_fraction) as u64 * u64::from(spec.block_sectors);
        for e in &extents {
            assert!(plan.regions.iter().any(|r| r.lbn <= e.lbn && e.end() <= r.end()), "{e:?} outside the regions");
            assert!(e.end() - e.lbn / group * group <= used, "{e:?} in a group's free tail");
            assert!(plan.free.iter().all(|f| e.end() <= f.lbn || f.end() <= e.lbn), "{e:?} overlaps free space");
        }
        extents.sort_by_key(|e| e.lbn);
        assert!(extents.windows(2).all(|w| w[0].end() <= w[1].lbn), "extents overlap");
        // The files jump between regions: most consecutive requests are more than a group apart.
        let far = plan.pass.windows(2).filter(|w| w[0].end().abs_diff(w[1].lbn) > group).count();
        assert!(far as f64 > 0.5 * plan.pass.len() as f64, "{far} of {}", plan.pass.len());
        // The free space is the share the fill fraction leaves (within one group's rounding).
        let free = plan.free_sectors() as f64 / WD800 as f64;
        assert!((free - (1.0 - spec.fill_fraction)).abs() < 0.01, "{free}");
    }

    #[test]
    fn ext2_placement_lays_a_directory_out_file_after_file() {
        let spec = ScatteredFilesSpec { placement: Placement::Ext2, files: 200, passes: 1, extent_blocks: 8, gap_blocks: 4, dominant_share: 0.5, ..ScatteredFilesSpec::default() };
        let plan = spec.plan(WD800, 9).unwrap();
        let block = u64::from(spec.block_sectors);
        let group = spec.group_blocks * block;
        let used = (spec.group_blocks as f64 * spec.fill_fraction) as u64 * block;
        let region_of = |lbn: u64| plan.regions.iter().position(|r| r.lbn <= lbn && lbn < r.end()).expect("inside a region");
        let mut last_end: Vec<Option<u64>> = vec![None; plan.regions.len()];
        for extents in &plan.files {
            let r = region_of(extents[0].lbn);
            for (i, e) in extents.iter().enumerate() {
                assert_eq!(region_of(e.lbn), r, "a file stays in its directory");
                assert!(e.sectors <= u64::from(spec.extent_blocks) * block, "{e:?} longer than a piece");
                let within = e.lbn % group;
                assert!(within >= GROUP_METADATA_BLOCKS * block && within + e.sectors <= used, "{e:?} outside a group's data blocks");
                // Each piece starts after the last one of its directory, at most a gap (or a
                // group's free tail and metadata) later.
                if let Some(end) = last_end[r] {
                    let hop = e.lbn - end;
                    let next_group = e.lbn / group != end.saturating_sub(1) / group;
                    assert!(e.lbn >= end && (hop <= u64::from(spec.gap_blocks) * block || next_group), "piece {i} {e:?}: {hop} sectors after the last piece");
                }
                last_end[r] = Some(e.end());
            }
        }
        // One directory holds about half the files (the dominant one, plus its uniform share).
        let in_first = plan.files.iter().filter(|f| region_of(f[0].lbn) == 0).count() as f64 / plan.files.len() as f64;
        let expected = 0.5 + 0.5 / plan.regions.len() as f64;
        assert!((in_first - expected).abs() < 0.08, "{in_first} of the files in the dominant directory, expected about {expected}");
    }

    #[test]
    fn inode_reads_shuffled_passes_and_written_files_do_what_they_say() {
        let spec = ScatteredFilesSpec {
            placement: Placement::Ext2,
            files: 120,
            passes: 3,
            inode_reads: true,
            shuffle_files: true,
            written_files: 0.25,
            write_fraction: 0.5,
            ..ScatteredFilesSpec::default()
        };
        let plan = spec.plan(WD800, 4).unwrap();
        let requests = drain(&spec, 4);
        assert_eq!(requests, drain(&spec, 4), "deterministic");
        // Every request is an inode block read or lies in a file.
        let owner = |lbn: u64| plan.file_requests.iter().position(|rs| rs.iter().any(|e| e.lbn == lbn));
        let mut passes: Vec<Vec<usize>> = vec![Vec::new()];
        let mut seen_in_pass = std::collections::HashSet::new();
        for r in &requests {
            match owner(r.lbn) {
                Some(f) => {
                    if !r.op.is_read() {
                        assert!(plan.writable[f], "a write to file {f}, which is never written");
                    }
                    if plan.file_requests[f][0].lbn == r.lbn {
                        if !seen_in_pass.insert(f) {
                            passes.push(Vec::new());
                            seen_in_pass = std::collections::HashSet::from([f]);
                        }
                        passes.last_mut().unwrap().push(f);
                    }
                }
                None => {
                    assert!(plan.inodes.iter().any(|i| i.lbn == r.lbn), "{r:?} neither a file's nor an inode block");
                    assert!(r.op.is_read(), "inode blocks are read");
                }
            }
        }
        assert_eq!(passes.len(), 3);
        for p in &passes {
            let mut sorted = p.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..120).collect::<Vec<_>>(), "each pass reads every file once");
        }
        assert_ne!(passes[0], passes[1], "shuffle_files: a new order each pass");
        let written = plan.writable.iter().filter(|&&w| w).count() as f64 / 120.0;
        assert!((written - 0.25).abs() < 0.1, "{written}");
        assert!(requests.iter().any(|r| !r.op.is_read()));
    }

    #[test]
    fn a_database_spans_the_quadratic_hash_groups_and_queries_read_page_pairs() {
        let spec = ScatteredFilesSpec { passes: 3, fill_fraction: 0.8, ..ScatteredFilesSpec::paper003(Paper003Run::Tpcw) };
        assert_eq!(spec.placement, Placement::Database);
        let plan = spec.plan(WD800, 6).unwrap();
        let block = u64::from(spec.block_sectors);
        let group = spec.group_blocks * block;
        let groups = WD800 / group;
        let used = (spec.group_blocks as f64 * spec.fill_fraction) as u64 * block;
        let first = plan.regions[0].lbn / group;
        let hash: Vec<u64> = (0..40).map(|k| (first + (1u64 << k) - 1) % groups).collect();
        assert_eq!(plan.database.len(), spec.db_files as usize);
        let mut groups_used = std::collections::BTreeSet::new();
        for file in &plan.database {
            assert_eq!(file.iter().map(|e| e.sectors).sum::<u64>(), spec.db_file_blocks * block, "every file has its size");
            for e in file {
                let (g, within) = (e.lbn / group, e.lbn % group);
                assert!(hash.contains(&g), "{e:?} in group {g}, not one the quadratic hash picks from {first}");
                assert!(within >= used - spec.db_group_blocks * block && within + e.sectors <= used, "{e:?} outside the database's share of its group");
                groups_used.insert(g);
            }
        }
        // Several groups, far apart: the file is split as §4.3.1 says.
        let expected = (u64::from(spec.db_files) * spec.db_file_blocks).div_ceil(spec.db_group_blocks) as usize;
        assert_eq!(groups_used.len(), expected, "{groups_used:?}");
        // Database and image extents never overlap.
        let mut all: Vec<Extent> = plan.database.iter().chain(&plan.files).flatten().copied().collect();
        all.sort_by_key(|e| e.lbn);
        assert!(all.windows(2).all(|w| w[0].end() <= w[1].lbn), "extents overlap");
        // A query: a page of an index, then a page of the same pair's table, then its image.
        let owner = |e: &Extent| plan.database.iter().position(|f| f.iter().any(|x| x.lbn <= e.lbn && e.end() <= x.end()));
        for (q, requests) in plan.file_requests.iter().enumerate() {
            let (index, table) = (owner(&requests[0]).expect("an index page"), owner(&requests[1]).expect("a data page"));
            assert_eq!((index % 2, table), (0, index + 1), "query {q}");
            assert!(requests[..2].iter().all(|r| r.sectors == u64::from(spec.page_blocks) * block));
            assert!(requests[2..].iter().all(|r| owner(r).is_none()), "the rest is the image file");
        }
        // Each pass runs every query once, in a new order.
        let requests = drain(&spec, 6);
        let per_pass = requests.len() / 3;
        let firsts = |p: usize| requests[p * per_pass..(p + 1) * per_pass].iter().filter(|r| plan.file_requests.iter().any(|q| q[0].lbn == r.lbn)).map(|r| r.lbn).collect::<Vec<_>>();
        let (a, b) = (firsts(0), firsts(1));
        assert_ne!(a, b, "a new order of queries each pass");
        let (mut a, mut b) = (a, b);
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "the same queries every pass");
    }

    #[test]
    fn fixed_order_and_head_blocks_do_what_they_say() {
        let spec = ScatteredFilesSpec { placement: Placement::Ext2, files: 80, passes: 2, fixed_order: true, head_blocks: 1, write_fraction: 0.0, mean_file_blocks: 8.0, ..ScatteredFilesSpec::default() };
        let plan = spec.plan(WD800, 2).unwrap();
        let requests = drain(&spec, 2);
        let n = requests.len() / 2;
        assert_eq!(requests[..n], requests[n..], "the same order every pass");
        let block = u64::from(spec.block_sectors);
        assert!(requests.iter().all(|r| u64::from(r.sectors) == block), "one block of each file");
        let order: Vec<usize> = requests[..n].iter().map(|r| plan.files.iter().position(|f| f[0].lbn == r.lbn).expect("a file's first block")).collect();
        assert_eq!(order.len(), 80);
        assert_ne!(order, (0..80).collect::<Vec<_>>(), "not the allocation order");
    }

    #[test]
    fn bad_values_name_their_field() {
        let field = |spec: ScatteredFilesSpec| match spec.build(WD800, 1).unwrap_err() {
            WorkloadError::Invalid { field, .. } => field,
            e => panic!("{e}"),
        };
        let d = ScatteredFilesSpec::default;
        assert_eq!(field(ScatteredFilesSpec { files: 0, ..d() }), "files");
        assert_eq!(field(ScatteredFilesSpec { passes: 0, ..d() }), "passes");
        assert_eq!(field(ScatteredFilesSpec { fill_fraction: 0.0, ..d() }), "fill_fraction");
        assert_eq!(field(ScatteredFilesSpec { fill_fraction: f64::NAN, ..d() }), "fill_fraction");
        assert_eq!(field(ScatteredFilesSpec { write_fraction: 1.5, ..d() }), "write_fraction");
        assert_eq!(field(ScatteredFilesSpec { spread: 0.0, ..d() }), "spread");
        assert_eq!(field(ScatteredFilesSpec { mean_file_blocks: 0.5, ..d() }), "mean_file_blocks");
        assert_eq!(field(ScatteredFilesSpec { think_time_ms: -1.0, ..d() }), "think_time_ms");
        assert_eq!(field(ScatteredFilesSpec { extent_blocks: 0, ..d() }), "extent_blocks");
        assert_eq!(field(ScatteredFilesSpec { regions: 10_000, ..d() }), "regions");
        assert_eq!(field(ScatteredFilesSpec { group_blocks: 2, ..d() }), "group_blocks");
        assert_eq!(field(ScatteredFilesSpec { placement: Placement::Ext2, group_blocks: 200, ..d() }), "group_blocks");
        assert_eq!(field(ScatteredFilesSpec { dominant_share: 1.0, ..d() }), "dominant_share");
        assert_eq!(field(ScatteredFilesSpec { written_files: 0.0, ..d() }), "written_files");
        assert_eq!(field(ScatteredFilesSpec { written_files: f64::NAN, ..d() }), "written_files");
        let db = || ScatteredFilesSpec { placement: Placement::Database, regions: 1, region_groups: 1, extent_blocks: 8, ..d() };
        assert_eq!(field(ScatteredFilesSpec { db_files: 3, ..db() }), "db_files");
        assert_eq!(field(ScatteredFilesSpec { page_blocks: 3, ..db() }), "page_blocks");
        assert_eq!(field(ScatteredFilesSpec { db_group_blocks: 32_000, ..db() }), "db_group_blocks");
        assert_eq!(field(ScatteredFilesSpec { db_file_blocks: 100_000_000, ..db() }), "db_file_blocks");
        // More file blocks than the regions' occupied space holds.
        assert_eq!(field(ScatteredFilesSpec { files: 100_000, mean_file_blocks: 64.0, regions: 1, region_groups: 1, ..d() }), "files");
        let e = ScatteredFilesSpec { fill_fraction: 2.0, ..d() }.build(WD800, 1).unwrap_err().to_string();
        assert!(e.contains("fill_fraction") && e.contains('2'), "{e}");
    }
}
