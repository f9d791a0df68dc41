//! The Rényi-DP curve of one posterior draw: ψ_α, Theorem 3.1 and
//! Proposition 2 (docs/accountant.md).
//!
//! # What is guaranteed
//!
//! For replace-one neighbours D ~ D' of size n, every finite test set X_T and
//! every admissible order 1 < α < α_max = 1 + 1/τ̃ (Proposition 2, with
//! τ̃ = σ²V/(σ²r² + η²(V + r²)); η = 0 gives Theorem 3.1 and α_max = 1 + r²/V):
//!
//! ```text
//! D_α(Π_D(X_T) ‖ Π_D'(X_T)) ≤ 2ψ_α(τ̃) + α(V + r²)Δ² / (2[σ²(r² − (α−1)V) + η²(V + r²)])
//! ```
//!
//! where V ≥ V_n(r) and Δ ≥ Δ_n(r) are any valid upper bounds (see
//! [`super::bounds`]). σ = ∞ (a covariance-only release) is the limit in
//! which the second (mean) term vanishes.
//!
//! That is the paper's bound ([`BoundChoice::Paper`]). The default
//! ([`BoundChoice::Tight`], docs/proofs/tight-accountant.md) replaces the
//! covariance term 2ψ_α(τ̃) by the signed rank-two term [`cov_signed`]
//! (docs/proofs/covariance-signed.md) on the same range of α, and — for the
//! 1-D exponential kernel with η = 0 — the mean term by its bounded-mean
//! refinement ([`MeanTerm::BoundedMean`], docs/proofs/mean-bounded-1d.md).
//!
//! # Floating point
//!
//! Every evaluation also returns an absolute error bound `err` on the
//! computed value (a generous multiple of the unit roundoff times the sum of
//! the magnitudes of the terms, including the conditioning of 1 − (α−1)τ̃ near
//! α_max), so that callers can round the bound *up*: the value plus `err` is
//! never below the exact-arithmetic value of the formula at the same inputs.
//!
//! The order enters as `am1 = α − 1` to keep precision when α → 1.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result, non_negative};
use crate::privacy::cache::AccountingCache;
use crate::privacy::elementary::{ln, ln_1p};
use crate::privacy::rounding::ROUNDING_SLACK;

/// Which proven bound the accountant uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundChoice {
    /// The tightest bounds gpdp proves (docs/proofs/tight-accountant.md): the
    /// signed covariance term, the generic sensitivity min(B.1, coupled,
    /// operator), Lemma B.8 with half the constant, the bounded-mean
    /// refinement for the 1-D exponential kernel.
    #[default]
    Tight,
    /// The paper's Theorem 3.1 / Proposition 2 with its Lemmas B.1–B.8 as
    /// stated (the values gpdp reported before the tight bound).
    Paper,
    /// The tight bound and, for a finite σ without GP noise, at each order
    /// the certified supremum of the exact two-point divergence over the
    /// proven region, whichever is smaller (docs/proofs/joint-accountant.md).
    Joint,
}

impl BoundChoice {
    /// "tight" or "paper".
    pub fn name(self) -> &'static str {
        match self {
            BoundChoice::Tight => "tight",
            BoundChoice::Paper => "paper",
            BoundChoice::Joint => "joint",
        }
    }
}

impl fmt::Display for BoundChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BoundChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "tight" => Ok(BoundChoice::Tight),
            "paper" => Ok(BoundChoice::Paper),
            "joint" => Ok(BoundChoice::Joint),
            _ => Err(Error::InvalidParameter {
                name: "bound",
                value: s.to_string(),
                requirement: "tight, joint or paper",
            }),
        }
    }
}

/// The covariance (zero-mean) part of the one-draw bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum CovarianceTerm {
    /// 2ψ_α(τ̃): each of the two non-unit eigenvalues worst-cased separately
    /// (Theorem 3.1 / Proposition 2; docs/proofs/theorem-3.1.md §3).
    #[serde(rename = "2psi")]
    TwoPsi,
    /// cov_α(τ̃) = −log(1 − α(α−1)τ̃²/(1+τ̃))/(2(α−1)), the best bound that
    /// depends on τ̃ alone: attained for the diagonal kernel, approached as
    /// ℓ → 0 by stationary kernels (docs/proofs/covariance-signed.md).
    #[serde(rename = "signed")]
    Signed,
}

impl CovarianceTerm {
    /// Where the term comes from, for reports.
    pub fn source(self) -> &'static str {
        match self {
            CovarianceTerm::TwoPsi => "2ψ_α(τ̃) (Theorem 3.1 / Prop. 2)",
            CovarianceTerm::Signed => "signed rank-two cov_α(τ̃) (docs/proofs/covariance-signed.md)",
        }
    }
}

