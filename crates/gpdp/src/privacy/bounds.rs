//! Upper bounds on the posterior variance scale V_n(r) (Proposition 3) and
//! the common-core mean sensitivity Δ_n(r) (Lemmas B.1, B.4, B.5, B.7, B.8).
//!
//! # What is guaranteed
//!
//! Each function returns a number that is ≥ the quantity it bounds whenever
//! the lemma's hypotheses hold (and the computed value is rounded up, see
//! below). [`check_lemma`] decides the hypotheses that depend on the kernel
//! and the domain; an explicit request for a lemma whose hypotheses fail is
//! an error, never a silent fallback. The response hypothesis |y| ≤ M_Y is
//! the caller's to enforce (clip or reject the data); Lemma B.8 instead
//! assumes noiseless responses y = f*(x) with ‖f*‖_H ≤ B and must be chosen
//! explicitly.
//!
//! # Floating point
//!
//! V̂ is computed as ((1−κ)(1+κ)(n−1) + r²)/(n−1+r²) (no cancellation) and
//! then enlarged relatively by 8ε_mach (ε_mach = `f64::EPSILON` = 2⁻⁵², two
//! units of roundoff); Δ̂ is enlarged relatively by 16ε_mach. Both only ever
//! make ε larger.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result, positive};
use crate::model::domain::Domain;
use crate::model::kernel::{Kernel, KernelKind};
use crate::privacy::rdp::BoundChoice;

/// The bound on V_n and where it came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VarianceBound {
    /// V̂ ≥ V_n(r), in [0, 1].
    pub value: f64,
    /// κ = inf k(x, x') used, if any.
    pub kappa: Option<f64>,
    /// Human-readable provenance, e.g. "Prop. 3 (κ = 0.3679; exact since k(x,x) = 1)".
    pub source: String,
}

/// V̂_n(r) from Proposition 3:
///
/// ```text
/// V_n(r) ≤ 1 − κ²·(n − 1)/(n − 1 + r²),   κ = inf_{x,x'∈Ω} k(x, x') ≥ 0,
/// ```
///
/// with equality when k(x, x) = 1 on Ω (all kernels here). Falls back to
/// V_n ≤ 1 (valid whenever k(x, x) ≤ 1) when κ is unavailable or negative,
/// saying why in `source`.
pub fn variance_bound(kernel: &Kernel, domain: &Domain, n: usize, ridge: f64) -> Result<VarianceBound> {
    crate::error::ridge(ridge)?;
    check_n(n)?;
    let kappa = kernel.kappa_with_exactness(domain);
    match kappa {
        Some((k, exact)) if (0.0..=1.0).contains(&k) => {
            let v = variance_from_kappa(k, exact, n, ridge);
            Ok(VarianceBound {
                value: v,
                kappa: Some(k),
                source: format!("Prop. 3 (κ = {k:.6e}; exact for k(x,x) = 1)"),
            })
        }
        Some((k, _)) => Ok(VarianceBound {
            value: 1.0,
            kappa: None,
            source: format!("V ≤ 1 (k(x,x) ≤ 1); Prop. 3 not used because κ = {k} < 0"),
        }),
        None => Ok(VarianceBound {
            value: 1.0,
            kappa: None,
            source: format!("V ≤ 1 (k(x,x) ≤ 1); κ unavailable for {kernel} on {domain}"),
        }),
    }
}

/// V̄_n(r) = 1 − κ²(n − 1)/(n − 1 + r²) (Proposition 3) for a given κ ∈ [0, 1],
/// computed as ((1−κ)(1+κ)(n−1) + r²)/(n−1+r²) (no cancellation) and rounded
/// up: relatively, by 8ε_mach (`f64::EPSILON`) for the arithmetic, and — when κ is
/// itself rounded (`kappa_exact` false) — absolutely, by the effect of a few
/// ulps of error in κ², 8ε_mach·κ²·(n−1)/(n−1+r²). An exact κ (the constant
/// kernel) gets no absolute allowance, so a tiny V̂ stays accurate.
pub fn variance_from_kappa(kappa: f64, kappa_exact: bool, n: usize, ridge: f64) -> f64 {
    let m = n.saturating_sub(1) as f64;
    let r2 = ridge * ridge;
    let share = m / (m + r2);
    let v = ((1.0 - kappa) * (1.0 + kappa) * m + r2) / (m + r2);
    let kappa_error = if kappa_exact { 0.0 } else { 8.0 * f64::EPSILON * kappa * kappa * share };
    (v * (1.0 + 8.0 * f64::EPSILON) + kappa_error).min(1.0)
}

pub(crate) fn check_n(n: usize) -> Result<usize> {
    if n >= 1 { Ok(n) } else { Err(Error::InvalidParameter { name: "n", value: n.to_string(), requirement: ">= 1" }) }
}

