use super::*;
use crate::posterior::Posterior;
use crate::sampling::Process;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

const KINDS: [KernelKind; 3] = [KernelKind::Exponential, KernelKind::Matern32, KernelKind::Matern52];

#[test]
fn the_state_space_form_reproduces_the_kernel() {
    for kind in KINDS {
        for ell in [0.01, 0.3, 5.0] {
            let kernel = Kernel::new(kind, ell).unwrap();
            let model = StateSpaceModel::new(&kernel).unwrap();
            for d in [0.0, 1e-9, 1e-4, 0.003, 0.05, 0.2, 0.7, 1.0, 2.5, 10.0] {
                let want = kernel.eval(&[0.0], &[d]).unwrap();
                let got = model.covariance_at(d);
                assert!((got - want).abs() < 1e-14, "{kind} ℓ={ell} Δ={d}: {got} vs {want}");
            }
        }
    }
    assert!(StateSpaceModel::new(&Kernel::new(KernelKind::SquaredExponential, 1.0).unwrap()).is_err());
}

/// Q(x): the power series (x ≤ 1) agrees with the direct difference where the
/// latter is accurate, is positive definite, and its entries scale as
/// x^{2p−1−i−j} for small x (the exact zeros of the low-order coefficients).
#[test]
fn process_noise_series_is_accurate_and_has_the_right_order() {
    for kind in KINDS {
        let model = StateSpaceModel::new(&Kernel::new(kind, 1.0).unwrap()).unwrap();
        let p = model.order();
        let lam = model.lambda;
        for x in [0.4, 0.7, 1.0] {
            let (a, q) = model.step(x / lam);
            let apa = matmul(&matmul(&a, &model.pinf, p), &transpose(&a, p), p);
            for i in 0..p {
                for j in 0..p {
                    let direct = model.pinf[i][j] - apa[i][j];
                    assert!((q[i][j] - direct).abs() < 1e-13, "{kind} x={x} Q[{i}][{j}] {} vs {direct}", q[i][j]);
                }
            }
        }
        for x in [1e-7, 1e-4, 1e-2, 0.5] {
            let (_, q) = model.step(x / lam);
            let (_, q2) = model.step(2.0 * x / lam);
            for i in 0..p {
                let expo = (2 * p - 1 - 2 * i) as f64;
                if x <= 1e-4 {
                    let ratio = q2[i][i] / q[i][i];
                    assert!((ratio / 2f64.powf(expo) - 1.0).abs() < 1e-3, "{kind} x={x} i={i} ratio {ratio}");
                }
            }
            // Positive definite: the factor has positive pivots.
            let l = chol_psd(&q, p);
            assert!((0..p).all(|i| l[i][i] > 0.0), "{kind} x={x}: Q not positive definite");
        }
    }
}

/// Problems with repeated covariates, a query at a covariate, a repeated
/// query, small and large lengthscales and ridges.
fn problems() -> Vec<(Kernel, Dataset, f64, f64, f64, Vec<f64>)> {
    let x = vec![0.05, 0.3, 0.3, 0.61, 0.9, 0.97];
    let y = vec![0.4, -1.0, -0.6, 0.9, 0.2, -0.3];
    let q = vec![0.0, 0.3, 0.45, 0.8, 0.8, 1.0, 0.12];
    let data = Dataset::new(Points::from_1d(&x), y).unwrap();
    let mut out = Vec::new();
    for kind in KINDS {
        for (ell, r, sigma, eta) in [
            (0.3, 0.5, 1.3, 0.0),
            (0.05, 0.02, 0.7, 0.4),
            (3.0, 2.0, 2.0, 1.5),
            (0.5, 0.001, 1.0, 0.0),
            (0.002, 0.05, 1.0, 0.3),
            (30.0, 0.01, 1.0, 0.0),
        ] {
            out.push((Kernel::new(kind, ell).unwrap(), data.clone(), r, sigma, eta, q.clone()));
        }
    }
    out
}

