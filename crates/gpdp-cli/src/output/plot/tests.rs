use super::*;
use gpdp::postprocess::palette::{linear_ticks, nice_step};
use std::f64::consts::PI;

/// (width, height) from a PNG file, checking the signature.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", path.display());
    assert_eq!(&b[12..16], b"IHDR");
    let be = |k: usize| u32::from_be_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
    (be(16), be(20))
}

fn bump_grid(n: usize) -> Grid2 {
    Grid2::from_fn(n, n, (0.0, 1.0), (0.0, 1.0), |x, y| {
        (-((x - 0.4).powi(2) + (y - 0.6).powi(2)) / 0.05).exp()
            - 0.6 * (-((x - 0.8).powi(2) + (y - 0.2).powi(2)) / 0.02).exp()
    })
    .unwrap()
}

fn panel<'a>(title: &str, g: &'a Grid2, palette: Palette) -> HeatPanel<'a> {
    HeatPanel {
        title: title.into(),
        grid: g,
        palette,
        range: None,
        contours: vec![Contour { grid: g, level: 0.5, color: RGBColor(255, 255, 255), width: 2 }],
        points: vec![[0.2, 0.2], [0.5, 0.5], [f64::NAN, 0.1], [5.0, 5.0]],
        x_label: "x₁".into(),
        y_label: "x₂".into(),
        colorbar: true,
        colorbar_label: String::new(),
        shade_above: None,
    }
}

fn series(label: &str, xs: Vec<f64>, ys: Vec<f64>, style: SeriesStyle) -> Series {
    Series { label: label.into(), xs, ys, err: None, style, color: None }
}

fn chart(title: &str, series: Vec<Series>) -> LineChart {
    LineChart {
        title: title.into(),
        x_label: "x".into(),
        y_label: "y".into(),
        log_x: false,
        log_y: false,
        series,
        hlines: Vec::new(),
        x_range: None,
        y_range: None,
        x_ticks: None,
    }
}

fn normal_pdf(x: f64, m: f64, s: f64) -> f64 {
    (-(x - m).powi(2) / (2.0 * s * s)).exp() / (s * (2.0 * PI).sqrt())
}

/// Deterministic pseudo-normal samples (Box–Muller on a LCG).
fn samples(n: usize, m: f64, s: f64, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut u = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n).map(|_| m + s * (-2.0 * u().ln()).sqrt() * (2.0 * PI * u()).cos()).collect()
}

fn hist_chart() -> HistChart {
    let xs: Vec<f64> = (0..=200).map(|k| -4.0 + 9.0 * k as f64 / 200.0).collect();
    HistChart {
        title: "Shadow-model statistic".into(),
        x_label: "log-likelihood ratio".into(),
        bins: 40,
        sets: vec![
            HistSet {
                label: "out".into(),
                samples: samples(2000, 0.0, 1.0, 1),
                density: Some((xs.clone(), xs.iter().map(|&x| normal_pdf(x, 0.0, 1.0)).collect())),
                color: None,
            },
            HistSet {
                label: "in".into(),
                samples: samples(2000, 1.2, 0.9, 2),
                density: Some((xs.clone(), xs.iter().map(|&x| normal_pdf(x, 1.2, 0.9)).collect())),
                color: None,
            },
        ],
        range: None,
    }
}

