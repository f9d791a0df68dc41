//! Which exact sampler serves a release, decided from public inputs only:
//! the query, the domain, the kernel and a declared covariate lattice —
//! never the data. (Choosing the lattice sampler because the covariates
//! happen to lie on a lattice would publish, through the report and the
//! output, where the private covariates are.)
//!
//! - [`SamplerPolicy::Dense`]: joint Cholesky on the query points.
//! - [`SamplerPolicy::Lattice`]: circulant embedding + Matheron update on the
//!   common lattice of a grid query and the declared covariate lattice;
//!   refused if either is missing or the embedding cannot be made exact.
//! - [`SamplerPolicy::StateSpace`]: Kalman filter + backward sampling on a
//!   1-D domain for the kernels with an exact state-space form (exponential,
//!   Matérn-3/2, Matérn-5/2); O((n + m)·p³), no n × n or m × m matrix.
//! - [`SamplerPolicy::Auto`]: the state-space sampler on a 1-D domain when
//!   the kernel has a state-space form, else the lattice sampler when it
//!   applies, else dense.
//!
//! Data that contradict the declaration (a covariate off the lattice) are
//! refused by the data policy ([`crate::model::policy`]); the plan is never
//! changed to accommodate them.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::Serialize;

use super::dense::{self, DenseSampler};
use super::lattice::{self, Lattice, LatticePlan, LatticeSampler};
use super::statespace;
use super::{Process, Sampler};
use crate::error::{Error, Result};
use crate::model::domain::Domain;
use crate::model::kernel::Kernel;
use crate::model::query::{CovariateLattice, Query};
use crate::resources::Need;

/// The caller's choice of sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SamplerPolicy {
    /// The lattice sampler when the public inputs allow it, else dense.
    #[default]
    Auto,
    /// Joint Cholesky on the query points (O(m³)).
    Dense,
    /// Circulant embedding + Matheron update (needs a grid query and a
    /// declared covariate lattice).
    Lattice,
    /// Kalman filter + backward sampling (1-D; exponential, Matérn-3/2,
    /// Matérn-5/2).
    #[serde(rename = "state-space")]
    StateSpace,
}

impl SamplerPolicy {
    /// "auto", "dense", "lattice" or "state-space".
    pub fn name(self) -> &'static str {
        match self {
            SamplerPolicy::Auto => "auto",
            SamplerPolicy::Dense => "dense",
            SamplerPolicy::Lattice => "lattice",
            SamplerPolicy::StateSpace => "state-space",
        }
    }
}

impl fmt::Display for SamplerPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SamplerPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(SamplerPolicy::Auto),
            "dense" => Ok(SamplerPolicy::Dense),
            "lattice" => Ok(SamplerPolicy::Lattice),
            "state-space" | "statespace" => Ok(SamplerPolicy::StateSpace),
            _ => Err(Error::InvalidParameter {
                name: "sampler",
                value: s.to_string(),
                requirement: "one of auto, dense, lattice, state-space",
            }),
        }
    }
}

#[derive(Debug, Clone)]
enum Choice {
    Dense,
    Lattice(Arc<LatticePlan>),
    /// The state-space sampler, with the kernel's order p.
    StateSpace(usize),
}

/// The sampler chosen for a query, with the public reason for the choice.
#[derive(Debug, Clone)]
pub struct SamplerPlan {
    policy: SamplerPolicy,
    choice: Choice,
    reason: String,
}

/// What a report says about the sampler (all public).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SamplerSummary {
    /// The policy asked for.
    pub policy: SamplerPolicy,
    /// The exact sampler used.
    pub method: &'static str,
    /// Why (a function of public inputs).
    pub reason: String,
    /// Points per axis of the sampling lattice (lattice sampler).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lattice: Option<Vec<usize>>,
    /// Torus of the circulant embedding (lattice sampler).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torus: Option<Vec<usize>>,
}

