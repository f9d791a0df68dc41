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

// ───────────────────────────── public API ─────────────────────────────

/// The file format of a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FigureFormat {
    /// A raster image, supersampled (antialiased).
    Png,
    /// Vector graphics: one `<rect>` per heat-map cell, lines as polylines,
    /// text as `<text>` elements.
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

/// Colour maps for heat maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    /// Perceptually uniform dark violet → yellow (matplotlib's default).
    Viridis,
    /// Blue → white → red (ColorBrewer RdBu); white at the middle of the
    /// colour range, which by default is symmetric about 0: [−m, m] with
    /// m = max |v|.
    Diverging,
    /// Black → white.
    Grey,
}

/// One heat-map panel: a grid drawn as one rectangle per grid point (cells
/// centred on the points), optional level-set lines and point markers.
pub struct HeatPanel<'a> {
    /// Panel title (above the map); empty = none.
    pub title: String,
    /// The values to colour.
    pub grid: &'a Grid2,
    /// Colour map.
    pub palette: Palette,
    /// Colour range (values outside are clamped); default min..max of the
    /// values (symmetric about 0 for [`Palette::Diverging`]).
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
    /// Shade the excursion set {v ≥ level} of the panel's grid (a translucent
    /// dark fill over the colours), e.g. the released set.
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
    ensure!(!panels.is_empty(), "heat-map figure {}: no panels", path.display());
    ensure!((160..=4000).contains(&panel_px), "heat-map panel size {panel_px} px is outside 160..=4000");
    for p in panels {
        validate_heat_panel(p).with_context(|| format!("heat-map panel '{}'", p.title))?;
    }
    let s = panel_px as f64 / 420.0;
    let cb_w = (0.24 * panel_px as f64).round() as u32;
    let widths: Vec<u32> = panels.iter().map(|p| panel_px + if p.colorbar { cb_w } else { 0 }).collect();
    let sup = suptitle.filter(|t| !t.trim().is_empty());
    let sup_h = if sup.is_some() { (34.0 * s).round() as u32 } else { 0 };
    let size = (widths.iter().sum::<u32>(), panel_px + sup_h);
    write_figure(path, size, &HeatFigure { panels, panel_px, s, cb_w, widths, sup, sup_h, size })
}

/// The laid-out [`heatmap_figure`].
struct HeatFigure<'a, 'g> {
    panels: &'a [HeatPanel<'g>],
    panel_px: u32,
    s: f64,
    cb_w: u32,
    widths: Vec<u32>,
    sup: Option<&'a str>,
    sup_h: u32,
    size: (u32, u32),
}

