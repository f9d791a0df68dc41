//! `gpdp thompson study`: a tiny regret study's shards merge into exactly
//! the unsharded outputs; the outputs say the study is seeded; bad flags are
//! refused naming the flag.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gpdp")).args(args).output().unwrap()
}

fn ok(args: &[&str]) -> std::process::Output {
    let o = run(args);
    assert!(o.status.success(), "gpdp {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn refused(args: &[&str]) -> String {
    let o = run(args);
    assert!(!o.status.success(), "gpdp {args:?} should fail");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file of a folder (name → bytes).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .collect()
}

/// 2 functions × 5 methods × 2 seeds, 5 rounds, small candidate sets.
const TINY: [&str; 16] = [
    "thompson",
    "study",
    "--functions",
    "forrester,hartmann3",
    "--seeds",
    "2",
    "--rounds",
    "5",
    "--epsilons",
    "1,10",
    "--grid-1d",
    "64",
    "--candidates",
    "64",
    "--quiet",
    "--force",
];

#[test]
fn merged_thompson_study_shards_equal_the_unsharded_study() {
    let t = tempfile::tempdir().unwrap();
    let full = t.path().join("full");
    let with = |extra: &[&str]| -> Vec<String> { TINY.iter().chain(extra).map(|s| s.to_string()).collect() };
    let args = with(&["--out", full.to_str().unwrap()]);
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let n = 3;
    let mut shards = Vec::new();
    for i in 0..n {
        let d = t.path().join(format!("shard-{i}"));
        let sh = format!("{i}/{n}");
        let args = with(&["--out", d.to_str().unwrap(), "--shard", &sh]);
        ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(d.join("shard.cbor").exists());
        shards.push(d.display().to_string());
    }
    shards.reverse();
    let merged = t.path().join("merged");
    let mut margs = vec!["merge".to_string(), "--out".into(), merged.display().to_string()];
    margs.extend(shards.clone());
    ok(&margs.iter().map(String::as_str).collect::<Vec<_>>());
    let (a, b) = (files(&full), files(&merged));
    assert_eq!(
        a.keys().map(String::as_str).collect::<Vec<_>>(),
        ["regret.csv", "regret.png", "study.json", "summary.md"]
    );
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{name} differs between the unsharded and the merged run");
    }
    // The CSV: 2 functions × (2 private + 3 other) methods × 5 rounds, plus the header.
    let csv = String::from_utf8(a["regret.csv"].clone()).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 5 * 5);
    assert!(csv.starts_with("function,method,epsilon,round,simple_regret_mean,simple_regret_se,"), "{csv}");
    assert!(csv.contains("\nforrester,private_ts,10,5,") && csv.contains("\nhartmann3,random,,1,"), "{csv}");
    let md = String::from_utf8(a["summary.md"].clone()).unwrap();
    assert!(md.contains("not a private release"), "{md}");
    assert!(md.contains("| Hartmann-3 | private TS, ε = 1 | 1 |"), "{md}");
    let json: serde_json::Value = serde_json::from_slice(&a["study.json"]).unwrap();
    assert_eq!(json["seeded"], serde_json::Value::Bool(true));
    assert_eq!(json["settings"]["seeds"], 2);
    // Every private loop's composed ε is at most its target.
    for f in json["functions"].as_array().unwrap() {
        for r in f["private_ridges"].as_array().unwrap() {
            let (e, target) = (r["composed_epsilon"].as_f64().unwrap(), r["target_epsilon"].as_f64().unwrap());
            assert!(e <= target, "{r}");
        }
    }
    // A missing shard is refused.
    let again = t.path().join("again");
    let e = refused(&["merge", "--out", again.to_str().unwrap(), &shards[0], &shards[1]]);
    assert!(e.contains("missing shard(s)"), "{e}");
}

#[test]
fn bad_thompson_study_flags_are_refused_naming_the_flag() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let o = out.to_str().unwrap();
    let e = refused(&["thompson", "study", "--out", o, "--functions", "forrester,bogus"]);
    assert!(e.contains("--functions") && e.contains("'bogus'"), "{e}");
    let e = refused(&["thompson", "study", "--out", o, "--epsilons", "1,0"]);
    assert!(e.contains("--epsilons") && e.contains("> 0"), "{e}");
    let e = refused(&["thompson", "study", "--out", o, "--epsilons", "1,x"]);
    assert!(e.contains("--epsilons") && e.contains("'x'"), "{e}");
    let e = refused(&["thompson", "study", "--out", o, "--seeds", "0"]);
    assert!(e.contains("--seeds 0"), "{e}");
    let e = refused(&["thompson", "study", "--out", o, "--rounds", "0"]);
    assert!(e.contains("--rounds 0"), "{e}");
    let e = refused(&["thompson", "study", "--out", o, "--functions", "branin,branin"]);
    assert!(e.contains("branin is given twice"), "{e}");
    let e = refused(&["thompson", "study", "--out", o, "--noise", "-1"]);
    assert!(e.contains("--noise -1: must be > 0"), "{e}");
    let e = refused(&["thompson", "study", "--out", o, "--delta", "1"]);
    assert!(e.contains("--delta 1: must be in (0, 1)"), "{e}");
    let e = refused(&["thompson", "study", "--out", o, "--candidates", "0"]);
    assert!(e.contains("--candidates 0"), "{e}");
    let e = refused(&["thompson", "study", "--out", o, "--shard", "2/2"]);
    assert!(e.contains("0 ≤ I < N"), "{e}");
    assert!(!out.exists(), "nothing is written on refusal");
}
