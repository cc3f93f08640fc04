//! One NBD connection: the fixed newstyle handshake, then transmission, with requests served
//! concurrently and each reply written whole the moment it is due ([`crate::reply`]).
//!
//! ```text
//!  socket ─► reader (buffered): header (+ WRITE payload)
//!     ▲        │ READ/WRITE/WRITE_ZEROES (no layout, no FUA): the bytes at once, the reply
//!     │        │   built, the request batched; the batch goes ──► engine thread, at the model's
//!     │        │   to the engine when the buffer is drained       completion: writes the reply ─┐
//!     │        └ the rest (FLUSH, FUA, a layout's requests, errors): a task per request ──────┤
//!     └──────────────────────────── Replies: direct write, or queued for the flusher ◄────────┘
//! ```
//!
//! One socket read brings every request the client has sent since the last one (fio keeps 32 in
//! flight); they go to the engine in one message, so the engine thread wakes once for them, not
//! once per request.
//!
//! The reader stops at DISC, a protocol error or the server's shutdown; the connection closes
//! once every request it read is answered.
//!
//! | input | answer |
//! |---|---|
//! | a bad magic, unknown client flags, an oversized option or WRITE, `EXPORT_NAME` of an unknown export | the connection is closed |
//! | a malformed `INFO`/`GO`/`LIST`/`STRUCTURED_REPLY` | `NBD_REP_ERR_INVALID` |
//! | an unknown option | `NBD_REP_ERR_UNSUP` |
//! | a request past the export's end | `EINVAL` (read) / `ENOSPC` (write, zeroes, trim) |
//! | an unknown command, an oversized READ | `EINVAL` / `EOVERFLOW` |
//! | unknown command flags, a FLUSH with a non-zero offset or length | `EINVAL` |
//!
//! A failure on one connection never reaches another: each is its own task.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use freeblock_disk::Op;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;

use crate::arrival::Stamped;
use crate::config::ConnectionLimits;
use crate::placement::{PlacementCounters, RequestBytes};
use crate::protocol::{self as p, cflag, chunk, errno, info, opt, rep, tflag, Command, ProtocolError};
use crate::reply::{DirectSocket, Replies};
use crate::scrub::{Checksums, ScrubCounters};
use crate::stats::{Counted, Stats};
use crate::store::Store;
use crate::timing::{Completion, Done, Pace, Submission, Timing, TimingError};

/// The reader's buffer: room for many request headers (and small WRITEs) per socket read.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// What connections serve: one export.
pub struct Export {
    /// Its name ("" reaches it too).
    pub name: String,
    /// The bytes.
    pub store: Arc<Store>,
    /// Checksums of written blocks, when a scrub runs.
    pub checksums: Option<Arc<Checksums>>,
    /// The scrub's findings, when one runs.
    pub scrub: Option<Arc<ScrubCounters>>,
    /// The model's timing.
    pub timing: Timing,
    /// Counters.
    pub stats: Arc<Stats>,
    /// Bytes per model sector.
    pub sector_bytes: u64,
    /// The layout policy's block, sectors (1 without one): the model is asked for whole blocks.
    pub block_sectors: u64,
    /// The export's size, bytes (the policy's logical capacity, or the whole store).
    pub size: u64,
    /// Whether a layout policy places the bytes ([`crate::placement`]): then they travel with
    /// the request through the engine, and requests must be whole blocks.
    pub placed: bool,
    /// What the physical store has done, with a layout policy.
    pub placement: Option<Arc<PlacementCounters>>,
    /// What one connection may take.
    pub limits: ConnectionLimits,
    /// The modelled drive's write cache is write-back: FLUSH and FUA writes are timed in the
    /// model as FLUSH CACHE and FUA writes (after the store is made durable, as always).
    pub write_back: bool,
}

impl Export {
    fn flags(&self) -> u16 {
        tflag::HAS_FLAGS | tflag::SEND_FLUSH | tflag::SEND_FUA | tflag::ROTATIONAL | tflag::SEND_TRIM | tflag::SEND_WRITE_ZEROES | tflag::SEND_DF | tflag::CAN_MULTI_CONN
    }

    fn known(&self, name: &str) -> bool {
        name.is_empty() || name == self.name
    }

