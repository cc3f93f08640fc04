//! SVG plots for the command line, drawn with [`plotters`] (the Python package draws the same
//! data with matplotlib).
//!
//! Every figure is a chart on the left and its legend in a panel of its own on the right, so a
//! legend never covers data however the data falls; the chart widens for a long title rather
//! than clip it. Reproductions pass the paper's published figures as marks, drawn in black
//! beside ours, each with its own legend entry:
//!
//! ```text
//! ┌──────────── title ────────────┬─ legend ──────────────────┐
//! │  ours ──── (colours)          │ ── ours                   │
//! │  - - - - - - paper level      │ - - paper: … (dashed)     │
//! │  · · · · · · another level    │ · · paper: … (dotted)     │
//! └───────────────────────────────┴───────────────────────────┘
//! ```
//!
//! | the paper gives            | mark                                          | chart              |
//! |----------------------------|-----------------------------------------------|--------------------|
//! | one value                  | [`Reference::Level`], [`Reference::Point`]    | [`lines`]          |
//! | a range                    | [`Reference::Band`]                           | [`lines`]          |
//! | an x (or ±x)               | [`Reference::At`]                             | [`lines`]          |
//! | a curve, point by point    | [`Reference::Curve`]                          | [`lines`]          |
//! | no number for this chart   | [`Reference::Note`] (legend text only)        | [`lines`]          |
//! | a segment's share          | [`SegmentMark`] (a whisker within the bar)    | [`stacked_bars`]   |
//! | a category's value         | [`CategoryMark`] (a dot or whisker)           | [`grouped_bars`]   |
//!
//! Line-shaped paper marks on one chart take dashed, dotted and long-dashed strokes in turn, so
//! several stay apart. Percentiles ([`percentiles`]) sit on a tail scale with a logarithmic y
//! axis, so p99 and the maximum do not crowd at the right edge of a linear one.
//!
//! Text is written as SVG `<text>` elements and rendered by whatever shows the file, so neither
//! building nor running needs a font on the machine (plotters' `ttf` feature is off; it lays out
//! labels with its built-in size estimate).

use std::path::Path;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// One stacked bar: a label and its segment values (fractions of 1; their sum may be below 1).
pub struct StackedBar {
    pub label: String,
    pub values: Vec<f64>,
    /// The paper's figures for some of this bar's segments.
    pub marks: Vec<SegmentMark>,
}

impl StackedBar {
    /// A bar without paper marks.
    pub fn new(label: impl Into<String>, values: Vec<f64>) -> Self {
        Self { label: label.into(), values, marks: Vec::new() }
    }
}

/// The paper's value for one segment of a stacked bar, as a range of that segment's share
/// (`low == high` for a single value). It is drawn beside the bar as a black whisker measured
/// from the segment's start: the bar matches the paper when the segment's top falls within the
/// whisker.
pub struct SegmentMark {
    pub segment: usize,
    pub low: f64,
    pub high: f64,
}

/// One named line of `(x, y)` points.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A published figure drawn on a line chart, in black, labelled in the legend.
///
/// Each line-shaped mark (a level, an x, a curve) takes the next of [`PAPER_DASHES`], so several
/// paper figures on one chart stay apart and each matches its own legend entry.
pub enum Reference {
    /// A value at every x (a horizontal line).
    Level { label: String, y: f64 },
    /// A range at every x (a shaded band).
    Band { label: String, low: f64, high: f64 },
    /// A value of x (a vertical line at each of `xs`, one legend entry: "within ±50 µs" is two).
    At { label: String, xs: Vec<f64> },
    /// One point.
    Point { label: String, x: f64, y: f64 },
    /// A curve the paper publishes point by point (a line with a marker at each point).
    Curve { label: String, points: Vec<(f64, f64)> },
    /// A legend line only: why a chart has no paper figure drawn on it (the paper gives none).
    Note { label: String },
}