impl Figure for HeatFigure<'_, '_> {
    type Out = Vec<PanelGeoref>;
    fn draw<DB: DrawingBackend>(&self, root: &Area<DB>) -> Result<Vec<PanelGeoref>> {
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
        let mut x = 0;
        for (p, &w) in self.panels.iter().zip(&self.widths) {
            let area = root.clone().shrink((x * SS, sup_h * SS), (w * SS, panel_px * SS));
            let g = draw_heat_panel(&area, p, s * SS as f64, if p.colorbar { cb_w * SS } else { 0 })
                .with_context(|| format!("drawing heat-map panel '{}'", p.title))?;
            georefs.push(g);
            x += w;
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
    fn draw_into<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<()>;
}

impl DrawChart for LineChart {
    const WHAT: &'static str = "line chart";
    fn title(&self) -> &str {
        &self.title
    }
    fn draw_into<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<()> {
        draw_line_chart(area, self)
    }
}

impl DrawChart for HistChart {
    const WHAT: &'static str = "histogram";
    fn title(&self) -> &str {
        &self.title
    }
    fn draw_into<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<()> {
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
    fn draw<DB: DrawingBackend>(&self, root: &Area<DB>) -> Result<()> {
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

// ───────────────────────────── rendering core ─────────────────────────────

type Area<DB> = DrawingArea<DB, Shift>;
type Coord = Cartesian2d<AxisCoord, AxisCoord>;
type Chart<'a, DB> = ChartContext<'a, DB, Coord>;

/// The font family of all text: the embedded DejaVu Sans is registered with
/// plotters under this name (which PNGs are drawn with), and SVGs name it as
/// their `font-family` — DejaVu Sans where installed, else the viewer's
/// generic sans-serif font.
const FONT: &str = "DejaVu Sans, sans-serif";
const FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Registers the embedded font with plotters once (also as plotters'
/// default family, sans-serif).
fn ensure_font() -> Result<()> {
    static OK: OnceLock<bool> = OnceLock::new();
    let ok = *OK.get_or_init(|| {
        [FONT, "sans-serif"]
            .iter()
            .all(|name| plotters::style::register_font(name, FontStyle::Normal, FONT_BYTES).is_ok())
    });
    ensure!(ok, "the embedded font DejaVuSans.ttf could not be loaded");
    Ok(())
}

/// A figure drawn on any backend, in drawing pixels: SS× the output size.
trait Figure {
    /// What drawing it returns (e.g. where its maps lie).
    type Out;
    fn draw<DB: DrawingBackend>(&self, root: &Area<DB>) -> Result<Self::Out>;
}

/// Draws `fig` of `size` output pixels and writes it to `path` in the format
/// of its extension ([`FigureFormat::of`]).
fn write_figure<F: Figure>(path: &Path, size: (u32, u32), fig: &F) -> Result<F::Out> {
    match FigureFormat::of(path) {
        FigureFormat::Png => {
            let mut out = None;
            let rgb = render(size, |root| {
                out = Some(fig.draw(root)?);
                Ok(())
            })?;
            write_png_atomically(path, size, &rgb)?;
            out.context("the figure was not drawn")
        }
        FigureFormat::Svg => {
            let (svg, out) = render_svg(size, |root| fig.draw(root))?;
            replace_atomically(path, "svg", |tmp| Ok(std::fs::write(tmp, svg.as_bytes())?))?;
            Ok(out)
        }
    }
}

/// Draws an SVG document of `size` output pixels: `draw` gets an area of SS×
/// that size (as for [`render`], so the geometry is the PNG's, at twice its
/// resolution); the document's viewBox is that area and its width and height
/// are `size`. Axis-aligned rectangles (heat-map cells, colour-bar strips)
/// are rendered with crisp edges, so that abutting cells show no hairline
/// seams of the background between them.
fn render_svg<T>(size: (u32, u32), draw: impl FnOnce(&Area<Svg<'_>>) -> Result<T>) -> Result<(String, T)> {
    check_figure_size(size)?;
    ensure_font()?;
    let (bw, bh) = (size.0 * SS, size.1 * SS);
    let mut doc = String::new();
    let out = {
        let root = Svg(SVGBackend::with_string(&mut doc, (bw, bh))).into_drawing_area();
        root.fill(&WHITE).map_err(pe)?;
        let out = draw(&root)?;
        root.present().map_err(pe)?;
        out
    };
    // plotters' root element, with width and height = the viewBox.
    let head =
        format!(r#"<svg width="{bw}" height="{bh}" viewBox="0 0 {bw} {bh}" xmlns="http://www.w3.org/2000/svg">"#);
    let body = doc.strip_prefix(&head).context("unexpected SVG from plotters (root element)")?;
    // Attributes plotters writes at their initial values (no attribute value
    // or text can hold a quote: both are escaped): a third of a cell's bytes.
    let body = body.replace(r#" opacity="1""#, "").replace(r#" stroke="none""#, "");
    let (w, h) = size;
    Ok((
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {bw} {bh}\">\n<style>rect {{ shape-rendering: crispEdges }}</style>{body}"
        ),
        out,
    ))
}

/// Refuses a figure of more than [`MAX_PIXELS`] output pixels.
fn check_figure_size(size: (u32, u32)) -> Result<()> {
    ensure!(
        size.0 as u64 * size.1 as u64 <= MAX_PIXELS,
        "a figure of {}×{} px is too large (at most {} Mpx)",
        size.0,
        size.1,
        MAX_PIXELS / 1_000_000
    );
    Ok(())
}

fn font(px: f64) -> TextStyle<'static> {
    (FONT, px.max(6.0)).into_font().color(&BLACK)
}

/// A plotters error as an anyhow error.
fn pe<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plotting failed: {e:?}")
}

/// Supersampling factor: figures are drawn at SS× the output size and
/// averaged down, which antialiases lines and markers (plotters' bitmap
/// backend does not) and halves the rounding errors of glyph placement.
const SS: u32 = 2;

/// Largest figure, in output pixels (the supersampled buffer is SS² times
/// larger).
const MAX_PIXELS: u64 = 16_000_000;

/// Renders into a white RGB buffer of the given size. `draw` gets an area of
/// SS× that size and must scale its geometry accordingly.
fn render(size: (u32, u32), draw: impl FnOnce(&Area<BitMapBackend<'_>>) -> Result<()>) -> Result<Vec<u8>> {
    check_figure_size(size)?;
    ensure_font()?;
    let (bw, bh) = ((size.0 * SS) as usize, (size.1 * SS) as usize);
    let mut big = vec![255u8; 3 * bw * bh];
    {
        let root = BitMapBackend::with_buffer(&mut big, (bw as u32, bh as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(pe)?;
        draw(&root)?;
        root.present().map_err(pe)?;
    }
    let (w, h, k) = (size.0 as usize, size.1 as usize, SS as usize);
    let mut out = vec![0u8; 3 * w * h];
    for y in 0..h {
        for x in 0..w {
            for c in 0..3 {
                let mut sum = 0u32;
                for dy in 0..k {
                    let row = (y * k + dy) * bw;
                    for dx in 0..k {
                        sum += big[3 * (row + x * k + dx) + c] as u32;
                    }
                }
                out[3 * (y * w + x) + c] = ((sum + (k * k / 2) as u32) / (k * k) as u32) as u8;
            }
        }
    }
    Ok(out)
}

mod svg {
    //! A wrapper of plotters' SVG backend (its own module: the backend traits
    //! it implements would shadow plotters' style methods elsewhere).
    use plotters::prelude::{DrawingBackend, SVGBackend};
    use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind};

    /// plotters' SVG backend, except that an outlined rectangle (a frame) is a
    /// closed polyline with the style's stroke width: plotters writes it as a
    /// `<rect>` without one, i.e. a hairline of one viewBox unit, which crisp
    /// edges may drop altogether.
    pub(super) struct Svg<'a>(pub(super) SVGBackend<'a>);

    impl DrawingBackend for Svg<'_> {
        type ErrorType = <SVGBackend<'static> as DrawingBackend>::ErrorType;

        fn get_size(&self) -> (u32, u32) {
            self.0.get_size()
        }
        fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.0.ensure_prepared()
        }
        fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.0.present()
        }
        fn draw_pixel(
            &mut self,
            point: BackendCoord,
            color: BackendColor,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.0.draw_pixel(point, color)
        }
        fn draw_line<S: BackendStyle>(
            &mut self,
            from: BackendCoord,
            to: BackendCoord,
            style: &S,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.0.draw_line(from, to, style)
        }
        fn draw_rect<S: BackendStyle>(
            &mut self,
            upper_left: BackendCoord,
            bottom_right: BackendCoord,
            style: &S,
            fill: bool,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            if fill {
                return self.0.draw_rect(upper_left, bottom_right, style, fill);
            }
            let ((x0, y0), (x1, y1)) = (upper_left, bottom_right);
            // Once round and on along the first side, so that every corner is a join.
            self.0.draw_path([(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0), (x1, y0)], style)
        }
        fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
            &mut self,
            path: I,
            style: &S,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.0.draw_path(path, style)
        }
        fn draw_circle<S: BackendStyle>(
            &mut self,
            center: BackendCoord,
            radius: u32,
            style: &S,
            fill: bool,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.0.draw_circle(center, radius, style, fill)
        }
        fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
            &mut self,
            vert: I,
            style: &S,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.0.fill_polygon(vert, style)
        }
        fn draw_text<S: BackendTextStyle>(
            &mut self,
            text: &str,
            style: &S,
            pos: BackendCoord,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.0.draw_text(&super::xml_text(text), style, pos)
        }
        fn estimate_text_size<S: BackendTextStyle>(
            &self,
            text: &str,
            style: &S,
        ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
            self.0.estimate_text_size(text, style)
        }
    }
}
use svg::Svg;

/// Text as an SVG may hold it: plotters escapes `&`, `<`, `>` and quotes,
/// but a control character (other than tab and line breaks) is not allowed
/// in XML 1.0 at all, not even as a character reference — each becomes
/// U+FFFD, so that any label (a unit, a title) gives a well-formed document.
fn xml_text(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}');
    if text.chars().any(bad) {
        std::borrow::Cow::Owned(text.chars().map(|c| if bad(c) { '\u{fffd}' } else { c }).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

fn check_chart_px((w, h): (u32, u32)) -> Result<()> {
    ensure!(
        (160..=4000).contains(&w) && (120..=4000).contains(&h),
        "chart size {w}×{h} px is outside 160..=4000 × 120..=4000"
    );
    Ok(())
}

/// Qualitative colours (matplotlib's tab10).
pub const QUALITATIVE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

const GRID_LINE: RGBColor = RGBColor(222, 222, 222);
const MINOR_LINE: RGBColor = RGBColor(240, 240, 240);
const GUIDE: RGBColor = RGBColor(90, 90, 90);

// ───────────────────────────── axes and ticks ─────────────────────────────

/// One axis in drawing units (log10 of the data on a log axis), with its
/// tick positions and labels.
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
    minor: Vec<f64>,
}

impl Axis {
    /// A linear axis over [lo, hi] (lo < hi) with about `target` ticks.
    fn linear(lo: f64, hi: f64, target: usize) -> Axis {
        let step = nice_step(hi - lo, target);
        let mag = lo.abs().max(hi.abs());
        let ticks = linear_ticks(lo, hi, step).into_iter().map(|v| (v, fmt_tick(v, step, mag))).collect();
        Axis { log: false, lo, hi, ticks, minor: Vec::new() }
    }

    /// A log axis over [10^lo, 10^hi] (given as exponents, lo < hi).
    fn log(lo: f64, hi: f64) -> Axis {
        let (ticks, minor) = log_ticks(lo, hi);
        Axis { log: true, lo, hi, ticks, minor }
    }

    /// Data value → drawing units (None if it cannot be shown on this axis).
    fn tr(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            None
        } else if self.log {
            (v > 0.0).then(|| v.log10())
        } else {
            Some(v)
        }
    }

    fn coord(&self) -> AxisCoord {
        AxisCoord {
            lo: self.lo,
            hi: self.hi,
            bold: self.ticks.iter().map(|t| t.0).collect(),
            light: self.minor.clone(),
        }
    }

    /// The label of the tick nearest to `v`.
    fn label(&self, v: f64) -> String {
        self.ticks
            .iter()
            .min_by(|a, b| (a.0 - v).abs().total_cmp(&(b.0 - v).abs()))
            .map(|t| t.1.clone())
            .unwrap_or_default()
    }

    fn label_width<DB: DrawingBackend>(&self, area: &Area<DB>, style: &TextStyle) -> u32 {
        self.ticks.iter().map(|t| area.estimate_text_size(&t.1, style).map(|s| s.0).unwrap_or(0)).max().unwrap_or(0)
    }
}

/// A linear coordinate over [lo, hi] (drawing units) with given tick
/// positions (bold) and minor grid lines (light).
struct AxisCoord {
    lo: f64,
    hi: f64,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl Ranged for AxisCoord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        let p = limit.0 as f64 + f * (limit.1 - limit.0) as f64;
        p.clamp(-1e7, 1e7).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() { self.light.clone() } else { self.bold.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// The data range [lo, hi] of an axis, padded by `pad` of its span, from
/// values already in drawing units; a degenerate range is widened.
fn auto_range(vals: impl Iterator<Item = f64>, pad: f64, log: bool) -> Option<(f64, f64)> {
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        return None;
    }
    if hi - lo <= 1e-12 * lo.abs().max(hi.abs()).max(1e-300) {
        let d = if log { 0.5 } else { 0.1 * lo.abs().max(1.0) };
        return Some((lo - d, hi + d));
    }
    let d = pad * (hi - lo);
    Some((lo - d, hi + d))
}

/// 1, 2 or 5 × 10^k, about span/target.
fn nice_step(span: f64, target: usize) -> f64 {
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f < 1.5 {
        1.0
    } else if f < 3.0 {
        2.0
    } else if f < 7.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// The multiples of `step` in [lo, hi].
fn linear_ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let k0 = (lo / step - 1e-9).ceil() as i64;
    let k1 = (hi / step + 1e-9).floor() as i64;
    (k0..=k1).take(200).map(|k| if k == 0 { 0.0 } else { k as f64 * step }).collect()
}

/// A tick label for `v` on an axis with tick spacing `step` and largest
/// magnitude `mag`: plain decimals, or scientific notation for very large or
/// very small numbers.
fn fmt_tick(v: f64, step: f64, mag: f64) -> String {
    if !(1e-3..1e5).contains(&mag) {
        if v == 0.0 {
            return "0".into();
        }
        let digits = (mag.log10().floor() - step.log10().floor()).clamp(0.0, 4.0) as usize;
        return format!("{:.*e}", digits, v);
    }
    let decimals = (-(step.log10() + 1e-9).floor()).max(0.0) as usize;
    format!("{:.*}", decimals, v)
}

fn superscript(k: i64) -> String {
    k.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            _ => '⁹',
        })
        .collect()
}

/// 10^k as "0.01" … "10000" or "10⁻⁵".
fn fmt_pow10(k: i64) -> String {
    match k {
        -3..=-1 => format!("{:.*}", (-k) as usize, 10f64.powi(k as i32)),
        0..=4 => format!("{}", 10i64.pow(k as u32)),
        _ => format!("10{}", superscript(k)),
    }
}

/// Ticks of a log axis over exponents [lo, hi]: decades (thinned when
/// many), else 1-2-5 multiples, else linear ticks; minor lines at 2…9 × 10^k
/// when few decades are shown.
fn log_ticks(lo: f64, hi: f64) -> (Vec<(f64, String)>, Vec<f64>) {
    let k0 = (lo - 1e-9).ceil() as i64;
    let k1 = (hi + 1e-9).floor() as i64;
    let inside = |t: f64| t >= lo - 1e-9 && t <= hi + 1e-9;
    let mut minor = Vec::new();
    if hi - lo <= 7.0 {
        for k in (lo.floor() as i64)..=(hi.ceil() as i64) {
            for m in 2..=9 {
                let t = k as f64 + (m as f64).log10();
                if inside(t) {
                    minor.push(t);
                }
            }
        }
    }
    if k1 - k0 >= 1 {
        let every = ((k1 - k0 + 1) as f64 / 7.0).ceil().max(1.0) as i64;
        let ticks = (k0..=k1).filter(|k| k.rem_euclid(every) == 0).map(|k| (k as f64, fmt_pow10(k))).collect();
        return (ticks, minor);
    }
    let mut ticks = Vec::new();
    for k in (lo.floor() as i64 - 1)..=(hi.ceil() as i64) {
        for m in [1.0, 2.0, 5.0] {
            let t = k as f64 + f64::log10(m);
            if inside(t) {
                let v = m * 10f64.powi(k as i32);
                let label = if m == 1.0 { fmt_pow10(k) } else { fmt_tick(v, 10f64.powi(k as i32), v) };
                ticks.push((t, label));
            }
        }
    }
    if ticks.len() >= 3 {
        return (ticks, minor);
    }
    let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
    let step = nice_step(b - a, 4);
    let ticks =
        linear_ticks(a, b, step).into_iter().filter(|&v| v > 0.0).map(|v| (v.log10(), fmt_tick(v, step, b))).collect();
    (ticks, Vec::new())
}

// ───────────────────────────── layout helpers ─────────────────────────────

/// Font sizes and paddings for a chart of the given pixel size.
struct Sizes {
    title: f64,
    label: f64,
    tick: f64,
    pad: u32,
    /// Width of thin lines (frames, axes, grid lines).
    line: u32,
    /// Length of tick marks.
    mark: u32,
}

impl Sizes {
    /// For a chart area of w×h drawing pixels (SS× the output).
    fn for_area(w: u32, h: u32) -> Sizes {
        let s = (w.min(h) as f64 / (420.0 * SS as f64)).clamp(0.55, 3.0);
        Sizes::scaled(s * SS as f64)
    }
    /// For a scale `s` in drawing pixels per nominal pixel (SS at the nominal size).
    fn scaled(s: f64) -> Sizes {
        let line = SS * (s / SS as f64).round().max(1.0) as u32;
        Sizes {
            title: 17.0 * s,
            label: 15.0 * s,
            tick: 13.0 * s,
            pad: (10.0 * s).round() as u32,
            line,
            mark: (5.0 * s).round() as u32,
        }
    }
}

/// Pixel budget around a plotting area.
struct Frame {
    title_h: u32,
    y_area: u32,
    x_area: u32,
}

fn frame_for<DB: DrawingBackend>(
    area: &Area<DB>,
    sz: &Sizes,
    title: &str,
    ay: &Axis,
    x_label: &str,
    y_label: &str,
) -> Frame {
    let tick = font(sz.tick);
    let title_h = if title.trim().is_empty() { sz.pad } else { (sz.title * 2.0).round() as u32 };
    let desc_w = |l: &str| if l.trim().is_empty() { 0 } else { (sz.label * 1.5).round() as u32 };
    let y_area = ay.label_width(area, &tick) + sz.mark + (0.6 * sz.tick) as u32 + desc_w(y_label);
    let x_area = sz.mark + (sz.tick * 1.5).round() as u32 + desc_w(x_label);
    Frame { title_h, y_area, x_area }
}

/// Builds a chart whose plotting area starts `left`/`top` pixels into
/// `area` (outside the label areas) with the given right/bottom margins.
#[allow(clippy::too_many_arguments)]
fn build_chart<'a, DB: DrawingBackend>(
    area: &'a Area<DB>,
    ax: &Axis,
    ay: &Axis,
    frame: &Frame,
    extra: (u32, u32, u32, u32), // left, top, right, bottom margins beyond the frame
) -> Result<Chart<'a, DB>> {
    let (l, t, r, b) = extra;
    ChartBuilder::on(area)
        .margin_left(l)
        .margin_top(frame.title_h + t)
        .margin_right(r)
        .margin_bottom(b)
        .x_label_area_size(frame.x_area)
        .y_label_area_size(frame.y_area)
        .build_cartesian_2d(ax.coord(), ay.coord())
        .map_err(pe)
}

