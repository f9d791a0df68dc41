//! Privacy-loss-distribution (PLD) accounting for covariance-only releases
//! (σ = ∞, GP noise η = 0): `--conversion pld`.
//!
//! # What is guaranteed
//!
//! docs/proofs/pld-covariance-only.md proves that for a covariance-only
//! release with τ = V̂/r² (V̂ ≥ V_n the proven variance bound), every ordered
//! pair of neighbouring datasets, every finite test set and every ε, the
//! hockey-stick divergence of one draw is at most that of the **dominating
//! pair** P* = N(0, diag(1/(1+τ), 1)), Q* = N(0, diag(1, 1/(1+τ))); that L
//! draws and several composed releases (also adaptively chosen rounds) are
//! dominated by the product of the dominating pairs; and hence that
//!
//! ```text
//! δ(ε) = E[(1 − e^{ε−Λ})₊],   Λ = Σ_i Σ_{l ≤ L_i} ( c₂,i·A_il − c₁,i·B_il ),
//! c₂ = τ/2,  c₁ = τ/(2(1+τ)),  A_il, B_il i.i.d. χ²₁,
//! ```
//!
//! is a valid δ for (ε, δ)-DP of the composition (Λ is the privacy loss of
//! the product dominating pair under P*; the ½·log(1+τ) terms of the two
//! coordinates cancel). The proof also shows that δ(ε) is non-decreasing in
//! every τ_i and L_i.
//!
//! # How it is computed (an upper bound, never an approximation from below)
//!
//! * **Pessimistic discretisation** on the grid hℤ: each c₂·A is rounded up
//!   to the next multiple of h (probabilities are χ²₁ CDF differences, from
//!   `erf` near 0 and `erfc` in the tail, so no bin loses precision to
//!   cancellation), each −c₁·B likewise. (1 − e^{ε−λ})₊ is non-decreasing in
//!   λ and the rounded sum is ≥ the true sum, so δ can only grow.
//! * **Truncation**: mass of c₂·A beyond the upper cut-off goes to +∞ and is
//!   counted fully in δ (union bound Σ L·p_∞); mass of −c₁·B below the lower
//!   cut-off is moved up to it (pessimistic again). Both cut-offs sit at the
//!   χ²₁ quantile of tail mass `tail_fraction`·δ/(number of factors).
//! * **Composition** by one FFT (rustfft, power-of-two length, no
//!   wrap-around: the length covers the whole composed support) per event
//!   (its two factors packed as real and imaginary parts), the L-th power
//!   pointwise, and one inverse FFT. The factors are exponentially tilted by
//!   e^{θλ} before the transform (θ: the Chernoff-optimal order for the
//!   target), which makes the FFT's absolute error relative to the tail that
//!   δ measures; the result is untilted afterwards.
//! * **Floating point**: the δ returned is the computed sum plus an a-priori
//!   bound on every floating-point error — the erf/erfc values and bin edges
//!   (erf/erfc of [`super::elementary`] within 8 units of roundoff), the tilt, the FFT
//!   (Higham 2002, Thm 24.2, with the twiddle-factor error of rustfft and a
//!   factor 2 for its higher-radix butterflies), the powers and products, the
//!   untilt and the final sum — see [`PldReport::float_slack`].
//! * **ε(δ)** is the smallest ε whose bound is ≤ δ: located by bisection on
//!   the grid (δ(ε) is non-increasing), solved in closed form inside the
//!   grid cell, rounded up to a double, and re-checked by a direct evaluation
//!   of the bound; it is never below the grid value that passed that check.
//!
//! The grid width is h = `grid_factor`·σ_Λ/(2ΣL_i), σ_Λ the standard
//! deviation of Λ: the total rounding bias is about `grid_factor`·σ_Λ/2,
//! below 0.5% of ε on the Figure-3 setting for L ≤ 10. Lengths are capped at
//! `max_fft_len` (h grows instead: still an upper bound, less tight).
//!
//! # Errors
//!
//! δ ∉ (0, 1), ε < 0 or not finite, τ < 0 or not finite, no events, or a
//! composition too large for `max_fft_len`.

use crate::error::{Error, Result, fmt_value, unit_open};
use crate::model::draws::Draws;
use crate::privacy::conversion::minimise_over_order;
use crate::privacy::elementary::{ERF_REL, erf, erfc, exp, exp_m1, ln, ln_1p};
use rustfft::FftPlanner;
use rustfft::num_complex::Complex64;