/// The sensitivity lemmas of the paper's Appendix B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Lemma {
    /// Lemma B.1, generic bounded-response bound.
    #[serde(rename = "B.1")]
    B1,
    /// Lemma B.4, constant kernel.
    #[serde(rename = "B.4")]
    B4,
    /// Lemma B.5, purely diagonal kernel.
    #[serde(rename = "B.5")]
    B5,
    /// Lemma B.7, exponential kernel on a subset of R.
    #[serde(rename = "B.7")]
    B7,
    /// Lemma B.8, noiseless responses from an RKHS function.
    #[serde(rename = "B.8")]
    B8,
    /// The coupled generic bound 2M_Y·sup_{u≤V} [√u + (√(n−1)/r)·u√(1−u)]/(r² + u)
    /// (docs/proofs/sensitivity-coupled-operator.md).
    #[serde(rename = "coupled")]
    Coupled,
    /// The operator generic bound 2M_Y√Φ_n + M_Y√(n−1)·V/((V + r²)r)
    /// (docs/proofs/sensitivity-coupled-operator.md).
    #[serde(rename = "operator")]
    Operator,
    /// Lemma B.8 with half the constant, B·V/(V + r²)
    /// (docs/proofs/lemma-b8-tight.md).
    #[serde(rename = "B.8-tight")]
    B8Tight,
}

impl Lemma {
    /// "B.1", "B.4", …
    pub fn label(self) -> &'static str {
        match self {
            Lemma::B1 => "B.1",
            Lemma::B4 => "B.4",
            Lemma::B5 => "B.5",
            Lemma::B7 => "B.7",
            Lemma::B8 => "B.8",
            Lemma::Coupled => "coupled",
            Lemma::Operator => "operator",
            Lemma::B8Tight => "B.8-tight",
        }
    }

    /// The command-line name of the choice that selects this lemma.
    pub fn choice_name(self) -> &'static str {
        match self {
            Lemma::B1 => "generic",
            Lemma::B4 => "constant",
            Lemma::B5 => "diagonal",
            Lemma::B7 => "exponential-1d",
            Lemma::B8 | Lemma::B8Tight => "rkhs",
            Lemma::Coupled | Lemma::Operator => "generic",
        }
    }
}

impl fmt::Display for Lemma {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Which sensitivity bound to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SensitivityChoice {
    /// The tightest valid bound: with [`BoundChoice::Tight`], among B.1,
    /// coupled, operator and whichever of B.4, B.5, B.7 hold for the kernel
    /// and domain; with [`BoundChoice::Paper`], among B.1, B.4, B.5, B.7.
    /// (B.8 is never chosen automatically: it is an assumption about how the
    /// data were generated.)
    #[default]
    Auto,
    /// One specific lemma; refused if its hypotheses fail. With
    /// [`BoundChoice::Tight`], `B1` ("generic") means the smallest of B.1,
    /// coupled and operator, and `B8` ("rkhs") means B.8 with half the
    /// constant.
    Lemma(Lemma),
}

impl SensitivityChoice {
    /// Whether the choice is Lemma B.8 (either constant): an assumption on
    /// how the responses were generated, which a release must state.
    pub fn assumes_rkhs_responses(self) -> bool {
        matches!(self, SensitivityChoice::Lemma(Lemma::B8 | Lemma::B8Tight))
    }
}

impl FromStr for SensitivityChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "auto" => SensitivityChoice::Auto,
            "generic" | "b.1" | "b1" => SensitivityChoice::Lemma(Lemma::B1),
            "constant" | "b.4" | "b4" => SensitivityChoice::Lemma(Lemma::B4),
            "diagonal" | "b.5" | "b5" => SensitivityChoice::Lemma(Lemma::B5),
            "exponential-1d" | "b.7" | "b7" => SensitivityChoice::Lemma(Lemma::B7),
            "rkhs" | "b.8" | "b8" => SensitivityChoice::Lemma(Lemma::B8),
            _ => {
                return Err(Error::InvalidParameter {
                    name: "sensitivity",
                    value: s.to_string(),
                    requirement: "one of auto, generic, exponential-1d, constant, diagonal, rkhs",
                });
            }
        })
    }
}

impl fmt::Display for SensitivityChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SensitivityChoice::Auto => f.write_str("auto"),
            SensitivityChoice::Lemma(l) => f.write_str(l.choice_name()),
        }
    }
}

/// Φ_n(r) = sup_{0≤u≤V} u/(u + r²)² = 1/(4r²) if V ≥ r², else V/(V + r²)².
pub fn phi(v: f64, ridge: f64) -> f64 {
    let r2 = ridge * ridge;
    if v >= r2 { 0.25 / r2 } else { v / ((v + r2) * (v + r2)) }
}

