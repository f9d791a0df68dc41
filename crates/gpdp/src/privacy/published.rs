//! The constants the paper's published tables were computed with — for the
//! studies that reproduce those tables, and for nothing else.
//!
//! The paper proves (App. B), with |y| ≤ M_Y and Φ_n(r) = sup_{0≤u≤V_n} u/(u + r²)²,
//!
//! ```text
//! Lemma B.1 (generic):          Δ_n ≤ 2·M_Y·(1 + √(n−1)/r)·√Φ_n
//! Lemma B.7 (exponential, 1-D): Δ_n ≤ 4·M_Y·√Φ_n
//! ```
//!
//! The authors' code, which produced the paper's Tables 1–4, uses constants √2
//! smaller. The smaller generic constant is exceeded by real neighbouring
//! pairs (an exact-divergence audit), so it is **not** a valid bound.
//!
//! # What is guaranteed
//!
//! Nothing: a [`StudyRelease`] with [`SensitivityConstants::Published`]
//! reports the number the authors' code would report. It is a separate type
//! from [`Release`]: it cannot be composed into an
//! [`super::accountant::RdpAccountant`], and no mechanism can be built from it.
//! Every report it makes says `"sensitivity_constants": "published"`, and
//! every output made from it must carry [`PUBLISHED_LABEL`].

use crate::error::{Error, Result};
use crate::model::draws::Draws;
use crate::privacy::accountant::RdpAccountant;
use crate::privacy::bounds::Lemma;
pub use crate::privacy::constants::{PUBLISHED_LABEL, SensitivityConstants};
use crate::privacy::conversion::Conversion;
use crate::privacy::rdp::BoundChoice;
use crate::privacy::release::{Release, ReleaseParams};
use crate::privacy::report::PrivacyReport;

/// A release description accounted with a study's choice of constants.
/// With [`SensitivityConstants::Proven`] it reports exactly what
/// [`Release`] reports.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyRelease {
    release: Release,
}

impl ReleaseParams {
    /// Checks the parameters like [`ReleaseParams::check`] and applies the
    /// study's constants: with `Published`, Δ̂ of Lemma B.1 or B.7 is
    /// divided by √2 (the authors' code); any other lemma is refused, since
    /// the published tables used only those two.
    ///
    /// The published constants belong to the paper's bound: with them the
    /// parameters must ask for [`BoundChoice::Paper`].
    pub fn check_study(&self, constants: SensitivityConstants) -> Result<StudyRelease> {
        if constants == SensitivityConstants::Published && self.bound != BoundChoice::Paper {
            return Err(Error::InvalidParameter {
                name: "bound",
                value: self.bound.name().into(),
                requirement: "paper with the published constants (they reproduce the paper's tables, which use the paper's bound)",
            });
        }
        let release = self.check()?;
        let release = match constants {
            SensitivityConstants::Proven => release,
            SensitivityConstants::Published => {
                let s = release.sensitivity_bound();
                if !matches!(s.lemma, Lemma::B1 | Lemma::B7) {
                    return Err(Error::InvalidLemma {
                        lemma: s.lemma.label(),
                        reason: "the published constants exist only for Lemmas B.1 and B.7".into(),
                    });
                }
                release.with_sensitivity(s.value / std::f64::consts::SQRT_2, constants)?
            }
        };
        Ok(StudyRelease { release })
    }
}

impl StudyRelease {
    /// The constants this release was accounted with.
    pub fn constants(&self) -> SensitivityConstants {
        self.release.constants
    }

    /// Δ̂_n as these constants give it.
    pub fn sensitivity(&self) -> f64 {
        self.release.sensitivity_bound().value
    }

    /// ε(δ) of `draws` draws with these constants.
    pub fn epsilon(&self, draws: Draws, delta: f64, conv: Conversion) -> Result<PrivacyReport> {
        let mut acc = RdpAccountant::new();
        acc.compose_release(self.release.clone(), draws);
        acc.epsilon(delta, conv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::Kernel;
    use crate::privacy::bounds::{SensitivityChoice, lemma_b1, lemma_b7};

    #[test]
    fn published_is_proven_over_sqrt2_for_b1_and_b7_only() {
        let s2 = std::f64::consts::SQRT_2;
        for (dom, n, r, lemma) in [
            ("interval:0,1", 100, 0.5, Lemma::B7),
            ("box:0,1,0,1", 400, 5.0, Lemma::B1),
            ("interval:0,1", 2, 2.0, Lemma::B1),
        ] {
            let mut p = ReleaseParams::new(Kernel::exponential(0.3).unwrap(), dom.parse().unwrap(), n, r, 0.5);
            p.sensitivity = SensitivityChoice::Lemma(lemma);
            let e = p.check_study(SensitivityConstants::Published).unwrap_err().to_string();
            assert!(e.contains("paper with the published constants"), "{e}");
            p.bound = BoundChoice::Paper;
            let proven = p.check_study(SensitivityConstants::Proven).unwrap();
            let published = p.check_study(SensitivityConstants::Published).unwrap();
            let v = p.check().unwrap().variance_bound().value;
            let closed = if lemma == Lemma::B7 { lemma_b7(v, r, 1.0) } else { lemma_b1(v, n, r, 1.0).unwrap() };
            assert!((proven.sensitivity() / closed - 1.0).abs() < 1e-14);
            assert!((proven.sensitivity() / published.sensitivity() - s2).abs() <= 4.0 * f64::EPSILON);
            let d = Draws::ONE;
            let e_proven = proven.epsilon(d, 1e-3, Conversion::Paper).unwrap();
            let e_lib = p.check().unwrap().epsilon(d, 1e-3, Conversion::Paper).unwrap();
            assert_eq!(e_proven, e_lib, "proven constants are the library's release");
            let e_pub = published.epsilon(d, 1e-3, Conversion::Paper).unwrap();
            assert!(e_pub.epsilon < e_proven.epsilon);
            assert!(!e_pub.is_proven() && e_proven.is_proven());
            assert_eq!(e_pub.components[0].sensitivity_constants, SensitivityConstants::Published);
        }
        let mut c = ReleaseParams::new(
            Kernel::new(crate::model::kernel::KernelKind::Constant, 1.0).unwrap(),
            "interval:0,1".parse().unwrap(),
            10,
            1.0,
            1.0,
        );
        c.sensitivity = SensitivityChoice::Lemma(Lemma::B4);
        c.bound = BoundChoice::Paper;
        assert!(c.check_study(SensitivityConstants::Published).unwrap_err().to_string().contains("B.1 and B.7"));
        assert_eq!("Published".parse::<SensitivityConstants>().unwrap(), SensitivityConstants::Published);
        assert!("b7".parse::<SensitivityConstants>().is_err());
        assert_eq!(SensitivityConstants::Published.label(), Some(PUBLISHED_LABEL));
    }
}
