//! The data policy of a release: what the mechanism requires of the private
//! records, and what it does with records that break the assumptions of the
//! guarantee.
//!
//! The guarantee (docs/model.md) holds for n records with covariates in the
//! declared domain Ω and responses |y| ≤ M_Y. The policy
//!
//! 1. refuses a dataset whose size is not the n the release was accounted
//!    for, or whose covariates have another dimension than Ω;
//! 2. refuses any covariate outside Ω (κ and the sensitivity lemmas are
//!    suprema over Ω; there is no valid per-record repair);
//! 3. with a declared [`CovariateLattice`], refuses any covariate that is not
//!    on it (more than 10⁻⁶ of the spacing from a node) and moves the others
//!    exactly onto their node (a per-record change below floating-point
//!    noise, so that the lattice sampler is exact); with a *snapping*
//!    lattice ([`CovariateLattice::snapping`], `--snap h`) every covariate is
//!    rounded to its nearest node, whatever the distance (a public
//!    per-record transformation; docs/proofs/snapping.md);
//! 4. clips every response to [−M_Y, M_Y] ([`OnUnbounded::Clip`]) or refuses
//!    the data ([`OnUnbounded::Reject`]).
//!
//! Clipping and snapping act on each record alone, by a public rule, so the
//! mechanism composed with them is still (ε, δ)-DP for the replace-one
//! relation. How many records they changed is a fact about the private data
//! that ε does not cover: it is returned as an operator diagnostic
//! ([`PolicyOutcome`]) and never published.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Result, fmt_value, positive};
use crate::model::data::Dataset;
use crate::model::domain::Domain;
use crate::model::points::Points;
use crate::model::query::{CovariateLattice, axis_point};

/// Largest distance of a covariate from its lattice node, as a fraction of
/// the lattice spacing, for it to count as on the lattice.
pub const LATTICE_TOLERANCE: f64 = 1e-6;

/// What to do with responses beyond the response bound M_Y.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnUnbounded {
    /// Clip to [−M_Y, M_Y] (a per-record transformation; the guarantee holds).
    #[default]
    Clip,
    /// Refuse the data.
    Reject,
}

impl OnUnbounded {
    /// "clip" or "reject".
    pub fn name(self) -> &'static str {
        match self {
            OnUnbounded::Clip => "clip",
            OnUnbounded::Reject => "reject",
        }
    }
}

impl fmt::Display for OnUnbounded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for OnUnbounded {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "clip" => Ok(OnUnbounded::Clip),
            "reject" => Ok(OnUnbounded::Reject),
            _ => Err(Error::InvalidParameter {
                name: "on-unbounded",
                value: s.to_string(),
                requirement: "'clip' or 'reject'",
            }),
        }
    }
}

/// The requirements a dataset must meet (all public).
#[derive(Debug, Clone, PartialEq)]
pub struct DataPolicy {
    /// The domain Ω every covariate must lie in.
    pub domain: Domain,
    /// The number of records n the release is accounted for.
    pub n: usize,
    /// The response bound M_Y.
    pub response_bound: f64,
    /// Clip or reject responses beyond M_Y.
    pub on_unbounded: OnUnbounded,
    /// A declared lattice holding every covariate, if any.
    pub covariate_lattice: Option<CovariateLattice>,
}

/// What applying the policy changed: facts about the private data, for the
/// operator only (stderr, an operator log) — never for a published output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PolicyOutcome {
    /// Responses clipped to [−M_Y, M_Y].
    pub responses_clipped: usize,
    /// Covariates moved onto the declared lattice (by less than 10⁻⁶ of the
    /// spacing, or by rounding with a snapping lattice).
    pub covariates_snapped: usize,
}

impl DataPolicy {
    /// Checks the policy itself: M_Y > 0, a lattice only on an interval or
    /// box domain of its dimension.
    pub fn check(&self) -> Result<()> {
        positive("response bound M_Y", self.response_bound)?;
        if let Some(l) = &self.covariate_lattice {
            if !matches!(self.domain, Domain::Interval { .. } | Domain::Box { .. }) {
                return Err(Error::Unsupported(format!(
                    "a covariate lattice needs an interval or box domain (the domain is {})",
                    self.domain
                )));
            }
            if l.dim() != self.domain.dim() {
                return Err(Error::Dimension(format!(
                    "the covariate lattice {l} is {}-D but the domain {} is {}-D",
                    l.dim(),
                    self.domain,
                    self.domain.dim()
                )));
            }
        }
        Ok(())
    }

    /// The dataset the mechanism fits: `data` checked against the policy,
    /// with responses clipped (or refused) and covariates snapped onto the
    /// declared lattice. Errors name the first offending record.
    pub fn apply(&self, data: &Dataset) -> Result<(Dataset, PolicyOutcome)> {
        self.check()?;
        if data.len() != self.n {
            return Err(Error::Data {
                row: 0,
                message: format!(
                    "the dataset has {} records but the release was accounted for n = {}; the guarantee is for exactly n records",
                    data.len(),
                    self.n
                ),
            });
        }
        data.check_domain(&self.domain)?;
        let mut outcome = PolicyOutcome::default();
        let x = match &self.covariate_lattice {
            Some(l) => self.snap(data.x(), l, &mut outcome)?,
            None => data.x().clone(),
        };
        let mut y = data.y().to_vec();
        let m = self.response_bound;
        match self.on_unbounded {
            OnUnbounded::Clip => {
                for v in &mut y {
                    let c = v.clamp(-m, m);
                    if c != *v {
                        *v = c;
                        outcome.responses_clipped += 1;
                    }
                }
            }
            OnUnbounded::Reject => {
                if let Some(i) = y.iter().position(|v| v.abs() > m) {
                    return Err(Error::Data {
                        row: i + 1,
                        message: format!("response y = {} exceeds the response bound M_Y = {m}", y[i]),
                    });
                }
            }
        }
        Ok((Dataset::new(x, y)?, outcome))
    }

