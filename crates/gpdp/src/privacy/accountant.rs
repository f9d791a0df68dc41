//! The RDP accountant: composes privacy events by adding their Rényi-DP
//! curves order by order (docs/accountant.md).
//!
//! # What is guaranteed
//!
//! If event i is (α, R_i(α))-RDP for every admissible α (one draw of a GP
//! release: Theorem 3.1 / Prop. 2 and the tight bounds, repeated L times —
//! independent draws or adaptively chosen rounds; a tabulated curve: its
//! piecewise-constant reading), the composition is (α, Σ R_i(α))-RDP on the
//! orders admissible for every event (RDP composition, Mironov 2017,
//! Prop. 1). [`RdpAccountant::epsilon`] and [`RdpAccountant::delta`] convert
//! that sum once, at the optimal order ([`super::conversion`]), and
//! [`RdpAccountant::table`] tabulates it. Tabulated events on different
//! grids compose: each is read as its own step function, which is a valid
//! bound at every order.
//!
//! The accountant's memo tables (joint certificates, the order a
//! conversion chose) live in an [`AccountingCache`] given by the caller
//! ([`RdpAccountant::with_cache`]) or the shared bounded one; the values
//! never depend on the cache.

use crate::error::{Error, Result};
use crate::model::draws::Draws;
use crate::privacy::cache::AccountingCache;
use crate::privacy::conversion::{Accounting, Conversion, delta_for_epsilon, epsilon_for_delta};
use crate::privacy::curve::RdpCurve;
use crate::privacy::event::PrivacyEvent;
use crate::privacy::release::Release;
use crate::privacy::report::{ComponentReport, PrivacyReport};
use crate::privacy::rounding::ROUNDING_SLACK;
use crate::privacy::table::{RdpTable, round_up_sum};

/// Composes privacy events under RDP (see the module docs).
///
/// ```
/// use gpdp::{Conversion, Draws, Kernel, PrivacyEvent, RdpAccountant, ReleaseParams};
///
/// // Two releases about the same 10 records: one draw at σ = 5, then three at σ = 8.
/// let model = |scale| ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, scale);
/// let (first, second) = (model(5.0).check()?, model(8.0).check()?);
/// let mut acc = RdpAccountant::new();
/// acc.compose(PrivacyEvent::gp_release(first.clone(), Draws::ONE))?;
/// acc.compose(PrivacyEvent::gp_release(second, Draws::new(3)?))?;
/// let both = acc.epsilon(1e-3, Conversion::Improved)?;
/// let alone = first.epsilon(Draws::ONE, 1e-3, Conversion::Improved)?;
/// assert!(both.epsilon > alone.epsilon);
/// // δ at a given ε, from the same composed curve.
/// assert!(acc.delta(both.epsilon, Conversion::Improved)?.delta <= 1e-3 * (1.0 + 1e-9));
/// # Ok::<(), gpdp::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct RdpAccountant {
    events: Vec<PrivacyEvent>,
    cache: AccountingCache,
}

impl Default for RdpAccountant {
    fn default() -> Self {
        RdpAccountant::new()
    }
}

impl RdpAccountant {
    /// An accountant with nothing composed yet, using the shared bounded
    /// cache ([`AccountingCache::shared`]).
    pub fn new() -> Self {
        RdpAccountant::with_cache(AccountingCache::shared().clone())
    }

    /// An accountant with nothing composed yet, remembering its
    /// intermediate results in `cache` (a handle: clones share the tables).
    pub fn with_cache(cache: AccountingCache) -> Self {
        RdpAccountant { events: Vec::new(), cache }
    }

    /// The cache this accountant uses.
    pub fn cache(&self) -> &AccountingCache {
        &self.cache
    }

    /// Whether this accountant can account `event`: GP releases and
    /// tabulated RDP curves, i.e. every event kind defined today.
    pub fn supports(&self, event: &PrivacyEvent) -> bool {
        matches!(event, PrivacyEvent::GpRelease { .. } | PrivacyEvent::Tabulated(_) | PrivacyEvent::Gaussian { .. })
    }