impl Reference {
    fn label(&self) -> &str {
        match self {
            Self::Level { label, .. } | Self::Band { label, .. } | Self::At { label, .. } | Self::Point { label, .. } | Self::Curve { label, .. } | Self::Note { label } => label,
        }
    }
}

/// The dash patterns of paper lines, in pixels (dash, gap): dashed, dotted, long-dashed.
pub const PAPER_DASHES: [(u32, u32); 3] = [(8, 5), (2, 4), (16, 5)];

const COLOURS: [RGBColor; 6] = [
    RGBColor(76, 114, 176),
    RGBColor(221, 132, 82),
    RGBColor(85, 168, 104),
    RGBColor(196, 78, 82),
    RGBColor(129, 114, 179),
    RGBColor(147, 120, 96),
];
const PAPER: RGBColor = BLACK;
const CHART_HEIGHT: u32 = 440;
const CAPTION_FONT: u32 = 17;
const LEGEND_FONT: u32 = 13;
/// The legend panel's width per character of its longest label (plotters' estimate of a
/// 13-pixel sans-serif character is below this, so labels fit).
const LEGEND_PX_PER_CHAR: u32 = 7;
/// A caption's width per character: plotters writes a `CAPTION_FONT` caption at 17 / 1.24 ≈ 13.7
/// px, whose sans-serif characters average about half that; 8 leaves room for wide ones. (The
/// SVG centres the text itself: only the width has to be enough.)
const CAPTION_PX_PER_CHAR: u32 = 8;
/// The margin round a chart, in pixels.
const MARGIN: u32 = 12;

/// `width`, widened when `title` would not fit in it: a chart never clips its caption.
fn fit_caption(width: u32, title: &str) -> u32 {
    let chars = u32::try_from(title.chars().count()).unwrap_or(u32::MAX / 16);
    width.max(CAPTION_PX_PER_CHAR * chars + 2 * MARGIN)
}

/// How a legend entry is drawn.
enum Swatch {
    Box(RGBColor),
    Stroke(RGBColor),
    /// A paper line in pattern `dash` of [`PAPER_DASHES`], with marker `marker` (a curve's).
    PaperLine { dash: usize, marker: Option<usize> },
    Shade,
    Whisker,
    Dot,
    /// No swatch: the label alone.
    Text,
}

/// Draws `entries` top to bottom in `area` (the panel right of the chart).
fn draw_legend(area: &Area<'_>, entries: &[(String, Swatch)]) -> PlotResult {
    let style = ("sans-serif", LEGEND_FONT).into_font().color(&BLACK);
    for (i, (label, swatch)) in entries.iter().enumerate() {
        let y = 60 + 22 * i as i32;
        let (x0, x1) = (8, 30);
        match swatch {
            Swatch::Box(c) => area.draw(&Rectangle::new([(x0, y - 6), (x1, y + 6)], c.filled()))?,
            Swatch::Stroke(c) => area.draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(2)))?,
            Swatch::PaperLine { dash, marker } => {
                let (on, off) = PAPER_DASHES[dash % PAPER_DASHES.len()];
                area.draw(&DashedPathElement::new(vec![(x0, y), (x1, y)], on, off, PAPER.stroke_width(2)))?;
                // A curve's marker: a filled circle, triangle or square (as on the chart).
                let at = ((x0 + x1) / 2, y);
                match marker.map(|k| k % 3) {
                    None => {}
                    Some(0) => area.draw(&Circle::new(at, 4, PAPER.filled()))?,
                    Some(1) => area.draw(&TriangleMarker::new(at, 6, PAPER.filled()))?,
                    Some(_) => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], PAPER.filled())))?,
                }
            }
            Swatch::Text => {}
            Swatch::Shade => area.draw(&Rectangle::new([(x0, y - 6), (x1, y + 6)], PAPER.mix(0.15).filled()))?,
            Swatch::Whisker => {
                let xm = (x0 + x1) / 2;
                area.draw(&PathElement::new(vec![(xm, y - 7), (xm, y + 7)], PAPER.stroke_width(2)))?;
                area.draw(&PathElement::new(vec![(xm - 4, y - 7), (xm + 4, y - 7)], PAPER.stroke_width(2)))?;
                area.draw(&PathElement::new(vec![(xm - 4, y + 7), (xm + 4, y + 7)], PAPER.stroke_width(2)))?;
            }
            Swatch::Dot => area.draw(&Circle::new(((x0 + x1) / 2, y), 5, PAPER.filled()))?,
        }
        area.draw(&Text::new(label.clone(), (x1 + 8, y - 7), style.clone()))?;
    }
    Ok(())
}

