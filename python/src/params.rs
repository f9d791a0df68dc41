//! The public parameters of a release, from Python keywords, with the
//! same defaults and checks as the CLI's flags (`gpdp account --help`).

use std::str::FromStr;

use gpdp::{Domain, Kernel, KernelKind, ReleaseParams};
use pyo3::prelude::*;

use crate::errors::{OrPy, bad_arg};

/// The model keywords shared by `account`, `calibrate` and `Mechanism`.
pub struct Model<'a> {
    pub kernel: &'a str,
    pub lengthscale: Option<f64>,
    pub domain: &'a str,
    pub n: usize,
    pub ridge: Option<f64>,
    pub scale: Option<f64>,
    pub gp_noise: f64,
    pub response_bound: f64,
    pub sensitivity: &'a str,
    pub rkhs_norm: Option<f64>,
    pub bound: &'a str,
}

/// A string keyword parsed by the library (its error names the value).
pub fn parse<T: FromStr<Err = gpdp::Error>>(s: &str) -> PyResult<T> {
    s.parse::<T>().py()
}

impl Model<'_> {
    /// The release parameters; `need_ridge`/`need_scale` are false when that
    /// parameter is being solved for (then it may be omitted).
    pub fn params(&self, need_ridge: bool, need_scale: bool) -> PyResult<ReleaseParams> {
        let kind: KernelKind = parse(self.kernel)?;
        let lengthscale = match (kind.has_lengthscale(), self.lengthscale) {
            (true, None) => {
                return Err(bad_arg("lengthscale", format!("required for the {kind} kernel (a number > 0)")));
            }
            (_, l) => l.unwrap_or(1.0),
        };
        let kernel = Kernel::new(kind, lengthscale).py()?;
        let domain = Domain::from_str(self.domain).py()?;
        let ridge = match (need_ridge, self.ridge) {
            (true, None) => return Err(bad_arg("ridge", "required (a number > 0), unless it is solved for")),
            (_, r) => r.unwrap_or(1.0),
        };
        let scale = match (need_scale, self.scale) {
            (true, None) => {
                return Err(bad_arg("scale", "required (a number > 0, or float('inf') for a covariance-only release)"));
            }
            (_, s) => s.unwrap_or(1.0),
        };
        let mut p = ReleaseParams::new(kernel, domain, self.n, ridge, scale);
        p.gp_noise = self.gp_noise;
        p.response_bound = self.response_bound;
        p.sensitivity = parse(self.sensitivity)?;
        p.rkhs_norm = self.rkhs_norm;
        p.bound = parse(self.bound)?;
        if p.rkhs_norm.is_some() && p.sensitivity == gpdp::SensitivityChoice::Auto {
            return Err(bad_arg(
                "rkhs_norm",
                "only used with sensitivity=\"rkhs\" (Lemma B.8 assumes noiseless responses y = f*(x); choose it explicitly)",
            ));
        }
        Ok(p)
    }
}

/// The number of draws L ≥ 1.
pub fn draws(l: u64) -> PyResult<gpdp::Draws> {
    gpdp::Draws::new(l).py()
}
