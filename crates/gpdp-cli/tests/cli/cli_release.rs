//! `gpdp release` and `gpdp demo`: reproducibility, privacy flag, outputs,
//! and one-line refusals that leave nothing behind.

use crate::common::gpdp;
use std::path::Path;

use serde_json::Value;

const DATA_1D: &str = "x,y\n0.1,0.5\n0.3,-0.2\n0.35,1.4\n0.6,0.9\n0.9,-1.0\n";

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_str().unwrap().to_string()
}

fn release_args<'a>(data: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "release",
        "--response-bound",
        "1",
        "--data",
        data,
        "--kernel",
        "exponential",
        "--lengthscale",
        "0.3",
        "--domain",
        "interval:0,1",
        "--scale",
        "0.5",
        "--ridge",
        "1",
        "--delta",
        "1e-3",
        "--draws",
        "2",
        "--grid",
        "50",
        "--out",
        out,
    ]
}

fn run_ok(args: &[&str]) -> String {
    let o = gpdp().args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    v.sort();
    v
}

fn report(dir: &str) -> Value {
    serde_json::from_slice(&std::fs::read(Path::new(dir).join("report.json")).unwrap()).unwrap()
}

#[test]
fn seeded_releases_are_reproducible_and_marked_not_private() {
    let t = tempfile::tempdir().unwrap();
    let data = write(t.path(), "d.csv", DATA_1D);
    let (a, b, c, d) = (
        t.path().join("a").to_str().unwrap().to_string(),
        t.path().join("b").to_str().unwrap().to_string(),
        t.path().join("c").to_str().unwrap().to_string(),
        t.path().join("d").to_str().unwrap().to_string(),
    );
    let mut args = release_args(&data, &a);
    args.extend(["--seed", "42"]);
    let err = run_ok(&args);
    assert!(err.contains("NOT a private release"), "{err}");
    let mut args = release_args(&data, &b);
    args.extend(["--seed", "42"]);
    run_ok(&args);
    let pa = std::fs::read(Path::new(&a).join("paths.csv")).unwrap();
    assert_eq!(pa, std::fs::read(Path::new(&b).join("paths.csv")).unwrap(), "same seed, same bytes");
    run_ok(&release_args(&data, &c));
    run_ok(&release_args(&data, &d));
    let pc = std::fs::read(Path::new(&c).join("paths.csv")).unwrap();
    assert_ne!(pc, std::fs::read(Path::new(&d).join("paths.csv")).unwrap(), "OS-seeded runs differ");
    assert_ne!(pa, pc);
    assert_eq!(report(&a)["private"], false);
    assert!(report(&a)["warning"].as_str().unwrap().contains("NOT a private release"));
    assert_eq!(report(&c)["private"], true);
    assert!(report(&c).get("warning").is_none());
    // Contents: header, 50 rows, 2 paths; the report carries the guarantee.
    let text = String::from_utf8(pc).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), "x,path_1,path_2");
    assert_eq!(lines.count(), 50);
    let r = report(&c);
    // n = 5, r = 1: the coupled bound is below B.7 here (the tight default takes the smallest).
    assert_eq!(r["privacy"]["components"][0]["sensitivity_source"], "coupled");
    assert_eq!(r["privacy"]["components"][0]["bound"], "tight");
    assert_eq!(r["privacy"]["components"][0]["draws"], 2);
    // 1.4 > M_Y = 1 was clipped: the operator is told on stderr, the report says nothing.
    assert!(!serde_json::to_string(&r).unwrap().contains("clipped"));
    assert!(r["sampler"]["jitter"].as_f64().unwrap() > 0.0);
    assert_eq!(r["outputs"], serde_json::json!(["paths.csv", "report.json", "paths.png"]));
    assert!(r["hyperparameters"].as_str().unwrap().contains("must be chosen without the private data"));
    assert!(Path::new(&c).join("paths.png").exists());
}

#[test]
fn two_dimensional_release_writes_map_and_geojson() {
    let t = tempfile::tempdir().unwrap();
    let data = write(t.path(), "d.csv", "x1,x2,y\n0.1,0.1,1\n0.5,0.5,-1\n0.9,0.2,0.5\n0.3,0.8,0.7\n");
    let out = t.path().join("o").to_str().unwrap().to_string();
    run_ok(&[
        "release",
        "--response-bound",
        "1",
        "--data",
        &data,
        "--kernel",
        "matern32",
        "--lengthscale",
        "0.3",
        "--domain",
        "box:0,1,0,1",
        "--scale",
        "1",
        "--target-epsilon",
        "5",
        "--delta",
        "1e-3",
        "--grid",
        "30x20",
        "--out",
        &out,
        "--seed",
        "1",
    ]);
    for f in ["paths.csv", "report.json", "map.png", "excursion.geojson"] {
        assert!(Path::new(&out).join(f).exists(), "{f}");
    }
    let r = report(&out);
    assert!(r["privacy"]["epsilon"].as_f64().unwrap() <= 5.0);
    assert_eq!(r["calibration"]["solve"], "ridge");
    assert_eq!(r["query"]["counts"], serde_json::json!([30, 20]));
    let gj: Value = serde_json::from_slice(&std::fs::read(Path::new(&out).join("excursion.geojson")).unwrap()).unwrap();
    assert_eq!(gj["type"], "FeatureCollection");
    let text = std::fs::read_to_string(Path::new(&out).join("paths.csv")).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[0], "x1,x2,path_1");
    assert_eq!(rows.len(), 601);
    assert!(rows[2].starts_with("0.034482758620689655,0,")); // x1 varies fastest
}

/// A refused release: exit ≠ 0, one stderr line containing `needle`, and no
/// output directory (or partial directory) left behind.
fn refused(args: &[&str], out: &str, needle: &str) {
    let o = gpdp().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} should fail");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.contains(needle), "'{err}' lacks '{needle}'");
    assert!(!Path::new(out).exists(), "output left behind for {args:?}");
    let parent = Path::new(out).parent().unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(parent)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".partial-"))
        .collect();
    assert!(leftovers.is_empty(), "partial directory left behind");
}