#[test]
fn heatmap_png_has_expected_size() {
    let dir = tempfile::tempdir().unwrap();
    let g = bump_grid(60);
    let path = dir.path().join("heat.png");
    let mut p2 = panel("no colour bar", &g, Palette::Grey);
    p2.colorbar = false;
    heatmap_figure(&path, &[panel("a", &g, Palette::Viridis), p2], 300, Some("Figure")).unwrap();
    let cb = (0.24f64 * 300.0).round() as u32;
    let sup = (34.0 * 300.0 / 420.0f64).round() as u32;
    assert_eq!(png_size(&path), (300 + cb + 300, 300 + sup));
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn line_and_histogram_pngs_have_expected_size() {
    let dir = tempfile::tempdir().unwrap();
    let xs: Vec<f64> = (0..50).map(|k| k as f64 / 49.0).collect();
    let ys: Vec<f64> = xs.iter().map(|x| (6.0 * x).sin()).collect();
    let path = dir.path().join("lines.png");
    let charts = [chart("one", vec![series("sin", xs.clone(), ys.clone(), SeriesStyle::Line)]), chart("two", vec![])];
    // A chart without series is refused…
    let e = line_charts(&path, &charts, (400, 300)).unwrap_err();
    assert!(format!("{e:#}").contains("line chart 'two'") && format!("{e:#}").contains("no series"), "{e:#}");
    assert!(!path.exists());
    // …and two good ones are drawn side by side.
    let charts = [
        chart("one", vec![series("sin", xs.clone(), ys.clone(), SeriesStyle::Line)]),
        chart("", vec![series("", xs, ys, SeriesStyle::Points)]),
    ];
    line_charts(&path, &charts, (400, 300)).unwrap();
    assert_eq!(png_size(&path), (800, 300));
    let path = dir.path().join("hist.png");
    histogram_charts(&path, &[hist_chart()], (500, 350)).unwrap();
    assert_eq!(png_size(&path), (500, 350));
}

#[test]
fn mismatched_and_empty_inputs_are_errors_naming_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.png");
    fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
        format!("{:#}", r.unwrap_err())
    }
    let c = chart(
        "T",
        vec![
            series("ok", vec![1.0], vec![1.0], SeriesStyle::Line),
            series("bad", vec![1.0, 2.0], vec![1.0], SeriesStyle::Line),
        ],
    );
    let m = msg(line_charts(&path, &[c], (400, 300)));
    assert!(m.contains("series 'bad'") && m.contains("xs has 2 values but ys has 1"), "{m}");
    let mut s = series("e", vec![1.0, 2.0], vec![1.0, 2.0], SeriesStyle::Line);
    s.err = Some(vec![0.1]);
    let m = msg(line_charts(&path, &[chart("T", vec![s])], (400, 300)));
    assert!(m.contains("series 'e'") && m.contains("err has 1"), "{m}");
    let m = msg(line_charts(&path, &[chart("T", vec![series("", vec![], vec![], SeriesStyle::Line)])], (400, 300)));
    assert!(m.contains("series 1 is empty"), "{m}");
    let mut c = chart("T", vec![series("a", vec![1.0], vec![1.0], SeriesStyle::Line)]);
    c.log_x = true;
    c.x_range = Some((0.0, 1.0));
    assert!(msg(line_charts(&path, &[c], (400, 300))).contains("positive"));
    assert!(msg(line_charts(&path, &[], (400, 300))).contains("no charts"));
    let many: Vec<LineChart> =
        (0..12).map(|_| chart("T", vec![series("a", vec![1.0], vec![1.0], SeriesStyle::Line)])).collect();
    assert!(msg(line_charts(&path, &many, (4000, 4000))).contains("too large"));

    let mut h = hist_chart();
    h.sets[1].density = Some((vec![1.0, 2.0], vec![1.0]));
    let m = msg(histogram_charts(&path, &[h], (400, 300)));
    assert!(m.contains("set 'in'") && m.contains("density xs has 2 values but ys has 1"), "{m}");
    let mut h = hist_chart();
    h.sets[0].samples = vec![f64::NAN];
    assert!(msg(histogram_charts(&path, &[h], (400, 300))).contains("set 'out' has no finite samples"));
    let mut h = hist_chart();
    h.bins = 0;
    assert!(msg(histogram_charts(&path, &[h], (400, 300))).contains("bins = 0"));

    let g = bump_grid(10);
    let bad = Grid2 { nx: 3, ..g.clone() };
    let m = msg(heatmap_figure(&path, &[panel("p", &bad, Palette::Viridis)], 300, None));
    assert!(m.contains("panel 'p'") && m.contains("needs 30 values"), "{m}");
    let mut p = panel("q", &g, Palette::Viridis);
    p.contours[0].grid = &bad;
    assert!(msg(heatmap_figure(&path, &[p], 300, None)).contains("contour 1"));
    let mut p = panel("r", &g, Palette::Viridis);
    p.range = Some((1.0, 1.0));
    assert!(msg(heatmap_figure(&path, &[p], 300, None)).contains("colour range"));
    assert!(!path.exists());
    // A directory that does not exist.
    let m = msg(line_charts(
        &dir.path().join("no/such/dir/x.png"),
        &[chart("T", vec![series("a", vec![1.0], vec![1.0], SeriesStyle::Line)])],
        (400, 300),
    ));
    assert!(m.contains("cannot write"), "{m}");
}

#[test]
fn non_finite_points_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nan.png");
    let xs = vec![1.0, 2.0, f64::NAN, 4.0, 5.0, 6.0, 7.0];
    let ys = vec![1.0, f64::INFINITY, 3.0, -4.0, 0.0, 6.0, 7.0];
    let mut s = series("s", xs, ys, SeriesStyle::LinePoints);
    s.err = Some(vec![0.5, f64::NAN, 1.0, -1.0, 100.0, 0.5, 0.5]);
    let mut c = chart("log", vec![s]);
    c.log_y = true;
    c.log_x = true;
    line_charts(&path, &[c], (400, 300)).unwrap();
    // Nothing drawable at all still gives empty axes.
    let c = chart("empty", vec![series("s", vec![f64::NAN], vec![1.0], SeriesStyle::Line)]);
    line_charts(&path, &[c], (400, 300)).unwrap();
}

