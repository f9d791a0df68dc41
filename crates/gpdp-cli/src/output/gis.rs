//! GIS outputs for releases with `--crs EPSG:CODE`: GeoJSON in WGS 84
//! longitude/latitude (RFC 7946), reprojected with proj4rs (a pure-Rust
//! port of PROJ.4; CRS definitions from crs-definitions, the EPSG registry's
//! proj4 strings and WKT), and a GeoTIFF of the released paths (one band per
//! draw) with the CRS and geotransform as GeoTIFF keys.

use std::path::Path;

use anyhow::{Context, Result, bail};
use gpdp::postprocess::contour::Polygon;

pub use gpdp::crs::Crs;

/// Reprojects polygons from `crs` to WGS 84 longitude/latitude in degrees.
/// (Geographic input is in degrees, as [`Crs::reproject`] takes it.)
pub fn polygons_to_wgs84(crs: &Crs, polys: &[Polygon]) -> Result<Vec<Polygon>> {
    let wgs84: Crs = "EPSG:4326".parse()?;
    let ring = |r: &[[f64; 2]]| -> Result<Vec<[f64; 2]>> {
        let mut pts = r.to_vec();
        crs.reproject(&wgs84, &mut pts)?;
        Ok(pts)
    };
    polys
        .iter()
        .map(|p| {
            Ok(Polygon { exterior: ring(&p.exterior)?, holes: p.holes.iter().map(|h| ring(h)).collect::<Result<_>>()? })
        })
        .collect()
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

/// The colour ramp of a raster style: the palette's stops (uniform in t,
/// interpolated linearly — exactly [`gpdp::postprocess::palette::color`])
/// placed at their values over `(lo, hi)`, as (value, "#rrggbb").
fn ramp(palette: gpdp::postprocess::palette::Palette, (lo, hi): (f64, f64)) -> Vec<(f64, String)> {
    let stops = gpdp::postprocess::palette::stops(palette);
    let k = stops.len().max(2) - 1;
    stops
        .iter()
        .enumerate()
        .map(|(i, [r, g, b])| (lo + (hi - lo) * i as f64 / k as f64, format!("#{r:02x}{g:02x}{b:02x}")))
        .collect()
}

/// A QGIS layer style (`.qml`; QGIS loads `paths.qml` with `paths.tif`):
/// band 1 as a single-band pseudocolour raster, the figure's palette
/// interpolated over the figure's colour range `range` (values outside get
/// the end colours, as on map.png), labelled with `units`.
pub fn qgis_style(palette: gpdp::postprocess::palette::Palette, range: (f64, f64), units: Option<&str>) -> String {
    let (lo, hi) = range;
    let unit = units.map(|u| format!(" {}", xml_escape(u))).unwrap_or_default();
    let items: String = ramp(palette, range)
        .iter()
        .map(|(v, c)| format!("          <item alpha=\"255\" value=\"{v}\" label=\"{v}{unit}\" color=\"{c}\"/>\n"))
        .collect();
    format!(
        "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>\n\
<qgis version=\"3.28.0\" styleCategories=\"Symbology\">\n\
  <pipe>\n\
    <rasterrenderer type=\"singlebandpseudocolor\" band=\"1\" opacity=\"1\" alphaBand=\"-1\" classificationMin=\"{lo}\" classificationMax=\"{hi}\" nodataColor=\"\">\n\
      <rasterTransparency/>\n\
      <minMaxOrigin>\n\
        <limits>None</limits>\n\
        <extent>WholeRaster</extent>\n\
        <statAccuracy>Estimated</statAccuracy>\n\
        <cumulativeCutLower>0.02</cumulativeCutLower>\n\
        <cumulativeCutUpper>0.98</cumulativeCutUpper>\n\
        <stdDevFactor>2</stdDevFactor>\n\
      </minMaxOrigin>\n\
      <rastershader>\n\
        <colorrampshader colorRampType=\"INTERPOLATED\" classificationMode=\"1\" clip=\"0\" minimumValue=\"{lo}\" maximumValue=\"{hi}\" labelPrecision=\"4\">\n\
{items}\
        </colorrampshader>\n\
      </rastershader>\n\
    </rasterrenderer>\n\
    <brightnesscontrast brightness=\"0\" contrast=\"0\" gamma=\"1\"/>\n\
    <huesaturation saturation=\"0\" colorizeOn=\"0\" grayscaleMode=\"0\"/>\n\
    <rasterresampler maxOversampling=\"2\"/>\n\
  </pipe>\n\
  <blendMode>0</blendMode>\n\
</qgis>\n"
    )
}

/// The same style as an OGC Styled Layer Descriptor 1.0 (`paths.sld`, for
/// GeoServer, MapServer and QGIS's style import): a raster symbolizer on
/// band 1 with the ramp of [`qgis_style`].
pub fn sld_style(palette: gpdp::postprocess::palette::Palette, range: (f64, f64), units: Option<&str>) -> String {
    let unit = units.map(|u| format!(" {}", xml_escape(u))).unwrap_or_default();
    let entries: String = ramp(palette, range)
        .iter()
        .map(|(v, c)| format!("              <ColorMapEntry color=\"{c}\" quantity=\"{v}\" label=\"{v}{unit}\"/>\n"))
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<StyledLayerDescriptor version=\"1.0.0\" xmlns=\"http://www.opengis.net/sld\" xmlns:ogc=\"http://www.opengis.net/ogc\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://www.opengis.net/sld http://schemas.opengis.net/sld/1.0.0/StyledLayerDescriptor.xsd\">\n\
  <NamedLayer>\n\
    <Name>paths</Name>\n\
    <UserStyle>\n\
      <Title>released path 1 (one random draw)</Title>\n\
      <FeatureTypeStyle>\n\
        <Rule>\n\
          <RasterSymbolizer>\n\
            <ChannelSelection>\n\
              <GrayChannel>\n\
                <SourceChannelName>1</SourceChannelName>\n\
              </GrayChannel>\n\
            </ChannelSelection>\n\
            <ColorMap type=\"ramp\">\n\
{entries}\
            </ColorMap>\n\
          </RasterSymbolizer>\n\
        </Rule>\n\
      </FeatureTypeStyle>\n\
    </UserStyle>\n\
  </NamedLayer>\n\
</StyledLayerDescriptor>\n"
    )
}
