//! The published folder of a release: `paths.csv`, `report.json`, and for a
//! 2-D grid `map.png` + `excursion.geojson`, for a 1-D grid `paths.png` — the
//! figures as PNG, SVG or both ([`MapFormats`], `--map-format`).
//!
//! Every file is a function of the released values and public inputs only:
//! the file list depends on the query's shape, the figures and the GeoJSON
//! on the paths, `report.json` is the mechanism's public report plus the
//! file list and the map's threshold. Diagnostics about the data (clipping
//! counts, timings) never come here; they go to stderr and the operator log.

use std::path::Path;

use crate::output::gis::{Crs, polygons_to_wgs84, qgis_style, sld_style, write_geotiff};

use anyhow::{Result, ensure};
use gpdp::postprocess::{Grid2, excursion_geojson, excursion_polygons};
use gpdp::{PrivateRelease, Query, ReleaseReport};
use serde::Serialize;
use serde_json::json;

use super::plot::{
    Contour, FigureFormat, HeatLayout, HeatPanel, LineChart, Palette, Series, SeriesStyle, SharedColorbar,
    heatmap_figure, heatmap_grid, line_charts,
};

/// `report.json`: the mechanism's report, the published files and the
/// threshold of the map and the GeoJSON.
#[derive(Serialize)]
struct PublishedReport<'a> {
    #[serde(flatten)]
    release: &'a ReleaseReport,
    threshold: f64,
    /// The CRS of the coordinates in paths.csv, the map and paths.tif.
    #[serde(skip_serializing_if = "Option::is_none")]
    crs: Option<CrsReport>,
    outputs: &'a [String],
}

/// report.json's `crs`: the outputs' CRS and, with `--reproject-to`, the
/// data's original one.
#[derive(Serialize)]
struct CrsReport {
    code: String,
    name: &'static str,
    unit: &'static str,
    axes: [String; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    reprojected_from: Option<String>,
}

/// The coordinate reference of a release's outputs: the CRS they are in and,
/// with `--reproject-to`, the CRS the data were given in.
#[derive(Debug, Clone, Copy)]
pub struct Georef<'a> {
    /// The outputs' CRS.
    pub crs: &'a Crs,
    /// The data's CRS before reprojection, if any.
    pub reprojected_from: Option<&'a Crs>,
}

/// GeoJSON coordinates are rounded to 10⁻⁷ degrees (about 1 cm), as RFC 7946
/// suggests for precision that the data support.
const GEOJSON_DECIMALS: i32 = 7;

fn round_polygons(polys: Vec<gpdp::postprocess::contour::Polygon>) -> Vec<gpdp::postprocess::contour::Polygon> {
    let s = 10f64.powi(GEOJSON_DECIMALS);
    let ring = |r: Vec<[f64; 2]>| {
        let mut out: Vec<[f64; 2]> = Vec::with_capacity(r.len());
        for p in r {
            let q = [(p[0] * s).round() / s, (p[1] * s).round() / s];
            if out.last() != Some(&q) {
                out.push(q);
            }
        }
        out
    };
    polys
        .into_iter()
        .map(|p| gpdp::postprocess::contour::Polygon {
            exterior: ring(p.exterior),
            holes: p.holes.into_iter().map(ring).collect(),
        })
        .collect()
}

/// The formats a release's figures (map, maps, paths) are written in — a
/// non-empty set, parsed from `png`, `svg` or a list such as `png,svg`; each
/// figure is written once per format, PNG first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapFormats {
    png: bool,
    svg: bool,
}

impl MapFormats {
    /// PNG only (the default).
    pub const PNG: MapFormats = MapFormats { png: true, svg: false };

    /// The formats, in the order their files are written and listed.
    pub fn iter(self) -> impl Iterator<Item = FigureFormat> {
        [(self.png, FigureFormat::Png), (self.svg, FigureFormat::Svg)].into_iter().filter_map(|(on, f)| on.then_some(f))
    }

    /// The file names of the figure `stem` (e.g. "map"), one per format.
    fn files(self, stem: &str) -> impl Iterator<Item = String> {
        self.iter().map(move |f| format!("{stem}.{f}"))
    }
}

impl Default for MapFormats {
    fn default() -> Self {
        MapFormats::PNG
    }
}

