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
use crate::privacy::constants::SensitivityConstants;
use crate::privacy::conversion::Accounting;
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
    /// The accounting used: "improved" or "paper" (the RDP accountant with
    /// that conversion) or "pld" (the PLD accountant).
    pub conversion: Accounting,
    /// True when the conversion was negative and ε = 0 is reported.
    pub epsilon_clamped_at_zero: bool,
    /// With `conversion = pld`: ε (or δ) comes from the PLD accountant, and
    /// this says how (grid, truncation, floating-point slack; the improved
    /// RDP conversion's value for comparison). `alpha`, `rdp` and the
    /// components' terms are then those of the improved RDP conversion, for
    /// comparison only. `None` (null) for the RDP conversions.
    pub pld: Option<PldReport>,
    /// With exact Gaussian accounting (a release whose noise does not depend
    /// on the data, e.g. under change-one-response): ε (or δ) is the
    /// Gaussian mechanism's exact profile at the distance μ, and this says
    /// how μ was obtained. `alpha` and `rdp` are then those of the Rényi
    /// curve αμ²/2 with the improved conversion, for comparison only, and
    /// `components` is empty (the release's parameters are in this block).
    /// `None` (null) for the RDP and PLD accountants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gaussian: Option<GaussianReport>,
    /// With `--bound joint` for one release: ε is the smallest of every
    /// proven route, and this names the route that gave it and lists the
    /// others' values (docs/proofs/chain-route.md §6.3). `alpha` and `rdp`
    /// are the Rényi route's. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<RouteReport>,
    /// The composed releases, in the order they were composed.
    pub components: Vec<ComponentReport>,
}

/// A certified (ε, δ) of the chain route (`privacy::chain`) and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ChainStatement {
    /// ε = ε₁ + ε₂ (rounded up).
    pub epsilon: f64,
    /// δ (the target).
    pub delta: f64,
    /// μ̄: the certified supremum of the one-draw mean-shift distance.
    pub mu_bar: f64,
    /// The largest μ found at a point of the region (a lower estimate of the
    /// supremum, for the report: μ̄'s gap).
    pub mu_found: f64,
    /// δ₁, the covariance step's share of δ.
    pub delta_cov: f64,
    /// ε₁ = ε_cov,L(δ₁).
    pub epsilon_cov: f64,
    /// ε₂ = ε_GM(√L·μ̄; (δ − δ₁)e^{−ε₁}).
    pub epsilon_mean: f64,
}

/// Which proven route gave a `--bound joint` release's ε, and every route's
/// value at the same δ (each a valid statement for this one release; the
/// reported ε is their minimum).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteReport {
    /// "chain", "joint-rdp" or "tight-rdp".
    pub route: &'static str,
    /// ε of the tight Rényi bound, converted.
    pub tight_rdp: f64,
    /// ε of the joint Rényi bound (the smaller of tight and joint at each
    /// order), converted.
    pub joint_rdp: f64,
    /// ε of the two-step chain, with how it was obtained (None: no split
    /// gave a finite ε at this δ).
    pub chain: Option<ChainStatement>,
    /// Composition of several releases uses the Rényi curves only: a
    /// ledger's ε for this release alone may be larger than `epsilon`.
    pub composition: &'static str,
}

/// How an exact Gaussian-mechanism statement was obtained: part of the
/// privacy report (docs/proofs/change-response.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GaussianReport {
    /// The neighbouring relation the distance is for.
    pub neighbouring_relation: crate::mechanism::NeighbouringRelation,
    /// What was computed.
    pub method: &'static str,
    /// The Gaussian distance μ of all draws (rounded up): the release is
    /// μ-GDP, δ(ε) = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ).
    pub mu: f64,
    /// How μ was obtained.
    pub mu_source: String,
    /// The number of public covariates μ was computed from (None: the bound
    /// for any covariates).
    pub covariates: Option<usize>,
    /// The 1-based row of the public covariate whose reading μ is largest
    /// for (public under this relation).
    pub worst_covariate: Option<usize>,
    /// For comparison: the improved RDP conversion's ε of the curve αμ²/2
    /// at the same δ (ε(δ) statements only).
    pub rdp_epsilon: Option<f64>,
    /// The release's parameters.
    pub release: GaussianRelease,
}

/// The public parameters of a Gaussian-accounted release.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GaussianRelease {
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
    /// σ.
    pub scale: f64,
    /// η.
    pub gp_noise: f64,
    /// M_Y.
    pub response_bound: f64,
    /// L.
    pub draws: Draws,
}

impl GaussianRelease {
    /// The parameters of `draws` draws of `p`, as reported.
    pub fn of(p: &crate::privacy::release::ReleaseParams, draws: Draws) -> Self {
        GaussianRelease {
            kernel: p.kernel.kind().name().to_string(),
            lengthscale: p.kernel.lengthscale(),
            domain: p.domain.to_string(),
            n: p.n,
            ridge: p.ridge,
            scale: p.scale,
            gp_noise: p.gp_noise,
            response_bound: p.response_bound,
            draws,
        }
    }
}

