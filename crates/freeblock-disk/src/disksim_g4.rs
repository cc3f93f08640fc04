//! Import of diskmodel's `dm_layout_g4` layouts, as Western Digital's public DiskSim fork writes
//! them for banded drives (its 4 TB "g4" model, `G4_LBA_64bit_4T.layout`).
//!
//! A g4 layout is a tree. `TP` lists track patterns (`first sector, last sector, sectors per
//! track`); `IDX` lists index nodes, the last one the root; each node's entries place a run of
//! identical children (tracks or other nodes) at an LBN and a cylinder relative to the parent:
//!
//! ```text
//!  root (IDX 59)  zone 1: lbn 0, cyl 0, 18 × child IDX 0 (7,864,320 LBNs, 256 cylinders each)
//!   │             zone 2: lbn 141,557,760, cyl 4608, 18 × IDX 1 …
//!   └─ IDX 0      head 0: lbn 0,         cyl 0,   128 tracks up   (cylrunlen  128)
//!                 head 1: lbn 393,216,   cyl 127, 128 tracks down (cylrunlen −128)
//!                 …  head 9 down, then head 9 up from cyl 128, head 8 down, … head 0 down
//!                 each track: TP 0 = sectors 0..3071 of 3072
//! ```
//!
//! The fork's entries have 10 fields (children that are nodes) or 11 (tracks, with the head):
//!
//! | field | meaning | imported as |
//! |---|---|---|
//! | `lbn`, `cyl` | first LBN and cylinder of the entry, relative to the parent instance | checked to tile the parent: no overlap, no hole |
//! | `off` | angle of the entry's first LBN, fraction of a revolution | `first_sector_offset` (× sectors per track) |
//! | `len`, `cyllen` | LBNs and cylinders of one child instance | checked against the child |
//! | `alen` | angle added per child instance, revolutions | track entries: `track_skew`; root entries: `band_pair_skew` (× sectors per track) |
//! | `runlen`, `cylrunlen` | LBNs and cylinders of the whole run (negative: towards lower cylinders) | checked: `runlen = instances × len`, `|cylrunlen| = instances × cyllen` |
//! | `childtype`, `child` | `TRACK` and a `TP` index, or `IDX` and a node index | |
//! | `head` | surface (track entries only) | checked against the banded order |
//!
//! What is imported is the banded serpentine order of [`crate::bands`]: every root entry is a
//! zone of whole band pairs, whose node must list the `2·H` bands of one pair in that order with
//! one track pattern and one skew. Every structural fault is an error naming the file, the line
//! and the field: entries that overlap in LBNs or in (cylinder, head), LBNs a node declares
//! (`len` in its parent) that its entries leave unmapped, a run that is not a whole number of
//! instances, a track pattern that is not a whole track. Layouts outside that form (the fork's
//! Maxtor layout, with per-head sectors per track, single-track entries and slips) are refused
//! by name, not approximated. diskmodel's own 8-field entries (`docs/layout_g4.modspec`) are not
//! what the fork writes and are refused too.

use crate::bands::Bands;
use crate::disksim::Block;
use crate::error::SpecError;
use crate::spec::Zone;

/// One token of the layout text and its line.
#[derive(Debug, Clone)]
struct Token {
    text: String,
    line: usize,
}

/// One index entry as the file gives it.
#[derive(Debug, Clone)]
struct Entry {
    line: usize,
    lbn: i64,
    cyl: i64,
    off: f64,
    len: i64,
    cyllen: i64,
    alen: f64,
    runlen: i64,
    cylrunlen: i64,
    child_is_track: bool,
    child: usize,
    head: Option<u32>,
}

impl Entry {
    fn instances(&self) -> i64 {
        self.runlen / self.len
    }

    /// The lowest cylinder the entry covers, relative to its parent.
    fn low_cylinder(&self) -> i64 {
        if self.cylrunlen < 0 { self.cyl + self.cylrunlen + 1 } else { self.cyl }
    }
}

/// The banded zones a g4 layout describes.
#[derive(Debug, Clone)]
pub struct G4Layout {
    /// Cylinders per band.
    pub band_cylinders: u32,
    /// Zones, one per root entry, in cylinder order.
    pub zones: Vec<Zone>,
    /// LBNs the root maps.
    pub mapped_lbns: u64,
    /// Cylinders the root covers.
    pub mapped_cylinders: u32,
}

