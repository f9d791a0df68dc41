//! The OpenAPI 3.0 document of the API, served at `/openapi.json`.

use serde_json::{Value, json};

fn error_response(what: &str) -> Value {
    json!({"description": what, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// The document (hand-written but for the release request, whose schema is
/// derived from the library's spec type; the API tests and the schemathesis run in
/// CI check the server against it).
pub fn document() -> Value {
    let id_param = json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}});
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "gpdp serve",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Differentially private Gaussian-process sample paths as a service. A release is one fixed draw of the posterior process (or L draws); evaluating it anywhere, in any order, reveals values of the same function and costs no extra privacy budget. Every revealed value is stored before it is returned, so a restart answers identically."
        },
        "paths": {
            "/releases": {
                "get": {
                    "summary": "All releases (public descriptions)",
                    "responses": {"200": {"description": "The releases", "content": {"application/json": {"schema": {
                        "type": "object", "required": ["releases"],
                        "properties": {"releases": {"type": "array", "items": {"$ref": "#/components/schemas/Release"}}}}}}},
                        "429": error_response("Rate limited")}
                },
                "post": {
                    "summary": "Create a release (admin)",
                    "security": [{"bearer": []}],
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReleaseSpec"}}}},
                    "responses": {
                        "201": {"description": "Created", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Release"}}}},
                        "400": error_response("Bad request"), "401": error_response("Missing or wrong token"),
                        "403": error_response("Beyond the dataset's budget"), "408": error_response("Body not received in time"),
                        "413": error_response("Body too large"),
                        "422": error_response("Parameters refused by the accountant or data refused by the policy"),
                        "429": error_response("Rate limited"),
                        "507": error_response("The server's state-memory cap (max_state_bytes) would be exceeded")
                    }
                }
            },
            "/releases/{id}": {
                "parameters": [id_param.clone()],
                "get": {
                    "summary": "One release's public description",
                    "responses": {"200": {"description": "The release", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Release"}}}},
                        "404": error_response("Unknown release"), "429": error_response("Rate limited")}
                },
                "delete": {
                    "summary": "Retire a release (admin)",
                    "security": [{"bearer": []}],
                    "responses": {"204": {"description": "Retired"}, "401": error_response("Missing or wrong token"),
                        "404": error_response("Unknown release"), "429": error_response("Rate limited")}
                }
            },
            "/releases/{id}/eval": {
                "parameters": [id_param.clone()],
                "post": {
                    "summary": "Evaluate a path at points (exact conditional on everything it revealed)",
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EvalRequest"}}}},
                    "responses": {
                        "200": {"description": "Values", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EvalResponse"}}}},
                        "400": error_response("Bad points (dimension, NaN, outside the domain) or path"),
                        "404": error_response("Unknown release"), "408": error_response("Body not received in time"),
                        "409": error_response("Retired"),
                        "413": error_response("Too many points in the batch or revealed by the path"),
                        "422": error_response("Refused by the library"), "429": error_response("Rate limited"),
                        "503": error_response("Unavailable"),
                        "507": error_response("The server's state-memory cap (max_state_bytes) would be exceeded")
                    }
                }
            },
            "/releases/{id}/grid": {
                "parameters": [id_param,
                    {"name": "n", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 2}},
                    {"name": "nx", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 2}},
                    {"name": "ny", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 2}},
                    {"name": "path", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 0}}],
                "get": {
                    "summary": "A path on a regular grid over the domain's box (x1 fastest), for maps",
                    "responses": {
                        "200": {"description": "Grid values", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Grid"}}}},
                        "400": error_response("Bad grid"), "404": error_response("Unknown release"),
                        "409": error_response("Retired"), "413": error_response("Too many points revealed"),
                        "429": error_response("Rate limited"), "503": error_response("Unavailable"),
                        "507": error_response("The server's state-memory cap (max_state_bytes) would be exceeded")
                    }
                }
            },
            "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.0", "content": {"application/json": {"schema": {"type": "object"}}}}}}}
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
                "EvalRequest": {"type": "object", "required": ["points"], "additionalProperties": false, "properties": {
                    "points": {"type": "array", "minItems": 1, "items": {"type": "array", "minItems": 1, "items": {"type": "number"}}},
                    "path": {"type": "integer", "minimum": 0, "default": 0}}},
                "EvalResponse": {"type": "object", "required": ["values", "revealed"], "properties": {
                    "values": {"type": "array", "items": {"type": "number"}}, "revealed": {"type": "integer", "minimum": 0}}},
                "Grid": {"type": "object", "required": ["counts", "lower", "upper", "values", "revealed"], "properties": {
                    "counts": {"type": "array", "items": {"type": "integer"}}, "lower": {"type": "array", "items": {"type": "number"}},
                    "upper": {"type": "array", "items": {"type": "number"}}, "values": {"type": "array", "items": {"type": "number"}},
                    "revealed": {"type": "integer"}}},
                "Release": {"type": "object", "required": ["id", "status", "dim", "lower", "upper", "statement", "epsilon", "delta", "draws", "revealed", "report"], "properties": {
                    "id": {"type": "string"}, "status": {"type": "string", "enum": ["active", "retired", "unavailable"]},
                    "dim": {"type": "integer"}, "domain": {"type": "string"},
                    "lower": {"type": "array", "items": {"type": "number"}}, "upper": {"type": "array", "items": {"type": "number"}},
                    "units": {"type": "string", "nullable": true}, "statement": {"type": "string"}, "neighbouring_relation": {"type": "string", "description": "The neighbouring relation the guarantee holds for, in words"},
                    "epsilon": {"type": "number"}, "delta": {"type": "number"}, "draws": {"type": "integer"},
                    "max_revealed": {"type": "integer"},
                    "revealed": {"type": "array", "items": {"type": "integer"}}, "report": {"type": "object"}}},
                "ReleaseSpec": crate::spec::ReleaseRequest::schema()
            }
        }
    })
}
