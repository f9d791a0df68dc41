//! GIS outputs for releases with `--crs EPSG:CODE`: GeoJSON in WGS 84
//! longitude/latitude (RFC 7946), reprojected with proj4rs (a pure-Rust
//! port of PROJ.4; CRS definitions from crs-definitions, the EPSG registry's
//! proj4 strings and WKT), and a GeoTIFF of the released paths (one band per
//! draw) with the CRS and geotransform as GeoTIFF keys.

use std::path::Path;

use anyhow::{Context, Result, bail};
use gpdp::postprocess::contour::Polygon;

/// A coordinate reference system given as `EPSG:CODE`.
#[derive(Debug, Clone)]
pub struct Crs {
    /// The EPSG code.
    pub code: u16,
    proj4: &'static str,
    wkt: &'static str,
}

impl std::str::FromStr for Crs {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        let code = t
            .strip_prefix("EPSG:")
            .or_else(|| t.strip_prefix("epsg:"))
            .and_then(|c| c.parse::<u16>().ok())
            .with_context(|| {
                format!("expected EPSG:CODE, e.g. EPSG:27700 (British National Grid), not '{}'", gpdp::io::excerpt(s))
            })?;
        let def = crs_definitions::from_code(code)
            .with_context(|| format!("EPSG:{code} is not in gpdp's CRS registry (crs-definitions)"))?;
        Ok(Crs { code, proj4: def.proj4, wkt: def.wkt })
    }
}

impl Crs {
    /// Whether coordinates are longitude/latitude (not metres).
    pub fn is_geographic(&self) -> bool {
        self.proj4.contains("+proj=longlat")
    }

    /// The CRS as OGC WKT (for `.prj` files).
    pub fn wkt(&self) -> &'static str {
        self.wkt
    }

    /// The CRS's name from its WKT, e.g. "OSGB 1936 / British National Grid".
    pub fn name(&self) -> &'static str {
        self.wkt.split_once("[\"").and_then(|(_, r)| r.split_once('"')).map_or("", |(n, _)| n)
    }

    /// "EPSG:CODE name", e.g. "EPSG:27700 OSGB 1936 / British National Grid".
    pub fn label(&self) -> String {
        let n = self.name();
        if n.is_empty() { format!("EPSG:{}", self.code) } else { format!("EPSG:{} {n}", self.code) }
    }

    /// The coordinates' unit: "°" for a geographic CRS, else the proj4
    /// `+units` ("m", "ft", "us-ft", …; "m" when absent, PROJ's default).
    pub fn unit(&self) -> &'static str {
        if self.is_geographic() {
            return "°";
        }
        self.proj4
            .split_whitespace()
            .find_map(|t| t.strip_prefix("+units="))
            .unwrap_or(if self.proj4.contains("+to_meter=") { "" } else { "m" })
    }

    /// Names of the two coordinates: the WKT's AXIS names in lower case
    /// (e.g. "easting", "northing"); "longitude", "latitude" for a
    /// geographic CRS; else "x", "y".
    pub fn axis_names(&self) -> [String; 2] {
        if self.is_geographic() {
            return ["longitude".into(), "latitude".into()];
        }
        let names: Vec<String> = self
            .wkt
            .split("AXIS[\"")
            .skip(1)
            .filter_map(|r| r.split_once('"').map(|(n, _)| n.to_lowercase()))
            .collect();
        match names.as_slice() {
            [a, b, ..] if !a.is_empty() && !b.is_empty() && a != b => [a.clone(), b.clone()],
            _ => ["x".into(), "y".into()],
        }
    }

    /// Reprojects points (x, y) from this CRS to `to` in place; geographic
    /// coordinates are longitude/latitude in degrees on both sides.
    pub fn reproject(&self, to: &Crs, pts: &mut [[f64; 2]]) -> Result<()> {
        use proj4rs::proj::Proj;
        let src = Proj::from_proj_string(self.proj4).map_err(|e| anyhow::anyhow!("EPSG:{}: {e}", self.code))?;
        let dst = Proj::from_proj_string(to.proj4).map_err(|e| anyhow::anyhow!("EPSG:{}: {e}", to.code))?;
        let scale_in = if self.is_geographic() { 1f64.to_radians() } else { 1.0 };
        let scale_out = if to.is_geographic() { 1f64.to_degrees() } else { 1.0 };
        let mut buf: Vec<(f64, f64, f64)> = pts.iter().map(|&[x, y]| (x * scale_in, y * scale_in, 0.0)).collect();
        proj4rs::transform::transform(&src, &dst, buf.as_mut_slice())
            .map_err(|e| anyhow::anyhow!("reprojecting EPSG:{} to EPSG:{}: {e}", self.code, to.code))?;
        for (p, &(x, y, _)) in pts.iter_mut().zip(&buf) {
            *p = [x * scale_out, y * scale_out];
        }
        if let Some(i) = pts.iter().position(|p| !(p[0].is_finite() && p[1].is_finite())) {
            bail!(
                "reprojecting EPSG:{} to EPSG:{}: point {} has no image (outside the projection's area?)",
                self.code,
                to.code,
                i + 1
            );
        }
        Ok(())
    }

    /// Reprojects polygons from this CRS to WGS 84 longitude/latitude in degrees.
    /// (Geographic input is in degrees, as [`Self::reproject`] takes it.)
    pub fn polygons_to_wgs84(&self, polys: &[Polygon]) -> Result<Vec<Polygon>> {
        let wgs84: Crs = "EPSG:4326".parse()?;
        let ring = |r: &[[f64; 2]]| -> Result<Vec<[f64; 2]>> {
            let mut pts = r.to_vec();
            self.reproject(&wgs84, &mut pts)?;
            Ok(pts)
        };
        polys
            .iter()
            .map(|p| {
                Ok(Polygon {
                    exterior: ring(&p.exterior)?,
                    holes: p.holes.iter().map(|h| ring(h)).collect::<Result<_>>()?,
                })
            })
            .collect()
    }
}