/// The mean part of the one-draw bound.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum MeanTerm {
    /// α(V + r²)Δ²/(2[σ²(r² − (α−1)V) + η²(V + r²)]) (Theorem 3.1 /
    /// Proposition 2: the Loewner bound K_α ⪰ γC).
    Loewner,
    /// α/(2σ²)·(Δ² + α·min(V·Δ², 4M_Y²)/(r² − (α−1)V)): Lemma B.6's
    /// |μ_D| ≤ M_Y with Sherman–Morrison, for the exponential kernel on a
    /// subset of R and η = 0 only (docs/proofs/mean-bounded-1d.md). Never
    /// larger than `Loewner` (its first branch equals it).
    BoundedMean {
        /// M_Y.
        response_bound: f64,
    },
}

impl MeanTerm {
    /// Where the term comes from, for reports.
    pub fn source(self) -> &'static str {
        match self {
            MeanTerm::Loewner => "Loewner bound (Theorem 3.1 / Prop. 2)",
            MeanTerm::BoundedMean { .. } => {
                "bounded mean |μ_D| ≤ M_Y (Lemma B.6) + Sherman–Morrison (docs/proofs/mean-bounded-1d.md)"
            }
        }
    }
}

/// ψ_α(τ) (Theorem 3.1; closed form of Lemma A.3), with `am1` = α − 1:
///
/// ```text
/// ψ_α(τ) = max{ ½log(1+τ) − log((1+ατ)/(1+τ)) / (2(α−1)),
///              −½log(1+τ) − log(1 − τ(α−1)) / (2(α−1)) }
/// ```
///
/// Valid for τ ≥ 0 and 0 < α − 1 < 1/τ; returns +∞ outside that range.
/// ψ_α(0) = 0 and ψ_α is non-decreasing in τ.
pub fn psi(am1: f64, tau: f64) -> f64 {
    psi_with_err(am1, tau).0
}

/// ψ_α(τ) and an absolute floating-point error bound.
pub(crate) fn psi_with_err(am1: f64, tau: f64) -> (f64, f64) {
    let x = tau * am1;
    if !(am1 > 0.0) || !(x < 1.0) || tau < 0.0 {
        return (f64::INFINITY, 0.0);
    }
    if tau == 0.0 {
        return (0.0, 0.0);
    }
    let half_log = 0.5 * ln_1p(tau);
    // (1+ατ)/(1+τ) = 1 + (α−1)τ/(1+τ)
    let l1 = ln_1p(am1 * tau / (1.0 + tau));
    let l2 = ln_1p(-x);
    let t1 = half_log - l1 / (2.0 * am1);
    let t2 = -half_log - l2 / (2.0 * am1);
    let one_minus_x = 1.0 - x;
    let magnitude = half_log + (l1.abs() + l2.abs()) / (2.0 * am1) + tau / one_minus_x + tau;
    (t1.max(t2), ROUNDING_SLACK * magnitude)
}

/// The signed rank-two covariance term (docs/proofs/covariance-signed.md),
/// with `am1` = α − 1:
///
/// ```text
/// cov_α(τ) = −log(1 − α(α−1)τ²/(1+τ)) / (2(α−1)),
/// ```
///
/// the supremum of the zero-mean divergence over all pairs of rank-one
/// updates of size at most V/(V + r²) (two orthogonal ones of that size
/// attain it; the diagonal kernel realises them, stationary kernels approach
/// them as ℓ → 0). Valid for τ ≥ 0 and
/// 0 < α − 1 < 1/τ (1 − α(α−1)τ²/(1+τ) = (1 − (α−1)τ)(1 + ατ)/(1+τ) > 0
/// there); returns +∞ outside. ψ_α(τ) ≤ cov_α(τ) ≤ 2ψ_α(τ).
pub fn cov_signed(am1: f64, tau: f64) -> f64 {
    cov_signed_with_err(am1, tau).0
}