    /// Composes `event`; refused ([`Error::Unsupported`]) when
    /// [`Self::supports`] is false.
    pub fn compose(&mut self, event: PrivacyEvent) -> Result<&mut Self> {
        if !self.supports(&event) {
            return Err(Error::Unsupported(format!("the RDP accountant cannot account a {}", event.kind())));
        }
        self.events.push(event);
        Ok(self)
    }

    /// Composes `draws` independent (or adaptively chosen) draws of
    /// `release` (always supported).
    pub fn compose_release(&mut self, release: Release, draws: Draws) -> &mut Self {
        self.events.push(PrivacyEvent::GpRelease { release, draws });
        self
    }

    /// The composed events, in order.
    pub fn events(&self) -> &[PrivacyEvent] {
        &self.events
    }

    /// When every event composed is a Gaussian mechanism: the composed
    /// distance √(Σ μ_j²), rounded up, whose exact (ε, δ) is
    /// [`crate::privacy::gaussian`]'s profile — tighter than the Rényi route
    /// (Gaussian DP composition, also adaptive; docs/proofs/change-response.md
    /// §3). None if any event is of another kind or there is none.
    pub fn gaussian_mu(&self) -> Option<f64> {
        if self.events.is_empty() {
            return None;
        }
        let mus: Option<Vec<f64>> = self
            .events
            .iter()
            .map(|e| match e {
                PrivacyEvent::Gaussian { mu } => Some(*mu),
                _ => None,
            })
            .collect();
        crate::privacy::gaussian::compose(&mus?).ok()
    }

    fn check_nonempty(&self) -> Result<()> {
        if self.events.is_empty() {
            return Err(Error::InvalidParameter {
                name: "accountant",
                value: "no releases".into(),
                requirement: "to hold at least one release",
            });
        }
        Ok(())
    }

    /// ε(δ) of everything composed so far, at the optimal order. The
    /// report's `components` are the composed GP releases (tabulated
    /// events enter `rdp` and ε, and have no component).
    pub fn epsilon(&self, delta: f64, conv: Conversion) -> Result<PrivacyReport> {
        self.check_nonempty()?;
        let e = epsilon_for_delta(self, delta, conv)?;
        Ok(self.report(e.epsilon, delta, e.alpha, e.rdp, conv.into(), e.clamped))
    }

    /// δ(ε) of everything composed so far, at the optimal order.
    pub fn delta(&self, epsilon: f64, conv: Conversion) -> Result<PrivacyReport> {
        self.check_nonempty()?;
        let d = delta_for_epsilon(self, epsilon, conv)?;
        Ok(self.report(epsilon, d.delta, d.alpha, d.rdp, conv.into(), false))
    }

    /// The composed curve tabulated at `orders` (increasing, > 1): at each
    /// order the certified composed RDP the conversion would use there,
    /// floating-point allowance included, rounded up to the next double;
    /// +∞ where the order is not admissible. Refused for an empty
    /// accountant or invalid orders.
    pub fn table(&self, orders: &[f64]) -> Result<RdpTable> {
        self.check_nonempty()?;
        // Validate the orders first (values are filled in below).
        RdpTable::new(orders.to_vec(), vec![0.0; orders.len()])?;
        let values = orders
            .iter()
            .map(|&a| match self.rdp(a - 1.0) {
                // An exact value (a single table's, or zero) is kept; any
                // computed one is rounded up past its allowance.
                Some((r, err)) => {
                    let v = r + err;
                    if err == 0.0 {
                        r.max(0.0)
                    } else if v.is_finite() {
                        v.max(0.0).next_up()
                    } else {
                        f64::INFINITY
                    }
                }
                None => f64::INFINITY,
            })
            .collect();
        RdpTable::new(orders.to_vec(), values)
    }

