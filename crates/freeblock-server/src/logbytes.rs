//! The real bytes of a log-structured layout (LFS, `crates/freeblock/src/layout/lfs/`) behind the
//! server: LFS acknowledges a write from memory (the segment being filled) and writes a whole
//! segment at a time, so the server holds each block's latest bytes until the segment write that
//! carries them is on the media, and makes the map that names them durable only after that.
//!
//! ```text
//!  WRITE l ─► log appends l to the segment being filled ─► open[l] = the request's bytes
//!  cleaner moves l from sector x ─► open[l] = l's current bytes (held, or read at x)
//!  segment full / FLUSH / FUA ─► sealed: write #seq to segment s = open's blocks + summary;
//!                                  the log's map commits at once (in memory only)
//!  the model completes write #seq ─► done; writes are applied in seal order:
//!      the oldest done write ─► one pwrite of its segment (data slots, summary block), or for
//!                                a partial segment two: its slots up to the last filled, and
//!                                its summary block
//!                           ─► store synced, journal mirrored up to the next unapplied commit
//!  READ l ─► open[l], else the newest sealed write holding l, else the store where the map says
//! ```
//!
//! | state of a block's latest bytes | where the server finds them | what a crash keeps |
//! |---|---|---|
//! | in the segment being filled | `open` | the block's older version (never acknowledged as durable) |
//! | sealed, its write not applied | that write's slot | the same: its commit is not in the files yet |
//! | applied | the store, where the map puts it | the block: bytes synced before the commit is mirrored |
//!
//! **Seal order.** The engine may complete segment writes in any order (its scheduler picks),
//! but a write may reuse a segment that an earlier write's commit freed. Applying them in the
//! order they were sealed means a segment is overwritten only once the commit that freed it is
//! durable, and the files never hold a commit whose bytes are not in the store.
//!
//! **Reads are filled when they arrive**, from the bytes the log names at that instant. (The
//! other layouts read at the model's completion; here a segment may be freed and rewritten
//! between a read's arrival and its completion, and the block would be gone.) The model still
//! times the read where the map put the block.

use std::collections::{HashMap, VecDeque};

use freeblock::layout::lfs::summary::{SegmentSummary, HOLE};
use freeblock::layout::lfs::{LfsConfig, LogEvent};
use freeblock::layout::LayoutError;

use crate::store::Store;

/// A segment write the log sealed: its blocks' bytes until it is applied to the store.
struct SealedWrite {
    seq: u64,
    segment: u32,
    summary: Vec<u8>,
    /// Each data slot's logical block and bytes (`None`: a hole).
    slots: Vec<Option<(u64, Vec<u8>)>>,
    /// The journal's length before this write's commit.
    journal_before: u64,
    /// The model completed it.
    done: bool,
}

/// The bytes of blocks the log holds in memory, and the segment writes not yet applied.
pub struct LogBytes {
    cfg: LfsConfig,
    sector_bytes: u64,
    open: HashMap<u64, Vec<u8>>,
    sealed: VecDeque<SealedWrite>,
    /// Logical block → the newest sealed write holding it.
    holder: HashMap<u64, u64>,
}

fn bad(message: String) -> LayoutError {
    LayoutError::Config { field: "layout", message }
}

impl LogBytes {
    /// Nothing held, for a log of `cfg` on a disk of `sector_bytes`-byte sectors.
    #[must_use]
    pub fn new(cfg: LfsConfig, sector_bytes: u64) -> Self {
        Self { cfg, sector_bytes, open: HashMap::new(), sealed: VecDeque::new(), holder: HashMap::new() }
    }

    fn block_bytes(&self) -> usize {
        (self.cfg.block_sectors * self.sector_bytes) as usize
    }

    /// Segment writes sealed and not yet applied.
    #[must_use]
    pub fn unapplied(&self) -> usize {
        self.sealed.len()
    }

    /// The journal bytes a crash may keep now: up to the first unapplied write's commit (`None`:
    /// all of it).
    #[must_use]
    pub fn durable_journal_len(&self) -> Option<u64> {
        self.sealed.front().map(|w| w.journal_before)
    }

    /// The current bytes of `logical`, which the map puts at sector `lbn`: held in memory while
    /// its segment write is not applied, else read from the store.
    ///
    /// # Errors
    /// The store's read error, with the place.
    pub fn current(&self, logical: u64, lbn: u64, store: &Store) -> Result<Vec<u8>, LayoutError> {
        if let Some(b) = self.open.get(&logical) {
            return Ok(b.clone());
        }
        if let Some(b) = self.held(logical) {
            return Ok(b.to_vec());
        }
        let mut b = vec![0u8; self.block_bytes()];
        store.read(lbn * self.sector_bytes, &mut b).map_err(|e| LayoutError::Io { file: "the backing store".into(), action: "read", message: format!("logical block {logical} at sector {lbn}: {e}") })?;
        Ok(b)
    }

    /// The bytes of `logical` in the segment being filled.
    #[must_use]
    pub fn in_open(&self, logical: u64) -> Option<&[u8]> {
        self.open.get(&logical).map(Vec::as_slice)
    }

