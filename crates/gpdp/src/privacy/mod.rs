//! The privacy accountant: formulas only, no GP numerics and no data
//! (docs/accountant.md). The data flow, one module each:
//!
//! ```text
//! (kernel, domain, n, r, σ, η, M_Y)  → bounds     V̂_n (Prop. 3), Δ̂_n (Lemmas B.1–B.8)
//!                                     → rdp        ε_α of one draw (Thm 3.1 / Prop. 2)
//!  releases × draws                   → accountant RDP composition → curve
//!  curve, δ or ε                      → conversion (ε, δ) at the optimal α → report
//! ```
//!
//! [`mod@calibrate`] inverts the whole chain; `rounding` holds the conventions
//! that make every rounding enlarge ε; [`published`] is the study-only
//! reproduction of the paper's tables (not a proven guarantee).

pub mod accountant;
pub mod bounds;
pub mod calibrate;
pub mod conversion;
pub mod curve;
mod interval;
pub mod joint;
pub mod pld;
pub mod published;
pub mod rdp;
pub mod report;
mod rounding;

pub use accountant::{Accountant, Release, ReleaseParams};
pub use bounds::{Lemma, SensitivityBound, SensitivityChoice, VarianceBound};
pub use calibrate::{Calibration, Solve, Target, calibrate};
pub use conversion::{Conversion, delta_for_epsilon, epsilon_for_delta};
pub use curve::RdpCurve;
pub use published::{PUBLISHED_LABEL, SensitivityConstants, StudyRelease};
pub use rdp::{BoundChoice, CovarianceTerm, MeanTerm, RdpBound, cov_signed, psi};
pub use report::{ComponentReport, PrivacyReport};
