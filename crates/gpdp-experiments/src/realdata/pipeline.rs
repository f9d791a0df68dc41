//! The Greater London study (the paper's App. D.2, Figure 4; docs/experiments.md).
//!
//! For a *selection* year (public in the paper's setup: hyperparameters
//! are tuned on it) and a *release* year (the private data):
//!
//! 1. each year's joined sales (easting, northing, ln price) are binned
//!    onto a hexagonal lattice ([`super::hexbin`]); every kept hexagon h is
//!    one record with centre x_h normalised to [0, 1]² and response
//!    y_h = clip(median_h − t, −B, B)/B, label s_h = 1{median_h − t > 0}
//!    ([`super::response`]);
//! 2. **selection year only**: the hexagons are split at random (seeded)
//!    into a training and a validation half; for θ = (ℓ, r, σ) the GP with
//!    exponential kernel exp(−‖x − x'‖/ℓ), ridge r and scale σ is fitted
//!    on the training half and scored by the mean validation BCE
//!
//!    ```text
//!    L(θ) = (1/|V|)·Σ_{h∈V} ℓ(s_h, p_D(x_h)),  p_D(x) = Φ(μ_D(x)/(σ·√k_D(x, x))),
//!    ```
//!
//!    ℓ(s, p) = −s·log p − (1 − s)·log(1 − p), p clipped to [10⁻⁶, 1 − 10⁻⁶];
//!    θ* minimises L over the grid search ([`crate::excursion::search`]),
//!    θ_priv minimises it subject to ε₁(θ) < ε₀, ε computed for the
//!    **release year's n** ([`super::accounting`]); the cutoff C of
//!    {p_D ≥ C} maximises the validation IoU of {p_D ≥ C} against the
//!    labels at θ* (ties: closest to ½, then smaller);
//! 3. **release year**: the non-private posterior with θ* fitted to all its
//!    hexagons gives p_D on a grid over [0, 1]² and the set {p_D ≥ C}; the
//!    private release is L exact joint posterior sample paths with θ_priv on
//!    a grid over [0, 1]² (the domain of the guarantee; never outside it),
//!    optionally smoothed by a fixed Gaussian filter (data-independent
//!    post-processing), and the sets {f ≥ 0}. Its guarantee is computed by
//!    the core library for n = the release year's number of hexagons and
//!    all L paths together (as well as for one path).
//!
//! The privacy unit is one hexagon record. n, the lattice and the min–max
//! extent used for the normalisation are treated as public (with a fixed
//! public box for the lattice, the box is also the normalisation, so only n
//! remains data-dependent).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use gpdp::postprocess::excursion::excursion_probability;
use gpdp::postprocess::metrics::{best_cutoff, integrated_bce, iou};
use gpdp::postprocess::smoothing::gaussian_smooth;
use gpdp::privacy::Conversion;
use gpdp::{Dataset, Diagnostics, Draws, Kernel, Points, Posterior, PrivacyReport, ReleaseReport, ReleaseRng};

use super::accounting::real_accounting;
use super::hexbin::{Hexbin, HexbinSpec, hexbin};
use super::response::{ResponseTransform, UnitScaling};
use crate::error::{Error, Result, invalid};
use crate::excursion::accounting::StudyAccounting;
use crate::excursion::search::{Candidate, Objective, SearchResult, SearchSpec, search};
use crate::excursion::study2d::{path_query, unit_grid};
use gpdp::privacy::SensitivityConstants;