/// Pixels of rows [y0, y1) that are not white.
fn dark_pixels(buf: &[u8], w: u32, (y0, y1): (u32, u32)) -> usize {
    (y0..y1)
        .flat_map(|y| (0..w).map(move |x| 3 * (y * w + x) as usize))
        .filter(|&k| buf[k] < 128 && buf[k + 1] < 128 && buf[k + 2] < 128)
        .count()
}

#[test]
fn text_is_rendered() {
    let xs = vec![0.0, 1.0];
    let draw = |title: &str| {
        let c = chart(title, vec![series("a", xs.clone(), xs.clone(), SeriesStyle::Line)]);
        render((400, 300), |root| draw_line_chart(root, &c)).unwrap()
    };
    let with = draw("A title with some text");
    let without = draw("");
    // The title band (top 30 px) holds black glyphs only with a title.
    // The title band (rows 0..20 at this size) holds only the title.
    assert!(dark_pixels(&with, 400, (0, 20)) > 100, "{}", dark_pixels(&with, 400, (0, 20)));
    assert_eq!(dark_pixels(&without, 400, (0, 5)), 0);
    // Tick labels: the bottom band has glyphs.
    assert!(dark_pixels(&without, 400, (270, 300)) > 50);
}

#[test]
fn heatmap_cells_and_colorbar_use_the_palette() {
    // Left half low, right half high: the map's left and right sides get
    // the palette's two ends.
    let g = Grid2::from_fn(20, 20, (0.0, 1.0), (0.0, 1.0), |x, _| if x < 0.5 { 0.0 } else { 1.0 }).unwrap();
    let mut p = panel("", &g, Palette::Viridis);
    p.contours.clear();
    p.points.clear();
    let buf = render((400 + 96, 400), |root| draw_heat_panel(root, &p, SS as f64 * 400.0 / 420.0, 96 * SS).map(|_| ()))
        .unwrap();
    let px = |x: u32, y: u32| {
        let k = 3 * (y * 496 + x) as usize;
        (buf[k], buf[k + 1], buf[k + 2])
    };
    let lo = palette_color(Palette::Viridis, 0.0);
    let hi = palette_color(Palette::Viridis, 1.0);
    let row: Vec<_> = (0..400).map(|x| px(x, 200)).collect();
    assert!(row.contains(&(lo.0, lo.1, lo.2)) && row.contains(&(hi.0, hi.1, hi.2)));
    let first_lo = row.iter().position(|&c| c == (lo.0, lo.1, lo.2)).unwrap();
    let first_hi = row.iter().position(|&c| c == (hi.0, hi.1, hi.2)).unwrap();
    assert!(first_lo < first_hi);
}

