//! SVG plots for the command line, drawn with [`plotters`] (the Python package draws the same
//! data with matplotlib).
//!
//! Every figure is a chart on the left and its legend in a panel of its own on the right, so a
//! legend never covers data however the data falls. Reproductions pass the paper's published
//! figures as [`Reference`] marks, drawn in black beside ours.
//!
//! Text is written as SVG `<text>` elements and rendered by whatever shows the file, so neither
//! building nor running needs a font on the machine (plotters' `ttf` feature is off; it lays out
//! labels with its built-in size estimate).

use std::path::Path;

use plotters::coord::Shift;
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
pub enum Reference {
    /// A value at every x (a dashed horizontal line).
    Level { label: String, y: f64 },
    /// A range at every x (a shaded band).
    Band { label: String, low: f64, high: f64 },
    /// A value at one x (a dashed vertical line).
    At { label: String, x: f64 },
    /// One point.
    Point { label: String, x: f64, y: f64 },
}

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

/// How a legend entry is drawn.
enum Swatch {
    Box(RGBColor),
    Stroke(RGBColor),
    Dashed,
    Shade,
    Whisker,
    Dot,
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
            Swatch::Dashed => {
                for x in (x0..x1).step_by(8) {
                    area.draw(&PathElement::new(vec![(x, y), ((x + 4).min(x1), y)], PAPER.stroke_width(2)))?;
                }
            }
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

/// The root area, and it split into the chart (left) and a legend panel wide enough for `labels`.
fn split_for_legend<'a, 'l>(
    path: &'a Path,
    chart_width: u32,
    labels: impl Iterator<Item = &'l str>,
) -> Result<(Area<'a>, Area<'a>, Area<'a>), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
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
    let (root, chart_area, legend_area) = split_for_legend(path, chart_width, labels)?;
    // Bar i is centred on x = i; the axis runs half a slot past the first and last bars, so
    // there is no empty slot.
    let n = bars.len().max(1) as f64;
    // Up to 100%, or further when a paper mark reaches past it.
    let top = bars
        .iter()
        .flat_map(|b| b.marks.iter().map(|m| (b.values.iter().take(m.segment).sum::<f64>() + m.high) * 100.0))
        .fold(100.0, f64::max);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", CAPTION_FONT))
        .margin(12)
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
            let base: f64 = b.values.iter().take(m.segment).sum::<f64>() * 100.0;
            let (lo, hi) = (base + m.low * 100.0, base + m.high * 100.0);
            let cap = 0.04;
            chart.draw_series([
                PathElement::new(vec![(x, lo), (x, hi)], PAPER.stroke_width(2)),
                PathElement::new(vec![(x - cap, lo), (x + cap, lo)], PAPER.stroke_width(2)),
                PathElement::new(vec![(x - cap, hi), (x + cap, hi)], PAPER.stroke_width(2)),
            ])?;
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

/// The smallest and largest of `values`, or `None` when there are none (or none is finite).
fn extent(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.filter(|v| v.is_finite()).fold(None, |acc, v| Some(acc.map_or((v, v), |(a, b): (f64, f64)| (a.min(v), b.max(v)))))
}

/// Draws lines, and the paper's figures as [`Reference`] marks, to an SVG file.
pub fn lines(path: &Path, title: &str, x_desc: &str, y_desc: &str, series: &[Line], references: &[Reference]) -> PlotResult {
    let reference_label = |r: &Reference| match r {
        Reference::Level { label, .. } | Reference::Band { label, .. } | Reference::At { label, .. } | Reference::Point { label, .. } => label.clone(),
    };
    let labels: Vec<String> = series.iter().map(|s| s.label.clone()).chain(references.iter().map(reference_label)).collect();
    let (root, chart_area, legend_area) = split_for_legend(path, 720, labels.iter().map(String::as_str))?;
    // The axes cover the data and every reference mark.
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).chain(references.iter().filter_map(|r| match r {
        Reference::At { x, .. } | Reference::Point { x, .. } => Some(*x),
        _ => None,
    }));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain(references.iter().flat_map(|r| match r {
        Reference::Level { y, .. } | Reference::Point { y, .. } => vec![*y],
        Reference::Band { low, high, .. } => vec![*low, *high],
        Reference::At { .. } => vec![],
    }));
    let (x0, x1) = extent(xs).unwrap_or((0.0, 1.0));
    let (y0, y1) = extent(ys).unwrap_or((0.0, 1.0));
    let pad = ((y1 - y0) * 0.05).max(1e-9);
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", CAPTION_FONT))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, (y0 - pad)..(y1 + pad))?;
    chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw()?;
    let mut entries = Vec::new();
    for r in references {
        let dashes = |from: (f64, f64), to: (f64, f64)| {
            // Twenty dashes along the segment.
            (0..20).map(move |i| {
                let at = |t: f64| (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t);
                PathElement::new(vec![at(f64::from(i) / 20.0), at((f64::from(i) + 0.5) / 20.0)], PAPER.stroke_width(2))
            })
        };
        match r {
            Reference::Level { label, y } => {
                chart.draw_series(dashes((x0, *y), (x1, *y)))?;
                entries.push((label.clone(), Swatch::Dashed));
            }
            Reference::At { label, x } => {
                chart.draw_series(dashes((*x, y0 - pad), (*x, y1 + pad)))?;
                entries.push((label.clone(), Swatch::Dashed));
            }
            Reference::Band { label, low, high } => {
                chart.draw_series([Rectangle::new([(x0, *low), (x1, *high)], PAPER.mix(0.15).filled())])?;
                entries.push((label.clone(), Swatch::Shade));
            }
            Reference::Point { label, x, y } => {
                chart.draw_series([Circle::new((*x, *y), 5, PAPER.filled())])?;
                entries.push((label.clone(), Swatch::Dot));
            }
        }
    }
    let mut line_entries = Vec::new();
    for (k, s) in series.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        chart.draw_series(LineSeries::new(s.points.iter().copied(), colour.stroke_width(2)))?;
        line_entries.push((s.label.clone(), Swatch::Stroke(colour)));
    }
    line_entries.extend(entries);
    draw_legend(&legend_area, &line_entries)?;
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
    let (root, chart_area, legend_area) = split_for_legend(path, 720, labels)?;
    let ys = series.iter().flat_map(|s| s.values.iter().copied()).chain(marks.iter().flat_map(|m| [m.low, m.high])).chain([0.0]);
    let (y0, y1) = extent(ys).unwrap_or((0.0, 1.0));
    let pad = ((y1 - y0) * 0.05).max(1e-9);
    let n = categories.len().max(1);
    let names: Vec<String> = categories.iter().map(|c| (*c).to_string()).collect();
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", CAPTION_FONT))
        .margin(12)
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
