//! Accountant speed: one full ε(δ) evaluation including the optimisation
//! over α (the release's bounds precomputed, as in a sweep over δ or L), and
//! the same including validation and V̂/Δ̂ (as in `account --batch`).
//!
//! Run: `cargo bench -p gpdp --bench accountant`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpdp::{Conversion, Draws, Kernel, KernelKind, ReleaseParams};

fn cases() -> Vec<(&'static str, ReleaseParams, Draws, f64)> {
    let fig3 = ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, 5.0);
    let mut noisy = ReleaseParams::new(
        Kernel::new(KernelKind::Matern52, 0.5).unwrap(),
        "box:0,1,0,1".parse().unwrap(),
        1000,
        0.1,
        1.0,
    );
    noisy.gp_noise = 0.5;
    let cov_only =
        ReleaseParams::new(Kernel::exponential(0.5).unwrap(), "box:0,1,0,1".parse().unwrap(), 400, 5.0, f64::INFINITY);
    vec![
        ("fig3_exp1d_n10_L3", fig3, Draws::new(3).unwrap(), 0.05),
        ("matern52_2d_n1000_eta", noisy, Draws::ONE, 1e-5),
        ("exp2d_n400_sigma_inf", cov_only, Draws::new(10).unwrap(), 1e-5),
    ]
}

fn bench(c: &mut Criterion) {
    for (name, params, draws, delta) in cases() {
        let release = params.check().unwrap();
        for conv in [Conversion::Improved, Conversion::Paper] {
            c.bench_function(&format!("epsilon/{name}/{conv}"), |b| {
                b.iter(|| black_box(&release).epsilon(black_box(draws), black_box(delta), conv).unwrap().epsilon)
            });
        }
        c.bench_function(&format!("check+epsilon/{name}/improved"), |b| {
            b.iter(|| {
                let r = black_box(&params).check().unwrap();
                r.epsilon(draws, delta, Conversion::Improved).unwrap().epsilon
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
