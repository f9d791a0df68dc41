//! Membership-inference speed: the acceptance configuration end to end
//! (n = 10, ℓ = 1, r = 0.1, σ = 0.5, L = 3, 10 000 shadow + 10 000
//! evaluation datasets per hypothesis, one repetition), and its parts —
//! simulating 10 000 datasets, one latent-mixture fit and one
//! Gaussian-mixture fit on 10 000 values.
//!
//! Run: `cargo bench -p gpdp-experiments --bench mia`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use gpdp_experiments::mia::data::{Stream, repeat_key};
use gpdp_experiments::mia::gmm::{EmOptions, Gmm2};
use gpdp_experiments::mia::stats::simulate;
use gpdp_experiments::mia::{FitOptions, MiaConfig, fit_latent, run_mia};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn bench(c: &mut Criterion) {
    let cfg = MiaConfig { repeats: 1, ..MiaConfig::default() };
    let key = repeat_key(0, 0);
    let shadow_out = simulate(&cfg, &key, Stream::ShadowOut, 10_000);

    let mut g = c.benchmark_group("mia");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("run_mia_acceptance_10k", |b| b.iter(|| black_box(run_mia(&cfg, &|_| {}).unwrap())));
    g.bench_function("simulate_10k_datasets", |b| b.iter(|| black_box(simulate(&cfg, &key, Stream::ShadowIn, 10_000))));
    g.bench_function("fit_latent_10k", |b| {
        b.iter(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            black_box(fit_latent(&shadow_out.fhat, &FitOptions::default(), &mut rng).unwrap())
        })
    });
    let lv = shadow_out.log_vhat.clone().unwrap();
    g.bench_function("fit_gmm_10k", |b| b.iter(|| black_box(Gmm2::fit(&lv, &EmOptions::default()).unwrap())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
