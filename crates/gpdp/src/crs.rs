//! Coordinate reference systems given as `EPSG:CODE`: the EPSG registry's
//! proj4 strings and WKT (from crs-definitions), names, units and axis names
//! for labels, and reprojection of points with proj4rs (a pure-Rust port of
//! PROJ.4). Shared by the command line (GIS outputs, `--reproject-to`), the
//! service (the viewer's axis labels) and plans (plan.json's `crs`).

use crate::error::{Error, Result};

/// At most 40 characters of `s` (for messages that quote input).
fn excerpt(s: &str) -> String {
    let t: String = s.chars().take(40).collect();
    if t.len() < s.len() { format!("{t}…") } else { t }
}

/// A coordinate reference system given as `EPSG:CODE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crs {
    /// The EPSG code.
    pub code: u16,
    proj4: &'static str,
    wkt: &'static str,
}

impl std::str::FromStr for Crs {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        let code = t
            .strip_prefix("EPSG:")
            .or_else(|| t.strip_prefix("epsg:"))
            .and_then(|c| c.parse::<u16>().ok())
            .ok_or_else(|| {
                Error::Input(format!(
                    "expected EPSG:CODE, e.g. EPSG:27700 (British National Grid), not '{}'",
                    excerpt(s)
                ))
            })?;
        let def = crs_definitions::from_code(code)
            .ok_or_else(|| Error::Input(format!("EPSG:{code} is not in gpdp's CRS registry (crs-definitions)")))?;
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
        let src = Proj::from_proj_string(self.proj4).map_err(|e| Error::Input(format!("EPSG:{}: {e}", self.code)))?;
        let dst = Proj::from_proj_string(to.proj4).map_err(|e| Error::Input(format!("EPSG:{}: {e}", to.code)))?;
        let scale_in = if self.is_geographic() { 1f64.to_radians() } else { 1.0 };
        let scale_out = if to.is_geographic() { 1f64.to_degrees() } else { 1.0 };
        let mut buf: Vec<(f64, f64, f64)> = pts.iter().map(|&[x, y]| (x * scale_in, y * scale_in, 0.0)).collect();
        proj4rs::transform::transform(&src, &dst, buf.as_mut_slice())
            .map_err(|e| Error::Input(format!("reprojecting EPSG:{} to EPSG:{}: {e}", self.code, to.code)))?;
        for (p, &(x, y, _)) in pts.iter_mut().zip(&buf) {
            *p = [x * scale_out, y * scale_out];
        }
        if let Some(i) = pts.iter().position(|p| !(p[0].is_finite() && p[1].is_finite())) {
            return Err(Error::Input(format!(
                "reprojecting EPSG:{} to EPSG:{}: point {} has no image (outside the projection's area?)",
                self.code,
                to.code,
                i + 1
            )));
        }
        Ok(())
    }
}

impl std::fmt::Display for Crs {
    /// `EPSG:CODE`, as parsed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EPSG:{}", self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_units_and_axes() {
        let bng: Crs = "EPSG:27700".parse().unwrap();
        assert_eq!(bng.label(), "EPSG:27700 OSGB 1936 / British National Grid");
        assert_eq!((bng.unit(), bng.is_geographic()), ("m", false));
        assert_eq!(bng.axis_names(), ["easting".to_string(), "northing".to_string()]);
        assert_eq!(bng.to_string(), "EPSG:27700");
        let wgs: Crs = " epsg:4326 ".parse().unwrap();
        assert_eq!((wgs.unit(), wgs.is_geographic()), ("°", true));
        assert_eq!(wgs.axis_names(), ["longitude".to_string(), "latitude".to_string()]);
        assert!(wgs.wkt().starts_with("GEOGCS[") || wgs.wkt().starts_with("GEOGCRS["), "{}", wgs.wkt());
    }

    #[test]
    fn bad_codes_are_errors_naming_the_input() {
        let e = "27700".parse::<Crs>().unwrap_err().to_string();
        assert!(e.contains("expected EPSG:CODE") && e.contains("'27700'"), "{e}");
        let e = "EPSG:1".parse::<Crs>().unwrap_err().to_string();
        assert!(e.contains("EPSG:1 is not in gpdp's CRS registry"), "{e}");
        let long = "x".repeat(100);
        assert!(long.parse::<Crs>().unwrap_err().to_string().contains('…'));
    }

    /// The origin of the British National Grid's true origin (49° N, 2° W)
    /// lies at easting 400 000 m, northing −100 000 m (the grid's false
    /// origin offsets; Ordnance Survey, "A guide to coordinate systems in
    /// Great Britain"); on the Airy ellipsoid (OSGB 36 datum) it is within
    /// about 100 m of the WGS 84 position, and a round trip is exact.
    #[test]
    fn reprojection_of_the_true_origin_and_back() {
        let (bng, wgs): (Crs, Crs) = ("EPSG:27700".parse().unwrap(), "EPSG:4326".parse().unwrap());
        let mut p = [[-2.0, 49.0]];
        wgs.reproject(&bng, &mut p).unwrap();
        assert!((p[0][0] - 400_000.0).abs() < 150.0 && (p[0][1] + 100_000.0).abs() < 150.0, "{p:?}");
        bng.reproject(&wgs, &mut p).unwrap();
        assert!((p[0][0] + 2.0).abs() < 1e-7 && (p[0][1] - 49.0).abs() < 1e-7, "{p:?}");
    }
}
