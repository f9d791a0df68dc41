//! [`ReleaseSpec`]: every public keyword of a release, in one type that every
//! front end maps onto — the CLI's flags, Python's keywords and the HTTP
//! request body — and that the ledger and plan.json store.
//!
//! A spec is data (serde, unknown keys refused, a JSON Schema derived from
//! the type: [`ReleaseSpec::json_schema`]); [`ReleaseSpec::mechanism`] is the
//! one translation of it into a checked [`Mechanism`]. Which parameter is
//! solved for is an enum ([`Solved`]) derived from the keys, so no front end
//! invents a placeholder value for it.
//!
//! # Keys in messages
//!
//! The library names a spec key in an error message as `` `key` `` (with
//! backticks, e.g. `` `rkhs_norm` ``). Each front end rewrites those names
//! into its own spelling with [`render_keys`]: `--rkhs-norm` on the command
//! line, `rkhs_norm=` in Python, `rkhs_norm` over HTTP.
//!
//! ```
//! use gpdp::spec::ReleaseSpec;
//!
//! // The keys of a release, as JSON (the body of `POST /releases`, the
//! // keywords of Python's `gpdp.Mechanism`, the flags of `gpdp release`).
//! let spec: ReleaseSpec = serde_json::from_str(r#"{
//!     "kernel": "matern32", "lengthscale": 0.2, "domain": "box:0,1,0,1",
//!     "scale": 1.0, "target_epsilon": 2.0, "delta": 1e-5,
//!     "response_range": [0, 60], "snap": "20x20"
//! }"#).unwrap();
//! let mechanism = spec.mechanism(50)?;
//! assert!(mechanism.privacy().epsilon <= 2.0);
//! // Unknown keys are refused, naming the key.
//! let typo = serde_json::from_str::<ReleaseSpec>(r#"{"kernel": "matern32", "lenghtscale": 0.2}"#);
//! assert!(typo.unwrap_err().to_string().contains("lenghtscale"));
//! # Ok::<(), gpdp::Error>(())
//! ```

use std::fmt::Display;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::mechanism::{HyperparameterSource, Mechanism, MechanismParams, NeighbouringRelation};
use crate::model::domain::Domain;
use crate::model::draws::Draws;
use crate::model::kernel::{Kernel, KernelKind};
use crate::model::policy::OnUnbounded;
use crate::model::query::{CovariateLattice, parse_counts};
use crate::model::units::{ResponseRange, ResponseScale};
use crate::privacy::{Accounting, BoundChoice, ReleaseParams, SensitivityChoice, Solve};
use crate::sampling::auto::SamplerPolicy;

/// Version of the spec's schema (stored with a spec in the ledger).
pub const SPEC_VERSION: u32 = 1;

