//! Helpers shared by the CLI's integration tests.

use std::path::PathBuf;

use assert_cmd::Command;

/// The `gpdp` binary under test: $GPDP_BIN, else the one cargo built.
pub fn bin() -> PathBuf {
    std::env::var_os("GPDP_BIN").map(PathBuf::from).unwrap_or_else(|| assert_cmd::cargo::cargo_bin("gpdp"))
}

/// A command running [`bin`].
pub fn gpdp() -> Command {
    Command::new(bin())
}