#[test]
fn bad_inputs_are_refused_with_one_line_and_nothing_written() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("never").to_str().unwrap().to_string();
    let cases: [(&str, &str); 9] = [
        ("x,y\n0.1,0.5\n0.2,NaN\n", "row 2 (line 3), column y: NaN is not finite"),
        ("x,y\n0.1,0.5\n0.2,inf\n", "row 2 (line 3), column y: inf is not finite"),
        ("x,y\n0.1,0.5\n0.2,0.1,7\n", "row 2 (line 3): 3 fields, but the header has 2"),
        ("x,y\n0.1,0.5\n0.2,abc\n", "row 2 (line 3), column y: 'abc' is not a number"),
        ("", "empty"),
        ("x,y\n", "no data rows"),
        ("x,y\n0.1,0.5\n", "at least 2 records"),
        ("x,y\n0.1,0.5\n1.5,0.2\n", "data row 2: covariate [1.5] lies outside the declared domain interval:0,1"),
        ("x1,x2,y\n0.1,0.1,0.5\n0.2,0.2,0.1\n", "2-D covariates but the domain interval:0,1 is 1-D"),
    ];
    for (i, (body, needle)) in cases.iter().enumerate() {
        let data = write(t.path(), &format!("bad{i}.csv"), body);
        refused(&release_args(&data, &out), &out, needle);
    }
    let data = write(t.path(), "big.csv", "x,y\n0.1,0.5\n0.2,1.5\n");
    let mut args = release_args(&data, &out);
    args.extend(["--on-unbounded", "reject"]);
    refused(&args, &out, "data row 2: response y = 1.5 exceeds the response bound M_Y = 1");
    let good = write(t.path(), "good.csv", DATA_1D);
    let mut args = release_args(&good, &out);
    args.extend(["--max-epsilon", "0.5"]);
    refused(&args, &out, "refusing to release");
    let mut args = release_args(&good, &out);
    let i = args.iter().position(|a| *a == "--scale").unwrap();
    args[i + 1] = "inf"; // --scale inf: refused when the flag is parsed
    refused(&args, &out, "σ = inf");
    let mut args = release_args(&good, &out);
    args.extend(["--target-epsilon", "3"]);
    refused(&args, &out, "not both");
    let mut args = release_args(&good, &out);
    let i = args.iter().position(|a| *a == "--ridge").unwrap();
    args[i + 1] = "-1"; // --ridge -1
    refused(&args, &out, "ridge r (-1)");
    // An existing, non-empty output directory is kept unless --force.
    let busy = t.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("keep.txt"), "x").unwrap();
    let busy_s = busy.to_str().unwrap().to_string();
    let o = gpdp().args(release_args(&good, &busy_s)).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert!(busy.join("keep.txt").exists());
    let mut args = release_args(&good, &busy_s);
    args.push("--force");
    run_ok(&args);
    assert!(!busy.join("keep.txt").exists() && busy.join("paths.csv").exists());
}

#[test]
fn demo_runs_without_files() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("demo");
    let o = gpdp().args(["demo", "--out", out.to_str().unwrap(), "--seed", "7", "--grid", "40"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("differentially private"), "{stdout}");
    // release/ is the published folder; private/ what must not be published.
    assert_eq!(files(&out.join("release")), ["excursion.geojson", "map.png", "paths.csv", "report.json"]);
    assert_eq!(files(&out.join("private")), ["comparison.png", "operator-log.json", "sensors.csv"]);
    let r: Value = serde_json::from_slice(&std::fs::read(out.join("release/report.json")).unwrap()).unwrap();
    assert!(r["privacy"]["epsilon"].as_f64().unwrap() <= 10.0);
    assert_eq!(r["sampler"]["method"], "circulant embedding + Matheron update");
    assert_eq!(r["data_policy"]["covariate_lattice"], serde_json::json!([79, 79]));
    let log: Value = serde_json::from_slice(&std::fs::read(out.join("private/operator-log.json")).unwrap()).unwrap();
    assert_eq!(log["diagnostics"]["policy"]["responses_clipped"], 0);
    // The demo's private input re-runs through `gpdp release` with the same
    // public settings and seed to the same published report and paths.
    let again = t.path().join("again");
    let eps = r["calibration"]["value"].as_f64().unwrap().to_string();
    let delta = r["privacy"]["delta"].as_f64().unwrap().to_string();
    run_ok(&[
        "release",
        "--response-bound",
        "1",
        "--data",
        out.join("private/sensors.csv").to_str().unwrap(),
        "--kernel",
        "exponential",
        "--lengthscale",
        "0.15",
        "--domain",
        "box:0,1,0,1",
        "--scale",
        "0.1",
        "--ridge",
        &eps,
        "--delta",
        &delta,
        "--grid",
        "40",
        "--covariate-lattice",
        "79",
        "--on-unbounded",
        "reject",
        "--seed",
        "7",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read(out.join("release/paths.csv")).unwrap(), std::fs::read(again.join("paths.csv")).unwrap());
}

/// `--snap`: covariates anywhere in the box are rounded to the public lattice,
/// the lattice sampler serves the grid, the report states the spacing and the
/// largest location error, and two datasets that differ in where (and how
/// many of) the covariates sit off the lattice give the same report and the
/// same file list. Bad spacings are refused naming the flag.
#[test]
fn snapping_serves_the_lattice_sampler_and_publishes_only_public_facts() {
    let t = tempfile::tempdir().unwrap();
    let off = write(t.path(), "a.csv", "x1,x2,y\n0.013,0.52,1\n0.5,0.5,-1\n0.917,0.2,0.5\n0.33,0.81,0.7\n");
    let on = write(t.path(), "b.csv", "x1,x2,y\n0,0.5,0.2\n0.5,0.5,-0.3\n1,0.25,0.5\n0.25,0.75,0.1\n");
    let mut reports = Vec::new();
    for (data, name) in [(&off, "o1"), (&on, "o2")] {
        let out = t.path().join(name).to_str().unwrap().to_string();
        let args = [
            "release",
            "--response-bound",
            "1",
            "--data",
            data.as_str(),
            "--kernel",
            "exponential",
            "--lengthscale",
            "0.3",
            "--domain",
            "box:0,1,0,1",
            "--scale",
            "1",
            "--ridge",
            "1.5",
            "--delta",
            "1e-3",
            "--grid",
            "41",
            "--out",
            &out,
            "--seed",
            "3",
        ];
        let mut with_h = args.to_vec();
        with_h.extend(["--snap", "0.025"]);
        let err = run_ok(&with_h);
        // The progress spinner is not drawn when stderr is not a terminal.
        assert!(!err.contains("drawing") && !err.contains("fitting"), "{err}");
        let r = report(&out);
        assert_eq!(r["sampler"]["method"], "circulant embedding + Matheron update", "{r}");
        assert_eq!(r["data_policy"]["covariate_lattice"], serde_json::json!([41, 41]));
        let e = r["data_policy"]["snap"]["max_location_error"].as_f64().unwrap();
        assert!((e - 0.5 * (2.0f64 * 0.025 * 0.025).sqrt()).abs() < 1e-15, "{e}");
        if name == "o1" {
            assert!(err.contains("operator note (private, not published): moved 3 covariate(s) by snapping"), "{err}");
        } else {
            assert!(!err.contains("moved"), "{err}");
        }
        reports.push((r, files(Path::new(&out))));
        // --snap grid is the same lattice here.
        let out_g = format!("{out}-grid");
        let mut with_grid = args.to_vec();
        let at = with_grid.len() - 3;
        with_grid[at] = &out_g;
        with_grid.extend(["--snap", "grid", "--quiet"]);
        run_ok(&with_grid);
        assert_eq!(report(&out_g)["data_policy"], reports.last().unwrap().0["data_policy"]);
    }
    assert_eq!(reports[0], reports[1]);
    let base = |h: &'static str, out: &str| -> Vec<String> {
        [
            "release",
            "--response-bound",
            "1",
            "--data",
            &off,
            "--kernel",
            "exponential",
            "--lengthscale",
            "0.3",
            "--domain",
            "box:0,1,0,1",
            "--scale",
            "1",
            "--ridge",
            "1.5",
            "--delta",
            "1e-3",
            "--grid",
            "41",
            "--out",
            out,
            "--snap",
            h,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let never = t.path().join("never").to_str().unwrap().to_string();
    for (h, needle) in [
        ("0.3", "snap spacing h '0.3': must divide the domain's side"),
        ("-1", "snap spacing h"),
        ("nan", "--snap nan"),
    ] {
        let args = base(h, &never);
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        refused(&args, &never, needle);
    }
}

/// Real units and named columns: `--x easting,northing --y pm25
/// --response-range 0,60 --units µg/m³` releases in data units (paths,
/// threshold), the report states range and unit, and clipping most of the
/// responses is announced loudly on stderr only (never in the report).
#[test]
fn responses_in_data_units_with_named_columns() {
    let t = tempfile::tempdir().unwrap();
    let mut csv = String::from("site,easting,northing,pm25\n");
    for i in 0..40 {
        let (e, n) = (500_000.0 + 250.0 * (i % 8) as f64, 180_000.0 + 400.0 * (i / 8) as f64);
        csv.push_str(&format!("s{i},{e},{n},{}\n", 20.0 + (i % 5) as f64 * 3.0));
    }
    let data = write(t.path(), "pm.csv", &csv);
    let run = |range: &str, out: &str| -> (String, Value) {
        let args = [
            "release",
            "--data",
            &data,
            "--x",
            "easting,northing",
            "--y",
            "pm25",
            "--response-range",
            range,
            "--units",
            "µg/m³",
            "--kernel",
            "exponential",
            "--lengthscale",
            "1500",
            "--domain",
            "box:500000,502000,180000,182000",
            "--scale",
            "3",
            "--ridge",
            "1",
            "--delta",
            "1e-3",
            "--grid",
            "12",
            "--threshold",
            "25",
            "--out",
            out,
            "--seed",
            "4",
        ];
        let err = run_ok(&args);
        (err, report(out))
    };
    let out = t.path().join("o").to_str().unwrap().to_string();
    let (err, r) = run("0,60", &out);
    assert_eq!(r["data_policy"]["response_range"], serde_json::json!({"lo": 0.0, "hi": 60.0}));
    assert_eq!(r["data_policy"]["units"], "µg/m³");
    assert!(!err.contains("WARNING"), "{err}");
    let text = std::fs::read_to_string(Path::new(&out).join("paths.csv")).unwrap();
    assert!(text.starts_with("easting,northing,path_1\n500000,180000,"), "{}", &text[..60]);
    // Values are in µg/m³: the data are 20–32, the map's median is near them, not near [−1, 1].
    let mut vals: Vec<f64> = text.lines().skip(1).map(|l| l.rsplit(',').next().unwrap().parse().unwrap()).collect();
    vals.sort_by(f64::total_cmp);
    let median = vals[vals.len() / 2];
    assert!((10.0..45.0).contains(&median), "median {median}");
    // A range that clips every response: a loud warning with the fraction, on stderr only.
    let out2 = t.path().join("o2").to_str().unwrap().to_string();
    let (err, r2) = run("0,10", &out2);
    assert!(
        err.contains("WARNING (private, not published): 40 of 40 responses (100%) were clipped to [0, 10]"),
        "{err}"
    );
    assert!(!serde_json::to_string(&r2).unwrap().contains("clipped 40"));
    // Unknown columns are named; --response-range and --response-bound exclude each other.
    let never = t.path().join("never").to_str().unwrap().to_string();
    let o = gpdp()
        .args([
            "release",
            "--response-bound",
            "1",
            "--data",
            &data,
            "--x",
            "east,northing",
            "--y",
            "pm25",
            "--kernel",
            "exponential",
        ])
        .args(["--lengthscale", "1500", "--domain", "box:500000,502000,180000,182000", "--scale", "3"])
        .args(["--ridge", "1", "--delta", "1e-3", "--grid", "12", "--out", &never])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("no covariate column 'east'"));
    let o = gpdp()
        .args(["release", "--data", &data, "--response-range", "0,60", "--response-bound", "2", "--out", &never])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));
}