    pub(crate) fn report(
        &self,
        epsilon: f64,
        delta: f64,
        alpha: f64,
        rdp: f64,
        conv: Accounting,
        clamped: bool,
    ) -> PrivacyReport {
        let am1 = alpha - 1.0;
        let components = self
            .events
            .iter()
            .filter_map(|e| match e {
                PrivacyEvent::GpRelease { release, draws } => Some((release, draws)),
                _ => None,
            })
            .map(|(rel, count)| {
                // α is admissible for every event, except in the vacuous δ = 1
                // report, where no order was (α = 1): both terms are then ∞.
                let terms = rel.bound.terms_in(am1, &self.cache);
                let (covariance_term, mean_term) =
                    terms.map_or((f64::INFINITY, f64::INFINITY), |t| (t.covariance, t.mean));
                let mean_term_source = if terms.is_some_and(|t| t.without_gp_noise) {
                    "bounded mean of the release without GP noise (adding η is post-processing; docs/proofs/tight-accountant.md)"
                } else {
                    rel.bound.mean_term().source()
                };
                let p = &rel.params;
                ComponentReport {
                    kernel: p.kernel.kind().name().to_string(),
                    lengthscale: p.kernel.lengthscale(),
                    domain: p.domain.to_string(),
                    n: p.n,
                    ridge: p.ridge,
                    scale: p.scale,
                    gp_noise: p.gp_noise,
                    response_bound: p.response_bound,
                    draws: *count,
                    tau: rel.bound.tau(),
                    alpha_max: 1.0 + rel.bound.am1_max(),
                    bound: p.bound,
                    covariance_term,
                    covariance_term_source: rel.bound.covariance_term().source(),
                    mean_term,
                    mean_term_source,
                    variance_bound: rel.variance.value,
                    variance_bound_source: rel.variance.source.clone(),
                    kappa: rel.variance.kappa,
                    sensitivity: rel.sensitivity.value,
                    sensitivity_source: rel.sensitivity.lemma,
                    sensitivity_constants: rel.constants,
                }
            })
            .collect();
        PrivacyReport {
            epsilon,
            delta,
            alpha,
            alpha_max: 1.0 + self.am1_max(),
            rdp,
            conversion: conv,
            epsilon_clamped_at_zero: clamped,
            pld: None,
            gaussian: None,
            route: None,
            components,
        }
    }
}

/// The Rényi divergence of order α = 1 + `am1` of a Gaussian mechanism with
/// distance μ: αμ²/2 (exact; docs/proofs/change-response.md §3).
fn gaussian_rdp(am1: f64, mu: f64) -> f64 {
    0.5 * (1.0 + am1) * mu * mu
}

impl RdpTable {
    /// The certified RDP of `event` at each of `orders` (increasing, > 1):
    /// for a GP release, the bound the RDP accountant's conversion uses at
    /// that order — L·ε_α with its floating-point allowance — rounded up to
    /// the next double, +∞ where α is not admissible; for a tabulated
    /// curve, its piecewise-constant reading ([`RdpTable::at`]). Every value
    /// is an upper bound on the event's Rényi divergence at that order.
    pub fn of(event: &PrivacyEvent, orders: &[f64]) -> Result<RdpTable> {
        let mut acc = RdpAccountant::new();
        acc.compose(event.clone())?;
        acc.table(orders)
    }
}

impl RdpCurve for RdpAccountant {
    fn am1_max(&self) -> f64 {
        self.events
            .iter()
            .map(|e| match e {
                PrivacyEvent::GpRelease { release, .. } => release.bound.am1_max(),
                PrivacyEvent::Tabulated(t) => t.am1_max(),
                PrivacyEvent::Gaussian { .. } => f64::INFINITY,
            })
            .fold(f64::INFINITY, f64::min)
    }

    fn rdp(&self, am1: f64) -> Option<(f64, f64)> {
        let mut total = 0.0;
        let mut err = 0.0;
        let mut tabulated = None;
        for e in &self.events {
            match e {
                PrivacyEvent::GpRelease { release, draws } => {
                    let t = release.bound.terms_in(am1, &self.cache)?;
                    let c = draws.as_f64();
                    total += c * t.total();
                    err += c * t.err;
                }
                PrivacyEvent::Tabulated(t) => {
                    let v = t.rdp(am1)?.0;
                    tabulated = Some(tabulated.map_or(v, |s| round_up_sum(s, v)));
                }
                PrivacyEvent::Gaussian { mu } => {
                    let v = gaussian_rdp(am1, *mu);
                    total += v;
                    err += ROUNDING_SLACK * v;
                }
            }
        }
        Some(with_tabulated(total, err, tabulated))
    }

