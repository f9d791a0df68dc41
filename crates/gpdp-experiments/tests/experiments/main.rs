//! The experiments crate's integration tests (one binary).

mod mia_pipeline;
mod realdata_fixtures;
