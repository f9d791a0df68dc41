//! The constants of the Δ̂_n bounds: the proven ones, or the published
//! (study-only) ones of [`super::published`]. A leaf module: the reports
//! and the accountants name these constants without importing the studies'
//! code.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Result};

/// The label every output computed with [`SensitivityConstants::Published`]
/// must carry.
pub const PUBLISHED_LABEL: &str = "reproduces the published tables; not a proven guarantee";

/// The constants of the Δ̂_n bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SensitivityConstants {
    /// The lemmas as proved (a valid guarantee). Every release uses these.
    #[default]
    Proven,
    /// The authors' code: Δ̂ of Lemmas B.1 and B.7 divided by √2. Reproduces
    /// the published tables; not a proven guarantee; studies only.
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
}

impl fmt::Display for SensitivityConstants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SensitivityConstants {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "proven" => Ok(SensitivityConstants::Proven),
            "published" => Ok(SensitivityConstants::Published),
            _ => Err(Error::InvalidParameter {
                name: "sensitivity constants",
                value: s.to_string(),
                requirement: "'proven' or 'published'",
            }),
        }
    }
}