impl std::str::FromStr for MapFormats {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        let mut m = MapFormats { png: false, svg: false };
        for part in s.split(',') {
            match part.parse::<FigureFormat>()? {
                FigureFormat::Png => m.png = true,
                FigureFormat::Svg => m.svg = true,
            }
        }
        ensure!(m.png || m.svg, "'{s}': expected png, svg or png,svg");
        Ok(m)
    }
}

/// The files a release of `query` publishes, in order (public).
pub fn published_files(query: &Query, crs: Option<&Crs>, draws: usize, formats: MapFormats) -> Vec<String> {
    let mut out = vec!["paths.csv".to_string(), "report.json".to_string()];
    if let Query::Grid(g) = query {
        match g.counts().len() {
            2 => {
                out.extend(formats.files("map"));
                out.push("excursion.geojson".to_string());
                if crs.is_some() {
                    // The georeferenced data, with its QGIS and SLD styles (the
                    // figures are not georeferenced: their titles and colour bars
                    // would land on the ground).
                    out.extend(["paths.tif", "paths.qml", "paths.sld"].map(String::from));
                }
                if draws > 1 {
                    out.extend(formats.files("maps"));
                }
            }
            1 => out.extend(formats.files("paths")),
            _ => {}
        }
    }
    out
}

/// What every map panel of a release shares.
struct PanelStyle<'s> {
    threshold: f64,
    range: Option<(f64, f64)>,
    names: &'s [String],
    cb_label: &'s str,
}

impl PanelStyle<'_> {
    fn panel<'g>(&self, g: &'g Grid2, title: String, shared: Option<(f64, f64)>) -> HeatPanel<'g> {
        HeatPanel {
            title,
            grid: g,
            palette: Palette::Diverging,
            range: shared.or(self.range),
            contours: vec![Contour {
                grid: g,
                level: self.threshold,
                color: plotters::style::RGBColor(0, 0, 0),
                width: 2,
            }],
            points: vec![],
            x_label: self.names[0].clone(),
            y_label: self.names[1].clone(),
            colorbar: true,
            colorbar_label: self.cb_label.to_string(),
            shade_above: Some(self.threshold),
        }
    }
}

/// At most this many draws are drawn as small multiples in maps.png.
const MAX_MULTIPLES: usize = 6;

