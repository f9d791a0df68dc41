//! Hexagonal binning of point records (x, y, value): per cell the count and
//! the **median** value (the paper's App. D.2 aggregates sales onto a
//! hexagonal lattice and gives every non-empty hexagon the median log price).
//!
//! # Geometry
//!
//! Pointy-top hexagons (two vertical edges, a vertex at the top and at the
//! bottom) on two offset rectangular lattices, as matplotlib's `hexbin`:
//!
//! ```text
//! lattice A: c = o + (i·sx, j·sy),             i = 0..=nx, j = 0..=ny
//! lattice B: c = o + ((i + ½)·sx, (j + ½)·sy), i = 0..nx,  j = 0..ny
//! ```
//!
//! with `nx = size` hexagons across x, `sx = W/nx` (W the box width) and o
//! the lattice origin. A point belongs to the centre nearest in the metric
//!
//! ```text
//! d² = (Δx/sx)² + 3·(Δy/sy)²,
//! ```
//!
//! for which the cells (Voronoi cells of A ∪ B) are regular hexagons in the
//! coordinates (x/sx, √3·y/sy), with vertices at c + (0, ±sy/3) and
//! c + (±sx/2, ±sy/6). Two layouts fix sy, ny and o:
//!
//! - [`HexLayout::Regular`] (default): sy = √3·sx, so d² = |Δ|²/sx² is the
//!   Euclidean distance and the cells are **true regular hexagons** in the
//!   data's units (flat-to-flat width sx, circumradius sx/√3) — the right
//!   choice for isotropic coordinates such as British National Grid metres.
//!   ny = ⌈H/sy⌉ (at least 1) rows are laid out centred vertically on the box
//!   (o = (x0, (y0 + y1)/2 − ny·sy/2)), so the lattice is symmetric under
//!   both reflections of the box.
//! - [`HexLayout::Matplotlib`]: matplotlib's `hexbin(gridsize = size)`:
//!   ny = ⌊nx/√3⌋ (at least 1), sy = H/ny, o = (x0, y0). The cells are
//!   hexagons stretched by sy/(√3·sx) along y (regular only when the box's
//!   aspect happens to match); this reproduces the authors' lattice.
//!
//! Ties (a point exactly on a shared edge) go to lattice B, and within
//! lattice A to the larger index (rounding half up), as matplotlib.
//!
//! # Box
//!
//! The box is given, or is the data's extent [min x, max x] × [min y, max y]
//! widened by 10⁻⁹ of its width/height on every side (as matplotlib). A
//! degenerate extent is widened to a square: a zero width becomes the
//! height (and vice versa), and a single location becomes a unit square
//! around it. Points outside a given box are not binned (counted). Every
//! point of the box lies in exactly one cell.
//!
//! # Cells kept
//!
//! A cell is reported when it holds `count ≥ min_count` points (inclusive;
//! `min_count ≥ 1`, empty cells have no median). The median of an even
//! count is the mean of the two middle values.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::{Error, Result, invalid};

/// How the rows of hexagons are spaced (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HexLayout {
    /// sy = √3·sx: true regular hexagons in the data's units.
    #[default]
    Regular,
    /// ny = ⌊nx/√3⌋, sy = H/ny: matplotlib's `hexbin` lattice.
    Matplotlib,
}

impl std::str::FromStr for HexLayout {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "regular" => Ok(HexLayout::Regular),
            "matplotlib" => Ok(HexLayout::Matplotlib),
            _ => Err(Error::InvalidConfig {
                field: "hexagon layout",
                value: s.to_string(),
                requirement: "'regular' or 'matplotlib'",
            }),
        }
    }
}

/// The two offset lattices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Sublattice {
    /// Centres o + (i·sx, j·sy).
    A,
    /// Centres o + ((i + ½)·sx, (j + ½)·sy).
    B,
}

/// A cell: its lattice and indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CellIndex {
    /// Which lattice.
    pub lattice: Sublattice,
    /// Column index.
    pub i: usize,
    /// Row index.
    pub j: usize,
}

