//! The exact GP posterior (docs/model.md, the paper's §2).
//!
//! With A = K(X, X) + r²I and k_X(x) = K(X, x):
//!
//! ```text
//! μ_D(x)     = k_X(x)ᵀ A⁻¹ y
//! k_D(x, x') = k(x, x') − k_X(x)ᵀ A⁻¹ k_X(x')
//! ```
//!
//! and the posterior is GP(μ_D, σ²·k_D). Everything here is for σ = 1 (the
//! *normalised* posterior covariance k_D); scale by σ² where needed. A is
//! factorised once by Cholesky (no jitter is needed or added: r > 0 makes A
//! positive definite).
//!
//! **Repeated covariates are aggregated** (docs/model.md §3.1): c records at
//! one point with mean response ȳ are one observation of f there with noise
//! variance r²/c (the mean is a sufficient statistic of their Gaussian
//! likelihood). So the solve is over the u distinct covariates X_u, with
//! A = K(X_u, X_u) + r²·C⁻¹, C = diag(counts), and μ_D, k_D are exactly
//! those of the n records.

use faer::Mat;

use crate::error::{Error, Result};
use crate::model::data::Dataset;
use crate::model::kernel::Kernel;
use crate::model::points::Points;

/// Largest number of f64 entries in one dense matrix we agree to allocate
/// (2³⁰ entries = 8 GiB).
pub const MAX_DENSE_ENTRIES: usize = 1 << 30;

/// Number of query points processed per block (bounds the n × m workspace).
const QUERY_BLOCK: usize = 2048;

/// Checks that an `rows × cols` f64 matrix is a sane allocation.
pub(crate) fn check_dense(what: &str, rows: usize, cols: usize) -> Result<()> {
    match rows.checked_mul(cols) {
        Some(e) if e <= MAX_DENSE_ENTRIES => Ok(()),
        _ => Err(Error::TooLarge(format!(
            "{what} would be a {rows} × {cols} dense matrix ({:.1} GiB); the limit is 8 GiB",
            rows as f64 * cols as f64 * 8.0 / (1u64 << 30) as f64
        ))),
    }
}

/// The exact posterior of a GP(0, σ²k) prior given D with effective ridge r.
#[derive(Debug, Clone)]
pub struct Posterior {
    kernel: Kernel,
    /// The distinct covariates X_u.
    x: Points,
    ridge: f64,
    /// Records at each distinct covariate.
    counts: Vec<usize>,
    /// Lower Cholesky factor L of A = K(X_u, X_u) + r²C⁻¹.
    chol: Mat<f64>,
    /// A⁻¹ ȳ.
    weights: Vec<f64>,
}

/// Distinct covariates (exact equality; −0 = 0), the number of records at
/// each and their mean response.
fn aggregate(data: &Dataset) -> (Points, Vec<usize>, Vec<f64>) {
    let (uniq, map) = data.x().dedupe();
    let u = uniq.len();
    let mut counts = vec![0usize; u];
    let mut sums = vec![0.0; u];
    for (i, &j) in map.iter().enumerate() {
        counts[j] += 1;
        sums[j] += data.y()[i];
    }
    let means = sums.iter().zip(&counts).map(|(s, &c)| s / c as f64).collect();
    (uniq, counts, means)
}

impl Posterior {
    /// Factorises K(X, X) + r²I for the dataset and ridge r > 0.
    ///
    /// Errors: r not finite and > 0; an n × n matrix over the memory limit;
    /// a failed Cholesky factorisation (A not numerically positive
    /// definite — increase r).
    pub fn fit(kernel: Kernel, data: &Dataset, ridge: f64) -> Result<Self> {
        let (x, counts, ybar) = aggregate(data);
        Self::fit_system(kernel, data, ridge, x, counts, ybar)
    }

    /// [`Self::fit`] without aggregating repeated covariates: the n × n
    /// system K(X, X) + r²I of the records as they are.
    ///
    /// The posterior (μ_D, k_D) is the same as [`Self::fit`]'s (aggregation
    /// is exact; the two agree up to rounding), and so is every law sampled
    /// from it. What differs is the cost: here the work of fitting, and of
    /// every later mean, variance or covariance, depends only on n, the
    /// dimension and the query points — never on how many records share a
    /// covariate. Use it when the time or memory of the computation is
    /// observable by others (as in `gpdp serve`), at the price of the n × n
    /// solve even for data with few distinct covariates. The smallest
    /// eigenvalue of the system is at least r², whatever the data.
    pub fn fit_per_record(kernel: Kernel, data: &Dataset, ridge: f64) -> Result<Self> {
        let x = data.x().clone();
        let counts = vec![1; data.len()];
        let y = data.y().to_vec();
        Self::fit_system(kernel, data, ridge, x, counts, y)
    }

