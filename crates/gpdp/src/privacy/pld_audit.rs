//! The PLD accountant (`Accounting::Pld`, gpdp::privacy::pld) against
//! independent computations (docs/proofs/pld-covariance-only.md §10).
//!
//! Reference methods, none of which shares code with the accountant:
//!
//! * [`delta_two_term`]: the exact δ(ε) of N(0, I₂) vs N(0, diag(λ₁, λ₂)) by
//!   Gauss–Legendre quadrature over one coordinate of the closed-form χ²₁
//!   conditional (erfc) — one draw of the dominating pair, of a random
//!   whitened pair (s, s', ρ), or of a real posterior pair via its
//!   generalised eigenvalues;
//! * [`delta_chi2`]: the exact δ(ε) of L draws of the dominating pair,
//!   Λ = c₂·χ²_L − c₁·χ²'_L, by quadrature over χ²'_L of closed-form χ²_L
//!   survival functions;
//! * [`imhof_sf`]: P(Σ_j w_j χ²_{m_j} > x) by Imhof's (1961) inversion
//!   formula, for compositions of releases with different τ (δ(ε) =
//!   P(Λ > ε) − e^ε·P(Λ < −ε), the second by the symmetry of the pair);
//!   checked against [`delta_chi2`] where both apply.
//!
//! Run with `--nocapture` to see the values the module docs of the proof quote.

use std::time::Instant;

use crate::audit::{NeighbourPair, core_quantities};
use crate::privacy::pld::{self, PldEvent, PldOptions};
use crate::{
    Accounting, Conversion, Draws, Kernel, PldAccountant, Points, Posterior, PrivacyEvent, RdpAccountant, ReleaseParams,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---------------------------------------------------------------------------
// Quadrature.

/// Gauss–Legendre nodes and weights on [−1, 1] (Newton on P_n).
fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
            let dx = p1 / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        out.push((x, 2.0 / ((1.0 - x * x) * dp * dp)));
    }
    out
}

/// ∫_a^b f by composite 16-point Gauss–Legendre on `panels` panels.
fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64, panels: usize, gl: &[(f64, f64)]) -> f64 {
    let w = (b - a) / panels as f64;
    let mut s = 0.0;
    for p in 0..panels {
        let mid = a + (p as f64 + 0.5) * w;
        for &(x, wt) in gl {
            s += wt * f(mid + 0.5 * w * x);
        }
    }
    0.5 * w * s
}

fn q1(x: f64) -> f64 {
    // P(χ²₁ > x)
    if x <= 0.0 { 1.0 } else { libm::erfc((0.5 * x).sqrt()) }
}

/// e^{z²}·erfc(z) for z ≥ 0 (directly below 20, by the asymptotic series
/// beyond, where its truncation error is below 10⁻¹⁵ relative).
fn erfcx(z: f64) -> f64 {
    if z < 20.0 {
        return (z * z).exp() * libm::erfc(z);
    }
    let w = 1.0 / (2.0 * z * z);
    let (mut term, mut sum) = (1.0, 1.0);
    for k in 1..8 {
        term *= -((2 * k - 1) as f64) * w;
        sum += term;
    }
    sum / (z * std::f64::consts::PI.sqrt())
}

/// log P(χ²_L > x) for integer L ≥ 1, without underflow or overflow:
/// P = e^{−h}·Σ_{k<L/2} h^k/k! (even L) or e^{−h}·[erfcx(√h) +
/// Σ_{k=1}^{(L−1)/2} h^{k−1/2}/Γ(k+1/2)] (odd L), h = x/2, summed in log
/// space.
fn chi2_log_sf(l: u32, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let h = 0.5 * x;
    let mut logs: Vec<f64> = Vec::new();
    if l % 2 == 0 {
        for k in 0..(l / 2) {
            logs.push(k as f64 * h.ln() - libm::lgamma(k as f64 + 1.0));
        }
    } else {
        logs.push(erfcx(h.sqrt()).ln());
        for k in 1..=(l / 2) {
            logs.push((k as f64 - 0.5) * h.ln() - libm::lgamma(k as f64 + 0.5));
        }
    }
    let m = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + logs.iter().map(|v| (v - m).exp()).sum::<f64>().ln() - h
}

/// P(χ²_L > x).
fn chi2_sf(l: u32, x: f64) -> f64 {
    chi2_log_sf(l, x).exp()
}

