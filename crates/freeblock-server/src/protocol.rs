//! The NBD wire protocol: constants, and parsers and encoders of its messages as plain
//! functions over bytes (no I/O), so they can be tested and fuzzed alone.
//!
//! Written from the protocol's specification (NetworkBlockDevice `doc/proto.md`), fixed newstyle
//! only. All integers are big-endian.
//!
//! ```text
//!  handshake  S: "NBDMAGIC" "IHAVEOPT" u16 handshake flags      C: u32 client flags
//!  option     C: "IHAVEOPT" u32 option u32 length data[length]
//!  reply      S: u64 0x3e889045565a9 u32 option u32 reply type u32 length data[length]
//!  request    C: u32 0x25609513 u16 flags u16 type u64 cookie u64 offset u32 length [data]
//!  simple     S: u32 0x67446698 u32 error u64 cookie [data]
//!  structured S: u32 0x668e33ef u16 flags u16 type u64 cookie u32 length payload[length]
//! ```
//!
//! | option | what this server does |
//! |---|---|
//! | `EXPORT_NAME` (1) | export size and flags, then transmission; an unknown name closes |
//! | `ABORT` (2) | `ACK`, then close |
//! | `LIST` (3) | one `SERVER` reply per export, then `ACK` |
//! | `INFO` (6), `GO` (7) | `INFO` replies (export, name, block size), `ACK`; `GO` then transmits |
//! | `STRUCTURED_REPLY` (8) | `ACK`; reads are then answered with structured chunks |
//! | anything else | `ERR_UNSUP` |

use thiserror::Error;

/// "NBDMAGIC": the first eight bytes a server sends.
pub const NBD_MAGIC: u64 = 0x4e42_444d_4147_4943;
/// "IHAVEOPT": starts the newstyle handshake and every option.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// Starts every option reply.
pub const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Starts every request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Starts a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
/// Starts a structured reply chunk.
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

/// Handshake flags (server): fixed newstyle, and the 124 zero bytes after `EXPORT_NAME` may be
/// left out.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
/// See [`FLAG_FIXED_NEWSTYLE`].
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
/// Client flags this server understands (the same two bits); any other closes the connection.
pub const CLIENT_FLAGS_KNOWN: u32 = 0b11;

/// Option numbers.
pub mod opt {
    pub const EXPORT_NAME: u32 = 1;
    pub const ABORT: u32 = 2;
    pub const LIST: u32 = 3;
    pub const INFO: u32 = 6;
    pub const GO: u32 = 7;
    pub const STRUCTURED_REPLY: u32 = 8;
}

/// Option reply types.
pub mod rep {
    pub const ACK: u32 = 1;
    pub const SERVER: u32 = 2;
    pub const INFO: u32 = 3;
    pub const ERR_UNSUP: u32 = (1 << 31) + 1;
    pub const ERR_INVALID: u32 = (1 << 31) + 3;
    pub const ERR_UNKNOWN: u32 = (1 << 31) + 6;
    pub const ERR_TOO_BIG: u32 = (1 << 31) + 9;
}

/// `NBD_REP_INFO` kinds.
pub mod info {
    pub const EXPORT: u16 = 0;
    pub const NAME: u16 = 1;
    pub const BLOCK_SIZE: u16 = 3;
}

/// Transmission flags (per export).
pub mod tflag {
    pub const HAS_FLAGS: u16 = 1 << 0;
    pub const SEND_FLUSH: u16 = 1 << 2;
    pub const SEND_FUA: u16 = 1 << 3;
    pub const ROTATIONAL: u16 = 1 << 4;
    pub const SEND_TRIM: u16 = 1 << 5;
    pub const SEND_WRITE_ZEROES: u16 = 1 << 6;
    pub const SEND_DF: u16 = 1 << 7;
    pub const CAN_MULTI_CONN: u16 = 1 << 8;
}

/// Command flags.
pub mod cflag {
    pub const FUA: u16 = 1 << 0;
    pub const NO_HOLE: u16 = 1 << 1;
    pub const DF: u16 = 1 << 2;
    pub const FAST_ZERO: u16 = 1 << 4;
    /// Every flag this server knows; a request with any other bit is answered `EINVAL`.
    pub const KNOWN: u16 = FUA | NO_HOLE | DF | FAST_ZERO;
}

/// Structured reply chunk types and flags.
pub mod chunk {
    pub const FLAG_DONE: u16 = 1;
    pub const NONE: u16 = 0;
    pub const OFFSET_DATA: u16 = 1;
    pub const ERROR: u16 = (1 << 15) + 1;
}

/// Errors a reply carries (the protocol's errno values).
pub mod errno {
    pub const EIO: u32 = 5;
    pub const EINVAL: u32 = 22;
    pub const ENOSPC: u32 = 28;
    pub const EOVERFLOW: u32 = 75;
    pub const ENOTSUP: u32 = 95;
    pub const ESHUTDOWN: u32 = 108;
}

