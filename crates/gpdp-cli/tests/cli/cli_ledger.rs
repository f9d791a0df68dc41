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
    // The ledger composes the releases' stored Rényi curves (tables on a
    // fixed order grid): an upper bound, within 2 % of the exact composition.
    assert!(composed >= two * (1.0 - 1e-12) && composed <= 1.02 * two, "{composed} vs {two}");
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

fn init(ledger: &str, dataset: &str, epsilon: &str) -> std::process::Output {
    gpdp()
        .args(["ledger", "init", "--ledger", ledger, "--dataset", dataset, "--epsilon", epsilon, "--delta", "1e-5"])
        .output()
        .unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Item 8: the data-policy checks run before the budget is reserved, so a
/// release refused by them — a covariate outside the domain, a response
/// beyond M_Y under `--on-unbounded reject` — records nothing and leaves the
/// composed ε where it was. (On 5f0b931 `reserve` ran first: each refusal
/// left a `reserved` entry that counted against the budget for ever.)
#[test]
fn a_release_refused_by_the_data_policy_consumes_no_budget() {
    let t = tempfile::tempdir().unwrap();
    let data = data_2d(t.path());
    let ledger = t.path().join("ledger.sqlite").to_str().unwrap().to_string();
    let o = init(&ledger, "sensors", &format!("{}", composed_epsilon(3) * 1.0001));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = t.path().join("o0").to_str().unwrap().to_string();
    let o = gpdp().args(release_args(&data, &out, &ledger, "10")).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let before = show(&ledger);
    let composed = before[0]["releases"][0]["composed_epsilon"].as_f64().unwrap();
    assert_eq!(before[0]["releases"].as_array().unwrap().len(), 1);

    let outside = t.path().join("outside.csv");
    std::fs::write(
        &outside,
        "x1,x2,y\n0.1,0.2,0.5\n1.5,0.3,0.1\n0.4,0.4,-0.3\n0.6,0.9,0.2\n0.2,0.7,0.0\n0.8,0.1,0.4\n",
    )
    .unwrap();
    let unbounded = t.path().join("unbounded.csv");
    std::fs::write(
        &unbounded,
        "x1,x2,y\n0.1,0.2,0.5\n0.5,0.3,3.0\n0.4,0.4,-0.3\n0.6,0.9,0.2\n0.2,0.7,0.0\n0.8,0.1,0.4\n",
    )
    .unwrap();
    for (k, (file, extra, why)) in
        [(&outside, vec![], "outside"), (&unbounded, vec!["--on-unbounded", "reject"], "3")].into_iter().enumerate()
    {
        let out = t.path().join(format!("refused{k}")).to_str().unwrap().to_string();
        let o = gpdp().args(release_args(file.to_str().unwrap(), &out, &ledger, "10")).args(&extra).output().unwrap();
        let err = stderr(&o);
        assert!(!o.status.success() && err.contains(why), "{err}");
        assert!(!err.contains("ledger: reserved"), "reserved before the data checks: {err}");
        assert!(!Path::new(&out).exists());
        let now = show(&ledger);
        let rel = now[0]["releases"].as_array().unwrap();
        assert_eq!(rel.len(), 1, "a refused release was recorded: {now}");
        assert_eq!(rel[0]["composed_epsilon"].as_f64().unwrap(), composed);
    }
    // The budget left is the budget for two more releases: both go through.
    for k in 1..3 {
        let out = t.path().join(format!("o{k}")).to_str().unwrap().to_string();
        let o = gpdp().args(release_args(&data, &out, &ledger, "10")).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
}

/// Item 8: a file that is not a gpdp ledger — a CSV file, an empty file,
/// another application's SQLite database (here a ledger whose application
/// id was changed) — is refused by `ledger init`, `ledger show` and
/// `release --ledger`, and is byte-identical afterwards, with no files made
/// next to it. (On 5f0b931 `init` turned the empty file and the other
/// database into ledgers.)
#[test]
fn a_foreign_file_is_refused_and_left_byte_identical() {
    let t = tempfile::tempdir().unwrap();
    let data = data_2d(t.path());
    let real = t.path().join("real.sqlite");
    assert!(init(real.to_str().unwrap(), "sensors", "10").status.success());
    let mut other = std::fs::read(&real).unwrap();
    assert_eq!(&other[68..72], b"gpdp", "a new ledger carries the gpdp application id");
    other[68..72].copy_from_slice(&0x1234_5678u32.to_be_bytes());
    let cases = [
        ("other-app.sqlite", other, "application id 0x12345678"),
        ("notes.csv", b"x,y\n0.1,0.2\n".to_vec(), "not an SQLite database"),
        ("empty.sqlite", Vec::new(), "the file is empty"),
    ];
    for (name, bytes, why) in cases {
        let dir = t.path().join(format!("case-{name}"));
        std::fs::create_dir(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let p = path.to_str().unwrap();
        let out = t.path().join(format!("out-{name}")).to_str().unwrap().to_string();
        let runs = [
            init(p, "sensors", "10"),
            gpdp().args(["ledger", "show", "--ledger", p]).output().unwrap(),
            gpdp().args(release_args(&data, &out, p, "10")).output().unwrap(),
        ];
        for o in runs {
            let err = stderr(&o);
            assert!(!o.status.success() && err.contains("not a gpdp ledger") && err.contains(why), "{name}: {err}");
            assert!(err.contains("nothing was written"), "{err}");
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} was modified");
            assert_eq!(listing(&dir), [name], "files were made next to {name}");
        }
        assert!(!Path::new(&out).exists(), "published despite the refused ledger");
    }
}

/// Runs `script` (with `$1`, `$2`, … = `args`) in a private mount namespace
/// (`unshare -m`, so mounts made there vanish with it and are never seen
/// outside); None where that is not allowed (not root, no CAP_SYS_ADMIN).
fn in_mount_namespace(script: &str, args: &[&str]) -> Option<std::process::Output> {
    let probe = Std::new("unshare").args(["-m", "true"]).stderr(Stdio::null()).status();
    if !matches!(probe, Ok(s) if s.success()) {
        return None;
    }
    Some(Std::new("unshare").args(["-m", "sh", "-c", script, "sh"]).args(args).output().unwrap())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Item 8: `ledger show` needs no write access. The ledger's directory is
/// made read-only in a way that binds root too — a read-only bind mount in
/// a private mount namespace (root; permission bits do not bind root) or
/// `chmod a-w` (other users) — and `show` must list the same as with write
/// access, leaving the file byte-identical. (On 5f0b931 `show` opened the
/// file read-write and ran `CREATE TABLE IF NOT EXISTS`, and SQLite could
/// not open the WAL: "unable to open database file".)
#[test]
#[cfg(unix)]
fn ledger_show_works_without_write_access() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let data = data_2d(t.path());
    let dir = t.path().join("private");
    std::fs::create_dir(&dir).unwrap();
    let ledger = dir.join("ledger.sqlite").to_str().unwrap().to_string();
    assert!(init(&ledger, "sensors", "10").status.success());
    let out = t.path().join("o").to_str().unwrap().to_string();
    let o = gpdp().args(release_args(&data, &out, &ledger, "10")).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = show(&ledger);
    assert_eq!(listing(&dir), ["ledger.sqlite"], "no write-ahead log is left after a clean exit");
    let bytes = std::fs::read(&ledger).unwrap();
    let bin = bin();
    let bin = bin.to_str().unwrap();
    let d = dir.to_str().unwrap();
    let outputs: Vec<std::process::Output> = if is_root() {
        let script = r#"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 97
            if touch "$1/probe" 2>/dev/null; then exit 98; fi
            "$2" ledger show --ledger "$1/ledger.sqlite" --json || exit $?
            echo '---'
            exec "$2" ledger show --ledger "$1/ledger.sqlite""#;
        match in_mount_namespace(script, &[d, bin]) {
            Some(o) if o.status.code() != Some(97) => vec![o],
            _ => {
                eprintln!(
                    "SKIPPED: running as root without a private mount namespace (unshare -m): cannot make a directory read-only for root"
                );
                return;
            }
        }
    } else {
        std::fs::set_permissions(&ledger, std::fs::Permissions::from_mode(0o444)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        let writable = std::fs::write(dir.join("probe"), "").is_ok();
        let outputs = if writable {
            Vec::new()
        } else {
            let json = gpdp().args(["ledger", "show", "--ledger", &ledger, "--json"]).output().unwrap();
            let human = gpdp().args(["ledger", "show", "--ledger", &ledger]).output().unwrap();
            let mut o = json.clone();
            o.status = if json.status.success() { human.status } else { json.status };
            o.stdout = [json.stdout, b"---\n".to_vec(), human.stdout].concat();
            o.stderr = [json.stderr, human.stderr].concat();
            vec![o]
        };
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        if writable {
            eprintln!("SKIPPED: chmod a-w does not stop this user from writing");
            return;
        }
        outputs
    };
    let o = &outputs[0];
    assert_ne!(o.status.code(), Some(98), "the bind mount is not read-only");
    assert!(o.status.success(), "ledger show without write access: {}", stderr(o));
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    let (json, human) = text.split_once("---\n").unwrap();
    let got: Value = serde_json::from_str(json).unwrap();
    assert_eq!(got, expected);
    assert!(human.contains("sensors: budget ε = 10") && human.contains("by 1 release(s)"), "{human}");
    assert_eq!(std::fs::read(&ledger).unwrap(), bytes);
    assert_eq!(listing(&dir), ["ledger.sqlite"]);
}

/// Item 8: a `ledger init` that cannot complete leaves no file behind —
/// neither the ledger (on 5f0b931 a 0- or partly-written file, which the
/// next run then took for a ledger) nor a temporary file. The failure is
/// injected deterministically by a file-size limit (`ulimit -f 1`, with
/// SIGXFSZ ignored so that the write fails with EFBIG, as on a full disk),
/// and, as root, also by a real full disk: a 4 KiB tmpfs mounted in a
/// private mount namespace. Afterwards, init with room succeeds.
#[test]
#[cfg(unix)]
fn ledger_init_that_cannot_complete_leaves_nothing() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let ledger = dir.join("ledger.sqlite");
    let l = ledger.to_str().unwrap();
    let bin = bin();
    let bin = bin.to_str().unwrap();
    let o = Std::new("sh")
        .args(["-c", r#"trap '' XFSZ; ulimit -f 1 && exec "$1" ledger init --ledger "$2" --dataset sensors --epsilon 1 --delta 1e-5"#])
        .args(["sh", bin, l])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "init under ulimit -f 1 succeeded: {err}");
    assert!(err.contains("cannot create it") && err.contains(l), "{err}");
    assert!(!err.contains(".ledger.sqlite."), "the message names the temporary file: {err}");
    assert_eq!(listing(&dir), Vec::<String>::new(), "left behind: {:?}", listing(&dir));
    if is_root() {
        let script = r#"mount -t tmpfs -o size=4k tmpfs "$1" || exit 97
            "$2" ledger init --ledger "$1/ledger.sqlite" --dataset sensors --epsilon 1 --delta 1e-5
            echo "rc=$?"
            ls -A "$1""#;
        match in_mount_namespace(script, &[dir.to_str().unwrap(), bin]) {
            Some(o) if o.status.code() != Some(97) => {
                let text = String::from_utf8_lossy(&o.stdout);
                assert!(!text.contains("rc=0"), "init on a full tmpfs succeeded: {text}");
                assert_eq!(text.trim(), "rc=1", "left behind on the full tmpfs: {text} {}", stderr(&o));
                assert!(stderr(&o).contains("cannot create it"), "{}", stderr(&o));
            }
            _ => eprintln!("SKIPPED (full tmpfs part): no private mount namespace"),
        }
    } else {
        eprintln!("SKIPPED (full tmpfs part): not root");
    }
    assert!(init(l, "sensors", "1").status.success());
    assert_eq!(listing(&dir), ["ledger.sqlite"]);
    assert!(show(l)[0]["budget"]["dataset"] == "sensors");
}

/// Items 8 and 5: names are exact strings. `ledger show` and `init` print a
/// name's control characters escaped (the JSON output is exact), and a new
/// name that differs from an existing one only by case or surrounding
/// whitespace is refused, naming the existing one; a release against it is
/// refused with the same hint.
#[test]
fn names_are_exact_shown_escaped_and_near_duplicates_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = data_2d(t.path());
    let ledger = t.path().join("ledger.sqlite").to_str().unwrap().to_string();
    let evil = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let o = init(&ledger, evil, "10");
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8(o.stdout).unwrap();
    assert!(!said.contains('\u{1b}') && !said.contains('\u{7}'), "{said:?}");
    assert!(said.contains(r"'evil\u{1b}]0;pwned\u{7}\u{1b}[2J'"), "{said}");
    let human = gpdp().args(["ledger", "show", "--ledger", &ledger]).output().unwrap();
    assert!(human.status.success());
    let human = String::from_utf8(human.stdout).unwrap();
    assert!(!human.chars().any(|c| c.is_control() && c != '\n'), "{human:?}");
    assert!(human.contains(r"evil\u{1b}]0;pwned\u{7}\u{1b}[2J: budget ε = 10"), "{human}");
    assert_eq!(show(&ledger)[0]["budget"]["dataset"], evil, "JSON output is exact");
    let again = init(&ledger, evil, "10");
    assert!(!again.status.success() && !stderr(&again).contains('\u{1b}'), "{}", stderr(&again));

    assert!(init(&ledger, "Sensors-2026", "10").status.success());
    for name in ["sensors-2026", " Sensors-2026", "SENSORS-2026\t"] {
        let o = init(&ledger, name, "10");
        let err = stderr(&o);
        assert!(!o.status.success() && err.contains("the existing dataset 'Sensors-2026'"), "{err}");
    }
    let out = t.path().join("o").to_str().unwrap().to_string();
    let mut args = release_args(&data, &out, &ledger, "10");
    let at = args.iter().position(|a| a == "sensors").unwrap();
    args[at] = "sensors-2026".into();
    let o = gpdp().args(&args).output().unwrap();
    let err = stderr(&o);
    assert!(!o.status.success() && err.contains("has no budget") && err.contains("'Sensors-2026'"), "{err}");
    assert!(!Path::new(&out).exists());
    let v = show(&ledger);
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert!(v.as_array().unwrap().iter().all(|b| b["releases"].as_array().unwrap().is_empty()));
}

/// Issue 38 item 6: `release --ledger` with a missing ledger file is refused
/// and creates nothing (no empty ledger, no output folder).
#[test]
fn a_missing_ledger_is_refused_and_not_created() {
    let t = tempfile::tempdir().unwrap();
    let data = data_2d(t.path());
    let (out, ledger) = (t.path().join("out"), t.path().join("missing.sqlite"));
    let o = gpdp().args(release_args(&data, out.to_str().unwrap(), ledger.to_str().unwrap(), "5")).output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("no such file") && e.contains("gpdp ledger init"), "{e}");
    let left: Vec<_> = std::fs::read_dir(t.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, [std::ffi::OsString::from("d.csv")], "a refused release left files behind");
}

/// Issue 38, items 1 and 2: a release calibrated to exactly the budget fits it and leaves
/// nothing; the next refusal states the remaining budget; a refusal names the largest
/// --target-epsilon that fits, which then fits as printed; `--target-epsilon remaining`
/// calibrates to what remains and needs a ledger.
#[test]
fn a_budget_fits_exactly_and_the_refusal_says_what_fits() {
    let t = tempfile::tempdir().unwrap();
    let data = data_2d(t.path());
    let ledger = t.path().join("l.sqlite").to_str().unwrap().to_string();
    let calibrated = |out: &str, target: &str, dataset: &str| {
        let mut a = release_args(&data, out, &ledger, "8");
        let i = a.iter().position(|s| s == "--ridge").unwrap();
        a.drain(i..i + 2);
        let i = a.iter().position(|s| s == "sensors").unwrap();
        a[i] = dataset.into();
        a.extend(["--target-epsilon".to_string(), target.to_string(), "--json".to_string()]);
        gpdp().args(a).output().unwrap()
    };
    let remaining = |dataset: &str| {
        let v = show(&ledger);
        let d = v.as_array().unwrap().iter().find(|d| d["budget"]["dataset"] == dataset).unwrap().clone();
        d["remaining_epsilon"].as_f64().unwrap()
    };
    // Item 1: ε = 3 into a budget of 3.
    assert!(init(&ledger, "exact", "3").status.success());
    let o = calibrated(t.path().join("e1").to_str().unwrap(), "3", "exact");
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let eps = r["privacy"]["epsilon"].as_f64().unwrap();
    assert!(eps <= 3.0 && eps > 3.0 - 1e-6, "{eps}");
    assert!(remaining("exact") < 1e-6, "{}", remaining("exact"));
    let o = calibrated(t.path().join("e2").to_str().unwrap(), "0.5", "exact");
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("remaining ε = 0.0000"), "{e}");
    // What remains is a rounding sliver: at most a target below 10⁻⁴ fits.
    assert!(e.contains("no --target-epsilon of these parameters fits") || e.contains("below 0.0001 fits"), "{e}");
    assert!(!t.path().join("e2").exists());

    // Item 2: after one release of ε₁, a target of the whole budget is refused naming the
    // largest target that fits; that target then fits as printed.
    let one = composed_epsilon(1);
    assert!(init(&ledger, "room", &format!("{}", 2.0 * one)).status.success());
    let out = t.path().join("r1").to_str().unwrap().to_string();
    let mut first = release_args(&data, &out, &ledger, "8");
    let i = first.iter().position(|s| s == "sensors").unwrap();
    first[i] = "room".into();
    let o = gpdp().args(&first).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = calibrated(t.path().join("r2").to_str().unwrap(), &format!("{}", 2.0 * one), "room");
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    let largest: f64 = e
        .split("the largest --target-epsilon that fits is ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("{e}"))
        .parse()
        .unwrap();
    // Two releases compose to less than the sum: more than ε₁ is left.
    assert!(largest > one && largest < 2.0 * one, "{largest} vs ε₁ = {one}");
    assert!(e.contains(&format!("remaining ε = {:.4}", one)), "{e}");
    let o = calibrated(t.path().join("r3").to_str().unwrap(), &format!("{largest}"), "room");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(remaining("room") < 1e-3 * one, "{}", remaining("room"));

    // --target-epsilon remaining: the same on a fresh dataset, in one step.
    assert!(init(&ledger, "rest", &format!("{}", 2.0 * one)).status.success());
    let i = first.iter().position(|s| s == "room").unwrap();
    first[i] = "rest".into();
    let j = first.iter().position(|s| s == &out).unwrap();
    first[j] = t.path().join("s1").to_str().unwrap().into();
    assert!(gpdp().args(&first).output().unwrap().status.success());
    let o = calibrated(t.path().join("s2").to_str().unwrap(), "remaining", "rest");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("calibrated to target ε = "), "{}", stderr(&o));
    assert!(remaining("rest") < 1e-3 * one, "{}", remaining("rest"));
    // Without a ledger, `remaining` means nothing.
    let o = gpdp()
        .args(["release", "--response-bound", "1", "--data", &data, "--kernel", "matern32", "--lengthscale", "0.3"])
        .args(["--domain", "box:0,1,0,1", "--scale", "1", "--delta", "1e-5", "--grid", "8", "--quiet"])
        .args(["--target-epsilon", "remaining", "--out", t.path().join("x").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!o.status.success() && stderr(&o).contains("give --ledger FILE --dataset NAME"), "{}", stderr(&o));
}
