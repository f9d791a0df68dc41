//! The 1-D excursion-set study end to end (the paper's §5 and App. D;
//! docs/experiments.md; Tables 1–3):
//!
//! 1. generate N main and N_val validation (D, f*) pairs ([`pairs1d`]);
//! 2. θ* = argmin_θ L̂_BCE(θ) and θ_priv = argmin_{θ: ε_L(θ) < ε₀} L̂_BCE(θ)
//!    on the main pairs ([`objective1d`], [`search`]: coarse grid, then
//!    refinement rounds around the top 3, feasible ones for θ_priv);
//! 3. C (and c for L > 1) on the validation pairs ([`evaluate1d`]);
//! 4. per main pair: BCE, d_eff, IoU of {p ≥ C}, and B Monte Carlo
//!    repetitions of the L-path release at both θ;
//! 5. the summary with the paper's columns ([`summary1d`]).
//!
//! Hyperparameters are chosen on synthetic pairs, never on the data a
//! release is fitted to, as the paper's §6 requires: the guarantee assumes
//! θ independent of the private data.
//!
//! Seeds: main pair j uses [`pair_seed`]`(seed, j)` = seed + 10007·j,
//! validation pair j seed + 10⁷ + 10007·j; released draws of main pair j
//! seed + 2·10⁷ + 10007·j and of validation pair j seed + 3·10⁷ + 10007·j
//! (the same streams at θ* and θ_priv). Results do not depend on the
//! number of threads.
//!
//! [`pairs1d`]: super::pairs1d
//! [`objective1d`]: super::objective1d
//! [`search`]: super::search
//! [`evaluate1d`]: super::evaluate1d
//! [`summary1d`]: super::summary1d
//! [`pair_seed`]: super::pairs1d::pair_seed

use gpdp::privacy::SensitivityConstants;
use gpdp::{Conversion, Draws};
use serde::Serialize;

use super::accounting::{StudyAccounting, StudyModel};
use super::evaluate1d::{EvalSettings, PairEval, choose_set_cutoff, choose_vote_cutoff, evaluate_pairs, unit_grid};
use super::objective1d::Bce1d;
use super::pairs1d::{Mesh1d, PairSet1d, PairSpec, TargetRejection};
use super::search::{Evaluated, SearchResult, SearchSpec, search};
use super::summary1d::{Selection, Summary1d, summarise};
use crate::error::{Error, Result, invalid};

/// Offset between the seed bases of the study's random streams.
pub const STREAM_OFFSET: u64 = 10_000_000;

/// Everything a 1-D study needs. [`Default`] is the paper's setting for
/// Table 1's NSR = 1 column (M_ξ = 0.5, n = 100).
#[derive(Debug, Clone, PartialEq)]
pub struct Study1dConfig {
    /// Training-set size n = |D|.
    pub n: usize,
    /// Noise bound M_ξ ∈ [0, 1).
    pub noise: f64,
    /// Main pairs N (search and evaluation).
    pub pairs: usize,
    /// Validation pairs (cutoffs only).
    pub validation_pairs: usize,
    /// Mesh points m on [0, 1].
    pub mesh_points: usize,
    /// ℓ_gen of the generating GP.
    pub generating_lengthscale: f64,
    /// Excursion level t.
    pub level: f64,
    /// Optional rejection of degenerate targets (the authors' option; off
    /// in the paper's text).
    pub target_rejection: Option<TargetRejection>,
    /// Probability clip c of the BCE.
    pub clip: f64,
    /// Monte Carlo repetitions B of the release per pair.
    pub draws_per_pair: usize,
    /// Paths per release L.
    pub draws: Draws,
    /// Privacy budget ε₀ (feasible: ε < ε₀).
    pub epsilon_max: f64,
    /// δ.
    pub delta: f64,
    /// RDP → (ε, δ) conversion.
    pub conversion: Conversion,
    /// Constants of Lemma B.7.
    pub constants: SensitivityConstants,
    /// The proven bound [tight]; the published constants need `Paper`.
    pub bound: gpdp::BoundChoice,
    /// The search grid; `search.rounds` applies to the unconstrained search.
    pub search: SearchSpec,
    /// Refinement rounds of the constrained search.
    pub private_rounds: usize,
    /// Points of the cutoff grid for C on [0, 1].
    pub cutoff_points: usize,
    /// Base seed.
    pub seed: u64,
}

