//! Import of DiskSim 4.0 parameter files (`.diskspecs` + `.model` + `.seek`).
//!
//! ```text
//!  NAME.diskspecs ── disksim_disk NAME { Model = source NAME.model, <controller, cache> }
//!                                                   │
//!  NAME.model ───── dm_disk NAME { surfaces, Block count,
//!                                  Mechanical Model = dm_mech_g1 { rpm, seek, head switch, … },
//!                                  Layout Model = dm_layout_g1 { mapping, sparing, Zones = [ … ] } }
//!                                                   │ Full seek curve = NAME.seek
//!  NAME.seek ────── "Seek distances measured: N" then N lines "distance, ms"
//! ```
//!
//! # The parameter language
//!
//! A file is a sequence of blocks `type NAME { key = value, ... }` and `source FILE` lines. A key is
//! free text up to the `=` (DiskSim keys contain spaces, dots and brackets: `Segment size (in
//! blks)`); keys are matched ignoring case and runs of spaces. A value is a number, a word
//! (identifier or file name), a list `[ v, v, ... ]`, a nested block `type { ... }`, or `source
//! FILE`, which parses `FILE` (relative to the including file) and takes its single block as the
//! value. `#` starts a comment. Errors name the file and line. Lists and blocks nest at most 64
//! deep and `source` files 16 deep (DiskSim's own files nest four), so hostile input gets an error,
//! not a stack overflow.
//!
//! # Mapping to [`DiskSpec`]
//!
//! | DiskSim | spec |
//! |---|---|
//! | `Number of data surfaces`, `Block count` | `surfaces`, `block_count` |
//! | `Rotation speed (in rpms)`, `Head switch time` | `rpm`, `head_switch_ms` |
//! | `Add. write settling delay` | `write_settle_ms`, negative values too (see below) |
//! | `Seek type = extracted`, `Full seek curve` | [`SeekModel::Table`] from the `.seek` file; its fourth column (Western Digital's dual seek files) is `write_seek` |
//! | `Layout Model = dm_layout_g4 { TP, IDX, Slips, Remaps }` (Western Digital's fork) | [`Mapping::Banded`] zones, read by [`crate::disksim_g4`]; capacity what the layout maps |
//! | `Seek type = hplplus10` / `hpl`, `HPL seek equation values`, `First ten seek times` | [`SeekModel::Hpl`] |
//! | `LBN-to-PBN mapping scheme` 0 / 1 | [`Mapping::CylinderMajor`] / [`Mapping::Serpentine`] |
//! | `Sparing scheme used` 0–10, `Rangesize for sparing` | [`Sparing`] |
//! | zone: first/last cylinder, `Blocks per track`, `Offset of first block`, `Empty space at zone front`, skews, `Number of spares`, `slips`, `defects` | [`Zone`] (skews and offset in whole sectors, as DiskSim truncates them) |
//! | `… over. after read` (×`Time scale for overheads`), `Bulk sector transfer time` (a negative one taken as 0, noted in `source`) | [`crate::Controller`] |
//! | `Enable caching in buffer`, `Number of buffer segments`, `Segment size (in blks)`, `Maximum read-ahead (blks)`, `Fast write level` > 0 | [`crate::CacheSpec`], `controller.write_back` |
//! | `… over. after write`, `Read/Write completion overhead`, `Data preparation overhead`, `First/Other reselect overhead`, `Read disconnect afterread/afterwrite`, `Write disconnect overhead`, `Minimum seek delay`, `Hold bus entire read/write xfer`, `Per-request overhead time`, `Extra write disconnect` and `Extradisc …` | the rest of [`crate::Controller`] |
//! | `Buffer continuous read`, `Minimum read-ahead (blks)`, `Read-ahead on idle hit`, `Read any free blocks`, `Allow read hits on write data`, `Maximum number of write segments`, `Use separate write segment`, `Write hit stop prefetch`, `Stop prefetch in sector`, `High (read)/Low (write) water mark`, `Set watermark by reqsize` | the rest of [`crate::CacheSpec`] |
//! | `Combine seq writes` | `cache.combine_sequential_writes` |
//! | `Read-ahead over requested` = -1 | `cache.keep_read_data = false` |
//! | `Read any free blocks` with `Buffer continuous read` = 4 | not applied (see below); noted in `source` |
//! | `Immediate buffer read/write` | not applied (see below); noted in `source` |
//! | (no parameter: DiskSim's media process) | `cache.skip_unmapped_sectors = true` (see below) |
//!
//! The bus a disk hangs on is part of DiskSim's system configuration (`.parv`), not of the disk's
//! files: [`apply_system_config`] reads its block transfer times.
//!
//! # DiskSim 4.0 compatibility
//!
//! An imported drive behaves as DiskSim 4.0 runs it, request by request (checked against DiskSim's
//! own per-request output for all eleven validation drives, see `docs/disksim-compat.md`), also
//! where DiskSim departs from what its parameters say or from a real drive. Each such point is a
//! spec field, so the other behaviour is one edit of the imported TOML away:
//!
//! - `Immediate buffer read` / `Immediate buffer write` (zero-latency access) are read by
//!   DiskSim 4.0 but never take effect: `cache.zero_latency_reads` / `…_writes` stay false, and
//!   `source` notes it. Set them true for the drive's zero-latency access.
//! - A negative `Add. write settling delay` is applied (write seeks shorter than the seek curve),
//!   as DiskSim does; [`crate::Disk::new`] refuses one that makes a move negative.
//! - `Combine seq writes`: a sequential write is taken into the segment being written back, and
//!   then written to the media once more by a pass of its own, as DiskSim 4.0 does
//!   (`cache.combine_sequential_writes`; false makes it wait for the write-back instead).
//! - `Read-ahead over requested = -1`: a read's data leaves the buffer when it completes
//!   (`cache.keep_read_data = false`), so re-reads go to the media.
//! - `Read any free blocks` on a drive with DEC read-ahead (`Buffer continuous read = 4`, the
//!   Atlas 10K) takes no effect in DiskSim 4.0: `cache.read_any_free_blocks` stays false and
//!   `source` notes it, so a re-read of sectors that passed under the head before a read's
//!   first one goes to the media. Set it true for the drive's own read-any-free.
//! - On a track whose LBNs stop short of its end (spare sectors of a cylinder, range or track),
//!   DiskSim's sector-by-sector media process steps from the track's last LBN to its first in
//!   one sector time, skipping the unmapped sectors, so a write that missed a sector for want
//!   of data waits fewer sector times than a revolution (`cache.skip_unmapped_sectors = true`;
//!   false gives the physical revolution).
//!
//! Cylinders that no DiskSim zone covers (DIXtrac leaves such gaps between zones) become zones
//! holding no LBNs (`empty_front_sectors` equal to all their sectors), so cylinder numbers and seek
//! distances stay DiskSim's. Unknown keys are ignored; missing required ones are errors naming the
//! file and key.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::SpecError;
use crate::layout::Layout;
use crate::spec::{CacheSpec, Controller, DiskSpec, ExtraWriteDisconnect, Mapping, ReadAhead, SeekModel, Sparing, Zone};

