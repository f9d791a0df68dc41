//! Soundness of the accountant: the bound of Theorem 3.1 (and Proposition 2)
//! with V̂ (Prop. 3) and Δ̂ (auto lemma) must dominate the *exact* Rényi
//! divergence between the two posterior Gaussians of every replace-one
//! neighbouring pair, on every test set, at every admissible α (docs/proofs/preliminaries.md).
//!
//! Default run: ~25 000 (pair, α) checks plus a local search per kernel, in
//! seconds. Longer run (10× the cases and search steps):
//!
//! ```text
//! cargo test --release -p gpdp --test soundness -- --ignored --nocapture
//! ```
//!
//! Each run prints the largest ratio exact/bound found per kernel.

use gpdp::audit::{NeighbourPair, core_audit, dense_divergence, neighbour_divergence};
use gpdp::{Domain, Kernel, KernelKind, Points, ReleaseParams};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const M_Y: f64 = 1.0;

#[derive(Clone)]
struct Setup {
    name: &'static str,
    kernel_kind: KernelKind,
    domain: Domain,
}

fn setups() -> Vec<Setup> {
    vec![
        Setup {
            name: "exponential 1-D",
            kernel_kind: KernelKind::Exponential,
            domain: "interval:0,1".parse().unwrap(),
        },
        Setup { name: "exponential 2-D", kernel_kind: KernelKind::Exponential, domain: "box:0,1,0,1".parse().unwrap() },
        Setup {
            name: "squared-exponential 1-D",
            kernel_kind: KernelKind::SquaredExponential,
            domain: "interval:0,1".parse().unwrap(),
        },
        Setup {
            name: "squared-exponential 2-D",
            kernel_kind: KernelKind::SquaredExponential,
            domain: "box:0,1,0,1".parse().unwrap(),
        },
    ]
}

#[derive(Clone, Debug)]
struct Case {
    lengthscale: f64,
    ridge: f64,
    scale: f64,
    pair: NeighbourPair,
}

fn point(rng: &mut ChaCha8Rng, d: usize) -> Vec<f64> {
    (0..d).map(|_| rng.random::<f64>()).collect()
}

fn corner(rng: &mut ChaCha8Rng, d: usize) -> Vec<f64> {
    (0..d).map(|_| if rng.random::<bool>() { 1.0 } else { 0.0 }).collect()
}

fn sign(rng: &mut ChaCha8Rng) -> f64 {
    if rng.random::<bool>() { M_Y } else { -M_Y }
}

/// A random case of one of six adversarial families.
fn random_case(rng: &mut ChaCha8Rng, d: usize, mode: usize) -> Case {
    let n = rng.random_range(2..=12usize);
    let lengthscale = [0.1, 0.3, 1.0, 3.0][rng.random_range(0..4usize)];
    let ridge = 10f64.powf(rng.random_range(-1.7..1.3)); // 0.02 … 20
    let scale = [0.1, 0.5, 1.0, 3.0, 10.0, f64::INFINITY][rng.random_range(0..6usize)];
    let m = n - 1;
    let mut core: Vec<Vec<f64>> = Vec::with_capacity(m);
    let mut core_y = Vec::with_capacity(m);
    let (x, y, x2, y2);
    match mode {
        // Uniform covariates and responses.
        0 => {
            for _ in 0..m {
                core.push(point(rng, d));
                core_y.push(rng.random_range(-M_Y..=M_Y));
            }
            x = point(rng, d);
            x2 = point(rng, d);
            y = rng.random_range(-M_Y..=M_Y);
            y2 = rng.random_range(-M_Y..=M_Y);
        }
        // Responses at ±M_Y.
        1 => {
            for _ in 0..m {
                core.push(point(rng, d));
                core_y.push(sign(rng));
            }
            x = point(rng, d);
            x2 = point(rng, d);
            y = sign(rng);
            y2 = -y;
        }
        // x = x' with responses +M_Y and −M_Y.
        2 => {
            for _ in 0..m {
                core.push(point(rng, d));
                core_y.push(sign(rng));
            }
            x = point(rng, d);
            x2 = x.clone();
            y = M_Y;
            y2 = -M_Y;
        }
        // Core clustered at the opposite end of the domain from x, x'.
        3 => {
            let c = corner(rng, d);
            for _ in 0..m {
                core.push(c.iter().map(|v| (v + 0.02 * (rng.random::<f64>() - 0.5)).clamp(0.0, 1.0)).collect());
                core_y.push(sign(rng));
            }
            let far: Vec<f64> = c.iter().map(|v| 1.0 - v).collect();
            x = far.clone();
            x2 = if rng.random::<bool>() { far } else { point(rng, d) };
            y = sign(rng);
            y2 = -y;
        }
        // Many repeated records (possibly at x itself).
        4 => {
            let a = point(rng, d);
            let b = point(rng, d);
            x = if rng.random::<bool>() { a.clone() } else { point(rng, d) };
            for i in 0..m {
                core.push(if i % 3 == 2 { b.clone() } else { a.clone() });
                core_y.push(sign(rng));
            }
            x2 = if rng.random::<bool>() { b } else { point(rng, d) };
            y = sign(rng);
            y2 = sign(rng);
        }
        // Covariates at the domain's ends / corners.
        _ => {
            for _ in 0..m {
                core.push(corner(rng, d));
                core_y.push(sign(rng));
            }
            x = corner(rng, d);
            x2 = corner(rng, d);
            y = sign(rng);
            y2 = -y;
        }
    }
    let core_x = if core.is_empty() { Points::new(vec![], d).unwrap() } else { Points::from_rows(&core).unwrap() };
    Case { lengthscale, ridge, scale, pair: NeighbourPair { core_x, core_y, x, y, x2, y2 } }
}