    /// The layout policy's block, bytes.
    #[must_use]
    pub fn block_bytes(&self) -> u64 {
        self.sector_bytes * self.block_sectors
    }

    /// The wall-clock instant a reply to a request the model completes at `end_ns` is due, when
    /// replies are paced (for the lateness).
    fn due(&self, end_ns: u64) -> Option<Instant> {
        (self.timing.pace() == Pace::Real).then(|| self.timing.start_instant() + Duration::from_nanos(end_ns))
    }
}

/// Why a connection ended early.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    /// The client broke the protocol.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// The socket failed or closed mid-message.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
}

/// How the handshake ended.
enum Negotiated {
    /// Transmission, with or without structured replies.
    Transmit { structured: bool },
    /// The client left (ABORT, or closed before choosing an export).
    Closed,
}

/// Serves one connection until the client disconnects, breaks the protocol, or `shutdown` turns
/// true (replies in flight are sent first). `direct`, a duplicate of the socket's descriptor,
/// lets the engine thread write replies the moment they are due ([`crate::reply`]).
///
/// # Errors
/// [`ConnectionError`]: the connection is closed; others are unaffected.
pub async fn serve<S>(socket: S, direct: Option<DirectSocket>, export: Arc<Export>, shutdown: watch::Receiver<bool>) -> Result<(), ConnectionError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut rd, mut wr) = tokio::io::split(socket);
    // A client that does not finish the handshake in time holds a connection for nothing.
    let limit = export.limits.handshake_timeout();
    let negotiated = tokio::time::timeout(limit, handshake(&mut rd, &mut wr, &export)).await.map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, format!("the handshake took longer than {limit:?}")))?;
    match negotiated? {
        Negotiated::Closed => Ok(()),
        Negotiated::Transmit { structured } => {
            export.stats.connection();
            transmit(rd, wr, direct, export, structured, shutdown).await
        }
    }
}

async fn handshake<R, W>(rd: &mut R, wr: &mut W, export: &Export) -> Result<Negotiated, ConnectionError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    wr.write_all(&p::greeting()).await?;
    let mut flags = [0u8; 4];
    rd.read_exact(&mut flags).await?;
    let client_flags = p::parse_client_flags(flags)?;
    let no_zeroes = client_flags & u32::from(p::FLAG_NO_ZEROES) != 0;
    let mut structured = false;
    loop {
        let mut header = [0u8; 16];
        match rd.read_exact(&mut header).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(Negotiated::Closed),
            Err(e) => return Err(e.into()),
        }
        let (option, length) = p::parse_option_header(&header)?;
        let mut data = vec![0u8; length as usize];
        rd.read_exact(&mut data).await?;
        let reply = |kind, data: &[u8]| p::option_reply(option, kind, data);
        match option {
            opt::EXPORT_NAME => {
                let name = String::from_utf8_lossy(&data).into_owned();
                if !export.known(&name) {
                    return Err(ProtocolError::UnknownExport(name).into());
                }
                let mut b = export.size.to_be_bytes().to_vec();
                b.extend_from_slice(&export.flags().to_be_bytes());
                if !no_zeroes {
                    b.extend_from_slice(&[0u8; 124]);
                }
                wr.write_all(&b).await?;
                return Ok(Negotiated::Transmit { structured });
            }
            opt::ABORT => {
                wr.write_all(&reply(rep::ACK, &[])).await?;
                return Ok(Negotiated::Closed);
            }
            opt::LIST if !data.is_empty() => wr.write_all(&reply(rep::ERR_INVALID, b"LIST takes no data")).await?,
            opt::LIST => {
                let mut d = (export.name.len() as u32).to_be_bytes().to_vec();
                d.extend_from_slice(export.name.as_bytes());
                wr.write_all(&reply(rep::SERVER, &d)).await?;
                wr.write_all(&reply(rep::ACK, &[])).await?;
            }
            opt::STRUCTURED_REPLY if !data.is_empty() => wr.write_all(&reply(rep::ERR_INVALID, b"STRUCTURED_REPLY takes no data")).await?,
            opt::STRUCTURED_REPLY => {
                structured = true;
                wr.write_all(&reply(rep::ACK, &[])).await?;
            }
            opt::INFO | opt::GO => match p::parse_info_request(&data) {
                Err(message) => wr.write_all(&reply(rep::ERR_INVALID, message.as_bytes())).await?,
                Ok(req) if !export.known(&req.name) => wr.write_all(&reply(rep::ERR_UNKNOWN, format!("no export named {:?}", req.name).as_bytes())).await?,
                Ok(req) => {
                    let mut e = info::EXPORT.to_be_bytes().to_vec();
                    e.extend_from_slice(&export.size.to_be_bytes());
                    e.extend_from_slice(&export.flags().to_be_bytes());
                    wr.write_all(&reply(rep::INFO, &e)).await?;
                    if req.wanted.contains(&info::NAME) {
                        let mut n = info::NAME.to_be_bytes().to_vec();
                        n.extend_from_slice(export.name.as_bytes());
                        wr.write_all(&reply(rep::INFO, &n)).await?;
                    }
                    if req.wanted.contains(&info::BLOCK_SIZE) {
                        // Any byte alignment works (with a layout policy, its block); a sector is
                        // preferred; the largest payload.
                        let min = if export.placed { u32::try_from(export.block_bytes()).unwrap_or(u32::MAX) } else { 1 };
                        let mut b = info::BLOCK_SIZE.to_be_bytes().to_vec();
                        for v in [min, 4096.max(min), p::MAX_PAYLOAD_BYTES] {
                            b.extend_from_slice(&v.to_be_bytes());
                        }
                        wr.write_all(&reply(rep::INFO, &b)).await?;
                    }
                    wr.write_all(&reply(rep::ACK, &[])).await?;
                    if option == opt::GO {
                        return Ok(Negotiated::Transmit { structured });
                    }
                }
            },
            _ => wr.write_all(&reply(rep::ERR_UNSUP, b"option not supported")).await?,
        }
    }
}

