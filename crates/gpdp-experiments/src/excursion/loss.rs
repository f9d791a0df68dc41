//! The clipped binary cross-entropy of a posterior excursion probability,
//! fast enough for the 1-D search's inner loop.
//!
//! With s = 1{f*(x) ≥ t} and p = Φ(z), z = (μ_D(x) − t)/(σ·√k_D(x, x)) (the
//! paper's §5), the pointwise loss is ℓ(s, p) = −s·log p − (1 − s)·log(1 − p),
//! with p clipped to [c, 1 − c] (c = 10⁻⁶ in the paper). Since 1 − Φ(z) = Φ(−z),
//!
//! ```text
//! ℓ(s, p) = g(u),   u = (2s − 1)·z,   g(u) = −log clip(Φ(u), c, 1 − c),
//! ```
//!
//! a single function of one signed margin. g is constant outside
//! [−U, U], U = Φ⁻¹(1 − c), and smooth inside. There it is tabulated on
//! N = [`ClippedBce::INTERVALS`] steps of width h = 2U/N: cell i is centred
//! on the knot u_i = −U + i·h (i = 0..N) and carries the cubic Hermite
//! interpolant of the exact g and g'(u) = −φ(u)/Φ(u) at its edges
//! u_i ± h/2 (absolute error below 10⁻¹¹, checked in the tests against
//! [`ClippedBce::exact`]). Centring the cells lets the inner loop find its
//! cell by rounding (a magic-number add), which is cheaper than a saturating
//! float → integer conversion. One evaluation costs a few multiply-adds instead of an erfc
//! and a log.

use crate::error::{Result, invalid};

/// g(u) = −log clip(Φ(u), c, 1 − c), tabulated.
#[derive(Debug, Clone)]
pub struct ClippedBce {
    clip: f64,
    /// U = Φ⁻¹(1 − c).
    edge: f64,
    inv_h: f64,
    /// On cell i: g = c0 + τ·(c1 + τ·(c2 + τ·c3)), τ = (u − u_i)/h + ½ ∈ [0, 1].
    coef: Vec<[f64; 4]>,
    /// −log c: a wrong hard decision.
    worst: f64,
    /// −log(1 − c): a right hard decision.
    best: f64,
}

/// log Φ(u), accurate in both tails.
fn log_normal_cdf(u: f64) -> f64 {
    use gpdp::postprocess::excursion::normal_cdf;
    if u > 0.0 { (-normal_cdf(-u)).ln_1p() } else { normal_cdf(u).ln() }
}

