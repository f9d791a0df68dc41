//! The regret study of private Thompson sampling (`gpdp thompson study`,
//! issue 27, item 3): private Thompson sampling at several total-loop ε
//! against non-private Thompson sampling, GP-UCB and random search, on the
//! test functions of [`functions`] rescaled to be maximised on [0, 1]^d.
//!
//! **Setting.** Per function: a public candidate set C (a regular grid in
//! 1-D and 2-D, the first |C| Halton points in higher dimension, [`candidates`]),
//! n₀ initial records at uniform random points of [0, 1]^d, and T rounds of
//! batch q = 1. Every round chooses one candidate x_t and observes
//! y_t = g(x_t) + N(0, noise²). Every GP method uses the same GP: the
//! Matérn-5/2 kernel with a lengthscale fixed in advance per function (a
//! public choice, [`default_lengthscale`]), scale σ and the responses
//! clipped to [−M_Y, M_Y] with M_Y = 1 (the mechanism's default data policy;
//! GP-UCB clips the same way, so every GP method sees the same data).
//!
//! **Methods** ([`Method`]):
//! - private Thompson sampling at a total-loop ε (δ of the study): the
//!   [`gpdp::thompson::ThompsonSampler`] with the ridge r calibrated by
//!   bisection so that the T-round loop's composed ε
//!   ([`gpdp::thompson::ThompsonConfig::epsilon_after`], n₀ + t − 1 records in
//!   round t) is at most the target ([`calibrate_ridge`]); the ridge used is
//!   max(r_calibrated, noise/σ), so the private loop never assumes less
//!   noise than the observations have (a larger ridge only lowers ε);
//! - non-private Thompson sampling: the same sampler with no budget and
//!   the ridge noise/σ — the ordinary posterior of the GP with prior
//!   variance σ²k and noise variance noise² (the mechanism's posterior is
//!   GP(μ_D, σ²k_D) with A = K + r²I, so r = noise/σ);
//! - GP-UCB (Srinivas et al. 2010) with the same posterior: x_t maximises
//!   μ(x) + √β_t·σ·√k_D(x, x) over C with
//!   β_t = 2·ln(|C|·t²·π²/(6·δ_UCB)) (their Theorem 1 for a finite set);
//! - random search: x_t uniform over C.
//!
//! **Metrics.** With g* = max over C of g (the best the methods can
//! choose) and the noiseless g: simple regret g* − max_{s ≤ t} g(x_s) and
//! cumulative regret Σ_{s ≤ t} (g* − g(x_s)); the initial records do not
//! count. Means and standard errors (sample SD/√seeds) over the seeds
//! ([`curves`]).
//!
//! **Seeding.** Everything is seeded (the loops with `Some(seed)`), so this
//! is a reproducible study of the method, **not** a private release. The
//! streams are keyed by the study's seed, the function (not its position in
//! the list) and the seed index, so the initial data and the observation
//! noise are common to every method of a seed (common random numbers), and
//! a study of fewer functions gives the same curves for those it runs.
//!
//! **Units.** The unit of work is (function, method, seed), functions
//! outermost, then methods ([`ThompsonStudy::methods`]), then seeds
//! ([`ThompsonStudy::units`]); a unit's result depends only on the unit.

pub mod functions;
#[cfg(test)]
mod tests;

use gpdp::thompson::{Goal, ThompsonConfig, ThompsonSampler};
use gpdp::{Dataset, Domain, Kernel, KernelKind, MechanismParams, Points, Posterior, ReleaseParams, ResponseScale};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use functions::{ALL_FUNCTIONS, TestFunction};

use crate::error::{Error, Result, invalid};
use crate::shard::Shard;

/// The bound M_Y of the responses (the mechanism clips beyond it).
pub const RESPONSE_BOUND: f64 = 1.0;

/// The default T of a function: 50 for Forrester, 100 for the others.
pub fn default_rounds(f: TestFunction) -> usize {
    match f {
        TestFunction::Forrester => 50,
        _ => 100,
    }
}

/// The Matérn-5/2 lengthscale of a function on [0, 1]^d, fixed in advance
/// from the function's known shape (not fitted to any observation):
/// Forrester 0.12 (it oscillates with period ≈ 0.52), Branin 0.25,
/// Hartmann-3 0.2, Hartmann-6 0.3.
pub fn default_lengthscale(f: TestFunction) -> f64 {
    match f {
        TestFunction::Forrester => 0.12,
        TestFunction::Branin => 0.25,
        TestFunction::Hartmann3 => 0.2,
        TestFunction::Hartmann6 => 0.3,
    }
}

