//! Type-II maximum likelihood: the hyperparameters (ℓ, σ, λ) that maximise
//! the log marginal likelihood ([`super::log_marginal_likelihood`]) within
//! bounds, by Nelder–Mead (argmin) in log-parameter space from several
//! starts (docs/plan.md).
//!
//! The objective is not concave; each start finds a local optimum and the
//! best one is kept. Bounds are enforced by evaluating at the clamped
//! parameters plus a quadratic penalty on the excess, so that an optimum on
//! a bound is reached exactly and reported ([`Fit::at_bound`]).

use argmin::core::{CostFunction, Executor, State};
use argmin::solver::neldermead::NelderMead;
use serde::{Deserialize, Serialize};

use super::likelihood::{Hyper, log_marginal_likelihood};
use crate::error::{Error, Result, fmt_value};
use crate::mechanism::Progress;
use crate::model::data::Dataset;
use crate::model::domain::Domain;
use crate::model::kernel::KernelKind;
use crate::rng::ReleaseRng;

/// Closed search intervals [lo, hi] (0 < lo ≤ hi < ∞) for each parameter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// Lengthscale ℓ, in the covariates' units.
    pub lengthscale: (f64, f64),
    /// Prior scale σ, in the mechanism's response units.
    pub scale: (f64, f64),
    /// Noise sd λ, in the mechanism's response units.
    pub noise: (f64, f64),
}

impl Bounds {
    /// ℓ ∈ [diam Ω/100, 2 diam Ω], σ ∈ [M_Y/100, 10 M_Y], λ ∈ [M_Y/1000, 2 M_Y]
    /// for a domain Ω and response bound M_Y (1 with a response range).
    pub fn default_for(domain: &Domain, response_bound: f64) -> Self {
        let d = domain.diameter();
        let d = if d.is_finite() && d > 0.0 { d } else { 1.0 };
        let m = response_bound;
        Bounds { lengthscale: (d / 100.0, 2.0 * d), scale: (m / 100.0, 10.0 * m), noise: (m / 1000.0, 2.0 * m) }
    }

    fn check(&self) -> Result<()> {
        for (name, (lo, hi)) in
            [("lengthscale bounds", self.lengthscale), ("scale bounds", self.scale), ("noise bounds", self.noise)]
        {
            if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi) {
                return Err(Error::InvalidParameter {
                    name,
                    value: format!("{}, {}", fmt_value(lo), fmt_value(hi)),
                    requirement: "finite with 0 < lo ≤ hi",
                });
            }
        }
        Ok(())
    }
}

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    /// Where to search.
    pub bounds: Bounds,
    /// Number of starts (≥ 1): the first from the data (ℓ = diam/10, σ = sd y,
    /// λ = sd y/3, clamped), the others log-uniform in the bounds.
    pub restarts: usize,
    /// Seed of the random starts (the fit is deterministic given it).
    pub seed: u64,
    /// Nelder–Mead iterations per start.
    pub max_iterations: u64,
}

impl FitOptions {
    /// Ten starts, seed 0, 400 iterations each.
    pub fn new(bounds: Bounds) -> Self {
        FitOptions { bounds, restarts: 10, seed: 0, max_iterations: 400 }
    }
}

/// One start of the search and where it ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Restart {
    /// The starting point.
    pub start: Hyper,
    /// The local optimum found.
    pub end: Hyper,
    /// log p(y | X, end).
    pub log_marginal_likelihood: f64,
    /// Objective evaluations used.
    pub evaluations: u64,
}

/// The fitted hyperparameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The kernel family fitted.
    pub kernel: String,
    /// The best local optimum over the starts.
    pub hyper: Hyper,
    /// Its log marginal likelihood.
    pub log_marginal_likelihood: f64,
    /// Parameters whose optimum lies on a bound (widen it, or accept it).
    pub at_bound: Vec<String>,
    /// Every start, in order.
    pub restarts: Vec<Restart>,
    /// Records the likelihood was computed on.
    pub records: usize,
}

/// The negative log marginal likelihood over v = (log ℓ?, log σ, log λ).
#[derive(Clone)]
struct Objective<'a> {
    kind: KernelKind,
    data: &'a Dataset,
    lo: Vec<f64>,
    hi: Vec<f64>,
}

/// Returned where K_θ cannot be factorised (numerically singular).
const INFEASIBLE: f64 = 1e300;

impl Objective<'_> {
    fn free_ell(&self) -> bool {
        self.kind.has_lengthscale()
    }

    fn hyper(&self, v: &[f64]) -> Hyper {
        let c: Vec<f64> = v.iter().zip(self.lo.iter().zip(&self.hi)).map(|(x, (l, h))| x.clamp(*l, *h).exp()).collect();
        if self.free_ell() {
            Hyper { lengthscale: c[0], scale: c[1], noise: c[2] }
        } else {
            Hyper { lengthscale: 1.0, scale: c[0], noise: c[1] }
        }
    }

    fn to_vec(&self, h: Hyper) -> Vec<f64> {
        let mut v = Vec::with_capacity(3);
        if self.free_ell() {
            v.push(h.lengthscale.ln());
        }
        v.push(h.scale.ln());
        v.push(h.noise.ln());
        v
    }

    fn penalty(&self, v: &[f64]) -> f64 {
        v.iter().zip(self.lo.iter().zip(&self.hi)).map(|(x, (l, h))| (x - x.clamp(*l, *h)).powi(2)).sum()
    }
}