/// A drawing area of an SVG file.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// The root area, and it split into the chart (left; at least `chart_width`, wider when `title`
/// needs it) and a legend panel wide enough for `labels`.
fn split_for_legend<'a, 'l>(
    path: &'a Path,
    title: &str,
    chart_width: u32,
    labels: impl Iterator<Item = &'l str>,
) -> Result<(Area<'a>, Area<'a>, Area<'a>), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let chart_width = fit_caption(chart_width, title);
    let longest = labels.map(|l| l.chars().count() as u32).max().unwrap_or(0);
    let legend_width = 50 + LEGEND_PX_PER_CHAR * longest;
    let root = SVGBackend::new(path, (chart_width + legend_width, CHART_HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (chart, legend) = root.split_horizontally(chart_width);
    Ok((root, chart, legend))
}

/// Draws stacked bars of fractions (0–100%) to an SVG file, with the paper's marks.
pub fn stacked_bars(path: &Path, title: &str, y_desc: &str, segments: &[&str], bars: &[StackedBar]) -> PlotResult {
    let marked = bars.iter().any(|b| !b.marks.is_empty());
    let mark_label = "paper: the segment's share, from its start";
    let labels = segments.iter().copied().chain(marked.then_some(mark_label));
    let chart_width = (160 + 95 * bars.len() as u32).max(520);
    let (root, chart_area, legend_area) = split_for_legend(path, title, chart_width, labels)?;
    // Bar i is centred on x = i; the axis runs half a slot past the first and last bars, so
    // there is no empty slot.
    let n = bars.len().max(1) as f64;
    // Shares of a whole: the axis ends at 100% (a mark reaching past it is cut there, see
    // `whisker_span`).
    let top = 100.0;
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", CAPTION_FONT))
        .margin(MARGIN)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.5..n - 0.5, 0.0..top)?;
    let names: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    let label_at = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 { names.get(i as usize).cloned().unwrap_or_default() } else { String::new() }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_desc)
        // One tick per bar: the axis spans n units, so n + 1 ticks land on the integers.
        .x_labels(bars.len() + 1)
        .x_label_formatter(&label_at)
        .draw()?;
    let half = if marked { 0.3 } else { 0.35 };
    let shift = if marked { -0.08 } else { 0.0 };
    for (k, _) in segments.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        chart.draw_series(bars.iter().enumerate().filter_map(|(i, b)| {
            let value = *b.values.get(k)?;
            let base: f64 = b.values[..k].iter().sum::<f64>() * 100.0;
            let x = i as f64 + shift;
            Some(Rectangle::new([(x - half, base), (x + half, base + value * 100.0)], colour.filled()))
        }))?;
    }
    for (i, b) in bars.iter().enumerate() {
        let x = i as f64 + half + 0.06 + shift;
        for m in &b.marks {
            let base: f64 = b.values.iter().take(m.segment).sum();
            let w = whisker_span(base, m.low, m.high);
            let cap = 0.04;
            let mut parts = vec![PathElement::new(vec![(x, 100.0 * w.low), (x, 100.0 * w.high)], PAPER.stroke_width(2))];
            for (end, capped) in [(w.low, w.low_capped), (w.high, w.high_capped)] {
                if capped {
                    parts.push(PathElement::new(vec![(x - cap, 100.0 * end), (x + cap, 100.0 * end)], PAPER.stroke_width(2)));
                }
            }
            chart.draw_series(parts)?;
        }
    }
    let mut entries: Vec<(String, Swatch)> =
        segments.iter().enumerate().map(|(k, s)| (s.to_string(), Swatch::Box(COLOURS[k % COLOURS.len()]))).collect();
    if marked {
        entries.push((mark_label.into(), Swatch::Whisker));
    }
    draw_legend(&legend_area, &entries)?;
    root.present()?;
    Ok(())
}

