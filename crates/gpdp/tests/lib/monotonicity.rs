//! Property tests: the *optimised* ε(δ) is monotone in every knob — it
//! decreases with r, η and δ, with σ when η = 0, and increases with L — and
//! the inverse δ(ε) is consistent with it. (With η > 0, ε is not monotone in
//! σ: a larger σ makes the released covariance σ²k_D + η²k more
//! data-dependent, τ̃ grows; `calibrate --solve scale` refuses that case.)

use gpdp::{Conversion, Kernel, KernelKind, ReleaseParams};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{FileFailurePersistence, RngSeed, TestRunner};

/// The seed of every property test here, so that CI runs the same 200 cases
/// each time and cannot fail at random. `PROPTEST_RNG_SEED=<u64>` explores
/// other cases; a failing case is written to
/// `tests/monotonicity.proptest-regressions` (commit it) and replayed first.
const SEED: u64 = 0x6770_6470_2026;

fn config() -> ProptestConfig {
    let mut config = ProptestConfig::with_cases(200);
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(SEED);
    }
    config.failure_persistence = Some(Box::new(FileFailurePersistence::SourceParallel("proptest-regressions")));
    config
}

#[allow(clippy::too_many_arguments)] // a test helper mirroring the flags
fn eps(kind: KernelKind, dom: &str, n: usize, r: f64, s: f64, eta: f64, l: u64, delta: f64, conv: Conversion) -> f64 {
    let mut p = ReleaseParams::new(Kernel::new(kind, 0.5).unwrap(), dom.parse().unwrap(), n, r, s);
    p.gp_noise = eta;
    p.check().unwrap().epsilon(gpdp::Draws::new(l).unwrap(), delta, conv).unwrap().epsilon
}

fn kernel_domain() -> impl Strategy<Value = (KernelKind, &'static str)> {
    prop_oneof![
        Just((KernelKind::Exponential, "interval:0,1")),
        Just((KernelKind::Exponential, "box:0,1,0,1")),
        Just((KernelKind::Matern32, "box:0,1,0,1")),
        Just((KernelKind::SquaredExponential, "interval:0,2")),
        Just((KernelKind::Constant, "interval:0,1")),
        Just((KernelKind::Diagonal, "box:0,1,0,1")),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn epsilon_is_monotone(
        (kind, dom) in kernel_domain(),
        n in 2usize..2000,
        log_r in -1.5f64..1.3,
        log_s in -1.0f64..1.5,
        eta in prop_oneof![Just(0.0), 0.1f64..3.0],
        l in 1u64..50,
        log_delta in -12.0f64..-1.0,
        paper in any::<bool>(),
        bump in 1.01f64..3.0,
    ) {
        let conv = if paper { Conversion::Paper } else { Conversion::Improved };
        let (r, s, delta) = (10f64.powf(log_r), 10f64.powf(log_s), 10f64.powf(log_delta));
        let e0 = eps(kind, dom, n, r, s, eta, l, delta, conv);
        let tol = 1e-9 * (1.0 + e0);
        prop_assert!(eps(kind, dom, n, r * bump, s, eta, l, delta, conv) <= e0 + tol, "ridge");
        if eta == 0.0 {
            prop_assert!(eps(kind, dom, n, r, s * bump, eta, l, delta, conv) <= e0 + tol, "scale");
            prop_assert!(eps(kind, dom, n, r, f64::INFINITY, eta, l, delta, conv) <= e0 + tol, "σ = ∞");
        }
        prop_assert!(eps(kind, dom, n, r, s, eta * bump + 0.1, l, delta, conv) <= e0 + tol, "GP noise");
        prop_assert!(eps(kind, dom, n, r, s, eta, l + 1, delta, conv) >= e0 - tol, "draws");
        prop_assert!(eps(kind, dom, n, r, s, eta, l, delta * bump.min(1.0 / delta - 1e-9), conv) <= e0 + tol, "δ");
        if conv == Conversion::Paper || e0 > 0.0 {
            prop_assert!(eps(kind, dom, n, r, s, eta, l, delta, Conversion::Improved) <= eps(kind, dom, n, r, s, eta, l, delta, Conversion::Paper) + tol);
        }
    }

    #[test]
    fn inverse_is_consistent(
        log_r in -1.0f64..1.0,
        log_s in -0.5f64..1.0,
        l in 1u64..20,
        log_delta in -10.0f64..-1.5,
    ) {
        let (r, s, delta) = (10f64.powf(log_r), 10f64.powf(log_s), 10f64.powf(log_delta));
        let rel = ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 100, r, s).check().unwrap();
        for conv in [Conversion::Paper, Conversion::Improved] {
            let e = rel.epsilon(gpdp::Draws::new(l).unwrap(), delta, conv).unwrap();
            prop_assume!(!e.epsilon_clamped_at_zero);
            let d = rel.delta(gpdp::Draws::new(l).unwrap(), e.epsilon, conv).unwrap();
            // δ(ε(δ)) ≤ δ (up to the optimiser's tolerance on α).
            prop_assert!(d.delta <= delta * (1.0 + 1e-6), "{conv}: δ(ε(δ)) = {} > {delta}", d.delta);
        }
    }
}

/// Two runners with [`config`] draw the same cases: the suite is
/// deterministic (with proptest's default random seed this fails).
#[test]
fn property_tests_are_seeded() {
    if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
        return; // an explicit exploration seed was asked for
    }
    let strategy = (0u64..u64::MAX, -12.0f64..-1.0);
    let draw = || {
        let mut runner = TestRunner::new(config());
        (0..50).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect::<Vec<_>>()
    };
    let (first, second) = (draw(), draw());
    assert_eq!(first, second);
    assert!(first.windows(2).any(|w| w[0] != w[1]), "the cases must vary");
}
