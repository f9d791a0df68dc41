//! The mechanism's contract: exactly the accounted posterior and number of
//! draws, and a report that depends on public inputs only. (Refusals through
//! the public API: `tests/misuse.rs`.)

use super::*;
use crate::model::domain::Domain;
use crate::model::kernel::{Kernel, KernelKind};
use crate::model::points::Points;
use crate::model::query::Grid;

fn release_1d(n: usize) -> ReleaseParams {
    ReleaseParams::new(Kernel::exponential(0.3).unwrap(), Domain::interval(0.0, 1.0).unwrap(), n, 0.8, 0.5)
}

fn data_1d() -> Dataset {
    Dataset::new(Points::from_1d(&[0.05, 0.2, 0.21, 0.5, 0.77, 0.9]), vec![0.4, -0.9, -0.7, 1.0, 0.3, -0.2]).unwrap()
}

fn grid_1d(m: usize) -> Query {
    Query::Grid(Grid::parse(&m.to_string(), &Domain::interval(0.0, 1.0).unwrap()).unwrap())
}

#[test]
fn releases_exactly_the_accounted_draws_with_the_accounted_report() {
    let mut p = MechanismParams::new(release_1d(6), 1e-3, crate::model::units::ResponseScale::Bound(1.0));
    p.draws = Draws::new(3).unwrap();
    let m = p.check().unwrap();
    let want = p.release.check().unwrap().epsilon(p.draws, 1e-3, p.conversion).unwrap();
    assert_eq!(m.privacy(), &want);
    let q = grid_1d(25);
    let r = m.release(&data_1d(), &q, &mut ReleaseRng::seeded(4)).unwrap();
    assert_eq!(r.paths.len(), 3);
    assert!(r.paths.iter().all(|p| p.len() == 25));
    assert_eq!(r.report.privacy, want);
    assert!(!r.report.private && r.report.warning.as_deref().unwrap().contains("NOT a private release"));
    assert_eq!(r.report.query.counts, Some(vec![25]));
    // Same seed, same values; OS-seeded generators differ and say private.
    let again = m.release(&data_1d(), &q, &mut ReleaseRng::seeded(4)).unwrap();
    assert_eq!(again.paths, r.paths);
    let os = m.release(&data_1d(), &q, &mut ReleaseRng::from_os().unwrap()).unwrap();
    assert!(os.report.private && os.report.warning.is_none());
    assert_ne!(os.paths, r.paths);
}

