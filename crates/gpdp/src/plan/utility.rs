//! What a private map would be worth, estimated on proxy data
//! (docs/plan.md): for each target ε, the mechanism with the fitted ℓ, σ and
//! the calibrated ridge is run on a random training part of the proxy —
//! seeded, so these are simulations, not releases — and one released path
//! is scored by
//!
//! - the hold-out RMSE √(mean (f(x_i) − y_i)²) over the held-out records,
//!   in data units, and
//! - the intersection over union of its excursion set {f ≥ t} on the grid
//!   with the proxy's non-private set {μ ≥ t}, μ the posterior mean of all
//!   the proxy records under the fitted hyperparameters (cell-area weights
//!   on a 2-D box grid, equal weights otherwise).
//!
//! Repetitions draw new splits and new paths; means and standard deviations
//! are reported. The non-private baseline scores the training part's
//! posterior mean the same way, and the constant-map baseline the flat map
//! at the training part's mean response (clipped to the response scale, as
//! the mechanism sees it): a private map whose RMSE is not below the
//! constant map's says nothing a single published number would not.

use serde::{Deserialize, Serialize};

use super::likelihood::Hyper;
use crate::error::{Error, Result, fmt_value};
use crate::mechanism::{Mechanism, MechanismParams, Progress};
use crate::model::data::Dataset;
use crate::model::kernel::Kernel;
use crate::model::points::Points;
use crate::model::query::{Grid, Query};
use crate::posterior::Posterior;
use crate::privacy::Solve;
use crate::rng::ReleaseRng;

/// How the utility is simulated.
#[derive(Debug, Clone, PartialEq)]
pub struct UtilityOptions {
    /// Fraction of the proxy records held out, in (0, 1).
    pub holdout: f64,
    /// Repetitions (≥ 1), each a new split and a new path.
    pub reps: usize,
    /// Seed of the splits and the simulated paths.
    pub seed: u64,
    /// Grid of the excursion-set comparison.
    pub grid: Grid,
    /// Excursion level t, in data units.
    pub threshold: f64,
    /// Smallest ridge to use (the fitted λ/σ): a ridge above the calibrated
    /// one is both more private and closer to the fitted model.
    pub ridge_floor: Option<f64>,
}

/// Mean and standard deviation over the repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Sample mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one repetition).
    pub sd: f64,
}

impl Summary {
    fn of(v: &[f64]) -> Summary {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let sd = if v.len() > 1 { (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
        Summary { mean, sd }
    }
}

/// The release at one target ε and its simulated utility.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UtilityAt {
    /// The target ε.
    pub target_epsilon: f64,
    /// The ridge for the release (n records): max(calibrated, floor).
    pub ridge: f64,
    /// Whether the floor (the fitted λ/σ) set the ridge.
    pub ridge_is_fitted: bool,
    /// The release's ε at that ridge (≤ the target).
    pub epsilon: f64,
    /// Hold-out RMSE of one released path, in data units.
    pub holdout_rmse: Summary,
    /// IoU of one path's {f ≥ t} with the proxy's non-private {μ ≥ t}.
    pub excursion_iou: Summary,
}

/// The utility curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Utility {
    /// Records in each simulated training part (and held out).
    pub train_records: usize,
    /// Records held out in each repetition.
    pub holdout_records: usize,
    /// Repetitions.
    pub reps: usize,
    /// One entry per target ε, in the order given.
    pub points: Vec<UtilityAt>,
    /// The non-private posterior mean of the training part, scored alike.
    pub baseline_rmse: Summary,
    /// The non-private training mean's IoU with the full proxy's set.
    pub baseline_iou: Summary,
    /// The flat map at the training part's mean response, scored alike
    /// (absent from plans written before version 4).
    #[serde(default)]
    pub constant_rmse: Option<Summary>,
    /// The flat map's IoU: its set {c ≥ t} is the whole grid or empty.
    #[serde(default)]
    pub constant_iou: Option<Summary>,
    /// The weighted fraction of the grid in the proxy's non-private set
    /// {μ ≥ t} (0: the threshold is never reached; absent before version 4).
    #[serde(default)]
    pub reference_fraction: Option<f64>,
}

