//! The released statistics at x₀ (paper eq. 21 and App. C) for many
//! simulated datasets.
//!
//! For a dataset D the release is L draws f⁽ˡ⁾ = μ_D(x₀) + σ·√v_D(x₀)·Z_l,
//! Z_l ~ N(0, 1) i.i.d., and the attacker's statistics are
//!
//! ```text
//! f̂ = (1/L)·Σ f⁽ˡ⁾ = μ + σ√v·Z̄,
//! v̂ = (1/(L·σ²))·Σ (f⁽ˡ⁾ − f̂)² = v·(1/L)·Σ (Z_l − Z̄)²   (L ≥ 2)
//! ```
//!
//! The right-hand forms are the same random variables computed without
//! the cancellation μ + σ√v·Z_l − f̂ (Z̄ and Σ(Z_l − Z̄)² by Welford's
//! recurrence). Alongside, every record keeps the exact μ_D(x₀) and
//! v_D(x₀) — the non-private statistics the release converges to as L → ∞.

use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde::Serialize;

use super::config::MiaConfig;
use super::data::{DataModel, Hypothesis, Stream, item_rng};
use super::posterior1d::{OuWorkspace, posterior_at};

/// The statistics of one sample set (one hypothesis, shadow or evaluation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleSet {
    /// f̂ per dataset.
    pub fhat: Vec<f64>,
    /// log v̂ per dataset; `None` when L = 1.
    pub log_vhat: Option<Vec<f64>>,
    /// Exact μ_D(x₀) per dataset.
    pub mu: Vec<f64>,
    /// Exact v_D(x₀) per dataset.
    pub var: Vec<f64>,
}

impl SampleSet {
    /// Number of datasets.
    pub fn len(&self) -> usize {
        self.fhat.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.fhat.is_empty()
    }
}

/// (f̂, log v̂) from the exact (μ, v), σ and the draws' standard normals
/// `z` (L = z.len() ≥ 1); log v̂ is `None` for L = 1. v̂ is floored at the
/// smallest normal f64 before the logarithm (it is 0 only if all Z_l are
/// equal, an event of probability 0).
pub fn released_stats(mu: f64, v: f64, scale: f64, z: &[f64]) -> (f64, Option<f64>) {
    let (mean, ss) = welford(z.iter().copied());
    let fhat = mu + scale * v.max(0.0).sqrt() * mean;
    let log_vhat = (z.len() >= 2).then(|| (v * ss / z.len() as f64).max(f64::MIN_POSITIVE).ln());
    (fhat, log_vhat)
}

/// (mean, Σ(x − mean)²) by Welford's recurrence.
fn welford(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut mean, mut ss, mut k) = (0.0f64, 0.0f64, 0.0f64);
    for x in xs {
        k += 1.0;
        let d = x - mean;
        mean += d / k;
        ss += d * (x - mean);
    }
    (mean, ss)
}

struct Scratch {
    ou: OuWorkspace,
    x: Vec<f64>,
    y: Vec<f64>,
}

/// Simulates `count` datasets of `stream` (one of the four sample sets)
/// under the repetition key `key`, in parallel; the result does not depend
/// on the number of threads.
pub fn simulate(cfg: &MiaConfig, key: &[u8; 32], stream: Stream, count: usize) -> SampleSet {
    let model = DataModel::from_config(cfg);
    let h = match stream {
        Stream::ShadowIn | Stream::EvalIn | Stream::FitIn => Hypothesis::In,
        _ => Hypothesis::Out,
    };
    let (n, l) = (cfg.n, cfg.draws.get() as usize);
    let rows: Vec<(f64, f64, f64, f64)> = (0..count)
        .into_par_iter()
        .with_min_len(256)
        .map_init(
            || Scratch { ou: OuWorkspace::new(), x: vec![0.0; n], y: vec![0.0; n] },
            |s, i| {
                let mut rng = item_rng(key, stream, i as u64);
                model.sample(h, &mut rng, &mut s.x, &mut s.y);
                let (mu, v) = posterior_at(&s.x, &s.y, cfg.target_x, cfg.lengthscale, cfg.ridge, &mut s.ou);
                let zs = (0..l).map(|_| -> f64 { StandardNormal.sample(&mut rng) });
                let (zbar, ss) = welford(zs);
                let fhat = mu + cfg.scale * v.max(0.0).sqrt() * zbar;
                let lv = if l >= 2 { (v * ss / l as f64).max(f64::MIN_POSITIVE).ln() } else { f64::NAN };
                (fhat, lv, mu, v)
            },
        )
        .collect();
    let mut set = SampleSet {
        fhat: Vec::with_capacity(count),
        log_vhat: (l >= 2).then(|| Vec::with_capacity(count)),
        mu: Vec::with_capacity(count),
        var: Vec::with_capacity(count),
    };
    for (f, lv, mu, v) in rows {
        set.fhat.push(f);
        if let Some(vs) = set.log_vhat.as_mut() {
            vs.push(lv);
        }
        set.mu.push(mu);
        set.var.push(v);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_stats_match_the_definition() {
        let (mu, v, sigma) = (0.3f64, 0.2f64, 1.7f64);
        let z = [0.4, -1.2, 2.0, 0.1];
        let f: Vec<f64> = z.iter().map(|zl| mu + sigma * v.sqrt() * zl).collect();
        let fhat = f.iter().sum::<f64>() / 4.0;
        let vhat = f.iter().map(|fl| (fl - fhat) * (fl - fhat)).sum::<f64>() / (4.0 * sigma * sigma);
        let (a, b) = released_stats(mu, v, sigma, &z);
        assert!((a - fhat).abs() < 1e-15);
        assert!((b.unwrap() - vhat.ln()).abs() < 1e-13);
        assert!(released_stats(mu, v, sigma, &z[..1]).1.is_none());
    }

    #[test]
    fn simulated_statistics_have_the_release_distribution() {
        // Given (μ, v), f̂ − μ ~ N(0, σ²v/L): check the standardised residuals.
        let cfg = MiaConfig { draws: gpdp::Draws::new(4).unwrap(), scale: 2.0, ..MiaConfig::default() };
        let key = super::super::data::repeat_key(5, 0);
        let s = simulate(&cfg, &key, Stream::ShadowOut, 4000);
        let zs: Vec<f64> =
            (0..s.len()).map(|i| (s.fhat[i] - s.mu[i]) / (cfg.scale * (s.var[i] / 4.0).sqrt())).collect();
        let m = zs.iter().sum::<f64>() / zs.len() as f64;
        let var = zs.iter().map(|z| (z - m) * (z - m)).sum::<f64>() / zs.len() as f64;
        assert!(m.abs() < 0.05 && (var - 1.0).abs() < 0.06, "{m} {var}");
        // L·v̂/v ~ χ²_{L−1}: mean L − 1.
        let lv = s.log_vhat.as_ref().unwrap();
        let chi: f64 = (0..s.len()).map(|i| 4.0 * (lv[i] - s.var[i].ln()).exp()).sum::<f64>() / s.len() as f64;
        assert!((chi - 3.0).abs() < 0.1, "{chi}");
        // |μ| ≤ M_Y (Lemma B.6) and 0 < v ≤ 1.
        assert!(s.mu.iter().all(|m| m.abs() <= 1.0) && s.var.iter().all(|&v| v > 0.0 && v <= 1.0));
    }
}
