//! A minimal blocking NBD client (fixed newstyle, GO, simple replies) for tests that need to
//! know exactly which writes were acknowledged.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use freeblock_server::protocol::{self as p, cflag, opt, rep};

pub struct Client {
    s: TcpStream,
    cookie: u64,
    pub size: u64,
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}

impl Client {
    /// Connects and negotiates `export` with GO.
    pub fn connect(addr: SocketAddr, export: &str) -> std::io::Result<Self> {
        let mut s = TcpStream::connect(addr)?;
        s.set_read_timeout(Some(Duration::from_secs(20)))?;
        s.set_nodelay(true)?;
        let mut g = [0u8; 18];
        s.read_exact(&mut g)?;
        s.write_all(&3u32.to_be_bytes())?;
        let mut d = (export.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(export.as_bytes());
        d.extend_from_slice(&0u16.to_be_bytes());
        let mut o = p::IHAVEOPT.to_be_bytes().to_vec();
        o.extend_from_slice(&opt::GO.to_be_bytes());
        o.extend_from_slice(&(d.len() as u32).to_be_bytes());
        o.extend_from_slice(&d);
        s.write_all(&o)?;
        let mut size = 0;
        loop {
            let mut h = [0u8; 20];
            s.read_exact(&mut h)?;
            let mut data = vec![0u8; be32(&h[16..]) as usize];
            s.read_exact(&mut data)?;
            match be32(&h[12..]) {
                rep::INFO if data[..2] == [0, 0] => size = u64::from_be_bytes(data[2..10].try_into().unwrap()),
                rep::INFO => {}
                rep::ACK => return Ok(Self { s, cookie: 0, size }),
                other => return Err(std::io::Error::other(format!("GO answered {other:#x}"))),
            }
        }
    }

    /// Sends one request without waiting for its reply (pipelining); returns its cookie.
    pub fn send(&mut self, command: u16, flags: u16, offset: u64, length: u32, payload: &[u8]) -> std::io::Result<u64> {
        self.cookie += 1;
        let mut b = p::REQUEST_MAGIC.to_be_bytes().to_vec();
        b.extend_from_slice(&flags.to_be_bytes());
        b.extend_from_slice(&command.to_be_bytes());
        b.extend_from_slice(&self.cookie.to_be_bytes());
        b.extend_from_slice(&offset.to_be_bytes());
        b.extend_from_slice(&length.to_be_bytes());
        b.extend_from_slice(payload);
        self.s.write_all(&b)?;
        Ok(self.cookie)
    }

    /// Reads the next reply's header: its cookie and error.
    pub fn reply_header(&mut self) -> std::io::Result<(u64, u32)> {
        let mut h = [0u8; 16];
        self.s.read_exact(&mut h)?;
        Ok((u64::from_be_bytes(h[8..].try_into().unwrap()), be32(&h[4..])))
    }

    /// The socket, to read a reply's data or to set timeouts.
    pub fn socket(&mut self) -> &mut TcpStream {
        &mut self.s
    }

    /// WRITE_ZEROES of `length` bytes at `offset`; returns once the server acknowledged it.
    pub fn write_zeroes(&mut self, offset: u64, length: u32) -> std::io::Result<()> {
        let cookie = self.send(6, 0, offset, length, &[])?;
        self.reply(cookie)
    }

    fn reply(&mut self, cookie: u64) -> std::io::Result<()> {
        let mut h = [0u8; 16];
        self.s.read_exact(&mut h)?;
        let (error, got) = (be32(&h[4..]), u64::from_be_bytes(h[8..].try_into().unwrap()));
        if be32(&h) != p::SIMPLE_REPLY_MAGIC || got != cookie || error != 0 {
            return Err(std::io::Error::other(format!("reply: magic {:#x}, cookie {got} (sent {cookie}), error {error}", be32(&h))));
        }
        Ok(())
    }

    /// Writes `data` at `offset` with FUA; returns once the server acknowledged it.
    pub fn write_fua(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        let cookie = self.send(1, cflag::FUA, offset, data.len() as u32, data)?;
        self.reply(cookie)
    }

    /// Writes `data` at `offset` without FUA; returns once the server acknowledged it.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        let cookie = self.send(1, 0, offset, data.len() as u32, data)?;
        self.reply(cookie)
    }

    /// FLUSH; returns once the server acknowledged it.
    pub fn flush(&mut self) -> std::io::Result<()> {
        let cookie = self.send(3, 0, 0, 0, &[])?;
        self.reply(cookie)
    }

    /// Reads `length` bytes at `offset`.
    pub fn read(&mut self, offset: u64, length: u32) -> std::io::Result<Vec<u8>> {
        let cookie = self.send(0, 0, offset, length, &[])?;
        self.reply(cookie)?;
        let mut data = vec![0u8; length as usize];
        self.s.read_exact(&mut data)?;
        Ok(data)
    }
}