/// Exact δ(ε) of P = N(0, I₂) vs Q = N(0, diag(λ₁, λ₂)), λ₁ ≥ 1 ≥ λ₂ > 0.
/// Privacy loss under P: Λ = c₀ + w₊Z₂² − w₋Z₁², c₀ = ½log(λ₁λ₂),
/// w₋ = ½(1 − 1/λ₁), w₊ = ½(1/λ₂ − 1). Conditionally on Z₁ = z,
/// E[(1 − e^{ε−Λ})₊] = Q₁(t) − e^{ε−c₀+w₋z²}(1+2w₊)^{−1/2}Q₁((1+2w₊)t),
/// t = (ε − c₀ + w₋z²)/w₊ (Q₁ the χ²₁ survival function); integrated
/// against φ(z) over z ∈ [0, 12] (doubled; the rest has mass < 10⁻³²).
fn delta_two_term(l1: f64, l2: f64, eps: f64) -> f64 {
    assert!(l1 >= 1.0 && l2 <= 1.0 && l2 > 0.0, "{l1} {l2}");
    let c0 = 0.5 * (l1 * l2).ln();
    let wm = 0.5 * (1.0 - 1.0 / l1);
    let wp = 0.5 * (1.0 / l2 - 1.0);
    let gl = gauss_legendre(16);
    let phi = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let g = |z: f64| -> f64 {
        let a = eps - c0 + wm * z * z;
        if wp <= 1e-300 {
            // Λ = c₀ − w₋Z₁² deterministic given z.
            return if a < 0.0 { -a.exp_m1() * phi(z) } else { 0.0 };
        }
        let t = a / wp;
        let v = q1(t) - (a - 0.5 * (2.0 * wp).ln_1p() + chi2_log_sf(1, (1.0 + 2.0 * wp) * t)).exp();
        v.max(0.0) * phi(z)
    };
    // The integrand has a kink where a = 0 (z₀² = (c₀ − ε)/w₋): split there.
    let z0 = if wm > 0.0 && c0 > eps { ((c0 - eps) / wm).sqrt().min(12.0) } else { 0.0 };
    let mut s = 0.0;
    if z0 > 0.0 {
        s += integrate(g, 0.0, z0, 400, &gl);
    }
    s += integrate(g, z0, 12.0, 800, &gl);
    2.0 * s
}

/// Exact δ(ε) of L draws of the dominating pair with parameter τ:
/// Λ = c₂A − c₁B, A, B ~ χ²_L, c₂ = τ/2, c₁ = τ/(2(1+τ)); with B = z²,
/// δ = ∫ f_B [Q_L(t) − e^{ε+c₁z²}(1+τ)^{−L/2}Q_L((1+τ)t)], t = (ε + c₁z²)/c₂.
fn delta_chi2(tau: f64, l: u32, eps: f64) -> f64 {
    let c2 = 0.5 * tau;
    let c1 = c2 / (1.0 + tau);
    let lf = l as f64;
    let log_norm = -(0.5 * lf) * 2f64.ln() - libm::lgamma(0.5 * lf);
    let gl = gauss_legendre(16);
    let g = |z: f64| -> f64 {
        if z <= 0.0 {
            return 0.0;
        }
        let b = z * z;
        // density of z = √B: 2z·f_L(z²) = 2·z^{L−1}e^{−z²/2}/(2^{L/2}Γ(L/2))
        let dens = (2f64.ln() + (lf - 1.0) * z.ln() - 0.5 * b + log_norm).exp();
        let t = (eps + c1 * b) / c2;
        let v = chi2_sf(l, t) - (eps + c1 * b - 0.5 * lf * tau.ln_1p() + chi2_log_sf(l, (1.0 + tau) * t)).exp();
        v.max(0.0) * dens
    };
    let zmax = 2.0 * (lf.sqrt() + 8.0);
    integrate(g, 0.0, zmax, 1200, &gl)
}

/// Imhof (1961): P(Σ_j w_j·χ²_{m_j} > x) (w_j of either sign) =
/// ½ + (1/π)∫_0^∞ sin θ(u)/(u ρ(u)) du, θ(u) = ½Σ m_j atan(w_j u) − ½xu,
/// ρ(u) = Π(1 + w_j²u²)^{m_j/4}. Integrated to U with the tail bounded by
/// ∫_U^∞ du/(uρ(u)) ≤ (2/M)·U^{−M/2}/Π|w_j|^{m_j/2}, M = Σ m_j ≥ 6 here.
fn imhof_sf(terms: &[(f64, u32)], x: f64) -> f64 {
    let m: f64 = terms.iter().map(|t| t.1 as f64).sum();
    assert!(m >= 6.0);
    let log_prod: f64 = terms.iter().map(|&(w, k)| 0.5 * k as f64 * w.abs().ln()).sum();
    // U with (2/M)U^{−M/2}e^{−log_prod} ≤ 1e−13.
    let log_u = (13.0 * 10f64.ln() + (2.0 / m).ln() - log_prod) / (0.5 * m);
    let umax = log_u.exp().max(50.0);
    let f = |u: f64| -> f64 {
        let mut theta = -0.5 * x * u;
        let mut log_rho = 0.0;
        for &(w, k) in terms {
            theta += 0.5 * k as f64 * (w * u).atan();
            log_rho += 0.25 * k as f64 * (w * w * u * u).ln_1p();
        }
        theta.sin() / (u * log_rho.exp())
    };
    let gl = gauss_legendre(16);
    let width = (0.5f64).min(std::f64::consts::PI / (x.abs() + 1.0));
    let panels = (umax / width).ceil() as usize;
    0.5 + integrate(f, 0.0, umax, panels, &gl) / std::f64::consts::PI
}

/// Exact δ(ε) of the composition of dominating pairs (τ_i, L_i) by Imhof.
/// The subtraction multiplies Imhof's ≈ 10⁻¹³ absolute error by e^ε, so it
/// is used only at moderate ε (≤ 7 here; at ε ≈ 30 it fails).
fn delta_imhof(events: &[(f64, u32)], eps: f64) -> f64 {
    let mut terms = Vec::new();
    for &(tau, l) in events {
        terms.push((0.5 * tau, l));
        terms.push((-0.5 * tau / (1.0 + tau), l));
    }
    let neg: Vec<(f64, u32)> = terms.iter().map(|&(w, k)| (-w, k)).collect();
    imhof_sf(&terms, eps) - eps.exp() * imhof_sf(&neg, eps)
}