    fn rdp_closed(&self, am1: f64) -> Option<(f64, f64)> {
        let mut total = 0.0;
        let mut err = 0.0;
        let mut tabulated = None;
        for e in &self.events {
            match e {
                PrivacyEvent::GpRelease { release, draws } => {
                    let t = release.bound.with_no_joint().terms_in(am1, &self.cache)?;
                    let c = draws.as_f64();
                    total += c * t.total();
                    err += c * t.err;
                }
                PrivacyEvent::Tabulated(t) => {
                    let v = t.rdp(am1)?.0;
                    tabulated = Some(tabulated.map_or(v, |s| round_up_sum(s, v)));
                }
                PrivacyEvent::Gaussian { mu } => {
                    let v = gaussian_rdp(am1, *mu);
                    total += v;
                    err += ROUNDING_SLACK * v;
                }
            }
        }
        Some(with_tabulated(total, err, tabulated))
    }

    fn rdp_lower(&self, am1: f64) -> Option<f64> {
        let mut total = 0.0;
        for e in &self.events {
            total += match e {
                PrivacyEvent::GpRelease { release, draws } => {
                    draws.as_f64() * release.bound.terms_lower_in(am1, &self.cache)?
                }
                PrivacyEvent::Tabulated(t) => t.rdp(am1)?.0,
                PrivacyEvent::Gaussian { mu } => gaussian_rdp(am1, *mu),
            };
        }
        Some(total)
    }

    fn fingerprint(&self) -> Option<u64> {
        use std::hash::Hasher;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for e in &self.events {
            match e {
                PrivacyEvent::GpRelease { release, draws } => {
                    release.bound.fingerprint(&mut h);
                    h.write_u64(draws.get());
                }
                PrivacyEvent::Tabulated(t) => {
                    h.write_u8(0xff);
                    t.fingerprint(&mut h);
                }
                PrivacyEvent::Gaussian { mu } => {
                    h.write_u8(0xfe);
                    h.write_u64(mu.to_bits());
                }
            }
        }
        Some(h.finish())
    }

    fn orders(&self) -> Vec<f64> {
        let mut g: Vec<f64> = Vec::new();
        for e in &self.events {
            match e {
                PrivacyEvent::GpRelease { release, .. } => {
                    if let Some(p) = release.bound.joint() {
                        g.extend(crate::privacy::joint::order_grid_in(p.am1_max(), &self.cache).iter());
                    }
                }
                PrivacyEvent::Tabulated(t) => g.extend(t.am1s()),
                // αμ²/2 is smooth: the order search needs no extra orders.
                PrivacyEvent::Gaussian { .. } => {}
            }
        }
        g.sort_by(f64::total_cmp);
        g.dedup();
        g
    }

    fn cache(&self) -> &AccountingCache {
        &self.cache
    }
}

