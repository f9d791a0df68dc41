//! Excursion sets {v ≥ u} of values on a regular 2-D grid as polygons, and
//! level-set polylines.
//!
//! Marching squares with linear interpolation along the cell edges (the
//! `contour` crate, smoothed). The region enclosed is the set where the
//! piecewise-linear-along-edges interpolant is ≥ the threshold, restricted to
//! the grid's rectangle: where the set touches the edge of the rectangle the
//! polygon runs along it. Applied to released values this is post-processing.

use super::grid::{Grid2, lerp};

/// A polygon in domain coordinates: closed rings (first vertex == last
/// vertex), the exterior counter-clockwise and the holes clockwise (the
/// right-hand rule of RFC 7946), with x2 pointing up.
#[derive(Debug, Clone, PartialEq)]
pub struct Polygon {
    /// The outer boundary.
    pub exterior: Vec<[f64; 2]>,
    /// Boundaries of the holes, each inside `exterior`.
    pub holes: Vec<Vec<[f64; 2]>>,
}

impl Polygon {
    /// Area of the exterior minus the areas of the holes.
    pub fn area(&self) -> f64 {
        signed_area(&self.exterior).abs() - self.holes.iter().map(|h| signed_area(h).abs()).sum::<f64>()
    }
}

/// Shoelace signed area (positive for counter-clockwise rings with y up).
pub fn signed_area(ring: &[[f64; 2]]) -> f64 {
    if ring.len() < 3 {
        return 0.0;
    }
    let mut s = 0.0;
    for k in 0..ring.len() {
        let [xa, ya] = ring[k];
        let [xb, yb] = ring[(k + 1) % ring.len()];
        s += xa * yb - xb * ya;
    }
    0.5 * s
}

/// A ring vertex: domain coordinates and the fractional grid position
/// t = (tx, ty) ∈ [0,1]², where tx = 0 is the left edge of the rectangle, etc.
#[derive(Clone, Copy)]
struct Vertex {
    p: [f64; 2],
    t: [f64; 2],
}

/// The closed rings of the level set at `threshold` as returned by marching
/// squares, mapped to domain coordinates and clamped to the rectangle, with
/// their orientation in the crate's convention (true = encloses {v ≥ u}).
fn rings(grid: &Grid2, threshold: f64) -> Vec<(Vec<Vertex>, bool)> {
    if grid.check().is_err() {
        debug_assert!(false, "invalid grid: {:?}", grid.check());
        return Vec::new();
    }
    let builder = contour::ContourBuilder::new(grid.nx, grid.ny, true);
    let Ok(mut lines) = builder.lines(&grid.values, &[threshold]) else {
        return Vec::new();
    };
    let Some(line) = lines.pop() else { return Vec::new() };
    let (mls, _) = line.into_inner();
    // The crate places sample (i, j) at (i + 0.5, j + 0.5); the samples outside
    // the grid count as below the threshold, so rings that touch the edge run
    // half a cell outside, on the crate's frame, and are clamped back onto it.
    let (sx, sy) = ((grid.nx - 1) as f64, (grid.ny - 1) as f64);
    let mut out = Vec::new();
    for ls in mls.0 {
        let raw: Vec<[f64; 2]> = ls.0.iter().map(|c| [c.x, c.y]).collect();
        if raw.len() < 4 {
            continue;
        }
        // The crate's rings around {v ≥ u} are clockwise (y up); holes are
        // counter-clockwise.
        let encloses = signed_area(&raw) < 0.0;
        let mut ring: Vec<Vertex> = raw
            .iter()
            .map(|&[cx, cy]| {
                let tx = ((cx - 0.5) / sx).clamp(0.0, 1.0);
                let ty = ((cy - 0.5) / sy).clamp(0.0, 1.0);
                Vertex { p: [lerp(grid.x0, grid.x1, tx), lerp(grid.y0, grid.y1, ty)], t: [tx, ty] }
            })
            .collect();
        ring.dedup_by(|a, b| a.p == b.p);
        if ring.first().map(|v| v.p) != ring.last().map(|v| v.p) {
            let first = ring[0];
            ring.push(first);
        }
        out.push((ring, encloses));
    }
    out
}

