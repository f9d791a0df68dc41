//! Synthetic 2-D "pollution" fields: anisotropic Gaussian plumes through a
//! sigmoid (the paper's §5 / App. D 2-D study, docs/experiments.md).
//!
//! ```text
//! h(x) = Σ_j a_j · exp(−½ (x − c_j)ᵀ Σ_j⁻¹ (x − c_j)),   Σ_j = R(φ_j) diag(w_j², (w_j/ρ_j)²) R(φ_j)ᵀ
//! g(x) = 1 / (1 + exp(−γ (h(x) − b))),                  b = the q-quantile of h on a reference grid
//! f*(x) = clamp(2 (g(x) − g_min)/(g_max − g_min) − 1, −1, 1)
//! ```
//!
//! g_min, g_max and b are taken over a regular reference grid of [0,1]²
//! (so f* spans [−1, 1] there; off-grid values are clamped, keeping
//! |f*| ≤ 1). The paper states only K = 2, the sigmoid with γ = 5 centred at
//! the 65% quantile, widths 0.20–0.35 and anisotropy up to 1.4; every other
//! distribution below is our documented choice ([`PlumeConfig`]):
//! centres c_j ~ U[c_lo, c_hi]², amplitudes a_j ~ U[a_lo, a_hi], widths
//! w_j ~ U[w_lo, w_hi], anisotropy ρ_j ~ U[1, ρ_max], angles φ_j ~ U[0, π).

use rand::{Rng, RngExt};

/// Parameters of the plume-field distribution (defaults in brackets).
#[derive(Debug, Clone, PartialEq)]
pub struct PlumeConfig {
    /// Number of plumes K [2].
    pub plumes: usize,
    /// Centre coordinates ~ U[lo, hi] [0.15, 0.85].
    pub centre_range: (f64, f64),
    /// Amplitudes ~ U[lo, hi] [0.5, 1.0].
    pub amplitude_range: (f64, f64),
    /// Major-axis widths ~ U[lo, hi] [0.20, 0.35].
    pub width_range: (f64, f64),
    /// Anisotropy ratio major/minor ~ U[1, max] [1.4].
    pub anisotropy_max: f64,
    /// Sigmoid steepness γ [5].
    pub gamma: f64,
    /// Sigmoid centre as a quantile of h on the reference grid [0.65].
    pub quantile: f64,
    /// Reference grid points per axis [180].
    pub reference_grid: usize,
}

impl Default for PlumeConfig {
    fn default() -> Self {
        PlumeConfig {
            plumes: 2,
            centre_range: (0.15, 0.85),
            amplitude_range: (0.5, 1.0),
            width_range: (0.20, 0.35),
            anisotropy_max: 1.4,
            gamma: 5.0,
            quantile: 0.65,
            reference_grid: 180,
        }
    }
}

