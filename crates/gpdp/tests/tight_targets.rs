//! The tight accountant on the settings of issue 10's acceptance table:
//! at most the proven target (× 1.005), and the paper's bound unchanged.
//! The targets come from an independent computation of the same bounds
//! (docs/proofs/tight-accountant.md); the paper's values are the accountant's
//! before issue 10.

use gpdp::{BoundChoice, Conversion, Draws, Kernel, ReleaseParams};

fn epsilon(p: &ReleaseParams, bound: BoundChoice, draws: u64, delta: f64) -> f64 {
    let mut p = p.clone();
    p.bound = bound;
    p.check().unwrap().epsilon(Draws::new(draws).unwrap(), delta, Conversion::Improved).unwrap().epsilon
}

#[test]
fn tight_bound_meets_the_proven_targets_and_paper_bound_is_unchanged() {
    // 1-D exponential, ℓ = 1, n = 10, r = 1, δ = 0.05.
    let one_d =
        |scale| ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, scale);
    // (σ, L, paper's value, proven target)
    let cases = [
        (5.0, 1, 3.968, 3.662),
        (5.0, 3, 6.598, 5.969),
        (5.0, 10, 13.10, 11.71),
        (5.0, 100, 67.37, 59.99),
        (f64::INFINITY, 1, 2.973, 2.469),
        (f64::INFINITY, 10, 9.302, 7.372),
    ];
    for (scale, draws, paper, target) in cases {
        let p = one_d(scale);
        let tight = epsilon(&p, BoundChoice::Tight, draws, 0.05);
        let old = epsilon(&p, BoundChoice::Paper, draws, 0.05);
        assert!(tight <= target * 1.005, "1-D σ={scale} L={draws}: tight {tight} > {target} × 1.005");
        assert!((old - paper).abs() <= 5e-4 * paper, "1-D σ={scale} L={draws}: paper's bound {old} vs {paper}");
    }
    // 2-D exponential on [0,1]², ℓ = 0.14, n = 400, r = 5.706286, δ = 400^−1.1, Lemma B.1 family.
    let delta = 400f64.powf(-1.1);
    for (scale, paper, target) in [(0.12, 10.00, 4.125), (f64::INFINITY, 0.1195, 0.1035)] {
        let p = ReleaseParams::new(
            Kernel::exponential(0.14).unwrap(),
            "box:0,1,0,1".parse().unwrap(),
            400,
            5.706286,
            scale,
        );
        let tight = epsilon(&p, BoundChoice::Tight, 1, delta);
        let old = epsilon(&p, BoundChoice::Paper, 1, delta);
        assert!(tight <= target * 1.005, "2-D σ={scale}: tight {tight} > {target} × 1.005");
        assert!((old - paper).abs() <= 5e-4 * paper, "2-D σ={scale}: paper's bound {old} vs {paper}");
    }
}