/// Deepest `source` nesting accepted (guards against include cycles).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Deepest nesting of lists and blocks inside one file. DiskSim's own files nest four deep; the
/// parser recurses once per level, so the limit keeps hostile input from exhausting the stack.
const MAX_NESTING: usize = 64;

/// A parsed parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer literal.
    Int(i64),
    /// A literal with a fraction or exponent.
    Float(f64),
    /// An identifier or file name.
    Word(String),
    /// `[ v, v, ... ]`.
    List(Vec<Value>),
    /// A nested (or sourced) block.
    Block(Block),
}

/// `type NAME { key = value, ... }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Block type, e.g. `dm_disk`.
    pub type_name: String,
    /// Instance name, if given.
    pub name: Option<String>,
    /// Parameters in file order.
    pub params: Vec<Param>,
    /// File the block was read from.
    pub origin: String,
    /// Line of the block's opening.
    pub line: usize,
}

/// One `key = value` of a block.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The key as written, with runs of whitespace collapsed to one space.
    pub key: String,
    /// The value.
    pub value: Value,
    /// Line of the key.
    pub line: usize,
}

/// Collapses whitespace and lowercases, for key comparison.
fn norm_key(k: &str) -> String {
    k.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

impl Block {
    /// The first parameter whose key matches `key` (ignoring case and runs of spaces).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Param> {
        let want = norm_key(key);
        self.params.iter().find(|p| norm_key(&p.key) == want)
    }

    fn err(&self, line: usize, message: String) -> SpecError {
        SpecError::DiskSim { origin: self.origin.clone(), line, message }
    }

    fn describe(&self) -> String {
        match &self.name {
            Some(n) => format!("`{} {n}`", self.type_name),
            None => format!("`{}`", self.type_name),
        }
    }

    fn req(&self, key: &str) -> Result<&Param, SpecError> {
        self.get(key).ok_or_else(|| self.err(self.line, format!("missing required parameter `{key}` in {} block", self.describe())))
    }

    fn num_of(&self, p: &Param, v: &Value) -> Result<f64, SpecError> {
        match v {
            Value::Int(i) => Ok(*i as f64),
            Value::Float(f) => Ok(*f),
            _ => Err(self.err(p.line, format!("`{}` must be a number", p.key))),
        }
    }

    fn num(&self, key: &str) -> Result<f64, SpecError> {
        let p = self.req(key)?;
        self.num_of(p, &p.value)
    }

    fn num_or(&self, key: &str, default: f64) -> Result<f64, SpecError> {
        match self.get(key) {
            Some(p) => self.num_of(p, &p.value),
            None => Ok(default),
        }
    }

    fn int_of(&self, p: &Param, v: &Value, min: i64) -> Result<i64, SpecError> {
        match v {
            Value::Int(i) if *i >= min => Ok(*i),
            Value::Float(f) if f.fract() == 0.0 && *f >= min as f64 && f.abs() < 9e15 => Ok(*f as i64),
            _ => Err(self.err(p.line, format!("`{}` must be an integer ≥ {min}", p.key))),
        }
    }

    fn int(&self, key: &str, min: i64) -> Result<i64, SpecError> {
        let p = self.req(key)?;
        self.int_of(p, &p.value, min)
    }

    fn int_or(&self, key: &str, min: i64, default: i64) -> Result<i64, SpecError> {
        match self.get(key) {
            Some(p) => self.int_of(p, &p.value, min),
            None => Ok(default),
        }
    }

    fn word(&self, key: &str) -> Result<(&str, usize), SpecError> {
        let p = self.req(key)?;
        match &p.value {
            Value::Word(w) => Ok((w, p.line)),
            _ => Err(self.err(p.line, format!("`{}` must be a name", p.key))),
        }
    }

    fn list(&self, key: &str) -> Result<(&Param, &[Value]), SpecError> {
        let p = self.req(key)?;
        match &p.value {
            Value::List(v) => Ok((p, v)),
            _ => Err(self.err(p.line, format!("`{}` must be a list `[ ... ]`", p.key))),
        }
    }

    fn block(&self, key: &str, type_name: &str) -> Result<&Block, SpecError> {
        let p = self.req(key)?;
        match &p.value {
            Value::Block(b) if b.type_name.eq_ignore_ascii_case(type_name) => Ok(b),
            Value::Block(b) => Err(self.err(p.line, format!("`{}` is a `{}` block; only `{type_name}` is supported", p.key, b.type_name))),
            _ => Err(self.err(p.line, format!("`{}` must be a `{type_name}` block", p.key))),
        }
    }

    fn ints(&self, key: &str, min: i64) -> Result<Vec<i64>, SpecError> {
        if self.get(key).is_none() {
            return Ok(Vec::new());
        }
        let (p, values) = self.list(key)?;
        values.iter().map(|v| self.int_of(p, v, min)).collect()
    }

    fn nums(&self, key: &str) -> Result<(usize, Vec<f64>), SpecError> {
        let (p, values) = self.list(key)?;
        Ok((p.line, values.iter().map(|v| self.num_of(p, v)).collect::<Result<_, _>>()?))
    }
}

/// Parses a DiskSim parameter file into its top-level blocks, following `source` lines.
///
/// # Errors
/// [`SpecError::Io`] if the file cannot be read, [`SpecError::DiskSim`] naming file and line for
/// syntax errors.
pub fn parse_file(path: &Path) -> Result<Vec<Block>, SpecError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SpecError::Io { origin: origin.clone(), message: e.to_string() })?;
    parse_str(&text, &origin, path.parent().unwrap_or(Path::new(".")))
}

/// Parses DiskSim parameter text. `origin` names it in errors; `source` paths are resolved against
/// `dir`.
///
/// # Errors
/// [`SpecError::DiskSim`] naming the origin and line.
pub fn parse_str(text: &str, origin: &str, dir: &Path) -> Result<Vec<Block>, SpecError> {
    Parser { src: text.as_bytes(), pos: 0, line: 1, origin: origin.to_string(), dir: dir.to_path_buf(), depth: 0, nesting: 0 }.top()
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    line: usize,
    origin: String,
    dir: PathBuf,
    /// `source` files being read around this one.
    depth: usize,
    /// Lists and blocks open around the cursor.
    nesting: usize,
}

/// Characters that end a word or number.
fn is_delim(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b',' | b'{' | b'}' | b'[' | b']' | b'=' | b'#')
}

