//! From hexagon medians to GP records (the paper's App. D.2).
//!
//! Response: with threshold t and clipping bound B,
//!
//! ```text
//! y_h^raw = median_{i ∈ h} log P_i − t,
//! y_h     = clip(y_h^raw, −B, B) / B ∈ [−1, 1],   label s_h = 1{y_h^raw > 0},
//! ```
//!
//! so the response bound of the accountant is M_Y = 1 and the excursion
//! level of the GP is 0 (y_h > 0 ⇔ y_h^raw > 0: clipping only saturates
//! extreme values). Defaults t = 13 (≈ £442k), B = 1.
//!
//! Coordinates: per-axis min–max normalisation of the hexagon centres,
//! x ↦ (x − min x)/(max x − min x), likewise y, so the centres span [0, 1]²
//! exactly (anisotropic when the extent is not square). The extent is the
//! data's own (recomputed for every year, as the authors do), so the map
//! from [0, 1]² back to grid coordinates is itself a property of the data;
//! the privacy accounting treats [0, 1]² as the public domain and this
//! extent as public. With a fixed public box instead
//! ([`UnitScaling::from_box`]) the map is data-independent; centres that
//! fall outside the box (a hexagon straddling its edge) are clamped onto it,
//! a per-record transformation that keeps every covariate in [0, 1]².

use serde::Serialize;

use crate::error::{Error, Result, invalid};

/// y = clip(median − t, −B, B)/B and s = 1{median − t > 0}.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ResponseTransform {
    /// Threshold t on the median log price (default 13).
    pub threshold: f64,
    /// Clipping bound B > 0 (default 1).
    pub bound: f64,
}

impl Default for ResponseTransform {
    fn default() -> Self {
        ResponseTransform { threshold: 13.0, bound: 1.0 }
    }
}

impl ResponseTransform {
    /// Checks t finite and B finite > 0.
    pub fn new(threshold: f64, bound: f64) -> Result<Self> {
        if !threshold.is_finite() {
            return Err(invalid("threshold t", threshold, "finite"));
        }
        if !(bound > 0.0 && bound.is_finite()) {
            return Err(invalid("clipping bound B", bound, "finite and > 0"));
        }
        Ok(ResponseTransform { threshold, bound })
    }

    /// y = clip(median − t, −B, B)/B ∈ [−1, 1].
    pub fn response(&self, median: f64) -> f64 {
        (median - self.threshold).clamp(-self.bound, self.bound) / self.bound
    }

    /// s = 1{median − t > 0}.
    pub fn label(&self, median: f64) -> bool {
        median - self.threshold > 0.0
    }
}

/// Per-axis min–max map of a point set onto [0, 1]².
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UnitScaling {
    /// (min, max) of x.
    pub x: (f64, f64),
    /// (min, max) of y.
    pub y: (f64, f64),
}

impl UnitScaling {
    /// The extent of `points`; an error when it is empty or has zero width
    /// or height (the normalisation would divide by zero).
    pub fn fit(points: impl IntoIterator<Item = [f64; 2]>) -> Result<Self> {
        let mut x = (f64::INFINITY, f64::NEG_INFINITY);
        let mut y = (f64::INFINITY, f64::NEG_INFINITY);
        for [a, b] in points {
            x = (x.0.min(a), x.1.max(a));
            y = (y.0.min(b), y.1.max(b));
        }
        if !(x.0 < x.1 && y.0 < y.1 && x.1.is_finite() && y.1.is_finite() && x.0.is_finite() && y.0.is_finite()) {
            return Err(Error::NotEnoughData(format!(
                "cannot normalise coordinates to [0, 1]²: the hexagon centres span x ∈ [{}, {}], y ∈ [{}, {}] (need two distinct values on each axis)",
                x.0, x.1, y.0, y.1
            )));
        }
        Ok(UnitScaling { x, y })
    }

    /// The public box [x0, x1, y0, y1] itself (x0 < x1, y0 < y1, finite).
    pub fn from_box([x0, x1, y0, y1]: [f64; 4]) -> Result<Self> {
        if !(x0 < x1 && y0 < y1 && [x0, x1, y0, y1].iter().all(|v| v.is_finite())) {
            return Err(Error::InvalidConfig {
                field: "normalisation box",
                value: format!("[{x0}, {x1}] × [{y0}, {y1}]"),
                requirement: "finite with x0 < x1 and y0 < y1",
            });
        }
        Ok(UnitScaling { x: (x0, x1), y: (y0, y1) })
    }

    /// Grid coordinates → [0, 1]² (not clamped).
    pub fn to_unit(&self, [a, b]: [f64; 2]) -> [f64; 2] {
        [(a - self.x.0) / (self.x.1 - self.x.0), (b - self.y.0) / (self.y.1 - self.y.0)]
    }

    /// [0, 1]² → grid coordinates.
    pub fn from_unit(&self, [u, v]: [f64; 2]) -> [f64; 2] {
        [self.x.0 + u * (self.x.1 - self.x.0), self.y.0 + v * (self.y.1 - self.y.0)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_clips_rescales_and_labels() {
        let r = ResponseTransform::default();
        assert_eq!(r.response(13.25), 0.25);
        assert_eq!(r.response(14.7), 1.0);
        assert_eq!(r.response(10.0), -1.0);
        assert!(r.label(13.0001) && !r.label(13.0) && !r.label(12.5));
        let r = ResponseTransform::new(12.0, 0.5).unwrap();
        assert_eq!(r.response(12.25), 0.5);
        assert_eq!(r.response(13.0), 1.0);
        assert_eq!(r.response(11.0), -1.0);
        // The sign of y agrees with the label (zero excursion level).
        for m in [11.0, 11.9, 12.0, 12.1, 15.0] {
            assert_eq!(r.response(m) > 0.0, r.label(m));
        }
        assert!(ResponseTransform::new(13.0, 0.0).is_err());
        assert!(ResponseTransform::new(f64::NAN, 1.0).is_err());
    }

    #[test]
    fn unit_scaling_spans_the_square() {
        let pts = [[500.0, 150.0], [560.0, 200.0], [530.0, 160.0]];
        let s = UnitScaling::fit(pts).unwrap();
        assert_eq!(s.to_unit(pts[0]), [0.0, 0.0]);
        assert_eq!(s.to_unit(pts[1]), [1.0, 1.0]);
        assert_eq!(s.to_unit(pts[2]), [0.5, 0.2]);
        assert_eq!(s.from_unit([0.5, 0.2]), [530.0, 160.0]);
        assert!(UnitScaling::fit([[1.0, 2.0], [1.0, 3.0]]).is_err());
        assert!(UnitScaling::fit([]).is_err());
        let b = UnitScaling::from_box([0.0, 10.0, 0.0, 4.0]).unwrap();
        assert_eq!(b.to_unit([5.0, 1.0]), [0.5, 0.25]);
        assert!(UnitScaling::from_box([0.0, 0.0, 0.0, 1.0]).is_err());
    }
}