#[derive(Default, Debug)]
struct Worst {
    checks: usize,
    ratio: f64,
    ratio_case: String,
    delta_ratio: f64,
    delta_case: String,
    b7_ratio: f64,
    v_ratio: f64,
    dense_checks: usize,
    noise_ratio: f64,
}

const U_GRID: [f64; 6] = [0.001, 0.05, 0.3, 0.6, 0.9, 0.99];

/// Largest exact/bound ratio over the α grid; asserts soundness on the way.
fn check_case(s: &Setup, case: &Case, worst: &mut Worst, dense: bool, rng: &mut ChaCha8Rng) -> f64 {
    let kernel = Kernel::new(s.kernel_kind, case.lengthscale).unwrap();
    let n = case.pair.core_y.len() + 1;
    let release = ReleaseParams::new(kernel, s.domain.clone(), n, case.ridge, case.scale).check().unwrap();
    let bound = release.rdp_bound();
    let vhat = release.variance_bound().value;
    let dhat = release.sensitivity_bound().value;

    // Definition 3.1: the exact common-core quantities sit below V̂ and Δ̂.
    let (v, v2, dnorm) = core_audit(&kernel, &case.pair, case.ridge).unwrap();
    assert!(v <= vhat * (1.0 + 1e-12) && v2 <= vhat * (1.0 + 1e-12), "V: {v} {v2} > {vhat} {case:?}");
    assert!(dnorm <= dhat * (1.0 + 1e-9), "Δ: {dnorm} > {dhat} in {} {case:?}", s.name);
    if dnorm / dhat > worst.delta_ratio {
        worst.delta_ratio = dnorm / dhat;
        worst.delta_case = format!("n={n} ℓ={} r={:.6} {:?}", case.lengthscale, case.ridge, case.pair);
    }
    worst.v_ratio = worst.v_ratio.max(v.max(v2) / vhat);
    // Lemma B.7 on its own (auto may pick B.1 when it is smaller, e.g. n = 2).
    if s.kernel_kind == KernelKind::Exponential && s.domain.dim() == 1 {
        let b7 = gpdp::privacy::bounds::lemma_b7(vhat, case.ridge, M_Y);
        assert!(dnorm <= b7 * (1.0 + 1e-9), "B.7 exceeded: {dnorm} > {b7} {case:?}");
        worst.b7_ratio = worst.b7_ratio.max(dnorm / b7);
    }

    let mut best = 0.0f64;
    for u in U_GRID {
        let am1 = u * bound.am1_max();
        let b = bound.epsilon_alpha(am1);
        let exact = neighbour_divergence(&kernel, &case.pair, case.ridge, case.scale, 1.0 + am1).unwrap();
        worst.checks += 1;
        assert!(
            exact <= b + 1e-9 * (1.0 + b),
            "UNSOUND {}: exact D_α = {exact} > bound {b} at α = {} for {case:?}",
            s.name,
            1.0 + am1
        );
        let ratio = if b > 0.0 { exact / b } else { 0.0 };
        if ratio > worst.ratio {
            worst.ratio = ratio;
            worst.ratio_case = format!(
                "α={:.6} n={n} ℓ={} r={:.4} σ={} {:?}",
                1.0 + am1,
                case.lengthscale,
                case.ridge,
                case.scale,
                case.pair
            );
        }
        best = best.max(ratio);

        // Dense cross-check on an explicit test set containing x, x' and
        // three random points (exponential kernels: well conditioned).
        if dense && s.kernel_kind == KernelKind::Exponential {
            let d = s.domain.dim();
            let mut rows = vec![case.pair.x.clone()];
            if case.pair.x2 != case.pair.x {
                rows.push(case.pair.x2.clone());
            }
            for _ in 0..3 {
                rows.push(point(rng, d));
            }
            let test = Points::from_rows(&rows).unwrap();
            let full = dense_divergence(&kernel, &case.pair, &test, case.ridge, case.scale, 0.0, 1.0 + am1).unwrap();
            assert!(full <= b + 1e-9 * (1.0 + b), "UNSOUND (dense) {}: {full} > {b} {case:?}", s.name);
            if exact.is_finite() && exact > 1e-6 {
                // Dense log-determinants of nearly equal, ill-conditioned matrices lose
                // digits: compare with a relative and a small absolute tolerance.
                assert!((full - exact).abs() <= 1e-6 * exact + 1e-9, "reduced {exact} vs dense {full} {case:?}");
            }
            worst.dense_checks += 1;

            // Proposition 2: the same pair with added GP noise η.
            if case.scale.is_finite() {
                let eta = case.scale * [0.3, 1.0][rng.random_range(0..2usize)];
                let mut p = release.params().clone();
                p.gp_noise = eta;
                let bn = p.check().unwrap();
                let am1n = u * bn.rdp_bound().am1_max();
                let bnv = bn.rdp_bound().epsilon_alpha(am1n);
                let full =
                    dense_divergence(&kernel, &case.pair, &test, case.ridge, case.scale, eta, 1.0 + am1n).unwrap();
                assert!(
                    full <= bnv + 1e-9 * (1.0 + bnv),
                    "UNSOUND (Prop. 2) {}: {full} > {bnv} η={eta} {case:?}",
                    s.name
                );
                if bnv > 0.0 {
                    worst.noise_ratio = worst.noise_ratio.max(full / bnv);
                }
                worst.dense_checks += 1;
            }
        }
    }
    best
}

