//! The public report of a release (`report.json`): a function of the public
//! parameters, the query, the sampler plan and the generator's kind only.
//! Nothing here depends on the private data — no counts of clipped values,
//! no timings, no sampler decisions that look at the covariates.

use serde::Serialize;

use super::Mechanism;
use crate::model::policy::OnUnbounded;
use crate::model::query::QuerySummary;
use crate::privacy::{Calibration, PrivacyReport, Solve};
use crate::rng::ReleaseRng;
use crate::sampling::auto::SamplerSummary;

/// The reminder every report carries about hyperparameters.
pub const HYPERPARAMETERS_NOTE: &str = "Kernel, lengthscale, scale, GP noise and ridge (or target ε) must be chosen without the private data (public data, synthetic data or domain knowledge); tuning them on the private data voids this guarantee.";

/// The floating-point caveat every report carries.
pub const FLOATING_POINT_NOTE: &str =
    "Gaussian variates are f64 and not hardened against least-significant-bit attacks (Mironov 2012).";

/// The assumption a Lemma B.8 release rests on.
pub const RKHS_ASSUMPTION: &str = "Lemma B.8: every response is the noiseless value y = f*(x) of a function f* with RKHS norm at most the stated ‖f*‖_H; the guarantee holds only if this is true, and it cannot be checked from the data.";

/// What the jitter is.
pub const JITTER_NOTE: &str =
    "independent N(0, jitter) noise added to every released value: data-free, post-processing";

/// The version of the `report.json` schema ([`ReleaseReport::schema_version`]).
///
/// * 2 (gpdp 0.x, issue 23): adds `schema_version` and
///   `neighbouring_relation`; `privacy.conversion` is the accounting
///   ("improved", "paper" or "pld"), with the same strings as before.
/// * 1: every report before `schema_version` existed (no such field).
pub const REPORT_SCHEMA_VERSION: u32 = 2;

/// The neighbouring relation a guarantee is stated for: which pairs of
/// datasets the (ε, δ) statement bounds the distinguishability of.
/// Serialised as a string: the paper's replace-one relation, or
/// change-one-response when the covariates are public
/// (docs/proofs/change-response.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum NeighbouringRelation {
    /// Datasets of the same public size n that differ in one record
    /// (covariates and response), "replace-one, n public".
    #[default]
    #[serde(rename = "replace-one, n public", alias = "replace-one")]
    ReplaceOne,
    /// Datasets with the same public covariates that differ in one
    /// response: each reading is protected, the locations are public.
    #[serde(rename = "change-one-response, covariates public", alias = "change-response")]
    ChangeResponse,
}

impl NeighbouringRelation {
    /// The relation as reported.
    pub fn name(self) -> &'static str {
        match self {
            NeighbouringRelation::ReplaceOne => "replace-one, n public",
            NeighbouringRelation::ChangeResponse => "change-one-response, covariates public",
        }
    }

    /// The relation's key, as given to `--relation` and in a spec:
    /// `replace-one` or `change-response`.
    pub fn key(self) -> &'static str {
        match self {
            NeighbouringRelation::ReplaceOne => "replace-one",
            NeighbouringRelation::ChangeResponse => "change-response",
        }
    }

    /// What the relation protects, in words for the statement sentence.
    pub fn protects(self) -> &'static str {
        match self {
            NeighbouringRelation::ReplaceOne => "each record (its covariates and its response); n is public",
            NeighbouringRelation::ChangeResponse => {
                "each reading (response); the covariates (e.g. sensor locations) are treated as public"
            }
        }
    }
}

impl std::str::FromStr for NeighbouringRelation {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> crate::error::Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "replace-one" | "replace-one, n public" => Ok(NeighbouringRelation::ReplaceOne),
            "change-response" | "change-one-response" | "change-one-response, covariates public" => {
                Ok(NeighbouringRelation::ChangeResponse)
            }
            other => Err(crate::error::Error::Input(format!(
                "neighbouring relation '{}': expected replace-one or change-response",
                other.chars().take(40).collect::<String>()
            ))),
        }
    }
}

