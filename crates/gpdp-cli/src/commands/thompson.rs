//! `gpdp thompson`: a private Thompson-sampling loop (the library's
//! [`gpdp::thompson`]); `gpdp thompson study` is the regret study
//! ([`super::thompson_study`]).
//!
//! The command parses flags and files, builds the loop from public flags,
//! runs the objective command on each proposal and writes the published
//! folder (the chosen points and the composed guarantee) atomically at the
//! end. The observed values are private: they go to the loop only, and to
//! the operator log with `--log`.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use gpdp::thompson::{Goal, ThompsonConfig, ThompsonSampler};
use gpdp::{Dataset, Grid, Points};
use serde_json::json;

use crate::args::{ReleaseArgs, parse_f64, require_with_example};
use crate::output::files::{
    check_inputs_apart, check_log_outside, check_out_dir, write_atomically, write_dir_atomically,
};

/// Arguments of `gpdp thompson`: the loop, or the `study` subcommand.
#[derive(Args, Debug, Clone)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ThompsonArgs {
    #[command(subcommand)]
    pub sub: Option<ThompsonSub>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// The subcommands of `gpdp thompson`.
#[derive(Subcommand, Debug, Clone)]
pub enum ThompsonSub {
    /// The regret study: private Thompson sampling against non-private
    /// Thompson sampling, GP-UCB and random search on standard test functions.
    Study(super::thompson_study::StudyArgs),
}

/// A complete `gpdp thompson` command, shown with its missing flags.
pub const THOMPSON_EXAMPLE: &str = "gpdp thompson --data examples/thompson/trials.csv --x dose --y response --response-range 0,1 --kernel matern52 --lengthscale 0.2 --domain interval:0,1 --scale 0.3 --target-epsilon 2 --delta 1e-5 --grid 101 --rounds 10 --objective 'sh examples/thompson/objective.sh' --out tsout/";

/// Arguments of the loop itself.
#[derive(Args, Debug, Clone)]
#[command(
    allow_negative_numbers = true,
    mut_arg("scale", |a| a.help("Kernel scale σ > 0 (prior GP(0, σ²k)), in the responses' units; finite for a loop. Larger σ = more private (mean term only).")),
    mut_arg("draws", |a| a.hide(true)),
    mut_arg("conversion", |a| a.help("RDP → (ε, δ) conversion of the loop's composed Rényi curves: improved (default) or paper (pld is refused: a loop composes Rényi curves)"))
)]
pub struct RunArgs {
    /// Private initial records CSV: covariate columns (x, or x1..xd, or
    /// those named by --x) and the response (y, or --y).
    #[arg(long, value_name = "CSV")]
    pub data: Option<PathBuf>,

    #[command(flatten)]
    pub model: ReleaseArgs,

    /// Target δ ∈ (0, 1) of the loop's guarantee.
    #[arg(long, value_name = "δ", value_parser = parse_f64)]
    pub delta: Option<f64>,

    /// Calibrate the ridge r so that the whole planned loop (--rounds rounds
    /// of --batch paths, every proposal told) has ε ≤ this at δ, instead of
    /// giving --ridge. It is also the loop's budget.
    #[arg(long = "target-epsilon", value_name = "ε", value_parser = parse_f64, conflicts_with = "ridge")]
    pub target_epsilon: Option<f64>,

    /// The loop's budget ε at δ: a round whose composed guarantee would
    /// exceed it is refused before anything is drawn, and the loop stops.
    /// Default: --target-epsilon, else no budget.
    #[arg(long = "budget-epsilon", value_name = "ε", value_parser = parse_f64)]
    pub budget_epsilon: Option<f64>,

    /// Candidate points CSV (public; covariate columns as in --data): each
    /// round chooses among them.
    #[arg(long, value_name = "CSV", conflicts_with = "grid")]
    pub candidates: Option<PathBuf>,

    /// Candidates on a regular grid over the interval/box domain, end points
    /// included: N (every axis) or N1xN2.
    #[arg(long, value_name = "N[xM]")]
    pub grid: Option<String>,