impl SamplerPlan {
    /// Chooses the sampler for `query` (see the module docs). Only public
    /// inputs enter; an explicit [`SamplerPolicy::Lattice`] that cannot be
    /// served is an error.
    pub fn new(
        policy: SamplerPolicy,
        kernel: &Kernel,
        domain: &Domain,
        query: &Query,
        covariates: Option<&CovariateLattice>,
    ) -> Result<Self> {
        if query.dim() != domain.dim() {
            return Err(Error::Dimension(format!(
                "the query points are {}-D but the domain {domain} is {}-D",
                query.dim(),
                domain.dim()
            )));
        }
        if policy == SamplerPolicy::Dense {
            return Ok(SamplerPlan { policy, choice: Choice::Dense, reason: "requested".into() });
        }
        let order = statespace::order(kernel.kind()).filter(|_| domain.dim() == 1);
        match (policy, order) {
            (SamplerPolicy::StateSpace | SamplerPolicy::Auto, Some(p)) => {
                return Ok(SamplerPlan {
                    policy,
                    choice: Choice::StateSpace(p),
                    reason: format!(
                        "1-D domain and the {} kernel has an exact state-space form of order {p}",
                        kernel.kind()
                    ),
                });
            }
            (SamplerPolicy::StateSpace, None) => {
                return Err(Error::Unsupported(if domain.dim() != 1 {
                    format!("the state-space sampler is for 1-D domains, but {domain} is {}-D", domain.dim())
                } else {
                    format!(
                        "the {} kernel has no exact finite-dimensional state-space form (only exponential, matern32, matern52)",
                        kernel.kind()
                    )
                }));
            }
            _ => {}
        }
        match lattice_plan(kernel, domain, query, covariates) {
            Ok(plan) => Ok(SamplerPlan {
                policy,
                choice: Choice::Lattice(Arc::new(plan)),
                reason: "grid query and declared covariate lattice share a lattice with an exact embedding".into(),
            }),
            // A torus beyond memory: the dense sampler would need more still (m² ≥ torus).
            Err(e @ Error::TooLarge(_)) => Err(e),
            Err(e) if policy == SamplerPolicy::Auto => Ok(SamplerPlan {
                policy,
                choice: Choice::Dense,
                reason: format!("lattice sampler not applicable: {e}"),
            }),
            Err(e) => Err(Error::Unsupported(format!("the lattice sampler cannot serve this release: {e}"))),
        }
    }

    /// A rough, conservative estimate of the sampling's cost from public
    /// inputs — (bytes, seconds) for `m` query points, `n` records and
    /// `draws` draws — or `None` where it is small by construction (the
    /// state-space sampler is O(n + m)). Lattice: 6 doubles per torus entry,
    /// and 10⁻⁸ s per T·log₂T (T torus entries) per FFT-pass of the
    /// embedding and of each draw (measured ≈ 0.5·10⁻⁸ on one core of the
    /// reference machine; doubled for a loaded one). Dense: m² doubles and
    /// m³/3 + n·m² flops at 10⁹ flop/s.
    pub fn cost_estimate(&self, m: usize, n: usize, draws: u64) -> Option<(f64, f64)> {
        let (mf, nf, l) = (m as f64, n as f64, draws as f64);
        match &self.choice {
            Choice::Lattice(p) => {
                let t: f64 = p.torus().iter().map(|&x| x as f64).product();
                Some((48.0 * t, 1e-8 * t * t.max(2.0).log2() * (1.0 + l)))
            }
            Choice::Dense => Some((8.0 * mf * mf, (mf.powi(3) / 3.0 + nf * mf * mf + l * mf * mf) / 1e9)),
            Choice::StateSpace(_) => None,
        }
    }

    /// The policy asked for.
    pub fn policy(&self) -> SamplerPolicy {
        self.policy
    }

    /// The exact sampler's name.
    pub fn method(&self) -> &'static str {
        match self.choice {
            Choice::Dense => dense::METHOD,
            Choice::Lattice(_) => lattice::METHOD,
            Choice::StateSpace(_) => statespace::METHOD,
        }
    }

    /// Why this sampler (public).
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The embedding, for the lattice sampler.
    pub fn lattice_plan(&self) -> Option<&LatticePlan> {
        match &self.choice {
            Choice::Lattice(p) => Some(p),
            Choice::Dense | Choice::StateSpace(_) => None,
        }
    }

    /// Whether the state-space sampler serves the release (it works from the
    /// data directly: no dense posterior is fitted).
    pub fn is_state_space(&self) -> bool {
        matches!(self.choice, Choice::StateSpace(_))
    }

    /// The public description for reports.
    pub fn summary(&self) -> SamplerSummary {
        let lp = self.lattice_plan();
        SamplerSummary {
            policy: self.policy,
            method: self.method(),
            reason: self.reason.clone(),
            lattice: lp.map(|p| p.lattice().size().to_vec()),
            torus: lp.map(|p| p.torus().to_vec()),
        }
    }

    /// The large allocations of drawing `draws` paths at `m` points from a
    /// posterior of `n` records with this sampler (all alive at the peak).
    pub fn memory(&self, m: usize, n: usize, draws: u64) -> Vec<Need> {
        let (m, n, l) = (m as f64, n as f64, draws as f64);
        let mut needs = vec![Need::doubles("the released values (L × m)", l * m)];
        match &self.choice {
            Choice::Dense => {
                needs.push(Need::doubles("the sampling covariance, factored in place (m²)", m * m));
                needs.push(Need::doubles("the whitened cross-covariances L⁻¹K(X, Q) (n × m)", n * m));
                needs.push(Need::doubles("the standard normals and their transform (2 × m × L)", 2.0 * m * l));
            }
            Choice::Lattice(p) => {
                let torus: f64 = p.torus().iter().map(|&t| t as f64).product();
                needs.push(Need::doubles(
                    "the embedding's two spectra and two complex torus fields (6 × torus)",
                    6.0 * torus,
                ));
            }
            Choice::StateSpace(p) => {
                let p = *p as f64;
                // Per node (≤ n + m): filtered mean and covariance (p + p²), backward gain and
                // factor (2p²), mean, positions, index and per-draw buffers (≈ 6).
                needs.push(Need::doubles(
                    "the state-space filter and smoother ((3p² + p + 6) × (n + m))",
                    (3.0 * p * p + p + 6.0) * (n + m),
                ));
            }
        }
        needs
    }

    /// The sampler for a fitted process (the lattice sampler refuses
    /// covariates off its lattice).
    pub(crate) fn sampler(&self, process: Process) -> Result<Box<dyn Sampler>> {
        Ok(match &self.choice {
            Choice::Dense => Box::new(DenseSampler::new(process)),
            Choice::Lattice(p) => Box::new(LatticeSampler::new(process, Arc::clone(p))?),
            Choice::StateSpace(_) => {
                return Err(Error::Unsupported(
                    "the state-space sampler is built from the data, not from a fitted dense posterior".into(),
                ));
            }
        })
    }
}

