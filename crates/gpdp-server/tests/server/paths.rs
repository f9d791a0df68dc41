//! Released paths: the law of values revealed in lazy batches (statistical,
//! 5 standard errors). The wall-clock measurements — creation and
//! evaluation time whatever the repeated covariates, and the load test on
//! loopback — are the benchmark `cargo bench -p gpdp-server --bench service`
//! (benches/service.rs), not tests: their bounds depend on the machine's load.

use crate::common::{Server, setup, spec};

/// Values revealed in three lazy batches have the law of one joint draw:
/// over K independent releases (one draw each), the sample mean, variance
/// and cross-batch covariances of (batch-wise) and (one-shot) values agree
/// within 5 standard errors.
#[test]
fn values_revealed_in_lazy_batches_have_the_law_of_one_joint_draw() {
    let (dir, config) = setup("rate_limit_per_minute = 0\n", false);
    let s = Server::start(&config);
    let mut sp = spec(dir.path());
    sp.as_object_mut().unwrap().remove("dataset");
    let pts = [[0.3, 0.3], [0.31, 0.32], [0.8, 0.5]];
    let k = 300;
    let (mut lazy, mut joint) = (Vec::new(), Vec::new());
    for _ in 0..k {
        let id = s.create(&sp);
        let v: Vec<f64> = pts.iter().flat_map(|p| s.eval(&id, &[*p])).collect();
        lazy.push(v);
        let id = s.create(&sp);
        joint.push(s.eval(&id, &pts));
    }
    let mean = |x: &[Vec<f64>], i: usize| x.iter().map(|r| r[i]).sum::<f64>() / x.len() as f64;
    let cov = |x: &[Vec<f64>], i: usize, j: usize| {
        let (mi, mj) = (mean(x, i), mean(x, j));
        x.iter().map(|r| (r[i] - mi) * (r[j] - mj)).sum::<f64>() / (x.len() - 1) as f64
    };
    let n = k as f64;
    for i in 0..3 {
        let (va, vb) = (cov(&lazy, i, i), cov(&joint, i, i));
        let se = ((va + vb) / n).sqrt();
        assert!((mean(&lazy, i) - mean(&joint, i)).abs() < 5.0 * se, "mean {i}");
        // SE of a sample variance ≈ σ²√(2/(n−1)).
        let se_v = (va.max(vb)) * (2.0 / (n - 1.0)).sqrt() * std::f64::consts::SQRT_2;
        assert!((va - vb).abs() < 5.0 * se_v, "variance {i}: {va} vs {vb}");
        for j in i + 1..3 {
            let prod = |x: &[Vec<f64>]| -> Vec<f64> {
                let (mi, mj) = (mean(x, i), mean(x, j));
                x.iter().map(|r| (r[i] - mi) * (r[j] - mj)).collect()
            };
            let (pa, pb) = (prod(&lazy), prod(&joint));
            let var = |p: &[f64]| {
                let m = p.iter().sum::<f64>() / p.len() as f64;
                p.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (p.len() - 1) as f64
            };
            let se = ((var(&pa) + var(&pb)) / n).sqrt();
            assert!((cov(&lazy, i, j) - cov(&joint, i, j)).abs() < 5.0 * se, "cov {i}{j}");
        }
    }
    // The close pair is strongly correlated in both (the test has power).
    let corr = cov(&lazy, 0, 1) / (cov(&lazy, 0, 0) * cov(&lazy, 1, 1)).sqrt();
    assert!(corr > 0.9, "{corr}");
}