impl Parser<'_> {
    fn err_at(&self, line: usize, message: impl Into<String>) -> SpecError {
        SpecError::DiskSim { origin: self.origin.clone(), line, message: message.into() }
    }

    fn err(&self, message: impl Into<String>) -> SpecError {
        self.err_at(self.line, message)
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn bump(&mut self) {
        if self.peek() == Some(b'\n') {
            self.line += 1;
        }
        self.pos += 1;
    }

    /// Skips whitespace and `#` comments.
    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c == b'#' {
                while self.peek().is_some_and(|c| c != b'\n') {
                    self.pos += 1;
                }
            } else if c.is_ascii_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(|c| !is_delim(c)) {
            self.pos += 1;
        }
        String::from_utf8_lossy(&self.src[start..self.pos]).into_owned()
    }

    /// Shows the next bit of input for error messages.
    fn found(&self) -> String {
        match self.peek() {
            None => "end of file".into(),
            Some(_) => {
                let rest = &self.src[self.pos..];
                let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len()).min(40);
                format!("`{}`", String::from_utf8_lossy(&rest[..end]).trim_end())
            }
        }
    }

    fn top(&mut self) -> Result<Vec<Block>, SpecError> {
        let mut blocks = Vec::new();
        loop {
            self.skip_ws();
            if self.peek().is_none() {
                return Ok(blocks);
            }
            let line = self.line;
            let w = self.word();
            if w.is_empty() {
                return Err(self.err(format!("expected a block `type NAME {{ ... }}`, found {}", self.found())));
            }
            if w == "source" {
                blocks.extend(self.include(line)?);
                continue;
            }
            self.skip_ws();
            let name = if self.peek() == Some(b'{') {
                None
            } else {
                let n = self.word();
                if n.is_empty() {
                    return Err(self.err(format!("expected a block name or `{{` after `{w}`, found {}", self.found())));
                }
                self.skip_ws();
                Some(n)
            };
            if self.peek() != Some(b'{') {
                return Err(self.err(format!("expected `{{` to open block `{w}`, found {}", self.found())));
            }
            blocks.push(self.block_body(w, name, line)?);
        }
    }

    /// `source FILE`: parses FILE relative to this file's directory.
    fn include(&mut self, line: usize) -> Result<Vec<Block>, SpecError> {
        self.skip_ws();
        let file = self.word();
        if file.is_empty() {
            return Err(self.err(format!("expected a file name after `source`, found {}", self.found())));
        }
        if self.depth >= MAX_INCLUDE_DEPTH {
            return Err(self.err_at(line, format!("`source {file}` nests more than {MAX_INCLUDE_DEPTH} files deep")));
        }
        let path = self.dir.join(&file);
        let text = std::fs::read_to_string(&path).map_err(|e| self.err_at(line, format!("cannot read `source {file}` ({}): {e}", path.display())))?;
        let mut sub = Parser {
            src: text.as_bytes(),
            pos: 0,
            line: 1,
            origin: path.display().to_string(),
            dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            depth: self.depth + 1,
            nesting: 0,
        };
        sub.top()
    }

    /// Enters one more level of lists and blocks, refusing to go deeper than [`MAX_NESTING`].
    fn nest(&mut self, what: impl FnOnce() -> String) -> Result<(), SpecError> {
        if self.nesting >= MAX_NESTING {
            return Err(self.err(format!("{} nested more than {MAX_NESTING} deep", what())));
        }
        self.nesting += 1;
        Ok(())
    }

    /// Parses `{ key = value, ... }` with the cursor on `{`.
    fn block_body(&mut self, type_name: String, name: Option<String>, line: usize) -> Result<Block, SpecError> {
        self.nest(|| format!("block `{type_name}`"))?;
        let block = self.block_params(type_name, name, line);
        self.nesting -= 1;
        block
    }

    fn block_params(&mut self, type_name: String, name: Option<String>, line: usize) -> Result<Block, SpecError> {
        self.bump(); // '{'
        let mut params = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Err(self.err_at(line, format!("block `{type_name}` opened here is never closed"))),
                Some(b'}') => {
                    self.bump();
                    break;
                }
                _ => {}
            }
            let key_line = self.line;
            let start = self.pos;
            while let Some(c) = self.peek() {
                if c == b'=' || matches!(c, b'\n' | b',' | b'{' | b'}' | b'[' | b']' | b'#') {
                    break;
                }
                self.pos += 1;
            }
            let raw = String::from_utf8_lossy(&self.src[start..self.pos]).into_owned();
            let key = raw.split_whitespace().collect::<Vec<_>>().join(" ");
            if self.peek() != Some(b'=') || key.is_empty() {
                let shown = if raw.trim().is_empty() { self.found() } else { format!("`{}`", raw.trim()) };
                return Err(self.err_at(key_line, format!("expected `key = value`, found {shown}")));
            }
            self.bump(); // '='
            let value = self.value(&key)?;
            params.push(Param { key, value, line: key_line });
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b'}') => {}
                _ => {
                    let last = &params[params.len() - 1].key;
                    return Err(self.err(format!("expected `,` or `}}` after the value of `{last}`, found {}", self.found())));
                }
            }
        }
        Ok(Block { type_name, name, params, origin: self.origin.clone(), line })
    }

    /// Parses `[ v, v, ... ]` with the cursor on `[`; `line` is where it opens.
    fn list_items(&mut self, key: &str, line: usize) -> Result<Value, SpecError> {
        self.bump(); // '['
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(b']') {
                self.bump();
                return Ok(Value::List(items));
            }
            items.push(self.value(key)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b']') => {}
                None => return Err(self.err_at(line, format!("list of `{key}` opened here is never closed"))),
                _ => return Err(self.err(format!("expected `,` or `]` in the list of `{key}`, found {}", self.found()))),
            }
        }
    }

    fn value(&mut self, key: &str) -> Result<Value, SpecError> {
        self.skip_ws();
        let line = self.line;
        match self.peek() {
            Some(b'[') => {
                self.nest(|| format!("list of `{key}`"))?;
                let list = self.list_items(key, line);
                self.nesting -= 1;
                list
            }
            Some(c) if !is_delim(c) => {
                let w = self.word();
                if w == "source" {
                    let mut blocks = self.include(line)?;
                    return match blocks.len() {
                        1 => Ok(Value::Block(blocks.remove(0))),
                        n => Err(self.err_at(line, format!("`{key} = source ...` needs a file with exactly one block, found {n}"))),
                    };
                }
                if let Some(n) = parse_number(&w) {
                    return Ok(n);
                }
                // A block `type {` or `type NAME {`, else a plain word.
                let (save_pos, save_line) = (self.pos, self.line);
                self.skip_ws();
                if self.peek() == Some(b'{') {
                    return Ok(Value::Block(self.block_body(w, None, line)?));
                }
                let name = self.word();
                if !name.is_empty() {
                    self.skip_ws();
                    if self.peek() == Some(b'{') {
                        return Ok(Value::Block(self.block_body(w, Some(name), line)?));
                    }
                }
                self.pos = save_pos;
                self.line = save_line;
                Ok(Value::Word(w))
            }
            _ => Err(self.err(format!("expected a value for `{key}`, found {}", self.found()))),
        }
    }
}

fn parse_number(w: &str) -> Option<Value> {
    let first = w.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return None;
    }
    if let Ok(i) = w.parse::<i64>() {
        return Some(Value::Int(i));
    }
    w.parse::<f64>().ok().filter(|f| f.is_finite()).map(Value::Float)
}