/// The mechanism for `target_epsilon` with the ridge not below
/// `ridge_floor`: [`MechanismParams::calibrate_with_floor`].
pub fn calibrate_with_floor(
    params: &MechanismParams,
    target_epsilon: f64,
    ridge_floor: Option<f64>,
) -> Result<Mechanism> {
    params.calibrate_with_floor(target_epsilon, ridge_floor)
}

fn internal(params: &MechanismParams, y: f64) -> f64 {
    match &params.response_range {
        Some(r) => r.clip(y),
        None => y.clamp(-params.release.response_bound, params.release.response_bound),
    }
}

fn to_data(params: &MechanismParams, v: f64) -> f64 {
    match &params.response_range {
        Some(r) => r.to_data(v),
        None => v,
    }
}

/// The non-private posterior mean (data units) at `q` from `data` (data units).
fn posterior_mean(params: &MechanismParams, hyper: Hyper, data: &Dataset, q: &Points) -> Result<Vec<f64>> {
    let y: Vec<f64> = data.y().iter().map(|&v| internal(params, v)).collect();
    let d = Dataset::new(data.x().clone(), y)?;
    let kernel = Kernel::new(params.release.kernel.kind(), hyper.lengthscale)?;
    let post = Posterior::fit(kernel, &d, hyper.ridge())?;
    Ok(post.mean(q)?.into_iter().map(|v| to_data(params, v)).collect())
}

/// The constant map's level (data units): the mean of the responses as the
/// mechanism sees them (mapped and clipped), mapped back.
fn constant_level(params: &MechanismParams, y: &[f64]) -> f64 {
    let m = y.iter().map(|&v| internal(params, v)).sum::<f64>() / y.len().max(1) as f64;
    to_data(params, m)
}

fn rmse(f: &[f64], y: &[f64]) -> f64 {
    (f.iter().zip(y).map(|(a, b)| (a - b).powi(2)).sum::<f64>() / y.len() as f64).sqrt()
}

fn grid_weights(grid: &Grid) -> Result<Vec<f64>> {
    match (grid.counts(), grid.lower(), grid.upper()) {
        ([nx, ny], [x0, y0], [x1, y1]) if nx > &1 && ny > &1 => {
            crate::postprocess::metrics::cell_area_weights(*nx, *ny, (*x0, *x1), (*y0, *y1))
        }
        _ => Ok(vec![1.0; grid.points().len()]),
    }
}

/// A random split of 0..n into (train, held out), `held` held out.
fn split(n: usize, held: usize, rng: &mut ReleaseRng) -> (Vec<usize>, Vec<usize>) {
    let mut idx: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = ((rng.uniform() * (i + 1) as f64) as usize).min(i);
        idx.swap(i, j);
    }
    let test = idx.split_off(n - held);
    (idx, test)
}

fn subset(data: &Dataset, idx: &[usize]) -> Result<Dataset> {
    let rows: Vec<&[f64]> = idx.iter().map(|&i| data.x().row(i)).collect();
    Dataset::new(Points::from_rows(&rows)?, idx.iter().map(|&i| data.y()[i]).collect())
}