/// Lemma B.1 (k(x,x) ≤ 1, |y| ≤ M_Y): Δ_n ≤ 2·M_Y·(1 + √(n−1)/r)·√Φ_n;
/// n ≥ 1.
pub fn lemma_b1(v: f64, n: usize, ridge: f64, m_y: f64) -> Result<f64> {
    let m = (check_n(n)? - 1) as f64;
    Ok(2.0 * m_y * (1.0 + m.sqrt() / ridge) * phi(v, ridge).sqrt())
}

/// Lemma B.4 (k ≡ 1, |y| ≤ M_Y): Δ_n ≤ 2·M_Y·√(r² + n − 1)/(r·(r² + n));
/// n ≥ 1.
pub fn lemma_b4(n: usize, ridge: f64, m_y: f64) -> Result<f64> {
    let m = (check_n(n)? - 1) as f64;
    let r2 = ridge * ridge;
    Ok(2.0 * m_y * (r2 + m).sqrt() / (ridge * (r2 + n as f64)))
}

/// Lemma B.5 (k(x,x') = q(x)·1{x = x'}, |y| ≤ M_Y):
/// Δ_n ≤ √2·M_Y/r for r ≤ 1 and 2√2·M_Y/(1 + r²) for r ≥ 1.
pub fn lemma_b5(ridge: f64, m_y: f64) -> f64 {
    if ridge <= 1.0 {
        std::f64::consts::SQRT_2 * m_y / ridge
    } else {
        2.0 * std::f64::consts::SQRT_2 * m_y / (1.0 + ridge * ridge)
    }
}

/// Lemma B.7 (k = exp(−|x−x'|/ℓ), Ω ⊆ R, |y| ≤ M_Y): Δ_n ≤ 4·M_Y·√Φ_n.
pub fn lemma_b7(v: f64, ridge: f64, m_y: f64) -> f64 {
    4.0 * m_y * phi(v, ridge).sqrt()
}

/// Lemma B.8 (y_i = f*(x_i), ‖f*‖_H ≤ B): Δ_n ≤ 2·B·V/(r² + V).
pub fn lemma_b8(v: f64, ridge: f64, rkhs_norm: f64) -> f64 {
    2.0 * rkhs_norm * v / (ridge * ridge + v)
}

/// Lemma B.8 with half the constant (docs/proofs/lemma-b8-tight.md):
/// Δ_n ≤ B·V/(r² + V), because μ_D − μ_D' = (P_x − P_x')(f* − μ₋) with
/// ‖P_x − P_x'‖ ≤ V/(V + r²) and ‖f* − μ₋‖_H₋ ≤ ‖f*‖_H.
pub fn lemma_b8_tight(v: f64, ridge: f64, rkhs_norm: f64) -> f64 {
    rkhs_norm * v / (ridge * ridge + v)
}

/// The operator generic bound (docs/proofs/sensitivity-coupled-operator.md;
/// k(x,x) ≤ 1, |y| ≤ M_Y, any V ≥ V_n):
///
/// ```text
/// Δ_n ≤ 2·M_Y·√Φ_n + M_Y·√(n−1)/r · V/(V + r²).
/// ```
pub fn sensitivity_operator(v: f64, n: usize, ridge: f64, m_y: f64) -> Result<f64> {
    let m = (check_n(n)? - 1) as f64;
    let r2 = ridge * ridge;
    Ok(2.0 * m_y * phi(v, ridge).sqrt() + m_y * m.sqrt() / ridge * (v / (v + r2)))
}

/// The coupled generic bound (docs/proofs/sensitivity-coupled-operator.md;
/// k(x,x) ≤ 1, |y| ≤ M_Y, any V ≥ V_n with V ≤ 1):
///
/// ```text
/// Δ_n ≤ 2·M_Y · sup_{0≤u≤V} f(u),   f(u) = [√u + (√(n−1)/r)·u·√(1−u)] / (r² + u),
/// ```
///
/// from |μ₋(x)| ≤ M_Y√(n−1)·√(v(1−v))/r. The supremum is bounded above by
/// branch and bound ([`sup_coupled`]; at most a relative 10⁻⁴ above it), so
/// the value returned is ≥ the exact-arithmetic bound up to the rounding of a
/// few operations (covered by the sensitivity slack applied afterwards).
pub fn sensitivity_coupled(v: f64, n: usize, ridge: f64, m_y: f64) -> Result<f64> {
    let m = (check_n(n)? - 1) as f64;
    if !(0.0..=1.0).contains(&v) {
        return Err(Error::InvalidParameter {
            name: "variance bound V",
            value: crate::error::fmt_value(v),
            requirement: "in [0, 1] for the coupled bound",
        });
    }
    Ok(2.0 * m_y * sup_coupled(v, ridge * ridge, m.sqrt() / ridge))
}

