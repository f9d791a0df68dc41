// Index loops read like the formulas of the independent linear algebra below.
#![allow(clippy::needless_range_loop)]

use super::*;
use crate::mechanism::{MechanismParams, NoProgress};
use crate::model::data::Dataset;
use crate::model::domain::Domain;
use crate::model::kernel::{Kernel, KernelKind};
use crate::model::points::Points;
use crate::model::query::Grid;
use crate::privacy::ReleaseParams;
use crate::rng::ReleaseRng;

/// Dense covariance σ²k(x_i, x_j) + λ²δ_ij from `Kernel::eval` (not `gram`).
fn covariance(kind: KernelKind, h: Hyper, x: &Points) -> Vec<Vec<f64>> {
    let k = Kernel::new(kind, h.lengthscale).unwrap();
    let n = x.len();
    let mut c = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            c[i][j] = h.scale * h.scale * k.eval(x.row(i), x.row(j)).unwrap();
        }
        c[i][i] += h.noise * h.noise;
    }
    c
}

/// log N(y; 0, C) by Gaussian elimination with partial pivoting — an
/// independent computation of the determinant and the quadratic form.
fn gaussian_logpdf(c: &[Vec<f64>], y: &[f64]) -> f64 {
    let n = y.len();
    let mut a: Vec<Vec<f64>> = c.iter().zip(y).map(|(row, &yi)| row.iter().copied().chain([yi]).collect()).collect();
    let mut logdet = 0.0;
    for col in 0..n {
        let p = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap();
        a.swap(col, p);
        let d = a[col][col];
        logdet += d.abs().ln();
        for r in col + 1..n {
            let f = a[r][col] / d;
            for k in col..=n {
                a[r][k] -= f * a[col][k];
            }
        }
    }
    let mut z = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| a[i][k] * z[k]).sum();
        z[i] = (a[i][n] - s) / a[i][i];
    }
    let quad: f64 = y.iter().zip(&z).map(|(a, b)| a * b).sum();
    -0.5 * quad - 0.5 * logdet - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln()
}

/// A lower Cholesky factor by the textbook recurrence (test-local).
fn cholesky(c: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = c.len();
    let mut l = vec![vec![0.0; n]; n];
    for j in 0..n {
        let s: f64 = (0..j).map(|k| l[j][k] * l[j][k]).sum();
        l[j][j] = (c[j][j] - s).sqrt();
        for i in j + 1..n {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            l[i][j] = (c[i][j] - s) / l[j][j];
        }
    }
    l
}

/// n points uniform on [0, 1]² and y ~ N(0, σ²K_ℓ + λ²I).
fn synthetic(kind: KernelKind, h: Hyper, n: usize, seed: u64) -> Dataset {
    let mut rng = ReleaseRng::seeded(seed);
    let flat: Vec<f64> = (0..2 * n).map(|_| rng.uniform()).collect();
    let x = Points::new(flat, 2).unwrap();
    let l = cholesky(&covariance(kind, h, &x));
    let mut z = vec![0.0; n];
    rng.fill_normal(&mut z);
    let y: Vec<f64> = (0..n).map(|i| (0..=i).map(|k| l[i][k] * z[k]).sum()).collect();
    Dataset::new(x, y).unwrap()
}

#[test]
fn one_record_is_a_normal_density() {
    let h = Hyper { lengthscale: 0.3, scale: 0.7, noise: 0.2 };
    let data = Dataset::new(Points::from_1d(&[0.4]), vec![0.55]).unwrap();
    let v: f64 = 0.49 + 0.04;
    let want = -0.5 * 0.55f64.powi(2) / v - 0.5 * (2.0 * std::f64::consts::PI * v).ln();
    let got = log_marginal_likelihood(KernelKind::Matern32, h, &data).unwrap();
    assert!((got - want).abs() < 1e-13, "{got} vs {want}");
}

#[test]
fn matches_an_independent_gaussian_density_for_every_kernel() {
    let h = Hyper { lengthscale: 0.25, scale: 0.8, noise: 0.15 };
    let data = synthetic(KernelKind::Matern52, h, 12, 3);
    for kind in [
        KernelKind::Exponential,
        KernelKind::Matern32,
        KernelKind::Matern52,
        KernelKind::SquaredExponential,
        KernelKind::Constant,
        KernelKind::Diagonal,
    ] {
        let got = log_marginal_likelihood(kind, h, &data).unwrap();
        let want = gaussian_logpdf(&covariance(kind, h, data.x()), data.y());
        assert!((got - want).abs() < 1e-9 * want.abs().max(1.0), "{kind}: {got} vs {want}");
    }
    let bad = Hyper { noise: 0.0, ..h };
    assert!(log_marginal_likelihood(KernelKind::Matern32, bad, &data).is_err());
}

