//! GIS acceptance: GDAL and shapely read the outputs of `gpdp release --crs
//! EPSG:CODE` correctly — paths.tif's CRS, geotransform (PixelIsPoint) and
//! values (= paths.csv, located by coordinate), excursion.geojson as valid
//! lon/lat polygons inside the data's box, map.png with its world file and
//! CRS. The checks are `scripts/ci/check_gis.py`, run by a Python that has
//! rasterio, pyogrio and shapely (binary wheels; .ci/run makes one):
//!
//! ```sh
//! python3 -m venv target/ci-venv
//! target/ci-venv/bin/pip install --only-binary :all: 'numpy==2.*' 'rasterio==1.*' 'pyogrio==0.*' 'shapely==2.*'
//! GPDP_GIS_PYTHON=$PWD/target/ci-venv/bin/python cargo test --release --workspace --test cli -- cli_gis:: --ignored
//! ```
//!
//! (from the workspace root; GPDP_GIS_PYTHON must be absolute, as the tests
//! run in crates/gpdp-cli). The tests are `#[ignore]`d so that `cargo test`
//! needs no Python; with `--ignored` and no GPDP_GIS_PYTHON they fail, saying
//! so. `GPDP_BIN=/path/to/gpdp` checks another build.
//!
//! Independently of Python, the default run decodes paths.tif with the
//! `tiff` crate and compares it with paths.csv (`*_geotiff_decodes_to_paths_csv`).

use std::path::{Path, PathBuf};
use std::process::Command;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/readings.csv");
const CHECK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/ci/check_gis.py");

fn gpdp() -> Command {
    let bin = std::env::var_os("GPDP_BIN").map(PathBuf::from).unwrap_or_else(|| assert_cmd::cargo::cargo_bin("gpdp"));
    Command::new(bin)
}

fn python() -> PathBuf {
    match std::env::var_os("GPDP_GIS_PYTHON") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            // A bare name is looked up on PATH; a relative path would be taken from crates/gpdp-cli.
            assert!(
                p.is_absolute() || p.components().count() == 1,
                "GPDP_GIS_PYTHON={} must be an absolute path (the tests run in crates/gpdp-cli)",
                p.display()
            );
            p
        }
        _ => panic!(
            "GPDP_GIS_PYTHON is unset: set it to a Python with rasterio, pyogrio and shapely, e.g.\n  \
             python3 -m venv target/ci-venv && target/ci-venv/bin/pip install --only-binary :all: 'numpy==2.*' \
             'rasterio==1.*' 'pyogrio==0.*' 'shapely==2.*'\n  \
             GPDP_GIS_PYTHON=$PWD/target/ci-venv/bin/python cargo test --release --workspace --test cli -- cli_gis:: --ignored"
        ),
    }
}

/// `gpdp release` of the fixture's PM2.5 readings (µg/m³) on the BNG box
/// 500–510 km E × 180–190 km N, seeded, with `extra` flags, into `out`.
fn release(data: &str, x: &str, grid: &str, draws: &str, threshold: &str, extra: &[&str], out: &Path) {
    let o = gpdp()
        .args(["release", "--data", data, "--x", x, "--y", "pm25", "--response-range", "0,60", "--units", "µg/m³"])
        .args(["--kernel", "matern32", "--lengthscale", "2000", "--domain", "box:500000,510000,180000,190000"])
        .args(["--scale", "30", "--target-epsilon", "1", "--delta", "1e-5", "--snap", "grid", "--grid", grid])
        .args(["--draws", draws, "--threshold", threshold, "--seed", "7", "--quiet", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "gpdp release failed: {}", String::from_utf8_lossy(&o.stderr));
}

/// Runs check_gis.py on the release folder `out` and fails with its report.
fn check_gis(out: &Path, args: &[&str]) {
    let py = python();
    let o = Command::new(&py)
        .arg(CHECK)
        .arg(out)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running GPDP_GIS_PYTHON={}: {e}", py.display()));
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(
        o.status.success(),
        "scripts/ci/check_gis.py {} {args:?} failed ({}):\n{stdout}\n{stderr}",
        out.display(),
        o.status
    );
    println!("{stdout}");
}

/// The README's kind of release: three draws (three bands) on a 60 × 40 grid
/// of the fixture, threshold 25 µg/m³ inside the data's range.
#[test]
#[ignore = "needs GPDP_GIS_PYTHON (rasterio, pyogrio, shapely); see the module doc"]
fn gdal_and_shapely_read_the_gis_outputs() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("rel");
    release(FIXTURE, "easting,northing", "60x40", "3", "25", &["--crs", "EPSG:27700"], &out);
    check_gis(&out, &["--crs", "EPSG:27700", "--draws", "3", "--data", FIXTURE, "--x", "easting,northing"]);
}