/// An upper bound on sup_{0≤u≤V} [√u + c·u·√(1−u)]/(q + u) for V ∈ [0, 1],
/// q > 0, c ≥ 0, by best-first branch and bound
/// (docs/proofs/sensitivity-coupled-operator.md §4). Write the function as
/// h₁ + c·h₂ with h₁(u) = √u/(q + u) and h₂(u) = u√(1−u)/(q + u). Both are
/// unimodal on [0, 1]: h₁ increases up to u = q and decreases after it, and
/// h₂ is log-concave (its log-derivative 1/u − 1/(2(1−u)) − 1/(q+u) is
/// strictly decreasing because (q + u)² > u²), so it increases where that
/// log-derivative is positive and decreases where it is negative. On [a, b]
/// the supremum of each is therefore its value at the endpoint on the rising
/// side (h₁ at min(max(q, a), b); h₂ at b or a), and where h₂'s maximum lies
/// inside [a, b] it is at most max g/(q + a), g(u) = u√(1−u) rising up to 2/3
/// and falling after. U(a, b) = sup h₁ + c·sup h₂ ≥ sup over [a, b]. The
/// interval with the largest U is halved until that U is within a relative
/// 10⁻⁴ of the best value found (or 10⁵ splits were made); since every other
/// interval has a smaller U, that U is ≥ the supremum, and it is returned.
/// Intervals whose U is below the best value are dropped (the supremum there
/// is at most that value).
pub fn sup_coupled(v: f64, q: f64, c: f64) -> f64 {
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;
    /// An interval ordered by its upper bound.
    struct Piece(f64, f64, f64);
    impl PartialEq for Piece {
        fn eq(&self, o: &Self) -> bool {
            self.cmp(o) == Ordering::Equal
        }
    }
    impl Eq for Piece {}
    impl PartialOrd for Piece {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Piece {
        fn cmp(&self, o: &Self) -> Ordering {
            self.0.total_cmp(&o.0)
        }
    }
    if v <= 0.0 {
        return 0.0;
    }
    let g = |u: f64| u * (1.0 - u).max(0.0).sqrt();
    let h1 = |u: f64| u.sqrt() / (q + u);
    let h2 = |u: f64| g(u) / (q + u);
    let f = |u: f64| h1(u) + c * h2(u);
    // The log-derivative of h₂ (+∞ at 0, −∞ at 1).
    let log_slope = |u: f64| {
        if u <= 0.0 {
            f64::INFINITY
        } else if u >= 1.0 {
            f64::NEG_INFINITY
        } else {
            1.0 / u - 0.5 / (1.0 - u) - 1.0 / (q + u)
        }
    };
    let upper = |a: f64, b: f64| {
        let sup1 = h1(q.clamp(a, b));
        let sup2 = if log_slope(b) >= 0.0 {
            h2(b)
        } else if log_slope(a) <= 0.0 {
            h2(a)
        } else {
            g((2.0f64 / 3.0).clamp(a, b)) / (q + a)
        };
        sup1 + c * sup2
    };
    const PIECES: usize = 16;
    const TOL: f64 = 1e-4;
    const MAX_SPLITS: usize = 100_000;
    let mut best = f(v);
    let mut heap = BinaryHeap::with_capacity(4 * PIECES);
    for i in 0..PIECES {
        let a = v * i as f64 / PIECES as f64;
        let b = if i + 1 == PIECES { v } else { v * (i + 1) as f64 / PIECES as f64 };
        best = best.max(f(a));
        heap.push(Piece(upper(a, b), a, b));
    }
    let mut splits = 0;
    while let Some(Piece(u, a, b)) = heap.pop() {
        if u <= best * (1.0 + TOL) || splits >= MAX_SPLITS || b - a <= f64::EPSILON * b {
            return best.max(u);
        }
        splits += 1;
        let mid = 0.5 * (a + b);
        best = best.max(f(mid));
        for (lo, hi) in [(a, mid), (mid, b)] {
            let w = upper(lo, hi);
            if w > best {
                heap.push(Piece(w, lo, hi));
            }
        }
    }
    best
}

/// Whether a lemma's hypotheses on the kernel and domain hold; the error
/// says why not.
pub fn check_lemma(lemma: Lemma, kernel: &Kernel, domain: &Domain) -> Result<()> {
    let fail = |reason: String| Err(Error::InvalidLemma { lemma: lemma.label(), reason });
    match lemma {
        // Every kernel here has k(x, x) ≤ 1.
        Lemma::B1 | Lemma::B8 | Lemma::Coupled | Lemma::Operator | Lemma::B8Tight => Ok(()),
        Lemma::B4 if kernel.kind() != KernelKind::Constant => {
            fail(format!("Lemma B.4 assumes the constant kernel k ≡ 1, but the kernel is {}", kernel.kind()))
        }
        Lemma::B5 if kernel.kind() != KernelKind::Diagonal => fail(format!(
            "Lemma B.5 assumes a purely diagonal kernel k(x,x') = q(x)1{{x = x'}}, but the kernel is {}",
            kernel.kind()
        )),
        Lemma::B7 if kernel.kind() != KernelKind::Exponential => fail(format!(
            "Lemma B.7 holds only for the exponential kernel exp(-|x-x'|/ℓ), but the kernel is {}",
            kernel.kind()
        )),
        Lemma::B7 if domain.dim() != 1 => {
            fail(format!("Lemma B.7 holds only on a one-dimensional domain, but {domain} is {}-D", domain.dim()))
        }
        _ => Ok(()),
    }
}

/// The bound on Δ_n and the lemma that gave it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SensitivityBound {
    /// Δ̂ ≥ Δ_n(r).
    pub value: f64,
    /// The lemma used.
    pub lemma: Lemma,
}