/// Where a stacked bar's paper whisker runs, as shares of the whole bar.
#[derive(Debug, Clone, Copy, PartialEq)]
struct WhiskerSpan {
    low: f64,
    high: f64,
    /// An end inside the bar ends in a cap; an end cut at 0 or 100% has none (the paper's range
    /// goes on past it).
    low_capped: bool,
    high_capped: bool,
}

/// The whisker of a segment starting at `base` (a share of the bar) whose paper share is
/// `low..=high`, cut to the bar's 0–100%: a one-sided bound such as "transfer below 55%" over a
/// segment starting at 47% would otherwise reach 102%.
fn whisker_span(base: f64, low: f64, high: f64) -> WhiskerSpan {
    let (lo, hi) = (base + low, base + high);
    WhiskerSpan { low: lo.clamp(0.0, 1.0), high: hi.clamp(0.0, 1.0), low_capped: (0.0..=1.0).contains(&lo), high_capped: (0.0..=1.0).contains(&hi) }
}

/// The smallest and largest of `values`, or `None` when there are none (or none is finite).
fn extent(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.filter(|v| v.is_finite()).fold(None, |acc, v| Some(acc.map_or((v, v), |(a, b): (f64, f64)| (a.min(v), b.max(v)))))
}

/// An f64 axis whose ticks are the given ones (`None`: plotters' own choice), printed as
/// plotters prints an f64 axis unless the chart sets a formatter.
struct TickedAxis {
    inner: RangedCoordf64,
    ticks: Option<Vec<f64>>,
}

impl Ranged for TickedAxis {
    type ValueType = f64;
    type FormatOption = NoDefaultFormatting;

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match &self.ticks {
            None => self.inner.key_points(hint),
            // Given ticks only: no lighter grid lines between them.
            Some(_) if hint.weight().allow_light_points() => Vec::new(),
            Some(ticks) => ticks.clone(),
        }
    }
}

impl ValueFormatter<f64> for TickedAxis {
    fn format(value: &f64) -> String {
        RangedCoordf64::format(value)
    }
}

/// How a line chart labels its x axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Plotters' choice of round numbers.
    Auto,
    /// Whole numbers only (days, counts): no tick between two of them.
    Integers,
}

/// Draws lines, and the paper's figures as [`Reference`] marks, to an SVG file.
pub fn lines(path: &Path, title: &str, x_desc: &str, y_desc: &str, series: &[Line], references: &[Reference]) -> PlotResult {
    lines_on(path, title, (x_desc, XAxis::Auto), y_desc, series, references)
}

