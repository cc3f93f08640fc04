//! Bad input: malformed handshakes and requests get the protocol's error or a clean close, never
//! a panic, and the server keeps serving its other clients.

use crate::support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use freeblock_server::protocol::{self as p, errno, opt, rep};
use freeblock_server::Pace;
use proptest::prelude::*;
use support::{config, start, Scratch};

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    s.read_exact(&mut b).unwrap();
    b
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}

fn option(s: &mut TcpStream, option: u32, data: &[u8]) {
    let mut b = p::IHAVEOPT.to_be_bytes().to_vec();
    b.extend_from_slice(&option.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    s.write_all(&b).unwrap();
}

/// Reads one option reply: (reply type, data).
fn option_reply(s: &mut TcpStream) -> (u32, Vec<u8>) {
    let h = read_n(s, 20);
    assert_eq!(u64::from_be_bytes(h[..8].try_into().unwrap()), p::OPTION_REPLY_MAGIC);
    let len = be32(&h[16..]) as usize;
    (be32(&h[12..]), read_n(s, len))
}

/// Connects and negotiates the export with GO (simple replies); returns the export size.
fn go(addr: SocketAddr, name: &str) -> (TcpStream, u64) {
    let mut s = connect(addr);
    let g = read_n(&mut s, 18);
    assert_eq!(&g[..8], b"NBDMAGIC");
    s.write_all(&3u32.to_be_bytes()).unwrap();
    let mut d = (name.len() as u32).to_be_bytes().to_vec();
    d.extend_from_slice(name.as_bytes());
    d.extend_from_slice(&0u16.to_be_bytes());
    option(&mut s, opt::GO, &d);
    let mut size = 0;
    loop {
        let (kind, data) = option_reply(&mut s);
        match kind {
            rep::INFO if data[..2] == [0, 0] => size = u64::from_be_bytes(data[2..10].try_into().unwrap()),
            rep::INFO => {}
            rep::ACK => return (s, size),
            other => panic!("GO answered {other:#x}"),
        }
    }
}

fn request(s: &mut TcpStream, command: u16, cookie: u64, offset: u64, length: u32) {
    request_flagged(s, 0, command, cookie, offset, length);
}

fn request_flagged(s: &mut TcpStream, flags: u16, command: u16, cookie: u64, offset: u64, length: u32) {
    let mut b = p::REQUEST_MAGIC.to_be_bytes().to_vec();
    b.extend_from_slice(&flags.to_be_bytes());
    b.extend_from_slice(&command.to_be_bytes());
    b.extend_from_slice(&cookie.to_be_bytes());
    b.extend_from_slice(&offset.to_be_bytes());
    b.extend_from_slice(&length.to_be_bytes());
    s.write_all(&b).unwrap();
}

/// Reads a simple reply: (error, cookie).
fn simple_reply(s: &mut TcpStream) -> (u32, u64) {
    let h = read_n(s, 16);
    assert_eq!(be32(&h), p::SIMPLE_REPLY_MAGIC);
    (be32(&h[4..]), u64::from_be_bytes(h[8..].try_into().unwrap()))
}

/// The server still serves: a write and a read back on a fresh connection.
fn still_serves(addr: SocketAddr, name: &str) {
    let (mut s, _) = go(addr, name);
    let mut b = p::REQUEST_MAGIC.to_be_bytes().to_vec();
    b.extend_from_slice(&0u16.to_be_bytes());
    b.extend_from_slice(&1u16.to_be_bytes());
    b.extend_from_slice(&7u64.to_be_bytes());
    b.extend_from_slice(&8192u64.to_be_bytes());
    b.extend_from_slice(&512u32.to_be_bytes());
    b.extend_from_slice(&[0x42; 512]);
    s.write_all(&b).unwrap();
    assert_eq!(simple_reply(&mut s), (0, 7));
    request(&mut s, 0, 8, 8192, 512);
    assert_eq!(simple_reply(&mut s), (0, 8));
    assert_eq!(read_n(&mut s, 512), vec![0x42; 512]);
    request(&mut s, 2, 9, 0, 0);
}

#[test]
fn bad_requests_get_the_protocols_errors_and_others_are_served() {
    let dir = Scratch::new("bad");
    let server = start(config("atlas10k", &dir.path("store"), Pace::None));
    let (addr, name) = (server.addr, server.export.clone());
    let (mut s, size) = go(addr, &name);
    assert!(size > 0);
    // A read past the end: EINVAL; a write past the end: ENOSPC (its payload is consumed).
    request(&mut s, 0, 1, size - 512, 1024);
    assert_eq!(simple_reply(&mut s), (errno::EINVAL, 1));
    let mut b = p::REQUEST_MAGIC.to_be_bytes().to_vec();
    b.extend_from_slice(&0u16.to_be_bytes());
    b.extend_from_slice(&1u16.to_be_bytes());
    b.extend_from_slice(&2u64.to_be_bytes());
    b.extend_from_slice(&u64::MAX.to_be_bytes());
    b.extend_from_slice(&16u32.to_be_bytes());
    b.extend_from_slice(&[9; 16]);
    s.write_all(&b).unwrap();
    assert_eq!(simple_reply(&mut s), (errno::ENOSPC, 2));
    // An unknown command: EINVAL, and the connection goes on.
    request(&mut s, 77, 3, 0, 0);
    assert_eq!(simple_reply(&mut s), (errno::EINVAL, 3));
    request(&mut s, 0, 4, 0, 512);
    assert_eq!(simple_reply(&mut s), (0, 4));
    read_n(&mut s, 512);
    // A bad magic closes this connection only.
    s.write_all(&[0xff; 28]).unwrap();
    let mut rest = Vec::new();
    assert_eq!(s.read_to_end(&mut rest).unwrap(), 0, "the server closed the connection");
    still_serves(addr, &name);
    // A client that drops mid-request (half a WRITE payload).
    let (mut s, _) = go(addr, &name);
    let mut b = p::REQUEST_MAGIC.to_be_bytes().to_vec();
    b.extend_from_slice(&[0, 0, 0, 1]);
    b.extend_from_slice(&5u64.to_be_bytes());
    b.extend_from_slice(&0u64.to_be_bytes());
    b.extend_from_slice(&4096u32.to_be_bytes());
    b.extend_from_slice(&[1; 100]);
    s.write_all(&b).unwrap();
    drop(s);
    still_serves(addr, &name);
    // Handshake errors: an unknown export, a malformed GO, an unknown option, then ABORT.
    let mut s = connect(addr);
    read_n(&mut s, 18);
    s.write_all(&3u32.to_be_bytes()).unwrap();
    let mut d = 4u32.to_be_bytes().to_vec();
    d.extend_from_slice(b"nope\0\0");
    option(&mut s, opt::GO, &d);
    assert_eq!(option_reply(&mut s).0, rep::ERR_UNKNOWN);
    option(&mut s, opt::GO, &[0, 0]);
    assert_eq!(option_reply(&mut s).0, rep::ERR_INVALID);
    option(&mut s, 999, b"xyz");
    assert_eq!(option_reply(&mut s).0, rep::ERR_UNSUP);
    option(&mut s, opt::LIST, &[]);
    let (kind, data) = option_reply(&mut s);
    assert_eq!((kind, &data[4..]), (rep::SERVER, name.as_bytes()));
    assert_eq!(option_reply(&mut s).0, rep::ACK);
    option(&mut s, opt::ABORT, &[]);
    assert_eq!(option_reply(&mut s).0, rep::ACK);
    still_serves(addr, &name);
    let f = server.stop();
    assert!(f.summary.requests >= 6);
}

#[test]
fn unknown_command_flags_and_a_flush_with_an_offset_or_length_get_einval() {
    let dir = Scratch::new("bad-flags");
    let server = start(config("atlas10k", &dir.path("store"), Pace::None));
    let (mut s, _) = go(server.addr, &server.export);
    // A READ with bit 7 set (no flag of the protocol), then a FLUSH with an offset, then one
    // with a length: EINVAL each, and the connection goes on.
    request_flagged(&mut s, 1 << 7, 0, 1, 0, 512);
    assert_eq!(simple_reply(&mut s), (errno::EINVAL, 1));
    request(&mut s, 3, 2, 4096, 0);
    assert_eq!(simple_reply(&mut s), (errno::EINVAL, 2));
    request(&mut s, 3, 3, 0, 512);
    assert_eq!(simple_reply(&mut s), (errno::EINVAL, 3));
    request(&mut s, 3, 4, 0, 0);
    assert_eq!(simple_reply(&mut s), (0, 4), "a well-formed FLUSH is served");
    still_serves(server.addr, &server.export);
}

/// Inputs per property run: 2000 in `make test`; `FREEBLOCK_PARSER_CASES=1000000` for the long
/// run (docs/server.md).
fn parser_cases() -> u32 {
    std::env::var("FREEBLOCK_PARSER_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: parser_cases(), ..ProptestConfig::default() })]

    /// The parsers take any bytes without panicking, and accept only what they can vouch for.
    #[test]
    fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut req = [0u8; p::REQUEST_BYTES];
        let n = bytes.len().min(p::REQUEST_BYTES);
        req[..n].copy_from_slice(&bytes[..n]);
        if let Ok(r) = p::parse_request(&req) {
            prop_assert_eq!(be32(&req), p::REQUEST_MAGIC);
            prop_assert_eq!(r.length, be32(&req[24..]));
        }
        let mut head = [0u8; 16];
        let n = bytes.len().min(16);
        head[..n].copy_from_slice(&bytes[..n]);
        if let Ok((_, len)) = p::parse_option_header(&head) {
            prop_assert!(len <= p::MAX_OPTION_BYTES);
        }
        if let Ok(info) = p::parse_info_request(&bytes) {
            prop_assert_eq!(4 + info.name.len() + 2 + 2 * info.wanted.len(), bytes.len());
        }
        let mut flags = [0u8; 4];
        let n = bytes.len().min(4);
        flags[..n].copy_from_slice(&bytes[..n]);
        let _ = p::parse_client_flags(flags);
    }
}

#[test]
fn garbage_handshakes_never_stop_the_server() {
    let dir = Scratch::new("garbage");
    let server = start(config("atlas10k", &dir.path("store"), Pace::None));
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases: 64, ..ProptestConfig::default() });
    // Valid client flags then random option traffic, or random bytes from the start.
    let strategy = (any::<bool>(), proptest::collection::vec(any::<u8>(), 0..200));
    runner
        .run(&strategy, |(flags_first, garbage)| {
            let mut s = connect(server.addr);
            read_n(&mut s, 18);
            if flags_first {
                s.write_all(&3u32.to_be_bytes()).unwrap();
                let mut b = p::IHAVEOPT.to_be_bytes().to_vec();
                b.extend_from_slice(&garbage);
                let _ = s.write_all(&b);
            } else {
                let _ = s.write_all(&garbage);
            }
            let _ = s.shutdown(std::net::Shutdown::Write);
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink);
            Ok(())
        })
        .unwrap();
    still_serves(server.addr, &server.export);
    server.stop();
}