    /// The covariates the mechanism fits for the public covariates `x`: n
    /// rows in Ω (and on a declared lattice), snapped onto a snapping
    /// lattice — what [`Self::apply`] does to a dataset's covariates. Used
    /// when the covariates are public (change-one-response), to account for
    /// exactly the covariates the release will use. Errors name the row.
    pub fn covariates(&self, x: &Points) -> Result<Points> {
        self.check()?;
        check_covariates(x, self.n, &self.domain)?;
        match &self.covariate_lattice {
            Some(l) => self.snap(x, l, &mut PolicyOutcome::default()),
            None => Ok(x.clone()),
        }
    }

    fn snap(&self, x: &Points, lattice: &CovariateLattice, outcome: &mut PolicyOutcome) -> Result<Points> {
        let (lo, hi) = self.domain.bounding_box();
        let counts = lattice.counts();
        let mut out = Vec::with_capacity(x.as_slice().len());
        for (i, p) in x.iter().enumerate() {
            let mut moved = false;
            for (j, &v) in p.iter().enumerate() {
                let steps = (counts[j] - 1) as f64;
                let t = (v - lo[j]) / (hi[j] - lo[j]) * steps;
                let k = t.round().clamp(0.0, steps);
                if !lattice.snaps() && (t - k).abs() > LATTICE_TOLERANCE {
                    return Err(Error::Data {
                        row: i + 1,
                        message: format!(
                            "covariate {p:?} is not on the declared covariate lattice {lattice} (coordinate {} is {:.3} lattice steps from the nearest node); the lattice sampler needs every covariate on it — drop the declaration or move the records",
                            j + 1,
                            (t - k).abs()
                        ),
                    });
                }
                let node = axis_point(lo[j], hi[j], k as usize, counts[j]);
                moved |= node != v;
                out.push(node);
            }
            if moved {
                outcome.covariates_snapped += 1;
            }
        }
        Points::new(out, x.dim())
    }
}

/// Refuses public covariates that are not n rows of the domain's dimension
/// inside it, naming the first offending row.
pub(crate) fn check_covariates(x: &Points, n: usize, domain: &Domain) -> Result<()> {
    if x.len() != n {
        return Err(Error::Input(format!(
            "the covariates have {} rows but n = {}: under change-one-response n is the number of public covariates",
            x.len(),
            n
        )));
    }
    if x.dim() != domain.dim() {
        return Err(Error::Dimension(format!(
            "the covariates are {}-D but the domain {} is {}-D",
            x.dim(),
            domain,
            domain.dim()
        )));
    }
    if let Some(i) = (0..x.len()).find(|&i| !domain.contains(x.row(i))) {
        return Err(Error::Domain(format!(
            "covariate row {} ({}) lies outside the domain {}",
            i + 1,
            x.row(i).iter().map(|v| fmt_value(*v)).collect::<Vec<_>>().join(", "),
            domain
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(x: &[f64], y: &[f64]) -> Dataset {
        Dataset::new(Points::from_1d(x), y.to_vec()).unwrap()
    }

    fn policy(n: usize) -> DataPolicy {
        DataPolicy {
            domain: "interval:0,1".parse().unwrap(),
            n,
            response_bound: 1.0,
            on_unbounded: OnUnbounded::Clip,
            covariate_lattice: None,
        }
    }

    #[test]
    fn clips_counts_and_refuses() {
        let d = data(&[0.1, 0.5, 0.9], &[1.5, -0.2, -3.0]);
        let (c, out) = policy(3).apply(&d).unwrap();
        assert_eq!(c.y(), &[1.0, -0.2, -1.0]);
        assert_eq!(out.responses_clipped, 2);
        let reject = DataPolicy { on_unbounded: OnUnbounded::Reject, ..policy(3) };
        let e = reject.apply(&d).unwrap_err().to_string();
        assert!(e.contains("data row 1: response y = 1.5 exceeds"), "{e}");
        let e = policy(4).apply(&d).unwrap_err().to_string();
        assert!(e.contains("3 records but the release was accounted for n = 4"), "{e}");
        let e = policy(3).apply(&data(&[0.1, 1.2, 0.3], &[0.0; 3])).unwrap_err().to_string();
        assert!(e.contains("data row 2") && e.contains("outside the declared domain"), "{e}");
    }

    #[test]
    fn lattice_snaps_or_refuses() {
        let lat = DataPolicy { covariate_lattice: Some(CovariateLattice::new(vec![11]).unwrap()), ..policy(3) };
        let (c, out) = lat.apply(&data(&[0.1, 0.30000000000001, 1.0], &[0.0; 3])).unwrap();
        assert_eq!(c.x().as_slice(), &[0.1, 0.3, 1.0]);
        assert_eq!(out.covariates_snapped, 1);
        let e = lat.apply(&data(&[0.1, 0.35, 1.0], &[0.0; 3])).unwrap_err().to_string();
        assert!(e.contains("data row 2") && e.contains("not on the declared covariate lattice 11"), "{e}");
        let two = DataPolicy { covariate_lattice: Some(CovariateLattice::new(vec![3, 3]).unwrap()), ..policy(3) };
        assert!(two.check().unwrap_err().to_string().contains("2-D but the domain"));
    }
}
