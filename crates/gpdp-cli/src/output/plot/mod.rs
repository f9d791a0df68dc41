//! Headless figures: heat maps with contours, line charts, histograms, as
//! PNG or SVG (chosen by the file's extension, [`FigureFormat::of`]).
//!
//! One drawing code serves both, generic over plotters' `DrawingBackend`.
//! A PNG is drawn into an in-memory RGB buffer at SS× the size and averaged
//! down (text in the embedded DejaVu Sans, so no system fonts are needed);
//! an SVG is drawn with the same geometry — its viewBox is the supersampled
//! size, its width and height the PNG's — text as `<text>` naming DejaVu Sans
//! with the generic sans-serif fallback. Either is written atomically.
//! Inputs are validated first; bad input is an error naming the chart and
//! series, never a panic. Non-finite points (and, on a log axis, non-positive
//! ones) are skipped; lines break at them.
#![allow(dead_code)] // used by release/demo/mia/excursion commands

use std::path::Path;
use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result, anyhow, ensure};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
pub use plotters::style::RGBColor;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use gpdp::postprocess::{Grid2, boundary_lines};

mod axes;
pub mod bands;
mod heat;
mod hist;
mod layout;
mod lines;
mod render;
mod svg;
#[cfg(test)]
mod tests;

use axes::*;
use heat::*;
use hist::*;
use layout::*;
use lines::*;
use render::*;
use svg::Svg;

pub use render::QUALITATIVE;

// ───────────────────────────── public API ─────────────────────────────

/// The file format of a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FigureFormat {
    /// A raster image, supersampled (antialiased).
    Png,
    /// Vector graphics: a heat map's cells as one embedded PNG image (a pixel
    /// per cell, drawn sharp), lines as polylines, text as `<text>` elements.
    Svg,
}

impl FigureFormat {
    /// The format a figure written to `path` gets: SVG for a `.svg`
    /// extension (any case), PNG otherwise.
    pub fn of(path: &Path) -> FigureFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("svg") => FigureFormat::Svg,
            _ => FigureFormat::Png,
        }
    }

    /// The file extension, without the dot.
    pub fn ext(self) -> &'static str {
        match self {
            FigureFormat::Png => "png",
            FigureFormat::Svg => "svg",
        }
    }
}

impl FromStr for FigureFormat {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "png" => Ok(FigureFormat::Png),
            "svg" => Ok(FigureFormat::Svg),
            _ => Err(anyhow!("'{s}': expected png or svg (or a list such as png,svg)")),
        }
    }
}

impl std::fmt::Display for FigureFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.ext())
    }
}

/// Colour maps for heat maps: the library's, shared with the web viewer.
pub use gpdp::postprocess::palette::Palette;

/// One heat-map panel: a grid drawn as one cell per grid point (cells
/// centred on the points), optional level-set lines and point markers.
pub struct HeatPanel<'a> {
    /// Panel title (above the map); empty = none.
    pub title: String,
    /// The values to colour.
    pub grid: &'a Grid2,
    /// Colour map.
    pub palette: Palette,
    /// Colour range (values outside get the end colours, and the colour bar
    /// an extend arrow at that end); default min..max of the values
    /// (symmetric about 0 for [`Palette::Diverging`]).
    pub range: Option<(f64, f64)>,
    /// Level sets drawn as lines over the map.
    pub contours: Vec<Contour<'a>>,
    /// Markers (e.g. public or synthetic points); empty = none. Points outside
    /// the map or non-finite are skipped.
    pub points: Vec<[f64; 2]>,
    /// Horizontal axis label.
    pub x_label: String,
    /// Vertical axis label.
    pub y_label: String,
    /// Draw a colour bar to the right of the map.
    pub colorbar: bool,
    /// Caption above the colour bar (e.g. the unit); empty = none.
    pub colorbar_label: String,
    /// Hatch the excursion set {v ≥ level} of the panel's grid (thin dark
    /// lines at 45° over exactly its cells, the colours visible between
    /// them), e.g. the released set.
    pub shade_above: Option<f64>,
}