/// The missing-flags message lists every missing flag and ends with an
/// example command that works as given (here on a fixture in µg/m³ and
/// British National Grid metres).
#[test]
fn missing_flags_come_with_an_example_that_runs() {
    let t = tempfile::tempdir().unwrap();
    let o = gpdp().args(["release", "--response-bound", "1", "--data", "x.csv"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success() && err.trim_end().lines().count() == 1, "{err}");
    for flag in ["--kernel", "--domain", "--ridge r (or --target-epsilon", "--scale", "--delta", "--grid", "--out DIR"]
    {
        assert!(err.contains(flag), "{flag} missing from: {err}");
    }
    let example = err.trim_end().split(" — e.g. gpdp ").nth(1).expect("an example command");
    let mut csv = String::from("easting,northing,pm25\n");
    for i in 0..50 {
        csv.push_str(&format!("{},{},{}\n", 500_100 + 190 * i, 180_200 + (i * 977) % 9_600, 15 + (i % 9) * 3));
    }
    let data = write(t.path(), "readings.csv", &csv);
    let out = t.path().join("release").to_str().unwrap().to_string();
    let args: Vec<String> = example
        .split_whitespace()
        .map(|a| match a {
            "readings.csv" => data.clone(),
            "release/" => out.clone(),
            _ => a.to_string(),
        })
        .collect();
    let o = gpdp().args(&args).arg("--seed").arg("1").output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(report(&out)["data_policy"]["units"], "µg/m³");
}

/// Reads the tags of a little-endian TIFF's first IFD: tag → values as f64.
fn tiff_tags(b: &[u8]) -> std::collections::BTreeMap<u16, Vec<f64>> {
    let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    assert_eq!(&b[0..4], b"II\x2a\x00");
    let ifd = u32_at(4) as usize;
    let mut tags = std::collections::BTreeMap::new();
    for e in 0..u16_at(ifd) as usize {
        let o = ifd + 2 + 12 * e;
        let (tag, typ, count) = (u16_at(o), u16_at(o + 2), u32_at(o + 4) as usize);
        let size = match typ {
            2 => 1,
            3 => 2,
            4 => 4,
            12 => 8,
            t => panic!("type {t}"),
        };
        let at = if size * count <= 4 { o + 8 } else { u32_at(o + 8) as usize };
        let vals = (0..count)
            .map(|k| {
                let p = at + k * size;
                match typ {
                    2 => b[p] as f64,
                    3 => u16_at(p) as f64,
                    4 => u32_at(p) as f64,
                    _ => f64::from_le_bytes(b[p..p + 8].try_into().unwrap()),
                }
            })
            .collect();
        tags.insert(tag, vals);
    }
    tags
}

/// `--crs EPSG:27700`: a GeoTIFF with one float64 band per draw, the CRS and
/// the grid's geotransform as GeoTIFF keys, values equal to paths.csv; the
/// excursion set in WGS 84 longitude/latitude inside the data's box; a
/// geographic CRS is refused for a distance-based kernel.
#[test]
fn crs_gives_a_geotiff_and_wgs84_geojson() {
    let t = tempfile::tempdir().unwrap();
    let mut csv = String::from("easting,northing,pm25\n");
    for i in 0..40 {
        let (e, n) = (500_000.0 + 250.0 * (i % 8) as f64, 180_000.0 + 400.0 * (i / 8) as f64);
        csv.push_str(&format!("{e},{n},{}\n", 10.0 + (i % 7) as f64 * 6.0));
    }
    let data = write(t.path(), "pm.csv", &csv);
    let out = t.path().join("o").to_str().unwrap().to_string();
    let args = |crs: &'static str, out: &str| -> Vec<String> {
        [
            "release",
            "--data",
            &data,
            "--x",
            "easting,northing",
            "--y",
            "pm25",
            "--response-range",
            "0,60",
            "--kernel",
            "exponential",
            "--lengthscale",
            "1500",
            "--domain",
            "box:500000,502000,180000,182000",
            "--scale",
            "3",
            "--ridge",
            "1",
            "--delta",
            "1e-3",
            "--grid",
            "9x7",
            "--draws",
            "2",
            "--threshold",
            "30",
            "--out",
            out,
            "--seed",
            "4",
            "--crs",
            crs,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let a = args("EPSG:27700", &out);
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    run_ok(&a);
    assert_eq!(
        files(Path::new(&out)),
        ["excursion.geojson", "map.png", "maps.png", "paths.csv", "paths.qml", "paths.sld", "paths.tif", "report.json"]
    );
    // The QGIS style colours band 1 over the map's range (centred on the threshold) with the map's palette.
    let qml = std::fs::read_to_string(Path::new(&out).join("paths.qml")).unwrap();
    // QGIS's files start with a DOCTYPE (no internal subset).
    let opts = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(&qml, opts).unwrap();
    let renderer = doc.descendants().find(|n| n.has_tag_name("rasterrenderer")).unwrap();
    assert_eq!((renderer.attribute("type"), renderer.attribute("band")), (Some("singlebandpseudocolor"), Some("1")));
    let items: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("item")).collect();
    assert_eq!(items.len(), 11);
    assert_eq!(items[0].attribute("color"), Some("#053061"));
    let v = |n: &roxmltree::Node| n.attribute("value").unwrap().parse::<f64>().unwrap();
    assert!(((v(&items[0]) + v(&items[10])) / 2.0 - v(&items[5])).abs() < 1e-9);
    let sld = std::fs::read_to_string(Path::new(&out).join("paths.sld")).unwrap();
    let doc = roxmltree::Document::parse(&sld).unwrap();
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("ColorMapEntry")).count(), 11);
    let tags = tiff_tags(&std::fs::read(Path::new(&out).join("paths.tif")).unwrap());
    assert_eq!((tags[&256][0], tags[&257][0], tags[&277][0]), (9.0, 7.0, 2.0));
    assert_eq!(tags[&339], vec![3.0, 3.0]); // IEEE float samples
    assert_eq!(tags[&33550][..2], [250.0, 2000.0 / 6.0]); // pixel size
    assert_eq!(tags[&33922][3..5], [500_000.0, 182_000.0]); // tie point: top-left grid point
    let keys: Vec<u16> = tags[&34735].iter().map(|&v| v as u16).collect();
    assert!(keys.windows(4).any(|w| w == [3072, 0, 1, 27700]), "{keys:?}");
    assert!(keys.windows(4).any(|w| w == [1025, 0, 1, 2]), "PixelIsPoint: {keys:?}");
    // GDAL's metadata tag: each band described, 1-based, with the unit (none given here).
    let meta: String = tags[&42112].iter().map(|&c| c as u8 as char).collect();
    assert!(meta.starts_with("<GDALMetadata>") && meta.ends_with("</GDALMetadata>\n\0"), "{meta}");
    for b in 0..2 {
        let item =
            format!("<Item name=\"DESCRIPTION\" sample=\"{b}\" role=\"description\">released path {}</Item>", b + 1);
        assert!(meta.contains(&item), "{meta}");
    }
    assert!(!meta.contains("UNITTYPE"), "{meta}");
    let report: Value = serde_json::from_slice(&std::fs::read(Path::new(&out).join("report.json")).unwrap()).unwrap();
    assert_eq!(report["crs"]["code"], "EPSG:27700");
    assert_eq!(report["crs"]["name"], "OSGB 1936 / British National Grid");
    assert_eq!(report["crs"]["unit"], "m");
    assert_eq!(report["crs"]["axes"], serde_json::json!(["easting", "northing"]));
    // Values: band b at row r (from the top), column c equals path b+1 at (c, 6 − r).
    let b = std::fs::read(Path::new(&out).join("paths.tif")).unwrap();
    let off = tags[&273][0] as usize;
    let text = std::fs::read_to_string(Path::new(&out).join("paths.csv")).unwrap();
    let rows: Vec<Vec<f64>> =
        text.lines().skip(1).map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    for r in 0..7 {
        for c in 0..9 {
            for band in 0..2 {
                let p = off + 8 * (2 * (9 * r + c) + band);
                let v = f64::from_le_bytes(b[p..p + 8].try_into().unwrap());
                assert_eq!(v, rows[c + 9 * (6 - r)][2 + band]);
            }
        }
    }
    let gj: Value = serde_json::from_slice(&std::fs::read(Path::new(&out).join("excursion.geojson")).unwrap()).unwrap();
    let coords = gj.to_string();
    assert!(coords.contains("WGS 84 longitude/latitude"), "{coords}");
    let mut lon_lat = Vec::new();
    fn walk(v: &Value, out: &mut Vec<[f64; 2]>) {
        match v.as_array() {
            Some(a) if a.len() == 2 && a[0].is_f64() => out.push([a[0].as_f64().unwrap(), a[1].as_f64().unwrap()]),
            Some(a) => a.iter().for_each(|x| walk(x, out)),
            None => {}
        }
    }
    for f in gj["features"].as_array().unwrap() {
        walk(&f["geometry"]["coordinates"], &mut lon_lat);
    }
    assert!(!lon_lat.is_empty());
    // The box's corners, BNG (500 000, 180 000) and (502 000, 182 000), are at about
    // (−0.5604°, 51.5098°) and (−0.5310°, 51.5279°) (OSGB 1936 → WGS 84).
    assert!(
        lon_lat.iter().all(|&[lon, lat]| (-0.5625..-0.5285).contains(&lon) && (51.5085..51.5295).contains(&lat)),
        "{lon_lat:?}"
    );
    let never = t.path().join("never").to_str().unwrap().to_string();
    let a = args("EPSG:4326", &never);
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    refused(&a, &never, "is geographic");
}