/// The smallest ε with δ(ε) ≤ δ for a non-increasing δ(·), by bisection.
fn epsilon_of(delta: f64, f: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while f(hi) > delta {
        lo = hi;
        hi *= 2.0;
    }
    while hi - lo > 1e-9 * hi {
        let mid = 0.5 * (lo + hi);
        if f(mid) <= delta { hi = mid } else { lo = mid }
    }
    hi
}

// ---------------------------------------------------------------------------
// The Figure-3 setting.

fn fig3_params() -> ReleaseParams {
    ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, f64::INFINITY)
}

fn fig3_tau() -> f64 {
    let rel = fig3_params().check().unwrap();
    rel.variance_bound().value / (rel.params().ridge * rel.params().ridge)
}

fn ev(tau: f64, l: u64) -> PldEvent {
    PldEvent { tau, draws: Draws::new(l).unwrap() }
}

#[test]
fn reference_methods_agree() {
    let tau = fig3_tau();
    for eps in [0.3, 0.9, 2.0] {
        let a = delta_two_term(1.0 + tau, 1.0 / (1.0 + tau), eps);
        let b = delta_chi2(tau, 1, eps);
        assert!((a - b).abs() < 1e-12, "ε = {eps}: {a} vs {b}");
    }
    for (l, eps) in [(3u32, 1.5), (10, 3.0), (10, 5.0)] {
        let a = delta_chi2(tau, l, eps);
        let b = delta_imhof(&[(tau, l)], eps);
        assert!((a - b).abs() < 1e-9, "L = {l}, ε = {eps}: {a} vs {b}");
    }
}

fn fig3_release(l: u64) -> (crate::Release, Draws) {
    (fig3_params().check().unwrap(), Draws::new(l).unwrap())
}

/// The exact ε(δ) of L draws of the dominating pair.
fn exact_epsilon(tau: f64, l: u32, delta: f64) -> f64 {
    epsilon_of(delta, |e| delta_chi2(tau, l, e))
}

/// Figure 3 setting, σ = ∞: L = 1, 3, 10 at δ = 0.05 (and 10⁻⁵), through
/// the public `Release::epsilon`. The PLD ε must lie above the exact ε of
/// the dominating pair and within 1% of it (measured: +0.39%, +0.28%,
/// +0.21% at δ = 0.05); for L = 1 it must be ≤ 1 (the RDP route gives 2.47).
#[test]
fn figure3_values_are_above_and_within_one_percent_of_the_exact_dominating_pair() {
    let tau = fig3_tau();
    println!("Figure 3 setting, σ = ∞: τ = {tau:.12}");
    for (l, delta) in [(1u64, 0.05), (3, 0.05), (10, 0.05), (1, 1e-5), (3, 1e-5), (10, 1e-5)] {
        let (rel, draws) = fig3_release(l);
        let t = Instant::now();
        let pld = rel.epsilon(draws, delta, Accounting::Pld).unwrap();
        let dt = t.elapsed();
        let rdp = rel.epsilon(draws, delta, Conversion::Improved).unwrap();
        let exact = exact_epsilon(tau, l as u32, delta);
        let p = pld.pld.as_ref().unwrap();
        println!(
            "L = {l:2}, δ = {delta:e}: PLD ε = {:.6}, exact dominating pair {exact:.6} (+{:.3}%), RDP (improved) {:.6}; h = {:.3e}, FFT {}, slack {:.1e}, {dt:?}",
            pld.epsilon,
            100.0 * (pld.epsilon / exact - 1.0),
            rdp.epsilon,
            p.grid_width,
            p.fft_len,
            p.float_slack
        );
        assert!(pld.epsilon >= exact, "L = {l}: PLD {} below the exact {exact}", pld.epsilon);
        assert!(pld.epsilon <= exact * 1.01, "L = {l}: PLD {} more than 1% above {exact}", pld.epsilon);
        assert!(pld.epsilon < rdp.epsilon);
        assert_eq!(p.rdp_epsilon, Some(rdp.epsilon));
        assert!(p.delta_bound <= delta);
        // The order fields are those of the improved RDP conversion.
        assert_eq!((pld.alpha, pld.rdp), (rdp.alpha, rdp.rdp));
        if (l, delta) == (1, 0.05) {
            assert!(pld.epsilon <= 1.0, "{}", pld.epsilon);
            assert!((exact - 0.885778).abs() < 1e-6, "{exact}");
        }
    }
}

/// The whole δ(ε) curve: exact ≤ PLD ≤ exact at ε − 2ΣL·h plus the
/// truncated mass and the float slack (each rounded-up factor moves the loss
/// up by less than h; the lower truncation moves at most the tail mass).
#[test]
fn delta_curve_is_sandwiched() {
    let tau = fig3_tau();
    for l in [1u64, 3] {
        let (rel, draws) = fig3_release(l);
        for eps in [0.05, 0.3, 0.9, 1.5, 3.0, 6.0] {
            let rep = rel.delta(draws, eps, Accounting::Pld).unwrap();
            let p = rep.pld.unwrap();
            let exact = delta_chi2(tau, l as u32, eps);
            let shift = 2.0 * l as f64 * p.grid_width;
            let upper = delta_chi2(tau, l as u32, (eps - shift).max(0.0))
                + p.infinity_mass
                + p.lower_truncation_mass
                + p.float_slack;
            println!("L = {l}, ε = {eps}: exact δ {exact:.6e} ≤ PLD {:.6e} ≤ {upper:.6e}", rep.delta);
            assert!(rep.delta >= exact, "L = {l}, ε = {eps}: {} < {exact}", rep.delta);
            assert!(rep.delta <= upper * (1.0 + 1e-9) + 1e-13, "L = {l}, ε = {eps}: {} > {upper}", rep.delta);
            assert_eq!(rep.conversion, Accounting::Pld);
        }
    }
}

