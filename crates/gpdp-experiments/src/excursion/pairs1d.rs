//! The (D, f*) pairs of the 1-D excursion study (the paper's App. D,
//! eq. (8); docs/experiments.md) and their exact posteriors.
//!
//! For pair j, on Ω = [0, 1] with a mesh of m equally spaced points
//! (0 and 1 included, trapezoid weights):
//!
//! ```text
//! x_1..x_n  i.i.d. Unif[0, 1]
//! f̃ ~ GP(0, exp(−|x − x'|/ℓ_gen)), drawn exactly and jointly on mesh ∪ {x_i}
//! f* = (1 − M_ξ)·f̃ / ‖f̃‖_∞          (sup over mesh ∪ {x_i})
//! y_i = f*(x_i) + ξ_i,  ξ_i ~ Unif[−M_ξ, M_ξ]   ⇒ |y_i| ≤ 1 = M_Y
//! s*(x) = 1{f*(x) ≥ t} on the mesh
//! ```
//!
//! Taking the sup-norm over the covariates as well as the mesh makes
//! |y| ≤ M_Y = 1 hold exactly, as the privacy bound requires (the authors'
//! later script does the same; their first used the mesh only). One
//! ChaCha20 stream per pair draws the covariates, then f̃, then ξ, so pairs
//! with the same seed and n share X and f̃ across noise levels.
//!
//! Optionally ([`TargetRejection`], off by default; the paper does not
//! mention it), f̃ is redrawn with the covariates fixed until the truth has a
//! non-degenerate excursion set, as the authors' `--target-reject` option
//! does.
//!
//! Posteriors use [`gpdp::nonprivate::Markov1d`] (exact Kalman smoothing of the
//! Ornstein–Uhlenbeck state-space form, O(n + m) per (ℓ, r)).

use std::sync::Mutex;

use gpdp::ReleaseRng;
use gpdp::nonprivate::{Markov1d, prior_sample};
use gpdp::postprocess::metrics::trapezoid_weights;
use rayon::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result, invalid};

/// The evaluation mesh on [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mesh1d {
    /// x_k = k/(m − 1), k = 0..m.
    pub points: Vec<f64>,
    /// Trapezoid weights (sum 1).
    pub weights: Vec<f64>,
}

impl Mesh1d {
    /// m ≥ 2 equally spaced points including 0 and 1.
    pub fn new(m: usize) -> Result<Self> {
        if m < 2 {
            return Err(invalid("mesh points m", m as f64, "at least 2"));
        }
        let points = (0..m).map(|k| k as f64 / (m - 1) as f64).collect();
        Ok(Mesh1d { points, weights: trapezoid_weights(m, 0.0, 1.0)? })
    }

    /// Number of points m.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Never true (m ≥ 2).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

/// The authors' optional rejection of degenerate targets: f̃ is redrawn
/// (covariates fixed) until the true excursion set on the mesh has
/// trapezoid volume in [`min_volume`, `max_volume`], at most
/// `max_components` connected components and mean component width
/// (volume / components) ≥ `min_mean_width`, for at most `max_tries` draws.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetRejection {
    /// Smallest accepted volume of {f* ≥ t}.
    pub min_volume: f64,
    /// Largest accepted volume.
    pub max_volume: f64,
    /// Most accepted connected components.
    pub max_components: usize,
    /// Smallest accepted mean component width.
    pub min_mean_width: f64,
    /// Draws of f̃ before giving up.
    pub max_tries: usize,
}

impl Default for TargetRejection {
    /// The authors' values: volume in [0.1, 0.9], ≤ 13 components, mean
    /// width ≥ 0.05, 10 000 tries.
    fn default() -> Self {
        TargetRejection {
            min_volume: 0.1,
            max_volume: 0.9,
            max_components: 13,
            min_mean_width: 0.05,
            max_tries: 10_000,
        }
    }
}

impl TargetRejection {
    /// Whether a truth s* on the mesh (weights `w`) is accepted.
    pub fn accepts(&self, truth: &[bool], w: &[f64]) -> bool {
        let volume: f64 = truth.iter().zip(w).filter(|(s, _)| **s).map(|(_, w)| w).sum();
        let components = truth.iter().enumerate().filter(|&(k, &s)| s && (k == 0 || !truth[k - 1])).count();
        volume >= self.min_volume
            && volume <= self.max_volume
            && components >= 1
            && components <= self.max_components
            && volume / components as f64 >= self.min_mean_width
    }