/// Reads the `dm_layout_g4` block `layout` on a drive of `surfaces` surfaces.
///
/// # Errors
/// [`SpecError::DiskSim`] naming the file, line and field of the first fault.
pub fn import_layout(layout: &Block, surfaces: u32) -> Result<G4Layout, SpecError> {
    for key in ["Slips", "Remaps"] {
        if let Some(p) = layout.get(key) {
            if !matches!(&p.value, crate::disksim::Value::List(v) if v.is_empty()) {
                return Err(err(&layout.origin, p.line, format!("`{key}`: non-empty slip and remap lists are not supported by the g4 import (only defect-free banded layouts are)")));
            }
        }
    }
    let text = std::fs::read_to_string(&layout.origin).map_err(|e| SpecError::Io { origin: layout.origin.clone(), message: e.to_string() })?;
    let tokens = tokenize(&text, layout.line);
    let origin = layout.origin.as_str();
    let patterns = track_patterns(origin, &tokens)?;
    let nodes = index_nodes(origin, &tokens)?;
    let Some(root) = nodes.last() else {
        return Err(err(origin, layout.line, "`IDX` has no nodes (the last one is the root)".into()));
    };
    check_tiling(origin, &nodes, &patterns)?;
    build_zones(origin, &nodes, root, &patterns, surfaces)
}

fn err(origin: &str, line: usize, message: String) -> SpecError {
    SpecError::DiskSim { origin: origin.to_string(), line, message }
}

/// Splits the text from line `from_line` on into tokens (`#` comments dropped; `[ ] { } , =`
/// single tokens), stopping at the block's closing brace.
fn tokenize(text: &str, from_line: usize) -> Vec<Token> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    for (i, raw) in text.lines().enumerate().skip(from_line.saturating_sub(1)) {
        let line = i + 1;
        let code = raw.split('#').next().unwrap_or("");
        let mut word = String::new();
        for c in code.chars() {
            let special = matches!(c, '[' | ']' | '{' | '}' | ',' | '=');
            if c.is_whitespace() || special {
                if !word.is_empty() {
                    out.push(Token { text: std::mem::take(&mut word), line });
                }
                if special {
                    out.push(Token { text: c.to_string(), line });
                    if c == '{' {
                        depth += 1;
                    } else if c == '}' {
                        depth -= 1;
                        if depth == 0 {
                            return out;
                        }
                    }
                }
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            out.push(Token { text: word, line });
        }
    }
    out
}

/// The tokens of `KEY = [ ... ]`'s list (brackets included), or an error naming the block.
fn list_after<'a>(origin: &str, tokens: &'a [Token], key: &str) -> Result<&'a [Token], SpecError> {
    let at = tokens.windows(3).position(|w| w[0].text.eq_ignore_ascii_case(key) && w[1].text == "=" && w[2].text == "[");
    let Some(at) = at else {
        return Err(err(origin, tokens.first().map_or(0, |t| t.line), format!("`dm_layout_g4` block has no `{key} = [ ... ]`")));
    };
    let start = at + 2;
    let mut depth = 0;
    for (i, t) in tokens[start..].iter().enumerate() {
        match t.text.as_str() {
            "[" => depth += 1,
            "]" => {
                depth -= 1;
                if depth == 0 {
                    return Ok(&tokens[start..=start + i]);
                }
            }
            _ => {}
        }
    }
    Err(err(origin, tokens[start].line, format!("`{key}` list is never closed")))
}

/// The values of a flat list's tokens (commas dropped).
fn values(list: &[Token]) -> Vec<&Token> {
    list.iter().filter(|t| !matches!(t.text.as_str(), "[" | "]" | ",")).collect()
}

fn int_of(origin: &str, t: &Token, field: &str) -> Result<i64, SpecError> {
    t.text.parse::<i64>().map_err(|_| err(origin, t.line, format!("`{field}` must be an integer, found `{}`", t.text)))
}

fn num_of(origin: &str, t: &Token, field: &str) -> Result<f64, SpecError> {
    t.text.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| err(origin, t.line, format!("`{field}` must be a number, found `{}`", t.text)))
}

/// `TP`: sectors per track of each pattern, each a whole track (`0, spt−1, spt`).
fn track_patterns(origin: &str, tokens: &[Token]) -> Result<Vec<u32>, SpecError> {
    let vals = values(list_after(origin, tokens, "TP")?);
    if !vals.len().is_multiple_of(3) {
        let line = vals.last().map_or(0, |t| t.line);
        return Err(err(origin, line, format!("`TP` needs triples `first sector, last sector, sectors per track`: {} values", vals.len())));
    }
    vals.chunks(3)
        .enumerate()
        .map(|(i, c)| {
            let (s0, sn, spt) = (int_of(origin, c[0], "TP s0")?, int_of(origin, c[1], "TP sn")?, int_of(origin, c[2], "TP spt")?);
            let spt32 = u32::try_from(spt).ok().filter(|s| (1..=crate::spec::MAX_SECTORS_PER_TRACK).contains(s));
            match spt32 {
                Some(s) if s0 == 0 && sn == spt - 1 => Ok(s),
                Some(_) => Err(err(origin, c[0].line, format!("`TP` pattern {i}: sectors {s0}..{sn} of {spt} is not a whole track (only whole-track patterns are supported)"))),
                None => Err(err(origin, c[2].line, format!("`TP` pattern {i}: sectors per track {spt} must be between 1 and {}", crate::spec::MAX_SECTORS_PER_TRACK))),
            }
        })
        .collect()
}

