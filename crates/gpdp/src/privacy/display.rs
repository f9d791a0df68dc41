//! Privacy parameters shown to people: a displayed ε or δ is never smaller
//! than the certified one. Rounding to the nearest would state, e.g.,
//! δ = 1e-3 for a certified 1.373·10⁻³ — an under-statement of the privacy
//! loss in every title, legend and message that shows it.

/// `v` rounded **up** to `decimals` decimals ("1.2564" → "1.257" at 3),
/// without trailing zeros beyond the first decimal; `∞` for +∞. The printed
/// value is ≥ `v` (the decimal string's value, not only after rounding back
/// to f64).
pub fn epsilon_up(v: f64, decimals: usize) -> String {
    if v == f64::INFINITY {
        return "∞".into();
    }
    if !v.is_finite() {
        return format!("{v}");
    }
    let d = decimals.min(12) as i32;
    let scale = 10f64.powi(d);
    let mut up = (v * scale).ceil() / scale;
    // The product and the division round: step up until the printed value is ≥ v.
    let printed = |x: f64| format!("{x:.*}", d as usize);
    while printed(up).parse::<f64>().is_ok_and(|p| p < v) {
        up += 1.0 / scale;
    }
    printed(up)
}

/// `v` in scientific notation with `sig` significant digits (≥ 1), rounded
/// **up**: 1.373e-3 → "1.4e-3" at 2, 1e-5 → "1e-5", 0 → "0".
pub fn delta_up(v: f64, sig: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let sig = sig.clamp(1, 15);
    let exp = v.abs().log10().floor() as i32;
    let mut e = exp;
    let mut mant = v / 10f64.powi(e);
    if mant >= 10.0 {
        mant /= 10.0;
        e += 1;
    } else if mant < 1.0 {
        mant *= 10.0;
        e -= 1;
    }
    let scale = 10f64.powi(sig as i32 - 1);
    let mut m = (mant * scale).ceil() / scale;
    let text = |m: f64, e: i32| {
        let s = format!("{m:.*}", sig - 1);
        let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
        format!("{s}e{e}")
    };
    while text(m, e).parse::<f64>().is_ok_and(|p| p < v) {
        m += 1.0 / scale;
    }
    if m >= 10.0 {
        m /= 10.0;
        e += 1;
    }
    text(m, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displayed_values_are_never_below_the_certified_ones() {
        assert_eq!(epsilon_up(1.2564, 3), "1.257");
        assert_eq!(epsilon_up(1.0, 3), "1.000");
        assert_eq!(epsilon_up(2.9999999, 4), "3.0000");
        assert_eq!(epsilon_up(f64::INFINITY, 3), "∞");
        assert_eq!(delta_up(1.373e-3, 2), "1.4e-3");
        assert_eq!(delta_up(1e-5, 2), "1e-5");
        assert_eq!(delta_up(1e-3, 1), "1e-3");
        assert_eq!(delta_up(9.96e-4, 2), "1e-3");
        assert_eq!(delta_up(0.05, 2), "5e-2");
        assert_eq!(delta_up(400f64.powf(-1.1), 3), "1.38e-3");
        // Random values: the printed number is ≥ the value and within one unit of the last digit.
        let mut x = 0.123_456_789f64;
        for _ in 0..2000 {
            x = (x * 9301.0 + 0.49297).fract();
            for v in [x * 20.0, x * 1e-7, x] {
                let e: f64 = epsilon_up(v, 3).parse().unwrap();
                assert!(e >= v && e - v <= 1e-3 + 1e-12, "{v} → {e}");
                let d: f64 = delta_up(v, 2).parse().unwrap();
                assert!(d >= v && d <= v * 1.1 + 1e-300, "{v} → {d}");
            }
        }
    }
}