/// A level set {v = level} of `grid` (which may differ from the panel's grid;
/// it is clipped to the panel) drawn as lines.
pub struct Contour<'a> {
    /// The field whose level set is drawn.
    pub grid: &'a Grid2,
    /// The level.
    pub level: f64,
    /// Line colour.
    pub color: RGBColor,
    /// Line width in pixels (≥ 1).
    pub width: u32,
}

/// Where a heat-map panel's map lies in the written image: its plotting area in
/// image pixels (edges; x from the left, y from the top) and the domain
/// rectangle it shows — enough for a world file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PanelGeoref {
    /// Left and right pixel edges of the map.
    pub px: (f64, f64),
    /// Top and bottom pixel edges of the map.
    pub py: (f64, f64),
    /// The domain rectangle shown: x from `x.0` (left) to `x.1`, y from `y.0` (bottom) to `y.1` (top).
    pub x: (f64, f64),
    /// See `x`.
    pub y: (f64, f64),
}

/// Heat-map panels side by side, with an optional figure title on top, as
/// PNG or SVG ([`FigureFormat::of`] the path).
///
/// Each panel is `panel_px`×`panel_px` pixels, plus about 0.24·`panel_px` to
/// its right for the colour bar when it has one; the map keeps the domain's
/// aspect ratio (bounded to 1:2…2:1). Axis ticks are in domain coordinates.
/// Returns where each panel's map lies in the image.
pub fn heatmap_figure(
    path: &Path,
    panels: &[HeatPanel],
    panel_px: u32,
    suptitle: Option<&str>,
) -> Result<Vec<PanelGeoref>> {
    heatmap_grid(path, panels, &HeatLayout { panel_px, columns: panels.len().max(1), shared: None }, suptitle)
}

/// One colour bar for all panels of a [`heatmap_grid`], right of the grid.
pub struct SharedColorbar {
    /// Colour map (the panels' own palettes and ranges are replaced by it).
    pub palette: Palette,
    /// Colour range; default: the library's rule over all panels' values.
    pub range: Option<(f64, f64)>,
    /// Caption above it (e.g. the unit); empty = none.
    pub label: String,
}

/// How a [`heatmap_grid`] arranges its panels.
pub struct HeatLayout {
    /// Each panel's size: `panel_px`×`panel_px` pixels (plus its own colour
    /// bar's width when it has one).
    pub panel_px: u32,
    /// Panels per row (rows are filled left to right, top to bottom).
    pub columns: usize,
    /// One colour bar for all panels (the panels' own are then not drawn).
    pub shared: Option<SharedColorbar>,
}

/// Heat-map panels in rows of `layout.columns`, with an optional figure title
/// on top and an optional colour bar shared by all panels, as PNG or SVG
/// ([`FigureFormat::of`] the path). Returns where each panel's map lies.
pub fn heatmap_grid(
    path: &Path,
    panels: &[HeatPanel],
    layout: &HeatLayout,
    suptitle: Option<&str>,
) -> Result<Vec<PanelGeoref>> {
    let panel_px = layout.panel_px;
    ensure!(!panels.is_empty(), "heat-map figure {}: no panels", path.display());
    ensure!((160..=4000).contains(&panel_px), "heat-map panel size {panel_px} px is outside 160..=4000");
    ensure!((1..=64).contains(&layout.columns), "heat-map figure: {} columns (expected 1..=64)", layout.columns);
    for p in panels {
        validate_heat_panel(p).with_context(|| format!("heat-map panel '{}'", p.title))?;
    }
    // A shared bar: one palette and range for every panel, none of their own.
    let shared = match &layout.shared {
        Some(bar) => {
            if let Some((lo, hi)) = bar.range {
                ensure!(
                    lo.is_finite() && hi.is_finite() && lo < hi,
                    "colour range ({lo}, {hi}) must be finite with lo < hi"
                );
            }
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for p in panels {
                let (a, b) = p.grid.min_max();
                (lo, hi) = (lo.min(a), hi.max(b));
            }
            let range = gpdp::postprocess::palette::color_range(bar.palette, (lo, hi), bar.range);
            Some((bar, range))
        }
        None => None,
    };
    let panels: Vec<HeatPanel> = panels
        .iter()
        .map(|p| HeatPanel {
            title: p.title.clone(),
            grid: p.grid,
            palette: shared.map_or(p.palette, |(b, _)| b.palette),
            range: shared.map_or(p.range, |(_, r)| Some(r)),
            contours: p.contours.iter().map(|c| Contour { grid: c.grid, ..*c }).collect(),
            points: p.points.clone(),
            x_label: p.x_label.clone(),
            y_label: p.y_label.clone(),
            colorbar: p.colorbar && shared.is_none(),
            colorbar_label: p.colorbar_label.clone(),
            shade_above: p.shade_above,
        })
        .collect();
    let s = panel_px as f64 / 420.0;
    let cb_w = (0.24 * panel_px as f64).round() as u32;
    let columns = layout.columns.min(panels.len());
    let rows = panels.len().div_ceil(columns);
    let widths: Vec<u32> = panels.iter().map(|p| panel_px + if p.colorbar { cb_w } else { 0 }).collect();
    // Each column as wide as its widest panel.
    let col_w: Vec<u32> =
        (0..columns).map(|c| widths.iter().skip(c).step_by(columns).copied().max().unwrap_or(0)).collect();
    let sup = suptitle.filter(|t| !t.trim().is_empty());
    let sup_h = if sup.is_some() { (34.0 * s).round() as u32 } else { 0 };
    let bar_w = if shared.is_some() { cb_w } else { 0 };
    let size = (col_w.iter().sum::<u32>() + bar_w, rows as u32 * panel_px + sup_h);
    write_figure(
        path,
        size,
        &HeatFigure { panels: &panels, panel_px, s, cb_w, col_w, columns, bar: shared, sup, sup_h, size },
    )
}

