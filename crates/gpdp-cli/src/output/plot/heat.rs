//! Heat-map panels and their colour bars (colours from the library's
//! `gpdp::postprocess::palette`, shared with the web viewer).

use super::*;

pub(super) fn validate_heat_panel(p: &HeatPanel) -> Result<()> {
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

/// Colour of `t` ∈ [0, 1] (clamped) in a palette: the library's
/// [`gpdp::postprocess::palette::color`], which the web viewer also uses.
pub(super) fn palette_color(p: Palette, t: f64) -> RGBColor {
    let [r, g, b] = gpdp::postprocess::palette::color(p, t);
    RGBColor(r, g, b)
}

/// The colour range of a panel: the library's rule
/// ([`gpdp::postprocess::palette::color_range`]).
pub(super) fn color_range(p: &HeatPanel) -> (f64, f64) {
    gpdp::postprocess::palette::color_range(p.palette, p.grid.min_max(), p.range)
}

pub(super) fn draw_heat_panel<DB: Backend>(area: &Area<DB>, p: &HeatPanel, s: f64, cb_w: u32) -> Result<PanelGeoref> {
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
    // A left margin keeps the rotated y description inside the figure.
    let left = sz.pad / 3;
    let avail_w = main_w.saturating_sub(frame.y_area + sz.pad + left) as f64;
    let avail_h = h.saturating_sub(frame.title_h + frame.x_area + sz.pad / 2) as f64;
    ensure!(avail_w >= 40.0 && avail_h >= 40.0, "panel too small for its labels");
    let aspect = ((yhi - ylo) / (xhi - xlo)).clamp(0.5, 2.0);
    let (pw, ph) = if avail_h / avail_w > aspect { (avail_w, avail_w * aspect) } else { (avail_h / aspect, avail_h) };
    let (ex, ey) = ((avail_w - pw).max(0.0) as u32, (avail_h - ph).max(0.0) as u32);
    let main = area.clone().shrink((0, 0), (main_w, h));
    let extra = (left + ex / 2, ey / 2, sz.pad + ex - ex / 2, sz.pad / 2 + ey - ey / 2);
    let mut chart = build_chart(&main, &ax, &ay, &frame, extra)?;

    // Cells: one raster (one image in an SVG), uniform blocks centred on the
    // grid points, top row first.
    let (lo, hi) = color_range(p);
    let mut rgb = Vec::with_capacity(3 * g.nx * g.ny);
    for j in (0..g.ny).rev() {
        for i in 0..g.nx {
            let c = palette_color(p.palette, (g.at(i, j) - lo) / (hi - lo));
            rgb.extend([c.0, c.1, c.2]);
        }
    }
    let raster = Raster { corners: [(xlo, yhi), (xhi, ylo)], nx: g.nx as u32, ny: g.ny as u32, rgb: &rgb };
    chart.draw_series::<plotters::element::BackendCoordOnly, Raster, _, _>([&raster]).map_err(pe)?;
    if let Some(level) = p.shade_above {
        // The excursion set {v ≥ level}, hatched on exactly the cells the
        // colours show: the colours stay readable under it.
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        let px = ((xr.end - xr.start).max(1) as f64, (yr.end - yr.start).max(1) as f64);
        let spacing = 7.0 * s;
        let style = HATCH.stroke_width(((0.9 * s).round() as u32).max(1));
        let segments = hatch_segments(g, level, (xlo, xhi, ylo, yhi), px, spacing);
        chart.draw_series(segments.into_iter().map(|seg| PathElement::new(seg.to_vec(), style))).map_err(pe)?;
    }
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
        let bar = ColorBar {
            palette: p.palette,
            range: (lo, hi),
            extend: extends(&[p.grid], (lo, hi)),
            label: &p.colorbar_label,
        };
        draw_colorbar(&cb, &bar, &sz, top, bottom)?;
    }
    Ok(georef)
}

/// Whether values of `grids` lie below and above the colour range `(lo, hi)`
/// (and are shown in its end colours): the colour bar's extend arrows.
pub(super) fn extends(grids: &[&Grid2], (lo, hi): (f64, f64)) -> (bool, bool) {
    let (mut below, mut above) = (false, false);
    for g in grids {
        let (a, b) = g.min_max();
        below |= a < lo;
        above |= b > hi;
    }
    (below, above)
}

