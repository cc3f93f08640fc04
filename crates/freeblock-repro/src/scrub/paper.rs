//! What OpenZFS PR #11166 published (a Seagate 14 TB drive, QD 1 random 4 KB reads) and
//! the targets issue 35 sets beside it.

/// OpenZFS PR #11166: QD 1 random 4 KB read IOPS on a Seagate 14 TB drive with no scrub.
pub const PUBLISHED_IDLE_IOPS: f64 = 166.0;
/// The same while a scrub runs, before the PR.
pub const PUBLISHED_BEFORE_IOPS: f64 = 22.0;
/// The same with the PR's throttling of non-interactive I/O.
pub const PUBLISHED_AFTER_IOPS: f64 = 73.0;
/// The share of the idle IOPS freeblock must keep while it scrubs (issue 35).
pub const KEEP_SHARE: f64 = 0.95;
/// The busier foreground: freeblock's mean response may exceed no scrub's by at most this.
pub const MEAN_RESPONSE_SLACK: f64 = 0.01;
