//! Disk specifications: the data a disk model is built from.
//!
//! A [`DiskSpec`] is plain data, read from a TOML file (the format documented in
//! `docs/disk-spec.md`), imported from DiskSim parameter files ([`crate::disksim`]) or taken from
//! the built-in library ([`crate::library`]). It is validated once by [`DiskSpec::validate`]; the
//! model types built from it ([`crate::Disk`]) never re-check.
//!
//! Units are in the field names: `_ms` is milliseconds, `_sectors` is sectors of
//! `sector_bytes` bytes, skews are in sectors (fractions allowed, as in DiskSim).

use serde::{Deserialize, Serialize};

use crate::error::SpecError;
use crate::time::MAX_DURATION_MS;

/// Slowest spindle accepted, rpm (a revolution of a second; real drives spin at 3,600 and up).
/// With it, a whole track of [`MAX_SECTORS_PER_TRACK`] sectors in picoseconds fits a `u64`.
pub const MIN_RPM: f64 = 60.0;
/// Fastest spindle accepted, rpm (a revolution of 60 µs).
pub const MAX_RPM: f64 = 1_000_000.0;
/// Most surfaces (heads) a spec may have. Real drives have at most a few dozen.
pub const MAX_SURFACES: u32 = 1024;
/// Most cylinders a spec may have (2^22; a multi-terabyte drive has under a million). The seek
/// curve holds one entry per cylinder.
pub const MAX_CYLINDERS: u32 = 1 << 22;
/// Most sectors on one track (2^20; real tracks hold a few thousand).
pub const MAX_SECTORS_PER_TRACK: u32 = 1 << 20;
/// Most tracks (cylinders × surfaces) a spec may have (2^24, e.g. 18 surfaces of 932,000
/// cylinders; the 20 TB `ultrastar_hc560` has 11.4 million). Per-track sparing keeps a spare range
/// per track, so this bounds the model's memory (about 800 MB at the limit in the worst scheme).
pub const MAX_TRACKS: u64 = 1 << 24;
/// Largest sector, bytes (real drives use 512 or 4096).
pub const MAX_SECTOR_BYTES: u32 = 65_536;
/// Largest skew or first-sector offset, sectors. Angles are computed in `f64` from
/// `skew × track number`; below this bound that product is exact to a thousandth of a sector.
pub const MAX_SKEW_SECTORS: f64 = MAX_SECTORS_PER_TRACK as f64;
/// Most buffer segments (DiskSim models use up to a few dozen).
pub const MAX_CACHE_SEGMENTS: u32 = 1024;
/// Largest buffer segment, sectors (2^24 = 8 GiB of 512-byte sectors).
pub const MAX_SEGMENT_SECTORS: u32 = 1 << 24;

fn default_sector_bytes() -> u32 {
    512
}

/// Everything needed to model one disk drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    /// Short identifier, e.g. `atlas10k`.
    pub name: String,
    /// Human-readable model name, e.g. "Quantum Atlas 10K".
    #[serde(default)]
    pub description: String,
    /// Where the figures come from (DiskSim file, datasheet, paper table).
    #[serde(default)]
    pub source: String,
    /// Spindle speed in revolutions per minute. Must be positive.
    pub rpm: f64,
    /// Number of data surfaces (heads). At least 1.
    pub surfaces: u32,
    /// Bytes per sector. Default 512.
    #[serde(default = "default_sector_bytes")]
    pub sector_bytes: u32,
    /// Exported capacity in sectors. When set, LBNs stop there even if the zones hold more; it
    /// may not exceed what the zones hold. Default: everything the zones hold.
    #[serde(default)]
    pub block_count: Option<u64>,
    /// Order in which tracks are filled with LBNs.
    #[serde(default)]
    pub mapping: Mapping,
    /// How spare sectors are reserved (DiskSim's sparing schemes).
    #[serde(default)]
    pub sparing: Sparing,
    /// Recording zones, in ascending cylinder order, covering cylinders `0..cylinders` without
    /// gaps or overlaps.
    pub zones: Vec<Zone>,
    /// Seek time as a function of cylinder distance (for every seek when `write_seek` is left
    /// out, else for reads).
    pub seek: SeekModel,
    /// A separate seek curve for writes (the `[write_seek]` table, as `[seek]`): drives settle
    /// longer before writing, and Western Digital's DiskSim fork measures the two curves apart
    /// (its "dual seek" files). `None`: writes seek as reads do. `write_settle_ms` applies on
    /// top of either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_seek: Option<SeekModel>,
    /// Time to switch to another surface of the same cylinder, ms.
    pub head_switch_ms: f64,
    /// Extra settle time after positioning for a read, ms. Default 0.
    #[serde(default)]
    pub read_settle_ms: f64,
    /// Extra settle time after positioning for a write, ms (DiskSim "Add. write settling delay").
    /// Default 0. May be negative (write seeks shorter than the seek curve, which some DiskSim
    /// models measured with reads), as long as the shortest move — a head switch or a
    /// one-cylinder seek — plus it stays at least 0.
    #[serde(default)]
    pub write_settle_ms: f64,
    /// How much longer a seek towards higher cylinders (inward) takes than the seek curve, ms;
    /// a seek towards lower ones takes that much less, so the curve is the two directions'
    /// average. Default 0 (DiskSim's drives, and the library's, seek alike both ways). Some
    /// real drives do not: on the HP C2247A's validation trace inward seeks miss their sector
    /// where the model's catch it, and outward ones the other way round (docs/calibrate.md).
    /// Negative: outward seeks the slower. The quicker direction's one-cylinder seek plus
    /// either settle must stay at least 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seek_asymmetry_ms: f64,
    /// Controller overheads and interface speed.
    #[serde(default)]
    pub controller: Controller,
    /// On-disk cache. Off by default.
    #[serde(default)]
    pub cache: CacheSpec,
    /// The write cache of a drive of today (`[write_cache]`: size, write-back or write-through,
    /// FLUSH CACHE overhead). `None`: no such cache, writes go to the media as they always have
    /// (or through `[cache]`'s DiskSim buffer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<WriteCacheSpec>,
    /// Power drawn in each state, for energy accounting. `None`: the disk's power is not known
    /// and runs report no energy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerSpec>,
}

/// Most power a drive may draw in any state, watts. A 3.5-inch drive spins up at about 25 W;
/// anything past this is a typo (milliwatts for watts), not a disk.
pub const MAX_POWER_W: f64 = 1000.0;