/// [`lines`] with the x axis labelled as `x` says.
pub fn lines_on(path: &Path, title: &str, (x_desc, x_axis): (&str, XAxis), y_desc: &str, series: &[Line], references: &[Reference]) -> PlotResult {
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).chain(references.iter().map(Reference::label)).collect();
    let (root, chart_area, legend_area) = split_for_legend(path, title, 720, labels.into_iter())?;
    // The axes cover the data and every reference mark.
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).chain(references.iter().flat_map(|r| match r {
        Reference::At { xs, .. } => xs.clone(),
        Reference::Point { x, .. } => vec![*x],
        Reference::Curve { points, .. } => points.iter().map(|p| p.0).collect(),
        _ => vec![],
    }));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain(references.iter().flat_map(|r| match r {
        Reference::Level { y, .. } | Reference::Point { y, .. } => vec![*y],
        Reference::Band { low, high, .. } => vec![*low, *high],
        Reference::Curve { points, .. } => points.iter().map(|p| p.1).collect(),
        Reference::At { .. } | Reference::Note { .. } => vec![],
    }));
    let (x0, x1) = extent(xs).unwrap_or((0.0, 1.0));
    let (y0, y1) = extent(ys).unwrap_or((0.0, 1.0));
    let pad = ((y1 - y0) * 0.05).max(1e-9);
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    // Whole-number ticks: every one from the first to the last, thinned to at most 16 (every 2nd,
    // 5th, 10th, …); otherwise plotters' own choice.
    let ticks = match x_axis {
        XAxis::Auto => None,
        XAxis::Integers => {
            let (first, last) = (x0.ceil(), x1.floor());
            let span = (last - first).max(0.0);
            let step = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0].into_iter().find(|s| span / s < 16.0).unwrap_or((span / 15.0).ceil());
            Some((0..).map(|i| first + step * f64::from(i)).take_while(|&x| x <= last).collect())
        }
    };
    let x_range = TickedAxis { inner: (x0..x1).into(), ticks };
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", CAPTION_FONT))
        .margin(MARGIN)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(x_range, (y0 - pad)..(y1 + pad))?;
    let whole = |x: &f64| format!("{}", x.round());
    match x_axis {
        XAxis::Auto => chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw()?,
        XAxis::Integers => chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).x_label_formatter(&whole).draw()?,
    }
    let mut entries = Vec::new();
    let mut dash = 0;
    let mut next_dash = || {
        dash += 1;
        dash - 1
    };
    let dashed = |points: Vec<(f64, f64)>, k: usize| {
        let (on, off) = PAPER_DASHES[k % PAPER_DASHES.len()];
        DashedLineSeries::new(points, on, off, PAPER.stroke_width(2))
    };
    for r in references {
        let label = r.label().to_string();
        match r {
            Reference::Level { y, .. } => {
                let k = next_dash();
                chart.draw_series(dashed(vec![(x0, *y), (x1, *y)], k))?;
                entries.push((label, Swatch::PaperLine { dash: k, marker: None }));
            }
            Reference::At { xs, .. } => {
                let k = next_dash();
                for x in xs {
                    chart.draw_series(dashed(vec![(*x, y0 - pad), (*x, y1 + pad)], k))?;
                }
                entries.push((label, Swatch::PaperLine { dash: k, marker: None }));
            }
            Reference::Curve { points, .. } => {
                let k = next_dash();
                chart.draw_series(dashed(points.clone(), k))?;
                // Its marker: a filled circle, triangle or square (as in the legend).
                match k % 3 {
                    0 => chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, PAPER.filled())))?,
                    1 => chart.draw_series(points.iter().map(|&p| TriangleMarker::new(p, 6, PAPER.filled())))?,
                    _ => chart.draw_series(points.iter().map(|&p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], PAPER.filled())))?,
                };
                entries.push((label, Swatch::PaperLine { dash: k, marker: Some(k) }));
            }
            Reference::Band { low, high, .. } => {
                chart.draw_series([Rectangle::new([(x0, *low), (x1, *high)], PAPER.mix(0.15).filled())])?;
                entries.push((label, Swatch::Shade));
            }
            Reference::Point { x, y, .. } => {
                chart.draw_series([Circle::new((*x, *y), 5, PAPER.filled())])?;
                entries.push((label, Swatch::Dot));
            }
            Reference::Note { .. } => entries.push((label, Swatch::Text)),
        }
    }
    let mut line_entries = Vec::new();
    for (k, s) in series.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        chart.draw_series(LineSeries::new(s.points.iter().copied(), colour.stroke_width(2)))?;
        // A series of one point (one scheme's operating point) is a dot: a line of one point draws nothing.
        if let [p] = s.points[..] {
            chart.draw_series([Circle::new(p, 6, colour.filled())])?;
        }
        line_entries.push((s.label.clone(), Swatch::Stroke(colour)));
    }
    line_entries.extend(entries);
    draw_legend(&legend_area, &line_entries)?;
    root.present()?;
    Ok(())
}

