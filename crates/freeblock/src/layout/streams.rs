//! Closed-loop streams of logical I/Os that place their own writes: each stream keeps one I/O
//! outstanding, and when it issues the next it may look at the block map and the head (to reserve
//! candidate locations near it). The range-write workloads are of this kind; the engine serves
//! them through a layout policy that owns the map ([`super::rangewrite::RangeWrites`]).

use freeblock_disk::{Disk, HeadState, SimTime};
use serde::{Deserialize, Serialize};

use super::error::Result;
use super::map::{BlockMap, WriteRequest};

/// One I/O a stream asks for, in logical blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum StreamIo {
    /// Write logical blocks to one of the request's candidates.
    Write(WriteRequest),
    /// Read `blocks` logical blocks from `logical`, from the nearest complete copy.
    Read {
        /// First logical block.
        logical: u64,
        /// Number of blocks.
        blocks: u64,
    },
}

impl StreamIo {
    /// The logical blocks it covers, `first..end`.
    #[must_use]
    pub fn logical_range(&self) -> std::ops::Range<u64> {
        let (first, blocks) = match self {
            StreamIo::Write(req) => (req.logical, req.blocks),
            &StreamIo::Read { logical, blocks } => (logical, blocks),
        };
        first..first.saturating_add(blocks)
    }

    /// True for writes.
    #[must_use]
    pub fn is_write(&self) -> bool {
        matches!(self, StreamIo::Write(_))
    }
}

/// What a stream may look at and change when it issues an I/O.
pub struct IssueContext<'a> {
    /// The block map (allocators reserve candidates in it; deletes trim it).
    pub map: &'a mut BlockMap,
    /// The disk model.
    pub disk: &'a Disk,
    /// Where the heads will be when the request in service (if any) ends.
    pub head: HeadState,
    /// The time of issue.
    pub now: SimTime,
}

/// A set of closed-loop streams producing I/Os with alternatives.
pub trait StreamWorkload {
    /// Number of streams (each keeps one I/O outstanding).
    fn streams(&self) -> u32;

    /// The next I/O of `stream`, or `None` when it has finished. Called at time 0 and each time
    /// the stream's previous I/O completes (after the map records it).
    ///
    /// # Errors
    /// Whatever the workload cannot do (no free space, …); the run stops with it.
    fn next_io(&mut self, stream: u32, ctx: &mut IssueContext<'_>) -> Result<Option<StreamIo>>;

    /// Application-level operations finished so far (e.g. file-system transactions), for a
    /// throughput figure. Default 0.
    fn operations(&self) -> u64 {
        0
    }
}

/// Fixed I/O lists, one per stream, issued in order. Write candidates are used as given (the
/// simulation reserves those still free when the write is issued), so any bad candidate surfaces
/// through the run.
#[derive(Debug, Clone, Default)]
pub struct ScriptedStreams {
    scripts: Vec<std::collections::VecDeque<StreamIo>>,
    done: u64,
}

impl ScriptedStreams {
    /// One list of I/Os per stream.
    #[must_use]
    pub fn new(scripts: Vec<Vec<StreamIo>>) -> Self {
        Self { scripts: scripts.into_iter().map(Into::into).collect(), done: 0 }
    }
}

impl StreamWorkload for ScriptedStreams {
    fn streams(&self) -> u32 {
        self.scripts.len() as u32
    }

    fn next_io(&mut self, stream: u32, _ctx: &mut IssueContext<'_>) -> Result<Option<StreamIo>> {
        let next = self.scripts[stream as usize].pop_front();
        self.done += u64::from(next.is_some());
        Ok(next)
    }

    fn operations(&self) -> u64 {
        self.done
    }
}
