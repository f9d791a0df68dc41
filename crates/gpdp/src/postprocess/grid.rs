//! Values on a regular 2-D grid: the shape in which released maps are
//! post-processed, contoured and plotted.

use crate::error::{Error, Result};

fn grid_err(message: String) -> Error {
    Error::Grid(message)
}

/// Values on a regular 2-D grid over \[x0,x1\]×\[y0,y1\] including the end points.
/// Point (i, j) (i along x1 = horizontal, j along x2 = vertical) has coordinates
/// (x0 + i·(x1−x0)/(nx−1), y0 + j·(y1−y0)/(ny−1)) and is stored at values[j*nx + i]
/// (x1 varies fastest — the order of the rows of paths.csv).
///
/// Build it with [`Grid2::new`], which checks the invariants (the fields are
/// public for reading; a grid assembled by hand that breaks them is refused by
/// the plotting functions and gives no polygons or lines in this module).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid2 {
    /// Number of grid points along x1 (≥ 2).
    pub nx: usize,
    /// Number of grid points along x2 (≥ 2).
    pub ny: usize,
    /// Left end of the x1 range (the first column of points).
    pub x0: f64,
    /// Right end of the x1 range (the last column of points), x0 < x1.
    pub x1: f64,
    /// Bottom end of the x2 range (the first row of points).
    pub y0: f64,
    /// Top end of the x2 range (the last row of points), y0 < y1.
    pub y1: f64,
    /// nx·ny finite values, x1 varying fastest.
    pub values: Vec<f64>,
}

impl Grid2 {
    /// A validated grid: nx, ny ≥ 2; finite bounds with x0 < x1 and y0 < y1;
    /// `values.len() == nx·ny`; every value finite (NaN and ±∞ are refused, so
    /// a missing value can never be mistaken for "below the threshold").
    pub fn new(nx: usize, ny: usize, (x0, x1): (f64, f64), (y0, y1): (f64, f64), values: Vec<f64>) -> Result<Grid2> {
        let g = Grid2 { nx, ny, x0, x1, y0, y1, values };
        g.check()?;
        Ok(g)
    }

    /// A grid of `f(x, y)` evaluated at the grid points.
    pub fn from_fn(nx: usize, ny: usize, xr: (f64, f64), yr: (f64, f64), f: impl Fn(f64, f64) -> f64) -> Result<Grid2> {
        let shell = Grid2 { nx, ny, x0: xr.0, x1: xr.1, y0: yr.0, y1: yr.1, values: Vec::new() };
        if nx < 2 || ny < 2 {
            return Err(grid_err(format!("a grid needs at least 2×2 points, got {nx}×{ny}")));
        }
        let values =
            (0..ny).flat_map(|j| (0..nx).map(move |i| (i, j))).map(|(i, j)| f(shell.x(i), shell.y(j))).collect();
        Grid2::new(nx, ny, xr, yr, values)
    }

    /// Checks the invariants documented on [`Grid2::new`].
    pub fn check(&self) -> Result<()> {
        let Grid2 { nx, ny, x0, x1, y0, y1, .. } = *self;
        if nx < 2 || ny < 2 {
            return Err(grid_err(format!("a grid needs at least 2×2 points, got {nx}×{ny}")));
        }
        if !(x0.is_finite() && x1.is_finite() && x0 < x1) {
            return Err(grid_err(format!("grid x-range [{x0}, {x1}] must be finite with x0 < x1")));
        }
        if !(y0.is_finite() && y1.is_finite() && y0 < y1) {
            return Err(grid_err(format!("grid y-range [{y0}, {y1}] must be finite with y0 < y1")));
        }
        let Some(n) = nx.checked_mul(ny) else { return Err(grid_err(format!("grid size {nx}×{ny} overflows"))) };
        if self.values.len() != n {
            return Err(grid_err(format!("grid {nx}×{ny} needs {n} values, got {}", self.values.len())));
        }
        if let Some(k) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(grid_err(format!(
                "grid value at (i={}, j={}) is {} (values must be finite)",
                k % nx,
                k / nx,
                self.values[k]
            )));
        }
        Ok(())
    }

    /// Horizontal coordinate of column i (exactly x0 at i = 0 and x1 at i = nx−1).
    pub fn x(&self, i: usize) -> f64 {
        lerp(self.x0, self.x1, i as f64 / (self.nx - 1) as f64)
    }

    /// Vertical coordinate of row j (exactly y0 at j = 0 and y1 at j = ny−1).
    pub fn y(&self, j: usize) -> f64 {
        lerp(self.y0, self.y1, j as f64 / (self.ny - 1) as f64)
    }

    /// The value at grid point (i, j).
    pub fn at(&self, i: usize, j: usize) -> f64 {
        self.values[j * self.nx + i]
    }

    /// Grid spacings (hx, hy).
    pub fn spacing(&self) -> (f64, f64) {
        ((self.x1 - self.x0) / (self.nx - 1) as f64, (self.y1 - self.y0) / (self.ny - 1) as f64)
    }

    /// Smallest and largest value.
    pub fn min_max(&self) -> (f64, f64) {
        self.values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)))
    }
}

/// `a` at t = 0 and `b` at t = 1, exactly.
pub(crate) fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a * (1.0 - t) + b * t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_validation() {
        assert!(Grid2::new(2, 2, (0.0, 1.0), (0.0, 1.0), vec![0.0; 4]).is_ok());
        assert!(Grid2::new(1, 2, (0.0, 1.0), (0.0, 1.0), vec![0.0; 2]).is_err());
        assert!(Grid2::new(2, 2, (1.0, 1.0), (0.0, 1.0), vec![0.0; 4]).is_err());
        assert!(Grid2::new(2, 2, (0.0, 1.0), (0.0, f64::INFINITY), vec![0.0; 4]).is_err());
        assert!(Grid2::new(2, 2, (0.0, 1.0), (0.0, 1.0), vec![0.0; 3]).is_err());
        let e = Grid2::new(2, 2, (0.0, 1.0), (0.0, 1.0), vec![0.0, 0.0, f64::NAN, 0.0]).unwrap_err();
        assert!(e.to_string().contains("(i=0, j=1)"), "{e}");
        let g = Grid2::new(3, 2, (0.1, 0.3), (-1.0, 2.0), vec![0.0; 6]).unwrap();
        assert_eq!((g.x(0), g.x(2), g.y(0), g.y(1)), (0.1, 0.3, -1.0, 2.0));
    }
}