/// cov_α(τ) and an absolute floating-point error bound.
pub(crate) fn cov_signed_with_err(am1: f64, tau: f64) -> (f64, f64) {
    let y = am1 * tau;
    if !(am1 > 0.0) || !(y < 1.0) || tau < 0.0 {
        return (f64::INFINITY, 0.0);
    }
    if tau == 0.0 {
        return (0.0, 0.0);
    }
    let alpha = 1.0 + am1;
    // x = α(α−1)τ²/(1+τ) ∈ [0, 1).
    let x = alpha * am1 * tau * (tau / (1.0 + tau));
    if x < 0.5 {
        // log1p(−x) is accurate to a few ulps relative, and x is a product of
        // correctly rounded factors: the value is accurate relatively.
        let value = -ln_1p(-x) / (2.0 * am1);
        (value, ROUNDING_SLACK * value * (1.0 + 1.0 / (1.0 - x)))
    } else {
        // Near α_max: 1 − x = (1 − (α−1)τ)(1 + ατ)/(1+τ) without cancellation
        // beyond that of 1 − (α−1)τ (conditioning 1/(1 − (α−1)τ)).
        let one_minus_x = (1.0 - y) * (1.0 + alpha * tau) / (1.0 + tau);
        let value = -ln(one_minus_x) / (2.0 * am1);
        let err = ROUNDING_SLACK * (value + (1.0 + 1.0 / (1.0 - y)) / (2.0 * am1));
        (value, err)
    }
}

/// The single-draw RDP bound of Theorem 3.1 / Proposition 2 for given
/// V ≥ V_n, Δ ≥ Δ_n, r, σ (may be +∞) and η ≥ 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RdpBound {
    v: f64,
    delta_n: f64,
    ridge: f64,
    /// 1/σ² (0 when σ = ∞).
    inv_scale2: f64,
    gp_noise: f64,
    /// τ̃ (= V/r² when η = 0).
    tau: f64,
    /// r² + η²(V + r²)/σ²: τ̃ = V/d0 and the mean-term denominator is d0·(1 − (α−1)τ̃).
    d0: f64,
    /// The covariance term used.
    covariance: CovarianceTerm,
    /// The mean term used.
    mean: MeanTerm,
    /// With η > 0: M_Y of the bounded-mean bound of the same release
    /// without GP noise, which also holds (post-processing).
    zero_noise_twin: Option<f64>,
    /// The joint two-point problem (η = 0, finite σ): at each order the
    /// smaller of this bound and its certified supremum is used.
    joint: Option<super::joint::JointProblem>,
}

/// The two terms of the single-draw bound at one order α.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RdpTerms {
    /// The covariance leakage, 2ψ_α(τ̃) or cov_α(τ̃) (does not depend on σ
    /// when η = 0).
    pub covariance: f64,
    /// The mean leakage (Theorem 3.1 / Prop. 2, or its bounded-mean refinement).
    pub mean: f64,
    /// True when the terms are those of the same release without GP noise
    /// (η = 0, bounded-mean refinement), smaller here: adding independent GP
    /// noise is post-processing, so that release's bound holds too.
    pub without_gp_noise: bool,
    /// Absolute floating-point error bound on covariance + mean.
    pub err: f64,
}

impl RdpTerms {
    /// covariance + mean.
    pub fn total(&self) -> f64 {
        self.covariance + self.mean
    }
}

impl RdpBound {
    /// Builds the bound. Errors: V ∉ [0, 1], Δ < 0, r ≤ 0, σ ≤ 0 or NaN
    /// (σ = +∞ is allowed), η < 0.
    pub fn new(v: f64, delta_n: f64, ridge: f64, scale: f64, gp_noise: f64) -> Result<Self> {
        non_negative("variance bound V", v)?;
        if v > 1.0 {
            return Err(crate::error::Error::InvalidParameter {
                name: "variance bound V",
                value: format!("{v}"),
                requirement: "<= 1 for a normalised kernel",
            });
        }
        non_negative("sensitivity Δ", delta_n)?;
        crate::error::ridge(ridge)?;
        crate::error::scale(scale)?;
        crate::error::gp_noise(gp_noise)?;
        let r2 = ridge * ridge;
        let inv_scale2 = if scale.is_infinite() { 0.0 } else { 1.0 / (scale * scale) };
        let d0 = r2 + inv_scale2 * gp_noise * gp_noise * (v + r2);
        let tau = v / d0;
        Ok(RdpBound {
            v,
            delta_n,
            ridge,
            inv_scale2,
            gp_noise,
            tau,
            d0,
            covariance: CovarianceTerm::TwoPsi,
            mean: MeanTerm::Loewner,
            zero_noise_twin: None,
            joint: None,
        })
    }

    /// With GP noise η > 0 and a kernel for which the bounded-mean
    /// refinement holds (the caller's to decide): at each order use the
    /// smaller of this bound and the bounded-mean bound of the same release
    /// without GP noise. The noisy release is the noiseless one plus
    /// independent data-free noise — post-processing, which does not
    /// increase any Rényi divergence — so both bound it, and so does their
    /// minimum; it keeps ε non-increasing in η.
    pub fn with_zero_noise_twin(mut self, response_bound: f64) -> Result<Self> {
        crate::error::positive("response bound M_Y", response_bound)?;
        if self.gp_noise > 0.0 && self.inv_scale2 > 0.0 {
            self.zero_noise_twin = Some(response_bound);
        }
        Ok(self)
    }