/// Everything the study needs (defaults in parentheses).
#[derive(Debug, Clone, PartialEq)]
pub struct RealConfig {
    /// Year whose data choose θ and C (default 2017).
    pub select_year: i32,
    /// Year whose data are released (default 2018).
    pub release_year: i32,
    /// Binning of the selection year (default size 40, min count 1).
    pub hex_select: HexbinSpec,
    /// Binning of the release year (default size 40, min count 3).
    pub hex_release: HexbinSpec,
    /// t and B [13, 1].
    pub response: ResponseTransform,
    /// Fraction of the selection hexagons used for validation (default 0.5).
    pub validation_fraction: f64,
    /// Seed of the train/validation split (default 0).
    pub split_seed: u64,
    /// Search grid (default [`default_spec`]).
    pub spec: SearchSpec,
    /// Privacy budget ε₀ of one path: ε₁(θ_priv) < ε₀ (default 10).
    pub epsilon_max: f64,
    /// δ (default n_release^−1.1).
    pub delta: Option<f64>,
    /// RDP → (ε, δ) conversion (default paper).
    pub conversion: Conversion,
    /// Constants of Lemma B.1 in the selection (default proven).
    pub constants: SensitivityConstants,
    /// The proven bound [tight]; the published constants need `Paper`.
    pub bound: gpdp::BoundChoice,
    /// Candidate cutoffs C [0.05, 0.055, …, 0.95].
    pub cutoffs: Vec<f64>,
    /// Grid points per axis of the p_D map (default 100).
    pub map_grid: usize,
    /// Grid points per axis of the released paths (default 60).
    pub path_grid: usize,
    /// Released paths L (default 3).
    pub paths: Draws,
    /// Gaussian smoothing of the released paths in grid cells; 0 = off (default 0).
    pub smooth_px: f64,
}

impl Default for RealConfig {
    fn default() -> Self {
        RealConfig {
            select_year: 2017,
            release_year: 2018,
            hex_select: HexbinSpec { min_count: 1, ..HexbinSpec::default() },
            hex_release: HexbinSpec { min_count: 3, ..HexbinSpec::default() },
            response: ResponseTransform::default(),
            validation_fraction: 0.5,
            split_seed: 0,
            spec: default_spec(),
            epsilon_max: 10.0,
            delta: None,
            conversion: Conversion::Paper,
            constants: SensitivityConstants::Proven,
            bound: gpdp::BoundChoice::Tight,
            cutoffs: (0..=180).map(|k| 0.05 + 0.005 * k as f64).collect(),
            map_grid: 100,
            path_grid: 60,
            paths: Draws::new(3).expect("3 ≥ 1"),
            smooth_px: 0.0,
        }
    }
}

/// The default search: ℓ ∈ {0.03, …, 0.60} (8), r ∈ {0.1, …, 9} (12),
/// σ ∈ {0.03, …, 0.90} (9), then one refinement round around the top 3
/// with factors {0.75, 0.85, 0.925, 1, 1.075, 1.15, 1.25} per axis.
pub fn default_spec() -> SearchSpec {
    let f = vec![0.75, 0.85, 0.925, 1.0, 1.075, 1.15, 1.25];
    SearchSpec {
        lengthscales: vec![0.03, 0.05, 0.08, 0.12, 0.18, 0.27, 0.40, 0.60],
        ridges: vec![0.1, 0.18, 0.27, 0.40, 0.60, 0.90, 1.3, 2.0, 3.0, 4.5, 6.5, 9.0],
        scales: vec![0.03, 0.05, 0.08, 0.12, 0.18, 0.27, 0.40, 0.60, 0.90],
        rounds: 1,
        top_k: 3,
        ell_factors: f.clone(),
        ridge_factors: f.clone(),
        scale_factors: f,
        zero_scale_values: vec![0.01, 0.02, 0.05],
        ell_range: (0.02, 1.0),
        ridge_range: (0.05, 15.0),
        scale_range: (0.01, 1.5),
    }
}

