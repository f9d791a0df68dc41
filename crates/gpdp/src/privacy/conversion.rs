//! Rényi-DP → (ε, δ)-DP, both ways, optimised over the order α
//! (docs/accountant.md).
//!
//! # What is guaranteed
//!
//! If a mechanism is (α, R(α))-RDP for every admissible α, then for **any**
//! single admissible α it is (ε, δ)-DP with
//!
//! * `Paper` (Mironov 2017, Prop. 3, used by the paper):
//!   ε = R(α) + log(1/δ)/(α − 1);
//! * `Improved` (Canonne, Kamath & Steinke 2020, Prop. 12; Balle et al. 2020,
//!   Thm. 21): ε = R(α) + log((α−1)/α) − (log δ + log α)/(α − 1),
//!
//! and, solved for δ at a given ε, δ = exp((α−1)(R(α) − ε)) (paper) or
//! δ = exp((α−1)(R(α) − ε + log((α−1)/α)) − log α) (improved).
//!
//! The optimisation over α therefore only affects tightness, never validity.
//! The number reported is the conversion **evaluated at the reported α**
//! (never an interpolated value), plus an a-priori bound on its
//! floating-point error, rounded up to the next float. When that number is
//! negative (possible with `Improved` when R(α) ≈ 0) we report ε = 0: the
//! hockey-stick divergence E_{e^ε} is non-increasing in ε, so (ε', δ)-DP with
//! ε' < 0 implies (0, δ)-DP. A reported δ ≥ 1 is a vacuous statement and is
//! reported as 1.
//!
//! # Errors
//!
//! δ ∉ (0, 1) or ε < 0 / NaN.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result, fmt_value, unit_open};
use crate::privacy::curve::RdpCurve;
use crate::privacy::elementary::{exp, ln, ln_1p};
use crate::privacy::rounding::ROUNDING_SLACK;

/// Which RDP → (ε, δ) conversion to use. Both are valid at every order;
/// they differ only in tightness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Conversion {
    /// Mironov (2017), Prop. 3: ε = R + log(1/δ)/(α−1). The paper's choice.
    Paper,
    /// Canonne–Kamath–Steinke (2020) / Balle et al. (2020): tighter.
    #[default]
    Improved,
}

impl Conversion {
    /// "paper" or "improved".
    pub fn name(self) -> &'static str {
        match self {
            Conversion::Paper => "paper",
            Conversion::Improved => "improved",
        }
    }
}

impl fmt::Display for Conversion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why "pld" is refused where an RDP conversion is required (the ledger).
pub const PLD_IS_NOT_A_CONVERSION: &str = "'improved' or 'paper': pld is a second accountant (privacy-loss distributions of covariance-only releases), not a conversion of a Rényi-DP curve, and the ledger composes the Rényi-DP curves of its releases and converts them once";

impl FromStr for Conversion {
    type Err = Error;
    /// "paper" (or "mironov"), "improved" (or "cks", "balle"), any case;
    /// "pld" is refused with [`PLD_IS_NOT_A_CONVERSION`].
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "paper" | "mironov" => Ok(Conversion::Paper),
            "improved" | "cks" | "balle" => Ok(Conversion::Improved),
            "pld" => Err(Error::InvalidParameter {
                name: "conversion",
                value: s.to_string(),
                requirement: PLD_IS_NOT_A_CONVERSION,
            }),
            _ => Err(Error::InvalidParameter {
                name: "conversion",
                value: s.to_string(),
                requirement: "'improved' or 'paper'",
            }),
        }
    }
}

/// The user's choice of accountant (CLI `--conversion`, the server's and
/// Python's `conversion`): the RDP accountant with a conversion, or the PLD
/// accountant. Written with the same strings as before the split:
/// "improved" (the default), "paper", "pld".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accounting {
    /// [`super::accountant::RdpAccountant`] with this conversion.
    Rdp(Conversion),
    /// [`super::pld_accountant::PldAccountant`] (covariance-only releases).
    Pld,
}

impl Default for Accounting {
    fn default() -> Self {
        Accounting::Rdp(Conversion::Improved)
    }
}

