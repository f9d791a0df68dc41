//! `gpdp account`: the (ε, δ) guarantee of a release, one or many.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gpdp::PrivacyReport;
use gpdp::io::{BatchDefaults, Question, read_batch};
use rayon::prelude::*;

use crate::args::{ReleaseArgs, parse_f64};
use crate::output::files::{check_out_file, write_atomically};
use crate::output::report::{cell, report_text};

/// Arguments of `gpdp account`.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
#[command(
    after_help = "Example (the paper's Figure 3 setting):\n  gpdp account --kernel exponential --lengthscale 1 --domain interval:0,1 \\\n    --n 10 --ridge 1 --scale 5 --draws 3 --delta 0.05"
)]
pub struct AccountArgs {
    /// Number of private records n ≥ 1 (public).
    #[arg(long, value_name = "N")]
    pub n: Option<usize>,

    #[command(flatten)]
    pub release: ReleaseArgs,

    /// Target δ ∈ (0, 1): report the smallest ε with (ε, δ)-DP.
    #[arg(long, value_name = "δ", value_parser = parse_f64, conflicts_with = "epsilon")]
    pub delta: Option<f64>,

    /// Target ε ≥ 0: report the smallest δ with (ε, δ)-DP instead.
    #[arg(long, value_name = "ε", value_parser = parse_f64)]
    pub epsilon: Option<f64>,

    /// Print one JSON object instead of the text report.
    #[arg(long)]
    pub json: bool,

    /// Evaluate every row of a CSV of parameter sets (columns named like the
    /// long flags with `_` for `-`: kernel, lengthscale, domain, n, ridge,
    /// scale, gp_noise, draws, delta or epsilon, response_bound,
    /// sensitivity, rkhs_norm, conversion, bound; any other column is refused unless
    /// named in --keep). Missing columns and empty cells take the flag
    /// values; a delta column asks for ε, an epsilon column for δ (not both,
    /// and not against the opposite flag). Output: the input columns plus
    /// every field of the privacy report (a report field named like an
    /// input column is written as report_<name>).
    #[arg(long, value_name = "CSV")]
    pub batch: Option<PathBuf>,

    /// With --batch: extra columns (comma-separated) copied to the output
    /// unchanged, e.g. a label.
    #[arg(long, value_name = "COLS", value_delimiter = ',', requires = "batch")]
    pub keep: Vec<String>,

    /// With --batch: write the results here instead of standard output
    /// (refused if the file exists, unless --force).
    #[arg(long, value_name = "CSV", requires = "batch")]
    pub out: Option<PathBuf>,

    /// Replace an existing --out file.
    #[arg(long, requires = "out")]
    pub force: bool,
}

pub fn run(a: AccountArgs) -> Result<()> {
    if let Some(path) = &a.batch {
        return run_batch(&a, path);
    }
    let mut missing = Vec::new();
    if a.n.is_none() {
        missing.push("--n (number of private records)");
    }
    missing.extend(a.release.missing(true, true));
    if a.delta.is_none() && a.epsilon.is_none() {
        missing.push("--delta δ (to get ε) or --epsilon ε (to get δ)");
    }
    crate::args::require_with_example(missing, Some(crate::args::ACCOUNT_EXAMPLE))?;
    let n = a.n.context("missing --n")?;
    let res = a.release.resolve(n, None)?;
    let release = res.params.check()?;
    let report = match (a.delta, a.epsilon) {
        (Some(d), None) => release.epsilon(res.draws, d, res.conversion)?,
        (None, Some(e)) => release.delta(res.draws, e, res.conversion)?,
        _ => bail!("give exactly one of --delta δ (to get ε) or --epsilon ε (to get δ)"),
    };
    print_report(&report, a.json)
}

pub fn print_report(report: &PrivacyReport, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        println!("{}", report_text(report));
    }
    Ok(())
}

fn run_batch(a: &AccountArgs, path: &Path) -> Result<()> {
    if let Some(out) = &a.out {
        crate::output::files::check_inputs_apart(&[("--batch", path)], &[("--out", out)])?;
        check_out_file("--out", out, a.force)?;
    }
    let name = path.display().to_string();
    let bytes = gpdp::io::read_bounded(path, gpdp::io::MAX_INPUT_BYTES)?;
    let f = &a.release;
    let defaults = BatchDefaults {
        kernel: f.kernel,
        lengthscale: f.lengthscale,
        domain: f.domain.clone(),
        n: a.n,
        ridge: f.ridge,
        scale: f.scale,
        gp_noise: f.gp_noise,
        draws: f.draws,
        delta: a.delta,
        epsilon: a.epsilon,
        response_bound: f.response_bound,
        sensitivity: f.sensitivity,
        rkhs_norm: f.rkhs_norm,
        conversion: f.conversion,
        bound: f.bound,
    };
    let batch = read_batch(&name, &bytes, &defaults, &a.keep)?;
    gpdp::check_memory(
        "this batch",
        &[gpdp::Need::items("the reports and the output table (≈ 3 KiB per row)", batch.rows.len() as f64, 3072)],
        "split the batch into several files",
    )?;
    let reports: Vec<PrivacyReport> = batch
        .rows
        .par_iter()
        .enumerate()
        .map(|(i, r)| -> Result<PrivacyReport> {
            let account = || -> gpdp::Result<PrivacyReport> {
                let rel = r.params.check()?;
                match r.question {
                    Question::EpsilonFor(d) => rel.epsilon(r.draws, d, r.conversion),
                    Question::DeltaFor(e) => rel.delta(r.draws, e, r.conversion),
                }
            };
            account().map_err(|e| anyhow::anyhow!("{name} row {} (line {}): {e}", i + 1, r.line))
        })
        .collect::<Result<_>>()?;
    // Every row is one release, so every report has the same fields.
    let mut out_headers = batch.headers.clone();
    for (c, _) in reports[0].flat_fields() {
        out_headers.push(if batch.headers.contains(&c) { format!("report_{c}") } else { c });
    }
    let mut buf = Vec::with_capacity(reports.len() * 512);
    {
        let mut w = csv::Writer::from_writer(&mut buf);
        w.write_record(&out_headers)?;
        for (rec, rep) in batch.records.iter().zip(&reports) {
            let mut fields = rec.clone();
            fields.extend(rep.flat_fields().iter().map(|(_, v)| cell(v)));
            w.write_record(&fields)?;
        }
        w.flush()?;
    }
    match &a.out {
        Some(p) => write_atomically(p, &buf, a.force)?,
        None => std::io::stdout().lock().write_all(&buf)?,
    }
    Ok(())
}