/// The draws are a fixed linear map b + Bε of the normals ε; read off b and
/// B and compare the exact mean and covariance with the dense computation.
#[test]
fn exact_mean_and_covariance_equal_the_dense_ones() {
    for (kernel, data, r, sigma, eta, q) in problems() {
        let s = StateSpaceSampler::new(&kernel, &data, r, sigma, eta).unwrap();
        let count = {
            let mut c = 0usize;
            s.sample_with(&q, 1, &mut || {
                c += 1;
                0.0
            })
            .unwrap();
            c
        };
        let (base, jitter) = s.sample_with(&q, 1, &mut || 0.0).unwrap();
        let base = &base[0];
        let m = q.len();
        let mut cov = vec![vec![0.0; m]; m];
        for j in 0..count {
            let mut idx = 0usize;
            let (col, _) = s
                .sample_with(&q, 1, &mut || {
                    idx += 1;
                    if idx - 1 == j { 1.0 } else { 0.0 }
                })
                .unwrap();
            let b: Vec<f64> = col[0].iter().zip(base).map(|(v, b0)| v - b0).collect();
            for a in 0..m {
                for c in 0..m {
                    cov[a][c] += b[a] * b[c];
                }
            }
        }
        let post = Posterior::fit(kernel, &data, r).unwrap();
        let proc = Process::new(post, sigma, eta).unwrap();
        let pts = Points::from_1d(&q);
        let mean = proc.mean(&pts).unwrap();
        let want = proc.covariance(&pts, &pts).unwrap();
        let ctx = format!("{} ℓ={} r={r} σ={sigma} η={eta}", kernel.kind(), kernel.lengthscale());
        for a in 0..m {
            assert!((base[a] - mean[a]).abs() < 1e-10, "{ctx}: mean at {}: {} vs {}", q[a], base[a], mean[a]);
            for c in 0..m {
                let jit = if q[a] == q[c] { jitter } else { 0.0 };
                let w = want[(a, c)] + jit;
                assert!((cov[a][c] - w).abs() < 1e-10, "{ctx}: cov({}, {}) {} vs {w}", q[a], q[c], cov[a][c]);
            }
        }
    }
}

/// Seeded statistical test of one problem: sample means and covariances
/// within 5 standard errors of μ_D and σ²K_D + η²K. Returns the largest
/// deviation in standard errors.
fn worst_deviation(kind: KernelKind, draws: usize, seed: u64) -> f64 {
    let x = vec![0.1, 0.35, 0.35, 0.7];
    let y = vec![0.5, -0.8, -0.4, 1.0];
    let q = vec![0.0, 0.35, 0.5, 0.9];
    let data = Dataset::new(Points::from_1d(&x), y).unwrap();
    let kernel = Kernel::new(kind, 0.25).unwrap();
    let (r, sigma, eta) = (0.3, 1.0, 0.5);
    let s = StateSpaceSampler::new(&kernel, &data, r, sigma, eta).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (paths, jitter) = s.sample_with(&q, draws, &mut || StandardNormal.sample(&mut rng)).unwrap();
    let post = Posterior::fit(kernel, &data, r).unwrap();
    let proc = Process::new(post, sigma, eta).unwrap();
    let pts = Points::from_1d(&q);
    let mean = proc.mean(&pts).unwrap();
    let mut cov = proc.covariance(&pts, &pts).unwrap();
    for i in 0..q.len() {
        cov[(i, i)] += jitter;
    }
    let nf = draws as f64;
    let m = q.len();
    let mut worst: f64 = 0.0;
    for a in 0..m {
        let avg = paths.iter().map(|p| p[a]).sum::<f64>() / nf;
        worst = worst.max((avg - mean[a]).abs() / (cov[(a, a)] / nf).sqrt());
        for c in 0..m {
            let sc = paths.iter().map(|p| (p[a] - mean[a]) * (p[c] - mean[c])).sum::<f64>() / nf;
            let se = ((cov[(a, a)] * cov[(c, c)] + cov[(a, c)] * cov[(a, c)]) / nf).sqrt();
            worst = worst.max((sc - cov[(a, c)]).abs() / se);
        }
    }
    worst
}

