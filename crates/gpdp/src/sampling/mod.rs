//! Exact samplers of the released process (docs/model.md, App. A.1):
//!
//! ```text
//! f = μ_D + σ·z + η·g,   z ~ GP(0, k_D),  g ~ GP(0, k) independent,
//! so f(X_T) ~ N(μ_D(X_T), σ²K_D(X_T) + η²K(X_T)).
//! ```
//!
//! Theorem 3.1 / Proposition 2 are about draws from exactly this law, so
//! every sampler here is exact (up to floating point): [`dense`] by a joint
//! Cholesky factorisation, [`path`] lazily and consistently point set by
//! point set, [`lattice`] by circulant embedding and the pathwise (Matheron)
//! update when the query points and the covariates lie on a common regular
//! lattice. [`auto`] chooses among them from public inputs only.
//!
//! These samplers draw from whatever posterior they are given: they know
//! nothing of privacy. A private release goes through
//! [`crate::mechanism::Mechanism`], which fits exactly the accounted
//! posterior and draws exactly the accounted number of paths; outside the
//! crate the samplers are reachable only as [`crate::nonprivate`], for
//! simulations on synthetic data.
//!
//! **Jitter.** Every sampler adds independent N(0, j) noise to every
//! released value, with j = (σ² + η²)·max(10⁻¹⁰, 100·m·u) (u the unit
//! roundoff, m the number of points). Adding independent, data-free noise to
//! a released draw is post-processing: it cannot weaken the guarantee. j
//! depends only on public quantities, never on whether a factorisation
//! succeeded (an adaptive jitter would depend on the data); it is reported
//! with every draw. Eigenvalues are never clipped below their computed value
//! except at the level of FFT roundoff (see [`lattice`]).

pub mod auto;
pub mod dense;
pub mod lattice;
pub mod path;
pub mod statespace;

use std::sync::Arc;

use faer::Mat;

use crate::error::{Error, Result};
use crate::model::draws::Draws;
use crate::model::points::Points;
use crate::posterior::Posterior;
use crate::rng::ReleaseRng;

pub use auto::{SamplerPlan, SamplerPolicy};
pub use dense::DenseSampler;
pub use lattice::{Lattice, LatticePlan, LatticeSampler};
pub use path::SamplePath;
pub use statespace::{StateSpaceModel, StateSpaceSampler};

/// The released process f = μ_D + σ·z + η·g for a fitted posterior (shared,
/// so that samplers and lazy paths can own it).
#[derive(Debug, Clone)]
pub struct Process {
    posterior: Arc<Posterior>,
    scale: f64,
    gp_noise: f64,
}

impl Process {
    /// Requires a finite σ in [10⁻¹⁵⁰, 10¹⁵⁰] (a release needs a finite scale)
    /// and η in [0, 10¹⁵⁰].
    pub fn new(posterior: impl Into<Arc<Posterior>>, scale: f64, gp_noise: f64) -> Result<Self> {
        crate::error::gp_noise(gp_noise)?;
        crate::error::release_scale(scale, gp_noise)?;
        Ok(Process { posterior: posterior.into(), scale, gp_noise })
    }

    /// The posterior.
    pub fn posterior(&self) -> &Posterior {
        &self.posterior
    }

    /// σ.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// η.
    pub fn gp_noise(&self) -> f64 {
        self.gp_noise
    }

    /// μ_D at the points.
    pub fn mean(&self, p: &Points) -> Result<Vec<f64>> {
        self.posterior.mean(p)
    }

    /// σ²K_D(A, B) + η²K(A, B).
    pub fn covariance(&self, a: &Points, b: &Points) -> Result<Mat<f64>> {
        let mut c = self.posterior.covariance(a, b)?;
        let s2 = self.scale * self.scale;
        let e2 = self.gp_noise * self.gp_noise;
        let k = self.posterior.kernel();
        for j in 0..c.ncols() {
            for i in 0..c.nrows() {
                c[(i, j)] = s2 * c[(i, j)] + if e2 > 0.0 { e2 * k.eval_unchecked(a.row(i), b.row(j)) } else { 0.0 };
            }
        }
        Ok(c)
    }

    /// The data-free jitter variance for a factorisation over m points.
    pub fn jitter(&self, m: usize) -> f64 {
        let s = self.scale * self.scale + self.gp_noise * self.gp_noise;
        s * (1e-10f64).max(100.0 * m as f64 * f64::EPSILON)
    }
}

/// Released values: `values[l][i]` is draw l at point i.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledPaths {
    /// One vector per draw.
    pub values: Vec<Vec<f64>>,
    /// Variance of the independent data-free noise added to each value (0 if none).
    pub jitter: f64,
    /// Which exact sampler produced them.
    pub method: &'static str,
}

/// A sampler of L independent released paths at a finite point set.
pub trait Sampler {
    /// `draws` independent draws of the released process, jointly at `points`.
    fn sample(&self, points: &Points, draws: Draws, rng: &mut ReleaseRng) -> Result<SampledPaths>;
}

/// Refuses L draws at m points whose values alone would not fit in memory
/// (L·m f64 besides the sampler's own workspace).
pub(crate) fn check_values(m: usize, draws: Draws) -> Result<usize> {
    let l = draws.to_usize()?;
    crate::posterior::check_dense("the released values (draws × points)", l, m)?;
    Ok(l)
}

/// Factors `c` (lower triangle; it already includes any jitter) in place; a
/// failure is reported, never retried with more jitter.
pub(crate) fn cholesky_in_place(c: &mut Mat<f64>, what: &'static str) -> Result<()> {
    let m = c.nrows();
    crate::linalg::cholesky_in_place_lower(c).map_err(|e| Error::Factorisation {
        what,
        detail: format!(
            "{e:?} ({m} points); the sampling covariance is numerically singular even with the jitter — use fewer or more widely spaced query points, or a larger lengthscale"
        ),
    })
}

/// Lower Cholesky factor of `c` (which already includes any jitter); a
/// failure is reported, never retried with more jitter.
pub(crate) fn cholesky(c: &Mat<f64>, what: &'static str) -> Result<Mat<f64>> {
    crate::linalg::cholesky_lower(c).map_err(|e| Error::Factorisation {
        what,
        detail: format!(
            "{e:?} ({} points); the sampling covariance is numerically singular even with the jitter — use fewer or more widely spaced query points, or a larger lengthscale",
            c.nrows()
        ),
    })
}
