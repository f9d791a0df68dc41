//! Exact draws of the released process on a fixed public candidate set,
//! updated record by record — the sampler of a Thompson loop
//! (docs/proofs/thompson-sampler.md).
//!
//! Normalised units (prior k with k(x, x) = 1). With candidates C (m points),
//! records R (n, one entry per record, repeats kept) and
//!
//! ```text
//! L_C = chol(K_CC + tI),  t = max(10⁻¹⁰, 100·m·ε_mach)   (public: fixed once)
//! W   = L_C⁻¹ K_CR,       S = K_RR + sI − WᵀW,  s = r²/2,  L_S = chol(S)
//! A   = K_RR + r²I,       L_A = chol(A)
//! ```
//!
//! one path is, from independent standard normals z₁ (m), z₂ (n), z_e (n)
//! and z₃ (m, only when η > 0),
//!
//! ```text
//! a = L_C z₁,   b = Wᵀz₁ + L_S z₂,   e = √(r² − s)·z_e,
//! f(C) = σ·a + η·L_C z₃ + K_CR A⁻¹ (y − σ(b + e)).
//! ```
//!
//! (a, b) has the law of (h(C) + √t ξ_C, h(R) + √s ξ_R) for a prior path h
//! and independent white ξ, so b + e has the law of h(R) plus N(0, r²I)
//! noise, and Matheron's rule gives f(C) ~ N(μ_D, σ²K_D + η²K + (σ² + η²)tI):
//! the mechanism's law on C plus the data-free jitter of m points
//! (docs/sampling.md §1). A new record costs O(m² + nm + n²) (one column of
//! W, one row of L_S and of L_A); a path costs O(m² + nm + n²). Nothing here
//! branches on a private value: time and memory depend on m, n and q only.

use faer::linalg::triangular_solve::{solve_lower_triangular_in_place, solve_upper_triangular_in_place};
use faer::{Accum, Mat, MatMut, MatRef};

use crate::error::{Error, Result};
use crate::linalg::{cholesky_in_place_lower, lower_mul, par, sub_mul};
use crate::model::kernel::Kernel;
use crate::model::points::Points;
use crate::resources::{Need, check_memory};
use crate::rng::ReleaseRng;

/// The jitter t (normalised) of a factor over m points: the rule of
/// docs/sampling.md §1 divided by σ² + η².
pub(crate) fn candidate_jitter(m: usize) -> f64 {
    (1e-10f64).max(100.0 * m as f64 * f64::EPSILON)
}

/// The candidate-set posterior of a Thompson loop (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct CandidatePosterior {
    kernel: Kernel,
    candidates: Points,
    ridge: f64,
    scale: f64,
    gp_noise: f64,
    /// L_C (m × m, lower).
    lc: Mat<f64>,
    /// The records' covariates and internal responses.
    x: Points,
    y: Vec<f64>,
    /// K_CR and W = L_C⁻¹K_CR, column-major m × n, grown a column block at
    /// a time (a vector's growth moves no data for large blocks).
    kcr: Vec<f64>,
    w: Vec<f64>,
    /// L_S and L_A (capacity × capacity; the leading n × n blocks used).
    ls: Mat<f64>,
    la: Mat<f64>,
}

impl CandidatePosterior {
    /// Factors the candidates' prior (once) and adds the records (x, y) —
    /// y already in internal units and within the response bound.
    pub(crate) fn new(
        kernel: Kernel,
        candidates: Points,
        ridge: f64,
        scale: f64,
        gp_noise: f64,
        x: &Points,
        y: &[f64],
    ) -> Result<Self> {
        crate::error::ridge(ridge)?;
        let m = candidates.len();
        let mf = m as f64;
        crate::posterior::check_dense("the candidates' prior covariance", m, m)?;
        check_memory(
            "a Thompson loop's candidate posterior",
            &[
                Need::doubles("the candidates' prior factor (m × m)", mf * mf),
                Need::doubles(
                    "K(C, R) and L_C⁻¹K(C, R) for the records (2 × m × n)",
                    2.0 * mf * x.len().max(16) as f64,
                ),
            ],
            "use fewer candidates (the loop keeps an m × m factor of the candidates' prior)",
        )?;
        let mut lc = kernel.gram(&candidates);
        let t = candidate_jitter(m);
        for i in 0..m {
            lc[(i, i)] += t;
        }
        cholesky_in_place_lower(&mut lc).map_err(|e| Error::Factorisation {
            what: "K(C, C) + tI",
            detail: format!(
                "{e:?} (m = {m} candidates, t = {t:.3e}): the candidates' prior covariance is not numerically positive definite — use fewer or less clustered candidates"
            ),
        })?;
        let mut p = CandidatePosterior {
            kernel,
            x: Points::new(Vec::new(), candidates.dim())?,
            candidates,
            ridge,
            scale,
            gp_noise,
            lc,
            y: Vec::new(),
            kcr: Vec::new(),
            w: Vec::new(),
            ls: Mat::zeros(0, 0),
            la: Mat::zeros(0, 0),
        };
        p.push(x, y)?;
        Ok(p)
    }