/// Reads a DiskSim disk: `path` is a `.diskspecs` file (its first `disksim_disk` block, whose
/// `Model` sources the `.model` file) or a `.model` file (its first `dm_disk` block; controller and
/// cache then take their defaults).
///
/// The spec's `name` is the file stem in lower case; `description` names the DiskSim block and
/// `source` lists the files read, plus any adjustment made (see the module docs).
///
/// # Errors
/// [`SpecError::Io`] for unreadable files, [`SpecError::DiskSim`] naming file and line (or the
/// missing key) for anything DiskSim would reject or this importer does not support, and
/// [`SpecError::Invalid`] if the result fails [`DiskSpec::validate`].
pub fn import(path: &Path) -> Result<DiskSpec, SpecError> {
    let origin = path.display().to_string();
    let blocks = parse_file(path)?;
    let ctl = blocks.iter().find(|b| b.type_name.eq_ignore_ascii_case("disksim_disk"));
    let model = match ctl {
        Some(d) => d.block("Model", "dm_disk")?,
        None => blocks.iter().find(|b| b.type_name.eq_ignore_ascii_case("dm_disk")).ok_or_else(|| SpecError::DiskSim {
            origin: origin.clone(),
            line: 0,
            message: "no `disksim_disk` or `dm_disk` block found".into(),
        })?,
    };
    let mut notes = Vec::new();
    let mut files = vec![file_name(&origin)];
    if model.origin != origin {
        files.push(file_name(&model.origin));
    }

    let surfaces = model.int("Number of data surfaces", 1)?;
    let surfaces = u32::try_from(surfaces).ok().filter(|&s| s <= crate::spec::MAX_SURFACES).ok_or_else(|| {
        let line = model.get("Number of data surfaces").map_or(model.line, |p| p.line);
        model.err(line, format!("`Number of data surfaces` {surfaces} is more than the {} supported", crate::spec::MAX_SURFACES))
    })?;
    let block_count = u64::try_from(model.int("Block count", 0)?).unwrap_or(0);
    let header_cylinders = model.int_or("Number of cylinders", 1, 0)?;
    if header_cylinders > i64::from(crate::spec::MAX_CYLINDERS) {
        let line = model.get("Number of cylinders").map_or(model.line, |p| p.line);
        return Err(model.err(line, format!("`Number of cylinders` {header_cylinders} is more than the {} supported", crate::spec::MAX_CYLINDERS)));
    }

    let mech = model.block("Mechanical Model", "dm_mech_g1")?;
    let rpm = mech.num("Rotation speed (in rpms)")?;
    let head_switch_ms = mech.num("Head switch time")?;
    // Applied as given, negative too (DiskSim 4.0 does; `Disk::new` refuses a settle that would
    // make a move negative).
    let write_settle_ms = mech.num_or("Add. write settling delay", 0.0)?;
    let (seek, write_seek) = seek_model(mech, &mut files)?;

    let g4 = model.get("Layout Model").is_some_and(|p| matches!(&p.value, Value::Block(b) if b.type_name.eq_ignore_ascii_case("dm_layout_g4")));
    let (zones, mapping, sparing, block_count) = if g4 {
        let layout = model.block("Layout Model", "dm_layout_g4")?;
        if layout.origin != model.origin {
            files.push(file_name(&layout.origin));
        }
        let g = crate::disksim_g4::import_layout(layout, surfaces)?;
        // The stated choice for a model declaring more than its layout maps (the WD 4 TB model
        // declares 7,725,673,570 blocks and 310,194 cylinders; its layout maps 7,542,225,920 on
        // 303,104, which its own workload and logical organisation use): export what is mapped.
        if block_count > g.mapped_lbns {
            notes.push(format!("`Block count` {block_count} exceeds the {} LBNs the g4 layout maps: the capacity is what the layout maps", g.mapped_lbns));
        }
        if header_cylinders > i64::from(g.mapped_cylinders) {
            notes.push(format!("`Number of cylinders` {header_cylinders}: the g4 layout maps {} (the rest are not modelled)", g.mapped_cylinders));
        }
        (g.zones, Mapping::Banded { band_cylinders: g.band_cylinders }, Sparing::None, block_count.min(g.mapped_lbns))
    } else {
        let layout = model.block("Layout Model", "dm_layout_g1")?;
        let (zones, gap_note) = zones(layout, surfaces, header_cylinders)?;
        if let Some(n) = gap_note {
            notes.push(n);
        }
        let mapping = match layout.int("LBN-to-PBN mapping scheme", 0)? {
            0 => Mapping::CylinderMajor,
            1 => Mapping::Serpentine,
            n => {
                let p = layout.req("LBN-to-PBN mapping scheme")?;
                return Err(layout.err(p.line, format!("unsupported `LBN-to-PBN mapping scheme` {n} (supported: 0, 1)")));
            }
        };
        (zones, mapping, sparing_scheme(layout)?, block_count)
    };

    let (controller, cache) = match ctl {
        Some(d) => controller_and_cache(d, &mut notes)?,
        None => (Controller::default(), CacheSpec::default()),
    };

    let title = model.name.clone().or_else(|| ctl.and_then(|d| d.name.clone())).unwrap_or_default();
    let disk_name = ctl.and_then(|d| d.name.clone()).unwrap_or_else(|| title.clone());
    let dialect = if g4 { "DiskSim parameter files (Western Digital's fork: g4 layout)" } else { "DiskSim 4.0 parameter files" };
    let mut source = format!("{dialect} {}", files.join(", "));
    for n in &notes {
        let _ = write!(source, "; {n}");
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_lowercase()).unwrap_or_default();
    let spec = DiskSpec {
        name: stem,
        description: format!("DiskSim disk {disk_name}"),
        source,
        rpm,
        surfaces,
        sector_bytes: 512,
        block_count: Some(block_count),
        mapping,
        sparing,
        zones,
        seek,
        write_seek,
        head_switch_ms,
        read_settle_ms: 0.0,
        write_settle_ms,
        seek_asymmetry_ms: 0.0,
        controller,
        cache,
        write_cache: None,
        power: None,
    };
    spec.validate().map_err(|e| e.with_origin(&origin))?;
    Layout::new(&spec, 1_000_000).map_err(|e| e.with_origin(&origin))?;
    Ok(spec)
}

fn file_name(path: &str) -> String {
    Path::new(path).file_name().map_or_else(|| path.to_string(), |f| f.to_string_lossy().into_owned())
}

/// The seek curve, and the write curve when the `.seek` file has a fourth column.
fn seek_model(mech: &Block, files: &mut Vec<String>) -> Result<(SeekModel, Option<SeekModel>), SpecError> {
    let (kind, kind_line) = mech.word("Seek type")?;
    match kind {
        "extracted" => {
            let (file, line) = mech.word("Full seek curve")?;
            let dir = Path::new(&mech.origin).parent().unwrap_or(Path::new("."));
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| mech.err(line, format!("cannot read `Full seek curve = {file}` ({}): {e}", path.display())))?;
            files.push(file_name(&path.display().to_string()));
            seek_models(&text, &path.display().to_string())
        }
        "hpl" | "hplplus10" => {
            let (line, v) = mech.nums("HPL seek equation values")?;
            if v.len() != 6 {
                return Err(mech.err(line, format!("`HPL seek equation values` needs 6 values, got {}", v.len())));
            }
            let first_ten_ms = if kind == "hplplus10" {
                let (line, t) = mech.nums("First ten seek times")?;
                if t.len() != 10 {
                    return Err(mech.err(line, format!("`First ten seek times` needs 10 values, got {}", t.len())));
                }
                t
            } else if v[5] != -1.0 {
                // DiskSim then uses the single-cylinder seek time for distance 1.
                vec![mech.num("Single cylinder seek time")?]
            } else {
                Vec::new()
            };
            Ok((SeekModel::Hpl { boundary: v[0], sqrt_a: v[1], sqrt_b: v[2], linear_a: v[3], linear_b: v[4], first_ten_ms }, None))
        }
        other => Err(mech.err(kind_line, format!("unsupported `Seek type` `{other}` (supported: extracted, hpl, hplplus10)"))),
    }
}

