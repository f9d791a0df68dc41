//! Private training data D = (X, y): n records with finite values.
//!
//! The guarantee assumes |y_i| ≤ M_Y (docs/model.md) and covariates in the
//! declared domain Ω (κ and the sensitivity lemmas are sup's over Ω); what a
//! release does about records that break these is the data policy
//! ([`super::policy`]).

use crate::error::{Error, Result};
use crate::model::domain::Domain;
use crate::model::points::Points;

/// A training set of n records (x_i, y_i), x_i ∈ R^d.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    x: Points,
    y: Vec<f64>,
}

impl Dataset {
    /// Validates and wraps covariates and responses: same count, at least one
    /// record, every value finite. Errors name the 1-based record.
    pub fn new(x: Points, y: Vec<f64>) -> Result<Self> {
        if x.len() != y.len() {
            return Err(Error::Dimension(format!("{} covariate rows but {} responses", x.len(), y.len())));
        }
        if y.is_empty() {
            return Err(Error::Data { row: 0, message: "the dataset has no records".into() });
        }
        for (i, (xi, yi)) in x.iter().zip(&y).enumerate() {
            if let Some(j) = xi.iter().position(|v| !v.is_finite()) {
                return Err(Error::Data {
                    row: i + 1,
                    message: format!("covariate {} is {} (must be finite)", j + 1, xi[j]),
                });
            }
            if !yi.is_finite() {
                return Err(Error::Data { row: i + 1, message: format!("response y is {yi} (must be finite)") });
            }
        }
        Ok(Dataset { x, y })
    }

    /// Appends the record (x, y) (finite, of the dataset's dimension).
    pub fn push(&mut self, x: &[f64], y: f64) -> Result<()> {
        if let Some(j) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::Data {
                row: self.len() + 1,
                message: format!("covariate {} is {} (must be finite)", j + 1, x[j]),
            });
        }
        if !y.is_finite() {
            return Err(Error::Data { row: self.len() + 1, message: format!("response y is {y} (must be finite)") });
        }
        self.x.push(x)?;
        self.y.push(y);
        Ok(())
    }

    /// Number of records n.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Always false: a dataset has at least one record.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Covariate dimension d.
    pub fn dim(&self) -> usize {
        self.x.dim()
    }

    /// The covariates X (n × d).
    pub fn x(&self) -> &Points {
        &self.x
    }

    /// The responses y.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// Refuses covariates outside `domain`, naming the first such record.
    pub fn check_domain(&self, domain: &Domain) -> Result<()> {
        if domain.dim() != self.dim() {
            return Err(Error::Dimension(format!(
                "the data have {}-D covariates but the domain {domain} is {}-D",
                self.dim(),
                domain.dim()
            )));
        }
        for i in 0..self.len() {
            if !domain.contains(self.x.row(i)) {
                return Err(Error::Data {
                    row: i + 1,
                    message: format!(
                        "covariate {:?} lies outside the declared domain {domain}; the privacy guarantee only holds on the domain",
                        self.x.row(i)
                    ),
                });
            }
        }
        Ok(())
    }
}