/// ε(δ) then δ(ε) at that ε: certified δ ≤ the target, and not much below.
#[test]
fn epsilon_and_delta_round_trip() {
    for l in [1u64, 10] {
        let (rel, draws) = fig3_release(l);
        for delta in [0.05, 1e-4, 1e-10] {
            let e = rel.epsilon(draws, delta, Accounting::Pld).unwrap();
            let d = rel.delta(draws, e.epsilon, Accounting::Pld).unwrap();
            assert!(d.delta <= delta * (1.0 + 1e-6), "L = {l}: δ({}) = {} > {delta}", e.epsilon, d.delta);
            assert!(d.delta >= delta * 0.99, "L = {l}: δ({}) = {} ≪ {delta}", e.epsilon, d.delta);
        }
    }
}

/// Composition of two covariance-only releases with different τ (the
/// Figure 3 release with L = 2 and a squared-exponential release on a box
/// with L = 3): exact value by Imhof's formula.
#[test]
fn composition_of_two_releases_with_different_tau() {
    let (a, _) = fig3_release(1);
    let pb = ReleaseParams::new(
        Kernel::new(crate::KernelKind::SquaredExponential, 0.5).unwrap(),
        "box:0,1,0,1".parse().unwrap(),
        50,
        0.7,
        f64::INFINITY,
    );
    let b = pb.check().unwrap();
    let tau_a = fig3_tau();
    let tau_b = b.variance_bound().value / (0.7 * 0.7);
    let mut acc = PldAccountant::new();
    acc.compose_release(a.clone(), Draws::new(2).unwrap())
        .unwrap()
        .compose_release(b.clone(), Draws::new(3).unwrap())
        .unwrap();
    let mut racc = RdpAccountant::new();
    racc.compose_release(a.clone(), Draws::new(2).unwrap()).compose_release(b.clone(), Draws::new(3).unwrap());
    let delta = 0.05;
    let rep = acc.epsilon(delta).unwrap();
    let exact = epsilon_of(delta, |e| delta_imhof(&[(tau_a, 2), (tau_b, 3)], e));
    let rdp = racc.epsilon(delta, Conversion::Improved).unwrap();
    let alone_a = a.epsilon(Draws::new(2).unwrap(), delta, Accounting::Pld).unwrap().epsilon;
    let alone_b = b.epsilon(Draws::new(3).unwrap(), delta, Accounting::Pld).unwrap().epsilon;
    println!(
        "composition τ = {tau_a:.4} (L = 2) + τ = {tau_b:.4} (L = 3): PLD ε = {:.6}, exact {exact:.6} (+{:.3}%), RDP {:.6}; alone {alone_a:.4}, {alone_b:.4}",
        rep.epsilon,
        100.0 * (rep.epsilon / exact - 1.0),
        rdp.epsilon
    );
    assert!(rep.epsilon >= exact && rep.epsilon <= exact * 1.01, "{} vs {exact}", rep.epsilon);
    assert!(rep.epsilon < rdp.epsilon);
    assert!(rep.epsilon > alone_a.max(alone_b));
    assert_eq!(rep.components.len(), 2);
    // δ(ε) of the composition against Imhof at two ε.
    for eps in [1.0, 2.5] {
        let d = acc.delta(eps).unwrap().delta;
        let ex = delta_imhof(&[(tau_a, 2), (tau_b, 3)], eps);
        assert!(d >= ex && d <= ex * 1.05 + 1e-12, "ε = {eps}: {d} vs {ex}");
    }
}

// ---------------------------------------------------------------------------
// The domination itself.

/// Eigenvalues of A⁻¹B for 2×2 symmetric positive-definite A, B (the roots
/// of det(B − λA) = 0), larger first.
fn gen_eig_2x2(a: [[f64; 2]; 2], b: [[f64; 2]; 2]) -> (f64, f64) {
    let qa = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    let qb = a[0][0] * b[1][1] + a[1][1] * b[0][0] - a[0][1] * b[1][0] - a[1][0] * b[0][1];
    let qc = b[0][0] * b[1][1] - b[0][1] * b[1][0];
    let disc = (qb * qb - 4.0 * qa * qc).max(0.0).sqrt();
    let l1 = (qb + disc) / (2.0 * qa);
    (l1, qc / (qa * l1))
}

/// The proof's §3 formulas: λ₁λ₂ = (1 − s')/(1 − s), λ₁ + λ₂ = 2 − s' + κ(1 − s'ρ²).
fn eig_formula(s: f64, s2: f64, rho: f64) -> (f64, f64) {
    let kappa = s / (1.0 - s);
    let p = (1.0 - s2) / (1.0 - s);
    let sum = 2.0 - s2 + kappa * (1.0 - s2 * rho * rho);
    let l1 = 0.5 * (sum + (sum * sum - 4.0 * p).max(0.0).sqrt());
    (l1, p / l1)
}

