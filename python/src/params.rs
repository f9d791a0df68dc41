//! The public parameters of a release, from Python keywords, with the
//! same defaults and checks as the CLI's flags (`gpdp account --help`).

use std::str::FromStr;

use gpdp::spec::ModelSpec;
use gpdp::{Domain, ReleaseParams};
use pyo3::prelude::*;

use crate::errors::OrPy;

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
    /// The release parameters: the keywords are spec keys, translated by
    /// the library ([`gpdp::spec::ModelSpec::release_params`], its messages
    /// in keyword spelling). `solving` is the parameter being solved for
    /// (then it may be omitted).
    pub fn params(&self, solving: Option<gpdp::Solve>) -> PyResult<ReleaseParams> {
        let mut m = ModelSpec::new(parse(self.kernel)?, Domain::from_str(self.domain).py()?);
        m.lengthscale = self.lengthscale;
        m.ridge = self.ridge;
        m.scale = self.scale;
        m.gp_noise = Some(self.gp_noise);
        m.response_bound = Some(self.response_bound);
        m.sensitivity = parse(self.sensitivity)?;
        m.rkhs_norm = self.rkhs_norm;
        m.bound = parse(self.bound)?;
        m.release_params(self.n, solving).py()
    }
}

/// The number of draws L ≥ 1.
pub fn draws(l: u64) -> PyResult<gpdp::Draws> {
    gpdp::Draws::new(l).py()
}