impl std::fmt::Display for NeighbouringRelation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a release's hyperparameters (kernel, ℓ, σ and the ridge floor) came
/// from, as the report states it. gpdp cannot verify that they were chosen
/// without the private data; it records what the data holder used, and
/// refuses a plan fitted on the very file being released (same SHA-256).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum HyperparameterSource {
    /// Stated by the data holder (flags or keywords), not fitted by gpdp.
    #[default]
    Stated,
    /// Taken from a `gpdp plan` fitted on proxy data.
    Plan {
        /// The plan file, as named by the caller.
        plan: String,
        /// The proxy dataset the plan was fitted on, as the plan names it.
        proxy: String,
        /// SHA-256 of the proxy file's bytes (hex), from the plan.
        proxy_sha256: String,
    },
}

/// The calibration behind a calibrated mechanism.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationSummary {
    /// Which parameter was solved for.
    pub solve: Solve,
    /// Its value.
    pub value: f64,
    /// The target ε.
    pub target_epsilon: f64,
    /// A value 0.1% more permissive …
    pub permissive_value: f64,
    /// … and its ε, which exceeds the target (absent when the solved value is
    /// the smallest possible, e.g. η = 0).
    pub permissive_epsilon: Option<f64>,
}

impl CalibrationSummary {
    pub(crate) fn new(c: &Calibration, target_epsilon: f64) -> Self {
        CalibrationSummary {
            solve: c.solve,
            value: c.value,
            target_epsilon,
            permissive_value: c.permissive_value,
            permissive_epsilon: c.permissive_epsilon.is_finite().then_some(c.permissive_epsilon),
        }
    }
}

/// The data policy as a report states it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataPolicySummary {
    /// Number of records n (public).
    pub n: usize,
    /// Covariate dimension.
    pub dimension: usize,
    /// The domain Ω every covariate lies in.
    pub domain: String,
    /// M_Y.
    pub response_bound: f64,
    /// Clip or reject.
    pub on_unbounded: OnUnbounded,
    /// The declared covariate lattice (points per axis), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub covariate_lattice: Option<Vec<usize>>,
    /// Responses in data units with a public range, centred on its middle
    /// (M_Y = the half-width); σ, η and the released values are in data
    /// units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_range: Option<crate::model::units::ResponseRange>,
    /// The responses' unit (a label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units: Option<String>,
    /// What σ and η mean at this response scale, and the prior mean.
    pub scale_meaning: crate::model::units::ScaleMeaning,
    /// With snapping: the lattice spacing per axis and the largest distance a
    /// covariate can have been moved, half the cell diagonal (public).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snap: Option<SnapReport>,
}

/// What snapping does, as the report states it (public: a function of the
/// domain and the lattice only).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SnapReport {
    /// Lattice spacing per axis.
    pub spacing: Vec<f64>,
    /// Largest location error: ½·√(Σ h_j²).
    pub max_location_error: f64,
}

/// The sampler as a report states it: the plan, and the post-processing
/// noise added to every value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SamplerReport {
    /// The plan.
    #[serde(flatten)]
    pub plan: SamplerSummary,
    /// Variance j of the independent, data-free noise on every value.
    pub jitter: f64,
    /// What j is.
    pub jitter_note: &'static str,
}

/// Everything publishable about one release.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReleaseReport {
    /// The version of this schema ([`REPORT_SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The version of gpdp that made the release.
    pub gpdp_version: &'static str,
    /// True only for draws from an OS-seeded generator.
    pub private: bool,
    /// The guarantee in one sentence.
    pub statement: String,
    /// Present for seeded (reproducible, not private) output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The generator.
    pub generator: String,
    /// The neighbouring relation the guarantee holds for.
    pub neighbouring_relation: NeighbouringRelation,
    /// The (ε, δ) statement with all its components.
    pub privacy: PrivacyReport,
    /// The calibration, if any.
    pub calibration: Option<CalibrationSummary>,
    /// The data policy.
    pub data_policy: DataPolicySummary,
    /// Where the paths were evaluated.
    pub query: QuerySummary,
    /// How they were drawn.
    pub sampler: SamplerReport,
    /// Assumptions about how the data were generated that the guarantee
    /// rests on (Lemma B.8), if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<&'static str>,
    /// About choosing hyperparameters.
    pub hyperparameters: &'static str,
    /// Where these hyperparameters came from.
    pub hyperparameter_source: HyperparameterSource,
    /// About floating point.
    pub floating_point: &'static str,
}

