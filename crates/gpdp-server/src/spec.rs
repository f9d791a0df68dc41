//! The body of `POST /releases`: the library's release spec
//! ([`gpdp::ReleaseSpec`], every public keyword of a release) plus the
//! server's own keys — where the data are on the server, the dataset's
//! name in the ledger, the covariates' CRS and a plan to take the
//! hyperparameters from. One flat JSON object; unknown keys are refused.

use std::path::PathBuf;

use gpdp::ReleaseSpec;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ServerError;

/// The keys of a request that are the server's, not the release spec's.
pub const SERVER_KEYS: [&str; 6] = ["data", "x", "y", "dataset", "crs", "plan"];

/// A release request. `n` is the number of records in `data`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleaseRequest {
    /// The private dataset: a CSV file on the server (never sent over HTTP).
    pub data: PathBuf,
    /// Covariate columns by name (default: `x` or `x1..xd`).
    pub x: Option<Vec<String>>,
    /// Response column (default `y`).
    pub y: Option<String>,
    /// The dataset's name in the ledger (its budget).
    pub dataset: Option<String>,
    /// The covariates' coordinate reference system as `EPSG:CODE` (public):
    /// the viewer labels its axes with the CRS's name and unit.
    pub crs: Option<String>,
    /// A `gpdp plan` plan.json on the server whose release spec the request's
    /// keys complete ([`gpdp::plan::Plan::spec_with`]); resolved when the
    /// release is created, so a stored request has its spec in full and
    /// names the plan only as the hyperparameters' source.
    pub plan: Option<PathBuf>,
    /// The plan read for `plan` and its name (not serialised): the source of
    /// the hyperparameters in the report, and the proxy the data are checked against.
    pub planned: Option<(gpdp::plan::Plan, String)>,
    /// The release's public keywords.
    pub spec: ReleaseSpec,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerKeys {
    data: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    y: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dataset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    crs: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    plan: Option<PathBuf>,
}

impl ReleaseRequest {
    /// Parses a request body: the server's keys, and the rest as a spec.
    /// A body with `plan` is parsed by [`Self::from_value_with`], which has
    /// the plan; here it is refused.
    pub fn from_value(v: Value) -> Result<Self, ServerError> {
        Self::from_value_with(v, |path| {
            Err(ServerError::BadRequest(format!("plan: {} was not resolved (no plan reader here)", path.display())))
        })
    }

    /// Parses a request body; with a `plan` key, `read_plan` gives the plan
    /// (and its name), whose release spec the body's spec keys complete.
    /// A `crs` must be a known `EPSG:CODE`.
    pub fn from_value_with(
        v: Value,
        read_plan: impl FnOnce(&std::path::Path) -> Result<(gpdp::plan::Plan, String), ServerError>,
    ) -> Result<Self, ServerError> {
        let Value::Object(mut all) = v else {
            return Err(ServerError::BadRequest("the body must be a JSON object".into()));
        };
        let mut own = Map::new();
        for k in SERVER_KEYS {
            if let Some(v) = all.remove(k) {
                own.insert(k.to_string(), v);
            }
        }
        let keys: ServerKeys = serde_json::from_value(Value::Object(own))
            .map_err(|e| ServerError::BadRequest(format!("invalid release request: {e}")))?;
        let mut crs = match &keys.crs {
            Some(c) => {
                Some(c.parse::<gpdp::crs::Crs>().map_err(|e| ServerError::BadRequest(format!("crs: {e}")))?.to_string())
            }
            None => None,
        };
        let mut planned = None;
        let spec: ReleaseSpec = match &keys.plan {
            Some(path) => {
                let (plan, name) = read_plan(path)?;
                plan.check_version(&name)?;
                if let Some(planned) = &plan.release.crs {
                    match &crs {
                        Some(c) if c != planned => {
                            return Err(ServerError::BadRequest(format!(
                                "crs: {c} contradicts the plan's {planned} (plan {name}): drop one"
                            )));
                        }
                        _ => crs = Some(planned.clone()),
                    }
                }
                let spec = plan.spec_with(&name, &all)?;
                planned = Some((plan, name));
                spec
            }
            None => serde_json::from_value(Value::Object(all))
                .map_err(|e| ServerError::BadRequest(format!("invalid release request: {e}")))?,
        };
        Ok(ReleaseRequest {
            data: keys.data,
            x: keys.x,
            y: keys.y,
            dataset: keys.dataset,
            crs,
            plan: keys.plan,
            planned,
            spec,
        })
    }