impl PlumeConfig {
    /// Checks every field; the error names the first offending one.
    pub fn validate(&self) -> crate::Result<()> {
        use crate::error::invalid;
        if self.plumes == 0 {
            return Err(invalid("plumes K", 0.0, "≥ 1"));
        }
        for (field, (lo, hi)) in [
            ("plume centre range", self.centre_range),
            ("plume amplitude range", self.amplitude_range),
            ("plume width range", self.width_range),
        ] {
            if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
                return Err(invalid(field, if lo.is_finite() { hi } else { lo }, "finite with lower ≤ upper"));
            }
        }
        if !(self.width_range.0 > 0.0) {
            return Err(invalid("plume width", self.width_range.0, "> 0"));
        }
        if !(self.anisotropy_max >= 1.0 && self.anisotropy_max.is_finite()) {
            return Err(invalid("plume anisotropy", self.anisotropy_max, "finite and ≥ 1"));
        }
        if !(self.gamma > 0.0 && self.gamma.is_finite()) {
            return Err(invalid("sigmoid steepness γ", self.gamma, "finite and > 0"));
        }
        if !(self.quantile > 0.0 && self.quantile < 1.0) {
            return Err(invalid("sigmoid quantile", self.quantile, "in (0, 1)"));
        }
        if self.reference_grid < 2 {
            return Err(invalid("reference grid", self.reference_grid as f64, "≥ 2 points per axis"));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Plume {
    centre: [f64; 2],
    amplitude: f64,
    /// Σ⁻¹ (symmetric): [a, b; b, c].
    precision: [f64; 3],
}

/// One latent field f*: [0,1]² → [−1, 1].
#[derive(Debug, Clone, PartialEq)]
pub struct PlumeField {
    plumes: Vec<Plume>,
    gamma: f64,
    offset: f64,
    g_min: f64,
    g_max: f64,
}

fn uniform<R: Rng + ?Sized>(rng: &mut R, (lo, hi): (f64, f64)) -> f64 {
    lo + (hi - lo) * rng.random::<f64>()
}

impl PlumeField {
    /// Draws a field from the configured distribution.
    pub fn sample<R: Rng + ?Sized>(cfg: &PlumeConfig, rng: &mut R) -> Self {
        let plumes = (0..cfg.plumes.max(1))
            .map(|_| {
                let centre = [uniform(rng, cfg.centre_range), uniform(rng, cfg.centre_range)];
                let amplitude = uniform(rng, cfg.amplitude_range);
                let w = uniform(rng, cfg.width_range);
                let rho = uniform(rng, (1.0, cfg.anisotropy_max.max(1.0)));
                let phi = std::f64::consts::PI * rng.random::<f64>();
                let (c, s) = (phi.cos(), phi.sin());
                let (l1, l2) = (1.0 / (w * w), (rho * rho) / (w * w));
                // Σ⁻¹ = R diag(1/w², ρ²/w²) Rᵀ
                let precision = [c * c * l1 + s * s * l2, c * s * (l1 - l2), s * s * l1 + c * c * l2];
                Plume { centre, amplitude, precision }
            })
            .collect();
        let mut field = PlumeField { plumes, gamma: cfg.gamma, offset: 0.0, g_min: 0.0, g_max: 1.0 };
        let m = cfg.reference_grid.max(2);
        let mut hs: Vec<f64> = Vec::with_capacity(m * m);
        for j in 0..m {
            for i in 0..m {
                hs.push(field.h(&[i as f64 / (m - 1) as f64, j as f64 / (m - 1) as f64]));
            }
        }
        let mut sorted = hs.clone();
        sorted.sort_by(f64::total_cmp);
        let q = cfg.quantile.clamp(0.0, 1.0);
        field.offset = sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        let gs: Vec<f64> = hs.iter().map(|&h| field.sigmoid(h)).collect();
        field.g_min = gs.iter().copied().fold(f64::INFINITY, f64::min);
        field.g_max = gs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        field
    }

    fn h(&self, x: &[f64]) -> f64 {
        self.plumes
            .iter()
            .map(|p| {
                let (dx, dy) = (x[0] - p.centre[0], x[1] - p.centre[1]);
                let q = p.precision[0] * dx * dx + 2.0 * p.precision[1] * dx * dy + p.precision[2] * dy * dy;
                p.amplitude * (-0.5 * q).exp()
            })
            .sum()
    }

    fn sigmoid(&self, h: f64) -> f64 {
        1.0 / (1.0 + (-self.gamma * (h - self.offset)).exp())
    }

    /// f*(x) ∈ [−1, 1].
    pub fn eval(&self, x: &[f64]) -> f64 {
        let g = self.sigmoid(self.h(x));
        let span = (self.g_max - self.g_min).max(f64::MIN_POSITIVE);
        (2.0 * (g - self.g_min) / span - 1.0).clamp(-1.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn field_spans_minus_one_to_one_with_the_quantile_split() {
        let cfg = PlumeConfig { reference_grid: 60, ..PlumeConfig::default() };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        for _ in 0..5 {
            let f = PlumeField::sample(&cfg, &mut rng);
            let vals: Vec<f64> =
                (0..60 * 60).map(|k| f.eval(&[(k % 60) as f64 / 59.0, (k / 60) as f64 / 59.0])).collect();
            let (lo, hi) = vals.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(*v), b.max(*v)));
            assert!((lo + 1.0).abs() < 1e-12 && (hi - 1.0).abs() < 1e-12, "{lo} {hi}");
            // About 35% of the square lies above the sigmoid centre (f* > level of g at h = b).
            let g_mid = 2.0 * (0.5 - f.g_min) / (f.g_max - f.g_min) - 1.0;
            let above = vals.iter().filter(|v| **v > g_mid).count() as f64 / vals.len() as f64;
            assert!((above - 0.35).abs() < 0.02, "{above}");
            assert!(f.eval(&[5.0, -3.0]).abs() <= 1.0);
        }
    }
}
