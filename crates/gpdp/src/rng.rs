//! Randomness for releases.
//!
//! A private release draws from ChaCha20 (a cryptographically secure
//! generator) seeded from the operating system's entropy source; if the OS
//! cannot provide entropy, [`ReleaseRng::from_os`] fails — there is no silent
//! fallback. A seeded generator ([`ReleaseRng::seeded`]) exists for
//! experiments and tests: its output is reproducible, hence **not** a private
//! release, and [`ReleaseRng::is_private`] says so.
//!
//! Gaussian variates are f64 (ziggurat, `rand_distr::StandardNormal`); like
//! every floating-point sampler they are not hardened against
//! least-significant-bit attacks (Mironov 2012).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::error::{Error, Result};

/// The generator behind every released draw.
#[derive(Debug, Clone)]
pub struct ReleaseRng {
    inner: ChaCha20Rng,
    seed: Option<u64>,
}

impl ReleaseRng {
    /// ChaCha20 seeded with 256 bits from the operating system.
    pub fn from_os() -> Result<Self> {
        let inner = ChaCha20Rng::try_from_rng(&mut rand::rngs::SysRng)
            .map_err(|e| Error::Entropy(format!("the operating system did not provide entropy: {e}")))?;
        Ok(ReleaseRng { inner, seed: None })
    }

    /// ChaCha20 from a fixed seed: reproducible, not private.
    pub fn seeded(seed: u64) -> Self {
        ReleaseRng { inner: ChaCha20Rng::seed_from_u64(seed), seed: Some(seed) }
    }

    /// True only for an OS-seeded generator.
    pub fn is_private(&self) -> bool {
        self.seed.is_none()
    }

    /// The seed, for a seeded generator.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// A short description for reports.
    pub fn describe(&self) -> String {
        match self.seed {
            None => "ChaCha20, seeded from the operating system (private release)".into(),
            Some(s) => format!("ChaCha20, fixed seed {s} (reproducible; NOT a private release)"),
        }
    }

    /// One standard normal variate.
    #[inline]
    pub fn normal(&mut self) -> f64 {
        StandardNormal.sample(&mut self.inner)
    }

    /// Fills `out` with independent standard normal variates.
    pub fn fill_normal(&mut self, out: &mut [f64]) {
        for v in out {
            *v = StandardNormal.sample(&mut self.inner);
        }
    }

    /// A uniform variate in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        // 53 random bits.
        (self.inner.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// The underlying generator (for distributions from `rand_distr`).
    pub fn inner(&mut self) -> &mut ChaCha20Rng {
        &mut self.inner
    }
}
