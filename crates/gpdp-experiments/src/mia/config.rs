//! The attack's configuration (docs/experiments.md §1) and its validation.

use gpdp::{Conversion, Draws};
use serde::Serialize;

use crate::error::{Error, Result, invalid};

/// How the non-target covariates are drawn on Ω = [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// i.i.d. Unif[0, 1] (the paper's text).
    #[default]
    Uniform,
    /// The authors' code: of the m fresh covariates of a dataset,
    /// ⌊n/2⌋ are Unif[0, ½) and m − ⌊n/2⌋ are Unif[½, 1), where n is the
    /// dataset size. Under H_out m = n; under H_in the target comes first
    /// and m = n − 1, so the right half gets one point fewer.
    Stratified,
}

/// Options of the density fits (the latent tanh mixture for f̂ and the
/// Gaussian mixtures for log v̂ and the non-private statistics).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitOptions {
    /// Starting points of the latent-mixture maximum-likelihood fit (≥ 1).
    pub restarts: usize,
    /// L-BFGS iterations given to every starting point (on an evenly strided
    /// subsample of at most 2000 values) before the best are kept.
    pub screen_iterations: usize,
    /// How many of the screened starts are run to convergence on all the data (≥ 1).
    pub refine: usize,
    /// Iteration cap of a converging L-BFGS run.
    pub max_iterations: usize,
    /// Floor on the latent component standard deviations τ_j (> 0).
    pub min_latent_sd: f64,
    /// Floor on the observation noise standard deviation s (> 0).
    pub min_obs_sd: f64,
    /// Starting points for the plain two-component mixtures (≥ 1).
    pub em_restarts: usize,
    /// Iteration cap of a plain-mixture fit (10 EM iterations, then L-BFGS).
    pub em_max_iterations: usize,
    /// Variance floor of the plain mixtures, relative to the sample variance
    /// (the absolute floor is this times max(sample variance, 1e-12)).
    pub em_variance_floor: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            restarts: 16,
            screen_iterations: 10,
            refine: 2,
            max_iterations: 400,
            min_latent_sd: 1e-3,
            min_obs_sd: 1e-3,
            em_restarts: 6,
            em_max_iterations: 500,
            em_variance_floor: 1e-6,
        }
    }
}

impl FitOptions {
    /// Checks every field.
    pub fn validate(&self) -> Result<()> {
        count("fit.restarts", self.restarts, 1)?;
        count("fit.refine", self.refine, 1)?;
        count("fit.max_iterations", self.max_iterations, 1)?;
        count("fit.em_restarts", self.em_restarts, 1)?;
        count("fit.em_max_iterations", self.em_max_iterations, 1)?;
        for (f, v) in [
            ("fit.min_latent_sd", self.min_latent_sd),
            ("fit.min_obs_sd", self.min_obs_sd),
            ("fit.em_variance_floor", self.em_variance_floor),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(invalid(f, v, "a finite number > 0"));
            }
        }
        Ok(())
    }
}