/// The default n₀ of a function: 2d + 2.
pub fn default_initial(f: TestFunction) -> usize {
    2 * f.dim() + 2
}

/// The regret study's settings: everything that determines its results.
/// The per-function lists (`rounds`, `lengthscales`, `initial`) run
/// parallel to `functions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThompsonStudy {
    /// The test functions, in output order.
    pub functions: Vec<TestFunction>,
    /// Rounds T per function.
    pub rounds: Vec<usize>,
    /// Matérn-5/2 lengthscale ℓ per function (on [0, 1]^d).
    pub lengthscales: Vec<f64>,
    /// Initial records n₀ per function (≥ 2).
    pub initial: Vec<usize>,
    /// Total-loop ε of the private loops, one method each.
    pub epsilons: Vec<f64>,
    /// δ of every private loop.
    pub delta: f64,
    /// Kernel scale σ.
    pub scale: f64,
    /// Observation noise SD (the non-private ridge is noise/σ).
    pub noise: f64,
    /// Seeds per (function, method).
    pub seeds: usize,
    /// Candidates of the 1-D grid (0 and 1 included).
    pub grid_1d: usize,
    /// Candidates per axis of the 2-D grid.
    pub grid_2d: usize,
    /// Halton candidates in 3 or more dimensions.
    pub candidates: usize,
    /// δ_UCB of GP-UCB's β_t.
    pub ucb_delta: f64,
    /// Base seed.
    pub seed: u64,
}

/// One method of the study.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Method {
    /// Private Thompson sampling with this total-loop ε.
    Private {
        /// The target ε of the whole loop.
        epsilon: f64,
    },
    /// Non-private Thompson sampling (ridge noise/σ, no budget).
    Thompson,
    /// Non-private GP-UCB with the same GP.
    Ucb,
    /// Uniform random search over the candidates.
    Random,
}

impl Method {
    /// The method's name in tables and figures.
    pub fn label(&self) -> String {
        match self {
            Method::Private { epsilon } => format!("private TS, ε = {epsilon}"),
            Method::Thompson => "TS (non-private)".into(),
            Method::Ucb => "GP-UCB (non-private)".into(),
            Method::Random => "random search".into(),
        }
    }

    /// The method's name in CSV files.
    pub fn key(&self) -> &'static str {
        match self {
            Method::Private { .. } => "private_ts",
            Method::Thompson => "ts",
            Method::Ucb => "gp_ucb",
            Method::Random => "random",
        }
    }

    /// The target ε of a private loop.
    pub fn epsilon(&self) -> Option<f64> {
        match self {
            Method::Private { epsilon } => Some(*epsilon),
            _ => None,
        }
    }

    /// The method's part of its streams' keys.
    fn stream_key(&self) -> u64 {
        match self {
            Method::Private { epsilon } => epsilon.to_bits(),
            Method::Thompson => 1,
            Method::Ucb => 2,
            Method::Random => 3,
        }
    }
}

/// One unit of work: (function, method, seed), as indices into the study.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    /// Index into `functions`.
    pub function: usize,
    /// The method.
    pub method: Method,
    /// Seed index, 0-based.
    pub seed: usize,
}

impl ThompsonStudy {
    /// The default study of `functions` (the per-function defaults above;
    /// ε ∈ {1, 3, 10} at δ = 10⁻⁵, σ = 0.5, noise 0.1, 20 seeds, 256 and
    /// 32 × 32 grid candidates, 1024 Halton candidates, δ_UCB = 0.1, seed 0).
    pub fn new(functions: Vec<TestFunction>) -> Self {
        ThompsonStudy {
            rounds: functions.iter().map(|&f| default_rounds(f)).collect(),
            lengthscales: functions.iter().map(|&f| default_lengthscale(f)).collect(),
            initial: functions.iter().map(|&f| default_initial(f)).collect(),
            functions,
            epsilons: vec![1.0, 3.0, 10.0],
            delta: 1e-5,
            scale: 0.5,
            noise: 0.1,
            seeds: 20,
            grid_1d: 256,
            grid_2d: 32,
            candidates: 1024,
            ucb_delta: 0.1,
            seed: 0,
        }
    }

