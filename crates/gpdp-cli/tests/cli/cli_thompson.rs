//! `gpdp thompson`: the private loop on the shipped fixture
//! (examples/thompson/), its published folder, budget and errors.

use std::path::{Path, PathBuf};

use crate::common::gpdp;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fixture's loop: 12 private trials, 101 candidate doses, `rounds`
/// rounds calibrated to ε ≤ 2 at δ = 10⁻⁵.
fn fixture(out: &Path, rounds: usize) -> assert_cmd::Command {
    let objective = format!("sh {}", repo().join("examples/thompson/objective.sh").display());
    fixture_with(out, rounds, &objective)
}

/// [`fixture`] with another objective command.
fn fixture_with(out: &Path, rounds: usize, objective: &str) -> assert_cmd::Command {
    let ex = repo().join("examples/thompson");
    let mut c = gpdp();
    c.args(["thompson", "--data"])
        .arg(ex.join("trials.csv"))
        .args(["--x", "dose", "--y", "response", "--response-range", "0,1", "--kernel", "matern52"])
        .args(["--lengthscale", "0.2", "--domain", "interval:0,1", "--scale", "0.3", "--target-epsilon", "2"])
        .args(["--delta", "1e-5", "--grid", "101", "--rounds", &rounds.to_string(), "--objective", objective])
        .arg("--out")
        .arg(out);
    c
}

fn csv_rows(p: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(p).unwrap().lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect()
}

#[test]
fn the_fixture_loop_prints_each_round_and_publishes_the_choices_with_the_composed_guarantee() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ts");
    let run = fixture(&out, 6).args(["--seed", "4", "--json"]).assert().success();
    let stdout = String::from_utf8(run.get_output().stdout.clone()).unwrap();
    let stderr = String::from_utf8(run.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("NOT a private loop"), "{stderr}");
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("round ")).collect();
    assert_eq!(lines.len(), 6, "{stdout}");
    let rows = csv_rows(&out.join("choices.csv"));
    assert_eq!(rows.len(), 6);
    let mut last = 0.0;
    for (i, (line, row)) in lines.iter().zip(&rows).enumerate() {
        // round, proposal, dose, records, epsilon_so_far
        assert_eq!(row[0], (i + 1).to_string());
        assert_eq!(row[3], (12 + i).to_string(), "records of round {}", i + 1);
        let eps: f64 = row[4].parse().unwrap();
        assert!(eps > last, "ε must grow: {eps} after {last}");
        last = eps;
        assert!(
            line.contains(&format!("chose ({})", row[2])) && line.contains(&format!("ε = {eps:.4}")),
            "{line} vs {row:?}"
        );
        let dose: f64 = row[2].parse().unwrap();
        assert!((0.0..=1.0).contains(&dose) && (dose * 100.0 - (dose * 100.0).round()).abs() < 1e-9, "{dose}");
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let json_start = stdout.find('{').unwrap();
    let printed: serde_json::Value = serde_json::from_str(&stdout[json_start..]).unwrap();
    assert_eq!(report, printed);
    assert_eq!(report["private"], false);
    assert_eq!(report["guarantee"]["rounds"], 6);
    let eps = report["guarantee"]["epsilon"].as_f64().unwrap();
    assert_eq!(eps, last);
    // The ridge was calibrated for the 6 planned rounds: ε ≤ 2 and close to it.
    assert!(eps <= 2.0 && eps > 1.9, "{eps}");
    // The published folder holds the choices and the report only.
    let mut files: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert_eq!(files, ["choices.csv", "report.json"]);
    // Same seed, same settings: the same choices, byte for byte.
    let again = dir.path().join("again");
    fixture(&again, 6).args(["--seed", "4"]).assert().success();
    assert_eq!(std::fs::read(out.join("choices.csv")).unwrap(), std::fs::read(again.join("choices.csv")).unwrap());
    // Unseeded: a private loop.
    let private = dir.path().join("private");
    fixture(&private, 2).assert().success();
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(private.join("report.json")).unwrap()).unwrap();
    assert_eq!(r["private"], true);
    assert_eq!(r["seed"], serde_json::Value::Null);
}

#[test]
fn a_budget_below_the_plan_runs_the_rounds_it_allows_and_says_so_first() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ts");
    // Calibrated for 8 rounds at ε ≤ 2, but a budget of 1: fewer rounds fit.
    let run = fixture(&out, 8).args(["--budget-epsilon", "1", "--seed", "1"]).assert().success();
    let stderr = String::from_utf8(run.get_output().stderr.clone()).unwrap();
    let allowed: usize = stderr
        .split("allows ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!((1..8).contains(&allowed), "{stderr}");
    let rows = csv_rows(&out.join("choices.csv"));
    assert_eq!(rows.len(), allowed);
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert!(report["guarantee"]["epsilon"].as_f64().unwrap() <= 1.0);
}