/// Every public keyword of a release. Field names are the keys (JSON,
/// Python keywords); the CLI flag of a key is `--` and the key with `_`
/// replaced by `-` (`target_epsilon` → `--target-epsilon`).
///
/// Required: `kernel`, `domain`, `delta`, `scale` (unless solved for),
/// `ridge` or `target_epsilon`, and one of `response_range`/`response_bound`;
/// `lengthscale` for kernels that have one. Everything else has a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseSpec {
    /// Kernel family: exponential, matern32, matern52, squared-exponential, constant, diagonal.
    #[serde(with = "text")]
    #[schemars(schema_with = "kernel_schema")]
    pub kernel: KernelKind,
    /// Lengthscale ℓ > 0 (required for kernels with a lengthscale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lengthscale: Option<f64>,
    /// Covariate domain Ω as text: `interval:a,b`, `box:a1,b1,a2,b2,…` or `ball:c1,…,radius`.
    #[serde(with = "text")]
    #[schemars(with = "String")]
    pub domain: Domain,
    /// Ridge r > 0 (or give `target_epsilon` to calibrate it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ridge: Option<f64>,
    /// Kernel scale σ > 0, finite, in the responses' units (the prior sd of f; required unless `solve` is `scale`); 0 with `gp_noise` > 0 for data-free noise (exact Gaussian accounting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// GP noise η ≥ 0 in the responses' units (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gp_noise: Option<f64>,
    /// Calibrate the `solve` parameter to this ε (instead of fixing it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_epsilon: Option<f64>,
    /// With `target_epsilon`: the parameter solved for, ridge (default), scale or gp-noise.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_text")]
    #[schemars(schema_with = "solve_schema")]
    pub solve: Option<Solve>,
    /// With `target_epsilon` and `solve` = ridge: the smallest ridge accepted
    /// (e.g. a plan's fitted λ/σ); the release uses it when it meets the
    /// target, so ε may be below the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ridge_floor: Option<f64>,
    /// The number L ≥ 1 of paths released (default 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    #[schemars(with = "u64", range(min = 1))]
    pub draws: Draws,
    /// δ ∈ (0, 1) of the guarantee.
    pub delta: f64,
    /// Refuse to build the mechanism if ε would exceed this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_epsilon: Option<f64>,
    /// The bound M_Y on |y| in the data's units (or give `response_range`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_bound: Option<f64>,
    /// The responses' plausible range [lo, hi] in data units (centred on its middle, the prior mean; M_Y = (hi − lo)/2).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_range")]
    #[schemars(with = "Option<[f64; 2]>")]
    pub response_range: Option<ResponseRange>,
    /// The responses' unit, a label for reports and maps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<String>,
    /// Responses beyond the bound: clip (default) or reject.
    #[serde(default, skip_serializing_if = "is_default", with = "text")]
    #[schemars(schema_with = "on_unbounded_schema")]
    pub on_unbounded: OnUnbounded,
    /// Sensitivity lemma: auto (default), b1, b7, rkhs, …
    #[serde(default, skip_serializing_if = "is_default", with = "text")]
    #[schemars(with = "String")]
    pub sensitivity: SensitivityChoice,
    /// ‖f*‖_H for `sensitivity` = rkhs (Lemma B.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rkhs_norm: Option<f64>,
    /// With Lemma B.8: the statement that every response is y = f*(x) with ‖f*‖_H ≤ `rkhs_norm`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub assume_rkhs_responses: bool,
    /// Proven bound: tight (default), joint or paper.
    #[serde(default, skip_serializing_if = "is_default", with = "text")]
    #[schemars(schema_with = "bound_schema")]
    pub bound: BoundChoice,
    /// Accounting: improved (default), paper or pld.
    #[serde(default, skip_serializing_if = "is_default", with = "text")]
    #[schemars(schema_with = "conversion_schema")]
    pub conversion: Accounting,
    /// Sampler: auto (default), dense, lattice or state-space (chosen from public inputs).
    #[serde(default, skip_serializing_if = "is_default", with = "text")]
    #[schemars(schema_with = "sampler_schema")]
    pub sampler: SamplerPolicy,
    /// Declare that every covariate lies on the lattice of N (or N1xN2…)
    /// points per axis over the domain's box (data off it are refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covariate_lattice: Option<String>,
    /// Round every covariate to the nearest node of a public lattice before
    /// the mechanism: a spacing h (a number dividing every side of the
    /// domain's box) or the lattice's counts "N" / "N1xN2".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snap: Option<Snap>,
    /// Neighbouring relation: replace-one (default; protects each record,
    /// covariates and response) or change-response (the covariates are
    /// public, each response is protected; exact Gaussian accounting).
    #[serde(default, skip_serializing_if = "is_default", with = "relation_key")]
    #[schemars(schema_with = "relation_schema")]
    pub relation: NeighbouringRelation,
}

/// The `snap` key: a spacing h, or the counts of the lattice's nodes per axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Snap {
    /// Spacing h > 0 dividing every side of the domain's box.
    Spacing(f64),
    /// "N" (every axis) or "N1xN2…" nodes, end points included (e.g. the query grid's).
    Counts(String),
}

/// Which parameter a spec fixes and which it solves for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Solved {
    /// Ridge, scale and GP noise are all given.
    Fixed,
    /// `solve` is calibrated to `target_epsilon`; with the ridge, not below `floor`.
    Calibrate {
        /// The target ε.
        target_epsilon: f64,
        /// The parameter solved for.
        solve: Solve,
        /// The smallest ridge accepted (ridge only).
        floor: Option<f64>,
    },
}

