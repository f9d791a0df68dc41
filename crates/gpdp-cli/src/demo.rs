//! `gpdp demo`: an end-to-end private release on an embedded synthetic
//! example — no files needed.
//!
//! A 2-D "pollution" field (two anisotropic Gaussian plumes through a
//! sigmoid, SPEC §4) is observed at 400 sensor locations with bounded noise;
//! the sensor data play the role of the private records. The release uses
//! public hyperparameters fixed in advance (ℓ = 0.15, σ = 0.1), a ridge
//! calibrated to ε = 10 at δ = n^−1.1, and one posterior sample path on a
//! 120 × 120 grid. The sensors lie on a 1/238 lattice (a refinement of the
//! grid), so the exact lattice sampler applies and the demo runs in seconds.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use gpdp::excursion::{excursion_probability, gaussian_smooth};
use gpdp::{Dataset, Points, Solve};
use gpdp_experiments::plume::{PlumeConfig, PlumeField};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::args::ReleaseArgs;
use crate::geo::Grid2;
use crate::plot::{Contour, HeatPanel, Palette, heatmap_figure};
use crate::release::{
    OnUnbounded, Query, ReleaseCmdArgs, SamplerChoice, grid_query, prepare_data, release_rng, run_release, statement,
    write_dir_atomically, write_outputs,
};

/// Arguments of `gpdp demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Output directory (replaced if it holds a previous demo).
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

pub fn run(a: DemoArgs) -> Result<()> {
    let t0 = std::time::Instant::now();
    let mut drng = ChaCha8Rng::seed_from_u64(a.data_seed);
    let field = PlumeField::sample(&PlumeConfig::default(), &mut drng);
    // Sensors on the lattice with spacing 1/(2(N−1)) (a refinement of the grid).
    let steps = 2 * (a.grid.max(2) - 1);
    let mut xs = Vec::with_capacity(2 * N_SENSORS);
    let mut ys = Vec::with_capacity(N_SENSORS);
    for _ in 0..N_SENSORS {
        let p =
            [drng.random_range(0..=steps) as f64 / steps as f64, drng.random_range(0..=steps) as f64 / steps as f64];
        xs.extend_from_slice(&p);
        ys.push((1.0 - NOISE) * field.eval(&p) + NOISE * (2.0 * drng.random::<f64>() - 1.0));
    }
    let data = Dataset::new(Points::new(xs, 2)?, ys)?;
    let delta = (N_SENSORS as f64).powf(-1.1);
    let grid_spec = a.grid.to_string();
    let args = ReleaseCmdArgs {
        data: PathBuf::from("sensors.csv"),
        model: ReleaseArgs {
            kernel: Some(gpdp::KernelKind::Exponential),
            lengthscale: Some(LENGTHSCALE),
            domain: Some("box:0,1,0,1".parse()?),
            ridge: None,
            scale: Some(SCALE),
            gp_noise: None,
            draws: Some(1),
            response_bound: Some(1.0),
            sensitivity: None,
            rkhs_norm: None,
            conversion: None,
        },
        delta,
        target_epsilon: Some(a.epsilon),
        solve: Solve::Ridge,
        grid: Some(grid_spec.clone()),
        at: None,
        out: a.out.clone(),
        force: true,
        max_epsilon: Some(a.epsilon),
        threshold: 0.0,
        on_unbounded: OnUnbounded::Reject,
        sampler: SamplerChoice::Auto,
        seed: a.seed,
        json: false,
    };
    let domain = args.model.domain.clone().expect("set above");
    let (data, clipped) = prepare_data(data, &domain, 1.0, OnUnbounded::Reject, "synthetic sensors")?;
    let query = grid_query(&grid_spec, &domain)?;
    let mut rng = release_rng(a.seed)?;
    let rel = run_release(&args, &data, &query, &mut rng)?;
    let names = vec!["x1".to_string(), "x2".to_string()];
    let Query::Grid { counts, .. } = &query else { unreachable!() };
    let (nx, ny) = (counts[0], counts[1]);

    let outputs = write_dir_atomically(&a.out, true, |dir| {
        let mut outputs = write_outputs(dir, &rel, &rng, clipped, &args, &query, &names, &data)?;
        // The synthetic private input, so that `gpdp release` can be re-run on it.
        let mut w = csv::Writer::from_path(dir.join("sensors.csv"))?;
        w.write_record(["x1", "x2", "y"])?;
        for (x, y) in data.x().iter().zip(data.y()) {
            w.write_record([x[0].to_string(), x[1].to_string(), y.to_string()])?;
        }
        w.flush()?;
        outputs.push("sensors.csv".into());

        // Side-by-side: truth | non-private posterior probability | private path.
        let pts = query.points();
        let truth = Grid2::new(nx, ny, (0.0, 1.0), (0.0, 1.0), pts.iter().map(|p| field.eval(p)).collect())?;
        let mean = rel.posterior.mean(pts)?;
        let var = rel.posterior.variance(pts)?;
        let scale = rel.report.components[0].scale;
        let prob: Vec<f64> = mean.iter().zip(&var).map(|(m, v)| excursion_probability(*m, *v, scale, 0.0)).collect();
        let prob = Grid2::new(nx, ny, (0.0, 1.0), (0.0, 1.0), prob)?;
        let path = Grid2::new(nx, ny, (0.0, 1.0), (0.0, 1.0), rel.paths.values[0].clone())?;
        // Data-independent post-processing: a 2-cell Gaussian filter before thresholding.
        let smooth = Grid2::new(nx, ny, (0.0, 1.0), (0.0, 1.0), gaussian_smooth(&path.values, nx, ny, 2.0, 3.0))?;
        let black = plotters::style::RGBColor(0, 0, 0);
        let white = plotters::style::RGBColor(255, 255, 255);
        let panels = [
            HeatPanel {
                title: "true field f* and {f* ≥ 0}".into(),
                grid: &truth,
                palette: Palette::Diverging,
                range: Some((-1.0, 1.0)),
                contours: vec![Contour { grid: &truth, level: 0.0, color: black, width: 2 }],
                points: vec![],
                x_label: "x1".into(),
                y_label: "x2".into(),
                colorbar: true,
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
            },
            HeatPanel {
                title: format!("private path (ε = {:.1}), smoothed {{f ≥ 0}}", rel.report.epsilon),
                grid: &path,
                palette: Palette::Diverging,
                range: None,
                contours: vec![
                    Contour { grid: &truth, level: 0.0, color: plotters::style::RGBColor(120, 120, 120), width: 1 },
                    Contour { grid: &smooth, level: 0.0, color: black, width: 2 },
                ],
                points: vec![],
                x_label: "x1".into(),
                y_label: "x2".into(),
                colorbar: true,
            },
        ];
        heatmap_figure(
            &dir.join("comparison.png"),
            &panels,
            440,
            Some(
                "gpdp demo: synthetic plume field, 400 private sensors (not shown), one private posterior sample path",
            ),
        )?;
        outputs.push("comparison.png".into());
        Ok(outputs)
    })?;
    println!(
        "gpdp demo: synthetic 2-D plume field, {N_SENSORS} private sensors, {}×{} grid ({:.1} s)",
        nx,
        ny,
        t0.elapsed().as_secs_f64()
    );
    println!("wrote {} into {}/", outputs.join(", "), a.out.display());
    println!("{}", statement(&rel.report, rng.is_private()));
    Ok(())
}
