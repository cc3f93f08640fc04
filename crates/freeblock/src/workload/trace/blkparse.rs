//! Linux `blkparse` text output (default format), as produced by
//! `blktrace -d /dev/sda -o - | blkparse -i -`.
//!
//! Each event line is
//!
//! ```text
//! <maj,min> <cpu> <sequence> <seconds.nanoseconds> <pid> <action> <RWBS> [<sector> + <count>] [<process>]
//!   8,0    3        1     0.000000000   697  Q   R 223490 + 8 [kjournald]
//!   8,0    3        4     0.000001912   697  D   R 223490 + 8 [kjournald]
//! ```
//!
//! One block request appears as several events (`Q` queued, `G` get request, `I` inserted, `D`
//! issued to the driver, `C` completed, `M`/`F` merged, …). The reader keeps events of one action
//! — `D` by default, the stream the disk actually saw; `Q` for the stream the file system issued,
//! before merging and reordering (see
//! [`TraceReader::with_blkparse_action`](super::TraceReader::with_blkparse_action)).
//!
//! - Time is the event's timestamp (seconds since the trace started), [`ArrivalKind::Open`].
//! - `RWBS` containing `R` is a read, `W` a write. Events with neither (`N`, discards `D`, pure
//!   flushes `F`), or with no `sector + count` (e.g. `Q FWS [kworker]`), or a count of 0, are not
//!   data transfers and are skipped (flushes are not replayed: a trace's flushes would add
//!   requests to every replay of it).
//! - An `F` after the `W` (`WFS`: write, FUA, sync) marks a FUA write ([`Request::fua`]); one
//!   before it (`FWS`) is the preflush of an ordinary write.
//! - Lines whose first field is not a `major,minor` device (blkparse's per-CPU and total summary
//!   sections, "Input file … added") are not events and are skipped. An event line that does not
//!   parse is an error.
//!
//! Sectors are 512 bytes, as blkparse prints them.
//!
//! [`ArrivalKind::Open`]: crate::workload::ArrivalKind::Open

use freeblock_disk::Op;

use super::{fields, int, time_ns};
use crate::request::Request;

#[derive(Debug, Clone)]
pub(crate) struct BlkparseParser {
    pub(crate) action: char,
}

impl Default for BlkparseParser {
    fn default() -> Self {
        Self { action: 'D' }
    }
}

fn is_device(s: &str) -> bool {
    match s.split_once(',') {
        Some((maj, min)) => {
            let num = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
            num(maj) && num(min)
        }
        None => false,
    }
}

impl BlkparseParser {
    pub(crate) fn parse(&mut self, line: &str) -> Result<Option<Request>, String> {
        let (f, n) = fields::<10>(line);
        if !is_device(f[0]) {
            return Ok(None);
        }
        if n < 7 {
            return Err(format!(
                "expected at least 7 fields in a blkparse event (dev cpu seq time pid action RWBS), \
                 got {n}"
            ));
        }
        let _cpu: u32 = int(f[1], "CPU")?;
        let _seq: u64 = int(f[2], "sequence number")?;
        let time = time_ns(f[3], 9, "time (s)")?;
        let mut action = f[5].chars();
        if action.next() != Some(self.action) || action.next().is_some() {
            return Ok(None);
        }
        let rwbs = f[6];
        let op = if rwbs.contains('R') {
            Op::Read
        } else if rwbs.contains('W') {
            Op::Write
        } else {
            return Ok(None);
        };
        if n < 8 || f[7].starts_with('[') || f[7].starts_with('(') {
            return Ok(None); // no sectors: a flush or barrier
        }
        let lbn: u64 = int(f[7], "sector")?;
        if n < 10 || f[8] != "+" {
            return Err(format!("expected `<sector> + <count>` after RWBS `{rwbs}`"));
        }
        let count: u32 = int(f[9], "sector count")?;
        if count == 0 {
            return Ok(None);
        }
        // blktrace's RWBS: [F preflush] R|W [F FUA] [A] [S] [M].
        let fua = op == Op::Write && rwbs.split_once('W').is_some_and(|(_, after)| after.contains('F'));
        Ok(Some(Request { fua, ..Request::new(time, lbn, count, op) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_f_after_the_write_is_fua_and_one_before_it_a_preflush() {
        let mut p = BlkparseParser::default();
        let line = |rwbs: &str| format!("  8,0    3        4     0.000001912   697  D   {rwbs} 223490 + 8 [kjournald]");
        assert!(p.parse(&line("WFS")).unwrap().unwrap().fua);
        assert!(!p.parse(&line("FWS")).unwrap().unwrap().fua);
        assert!(!p.parse(&line("WS")).unwrap().unwrap().fua);
        assert!(!p.parse(&line("R")).unwrap().unwrap().fua);
    }
}
