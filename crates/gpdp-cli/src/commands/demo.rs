//! `gpdp demo`: an end-to-end private release on an embedded synthetic
//! example — no files needed.
//!
//! A 2-D "pollution" field (two anisotropic Gaussian plumes through a
//! sigmoid, docs/experiments.md) is observed at 400 sensor locations with bounded noise;
//! the sensor data play the role of the private records. The release uses
//! public hyperparameters fixed in advance (ℓ = 0.15, σ = 0.1), a ridge
//! calibrated to ε = 10 at δ = n^−1.1, and one posterior sample path on a
//! 120 × 120 grid. The sensors are placed on a public survey lattice (239
//! points per axis, a refinement of the grid), declared to the mechanism, so
//! the exact lattice sampler applies and the demo runs in seconds.
//!
//! The output shows the split every release has: `DIR/release/` is the
//! published folder (exactly what `gpdp release` writes), `DIR/private/`
//! holds what must not be published — the synthetic sensor data, the
//! operator log, and a comparison figure drawn from the true field and the
//! non-private posterior.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use gpdp::postprocess::{Grid2, excursion_probability, gaussian_smooth};
use gpdp::{
    CovariateLattice, Dataset, Domain, Draws, Grid, Kernel, MechanismParams, OnUnbounded, Points, Posterior, Query,
    ReleaseParams, SamplerPolicy, Solve,
};
use gpdp_experiments::plume::{PlumeConfig, PlumeField};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::release::{release_rng, report_diagnostics, write_operator_log};
use crate::output::files::write_dir_atomically;
use crate::output::plot::{Contour, HeatPanel, Palette, heatmap_figure};
use crate::output::release::{MapFormats, write_release};

/// Arguments of `gpdp demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Output directory: release/ is the published folder, private/ what must
    /// not be published. An existing directory is replaced only if it is
    /// empty or holds a previous demo (a `.gpdp-demo` marker).
    #[arg(long, value_name = "DIR", default_value = "gpdp-demo")]
    pub out: PathBuf,

    /// Make the release draw reproducible (then it is NOT a private release).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Seed of the synthetic field and sensor data (public: it is a demo).
    #[arg(long = "data-seed", value_name = "S", default_value = "2026")]
    pub data_seed: u64,

    /// Target ε of the release.
    #[arg(long, value_name = "ε", default_value = "10")]
    pub epsilon: f64,

    /// Grid points per axis.
    #[arg(long, value_name = "N", default_value = "120")]
    pub grid: usize,
}

const N_SENSORS: usize = 400;
const NOISE: f64 = 0.5; // M_ξ: y = (1 − M_ξ) f* + ξ, ξ ~ U[−M_ξ, M_ξ], |y| ≤ 1
const LENGTHSCALE: f64 = 0.15;
const SCALE: f64 = 0.1;

/// The file that marks a folder as a demo's output (which a later demo may replace).
const MARKER: &str = ".gpdp-demo";

