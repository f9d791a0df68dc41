//! `gpdp posterior` against scikit-learn's GaussianProcessRegressor
//! (fixture crates/gpdp/tests/data/sklearn_posterior.csv, generated once by
//! scripts/make_sklearn_fixture.py with scikit-learn 1.9.1): mean and
//! variance agree to 1e-8 for every case.

use std::collections::BTreeMap;

use assert_cmd::Command;

#[derive(Default)]
struct Case {
    kernel: String,
    lengthscale: String,
    ridge: String,
    dim: usize,
    train: Vec<(Vec<String>, String)>,
    query: Vec<(Vec<String>, f64, f64)>,
}

fn load() -> BTreeMap<String, Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../gpdp/tests/data/sklearn_posterior.csv");
    let mut rdr = csv::Reader::from_path(path).unwrap();
    let mut cases: BTreeMap<String, Case> = BTreeMap::new();
    for rec in rdr.records() {
        let r = rec.unwrap();
        let c = cases.entry(r[0].to_string()).or_default();
        c.kernel = r[1].to_string();
        c.lengthscale = r[2].to_string();
        c.ridge = r[3].to_string();
        let x: Vec<String> = [&r[5], &r[6]].iter().filter(|s| !s.is_empty()).map(|s| s.to_string()).collect();
        c.dim = x.len();
        if &r[4] == "train" {
            c.train.push((x, r[7].to_string()));
        } else {
            c.query.push((x, r[8].parse().unwrap(), r[9].parse().unwrap()));
        }
    }
    cases
}

#[test]
fn posterior_matches_scikit_learn() {
    let dir = tempfile::tempdir().unwrap();
    let cases = load();
    assert!(cases.len() >= 10);
    let mut worst: f64 = 0.0;
    for (name, c) in &cases {
        let names: Vec<String> =
            if c.dim == 1 { vec!["x".into()] } else { (1..=c.dim).map(|j| format!("x{j}")).collect() };
        let train = dir.path().join(format!("{name}-train.csv"));
        let query = dir.path().join(format!("{name}-query.csv"));
        let mut t = format!("{},y\n", names.join(","));
        for (x, y) in &c.train {
            t += &format!("{},{y}\n", x.join(","));
        }
        std::fs::write(&train, t).unwrap();
        let mut q = format!("{}\n", names.join(","));
        for (x, _, _) in &c.query {
            q += &format!("{}\n", x.join(","));
        }
        std::fs::write(&query, q).unwrap();
        let out = Command::cargo_bin("gpdp")
            .unwrap()
            .args([
                "posterior",
                "--data",
                train.to_str().unwrap(),
                "--at",
                query.to_str().unwrap(),
                "--kernel",
                &c.kernel,
                "--lengthscale",
                &c.lengthscale,
                "--ridge",
                &c.ridge,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let mut rdr = csv::Reader::from_reader(out.stdout.as_slice());
        let h: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(h[h.len() - 2..], ["mean", "variance"]);
        for (rec, (_, m, v)) in rdr.records().zip(&c.query) {
            let rec = rec.unwrap();
            let gm: f64 = rec[h.len() - 2].parse().unwrap();
            let gv: f64 = rec[h.len() - 1].parse().unwrap();
            let e = (gm - m).abs().max((gv - v).abs());
            worst = worst.max(e);
            assert!(e < 1e-8, "{name}: mean {gm} vs {m}, variance {gv} vs {v}");
        }
    }
    eprintln!("largest |gpdp − scikit-learn| over {} cases: {worst:e}", cases.len());
}

#[test]
fn posterior_reports_bad_files_by_row() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.csv");
    std::fs::write(&q, "x\n0.5\n").unwrap();
    let run = |body: &str| {
        let d = dir.path().join("d.csv");
        std::fs::write(&d, body).unwrap();
        let out = Command::cargo_bin("gpdp")
            .unwrap()
            .args([
                "posterior",
                "--data",
                d.to_str().unwrap(),
                "--at",
                q.to_str().unwrap(),
                "--kernel",
                "exponential",
                "--ridge",
                "1",
            ])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        err
    };
    assert!(run("x,y\n0.1,0.2\n0.3\n").contains("row 2 (line 3): 1 fields"));
    assert!(run("x,y\n0.1,0.2\n0.3,abc\n").contains("row 2 (line 3), column y: 'abc' is not a number"));
    assert!(run("x,y\n0.1,NaN\n").contains("row 1 (line 2), column y: NaN is not finite"));
    assert!(run("x,y\n0.1,inf\n").contains("not finite"));
    assert!(run("").contains("empty"));
    assert!(run("x,y\n").contains("no data rows"));
    assert!(run("z,y\n1,2\n").contains("no covariate columns"));
    assert!(run("x\n1\n").contains("no 'y' column"));
}
