//! The log marginal likelihood of GP hyperparameters on (public) data.
//!
//! For responses y at covariates X under the prior f ~ GP(0, σ²k_ℓ) with
//! independent N(0, λ²) observation noise,
//!
//! ```text
//! log p(y | X, ℓ, σ, λ) = −½ yᵀ K_θ⁻¹ y − ½ log det K_θ − (n/2) log 2π,
//! K_θ = σ² K_ℓ(X, X) + λ² I,
//! ```
//!
//! computed from the Cholesky factor K_θ = LLᵀ as −½‖L⁻¹y‖² − Σ log L_ii −
//! (n/2) log 2π (docs/plan.md). Valid for any n ≥ 1 and ℓ, σ, λ > 0 finite;
//! the mechanism's ridge is then r = λ/σ.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, fmt_value};
use crate::model::data::Dataset;
use crate::model::kernel::{Kernel, KernelKind};

/// GP hyperparameters: lengthscale ℓ, prior scale σ and noise sd λ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Hyper {
    /// Lengthscale ℓ, in the covariates' units (1 for kernels without one).
    pub lengthscale: f64,
    /// Prior scale σ: f ~ GP(0, σ²k).
    pub scale: f64,
    /// Observation-noise standard deviation λ.
    pub noise: f64,
}

impl Hyper {
    /// The effective ridge r = λ/σ of these hyperparameters.
    pub fn ridge(&self) -> f64 {
        self.noise / self.scale
    }

    fn check(&self) -> Result<()> {
        for (name, v) in [("lengthscale ℓ", self.lengthscale), ("scale σ", self.scale), ("noise λ", self.noise)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::InvalidParameter { name, value: fmt_value(v), requirement: "finite and > 0" });
            }
        }
        Ok(())
    }
}

/// log p(y | X, θ) of the data under `kind` with hyperparameters `h`.
///
/// Errors: a non-positive or non-finite hyperparameter; an n × n matrix over
/// the memory limit; K_θ not numerically positive definite.
pub fn log_marginal_likelihood(kind: KernelKind, h: Hyper, data: &Dataset) -> Result<f64> {
    h.check()?;
    let n = data.len();
    crate::posterior::check_dense("K_θ for the marginal likelihood", n, n)?;
    crate::resources::check_memory(
        "the marginal likelihood",
        &[crate::resources::Need::doubles("K_θ and its Cholesky factor (2 × n²)", 2.0 * n as f64 * n as f64)],
        "fit on fewer records (plan --max-fit-points)",
    )?;
    let kernel = Kernel::new(kind, h.lengthscale)?;
    let mut k = kernel.gram(data.x());
    let (s2, l2) = (h.scale * h.scale, h.noise * h.noise);
    for j in 0..n {
        for i in 0..n {
            k[(i, j)] *= s2;
        }
        k[(j, j)] += l2;
    }
    let l = crate::linalg::cholesky_lower(&k).map_err(|e| Error::Factorisation {
        what: "σ²K(X, X) + λ²I",
        detail: format!("{e:?} (n = {n}, ℓ = {}, σ = {}, λ = {})", h.lengthscale, h.scale, h.noise),
    })?;
    // Forward substitution z = L⁻¹y, column by column (L is column-major).
    let mut z = data.y().to_vec();
    for j in 0..n {
        z[j] /= l[(j, j)];
        let zj = z[j];
        for i in j + 1..n {
            z[i] -= l[(i, j)] * zj;
        }
    }
    let quad: f64 = z.iter().map(|v| v * v).sum();
    let half_logdet: f64 = (0..n).map(|i| l[(i, i)].ln()).sum();
    Ok(-0.5 * quad - half_logdet - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln())
}
