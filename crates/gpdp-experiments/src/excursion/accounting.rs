//! ε of a candidate θ = (ℓ, r, σ) in the excursion studies (the paper's
//! App. D): every study describes its release to the core accountant
//! (`gpdp::privacy`) and asks it; nothing here computes a bound.
//!
//! | study | kernel and domain | Δ̂_n, `--bound paper` | Δ̂_n, `--bound tight` (default) |
//! |---|---|---|---|
//! | 1-D (Tables 1–3) | exp(−\|x − x'\|/ℓ) on [0, 1] | Lemma B.7 (forced, as the paper) | the smallest valid (B.7, B.1, coupled, operator) |
//! | 2-D (Table 4), real data (Fig. 4) | exp(−‖x − x'‖/ℓ) on [0, 1]² | Lemma B.1 | the smallest valid (B.1, coupled, operator) |
//!
//! with V̂_n by Proposition 3 (κ = k(diam Ω)), responses |y| ≤ M_Y = 1, L
//! draws, δ and the conversion of the study; the tight bound also uses the
//! signed covariance term (and, in 1-D, the bounded-mean refinement). With
//! [`SensitivityConstants::Published`] (which needs the paper's bound) the
//! accountant reproduces the authors' code (Δ̂/√2, not a proven guarantee).
//! σ = 0 (the posterior-mean set) is never private: ε = ∞.

use gpdp::privacy::{BoundChoice, Conversion, SensitivityConstants};
use gpdp::{
    Domain, Draws, Kernel, Lemma, Mechanism, MechanismParams, OnUnbounded, PrivacyReport, ReleaseParams,
    SensitivityChoice,
};
use serde::Serialize;

use super::search::Candidate;

/// Which study's release model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StudyModel {
    /// Exponential kernel on Ω = [0, 1], Lemma B.7.
    Interval,
    /// Exponential kernel with Euclidean distance on Ω = [0, 1]², Lemma B.1.
    UnitSquare,
}

/// Accountant settings shared by every candidate of a study.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StudyAccounting {
    /// The release model.
    pub model: StudyModel,
    /// Training-set size n.
    pub n: usize,
    /// Released paths L.
    pub draws: Draws,
    /// δ of the (ε, δ) statement.
    pub delta: f64,
    /// RDP → (ε, δ) conversion.
    pub conversion: Conversion,
    /// Proven, or the published tables' constants.
    pub constants: SensitivityConstants,
    /// The proven bound (the published constants belong to `Paper`).
    pub bound: BoundChoice,
}

impl StudyAccounting {
    /// Refuses the published constants with the tight bound: they are the
    /// paper's bound with Δ̂/√2, and exist only for it.
    pub fn check(&self) -> gpdp::Result<()> {
        if self.constants == SensitivityConstants::Published && self.bound != BoundChoice::Paper {
            return Err(gpdp::Error::InvalidParameter {
                name: "bound",
                value: self.bound.name().into(),
                requirement: "paper with the published sensitivity constants (they reproduce the paper's tables, which use the paper's bound): give --bound paper or the proven constants",
            });
        }
        Ok(())
    }

    /// The release θ describes, as the core library checks it (M_Y = 1, η = 0):
    /// the paper's forced lemma with the paper's bound, the smallest valid
    /// sensitivity bound with the tight one.
    pub fn release_params(&self, c: &Candidate) -> gpdp::Result<ReleaseParams> {
        let (domain, lemma) = match self.model {
            StudyModel::Interval => (Domain::interval(0.0, 1.0)?, Lemma::B7),
            StudyModel::UnitSquare => (Domain::cuboid(vec![0.0, 0.0], vec![1.0, 1.0])?, Lemma::B1),
        };
        let mut p = ReleaseParams::new(Kernel::exponential(c.lengthscale)?, domain, self.n, c.ridge, c.scale);
        p.bound = self.bound;
        p.sensitivity = match self.bound {
            BoundChoice::Paper => SensitivityChoice::Lemma(lemma),
            BoundChoice::Tight | BoundChoice::Joint => SensitivityChoice::Auto,
        };
        Ok(p)
    }

    /// ε_L(θ) with these constants; +∞ when σ = 0 or the accountant refuses θ.
    pub fn epsilon(&self, c: &Candidate) -> f64 {
        self.epsilon_draws(c, self.draws)
    }

    /// ε of `draws` paths with these constants; +∞ when σ = 0 or the
    /// accountant refuses θ.
    pub fn epsilon_draws(&self, c: &Candidate, draws: Draws) -> f64 {
        if !(c.scale > 0.0) {
            return f64::INFINITY;
        }
        self.release_params(c)
            .and_then(|p| p.check_study(self.constants))
            .and_then(|r| r.epsilon(draws, self.delta, self.conversion))
            .map_or(f64::INFINITY, |r| r.epsilon)
    }

