//! Private Thompson sampling: an ask/tell loop that chooses the next points
//! to try from private records, each choice computed only from released
//! posterior sample paths (docs/thompson.md).
//!
//! Round i releases q = `batch` paths of the posterior of the records held
//! then (n_i of them) through the mechanism, and publishes the maximiser (or
//! minimiser) of each path over the public candidate set — post-processing of
//! the released draws, so covered by the round's guarantee (the paper, §1 and
//! §3). Records added by [`ThompsonSampler::tell`] join the private data.
//!
//! **What is protected.** Every record any round used — the initial data and
//! every later observation — under replace-one (a record's covariates and
//! response replaced; n public). Round i is an (α, R_i(α))-RDP release of
//! q draws with n_i records, and the rounds compose **adaptively** (the data
//! of round i may depend on the choices of earlier rounds): the loop's RDP at
//! each order is Σ_i R_i(α) (adaptive composition of RDP, Mironov 2017,
//! Prop. 1; docs/proofs/composition.md), converted to (ε, δ) once, by
//! [`RdpAccountant`]. Only Rényi curves are composed, never per-round ε.
//!
//! **Refusals from public inputs only.** A round is refused, before anything
//! is drawn, when the composed guarantee with it would exceed the budget ε;
//! the decision depends on n_i, the parameters and the rounds so far, all
//! public. [`ThompsonSampler::rounds_allowed`] says beforehand how many
//! rounds fit when each round adds a known number of records.

use crate::error::{Error, Result};
use crate::mechanism::MechanismParams;
use crate::model::data::Dataset;
use crate::model::draws::Draws;
use crate::model::points::Points;
use crate::privacy::{Conversion, RdpAccountant};
use crate::rng::ReleaseRng;
use candidates::CandidatePosterior;

/// Whether the loop looks for large or small values of the objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Goal {
    /// Choose each path's maximiser.
    #[default]
    Maximise,
    /// Choose each path's minimiser.
    Minimise,
}

/// The public settings of a loop.
#[derive(Debug, Clone)]
pub struct ThompsonConfig {
    /// The mechanism of every round (kernel, domain, ridge, σ, M_Y, δ, the
    /// bound and conversion); its `release.n` and `draws` are set per round
    /// (n from the records held, draws = `batch`).
    pub mechanism: MechanismParams,
    /// Proposals per round q ≥ 1 (q paths released per round).
    pub batch: usize,
    /// The budget ε of the whole loop at the mechanism's δ (None: no cap).
    pub budget_epsilon: Option<f64>,
    /// Maximise or minimise.
    pub goal: Goal,
}

impl ThompsonConfig {
    /// The loop of a release spec (its model keys, δ, accounting, response
    /// range and units; `draws`, `target_epsilon` and the sampler keys do not
    /// apply to a loop and must be left at their defaults), starting with
    /// `initial_records` records and proposing `batch` points per round.
    ///
    /// `target = Some((ε, T))` calibrates the ridge so that T rounds, each
    /// telling all `batch` proposals, have ε ≤ the target
    /// ([`Self::calibrate_ridge`]); the spec must then leave `ridge` out.
    /// The budget is `budget`, else the target's ε, else none. The one
    /// translation of a loop's settings, shared by the CLI and Python.
    pub fn from_spec(
        spec: &crate::spec::ReleaseSpec,
        initial_records: usize,
        batch: usize,
        goal: Goal,
        target: Option<(f64, usize)>,
        budget: Option<f64>,
    ) -> Result<Self> {
        let refuse =
            |key: &str, why: &str| Err(Error::Input(format!("`{key}` does not apply to a Thompson loop: {why}")));
        if spec.target_epsilon.is_some() {
            return refuse(
                "target_epsilon",
                "give the loop's target ε with its number of rounds instead (it calibrates the ridge for the whole loop)",
            );
        }
        if spec.draws.get() != 1 {
            return refuse("draws", "each round releases `batch` paths");
        }
        if spec.conversion == crate::privacy::Accounting::Pld {
            return refuse(
                "conversion pld",
                "the PLD accountant is proven for covariance-only single releases; a loop composes its rounds' Rényi curves — use improved or paper",
            );
        }
        if spec.covariate_lattice.is_some() || spec.snap.is_some() {
            return refuse("covariate_lattice/snap", "the loop samples on its candidate set");
        }
        let mut spec = spec.clone();
        if target.is_some() {
            if spec.ridge.is_some() {
                return refuse(
                    "ridge",
                    "with a target ε the ridge is calibrated for the whole loop — give one or the other",
                );
            }
            spec.ridge = Some(1.0);
        }
        let mut cfg = ThompsonConfig {
            mechanism: spec.params(initial_records.max(1))?,
            batch,
            budget_epsilon: budget.or(target.map(|(e, _)| e)),
            goal,
        };
        if let Some((epsilon, rounds)) = target {
            cfg.mechanism.release.ridge = cfg.calibrate_ridge(epsilon, initial_records, rounds, batch)?;
        }
        Ok(cfg)
    }