/// Unit roundoff of f64.
const U: f64 = f64::EPSILON / 2.0;
/// χ²₁ values at x ≤ `X_SWITCH` come from erf (the CDF), beyond from erfc.
const X_SWITCH: f64 = 2.0;
/// The largest χ²₁ cut-off (erfc(√(x/2)) ≈ 10⁻²⁸⁴ there, still a normal double).
const X_TAIL_MAX: f64 = 1300.0;
/// The smallest tail mass per factor aimed at.
const TAIL_FLOOR: f64 = 1e-280;
/// Bound on the absolute error of rustfft's twiddle factors: the angle
/// fl(fl(−2π/N)·k) is within 4πu of −2πk/N (the rounded π and one product)
/// and cos/sin add about one ulp each.
const TWIDDLE_ERR: f64 = 16.0 * U;

pub use crate::privacy::report::{PLD_METHOD as METHOD, PldReport};

/// Why a release cannot be accounted by the PLD.
pub const PLD_SCOPE: &str = "pld accounting is proven only for covariance-only releases (σ = inf, gp-noise 0)";

/// One covariance-only release in the PLD accountant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PldEvent {
    /// τ = V̂/r² ≥ 0 (already rounded up by the caller).
    pub tau: f64,
    /// L: the number of draws (or adaptive rounds) of this release.
    pub draws: Draws,
}

/// Discretisation parameters of the PLD accountant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PldOptions {
    /// h = `grid_factor`·σ_Λ/(2ΣL_i): the total rounding bias is about
    /// `grid_factor`·σ_Λ/2 (default 0.01).
    pub grid_factor: f64,
    /// Each truncated tail holds at most `tail_fraction`·δ/(2ΣL_i) (default
    /// 10⁻⁵): truncation adds at most about `tail_fraction`·δ to δ.
    pub tail_fraction: f64,
    /// Largest FFT length (a power of two; default 2²¹).
    pub max_fft_len: usize,
}

impl Default for PldOptions {
    fn default() -> Self {
        PldOptions { grid_factor: 0.01, tail_fraction: 1e-5, max_fft_len: 1 << 21 }
    }
}

/// An ε(δ) or δ(ε) statement of the PLD accountant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PldStatement {
    /// ε.
    pub epsilon: f64,
    /// δ: the target for ε(δ); the certified bound for δ(ε).
    pub delta: f64,
    /// How it was computed.
    pub report: PldReport,
}

/// χ²₁ CDF (`sf = false`) or survival function at x, and an absolute error
/// bound, given that x carries a relative error of at most `x_rel`.
fn chi2_at(x: f64, sf: bool, x_rel: f64) -> (f64, f64) {
    let z = (0.5 * x).sqrt();
    let v = if sf { erfc(z) } else { erf(z) };
    // |d erf(z)/dz| = (2/√π)e^{−z²}; z has relative error ≤ x_rel/2 + u.
    let input = std::f64::consts::FRAC_2_SQRT_PI * (0.5 * x_rel + U) * z * exp(-(z * z)) * 1.001;
    (v, ERF_REL * v + input)
}

/// The smallest x (to within a relative 10⁻¹²) with P(χ²₁ > x) ≤ `tail`,
/// capped at [`X_TAIL_MAX`].
fn chi2_quantile(tail: f64) -> f64 {
    let sf = |x: f64| erfc((0.5 * x).sqrt());
    if sf(X_TAIL_MAX) > tail {
        return X_TAIL_MAX;
    }
    let (mut lo, mut hi) = (0.0f64, X_TAIL_MAX);
    while hi - lo > 1e-12 * hi {
        let mid = 0.5 * (lo + hi);
        if sf(mid) <= tail { hi = mid } else { lo = mid }
    }
    hi
}

/// One discretised factor, tilted and normalised: `x[i]` is the mass at grid
/// point `offset + i` times e^{θ·(offset+i)h}, divided by `sum`.
struct Factor {
    offset: i64,
    x: Vec<f64>,
    /// The normaliser S (the computed sum of the tilted masses).
    sum: f64,
    /// ℓ1 distance between `x` and the exact tilted masses divided by S.
    rel_err: f64,
    /// Truncated tail: sent to +∞ (upper factor) or moved up (lower factor),
    /// with its error bound.
    tail: f64,
    tail_err: f64,
}

/// The tilt factor e^{θ·g·h} of grid point g and a bound on its relative error.
fn tilt_at(theta: f64, g: i64, h: f64) -> (f64, f64) {
    let arg = theta * (g as f64 * h);
    (exp(arg), 2.0 * U + 2.1 * U * arg.abs())
}