/// The paper's search (App. D; the authors' grids, docs/experiments.md): coarse
/// ℓ × r × σ = 9 × 7 × 6, two refinement rounds around the top 3 with
/// ℓ × {0.7, 0.85, 1, 1.2, 1.5}, r and σ × {0.4, …, 4} and, around σ = 0,
/// σ ∈ {0, 0.025, …, 0.75}.
pub fn paper_search_spec() -> SearchSpec {
    let factors = vec![0.4, 0.55, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0, 3.0, 4.0];
    SearchSpec {
        lengthscales: vec![0.08, 0.13, 0.2, 0.25, 0.35, 0.5, 0.6, 0.75, 1.0],
        ridges: vec![0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0],
        scales: vec![0.0, 0.1, 0.5, 1.0, 2.0, 5.0],
        rounds: 2,
        top_k: 3,
        ell_factors: vec![0.7, 0.85, 1.0, 1.2, 1.5],
        ridge_factors: factors.clone(),
        scale_factors: factors,
        zero_scale_values: vec![0.0, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75],
        ell_range: (1e-3, 1e3),
        ridge_range: (1e-3, 1e3),
        scale_range: (0.0, 1e3),
    }
}

impl Default for Study1dConfig {
    fn default() -> Self {
        Study1dConfig {
            n: 100,
            noise: 0.5,
            pairs: 1000,
            validation_pairs: 1000,
            mesh_points: 800,
            generating_lengthscale: 1.0,
            level: 0.0,
            target_rejection: None,
            clip: 1e-6,
            draws_per_pair: 50,
            draws: Draws::ONE,
            epsilon_max: 10.0,
            delta: 0.005,
            conversion: Conversion::Paper,
            constants: SensitivityConstants::Proven,
            bound: gpdp::BoundChoice::Tight,
            search: paper_search_spec(),
            private_rounds: 2,
            cutoff_points: 101,
            seed: 0,
        }
    }
}

fn check_values(field: &'static str, v: &[f64], allow_zero: bool) -> Result<()> {
    if v.is_empty() {
        return Err(Error::InvalidConfig { field, value: "[]".into(), requirement: "a non-empty list" });
    }
    for &x in v {
        let ok = x.is_finite() && (x > 0.0 || (allow_zero && x == 0.0));
        if !ok {
            return Err(invalid(field, x, if allow_zero { "finite and ≥ 0" } else { "finite and > 0" }));
        }
    }
    Ok(())
}

impl Study1dConfig {
    /// The pair generator's settings.
    pub fn pair_spec(&self) -> PairSpec {
        PairSpec {
            n: self.n,
            noise: self.noise,
            generating_lengthscale: self.generating_lengthscale,
            level: self.level,
            rejection: self.target_rejection,
        }
    }

    /// The accountant's settings.
    pub fn accounting(&self) -> StudyAccounting {
        StudyAccounting {
            model: StudyModel::Interval,
            n: self.n,
            draws: self.draws,
            delta: self.delta,
            conversion: self.conversion,
            constants: self.constants,
            bound: self.bound,
        }
    }

