//! `gpdp ledger` and `release --ledger`: budgets composed and enforced,
//! crash safety under kill -9, concurrent releases.

use std::path::{Path, PathBuf};
use std::process::{Command as Std, Stdio};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("gpdp")
}

fn gpdp() -> Command {
    Command::new(bin())
}

const DATA: &str = "x,y\n0.1,0.5\n0.3,-0.2\n0.35,0.4\n0.6,0.9\n0.9,-1.0\n0.72,0.1\n";

fn release_args(data: &str, out: &str, ledger: &str, grid: &str) -> Vec<String> {
    [
        "release",
        "--response-bound",
        "1",
        "--data",
        data,
        "--kernel",
        "matern32",
        "--lengthscale",
        "0.3",
        "--domain",
        "box:0,1,0,1",
        "--scale",
        "1",
        "--ridge",
        "2",
        "--delta",
        "1e-5",
        "--grid",
        grid,
        "--out",
        out,
        "--ledger",
        ledger,
        "--dataset",
        "sensors",
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn data_2d(dir: &Path) -> String {
    let p = dir.join("d.csv");
    let mut s = String::from("x1,x2,y\n");
    for i in 0..6 {
        s.push_str(&format!("{},{},{}\n", 0.1 + 0.15 * i as f64, 0.9 - 0.13 * i as f64, (i as f64 * 0.7).sin()));
    }
    std::fs::write(&p, s).unwrap();
    p.to_str().unwrap().to_string()
}

/// ε of `draws` releases with these parameters composed (from `gpdp account
/// --draws`: L draws of one release compose exactly like L releases).
fn composed_epsilon(draws: u32) -> f64 {
    let o = gpdp()
        .args(["account", "--n", "6", "--kernel", "matern32", "--lengthscale", "0.3", "--domain", "box:0,1,0,1"])
        .args(["--scale", "1", "--ridge", "2", "--delta", "1e-5", "--json", "--draws", &draws.to_string()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["epsilon"].as_f64().unwrap()
}

fn show(ledger: &str) -> Value {
    let o = gpdp().args(["ledger", "show", "--ledger", ledger, "--json"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn budgets_are_composed_and_enforced() {
    let t = tempfile::tempdir().unwrap();
    let _ = DATA;
    let data = data_2d(t.path());
    let ledger = t.path().join("ledger.sqlite").to_str().unwrap().to_string();
    let (eps, two, three) = (composed_epsilon(1), composed_epsilon(2), composed_epsilon(3));
    assert!(two < 2.0 * eps, "composition at a common order beats adding: {two} vs 2 × {eps}");
    // Room for two releases composed, not three.
    let budget = format!("{}", 0.5 * (two + three));
    let o = gpdp()
        .args(["ledger", "init", "--ledger", &ledger, "--dataset", "sensors", "--epsilon", &budget])
        .args(["--delta", "1e-5"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for k in 0..2 {
        let out = t.path().join(format!("o{k}")).to_str().unwrap().to_string();
        let o = gpdp().args(release_args(&data, &out, &ledger, "10")).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let out = t.path().join("o2").to_str().unwrap().to_string();
    let o = gpdp().args(release_args(&data, &out, &ledger, "10")).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("would compose to") && err.contains("nothing was drawn"), "{err}");
    assert!(!Path::new(&out).exists());
    let v = show(&ledger);
    let rel = v[0]["releases"].as_array().unwrap();
    assert_eq!(rel.len(), 2);
    assert!(rel.iter().all(|e| e["status"] == "committed" && e["files_hash"].as_str().unwrap().len() == 64));
    let composed = rel[1]["composed_epsilon"].as_f64().unwrap();
    assert!((composed - two).abs() < 1e-9 * two, "{composed} vs {two}");
    // The ledger must stay out of the published folder; an unknown dataset is refused.
    let inside = t.path().join("o9");
    std::fs::create_dir_all(&inside).unwrap();
    let o = gpdp()
        .args(release_args(&data, inside.to_str().unwrap(), inside.join("l.sqlite").to_str().unwrap(), "10"))
        .arg("--force")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("inside the published folder"));
}

/// kill -9 at random moments during releases, then 4 concurrent releases:
/// every published folder is recorded (committed, or reserved if killed
/// after publishing but before the commit), and the composed guarantee never
/// exceeds the budget.
#[test]
#[cfg(unix)]
fn kill_nine_and_concurrency_never_lose_a_release_or_exceed_the_budget() {
    use rand::{RngExt, SeedableRng};
    let t = tempfile::tempdir().unwrap();
    let data = data_2d(t.path());
    let ledger = t.path().join("ledger.sqlite").to_str().unwrap().to_string();
    // Room for 12 releases composed: the 24 attempts below must run out of budget.
    let budget = composed_epsilon(12);
    gpdp()
        .args(["ledger", "init", "--ledger", &ledger, "--dataset", "sensors", "--epsilon", &budget.to_string()])
        .args(["--delta", "1e-5"])
        .assert()
        .success();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20261201);
    let mut killed = 0;
    for k in 0..20 {
        let out = t.path().join(format!("k{k}")).to_str().unwrap().to_string();
        let mut child = Std::new(bin())
            .args(release_args(&data, &out, &ledger, "40"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.random_range(0..120)));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            killed += 1;
        }
        let _ = child.wait();
    }
    // Four at once.
    let children: Vec<_> = (0..4)
        .map(|k| {
            let out = t.path().join(format!("c{k}")).to_str().unwrap().to_string();
            Std::new(bin())
                .args(release_args(&data, &out, &ledger, "15"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        let _ = c.wait();
    }
    let v = show(&ledger);
    let rel = v[0]["releases"].as_array().unwrap();
    let published: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("report.json").exists())
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    // Every published folder's release was reserved before it drew: there are at
    // least as many entries as published folders, and each committed entry's
    // folder exists.
    assert!(rel.len() >= published.len(), "{} entries for {} published folders", rel.len(), published.len());
    for e in rel.iter().filter(|e| e["status"] == "committed") {
        assert!(published.contains(&e["out"].as_str().unwrap().to_string()), "{e}");
    }
    for e in rel {
        assert!(e["composed_epsilon"].as_f64().unwrap() <= budget * (1.0 + 1e-12), "{e}");
    }
    eprintln!(
        "kill -9 trials: 20 ({killed} killed before finishing); ledger entries {} ({} committed), published folders {}",
        rel.len(),
        rel.iter().filter(|e| e["status"] == "committed").count(),
        published.len()
    );
}
