//! Joint draws on a finite set by Cholesky factorisation.

use faer::Mat;

use super::{Process, SampledPaths, Sampler, check_values, cholesky_in_place};
use crate::error::Result;
use crate::model::draws::Draws;
use crate::model::kernel::Kernel;
use crate::model::points::Points;
use crate::posterior::check_dense;
use crate::rng::ReleaseRng;

/// Draws f(X_T) ~ N(μ_D(X_T), σ²K_D(X_T) + η²K(X_T) + jI) by one Cholesky
/// factorisation over the distinct points of X_T (repeated points get the
/// same value). Cost O(m³) for m distinct points.
#[derive(Debug, Clone)]
pub struct DenseSampler {
    process: Process,
}

impl DenseSampler {
    /// A dense sampler of the process.
    pub fn new(process: Process) -> Self {
        DenseSampler { process }
    }
}

/// k on a regular 1-D or 2-D grid in the order of [`crate::model::query::Grid`]
/// (first coordinate fastest), by index offset: k(q_i, q_j) =
/// table[|i₀ − j₀| + n₀·|i₁ − j₁|], the profile at (|Δi₀|·h₀, |Δi₁|·h₁) with
/// the spacings h measured from the points. Equal to evaluating the kernel
/// at the points up to the rounding of their coordinates (≈ 1 ulp).
struct GridTable {
    n0: usize,
    table: Vec<f64>,
}

impl GridTable {
    /// `None` unless `pts` are such a grid (a public property: the query).
    fn new(kernel: &Kernel, pts: &Points) -> Option<Self> {
        let (m, dim) = (pts.len(), pts.dim());
        if !(1..=2).contains(&dim) || m < 4 || !kernel.kind().has_lengthscale() {
            return None;
        }
        let first = pts.row(0);
        let n0 = if dim == 1 { m } else { (0..m).take_while(|&k| pts.row(k)[1] == first[1]).count() };
        if n0 < 2 || m % n0 != 0 {
            return None;
        }
        let n1 = m / n0;
        let axis0: Vec<f64> = (0..n0).map(|k| pts.row(k)[0]).collect();
        let axis1: Vec<f64> = if dim == 2 { (0..n1).map(|k| pts.row(k * n0)[1]).collect() } else { vec![0.0] };
        let regular = |a: &[f64]| -> Option<f64> {
            if a.len() < 2 {
                return Some(0.0);
            }
            let h = (a[a.len() - 1] - a[0]) / (a.len() - 1) as f64;
            let ok = h > 0.0
                && a.iter().enumerate().all(|(k, &v)| (v - (a[0] + k as f64 * h)).abs() <= 1e-12 * (h + a[0].abs()));
            ok.then_some(h)
        };
        let (h0, h1) = (regular(&axis0)?, regular(&axis1)?);
        for k in 0..m {
            let p = pts.row(k);
            if p[0] != axis0[k % n0] || (dim == 2 && p[1] != axis1[k / n0]) {
                return None;
            }
        }
        let table = (0..n0 * n1)
            .map(|t| {
                let (a, b) = ((t % n0) as f64 * h0, (t / n0) as f64 * h1);
                kernel.profile((a * a + b * b).sqrt())
            })
            .collect();
        Some(GridTable { n0, table })
    }

    fn get(&self, i: usize, j: usize) -> f64 {
        let (i0, i1, j0, j1) = (i % self.n0, i / self.n0, j % self.n0, j / self.n0);
        self.table[i0.abs_diff(j0) + self.n0 * i1.abs_diff(j1)]
    }
}

/// The method name reported for this sampler.
pub const METHOD: &str = "dense Cholesky";

impl Sampler for DenseSampler {
    fn sample(&self, points: &Points, draws: Draws, rng: &mut ReleaseRng) -> Result<SampledPaths> {
        let l = check_values(points.len(), draws)?;
        let (uniq, map) = points.dedupe();
        let m = uniq.len();
        check_dense("the sampling covariance", m, m)?;
        let post = self.process.posterior();
        let mean = self.process.mean(&uniq)?;
        let (s2, e2) = (self.process.scale().powi(2), self.process.gp_noise().powi(2));
        let jitter = self.process.jitter(m);
        // The lower triangle of C = (σ² + η²)K(Q, Q) + jI − σ²·VᵀV, V = L⁻¹K(X, Q),
        // built and factored in place: one m × m matrix plus V (n × m) at the peak.
        let v = post.whitened_cross_all(&uniq)?;
        let mut c = Mat::<f64>::zeros(m, m);
        let kernel = *post.kernel();
        {
            use rayon::prelude::*;
            let pts = &uniq;
            // On a regular grid (a public property of the query) k depends on the index
            // offsets only: look the values up instead of evaluating m²/2 kernels.
            let table = GridTable::new(&kernel, pts);
            c.as_mut().par_col_chunks_mut(1).enumerate().for_each(|(j, mut col)| {
                let xj = pts.row(j);
                for i in j..m {
                    let k = match &table {
                        Some(t) => t.get(i, j),
                        None if i == j => kernel.diag(xj),
                        None => kernel.eval_unchecked(pts.row(i), xj),
                    };
                    col[(i, 0)] = (s2 + e2) * k + if i == j { jitter } else { 0.0 };
                }
            });
        }
        crate::linalg::add_mul_lower(c.as_mut(), v.transpose(), v.as_ref(), -s2);
        drop(v);
        cholesky_in_place(&mut c, "the sampling covariance σ²K_D + η²K + jI")?;
        let mut z = Mat::<f64>::zeros(m, l);
        for d in 0..l {
            for i in 0..m {
                z[(i, d)] = rng.normal();
            }
        }
        let f = crate::linalg::lower_mul(c.as_ref(), z.as_ref());
        let values = (0..l).map(|d| map.iter().map(|&i| mean[i] + f[(i, d)]).collect()).collect();
        Ok(SampledPaths { values, jitter, method: METHOD })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::domain::Domain;
    use crate::model::kernel::KernelKind;
    use crate::model::query::{Grid, Query};

    /// The grid table equals kernel evaluations at the grid's points (to the
    /// rounding of the coordinates), and is not used off a grid.
    #[test]
    fn grid_table_matches_the_kernel_and_only_applies_to_grids() {
        for (domain, counts) in [("box:0,1,-0.5,2", vec![13, 7]), ("interval:0.2,3", vec![40])] {
            let d: Domain = domain.parse().unwrap();
            let pts = Query::Grid(Grid::over(&d, counts).unwrap()).points().clone();
            for kind in [KernelKind::Exponential, KernelKind::Matern52, KernelKind::SquaredExponential] {
                let k = Kernel::new(kind, 0.4).unwrap();
                let t = GridTable::new(&k, &pts).expect("a grid");
                for i in (0..pts.len()).step_by(5) {
                    for j in 0..pts.len() {
                        let want = k.eval(pts.row(i), pts.row(j)).unwrap();
                        assert!((t.get(i, j) - want).abs() < 1e-14, "{kind} {i} {j}: {} vs {want}", t.get(i, j));
                    }
                }
            }
        }
        let k = Kernel::exponential(0.3).unwrap();
        assert!(GridTable::new(&k, &Points::from_1d(&[0.0, 0.1, 0.25, 0.3])).is_none());
        assert!(GridTable::new(&k, &Points::new(vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 2.0], 2).unwrap()).is_none());
    }
}