impl From<Conversion> for Accounting {
    fn from(c: Conversion) -> Self {
        Accounting::Rdp(c)
    }
}

impl TryFrom<Accounting> for Conversion {
    type Error = Error;
    /// The RDP conversion of an accounting choice; "pld" is refused with the
    /// same error as parsing "pld" as a [`Conversion`]
    /// ([`PLD_IS_NOT_A_CONVERSION`]): the one refusal of PLD where an RDP
    /// curve is composed (the ledger).
    fn try_from(a: Accounting) -> Result<Conversion> {
        match a {
            Accounting::Rdp(c) => Ok(c),
            Accounting::Pld => "pld".parse(),
        }
    }
}

impl Accounting {
    /// "improved", "paper" or "pld".
    pub fn name(self) -> &'static str {
        match self {
            Accounting::Rdp(c) => c.name(),
            Accounting::Pld => "pld",
        }
    }

    /// The RDP conversion, or `None` for PLD.
    pub fn conversion(self) -> Option<Conversion> {
        match self {
            Accounting::Rdp(c) => Some(c),
            Accounting::Pld => None,
        }
    }
}

impl fmt::Display for Accounting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Accounting {
    type Err = Error;
    /// "pld", or any spelling [`Conversion`] accepts.
    fn from_str(s: &str) -> Result<Self> {
        if s.trim().eq_ignore_ascii_case("pld") {
            return Ok(Accounting::Pld);
        }
        s.parse::<Conversion>().map(Accounting::Rdp).map_err(|_| Error::InvalidParameter {
            name: "conversion",
            value: s.to_string(),
            requirement: "'improved', 'paper' or 'pld'",
        })
    }
}

impl serde::Serialize for Accounting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Accounting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// ε(δ) at a given order, with an absolute error bound.
pub(crate) fn epsilon_at(conv: Conversion, r: f64, am1: f64, log_delta: f64) -> (f64, f64) {
    let log_alpha = ln_1p(am1);
    match conv {
        Conversion::Paper => {
            let c = -log_delta / am1;
            (r + c, ROUNDING_SLACK * c.abs())
        }
        Conversion::Improved => {
            let a = ln(am1 / (1.0 + am1));
            let b = (log_delta + log_alpha) / am1;
            (r + a - b, ROUNDING_SLACK * (a.abs() + (log_delta.abs() + log_alpha) / am1 + 1.0))
        }
    }
}

/// log δ(ε) at a given order, with an absolute error bound.
fn log_delta_at(conv: Conversion, r: f64, am1: f64, eps: f64) -> (f64, f64) {
    match conv {
        Conversion::Paper => (am1 * (r - eps), ROUNDING_SLACK * am1 * (r.abs() + eps)),
        Conversion::Improved => {
            let log_alpha = ln_1p(am1);
            let a = ln(am1 / (1.0 + am1));
            let v = am1 * (r - eps + a) - log_alpha;
            (v, ROUNDING_SLACK * (am1 * (r.abs() + eps + a.abs() + 1.0) + log_alpha))
        }
    }
}

/// Grid over t = logit((α−1)/(α_max−1)) (t = log(α−1) when α_max = ∞), then
/// Brent refinement. The grid's lower end reaches α − 1 = [`AM1_MIN`] however
/// large α_max − 1 is (with GP noise η ≫ σ, α_max − 1 = 1/τ̃ can exceed 10²⁰
/// while the optimum stays at α ≈ 3), and its steps are at most 2 in t.
const T_LO: f64 = -34.0;
const T_HI: f64 = 34.0;
const GRID: usize = 35;
const MAX_STEP: f64 = 2.0;

/// The smallest α − 1 the search considers (the conversion's log(1/δ)/(α−1)
/// is at least 10¹² there: never the optimum of a useful statement).
pub(crate) const AM1_MIN: f64 = 1e-12;

fn am1_of(t: f64, am1_max: f64) -> f64 {
    if am1_max.is_finite() {
        // u = 1/(1 + e^{−t}), am1 = am1_max·u
        am1_max / (1.0 + exp(-t))
    } else {
        exp(t)
    }
}