/// The released law is N(μ_D, σ²k_D + jI) with the accounted r and σ: the
/// moments of 2·10⁴ seeded draws at 5 points, each within 5 standard errors.
#[test]
fn released_values_have_the_accounted_posterior_law() {
    let mut p = MechanismParams::new(release_1d(6), 1e-3, crate::model::units::ResponseScale::Bound(1.0));
    p.draws = Draws::new(20_000).unwrap();
    let m = p.check().unwrap();
    let q = Query::Points(Points::from_1d(&[0.0, 0.2, 0.35, 0.5, 0.95]));
    let r = m.release(&data_1d(), &q, &mut ReleaseRng::seeded(21)).unwrap();
    let post = Posterior::fit(p.release.kernel, &data_1d(), p.release.ridge).unwrap();
    let process = Process::new(post, p.release.scale, 0.0).unwrap();
    let mu = process.mean(q.points()).unwrap();
    let c = process.covariance(q.points(), q.points()).unwrap();
    let n = r.paths.len() as f64;
    for i in 0..5 {
        let mean = r.paths.iter().map(|d| d[i]).sum::<f64>() / n;
        let var = r.paths.iter().map(|d| (d[i] - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let cii = c[(i, i)] + r.report.sampler.jitter;
        assert!((mean - mu[i]).abs() <= 5.0 * (cii / n).sqrt(), "mean {i}: {mean} vs {}", mu[i]);
        assert!((var - cii).abs() <= 5.0 * (2.0 * cii * cii / n).sqrt(), "variance {i}: {var} vs {cii}");
    }
}

#[test]
fn calibrated_mechanisms_meet_the_target_and_say_so() {
    let m = MechanismParams::new(release_1d(6), 1e-3, crate::model::units::ResponseScale::Bound(1.0))
        .calibrate(Solve::Ridge, 4.0)
        .unwrap();
    assert!(m.privacy().epsilon <= 4.0 && m.privacy().epsilon > 3.99);
    let c = m.calibration().unwrap();
    assert_eq!((c.solve, c.target_epsilon), (Solve::Ridge, 4.0));
    assert_eq!(m.params().release.ridge, c.value);
    assert!(c.permissive_epsilon.unwrap() > 4.0);
    let r = m.release(&data_1d(), &grid_1d(5), &mut ReleaseRng::seeded(2)).unwrap();
    assert_eq!(r.report.calibration.as_ref(), Some(c));
}

/// What is published depends on public inputs only: releases that differ in
/// (a) where one sensor lies (on or off a lattice, none declared) and (b) how
/// many responses were clipped produce identical reports.
#[test]
fn reports_do_not_depend_on_private_details() {
    let domain: Domain = "box:0,1,0,1".parse().unwrap();
    let rel = ReleaseParams::new(Kernel::exponential(0.3).unwrap(), domain.clone(), 4, 1.0, 0.5);
    let m = MechanismParams::new(rel, 1e-3, crate::model::units::ResponseScale::Bound(1.0)).check().unwrap();
    let q = Query::Grid(Grid::parse("9", &domain).unwrap());
    let on = Dataset::new(
        Points::new(vec![0.125, 0.25, 0.5, 0.5, 0.875, 0.125, 0.75, 1.0], 2).unwrap(),
        vec![0.3, -0.2, 0.9, 0.1],
    )
    .unwrap();
    let off = Dataset::new(
        Points::new(vec![0.125, 0.25, 0.5, 0.5, 0.875, 0.125, 0.7431, 0.9113], 2).unwrap(),
        vec![0.3, -0.2, 0.9, 0.1],
    )
    .unwrap();
    let clipped = Dataset::new(on.x().clone(), vec![3.0, -0.2, 0.9, -7.0]).unwrap();
    let json = |d: &Dataset| {
        let r = m.release(d, &q, &mut ReleaseRng::seeded(9)).unwrap();
        (serde_json::to_string(&r.report).unwrap(), r.diagnostics)
    };
    let (a, da) = json(&on);
    let (b, _) = json(&off);
    let (c, dc) = json(&clipped);
    assert_eq!(a, b, "moving a sensor off the lattice changed the report");
    assert_eq!(a, c, "clipping responses changed the report");
    assert_eq!((da.policy.responses_clipped, dc.policy.responses_clipped), (0, 2));
    assert!(!a.contains("clipped"), "{a}");
    // With a declared lattice the lattice sampler is used for both grids…
    let mut lp = MechanismParams::new(m.params().release.clone(), 1e-3, crate::model::units::ResponseScale::Bound(1.0));
    lp.covariate_lattice = Some(CovariateLattice::parse("9", 2).unwrap());
    let lm = lp.check().unwrap();
    let r = lm.release(&on, &q, &mut ReleaseRng::seeded(9)).unwrap();
    assert_eq!(r.report.sampler.plan.method, crate::sampling::lattice::METHOD);
    // …and data off the declared lattice are refused, not served otherwise.
    let e = lm.release(&off, &q, &mut ReleaseRng::seeded(9)).unwrap_err().to_string();
    assert!(e.contains("data row 4") && e.contains("not on the declared covariate lattice"), "{e}");
}

#[test]
fn lazy_paths_are_consistent_capped_and_reported() {
    let mut p = MechanismParams::new(release_1d(6), 1e-3, crate::model::units::ResponseScale::Bound(1.0));
    p.draws = Draws::new(2).unwrap();
    let m = p.check().unwrap();
    let mut lazy = m.sample_paths(&data_1d(), 6, ReleaseRng::seeded(3)).unwrap();
    assert_eq!(lazy.len(), 2);
    let a = Points::from_1d(&[0.1, 0.6]);
    let first = lazy.eval(0, &a).unwrap();
    let b = Points::from_1d(&[0.6, 0.3, 0.1]);
    let second = lazy.eval(0, &b).unwrap();
    assert_eq!((second[0], second[2]), (first[1], first[0]), "revealed points keep their values");
    assert_eq!(lazy.paths()[0].revealed(), 3);
    assert_eq!(lazy.paths()[1].revealed(), 0);
    let e = lazy.eval(0, &Points::from_1d(&[0.01, 0.02, 0.03, 0.04])).unwrap_err();
    assert!(matches!(e, Error::TooLarge(_)), "{e}");
    assert!(lazy.eval(2, &a).is_err());
    assert_eq!(lazy.report().privacy, *m.privacy());
    assert_eq!(lazy.report().query.kind, "lazy");
}

#[test]
fn restored_lazy_paths_continue_the_original_draw() {
    // The original path reveals 5 points in two batches (5 normals from its
    // generator), then 3 new ones. A path restored from its 5 stored values
    // with the same generator advanced by 5 normals must answer the 5 old
    // points exactly and the 3 new ones as the original did (the same
    // normals through the same conditional law; factors equal to rounding).
    let mut p = MechanismParams::new(release_1d(6), 1e-3, crate::model::units::ResponseScale::Bound(1.0));
    p.draws = Draws::new(2).unwrap();
    p.response_range = Some("0,40".parse().unwrap());
    p.release.response_bound = 20.0;
    let m = p.check().unwrap();
    let data = Dataset::new(data_1d().x().clone(), data_1d().y().iter().map(|v| 20.0 + 20.0 * v).collect()).unwrap();
    let mut a = m.sample_paths(&data, 50, ReleaseRng::seeded(11)).unwrap();
    let (b1, b2) = (Points::from_1d(&[0.1, 0.6, 0.95]), Points::from_1d(&[0.6, 0.33, 0.34]));
    let v1 = a.eval(0, &b1).unwrap();
    let v2 = a.eval(0, &b2).unwrap();
    let stored: Vec<(Points, Vec<f64>)> =
        a.paths().iter().map(|p| (p.points().clone(), p.internal_values().to_vec())).collect();
    assert_eq!(stored[0].0.len(), 5);
    assert!(stored[1].0.is_empty());
    let new = Points::from_1d(&[0.0, 0.5, 0.34, 1.0]);
    let original = a.eval(0, &new).unwrap();
    let mut rng = ReleaseRng::seeded(11);
    (0..5).for_each(|_| {
        rng.normal();
    });
    let mut b = m.restore_paths(&data, 50, rng, stored.clone()).unwrap();
    assert_eq!(b.eval(0, &b1).unwrap(), v1, "old points are answered identically");
    assert_eq!(b.eval(0, &b2).unwrap(), v2);
    let restored = b.eval(0, &new).unwrap();
    assert_eq!(restored[2], original[2], "0.34 was revealed before");
    for (x, y) in restored.iter().zip(&original) {
        assert!((x - y).abs() < 1e-9 * (1.0 + y.abs()), "{restored:?} vs {original:?}");
    }
    assert_eq!(b.report(), a.report());
    // Bad stored state is refused, not trusted.
    let mut dup = stored.clone();
    dup[0].0.push(&[0.1]).unwrap();
    dup[0].1.push(0.0);
    let e = m.restore_paths(&data, 50, ReleaseRng::seeded(1), dup).unwrap_err();
    assert!(e.to_string().contains("revealed twice"), "{e}");
    let e = m.restore_paths(&data, 50, ReleaseRng::seeded(1), stored[..1].to_vec()).unwrap_err();
    assert!(e.to_string().contains("2 paths from 1"), "{e}");
    let e = m.restore_paths(&data, 4, ReleaseRng::seeded(1), stored).unwrap_err();
    assert!(matches!(e, Error::TooLarge(_)), "{e}");
}

#[test]
fn two_dimensional_lattice_release_matches_the_dense_law_in_the_mean() {
    // The demo's shape at a small size: sensors on a declared lattice, the
    // lattice sampler, and μ_D recovered by the average of many draws.
    let domain: Domain = "box:0,1,0,1".parse().unwrap();
    let rel = ReleaseParams::new(Kernel::new(KernelKind::Matern32, 0.4).unwrap(), domain.clone(), 4, 0.5, 0.7);
    let mut p = MechanismParams::new(rel, 1e-3, crate::model::units::ResponseScale::Bound(1.0));
    p.covariate_lattice = Some(CovariateLattice::parse("5", 2).unwrap());
    p.sampler = SamplerPolicy::Lattice;
    p.draws = Draws::new(4000).unwrap();
    let m = p.check().unwrap();
    let q = Query::Grid(Grid::parse("3", &domain).unwrap());
    let data = Dataset::new(
        Points::new(vec![0.0, 0.0, 0.25, 0.75, 0.5, 0.5, 1.0, 0.25], 2).unwrap(),
        vec![0.8, -0.3, 0.5, -1.0],
    )
    .unwrap();
    let r = m.release(&data, &q, &mut ReleaseRng::seeded(17)).unwrap();
    let post = Posterior::fit(p.release.kernel, &data, p.release.ridge).unwrap();
    let process = Process::new(post, p.release.scale, 0.0).unwrap();
    let mu = process.mean(q.points()).unwrap();
    let c = process.covariance(q.points(), q.points()).unwrap();
    let n = r.paths.len() as f64;
    for i in 0..q.len() {
        let mean = r.paths.iter().map(|d| d[i]).sum::<f64>() / n;
        let se = ((c[(i, i)] + r.report.sampler.jitter) / n).sqrt();
        assert!((mean - mu[i]).abs() <= 5.0 * se, "point {i}: {mean} vs {} (se {se})", mu[i]);
    }
}

/// A 1-D release with a state-space kernel is served by the state-space
/// sampler, without a dense fit (n = 20 000 would need 6.4 GB for the Gram
/// matrix and its factor), and its report depends on public inputs only.
#[test]
fn one_dimensional_releases_use_the_state_space_sampler_without_a_dense_fit() {
    let n = 20_000;
    let kernel = Kernel::new(KernelKind::Matern32, 0.1).unwrap();
    let p = MechanismParams::new(
        ReleaseParams::new(kernel, Domain::interval(0.0, 1.0).unwrap(), n, 2.0, 1.0),
        1e-5,
        crate::model::units::ResponseScale::Bound(1.0),
    );
    let m = p.check().unwrap();
    let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.618_033_988_75) % 1.0).collect();
    let d1 = Dataset::new(Points::from_1d(&xs), xs.iter().map(|x| (5.0 * x).sin()).collect()).unwrap();
    let d2 = Dataset::new(Points::from_1d(&xs), xs.iter().map(|x| (9.0 * x).cos() * 0.5).collect()).unwrap();
    let q = grid_1d(50_000);
    let a = m.release(&d1, &q, &mut ReleaseRng::seeded(1)).unwrap();
    let b = m.release(&d2, &q, &mut ReleaseRng::seeded(1)).unwrap();
    assert_eq!(a.report.sampler.plan.method, crate::sampling::statespace::METHOD);
    assert_eq!(serde_json::to_string(&a.report).unwrap(), serde_json::to_string(&b.report).unwrap());
    assert_ne!(a.paths, b.paths);
    // The dense sampler, asked for explicitly, is refused for its size before any work.
    let mut dense = p.clone();
    dense.sampler = SamplerPolicy::Dense;
    let e = dense.check().unwrap().release(&d1, &q, &mut ReleaseRng::seeded(1)).unwrap_err();
    assert!(e.to_string().contains("too large") || e.to_string().contains("memory"), "{e}");
}

