//! Excursion sets of released or posterior fields (docs/experiments.md, the paper's §5).
//!
//! The excursion set of f at level t is Ω_t(f) = {x : f(x) ≥ t}. From the
//! posterior, p_D(x) = Φ((μ_D(x) − t)/(σ·√k_D(x, x))) is the posterior
//! excursion probability (non-private: it depends on μ_D and k_D). A
//! released path f_D gives the private set {f_D ≥ t}; L paths give the vote
//! set {(1/L)·Σ 1{f⁽ˡ⁾ ≥ t} ≥ c}. Both are post-processing of the release.

/// Standard normal CDF Φ(z) = ½·erfc(−z/√2) (libm's erfc: accurate in the tails).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// p_D(x) = Φ((μ − t)/(σ·√v)) for normalised posterior variance v = k_D(x, x).
/// With v = 0 the probability is 1{μ ≥ t}.
pub fn excursion_probability(mean: f64, variance: f64, scale: f64, level: f64) -> f64 {
    let sd = scale * variance.max(0.0).sqrt();
    if sd > 0.0 {
        normal_cdf((mean - level) / sd)
    } else if mean >= level {
        1.0
    } else {
        0.0
    }
}

/// The L-path vote release {x : (1/L)·Σ_l 1{f⁽ˡ⁾(x) ≥ t} ≥ c} (docs/experiments.md).
/// Post-processing of the L released paths.
pub fn vote_set(paths: &[Vec<f64>], level: f64, cutoff: f64) -> crate::error::Result<Vec<bool>> {
    use crate::error::Error;
    if paths.is_empty() {
        return Err(Error::Dimension("a vote set needs at least one path".into()));
    }
    if paths.iter().any(|p| p.len() != paths[0].len()) {
        return Err(Error::Dimension("the paths of a vote set must have the same length".into()));
    }
    let m = paths[0].len();
    let l = paths.len() as f64;
    Ok((0..m).map(|i| paths.iter().filter(|p| p[i] >= level).count() as f64 / l >= cutoff).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_values() {
        assert_eq!(normal_cdf(0.0), 0.5);
        assert!((normal_cdf(1.0) - 0.8413447460685429).abs() < 1e-15);
        assert!((normal_cdf(-3.0) - 0.0013498980316300946).abs() < 1e-17);
        assert!((normal_cdf(-10.0) - 7.619853024160527e-24).abs() < 1e-36);
        assert!((excursion_probability(1.0, 0.25, 2.0, 0.0) - normal_cdf(1.0)).abs() < 1e-15);
        assert_eq!(excursion_probability(0.0, 0.0, 1.0, 0.0), 1.0);
    }

    #[test]
    fn vote_set_by_hand() {
        // Vote release: 3 paths, t = 0.
        let paths = vec![vec![1.0, -1.0, 0.0], vec![1.0, 1.0, -0.1], vec![-1.0, 1.0, -0.2]];
        assert_eq!(vote_set(&paths, 0.0, 0.5).unwrap(), vec![true, true, false]);
        assert_eq!(vote_set(&paths, 0.0, 1.0).unwrap(), vec![false, false, false]);
        assert_eq!(vote_set(&paths, 0.0, 1.0 / 3.0).unwrap(), vec![true, true, true]);
        assert!(vote_set(&[], 0.0, 0.5).is_err());
        assert!(vote_set(&[vec![1.0], vec![1.0, 2.0]], 0.0, 0.5).is_err());
    }
}
