//! Data-independent smoothing of gridded released values (post-processing).

use crate::error::{Error, Result};

/// Separable Gaussian smoothing of an nx × ny grid (x varies fastest) with
/// standard deviation `sigma_px` grid cells, kernel truncated at
/// `truncate`·σ, edges extended by the nearest value (as
/// `scipy.ndimage.gaussian_filter(mode="nearest")`). Data-independent, so
/// smoothing a released grid is post-processing. σ = 0 returns the values
/// unchanged. Errors: `values.len() ≠ nx·ny`, σ or `truncate` negative or
/// not finite.
pub fn gaussian_smooth(values: &[f64], nx: usize, ny: usize, sigma_px: f64, truncate: f64) -> Result<Vec<f64>> {
    if nx.checked_mul(ny) != Some(values.len()) {
        return Err(Error::Grid(format!("{} values for a {nx} × {ny} grid", values.len())));
    }
    crate::error::non_negative("smoothing σ (cells)", sigma_px)?;
    crate::error::non_negative("smoothing truncation", truncate)?;
    if sigma_px == 0.0 || values.is_empty() {
        return Ok(values.to_vec());
    }
    let radius = (truncate * sigma_px + 0.5).floor() as isize;
    let mut w: Vec<f64> = (-radius..=radius).map(|k| (-0.5 * (k as f64 / sigma_px).powi(2)).exp()).collect();
    let sum: f64 = w.iter().sum();
    w.iter_mut().for_each(|v| *v /= sum);
    let pass = |src: &[f64], len: usize, count: usize, stride: usize, step: usize| -> Vec<f64> {
        let mut out = vec![0.0; src.len()];
        for line in 0..count {
            let base = line * stride;
            for i in 0..len {
                let mut acc = 0.0;
                for (k, wk) in w.iter().enumerate() {
                    let j = (i as isize + k as isize - radius).clamp(0, len as isize - 1) as usize;
                    acc += wk * src[base + j * step];
                }
                out[base + i * step] = acc;
            }
        }
        out
    };
    let along_x = pass(values, nx, ny, nx, 1);
    Ok(pass(&along_x, ny, nx, 1, nx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothing_preserves_constants_and_matches_hand_values() {
        let c = vec![2.5; 7 * 5];
        assert!(gaussian_smooth(&c, 7, 5, 2.0, 3.0).unwrap().iter().all(|v| (v - 2.5).abs() < 1e-14));
        // A unit impulse in the middle of a 9 × 1… use 9 × 9: the result is the
        // outer product of normalised 1-D weights; total mass is conserved.
        let mut imp = vec![0.0; 81];
        imp[4 * 9 + 4] = 1.0;
        let s = gaussian_smooth(&imp, 9, 9, 1.0, 3.0).unwrap();
        assert!(gaussian_smooth(&imp, 9, 8, 1.0, 3.0).is_err(), "wrong size is an error");
        assert!(gaussian_smooth(&imp, 9, 9, f64::NAN, 3.0).is_err());
        let w: Vec<f64> = (-3..=3).map(|k: i32| (-0.5 * (k as f64).powi(2)).exp()).collect();
        let z: f64 = w.iter().sum();
        assert!((s[4 * 9 + 4] - (w[3] / z).powi(2)).abs() < 1e-15);
        assert!((s[4 * 9 + 5] - w[3] * w[4] / (z * z)).abs() < 1e-15);
        assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        // Symmetric.
        assert!((s[3 * 9 + 4] - s[4 * 9 + 3]).abs() < 1e-16);
    }
}
