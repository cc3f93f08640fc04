//! Plain-text tables for terminal output.

/// A table with a header row; columns are right-aligned except the first.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Self { header: header.into_iter().map(Into::into).collect(), rows: Vec::new() }
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    pub fn render(&self) -> String {
        let cols = self.header.len();
        let mut width = vec![0usize; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(cols) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let line = |r: &Vec<String>| {
            let mut s = String::new();
            for (i, w) in width.iter().enumerate() {
                let c = r.get(i).map_or("", String::as_str);
                let pad = w - c.chars().count();
                if i == 0 {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str("  ");
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
            }
            s.trim_end().to_string()
        };
        let mut out = line(&self.header);
        out.push('\n');
        out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (cols - 1)));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

/// Formats a fraction as a percentage with one decimal. For shares (a part of a whole): never
/// signed. A change is [`signed_pct`].
pub fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// Formats a relative change (a fraction: 0.05 is +5%) as a signed percentage with `decimals`
/// decimals. A change that rounds to nothing at that precision prints unsigned ("0.0%"), never
/// "-0.0%" or "+0.0%": it is neither a gain nor a loss.
pub fn signed_pct(change: f64, decimals: usize) -> String {
    let text = format!("{:+.*}%", decimals, 100.0 * change);
    if text[1..].chars().all(|c| c == '0' || c == '.' || c == '%') {
        text[1..].to_string()
    } else {
        text
    }
}

/// Formats a number with `decimals` decimals, and no sign when it rounds to zero ("0", never
/// "-0"): a value that may be negative, printed where a sign on nothing would mislead.
pub fn plain(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// Formats `value` for comparison with `bound`: with `decimals` decimals, or as many more (up to
/// six) as it takes to tell it from the bound, so a verdict computed on the value never sits
/// beside a printed value equal to the bound ("0.50 (< 0.5)" prints as "0.4996 (< 0.5)").
pub fn against_bound(value: f64, bound: f64, decimals: usize) -> String {
    let at = |d: usize, x: f64| format!("{x:.d$}");
    (decimals..=6.max(decimals)).map(|d| (at(d, value), at(d, bound))).find(|(v, b)| v != b).map_or_else(|| at(decimals, value), |(v, _)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_that_rounds_to_nothing_has_no_sign() {
        assert_eq!(signed_pct(-0.000_04, 1), "0.0%");
        assert_eq!(signed_pct(0.000_04, 1), "0.0%");
        assert_eq!(signed_pct(-0.0, 0), "0%");
        assert_eq!(signed_pct(-0.004, 0), "0%");
        assert_eq!(signed_pct(-0.006, 0), "-1%");
        assert_eq!(signed_pct(0.0123, 2), "+1.23%");
        assert_eq!(signed_pct(-0.25, 1), "-25.0%");
    }

    #[test]
    fn a_plain_number_never_prints_minus_zero() {
        assert_eq!(plain(-0.3, 0), "0");
        assert_eq!(plain(-0.04, 1), "0.0");
        assert_eq!(plain(-0.6, 0), "-1");
        assert_eq!(plain(12.345, 1), "12.3");
    }

    #[test]
    fn a_share_is_printed_unsigned() {
        assert_eq!(pct(0.996), "99.6%");
        assert_eq!(pct(0.0), "0.0%");
    }

    #[test]
    fn a_value_beside_its_bound_shows_which_side_it_is_on() {
        assert_eq!(against_bound(0.4996, 0.5, 2), "0.4996");
        assert_eq!(against_bound(0.5004, 0.5, 2), "0.5004");
        assert_eq!(against_bound(0.43, 0.5, 2), "0.43");
        // Equal to the bound: as many decimals as asked.
        assert_eq!(against_bound(0.5, 0.5, 2), "0.50");
    }
}