/// The factor c·χ²₁ (`upper`, c = c₂: rounded up to kh, k ≥ 1, tail to +∞)
/// or −c·χ²₁ (lower, c = c₁: rounded up to −mh, 0 ≤ m ≤ `len`, the tail below
/// −len·h moved up to it), with `len` grid points and edges x_k = kh/c whose
/// computed values carry a relative error ≤ `edge_rel`.
fn factor(c: f64, h: f64, len: usize, upper: bool, theta: f64, edge_rel: f64) -> Factor {
    let mut masses = Vec::with_capacity(len + 1);
    let mut errs = Vec::with_capacity(len + 1);
    let edge = |k: usize| (k as f64 * h) / c;
    let mut prev_x = 0.0f64;
    let mut prev = (0.0f64, 0.0f64); // CDF at 0
    let mut prev_sf = false;
    for k in 1..=len {
        let x = edge(k);
        let sf = prev_x > X_SWITCH;
        if sf && !prev_sf {
            prev = chi2_at(prev_x, true, edge_rel);
        }
        let cur = chi2_at(x, sf, edge_rel);
        let mass = if sf { prev.0 - cur.0 } else { cur.0 - prev.0 };
        errs.push(prev.1 + cur.1 + U * mass.abs());
        masses.push(mass.max(0.0));
        prev = cur;
        prev_x = x;
        prev_sf = sf;
    }
    let (tail, tail_err) = if prev_sf { prev } else { chi2_at(prev_x, true, edge_rel) };
    // Grid points: upper: 1..=len (masses[k−1]); lower: −len..=0, the bin
    // [m, m+1) at −m and the tail at −len.
    let (offset, masses, errs) = if upper {
        (1i64, masses, errs)
    } else {
        let mut m: Vec<f64> = masses.into_iter().rev().collect();
        let mut e: Vec<f64> = errs.into_iter().rev().collect();
        m.insert(0, tail);
        e.insert(0, tail_err);
        (-(len as i64), m, e)
    };
    let mut x = Vec::with_capacity(masses.len());
    let mut abs_err = 0.0;
    for (i, (&p, &e)) in masses.iter().zip(&errs).enumerate() {
        let (t, t_rel) = tilt_at(theta, offset + i as i64, h);
        let v = p * t;
        x.push(v);
        abs_err += t * (1.0 + t_rel) * e + v * (t_rel + U);
    }
    let sum: f64 = x.iter().sum::<f64>();
    let sum = if sum > 0.0 { sum } else { f64::MIN_POSITIVE };
    for v in &mut x {
        *v /= sum;
    }
    // Division: one more rounding per entry; the sum itself need not be exact
    // (the same S multiplies the result back).
    let n = x.len() as f64;
    let rel_err = (abs_err / sum) * (1.0 + 4.0 * U) + 2.0 * U * (1.0 + n * U);
    Factor { offset, x, sum, rel_err, tail, tail_err }
}

/// log E[e^{θΛ}] of the (exact) dominating loss, +∞ outside θτ_max < 1.
fn log_mgf(events: &[PldEvent], theta: f64) -> f64 {
    let mut k = 0.0;
    for e in events {
        let t = theta * e.tau;
        if !(t < 1.0) {
            return f64::INFINITY;
        }
        k += e.draws.as_f64() * (-0.5 * ln_1p(-t) - 0.5 * ln_1p(t / (1.0 + e.tau)));
    }
    k
}

/// The largest τ of the events.
fn tau_max(events: &[PldEvent]) -> f64 {
    events.iter().map(|e| e.tau).fold(0.0, f64::max)
}

/// The Chernoff-optimal tilt for a target δ: θ minimising (log M(θ) − log δ)/θ.
fn tilt_for_delta(events: &[PldEvent], delta: f64) -> f64 {
    let ld = ln(delta);
    let (theta, v) = minimise_over_order(1.0 / tau_max(events), |t| (log_mgf(events, t) - ld) / t);
    if v.is_finite() { theta } else { 0.0 }
}

/// The Chernoff-optimal tilt for a given ε and the Chernoff bound
/// min(1, min_θ M(θ)e^{−θε}) ≥ P(Λ ≥ ε) ≥ δ(ε) (an estimate only).
fn tilt_for_epsilon(events: &[PldEvent], eps: f64) -> (f64, f64) {
    let (theta, v) = minimise_over_order(1.0 / tau_max(events), |t| log_mgf(events, t) - t * eps);
    if v.is_finite() && v < 0.0 { (theta, exp(v)) } else { (0.0, 1.0) }
}

thread_local! {
    static PLANNER: std::cell::RefCell<FftPlanner<f64>> = std::cell::RefCell::new(FftPlanner::new());
}

