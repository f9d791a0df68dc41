//! The body of `POST /releases`: the data file on the server and the
//! mechanism's public parameters (the keywords of `gpdp release`).

use std::path::PathBuf;

use gpdp::{Domain, Kernel, KernelKind, MechanismParams, ReleaseParams, Solve};
use serde::{Deserialize, Serialize};

use crate::error::ServerError;

/// A release request. `n` is the number of records in `data`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseSpec {
    /// The private dataset: a CSV file on the server (never sent over HTTP).
    pub data: PathBuf,
    /// Covariate columns by name (default: `x` or `x1..xd`).
    #[serde(default)]
    pub x: Option<Vec<String>>,
    /// Response column (default `y`).
    #[serde(default)]
    pub y: Option<String>,
    /// The dataset's name in the ledger (its budget).
    #[serde(default)]
    pub dataset: Option<String>,
    pub kernel: String,
    #[serde(default)]
    pub lengthscale: Option<f64>,
    pub domain: String,
    /// The ridge r (or calibrate it with `target_epsilon`).
    #[serde(default)]
    pub ridge: Option<f64>,
    pub scale: f64,
    #[serde(default)]
    pub gp_noise: f64,
    #[serde(default = "one")]
    pub draws: u64,
    pub delta: f64,
    #[serde(default)]
    pub target_epsilon: Option<f64>,
    #[serde(default)]
    pub max_epsilon: Option<f64>,
    /// The bound M_Y on |y| (or give `response_range`; one is required).
    #[serde(default)]
    pub response_bound: Option<f64>,
    #[serde(default)]
    pub response_range: Option<[f64; 2]>,
    #[serde(default)]
    pub units: Option<String>,
    #[serde(default = "clip")]
    pub on_unbounded: String,
    #[serde(default = "auto")]
    pub sensitivity: String,
    #[serde(default = "tight")]
    pub bound: String,
    #[serde(default = "improved")]
    pub conversion: String,
}

fn one() -> u64 {
    1
}
fn clip() -> String {
    "clip".into()
}
fn auto() -> String {
    "auto".into()
}
fn tight() -> String {
    "tight".into()
}
fn improved() -> String {
    "improved".into()
}

impl ReleaseSpec {
    /// The mechanism's parameters for `n` records.
    pub fn params(&self, n: usize) -> Result<MechanismParams, ServerError> {
        let kind: KernelKind = self.kernel.parse()?;
        let lengthscale = match (kind.has_lengthscale(), self.lengthscale) {
            (true, None) => {
                return Err(ServerError::BadRequest(format!("lengthscale: required for the {kind} kernel")));
            }
            (_, l) => l.unwrap_or(1.0),
        };
        let kernel = Kernel::new(kind, lengthscale)?;
        let domain: Domain = self.domain.parse()?;
        let ridge = match (self.ridge, self.target_epsilon) {
            (Some(_), Some(_)) => {
                return Err(ServerError::BadRequest(
                    "give either ridge or target_epsilon (which calibrates it), not both".into(),
                ));
            }
            (None, None) => {
                return Err(ServerError::BadRequest("ridge: required (or target_epsilon to calibrate it)".into()));
            }
            (r, _) => r.unwrap_or(1.0),
        };
        let mut r = ReleaseParams::new(kernel, domain, n, ridge, self.scale);
        r.gp_noise = self.gp_noise;
        r.sensitivity = self.sensitivity.parse()?;
        r.bound = self.bound.parse()?;
        // The responses' scale is a required public choice (no default M_Y).
        let scale = match (self.response_range, self.response_bound) {
            (Some([lo, hi]), None) => gpdp::ResponseScale::Range(gpdp::model::units::ResponseRange::new(lo, hi)?),
            (None, Some(m)) => gpdp::ResponseScale::Bound(m),
            (Some(_), Some(_)) => {
                return Err(ServerError::BadRequest(
                    "response_range and response_bound: give one (a range in data units, or the bound M_Y)".into(),
                ));
            }
            (None, None) => {
                return Err(ServerError::BadRequest(
                    "response_range or response_bound: required — the responses' plausible range [lo, hi] in data units, or the bound M_Y on |y| (there is no default: a default of 1 would silently clip data in real units)".into(),
                ));
            }
        };
        let mut p = MechanismParams::new(r, self.delta, scale);
        p.draws = gpdp::Draws::new(self.draws)?;
        p.conversion = self.conversion.parse()?;
        p.on_unbounded = self.on_unbounded.parse()?;
        p.max_epsilon = self.max_epsilon;
        p.units = self.units.clone();
        Ok(p)
    }

    /// Checks (and with `target_epsilon` calibrates the ridge of) the mechanism.
    pub fn mechanism(&self, n: usize) -> Result<gpdp::Mechanism, ServerError> {
        let p = self.params(n)?;
        Ok(match self.target_epsilon {
            Some(eps) => p.calibrate(Solve::Ridge, eps)?,
            None => p.check()?,
        })
    }
}
