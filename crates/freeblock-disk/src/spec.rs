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
    /// Seek time as a function of cylinder distance.
    pub seek: SeekModel,
    /// Time to switch to another surface of the same cylinder, ms.
    pub head_switch_ms: f64,
    /// Extra settle time after positioning for a read, ms. Default 0.
    #[serde(default)]
    pub read_settle_ms: f64,
    /// Extra settle time after positioning for a write, ms (DiskSim "Add. write settling delay").
    /// Default 0.
    #[serde(default)]
    pub write_settle_ms: f64,
    /// Controller overheads and interface speed.
    #[serde(default)]
    pub controller: Controller,
    /// On-disk cache. Off by default.
    #[serde(default)]
    pub cache: CacheSpec,
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
    /// Skew added at each switch to the next cylinder, in sectors.
    #[serde(default)]
    pub cylinder_skew: f64,
    /// Spare count for the disk's sparing scheme (tracks or sectors; see [`Sparing`]).
    #[serde(default)]
    pub spares: u32,
    /// Slipped sectors: zone-relative physical sector numbers skipped by the LBN mapping.
    #[serde(default)]
    pub slips: Vec<u64>,
    /// Remapped defects: `[defective, spare]` zone-relative physical sector numbers.
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
    /// last segment's slope is extended.
    Table {
        /// `[distance, ms]` pairs.
        points: Vec<[f64; 2]>,
    },
    /// Three-point fit through single-cylinder, average and full-stroke seek times: the curve
    /// `a + b·sqrt(d-1) + c·(d-1)` with `a` the single-cylinder time, `b` and `c` chosen so the mean
    /// over uniformly random seeks equals `average_ms` and the full stroke equals `full_ms`.
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
    /// time"). Zero means the interface is never the bottleneck.
    pub bus_sector_ms: f64,
    /// Writes are reported complete once their data is in the cache and written to the media
    /// later (write-back, DiskSim "Fast write level" > 0). Needs the cache enabled.
    pub write_back: bool,
}

/// Segmented on-disk cache with read-ahead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheSpec {
    /// Whether the cache is used at all. Default false.
    pub enabled: bool,
    /// Number of segments. Default 1.
    pub segments: u32,
    /// Size of each segment, in sectors. Default 256.
    pub segment_sectors: u32,
    /// Sectors read past the end of a read miss, while the disk is otherwise idle. Default 0.
    pub read_ahead_sectors: u32,
}

impl Default for CacheSpec {
    fn default() -> Self {
        Self { enabled: false, segments: 1, segment_sectors: 256, read_ahead_sectors: 0 }
    }
}

impl DiskSpec {
    /// Parses a spec from TOML text and validates it. `origin` names the file in errors.
    ///
    /// # Errors
    /// [`SpecError::Toml`] for syntax errors and unknown or missing fields (with line and column),
    /// [`SpecError::Invalid`] for values that parse but make no disk.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, SpecError> {
        let spec: DiskSpec = toml::from_str(text)
            .map_err(|e| SpecError::Toml { origin: origin.to_string(), message: one_line(&e.to_string()) })?;
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
        if self.surfaces == 0 {
            return bad("surfaces".into(), "must be at least 1".into());
        }
        if self.sector_bytes == 0 || self.sector_bytes % 512 != 0 {
            return bad("sector_bytes".into(), format!("must be a positive multiple of 512, got {}", self.sector_bytes));
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
            if z.sectors_per_track == 0 {
                return bad(format!("zones[{i}].sectors_per_track"), "must be at least 1".into());
            }
            for (name, v) in [("first_sector_offset", z.first_sector_offset), ("track_skew", z.track_skew), ("cylinder_skew", z.cylinder_skew)] {
                if !(v.is_finite() && v >= 0.0) {
                    return bad(format!("zones[{i}].{name}"), format!("must be a non-negative number of sectors, got {v}"));
                }
            }
            next_cylinder = z.last_cylinder + 1;
        }
        for (name, v) in [
            ("head_switch_ms", self.head_switch_ms),
            ("read_settle_ms", self.read_settle_ms),
            ("write_settle_ms", self.write_settle_ms),
            ("controller.read_miss_ms", self.controller.read_miss_ms),
            ("controller.read_hit_ms", self.controller.read_hit_ms),
            ("controller.write_miss_ms", self.controller.write_miss_ms),
            ("controller.write_hit_ms", self.controller.write_hit_ms),
            ("controller.bus_sector_ms", self.controller.bus_sector_ms),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(name.into(), format!("must be a non-negative time in ms, got {v}"));
            }
        }
        self.validate_seek()?;
        if self.cache.enabled {
            if self.cache.segments == 0 {
                return bad("cache.segments".into(), "must be at least 1 when the cache is enabled".into());
            }
            if self.cache.segment_sectors == 0 {
                return bad("cache.segment_sectors".into(), "must be at least 1 when the cache is enabled".into());
            }
        }
        if self.controller.write_back && !self.cache.enabled {
            return bad("controller.write_back".into(), "needs cache.enabled = true".into());
        }
        if let Sparing::SectorsPerRange { range_size: 0 } = self.sparing {
            return bad("sparing.range_size".into(), "must be at least 1".into());
        }
        Ok(())
    }

    fn validate_seek(&self) -> Result<(), SpecError> {
        let bad = |field: &str, message: String| Err(SpecError::Invalid { origin: String::new(), field: field.into(), message });
        match &self.seek {
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
                    prev = *d;
                }
            }
            SeekModel::ThreePoint { single_ms, average_ms, full_ms } => {
                if !(*single_ms > 0.0 && single_ms <= average_ms && average_ms <= full_ms && full_ms.is_finite()) {
                    return bad("seek", format!("need 0 < single_ms ≤ average_ms ≤ full_ms, got {single_ms}, {average_ms}, {full_ms}"));
                }
            }
            SeekModel::Hpl { boundary, sqrt_a, sqrt_b, linear_a, linear_b, first_ten_ms } => {
                for (name, v) in [("boundary", boundary), ("sqrt_a", sqrt_a), ("sqrt_b", sqrt_b), ("linear_a", linear_a), ("linear_b", linear_b)] {
                    if !v.is_finite() || *v < 0.0 {
                        return bad(&format!("seek.{name}"), format!("must be a non-negative number, got {v}"));
                    }
                }
                if first_ten_ms.len() > 10 || first_ten_ms.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
                    return bad("seek.first_ten_ms", "at most ten non-negative times".into());
                }
            }
            SeekModel::ToshibaMk156f => {}
        }
        Ok(())
    }
}

/// Collapses a multi-line message (toml's errors quote the source) into one line.
pub(crate) fn one_line(s: &str) -> String {
    s.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}