/// A reply ready to send, and the model completion it answers (for lateness).
struct Reply {
    bytes: Vec<u8>,
    model_end_ns: Option<u64>,
}

/// Requests a connection handed to the engine whose replies the engine writes: the connection
/// closes only once they are all answered.
#[derive(Default)]
struct Outstanding {
    count: AtomicUsize,
    zero: Notify,
}

impl Outstanding {
    fn add(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    fn done(&self) {
        if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.zero.notify_one();
        }
    }

    async fn all_done(&self) {
        while self.count.load(Ordering::Acquire) != 0 {
            self.zero.notified().await;
        }
    }
}

/// What a connection's requests share.
struct Connection {
    export: Arc<Export>,
    replies: Arc<Replies>,
    outstanding: Arc<Outstanding>,
    structured: bool,
}

async fn transmit<R, W>(mut rd: R, wr: W, direct: Option<DirectSocket>, export: Arc<Export>, structured: bool, mut shutdown: watch::Receiver<bool>) -> Result<(), ConnectionError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // Paced, a request's arrival is when its bytes reached the socket (crate::arrival); the
    // descriptor stays open as long as the replies do, which outlive this reader.
    let stamp_fd = direct.as_ref().filter(|_| export.timing.pace() == Pace::Real).map(DirectSocket::raw_fd);
    let replies = Arc::new(Replies::new(direct, Arc::clone(&export.stats)).bounded(export.limits.in_flight_requests, export.limits.in_flight_bytes()));
    let conn = Connection { export, replies: Arc::clone(&replies), outstanding: Arc::default(), structured };
    let mut in_flight = JoinSet::new();
    let mut rd = tokio::io::BufReader::with_capacity(READ_BUFFER_BYTES, Stamped::new(&mut rd, stamp_fd));
    let reading = async {
        let mut batch = Vec::new();
        let result = read_requests(&mut rd, &conn, &mut in_flight, &mut batch, &mut shutdown).await;
        conn.export.timing.submit_all(batch);
        // Every reply of a request already read is sent before the connection closes.
        while in_flight.join_next().await.is_some() {}
        conn.outstanding.all_done().await;
        replies.close();
        result
    };
    let (result, mut wr) = tokio::join!(reading, replies.flush_until_closed(wr));
    let closed = wr.shutdown().await;
    result?;
    closed.map_err(Into::into)
}