impl RealConfig {
    /// Checks the fields the steps below do not check themselves.
    pub fn validate(&self) -> Result<()> {
        if self.select_year == self.release_year {
            return Err(Error::InvalidConfig {
                field: "selection and release years",
                value: format!("{} and {}", self.select_year, self.release_year),
                requirement: "different (θ must not be chosen on the released data)",
            });
        }
        if !(self.validation_fraction > 0.0 && self.validation_fraction < 1.0) {
            return Err(invalid("validation fraction", self.validation_fraction, "in (0, 1)"));
        }
        if !(self.epsilon_max > 0.0) {
            return Err(invalid("ε₀", self.epsilon_max, "> 0"));
        }
        if self.map_grid < 2 || self.path_grid < 2 {
            return Err(invalid("grid points per axis", self.map_grid.min(self.path_grid) as f64, "≥ 2"));
        }
        let (map, path) = ((self.map_grid as f64).powi(2), (self.path_grid as f64).powi(2));
        gpdp::check_memory(
            "this study",
            &[
                gpdp::Need::doubles("the p_D map (grid, mean, variance, probability)", 5.0 * map),
                gpdp::Need::doubles("the released paths (L × path grid)", self.paths.as_f64() * path),
            ],
            "use a smaller --map-grid or fewer --paths",
        )?;
        if !(self.smooth_px >= 0.0 && self.smooth_px.is_finite()) {
            return Err(invalid("path smoothing (grid cells)", self.smooth_px, "finite and ≥ 0"));
        }
        if self.cutoffs.is_empty() || self.cutoffs.iter().any(|c| !(0.0..=1.0).contains(c)) {
            return Err(Error::InvalidConfig {
                field: "cutoffs C",
                value: format!("{:?}", self.cutoffs),
                requirement: "a non-empty list of values in [0, 1]",
            });
        }
        Ok(())
    }
}

/// One year's hexagon records.
#[derive(Debug, Clone)]
pub struct YearData {
    /// The year.
    pub year: i32,
    /// The binned sales (centres in grid coordinates).
    pub hexbin: Hexbin,
    /// Grid coordinates → [0, 1]².
    pub scaling: UnitScaling,
    /// The GP records: normalised centres and responses y_h.
    pub data: Dataset,
    /// median_h − t.
    pub raw: Vec<f64>,
    /// s_h = 1{median_h − t > 0}.
    pub labels: Vec<bool>,
}

impl YearData {
    /// Bins `points` = (easting, northing, ln price) and builds the records.
    pub fn build(year: i32, points: &[[f64; 3]], spec: &HexbinSpec, response: &ResponseTransform) -> Result<Self> {
        if points.is_empty() {
            return Err(Error::NotEnoughData(format!("year {year}: no sales left after the filters and the join")));
        }
        let hexbin = hexbin(points, spec)?;
        if hexbin.cells.len() < 2 {
            return Err(Error::NotEnoughData(format!(
                "year {year}: {} hexagon(s) with at least {} sale(s); the study needs at least 2 (lower the min count or the size)",
                hexbin.cells.len(),
                spec.min_count
            )));
        }
        // A public box normalises by itself; otherwise the centres' extent.
        let scaling = match spec.bbox {
            Some(b) => UnitScaling::from_box(b)?,
            None => UnitScaling::fit(hexbin.cells.iter().map(|c| [c.x, c.y]))?,
        };
        let mut xs = Vec::with_capacity(2 * hexbin.cells.len());
        let (mut ys, mut raw, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        for c in &hexbin.cells {
            // Clamped: the extreme centres map to 0 and 1 exactly, and
            // centres just outside a public box onto its edge.
            xs.extend(scaling.to_unit([c.x, c.y]).map(|v| v.clamp(0.0, 1.0)));
            ys.push(response.response(c.median));
            raw.push(c.median - response.threshold);
            labels.push(response.label(c.median));
        }
        let data = Dataset::new(Points::new(xs, 2)?, ys)?;
        Ok(YearData { year, hexbin, scaling, data, raw, labels })
    }

    /// Number of hexagon records n.
    pub fn n(&self) -> usize {
        self.data.len()
    }
}

/// Indices of the training and validation hexagons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Split {
    /// Training hexagons (ascending).
    pub train: Vec<usize>,
    /// Validation hexagons (ascending).
    pub validation: Vec<usize>,
}

/// A seeded random split: ⌊fraction·n⌉ validation hexagons (at least 1,
/// leaving at least 2 for training), chosen by a Fisher–Yates shuffle with
/// ChaCha8(seed).
pub fn split(n: usize, fraction: f64, seed: u64) -> Result<Split> {
    if n < 3 {
        return Err(Error::NotEnoughData(format!(
            "{n} selection hexagon(s): a train/validation split needs at least 3"
        )));
    }
    let n_val = ((fraction * n as f64).round() as usize).clamp(1, n - 2);
    let mut idx: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in (1..n).rev() {
        let j = rng.random_range(0..=i);
        idx.swap(i, j);
    }
    let mut validation = idx[..n_val].to_vec();
    let mut train = idx[n_val..].to_vec();
    validation.sort_unstable();
    train.sort_unstable();
    Ok(Split { train, validation })
}

