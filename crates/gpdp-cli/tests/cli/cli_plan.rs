//! `gpdp plan` (hyperparameters and utility against ε on public/proxy data)
//! and `gpdp release --plan`.

use crate::common::gpdp;
use std::path::Path;

use serde_json::Value;

/// 600 synthetic readings of a Matérn-3/2 field with ℓ = 500 m, σ = 6 and
/// noise sd 1.5 µg/m³ around 20 µg/m³ (scripts/make_pm25_proxy.py).
const PROXY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/last-year.csv");
const READINGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/readings.csv");
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
    // σ and λ in data units (plan version 5), as the release spec stores σ.
    let (s, l) = (h["scale"].as_f64().unwrap(), h["noise"].as_f64().unwrap());
    assert_eq!(p["release"]["spec"]["scale"], h["scale"]);
    assert_eq!(p["release"]["response_bound"], 20.0);
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

/// A quick plan (few restarts, one repetition, a coarse grid) into `out`.
fn quick_plan(proxy: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut a = plan_args(out.to_str().unwrap());
    let i = a.iter().position(|s| s == PROXY).unwrap();
    a[i] = proxy.to_string();
    a.extend(["--reps", "1", "--restarts", "2", "--grid", "10"].map(String::from));
    // A flag of `extra` replaces the default's (e.g. --threshold).
    for f in extra.iter().filter(|f| f.starts_with("--")) {
        if let Some(i) = a.iter().position(|s| s == f) {
            a.drain(i..i + 2);
        }
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    gpdp().args(&a).output().unwrap()
}

/// Issue 22, item 2: a plan fitted on the private data would publish that data's
/// maximum-likelihood hyperparameters under a DP statement that does not cover them. plan.json
/// records the proxy's SHA-256; `release --plan` refuses a data file with the same bytes, warns
/// on the same path, and the report says where the hyperparameters came from.
#[test]
fn a_plan_fitted_on_the_data_being_released_is_refused() {
    let t = tempfile::tempdir().unwrap();
    // The "private" readings used as the proxy (a copy, so that its path can be rewritten).
    let private = t.path().join("priv.csv");
    std::fs::copy(READINGS, &private).unwrap();
    let planned = t.path().join("plan");
    let o = quick_plan(private.to_str().unwrap(), &planned, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p = json(&planned.join("plan.json"));
    let want = {
        use sha2::Digest;
        sha2::Sha256::digest(std::fs::read(&private).unwrap()).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    assert_eq!(p["proxy_sha256"], want.as_str());
    assert_eq!(p["version"], 5);
    assert_eq!(p["release"]["spec"]["kernel"], p["fit"]["kernel"], "plan.json stores the release spec: {p}");
    let release = |data: &Path, out: &Path| {
        gpdp()
            .args(["release", "--plan", planned.join("plan.json").to_str().unwrap(), "--data", data.to_str().unwrap()])
            .args(["--x", "easting,northing", "--y", "pm25", "--target-epsilon", "10", "--delta", "1e-5"])
            .args(["--grid", "12", "--snap", "grid", "--seed", "1", "--quiet", "--out", out.to_str().unwrap()])
            .output()
            .unwrap()
    };
    // The same bytes (here under another name, too): refused, nothing written.
    let copy = t.path().join("same-bytes.csv");
    std::fs::copy(&private, &copy).unwrap();
    for data in [&private, &copy] {
        let out = t.path().join("refused");
        let o = release(data, &out);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{e}");
        assert!(e.contains("same SHA-256") && e.contains(&want), "{e}");
        assert!(!out.exists());
    }
    // Issue 38 item 5: a row-permuted copy with CRLF line endings and reformatted numbers has
    // other bytes but the same records: refused, naming how many are shared (stderr only).
    let text = std::fs::read_to_string(&private).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let header = lines.remove(0);
    lines.reverse();
    let mut reformatted = format!("{header}\r\n");
    for l in &lines {
        let f: Vec<&str> = l.split(',').collect();
        // Every numeric field written with a trailing zero ("17.5" → "17.50", "3" → "3.0").
        let g: Vec<String> = f
            .iter()
            .map(|v| match v.parse::<f64>() {
                Ok(_) if v.contains('.') || v.contains('e') => format!("{v}0").replace("e0", "e"),
                Ok(_) => format!("{v}.0"),
                Err(_) => v.to_string(),
            })
            .collect();
        reformatted.push_str(&g.join(","));
        reformatted.push_str("\r\n");
    }
    let shuffled = t.path().join("shuffled.csv");
    std::fs::write(&shuffled, &reformatted).unwrap();
    let n = lines.len();
    let out = t.path().join("refused2");
    let o = release(&shuffled, &out);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains(&format!("{n} of the {n} records of --data")) && e.contains("as parsed numbers"), "{e}");
    assert!(!out.exists());
    // The plan's file, changed since to other records: released, with a warning on stderr.
    std::fs::copy(PROXY, &private).unwrap();
    let out = t.path().join("warned");
    let o = release(&private, &out);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert!(e.contains("is the file the plan was fitted on") && !e.contains("also records of the plan's proxy"), "{e}");
    // Other data: released, and the report names the plan and its proxy's hash.
    let out = t.path().join("ok");
    let o = release(Path::new(PROXY), &out);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert!(!e.contains("fitted on"), "{e}");
    let r = json(&out.join("report.json"));
    let src = &r["hyperparameter_source"];
    assert_eq!(src["source"], "plan");
    assert_eq!(src["proxy_sha256"], want.as_str());
    assert!(src["plan"].as_str().unwrap().ends_with("plan.json"));
    // Without --plan the report says the hyperparameters were stated.
    let out = t.path().join("stated");
    let o = gpdp()
        .args(["release", "--data", READINGS, "--x", "easting,northing", "--y", "pm25", "--response-range", "0,40"])
        .args(["--kernel", "matern32", "--lengthscale", "500", "--domain", DOMAIN, "--scale", "0.3"])
        .args(["--target-epsilon", "10", "--delta", "1e-5", "--grid", "12", "--snap", "grid", "--seed", "1"])
        .args(["--quiet", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&out.join("report.json"))["hyperparameter_source"]["source"], "stated");
}

/// Issue 22, item 15: the response scale is a required public choice for `plan` and `release`
/// (a default M_Y = 1 clipped every reading in µg/m³ and published a flat map); and item 10:
/// `plan --response-bound` −1 panicked, 0 and 1e-300 gave unclear errors.
#[test]
fn the_response_scale_must_be_given_and_be_a_usable_bound() {
    let t = tempfile::tempdir().unwrap();
    let mut a = plan_args(t.path().join("p").to_str().unwrap());
    let i = a.iter().position(|s| s == "--response-range").unwrap();
    a.drain(i..i + 2);
    let o = gpdp().args(&a).output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("--response-range LO,HI") && e.contains("--response-bound M_Y"), "{e}");
    for bad in ["-1", "0", "inf", "nan"] {
        let mut b = a.clone();
        b.push(format!("--response-bound={bad}"));
        let o = gpdp().args(&b).output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        // Refused by the flag's parser (exit 2) or by plan (exit 1); never a panic (101).
        assert!(matches!(o.status.code(), Some(1 | 2)), "{bad}: {e}");
        assert!(!e.contains("panicked"), "{bad}: {e}");
        assert!(e.contains(&format!("--response-bound {bad}")) || e.contains("--response-bound"), "{bad}: {e}");
        assert!(e.contains("must be a finite number > 0") || e.contains("invalid value"), "{bad}: {e}");
    }
    // A bound far below the data's scale clips every proxy response: said so, before any fit.
    let mut b = a.clone();
    b.push("--response-bound=1e-300".into());
    let o = gpdp().args(&b).output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("every one of the 600 proxy responses lies outside"), "{e}");
    assert!(!e.contains("Cholesky"), "{e}");
    // release: refused with both flags named, before the data are read.
    let o = gpdp()
        .args(["release", "--data", READINGS, "--x", "easting,northing", "--y", "pm25", "--kernel", "matern32"])
        .args(["--lengthscale", "500", "--domain", DOMAIN, "--scale", "0.3", "--ridge", "1", "--delta", "1e-5"])
        .args(["--grid", "12", "--out", t.path().join("r").to_str().unwrap()])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("--response-range LO,HI") && e.contains("--response-bound M_Y"), "{e}");
    assert!(!t.path().join("r").exists());
}

