//! The CLI's integration tests: one test binary (one link of the `gpdp`
//! library and its dependencies), one module per area. Run one area with a
//! filter, e.g. `cargo test --release --workspace --test cli -- cli_ledger::`.

mod cli_account;
mod cli_excursion1d;
mod cli_excursion2d;
mod cli_gis;
mod cli_ledger;
mod cli_maps;
mod cli_mia;
mod cli_plan;
mod cli_posterior;
mod cli_published;
mod cli_realdata;
mod cli_release;
mod cli_reliability;
mod cli_serve;
mod cli_shard;
mod cli_thompson;
mod cli_thompson_study;
mod common;
/// The server tests' release spec and spec examples, shared by path.
#[path = "../../../gpdp-server/tests/server/fixture.rs"]
mod fixture;
mod readme_blocks;
mod repository;
mod spec_coverage;