/// The README's "Publish a map from your data" walkthrough runs as written
/// on the shipped fixtures (`examples/readings.csv`: 300 synthetic PM2.5
/// readings in µg/m³ on British National Grid metres; `examples/last-year.csv`:
/// 600 proxy readings): plan → ledger init → release → ledger show.
#[test]
fn readme_walkthrough_runs_as_written() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let start = readme.find("gpdp plan --proxy last-year.csv").expect("the walkthrough block");
    let block = &readme[start..readme[start..].find("```").map(|e| start + e).unwrap()];
    let commands: Vec<String> = block
        .replace("\\\n", " ")
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("gpdp "))
        .map(String::from)
        .collect();
    assert_eq!(commands.len(), 4, "{commands:?}");
    let t = tempfile::tempdir().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/readings.csv");
    let proxy = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/last-year.csv");
    let mut last = String::new();
    for c in &commands {
        let args: Vec<&str> = c
            .split_whitespace()
            .skip(1)
            .map(|a| match a {
                "readings.csv" => fixture,
                "last-year.csv" => proxy,
                _ => a,
            })
            .collect();
        let mut cmd = gpdp();
        cmd.current_dir(t.path()).args(&args);
        if args[0] == "release" || args[0] == "plan" {
            cmd.arg("--quiet");
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{c}: {}", String::from_utf8_lossy(&o.stderr));
        last = String::from_utf8_lossy(&o.stdout).to_string();
    }
    let plan: Value = serde_json::from_slice(&std::fs::read(t.path().join("plan/plan.json")).unwrap()).unwrap();
    for f in ["utility.png", "utility.csv"] {
        assert!(t.path().join("plan").join(f).exists(), "{f}");
    }
    let out = t.path().join("map-eps1");
    let r = report(out.to_str().unwrap());
    assert_eq!(r["data_policy"]["units"], "µg/m³");
    assert!(r["privacy"]["epsilon"].as_f64().unwrap() <= 1.0);
    // The release took its hyperparameters from the plan.
    let c = &r["privacy"]["components"][0];
    assert_eq!(c["lengthscale"], plan["fit"]["hyper"]["lengthscale"]);
    assert_eq!(c["scale"], plan["fit"]["hyper"]["scale"]);
    assert_eq!(c["kernel"], "matern32");
    assert_eq!(r["sampler"]["method"], "circulant embedding + Matheron update");
    for f in ["paths.tif", "paths.qml", "paths.sld", "excursion.geojson", "map.png"] {
        assert!(out.join(f).exists(), "{f}");
    }
    assert!(
        last.contains("pm25-2026: budget ε = 11") && last.contains("by 1 release(s)") && last.contains("committed"),
        "{last}"
    );
}