/// A response range is exactly a shift of the origin: the same seed on
/// responses in µg/m³ with the range [0, 60] gives the draws of the release
/// under the bound M_Y = 30 on the centred responses, shifted back by 30;
/// clipping acts at the range's ends, σ keeps its meaning (data units), and
/// the report states the range and the unit.
#[test]
fn response_range_is_an_exact_shift_of_the_origin() {
    let range = crate::model::units::ResponseRange::new(0.0, 60.0).unwrap();
    let raw = Dataset::new(data_1d().x().clone(), vec![12.0, 55.0, 70.0, 30.0, 3.0, 41.0]).unwrap();
    let centred = Dataset::new(raw.x().clone(), raw.y().iter().map(|&y| range.clip(y)).collect()).unwrap();
    let mut model = release_1d(6);
    model.scale = 12.0;
    let mut p = MechanismParams::new(model, 1e-3, crate::model::units::ResponseScale::Bound(30.0));
    p.draws = Draws::new(2).unwrap();
    let plain = p.check().unwrap().release(&centred, &grid_1d(30), &mut ReleaseRng::seeded(5)).unwrap();
    let mut p = MechanismParams::new(p.release.clone(), 1e-3, crate::model::units::ResponseScale::Range(range));
    p.draws = Draws::new(2).unwrap();
    p.units = Some("µg/m³".into());
    let m = p.check().unwrap();
    assert_eq!(m.params().release.scale, 12.0);
    assert_eq!(m.privacy().epsilon, plain.report.privacy.epsilon);
    let r = m.release(&raw, &grid_1d(30), &mut ReleaseRng::seeded(5)).unwrap();
    assert_eq!(r.diagnostics.policy.responses_clipped, 1);
    for (a, b) in r.paths.iter().zip(&plain.paths) {
        for (x, y) in a.iter().zip(b) {
            assert!((x - (30.0 + y)).abs() < 1e-12, "{x} vs {y}");
        }
    }
    assert_eq!(r.report.data_policy.response_range, Some(range));
    assert_eq!(r.report.data_policy.units.as_deref(), Some("µg/m³"));
    assert_eq!(r.report.data_policy.scale_meaning.sigma_unit, 1.0);
    assert_eq!(r.report.data_policy.scale_meaning.prior_mean, 30.0);
    // M_Y must be the range's half-width.
    let mut bad = p.clone();
    bad.release.response_bound = 1.0;
    assert!(bad.check().unwrap_err().to_string().contains("response bound M_Y"));
}

