//! Joint draws on a finite set by Cholesky factorisation.

use faer::Mat;

use super::{Process, SampledPaths, Sampler, check_values, cholesky, dedupe};
use crate::error::Result;
use crate::model::draws::Draws;
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

/// The method name reported for this sampler.
pub const METHOD: &str = "dense Cholesky";

impl Sampler for DenseSampler {
    fn sample(&self, points: &Points, draws: Draws, rng: &mut ReleaseRng) -> Result<SampledPaths> {
        let l = check_values(points.len(), draws)?;
        let (uniq, map) = dedupe(points);
        let m = uniq.len();
        check_dense("the sampling covariance", m, m)?;
        let mean = self.process.mean(&uniq)?;
        let mut c = self.process.covariance(&uniq, &uniq)?;
        let jitter = self.process.jitter(m);
        for i in 0..m {
            c[(i, i)] += jitter;
        }
        let chol = cholesky(&c, "the sampling covariance σ²K_D + η²K + jI")?;
        drop(c);
        let mut z = Mat::<f64>::zeros(m, l);
        for d in 0..l {
            for i in 0..m {
                z[(i, d)] = rng.normal();
            }
        }
        let f = crate::linalg::mul(chol.as_ref(), z.as_ref());
        let values = (0..l).map(|d| map.iter().map(|&i| mean[i] + f[(i, d)]).collect()).collect();
        Ok(SampledPaths { values, jitter, method: METHOD })
    }
}
