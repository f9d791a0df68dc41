//! What `gpdp release` publishes: the library's release, byte for byte; and a
//! published folder that depends only on public inputs and the draws.

use crate::common::gpdp;
use std::path::Path;

use gpdp::{CovariateLattice, Grid, Kernel, MechanismParams, Query, ReleaseParams, ReleaseRng};
use serde_json::Value;

fn run_ok(args: &[&str]) -> (String, String) {
    let o = gpdp().args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    (String::from_utf8_lossy(&o.stdout).to_string(), String::from_utf8_lossy(&o.stderr).to_string())
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    v.sort();
    v
}

/// 12 sensors on the lattice of 9 points per axis over [0, 1]².
fn sensors(moved: Option<[f64; 2]>, y0: f64) -> String {
    let mut s = String::from("x1,x2,y\n");
    for k in 0..12 {
        let (i, j) = ((k * 5) % 9, (k * 7 + 2) % 9);
        let (mut x1, mut x2) = (i as f64 / 8.0, j as f64 / 8.0);
        if k == 11
            && let Some([a, b]) = moved
        {
            (x1, x2) = (a, b);
        }
        let y = if k == 0 { y0 } else { ((k as f64) * 0.7).sin() * 0.9 };
        s.push_str(&format!("{x1},{x2},{y}\n"));
    }
    s
}

fn release_args<'a>(data: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
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
        "0.5",
        "--ridge",
        "1.5",
        "--delta",
        "1e-3",
        "--draws",
        "2",
        "--grid",
        "9",
        "--seed",
        "11",
        "--out",
        out,
    ];
    v.extend_from_slice(extra);
    v
}

#[test]
fn cli_release_equals_the_library_release() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("d.csv");
    std::fs::write(&data, sensors(None, 0.4)).unwrap();
    let out = t.path().join("o");
    run_ok(&release_args(data.to_str().unwrap(), out.to_str().unwrap(), &["--covariate-lattice", "9"]));

    // The same release through the library.
    let (_, ds) = gpdp::io::read_dataset(&data).unwrap();
    let domain: gpdp::Domain = "box:0,1,0,1".parse().unwrap();
    let model = ReleaseParams::new(Kernel::new(gpdp::KernelKind::Matern32, 0.3).unwrap(), domain.clone(), 12, 1.5, 0.5);
    let mut p = MechanismParams::new(model, 1e-3, gpdp::ResponseScale::Bound(1.0));
    p.draws = gpdp::Draws::new(2).unwrap();
    p.covariate_lattice = Some(CovariateLattice::parse("9", 2).unwrap());
    let q = Query::Grid(Grid::parse("9", &domain).unwrap());
    let lib = p.check().unwrap().release(&ds, &q, &mut ReleaseRng::seeded(11)).unwrap();

    // Byte-identical paths.csv.
    let mut want = String::from("x1,x2,path_1,path_2\n");
    for (i, x) in q.points().iter().enumerate() {
        want.push_str(&format!("{},{},{},{}\n", x[0], x[1], lib.paths[0][i], lib.paths[1][i]));
    }
    assert_eq!(std::fs::read_to_string(out.join("paths.csv")).unwrap(), want);
    // Equal reports: report.json is the library's report plus the file list and threshold.
    let mut cli: Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let obj = cli.as_object_mut().unwrap();
    assert_eq!(
        obj.remove("outputs").unwrap(),
        serde_json::json!(["paths.csv", "report.json", "map.png", "excursion.geojson", "maps.png"])
    );
    assert_eq!(obj.remove("threshold").unwrap(), serde_json::json!(0.0));
    assert_eq!(cli, serde_json::to_value(&lib.report).unwrap());
    assert_eq!(lib.report.sampler.plan.method, "circulant embedding + Matheron update");
}

#[test]
fn published_output_does_not_depend_on_private_details() {
    let t = tempfile::tempdir().unwrap();
    let run = |name: &str, body: String, extra: &[&str]| -> (Vec<u8>, Vec<String>, String) {
        let data = t.path().join(format!("{name}.csv"));
        std::fs::write(&data, body).unwrap();
        let out = t.path().join(name);
        let (_, stderr) = run_ok(&release_args(data.to_str().unwrap(), out.to_str().unwrap(), extra));
        (std::fs::read(out.join("report.json")).unwrap(), files(&out), stderr)
    };
    let (base, base_files, _) = run("base", sensors(None, 0.4), &[]);
    // (a) one sensor moved off the lattice (no lattice declared: dense for both).
    let (off, off_files, _) = run("off", sensors(Some([0.4137, 0.7291]), 0.4), &[]);
    // (b) responses that have to be clipped.
    let (clip, clip_files, stderr) = run("clip", sensors(None, 7.5), &[]);
    assert_eq!(base, off, "report.json changed when a sensor moved off the lattice");
    assert_eq!(base, clip, "report.json changed when responses were clipped");
    assert_eq!(base_files, off_files);
    assert_eq!(base_files, clip_files);
    assert_eq!(base_files, ["excursion.geojson", "map.png", "maps.png", "paths.csv", "report.json"]);
    // The operator still hears about the clipping, on stderr only.
    assert!(stderr.contains("1 of 12 responses (8%) were clipped") && stderr.contains("not published"), "{stderr}");
    let text = String::from_utf8(base).unwrap();
    assert!(!text.contains("clipped") && !text.contains("seconds"), "{text}");
}

#[test]
fn a_declared_lattice_is_used_or_the_data_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let on = t.path().join("on.csv");
    std::fs::write(&on, sensors(None, 0.4)).unwrap();
    let out = t.path().join("on");
    run_ok(&release_args(on.to_str().unwrap(), out.to_str().unwrap(), &["--covariate-lattice", "9"]));
    let r: Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(r["sampler"]["method"], "circulant embedding + Matheron update");
    assert_eq!(r["sampler"]["lattice"], serde_json::json!([9, 9]));
    // Off the declared lattice: refused, nothing written — never served by another sampler.
    let off = t.path().join("off.csv");
    std::fs::write(&off, sensors(Some([0.4137, 0.7291]), 0.4)).unwrap();
    let out2 = t.path().join("off");
    let o = gpdp()
        .args(release_args(off.to_str().unwrap(), out2.to_str().unwrap(), &["--covariate-lattice", "9"]))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("data row 12") && err.contains("not on the declared covariate lattice 9x9"), "{err}");
    assert!(!out2.exists());
    // --sampler lattice without a declaration is refused before any data are used.
    let o = gpdp()
        .args(release_args(on.to_str().unwrap(), out2.to_str().unwrap(), &["--sampler", "lattice"]))
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("no covariate lattice"));
}

#[test]
fn the_operator_log_stays_outside_the_published_folder() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("d.csv");
    std::fs::write(&data, sensors(None, 7.5)).unwrap();
    let out = t.path().join("o");
    let inside = out.join("log.json");
    let o = gpdp()
        .args(release_args(data.to_str().unwrap(), out.to_str().unwrap(), &["--log", inside.to_str().unwrap()]))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("inside the published folder"));
    assert!(!out.exists());
    let log = t.path().join("operator.json");
    run_ok(&release_args(data.to_str().unwrap(), out.to_str().unwrap(), &["--log", log.to_str().unwrap()]));
    let v: Value = serde_json::from_slice(&std::fs::read(&log).unwrap()).unwrap();
    assert_eq!(v["diagnostics"]["policy"]["responses_clipped"], 1);
    assert!(v["note"].as_str().unwrap().contains("PRIVATE"));
    assert_eq!(files(&out), ["excursion.geojson", "map.png", "maps.png", "paths.csv", "report.json"]);
}