/// Minimises `f(am1)` over the admissible orders; returns the minimising
/// α − 1 and the minimum (+∞ when `f` is infinite everywhere). `f` returns
/// +∞ (or NaN) outside the admissible range.
/// [`minimise_over_order`], also trying each of `extra` (orders α − 1 where
/// a piecewise curve takes its values; [`RdpCurve::orders`]).
pub(crate) fn minimise_over_orders(am1_max: f64, extra: &[f64], f: impl Fn(f64) -> f64) -> (f64, f64) {
    let (mut am1, mut best) = minimise_over_order(am1_max, &f);
    for &a in extra {
        let v = f(a);
        if v < best {
            (am1, best) = (a, v);
        }
    }
    (am1, best)
}

pub(crate) fn minimise_over_order(am1_max: f64, f: impl Fn(f64) -> f64) -> (f64, f64) {
    let g = |t: f64| {
        let v = f(am1_of(t, am1_max));
        if v.is_nan() { f64::INFINITY } else { v }
    };
    let t_lo = if am1_max.is_finite() { T_LO.min(ln(AM1_MIN / am1_max)) } else { T_LO };
    let points = GRID.max(((T_HI - t_lo) / MAX_STEP).ceil() as usize + 1);
    let step = (T_HI - t_lo) / (points - 1) as f64;
    let mut best_i = 0;
    let mut best_v = f64::INFINITY;
    for i in 0..points {
        let v = g(t_lo + step * i as f64);
        if v < best_v {
            best_v = v;
            best_i = i;
        }
    }
    let t_best = t_lo + step * best_i as f64;
    if !best_v.is_finite() {
        return (am1_of(t_best, am1_max), best_v);
    }
    let lo = t_lo + step * best_i.saturating_sub(1) as f64;
    let hi = t_lo + step * (best_i + 1).min(points - 1) as f64;
    let (t, v) = brent_min(&g, lo, hi, t_best, best_v, 1e-10);
    if v <= best_v { (am1_of(t, am1_max), v) } else { (am1_of(t_best, am1_max), best_v) }
}

/// Brent's minimiser (golden section with parabolic steps) on [a, b],
/// starting from x with f(x) = fx. Returns the best point seen.
fn brent_min(f: &impl Fn(f64) -> f64, mut a: f64, mut b: f64, x0: f64, fx0: f64, tol: f64) -> (f64, f64) {
    const CGOLD: f64 = 0.381_966_011_250_105_1;
    let (mut x, mut w, mut v) = (x0, x0, x0);
    let (mut fx, mut fw, mut fv) = (fx0, fx0, fx0);
    let (mut d, mut e) = (0.0f64, 0.0f64);
    for _ in 0..100 {
        let xm = 0.5 * (a + b);
        let tol1 = tol * x.abs() + 1e-12;
        let tol2 = 2.0 * tol1;
        if (x - xm).abs() <= tol2 - 0.5 * (b - a) {
            break;
        }
        let mut golden = true;
        if e.abs() > tol1 {
            let r = (x - w) * (fx - fv);
            let mut q = (x - v) * (fx - fw);
            let mut p = (x - v) * q - (x - w) * r;
            q = 2.0 * (q - r);
            if q > 0.0 {
                p = -p;
            }
            q = q.abs();
            let etemp = e;
            e = d;
            if p.abs() < (0.5 * q * etemp).abs() && p > q * (a - x) && p < q * (b - x) {
                d = p / q;
                let u = x + d;
                if u - a < tol2 || b - u < tol2 {
                    d = if xm >= x { tol1 } else { -tol1 };
                }
                golden = false;
            }
        }
        if golden {
            e = if x >= xm { a - x } else { b - x };
            d = CGOLD * e;
        }
        let u = if d.abs() >= tol1 { x + d } else { x + tol1.copysign(d) };
        let fu = f(u);
        if fu <= fx {
            if u >= x {
                a = x
            } else {
                b = x
            }
            v = w;
            fv = fw;
            w = x;
            fw = fx;
            x = u;
            fx = fu;
        } else {
            if u < x {
                a = u
            } else {
                b = u
            }
            if fu <= fw || w == x {
                v = w;
                fv = fw;
                w = u;
                fw = fu;
            } else if fu <= fv || v == x || v == w {
                v = u;
                fv = fu;
            }
        }
    }
    (x, fx)
}