/// The guarantee in one line: "(ε, δ)-differentially private release of L
/// posterior sample path(s) (n, r, σ, η, accounting) under the relation,
/// protecting …", marked when the generator was seeded.
/// ε and δ are rounded up ([`crate::privacy::display`]).
pub fn statement(r: &PrivacyReport, private: bool) -> String {
    use crate::privacy::display::{delta_up, epsilon_up};
    let base = match &r.gaussian {
        Some(g) => {
            let p = &g.release;
            let relation = g.neighbouring_relation;
            format!(
                "({}, {})-differentially private release of {} posterior sample path(s) (n = {}, r = {:.6}, σ = {}, η = {}, exact Gaussian accounting) under {}: protects {}",
                epsilon_up(r.epsilon, 4),
                delta_up(r.delta, 4),
                r.total_draws(),
                p.n,
                p.ridge,
                p.scale,
                p.gp_noise,
                relation.name(),
                relation.protects()
            )
        }
        None => {
            let c = &r.components[0];
            let relation = NeighbouringRelation::ReplaceOne;
            format!(
                "({}, {})-differentially private release of {} posterior sample path(s) (n = {}, r = {:.6}, σ = {}, η = {}, {} conversion) under {}: protects {}",
                epsilon_up(r.epsilon, 4),
                delta_up(r.delta, 4),
                r.total_draws(),
                c.n,
                c.ridge,
                c.scale,
                c.gp_noise,
                r.conversion,
                relation.name(),
                relation.protects()
            )
        }
    };
    if private { base } else { format!("{base} — SEEDED: reproducible, NOT a private release") }
}

impl ReleaseReport {
    pub(crate) fn new(m: &Mechanism, rng: &ReleaseRng, query: QuerySummary, plan: SamplerSummary, jitter: f64) -> Self {
        let private = rng.is_private();
        let p = &m.params;
        ReleaseReport {
            schema_version: REPORT_SCHEMA_VERSION,
            gpdp_version: env!("CARGO_PKG_VERSION"),
            private,
            statement: statement(&m.privacy, private),
            warning: rng.seed().map(|s| format!("generated with seed {s}: reproducible, NOT a private release")),
            generator: rng.describe(),
            neighbouring_relation: p.relation,
            privacy: m.privacy.clone(),
            calibration: m.calibration.clone(),
            data_policy: DataPolicySummary {
                n: p.release.n,
                dimension: p.release.domain.dim(),
                domain: p.release.domain.to_string(),
                response_bound: p.release.response_bound,
                on_unbounded: p.on_unbounded,
                covariate_lattice: p.covariate_lattice.as_ref().map(|l| l.counts().to_vec()),
                response_range: p.response_range,
                units: p.units.clone(),
                scale_meaning: p.response_scale().meaning(p.release.scale, p.units.as_deref().unwrap_or("")),
                snap: p.covariate_lattice.as_ref().filter(|l| l.snaps()).map(|l| {
                    let (lo, hi) = p.release.domain.bounding_box();
                    let spacing: Vec<f64> =
                        (0..l.dim()).map(|j| (hi[j] - lo[j]) / (l.counts()[j] - 1) as f64).collect();
                    let max_location_error = 0.5 * spacing.iter().map(|h| h * h).sum::<f64>().sqrt();
                    SnapReport { spacing, max_location_error }
                }),
            },
            query,
            sampler: SamplerReport { plan, jitter, jitter_note: JITTER_NOTE },
            assumptions: if p.uses_rkhs_lemma() { vec![RKHS_ASSUMPTION] } else { vec![] },
            hyperparameters: HYPERPARAMETERS_NOTE,
            hyperparameter_source: p.hyperparameter_source.clone(),
            floating_point: FLOATING_POINT_NOTE,
        }
    }
}
