//! Planning a release on public data: choose the hyperparameters and see
//! what each ε would cost in utility — without the private data.
//!
//! The guarantee of a release holds only if its hyperparameters (kernel,
//! ℓ, σ, η, r) are chosen without the private data. This module chooses
//! them on a **public or proxy** dataset (last year's readings, a pilot
//! study, a simulation):
//!
//! 1. [`fit`] maximises the log marginal likelihood
//!    ([`log_marginal_likelihood`]) over ℓ, σ and the noise sd λ within
//!    bounds, from several starts;
//! 2. for each target ε, [`calibrate_with_floor`] gives the ridge of the
//!    release: the smallest one meeting ε, or the fitted λ/σ when larger
//!    (more private and closer to the fitted model);
//! 3. [`utility_curve`] simulates the private map on the proxy — hold-out
//!    RMSE of one path and the IoU of its excursion set with the proxy's
//!    non-private one.
//!
//! Everything here is computed from the proxy data and is as public as
//! they are; run it on the private data and the release that uses the
//! result is no longer private. The mathematics is in docs/plan.md.

mod apply;
mod assess;
mod fit;
mod likelihood;
mod records;
mod utility;

use serde::{Deserialize, Serialize};

pub use apply::{PLANNED_KEYS, SHARED_RECORDS_REFUSED};
pub use assess::{Assessment, assess, centre_warning};
pub use fit::{Bounds, Fit, FitOptions, Restart, fit};
pub use likelihood::{Hyper, log_marginal_likelihood};
pub use records::{record_fingerprint, record_fingerprints, shared_records};
pub use utility::{Summary, Utility, UtilityAt, UtilityOptions, calibrate_with_floor, utility_curve};

use crate::model::units::ResponseRange;

/// Version of the [`Plan`] schema (plan.json).
///
/// Version 5: σ, η, the fit and its bounds are in data units under a
/// response range too (before, in the range's half-widths; read through
/// [`Plan::from_json`], an older plan is converted, [`Plan::upgrade`]).
pub const PLAN_VERSION: u32 = 5;

/// The oldest plan.json version this gpdp still reads (version 3 lacks the
/// constant-map baseline, the assessment and the CRS, read as absent).
pub const PLAN_VERSION_MIN: u32 = 3;

/// What a plan is computed from, stated in every plan.json.
pub const PLAN_NOTE: &str = "Computed from PUBLIC or proxy data only (never the private data): the hyperparameters are public inputs of the release, and the utility figures are simulations on the proxy with seeded draws, not releases.";

/// SHA-256 of `bytes` as lower-case hex (plan.json's `proxy_sha256`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// plan.json: the fitted hyperparameters, the release's public settings and
/// the utility of each target ε, all from proxy data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// [`PLAN_VERSION`].
    pub version: u32,
    /// [`PLAN_NOTE`].
    pub note: String,
    /// The proxy data, as named by the caller (a file name).
    pub proxy: String,
    /// SHA-256 of the proxy file's bytes, lower-case hex ([`sha256_hex`]):
    /// `gpdp release --plan` refuses a data file with the same hash (a plan
    /// fitted on the private data would publish its fitted hyperparameters).
    pub proxy_sha256: String,
    /// Proxy records read.
    pub proxy_records: usize,
    /// The proxy's record fingerprints, sorted ([`record_fingerprints`], of
    /// the records as read, before any reprojection): `gpdp release --plan`
    /// counts the data's records among them and refuses when many are
    /// shared (version 4; absent before).
    #[serde(default)]
    pub proxy_record_fingerprints: Option<Vec<String>>,
    /// The fit (kernel, ℓ, σ, λ, every start).
    pub fit: Fit,
    /// The search bounds.
    pub bounds: Bounds,
    /// The fitted ridge λ/σ (the floor of every release's ridge).
    pub fitted_ridge: f64,
    /// The release the plan is for.
    pub release: PlannedRelease,
    /// Utility against ε.
    pub utility: Utility,
    /// Whether the map is worth publishing ([`assess`]; version 4).
    #[serde(default)]
    pub assessment: Option<Assessment>,
}

/// The public settings of the planned release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedRelease {
    /// Records in the private dataset (n of the guarantee).
    pub n: usize,
    /// The covariate domain Ω, as `gpdp release --domain` takes it.
    pub domain: String,
    /// The public response range in data units, if any.
    pub response_range: Option<ResponseRange>,
    /// The response bound M_Y (the half-width with a response range; 1
    /// before version 5).
    pub response_bound: f64,
    /// The responses' unit, if given.
    pub units: Option<String>,
    /// Draws L.
    pub draws: u64,
    /// δ.
    pub delta: f64,
    /// Excursion level t (data units) of the utility figures; `gpdp release
    /// --plan` uses it unless given --threshold.
    pub threshold: f64,
    /// The covariates' CRS as `EPSG:CODE` (after any reprojection: the CRS
    /// of the domain and the lengthscale), if the plan was given one;
    /// `gpdp release --plan` uses it and refuses a contradicting --crs
    /// (version 4).
    #[serde(default)]
    pub crs: Option<String>,
    /// The release's spec (docs/spec.md): the fitted kernel, ℓ and σ, the
    /// domain, δ, L, the response scale, the units and the ridge floor λ/σ
    /// — everything but the target ε, which the release gives (version 3).
    pub spec: crate::spec::ReleaseSpec,
}

#[cfg(test)]
mod tests;