/// Average power in each state, watts (the `[power]` table). Every state must be given: a spec
/// either knows the drive's power or leaves the table out.
///
/// | field | state | paper 003's WD 80 GB drive |
/// |---|---|---|
/// | `seek_w` | the arm accelerating and decelerating (seek, head switch, settle) | 14.0 |
/// | `read_w` | transferring data from the media | 8.0 |
/// | `write_w` | transferring data to the media | 8.0 |
/// | `idle_w` | spinning with nothing to do, or waiting for a sector to come round | 8.0 |
/// | `startup_w` | spinning up from standby | 17.0 |
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerSpec {
    /// Seeking, W.
    pub seek_w: f64,
    /// Reading from the media, W.
    pub read_w: f64,
    /// Writing to the media, W.
    pub write_w: f64,
    /// Spinning idle (and during rotational latency and controller overhead), W.
    pub idle_w: f64,
    /// Spinning up, W. The simulated disk is spinning from the start and never spins down, so no
    /// run is charged for it; it is kept for power-management policies.
    pub startup_w: f64,
}

impl PowerSpec {
    /// The fields as `(name, watts)` pairs, in table order.
    #[must_use]
    pub fn fields(&self) -> [(&'static str, f64); 5] {
        [("seek_w", self.seek_w), ("read_w", self.read_w), ("write_w", self.write_w), ("idle_w", self.idle_w), ("startup_w", self.startup_w)]
    }
}

/// The order in which LBNs fill tracks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mapping {
    /// Cylinder by cylinder; within a cylinder surface 0, 1, … (DiskSim mapping scheme 0).
    #[default]
    CylinderMajor,
    /// Cylinder by cylinder, but a cylinder switch stays on the same surface, so odd cylinders
    /// (counted from the zone's first cylinder) are filled from the last surface down (DiskSim
    /// mapping scheme 1, "cylinder switches stay
    /// on the same surface").
    Serpentine,
    /// Serpentine bands ([`crate::bands`]): one surface at a time across a band of
    /// `band_cylinders` cylinders, direction alternating from surface to surface, the surfaces
    /// taken in reverse order in every other band (Western Digital's DiskSim `dm_layout_g4`
    /// files). Each zone spans a whole number of band pairs (`2·band_cylinders` cylinders); the
    /// skew is `track_skew` per step along a band plus `band_pair_skew` per band pair.
    Banded {
        /// Cylinders in one band.
        band_cylinders: u32,
    },
}

/// Spare-sector reservation schemes, as in DiskSim's `dm_layout_g1` (number in brackets).
/// The count of spares is per zone ([`Zone::spares`]); what it counts depends on the scheme.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "scheme", rename_all = "snake_case", deny_unknown_fields)]
pub enum Sparing {
    /// No spares \[0\].
    #[default]
    None,
    /// `spares` whole tracks at the end of each zone \[1\].
    Tracks,
    /// `spares` sectors at the end of each cylinder \[2\].
    SectorsPerCylinder,
    /// `spares` sectors at the end of each track \[3\].
    SectorsPerTrack,
    /// Per cylinder, slipped sectors pushed to the end \[4\].
    SectorsPerCylinderSlipToEnd,
    /// Per cylinder, spares at the front \[5\].
    SectorsPerCylinderAtFront,
    /// Per cylinder, spares at the front, slips to the end \[6\].
    SectorsPerCylinderAtFrontSlipToEnd,
    /// `spares` sectors at the end of the zone \[7\].
    SectorsAtEnd,
    /// `spares` sectors at the end of every `range_size` cylinders \[8\].
    SectorsPerRange {
        /// Cylinders per sparing range.
        range_size: u32,
    },
    /// `spares` sectors per zone \[9\].
    SectorsPerZone,
    /// `spares` sectors per zone, slips pushed to the end \[10\].
    SectorsPerZoneSlipToEnd,
}

/// One recording zone (band): a run of cylinders with the same sectors per track.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    /// First cylinder of the zone (inclusive).
    pub first_cylinder: u32,
    /// Last cylinder of the zone (inclusive).
    pub last_cylinder: u32,
    /// Physical sectors on each track of the zone.
    pub sectors_per_track: u32,
    /// Angular offset of the zone's first sector, in sectors. Default 0.
    #[serde(default)]
    pub first_sector_offset: f64,
    /// Physical sectors at the zone's front that hold no LBN. Default 0.
    #[serde(default)]
    pub empty_front_sectors: u64,
    /// Skew added at each switch to the next surface within a cylinder, in sectors.
    #[serde(default)]
    pub track_skew: f64,
    /// Skew added at each switch to the next cylinder, in sectors. (Banded mapping: must be 0;
    /// its skews are `track_skew` per step along a band and `band_pair_skew`.)
    #[serde(default)]
    pub cylinder_skew: f64,
    /// Banded mapping only: skew added at each band pair of the zone, in sectors. Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub band_pair_skew: f64,
    /// Spare count for the disk's sparing scheme (tracks or sectors; see [`Sparing`]).
    #[serde(default)]
    pub spares: u32,
    /// Slipped sectors: zone-relative physical sector numbers skipped by the LBN mapping (whole
    /// tracks, numbered from 0 in the zone, under track sparing). Each inside the zone and listed
    /// once, in any order.
    #[serde(default)]
    pub slips: Vec<u64>,
    /// Remapped defects: `[defective, spare]` zone-relative physical sector numbers (tracks under
    /// track sparing). The defective sector must hold an LBN and the spare must be a spare
    /// sector, each used once; a defect remapped to itself changes nothing. The head reads and
    /// writes the LBN at the spare, going there and back in the middle of a request.
    #[serde(default)]
    pub defects: Vec<[u64; 2]>,
}

/// Seek time as a function of seek distance in cylinders. A zero-distance seek costs nothing
/// (a head switch, if any, is charged separately).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SeekModel {
    /// Measured `[distance_cylinders, ms]` points, linearly interpolated (DiskSim "extracted"
    /// curves). Distances must be strictly increasing and start at 1; beyond the last point the
    /// last segment's slope is extended, so when the disk has longer seeks than the last point
    /// that segment may not slope down. Times are at most a minute each.
    Table {
        /// `[distance, ms]` pairs.
        points: Vec<[f64; 2]>,
    },
    /// Three-point fit through single-cylinder, average and full-stroke seek times: the curve
    /// `a + b·sqrt(d-1) + c·(d-1)` with `a` the single-cylinder time, `b, c ≥ 0` chosen so the mean
    /// over uniformly random pairs of distinct cylinders equals `average_ms` and the full stroke
    /// equals `full_ms`. When no such `b, c` exist (an average below about a third or above about
    /// 8/15 of the way from `single_ms` to `full_ms`), the curve is
    /// `single + (full − single)·((d−1)/(D−1))^p` (`D` the full stroke) with `p` fitted to the
    /// average instead; see [`crate::seek`]. Either curve rises from `single_ms` to `full_ms`.
    /// Needs `0 < single_ms ≤ average_ms ≤ full_ms`, the average strictly between the two unless
    /// all three are equal, and at least 4 cylinders when they are not.
    ThreePoint {
        /// One-cylinder seek, ms.
        single_ms: f64,
        /// Mean seek over random cylinder pairs, ms.
        average_ms: f64,
        /// Full-stroke seek, ms.
        full_ms: f64,
    },
    /// HP's form (DiskSim `hplplus10`): `sqrt_a + sqrt_b·sqrt(d)` below `boundary` cylinders,
    /// `linear_a + linear_b·d` from there on; `first_ten_ms`, if given, overrides distances 1–10.
    Hpl {
        /// Distance (cylinders) where the linear part takes over.
        boundary: f64,
        /// Constant of the square-root part, ms.
        sqrt_a: f64,
        /// Coefficient of sqrt(distance), ms.
        sqrt_b: f64,
        /// Constant of the linear part, ms.
        linear_a: f64,
        /// Coefficient of distance, ms per cylinder.
        linear_b: f64,
        /// Measured seek times for distances 1..=10, ms (may be empty).
        #[serde(default)]
        first_ten_ms: Vec<f64>,
    },
    /// Toshiba MK156F (paper 002 Table 1, after Carson):
    /// `6.248 + 1.393·sqrt(d) − 0.99·cbrt(d) + 0.813·ln d` below 315 cylinders,
    /// `17.503 + 0.03·d` from there on.
    ToshibaMk156f,
}