    /// Rounds T to run (fewer if the budget stops the loop first).
    #[arg(long, value_name = "T")]
    pub rounds: Option<usize>,

    /// Proposals q per round (q paths released per round).
    #[arg(long, value_name = "q", default_value_t = 1)]
    pub batch: usize,

    /// Look for the minimum instead of the maximum.
    #[arg(long)]
    pub minimise: bool,

    /// The experiment, run once per proposal: a shell command that receives
    /// the point's coordinates as its arguments ($1, $2, …) and prints the
    /// observed value (a number) on its first line of standard output. Its
    /// value is private: it joins the loop's data.
    #[arg(long, value_name = "CMD")]
    pub objective: Option<String>,

    /// Covariate columns of --data and --candidates by name, in order.
    #[arg(long = "x", value_name = "COLS", value_delimiter = ',')]
    pub x_columns: Option<Vec<String>>,

    /// Response column of --data by name (default: y).
    #[arg(long = "y", value_name = "COL")]
    pub y_column: Option<String>,

    /// The responses' plausible range in data units, LO,HI (public):
    /// responses and observed values are clipped to it and centred on its
    /// middle. Replaces --response-bound.
    #[arg(
        long = "response-range",
        value_name = "LO,HI",
        conflicts_with = "response_bound",
        allow_hyphen_values = true
    )]
    pub response_range: Option<gpdp::model::units::ResponseRange>,

    /// The responses' unit, a label for the report.
    #[arg(long, value_name = "UNIT", value_parser = crate::args::parse_units)]
    pub units: Option<String>,

    /// Output directory: the published loop — choices.csv (round, chosen
    /// point, records used, composed ε) and report.json.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Replace an existing non-empty output directory (and --log).
    #[arg(long)]
    pub force: bool,

    /// Operator log (JSON): the observed values and timings. PRIVATE: keep it
    /// out of anything you publish (refused inside --out).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Reproducible rounds for experiments and tests: NOT a private loop
    /// (report.json says "private": false).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Print report.json to standard output at the end.
    #[arg(long)]
    pub json: bool,

    /// Record every round in this privacy-budget ledger (see `gpdp ledger
    /// init`) under --dataset: each round is reserved before anything is
    /// drawn and refused — stopping the loop — when the dataset's composed
    /// guarantee (its earlier releases and the loop's rounds, by their Rényi
    /// curves) would exceed its budget; committed once its choices are out.
    #[arg(long, value_name = "FILE", requires = "dataset")]
    pub ledger: Option<PathBuf>,

    /// The dataset's name in the ledger.
    #[arg(long, value_name = "NAME", requires = "ledger")]
    pub dataset: Option<String>,
}

/// Runs `gpdp thompson`.
pub fn run(a: ThompsonArgs) -> Result<()> {
    match a.sub {
        Some(ThompsonSub::Study(s)) => super::thompson_study::run(s),
        None => run_loop(a.run),
    }
}

impl RunArgs {
    /// Refuses with every required flag that is absent, at once.
    fn check_required(&self) -> Result<()> {
        let mut missing = Vec::new();
        if self.data.is_none() {
            missing.push("--data CSV");
        }
        for m in self.model.missing(self.target_epsilon.is_none(), true) {
            missing.push(if m == "--ridge r" { "--ridge r (or --target-epsilon ε to calibrate it)" } else { m });
        }
        if self.delta.is_none() {
            missing.push("--delta δ");
        }
        if self.response_range.is_none() && self.model.response_bound.is_none() {
            missing.push("--response-range LO,HI or --response-bound M_Y");
        }
        if self.candidates.is_none() && self.grid.is_none() {
            missing.push("--candidates CSV or --grid N[xM]");
        }
        if self.rounds.is_none() {
            missing.push("--rounds T");
        }
        if self.objective.is_none() {
            missing.push("--objective CMD");
        }
        if self.out.is_none() {
            missing.push("--out DIR");
        }
        require_with_example(missing, Some(THOMPSON_EXAMPLE))?;
        if self.model.draws.is_some() {
            bail!("--draws does not apply to a loop: each round releases --batch q paths");
        }
        if self.batch == 0 {
            bail!("--batch 0: give q ≥ 1 proposals per round");
        }
        if self.model.scale.is_some_and(f64::is_infinite) {
            bail!("--scale inf: a loop draws from the posterior, whose mean needs a finite σ > 0");
        }
        Ok(())
    }