#[test]
fn palettes() {
    assert_eq!(palette_color(Palette::Diverging, 0.5), RGBColor(247, 247, 247));
    assert_eq!(palette_color(Palette::Viridis, 0.0), RGBColor(68, 1, 84));
    assert_eq!(palette_color(Palette::Viridis, 1.0), RGBColor(253, 231, 37));
    assert_eq!(palette_color(Palette::Grey, 2.0), RGBColor(255, 255, 255));
    assert_eq!(palette_color(Palette::Grey, f64::NAN), RGBColor(0, 0, 0));
    let g = Grid2::new(2, 2, (0.0, 1.0), (0.0, 1.0), vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let mut p = panel("", &g, Palette::Diverging);
    assert_eq!(color_range(&p), (-4.0, 4.0));
    p.palette = Palette::Viridis;
    assert_eq!(color_range(&p), (1.0, 4.0));
}

#[test]
fn ticks() {
    assert_eq!(nice_step(1.0, 5), 0.2);
    assert_eq!(nice_step(37.0, 8), 5.0);
    assert_eq!(nice_step(37.0, 5), 10.0);
    assert_eq!(linear_ticks(-0.05, 1.05, 0.2), vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
    assert_eq!(fmt_tick(0.6000000000000001, 0.2, 1.0), "0.6");
    assert_eq!(fmt_tick(2e-5, 1e-5, 5e-5), "2e-5");
    assert_eq!(fmt_tick(250000.0, 50000.0, 3e5), "250000");
    assert_eq!(fmt_tick(385000.0, 5000.0, 3.9e5), "385000");
    assert_eq!(fmt_tick(2.5e8, 5e7, 3e8), "2.5e8");
    assert_eq!(fmt_tick(15.0, 5.0, 20.0), "15");
    let a = Axis::log(-3.2, 1.1);
    let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
    assert_eq!(labels, ["0.001", "0.01", "0.1", "1", "10"]);
    assert!(!a.minor.is_empty());
    let a = Axis::log(-12.0, 3.0);
    assert!(a.ticks.len() <= 8 && a.ticks.iter().any(|t| t.1 == "10⁻¹²"), "{:?}", a.ticks);
    // Less than a decade: 1-2-5 ticks or linear ones.
    let a = Axis::log(0.1, 0.9);
    assert!(a.ticks.len() >= 2, "{:?}", a.ticks);
    assert!(a.ticks.iter().all(|t| t.0 >= 0.1 && t.0 <= 0.9));
    let a = Axis::log(2.0f64.log10(), 3.0f64.log10());
    assert!(a.ticks.len() >= 2, "{:?}", a.ticks);
}

#[test]
fn clipping() {
    let b = (0.0, 1.0, 0.0, 1.0);
    assert_eq!(clip_polyline(&[(-1.0, 0.5), (2.0, 0.5)], b), vec![vec![(0.0, 0.5), (1.0, 0.5)]]);
    let pieces = clip_polyline(&[(0.5, 0.5), (0.5, 2.0), (0.7, 2.0), (0.7, 0.5)], b);
    assert_eq!(pieces, vec![vec![(0.5, 0.5), (0.5, 1.0)], vec![(0.7, 1.0), (0.7, 0.5)]]);
    assert!(clip_polyline(&[(2.0, 2.0), (3.0, 3.0)], b).is_empty());
}

/// An SVG figure's root (after checking it is well-formed XML) and its
/// drawing elements of one kind, in document order.
fn svg_doc(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{} is not well-formed XML: {e}", path.display()));
    text
}

fn elements<'a, 'i>(doc: &'a roxmltree::Document<'i>, tag: &str) -> Vec<roxmltree::Node<'a, 'i>> {
    doc.descendants().filter(|n| n.has_tag_name(tag)).collect()
}

fn num(n: &roxmltree::Node, attr: &str) -> f64 {
    n.attribute(attr).unwrap_or_else(|| panic!("no {attr}")).parse().unwrap()
}

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

#[test]
fn figure_formats() {
    assert_eq!(FigureFormat::of(Path::new("a/map.svg")), FigureFormat::Svg);
    assert_eq!(FigureFormat::of(Path::new("MAP.SVG")), FigureFormat::Svg);
    assert_eq!(FigureFormat::of(Path::new("map.png")), FigureFormat::Png);
    assert_eq!(FigureFormat::of(Path::new("map")), FigureFormat::Png);
    assert_eq!(" SVG".parse::<FigureFormat>().unwrap(), FigureFormat::Svg);
    assert_eq!("png".parse::<FigureFormat>().unwrap().ext(), "png");
    assert!("pdf".parse::<FigureFormat>().unwrap_err().to_string().contains("expected png or svg"));
}

/// The decoded PNG of an SVG `<image>` element (a `data:image/png;base64,` URI).
fn embedded_png(n: &roxmltree::Node) -> image::RgbImage {
    use base64::Engine;
    let href = n.attribute(("http://www.w3.org/1999/xlink", "href")).expect("xlink:href");
    let data = href.strip_prefix("data:image/png;base64,").expect("a PNG data URI");
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    image::load_from_memory_with_format(&bytes, image::ImageFormat::Png).unwrap().to_rgb8()
}

/// The SVG of a heat map has the PNG's layout (size, where the map lies)
/// and its cells as one embedded image with a pixel per cell, of exactly the
/// palette's colour; the excursion set is hatched on exactly its cells.
#[test]
fn svg_heat_map_has_the_png_layout_and_the_cells_colours() {
    let dir = tempfile::tempdir().unwrap();
    let (nx, ny) = (12, 8);
    let g = Grid2::from_fn(nx, ny, (0.0, 3.0), (10.0, 12.0), |x, y| (x - 1.5) * (y - 10.5)).unwrap();
    let level = 0.2;
    let mut p = panel("released path ε", &g, Palette::Diverging);
    p.contours[0].level = level;
    p.contours[0].color = RGBColor(0, 0, 0);
    p.shade_above = Some(level);
    p.colorbar_label = "µg/m³".into();
    let panels = [p];
    let (png, svg) = (dir.path().join("h.png"), dir.path().join("h.svg"));
    let geo_png = heatmap_figure(&png, &panels, 300, Some("Figure · ε = 1.000")).unwrap();
    let geo_svg = heatmap_figure(&svg, &panels, 300, Some("Figure · ε = 1.000")).unwrap();
    assert_eq!(geo_png, geo_svg);
    let text = svg_doc(&svg);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let root = doc.root_element();
    assert!(root.has_tag_name("svg"));
    let (w, h) = png_size(&png);
    assert_eq!((num(&root, "width"), num(&root, "height")), (w as f64, h as f64));
    assert_eq!(root.attribute("viewBox").unwrap(), format!("0 0 {} {}", w * SS, h * SS));

    // Cells: one image, a pixel per grid point (top row first).
    let images = elements(&doc, "image");
    assert_eq!(images.len(), 1);
    let img = embedded_png(&images[0]);
    assert_eq!(img.dimensions(), (nx as u32, ny as u32));
    let (lo, hi) = color_range(&panels[0]);
    for j in 0..ny {
        for i in 0..nx {
            let c = palette_color(Palette::Diverging, (g.at(i, j) - lo) / (hi - lo));
            assert_eq!(img.get_pixel(i as u32, (ny - 1 - j) as u32).0, [c.0, c.1, c.2], "cell ({i}, {j})");
        }
    }
    // It covers the map area of the PNG, in drawing pixels (SS per image
    // pixel): from its first pixel to its last (plotters maps the range's
    // upper end onto the area's last pixel, one before the range's end).
    let ss = SS as f64;
    let (x0, y0) = (num(&images[0], "x"), num(&images[0], "y"));
    let (x1, y1) = (x0 + num(&images[0], "width"), y0 + num(&images[0], "height"));
    let gr = geo_png[0];
    assert_eq!((x0, x1, y0, y1), (gr.px.0 * ss, gr.px.1 * ss - 1.0, gr.py.0 * ss, gr.py.1 * ss - 1.0));
    assert_eq!(images[0].attribute("preserveAspectRatio"), Some("none"));
    // The hatch: segments whose every point lies over a cell at or above the level.
    let lines = elements(&doc, "polyline");
    let hatch: Vec<_> = lines.iter().filter(|l| l.attribute("stroke") == Some(hex(HATCH).as_str())).collect();
    assert!(hatch.len() >= 3, "{}", hatch.len());
    let cell = |x: f64, y: f64| {
        let i = (((x - x0) / (x1 - x0) * nx as f64).floor() as usize).min(nx - 1);
        let j = ny - 1 - (((y - y0) / (y1 - y0) * ny as f64).floor() as usize).min(ny - 1);
        (i, j)
    };
    let mut hatched = std::collections::BTreeSet::new();
    for l in &hatch {
        let pts: Vec<(f64, f64)> = l
            .attribute("points")
            .unwrap()
            .split_whitespace()
            .map(|pt| {
                let (x, y) = pt.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert_eq!(pts.len(), 2);
        // plotters writes whole drawing pixels: test points 2 px or more from either end.
        let len = ((pts[1].0 - pts[0].0).powi(2) + (pts[1].1 - pts[0].1).powi(2)).sqrt();
        for t in [2.0 / len, 0.5, 1.0 - 2.0 / len].into_iter().filter(|_| len >= 4.0) {
            let (x, y) = (pts[0].0 + t * (pts[1].0 - pts[0].0), pts[0].1 + t * (pts[1].1 - pts[0].1));
            let (i, j) = cell(x, y);
            assert!(g.at(i, j) >= level, "hatch over cell ({i}, {j}) = {} < {level}", g.at(i, j));
            hatched.insert((i, j));
        }
    }
    let above = (0..ny).flat_map(|j| (0..nx).map(move |i| (i, j))).filter(|&(i, j)| g.at(i, j) >= level).count();
    assert!(hatched.len() * 3 >= above, "{} of {above} cells hatched", hatched.len());
    let rects = elements(&doc, "rect");
    assert_eq!(rects[0].attribute("fill"), Some("#FFFFFF"));
    // Frames are polylines with a stroke width, never hairline <rect>s.
    assert!(rects.iter().all(|r| r.attribute("fill") != Some("none")));
    let lines = elements(&doc, "polyline");
    assert!(lines.iter().any(|l| l.attribute("stroke") == Some("#000000") && num(l, "stroke-width") >= 2.0));
    // The contour: black polylines of width 2 px (4 drawing px) inside the map.
    let contour: Vec<_> = lines
        .iter()
        .filter(|l| l.attribute("stroke-width") == Some("4") && l.attribute("stroke") == Some("#000000"))
        .collect();
    assert!(!contour.is_empty());
    for l in contour {
        for pt in l.attribute("points").unwrap().split_whitespace() {
            let (x, y) = pt.split_once(',').unwrap();
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert!(x >= x0 - 1.0 && x <= x1 + 1.0 && y >= y0 - 1.0 && y <= y1 + 1.0, "{pt}");
        }
    }
    // Text: the titles and the colour bar's unit, in DejaVu Sans or any sans-serif.
    let texts = elements(&doc, "text");
    let strings: Vec<String> = texts.iter().map(|t| t.text().unwrap_or("").trim().to_string()).collect();
    for want in ["Figure · ε = 1.000", "released path ε", "µg/m³", "x₁", "x₂"] {
        assert!(strings.iter().any(|s| s == want), "{want} not in {strings:?}");
    }
    assert!(texts.iter().all(|t| t.attribute("font-family") == Some("DejaVu Sans, sans-serif")));
    // A crisp-edges rule for the cells.
    assert!(elements(&doc, "style")[0].text().unwrap().contains("crispEdges"));
    // Nothing but the figures is left behind.
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["h.png", "h.svg"]);
}

/// Hatch lines lie over exactly the cells at or above the level, at 45° on
/// the drawing, `spacing` pixels apart.
#[test]
fn hatch_segments_cover_exactly_the_excursion_cells() {
    // Right half (x ≥ 0.5) above the level; a 200 × 100 px map of a 2 × 1 domain.
    let g = Grid2::from_fn(10, 5, (0.05, 1.95), (0.1, 0.9), |x, _| if x > 1.0 { 1.0 } else { 0.0 }).unwrap();
    let segs = hatch_segments(&g, 0.5, (0.0, 2.0, 0.0, 1.0), (200.0, 100.0), 10.0);
    assert!(!segs.is_empty());
    let mut length = 0.0;
    for [a, b] in &segs {
        // In pixels the lines rise at 45°.
        let (du, dv) = ((b.0 - a.0) * 100.0, (b.1 - a.1) * 100.0);
        assert!((du - dv).abs() < 1e-9 && du > 0.0, "{a:?} {b:?}");
        // Each starts on the set's left edge (x = 1, within the bisection's
        // 1/64 of a sample step) or on the map's bottom, and stays in the set.
        assert!(a.0 >= 1.0 - 0.01 && b.0 <= 2.0 + 1e-12, "{a:?} {b:?}");
        assert!((a.0 - 1.0).abs() < 0.01 || a.1.abs() < 1e-12, "{a:?}");
        length += du * std::f64::consts::SQRT_2;
    }
    // Lines 10 px apart over a 100 × 100 px square: its area / spacing of line.
    assert!((length - 100.0 * 100.0 / 10.0).abs() < 0.1 * 1000.0, "{length}");
    // Nothing above the level: no hatch.
    assert!(hatch_segments(&g, 2.0, (0.0, 2.0, 0.0, 1.0), (200.0, 100.0), 10.0).is_empty());
}

/// A grid of panels with one shared colour bar: rows of `columns`, the
/// bar right of the grid, extend arrows where values pass its range.
#[test]
fn heatmap_grid_has_rows_one_colour_bar_and_extend_arrows() {
    let dir = tempfile::tempdir().unwrap();
    let grids: Vec<Grid2> = (0..5)
        .map(|k| Grid2::from_fn(16, 16, (0.0, 1.0), (0.0, 1.0), move |x, y| (k as f64 + 1.0) * (x - y)).unwrap())
        .collect();
    let panels: Vec<HeatPanel> =
        grids.iter().enumerate().map(|(k, g)| panel(&format!("p{k}"), g, Palette::Diverging)).collect();
    let layout = HeatLayout {
        panel_px: 300,
        columns: 3,
        shared: Some(SharedColorbar { palette: Palette::Diverging, range: Some((-2.0, 2.0)), label: "unit".into() }),
    };
    let (png, svg) = (dir.path().join("g.png"), dir.path().join("g.svg"));
    let geo = heatmap_grid(&png, &panels, &layout, Some("five")).unwrap();
    assert_eq!(heatmap_grid(&svg, &panels, &layout, Some("five")).unwrap(), geo);
    let cb_w = (0.24f64 * 300.0).round() as u32;
    let sup_h = (34.0f64 * 300.0 / 420.0).round() as u32;
    assert_eq!(png_size(&png), (3 * 300 + cb_w, 2 * 300 + sup_h));
    // Rows: panels 0–2 side by side, 3–4 below them.
    assert!(geo[0].px.1 < geo[1].px.0 && geo[1].px.1 < geo[2].px.0);
    assert_eq!(geo[3].px, geo[0].px);
    assert!(geo[3].py.0 > geo[0].py.1);
    let text = svg_doc(&svg);
    let doc = roxmltree::Document::parse(&text).unwrap();
    // One colour bar (256 strips) and one unit caption for all five panels.
    let strips = elements(&doc, "rect").len() - 1;
    assert_eq!(strips, 256, "{strips}");
    let texts: Vec<String> = elements(&doc, "text").iter().map(|t| t.text().unwrap_or("").trim().to_string()).collect();
    assert_eq!(texts.iter().filter(|t| *t == "unit").count(), 1);
    assert_eq!(elements(&doc, "image").len(), 5);
    // Values reach ±5 beyond the range ±2: a triangle in each end colour.
    let fills: Vec<&str> = elements(&doc, "polygon").iter().filter_map(|p| p.attribute("fill")).collect();
    for end in [0.0, 1.0] {
        let c = hex(palette_color(Palette::Diverging, end));
        assert!(fills.contains(&c.as_str()), "{c} not in {fills:?}");
    }
    // Within the range: no arrows.
    let inside = HeatLayout {
        shared: Some(SharedColorbar { palette: Palette::Diverging, range: Some((-6.0, 6.0)), label: String::new() }),
        ..layout
    };
    heatmap_grid(&svg, &panels, &inside, None).unwrap();
    let text = svg_doc(&svg);
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert!(elements(&doc, "polygon").is_empty());
    assert_eq!(extends(&[&grids[0]], (-0.5, 2.0)), (true, false));
}

#[test]
fn svg_line_charts_and_histograms() {
    let dir = tempfile::tempdir().unwrap();
    let xs: Vec<f64> = (0..30).map(|k| k as f64 / 29.0).collect();
    let mut c = chart(
        "paths — ε = 2",
        vec![
            series("path 1", xs.clone(), xs.iter().map(|x| x.sin()).collect(), SeriesStyle::Line),
            series("path 2", xs.clone(), xs.iter().map(|x| x.cos()).collect(), SeriesStyle::Dashed),
        ],
    );
    c.hlines = vec![(0.5, "t = 0.5".into())];
    let path = dir.path().join("l.svg");
    line_charts(&path, &[c], (400, 300)).unwrap();
    let text = svg_doc(&path);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let root = doc.root_element();
    assert_eq!((num(&root, "width"), num(&root, "height")), (400.0, 300.0));
    let strings: Vec<String> = elements(&doc, "text").iter().map(|t| t.text().unwrap().trim().to_string()).collect();
    for want in ["paths — ε = 2", "path 1", "path 2", "t = 0.5", "x", "y"] {
        assert!(strings.iter().any(|s| s == want), "{want} not in {strings:?}");
    }
    // Path 1 is one polyline through its 30 points.
    assert!(elements(&doc, "polyline").iter().any(|l| l.attribute("points").unwrap().split_whitespace().count() == 30));
    let path = dir.path().join("h.svg");
    histogram_charts(&path, &[hist_chart()], (400, 300)).unwrap();
    svg_doc(&path);
}

#[test]
fn three_180_panels_render_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let g = bump_grid(180);
    let panels: Vec<HeatPanel> = (0..3).map(|k| panel(&format!("panel {k}"), &g, Palette::Viridis)).collect();
    let t = std::time::Instant::now();
    heatmap_figure(&dir.path().join("big.png"), &panels, 420, Some("timing")).unwrap();
    eprintln!("3×180² heat-map figure: {:?}", t.elapsed());
    // < 1 s in release; generous here for unoptimised test builds.
    assert!(t.elapsed().as_secs_f64() < 10.0, "{:?}", t.elapsed());
}

/// Renders example figures to $PLOT_GALLERY (default /tmp/plot-gallery)
/// for visual inspection: `cargo test -p gpdp-cli plot::tests::gallery -- --ignored`.
#[test]
#[ignore]
fn gallery() {
    let dir = std::path::PathBuf::from(std::env::var("PLOT_GALLERY").unwrap_or("/tmp/plot-gallery".into()));
    std::fs::create_dir_all(&dir).unwrap();
    // Heat maps: truth, private release, difference; contours of the truth's
    // excursion set on each.
    let truth = bump_grid(120);
    let noisy = Grid2::from_fn(120, 120, (0.0, 1.0), (0.0, 1.0), |x, y| {
        truth.at(((x * 119.0).round()) as usize, ((y * 119.0).round()) as usize)
            + 0.15 * (23.0 * x).sin() * (17.0 * y).cos()
    })
    .unwrap();
    let diff = Grid2::new(
        120,
        120,
        (0.0, 1.0),
        (0.0, 1.0),
        noisy.values.iter().zip(&truth.values).map(|(a, b)| a - b).collect(),
    )
    .unwrap();
    let pts: Vec<[f64; 2]> =
        (0..25).map(|k| [((k * 37) % 100) as f64 / 100.0, ((k * 61) % 100) as f64 / 100.0]).collect();
    fn mk<'a>(
        title: &str,
        g: &'a Grid2,
        pal: Palette,
        truth: &'a Grid2,
        noisy: &'a Grid2,
        pts: &[[f64; 2]],
    ) -> HeatPanel<'a> {
        let mut p = panel(title, g, pal);
        p.points = pts.to_vec();
        p.contours = vec![
            Contour { grid: truth, level: 0.5, color: RGBColor(255, 255, 255), width: 2 },
            Contour { grid: noisy, level: 0.5, color: RGBColor(230, 40, 40), width: 2 },
        ];
        p
    }
    let t = std::time::Instant::now();
    heatmap_figure(
        &dir.join("heat_three_panels.png"),
        &[
            mk("Posterior mean μ_D", &truth, Palette::Viridis, &truth, &noisy, &pts),
            mk("Private sample path", &noisy, Palette::Viridis, &truth, &noisy, &pts),
            mk("Difference", &diff, Palette::Diverging, &truth, &noisy, &pts),
        ],
        420,
        Some("Excursion sets {f ≥ 0.5}: truth (white) vs private (red)"),
    )
    .unwrap();
    eprintln!("3×120² heat map: {:?}", t.elapsed());
    // Non-square domain, grey palette, no colour bar in the second panel.
    let wide = Grid2::from_fn(180, 60, (-2.0, 4.0), (0.0, 2.0), |x, y| (x * 1.3).sin() * (y * 2.0).cos()).unwrap();
    let mut p1 = panel("Wide domain [−2,4]×[0,2]", &wide, Palette::Grey);
    p1.contours = vec![Contour { grid: &wide, level: 0.0, color: RGBColor(214, 39, 40), width: 2 }];
    p1.points = vec![[0.0, 1.0], [3.0, 0.5]];
    let mut p2 = panel("Same, Viridis, no colour bar", &wide, Palette::Viridis);
    p2.colorbar = false;
    p2.contours = p1
        .contours
        .iter()
        .map(|c| Contour { grid: c.grid, level: c.level, color: RGBColor(255, 255, 255), width: 1 })
        .collect();
    p2.points.clear();
    heatmap_figure(&dir.join("heat_wide.png"), &[p1, p2], 380, None).unwrap();

    // Line charts: sample paths; attack advantage vs ε (log x, error bars, guide);
    // ε vs L (log y).
    let xs: Vec<f64> = (0..200).map(|k| k as f64 / 199.0).collect();
    let paths: Vec<Series> = (0..4)
        .map(|k| {
            let ys = xs.iter().map(|&x| (x * (3.0 + k as f64) * 2.0).sin() * 0.6 + 0.1 * k as f64).collect();
            Series {
                label: format!("path {}", k + 1),
                xs: xs.clone(),
                ys,
                err: None,
                style: SeriesStyle::Line,
                color: None,
            }
        })
        .chain(std::iter::once(Series {
            label: "posterior mean".into(),
            xs: xs.clone(),
            ys: xs.iter().map(|&x| 0.2 * (x * 5.0).cos()).collect(),
            err: None,
            style: SeriesStyle::Dashed,
            color: Some(RGBColor(0, 0, 0)),
        }))
        .collect();
    let eps: Vec<f64> = vec![0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0];
    let adv: Vec<f64> = eps.iter().map(|&e: &f64| (1.0 - (-e / 8.0).exp()) * 0.9).collect();
    let bound: Vec<f64> = eps.iter().map(|&e: &f64| ((e.exp() - 1.0) / (e.exp() + 1.0)).min(1.0)).collect();
    let ls: Vec<f64> = (1..=64).map(|l| l as f64).collect();
    let charts = [
        LineChart { series: paths, ..chart("Posterior sample paths", vec![]) },
        LineChart {
            title: "Membership attack vs ε".into(),
            x_label: "ε".into(),
            y_label: "advantage".into(),
            log_x: true,
            log_y: false,
            series: vec![
                Series {
                    label: "empirical (±2 s.e.)".into(),
                    xs: eps.clone(),
                    ys: adv,
                    err: Some(vec![0.04; 7]),
                    style: SeriesStyle::LinePoints,
                    color: None,
                },
                Series {
                    label: "DP bound".into(),
                    xs: eps.clone(),
                    ys: bound,
                    err: None,
                    style: SeriesStyle::Dashed,
                    color: None,
                },
            ],
            hlines: vec![(1.0, "trivial".into())],
            x_range: None,
            y_range: Some((0.0, 1.1)),
            x_ticks: None,
        },
        LineChart {
            title: "ε vs number of draws L".into(),
            x_label: "L".into(),
            y_label: "ε".into(),
            log_x: true,
            log_y: true,
            series: vec![
                Series {
                    label: "r = 1".into(),
                    xs: ls.clone(),
                    ys: ls.iter().map(|l| 0.8 * l.sqrt() + 0.02 * l).collect(),
                    err: None,
                    style: SeriesStyle::Line,
                    color: None,
                },
                Series {
                    label: "r = 10".into(),
                    xs: ls.clone(),
                    ys: ls.iter().map(|l| 0.08 * l.sqrt() + 0.002 * l).collect(),
                    err: None,
                    style: SeriesStyle::Points,
                    color: None,
                },
            ],
            hlines: vec![(10.0, "ε = 10".into())],
            x_range: None,
            y_range: None,
            x_ticks: None,
        },
    ];
    line_charts(&dir.join("lines.png"), &charts, (520, 400)).unwrap();

    // Histograms (Figure 6 style).
    let mut h2 = hist_chart();
    h2.title = "Narrow range, 25 bins".into();
    h2.bins = 25;
    h2.range = Some((-1.0, 2.0));
    histogram_charts(&dir.join("histograms.png"), &[hist_chart(), h2], (520, 400)).unwrap();
    // Small sizes stay legible.
    line_charts(&dir.join("lines_small.png"), &charts[1..2], (320, 240)).unwrap();
    line_charts(&dir.join("lines_big.png"), &charts[2..3], (1200, 900)).unwrap();
    heatmap_figure(
        &dir.join("heat_small.png"),
        &[mk("Small panel", &truth, Palette::Viridis, &truth, &noisy, &pts)],
        240,
        Some("Small"),
    )
    .unwrap();
}
