//! The accountant of the real-data release (App. D.2): L posterior draws of
//! the exponential kernel on the public domain Ω = [0, 1]² with Lemma B.1
//! ([`StudyModel::UnitSquare`]), for n hexagon records with |y| ≤ M_Y = 1.
//!
//! n is the number of hexagons of the **release** year and is treated as
//! public (the authors' code used the selection year's n). δ defaults to
//! n^−1.1. The release report always uses the proven constants
//! ([`StudyAccounting::proven_report`]).

use gpdp::Draws;
use gpdp::privacy::{Conversion, SensitivityConstants};

use crate::error::{Result, invalid};
use crate::excursion::accounting::{StudyAccounting, StudyModel};

/// Settings for `n` release hexagons and `draws` paths in the constraint
/// ε_L < ε₀ (the paper: 1); δ defaults to n^−1.1.
pub fn real_accounting(
    n: usize,
    draws: Draws,
    delta: Option<f64>,
    conversion: Conversion,
    constants: SensitivityConstants,
    bound: gpdp::BoundChoice,
) -> Result<StudyAccounting> {
    if n < 2 {
        return Err(invalid("release hexagons n", n as f64, "≥ 2"));
    }
    let delta = delta.unwrap_or((n as f64).powf(-1.1));
    if !(delta > 0.0 && delta < 1.0) {
        return Err(invalid("δ", delta, "in (0, 1)"));
    }
    let acc = StudyAccounting { model: StudyModel::UnitSquare, n, draws, delta, conversion, constants, bound };
    acc.check()?;
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::excursion::search::Candidate;

    #[test]
    fn defaults_kappa_and_release_n() {
        for n in [1075usize, 60, 400] {
            let acc = real_accounting(
                n,
                Draws::ONE,
                None,
                Conversion::Paper,
                SensitivityConstants::Proven,
                gpdp::BoundChoice::Paper,
            )
            .unwrap();
            assert_eq!(acc.delta, (n as f64).powf(-1.1));
            let c = Candidate { lengthscale: 0.1, ridge: 4.0, scale: 0.1 };
            let lib = acc.proven_report(&c, Draws::ONE).unwrap();
            assert_eq!(lib.components[0].sensitivity_source, gpdp::Lemma::B1);
            assert!((lib.components[0].kappa.unwrap() - (-(2f64.sqrt()) / 0.1).exp()).abs() < 1e-15);
        }
        // ε grows with n (the release year's n matters) and with L.
        let c = Candidate { lengthscale: 0.1, ridge: 3.0, scale: 0.1 };
        let small = real_accounting(
            500,
            Draws::ONE,
            None,
            Conversion::Paper,
            SensitivityConstants::Proven,
            gpdp::BoundChoice::Paper,
        )
        .unwrap();
        let large = real_accounting(
            1075,
            Draws::ONE,
            None,
            Conversion::Paper,
            SensitivityConstants::Proven,
            gpdp::BoundChoice::Paper,
        )
        .unwrap();
        assert_ne!(small.epsilon(&c), large.epsilon(&c));
        assert!(large.epsilon_draws(&c, Draws::new(3).unwrap()) > large.epsilon(&c));
        assert!(
            real_accounting(
                1,
                Draws::ONE,
                None,
                Conversion::Paper,
                SensitivityConstants::Proven,
                gpdp::BoundChoice::Paper
            )
            .is_err()
        );
        assert!(
            real_accounting(
                10,
                Draws::ONE,
                Some(1.5),
                Conversion::Paper,
                SensitivityConstants::Proven,
                gpdp::BoundChoice::Paper
            )
            .is_err()
        );
        // The published constants belong to the paper's bound.
        assert!(
            real_accounting(
                10,
                Draws::ONE,
                None,
                Conversion::Paper,
                SensitivityConstants::Published,
                gpdp::BoundChoice::Tight
            )
            .is_err()
        );
    }
}