/// Random whitened pairs P = N(0, I − s·aaᵀ), Q = N(0, I − s'·bbᵀ) with
/// s, s' ∈ [0, S] and a·b = ρ ∈ [−1, 1]: their generalised eigenvalues
/// (from the explicit matrices, checked against the proof's formulas) lie in
/// [1, 1 + τ] and [1/(1+τ), 1], and their exact δ(ε) (two-term quadrature)
/// never exceeds the dominating pair's, nor the PLD bound.
#[test]
fn random_whitened_pairs_are_dominated() {
    let tau = fig3_tau();
    let big_s = tau / (1.0 + tau);
    let epsilons = [0.0, 0.2, 0.6, 0.9, 1.5, 3.0];
    let dom: Vec<f64> = epsilons.iter().map(|&e| delta_two_term(1.0 + tau, 1.0 / (1.0 + tau), e)).collect();
    let (rel, draws) = fig3_release(1);
    let pld: Vec<f64> = epsilons.iter().map(|&e| rel.delta(draws, e, Accounting::Pld).unwrap().delta).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(20_251_201);
    let mut worst: f64 = 0.0;
    for i in 0..400 {
        // Include the extremes: s, s' at 0 or S, ρ at 0 or ±1.
        let pick = |rng: &mut ChaCha8Rng| match rng.random_range(0..4) {
            0 => big_s,
            1 => 0.0,
            _ => big_s * rng.random::<f64>(),
        };
        let (s, s2) = (pick(&mut rng), pick(&mut rng));
        let rho: f64 = if i % 10 == 0 { 0.0 } else { rng.random_range(-1.0..=1.0) };
        let a = [1.0, 0.0];
        let b = [rho, (1.0 - rho * rho).max(0.0).sqrt()];
        let sig = |s: f64, v: [f64; 2]| {
            [[1.0 - s * v[0] * v[0], -s * v[0] * v[1]], [-s * v[1] * v[0], 1.0 - s * v[1] * v[1]]]
        };
        let (l1, l2) = gen_eig_2x2(sig(s, a), sig(s2, b));
        let (f1, f2) = eig_formula(s, s2, rho);
        assert!((l1 - f1).abs() < 1e-12 && (l2 - f2).abs() < 1e-12, "{s} {s2} {rho}: ({l1}, {l2}) vs ({f1}, {f2})");
        assert!(l1 >= 1.0 - 1e-12 && l1 <= (1.0 + tau) * (1.0 + 1e-12), "λ₁ = {l1}");
        assert!(l2 <= 1.0 + 1e-12 && l2 >= (1.0 - big_s) * (1.0 - 1e-12), "λ₂ = {l2}");
        for (j, &e) in epsilons.iter().enumerate() {
            let d = delta_two_term(l1.max(1.0), l2.min(1.0), e);
            assert!(d <= dom[j] * (1.0 + 1e-10) + 1e-15, "s = {s}, s' = {s2}, ρ = {rho}, ε = {e}: {d} > {}", dom[j]);
            assert!(d <= pld[j], "s = {s}, s' = {s2}, ρ = {rho}, ε = {e}: {d} > PLD {}", pld[j]);
            if dom[j] > 1e-6 {
                worst = worst.max(d / dom[j]);
            }
        }
    }
    println!("random whitened pairs: largest δ/δ_dominating = {worst:.12}");
    assert!(worst > 1.0 - 1e-9, "the extreme pair s = s' = S, ρ = 0 attains the bound: {worst}");
}