    fn held(&self, logical: u64) -> Option<&[u8]> {
        let seq = *self.holder.get(&logical)?;
        let w = self.sealed.iter().find(|w| w.seq == seq)?;
        w.slots.iter().flatten().find(|(l, _)| *l == logical).map(|(_, b)| b.as_slice())
    }

    /// Follows what the log did, in order. `written` gives the bytes of a block a workload write
    /// put in the segment being filled. Returns the segment writes sealed and the blocks the
    /// cleaner moved.
    ///
    /// # Errors
    /// A block whose bytes cannot be found (a bug, named), a store read's error.
    pub fn follow(&mut self, events: Vec<LogEvent>, store: &Store, written: &mut dyn FnMut(u64) -> Option<Vec<u8>>) -> Result<(u64, u64), LayoutError> {
        let (mut sealed, mut moved) = (0, 0);
        for e in events {
            match e {
                LogEvent::Appended { logical, from: None } => {
                    let b = written(logical).ok_or_else(|| bad(format!("logical block {logical} was written without its bytes")))?;
                    self.open.insert(logical, b);
                }
                LogEvent::Appended { logical, from: Some(lbn) } => {
                    let b = self.current(logical, lbn, store)?;
                    self.open.insert(logical, b);
                    moved += 1;
                }
                LogEvent::Sealed { seq, segment, summary, journal_before } => {
                    let decoded = SegmentSummary::decode(&summary, segment).map_err(|e| bad(format!("the summary of segment write {seq}: {e}")))?;
                    let mut slots = Vec::with_capacity(decoded.slots.len());
                    for &l in &decoded.slots {
                        if l == HOLE {
                            slots.push(None);
                            continue;
                        }
                        let b = self.open.remove(&l).ok_or_else(|| bad(format!("segment write {seq} carries logical block {l}, whose bytes are not held")))?;
                        self.holder.insert(l, seq);
                        slots.push(Some((l, b)));
                    }
                    // Blocks deleted from the segment being filled are gone with it.
                    self.open.clear();
                    self.sealed.push_back(SealedWrite { seq, segment, summary, slots, journal_before, done: false });
                    sealed += 1;
                }
            }
        }
        Ok((sealed, moved))
    }

    /// The model completed segment write `seq`.
    ///
    /// # Errors
    /// A write that was never sealed (named).
    pub fn completed(&mut self, seq: u64) -> Result<(), LayoutError> {
        let w = self.sealed.iter_mut().find(|w| w.seq == seq).ok_or_else(|| bad(format!("segment write {seq} completed, but it is not held")))?;
        w.done = true;
        Ok(())
    }

    /// The oldest sealed write, if the model has completed it: where its bytes go, as (first
    /// sector, bytes) pieces. A full segment is one piece (its data slots, the summary last); a
    /// partial one, as LFS writes it (`LfsPolicy::flush`), is its slots from the segment's start
    /// to the last one filled (zeroes in holes) and the summary block: the slots after them are
    /// dead and keep whatever they held. The caller writes them, then calls
    /// [`LogBytes::applied`].
    #[must_use]
    pub fn ready(&self) -> Option<Vec<(u64, Vec<u8>)>> {
        let w = self.sealed.front().filter(|w| w.done)?;
        let bb = self.block_bytes();
        let data_blocks = self.cfg.data_blocks() as usize;
        let full = w.slots.len() >= data_blocks;
        let mut data = vec![0u8; if full { (data_blocks + 1) * bb } else { w.slots.len() * bb }];
        for (i, slot) in w.slots.iter().enumerate() {
            if let Some((_, b)) = slot {
                data[i * bb..(i + 1) * bb].copy_from_slice(b);
            }
        }
        let first = self.cfg.segment_lbn(w.segment);
        if full {
            let at = data_blocks * bb;
            data[at..at + w.summary.len()].copy_from_slice(&w.summary);
            return Some(vec![(first, data)]);
        }
        let mut summary = vec![0u8; bb];
        summary[..w.summary.len()].copy_from_slice(&w.summary);
        Some(vec![(first, data), (self.cfg.summary_lbn(w.segment), summary)])
    }

    /// The oldest sealed write is in the store: its blocks are no longer held.
    pub fn applied(&mut self) {
        if let Some(w) = self.sealed.pop_front() {
            for (l, _) in w.slots.into_iter().flatten() {
                if self.holder.get(&l) == Some(&w.seq) {
                    self.holder.remove(&l);
                }
            }
        }
    }
}