/// Hill-climbing on covariates and responses to maximise exact/bound.
fn local_search(s: &Setup, start: Case, steps: usize, worst: &mut Worst, rng: &mut ChaCha8Rng) {
    let mut cur = start;
    let mut cur_val = check_case(s, &cur, worst, false, rng);
    for _ in 0..steps {
        let mut cand = cur.clone();
        let m = cand.pair.core_y.len();
        let step = 0.2 * rng.random::<f64>();
        let jiggle = |p: &[f64], rng: &mut ChaCha8Rng| -> Vec<f64> {
            p.iter().map(|v| (v + step * (rng.random::<f64>() - 0.5)).clamp(0.0, 1.0)).collect()
        };
        match rng.random_range(0..5usize) {
            0 => cand.pair.x = jiggle(&cand.pair.x, rng),
            1 => cand.pair.x2 = jiggle(&cand.pair.x2, rng),
            2 if m > 0 => {
                let i = rng.random_range(0..m);
                let mut rows: Vec<Vec<f64>> = cand.pair.core_x.iter().map(|r| r.to_vec()).collect();
                rows[i] = jiggle(&rows[i], rng);
                cand.pair.core_x = Points::from_rows(&rows).unwrap();
            }
            3 if m > 0 => {
                let i = rng.random_range(0..m);
                cand.pair.core_y[i] = -cand.pair.core_y[i];
            }
            _ => {
                cand.ridge *= (0.3 * (rng.random::<f64>() - 0.5)).exp();
                cand.ridge = cand.ridge.clamp(0.02, 20.0);
            }
        }
        let v = check_case(s, &cand, worst, false, rng);
        if v >= cur_val {
            cur = cand;
            cur_val = v;
        }
    }
}

