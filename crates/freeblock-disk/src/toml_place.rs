//! Where in a TOML file a parse error is: the line and the dotted key, not only the table.
//!
//! The `toml` crate places syntax errors exactly, but a value that a tagged table refuses (a
//! workload's `count = -10`, a scheduler's `type = "elevator"`) is reported at the table's
//! header: serde reads a tagged table whole before it knows which variant it is, and the spans of
//! its keys are gone by then. This module finds the key again from the file's text:
//!
//! ```text
//!  line 15  [workload]            ◄── the toml crate's span: the table header
//!  line 16  type = "random"
//!  line 17  count = -10           ◄── "invalid value: integer `-10`": the one line of the table
//!                                     whose value is `-10`: line 17, key `workload.count`
//! ```
//!
//! | message names | found by |
//! |---|---|
//! | ``unknown field `k` `` | the table's line whose key is `k` |
//! | ``missing field `k` `` | the header's line; the key is the table's `k` |
//! | a value in backticks or quotes | the table's one line whose value holds that value |
//! | anything else, or more than one candidate line | the header's line and the table's name |
//!
//! It never guesses: a value found on two lines of the table leaves the table's header as the
//! place.

/// A parse error's place and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlPlace {
    /// 1-based line, when the error has a place.
    pub line: Option<u64>,
    /// 1-based column, when the parser's own place is kept (not a table header's).
    pub column: Option<u64>,
    /// Dotted key (`workload.count`), or the table (`workload`) when no key could be told.
    pub key: Option<String>,
    /// The parser's message, without its own rendering of the place.
    pub message: String,
}

impl TomlPlace {
    /// `line 17, workload.count: invalid value …` (as much of it as is known).
    #[must_use]
    pub fn describe(&self) -> String {
        let mut place = Vec::new();
        if let Some(line) = self.line {
            place.push(format!("line {line}"));
        }
        if let Some(column) = self.column {
            place.push(format!("column {column}"));
        }
        if let Some(key) = &self.key {
            place.push(format!("`{key}`"));
        }
        if place.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", place.join(", "), self.message)
        }
    }
}

/// The place of `err`, an error from parsing `text`.
#[must_use]
pub fn locate(text: &str, err: &toml::de::Error) -> TomlPlace {
    let message = err.message().trim().to_string();
    let Some(span) = err.span() else {
        return TomlPlace { line: None, column: None, key: None, message };
    };
    let lines: Vec<&str> = text.lines().collect();
    let at = text[..span.start.min(text.len())].matches('\n').count();
    let Some(line) = lines.get(at) else {
        return TomlPlace { line: Some(at as u64 + 1), column: None, key: None, message };
    };
    let Some(table) = header_name(line) else {
        // A precise span: the key on that line, under the table above it.
        let key = key_of(line).map(|k| dotted(table_above(&lines, at).as_deref(), &k));
        let line_start = text[..span.start.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
        let column = text[line_start..span.start.min(text.len())].chars().count() as u64 + 1;
        return TomlPlace { line: Some(at as u64 + 1), column: Some(column), key, message };
    };
    let body_end = (at + 1..lines.len()).find(|&i| header_name(lines[i]).is_some()).unwrap_or(lines.len());
    let body = (at + 1..body_end).filter(|&i| key_of(lines[i]).is_some());
    let matching: Vec<usize> = if let Some(k) = quoted_after(&message, "unknown field `") {
        body.filter(|&i| key_of(lines[i]).as_deref() == Some(k.as_str())).collect()
    } else if let Some(k) = quoted_after(&message, "missing field `") {
        return TomlPlace { line: Some(at as u64 + 1), column: None, key: Some(dotted(Some(&table), &k)), message };
    } else if let Some(value) = offending_value(&message) {
        body.filter(|&i| value_of(lines[i]).is_some_and(|v| holds(v, &value))).collect()
    } else {
        Vec::new()
    };
    match matching.as_slice() {
        [i] => TomlPlace { line: Some(*i as u64 + 1), column: None, key: key_of(lines[*i]).map(|k| dotted(Some(&table), &k)), message },
        _ => TomlPlace { line: Some(at as u64 + 1), column: None, key: Some(table), message },
    }
}

/// `workload` for `[workload]`, `freeblock.tasks` for `[[freeblock.tasks]]`.
fn header_name(line: &str) -> Option<String> {
    let t = line.split('#').next().unwrap_or("").trim();
    let inner = t.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")).or_else(|| t.strip_prefix('[').and_then(|r| r.strip_suffix(']')))?;
    Some(inner.split('.').map(|p| p.trim().trim_matches('"')).collect::<Vec<_>>().join("."))
}

/// The table a line belongs to: the nearest header above it.
fn table_above(lines: &[&str], at: usize) -> Option<String> {
    lines[..at].iter().rev().find_map(|l| header_name(l))
}

/// The key of a `key = value` line (dotted keys as written, quotes dropped).
fn key_of(line: &str) -> Option<String> {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with('[') {
        return None;
    }
    let (key, _) = t.split_once('=')?;
    let key = key.trim();
    (!key.is_empty()).then(|| key.split('.').map(|p| p.trim().trim_matches('"').trim_matches('\'')).collect::<Vec<_>>().join("."))
}

/// The value of a `key = value` line, its comment dropped.
fn value_of(line: &str) -> Option<&str> {
    key_of(line)?;
    let (_, value) = line.split_once('=')?;
    Some(value.split(" #").next().unwrap_or(value).trim())
}

fn dotted(table: Option<&str>, key: &str) -> String {
    match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    }
}

