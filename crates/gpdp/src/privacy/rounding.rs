//! Rounding conventions of the accountant: every computed bound is enlarged
//! by an a-priori bound on its floating-point error, so that rounding can
//! only make ε larger, never smaller (OpenDP's rule for privacy-critical
//! arithmetic).

/// Relative safety factor (64ε_mach, ε_mach = `f64::EPSILON` = 2⁻⁵², i.e. 128
/// units of roundoff) of the a-priori error bounds of the RDP terms and the
/// conversions (see [`super::rdp`], [`super::conversion`]). These are
/// first-order estimates with a wide margin, not machine-checked bounds.
pub(crate) const ROUNDING_SLACK: f64 = 64.0 * f64::EPSILON;

/// Relative enlargement applied to a sensitivity bound Δ̂ after it is
/// computed (16ε_mach = 32 units of roundoff: each closed form in
/// [`super::bounds`] takes fewer than 16 correctly rounded operations).
pub(crate) const SENSITIVITY_SLACK: f64 = 16.0 * f64::EPSILON;

/// `v` enlarged by [`SENSITIVITY_SLACK`].
pub(crate) fn round_up_sensitivity(v: f64) -> f64 {
    v * (1.0 + SENSITIVITY_SLACK)
}