    fn validate(&self) -> Result<()> {
        if !(self.min_volume >= 0.0 && self.min_volume <= self.max_volume && self.max_volume <= 1.0) {
            return Err(invalid("target volume range", self.min_volume, "0 ≤ min ≤ max ≤ 1"));
        }
        if !(self.min_mean_width >= 0.0) {
            return Err(invalid("minimum mean component width", self.min_mean_width, "≥ 0"));
        }
        if self.max_tries < 1 || self.max_components < 1 {
            return Err(invalid(
                "rejection tries and components",
                self.max_tries.min(self.max_components) as f64,
                "≥ 1",
            ));
        }
        Ok(())
    }
}

/// How pairs are generated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairSpec {
    /// Training-set size n ≥ 1.
    pub n: usize,
    /// Noise bound M_ξ ∈ [0, 1).
    pub noise: f64,
    /// Lengthscale ℓ_gen > 0 of the generating kernel.
    pub generating_lengthscale: f64,
    /// Excursion level t.
    pub level: f64,
    /// Optional rejection of degenerate targets (the authors' option).
    pub rejection: Option<TargetRejection>,
}

impl PairSpec {
    /// Checks the ranges above.
    pub fn validate(&self) -> Result<()> {
        if self.n < 1 {
            return Err(invalid("training-set size n", self.n as f64, "at least 1"));
        }
        if !(self.noise >= 0.0 && self.noise < 1.0) {
            return Err(invalid("noise bound M_ξ", self.noise, "in [0, 1)"));
        }
        if !(self.generating_lengthscale > 0.0 && self.generating_lengthscale.is_finite()) {
            return Err(invalid("generating lengthscale ℓ_gen", self.generating_lengthscale, "a finite number > 0"));
        }
        if !self.level.is_finite() {
            return Err(invalid("excursion level t", self.level, "finite"));
        }
        if let Some(r) = &self.rejection {
            r.validate()?;
        }
        Ok(())
    }
}

/// One (D, f*) pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair1d {
    /// Covariates x_i (unsorted, in draw order).
    pub x: Vec<f64>,
    /// Responses y_i, |y_i| ≤ 1.
    pub y: Vec<f64>,
    /// f* on the mesh.
    pub field: Vec<f64>,
    /// f* at the covariates.
    pub field_at_x: Vec<f64>,
    /// s* = 1{f* ≥ t} on the mesh.
    pub truth: Vec<bool>,
}

/// Draws one pair from its own seeded stream.
pub fn generate_pair(spec: &PairSpec, mesh: &Mesh1d, seed: u64) -> Result<Pair1d> {
    spec.validate()?;
    let mut rng = ReleaseRng::seeded(seed);
    let x: Vec<f64> = (0..spec.n).map(|_| rng.uniform()).collect();
    let mut points = mesh.points.clone();
    points.extend_from_slice(&x);
    let tries = spec.rejection.map_or(1, |r| r.max_tries);
    let mut accepted = None;
    for _ in 0..tries {
        let raw = prior_sample(&points, spec.generating_lengthscale, &mut rng)?;
        let sup = raw.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        // sup = 0 has probability zero; keep f* = 0 rather than divide by it.
        let factor = if sup > 0.0 { (1.0 - spec.noise) / sup } else { 0.0 };
        let f: Vec<f64> = raw.iter().map(|v| v * factor).collect();
        let truth: Vec<bool> = f[..mesh.len()].iter().map(|&v| v >= spec.level).collect();
        if spec.rejection.is_none_or(|r| r.accepts(&truth, &mesh.weights)) {
            accepted = Some((f, truth));
            break;
        }
    }
    let Some((f, truth)) = accepted else {
        return Err(Error::Generation(format!(
            "no target f* met the rejection rule in {tries} draws (seed {seed}); relax the rule"
        )));
    };
    let (field, field_at_x) = (f[..mesh.len()].to_vec(), f[mesh.len()..].to_vec());
    let y = field_at_x
        .iter()
        .map(|&fx| {
            let xi = spec.noise * (2.0 * rng.uniform() - 1.0);
            // |fx| ≤ 1 − M_ξ and |ξ| ≤ M_ξ: the clamp only removes rounding.
            (fx + xi).clamp(-1.0, 1.0)
        })
        .collect();
    Ok(Pair1d { x, y, field, field_at_x, truth })
}