    /// Factorises K(X, X) + r²C⁻¹ over the given (possibly aggregated) points.
    fn fit_system(
        kernel: Kernel,
        data: &Dataset,
        ridge: f64,
        x: Points,
        counts: Vec<usize>,
        ybar: Vec<f64>,
    ) -> Result<Self> {
        crate::error::ridge(ridge)?;
        let n = x.len();
        check_dense("K(X, X) + r²C⁻¹ (distinct covariates)", n, n)?;
        let nf = n as f64;
        crate::resources::check_memory(
            "fitting the posterior",
            &[crate::resources::Need::doubles(
                "K(X, X) + r²C⁻¹ and its Cholesky factor over the distinct covariates (2 × u²)",
                2.0 * nf * nf,
            )],
            "use fewer distinct covariates (the exact posterior needs u² memory for u distinct covariates)",
        )?;
        let mut a = kernel.gram(&x);
        let r2 = ridge * ridge;
        for i in 0..n {
            a[(i, i)] += r2 / counts[i] as f64;
        }
        let chol = crate::linalg::cholesky_lower(&a).map_err(|e| Error::Factorisation {
            what: "K(X, X) + r²I",
            detail: format!(
                "{e:?} (n = {}, {n} distinct covariates, r = {ridge}); the matrix is not numerically positive definite — increase the ridge r",
                data.len()
            ),
        })?;
        drop(a);
        let mut post = Posterior { kernel, x, ridge, counts, chol, weights: Vec::new() };
        post.weights = post.solve(&ybar)?;
        Ok(post)
    }

    /// α = A⁻¹ȳ (indexed by distinct covariate): μ_D = K(·, X_u)α.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The noise variance of the aggregated observation at distinct
    /// covariate j: r²/c_j.
    pub fn noise_variance(&self, j: usize) -> f64 {
        self.ridge * self.ridge / self.counts[j] as f64
    }

    /// The kernel k.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The effective ridge r.
    pub fn ridge(&self) -> f64 {
        self.ridge
    }

    /// Number of distinct training covariates u (the size of the solve).
    pub fn n(&self) -> usize {
        self.x.len()
    }

    /// Number of training records n (with repetitions).
    pub fn records(&self) -> usize {
        self.counts.iter().sum()
    }

    /// The distinct training covariates X_u.
    pub fn train_x(&self) -> &Points {
        &self.x
    }

    /// The lower Cholesky factor L of K(X_u, X_u) + r²C⁻¹.
    pub fn cholesky(&self) -> &Mat<f64> {
        &self.chol
    }

    fn check_dim(&self, q: &Points) -> Result<()> {
        if q.dim() != self.x.dim() {
            return Err(Error::Dimension(format!(
                "query points are {}-D but the training covariates are {}-D",
                q.dim(),
                self.x.dim()
            )));
        }
        Ok(())
    }

    /// L⁻¹ K(X, Q) for a block of query points.
    fn whitened_cross(&self, q: &Points) -> Mat<f64> {
        let mut c = self.kernel.cross(&self.x, q);
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(self.chol.as_ref(), c.as_mut(), faer::Par::Seq);
        c
    }

    /// L⁻¹K(X_u, Q) (u × |Q|), for samplers that build σ²k_D themselves.
    pub(crate) fn whitened_cross_all(&self, q: &Points) -> Result<Mat<f64>> {
        self.check_dim(q)?;
        check_dense("L⁻¹K(X, Q)", self.n(), q.len())?;
        Ok(self.whitened_cross(q))
    }

    /// Runs `f(block_start, block)` over blocks of at most QUERY_BLOCK points.
    fn blocks(q: &Points, mut f: impl FnMut(usize, &Points)) {
        let m = q.len();
        let mut start = 0;
        while start < m {
            let end = (start + QUERY_BLOCK).min(m);
            let idx: Vec<usize> = (start..end).collect();
            f(start, &q.select(&idx));
            start = end;
        }
    }