    /// Checks every field, naming the first bad one.
    pub fn validate(&self) -> Result<()> {
        if self.functions.is_empty() {
            return Err(Error::InvalidInput { what: "functions", detail: "no test function given".into() });
        }
        for (i, f) in self.functions.iter().enumerate() {
            if self.functions[..i].contains(f) {
                return Err(Error::InvalidInput { what: "functions", detail: format!("{f} is given twice") });
            }
        }
        let k = self.functions.len();
        for (name, len) in
            [("rounds", self.rounds.len()), ("lengthscales", self.lengthscales.len()), ("initial", self.initial.len())]
        {
            if len != k {
                return Err(Error::InvalidInput {
                    what: "thompson study",
                    detail: format!("{name} has {len} value(s) but there are {k} function(s)"),
                });
            }
        }
        for (i, f) in self.functions.iter().enumerate() {
            if self.rounds[i] == 0 {
                return Err(Error::InvalidInput { what: "rounds T", detail: format!("{f}: 0 rounds (must be ≥ 1)") });
            }
            if self.initial[i] < 2 {
                return Err(Error::InvalidInput {
                    what: "initial records n₀",
                    detail: format!("{f}: {} (must be ≥ 2: a release needs n ≥ 2)", self.initial[i]),
                });
            }
            let l = self.lengthscales[i];
            if !(l.is_finite() && l > 0.0) {
                return Err(invalid("lengthscale ℓ", l, "a finite number > 0"));
            }
        }
        for (i, &e) in self.epsilons.iter().enumerate() {
            if !(e.is_finite() && e > 0.0) {
                return Err(invalid("target ε", e, "a finite number > 0"));
            }
            if self.epsilons[..i].contains(&e) {
                return Err(Error::InvalidInput { what: "epsilons", detail: format!("ε = {e} is given twice") });
            }
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(invalid("δ", self.delta, "in (0, 1)"));
        }
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return Err(invalid("scale σ", self.scale, "a finite number > 0"));
        }
        if !(self.noise.is_finite() && self.noise > 0.0) {
            return Err(invalid("observation noise", self.noise, "a finite number > 0"));
        }
        if self.seeds == 0 {
            return Err(Error::InvalidInput { what: "seeds", detail: "0 (must be ≥ 1)".into() });
        }
        if self.grid_1d < 2 || self.grid_2d < 2 || self.candidates == 0 {
            return Err(Error::InvalidInput {
                what: "candidates",
                detail: format!(
                    "1-D grid {}, 2-D grid {} per axis, {} Halton points (need ≥ 2, ≥ 2, ≥ 1)",
                    self.grid_1d, self.grid_2d, self.candidates
                ),
            });
        }
        if !(self.ucb_delta > 0.0 && self.ucb_delta < 1.0) {
            return Err(invalid("δ_UCB", self.ucb_delta, "in (0, 1)"));
        }
        Ok(())
    }

    /// The methods, in output order: the private loops (in `epsilons`
    /// order), non-private TS, GP-UCB, random search.
    pub fn methods(&self) -> Vec<Method> {
        let mut m: Vec<Method> = self.epsilons.iter().map(|&epsilon| Method::Private { epsilon }).collect();
        m.extend([Method::Thompson, Method::Ucb, Method::Random]);
        m
    }

    /// Every unit, in unit order (functions, then methods, then seeds).
    pub fn units(&self) -> Vec<Unit> {
        let methods = self.methods();
        let mut out = Vec::new();
        for function in 0..self.functions.len() {
            for &method in &methods {
                for seed in 0..self.seeds {
                    out.push(Unit { function, method, seed });
                }
            }
        }
        out
    }

    /// The mechanism settings of function `i`'s GP with ridge r (n is set
    /// per round by the loop).
    fn mechanism(&self, i: usize, ridge: f64) -> Result<MechanismParams> {
        let f = self.functions[i];
        let d = f.dim();
        let domain = if d == 1 { Domain::interval(0.0, 1.0)? } else { Domain::cuboid(vec![0.0; d], vec![1.0; d])? };
        let kernel = Kernel::new(KernelKind::Matern52, self.lengthscales[i])?;
        let release = ReleaseParams::new(kernel, domain, self.initial[i], ridge, self.scale);
        Ok(MechanismParams::new(release, self.delta, ResponseScale::Bound(RESPONSE_BOUND)))
    }

    /// The loop settings of function `i` with ridge r and an optional budget.
    pub fn loop_config(&self, i: usize, ridge: f64, budget: Option<f64>) -> Result<ThompsonConfig> {
        Ok(ThompsonConfig {
            mechanism: self.mechanism(i, ridge)?,
            batch: 1,
            budget_epsilon: budget,
            goal: Goal::Maximise,
        })
    }

    /// The ridge of the non-private GP: noise/σ.
    pub fn plain_ridge(&self) -> f64 {
        self.noise / self.scale
    }
}

