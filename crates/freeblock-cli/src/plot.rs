//! SVG plots for the command line (the Python package draws the same data with matplotlib).

use std::path::Path;

use plotters::prelude::*;

/// One stacked bar: a label and its segment values (fractions, summing to ≤ 1).
pub struct StackedBar {
    pub label: String,
    pub values: Vec<f64>,
}

const COLOURS: [RGBColor; 5] = [RGBColor(76, 114, 176), RGBColor(221, 132, 82), RGBColor(85, 168, 104), RGBColor(196, 78, 82), RGBColor(129, 114, 179)];

/// Draws stacked bars of fractions (0–100%) to an SVG file.
pub fn stacked_bars(path: &Path, title: &str, segments: &[&str], bars: &[StackedBar]) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let width = (140 + 90 * bars.len() as u32).max(480);
    let root = SVGBackend::new(path, (width, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = bars.len() as i32;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .right_y_label_area_size(110)
        .build_cartesian_2d((0..n).into_segmented(), 0.0..100.0)?;
    let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc("% of disk head time")
        .x_labels(bars.len())
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .draw()?;
    for (k, seg) in segments.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let rects = bars.iter().enumerate().map(move |(i, b)| {
            let base: f64 = b.values[..k].iter().sum::<f64>() * 100.0;
            let top = base + b.values[k] * 100.0;
            let i = i as i32;
            Rectangle::new([(SegmentValue::Exact(i), base), (SegmentValue::Exact(i + 1), top)], colour.filled())
        });
        chart.draw_series(rects)?.label(*seg).legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
    }
    chart.configure_series_labels().position(SeriesLabelPosition::UpperRight).background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}

/// One named line of `(x, y)` points.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Draws lines to an SVG file.
pub fn lines(path: &Path, title: &str, x_desc: &str, y_desc: &str, series: &[Line]) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (y0, y1) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    let pad = ((y1 - y0) * 0.05).max(1e-9);
    let root = SVGBackend::new(path, (760, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1.max(x0 + 1e-9), (y0 - pad)..(y1 + pad))?;
    chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw()?;
    for (k, s) in series.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), colour.stroke_width(2)))?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], colour.stroke_width(2)));
    }
    chart.configure_series_labels().position(SeriesLabelPosition::UpperRight).background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}