fn run(cases_per_mode: usize, searches: usize, steps: usize, seed: u64) {
    for s in setups() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ s.name.len() as u64);
        let mut worst = Worst::default();
        let d = s.domain.dim();
        let mut starts: Vec<(f64, Case)> = Vec::new();
        for mode in 0..6 {
            for _ in 0..cases_per_mode {
                let c = random_case(&mut rng, d, mode);
                let r = check_case(&s, &c, &mut worst, true, &mut rng);
                starts.push((r, c));
            }
        }
        starts.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, c) in starts.into_iter().take(searches) {
            local_search(&s, c, steps, &mut worst, &mut rng);
        }
        eprintln!(
            "{:32} checks {:6} (dense {:5}): max exact/bound {:.4}; max ‖μ_D−μ_D'‖/Δ̂ {:.4} (vs B.7 alone {:.4}); max v/V̂ {:.4}; Prop. 2 max ratio {:.4}\n    worst at {}\n    worst Δ at {}",
            s.name,
            worst.checks,
            worst.dense_checks,
            worst.ratio,
            worst.delta_ratio,
            worst.b7_ratio,
            worst.v_ratio,
            worst.noise_ratio,
            worst.ratio_case,
            worst.delta_case
        );
        assert!(worst.ratio > 0.5, "{}: the search should find pairs close to the bound", s.name);
    }
}

#[test]
fn bound_dominates_exact_divergence() {
    run(150, 6, 250, 20261130);
}

#[test]
#[ignore = "long soundness run (minutes): cargo test --release -p gpdp --test soundness -- --ignored --nocapture"]
fn bound_dominates_exact_divergence_long() {
    run(1500, 20, 2000, 7);
}

/// Lemma B.4 is attained: for the constant kernel the RKHS norm of
/// μ_D − μ_D' (computed from the exact posteriors) with y = M_Y, y' = −M_Y
/// equals 2M_Y√(r²+n−1)/(r(r²+n)).
#[test]
fn lemma_b4_is_attained() {
    let kernel = Kernel::new(KernelKind::Constant, 1.0).unwrap();
    for (n, r) in [(2usize, 1.0f64), (5, 0.3), (12, 4.0)] {
        let core: Vec<f64> = (0..n - 1).map(|i| i as f64 / 10.0).collect();
        let core_y: Vec<f64> = (0..n - 1).map(|i| if i % 2 == 0 { 0.7 } else { -0.2 }).collect();
        let pair =
            NeighbourPair { core_x: Points::from_1d(&core), core_y, x: vec![0.5], y: M_Y, x2: vec![0.9], y2: -M_Y };
        let (d1, d2) = pair.datasets().unwrap();
        let q = Points::from_1d(&[0.3]);
        let g = gpdp::Posterior::fit(kernel, &d1, r).unwrap().mean(&q).unwrap()[0]
            - gpdp::Posterior::fit(kernel, &d2, r).unwrap().mean(&q).unwrap()[0];
        // H₋ of the constant kernel k₋ ≡ c holds constants with ‖g‖ = |g|/√c.
        let core_ds = gpdp::Dataset::new(Points::from_1d(&core), pair.core_y.clone()).unwrap();
        let c = gpdp::Posterior::fit(kernel, &core_ds, r).unwrap().variance(&q).unwrap()[0];
        let norm = g.abs() / c.sqrt();
        let b4 = gpdp::privacy::bounds::lemma_b4(n, r, M_Y).unwrap();
        assert!((norm - b4).abs() < 1e-12 * b4, "n={n} r={r}: {norm} vs {b4}");
        let (_, _, audit) = core_audit(&kernel, &pair, r).unwrap();
        assert!((audit - b4).abs() < 1e-9 * b4);
    }
}