/// The radical inverse of `i` in base `b` (van der Corput).
fn radical_inverse(mut i: u64, b: u64) -> f64 {
    let (mut f, mut x) = (1.0, 0.0);
    while i > 0 {
        f /= b as f64;
        x += f * (i % b) as f64;
        i /= b;
    }
    x
}

const PRIMES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];

/// The public candidate set of a function: in 1-D the grid i/(m − 1),
/// i = 0..m−1 (m = `grid_1d`); in 2-D the k × k grid (i/(k − 1), j/(k − 1))
/// (k = `grid_2d`, the first coordinate fastest); in d ≥ 3 dimensions the
/// Halton points 1..=m (m = `candidates`) in the first d prime bases.
pub fn candidates(study: &ThompsonStudy, f: TestFunction) -> Result<Points> {
    let d = f.dim();
    let pts = match d {
        1 => Points::from_1d(&(0..study.grid_1d).map(|i| i as f64 / (study.grid_1d - 1) as f64).collect::<Vec<_>>()),
        2 => {
            let k = study.grid_2d;
            let mut v = Vec::with_capacity(2 * k * k);
            for j in 0..k {
                for i in 0..k {
                    v.extend([i as f64 / (k - 1) as f64, j as f64 / (k - 1) as f64]);
                }
            }
            Points::new(v, 2)?
        }
        _ => {
            let mut v = Vec::with_capacity(d * study.candidates);
            for i in 1..=study.candidates as u64 {
                v.extend(PRIMES[..d].iter().map(|&b| radical_inverse(i, b)));
            }
            Points::new(v, d)?
        }
    };
    Ok(pts)
}

/// The smallest ridge r (to a relative 10⁻⁴) at which `config`'s loop of
/// `rounds` rounds starting from `initial` records, one more per round,
/// has composed ε ≤ `target` at the mechanism's δ: the library's
/// [`ThompsonConfig::calibrate_ridge`] (the one calibration `gpdp thompson`
/// and Python use).
pub fn calibrate_ridge(config: &ThompsonConfig, initial: usize, rounds: usize, target: f64) -> Result<f64> {
    if !(target.is_finite() && target > 0.0) {
        return Err(invalid("target ε", target, "a finite number > 0"));
    }
    Ok(config.calibrate_ridge(target, initial, rounds, 1)?)
}

/// The ridge of a private loop: calibrated, used, and the composed ε.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RidgeChoice {
    /// The target ε of the loop.
    pub target: f64,
    /// The smallest ridge meeting it ([`calibrate_ridge`]).
    pub calibrated: f64,
    /// The ridge used: max(calibrated, noise/σ).
    pub ridge: f64,
}

/// Everything public about one function's runs.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The function.
    pub function: TestFunction,
    /// Its index in the study.
    pub index: usize,
    /// The candidates C.
    pub candidates: Points,
    /// g at every candidate.
    pub values: Vec<f64>,
    /// g* = max over C of g.
    pub g_star: f64,
    /// The private loops' ridges, in `epsilons` order.
    pub ridges: Vec<RidgeChoice>,
}

/// The public setting of function `i`: its candidates, g on them, g* and
/// the calibrated ridge of every private loop.
pub fn problem(study: &ThompsonStudy, i: usize) -> Result<Problem> {
    let f = study.functions[i];
    let candidates = candidates(study, f)?;
    let values: Vec<f64> = candidates.iter().map(|x| f.g(x)).collect();
    let g_star = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let base = study.loop_config(i, 1.0, None)?;
    let ridges = study
        .epsilons
        .iter()
        .map(|&target| {
            let calibrated = calibrate_ridge(&base, study.initial[i], study.rounds[i], target)?;
            Ok(RidgeChoice { target, calibrated, ridge: calibrated.max(study.plain_ridge()) })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Problem { function: f, index: i, candidates, values, g_star, ridges })
}

/// What one unit yields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitResult {
    /// g(x_t) of the chosen candidate of every round t = 1..=T (noiseless).
    pub values: Vec<f64>,
    /// g* of the function's candidates.
    pub g_star: f64,
    /// A private loop's ridge (target, calibrated, used).
    pub ridge: Option<RidgeChoice>,
    /// A private loop's composed ε after its T rounds (at the study's δ).
    pub epsilon: Option<f64>,
}