    /// The loop's public settings for `n` initial records (the ridge
    /// calibrated when --target-epsilon is given).
    fn config(&self, n: usize, rounds: usize) -> Result<ThompsonConfig> {
        let mut spec = gpdp::ReleaseSpec::from_model(self.model.model()?, self.delta.context("missing --delta")?);
        spec.conversion = self.model.conversion.unwrap_or_default();
        spec.response_range = self.response_range;
        spec.units = self.units.clone();
        let goal = if self.minimise { Goal::Minimise } else { Goal::Maximise };
        let target = self.target_epsilon.map(|e| (e, rounds));
        let cfg = ThompsonConfig::from_spec(&spec, n, self.batch, goal, target, self.budget_epsilon)?;
        if let Some(e) = self.target_epsilon {
            eprintln!(
                "calibrated the ridge for {rounds} round(s) of {} at ε ≤ {e}: r = {:.6}",
                self.batch, cfg.mechanism.release.ridge
            );
        }
        Ok(cfg)
    }

    /// The candidates and their column names.
    fn candidates(&self, data_names: &[String], dim: usize) -> Result<(Points, Vec<String>)> {
        let domain = self.model.domain.as_ref().context("missing --domain")?;
        match (&self.grid, &self.candidates) {
            (Some(g), None) => Ok((Grid::parse(g, domain)?.points().clone(), data_names.to_vec())),
            (None, Some(p)) => {
                let bytes = gpdp::io::read_bounded(p, gpdp::io::MAX_INPUT_BYTES)?;
                let cols = gpdp::io::Columns { x: self.x_columns.clone(), y: None };
                let t = gpdp::io::read_table_columns(&p.display().to_string(), &bytes, false, &cols)?;
                if t.x.dim() != dim {
                    bail!("--candidates {}: {}-D points but the data are {dim}-D", p.display(), t.x.dim());
                }
                Ok((t.x, t.x_names))
            }
            _ => bail!("give the candidates: --candidates CSV or --grid N[xM]"),
        }
    }
}

/// One observation from the objective command at `x` (round `round`).
fn observe(cmd: &str, x: &[f64], round: usize) -> Result<f64> {
    let args: Vec<String> = x.iter().map(|v| format!("{v}")).collect();
    let point = args.join(", ");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{cmd} \"$@\""))
        .arg("gpdp-objective")
        .args(&args)
        .output()
        .with_context(|| format!("round {round}: cannot run --objective {cmd:?}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!(
            "round {round}: --objective {cmd:?} failed at ({point}) with {}: {}",
            out.status,
            gpdp::io::excerpt(err.trim())
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or("").trim();
    match first.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => bail!(
            "round {round}: --objective {cmd:?} printed {:?} at ({point}); expected a finite number on its first line",
            gpdp::io::excerpt(first)
        ),
    }
}