fn subset(d: &Dataset, idx: &[usize]) -> Result<Dataset> {
    Ok(Dataset::new(d.x().select(idx), idx.iter().map(|&i| d.y()[i]).collect())?)
}

/// p_D at `q` for a posterior fitted with (ℓ, r), for several σ.
fn probabilities(post: &Posterior, q: &Points, scales: &[f64]) -> Result<Vec<Vec<f64>>> {
    let m = post.mean(q)?;
    let v = post.variance(q)?;
    Ok(scales.iter().map(|&s| m.iter().zip(&v).map(|(m, v)| excursion_probability(*m, *v, s, 0.0)).collect()).collect())
}

/// The selection objective: mean validation BCE of p_D from a GP fitted on
/// the training half; ε for the release year's n.
pub struct ValidationObjective {
    train: Dataset,
    val_x: Points,
    val_labels: Vec<bool>,
    weights: Vec<f64>,
    accounting: StudyAccounting,
}

/// BCE clip of p (docs/experiments.md).
pub const BCE_CLIP: f64 = 1e-6;

impl ValidationObjective {
    /// The objective for a split of the selection year.
    pub fn new(sel: &YearData, split: &Split, accounting: StudyAccounting) -> Result<Self> {
        let train = subset(&sel.data, &split.train)?;
        let val_x = sel.data.x().select(&split.validation);
        let val_labels = split.validation.iter().map(|&i| sel.labels[i]).collect();
        let weights = vec![1.0 / split.validation.len() as f64; split.validation.len()];
        Ok(ValidationObjective { train, val_x, val_labels, weights, accounting })
    }

    /// p_D at the validation centres for θ.
    pub fn validation_probabilities(&self, c: &Candidate) -> Result<Vec<f64>> {
        let post = Posterior::fit(Kernel::exponential(c.lengthscale)?, &self.train, c.ridge)?;
        Ok(probabilities(&post, &self.val_x, &[c.scale])?.remove(0))
    }

    /// The validation labels.
    pub fn labels(&self) -> &[bool] {
        &self.val_labels
    }
}

impl Objective for ValidationObjective {
    fn evaluate(&self, lengthscale: f64, ridge: f64, scales: &[f64]) -> Vec<f64> {
        let fit = Kernel::exponential(lengthscale)
            .map_err(Error::from)
            .and_then(|k| Ok(Posterior::fit(k, &self.train, ridge)?))
            .and_then(|p| probabilities(&p, &self.val_x, scales));
        match fit {
            // A candidate whose objective cannot be computed is infeasible.
            Ok(ps) => ps
                .iter()
                .map(|p| integrated_bce(&self.val_labels, p, &self.weights, BCE_CLIP).unwrap_or(f64::INFINITY))
                .collect(),
            Err(_) => vec![f64::INFINITY; scales.len()],
        }
    }

    fn epsilon(&self, c: &Candidate) -> f64 {
        self.accounting.epsilon(c)
    }
}

/// The outcome of the selection on the selection year.
#[derive(Debug, Clone, Serialize)]
pub struct Selection {
    /// The train/validation split of the selection hexagons.
    pub split: Split,
    /// The accountant (n = release hexagons, L = 1).
    pub accounting: StudyAccounting,
    /// Unconstrained search: θ*.
    pub unconstrained: SearchResult,
    /// Constrained search (ε₁ < ε₀): θ_priv.
    pub private: SearchResult,
    /// Cutoff C of {p_D ≥ C} at θ*.
    pub cutoff: f64,
    /// Validation IoU of {p_D ≥ C} at θ*.
    pub cutoff_iou: f64,
}

/// Stage, done, total.
pub type Progress<'a> = &'a (dyn Fn(&str, usize, usize) + Sync);