/// The seed of pair j of a set whose first pair has seed `base`:
/// base + 10007·j (wrapping). 10007 is prime, so the sets used by a study
/// (bases differing by multiples of 10⁷) never share a seed.
pub fn pair_seed(base: u64, j: usize) -> u64 {
    base.wrapping_add(10007u64.wrapping_mul(j as u64))
}

/// A set of pairs on one mesh with one reusable Kalman smoother per pair.
#[derive(Debug)]
pub struct PairSet1d {
    /// The mesh.
    pub mesh: Mesh1d,
    /// The pairs.
    pub pairs: Vec<Pair1d>,
    /// The generating spec.
    pub spec: PairSpec,
    smoothers: Vec<Mutex<Markov1d>>,
}

impl PairSet1d {
    /// `count` pairs with seeds [`pair_seed`]`(base, j)`, generated in
    /// parallel (the result does not depend on the number of threads).
    pub fn generate(spec: &PairSpec, mesh: &Mesh1d, count: usize, base: u64) -> Result<Self> {
        let pairs: Vec<Pair1d> =
            (0..count).into_par_iter().map(|j| generate_pair(spec, mesh, pair_seed(base, j))).collect::<Result<_>>()?;
        Self::from_pairs(*spec, mesh.clone(), pairs)
    }