fn one() -> Draws {
    Draws::ONE
}
fn is_one(d: &Draws) -> bool {
    *d == Draws::ONE
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn is_default<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

fn missing(key: &'static str, what: &str) -> Error {
    Error::Spec { key, reason: format!("required — {what}") }
}

fn spec_err(key: &'static str, reason: impl Into<String>) -> Error {
    Error::Spec { key, reason: reason.into() }
}

/// The keys of a release that its accounting depends on, besides δ, the
/// number of draws and the conversion: kernel, lengthscale, domain, ridge,
/// scale, GP noise, response bound and the accountant's choices.
///
/// [`ModelSpec::release_params`] is the one translation of these keys into
/// [`ReleaseParams`] — used by [`ReleaseSpec::params`], by the accounting
/// front ends that have no data (`gpdp account`, `gpdp calibrate`) and by
/// batch files ([`crate::io::read_batch`], whose columns are these keys) —
/// so each key is checked the same way everywhere (e.g. `rkhs_norm` only
/// with `sensitivity` rkhs). Messages name the keys in backticks
/// ([`render_keys`]).
///
/// ```
/// use gpdp::spec::ModelSpec;
/// use gpdp::{Draws, KernelKind};
///
/// let mut m = ModelSpec::new(KernelKind::Exponential, "interval:0,1".parse()?);
/// m.lengthscale = Some(1.0);
/// m.ridge = Some(1.0);
/// m.scale = Some(f64::INFINITY);
/// let release = m.release_params(10, None)?.check()?;
/// let report = release.epsilon(Draws::new(1)?, 0.05, gpdp::Conversion::Improved)?;
/// assert!(report.epsilon > 0.0 && report.epsilon.is_finite());
/// // A key the front end forgot is named.
/// m.ridge = None;
/// assert!(m.release_params(10, None).unwrap_err().to_string().contains("`ridge`"));
/// # Ok::<(), gpdp::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    /// The kernel family.
    pub kernel: KernelKind,
    /// The lengthscale ℓ (required for every kernel but constant and diagonal, refused for those).
    pub lengthscale: Option<f64>,
    /// The public covariate domain Ω.
    pub domain: Domain,
    /// The ridge r (required unless it is solved for).
    pub ridge: Option<f64>,
    /// The kernel scale σ (required unless it is solved for; ∞ for covariance-only).
    pub scale: Option<f64>,
    /// The GP noise η (default 0).
    pub gp_noise: Option<f64>,
    /// M_Y with |y| ≤ M_Y in the responses' units (default 1).
    pub response_bound: Option<f64>,
    /// Which sensitivity lemma.
    pub sensitivity: SensitivityChoice,
    /// ‖f*‖_H for `sensitivity` rkhs.
    pub rkhs_norm: Option<f64>,
    /// Which RDP bound.
    pub bound: BoundChoice,
}

impl ModelSpec {
    /// The required keys; everything else absent or at its default.
    pub fn new(kernel: KernelKind, domain: Domain) -> Self {
        ModelSpec {
            kernel,
            lengthscale: None,
            domain,
            ridge: None,
            scale: None,
            gp_noise: None,
            response_bound: None,
            sensitivity: SensitivityChoice::default(),
            rkhs_norm: None,
            bound: BoundChoice::default(),
        }
    }