/// A segment's summary as the store holds it: the summary block, cut to the summary's own length
/// (the rest of the block is zeroes), for [`freeblock::layout::lfs::Log::recover`].
#[must_use]
pub fn summary_in_block(block: &[u8]) -> Vec<u8> {
    let slots = block.get(20..22).map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])));
    let len = freeblock::layout::lfs::summary::encoded_len(slots);
    block[..len.min(block.len())].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreMeta;

    const BLOCK: usize = 4096;

    fn sealed(seq: u64, segment: u32, slots: Vec<u64>, journal_before: u64) -> LogEvent {
        LogEvent::Sealed { seq, segment, summary: SegmentSummary { segment, written_at: 0, slots }.encode(), journal_before }
    }

    fn appended(logical: u64) -> LogEvent {
        LogEvent::Appended { logical, from: None }
    }

    /// A log of 8 segments at the start of a small store, and the store.
    fn setup(name: &str) -> (LogBytes, Store, std::path::PathBuf) {
        let cfg = LfsConfig::new(0, 8 * 128 * 4096, 64, 0);
        let path = std::env::temp_dir().join(format!("freeblock-logbytes-{name}-{}", std::process::id()));
        let meta = StoreMeta { disk: "test".into(), disk_sectors: cfg.partition_blocks() * 8, sector_bytes: 512, layout: None, created_empty: true };
        let (store, _) = Store::open(&path, &meta).unwrap();
        (LogBytes::new(cfg, 512), store, path)
    }

    fn cleanup(path: &std::path::Path) {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(crate::store::beside(path, "layout.json"));
    }

    #[test]
    fn segment_writes_apply_in_seal_order_whatever_order_they_complete_in() {
        let (mut log, store, path) = setup("order");
        let bytes = |l: u64| Some(vec![l as u8; BLOCK]);
        // Write #0 carries blocks 5 and 6 to segment 0; block 5 is rewritten and goes with #1 to
        // segment 1 (with a hole where a deleted block was).
        let events = vec![appended(5), appended(6), sealed(0, 0, vec![5, 6], 100), appended(5), sealed(1, 1, vec![HOLE, 5], 180)];
        let mut version = 0u8;
        let mut written = |l: u64| {
            version += 1;
            bytes(l).map(|mut b| {
                b[0] = version;
                b
            })
        };
        assert_eq!(log.follow(events, &store, &mut written).unwrap(), (2, 0));
        assert_eq!(log.durable_journal_len(), Some(100), "nothing applied: the files keep no commit of these writes");
        // The newest bytes of block 5 are #1's, held until it is applied.
        assert_eq!(log.current(5, 8 * 129, &store).unwrap()[0], 3);
        log.completed(1).unwrap();
        assert!(log.ready().is_none(), "#1 waits for #0, sealed before it");
        log.completed(0).unwrap();
        // A partial segment: its two filled slots, then its summary in the segment's last block.
        let pieces = log.ready().unwrap();
        assert_eq!(pieces.iter().map(|(lbn, b)| (*lbn, b.len())).collect::<Vec<_>>(), vec![(0, 2 * BLOCK), (127 * 8, BLOCK)]);
        let seg0 = &pieces[0].1;
        assert_eq!((seg0[0], seg0[1], seg0[BLOCK], seg0[BLOCK + 1]), (1, 5, 2, 6), "slot 0 block 5 (first version), slot 1 block 6");
        let summary = SegmentSummary::decode(&summary_in_block(&pieces[1].1), 0).unwrap();
        assert_eq!(summary.slots, vec![5, 6], "the summary is the segment's last block");
        for (lbn, bytes) in &pieces {
            store.write(lbn * 512, bytes).unwrap();
        }
        log.applied();
        assert_eq!(log.durable_journal_len(), Some(180));
        // Block 6 is no longer held: it is read where the map puts it.
        assert_eq!(log.current(6, 8, &store).unwrap()[0], 2);
        let pieces = log.ready().unwrap();
        let (lbn, seg1) = &pieces[0];
        assert_eq!((*lbn, seg1.len(), seg1[BLOCK], seg1[0]), (128 * 8, 2 * BLOCK, 3, 0), "segment 1: a hole (zeroes), then block 5's second version");
        assert_eq!(pieces[1].0, (128 + 127) * 8, "and its summary block");
        log.applied();
        assert_eq!(log.durable_journal_len(), None, "every write applied: the whole journal may be kept");
        assert_eq!(log.unapplied(), 0);
        cleanup(&path);
    }

    #[test]
    fn a_moved_block_takes_its_current_bytes_and_a_missing_one_is_named() {
        let (mut log, store, path) = setup("moved");
        store.write(3 * BLOCK as u64, &[0x77; BLOCK]).unwrap();
        // Block 9 lives at sector 24 (slot 3 of segment 0): the cleaner moves it.
        let events = vec![LogEvent::Appended { logical: 9, from: Some(24) }, sealed(0, 2, vec![9], 0)];
        assert_eq!(log.follow(events, &store, &mut |_| None).unwrap(), (1, 1));
        assert_eq!(log.current(9, 2 * 128 * 8, &store).unwrap(), vec![0x77; BLOCK]);
        // A segment write naming a block whose bytes were never given is an error naming it.
        let err = log.follow(vec![sealed(1, 3, vec![4], 0)], &store, &mut |_| None).unwrap_err().to_string();
        assert!(err.contains("logical block 4"), "{err}");
        let err = log.follow(vec![appended(4)], &store, &mut |_| None).unwrap_err().to_string();
        assert!(err.contains("logical block 4"), "{err}");
        assert!(log.completed(7).unwrap_err().to_string().contains("segment write 7"));
        cleanup(&path);
    }
}