/// Simulates the utility of releases at each of `targets` on the proxy.
///
/// `template` is the release (kernel with the fitted ℓ, σ, domain, L, δ,
/// response range, n of the private dataset, …): the simulations replace
/// its n by the training part's and its ridge by the calibrated one; the
/// returned ridge and ε of each target are for its own n. `hyper` gives the
/// proxy's reference posterior mean. Errors: a bad option; a proxy too
/// small to split; anything the mechanism refuses (e.g. proxy records
/// outside the domain).
pub fn utility_curve(
    template: &MechanismParams,
    hyper: Hyper,
    proxy: &Dataset,
    targets: &[f64],
    opts: &UtilityOptions,
    progress: &dyn Progress,
) -> Result<Utility> {
    if !(opts.holdout > 0.0 && opts.holdout < 1.0) {
        return Err(Error::InvalidParameter {
            name: "holdout fraction",
            value: fmt_value(opts.holdout),
            requirement: "in (0, 1)",
        });
    }
    if opts.reps == 0 {
        return Err(Error::InvalidParameter { name: "repetitions", value: "0".into(), requirement: "≥ 1" });
    }
    if !opts.threshold.is_finite() {
        return Err(Error::InvalidParameter {
            name: "threshold t",
            value: fmt_value(opts.threshold),
            requirement: "finite",
        });
    }
    let n = proxy.len();
    let held = ((n as f64 * opts.holdout).round() as usize).max(1);
    if n < 4 || held + 2 > n {
        return Err(Error::Input(format!(
            "the proxy's {n} records are too few to hold out {held} and fit on the rest (need ≥ 2 left)"
        )));
    }
    let grid_pts = opts.grid.points();
    let weights = grid_weights(&opts.grid)?;
    let reference: Vec<bool> =
        posterior_mean(template, hyper, proxy, grid_pts)?.iter().map(|&v| v >= opts.threshold).collect();
    let total_weight: f64 = weights.iter().sum();
    let reference_fraction = reference.iter().zip(&weights).filter(|(r, _)| **r).map(|(_, w)| w).sum::<f64>()
        / total_weight.max(f64::MIN_POSITIVE);
    let mut rmse_reps = vec![Vec::new(); targets.len()];
    let (mut const_rmse, mut const_iou) = (Vec::new(), Vec::new());
    let mut iou_reps = vec![Vec::new(); targets.len()];
    let (mut base_rmse, mut base_iou) = (Vec::new(), Vec::new());
    let mut train_template = template.clone();
    train_template.release.n = n - held;
    train_template.draws = crate::model::draws::Draws::ONE;
    // One simulated mechanism per target (every repetition has the same size).
    let simulated: Vec<Mechanism> = targets
        .iter()
        .map(|&eps| calibrate_with_floor(&train_template, eps, opts.ridge_floor))
        .collect::<Result<_>>()?;
    for rep in 0..opts.reps {
        let mut rng = ReleaseRng::seeded(opts.seed.wrapping_add(rep as u64));
        let (tr, te) = split(n, held, &mut rng);
        let (train, test) = (subset(proxy, &tr)?, subset(proxy, &te)?);
        // One query: the held-out covariates, then the grid.
        let mut q = test.x().clone();
        q.extend(grid_pts)?;
        let mean = posterior_mean(template, hyper, &train, &q)?;
        base_rmse.push(rmse(&mean[..held], test.y()));
        let set: Vec<bool> = mean[held..].iter().map(|&v| v >= opts.threshold).collect();
        base_iou.push(crate::postprocess::metrics::iou(&set, &reference, &weights)?);
        // The flat map at the training mean, as the mechanism sees the responses.
        let c = constant_level(template, train.y());
        const_rmse.push(rmse(&vec![c; held], test.y()));
        const_iou.push(crate::postprocess::metrics::iou(
            &vec![c >= opts.threshold; grid_pts.len()],
            &reference,
            &weights,
        )?);
        let query = Query::Points(q);
        for (k, (&eps, m)) in targets.iter().zip(&simulated).enumerate() {
            progress.step(&format!("simulating ε = {eps}: repetition {} of {}", rep + 1, opts.reps));
            let mut draw = ReleaseRng::seeded(
                opts.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add((rep * targets.len() + k) as u64 + 1),
            );
            let rel = m.release(&train, &query, &mut draw)?;
            let path = &rel.paths[0];
            rmse_reps[k].push(rmse(&path[..held], test.y()));
            let set: Vec<bool> = path[held..].iter().map(|&v| v >= opts.threshold).collect();
            iou_reps[k].push(crate::postprocess::metrics::iou(&set, &reference, &weights)?);
        }
    }
    let mut points = Vec::with_capacity(targets.len());
    for (k, &eps) in targets.iter().enumerate() {
        let m = calibrate_with_floor(template, eps, opts.ridge_floor)?;
        let ridge = m.accounted_release().params().ridge;
        let calibrated = template.calibrate(Solve::Ridge, eps).ok().map(|c| c.accounted_release().params().ridge);
        points.push(UtilityAt {
            target_epsilon: eps,
            ridge,
            ridge_is_fitted: calibrated.is_none_or(|c| c < ridge),
            epsilon: m.privacy().epsilon,
            holdout_rmse: Summary::of(&rmse_reps[k]),
            excursion_iou: Summary::of(&iou_reps[k]),
        });
    }
    Ok(Utility {
        train_records: n - held,
        holdout_records: held,
        reps: opts.reps,
        points,
        baseline_rmse: Summary::of(&base_rmse),
        baseline_iou: Summary::of(&base_iou),
        constant_rmse: Some(Summary::of(&const_rmse)),
        constant_iou: Some(Summary::of(&const_iou)),
        reference_fraction: Some(reference_fraction),
    })
}