    /// The release's parameters for `n` records, unchecked (the accountant
    /// checks values: [`ReleaseParams::check`]). `solving` is the parameter
    /// a calibration solves for: it may be absent, and is then set to a
    /// value the calibration replaces (r = 1, σ = 1, η = 0).
    pub fn release_params(&self, n: usize, solving: Option<Solve>) -> Result<ReleaseParams> {
        let lengthscale = match (self.kernel.has_lengthscale(), self.lengthscale) {
            (true, None) => {
                return Err(missing("lengthscale", &format!("the lengthscale ℓ of the {} kernel", self.kernel)));
            }
            (false, Some(_)) => {
                return Err(spec_err("lengthscale", format!("the {} kernel has no lengthscale: drop it", self.kernel)));
            }
            (_, l) => l.unwrap_or(1.0),
        };
        let kernel = Kernel::new(self.kernel, lengthscale)?;
        let ridge = match self.ridge {
            Some(r) => r,
            None if solving == Some(Solve::Ridge) => 1.0,
            None => return Err(missing("ridge", "the ridge r > 0")),
        };
        let scale = match self.scale {
            Some(s) => s,
            None if solving == Some(Solve::Scale) => 1.0,
            None => return Err(missing("scale", "the kernel scale σ (> 0; inf for a covariance-only release)")),
        };
        if self.rkhs_norm.is_some() && self.sensitivity == SensitivityChoice::Auto {
            return Err(spec_err(
                "rkhs_norm",
                "is used only with `sensitivity` rkhs (Lemma B.8 assumes noiseless responses y = f*(x); choose it explicitly)",
            ));
        }
        let mut release = ReleaseParams::new(kernel, self.domain.clone(), n, ridge, scale);
        release.gp_noise = self.gp_noise.unwrap_or(0.0);
        release.response_bound = self.response_bound.unwrap_or(1.0);
        release.sensitivity = self.sensitivity;
        release.rkhs_norm = self.rkhs_norm;
        release.bound = self.bound;
        Ok(release)
    }
}

impl ReleaseSpec {
    /// A spec with the required keys; everything else at its default.
    pub fn new(kernel: KernelKind, domain: Domain, delta: f64) -> Self {
        ReleaseSpec {
            kernel,
            lengthscale: None,
            domain,
            ridge: None,
            scale: None,
            gp_noise: None,
            target_epsilon: None,
            solve: None,
            ridge_floor: None,
            draws: Draws::ONE,
            delta,
            max_epsilon: None,
            response_bound: None,
            response_range: None,
            units: None,
            on_unbounded: OnUnbounded::default(),
            sensitivity: SensitivityChoice::default(),
            rkhs_norm: None,
            assume_rkhs_responses: false,
            bound: BoundChoice::default(),
            conversion: Accounting::default(),
            sampler: SamplerPolicy::default(),
            covariate_lattice: None,
            snap: None,
            relation: NeighbouringRelation::ReplaceOne,
        }
    }

    /// Every key of the spec, in order (from its JSON Schema).
    pub fn keys() -> Vec<String> {
        let schema = Self::json_schema();
        schema.get("properties").and_then(|p| p.as_object()).map(|p| p.keys().cloned().collect()).unwrap_or_default()
    }

