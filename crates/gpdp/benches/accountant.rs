//! Accountant speed: one full ε(δ) evaluation including the optimisation
//! over α (the release's bounds precomputed, as in a sweep over δ or L), and
//! the same including validation and V̂/Δ̂ (as in `account --batch`), for the
//! tight bound (the default) and the paper's; and the PLD accounting
//! (`--conversion pld`) of covariance-only releases.
//!
//! Run: `cargo bench -p gpdp --bench accountant`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpdp::{BoundChoice, Conversion, Draws, Kernel, KernelKind, ReleaseParams};

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
    let plume =
        ReleaseParams::new(Kernel::exponential(0.14).unwrap(), "box:0,1,0,1".parse().unwrap(), 400, 5.706286, 0.12);
    vec![
        ("fig3_exp1d_n10_L3", fig3, Draws::new(3).unwrap(), 0.05),
        ("plume_exp2d_n400", plume, Draws::ONE, 400f64.powf(-1.1)),
        ("matern52_2d_n1000_eta", noisy, Draws::ONE, 1e-5),
        ("exp2d_n400_sigma_inf", cov_only, Draws::new(10).unwrap(), 1e-5),
    ]
}

fn bench(c: &mut Criterion) {
    for (name, base, draws, delta) in cases() {
        for bound in [BoundChoice::Tight, BoundChoice::Paper] {
            let params = ReleaseParams { bound, ..base.clone() };
            let release = params.check().unwrap();
            for conv in [Conversion::Improved, Conversion::Paper] {
                c.bench_function(&format!("epsilon/{name}/{bound}/{conv}"), |b| {
                    b.iter(|| black_box(&release).epsilon(black_box(draws), black_box(delta), conv).unwrap().epsilon)
                });
            }
            c.bench_function(&format!("check+epsilon/{name}/{bound}/improved"), |b| {
                b.iter(|| {
                    let r = black_box(&params).check().unwrap();
                    r.epsilon(draws, delta, Conversion::Improved).unwrap().epsilon
                })
            });
        }
    }
}

/// ε(δ) by the PLD accountant (σ = ∞): the Figure 3 setting with L = 1, 3,
/// 10, and the 2-D covariance-only case above.
fn bench_pld(c: &mut Criterion) {
    let fig3 =
        ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), 10, 1.0, f64::INFINITY);
    let release = fig3.check().unwrap();
    for l in [1, 3, 10] {
        for delta in [0.05, 1e-5] {
            let draws = Draws::new(l).unwrap();
            c.bench_function(&format!("pld/fig3_exp1d_n10_sigma_inf_L{l}/delta{delta:e}"), |b| {
                b.iter(|| {
                    black_box(&release)
                        .epsilon(black_box(draws), black_box(delta), gpdp::Accounting::Pld)
                        .unwrap()
                        .epsilon
                })
            });
        }
    }
    for (name, base, draws, delta) in cases().into_iter().filter(|c| c.1.scale.is_infinite()) {
        let release = base.check().unwrap();
        c.bench_function(&format!("pld/{name}"), |b| {
            b.iter(|| {
                black_box(&release).epsilon(black_box(draws), black_box(delta), gpdp::Accounting::Pld).unwrap().epsilon
            })
        });
    }
}

criterion_group!(benches, bench, bench_pld);
criterion_main!(benches);
