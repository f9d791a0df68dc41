//! The private release: the one place where the accountant and the sampler
//! meet (OpenDP's idea of a measurement that owns its privacy map; linfa's
//! checked parameters).
//!
//! A [`Mechanism`] is built only from checked [`MechanismParams`] — the
//! public description of the release (kernel, domain, n, ridge r, scale σ,
//! GP noise η, response bound, sensitivity lemma, number of draws L, δ, the
//! data policy and the sampler policy), optionally calibrated to a target ε.
//! Building it computes the guarantee; it cannot change afterwards (the
//! mechanism has no public fields and no setters). Then
//! [`Mechanism::release`]
//!
//! 1. applies the data policy ([`crate::model::policy`]): exactly n records,
//!    covariates in Ω (and on the declared lattice), responses clipped to
//!    [−M_Y, M_Y] or refused;
//! 2. fits the exact posterior with exactly the accounted r;
//! 3. draws exactly the accounted L paths of f = μ_D + σz + ηg with the
//!    sampler chosen from public inputs ([`crate::SamplerPlan`]);
//! 4. returns the paths together with the public [`ReleaseReport`] — and,
//!    apart, the operator's [`Diagnostics`] (clipping counts, timings), which
//!    are facts about the private data and must not be published.
//!
//! [`Mechanism::sample_paths`] is the same release evaluated lazily: L paths
//! that can be evaluated anywhere, batch after batch, consistently and at no
//! extra privacy cost (docs/model.md).
//!
//! # What is guaranteed
//!
//! Publishing the paths and the report of one call is (ε, δ)-differentially
//! private for the replace-one relation on datasets of n records, with ε and
//! δ as [`Mechanism::privacy`] reports (Theorem 3.1 / Proposition 2 with the
//! bounds named in the report), provided the hyperparameters were chosen
//! without the private data and the generator is OS-seeded
//! ([`ReleaseRng::from_os`]). Every call is a fresh release: k calls on the
//! same data cost k times the budget (compose them with
//! [`crate::privacy::RdpAccountant`]).

mod lazy;
mod progress;
mod report;

use std::time::Instant;

use crate::error::{Error, Result, fmt_value};
use crate::model::data::Dataset;
use crate::model::draws::Draws;
use crate::model::points::Points;
use crate::model::policy::{DataPolicy, OnUnbounded, PolicyOutcome};
use crate::model::query::{CovariateLattice, Query};
use crate::model::units::{ResponseRange, ResponseScale};
use crate::posterior::Posterior;
use crate::privacy::{
    Accounting, Calibration, PrivacyReport, Release, ReleaseParams, Solve, Target, calibrate, change_response,
    data_free,
};
use crate::resources::{Need, check_memory};
use crate::rng::ReleaseRng;
use crate::sampling::{Process, Sampler, SamplerPlan, SamplerPolicy, StateSpaceSampler};

pub use lazy::{LazyRelease, PosteriorSystem, PrivatePath};
pub use progress::{NoProgress, Progress};
pub use report::{
    CalibrationSummary, DataPolicySummary, HyperparameterSource, NeighbouringRelation, REPORT_SCHEMA_VERSION,
    ReleaseReport, statement,
};