/// Issue 40: the same σ means the same prior under both response flags.
/// `Range(−M, M)` and `Bound(M)` with the same σ and η are one mechanism:
/// the same ε and, with the same seed, the same released paths (so the same
/// noise scale), bit for bit.
#[test]
fn the_same_sigma_gives_the_same_release_under_both_response_flags() {
    use crate::model::units::{ResponseRange, ResponseScale};
    let data = Dataset::new(data_1d().x().clone(), data_1d().y().iter().map(|v| 40.0 * v).collect()).unwrap();
    for (sigma, eta) in [(5.0, 0.0), (20.0, 3.0), (80.0, 0.5)] {
        let mut model = release_1d(6);
        model.scale = sigma;
        model.gp_noise = eta;
        let bound = MechanismParams::new(model.clone(), 1e-3, ResponseScale::Bound(40.0)).check().unwrap();
        let range = MechanismParams::new(model, 1e-3, ResponseScale::Range(ResponseRange::new(-40.0, 40.0).unwrap()))
            .check()
            .unwrap();
        assert_eq!(bound.privacy().epsilon, range.privacy().epsilon, "σ = {sigma}");
        let a = bound.release(&data, &grid_1d(25), &mut ReleaseRng::seeded(9)).unwrap();
        let b = range.release(&data, &grid_1d(25), &mut ReleaseRng::seeded(9)).unwrap();
        assert_eq!(a.paths, b.paths, "σ = {sigma}");
    }
}

