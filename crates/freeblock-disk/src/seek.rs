//! Seek curves: time to move the arm a given number of cylinders.
//!
//! Every [`SeekModel`] is evaluated once, at build time, into a table with one entry per possible
//! distance, so a seek costs one array load on the hot path.
//!
//! # Direction
//!
//! The table is the same both ways, as in DiskSim. Some drives seek faster one way: on the HP
//! C2247A's validation trace its inward seeks (towards higher cylinders) are slower than its
//! outward ones at every distance. [`SeekCurve::with_asymmetry`] adds a constant to seeks one way
//! and takes it from the other, so the table stays their average:
//!
//! ```text
//!   seek time            inward  = curve(d) + a
//!      │      ____----   curve(d)           (the table)
//!      │ __---  ____---  outward = curve(d) − a
//!      │/__---
//!      └──────────────── distance d
//! ```
//!
//! # Read and write curves
//!
//! A drive settles longer before it writes than before it reads (an off-track write destroys a
//! neighbour's data, an off-track read is only retried), so its write seeks are slower. A spec
//! may give writes a curve of their own ([`DiskSpec::write_seek`](crate::DiskSpec::write_seek));
//! Western Digital's DiskSim fork measures both, a fourth column of its "dual seek" files:
//!
//! | seek curve | used by | Maxtor Atlas 10K V dual file, 1 / 1,000 / 80,000 cylinders |
//! |---|---|---|
//! | `seek` (read) | reads, and every seek when there is no write curve | 0.5257 / 1.9315 / 9.5697 ms |
//! | `write_seek` | writes | 0.6757 / 2.0815 / 9.7197 ms (read + 0.15) |
//!
//! [`SeekCurve::between`] and [`SeekCurve::time`] are the read curve, [`SeekCurve::between_for`]
//! picks by operation, and [`SeekCurve::shortest`] / [`SeekCurve::max`] bound both.
//!
//! # The average seek
//!
//! "Average seek time" here, as in drive datasheets, is the mean over uniformly random pairs of
//! *distinct* cylinders (source ≠ destination). On `n` cylinders a distance `d ≥ 1` occurs in
//! `2(n − d)` of the `n(n − 1)` ordered pairs, so the average weighs distance `d` by `n − d`
//! ([`SeekCurve::average`]).
//!
//! # The three-point curve
//!
//! [`SeekModel::ThreePoint`] is given the single-cylinder, average and full-stroke times. The
//! curve is `single + b·√(d−1) + c·(d−1)` (square root for the arm's acceleration, linear for its
//! coast), with `b` and `c` solving the two conditions "full stroke = `full_ms`" and "average =
//! `average_ms`". It is used when `b, c ≥ 0`, so that it rises everywhere: when the average lies
//! between about 1/3 (a straight line) and 8/15 (a pure square root) of the way from `single_ms`
//! to `full_ms`, as on real drives. Outside that band the solution has `b < 0` (it dips below
//! `single_ms`, down to negative times that were once clamped to 0) or `c < 0` (it can turn down
//! before the full stroke), so the curve is instead
//! `single + (full − single)·((d−1)/(D−1))^p`, `D` the full-stroke distance, with the exponent `p`
//! found numerically so the average is `average_ms`. Either way the curve rises from `single_ms`
//! to `full_ms` and its average is `average_ms` (to the nanosecond rounding of the table).

use crate::spec::SeekModel;
use crate::time::{ms_to_ns, SimTime};

/// Seek time for every distance `0..cylinders`, in nanoseconds, and how much longer inward
/// seeks take than outward ones ([`DiskSpec::seek_asymmetry_ms`](crate::DiskSpec::seek_asymmetry_ms)).
#[derive(Debug, Clone)]
pub struct SeekCurve {
    table: Vec<SimTime>,
    /// The write curve, when writes seek differently (same length as `table`).
    write_table: Option<Vec<SimTime>>,
    /// Added to seeks towards higher cylinders, taken from seeks towards lower ones, ns.
    asymmetry_ns: i64,
}