/// Writes the published folder of `rel` into `dir` (which exists); `names`
/// are the coordinate column names, `threshold` the level t of {f ≥ t}, the
/// figures written in each of `formats`.
pub fn write_release(
    dir: &Path,
    rel: &PrivateRelease,
    query: &Query,
    names: &[String],
    threshold: f64,
    georef: Option<Georef>,
    formats: MapFormats,
) -> Result<Vec<String>> {
    let crs = georef.map(|g| g.crs);
    let pts = query.points();
    // Axis labels: the coordinate's name with its unit, and the CRS on the first.
    let axis_labels: Vec<String> = match crs {
        Some(c) if names.len() == 2 => {
            let unit = if c.unit().is_empty() { String::new() } else { format!(" [{}]", c.unit()) };
            vec![format!("{}{unit} — {}", names[0], c.label()), format!("{}{unit}", names[1])]
        }
        _ => names.to_vec(),
    };
    let draws = rel.paths.len();
    let mut w = csv::Writer::from_path(dir.join("paths.csv"))?;
    let mut header: Vec<String> = names.to_vec();
    header.extend((1..=draws).map(|l| format!("path_{l}")));
    w.write_record(&header)?;
    // One reused cell buffer: no allocation per value (the same text as `{v}`).
    let mut cell = String::with_capacity(32);
    let mut field = |w: &mut csv::Writer<std::fs::File>, v: f64| -> csv::Result<()> {
        use std::fmt::Write as _;
        cell.clear();
        let _ = write!(cell, "{v}");
        w.write_field(cell.as_bytes())
    };
    for (i, x) in pts.iter().enumerate() {
        for &v in x {
            field(&mut w, v)?;
        }
        for p in &rel.paths {
            field(&mut w, p[i])?;
        }
        w.write_record(None::<&[u8]>)?;
    }
    w.flush()?;
    let report = &rel.report;
    // ε and δ are shown rounded up (never below the certified values), as
    // the privacy statement shows them.
    let (eps_shown, delta_shown) = (
        gpdp::privacy::display::epsilon_up(report.privacy.epsilon, 4),
        gpdp::privacy::display::delta_up(report.privacy.delta, 4),
    );
    let eps_line =
        format!("ε = {eps_shown}, δ = {delta_shown}{}", if report.private { "" } else { " (seeded: not private)" });
    let units = report.data_policy.units.as_deref().map(|u| format!(" [{u}]")).unwrap_or_default();
    // In data units the colours are centred on the threshold (white = t), over the stated range.
    let range = report.data_policy.response_range.map(|r| {
        let m = (r.hi - threshold).abs().max((threshold - r.lo).abs());
        (threshold - m, threshold + m)
    });
    if let Query::Grid(g) = query {
        let (counts, lo, hi) = (g.counts(), g.lower(), g.upper());
        if counts.len() == 2 {
            let grid = Grid2::new(counts[0], counts[1], (lo[0], hi[0]), (lo[1], hi[1]), rel.paths[0].clone())?;
            let status = if report.private { "private release" } else { "NOT private (seeded)" };
            let cb_label = report.data_policy.units.clone().unwrap_or_else(|| "f".into());
            let style = PanelStyle { threshold, range, names: &axis_labels, cb_label: &cb_label };
            let panel_for = |g, title, shared| style.panel(g, title, shared);
            let legend = format!("{status} · ε = {eps_shown}, δ = {delta_shown} · hatched: f ≥ {threshold}{units}");
            let map = [panel_for(&grid, "path 1: one random draw, not the best estimate".into(), None)];
            for f in formats.iter() {
                heatmap_figure(&dir.join(format!("map.{f}")), &map, 720, Some(&legend))?;
            }
            if rel.paths.len() > 1 {
                // All draws (up to 6) as small multiples, on one colour range.
                let shown = rel.paths.len().min(MAX_MULTIPLES);
                let grids = (0..shown)
                    .map(|l| Grid2::new(counts[0], counts[1], (lo[0], hi[0]), (lo[1], hi[1]), rel.paths[l].clone()))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                let m = rel.paths[..shown].iter().flatten().fold(0.0f64, |m, v| m.max((v - threshold).abs()));
                let shared = range.or(Some((threshold - m.max(1e-12), threshold + m.max(1e-12))));
                let panels: Vec<HeatPanel> = grids
                    .iter()
                    .enumerate()
                    .map(|(l, g)| panel_for(g, format!("path {} (a random draw)", l + 1), shared))
                    .collect();
                // One row up to three draws, two rows from four on; one colour bar for all.
                let rows = if shown <= 3 { 1 } else { 2 };
                let layout = HeatLayout {
                    panel_px: 420,
                    columns: shown.div_ceil(rows),
                    shared: Some(SharedColorbar {
                        palette: Palette::Diverging,
                        range: shared,
                        label: cb_label.clone(),
                    }),
                };
                for f in formats.iter() {
                    heatmap_grid(&dir.join(format!("maps.{f}")), &panels, &layout, Some(&legend))?;
                }
            }
            let polys = excursion_polygons(&grid, threshold);
            let (polys, coordinates) = match crs {
                Some(c) => (
                    round_polygons(polygons_to_wgs84(c, &polys)?),
                    format!("WGS 84 longitude/latitude (RFC 7946) to 7 decimals, reprojected from {}", c.label()),
                ),
                None => (polys, "domain coordinates (x1, x2), not longitude/latitude".to_string()),
            };
            let gj = excursion_geojson(
                &polys,
                json!({
                    "level": threshold,
                    "threshold": threshold,
                    "units": report.data_policy.units,
                    "set": format!("{{x : f(x) >= {threshold}}} of released path 1 (one random draw)"),
                    "epsilon": report.privacy.epsilon,
                    "delta": report.privacy.delta,
                    "private": report.private,
                    "coordinates": coordinates,
                }),
            );
            if let Some(c) = crs {
                let (dx, dy) = ((hi[0] - lo[0]) / (counts[0] - 1) as f64, (hi[1] - lo[1]) / (counts[1] - 1) as f64);
                let units = report.data_policy.units.as_deref();
                write_geotiff(
                    &dir.join("paths.tif"),
                    counts[0],
                    counts[1],
                    [lo[0], lo[1], dx, dy],
                    &rel.paths,
                    c,
                    units,
                )?;
                // Its styles: map.png's palette over map.png's colour range.
                let shown = gpdp::postprocess::palette::color_range(Palette::Diverging, grid.min_max(), range);
                std::fs::write(dir.join("paths.qml"), qgis_style(Palette::Diverging, shown, units))?;
                std::fs::write(dir.join("paths.sld"), sld_style(Palette::Diverging, shown, units))?;
            }
            std::fs::write(dir.join("excursion.geojson"), serde_json::to_vec_pretty(&gj)?)?;
        } else if counts.len() == 1 {
            let xs: Vec<f64> = pts.iter().map(|x| x[0]).collect();
            let series = rel
                .paths
                .iter()
                .enumerate()
                .take(20)
                .map(|(l, p)| Series {
                    label: if l < 5 { format!("path {}", l + 1) } else { String::new() },
                    xs: xs.clone(),
                    ys: p.clone(),
                    err: None,
                    style: SeriesStyle::Line,
                    color: None,
                })
                .collect();
            let chart = LineChart {
                title: format!("released sample paths — {eps_line}"),
                x_label: axis_labels[0].clone(),
                y_label: format!("f(x){units}"),
                log_x: false,
                log_y: false,
                series,
                hlines: vec![(threshold, format!("t = {threshold}"))],
                x_range: None,
                y_range: None,
                x_ticks: None,
            };
            for f in formats.iter() {
                line_charts(&dir.join(format!("paths.{f}")), std::slice::from_ref(&chart), (900, 520))?;
            }
        }
    }
    let outputs = published_files(query, crs, rel.paths.len(), formats);
    let crs_report = georef.map(|g| CrsReport {
        code: format!("EPSG:{}", g.crs.code),
        name: g.crs.name(),
        unit: g.crs.unit(),
        axes: [names.first().cloned().unwrap_or_default(), names.get(1).cloned().unwrap_or_default()],
        reprojected_from: g.reprojected_from.map(|c| format!("EPSG:{}", c.code)),
    });
    let published = PublishedReport { release: report, threshold, crs: crs_report, outputs: &outputs };
    std::fs::write(dir.join("report.json"), serde_json::to_vec_pretty(&published)?)?;
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpdp::Grid;
    use gpdp::model::domain::Domain;

    fn grid(spec: &str, domain: &str) -> Query {
        Query::Grid(Grid::parse(spec, &domain.parse::<Domain>().unwrap()).unwrap())
    }

    #[test]
    fn map_formats_parse_as_a_set() {
        assert_eq!("png".parse::<MapFormats>().unwrap(), MapFormats::PNG);
        let both = "svg, PNG,svg".parse::<MapFormats>().unwrap();
        assert_eq!(both.iter().collect::<Vec<_>>(), [FigureFormat::Png, FigureFormat::Svg]);
        assert_eq!("svg".parse::<MapFormats>().unwrap().iter().collect::<Vec<_>>(), [FigureFormat::Svg]);
        for bad in ["", "png,", "pdf", "png;svg"] {
            assert!(bad.parse::<MapFormats>().is_err(), "{bad}");
        }
    }

    #[test]
    fn published_files_follow_the_formats() {
        let crs: Crs = "EPSG:27700".parse().unwrap();
        let map = grid("4x3", "box:0,1,0,1");
        let svg = "svg".parse().unwrap();
        let both = "png,svg".parse().unwrap();
        let gis = ["paths.tif", "paths.qml", "paths.sld"];
        let with = |figures: &[&str], more: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = ["paths.csv", "report.json"].iter().map(|s| s.to_string()).collect();
            v.extend(figures.iter().map(|s| s.to_string()));
            v.push("excursion.geojson".into());
            v.extend(gis.iter().map(|s| s.to_string()));
            v.extend(more.iter().map(|s| s.to_string()));
            v
        };
        // The CRS gives the GeoTIFF and its styles, whatever the figures' format (never a world file).
        assert_eq!(published_files(&map, Some(&crs), 2, MapFormats::PNG), with(&["map.png"], &["maps.png"]));
        assert_eq!(
            published_files(&map, Some(&crs), 2, both),
            with(&["map.png", "map.svg"], &["maps.png", "maps.svg"])
        );
        assert_eq!(published_files(&map, Some(&crs), 2, svg), with(&["map.svg"], &["maps.svg"]));
        assert_eq!(published_files(&map, None, 1, svg), ["paths.csv", "report.json", "map.svg", "excursion.geojson"]);
        let line = grid("10", "interval:0,1");
        assert_eq!(published_files(&line, None, 3, both), ["paths.csv", "report.json", "paths.png", "paths.svg"]);
    }
}
