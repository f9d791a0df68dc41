//! Statistical tests of the exact samplers (seeded, bounded): empirical
//! moments of many draws against μ_D and σ²K_D + η²K, with Monte-Carlo
//! tolerances of 5 standard errors per entry.
//!
//! For N draws of a Gaussian vector with covariance C, the sample mean of
//! entry i has standard error √(C_ii/N) and the sample covariance (i, j) has
//! standard error √((C_ii C_jj + C_ij²)/N).

use faer::Mat;
use std::sync::Arc;

use gpdp::nonprivate::{DenseSampler, Lattice, LatticePlan, LatticeSampler, Process, SamplePath, Sampler};
use gpdp::{Dataset, Draws, Kernel, KernelKind, Points, Posterior, ReleaseRng};

fn draws(l: u64) -> Draws {
    Draws::new(l).unwrap()
}

fn moments(draws: &[Vec<f64>]) -> (Vec<f64>, Mat<f64>) {
    let n = draws.len() as f64;
    let m = draws[0].len();
    let mean: Vec<f64> = (0..m).map(|i| draws.iter().map(|d| d[i]).sum::<f64>() / n).collect();
    let cov =
        Mat::from_fn(m, m, |i, j| draws.iter().map(|d| (d[i] - mean[i]) * (d[j] - mean[j])).sum::<f64>() / (n - 1.0));
    (mean, cov)
}

fn check(draws: &[Vec<f64>], mu: &[f64], c: &Mat<f64>, what: &str) {
    let n = draws.len() as f64;
    let (m, s) = moments(draws);
    for i in 0..mu.len() {
        let se = (c[(i, i)] / n).sqrt();
        assert!((m[i] - mu[i]).abs() <= 5.0 * se, "{what}: mean[{i}] {} vs {} (se {se})", m[i], mu[i]);
        for j in 0..mu.len() {
            let se = ((c[(i, i)] * c[(j, j)] + c[(i, j)] * c[(i, j)]) / n).sqrt();
            assert!(
                (s[(i, j)] - c[(i, j)]).abs() <= 5.0 * se,
                "{what}: cov[{i},{j}] {} vs {} (se {se})",
                s[(i, j)],
                c[(i, j)]
            );
        }
    }
}

fn data_1d() -> Dataset {
    Dataset::new(Points::from_1d(&[0.05, 0.2, 0.21, 0.5, 0.77, 0.9]), vec![0.4, -0.9, -0.7, 1.0, 0.3, -0.2]).unwrap()
}

fn exact(p: &Process, q: &Points, jitter: f64) -> (Vec<f64>, Mat<f64>) {
    let mu = p.mean(q).unwrap();
    let mut c = p.covariance(q, q).unwrap();
    for i in 0..q.len() {
        c[(i, i)] += jitter;
    }
    (mu, c)
}

#[test]
fn dense_draws_have_the_posterior_moments() {
    let post = Posterior::fit(Kernel::exponential(0.3).unwrap(), &data_1d(), 0.4).unwrap();
    let q = Points::from_1d(&[0.0, 0.2, 0.35, 0.5, 0.95]);
    for (sigma, eta) in [(1.0, 0.0), (0.7, 0.5)] {
        let p = Process::new(post.clone(), sigma, eta).unwrap();
        let mut rng = ReleaseRng::seeded(11);
        let s = DenseSampler::new(p.clone()).sample(&q, draws(20_000), &mut rng).unwrap();
        assert!(s.jitter > 0.0 && s.jitter < 1e-9);
        let (mu, c) = exact(&p, &q, s.jitter);
        check(&s.values, &mu, &c, &format!("dense σ={sigma} η={eta}"));
    }
}

