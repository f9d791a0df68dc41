//! `gpdp ledger init|show`: the privacy-budget ledger of a data holder
//! (gpdp::ledger; docs/ledger.md).

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use gpdp::ledger::Ledger;
use gpdp::ledger::names::{escaped, quoted};
use gpdp::privacy::Conversion;

use crate::args::parse_f64;

/// The default ledger file, in the working directory.
pub const DEFAULT_LEDGER: &str = "gpdp-ledger.sqlite";

/// Ledger subcommands.
#[derive(Subcommand, Debug)]
pub enum LedgerCmd {
    /// Declare the privacy budget (ε, δ) of a dataset. Every later
    /// `gpdp release --ledger FILE --dataset NAME` is refused when the
    /// composed guarantee of the dataset's releases would exceed it.
    Init(InitArgs),
    /// List budgets and recorded releases (reserved = counted, possibly not
    /// published; committed = published, with a hash of its files).
    Show(ShowArgs),
}

/// `gpdp ledger init`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// The dataset's name (as used with `release --dataset`).
    #[arg(long)]
    pub dataset: String,
    /// The budget's ε: the largest composed ε of all the dataset's releases.
    #[arg(long, value_name = "ε", value_parser = parse_f64)]
    pub epsilon: f64,
    /// The budget's δ.
    #[arg(long, value_name = "δ", value_parser = parse_f64)]
    pub delta: f64,
    /// RDP → (ε, δ) conversion used to compare the composed guarantee with
    /// the budget: improved or paper (pld is refused: the ledger composes RDP
    /// curves).
    #[arg(long, value_name = "CONV", default_value = "improved")]
    pub conversion: gpdp::Accounting,
    /// The ledger file (SQLite; created if missing). Keep it with the
    /// private data, outside anything you publish.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_LEDGER)]
    pub ledger: PathBuf,
}

/// `gpdp ledger show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The ledger file.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_LEDGER)]
    pub ledger: PathBuf,
    /// Only this dataset.
    #[arg(long)]
    pub dataset: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs a ledger subcommand.
pub fn run(cmd: LedgerCmd) -> Result<()> {
    match cmd {
        LedgerCmd::Init(a) => {
            // The library's one refusal of pld, before the ledger file is created.
            let conversion = Conversion::try_from(a.conversion)?;
            let mut l = Ledger::open(&a.ledger)?;
            let b = l.init(&a.dataset, a.epsilon, a.delta, conversion)?;
            println!(
                "dataset {}: budget ε = {}, δ = {:e} ({} conversion) in {}",
                quoted(&b.dataset),
                b.epsilon,
                b.delta,
                b.conversion,
                escaped(&a.ledger.display().to_string())
            );
            Ok(())
        }
        LedgerCmd::Show(a) => {
            // Read-only: showing a ledger needs no write access and writes nothing.
            let l = Ledger::open_read_only(&a.ledger)?;
            let budgets = match &a.dataset {
                Some(d) => vec![l.budget(d)?],
                None => l.budgets()?,
            };
            let mut all = Vec::new();
            for b in budgets {
                let entries = l.entries(&b.dataset)?;
                // Spent: the composed ε of every recorded release (the last entry's, which
                // composes all before it); remaining: what the budget's ε leaves. Under RDP
                // composition a release of ε = remaining may still not fit: the largest that
                // does is what `release --target-epsilon remaining` calibrates to.
                let spent = gpdp::ledger::spent_epsilon(&entries);
                let remaining = (b.epsilon - spent).max(0.0);
                all.push(serde_json::json!({
                    "budget": b,
                    "spent_epsilon": spent,
                    "remaining_epsilon": remaining,
                    "releases": entries
                }));
            }
            if a.json {
                println!("{}", serde_json::to_string_pretty(&all)?);
            } else {
                for item in &all {
                    let b = &item["budget"];
                    let rel = item["releases"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                    let used = item["spent_epsilon"].as_f64().unwrap_or(0.0);
                    let remaining = item["remaining_epsilon"].as_f64().unwrap_or(0.0);
                    // Names and places are the data holder's text: printed with
                    // control characters escaped (the JSON output is exact).
                    println!(
                        "{}: budget ε = {}, δ = {} — used ε = {used:.4} by {} release(s), remaining ε = {remaining:.4}",
                        escaped(b["dataset"].as_str().unwrap_or("")),
                        b["epsilon"],
                        b["delta"],
                        rel.len()
                    );
                    if rel.iter().any(|e| e["params"]["relation"].as_str().is_some_and(|r| r.starts_with("change"))) {
                        println!(
                            "  the composed ε holds for change-one-response neighbours (covariates public): some releases treat the covariates as public"
                        );
                    }
                    for e in rel {
                        println!(
                            "  #{} {:9} ε = {:.4} (composed {:.4}) L = {} r = {} σ = {} {}{}",
                            e["id"],
                            e["status"].as_str().unwrap_or(""),
                            e["epsilon"].as_f64().unwrap_or(f64::NAN),
                            e["composed_epsilon"].as_f64().unwrap_or(f64::NAN),
                            e["params"]["draws"],
                            e["params"]["ridge"],
                            e["params"]["scale"],
                            e["reserved_at"].as_str().unwrap_or(""),
                            e["out"].as_str().map(|o| format!(" → {}", escaped(o))).unwrap_or_default()
                        );
                        if let Some(mu) = e["params"]["gaussian_mu"].as_f64() {
                            let relation = e["params"]["relation"].as_str().unwrap_or("replace-one, n public");
                            println!(
                                "      {relation}: a Gaussian mechanism of distance μ = {mu} (composed exactly with the other Gaussian entries)"
                            );
                        } else if let Some(relation) = e["params"]["relation"].as_str() {
                            println!("      {relation}");
                        }
                        // Composition uses each entry's stored Rényi curve: say whose it is.
                        let this = gpdp::ledger::GPDP_VERSION;
                        match (e["gpdp_version"].as_str(), e["migrated_by"].as_str()) {
                            (Some(v), _) if v != this => println!(
                                "      reserved by gpdp {v} (this is {this}): composed from the curve it stored"
                            ),
                            (None, Some(by)) => println!(
                                "      from a ledger written before gpdp stored curves: its curve was derived from its parameters by gpdp {by}"
                            ),
                            (None, None) => println!(
                                "      from a ledger written before gpdp stored curves: composed from the curve this gpdp derives from its parameters (the ledger is migrated when next opened for writing)"
                            ),
                            _ => {}
                        }
                    }
                }
            }
            Ok(())
        }
    }
}