impl PrivacyReport {
    /// The neighbouring relation the statement holds for: the Gaussian
    /// block's (change-one-response, or a data-free release), else
    /// replace-one (the RDP bounds of the components are for replace-one).
    pub fn neighbouring_relation(&self) -> crate::mechanism::NeighbouringRelation {
        self.gaussian.as_ref().map_or(crate::mechanism::NeighbouringRelation::ReplaceOne, |g| g.neighbouring_relation)
    }

    /// The report as JSON, with its `neighbouring_relation` stated at the
    /// top level (as `gpdp account --json`, calibrate, batch rows and
    /// Python's `to_dict` give it), and what that relation protects.
    pub fn to_value(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("a privacy report serialises");
        if let Value::Object(o) = &mut v {
            let r = self.neighbouring_relation();
            o.insert("neighbouring_relation".into(), serde_json::to_value(r).expect("a relation serialises"));
            o.insert("protects".into(), Value::String(r.protects().to_string()));
        }
        v
    }

    /// The total number of draws over all components.
    pub fn total_draws(&self) -> u64 {
        let gaussian = self.gaussian.as_ref().map_or(0, |g| g.release.draws.get());
        self.components.iter().map(|c| c.draws.get()).sum::<u64>() + gaussian
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
        let v = self.to_value();
        let Value::Object(top) = v else { unreachable!("a struct serialises to an object") };
        let mut out = Vec::new();
        let mut components = Vec::new();
        for (k, v) in top {
            if k == "components" {
                if let Value::Array(a) = v {
                    components = a;
                }
            } else if k == "gaussian" {
                // Present only with exact Gaussian accounting: `gaussian_<field>`.
                if let Value::Object(o) = v {
                    for (f, v) in o {
                        if let Value::Object(release) = v {
                            out.extend(release.into_iter().map(|(g, v)| (format!("gaussian_{g}"), v)));
                        } else {
                            out.push((format!("gaussian_{f}"), v));
                        }
                    }
                }
            } else if k == "pld" {
                // Always the same columns (`pld_<field>`), null when not used.
                let fields: Vec<(String, Value)> = match v {
                    Value::Object(o) => o.into_iter().collect(),
                    _ => report_field_names().into_iter().map(|f| (f, Value::Null)).collect(),
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

/// The PLD accountant's method, as reported.
pub const PLD_METHOD: &str = "pessimistic PLD of the dominating pair N(0, diag(1/(1+τ), 1)) vs N(0, diag(1, 1/(1+τ))) per draw, FFT composition (docs/proofs/pld-covariance-only.md)";

/// How a PLD statement was computed: part of the privacy report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PldReport {
    /// What was computed.
    pub method: &'static str,
    /// The grid width h of the privacy loss.
    pub grid_width: f64,
    /// Number of grid points of the composed privacy loss.
    pub support_points: usize,
    /// FFT length.
    pub fft_len: usize,
    /// The exponential tilt θ applied before the FFT.
    pub tilt: f64,
    /// The largest χ²₁ tail mass of a truncated factor.
    pub tail_mass_per_factor: f64,
    /// Mass put at +∞ (counted fully in δ): Σ L·p_∞, rounded up.
    pub infinity_mass: f64,
    /// Mass moved up to the lower cut-off (already in the distribution; a
    /// pessimistic move, so not added to δ).
    pub lower_truncation_mass: f64,
    /// The floating-point allowance added to δ at the reported ε (erf/erfc
    /// values and edges, tilt, FFT, powers, untilt, final sum).
    pub float_slack: f64,
    /// The certified δ at the reported ε (≤ the target δ for ε(δ)).
    pub delta_bound: f64,
    /// For comparison: the improved RDP conversion's ε at the same δ (ε(δ)
    /// statements; set by the accountant, `None` if it has none).
    pub rdp_epsilon: Option<f64>,
    /// For comparison: the improved RDP conversion's δ at the same ε (δ(ε)
    /// statements; set by the accountant).
    pub rdp_delta: Option<f64>,
}

impl PldReport {
    /// The report of a composition without privacy loss (every τ = 0).
    pub(crate) fn trivial() -> PldReport {
        PldReport {
            method: PLD_METHOD,
            grid_width: 0.0,
            support_points: 1,
            fft_len: 0,
            tilt: 0.0,
            tail_mass_per_factor: 0.0,
            infinity_mass: 0.0,
            lower_truncation_mass: 0.0,
            float_slack: 0.0,
            delta_bound: 0.0,
            rdp_epsilon: None,
            rdp_delta: None,
        }
    }
}

/// The field names of [`PldReport`] as serialised (the `pld_<field>` table
/// columns of a report without PLD).
pub(crate) fn report_field_names() -> Vec<String> {
    match serde_json::to_value(PldReport::trivial()) {
        Ok(serde_json::Value::Object(o)) => o.into_iter().map(|(k, _)| k).collect(),
        _ => Vec::new(),
    }
}

/// Serialises ±∞ as the strings "inf"/"-inf" (JSON has no infinity).
pub fn ser_maybe_inf<S: serde::Serializer>(v: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    if v.is_infinite() { s.serialize_str(if *v > 0.0 { "inf" } else { "-inf" }) } else { s.serialize_f64(*v) }
}