/// The hatch lines over the cells of `g` with value ≥ `level`: lines at 45°
/// on the drawing (`px` = the map's width and height in pixels, whose domain
/// box is `bbox` = (x0, x1, y0, y1)), `spacing` pixels apart, cut to the
/// runs that lie over such cells (run ends found by bisection to 1/64 of a
/// sample step). Returns the segments' end points in domain coordinates.
pub(super) fn hatch_segments(
    g: &Grid2,
    level: f64,
    (x0, x1, y0, y1): (f64, f64, f64, f64),
    (pw, ph): (f64, f64),
    spacing: f64,
) -> Vec<[(f64, f64); 2]> {
    let (cw, ch) = (pw / g.nx as f64, ph / g.ny as f64);
    let inside = |u: f64, v: f64| {
        let i = ((u / cw).floor().max(0.0) as usize).min(g.nx - 1);
        let j = ((v / ch).floor().max(0.0) as usize).min(g.ny - 1);
        g.at(i, j) >= level
    };
    let to_domain = |u: f64, v: f64| (x0 + u / pw * (x1 - x0), y0 + v / ph * (y1 - y0));
    let step = (cw.min(ch) / 3.0).clamp(0.25, 2.0);
    let mut out = Vec::new();
    // Lines v = u − c (u right, v up, in pixels), c from −ph to pw.
    let dc = spacing * std::f64::consts::SQRT_2;
    let mut c = -ph + (dc / 2.0).rem_euclid(dc);
    while c < pw {
        let (u_start, u_end) = (c.max(0.0), (ph + c).min(pw));
        let n = ((u_end - u_start) / step).ceil().max(1.0) as usize;
        let at = |k: f64| u_start + (u_end - u_start) * k / n as f64;
        // The boundary between samples a (state `from`) and b, by bisection.
        let edge = |mut a: f64, mut b: f64, from: bool| {
            for _ in 0..6 {
                let m = 0.5 * (a + b);
                if inside(m, m - c) == from {
                    a = m;
                } else {
                    b = m;
                }
            }
            0.5 * (a + b)
        };
        let mut run_start = if inside(at(0.0), at(0.0) - c) { Some(at(0.0)) } else { None };
        for k in 1..=n {
            let (ua, ub) = (at((k - 1) as f64), at(k as f64));
            let now = inside(ub, ub - c);
            match (run_start, now) {
                (None, true) => run_start = Some(edge(ua, ub, false)),
                (Some(u), false) => {
                    let e = edge(ua, ub, true);
                    out.push([to_domain(u, u - c), to_domain(e, e - c)]);
                    run_start = None;
                }
                _ => {}
            }
        }
        if let Some(u) = run_start {
            out.push([to_domain(u, u - c), to_domain(u_end, u_end - c)]);
        }
        c += dc;
    }
    out
}

/// What a colour bar shows.
pub(super) struct ColorBar<'a> {
    pub(super) palette: Palette,
    /// The values at its bottom and top.
    pub(super) range: (f64, f64),
    /// Values below / above the range exist (shown in the end colours): a
    /// triangle at that end, as matplotlib's `extend`.
    pub(super) extend: (bool, bool),
    /// Caption above it (e.g. the unit); empty = none.
    pub(super) label: &'a str,
}

pub(super) fn draw_colorbar<DB: Backend>(
    area: &Area<DB>,
    bar: &ColorBar,
    sz: &Sizes,
    top: u32,
    bottom: u32,
) -> Result<()> {
    let (palette, (lo, hi)) = (bar.palette, bar.range);
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
    draw_box(&mut chart, &ax, &ay, sz)?;
    // Extend arrows: triangles in the end colours beyond the ends with values past them.
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let base = area.get_base_pixel();
    let (bx0, bx1, by0, by1) = (xr.start - base.0, xr.end - base.0, yr.start - base.1, yr.end - base.1);
    let tri = ((bx1 - bx0) as f64 * 0.8).round() as i32;
    let outline = BLACK.stroke_width(sz.line);
    for (on, y, dir, t) in [(bar.extend.0, by1, 1, 0.0), (bar.extend.1, by0, -1, 1.0)] {
        if on {
            let pts = vec![(bx0, y), (bx1, y), ((bx0 + bx1) / 2, y + dir * tri)];
            area.draw(&Polygon::new(pts.clone(), palette_color(palette, t).filled())).map_err(pe)?;
            let mut closed = pts;
            closed.extend([closed[0], closed[1]]);
            area.draw(&PathElement::new(closed, outline)).map_err(pe)?;
        }
    }
    if !bar.label.is_empty() {
        let style = font(sz.tick).pos(Pos::new(HPos::Left, VPos::Bottom));
        let lift = (sz.tick * 0.6) as i32 + if bar.extend.1 { tri } else { 0 };
        area.draw(&Text::new(bar.label.to_string(), (sz.pad as i32, top as i32 - lift), style)).map_err(pe)?;
    }
    Ok(())
}
