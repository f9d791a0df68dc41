//! The library's integration tests: one test binary, one module per area
//! (soundness audits against exact divergences, the PLD and joint
//! accountants, reference vectors, samplers, misuse, the module graph). Run
//! one area with a filter, e.g. `cargo test --release --workspace --test lib -- soundness::`.

mod joint_soundness;
mod misuse;
mod module_graph;
mod monotonicity;
mod pld;
mod reference_vectors;
mod sampling;
mod soundness;
mod tight_targets;
