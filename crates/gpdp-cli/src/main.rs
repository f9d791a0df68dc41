//! `gpdp` — differentially private Gaussian-process posterior sample paths.

mod args;
mod commands;
mod output;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use commands::{
    account, calibrate, demo, excursion, figure, hexbin, ledger, merge, mia, plan, posterior, release, serve, thompson,
};

/// gpdp: release Gaussian-process posterior sample paths with differential
/// privacy, and compute the exact (ε, δ) guarantee of such releases.
///
/// The guarantee (Maciazek 2026, Theorem 3.1) depends only on public
/// quantities — kernel, domain, n, ridge r, scale σ, GP noise η, number of
/// draws L — never on the data. Hyperparameters must be chosen on public or
/// non-private data.
#[derive(Parser, Debug)]
#[command(name = "gpdp", version, about, long_about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a private release on an embedded synthetic example (no files
    /// needed) and write the map, GeoJSON, report and a comparison figure.
    Demo(demo::DemoArgs),
    /// Compute the (ε, δ) guarantee of releasing L posterior sample paths.
    Account(account::AccountArgs),
    /// Solve for the smallest ridge/scale/GP noise or the largest number of
    /// draws meeting a target (ε, δ).
    Calibrate(calibrate::CalibrateArgs),
    /// Release L posterior sample paths fitted to private data, with the
    /// guarantee, a map and the excursion set.
    Release(Box<release::ReleaseCmdArgs>),
    /// Non-private posterior mean and variance at query points (diagnostics
    /// on public data).
    Posterior(posterior::PosteriorArgs),
    /// Membership-inference attack (LiRA) against the release; `mia sweep`
    /// for the paper's Figures 2, 3 and 5.
    Mia(mia::MiaArgs),
    /// Draw the paper's figures that need only the accountant.
    #[command(subcommand)]
    Figure(figure::FigureCmd),
    /// The paper's excursion-set utility studies (hyperparameters chosen on
    /// synthetic data, privacy-constrained and not).
    #[command(subcommand)]
    Excursion(excursion::ExcursionCmd),
    /// Bin point records (x, y, value) onto a hexagonal lattice: count and
    /// median value per cell (the binning of the real-data study).
    #[command(long_about = hexbin::ABOUT)]
    Hexbin(hexbin::HexbinArgs),
    /// The privacy-budget ledger: declare a dataset's budget, list its releases.
    #[command(subcommand)]
    Ledger(ledger::LedgerCmd),
    /// Fit ℓ, σ and the noise on PUBLIC or proxy data (never the private
    /// data), calibrate the ridge for target ε values and estimate the
    /// private map's utility: plan.json for `release --plan`.
    Plan(Box<plan::PlanArgs>),
    /// Serve released paths over HTTP/JSON: lazy, consistent, durable
    /// evaluation anywhere, a budget ledger and a web map viewer.
    Serve(serve::ServeArgs),
    /// Combine the shards of a sharded study (`--shard I/N`, e.g. the tasks
    /// of a Slurm array) into the unsharded run's outputs, byte for byte.
    Merge(merge::MergeArgs),
    /// Private Thompson sampling: choose the next points to try from private
    /// records, round after round, with the composed guarantee of the loop;
    /// `gpdp thompson study` is the regret study.
    Thompson(Box<thompson::ThompsonArgs>),
}

/// The (sub)command the arguments name, as typed: `gpdp release` for
/// `gpdp release --crs 27700 …`, `gpdp ledger init` for `gpdp ledger init …`,
/// `gpdp` when no subcommand is named — so that a usage error points to the
/// help page that documents the flag.
fn command_path(args: impl Iterator<Item = String>) -> String {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut path = String::from("gpdp");
    for a in args.skip(1) {
        let Some(sub) = cmd.find_subcommand(&a).cloned() else { break };
        path.push(' ');
        path.push_str(sub.get_name());
        cmd = sub;
    }
    path
}

/// Dies quietly on a closed pipe (`gpdp … | head`) instead of panicking in
/// `println!`, like other Unix command-line tools.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting the disposition of SIGPIPE to the default at start-up,
    // before any other thread exists, has no memory-safety implications.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            eprintln!("{} (see {} --help)", clap_one_line(&e.render().to_string()), command_path(std::env::args()));
            return ExitCode::from(2);
        }
    };
    if let Err(e) = output::files::handle_termination_signals() {
        eprintln!("warning: cannot handle SIGINT/SIGTERM ({e}); an interrupted run may leave partial output");
    }
    let result = match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Account(a) => account::run(a),
        Command::Calibrate(a) => calibrate::run(a),
        Command::Release(a) => release::run(*a),
        Command::Posterior(a) => posterior::run(a),
        Command::Figure(c) => figure::run(c),
        Command::Mia(a) => mia::run(a),
        Command::Excursion(c) => excursion::run(c),
        Command::Hexbin(a) => hexbin::run(a),
        Command::Ledger(c) => ledger::run(c),
        Command::Plan(a) => plan::run(*a),
        Command::Serve(a) => serve::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Thompson(a) => thompson::run(*a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Library messages name release-spec keys as `key`: spell them as flags.
            let message = gpdp::spec::render_keys(&format!("{e:#}"), gpdp::spec::Spelling::Flag);
            eprintln!("error: {}", capped(&one_line(&message)));
            ExitCode::from(output::outcome::exit_status(&e))
        }
    }
}

/// The longest error message printed, in characters: values quoted from
/// inputs are cut where they are quoted (`gpdp::io::excerpt`); this bounds
/// whatever else a message might echo.
const MAX_MESSAGE_CHARS: usize = 4000;

/// `msg`, cut to [`MAX_MESSAGE_CHARS`] characters with a note of how much was left out.
fn capped(msg: &str) -> String {
    match msg.char_indices().nth(MAX_MESSAGE_CHARS) {
        None => msg.to_string(),
        Some((cut, _)) => format!("{}… ({} more bytes not shown)", &msg[..cut], msg.len() - cut),
    }
}

/// A message as one line that is safe to print on a terminal: line breaks
/// become spaces and other control characters (which a data file can carry
/// into an error message) are shown escaped, e.g. `\u{1b}`.
fn one_line(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    for c in msg.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// clap's error on one line: every line before the usage block (so a list
/// of missing arguments keeps all its names), without the tips.
fn clap_one_line(text: &str) -> String {
    let parts: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("tip:") && !l.starts_with("For more information"))
        .collect();
    let joined = if parts.is_empty() { "error: invalid arguments".to_string() } else { parts.join(" ") };
    one_line(&joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_safe_line() {
        assert_eq!(one_line("bad \u{1b}]0;pwned\u{7}\nvalue"), "bad \\u{1b}]0;pwned\\u{7} value");
        let missing = "error: the following required arguments were not provided:\n  --data <CSV>\n  --delta <δ>\n\nUsage: gpdp release --data <CSV>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_one_line(missing),
            "error: the following required arguments were not provided: --data <CSV> --delta <δ>"
        );
        assert_eq!(capped("short"), "short");
        let long = "x".repeat(MAX_MESSAGE_CHARS + 10);
        assert_eq!(capped(&long), format!("{}… (10 more bytes not shown)", "x".repeat(MAX_MESSAGE_CHARS)));
    }
}