/// Step 2: θ*, θ_priv and C on the selection year, ε for `n_release`.
pub fn select(cfg: &RealConfig, sel: &YearData, n_release: usize, progress: Progress) -> Result<Selection> {
    cfg.validate()?;
    let accounting = real_accounting(n_release, Draws::ONE, cfg.delta, cfg.conversion, cfg.constants, cfg.bound)?;
    let split = split(sel.n(), cfg.validation_fraction, cfg.split_seed)?;
    let obj = ValidationObjective::new(sel, &split, accounting)?;
    let unconstrained = search(&cfg.spec, &obj, None, &|d, t| progress("search (unconstrained)", d, t))
        .ok_or_else(|| Error::NoFeasibleCandidate("the unconstrained search found no finite objective".into()))?;
    let private = search(&cfg.spec, &obj, Some(cfg.epsilon_max), &|d, t| progress("search (ε < ε₀)", d, t))
        .ok_or_else(|| {
            Error::NoFeasibleCandidate(format!(
                "no candidate has ε < ε₀ = {} for n = {n_release} release hexagons (raise ε₀ or add larger ridges / smaller lengthscales to the grid)",
                cfg.epsilon_max
            ))
        })?;
    let p = obj.validation_probabilities(&unconstrained.best.candidate)?;
    let w = vec![1.0; p.len()];
    let scores: Vec<f64> = cfg
        .cutoffs
        .iter()
        .map(|&c| Ok(iou(&p.iter().map(|q| *q >= c).collect::<Vec<_>>(), obj.labels(), &w)?))
        .collect::<Result<_>>()?;
    let (cutoff, cutoff_iou) = best_cutoff(&cfg.cutoffs, 0.5, |c| {
        cfg.cutoffs.iter().position(|&x| x == c).map_or(f64::NEG_INFINITY, |i| scores[i])
    });
    Ok(Selection { split, accounting, unconstrained, private, cutoff, cutoff_iou })
}

/// The release-year maps and the private release.
#[derive(Debug, Clone)]
pub struct ReleaseMaps {
    /// p_D at θ* on the map grid (`map_grid`², x fastest over [0, 1]²):
    /// NOT private.
    pub probability: Vec<f64>,
    /// The released paths on the path grid (`path_grid`², x fastest over
    /// [0, 1]²), after the optional smoothing: the private output.
    pub paths: Vec<Vec<f64>>,
    /// The mechanism's public report of the release (all L paths together;
    /// proven constants, release n).
    pub report: ReleaseReport,
    /// The operator's diagnostics of the release (never publish).
    pub diagnostics: Diagnostics,
    /// Guarantee of one path.
    pub report_one_path: PrivacyReport,
    /// d_eff = tr(K(K + r²I)⁻¹) at θ* on the release year.
    pub deff_unconstrained: f64,
    /// d_eff at θ_priv.
    pub deff_private: f64,
}

