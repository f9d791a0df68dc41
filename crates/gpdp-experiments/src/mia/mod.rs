//! The membership-inference attack of the paper's §4 and Appendix C
//! (docs/experiments.md §1): a LiRA-style likelihood-ratio test of whether the target
//! record z₀ = (x₀, y₀) was in the training set, given L released posterior
//! draws at x₀, on the 1-D exponential-kernel model; its non-private
//! benchmark; and the (ε, δ) the accountant assigns to the same release.
//!
//! Pipeline of one repetition ([`run_mia`]):
//!
//! 1. [`stats::simulate`] shadow and evaluation datasets under H_in and
//!    H_out ([`data`]), with the exact posterior at x₀ in O(n)
//!    ([`posterior1d`]) and the released statistics f̂ and v̂;
//! 2. fit the density of f̂ under each hypothesis with the latent tanh
//!    mixture ([`latent`]) and that of log v̂ with a Gaussian mixture
//!    ([`gmm`]);
//! 3. score the evaluation sets with S = S_f + S_v,
//!    S_· = log ρ_in − log ρ_out, and evaluate ROC, AUC and TPR at fixed
//!    FPR ([`roc`]);
//! 4. the same with the exact (μ_D(x₀), v_D(x₀)) for the non-private benchmark.
//!
//! Everything is pure computation (no output, no files) and deterministic
//! for a seed regardless of the number of rayon threads.

// `!(x > 0.0)` is deliberate throughout: unlike `x <= 0.0` it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod config;
pub mod data;
pub mod gmm;
pub mod latent;
pub mod numeric;
pub mod optim;
pub mod posterior1d;
pub mod roc;
pub mod run;
pub mod stats;

pub use config::{Design, FitOptions, MiaConfig};
pub use gmm::{Gmm2, GmmFit};
pub use latent::{LatentFit, LatentTanhMixture, fit_latent};
pub use roc::{AttackMetrics, Roc, TprAtFpr};
pub use run::{
    DensityCurve, FirstRepeat, LevelSummary, MeanSd, MiaResult, NonPrivateModels, RepeatResult, Summary, SweepRow,
    SweepSpec, release_privacy, run_mia, sweep, sweep_configs, sweep_shard,
};
pub use stats::SampleSet;
