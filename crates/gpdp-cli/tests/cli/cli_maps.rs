//! `gpdp release --map-format`: the maps as SVG (vector graphics for reports
//! and journals) beside or instead of the PNGs, with the same content, and a
//! published file list that names exactly the files written.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn gpdp() -> Command {
    match std::env::var_os("GPDP_BIN") {
        Some(bin) => Command::new(bin),
        None => Command::cargo_bin("gpdp").unwrap(),
    }
}

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/readings.csv");
const NX: usize = 60;
const NY: usize = 40;

/// A seeded release of the shipped PM2.5 fixture (µg/m³ on British National
/// Grid metres) on a 60 × 40 grid, with `extra` flags, into `out`.
fn release(out: &Path, extra: &[&str]) -> std::process::Output {
    gpdp()
        .args([
            "release",
            "--data",
            FIXTURE,
            "--x",
            "easting,northing",
            "--y",
            "pm25",
            "--response-range",
            "0,60",
            "--units",
            "µg/m³",
            "--kernel",
            "matern32",
            "--lengthscale",
            "2000",
            "--domain",
            "box:500000,510000,180000,190000",
            "--scale",
            "30",
            "--target-epsilon",
            "1",
            "--delta",
            "1e-5",
            "--grid",
            &format!("{NX}x{NY}"),
            "--snap",
            "grid",
            "--threshold",
            "25",
            "--seed",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn release_ok(out: &Path, extra: &[&str]) {
    let o = release(out, extra);
    assert!(o.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// The directory's files, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    v.sort();
    v
}

/// report.json's list of published files, sorted.
fn outputs(dir: &Path) -> Vec<String> {
    let r: Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let mut v: Vec<String> = r["outputs"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect();
    v.sort();
    v
}

fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
    let be = |k: usize| u32::from_be_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
    (be(16), be(20))
}

/// An SVG file, checked to be well-formed XML.
struct Svg {
    text: String,
}

impl Svg {
    fn read(path: &Path) -> Svg {
        let text = std::fs::read_to_string(path).unwrap();
        if let Err(e) = roxmltree::Document::parse(&text) {
            panic!("{} is not well-formed XML: {e}", path.display());
        }
        Svg { text }
    }

    fn doc(&self) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(&self.text).unwrap()
    }
}

fn attr_f64(n: &roxmltree::Node, a: &str) -> f64 {
    n.attribute(a).unwrap_or_else(|| panic!("<{}> has no {a}", n.tag_name().name())).parse().unwrap()
}

fn texts(doc: &roxmltree::Document) -> Vec<String> {
    doc.descendants().filter(|n| n.has_tag_name("text")).map(|t| t.text().unwrap_or("").trim().to_string()).collect()
}

/// Filled rectangles (heat cells, colour-bar strips, the background).
fn filled_rects(doc: &roxmltree::Document) -> usize {
    doc.descendants().filter(|n| n.has_tag_name("rect") && n.attribute("fill").is_some_and(|f| f != "none")).count()
}

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().to_path_buf();
    (t, p)
}

#[test]
fn svg_maps_beside_the_pngs_have_their_content() {
    let (_t, dir) = tmp();
    let (png_only, both) = (dir.join("png"), dir.join("both"));
    release_ok(&png_only, &["--draws", "3", "--crs", "EPSG:27700"]);
    release_ok(&both, &["--draws", "3", "--crs", "EPSG:27700", "--map-format", "png,svg"]);
    assert!(listing(&png_only).iter().all(|f| !f.ends_with(".svg")), "{:?}", listing(&png_only));
    let files = listing(&both);
    for f in ["map.png", "map.svg", "maps.png", "maps.svg", "paths.tif", "paths.qml", "paths.sld"] {
        assert!(files.contains(&f.to_string()), "{f} not in {files:?}");
    }
    assert_eq!(outputs(&both), files);
    // The SVGs change nothing else: every other file is the PNG-only release's.
    for f in listing(&png_only) {
        if f != "report.json" {
            assert_eq!(std::fs::read(png_only.join(&f)).unwrap(), std::fs::read(both.join(&f)).unwrap(), "{f}");
        }
    }

    let svg = Svg::read(&both.join("map.svg"));
    let doc = svg.doc();
    let root = doc.root_element();
    assert!(root.has_tag_name("svg"));
    let (w, h) = png_size(&both.join("map.png"));
    assert_eq!((attr_f64(&root, "width"), attr_f64(&root, "height")), (w as f64, h as f64));
    assert_eq!(root.attribute("viewBox"), Some(format!("0 0 {} {}", 2 * w, 2 * h).as_str()));
    let t = texts(&doc);
    // The figure title states the status and (ε, δ) and the level with its unit.
    assert!(
        t.iter().any(|s| s.starts_with("NOT private (seeded)")
            && s.contains("ε = 1.0000")
            && s.contains("δ = 1e-5")
            && s.contains("hatched: f ≥ 25 [µg/m³]")),
        "{t:?}"
    );
    for want in ["path 1: one random draw, not the best estimate", "µg/m³", "northing [m]"] {
        assert!(t.iter().any(|s| s == want), "{want} not in {t:?}");
    }
    // Metre axes name their unit and the CRS.
    assert!(t.iter().any(|s| s.starts_with("easting [m] — EPSG:27700 OSGB 1936")), "{t:?}");
    // Text names the embedded font and a generic fallback.
    assert!(
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .all(|n| n.attribute("font-family").is_some_and(|f| f.ends_with("sans-serif")))
    );
    // The cells as one embedded image, a pixel per grid cell; the colour
    // bar's strips and the background as rectangles.
    assert_eq!(embedded_images(&doc).len(), 1);
    assert_eq!(embedded_images(&doc)[0].1.dimensions(), (NX as u32, NY as u32));
    assert_eq!(filled_rects(&doc), 1 + 256);
    // The excursion set's boundary: black polylines 2 px wide.
    let contour = doc.descendants().filter(|n| n.has_tag_name("polyline") && n.attribute("stroke-width") == Some("4"));
    assert!(contour.count() >= 1);

    // Small multiples: three panels on one colour scale.
    let svg = Svg::read(&both.join("maps.svg"));
    let doc = svg.doc();
    let (w, h) = png_size(&both.join("maps.png"));
    assert_eq!((attr_f64(&doc.root_element(), "width"), attr_f64(&doc.root_element(), "height")), (w as f64, h as f64));
    let t = texts(&doc);
    for want in ["path 1 (a random draw)", "path 2 (a random draw)", "path 3 (a random draw)"] {
        assert!(t.iter().any(|s| s == want), "{want} not in {t:?}");
    }
    // One colour bar with its unit for all three, and three images.
    assert_eq!(t.iter().filter(|s| *s == "µg/m³").count(), 1, "{t:?}");
    assert_eq!(filled_rects(&doc), 1 + 256);
    assert_eq!(embedded_images(&doc).len(), 3);
}

/// The `<image>` elements of an SVG: (x, y, width, height) in drawing pixels
/// and the decoded PNG of its `data:image/png;base64,` URI.
fn embedded_images(doc: &roxmltree::Document) -> Vec<([f64; 4], image::RgbImage)> {
    use base64::Engine;
    doc.descendants()
        .filter(|n| n.has_tag_name("image"))
        .map(|n| {
            let href = n.attribute(("http://www.w3.org/1999/xlink", "href")).expect("xlink:href");
            let data = href.strip_prefix("data:image/png;base64,").expect("a PNG data URI");
            let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
            let img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png).unwrap().to_rgb8();
            (["x", "y", "width", "height"].map(|a| attr_f64(&n, a)), img)
        })
        .collect()
}

/// map.svg colours the cells of released path 1 (paths.csv) on a scale
/// centred on the threshold t (red above, blue below) and hatches exactly
/// the cells at or above t. (The unit tests in plot/tests.rs check each
/// cell's exact colour.)
#[test]
fn svg_cells_are_hatched_on_exactly_the_excursion_set() {
    let (_t, dir) = tmp();
    let out = dir.join("svg");
    release_ok(&out, &["--map-format", "svg"]);
    let csv = std::fs::read_to_string(out.join("paths.csv")).unwrap();
    let values: Vec<f64> = csv.lines().skip(1).map(|l| l.split(',').nth(2).unwrap().parse().unwrap()).collect();
    assert_eq!(values.len(), NX * NY);
    let value = |i: usize, j: usize| values[j * NX + i];
    let svg = Svg::read(&out.join("map.svg"));
    let doc = svg.doc();
    let images = embedded_images(&doc);
    let ([x0, y0, w, h], img) = &images[0];
    assert_eq!(img.dimensions(), (NX as u32, NY as u32));
    let above = values.iter().filter(|v| **v >= 25.0).count();
    assert!(above > 0 && above < NX * NY, "{above}");
    for j in 0..NY {
        for i in 0..NX {
            let [r, _, b] = img.get_pixel(i as u32, (NY - 1 - j) as u32).0;
            let v = value(i, j);
            if v >= 25.5 {
                assert!(r > b, "{v} > t but its cell {:?} is not red", (r, b));
            } else if v <= 24.5 {
                assert!(b > r, "{v} < t but its cell {:?} is not blue", (r, b));
            }
        }
    }
    // Hatch segments: thin dark polylines, each over cells at or above t
    // (tested 2 drawing pixels or more from its ends: plotters writes whole pixels).
    let cell = |x: f64, y: f64| {
        let i = (((x - x0) / w * NX as f64).floor() as usize).min(NX - 1);
        let j = NY - 1 - (((y - y0) / h * NY as f64).floor() as usize).min(NY - 1);
        (i, j)
    };
    let mut hatched = std::collections::BTreeSet::new();
    for l in doc.descendants().filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#191919")) {
        let pts: Vec<(f64, f64)> = l
            .attribute("points")
            .unwrap()
            .split_whitespace()
            .map(|pt| {
                let (x, y) = pt.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        let len = ((pts[1].0 - pts[0].0).powi(2) + (pts[1].1 - pts[0].1).powi(2)).sqrt();
        let steps = (len / 3.0).floor() as usize;
        for t in (0..=steps).map(|k| (2.0 + k as f64 * (len - 4.0) / steps.max(1) as f64) / len).filter(|_| len >= 4.0)
        {
            let (i, j) = cell(pts[0].0 + t * (pts[1].0 - pts[0].0), pts[0].1 + t * (pts[1].1 - pts[0].1));
            assert!(value(i, j) >= 25.0, "hatch over cell ({i}, {j}) = {} < 25", value(i, j));
            hatched.insert((i, j));
        }
    }
    // Lines about 1.3 cells apart: most cells of the set are crossed by one.
    assert!(hatched.len() * 2 >= above, "{} of {above} cells hatched", hatched.len());
}

#[test]
fn svg_only_writes_no_png_and_no_world_file() {
    let (_t, dir) = tmp();
    let out = dir.join("svg");
    release_ok(&out, &["--draws", "2", "--crs", "EPSG:27700", "--map-format", "svg"]);
    assert_eq!(
        listing(&out),
        ["excursion.geojson", "map.svg", "maps.svg", "paths.csv", "paths.qml", "paths.sld", "paths.tif", "report.json"],
        "the GeoTIFF and its styles, never a world file"
    );
    assert_eq!(outputs(&out), listing(&out));
}

#[test]
fn one_dimensional_paths_as_svg() {
    let (_t, dir) = tmp();
    let data = dir.join("d.csv");
    std::fs::write(&data, "x,y\n0.1,0.5\n0.3,-0.2\n0.35,0.4\n0.6,0.9\n0.9,-0.7\n").unwrap();
    let out = dir.join("out");
    let o = gpdp()
        .args(["release", "--response-bound", "1", "--data"])
        .arg(&data)
        .args([
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
            "--seed",
            "3",
            "--map-format",
            "svg,png",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(listing(&out), ["paths.csv", "paths.png", "paths.svg", "report.json"]);
    assert_eq!(outputs(&out), listing(&out));
    let svg = Svg::read(&out.join("paths.svg"));
    let doc = svg.doc();
    assert_eq!((attr_f64(&doc.root_element(), "width"), attr_f64(&doc.root_element(), "height")), (900.0, 520.0));
    let t = texts(&doc);
    assert!(t.iter().any(|s| s.starts_with("released sample paths") && s.contains("ε = ")), "{t:?}");
    for want in ["path 1", "path 2", "t = 0"] {
        assert!(t.iter().any(|s| s == want), "{want} not in {t:?}");
    }
    // Each path is drawn through its 50 points, in its colour (tab10's first
    // two), as polylines that plotters splits into pieces sharing their ends;
    // the legend's sample, drawn last, is one more of the same colour.
    for colour in ["#1F77B4", "#FF7F0E"] {
        let mut pieces: Vec<Vec<&str>> = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some(colour))
            .map(|n| n.attribute("points").unwrap().split_whitespace().collect())
            .collect();
        let legend = pieces.pop().unwrap();
        assert_eq!(legend.len(), 2, "{colour}");
        for w in pieces.windows(2) {
            assert_eq!(w[0].last(), w[1].first(), "{colour}: pieces do not join");
        }
        let points: usize = pieces.iter().map(Vec::len).sum::<usize>() - (pieces.len() - 1);
        assert_eq!(points, 50, "{colour}");
    }
}

#[test]
fn unknown_map_formats_are_refused_before_anything_is_written() {
    let (_t, dir) = tmp();
    for bad in ["pdf", "png,", "png;svg"] {
        let out = dir.join("never");
        let o = release(&out, &["--map-format", bad]);
        assert!(!o.status.success(), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--map-format") && err.contains("expected png"), "{bad}: {err}");
        assert!(!out.exists(), "{bad}");
    }
}
