//! `gpdp account`: the (ε, δ) guarantee of a release, one or many.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use gpdp::{Conversion, Domain, Draws, Kernel, KernelKind, PrivacyReport, ReleaseParams, SensitivityChoice};
use rayon::prelude::*;

use crate::args::{ReleaseArgs, parse_f64};
use crate::output::files::write_atomically;
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
    /// sensitivity, rkhs_norm, conversion). Missing columns take the flag
    /// values. Output: the input columns plus every field of the privacy
    /// report (a report column whose name is already an input column is
    /// written as report_<name>).
    #[arg(long, value_name = "CSV")]
    pub batch: Option<PathBuf>,

    /// With --batch: write the results here instead of standard output.
    #[arg(long, value_name = "CSV", requires = "batch")]
    pub out: Option<PathBuf>,
}

pub fn run(a: AccountArgs) -> Result<()> {
    if let Some(path) = &a.batch {
        return run_batch(&a, path);
    }
    let n = a.n.context("missing --n (number of private records)")?;
    let res = a.release.resolve(n, true, true)?;
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

enum Mode {
    Delta(f64),
    Epsilon(f64),
}

struct Row {
    params: ReleaseParams,
    draws: Draws,
    conversion: Conversion,
    mode: Mode,
}

fn run_batch(a: &AccountArgs, path: &PathBuf) -> Result<()> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_path(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let headers: Vec<String> = rdr.headers()?.iter().map(|h| h.to_string()).collect();
    let col: HashMap<&str, usize> = headers.iter().enumerate().map(|(i, h)| (h.as_str(), i)).collect();
    if col.len() != headers.len() {
        bail!("{}: duplicate column names in the header", path.display());
    }
    if col.contains_key("delta") && col.contains_key("epsilon") {
        bail!("{}: give a delta column or an epsilon column, not both", path.display());
    }
    let name = path.display().to_string();
    let mut records = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let rec = rec.with_context(|| format!("{name}: cannot read record {}", i + 1))?;
        if rec.len() != headers.len() {
            bail!("{name} row {} (line {}): {} fields, but the header has {}", i + 1, i + 2, rec.len(), headers.len());
        }
        records.push(rec);
    }
    if records.is_empty() {
        bail!("{name}: no parameter rows");
    }

    // Parse every row (domains cached: sweeps repeat them).
    let mut domains: HashMap<String, Domain> = HashMap::new();
    let mut rows = Vec::with_capacity(records.len());
    for (i, rec) in records.iter().enumerate() {
        let row =
            parse_row(a, rec, &col, &mut domains).with_context(|| format!("{name} row {} (line {})", i + 1, i + 2))?;
        rows.push(row);
    }

    let reports: Vec<Result<PrivacyReport>> = rows
        .par_iter()
        .map(|r| {
            let rel = r.params.check()?;
            Ok(match r.mode {
                Mode::Delta(d) => rel.epsilon(r.draws, d, r.conversion)?,
                Mode::Epsilon(e) => rel.delta(r.draws, e, r.conversion)?,
            })
        })
        .collect();

    let reports: Vec<PrivacyReport> = reports
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.with_context(|| format!("{name} row {} (line {})", i + 1, i + 2)))
        .collect::<Result<_>>()?;
    // Every row is one release, so every report has the same fields.
    let mut out_headers = headers.clone();
    for (c, _) in reports[0].flat_fields() {
        out_headers.push(if col.contains_key(c.as_str()) { format!("report_{c}") } else { c });
    }
    let mut buf = Vec::with_capacity(rows.len() * 512);
    {
        let mut w = csv::Writer::from_writer(&mut buf);
        w.write_record(&out_headers)?;
        for (rec, rep) in records.iter().zip(&reports) {
            let mut fields: Vec<String> = rec.iter().map(|s| s.to_string()).collect();
            fields.extend(rep.flat_fields().iter().map(|(_, v)| cell(v)));
            w.write_record(&fields)?;
        }
        w.flush()?;
    }
    match &a.out {
        Some(p) => write_atomically(p, &buf)?,
        None => std::io::stdout().lock().write_all(&buf)?,
    }
    Ok(())
}

fn parse_row(
    a: &AccountArgs,
    rec: &csv::StringRecord,
    col: &HashMap<&str, usize>,
    domains: &mut HashMap<String, Domain>,
) -> Result<Row> {
    let get = |k: &str| -> Option<&str> { col.get(k).map(|&i| &rec[i]).filter(|s| !s.is_empty()) };
    let num = |k: &str, flag: Option<f64>| -> Result<Option<f64>> {
        match get(k) {
            Some(s) => Ok(Some(parse_f64(s).map_err(|e| anyhow::anyhow!("column {k}: {e}"))?)),
            None => Ok(flag),
        }
    };
    let int = |k: &str, flag: Option<u64>| -> Result<Option<u64>> {
        match get(k) {
            Some(s) => Ok(Some(
                s.parse::<u64>().map_err(|_| anyhow::anyhow!("column {k}: '{s}' is not a non-negative integer"))?,
            )),
            None => Ok(flag),
        }
    };
    let f = &a.release;
    let kind: KernelKind = match get("kernel") {
        Some(s) => s.parse()?,
        None => f.kernel.context("no kernel column and no --kernel")?,
    };
    let lengthscale = num("lengthscale", f.lengthscale)?;
    let lengthscale = match (lengthscale, kind.has_lengthscale()) {
        (Some(l), _) => l,
        (None, false) => 1.0,
        (None, true) => bail!("no lengthscale column and no --lengthscale for the {kind} kernel"),
    };
    let domain = match get("domain") {
        Some(s) => match domains.get(s) {
            Some(d) => d.clone(),
            None => {
                let d: Domain = s.parse()?;
                domains.insert(s.to_string(), d.clone());
                d
            }
        },
        None => f.domain.clone().context("no domain column and no --domain")?,
    };
    let n = int("n", a.n.map(|v| v as u64))?.context("no n column and no --n")? as usize;
    let ridge = num("ridge", f.ridge)?.context("no ridge column and no --ridge")?;
    let scale = num("scale", f.scale)?.context("no scale column and no --scale")?;
    let mut params = ReleaseParams::new(Kernel::new(kind, lengthscale)?, domain, n, ridge, scale);
    params.gp_noise = num("gp_noise", f.gp_noise)?.unwrap_or(0.0);
    params.response_bound = num("response_bound", f.response_bound)?.unwrap_or(1.0);
    params.sensitivity = match get("sensitivity") {
        Some(s) => s.parse()?,
        None => f.sensitivity.unwrap_or_default(),
    };
    params.rkhs_norm = num("rkhs_norm", f.rkhs_norm)?;
    if params.rkhs_norm.is_some() && params.sensitivity == SensitivityChoice::Auto {
        bail!("an RKHS norm is only used with sensitivity rkhs (Lemma B.8 must be chosen explicitly)");
    }
    let draws = Draws::new(int("draws", f.draws.map(Draws::get))?.unwrap_or(1))?;
    let conversion = match get("conversion") {
        Some(s) => s.parse()?,
        None => f.conversion.unwrap_or_default(),
    };
    let mode = match (num("delta", a.delta)?, num("epsilon", a.epsilon)?) {
        (Some(d), _) if col.contains_key("delta") || a.epsilon.is_none() => Mode::Delta(d),
        (_, Some(e)) => Mode::Epsilon(e),
        (Some(d), None) => Mode::Delta(d),
        (None, None) => bail!("no delta (or epsilon) column and no --delta (or --epsilon)"),
    };
    Ok(Row { params, draws, conversion, mode })
}