    /// Refuses studies that would not fit in memory or would run for more
    /// than a week: each pair keeps its n records, its truth on the m-point
    /// mesh and a Kalman workspace of 5(n + m) numbers; the search evaluates
    /// its candidates on every main pair in O(n + m), and the evaluation
    /// draws B·L paths per pair in O(n + m).
    pub fn check_resources(&self) -> Result<()> {
        let (n, m) = (self.n as f64, self.mesh_points as f64);
        let pairs = (self.pairs + self.validation_pairs) as f64;
        gpdp::check_memory(
            "this study",
            &[gpdp::Need::doubles(
                "the pairs and their Kalman workspaces (pairs × (3n + 6m))",
                pairs * (3.0 * n + 6.0 * m),
            )],
            "use fewer pairs or mesh points",
        )?;
        let s = &self.search;
        let candidates = (s.lengthscales.len() * s.ridges.len() * s.scales.len()) as f64 * (1.0 + s.rounds as f64);
        let units = pairs * (n + m) * (candidates + 2.0 * self.draws_per_pair as f64 * self.draws.as_f64());
        Ok(gpdp::check_work("this study", units, 1e8, "use fewer pairs, draws or candidates")?)
    }

    /// Checks every field.
    pub fn validate(&self) -> Result<()> {
        self.pair_spec().validate()?;
        self.accounting().check()?;
        let count = |field: &'static str, v: usize, min: usize, req: &'static str| {
            if v < min { Err(invalid(field, v as f64, req)) } else { Ok(()) }
        };
        count("main pairs", self.pairs, 1, "at least 1")?;
        count("validation pairs", self.validation_pairs, 1, "at least 1")?;
        self.check_resources()?;
        count("mesh points m", self.mesh_points, 2, "at least 2")?;
        count("draws per pair B", self.draws_per_pair, 1, "at least 1")?;
        count("cutoff grid points", self.cutoff_points, 2, "at least 2")?;
        count("top-k anchors", self.search.top_k, 1, "at least 1")?;
        if !(self.clip > 0.0 && self.clip < 0.5) {
            return Err(invalid("probability clip c", self.clip, "in (0, 0.5)"));
        }
        if !(self.epsilon_max > 0.0) || self.epsilon_max.is_nan() {
            return Err(invalid("privacy budget ε₀", self.epsilon_max, "> 0"));
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(invalid("δ", self.delta, "in (0, 1)"));
        }
        let s = &self.search;
        check_values("lengthscale grid ℓ", &s.lengthscales, false)?;
        check_values("ridge grid r", &s.ridges, false)?;
        check_values("scale grid σ", &s.scales, true)?;
        check_values("ℓ refinement factors", &s.ell_factors, false)?;
        check_values("r refinement factors", &s.ridge_factors, false)?;
        check_values("σ refinement factors", &s.scale_factors, false)?;
        check_values("σ values around σ = 0", &s.zero_scale_values, true)?;
        Ok(())
    }
}

/// Which part of the study is running (for progress reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Stage {
    /// Generating pairs.
    Pairs,
    /// The unconstrained search (progress per (ℓ, r) group of a batch).
    UnconstrainedSearch,
    /// The constrained search.
    PrivateSearch,
    /// Cutoffs on the validation pairs.
    Cutoffs,
    /// Per-pair evaluation at θ* and θ_priv.
    Evaluation,
}

/// The outcome of one study.
#[derive(Debug, Clone, PartialEq)]
pub struct Study1dResult {
    /// The configuration.
    pub config: Study1dConfig,
    /// The unconstrained search.
    pub unconstrained_search: SearchResult,
    /// The constrained search.
    pub private_search: SearchResult,
    /// Per-pair results at θ*.
    pub unconstrained_rows: Vec<PairEval>,
    /// Per-pair results at θ_priv.
    pub private_rows: Vec<PairEval>,
    /// The summary.
    pub summary: Summary1d,
}

/// What a study computed (everything of a [`Study1dResult`] but its
/// configuration, which its flags give): the unit of a sharded run
/// (`crate::shard`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Study1dOutcome {
    /// The unconstrained search.
    pub unconstrained_search: SearchResult,
    /// The constrained search.
    pub private_search: SearchResult,
    /// Per-pair results at θ*.
    pub unconstrained_rows: Vec<PairEval>,
    /// Per-pair results at θ_priv.
    pub private_rows: Vec<PairEval>,
    /// The summary.
    pub summary: Summary1d,
}

