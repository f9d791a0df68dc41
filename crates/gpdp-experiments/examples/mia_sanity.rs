//! The sanity study of the membership-inference attack (issue 4): prints
//! ε (Lemma B.7, both conversions) and the attack's and the non-private
//! benchmark's success for three groups of configurations.
//!
//! Run: `cargo run --release -p gpdp-experiments --example mia_sanity [repeats]`

use std::time::Instant;

use gpdp::Conversion;
use gpdp_experiments::mia::{Design, MiaConfig, SweepRow, SweepSpec, release_privacy, sweep};

fn row(base: &MiaConfig, r: &SweepRow) {
    let paper = release_privacy(&MiaConfig {
        ridge: r.ridge,
        scale: r.scale,
        draws: r.draws,
        conversion: Conversion::Paper,
        ..base.clone()
    })
    .unwrap()
    .epsilon;
    let s = &r.summary;
    let np = &r.nonprivate_summary;
    println!(
        "| {:>5} | {:>5} | {:>4} | {:>9.3} | {:>9.3} | {:.3} ± {:.3} | {:+.3} ± {:.3} | {:+.4} ± {:.4} | {:.3} | {:+.3} |",
        r.ridge,
        r.scale,
        r.draws,
        r.epsilon,
        paper,
        s.auc.mean,
        s.auc.sd,
        s.levels[0].excess.mean,
        s.levels[0].excess.sd,
        s.levels[1].excess.mean,
        s.levels[1].excess.sd,
        np.auc.mean,
        np.levels[0].excess.mean,
    );
}

fn block(title: &str, base: &MiaConfig, spec: &SweepSpec) {
    println!("\n{title}\n");
    println!(
        "| r | σ | L | ε improved | ε paper | AUC | excess TPR@0.1 | excess TPR@0.01 | non-priv. AUC | non-priv. excess@0.1 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let t0 = Instant::now();
    for r in sweep(base, spec, &|_| {}).unwrap() {
        row(base, &r);
    }
    println!("\n({:.1} s)", t0.elapsed().as_secs_f64());
}

fn main() {
    let repeats: usize = std::env::args().nth(1).map(|a| a.parse().unwrap()).unwrap_or(5);
    let only_d = std::env::args().nth(2).as_deref() == Some("d");
    let base = MiaConfig { repeats, ..MiaConfig::default() };
    println!(
        "n = 10, ℓ = 1, δ = 0.05, 10 000 shadow + 10 000 eval per hypothesis, {repeats} repeats, mean ± sd (ddof 0)"
    );
    if only_d {
        block(
            "(d) the authors' stratified design, L = 1",
            &MiaConfig { design: Design::Stratified, ..base.clone() },
            &SweepSpec { ridges: vec![1.0, 1.5, 2.0], scales: vec![0.5, 1.0, 5.0], draws: ds(&[1]) },
        );
        return;
    }
    block(
        "(a) L = 1, configurations with single-digit ε",
        &base,
        &SweepSpec { ridges: vec![1.0, 1.5, 2.0, 4.0], scales: vec![0.5, 1.0, 2.5, 5.0], draws: ds(&[1]) },
    );
    block(
        "(b) small r, very large σ",
        &base,
        &SweepSpec { ridges: vec![0.05, 0.1], scales: vec![100.0], draws: ds(&[1, 3]) },
    );
    block(
        "(c) r = 1, σ = 5: composition over L",
        &base,
        &SweepSpec { ridges: vec![1.0], scales: vec![5.0], draws: ds(&[1, 2, 5, 10, 22, 46, 100]) },
    );
    block(
        "(d) the authors' stratified design, L = 1",
        &MiaConfig { design: Design::Stratified, ..base.clone() },
        &SweepSpec { ridges: vec![1.0, 1.5, 2.0], scales: vec![0.5, 1.0, 5.0], draws: ds(&[1]) },
    );
}

fn ds(l: &[u64]) -> Vec<gpdp::Draws> {
    l.iter().map(|&v| gpdp::Draws::new(v).unwrap()).collect()
}
