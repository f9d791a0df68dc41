//! `gpdp plan` (hyperparameters and utility against ε on public/proxy data)
//! and `gpdp release --plan`.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn gpdp() -> Command {
    Command::cargo_bin("gpdp").unwrap()
}

/// 600 synthetic readings of a Matérn-3/2 field with ℓ = 500 m, σ = 6 and
/// noise sd 1.5 µg/m³ around 20 µg/m³ (scripts/make_pm25_proxy.py).
const PROXY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pm25_bng_proxy.csv");
const READINGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pm25_bng.csv");
const DOMAIN: &str = "box:500000,510000,180000,190000";

fn plan_args(out: &str) -> Vec<String> {
    [
        "plan",
        "--proxy",
        PROXY,
        "--x",
        "easting,northing",
        "--y",
        "pm25",
        "--response-range",
        "0,40",
        "--units",
        "µg/m³",
        "--domain",
        DOMAIN,
        "--n",
        "300",
        "--delta",
        "1e-5",
        "--epsilons",
        "1,10,100",
        "--threshold",
        "25",
        "--quiet",
        "--out",
        out,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Width and height of a PNG from its IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", path.display());
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
fn plan_recovers_the_proxy_fields_lengthscale_and_plots_utility_against_epsilon() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("plan");
    let o = gpdp().args(plan_args(out.to_str().unwrap())).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("PUBLIC/proxy data") && stderr.contains("Never give `plan` the private data"), "{stderr}");
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["plan.json", "utility.csv", "utility.png"]);
    let p = json(&out.join("plan.json"));
    assert!(p["note"].as_str().unwrap().contains("never the private data"));
    let h = &p["fit"]["hyper"];
    let ell = h["lengthscale"].as_f64().unwrap();
    assert!((ell / 500.0 - 1.0).abs() < 0.2, "ℓ = {ell} m (truth 500 m)");
    // σ and λ in the mechanism's units (the range 0..40 maps to ±1: ÷ 20).
    let (s, l) = (h["scale"].as_f64().unwrap() * 20.0, h["noise"].as_f64().unwrap() * 20.0);
    assert!((s / 6.0 - 1.0).abs() < 0.3 && (l / 1.5 - 1.0).abs() < 0.25, "σ = {s}, λ = {l} µg/m³");
    assert_eq!(p["fit"]["restarts"].as_array().unwrap().len(), 8);
    assert_eq!(p["release"]["n"], 300);
    assert_eq!(p["release"]["domain"], DOMAIN);
    let pts = p["utility"]["points"].as_array().unwrap();
    assert_eq!(pts.len(), 3);
    let f = |k: usize, a: &str, b: &str| pts[k][a][b].as_f64().unwrap();
    let g = |k: usize, a: &str| pts[k][a].as_f64().unwrap();
    for (k, target) in [1.0, 10.0, 100.0].into_iter().enumerate() {
        assert_eq!(g(k, "target_epsilon"), target);
        assert!(g(k, "epsilon") <= target * (1.0 + 1e-9), "{}", pts[k]);
    }
    // More ε: a smaller ridge and a better map.
    assert!(g(0, "ridge") > g(1, "ridge") && g(1, "ridge") > g(2, "ridge"));
    assert!(f(0, "holdout_rmse", "mean") > f(2, "holdout_rmse", "mean"), "{pts:?}");
    assert!(f(0, "excursion_iou", "mean") < f(2, "excursion_iou", "mean"), "{pts:?}");
    let base = p["utility"]["baseline_rmse"]["mean"].as_f64().unwrap();
    assert!(base < f(2, "holdout_rmse", "mean") && base > 1.0, "baseline {base}");
    let csv = std::fs::read_to_string(out.join("utility.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(csv.starts_with("target_epsilon,epsilon,ridge,"));
    assert_eq!(png_size(&out.join("utility.png")), (1240, 440));
}

#[test]
fn plan_refuses_what_it_cannot_plan_for_naming_it() {
    let t = tempfile::tempdir().unwrap();
    let o = gpdp().args(["plan", "--proxy", PROXY]).output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        e.contains("--domain") && e.contains("--delta") && e.contains("--out") && e.contains("e.g. gpdp plan"),
        "{e}"
    );
    // Proxy records outside the domain: named and counted, nothing written.
    let out = t.path().join("p1");
    let mut a = plan_args(out.to_str().unwrap());
    let i = a.iter().position(|s| s == DOMAIN).unwrap();
    a[i] = "box:500000,505000,180000,190000".into();
    let o = gpdp().args(&a).output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("proxy records lie outside the domain"), "{e}");
    assert!(!out.exists());
    // Bad targets.
    let mut a = plan_args(out.to_str().unwrap());
    let i = a.iter().position(|s| s == "1,10,100").unwrap();
    a[i] = "1,-2".into();
    let o = gpdp().args(&a).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("--epsilons"), "{}", String::from_utf8_lossy(&o.stderr));
    // An existing output is refused before anything is read.
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep"), "x").unwrap();
    let o = gpdp().args(plan_args(out.to_str().unwrap())).output().unwrap();
    assert!(!o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("plan: reading"));
    assert_eq!(std::fs::read_to_string(out.join("keep")).unwrap(), "x");
}

#[test]
fn release_takes_the_plans_hyperparameters_and_its_ridge_floor() {
    let t = tempfile::tempdir().unwrap();
    let planned = t.path().join("plan");
    let mut a = plan_args(planned.to_str().unwrap());
    a.extend(["--reps", "1", "--restarts", "2", "--grid", "10"].map(String::from));
    let o = gpdp().args(&a).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan_json = planned.join("plan.json");
    let p = json(&plan_json);
    let release = |eps: &str, out: &Path, extra: &[&str]| {
        gpdp()
            .args(["release", "--plan", plan_json.to_str().unwrap(), "--data", READINGS, "--x", "easting,northing"])
            .args(["--y", "pm25", "--target-epsilon", eps, "--delta", "1e-5", "--grid", "30", "--snap", "grid"])
            .args(["--seed", "4", "--quiet", "--out", out.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap()
    };
    // ε = 1: the calibrated ridge (above the fitted λ/σ).
    let o1 = t.path().join("r1");
    let o = release("1", &o1, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("took kernel matern32"));
    let r = json(&o1.join("report.json"));
    let c = &r["privacy"]["components"][0];
    assert_eq!(c["lengthscale"], p["fit"]["hyper"]["lengthscale"]);
    assert_eq!(c["scale"], p["fit"]["hyper"]["scale"]);
    assert_eq!(r["data_policy"]["units"], "µg/m³");
    assert_eq!(r["data_policy"]["response_range"]["hi"], 40.0);
    assert!((r["privacy"]["epsilon"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    assert!(c["ridge"].as_f64().unwrap() > p["fitted_ridge"].as_f64().unwrap());
    // ε = 10⁶: the calibrated ridge would be below the fitted one, which is
    // used instead — a smaller ε than the target.
    let o2 = t.path().join("r2");
    let o = release("1e6", &o2, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = json(&o2.join("report.json"));
    assert_eq!(r["privacy"]["components"][0]["ridge"], p["fitted_ridge"]);
    assert!(r["privacy"]["epsilon"].as_f64().unwrap() < 1e6);
    // A flag that contradicts the plan is refused.
    let o = release("1", &t.path().join("r3"), &["--kernel", "exponential"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("contradicts the plan"), "{e}");
    let o = release("1", &t.path().join("r4"), &["--response-range", "0,60"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("differs from the plan"));
    assert!(!t.path().join("r3").exists() && !t.path().join("r4").exists());
}