#[test]
fn sample_path_in_two_batches_has_the_joint_law_of_one_batch() {
    let post = Posterior::fit(Kernel::new(KernelKind::Matern32, 0.25).unwrap(), &data_1d(), 0.3).unwrap();
    let p = Process::new(post, 0.8, 0.3).unwrap();
    let first = Points::from_1d(&[0.1, 0.5, 0.6]);
    let second = Points::from_1d(&[0.55, 0.9, 0.1]); // 0.1 repeats a revealed point
    let all = Points::from_1d(&[0.1, 0.5, 0.6, 0.55, 0.9]);
    let mut rng = ReleaseRng::seeded(5);
    let mut joint = Vec::new();
    let mut jitter = 0.0;
    for _ in 0..20_000 {
        let mut path = SamplePath::new(p.clone(), 10);
        jitter = path.jitter();
        let a = path.eval(&first, &mut rng).unwrap();
        let b = path.eval(&second, &mut rng).unwrap();
        assert_eq!(b[2], a[0], "a revealed point must return its value");
        assert_eq!(path.eval(&first, &mut rng).unwrap(), a);
        assert_eq!(path.revealed(), 5);
        joint.push(vec![a[0], a[1], a[2], b[0], b[1]]);
    }
    let (mu, c) = exact(&p, &all, jitter);
    check(&joint, &mu, &c, "two batches");
}

#[test]
fn sample_path_in_two_dimensions() {
    let x = Points::from_rows(&[[0.1, 0.1], [0.4, 0.8], [0.9, 0.3], [0.5, 0.5]]).unwrap();
    let d = Dataset::new(x, vec![1.0, -0.5, 0.2, 0.7]).unwrap();
    let post = Posterior::fit(Kernel::exponential(0.5).unwrap(), &d, 0.5).unwrap();
    let p = Process::new(post.clone(), 1.0, 0.0).unwrap();
    let mut rng = ReleaseRng::seeded(9);
    let mut joint = Vec::new();
    let q1 = Points::from_rows(&[[0.0, 0.0], [0.5, 0.5]]).unwrap();
    let q2 = Points::from_rows(&[[1.0, 1.0], [0.2, 0.9]]).unwrap();
    for _ in 0..10_000 {
        let mut path = SamplePath::new(p.clone(), 4);
        let mut v = path.eval(&q1, &mut rng).unwrap();
        v.extend(path.eval(&q2, &mut rng).unwrap());
        joint.push(v);
    }
    let all = Points::from_rows(&[[0.0, 0.0], [0.5, 0.5], [1.0, 1.0], [0.2, 0.9]]).unwrap();
    let (mu, c) = exact(&p, &all, p.jitter(4));
    check(&joint, &mu, &c, "2-D path");
}

#[test]
fn lattice_sampler_is_exact_on_a_grid() {
    // Covariates and query points on the lattice of a 9×7 grid refined ×2 over [0,1]×[0,0.6].
    let lattice = Lattice::new(vec![0.0, 0.0], vec![1.0, 0.6], vec![17, 13]).unwrap();
    let plan = Arc::new(LatticePlan::new(&Kernel::exponential(0.3).unwrap(), lattice.clone()).unwrap());
    let h = [1.0 / 16.0, 0.6 / 12.0];
    let x = Points::from_rows(&[
        [3.0 * h[0], 2.0 * h[1]],
        [11.0 * h[0], 9.0 * h[1]],
        [7.0 * h[0], 7.0 * h[1]],
        [16.0 * h[0], 0.0],
    ])
    .unwrap();
    let d = Dataset::new(x, vec![1.0, -1.0, 0.5, 0.2]).unwrap();
    let post = Posterior::fit(Kernel::exponential(0.3).unwrap(), &d, 0.6).unwrap();
    let q =
        Points::from_rows(&[[0.0, 0.0], [3.0 * h[0], 2.0 * h[1]], [0.5, 0.3], [1.0, 0.6], [5.0 * h[0], 12.0 * h[1]]])
            .unwrap();
    for (sigma, eta) in [(1.0, 0.0), (0.6, 0.4)] {
        let p = Process::new(post.clone(), sigma, eta).unwrap();
        let s = LatticeSampler::new(p.clone(), Arc::clone(&plan)).unwrap();
        let mut rng = ReleaseRng::seeded(3);
        let out = s.sample(&q, draws(20_000), &mut rng).unwrap();
        assert_eq!(out.jitter, p.jitter(q.len()));
        let (mu, c) = exact(&p, &q, out.jitter);
        check(&out.values, &mu, &c, &format!("lattice σ={sigma} η={eta}"));
    }
    // Off-lattice covariates or query points are refused (the caller falls back).
    let off = Dataset::new(Points::from_rows(&[[0.3, 0.3]]).unwrap(), vec![0.0]).unwrap();
    let post2 = Posterior::fit(Kernel::exponential(0.3).unwrap(), &off, 0.6).unwrap();
    assert!(LatticeSampler::new(Process::new(post2, 1.0, 0.0).unwrap(), plan).is_err());
}