    /// The same release without GP noise, with the bounded-mean mean term.
    fn twin(&self, response_bound: f64) -> RdpBound {
        let r2 = self.ridge * self.ridge;
        RdpBound {
            gp_noise: 0.0,
            tau: self.v / r2,
            d0: r2,
            mean: MeanTerm::BoundedMean { response_bound },
            zero_noise_twin: None,
            ..*self
        }
    }

    /// The same bound with another covariance term (both are valid on the
    /// same range of α).
    pub fn with_covariance(mut self, term: CovarianceTerm) -> Self {
        self.covariance = term;
        self
    }

    /// The same bound with another mean term. The bounded-mean refinement
    /// needs η = 0 and M_Y > 0 (whether the kernel is the 1-D exponential
    /// one, as Lemma B.6 requires, is the caller's to decide).
    pub fn with_mean(mut self, term: MeanTerm) -> Result<Self> {
        if let MeanTerm::BoundedMean { response_bound } = term {
            crate::error::positive("response bound M_Y", response_bound)?;
            if self.gp_noise != 0.0 {
                return Err(Error::Unsupported(
                    "the bounded-mean refinement of the mean term holds only without GP noise (η = 0)".into(),
                ));
            }
        }
        self.mean = term;
        Ok(self)
    }

    /// The same bound, with the certified joint supremum of `problem` taken
    /// at each order where it is smaller (docs/proofs/joint-accountant.md).
    /// Needs η = 0 and a finite σ.
    pub(crate) fn with_joint(mut self, problem: super::joint::JointProblem) -> Result<Self> {
        if self.gp_noise != 0.0 || self.inv_scale2 == 0.0 {
            return Err(Error::Unsupported(
                "the joint bound holds for a finite scale σ without GP noise (η = 0)".into(),
            ));
        }
        self.joint = Some(problem);
        Ok(self)
    }

    /// The joint problem, if the joint supremum is in use.
    pub(crate) fn joint(&self) -> Option<&super::joint::JointProblem> {
        self.joint.as_ref()
    }

    /// The covariance term used.
    pub fn covariance_term(&self) -> CovarianceTerm {
        self.covariance
    }

    /// The mean term used.
    pub fn mean_term(&self) -> MeanTerm {
        self.mean
    }

    /// τ̃ = σ²V/(σ²r² + η²(V + r²)) (Proposition 2; V/r² when η = 0).
    pub fn tau(&self) -> f64 {
        self.tau
    }

    /// α_max − 1 = 1/τ̃ (+∞ when τ̃ = 0). Orders 1 < α < α_max are admissible
    /// (the twin without GP noise, if any, has a smaller range).
    pub fn am1_max(&self) -> f64 {
        if self.tau == 0.0 { f64::INFINITY } else { 1.0 / self.tau }
    }

    /// The two terms at order α = 1 + am1, or `None` if α is not admissible
    /// (joint certificates remembered in the shared cache).
    pub fn terms(&self, am1: f64) -> Option<RdpTerms> {
        self.terms_in(am1, AccountingCache::shared())
    }

    /// [`Self::terms`], with joint certificates remembered in `cache` (the
    /// values do not depend on the cache).
    pub fn terms_in(&self, am1: f64, cache: &AccountingCache) -> Option<RdpTerms> {
        let own = self.own_terms(am1, cache);
        let Some(m_y) = self.zero_noise_twin else { return own };
        match (own, self.twin(m_y).own_terms(am1, cache)) {
            (Some(a), Some(b)) if b.total() + b.err < a.total() + a.err => {
                Some(RdpTerms { without_gp_noise: true, ..b })
            }
            (None, Some(b)) => Some(RdpTerms { without_gp_noise: true, ..b }),
            (own, _) => own,
        }
    }