/// Issue 22, item 12 (plan): a large proxy was simulated on in full — a 10⁶-row proxy failed
/// only after 21 s. The simulation now runs on a seeded subset (--max-sim-points), and a
/// simulation that cannot fit is refused before the fit.
#[test]
fn a_large_proxy_is_simulated_on_a_bounded_subset() {
    let t = tempfile::tempdir().unwrap();
    // 30 000 rows: the proxy's 600 readings repeated with shifted positions.
    let text = std::fs::read_to_string(PROXY).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let cols: Vec<&str> = header.split(',').collect();
    let (ie, iy) =
        (cols.iter().position(|c| *c == "easting").unwrap(), cols.iter().position(|c| *c == "pm25").unwrap());
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(String::from).collect()).collect();
    let mut big = String::from("easting,northing,pm25\n");
    let inorth = cols.iter().position(|c| *c == "northing").unwrap();
    for k in 0..50 {
        for r in &rows {
            let e: f64 = r[ie].parse().unwrap();
            let e = 500000.0 + (e - 500000.0 + 3.0 * k as f64).rem_euclid(10000.0);
            big.push_str(&format!("{e},{},{}\n", r[inorth], r[iy]));
        }
    }
    let proxy = t.path().join("big.csv");
    std::fs::write(&proxy, big).unwrap();
    // A simulation on all 30 000 records (2 × 30000² doubles: 13 GiB) is refused before the fit.
    let o2 = {
        let mut a = plan_args(t.path().join("p2").to_str().unwrap());
        let i = a.iter().position(|s| s == PROXY).unwrap();
        a[i] = proxy.to_str().unwrap().to_string();
        a.extend(["--reps", "1", "--restarts", "2", "--grid", "10", "--max-sim-points", "30000"].map(String::from));
        gpdp().env("GPDP_MEMORY_LIMIT", "2G").args(&a).output().unwrap()
    };
    let e2 = String::from_utf8_lossy(&o2.stderr);
    assert!(!o2.status.success() && e2.contains("the utility simulation needs"), "{e2}");
    assert!(!e2.contains("fitting"), "refused before the fit: {e2}");
    // The default: a subset of 2000 records, which completes.
    let start = std::time::Instant::now();
    let out = t.path().join("p3");
    let o = {
        let mut a = plan_args(out.to_str().unwrap());
        let i = a.iter().position(|s| s == PROXY).unwrap();
        a[i] = proxy.to_str().unwrap().to_string();
        a.extend(["--reps", "1", "--restarts", "2", "--grid", "10"].map(String::from));
        gpdp().env("GPDP_MEMORY_LIMIT", "2G").args(&a).output().unwrap()
    };
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert!(e.contains("simulating the private map on a seeded random subset of 2000 of the 30000"), "{e}");
    let p = json(&out.join("plan.json"));
    assert_eq!(p["proxy_records"], 30000);
    assert_eq!(
        p["utility"]["train_records"].as_u64().unwrap() + p["utility"]["holdout_records"].as_u64().unwrap(),
        2000
    );
    eprintln!("plan on a 30 000-row proxy: {:.1} s", start.elapsed().as_secs_f64());
}

