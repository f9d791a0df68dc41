//! The privacy accountant: formulas only, no GP numerics and no data
//! (SPEC §2). Bounds ([`bounds`]) feed the single-draw RDP curve ([`rdp`]),
//! releases compose ([`accountant`]) and convert to (ε, δ) ([`conversion`]);
//! [`calibrate`] inverts the whole chain.

pub mod accountant;
pub mod bounds;
pub mod calibrate;
pub mod conversion;
pub mod rdp;

pub use accountant::{Accountant, ComponentReport, PrivacyReport, Release, ReleaseParams};
pub use bounds::{Lemma, SensitivityBound, SensitivityChoice, VarianceBound};
pub use calibrate::{Calibration, Solve, Target, calibrate};
pub use conversion::{Conversion, RdpCurve, delta_for_epsilon, epsilon_for_delta};
pub use rdp::{Draws, RdpBound, psi};
