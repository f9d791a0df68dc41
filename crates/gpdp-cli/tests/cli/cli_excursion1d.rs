//! `gpdp excursion 1d` end to end on a tiny study: the output files, their
//! columns, the labels of the published constants, help text and errors.

use crate::common::gpdp;
use serde_json::Value;

/// A tiny study: 20 pairs, a 2 × 3 × 3 grid, one refinement round.
fn tiny(out: &std::path::Path, constants: &str) -> Vec<String> {
    [
        "excursion",
        "1d",
        "--noise",
        "0.3,0.5",
        "--n",
        "30",
        "--pairs",
        "20",
        "--validation-pairs",
        "10",
        "--draws-per-pair",
        "5",
        "--mesh-points",
        "100",
        "--lengthscales",
        "0.2,0.5",
        "--ridges",
        "0.5,2,5",
        "--scales",
        "0,0.1,1",
        "--rounds",
        "1",
        "--private-rounds",
        "1",
        "--sensitivity-constants",
        constants,
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

#[test]
fn tiny_study_writes_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ex1d");
    let res = gpdp().args(tiny(&out, "proven")).output().unwrap();
    assert!(res.status.success(), "{}", String::from_utf8_lossy(&res.stderr));
    for f in [
        "summary.md",
        "summary.csv",
        "selected.json",
        "pairs_n30_noise0.3.csv",
        "pairs_n30_noise0.5.csv",
        "search_n30_noise0.3.csv",
        "search_n30_noise0.5.csv",
    ] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains(
        "| M_ξ | NSR | ε, unconstrained | d_eff, unconstrained | d_eff, ε < 10 | relative BCE increase | \
         IoU, unconstrained | 1-path IoU mean, ε < 10 | 1-path IoU SD, ε < 10 | relative IoU gap |"
    ));
    assert!(md.contains("| 0.5 | 1.00 |") && md.contains("| 0.3 | 0.43 |"));
    assert!(md.contains("chosen on synthetic pairs"));
    assert!(!md.contains("not a proven guarantee"));
    // Per-pair rows for both θ.
    let pairs = std::fs::read_to_string(out.join("pairs_n30_noise0.5.csv")).unwrap();
    assert_eq!(pairs.lines().count(), 1 + 2 * 20);
    assert!(pairs.lines().next().unwrap().starts_with("pair,theta,lengthscale,ridge,scale,bce,d_eff,set_iou"));
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 3);
    // Every evaluated candidate, with ε; the private selection is feasible.
    let search = std::fs::read_to_string(out.join("search_n30_noise0.5.csv")).unwrap();
    assert!(search.lines().count() > 18);
    let v: Value = serde_json::from_slice(&std::fs::read(out.join("selected.json")).unwrap()).unwrap();
    assert_eq!(v["sensitivity_constants"], "proven");
    assert_eq!(v["studies"].as_array().unwrap().len(), 2);
    let eps = v["studies"][0]["private"]["epsilon"].as_f64().unwrap();
    assert!(eps < 10.0);
    // A second run into the same directory needs --force.
    let again = gpdp().args(tiny(&out, "proven")).output().unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
}

#[test]
fn published_constants_are_labelled_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pub");
    let res = gpdp().args(tiny(&out, "published")).output().unwrap();
    assert!(res.status.success(), "{}", String::from_utf8_lossy(&res.stderr));
    let label = "reproduces the published tables; not a proven guarantee";
    assert!(String::from_utf8_lossy(&res.stderr).contains(label));
    for f in ["summary.md", "summary.csv", "selected.json", "pairs_n30_noise0.5.csv", "search_n30_noise0.3.csv"] {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(text.contains(label), "{f} lacks the label");
    }
}

#[test]
fn help_explains_protocol_and_bad_input_is_one_line() {
    let help = gpdp().args(["excursion", "1d", "--help"]).output().unwrap();
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout).replace('\n', " ");
    assert!(text.contains("chosen on synthetic pairs"));
    assert!(text.contains("NOT a proven guarantee"));
    for flag in
        ["--noise", "--n ", "--pairs", "--validation-pairs", "--draws-per-pair", "--epsilon-max", "--conversion"]
    {
        assert!(text.contains(flag), "help lacks {flag}");
    }
    let dir = tempfile::tempdir().unwrap();
    for bad in [["--noise", "1.5"], ["--sensitivity-constants", "half"], ["--ridges", "-1"], ["--n", "x"]] {
        let out = gpdp()
            .args(["excursion", "1d", "--pairs", "2", "--out"])
            .arg(dir.path().join("bad"))
            .args(bad)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{bad:?}: {err}");
    }
}