    /// Records held.
    pub(crate) fn n(&self) -> usize {
        self.y.len()
    }

    /// The released jitter variance, (σ² + η²)·t.
    #[cfg(test)]
    pub(crate) fn jitter(&self) -> f64 {
        (self.scale * self.scale + self.gp_noise * self.gp_noise) * candidate_jitter(self.candidates.len())
    }

    /// Room for `needed` records, growing the buffers geometrically (sizes
    /// only: public).
    fn reserve(&mut self, needed: usize) -> Result<()> {
        let cap = self.ls.nrows();
        if needed <= cap {
            return Ok(());
        }
        let new_cap = needed.max(2 * cap).max(16);
        let (m, n) = (self.candidates.len(), self.n());
        let (mf, cf) = (m as f64, new_cap as f64);
        check_memory(
            "a Thompson loop's candidate posterior",
            &[
                Need::doubles("the candidates' prior factor (m × m)", mf * mf),
                Need::doubles("K(C, R) and L_C⁻¹K(C, R) (2 × m × n)", 2.0 * mf * cf),
                Need::doubles("the records' factors L_S and L_A, old and grown (4 × n²)", 4.0 * cf * cf),
            ],
            "use fewer candidates or fewer rounds",
        )?;
        let grow = |old: &Mat<f64>| {
            let mut g = Mat::<f64>::zeros(new_cap, new_cap);
            g.as_mut().submatrix_mut(0, 0, n, n).copy_from(old.as_ref().submatrix(0, 0, n, n));
            g
        };
        self.ls = grow(&self.ls);
        self.la = grow(&self.la);
        let want = m * new_cap;
        self.kcr.reserve(want.saturating_sub(self.kcr.len()));
        self.w.reserve(want.saturating_sub(self.w.len()));
        Ok(())
    }

    /// Adds records (x, y): one block of columns of K_CR and W, and one
    /// block row of L_S and L_A (a block Cholesky extension).
    pub(crate) fn push(&mut self, x: &Points, y: &[f64]) -> Result<()> {
        let k = x.len();
        if k == 0 {
            return Ok(());
        }
        debug_assert_eq!(k, y.len());
        let n = self.n();
        self.reserve(n + k)?;
        let m = self.candidates.len();
        let kc_new = self.kernel.cross(&self.candidates, x);
        let mut w_new = kc_new.clone();
        solve_lower_triangular_in_place(self.lc.as_ref(), w_new.as_mut(), par());
        let k_rn = self.kernel.cross(&self.x, x);
        let k_nn = self.kernel.gram(x);
        let r2 = self.ridge * self.ridge;
        let s = r2 / 2.0;
        // S blocks: S_RN = K_RN − W_Rᵀ W_N, S_NN = K_NN + sI − W_Nᵀ W_N.
        let mut s_rn = k_rn.clone();
        sub_mul(s_rn.as_mut(), MatRef::from_column_major_slice(&self.w, m, n).transpose(), w_new.as_ref());
        let mut s_nn = k_nn.clone();
        for i in 0..k {
            s_nn[(i, i)] += s;
        }
        sub_mul(s_nn.as_mut(), w_new.as_ref().transpose(), w_new.as_ref());
        let mut a_nn = k_nn;
        for i in 0..k {
            a_nn[(i, i)] += r2;
        }
        extend_factor(self.ls.as_mut(), n, s_rn, s_nn, "K(R, R) + sI − WᵀW", self.ridge)?;
        extend_factor(self.la.as_mut(), n, k_rn, a_nn, "K(R, R) + r²I", self.ridge)?;
        for j in 0..k {
            self.kcr.extend((0..m).map(|i| kc_new[(i, j)]));
            self.w.extend((0..m).map(|i| w_new[(i, j)]));
        }
        for i in 0..k {
            self.x.push(x.row(i))?;
        }
        self.y.extend_from_slice(y);
        Ok(())
    }

    /// L_A, L_S (n × n) and K_CR, W (m × n) as used now.
    fn parts(&self) -> (MatRef<'_, f64>, MatRef<'_, f64>, MatRef<'_, f64>, MatRef<'_, f64>) {
        let (m, n) = (self.candidates.len(), self.n());
        (
            self.la.as_ref().submatrix(0, 0, n, n),
            self.ls.as_ref().submatrix(0, 0, n, n),
            MatRef::from_column_major_slice(&self.kcr, m, n),
            MatRef::from_column_major_slice(&self.w, m, n),
        )
    }

    /// μ_D on the candidates, K_CR A⁻¹ y.
    #[cfg(test)]
    pub(crate) fn mean(&self) -> Vec<f64> {
        let n = self.n();
        let zero = Mat::<f64>::zeros(n, 1);
        let m = self.candidates.len();
        let paths = self.paths_from(Mat::<f64>::zeros(m, 1).as_ref(), zero.as_ref(), zero.as_ref(), None, 0.0);
        (0..m).map(|i| paths[(i, 0)]).collect()
    }

