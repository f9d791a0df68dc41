//! Utility of excursion sets against a known truth (the paper's §5, App. D;
//! docs/experiments.md): quadrature weights, integrated binary cross-entropy, weighted IoU,
//! the choice of a probability cutoff, and the summary quantiles of the tables.

use crate::error::{Error, Result};

/// Trapezoid weights of m equally spaced points on [lo, hi] (end points
/// included): Δ/2 at the ends, Δ inside; they sum to hi − lo. Errors: m < 2,
/// bounds not finite with lo < hi.
pub fn trapezoid_weights(m: usize, lo: f64, hi: f64) -> Result<Vec<f64>> {
    if m < 2 {
        return Err(Error::Grid(format!("a mesh needs at least 2 points, got {m}")));
    }
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(Error::Grid(format!("mesh bounds [{lo}, {hi}] must be finite with lo < hi")));
    }
    let d = (hi - lo) / (m - 1) as f64;
    Ok((0..m).map(|i| if i == 0 || i == m - 1 { 0.5 * d } else { d }).collect())
}

/// Cell-area weights of an nx × ny grid over [x0, x1] × [y0, y1] (x
/// varying fastest): the product of the 1-D trapezoid weights, i.e. each
/// point carries the area of the part of the domain nearest to it; they sum
/// to the area of the rectangle.
pub fn cell_area_weights(nx: usize, ny: usize, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> Result<Vec<f64>> {
    let wx = trapezoid_weights(nx, x0, x1)?;
    let wy = trapezoid_weights(ny, y0, y1)?;
    let mut w = Vec::with_capacity(nx * ny);
    for b in &wy {
        for a in &wx {
            w.push(a * b);
        }
    }
    Ok(w)
}

/// Integrated binary cross-entropy L_BCE = Σ_i w_i·ℓ(s*_i, p_i) with
/// ℓ(s, p) = −s·log p − (1 − s)·log(1 − p), p clipped to [clip, 1 − clip]
/// (docs/experiments.md; the paper clips at 10⁻⁶). Errors: lengths differ, clip not in
/// [0, ½).
pub fn integrated_bce(truth: &[bool], p: &[f64], weights: &[f64], clip: f64) -> Result<f64> {
    same_lengths("the BCE's truth, probabilities and weights", &[truth.len(), p.len(), weights.len()])?;
    if !(0.0..0.5).contains(&clip) {
        return Err(Error::InvalidParameter {
            name: "probability clip",
            value: crate::error::fmt_value(clip),
            requirement: "in [0, 0.5)",
        });
    }
    Ok(truth
        .iter()
        .zip(p)
        .zip(weights)
        .map(|((&s, &q), &w)| {
            let q = q.clamp(clip, 1.0 - clip);
            w * if s { -q.ln() } else { -(1.0 - q).ln() }
        })
        .sum())
}

fn same_lengths(what: &str, lens: &[usize]) -> Result<()> {
    if lens.windows(2).all(|w| w[0] == w[1]) {
        Ok(())
    } else {
        Err(Error::Dimension(format!("{what} have different lengths {lens:?}")))
    }
}

/// Weighted intersection over union Σ w·1{A ∩ B} / Σ w·1{A ∪ B}; 1 when
/// both sets are empty. Errors: lengths differ.
pub fn iou(a: &[bool], b: &[bool], weights: &[f64]) -> Result<f64> {
    same_lengths("the two sets and the weights", &[a.len(), b.len(), weights.len()])?;
    let (mut inter, mut union) = (0.0, 0.0);
    for ((&x, &y), &w) in a.iter().zip(b).zip(weights) {
        if x && y {
            inter += w;
        }
        if x || y {
            union += w;
        }
    }
    Ok(if union <= 0.0 { 1.0 } else { inter / union })
}

/// The cutoff among `candidates` maximising `score`; ties go to the
/// candidate closest to `prefer`, then to the smaller one.
pub fn best_cutoff(candidates: &[f64], prefer: f64, score: impl Fn(f64) -> f64) -> (f64, f64) {
    let mut best = (f64::NAN, f64::NEG_INFINITY);
    for &c in candidates {
        let s = score(c);
        let better = s > best.1
            || (s == best.1
                && ((c - prefer).abs() < (best.0 - prefer).abs()
                    || ((c - prefer).abs() == (best.0 - prefer).abs() && c < best.0)));
        if better {
            best = (c, s);
        }
    }
    best
}

/// Median and interquartile range (25%, 75%) with linear interpolation
/// between order statistics (numpy's default): returns (q25, median, q75).
/// NaNs are ignored; an empty input gives NaNs.
pub fn median_iqr(values: &[f64]) -> (f64, f64, f64) {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let h = (v.len() - 1) as f64 * p;
        let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
        v[lo] + (h - lo as f64) * (v[hi] - v[lo])
    };
    (q(0.25), q(0.5), q(0.75))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_bce_iou_cutoffs_quantiles() {
        let w = trapezoid_weights(5, 0.0, 1.0).unwrap();
        assert_eq!(w, vec![0.125, 0.25, 0.25, 0.25, 0.125]);
        let a = cell_area_weights(3, 2, (0.0, 2.0), (0.0, 1.0)).unwrap();
        assert_eq!(a, vec![0.25, 0.5, 0.25, 0.25, 0.5, 0.25]);
        assert!((a.iter().sum::<f64>() - 2.0).abs() < 1e-15);
        // BCE by hand: s = [1, 0], p = [0.8, 0.3], w = [0.5, 0.5]:
        // 0.5·(−ln 0.8) + 0.5·(−ln 0.7).
        let b = integrated_bce(&[true, false], &[0.8, 0.3], &[0.5, 0.5], 1e-6).unwrap();
        assert!((b - 0.5 * (-(0.8f64).ln() - (0.7f64).ln())).abs() < 1e-15);
        // Clipping: p = 0 for a true point costs −ln(1e−6).
        assert!((integrated_bce(&[true], &[0.0], &[1.0], 1e-6).unwrap() - 1e6f64.ln()).abs() < 1e-9);
        // IoU on hand-made sets with weights.
        let x = [true, true, false, false, true];
        let y = [true, false, false, true, true];
        assert!((iou(&x, &y, &w).unwrap() - (0.125 + 0.125) / (0.125 + 0.25 + 0.25 + 0.125)).abs() < 1e-15);
        assert_eq!(iou(&[false, false], &[false, false], &[1.0, 1.0]).unwrap(), 1.0);
        assert_eq!(iou(&[true, false], &[false, true], &[1.0, 1.0]).unwrap(), 0.0);
        // Cutoff: maximise, ties to the value closest to 0.5.
        let (c, s) = best_cutoff(&[0.1, 0.3, 0.5, 0.7, 0.9], 0.5, |c| if (0.3..=0.7).contains(&c) { 1.0 } else { 0.0 });
        assert_eq!((c, s), (0.5, 1.0));
        assert_eq!(best_cutoff(&[0.2, 0.8], 0.5, |_| 1.0).0, 0.2);
        // Quantiles as numpy: [1, 2, 3, 4] → (1.75, 2.5, 3.25).
        assert_eq!(median_iqr(&[4.0, 1.0, 3.0, 2.0]), (1.75, 2.5, 3.25));
        assert_eq!(median_iqr(&[7.0]), (7.0, 7.0, 7.0));
        // Bad inputs are errors, not panics.
        assert!(trapezoid_weights(1, 0.0, 1.0).is_err() && trapezoid_weights(3, 1.0, 1.0).is_err());
        assert!(integrated_bce(&[true], &[0.5, 0.5], &[1.0], 1e-6).is_err());
        assert!(integrated_bce(&[true], &[0.5], &[1.0], 0.5).is_err());
        assert!(iou(&[true], &[true, false], &[1.0]).is_err());
    }
}
