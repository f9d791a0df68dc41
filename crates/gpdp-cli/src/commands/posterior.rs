//! `gpdp posterior`: non-private posterior mean and variance (diagnostics).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use gpdp::{Kernel, KernelKind, Posterior};

use crate::args::parse_f64;
use gpdp::io::{Columns, MAX_INPUT_BYTES, read_bounded, read_dataset_columns, read_table_columns};

use crate::output::files::{check_out_file, write_atomically};

/// Arguments of `gpdp posterior`.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
#[command(
    long_about = "Non-private posterior mean μ_D and variance σ²·k_D(x, x) at query points.\n\nThis prints the posterior itself, which is NOT differentially private: use it only on public or synthetic data (e.g. to check a model before a release)."
)]
pub struct PosteriorArgs {
    /// Training data CSV: covariate columns x (1-D) or x1..xd, and y (or
    /// the columns named by --x and --y).
    #[arg(long, value_name = "CSV")]
    pub data: PathBuf,

    /// Query points CSV: the same covariate columns (other columns ignored).
    #[arg(long, value_name = "CSV")]
    pub at: PathBuf,

    /// Covariate columns of --data and --at by name, in order, e.g.
    /// `--x easting,northing` (default: x, or x1, x2, …).
    #[arg(long = "x", value_name = "COLS", value_delimiter = ',')]
    pub x_columns: Option<Vec<String>>,

    /// Response column of --data by name, e.g. `--y pm25` (default: y).
    #[arg(long = "y", value_name = "COL")]
    pub y_column: Option<String>,

    /// Kernel (exponential, matern32, matern52, squared-exponential, constant, diagonal).
    #[arg(long, value_name = "KERNEL")]
    pub kernel: KernelKind,

    /// Lengthscale ℓ > 0 (ignored by constant and diagonal kernels).
    #[arg(long, value_name = "ℓ", value_parser = parse_f64, default_value = "1")]
    pub lengthscale: f64,

    /// Effective ridge r > 0 (r² = noise variance / σ²).
    #[arg(long, value_name = "r", value_parser = parse_f64)]
    pub ridge: f64,

    /// Kernel scale σ > 0 (the variance column is σ²·k_D(x, x)).
    #[arg(long, value_name = "σ", value_parser = parse_f64, default_value = "1")]
    pub scale: f64,

    /// Output CSV (default: standard output; refused if it exists, unless --force).
    #[arg(long, value_name = "CSV")]
    pub out: Option<PathBuf>,

    /// Replace an existing --out file.
    #[arg(long, requires = "out")]
    pub force: bool,
}

pub fn run(a: PosteriorArgs) -> Result<()> {
    if !(a.scale.is_finite() && a.scale > 0.0) {
        bail!("scale σ ({}) must be a finite number > 0", a.scale);
    }
    if let Some(out) = &a.out {
        crate::output::files::check_inputs_apart(&[("--data", &a.data), ("--at", &a.at)], &[("--out", out)])?;
        check_out_file("--out", out, a.force)?;
    }
    let kernel = Kernel::new(a.kernel, a.lengthscale)?;
    let cols = Columns { x: a.x_columns.clone(), y: a.y_column.clone() };
    let (names, data) = read_dataset_columns(&a.data, &cols)?;
    let at = read_bounded(&a.at, MAX_INPUT_BYTES)?;
    let query = read_table_columns(&a.at.display().to_string(), &at, false, &Columns { x: cols.x.clone(), y: None })?;
    if query.x.dim() != data.dim() {
        bail!("{} has {}-D covariates but {} has {}-D", a.at.display(), query.x.dim(), a.data.display(), data.dim());
    }
    let post = Posterior::fit(kernel, &data, a.ridge)?;
    let mean = post.mean(&query.x)?;
    let var = post.variance(&query.x)?;
    let s2 = a.scale * a.scale;
    let mut buf = Vec::new();
    {
        let mut w = csv::Writer::from_writer(&mut buf);
        let mut header = names.clone();
        header.push("mean".into());
        header.push("variance".into());
        w.write_record(&header)?;
        for (i, x) in query.x.iter().enumerate() {
            let mut rec: Vec<String> = x.iter().map(|v| format!("{v}")).collect();
            rec.push(format!("{}", mean[i]));
            rec.push(format!("{}", s2 * var[i]));
            w.write_record(&rec)?;
        }
        w.flush()?;
    }
    match &a.out {
        Some(p) => write_atomically(p, &buf, a.force)?,
        None => std::io::stdout().lock().write_all(&buf)?,
    }
    Ok(())
}
