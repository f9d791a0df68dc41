//! Which constants the sensitivity bounds Δ̂_n use in the studies.
//!
//! The paper proves (App. B, SPEC §2.7), with |y| ≤ M_Y and
//! Φ_n(r) = sup_{0≤u≤V_n} u/(u + r²)²,
//!
//! ```text
//! Lemma B.1 (generic):          Δ_n ≤ 2·M_Y·(1 + √(n−1)/r)·√Φ_n
//! Lemma B.7 (exponential, 1-D): Δ_n ≤ 4·M_Y·√Φ_n
//! ```
//!
//! The authors' code, which produced the paper's Tables 1–4, uses constants
//! √2 smaller (2√2·M_Y·√Φ_n and √2·M_Y·(1 + √(n−1)/r)·√Φ_n; SPEC §6). The
//! smaller generic constant is exceeded by real neighbouring pairs, so it is
//! **not** a valid bound. [`SensitivityConstants::Published`] exists only so
//! the studies can reproduce the published tables; everything computed with
//! it must carry [`PUBLISHED_LABEL`]. It is deliberately not a
//! `gpdp::SensitivityChoice`: no release can use it.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::error::Error;

/// The label every output computed with [`SensitivityConstants::Published`]
/// must carry.
pub const PUBLISHED_LABEL: &str = "reproduces the published tables; not a proven guarantee";

/// The constants of the Δ̂_n bounds used by a study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SensitivityConstants {
    /// Lemmas B.1 and B.7 as proved in the paper (a valid guarantee).
    #[default]
    Proven,
    /// The authors' code: Δ̂ of Lemmas B.1 and B.7 divided by √2. Reproduces
    /// the published tables; not a proven guarantee.
    Published,
}

impl SensitivityConstants {
    /// "proven" or "published".
    pub fn name(self) -> &'static str {
        match self {
            SensitivityConstants::Proven => "proven",
            SensitivityConstants::Published => "published",
        }
    }

    /// The warning label outputs must carry, if any.
    pub fn label(self) -> Option<&'static str> {
        match self {
            SensitivityConstants::Proven => None,
            SensitivityConstants::Published => Some(PUBLISHED_LABEL),
        }
    }

    /// A proven bound Δ̂ turned into the one these constants use
    /// (Δ̂ itself, or Δ̂/√2).
    pub fn apply(self, proven: f64) -> f64 {
        match self {
            SensitivityConstants::Proven => proven,
            SensitivityConstants::Published => proven / std::f64::consts::SQRT_2,
        }
    }

    /// Lemma B.7 with these constants: 4·M_Y·√Φ_n (proven) or 2√2·M_Y·√Φ_n.
    pub fn lemma_b7(self, v: f64, ridge: f64, m_y: f64) -> f64 {
        self.apply(gpdp::privacy::bounds::lemma_b7(v, ridge, m_y))
    }

    /// Lemma B.1 with these constants: 2·M_Y·(1 + √(n−1)/r)·√Φ_n (proven) or
    /// √2·M_Y·(1 + √(n−1)/r)·√Φ_n.
    pub fn lemma_b1(self, v: f64, n: usize, ridge: f64, m_y: f64) -> f64 {
        self.apply(gpdp::privacy::bounds::lemma_b1(v, n, ridge, m_y))
    }
}

impl fmt::Display for SensitivityConstants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SensitivityConstants {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "proven" => Ok(SensitivityConstants::Proven),
            "published" => Ok(SensitivityConstants::Published),
            _ => Err(Error::InvalidConfig {
                field: "sensitivity constants",
                value: s.to_string(),
                requirement: "'proven' or 'published'",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpdp::privacy::bounds::{lemma_b1, lemma_b7, phi};

    #[test]
    fn published_is_proven_over_sqrt2_exactly() {
        let s2 = std::f64::consts::SQRT_2;
        for (v, r, n) in [(0.3, 0.05, 100usize), (1.0, 2.0, 2), (0.9, 0.7, 400), (0.01, 10.0, 50)] {
            let (p7, q7) =
                (SensitivityConstants::Proven.lemma_b7(v, r, 1.0), SensitivityConstants::Published.lemma_b7(v, r, 1.0));
            assert_eq!(p7, lemma_b7(v, r, 1.0));
            assert_eq!(q7, lemma_b7(v, r, 1.0) / s2);
            assert!((p7 / q7 - s2).abs() <= 2.0 * f64::EPSILON);
            // The authors' formula 2√2·M_Y·√Φ_n.
            assert!((q7 - 2.0 * s2 * phi(v, r).sqrt()).abs() <= 4.0 * f64::EPSILON * q7);
            let (p1, q1) = (
                SensitivityConstants::Proven.lemma_b1(v, n, r, 1.0),
                SensitivityConstants::Published.lemma_b1(v, n, r, 1.0),
            );
            assert_eq!(p1, lemma_b1(v, n, r, 1.0));
            assert!((p1 / q1 - s2).abs() <= 2.0 * f64::EPSILON);
        }
        assert_eq!(SensitivityConstants::default(), SensitivityConstants::Proven);
        assert_eq!(SensitivityConstants::Proven.label(), None);
        assert_eq!(SensitivityConstants::Published.label(), Some(PUBLISHED_LABEL));
        assert_eq!("Published".parse::<SensitivityConstants>().unwrap(), SensitivityConstants::Published);
        assert!("b7".parse::<SensitivityConstants>().is_err());
    }
}