/// Controller overheads and host-interface speed. All default to zero.
///
/// Only `read_miss_ms`, `write_miss_ms` and `bus_sector_ms` matter while the cache is off; the
/// rest describe DiskSim's buffer controller (used when `cache.enabled`). Where DiskSim has an
/// "after read" and an "after write" variant of an overhead (the previous request's kind), the
/// plain field is the after-read one and `…_after_write_ms` the other (`None`: the same).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Controller {
    /// Command overhead before a read that misses the cache, ms.
    pub read_miss_ms: f64,
    /// Command overhead before a read that hits the cache, ms.
    pub read_hit_ms: f64,
    /// Command overhead before a write that goes to the media, ms.
    pub write_miss_ms: f64,
    /// Command overhead before a write absorbed by the cache, ms.
    pub write_hit_ms: f64,
    /// Time to move one sector across the host interface, ms (DiskSim "Bulk sector transfer
    /// time", or the disk's bus "Read block transfer time" when larger). Zero means the interface
    /// is never the bottleneck.
    pub bus_sector_ms: f64,
    /// Writes are reported complete once their data is in the cache and written to the media
    /// later (write-back, DiskSim "Fast write level" > 0). Needs the cache enabled.
    pub write_back: bool,
    /// `read_miss_ms` when the previous request was a write (DiskSim "Read miss over. after
    /// write"). Default: `read_miss_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_miss_after_write_ms: Option<f64>,
    /// `read_hit_ms` after a write. Default: `read_hit_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_hit_after_write_ms: Option<f64>,
    /// `write_miss_ms` after a write. Default: `write_miss_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_miss_after_write_ms: Option<f64>,
    /// `write_hit_ms` after a write. Default: `write_hit_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_hit_after_write_ms: Option<f64>,
    /// Per-sector interface time for writes, ms (the disk's bus "Write block transfer time").
    /// Default: `bus_sector_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus_write_sector_ms: Option<f64>,
    /// Delay before every command is looked at, ms (DiskSim "Per-request overhead time").
    #[serde(skip_serializing_if = "is_zero")]
    pub per_request_ms: f64,
    /// From the last data sent to the completion message, reads, ms ("Read completion overhead").
    #[serde(skip_serializing_if = "is_zero")]
    pub read_complete_ms: f64,
    /// The same for writes, ms ("Write completion overhead").
    #[serde(skip_serializing_if = "is_zero")]
    pub write_complete_ms: f64,
    /// Added before a transfer of data starts, ms ("Data preparation overhead").
    #[serde(skip_serializing_if = "is_zero")]
    pub data_prep_ms: f64,
    /// To reconnect to the host after a disconnect, ms ("First reselect overhead").
    #[serde(skip_serializing_if = "is_zero")]
    pub reselect_ms: f64,
    /// To reconnect for the completion of a write that disconnected twice, ms ("Other reselect
    /// overhead").
    #[serde(skip_serializing_if = "is_zero")]
    pub reselect_other_ms: f64,
    /// To disconnect from the host after a read command, ms ("Read disconnect afterread").
    #[serde(skip_serializing_if = "is_zero")]
    pub read_disconnect_ms: f64,
    /// The same after a write ("Read disconnect afterwrite"). Default: `read_disconnect_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_disconnect_after_write_ms: Option<f64>,
    /// To disconnect after receiving a write's data, ms ("Write disconnect overhead").
    #[serde(skip_serializing_if = "is_zero")]
    pub write_disconnect_ms: f64,
    /// Shortest time from a write command's overhead to the start of its media access, ms
    /// (DiskSim "Minimum seek delay": a shorter seek is padded to it).
    #[serde(skip_serializing_if = "is_zero")]
    pub min_write_seek_ms: f64,
    /// Keep the host interface for the whole of a read, waiting for the media, instead of
    /// disconnecting when the buffer runs dry ("Hold bus entire read xfer").
    #[serde(skip_serializing_if = "is_false")]
    pub hold_bus_read: bool,
    /// The same for writes ("Hold bus entire write xfer").
    #[serde(skip_serializing_if = "is_false")]
    pub hold_bus_write: bool,
    /// A write that follows a write elsewhere disconnects once more before taking its data
    /// (DiskSim "Extra write disconnect" and its "Extradisc …" overheads). `None`: never.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_write_disconnect: Option<ExtraWriteDisconnect>,
}

/// DiskSim's "extra write disconnect": timings of a write command that disconnects before its
/// data phase. All ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExtraWriteDisconnect {
    /// Command overhead ("Extradisc command overhead").
    pub command_ms: f64,
    /// First disconnect ("Extradisc disconnect overhead").
    pub disconnect_ms: f64,
    /// From that disconnect to asking for the data ("Extradisc inter-disconnect delay").
    pub inter_disconnect_ms: f64,
    /// Disconnect after the data ("Extradisc 2nd disconnect overhead").
    pub second_disconnect_ms: f64,
    /// Added to the command overhead before the media access may start ("Extradisc seek delta").
    pub seek_delta_ms: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_true(v: &bool) -> bool {
    *v
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

/// How far a read-ahead runs (DiskSim "Buffer continuous read").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadAhead {
    /// No read-ahead \[0\].
    None,
    /// Up to `read_ahead_sectors`, stopping at the end of the track \[1\].
    TrackEnd,
    /// Up to `read_ahead_sectors`, stopping at the end of the cylinder \[2\].
    CylinderEnd,
    /// Up to `read_ahead_sectors` past the request (the segment size when 0) \[3\].
    #[default]
    Sectors,
    /// To the end of the track holding the sector after the request, and one track more when the
    /// segment started on an earlier track (DEC's scheme) \[4\].
    Dec,
}

/// The most write cache a spec may declare, MiB (1 TiB: DRAM caches of today are 64–512 MiB).
pub const MAX_WRITE_CACHE_MIB: f64 = 1_048_576.0;

