//! Line charts.

use super::*;

pub(super) fn validate_range(name: &str, r: Option<(f64, f64)>, log: bool) -> Result<()> {
    if let Some((lo, hi)) = r {
        ensure!(lo.is_finite() && hi.is_finite() && lo < hi, "{name} ({lo}, {hi}) must be finite with lo < hi");
        ensure!(!log || lo > 0.0, "{name} ({lo}, {hi}) must be positive on a log axis");
    }
    Ok(())
}

pub(super) fn validate_line_chart(c: &LineChart) -> Result<()> {
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

/// `v` with at most three significant decimals and no trailing zeros.
pub(super) fn short_number(v: f64) -> String {
    let mag = v.abs().max(1e-300).log10().floor();
    let decimals = (2.0 - mag).clamp(0.0, 12.0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// The axis for a range given in data units or found from values in drawing units.
pub(super) fn make_axis(log: bool, explicit: Option<(f64, f64)>, vals: Vec<f64>, target: usize) -> Axis {
    let (lo, hi) = match explicit {
        Some((a, b)) if log => (a.log10(), b.log10()),
        Some(r) => r,
        None => auto_range(vals.into_iter(), 0.05, log).unwrap_or((0.0, 1.0)), // nothing to show: 0..1 (1..10 on a log axis)
    };
    if log { Axis::log(lo, hi) } else { Axis::linear(lo, hi, target) }
}

pub(super) fn draw_line_chart<DB: DrawingBackend>(area: &Area<DB>, c: &LineChart) -> Result<()> {
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
    let mut ax = make_axis(c.log_x, c.x_range, xvals, 6);
    if let Some(t) = &c.x_ticks {
        ax.ticks = t
            .iter()
            .filter_map(|&v| Some((ax.tr(v)?, short_number(v))))
            .filter(|t| t.0 >= ax.lo && t.0 <= ax.hi)
            .collect();
        ax.minor.clear();
    }
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