fn lattice_plan(
    kernel: &Kernel,
    domain: &Domain,
    query: &Query,
    covariates: Option<&CovariateLattice>,
) -> Result<LatticePlan> {
    let Query::Grid(grid) = query else {
        return Err(Error::Unsupported("the query is a list of points, not a grid".into()));
    };
    let Some(cov) = covariates else {
        return Err(Error::Unsupported("no covariate lattice was declared".into()));
    };
    if grid.counts().len() > 2 {
        return Err(Error::Unsupported("the lattice sampler is for 1-D and 2-D grids".into()));
    }
    let (lo, hi) = domain.bounding_box();
    if !matches!(domain, Domain::Interval { .. } | Domain::Box { .. }) || grid.lower() != lo || grid.upper() != hi {
        return Err(Error::Unsupported("the grid does not span the domain's box".into()));
    }
    if cov.dim() != grid.counts().len() {
        return Err(Error::Dimension("the covariate lattice and the grid differ in dimension".into()));
    }
    let lattice = Lattice::common(&lo, &hi, grid.counts(), cov.counts())?;
    LatticePlan::new(kernel, lattice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::query::Grid;

    #[test]
    fn choice_uses_public_inputs_only() {
        let k = Kernel::exponential(0.3).unwrap();
        let d: Domain = "box:0,1,0,1".parse().unwrap();
        let grid = Query::Grid(Grid::parse("20", &d).unwrap());
        let lat = CovariateLattice::parse("39", 2).unwrap();
        let auto = SamplerPlan::new(SamplerPolicy::Auto, &k, &d, &grid, Some(&lat)).unwrap();
        assert_eq!(auto.method(), lattice::METHOD);
        assert_eq!(auto.summary().lattice, Some(vec![39, 39]));
        // No declaration, or a list of points: dense, and the reason says why.
        let none = SamplerPlan::new(SamplerPolicy::Auto, &k, &d, &grid, None).unwrap();
        assert_eq!(none.method(), dense::METHOD);
        assert!(none.reason().contains("no covariate lattice"), "{}", none.reason());
        let pts = Query::Points(crate::model::points::Points::new(vec![0.1, 0.2], 2).unwrap());
        assert_eq!(SamplerPlan::new(SamplerPolicy::Auto, &k, &d, &pts, Some(&lat)).unwrap().method(), dense::METHOD);
        // An explicit lattice request that cannot be served is refused.
        let e = SamplerPlan::new(SamplerPolicy::Lattice, &k, &d, &grid, None).unwrap_err();
        assert!(e.to_string().contains("no covariate lattice"), "{e}");
        assert_eq!(SamplerPlan::new(SamplerPolicy::Dense, &k, &d, &grid, Some(&lat)).unwrap().method(), dense::METHOD);
        // A 1-D query on a 2-D domain is a dimension error.
        let one: Domain = "interval:0,1".parse().unwrap();
        let q1 = Query::Grid(Grid::parse("5", &one).unwrap());
        assert!(SamplerPlan::new(SamplerPolicy::Auto, &k, &d, &q1, None).is_err());
    }
}