/// SplitMix64 of a running state.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A 64-bit seed from the study seed and the parts of a stream's key.
fn stream_seed(seed: u64, parts: &[u64]) -> u64 {
    let mut st = seed ^ 0x6770_6470_2d74_7373; // "gpdp-tss"
    let mut h = splitmix(&mut st);
    for &p in parts {
        st ^= p.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ h;
        h = splitmix(&mut st);
    }
    h
}

/// The streams of a unit.
#[derive(Clone, Copy)]
enum Stream {
    Initial = 1,
    Noise = 2,
    Loop = 3,
    Random = 4,
}

fn function_key(f: TestFunction) -> u64 {
    ALL_FUNCTIONS.iter().position(|&g| g == f).unwrap_or(0) as u64
}

/// The initial records of (function, seed): n₀ uniform points of [0, 1]^d
/// and their noisy observations g(x) + N(0, noise²) (common to every method).
pub fn initial_data(study: &ThompsonStudy, i: usize, seed: usize) -> Result<Dataset> {
    let f = study.functions[i];
    let mut rng =
        ChaCha8Rng::seed_from_u64(stream_seed(study.seed, &[function_key(f), seed as u64, Stream::Initial as u64]));
    let d = f.dim();
    let n = study.initial[i];
    let mut xs = Vec::with_capacity(n * d);
    let mut ys = Vec::with_capacity(n);
    for _ in 0..n {
        let x: Vec<f64> = (0..d).map(|_| rng.random::<f64>()).collect();
        let e: f64 = StandardNormal.sample(&mut rng);
        ys.push(f.g(&x) + study.noise * e);
        xs.extend(x);
    }
    Ok(Dataset::new(Points::new(xs, d)?, ys)?)
}

/// The index of the largest value (the first on ties).
fn argmax(values: &[f64]) -> usize {
    let mut k = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[k] {
            k = i;
        }
    }
    k
}

/// GP-UCB's β_t = 2·ln(|C|·t²·π²/(6·δ_UCB)) (t ≥ 1).
pub fn ucb_beta(candidates: usize, t: usize, delta: f64) -> f64 {
    let pi2 = std::f64::consts::PI * std::f64::consts::PI;
    2.0 * (candidates as f64 * (t * t) as f64 * pi2 / (6.0 * delta)).ln()
}

