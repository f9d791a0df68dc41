//! Joint draws on a finite set by Cholesky factorisation.

use faer::Mat;

use super::{Process, SampledPaths, Sampler, check_values, cholesky_in_place, dedupe};
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
            c.as_mut().par_col_chunks_mut(1).enumerate().for_each(|(j, mut col)| {
                let xj = pts.row(j);
                for i in j..m {
                    let k = if i == j { kernel.diag(xj) } else { kernel.eval_unchecked(pts.row(i), xj) };
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
