//! The elementary functions of the certified code, from one pinned
//! implementation with a stated error bound.
//!
//! Every logarithm, exponential, error function and power inside a bound
//! that can make ε smaller if it is wrong (the interval arithmetic of the
//! joint certifier, the RDP terms, the (ε, δ) conversions, the PLD engine)
//! is computed here, with the pure-Rust `libm` crate (a port of FreeBSD
//! msun / musl; pinned in `Cargo.lock`), not with `f64::ln` and friends,
//! whose accuracy depends on the platform's C library.
//!
//! **Error bound.** For every finite argument in the ranges the accountant
//! uses, the computed value f of g ∈ {ln, ln(1 + x), eˣ, eˣ − 1} satisfies
//!
//! ```text
//! next_down(f) ≤ g(x) ≤ next_up(f)        (ELEMENTARY_ULPS = 1)
//! ```
//!
//! i.e. the exact value lies within one double of the computed one (msun
//! documents "less than 1 ulp" for each). For erf and erfc the bound used is
//! a relative error of at most [`ERF_REL`] = 8u (four ulps; msun documents
//! less than one). Callers widen by these amounts: the interval arithmetic
//! moves an end point out by two doubles after `ln`/`ln_1p`
//! (docs/proofs/joint-accountant.md §6), the RDP terms and conversions
//! carry the relative slack of `rounding::ROUNDING_SLACK`, and the PLD
//! engine the error terms of docs/proofs/pld-covariance-only.md §9.4.
//!
//! **Check.** The unit tests below compare each function with a 256-bit (up
//! to 2 400-bit for erfc's far tail) evaluation by the `astro-float` crate
//! on seeded random arguments spread over the accountant's ranges and on
//! edge cases, and fail if a single argument violates the bound. Run with
//! `cargo test --release --workspace --lib -- privacy::elementary::`.

/// The exact value lies within this many doubles of the computed one, for
/// [`ln`], [`ln_1p`], [`exp`] and [`exp_m1`].
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const ELEMENTARY_ULPS: u32 = 1;

/// Unit roundoff of f64 (2⁻⁵³).
const U: f64 = f64::EPSILON / 2.0;

/// The relative error bound used for [`erf`] and [`erfc`]: 8u (four ulps).
pub(crate) const ERF_REL: f64 = 8.0 * U;

/// ln x (x > 0; ln 0 = −∞, NaN below 0).
#[inline]
pub(crate) fn ln(x: f64) -> f64 {
    libm::log(x)
}

/// ln(1 + x), accurate for small |x| (x > −1; −∞ at −1, NaN below).
#[inline]
pub(crate) fn ln_1p(x: f64) -> f64 {
    libm::log1p(x)
}

/// eˣ (0 below about −745, +∞ above about 709.78).
#[inline]
pub(crate) fn exp(x: f64) -> f64 {
    libm::exp(x)
}

/// eˣ − 1, accurate for small |x|.
#[inline]
pub(crate) fn exp_m1(x: f64) -> f64 {
    libm::expm1(x)
}

/// The error function erf z = (2/√π)∫₀ᶻ e^{−t²} dt.
#[inline]
pub(crate) fn erf(z: f64) -> f64 {
    libm::erf(z)
}