/// The laid-out [`heatmap_grid`].
struct HeatFigure<'a, 'g> {
    panels: &'a [HeatPanel<'g>],
    panel_px: u32,
    s: f64,
    cb_w: u32,
    col_w: Vec<u32>,
    columns: usize,
    bar: Option<(&'a SharedColorbar, (f64, f64))>,
    sup: Option<&'a str>,
    sup_h: u32,
    size: (u32, u32),
}

impl Figure for HeatFigure<'_, '_> {
    type Out = Vec<PanelGeoref>;
    fn draw<DB: Backend>(&self, root: &Area<DB>) -> Result<Vec<PanelGeoref>> {
        let (size, s, sup_h, panel_px, cb_w) = (self.size, self.s, self.sup_h, self.panel_px, self.cb_w);
        if let Some(t) = self.sup {
            // The title fits the figure's width: a long one is set smaller.
            let mut px = 19.0 * s * SS as f64;
            let avail = 0.96 * (size.0 * SS) as f64;
            if let Ok((w, _)) = root.estimate_text_size(t, &font(px)) {
                if w as f64 > avail {
                    px *= avail / w as f64;
                }
            }
            let style = font(px).pos(Pos::new(HPos::Center, VPos::Center));
            let at = ((size.0 * SS) as i32 / 2, (sup_h * SS) as i32 * 11 / 20);
            root.draw(&Text::new(t.to_string(), at, style)).map_err(pe)?;
        }
        let mut georefs = Vec::with_capacity(self.panels.len());
        for (k, p) in self.panels.iter().enumerate() {
            let (col, row) = (k % self.columns, k / self.columns);
            let x: u32 = self.col_w[..col].iter().sum();
            let y = sup_h + row as u32 * panel_px;
            let w = panel_px + if p.colorbar { cb_w } else { 0 };
            let area = root.clone().shrink((x * SS, y * SS), (w * SS, panel_px * SS));
            let g = draw_heat_panel(&area, p, s * SS as f64, if p.colorbar { cb_w * SS } else { 0 })
                .with_context(|| format!("drawing heat-map panel '{}'", p.title))?;
            georefs.push(g);
        }
        if let (Some((bar, range)), Some(first), Some(last)) = (self.bar, georefs.first(), georefs.last()) {
            // From the top of the first row's maps to the bottom of the last row's.
            let x: u32 = self.col_w.iter().sum();
            let area = root.clone().shrink((x * SS, 0), (cb_w * SS, size.1 * SS));
            let (top, bottom) = ((first.py.0 * SS as f64) as u32, ((size.1 as f64 - last.py.1) * SS as f64) as u32);
            let grids: Vec<&Grid2> = self.panels.iter().map(|p| p.grid).collect();
            let cb = ColorBar { palette: bar.palette, range, extend: extends(&grids, range), label: &bar.label };
            draw_colorbar(&area, &cb, &Sizes::scaled(s * SS as f64), top, bottom)?;
        }
        Ok(georefs)
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesStyle {
    /// Solid line.
    Line,
    /// Dashed line.
    Dashed,
    /// Markers only.
    Points,
    /// Solid line with markers.
    LinePoints,
}

/// One data series of a [`LineChart`].
pub struct Series {
    /// Legend entry; empty = not in the legend.
    pub label: String,
    /// Abscissae.
    pub xs: Vec<f64>,
    /// Ordinates (same length as `xs`).
    pub ys: Vec<f64>,
    /// Half-widths of ± error bars (same length as `xs`); non-finite or
    /// negative entries draw no bar.
    pub err: Option<Vec<f64>>,
    /// Line/marker style.
    pub style: SeriesStyle,
    /// Colour; default: the next colour of a fixed qualitative palette.
    pub color: Option<RGBColor>,
}

/// A line chart (sample paths, attack-vs-ε curves, ε vs r, …).
pub struct LineChart {
    /// Title above the chart; empty = none.
    pub title: String,
    /// Horizontal axis label.
    pub x_label: String,
    /// Vertical axis label.
    pub y_label: String,
    /// Logarithmic horizontal axis (non-positive x are skipped).
    pub log_x: bool,
    /// Logarithmic vertical axis (non-positive y are skipped).
    pub log_y: bool,
    /// The data (at least one series).
    pub series: Vec<Series>,
    /// Horizontal guides (e.g. ε = 10) with a label drawn at their right end.
    pub hlines: Vec<(f64, String)>,
    /// Horizontal range; default: the data with a 5% margin.
    pub x_range: Option<(f64, f64)>,
    /// Vertical range; default: the data, error bars and guides with a 5% margin.
    pub y_range: Option<(f64, f64)>,
    /// Horizontal tick positions (data units), each labelled with its value
    /// (e.g. every planned ε); default: automatic ticks.
    pub x_ticks: Option<Vec<f64>>,
}

/// Line charts side by side, each `chart_px` = (width, height) pixels, as
/// PNG or SVG ([`FigureFormat::of`] the path).
pub fn line_charts(path: &Path, charts: &[LineChart], chart_px: (u32, u32)) -> Result<()> {
    ensure!(!charts.is_empty(), "line-chart figure {}: no charts", path.display());
    check_chart_px(chart_px)?;
    for c in charts {
        validate_line_chart(c).with_context(|| format!("line chart '{}'", c.title))?;
    }
    let size = (chart_px.0 * charts.len() as u32, chart_px.1);
    write_figure(path, size, &Charts { charts, chart_px })
}

/// A chart that draws itself into an area of any backend.
trait DrawChart {
    /// What it is, for error messages.
    const WHAT: &'static str;
    fn title(&self) -> &str;
    fn draw_into<DB: Backend>(&self, area: &Area<DB>) -> Result<()>;
}

impl DrawChart for LineChart {
    const WHAT: &'static str = "line chart";
    fn title(&self) -> &str {
        &self.title
    }
    fn draw_into<DB: Backend>(&self, area: &Area<DB>) -> Result<()> {
        draw_line_chart(area, self)
    }
}

impl DrawChart for HistChart {
    const WHAT: &'static str = "histogram";
    fn title(&self) -> &str {
        &self.title
    }
    fn draw_into<DB: Backend>(&self, area: &Area<DB>) -> Result<()> {
        draw_hist_chart(area, self)
    }
}

/// Charts of one kind side by side, `chart_px` each.
struct Charts<'c, C> {
    charts: &'c [C],
    chart_px: (u32, u32),
}

impl<C: DrawChart> Figure for Charts<'_, C> {
    type Out = ();
    fn draw<DB: Backend>(&self, root: &Area<DB>) -> Result<()> {
        let (w, h) = self.chart_px;
        for (k, c) in self.charts.iter().enumerate() {
            let area = root.clone().shrink((w * SS * k as u32, 0), (w * SS, h * SS));
            c.draw_into(&area).with_context(|| format!("drawing {} '{}'", C::WHAT, c.title()))?;
        }
        Ok(())
    }
}