/// Runs one unit: T rounds of its method from the (function, seed)'s
/// initial records, returning g of every chosen candidate.
pub fn run_unit(study: &ThompsonStudy, p: &Problem, unit: Unit) -> Result<UnitResult> {
    let i = p.index;
    let f = p.function;
    let rounds = study.rounds[i];
    let data = initial_data(study, i, unit.seed)?;
    let mut noise =
        ChaCha8Rng::seed_from_u64(stream_seed(study.seed, &[function_key(f), unit.seed as u64, Stream::Noise as u64]));
    let mut observe = |x: &[f64]| {
        let e: f64 = StandardNormal.sample(&mut noise);
        f.g(x) + study.noise * e
    };
    let key =
        |s: Stream| stream_seed(study.seed, &[function_key(f), unit.method.stream_key(), unit.seed as u64, s as u64]);
    let mut values = Vec::with_capacity(rounds);
    let (mut ridge, mut epsilon) = (None, None);
    match unit.method {
        Method::Private { .. } | Method::Thompson => {
            let (r, budget, choice) = match unit.method {
                Method::Private { epsilon } => {
                    let choice = p.ridges.iter().find(|c| c.target == epsilon).ok_or_else(|| Error::InvalidInput {
                        what: "thompson study",
                        detail: format!("no calibrated ridge for ε = {epsilon}"),
                    })?;
                    (choice.ridge, Some(epsilon), Some(*choice))
                }
                _ => (study.plain_ridge(), None, None),
            };
            let config = study.loop_config(i, r, budget)?;
            let mut ts = ThompsonSampler::new(config, p.candidates.clone(), data, Some(key(Stream::Loop)))?;
            for _ in 0..rounds {
                let x = ts.ask()?.remove(0);
                let y = observe(&x);
                values.push(f.g(&x));
                ts.tell(&x, y)?;
            }
            if budget.is_some() {
                ridge = choice;
                epsilon = Some(ts.epsilon_so_far()?);
            }
        }
        Method::Ucb => {
            let kernel = Kernel::new(KernelKind::Matern52, study.lengthscales[i])?;
            let clip = |y: f64| y.clamp(-RESPONSE_BOUND, RESPONSE_BOUND);
            let mut clipped = Dataset::new(data.x().clone(), data.y().iter().map(|&y| clip(y)).collect())?;
            for t in 1..=rounds {
                let post = Posterior::fit(kernel, &clipped, study.plain_ridge())?;
                let (mean, var) = post.mean_and_variance(&p.candidates)?;
                let b = ucb_beta(p.candidates.len(), t, study.ucb_delta).sqrt();
                let score: Vec<f64> = mean.iter().zip(&var).map(|(m, v)| m + b * study.scale * v.sqrt()).collect();
                let x = p.candidates.row(argmax(&score)).to_vec();
                let y = observe(&x);
                values.push(f.g(&x));
                clipped.push(&x, clip(y))?;
            }
        }
        Method::Random => {
            let mut rng = ChaCha8Rng::seed_from_u64(key(Stream::Random));
            for _ in 0..rounds {
                let k = rng.random_range(0..p.candidates.len());
                let x = p.candidates.row(k).to_vec();
                // Random search ignores its observations (drawn all the same,
                // so every method consumes the noise stream alike).
                let _ = observe(&x);
                values.push(f.g(&x));
            }
        }
    }
    Ok(UnitResult { values, g_star: p.g_star, ridge, epsilon })
}

/// Runs the units of `shard` (in parallel), calling `done(unit index, unit,
/// result)` as each finishes; returns (unit index, result) in unit order.
/// The functions' public settings (candidates, calibrated ridges) are
/// computed first, for the functions the shard needs.
pub fn run_shard(
    study: &ThompsonStudy,
    shard: Shard,
    done: &(dyn Fn(usize, &Unit, &UnitResult) + Sync),
) -> Result<Vec<(usize, UnitResult)>> {
    study.validate()?;
    let units = study.units();
    let mine = shard.units(units.len());
    let mut problems: Vec<Option<Problem>> = vec![None; study.functions.len()];
    for &u in &mine {
        let i = units[u].function;
        if problems[i].is_none() {
            problems[i] = Some(problem(study, i)?);
        }
    }
    mine.par_iter()
        .map(|&u| {
            let unit = units[u];
            let p = problems[unit.function].as_ref().expect("computed above");
            let r = run_unit(study, p, unit).map_err(|e| Error::InvalidInput {
                what: "thompson study",
                detail: format!("{}, {}, seed {}: {e}", study.functions[unit.function], unit.method.label(), unit.seed),
            })?;
            done(u, &unit, &r);
            Ok((u, r))
        })
        .collect()
}

/// Simple and cumulative regret of a run: for t = 1..=T,
/// simple_t = g* − max_{s ≤ t} g(x_s) and cumulative_t = Σ_{s ≤ t} (g* − g(x_s)).
pub fn regret(values: &[f64], g_star: f64) -> (Vec<f64>, Vec<f64>) {
    let mut best = f64::NEG_INFINITY;
    let mut sum = 0.0;
    let mut simple = Vec::with_capacity(values.len());
    let mut cumulative = Vec::with_capacity(values.len());
    for &v in values {
        best = best.max(v);
        sum += g_star - v;
        simple.push(g_star - best);
        cumulative.push(sum);
    }
    (simple, cumulative)
}