/// An extracted seek curve: `[distance, read ms]` points, and the write times when the file
/// has them.
#[derive(Debug, Clone, PartialEq)]
struct SeekTable {
    points: Vec<[f64; 2]>,
    write_ms: Option<Vec<f64>>,
}

/// Parses a `.seek` file: an optional `Seek distances measured: N` line, then lines of
/// `distance, ms` (2 columns), `distance, ms, standard deviation` (3; the deviation is not
/// modelled) or `distance, read ms, standard deviation, write ms` (4: Western Digital's "dual
/// seek" files). Every line has the same number of columns. Errors name the line and column:
/// distances must rise and times be non-negative.
fn seek_table(text: &str, origin: &str) -> Result<SeekTable, SpecError> {
    let err = |line: usize, message: String| SpecError::DiskSim { origin: origin.to_string(), line, message };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#')).peekable();
    let &(hline, header) = lines.peek().ok_or_else(|| err(0, "empty seek file".into()))?;
    let announced = match header.strip_prefix("Seek distances measured:") {
        Some(n) => {
            lines.next();
            Some(n.trim().parse::<usize>().map_err(|_| err(hline, format!("expected `Seek distances measured: N`, found `{header}`")))?)
        }
        None => None,
    };
    // The header is not trusted for the allocation: a count of 2^63 must not reserve 2^63 points.
    let mut points: Vec<[f64; 2]> = Vec::with_capacity(announced.unwrap_or(0).min(text.lines().count()));
    let mut write_ms: Vec<f64> = Vec::new();
    let mut columns = None;
    const NAMES: [&str; 4] = ["distance", "read time (ms)", "standard deviation (ms)", "write time (ms)"];
    for (line, l) in lines {
        let parts: Vec<&str> = l.split(',').map(str::trim).collect();
        if !(2..=4).contains(&parts.len()) {
            return Err(err(line, format!("expected `distance, ms` (2, 3 or 4 columns: distance, read ms, standard deviation, write ms), found `{l}`")));
        }
        let want = *columns.get_or_insert(parts.len());
        if parts.len() != want {
            return Err(err(line, format!("has {} columns where the lines before have {want}: `{l}`", parts.len())));
        }
        let mut v = [0.0; 4];
        for (i, p) in parts.iter().enumerate() {
            v[i] = p.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| err(line, format!("column {} ({}) must be a number, found `{p}`", i + 1, NAMES[i])))?;
        }
        if announced == Some(points.len()) {
            return Err(err(line, format!("more points than the {} announced", points.len())));
        }
        let d = v[0];
        if d < 1.0 {
            return Err(err(line, format!("column 1 (distance) must be at least 1 cylinder, found {d}")));
        }
        if let Some(&[prev, _]) = points.last() {
            if d <= prev {
                return Err(err(line, format!("column 1 (distance) {d} does not follow {prev}: distances must increase")));
            }
        }
        for i in (1..want).filter(|&i| i != 2) {
            if v[i] < 0.0 {
                return Err(err(line, format!("column {} ({}) is negative: {}", i + 1, NAMES[i], v[i])));
            }
        }
        points.push([d, v[1]]);
        if want == 4 {
            write_ms.push(v[3]);
        }
    }
    if let Some(count) = announced {
        if points.len() != count {
            return Err(err(hline, format!("announces {count} points but has {}", points.len())));
        }
    }
    if points.is_empty() {
        return Err(err(hline, "no seek points".into()));
    }
    Ok(SeekTable { points, write_ms: (columns == Some(4)).then_some(write_ms) })
}

fn sparing_scheme(layout: &Block) -> Result<Sparing, SpecError> {
    Ok(match layout.int("Sparing scheme used", 0)? {
        0 => Sparing::None,
        1 => Sparing::Tracks,
        2 => Sparing::SectorsPerCylinder,
        3 => Sparing::SectorsPerTrack,
        4 => Sparing::SectorsPerCylinderSlipToEnd,
        5 => Sparing::SectorsPerCylinderAtFront,
        6 => Sparing::SectorsPerCylinderAtFrontSlipToEnd,
        7 => Sparing::SectorsAtEnd,
        8 => {
            let r = layout.int("Rangesize for sparing", 1)?;
            let range_size = u32::try_from(r).map_err(|_| layout.err(layout.line, "`Rangesize for sparing` is too large".into()))?;
            Sparing::SectorsPerRange { range_size }
        }
        9 => Sparing::SectorsPerZone,
        10 => Sparing::SectorsPerZoneSlipToEnd,
        n => {
            let p = layout.req("Sparing scheme used")?;
            return Err(layout.err(p.line, format!("unknown `Sparing scheme used` {n} (0–10)")));
        }
    })
}

/// Whether skews and offsets are in sectors (DiskSim's default) or fractions of a revolution.
fn revolutions(b: &Block) -> Result<Option<bool>, SpecError> {
    match b.get("Skew units") {
        None => Ok(None),
        Some(p) => match &p.value {
            Value::Word(w) if w == "sectors" => Ok(Some(false)),
            Value::Word(w) if w == "revolutions" => Ok(Some(true)),
            _ => Err(b.err(p.line, "`Skew units` must be `sectors` or `revolutions`".into())),
        },
    }
}

/// A zone's cylinder number, below [`crate::spec::MAX_CYLINDERS`] (so zone arithmetic cannot
/// overflow before the spec is validated).
fn cylinder_of(b: &Block, key: &str) -> Result<u32, SpecError> {
    let v = b.int(key, 0)?;
    match u32::try_from(v) {
        Ok(c) if c < crate::spec::MAX_CYLINDERS => Ok(c),
        _ => {
            let p = b.req(key)?;
            Err(b.err(p.line, format!("`{key}` {v} is beyond the last cylinder supported ({})", crate::spec::MAX_CYLINDERS - 1)))
        }
    }
}

fn u32_of(b: &Block, key: &str, v: i64) -> Result<u32, SpecError> {
    u32::try_from(v).map_err(|_| b.err(b.get(key).map_or(b.line, |p| p.line), format!("`{key}` is too large")))
}

