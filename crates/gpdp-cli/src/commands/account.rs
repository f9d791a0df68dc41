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

    /// The neighbouring relation the guarantee is for: replace-one (a whole
    /// record — covariates and response — replaced; n public; the paper's)
    /// or change-response (the covariates, e.g. sensor locations, are
    /// public and fixed; one response changes by at most 2·M_Y: each
    /// reading is protected). change-response is a Gaussian mechanism with
    /// an exact (ε, δ) (docs/proofs/change-response.md).
    #[arg(long, value_name = "RELATION", default_value = "replace-one", value_parser = parse_relation)]
    pub relation: gpdp::NeighbouringRelation,

    /// With --relation change-response: the public covariates (a CSV with
    /// columns x or x1..xd, or those named by --x), one row per record, all
    /// inside --domain. Without it the bound for any covariates is used.
    #[arg(long, value_name = "CSV")]
    pub covariates: Option<PathBuf>,

    /// With --covariates: the covariate columns, comma-separated (e.g.
    /// easting,northing).
    #[arg(long, value_name = "COLS", value_delimiter = ',', requires = "covariates")]
    pub x: Option<Vec<String>>,

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

pub fn parse_relation(s: &str) -> std::result::Result<gpdp::NeighbouringRelation, String> {
    s.parse().map_err(|e: gpdp::Error| e.to_string())
}

pub fn run(a: AccountArgs) -> Result<()> {
    let change_response = a.relation == gpdp::NeighbouringRelation::ChangeResponse;
    if a.covariates.is_some() && !change_response {
        bail!(
            "--covariates is used only with --relation change-response (under replace-one the covariates are private)"
        );
    }
    if let Some(path) = &a.batch {
        if change_response {
            bail!("--batch accounts replace-one releases; give --relation change-response releases one at a time");
        }
        return run_batch(&a, path);
    }
    if change_response {
        return run_change_response(&a);
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
    if gpdp::privacy::data_free::is_data_free(&res.params) {
        // σ = 0 with η > 0: data-free noise, the exact Gaussian statement.
        a.release.refuse_unused_accounting("σ = 0 makes the noise data-free")?;
        let report = gpdp::privacy::data_free::account(&res.params, res.draws, a.delta, a.epsilon)?;
        return print_gaussian(&report, a.json);
    }
    let release = res.params.check()?;
    let report = match (a.delta, a.epsilon) {
        (Some(d), None) => release.epsilon(res.draws, d, res.conversion)?,
        (None, Some(e)) => release.delta(res.draws, e, res.conversion)?,
        _ => bail!("give exactly one of --delta δ (to get ε) or --epsilon ε (to get δ)"),
    };
    print_report(&report, a.json)
}

/// The public covariates of `--covariates FILE` (columns `--x`, or x / x1..xd).
pub fn read_covariates(path: Option<&Path>, x: Option<Vec<String>>) -> Result<Option<gpdp::Points>> {
    let Some(path) = path else { return Ok(None) };
    let bytes = gpdp::io::read_bounded(path, gpdp::io::MAX_INPUT_BYTES)?;
    let cols = gpdp::io::Columns { x, y: None };
    let t = gpdp::io::read_table_columns(&format!("--covariates {}", path.display()), &bytes, false, &cols)?;
    Ok(Some(t.x))
}

/// `gpdp account --relation change-response`: the Gaussian mechanism's
/// exact (ε, δ), with the public covariates or the bound for any.
fn run_change_response(a: &AccountArgs) -> Result<()> {
    let covariates = read_covariates(a.covariates.as_deref(), a.x.clone())?;
    let n = match (a.n, &covariates) {
        (Some(n), _) => n,
        (None, Some(x)) => x.len(),
        (None, None) => bail!("missing --n (or --covariates, whose row count is n)"),
    };
    if a.delta.is_none() && a.epsilon.is_none() {
        crate::args::require(vec!["--delta δ (to get ε) or --epsilon ε (to get δ)"])?;
    }
    let res = a.release.resolve(n, None)?;
    a.release.refuse_unused_accounting("under change-one-response the release is a Gaussian mechanism")?;
    let report =
        gpdp::privacy::change_response::account(&res.params, res.draws, covariates.as_ref(), a.delta, a.epsilon)?;
    print_gaussian(&report, a.json)
}

/// A Gaussian-mechanism statement (change-response or data-free noise): JSON or text.
fn print_gaussian(report: &gpdp::privacy::change_response::ChangeResponseReport, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", report.statement);
        println!("  neighbouring relation: {}", report.neighbouring_relation);
        println!("  accounting: {}", report.accounting);
        println!("  Gaussian distance μ = {} ({})", report.mu, report.mu_source);
        if let Some(i) = report.worst_covariate {
            println!("  largest for the reading at covariate row {i}");
        }
        println!(
            "  {} kernel, ℓ = {}, domain {}, n = {}, r = {}, σ = {}, η = {}, M_Y = {}, L = {}",
            report.release.kernel,
            report.release.lengthscale,
            report.release.domain,
            report.release.n,
            report.release.ridge,
            report.release.scale,
            report.release.gp_noise,
            report.release.response_bound,
            report.release.draws
        );
    }
    Ok(())
}

pub fn print_report(report: &PrivacyReport, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(&report.to_value())?);
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
