//! End-to-end checks of the membership-inference pipeline.

use std::time::Instant;

use gpdp::Draws;
use gpdp_experiments::mia::{Design, MiaConfig, SweepSpec, run_mia, sweep};

fn small() -> MiaConfig {
    MiaConfig { n_shadow: 1000, n_eval: 1000, repeats: 2, seed: 42, ..MiaConfig::default() }
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

#[test]
fn same_seed_same_result_with_one_and_two_threads() {
    let cfg = MiaConfig { design: Design::Stratified, repeats: 1, ..small() };
    let a = in_pool(1, || run_mia(&cfg, &|_| {}).unwrap());
    let b = in_pool(2, || run_mia(&cfg, &|_| {}).unwrap());
    assert_eq!(a, b);
    let c = in_pool(2, || run_mia(&MiaConfig { seed: 43, ..cfg.clone() }, &|_| {}).unwrap());
    assert_ne!(a.summary, c.summary);
}

#[test]
fn result_shape_and_sanity() {
    let cfg = small();
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let r = run_mia(&cfg, &|k| {
        calls.fetch_add(k, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(calls.into_inner(), cfg.repeats);
    assert_eq!(r.repeats.len(), 2);
    assert_eq!(r.summary.levels.len(), 2);
    assert_eq!(r.first.shadow_in.len(), cfg.n_shadow);
    assert_eq!(r.first.fhat_curve.grid.len(), cfg.curve_points);
    assert!(r.first.logvhat_curve.is_some());
    let roc = &r.first.roc;
    assert_eq!((roc.fpr[0], roc.tpr[0]), (0.0, 0.0));
    assert_eq!((*roc.fpr.last().unwrap(), *roc.tpr.last().unwrap()), (1.0, 1.0));
    // r = 0.1, σ = 0.5, L = 3: a strong attack, ε huge (Lemma B.7).
    assert!(r.summary.auc.mean > 0.9, "{:?}", r.summary);
    assert!(r.privacy.epsilon > 1e3);
    assert_eq!(r.privacy.components[0].sensitivity_source.label(), "B.7");
    // The benchmark is at least as strong as the release (up to noise).
    assert!(r.nonprivate_summary.auc.mean > r.summary.auc.mean - 0.02);
    // L = 1: no variance statistic.
    let r1 = run_mia(&MiaConfig { draws: Draws::ONE, repeats: 1, ..cfg }, &|_| {}).unwrap();
    assert!(r1.first.logvhat_curve.is_none() && r1.repeats[0].logvhat_in.is_none());
}

#[test]
fn sweep_rows_and_validation() {
    let base = MiaConfig { n_shadow: 300, n_eval: 300, repeats: 1, ..MiaConfig::default() };
    let spec = SweepSpec { ridges: vec![0.5, 1.0], scales: vec![2.0], draws: vec![Draws::ONE, Draws::new(4).unwrap()] };
    let rows = sweep(&base, &spec, &|_| {}).unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!((rows[1].ridge, rows[1].draws), (0.5, Draws::new(4).unwrap()));
    // ε grows with L, sub-linearly; shrinks with r.
    assert!(rows[1].epsilon > rows[0].epsilon && rows[1].epsilon < 4.0 * rows[0].epsilon);
    assert!(rows[2].epsilon < rows[0].epsilon);
    // Same r → same datasets → same non-private benchmark.
    assert_eq!(rows[0].nonprivate_summary, rows[1].nonprivate_summary);
    // σ = ∞ in a sweep is refused before anything runs.
    let bad = SweepSpec { scales: vec![1.0, f64::INFINITY], ..spec };
    assert!(sweep(&base, &bad, &|_| panic!("must not run")).is_err());
}

/// The acceptance timing: n = 10, ℓ = 1, r = 0.1, σ = 0.5, L = 3,
/// 10 000 shadow + 10 000 evaluation datasets per hypothesis, one seed.
/// Run: `cargo test --release --workspace --test experiments -- mia_pipeline:: --ignored --nocapture`
#[test]
#[ignore]
fn timing_acceptance() {
    let cfg = MiaConfig { repeats: 1, ..MiaConfig::default() };
    for _ in 0..3 {
        let t0 = Instant::now();
        let r = run_mia(&cfg, &|_| {}).unwrap();
        let dt = t0.elapsed();
        let rep = &r.repeats[0];
        eprintln!(
            "wall {:.3} s | AUC {:.4} TPR@0.1 {:.4} TPR@0.01 {:.4} | ε {:.4e} | fit evals in/out {} {} | nonprivate TPR@0.1 {:.4}",
            dt.as_secs_f64(),
            rep.private.auc,
            rep.private.at[0].tpr,
            rep.private.at[1].tpr,
            r.privacy.epsilon,
            rep.fhat_in.evaluations,
            rep.fhat_out.evaluations,
            rep.nonprivate.at[0].tpr,
        );
        eprintln!("  in  {:?}\n  out {:?}", rep.fhat_in, rep.fhat_out);
        let np = &rep.nonprivate_models;
        eprintln!(
            "  EM iterations: logvhat {:?} {:?}; mu {} {}; logv {} {}",
            rep.logvhat_in.map(|g| g.iterations),
            rep.logvhat_out.map(|g| g.iterations),
            np.mu_in.iterations,
            np.mu_out.iterations,
            np.logv_in.iterations,
            np.logv_out.iterations
        );
    }
}

#[test]
fn epsilon_of_the_release() {
    use gpdp::{Conversion, Domain, Kernel, Lemma, ReleaseParams, SensitivityChoice};
    let cfg = MiaConfig {
        ridge: 1.0,
        scale: 5.0,
        draws: Draws::new(3).unwrap(),
        conversion: Conversion::Paper,
        ..MiaConfig::default()
    };
    let got = gpdp_experiments::mia::release_privacy(&cfg).unwrap();
    let mut p =
        ReleaseParams::new(Kernel::exponential(1.0).unwrap(), Domain::interval(0.0, 1.0).unwrap(), 10, 1.0, 5.0);
    p.sensitivity = SensitivityChoice::Lemma(Lemma::B7);
    let want = p.check().unwrap().epsilon(Draws::new(3).unwrap(), 0.05, Conversion::Paper).unwrap();
    assert_eq!(got, want);
    // σ = ∞: the accountant gives the covariance-only ε, the attack refuses.
    let inf = MiaConfig { scale: f64::INFINITY, ..cfg };
    let e_inf = gpdp_experiments::mia::release_privacy(&inf).unwrap();
    assert!(e_inf.epsilon.is_finite() && e_inf.epsilon < got.epsilon);
    assert!(run_mia(&inf, &|_| panic!("must not run")).is_err());
}
