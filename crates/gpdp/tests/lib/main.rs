//! The library's integration tests: one test binary, one module per area
//! (soundness audits against exact divergences, reference vectors, samplers, misuse, the module graph). Run
//! one area with a filter, e.g. `cargo test --release --workspace --test lib -- soundness::`.
//! The PLD and joint accountants' audits use their engines, which are
//! crate-private: they are unit tests (`--lib -- privacy::pld_audit::`,
//! `--lib -- privacy::joint::soundness::`).

mod change_response;
mod data_free;
mod features;
mod misuse;
mod module_graph;
mod monotonicity;
mod plans;
mod reference_vectors;
mod sampling;
mod soundness;
mod tight_targets;