#[test]
fn same_seed_same_draws_os_seed_differs() {
    let post = Posterior::fit(Kernel::exponential(0.3).unwrap(), &data_1d(), 0.4).unwrap();
    let p = Process::new(post.clone(), 1.0, 0.0).unwrap();
    let q = Points::from_1d(&[0.1, 0.6]);
    let a = DenseSampler::new(p.clone()).sample(&q, draws(2), &mut ReleaseRng::seeded(1)).unwrap();
    let b = DenseSampler::new(p.clone()).sample(&q, draws(2), &mut ReleaseRng::seeded(1)).unwrap();
    assert_eq!(a, b);
    let mut os1 = ReleaseRng::from_os().unwrap();
    let mut os2 = ReleaseRng::from_os().unwrap();
    assert!(os1.is_private() && !ReleaseRng::seeded(1).is_private());
    assert_ne!(
        DenseSampler::new(p.clone()).sample(&q, Draws::ONE, &mut os1).unwrap(),
        DenseSampler::new(p).sample(&q, Draws::ONE, &mut os2).unwrap()
    );
    assert!(Process::new(post, f64::INFINITY, 0.0).is_err());
}

/// The lattice sampler where the minimal circulant embedding has negative
/// eigenvalues (squared-exponential kernel, ℓ = 0.4, 11 lattice points on
/// [0, 1]): the torus is enlarged until the embedding is exact, and the
/// released values have the law N(μ_D, σ²K_D + η²K + jI) — j the reported,
/// data-free jitter — to 5 standard errors per entry.
#[test]
fn lattice_sampler_with_an_indefinite_minimal_embedding_has_the_exact_law() {
    let kernel = Kernel::new(KernelKind::SquaredExponential, 0.4).unwrap();
    let lattice = Lattice::new(vec![0.0], vec![1.0], vec![11]).unwrap();
    let plan = Arc::new(LatticePlan::new(&kernel, lattice.clone()).unwrap());
    assert!(plan.torus()[0] > 20, "the minimal torus (20) must have been enlarged: {:?}", plan.torus());
    let node = |i: usize| lattice.coordinate(0, i);
    let d = Dataset::new(Points::from_1d(&[node(1), node(3), node(4), node(9)]), vec![0.7, -0.4, 0.9, 0.1]).unwrap();
    let post = Posterior::fit(kernel, &d, 0.3).unwrap();
    let q = Points::from_1d(&[node(0), node(2), node(4), node(7), node(10)]);
    for (sigma, eta) in [(0.8, 0.0), (0.8, 0.4)] {
        let p = Process::new(post.clone(), sigma, eta).unwrap();
        let s = LatticeSampler::new(p.clone(), Arc::clone(&plan)).unwrap();
        let out = s.sample(&q, draws(20_000), &mut ReleaseRng::seeded(13)).unwrap();
        assert_eq!(out.jitter, p.jitter(q.len()), "the jitter is the reported public one");
        let (mu, c) = exact(&p, &q, out.jitter);
        check(&out.values, &mu, &c, &format!("enlarged lattice σ={sigma} η={eta}"));
    }
}