impl SeekCurve {
    /// Evaluates `model` for every distance on a disk of `cylinders` cylinders.
    #[must_use]
    pub fn new(model: &SeekModel, cylinders: u32) -> Self {
        let n = cylinders.max(1) as usize;
        let f = curve_fn(model, cylinders);
        let table = (0..n).map(|d| if d == 0 { 0 } else { ms_to_ns(f(d as f64)) }).collect();
        Self { table, write_table: None, asymmetry_ns: 0 }
    }

    /// The same read curve with writes seeking by `write_model` (see the module docs).
    #[must_use]
    pub fn with_write_curve(mut self, write_model: &SeekModel) -> Self {
        let cylinders = u32::try_from(self.table.len()).unwrap_or(u32::MAX);
        self.write_table = Some(Self::new(write_model, cylinders).table);
        self
    }

    /// Whether writes have a seek curve of their own.
    #[must_use]
    pub fn has_write_curve(&self) -> bool {
        self.write_table.is_some()
    }

    /// Write seek time for a distance (the read curve's when there is no write curve).
    #[inline]
    #[must_use]
    pub fn write_time(&self, distance: u32) -> SimTime {
        match &self.write_table {
            Some(w) => w[(distance as usize).min(w.len() - 1)],
            None => self.time(distance),
        }
    }

    /// [`SeekCurve::between`] for a read (`write` false) or a write: the write curve for a write
    /// when there is one.
    #[inline]
    #[must_use]
    pub fn between_for(&self, from: u32, to: u32, write: bool) -> SimTime {
        if !write || self.write_table.is_none() {
            return self.between(from, to);
        }
        self.directed(self.write_time(from.abs_diff(to)), from, to)
    }

    /// Mean write seek over uniformly random pairs of distinct cylinders, ns (the read mean when
    /// writes have no curve of their own).
    #[must_use]
    pub fn write_average(&self) -> f64 {
        match &self.write_table {
            Some(w) => Self { table: w.clone(), write_table: None, asymmetry_ns: 0 }.average(),
            None => self.average(),
        }
    }

    /// The same curve with inward seeks (towards higher cylinders) `asymmetry_ns` longer and
    /// outward ones that much shorter; the curve itself is then their average.
    #[must_use]
    pub fn with_asymmetry(mut self, asymmetry_ns: i64) -> Self {
        self.asymmetry_ns = asymmetry_ns;
        self
    }

    /// Seek time for a distance of `distance` cylinders (0 costs 0).
    #[inline]
    #[must_use]
    pub fn time(&self, distance: u32) -> SimTime {
        let d = (distance as usize).min(self.table.len() - 1);
        self.table[d]
    }

    /// Seek time between two cylinders: the curve's, longer inward and shorter outward when the
    /// seeks are asymmetric.
    #[inline]
    #[must_use]
    pub fn between(&self, from: u32, to: u32) -> SimTime {
        self.directed(self.time(from.abs_diff(to)), from, to)
    }

    /// A curve's time `t` for the move `from → to`: longer inward, shorter outward.
    #[inline]
    fn directed(&self, t: SimTime, from: u32, to: u32) -> SimTime {
        match to.cmp(&from) {
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => t.saturating_add_signed(self.asymmetry_ns),
            std::cmp::Ordering::Less => t.saturating_add_signed(-self.asymmetry_ns),
        }
    }

    /// The quicker direction's seek time over `distance` cylinders: a lower bound on
    /// [`SeekCurve::between_for`] for any two cylinders that far apart, reads or writes.
    #[inline]
    #[must_use]
    pub fn shortest(&self, distance: u32) -> SimTime {
        if distance == 0 {
            return 0;
        }
        let t = match &self.write_table {
            Some(_) => self.time(distance).min(self.write_time(distance)),
            None => self.time(distance),
        };
        t.saturating_sub(self.asymmetry_ns.unsigned_abs())
    }

