//! The server's integration tests: one test binary, one module per area.
//! Each test starts the service in this process ([`gpdp_server::start`]) on
//! a free loopback port and talks HTTP to it with a client crate (ureq).
//! Run one area with a filter, e.g.
//! `cargo test --release --workspace --test server -- limits::`.
//! The tests of the `gpdp serve` command itself (its process killed and
//! restarted, the browser viewer, schemathesis) are in the CLI's tests
//! (`crates/gpdp-cli/tests/cli/cli_serve.rs`).

mod api;
mod common;
mod fixture;
mod lifecycle;
mod limits;
mod paths;
mod spec_coverage;