/// The composed, discretised privacy loss: masses at the grid points kh,
/// k = 0..=k_max (the points below 0 never count in δ(ε) for ε ≥ 0), plus
/// everything needed to bound the floating-point error of δ.
struct Composed {
    h: f64,
    /// Masses at kh, k ≥ 0 (clamped at 0, untilted).
    c: Vec<f64>,
    /// Upper bound on the mass at +∞.
    p_inf: f64,
    /// Mass moved up to the lower cut-offs (reported only).
    moved: f64,
    theta: f64,
    /// log of Π S_f^{L_f} (the normalisers).
    log_norm: f64,
    /// ℓ2 error bound of the normalised FFT convolution.
    eta_conv: f64,
    /// ℓ1 error bound (relative to the normaliser) of the inputs.
    input_err: f64,
    /// Relative error bound of the untilt factors.
    untilt_rel: f64,
    support: usize,
    fft_len: usize,
    tail: f64,
}

/// z^l by binary powering.
fn cpow(mut z: Complex64, mut l: u64) -> Complex64 {
    let mut r = Complex64::new(1.0, 0.0);
    while l > 0 {
        if l & 1 == 1 {
            r *= z;
        }
        l >>= 1;
        if l > 0 {
            z *= z;
        }
    }
    r
}

impl Composed {
    /// Discretises and composes `events` with tilt θ and per-factor tail
    /// mass `tail`.
    fn build(events: &[PldEvent], theta: f64, tail: f64, opts: &PldOptions) -> Result<Composed> {
        let nf: f64 = events.iter().map(|e| 2.0 * e.draws.as_f64()).sum();
        let total_draws: u64 = events.iter().fold(0u64, |a, e| a.saturating_add(e.draws.get()));
        let max_len = opts.max_fft_len.max(2);
        if total_draws.saturating_mul(2).saturating_add(1) > max_len as u64 / 2 {
            return Err(Error::TooLarge(format!(
                "pld accounting of {total_draws} draws needs an FFT longer than the maximum {max_len}; use the RDP accounting (--conversion improved)"
            )));
        }
        // σ_Λ, scaled by τ_max against overflow.
        let s = tau_max(events);
        let var: f64 = events
            .iter()
            .map(|e| {
                let c2 = e.tau / (2.0 * s);
                let c1 = c2 / (1.0 + e.tau);
                e.draws.as_f64() * 2.0 * (c2 * c2 + c1 * c1)
            })
            .sum();
        let sigma = s * var.sqrt();
        let x_tail = chi2_quantile(tail);
        let mut h = opts.grid_factor * sigma / nf;
        let (mut lens, mut support);
        let mut tries = 0;
        loop {
            lens = Vec::with_capacity(events.len());
            // Σ over factors of (length − 1), plus one.
            let mut total = 1u128;
            for e in events {
                let c2 = e.tau / 2.0;
                let c1 = c2 / (1.0 + e.tau);
                let k = ((c2 * x_tail / h).ceil()).max(1.0);
                let m = ((c1 * x_tail / h).ceil()).max(1.0);
                let (k, m) = (k.min(1e15) as u128, m.min(1e15) as u128);
                total += u128::from(e.draws.get()) * (k + m - 1);
                lens.push((k as usize, m as usize));
            }
            support = total;
            if support <= max_len as u128 {
                break;
            }
            tries += 1;
            if tries > 60 {
                return Err(Error::TooLarge(format!(
                    "pld accounting needs more than {max_len} grid points here; use the RDP accounting (--conversion improved)"
                )));
            }
            h *= (support as f64 / max_len as f64) * 1.05;
        }
        let support = support as usize;
        let n = support.next_power_of_two();
        let log2n = f64::from(n.trailing_zeros());

        // Plans are cached per thread (their twiddle factors cost more than
        // one transform); the inverse is conj ∘ forward ∘ conj (exact).
        let fwd = PLANNER.with(|p| p.borrow_mut().plan_fft_forward(n));
        let mut acc = vec![Complex64::new(1.0, 0.0); n];
        let mut buf = vec![Complex64::new(0.0, 0.0); n];
        let mut j_min = 0i64;
        let (mut p_inf, mut moved, mut log_norm) = (0.0f64, 0.0f64, 0.0f64);
        let mut log_norm_err = 0.0f64;
        let mut input_rel = 0.0f64;
        let mut norm_excess = 0.0f64;
        let mut sum_l = 0.0f64;
        for (e, &(k, m)) in events.iter().zip(&lens) {
            let l = e.draws.get();
            let lf = e.draws.as_f64();
            let c2 = e.tau / 2.0;
            let c1 = c2 / (1.0 + e.tau);
            // Upper edges kh/c₂: two roundings (c₂ = τ/2 is exact). Lower
            // edges mh/c₁: two more from c₁.
            let up = factor(c2, h, k, true, theta, 2.0 * U);
            let lo = factor(c1, h, m, false, theta, 4.5 * U);
            p_inf += lf * (up.tail + up.tail_err);
            moved += lf * (lo.tail + lo.tail_err);
            log_norm += lf * (ln(up.sum) + ln(lo.sum));
            log_norm_err += lf * (ln(up.sum).abs() + ln(lo.sum).abs() + 2.0);
            input_rel += lf * (up.rel_err + lo.rel_err);
            // Σ x ≤ 1 + (len + 1)u after the division (Σ over the computed sum).
            norm_excess += lf * 2.0 * U * ((up.x.len() + lo.x.len()) as f64 + 2.0);
            j_min += l as i64 * (up.offset + lo.offset);
            // Pack: real part the upper factor, imaginary part the lower one.
            buf.fill(Complex64::new(0.0, 0.0));
            for (b, &v) in buf.iter_mut().zip(&up.x) {
                b.re = v;
            }
            for (b, &v) in buf.iter_mut().zip(&lo.x) {
                b.im = v;
            }
            fwd.process(&mut buf);
            // Unpack: U_k = (Z_k + conj Z_{N−k})/2, L_k = (Z_k − conj Z_{N−k})/(2i);
            // the event's transform is (U_k·L_k)^l. The grid offsets (1 and
            // −m) only shift the result; they are accounted for in j_min.
            for q in 0..n {
                let z = buf[q];
                let zr = buf[(n - q) % n].conj();
                let a = (z + zr) * 0.5;
                let b = (z - zr) * Complex64::new(0.0, -0.5);
                acc[q] *= cpow(a * b, l);
            }
            sum_l += lf;
        }
        for z in acc.iter_mut() {
            *z = z.conj();
        }
        fwd.process(&mut acc);
        let scale = 1.0 / n as f64; // exact: n is a power of two

        // Error of the normalised convolution (docs/proofs/pld-covariance-only.md §9.3).
        let eta_twiddle = 2.0 * (TWIDDLE_ERR + 4.0 * U / (1.0 - 4.0 * U) * (std::f64::consts::SQRT_2 + TWIDDLE_ERR));
        let zeta = log2n * eta_twiddle / (1.0 - log2n * eta_twiddle);
        let sqrt_n = (n as f64).sqrt();
        // Per transform of one factor after unpacking: ‖ΔX‖₂ ≤ √N·e_sep.
        let e_sep = std::f64::consts::SQRT_2 * zeta * 1.0001 + 4.0 * U;
        let d_err = 2.0 * e_sep + 4.0 * U; // per entry ℓ2, / √N, of the event product U·L
        let kappa_log = sum_l * ln_1p(sqrt_n * (2.0 * d_err)) + norm_excess;
        if kappa_log > 0.01 {
            return Err(Error::TooLarge(format!(
                "pld accounting: the FFT error bound is too large for {total_draws} draws at length {n}; use the RDP accounting (--conversion improved)"
            )));
        }
        let kappa = exp(kappa_log);
        // z^l by any sequence of products carries a relative rounding error
        // ≤ (l − 1)·√2γ₂, and one more product per event accumulates it.
        let gamma_mult = 3.0 * U * sum_l;
        let eta_conv = (kappa * (sum_l * d_err + gamma_mult) * (1.0 + zeta) + zeta * kappa) * 1.0001;
        // Telescoping: ‖⊛a − ⊛b‖₁ ≤ Σ‖a_i − b_i‖·Π_{j≠i} max(‖a_j‖, ‖b_j‖).
        let input_err = input_rel * exp(input_rel + norm_excess);

        let k_max = (j_min + support as i64 - 1).max(0) as usize;
        let q0 = (-j_min).max(0) as usize; // position of grid point 0
        let mut c = Vec::with_capacity(k_max + 1);
        let mut max_arg = 0.0f64;
        for k in 0..=k_max {
            let q = q0 + k;
            // Real part of conj(forward(conj P)) = real part of forward(conj P).
            let v = if q < n { acc[q].re * scale } else { 0.0 };
            let x = k as f64 * h;
            let arg = log_norm - theta * x;
            max_arg = max_arg.max((theta * x).abs());
            c.push(if v > 0.0 { v * exp(arg) } else { 0.0 });
        }
        let untilt_rel = 4.0 * U * (log_norm_err + max_arg + 2.0) * 1.0001 + 2.0 * U;
        Ok(Composed {
            h,
            c,
            p_inf: p_inf * (1.0 + 4.0 * U * (2.0 * events.len() as f64 + 1.0)),
            moved,
            theta,
            log_norm,
            eta_conv,
            input_err,
            untilt_rel,
            support,
            fft_len: n,
            tail,
        })
    }