/// Axes, ticks, grid lines (optional) and descriptions.
fn draw_mesh<DB: DrawingBackend>(
    chart: &mut Chart<DB>,
    ax: &Axis,
    ay: &Axis,
    sz: &Sizes,
    x_label: &str,
    y_label: &str,
    grid: bool,
) -> Result<()> {
    let xf = |v: &f64| ax.label(*v);
    let yf = |v: &f64| ay.label(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .label_style(font(sz.tick))
        .axis_desc_style(font(sz.label))
        .axis_style(BLACK.stroke_width(sz.line))
        .set_all_tick_mark_size(sz.mark)
        .bold_line_style(GRID_LINE.stroke_width(sz.line))
        .light_line_style(MINOR_LINE.stroke_width(sz.line));
    if !grid {
        mesh.disable_mesh();
    }
    if !x_label.trim().is_empty() {
        mesh.x_desc(x_label);
    }
    if !y_label.trim().is_empty() {
        mesh.y_desc(y_label);
    }
    mesh.draw().map_err(pe)
}

/// A black frame around the plotting area.
fn draw_box<DB: DrawingBackend>(chart: &mut Chart<DB>, ax: &Axis, ay: &Axis, sz: &Sizes) -> Result<()> {
    let r = Rectangle::new([(ax.lo, ay.lo), (ax.hi, ay.hi)], BLACK.stroke_width(sz.line));
    chart.draw_series(std::iter::once(r)).map_err(pe)?;
    Ok(())
}

/// A title centred over the plotting area, just above it.
fn draw_title<DB: DrawingBackend>(
    area: &Area<DB>,
    chart: &Chart<DB>,
    title: &str,
    sz: &Sizes,
    title_h: u32,
) -> Result<()> {
    if title.trim().is_empty() {
        return Ok(());
    }
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let base = area.get_base_pixel();
    let cx = (xr.start + xr.end) / 2 - base.0;
    let cy = yr.start - base.1 - (title_h as i32) * 9 / 20;
    let style = font(sz.title).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(title.to_string(), (cx, cy), style)).map_err(pe)
}