/// One sample set of a [`HistChart`], with an optional fitted density curve.
pub struct HistSet {
    /// Legend entry; empty = not in the legend.
    pub label: String,
    /// The samples (non-finite ones are skipped; at least one must be finite).
    pub samples: Vec<f64>,
    /// A density curve (xs, ys) drawn over the histogram.
    pub density: Option<(Vec<f64>, Vec<f64>)>,
    /// Colour; default: the next colour of a fixed qualitative palette.
    pub color: Option<RGBColor>,
}

/// Overlaid histograms, normalised as densities, with fitted density curves
/// (e.g. shadow-model statistics for members and non-members).
pub struct HistChart {
    /// Title above the chart; empty = none.
    pub title: String,
    /// Horizontal axis label (the vertical one is "density").
    pub x_label: String,
    /// Number of equal-width bins over the range (shared by all sets).
    pub bins: usize,
    /// The sample sets (at least one).
    pub sets: Vec<HistSet>,
    /// Range of the bins; default: min..max of all finite samples.
    pub range: Option<(f64, f64)>,
}

/// Histogram charts side by side, each `chart_px` = (width, height) pixels,
/// as PNG or SVG ([`FigureFormat::of`] the path).
///
/// Bar heights are count / (n · bin width) with n the number of finite
/// samples of the set, so the histogram estimates the same density as a
/// fitted curve (its area is 1 when every sample falls in the range, and the
/// fraction inside otherwise).
pub fn histogram_charts(path: &Path, charts: &[HistChart], chart_px: (u32, u32)) -> Result<()> {
    ensure!(!charts.is_empty(), "histogram figure {}: no charts", path.display());
    check_chart_px(chart_px)?;
    for c in charts {
        validate_hist_chart(c).with_context(|| format!("histogram '{}'", c.title))?;
    }
    let size = (chart_px.0 * charts.len() as u32, chart_px.1);
    write_figure(path, size, &Charts { charts, chart_px })
}