/// Where percentile `p` (100: the maximum) sits on [`percentiles`]' axis: the tail's share in
/// "nines", −log10(1 − p/100), so p50, p90, p99 stand one step apart each; the maximum one step
/// past the highest percentile below it.
fn nines(p: f64, highest_below_max: f64) -> f64 {
    if p >= 100.0 {
        nines(highest_below_max, highest_below_max) + 1.0
    } else {
        -(1.0 - p / 100.0).log10()
    }
}

/// Draws a distribution's percentiles (each line's points are `(percentile, value)`; 100 is the
/// maximum) to an SVG file: x on a tail ("nines") scale, so p90, p99 and the maximum do not
/// crowd at the right edge, and y logarithmic, so a tail ten times the median stays readable.
/// `reference` is a paper's figure (a level), or a [`Reference::Note`] saying there is none.
pub fn percentiles(path: &Path, title: &str, y_desc: &str, series: &[Line], reference: Option<&Reference>) -> PlotResult {
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).chain(reference.map(Reference::label)).collect();
    let (root, chart_area, legend_area) = split_for_legend(path, title, 720, labels.into_iter())?;
    let below_max = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).filter(|&p| p < 100.0).fold(50.0, f64::max);
    let mut ticks: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let (y0, y1) = extent(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|&v| positive(v))).unwrap_or((1.0, 10.0));
    let (x0, x1) = (nines(ticks.first().copied().unwrap_or(50.0), below_max), nines(ticks.last().copied().unwrap_or(100.0), below_max));
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    // A tick at each percentile the lines have, and none elsewhere.
    let positions: Vec<f64> = ticks.iter().map(|&p| nines(p, below_max)).collect();
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", CAPTION_FONT))
        .margin(MARGIN)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(TickedAxis { inner: ((x0 - 0.1)..(x1 + 0.1)).into(), ticks: Some(positions) }, (y0 / 1.2..y1 * 1.2).log_scale())?;
    let name = |x: &f64| {
        ticks.iter().find(|&&p| (nines(p, below_max) - x).abs() < 1e-9).map_or(String::new(), |&p| if p >= 100.0 { "max".to_string() } else { format!("p{p}") })
    };
    chart.configure_mesh().x_desc("percentile (tail scale)").y_desc(y_desc).x_label_formatter(&name).draw()?;
    let mut entries = Vec::new();
    for (k, s) in series.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let points: Vec<(f64, f64)> = s.points.iter().filter(|p| positive(p.1)).map(|&(p, v)| (nines(p, below_max), v)).collect();
        chart.draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(2)))?;
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))?;
        entries.push((s.label.clone(), Swatch::Stroke(colour)));
    }
    match reference {
        None => {}
        Some(Reference::Note { label }) => entries.push((label.clone(), Swatch::Text)),
        Some(Reference::Level { label, y }) => {
            chart.draw_series(DashedLineSeries::new(vec![(x0 - 0.1, *y), (x1 + 0.1, *y)], PAPER_DASHES[0].0, PAPER_DASHES[0].1, PAPER.stroke_width(2)))?;
            entries.push((label.clone(), Swatch::PaperLine { dash: 0, marker: None }));
        }
        Some(_) => return Err("percentiles: a paper figure is a level or a note".into()),
    }
    draw_legend(&legend_area, &entries)?;
    root.present()?;
    Ok(())
}

/// One series of a grouped bar chart: a value per category (NaN: no bar).
pub struct BarSeries {
    pub label: String,
    pub values: Vec<f64>,
}

/// The paper's value for one category of a grouped bar chart, drawn as a black dot over the
/// group (a range as a whisker).
pub struct CategoryMark {
    pub category: usize,
    pub low: f64,
    pub high: f64,
}