impl Study1dResult {
    /// The computed part, without the configuration.
    pub fn outcome(self) -> Study1dOutcome {
        Study1dOutcome {
            unconstrained_search: self.unconstrained_search,
            private_search: self.private_search,
            unconstrained_rows: self.unconstrained_rows,
            private_rows: self.private_rows,
            summary: self.summary,
        }
    }

    /// The result of `config` with a computed `outcome`.
    pub fn from_outcome(config: Study1dConfig, o: Study1dOutcome) -> Self {
        Study1dResult {
            config,
            unconstrained_search: o.unconstrained_search,
            private_search: o.private_search,
            unconstrained_rows: o.unconstrained_rows,
            private_rows: o.private_rows,
            summary: o.summary,
        }
    }
}

fn selection(
    val: &PairSet1d,
    best: &Evaluated,
    cfg: &Study1dConfig,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
    step: usize,
) -> Result<Selection> {
    let grid = unit_grid(cfg.cutoff_points);
    let theta = best.candidate;
    let (set_cutoff, set_iou) = choose_set_cutoff(val, &theta, &grid)?;
    progress(Stage::Cutoffs, step + 1, 4);
    let vote_base = cfg.seed.wrapping_add(3 * STREAM_OFFSET);
    let (vote_cutoff, vote_iou) = choose_vote_cutoff(val, &theta, cfg.draws, cfg.draws_per_pair, vote_base)?;
    progress(Stage::Cutoffs, step + 2, 4);
    Ok(Selection {
        theta,
        mean_bce: best.objective,
        epsilon: best.epsilon,
        set_cutoff,
        set_cutoff_validation_iou: set_iou,
        vote_cutoff,
        vote_cutoff_validation_iou: vote_iou,
    })
}