fn run_loop(a: RunArgs) -> Result<()> {
    a.check_required()?;
    let out = a.out.clone().context("missing --out")?;
    let data_path = a.data.clone().context("missing --data")?;
    let mut inputs = vec![("--data", data_path.as_path())];
    if let Some(c) = &a.candidates {
        inputs.push(("--candidates", c.as_path()));
    }
    let mut outputs = vec![("--out", out.as_path())];
    if let Some(l) = &a.log {
        outputs.push(("--log", l.as_path()));
        check_log_outside(l, &out)?;
        if l.exists() && !a.force {
            bail!("--log {} exists: give --force to replace it, or another path", l.display());
        }
    }
    if let Some(l) = &a.ledger {
        crate::output::files::check_private_outside("--ledger", l, &out)?;
        inputs.push(("--ledger", l.as_path()));
    }
    check_inputs_apart(&inputs, &outputs)?;
    check_out_dir(&out, a.force)?;
    let mut ledger = match (&a.ledger, &a.dataset) {
        (Some(path), Some(name)) => {
            let l = gpdp::ledger::Ledger::open_existing(path)?;
            l.budget(name)?;
            Some((l, name.clone()))
        }
        _ => None,
    };
    let bytes = gpdp::io::read_bounded(&data_path, gpdp::io::MAX_INPUT_BYTES)?;
    let cols = gpdp::io::Columns { x: a.x_columns.clone(), y: a.y_column.clone() };
    let table = gpdp::io::read_table_columns(&data_path.display().to_string(), &bytes, true, &cols)?;
    let y = table.y.clone().context("--data needs a response column")?;
    let data = Dataset::new(table.x.clone(), y)?;
    let (candidates, names) = a.candidates(&table.x_names, data.dim())?;
    let rounds = a.rounds.context("missing --rounds")?;
    let n0 = data.len();
    let cfg = a.config(n0, rounds)?;
    let delta = cfg.mechanism.delta;
    if let Some(s) = a.seed {
        eprintln!(
            "warning: --seed {s} makes the loop reproducible: this is NOT a private loop (report.json says \"private\": false)"
        );
    }
    let start = std::time::Instant::now();
    let mut t = ThompsonSampler::new(cfg.clone(), candidates.clone(), data, a.seed)?;
    eprintln!(
        "set up the loop over {} candidates with {} records in {:.2} s",
        candidates.len(),
        t.records(),
        start.elapsed().as_secs_f64()
    );
    let allowed = t.rounds_allowed(a.batch, rounds)?;
    if allowed < rounds {
        eprintln!(
            "the budget ε = {} allows {allowed} of the {rounds} round(s) requested (from public inputs): running {allowed}",
            cfg.budget_epsilon.unwrap_or(f64::INFINITY)
        );
    }
    let objective = a.objective.clone().context("missing --objective")?;
    let mut observations: Vec<(usize, Vec<f64>, f64)> = Vec::new();
    let mut failure = None;
    'rounds: for round in 1..=allowed {
        // The ledger's reservation first: refused before anything is drawn.
        let reservation = match &mut ledger {
            Some((l, name)) => {
                match cfg.round_params(t.records()).and_then(|p| p.check()).and_then(|m| l.reserve(name, &m)) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        failure = Some(anyhow::Error::from(e));
                        break;
                    }
                }
            }
            None => None,
        };
        let chosen = match t.ask() {
            Ok(c) => c,
            Err(e) => {
                failure = Some(anyhow::Error::from(e));
                break;
            }
        };
        if let (Some((l, _)), Some(r)) = (&mut ledger, reservation)
            && let Err(e) = l.commit(r, "", &format!("{} (gpdp thompson, round {round})", out.display()))
        {
            // The round stays reserved, so counted against the budget.
            failure =
                Some(anyhow::Error::from(e).context(format!("round {round} was drawn but not committed in --ledger")));
            break;
        }
        let done = t.rounds().last().cloned().context("a round was released")?;
        let shown: Vec<String> = chosen.iter().map(|x| format!("({})", fmt_point(x))).collect();
        println!(
            "round {round}: n = {} records · chose {} · composed ε = {:.4} (δ = {delta:e})",
            done.records,
            shown.join(", "),
            done.epsilon_so_far
        );
        for x in chosen {
            match observe(&objective, &x, round).and_then(|y| t.tell(&x, y).map(|_| y).map_err(Into::into)) {
                Ok(y) => observations.push((round, x, y)),
                Err(e) => {
                    failure = Some(e);
                    break 'rounds;
                }
            }
        }
    }
    let report = report_json(&a, &t, &cfg, &candidates, n0, failure.as_ref())?;
    let csv = choices_csv(&t, &names);
    let text = serde_json::to_string_pretty(&report)? + "\n";
    write_dir_atomically(&out, a.force, |d| {
        std::fs::write(d.join("choices.csv"), &csv)?;
        std::fs::write(d.join("report.json"), &text)?;
        Ok(())
    })?;
    if let Some(log) = &a.log {
        let rows: Vec<_> = observations.iter().map(|(r, x, y)| json!({"round": r, "x": x, "y": y})).collect();
        let body = json!({
            "note": "PRIVATE operator log: the observed values of the loop. Do not publish.",
            "gpdp_version": env!("CARGO_PKG_VERSION"),
            "out": out.display().to_string(),
            "observations": rows,
            "seconds": start.elapsed().as_secs_f64(),
        });
        write_atomically(log, (serde_json::to_string_pretty(&body)? + "\n").as_bytes(), a.force)
            .with_context(|| format!("the loop was published in {}, but --log failed", out.display()))?;
    }
    eprintln!(
        "wrote {} ({} round(s); ε = {:.4} at δ = {delta:e}) in {:.1} s",
        out.display(),
        t.rounds().len(),
        t.epsilon_so_far()?,
        start.elapsed().as_secs_f64()
    );
    if a.json {
        print!("{text}");
    }
    match failure {
        None => Ok(()),
        Some(e) => Err(e.context(format!(
            "the loop stopped after {} round(s); {} holds those rounds and their guarantee",
            t.rounds().len(),
            out.display()
        ))),
    }
}