/// Reprojects a dataset's 2-D covariates from `from` to `to`.
pub fn reproject_dataset(data: gpdp::Dataset, from: &Crs, to: &Crs, what: &Path) -> Result<gpdp::Dataset> {
    if data.dim() != 2 {
        bail!("--reproject-to needs 2-D covariates; the data are {}-D", data.dim());
    }
    let mut pts: Vec<[f64; 2]> = data.x().iter().map(|p| [p[0], p[1]]).collect();
    from.reproject(to, &mut pts).with_context(|| format!("{}", what.display()))?;
    let flat: Vec<f64> = pts.iter().flatten().copied().collect();
    Ok(gpdp::Dataset::new(gpdp::model::points::Points::new(flat, 2)?, data.y().to_vec())?)
}

/// `s` with XML's special characters &, <, > and " escaped (for GDAL's XML sidecars and tags).
pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// GDAL's metadata tag (TIFFTAG_GDAL_METADATA, 42112): an XML list of
/// items; per band (`sample`, 0-based) its description ("path 1" …, what
/// rasterio's `descriptions` and QGIS's band names show) and its unit
/// (rasterio's `units`, GDAL's `GetUnitType`).
fn gdal_metadata(bands: usize, units: Option<&str>) -> String {
    let mut x = String::from("<GDALMetadata>\n");
    for b in 0..bands {
        x.push_str(&format!(
            "  <Item name=\"DESCRIPTION\" sample=\"{b}\" role=\"description\">released path {}</Item>\n",
            b + 1
        ));
        if let Some(u) = units {
            x.push_str(&format!(
                "  <Item name=\"UNITTYPE\" sample=\"{b}\" role=\"unittype\">{}</Item>\n",
                xml_escape(u)
            ));
        }
    }
    x.push_str("</GDALMetadata>\n");
    x
}

