//! `gpdp calibrate`: solve for r, σ, η or L meeting a target (ε, δ).

use anyhow::{Result, bail};
use clap::Args;
use gpdp::{Solve, Target, calibrate};
use serde_json::json;

use crate::args::{ReleaseArgs, parse_f64};
use crate::output::report::report_text;

/// Arguments of `gpdp calibrate`.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
#[command(
    after_help = "Example: the smallest ridge giving ε ≤ 10 at δ = 1e-5 for one draw:\n  gpdp calibrate --solve ridge --target-epsilon 10 --delta 1e-5 \\\n    --kernel exponential --lengthscale 0.5 --domain box:0,1,0,1 --n 400 --scale 1"
)]
pub struct CalibrateArgs {
    /// What to solve for: ridge (smallest r), scale (smallest σ), gp-noise
    /// (smallest η) or draws (largest L).
    #[arg(long, value_name = "PARAM")]
    pub solve: Solve,

    /// Target ε > 0.
    #[arg(long = "target-epsilon", value_name = "ε", value_parser = parse_f64)]
    pub target_epsilon: f64,

    /// Target δ ∈ (0, 1).
    #[arg(long, value_name = "δ", value_parser = parse_f64)]
    pub delta: f64,

    /// Number of private records n ≥ 1 (public).
    #[arg(long, value_name = "N")]
    pub n: usize,

    #[command(flatten)]
    pub release: ReleaseArgs,

    /// Print {"solve", "value", "report", …} as JSON.
    #[arg(long)]
    pub json: bool,

    /// The neighbouring relation: replace-one (default) or change-response
    /// (covariates public; calibrates the exact Gaussian-mechanism ε; see
    /// `gpdp account --help`).
    #[arg(long, value_name = "RELATION", default_value = "replace-one", value_parser = crate::commands::account::parse_relation)]
    pub relation: gpdp::NeighbouringRelation,

    /// With --relation change-response: the public covariates (CSV, n rows).
    #[arg(long, value_name = "CSV")]
    pub covariates: Option<std::path::PathBuf>,

    /// With --covariates: the covariate columns, comma-separated.
    #[arg(long, value_name = "COLS", value_delimiter = ',', requires = "covariates")]
    pub x: Option<Vec<String>>,
}

pub fn run(a: CalibrateArgs) -> Result<()> {
    let change_response = a.relation == gpdp::NeighbouringRelation::ChangeResponse;
    if a.covariates.is_some() && !change_response {
        bail!(
            "--covariates is used only with --relation change-response (under replace-one the covariates are private)"
        );
    }
    let res = a.release.resolve(a.n, Some(a.solve))?;
    let data_free = !change_response && gpdp::privacy::data_free::is_data_free(&res.params);
    if change_response || data_free {
        a.release.refuse_unused_accounting(if data_free {
            "σ = 0 makes the noise data-free"
        } else {
            "under change-one-response the release is a Gaussian mechanism"
        })?;
        if a.solve == Solve::Draws && a.release.draws.is_some() {
            bail!("--draws is what --solve draws computes; leave it out");
        }
        let (value, report) = if data_free {
            gpdp::privacy::data_free::calibrate(&res.params, res.draws, a.solve, a.target_epsilon, a.delta)?
        } else {
            let covariates = crate::commands::account::read_covariates(a.covariates.as_deref(), a.x.clone())?;
            gpdp::privacy::change_response::calibrate(
                &res.params,
                res.draws,
                covariates.as_ref(),
                a.solve,
                a.target_epsilon,
                a.delta,
            )?
        };
        if a.json {
            let out = json!({"solve": a.solve.name(), "value": value, "target_epsilon": a.target_epsilon, "neighbouring_relation": report.neighbouring_relation, "report": report});
            println!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            println!(
                "{} with ε ≤ {} at δ = {} under {}: {value}",
                what(a.solve),
                a.target_epsilon,
                a.delta,
                report.neighbouring_relation
            );
            println!("{}", report.statement);
            println!("  Gaussian distance μ = {} ({})", report.mu, report.mu_source);
        }
        return Ok(());
    }
    if a.solve == Solve::Draws && a.release.draws.is_some() {
        bail!("--draws is what --solve draws computes; leave it out");
    }
    let target = Target { epsilon: a.target_epsilon, delta: a.delta, conversion: res.conversion };
    let c = calibrate(&res.params, res.draws, a.solve, target)?;
    if a.json {
        let out = json!({
            "solve": c.solve.name(),
            "value": c.value,
            "report": c.report.to_value(),
            "neighbouring_relation": c.report.neighbouring_relation(),
            "target_epsilon": a.target_epsilon,
            "permissive_value": c.permissive_value,
            "permissive_epsilon": if c.permissive_epsilon.is_finite() { json!(c.permissive_epsilon) } else { json!(null) },
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let what = what(a.solve);
        println!("{what} with ε ≤ {} at δ = {}: {}", a.target_epsilon, a.delta, c.value);
        if c.permissive_epsilon.is_finite() {
            println!(
                "  (at {} the guarantee would be ε = {:.6} > {})",
                c.permissive_value, c.permissive_epsilon, a.target_epsilon
            );
        }
        println!();
        println!("{}", report_text(&c.report));
    }
    Ok(())
}

fn what(solve: Solve) -> &'static str {
    match solve {
        Solve::Ridge => "smallest ridge r",
        Solve::Scale => "smallest scale σ",
        Solve::GpNoise => "smallest GP noise η",
        Solve::Draws => "largest number of draws L",
    }
}