/// Reads requests until the client leaves. Requests the engine answers gather in `batch`, which
/// goes to the engine whenever the next header is not buffered yet (the caller sends what is
/// left when this returns).
async fn read_requests<R>(rd: &mut tokio::io::BufReader<Stamped<R>>, conn: &Connection, in_flight: &mut JoinSet<()>, batch: &mut Vec<Submission>, shutdown: &mut watch::Receiver<bool>) -> Result<(), ConnectionError>
where
    R: AsyncRead + Unpin,
{
    let export = &conn.export;
    loop {
        while in_flight.try_join_next().is_some() {}
        if rd.buffer().len() < p::REQUEST_BYTES {
            // The next read waits on the socket: the requests read so far go now.
            export.timing.submit_all(std::mem::take(batch));
        }
        let mut header = [0u8; p::REQUEST_BYTES];
        let reads_before = rd.get_ref().latest().0;
        // Idle: nothing buffered and nothing in flight (the reply of every request read is out).
        let idle_limit = export.limits.idle_timeout().filter(|_| rd.buffer().is_empty() && conn.replies.held().0 == 0);
        let idle = async {
            match idle_limit {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            read = rd.read_exact(&mut header) => match read {
                Ok(_) => {}
                // A client that hangs up between requests has simply left.
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(e.into()),
            },
            _ = shutdown.wait_for(|stop| *stop) => return Ok(()),
            () = idle => return Ok(()),
        }
        // The first request a fresh read completes arrived with that read's first packet; any
        // other is taken as arriving now (crate::arrival).
        let received = match rd.get_ref().latest() {
            (reads, Some(stamp)) if reads != reads_before => stamp,
            _ => Instant::now(),
        };
        let req = p::parse_request(&header)?;
        if req.command == Command::Disconnect {
            return Ok(());
        }
        // The connection's budget (crate::reply): past it, this reader waits (and the client's
        // further requests stay in the socket) until replies go out.
        let cost = request_cost(&req);
        if !conn.replies.try_admit(cost) {
            // The requests read so far go first: room comes back only as they are answered.
            export.timing.submit_all(std::mem::take(batch));
            tokio::select! {
                () = conn.replies.admit(cost) => {}
                _ = shutdown.wait_for(|stop| *stop) => return Ok(()),
            }
        }
        let payload = if req.command == Command::Write {
            if req.length > p::MAX_PAYLOAD_BYTES {
                return Err(ProtocolError::WriteTooLong(req.length).into());
            }
            let mut data = vec![0u8; req.length as usize];
            rd.read_exact(&mut data).await?;
            data
        } else {
            Vec::new()
        };
        if let Some(submission) = answered_by_engine(conn, &req, &payload, received, cost) {
            batch.extend(submission);
            continue;
        }
        let (export, replies, structured) = (Arc::clone(export), Arc::clone(&conn.replies), conn.structured);
        in_flight.spawn(async move {
            let reply = answer(&export, req, payload, received, structured).await;
            replies.send(reply.bytes, reply.model_end_ns.and_then(|end| export.due(end)));
            replies.answered(cost);
        });
    }
}

/// The common case, without a task: a READ, WRITE or WRITE_ZEROES of an export without a layout,
/// in range and without FUA. Its bytes are read or written now, its reply built, and the request
/// made ready for the engine, which writes the reply at the model's completion: `Some(Some(_))`
/// to hand over, `Some(None)` when the bytes failed and the error reply is sent already. `None`
/// when the request is not such a case (it is then answered by [`answer`]).
/// What a request holds of its connection's budget while it is served (crate::reply): its
/// payload or read buffer, or the largest piece of zeroes written at once.
fn request_cost(req: &p::Request) -> u64 {
    match req.command {
        Command::Read | Command::Write | Command::WriteZeroes => u64::from(req.length.min(p::MAX_PAYLOAD_BYTES)),
        _ => 0,
    }
}

fn answered_by_engine(conn: &Connection, req: &p::Request, payload: &[u8], received: Instant, cost: u64) -> Option<Option<Submission>> {
    let export = &conn.export;
    let timed_op = match req.command {
        Command::Read if req.length <= p::MAX_PAYLOAD_BYTES => Op::Read,
        Command::Write | Command::WriteZeroes => Op::Write,
        _ => return None,
    };
    let in_range = req.offset.checked_add(u64::from(req.length)).is_some_and(|end| end <= export.size);
    // Unknown flags are refused by `answer`.
    // Zeroes longer than a piece are zeroed off the reader, piece by piece (`zero_in_pieces`).
    let long_zeroes = req.command == Command::WriteZeroes && u64::from(req.length) > ZERO_PIECE_BYTES;
    if export.placed || req.length == 0 || !in_range || req.has(cflag::FUA) || req.flags & !cflag::KNOWN != 0 || long_zeroes {
        return None;
    }
    let length = u64::from(req.length);
    let (reply, io) = match req.command {
        Command::Read => {
            let (mut bytes, at) = read_reply_header(req, conn.structured);
            bytes.resize(at + req.length as usize, 0);
            let io = export.store.read(req.offset, &mut bytes[at..]);
            (bytes, io)
        }
        Command::Write => (p::simple_reply(req.cookie, 0).to_vec(), write_bytes(export, req.offset, length, || export.store.write(req.offset, payload))),
        _ => (p::simple_reply(req.cookie, 0).to_vec(), write_bytes(export, req.offset, length, || export.store.zero_range(req.offset, length))),
    };
    if let Err(e) = io {
        export.stats.error();
        let error = if crate::store::is_no_space(&e) { errno::ENOSPC } else { errno::EIO };
        conn.replies.send(error_reply(req, conn.structured, error, &e.to_string()), None);
        conn.replies.answered(cost);
        return Some(None);
    }
    let (sectors_first, sectors) = model_sectors(export, req);
    let (export2, replies, outstanding, structured) = (Arc::clone(export), Arc::clone(&conn.replies), Arc::clone(&conn.outstanding), conn.structured);
    let request = *req;
    outstanding.add();
    let done = Done::new(move |result: Result<Completion, TimingError>, outbox| {
        match result {
            Ok(c) => {
                export2.stats.response(c.end_ns - c.arrival_ns);
                export2.stats.count(counted(request.command), u64::from(request.length));
                outbox.send(&replies, reply, export2.due(c.end_ns));
            }
            Err(e) => {
                export2.stats.error();
                outbox.send(&replies, error_reply(&request, structured, errno::ESHUTDOWN, &e.to_string()), None);
            }
        }
        replies.answered(cost);
        // A held reply is written before the connection closes (crate::reply).
        outstanding.done();
    });
    Some(Some(Submission::new(timed_op, sectors_first, sectors, received, None, done)))
}

/// The largest piece of a WRITE_ZEROES zeroed at once (a hole punched, the checksums of its
/// blocks recorded): a 4 GiB WRITE_ZEROES is 64 pieces, none holding a thread long.
const ZERO_PIECE_BYTES: u64 = 64 << 20;

/// WRITE_ZEROES of an export without a layout: holes punched in the sparse store
/// ([`Store::zero_range`]: no zero bytes allocated or written), piece by piece on tokio's
/// blocking pool, so neither the connection's worker nor the engine waits for it and other
/// clients are served between the pieces. The model still times it as a write of its length.
async fn zero_in_pieces(export: &Export, offset: u64, length: u64) -> std::io::Result<()> {
    let mut at = 0;
    while at < length {
        let n = ZERO_PIECE_BYTES.min(length - at);
        let (store, sums) = (Arc::clone(&export.store), export.checksums.clone());
        let from = offset + at;
        tokio::task::spawn_blocking(move || match &sums {
            Some(s) => s.write_with(&store, from, n, || store.zero_range(from, n)),
            None => store.zero_range(from, n),
        })
        .await
        .map_err(std::io::Error::other)??;
        at += n;
    }
    Ok(())
}

/// A write of the store's bytes, keeping the scrub's checksums when it runs.
fn write_bytes(export: &Export, offset: u64, length: u64, write: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<()> {
    match &export.checksums {
        Some(sums) => sums.write_with(&export.store, offset, length, write),
        None => write(),
    }
}

/// The start of a successful READ's reply (simple, or one structured data chunk), and where the
/// data goes in it.
fn read_reply_header(req: &p::Request, structured: bool) -> (Vec<u8>, usize) {
    let mut b = Vec::with_capacity(32 + req.length as usize);
    if structured {
        b.extend_from_slice(&p::chunk_header(req.cookie, chunk::FLAG_DONE, chunk::OFFSET_DATA, 8 + req.length));
        b.extend_from_slice(&req.offset.to_be_bytes());
    } else {
        b.extend_from_slice(&p::simple_reply(req.cookie, 0));
    }
    let at = b.len();
    (b, at)
}

/// An error reply.
fn error_reply(req: &p::Request, structured: bool, error: u32, message: &str) -> Vec<u8> {
    if structured {
        p::error_chunk(req.cookie, error, message)
    } else {
        p::simple_reply(req.cookie, error).to_vec()
    }
}

/// The first sector and the sector count the model is asked to serve for a request: the sectors
/// it touches, widened to the layout policy's blocks.
fn model_sectors(export: &Export, req: &p::Request) -> (u64, u32) {
    let sb = export.sector_bytes * export.block_sectors;
    let first = req.offset / sb * export.block_sectors;
    let sectors = (req.offset + u64::from(req.length)).div_ceil(sb) * export.block_sectors - first;
    (first, u32::try_from(sectors).unwrap_or(u32::MAX))
}

/// The counter a command is counted under.
fn counted(command: Command) -> Counted {
    match command {
        Command::Read => Counted::Read,
        Command::Write => Counted::Write,
        Command::WriteZeroes => Counted::WriteZeroes,
        Command::Flush => Counted::Flush,
        _ => Counted::Trim,
    }
}

/// A request the file system under the store had no room for: it fails alone (the engine and
/// the other requests go on), counted in the stats endpoint, and logged on stderr (the first,
/// then at each power of two, so a full disk does not flood the log).
fn note_no_space(export: &Export, req: &p::Request, message: &str) {
    let n = export.stats.no_space();
    if n.is_power_of_two() {
        eprintln!("freeblock serve: {:?} of {} bytes at {} failed with ENOSPC ({n} so far): {message}", req.command, req.length, req.offset);
    }
}

/// Serves one request: the bytes, then the model's time.
async fn answer(export: &Export, req: p::Request, payload: Vec<u8>, received: Instant, structured: bool) -> Reply {
    let fail = |error: u32, message: &str| {
        export.stats.error();
        Reply { bytes: error_reply(&req, structured, error, message), model_end_ns: None }
    };
    let size = export.size;
    let in_range = req.offset.checked_add(u64::from(req.length)).is_some_and(|end| end <= size);
    let past_end = if req.command == Command::Read { errno::EINVAL } else { errno::ENOSPC };
    match req.command {
        Command::Other(n) => return fail(errno::EINVAL, &format!("command {n} is not supported")),
        _ if req.flags & !cflag::KNOWN != 0 => return fail(errno::EINVAL, &format!("command flags {:#x}: unknown bits", req.flags & !cflag::KNOWN)),
        // The protocol reserves FLUSH's offset and length as zero.
        Command::Flush if req.offset != 0 || req.length != 0 => return fail(errno::EINVAL, "FLUSH with a non-zero offset or length"),
        Command::Read if req.length > p::MAX_PAYLOAD_BYTES => return fail(errno::EOVERFLOW, "read longer than the maximum block size"),
        Command::Read | Command::Write | Command::WriteZeroes | Command::Trim if !in_range => return fail(past_end, &format!("{} bytes at {} run past the export's end ({size} bytes)", req.length, req.offset)),
        _ => {}
    }
    if export.placed {
        return answer_placed(export, req, payload, received, structured).await;
    }
    let mut data = Vec::new();
    let length = u64::from(req.length);
    let io = match req.command {
        Command::Read => {
            data = vec![0u8; req.length as usize];
            export.store.read(req.offset, &mut data)
        }
        Command::Write => write_bytes(export, req.offset, length, || export.store.write(req.offset, &payload)),
        Command::WriteZeroes => zero_in_pieces(export, req.offset, length).await,
        Command::Flush => flush(export).await,
        Command::Trim | Command::Disconnect | Command::Other(_) => Ok(()),
    };
    let fua = req.has(cflag::FUA) && matches!(req.command, Command::Write | Command::WriteZeroes);
    let durable = match (io, fua) {
        (Ok(()), true) => flush(export).await,
        (r, _) => r,
    };
    if let Err(e) = durable {
        if crate::store::is_no_space(&e) {
            note_no_space(export, &req, &e.to_string());
            return fail(errno::ENOSPC, &e.to_string());
        }
        return fail(errno::EIO, &e.to_string());
    }
    // The model: reads and writes (zeroes are written) take the disk's time; TRIM has no media
    // work in the model, nor FLUSH unless the drive's cache is write-back (then it is FLUSH
    // CACHE, writing what the model holds dirty); they are answered once the file has done them.
    let timed_op = match req.command {
        Command::Read => Some(Op::Read),
        Command::Write | Command::WriteZeroes => Some(Op::Write),
        _ => None,
    };
    let mut model_end_ns = None;
    if req.command == Command::Flush && export.write_back {
        match export.timing.time_flush(received).await {
            Ok(done) => {
                export.stats.response(done.end_ns - done.arrival_ns);
                model_end_ns = Some(done.end_ns);
            }
            Err(e) => return fail(errno::ESHUTDOWN, &e.to_string()),
        }
    }
    if let (Some(op), true) = (timed_op, req.length > 0) {
        let (first, sectors) = model_sectors(export, &req);
        let timed = if fua && export.write_back { export.timing.time_fua(first, sectors, received).await } else { export.timing.time(op, first, sectors, received).await };
        match timed {
            Ok(done) => {
                export.stats.response(done.end_ns - done.arrival_ns);
                model_end_ns = Some(done.end_ns);
            }
            Err(e) => return fail(errno::ESHUTDOWN, &e.to_string()),
        }
    }
    finish(export, &req, &data, model_end_ns, structured)
}

/// FLUSH, and FUA: the store's bytes, and the scrub's checksums of them, made durable (the
/// checksums file is synced after the store, so a durable checksum never names bytes that are
/// not). The syncs run on tokio's blocking pool: an `fdatasync` takes milliseconds, and the
/// worker that reads every connection's requests must not wait for it.
async fn flush(export: &Export) -> std::io::Result<()> {
    let store = export.store.sync_handle()?;
    let sums = export.checksums.as_ref().map(|s| s.sync_handle()).transpose()?;
    tokio::task::spawn_blocking(move || {
        store.sync_data()?;
        sums.map_or(Ok(()), |s| s.sync_data())
    })
    .await
    .map_err(std::io::Error::other)??;
    // Durable, but in the file the path names? A store deleted while serving is not.
    export.store.check_identity()
}

/// FLUSH (and FUA) of a placed export. A layout that acknowledges writes from memory (LFS) is
/// first asked through the engine to write what it holds (a flush request, timed by the model),
/// and the answer waits until every segment write sealed by then is in the store with its map
/// commit durable ([`crate::logbytes`]); then the store and the checksums are synced. Returns
/// the model's completion of the flush request, if one was sent (the reply is timed from it).
pub(crate) async fn flush_placed(export: &Export, received: Instant) -> Result<Option<u64>, String> {
    let mut model_end_ns = None;
    if let Some(p) = export.placement.as_ref().filter(|p| p.holds_writes.load(std::sync::atomic::Ordering::Relaxed)) {
        let done = export.timing.serve(Op::Write, 0, 0, received, None).await.map_err(|e| e.to_string())?;
        if let Some(why) = done.failed {
            return Err(why.message);
        }
        // The flush is a request the model times (a segment write, say) like any other.
        export.stats.response(done.end_ns - done.arrival_ns);
        model_end_ns = Some(done.end_ns);
        p.wait_durable().await?;
    }
    flush(export).await.map_err(|e| e.to_string())?;
    Ok(model_end_ns)
}

/// Counts a served request and encodes its reply.
fn finish(export: &Export, req: &p::Request, data: &[u8], model_end_ns: Option<u64>, structured: bool) -> Reply {
    export.stats.count(counted(req.command), u64::from(req.length));
    let bytes = if req.command == Command::Read && structured && req.length == 0 {
        p::chunk_header(req.cookie, chunk::FLAG_DONE, chunk::NONE, 0).to_vec()
    } else if req.command == Command::Read {
        let (mut b, _) = read_reply_header(req, structured);
        b.extend_from_slice(data);
        b
    } else {
        p::simple_reply(req.cookie, 0).to_vec()
    };
    Reply { bytes, model_end_ns }
}

/// Serves one request of an export whose layout policy places the bytes: they travel with the
/// request to the engine, which reads or writes them where the policy puts them when the
/// modelled disk serves it ([`crate::placement`]).
// `x % n != 0` rather than `is_multiple_of` (Rust 1.87), as in the rest of the workspace.
#[allow(clippy::manual_is_multiple_of)]
async fn answer_placed(export: &Export, req: p::Request, payload: Vec<u8>, received: Instant, structured: bool) -> Reply {
    let fail = |error: u32, message: &str| {
        export.stats.error();
        Reply { bytes: error_reply(&req, structured, error, message), model_end_ns: None }
    };
    let bb = export.block_bytes();
    let timed = matches!(req.command, Command::Read | Command::Write | Command::WriteZeroes);
    if timed && (req.offset % bb != 0 || u64::from(req.length) % bb != 0) {
        let message = format!("{} bytes at {}: the layout places whole blocks of {bb} bytes, and this request is not aligned to them (the export's minimum block size says so)", req.length, req.offset);
        return fail(errno::EINVAL, &message);
    }
    let mut data = Vec::new();
    let mut model_end_ns = None;
    match req.command {
        Command::Flush => match flush_placed(export, received).await {
            Ok(end) => model_end_ns = end,
            Err(e) => return fail(errno::EIO, &e),
        },
        Command::Read | Command::Write | Command::WriteZeroes if req.length > 0 => {
            // Zeroes are written in pieces no longer than the largest WRITE.
            let chunk = u64::from(p::MAX_PAYLOAD_BYTES) / bb * bb;
            let mut at = 0u64;
            while at < u64::from(req.length) {
                let len = chunk.min(u64::from(req.length) - at);
                let offset = req.offset + at;
                // Zeroes carry no bytes: their places get holes (crate::placement), except in a
                // layout that keeps writes in memory first (LFS), which takes them as bytes.
                let holds_writes = export.placement.as_ref().is_some_and(|p| p.holds_writes.load(std::sync::atomic::Ordering::Relaxed));
                let (op, bytes, zeroes) = match req.command {
                    Command::Read => (Op::Read, vec![0u8; len as usize], None),
                    Command::Write => (Op::Write, payload[at as usize..(at + len) as usize].to_vec(), None),
                    _ if holds_writes => (Op::Write, vec![0u8; len as usize], None),
                    _ => (Op::Write, Vec::new(), Some(len)),
                };
                let first = offset / export.sector_bytes;
                let sectors = u32::try_from(len / export.sector_bytes).unwrap_or(u32::MAX);
                match export.timing.serve(op, first, sectors, received, Some(RequestBytes { offset, data: bytes, failed: None, zeroes })).await {
                    Ok(Completion { failed: Some(why), .. }) => {
                        if why.errno == errno::ENOSPC {
                            note_no_space(export, &req, &why.message);
                        }
                        return fail(why.errno, &why.message);
                    }
                    Ok(done) => {
                        export.stats.response(done.end_ns - done.arrival_ns);
                        model_end_ns = Some(done.end_ns);
                        if req.command == Command::Read {
                            data.extend_from_slice(&done.data.unwrap_or_default());
                        }
                    }
                    Err(e) => return fail(errno::ESHUTDOWN, &e.to_string()),
                }
                at += len;
            }
            if req.has(cflag::FUA) && req.command != Command::Read {
                // The flush follows the write: it arrives in the model when the write is done, and
                // the reply is late only past the flush's completion.
                match flush_placed(export, Instant::now()).await {
                    Ok(end) => model_end_ns = end.or(model_end_ns),
                    Err(e) => return fail(errno::EIO, &e),
                }
            }
        }
        _ => {}
    }
    if req.command == Command::Read && data.len() != req.length as usize {
        return fail(errno::EIO, "the engine returned no data for the read");
    }
    finish(export, &req, &data, model_end_ns, structured)
}