/// Inputs to the sensitivity bound that are not kernel or domain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SensitivityInputs {
    /// n (≥ 1).
    pub n: usize,
    /// r > 0.
    pub ridge: f64,
    /// V̂ ≥ V_n(r).
    pub v: f64,
    /// M_Y > 0.
    pub response_bound: f64,
    /// B = ‖f*‖_H (Lemma B.8 only).
    pub rkhs_norm: Option<f64>,
}

fn lemma_value(lemma: Lemma, i: &SensitivityInputs) -> Result<f64> {
    Ok(match lemma {
        Lemma::B1 => lemma_b1(i.v, i.n, i.ridge, i.response_bound)?,
        Lemma::B4 => lemma_b4(i.n, i.ridge, i.response_bound)?,
        Lemma::B5 => lemma_b5(i.ridge, i.response_bound),
        Lemma::B7 => lemma_b7(i.v, i.ridge, i.response_bound),
        Lemma::Coupled => sensitivity_coupled(i.v, i.n, i.ridge, i.response_bound)?,
        Lemma::Operator => sensitivity_operator(i.v, i.n, i.ridge, i.response_bound)?,
        Lemma::B8 | Lemma::B8Tight => {
            let b = i.rkhs_norm.ok_or_else(|| Error::InvalidLemma {
                lemma: "B.8",
                reason: "the RKHS-response bound needs the norm ‖f*‖_H (give --rkhs-norm)".into(),
            })?;
            if !(b.is_finite() && b >= 0.0) {
                return Err(Error::InvalidParameter {
                    name: "RKHS norm ‖f*‖",
                    value: crate::error::fmt_value(b),
                    requirement: "a finite number >= 0",
                });
            }
            if lemma == Lemma::B8 { lemma_b8(i.v, i.ridge, b) } else { lemma_b8_tight(i.v, i.ridge, b) }
        }
    })
}

/// A lower bound on the coupled bound's value (its function at 17 points):
/// when it is not below another candidate, the coupled bound cannot be the
/// smallest and is not computed.
fn coupled_lower(i: &SensitivityInputs) -> f64 {
    let (v, q) = (i.v.clamp(0.0, 1.0), i.ridge * i.ridge);
    let c = (i.n.saturating_sub(1) as f64).sqrt() / i.ridge;
    let f = |u: f64| (u.sqrt() + c * u * (1.0 - u).max(0.0).sqrt()) / (q + u);
    2.0 * i.response_bound * (0..=16).map(|k| f(v * k as f64 / 16.0)).fold(0.0, f64::max)
}

/// The lemmas whose minimum is Δ̂_n for a choice under a bound (each one's
/// hypotheses checked).
fn candidates(choice: SensitivityChoice, bound: BoundChoice, kernel: &Kernel, domain: &Domain) -> Result<Vec<Lemma>> {
    let generic: &[Lemma] = match bound {
        BoundChoice::Tight | BoundChoice::Joint => &[Lemma::B1, Lemma::Coupled, Lemma::Operator],
        BoundChoice::Paper => &[Lemma::B1],
    };
    Ok(match choice {
        SensitivityChoice::Lemma(Lemma::B1) => generic.to_vec(),
        SensitivityChoice::Lemma(Lemma::B8) if bound != BoundChoice::Paper => vec![Lemma::B8Tight],
        SensitivityChoice::Lemma(lemma) => {
            check_lemma(lemma, kernel, domain)?;
            vec![lemma]
        }
        SensitivityChoice::Auto => {
            let mut v = generic.to_vec();
            v.extend([Lemma::B4, Lemma::B5, Lemma::B7].into_iter().filter(|l| check_lemma(*l, kernel, domain).is_ok()));
            v
        }
    })
}

