//! Using a plan for a release outside the command line (the service, and
//! any front end holding a release spec as JSON): the plan's release spec
//! with the caller's keys on top, refusing keys that contradict what the
//! plan fitted, and the checks that the data are not the plan's proxy.

use serde_json::{Map, Value};

use super::{PLAN_VERSION, PLAN_VERSION_MIN, Plan, shared_records};
use crate::error::{Error, Result};
use crate::mechanism::HyperparameterSource;
use crate::model::data::Dataset;
use crate::spec::ReleaseSpec;

/// A release is refused when more than this fraction of its records are
/// records of the plan's proxy (compared as parsed numbers): the plan was
/// then, in effect, fitted on the private data.
pub const SHARED_RECORDS_REFUSED: f64 = 0.5;

/// Keys of a release spec that the plan fitted or declared: a caller's value
/// must equal the plan's (a different one is refused, never silently used).
pub const PLANNED_KEYS: [&str; 6] = ["kernel", "lengthscale", "scale", "relation", "response_range", "response_bound"];

impl Plan {
    /// Reads a plan.json (`name` names it in messages): parses it, refuses a
    /// version this gpdp does not read ([`Self::check_version`]) and brings
    /// an older version to this one ([`Self::upgrade`]). Every front end
    /// reads plans through this, so that a plan means the same release in
    /// each.
    pub fn from_json(bytes: &[u8], name: &str) -> Result<Plan> {
        let mut plan: Plan = serde_json::from_slice(bytes).map_err(|e| Error::Spec {
            key: "plan",
            reason: format!("{name} is not a plan.json of `gpdp plan`: {e}"),
        })?;
        plan.check_version(name)?;
        plan.upgrade();
        Ok(plan)
    }

    /// Brings a plan of an older version to [`PLAN_VERSION`]. Before
    /// version 5, a plan with a response range held σ, η, the fit (and its
    /// log likelihood) and the scale and noise bounds in units of the
    /// range's half-width (the range
    /// was mapped onto [−1, 1]); since, they are in data units (the range is
    /// only centred, docs/model.md). Multiplying them by the half-width is
    /// exact: the guarantee is invariant under a change of the responses'
    /// units (M_Y, σ and η together), and the ridge λ/σ is unitless. Plans
    /// under a response bound were already in data units.
    pub fn upgrade(&mut self) {
        if self.version < 5
            && let Some(r) = self.release.response_range
        {
            let h = r.half();
            let scale = |x: &mut super::Hyper| {
                x.scale *= h;
                x.noise *= h;
            };
            // The likelihood of responses in data units: the density of y/h over h^records.
            let shift = self.fit.records as f64 * h.ln();
            scale(&mut self.fit.hyper);
            self.fit.log_marginal_likelihood -= shift;
            for restart in &mut self.fit.restarts {
                scale(&mut restart.start);
                scale(&mut restart.end);
                restart.log_marginal_likelihood -= shift;
            }
            self.bounds.scale = (self.bounds.scale.0 * h, self.bounds.scale.1 * h);
            self.bounds.noise = (self.bounds.noise.0 * h, self.bounds.noise.1 * h);
            self.release.response_bound = h;
            let spec = &mut self.release.spec;
            spec.scale = spec.scale.map(|s| s * h);
            spec.gp_noise = spec.gp_noise.map(|s| s * h);
        }
        self.version = self.version.max(PLAN_VERSION);
    }

    /// Refuses a plan.json version this gpdp does not read; `name` names the plan in the message.
    pub fn check_version(&self, name: &str) -> Result<()> {
        if (PLAN_VERSION_MIN..=PLAN_VERSION).contains(&self.version) {
            return Ok(());
        }
        Err(Error::Spec {
            key: "plan",
            reason: format!(
                "plan {name}: plan version {} (this gpdp reads versions {PLAN_VERSION_MIN} to {PLAN_VERSION}; re-run gpdp plan)",
                self.version
            ),
        })
    }

