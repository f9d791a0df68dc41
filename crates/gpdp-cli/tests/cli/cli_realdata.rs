//! `gpdp excursion real` and `gpdp hexbin` on the synthetic fixtures in the
//! real formats (crates/gpdp-experiments/tests/data/realdata).

use crate::common::gpdp;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../gpdp-experiments/tests/data/realdata").join(name);
    p.to_str().unwrap().to_string()
}

fn real_args(out: &str) -> Vec<String> {
    [
        "excursion",
        "real",
        "--ppd",
        &fixture("pp-2017-sample.csv"),
        "--ppd",
        &fixture("pp-2018-sample.csv"),
        "--postcodes",
        &fixture("postcodes-sample.csv"),
        "--select-size",
        "12",
        "--release-size",
        "12",
        "--release-min-count",
        "2",
        "--lengthscales",
        "0.05,0.15,0.4",
        "--ridges",
        "0.3,1,3,7",
        "--scales",
        "0.03,0.1,0.4",
        "--rounds",
        "0",
        "--map-grid",
        "30",
        "--path-grid",
        "24",
        "--out",
        out,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn run_ok(args: &[String]) -> (String, String) {
    let o = gpdp().args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    (String::from_utf8_lossy(&o.stdout).to_string(), String::from_utf8_lossy(&o.stderr).to_string())
}

fn run_err(args: &[String]) -> String {
    let o = gpdp().args(args).output().unwrap();
    assert!(!o.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn json(dir: &str, name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(Path::new(dir).join(name)).unwrap()).unwrap()
}

fn data_rows(dir: &str, name: &str) -> usize {
    std::fs::read_to_string(Path::new(dir).join(name)).unwrap().lines().count() - 1
}

/// ε of one path from `gpdp account` (the core library), independently of the study.
fn account_epsilon(theta: &Value, n: usize, delta: f64) -> f64 {
    let args: Vec<String> = [
        "account",
        "--kernel",
        "exponential",
        "--lengthscale",
        &theta["lengthscale"].to_string(),
        "--domain",
        "box:0,1,0,1",
        "--n",
        &n.to_string(),
        "--ridge",
        &theta["ridge"].to_string(),
        "--scale",
        &theta["scale"].to_string(),
        "--draws",
        "1",
        "--sensitivity",
        "generic",
        "--conversion",
        "paper",
        "--delta",
        &delta.to_string(),
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (out, _) = run_ok(&args);
    serde_json::from_str::<Value>(&out).unwrap()["epsilon"].as_f64().unwrap()
}

#[test]
fn end_to_end_on_the_fixtures() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("real").to_str().unwrap().to_string();
    let mut args = real_args(&out);
    args.extend(["--seed".into(), "7".into()]);
    let (stdout, stderr) = run_ok(&args);
    assert!(stderr.contains("NOT a private release"), "{stderr}");
    assert!(stdout.contains("SEEDED"), "{stdout}");
    for f in [
        "hexbin_2017.csv",
        "hexbin_2018.csv",
        "search_unconstrained.csv",
        "search_private.csv",
        "selected.json",
        "map.png",
    ] {
        assert!(Path::new(&out).join(f).exists(), "{f}");
    }
    // The published folder holds the release and nothing else.
    let release = Path::new(&out).join("release");
    let mut published: Vec<String> =
        std::fs::read_dir(&release).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    published.sort();
    assert_eq!(published, ["excursion_paths.geojson", "map_private.png", "paths.csv", "report.json"]);
    let rel_dir = release.to_str().unwrap().to_string();
    let sel = json(&out, "selected.json");
    let n_release = data_rows(&out, "hexbin_2018.csv");
    let n_select = data_rows(&out, "hexbin_2017.csv");
    assert_ne!(n_release, n_select, "the fixture must tell the two n apart");
    assert_eq!(sel["n"].as_u64().unwrap() as usize, n_release);
    assert_eq!(sel["n_selection_hexagons"].as_u64().unwrap() as usize, n_select);
    // ε and δ are computed for the release year's n (not the selection year's).
    let delta = sel["delta"].as_f64().unwrap();
    assert!((delta - (n_release as f64).powf(-1.1)).abs() < 1e-15);
    let eps = sel["epsilon"].as_f64().unwrap();
    assert!(eps < 10.0);
    let lib = account_epsilon(&sel["theta_priv"], n_release, delta);
    assert!((eps - lib).abs() <= 1e-9 * lib, "selected ε {eps} vs gpdp account {lib}");
    let with_select_n = account_epsilon(&sel["theta_priv"], n_select, delta);
    assert!((eps - with_select_n).abs() > 1e-6 * eps, "ε must depend on which n is used");
    assert!(sel["accounting"].as_str().unwrap().contains("treated as public"));
    let constants = sel["sensitivity_constants"].as_str().unwrap();
    assert!(constants.starts_with("proven; the tight bound"), "{constants}");
    let c = sel["cutoff_C"].as_f64().unwrap();
    assert!((0.05..=0.95).contains(&c));
    // Counts from the readers (the generator's expected counts are checked in
    // the experiments crate): 600 rows per file, joins per year.
    let files = sel["counts"]["ppd_files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert!(files.iter().all(|f| f["counts"]["rows"] == 600));
    assert_eq!(sel["counts"]["postcodes"]["columns"], serde_json::json!(["pcds", "oseast1m", "osnrth1m"]));
    assert_eq!(sel["counts"]["hexbin_release"]["hexagons"].as_u64().unwrap() as usize, n_release);

    // The release report: seeded, 3 paths, the release year's n.
    let r = json(&rel_dir, "report.json");
    assert_eq!(r["private"], false);
    assert!(r["warning"].as_str().unwrap().contains("NOT a private release"));
    let c = &r["privacy"]["components"][0];
    assert_eq!(c["n"].as_u64().unwrap() as usize, n_release);
    assert_eq!(c["draws"], 3);
    assert!(["B.1", "coupled", "operator"].contains(&c["sensitivity_source"].as_str().unwrap()), "{c}");
    assert_eq!(c["bound"], "tight");
    assert!((r["privacy_one_path"]["epsilon"].as_f64().unwrap() - eps).abs() <= 1e-9 * eps);
    assert!(r["privacy"]["epsilon"].as_f64().unwrap() > eps);
    assert_eq!(r["data_policy"]["n"].as_u64().unwrap() as usize, n_release);
    assert!(r["record"].as_str().unwrap().contains("treated as public"));
    assert_eq!(r["query"]["lower"], serde_json::json!([0.0, 0.0]));
    assert_eq!(r["query"]["upper"], serde_json::json!([1.0, 1.0]));
    assert!(!serde_json::to_string(&r).unwrap().contains("clipped"));

    // Paths only inside [0,1]²; 24² rows; 3 paths.
    let text = std::fs::read_to_string(release.join("paths.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), "x1,x2,easting,northing,path_1,path_2,path_3");
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    assert_eq!(rows.len(), 24 * 24);
    assert!(rows.iter().all(|r| (0.0..=1.0).contains(&r[0]) && (0.0..=1.0).contains(&r[1])));
    // Hexbin CSVs: the selection year has a train/validation split.
    let h17 = std::fs::read_to_string(Path::new(&out).join("hexbin_2017.csv")).unwrap();
    assert!(h17.starts_with("easting,northing,x1,x2,count,median_log_price,y,label,role\n"));
    let val = h17.lines().filter(|l| l.ends_with(",validation")).count();
    assert_eq!(val, ((n_select as f64) * 0.5).round() as usize);

    // Same seed, same release; a non-empty --out is refused without --force.
    let out2 = t.path().join("real2").to_str().unwrap().to_string();
    let mut args2 = real_args(&out2);
    args2.extend(["--seed".into(), "7".into()]);
    run_ok(&args2);
    assert_eq!(
        std::fs::read(release.join("paths.csv")).unwrap(),
        std::fs::read(Path::new(&out2).join("release/paths.csv")).unwrap()
    );
    let err = run_err(&args2);
    assert!(err.contains("not empty") && err.contains("--force"), "{err}");
}

/// Every file under `dir` (path relative to it → bytes), recursively.
fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(|e| e.unwrap()) {
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            } else {
                let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn seeded_runs_write_identical_files() {
    // Two runs with the same --seed write the same bytes in every file,
    // selected.json included: the fit's and the sampling's timings go to
    // stderr only.
    let t = tempfile::tempdir().unwrap();
    let mut trees = Vec::new();
    for run in ["a", "b"] {
        let out = t.path().join(run).to_str().unwrap().to_string();
        let mut args = real_args(&out);
        args.extend(["--seed".into(), "11".into(), "--paths".into(), "1".into()]);
        let (_, stderr) = run_ok(&args);
        assert!(stderr.contains("release: fit ") && stderr.contains(" s, sampling "), "{stderr}");
        trees.push(tree(Path::new(&out)));
    }
    let (a, b) = (&trees[0], &trees[1]);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    assert!(a.contains_key("selected.json") && a.contains_key("release/report.json"), "{:?}", a.keys());
    for (name, bytes) in a {
        assert!(bytes == &b[name], "{name} differs between two runs with --seed 11");
    }
    let sel: Value = serde_json::from_slice(&a["selected.json"]).unwrap();
    assert!(!String::from_utf8_lossy(&a["selected.json"]).contains("seconds"), "no timings in selected.json");
    assert!(sel["release_diagnostics"]["policy"].is_object(), "{}", sel["release_diagnostics"]);
}

#[test]
fn published_constants_are_labelled_and_private_runs_are_marked() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("pub").to_str().unwrap().to_string();
    let mut args = real_args(&out);
    args.extend(["--sensitivity-constants".into(), "published".into(), "--paths".into(), "1".into()]);
    // A fixed public box: the lattice and the normalisation no longer depend on the data.
    args.extend(["--box".into(), "503000,561000,155000,201000".into()]);
    run_ok(&args);
    let sel = json(&out, "selected.json");
    let norm = &sel["counts"]["hexbin_release"]["normalisation"];
    assert_eq!(norm["easting"], serde_json::json!([503000.0, 561000.0]));
    assert_eq!(norm["northing"], serde_json::json!([155000.0, 201000.0]));
    assert_eq!(
        sel["counts"]["hexbin_selection"]["grid"]["bbox"],
        serde_json::json!([503000.0, 561000.0, 155000.0, 201000.0])
    );
    assert!(sel["sensitivity_constants"].as_str().unwrap().contains("not a proven guarantee"));
    let r = json(&format!("{out}/release"), "report.json");
    assert_eq!(r["private"], true);
    assert!(r.get("warning").is_none());
    assert!(r["warning_constants"].as_str().unwrap().contains("proven constants"));
    // The report's guarantee is the proven one, larger than the published ε.
    assert!(r["privacy"]["epsilon"].as_f64().unwrap() > sel["epsilon"].as_f64().unwrap());
}

#[test]
fn malformed_input_and_bad_flags_are_one_line_errors() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("o").to_str().unwrap().to_string();
    let mut args = real_args(&out);
    args[3] = fixture("pp-malformed.csv");
    let err = run_err(&args);
    assert!(err.contains("pp-malformed.csv line 3, field \"record\": has 15 fields"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!Path::new(&out).exists());
    let mut args = real_args(&out);
    args.extend(["--release-year".into(), "2017".into()]);
    assert!(run_err(&args).contains("different"));
    let mut args = real_args(&out);
    args.extend(["--property-type".into(), "flat".into()]);
    assert!(run_err(&args).contains("--property-type 'flat' must be one letter"));
}

#[test]
fn hexbin_command_bins_known_points() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("p.csv");
    // Box [0,4]×[0,3], size 2 (regular): sx = 2, sy = 2√3, ny = 1, rows
    // centred on y = 1.5: A centres (0|2|4, 1.5 ∓ √3), B centres (1|3, 1.5).
    std::fs::write(&data, "X,Y,v\n1,1.5,5\n1.1,1.5,7\n3,1.5,1\n3.05,1.6,2\n2.9,1.4,4\n0.1,0,9\n9,9,1\n").unwrap();
    let out = t.path().join("cells.csv");
    let args: Vec<String> = [
        "hexbin",
        "--data",
        data.to_str().unwrap(),
        "--x",
        "x",
        "--y",
        "y",
        "--value",
        "V",
        "--size",
        "2",
        "--min-count",
        "2",
        "--box",
        "0,4,0,3",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (stdout, _) = run_ok(&args);
    assert!(stdout.contains("1 outside the box") && stdout.contains("1 cell(s) (1 point(s)) below"), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "x,y,count,median,lattice,i,j");
    let cells: Vec<Vec<&str>> = lines[1..].iter().map(|l| l.split(',').collect()).collect();
    assert_eq!(cells.len(), 2);
    for (c, (x, count, median, i)) in cells.iter().zip([(1.0, "2", "6", "0"), (3.0, "3", "2", "1")]) {
        assert!((c[0].parse::<f64>().unwrap() - x).abs() < 1e-12 && (c[1].parse::<f64>().unwrap() - 1.5).abs() < 1e-12);
        assert_eq!(&c[2..], &[count, median, "B", i, "0"]);
    }
    // An existing output needs --force.
    assert!(run_err(&args).contains("--force"));
    let mut forced = args.clone();
    forced.push("--force".into());
    run_ok(&forced);
    // Bad values name the line and column.
    std::fs::write(&data, "x,y,v\n1,2,3\n1,oops,3\n").unwrap();
    let err = run_err(&forced);
    assert!(err.contains("line 3, column \"y\": \"oops\" is not a finite number"), "{err}");
}