/// Clips the polyline `pts` (drawing units) to the box, returning the pieces.
fn clip_polyline(pts: &[(f64, f64)], (x0, x1, y0, y1): (f64, f64, f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for w in pts.windows(2) {
        let ((ax, ay), (bx, by)) = (w[0], w[1]);
        let (dx, dy) = (bx - ax, by - ay);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        let mut keep = true;
        for (p, q) in [(-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)] {
            if p == 0.0 {
                if q < 0.0 {
                    keep = false;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        if !keep || t0 > t1 {
            if cur.len() >= 2 {
                out.push(std::mem::take(&mut cur));
            }
            cur.clear();
            continue;
        }
        let a = (ax + t0 * dx, ay + t0 * dy);
        let b = (ax + t1 * dx, ay + t1 * dy);
        if cur.last() != Some(&a) {
            if cur.len() >= 2 {
                out.push(std::mem::take(&mut cur));
            }
            cur = vec![a];
        }
        cur.push(b);
        if t1 < 1.0 {
            out.push(std::mem::take(&mut cur));
        }
    }
    if cur.len() >= 2 {
        out.push(cur);
    }
    out
}

/// The sample drawn next to a legend label.
#[derive(Clone, Copy)]
enum Glyph {
    /// A line (dashed or not) with an optional marker of the given radius.
    Line { color: RGBColor, width: u32, dashed: bool, marker: Option<i32> },
    /// A marker alone.
    Marker { color: RGBColor, radius: i32 },
    /// A semi-transparent histogram swatch, with a line across for a density curve.
    Swatch { color: RGBColor, curve: Option<u32> },
}

/// A legend in the corner of the plotting area covering the fewest of
/// `occupied` (points in [0,1]² fractions of the plotting area), drawn by
/// hand: plotters' own legends need a `'static` backend for composite samples.
fn draw_legend<DB: DrawingBackend>(
    area: &Area<DB>,
    chart: &Chart<DB>,
    entries: &[(String, Glyph)],
    occupied: &[(f64, f64)],
    sz: &Sizes,
) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let style = font(sz.tick);
    let base = area.get_base_pixel();
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (px0, px1, py0, py1) = (xr.start - base.0, xr.end - base.0, yr.start - base.1, yr.end - base.1);
    let (pw, ph) = ((px1 - px0).max(1) as f64, (py1 - py0).max(1) as f64);
    let text_w =
        entries.iter().map(|e| area.estimate_text_size(&e.0, &style).map(|t| t.0).unwrap_or(0)).max().unwrap_or(0)
            as i32;
    let pad = (0.7 * sz.pad as f64).round() as i32;
    let inset = sz.pad as i32;
    let row = (1.55 * sz.tick).round() as i32;
    let glyph_w = (2.0 * sz.tick).round() as i32;
    let (bw, bh) =
        (pad + glyph_w + pad + text_w + pad, 2 * pad + row * entries.len() as i32 - (row - sz.tick.round() as i32) / 2);
    // Corners, as the box's top-left pixel and its fractional extent (y up).
    let fx = |x: i32| (x - px0) as f64 / pw;
    let fy = |y: i32| (py1 - y) as f64 / ph;
    let (left, right, top, bottom) = (px0 + inset, px1 - inset - bw, py0 + inset, py1 - inset - bh);
    let corners = [(right, top), (left, top), (right, bottom), (left, bottom)];
    let count = |(x, y): (i32, i32)| {
        let (u0, u1, v0, v1) = (fx(x), fx(x + bw), fy(y + bh), fy(y));
        occupied.iter().filter(|p| p.0 >= u0 && p.0 <= u1 && p.1 >= v0 && p.1 <= v1).count()
    };
    let (x0, y0) = corners.into_iter().min_by_key(|&c| count(c)).unwrap_or((right, top));
    area.draw(&Rectangle::new([(x0, y0), (x0 + bw, y0 + bh)], WHITE.mix(0.9).filled())).map_err(pe)?;
    area.draw(&Rectangle::new([(x0, y0), (x0 + bw, y0 + bh)], RGBColor(170, 170, 170).stroke_width(sz.line)))
        .map_err(pe)?;
    for (k, (label, glyph)) in entries.iter().enumerate() {
        let cy = y0 + pad + row * k as i32 + sz.tick.round() as i32 / 2;
        let (gx0, gx1) = (x0 + pad, x0 + pad + glyph_w);
        match *glyph {
            Glyph::Line { color, width, dashed, marker } => {
                let st = color.stroke_width(width);
                if dashed {
                    let d = glyph_w * 3 / 10;
                    let g = (glyph_w - 3 * d) / 2;
                    for a in [gx0, gx0 + d + g, gx1 - d] {
                        area.draw(&PathElement::new(vec![(a, cy), (a + d, cy)], st)).map_err(pe)?;
                    }
                } else {
                    area.draw(&PathElement::new(vec![(gx0, cy), (gx1, cy)], st)).map_err(pe)?;
                }
                if let Some(r) = marker {
                    area.draw(&Circle::new(((gx0 + gx1) / 2, cy), r, color.filled())).map_err(pe)?;
                }
            }
            Glyph::Marker { color, radius } => {
                area.draw(&Circle::new(((gx0 + gx1) / 2, cy), radius, color.filled())).map_err(pe)?;
            }
            Glyph::Swatch { color, curve } => {
                let h = (0.4 * sz.tick).round() as i32;
                let r = [(gx0, cy - h), (gx1, cy + h)];
                area.draw(&Rectangle::new(r, color.mix(0.3).filled())).map_err(pe)?;
                area.draw(&Rectangle::new(r, color.stroke_width(sz.line))).map_err(pe)?;
                if let Some(w) = curve {
                    area.draw(&PathElement::new(vec![(gx0, cy), (gx1, cy)], color.stroke_width(w))).map_err(pe)?;
                }
            }
        }
        let st = style.clone().pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(label.clone(), (gx1 + pad, cy), st)).map_err(pe)?;
    }
    Ok(())
}

// ───────────────────────────── heat maps ─────────────────────────────

fn validate_heat_panel(p: &HeatPanel) -> Result<()> {
    p.grid.check()?;
    if let Some((lo, hi)) = p.range {
        ensure!(lo.is_finite() && hi.is_finite() && lo < hi, "colour range ({lo}, {hi}) must be finite with lo < hi");
    }
    for (k, c) in p.contours.iter().enumerate() {
        c.grid.check().with_context(|| format!("contour {} (level {})", k + 1, c.level))?;
        ensure!(c.level.is_finite(), "contour {} has a non-finite level {}", k + 1, c.level);
        ensure!((1..=50).contains(&c.width), "contour {} has width {} (expected 1..=50)", k + 1, c.width);
    }
    Ok(())
}

/// Colour of `t` ∈ [0, 1] (clamped) in a palette.
fn palette_color(p: Palette, t: f64) -> RGBColor {
    const VIRIDIS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    const RDBU: [(u8, u8, u8); 11] = [
        (5, 48, 97),
        (33, 102, 172),
        (67, 147, 195),
        (146, 197, 222),
        (209, 229, 240),
        (247, 247, 247),
        (253, 219, 199),
        (244, 165, 130),
        (214, 96, 77),
        (178, 24, 43),
        (103, 0, 31),
    ];
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let table: &[(u8, u8, u8)] = match p {
        Palette::Viridis => &VIRIDIS,
        Palette::Diverging => &RDBU,
        Palette::Grey => {
            let g = (255.0 * t).round() as u8;
            return RGBColor(g, g, g);
        }
    };
    let x = t * (table.len() - 1) as f64;
    let k = (x.floor() as usize).min(table.len() - 2);
    let f = x - k as f64;
    let (a, b) = (table[k], table[k + 1]);
    let mix = |u: u8, v: u8| (u as f64 + f * (v as f64 - u as f64)).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The colour range of a panel.
fn color_range(p: &HeatPanel) -> (f64, f64) {
    if let Some(r) = p.range {
        return r;
    }
    let (lo, hi) = p.grid.min_max();
    if p.palette == Palette::Diverging {
        let m = lo.abs().max(hi.abs());
        return if m > 0.0 { (-m, m) } else { (-1.0, 1.0) };
    }
    if hi > lo {
        (lo, hi)
    } else {
        let d = 0.1 * lo.abs().max(1.0);
        (lo - d, hi + d)
    }
}

fn draw_heat_panel<DB: DrawingBackend>(area: &Area<DB>, p: &HeatPanel, s: f64, cb_w: u32) -> Result<PanelGeoref> {
    let g = p.grid;
    let sz = Sizes::scaled(s);
    let (w, h) = area.dim_in_pixel();
    let (hx, hy) = g.spacing();
    // Cells are centred on the grid points, so the map extends half a cell
    // beyond the first and last points.
    let (xlo, xhi, ylo, yhi) = (g.x0 - hx / 2.0, g.x1 + hx / 2.0, g.y0 - hy / 2.0, g.y1 + hy / 2.0);
    let mut ax = Axis::linear(xlo, xhi, 5);
    let mut ay = Axis::linear(ylo, yhi, 5);
    // Ticks only within the sampled domain.
    ax.ticks.retain(|t| t.0 >= g.x0 - 1e-9 * (g.x1 - g.x0) && t.0 <= g.x1 + 1e-9 * (g.x1 - g.x0));
    ay.ticks.retain(|t| t.0 >= g.y0 - 1e-9 * (g.y1 - g.y0) && t.0 <= g.y1 + 1e-9 * (g.y1 - g.y0));
    let frame = frame_for(area, &sz, &p.title, &ay, &p.x_label, &p.y_label);
    // The plotting area: domain aspect ratio (bounded), centred in what is left.
    let main_w = w - cb_w;
    let avail_w = main_w.saturating_sub(frame.y_area + sz.pad) as f64;
    let avail_h = h.saturating_sub(frame.title_h + frame.x_area + sz.pad / 2) as f64;
    ensure!(avail_w >= 40.0 && avail_h >= 40.0, "panel too small for its labels");
    let aspect = ((yhi - ylo) / (xhi - xlo)).clamp(0.5, 2.0);
    let (pw, ph) = if avail_h / avail_w > aspect { (avail_w, avail_w * aspect) } else { (avail_h / aspect, avail_h) };
    let (ex, ey) = ((avail_w - pw).max(0.0) as u32, (avail_h - ph).max(0.0) as u32);
    let main = area.clone().shrink((0, 0), (main_w, h));
    let extra = (ex / 2, ey / 2, sz.pad + ex - ex / 2, sz.pad / 2 + ey - ey / 2);
    let mut chart = build_chart(&main, &ax, &ay, &frame, extra)?;

    // Cells: one rectangle each, edges shared exactly between neighbours.
    let (lo, hi) = color_range(p);
    let xe: Vec<f64> = (0..=g.nx)
        .map(|i| {
            if i == 0 {
                xlo
            } else if i == g.nx {
                xhi
            } else {
                0.5 * (g.x(i - 1) + g.x(i))
            }
        })
        .collect();
    let ye: Vec<f64> = (0..=g.ny)
        .map(|j| {
            if j == 0 {
                ylo
            } else if j == g.ny {
                yhi
            } else {
                0.5 * (g.y(j - 1) + g.y(j))
            }
        })
        .collect();
    let cells = (0..g.ny).flat_map(|j| (0..g.nx).map(move |i| (i, j))).map(|(i, j)| {
        let v = g.at(i, j);
        let mut c = palette_color(p.palette, (v - lo) / (hi - lo));
        if p.shade_above.is_some_and(|level| v >= level) {
            // The excursion set, darkened on exactly the cells the colours show.
            c = RGBColor((c.0 as f64 * 0.72) as u8, (c.1 as f64 * 0.72) as u8, (c.2 as f64 * 0.72) as u8);
        }
        Rectangle::new([(xe[i], ye[j + 1]), (xe[i + 1], ye[j])], c.filled())
    });
    chart.draw_series(cells).map_err(pe)?;
    draw_mesh(&mut chart, &ax, &ay, &sz, &p.x_label, &p.y_label, false)?;

    let bbox = (xlo, xhi, ylo, yhi);
    for c in &p.contours {
        let style = c.color.stroke_width(c.width * SS);
        for line in boundary_lines(c.grid, c.level) {
            let pts: Vec<(f64, f64)> = line.iter().map(|q| (q[0], q[1])).collect();
            for piece in clip_polyline(&pts, bbox) {
                chart.draw_series(std::iter::once(PathElement::new(piece, style))).map_err(pe)?;
            }
        }
    }
    let r = (3.2 * s).max(2.0) as i32;
    let inside: Vec<(f64, f64)> = p
        .points
        .iter()
        .filter(|q| q[0].is_finite() && q[1].is_finite() && q[0] >= xlo && q[0] <= xhi && q[1] >= ylo && q[1] <= yhi)
        .map(|q| (q[0], q[1]))
        .collect();
    chart.draw_series(inside.iter().map(|&q| Circle::new(q, r, WHITE.filled()))).map_err(pe)?;
    chart.draw_series(inside.iter().map(|&q| Circle::new(q, r, BLACK.stroke_width(sz.line)))).map_err(pe)?;
    draw_box(&mut chart, &ax, &ay, &sz)?;
    draw_title(area, &chart, &p.title, &sz, frame.title_h)?;
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let ss = SS as f64;
    let georef = PanelGeoref {
        px: (xr.start as f64 / ss, xr.end as f64 / ss),
        py: (yr.start as f64 / ss, yr.end as f64 / ss),
        x: (xlo, xhi),
        y: (ylo, yhi),
    };

    if cb_w > 0 {
        let (_, yr) = chart.plotting_area().get_pixel_range();
        let base = area.get_base_pixel();
        let (top, bottom) = ((yr.start - base.1) as u32, h.saturating_sub((yr.end - base.1) as u32));
        let cb = area.clone().shrink((main_w, 0), (cb_w, h));
        draw_colorbar(&cb, p.palette, (lo, hi), &sz, top, bottom)?;
        if !p.colorbar_label.is_empty() {
            let style = font(sz.tick).pos(Pos::new(HPos::Left, VPos::Bottom));
            let at = (sz.pad as i32, top as i32 - (sz.tick * 0.6) as i32);
            cb.draw(&Text::new(p.colorbar_label.clone(), at, style)).map_err(pe)?;
        }
    }
    Ok(georef)
}

fn draw_colorbar<DB: DrawingBackend>(
    area: &Area<DB>,
    palette: Palette,
    (lo, hi): (f64, f64),
    sz: &Sizes,
    top: u32,
    bottom: u32,
) -> Result<()> {
    let (w, _) = area.dim_in_pixel();
    let bar_w = (sz.tick * 1.4).round() as u32;
    let ay = Axis::linear(lo, hi, 6);
    let ax = Axis { log: false, lo: 0.0, hi: 1.0, ticks: Vec::new(), minor: Vec::new() };
    let label_w = w.saturating_sub(bar_w + sz.pad).max(10);
    let mut chart = ChartBuilder::on(area)
        .margin_top(top)
        .margin_bottom(bottom)
        .margin_left(sz.pad)
        .set_label_area_size(LabelAreaPosition::Right, label_w)
        .build_cartesian_2d(ax.coord(), ay.coord())
        .map_err(pe)?;
    let n = 256;
    let strips = (0..n).map(|k| {
        let (a, b) = (lo + (hi - lo) * k as f64 / n as f64, lo + (hi - lo) * (k + 1) as f64 / n as f64);
        Rectangle::new([(0.0, b), (1.0, a)], palette_color(palette, (k as f64 + 0.5) / n as f64).filled())
    });
    chart.draw_series(strips).map_err(pe)?;
    let yf = |v: &f64| ay.label(*v);
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_label_formatter(&yf)
        .label_style(font(sz.tick))
        .axis_style(BLACK.stroke_width(sz.line))
        .set_all_tick_mark_size(sz.mark * 4 / 5)
        .draw()
        .map_err(pe)?;
    draw_box(&mut chart, &ax, &ay, sz)
}

// ───────────────────────────── line charts ─────────────────────────────

fn validate_range(name: &str, r: Option<(f64, f64)>, log: bool) -> Result<()> {
    if let Some((lo, hi)) = r {
        ensure!(lo.is_finite() && hi.is_finite() && lo < hi, "{name} ({lo}, {hi}) must be finite with lo < hi");
        ensure!(!log || lo > 0.0, "{name} ({lo}, {hi}) must be positive on a log axis");
    }
    Ok(())
}

fn validate_line_chart(c: &LineChart) -> Result<()> {
    ensure!(!c.series.is_empty(), "no series");
    for (k, s) in c.series.iter().enumerate() {
        let name = if s.label.is_empty() { format!("series {}", k + 1) } else { format!("series '{}'", s.label) };
        ensure!(!s.xs.is_empty(), "{name} is empty");
        ensure!(s.xs.len() == s.ys.len(), "{name}: xs has {} values but ys has {}", s.xs.len(), s.ys.len());
        if let Some(e) = &s.err {
            ensure!(e.len() == s.xs.len(), "{name}: xs has {} values but err has {}", s.xs.len(), e.len());
        }
    }
    validate_range("x_range", c.x_range, c.log_x)?;
    validate_range("y_range", c.y_range, c.log_y)?;
    Ok(())
}

/// The axis for a range given in data units or found from values in drawing units.
fn make_axis(log: bool, explicit: Option<(f64, f64)>, vals: Vec<f64>, target: usize) -> Axis {
    let (lo, hi) = match explicit {
        Some((a, b)) if log => (a.log10(), b.log10()),
        Some(r) => r,
        None => auto_range(vals.into_iter(), 0.05, log).unwrap_or((0.0, 1.0)), // nothing to show: 0..1 (1..10 on a log axis)
    };
    if log { Axis::log(lo, hi) } else { Axis::linear(lo, hi, target) }
}

fn draw_line_chart<DB: DrawingBackend>(area: &Area<DB>, c: &LineChart) -> Result<()> {
    let (w, h) = area.dim_in_pixel();
    let sz = Sizes::for_area(w, h);
    let probe_x = Axis { log: c.log_x, lo: 0.0, hi: 1.0, ticks: Vec::new(), minor: Vec::new() };
    let probe_y = Axis { log: c.log_y, lo: 0.0, hi: 1.0, ticks: Vec::new(), minor: Vec::new() };
    // Points in drawing units, per series (None = skipped).
    let pts: Vec<Vec<Option<(f64, f64)>>> = c
        .series
        .iter()
        .map(|s| s.xs.iter().zip(&s.ys).map(|(&x, &y)| Some((probe_x.tr(x)?, probe_y.tr(y)?))).collect())
        .collect();
    // Only points inside an explicit x-range count towards the automatic y-range.
    let x_window = c.x_range.and_then(|(a, b)| Some((probe_x.tr(a)?, probe_x.tr(b)?)));
    let xs_in = |x: f64| x_window.is_none_or(|(a, b)| x >= a && x <= b);
    let mut xvals = Vec::new();
    let mut yvals = Vec::new();
    for (s, p) in c.series.iter().zip(&pts) {
        for (k, q) in p.iter().enumerate() {
            let Some((x, y)) = *q else { continue };
            xvals.push(x);
            if !xs_in(x) {
                continue;
            }
            yvals.push(y);
            if let Some(e) = s.err.as_ref().map(|e| e[k]).filter(|e| e.is_finite() && *e >= 0.0) {
                yvals.extend(probe_y.tr(s.ys[k] + e));
                yvals.extend(probe_y.tr(s.ys[k] - e));
            }
        }
    }
    yvals.extend(c.hlines.iter().filter_map(|(v, _)| probe_y.tr(*v)));
    let ax = make_axis(c.log_x, c.x_range, xvals, 6);
    let ay = make_axis(c.log_y, c.y_range, yvals, 6);
    let frame = frame_for(area, &sz, &c.title, &ay, &c.x_label, &c.y_label);
    let mut chart = build_chart(area, &ax, &ay, &frame, (sz.pad / 2, 0, sz.pad + sz.pad / 2, sz.pad / 2))?;
    draw_mesh(&mut chart, &ax, &ay, &sz, &c.x_label, &c.y_label, true)?;
    let bbox = (ax.lo, ax.hi, ay.lo, ay.hi);

    for (v, label) in &c.hlines {
        let Some(y) = ay.tr(*v).filter(|y| *y >= ay.lo && *y <= ay.hi) else { continue };
        let style = GUIDE.stroke_width(sz.line);
        let (d, g) = ((0.55 * sz.tick) as u32, (0.4 * sz.tick) as u32);
        chart.draw_series(DashedLineSeries::new(vec![(ax.lo, y), (ax.hi, y)], d, g, style)).map_err(pe)?;
        if !label.is_empty() {
            // Just above the line, clear of its dashes (below it near the top).
            let per_px = (ay.hi - ay.lo) / chart.plotting_area().dim_in_pixel().1.max(1) as f64;
            let lift = 0.25 * sz.tick * per_px;
            let (y, v) =
                if ay.hi - y > 1.6 * sz.tick * per_px { (y + lift, VPos::Bottom) } else { (y - 2.0 * lift, VPos::Top) };
            let x = ax.hi - 0.01 * (ax.hi - ax.lo);
            let style = font(sz.tick).color(&GUIDE).pos(Pos::new(HPos::Right, v));
            chart.draw_series(std::iter::once(Text::new(label.clone(), (x, y), style))).map_err(pe)?;
        }
    }

    let lw = (2.0 * sz.tick / 13.0).round().max(1.0) as u32;
    let r = (3.0 * sz.tick / 13.0).round().max(2.0) as i32;
    let mut frac_pts = Vec::new();
    let mut legend = Vec::new();
    for (k, (s, p)) in c.series.iter().zip(&pts).enumerate() {
        let color = s.color.unwrap_or(QUALITATIVE[k % QUALITATIVE.len()]);
        let line = color.stroke_width(lw);
        // Runs of consecutive drawable points, clipped to the box.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for q in p {
            match q {
                Some(q) => runs.last_mut().unwrap().push(*q),
                None => runs.push(Vec::new()),
            }
        }
        let inside = |q: &(f64, f64)| q.0 >= ax.lo && q.0 <= ax.hi && q.1 >= ay.lo && q.1 <= ay.hi;
        if matches!(s.style, SeriesStyle::Line | SeriesStyle::Dashed | SeriesStyle::LinePoints) {
            for run in &runs {
                let pieces = if run.len() == 1 { Vec::new() } else { clip_polyline(run, bbox) };
                for piece in pieces {
                    if s.style == SeriesStyle::Dashed {
                        let (d, g) = ((8.0 * sz.tick / 13.0) as u32, (5.0 * sz.tick / 13.0) as u32);
                        chart.draw_series(DashedLineSeries::new(piece, d, g, line)).map_err(pe)?;
                    } else {
                        chart.draw_series(LineSeries::new(piece, line)).map_err(pe)?;
                    }
                }
                // A lone point between gaps would vanish from a line: mark it.
                if run.len() == 1 && inside(&run[0]) && s.style != SeriesStyle::LinePoints {
                    chart.draw_series(std::iter::once(Circle::new(run[0], r, color.filled()))).map_err(pe)?;
                }
            }
        }
        if matches!(s.style, SeriesStyle::Points | SeriesStyle::LinePoints) {
            let marks = p.iter().flatten().filter(|q| inside(q)).map(|&q| Circle::new(q, r, color.filled()));
            chart.draw_series(marks).map_err(pe)?;
        }
        if let Some(err) = &s.err {
            let bars = p.iter().enumerate().filter_map(|(i, q)| {
                let (x, y) = (*q)?;
                let e = err[i];
                if !(e.is_finite() && e >= 0.0) || x < ax.lo || x > ax.hi {
                    return None;
                }
                let top = ay.tr(s.ys[i] + e)?.min(ay.hi);
                let bot = ay.tr(s.ys[i] - e).unwrap_or(ay.lo).max(ay.lo);
                (top >= bot).then(|| {
                    ErrorBar::new_vertical(
                        x,
                        bot,
                        y.clamp(bot, top),
                        top,
                        color.stroke_width(sz.line),
                        2 * r as u32 + 2 * sz.line,
                    )
                })
            });
            chart.draw_series(bars).map_err(pe)?;
        }
        for run in &runs {
            for w in run.windows(2) {
                for t in [0.0, 0.25, 0.5, 0.75] {
                    let q = (w[0].0 + t * (w[1].0 - w[0].0), w[0].1 + t * (w[1].1 - w[0].1));
                    frac_pts.push(((q.0 - ax.lo) / (ax.hi - ax.lo), (q.1 - ay.lo) / (ay.hi - ay.lo)));
                }
            }
            if let Some(q) = run.last() {
                frac_pts.push(((q.0 - ax.lo) / (ax.hi - ax.lo), (q.1 - ay.lo) / (ay.hi - ay.lo)));
            }
        }
        if !s.label.is_empty() {
            let glyph = match s.style {
                SeriesStyle::Points => Glyph::Marker { color, radius: r },
                st => Glyph::Line {
                    color,
                    width: lw,
                    dashed: st == SeriesStyle::Dashed,
                    marker: (st == SeriesStyle::LinePoints).then_some(r),
                },
            };
            legend.push((s.label.clone(), glyph));
        }
    }
    draw_box(&mut chart, &ax, &ay, &sz)?;
    draw_legend(area, &chart, &legend, &frac_pts, &sz)?;
    draw_title(area, &chart, &c.title, &sz, frame.title_h)
}

// ───────────────────────────── histograms ─────────────────────────────

fn validate_hist_chart(c: &HistChart) -> Result<()> {
    ensure!(!c.sets.is_empty(), "no sample sets");
    ensure!((1..=10_000).contains(&c.bins), "bins = {} (expected 1..=10000)", c.bins);
    for (k, s) in c.sets.iter().enumerate() {
        let name = if s.label.is_empty() { format!("set {}", k + 1) } else { format!("set '{}'", s.label) };
        ensure!(s.samples.iter().any(|v| v.is_finite()), "{name} has no finite samples");
        if let Some((xs, ys)) = &s.density {
            ensure!(!xs.is_empty(), "{name}: the density curve is empty");
            ensure!(xs.len() == ys.len(), "{name}: density xs has {} values but ys has {}", xs.len(), ys.len());
        }
    }
    validate_range("range", c.range, false)
}

fn draw_hist_chart<DB: DrawingBackend>(area: &Area<DB>, c: &HistChart) -> Result<()> {
    let (w, h) = area.dim_in_pixel();
    let sz = Sizes::for_area(w, h);
    let finite = || c.sets.iter().flat_map(|s| s.samples.iter().copied().filter(|v| v.is_finite()));
    let (lo, hi) = match c.range {
        Some(r) => r,
        None => {
            let (a, b) = finite().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
            if b > a { (a, b) } else { (a - 0.5 * a.abs().max(1.0), b + 0.5 * b.abs().max(1.0)) }
        }
    };
    let width = (hi - lo) / c.bins as f64;
    let edges: Vec<f64> = (0..=c.bins).map(|k| if k == c.bins { hi } else { lo + k as f64 * width }).collect();
    let heights: Vec<Vec<f64>> = c
        .sets
        .iter()
        .map(|s| {
            let n = s.samples.iter().filter(|v| v.is_finite()).count() as f64;
            let mut counts = vec![0usize; c.bins];
            for &v in s.samples.iter().filter(|v| v.is_finite() && **v >= lo && **v <= hi) {
                counts[(((v - lo) / width) as usize).min(c.bins - 1)] += 1;
            }
            counts.iter().map(|&k| k as f64 / (n * width)).collect()
        })
        .collect();
    let mut top = heights.iter().flatten().copied().fold(0.0, f64::max);
    for s in &c.sets {
        if let Some((xs, ys)) = &s.density {
            for (&x, &y) in xs.iter().zip(ys) {
                if x.is_finite() && y.is_finite() && x >= lo && x <= hi {
                    top = top.max(y);
                }
            }
        }
    }
    if top <= 0.0 {
        top = 1.0;
    }
    let pad = 0.02 * (hi - lo);
    let ax = Axis::linear(lo - pad, hi + pad, 6);
    let headroom = if c.sets.iter().any(|s| !s.label.is_empty()) { 1.15 } else { 1.05 };
    let ay = Axis::linear(0.0, top * headroom, 5);
    let frame = frame_for(area, &sz, &c.title, &ay, &c.x_label, "density");
    let mut chart = build_chart(area, &ax, &ay, &frame, (sz.pad / 2, 0, sz.pad + sz.pad / 2, sz.pad / 2))?;
    draw_mesh(&mut chart, &ax, &ay, &sz, &c.x_label, "density", true)?;
    let colors: Vec<RGBColor> =
        c.sets.iter().enumerate().map(|(k, s)| s.color.unwrap_or(QUALITATIVE[k % QUALITATIVE.len()])).collect();
    for (hs, &color) in heights.iter().zip(&colors) {
        let bars = hs
            .iter()
            .enumerate()
            .filter(|(_, v)| **v > 0.0)
            .map(|(k, &v)| Rectangle::new([(edges[k], v), (edges[k + 1], 0.0)], color.mix(0.3).filled()));
        chart.draw_series(bars).map_err(pe)?;
    }
    for (hs, &color) in heights.iter().zip(&colors) {
        let mut outline = vec![(edges[0], 0.0)];
        for (k, &v) in hs.iter().enumerate() {
            outline.push((edges[k], v));
            outline.push((edges[k + 1], v));
        }
        outline.push((edges[c.bins], 0.0));
        chart
            .draw_series(std::iter::once(PathElement::new(outline, color.mix(0.85).stroke_width(sz.line))))
            .map_err(pe)?;
    }
    let bbox = (ax.lo, ax.hi, ay.lo, ay.hi);
    let lw = (2.5 * sz.tick / 13.0).round().max(1.0) as u32;
    for (s, &color) in c.sets.iter().zip(&colors) {
        let Some((xs, ys)) = &s.density else { continue };
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (&x, &y) in xs.iter().zip(ys) {
            if x.is_finite() && y.is_finite() {
                runs.last_mut().unwrap().push((x, y));
            } else {
                runs.push(Vec::new());
            }
        }
        for run in runs {
            for piece in clip_polyline(&run, bbox) {
                chart.draw_series(LineSeries::new(piece, color.stroke_width(lw))).map_err(pe)?;
            }
        }
    }
    let mut frac_pts = Vec::new();
    for hs in &heights {
        for (k, &v) in hs.iter().enumerate() {
            let x = ((0.5 * (edges[k] + edges[k + 1])) - ax.lo) / (ax.hi - ax.lo);
            let top = v / (ay.hi - ay.lo);
            // The area under each bar counts as occupied.
            for t in [0.25, 0.5, 0.75, 1.0] {
                frac_pts.push((x, t * top));
            }
        }
    }
    let legend: Vec<(String, Glyph)> = c
        .sets
        .iter()
        .zip(&colors)
        .filter(|(s, _)| !s.label.is_empty())
        .map(|(s, &color)| (s.label.clone(), Glyph::Swatch { color, curve: s.density.as_ref().map(|_| lw) }))
        .collect();
    draw_box(&mut chart, &ax, &ay, &sz)?;
    draw_legend(area, &chart, &legend, &frac_pts, &sz)?;
    draw_title(area, &chart, &c.title, &sz, frame.title_h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// (width, height) from a PNG file, checking the signature.
    fn png_size(path: &Path) -> (u32, u32) {
        let b = std::fs::read(path).unwrap();
        assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", path.display());
        assert_eq!(&b[12..16], b"IHDR");
        let be = |k: usize| u32::from_be_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
        (be(16), be(20))
    }

    fn bump_grid(n: usize) -> Grid2 {
        Grid2::from_fn(n, n, (0.0, 1.0), (0.0, 1.0), |x, y| {
            (-((x - 0.4).powi(2) + (y - 0.6).powi(2)) / 0.05).exp()
                - 0.6 * (-((x - 0.8).powi(2) + (y - 0.2).powi(2)) / 0.02).exp()
        })
        .unwrap()
    }

    fn panel<'a>(title: &str, g: &'a Grid2, palette: Palette) -> HeatPanel<'a> {
        HeatPanel {
            title: title.into(),
            grid: g,
            palette,
            range: None,
            contours: vec![Contour { grid: g, level: 0.5, color: RGBColor(255, 255, 255), width: 2 }],
            points: vec![[0.2, 0.2], [0.5, 0.5], [f64::NAN, 0.1], [5.0, 5.0]],
            x_label: "x₁".into(),
            y_label: "x₂".into(),
            colorbar: true,
            colorbar_label: String::new(),
            shade_above: None,
        }
    }

    fn series(label: &str, xs: Vec<f64>, ys: Vec<f64>, style: SeriesStyle) -> Series {
        Series { label: label.into(), xs, ys, err: None, style, color: None }
    }

    fn chart(title: &str, series: Vec<Series>) -> LineChart {
        LineChart {
            title: title.into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: false,
            log_y: false,
            series,
            hlines: Vec::new(),
            x_range: None,
            y_range: None,
        }
    }

    fn normal_pdf(x: f64, m: f64, s: f64) -> f64 {
        (-(x - m).powi(2) / (2.0 * s * s)).exp() / (s * (2.0 * PI).sqrt())
    }

    /// Deterministic pseudo-normal samples (Box–Muller on a LCG).
    fn samples(n: usize, m: f64, s: f64, seed: u64) -> Vec<f64> {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut u = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..n).map(|_| m + s * (-2.0 * u().ln()).sqrt() * (2.0 * PI * u()).cos()).collect()
    }

    fn hist_chart() -> HistChart {
        let xs: Vec<f64> = (0..=200).map(|k| -4.0 + 9.0 * k as f64 / 200.0).collect();
        HistChart {
            title: "Shadow-model statistic".into(),
            x_label: "log-likelihood ratio".into(),
            bins: 40,
            sets: vec![
                HistSet {
                    label: "out".into(),
                    samples: samples(2000, 0.0, 1.0, 1),
                    density: Some((xs.clone(), xs.iter().map(|&x| normal_pdf(x, 0.0, 1.0)).collect())),
                    color: None,
                },
                HistSet {
                    label: "in".into(),
                    samples: samples(2000, 1.2, 0.9, 2),
                    density: Some((xs.clone(), xs.iter().map(|&x| normal_pdf(x, 1.2, 0.9)).collect())),
                    color: None,
                },
            ],
            range: None,
        }
    }

    #[test]
    fn heatmap_png_has_expected_size() {
        let dir = tempfile::tempdir().unwrap();
        let g = bump_grid(60);
        let path = dir.path().join("heat.png");
        let mut p2 = panel("no colour bar", &g, Palette::Grey);
        p2.colorbar = false;
        heatmap_figure(&path, &[panel("a", &g, Palette::Viridis), p2], 300, Some("Figure")).unwrap();
        let cb = (0.24f64 * 300.0).round() as u32;
        let sup = (34.0 * 300.0 / 420.0f64).round() as u32;
        assert_eq!(png_size(&path), (300 + cb + 300, 300 + sup));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn line_and_histogram_pngs_have_expected_size() {
        let dir = tempfile::tempdir().unwrap();
        let xs: Vec<f64> = (0..50).map(|k| k as f64 / 49.0).collect();
        let ys: Vec<f64> = xs.iter().map(|x| (6.0 * x).sin()).collect();
        let path = dir.path().join("lines.png");
        let charts =
            [chart("one", vec![series("sin", xs.clone(), ys.clone(), SeriesStyle::Line)]), chart("two", vec![])];
        // A chart without series is refused…
        let e = line_charts(&path, &charts, (400, 300)).unwrap_err();
        assert!(format!("{e:#}").contains("line chart 'two'") && format!("{e:#}").contains("no series"), "{e:#}");
        assert!(!path.exists());
        // …and two good ones are drawn side by side.
        let charts = [
            chart("one", vec![series("sin", xs.clone(), ys.clone(), SeriesStyle::Line)]),
            chart("", vec![series("", xs, ys, SeriesStyle::Points)]),
        ];
        line_charts(&path, &charts, (400, 300)).unwrap();
        assert_eq!(png_size(&path), (800, 300));
        let path = dir.path().join("hist.png");
        histogram_charts(&path, &[hist_chart()], (500, 350)).unwrap();
        assert_eq!(png_size(&path), (500, 350));
    }

    #[test]
    fn mismatched_and_empty_inputs_are_errors_naming_the_series() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.png");
        fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
            format!("{:#}", r.unwrap_err())
        }
        let c = chart(
            "T",
            vec![
                series("ok", vec![1.0], vec![1.0], SeriesStyle::Line),
                series("bad", vec![1.0, 2.0], vec![1.0], SeriesStyle::Line),
            ],
        );
        let m = msg(line_charts(&path, &[c], (400, 300)));
        assert!(m.contains("series 'bad'") && m.contains("xs has 2 values but ys has 1"), "{m}");
        let mut s = series("e", vec![1.0, 2.0], vec![1.0, 2.0], SeriesStyle::Line);
        s.err = Some(vec![0.1]);
        let m = msg(line_charts(&path, &[chart("T", vec![s])], (400, 300)));
        assert!(m.contains("series 'e'") && m.contains("err has 1"), "{m}");
        let m = msg(line_charts(&path, &[chart("T", vec![series("", vec![], vec![], SeriesStyle::Line)])], (400, 300)));
        assert!(m.contains("series 1 is empty"), "{m}");
        let mut c = chart("T", vec![series("a", vec![1.0], vec![1.0], SeriesStyle::Line)]);
        c.log_x = true;
        c.x_range = Some((0.0, 1.0));
        assert!(msg(line_charts(&path, &[c], (400, 300))).contains("positive"));
        assert!(msg(line_charts(&path, &[], (400, 300))).contains("no charts"));
        let many: Vec<LineChart> =
            (0..12).map(|_| chart("T", vec![series("a", vec![1.0], vec![1.0], SeriesStyle::Line)])).collect();
        assert!(msg(line_charts(&path, &many, (4000, 4000))).contains("too large"));

        let mut h = hist_chart();
        h.sets[1].density = Some((vec![1.0, 2.0], vec![1.0]));
        let m = msg(histogram_charts(&path, &[h], (400, 300)));
        assert!(m.contains("set 'in'") && m.contains("density xs has 2 values but ys has 1"), "{m}");
        let mut h = hist_chart();
        h.sets[0].samples = vec![f64::NAN];
        assert!(msg(histogram_charts(&path, &[h], (400, 300))).contains("set 'out' has no finite samples"));
        let mut h = hist_chart();
        h.bins = 0;
        assert!(msg(histogram_charts(&path, &[h], (400, 300))).contains("bins = 0"));

        let g = bump_grid(10);
        let bad = Grid2 { nx: 3, ..g.clone() };
        let m = msg(heatmap_figure(&path, &[panel("p", &bad, Palette::Viridis)], 300, None));
        assert!(m.contains("panel 'p'") && m.contains("needs 30 values"), "{m}");
        let mut p = panel("q", &g, Palette::Viridis);
        p.contours[0].grid = &bad;
        assert!(msg(heatmap_figure(&path, &[p], 300, None)).contains("contour 1"));
        let mut p = panel("r", &g, Palette::Viridis);
        p.range = Some((1.0, 1.0));
        assert!(msg(heatmap_figure(&path, &[p], 300, None)).contains("colour range"));
        assert!(!path.exists());
        // A directory that does not exist.
        let m = msg(line_charts(
            &dir.path().join("no/such/dir/x.png"),
            &[chart("T", vec![series("a", vec![1.0], vec![1.0], SeriesStyle::Line)])],
            (400, 300),
        ));
        assert!(m.contains("cannot write"), "{m}");
    }

    #[test]
    fn non_finite_points_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nan.png");
        let xs = vec![1.0, 2.0, f64::NAN, 4.0, 5.0, 6.0, 7.0];
        let ys = vec![1.0, f64::INFINITY, 3.0, -4.0, 0.0, 6.0, 7.0];
        let mut s = series("s", xs, ys, SeriesStyle::LinePoints);
        s.err = Some(vec![0.5, f64::NAN, 1.0, -1.0, 100.0, 0.5, 0.5]);
        let mut c = chart("log", vec![s]);
        c.log_y = true;
        c.log_x = true;
        line_charts(&path, &[c], (400, 300)).unwrap();
        // Nothing drawable at all still gives empty axes.
        let c = chart("empty", vec![series("s", vec![f64::NAN], vec![1.0], SeriesStyle::Line)]);
        line_charts(&path, &[c], (400, 300)).unwrap();
    }

    /// Pixels of rows [y0, y1) that are not white.
    fn dark_pixels(buf: &[u8], w: u32, (y0, y1): (u32, u32)) -> usize {
        (y0..y1)
            .flat_map(|y| (0..w).map(move |x| 3 * (y * w + x) as usize))
            .filter(|&k| buf[k] < 128 && buf[k + 1] < 128 && buf[k + 2] < 128)
            .count()
    }

    #[test]
    fn text_is_rendered() {
        let xs = vec![0.0, 1.0];
        let draw = |title: &str| {
            let c = chart(title, vec![series("a", xs.clone(), xs.clone(), SeriesStyle::Line)]);
            render((400, 300), |root| draw_line_chart(root, &c)).unwrap()
        };
        let with = draw("A title with some text");
        let without = draw("");
        // The title band (top 30 px) holds black glyphs only with a title.
        // The title band (rows 0..20 at this size) holds only the title.
        assert!(dark_pixels(&with, 400, (0, 20)) > 100, "{}", dark_pixels(&with, 400, (0, 20)));
        assert_eq!(dark_pixels(&without, 400, (0, 5)), 0);
        // Tick labels: the bottom band has glyphs.
        assert!(dark_pixels(&without, 400, (270, 300)) > 50);
    }

    #[test]
    fn heatmap_cells_and_colorbar_use_the_palette() {
        // Left half low, right half high: the map's left and right sides get
        // the palette's two ends.
        let g = Grid2::from_fn(20, 20, (0.0, 1.0), (0.0, 1.0), |x, _| if x < 0.5 { 0.0 } else { 1.0 }).unwrap();
        let mut p = panel("", &g, Palette::Viridis);
        p.contours.clear();
        p.points.clear();
        let buf =
            render((400 + 96, 400), |root| draw_heat_panel(root, &p, SS as f64 * 400.0 / 420.0, 96 * SS).map(|_| ()))
                .unwrap();
        let px = |x: u32, y: u32| {
            let k = 3 * (y * 496 + x) as usize;
            (buf[k], buf[k + 1], buf[k + 2])
        };
        let lo = palette_color(Palette::Viridis, 0.0);
        let hi = palette_color(Palette::Viridis, 1.0);
        let row: Vec<_> = (0..400).map(|x| px(x, 200)).collect();
        assert!(row.contains(&(lo.0, lo.1, lo.2)) && row.contains(&(hi.0, hi.1, hi.2)));
        let first_lo = row.iter().position(|&c| c == (lo.0, lo.1, lo.2)).unwrap();
        let first_hi = row.iter().position(|&c| c == (hi.0, hi.1, hi.2)).unwrap();
        assert!(first_lo < first_hi);
    }

    #[test]
    fn palettes() {
        assert_eq!(palette_color(Palette::Diverging, 0.5), RGBColor(247, 247, 247));
        assert_eq!(palette_color(Palette::Viridis, 0.0), RGBColor(68, 1, 84));
        assert_eq!(palette_color(Palette::Viridis, 1.0), RGBColor(253, 231, 37));
        assert_eq!(palette_color(Palette::Grey, 2.0), RGBColor(255, 255, 255));
        assert_eq!(palette_color(Palette::Grey, f64::NAN), RGBColor(0, 0, 0));
        let g = Grid2::new(2, 2, (0.0, 1.0), (0.0, 1.0), vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let mut p = panel("", &g, Palette::Diverging);
        assert_eq!(color_range(&p), (-4.0, 4.0));
        p.palette = Palette::Viridis;
        assert_eq!(color_range(&p), (1.0, 4.0));
    }

    #[test]
    fn ticks() {
        assert_eq!(nice_step(1.0, 5), 0.2);
        assert_eq!(nice_step(37.0, 8), 5.0);
        assert_eq!(nice_step(37.0, 5), 10.0);
        assert_eq!(linear_ticks(-0.05, 1.05, 0.2), vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
        assert_eq!(fmt_tick(0.6000000000000001, 0.2, 1.0), "0.6");
        assert_eq!(fmt_tick(2e-5, 1e-5, 5e-5), "2e-5");
        assert_eq!(fmt_tick(250000.0, 50000.0, 3e5), "2.5e5");
        assert_eq!(fmt_tick(15.0, 5.0, 20.0), "15");
        let a = Axis::log(-3.2, 1.1);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0.001", "0.01", "0.1", "1", "10"]);
        assert!(!a.minor.is_empty());
        let a = Axis::log(-12.0, 3.0);
        assert!(a.ticks.len() <= 8 && a.ticks.iter().any(|t| t.1 == "10⁻¹²"), "{:?}", a.ticks);
        // Less than a decade: 1-2-5 ticks or linear ones.
        let a = Axis::log(0.1, 0.9);
        assert!(a.ticks.len() >= 2, "{:?}", a.ticks);
        assert!(a.ticks.iter().all(|t| t.0 >= 0.1 && t.0 <= 0.9));
        let a = Axis::log(2.0f64.log10(), 3.0f64.log10());
        assert!(a.ticks.len() >= 2, "{:?}", a.ticks);
    }

    #[test]
    fn clipping() {
        let b = (0.0, 1.0, 0.0, 1.0);
        assert_eq!(clip_polyline(&[(-1.0, 0.5), (2.0, 0.5)], b), vec![vec![(0.0, 0.5), (1.0, 0.5)]]);
        let pieces = clip_polyline(&[(0.5, 0.5), (0.5, 2.0), (0.7, 2.0), (0.7, 0.5)], b);
        assert_eq!(pieces, vec![vec![(0.5, 0.5), (0.5, 1.0)], vec![(0.7, 1.0), (0.7, 0.5)]]);
        assert!(clip_polyline(&[(2.0, 2.0), (3.0, 3.0)], b).is_empty());
    }

    /// An SVG figure's root (after checking it is well-formed XML) and its
    /// drawing elements of one kind, in document order.
    fn svg_doc(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{} is not well-formed XML: {e}", path.display()));
        text
    }

    fn elements<'a, 'i>(doc: &'a roxmltree::Document<'i>, tag: &str) -> Vec<roxmltree::Node<'a, 'i>> {
        doc.descendants().filter(|n| n.has_tag_name(tag)).collect()
    }

    fn num(n: &roxmltree::Node, attr: &str) -> f64 {
        n.attribute(attr).unwrap_or_else(|| panic!("no {attr}")).parse().unwrap()
    }

    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    #[test]
    fn figure_formats() {
        assert_eq!(FigureFormat::of(Path::new("a/map.svg")), FigureFormat::Svg);
        assert_eq!(FigureFormat::of(Path::new("MAP.SVG")), FigureFormat::Svg);
        assert_eq!(FigureFormat::of(Path::new("map.png")), FigureFormat::Png);
        assert_eq!(FigureFormat::of(Path::new("map")), FigureFormat::Png);
        assert_eq!(" SVG".parse::<FigureFormat>().unwrap(), FigureFormat::Svg);
        assert_eq!("png".parse::<FigureFormat>().unwrap().ext(), "png");
        assert!("pdf".parse::<FigureFormat>().unwrap_err().to_string().contains("expected png or svg"));
    }

    /// The SVG of a heat map has the PNG's layout (size, where the map lies)
    /// and one rectangle per cell, of exactly the palette's colour — darkened
    /// on exactly the cells of the excursion set.
    #[test]
    fn svg_heat_map_has_the_png_layout_and_the_cells_colours() {
        let dir = tempfile::tempdir().unwrap();
        let (nx, ny) = (12, 8);
        let g = Grid2::from_fn(nx, ny, (0.0, 3.0), (10.0, 12.0), |x, y| (x - 1.5) * (y - 10.5)).unwrap();
        let level = 0.2;
        let mut p = panel("released path ε", &g, Palette::Diverging);
        p.contours[0].level = level;
        p.contours[0].color = RGBColor(0, 0, 0);
        p.shade_above = Some(level);
        p.colorbar_label = "µg/m³".into();
        let panels = [p];
        let (png, svg) = (dir.path().join("h.png"), dir.path().join("h.svg"));
        let geo_png = heatmap_figure(&png, &panels, 300, Some("Figure · ε = 1.000")).unwrap();
        let geo_svg = heatmap_figure(&svg, &panels, 300, Some("Figure · ε = 1.000")).unwrap();
        assert_eq!(geo_png, geo_svg);
        let text = svg_doc(&svg);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let root = doc.root_element();
        assert!(root.has_tag_name("svg"));
        let (w, h) = png_size(&png);
        assert_eq!((num(&root, "width"), num(&root, "height")), (w as f64, h as f64));
        assert_eq!(root.attribute("viewBox").unwrap(), format!("0 0 {} {}", w * SS, h * SS));

        // Cells: right after the white background, one per grid point, rows bottom to top.
        let rects = elements(&doc, "rect");
        assert_eq!(rects[0].attribute("fill"), Some("#FFFFFF"));
        let cells = &rects[1..1 + nx * ny];
        let (lo, hi) = color_range(&panels[0]);
        let mut shaded = 0;
        for (k, r) in cells.iter().enumerate() {
            let v = g.at(k % nx, k / nx);
            let mut c = palette_color(Palette::Diverging, (v - lo) / (hi - lo));
            if v >= level {
                c = RGBColor((c.0 as f64 * 0.72) as u8, (c.1 as f64 * 0.72) as u8, (c.2 as f64 * 0.72) as u8);
                shaded += 1;
            }
            assert_eq!(r.attribute("fill"), Some(hex(c).as_str()), "cell {k}");
        }
        assert!(shaded > 0 && shaded < nx * ny, "{shaded}");
        // They tile the map area of the PNG, in drawing pixels (SS per image
        // pixel): from its first pixel to its last (plotters maps the range's
        // upper end onto the area's last pixel, one before the range's end).
        let ss = SS as f64;
        let x0 = cells.iter().map(|r| num(r, "x")).fold(f64::INFINITY, f64::min);
        let x1 = cells.iter().map(|r| num(r, "x") + num(r, "width")).fold(0.0, f64::max);
        let y0 = cells.iter().map(|r| num(r, "y")).fold(f64::INFINITY, f64::min);
        let y1 = cells.iter().map(|r| num(r, "y") + num(r, "height")).fold(0.0, f64::max);
        let area: f64 = cells.iter().map(|r| num(r, "width") * num(r, "height")).sum();
        let gr = geo_png[0];
        assert_eq!((x0, x1, y0, y1), (gr.px.0 * ss, gr.px.1 * ss - 1.0, gr.py.0 * ss, gr.py.1 * ss - 1.0));
        assert_eq!(area, (x1 - x0) * (y1 - y0), "cells overlap or leave gaps");
        // Frames are polylines with a stroke width, never hairline <rect>s.
        assert!(rects.iter().all(|r| r.attribute("fill") != Some("none")));
        let lines = elements(&doc, "polyline");
        assert!(lines.iter().any(|l| l.attribute("stroke") == Some("#000000") && num(l, "stroke-width") >= 2.0));
        // The contour: black polylines of width 2 px (4 drawing px) inside the map.
        let contour: Vec<_> = lines.iter().filter(|l| l.attribute("stroke-width") == Some("4")).collect();
        assert!(!contour.is_empty());
        for l in contour {
            for pt in l.attribute("points").unwrap().split_whitespace() {
                let (x, y) = pt.split_once(',').unwrap();
                let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
                assert!(x >= x0 - 1.0 && x <= x1 + 1.0 && y >= y0 - 1.0 && y <= y1 + 1.0, "{pt}");
            }
        }
        // Text: the titles and the colour bar's unit, in DejaVu Sans or any sans-serif.
        let texts = elements(&doc, "text");
        let strings: Vec<String> = texts.iter().map(|t| t.text().unwrap_or("").trim().to_string()).collect();
        for want in ["Figure · ε = 1.000", "released path ε", "µg/m³", "x₁", "x₂"] {
            assert!(strings.iter().any(|s| s == want), "{want} not in {strings:?}");
        }
        assert!(texts.iter().all(|t| t.attribute("font-family") == Some("DejaVu Sans, sans-serif")));
        // A crisp-edges rule for the cells.
        assert!(elements(&doc, "style")[0].text().unwrap().contains("crispEdges"));
        // Nothing but the figures is left behind.
        let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["h.png", "h.svg"]);
    }

    #[test]
    fn svg_line_charts_and_histograms() {
        let dir = tempfile::tempdir().unwrap();
        let xs: Vec<f64> = (0..30).map(|k| k as f64 / 29.0).collect();
        let mut c = chart(
            "paths — ε = 2",
            vec![
                series("path 1", xs.clone(), xs.iter().map(|x| x.sin()).collect(), SeriesStyle::Line),
                series("path 2", xs.clone(), xs.iter().map(|x| x.cos()).collect(), SeriesStyle::Dashed),
            ],
        );
        c.hlines = vec![(0.5, "t = 0.5".into())];
        let path = dir.path().join("l.svg");
        line_charts(&path, &[c], (400, 300)).unwrap();
        let text = svg_doc(&path);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let root = doc.root_element();
        assert_eq!((num(&root, "width"), num(&root, "height")), (400.0, 300.0));
        let strings: Vec<String> =
            elements(&doc, "text").iter().map(|t| t.text().unwrap().trim().to_string()).collect();
        for want in ["paths — ε = 2", "path 1", "path 2", "t = 0.5", "x", "y"] {
            assert!(strings.iter().any(|s| s == want), "{want} not in {strings:?}");
        }
        // Path 1 is one polyline through its 30 points.
        assert!(
            elements(&doc, "polyline").iter().any(|l| l.attribute("points").unwrap().split_whitespace().count() == 30)
        );
        let path = dir.path().join("h.svg");
        histogram_charts(&path, &[hist_chart()], (400, 300)).unwrap();
        svg_doc(&path);
    }

    #[test]
    fn three_180_panels_render_quickly() {
        let dir = tempfile::tempdir().unwrap();
        let g = bump_grid(180);
        let panels: Vec<HeatPanel> = (0..3).map(|k| panel(&format!("panel {k}"), &g, Palette::Viridis)).collect();
        let t = std::time::Instant::now();
        heatmap_figure(&dir.path().join("big.png"), &panels, 420, Some("timing")).unwrap();
        eprintln!("3×180² heat-map figure: {:?}", t.elapsed());
        // < 1 s in release; generous here for unoptimised test builds.
        assert!(t.elapsed().as_secs_f64() < 10.0, "{:?}", t.elapsed());
    }

    /// Renders example figures to $PLOT_GALLERY (default /tmp/plot-gallery)
    /// for visual inspection: `cargo test -p gpdp-cli plot::tests::gallery -- --ignored`.
    #[test]
    #[ignore]
    fn gallery() {
        let dir = std::path::PathBuf::from(std::env::var("PLOT_GALLERY").unwrap_or("/tmp/plot-gallery".into()));
        std::fs::create_dir_all(&dir).unwrap();
        // Heat maps: truth, private release, difference; contours of the truth's
        // excursion set on each.
        let truth = bump_grid(120);
        let noisy = Grid2::from_fn(120, 120, (0.0, 1.0), (0.0, 1.0), |x, y| {
            truth.at(((x * 119.0).round()) as usize, ((y * 119.0).round()) as usize)
                + 0.15 * (23.0 * x).sin() * (17.0 * y).cos()
        })
        .unwrap();
        let diff = Grid2::new(
            120,
            120,
            (0.0, 1.0),
            (0.0, 1.0),
            noisy.values.iter().zip(&truth.values).map(|(a, b)| a - b).collect(),
        )
        .unwrap();
        let pts: Vec<[f64; 2]> =
            (0..25).map(|k| [((k * 37) % 100) as f64 / 100.0, ((k * 61) % 100) as f64 / 100.0]).collect();
        fn mk<'a>(
            title: &str,
            g: &'a Grid2,
            pal: Palette,
            truth: &'a Grid2,
            noisy: &'a Grid2,
            pts: &[[f64; 2]],
        ) -> HeatPanel<'a> {
            let mut p = panel(title, g, pal);
            p.points = pts.to_vec();
            p.contours = vec![
                Contour { grid: truth, level: 0.5, color: RGBColor(255, 255, 255), width: 2 },
                Contour { grid: noisy, level: 0.5, color: RGBColor(230, 40, 40), width: 2 },
            ];
            p
        }
        let t = std::time::Instant::now();
        heatmap_figure(
            &dir.join("heat_three_panels.png"),
            &[
                mk("Posterior mean μ_D", &truth, Palette::Viridis, &truth, &noisy, &pts),
                mk("Private sample path", &noisy, Palette::Viridis, &truth, &noisy, &pts),
                mk("Difference", &diff, Palette::Diverging, &truth, &noisy, &pts),
            ],
            420,
            Some("Excursion sets {f ≥ 0.5}: truth (white) vs private (red)"),
        )
        .unwrap();
        eprintln!("3×120² heat map: {:?}", t.elapsed());
        // Non-square domain, grey palette, no colour bar in the second panel.
        let wide = Grid2::from_fn(180, 60, (-2.0, 4.0), (0.0, 2.0), |x, y| (x * 1.3).sin() * (y * 2.0).cos()).unwrap();
        let mut p1 = panel("Wide domain [−2,4]×[0,2]", &wide, Palette::Grey);
        p1.contours = vec![Contour { grid: &wide, level: 0.0, color: RGBColor(214, 39, 40), width: 2 }];
        p1.points = vec![[0.0, 1.0], [3.0, 0.5]];
        let mut p2 = panel("Same, Viridis, no colour bar", &wide, Palette::Viridis);
        p2.colorbar = false;
        p2.contours = p1
            .contours
            .iter()
            .map(|c| Contour { grid: c.grid, level: c.level, color: RGBColor(255, 255, 255), width: 1 })
            .collect();
        p2.points.clear();
        heatmap_figure(&dir.join("heat_wide.png"), &[p1, p2], 380, None).unwrap();

        // Line charts: sample paths; attack advantage vs ε (log x, error bars, guide);
        // ε vs L (log y).
        let xs: Vec<f64> = (0..200).map(|k| k as f64 / 199.0).collect();
        let paths: Vec<Series> = (0..4)
            .map(|k| {
                let ys = xs.iter().map(|&x| (x * (3.0 + k as f64) * 2.0).sin() * 0.6 + 0.1 * k as f64).collect();
                Series {
                    label: format!("path {}", k + 1),
                    xs: xs.clone(),
                    ys,
                    err: None,
                    style: SeriesStyle::Line,
                    color: None,
                }
            })
            .chain(std::iter::once(Series {
                label: "posterior mean".into(),
                xs: xs.clone(),
                ys: xs.iter().map(|&x| 0.2 * (x * 5.0).cos()).collect(),
                err: None,
                style: SeriesStyle::Dashed,
                color: Some(RGBColor(0, 0, 0)),
            }))
            .collect();
        let eps: Vec<f64> = vec![0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0];
        let adv: Vec<f64> = eps.iter().map(|&e: &f64| (1.0 - (-e / 8.0).exp()) * 0.9).collect();
        let bound: Vec<f64> = eps.iter().map(|&e: &f64| ((e.exp() - 1.0) / (e.exp() + 1.0)).min(1.0)).collect();
        let ls: Vec<f64> = (1..=64).map(|l| l as f64).collect();
        let charts = [
            LineChart { series: paths, ..chart("Posterior sample paths", vec![]) },
            LineChart {
                title: "Membership attack vs ε".into(),
                x_label: "ε".into(),
                y_label: "advantage".into(),
                log_x: true,
                log_y: false,
                series: vec![
                    Series {
                        label: "empirical (±2 s.e.)".into(),
                        xs: eps.clone(),
                        ys: adv,
                        err: Some(vec![0.04; 7]),
                        style: SeriesStyle::LinePoints,
                        color: None,
                    },
                    Series {
                        label: "DP bound".into(),
                        xs: eps.clone(),
                        ys: bound,
                        err: None,
                        style: SeriesStyle::Dashed,
                        color: None,
                    },
                ],
                hlines: vec![(1.0, "trivial".into())],
                x_range: None,
                y_range: Some((0.0, 1.1)),
            },
            LineChart {
                title: "ε vs number of draws L".into(),
                x_label: "L".into(),
                y_label: "ε".into(),
                log_x: true,
                log_y: true,
                series: vec![
                    Series {
                        label: "r = 1".into(),
                        xs: ls.clone(),
                        ys: ls.iter().map(|l| 0.8 * l.sqrt() + 0.02 * l).collect(),
                        err: None,
                        style: SeriesStyle::Line,
                        color: None,
                    },
                    Series {
                        label: "r = 10".into(),
                        xs: ls.clone(),
                        ys: ls.iter().map(|l| 0.08 * l.sqrt() + 0.002 * l).collect(),
                        err: None,
                        style: SeriesStyle::Points,
                        color: None,
                    },
                ],
                hlines: vec![(10.0, "ε = 10".into())],
                x_range: None,
                y_range: None,
            },
        ];
        line_charts(&dir.join("lines.png"), &charts, (520, 400)).unwrap();

        // Histograms (Figure 6 style).
        let mut h2 = hist_chart();
        h2.title = "Narrow range, 25 bins".into();
        h2.bins = 25;
        h2.range = Some((-1.0, 2.0));
        histogram_charts(&dir.join("histograms.png"), &[hist_chart(), h2], (520, 400)).unwrap();
        // Small sizes stay legible.
        line_charts(&dir.join("lines_small.png"), &charts[1..2], (320, 240)).unwrap();
        line_charts(&dir.join("lines_big.png"), &charts[2..3], (1200, 900)).unwrap();
        heatmap_figure(
            &dir.join("heat_small.png"),
            &[mk("Small panel", &truth, Palette::Viridis, &truth, &noisy, &pts)],
            240,
            Some("Small"),
        )
        .unwrap();
    }
}