/// The layout's zones, sorted, with zero-LBN zones filling any cylinders DiskSim leaves uncovered.
fn zones(layout: &Block, surfaces: u32, header_cylinders: i64) -> Result<(Vec<Zone>, Option<String>), SpecError> {
    let layout_revs = revolutions(layout)?.unwrap_or(false);
    let (zp, list) = layout.list("Zones")?;
    let mut zones: Vec<(usize, Zone)> = Vec::with_capacity(list.len());
    for v in list {
        let Value::Block(b) = v else {
            return Err(layout.err(zp.line, "`Zones` must be a list of `dm_layout_g1_zone` blocks".into()));
        };
        let first = cylinder_of(b, "First cylinder number")?;
        let last = cylinder_of(b, "Last cylinder number")?;
        if last < first {
            let p = b.req("Last cylinder number")?;
            return Err(b.err(p.line, format!("last cylinder {last} is before first cylinder {first}")));
        }
        let spt = u32_of(b, "Blocks per track", b.int("Blocks per track", 1)?)?;
        if spt > crate::spec::MAX_SECTORS_PER_TRACK {
            let p = b.req("Blocks per track")?;
            return Err(b.err(p.line, format!("`Blocks per track` {spt} is more than the {} supported", crate::spec::MAX_SECTORS_PER_TRACK)));
        }
        let revs = revolutions(b)?.unwrap_or(layout_revs);
        // DiskSim keeps whole sectors ((int) value × sector width) unless units are revolutions.
        let angle = |key: &str| -> Result<f64, SpecError> {
            let v = b.num_or(key, 0.0)?;
            let s = if revs { v * f64::from(spt) } else { v.trunc() };
            if s < 0.0 {
                let p = b.req(key)?;
                return Err(b.err(p.line, format!("`{key}` must not be negative")));
            }
            Ok(s)
        };
        let first_sector_offset = angle("Offset of first block")?;
        let track_skew = angle("Skew for track switch")?;
        let cylinder_skew = angle("Skew for cylinder switch")?;
        let empty_front_sectors = u64::try_from(b.int_or("Empty space at zone front", 0, 0)?).unwrap_or(0);
        let spares = u32_of(b, "Number of spares", b.int_or("Number of spares", 0, 0)?)?;
        let slips: Vec<u64> = b.ints("slips", 0)?.into_iter().map(|s| s as u64).collect();
        let d = b.ints("defects", 0)?;
        if d.len() % 2 != 0 {
            let p = b.req("defects")?;
            return Err(b.err(p.line, "`defects` needs pairs `defective, spare`: an even number of values".into()));
        }
        let defects = d.chunks(2).map(|c| [c[0] as u64, c[1] as u64]).collect();
        let zone = Zone {
            first_cylinder: first,
            last_cylinder: last,
            sectors_per_track: spt,
            first_sector_offset,
            empty_front_sectors,
            track_skew,
            cylinder_skew,
            band_pair_skew: 0.0,
            spares,
            slips,
            defects,
        };
        zones.push((b.line, zone));
    }
    if zones.is_empty() {
        return Err(layout.err(zp.line, "`Zones` is empty".into()));
    }
    zones.sort_by_key(|(_, z)| z.first_cylinder);
    let origin = &layout.origin;
    let mut out: Vec<Zone> = Vec::with_capacity(zones.len());
    let mut gaps: Vec<(u32, u32)> = Vec::new();
    let filler = |first: u32, last: u32, spt: u32| Zone {
        first_cylinder: first,
        last_cylinder: last,
        sectors_per_track: spt,
        first_sector_offset: 0.0,
        empty_front_sectors: u64::from(last - first + 1) * u64::from(surfaces) * u64::from(spt),
        track_skew: 0.0,
        cylinder_skew: 0.0,
        band_pair_skew: 0.0,
        spares: 0,
        slips: vec![],
        defects: vec![],
    };
    for (line, z) in zones {
        let next = out.last().map_or(0, |p| p.last_cylinder + 1);
        if z.first_cylinder < next {
            return Err(SpecError::DiskSim {
                origin: origin.clone(),
                line,
                message: format!("zone of cylinders {}–{} overlaps the previous zone, which ends at {}", z.first_cylinder, z.last_cylinder, next - 1),
            });
        }
        if z.first_cylinder > next {
            let spt = out.last().map_or(z.sectors_per_track, |p| p.sectors_per_track);
            gaps.push((next, z.first_cylinder - 1));
            out.push(filler(next, z.first_cylinder - 1, spt));
        }
        out.push(z);
    }
    let end = out.last().map_or(0, |z| z.last_cylinder + 1);
    if let Ok(header) = u32::try_from(header_cylinders) {
        if header > end {
            let spt = out.last().map_or(1, |z| z.sectors_per_track);
            gaps.push((end, header - 1));
            out.push(filler(end, header - 1, spt));
        }
    }
    let note = (!gaps.is_empty()).then(|| {
        let list: Vec<String> = gaps.iter().map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}–{b}") }).collect();
        format!("cylinders in no DiskSim zone hold no LBNs: {}", list.join(", "))
    });
    Ok((out, note))
}