    /// The hyperparameters' source for the report of a release using this plan.
    pub fn source(&self, name: &str) -> HyperparameterSource {
        HyperparameterSource::Plan {
            plan: name.to_string(),
            proxy: self.proxy.clone(),
            proxy_sha256: self.proxy_sha256.clone(),
        }
    }

    /// The plan's release spec with the caller's `keys` (a spec's JSON keys,
    /// e.g. `target_epsilon`, `draws`, `delta`) on top. Keys in
    /// [`PLANNED_KEYS`] must equal the plan's value when given: a caller's
    /// different kernel, ℓ, σ, relation or response scale is refused with a
    /// message naming the key and both values. With both `response_range`
    /// and `response_bound` absent the plan's scale is kept; the plan's
    /// ridge floor (its fitted λ/σ) stays unless the caller gives one.
    pub fn spec_with(&self, name: &str, keys: &Map<String, Value>) -> Result<ReleaseSpec> {
        let Value::Object(mut spec) = serde_json::to_value(&self.release.spec)
            .map_err(|e| Error::Input(format!("plan {name}: its release spec: {e}")))?
        else {
            return Err(Error::Input(format!("plan {name}: its release spec is not a JSON object")));
        };
        for (k, v) in keys {
            if let Some(&key) = PLANNED_KEYS.iter().find(|p| **p == k.as_str()) {
                let planned = spec.get(k).cloned().unwrap_or(Value::Null);
                // The relation's default (replace-one) is stored as absent.
                let same = planned == *v
                    || (k == "relation" && planned.is_null() && v.as_str() == Some("replace-one"))
                    || matches!((planned.as_f64(), v.as_f64()), (Some(a), Some(b)) if (a - b).abs() <= 1e-12 * a.abs().max(1e-300));
                if !same {
                    return Err(Error::Spec {
                        key,
                        reason: format!(
                            "{v} contradicts the plan's {} (plan {name} fitted or declared it): drop the key, or make a new plan",
                            if planned.is_null() { "default".to_string() } else { planned.to_string() }
                        ),
                    });
                }
            }
            spec.insert(k.clone(), v.clone());
        }
        // A caller's ridge replaces the calibration the plan's floor is for.
        if keys.contains_key("ridge") && !keys.contains_key("ridge_floor") {
            spec.remove("ridge_floor");
        }
        serde_json::from_value(Value::Object(spec))
            .map_err(|e| Error::Input(format!("plan {name} with the request's keys: {e}")))
    }

    /// Refuses data that are the plan's proxy: the same bytes (`data_sha256`
    /// equal to the plan's `proxy_sha256`), or more than
    /// [`SHARED_RECORDS_REFUSED`] of its records among the proxy's
    /// (fingerprints of the parsed numbers, when the plan has them).
    /// Returns how many records are shared (private: for the operator only).
    pub fn check_not_the_proxy(&self, name: &str, data_sha256: &str, data: &Dataset) -> Result<usize> {
        if data_sha256 == self.proxy_sha256 {
            return Err(Error::Input(format!(
                "refusing to release: the data have the same SHA-256 ({data_sha256}) as the proxy the plan was fitted on (plan {name}, proxy {}) — hyperparameters fitted on the private data are not covered by the guarantee; fit the plan on public or proxy data",
                self.proxy
            )));
        }
        let Some(fingerprints) = &self.proxy_record_fingerprints else { return Ok(0) };
        let shared = shared_records(fingerprints, data);
        let n = data.len().max(1);
        if shared as f64 > SHARED_RECORDS_REFUSED * n as f64 {
            return Err(Error::Input(format!(
                "refusing to release (private, not published): {shared} of the {n} records are records of the proxy the plan was fitted on (plan {name}; compared as parsed numbers) — hyperparameters fitted on the private data are not covered by the guarantee; fit the plan on public or proxy data"
            )));
        }
        Ok(shared)
    }
}