/// The guarantee is invariant under a change of the responses' units: M_Y,
/// σ and η all times c give the same ε (to 1e-9 relative) and paths times c
/// (so a plan or a stored release whose σ was in half-widths converts
/// exactly by multiplying σ and η by the half-width).
#[test]
fn the_guarantee_is_invariant_under_a_change_of_units() {
    use crate::model::units::ResponseScale;
    let mut model = release_1d(6);
    model.scale = 0.7;
    model.gp_noise = 0.2;
    let one = MechanismParams::new(model.clone(), 1e-3, ResponseScale::Bound(1.0)).check().unwrap();
    let a = one.release(&data_1d(), &grid_1d(20), &mut ReleaseRng::seeded(3)).unwrap();
    for c in [0.01, 7.5, 3000.0] {
        let mut scaled = model.clone();
        scaled.scale *= c;
        scaled.gp_noise *= c;
        let m = MechanismParams::new(scaled, 1e-3, ResponseScale::Bound(c)).check().unwrap();
        let e = (m.privacy().epsilon, one.privacy().epsilon);
        assert!((e.0 - e.1).abs() <= 1e-9 * e.1, "c = {c}: ε {} vs {}", e.0, e.1);
        let data = Dataset::new(data_1d().x().clone(), data_1d().y().iter().map(|v| c * v).collect()).unwrap();
        let b = m.release(&data, &grid_1d(20), &mut ReleaseRng::seeded(3)).unwrap();
        for (x, y) in b.paths.iter().flatten().zip(a.paths.iter().flatten()) {
            assert!((x - c * y).abs() <= 1e-8 * c * (1.0 + y.abs()), "c = {c}: {x} vs {c}·{y}");
        }
    }
}

