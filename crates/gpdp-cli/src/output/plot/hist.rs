//! Histograms.

use super::*;

pub(super) fn validate_hist_chart(c: &HistChart) -> Result<()> {
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

pub(super) fn draw_hist_chart<DB: DrawingBackend>(area: &Area<DB>, c: &HistChart) -> Result<()> {
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