    fn own_terms(&self, am1: f64, cache: &AccountingCache) -> Option<RdpTerms> {
        let x = am1 * self.tau;
        if !(am1 > 0.0) || !(x < 1.0) {
            return None;
        }
        let (covariance, cov_err) = match self.covariance {
            CovarianceTerm::TwoPsi => {
                let (psi, psi_err) = psi_with_err(am1, self.tau);
                (2.0 * psi, 2.0 * psi_err)
            }
            CovarianceTerm::Signed => cov_signed_with_err(am1, self.tau),
        };
        let mean = if self.inv_scale2 == 0.0 || self.delta_n == 0.0 {
            0.0
        } else {
            let r2 = self.ridge * self.ridge;
            // σ²(r² − (α−1)V) + η²(V + r²), divided through by σ².
            let den = self.d0 - am1 * self.v;
            if !(den > 0.0) {
                return None;
            }
            let d2 = self.delta_n * self.delta_n;
            match self.mean {
                MeanTerm::Loewner => (1.0 + am1) * (self.v + r2) * d2 * self.inv_scale2 / (2.0 * den),
                MeanTerm::BoundedMean { response_bound } => {
                    // η = 0 here, so den = r² − (α−1)V.
                    let m2 = 4.0 * response_bound * response_bound;
                    let alpha = 1.0 + am1;
                    alpha * self.inv_scale2 / 2.0 * (d2 + alpha * (self.v * d2).min(m2) / den)
                }
            }
        };
        if !covariance.is_finite() {
            return None;
        }
        let cond = 1.0 + (self.d0 + am1 * self.v) / (self.d0 - am1 * self.v).max(f64::MIN_POSITIVE);
        let err = cov_err + ROUNDING_SLACK * mean * cond;
        if let Some(problem) = &self.joint {
            // A certified upper bound (outward rounding): no further slack.
            if let Some(j) = crate::privacy::joint::joint_rdp_in(problem, am1, cache) {
                if j < covariance + mean + err {
                    return Some(RdpTerms {
                        covariance,
                        mean: (j - covariance).max(0.0),
                        err: 0.0,
                        without_gp_noise: false,
                    });
                }
            }
        }
        Some(RdpTerms { covariance, mean, err, without_gp_noise: false })
    }

    /// A cheap value ≤ `terms(am1).total()` (up to rounding): with the joint
    /// bound, the smaller of the closed-form total and the joint problem's
    /// largest value at a grid of points (not certified); otherwise the total.
    pub fn terms_lower(&self, am1: f64) -> Option<f64> {
        self.terms_lower_in(am1, AccountingCache::shared())
    }

    /// [`Self::terms_lower`], with the estimates remembered in `cache`.
    pub fn terms_lower_in(&self, am1: f64, cache: &AccountingCache) -> Option<f64> {
        let Some(problem) = &self.joint else { return self.terms_in(am1, cache).map(|t| t.total()) };
        let closed = self.with_no_joint().terms_in(am1, cache)?.total();
        Some(crate::privacy::joint::joint_rdp_estimate_in(problem, am1, cache).map_or(closed, |e| e.min(closed)))
    }

    /// Feeds every field that determines the bound's values into `h` (for
    /// caching a conversion's choice of order; the values are recomputed).
    pub(crate) fn fingerprint(&self, h: &mut impl std::hash::Hasher) {
        for x in [self.v, self.delta_n, self.ridge, self.inv_scale2, self.gp_noise, self.tau, self.d0] {
            h.write_u64(x.to_bits());
        }
        h.write_u8(self.covariance as u8);
        match self.mean {
            MeanTerm::Loewner => h.write_u8(0),
            MeanTerm::BoundedMean { response_bound } => {
                h.write_u8(1);
                h.write_u64(response_bound.to_bits());
            }
        }
        h.write_u64(self.zero_noise_twin.map_or(u64::MAX, f64::to_bits));
        match &self.joint {
            None => h.write_u8(0),
            Some(p) => {
                h.write_u8(1);
                for x in [p.ridge, p.inv_scale, p.response_bound, p.s_max] {
                    h.write_u64(x.to_bits());
                }
                h.write_usize(p.n);
                h.write_u8(p.bounded_mean as u8);
            }
        }
    }

    /// The same bound without the certified joint problem (the tight bound).
    pub(crate) fn with_no_joint(&self) -> RdpBound {
        RdpBound { joint: None, ..*self }
    }

    /// ε_α (the sum of the two terms) at α = 1 + am1; +∞ when not admissible.
    pub fn epsilon_alpha(&self, am1: f64) -> f64 {
        self.terms(am1).map_or(f64::INFINITY, |t| t.total())
    }

    /// The variance bound V used.
    pub fn variance_bound(&self) -> f64 {
        self.v
    }

    /// The sensitivity bound Δ used.
    pub fn sensitivity(&self) -> f64 {
        self.delta_n
    }