/// `--crs EPSG:4326 --reproject-to EPSG:27700`: covariates given in
/// longitude/latitude are reprojected before the mechanism, and the release
/// equals the one made from the same records in BNG metres (same seed).
#[test]
fn geographic_covariates_are_reprojected_before_the_mechanism() {
    use proj4rs::proj::Proj;
    let t = tempfile::tempdir().unwrap();
    let bng = Proj::from_proj_string(crs_definitions::EPSG_27700.proj4).unwrap();
    let wgs = Proj::from_proj_string(crs_definitions::EPSG_4326.proj4).unwrap();
    let (mut metres, mut degrees) = (String::from("e,n,y\n"), String::from("lon,lat,y\n"));
    for i in 0..30 {
        let (e, n) = (500_100.0 + 63.0 * i as f64, 180_150.0 + (i * 571 % 1_700) as f64);
        let y = ((i % 7) as f64 - 3.0) / 3.0;
        metres.push_str(&format!("{e},{n},{y}\n"));
        let mut p = (e, n, 0.0);
        proj4rs::transform::transform(&bng, &wgs, &mut p).unwrap();
        degrees.push_str(&format!("{},{},{y}\n", p.0.to_degrees(), p.1.to_degrees()));
    }
    let (dm, dd) = (write(t.path(), "m.csv", &metres), write(t.path(), "d.csv", &degrees));
    let run = |data: &str, x: &str, extra: &[&str], out: &str| {
        let mut a = vec![
            "release",
            "--response-bound",
            "1",
            "--data",
            data,
            "--x",
            x,
            "--kernel",
            "exponential",
            "--lengthscale",
            "800",
            "--domain",
            "box:500000,502000,180000,182000",
            "--scale",
            "1",
            "--ridge",
            "1",
            "--delta",
            "1e-3",
            "--grid",
            "8",
            "--out",
            out,
            "--seed",
            "9",
        ];
        a.extend_from_slice(extra);
        run_ok(&a);
        std::fs::read_to_string(Path::new(out).join("paths.csv")).unwrap()
    };
    let (o1, o2) = (t.path().join("o1"), t.path().join("o2"));
    let a = run(&dm, "e,n", &["--crs", "EPSG:27700"], o1.to_str().unwrap());
    let b = run(&dd, "lon,lat", &["--crs", "EPSG:4326", "--reproject-to", "EPSG:27700"], o2.to_str().unwrap());
    let vals =
        |s: &str| -> Vec<f64> { s.lines().skip(1).map(|l| l.rsplit(',').next().unwrap().parse().unwrap()).collect() };
    let (va, vb) = (vals(&a), vals(&b));
    assert_eq!(va.len(), 64);
    // The datum shift (OSGB 1936 ↔ WGS 84, 7-parameter Helmert) round-trips to
    // well under a millimetre; with ℓ = 800 m that moves the values by ~1e-6.
    for (x, y) in va.iter().zip(&vb) {
        assert!((x - y).abs() < 1e-4, "{x} vs {y}");
    }
    assert!(o2.join("paths.tif").exists());
    // The reprojected coordinates are named for the target CRS, not the data's lon,lat columns.
    assert!(a.starts_with("e,n,path_1\n") && b.starts_with("easting,northing,path_1\n"), "{}", &b[..40]);
    let r: Value = serde_json::from_slice(&std::fs::read(o2.join("report.json")).unwrap()).unwrap();
    assert_eq!((&r["crs"]["code"], &r["crs"]["reprojected_from"]), (&"EPSG:27700".into(), &"EPSG:4326".into()));
    // Every output is in the target CRS, as the first release's are: the
    // GeoTIFF's georeference (the values differ by the datum round trip),
    // and GeoJSON in lon/lat degrees near (−0.53, 51.5).
    let (t1, t2) = (
        tiff_tags(&std::fs::read(o1.join("paths.tif")).unwrap()),
        tiff_tags(&std::fs::read(o2.join("paths.tif")).unwrap()),
    );
    for tag in [33550, 33922, 34735] {
        assert_eq!(t1[&tag], t2[&tag], "GeoTIFF tag {tag}");
    }
    let gj: Value = serde_json::from_slice(&std::fs::read(o2.join("excursion.geojson")).unwrap()).unwrap();
    let mut n = 0;
    for f in gj["features"].as_array().unwrap() {
        for poly in f["geometry"]["coordinates"].as_array().unwrap() {
            for ring in poly.as_array().unwrap() {
                for p in ring.as_array().unwrap() {
                    let (lon, lat) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
                    assert!((-0.6..-0.45).contains(&lon) && (51.4..51.6).contains(&lat), "{lon}, {lat}");
                    n += 1;
                }
            }
        }
    }
    assert!(n > 0, "the excursion set is empty: {gj}");
    // Without --reproject-to a geographic CRS is refused for this kernel.
    let never = t.path().join("never").to_str().unwrap().to_string();
    let o = gpdp()
        .args([
            "release",
            "--response-bound",
            "1",
            "--data",
            &dd,
            "--x",
            "lon,lat",
            "--kernel",
            "exponential",
            "--lengthscale",
            "800",
        ])
        .args(["--domain", "box:500000,502000,180000,182000", "--scale", "1", "--ridge", "1", "--delta", "1e-3"])
        .args(["--grid", "8", "--out", &never, "--crs", "EPSG:4326"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("give --reproject-to a projected CRS"));
}

/// A geographic --crs is allowed for kernels without a distance scale (here
/// constant): excursion.geojson is then the grid's own longitudes and
/// latitudes (degrees in, degrees out), inside the data's box.
#[test]
fn a_geographic_crs_gives_geojson_in_the_same_degrees() {
    let t = tempfile::tempdir().unwrap();
    let mut body = String::from("lon,lat,y\n");
    for i in 0..20 {
        let (lon, lat) = (-1.9 + 0.04 * (i % 5) as f64, 52.1 + 0.05 * (i / 5) as f64);
        body.push_str(&format!("{lon},{lat},{}\n", if i % 3 == 0 { 0.9 } else { -0.2 }));
    }
    let data = write(t.path(), "d.csv", &body);
    let out = t.path().join("o");
    run_ok(&[
        "release",
        "--response-bound",
        "1",
        "--data",
        &data,
        "--x",
        "lon,lat",
        "--kernel",
        "constant",
        "--domain",
        "box:-2,-1.7,52,52.3",
        "--scale",
        "1",
        "--ridge",
        "0.2",
        "--delta",
        "1e-3",
        "--grid",
        "10",
        "--threshold",
        "-5",
        "--crs",
        "EPSG:4326",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    let gj: Value = serde_json::from_slice(&std::fs::read(out.join("excursion.geojson")).unwrap()).unwrap();
    let mut n = 0;
    for poly in gj["features"][0]["geometry"]["coordinates"].as_array().unwrap() {
        for ring in poly.as_array().unwrap() {
            for p in ring.as_array().unwrap() {
                let (lon, lat) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
                assert!((-2.0001..=-1.6999).contains(&lon) && (51.9999..=52.3001).contains(&lat), "{lon}, {lat}");
                n += 1;
            }
        }
    }
    assert!(n >= 4, "{gj}");
}

/// `gpdp release --relation change-response`: report.json states the
/// relation (field and sentence) and the exact Gaussian ε that `gpdp account`
/// gives with the data's covariates; `--covariates` must equal the data's
/// covariates; `--covariates` with replace-one, and an unknown relation, are
/// refused; a ledger records and composes the release; `--target-epsilon`
/// calibrates under the relation. Nothing is written by a refused run.
#[test]
fn change_response_release_states_its_relation_and_refuses_other_covariates() {
    let t = tempfile::tempdir().unwrap();
    let data = write(t.path(), "d.csv", DATA_1D);
    let same = write(t.path(), "x.csv", "x\n0.1\n0.3\n0.35\n0.6\n0.9\n");
    let moved = write(t.path(), "moved.csv", "x\n0.1\n0.3\n0.36\n0.6\n0.9\n");
    let out = t.path().join("o").to_str().unwrap().to_string();
    let mut args = release_args(&data, &out);
    args.extend(["--relation", "change-response", "--seed", "3"]);
    run_ok(&args);
    let r = report(&out);
    assert_eq!(r["neighbouring_relation"], "change-one-response, covariates public");
    let statement = r["statement"].as_str().unwrap();
    assert!(statement.contains("protects each reading") && statement.contains("treated as public"), "{statement}");
    let eps = r["privacy"]["epsilon"].as_f64().unwrap();
    assert_eq!(r["privacy"]["gaussian"]["covariates"], 5);
    let acc = gpdp()
        .args(["account", "--relation", "change-response", "--covariates", &same, "--kernel", "exponential"])
        .args(["--lengthscale", "0.3", "--domain", "interval:0,1", "--scale", "0.5", "--ridge", "1"])
        .args(["--delta", "1e-3", "--draws", "2", "--json"])
        .output()
        .unwrap();
    assert!(acc.status.success(), "{}", String::from_utf8_lossy(&acc.stderr));
    let acc: Value = serde_json::from_slice(&acc.stdout).unwrap();
    assert_eq!(acc["epsilon"].as_f64().unwrap(), eps);
    // The replace-one release of the same parameters states its relation and a larger ε.
    let out1 = t.path().join("o1").to_str().unwrap().to_string();
    let mut a1 = release_args(&data, &out1);
    a1.extend(["--seed", "3"]);
    run_ok(&a1);
    let r1 = report(&out1);
    assert_eq!(r1["neighbouring_relation"], "replace-one, n public");
    assert!(r1["statement"].as_str().unwrap().contains("protects each record"));
    assert!(r1["privacy"]["epsilon"].as_f64().unwrap() > eps);
    // --covariates equal to the data's: accepted, same ε.
    let out2 = t.path().join("o2").to_str().unwrap().to_string();
    let mut a2 = release_args(&data, &out2);
    a2.extend(["--relation", "change-response", "--covariates", &same, "--seed", "3"]);
    run_ok(&a2);
    assert_eq!(report(&out2)["privacy"]["epsilon"].as_f64().unwrap(), eps);
    // Refusals, each leaving no output.
    let out3 = t.path().join("o3").to_str().unwrap().to_string();
    let mut a3 = release_args(&data, &out3);
    a3.extend(["--relation", "change-response", "--covariates", &moved]);
    refused(&a3, &out3, "--data row 3: covariates (0.35) differ from --covariates");
    let mut a4 = release_args(&data, &out3);
    a4.extend(["--covariates", &same]);
    refused(&a4, &out3, "only --relation change-response uses");
    let mut a5 = release_args(&data, &out3);
    a5.extend(["--relation", "swap"]);
    refused(&a5, &out3, "expected replace-one or change-response");
    // --force never deletes the --covariates input inside --out.
    let inside = t.path().join("keep");
    std::fs::create_dir(&inside).unwrap();
    let kept = write(&inside, "x.csv", "x\n0.1\n0.3\n0.35\n0.6\n0.9\n");
    let keep = inside.to_str().unwrap().to_string();
    let mut a8 = release_args(&data, &keep);
    a8.extend(["--relation", "change-response", "--covariates", &kept, "--force"]);
    let o = gpdp().args(&a8).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--covariates"), "{o:?}");
    assert!(Path::new(&kept).exists(), "--force deleted the --covariates input");
    let short = write(t.path(), "short.csv", "x\n0.1\n0.3\n");
    let mut a6 = release_args(&data, &out3);
    a6.extend(["--relation", "change-response", "--covariates", &short]);
    refused(&a6, &out3, "2 rows of dimension 1, but --data has 5 records");
    // Calibrated under the relation, recorded in a ledger that composes it.
    let ledger = t.path().join("l.sqlite").to_str().unwrap().to_string();
    run_ok(&["ledger", "init", "--ledger", &ledger, "--dataset", "d", "--epsilon", "5", "--delta", "1e-3"]);
    let out4 = t.path().join("o4").to_str().unwrap().to_string();
    let mut a7 = release_args(&data, &out4);
    let at = a7.iter().position(|a| *a == "--ridge").unwrap();
    a7.drain(at..at + 2);
    a7.extend(["--relation", "change-response", "--target-epsilon", "2", "--ledger", &ledger, "--dataset", "d"]);
    run_ok(&a7);
    let r4 = report(&out4);
    assert!(r4["privacy"]["epsilon"].as_f64().unwrap() <= 2.0 && r4["privacy"]["epsilon"].as_f64().unwrap() > 1.99);
    assert_eq!(r4["neighbouring_relation"], "change-one-response, covariates public");
    let show = gpdp().args(["ledger", "show", "--ledger", &ledger, "--json"]).output().unwrap();
    assert!(show.status.success(), "{}", String::from_utf8_lossy(&show.stderr));
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(show.contains("change-one-response") && show.contains("gaussian_mu"), "{show}");
    let text = gpdp().args(["ledger", "show", "--ledger", &ledger]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("holds for change-one-response neighbours") && text.contains("distance μ ="), "{text}");
}

/// `--scale 0 --gp-noise η` under replace-one: the data-free-noise release
/// gets the exact Gaussian statement, equal to `gpdp account`'s, below the
/// Rényi route at a tiny σ; σ = η = 0 is refused.
#[test]
fn data_free_noise_gets_the_exact_gaussian_statement() {
    let t = tempfile::tempdir().unwrap();
    let data = write(t.path(), "d.csv", DATA_1D);
    let out = t.path().join("o").to_str().unwrap().to_string();
    let mut args = release_args(&data, &out);
    let at = args.iter().position(|a| *a == "--scale").unwrap();
    args[at + 1] = "0";
    args.extend(["--gp-noise", "0.5", "--seed", "1"]);
    run_ok(&args);
    let r = report(&out);
    assert_eq!(r["neighbouring_relation"], "replace-one, n public");
    assert!(r["privacy"]["gaussian"]["mu"].as_f64().unwrap() > 0.0);
    let eps = r["privacy"]["epsilon"].as_f64().unwrap();
    let account = |scale: &str| -> f64 {
        let o = gpdp()
            .args(["account", "--kernel", "exponential", "--lengthscale", "0.3", "--domain", "interval:0,1"])
            .args([
                "--n",
                "5",
                "--ridge",
                "1",
                "--scale",
                scale,
                "--gp-noise",
                "0.5",
                "--delta",
                "1e-3",
                "--draws",
                "2",
            ])
            .arg("--json")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["epsilon"].as_f64().unwrap()
    };
    assert_eq!(account("0"), eps);
    assert!(account("1e-9") > eps);
    // `gpdp calibrate` with σ = 0: the smallest ridge for ε ≤ 5, certified in `gpdp account`.
    let o = gpdp()
        .args(["calibrate", "--solve", "ridge", "--target-epsilon", "5", "--delta", "1e-3", "--kernel", "exponential"])
        .args(["--lengthscale", "0.3", "--domain", "interval:0,1", "--n", "5", "--scale", "0", "--gp-noise", "0.5"])
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["report"]["neighbouring_relation"], "replace-one, n public");
    let ridge = c["value"].as_f64().unwrap().to_string();
    let at = |r: &str| -> f64 {
        let o = gpdp()
            .args([
                "account",
                "--kernel",
                "exponential",
                "--lengthscale",
                "0.3",
                "--domain",
                "interval:0,1",
                "--n",
                "5",
            ])
            .args(["--ridge", r, "--scale", "0", "--gp-noise", "0.5", "--delta", "1e-3", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["epsilon"].as_f64().unwrap()
    };
    let r: f64 = ridge.parse().unwrap();
    assert!(at(&ridge) <= 5.0 && at(&(r * 0.999).to_string()) > 5.0, "ridge {ridge}");
    let out2 = t.path().join("o2").to_str().unwrap().to_string();
    let mut none = release_args(&data, &out2);
    let at = none.iter().position(|a| *a == "--scale").unwrap();
    none[at + 1] = "0";
    refused(&none, &out2, "or 0 with GP noise η > 0");
}

/// Issue 38, item 8: `--log DIR` where DIR holds --data is refused saying that --log names a
/// file, not that anything would be deleted; nothing is written.
#[test]
fn a_log_folder_holding_the_data_is_refused_as_not_a_file() {
    let t = tempfile::tempdir().unwrap();
    let data = write(t.path(), "d.csv", "x,y\n0.1,0.2\n0.5,-0.3\n0.9,0.4\n");
    let out = t.path().join("out");
    let o = gpdp()
        .args(["release", "--data", &data, "--response-bound", "1", "--kernel", "exponential"])
        .args(["--lengthscale", "0.3", "--domain", "interval:0,1", "--scale", "1", "--ridge", "1"])
        .args(["--delta", "1e-3", "--grid", "5", "--seed", "1", "--quiet"])
        .args(["--out", out.to_str().unwrap(), "--log", t.path().to_str().unwrap()])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("--log") && e.contains("is a folder") && e.contains("names a FILE to write"), "{e}");
    assert!(!e.contains("deleting"), "{e}");
    assert!(!out.exists());
    assert_eq!(files(t.path()), ["d.csv"]);
}

/// Issue 40 item 1: σ means one thing, the prior sd in the responses' units, under both
/// response flags. Its meaning is stated (report.json's data_policy.scale_meaning); a σ tiny
/// against the response scale is warned about under either flag, naming the fix; and the same
/// σ gives the same release under `--response-bound 60` and `--response-range -60,60` (the
/// same ε, the same paths), and under `--response-range 0,120` the same paths shifted by 60.
#[test]
fn sigma_units_are_stated_and_the_two_response_flags_agree() {
    let t = tempfile::tempdir().unwrap();
    let mut csv = String::from("x,y\n");
    for i in 0..12 {
        csv.push_str(&format!("{},{}\n", 0.04 + 0.08 * i as f64, 20.0 + 25.0 * ((i * 7 % 12) as f64 / 11.0)));
    }
    let data = write(t.path(), "d.csv", &csv);
    let shifted = write(
        t.path(),
        "shifted.csv",
        &csv.lines()
            .enumerate()
            .map(|(i, l)| match (i, l.split_once(',')) {
                (0, _) | (_, None) => format!("{l}\n"),
                (_, Some((x, y))) => format!("{x},{}\n", y.parse::<f64>().unwrap() + 60.0),
            })
            .collect::<String>(),
    );
    let run = |data: &str, scale: &str, flags: [&str; 2], out: &str| {
        gpdp()
            .args(["release", "--data", data, "--kernel", "matern32", "--lengthscale", "0.2"])
            .args(["--domain", "interval:0,1", "--scale", scale, "--ridge", "1", "--delta", "1e-5"])
            .args(["--grid", "21", "--seed", "7", "--quiet", "--out", t.path().join(out).to_str().unwrap()])
            .args(flags)
            .output()
            .unwrap()
    };
    for (flags, out, mean) in
        [(["--response-bound", "60"], "tiny", 0.0), (["--response-range", "0,120"], "tiny-range", 60.0)]
    {
        let o = run(&data, "0.5", flags, out);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{e}");
        assert!(e.contains("only 0.008 of") && e.contains("--scale 30"), "{flags:?}: {e}");
        let r: Value = serde_json::from_slice(&std::fs::read(t.path().join(out).join("report.json")).unwrap()).unwrap();
        assert_eq!(r["data_policy"]["scale_meaning"]["prior_mean"], mean);
        assert_eq!(r["data_policy"]["scale_meaning"]["sigma_unit"], 1.0);
    }
    // The same σ = 30: the same mechanism through both flags.
    let a = run(&data, "30", ["--response-bound", "60"], "bound");
    let b = run(&data, "30", ["--response-range", "-60,60"], "range");
    let c = run(&shifted, "30", ["--response-range", "0,120"], "range-shifted");
    for o in [&a, &b, &c] {
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && !e.contains("warning: σ"), "{e}");
    }
    let report = |d: &str| -> Value {
        serde_json::from_slice(&std::fs::read(t.path().join(d).join("report.json")).unwrap()).unwrap()
    };
    let eps: Vec<f64> =
        ["bound", "range", "range-shifted"].iter().map(|d| report(d)["privacy"]["epsilon"].as_f64().unwrap()).collect();
    assert_eq!((eps[0], eps[0]), (eps[1], eps[2]), "the same ε");
    assert!(report("range")["data_policy"]["scale_meaning"]["note"].as_str().unwrap().contains("prior sd of 30"));
    let vals = |d: &str| -> Vec<f64> {
        std::fs::read_to_string(t.path().join(d).join("paths.csv"))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
            .collect()
    };
    let (vb, vr, vs) = (vals("bound"), vals("range"), vals("range-shifted"));
    assert_eq!(vb.len(), 21);
    assert_eq!(vb, vr, "the same released values");
    for (x, y) in vb.iter().zip(&vs) {
        assert!((x + 60.0 - y).abs() <= 1e-9 * 60.0, "{x} + 60 vs {y}");
    }
}

/// Issue 40 item 3: a lattice release whose embedding needs a large torus (ℓ = 7 km against a
/// 10 km box) announces its estimated memory and time on stderr before sampling, and one
/// beyond the memory limit is refused before the torus is allocated, naming the flags that
/// help; nothing is written.
#[test]
fn a_large_torus_is_announced_and_refused_beyond_memory() {
    let t = tempfile::tempdir().unwrap();
    let readings = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/readings.csv");
    let run = |grid: &str, limit: Option<&str>, out: &Path| {
        let mut c = gpdp();
        c.args(["release", "--data", readings, "--x", "easting,northing", "--y", "pm25"])
            .args(["--response-range", "0,40", "--kernel", "matern32", "--lengthscale", "7000"])
            .args(["--domain", "box:500000,510000,180000,190000", "--scale", "0.5", "--ridge", "2"])
            .args(["--delta", "1e-5", "--grid", grid, "--snap", "grid", "--seed", "1", "--quiet"])
            .args(["--out", out.to_str().unwrap()]);
        if let Some(l) = limit {
            c.env("GPDP_MEMORY_LIMIT", l);
        }
        c.output().unwrap()
    };
    let out = t.path().join("big");
    let o = run("180", None, &out);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    let announced = e.lines().position(|l| l.contains("torus — about") && l.contains("GiB and")).expect(&e);
    let done = e.lines().position(|l| l.contains("sampling") && l.contains(" s")).expect(&e);
    assert!(announced < done, "{e}");
    let r: Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let torus = r["sampler"]["torus"][0].as_u64().unwrap();
    assert!(torus >= 2880, "{r}");
    assert!(e.contains(&format!("on a {torus} × {torus} torus")), "{e}");
    // Beyond the memory limit: refused before allocating, with the flags that help.
    let never = t.path().join("never");
    let o = run("180", Some("200M"), &never);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("circulant embedding") && e.contains("GPDP_MEMORY_LIMIT") && e.contains("coarser --grid"),
        "{e}"
    );
    assert!(!never.exists());
}

/// Issue 26 (GIS): `--resolution R` gives nodes exactly R apart (paths.tif's pixel size is R),
/// and a spacing that does not divide the domain is refused naming ones that do.
#[test]
fn resolution_gives_exact_pixels() {
    let t = tempfile::tempdir().unwrap();
    let readings = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/readings.csv");
    // The readings south of 186 km N, for a domain 10 km × 6 km.
    let text = std::fs::read_to_string(readings).unwrap();
    let mut kept = String::from("site,easting,northing,pm25\n");
    for l in text.lines().skip(1) {
        let n: f64 = l.split(',').nth(2).unwrap().parse().unwrap();
        if n <= 186_000.0 {
            kept.push_str(l);
            kept.push('\n');
        }
    }
    let data = write(t.path(), "south.csv", &kept);
    let run = |res: &str, out: &Path| {
        gpdp()
            .args(["release", "--data", &data, "--x", "easting,northing", "--y", "pm25"])
            .args(["--response-range", "0,40", "--kernel", "matern32", "--lengthscale", "800"])
            .args(["--domain", "box:500000,510000,180000,186000", "--scale", "0.5", "--ridge", "2"])
            .args(["--delta", "1e-5", "--resolution", res, "--snap", "grid", "--seed", "1", "--quiet"])
            .args(["--crs", "EPSG:27700", "--out", out.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let out = t.path().join("r250");
    let o = run("250", &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(r["query"]["counts"], serde_json::json!([41, 25]), "{}", r["query"]);
    let tags = tiff_tags(&std::fs::read(out.join("paths.tif")).unwrap());
    assert_eq!(tags[&33550][..2], [250.0, 250.0]);
    let bad = t.path().join("r300");
    let o = run("300", &bad);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("not a whole number of 300") && e.contains("e.g."), "{e}");
    assert!(!bad.exists());
}