/// Whether a write cache holds writes (write-back) or passes them to the media (write-through).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteCacheMode {
    /// Every write goes to the media before it completes (the drive with its write cache
    /// disabled, `hdparm -W0`; every drive's behaviour before `[write_cache]` existed). Default.
    #[default]
    WriteThrough,
    /// A write completes once its data is in the cache; the drive writes it to the media later,
    /// by position, when the mechanism is free (`hdparm -W1`, a desktop drive as shipped).
    WriteBack,
}

/// The write cache of a drive of today (`[write_cache]`): see [`crate::drive`]'s write-cache
/// module for the model. Runs on the media model (`[cache] enabled = false`).
///
/// | field | default | meaning |
/// |---|---|---|
/// | `size_mib` | required | cache for dirty data, MiB (datasheets' "64 MB cache"); at least one sector |
/// | `mode` | `write_through` | `write_back`: writes complete in the cache and are destaged later |
/// | `flush_overhead_ms` | 0 | fixed cost of a FLUSH CACHE command before it writes anything |
/// | `destage_window` | all | each destage picks the nearest of this many of the oldest dirty runs |
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteCacheSpec {
    /// Room for dirty data, MiB (2^20 bytes). Must hold at least one sector.
    pub size_mib: f64,
    /// Write-back or write-through. Default write-through.
    #[serde(default)]
    pub mode: WriteCacheMode,
    /// What a FLUSH CACHE command costs before it starts writing dirty data, ms. Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush_overhead_ms: f64,
    /// Each destage picks the nearest of this many of the oldest dirty extents (≥ 1). Absent:
    /// the nearest of all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destage_window: Option<u32>,
}

impl WriteCacheSpec {
    /// A write cache of `size_mib` MiB in `mode`, with no flush overhead.
    #[must_use]
    pub fn new(size_mib: f64, mode: WriteCacheMode) -> Self {
        Self { size_mib, mode, flush_overhead_ms: 0.0, destage_window: None }
    }

    /// Whole sectors of `sector_bytes` the cache holds.
    #[must_use]
    pub fn capacity_sectors(&self, sector_bytes: u32) -> u64 {
        (self.size_mib * 1_048_576.0 / f64::from(sector_bytes)).floor() as u64
    }

    /// Whether writes complete in the cache.
    #[must_use]
    pub fn is_write_back(&self) -> bool {
        self.mode == WriteCacheMode::WriteBack
    }
}

/// Segmented on-disk cache with read-ahead (DiskSim's disk buffer).
///
/// With `enabled = false` the drive has no buffer at all and every request is a media access
/// timed by [`crate::Disk::access`]. With it on, requests go through a model of DiskSim 4.0's disk
/// controller: segments, read hits, read-ahead that goes on after the request completes,
/// write-back (`controller.write_back`), and the bus handshakes timed by [`Controller`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheSpec {
    /// Whether the cache is used at all. Default false.
    pub enabled: bool,
    /// Number of segments (including a separate write segment). Default 1.
    pub segments: u32,
    /// Size of each segment, in sectors. Default 256.
    pub segment_sectors: u32,
    /// Read-ahead past the end of a read, in sectors ("Maximum read-ahead"). Default 0.
    pub read_ahead_sectors: u32,
    /// How far read-ahead runs. Default `sectors`.
    #[serde(skip_serializing_if = "is_default_read_ahead")]
    pub read_ahead: ReadAhead,
    /// Read-ahead a new request may not interrupt, sectors ("Minimum read-ahead"). Default 0.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub min_read_ahead_sectors: u32,
    /// Go on reading ahead after a read that hit the cache ("Read-ahead on idle hit"). Default
    /// false.
    #[serde(skip_serializing_if = "is_false")]
    pub read_ahead_on_hit: bool,
    /// Keep sectors read before the wanted one on the same track ("Read any free blocks").
    #[serde(skip_serializing_if = "is_false")]
    pub read_any_free_blocks: bool,
    /// Zero-latency reads: start at the first sector under the head ("Immediate buffer read").
    #[serde(skip_serializing_if = "is_false")]
    pub zero_latency_reads: bool,
    /// Zero-latency writes ("Immediate buffer write").
    #[serde(skip_serializing_if = "is_false")]
    pub zero_latency_writes: bool,
    /// Reads may hit data written by earlier writes ("Allow read hits on write data"). Default
    /// true.
    #[serde(skip_serializing_if = "is_true")]
    pub read_hits_on_write_data: bool,
    /// Segments that may hold data not yet written ("Maximum number of write segments"). Default
    /// 1.
    #[serde(skip_serializing_if = "is_one")]
    pub write_segments: u32,
    /// One segment is reserved for writes and reads never use it ("Use separate write
    /// segment").
    #[serde(skip_serializing_if = "is_false")]
    pub separate_write_segment: bool,
    /// A read's own data stays in its segment once the read has completed, for later hits
    /// (default true). False: only the read-ahead past it stays — DiskSim "Read-ahead over
    /// requested" = -1 ("discard request data") — so reading the same sectors again goes to
    /// the media.
    #[serde(skip_serializing_if = "is_true")]
    pub keep_read_data: bool,
    /// A write that starts where the data of a segment being written back ends is taken into
    /// that segment at once ("append"), instead of waiting for the write-back to finish and
    /// taking a segment of its own (DiskSim "Combine seq writes"). As in DiskSim 4.0, the
    /// write-back under way goes on through the appended data, and each appended write then
    /// writes its data once more in a media pass of its own, in arrival order, before the
    /// mechanism serves anything else. Default false. Only write-back (`controller.write_back`)
    /// leaves segments dirty when the next request arrives, so it matters only then.
    #[serde(skip_serializing_if = "is_false")]
    pub combine_sequential_writes: bool,
    /// On a track whose LBNs fill only part of its sectors (the rest unmapped), the media
    /// process goes from the sector of the track's last LBN to that of its first in one sector
    /// time, as DiskSim 4.0 does (it steps through a track's LBNs, not its sectors), so a sector
    /// missed comes round again after as many sector times as the track has LBNs; likewise a
    /// slipped sector between two LBNs of a track takes no time. Default false:
    /// the head passes the unmapped sectors, and a missed sector comes round after a revolution.
    #[serde(skip_serializing_if = "is_false")]
    pub skip_unmapped_sectors: bool,
    /// A write overlapping a segment being read ahead stops the read-ahead ("Write hit stop
    /// prefetch").
    #[serde(skip_serializing_if = "is_false")]
    pub write_stops_read_ahead: bool,
    /// A read-ahead stopped by a new command stops at once, even in the middle of a sector
    /// ("Stop prefetch in sector"); otherwise the new command's media work waits for the end of
    /// that sector. Default true.
    #[serde(skip_serializing_if = "is_true")]
    pub stop_read_ahead_mid_sector: bool,
    /// Fraction of a read that must be in the buffer before the data phase starts ("High (read)
    /// water mark"). Default 0 (one sector).
    #[serde(skip_serializing_if = "is_zero")]
    pub read_watermark: f64,
    /// Fraction of a write's data left in the buffer when the drive asks for more ("Low (write)
    /// water mark").
    #[serde(skip_serializing_if = "is_zero")]
    pub write_watermark: f64,
    /// Watermarks are fractions of the request (true, default) or of the segment ("Set
    /// watermark by reqsize").
    #[serde(skip_serializing_if = "is_true")]
    pub watermark_of_request: bool,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

