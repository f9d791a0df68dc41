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
    pub domain: Domain,
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
        let mut m = ModelSpec::new(parse(self.kernel)?, self.domain.clone());
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

/// A `units` label, checked as the CLI's `--units` is
/// (`gpdp-cli`'s `args::parse_units`, which this mirrors): printable, not
/// empty, at most 40 characters; surrounding spaces are dropped.
pub fn units(s: &str) -> PyResult<String> {
    use crate::errors::bad_arg;
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(bad_arg(
            "units",
            format!(
                "{s:?}: the unit label holds the control character {} — give printable text such as µg/m³",
                c.escape_unicode()
            ),
        ));
    }
    if s.trim().is_empty() {
        return Err(bad_arg("units", "the unit label is empty; give e.g. µg/m³, or leave units out"));
    }
    if s.chars().count() > 40 {
        return Err(bad_arg("units", "a unit label of at most 40 characters, please"));
    }
    Ok(s.trim().to_string())
}

/// A `response_range` keyword: a pair (lo, hi) of numbers in data units
/// (or the CLI's text "LO,HI"), checked by the library.
pub fn response_range(v: &Bound<'_, PyAny>) -> PyResult<gpdp::model::units::ResponseRange> {
    use crate::errors::bad_arg;
    if let Ok(s) = v.cast::<pyo3::types::PyString>() {
        return s.to_cow()?.parse().map_err(|e| bad_arg("response_range", e));
    }
    let pair: Vec<f64> = crate::convert::vector(v.py(), v, "response_range")
        .map_err(|_| bad_arg("response_range", "expected (lo, hi), two numbers in data units"))?;
    let [lo, hi] = pair[..] else {
        return Err(bad_arg("response_range", format!("expected (lo, hi), two numbers; got {} numbers", pair.len())));
    };
    gpdp::model::units::ResponseRange::new(lo, hi).map_err(|e| bad_arg("response_range", e))
}