/// Writes a GeoTIFF of `bands` (each nx·ny values, x fastest, rows from the
/// *lowest* y up) on the grid with points x0 + i·dx, y0 + j·dy: 64-bit float
/// samples, one band per draw, PixelIsPoint georeferencing (the tie point is
/// the grid point (x0, y_max) at pixel (0, 0)), CRS `crs` (as a projected
/// or geographic CRS key, as GeoTIFF 1.1 requires), each band described as
/// "released path b" (1-based) with the responses' `units` ([`gdal_metadata`]).
pub fn write_geotiff(
    path: &Path,
    nx: usize,
    ny: usize,
    grid: [f64; 4],
    bands: &[Vec<f64>],
    crs: &Crs,
    units: Option<&str>,
) -> Result<()> {
    let [x0, y0, dx, dy] = grid;
    let nb = bands.len();
    if nb == 0 || nb > u16::MAX as usize || bands.iter().any(|b| b.len() != nx * ny) {
        bail!("GeoTIFF {}: bands must hold nx·ny = {} values each", path.display(), nx * ny);
    }
    let y_max = y0 + (ny - 1) as f64 * dy;
    let (model, cs_key) = if crs.is_geographic() { (2u16, 2048u16) } else { (1, 3072) };
    // Pixel data: rows from the top (largest y), samples interleaved per pixel.
    let mut data = Vec::with_capacity(nx * ny * nb * 8);
    for r in 0..ny {
        let j = ny - 1 - r;
        for i in 0..nx {
            for b in bands {
                data.extend_from_slice(&b[i + nx * j].to_le_bytes());
            }
        }
    }
    // Tags (sorted by number), each (tag, type, values). Types: 3 SHORT, 4 LONG, 12 DOUBLE.
    enum V {
        Ascii(Vec<u8>),
        Short(Vec<u16>),
        Long(Vec<u32>),
        Double(Vec<f64>),
    }
    let data_offset = 8u32;
    let data_len = u32::try_from(data.len()).context("GeoTIFF larger than 4 GiB")?;
    let mut tags: Vec<(u16, V)> = vec![
        (256, V::Long(vec![nx as u32])),
        (257, V::Long(vec![ny as u32])),
        (258, V::Short(vec![64; nb])),
        (259, V::Short(vec![1])),
        (262, V::Short(vec![1])),
        (273, V::Long(vec![data_offset])),
        (277, V::Short(vec![nb as u16])),
        (278, V::Long(vec![ny as u32])),
        (279, V::Long(vec![data_len])),
        (284, V::Short(vec![1])),
        (339, V::Short(vec![3; nb])),
        (33550, V::Double(vec![dx, dy, 0.0])),
        (33922, V::Double(vec![0.0, 0.0, 0.0, x0, y_max, 0.0])),
        // GeoKeyDirectory: version 1.1.0, 3 keys: model type (1 projected, 2
        // geographic), raster type PixelIsPoint, then ProjectedCSTypeGeoKey
        // (3072) or GeographicTypeGeoKey (2048).
        (34735, V::Short(vec![1, 1, 0, 3, 1024, 0, 1, model, 1025, 0, 1, 2, cs_key, 0, 1, crs.code])),
    ];
    if nb > 1 {
        tags.push((338, V::Short(vec![0; nb - 1])));
    }
    let mut meta = gdal_metadata(nb, units).into_bytes();
    meta.push(0);
    tags.push((42112, V::Ascii(meta)));
    tags.sort_by_key(|t| t.0);
    let mut out = Vec::with_capacity(data.len() + 1024);
    out.extend_from_slice(b"II");
    out.extend_from_slice(&42u16.to_le_bytes());
    let ifd_offset = data_offset + data_len + (data_len % 2);
    out.extend_from_slice(&ifd_offset.to_le_bytes());
    out.extend_from_slice(&data);
    if data_len % 2 == 1 {
        out.push(0);
    }
    // IFD: count, entries, next-IFD offset 0, then the out-of-line values.
    let n = tags.len();
    let mut extra: Vec<u8> = Vec::new();
    let extra_start = ifd_offset as usize + 2 + 12 * n + 4;
    let mut entries = Vec::with_capacity(12 * n);
    for (tag, v) in &tags {
        let (typ, count, bytes): (u16, usize, Vec<u8>) = match v {
            V::Ascii(a) => (2, a.len(), a.clone()),
            V::Short(s) => (3, s.len(), s.iter().flat_map(|x| x.to_le_bytes()).collect()),
            V::Long(l) => (4, l.len(), l.iter().flat_map(|x| x.to_le_bytes()).collect()),
            V::Double(d) => (12, d.len(), d.iter().flat_map(|x| x.to_le_bytes()).collect()),
        };
        entries.extend_from_slice(&tag.to_le_bytes());
        entries.extend_from_slice(&typ.to_le_bytes());
        entries.extend_from_slice(&(count as u32).to_le_bytes());
        if bytes.len() <= 4 {
            let mut b = bytes.clone();
            b.resize(4, 0);
            entries.extend_from_slice(&b);
        } else {
            if extra.len() % 2 == 1 {
                extra.push(0);
            }
            let off = (extra_start + extra.len()) as u32;
            entries.extend_from_slice(&off.to_le_bytes());
            extra.extend_from_slice(&bytes);
        }
    }
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&entries);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&extra);
    std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))
}

/// The six lines of a world file for an image whose map (`g`) maps pixel
/// edges `g.px`, `g.py` onto the domain rectangle: pixel size A = Δx/Δpx,
/// E = −Δy/Δpy, and the centre of the upper-left pixel,
/// C = x_left + (½ − px_left)·A, F = y_top + (½ − py_top)·E.
pub fn world_file(g: &crate::output::plot::PanelGeoref) -> String {
    let a = (g.x.1 - g.x.0) / (g.px.1 - g.px.0);
    let e = -(g.y.1 - g.y.0) / (g.py.1 - g.py.0);
    let c = g.x.0 + (0.5 - g.px.0) * a;
    let f = g.y.1 + (0.5 - g.py.0) * e;
    format!("{a}\n0\n0\n{e}\n{c}\n{f}\n")
}
