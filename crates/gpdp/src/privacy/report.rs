//! The privacy report: one serialisable schema for every (ε, δ) statement
//! gpdp makes — `gpdp account --json`, the `privacy` block of a release's
//! `report.json`, calibration results and the studies.
//!
//! A [`PrivacyReport`] is the composed statement (ε, δ, the optimal order α,
//! the composed RDP there, the conversion); its [`ComponentReport`]s are the
//! composed releases, each with the public parameters it was computed from,
//! the two RDP terms at α, V̂_n and Δ̂_n and where each came from. A composed
//! report keeps every component. Tables (`account --batch`) use
//! [`PrivacyReport::flat_fields`], which is derived from this schema, not a
//! second copy of it.

use serde::Serialize;
use serde_json::Value;

use crate::model::draws::Draws;
use crate::privacy::bounds::Lemma;
use crate::privacy::conversion::Conversion;
use crate::privacy::pld::PldReport;
use crate::privacy::published::SensitivityConstants;
use crate::privacy::rdp::BoundChoice;

/// One composed release in a [`PrivacyReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentReport {
    /// Kernel family.
    pub kernel: String,
    /// Lengthscale ℓ.
    pub lengthscale: f64,
    /// Domain Ω.
    pub domain: String,
    /// n.
    pub n: usize,
    /// r.
    pub ridge: f64,
    /// σ (may be +∞, serialised as "inf").
    #[serde(serialize_with = "ser_maybe_inf")]
    pub scale: f64,
    /// η.
    pub gp_noise: f64,
    /// M_Y.
    pub response_bound: f64,
    /// Number of draws L of this release.
    pub draws: Draws,
    /// τ̃ (= V̂/r² without GP noise).
    pub tau: f64,
    /// This release's α_max = 1 + 1/τ̃ (may be +∞).
    #[serde(serialize_with = "ser_maybe_inf")]
    pub alpha_max: f64,
    /// Which proven bound ("tight" or "paper").
    pub bound: BoundChoice,
    /// The covariance-leakage term for one draw at the reported α (∞ in a
    /// vacuous report).
    #[serde(serialize_with = "ser_maybe_inf")]
    pub covariance_term: f64,
    /// Which covariance term: 2ψ_α(τ̃) (paper) or the signed cov_α(τ̃).
    pub covariance_term_source: &'static str,
    /// The mean-leakage term for one draw at the reported α (∞ in a vacuous report).
    #[serde(serialize_with = "ser_maybe_inf")]
    pub mean_term: f64,
    /// Which mean term: the Loewner bound (paper) or the bounded-mean refinement.
    pub mean_term_source: &'static str,
    /// V̂_n.
    pub variance_bound: f64,
    /// Where V̂_n came from.
    pub variance_bound_source: String,
    /// κ, if used.
    pub kappa: Option<f64>,
    /// Δ̂_n.
    pub sensitivity: f64,
    /// The bound that gave Δ̂_n (a lemma of the paper, or the tight
    /// `coupled`, `operator`, `B.8-tight`).
    pub sensitivity_source: Lemma,
    /// `proven` for every guarantee; `published` only in the studies'
    /// reproductions of the paper's tables (not a proven guarantee).
    pub sensitivity_constants: SensitivityConstants,
}

/// An (ε, δ) statement with everything that produced it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrivacyReport {
    /// ε (rounded up; 0 if the improved conversion went negative).
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// The order α at which ε/δ was evaluated.
    pub alpha: f64,
    /// Sup of admissible α for the composition (may be +∞).
    #[serde(serialize_with = "ser_maybe_inf")]
    pub alpha_max: f64,
    /// The composed RDP Σ L_i·ε_α^(i) at `alpha` (∞ in a vacuous report:
    /// δ = 1, α = 1, when no order α > 1 is admissible).
    #[serde(serialize_with = "ser_maybe_inf")]
    pub rdp: f64,
    /// The conversion used.
    pub conversion: Conversion,
    /// True when the conversion was negative and ε = 0 is reported.
    pub epsilon_clamped_at_zero: bool,
    /// With `conversion = pld`: ε (or δ) comes from the PLD accountant, and
    /// this says how (grid, truncation, floating-point slack; the improved
    /// RDP conversion's value for comparison). `alpha`, `rdp` and the
    /// components' terms are then those of the improved RDP conversion, for
    /// comparison only. `None` (null) for the RDP conversions.
    pub pld: Option<PldReport>,
    /// The composed releases, in the order they were composed.
    pub components: Vec<ComponentReport>,
}

impl PrivacyReport {
    /// The total number of draws over all components.
    pub fn total_draws(&self) -> u64 {
        self.components.iter().map(|c| c.draws.get()).sum()
    }

    /// Whether every component uses the proven constants (true for every
    /// report a release or the accountant makes).
    pub fn is_proven(&self) -> bool {
        self.components.iter().all(|c| c.sensitivity_constants == SensitivityConstants::Proven)
    }

    /// The report as (column, value) pairs for a table, derived from the
    /// serialised schema: the top-level fields, then each component's fields.
    /// With one component its fields keep their names (`kernel`, `tau`, …)
    /// unless a top-level field has the same name (`alpha_max` becomes
    /// `component_alpha_max`); with several they are prefixed
    /// `component<i>_` (1-based). The PLD details are columns `pld_<field>`
    /// (null without PLD, so every report has the same columns). Every field
    /// of the schema appears exactly once and no name twice; non-finite
    /// numbers are the strings "inf"/"-inf", an absent κ is null.
    pub fn flat_fields(&self) -> Vec<(String, Value)> {
        let v = serde_json::to_value(self).expect("a privacy report serialises");
        let Value::Object(top) = v else { unreachable!("a struct serialises to an object") };
        let mut out = Vec::new();
        let mut components = Vec::new();
        for (k, v) in top {
            if k == "components" {
                if let Value::Array(a) = v {
                    components = a;
                }
            } else if k == "pld" {
                // Always the same columns (`pld_<field>`), null when not used.
                let fields: Vec<(String, Value)> = match v {
                    Value::Object(o) => o.into_iter().collect(),
                    _ => crate::privacy::pld::report_field_names().into_iter().map(|f| (f, Value::Null)).collect(),
                };
                out.extend(fields.into_iter().map(|(f, v)| (format!("pld_{f}"), v)));
            } else {
                out.push((k, v));
            }
        }
        let single = components.len() == 1;
        for (i, c) in components.into_iter().enumerate() {
            if let Value::Object(fields) = c {
                for (k, v) in fields {
                    let name = if !single {
                        format!("component{}_{k}", i + 1)
                    } else if out.iter().any(|(top, _)| *top == k) {
                        format!("component_{k}")
                    } else {
                        k
                    };
                    out.push((name, v));
                }
            }
        }
        out
    }
}

/// Serialises ±∞ as the strings "inf"/"-inf" (JSON has no infinity).
pub fn ser_maybe_inf<S: serde::Serializer>(v: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    if v.is_infinite() { s.serialize_str(if *v > 0.0 { "inf" } else { "-inf" }) } else { s.serialize_f64(*v) }
}
