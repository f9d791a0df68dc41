//! # gpdp — differentially private Gaussian-process posterior sample paths
//!
//! Releasing one draw f_D ~ GP(μ_D, σ²k_D) of a GP posterior fitted to
//! private data D is (ε, δ)-differentially private, with ε governed by the
//! effective ridge r and the kernel scale σ (Maciazek 2026, Theorem 3.1).
//! This crate computes that guarantee exactly ([`privacy`]) and the exact
//! posterior it is about ([`posterior`]).
//!
//! ```
//! use gpdp::{Conversion, Kernel, ReleaseParams};
//!
//! // The paper's Figure 3 setting: 1-D exponential kernel, ℓ = 1, n = 10,
//! // r = 1, σ = 5, three posterior draws, δ = 0.05.
//! let release = ReleaseParams::new(
//!     Kernel::exponential(1.0)?,
//!     "interval:0,1".parse()?,
//!     10,  // n
//!     1.0, // ridge r
//!     5.0, // scale σ
//! )
//! .check()?;
//! let report = release.epsilon(3, 0.05, Conversion::Paper)?;
//! assert_eq!(report.components[0].sensitivity_source.label(), "B.7");
//! assert!(report.epsilon > 0.0 && report.epsilon < 10.0);
//! # Ok::<(), gpdp::Error>(())
//! ```
//!
//! Floating-point note: sampling uses f64 Gaussians, which are not hardened
//! against least-significant-bit attacks (Mironov 2012).

#![warn(missing_docs)]
// `!(x > 0.0)` is deliberate throughout: unlike `x <= 0.0` it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod audit;
pub mod data;
pub mod domain;
pub mod error;
pub mod excursion;
pub mod kernel;
pub mod markov1d;
pub mod points;
pub mod posterior;
pub mod privacy;
pub mod rng;
pub mod sampling;

pub use data::Dataset;
pub use domain::Domain;
pub use error::{Error, Result};
pub use kernel::{Kernel, KernelKind};
pub use points::Points;
pub use posterior::Posterior;
pub use privacy::{
    Accountant, Calibration, Conversion, Lemma, PrivacyReport, Release, ReleaseParams, SensitivityChoice, Solve,
    Target, calibrate,
};
pub use rng::ReleaseRng;
pub use sampling::{DenseSampler, Lattice, LatticeSampler, Process, SamplePath, SampledPaths, Sampler};