/// The controller and cache, as DiskSim 4.0 runs them (see the module docs' "DiskSim 4.0
/// compatibility"); `notes` gets a line for each parameter that DiskSim 4.0 reads but does not
/// apply.
fn controller_and_cache(d: &Block, notes: &mut Vec<String>) -> Result<(Controller, CacheSpec), SpecError> {
    let scale = d.num_or("Time scale for overheads", 1.0)?;
    let overhead = |key: &str| -> Result<f64, SpecError> { Ok(d.num_or(key, 0.0)? * scale) };
    // An "after write" variant kept only where it differs from the "after read" one.
    let after_write = |key: &str, after_read: f64| -> Result<Option<f64>, SpecError> {
        Ok(match d.get(key) {
            Some(p) => Some(d.num_of(p, &p.value)? * scale).filter(|v| *v != after_read),
            None => None,
        })
    };
    let flag = |key: &str, default: i64| -> Result<bool, SpecError> { Ok(d.int_or(key, 0, default)? > 0) };
    let enabled = flag("Enable caching in buffer", 0)?;
    let defaults = CacheSpec::default();
    let read_ahead = match d.int_or("Buffer continuous read", 0, 3)? {
        0 => ReadAhead::None,
        1 => ReadAhead::TrackEnd,
        2 => ReadAhead::CylinderEnd,
        3 => ReadAhead::Sectors,
        4 => ReadAhead::Dec,
        n => {
            let p = d.req("Buffer continuous read")?;
            return Err(d.err(p.line, format!("unknown `Buffer continuous read` {n} (0–4)")));
        }
    };
    let cache = CacheSpec {
        enabled,
        segments: u32_of(d, "Number of buffer segments", d.int_or("Number of buffer segments", 1, i64::from(defaults.segments))?)?,
        segment_sectors: u32_of(d, "Segment size (in blks)", d.int_or("Segment size (in blks)", 1, i64::from(defaults.segment_sectors))?)?,
        read_ahead_sectors: u32_of(d, "Maximum read-ahead (blks)", d.int_or("Maximum read-ahead (blks)", 0, 0)?)?,
        read_ahead,
        min_read_ahead_sectors: u32_of(d, "Minimum read-ahead (blks)", d.int_or("Minimum read-ahead (blks)", 0, 0)?)?,
        read_ahead_on_hit: flag("Read-ahead on idle hit", 0)?,
        // DiskSim 4.0's "Read any free blocks" takes no effect with DEC read-ahead ("Buffer
        // continuous read" = 4): on the Atlas 10K's real trace only the drive without it gives
        // DiskSim's published mean and demerit (docs/disksim-compat.md).
        read_any_free_blocks: flag("Read any free blocks", 0)? && read_ahead != ReadAhead::Dec,
        // DiskSim 4.0 reads "Immediate buffer read/write" but its media access never starts
        // before the wanted sector: zero latency stays off (the differential fixtures show it).
        zero_latency_reads: false,
        zero_latency_writes: false,
        read_hits_on_write_data: flag("Allow read hits on write data", 1)?,
        write_segments: u32_of(d, "Maximum number of write segments", d.int_or("Maximum number of write segments", 1, 1)?)?,
        separate_write_segment: flag("Use separate write segment", 0)?,
        combine_sequential_writes: flag("Combine seq writes", 0)?,
        // DiskSim 4.0's media process steps through a track's LBNs (docs/disksim-compat.md).
        skip_unmapped_sectors: true,
        keep_read_data: d.int_or("Read-ahead over requested", -1, 1)? != -1,
        write_stops_read_ahead: flag("Write hit stop prefetch", 0)?,
        stop_read_ahead_mid_sector: flag("Stop prefetch in sector", 1)?,
        read_watermark: d.num_or("High (read) water mark", 0.0)?,
        write_watermark: d.num_or("Low (write) water mark", 0.0)?,
        watermark_of_request: flag("Set watermark by reqsize", 1)?,
    };
    if flag("Read any free blocks", 0)? && read_ahead == ReadAhead::Dec {
        notes.push("`Read any free blocks` not applied: DiskSim 4.0 does not with `Buffer continuous read` = 4 (cache.read_any_free_blocks = true applies it)".to_string());
    }
    for key in ["Immediate buffer read", "Immediate buffer write"] {
        if flag(key, 0)? {
            notes.push(format!("`{key}` not applied, as in DiskSim 4.0 (cache.zero_latency_{} = true applies it)", if key.ends_with("read") { "reads" } else { "writes" }));
        }
    }
    let read_miss_ms = overhead("Read miss over. after read")?;
    let read_hit_ms = overhead("Read hit over. after read")?;
    let write_miss_ms = overhead("Write miss over. after read")?;
    let write_hit_ms = overhead("Write hit over. after read")?;
    let read_disconnect_ms = overhead("Read disconnect afterread")?;
    let extra_write_disconnect = if flag("Extra write disconnect", 0)? {
        Some(ExtraWriteDisconnect {
            command_ms: overhead("Extradisc command overhead")?,
            disconnect_ms: overhead("Extradisc disconnect overhead")?,
            inter_disconnect_ms: overhead("Extradisc inter-disconnect delay")?,
            second_disconnect_ms: overhead("Extradisc 2nd disconnect overhead")?,
            seek_delta_ms: overhead("Extradisc seek delta")?,
        })
    } else {
        None
    };
    let bus_sector_ms = bulk_sector_time(d, notes)?;
    let controller = Controller {
        read_miss_ms,
        read_hit_ms,
        write_miss_ms,
        write_hit_ms,
        bus_sector_ms,
        write_back: enabled && d.int_or("Fast write level", 0, 0)? > 0,
        read_miss_after_write_ms: after_write("Read miss over. after write", read_miss_ms)?,
        read_hit_after_write_ms: after_write("Read hit over. after write", read_hit_ms)?,
        write_miss_after_write_ms: after_write("Write miss over. after write", write_miss_ms)?,
        write_hit_after_write_ms: after_write("Write hit over. after write", write_hit_ms)?,
        bus_write_sector_ms: None,
        per_request_ms: overhead("Per-request overhead time")?,
        read_complete_ms: overhead("Read completion overhead")?,
        write_complete_ms: overhead("Write completion overhead")?,
        data_prep_ms: overhead("Data preparation overhead")?,
        reselect_ms: overhead("First reselect overhead")?,
        reselect_other_ms: overhead("Other reselect overhead")?,
        read_disconnect_ms,
        read_disconnect_after_write_ms: after_write("Read disconnect afterwrite", read_disconnect_ms)?,
        write_disconnect_ms: overhead("Write disconnect overhead")?,
        min_write_seek_ms: d.num_or("Minimum seek delay", 0.0)? * scale,
        hold_bus_read: flag("Hold bus entire read xfer", 0)?,
        hold_bus_write: flag("Hold bus entire write xfer", 0)?,
        extra_write_disconnect,
    };
    Ok((controller, cache))
}

/// `Bulk sector transfer time`, a negative one taken as 0 with a note naming its file and line
/// (the stated choice for the WD g4 model's −0.015 ms). Why 0: DiskSim charges a sector the
/// larger of this and the disk's bus block transfer time ([`apply_system_config`]), and a bus
/// time is never negative, so 0 is what a negative value comes to there (the g4 `.parv`'s buses
/// transfer in zero time); a time below 0 would have the interface hand data back before it
/// was asked for. A negative `controller.bus_sector_ms` in a TOML spec stays an error.
fn bulk_sector_time(d: &Block, notes: &mut Vec<String>) -> Result<f64, SpecError> {
    let v = d.num_or("Bulk sector transfer time", 0.0)?;
    if v >= 0.0 {
        return Ok(v);
    }
    let line = d.get("Bulk sector transfer time").map_or(d.line, |p| p.line);
    notes.push(format!("`Bulk sector transfer time` {v} ms ({}:{line}) is negative: taken as 0 (the interface is never the bottleneck), as DiskSim's larger-of-disk-and-bus rule gives on a bus of zero transfer time", file_name(&d.origin)));
    Ok(0.0)
}

/// Reads an extracted seek curve file (`.seek`, see [`import`]'s module docs): the read curve,
/// and the write curve when the file has a fourth column (Western Digital's dual seek files).
///
/// # Errors
/// [`SpecError::Io`] if the file cannot be read, [`SpecError::DiskSim`] naming the line and
/// column of a malformed point, a negative time or distances out of order.
pub fn read_seek_file(path: &Path) -> Result<(SeekModel, Option<SeekModel>), SpecError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SpecError::Io { origin: origin.clone(), message: e.to_string() })?;
    seek_models(&text, &origin)
}

/// The read and (if given) write curves of a `.seek` file's text.
fn seek_models(text: &str, origin: &str) -> Result<(SeekModel, Option<SeekModel>), SpecError> {
    let table = seek_table(text, origin)?;
    let write = table.write_ms.map(|w| SeekModel::Table { points: table.points.iter().zip(w).map(|(p, ms)| [p[0], ms]).collect() });
    Ok((SeekModel::Table { points: table.points }, write))
}