/// Audit against real neighbouring datasets in the Figure 3 setting: the
/// exact δ(ε) of the two posterior laws on the test set {x, x'} (the
/// supremum over test sets; docs/proofs/theorem-3.1.md §7), both orders,
/// from their generalised eigenvalues, never exceeds the PLD bound. Pairs:
/// the core at one end or spread out, x and x' far apart and close, plus a
/// hill climb on the covariates maximising δ/δ_PLD.
#[test]
fn real_neighbouring_pairs_never_exceed_the_pld_bound() {
    let kernel = Kernel::exponential(1.0).unwrap();
    let ridge = 1.0;
    let q = ridge * ridge;
    let (rel, draws) = fig3_release(1);
    let eps_star = rel.epsilon(draws, 0.05, Accounting::Pld).unwrap().epsilon;
    let epsilons = [0.1, 0.4, eps_star, 1.5];
    let pld: Vec<f64> = epsilons.iter().map(|&e| rel.delta(draws, e, Accounting::Pld).unwrap().delta).collect();
    let exact_delta = |core: &[f64], x: f64, x2: f64, eps: f64| -> f64 {
        if x == x2 {
            return 0.0; // same covariates: identical posterior covariances
        }
        let pair = NeighbourPair {
            core_x: Points::from_1d(core),
            core_y: vec![0.0; core.len()],
            x: vec![x],
            y: 0.0,
            x2: vec![x2],
            y2: 0.0,
        };
        let (d1, d2) = pair.datasets().unwrap();
        let test = Points::from_1d(&[x, x2]);
        let cov = |d| {
            let m = Posterior::fit(kernel, d, ridge).unwrap().covariance(&test, &test).unwrap();
            [[m[(0, 0)], m[(0, 1)]], [m[(1, 0)], m[(1, 1)]]]
        };
        let (k1, k2) = (cov(&d1), cov(&d2));
        // Cross-check with the whitened (s, s', ρ) of the common core.
        let cq = core_quantities(&kernel, &pair, ridge).unwrap();
        let (f1, f2) = eig_formula(cq.v / (cq.v + q), cq.v2 / (cq.v2 + q), cq.w / (cq.v * cq.v2).sqrt());
        let (l1, l2) = gen_eig_2x2(k1, k2);
        assert!((l1 - f1).abs() < 1e-9 && (l2 - f2).abs() < 1e-9, "({l1}, {l2}) vs ({f1}, {f2})");
        assert!(l1 >= 1.0 - 1e-12 && l2 <= 1.0 + 1e-12);
        // Both orders: (K_D, K_D') has eigenvalues (λ₁, λ₂), (K_D', K_D) (1/λ₂, 1/λ₁).
        let a = delta_two_term(l1.max(1.0), l2.min(1.0), eps);
        let b = delta_two_term((1.0 / l2).max(1.0), (1.0 / l1).min(1.0), eps);
        a.max(b)
    };
    let mut worst = (0.0f64, String::new());
    let check = |core: &[f64], x: f64, x2: f64, worst: &mut (f64, String)| -> f64 {
        let mut r_max = 0.0f64;
        for (j, &e) in epsilons.iter().enumerate() {
            let d = exact_delta(core, x, x2, e);
            assert!(d <= pld[j], "core {core:?}, x = {x}, x' = {x2}, ε = {e}: exact δ {d} > PLD {}", pld[j]);
            let r = d / pld[j];
            r_max = r_max.max(r);
            if r > worst.0 {
                *worst = (r, format!("core {core:?}, x = {x}, x' = {x2}, ε = {e:.4}"));
            }
        }
        r_max
    };
    let nine = |v: f64| vec![v; 9];
    let spread: Vec<f64> = (0..9).map(|i| i as f64 / 8.0).collect();
    let fixed: Vec<(Vec<f64>, f64, f64)> = vec![
        (nine(0.0), 1.0, 0.0),
        (nine(0.0), 1.0, 0.5),
        (nine(0.0), 1.0, 0.9),
        (nine(0.0), 1.0, 0.99),
        (nine(0.5), 0.0, 1.0),
        (nine(0.5), 0.45, 0.55),
        (spread.clone(), 0.0, 1.0),
        (spread.clone(), 0.3, 0.31),
        (vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0], 0.5, 0.6),
    ];
    for (core, x, x2) in &fixed {
        let r = check(core, *x, *x2, &mut worst);
        println!("core {core:?}, x = {x}, x' = {x2}: largest δ/δ_PLD = {r:.4}");
    }
    // Hill climb from random starts.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..4 {
        let mut core: Vec<f64> = (0..9).map(|_| rng.random::<f64>()).collect();
        let (mut x, mut x2) = (rng.random::<f64>(), rng.random::<f64>());
        let mut best = check(&core, x, x2, &mut worst);
        for step in 0..150 {
            let scale = 0.3 * (1.0 - step as f64 / 150.0) + 0.01;
            let mut c2 = core.clone();
            let (mut y, mut y2) = (x, x2);
            match rng.random_range(0..3) {
                0 => {
                    let i = rng.random_range(0..9);
                    c2[i] = (c2[i] + scale * rng.random_range(-1.0..1.0)).clamp(0.0, 1.0);
                }
                1 => y = (y + scale * rng.random_range(-1.0..1.0)).clamp(0.0, 1.0),
                _ => y2 = (y2 + scale * rng.random_range(-1.0..1.0)).clamp(0.0, 1.0),
            }
            let r = check(&c2, y, y2, &mut worst);
            if r >= best {
                (best, core, x, x2) = (r, c2, y, y2);
            }
        }
    }
    println!("audit: largest exact δ / PLD δ = {:.4} ({})", worst.0, worst.1);
    assert!(worst.0 > 0.5, "the audit should come reasonably close: {}", worst.0);
}

// ---------------------------------------------------------------------------
// Edge cases and errors.

/// τ tiny (ε → 0), τ large, δ tiny: above the exact value and close to it.
#[test]
fn extreme_tau_and_delta() {
    // With τ small the total variation distance δ(0) is small: ask for a δ
    // below it, or ε is 0.
    let cases = [
        (1e-8, 1u32, 1e-10),
        (1e-3, 3, 1e-6),
        (30.0, 1, 0.05),
        (1e4, 2, 1e-3),
        (0.8782, 1, 1e-10),
        (0.8782, 10, 1e-10),
    ];
    for (tau, l, delta) in cases {
        let s = pld::epsilon_for_delta(&[ev(tau, l as u64)], delta, &PldOptions::default()).unwrap();
        let exact = exact_epsilon(tau, l, delta);
        println!(
            "τ = {tau:e}, L = {l}, δ = {delta:e}: PLD ε = {:.6e}, exact {exact:.6e} (+{:.3}%)",
            s.epsilon,
            100.0 * (s.epsilon / exact - 1.0)
        );
        assert!(s.epsilon >= exact, "τ = {tau}: {} < {exact}", s.epsilon);
        assert!(s.epsilon <= exact * 1.02, "τ = {tau}: {} vs {exact}", s.epsilon);
    }
    // ε → 0 as τ → 0 (at δ = 10⁻⁶: ε = 0 once δ(0), the total variation, is below δ).
    let e = |tau: f64| pld::epsilon_for_delta(&[ev(tau, 1)], 1e-6, &PldOptions::default()).unwrap().epsilon;
    let es: Vec<f64> = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-12].iter().map(|&t| e(t)).collect();
    println!("ε(10⁻⁶) for τ = 10⁻¹ … 10⁻¹²: {es:?}");
    assert!(es.windows(2).all(|w| w[1] <= w[0]) && es[0] > 0.0 && es[7] == 0.0, "{es:?}");
    // Very large τ: finite, above the exact value; δ below what the grid
    // resolves, and absurd numbers of draws: typed errors, no panic.
    let s = pld::epsilon_for_delta(&[ev(1e12, 1)], 0.05, &PldOptions::default()).unwrap();
    let exact = exact_epsilon(1e12, 1, 0.05);
    assert!(s.epsilon >= exact && s.epsilon <= exact * 1.01, "{} vs {exact}", s.epsilon);
    assert!(matches!(
        pld::epsilon_for_delta(&[ev(0.8782, 1)], 1e-300, &PldOptions::default()),
        Err(crate::Error::Vacuous(_))
    ));
    assert!(matches!(
        pld::epsilon_for_delta(&[ev(0.8782, u64::MAX), ev(0.5, u64::MAX)], 0.05, &PldOptions::default()),
        Err(crate::Error::TooLarge(_))
    ));
}