    /// The JSON Schema of a spec (derived from this type; the server's
    /// OpenAPI document embeds it).
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(ReleaseSpec)).expect("a schema is JSON")
    }

    /// Which parameter is fixed and which is solved for, from the keys.
    ///
    /// Errors: `ridge` and `target_epsilon` (solving the ridge) both given, or
    /// neither; `solve` or `ridge_floor` without `target_epsilon`; the solved
    /// parameter also given; `ridge_floor` with another `solve`; `solve` = draws.
    pub fn solved(&self) -> Result<Solved> {
        let Some(target_epsilon) = self.target_epsilon else {
            if self.solve.is_some() {
                return Err(spec_err("solve", "is used only with `target_epsilon` (the ε to calibrate to)"));
            }
            if self.ridge_floor.is_some() {
                return Err(spec_err(
                    "ridge_floor",
                    "is used only with `target_epsilon` (it bounds the calibrated ridge)",
                ));
            }
            if self.ridge.is_none() {
                return Err(missing("ridge", "the ridge r (or `target_epsilon` to calibrate it)"));
            }
            return Ok(Solved::Fixed);
        };
        let solve = self.solve.unwrap_or(Solve::Ridge);
        let (given, key) = match solve {
            Solve::Ridge => (self.ridge.is_some(), "ridge"),
            Solve::Scale => (self.scale.is_some(), "scale"),
            Solve::GpNoise => (self.gp_noise.is_some(), "gp_noise"),
            Solve::Draws => {
                return Err(spec_err(
                    "solve",
                    "draws is not available for a release: fix `draws` and solve for ridge, scale or gp-noise",
                ));
            }
        };
        if given {
            return Err(spec_err(
                key,
                format!("give either `{key}` or `target_epsilon` (which calibrates the {solve}), not both"),
            ));
        }
        if solve != Solve::Ridge && self.ridge_floor.is_some() {
            return Err(spec_err("ridge_floor", format!("bounds a calibrated ridge; here the {solve} is calibrated")));
        }
        if solve != Solve::Ridge && self.ridge.is_none() {
            return Err(missing("ridge", "the ridge r (`target_epsilon` calibrates the `solve` parameter)"));
        }
        Ok(Solved::Calibrate { target_epsilon, solve, floor: self.ridge_floor })
    }

    /// The responses' scale (exactly one of `response_range`, `response_bound`).
    pub fn response_scale(&self) -> Result<ResponseScale> {
        match (self.response_range, self.response_bound) {
            (Some(r), None) => Ok(ResponseScale::Range(r)),
            (None, Some(m)) => Ok(ResponseScale::Bound(m)),
            (Some(_), Some(_)) => Err(spec_err(
                "response_range",
                "give one of `response_range` (a range in data units) and `response_bound` (the bound M_Y), not both",
            )),
            (None, None) => Err(missing(
                "response_range",
                "the responses' plausible range [lo, hi] in data units, or `response_bound` M_Y on |y| (there is no default: a default of 1 would silently clip data in real units)",
            )),
        }
    }

    /// The covariate lattice declared by `covariate_lattice` or `snap`.
    pub fn lattice(&self) -> Result<Option<CovariateLattice>> {
        let dim = self.domain.dim();
        match (&self.covariate_lattice, &self.snap) {
            (Some(_), Some(_)) => Err(spec_err(
                "snap",
                "give one of `snap` (round covariates to a lattice) and `covariate_lattice` (declare that they lie on one), not both",
            )),
            (Some(l), None) => Ok(Some(CovariateLattice::parse(l, dim)?)),
            (None, Some(snap)) => {
                if !matches!(self.domain, Domain::Interval { .. } | Domain::Box { .. }) {
                    return Err(spec_err(
                        "snap",
                        format!(
                            "needs an interval or box domain (its lattice spans the domain's box), not {}",
                            self.domain
                        ),
                    ));
                }
                Ok(Some(match snap {
                    Snap::Spacing(h) => {
                        let (lo, hi) = self.domain.bounding_box();
                        CovariateLattice::snapping_with_spacing(*h, &lo, &hi)?
                    }
                    Snap::Counts(c) => CovariateLattice::snapping(parse_counts(c, dim, "snap")?)?,
                }))
            }
            (None, None) => Ok(None),
        }
    }

    /// A spec with the model keys of `model` and δ; everything else at its
    /// default (the inverse of [`Self::model`] on those keys).
    pub fn from_model(model: ModelSpec, delta: f64) -> Self {
        let mut s = ReleaseSpec::new(model.kernel, model.domain, delta);
        s.lengthscale = model.lengthscale;
        s.ridge = model.ridge;
        s.scale = model.scale;
        s.gp_noise = model.gp_noise;
        s.response_bound = model.response_bound;
        s.sensitivity = model.sensitivity;
        s.rkhs_norm = model.rkhs_norm;
        s.bound = model.bound;
        s
    }

    /// The keys the accounting depends on besides δ, `draws` and `conversion`.
    pub fn model(&self) -> ModelSpec {
        ModelSpec {
            kernel: self.kernel,
            lengthscale: self.lengthscale,
            domain: self.domain.clone(),
            ridge: self.ridge,
            scale: self.scale,
            gp_noise: self.gp_noise,
            // Set from `response_range`/`response_bound` by MechanismParams::new.
            response_bound: None,
            sensitivity: self.sensitivity,
            rkhs_norm: self.rkhs_norm,
            bound: self.bound,
        }
    }

    /// The mechanism's parameters for `n` records (the solved parameter, if
    /// any, at a value the calibration ignores).
    pub fn params(&self, n: usize) -> Result<MechanismParams> {
        let solving = match self.solved()? {
            Solved::Fixed => None,
            Solved::Calibrate { solve, .. } => Some(solve),
        };
        let release = self.model().release_params(n, solving)?;
        let mut p = MechanismParams::new(release, self.delta, self.response_scale()?);
        p.draws = self.draws;
        p.conversion = self.conversion;
        p.on_unbounded = self.on_unbounded;
        p.sampler = self.sampler;
        p.covariate_lattice = self.lattice()?;
        p.max_epsilon = self.max_epsilon;
        p.assume_rkhs_responses = self.assume_rkhs_responses;
        p.units = self.units.clone();
        p.relation = self.relation;
        Ok(p)
    }

    /// The checked (and, with `target_epsilon`, calibrated) mechanism for
    /// `n` records: the one translation of a spec into a release.
    pub fn mechanism(&self, n: usize) -> Result<Mechanism> {
        self.mechanism_from(n, HyperparameterSource::Stated)
    }

    /// [`Self::mechanism`], stating where the hyperparameters came from.
    /// Under change-one-response this is the bound for any covariates; a
    /// front end that has the data uses [`Self::mechanism_for_data`].
    pub fn mechanism_from(&self, n: usize, source: HyperparameterSource) -> Result<Mechanism> {
        self.mechanism_with(n, None, source)
    }

    /// The mechanism for releasing `data`: under change-one-response the
    /// data's covariates are the public covariates the guarantee is computed
    /// for (the data holder declared them public with the relation); under
    /// replace-one only their number n is used.
    pub fn mechanism_for_data(
        &self,
        data: &crate::model::data::Dataset,
        source: HyperparameterSource,
    ) -> Result<Mechanism> {
        let covariates = (self.relation == NeighbouringRelation::ChangeResponse).then(|| data.x());
        self.mechanism_with(data.len(), covariates, source)
    }

    /// The mechanism for `n` records, with the public covariates (n rows;
    /// change-one-response only) if given.
    pub fn mechanism_with(
        &self,
        n: usize,
        covariates: Option<&crate::model::points::Points>,
        source: HyperparameterSource,
    ) -> Result<Mechanism> {
        let mut p = self.params(n)?;
        p.hyperparameter_source = source;
        if let Some(x) = covariates {
            if self.relation != NeighbouringRelation::ChangeResponse {
                return Err(spec_err(
                    "relation",
                    "public covariates are used only with `relation` change-response (replace-one protects the covariates too)",
                ));
            }
            p.public_covariates = Some(x.clone());
        }
        match self.solved()? {
            Solved::Fixed => p.check(),
            Solved::Calibrate { target_epsilon, solve: Solve::Ridge, floor } => {
                p.calibrate_with_floor(target_epsilon, floor)
            }
            Solved::Calibrate { target_epsilon, solve, .. } => p.calibrate(solve, target_epsilon),
        }
    }
}

