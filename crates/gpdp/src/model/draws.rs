//! The number L of released posterior draws.
//!
//! L is part of the guarantee (RDP composes: (α, L·ε_α), docs/accountant.md) and of
//! the sampler's work, so it has one type everywhere: a count that is at
//! least 1 by construction.

use std::fmt;
use std::num::NonZeroU64;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A number of released draws L ≥ 1 (independent posterior sample paths, or
/// adaptively chosen rounds such as Thompson sampling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Draws(NonZeroU64);

impl Draws {
    /// One draw.
    pub const ONE: Draws = Draws(NonZeroU64::MIN);

    /// L draws; refuses 0.
    pub fn new(count: u64) -> Result<Self> {
        NonZeroU64::new(count).map(Draws).ok_or_else(|| Error::InvalidParameter {
            name: "draws L",
            value: "0".into(),
            requirement: ">= 1",
        })
    }

    /// L.
    pub fn get(self) -> u64 {
        self.0.get()
    }

    /// L as a length for allocation; refuses counts beyond `usize`.
    pub fn to_usize(self) -> Result<usize> {
        usize::try_from(self.get())
            .map_err(|_| Error::TooLarge(format!("{} draws do not fit in memory on this machine", self.get())))
    }

    /// L as a float (for composition sums).
    pub fn as_f64(self) -> f64 {
        self.get() as f64
    }
}

impl Default for Draws {
    fn default() -> Self {
        Draws::ONE
    }
}

impl TryFrom<u64> for Draws {
    type Error = Error;
    fn try_from(v: u64) -> Result<Self> {
        Draws::new(v)
    }
}

impl From<Draws> for u64 {
    fn from(d: Draws) -> u64 {
        d.get()
    }
}

impl fmt::Display for Draws {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.get(), f)
    }
}

impl FromStr for Draws {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let v: u64 = s.trim().parse().map_err(|_| Error::InvalidParameter {
            name: "draws L",
            value: s.to_string(),
            requirement: "a whole number >= 1",
        })?;
        Draws::new(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_refused_and_values_round_trip() {
        assert!(Draws::new(0).is_err());
        assert_eq!(Draws::new(3).unwrap().get(), 3);
        assert_eq!("7".parse::<Draws>().unwrap().get(), 7);
        assert!("0".parse::<Draws>().is_err());
        assert!("-1".parse::<Draws>().is_err());
        assert_eq!(serde_json::to_string(&Draws::new(5).unwrap()).unwrap(), "5");
        assert!(serde_json::from_str::<Draws>("0").is_err());
        assert_eq!(Draws::default(), Draws::ONE);
    }
}