    /// The GP noise η.
    pub fn gp_noise(&self) -> f64 {
        self.gp_noise
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ψ_α by its definition in Lemma A.3: the max over λ ∈ [1/(1+τ), 1+τ] of
    /// −½log λ − log(α − (α−1)λ)/(2(α−1)), by dense search (independent of
    /// the closed form).
    fn psi_by_search(alpha: f64, tau: f64) -> f64 {
        let (a, b) = (1.0 / (1.0 + tau), 1.0 + tau);
        let mut best = f64::NEG_INFINITY;
        let m = 200_000;
        for i in 0..=m {
            let lam = a + (b - a) * i as f64 / m as f64;
            let inner = alpha - (alpha - 1.0) * lam;
            if inner <= 0.0 {
                continue;
            }
            best = best.max(-0.5 * lam.ln() - inner.ln() / (2.0 * (alpha - 1.0)));
        }
        best
    }

    #[test]
    fn psi_matches_lemma_a3_definition() {
        for &(alpha, tau) in &[(1.5, 0.3), (2.0, 0.1), (1.01, 5.0), (8.0, 0.1), (3.0, 0.45)] {
            assert!((alpha - 1.0) * tau < 1.0);
            let closed = psi(alpha - 1.0, tau);
            let search = psi_by_search(alpha, tau);
            assert!((closed - search).abs() <= 1e-9 * (1.0 + closed.abs()), "α={alpha} τ={tau}: {closed} vs {search}");
        }
    }

    #[test]
    fn psi_basic_properties() {
        assert_eq!(psi(0.5, 0.0), 0.0);
        assert_eq!(psi(2.0, 0.5), f64::INFINITY); // (α−1)τ = 1: not admissible
        // Hand-checked: α = 2, τ = 0.5: max{½ln1.5 − ½ln(2/1.5), −½ln1.5 − ½ln0.5}
        // = max{0.0589…, 0.1438…} = ½ln(4/3) = 0.14384103622589045.
        assert!((psi(1.0, 0.5) - 0.14384103622589045).abs() < 1e-15);
        // Non-decreasing in τ, non-negative.
        let mut last = 0.0;
        for i in 1..200 {
            let tau = i as f64 * 0.01;
            let p = psi(0.4, tau);
            assert!(p >= last - 1e-15 && p >= 0.0);
            last = p;
        }
    }

    #[test]
    fn theorem_3_1_hand_value() {
        // V = 0.5, Δ = 0.4, r = 1, σ = 2, α = 2:
        // 2ψ_2(0.5) + 2·1.5·0.16/(2·4·(1 − 0.5)) = ln(4/3) + 0.12.
        let b = RdpBound::new(0.5, 0.4, 1.0, 2.0, 0.0).unwrap();
        let t = b.terms(1.0).unwrap();
        assert!((t.covariance - (4.0f64 / 3.0).ln()).abs() < 1e-15);
        assert!((t.mean - 0.12).abs() < 1e-15);
        assert_eq!(b.am1_max(), 2.0);
        assert!(b.terms(2.0).is_none());
    }

    #[test]
    fn limits_and_monotonicity() {
        let (v, d, r) = (0.8, 1.3, 0.7);
        let inf = RdpBound::new(v, d, r, f64::INFINITY, 0.0).unwrap();
        for &am1 in &[0.01, 0.1, 0.5] {
            // σ → ∞ tends to the covariance-only bound.
            let big = RdpBound::new(v, d, r, 1e9, 0.0).unwrap();
            assert!((big.epsilon_alpha(am1) - inf.epsilon_alpha(am1)).abs() < 1e-12);
            assert_eq!(inf.terms(am1).unwrap().mean, 0.0);
            // η = 0 is Theorem 3.1 exactly; η > 0 only helps.
            let t31 = RdpBound::new(v, d, r, 1.5, 0.0).unwrap();
            let mut last = t31.epsilon_alpha(am1);
            for eta in [0.1, 0.5, 1.0, 3.0] {
                let p2 = RdpBound::new(v, d, r, 1.5, eta).unwrap();
                let e = p2.epsilon_alpha(am1);
                assert!(e < last, "η={eta}");
                last = e;
            }
            // Larger σ, larger r (smaller V/r²) give smaller bounds.
            let a = RdpBound::new(v, d, r, 1.0, 0.0).unwrap().epsilon_alpha(am1);
            let b = RdpBound::new(v, d, r, 2.0, 0.0).unwrap().epsilon_alpha(am1);
            let c = RdpBound::new(v, d, 2.0 * r, 2.0, 0.0).unwrap().epsilon_alpha(am1);
            assert!(a > b && b > c);
        }
    }

    #[test]
    fn proposition_2_closed_form() {
        // τ̃ = σ²V/(σ²r² + η²(V+r²)); mean = α(V+r²)Δ²/(2[σ²(r²−(α−1)V) + η²(V+r²)]).
        let (v, d, r, s, eta, am1): (f64, f64, f64, f64, f64, f64) = (0.9, 0.7, 0.6, 1.7, 0.8, 0.3);
        let b = RdpBound::new(v, d, r, s, eta).unwrap();
        let tau = s * s * v / (s * s * r * r + eta * eta * (v + r * r));
        assert!((b.tau() - tau).abs() < 1e-15);
        let mean = (1.0 + am1) * (v + r * r) * d * d / (2.0 * (s * s * (r * r - am1 * v) + eta * eta * (v + r * r)));
        let t = b.terms(am1).unwrap();
        assert!((t.mean - mean).abs() < 1e-14);
        assert!((t.covariance - 2.0 * psi(am1, tau)).abs() < 1e-15);
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(RdpBound::new(0.5, 1.0, 0.0, 1.0, 0.0).is_err());
        assert!(RdpBound::new(0.5, 1.0, 1.0, 0.0, 0.0).is_err());
        assert!(RdpBound::new(0.5, 1.0, 1.0, -1.0, 0.0).is_err());
        assert!(RdpBound::new(0.5, 1.0, 1.0, f64::NAN, 0.0).is_err());
        assert!(RdpBound::new(0.5, 1.0, 1.0, 1.0, -0.1).is_err());
        assert!(RdpBound::new(1.5, 1.0, 1.0, 1.0, 0.0).is_err());
        assert!(RdpBound::new(0.5, f64::NAN, 1.0, 1.0, 0.0).is_err());
    }

    /// The zero-mean divergence of N(0, I − s·aaᵀ) from N(0, I − s'·bbᵀ) in
    /// R² with aᵀb = ρ, by the eigenvalues of Σ₂^{−1/2}Σ₁Σ₂^{−1/2} (2×2,
    /// closed form) — independent of the signed-term formula.
    fn zero_mean_divergence(alpha: f64, s: f64, s2: f64, rho: f64) -> f64 {
        let a = [1.0, 0.0];
        let b = [rho, (1.0 - rho * rho).max(0.0).sqrt()];
        let m = |v: [f64; 2], t: f64| {
            [[1.0 - t * v[0] * v[0], -t * v[0] * v[1]], [-t * v[1] * v[0], 1.0 - t * v[1] * v[1]]]
        };
        let (s1m, s2m) = (m(a, s), m(b, s2));
        // Eigenvalues of Σ₂⁻¹Σ₁ (same as of the symmetric form): trace and determinant.
        let det2 = s2m[0][0] * s2m[1][1] - s2m[0][1] * s2m[1][0];
        let inv = [[s2m[1][1] / det2, -s2m[0][1] / det2], [-s2m[1][0] / det2, s2m[0][0] / det2]];
        let p = [
            [inv[0][0] * s1m[0][0] + inv[0][1] * s1m[1][0], inv[0][0] * s1m[0][1] + inv[0][1] * s1m[1][1]],
            [inv[1][0] * s1m[0][0] + inv[1][1] * s1m[1][0], inv[1][0] * s1m[0][1] + inv[1][1] * s1m[1][1]],
        ];
        let (tr, det) = (p[0][0] + p[1][1], p[0][0] * p[1][1] - p[0][1] * p[1][0]);
        let disc = (tr * tr / 4.0 - det).max(0.0).sqrt();
        let phi = |l: f64| -0.5 * l.ln() - (alpha - (alpha - 1.0) * l).ln() / (2.0 * (alpha - 1.0));
        phi(tr / 2.0 + disc) + phi(tr / 2.0 - disc)
    }

    #[test]
    fn signed_term_is_the_supremum_of_the_two_dimensional_divergence() {
        for &(alpha, tau) in &[(1.5, 0.3), (2.0, 0.1), (1.01, 5.0), (8.0, 0.1), (3.0, 0.45), (1.2, 4.0)] {
            let am1 = alpha - 1.0;
            assert!(am1 * tau < 1.0);
            let cov = cov_signed(am1, tau);
            // Closed form at s = s' = S, ρ = 0.
            let big_s = tau / (1.0 + tau);
            let at_sup = zero_mean_divergence(alpha, big_s, big_s, 0.0);
            assert!((cov - at_sup).abs() <= 1e-12 * (1.0 + cov), "α={alpha} τ={tau}: {cov} vs {at_sup}");
            // Every (s, s', ρ) on a grid stays below it.
            let mut worst = 0.0f64;
            for i in 0..=20 {
                for j in 0..=20 {
                    for k in 0..=10 {
                        let (s, s2, rho) = (big_s * i as f64 / 20.0, big_s * j as f64 / 20.0, k as f64 / 10.0);
                        let d = zero_mean_divergence(alpha, s, s2, rho);
                        assert!(
                            d <= cov * (1.0 + 1e-12) + 1e-15,
                            "α={alpha} τ={tau} s={s} s'={s2} ρ={rho}: {d} > {cov}"
                        );
                        worst = worst.max(d);
                    }
                }
            }
            assert!((worst - cov).abs() <= 1e-12 * (1.0 + cov));
            // ψ_α ≤ cov_α ≤ 2ψ_α.
            let p = psi(am1, tau);
            assert!(p <= cov * (1.0 + 1e-14) && cov <= 2.0 * p * (1.0 + 1e-14), "ψ={p} cov={cov}");
        }
        assert_eq!(cov_signed(0.5, 0.0), 0.0);
        assert_eq!(cov_signed(2.0, 0.5), f64::INFINITY);
        // Hand value: α = 2, τ = 0.5: −½·log(1 − 2·0.25/1.5) = ½·log(3/2).
        assert!((cov_signed(1.0, 0.5) - 0.5 * 1.5f64.ln()).abs() < 1e-15);
        // Both branches of the evaluation agree where they meet, and near α_max
        // the product form keeps its precision.
        let tau: f64 = 2.0;
        for am1 in [0.1f64, 0.2, 0.3, 0.49, 0.4999999] {
            let x = (1.0 + am1) * am1 * tau * tau / (1.0 + tau);
            let direct = -(-x).ln_1p() / (2.0 * am1);
            let got = cov_signed(am1, tau);
            assert!((got - direct).abs() <= 1e-9 * direct, "am1={am1}: {got} vs {direct}");
        }
    }

    #[test]
    fn bounded_mean_never_exceeds_the_loewner_term() {
        let (v, d, r, s) = (0.9, 1.7, 0.6, 0.8);
        let loewner = RdpBound::new(v, d, r, s, 0.0).unwrap();
        let bounded = loewner.with_mean(MeanTerm::BoundedMean { response_bound: 1.0 }).unwrap();
        let q = r * r;
        for am1 in [0.01, 0.1, 0.3, 0.39] {
            let (a, b) = (loewner.terms(am1).unwrap(), bounded.terms(am1).unwrap());
            let alpha = 1.0 + am1;
            let want = alpha / (2.0 * s * s) * (d * d + alpha * (v * d * d).min(4.0) / (q - am1 * v));
            assert!((b.mean - want).abs() <= 1e-14 * want, "{} vs {want}", b.mean);
            assert!(b.mean <= a.mean * (1.0 + 1e-14), "{} > {}", b.mean, a.mean);
        }
        // With V·Δ² ≤ 4M² the two are equal.
        let small = RdpBound::new(v, 0.5, r, s, 0.0).unwrap();
        let small_b = small.with_mean(MeanTerm::BoundedMean { response_bound: 1.0 }).unwrap();
        assert!((small.terms(0.2).unwrap().mean - small_b.terms(0.2).unwrap().mean).abs() < 1e-14);
        // Only without GP noise.
        assert!(
            RdpBound::new(v, d, r, s, 0.1).unwrap().with_mean(MeanTerm::BoundedMean { response_bound: 1.0 }).is_err()
        );
    }

    #[test]
    fn the_zero_noise_twin_keeps_epsilon_non_increasing_in_eta() {
        // V·Δ² = 8.1 > 4M_Y²: the bounded-mean refinement bites.
        let (v, d, r, s) = (0.9, 3.0, 0.6, 0.8);
        let at_zero = RdpBound::new(v, d, r, s, 0.0)
            .unwrap()
            .with_covariance(CovarianceTerm::Signed)
            .with_mean(MeanTerm::BoundedMean { response_bound: 1.0 })
            .unwrap();
        let mut last = at_zero.epsilon_alpha(0.2);
        for eta in [1e-6, 0.01, 0.1, 0.5, 2.0] {
            let plain = RdpBound::new(v, d, r, s, eta).unwrap().with_covariance(CovarianceTerm::Signed);
            let twin = plain.with_zero_noise_twin(1.0).unwrap();
            let e = twin.epsilon_alpha(0.2);
            assert!(e <= last * (1.0 + 1e-12), "η={eta}: {e} > {last}");
            assert!(e <= plain.epsilon_alpha(0.2) && e <= at_zero.epsilon_alpha(0.2));
            last = e;
            // Beyond the twin's range only the noisy bound is used.
            let far = 0.99 * twin.am1_max();
            if far > r * r / v {
                assert_eq!(twin.epsilon_alpha(far), plain.epsilon_alpha(far));
            }
        }
        // At a tiny η the twin is what is used.
        let t = RdpBound::new(v, d, r, s, 1e-6).unwrap().with_covariance(CovarianceTerm::Signed);
        assert!(t.with_zero_noise_twin(1.0).unwrap().terms(0.2).unwrap().without_gp_noise);
        assert!(!t.terms(0.2).unwrap().without_gp_noise);
    }
}