/// ε grows with L and falls with the ridge (the exact δ is monotone in τ and
/// L: docs/proofs/pld-covariance-only.md §5).
#[test]
fn monotone_in_draws_and_ridge() {
    let mut last = 0.0;
    for l in 1..=12 {
        let (rel, draws) = fig3_release(l);
        let e = rel.epsilon(draws, 0.05, Accounting::Pld).unwrap().epsilon;
        assert!(e > last, "L = {l}: {e} ≤ {last}");
        last = e;
    }
    let mut last = f64::INFINITY;
    for ridge in [0.5, 0.8, 1.0, 1.5, 3.0, 10.0] {
        let mut p = fig3_params();
        p.ridge = ridge;
        let e = p.check().unwrap().epsilon(Draws::ONE, 1e-5, Accounting::Pld).unwrap().epsilon;
        assert!(e < last, "r = {ridge}: {e}");
        last = e;
    }
    // At δ = 0.05 a large ridge gives ε = 0: δ(0) is the total variation
    // distance of the dominating pair, below 0.05 once τ is small.
    let mut p = fig3_params();
    p.ridge = 10.0;
    let r = p.check().unwrap().epsilon(Draws::ONE, 0.05, Accounting::Pld).unwrap();
    let tau = r.components[0].tau;
    assert_eq!(r.epsilon, 0.0);
    assert!(delta_chi2(tau, 1, 0.0) <= 0.05);
}

/// Calibration of the ridge with pld: certified, nearly tight, and smaller
/// than with the RDP route; solving for σ or η is refused.
#[test]
fn calibrating_the_ridge_with_pld() {
    let target = crate::Target { epsilon: 1.0, delta: 0.05, conversion: Accounting::Pld };
    let c = crate::calibrate(&fig3_params(), Draws::ONE, crate::Solve::Ridge, target).unwrap();
    assert!(c.report.epsilon <= 1.0 && c.permissive_epsilon > 1.0, "{c:?}");
    assert!(c.report.epsilon > 0.999);
    let rdp = crate::Target { conversion: Conversion::Improved.into(), ..target };
    let c_rdp = crate::calibrate(&fig3_params(), Draws::ONE, crate::Solve::Ridge, rdp).unwrap();
    println!("ridge for (1, 0.05), L = 1, σ = ∞: pld {:.6}, improved RDP {:.6}", c.value, c_rdp.value);
    assert!(c.value < 1.0 && c.value < c_rdp.value);
    // The calibrated ridge also meets the target for the exact dominating pair.
    let p = ReleaseParams { ridge: c.value, ..fig3_params() };
    let r = p.check().unwrap();
    let tau = r.variance_bound().value / (c.value * c.value);
    assert!(exact_epsilon(tau, 1, 0.05) <= 1.0);
    let mut finite = fig3_params();
    finite.scale = 5.0;
    for solve in [crate::Solve::Scale, crate::Solve::GpNoise] {
        let e = crate::calibrate(&finite, Draws::ONE, solve, target).unwrap_err();
        assert!(matches!(e, crate::Error::Unsupported(_)) && e.to_string().contains("σ = inf"), "{e}");
    }
    let c = crate::calibrate(&fig3_params(), Draws::ONE, crate::Solve::Draws, crate::Target { epsilon: 3.0, ..target })
        .unwrap();
    assert!(c.report.epsilon <= 3.0 && c.permissive_epsilon > 3.0, "{c:?}");
}

