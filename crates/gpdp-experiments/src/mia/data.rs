//! The attack's data model (docs/experiments.md §1, paper App. C) and its random streams.
//!
//! Ω = [0, 1]; responses y = (1 − M_ξ)·f_step(x) + ξ with
//! f_step(x) = −1 for x < ½ and +1 otherwise, ξ ~ Unif[−M_ξ, M_ξ].
//! Under H_in a dataset is the target z₀ = (x₀, y₀) followed by n − 1 fresh
//! records; under H_out it is n fresh records. The target's response is
//! used as given (no label noise is added to it: z₀ is one fixed record;
//! the authors' code adds noise to y₀ too, which matters only if M_ξ > 0).
//!
//! **Streams.** Every dataset has its own ChaCha8 stream, keyed by
//! (seed, repetition) and numbered by (sample set, index): results do not
//! depend on how the work is split between threads. Within a stream the
//! covariates come first, then the label noise (only drawn if M_ξ > 0),
//! then the L standard normals of the release; so for a given seed the
//! datasets are the same whatever σ and L are (common random numbers
//! across a sweep).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::config::{Design, MiaConfig};

/// Membership hypothesis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hypothesis {
    /// The target z₀ is in the training set.
    In,
    /// It is not.
    Out,
}

/// The four independent sample sets of one repetition, plus the streams of
/// the density fits' random restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Shadow datasets under H_in.
    ShadowIn = 0,
    /// Shadow datasets under H_out.
    ShadowOut = 1,
    /// Evaluation datasets under H_in.
    EvalIn = 2,
    /// Evaluation datasets under H_out.
    EvalOut = 3,
    /// Restart jitter of the in-density fit.
    FitIn = 4,
    /// Restart jitter of the out-density fit.
    FitOut = 5,
}

/// SplitMix64 step (Steele, Lea & Flood 2014): a bijective 64-bit mixer.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The ChaCha8 key of repetition `repeat` under master seed `seed`.
pub fn repeat_key(seed: u64, repeat: u64) -> [u8; 32] {
    let mut st = seed ^ 0x6770_6470_2d6d_6961; // "gpdp-mia"
    let a = splitmix(&mut st);
    let mut st2 = a ^ repeat.wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut key = [0u8; 32];
    for chunk in key.chunks_exact_mut(8) {
        chunk.copy_from_slice(&splitmix(&mut st2).to_le_bytes());
    }
    key
}

/// The random stream of item `index` of `stream` under `key`.
pub fn item_rng(key: &[u8; 32], stream: Stream, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::from_seed(*key);
    rng.set_stream(((stream as u64) << 56) | (index & ((1 << 56) - 1)));
    rng
}

/// The data-generating process of one study.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataModel {
    /// Dataset size n ≥ 2.
    pub n: usize,
    /// M_ξ ∈ [0, 1).
    pub label_noise: f64,
    /// x₀.
    pub target_x: f64,
    /// y₀.
    pub target_y: f64,
    /// Covariate design.
    pub design: Design,
}

impl DataModel {
    /// The data model of a (validated) configuration.
    pub fn from_config(cfg: &MiaConfig) -> Self {
        DataModel {
            n: cfg.n,
            label_noise: cfg.label_noise,
            target_x: cfg.target_x,
            target_y: cfg.target_y,
            design: cfg.design,
        }
    }

    /// f_step(x) = −1 for x < ½, +1 otherwise.
    pub fn step(x: f64) -> f64 {
        if x < 0.5 { -1.0 } else { 1.0 }
    }

