//! Where the log lives and how it is cut up: the partition, its segments, the buffer cache and
//! the cleaning thresholds.

use freeblock_disk::Disk;
use serde::{Deserialize, Serialize};

use super::error::LfsError;
use super::summary::encoded_len;

/// Sectors per block of [`LfsConfig::new`] and of an experiment file's log: 4 KB of 512-byte
/// sectors.
pub const BLOCK_SECTORS: u64 = 8;

/// A log-structured layout's configuration. Defaults are paper 000 §5's LLD: 4 KB blocks,
/// segments of 128 blocks (127 data, one summary), foreground cleaning below two free segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LfsConfig {
    /// First sector of the partition (disk LBN).
    pub first_lbn: u64,
    /// Segments in the partition.
    pub segments: u32,
    /// Blocks per segment, the last one its summary. Default 128.
    pub segment_blocks: u32,
    /// Sectors per block. Default 8 (4 KB of 512-byte sectors).
    pub block_sectors: u64,
    /// Logical blocks the layout offers (may exceed the physical data blocks: only the live ones
    /// take space).
    pub logical_blocks: u64,
    /// Blocks the LRU buffer cache holds (0: none).
    pub cache_blocks: usize,
    /// The foreground cleaner runs when a segment write would leave fewer free segments than
    /// this. Default 2.
    pub min_free: u32,
    /// …and cleans until this many segments are free. Default 6.
    pub clean_until: u32,
    /// Journal checkpoints (a new snapshot of the map) every this many segment writes; 0 never.
    /// Default 256.
    pub checkpoint_every: u32,
}

impl LfsConfig {
    /// A partition of `bytes` (rounded down to whole segments) from `first_lbn` with paper 000's
    /// segment shape.
    #[must_use]
    pub fn new(first_lbn: u64, bytes: u64, logical_blocks: u64, cache_blocks: usize) -> Self {
        let segment_bytes = 128 * BLOCK_SECTORS * 512;
        Self { first_lbn, segments: u32::try_from(bytes / segment_bytes).unwrap_or(u32::MAX), segment_blocks: 128, block_sectors: BLOCK_SECTORS, logical_blocks, cache_blocks, min_free: 2, clean_until: 6, checkpoint_every: 256 }
    }

    /// Data blocks per segment (all but the summary).
    #[must_use]
    pub fn data_blocks(&self) -> u32 {
        self.segment_blocks - 1
    }

    /// Blocks in the partition, summaries included.
    #[must_use]
    pub fn partition_blocks(&self) -> u64 {
        u64::from(self.segments) * u64::from(self.segment_blocks)
    }

    /// Data blocks the log holds.
    #[must_use]
    pub fn capacity_blocks(&self) -> u64 {
        u64::from(self.segments) * u64::from(self.data_blocks())
    }

    /// Sectors of one segment (one segment write).
    #[must_use]
    pub fn segment_sectors(&self) -> u64 {
        u64::from(self.segment_blocks) * self.block_sectors
    }

    /// First sector of `segment`.
    #[must_use]
    pub fn segment_lbn(&self, segment: u32) -> u64 {
        self.first_lbn + u64::from(segment) * self.segment_sectors()
    }

    /// First sector of data slot `slot` of `segment`.
    #[must_use]
    pub fn slot_lbn(&self, segment: u32, slot: u32) -> u64 {
        self.segment_lbn(segment) + u64::from(slot) * self.block_sectors
    }

    /// First sector of `segment`'s summary block.
    #[must_use]
    pub fn summary_lbn(&self, segment: u32) -> u64 {
        self.slot_lbn(segment, self.data_blocks())
    }

    /// The segment whose data slots hold sector `lbn`.
    #[must_use]
    pub fn segment_of(&self, lbn: u64) -> Option<u32> {
        let rel = lbn.checked_sub(self.first_lbn)?;
        let s = rel / self.segment_sectors();
        let slot = (rel % self.segment_sectors()) / self.block_sectors;
        (s < u64::from(self.segments) && slot < u64::from(self.data_blocks())).then_some(s as u32)
    }

    /// The slot of sector `lbn` within its segment.
    #[must_use]
    pub fn slot_of(&self, lbn: u64) -> u32 {
        (((lbn - self.first_lbn) % self.segment_sectors()) / self.block_sectors) as u32
    }

