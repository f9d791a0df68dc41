//! `gpdp figure bounds`: the paper's Figure 1 from the accountant alone.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use gpdp::postprocess::Grid2;
use gpdp::privacy::Conversion;
use gpdp::{BoundChoice, Domain, Draws, Kernel, KernelKind, Lemma, ReleaseParams, SensitivityChoice};
use rayon::prelude::*;

use crate::args::parse_f64;
use crate::output::files::write_dir_atomically;
use crate::output::plot::{Contour, HeatPanel, Palette, RGBColor, heatmap_figure};

/// Figures computed from the accountant.
#[derive(Subcommand, Debug)]
pub enum FigureCmd {
    /// Figure 1: log-log maps of ε over (r, σ) for the generic bound (B.1),
    /// the RKHS-response bound (B.8), and the reduction from GP noise η = σ.
    Bounds(BoundsArgs),
}

/// Arguments of `gpdp figure bounds` (defaults: the paper's Figure 1).
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct BoundsArgs {
    /// Number of records n.
    #[arg(long, default_value = "1000")]
    pub n: usize,
    /// δ of the (ε, δ) statement.
    #[arg(long, value_name = "δ", value_parser = parse_f64, default_value = "5e-4")]
    pub delta: f64,
    /// κ² (κ = inf k(x, x') over the domain; Proposition 3).
    #[arg(long, value_name = "κ²", value_parser = parse_f64, default_value = "0.1")]
    pub kappa2: f64,
    /// Response bound M_Y (Lemma B.1).
    #[arg(long = "response-bound", value_name = "M_Y", value_parser = parse_f64, default_value = "1")]
    pub response_bound: f64,
    /// ‖f*‖_H for the middle panel (Lemma B.8).
    #[arg(long = "rkhs-norm", value_name = "B", value_parser = parse_f64, default_value = "3")]
    pub rkhs_norm: f64,
    /// Number of draws L.
    #[arg(long, default_value = "1")]
    pub draws: Draws,
    /// Range of the ridge r (log axis): lo,hi.
    #[arg(long = "ridge-range", value_name = "LO,HI", default_value = "0.01,100")]
    pub ridge_range: String,
    /// Range of the scale σ (log axis): lo,hi.
    #[arg(long = "scale-range", value_name = "LO,HI", default_value = "0.01,100")]
    pub scale_range: String,
    /// Grid points per axis.
    #[arg(long, default_value = "121")]
    pub resolution: usize,
    /// RDP → (ε, δ) conversion (the paper's figure uses `paper`).
    #[arg(long, default_value = "paper")]
    pub conversion: Conversion,
    /// The accountant's proven bound: tight (signed covariance term; generic
    /// sensitivity min(B.1, coupled, operator); B.8 halved) or paper (as the
    /// paper's figure: Theorem 3.1 with B.1 / B.8).
    #[arg(long, value_name = "tight|paper", default_value = "tight")]
    pub bound: BoundChoice,
    /// Output directory for bounds.png and bounds.csv.
    #[arg(long, value_name = "DIR", default_value = "figures/bounds")]
    pub out: PathBuf,
    /// Replace a non-empty output directory.
    #[arg(long)]
    pub force: bool,
}

fn range(s: &str, what: &str) -> Result<(f64, f64)> {
    let v: Vec<f64> = s.split(',').map(|t| parse_f64(t).map_err(anyhow::Error::msg)).collect::<Result<_>>()?;
    if v.len() != 2 || !(v[0] > 0.0 && v[1] > v[0] && v[1].is_finite()) {
        bail!("--{what} '{s}': expected lo,hi with 0 < lo < hi");
    }
    Ok((v[0], v[1]))
}

/// A kernel and domain whose κ = inf k(x, x') is √κ² (Proposition 3): the
/// exponential kernel on [0, 1] with ℓ = −1/ln κ (so κ = e^{−1/ℓ}), or for
/// the end points the diagonal (κ = 0) and the constant (κ = 1) kernels.
/// Lemmas B.1 and B.8 depend on the kernel only through V̂_n, i.e. through κ,
/// so any kernel with this κ gives the figure.
fn kernel_with_kappa(kappa2: f64) -> Result<(Kernel, Domain)> {
    let domain = Domain::interval(0.0, 1.0)?;
    let kernel = if kappa2 == 0.0 {
        Kernel::new(KernelKind::Diagonal, 1.0)?
    } else if kappa2 == 1.0 {
        Kernel::new(KernelKind::Constant, 1.0)?
    } else {
        Kernel::exponential(-1.0 / kappa2.sqrt().ln())?
    };
    Ok((kernel, domain))
}

pub fn run(cmd: FigureCmd) -> Result<()> {
    match cmd {
        FigureCmd::Bounds(a) => bounds(a),
    }
}