    /// Fills `x` and `y` (both of length n) with one dataset under `h`. Under
    /// H_in the target is record 0. Draws covariates, then label noise (if
    /// M_ξ > 0), from `rng`.
    pub fn sample<R: RngExt>(&self, h: Hypothesis, rng: &mut R, x: &mut [f64], y: &mut [f64]) {
        debug_assert!(x.len() == self.n && y.len() == self.n);
        let first = match h {
            Hypothesis::In => {
                x[0] = self.target_x;
                1
            }
            Hypothesis::Out => 0,
        };
        let left = self.n / 2;
        for (k, xi) in x[first..].iter_mut().enumerate() {
            let u: f64 = rng.random();
            *xi = match self.design {
                Design::Uniform => u,
                Design::Stratified if k < left => 0.5 * u,
                Design::Stratified => 0.5 + 0.5 * u,
            };
        }
        let a = 1.0 - self.label_noise;
        for (i, (xi, yi)) in x.iter().zip(y.iter_mut()).enumerate() {
            if i < first {
                *yi = self.target_y;
                continue;
            }
            let noise = if self.label_noise > 0.0 {
                let u: f64 = rng.random();
                self.label_noise * (2.0 * u - 1.0)
            } else {
                0.0
            };
            *yi = a * Self::step(*xi) + noise;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(design: Design, noise: f64) -> DataModel {
        DataModel { n: 10, label_noise: noise, target_x: 0.5, target_y: 1.0, design }
    }

    #[test]
    fn h_in_contains_the_target_and_h_out_rarely_does() {
        let m = model(Design::Uniform, 0.0);
        let key = repeat_key(7, 0);
        let (mut x, mut y) = (vec![0.0; 10], vec![0.0; 10]);
        for i in 0..200 {
            m.sample(Hypothesis::In, &mut item_rng(&key, Stream::ShadowIn, i), &mut x, &mut y);
            assert_eq!((x[0], y[0]), (0.5, 1.0));
            m.sample(Hypothesis::Out, &mut item_rng(&key, Stream::ShadowOut, i), &mut x, &mut y);
            assert!(!x.iter().zip(&y).any(|(&a, &b)| a == 0.5 && b == 1.0));
            assert!(x.iter().all(|&v| (0.0..1.0).contains(&v)));
        }
    }

    #[test]
    fn stratified_counts() {
        for n in [2usize, 3, 10, 11] {
            let m = DataModel { n, ..model(Design::Stratified, 0.0) };
            let key = repeat_key(1, 2);
            let (mut x, mut y) = (vec![0.0; n], vec![0.0; n]);
            for i in 0..50 {
                m.sample(Hypothesis::Out, &mut item_rng(&key, Stream::EvalOut, i), &mut x, &mut y);
                assert_eq!(x.iter().filter(|&&v| v < 0.5).count(), n / 2);
                m.sample(Hypothesis::In, &mut item_rng(&key, Stream::EvalIn, i), &mut x, &mut y);
                assert_eq!(x[0], 0.5);
                // The target is placed first; n − 1 fresh points follow, ⌊n/2⌋ on the left.
                assert_eq!(x[1..].iter().filter(|&&v| v < 0.5).count(), n / 2);
                assert_eq!(x[1..].iter().filter(|&&v| v >= 0.5).count(), n - 1 - n / 2);
            }
        }
    }

    #[test]
    fn labels_follow_the_step_with_bounded_noise() {
        let m = model(Design::Uniform, 0.3);
        let key = repeat_key(3, 0);
        let (mut x, mut y) = (vec![0.0; 10], vec![0.0; 10]);
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..2000 {
            m.sample(Hypothesis::Out, &mut item_rng(&key, Stream::ShadowOut, i), &mut x, &mut y);
            for (&xi, &yi) in x.iter().zip(&y) {
                let xi_noise = yi - 0.7 * DataModel::step(xi);
                assert!(xi_noise.abs() <= 0.3 + 1e-15, "{xi} {yi}");
                assert!(yi.abs() <= 1.0);
                lo = lo.min(xi_noise);
                hi = hi.max(xi_noise);
            }
        }
        // The noise fills its range.
        assert!(lo < -0.29 && hi > 0.29, "{lo} {hi}");
        // Noise-free: y is exactly ±1.
        let m0 = model(Design::Uniform, 0.0);
        m0.sample(Hypothesis::Out, &mut item_rng(&key, Stream::ShadowOut, 0), &mut x, &mut y);
        for (&xi, &yi) in x.iter().zip(&y) {
            assert_eq!(yi, DataModel::step(xi));
        }
    }

    #[test]
    fn streams_are_distinct_and_reproducible() {
        let key = repeat_key(0, 0);
        let a: f64 = item_rng(&key, Stream::ShadowIn, 5).random();
        let b: f64 = item_rng(&key, Stream::ShadowIn, 5).random();
        let c: f64 = item_rng(&key, Stream::ShadowOut, 5).random();
        let d: f64 = item_rng(&repeat_key(0, 1), Stream::ShadowIn, 5).random();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
