//! `gpdp excursion 2d` end to end at a tiny size.

use assert_cmd::Command;

#[test]
fn tiny_2d_study_writes_tables_and_figures() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("ex2d");
    for constants in ["proven", "published"] {
        let o = Command::cargo_bin("gpdp")
            .unwrap()
            .args([
                "excursion",
                "2d",
                "--noise",
                "0.5",
                "--n",
                "60",
                "--search-worlds",
                "3",
                "--validation-worlds",
                "3",
                "--eval-worlds",
                "4",
                "--eval-grid",
                "16",
                "--search-grid",
                "12",
                "--path-grid",
                "12",
                "--paths-per-world",
                "4",
                "--rounds",
                "1",
                "--sensitivity-constants",
                constants,
                "--out",
                out.to_str().unwrap(),
                "--force",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for f in [
            "summary.md",
            "summary.csv",
            "worlds_noise0.5.csv",
            "search_private_noise0.5.csv",
            "search_unconstrained_noise0.5.csv",
            "selected_noise0.5.json",
            "figure_noise0.5.png",
        ] {
            assert!(out.join(f).exists(), "{f}");
        }
        let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
        assert_eq!(md.contains("not a proven guarantee"), constants == "published", "{md}");
        let sel: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("selected_noise0.5.json")).unwrap()).unwrap();
        assert!(sel["private"]["epsilon"].as_f64().unwrap() < 10.0);
        assert_eq!(std::fs::read_to_string(out.join("worlds_noise0.5.csv")).unwrap().lines().count(), 5);
    }
}