fn fmt_point(x: &[f64]) -> String {
    x.iter().map(|v| format!("{v}")).collect::<Vec<_>>().join(", ")
}

/// choices.csv: one row per chosen point (published).
fn choices_csv(t: &ThompsonSampler, names: &[String]) -> String {
    let mut s = format!("round,proposal,{},records,epsilon_so_far\n", names.join(","));
    for r in t.rounds() {
        for (j, x) in r.chosen.iter().enumerate() {
            s.push_str(&format!(
                "{},{},{},{},{}\n",
                r.index,
                j + 1,
                fmt_point(x).replace(", ", ","),
                r.records,
                r.epsilon_so_far
            ));
        }
    }
    s
}

/// report.json: the loop's public parameters and composed guarantee.
fn report_json(
    a: &RunArgs,
    t: &ThompsonSampler,
    cfg: &ThompsonConfig,
    candidates: &Points,
    initial_records: usize,
    failure: Option<&anyhow::Error>,
) -> Result<serde_json::Value> {
    let r = &cfg.mechanism.release;
    Ok(json!({
        "gpdp_version": env!("CARGO_PKG_VERSION"),
        "kind": "thompson-loop",
        "private": a.seed.is_none(),
        "seed": a.seed,
        "guarantee": {
            "epsilon": t.epsilon_so_far()?,
            "delta": cfg.mechanism.delta,
            "rounds": t.rounds().len(),
            "composition": "adaptive: the sum of the rounds' Rényi curves at every order, converted once (docs/thompson.md)",
            "conversion": cfg.conversion().to_string(),
            "bound": r.bound.to_string(),
            "neighbouring_relation": "replace-one: every record any round used (the initial data and every observation) is protected, covariates and response; n public",
            "budget_epsilon": cfg.budget_epsilon,
        },
        "model": {
            "kernel": r.kernel.kind().name(),
            "lengthscale": r.kernel.lengthscale(),
            "domain": r.domain.to_string(),
            "ridge": r.ridge,
            "scale": r.scale,
            "gp_noise": r.gp_noise,
            "response_bound": r.response_bound,
            "response_range": a.response_range.map(|g| json!({"lo": g.lo, "hi": g.hi})),
            "units": a.units,
        },
        "loop": {
            "initial_records": initial_records,
            "batch": cfg.batch,
            "goal": if a.minimise { "minimise" } else { "maximise" },
            "candidates": candidates.len(),
            "rounds_requested": a.rounds,
            "stopped_early": failure.map(|e| match e.downcast_ref::<gpdp::Error>() {
                // A budget refusal is computed from public inputs only.
                Some(g) => g.to_string(),
                None => "the --objective command or an observation failed (details on the operator's stderr)".to_string(),
            }),
        },
        "files": ["choices.csv", "report.json"],
    }))
}