/// Per-sector transfer times of the bus a disk hangs on, from a DiskSim system configuration
/// (`.parv`): `(read, write)` ms per 512-byte block, from the `disksim_bus` block instantiated as
/// the bus directly above the first `disksim_disk` of the `topology`.
///
/// `Ok(None)` when the file has no topology with a disk, or that bus sets no transfer times.
///
/// # Errors
/// [`SpecError::Io`] if the file cannot be read, [`SpecError::DiskSim`] naming file and line when
/// the bus block is malformed or its instance is never instantiated.
pub fn bus_transfer_times(parv: &Path) -> Result<Option<(f64, f64)>, SpecError> {
    let origin = parv.display().to_string();
    let text = std::fs::read_to_string(parv).map_err(|e| SpecError::Io { origin: origin.clone(), message: e.to_string() })?;
    // Strip comments, keep line numbers.
    let clean: String = text.lines().map(|l| l.split('#').next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let tokens = tokenize(&clean);
    // topology: the innermost `disksim_bus NAME [` around the first `disksim_disk`.
    let Some(top) = tokens.iter().position(|t| t.1 == "topology") else { return Ok(None) };
    let mut stack: Vec<(&str, &str)> = Vec::new();
    let mut pending: Option<(&str, &str)> = None;
    let mut disk_bus: Option<String> = None;
    let mut i = top + 1;
    while i < tokens.len() {
        let t = tokens[i].1.as_str();
        match t {
            "[" => {
                stack.push(pending.take().unwrap_or(("", "")));
            }
            "]" => {
                stack.pop();
                if stack.is_empty() {
                    break;
                }
            }
            _ if t.starts_with("disksim_") && i + 1 < tokens.len() => {
                if t == "disksim_disk" {
                    disk_bus = stack.iter().rev().find(|(ty, _)| *ty == "disksim_bus").map(|(_, n)| n.to_string());
                    break;
                }
                pending = Some((t, tokens[i + 1].1.as_str()));
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    let Some(instance) = disk_bus else { return Ok(None) };
    // instantiate [ a, b ] as SPEC
    let mut spec_name: Option<String> = None;
    for (j, t) in tokens.iter().enumerate() {
        if t.1 != "instantiate" {
            continue;
        }
        let mut k = j + 1;
        let mut names = Vec::new();
        if tokens.get(k).is_some_and(|t| t.1 == "[") {
            k += 1;
            while k < tokens.len() && tokens[k].1 != "]" {
                if tokens[k].1 != "," {
                    names.push(tokens[k].1.as_str());
                }
                k += 1;
            }
            k += 1;
        }
        if tokens.get(k).is_some_and(|t| t.1 == "as") && names.contains(&instance.as_str()) {
            spec_name = tokens.get(k + 1).map(|t| t.1.clone());
        }
    }
    let spec_name = spec_name.unwrap_or(instance.clone());
    // disksim_bus SPEC { ... }
    let Some(b) = tokens.windows(3).position(|w| w[0].1 == "disksim_bus" && w[1].1 == spec_name && w[2].1 == "{") else {
        return Err(SpecError::DiskSim { origin, line: 0, message: format!("no `disksim_bus {spec_name} {{ ... }}` block for the disk's bus `{instance}`") });
    };
    let open = tokens[b + 2].0;
    let mut depth = 0usize;
    let mut close = open;
    for (pos, c) in clean.char_indices().skip_while(|(p, _)| *p < open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = pos;
                    break;
                }
            }
            _ => {}
        }
    }
    let start = tokens[b].0;
    let line0 = clean[..start].matches('\n').count();
    let snippet = format!("{}{}", "\n".repeat(line0), &clean[start..=close]);
    let blocks = parse_str(&snippet, &origin, parv.parent().unwrap_or(Path::new(".")))?;
    let Some(bus) = blocks.first() else { return Ok(None) };
    let read = bus.num_or("Read block transfer time", 0.0)?;
    let write = bus.num_or("Write block transfer time", 0.0)?;
    for (key, v) in [("Read block transfer time", read), ("Write block transfer time", write)] {
        if !(0.0..=crate::time::MAX_DURATION_MS).contains(&v) {
            let line = bus.get(key).map_or(bus.line, |p| p.line);
            return Err(bus.err(line, format!("`{key}` must be between 0 and {} ms, got {v}", crate::time::MAX_DURATION_MS)));
        }
    }
    Ok((read > 0.0 || write > 0.0).then_some((read, write)))
}

/// Applies a DiskSim system configuration (`.parv`) to a spec imported from the disk's own files:
/// the per-sector interface time becomes the larger of the disk's "Bulk sector transfer time" and
/// its bus's block transfer time, for reads and writes (DiskSim's `disk_get_blktranstime`).
///
/// # Errors
/// As [`bus_transfer_times`].
pub fn apply_system_config(spec: &mut DiskSpec, parv: &Path) -> Result<(), SpecError> {
    if let Some((read, write)) = bus_transfer_times(parv)? {
        let bulk = spec.controller.bus_sector_ms;
        spec.controller.bus_sector_ms = bulk.max(read);
        let w = bulk.max(write);
        spec.controller.bus_write_sector_ms = (w != spec.controller.bus_sector_ms).then_some(w);
        let _ = write!(spec.source, "; bus block transfer times {read} / {write} ms (read / write) from {}", file_name(&parv.display().to_string()));
    }
    Ok(())
}

/// Splits parameter text into `(byte offset, token)`: words, and the single characters
/// `[ ] { } , =`.
fn tokenize(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let special = matches!(c, '[' | ']' | '{' | '}' | ',' | '=');
        if c.is_whitespace() || special {
            if let Some(s) = cur.take() {
                out.push((s, text[s..i].to_string()));
            }
            if special {
                out.push((i, c.to_string()));
            }
        } else if cur.is_none() {
            cur = Some(i);
        }
    }
    if let Some(s) = cur {
        out.push((s, text[s..].to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_blocks_lists_and_words() {
        let text = "# comment\ndisksim_disk D {\n  Model = dm_disk M { A b (c) = 3, L = [ 1, 2.5 , x.seek ] },\n  S = extracted # trailing\n}\n";
        let blocks = parse_str(text, "t.diskspecs", Path::new(".")).unwrap();
        assert_eq!(blocks.len(), 1);
        let d = &blocks[0];
        assert_eq!(d.name.as_deref(), Some("D"));
        let Value::Block(m) = &d.get("model").unwrap().value else { panic!() };
        assert_eq!(m.type_name, "dm_disk");
        assert_eq!(m.get("a  B (c)").unwrap().value, Value::Int(3));
        assert_eq!(m.get("L").unwrap().value, Value::List(vec![Value::Int(1), Value::Float(2.5), Value::Word("x.seek".into())]));
        assert_eq!(d.get("S").unwrap().value, Value::Word("extracted".into()));
        assert_eq!(d.get("S").unwrap().line, 4);
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e = parse_str("b {\n  x = 1,\n  y 2,\n}\n", "f.model", Path::new(".")).unwrap_err();
        assert_eq!(e.to_string(), "f.model:3: expected `key = value`, found `y 2`");
        let e = parse_str("b {\n  x = 1\n  y = 2\n}\n", "f.model", Path::new(".")).unwrap_err();
        assert!(e.to_string().starts_with("f.model:3: expected `,` or `}` after the value of `x`"), "{e}");
        let e = parse_str("b {\n  x = [1, 2\n", "f.model", Path::new(".")).unwrap_err();
        assert!(e.to_string().starts_with("f.model:2: list of `x`"), "{e}");
    }

    #[test]
    fn seek_table_checks_its_count() {
        let t = seek_table("Seek distances measured: 2\n1, 1.0\n5,\t2.0\n", "s.seek").unwrap();
        assert_eq!(t, SeekTable { points: vec![[1.0, 1.0], [5.0, 2.0]], write_ms: None });
        let e = seek_table("Seek distances measured: 3\n1, 1.0\n5, 2.0\n", "s.seek").unwrap_err();
        assert_eq!(e.to_string(), "s.seek:1: announces 3 points but has 2");
        let e = seek_table("Seek distances measured: 2\n1, 1.0\n5 2.0\n", "s.seek").unwrap_err();
        assert!(e.to_string().starts_with("s.seek:3: expected `distance, ms`"), "{e}");
    }
}