/// Δ̂_n for the given choice under the given bound: the smallest value
/// among the candidate lemmas (the first on ties), rounded up. `Auto` never
/// uses B.8; an explicit lemma is refused if its hypotheses fail.
pub fn sensitivity_bound(
    choice: SensitivityChoice,
    bound: BoundChoice,
    kernel: &Kernel,
    domain: &Domain,
    inputs: &SensitivityInputs,
) -> Result<SensitivityBound> {
    check_n(inputs.n)?;
    crate::error::ridge(inputs.ridge)?;
    positive("response bound M_Y", inputs.response_bound)?;
    if choice == SensitivityChoice::Auto && inputs.rkhs_norm.is_some() {
        return Err(Error::InvalidLemma {
            lemma: "B.8",
            reason: "an RKHS norm was given but the sensitivity is 'auto'; Lemma B.8 assumes noiseless responses y = f*(x), so choose it explicitly (--sensitivity rkhs)".into(),
        });
    }
    let mut best: Option<SensitivityBound> = None;
    let list = candidates(choice, bound, kernel, domain)?;
    // The closed forms first; the coupled bound (a branch and bound) last,
    // and only if a cheap lower bound on it does not already lose.
    for &lemma in list.iter().filter(|l| **l != Lemma::Coupled) {
        let value = lemma_value(lemma, inputs)?;
        if best.is_none_or(|b| value < b.value) {
            best = Some(SensitivityBound { value, lemma });
        }
    }
    if list.contains(&Lemma::Coupled) {
        let could_win = best.is_none_or(|b| coupled_lower(inputs) < b.value);
        if could_win {
            let value = lemma_value(Lemma::Coupled, inputs)?;
            if best.is_none_or(|b| value < b.value) {
                best = Some(SensitivityBound { value, lemma: Lemma::Coupled });
            }
        }
    }
    let mut best = best.expect("at least one candidate lemma");
    best.value = crate::privacy::rounding::round_up_sensitivity(best.value);
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposition_3_values() {
        let k = Kernel::exponential(1.0).unwrap();
        let d: Domain = "interval:0,1".parse().unwrap();
        let vb = variance_bound(&k, &d, 10, 1.0).unwrap();
        let kap = (-1f64).exp();
        let want = 1.0 - kap * kap * 9.0 / 10.0;
        assert!((vb.value - want).abs() < 1e-14 && vb.value >= want);
        assert_eq!(vb.kappa, Some(kap));
        // n = 1: empty common core, V = 1.
        assert_eq!(variance_bound(&k, &d, 1, 0.3).unwrap().value, 1.0);
        // Constant kernel: V = r²/(n − 1 + r²), small and still accurate.
        let c = Kernel::new(KernelKind::Constant, 1.0).unwrap();
        let v = variance_bound(&c, &d, 1000, 0.1).unwrap().value;
        let want = 0.01 / 999.01;
        assert!(v >= want && (v - want) / want < 1e-9);
        // Huge n, tiny r: V ≈ 10⁻²¹ keeps its relative accuracy (no fixed
        // absolute allowance on an exact κ).
        let v = variance_bound(&c, &d, 1_000_000_000, 1e-6).unwrap().value;
        let want = 1e-12 / (999_999_999.0 + 1e-12);
        assert!(v >= want && (v - want) / want < 1e-14, "{v} vs {want}");
        // Diagonal kernel: κ = 0, V = 1.
        let g = Kernel::new(KernelKind::Diagonal, 1.0).unwrap();
        assert_eq!(variance_bound(&g, &d, 50, 0.5).unwrap().value, 1.0);
        assert!(variance_bound(&k, &d, 0, 1.0).is_err());
    }

    #[test]
    fn lemma_closed_forms_hand_checked() {
        // Φ: V = 0.5 ≥ r² = 0.25 → 1/(4·0.25) = 1; V = 0.5 < r² = 4 → 0.5/4.5².
        assert_eq!(phi(0.5, 0.5), 1.0);
        assert!((phi(0.5, 2.0) - 0.5 / 20.25).abs() < 1e-16);
        // B.1 with n = 5, r = 2, V = 0.5, M_Y = 1: 2·(1 + 2/2)·√(0.5/20.25) = 4·0.157134840…
        assert!((lemma_b1(0.5, 5, 2.0, 1.0).unwrap() - 4.0 * (0.5f64 / 20.25).sqrt()).abs() < 1e-15);
        // B.4, n = 2, r = 1: 2√2/3.
        assert!((lemma_b4(2, 1.0, 1.0).unwrap() - 2.0 * 2f64.sqrt() / 3.0).abs() < 1e-15);
        // n = 0 is an error, not an integer underflow.
        assert!(lemma_b1(0.5, 0, 2.0, 1.0).is_err() && lemma_b4(0, 1.0, 1.0).is_err());
        // B.5 at r = 1 both branches agree (√2), r = 2: 2√2/5.
        assert!((lemma_b5(1.0, 1.0) - 2f64.sqrt()).abs() < 1e-15);
        assert!((lemma_b5(2.0, 1.0) - 2.0 * 2f64.sqrt() / 5.0).abs() < 1e-15);
        // B.7, r = 0.1, V ≥ r²: 4·√25 = 20.
        assert!((lemma_b7(0.8, 0.1, 1.0) - 20.0).abs() < 1e-13);
        // B.8: 2·3·0.5/(1 + 0.5) = 2.
        assert!((lemma_b8(0.5, 1.0, 3.0) - 2.0).abs() < 1e-15);
    }

    #[test]
    fn auto_picks_tightest_valid() {
        let one_d: Domain = "interval:0,1".parse().unwrap();
        let two_d: Domain = "box:0,1,0,1".parse().unwrap();
        let inputs = |v| SensitivityInputs { n: 100, ridge: 0.5, v, response_bound: 1.0, rkhs_norm: None };
        let exp = Kernel::exponential(1.0).unwrap();
        let v = variance_bound(&exp, &one_d, 100, 0.5).unwrap().value;
        let s = sensitivity_bound(SensitivityChoice::Auto, BoundChoice::Paper, &exp, &one_d, &inputs(v)).unwrap();
        assert_eq!(s.lemma, Lemma::B7);
        let s2 = sensitivity_bound(SensitivityChoice::Auto, BoundChoice::Paper, &exp, &two_d, &inputs(v)).unwrap();
        assert_eq!(s2.lemma, Lemma::B1);
        let c = Kernel::new(KernelKind::Constant, 1.0).unwrap();
        assert_eq!(
            sensitivity_bound(SensitivityChoice::Auto, BoundChoice::Paper, &c, &two_d, &inputs(v)).unwrap().lemma,
            Lemma::B4
        );
        let g = Kernel::new(KernelKind::Diagonal, 1.0).unwrap();
        assert_eq!(
            sensitivity_bound(SensitivityChoice::Auto, BoundChoice::Paper, &g, &two_d, &inputs(1.0)).unwrap().lemma,
            Lemma::B5
        );
    }

    #[test]
    fn refuses_invalid_lemmas() {
        let two_d: Domain = "box:0,1,0,1".parse().unwrap();
        let one_d: Domain = "interval:0,1".parse().unwrap();
        let inputs = SensitivityInputs { n: 10, ridge: 1.0, v: 0.9, response_bound: 1.0, rkhs_norm: None };
        let exp = Kernel::exponential(1.0).unwrap();
        let se = Kernel::new(KernelKind::SquaredExponential, 1.0).unwrap();
        let e = sensitivity_bound(SensitivityChoice::Lemma(Lemma::B7), BoundChoice::Paper, &exp, &two_d, &inputs)
            .unwrap_err();
        assert!(e.to_string().contains("one-dimensional"), "{e}");
        let e = sensitivity_bound(SensitivityChoice::Lemma(Lemma::B7), BoundChoice::Paper, &se, &one_d, &inputs)
            .unwrap_err();
        assert!(e.to_string().contains("exponential kernel"), "{e}");
        assert!(
            sensitivity_bound(SensitivityChoice::Lemma(Lemma::B4), BoundChoice::Paper, &exp, &one_d, &inputs).is_err()
        );
        assert!(
            sensitivity_bound(SensitivityChoice::Lemma(Lemma::B5), BoundChoice::Paper, &exp, &one_d, &inputs).is_err()
        );
        assert!(
            sensitivity_bound(SensitivityChoice::Lemma(Lemma::B8), BoundChoice::Paper, &exp, &one_d, &inputs).is_err()
        );
        let with_norm = SensitivityInputs { rkhs_norm: Some(3.0), ..inputs };
        assert!(sensitivity_bound(SensitivityChoice::Auto, BoundChoice::Paper, &exp, &one_d, &with_norm).is_err());
        let s = sensitivity_bound(SensitivityChoice::Lemma(Lemma::B8), BoundChoice::Paper, &se, &two_d, &with_norm)
            .unwrap();
        assert_eq!(s.lemma, Lemma::B8);
    }

    #[test]
    fn coupled_supremum_is_certified_from_above_and_tight() {
        for &(v, r, n) in
            &[(1.0 - 1.6e-9, 5.706286, 400usize), (0.8782, 1.0, 10), (0.3, 0.2, 50), (1.0, 3.0, 2), (0.05, 0.05, 1000)]
        {
            let (q, c) = (r * r, ((n - 1) as f64).sqrt() / r);
            let f = |u: f64| (u.sqrt() + c * u * (1.0 - u).sqrt()) / (q + u);
            let sup = sup_coupled(v, q, c);
            // A dense grid is a lower bound on the supremum.
            let brute = (0..=200_000).map(|i| f(v * i as f64 / 200_000.0)).fold(0.0, f64::max);
            assert!(sup >= brute, "v={v} r={r} n={n}: {sup} < grid {brute}");
            assert!(sup <= brute * (1.0 + 1.01e-4), "v={v} r={r} n={n}: {sup} far above {brute}");
            // The coupled bound never exceeds B.1, and matches its formula.
            let coupled = sensitivity_coupled(v, n, r, 1.0).unwrap();
            assert_eq!(coupled, 2.0 * sup);
            assert!(coupled <= lemma_b1(v, n, r, 1.0).unwrap() * (1.0 + 1e-12));
        }
        assert_eq!(sup_coupled(0.0, 1.0, 2.0), 0.0);
        // n = 1: no core, the bound is 2M_Y·√Φ_n, as B.1 (here the supremum
        // is attained at u = q = r² and found exactly, up to a few ulps).
        let (v, r) = (1.0, 0.7);
        let (c1, b1) = (sensitivity_coupled(v, 1, r, 1.0).unwrap(), lemma_b1(v, 1, r, 1.0).unwrap());
        assert!(c1 >= b1 * (1.0 - 4.0 * f64::EPSILON) && c1 <= b1 * (1.0 + 1.01e-4), "{c1} vs {b1}");
        assert!(sensitivity_coupled(1.5, 10, 1.0, 1.0).is_err());
    }

    #[test]
    fn operator_and_halved_rkhs_bounds_hand_values() {
        // V = 0.5, r = 1, n = 5, M_Y = 2: Φ = 0.5/2.25, 2·2·√Φ + 2·2/1·(0.5/1.5).
        let want = 4.0 * (0.5f64 / 2.25).sqrt() + 4.0 * (0.5 / 1.5);
        assert!((sensitivity_operator(0.5, 5, 1.0, 2.0).unwrap() - want).abs() < 1e-15);
        assert!((lemma_b8_tight(0.5, 1.0, 3.0) - 1.0).abs() < 1e-15);
        assert_eq!(lemma_b8_tight(0.5, 1.0, 3.0) * 2.0, lemma_b8(0.5, 1.0, 3.0));
    }

    #[test]
    fn the_tight_choice_takes_the_smallest_valid_bound() {
        let exp1: Kernel = Kernel::exponential(1.0).unwrap();
        let unit: Domain = "interval:0,1".parse().unwrap();
        let square: Domain = "box:0,1,0,1".parse().unwrap();
        for (kernel, domain, n, r) in
            [(&exp1, &unit, 10, 1.0), (&exp1, &unit, 5, 1.0), (&exp1, &square, 400, 5.7), (&exp1, &square, 3, 0.1)]
        {
            let v = variance_bound(kernel, domain, n, r).unwrap().value;
            let inputs = SensitivityInputs { n, ridge: r, v, response_bound: 1.0, rkhs_norm: None };
            let tight =
                sensitivity_bound(SensitivityChoice::Auto, BoundChoice::Tight, kernel, domain, &inputs).unwrap();
            let paper =
                sensitivity_bound(SensitivityChoice::Auto, BoundChoice::Paper, kernel, domain, &inputs).unwrap();
            let mut all = vec![
                lemma_b1(v, n, r, 1.0).unwrap(),
                sensitivity_coupled(v, n, r, 1.0).unwrap(),
                sensitivity_operator(v, n, r, 1.0).unwrap(),
            ];
            if domain.dim() == 1 {
                all.push(lemma_b7(v, r, 1.0));
            }
            let min = all.iter().copied().fold(f64::INFINITY, f64::min);
            assert!((tight.value / min - 1.0).abs() < 1e-14, "{} vs {min}", tight.value);
            assert!(tight.value <= paper.value);
            // generic under tight: min of the three generic bounds.
            let generic =
                sensitivity_bound(SensitivityChoice::Lemma(Lemma::B1), BoundChoice::Tight, kernel, domain, &inputs)
                    .unwrap();
            assert!((generic.value / all[..3].iter().copied().fold(f64::INFINITY, f64::min) - 1.0).abs() < 1e-14);
        }
        // rkhs under tight is B.8 with half the constant.
        let inputs = SensitivityInputs { n: 10, ridge: 1.0, v: 0.5, response_bound: 1.0, rkhs_norm: Some(2.0) };
        let b8 =
            sensitivity_bound(SensitivityChoice::Lemma(Lemma::B8), BoundChoice::Tight, &exp1, &unit, &inputs).unwrap();
        assert_eq!(b8.lemma, Lemma::B8Tight);
        assert!((b8.value - lemma_b8_tight(0.5, 1.0, 2.0)).abs() < 1e-14);
    }
}
