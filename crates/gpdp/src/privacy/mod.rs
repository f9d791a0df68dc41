//! The privacy accountant: formulas only, no GP numerics and no data
//! (docs/accountant.md). The data flow, one module each:
//!
//! ```text
//! (kernel, domain, n, r, σ, η, M_Y)  → bounds     V̂_n (Prop. 3), Δ̂_n (Lemmas B.1–B.8)
//!                                     → rdp        ε_α of one draw (Thm 3.1 / Prop. 2)
//!                                     → release    a validated Release
//!  releases × draws, tables           → event      PrivacyEvent
//!  events                             → accountant RDP composition → curve (→ table)
//!                                       pld_accountant  PLD composition (σ = ∞, η = 0)
//!  curve, δ or ε                      → conversion (ε, δ) at the optimal α → report
//!  change-one-response (X public)     → change_response  the Gaussian distance μ
//!  μ, δ or ε                          → gaussian   the exact Gaussian profile δ_μ(ε)
//! ```
//!
//! [`mod@calibrate`] inverts the whole chain; `rounding` holds the conventions
//! that make every rounding enlarge ε; [`cache`] the bounded memo tables the
//! caller owns; [`published`] is the study-only reproduction of the paper's
//! tables (not a proven guarantee). Every module imports the modules that
//! define what it uses, never this one, and the imports form no cycle
//! (report types and constants are leaves).

pub mod accountant;
pub mod bounds;
pub mod cache;
pub mod calibrate;
pub mod chain;
pub mod change_response;
pub mod constants;
pub mod conversion;
pub mod curve;
pub mod data_free;
pub mod display;
mod elementary;
pub mod event;
pub mod gaussian;
mod interval;
pub(crate) mod joint;
pub(crate) mod pld;
pub mod pld_accountant;
#[cfg(test)]
mod pld_audit;
pub mod published;
pub mod rdp;
pub mod release;
pub mod report;
mod rounding;
pub mod statement;
pub mod table;

pub use accountant::RdpAccountant;
pub use bounds::{Lemma, SensitivityBound, SensitivityChoice, VarianceBound};
pub use cache::AccountingCache;
pub use calibrate::{Calibration, Solve, Target, calibrate};
pub use constants::{PUBLISHED_LABEL, SensitivityConstants};
pub use conversion::{Accounting, Conversion, delta_for_epsilon, epsilon_for_delta};
pub use curve::RdpCurve;
pub use event::PrivacyEvent;
pub use pld_accountant::PldAccountant;
pub use published::StudyRelease;
pub use rdp::{BoundChoice, CovarianceTerm, MeanTerm, RdpBound, cov_signed, psi};
pub use release::{Release, ReleaseParams};
pub use report::{ComponentReport, GaussianRelease, GaussianReport, PldReport, PrivacyReport};
pub use table::{LEDGER_ORDERS, RdpTable};