impl CostFunction for Objective<'_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, v: &Self::Param) -> std::result::Result<f64, argmin::core::Error> {
        let nll = match log_marginal_likelihood(self.kind, self.hyper(v), self.data) {
            Ok(l) if l.is_finite() => -l,
            _ => INFEASIBLE,
        };
        Ok(nll + 1e6 * self.penalty(v))
    }
}

fn sd(y: &[f64]) -> f64 {
    let n = y.len() as f64;
    let m = y.iter().sum::<f64>() / n;
    (y.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n).sqrt()
}

/// Fits ℓ (if the kernel has one), σ and λ to `data` by maximum marginal
/// likelihood. Use it only on public or proxy data: hyperparameters fitted
/// on the private data void the release's guarantee.
///
/// Errors: bad bounds; no records; every start infeasible.
pub fn fit(kind: KernelKind, data: &Dataset, opts: &FitOptions, progress: &dyn Progress) -> Result<Fit> {
    opts.bounds.check()?;
    if data.is_empty() {
        return Err(Error::Input("the proxy data hold no records".into()));
    }
    if opts.restarts == 0 {
        return Err(Error::InvalidParameter { name: "restarts", value: "0".into(), requirement: "≥ 1" });
    }
    let b = opts.bounds;
    let mut pairs = vec![b.scale, b.noise];
    if kind.has_lengthscale() {
        pairs.insert(0, b.lengthscale);
    }
    let lo: Vec<f64> = pairs.iter().map(|p| p.0.ln()).collect();
    let hi: Vec<f64> = pairs.iter().map(|p| p.1.ln()).collect();
    let obj = Objective { kind, data, lo: lo.clone(), hi: hi.clone() };
    let dim = lo.len();
    let s = sd(data.y()).max(1e-12);
    let first = Hyper { lengthscale: data_ell(data), scale: s, noise: s / 3.0 };
    let mut rng = ReleaseRng::seeded(opts.seed);
    let mut restarts = Vec::with_capacity(opts.restarts);
    for k in 0..opts.restarts {
        progress.step(&format!("fitting ℓ, σ, λ by maximum marginal likelihood: start {} of {}", k + 1, opts.restarts));
        let v0: Vec<f64> = if k == 0 {
            obj.to_vec(first).iter().zip(lo.iter().zip(&hi)).map(|(x, (l, h))| x.clamp(*l, *h)).collect()
        } else {
            lo.iter().zip(&hi).map(|(l, h)| l + (h - l) * rng.uniform()).collect()
        };
        // The initial simplex: v0 and one step of a tenth of each interval
        // (at least 0.2 in log units), towards the interval's interior.
        let mut simplex = vec![v0.clone()];
        for i in 0..dim {
            let step = (0.1 * (hi[i] - lo[i])).max(0.2);
            let mut v = v0.clone();
            v[i] = if v0[i] + step <= hi[i] { v0[i] + step } else { v0[i] - step };
            simplex.push(v);
        }
        let solver = NelderMead::new(simplex)
            .with_sd_tolerance(1e-9)
            .map_err(|e| Error::Unreachable(format!("Nelder–Mead setup: {e}")))?;
        let res = Executor::new(obj.clone(), solver)
            .configure(|st| st.max_iters(opts.max_iterations))
            .run()
            .map_err(|e| Error::Unreachable(format!("Nelder–Mead: {e}")))?;
        let st = res.state();
        let best = st.get_best_param().cloned().unwrap_or(v0.clone());
        let end = obj.hyper(&best);
        let ll = log_marginal_likelihood(kind, end, data).unwrap_or(f64::NEG_INFINITY);
        let evaluations = st.get_func_counts().get("cost_count").copied().unwrap_or(0);
        restarts.push(Restart { start: obj.hyper(&v0), end, log_marginal_likelihood: ll, evaluations });
    }
    let best = restarts
        .iter()
        .filter(|r| r.log_marginal_likelihood.is_finite())
        .max_by(|a, b| a.log_marginal_likelihood.total_cmp(&b.log_marginal_likelihood))
        .copied()
        .ok_or_else(|| Error::Factorisation {
            what: "σ²K(X, X) + λ²I",
            detail: "at every start; raise the lower noise bound".into(),
        })?;
    let mut at_bound = Vec::new();
    let names: &[&str] = if kind.has_lengthscale() { &["lengthscale", "scale", "noise"] } else { &["scale", "noise"] };
    for (i, v) in obj.to_vec(best.end).iter().enumerate() {
        let tol = 1e-3 * (hi[i] - lo[i]).max(1e-3);
        if (v - lo[i]).abs() <= tol {
            at_bound.push(format!("{} at its lower bound", names[i]));
        } else if (v - hi[i]).abs() <= tol {
            at_bound.push(format!("{} at its upper bound", names[i]));
        }
    }
    Ok(Fit {
        kernel: kind.name().to_string(),
        hyper: best.end,
        log_marginal_likelihood: best.log_marginal_likelihood,
        at_bound,
        restarts,
        records: data.len(),
    })
}

/// A tenth of the covariates' bounding-box diagonal (1 when it is 0).
fn data_ell(data: &Dataset) -> f64 {
    let d = data.dim();
    let (mut lo, mut hi) = (vec![f64::INFINITY; d], vec![f64::NEG_INFINITY; d]);
    for p in data.x().iter() {
        for k in 0..d {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let diag = lo.iter().zip(&hi).map(|(a, b)| (b - a).powi(2)).sum::<f64>().sqrt();
    if diag > 0.0 { diag / 10.0 } else { 1.0 }
}