/// The longest option payload accepted; a longer one closes the connection (an export name is at
/// most 4096 bytes, and nothing this server reads is longer).
pub const MAX_OPTION_BYTES: u32 = 16 * 1024;

/// The longest READ or WRITE accepted (advertised as the maximum block size): 32 MiB.
pub const MAX_PAYLOAD_BYTES: u32 = 32 << 20;

/// Bytes of a request header.
pub const REQUEST_BYTES: usize = 28;

/// A command, by its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// 0: read `length` bytes at `offset`.
    Read,
    /// 1: write the `length` bytes that follow.
    Write,
    /// 2: disconnect once every reply is sent.
    Disconnect,
    /// 3: make every completed write durable.
    Flush,
    /// 4: the range's contents may be discarded.
    Trim,
    /// 6: the range reads back as zeroes.
    WriteZeroes,
    /// Any other number (answered `EINVAL`).
    Other(u16),
}

impl Command {
    fn from_wire(n: u16) -> Self {
        match n {
            0 => Self::Read,
            1 => Self::Write,
            2 => Self::Disconnect,
            3 => Self::Flush,
            4 => Self::Trim,
            6 => Self::WriteZeroes,
            n => Self::Other(n),
        }
    }
}

/// A parsed request header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Command flags ([`cflag`]).
    pub flags: u16,
    /// The command.
    pub command: Command,
    /// The client's cookie, echoed in the reply.
    pub cookie: u64,
    /// Byte offset in the export.
    pub offset: u64,
    /// Byte length.
    pub length: u32,
}

impl Request {
    /// Whether `flag` ([`cflag`]) is set.
    #[must_use]
    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }
}

/// A message that breaks the protocol: the connection is closed (after a reply where the
/// protocol has one).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    /// A request did not start with the request magic.
    #[error("request header: magic {0:#010x} is not NBD_REQUEST_MAGIC 0x25609513")]
    RequestMagic(u32),
    /// An option did not start with "IHAVEOPT".
    #[error("option header: magic {0:#018x} is not IHAVEOPT")]
    OptionMagic(u64),
    /// The client set flags this server does not know.
    #[error("client flags {0:#x}: unknown bits (known: fixed newstyle, no zeroes)")]
    ClientFlags(u32),
    /// An option's payload is longer than any this server reads.
    #[error("option {option}: {length} bytes of data, more than the {MAX_OPTION_BYTES} accepted")]
    OptionTooLong {
        /// The option number.
        option: u32,
        /// Its stated length.
        length: u32,
    },
    /// `EXPORT_NAME` named no export (the protocol's answer is to close).
    #[error("EXPORT_NAME: no export named {0:?}")]
    UnknownExport(String),
    /// A WRITE longer than the largest accepted (its payload cannot be skipped safely).
    #[error("WRITE of {0} bytes: more than the {MAX_PAYLOAD_BYTES} accepted")]
    WriteTooLong(u32),
}

/// Parses the client flags sent after the server's greeting.
///
/// # Errors
/// [`ProtocolError::ClientFlags`] for bits this server does not know.
pub fn parse_client_flags(bytes: [u8; 4]) -> Result<u32, ProtocolError> {
    let flags = u32::from_be_bytes(bytes);
    if flags & !CLIENT_FLAGS_KNOWN != 0 {
        return Err(ProtocolError::ClientFlags(flags));
    }
    Ok(flags)
}

/// Parses an option header (16 bytes): the option number and its payload length.
///
/// # Errors
/// [`ProtocolError::OptionMagic`], [`ProtocolError::OptionTooLong`].
pub fn parse_option_header(bytes: &[u8; 16]) -> Result<(u32, u32), ProtocolError> {
    let magic = u64::from_be_bytes(bytes[0..8].try_into().expect("8 bytes"));
    if magic != IHAVEOPT {
        return Err(ProtocolError::OptionMagic(magic));
    }
    let option = u32::from_be_bytes(bytes[8..12].try_into().expect("4 bytes"));
    let length = u32::from_be_bytes(bytes[12..16].try_into().expect("4 bytes"));
    if length > MAX_OPTION_BYTES {
        return Err(ProtocolError::OptionTooLong { option, length });
    }
    Ok((option, length))
}

/// What an `INFO` or `GO` asks: an export name and the info kinds wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoRequest {
    /// The export's name ("" asks for the default export).
    pub name: String,
    /// `NBD_INFO_*` kinds the client asked for.
    pub wanted: Vec<u16>,
}