/// `gpdp plan --relation change-response`: plan.json's spec carries the
/// relation, the output names it and that L = 1 is optimal for a map, and at
/// every target ε the change-response release needs a smaller ridge than the
/// replace-one one (the same ε buys a better map).
#[test]
fn plan_for_change_response_needs_less_ridge_at_every_epsilon() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("r1"), t.path().join("cr"));
    let o = quick_plan(PROXY, &a, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = quick_plan(PROXY, &b, &["--relation", "change-response"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("change-one-response") && text.contains("L = 1 draw is optimal"), "{text}");
    let (p1, p2) = (json(&a.join("plan.json")), json(&b.join("plan.json")));
    assert_eq!(p2["release"]["spec"]["relation"], "change-response");
    assert!(p1["release"]["spec"].get("relation").is_none());
    let (u1, u2) = (p1["utility"]["points"].as_array().unwrap(), p2["utility"]["points"].as_array().unwrap());
    for (x, y) in u1.iter().zip(u2) {
        let (r1, r2) = (x["ridge"].as_f64().unwrap(), y["ridge"].as_f64().unwrap());
        let fitted = y["ridge_is_fitted"].as_bool().unwrap();
        assert!(r2 < r1 || (fitted && r2 <= r1), "ε = {}: ridge {r2} vs replace-one {r1}", x["target_epsilon"]);
        assert!(y["epsilon"].as_f64().unwrap() <= y["target_epsilon"].as_f64().unwrap());
    }
    // Issue 38 item 3: a release under another relation than its plan's is refused,
    // naming the flag, before anything is written or reserved.
    let release = |plan: &Path, out: &Path, extra: &[&str]| {
        let ledger = t.path().join("budget.sqlite");
        gpdp()
            .args(["release", "--plan", plan.join("plan.json").to_str().unwrap(), "--data", READINGS])
            .args(["--x", "easting,northing", "--y", "pm25", "--target-epsilon", "1", "--delta", "1e-5"])
            .args(["--grid", "10", "--snap", "grid", "--seed", "1", "--quiet", "--out", out.to_str().unwrap()])
            .args(["--ledger", ledger.to_str().unwrap(), "--dataset", "pm25"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = gpdp()
        .args(["ledger", "init", "--ledger", t.path().join("budget.sqlite").to_str().unwrap()])
        .args(["--dataset", "pm25", "--epsilon", "10", "--delta", "1e-5"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (plan, extra, wanted) in [
        (&b, &[][..], "--relation change-response"),
        (&a, &["--relation", "change-response"][..], "--relation replace-one"),
    ] {
        let out = t.path().join("refused");
        let o = release(plan, &out, extra);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && e.contains("the plan was made for") && e.contains(wanted), "{e}");
        assert!(!out.exists());
    }
    let o =
        gpdp().args(["ledger", "show", "--ledger", t.path().join("budget.sqlite").to_str().unwrap()]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 release"), "{}", String::from_utf8_lossy(&o.stdout));
    // With the plan's relation it is released.
    let o = release(&b, &t.path().join("ok"), &["--relation", "change-response"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Issue 26 (plan) and 38 item 4: a range whose middle is far from the proxy's median is
/// warned about with a centred range to use; the constant-map baseline is printed, stored
/// and plotted; a private map no better than it is warned about, as is a threshold the
/// private map never reaches; the smallest ε within the stated fraction is printed.
#[test]
fn plan_says_when_the_map_is_not_worth_publishing() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("wide");
    let mut a = plan_args(out.to_str().unwrap());
    let i = a.iter().position(|s| s == "0,40").unwrap();
    a[i] = "0,80".into();
    let i = a.iter().position(|s| s == "1,10,100").unwrap();
    a[i] = "1,3".into();
    a.extend(["--reps", "2", "--restarts", "2", "--grid", "12"].map(String::from));
    let o = gpdp().args(&a).output().unwrap();
    let (so, se) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{se}");
    // The proxy's median is 20.82 µg/m³; the range's middle 40.
    assert!(se.contains("median response 20.8200 µg/m³ is far from the middle of the response range [0, 80]"), "{se}");
    assert!(se.contains("--response-range 0.0000,41.6400"), "{se}");
    let p = json(&out.join("plan.json"));
    let c = p["utility"]["constant_rmse"]["mean"].as_f64().unwrap();
    // The constant map's RMSE is about the proxy's sd (6.26 µg/m³).
    assert!((5.0..7.5).contains(&c), "{c}");
    assert!(so.contains(&format!("constant map (the training mean everywhere): RMSE {c:.4}")), "{so}");
    let pts = p["utility"]["points"].as_array().unwrap();
    let useless: Vec<f64> = pts
        .iter()
        .filter(|q| q["holdout_rmse"]["mean"].as_f64().unwrap() >= c)
        .map(|q| q["epsilon"].as_f64().unwrap())
        .collect();
    assert_eq!(p["assessment"]["no_better_than_constant"].as_array().unwrap().len(), useless.len());
    assert!(!useless.is_empty(), "with the range 0,80 at ε ≤ 3 the map should be no better than flat: {p}");
    assert!(se.contains("no better than a constant map's"), "{se}");
    assert!(so.contains("within 10% of non-private: RMSE from"), "{so}");
    let csv = std::fs::read_to_string(out.join("utility.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",constant_rmse_mean,constant_iou_mean"), "{csv}");

    // A threshold above every value: the proxy's own map never reaches it.
    let high = t.path().join("high");
    let o = quick_plan(PROXY, &high, &["--threshold", "90"]);
    let se = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{se}");
    assert!(se.contains("never reaches the threshold t = 90"), "{se}");
}

/// Issue 26 (coordinates) and 40 item 2: `release --plan` takes the plan's threshold, δ and
/// CRS (writing paths.tif and report.json's crs), and refuses a contradicting --crs.
#[test]
fn release_takes_the_plans_threshold_delta_and_crs() {
    let t = tempfile::tempdir().unwrap();
    let planned = t.path().join("plan");
    let o = quick_plan(PROXY, &planned, &["--crs", "EPSG:27700", "--threshold", "22"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&planned.join("plan.json"))["release"]["crs"], "EPSG:27700");
    let plan = planned.join("plan.json");
    let release = |out: &Path, extra: &[&str]| {
        gpdp()
            .args(["release", "--plan", plan.to_str().unwrap(), "--data", READINGS])
            .args(["--x", "easting,northing", "--y", "pm25", "--target-epsilon", "10"])
            .args(["--grid", "12", "--snap", "grid", "--seed", "1", "--quiet", "--out", out.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = t.path().join("r");
    let o = release(&out, &[]);
    let se = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{se}");
    assert!(se.contains("threshold t = 22") && se.contains("CRS EPSG:27700") && se.contains("δ = 0.00001"), "{se}");
    let r = json(&out.join("report.json"));
    assert_eq!(r["threshold"], 22.0);
    assert_eq!(r["crs"]["code"], "EPSG:27700");
    assert_eq!(r["privacy"]["delta"], 1e-5);
    assert!(out.join("paths.tif").exists());
    let gj = json(&out.join("excursion.geojson"));
    assert_eq!(gj["features"][0]["properties"]["threshold"], 22.0, "{gj}");
    assert_eq!(gj["features"][0]["properties"]["units"], "µg/m³", "{gj}");
    // Another CRS contradicts the plan's: refused, nothing written.
    let bad = t.path().join("bad");
    let o = release(&bad, &["--crs", "EPSG:32630"]);
    let se = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && se.contains("contradicts the plan's CRS EPSG:27700"), "{se}");
    assert!(!bad.exists());
}

/// Issue 40: a version-4 plan.json with a response range (σ in the range's half-widths) is
/// converted when `release --plan` reads it: the release is the one of the flags with σ in data
/// units (20 times the stored σ for the range 0..40), the same ε and the same seeded paths.
#[test]
fn a_version_4_plan_releases_what_its_sigma_in_data_units_releases() {
    let t = tempfile::tempdir().unwrap();
    let v4 = concat!(env!("CARGO_MANIFEST_DIR"), "/../gpdp/tests/data/plan-v4-range.json");
    let p = json(Path::new(v4));
    assert_eq!(p["version"], 4);
    let spec = &p["release"]["spec"];
    let sigma = spec["scale"].as_f64().unwrap() * 20.0;
    let common = ["--data", READINGS, "--x", "easting,northing", "--y", "pm25", "--target-epsilon", "3"];
    let tail = ["--delta", "1e-5", "--grid", "12x8", "--seed", "5", "--quiet", "--out"];
    let planned =
        gpdp().args(["release", "--plan", v4]).args(common).args(tail).arg(t.path().join("planned")).output().unwrap();
    assert!(planned.status.success(), "{}", String::from_utf8_lossy(&planned.stderr));
    let flags = gpdp()
        .arg("release")
        .args(common)
        .args(["--kernel", "matern32", "--lengthscale", &spec["lengthscale"].to_string(), "--domain", DOMAIN])
        .args(["--scale", &sigma.to_string(), "--ridge-floor", &spec["ridge_floor"].to_string()])
        .args(["--response-range", "0,40", "--units", "µg/m³"])
        .args(tail)
        .arg(t.path().join("flags"))
        .output()
        .unwrap();
    assert!(flags.status.success(), "{}", String::from_utf8_lossy(&flags.stderr));
    let (a, b) = (json(&t.path().join("planned/report.json")), json(&t.path().join("flags/report.json")));
    assert_eq!(a["privacy"]["epsilon"], b["privacy"]["epsilon"]);
    assert_eq!(a["calibration"], b["calibration"]);
    assert_eq!(a["data_policy"]["scale_meaning"], b["data_policy"]["scale_meaning"]);
    let paths = |d: &str| std::fs::read_to_string(t.path().join(d).join("paths.csv")).unwrap();
    assert_eq!(paths("planned"), paths("flags"));
}
