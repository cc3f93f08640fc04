//! Seek curves: time to move the arm a given number of cylinders.
//!
//! Every [`SeekModel`] is evaluated once, at build time, into a table with one entry per possible
//! distance, so a seek costs one array load on the hot path.

use crate::spec::SeekModel;
use crate::time::{ms_to_ns, SimTime};

/// Seek time for every distance `0..cylinders`, in nanoseconds.
#[derive(Debug, Clone)]
pub struct SeekCurve {
    table: Vec<SimTime>,
}

impl SeekCurve {
    /// Evaluates `model` for every distance on a disk of `cylinders` cylinders.
    #[must_use]
    pub fn new(model: &SeekModel, cylinders: u32) -> Self {
        let n = cylinders.max(1) as usize;
        let f = curve_fn(model, cylinders);
        let table = (0..n).map(|d| if d == 0 { 0 } else { ms_to_ns(f(d as f64)) }).collect();
        Self { table }
    }

    /// Seek time for a distance of `distance` cylinders (0 costs 0).
    #[inline]
    #[must_use]
    pub fn time(&self, distance: u32) -> SimTime {
        let d = (distance as usize).min(self.table.len() - 1);
        self.table[d]
    }

    /// Seek time between two cylinders.
    #[inline]
    #[must_use]
    pub fn between(&self, from: u32, to: u32) -> SimTime {
        self.time(from.abs_diff(to))
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
}

/// The model as a function of (fractional) distance in cylinders, returning ms.
fn curve_fn(model: &SeekModel, cylinders: u32) -> Box<dyn Fn(f64) -> f64> {
    match model.clone() {
        SeekModel::Table { points } => Box::new(move |d| interpolate(&points, d)),
        SeekModel::ThreePoint { single_ms, average_ms, full_ms } => {
            let (b, c) = three_point_coefficients(single_ms, average_ms, full_ms, cylinders);
            Box::new(move |d| single_ms + b * (d - 1.0).sqrt() + c * (d - 1.0))
        }
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

/// Solves for `b`, `c` in `single + b·sqrt(d−1) + c·(d−1)` so the full stroke and the mean over
/// random distinct-cylinder pairs match.
fn three_point_coefficients(single: f64, average: f64, full: f64, cylinders: u32) -> (f64, f64) {
    let n = f64::from(cylinders.max(3));
    let max_d = n - 1.0;
    let (mut es, mut el, mut w) = (0.0, 0.0, 0.0);
    let mut d = 1.0;
    while d <= max_d {
        let weight = n - d;
        es += weight * (d - 1.0).sqrt();
        el += weight * (d - 1.0);
        w += weight;
        d += 1.0;
    }
    es /= w;
    el /= w;
    let (fs, fl) = ((max_d - 1.0).sqrt(), max_d - 1.0);
    // [es el; fs fl] [b c]^T = [average-single, full-single]
    let det = es * fl - el * fs;
    if det.abs() < 1e-12 {
        return (0.0, (full - single) / fl.max(1.0));
    }
    let b = ((average - single) * fl - el * (full - single)) / det;
    let c = (es * (full - single) - fs * (average - single)) / det;
    (b, c)
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

    #[test]
    fn three_point_hits_its_targets() {
        let m = SeekModel::ThreePoint { single_ms: 0.8, average_ms: 5.2, full_ms: 11.0 };
        let c = SeekCurve::new(&m, 9772);
        assert_eq!(c.time(1), 800_000);
        assert!((c.full_stroke() as f64 - 11.0e6).abs() < 1e3);
        assert!((c.average() - 5.2e6).abs() < 2e4, "average {}", c.average());
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