/// Snaps an order to a representable α = 1 + am1 (so that α − 1 is exact)
/// that is admissible for `curve`: the nearest double at or below 1 + am1,
/// or, when am1 is below the spacing of doubles at 1, the smallest α > 1.
fn snap<C: RdpCurve + ?Sized>(curve: &C, am1: f64) -> Option<(f64, f64, (f64, f64))> {
    let mut alpha = (1.0 + am1).max(1.0f64.next_up());
    for _ in 0..64 {
        let a = alpha - 1.0; // exact (Sterbenz / same binade)
        if a > 0.0 {
            if let Some(r) = curve.rdp(a) {
                return Some((alpha, a, r));
            }
        }
        alpha = alpha.next_down();
    }
    None
}

/// The result of an ε(δ) evaluation.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct EpsilonAt {
    /// The reported ε ≥ 0: the conversion at `alpha`, rounded up.
    pub epsilon: f64,
    /// The optimised order α.
    pub alpha: f64,
    /// R(α): the (composed) RDP at `alpha`.
    pub rdp: f64,
    /// Whether the conversion was negative and ε = 0 is reported.
    pub clamped: bool,
}

/// At most this many orders of a certified curve ([`RdpCurve::orders`]) are
/// certified per query, in the order of their lower estimates. Each
/// certificate costs at most `joint::MAX_BOXES` boxes, so the work of one
/// (ε, δ) query is bounded whatever the parameters (issue 22: some joint
/// queries took 80 s). The answer is the better of the best certified order
/// and the optimum of the closed form ([`RdpCurve::rdp_closed`], the tight
/// bound) over all orders: never above the closed form, and every value is
/// an upper bound, so the cap only affects tightness.
pub const MAX_CERTIFIED_ORDERS: usize = 3;

/// A curve's closed form as a curve of its own.
struct Closed<'a, C: ?Sized>(&'a C);

impl<C: RdpCurve + ?Sized> RdpCurve for Closed<'_, C> {
    fn am1_max(&self) -> f64 {
        self.0.am1_max()
    }
    fn rdp(&self, am1: f64) -> Option<(f64, f64)> {
        self.0.rdp_closed(am1)
    }
}

/// The bounded search of a certified curve: `value(am1, r)` is the
/// objective (ε or log δ) at order am1 with RDP r, increasing in r. Returns
/// (am1, value, whether the closed form gave it).
fn certified_search<C: RdpCurve + ?Sized>(
    curve: &C,
    orders: &[f64],
    value: impl Fn(f64, f64) -> f64,
) -> (f64, f64, bool) {
    let mut est: Vec<(f64, f64)> =
        orders.iter().filter_map(|&a| curve.rdp_lower(a).map(|r| (value(a, r), a))).collect();
    est.sort_by(|x, y| x.0.total_cmp(&y.0));
    // An order whose estimate is within 0.2% of the best certified value is
    // not worth another certification (this only affects tightness).
    let mut best = (f64::NAN, f64::INFINITY);
    for (lower, a) in est.into_iter().take(MAX_CERTIFIED_ORDERS) {
        if lower >= best.1 - 2e-3 * best.1.abs() {
            break;
        }
        let v = curve.rdp(a).map_or(f64::INFINITY, |(r, _)| value(a, r));
        if v < best.1 {
            best = (a, v);
        }
    }
    let closed =
        minimise_over_order(curve.am1_max(), |am1| curve.rdp_closed(am1).map_or(f64::INFINITY, |(r, _)| value(am1, r)));
    if closed.1 < best.1 { (closed.0, closed.1, true) } else { (best.0, best.1, false) }
}