    /// The floating-point allowance at ε: the FFT error and the input error
    /// of the entries above ε, in absolute terms.
    fn slack(&self, eps: f64, above: usize) -> f64 {
        let base = exp(self.log_norm - self.theta * eps);
        let w2 = if self.theta * self.h > 0.0 {
            (1.0 / (-exp_m1(-2.0 * self.theta * self.h)).sqrt()).min((above as f64).sqrt())
        } else {
            (above as f64).sqrt()
        };
        base * (self.eta_conv * w2 + self.input_err) + (self.c.len() as f64) * f64::MIN_POSITIVE
    }

    /// The certified upper bound on δ(ε) (ε ≥ 0), and the float slack in it.
    fn delta_bound(&self, eps: f64) -> (f64, f64) {
        let start = ((eps / self.h).floor().max(1.0) as usize - 1).min(self.c.len());
        let mut sum = 0.0;
        let mut term_err = 0.0;
        let mut above = 0usize;
        for (k, &ck) in self.c.iter().enumerate().skip(start) {
            // x = fl(k·h) is within u·x of the grid point kh.
            let x = k as f64 * self.h;
            if x > eps {
                above += 1;
                let m = exp_m1(eps - x); // e^{ε−x} − 1 ∈ (−1, 0)
                sum += ck * -m;
                // The weight 1 − e^{ε−x}: its argument is off by at most
                // u·x + u·|ε − x| (the grid point, the subtraction), which
                // moves it by at most that times e^{ε−x}; expm1 and the
                // product add 3u relative.
                term_err += ck * (U * (x + (x - eps)) * (1.0 + m) * 1.01 + 3.0 * U * -m);
            } else if eps - x <= 2.0 * U * x {
                // A grid point just above ε may have been rounded to ≤ ε:
                // its weight is at most 1 − e^{−u·x} ≤ u·x.
                term_err += ck * U * x * 1.01;
            }
        }
        // The sum of `above` non-negative terms: γ_above; the untilt factors.
        let terms = above as f64 + 2.0;
        let rel = (1.0 + self.untilt_rel) * (1.0 + terms * U / (1.0 - terms * U)) - 1.0;
        let slack = self.slack(eps, above);
        let fin_err = (sum + term_err) * rel + term_err;
        let total = (sum + fin_err + self.p_inf + slack) * (1.0 + 4.0 * U);
        (total.next_up(), fin_err + slack)
    }