/// `IDX`: the index nodes, each a list of entries.
fn index_nodes(origin: &str, tokens: &[Token]) -> Result<Vec<Vec<Entry>>, SpecError> {
    let list = list_after(origin, tokens, "IDX")?;
    let mut nodes = Vec::new();
    let mut i = 1; // past the outer '['
    while i < list.len() - 1 {
        match list[i].text.as_str() {
            "," => i += 1,
            "[" => {
                let end = i + list[i..].iter().position(|t| t.text == "]").unwrap_or(list.len() - 1 - i);
                nodes.push(entries(origin, nodes.len(), &values(&list[i..=end]))?);
                i = end + 1;
            }
            other => return Err(err(origin, list[i].line, format!("`IDX` must be a list of node lists `[ ... ]`, found `{other}`"))),
        }
    }
    Ok(nodes)
}

fn entries(origin: &str, node: usize, vals: &[&Token]) -> Result<Vec<Entry>, SpecError> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < vals.len() {
        let field = |j: usize, name: &str| -> Result<&Token, SpecError> {
            vals.get(k + j).copied().ok_or_else(|| err(origin, vals[vals.len() - 1].line, format!("IDX node {node}: entry {} ends before its `{name}` field", out.len())))
        };
        let f = |j: usize, name: &'static str| -> Result<i64, SpecError> { int_of(origin, field(j, name)?, name) };
        let kind = field(8, "childtype")?;
        let child_is_track = match kind.text.as_str() {
            "TRACK" => true,
            "IDX" => false,
            other => {
                return Err(err(
                    origin,
                    kind.line,
                    format!("IDX node {node}: entry {}: field 9 `childtype` must be TRACK or IDX, found `{other}` (entries have the fork's 10 or 11 fields: lbn, cyl, off, len, cyllen, alen, runlen, cylrunlen, childtype, child[, head])", out.len()),
                ))
            }
        };
        let entry = Entry {
            line: field(0, "lbn")?.line,
            lbn: f(0, "lbn")?,
            cyl: f(1, "cyl")?,
            off: num_of(origin, field(2, "off")?, "off")?,
            len: f(3, "len")?,
            cyllen: f(4, "cyllen")?,
            alen: num_of(origin, field(5, "alen")?, "alen")?,
            runlen: f(6, "runlen")?,
            cylrunlen: f(7, "cylrunlen")?,
            child_is_track,
            child: usize::try_from(f(9, "child")?).map_err(|_| err(origin, field(9, "child").map_or(0, |t| t.line), "`child` must not be negative".into()))?,
            head: if child_is_track {
                Some(u32::try_from(f(10, "head")?).map_err(|_| err(origin, field(10, "head").map_or(0, |t| t.line), "`head` must not be negative".into()))?)
            } else {
                None
            },
        };
        let bad = |field: &str, message: String| Err(err(origin, entry.line, format!("IDX node {node}, entry {}: `{field}` {message}", out.len())));
        if entry.lbn < 0 {
            return bad("lbn", format!("{} is negative", entry.lbn));
        }
        if entry.cyl < 0 {
            return bad("cyl", format!("{} is negative", entry.cyl));
        }
        if entry.len < 1 || entry.cyllen < 1 {
            return bad("len", format!("and `cyllen` must be at least 1, got {} and {}", entry.len, entry.cyllen));
        }
        if entry.runlen < entry.len || entry.runlen % entry.len != 0 {
            return bad("runlen", format!("{} is not a whole number of instances of `len` {}", entry.runlen, entry.len));
        }
        if entry.cylrunlen.abs() != entry.instances() * entry.cyllen {
            return bad("cylrunlen", format!("{} does not match {} instances of `cyllen` {}", entry.cylrunlen, entry.instances(), entry.cyllen));
        }
        if entry.low_cylinder() < 0 {
            return bad("cylrunlen", format!("{} from cylinder {} runs below cylinder 0", entry.cylrunlen, entry.cyl));
        }
        if !(0.0..1.0).contains(&entry.off) || !(0.0..1.0).contains(&entry.alen) {
            return bad("off", format!("and `alen` must be fractions of a revolution in 0..1, got {} and {}", entry.off, entry.alen));
        }
        k += if child_is_track { 11 } else { 10 };
        out.push(entry);
    }
    Ok(out)
}

