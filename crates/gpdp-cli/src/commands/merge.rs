//! `gpdp merge`: combine the shards of a sharded study (`--shard I/N`) into
//! the outputs of the unsharded run — byte-identical tables, CSVs and
//! figures — refusing missing, duplicate or mismatched shards, and
//! corrupted shard files (checksum, trailing bytes), naming the file.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gpdp_experiments::shard::ShardFile;
use serde::de::DeserializeOwned;

use crate::output::files::write_dir_atomically;

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

/// The arguments of the running study as recorded in its shard file:
/// everything after the subcommand words, without --out, --force, --shard
/// and --max-hours (which differ between shards or do not change the results).
pub fn study_args() -> Vec<String> {
    let argv: Vec<String> = std::env::args().collect();
    let mut out = Vec::new();
    let mut i = 3; // gpdp <study> <sub>
    while i < argv.len() {
        let a = &argv[i];
        // --max-hours only bounds how long a run may take; it does not change the results.
        if a == "--out" || a == "--shard" || a == "--max-hours" {
            i += 2;
            continue;
        }
        if a == "--force" || a.starts_with("--out=") || a.starts_with("--shard=") || a.starts_with("--max-hours=") {
            i += 1;
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    out
}

/// The flags of `study` (e.g. `mia sweep`) as the shards recorded them, with
/// the merged run's `--out` (set by the caller) — the unsharded run's flags.
pub fn parse_study_args<A: clap::Args + clap::FromArgMatches>(study: &str, args: &[String]) -> Result<A> {
    #[derive(clap::Parser)]
    struct Wrapper<A: clap::Args> {
        #[command(flatten)]
        a: A,
    }
    let argv = std::iter::once(format!("gpdp {study}")).chain(args.iter().cloned());
    let w = <Wrapper<A> as clap::Parser>::try_parse_from(argv)
        .map_err(|e| anyhow::anyhow!("merge: the shards' arguments do not parse as {study}: {e}"))?;
    Ok(w.a)
}

/// The shard file in a shard's output folder.
pub const SHARD_FILE: &str = "shard.cbor";

/// Writes a shard's [`SHARD_FILE`] into `dir` (atomically, like every output folder).
pub fn write_shard<T: serde::Serialize>(dir: &Path, force: bool, file: &ShardFile<T>) -> Result<()> {
    write_dir_atomically(dir, force, |d| write_shard_into(d, file))
}

/// Writes a shard's [`SHARD_FILE`] into an output folder being filled.
pub fn write_shard_into<T: serde::Serialize>(dir: &Path, file: &ShardFile<T>) -> Result<()> {
    std::fs::write(dir.join(SHARD_FILE), gpdp_experiments::shard::to_bytes(file)?)?;
    Ok(())
}

fn bytes_of(d: &Path) -> Result<Vec<u8>> {
    let p = d.join(SHARD_FILE);
    std::fs::read(&p)
        .with_context(|| format!("{}: not a shard folder (no {SHARD_FILE}; did its task finish?)", d.display()))
}

/// The shard file of a shard folder as messages name it.
fn file_name(d: &Path) -> String {
    d.join(SHARD_FILE).display().to_string()
}

/// Every shard, checked (checksum, no trailing bytes, this study's results)
/// and named by its file.
fn read<T: DeserializeOwned>(dirs: &[PathBuf]) -> Result<Vec<(String, ShardFile<T>)>> {
    dirs.iter()
        .map(|d| {
            let name = file_name(d);
            Ok((name.clone(), gpdp_experiments::shard::from_bytes(&name, &bytes_of(d)?)?))
        })
        .collect()
}

pub fn run(a: MergeArgs) -> Result<()> {
    let inputs: Vec<(&str, &Path)> = a.shards.iter().map(|d| ("shard folder", d.as_path())).collect();
    crate::output::files::check_inputs_apart(&inputs, &[("--out", &a.out)])?;
    // The study decides the type of the results; every shard must be of it.
    let mut study = String::new();
    for d in &a.shards {
        let s = gpdp_experiments::shard::study_of(&file_name(d), &bytes_of(d)?)?;
        if study.is_empty() {
            study = s;
        } else if s != study {
            bail!("{}: a shard of {s:?}, but {} is a shard of {study:?}", d.display(), a.shards[0].display());
        }
    }
    let first = a.shards[0].join(SHARD_FILE);
    match study.as_str() {
        "mia sweep" => super::mia::merge_sweep(read(&a.shards)?, &a.out, a.force),
        "excursion 1d" => super::excursion::merge_1d(read(&a.shards)?, &a.out, a.force),
        "excursion 2d" => super::excursion2d::merge_2d(read(&a.shards)?, &a.out, a.force),
        other => {
            bail!("{}: unknown study {other:?} (shards of mia sweep, excursion 1d or excursion 2d)", first.display())
        }
    }
}