/// One draw (a single-band GeoTIFF, written without ExtraSamples) on a grid
/// taller than wide (25 × 50), another threshold.
#[test]
#[ignore = "needs GPDP_GIS_PYTHON (rasterio, pyogrio, shapely); see the module doc"]
fn gdal_and_shapely_read_a_one_band_portrait_release() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("rel");
    release(FIXTURE, "easting,northing", "25x50", "1", "20", &["--crs", "EPSG:27700"], &out);
    check_gis(&out, &["--crs", "EPSG:27700", "--draws", "1", "--data", FIXTURE, "--x", "easting,northing"]);
}

/// The fixture's readings given in WGS 84 longitude/latitude and reprojected
/// to BNG (`--crs EPSG:4326 --reproject-to EPSG:27700`): the domain, grid and
/// every output are in EPSG:27700, the data's box is checked in EPSG:4326.
///
/// Fails on gpdp 0.1.0 (bb36b12): the outputs are labelled with the *source*
/// CRS — paths.tif, map.png and map.prj say EPSG:4326 while holding BNG
/// metres, and excursion.geojson's "longitudes/latitudes" are ~2.9e7/1.0e7
/// (metres reprojected as if they were lon/lat) — because
/// `commands/release.rs` passes `a.crs` rather than the reprojection target
/// to `write_release` (fixed: the outputs carry the target CRS).
#[test]
#[ignore = "needs GPDP_GIS_PYTHON (rasterio, pyogrio, shapely); see the module doc"]
fn reprojected_release_gis_outputs_are_in_the_target_crs() {
    use proj4rs::proj::Proj;
    let t = tempfile::tempdir().unwrap();
    let bng = Proj::from_proj_string(crs_definitions::EPSG_27700.proj4).unwrap();
    let wgs = Proj::from_proj_string(crs_definitions::EPSG_4326.proj4).unwrap();
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (ie, inn, iy) = (col("easting"), col("northing"), col("pm25"));
    let mut lonlat = String::from("lon,lat,pm25\n");
    for l in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = l.split(',').collect();
        let mut p = (f[ie].parse::<f64>().unwrap(), f[inn].parse::<f64>().unwrap(), 0.0);
        proj4rs::transform::transform(&bng, &wgs, &mut p).unwrap();
        lonlat.push_str(&format!("{},{},{}\n", p.0.to_degrees(), p.1.to_degrees(), f[iy]));
    }
    let data = t.path().join("lonlat.csv");
    std::fs::write(&data, lonlat).unwrap();
    let data = data.to_str().unwrap();
    let out = t.path().join("rel");
    release(data, "lon,lat", "40x30", "2", "25", &["--crs", "EPSG:4326", "--reproject-to", "EPSG:27700"], &out);
    check_gis(
        &out,
        &["--crs", "EPSG:27700", "--draws", "2", "--data", data, "--x", "lon,lat", "--data-crs", "EPSG:4326"],
    );
}

/// paths.tif decoded by the `tiff` crate (an independent reader, in the
/// default run): its dimensions, samples, georeferencing tags and values.
struct GeoTiff {
    width: usize,
    height: usize,
    bands: usize,
    /// Row-major from the top row, samples interleaved per pixel.
    values: Vec<f64>,
    bits: Vec<u16>,
    sample_format: Vec<u16>,
    pixel_scale: Vec<f64>,
    tiepoint: Vec<f64>,
    geokeys: Vec<u16>,
}