/// A hexagonal lattice over a box (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HexGrid {
    /// The box covered: [x0, x1, y0, y1].
    pub bbox: [f64; 4],
    /// Lattice origin o.
    pub origin: [f64; 2],
    /// Column spacing sx (the flat-to-flat width of a cell).
    pub sx: f64,
    /// Row spacing sy of each lattice.
    pub sy: f64,
    /// Columns nx (= size).
    pub nx: usize,
    /// Rows ny.
    pub ny: usize,
    /// The layout.
    pub layout: HexLayout,
}

fn check_box([x0, x1, y0, y1]: [f64; 4]) -> Result<()> {
    if !(x0.is_finite() && x1.is_finite() && x0 < x1) {
        return Err(Error::InvalidConfig {
            field: "box x-range",
            value: format!("[{x0}, {x1}]"),
            requirement: "finite with x0 < x1",
        });
    }
    if !(y0.is_finite() && y1.is_finite() && y0 < y1) {
        return Err(Error::InvalidConfig {
            field: "box y-range",
            value: format!("[{y0}, {y1}]"),
            requirement: "finite with y0 < y1",
        });
    }
    Ok(())
}

impl HexGrid {
    /// The lattice with `size` columns over `bbox` = [x0, x1, y0, y1].
    pub fn new(bbox: [f64; 4], size: usize, layout: HexLayout) -> Result<Self> {
        check_box(bbox)?;
        if size == 0 {
            return Err(invalid("hexagon size (columns across x)", 0.0, "≥ 1"));
        }
        let [x0, x1, y0, y1] = bbox;
        let (w, h) = (x1 - x0, y1 - y0);
        let nx = size;
        let sx = w / nx as f64;
        let (sy, ny, origin) = match layout {
            HexLayout::Regular => {
                let sy = 3f64.sqrt() * sx;
                let ny = ((h / sy).ceil() as usize).max(1);
                (sy, ny, [x0, 0.5 * (y0 + y1) - 0.5 * ny as f64 * sy])
            }
            HexLayout::Matplotlib => {
                let ny = ((nx as f64 / 3f64.sqrt()).floor() as usize).max(1);
                (h / ny as f64, ny, [x0, y0])
            }
        };
        if !(sx > 0.0 && sy > 0.0 && sx.is_finite() && sy.is_finite()) {
            return Err(Error::InvalidConfig {
                field: "hexagon spacing",
                value: format!("sx = {sx}, sy = {sy}"),
                requirement: "finite and > 0 (box too small or too large for this size)",
            });
        }
        Ok(HexGrid { bbox, origin, sx, sy, nx, ny, layout })
    }

    /// The data's extent, widened by 10⁻⁹ of its width/height on each side
    /// (a degenerate extent becomes a square; see the module documentation).
    pub fn data_box(points: &[[f64; 3]]) -> Result<[f64; 4]> {
        if points.is_empty() {
            return Err(Error::NotEnoughData("hexbin: no points".into()));
        }
        let mut b = [f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY];
        for p in points {
            b = [b[0].min(p[0]), b[1].max(p[0]), b[2].min(p[1]), b[3].max(p[1])];
        }
        let (mut w, mut h) = (b[1] - b[0], b[3] - b[2]);
        if w <= 0.0 && h <= 0.0 {
            (w, h) = (1.0, 1.0);
        } else if w <= 0.0 {
            w = h;
        } else if h <= 0.0 {
            h = w;
        }
        let (cx, cy) = (0.5 * (b[0] + b[1]), 0.5 * (b[2] + b[3]));
        let (hw, hh) = (0.5 * w * (1.0 + 2e-9), 0.5 * h * (1.0 + 2e-9));
        Ok([cx - hw, cx + hw, cy - hh, cy + hh])
    }

    /// Whether (x, y) is in the box (edges included).
    pub fn contains(&self, x: f64, y: f64) -> bool {
        let [x0, x1, y0, y1] = self.bbox;
        x >= x0 && x <= x1 && y >= y0 && y <= y1
    }