#[test]
fn the_fit_recovers_a_synthetic_fields_lengthscale_within_20_percent() {
    // Ten lengthscales across the domain: the lengthscale is identifiable
    // (with a few, only σ²/ℓ³ is — docs/plan.md).
    let truth = Hyper { lengthscale: 0.1, scale: 0.5, noise: 0.1 };
    let domain = Domain::cuboid(vec![0.0, 0.0], vec![1.0, 1.0]).unwrap();
    for seed in [0, 1, 2, 3] {
        let data = synthetic(KernelKind::Matern32, truth, 400, seed);
        let mut opts = FitOptions::new(Bounds::default_for(&domain, 1.0));
        opts.restarts = 4;
        opts.max_iterations = 250;
        let f = fit(KernelKind::Matern32, &data, &opts, &NoProgress).unwrap();
        let h = f.hyper;
        assert!((h.lengthscale / truth.lengthscale - 1.0).abs() < 0.2, "seed {seed}: ℓ = {}", h.lengthscale);
        assert!((h.noise / truth.noise - 1.0).abs() < 0.3, "seed {seed}: λ = {}", h.noise);
        assert!(h.scale > 0.25 && h.scale < 1.0, "seed {seed}: σ = {}", h.scale);
        assert!(f.at_bound.is_empty(), "{:?}", f.at_bound);
        // The optimum is at least as likely as the truth and every start.
        let at_truth = log_marginal_likelihood(KernelKind::Matern32, truth, &data).unwrap();
        assert!(f.log_marginal_likelihood >= at_truth - 1e-6);
        assert!(f.restarts.iter().all(|r| r.log_marginal_likelihood <= f.log_marginal_likelihood));
        assert_eq!(f.restarts.len(), 4);
    }
}

#[test]
fn an_optimum_on_a_bound_is_reported() {
    let truth = Hyper { lengthscale: 0.2, scale: 0.5, noise: 0.1 };
    let data = synthetic(KernelKind::Matern32, truth, 80, 5);
    let bounds = Bounds { lengthscale: (0.01, 0.05), scale: (0.01, 5.0), noise: (1e-3, 1.0) };
    let mut opts = FitOptions::new(bounds);
    opts.restarts = 2;
    let f = fit(KernelKind::Matern32, &data, &opts, &NoProgress).unwrap();
    assert!((f.hyper.lengthscale - 0.05).abs() < 1e-9, "{}", f.hyper.lengthscale);
    assert!(f.at_bound.iter().any(|s| s == "lengthscale at its upper bound"), "{:?}", f.at_bound);
    let bad = Bounds { lengthscale: (0.5, 0.1), ..bounds };
    assert!(fit(KernelKind::Matern32, &data, &FitOptions::new(bad), &NoProgress).is_err());
}

fn template(n: usize, ell: f64, scale: f64) -> MechanismParams {
    let domain = Domain::cuboid(vec![0.0, 0.0], vec![1.0, 1.0]).unwrap();
    let release = ReleaseParams::new(Kernel::new(KernelKind::Matern32, ell).unwrap(), domain, n, 1.0, scale);
    MechanismParams::new(release, 1e-5, crate::model::units::ResponseScale::Bound(1.0))
}

#[test]
fn the_ridge_is_the_calibrated_one_or_the_fitted_floor() {
    let p = template(200, 0.2, 0.5);
    let free = calibrate_with_floor(&p, 2.0, None).unwrap();
    let r = free.params().release.ridge;
    assert!(free.privacy().epsilon <= 2.0 + 1e-9);
    let low = calibrate_with_floor(&p, 2.0, Some(r / 2.0)).unwrap();
    assert_eq!(low.params().release.ridge, r);
    let high = calibrate_with_floor(&p, 2.0, Some(3.0 * r)).unwrap();
    assert_eq!(high.params().release.ridge, 3.0 * r);
    assert!(high.privacy().epsilon < free.privacy().epsilon);
    assert!(calibrate_with_floor(&p, 2.0, Some(-1.0)).is_err());
}

#[test]
fn utility_grows_with_epsilon_and_stays_below_the_non_private_baseline() {
    let truth = Hyper { lengthscale: 0.25, scale: 0.5, noise: 0.1 };
    let data = synthetic(KernelKind::Matern32, truth, 150, 21);
    let p = template(150, truth.lengthscale, truth.scale);
    let grid = Grid::parse("12", &p.release.domain).unwrap();
    let opts = UtilityOptions { holdout: 0.2, reps: 4, seed: 1, grid, threshold: 0.2, ridge_floor: Some(1.5) };
    let u = utility_curve(&p, truth, &data, &[0.5, 500.0], &opts, &NoProgress).unwrap();
    assert_eq!((u.train_records, u.holdout_records, u.reps), (120, 30, 4));
    let (lo, hi) = (&u.points[0], &u.points[1]);
    assert!(lo.ridge > hi.ridge && lo.epsilon <= 0.5 + 1e-9 && hi.epsilon <= 500.0 + 1e-9);
    // At ε = 500 the floor 1.5 exceeds the calibrated ridge (≈ 0.9 here).
    assert!(hi.ridge_is_fitted && hi.ridge == 1.5 && hi.epsilon < 500.0, "{hi:?}");
    assert!(!lo.ridge_is_fitted && lo.ridge > 1.5, "{lo:?}");
    assert!(lo.holdout_rmse.mean > hi.holdout_rmse.mean, "{lo:?} vs {hi:?}");
    assert!(lo.excursion_iou.mean < hi.excursion_iou.mean, "{lo:?} vs {hi:?}");
    // A released path is noisier than the posterior mean it is drawn around.
    assert!(hi.holdout_rmse.mean > u.baseline_rmse.mean);
    // The baseline mean predicts held-out responses about as well as the noise allows.
    assert!(u.baseline_rmse.mean > 0.05 && u.baseline_rmse.mean < 0.3, "{:?}", u.baseline_rmse);
    assert!(u.baseline_iou.mean > 0.5 && u.baseline_iou.mean <= 1.0);
}