    /// The smallest ε ≥ 0 (a double) with a certified δ bound ≤ `delta`.
    fn epsilon(&self, delta: f64) -> Result<(f64, f64, f64)> {
        let (d0, s0) = self.delta_bound(0.0);
        if d0 <= delta {
            return Ok((0.0, d0, s0));
        }
        let Some(kmax) = self.c.len().checked_sub(1).filter(|&k| k > 0) else {
            return Err(Error::Vacuous(format!("pld accounting: no grid point above 0 (δ = {})", fmt_value(delta))));
        };
        // Search aids (not certified): D_k = Σ_{j>k} c_j(1 − e^{−(j−k)h}),
        // U_k = Σ_{j≥k} c_j e^{−(j−k)h}.
        let beta = exp(-self.h);
        let one_m_beta = -exp_m1(-self.h);
        let mut d = vec![0.0f64; kmax + 1];
        let mut u = vec![0.0f64; kmax + 1];
        u[kmax] = self.c[kmax];
        for k in (0..kmax).rev() {
            d[k] = d[k + 1] + one_m_beta * u[k + 1];
            u[k] = self.c[k] + beta * u[k + 1];
        }
        let approx = |k: usize| d[k] + self.p_inf + self.slack(k as f64 * self.h, kmax - k + 1);
        if approx(kmax) > delta {
            return Err(Error::Vacuous(format!(
                "pld accounting: the truncated tails alone exceed δ = {} (mass at +∞ {:e}); the PLD accountant resolves δ down to about 1e-270 — use the RDP accounting (--conversion improved) for smaller δ",
                fmt_value(delta),
                self.p_inf
            )));
        }
        // Smallest k ≥ 1 with approx(k) ≤ δ (approx(0) > δ, approx(kmax) ≤ δ).
        let (mut lo, mut hi) = (0usize, kmax);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if approx(mid) <= delta { hi = mid } else { lo = mid }
        }
        let k = hi.max(1);
        let xk = k as f64 * self.h;
        // In (x_{k−1}, x_k]: δ(ε) ≈ D_k + (1 − e^{−(x_k−ε)})·U_k + rest.
        let rest = self.p_inf + self.slack((k - 1) as f64 * self.h, kmax - k + 2);
        let target = delta * (1.0 - 1e-9) - rest - d[k];
        let b = if u[k] > 0.0 && target > 0.0 && target < u[k] { -ln_1p(-target / u[k]) } else { 0.0 };
        let mut candidates = vec![(xk - b).max(0.0).next_up()];
        candidates.extend((0..8).map(|i| (k + i) as f64 * self.h));
        for eps in candidates {
            let (bound, slack) = self.delta_bound(eps);
            if bound <= delta {
                return Ok((eps, bound, slack));
            }
        }
        Err(Error::Vacuous(format!(
            "pld accounting could not certify δ = {} near ε = {xk} (numerical trouble)",
            fmt_value(delta)
        )))
    }

    fn report(&self, delta_bound: f64, slack: f64) -> PldReport {
        PldReport {
            method: METHOD,
            grid_width: self.h,
            support_points: self.support,
            fft_len: self.fft_len,
            tilt: self.theta,
            tail_mass_per_factor: self.tail,
            infinity_mass: self.p_inf,
            lower_truncation_mass: self.moved,
            float_slack: slack,
            delta_bound,
            rdp_epsilon: None,
            rdp_delta: None,
        }
    }
}

