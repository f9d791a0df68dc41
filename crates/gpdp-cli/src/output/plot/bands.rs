//! Line charts with shaded bands (e.g. a mean over seeds with its 95%
//! band), laid out in a grid of rows and columns.
//!
//! Each series is a line through (x, y) over a band between `lo` and `hi`
//! filled with the series' colour at 20% opacity. Non-finite values break
//! the line (y) or the band (lo, hi) there. Axes are linear and span every
//! finite y, lo and hi, with a 5% margin.

use super::*;

/// One series of a [`BandChart`]: a line and its band.
pub struct BandSeries {
    /// Legend entry; empty = not in the legend.
    pub label: String,
    /// Abscissae.
    pub xs: Vec<f64>,
    /// The line (same length as `xs`).
    pub ys: Vec<f64>,
    /// The band's lower edge (same length; non-finite: no band there).
    pub lo: Vec<f64>,
    /// The band's upper edge (same length).
    pub hi: Vec<f64>,
    /// Colour; default: the next colour of a fixed qualitative palette.
    pub color: Option<RGBColor>,
    /// Draw the line dashed.
    pub dashed: bool,
}

/// A chart of [`BandSeries`].
pub struct BandChart {
    /// Title above the chart; empty = none.
    pub title: String,
    /// Horizontal axis label.
    pub x_label: String,
    /// Vertical axis label.
    pub y_label: String,
    /// The series (at least one).
    pub series: Vec<BandSeries>,
    /// Draw the legend (e.g. only in the first chart of a row).
    pub legend: bool,
}

fn validate(c: &BandChart) -> Result<()> {
    ensure!(!c.series.is_empty(), "no series");
    for (k, s) in c.series.iter().enumerate() {
        let name = if s.label.is_empty() { format!("series {}", k + 1) } else { format!("series '{}'", s.label) };
        ensure!(!s.xs.is_empty(), "{name} is empty");
        for (what, len) in [("ys", s.ys.len()), ("lo", s.lo.len()), ("hi", s.hi.len())] {
            ensure!(len == s.xs.len(), "{name}: xs has {} values but {what} has {len}", s.xs.len());
        }
    }
    Ok(())
}

/// Band charts in rows of `columns`, each `chart_px` = (width, height)
/// pixels, as PNG or SVG ([`FigureFormat::of`] the path).
pub fn band_charts(path: &Path, charts: &[BandChart], columns: usize, chart_px: (u32, u32)) -> Result<()> {
    ensure!(!charts.is_empty(), "band-chart figure {}: no charts", path.display());
    ensure!((1..=64).contains(&columns), "band-chart figure: {columns} columns (expected 1..=64)");
    check_chart_px(chart_px)?;
    for c in charts {
        validate(c).with_context(|| format!("band chart '{}'", c.title))?;
    }
    let columns = columns.min(charts.len());
    let rows = charts.len().div_ceil(columns) as u32;
    let size = (chart_px.0 * columns as u32, chart_px.1 * rows);
    write_figure(path, size, &BandFigure { charts, columns, chart_px })
}

struct BandFigure<'c> {
    charts: &'c [BandChart],
    columns: usize,
    chart_px: (u32, u32),
}

impl Figure for BandFigure<'_> {
    type Out = ();
    fn draw<DB: Backend>(&self, root: &Area<DB>) -> Result<()> {
        let (w, h) = self.chart_px;
        for (k, c) in self.charts.iter().enumerate() {
            let (col, row) = ((k % self.columns) as u32, (k / self.columns) as u32);
            let area = root.clone().shrink((w * SS * col, h * SS * row), (w * SS, h * SS));
            draw_band_chart(&area, c).with_context(|| format!("drawing band chart '{}'", c.title))?;
        }
        Ok(())
    }
}

