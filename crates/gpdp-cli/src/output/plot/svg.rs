//! A wrapper of plotters' SVG backend (its own module: the backend traits
//! it implements would shadow plotters' style methods elsewhere).

use std::cell::RefCell;
use std::rc::Rc;

use anyhow::{Context, Result};
use plotters::prelude::{DrawingBackend, SVGBackend};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind};

use super::render::Backend;

/// The first character of a raster's placeholder text (private use: any
/// other text has it replaced, see [`xml_text`]).
const RASTER_MARK: char = '\u{e000}';

/// Text as an SVG may hold it: plotters escapes `&`, `<`, `>` and quotes,
/// but a control character (other than tab and line breaks) is not allowed
/// in XML 1.0 at all, not even as a character reference — each becomes
/// U+FFFD, so that any label (a unit, a title) gives a well-formed document.
/// So does U+E000, which marks where an embedded image goes ([`embed_images`]).
pub(super) fn xml_text(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}' | RASTER_MARK)
    };
    if text.chars().any(bad) {
        std::borrow::Cow::Owned(text.chars().map(|c| if bad(c) { '\u{fffd}' } else { c }).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// plotters' SVG backend, except that an outlined rectangle (a frame) is a
/// closed polyline with the style's stroke width: plotters writes it as a
/// `<rect>` without one, i.e. a hairline of one viewBox unit, which crisp
/// edges may drop altogether. Rasters ([`Backend::raster`]) become `<image>`
/// elements: the backend writes a placeholder text where each goes and keeps
/// the element in its list, which [`embed_images`] puts in place.
pub(super) struct Svg<'a>(SVGBackend<'a>, Rc<RefCell<Vec<String>>>);

impl<'a> Svg<'a> {
    /// Wraps `inner`, collecting the `<image>` elements of rasters in `images`.
    pub(super) fn new(inner: SVGBackend<'a>, images: Rc<RefCell<Vec<String>>>) -> Svg<'a> {
        Svg(inner, images)
    }
}

impl Backend for Svg<'_> {
    fn raster(
        &mut self,
        corners: (BackendCoord, BackendCoord),
        nx: u32,
        ny: u32,
        rgb: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        use base64::Engine;
        use image::ImageEncoder;
        let Some((w, h)) = super::render::raster_extent(corners, nx, ny, rgb) else { return Ok(()) };
        let (x0, y0) = corners.0;
        let mut png = Vec::new();
        image::codecs::png::PngEncoder::new(&mut png).write_image(rgb, nx, ny, image::ColorType::Rgb8).map_err(
            |e| DrawingErrorKind::DrawingError(std::io::Error::other(format!("cannot encode a raster: {e}"))),
        )?;
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        let mut images = self.1.borrow_mut();
        let k = images.len();
        // Stretched over its rectangle, cells kept sharp (no smoothing between them).
        images.push(format!(
            r#"<image x="{x0}" y="{y0}" width="{w}" height="{h}" preserveAspectRatio="none" image-rendering="optimizeSpeed" style="image-rendering:pixelated" xlink:href="data:image/png;base64,{data}"/>"#
        ));
        let style = super::font(10.0);
        self.0.draw_text(&format!("{RASTER_MARK}{k}"), &style, (x0, y0))
    }
}

/// `body` with each raster's placeholder `<text>` element replaced by its
/// `<image>` element (`images[k]` for the placeholder numbered k).
pub(super) fn embed_images(body: &str, images: &[String]) -> Result<String> {
    let mut out = body.to_string();
    for (k, image) in images.iter().enumerate() {
        let mark = format!("{RASTER_MARK}{k}\n</text>");
        let at = out.find(&mark).with_context(|| format!("raster {k}: its placeholder is missing from the SVG"))?;
        let start = out[..at].rfind("<text").with_context(|| format!("raster {k}: placeholder outside a <text>"))?;
        out.replace_range(start..at + mark.len(), image);
    }
    Ok(out)
}

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
        self.0.draw_text(&xml_text(text), style, pos)
    }
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.0.estimate_text_size(text, style)
    }
}
