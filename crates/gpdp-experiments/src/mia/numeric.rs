//! Small numerical helpers shared by the density models.

/// ln √(2π).
pub const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// eˣ for x ≤ 0, branch-free so that loops over it vectorise.
///
/// Cody–Waite reduction x = k·ln2 + r, |r| ≤ ln2/2, and the degree-12 Taylor
/// polynomial of eʳ (truncation error < 2e-16 relative); arguments below
/// −708 are clamped there (result ≈ 3e-308, not 0). Relative error a few
/// ulp over [−708, 0]; see the test.
#[inline(always)]
pub fn exp_neg(x: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    const SHIFTER: f64 = 6_755_399_441_055_744.0; // 1.5·2⁵²
    let x = x.max(-708.0);
    let t = x * LOG2E + SHIFTER;
    let k = t - SHIFTER;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    // Taylor coefficients 1/k!, evaluated by Estrin's scheme (dependency
    // depth 8 instead of Horner's 26, which keeps short loops from being
    // latency-bound).
    const C: [f64; 13] = [
        1.0,
        1.0,
        0.5,
        1.666_666_666_666_666_6e-1,
        4.166_666_666_666_666_4e-2,
        8.333_333_333_333_333e-3,
        1.388_888_888_888_889e-3,
        1.984_126_984_126_984e-4,
        2.480_158_730_158_73e-5,
        2.755_731_922_398_589e-6,
        2.755_731_922_398_589e-7,
        2.505_210_838_544_172e-8,
        2.087_675_698_786_81e-9,
    ];
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let q0 = C[0] + C[1] * r;
    let q1 = C[2] + C[3] * r;
    let q2 = C[4] + C[5] * r;
    let q3 = C[6] + C[7] * r;
    let q4 = C[8] + C[9] * r;
    let q5 = C[10] + C[11] * r;
    let s0 = q0 + q1 * r2;
    let s1 = q2 + q3 * r2;
    let s2 = q4 + q5 * r2;
    let t0 = s0 + s1 * r4;
    let t1 = s2 + C[12] * r4;
    let p = t0 + t1 * r8;
    // 2^k from the low bits of t (k + 1023 ∈ [1, 1023]).
    let scale = f64::from_bits(t.to_bits().wrapping_add(1023) << 52);
    p * scale
}

/// ln(eᵃ + eᵇ) without overflow.
#[inline]
pub fn log_add_exp(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == f64::NEG_INFINITY { m } else { m + ((a - m).exp() + (b - m).exp()).ln() }
}

/// Linear-interpolation quantile of sorted data (NumPy's default, "type 7"):
/// h = (n − 1)·p, q = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    debug_assert!(n > 0);
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    if lo + 1 >= n || frac == 0.0 {
        return sorted[lo.min(n - 1)];
    }
    let (a, b) = (sorted[lo], sorted[lo + 1]);
    if a == b {
        a
    } else if a.is_finite() && b.is_finite() {
        a + frac * (b - a)
    } else {
        // An infinite neighbour: take the upper one (a conservative threshold).
        b
    }
}

/// Mean and population variance.
pub fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n;
    (m, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_neg_is_accurate() {
        let mut worst: f64 = 0.0;
        let mut x = 0.0f64;
        while x > -708.0 {
            let (a, b) = (exp_neg(x), x.exp());
            worst = worst.max(((a - b) / b).abs());
            x -= 0.001_234_567;
        }
        assert!(worst < 1e-15, "{worst}");
        assert_eq!(exp_neg(0.0), 1.0);
        assert!(exp_neg(-1e6) > 0.0 && exp_neg(-1e6) < 1e-307);
    }

    #[test]
    fn quantiles_interpolate() {
        let x = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(quantile_sorted(&x, 0.0), 1.0);
        assert_eq!(quantile_sorted(&x, 1.0), 8.0);
        assert!((quantile_sorted(&x, 0.5) - 3.0).abs() < 1e-15);
        assert!((quantile_sorted(&x, 0.9) - 6.8).abs() < 1e-12);
        assert_eq!(log_add_exp(f64::NEG_INFINITY, f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert!((log_add_exp(0.0, 0.0) - 2f64.ln()).abs() < 1e-15);
    }
}