fn read_geotiff(path: &Path) -> GeoTiff {
    use tiff::decoder::{Decoder, DecodingResult};
    use tiff::tags::Tag;
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut d = Decoder::new(std::io::BufReader::new(file)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (w, h) = d.dimensions().unwrap();
    let bands = usize::from(d.get_tag_u16_vec(Tag::SamplesPerPixel).unwrap()[0]);
    let bits = d.get_tag_u16_vec(Tag::BitsPerSample).unwrap();
    let sample_format = d.get_tag_u16_vec(Tag::SampleFormat).unwrap();
    let pixel_scale = d.get_tag_f64_vec(Tag::ModelPixelScaleTag).unwrap();
    let tiepoint = d.get_tag_f64_vec(Tag::ModelTiepointTag).unwrap();
    let geokeys = d.get_tag_u16_vec(Tag::GeoKeyDirectoryTag).unwrap();
    let values = match d.read_image().unwrap_or_else(|e| panic!("decoding {}: {e}", path.display())) {
        DecodingResult::F64(v) => v,
        _ => panic!("{}: samples are not 64-bit floats", path.display()),
    };
    GeoTiff {
        width: w as usize,
        height: h as usize,
        bands,
        values,
        bits,
        sample_format,
        pixel_scale,
        tiepoint,
        geokeys,
    }
}

/// Releases the fixture on an `nx`×`ny` grid with `draws` draws in
/// EPSG:27700 and checks paths.tif against paths.csv: one band per draw of
/// 64-bit IEEE floats, nx columns × ny rows, the tie point (pixel (0, 0) =
/// the grid's west-most, north-most point), the pixel scale (the grid
/// spacing), the GeoKey directory (projected CRS 27700, PixelIsPoint), and
/// every value equal, bit for bit, to the draw at the same coordinate.
fn geotiff_matches_paths_csv(nx: usize, ny: usize, draws: usize) {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("rel");
    let grid = format!("{nx}x{ny}");
    release(FIXTURE, "easting,northing", &grid, &draws.to_string(), "25", &["--crs", "EPSG:27700"], &out);
    let g = read_geotiff(&out.join("paths.tif"));
    assert_eq!((g.width, g.height, g.bands), (nx, ny, draws), "dimensions and bands");
    assert_eq!(g.bits, vec![64; draws]);
    assert_eq!(g.sample_format, vec![3; draws], "SampleFormat IEEEFP per band");
    assert_eq!(g.values.len(), nx * ny * draws);
    assert_eq!(
        g.geokeys,
        vec![1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 2, 3072, 0, 1, 27700],
        "GeoKeyDirectory: projected model, PixelIsPoint, EPSG:27700"
    );

    let mut r = csv::Reader::from_path(out.join("paths.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(head.len(), 2 + draws, "paths.csv columns: {head:?}");
    let rows: Vec<Vec<f64>> =
        r.records().map(|rec| rec.unwrap().iter().map(|v| v.parse::<f64>().unwrap()).collect()).collect();
    assert_eq!(rows.len(), nx * ny);
    let xs = rows.iter().map(|r| r[0]);
    let ys = rows.iter().map(|r| r[1]);
    let (x0, x1) = (xs.clone().fold(f64::INFINITY, f64::min), xs.fold(f64::NEG_INFINITY, f64::max));
    let (y0, y1) = (ys.clone().fold(f64::INFINITY, f64::min), ys.fold(f64::NEG_INFINITY, f64::max));
    let (dx, dy) = ((x1 - x0) / (nx - 1) as f64, (y1 - y0) / (ny - 1) as f64);
    assert_eq!(g.tiepoint, vec![0.0, 0.0, 0.0, x0, y1, 0.0], "ModelTiepoint");
    assert_eq!(g.pixel_scale.len(), 3);
    assert!(
        (g.pixel_scale[0] - dx).abs() <= 1e-9 * dx && (g.pixel_scale[1] - dy).abs() <= 1e-9 * dy,
        "{:?}",
        g.pixel_scale
    );
    assert_eq!(g.pixel_scale[2], 0.0);
    for row in &rows {
        let col = ((row[0] - x0) / dx).round() as usize;
        let line = ((y1 - row[1]) / dy).round() as usize;
        assert!(col < nx && line < ny);
        for k in 0..draws {
            let v = g.values[(line * nx + col) * draws + k];
            assert_eq!(
                v.to_bits(),
                row[2 + k].to_bits(),
                "draw {} at ({}, {}): tif {v} vs csv {}",
                k + 1,
                row[0],
                row[1],
                row[2 + k]
            );
        }
    }
}

/// Three draws (three bands, with ExtraSamples) on a landscape 60 × 40 grid.
#[test]
fn three_band_geotiff_decodes_to_paths_csv() {
    geotiff_matches_paths_csv(60, 40, 3);
}

/// One draw (a single band, no ExtraSamples) on a portrait 25 × 50 grid.
#[test]
fn one_band_portrait_geotiff_decodes_to_paths_csv() {
    geotiff_matches_paths_csv(25, 50, 1);
}

/// Issue 40 item 2: `plan --crs` stores the CRS in plan.json, and `release --plan` without
/// `--crs` writes paths.tif in it (GDAL reads the CRS, band descriptions and the unit).
#[test]
#[ignore = "needs GPDP_GIS_PYTHON (rasterio, pyogrio, shapely); see the module doc"]
fn a_release_from_a_plan_carries_the_plans_crs() {
    let t = tempfile::tempdir().unwrap();
    let proxy = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/last-year.csv");
    let plan = t.path().join("plan");
    let o = gpdp()
        .args(["plan", "--proxy", proxy, "--x", "easting,northing", "--y", "pm25", "--response-range", "0,40"])
        .args(["--units", "µg/m³", "--domain", "box:500000,510000,180000,190000", "--n", "300"])
        .args(["--delta", "1e-5", "--epsilons", "3", "--reps", "1", "--restarts", "2", "--grid", "10"])
        .args(["--crs", "EPSG:27700", "--quiet", "--out"])
        .arg(&plan)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = t.path().join("rel");
    let o = gpdp()
        .args(["release", "--plan"])
        .arg(plan.join("plan.json"))
        .args(["--data", FIXTURE, "--x", "easting,northing", "--y", "pm25", "--target-epsilon", "3"])
        .args(["--grid", "30x20", "--snap", "grid", "--draws", "2", "--seed", "3", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_gis(&out, &["--crs", "EPSG:27700", "--draws", "2", "--data", FIXTURE, "--x", "easting,northing"]);
}