/// The public description of a release, before it is checked.
///
/// ```
/// use gpdp::model::units::ResponseRange;
/// use gpdp::{Domain, Draws, Kernel, MechanismParams, ReleaseParams, ResponseScale};
///
/// // An exponential kernel with ℓ = 2 on [0, 10] (data units), n = 20 records, ridge r = 2, scale σ = 10 °C; responses in
/// // the public range [0, 40] °C (prior mean 20 °C, M_Y = 20 °C); three paths; δ = 10⁻⁵.
/// let model = ReleaseParams::new(Kernel::exponential(2.0)?, Domain::interval(0.0, 10.0)?, 20, 2.0, 10.0);
/// let mut params = MechanismParams::new(model, 1e-5, ResponseScale::Range(ResponseRange::new(0.0, 40.0)?));
/// params.draws = Draws::new(3)?;
/// params.units = Some("°C".into());
/// let mechanism = params.check()?;
/// let report = mechanism.privacy();
/// assert!(report.epsilon.is_finite() && report.delta == 1e-5);
/// // Calibrating instead: the smallest scale σ that gives ε ≤ 5.
/// let calibrated = params.calibrate(gpdp::Solve::Scale, 5.0)?;
/// assert!(calibrated.privacy().epsilon <= 5.0);
/// # Ok::<(), gpdp::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MechanismParams {
    /// Kernel, domain, n, r, σ, η, M_Y and the sensitivity lemma.
    pub release: ReleaseParams,
    /// The number L of paths released.
    pub draws: Draws,
    /// δ of the guarantee.
    pub delta: f64,
    /// The accounting: the RDP accountant with a conversion ("improved",
    /// "paper") or the PLD accountant ("pld").
    pub conversion: Accounting,
    /// Clip or reject responses beyond M_Y.
    pub on_unbounded: OnUnbounded,
    /// Which exact sampler (chosen from public inputs).
    pub sampler: SamplerPolicy,
    /// A declared lattice holding every covariate, if any.
    pub covariate_lattice: Option<CovariateLattice>,
    /// Refuse to build the mechanism if ε would exceed this.
    pub max_epsilon: Option<f64>,
    /// With Lemma B.8: the data holder's statement that every response is
    /// the noiseless value y = f*(x) of a function with ‖f*‖_H ≤ B. The
    /// guarantee then rests on it; it cannot be checked from the data.
    pub assume_rkhs_responses: bool,
    /// Responses in data units with a public range [lo, hi]: centred on its
    /// middle before the mechanism (then M_Y must be the half-width
    /// (hi − lo)/2), and the released values shifted back (`model::units`).
    /// σ and η stay in data units.
    pub response_range: Option<ResponseRange>,
    /// The responses' unit, a public label for reports and maps.
    pub units: Option<String>,
    /// Where the hyperparameters came from (stated in the report).
    pub hyperparameter_source: HyperparameterSource,
    /// The neighbouring relation the guarantee is for: replace-one (default)
    /// or change-one-response (covariates public; exact Gaussian accounting,
    /// docs/proofs/change-response.md).
    pub relation: NeighbouringRelation,
    /// Under change-one-response: the public covariates (n rows) the
    /// guarantee is computed for — a release refuses data with other
    /// covariates. `None`: the bound for any covariates.
    pub public_covariates: Option<Points>,
}

/// What sampling a release will cost, estimated from public inputs
/// ([`Mechanism::check_resources`]; `SamplerPlan::cost_estimate`): rough and
/// conservative, for announcing long runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CostEstimate {
    /// The sampler.
    pub method: &'static str,
    /// The lattice sampler's torus, per axis.
    pub torus: Option<Vec<usize>>,
    /// Memory of the sampling, in bytes.
    pub bytes: f64,
    /// Time of the sampling, in seconds.
    pub seconds: f64,
}

impl MechanismParams {
    /// The response scale the mechanism was built with.
    pub fn response_scale(&self) -> ResponseScale {
        match self.response_range {
            Some(r) => ResponseScale::Range(r),
            None => ResponseScale::Bound(self.release.response_bound),
        }
    }

    /// One draw, the improved conversion, clipping, automatic sampler, no
    /// lattice, no cap on ε — and the responses' scale, which has no
    /// default ([`ResponseScale`]): `Bound(M)` sets `release.response_bound`
    /// to M and no range; `Range([lo, hi])` centres the responses on the
    /// range's middle and sets M_Y = (hi − lo)/2. Either way `release.scale`
    /// and `release.gp_noise` are in the responses' units.
    pub fn new(mut release: ReleaseParams, delta: f64, response: ResponseScale) -> Self {
        release.response_bound = response.bound();
        MechanismParams {
            release,
            draws: Draws::ONE,
            delta,
            conversion: Accounting::default(),
            on_unbounded: OnUnbounded::default(),
            sampler: SamplerPolicy::default(),
            covariate_lattice: None,
            max_epsilon: None,
            assume_rkhs_responses: false,
            response_range: response.range(),
            units: None,
            hyperparameter_source: HyperparameterSource::Stated,
            relation: NeighbouringRelation::ReplaceOne,
            public_covariates: None,
        }
    }

    /// Checks the parameters and computes the guarantee.
    ///
    /// Errors: anything [`ReleaseParams::check`] refuses; σ = ∞ (a release
    /// needs a finite scale); n < 2; a malformed data policy; ε above
    /// `max_epsilon` (nothing is released).
    pub fn check(&self) -> Result<Mechanism> {
        let release = self.checked_release()?;
        let privacy = self.guarantee(&release)?;
        Mechanism::assemble(self.clone(), release, privacy, None)
    }

