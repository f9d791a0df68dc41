//! The change-one-response accountant against an independent numpy/scipy
//! evaluation (scripts/make_change_response_fixture.py: the closed form by
//! numpy's eigendecomposition, the Gaussian profile by scipy.stats.norm and
//! brentq): the certified distance μ and ε(δ) lie at or above the reference
//! and within 10⁻⁶ of it, with and without the covariates
//! (docs/proofs/change-response.md).

use gpdp::privacy::change_response::{mu_with_covariates, mu_without_covariates};
use gpdp::privacy::gaussian::epsilon_for_delta;
use gpdp::{Draws, Kernel, KernelKind, Points};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn covariates(case: &str) -> Points {
    let mut r = csv::Reader::from_path(format!("{DATA}/change_response_{case}.csv")).unwrap();
    let v: Vec<f64> = r
        .records()
        .flat_map(|rec| rec.unwrap().iter().map(|s| s.parse::<f64>().unwrap()).collect::<Vec<_>>())
        .collect();
    Points::new(v, 2).unwrap()
}

/// a ≥ b (up to 10⁻¹²) and a within `rel` of b.
fn above_and_close(what: &str, a: f64, b: f64, rel: f64) {
    assert!(a >= b * (1.0 - 1e-12), "{what}: {a} below the reference {b}");
    assert!(a <= b * (1.0 + rel), "{what}: {a} vs the reference {b}");
}

#[test]
fn the_accountant_matches_numpy_and_scipy() {
    let mut r = csv::Reader::from_path(format!("{DATA}/change_response.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    let mut cases = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let get = |k: &str| rec[head.iter().position(|h| h == k).unwrap()].to_string();
        let num = |k: &str| get(k).parse::<f64>().unwrap();
        let case = get("case");
        let kind: KernelKind = get("kernel").parse().unwrap();
        let kernel = Kernel::new(kind, num("lengthscale")).unwrap();
        let x = covariates(&case);
        assert_eq!(x.len(), num("covariates") as usize);
        let draws = Draws::new(num("draws") as u64).unwrap();
        let (m, ridge, scale, eta, delta) =
            (num("response_bound"), num("ridge"), num("scale"), num("gp_noise"), num("delta"));
        let (mu, _) = mu_with_covariates(&kernel, &x, m, ridge, scale, eta, draws).unwrap();
        let free = mu_without_covariates(m, ridge, scale, eta, draws).unwrap();
        above_and_close(&format!("{case}: μ"), mu, num("mu"), 1e-6);
        above_and_close(&format!("{case}: μ without covariates"), free, num("mu_free"), 1e-12);
        let eps = epsilon_for_delta(mu, delta).unwrap();
        let eps_free = epsilon_for_delta(free, delta).unwrap();
        eprintln!(
            "{case}: μ = {mu:.9} (numpy {}), ε = {eps:.9} (scipy {}); without covariates ε = {eps_free:.9}",
            get("mu"),
            get("epsilon")
        );
        above_and_close(&format!("{case}: ε"), eps, num("epsilon"), 1e-6);
        above_and_close(&format!("{case}: ε without covariates"), eps_free, num("epsilon_free"), 1e-6);
        if case == "sensors400" {
            // The acceptance: ≤ 1.32 with and without the covariates.
            assert!(eps <= 1.32 && eps_free <= 1.32, "{eps} {eps_free}");
        }
        cases += 1;
    }
    assert_eq!(cases, 3);
}