    /// Mean seek time over uniformly random pairs of distinct cylinders, ns.
    #[must_use]
    pub fn average(&self) -> f64 {
        let n = self.table.len() as f64;
        let (mut num, mut den) = (0.0, 0.0);
        for (d, &t) in self.table.iter().enumerate().skip(1) {
            let w = n - d as f64;
            num += w * t as f64;
            den += w;
        }
        if den == 0.0 { 0.0 } else { num / den }
    }

    /// Full-stroke seek time, ns.
    #[must_use]
    pub fn full_stroke(&self) -> SimTime {
        *self.table.last().unwrap_or(&0)
    }

    /// Longest seek either way, reads or writes, ns.
    #[must_use]
    pub fn max(&self) -> SimTime {
        let longest = self.table.iter().chain(self.write_table.iter().flatten()).copied().max().unwrap_or(0);
        longest.saturating_add(self.asymmetry_ns.unsigned_abs())
    }
}

/// The model as a function of (fractional) distance in cylinders, returning ms.
fn curve_fn(model: &SeekModel, cylinders: u32) -> Box<dyn Fn(f64) -> f64> {
    match model.clone() {
        SeekModel::Table { points } => Box::new(move |d| interpolate(&points, d)),
        SeekModel::ThreePoint { single_ms, average_ms, full_ms } => match three_point_fit(single_ms, average_ms, full_ms, cylinders) {
            ThreePointFit::SqrtLinear { b, c } => Box::new(move |d| single_ms + b * (d - 1.0).sqrt() + c * (d - 1.0)),
            ThreePointFit::Power { p, full_distance } => {
                let span = (full_distance - 1.0).max(1.0);
                Box::new(move |d| single_ms + (full_ms - single_ms) * ((d - 1.0) / span).powf(p))
            }
        },
        SeekModel::Hpl { boundary, sqrt_a, sqrt_b, linear_a, linear_b, first_ten_ms } => Box::new(move |d| {
            let i = d as usize;
            if i >= 1 && i <= first_ten_ms.len() {
                first_ten_ms[i - 1]
            } else if d < boundary {
                sqrt_a + sqrt_b * d.sqrt()
            } else {
                linear_a + linear_b * d
            }
        }),
        SeekModel::ToshibaMk156f => Box::new(|d| {
            if d < 315.0 {
                6.248 + 1.393 * d.sqrt() - 0.99 * d.cbrt() + 0.813 * d.ln()
            } else {
                17.503 + 0.03 * d
            }
        }),
    }
}

/// Linear interpolation through `[distance, ms]` points; below the first point the line runs to
/// the first point from (0, first ms), beyond the last the last segment's slope continues.
fn interpolate(points: &[[f64; 2]], d: f64) -> f64 {
    let i = points.partition_point(|p| p[0] < d);
    if i < points.len() && points[i][0] == d {
        return points[i][1];
    }
    if i == 0 {
        return points[0][1];
    }
    if i == points.len() {
        if points.len() == 1 {
            return points[0][1];
        }
        let [d0, t0] = points[points.len() - 2];
        let [d1, t1] = points[points.len() - 1];
        return t1 + (t1 - t0) / (d1 - d0) * (d - d1);
    }
    let [d0, t0] = points[i - 1];
    let [d1, t1] = points[i];
    t0 + (t1 - t0) * (d - d0) / (d1 - d0)
}

/// The fitted form of a three-point curve (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
enum ThreePointFit {
    /// `single + b·√(d−1) + c·(d−1)`, `b, c ≥ 0`.
    SqrtLinear { b: f64, c: f64 },
    /// `single + (full − single)·((d−1)/(full_distance−1))^p`.
    Power { p: f64, full_distance: f64 },
}