    /// The proven guarantee of releasing `draws` paths with θ (independent
    /// of [`Self::constants`]).
    pub fn proven_report(&self, c: &Candidate, draws: Draws) -> gpdp::Result<PrivacyReport> {
        self.release_params(c)?.check()?.epsilon(draws, self.delta, self.conversion)
    }

    /// The mechanism that releases `draws` paths with θ (proven constants;
    /// the study's data are bounded by construction, so unbounded responses
    /// are refused rather than clipped). Studies draw their private paths
    /// through it, exactly as a data holder would.
    pub fn mechanism(&self, c: &Candidate, draws: Draws) -> gpdp::Result<Mechanism> {
        // The study's responses are bounded by its own public M_Y.
        let release = self.release_params(c)?;
        let scale = gpdp::ResponseScale::Bound(release.response_bound);
        let mut p = MechanismParams::new(release, self.delta, scale);
        p.draws = draws;
        p.conversion = self.conversion.into();
        p.on_unbounded = OnUnbounded::Reject;
        p.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpdp::privacy::psi;

    /// ε of Theorem 3.1 with the paper's conversion, minimised over a dense
    /// grid of orders — an independent evaluation of the closed forms
    /// (docs/accountant.md, §2.5–§2.7), not the library's optimiser.
    fn closed_form_epsilon(kappa: f64, n: usize, r: f64, s: f64, draws: f64, delta: f64, lemma: Lemma) -> f64 {
        let q = r * r;
        let v = 1.0 - kappa * kappa * (n - 1) as f64 / ((n - 1) as f64 + q);
        let phi = if v >= q { 0.25 / q } else { v / ((v + q) * (v + q)) };
        let dn = match lemma {
            Lemma::B7 => 4.0 * phi.sqrt(),
            _ => 2.0 * (1.0 + ((n - 1) as f64).sqrt() / r) * phi.sqrt(),
        };
        let am1_max = q / v;
        (1..200_000)
            .map(|i| am1_max * i as f64 / 200_000.0)
            .map(|am1| {
                let e = 2.0 * psi(am1, v / q) + (1.0 + am1) * (v + q) * dn * dn / (2.0 * s * s * (q - am1 * v));
                draws * e + (1.0 / delta).ln() / am1
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn study_epsilon_is_the_papers_closed_form() {
        for (model, n, l, r, s, draws) in [
            (StudyModel::Interval, 100, 0.5, 1.0, 0.5, 1u64),
            (StudyModel::Interval, 400, 1.0, 2.0, 1.0, 3),
            (StudyModel::UnitSquare, 400, 0.14, 5.7, 0.12, 1),
            (StudyModel::UnitSquare, 60, 0.3, 1.0, 0.5, 3),
        ] {
            let acc = StudyAccounting {
                model,
                n,
                draws: Draws::new(draws).unwrap(),
                delta: 0.005,
                conversion: Conversion::Paper,
                constants: SensitivityConstants::Proven,
                bound: BoundChoice::Paper,
            };
            let c = Candidate { lengthscale: l, ridge: r, scale: s };
            let (kappa, lemma) = match model {
                StudyModel::Interval => ((-1.0 / l).exp(), Lemma::B7),
                StudyModel::UnitSquare => ((-(2f64.sqrt()) / l).exp(), Lemma::B1),
            };
            let want = closed_form_epsilon(kappa, n, r, s, draws as f64, 0.005, lemma);
            let got = acc.epsilon(&c);
            // The library optimises α exactly; the grid can only be above it.
            assert!(got <= want * (1.0 + 1e-9) && got >= want * (1.0 - 1e-4), "{model:?}: {got} vs {want}");
            let report = acc.proven_report(&c, acc.draws).unwrap();
            assert_eq!(report.epsilon, got);
            assert_eq!(report.components[0].sensitivity_source, lemma);
            // Published constants: smaller ε (a smaller Δ̂).
            let publ = StudyAccounting { constants: SensitivityConstants::Published, ..acc }.epsilon(&c);
            assert!(publ < got);
            // The tight bound is never larger; the published constants refuse it.
            let tight = StudyAccounting { bound: BoundChoice::Tight, ..acc };
            assert!(tight.epsilon(&c) <= got);
            assert!(StudyAccounting { constants: SensitivityConstants::Published, ..tight }.check().is_err());
        }
        let acc = StudyAccounting {
            model: StudyModel::Interval,
            n: 100,
            draws: Draws::ONE,
            delta: 0.005,
            conversion: Conversion::Paper,
            constants: SensitivityConstants::Proven,
            bound: BoundChoice::Tight,
        };
        assert_eq!(acc.epsilon(&Candidate { lengthscale: 0.5, ridge: 1.0, scale: 0.0 }), f64::INFINITY);
        assert_eq!(acc.epsilon(&Candidate { lengthscale: 0.5, ridge: -1.0, scale: 1.0 }), f64::INFINITY);
    }
}