/// Every node's entries tile the LBNs and cylinders its parents declare for it: sorted by LBN,
/// each starts where the previous ends (an earlier start overlaps, a later one leaves LBNs
/// unmapped), the last ends at the `len` the parent gives, and no two cover the same cylinder
/// of the same head.
fn check_tiling(origin: &str, nodes: &[Vec<Entry>], patterns: &[u32]) -> Result<(), SpecError> {
    let root = nodes.len() - 1;
    // The `len` and `cyllen` each node's parents declare for one instance of it.
    let mut declared: Vec<Option<(i64, i64, usize)>> = vec![None; nodes.len()];
    for (n, node) in nodes.iter().enumerate() {
        for e in node {
            if e.child_is_track {
                let Some(&spt) = patterns.get(e.child) else {
                    return Err(err(origin, e.line, format!("IDX node {n}: `child` {} names no `TP` pattern (there are {})", e.child, patterns.len())));
                };
                if e.len != i64::from(spt) || e.cyllen != 1 {
                    return Err(err(origin, e.line, format!("IDX node {n}: `len` {} and `cyllen` {} of a TRACK child must be the pattern's {spt} sectors and 1 cylinder", e.len, e.cyllen)));
                }
            } else {
                if e.child >= root || e.child == n {
                    return Err(err(origin, e.line, format!("IDX node {n}: `child` {} must name another node before the root (nodes 0..{root})", e.child)));
                }
                match declared[e.child] {
                    Some((len, cyllen, line)) if (len, cyllen) != (e.len, e.cyllen) => {
                        return Err(err(origin, e.line, format!("IDX node {n}: `len` {} / `cyllen` {} of node {} differ from the {len} / {cyllen} declared at line {line}", e.len, e.cyllen, e.child)));
                    }
                    _ => declared[e.child] = Some((e.len, e.cyllen, e.line)),
                }
            }
        }
    }
    for (n, node) in nodes.iter().enumerate() {
        let mut sorted: Vec<&Entry> = node.iter().collect();
        sorted.sort_by_key(|e| e.lbn);
        let mut end = 0i64;
        for e in &sorted {
            if e.lbn < end {
                return Err(err(origin, e.line, format!("IDX node {n}: `lbn` {} overlaps the entry before it, which maps LBNs up to {} (bands overlap)", e.lbn, end - 1)));
            }
            if e.lbn > end {
                return Err(err(origin, e.line, format!("IDX node {n}: `lbn` {} leaves LBNs {end}..{} unmapped", e.lbn, e.lbn - 1)));
            }
            end = e.lbn + e.runlen;
        }
        if let Some((len, cyllen, line)) = declared[n] {
            if end != len {
                let last = sorted.last().map_or(line, |e| e.line);
                let what = if end < len { format!("leave LBNs {end}..{} of the {len} it declares unmapped", len - 1) } else { format!("map {end} LBNs, more than the {len} it declares") };
                return Err(err(origin, last, format!("IDX node {n}: its entries {what} (`len` at line {line})")));
            }
            for e in node {
                if e.low_cylinder() + e.cylrunlen.abs() > cyllen {
                    return Err(err(origin, e.line, format!("IDX node {n}: `cylrunlen` {} from cylinder {} leaves the {cyllen} cylinders the node declares (`cyllen` at line {line})", e.cylrunlen, e.cyl)));
                }
            }
        }
        // Physical overlap: the same cylinder of the same head twice (head None = all heads).
        let mut spans: Vec<(i64, i64, Option<u32>, usize)> = node.iter().map(|e| (e.low_cylinder(), e.low_cylinder() + e.cylrunlen.abs(), e.head, e.line)).collect();
        spans.sort_unstable();
        for (i, a) in spans.iter().enumerate() {
            for b in &spans[i + 1..] {
                if b.0 >= a.1 {
                    break;
                }
                if a.2.is_none() || b.2.is_none() || a.2 == b.2 {
                    let (first, second) = if a.3 < b.3 { (a, b) } else { (b, a) };
                    return Err(err(
                        origin,
                        second.3,
                        format!("IDX node {n}: cylinders {}..{} overlap cylinders {}..{} of the entry at line {}{} (bands overlap)", second.0, second.1 - 1, first.0, first.1 - 1, first.3, second.2.map_or(String::new(), |h| format!(" on head {h}"))),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The zones of the root's entries, each checked to be the banded order of [`crate::bands`].
fn build_zones(origin: &str, nodes: &[Vec<Entry>], root: &[Entry], patterns: &[u32], surfaces: u32) -> Result<G4Layout, SpecError> {
    let mut zones = Vec::with_capacity(root.len());
    let mut band = None::<u32>;
    let mut next_cylinder = 0i64;
    let mut sorted: Vec<&Entry> = root.iter().collect();
    sorted.sort_by_key(|e| e.lbn);
    for r in sorted {
        if r.child_is_track || r.cylrunlen < 0 {
            return Err(err(origin, r.line, "root entries must place index nodes (`childtype` IDX) towards higher cylinders (the g4 import reads banded zones)".into()));
        }
        if r.cyl != next_cylinder {
            return Err(err(origin, r.line, format!("root: `cyl` {} does not follow the previous zone's last cylinder {} (cylinder gaps between zones are not supported)", r.cyl, next_cylinder - 1)));
        }
        let node = &nodes[r.child];
        let first = &node[0];
        let b = u32::try_from(first.cylrunlen.abs()).unwrap_or(0);
        let b = *band.get_or_insert(b);
        let bands = Bands { band: b, surfaces };
        let spt = patterns.get(first.child).copied().filter(|_| first.child_is_track).unwrap_or(0);
        let not_banded = |e: &Entry, what: String| {
            err(origin, e.line, format!("IDX node {}: {what}; the g4 import reads banded serpentine layouts only (bands of {b} cylinders on {surfaces} heads, one track pattern and one skew a node)", r.child))
        };
        if r.cyllen != 2 * i64::from(b) || node.len() != 2 * surfaces as usize {
            return Err(not_banded(first, format!("{} entries over {} cylinders, where a band pair has {} entries over {} cylinders", node.len(), r.cyllen, 2 * surfaces, 2 * b)));
        }
        let mut in_order: Vec<&Entry> = node.iter().collect();
        in_order.sort_by_key(|e| e.lbn);
        for (k, e) in in_order.iter().enumerate() {
            // The k-th band-long run of the pair starts at track k·B of the banded order.
            let (cyl, head) = bands.track_at(k as u64 * u64::from(b));
            let (last_cyl, _) = bands.track_at(k as u64 * u64::from(b) + u64::from(b) - 1);
            let step = if last_cyl >= cyl { i64::from(b) } else { -i64::from(b) };
            if !e.child_is_track || e.child != first.child || e.head != Some(head) || e.cyl != i64::from(cyl) || e.cylrunlen != step {
                return Err(not_banded(e, format!("entry {k} is head {:?} from cylinder {} over {}, where the banded order has head {head} from cylinder {cyl} over {step} with TP {}", e.head, e.cyl, e.cylrunlen, first.child)));
            }
            if e.off != first.off || e.alen != first.alen {
                return Err(not_banded(e, format!("entry {k} has skew `off` {} / `alen` {}, where the node's first has {} / {}", e.off, e.alen, first.off, first.alen)));
            }
        }
        let s = f64::from(spt);
        let cylinders = u32::try_from(r.cylrunlen).ok().filter(|_| r.cyl + r.cylrunlen <= i64::from(crate::spec::MAX_CYLINDERS));
        let Some(cylinders) = cylinders else {
            return Err(err(origin, r.line, format!("root: `cylrunlen` {} from cylinder {} is beyond the {} cylinders supported", r.cylrunlen, r.cyl, crate::spec::MAX_CYLINDERS)));
        };
        zones.push(Zone {
            first_cylinder: r.cyl as u32,
            last_cylinder: r.cyl as u32 + cylinders - 1,
            sectors_per_track: spt,
            // Sector 0 of a track holds its first LBN (whole-track patterns), so the LBN's angle
            // is sector 0's: `off` of the root and of the band entry, in sectors.
            first_sector_offset: ((r.off + first.off) % 1.0) * s,
            empty_front_sectors: 0,
            track_skew: first.alen * s,
            cylinder_skew: 0.0,
            band_pair_skew: r.alen * s,
            spares: 0,
            slips: vec![],
            defects: vec![],
        });
        next_cylinder = r.cyl + r.cylrunlen;
    }
    let mapped_lbns = root.iter().map(|e| e.runlen).sum::<i64>();
    Ok(G4Layout {
        band_cylinders: band.unwrap_or(1),
        zones,
        mapped_lbns: u64::try_from(mapped_lbns).unwrap_or(0),
        mapped_cylinders: u32::try_from(next_cylinder).unwrap_or(0),
    })
}