/// ε(δ) = min over admissible α of the conversion (see the module docs).
pub fn epsilon_for_delta<C: RdpCurve + ?Sized>(curve: &C, delta: f64, conv: Conversion) -> Result<EpsilonAt> {
    unit_open("δ", delta)?;
    let log_delta = ln(delta);
    let am1_max = curve.am1_max();
    let obj = |am1: f64| match curve.rdp(am1) {
        Some((r, _)) => epsilon_at(conv, r, am1, log_delta).0,
        None => f64::INFINITY,
    };
    let orders = curve.orders();
    let remembered = curve.fingerprint().map(|f| [f, delta.to_bits(), conv as u64]);
    let chosen = remembered.and_then(|k| curve.cache().chosen(&k));
    let (am1, best, closed) = if orders.is_empty() {
        let (a, v) = minimise_over_order(am1_max, obj);
        (a, v, false)
    } else if let Some((a, closed)) = chosen {
        let r = if closed { curve.rdp_closed(a) } else { curve.rdp(a) };
        (a, r.map_or(f64::INFINITY, |(r, _)| epsilon_at(conv, r, a, log_delta).0), closed)
    } else {
        // A curve certified on a grid of orders (constant up to each one):
        // with α < 1/δ the conversion falls in α at a fixed R, so the
        // minimum is at a grid order. Certify at most MAX_CERTIFIED_ORDERS
        // orders in the order of their lower estimates, stopping when no
        // estimate can beat the best certified ε; compare with the closed
        // form's optimum (every value taken is an upper bound).
        let found = certified_search(curve, &orders, |a, r| epsilon_at(conv, r, a, log_delta).0);
        if let (Some(k), true) = (remembered, found.1.is_finite()) {
            curve.cache().put_chosen(k, (found.0, found.2));
        }
        found
    };
    if !best.is_finite() {
        return Err(Error::Vacuous(format!(
            "no admissible order α gives a finite ε (α_max − 1 = {am1_max:e}; the RDP terms overflow); increase the ridge r or the scale σ"
        )));
    }
    let snapped = if closed { snap(&Closed(curve), am1) } else { snap(curve, am1) };
    let (alpha, am1, (r, r_err)) = snapped.ok_or_else(|| {
        Error::Vacuous(format!(
            "no order α > 1 is admissible in double precision (α_max − 1 = {am1_max:e}), so ε is unbounded; increase the ridge r (or add GP noise η)"
        ))
    })?;
    let (e, e_err) = epsilon_at(conv, r, am1, log_delta);
    let up = (e + r_err + e_err).next_up();
    if !up.is_finite() {
        return Err(Error::InvalidParameter {
            name: "ε",
            value: fmt_value(up),
            requirement: "finite (no admissible order gives a finite bound)",
        });
    }
    let clamped = up <= 0.0;
    Ok(EpsilonAt { epsilon: if clamped { 0.0 } else { up }, alpha, rdp: r, clamped })
}

/// The result of a δ(ε) evaluation.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DeltaAt {
    /// The reported δ ∈ (0, 1]: the conversion at `alpha`, rounded up.
    pub delta: f64,
    /// The optimised order α.
    pub alpha: f64,
    /// R(α).
    pub rdp: f64,
}

/// The largest ε for which δ(ε) is computed (beyond it (α − 1)·ε can
/// overflow; δ there is below the smallest positive double anyway).
pub const MAX_EPSILON: f64 = 1e100;

