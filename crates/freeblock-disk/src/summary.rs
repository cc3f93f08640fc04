//! A disk's geometry and mechanics at a glance: what `freeblock disk show` prints and the Python
//! `disk_info` returns, computed once here so both fronts only format it.

use serde::Serialize;

use crate::disk::Disk;

/// Seek distances (cylinders) sampled for the summary's seek curve; the full stroke is added.
const SEEK_SAMPLE_DISTANCES: [u32; 19] = [1, 2, 3, 5, 10, 20, 50, 100, 200, 300, 500, 1000, 2000, 3000, 5000, 10_000, 20_000, 50_000, 100_000];

/// One zone of the LBN layout.
#[derive(Debug, Clone, Serialize)]
pub struct ZoneSummary {
    /// First cylinder (inclusive).
    pub first_cylinder: u32,
    /// Last cylinder (inclusive).
    pub last_cylinder: u32,
    /// Sectors per track.
    pub sectors_per_track: u32,
    /// First LBN of the zone.
    pub first_lbn: u64,
    /// LBNs the zone holds.
    pub lbns: u64,
}

/// Geometry, mechanics and a sampled seek curve of one disk.
#[derive(Debug, Clone, Serialize)]
pub struct DiskSummary {
    /// Short name.
    pub name: String,
    /// Model name.
    pub description: String,
    /// Where the figures come from.
    pub source: String,
    /// Addressable sectors.
    pub capacity_sectors: u64,
    /// Capacity in bytes.
    pub capacity_bytes: u64,
    /// Capacity in GB (10^9 bytes).
    pub capacity_gb: f64,
    /// Bytes per sector.
    pub sector_bytes: u32,
    /// Spindle speed.
    pub rpm: f64,
    /// One revolution, ms.
    pub revolution_ms: f64,
    /// Cylinders.
    pub cylinders: u32,
    /// Surfaces.
    pub surfaces: u32,
    /// The zone table.
    pub zones: Vec<ZoneSummary>,
    /// Head switch, ms.
    pub head_switch_ms: f64,
    /// Read settle, ms.
    pub read_settle_ms: f64,
    /// Write settle, ms.
    pub write_settle_ms: f64,
    /// How much longer inward seeks take than the curve below, and outward ones less, ms.
    pub seek_asymmetry_ms: f64,
    /// One-cylinder seek, ms.
    pub seek_single_ms: f64,
    /// Mean seek over random cylinder pairs, ms.
    pub seek_average_ms: f64,
    /// Full-stroke seek, ms.
    pub seek_full_ms: f64,
    /// `(distance in cylinders, ms)` at sampled distances and the full stroke.
    pub seek_curve_ms: Vec<(u32, f64)>,
    /// Whether the on-disk cache is on.
    pub cache_enabled: bool,
}

impl DiskSummary {
    /// Summarises `disk`.
    #[must_use]
    pub fn of(disk: &Disk) -> Self {
        let spec = disk.spec();
        let layout = disk.layout();
        let seek = disk.seek_curve();
        let cylinders = layout.cylinders();
        let ms = |ns: u64| ns as f64 / 1e6;
        let mut distances: Vec<u32> = SEEK_SAMPLE_DISTANCES.into_iter().filter(|&d| d < cylinders).collect();
        if cylinders > 1 && distances.last() != Some(&(cylinders - 1)) {
            distances.push(cylinders - 1);
        }
        let capacity_bytes = disk.capacity() * u64::from(spec.sector_bytes);
        Self {
            name: spec.name.clone(),
            description: spec.description.clone(),
            source: spec.source.clone(),
            capacity_sectors: disk.capacity(),
            capacity_bytes,
            capacity_gb: capacity_bytes as f64 / 1e9,
            sector_bytes: spec.sector_bytes,
            rpm: spec.rpm,
            revolution_ms: disk.revolution_ps() as f64 / 1e9,
            cylinders,
            surfaces: layout.surfaces(),
            zones: layout
                .zone_table()
                .into_iter()
                .map(|(first_cylinder, last_cylinder, sectors_per_track, first_lbn, lbns)| ZoneSummary { first_cylinder, last_cylinder, sectors_per_track, first_lbn, lbns })
                .collect(),
            head_switch_ms: spec.head_switch_ms,
            read_settle_ms: spec.read_settle_ms,
            write_settle_ms: spec.write_settle_ms,
            seek_asymmetry_ms: spec.seek_asymmetry_ms,
            seek_single_ms: ms(seek.time(1)),
            seek_average_ms: seek.average() / 1e6,
            seek_full_ms: ms(seek.full_stroke()),
            seek_curve_ms: distances.iter().map(|&d| (d, ms(seek.time(d)))).collect(),
            cache_enabled: spec.cache.enabled,
        }
    }
}