fn bounds(a: BoundsArgs) -> Result<()> {
    let (r_lo, r_hi) = range(&a.ridge_range, "ridge-range")?;
    let (s_lo, s_hi) = range(&a.scale_range, "scale-range")?;
    if !(0.0..=1.0).contains(&a.kappa2) {
        bail!("--kappa2 ({}) must be in [0, 1]", a.kappa2);
    }
    if a.n < 1 || a.resolution < 2 {
        bail!("--n must be ≥ 1 and --resolution ≥ 2");
    }
    let m = a.resolution;
    let cells = (m as f64) * (m as f64);
    gpdp::check_memory(
        "this figure",
        &[gpdp::Need::doubles("the (r, σ) grid's six columns", 6.0 * cells)],
        "use a smaller --resolution",
    )?;
    // Three accountant evaluations per grid point, ≈ 10 µs each.
    gpdp::check_work("this figure", 3.0 * cells, 1e5, "use a smaller --resolution (121 is the paper's)")?;
    let (kernel, domain) = kernel_with_kappa(a.kappa2)?;
    let lr = (r_lo.log10(), r_hi.log10());
    let ls = (s_lo.log10(), s_hi.log10());
    // ε of the accountant for one (r, σ, η) with Lemma B.1 or, given ‖f*‖, B.8.
    let eps = |r: f64, s: f64, eta: f64, rkhs_norm: Option<f64>| -> Result<f64> {
        let mut p = ReleaseParams::new(kernel, domain.clone(), a.n, r, s);
        p.gp_noise = eta;
        p.response_bound = a.response_bound;
        p.bound = a.bound;
        p.sensitivity = SensitivityChoice::Lemma(if rkhs_norm.is_some() { Lemma::B8 } else { Lemma::B1 });
        p.rkhs_norm = rkhs_norm;
        Ok(p.check()?.epsilon(a.draws, a.delta, a.conversion)?.epsilon)
    };
    // rows: (r, σ, ε_B1, ε_B8, ε_B1 with η = σ, reduction)
    let rows: Vec<[f64; 6]> = (0..m * m)
        .into_par_iter()
        .map(|k| -> Result<[f64; 6]> {
            let (i, j) = (k % m, k / m);
            let r = 10f64.powf(lr.0 + (lr.1 - lr.0) * i as f64 / (m - 1) as f64);
            let s = 10f64.powf(ls.0 + (ls.1 - ls.0) * j as f64 / (m - 1) as f64);
            let e1 = eps(r, s, 0.0, None)?;
            let e8 = eps(r, s, 0.0, Some(a.rkhs_norm))?;
            let en = eps(r, s, s, None)?;
            Ok([r, s, e1, e8, en, if en > 0.0 { e1 / en } else { f64::NAN }])
        })
        .collect::<Result<_>>()?;
    let floor = 1e-3;
    let log_grid = |col: usize| -> Result<Grid2> {
        Ok(Grid2::new(m, m, lr, ls, rows.iter().map(|r| r[col].max(floor).log10()).collect())?)
    };
    let g1 = log_grid(2)?;
    let g8 = log_grid(3)?;
    let red = Grid2::new(
        m,
        m,
        lr,
        ls,
        rows.iter().map(|r| if r[5].is_finite() { r[5].max(1e-300).log10() } else { 0.0 }).collect(),
    )?;
    // Shared colour range for the two ε maps.
    let (lo, hi) = rows.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
        (lo.min(r[2].min(r[3]).max(floor).log10()), hi.max(r[2].max(r[3]).max(floor).log10()))
    });
    let white = RGBColor(255, 255, 255);
    fn levels(g: &Grid2) -> Vec<Contour<'_>> {
        [-1.0, 0.0, 1.0, 2.0, 3.0]
            .iter()
            .map(|&l| Contour {
                grid: g,
                level: l,
                color: if l == 1.0 { RGBColor(0, 0, 0) } else { RGBColor(255, 255, 255) },
                width: if l == 1.0 { 3 } else { 1 },
            })
            .collect()
    }
    let panels = [
        HeatPanel {
            title: "log10 ε, generic bound (B.1)".into(),
            grid: &g1,
            palette: Palette::Viridis,
            range: Some((lo, hi)),
            contours: levels(&g1),
            points: vec![],
            x_label: "log10 r".into(),
            y_label: "log10 σ".into(),
            colorbar: true,
            colorbar_label: String::new(),
            shade_above: None,
        },
        HeatPanel {
            title: format!("log10 ε, RKHS responses (B.8, ‖f*‖ = {})", a.rkhs_norm),
            grid: &g8,
            palette: Palette::Viridis,
            range: Some((lo, hi)),
            contours: levels(&g8),
            points: vec![],
            x_label: "log10 r".into(),
            y_label: "log10 σ".into(),
            colorbar: true,
            colorbar_label: String::new(),
            shade_above: None,
        },
        HeatPanel {
            title: "log10 reduction ε(η = 0)/ε(η = σ), B.1".into(),
            grid: &red,
            palette: Palette::Viridis,
            range: None,
            contours: [2f64, 10.0, 100.0, 1000.0]
                .iter()
                .map(|&l| Contour {
                    grid: &red,
                    level: l.log10(),
                    color: if l == 10.0 { RGBColor(0, 0, 0) } else { white },
                    width: if l == 10.0 { 3 } else { 1 },
                })
                .collect(),
            points: vec![],
            x_label: "log10 r".into(),
            y_label: "log10 σ".into(),
            colorbar: true,
            colorbar_label: String::new(),
            shade_above: None,
        },
    ];
    let title = format!(
        "Figure 1: n = {}, δ = {:e}, κ² = {}, M_Y = {}, L = {}, {} conversion, {} bound; contours at ε = 0.1, 1, 10 (black), 100, 1000; reduction 2, 10 (black), 100, 1000",
        a.n, a.delta, a.kappa2, a.response_bound, a.draws, a.conversion, a.bound
    );
    write_dir_atomically(&a.out, a.force, |dir| {
        heatmap_figure(&dir.join("bounds.png"), &panels, 460, Some(&title))?;
        let mut w = csv::Writer::from_path(dir.join("bounds.csv"))?;
        w.write_record([
            "ridge",
            "scale",
            "epsilon_generic_B1",
            "epsilon_rkhs_B8",
            "epsilon_generic_gp_noise_eta_eq_sigma",
            "reduction_factor",
        ])?;
        for r in &rows {
            w.write_record(r.iter().map(|v| v.to_string()))?;
        }
        w.flush().context("bounds.csv")?;
        Ok(())
    })?;
    println!("wrote bounds.png and bounds.csv ({m}×{m} grid) into {}", a.out.display());
    Ok(())
}