#[test]
fn draws_match_the_posterior_moments_and_a_mutation_is_detected() {
    for (i, kind) in KINDS.into_iter().enumerate() {
        let dev = worst_deviation(kind, 20_000, 11 + i as u64);
        assert!(dev < 5.0, "{kind}: a moment is {dev:.2} standard errors off");
        MUTATE_UPDATE.with(|m| m.set(true));
        let bad = worst_deviation(kind, 20_000, 11 + i as u64);
        MUTATE_UPDATE.with(|m| m.set(false));
        assert!(bad > 5.0, "{kind}: the mutated sampler passed ({bad:.2} standard errors)");
    }
}

/// Large problems stay fast and finite (10⁴ covariates, 10⁵ query points).
#[test]
fn scales_linearly_and_stays_finite() {
    let n = 10_000;
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.618_033_988_75) % 1.0).collect();
    let y: Vec<f64> = x.iter().map(|v| (6.0 * v).sin()).collect();
    let q: Vec<f64> = (0..100_000).map(|i| i as f64 / 99_999.0).collect();
    let data = Dataset::new(Points::from_1d(&x), y).unwrap();
    for kind in KINDS {
        let s = StateSpaceSampler::new(&Kernel::new(kind, 0.05).unwrap(), &data, 0.1, 1.0, 0.1).unwrap();
        let mut rng = ReleaseRng::seeded(3);
        let out = s.sample(&Points::from_1d(&q), Draws::ONE, &mut rng).unwrap();
        assert!(out.values[0].iter().all(|v| v.is_finite()));
        // The path follows the data: sin(6x) is well inside ±1.5 at this noise.
        let max = out.values[0].iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(max < 2.0, "{kind}: max |f| = {max}");
    }
}

#[test]
fn bad_inputs_are_refused() {
    let data = Dataset::new(Points::from_1d(&[0.1, 0.2]), vec![0.0, 1.0]).unwrap();
    let k = Kernel::new(KernelKind::Matern32, 0.3).unwrap();
    assert!(StateSpaceSampler::new(&k, &data, 0.1, f64::INFINITY, 0.0).is_err());
    assert!(StateSpaceSampler::new(&k, &data, 0.0, 1.0, 0.0).is_err());
    let two = Dataset::new(Points::new(vec![0.1, 0.2], 2).unwrap(), vec![0.0]).unwrap();
    assert!(StateSpaceSampler::new(&k, &two, 0.1, 1.0, 0.0).is_err());
    let s = StateSpaceSampler::new(&k, &data, 0.1, 1.0, 0.0).unwrap();
    assert!(s.sample_with(&[0.5, f64::NAN], 1, &mut || 0.0).is_err());
    assert_eq!(s.sample_with(&[], 2, &mut || 0.0).unwrap().0, vec![Vec::<f64>::new(); 2]);
    // Far-apart points (beyond e^{−x} underflow, even an infinite gap) are independent, not NaN.
    let (v, _) = s.sample_with(&[-1e300, 0.3, 1e300, f64::MAX], 1, &mut || 0.5).unwrap();
    assert!(v[0].iter().all(|x| x.is_finite()), "{v:?}");
    // −0 and +0 are one position (a covariate at −0, queries at ±0 share a value).
    let z = Dataset::new(Points::from_1d(&[-0.0, 0.5]), vec![1.0, 0.0]).unwrap();
    let s = StateSpaceSampler::new(&k, &z, 0.1, 1.0, 0.0).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let (v, _) = s.sample_with(&[0.0, -0.0, 0.5], 1, &mut || StandardNormal.sample(&mut rng)).unwrap();
    assert_eq!(v[0][0], v[0][1]);
}
