//! The segment summary: the last block of every segment, naming the logical block in each of the
//! segment's data slots, so the cleaner can tell live blocks from dead ones and recovery can check
//! the block map against what is on the platters.
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `FBLFSSUM` |
//! | 8 | 4 | segment number |
//! | 12 | 8 | log clock when written (blocks appended before it; the cleaner's age) |
//! | 20 | 2 | slots `n` |
//! | 22 | 8·`n` | the logical block of each slot, or `u64::MAX` for a hole |
//! | 22+8`n` | 4 | CRC-32 of everything before it |
//!
//! Integers are little-endian. A summary must fit its one block.

/// Magic bytes at the start of a summary.
pub const SUMMARY_MAGIC: [u8; 8] = *b"FBLFSSUM";
/// The slot value of a hole (a block written and then deleted before its segment was).
pub const HOLE: u64 = u64::MAX;
const HEADER: usize = 22;

/// A decoded segment summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentSummary {
    /// The segment it describes.
    pub segment: u32,
    /// The log clock when the segment was written.
    pub written_at: u64,
    /// The logical block in each data slot ([`HOLE`] for none).
    pub slots: Vec<u64>,
}

/// Bytes a summary of `slots` slots takes.
#[must_use]
pub fn encoded_len(slots: usize) -> usize {
    HEADER + 8 * slots + 4
}

impl SegmentSummary {
    /// The on-disk bytes.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(encoded_len(self.slots.len()));
        b.extend_from_slice(&SUMMARY_MAGIC);
        b.extend_from_slice(&self.segment.to_le_bytes());
        b.extend_from_slice(&self.written_at.to_le_bytes());
        b.extend_from_slice(&u16::try_from(self.slots.len()).unwrap_or(u16::MAX).to_le_bytes());
        for s in &self.slots {
            b.extend_from_slice(&s.to_le_bytes());
        }
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes the summary of `segment`.
    ///
    /// # Errors
    /// A message saying what does not check: length, magic, CRC, or a summary written for
    /// another segment.
    pub fn decode(bytes: &[u8], segment: u32) -> Result<Self, String> {
        if bytes.len() < HEADER + 4 {
            return Err(format!("{} bytes is too short for a summary", bytes.len()));
        }
        if bytes[..8] != SUMMARY_MAGIC {
            return Err("bad magic (not a segment summary)".into());
        }
        let n = usize::from(u16::from_le_bytes([bytes[20], bytes[21]]));
        if bytes.len() != encoded_len(n) {
            return Err(format!("{} bytes, but {n} slots need {}", bytes.len(), encoded_len(n)));
        }
        let body = &bytes[..bytes.len() - 4];
        let stored = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().expect("4 bytes"));
        if crc32fast::hash(body) != stored {
            return Err("CRC mismatch".into());
        }
        let written_for = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if written_for != segment {
            return Err(format!("it was written for segment {written_for}"));
        }
        let written_at = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
        let slots = (0..n).map(|i| u64::from_le_bytes(bytes[HEADER + 8 * i..HEADER + 8 * i + 8].try_into().expect("8 bytes"))).collect();
        Ok(Self { segment, written_at, slots })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_round_trips_and_any_flipped_byte_is_caught() {
        let s = SegmentSummary { segment: 7, written_at: 1234, slots: vec![5, HOLE, 9] };
        let b = s.encode();
        assert_eq!(SegmentSummary::decode(&b, 7).unwrap(), s);
        assert!(SegmentSummary::decode(&b, 8).unwrap_err().contains("segment 7"));
        for i in 0..b.len() {
            let mut bad = b.clone();
            bad[i] ^= 0x40;
            assert!(SegmentSummary::decode(&bad, 7).is_err(), "byte {i}");
        }
    }
}