/// Is `pt` inside the closed ring (even–odd rule)?
fn ring_contains(ring: &[[f64; 2]], pt: [f64; 2]) -> bool {
    let mut inside = false;
    let n = ring.len();
    let mut j = n - 1;
    for i in 0..n {
        let ([xi, yi], [xj, yj]) = (ring[i], ring[j]);
        if (yi > pt[1]) != (yj > pt[1]) && pt[0] < (xj - xi) * (pt[1] - yi) / (yj - yi) + xi {
            inside = !inside;
        }
        j = i;
    }
    inside
}

/// The excursion set {v ≥ threshold} as polygons with holes, in domain
/// coordinates (see [`Polygon`] for the ring conventions).
///
/// Vertices lie on the segments joining neighbouring grid points, linearly
/// interpolated; where the set reaches the edge of the rectangle the polygon
/// follows the edge. A threshold above every value gives no polygons; one at
/// or below every value gives the whole rectangle. Each hole belongs to the
/// smallest exterior containing it, so nested islands (a ring inside the hole
/// of a ring) come out as separate polygons.
pub fn excursion_polygons(grid: &Grid2, threshold: f64) -> Vec<Polygon> {
    let cell = (grid.x1 - grid.x0) * (grid.y1 - grid.y0);
    let mut exteriors: Vec<(Vec<[f64; 2]>, f64)> = Vec::new();
    let mut holes: Vec<Vec<[f64; 2]>> = Vec::new();
    for (ring, encloses) in rings(grid, threshold) {
        let mut pts: Vec<[f64; 2]> = ring.iter().map(|v| v.p).collect();
        let a = signed_area(&pts);
        // Degenerate rings (a single point exactly at the threshold, slivers
        // squeezed onto the edge of the rectangle) enclose nothing.
        if pts.len() < 4 || a.abs() <= 1e-13 * cell {
            continue;
        }
        if encloses {
            if a < 0.0 {
                pts.reverse();
            }
            exteriors.push((pts, a.abs()));
        } else {
            if a > 0.0 {
                pts.reverse();
            }
            holes.push(pts);
        }
    }
    let mut polys: Vec<Polygon> =
        exteriors.iter().map(|(e, _)| Polygon { exterior: e.clone(), holes: Vec::new() }).collect();
    for hole in holes {
        // Majority vote over the hole's vertices (a vertex may sit on the
        // exterior's boundary when values equal the threshold exactly).
        let parent = exteriors
            .iter()
            .enumerate()
            .filter(|(_, (e, _))| {
                let inside = hole.iter().filter(|&&p| ring_contains(e, p)).count();
                2 * inside > hole.len()
            })
            .min_by(|a, b| a.1.1.total_cmp(&b.1.1))
            .map(|(k, _)| k);
        if let Some(k) = parent {
            polys[k].holes.push(hole);
        }
    }
    polys
}

