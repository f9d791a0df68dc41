//! A set of points in R^d, stored row-major.

use crate::error::{Error, Result};

/// m points in R^d, stored row-major in one buffer (`data[i*d..(i+1)*d]` is
/// point i).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Points {
    data: Vec<f64>,
    dim: usize,
}

impl Points {
    /// Wraps a row-major buffer of points of dimension `dim` (≥ 1).
    pub fn new(data: Vec<f64>, dim: usize) -> Result<Self> {
        if dim == 0 {
            return Err(Error::Dimension("points must have dimension >= 1".into()));
        }
        if data.len() % dim != 0 {
            return Err(Error::Dimension(format!(
                "{} coordinates do not split into points of dimension {dim}",
                data.len()
            )));
        }
        Ok(Points { data, dim })
    }

    /// One-dimensional points.
    pub fn from_1d(xs: &[f64]) -> Self {
        Points { data: xs.to_vec(), dim: 1 }
    }

    /// Points from rows; every row must have the same length ≥ 1.
    pub fn from_rows<R: AsRef<[f64]>>(rows: &[R]) -> Result<Self> {
        let dim = rows.first().map(|r| r.as_ref().len()).unwrap_or(1);
        let mut data = Vec::with_capacity(rows.len() * dim);
        for (i, r) in rows.iter().enumerate() {
            let r = r.as_ref();
            if r.len() != dim {
                return Err(Error::Dimension(format!("point {} has {} coordinates, expected {dim}", i + 1, r.len())));
            }
            data.extend_from_slice(r);
        }
        Points::new(data, dim)
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.data.len() / self.dim
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Point i as a slice of length d.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// The row-major buffer.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }

    /// Iterates over the points.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[f64]> + '_ {
        self.data.chunks_exact(self.dim)
    }

    /// Appends the points of `other` (same dimension).
    pub fn extend(&mut self, other: &Points) -> Result<()> {
        if other.dim != self.dim {
            return Err(Error::Dimension(format!("cannot append {}-D points to {}-D points", other.dim, self.dim)));
        }
        self.data.extend_from_slice(&other.data);
        Ok(())
    }

    /// Appends one point.
    pub fn push(&mut self, x: &[f64]) -> Result<()> {
        if x.len() != self.dim {
            return Err(Error::Dimension(format!("cannot append a {}-D point to {}-D points", x.len(), self.dim)));
        }
        self.data.extend_from_slice(x);
        Ok(())
    }

    /// Checks that every coordinate is finite. The error (an
    /// [`Error::Input`]) names the first offending point — its number from 1,
    /// its 0-based index and its coordinates — with `what` saying which
    /// points they are (e.g. "query").
    pub fn check_finite(&self, what: &str) -> Result<()> {
        match self.iter().position(|p| p.iter().any(|v| !v.is_finite())) {
            None => Ok(()),
            Some(i) => {
                let coords: Vec<String> = self.row(i).iter().map(|v| v.to_string()).collect();
                Err(Error::Input(format!(
                    "{what} point {} (index {i}) is ({}): every coordinate must be a finite number",
                    i + 1,
                    coords.join(", ")
                )))
            }
        }
    }
    /// The distinct points (exact coordinate equality, with −0 = +0) and,
    /// for each point, the index of its distinct representative; the
    /// representatives keep their first-appearance order.
    pub(crate) fn dedupe(&self) -> (Points, Vec<usize>) {
        use std::collections::HashMap;
        let mut seen: HashMap<Vec<u64>, usize> = HashMap::with_capacity(self.len());
        let mut uniq = Points { data: Vec::new(), dim: self.dim };
        let mut map = Vec::with_capacity(self.len());
        for x in self.iter() {
            let key: Vec<u64> = x.iter().map(|v| if *v == 0.0 { 0 } else { v.to_bits() }).collect();
            let idx = *seen.entry(key).or_insert_with(|| {
                uniq.data.extend_from_slice(x);
                uniq.data.len() / uniq.dim - 1
            });
            map.push(idx);
        }
        (uniq, map)
    }

    /// The points with the given indices.
    pub fn select(&self, idx: &[usize]) -> Points {
        let mut data = Vec::with_capacity(idx.len() * self.dim);
        for &i in idx {
            data.extend_from_slice(self.row(i));
        }
        Points { data, dim: self.dim }
    }
}

/// Euclidean distance ‖a − b‖; points of different dimensions are an error.
pub fn distance(a: &[f64], b: &[f64]) -> Result<f64> {
    if a.len() != b.len() {
        return Err(Error::Dimension(format!(
            "cannot measure the distance between a {}-D and a {}-D point",
            a.len(),
            b.len()
        )));
    }
    Ok(distance_unchecked(a, b))
}

/// ‖a − b‖ for points of the same dimension (the caller checked it: the
/// hot loops of the kernel matrices).
#[inline]
pub(crate) fn distance_unchecked(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    if a.len() == 1 {
        return (a[0] - b[0]).abs();
    }
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_points_are_named_by_number_index_and_coordinates() {
        let p = Points::new(vec![0.1, 0.2, 0.5, f64::NAN, 0.3, f64::INFINITY], 2).unwrap();
        let e = p.check_finite("query").unwrap_err();
        assert!(matches!(e, Error::Input(_)));
        assert_eq!(e.to_string(), "query point 2 (index 1) is (0.5, NaN): every coordinate must be a finite number");
        assert!(Points::from_1d(&[0.0, 1.0]).check_finite("query").is_ok());
        assert!(Points::from_1d(&[]).check_finite("query").is_ok());
    }
}