/// `PosteriorSystem::PerRecord` (the n × n system of `gpdp serve`) and the
/// default aggregated system are the same posterior: with the same
/// generator, lazy paths over data with repeated covariates draw the same
/// values batch after batch (to rounding, 1e-9), with the same report.
#[test]
fn per_record_lazy_paths_draw_the_same_values() {
    let mut p = MechanismParams::new(release_1d(9), 1e-3, crate::model::units::ResponseScale::Bound(1.0));
    p.draws = Draws::new(2).unwrap();
    let m = p.check().unwrap();
    let x = [0.2, 0.2, 0.2, 0.5, 0.5, 0.9, 0.05, 0.05, 0.61];
    let y = [0.4, -0.9, 0.1, 1.0, 0.3, -0.2, 0.8, 0.75, -0.5];
    let data = Dataset::new(Points::from_1d(&x), y.to_vec()).unwrap();
    let mut a = m.sample_paths(&data, 40, ReleaseRng::seeded(7)).unwrap();
    let mut b = m.sample_paths_with(&data, 40, ReleaseRng::seeded(7), PosteriorSystem::PerRecord).unwrap();
    let batches = [vec![0.2, 0.33, 0.9], vec![0.0, 0.2, 0.21, 1.0], vec![0.5, 0.55, 0.05, 0.7]];
    for (k, q) in batches.iter().enumerate() {
        let q = Points::from_1d(q);
        for l in 0..2 {
            assert_eq!(b.paths()[l].unrevealed(&q), a.paths()[l].unrevealed(&q));
            let (va, vb) = (a.eval(l, &q).unwrap(), b.eval(l, &q).unwrap());
            for (u, v) in va.iter().zip(&vb) {
                assert!((u - v).abs() < 1e-9 * (1.0 + u.abs()), "batch {k} path {l}: {va:?} vs {vb:?}");
            }
        }
    }
    assert_eq!(a.report(), b.report());
    // Restored per record from the stored values: old points identical.
    let stored: Vec<(Points, Vec<f64>)> =
        b.paths().iter().map(|p| (p.points().clone(), p.internal_values().to_vec())).collect();
    let q = Points::from_1d(&batches[1]);
    let mut c = m.restore_paths_with(&data, 40, ReleaseRng::seeded(1), stored, PosteriorSystem::PerRecord).unwrap();
    assert_eq!(c.eval(0, &q).unwrap(), b.eval(0, &q).unwrap());
    assert_eq!(c.paths()[0].unrevealed(&Points::from_1d(&[0.2, 0.8, 0.8, 0.81])), 2);
}