impl ReleaseSpec {
    /// The spec of a mechanism, however it was built: every key at the
    /// mechanism's accounted value (the solved parameter fixed, a snapping
    /// lattice as its counts). Building it again gives the same guarantee.
    ///
    /// Errors: a finite-set domain (`Domain::Points`), which has no text form.
    pub fn of(mechanism: &Mechanism) -> Result<ReleaseSpec> {
        let p = mechanism.params();
        let r = &p.release;
        if matches!(r.domain, Domain::Points(_)) {
            return Err(spec_err("domain", "a finite-set domain has no text form: it cannot be stated in a spec"));
        }
        let mut s = ReleaseSpec::new(r.kernel.kind(), r.domain.clone(), p.delta);
        s.lengthscale = r.kernel.kind().has_lengthscale().then(|| r.kernel.lengthscale());
        s.ridge = Some(r.ridge);
        s.scale = Some(r.scale);
        s.gp_noise = (r.gp_noise != 0.0).then_some(r.gp_noise);
        s.draws = p.draws;
        s.max_epsilon = p.max_epsilon;
        match p.response_range {
            Some(range) => s.response_range = Some(range),
            None => s.response_bound = Some(r.response_bound),
        }
        s.units = p.units.clone();
        s.on_unbounded = p.on_unbounded;
        s.sensitivity = r.sensitivity;
        s.rkhs_norm = r.rkhs_norm;
        s.assume_rkhs_responses = p.assume_rkhs_responses;
        s.bound = r.bound;
        s.conversion = p.conversion;
        s.sampler = p.sampler;
        s.relation = p.relation;
        match &p.covariate_lattice {
            Some(l) if l.snaps() => s.snap = Some(Snap::Counts(l.to_string())),
            Some(l) => s.covariate_lattice = Some(l.to_string()),
            None => {}
        }
        Ok(s)
    }