/// The text after `prefix` up to the next backtick.
fn quoted_after(message: &str, prefix: &str) -> Option<String> {
    let rest = &message[message.find(prefix)? + prefix.len()..];
    Some(rest[..rest.find('`')?].to_string())
}

/// The value a message quotes: the first `…` or "…".
fn offending_value(message: &str) -> Option<String> {
    let backtick = message.find('`').and_then(|s| message[s + 1..].find('`').map(|e| message[s + 1..s + 1 + e].to_string()));
    let quote = message.find('"').and_then(|s| message[s + 1..].find('"').map(|e| message[s + 1..s + 1 + e].to_string()));
    backtick.or(quote).filter(|v| !v.is_empty())
}

/// Whether a written value holds `value` as a whole token (a number, a bare word or a string's
/// contents), not as part of a longer one.
fn holds(written: &str, value: &str) -> bool {
    let token = |c: char| c.is_alphanumeric() || matches!(c, '.' | '-' | '+' | '_');
    written.match_indices(value).any(|(i, _)| {
        let before = written[..i].chars().next_back();
        let after = written[i + value.len()..].chars().next();
        !before.is_some_and(token) && !after.is_some_and(token)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct File {
        workload: Workload,
        #[serde(default)]
        sim: Option<Sim>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
    #[allow(dead_code)]
    enum Workload {
        Random { count: u64, read_fraction: Option<f64> },
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sim {
        mpl: u32,
    }

    fn place(text: &str) -> TomlPlace {
        locate(text, &toml::from_str::<File>(text).unwrap_err())
    }

    #[test]
    fn a_bad_value_in_a_tagged_table_names_its_key_and_line() {
        let p = place("[workload]\ntype = \"random\"\nread_fraction = 0.5\ncount = -10\n");
        assert_eq!((p.line, p.key.as_deref()), (Some(4), Some("workload.count")), "{p:?}");
        assert!(p.describe().starts_with("line 4, `workload.count`: invalid value"), "{}", p.describe());
    }

    #[test]
    fn an_unknown_key_in_a_tagged_table_names_its_line() {
        let p = place("[workload]\ntype = \"random\"\ncount = 5\ncolour = 3 # a comment\n");
        assert_eq!((p.line, p.key.as_deref()), (Some(4), Some("workload.colour")), "{p:?}");
    }

    #[test]
    fn a_missing_key_names_the_table_header_and_the_key() {
        let p = place("[sim]\nmpl = 2\n[workload]\ntype = \"random\"\n");
        assert_eq!((p.line, p.key.as_deref()), (Some(3), Some("workload.count")), "{p:?}");
    }

    #[test]
    fn a_value_on_two_lines_is_not_guessed() {
        let p = place("[workload]\ntype = \"random\"\nread_fraction = -10\ncount = -10\n");
        assert_eq!((p.line, p.key.as_deref()), (Some(1), Some("workload")), "{p:?}");
    }

    #[test]
    fn a_precise_error_keeps_its_line_and_gains_its_key() {
        let p = place("[workload]\ntype = \"random\"\ncount = 5\n[sim]\nmpl = -1\n");
        assert_eq!((p.line, p.key.as_deref()), (Some(5), Some("sim.mpl")), "{p:?}");
        assert_eq!(p.column, Some(7), "{p:?}");
        assert!(p.describe().starts_with("line 5, column 7, `sim.mpl`: "), "{}", p.describe());
    }

    #[test]
    fn a_value_is_matched_as_a_whole_token() {
        assert!(holds("-10", "-10"));
        assert!(!holds("-100", "-10"));
        assert!(holds("{ type = \"fixed\", sectors = -8 }", "-8"));
        assert!(holds("\"elevator\"", "elevator"));
        assert!(!holds("\"elevators\"", "elevator"));
    }
}