fn is_default_read_ahead(v: &ReadAhead) -> bool {
    *v == ReadAhead::default()
}

impl Default for CacheSpec {
    fn default() -> Self {
        Self {
            enabled: false,
            segments: 1,
            segment_sectors: 256,
            read_ahead_sectors: 0,
            read_ahead: ReadAhead::default(),
            min_read_ahead_sectors: 0,
            read_ahead_on_hit: false,
            read_any_free_blocks: false,
            zero_latency_reads: false,
            zero_latency_writes: false,
            read_hits_on_write_data: true,
            write_segments: 1,
            combine_sequential_writes: false,
            skip_unmapped_sectors: false,
            keep_read_data: true,
            separate_write_segment: false,
            write_stops_read_ahead: false,
            stop_read_ahead_mid_sector: true,
            read_watermark: 0.0,
            write_watermark: 0.0,
            watermark_of_request: true,
        }
    }
}

impl DiskSpec {
    /// Parses a spec from TOML text and validates it. `origin` names the file in errors.
    ///
    /// # Errors
    /// [`SpecError::Toml`] for syntax errors and unknown or missing fields (with line and column),
    /// [`SpecError::Invalid`] for values that parse but make no disk.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, SpecError> {
        let spec: DiskSpec = toml::from_str(text).map_err(|e| {
            let place = crate::toml_place::locate(text, &e);
            SpecError::Toml { origin: origin.to_string(), message: one_line(&place.describe()), line: place.line, key: place.key }
        })?;
        spec.validate().map_err(|e| e.with_origin(origin))?;
        Ok(spec)
    }

    /// Reads and validates a TOML spec file.
    ///
    /// # Errors
    /// As [`DiskSpec::from_toml_str`], plus [`SpecError::Io`].
    pub fn from_toml_file(path: &std::path::Path) -> Result<Self, SpecError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| SpecError::Io { origin: origin.clone(), message: e.to_string() })?;
        Self::from_toml_str(&text, &origin)
    }

    /// Serialises the spec as TOML.
    #[must_use]
    pub fn to_toml_string(&self) -> String {
        toml::to_string_pretty(self).expect("a DiskSpec always serialises")
    }

    /// The same disk with its on-disk cache (and so write-back) turned off: the media model that
    /// paper reproductions and media-level experiments use.
    #[must_use]
    pub fn without_cache(mut self) -> Self {
        self.cache.enabled = false;
        self.controller.write_back = false;
        if let Some(w) = &mut self.write_cache {
            w.mode = WriteCacheMode::WriteThrough;
        }
        self
    }

    /// The same drive with its `[write_cache]` in `mode`, as `hdparm -W` sets a real one, checked
    /// again (a write-back cache needs the DiskSim buffer off).
    ///
    /// # Errors
    /// [`SpecError::Invalid`] naming `write_cache` when the spec has no such table (its size is
    /// not known), or what [`DiskSpec::validate`] finds.
    pub fn with_write_cache_mode(mut self, mode: WriteCacheMode) -> Result<Self, SpecError> {
        let Some(w) = &mut self.write_cache else {
            return Err(SpecError::Invalid { origin: String::new(), field: "write_cache".into(), message: format!("`{}` has no [write_cache] table to set the mode of: give its size_mib there", self.name) });
        };
        w.mode = mode;
        self.validate()?;
        Ok(self)
    }

    /// The same drive with only its first `surfaces` data surfaces, as paper 000 §5 cut the
    /// Atlas 10K to one surface (1.5 GB) for its log-structured experiments. Zones, skews and the
    /// seek curve stay; the capacity follows the zones (`block_count` is dropped); spare counts
    /// that cover a cylinder or a zone shrink in proportion (rounded up) and per-track ones stay;
    /// slips and remapped defects are dropped, since their sector numbers name places on the
    /// full geometry. The name gets a `-{surfaces}s` suffix.
    ///
    /// # Errors
    /// [`SpecError::Invalid`] naming `surfaces` when it is 0 or more than the drive has, or
    /// whatever [`DiskSpec::validate`] finds in the result.
    pub fn with_surfaces(mut self, surfaces: u32) -> Result<Self, SpecError> {
        if surfaces == 0 || surfaces > self.surfaces {
            return Err(SpecError::Invalid {
                origin: self.name.clone(),
                field: "surfaces".into(),
                message: format!("a cut to {surfaces} surfaces must keep between 1 and the drive's {}", self.surfaces),
            });
        }
        let (old, new) = (u64::from(self.surfaces), u64::from(surfaces));
        let scales = !matches!(self.sparing, Sparing::None | Sparing::SectorsPerTrack);
        for z in &mut self.zones {
            if scales {
                z.spares = u32::try_from((u64::from(z.spares) * new).div_ceil(old)).unwrap_or(u32::MAX);
            }
            z.slips.clear();
            z.defects.clear();
        }
        self.block_count = None;
        self.description = format!("{} cut to {surfaces} surface{}", self.description, if surfaces == 1 { "" } else { "s" });
        self.name = format!("{}-{surfaces}s", self.name);
        self.surfaces = surfaces;
        self.validate()?;
        Ok(self)
    }

    /// Number of cylinders (one past the last zone's last cylinder).
    #[must_use]
    pub fn cylinders(&self) -> u32 {
        self.zones.last().map_or(0, |z| z.last_cylinder + 1)
    }

    /// Checks that the numbers make a disk. Errors name the offending field.
    ///
    /// # Errors
    /// [`SpecError::Invalid`] naming the field, e.g. `zones[3].first_cylinder`.
    pub fn validate(&self) -> Result<(), SpecError> {
        let bad = |field: String, message: String| Err(SpecError::Invalid { origin: String::new(), field, message });
        if !(self.rpm.is_finite() && self.rpm > 0.0) {
            return bad("rpm".into(), format!("must be a positive number of revolutions per minute, got {}", self.rpm));
        }
        if !(MIN_RPM..=MAX_RPM).contains(&self.rpm) {
            return bad("rpm".into(), format!("must be between {MIN_RPM} and {MAX_RPM} revolutions per minute, got {}", shown(self.rpm)));
        }
        if self.surfaces == 0 {
            return bad("surfaces".into(), "must be at least 1".into());
        }
        if self.surfaces > MAX_SURFACES {
            return bad("surfaces".into(), format!("{} is more than the {MAX_SURFACES} supported", self.surfaces));
        }
        if self.sector_bytes == 0 || !self.sector_bytes.is_multiple_of(512) || self.sector_bytes > MAX_SECTOR_BYTES {
            return bad("sector_bytes".into(), format!("must be a positive multiple of 512 up to {MAX_SECTOR_BYTES}, got {}", self.sector_bytes));
        }
        if self.block_count == Some(0) {
            return bad("block_count".into(), "must be at least 1 (or left out to export everything the zones hold)".into());
        }
        if self.zones.is_empty() {
            return bad("zones".into(), "at least one zone is needed".into());
        }
        let mut next_cylinder = 0u32;
        for (i, z) in self.zones.iter().enumerate() {
            if z.first_cylinder != next_cylinder {
                let what = if z.first_cylinder < next_cylinder { "overlaps the previous zone" } else { "leaves a gap after the previous zone" };
                return bad(
                    format!("zones[{i}].first_cylinder"),
                    format!("{} (expected {next_cylinder}, got {})", what, z.first_cylinder),
                );
            }
            if z.last_cylinder < z.first_cylinder {
                return bad(format!("zones[{i}].last_cylinder"), format!("{} is before first_cylinder {}", z.last_cylinder, z.first_cylinder));
            }
            if z.last_cylinder >= MAX_CYLINDERS {
                return bad(
                    format!("zones[{i}].last_cylinder"),
                    format!("{} is beyond the last cylinder supported ({}: at most {MAX_CYLINDERS} cylinders)", z.last_cylinder, MAX_CYLINDERS - 1),
                );
            }
            if z.sectors_per_track == 0 {
                return bad(format!("zones[{i}].sectors_per_track"), "must be at least 1".into());
            }
            if z.sectors_per_track > MAX_SECTORS_PER_TRACK {
                return bad(format!("zones[{i}].sectors_per_track"), format!("{} is more than the {MAX_SECTORS_PER_TRACK} supported", z.sectors_per_track));
            }
            for (name, v) in [("first_sector_offset", z.first_sector_offset), ("track_skew", z.track_skew), ("cylinder_skew", z.cylinder_skew), ("band_pair_skew", z.band_pair_skew)] {
                if !(v.is_finite() && v >= 0.0) {
                    return bad(format!("zones[{i}].{name}"), format!("must be a non-negative number of sectors, got {v}"));
                }
                if v > MAX_SKEW_SECTORS {
                    return bad(format!("zones[{i}].{name}"), format!("{} is more than the {MAX_SKEW_SECTORS} sectors supported", shown(v)));
                }
            }
            self.validate_banded_zone(i, z)?;
            next_cylinder = z.last_cylinder + 1;
        }
        let tracks = u64::from(next_cylinder) * u64::from(self.surfaces);
        if tracks > MAX_TRACKS {
            return bad(
                "zones".into(),
                format!("{next_cylinder} cylinders × {} surfaces = {tracks} tracks, more than the {MAX_TRACKS} supported", self.surfaces),
            );
        }
        self.validate_zone_sectors()?;
        for (name, v) in [
            ("head_switch_ms", self.head_switch_ms),
            ("read_settle_ms", self.read_settle_ms),
            ("controller.read_miss_ms", self.controller.read_miss_ms),
            ("controller.read_hit_ms", self.controller.read_hit_ms),
            ("controller.write_miss_ms", self.controller.write_miss_ms),
            ("controller.write_hit_ms", self.controller.write_hit_ms),
            ("controller.bus_sector_ms", self.controller.bus_sector_ms),
            ("controller.per_request_ms", self.controller.per_request_ms),
            ("controller.read_complete_ms", self.controller.read_complete_ms),
            ("controller.write_complete_ms", self.controller.write_complete_ms),
            ("controller.data_prep_ms", self.controller.data_prep_ms),
            ("controller.reselect_ms", self.controller.reselect_ms),
            ("controller.reselect_other_ms", self.controller.reselect_other_ms),
            ("controller.read_disconnect_ms", self.controller.read_disconnect_ms),
            ("controller.write_disconnect_ms", self.controller.write_disconnect_ms),
            ("controller.min_write_seek_ms", self.controller.min_write_seek_ms),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(name.into(), format!("must be a non-negative time in ms, got {v}"));
            }
            if v > MAX_DURATION_MS {
                return bad(name.into(), format!("{} ms is longer than the {MAX_DURATION_MS} ms a disk time may be", shown(v)));
            }
        }
        // Negative: write seeks shorter than the (read) seek curve, as some DiskSim models say
        // ("Add. write settling delay" < 0). `Disk::new` checks that no write move goes below 0.
        for (name, v) in [("write_settle_ms", self.write_settle_ms), ("seek_asymmetry_ms", self.seek_asymmetry_ms)] {
            if !(v.is_finite() && v.abs() <= MAX_DURATION_MS) {
                return bad(name.into(), format!("must be a time in ms of at most {MAX_DURATION_MS} either way, got {v}"));
            }
        }
        let c = &self.controller;
        for (name, v) in [
            ("controller.read_miss_after_write_ms", c.read_miss_after_write_ms),
            ("controller.read_hit_after_write_ms", c.read_hit_after_write_ms),
            ("controller.write_miss_after_write_ms", c.write_miss_after_write_ms),
            ("controller.write_hit_after_write_ms", c.write_hit_after_write_ms),
            ("controller.bus_write_sector_ms", c.bus_write_sector_ms),
            ("controller.read_disconnect_after_write_ms", c.read_disconnect_after_write_ms),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v >= 0.0) {
                    return bad(name.into(), format!("must be a non-negative time in ms, got {v}"));
                }
                if v > MAX_DURATION_MS {
                    return bad(name.into(), format!("{} ms is longer than the {MAX_DURATION_MS} ms a disk time may be", shown(v)));
                }
            }
        }
        if let Some(x) = &c.extra_write_disconnect {
            for (name, v) in [
                ("command_ms", x.command_ms),
                ("disconnect_ms", x.disconnect_ms),
                ("inter_disconnect_ms", x.inter_disconnect_ms),
                ("second_disconnect_ms", x.second_disconnect_ms),
                ("seek_delta_ms", x.seek_delta_ms),
            ] {
                if !(v.is_finite() && v >= 0.0) {
                    return bad(format!("controller.extra_write_disconnect.{name}"), format!("must be a non-negative time in ms, got {v}"));
                }
                if v > MAX_DURATION_MS {
                    return bad(
                        format!("controller.extra_write_disconnect.{name}"),
                        format!("{} ms is longer than the {MAX_DURATION_MS} ms a disk time may be", shown(v)),
                    );
                }
            }
        }
        for (name, v) in [("cache.read_watermark", self.cache.read_watermark), ("cache.write_watermark", self.cache.write_watermark)] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return bad(name.into(), format!("must be a fraction between 0 and 1, got {v}"));
            }
        }
        self.validate_seek()?;
        if self.cache.enabled {
            if self.cache.write_segments == 0 {
                return bad("cache.write_segments".into(), "must be at least 1 when the cache is enabled".into());
            }
            if self.cache.separate_write_segment && self.cache.segments < 2 {
                return bad("cache.segments".into(), "must be at least 2 with a separate write segment".into());
            }
            if self.cache.segments == 0 {
                return bad("cache.segments".into(), "must be at least 1 when the cache is enabled".into());
            }
            if self.cache.segment_sectors == 0 {
                return bad("cache.segment_sectors".into(), "must be at least 1 when the cache is enabled".into());
            }
        }
        if self.cache.segments > MAX_CACHE_SEGMENTS {
            return bad("cache.segments".into(), format!("{} is more than the {MAX_CACHE_SEGMENTS} supported", self.cache.segments));
        }
        if self.cache.segment_sectors > MAX_SEGMENT_SECTORS {
            return bad("cache.segment_sectors".into(), format!("{} is more than the {MAX_SEGMENT_SECTORS} supported", self.cache.segment_sectors));
        }
        if self.controller.write_back && !self.cache.enabled {
            return bad("controller.write_back".into(), "needs cache.enabled = true".into());
        }
        if let Some(w) = &self.write_cache {
            self.validate_write_cache(w)?;
        }
        if let Sparing::SectorsPerRange { range_size: 0 } = self.sparing {
            return bad("sparing.range_size".into(), "must be at least 1".into());
        }
        if let Some(power) = &self.power {
            for (name, w) in power.fields() {
                if !(w.is_finite() && w >= 0.0) {
                    return bad(format!("power.{name}"), format!("must be a non-negative number of watts, got {w}"));
                }
                if w > MAX_POWER_W {
                    return bad(format!("power.{name}"), format!("{} W is more than the {MAX_POWER_W} W a disk drive may draw", shown(w)));
                }
            }
        }
        Ok(())
    }

    /// `[write_cache]`: a size of at least one sector, a sane flush overhead, and no DiskSim
    /// buffer under a write-back cache (the buffer has its own write-back).
    fn validate_write_cache(&self, w: &WriteCacheSpec) -> Result<(), SpecError> {
        let bad = |field: &str, message: String| Err(SpecError::Invalid { origin: String::new(), field: format!("write_cache.{field}"), message });
        if !(w.size_mib.is_finite() && w.size_mib <= MAX_WRITE_CACHE_MIB) {
            return bad("size_mib", format!("must be a size in MiB of at most {MAX_WRITE_CACHE_MIB}, got {}", shown(w.size_mib)));
        }
        if w.capacity_sectors(self.sector_bytes) == 0 {
            return bad("size_mib", format!("{} MiB is smaller than one sector ({} bytes): a write cache holds at least one", shown(w.size_mib), self.sector_bytes));
        }
        if !(w.flush_overhead_ms.is_finite() && (0.0..=MAX_DURATION_MS).contains(&w.flush_overhead_ms)) {
            return bad("flush_overhead_ms", format!("must be a time from 0 to {MAX_DURATION_MS} ms, got {}", shown(w.flush_overhead_ms)));
        }
        if w.destage_window == Some(0) {
            return bad("destage_window", "must be at least 1 (leave it out to choose among every dirty run)".into());
        }
        if w.is_write_back() && self.cache.enabled {
            return bad(
                "mode",
                "write_back runs on the media model, but [cache] enabled = true (DiskSim's buffer, whose own write-back is controller.write_back): set cache.enabled = false or mode = \"write_through\"".into(),
            );
        }
        Ok(())
    }

    /// Per zone: spares that fit their sparing unit, slips and defects inside the zone and listed
    /// once, an empty front no larger than the zone. (Whether a defect's spare is a spare sector
    /// is checked when the layout is built: it depends on the reserved areas.)
    fn validate_zone_sectors(&self) -> Result<(), SpecError> {
        let surfaces = u64::from(self.surfaces);
        for (i, z) in self.zones.iter().enumerate() {
            let bad = |field: &str, message: String| Err(SpecError::Invalid { origin: String::new(), field: format!("zones[{i}].{field}"), message });
            let spt = u64::from(z.sectors_per_track);
            let tracks = u64::from(z.last_cylinder - z.first_cylinder + 1) * surfaces;
            let total = tracks * spt;
            if z.empty_front_sectors > total {
                return bad("empty_front_sectors", format!("{} is more than the zone's {total} sectors", z.empty_front_sectors));
            }
            let spares = u64::from(z.spares);
            let per_cylinder = surfaces * spt;
            let (unit, unit_name) = match self.sparing {
                Sparing::None => (u64::MAX, ""),
                Sparing::Tracks => (tracks, "tracks in the zone"),
                Sparing::SectorsPerTrack => (spt, "sectors on a track"),
                Sparing::SectorsPerCylinder
                | Sparing::SectorsPerCylinderSlipToEnd
                | Sparing::SectorsPerCylinderAtFront
                | Sparing::SectorsPerCylinderAtFrontSlipToEnd => (per_cylinder, "sectors in a cylinder"),
                Sparing::SectorsPerRange { range_size } => (u64::from(range_size).saturating_mul(per_cylinder), "sectors in a sparing range"),
                Sparing::SectorsAtEnd | Sparing::SectorsPerZone | Sparing::SectorsPerZoneSlipToEnd => (total, "sectors in the zone"),
            };
            if spares > unit {
                return bad("spares", format!("{spares} spares is more than the {unit} {unit_name}"));
            }
            // Slips and defects count tracks under track sparing, sectors otherwise.
            let (bound, units) = if self.sparing == Sparing::Tracks { (tracks, "tracks") } else { (total, "sectors") };
            let mut seen = std::collections::HashSet::with_capacity(z.slips.len());
            for (j, &slip) in z.slips.iter().enumerate() {
                if slip >= bound {
                    return bad(&format!("slips[{j}]"), format!("{slip} is outside the zone ({bound} {units}, numbered from 0)"));
                }
                if !seen.insert(slip) {
                    return bad(&format!("slips[{j}]"), format!("{slip} is listed twice"));
                }
            }
            let (mut defective, mut spare) = (std::collections::HashSet::new(), std::collections::HashSet::new());
            for (j, &[from, to]) in z.defects.iter().enumerate() {
                for v in [from, to] {
                    if v >= bound {
                        return bad(&format!("defects[{j}]"), format!("{v} is outside the zone ({bound} {units}, numbered from 0)"));
                    }
                }
                if !defective.insert(from) {
                    return bad(&format!("defects[{j}]"), format!("defective {from} is listed twice"));
                }
                // Remapped to itself: changes nothing (DiskSim's cheetah4LP lists one).
                if from != to && !spare.insert(to) {
                    return bad(&format!("defects[{j}]"), format!("spare {to} is given to two defects"));
                }
            }
            for (j, [from, _]) in z.defects.iter().enumerate() {
                if spare.contains(from) {
                    return bad(&format!("defects[{j}]"), format!("defective {from} is also a defect's spare"));
                }
            }
        }
        Ok(())
    }

    /// A zone under banded mapping spans whole band pairs and keeps its skews in `track_skew` and
    /// `band_pair_skew`; a zone under any other mapping has no band pair skew. Banded drives
    /// come without DiskSim's sparing schemes (which count spares per cylinder or track of a
    /// cylinder-major order), so the sparing must be `none`.
    fn validate_banded_zone(&self, i: usize, z: &Zone) -> Result<(), SpecError> {
        let bad = |field: String, message: String| Err(SpecError::Invalid { origin: String::new(), field, message });
        let Mapping::Banded { band_cylinders } = self.mapping else {
            if z.band_pair_skew != 0.0 {
                return bad(format!("zones[{i}].band_pair_skew"), "applies to the banded mapping only".into());
            }
            return Ok(());
        };
        if band_cylinders == 0 {
            return bad("mapping.banded.band_cylinders".into(), "must be at least 1".into());
        }
        let cylinders = u64::from(z.last_cylinder - z.first_cylinder) + 1;
        let pair = 2 * u64::from(band_cylinders);
        if !cylinders.is_multiple_of(pair) {
            return bad(
                format!("zones[{i}].last_cylinder"),
                format!("the zone has {cylinders} cylinders, not a whole number of band pairs of {pair} (banded mapping, {band_cylinders} cylinders a band)"),
            );
        }
        if z.cylinder_skew != 0.0 {
            return bad(format!("zones[{i}].cylinder_skew"), "must be 0 under the banded mapping (its skews are track_skew and band_pair_skew)".into());
        }
        if self.sparing != Sparing::None {
            return bad("sparing".into(), "must be `none` under the banded mapping".into());
        }
        Ok(())
    }

    fn validate_seek(&self) -> Result<(), SpecError> {
        self.validate_seek_model(&self.seek, "seek")?;
        match &self.write_seek {
            Some(model) => self.validate_seek_model(model, "write_seek"),
            None => Ok(()),
        }
    }

    /// Checks one seek curve; `at` names it in errors (`seek` or `write_seek`).
    fn validate_seek_model(&self, model: &SeekModel, at: &str) -> Result<(), SpecError> {
        let bad = |field: &str, message: String| Err(SpecError::Invalid { origin: String::new(), field: format!("{at}{}", field.strip_prefix("seek").unwrap_or(field)), message });
        match model {
            SeekModel::Table { points } => {
                if points.is_empty() {
                    return bad("seek.points", "needs at least one [distance, ms] point".into());
                }
                let mut prev = 0.0;
                for (i, [d, ms]) in points.iter().enumerate() {
                    if !(d.is_finite() && *d > prev) {
                        return bad(&format!("seek.points[{i}]"), format!("distances must be positive and strictly increasing, got {d} after {prev}"));
                    }
                    if !(ms.is_finite() && *ms >= 0.0) {
                        return bad(&format!("seek.points[{i}]"), format!("seek time must be a non-negative number of ms, got {ms}"));
                    }
                    if *ms > MAX_DURATION_MS {
                        return bad(&format!("seek.points[{i}]"), format!("{} ms is longer than the {MAX_DURATION_MS} ms a disk time may be", shown(*ms)));
                    }
                    prev = *d;
                }
                // Measured tables dip a little here and there (DiskSim's atlas10k: 1.245 ms for
                // one cylinder, 1.157 for two), which is data. But past its last point the curve
                // continues the last segment's slope: sloping down, it would make the longest
                // seeks the fastest and reach 0 ms.
                let full_stroke = f64::from(self.cylinders().saturating_sub(1));
                if let [.., [d0, t0], [d1, t1]] = points.as_slice() {
                    if t1 < t0 && full_stroke > *d1 {
                        let at_full = t1 + (t1 - t0) / (d1 - d0) * (full_stroke - d1);
                        return bad(
                            &format!("seek.points[{}]", points.len() - 1),
                            format!(
                                "the last segment slopes down ({t0} ms at distance {d0}, {t1} ms at {d1}) and is extended to the full stroke of {full_stroke} cylinders, reaching {at_full:.3} ms; add a point at distance {full_stroke} or beyond"
                            ),
                        );
                    }
                }
            }
            SeekModel::ThreePoint { single_ms, average_ms, full_ms } => {
                let (single, average, full) = (*single_ms, *average_ms, *full_ms);
                if !(single > 0.0 && single <= average && average <= full && full.is_finite()) {
                    return bad("seek", format!("need 0 < single_ms ≤ average_ms ≤ full_ms, got {single}, {average}, {full}"));
                }
                if full > MAX_DURATION_MS {
                    return bad("seek.full_ms", format!("{} ms is longer than the {MAX_DURATION_MS} ms a disk time may be", shown(full)));
                }
                if single < full {
                    let cylinders = self.cylinders();
                    if cylinders < 4 {
                        return bad(
                            "seek",
                            format!("a three-point curve rising from single_ms to full_ms needs at least 4 cylinders to fit an average; this disk has {cylinders} (use a `table` curve)"),
                        );
                    }
                    let (lo, hi) = crate::seek::three_point_average_range(single, full, cylinders);
                    if !(average > lo && average < hi) {
                        return bad(
                            "seek.average_ms",
                            format!("{average} ms cannot be the average of a curve rising from {single} to {full} ms over {cylinders} cylinders (it must lie strictly between {lo:.6} and {hi:.6})"),
                        );
                    }
                }
            }
            SeekModel::Hpl { boundary, sqrt_a, sqrt_b, linear_a, linear_b, first_ten_ms } => {
                for (name, v) in [("boundary", boundary), ("sqrt_a", sqrt_a), ("sqrt_b", sqrt_b), ("linear_a", linear_a), ("linear_b", linear_b)] {
                    if !v.is_finite() || *v < 0.0 {
                        return bad(&format!("seek.{name}"), format!("must be a non-negative number, got {v}"));
                    }
                }
                if first_ten_ms.len() > 10 || first_ten_ms.iter().any(|v| !(v.is_finite() && (0.0..=MAX_DURATION_MS).contains(v))) {
                    return bad("seek.first_ten_ms", format!("at most ten times, each between 0 and {MAX_DURATION_MS} ms"));
                }
                // The longest seek of the curve is checked when the disk is built (it depends
                // on the evaluated curve).
            }
            SeekModel::ToshibaMk156f => {}
        }
        Ok(())
    }
}

/// A number for an error message: huge values in exponent form (`1e308`, not 309 digits).
fn shown(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e12 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Collapses a multi-line message (toml's errors quote the source) into one line.
pub(crate) fn one_line(s: &str) -> String {
    s.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}
