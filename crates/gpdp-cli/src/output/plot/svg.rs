//! A wrapper of plotters' SVG backend (its own module: the backend traits
//! it implements would shadow plotters' style methods elsewhere).

use plotters::prelude::{DrawingBackend, SVGBackend};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind};

/// Text as an SVG may hold it: plotters escapes `&`, `<`, `>` and quotes,
/// but a control character (other than tab and line breaks) is not allowed
/// in XML 1.0 at all, not even as a character reference — each becomes
/// U+FFFD, so that any label (a unit, a title) gives a well-formed document.
pub(super) fn xml_text(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}');
    if text.chars().any(bad) {
        std::borrow::Cow::Owned(text.chars().map(|c| if bad(c) { '\u{fffd}' } else { c }).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

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