/// Mean and standard error (sample SD/√k; NaN for k = 1) of the values.
pub fn mean_se(values: &[f64]) -> (f64, f64) {
    let k = values.len() as f64;
    let mean = values.iter().sum::<f64>() / k;
    if values.len() < 2 {
        return (mean, f64::NAN);
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (k - 1.0);
    (mean, (var / k).sqrt())
}

/// The curves of one (function, method) over the seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodCurve {
    /// The function.
    pub function: TestFunction,
    /// The method.
    pub method: Method,
    /// Mean simple regret per round (index t − 1).
    pub simple_mean: Vec<f64>,
    /// Its standard error.
    pub simple_se: Vec<f64>,
    /// Mean cumulative regret per round.
    pub cumulative_mean: Vec<f64>,
    /// Its standard error.
    pub cumulative_se: Vec<f64>,
    /// A private loop's ridge (target, calibrated, used).
    pub ridge: Option<RidgeChoice>,
    /// A private loop's composed ε (the largest over its seeds; they agree).
    pub epsilon: Option<f64>,
    /// Whether the final (simple, cumulative) regret is lower than random
    /// search's by more than 1.96·√(SE² + SE_random²) (a NaN SE counts as
    /// 0); None for random search itself.
    pub better_than_random: Option<(bool, bool)>,
}

impl MethodCurve {
    /// Final (mean, SE) of simple regret.
    pub fn final_simple(&self) -> (f64, f64) {
        (*self.simple_mean.last().unwrap_or(&f64::NAN), *self.simple_se.last().unwrap_or(&f64::NAN))
    }
    /// Final (mean, SE) of cumulative regret.
    pub fn final_cumulative(&self) -> (f64, f64) {
        (*self.cumulative_mean.last().unwrap_or(&f64::NAN), *self.cumulative_se.last().unwrap_or(&f64::NAN))
    }
}

/// The study's curves, one per (function, method) in unit order, from
/// every unit's result in unit order.
pub fn curves(study: &ThompsonStudy, results: &[UnitResult]) -> Result<Vec<MethodCurve>> {
    let units = study.units();
    if units.len() != results.len() {
        return Err(Error::InvalidInput {
            what: "thompson study",
            detail: format!("{} unit(s) but {} result(s)", units.len(), results.len()),
        });
    }
    let methods = study.methods();
    let mut out = Vec::new();
    for (i, &f) in study.functions.iter().enumerate() {
        let t = study.rounds[i];
        for &method in &methods {
            let runs: Vec<&UnitResult> = units
                .iter()
                .zip(results)
                .filter(|(u, _)| u.function == i && u.method == method)
                .map(|(_, r)| r)
                .collect();
            let mut regrets = Vec::with_capacity(runs.len());
            for r in &runs {
                if r.values.len() != t {
                    return Err(Error::InvalidInput {
                        what: "thompson study",
                        detail: format!("{f}, {}: a run of {} rounds, expected {t}", method.label(), r.values.len()),
                    });
                }
                regrets.push(regret(&r.values, r.g_star));
            }
            let column = |k: usize, which: usize| -> Vec<f64> {
                regrets.iter().map(|(s, c)| if which == 0 { s[k] } else { c[k] }).collect()
            };
            let (mut sm, mut ss, mut cm, mut cs) = (vec![], vec![], vec![], vec![]);
            for k in 0..t {
                let (m, s) = mean_se(&column(k, 0));
                sm.push(m);
                ss.push(s);
                let (m, s) = mean_se(&column(k, 1));
                cm.push(m);
                cs.push(s);
            }
            let epsilon = runs.iter().filter_map(|r| r.epsilon).reduce(f64::max);
            let ridge = runs.iter().find_map(|r| r.ridge);
            out.push(MethodCurve {
                function: f,
                method,
                simple_mean: sm,
                simple_se: ss,
                cumulative_mean: cm,
                cumulative_se: cs,
                ridge,
                epsilon,
                better_than_random: None,
            });
        }
    }
    // The verdicts against random search, per function.
    for i in 0..out.len() {
        let f = out[i].function;
        let Some(random) = out.iter().find(|c| c.function == f && c.method == Method::Random).cloned() else {
            continue;
        };
        if out[i].method == Method::Random {
            continue;
        }
        let z = |v: f64| if v.is_nan() { 0.0 } else { v };
        let better = |(m, s): (f64, f64), (mr, sr): (f64, f64)| m + 1.96 * (z(s).powi(2) + z(sr).powi(2)).sqrt() < mr;
        let simple = better(out[i].final_simple(), random.final_simple());
        let cumulative = better(out[i].final_cumulative(), random.final_cumulative());
        out[i].better_than_random = Some((simple, cumulative));
    }
    Ok(out)
}