    /// The guarantee of these parameters: the RDP or PLD accountant under
    /// replace-one; under change-one-response the exact Gaussian statement
    /// with the public covariates as the release will fit them (snapped onto
    /// a snapping lattice), or the bound for any covariates.
    fn guarantee(&self, release: &Release) -> Result<PrivacyReport> {
        match self.relation {
            NeighbouringRelation::ReplaceOne => {
                if self.public_covariates.is_some() {
                    return Err(Error::Input(
                        "public covariates are used only under change-one-response (the replace-one guarantee protects the covariates too); drop them or choose --relation change-response".into(),
                    ));
                }
                if data_free::is_data_free(&self.release) {
                    return data_free::account(&self.release, self.draws, Some(self.delta), None)?
                        .privacy_report(self.conversion);
                }
                release.epsilon(self.draws, self.delta, self.conversion)
            }
            NeighbouringRelation::ChangeResponse => {
                let x = self.accounted_covariates()?;
                change_response::account(&self.release, self.draws, x.as_ref(), Some(self.delta), None)?
                    .privacy_report(self.conversion)
            }
        }
    }

    /// The checked release description. For a data-free-noise release
    /// (σ = 0, η > 0, docs/proofs/data-free-noise.md) that of the same
    /// parameters with σ = 1, whose bounds V̂ and Δ̂ do not depend on σ (the
    /// guarantee is computed from Δ̂ alone).
    fn checked_release(&self) -> Result<Release> {
        if data_free::is_data_free(&self.release) {
            crate::error::release_scale(self.release.scale, self.release.gp_noise)?;
            let mut twin = self.release.clone();
            twin.scale = 1.0;
            return twin.check();
        }
        self.release.check()
    }

    /// The public covariates as the release fits them (None: not given).
    fn accounted_covariates(&self) -> Result<Option<Points>> {
        self.public_covariates.as_ref().map(|x| self.policy().covariates(x)).transpose()
    }

    /// Solves for the smallest ridge r, scale σ or GP noise η that meets
    /// `target_epsilon` at δ with these L draws (the field being solved for
    /// is ignored), then checks as [`Self::check`]. The number of draws is
    /// not a release parameter to calibrate: fix it.
    pub fn calibrate(&self, solve: Solve, target_epsilon: f64) -> Result<Mechanism> {
        if solve == Solve::Draws {
            return Err(Error::Unsupported(
                "calibrating the number of draws is not available for a release; fix the draws and solve for ridge, scale or gp-noise".into(),
            ));
        }
        let c = match self.relation {
            NeighbouringRelation::ReplaceOne if !data_free::is_data_free(&self.release) => {
                let target = Target { epsilon: target_epsilon, delta: self.delta, conversion: self.conversion };
                calibrate(&self.release, self.draws, solve, target)?
            }
            NeighbouringRelation::ChangeResponse => self.calibrate_change_response(solve, target_epsilon)?,
            NeighbouringRelation::ReplaceOne => {
                data_free::calibration(&self.release, self.draws, solve, target_epsilon, self.delta, self.conversion)?
            }
        };
        let mut params = self.clone();
        match solve {
            Solve::Ridge => params.release.ridge = c.value,
            Solve::Scale => params.release.scale = c.value,
            Solve::GpNoise => params.release.gp_noise = c.value,
            Solve::Draws => unreachable!("refused above"),
        }
        let release = params.checked_release()?;
        let privacy = params.guarantee(&release)?;
        if privacy != c.report {
            return Err(Error::Unreachable(format!(
                "the calibrated {solve} = {} does not reproduce its own report (ε {} vs {})",
                c.value, privacy.epsilon, c.report.epsilon
            )));
        }
        Mechanism::assemble(params, release, privacy, Some((c, target_epsilon)))
    }

    /// [`change_response::calibration`] with the covariates as the release fits them.
    fn calibrate_change_response(&self, solve: Solve, target_epsilon: f64) -> Result<Calibration> {
        let x = self.accounted_covariates()?;
        change_response::calibration(
            &self.release,
            self.draws,
            x.as_ref(),
            solve,
            target_epsilon,
            self.delta,
            self.conversion,
        )
    }