/// The smallest τ computed with: below it τ is raised to it (valid: δ(ε) is
/// non-decreasing in τ, docs/proofs/pld-covariance-only.md §5), so that no
/// grid quantity is subnormal.
const TAU_FLOOR: f64 = 1e-200;

/// Validates the events, drops those with τ = 0 (identical laws: no loss)
/// and raises τ to at least [`TAU_FLOOR`].
fn active(events: &[PldEvent]) -> Result<Vec<PldEvent>> {
    if events.is_empty() {
        return Err(Error::InvalidParameter {
            name: "pld accountant",
            value: "no releases".into(),
            requirement: "to hold at least one release",
        });
    }
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        if !(e.tau.is_finite() && e.tau >= 0.0) {
            return Err(Error::InvalidParameter {
                name: "τ",
                value: fmt_value(e.tau),
                requirement: "a finite number >= 0",
            });
        }
        if e.tau > 0.0 {
            out.push(PldEvent { tau: e.tau.max(TAU_FLOOR), draws: e.draws });
        }
    }
    Ok(out)
}

fn trivial_report() -> PldReport {
    PldReport::trivial()
}

/// The number of 1-D factors 2ΣL_i.
fn factor_count(events: &[PldEvent]) -> f64 {
    events.iter().map(|e| 2.0 * e.draws.as_f64()).sum()
}

/// ε(δ): the smallest ε (rounded up to a double) whose certified δ bound is
/// ≤ δ, for the composition of `events` (see the module docs). All τ = 0
/// gives ε = 0.
pub fn epsilon_for_delta(events: &[PldEvent], delta: f64, opts: &PldOptions) -> Result<PldStatement> {
    unit_open("δ", delta)?;
    check_options(opts)?;
    let ev = active(events)?;
    if ev.is_empty() {
        return Ok(PldStatement { epsilon: 0.0, delta, report: trivial_report() });
    }
    let theta = tilt_for_delta(&ev, delta);
    let tail = (opts.tail_fraction * delta / factor_count(&ev)).max(TAIL_FLOOR);
    let composed = Composed::build(&ev, theta, tail, opts)?;
    let (epsilon, bound, slack) = composed.epsilon(delta)?;
    Ok(PldStatement { epsilon, delta, report: composed.report(bound, slack) })
}

/// The largest ε accepted by [`delta_for_epsilon`].
pub const MAX_EPSILON: f64 = 1e100;

/// δ(ε): the certified upper bound on δ at ε for the composition of
/// `events` (see the module docs), at most 1.
pub fn delta_for_epsilon(events: &[PldEvent], epsilon: f64, opts: &PldOptions) -> Result<PldStatement> {
    if !(epsilon.is_finite() && (0.0..=MAX_EPSILON).contains(&epsilon)) {
        return Err(Error::InvalidParameter {
            name: "ε",
            value: fmt_value(epsilon),
            requirement: "a number in [0, 1e100]",
        });
    }
    check_options(opts)?;
    let ev = active(events)?;
    if ev.is_empty() {
        return Ok(PldStatement { epsilon, delta: 0.0, report: trivial_report() });
    }
    let nf = factor_count(&ev);
    let (theta, chernoff) = tilt_for_epsilon(&ev, epsilon);
    let mut tail = (opts.tail_fraction * 1e-2 * chernoff / nf).clamp(TAIL_FLOOR, 1e-3);
    let mut composed = Composed::build(&ev, theta, tail, opts)?;
    let (mut bound, mut slack) = composed.delta_bound(epsilon);
    // The tails should be a small part of the answer; if the Chernoff
    // estimate was far off, redo with the tail set from the bound itself.
    let truncated = composed.p_inf + composed.moved;
    if truncated > opts.tail_fraction * bound && tail > TAIL_FLOOR {
        tail = (opts.tail_fraction * 1e-2 * bound / nf).clamp(TAIL_FLOOR, 1e-3);
        composed = Composed::build(&ev, theta, tail, opts)?;
        (bound, slack) = composed.delta_bound(epsilon);
    }
    let bound = bound.min(1.0);
    Ok(PldStatement { epsilon, delta: bound, report: composed.report(bound, slack) })
}