/// The complementary error function erfc z = 1 − erf z, accurate in the tail.
#[inline]
pub(crate) fn erfc(z: f64) -> f64 {
    libm::erfc(z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use astro_float::{BigFloat, Consts, RoundingMode};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const RM: RoundingMode = RoundingMode::ToEven;
    /// Working precision of the reference (bits).
    const P: usize = 256;

    fn big(x: f64, p: usize) -> BigFloat {
        BigFloat::from_f64(x, p)
    }

    /// Whether next_down(f) ≤ exact ≤ next_up(f) (ELEMENTARY_ULPS = 1),
    /// compared exactly, and the error |f − exact| in ulps of f (for the
    /// report).
    fn check(f: f64, exact: &BigFloat, cc: &mut Consts) -> (bool, f64) {
        assert!(f.is_finite() && !exact.is_nan(), "reference and value must be finite: {f}, {exact}");
        let (mut lo, mut hi) = (f, f);
        for _ in 0..ELEMENTARY_ULPS {
            (lo, hi) = (lo.next_down(), hi.next_up());
        }
        let (lo, hi) = (big(lo, P), big(hi, P));
        // `cmp` returns some positive, zero or negative value.
        let inside = matches!(lo.cmp(exact), Some(c) if c <= 0) && matches!(hi.cmp(exact), Some(c) if c >= 0);
        // The spacing of the doubles above |f|, as a difference of two normal
        // doubles (astro-float's conversion of subnormals is not relied on).
        let spacing = big(f.abs().next_up(), P).sub(&big(f.abs(), P), P, RM);
        let err = big(f, 4 * P).sub(exact, 4 * P, RM).abs().div(&spacing, P, RM);
        (inside, to_f64(&err, cc))
    }

    /// A BigFloat to f64 through its decimal form (for reports only).
    fn to_f64(x: &BigFloat, cc: &mut Consts) -> f64 {
        let s = x.format(astro_float::Radix::Dec, RM, cc).expect("format");
        s.parse::<f64>().unwrap_or_else(|_| panic!("unparsable reference {s}"))
    }

    /// Checks `f` against `reference` on every argument; returns the largest
    /// error in ulps, and fails on the first argument outside the bound.
    fn audit(name: &str, args: &[f64], f: fn(f64) -> f64, reference: impl Fn(f64, &mut Consts) -> BigFloat) -> f64 {
        let mut cc = Consts::new().expect("astro-float constants");
        let mut worst = 0.0f64;
        for &x in args {
            let v = f(x);
            let exact = reference(x, &mut cc);
            let (inside, err) = check(v, &exact, &mut cc);
            assert!(inside, "{name}({x:e}) = {v:e} is more than {ELEMENTARY_ULPS} double from {exact} ({err} ulp)");
            worst = worst.max(err);
        }
        eprintln!("{name}: {} arguments, largest error {worst:.3} ulp", args.len());
        worst
    }

    /// Log-uniform magnitudes in [10^a, 10^b].
    fn log_uniform(rng: &mut ChaCha8Rng, n: usize, a: f64, b: f64) -> Vec<f64> {
        (0..n).map(|_| 10f64.powf(rng.random_range(a..b))).collect()
    }

    #[test]
    fn the_check_rejects_a_value_two_doubles_off() {
        let mut cc = Consts::new().expect("astro-float constants");
        for x in [0.3, 2.0, 1e-5, 1e200] {
            let exact = big(x, P).ln(P, RM, &mut cc);
            let f = ln(x);
            assert!(check(f, &exact, &mut cc).0);
            assert!(!check(f.next_up().next_up(), &exact, &mut cc).0, "ln({x}) + 2 doubles accepted");
            assert!(!check(f.next_down().next_down(), &exact, &mut cc).0, "ln({x}) − 2 doubles accepted");
        }
    }

    #[test]
    fn ln_is_within_one_double() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut args = log_uniform(&mut rng, 3000, -300.0, 300.0);
        // Near 1, where ln loses relative accuracy most easily.
        args.extend((0..2000).map(|_| 1.0 + rng.random_range(-0.3..0.3f64)));
        args.extend((0..500).map(|_| 1.0 + 10f64.powf(rng.random_range(-15.0..-1.0))));
        args.extend([
            f64::MIN_POSITIVE,
            0.5,
            1.0,
            2.0,
            std::f64::consts::E,
            1.0f64.next_up(),
            1.0f64.next_down(),
            f64::MAX,
        ]);
        let worst = audit("ln", &args, ln, |x, cc| big(x, P).ln(P, RM, cc));
        assert!(worst < 1.0);
    }

    #[test]
    fn ln_1p_is_within_one_double() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut args = log_uniform(&mut rng, 2000, -30.0, 30.0);
        args.extend(log_uniform(&mut rng, 2000, -30.0, -1e-9).into_iter().map(|v| -v.min(0.999_999)));
        args.extend((0..1000).map(|_| -1.0 + 10f64.powf(rng.random_range(-15.0..-0.1))));
        args.extend([0.0, 1e-300, -1e-300, 0.5, -0.5, 1.0, -0.999_999_999, 1e300]);
        // 1 + x exactly: 53 bits below the smaller of 1 and |x|.
        let worst = audit("ln_1p", &args, ln_1p, |x, cc| {
            let p = P + 64 + (-x.abs().log2()).clamp(0.0, 1100.0) as usize;
            big(x, p).add(&big(1.0, p), p, RM).ln(P, RM, cc)
        });
        assert!(worst < 1.0);
    }

    #[test]
    fn exp_is_within_one_double() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut args: Vec<f64> = (0..4000).map(|_| rng.random_range(-708.0..709.0)).collect();
        args.extend((0..1000).map(|_| rng.random_range(-1.0..1.0f64)));
        args.extend([0.0, 1e-300, -1e-300, 1.0, -1.0, 0.5, 709.0, -708.0]);
        let worst = audit("exp", &args, exp, |x, cc| big(x, P).exp(P, RM, cc));
        assert!(worst < 1.0);
    }

    #[test]
    fn exp_m1_is_within_one_double() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut args: Vec<f64> = (0..2000).map(|_| rng.random_range(-40.0..40.0)).collect();
        let small = log_uniform(&mut rng, 2000, -30.0, 0.0);
        args.extend(small.iter().enumerate().map(|(i, &v)| if i % 2 == 0 { v } else { -v }));
        args.extend([1e-300, -1e-300, 1.0, -1.0, 700.0, -700.0]);
        // e^x at enough bits that subtracting 1 keeps 256 significant bits.
        let worst = audit("exp_m1", &args, exp_m1, |x, cc| {
            let p = P + 64 + (-x.abs().log2()).clamp(0.0, 1100.0) as usize;
            big(x, p).exp(p, RM, cc).sub(&big(1.0, p), P, RM)
        });
        assert!(worst < 1.0);
    }

    /// erf z by its Maclaurin series (2/√π)Σ (−1)ⁿ z^{2n+1}/(n!(2n+1)) at
    /// `p` bits, and erfc = 1 − erf (alternating terms up to e^{z²} and a
    /// result down to e^{−z²}: the caller chooses p ≥ 2.9·z² + 300).
    fn erf_series(z: f64, p: usize, cc: &mut Consts) -> BigFloat {
        let zb = big(z, p);
        let z2 = zb.mul(&zb, p, RM);
        let mut term = zb.clone(); // z^{2n+1}/n!
        let mut sum = zb.clone();
        let mut n = 0u64;
        loop {
            n += 1;
            term = term.mul(&z2, p, RM).div(&big(n as f64, p), p, RM);
            let t = term.div(&big((2 * n + 1) as f64, p), p, RM);
            sum = if n % 2 == 1 { sum.sub(&t, p, RM) } else { sum.add(&t, p, RM) };
            // Past the largest term, stop once |t| < 2^{−p−16}·|sum|.
            let small = matches!((t.exponent(), sum.exponent()), (Some(a), Some(b)) if a < b - p as i32 - 16);
            if n as f64 > z * z && (small || t.is_zero()) {
                break;
            }
        }
        let two_over_sqrt_pi = big(2.0, p).div(&cc.pi(p, RM).sqrt(p, RM), p, RM);
        sum.mul(&two_over_sqrt_pi, p, RM)
    }

    /// Checks the relative-error bound ERF_REL of erf and erfc.
    fn audit_erf(name: &str, args: &[f64], f: fn(f64) -> f64, complement: bool) -> f64 {
        let mut cc = Consts::new().expect("astro-float constants");
        let mut worst = 0.0f64;
        for &z in args {
            let p = 320 + (2.9 * z * z) as usize;
            let e = erf_series(z, p, &mut cc);
            let exact = if complement { big(1.0, p).sub(&e, p, RM) } else { e };
            let v = f(z);
            let rel = big(v, p).sub(&exact, p, RM).abs().div(&exact.abs(), 64, RM);
            let rel = to_f64(&rel, &mut cc);
            assert!(rel <= ERF_REL, "{name}({z}) = {v:e}: relative error {rel:e} > {ERF_REL:e} (exact {exact})");
            worst = worst.max(rel);
        }
        eprintln!("{name}: {} arguments, largest relative error {:.3} u", args.len(), worst / U);
        worst
    }

    #[test]
    fn erf_and_erfc_are_within_the_stated_relative_error() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        // The PLD engine evaluates erf/erfc at z = √(x/2), x ∈ [0, 1300]
        // (X_TAIL_MAX), so z ∈ [0, 25.5].
        let mut args: Vec<f64> = (0..300).map(|_| rng.random_range(0.0..6.0)).collect();
        args.extend((0..60).map(|_| rng.random_range(6.0..25.5)));
        args.extend(log_uniform(&mut rng, 100, -12.0, 0.0));
        args.extend([0.5, 1.0, 2.0, 25.49]);
        let worst_erfc = audit_erf("erfc", &args, erfc, true);
        let worst_erf = audit_erf("erf", &args, erf, false);
        assert!(worst_erfc <= ERF_REL && worst_erf <= ERF_REL);
    }
}