/// The level set {v = threshold} as polylines in domain coordinates, for
/// drawing contours: the rings of [`excursion_polygons`] without the parts
/// that run along the edge of the rectangle. A closed curve comes out closed
/// (first point == last point); a curve ending on the edge comes out open.
pub fn boundary_lines(grid: &Grid2, threshold: f64) -> Vec<Vec<[f64; 2]>> {
    let on_edge =
        |a: &Vertex, b: &Vertex| (0..2).any(|k| (a.t[k] == 0.0 && b.t[k] == 0.0) || (a.t[k] == 1.0 && b.t[k] == 1.0));
    let mut out = Vec::new();
    for (ring, _) in rings(grid, threshold) {
        if ring.len() < 2 {
            continue;
        }
        let m = ring.len() - 1; // number of segments (the ring is closed)
        let Some(cut) = (0..m).find(|&k| on_edge(&ring[k], &ring[k + 1])) else {
            out.push(ring.iter().map(|v| v.p).collect());
            continue;
        };
        // Walk the segments starting just after an edge segment.
        let mut current: Vec<[f64; 2]> = Vec::new();
        for s in 1..=m {
            let k = (cut + s) % m;
            let (a, b) = (&ring[k], &ring[k + 1]);
            if on_edge(a, b) {
                if current.len() >= 2 {
                    out.push(std::mem::take(&mut current));
                }
                current.clear();
            } else {
                if current.is_empty() {
                    current.push(a.p);
                }
                current.push(b.p);
            }
        }
        if current.len() >= 2 {
            out.push(current);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn total_area(polys: &[Polygon]) -> f64 {
        polys.iter().map(Polygon::area).sum()
    }

    fn all_vertices(polys: &[Polygon]) -> Vec<[f64; 2]> {
        polys.iter().flat_map(|p| p.exterior.iter().chain(p.holes.iter().flatten()).copied()).collect()
    }

    fn assert_closed(r: &[[f64; 2]]) {
        assert!(r.len() >= 4, "ring too short: {r:?}");
        assert_eq!(r.first(), r.last(), "ring not closed");
    }

    /// exp(−|x − c|²/(2s²)) ≥ exp(−ρ²/(2s²)) ⇔ |x − c| ≤ ρ.
    fn bump(c: [f64; 2], s: f64) -> impl Fn(f64, f64) -> f64 {
        move |x, y| (-((x - c[0]).powi(2) + (y - c[1]).powi(2)) / (2.0 * s * s)).exp()
    }

    #[test]
    fn disc_area_and_vertices() {
        let (c, s, rho) = ([0.5, 0.5], 0.2, 0.3);
        let g = Grid2::from_fn(101, 101, (0.0, 1.0), (0.0, 1.0), bump(c, s)).unwrap();
        let u = (-rho * rho / (2.0 * s * s)).exp();
        let polys = excursion_polygons(&g, u);
        assert_eq!(polys.len(), 1);
        assert!(polys[0].holes.is_empty());
        assert_closed(&polys[0].exterior);
        assert!(signed_area(&polys[0].exterior) > 0.0, "exterior must be counter-clockwise");
        let a = total_area(&polys);
        let exact = PI * rho * rho;
        assert!((a - exact).abs() < 0.01 * exact, "area {a} vs {exact}");
        let h = 0.01;
        for [x, y] in all_vertices(&polys) {
            let r = ((x - c[0]).powi(2) + (y - c[1]).powi(2)).sqrt();
            assert!((r - rho).abs() <= h, "vertex ({x}, {y}) at radius {r}");
        }
        let lines = boundary_lines(&g, u);
        assert_eq!(lines.len(), 1);
        assert_closed(&lines[0]);
    }

    #[test]
    fn vertices_interpolate_between_grid_points() {
        // v = x on a 3×2 grid over [2, 6]×[−1, 1]: {v ≥ 3.5} = [3.5, 6]×[−1, 1].
        let g = Grid2::from_fn(3, 2, (2.0, 6.0), (-1.0, 1.0), |x, _| x).unwrap();
        let polys = excursion_polygons(&g, 3.5);
        assert_eq!(polys.len(), 1);
        let xs: Vec<f64> = polys[0].exterior.iter().map(|p| p[0]).collect();
        let ys: Vec<f64> = polys[0].exterior.iter().map(|p| p[1]).collect();
        let (xmin, xmax) = (xs.iter().cloned().fold(f64::INFINITY, f64::min), xs.iter().cloned().fold(-1e9, f64::max));
        let (ymin, ymax) = (ys.iter().cloned().fold(f64::INFINITY, f64::min), ys.iter().cloned().fold(-1e9, f64::max));
        assert!((xmin - 3.5).abs() < 1e-12 && xmax == 6.0 && ymin == -1.0 && ymax == 1.0, "{:?}", polys[0]);
        assert!((total_area(&polys) - 2.5 * 2.0).abs() < 1e-12);
        let lines = boundary_lines(&g, 3.5);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].iter().all(|p| (p[0] - 3.5).abs() < 1e-12), "{lines:?}");
        assert_eq!(lines[0].len(), 2);
    }

    #[test]
    fn annulus_has_a_hole() {
        // v = −(|x − c| − 0.3)²: {v ≥ −0.1²} = {0.2 ≤ |x − c| ≤ 0.4}.
        let c = [0.5, 0.5];
        let g = Grid2::from_fn(101, 101, (0.0, 1.0), (0.0, 1.0), |x, y| {
            let r = ((x - c[0]).powi(2) + (y - c[1]).powi(2)).sqrt();
            -(r - 0.3).powi(2)
        })
        .unwrap();
        let polys = excursion_polygons(&g, -0.01);
        assert_eq!(polys.len(), 1);
        assert_eq!(polys[0].holes.len(), 1);
        assert_closed(&polys[0].holes[0]);
        assert!(signed_area(&polys[0].holes[0]) < 0.0, "holes must be clockwise");
        let exact = PI * (0.4f64.powi(2) - 0.2f64.powi(2));
        let a = total_area(&polys);
        assert!((a - exact).abs() < 0.01 * exact, "area {a} vs {exact}");
        assert_eq!(boundary_lines(&g, -0.01).len(), 2);
    }

    #[test]
    fn nested_rings_become_separate_polygons() {
        // −cos(k r) ≥ 1/2 on two concentric annuli; the inner annulus lies in
        // the hole of the outer one (the corners, r > 1/2, are masked out).
        let k = 3.0 * PI / 0.42;
        let g = Grid2::from_fn(161, 161, (-0.5, 0.5), (-0.5, 0.5), |x, y| {
            let r = (x * x + y * y).sqrt();
            if r < 0.5 { -(k * r).cos() } else { -1.0 }
        })
        .unwrap();
        let mut polys = excursion_polygons(&g, 0.5);
        assert_eq!(polys.len(), 2);
        polys.sort_by(|a, b| a.area().total_cmp(&b.area()));
        assert_eq!(polys[0].holes.len(), 1);
        assert_eq!(polys[1].holes.len(), 1);
        let ann = |a: f64, b: f64| PI * ((b / k).powi(2) - (a / k).powi(2));
        let (inner, outer) = (ann(2.0 * PI / 3.0, 4.0 * PI / 3.0), ann(8.0 * PI / 3.0, 10.0 * PI / 3.0));
        assert!((polys[0].area() - inner).abs() < 0.01 * inner, "{} vs {inner}", polys[0].area());
        assert!((polys[1].area() - outer).abs() < 0.01 * outer, "{} vs {outer}", polys[1].area());
    }

    #[test]
    fn empty_and_full() {
        let g = Grid2::from_fn(21, 11, (0.0, 2.0), (0.0, 1.0), bump([1.0, 0.5], 0.3)).unwrap();
        let (lo, hi) = g.min_max();
        assert!(excursion_polygons(&g, hi + 1e-9).is_empty());
        assert!(boundary_lines(&g, hi + 1e-9).is_empty());
        for u in [lo, lo - 1.0] {
            let polys = excursion_polygons(&g, u);
            assert_eq!(polys.len(), 1);
            assert!(polys[0].holes.is_empty());
            assert!((total_area(&polys) - 2.0).abs() < 1e-12, "{}", total_area(&polys));
            for [x, y] in &polys[0].exterior {
                assert!((0.0..=2.0).contains(x) && (0.0..=1.0).contains(y));
            }
            assert!(boundary_lines(&g, u).is_empty(), "the rectangle's edge is not a level set");
        }
    }

    #[test]
    fn non_square_grid_and_bounds() {
        // Disc of radius 0.6 centred at (3, −1) on [1, 5]×[−2.5, 0.5] with
        // 161×61 points (different spacings along x and y).
        let (c, s, rho) = ([3.0, -1.0], 0.5, 0.6);
        let g = Grid2::from_fn(161, 61, (1.0, 5.0), (-2.5, 0.5), bump(c, s)).unwrap();
        let u = (-rho * rho / (2.0 * s * s)).exp();
        let polys = excursion_polygons(&g, u);
        assert_eq!(polys.len(), 1);
        let exact = PI * rho * rho;
        assert!((total_area(&polys) - exact).abs() < 0.01 * exact);
        let h = g.spacing().0.max(g.spacing().1);
        for [x, y] in all_vertices(&polys) {
            let r = ((x - c[0]).powi(2) + (y - c[1]).powi(2)).sqrt();
            assert!((r - rho).abs() <= h, "vertex ({x}, {y}) at radius {r}");
        }
        // A set cut by the rectangle's edge: the disc centred on the left edge.
        let g = Grid2::from_fn(161, 61, (1.0, 5.0), (-2.5, 0.5), bump([1.0, -1.0], s)).unwrap();
        let polys = excursion_polygons(&g, u);
        assert_eq!(polys.len(), 1);
        let half = exact / 2.0;
        assert!((total_area(&polys) - half).abs() < 0.01 * half, "{} vs {half}", total_area(&polys));
        assert!(all_vertices(&polys).iter().all(|&[x, _]| x >= 1.0));
        let lines = boundary_lines(&g, u);
        assert_eq!(lines.len(), 1);
        assert_ne!(lines[0].first(), lines[0].last(), "an open arc ending on the edge");
        for [x, y] in &lines[0] {
            let r = ((x - 1.0).powi(2) + (y + 1.0).powi(2)).sqrt();
            assert!((r - rho).abs() <= h);
        }
    }
}