fn check_options(opts: &PldOptions) -> Result<()> {
    if !(opts.grid_factor.is_finite() && opts.grid_factor > 0.0 && opts.grid_factor <= 1.0) {
        return Err(Error::InvalidParameter {
            name: "pld grid factor",
            value: fmt_value(opts.grid_factor),
            requirement: "in (0, 1]",
        });
    }
    if !(opts.tail_fraction > 0.0 && opts.tail_fraction < 1.0) {
        return Err(Error::InvalidParameter {
            name: "pld tail fraction",
            value: fmt_value(opts.tail_fraction),
            requirement: "in the open interval (0, 1)",
        });
    }
    if !opts.max_fft_len.is_power_of_two() || opts.max_fft_len < 64 {
        return Err(Error::InvalidParameter {
            name: "pld maximum FFT length",
            value: opts.max_fft_len.to_string(),
            requirement: "a power of two >= 64",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(tau: f64, l: u64) -> PldEvent {
        PldEvent { tau, draws: Draws::new(l).unwrap() }
    }

    #[test]
    fn factor_masses_sum_to_one_within_their_error() {
        for (c, upper) in [(0.44, true), (0.23, false), (3.0, true), (1e-6, false)] {
            let h = 1e-3 * c;
            let f = factor(c, h, 30_000, upper, 0.0, 4.5 * U);
            let total: f64 = f.x.iter().sum::<f64>() * f.sum + if upper { f.tail } else { 0.0 };
            assert!((total - 1.0).abs() < 1e-12, "{c} {upper}: {total}");
            assert!(f.rel_err < 1e-11, "{}", f.rel_err);
        }
    }

    #[test]
    fn fft_composition_matches_direct_convolution() {
        // Two draws of a small event: compare the composed masses with a
        // direct convolution of the (untilted) factors.
        let opts = PldOptions { grid_factor: 0.2, ..PldOptions::default() };
        let events = [ev(0.5, 2)];
        for theta in [0.0, 1.0] {
            let comp = Composed::build(&events, theta, 1e-9, &opts).unwrap();
            let h = comp.h;
            let c2 = 0.25;
            let c1 = c2 / 1.5;
            let k = (c2 * chi2_quantile(1e-9) / h).ceil() as usize;
            let m = (c1 * chi2_quantile(1e-9) / h).ceil() as usize;
            let up = factor(c2, h, k, true, 0.0, 0.0);
            let lo = factor(c1, h, m, false, 0.0, 0.0);
            let conv = |a: &[f64], b: &[f64]| {
                let mut out = vec![0.0; a.len() + b.len() - 1];
                for (i, x) in a.iter().enumerate() {
                    for (j, y) in b.iter().enumerate() {
                        out[i + j] += x * y;
                    }
                }
                out
            };
            let scale = |f: &Factor| f.x.iter().map(|v| v * f.sum).collect::<Vec<_>>();
            let one = conv(&scale(&up), &scale(&lo)); // offset 1 − m
            let two = conv(&one, &one); // offset 2(1 − m)
            let off = 2 * (1 - m as i64);
            for (kk, &ck) in comp.c.iter().enumerate() {
                let idx = kk as i64 - off;
                let want = if idx >= 0 && (idx as usize) < two.len() { two[idx as usize] } else { 0.0 };
                assert!((ck - want).abs() < 1e-13 + 1e-9 * want, "θ = {theta}, k = {kk}: {ck} vs {want}");
            }
        }
    }

    #[test]
    fn rejects_bad_inputs() {
        let o = PldOptions::default();
        for d in [0.0, 1.0, -1.0, f64::NAN] {
            assert!(epsilon_for_delta(&[ev(1.0, 1)], d, &o).is_err());
        }
        for e in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(delta_for_epsilon(&[ev(1.0, 1)], e, &o).is_err());
        }
        for t in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(epsilon_for_delta(&[ev(t, 1)], 0.1, &o).is_err());
        }
        assert!(epsilon_for_delta(&[], 0.1, &o).is_err());
        assert!(epsilon_for_delta(&[ev(1.0, 1)], 0.1, &PldOptions { grid_factor: 0.0, ..o }).is_err());
        assert!(epsilon_for_delta(&[ev(1.0, 1)], 0.1, &PldOptions { max_fft_len: 1000, ..o }).is_err());
        let zero = epsilon_for_delta(&[ev(0.0, 3)], 0.1, &o).unwrap();
        assert_eq!(zero.epsilon, 0.0);
        assert_eq!(delta_for_epsilon(&[ev(0.0, 3)], 0.5, &o).unwrap().delta, 0.0);
    }
}