    /// The mechanism for `target_epsilon`: the smallest ridge meeting it, or
    /// `ridge_floor` when that is larger and the accountant's ε there is within
    /// the target too (it is then below it). With a floor, a target every ridge
    /// meets is served at the floor. The ε is always the accountant's at the
    /// ridge used, and never above the target.
    pub fn calibrate_with_floor(&self, target_epsilon: f64, ridge_floor: Option<f64>) -> Result<Mechanism> {
        let params = self;
        let calibrated = params.calibrate(Solve::Ridge, target_epsilon);
        let floor = match ridge_floor {
            Some(f) if f.is_finite() && f > 0.0 => f,
            Some(f) => {
                return Err(Error::InvalidParameter {
                    name: "ridge floor",
                    value: fmt_value(f),
                    requirement: "finite and > 0",
                });
            }
            None => return calibrated,
        };
        match calibrated {
            Ok(m) if m.accounted_release().params().ridge >= floor => Ok(m),
            Ok(m) => {
                let mut p = params.clone();
                p.release.ridge = floor;
                let at_floor = p.check()?;
                Ok(if at_floor.privacy().epsilon <= target_epsilon { at_floor } else { m })
            }
            Err(Error::Unconstrained(_)) => {
                let mut p = params.clone();
                p.release.ridge = floor;
                p.check()
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the release uses Lemma B.8 (an assumption on the data).
    fn uses_rkhs_lemma(&self) -> bool {
        self.release.sensitivity.assumes_rkhs_responses()
    }

    fn policy(&self) -> DataPolicy {
        DataPolicy {
            domain: self.release.domain.clone(),
            n: self.release.n,
            response_bound: self.release.response_bound,
            on_unbounded: self.on_unbounded,
            covariate_lattice: self.covariate_lattice.clone(),
        }
    }
}

/// A checked, accounted release mechanism. Built only by
/// [`MechanismParams::check`] or [`MechanismParams::calibrate`]; immutable.
#[derive(Debug, Clone)]
pub struct Mechanism {
    params: MechanismParams,
    release: Release,
    privacy: PrivacyReport,
    calibration: Option<CalibrationSummary>,
    policy: DataPolicy,
}

/// Released values and their public report, plus the operator's diagnostics.
#[derive(Debug, Clone)]
pub struct PrivateRelease {
    /// `paths[l][i]`: draw l at query point i (exactly L draws).
    pub paths: Vec<Vec<f64>>,
    /// Everything publishable about the release (public inputs only).
    pub report: ReleaseReport,
    /// Facts about the private data for the operator: never publish.
    pub diagnostics: Diagnostics,
}

/// What the operator may want to know about a release and must not publish:
/// these depend on the private data.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Diagnostics {
    /// What the data policy changed.
    pub policy: PolicyOutcome,
    /// Seconds spent fitting the posterior.
    pub fit_seconds: f64,
    /// Seconds spent sampling.
    pub sample_seconds: f64,
}

impl Mechanism {
    fn assemble(
        params: MechanismParams,
        release: Release,
        privacy: PrivacyReport,
        calibration: Option<(Calibration, f64)>,
    ) -> Result<Mechanism> {
        let r = &params.release;
        if !r.scale.is_finite() {
            return Err(Error::InvalidParameter {
                name: "scale σ",
                value: "inf".into(),
                requirement: "finite for a release (σ = inf is only meaningful for the accountant)",
            });
        }
        if let Some(range) = &params.response_range
            && r.response_bound != range.half()
        {
            return Err(Error::InvalidParameter {
                name: "response bound M_Y",
                value: crate::error::fmt_value(r.response_bound),
                requirement: "the range's half-width with a response range (the range [lo, hi] is centred on its middle and bounds the responses by (hi − lo)/2; give the bound as the range instead)",
            });
        }
        if params.response_range.is_some() && params.uses_rkhs_lemma() {
            return Err(Error::InvalidLemma {
                lemma: "B.8",
                reason: "a response range shifts the responses by its middle, so the RKHS norm of the data-generating function would change with it; give the responses as the stated norm is for, without a response range".into(),
            });
        }
        if params.uses_rkhs_lemma() && !params.assume_rkhs_responses {
            return Err(Error::InvalidLemma {
                lemma: "B.8",
                reason: "it assumes every response is the noiseless value y = f*(x) of a function with ‖f*‖_H ≤ B, which the data cannot show; state that assumption explicitly (MechanismParams::assume_rkhs_responses, --assume-rkhs-responses) or use a bounded-response lemma".into(),
            });
        }
        if params.uses_rkhs_lemma() {
            // Lemma B.8 assumes y = f*(x) with ‖f*‖_H ≤ B, hence |y| ≤ B·sup √k(x, x) = B (the
            // kernel is normalised). Only with B ≤ M_Y does every dataset meeting the assumption
            // pass the data policy untouched; with B > M_Y one could be clipped (and its
            // neighbour not), so the condition is checked here, on public inputs, before any
            // data (docs/model.md, "Lemma B.8 and the response bound").
            if let Some(b) = r.rkhs_norm {
                if !(b <= r.response_bound) {
                    return Err(Error::InvalidLemma {
                        lemma: "B.8",
                        reason: format!(
                            "the RKHS norm B = {} exceeds the response bound M_Y = {}: responses y = f*(x) with ‖f*‖_H ≤ B can reach |y| = B > M_Y, and clipping them would break the assumption for some datasets and not for their neighbours; set the response bound to at least B (--response-bound {})",
                            crate::error::fmt_value(b),
                            crate::error::fmt_value(r.response_bound),
                            crate::error::fmt_value(b)
                        ),
                    });
                }
            }
        }
        if r.n < 2 {
            return Err(Error::InvalidParameter {
                name: "n",
                value: r.n.to_string(),
                requirement: ">= 2 for a release (a release needs at least 2 records)",
            });
        }
        if let Some(max) = params.max_epsilon {
            if !(max > 0.0) {
                return Err(Error::InvalidParameter {
                    name: "max ε",
                    value: crate::error::fmt_value(max),
                    requirement: "a number > 0",
                });
            }
            if !(privacy.epsilon <= max) {
                return Err(Error::BudgetExceeded(format!(
                    "refusing to release: the guarantee is ε = {:.6} > max ε = {max} (nothing released)",
                    privacy.epsilon
                )));
            }
        }
        let policy = params.policy();
        policy.check()?;
        let calibration = calibration.map(|(c, target)| CalibrationSummary::new(&c, target));
        Ok(Mechanism { params, release, privacy, calibration, policy })
    }

    /// The parameters (after calibration: with the solved value).
    pub fn params(&self) -> &MechanismParams {
        &self.params
    }

    /// The checked release description (for composing in an accountant).
    pub fn accounted_release(&self) -> &Release {
        &self.release
    }

    /// The guarantee of one call of [`Self::release`] (known before any data).
    pub fn privacy(&self) -> &PrivacyReport {
        &self.privacy
    }

    /// The calibration evidence, if the mechanism was calibrated.
    pub fn calibration(&self) -> Option<&CalibrationSummary> {
        self.calibration.as_ref()
    }

    /// The sampler that would serve `query` (public inputs only).
    pub fn plan(&self, query: &Query) -> Result<SamplerPlan> {
        let r = &self.params.release;
        SamplerPlan::new(self.params.sampler, &r.kernel, &r.domain, query, self.params.covariate_lattice.as_ref())
    }

    /// The data policy applied, and Lemma B.8's assumption checked against it.
    fn prepare(&self, data: &Dataset) -> Result<(Dataset, PolicyOutcome)> {
        if let Some(public) = &self.params.public_covariates {
            // Under change-one-response the covariates are public: comparing them reveals
            // nothing the relation protects.
            check_same_covariates(data.x(), public)?;
        }
        let scaled;
        let data = match &self.params.response_range {
            Some(range) => {
                let y: Vec<f64> = data.y().iter().map(|&v| range.to_internal(v)).collect();
                scaled = Dataset::new(data.x().clone(), y)?;
                &scaled
            }
            None => data,
        };
        // No refusal depends on the values beyond the public policy: under Lemma B.8 (B ≤ M_Y,
        // checked when the mechanism was built) a clipped response is one that breaks the stated
        // assumption — the operator is told (Diagnostics), the release is not refused, since a
        // refusal for one dataset and not its neighbour would itself reveal the data.
        self.policy.apply(data)
    }

    /// Applies the data policy to `data` without fitting or drawing anything:
    /// the same checks and refusals as [`Self::release`] (n records,
    /// covariates in Ω and on a declared lattice, responses clipped or
    /// refused), and what they changed. Front ends call it before they
    /// reserve privacy budget, so that a refused dataset consumes none.
    pub fn check_data(&self, data: &Dataset) -> Result<PolicyOutcome> {
        self.prepare(data).map(|(_, outcome)| outcome)
    }

    fn fit(&self, data: &Dataset) -> Result<(Process, PolicyOutcome, f64)> {
        self.fit_with(data, PosteriorSystem::Distinct)
    }

    fn fit_with(&self, data: &Dataset, system: PosteriorSystem) -> Result<(Process, PolicyOutcome, f64)> {
        let t = Instant::now();
        let (data, outcome) = self.prepare(data)?;
        let r = &self.params.release;
        let posterior = match system {
            PosteriorSystem::Distinct => Posterior::fit(r.kernel, &data, r.ridge)?,
            PosteriorSystem::PerRecord => Posterior::fit_per_record(r.kernel, &data, r.ridge)?,
        };
        let process = Process::new(posterior, r.scale, r.gp_noise)?;
        Ok((process, outcome, t.elapsed().as_secs_f64()))
    }

    /// Releases exactly L paths at `query` (see the module docs). Nothing is
    /// returned unless every step succeeded; a query point with a non-finite
    /// coordinate is refused, naming it, before the data are touched.
    ///
    /// ```
    /// use gpdp::{Dataset, Domain, Grid, Kernel, MechanismParams, Points, Query, ReleaseParams, ReleaseRng, ResponseScale};
    ///
    /// let domain = Domain::cuboid(vec![0.0, 0.0], vec![1.0, 1.0])?;
    /// let model = ReleaseParams::new(Kernel::exponential(0.5)?, domain.clone(), 4, 1.0, 0.5);
    /// let mechanism = MechanismParams::new(model, 1e-3, ResponseScale::Bound(1.0)).check()?;
    /// let data = Dataset::new(
    ///     Points::from_rows(&[[0.1, 0.1], [0.9, 0.2], [0.4, 0.8], [0.6, 0.5]])?,
    ///     vec![0.3, -0.1, 0.8, 0.0],
    /// )?;
    /// // A 10 × 10 grid of the domain; a seeded generator is for tests only
    /// // (its report says the output is not private).
    /// let query = Query::Grid(Grid::parse("10x10", &domain)?);
    /// let release = mechanism.release(&data, &query, &mut ReleaseRng::seeded(7))?;
    /// assert_eq!(release.paths[0].len(), 100);
    /// assert!(!release.report.private);
    /// # Ok::<(), gpdp::Error>(())
    /// ```
    pub fn release(&self, data: &Dataset, query: &Query, rng: &mut ReleaseRng) -> Result<PrivateRelease> {
        self.release_with_progress(data, query, rng, &NoProgress)
    }

    /// Refuses, before any data are read or budget is reserved, a release
    /// at `query` whose memory (the sampler's plan for L draws at m points
    /// from at most n distinct covariates) exceeds what this machine has
    /// ([`crate::resources::check_memory`]). Depends on public inputs only
    /// (n, m, L, the kernel, the domain, a declared or snapping lattice), so
    /// the refusal is the same for every dataset. [`Self::release`] makes the
    /// same check; front ends call this first so that a refused run spends
    /// no budget.
    pub fn check_resources(&self, query: &Query) -> Result<CostEstimate> {
        query.points().check_finite("query")?;
        let plan = self.check_resources_of(query)?;
        let (bytes, seconds) =
            plan.cost_estimate(query.len(), self.params.release.n, self.params.draws.get()).unwrap_or((0.0, 0.0));
        Ok(CostEstimate {
            method: plan.method(),
            torus: plan.lattice_plan().map(|p| p.torus().to_vec()),
            bytes,
            seconds,
        })
    }

    fn check_resources_of(&self, query: &Query) -> Result<SamplerPlan> {
        let plan = self.plan(query)?;
        // The solve is over distinct covariates (repeats are aggregated): at most n, and at most
        // the number of nodes of a declared (or snapping) lattice — both public.
        let nodes =
            self.params.covariate_lattice.as_ref().map(|l| l.counts().iter().map(|&c| c as f64).product::<f64>());
        let n = nodes.map_or(self.params.release.n as f64, |k| k.min(self.params.release.n as f64));
        let mut needs = Vec::new();
        if !plan.is_state_space() {
            needs.push(Need::doubles(
                "the posterior's Gram matrix and Cholesky factor over at most u distinct covariates (2 × u²)",
                2.0 * n * n,
            ));
        }
        let records = if plan.is_state_space() { self.params.release.n } else { n as usize };
        needs.extend(plan.memory(query.len(), records, self.params.draws.get()));
        let hint = if plan.lattice_plan().is_none() && !plan.is_state_space() {
            let budget = crate::resources::MEMORY_SHARE * crate::resources::available_memory();
            format!(
                "the dense sampler fits about {:.0} query points here; for a grid, snap the covariates to it (`snap` grid: exact lattice sampler, each covariate moved by at most half a cell) or declare their lattice (`covariate_lattice`), else use fewer points or draws",
                (budget / 8.0).sqrt().min((crate::posterior::MAX_DENSE_ENTRIES as f64).sqrt())
            )
        } else {
            "use fewer query points or draws".to_string()
        };
        if plan.lattice_plan().is_none() && !plan.is_state_space() {
            let m = query.len();
            crate::posterior::check_dense("the dense sampler's covariance", m, m).map_err(|e| match e {
                Error::TooLarge(why) => Error::TooLarge(format!("{why}; {hint}")),
                other => other,
            })?;
        }
        check_memory("this release", &needs, &hint)?;
        Ok(plan)
    }

    /// [`Mechanism::release`], telling `progress` which step runs.
    pub fn release_with_progress(
        &self,
        data: &Dataset,
        query: &Query,
        rng: &mut ReleaseRng,
        progress: &dyn Progress,
    ) -> Result<PrivateRelease> {
        query.points().check_finite("query")?;
        let plan = self.check_resources_of(query)?;
        let r = &self.params.release;
        let (m, l) = (query.len(), self.params.draws.get());
        let (sampled, outcome, fit_seconds, t) = if plan.is_state_space() {
            // Exact O(n + m) draws from the data directly (no dense fit).
            progress.step(&format!("drawing {l} path(s) at {m} points: {}", plan.method()));
            let t0 = Instant::now();
            let (data, outcome) = self.prepare(data)?;
            let sampler = StateSpaceSampler::new(&r.kernel, &data, r.ridge, r.scale, r.gp_noise)?;
            let fit_seconds = t0.elapsed().as_secs_f64();
            let t = Instant::now();
            (sampler.sample(query.points(), self.params.draws, rng)?, outcome, fit_seconds, t)
        } else {
            progress.step(&format!("fitting the posterior (n = {})", self.params.release.n));
            let (process, outcome, fit_seconds) = self.fit(data)?;
            let t = Instant::now();
            let what = if plan.lattice_plan().is_none() {
                format!(
                    "drawing {l} path(s) at {m} points: {} (building and factoring the {m} × {m} covariance)",
                    plan.method()
                )
            } else {
                format!("drawing {l} path(s) at {m} points: {}", plan.method())
            };
            progress.step(&what);
            (plan.sampler(process)?.sample(query.points(), self.params.draws, rng)?, outcome, fit_seconds, t)
        };
        let sample_seconds = t.elapsed().as_secs_f64();
        let mut sampled = sampled;
        if let Some(range) = &self.params.response_range {
            // Post-processing with a public constant: back into data units.
            for path in &mut sampled.values {
                path.iter_mut().for_each(|v| *v = range.to_data(*v));
            }
        }
        debug_assert_eq!(sampled.values.len() as u64, self.params.draws.get());
        let report = ReleaseReport::new(self, rng, query.summary(), plan.summary(), sampled.jitter);
        Ok(PrivateRelease {
            paths: sampled.values,
            report,
            diagnostics: Diagnostics { policy: outcome, fit_seconds, sample_seconds },
        })
    }

    /// The same release, evaluated lazily: L paths, each revealing at most
    /// `max_points` distinct points (a public cap that fixes the jitter and
    /// bounds memory). The generator is kept by the release.
    ///
    /// ```
    /// use gpdp::{Dataset, Domain, Kernel, MechanismParams, Points, ReleaseParams, ReleaseRng, ResponseScale};
    ///
    /// let model = ReleaseParams::new(Kernel::exponential(0.3)?, Domain::interval(0.0, 1.0)?, 3, 1.0, 0.5);
    /// let mechanism = MechanismParams::new(model, 1e-3, ResponseScale::Bound(1.0)).check()?;
    /// let data = Dataset::new(Points::from_1d(&[0.2, 0.5, 0.8]), vec![0.1, 0.4, -0.2])?;
    /// // At most 100 distinct points per path, revealed as they are asked for.
    /// let mut paths = mechanism.sample_paths(&data, 100, ReleaseRng::from_os()?)?;
    /// let first = paths.eval(0, &Points::from_1d(&[0.25, 0.75]))?;
    /// // Asking again for a revealed point gives the same value (one path).
    /// let again = paths.eval(0, &Points::from_1d(&[0.75]))?;
    /// assert_eq!(first[1], again[0]);
    /// # Ok::<(), gpdp::Error>(())
    /// ```
    pub fn sample_paths(&self, data: &Dataset, max_points: usize, rng: ReleaseRng) -> Result<LazyRelease> {
        self.lazy_paths(data, max_points, rng, None, PosteriorSystem::Distinct)
    }

    /// [`Self::sample_paths`] with the posterior solved as `system` says:
    /// the released law is the same; [`PosteriorSystem::PerRecord`] makes
    /// the cost of fitting and of every later batch independent of how many
    /// records share a covariate (for servers whose timing is observable).
    pub fn sample_paths_with(
        &self,
        data: &Dataset,
        max_points: usize,
        rng: ReleaseRng,
        system: PosteriorSystem,
    ) -> Result<LazyRelease> {
        self.lazy_paths(data, max_points, rng, None, system)
    }

    /// [`Self::sample_paths`] for paths that have already revealed values —
    /// `revealed[l]` = (points, internal values) of path l, as
    /// [`PrivatePath::points`] and [`PrivatePath::internal_values`] gave them
    /// — after a restart: the posterior is re-fitted from `data` (which must
    /// be the same dataset), each path is rebuilt conditionally on its
    /// values, revealed points return them exactly and new points are exact
    /// conditional draws. The report is that of the original release.
    ///
    /// The guarantee covers one draw per path, so use each stored state once:
    /// give exactly the values the path revealed, and make everything it
    /// reveals afterwards durable before publishing it (as `gpdp serve` does:
    /// docs/serve.md). Restoring the same state twice and revealing the same
    /// new points from both copies publishes two conditional draws of them —
    /// more than the accounted release.
    pub fn restore_paths(
        &self,
        data: &Dataset,
        max_points: usize,
        rng: ReleaseRng,
        revealed: Vec<(Points, Vec<f64>)>,
    ) -> Result<LazyRelease> {
        self.lazy_paths(data, max_points, rng, Some(revealed), PosteriorSystem::Distinct)
    }

    /// [`Self::restore_paths`] with the posterior solved as `system` says
    /// (use the system the paths were created with, so that their cost
    /// stays what it was; the law is the same either way).
    pub fn restore_paths_with(
        &self,
        data: &Dataset,
        max_points: usize,
        rng: ReleaseRng,
        revealed: Vec<(Points, Vec<f64>)>,
        system: PosteriorSystem,
    ) -> Result<LazyRelease> {
        self.lazy_paths(data, max_points, rng, Some(revealed), system)
    }

    /// Fits the posterior and builds the lazy paths, new or restored.
    fn lazy_paths(
        &self,
        data: &Dataset,
        max_points: usize,
        rng: ReleaseRng,
        revealed: Option<Vec<(Points, Vec<f64>)>>,
        system: PosteriorSystem,
    ) -> Result<LazyRelease> {
        let (process, outcome, fit_seconds) = self.fit_with(data, system)?;
        let diagnostics = Diagnostics { policy: outcome, fit_seconds, sample_seconds: 0.0 };
        LazyRelease::new(self, process, max_points, rng, diagnostics, revealed)
    }
}

/// Refuses data whose covariates differ from the declared public ones,
/// naming the first record that differs.
fn check_same_covariates(x: &Points, public: &Points) -> Result<()> {
    if x.len() != public.len() || x.dim() != public.dim() {
        return Err(Error::Input(format!(
            "the data have {} records of dimension {} but the guarantee was computed for {} public covariates of dimension {}: under change-one-response a release must use exactly the declared covariates",
            x.len(),
            x.dim(),
            public.len(),
            public.dim()
        )));
    }
    if let Some(i) = (0..x.len()).find(|&i| x.row(i) != public.row(i)) {
        let show = |p: &[f64]| p.iter().map(|v| fmt_value(*v)).collect::<Vec<_>>().join(", ");
        return Err(Error::Data {
            row: i + 1,
            message: format!(
                "covariates ({}) differ from the declared public covariates ({}) of that row: under change-one-response the guarantee was computed for the declared covariates, so a release must use exactly them",
                show(x.row(i)),
                show(public.row(i))
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