    /// Wraps given pairs (all on `mesh`).
    pub fn from_pairs(spec: PairSpec, mesh: Mesh1d, pairs: Vec<Pair1d>) -> Result<Self> {
        let smoothers =
            pairs.iter().map(|p| Ok(Mutex::new(Markov1d::new(&p.x, &mesh.points)?))).collect::<Result<Vec<_>>>()?;
        Ok(PairSet1d { mesh, pairs, spec, smoothers })
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when there are no pairs.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    fn smoother(&self, j: usize) -> std::sync::MutexGuard<'_, Markov1d> {
        // A poisoned lock only means another thread panicked mid-update; the
        // smoother's workspace is rewritten by every call, so it is still usable.
        self.smoothers[j].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// μ_D and k_D(x, x) (normalised, σ = 1) on the mesh for pair j.
    pub fn posterior(&self, j: usize, lengthscale: f64, ridge: f64) -> Result<(Vec<f64>, Vec<f64>)> {
        Ok(self.smoother(j).posterior(&self.pairs[j].y, lengthscale, ridge)?)
    }

    /// `count` exact joint draws of GP(μ_D, k_D) on the mesh for pair j
    /// (normalised: the released path at scale σ is μ_D + σ·(draw − μ_D)).
    pub fn sample(
        &self,
        j: usize,
        lengthscale: f64,
        ridge: f64,
        count: usize,
        rng: &mut ReleaseRng,
    ) -> Result<Vec<Vec<f64>>> {
        Ok(self.smoother(j).sample_posterior(&self.pairs[j].y, lengthscale, ridge, count, rng)?)
    }

    /// d_eff = tr(K(K + r²I)⁻¹) for pair j, in O(n): since
    /// K − K(K + r²I)⁻¹K = r²·K(K + r²I)⁻¹, d_eff = Σ_i k_D(x_i, x_i)/r², the
    /// posterior variances at the covariates.
    pub fn effective_dimension(&self, j: usize, lengthscale: f64, ridge: f64) -> Result<f64> {
        let p = &self.pairs[j];
        let mut mk = Markov1d::new(&p.x, &p.x)?;
        let (_, var) = mk.posterior(&p.y, lengthscale, ridge)?;
        Ok(var.iter().sum::<f64>() / (ridge * ridge))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpdp::{Dataset, Kernel, Points, Posterior};

    fn spec(n: usize, noise: f64) -> PairSpec {
        PairSpec { n, noise, generating_lengthscale: 1.0, level: 0.0, rejection: None }
    }

    #[test]
    fn pairs_are_bounded_rescaled_deterministic() {
        let mesh = Mesh1d::new(200).unwrap();
        assert_eq!(mesh.points[0], 0.0);
        assert_eq!(mesh.points[199], 1.0);
        assert!((mesh.weights.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        for noise in [0.0, 0.1, 0.5, 0.9] {
            let set = PairSet1d::generate(&spec(30, noise), &mesh, 8, 17).unwrap();
            for p in &set.pairs {
                let sup = p.field.iter().chain(&p.field_at_x).fold(0.0f64, |a, v| a.max(v.abs()));
                assert!((sup - (1.0 - noise)).abs() < 1e-14, "sup-norm {sup}");
                assert!(p.y.iter().all(|v| v.abs() <= 1.0));
                assert!(p.x.iter().all(|v| (0.0..1.0).contains(v)));
                for (fx, y) in p.field_at_x.iter().zip(&p.y) {
                    assert!((y - fx).abs() <= noise + 1e-15);
                }
                for (f, s) in p.field.iter().zip(&p.truth) {
                    assert_eq!(*s, *f >= 0.0);
                }
            }
        }
        let a = generate_pair(&spec(30, 0.3), &mesh, 5).unwrap();
        assert_eq!(a, generate_pair(&spec(30, 0.3), &mesh, 5).unwrap());
        assert_ne!(a, generate_pair(&spec(30, 0.3), &mesh, 6).unwrap());
        // Same X and shape of f̃ across noise levels.
        let b = generate_pair(&spec(30, 0.6), &mesh, 5).unwrap();
        assert_eq!(a.x, b.x);
        assert!((a.field[10] / 0.7 - b.field[10] / 0.4).abs() < 1e-12);
        // Thread count does not matter.
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let serial = one.install(|| PairSet1d::generate(&spec(30, 0.3), &mesh, 8, 17).unwrap());
        assert_eq!(serial.pairs, PairSet1d::generate(&spec(30, 0.3), &mesh, 8, 17).unwrap().pairs);
        assert!(generate_pair(&spec(30, 1.0), &mesh, 5).is_err());
        assert!(Mesh1d::new(1).is_err());
    }

    #[test]
    fn target_rejection_rule() {
        let w = trapezoid_weights(11, 0.0, 1.0).unwrap(); // 0.05 at the ends, 0.1 inside
        let r = TargetRejection::default();
        let set = |v: &[usize]| (0..11).map(|k| v.contains(&k)).collect::<Vec<bool>>();
        assert!(r.accepts(&set(&[3, 4, 5, 6]), &w)); // volume 0.4, 1 component
        assert!(!r.accepts(&set(&[]), &w)); // empty
        assert!(!r.accepts(&set(&(0..11).collect::<Vec<_>>()), &w)); // volume 1
        assert!(!r.accepts(&set(&[0]), &w)); // volume 0.05 < 0.1
        // 0.3 in 3 components of width 0.1 ≥ 0.05: accepted; with a 0.15
        // minimum width it is not.
        assert!(r.accepts(&set(&[1, 4, 7]), &w));
        assert!(!TargetRejection { min_mean_width: 0.15, ..r }.accepts(&set(&[1, 4, 7]), &w));
        assert!(!TargetRejection { max_components: 2, ..r }.accepts(&set(&[1, 4, 7]), &w));
        // Generated pairs satisfy the rule, and differ from unrejected ones
        // only in f̃ (same covariates).
        let mesh = Mesh1d::new(200).unwrap();
        let spec_r = PairSpec { rejection: Some(r), ..spec(20, 0.5) };
        for seed in 0..20 {
            let p = generate_pair(&spec_r, &mesh, seed).unwrap();
            assert!(r.accepts(&p.truth, &mesh.weights));
            assert_eq!(p.x, generate_pair(&spec(20, 0.5), &mesh, seed).unwrap().x);
        }
        let impossible = TargetRejection { min_volume: 0.5, max_volume: 0.5, max_tries: 3, ..r };
        let e = generate_pair(&PairSpec { rejection: Some(impossible), ..spec(20, 0.5) }, &mesh, 1).unwrap_err();
        assert!(matches!(e, Error::Generation(_)));
    }

    #[test]
    fn effective_dimension_equals_dense_trace() {
        let mesh = Mesh1d::new(50).unwrap();
        let set = PairSet1d::generate(&spec(40, 0.5), &mesh, 2, 3).unwrap();
        for j in 0..2 {
            for (l, r) in [(0.2, 0.1), (1.0, 2.0), (0.08, 0.5)] {
                let p = &set.pairs[j];
                let d = Dataset::new(Points::from_1d(&p.x), p.y.clone()).unwrap();
                let dense = Posterior::fit(Kernel::exponential(l).unwrap(), &d, r).unwrap().effective_dimension();
                let ours = set.effective_dimension(j, l, r).unwrap();
                assert!((ours - dense).abs() < 1e-9 * dense.max(1.0), "ℓ={l} r={r}: {ours} vs {dense}");
            }
        }
    }
}