#[test]
fn bad_inputs_are_refused_with_the_flag_or_value_named() {
    let dir = tempfile::tempdir().unwrap();
    let ex = repo().join("examples/thompson");
    // Missing flags: all named at once, with an example.
    let e = gpdp().args(["thompson", "--data"]).arg(ex.join("trials.csv")).assert().failure();
    let msg = String::from_utf8(e.get_output().stderr.clone()).unwrap();
    for flag in ["--kernel", "--delta", "--rounds", "--objective", "--out", "--candidates CSV or --grid"] {
        assert!(msg.contains(flag), "{flag}: {msg}");
    }
    // A candidate file of the wrong dimension.
    let cand = dir.path().join("cand.csv");
    std::fs::write(&cand, "x1,x2\n0.1,0.2\n").unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "x,y\n0.1,0.3\n0.5,0.6\n").unwrap();
    let mut c = gpdp();
    c.args(["thompson", "--data"])
        .arg(&data)
        .args(["--response-range", "0,1", "--kernel", "matern52"])
        .args(["--lengthscale", "0.2", "--domain", "interval:0,1", "--scale", "0.3", "--ridge", "2"])
        .args(["--delta", "1e-5", "--rounds", "2", "--objective", "echo 0.5", "--candidates"])
        .arg(&cand)
        .arg("--out")
        .arg(dir.path().join("b"));
    let msg = String::from_utf8(c.assert().failure().get_output().stderr.clone()).unwrap();
    assert!(msg.contains("2-D points but the data are 1-D"), "{msg}");
    // An objective that prints no number: the round and the value are named,
    // and the folder holds the completed rounds.
    let out = dir.path().join("c");
    let mut c = fixture_with(&out, 3, "echo oops");
    c.args(["--seed", "2"]);
    let msg = String::from_utf8(c.assert().failure().get_output().stderr.clone()).unwrap();
    assert!(msg.contains("round 1") && msg.contains("printed \"oops") && msg.contains("finite number"), "{msg}");
    assert!(msg.contains("stopped after 1 round"), "{msg}");
    assert_eq!(csv_rows(&out.join("choices.csv")).len(), 1);
    // --draws does not apply.
    let mut c = fixture(&dir.path().join("d"), 2);
    c.args(["--draws", "3"]);
    let msg = String::from_utf8(c.assert().failure().get_output().stderr.clone()).unwrap();
    assert!(msg.contains("--draws does not apply"), "{msg}");
    // The PLD conversion is not proven for a loop: refused, not ignored.
    let mut c = fixture(&dir.path().join("e"), 2);
    c.args(["--conversion", "pld"]);
    let msg = String::from_utf8(c.assert().failure().get_output().stderr.clone()).unwrap();
    assert!(msg.contains("pld") && msg.contains("does not apply to a Thompson loop"), "{msg}");
}

#[test]
fn with_a_ledger_every_round_is_recorded_and_the_dataset_budget_stops_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("budget.sqlite");
    gpdp()
        .args(["ledger", "init", "--ledger"])
        .arg(&ledger)
        .args(["--dataset", "trials", "--epsilon", "1.5", "--delta", "1e-5"])
        .assert()
        .success();
    // Calibrated for 8 rounds at ε ≤ 2: the ledger's ε = 1.5 admits fewer.
    let out = dir.path().join("ts");
    let mut c = fixture(&out, 8);
    c.args(["--seed", "3", "--ledger"]).arg(&ledger).args(["--dataset", "trials"]);
    let msg = String::from_utf8(c.assert().failure().get_output().stderr.clone()).unwrap();
    assert!(msg.contains("budget of dataset") && msg.contains("nothing was drawn"), "{msg}");
    let rows = csv_rows(&out.join("choices.csv"));
    assert!((1..8).contains(&rows.len()), "{} rounds", rows.len());
    let show = gpdp()
        .args(["ledger", "show", "--ledger"])
        .arg(&ledger)
        .args(["--dataset", "trials", "--json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&show.get_output().stdout).unwrap();
    let text = v.to_string();
    // One committed entry per round, and the composed ε within the budget.
    assert_eq!(text.matches("gpdp thompson, round").count(), rows.len(), "{text}");
    let last: f64 = rows.last().unwrap()[4].parse().unwrap();
    assert!(last <= 1.5 + 1e-12, "{last}");
}
