//! The interface between the bounds and the conversion: an RDP curve
//! R(α) on its admissible orders, with a floating-point error bound at each.
//! [`super::rdp::RdpBound`] (one draw) and [`super::accountant::Accountant`]
//! (composed releases) implement it; [`super::conversion`] consumes it.

/// An RDP curve R(α) on the admissible orders 1 < α < 1 + `am1_max()`.
pub trait RdpCurve {
    /// Sup of admissible α − 1 (may be +∞).
    fn am1_max(&self) -> f64;
    /// R(α) at α = 1 + am1 and an absolute error bound, or `None` when α is
    /// not admissible.
    fn rdp(&self, am1: f64) -> Option<(f64, f64)>;
}