    /// Posterior mean μ_D at each query point.
    pub fn mean(&self, q: &Points) -> Result<Vec<f64>> {
        self.check_dim(q)?;
        let mut out = Vec::with_capacity(q.len());
        for x in q.iter() {
            let mut s = 0.0;
            for (i, w) in self.weights.iter().enumerate() {
                s += self.kernel.eval_unchecked(self.x.row(i), x) * w;
            }
            out.push(s);
        }
        Ok(out)
    }

    /// Normalised posterior variance k_D(x, x) at each query point
    /// (multiply by σ² for the posterior variance). Values that round below
    /// zero are reported as 0.
    pub fn variance(&self, q: &Points) -> Result<Vec<f64>> {
        self.check_dim(q)?;
        let mut out = vec![0.0; q.len()];
        Self::blocks(q, |start, block| {
            let c = self.whitened_cross(block);
            for j in 0..block.len() {
                let mut s = 0.0;
                for i in 0..c.nrows() {
                    s += c[(i, j)] * c[(i, j)];
                }
                out[start + j] = (self.kernel.diag(block.row(j)) - s).max(0.0);
            }
        });
        Ok(out)
    }

    /// μ_D and k_D(x, x) together, in one pass over the whitened cross-covariance
    /// L⁻¹K(X, Q): μ_D = (L⁻¹K(X, Q))ᵀ(L⁻¹y), k_D = k(x, x) − ‖L⁻¹k_X(x)‖².
    pub fn mean_and_variance(&self, q: &Points) -> Result<(Vec<f64>, Vec<f64>)> {
        self.check_dim(q)?;
        let n = self.n();
        // z = L⁻¹y = Lᵀ A⁻¹ y.
        let mut z = vec![0.0; n];
        for (i, zi) in z.iter_mut().enumerate() {
            *zi = (i..n).map(|k| self.chol[(k, i)] * self.weights[k]).sum();
        }
        let mut mean = vec![0.0; q.len()];
        let mut var = vec![0.0; q.len()];
        Self::blocks(q, |start, block| {
            let c = self.whitened_cross(block);
            for j in 0..block.len() {
                let col = c.col(j);
                let (mut s2, mut m) = (0.0, 0.0);
                for i in 0..n {
                    let v = col[i];
                    s2 += v * v;
                    m += v * z[i];
                }
                mean[start + j] = m;
                var[start + j] = (self.kernel.diag(block.row(j)) - s2).max(0.0);
            }
        });
        Ok((mean, var))
    }

    /// Normalised posterior covariance matrix k_D(A, B) (|A| × |B|).
    pub fn covariance(&self, a: &Points, b: &Points) -> Result<Mat<f64>> {
        self.check_dim(a)?;
        self.check_dim(b)?;
        check_dense("the posterior covariance", a.len(), b.len())?;
        let ca = self.whitened_cross(a);
        let cb = if a == b { ca.clone() } else { self.whitened_cross(b) };
        let mut k = self.kernel.cross(a, b);
        crate::linalg::sub_mul(k.as_mut(), ca.transpose(), cb.as_ref());
        Ok(k)
    }

