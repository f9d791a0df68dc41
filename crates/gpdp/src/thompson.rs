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
    data: Dataset,
    accountant: RdpAccountant,
    rounds: Vec<Round>,
    /// Some(seed): a reproducible, **non-private** loop.
    seed: Option<u64>,
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
        Ok(ThompsonSampler { config, candidates, data, accountant: RdpAccountant::new(), rounds: Vec::new(), seed })
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
        self.data.len()
    }

    /// The conversion of the loop's RDP to (ε, δ).
    fn conversion(&self) -> Conversion {
        match self.config.mechanism.conversion {
            crate::privacy::Accounting::Rdp(c) => c,
            crate::privacy::Accounting::Pld => Conversion::Improved,
        }
    }

    /// The mechanism of a round with `n` records.
    fn round_params(&self, n: usize) -> Result<MechanismParams> {
        let mut p = self.config.mechanism.clone();
        p.release.n = n;
        p.draws = Draws::new(self.config.batch as u64)?;
        p.conversion = crate::privacy::Accounting::Rdp(self.conversion());
        p.max_epsilon = None;
        Ok(p)
    }

    /// The release of a round with `n` records (its accounting only).
    fn round_release(&self, n: usize) -> Result<crate::privacy::Release> {
        Ok(self.round_params(n)?.check()?.accounted_release().clone())
    }

    /// The ε at the mechanism's δ of everything `acc` holds (0 if nothing).
    fn epsilon_of(&self, acc: &RdpAccountant) -> Result<f64> {
        if acc.events().is_empty() {
            return Ok(0.0);
        }
        Ok(acc.epsilon(self.config.mechanism.delta, self.conversion())?.epsilon)
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
            acc.compose_release(self.round_release(n)?, Draws::new(self.config.batch as u64)?);
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
        let mut n = self.data.len();
        let mut rounds = 0;
        while rounds < cap {
            acc.compose_release(self.round_release(n)?, Draws::new(self.config.batch as u64)?);
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
        let n = self.data.len();
        let mechanism = self.round_params(n)?.check()?;
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
        let rng = match self.seed {
            None => ReleaseRng::from_os()?,
            Some(s) => ReleaseRng::seeded(round_seed(s, self.rounds.len() as u64)),
        };
        // Solved per record: the round's time and memory depend on n_i, the
        // dimension and the candidates only, never on repeated covariates.
        let mut paths =
            mechanism.sample_paths_with(&self.data, self.candidates.len(), rng, crate::PosteriorSystem::PerRecord)?;
        let mut chosen = Vec::with_capacity(self.config.batch);
        for l in 0..self.config.batch {
            let values = paths.eval(l, &self.candidates)?;
            chosen.push(self.candidates.row(self.best(&values)).to_vec());
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
        self.data.push(x, y)
    }
}

/// The seed of round `round` of a seeded loop (SplitMix64 of seed + round).
fn round_seed(seed: u64, round: u64) -> u64 {
    let mut z = seed.wrapping_add(round.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests;