    /// The conversion of the loop's RDP to (ε, δ) (the mechanism's; PLD is
    /// not proven for adaptive rounds with a mean term, so a PLD mechanism
    /// composes its rounds' Rényi curves with the improved conversion).
    pub fn conversion(&self) -> Conversion {
        match self.mechanism.conversion {
            crate::privacy::Accounting::Rdp(c) => c,
            crate::privacy::Accounting::Pld => Conversion::Improved,
        }
    }

    /// The mechanism of a round with `n` records.
    pub fn round_params(&self, n: usize) -> Result<MechanismParams> {
        let mut p = self.mechanism.clone();
        p.release.n = n;
        p.draws = Draws::new(self.batch as u64)?;
        p.conversion = crate::privacy::Accounting::Rdp(self.conversion());
        p.max_epsilon = None;
        Ok(p)
    }

    /// The release of a round with `n` records (its accounting only).
    fn round_release(&self, n: usize) -> Result<crate::privacy::Release> {
        Ok(self.round_params(n)?.check()?.accounted_release().clone())
    }

    /// The composed ε, at the mechanism's δ, of `rounds` rounds that start
    /// with `initial_records` records and add `records_per_round` each
    /// (round i has n₀ + (i − 1)·k records) — from public inputs only, e.g.
    /// to calibrate the ridge of a whole loop to a target ε before it starts.
    /// 0 for no rounds.
    pub fn epsilon_after(&self, initial_records: usize, rounds: usize, records_per_round: usize) -> Result<f64> {
        let mut acc = RdpAccountant::new();
        for i in 0..rounds {
            acc.compose_release(
                self.round_release(initial_records + i * records_per_round)?,
                Draws::new(self.batch as u64)?,
            );
        }
        if acc.events().is_empty() {
            return Ok(0.0);
        }
        Ok(acc.epsilon(self.mechanism.delta, self.conversion())?.epsilon)
    }

    /// The smallest ridge r (to a relative 10⁻⁴, rounded up) at which the
    /// planned loop of [`Self::epsilon_after`] has ε ≤ `target` — from
    /// public inputs only; the mechanism's own ridge is ignored. ε decreases
    /// as r grows (every round's Rényi curve does), so a bracket by doubling
    /// and a bisection find it. Refused when no r ≤ 10⁶ meets the target
    /// (e.g. σ too large for it, or too many rounds).
    pub fn calibrate_ridge(
        &self,
        target: f64,
        initial_records: usize,
        rounds: usize,
        records_per_round: usize,
    ) -> Result<f64> {
        crate::error::positive("target ε", target)?;
        let eps = |r: f64| -> Result<f64> {
            let mut c = self.clone();
            c.mechanism.release.ridge = r;
            c.epsilon_after(initial_records, rounds, records_per_round)
        };
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        while eps(hi)? > target {
            lo = hi;
            hi *= 2.0;
            if hi > 1e6 {
                return Err(Error::Input(format!(
                    "no ridge r ≤ 10⁶ brings {rounds} round(s) of {} path(s) to ε ≤ {target} at δ = {}: allow fewer rounds, a smaller scale σ or a larger target",
                    self.batch, self.mechanism.delta
                )));
            }
        }
        if lo == 0.0 {
            // ε(1) ≤ target: bracket downwards.
            lo = 0.5;
            while lo > 1e-6 && eps(lo)? <= target {
                hi = lo;
                lo /= 2.0;
            }
        }
        while (hi - lo) > 1e-4 * hi {
            let mid = 0.5 * (lo + hi);
            if eps(mid)? <= target { hi = mid } else { lo = mid }
        }
        Ok(hi)
    }
}

/// One completed round (public: what was released and its guarantee).
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// 1-based round number.
    pub index: usize,
    /// Records the round's posterior used (public n_i).
    pub records: usize,
    /// The chosen points, one per path.
    pub chosen: Vec<Vec<f64>>,
    /// The composed ε of rounds 1..=index at the mechanism's δ.
    pub epsilon_so_far: f64,
}

/// A private Thompson-sampling loop over a public candidate set.
#[derive(Debug)]
pub struct ThompsonSampler {
    config: ThompsonConfig,
    candidates: Points,
    /// The records so far, as the sampler holds them (internal units).
    posterior: CandidatePosterior,
    accountant: RdpAccountant,
    rounds: Vec<Round>,
    /// Some(seed): a reproducible, **non-private** loop.
    seed: Option<u64>,
    /// The paths of the last round (tests only).
    #[cfg(test)]
    last_paths: Option<faer::Mat<f64>>,
}

