//! `gpdp mia`, `gpdp mia sweep` and `gpdp figure bounds` end to end, at
//! small sizes.

use crate::common::gpdp;
use std::path::Path;

use serde_json::Value;

#[test]
fn mia_json_has_the_documented_shape() {
    let o = gpdp()
        .args([
            "mia",
            "--ridge",
            "0.1",
            "--scale",
            "0.5",
            "--draws",
            "3",
            "--shadow",
            "400",
            "--eval",
            "400",
            "--repeats",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for part in [&v, &v["nonprivate"]] {
        assert!(part["auc"]["mean"].is_f64() && part["auc"]["sd"].is_f64());
        for l in ["0.1", "0.01"] {
            assert!(part["tpr"][l]["mean"].is_f64());
            let e = part["excess_tpr"][l]["mean"].as_f64().unwrap();
            let t = part["tpr"][l]["mean"].as_f64().unwrap();
            assert!((t - e - l.parse::<f64>().unwrap()).abs() < 1e-12);
        }
    }
    // Small r, small σ, L = 3: a strong attack and a huge ε.
    assert!(v["auc"]["mean"].as_f64().unwrap() > 0.8);
    assert!(v["epsilon"].as_f64().unwrap() > 1000.0);
    // The non-private benchmark is at least as strong.
    assert!(v["nonprivate"]["auc"]["mean"].as_f64().unwrap() >= v["auc"]["mean"].as_f64().unwrap() - 0.02);
}

#[test]
fn mia_out_and_sweep_write_their_files() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("one");
    let o = gpdp()
        .args(["mia", "--shadow", "300", "--eval", "300", "--repeats", "1", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["roc.csv", "shadow_histograms.png", "result.json"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let roc = std::fs::read_to_string(out.join("roc.csv")).unwrap();
    assert!(roc.starts_with("attack,fpr,tpr\n") && roc.contains("nonprivate,"));
    let sw = t.path().join("sweep");
    let o = gpdp()
        .args([
            "mia",
            "sweep",
            "--ridge",
            "0.2,1",
            "--scale",
            "1,inf",
            "--draws",
            "1,2",
            "--shadow",
            "300",
            "--eval",
            "300",
            "--repeats",
            "1",
            "--out",
            sw.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "results.csv",
        "sweep.json",
        "fig2_attack_vs_epsilon_L1.png",
        "fig2_epsilon_vs_ridge.png",
        "fig3_vs_draws_r1_sigma1.png",
    ] {
        assert!(sw.join(f).exists(), "{f}");
    }
    let csv = std::fs::read_to_string(sw.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4); // 2 ridges × 1 finite σ × 2 draws
    assert!(Path::new(&sw).join("sweep.json").exists());
}

#[test]
fn mia_bad_input_is_one_line() {
    for (args, needle) in [
        (vec!["mia", "--n", "1"], "n"),
        (vec!["mia", "--scale", "inf"], "--scale <SCALE>': 'inf' is not a finite number"),
        (vec!["mia", "--ridge", "-1"], "ridge"),
        (vec!["mia", "--draws", "0"], "draws"),
        (vec!["mia", "--x0", "2"], "x"),
        (vec!["mia", "sweep", "--scale", "inf"], "finite σ"),
    ] {
        let o = gpdp().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn figure_bounds_writes_png_and_csv() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("fig1");
    let run = |bound: &str, dir: &std::path::Path| {
        let o = gpdp()
            .args(["figure", "bounds", "--resolution", "25", "--bound", bound, "--out", dir.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(dir.join("bounds.csv")).unwrap()
    };
    let csv = run("paper", &out);
    // The tight bound (the default) is below the paper's everywhere.
    let tight = run("tight", &t.path().join("fig1-tight"));
    for (p, t) in csv.lines().skip(1).zip(tight.lines().skip(1)) {
        let p: Vec<f64> = p.split(',').map(|v| v.parse().unwrap()).collect();
        let t: Vec<f64> = t.split(',').map(|v| v.parse().unwrap()).collect();
        assert_eq!(&p[..2], &t[..2]);
        for col in 2..5 {
            assert!(t[col] <= p[col] * (1.0 + 1e-12), "col {col}: tight {} > paper {}", t[col], p[col]);
        }
    }
    assert_eq!(csv.lines().count(), 1 + 25 * 25);
    assert!(out.join("bounds.png").exists());
    // Spot check rows against the paper's closed forms (Prop. 3 with κ² = 0.1,
    // Lemmas B.1 and B.8 with ‖f*‖ = 3, Theorem 3.1, the paper's conversion at
    // δ = 5e-4), minimised over a dense grid of orders: the figure's ε can
    // only be at or slightly below the grid minimum.
    for line in [1, 300, 625] {
        let row: Vec<f64> = csv.lines().nth(line).unwrap().split(',').map(|v| v.parse().unwrap()).collect();
        let (r, s) = (row[0], row[1]);
        let q = r * r;
        let v = 1.0 - 0.1 * 999.0 / (999.0 + q);
        let phi = if v >= q { 0.25 / q } else { v / ((v + q) * (v + q)) };
        let b1 = 2.0 * (1.0 + 999f64.sqrt() / r) * phi.sqrt();
        let b8 = 2.0 * 3.0 * v / (q + v);
        let eps = |dn: f64| {
            (1..100_000)
                .map(|i| q / v * i as f64 / 100_000.0)
                .map(|am1| {
                    2.0 * gpdp::privacy::psi(am1, v / q)
                        + (1.0 + am1) * (v + q) * dn * dn / (2.0 * s * s * (q - am1 * v))
                        + (1.0 / 5e-4f64).ln() / am1
                })
                .fold(f64::INFINITY, f64::min)
        };
        for (col, dn) in [(2, b1), (3, b8)] {
            let want = eps(dn);
            assert!(
                row[col] <= want * (1.0 + 1e-9) && row[col] >= want * (1.0 - 1e-3),
                "row {line} col {col}: {} vs {want}",
                row[col]
            );
        }
    }
}
