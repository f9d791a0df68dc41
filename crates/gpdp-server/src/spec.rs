//! The body of `POST /releases`: the library's release spec
//! ([`gpdp::ReleaseSpec`], every public keyword of a release) plus the
//! server's own keys — where the data are on the server and the dataset's
//! name in the ledger. One flat JSON object; unknown keys are refused.

use std::path::PathBuf;

use gpdp::ReleaseSpec;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ServerError;

/// The keys of a request that are the server's, not the release spec's.
pub const SERVER_KEYS: [&str; 4] = ["data", "x", "y", "dataset"];

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
}

impl ReleaseRequest {
    /// Parses a request body: the server's keys, and the rest as a spec.
    pub fn from_value(v: Value) -> Result<Self, ServerError> {
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
        let spec: ReleaseSpec = serde_json::from_value(Value::Object(all))
            .map_err(|e| ServerError::BadRequest(format!("invalid release request: {e}")))?;
        Ok(ReleaseRequest { data: keys.data, x: keys.x, y: keys.y, dataset: keys.dataset, spec })
    }

    /// The body as JSON (the form stored by the server).
    pub fn to_value(&self) -> Value {
        let keys =
            ServerKeys { data: self.data.clone(), x: self.x.clone(), y: self.y.clone(), dataset: self.dataset.clone() };
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
        Ok(self.spec.mechanism_for_data(data, gpdp::HyperparameterSource::Stated)?)
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
            }
            if let Some(Value::Array(req)) = m.get_mut("required") {
                req.insert(0, Value::String("data".into()));
            }
            m.insert(
                "description".into(),
                Value::String("The release spec (every public keyword of a release: docs/spec.md) and where the data are. Exactly one of response_range and response_bound is required: the responses' scale is a public choice with no default.".into()),
            );
            m.insert(
                "oneOf".into(),
                serde_json::json!([{"required": ["response_range"]}, {"required": ["response_bound"]}]),
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