/// The composed value and its error allowance: the GP releases' sum
/// `total` with its error `err`, plus the rounding of that sum (as before
/// tables existed); the tabulated events' sum, each addition rounded up (a
/// single table's value is taken as it is, with no allowance); and, when
/// both are present, the rounding of their sum.
fn with_tabulated(total: f64, err: f64, tabulated: Option<f64>) -> (f64, f64) {
    let gp = (total, err + ROUNDING_SLACK * total.abs());
    match tabulated {
        None => gp,
        Some(t) if total == 0.0 && err == 0.0 => (t, 0.0),
        Some(t) => {
            let sum = gp.0 + t;
            (sum, gp.1 + ROUNDING_SLACK * sum.abs())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::{Kernel, KernelKind};
    use crate::privacy::release::ReleaseParams;

    /// Gaussian events: their Rényi curve αμ²/2 composes by adding μ², the
    /// exact composed distance is reported when every event is Gaussian, and
    /// the Rényi route's ε lies above the exact profile's (and within 1.6×).
    #[test]
    fn gaussian_events_compose_by_squares_and_the_rdp_route_is_looser() {
        let mut two = RdpAccountant::new();
        two.compose(PrivacyEvent::gaussian(0.3).unwrap()).unwrap();
        two.compose(PrivacyEvent::gaussian(0.4).unwrap()).unwrap();
        let mut one = RdpAccountant::new();
        one.compose(PrivacyEvent::gaussian(0.5).unwrap()).unwrap();
        for am1 in [0.1, 1.0, 10.0, 1000.0] {
            let (a, b) = (two.rdp(am1).unwrap(), one.rdp(am1).unwrap());
            assert!((a.0 - b.0).abs() <= 1e-14 * b.0 && a.1 >= 0.0, "{a:?} vs {b:?}");
            assert!((b.0 - 0.5 * (1.0 + am1) * 0.25).abs() <= 1e-15 * b.0);
        }
        let mu = two.gaussian_mu().unwrap();
        assert!(mu >= 0.5 && mu - 0.5 < 1e-14);
        for (m, delta) in [(0.5, 1e-5), (1.0, 1e-3), (2.0, 0.05)] {
            let mut acc = RdpAccountant::new();
            acc.compose(PrivacyEvent::gaussian(m).unwrap()).unwrap();
            let rdp = acc.epsilon(delta, Conversion::Improved).unwrap().epsilon;
            let exact = crate::privacy::gaussian::epsilon_for_delta(m, delta).unwrap();
            assert!(rdp >= exact && rdp <= 1.6 * exact, "μ = {m}, δ = {delta}: RDP {rdp} vs exact {exact}");
        }
        // With another kind of event there is no exact Gaussian distance.
        let p = ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, 5.0);
        two.compose_release(p.check().unwrap(), Draws::ONE);
        assert_eq!(two.gaussian_mu(), None);
        assert!(RdpAccountant::new().gaussian_mu().is_none());
        assert!(PrivacyEvent::gaussian(f64::NAN).is_err());
    }

    fn d(l: u64) -> Draws {
        Draws::new(l).unwrap()
    }

    fn fig3(draws: u64) -> PrivacyReport {
        let p = ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, 5.0);
        p.check().unwrap().epsilon(d(draws), 0.05, Conversion::Paper).unwrap()
    }

    #[test]
    fn composition_is_sublinear_in_draws() {
        let e1 = fig3(1).epsilon;
        let e10 = fig3(10).epsilon;
        assert!(e10 > e1 && e10 < 10.0 * e1, "{e1} {e10}");
        let mut last = 0.0;
        for l in 1..=20 {
            let e = fig3(l).epsilon;
            assert!(e > last);
            last = e;
        }
    }

    #[test]
    fn heterogeneous_composition_equals_sum_of_curves() {
        let a = ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, 5.0)
            .check()
            .unwrap();
        let mut pb = ReleaseParams::new(
            Kernel::new(KernelKind::SquaredExponential, 0.5).unwrap(),
            "box:0,1,0,1".parse().unwrap(),
            50,
            2.0,
            f64::INFINITY,
        );
        pb.gp_noise = 0.0;
        let b = pb.check().unwrap();
        let mut acc = RdpAccountant::new();
        acc.compose_release(a.clone(), d(2)).compose_release(b.clone(), d(3));
        let rep = acc.epsilon(1e-5, Conversion::Improved).unwrap();
        let am1 = rep.alpha - 1.0;
        let want = 2.0 * a.rdp_bound().epsilon_alpha(am1) + 3.0 * b.rdp_bound().epsilon_alpha(am1);
        assert!((rep.rdp - want).abs() < 1e-12 * want);
        assert!(rep.alpha < 1.0 + a.rdp_bound().am1_max().min(b.rdp_bound().am1_max()));
        // Composition costs more than either part alone.
        assert!(rep.epsilon > a.epsilon(d(2), 1e-5, Conversion::Improved).unwrap().epsilon);
        assert!(rep.epsilon > b.epsilon(d(3), 1e-5, Conversion::Improved).unwrap().epsilon);
        // The composed report keeps both components, in order.
        assert_eq!(rep.components.len(), 2);
        assert_eq!((rep.components[0].draws, rep.components[1].draws), (d(2), d(3)));
        assert_eq!(rep.total_draws(), 5);
        let names: Vec<String> = rep.flat_fields().into_iter().map(|(k, _)| k).collect();
        assert!(names.contains(&"component1_kernel".to_string()) && names.contains(&"component2_tau".to_string()));
    }
}