/// Parses the payload of `INFO` / `GO`: u32 name length, name, u16 count, count × u16.
///
/// # Errors
/// A description of what is malformed (answered `NBD_REP_ERR_INVALID`).
pub fn parse_info_request(data: &[u8]) -> Result<InfoRequest, String> {
    let take = |at: usize, n: usize| data.get(at..at + n).ok_or_else(|| format!("payload of {} bytes ends before byte {}", data.len(), at + n));
    let name_len = u32::from_be_bytes(take(0, 4)?.try_into().expect("4 bytes")) as usize;
    if name_len > 4096 {
        return Err(format!("export name of {name_len} bytes, more than 4096"));
    }
    let name = std::str::from_utf8(take(4, name_len)?).map_err(|_| "export name is not UTF-8".to_string())?.to_string();
    let at = 4 + name_len;
    let count = u16::from_be_bytes(take(at, 2)?.try_into().expect("2 bytes")) as usize;
    let list = take(at + 2, count * 2)?;
    if data.len() != at + 2 + count * 2 {
        return Err(format!("payload of {} bytes, but its fields take {}", data.len(), at + 2 + count * 2));
    }
    let wanted = list.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    Ok(InfoRequest { name, wanted })
}

/// Parses a request header (28 bytes).
///
/// # Errors
/// [`ProtocolError::RequestMagic`].
pub fn parse_request(bytes: &[u8; REQUEST_BYTES]) -> Result<Request, ProtocolError> {
    let magic = u32::from_be_bytes(bytes[0..4].try_into().expect("4 bytes"));
    if magic != REQUEST_MAGIC {
        return Err(ProtocolError::RequestMagic(magic));
    }
    Ok(Request {
        flags: u16::from_be_bytes([bytes[4], bytes[5]]),
        command: Command::from_wire(u16::from_be_bytes([bytes[6], bytes[7]])),
        cookie: u64::from_be_bytes(bytes[8..16].try_into().expect("8 bytes")),
        offset: u64::from_be_bytes(bytes[16..24].try_into().expect("8 bytes")),
        length: u32::from_be_bytes(bytes[24..28].try_into().expect("4 bytes")),
    })
}

/// The server's greeting.
#[must_use]
pub fn greeting() -> Vec<u8> {
    let mut b = Vec::with_capacity(18);
    b.extend_from_slice(&NBD_MAGIC.to_be_bytes());
    b.extend_from_slice(&IHAVEOPT.to_be_bytes());
    b.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    b
}

/// An option reply.
#[must_use]
pub fn option_reply(option: u32, kind: u32, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(20 + data.len());
    b.extend_from_slice(&OPTION_REPLY_MAGIC.to_be_bytes());
    b.extend_from_slice(&option.to_be_bytes());
    b.extend_from_slice(&kind.to_be_bytes());
    b.extend_from_slice(&u32::try_from(data.len()).expect("option replies are short").to_be_bytes());
    b.extend_from_slice(data);
    b
}

/// The header of a simple reply (a READ's data follows it).
#[must_use]
pub fn simple_reply(cookie: u64, error: u32) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&error.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b
}

/// The header of a structured reply chunk whose payload is `length` bytes.
#[must_use]
pub fn chunk_header(cookie: u64, flags: u16, kind: u16, length: u32) -> [u8; 20] {
    let mut b = [0u8; 20];
    b[0..4].copy_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&flags.to_be_bytes());
    b[6..8].copy_from_slice(&kind.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b[16..20].copy_from_slice(&length.to_be_bytes());
    b
}

/// A final structured `ERROR` chunk carrying `error` and a message.
#[must_use]
pub fn error_chunk(cookie: u64, error: u32, message: &str) -> Vec<u8> {
    let msg = &message.as_bytes()[..message.len().min(4096)];
    let mut b = chunk_header(cookie, chunk::FLAG_DONE, chunk::ERROR, 6 + msg.len() as u32).to_vec();
    b.extend_from_slice(&error.to_be_bytes());
    b.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    b.extend_from_slice(msg);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_header_round_trips_its_fields() {
        let mut b = [0u8; REQUEST_BYTES];
        b[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
        b[4..6].copy_from_slice(&cflag::FUA.to_be_bytes());
        b[6..8].copy_from_slice(&1u16.to_be_bytes());
        b[8..16].copy_from_slice(&0xdead_beef_u64.to_be_bytes());
        b[16..24].copy_from_slice(&4096u64.to_be_bytes());
        b[24..28].copy_from_slice(&512u32.to_be_bytes());
        let r = parse_request(&b).unwrap();
        assert_eq!(r, Request { flags: cflag::FUA, command: Command::Write, cookie: 0xdead_beef, offset: 4096, length: 512 });
        b[0] ^= 1;
        assert!(matches!(parse_request(&b), Err(ProtocolError::RequestMagic(_))));
    }

    #[test]
    fn info_requests_must_fill_their_payload_exactly() {
        let mut d = 3u32.to_be_bytes().to_vec();
        d.extend_from_slice(b"abc");
        d.extend_from_slice(&2u16.to_be_bytes());
        d.extend_from_slice(&info::NAME.to_be_bytes());
        d.extend_from_slice(&info::BLOCK_SIZE.to_be_bytes());
        assert_eq!(parse_info_request(&d).unwrap(), InfoRequest { name: "abc".into(), wanted: vec![info::NAME, info::BLOCK_SIZE] });
        d.push(0);
        assert!(parse_info_request(&d).is_err());
        assert!(parse_info_request(&d[..5]).is_err());
    }
}