/// The weights of the average over distinct-cylinder pairs: distance `d` (1..n) weighs `n − d`.
/// Returns `(n, full-stroke distance, total weight)`.
fn pair_weights(cylinders: u32) -> (f64, f64, f64) {
    let n = f64::from(cylinders.max(2));
    (n, n - 1.0, n * (n - 1.0) / 2.0)
}

/// The range of averages a rising curve from `single` to `full` can have on `cylinders`
/// cylinders, both ends excluded: near `single` when only the full stroke costs more, near `full`
/// when every seek but the single-cylinder one costs `full`. Equal ends when `single == full`.
#[must_use]
pub fn three_point_average_range(single: f64, full: f64, cylinders: u32) -> (f64, f64) {
    let (n, _, total) = pair_weights(cylinders);
    if cylinders <= 2 {
        return (single, single);
    }
    // Weight of the full stroke is 1; of the single-cylinder distance n − 1.
    (single + (full - single) / total, full - (full - single) * (n - 1.0) / total)
}

/// Fits a three-point curve; the spec has been validated (`single ≤ average ≤ full`, the average
/// strictly inside [`three_point_average_range`] unless `single == full`).
fn three_point_fit(single: f64, average: f64, full: f64, cylinders: u32) -> ThreePointFit {
    let (n, max_d, total) = pair_weights(cylinders);
    if full <= single || cylinders <= 3 {
        // A flat curve, or too few distances for a shape: a straight line from single to full.
        return ThreePointFit::Power { p: 1.0, full_distance: max_d };
    }
    // Means of √(d−1) and (d−1) over the pair weights, and their values at the full stroke.
    let (mut mean_sqrt, mut mean_lin) = (0.0, 0.0);
    for i in 1..cylinders {
        let d = f64::from(i);
        let w = n - d;
        mean_sqrt += w * (d - 1.0).sqrt();
        mean_lin += w * (d - 1.0);
    }
    mean_sqrt /= total;
    mean_lin /= total;
    let (full_sqrt, full_lin) = ((max_d - 1.0).sqrt(), max_d - 1.0);
    // [mean_sqrt mean_lin; full_sqrt full_lin] [b c]ᵀ = [average − single, full − single]
    let det = mean_sqrt * full_lin - mean_lin * full_sqrt;
    let b = ((average - single) * full_lin - mean_lin * (full - single)) / det;
    let c = (mean_sqrt * (full - single) - full_sqrt * (average - single)) / det;
    if b >= 0.0 && c >= 0.0 {
        return ThreePointFit::SqrtLinear { b, c };
    }
    ThreePointFit::Power { p: power_for_average((average - single) / (full - single), cylinders), full_distance: max_d }
}