/// One membership-inference study: the data model, the release, the attack
/// budget and the accountant settings. [`Default`] is the paper's setting
/// with the authors' README example release (r = 0.1, σ = 0.5, L = 3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MiaConfig {
    /// Dataset size n ≥ 2.
    pub n: usize,
    /// Lengthscale ℓ of the kernel exp(−|x − x'|/ℓ).
    pub lengthscale: f64,
    /// Effective ridge r > 0.
    pub ridge: f64,
    /// Kernel scale σ: finite and > 0 (σ = ∞ is refused, see [`MiaConfig::validate`]).
    pub scale: f64,
    /// Number of released posterior draws L.
    pub draws: Draws,
    /// Label-noise bound M_ξ ∈ [0, 1).
    pub label_noise: f64,
    /// Target covariate x₀ ∈ [0, 1].
    pub target_x: f64,
    /// Target response y₀, |y₀| ≤ 1 (= M_Y).
    pub target_y: f64,
    /// Covariate design.
    pub design: Design,
    /// Shadow datasets per hypothesis (≥ 100).
    pub n_shadow: usize,
    /// Evaluation datasets per hypothesis (≥ 100).
    pub n_eval: usize,
    /// Independent repetitions (seeds) of the whole attack (≥ 1).
    pub repeats: usize,
    /// Master seed; repetition k uses the stream derived from (seed, k).
    pub seed: u64,
    /// δ of the reported (ε, δ) guarantee, in (0, 1).
    pub delta: f64,
    /// RDP → (ε, δ) conversion.
    pub conversion: Conversion,
    /// The proven bound of the reported guarantee [tight].
    pub bound: gpdp::BoundChoice,
    /// FPR levels at which TPR is reported, each in (0, 1).
    pub fpr_levels: Vec<f64>,
    /// Points of the fitted-density curves returned for the first repetition (≥ 2).
    pub curve_points: usize,
    /// Density-fit options.
    pub fit: FitOptions,
}

impl Default for MiaConfig {
    fn default() -> Self {
        MiaConfig {
            n: 10,
            lengthscale: 1.0,
            ridge: 0.1,
            scale: 0.5,
            draws: Draws::new(3).expect("3 ≥ 1"),
            label_noise: 0.0,
            target_x: 0.5,
            target_y: 1.0,
            design: Design::Uniform,
            n_shadow: 10_000,
            n_eval: 10_000,
            repeats: 10,
            seed: 0,
            delta: 0.05,
            conversion: Conversion::Improved,
            bound: gpdp::BoundChoice::Tight,
            fpr_levels: vec![0.1, 0.01],
            curve_points: 800,
            fit: FitOptions::default(),
        }
    }
}

/// Smallest admissible shadow and evaluation counts.
pub const MIN_SAMPLES: usize = 100;

fn count(field: &'static str, v: usize, min: usize) -> Result<()> {
    if v >= min {
        Ok(())
    } else {
        Err(Error::InvalidConfig {
            field,
            value: v.to_string(),
            requirement: match min {
                1 => ">= 1",
                2 => ">= 2",
                _ => ">= 100",
            },
        })
    }
}

fn positive(field: &'static str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 { Ok(()) } else { Err(invalid(field, v, "a finite number > 0")) }
}

