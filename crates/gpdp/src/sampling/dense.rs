//! Joint draws on a finite set by Cholesky factorisation.

use faer::Mat;

use super::{Process, SampledPaths, Sampler, cholesky, dedupe};
use crate::error::Result;
use crate::points::Points;
use crate::posterior::check_dense;
use crate::rng::ReleaseRng;

/// Draws f(X_T) ~ N(μ_D(X_T), σ²K_D(X_T) + η²K(X_T) + jI) by one Cholesky
/// factorisation over the distinct points of X_T (repeated points get the
/// same value). Cost O(m³) for m distinct points.
#[derive(Debug, Clone, Copy)]
pub struct DenseSampler<'a> {
    process: Process<'a>,
}

impl<'a> DenseSampler<'a> {
    /// A dense sampler of the process.
    pub fn new(process: Process<'a>) -> Self {
        DenseSampler { process }
    }
}

impl Sampler for DenseSampler<'_> {
    fn sample(&self, points: &Points, draws: usize, rng: &mut ReleaseRng) -> Result<SampledPaths> {
        let (uniq, map) = dedupe(points);
        let m = uniq.len();
        check_dense("the sampling covariance", m, m)?;
        let mean = self.process.mean(&uniq)?;
        let mut c = self.process.covariance(&uniq, &uniq)?;
        let jitter = self.process.jitter(m);
        for i in 0..m {
            c[(i, i)] += jitter;
        }
        let l = cholesky(&c, "the sampling covariance σ²K_D + η²K + jI")?;
        drop(c);
        let mut z = Mat::<f64>::zeros(m, draws);
        for d in 0..draws {
            for i in 0..m {
                z[(i, d)] = rng.normal();
            }
        }
        let f = &l * &z;
        let values = (0..draws).map(|d| map.iter().map(|&i| mean[i] + f[(i, d)]).collect()).collect();
        Ok(SampledPaths { values, jitter, method: "dense Cholesky" })
    }
}
