//! Reading plans across versions: a version-4 plan.json with a response
//! range (σ, η and the fit in the range's half-widths) is converted on
//! reading to data units, and the release it plans is the same mechanism.

use gpdp::plan::{PLAN_VERSION, Plan};
use gpdp::{Domain, Kernel, MechanismParams, ReleaseParams, ResponseScale};

const V4_RANGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/plan-v4-range.json");

#[test]
fn a_version_4_plan_with_a_range_is_converted_to_data_units() {
    let bytes = std::fs::read(V4_RANGE).unwrap();
    let old: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let plan = Plan::from_json(&bytes, "plan-v4-range.json").unwrap();
    assert_eq!(plan.version, PLAN_VERSION);
    // The range [0, 40]: half-width 20.
    let h = 20.0;
    let sigma_old = old["release"]["spec"]["scale"].as_f64().unwrap();
    let fitted = plan.release.spec.scale.unwrap();
    assert!((fitted - h * sigma_old).abs() <= 1e-12 * fitted, "{fitted} vs {}", h * sigma_old);
    assert!((plan.fit.hyper.noise - h * old["fit"]["hyper"]["noise"].as_f64().unwrap()).abs() < 1e-12);
    assert_eq!(plan.bounds.scale, (0.01 * h, 10.0 * h));
    assert_eq!(plan.release.response_bound, h);
    // The ridge λ/σ is unitless; the log likelihood moves by −records·ln h.
    let ridge_old = old["fit"]["hyper"]["noise"].as_f64().unwrap() / old["fit"]["hyper"]["scale"].as_f64().unwrap();
    assert!((plan.fit.hyper.ridge() - ridge_old).abs() < 1e-12);
    let lml_old = old["fit"]["log_marginal_likelihood"].as_f64().unwrap();
    let records = old["fit"]["records"].as_f64().unwrap();
    assert!((plan.fit.log_marginal_likelihood - (lml_old - records * h.ln())).abs() < 1e-9);
    // Reading it twice converts once.
    let again = Plan::from_json(&serde_json::to_vec(&plan).unwrap(), "again").unwrap();
    assert_eq!(again, plan);

    // The planned release is the mechanism the old plan described: with a
    // ridge of 1, its ε equals that of σ_old on responses mapped onto [−1, 1].
    let mut spec = plan.release.spec.clone();
    spec.ridge = Some(1.0);
    spec.ridge_floor = None;
    let n = plan.release.n;
    let new = spec.mechanism(n).unwrap();
    let domain: Domain = old["release"]["spec"]["domain"].as_str().unwrap().parse().unwrap();
    let ell = old["release"]["spec"]["lengthscale"].as_f64().unwrap();
    let model = ReleaseParams::new(Kernel::new(spec.kernel, ell).unwrap(), domain, n, 1.0, sigma_old);
    let then = MechanismParams::new(model, spec.delta, ResponseScale::Bound(1.0)).check().unwrap();
    let (a, b) = (new.privacy().epsilon, then.privacy().epsilon);
    assert!((a - b).abs() <= 1e-9 * b, "ε {a} vs {b}");
}

#[test]
fn a_file_that_is_not_a_plan_is_refused_naming_it() {
    let e = Plan::from_json(b"{\"version\": 4}", "p.json").unwrap_err().to_string();
    assert!(e.contains("p.json is not a plan.json"), "{e}");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(V4_RANGE).unwrap()).unwrap();
    v["version"] = 99.into();
    let e = Plan::from_json(&serde_json::to_vec(&v).unwrap(), "p.json").unwrap_err().to_string();
    assert!(e.contains("plan version 99"), "{e}");
}