    /// The cell of (x, y); `None` outside the box (or non-finite).
    pub fn locate(&self, x: f64, y: f64) -> Option<CellIndex> {
        if !self.contains(x, y) {
            return None;
        }
        let u = (x - self.origin[0]) / self.sx;
        let v = (y - self.origin[1]) / self.sy;
        let (nx, ny) = (self.nx as f64, self.ny as f64);
        // Nearest centre of each lattice, clamped to the finite lattices:
        // inside the box these two are the only candidates (a clamped B
        // centre is the nearest B centre of the edge column/row).
        let ia = (u + 0.5).floor().clamp(0.0, nx);
        let ja = (v + 0.5).floor().clamp(0.0, ny);
        let ib = u.floor().clamp(0.0, nx - 1.0);
        let jb = v.floor().clamp(0.0, ny - 1.0);
        let da = (u - ia).powi(2) + 3.0 * (v - ja).powi(2);
        let db = (u - ib - 0.5).powi(2) + 3.0 * (v - jb - 0.5).powi(2);
        Some(if da < db {
            CellIndex { lattice: Sublattice::A, i: ia as usize, j: ja as usize }
        } else {
            CellIndex { lattice: Sublattice::B, i: ib as usize, j: jb as usize }
        })
    }

    /// The centre of a cell.
    pub fn centre(&self, c: CellIndex) -> [f64; 2] {
        let off = match c.lattice {
            Sublattice::A => 0.0,
            Sublattice::B => 0.5,
        };
        [self.origin[0] + (c.i as f64 + off) * self.sx, self.origin[1] + (c.j as f64 + off) * self.sy]
    }

    /// The six vertices of a cell, counter-clockwise from the top.
    pub fn vertices(&self, c: CellIndex) -> [[f64; 2]; 6] {
        let [x, y] = self.centre(c);
        let (hx, ty, sy6) = (0.5 * self.sx, self.sy / 3.0, self.sy / 6.0);
        [[x, y + ty], [x - hx, y + sy6], [x - hx, y - sy6], [x, y - ty], [x + hx, y - sy6], [x + hx, y + sy6]]
    }

    /// Number of cells of both lattices: (nx + 1)(ny + 1) + nx·ny.
    pub fn cell_count(&self) -> usize {
        (self.nx + 1) * (self.ny + 1) + self.nx * self.ny
    }

    /// Every cell, lattice A first, rows (j) outer, columns (i) inner.
    pub fn cells(&self) -> impl Iterator<Item = CellIndex> + '_ {
        let a = (0..=self.ny).flat_map(move |j| (0..=self.nx).map(move |i| CellIndex { lattice: Sublattice::A, i, j }));
        let b = (0..self.ny).flat_map(move |j| (0..self.nx).map(move |i| CellIndex { lattice: Sublattice::B, i, j }));
        a.chain(b)
    }

    /// The squared distance of the binning metric, d² = (Δx/sx)² + 3(Δy/sy)².
    pub fn metric(&self, a: [f64; 2], b: [f64; 2]) -> f64 {
        ((a[0] - b[0]) / self.sx).powi(2) + 3.0 * ((a[1] - b[1]) / self.sy).powi(2)
    }
}

/// How to bin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HexbinSpec {
    /// Hexagons across x (matplotlib's `gridsize`) (default 40).
    pub size: usize,
    /// Keep cells with at least this many points (inclusive, ≥ 1) (default 1).
    pub min_count: usize,
    /// Box [x0, x1, y0, y1]; `None` = the data's extent.
    pub bbox: Option<[f64; 4]>,
    /// Row spacing (default regular).
    pub layout: HexLayout,
}

impl Default for HexbinSpec {
    fn default() -> Self {
        HexbinSpec { size: 40, min_count: 1, bbox: None, layout: HexLayout::Regular }
    }
}

/// One reported cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HexCell {
    /// Centre x.
    pub x: f64,
    /// Centre y.
    pub y: f64,
    /// Points in the cell.
    pub count: usize,
    /// Median of their values.
    pub median: f64,
    /// Lattice and indices.
    pub index: CellIndex,
}

/// The result of binning.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hexbin {
    /// The lattice.
    pub grid: HexGrid,
    /// Cells with count ≥ min_count, lattice A first, then by row and column.
    pub cells: Vec<HexCell>,
    /// Points binned (inside the box).
    pub points_binned: usize,
    /// Points outside a given box (not binned).
    pub points_outside: usize,
    /// Non-empty cells dropped by `min_count`.
    pub cells_below_min_count: usize,
    /// Points in those cells.
    pub points_below_min_count: usize,
}

