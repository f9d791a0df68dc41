//! Data-free noise under replace-one (σ = 0, η > 0): the release
//! μ_D + GP(0, η²k) is a Gaussian mechanism of distance ≤ Δ̂/η per draw
//! (docs/proofs/data-free-noise.md). Checked against the direct Mahalanobis
//! distance of the two released Gaussians on random and adversarial
//! neighbouring datasets and test sets, against the Rényi route's limit
//! σ → 0, and through the mechanism (release, calibration).

use gpdp::privacy::data_free::account;
use gpdp::{
    Dataset, Domain, Draws, Grid, Kernel, MechanismParams, NeighbouringRelation, Points, Posterior, Query,
    ReleaseParams, ReleaseRng, ResponseScale, Solve,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// xᵀA⁻¹x for a symmetric positive definite A (plain Cholesky).
fn quad_form(a: &[Vec<f64>], x: &[f64]) -> f64 {
    let m = x.len();
    let mut l = vec![vec![0.0; m]; m];
    for i in 0..m {
        for j in 0..=i {
            let s: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            l[i][j] = if i == j { s.sqrt() } else { s / l[j][j] };
        }
    }
    let mut z = vec![0.0; m];
    for i in 0..m {
        z[i] = (x[i] - (0..i).map(|k| l[i][k] * z[k]).sum::<f64>()) / l[i][i];
    }
    z.iter().map(|v| v * v).sum()
}

fn points(rows: &[Vec<f64>]) -> Points {
    let dim = rows[0].len();
    Points::new(rows.concat(), dim).unwrap()
}

/// The squared distance ‖m_D − m_D′‖² in the metric of η²K_TT on the test set T.
fn distance2(kernel: Kernel, ridge: f64, eta: f64, d: &Dataset, d2: &Dataset, t: &Points) -> f64 {
    let m1 = Posterior::fit(kernel, d, ridge).unwrap().mean(t).unwrap();
    let m2 = Posterior::fit(kernel, d2, ridge).unwrap().mean(t).unwrap();
    let diff: Vec<f64> = m1.iter().zip(&m2).map(|(a, b)| a - b).collect();
    let rows: Vec<&[f64]> = t.iter().collect();
    let k: Vec<Vec<f64>> = rows
        .iter()
        .enumerate()
        .map(|(i, a)| {
            rows.iter()
                .enumerate()
                .map(|(j, b)| eta * eta * (kernel.eval(a, b).unwrap() + if i == j { 1e-12 } else { 0.0 }))
                .collect()
        })
        .collect();
    quad_form(&k, &diff)
}

#[test]
fn the_distance_of_the_two_releases_never_exceeds_delta_hat_over_eta() {
    let mut rng = ChaCha8Rng::seed_from_u64(24);
    let cases: [(Kernel, &str, usize, f64); 3] = [
        (Kernel::exponential(0.3).unwrap(), "interval:0,1", 6, 1.0),
        (Kernel::new(gpdp::KernelKind::Matern32, 0.4).unwrap(), "box:0,1,0,1", 8, 0.7),
        (Kernel::new(gpdp::KernelKind::SquaredExponential, 0.5).unwrap(), "box:0,1,0,1", 5, 2.0),
    ];
    let eta = 0.5;
    for (kernel, domain, n, ridge) in cases {
        let dom: Domain = domain.parse().unwrap();
        let dim = dom.dim();
        let mut params = ReleaseParams::new(kernel, dom, n, ridge, 0.0);
        params.gp_noise = eta;
        let mu = account(&params, Draws::ONE, Some(1e-5), None).unwrap().mu;
        let mut worst = 0.0f64;
        for trial in 0..200 {
            let clustered = trial % 2 == 1;
            let point = |rng: &mut ChaCha8Rng| -> Vec<f64> {
                (0..dim)
                    .map(|_| if clustered { 0.5 + 0.02 * rng.random::<f64>() } else { rng.random::<f64>() })
                    .collect()
            };
            let x: Vec<Vec<f64>> = (0..n).map(|_| point(&mut rng)).collect();
            // Adversarial responses: ±M with the changed record's sign flipped.
            let y: Vec<f64> =
                (0..n)
                    .map(|i| {
                        if trial % 4 < 2 {
                            if i % 2 == 0 { 1.0 } else { -1.0 }
                        } else {
                            2.0 * rng.random::<f64>() - 1.0
                        }
                    })
                    .collect();
            let i = rng.random_range(0..n);
            let mut x2 = x.clone();
            let mut y2 = y.clone();
            x2[i] = if trial % 3 == 0 { x[i].clone() } else { (0..dim).map(|_| rng.random::<f64>()).collect() };
            y2[i] = -y[i].signum();
            let d = Dataset::new(points(&x), y).unwrap();
            let d2 = Dataset::new(points(&x2), y2).unwrap();
            let mut t: Vec<Vec<f64>> = x.iter().chain(&x2).cloned().collect();
            t.extend((0..12).map(|_| (0..dim).map(|_| rng.random::<f64>()).collect::<Vec<f64>>()));
            t.sort_by(|a, b| a.partial_cmp(b).unwrap());
            t.dedup_by(|a, b| a.iter().zip(b.iter()).all(|(p, q)| (p - q).abs() < 1e-9));
            let dist = distance2(kernel, ridge, eta, &d, &d2, &points(&t)).sqrt();
            assert!(dist <= mu, "{kernel:?} trial {trial}: distance {dist} > μ = {mu}");
            worst = worst.max(dist / mu);
        }
        eprintln!("{kernel:?}: largest distance / μ = {worst:.3}");
        assert!(worst > 0.2, "the test sets never came near the bound ({worst})");
    }
}

/// σ = 0 is the limit σ → 0 of the Rényi route (whose mean term tends to
/// αΔ̂²/(2η²)): the exact profile is below the Rényi route at small σ, and a
/// mechanism with σ = 0 releases, reports it and calibrates to a target.
#[test]
fn the_mechanism_releases_and_calibrates_with_data_free_noise() {
    let domain: Domain = "interval:0,1".parse().unwrap();
    let mut model = ReleaseParams::new(Kernel::exponential(0.3).unwrap(), domain.clone(), 20, 3.0, 0.0);
    model.gp_noise = 0.6;
    let params = MechanismParams::new(model.clone(), 1e-4, ResponseScale::Bound(1.0));
    let m = params.check().unwrap();
    let g = m.privacy().gaussian.as_ref().unwrap();
    assert_eq!(g.neighbouring_relation, NeighbouringRelation::ReplaceOne);
    assert_eq!(m.privacy().epsilon, account(&model, Draws::ONE, Some(1e-4), None).unwrap().epsilon);
    let mut tiny = params.clone();
    tiny.release.scale = 1e-9;
    let rdp = tiny.check().unwrap().privacy().epsilon;
    assert!(
        m.privacy().epsilon < rdp && rdp < 1.6 * m.privacy().epsilon,
        "exact {} vs Rényi {rdp}",
        m.privacy().epsilon
    );
    let x: Vec<f64> = (0..20).map(|i| i as f64 / 19.0).collect();
    let y: Vec<f64> = x.iter().map(|v| (6.0 * v).sin()).collect();
    let data = Dataset::new(Points::from_1d(&x), y).unwrap();
    let q = Query::Grid(Grid::parse("30", &domain).unwrap());
    let rel = m.release(&data, &q, &mut ReleaseRng::seeded(2)).unwrap();
    assert_eq!(rel.paths[0].len(), 30);
    assert!(rel.report.statement.contains("exact Gaussian accounting") && rel.report.statement.contains("replace-one"));
    for solve in [Solve::Ridge, Solve::GpNoise] {
        let c = params.calibrate(solve, 2.0).unwrap();
        assert!(c.privacy().epsilon <= 2.0 && c.privacy().epsilon > 1.99, "{solve:?}: {}", c.privacy().epsilon);
        assert!(c.calibration().unwrap().permissive_epsilon.unwrap() > 2.0);
    }
    assert!(params.calibrate(Solve::Scale, 2.0).is_err());
    // σ = 0 without GP noise is the posterior mean itself: refused.
    let mut none = params.clone();
    none.release.gp_noise = 0.0;
    assert!(none.check().unwrap_err().to_string().contains("η > 0"));
}