    /// The body as JSON (the form stored by the server).
    pub fn to_value(&self) -> Value {
        let keys = ServerKeys {
            data: self.data.clone(),
            x: self.x.clone(),
            y: self.y.clone(),
            dataset: self.dataset.clone(),
            crs: self.crs.clone(),
            plan: self.plan.clone(),
        };
        let mut all = match serde_json::to_value(&self.spec) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if let Ok(Value::Object(own)) = serde_json::to_value(keys) {
            all.extend(own);
        }
        Value::Object(all)
    }

    /// The checked (and, with `target_epsilon`, calibrated) mechanism for
    /// releasing `data`: under `relation` change-response the data's
    /// covariates are the public covariates the guarantee is computed for.
    pub fn mechanism(&self, data: &gpdp::Dataset) -> Result<gpdp::Mechanism, ServerError> {
        let source = match &self.planned {
            Some((plan, name)) => plan.source(name),
            None => gpdp::HyperparameterSource::Stated,
        };
        Ok(self.spec.mechanism_for_data(data, source)?)
    }

    /// The request's JSON Schema for the OpenAPI document: the spec's
    /// schema (derived from [`ReleaseSpec`], OpenAPI 3.0 dialect) with the
    /// server's keys added.
    pub fn schema() -> Value {
        let generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        let mut schema = serde_json::to_value(generator.into_root_schema_for::<ReleaseSpec>()).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut schema {
            m.remove("$schema");
            m.remove("title");
            if let Some(Value::Object(props)) = m.get_mut("properties") {
                props.insert(
                    "data".into(),
                    serde_json::json!({"type": "string", "description": "A CSV file on the server"}),
                );
                props.insert("x".into(), serde_json::json!({"type": "array", "items": {"type": "string"}, "description": "Covariate columns by name"}));
                props.insert("y".into(), serde_json::json!({"type": "string", "description": "Response column"}));
                props.insert(
                    "dataset".into(),
                    serde_json::json!({"type": "string", "description": "The dataset's budget in the server's ledger"}),
                );
                props.insert(
                    "crs".into(),
                    serde_json::json!({"type": "string", "description": "The covariates' CRS as EPSG:CODE (the viewer's axis labels)", "example": "EPSG:27700"}),
                );
                props.insert(
                    "plan".into(),
                    serde_json::json!({"type": "string", "description": "A plan.json of `gpdp plan` on the server (inside data_dir): its release spec, which the request's keys complete; kernel, lengthscale, scale, relation and the response scale must then be absent or equal the plan's"}),
                );
            }
            // Without a plan the spec's required keys and one response scale;
            // with one, the plan supplies them.
            let spec_required = m.remove("required").unwrap_or_else(|| Value::Array(vec![]));
            m.insert("required".into(), serde_json::json!(["data"]));
            m.insert(
                "description".into(),
                Value::String("The release spec (every public keyword of a release: docs/spec.md) and where the data are. Without `plan`, the spec's required keys and exactly one of response_range and response_bound are required: the responses' scale is a public choice with no default. With `plan`, the plan's release spec supplies them and the request's keys complete it.".into()),
            );
            m.insert(
                "anyOf".into(),
                serde_json::json!([
                    {"required": ["plan"]},
                    {"required": spec_required, "oneOf": [{"required": ["response_range"]}, {"required": ["response_bound"]}]}
                ]),
            );
        }
        schema
    }
}

impl Serialize for ReleaseRequest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for ReleaseRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ReleaseRequest::from_value(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}