/// The exponent `p` for which the pair-weighted mean of `((d−1)/(D−1))^p` over `d = 1..=D` is
/// `target` (`0 < target < 1`, inside the attainable range). The mean falls as `p` grows, so
/// this is bisection on `ln p` with Newton steps where they stay inside the bracket.
fn power_for_average(target: f64, cylinders: u32) -> f64 {
    let (n, max_d, total) = pair_weights(cylinders);
    let span = max_d - 1.0;
    // Mean of x^p and its derivative with respect to q = ln p.
    let eval = |q: f64| {
        let p = q.exp();
        let (mut mean, mut slope) = (0.0, 0.0);
        for i in 2..cylinders {
            let d = f64::from(i);
            let x = (d - 1.0) / span;
            let xp = x.powf(p);
            mean += (n - d) * xp;
            slope += (n - d) * xp * x.ln() * p;
        }
        (mean / total, slope / total)
    };
    // At q = ±60 the mean has reached its limits to double precision on any allowed disk.
    let (mut lo, mut hi) = (-60.0_f64, 60.0_f64);
    let mut q = 0.0;
    for _ in 0..200 {
        let (mean, slope) = eval(q);
        let err = mean - target;
        if err.abs() <= 1e-13 {
            break;
        }
        if err > 0.0 {
            lo = q; // mean too high: p must grow
        } else {
            hi = q;
        }
        let newton = q - err / slope;
        q = if slope < 0.0 && newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
        if hi - lo < 1e-12 {
            break;
        }
    }
    q.exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_interpolates_linearly() {
        let m = SeekModel::Table { points: vec![[1.0, 1.0], [3.0, 2.0], [5.0, 4.0]] };
        let c = SeekCurve::new(&m, 10);
        assert_eq!(c.time(0), 0);
        assert_eq!(c.time(1), 1_000_000);
        assert_eq!(c.time(2), 1_500_000);
        assert_eq!(c.time(4), 3_000_000);
        assert_eq!(c.time(7), 6_000_000);
    }

    /// The pair-weighted mean computed the slow way: every ordered pair of distinct cylinders.
    fn brute_force_average(c: &SeekCurve, cylinders: u32) -> f64 {
        let (mut sum, mut pairs) = (0.0, 0.0);
        for from in 0..cylinders {
            for to in 0..cylinders {
                if from != to {
                    sum += c.between(from, to) as f64;
                    pairs += 1.0;
                }
            }
        }
        sum / pairs
    }

    fn assert_three_point(single: f64, average: f64, full: f64, cylinders: u32) {
        let m = SeekModel::ThreePoint { single_ms: single, average_ms: average, full_ms: full };
        let c = SeekCurve::new(&m, cylinders);
        let what = format!("three_point {single}/{average}/{full} on {cylinders} cylinders");
        assert_eq!(c.time(1), ms_to_ns(single), "{what}: single");
        assert_eq!(c.full_stroke(), ms_to_ns(full), "{what}: full stroke");
        for d in 1..cylinders - 1 {
            assert!(c.time(d) > 0, "{what}: distance {d} costs 0");
            assert!(c.time(d + 1) >= c.time(d), "{what}: falls from {} to {} at distance {d}", c.time(d), c.time(d + 1));
        }
        // Table entries are rounded to the ns, so the mean is within a nanosecond.
        assert!((c.average() - average * 1e6).abs() < 1.0, "{what}: average {} ns", c.average());
    }

    #[test]
    fn three_point_hits_its_targets() {
        // Averages in the square-root-plus-line band (built-in disks), below it and above it.
        assert_three_point(0.8, 5.2, 11.0, 9772);
        assert_three_point(1.245, 5.0, 11.175, 10042);
        assert_three_point(2.0, 3.0, 20.0, 5000);
        assert_three_point(0.5, 1.0, 30.0, 2000);
        assert_three_point(1.0, 17.0, 18.0, 3000);
        assert_three_point(3.0, 3.0, 3.0, 100);
    }

    #[test]
    fn three_point_average_is_over_distinct_cylinder_pairs() {
        for (single, average, full) in [(1.0, 4.0, 8.0), (2.0, 2.5, 20.0), (0.5, 7.0, 8.0)] {
            let m = SeekModel::ThreePoint { single_ms: single, average_ms: average, full_ms: full };
            let c = SeekCurve::new(&m, 300);
            let brute = brute_force_average(&c, 300);
            assert!((brute - c.average()).abs() < 1e-3, "{brute} vs {}", c.average());
            assert!((brute - average * 1e6).abs() < 1.0, "{single}/{average}/{full}: average {brute} ns");
        }
    }

    #[test]
    fn hpl_uses_first_ten_then_formula() {
        let m = SeekModel::Hpl { boundary: 300.0, sqrt_a: 3.81, sqrt_b: 0.33, linear_a: 7.75, linear_b: 0.0059, first_ten_ms: vec![2.89; 10] };
        let c = SeekCurve::new(&m, 2051);
        assert_eq!(c.time(10), 2_890_000);
        assert_eq!(c.time(100), ms_to_ns(3.81 + 0.33 * 10.0));
        assert_eq!(c.time(1000), ms_to_ns(7.75 + 5.9));
    }
}