    /// A⁻¹b with A = K(X_u, X_u) + r²C⁻¹ (b indexed by distinct covariate).
    pub fn solve(&self, b: &[f64]) -> Result<Vec<f64>> {
        if b.len() != self.n() {
            return Err(Error::Dimension(format!("right-hand side has {} entries, expected {}", b.len(), self.n())));
        }
        let mut w = Mat::<f64>::from_fn(b.len(), 1, |i, _| b[i]);
        let l = self.chol.as_ref();
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, w.as_mut(), faer::Par::Seq);
        faer::linalg::triangular_solve::solve_upper_triangular_in_place(l.transpose(), w.as_mut(), faer::Par::Seq);
        Ok((0..b.len()).map(|i| w[(i, 0)]).collect())
    }

    /// The effective dimension d_eff = tr(K(K + r²I)⁻¹) of the n records.
    /// With repetitions, K = E K_u Eᵀ (E the n × u incidence matrix) and the
    /// push-through identity give tr(K_u A⁻¹) = u − Σ_j (r²/c_j)(A⁻¹)_jj,
    /// with (A⁻¹)_jj the squared norm of column j of L⁻¹.
    pub fn effective_dimension(&self) -> f64 {
        let n = self.n();
        let mut inv = Mat::<f64>::identity(n, n);
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(
            self.chol.as_ref(),
            inv.as_mut(),
            faer::Par::Seq,
        );
        let tr: f64 = (0..n).map(|j| self.noise_variance(j) * inv.col(j).squared_norm_l2()).sum();
        n as f64 - tr
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::KernelKind;

    fn data() -> Dataset {
        Dataset::new(Points::from_1d(&[0.1, 0.4, 0.45, 0.9]), vec![0.5, -1.0, 0.2, 0.8]).unwrap()
    }

    #[test]
    fn one_point_closed_form() {
        // n = 1: μ(x) = k(x, x₁) y₁/(1 + r²), k_D(x, x) = 1 − k(x, x₁)²/(1 + r²).
        let kern = Kernel::exponential(0.5).unwrap();
        let d = Dataset::new(Points::from_1d(&[0.3]), vec![0.7]).unwrap();
        let p = Posterior::fit(kern, &d, 0.8).unwrap();
        let q = Points::from_1d(&[0.3, 0.9]);
        let m = p.mean(&q).unwrap();
        let v = p.variance(&q).unwrap();
        for (j, x) in [0.3f64, 0.9].iter().enumerate() {
            let kx = (-(x - 0.3f64).abs() / 0.5).exp();
            assert!((m[j] - kx * 0.7 / 1.64).abs() < 1e-14);
            assert!((v[j] - (1.0 - kx * kx / 1.64)).abs() < 1e-14);
        }
        assert!((p.effective_dimension() - 1.0 / 1.64).abs() < 1e-14);
    }

    #[test]
    fn covariance_diagonal_is_variance_and_symmetric() {
        let kern = Kernel::new(KernelKind::Matern32, 0.3).unwrap();
        let p = Posterior::fit(kern, &data(), 0.2).unwrap();
        let q = Points::from_1d(&[0.0, 0.2, 0.4, 0.77, 1.0]);
        let c = p.covariance(&q, &q).unwrap();
        let v = p.variance(&q).unwrap();
        for i in 0..5 {
            assert!((c[(i, i)] - v[i]).abs() < 1e-13);
            for j in 0..5 {
                assert!((c[(i, j)] - c[(j, i)]).abs() < 1e-13);
            }
        }
    }

    #[test]
    fn mean_and_variance_in_one_pass() {
        let kern = Kernel::new(KernelKind::Matern52, 0.4).unwrap();
        let p = Posterior::fit(kern, &data(), 0.3).unwrap();
        let q = Points::from_1d(&(0..=50).map(|i| i as f64 / 50.0).collect::<Vec<_>>());
        let (m, v) = p.mean_and_variance(&q).unwrap();
        let (m2, v2) = (p.mean(&q).unwrap(), p.variance(&q).unwrap());
        for i in 0..q.len() {
            assert!((m[i] - m2[i]).abs() < 1e-13 && (v[i] - v2[i]).abs() < 1e-13);
        }
    }

    #[test]
    fn effective_dimension_matches_eigenvalues() {
        let kern = Kernel::exponential(0.7).unwrap();
        let d = data();
        let p = Posterior::fit(kern, &d, 0.3).unwrap();
        let ev = kern.gram(d.x()).self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
        let want: f64 = ev.iter().map(|l| l / (l + 0.09)).sum();
        assert!((p.effective_dimension() - want).abs() < 1e-12);
    }

    #[test]
    fn rejects_bad_ridge_and_dimension() {
        let kern = Kernel::exponential(1.0).unwrap();
        for r in [0.0, -1.0, f64::NAN] {
            assert!(Posterior::fit(kern, &data(), r).is_err());
        }
        let p = Posterior::fit(kern, &data(), 1.0).unwrap();
        assert!(matches!(p.mean(&Points::new(vec![0.0, 0.0], 2).unwrap()), Err(Error::Dimension(_))));
    }
}

#[cfg(test)]
mod failure_tests {
    use super::*;