#[test]
fn errors_are_typed_and_say_why() {
    let scope = "pld accounting is proven only for covariance-only releases (σ = inf, gp-noise 0)";
    let mut finite = fig3_params();
    finite.scale = 5.0;
    let e = finite.check().unwrap().epsilon(Draws::ONE, 0.05, Accounting::Pld).unwrap_err();
    assert!(matches!(e, crate::Error::Unsupported(_)) && e.to_string().contains(scope), "{e}");
    let mut noisy = fig3_params();
    noisy.gp_noise = 0.3;
    let e = noisy.check().unwrap().delta(Draws::ONE, 1.0, Accounting::Pld).unwrap_err();
    assert!(e.to_string().contains(scope) && e.to_string().contains("0.3"), "{e}");
    // One finite-σ release among covariance-only ones is enough to refuse,
    // when it is composed; the PLD accountant does not support it.
    let mut acc = PldAccountant::new();
    acc.compose_release(fig3_params().check().unwrap(), Draws::ONE).unwrap();
    let event = PrivacyEvent::gp_release(finite.check().unwrap(), Draws::ONE);
    assert!(!acc.supports(&event));
    assert!(acc.compose(event.clone()).unwrap_err().to_string().contains("release 2"));
    assert!(RdpAccountant::new().supports(&event));
    assert!(PldAccountant::new().epsilon(0.05).is_err());
    // Nor a tabulated RDP curve (it does not determine a PLD).
    let table = crate::RdpTable::of(
        &PrivacyEvent::gp_release(fig3_params().check().unwrap(), Draws::ONE),
        &crate::privacy::LEDGER_ORDERS,
    )
    .unwrap();
    let tab = PrivacyEvent::Tabulated(table);
    assert!(!acc.supports(&tab));
    let e = acc.compose(tab).unwrap_err();
    assert!(matches!(e, crate::Error::Unsupported(_)) && e.to_string().contains("tabulated"), "{e}");
    let (rel, draws) = fig3_release(1);
    for d in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(
            matches!(rel.epsilon(draws, d, Accounting::Pld), Err(crate::Error::InvalidParameter { .. })),
            "δ = {d}"
        );
    }
    for e in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(rel.delta(draws, e, Accounting::Pld), Err(crate::Error::InvalidParameter { .. })), "ε = {e}");
    }
    // pld is not an RDP conversion: one library error wherever an RDP
    // conversion is required (the ledger), and the same strings as before.
    let why = "pld is a second accountant";
    let e = "pld".parse::<Conversion>().unwrap_err();
    assert!(
        matches!(e, crate::Error::InvalidParameter { name: "conversion", .. }) && e.to_string().contains(why),
        "{e}"
    );
    assert!(e.to_string().contains("the ledger composes the Rényi-DP curves"), "{e}");
    assert_eq!(Conversion::try_from(Accounting::Pld).unwrap_err(), e);
    assert_eq!(Conversion::try_from(Accounting::Rdp(Conversion::Paper)).unwrap(), Conversion::Paper);
    assert_eq!("pld".parse::<Accounting>().unwrap(), Accounting::Pld);
    assert_eq!(" Improved".parse::<Accounting>().unwrap(), Accounting::default());
    assert_eq!("paper".parse::<Accounting>().unwrap(), Accounting::Rdp(Conversion::Paper));
    assert!("gaussian".parse::<Accounting>().unwrap_err().to_string().contains("'improved', 'paper' or 'pld'"));
    for a in [Accounting::Pld, Accounting::Rdp(Conversion::Paper), Accounting::Rdp(Conversion::Improved)] {
        let j = serde_json::to_string(&a).unwrap();
        assert_eq!(j, format!("\"{}\"", a.name()));
        assert_eq!(serde_json::from_str::<Accounting>(&j).unwrap(), a);
        assert_eq!(a.to_string().parse::<Accounting>().unwrap(), a);
    }
    assert_eq!(Accounting::Pld.name(), "pld");
    // (A ledger budget takes a `Conversion` by type: pld cannot reach it.)
}

/// The report: JSON has the `pld` block; tables have the same `pld_*`
/// columns with and without PLD.
#[test]
fn report_says_which_accounting_was_used() {
    let (rel, draws) = fig3_release(3);
    let pld = rel.epsilon(draws, 0.05, Accounting::Pld).unwrap();
    let rdp = rel.epsilon(draws, 0.05, Conversion::Improved).unwrap();
    let v = serde_json::to_value(&pld).unwrap();
    assert_eq!(v["conversion"], "pld");
    for k in ["method", "grid_width", "fft_len", "tilt", "infinity_mass", "float_slack", "delta_bound", "rdp_epsilon"] {
        assert!(v["pld"].get(k).is_some(), "missing pld.{k}");
    }
    assert!(serde_json::to_value(&rdp).unwrap()["pld"].is_null());
    let names = |r: &crate::PrivacyReport| r.flat_fields().into_iter().map(|(k, _)| k).collect::<Vec<_>>();
    assert_eq!(names(&pld), names(&rdp));
    assert!(names(&pld).contains(&"pld_grid_width".to_string()));
}

// Speed is not tested here (a wall-clock bound depends on the machine's
// load): `cargo bench -p gpdp --bench accountant -- pld/` times one ε(δ)
// evaluation of the same Figure 3 releases through the public API.

/// Large L (run with `--ignored --nocapture`): once the composed support
/// needs more than the maximal FFT length 2²¹ the grid is coarsened, so the
/// excess grows (measured: L = 30 +0.16%, 100 +0.38%, 300 +1.4%, 1000
/// +5.5%, 80–200 ms); the bound stays above the exact value.
#[test]
#[ignore]
fn large_draws_note() {
    let tau = fig3_tau();
    for l in [30u64, 100, 300, 1000] {
        let t = Instant::now();
        let s = pld::epsilon_for_delta(&[ev(tau, l)], 0.05, &PldOptions::default()).unwrap();
        let dt = t.elapsed();
        let exact = exact_epsilon(tau, l as u32, 0.05);
        let (rel, draws) = fig3_release(l);
        let rdp = rel.epsilon(draws, 0.05, Conversion::Improved).unwrap().epsilon;
        println!(
            "L = {l}: PLD {:.4} exact {exact:.4} (+{:.2}%) RDP {rdp:.4}, {dt:?}, h = {:.2e}, N = {}",
            s.epsilon,
            100.0 * (s.epsilon / exact - 1.0),
            s.report.grid_width,
            s.report.fft_len
        );
        assert!(s.epsilon >= exact);
    }
}
