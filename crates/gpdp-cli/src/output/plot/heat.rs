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

pub(super) fn draw_heat_panel<DB: DrawingBackend>(
    area: &Area<DB>,
    p: &HeatPanel,
    s: f64,
    cb_w: u32,
) -> Result<PanelGeoref> {
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

pub(super) fn draw_colorbar<DB: DrawingBackend>(
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