impl MiaConfig {
    /// Checks every field; the error names the first offending one.
    ///
    /// σ = ∞ (a covariance-only release) is refused here: the released values
    /// f⁽ˡ⁾ = μ + σ√v·Z are then undefined. The accountant
    /// (`gpdp::ReleaseParams`) still accepts it.
    pub fn validate(&self) -> Result<()> {
        count("n", self.n, 2)?;
        positive("lengthscale ℓ", self.lengthscale)?;
        positive("ridge r", self.ridge)?;
        if self.scale == f64::INFINITY {
            return Err(invalid(
                "scale σ",
                self.scale,
                "finite for the attack (σ = inf makes f = μ + σ√v·Z undefined; the accountant accepts it)",
            ));
        }
        positive("scale σ", self.scale)?;
        self.draws.to_usize()?;
        if !(self.label_noise >= 0.0 && self.label_noise < 1.0) {
            return Err(invalid("label noise M_ξ", self.label_noise, "in [0, 1)"));
        }
        if !(self.target_x >= 0.0 && self.target_x <= 1.0) {
            return Err(invalid("target x₀", self.target_x, "in [0, 1]"));
        }
        if !(self.target_y.abs() <= 1.0) {
            return Err(invalid("target y₀", self.target_y, "in [-1, 1] (|y₀| <= M_Y = 1)"));
        }
        count("n_shadow", self.n_shadow, MIN_SAMPLES)?;
        count("n_eval", self.n_eval, MIN_SAMPLES)?;
        count("repeats", self.repeats, 1)?;
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(invalid("δ", self.delta, "in the open interval (0, 1)"));
        }
        if self.fpr_levels.is_empty() {
            return Err(Error::InvalidConfig { field: "fpr_levels", value: "[]".into(), requirement: "non-empty" });
        }
        for &a in &self.fpr_levels {
            if !(a > 0.0 && a < 1.0) {
                return Err(invalid("fpr_levels", a, "in the open interval (0, 1)"));
            }
        }
        count("curve_points", self.curve_points, 2)?;
        self.fit.validate()?;
        self.check_resources(1)
    }

    /// Refuses `configs` runs of this attack that would not fit in memory or
    /// would run for more than a week: each repetition simulates
    /// 2·(n_shadow + n_eval) datasets of n records and L draws (four numbers
    /// kept per dataset, n covariates per thread while simulating).
    pub fn check_resources(&self, configs: usize) -> Result<()> {
        let datasets = 2.0 * (self.n_shadow as f64 + self.n_eval as f64);
        let threads = rayon::current_num_threads().max(1) as f64;
        gpdp::check_memory(
            "this attack",
            &[
                gpdp::Need::doubles("the released statistics (4 per simulated dataset)", 4.0 * datasets),
                gpdp::Need::doubles("each thread's simulated dataset (2 × n)", 2.0 * self.n as f64 * threads),
            ],
            "use fewer shadow or evaluation datasets (--shadow, --eval) or a smaller n",
        )?;
        let units = configs as f64 * self.repeats as f64 * datasets * (self.n as f64 + self.draws.as_f64());
        gpdp::check_work("this attack", units, 5e7, "use fewer draws, datasets, repeats or configurations")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(c: &MiaConfig) -> &'static str {
        match c.validate() {
            Err(Error::InvalidConfig { field, .. }) => field,
            other => panic!("expected InvalidConfig, got {other:?}"),
        }
    }

    #[test]
    fn default_is_valid() {
        MiaConfig::default().validate().unwrap();
    }

    #[test]
    fn each_bad_field_is_named() {
        let d = MiaConfig::default();
        let cases: Vec<(MiaConfig, &str)> = vec![
            (MiaConfig { n: 1, ..d.clone() }, "n"),
            (MiaConfig { ridge: 0.0, ..d.clone() }, "ridge r"),
            (MiaConfig { ridge: -1.0, ..d.clone() }, "ridge r"),
            (MiaConfig { scale: 0.0, ..d.clone() }, "scale σ"),
            (MiaConfig { scale: f64::NAN, ..d.clone() }, "scale σ"),
            (MiaConfig { scale: f64::INFINITY, ..d.clone() }, "scale σ"),
            (MiaConfig { label_noise: 1.0, ..d.clone() }, "label noise M_ξ"),
            (MiaConfig { label_noise: -0.1, ..d.clone() }, "label noise M_ξ"),
            (MiaConfig { target_x: 1.5, ..d.clone() }, "target x₀"),
            (MiaConfig { target_x: f64::NAN, ..d.clone() }, "target x₀"),
            (MiaConfig { target_y: -1.01, ..d.clone() }, "target y₀"),
            (MiaConfig { n_shadow: 99, ..d.clone() }, "n_shadow"),
            (MiaConfig { n_eval: 10, ..d.clone() }, "n_eval"),
            (MiaConfig { repeats: 0, ..d.clone() }, "repeats"),
            (MiaConfig { delta: 1.0, ..d.clone() }, "δ"),
            (MiaConfig { lengthscale: 0.0, ..d.clone() }, "lengthscale ℓ"),
            (MiaConfig { fpr_levels: vec![0.0], ..d.clone() }, "fpr_levels"),
        ];
        for (c, want) in cases {
            assert_eq!(field_of(&c), want, "{c:?}");
        }
        let e = MiaConfig { scale: f64::INFINITY, ..d }.validate().unwrap_err().to_string();
        assert!(e.contains("accountant accepts it"), "{e}");
    }
}