    /// This spec with the solved parameter fixed at the value `mechanism`
    /// accounted (no `target_epsilon`, `solve` or `ridge_floor`): it builds
    /// the same mechanism without calibrating (stored by the ledger and the
    /// server, so that a later reading needs no calibration).
    pub fn resolved(&self, mechanism: &Mechanism) -> ReleaseSpec {
        let r = &mechanism.params().release;
        let mut s = self.clone();
        if let Some(Solve::Scale) = s.target_epsilon.and(Some(s.solve.unwrap_or(Solve::Ridge))) {
            s.scale = Some(r.scale);
        }
        if let Some(Solve::GpNoise) = s.target_epsilon.and(Some(s.solve.unwrap_or(Solve::Ridge))) {
            s.gp_noise = Some(r.gp_noise);
        }
        s.ridge = Some(r.ridge);
        s.target_epsilon = None;
        s.solve = None;
        s.ridge_floor = None;
        s
    }
}

/// How a front end spells a spec key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// `--target-epsilon`.
    Flag,
    /// `target_epsilon` (a keyword argument).
    Keyword,
    /// `target_epsilon` (a JSON field).
    Field,
}

/// A spec key in `spelling`.
pub fn spell(key: &str, spelling: Spelling) -> String {
    match spelling {
        Spelling::Flag => format!("--{}", key.replace('_', "-")),
        Spelling::Keyword | Spelling::Field => key.to_string(),
    }
}

/// Rewrites every `` `key` `` in a library message (a spec key in
/// backticks) into the front end's spelling; other back-quoted text is left.
pub fn render_keys(message: &str, spelling: Spelling) -> String {
    let keys = ReleaseSpec::keys();
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        match after.find('`') {
            Some(end) if keys.iter().any(|k| k == &after[..end]) => {
                out.push_str(&rest[..start]);
                out.push_str(&spell(&after[..end], spelling));
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&rest[..=start]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn enum_schema(values: &[&str]) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": values })
}
fn kernel_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    enum_schema(&["exponential", "matern32", "matern52", "squared-exponential", "constant", "diagonal"])
}
fn solve_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    enum_schema(&["ridge", "scale", "gp-noise"])
}
fn on_unbounded_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    enum_schema(&["clip", "reject"])
}
fn bound_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    enum_schema(&["tight", "joint", "paper"])
}
fn conversion_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    enum_schema(&["improved", "paper", "pld"])
}
fn relation_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    enum_schema(&["replace-one", "change-response"])
}
fn sampler_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    enum_schema(&["auto", "dense", "lattice", "state-space"])
}

/// serde through `Display`/`FromStr` (the values' text form).
mod text {
    use super::*;
    pub fn serialize<T: Display, S: serde::Serializer>(v: &T, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(v)
    }
    pub fn deserialize<'de, T, D>(d: D) -> std::result::Result<T, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: serde::Deserializer<'de>,
    {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The relation by its key (`replace-one`, `change-response`).
mod relation_key {
    use super::*;
    pub fn serialize<S: serde::Serializer>(v: &NeighbouringRelation, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(v.key())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<NeighbouringRelation, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

mod opt_text {
    use super::*;
    pub fn serialize<T: Display, S: serde::Serializer>(v: &Option<T>, s: S) -> std::result::Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.collect_str(v),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, T, D>(d: D) -> std::result::Result<Option<T>, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: serde::Deserializer<'de>,
    {
        Option::<String>::deserialize(d)?.map(|s| s.parse().map_err(serde::de::Error::custom)).transpose()
    }
}

mod opt_range {
    use super::*;
    pub fn serialize<S: serde::Serializer>(v: &Option<ResponseRange>, s: S) -> std::result::Result<S::Ok, S::Error> {
        v.map(|r| [r.lo, r.hi]).serialize(s)
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<ResponseRange>, D::Error> {
        Option::<[f64; 2]>::deserialize(d)?
            .map(|[lo, hi]| ResponseRange::new(lo, hi).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests;