/// Draws grouped bars (one group per category, one bar per series; values may be negative) and
/// the paper's marks to an SVG file.
pub fn grouped_bars(path: &Path, title: &str, y_desc: &str, categories: &[&str], series: &[BarSeries], marks: &[CategoryMark], mark_label: &str) -> PlotResult {
    let labels = series.iter().map(|s| s.label.as_str()).chain((!marks.is_empty()).then_some(mark_label));
    let (root, chart_area, legend_area) = split_for_legend(path, title, 720, labels)?;
    let ys = series.iter().flat_map(|s| s.values.iter().copied()).chain(marks.iter().flat_map(|m| [m.low, m.high])).chain([0.0]);
    let (y0, y1) = extent(ys).unwrap_or((0.0, 1.0));
    let pad = ((y1 - y0) * 0.05).max(1e-9);
    let n = categories.len().max(1);
    let names: Vec<String> = categories.iter().map(|c| (*c).to_string()).collect();
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", CAPTION_FONT))
        .margin(MARGIN)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), (y0 - pad)..(y1 + pad))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 { names.get(i as usize).cloned().unwrap_or_default() } else { String::new() }
        })
        .y_desc(y_desc)
        .draw()?;
    let width = 0.8 / series.len().max(1) as f64;
    let mut entries = Vec::new();
    for (k, s) in series.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let bars = s.values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(c, &v)| {
            let left = c as f64 - 0.4 + k as f64 * width;
            Rectangle::new([(left, 0.0), (left + width * 0.9, v)], colour.filled())
        });
        chart.draw_series(bars)?;
        entries.push((s.label.clone(), Swatch::Box(colour)));
    }
    for m in marks {
        let x = m.category as f64;
        if m.high > m.low {
            chart.draw_series([PathElement::new(vec![(x, m.low), (x, m.high)], PAPER.stroke_width(2))])?;
        }
        chart.draw_series([Circle::new((x, (m.low + m.high) / 2.0), 5, PAPER.filled())])?;
    }
    if !marks.is_empty() {
        entries.push((mark_label.to_string(), if marks.iter().any(|m| m.high > m.low) { Swatch::Whisker } else { Swatch::Dot }));
    }
    draw_legend(&legend_area, &entries)?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh SVG path under the target folder's scratch space.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("freeblock-plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// The text of every `<text>` element of an SVG file.
    fn texts(path: &Path) -> Vec<String> {
        let svg = std::fs::read_to_string(path).unwrap();
        svg.split("<text").skip(1).filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().replace("&apos;", "'"))).collect()
    }

    /// The SVG's width attribute, in pixels.
    fn width(path: &Path) -> u32 {
        let svg = std::fs::read_to_string(path).unwrap();
        let w = svg.split("width=\"").nth(1).unwrap();
        w[..w.find('"').unwrap()].parse().unwrap()
    }

    fn line(label: &str, points: &[(f64, f64)]) -> Line {
        Line { label: label.into(), points: points.to_vec() }
    }

    #[test]
    fn a_long_title_widens_the_chart_so_it_is_not_clipped() {
        let title = "Paper 000 Fig. 8c: head usage with the scan (FCFS, single_track; rest: overhead, idle) and a little more";
        let p = scratch("title-bars.svg");
        stacked_bars(&p, title, "%", &["a"], &[StackedBar::new("x", vec![0.5])]).unwrap();
        assert!(width(&p) >= CAPTION_PX_PER_CHAR * title.chars().count() as u32, "{}", width(&p));
        let p = scratch("title-lines.svg");
        lines(&p, title, "x", "y", &[line("a", &[(0.0, 1.0), (1.0, 2.0)])], &[]).unwrap();
        assert!(width(&p) >= CAPTION_PX_PER_CHAR * title.chars().count() as u32, "{}", width(&p));
        assert_eq!(fit_caption(900, "short"), 900);
    }

    #[test]
    fn every_paper_mark_has_one_nonempty_legend_entry_and_lines_differ() {
        let p = scratch("marks.svg");
        let refs = [
            Reference::Level { label: "paper: free ~54%".into(), y: 54.0 },
            Reference::Level { label: "paper: extra seek ~18%".into(), y: 18.0 },
            Reference::Level { label: "paper: unused ~28%".into(), y: 28.0 },
            Reference::At { label: "paper: within ±50 µs".into(), xs: vec![-50.0, 50.0] },
            Reference::Curve { label: "paper: table".into(), points: vec![(1.0, 3.0), (2.0, 4.0)] },
            Reference::Note { label: "paper: no number for this".into() },
        ];
        lines(&p, "t", "x", "y", &[line("ours", &[(-60.0, 10.0), (60.0, 60.0)])], &refs).unwrap();
        let t = texts(&p);
        for r in &refs {
            assert_eq!(t.iter().filter(|x| x.as_str() == r.label()).count(), 1, "{} in {t:?}", r.label());
        }
        assert!(t.iter().all(|x| !x.trim().is_empty()), "an empty text: {t:?}");
        // The three levels are told apart by their dash patterns.
        let patterns: std::collections::HashSet<(u32, u32)> = PAPER_DASHES.iter().copied().collect();
        assert_eq!(patterns.len(), 3);
    }

    #[test]
    fn an_integer_axis_labels_whole_numbers_only() {
        // Days 1–4 against values in the hundreds: every numeric label below 10 is an x tick.
        let days: Vec<(f64, f64)> = (1..=4).map(|d| (f64::from(d), 100.0 * f64::from(d))).collect();
        let x_ticks = |p: &Path| -> Vec<f64> { texts(p).iter().filter_map(|x| x.parse::<f64>().ok()).filter(|&v| v < 10.0).collect() };
        let p = scratch("days.svg");
        lines_on(&p, "t", ("day", XAxis::Integers), "ms", &[line("ours", &days)], &[]).unwrap();
        let ticks = x_ticks(&p);
        assert_eq!(ticks, [1.0, 2.0, 3.0, 4.0]);
        // Plotters' own choice puts ticks between days (the case this axis is for).
        let p = scratch("days-auto.svg");
        lines(&p, "t", "day", "ms", &[line("ours", &days)], &[]).unwrap();
        assert!(x_ticks(&p).iter().any(|v| v.fract() != 0.0), "{:?}", x_ticks(&p));
    }

    #[test]
    fn a_whisker_never_leaves_the_bar() {
        // "Transfer below 55%" over a transfer segment starting at 47%.
        let w = whisker_span(0.47, 0.0, 0.55);
        assert_eq!((w.low, w.high), (0.47, 1.0));
        assert!(w.low_capped && !w.high_capped);
        let w = whisker_span(0.2, 0.25, 0.38);
        assert!((w.low - 0.45).abs() < 1e-12 && (w.high - 0.58).abs() < 1e-12 && w.low_capped && w.high_capped);
        // And the chart's axis ends at 100%.
        let p = scratch("bars.svg");
        let bar = StackedBar { label: "256 KB".into(), values: vec![0.3, 0.17, 0.53], marks: vec![SegmentMark { segment: 2, low: 0.0, high: 0.55 }] };
        stacked_bars(&p, "t", "%", &["seek", "rot", "transfer"], &[bar]).unwrap();
        let top = texts(&p).iter().filter_map(|x| x.parse::<f64>().ok()).fold(0.0, f64::max);
        assert!(top <= 100.0, "a tick at {top}");
    }

    #[test]
    fn percentiles_sit_on_a_tail_scale_with_a_log_axis() {
        assert!((nines(90.0, 99.0) - 1.0).abs() < 1e-12 && (nines(99.0, 99.0) - 2.0).abs() < 1e-12);
        assert!((nines(100.0, 99.0) - 3.0).abs() < 1e-12);
        let p = scratch("pct.svg");
        let pts = [(50.0, 4.0), (90.0, 9.0), (95.0, 12.0), (99.0, 30.0), (100.0, 80.0)];
        percentiles(&p, "t", "ms", &[line("response", &pts)], None).unwrap();
        let t = texts(&p);
        for label in ["p50", "p90", "p95", "p99", "max"] {
            assert!(t.iter().any(|x| x == label), "{label} in {t:?}");
        }
    }
}