/// Writes an RGB buffer (3 bytes per pixel, rows top to bottom) as a PNG via
/// a temporary file in the same directory and a rename, so a failure never
/// leaves a partial file.
pub fn write_png_atomically(path: &Path, (w, h): (u32, u32), rgb: &[u8]) -> Result<()> {
    ensure!(rgb.len() == 3 * w as usize * h as usize, "image buffer has {} bytes, expected {w}×{h}×3", rgb.len());
    // The encoder picks the format from the extension, hence the ".png".
    replace_atomically(path, "png", |tmp| {
        let mut backend = BitMapBackend::new(tmp, (w, h));
        backend.blit_bitmap((0, 0), (w, h), rgb).map_err(bitmap_error)?;
        backend.present().map_err(bitmap_error)
    })
}

/// The bitmap backend's error by its cause's message (e.g. "No space left on
/// device (os error 28)"): its own `Display` is its `Debug` form.
fn bitmap_error(e: plotters_backend::DrawingErrorKind<plotters_bitmap::BitMapBackendError>) -> anyhow::Error {
    use plotters_backend::DrawingErrorKind;
    use plotters_bitmap::BitMapBackendError as B;
    match e {
        DrawingErrorKind::DrawingError(B::IOError(io)) => anyhow::Error::new(io),
        DrawingErrorKind::DrawingError(B::ImageError(img)) => anyhow!("{img}"),
        DrawingErrorKind::DrawingError(B::InvalidBuffer) => anyhow!("the image buffer does not match its size"),
        DrawingErrorKind::FontError(f) => anyhow!("font error: {f}"),
        #[allow(unreachable_patterns)]
        DrawingErrorKind::DrawingError(other) => anyhow!("cannot encode the image: {other}"),
    }
}

/// Writes `path` via `write` into a temporary file (named with extension
/// `ext`) in the same directory and a rename, so a failure never leaves a
/// partial file.
fn replace_atomically(path: &Path, ext: &str, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|s| s.to_str()).unwrap_or("figure");
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.tmp-{}-{n}.{ext}", std::process::id()));
    let result = write(&tmp).and_then(|()| {
        std::fs::rename(&tmp, path).with_context(|| format!("cannot move the figure into {}", path.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}