fn normal_pdf(u: f64) -> f64 {
    (-0.5 * u * u).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// 2⁵² + 2⁵¹: adding it to 0 ≤ s < 2⁵¹ rounds s to an integer held in the
/// low mantissa bits.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

impl ClippedBce {
    /// Number of steps N of the table on [−U, U] (N + 1 cells).
    pub const INTERVALS: usize = 4096;

    /// The table for clip level c ∈ (0, ½).
    pub fn new(clip: f64) -> Result<Self> {
        if !(clip > 0.0 && clip < 0.5) {
            return Err(invalid("probability clip c", clip, "in (0, 0.5)"));
        }
        // U with Φ(−U) = c, by bisection (Φ(−u) decreases in u).
        let (mut lo, mut hi) = (0.0f64, 40.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if gpdp::postprocess::excursion::normal_cdf(-mid) > clip { lo = mid } else { hi = mid }
        }
        let edge = 0.5 * (lo + hi);
        let n = Self::INTERVALS;
        let h = 2.0 * edge / n as f64;
        let g = |u: f64| -log_normal_cdf(u);
        let dg = |u: f64| -normal_pdf(u) / log_normal_cdf(u).exp();
        // Cell edges u_i − h/2, i = 0..N+1.
        let edges: Vec<(f64, f64)> = (0..=n + 1)
            .map(|i| {
                let u = -edge + (i as f64 - 0.5) * h;
                (g(u), h * dg(u))
            })
            .collect();
        let coef = edges
            .windows(2)
            .map(|w| {
                let ((g0, d0), (g1, d1)) = (w[0], w[1]);
                // Hermite basis in monomial form.
                [g0, d0, 3.0 * (g1 - g0) - 2.0 * d0 - d1, 2.0 * (g0 - g1) + d0 + d1]
            })
            .collect();
        Ok(ClippedBce { clip, edge, inv_h: 1.0 / h, coef, worst: -clip.ln(), best: -(-clip).ln_1p() })
    }

    /// The clip level c.
    pub fn clip(&self) -> f64 {
        self.clip
    }

    /// −log c, the loss of a confidently wrong point.
    pub fn worst(&self) -> f64 {
        self.worst
    }

    /// −log(1 − c), the loss of a confidently right point.
    pub fn best(&self) -> f64 {
        self.best
    }

    /// The interpolant at u ∈ (−U, U).
    #[inline(always)]
    fn table(&self, u: f64) -> f64 {
        let s = (u + self.edge) * self.inv_h; // in [0, N]
        let r = s + ROUND_MAGIC;
        let i = (r.to_bits() & 0xffff_ffff) as usize; // round(s) ∈ 0..=N
        let tau = s - (r - ROUND_MAGIC) + 0.5;
        let c = &self.coef[i];
        c[0] + tau * (c[1] + tau * (c[2] + tau * c[3]))
    }

    /// g(u) from the table; exactly −log(1 − c) from U on and −log c from
    /// −U down. NaN counts as a wrong decision.
    #[inline(always)]
    pub fn eval(&self, u: f64) -> f64 {
        if u.abs() < self.edge {
            self.table(u)
        } else if u > 0.0 {
            self.best
        } else {
            self.worst
        }
    }

    /// Σ_k w_k·g(a_k·inv_sigma): the search's inner loop. Along the mesh
    /// the margins vary smoothly, so the saturation tests form long runs and
    /// are well predicted (measured faster than a branch-free clamp); four
    /// partial sums break the dependency chain of the accumulation.
    pub fn weighted_sum(&self, margins: &[f64], inv_sigma: f64, weights: &[f64]) -> f64 {
        debug_assert_eq!(margins.len(), weights.len());
        let mut acc = [0.0f64; 4];
        let (m4, w4) = (margins.chunks_exact(4), weights.chunks_exact(4));
        let (mr, wr) = (m4.remainder(), w4.remainder());
        for (m, w) in m4.zip(w4) {
            for k in 0..4 {
                acc[k] += w[k] * self.eval(m[k] * inv_sigma);
            }
        }
        for (k, (&m, &w)) in mr.iter().zip(wr).enumerate() {
            acc[k] += w * self.eval(m * inv_sigma);
        }
        (acc[0] + acc[1]) + (acc[2] + acc[3])
    }

    /// g(u) computed directly (erfc and log), for tests and one-off values.
    pub fn exact(&self, u: f64) -> f64 {
        if u.is_nan() {
            return self.worst;
        }
        let p = log_normal_cdf(u).exp();
        -p.clamp(self.clip, 1.0 - self.clip).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpdp::postprocess::metrics::integrated_bce;

    #[test]
    fn table_matches_exact_loss_and_library_bce() {
        let t = ClippedBce::new(1e-6).unwrap();
        assert!((gpdp::postprocess::excursion::normal_cdf(-t.edge) - 1e-6).abs() < 1e-18);
        let mut worst_err = 0.0f64;
        for k in 0..=200_000 {
            let u = -6.0 + 12.0 * k as f64 / 200_000.0;
            worst_err = worst_err.max((t.eval(u) - t.exact(u)).abs());
            // The raw table up to ±U.
            if u.abs() < t.edge {
                worst_err = worst_err.max((t.table(u) - t.exact(u)).abs());
            }
        }
        assert!(worst_err < 1e-11, "max table error {worst_err}");
        assert_eq!(t.eval(f64::INFINITY), t.best());
        assert_eq!(t.eval(f64::NEG_INFINITY), t.worst());
        assert_eq!(t.eval(f64::NAN), t.worst());
        // The same number as the library's integrated BCE, for both labels.
        for (s, z) in [(true, 0.3), (false, 0.3), (true, -2.0), (false, -7.0), (true, 9.0)] {
            let p = gpdp::postprocess::excursion::normal_cdf(z);
            let lib = integrated_bce(&[s], &[p], &[1.0], 1e-6).unwrap();
            let u = if s { z } else { -z };
            assert!((t.eval(u) - lib).abs() < 1e-10, "s={s} z={z}: {} vs {lib}", t.eval(u));
        }
        // The inner-loop weighted sum agrees with the pointwise table.
        let margins: Vec<f64> =
            (0..1001).map(|k| -9.0 + 18.0 * k as f64 / 1000.0).chain([f64::INFINITY, f64::NEG_INFINITY]).collect();
        let weights: Vec<f64> = (0..margins.len()).map(|k| 0.5 + (k % 7) as f64 / 7.0).collect();
        for sigma in [0.01, 0.3, 1.0, 5.0] {
            let direct: f64 = margins.iter().zip(&weights).map(|(&a, &w)| w * t.eval(a / sigma)).sum();
            let fast = t.weighted_sum(&margins, 1.0 / sigma, &weights);
            assert!((fast - direct).abs() < 1e-11 * direct.abs().max(1.0), "σ={sigma}: {fast} vs {direct}");
        }
        assert!(ClippedBce::new(0.0).is_err() && ClippedBce::new(0.5).is_err() && ClippedBce::new(f64::NAN).is_err());
    }
}