    /// `q` independent paths on the candidates (column l = path l), the
    /// normals of each path drawn in the order z₁, z₂, z_e, z₃.
    pub(crate) fn draw(&self, q: usize, rng: &mut ReleaseRng) -> Mat<f64> {
        let (m, n) = (self.candidates.len(), self.n());
        let noise = self.gp_noise > 0.0;
        let mut z1 = Mat::<f64>::zeros(m, q);
        let mut z2 = Mat::<f64>::zeros(n, q);
        let mut ze = Mat::<f64>::zeros(n, q);
        let mut z3 = Mat::<f64>::zeros(if noise { m } else { 0 }, q);
        let mut buf = Vec::new();
        let mut fill = |col: MatMut<'_, f64>, len: usize, rng: &mut ReleaseRng| {
            buf.resize(len, 0.0);
            rng.fill_normal(&mut buf);
            let mut col = col;
            for (i, v) in buf.iter().enumerate() {
                col[(i, 0)] = *v;
            }
        };
        for l in 0..q {
            fill(z1.as_mut().submatrix_mut(0, l, m, 1), m, rng);
            fill(z2.as_mut().submatrix_mut(0, l, n, 1), n, rng);
            fill(ze.as_mut().submatrix_mut(0, l, n, 1), n, rng);
            if noise {
                fill(z3.as_mut().submatrix_mut(0, l, m, 1), m, rng);
            }
        }
        let e_scale = (self.ridge * self.ridge / 2.0).sqrt();
        self.paths_from(z1.as_ref(), z2.as_ref(), ze.as_ref(), noise.then_some(z3.as_ref()), e_scale)
    }

    /// The paths for given normals (`e_scale` = √(r² − s); 0 with zero
    /// normals gives the mean): f = σ·L_C z₁ + η·L_C z₃ + K_CR A⁻¹(y − σ(b + e)).
    pub(crate) fn paths_from(
        &self,
        z1: MatRef<'_, f64>,
        z2: MatRef<'_, f64>,
        ze: MatRef<'_, f64>,
        z3: Option<MatRef<'_, f64>>,
        e_scale: f64,
    ) -> Mat<f64> {
        let (la, ls, kcr, w) = self.parts();
        let q = z1.ncols();
        let n = self.n();
        // b = Wᵀz₁ + L_S z₂.
        let mut b = lower_mul(ls, z2);
        faer::linalg::matmul::matmul(b.as_mut(), Accum::Add, w.transpose(), z1, 1.0, par());
        // u = A⁻¹(y − σ(b + e)).
        let mut u = Mat::<f64>::from_fn(n, q, |i, l| self.y[i] - self.scale * (b[(i, l)] + e_scale * ze[(i, l)]));
        solve_lower_triangular_in_place(la, u.as_mut(), par());
        solve_upper_triangular_in_place(la.transpose(), u.as_mut(), par());
        // f = σ·L_C z₁ (+ η·L_C z₃) + K_CR u.
        let mut f = lower_mul(self.lc.as_ref(), z1);
        for v in f.col_iter_mut().flat_map(|c| c.iter_mut()) {
            *v *= self.scale;
        }
        if let Some(z3) = z3 {
            let g = lower_mul(self.lc.as_ref(), z3);
            for l in 0..q {
                for i in 0..f.nrows() {
                    f[(i, l)] += self.gp_noise * g[(i, l)];
                }
            }
        }
        faer::linalg::matmul::matmul(f.as_mut(), Accum::Add, kcr, u.as_ref(), 1.0, par());
        f
    }
}

/// Extends the lower factor `l` (leading n × n block used) by k rows, for
/// the matrix [M_RR, b; bᵀ, c]: L₂₁ = (L⁻¹b)ᵀ, L₂₂ = chol(c − L₂₁L₂₁ᵀ).
fn extend_factor(
    mut l: MatMut<'_, f64>,
    n: usize,
    b: Mat<f64>,
    c: Mat<f64>,
    what: &'static str,
    ridge: f64,
) -> Result<()> {
    let k = c.nrows();
    let mut t = b;
    solve_lower_triangular_in_place(l.as_ref().submatrix(0, 0, n, n), t.as_mut(), par());
    let mut c = c;
    sub_mul(c.as_mut(), t.as_ref().transpose(), t.as_ref());
    cholesky_in_place_lower(&mut c).map_err(|e| Error::Factorisation {
        what,
        detail: format!(
            "{e:?} (r = {ridge}): not numerically positive definite — its smallest eigenvalue is at least r²/2 in exact arithmetic, so increase the ridge r"
        ),
    })?;
    l.as_mut().submatrix_mut(n, 0, k, n).copy_from(t.as_ref().transpose());
    l.as_mut().submatrix_mut(n, n, k, k).copy_from(c.as_ref());
    Ok(())
}