/// Runs one study. `progress(stage, done, total)` reports progress.
pub fn run_study1d(cfg: &Study1dConfig, progress: &(dyn Fn(Stage, usize, usize) + Sync)) -> Result<Study1dResult> {
    cfg.validate()?;
    let mesh = Mesh1d::new(cfg.mesh_points)?;
    let spec = cfg.pair_spec();
    progress(Stage::Pairs, 0, 2);
    let main = PairSet1d::generate(&spec, &mesh, cfg.pairs, cfg.seed)?;
    progress(Stage::Pairs, 1, 2);
    let val = PairSet1d::generate(&spec, &mesh, cfg.validation_pairs, cfg.seed.wrapping_add(STREAM_OFFSET))?;
    progress(Stage::Pairs, 2, 2);

    let obj = Bce1d::new(&main, cfg.clip, cfg.accounting())?;
    let unconstrained_search = search(&cfg.search, &obj, None, &|d, t| progress(Stage::UnconstrainedSearch, d, t))
        .ok_or_else(|| Error::NoFeasibleCandidate("no candidate has a finite objective".into()))?;
    let private_spec = SearchSpec { rounds: cfg.private_rounds, ..cfg.search.clone() };
    let private_search =
        search(&private_spec, &obj, Some(cfg.epsilon_max), &|d, t| progress(Stage::PrivateSearch, d, t)).ok_or_else(
            || {
                Error::NoFeasibleCandidate(format!(
                    "no candidate of the search grid has ε < ε₀ = {} (δ = {}, L = {}); widen the grid \
                     (larger r, larger σ) or raise ε₀",
                    cfg.epsilon_max, cfg.delta, cfg.draws
                ))
            },
        )?;

    progress(Stage::Cutoffs, 0, 4);
    let star = selection(&val, &unconstrained_search.best, cfg, progress, 0)?;
    let priv_ = selection(&val, &private_search.best, cfg, progress, 2)?;

    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = 2 * main.len();
    let tick = || progress(Stage::Evaluation, done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, total);
    let settings = |s: &Selection| EvalSettings {
        set_cutoff: s.set_cutoff,
        vote_cutoff: s.vote_cutoff,
        draws: cfg.draws,
        reps: cfg.draws_per_pair,
        seed_base: cfg.seed.wrapping_add(2 * STREAM_OFFSET),
        clip: cfg.clip,
    };
    let unconstrained_rows = evaluate_pairs(&main, &star.theta, &settings(&star), &tick)?;
    let private_rows = evaluate_pairs(&main, &priv_.theta, &settings(&priv_), &tick)?;
    let summary = summarise(
        cfg.n,
        cfg.noise,
        cfg.draws,
        cfg.epsilon_max,
        cfg.constants,
        star,
        priv_,
        &unconstrained_rows,
        &private_rows,
    );
    Ok(Study1dResult {
        config: cfg.clone(),
        unconstrained_search,
        private_search,
        unconstrained_rows,
        private_rows,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Study1dConfig {
        let mut s = paper_search_spec();
        s.lengthscales = vec![0.2, 0.5];
        s.ridges = vec![0.2, 1.0, 5.0];
        s.scales = vec![0.0, 0.1, 1.0];
        s.rounds = 1;
        s.ell_factors = vec![0.85, 1.0];
        s.ridge_factors = vec![0.7, 1.0, 1.5];
        s.scale_factors = vec![0.7, 1.0, 1.5];
        s.zero_scale_values = vec![0.0, 0.05];
        Study1dConfig {
            n: 30,
            pairs: 12,
            validation_pairs: 10,
            mesh_points: 100,
            draws_per_pair: 5,
            search: s,
            private_rounds: 1,
            ..Study1dConfig::default()
        }
    }

    #[test]
    fn tiny_study_runs_and_is_thread_count_independent() {
        let cfg = tiny();
        let a = run_study1d(&cfg, &|_, _, _| {}).unwrap();
        let s = &a.summary;
        assert!(s.private.epsilon < cfg.epsilon_max);
        assert!(s.unconstrained.mean_bce <= s.private.mean_bce);
        assert_eq!(a.unconstrained_rows.len(), 12);
        assert!(a.private_rows.iter().all(|r| (0.0..=1.0).contains(&r.path_iou_mean) && r.path_iou_sd >= 0.0));
        // The search objective equals the mean of the evaluated per-pair BCE.
        let mean = a.unconstrained_rows.iter().map(|r| r.bce).sum::<f64>() / 12.0;
        assert!((mean - s.unconstrained.mean_bce).abs() < 1e-9, "{mean} vs {}", s.unconstrained.mean_bce);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let b = one.install(|| run_study1d(&cfg, &|_, _, _| {}).unwrap());
        // (Debug text: NaN fields make PartialEq fail on identical results.)
        assert!(format!("{a:?}") == format!("{b:?}"), "results depend on the thread count");
    }

    #[test]
    fn invalid_configs_are_refused() {
        let bad = |f: &dyn Fn(&mut Study1dConfig)| {
            let mut c = tiny();
            f(&mut c);
            run_study1d(&c, &|_, _, _| {}).unwrap_err()
        };
        assert!(matches!(bad(&|c| c.noise = 1.0), Error::InvalidConfig { .. }));
        assert!(matches!(bad(&|c| c.delta = 0.0), Error::InvalidConfig { .. }));
        assert!(matches!(bad(&|c| c.pairs = 0), Error::InvalidConfig { .. }));
        assert!(matches!(bad(&|c| c.draws_per_pair = 0), Error::InvalidConfig { .. }));
        assert!(matches!(bad(&|c| c.search.ridges = vec![-1.0]), Error::InvalidConfig { .. }));
        assert!(matches!(bad(&|c| c.search.scales = vec![f64::NAN]), Error::InvalidConfig { .. }));
        // Nothing feasible: σ = 0 only.
        let e = bad(&|c| {
            c.search.scales = vec![0.0];
            c.search.zero_scale_values = vec![0.0];
        });
        assert!(matches!(e, Error::NoFeasibleCandidate(_)), "{e}");
    }
}