/// δ(ε) = min over admissible α of the conversion solved for δ. When no
/// order α > 1 is admissible in double precision, the only valid statement
/// is the vacuous δ = 1 (reported with α = 1 and R = ∞).
pub fn delta_for_epsilon<C: RdpCurve + ?Sized>(curve: &C, epsilon: f64, conv: Conversion) -> Result<DeltaAt> {
    if !(epsilon.is_finite() && (0.0..=MAX_EPSILON).contains(&epsilon)) {
        return Err(Error::InvalidParameter {
            name: "ε",
            value: fmt_value(epsilon),
            requirement: "a number in [0, 1e100] (δ is below the smallest positive double long before)",
        });
    }
    let obj = |am1: f64| match curve.rdp(am1) {
        Some((r, _)) => log_delta_at(conv, r, am1, epsilon).0,
        None => f64::INFINITY,
    };
    let orders = curve.orders();
    let (am1, best, closed) = if orders.is_empty() {
        let (a, v) = minimise_over_orders(curve.am1_max(), &orders, obj);
        (a, v, false)
    } else {
        // As for ε(δ): a bounded number of certified orders, against the
        // closed form's optimum.
        certified_search(curve, &orders, |a, r| log_delta_at(conv, r, a, epsilon).0)
    };
    let snapped = match (best.is_finite(), closed) {
        (false, _) => None,
        (true, true) => snap(&Closed(curve), am1),
        (true, false) => snap(curve, am1),
    };
    let Some((alpha, am1, (r, r_err))) = snapped else {
        return Ok(DeltaAt { delta: 1.0, alpha: 1.0, rdp: f64::INFINITY });
    };
    let (ld, ld_err) = log_delta_at(conv, r, am1, epsilon);
    let ld_up = ld + ld_err + am1 * r_err;
    let delta = exp(ld_up).next_up().min(1.0);
    Ok(DeltaAt { delta, alpha, rdp: r })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Gaussian mechanism with sensitivity 1 and noise s: R(α) = α/(2s²),
    /// all α > 1 admissible.
    struct Gaussian(f64);
    impl RdpCurve for Gaussian {
        fn am1_max(&self) -> f64 {
            f64::INFINITY
        }
        fn rdp(&self, am1: f64) -> Option<(f64, f64)> {
            (am1 > 0.0).then(|| ((1.0 + am1) / (2.0 * self.0 * self.0), 0.0))
        }
    }

    #[test]
    fn gaussian_paper_conversion_closed_form() {
        // min_α α/(2s²) + log(1/δ)/(α−1): α* − 1 = s·√(2 log(1/δ)),
        // ε* = 1/(2s²) + √(2 log(1/δ))/s.
        let (s, delta) = (3.0f64, 1e-5f64);
        let e = epsilon_for_delta(&Gaussian(s), delta, Conversion::Paper).unwrap();
        let l = (1.0 / delta).ln();
        let want = 1.0 / (2.0 * s * s) + (2.0 * l).sqrt() / s;
        assert!(e.epsilon >= want && (e.epsilon - want) / want < 1e-10, "{} vs {want}", e.epsilon);
        assert!((e.alpha - 1.0 - s * (2.0 * l).sqrt()).abs() < 1e-3);
    }

    #[test]
    fn improved_is_tighter_and_inverse_round_trips() {
        for s in [0.5, 2.0, 10.0] {
            for delta in [1e-9, 1e-5, 0.05] {
                let p = epsilon_for_delta(&Gaussian(s), delta, Conversion::Paper).unwrap();
                let i = epsilon_for_delta(&Gaussian(s), delta, Conversion::Improved).unwrap();
                assert!(i.epsilon < p.epsilon);
                for conv in [Conversion::Paper, Conversion::Improved] {
                    let e = epsilon_for_delta(&Gaussian(s), delta, conv).unwrap();
                    let d = delta_for_epsilon(&Gaussian(s), e.epsilon, conv).unwrap();
                    assert!((d.delta - delta).abs() / delta < 1e-6, "{conv} s={s}: {} vs {delta}", d.delta);
                }
            }
        }
    }

    #[test]
    fn reported_epsilon_is_objective_at_reported_alpha() {
        let g = Gaussian(1.3);
        let e = epsilon_for_delta(&g, 1e-6, Conversion::Improved).unwrap();
        let am1 = e.alpha - 1.0;
        let (r, _) = g.rdp(am1).unwrap();
        let (direct, _) = epsilon_at(Conversion::Improved, r, am1, 1e-6f64.ln());
        assert!(e.epsilon >= direct && e.epsilon - direct < 1e-12);
        // Any other α gives a larger (still valid) ε.
        for a in [1.1, 2.0, 5.0, 20.0] {
            let (r, _) = g.rdp(a - 1.0).unwrap();
            assert!(epsilon_at(Conversion::Improved, r, a - 1.0, 1e-6f64.ln()).0 >= direct - 1e-12);
        }
    }

    #[test]
    fn rejects_bad_delta_and_epsilon() {
        for d in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
            assert!(epsilon_for_delta(&Gaussian(1.0), d, Conversion::Paper).is_err());
        }
        for e in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(delta_for_epsilon(&Gaussian(1.0), e, Conversion::Paper).is_err());
        }
    }
}