/// Step 3: the non-private map at θ* and the private release at θ_priv on
/// the release year. `rng` is seeded (reproducible, not private) or from
/// the operating system.
pub fn release(cfg: &RealConfig, sel: &Selection, rel: &YearData, rng: &mut ReleaseRng) -> Result<ReleaseMaps> {
    cfg.validate()?;
    if rel.n() != sel.accounting.n {
        return Err(Error::InvalidConfig {
            field: "release hexagons n",
            value: format!("{} (the selection accounted for {})", rel.n(), sel.accounting.n),
            requirement: "the n the selection's ε was computed for",
        });
    }
    let th = sel.unconstrained.best.candidate;
    let tp = sel.private.best.candidate;
    let post_u = Posterior::fit(Kernel::exponential(th.lengthscale)?, &rel.data, th.ridge)?;
    let map = unit_grid(cfg.map_grid);
    let probability = probabilities(&post_u, &map, &[th.scale])?.remove(0);
    let post_p = Posterior::fit(Kernel::exponential(tp.lengthscale)?, &rel.data, tp.ridge)?;
    // The private release: the mechanism of θ_priv for the release year's n.
    let mechanism = sel.accounting.mechanism(&tp, cfg.paths)?;
    let released = mechanism.release(&rel.data, &path_query(cfg.path_grid)?, rng)?;
    let m = cfg.path_grid;
    let paths: Vec<Vec<f64>> = if cfg.smooth_px > 0.0 {
        released.paths.par_iter().map(|f| gaussian_smooth(f, m, m, cfg.smooth_px, 3.0)).collect::<gpdp::Result<_>>()?
    } else {
        released.paths
    };
    let report_one_path = sel.accounting.proven_report(&tp, Draws::ONE)?;
    Ok(ReleaseMaps {
        probability,
        paths,
        report: released.report,
        diagnostics: released.diagnostics,
        report_one_path,
        deff_unconstrained: post_u.effective_dimension(),
        deff_private: post_p.effective_dimension(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic_points(seed: u64, n: usize) -> Vec<[f64; 3]> {
        // A price surface with a high region around (0.4, 0.6) of a 10 × 8 box.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let (x, y): (f64, f64) = (rng.random_range(0.0..10.0), rng.random_range(0.0..8.0));
                let d2 = (x - 4.0).powi(2) + (y - 4.8).powi(2);
                [x, y, 12.7 + 0.8 * (-d2 / 8.0).exp() + 0.1 * (rng.random::<f64>() - 0.5)]
            })
            .collect()
    }

    fn tiny() -> RealConfig {
        let mut c = RealConfig::default();
        c.hex_select.size = 8;
        c.hex_release.size = 8;
        c.hex_release.min_count = 2;
        c.spec.lengthscales = vec![0.1, 0.3];
        c.spec.ridges = vec![0.3, 3.0, 9.0];
        c.spec.scales = vec![0.05, 0.3];
        c.spec.rounds = 0;
        c.map_grid = 12;
        c.path_grid = 10;
        c
    }

    #[test]
    fn year_data_records_are_normalised_and_bounded() {
        let cfg = tiny();
        let d = YearData::build(2017, &synthetic_points(1, 600), &cfg.hex_select, &cfg.response).unwrap();
        assert!(d.n() > 20);
        assert!(d.data.y().iter().all(|y| y.abs() <= 1.0));
        assert!(d.data.x().iter().all(|p| p.iter().all(|v| (0.0..=1.0).contains(v))));
        for k in 0..2 {
            let vals: Vec<f64> = d.data.x().iter().map(|p| p[k]).collect();
            assert_eq!(vals.iter().copied().fold(f64::INFINITY, f64::min), 0.0);
            assert_eq!(vals.iter().copied().fold(f64::NEG_INFINITY, f64::max), 1.0);
        }
        for (k, c) in d.hexbin.cells.iter().enumerate() {
            assert_eq!(d.labels[k], c.median > 13.0);
            assert_eq!(d.data.y()[k] > 0.0, d.labels[k]);
        }
        assert!(d.labels.iter().any(|s| *s) && d.labels.iter().any(|s| !*s));
        assert!(YearData::build(2017, &[], &cfg.hex_select, &cfg.response).is_err());
        // A public box is the normalisation.
        let boxed = HexbinSpec { bbox: Some([-1.0, 11.0, -1.0, 9.0]), ..cfg.hex_select };
        let b = YearData::build(2017, &synthetic_points(1, 600), &boxed, &cfg.response).unwrap();
        assert_eq!((b.scaling.x, b.scaling.y), ((-1.0, 11.0), (-1.0, 9.0)));
        assert!(b.data.x().iter().all(|p| p.iter().all(|v| (0.0..=1.0).contains(v))));
    }

    #[test]
    fn split_is_seeded_disjoint_and_complete() {
        let s = split(11, 0.5, 0).unwrap();
        assert_eq!((s.validation.len(), s.train.len()), (6, 5));
        let mut all: Vec<usize> = s.train.iter().chain(&s.validation).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..11).collect::<Vec<_>>());
        assert_eq!(split(11, 0.5, 0).unwrap(), s);
        assert_ne!(split(11, 0.5, 1).unwrap(), s);
        assert_eq!(split(3, 0.9, 0).unwrap().train.len(), 2);
        assert!(split(2, 0.5, 0).is_err());
    }

    #[test]
    fn objective_is_the_mean_validation_bce() {
        let cfg = tiny();
        let d = YearData::build(2017, &synthetic_points(2, 500), &cfg.hex_select, &cfg.response).unwrap();
        let s = split(d.n(), 0.5, 0).unwrap();
        let acc = real_accounting(
            50,
            Draws::ONE,
            None,
            Conversion::Paper,
            SensitivityConstants::Proven,
            gpdp::BoundChoice::Tight,
        )
        .unwrap();
        let obj = ValidationObjective::new(&d, &s, acc).unwrap();
        let got = obj.evaluate(0.2, 1.0, &[0.1, 0.5]);
        let train = subset(&d.data, &s.train).unwrap();
        let post = Posterior::fit(Kernel::exponential(0.2).unwrap(), &train, 1.0).unwrap();
        for (k, sigma) in [0.1, 0.5].iter().enumerate() {
            let mut total = 0.0;
            for &i in &s.validation {
                let x = Points::new(d.data.x().row(i).to_vec(), 2).unwrap();
                let (m, v) = (post.mean(&x).unwrap()[0], post.variance(&x).unwrap()[0]);
                let p =
                    gpdp::postprocess::excursion::normal_cdf(m / (sigma * v.sqrt())).clamp(BCE_CLIP, 1.0 - BCE_CLIP);
                total += if d.labels[i] { -p.ln() } else { -(1.0 - p).ln() };
            }
            assert!((got[k] - total / s.validation.len() as f64).abs() < 1e-10);
        }
        let c = Candidate { lengthscale: 0.2, ridge: 1.0, scale: 0.1 };
        assert_eq!(obj.epsilon(&c), acc.epsilon(&c));
    }

    #[test]
    fn end_to_end_selection_and_release() {
        let cfg = tiny();
        let s = YearData::build(2017, &synthetic_points(3, 700), &cfg.hex_select, &cfg.response).unwrap();
        let r = YearData::build(2018, &synthetic_points(4, 700), &cfg.hex_release, &cfg.response).unwrap();
        let sel = select(&cfg, &s, r.n(), &|_, _, _| {}).unwrap();
        assert_eq!(sel.accounting.n, r.n());
        assert_eq!(sel.accounting.delta, (r.n() as f64).powf(-1.1));
        assert!(sel.private.best.epsilon < cfg.epsilon_max);
        assert!(sel.private.best.objective >= sel.unconstrained.best.objective);
        assert!((0.05..=0.95).contains(&sel.cutoff) && sel.cutoff_iou > 0.0);
        let mut rng = ReleaseRng::seeded(5);
        let out = release(&cfg, &sel, &r, &mut rng).unwrap();
        assert_eq!(out.probability.len(), 144);
        assert_eq!((out.paths.len(), out.paths[0].len()), (3, 100));
        assert!((out.report_one_path.epsilon - sel.private.best.epsilon).abs() <= 1e-9 * sel.private.best.epsilon);
        assert!(out.report.privacy.epsilon > out.report_one_path.epsilon);
        assert_eq!(out.report.privacy.components[0].n, r.n());
        // Reproducible with the same seed.
        let again = release(&cfg, &sel, &r, &mut ReleaseRng::seeded(5)).unwrap();
        assert_eq!(again.paths, out.paths);
        // Smoothing is applied to the released grid only.
        let smooth = RealConfig { smooth_px: 1.0, ..cfg.clone() };
        let sm = release(&smooth, &sel, &r, &mut ReleaseRng::seeded(5)).unwrap();
        assert_ne!(sm.paths, out.paths);
        // The release must be fitted to the n the selection accounted for.
        let other = YearData::build(2018, &synthetic_points(4, 300), &cfg.hex_release, &cfg.response).unwrap();
        if other.n() != r.n() {
            assert!(release(&cfg, &sel, &other, &mut rng).is_err());
        }
        let same_year = RealConfig { release_year: 2017, ..cfg };
        assert!(select(&same_year, &s, r.n(), &|_, _, _| {}).is_err());
    }
}
