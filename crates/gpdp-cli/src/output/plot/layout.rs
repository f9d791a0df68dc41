//! Layout helpers shared by every chart: sizes, frames, meshes, titles,
//! clipping, legends.

use super::*;

/// Font sizes and paddings for a chart of the given pixel size.
pub(super) struct Sizes {
    pub(super) title: f64,
    pub(super) label: f64,
    pub(super) tick: f64,
    pub(super) pad: u32,
    /// Width of thin lines (frames, axes, grid lines).
    pub(super) line: u32,
    /// Length of tick marks.
    pub(super) mark: u32,
}

impl Sizes {
    /// For a chart area of w×h drawing pixels (SS× the output).
    pub(super) fn for_area(w: u32, h: u32) -> Sizes {
        let s = (w.min(h) as f64 / (420.0 * SS as f64)).clamp(0.55, 3.0);
        Sizes::scaled(s * SS as f64)
    }
    /// For a scale `s` in drawing pixels per nominal pixel (SS at the nominal size).
    pub(super) fn scaled(s: f64) -> Sizes {
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
pub(super) struct Frame {
    pub(super) title_h: u32,
    pub(super) y_area: u32,
    pub(super) x_area: u32,
}

pub(super) fn frame_for<DB: DrawingBackend>(
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
pub(super) fn build_chart<'a, DB: DrawingBackend>(
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
pub(super) fn draw_mesh<DB: DrawingBackend>(
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
pub(super) fn draw_box<DB: DrawingBackend>(chart: &mut Chart<DB>, ax: &Axis, ay: &Axis, sz: &Sizes) -> Result<()> {
    let r = Rectangle::new([(ax.lo, ay.lo), (ax.hi, ay.hi)], BLACK.stroke_width(sz.line));
    chart.draw_series(std::iter::once(r)).map_err(pe)?;
    Ok(())
}

/// A title centred over the plotting area, just above it.
pub(super) fn draw_title<DB: DrawingBackend>(
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
pub(super) fn clip_polyline(pts: &[(f64, f64)], (x0, x1, y0, y1): (f64, f64, f64, f64)) -> Vec<Vec<(f64, f64)>> {
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
pub(super) enum Glyph {
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
pub(super) fn draw_legend<DB: DrawingBackend>(
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
