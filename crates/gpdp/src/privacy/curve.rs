//! The interface between the bounds and the conversion: an RDP curve
//! R(α) on its admissible orders, with a floating-point error bound at each.
//! [`super::rdp::RdpBound`] (one draw), [`super::accountant::RdpAccountant`]
//! (composed events) and [`super::table::RdpTable`] (a tabulated curve)
//! implement it; [`super::conversion`] consumes it.

use crate::privacy::cache::AccountingCache;

/// An RDP curve R(α) on the admissible orders 1 < α < 1 + `am1_max()`.
pub trait RdpCurve {
    /// Sup of admissible α − 1 (may be +∞).
    fn am1_max(&self) -> f64;
    /// R(α) at α = 1 + am1 and an absolute error bound, or `None` when α is
    /// not admissible.
    fn rdp(&self, am1: f64) -> Option<(f64, f64)>;

    /// Orders α − 1 at which the curve is defined piecewise (a curve
    /// certified on a grid, constant up to each grid order): the conversion
    /// also tries each of them. Empty by default.
    fn orders(&self) -> Vec<f64> {
        Vec::new()
    }

    /// A cheap value ≤ R(α) (up to rounding) used only to decide which
    /// orders to certify; by default R(α) itself.
    fn rdp_lower(&self, am1: f64) -> Option<f64> {
        self.rdp(am1).map(|r| r.0)
    }

    /// The curve without its certified piecewise part (for curves with
    /// [`Self::orders`]): a closed-form R'(α) ≥ R(α) at every order, cheap to
    /// evaluate anywhere. The conversion takes the better of the bounded
    /// search over certified orders and the closed form's optimum, so a
    /// certified curve never reports more than its closed form (the tight
    /// bound). By default R(α) itself.
    fn rdp_closed(&self, am1: f64) -> Option<(f64, f64)> {
        self.rdp(am1)
    }

    /// A hash of everything the curve's values depend on, for curves with
    /// [`Self::orders`]: the conversion then remembers which order it chose
    /// (every value is still recomputed, so this only saves the search).
    fn fingerprint(&self) -> Option<u64> {
        None
    }

    /// Where the conversion remembers the order it chose for a curve with
    /// a [`Self::fingerprint`] (bounded; never changes a value). By default
    /// the shared cache.
    fn cache(&self) -> &AccountingCache {
        AccountingCache::shared()
    }
}