pub fn run(a: DemoArgs) -> Result<()> {
    let t0 = std::time::Instant::now();
    if a.out.is_dir() && std::fs::read_dir(&a.out)?.next().is_some() && !a.out.join(MARKER).exists() {
        bail!(
            "--out {} exists, is not empty and is not a previous demo's folder (no {MARKER} marker); choose another directory",
            a.out.display()
        );
    }
    let mut drng = ChaCha8Rng::seed_from_u64(a.data_seed);
    let field = PlumeField::sample(&PlumeConfig::default(), &mut drng);
    // Sensors on the public survey lattice with spacing 1/(2(N−1)).
    let nx = a.grid.max(2);
    let steps = 2 * (nx - 1);
    let mut xs = Vec::with_capacity(2 * N_SENSORS);
    let mut ys = Vec::with_capacity(N_SENSORS);
    for _ in 0..N_SENSORS {
        let p =
            [drng.random_range(0..=steps) as f64 / steps as f64, drng.random_range(0..=steps) as f64 / steps as f64];
        xs.extend_from_slice(&p);
        ys.push((1.0 - NOISE) * field.eval(&p) + NOISE * (2.0 * drng.random::<f64>() - 1.0));
    }
    let data = Dataset::new(Points::new(xs, 2)?, ys)?;

    // Public: everything the mechanism is built from.
    let domain = Domain::cuboid(vec![0.0, 0.0], vec![1.0, 1.0])?;
    let model = ReleaseParams::new(Kernel::exponential(LENGTHSCALE)?, domain.clone(), N_SENSORS, 1.0, SCALE);
    // The synthetic field and its readings lie in [−1, 1] by construction: M_Y = 1 is public.
    let mut params = MechanismParams::new(model, (N_SENSORS as f64).powf(-1.1), gpdp::ResponseScale::Bound(1.0));
    params.draws = Draws::ONE;
    params.on_unbounded = OnUnbounded::Reject;
    params.sampler = SamplerPolicy::Auto;
    params.covariate_lattice = Some(CovariateLattice::new(vec![steps + 1, steps + 1])?);
    params.max_epsilon = Some(a.epsilon);
    let mechanism = params.calibrate(Solve::Ridge, a.epsilon)?;
    let query = Query::Grid(Grid::over(&domain, vec![nx, nx])?);

    let mut rng = release_rng(a.seed)?;
    let rel = mechanism.release(&data, &query, &mut rng)?;
    let names = vec!["x1".to_string(), "x2".to_string()];

    let outputs = write_dir_atomically(&a.out, true, |dir| {
        std::fs::write(dir.join(MARKER), "written by gpdp demo; a later demo may replace this folder\n")?;
        let published = dir.join("release");
        std::fs::create_dir(&published)?;
        let outputs = write_release(&published, &rel, &query, &names, 0.0, None, MapFormats::PNG)?;
        let private = dir.join("private");
        std::fs::create_dir(&private)?;
        // The synthetic private input, so that `gpdp release` can be re-run on it.
        let mut w = csv::Writer::from_path(private.join("sensors.csv"))?;
        w.write_record(["x1", "x2", "y"])?;
        for (x, y) in data.x().iter().zip(data.y()) {
            w.write_record([x[0].to_string(), x[1].to_string(), y.to_string()])?;
        }
        w.flush()?;
        write_operator_log(&private.join("operator-log.json"), "demo", "synthetic sensors", &published, &rel, false)?;

        // Side-by-side: truth | non-private posterior probability | private path.
        let pts = query.points();
        let truth = Grid2::new(nx, nx, (0.0, 1.0), (0.0, 1.0), pts.iter().map(|p| field.eval(p)).collect())?;
        let r = &mechanism.params().release;
        let posterior = Posterior::fit(r.kernel, &data, r.ridge)?;
        let (mean, var) = posterior.mean_and_variance(pts)?;
        let prob: Vec<f64> = mean.iter().zip(&var).map(|(m, v)| excursion_probability(*m, *v, r.scale, 0.0)).collect();
        let prob = Grid2::new(nx, nx, (0.0, 1.0), (0.0, 1.0), prob)?;
        let path = Grid2::new(nx, nx, (0.0, 1.0), (0.0, 1.0), rel.paths[0].clone())?;
        // Data-independent post-processing: a 2-cell Gaussian filter before thresholding.
        let smooth = Grid2::new(nx, nx, (0.0, 1.0), (0.0, 1.0), gaussian_smooth(&path.values, nx, nx, 2.0, 3.0)?)?;
        let black = plotters::style::RGBColor(0, 0, 0);
        // Truth and release on one colour scale (symmetric about the threshold 0).
        let m = truth.values.iter().chain(&path.values).fold(0.0f64, |m, v| m.max(v.abs())).max(1e-12);
        let white = plotters::style::RGBColor(255, 255, 255);
        let panels = [
            HeatPanel {
                title: "true field f* and {f* ≥ 0}".into(),
                grid: &truth,
                palette: Palette::Diverging,
                range: Some((-m, m)),
                contours: vec![Contour { grid: &truth, level: 0.0, color: black, width: 2 }],
                points: vec![],
                x_label: "x1".into(),
                y_label: "x2".into(),
                colorbar: true,
                colorbar_label: "f*".into(),
                shade_above: None,
            },
            HeatPanel {
                title: "non-private p_D(x) and {p_D ≥ 0.5}".into(),
                grid: &prob,
                palette: Palette::Viridis,
                range: Some((0.0, 1.0)),
                contours: vec![
                    Contour { grid: &prob, level: 0.5, color: white, width: 2 },
                    Contour { grid: &truth, level: 0.0, color: black, width: 1 },
                ],
                points: vec![],
                x_label: "x1".into(),
                y_label: "x2".into(),
                colorbar: true,
                colorbar_label: "p_D".into(),
                shade_above: None,
            },
            HeatPanel {
                title: format!(
                    "private path (ε = {}), smoothed {{f ≥ 0}}",
                    gpdp::privacy::display::epsilon_up(rel.report.privacy.epsilon, 4)
                ),
                grid: &path,
                palette: Palette::Diverging,
                range: Some((-m, m)),
                contours: vec![
                    Contour { grid: &truth, level: 0.0, color: plotters::style::RGBColor(120, 120, 120), width: 1 },
                    Contour { grid: &smooth, level: 0.0, color: black, width: 2 },
                ],
                points: vec![],
                x_label: "x1".into(),
                y_label: "x2".into(),
                colorbar: true,
                colorbar_label: "f".into(),
                shade_above: None,
            },
        ];
        heatmap_figure(
            &private.join("comparison.png"),
            &panels,
            440,
            Some(
                "gpdp demo: synthetic plume field, 400 private sensors (not shown), one private posterior sample path",
            ),
        )?;
        Ok(outputs)
    })?;
    report_diagnostics(&rel.diagnostics, &rel, 1.0, None);
    println!(
        "gpdp demo: synthetic 2-D plume field, {N_SENSORS} private sensors, {nx}×{nx} grid ({:.1} s)",
        t0.elapsed().as_secs_f64()
    );
    println!("published release: {} in {}/release/", outputs.join(", "), a.out.display());
    println!(
        "private (do not publish): sensors.csv, operator-log.json, comparison.png in {}/private/",
        a.out.display()
    );
    println!("{}", rel.report.statement);
    Ok(())
}