    #[test]
    fn singular_system_is_an_error_not_a_panic() {
        // Six distinct covariates under a squared-exponential kernel with a
        // long lengthscale: K is singular in floating point (its eigenvalues
        // decay like (d/ℓ)^{2k}) and r² = 10⁻³⁰⁰ is lost against its entries.
        let se = Kernel::new(crate::model::kernel::KernelKind::SquaredExponential, 10.0).unwrap();
        let d = Dataset::new(Points::from_1d(&[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]), vec![1.0, -1.0, 0.5, 0.0, 0.2, 0.1])
            .unwrap();
        let e = Posterior::fit(se, &d, 1e-150).unwrap_err();
        assert!(matches!(e, Error::Factorisation { .. }), "{e}");
        assert!(e.to_string().contains("increase the ridge"), "{e}");
        // Below 10⁻¹⁵⁰ r² would underflow: refused before any arithmetic.
        let e = Posterior::fit(Kernel::exponential(1.0).unwrap(), &d, 1e-170).unwrap_err();
        assert!(e.to_string().contains("ridge r (1e-170) must be at least 1e-150"), "{e}");
    }

    /// Repeated covariates aggregate exactly: the same μ_D, k_D and d_eff as
    /// the n × n computation (here written out by hand), and a point repeated
    /// at a tiny ridge is well posed.
    #[test]
    fn repeated_covariates_aggregate_exactly() {
        let kern = Kernel::new(crate::model::kernel::KernelKind::Matern32, 0.4).unwrap();
        let xs = [0.1, 0.4, 0.4, 0.4, 0.7, 0.1];
        let ys = [0.5, -1.0, 0.3, 0.1, 0.9, -0.2];
        let d = Dataset::new(Points::from_1d(&xs), ys.to_vec()).unwrap();
        let r: f64 = 0.6;
        let p = Posterior::fit(kern, &d, r).unwrap();
        assert_eq!((p.n(), p.records()), (3, 6));
        // The full n × n system, solved densely.
        let mut a = kern.gram(d.x());
        for i in 0..6 {
            a[(i, i)] += r * r;
        }
        let l = crate::linalg::cholesky_lower(&a).unwrap();
        let solve = |b: &[f64]| {
            let mut w = Mat::<f64>::from_fn(6, 1, |i, _| b[i]);
            faer::linalg::triangular_solve::solve_lower_triangular_in_place(l.as_ref(), w.as_mut(), faer::Par::Seq);
            faer::linalg::triangular_solve::solve_upper_triangular_in_place(l.transpose(), w.as_mut(), faer::Par::Seq);
            (0..6).map(|i| w[(i, 0)]).collect::<Vec<f64>>()
        };
        let alpha = solve(&ys);
        let q = Points::from_1d(&[0.0, 0.25, 0.4, 0.9]);
        let (m, v) = p.mean_and_variance(&q).unwrap();
        for (j, x) in q.iter().enumerate() {
            let kx: Vec<f64> = xs.iter().map(|&xi| kern.eval(&[xi], x).unwrap()).collect();
            let mean: f64 = kx.iter().zip(&alpha).map(|(a, b)| a * b).sum();
            let w = solve(&kx);
            let var = 1.0 - kx.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
            assert!((m[j] - mean).abs() < 1e-13 && (v[j] - var).abs() < 1e-13, "{j}: {} {mean} {} {var}", m[j], v[j]);
        }
        let ev = a.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
        let want: f64 = ev.iter().map(|l| (l - r * r) / l).sum();
        assert!((p.effective_dimension() - want).abs() < 1e-12, "{} vs {want}", p.effective_dimension());
        // The per-record system: the same posterior over all six records.
        let pr = Posterior::fit_per_record(kern, &d, r).unwrap();
        assert_eq!((pr.n(), pr.records()), (6, 6));
        let (m2, v2) = pr.mean_and_variance(&q).unwrap();
        for j in 0..q.len() {
            assert!((m[j] - m2[j]).abs() < 1e-13 && (v[j] - v2[j]).abs() < 1e-13, "{j}");
        }
        let (c1, c2) = (p.covariance(&q, &q).unwrap(), pr.covariance(&q, &q).unwrap());
        for i in 0..q.len() {
            for j in 0..q.len() {
                assert!((c1[(i, j)] - c2[(i, j)]).abs() < 1e-13, "{i} {j}");
            }
        }
        assert!((pr.effective_dimension() - want).abs() < 1e-12);
        // Three records at one point with a tiny ridge: one node, noise r²/3.
        let same = Dataset::new(Points::from_1d(&[0.5, 0.5, 0.5]), vec![1.0, 0.0, -1.0]).unwrap();
        let p = Posterior::fit(Kernel::exponential(1.0).unwrap(), &same, 1e-100).unwrap();
        assert_eq!(p.n(), 1);
        assert!(p.mean(&Points::from_1d(&[0.5])).unwrap()[0].abs() < 1e-15);
    }
}
