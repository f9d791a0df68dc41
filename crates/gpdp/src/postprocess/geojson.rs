//! GeoJSON (RFC 7946) of excursion polygons.

use serde_json::{Value, json};

use super::contour::Polygon;

/// A GeoJSON (RFC 7946) FeatureCollection with one Feature whose geometry is
/// a MultiPolygon holding `polys` and whose properties are `properties` (an
/// object or null; any other value is stored as `{"value": …}`).
///
/// Coordinates are `[x1, x2]` in the domain's own coordinates — **not**
/// longitude/latitude, whatever GIS tools assume; rings are closed, exteriors
/// counter-clockwise and holes clockwise.
pub fn excursion_geojson(polys: &[Polygon], properties: Value) -> Value {
    let ring = |r: &[[f64; 2]]| Value::Array(r.iter().map(|&[x, y]| json!([x, y])).collect());
    let coordinates: Vec<Value> = polys
        .iter()
        .map(|p| {
            let mut rings = vec![ring(&p.exterior)];
            rings.extend(p.holes.iter().map(|h| ring(h)));
            Value::Array(rings)
        })
        .collect();
    let properties = match properties {
        Value::Object(_) | Value::Null => properties,
        other => json!({ "value": other }),
    };
    json!({
        "type": "FeatureCollection",
        "features": [{
            "type": "Feature",
            "geometry": { "type": "MultiPolygon", "coordinates": coordinates },
            "properties": properties,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postprocess::contour::excursion_polygons;
    use crate::postprocess::grid::Grid2;

    #[test]
    fn geojson_structure() {
        let c = [0.5, 0.5];
        let g = Grid2::from_fn(41, 41, (0.0, 1.0), (0.0, 1.0), |x, y| {
            let r = ((x - c[0]).powi(2) + (y - c[1]).powi(2)).sqrt();
            -(r - 0.3).powi(2)
        })
        .unwrap();
        let polys = excursion_polygons(&g, -0.01);
        let gj = excursion_geojson(&polys, json!({ "threshold": -0.01, "note": "domain coordinates" }));
        assert_eq!(gj["type"], "FeatureCollection");
        let features = gj["features"].as_array().unwrap();
        assert_eq!(features.len(), 1);
        assert_eq!(features[0]["type"], "Feature");
        assert_eq!(features[0]["properties"]["threshold"], -0.01);
        let geom = &features[0]["geometry"];
        assert_eq!(geom["type"], "MultiPolygon");
        let mp = geom["coordinates"].as_array().unwrap();
        assert_eq!(mp.len(), 1);
        let rings = mp[0].as_array().unwrap();
        assert_eq!(rings.len(), 2);
        for r in rings {
            let r = r.as_array().unwrap();
            assert!(r.len() >= 4);
            assert_eq!(r.first(), r.last());
            for p in r {
                let p = p.as_array().unwrap();
                assert_eq!(p.len(), 2);
                assert!(p.iter().all(|v| v.is_f64()));
            }
        }
        let empty = excursion_geojson(&[], Value::Null);
        assert_eq!(empty["features"][0]["geometry"]["coordinates"], json!([]));
        assert!(empty["features"][0]["properties"].is_null());
        assert_eq!(excursion_geojson(&[], json!(3))["features"][0]["properties"]["value"], 3);
    }
}