    /// Checks the numbers make a log.
    ///
    /// # Errors
    /// [`LfsError::Config`] naming the field.
    pub fn validate(&self) -> Result<(), LfsError> {
        let bad = |field, message: String| Err(LfsError::Config { field, message });
        if self.block_sectors == 0 {
            return bad("block_sectors", "must be at least 1".into());
        }
        if self.segment_blocks < 2 || self.segment_blocks > u32::from(u16::MAX) {
            return bad("segment_blocks", format!("must be from 2 (one data block and the summary) to {}, not {}", u16::MAX, self.segment_blocks));
        }
        let summary = encoded_len(self.data_blocks() as usize) as u64;
        if summary > self.block_sectors * 512 {
            return bad("segment_blocks", format!("a summary of {} slots takes {summary} bytes, more than one {}-byte block", self.data_blocks(), self.block_sectors * 512));
        }
        if self.segment_sectors() > u64::from(u32::MAX) {
            return bad("segment_blocks", format!("a segment of {} sectors is too long for one I/O", self.segment_sectors()));
        }
        if self.min_free == 0 {
            return bad("min_free", "must be at least 1".into());
        }
        if self.clean_until <= self.min_free {
            return bad("clean_until", format!("must be more than min_free ({}), not {}", self.min_free, self.clean_until));
        }
        if self.segments < self.clean_until + 2 {
            return bad("segments", format!("{} segments leave no room for data above the cleaner's {} free ones", self.segments, self.clean_until));
        }
        if self.logical_blocks == 0 {
            return bad("logical_blocks", "must be at least 1".into());
        }
        if self.first_lbn % self.block_sectors != 0 {
            return bad("first_lbn", format!("{} is not a multiple of the block's {} sectors", self.first_lbn, self.block_sectors));
        }
        Ok(())
    }

    /// Checks the numbers make a log that fits `disk`.
    ///
    /// # Errors
    /// As [`LfsConfig::validate`], and [`LfsError::SegmentsDoNotFit`].
    pub fn validate_for(&self, disk: &Disk) -> Result<(), LfsError> {
        if self.segments == 0 {
            return Err(LfsError::Config { field: "segments", message: format!("the partition holds no whole segment of {} sectors", self.segment_sectors()) });
        }
        let end = self.first_lbn.saturating_add(self.partition_blocks().saturating_mul(self.block_sectors));
        if end > disk.capacity() {
            return Err(LfsError::SegmentsDoNotFit { first_lbn: self.first_lbn, segments: self.segments, segment_blocks: self.segment_blocks, block_sectors: self.block_sectors, end, capacity: disk.capacity() });
        }
        self.validate()
    }
}

/// The log-structured layout as the `[layout]` table of an experiment file names it
/// (`type = "lfs"`): the partition in MB, the logical space as a share of the log's data blocks,
/// the buffer cache in MB, the cleaner and its settings. Every key is optional; the defaults are
/// paper 000 §5's setup (a 400 MB log, a 32 MB cache, the FREEBLOCK cleaner).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LfsSpec {
    /// First sector of the partition (disk LBN, a multiple of the block). Default 0.
    pub first_lbn: u64,
    /// The partition, MB (rounded down to whole segments). Default 400.
    pub partition_mb: u64,
    /// Logical blocks offered, as a share of the log's data blocks, in (0, 1]: a workload that
    /// writes all of them fills the log to this utilisation. Default 0.8.
    pub logical_share: f64,
    /// Buffer cache, MB. Default 32.
    pub cache_mb: u64,
    /// Foreground cleaning threshold, free segments. Default 2.
    pub min_free: u32,
    /// The foreground cleaner cleans until this many segments are free. Default 6.
    pub clean_until: u32,
    /// Which cleaner. Default `freeblock`.
    pub cleaner: super::CleanerKind,
    /// The free cleaner's settings (`freeblock` and `freeblock_idle`).
    pub free: super::FreeCleaning,
}

impl Default for LfsSpec {
    fn default() -> Self {
        Self { first_lbn: 0, partition_mb: 400, logical_share: 0.8, cache_mb: 32, min_free: 2, clean_until: 6, cleaner: super::CleanerKind::Freeblock, free: super::FreeCleaning::default() }
    }
}

impl LfsSpec {
    /// The log's configuration on `disk`.
    ///
    /// # Errors
    /// [`LfsError::Config`] naming the field (`logical_share` outside (0, 1], and whatever
    /// [`LfsConfig::validate`] finds); [`LfsError::SegmentsDoNotFit`] for a partition past the
    /// end of the disk.
    pub fn config(&self, disk: &Disk) -> Result<LfsConfig, LfsError> {
        if !(self.logical_share > 0.0 && self.logical_share <= 1.0) {
            return Err(LfsError::Config { field: "logical_share", message: format!("must be in (0, 1], not {}", self.logical_share) });
        }
        let probe = LfsConfig { min_free: self.min_free, clean_until: self.clean_until, ..LfsConfig::new(self.first_lbn, self.partition_mb << 20, 1, 0) };
        probe.validate_for(disk)?;
        let logical_blocks = ((probe.capacity_blocks() as f64 * self.logical_share) as u64).max(1);
        let cache_blocks = usize::try_from((self.cache_mb << 20) / (probe.block_sectors * 512)).unwrap_or(usize::MAX);
        let cfg = LfsConfig { logical_blocks, cache_blocks, ..probe };
        cfg.validate_for(disk)?;
        Ok(cfg)
    }
}
