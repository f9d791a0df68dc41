//! `gpdp merge`: combine the shards of a sharded study (`--shard I/N`) into
//! the outputs of the unsharded run — byte-identical tables, CSVs and
//! figures — refusing missing, duplicate or mismatched shards, and
//! corrupted shard files (checksum, trailing bytes), naming the file.
//!
//! The merge itself is the library's (`gpdp_experiments::study::merge_files`,
//! dispatching on the `Study` each shard records); this module reads the
//! files and hands the typed result to the study's writer. The studies do
//! not import this module (they write their shard files themselves), so
//! there is no import cycle among the commands.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use gpdp_experiments::shard::SHARD_FILE;
use gpdp_experiments::study::{MergedStudy, merge_files};

#[derive(Args, Debug)]
#[command(
    after_help = "Example (a 4-task Slurm array wrote shards/shard-0 … shards/shard-3):\n  gpdp merge --out results/mia-sweep shards/shard-*\n\nSee scripts/slurm/README.md."
)]
pub struct MergeArgs {
    /// The shards' output folders (each with its shard.cbor), in any order.
    #[arg(required = true, value_name = "SHARD_DIR")]
    pub shards: Vec<PathBuf>,
    /// Where to write the merged outputs (as the unsharded run's --out).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace a non-empty --out directory.
    #[arg(long)]
    pub force: bool,
}

/// The shard file of a shard folder as messages name it, and its bytes.
fn read(d: &Path) -> Result<(String, Vec<u8>)> {
    let p = d.join(SHARD_FILE);
    let bytes = std::fs::read(&p)
        .with_context(|| format!("{}: not a shard folder (no {SHARD_FILE}; did its task finish?)", d.display()))?;
    Ok((p.display().to_string(), bytes))
}

/// Reads the shard files, merges them in the library (which checks every
/// file and that they are exactly the shards of one run of one study with
/// equal settings) and hands the merged results to the study's writer.
pub fn run(a: MergeArgs) -> Result<()> {
    let inputs: Vec<(&str, &Path)> = a.shards.iter().map(|d| ("shard folder", d.as_path())).collect();
    crate::output::files::check_inputs_apart(&inputs, &[("--out", &a.out)])?;
    let files = a.shards.iter().map(|d| read(d)).collect::<Result<Vec<_>>>()?;
    match merge_files(&files)? {
        MergedStudy::MiaSweep { study, rows } => super::mia::write_merged(&study, &rows, &a.out, a.force),
        MergedStudy::Excursion1d { study, results } => {
            super::excursion::write_merged(&study, &results, &a.out, a.force)
        }
        MergedStudy::Excursion2d { study, results } => {
            super::excursion2d::write_merged(&study, &results, &a.out, a.force)
        }
        MergedStudy::Thompson { study, results } => {
            super::thompson_study::write_merged(&study, &results, &a.out, a.force)
        }
    }
}