/// The runs of consecutive indices where `ok` holds.
fn runs(len: usize, ok: impl Fn(usize) -> bool) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new()];
    for i in 0..len {
        if ok(i) {
            out.last_mut().expect("never empty").push(i);
        } else if !out.last().expect("never empty").is_empty() {
            out.push(Vec::new());
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

fn draw_band_chart<DB: DrawingBackend>(area: &Area<DB>, c: &BandChart) -> Result<()> {
    let (w, h) = area.dim_in_pixel();
    let sz = Sizes::for_area(w, h);
    let finite = |v: &f64| v.is_finite();
    let xvals: Vec<f64> = c.series.iter().flat_map(|s| s.xs.iter().copied().filter(finite)).collect();
    let yvals: Vec<f64> =
        c.series.iter().flat_map(|s| s.ys.iter().chain(&s.lo).chain(&s.hi).copied().filter(finite)).collect();
    let ax = make_axis(false, None, xvals, 6);
    let ay = make_axis(false, None, yvals, 6);
    let frame = frame_for(area, &sz, &c.title, &ay, &c.x_label, &c.y_label);
    let mut chart = build_chart(area, &ax, &ay, &frame, (sz.pad / 2, 0, sz.pad + sz.pad / 2, sz.pad / 2))?;
    draw_mesh(&mut chart, &ax, &ay, &sz, &c.x_label, &c.y_label, true)?;
    let color_of = |k: usize, s: &BandSeries| s.color.unwrap_or(QUALITATIVE[k % QUALITATIVE.len()]);
    // Bands first, so that every line is drawn over every band.
    for (k, s) in c.series.iter().enumerate() {
        let fill = color_of(k, s).mix(0.2).filled();
        let ok = |i: usize| s.xs[i].is_finite() && s.lo[i].is_finite() && s.hi[i].is_finite();
        for run in runs(s.xs.len(), ok) {
            if run.len() < 2 {
                continue;
            }
            let mut poly: Vec<(f64, f64)> = run.iter().map(|&i| (s.xs[i], s.hi[i])).collect();
            poly.extend(run.iter().rev().map(|&i| (s.xs[i], s.lo[i])));
            chart.draw_series(std::iter::once(Polygon::new(poly, fill))).map_err(pe)?;
        }
    }
    let lw = (2.0 * sz.tick / 13.0).round().max(1.0) as u32;
    let mut legend = Vec::new();
    let mut occupied = Vec::new();
    for (k, s) in c.series.iter().enumerate() {
        let color = color_of(k, s);
        let line = color.stroke_width(lw);
        let ok = |i: usize| s.xs[i].is_finite() && s.ys[i].is_finite();
        for run in runs(s.xs.len(), ok) {
            let pts: Vec<(f64, f64)> = run.iter().map(|&i| (s.xs[i], s.ys[i])).collect();
            for p in &pts {
                occupied.push(((p.0 - ax.lo) / (ax.hi - ax.lo), (p.1 - ay.lo) / (ay.hi - ay.lo)));
            }
            if s.dashed {
                let (d, g) = ((8.0 * sz.tick / 13.0) as u32, (5.0 * sz.tick / 13.0) as u32);
                chart.draw_series(DashedLineSeries::new(pts, d, g, line)).map_err(pe)?;
            } else {
                chart.draw_series(LineSeries::new(pts, line)).map_err(pe)?;
            }
        }
        if c.legend && !s.label.is_empty() {
            legend.push((s.label.clone(), Glyph::Line { color, width: lw, dashed: s.dashed, marker: None }));
        }
    }
    draw_box(&mut chart, &ax, &ay, &sz)?;
    draw_legend(area, &chart, &legend, &occupied, &sz)?;
    draw_title(area, &chart, &c.title, &sz, frame.title_h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(n: usize) -> BandChart {
        let xs: Vec<f64> = (1..=n).map(|t| t as f64).collect();
        let ys: Vec<f64> = xs.iter().map(|t| 1.0 / t).collect();
        BandChart {
            title: "simple regret".into(),
            x_label: "round".into(),
            y_label: "regret".into(),
            series: vec![BandSeries {
                label: "a".into(),
                lo: ys.iter().map(|y| y - 0.1).collect(),
                hi: ys.iter().map(|y| y + 0.1).collect(),
                xs,
                ys,
                color: None,
                dashed: false,
            }],
            legend: true,
        }
    }

    #[test]
    fn band_charts_write_a_png_of_the_grid_size_and_refuse_bad_series() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("bands.png");
        band_charts(&p, &[chart(10), chart(5), chart(3)], 2, (400, 300)).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        // PNG IHDR: width and height, big-endian, at bytes 16..24.
        let wh = |o: usize| u32::from_be_bytes(bytes[o..o + 4].try_into().unwrap());
        assert_eq!((wh(16), wh(20)), (800, 600));
        let mut bad = chart(4);
        bad.series[0].lo.pop();
        let e = band_charts(&p, &[bad], 1, (400, 300)).unwrap_err();
        assert!(format!("{e:#}").contains("xs has 4 values but lo has 3"), "{e:#}");
        // A NaN band edge (one seed: no SE) draws the line alone.
        let mut nan = chart(4);
        nan.series[0].lo = vec![f64::NAN; 4];
        band_charts(&d.path().join("nan.svg"), &[nan], 1, (400, 300)).unwrap();
    }
}