impl ThompsonSampler {
    /// A loop over `candidates` (every one inside the mechanism's domain)
    /// starting from the private `data`. `seed`: None draws every round
    /// from the OS-seeded generator (a private release); Some(s) makes the
    /// loop reproducible and not private.
    pub fn new(config: ThompsonConfig, candidates: Points, data: Dataset, seed: Option<u64>) -> Result<Self> {
        if config.batch == 0 {
            return Err(Error::InvalidParameter { name: "batch", value: "0".into(), requirement: "≥ 1" });
        }
        if candidates.is_empty() {
            return Err(Error::Input("the candidate set is empty".into()));
        }
        let domain = &config.mechanism.release.domain;
        if candidates.dim() != domain.dim() {
            return Err(Error::Dimension(format!(
                "the candidates are {}-dimensional but the domain is {}-dimensional",
                candidates.dim(),
                domain.dim()
            )));
        }
        candidates.check_finite("candidate")?;
        if let Some(i) = (0..candidates.len()).find(|&i| !domain.contains(candidates.row(i))) {
            return Err(Error::Input(format!("candidate {} ({:?}) lies outside the domain", i + 1, candidates.row(i))));
        }
        if data.dim() != domain.dim() {
            return Err(Error::Dimension(format!(
                "the data are {}-dimensional but the domain is {}-dimensional",
                data.dim(),
                domain.dim()
            )));
        }
        if let Some(e) = config.budget_epsilon {
            crate::error::positive("budget ε", e)?;
        }
        if config.mechanism.on_unbounded == crate::model::policy::OnUnbounded::Reject {
            // A round refused because a told value is out of range would be a
            // refusal that depends on private data.
            return Err(Error::Unsupported(
                "a Thompson loop needs the clipping data policy: rejecting out-of-range observations would make rounds fail depending on private values".into(),
            ));
        }
        if config.mechanism.covariate_lattice.is_some() {
            return Err(Error::Unsupported(
                "a Thompson loop samples on its candidate set: a declared or snapped covariate lattice is not used there — leave it out".into(),
            ));
        }
        if config.mechanism.public_covariates.is_some() {
            return Err(Error::Unsupported(
                "a Thompson loop's records grow round by round: its guarantee is computed for any covariates, so fixed public covariates cannot be declared".into(),
            ));
        }
        data.check_domain(domain)?;
        data.y().iter().enumerate().try_for_each(|(i, v)| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(Error::Data { row: i + 1, message: format!("the response {v} is not a finite number") })
            }
        })?;
        // The checks above are of public facts (dimensions, the candidates,
        // the parameters) or refuse malformed records; none depends on a
        // record's value within its range.
        if !data.is_empty() {
            config.round_params(data.len())?.check()?;
        }
        let y: Vec<f64> = data.y().iter().map(|&v| internal_response(&config.mechanism, v)).collect();
        let r = &config.mechanism.release;
        let posterior =
            CandidatePosterior::new(r.kernel, candidates.clone(), r.ridge, r.scale, r.gp_noise, data.x(), &y)?;
        Ok(ThompsonSampler {
            config,
            candidates,
            posterior,
            accountant: RdpAccountant::new(),
            rounds: Vec::new(),
            seed,
            #[cfg(test)]
            last_paths: None,
        })
    }

    /// The loop's public settings (with the calibrated ridge, if any).
    pub fn config(&self) -> &ThompsonConfig {
        &self.config
    }

    /// The rounds completed so far.
    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    /// Whether the loop is seeded (reproducible, not private).
    pub fn is_seeded(&self) -> bool {
        self.seed.is_some()
    }

    /// Records held now (the next round's n).
    pub fn records(&self) -> usize {
        self.posterior.n()
    }

    /// The ε at the mechanism's δ of everything `acc` holds (0 if nothing).
    fn epsilon_of(&self, acc: &RdpAccountant) -> Result<f64> {
        if acc.events().is_empty() {
            return Ok(0.0);
        }
        Ok(acc.epsilon(self.config.mechanism.delta, self.config.conversion())?.epsilon)
    }

    /// The rounds so far and `release` composed (nothing is changed).
    fn with_round(&self, release: crate::privacy::Release) -> Result<RdpAccountant> {
        let mut acc = self.accountant.clone();
        acc.compose_release(release, Draws::new(self.config.batch as u64)?);
        Ok(acc)
    }

    #[cfg(test)]
    /// The composed ε at the mechanism's δ of the rounds so far plus rounds
    /// with `more` record counts (public inputs only).
    fn epsilon_with(&self, more: &[usize]) -> Result<f64> {
        let mut acc = self.accountant.clone();
        for &n in more {
            acc.compose_release(self.config.round_release(n)?, Draws::new(self.config.batch as u64)?);
        }
        self.epsilon_of(&acc)
    }

    /// The composed ε of the rounds so far at the mechanism's δ (0 before
    /// the first round).
    pub fn epsilon_so_far(&self) -> Result<f64> {
        self.epsilon_of(&self.accountant)
    }

    /// How many more rounds the budget allows when each round adds
    /// `records_per_round` records (e.g. `batch` when every proposal is
    /// tried and told), from public inputs only; at most `cap` (None: no
    /// budget, so `cap`).
    pub fn rounds_allowed(&self, records_per_round: usize, cap: usize) -> Result<usize> {
        let Some(budget) = self.config.budget_epsilon else { return Ok(cap) };
        let mut acc = self.accountant.clone();
        let mut n = self.records();
        let mut rounds = 0;
        while rounds < cap {
            acc.compose_release(self.config.round_release(n)?, Draws::new(self.config.batch as u64)?);
            if self.epsilon_of(&acc)? > budget {
                break;
            }
            rounds += 1;
            n += records_per_round;
        }
        Ok(rounds)
    }

    /// One round: refuses (before any draw) when the composed guarantee
    /// would exceed the budget; else releases `batch` paths of the current
    /// posterior, evaluates each on the candidates and returns the chosen
    /// points (each path's maximiser or minimiser; ties go to the first
    /// candidate).
    pub fn ask(&mut self) -> Result<Vec<Vec<f64>>> {
        let n = self.records();
        let mechanism = self.config.round_params(n)?.check()?;
        let composed = self.with_round(mechanism.accounted_release().clone())?;
        let epsilon = self.epsilon_of(&composed)?;
        if let Some(budget) = self.config.budget_epsilon {
            if epsilon > budget {
                return Err(Error::Input(format!(
                    "round {} would bring the loop's ε to {epsilon:.4} (δ = {}), above its budget {budget}: stopped before drawing anything",
                    self.rounds.len() + 1,
                    self.config.mechanism.delta
                )));
            }
        }
        let mut rng = match self.seed {
            None => ReleaseRng::from_os()?,
            Some(s) => ReleaseRng::seeded(round_seed(s, self.rounds.len() as u64)),
        };
        // Exact draws on the candidates from the per-record factors (time and
        // memory depend on n_i, m and q only, never on the values).
        let paths = self.posterior.draw(self.config.batch, &mut rng);
        let mut chosen = Vec::with_capacity(self.config.batch);
        for l in 0..self.config.batch {
            let values: Vec<f64> = (0..self.candidates.len()).map(|i| paths[(i, l)]).collect();
            chosen.push(self.candidates.row(self.best(&values)).to_vec());
        }
        #[cfg(test)]
        {
            self.last_paths = Some(paths);
        }
        self.accountant = composed;
        self.rounds.push(Round {
            index: self.rounds.len() + 1,
            records: n,
            chosen: chosen.clone(),
            epsilon_so_far: epsilon,
        });
        Ok(chosen)
    }

    /// The index of the best value (first on ties).
    fn best(&self, values: &[f64]) -> usize {
        let better = |a: f64, b: f64| match self.config.goal {
            Goal::Maximise => a > b,
            Goal::Minimise => a < b,
        };
        let mut k = 0;
        for (i, &v) in values.iter().enumerate() {
            if better(v, values[k]) {
                k = i;
            }
        }
        k
    }

    /// Adds the observation (x, y) to the private data. Refused: x outside
    /// the domain or of the wrong dimension, a non-finite x or y.
    pub fn tell(&mut self, x: &[f64], y: f64) -> Result<()> {
        let domain = &self.config.mechanism.release.domain;
        if x.len() != domain.dim() {
            return Err(Error::Dimension(format!(
                "the observation's point has {} coordinates but the domain is {}-dimensional",
                x.len(),
                domain.dim()
            )));
        }
        if !x.iter().all(|v| v.is_finite()) || !domain.contains(x) {
            return Err(Error::Input(format!("the observation's point {x:?} is not a finite point of the domain")));
        }
        if !y.is_finite() {
            return Err(Error::Input(format!("the observation at {x:?} has a non-finite value {y}")));
        }
        let v = internal_response(&self.config.mechanism, y);
        self.posterior.push(&Points::new(x.to_vec(), x.len())?, &[v])
    }
}

/// A response in the mechanism's internal units: centred on the response
/// range's middle (if any) and clipped to ±M_Y (the clipping policy, the only
/// one a loop accepts). A public per-record map.
fn internal_response(p: &MechanismParams, y: f64) -> f64 {
    let v = match &p.response_range {
        Some(range) => range.to_internal(y),
        None => y,
    };
    let m = p.release.response_bound;
    v.clamp(-m, m)
}

/// The seed of round `round` of a seeded loop (SplitMix64 of seed + round).
fn round_seed(seed: u64, round: u64) -> u64 {
    let mut z = seed.wrapping_add(round.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

mod candidates;
#[cfg(test)]
mod tests;
