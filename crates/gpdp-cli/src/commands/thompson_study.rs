//! `gpdp thompson study`: the regret study of private Thompson sampling
//! (issue 27, item 3). Being written.

use anyhow::{Result, bail};
use clap::Args;

/// Arguments of `gpdp thompson study`.
#[derive(Args, Debug, Clone)]
pub struct StudyArgs {}

/// Runs the study.
pub fn run(_a: StudyArgs) -> Result<()> {
    bail!("gpdp thompson study is not built yet")
}