/// The median (mean of the two middle values for an even count); NaN for
/// no values. Sorts `values`.
pub fn median(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    if n % 2 == 1 { values[n / 2] } else { 0.5 * (values[n / 2 - 1] + values[n / 2]) }
}

/// Bins `points` = (x, y, value) (see the module documentation).
pub fn hexbin(points: &[[f64; 3]], spec: &HexbinSpec) -> Result<Hexbin> {
    if spec.min_count == 0 {
        return Err(invalid("hexbin min count", 0.0, "≥ 1 (empty cells have no median)"));
    }
    if let Some(k) = points.iter().position(|p| !p.iter().all(|v| v.is_finite())) {
        let p = points[k];
        return Err(Error::InvalidConfig {
            field: "hexbin point",
            value: format!("#{} = ({}, {}, {})", k + 1, p[0], p[1], p[2]),
            requirement: "finite",
        });
    }
    let bbox = match spec.bbox {
        Some(b) => b,
        None => HexGrid::data_box(points)?,
    };
    let grid = HexGrid::new(bbox, spec.size, spec.layout)?;
    let mut bins: BTreeMap<CellIndex, Vec<f64>> = BTreeMap::new();
    let mut outside = 0;
    for p in points {
        match grid.locate(p[0], p[1]) {
            Some(c) => bins.entry(c).or_default().push(p[2]),
            None => outside += 1,
        }
    }
    let mut out = Hexbin {
        grid,
        cells: Vec::new(),
        points_binned: points.len() - outside,
        points_outside: outside,
        cells_below_min_count: 0,
        points_below_min_count: 0,
    };
    for (index, mut vals) in bins {
        if vals.len() < spec.min_count {
            out.cells_below_min_count += 1;
            out.points_below_min_count += vals.len();
            continue;
        }
        let [x, y] = grid.centre(index);
        out.cells.push(HexCell { x, y, count: vals.len(), median: median(&mut vals), index });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const BOX: [f64; 4] = [0.0, 10.0, -3.0, 4.0];

    fn grid(layout: HexLayout) -> HexGrid {
        HexGrid::new(BOX, 5, layout).unwrap()
    }

    fn nearest_brute(g: &HexGrid, p: [f64; 2]) -> f64 {
        g.cells().map(|c| g.metric(p, g.centre(c))).fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn regular_layout_has_regular_hexagons_and_covers_the_box() {
        let g = grid(HexLayout::Regular);
        assert_eq!((g.nx, g.sx), (5, 2.0));
        assert!((g.sy - 2.0 * 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(g.ny, 3); // ⌈7 / 3.46⌉
        assert!(g.origin[1] <= BOX[2] && g.origin[1] + g.ny as f64 * g.sy >= BOX[3]);
        // Six neighbours at distance sx; six vertices at distance sx/√3.
        let c = CellIndex { lattice: Sublattice::B, i: 2, j: 1 };
        let [x, y] = g.centre(c);
        let mut near: Vec<f64> = g
            .cells()
            .filter(|d| *d != c)
            .map(|d| {
                let [u, v] = g.centre(d);
                ((u - x).powi(2) + (v - y).powi(2)).sqrt()
            })
            .filter(|d| *d < 1.5 * g.sx)
            .collect();
        near.sort_by(f64::total_cmp);
        assert_eq!(near.len(), 6);
        assert!(near.iter().all(|d| (d - g.sx).abs() < 1e-12));
        for v in g.vertices(c) {
            assert!((((v[0] - x).powi(2) + (v[1] - y).powi(2)).sqrt() - g.sx / 3f64.sqrt()).abs() < 1e-12);
        }
        // The metric is Euclidean / sx².
        assert!((g.metric([0.0, 0.0], [1.0, 1.0]) - 2.0 / 4.0).abs() < 1e-12);
    }

    #[test]
    fn matplotlib_layout_matches_gridsize() {
        let g = HexGrid::new([0.0, 1.0, 0.0, 1.0], 40, HexLayout::Matplotlib).unwrap();
        assert_eq!((g.nx, g.ny), (40, 23));
        assert_eq!(g.cell_count(), 41 * 24 + 40 * 23);
        assert_eq!(g.origin, [0.0, 0.0]);
        assert!((g.sy - 1.0 / 23.0).abs() < 1e-15);
        assert_eq!("Matplotlib".parse::<HexLayout>().unwrap(), HexLayout::Matplotlib);
        assert!("square".parse::<HexLayout>().is_err());
    }

    #[test]
    fn centres_map_to_themselves_and_edges_split_correctly() {
        for layout in [HexLayout::Regular, HexLayout::Matplotlib] {
            let g = grid(layout);
            for c in g.cells() {
                let [x, y] = g.centre(c);
                if g.contains(x, y) {
                    assert_eq!(g.locate(x, y), Some(c), "{layout:?} {c:?}");
                }
            }
            // A(2,1) and its B neighbour (2,1) share an edge through the
            // midpoint of their centres; so do A(2,1) and A(3,1).
            let a = CellIndex { lattice: Sublattice::A, i: 2, j: 1 };
            for b in
                [CellIndex { lattice: Sublattice::B, i: 2, j: 1 }, CellIndex { lattice: Sublattice::A, i: 3, j: 1 }]
            {
                let (ca, cb) = (g.centre(a), g.centre(b));
                let m = [0.5 * (ca[0] + cb[0]), 0.5 * (ca[1] + cb[1])];
                let towards = |c: [f64; 2]| [m[0] + 1e-6 * (c[0] - m[0]), m[1] + 1e-6 * (c[1] - m[1])];
                let pa = towards(ca);
                let pb = towards(cb);
                assert_eq!(g.locate(pa[0], pa[1]), Some(a));
                assert_eq!(g.locate(pb[0], pb[1]), Some(b));
            }
            // Ties: exactly on the A–B edge goes to B.
            let (ca, cb) = (g.centre(a), g.centre(CellIndex { lattice: Sublattice::B, i: 2, j: 1 }));
            let m = [0.5 * (ca[0] + cb[0]), 0.5 * (ca[1] + cb[1])];
            assert_eq!(g.locate(m[0], m[1]).unwrap().lattice, Sublattice::B);
        }
    }

    #[test]
    fn every_point_goes_to_a_nearest_centre() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for layout in [HexLayout::Regular, HexLayout::Matplotlib] {
            for size in [1, 2, 5, 13] {
                let g = HexGrid::new(BOX, size, layout).unwrap();
                let mut pts: Vec<[f64; 2]> =
                    (0..2000).map(|_| [rng.random_range(BOX[0]..=BOX[1]), rng.random_range(BOX[2]..=BOX[3])]).collect();
                // Edges and corners of the box.
                for t in 0..=20 {
                    let s = t as f64 / 20.0;
                    let x = BOX[0] + s * (BOX[1] - BOX[0]);
                    let y = BOX[2] + s * (BOX[3] - BOX[2]);
                    pts.extend([[x, BOX[2]], [x, BOX[3]], [BOX[0], y], [BOX[1], y]]);
                }
                for p in pts {
                    let c = g.locate(p[0], p[1]).expect("inside the box");
                    let d = g.metric(p, g.centre(c));
                    let best = nearest_brute(&g, p);
                    assert!(d <= best + 1e-9, "{layout:?} size {size}: {p:?} → {c:?} at {d}, nearest {best}");
                }
                assert_eq!(g.locate(BOX[1] + 1e-9, 0.0), None);
                assert_eq!(g.locate(f64::NAN, 0.0), None);
            }
        }
    }

    #[test]
    fn regular_layout_is_mirror_symmetric() {
        let g = grid(HexLayout::Regular);
        let (cx, cy) = (0.5 * (BOX[0] + BOX[1]), 0.5 * (BOX[2] + BOX[3]));
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..500 {
            let p = [rng.random_range(BOX[0]..BOX[1]), rng.random_range(BOX[2]..BOX[3])];
            let c = g.centre(g.locate(p[0], p[1]).unwrap());
            for (q, want) in
                [([2.0 * cx - p[0], p[1]], [2.0 * cx - c[0], c[1]]), ([p[0], 2.0 * cy - p[1]], [c[0], 2.0 * cy - c[1]])]
            {
                let got = g.centre(g.locate(q[0], q[1]).unwrap());
                assert!((got[0] - want[0]).abs() < 1e-9 && (got[1] - want[1]).abs() < 1e-9, "{p:?}");
            }
        }
    }

    #[test]
    fn medians_counts_and_min_count() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [5.0]), 5.0);
        assert!(median(&mut []).is_nan());
        let g = grid(HexLayout::Regular);
        let a = g.centre(CellIndex { lattice: Sublattice::A, i: 1, j: 1 });
        let b = g.centre(CellIndex { lattice: Sublattice::B, i: 3, j: 0 });
        let c = g.centre(CellIndex { lattice: Sublattice::A, i: 4, j: 2 });
        let near = |p: [f64; 2], dx: f64, v: f64| [p[0] + dx, p[1], v];
        let pts = vec![
            near(a, 0.1, 4.0),
            near(a, -0.1, 1.0),
            near(a, 0.2, 3.0),
            near(a, 0.0, 2.0),
            near(b, 0.1, 7.0),
            near(b, -0.1, 5.0),
            near(b, 0.0, 6.0),
            near(c, 0.0, 9.0),
            [100.0, 0.0, 1.0],
        ];
        let spec = HexbinSpec { size: 5, min_count: 3, bbox: Some(BOX), layout: HexLayout::Regular };
        let h = hexbin(&pts, &spec).unwrap();
        assert_eq!(h.cells.len(), 2);
        assert_eq!((h.cells[0].count, h.cells[0].median, h.cells[0].x, h.cells[0].y), (4, 2.5, a[0], a[1]));
        assert_eq!((h.cells[1].count, h.cells[1].median, h.cells[1].x, h.cells[1].y), (3, 6.0, b[0], b[1]));
        assert_eq!(
            (h.points_binned, h.points_outside, h.cells_below_min_count, h.points_below_min_count),
            (8, 1, 1, 1)
        );
        // min_count is inclusive: 4 keeps the 4-point cell only; 1 keeps all three.
        assert_eq!(hexbin(&pts, &HexbinSpec { min_count: 4, ..spec }).unwrap().cells.len(), 1);
        let all = hexbin(&pts, &HexbinSpec { min_count: 1, ..spec }).unwrap();
        assert_eq!(all.cells.iter().map(|c| c.count).sum::<usize>(), 8);
        assert!(hexbin(&pts, &HexbinSpec { min_count: 0, ..spec }).is_err());
        assert!(hexbin(&[[0.0, f64::NAN, 1.0]], &HexbinSpec::default()).is_err());
        assert!(hexbin(&[], &HexbinSpec::default()).is_err());
    }

    #[test]
    fn data_box_pads_and_handles_degenerate_extents() {
        let b = HexGrid::data_box(&[[0.0, 0.0, 1.0], [10.0, 5.0, 1.0]]).unwrap();
        assert!(b[0] < 0.0 && b[0] > -1e-7 && b[1] > 10.0 && b[1] < 10.0 + 1e-7);
        let b = HexGrid::data_box(&[[2.0, 3.0, 1.0]]).unwrap();
        assert!((b[1] - b[0] - 1.0).abs() < 1e-8 && (b[3] - b[2] - 1.0).abs() < 1e-8);
        let b = HexGrid::data_box(&[[2.0, 0.0, 1.0], [2.0, 4.0, 1.0]]).unwrap();
        assert!((b[1] - b[0] - 4.0).abs() < 1e-7);
        // Every point of the data lands in a cell.
        let pts: Vec<[f64; 3]> = (0..50).map(|k| [k as f64, (k * k % 17) as f64, 0.0]).collect();
        let h = hexbin(&pts, &HexbinSpec { size: 7, ..HexbinSpec::default() }).unwrap();
        assert_eq!((h.points_binned, h.cells.iter().map(|c| c.count).sum::<usize>()), (50, 50));
    }
}
