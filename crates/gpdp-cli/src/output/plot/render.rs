//! The rendering core: PNG (supersampled bitmap) and SVG back ends, the
//! embedded font, atomic writes, size limits, shared colours.

use super::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

pub(super) type Area<DB> = DrawingArea<DB, Shift>;
pub(super) type Coord = Cartesian2d<AxisCoord, AxisCoord>;
pub(super) type Chart<'a, DB> = ChartContext<'a, DB, Coord>;

/// The font family of all text: the embedded DejaVu Sans is registered with
/// plotters under this name (which PNGs are drawn with), and SVGs name it as
/// their `font-family` — DejaVu Sans where installed, else the viewer's
/// generic sans-serif font.
pub(super) const FONT: &str = "DejaVu Sans, sans-serif";
pub(super) const FONT_BYTES: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");

/// Registers the embedded font with plotters once (also as plotters'
/// default family, sans-serif).
pub(super) fn ensure_font() -> Result<()> {
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
pub(super) trait Figure {
    /// What drawing it returns (e.g. where its maps lie).
    type Out;
    fn draw<DB: Backend>(&self, root: &Area<DB>) -> Result<Self::Out>;
}

/// A drawing backend that can also draw a raster image: `nx`×`ny` RGB cells
/// (3 bytes each, top row first) stretched over the pixel rectangle
/// [x0, x1) × [y0, y1), every cell a uniform block (nearest neighbour). A
/// bitmap blits the upscaled cells; an SVG embeds the cells as one PNG
/// image, so a heat map is one `<image>` element, not one `<rect>` per cell.
pub(super) trait Backend: DrawingBackend {
    fn raster(
        &mut self,
        corners: (BackendCoord, BackendCoord),
        nx: u32,
        ny: u32,
        rgb: &[u8],
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>>;
}

/// The pixel size (w, h) of a raster over `corners`, or `None` when there is
/// nothing to draw (an empty rectangle, no cells, or `rgb` not nx·ny cells).
pub(super) fn raster_extent(
    ((x0, y0), (x1, y1)): (BackendCoord, BackendCoord),
    nx: u32,
    ny: u32,
    rgb: &[u8],
) -> Option<(u32, u32)> {
    let (w, h) = ((x1 - x0).max(0) as u32, (y1 - y0).max(0) as u32);
    (w > 0 && h > 0 && nx > 0 && ny > 0 && rgb.len() == 3 * nx as usize * ny as usize).then_some((w, h))
}

impl Backend for BitMapBackend<'_> {
    fn raster(
        &mut self,
        corners: (BackendCoord, BackendCoord),
        nx: u32,
        ny: u32,
        rgb: &[u8],
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        let Some((w, h)) = raster_extent(corners, nx, ny, rgb) else { return Ok(()) };
        let (x0, y0) = corners.0;
        let (w, h) = (w as usize, h as usize);
        let (nx, ny) = (nx as usize, ny as usize);
        // The cell under each pixel's centre: cells are uniform blocks.
        let col: Vec<usize> = (0..w).map(|px| ((2 * px + 1) * nx / (2 * w)).min(nx - 1)).collect();
        let mut buf = vec![0u8; 3 * w * h];
        for (py, row) in buf.chunks_exact_mut(3 * w).enumerate() {
            let j = ((2 * py + 1) * ny / (2 * h)).min(ny - 1);
            let src = &rgb[3 * j * nx..3 * (j + 1) * nx];
            for (px, c) in row.chunks_exact_mut(3).enumerate() {
                c.copy_from_slice(&src[3 * col[px]..3 * col[px] + 3]);
            }
        }
        self.blit_bitmap((x0, y0), (w as u32, h as u32), &buf)
    }
}

/// A raster drawn through a chart: its cells over the rectangle between two
/// corners given in the chart's coordinates (upper left, lower right).
pub(super) struct Raster<'a> {
    pub(super) corners: [(f64, f64); 2],
    pub(super) nx: u32,
    pub(super) ny: u32,
    pub(super) rgb: &'a [u8],
}

impl<'b> plotters::element::PointCollection<'b, (f64, f64)> for &'b Raster<'_> {
    type Point = &'b (f64, f64);
    type IntoIter = std::slice::Iter<'b, (f64, f64)>;
    fn point_iter(self) -> Self::IntoIter {
        self.corners.iter()
    }
}

impl<DB: Backend> plotters::element::Drawable<DB> for Raster<'_> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> std::result::Result<(), DrawingErrorKind<DB::ErrorType>> {
        match (pos.next(), pos.next()) {
            (Some(a), Some(b)) => backend.raster((a, b), self.nx, self.ny, self.rgb),
            _ => Ok(()),
        }
    }
}

/// Draws `fig` of `size` output pixels and writes it to `path` in the format
/// of its extension ([`FigureFormat::of`]).
pub(super) fn write_figure<F: Figure>(path: &Path, size: (u32, u32), fig: &F) -> Result<F::Out> {
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
pub(super) fn render_svg<T>(size: (u32, u32), draw: impl FnOnce(&Area<Svg<'_>>) -> Result<T>) -> Result<(String, T)> {
    check_figure_size(size)?;
    ensure_font()?;
    let (bw, bh) = (size.0 * SS, size.1 * SS);
    let mut doc = String::new();
    let images = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let out = {
        let root = Svg::new(SVGBackend::with_string(&mut doc, (bw, bh)), images.clone()).into_drawing_area();
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
    let body = svg::embed_images(&body, &images.borrow())?;
    let (w, h) = size;
    Ok((
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {bw} {bh}\">\n<style>rect {{ shape-rendering: crispEdges }}</style>{body}"
        ),
        out,
    ))
}

/// Refuses a figure of more than [`MAX_PIXELS`] output pixels.
pub(super) fn check_figure_size(size: (u32, u32)) -> Result<()> {
    ensure!(
        size.0 as u64 * size.1 as u64 <= MAX_PIXELS,
        "a figure of {}×{} px is too large (at most {} Mpx)",
        size.0,
        size.1,
        MAX_PIXELS / 1_000_000
    );
    Ok(())
}

pub(super) fn font(px: f64) -> TextStyle<'static> {
    (FONT, px.max(6.0)).into_font().color(&BLACK)
}

/// A plotters error as an anyhow error.
pub(super) fn pe<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plotting failed: {e:?}")
}

/// Supersampling factor: figures are drawn at SS× the output size and
/// averaged down, which antialiases lines and markers (plotters' bitmap
/// backend does not) and halves the rounding errors of glyph placement.
pub(super) const SS: u32 = 2;

/// Largest figure, in output pixels (the supersampled buffer is SS² times
/// larger).
pub(super) const MAX_PIXELS: u64 = 16_000_000;

/// Renders into a white RGB buffer of the given size. `draw` gets an area of
/// SS× that size and must scale its geometry accordingly.
pub(super) fn render(size: (u32, u32), draw: impl FnOnce(&Area<BitMapBackend<'_>>) -> Result<()>) -> Result<Vec<u8>> {
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

pub(super) fn check_chart_px((w, h): (u32, u32)) -> Result<()> {
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

pub(super) const GRID_LINE: RGBColor = RGBColor(222, 222, 222);
pub(super) const MINOR_LINE: RGBColor = RGBColor(240, 240, 240);
pub(super) const GUIDE: RGBColor = RGBColor(90, 90, 90);
pub(super) const HATCH: RGBColor = RGBColor(25, 25, 25);
