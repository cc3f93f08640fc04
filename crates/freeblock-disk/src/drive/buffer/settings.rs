//! The controller's overheads and the cache's switches, read from the spec once.
//!
//! Every time becomes picoseconds here ([`ms_ps`]), the unit of the whole buffer model, so the
//! rest of it adds and compares integers. Several overheads come in two variants, for a command
//! after a read and after a write (DiskSim's "… after write" parameters); [`Params::pick`]
//! chooses by the kind of the last command.
//!
//! | group | fields | from |
//! |---|---|---|
//! | command overheads | `read_hit`, `read_miss`, `write_hit`, `write_miss`, `per_request`, `data_prep` | `[controller]` |
//! | bus handshakes | `read_disc`, `write_disc`, `reselect`, `reselect_other`, `read_complete`, `write_complete`, `extra`, `bt_read`, `bt_write`, `hold_read`, `hold_write` | `[controller]` |
//! | segments | `seg_size`, `write_segs`, `separate_write_seg`, `read_water`, `write_water`, `water_by_req`, `hits_on_write` | `[cache]` |
//! | read-ahead | `ra_mode`, `max_ra`, `min_ra`, `ra_on_hit`, `stop_in_sector`, `keep_read_data` | `[cache]` |
//! | write-back | `write_back`, `min_write_seek`, `combine_writes` | `[controller]`, `[cache]` |
//! | media process | `immed_read`, `immed_write`, `read_any_free`, `skip_unmapped`, `capacity`, `rev` | `[cache]`, the disk |

use crate::disk::Disk;
use crate::spec::ReadAhead;

fn ms_ps(ms: f64) -> u64 {
    (ms * 1e9).round() as u64
}

/// Timings and switches, from the spec (picoseconds).
#[derive(Debug, Clone)]
pub(crate) struct Params {
    /// `[after a read, after a write]` variants.
    pub(super) read_hit: [u64; 2],
    pub(super) read_miss: [u64; 2],
    pub(super) write_hit: [u64; 2],
    pub(super) write_miss: [u64; 2],
    pub(super) read_disc: [u64; 2],
    pub(super) write_disc: u64,
    pub(super) per_request: u64,
    pub(super) read_complete: u64,
    pub(super) write_complete: u64,
    pub(super) data_prep: u64,
    pub(super) reselect: u64,
    pub(super) reselect_other: u64,
    pub(super) min_write_seek: u64,
    /// command, first disconnect, inter-disconnect, second disconnect, seek delta.
    pub(super) extra: Option<[u64; 5]>,
    pub(super) bt_read: u64,
    pub(super) bt_write: u64,
    pub(super) hold_read: bool,
    pub(super) hold_write: bool,
    pub(super) write_back: bool,
    pub(super) seg_size: u64,
    pub(super) write_segs: u32,
    pub(super) separate_write_seg: bool,
    pub(super) ra_mode: ReadAhead,
    pub(super) max_ra: u64,
    pub(super) min_ra: u64,
    pub(super) ra_on_hit: bool,
    pub(super) read_any_free: bool,
    pub(super) immed_read: bool,
    pub(super) immed_write: bool,
    pub(super) hits_on_write: bool,
    pub(super) combine_writes: bool,
    pub(super) keep_read_data: bool,
    pub(super) skip_unmapped: bool,
    pub(super) stop_in_sector: bool,
    pub(super) read_water: f64,
    pub(super) write_water: f64,
    pub(super) water_by_req: bool,
    pub(super) capacity: u64,
    pub(super) rev: u64,
}

impl Params {
    pub(super) fn new(disk: &Disk) -> Self {
        let s = disk.spec();
        let c = &s.controller;
        let k = &s.cache;
        let pair = |ar: f64, aw: Option<f64>| [ms_ps(ar), ms_ps(aw.unwrap_or(ar))];
        Self {
            read_hit: pair(c.read_hit_ms, c.read_hit_after_write_ms),
            read_miss: pair(c.read_miss_ms, c.read_miss_after_write_ms),
            write_hit: pair(c.write_hit_ms, c.write_hit_after_write_ms),
            write_miss: pair(c.write_miss_ms, c.write_miss_after_write_ms),
            read_disc: pair(c.read_disconnect_ms, c.read_disconnect_after_write_ms),
            write_disc: ms_ps(c.write_disconnect_ms),
            per_request: ms_ps(c.per_request_ms),
            read_complete: ms_ps(c.read_complete_ms),
            write_complete: ms_ps(c.write_complete_ms),
            data_prep: ms_ps(c.data_prep_ms),
            reselect: ms_ps(c.reselect_ms),
            reselect_other: ms_ps(c.reselect_other_ms),
            min_write_seek: ms_ps(c.min_write_seek_ms),
            extra: c.extra_write_disconnect.as_ref().map(|x| {
                [ms_ps(x.command_ms), ms_ps(x.disconnect_ms), ms_ps(x.inter_disconnect_ms), ms_ps(x.second_disconnect_ms), ms_ps(x.seek_delta_ms)]
            }),
            bt_read: ms_ps(c.bus_sector_ms),
            bt_write: ms_ps(c.bus_write_sector_ms.unwrap_or(c.bus_sector_ms)),
            hold_read: c.hold_bus_read,
            hold_write: c.hold_bus_write,
            write_back: c.write_back,
            seg_size: u64::from(k.segment_sectors),
            write_segs: k.write_segments,
            separate_write_seg: k.separate_write_segment,
            ra_mode: k.read_ahead,
            max_ra: u64::from(k.read_ahead_sectors),
            min_ra: if k.read_ahead == ReadAhead::None { 0 } else { u64::from(k.min_read_ahead_sectors) },
            ra_on_hit: k.read_ahead_on_hit,
            read_any_free: k.read_any_free_blocks,
            immed_read: k.zero_latency_reads,
            immed_write: k.zero_latency_writes,
            hits_on_write: k.read_hits_on_write_data,
            combine_writes: k.combine_sequential_writes,
            keep_read_data: k.keep_read_data,
            skip_unmapped: k.skip_unmapped_sectors,
            stop_in_sector: k.stop_read_ahead_mid_sector,
            read_water: k.read_watermark,
            write_water: k.write_watermark,
            water_by_req: k.watermark_of_request,
            capacity: disk.capacity(),
            rev: disk.revolution_ps(),
        }
    }

    /// The after-read or after-write variant.
    pub(super) fn pick(v: [u64; 2], last_read: bool) -> u64 {
        if last_read {
            v[0]
        } else {
            v[1]
        }
    }
}
