//! Misusing the release API through its public surface: every attempt to
//! release something the guarantee does not cover is refused with an error
//! that says what is wrong (the attempts that cannot even be written are the
//! `compile_fail` examples in `lib.rs`: assembling a mechanism by hand,
//! changing its parameters, asking for other draws, reaching the samplers,
//! composing study-only constants).

use gpdp::{
    CovariateLattice, Dataset, Domain, Draws, Error, Grid, Kernel, MechanismParams, OnUnbounded, Points, Query,
    ReleaseParams, ReleaseRng, SamplerPolicy, Solve,
};

fn model(n: usize) -> ReleaseParams {
    ReleaseParams::new(Kernel::exponential(0.3).unwrap(), Domain::interval(0.0, 1.0).unwrap(), n, 0.8, 0.5)
}

fn data(x: &[f64], y: &[f64]) -> Dataset {
    Dataset::new(Points::from_1d(x), y.to_vec()).unwrap()
}

fn six() -> Dataset {
    data(&[0.05, 0.2, 0.21, 0.5, 0.77, 0.9], &[0.4, -0.9, -0.7, 1.0, 0.3, -0.2])
}

fn grid() -> Query {
    Query::Grid(Grid::parse("11", &Domain::interval(0.0, 1.0).unwrap()).unwrap())
}

fn refused(p: &MechanismParams, d: &Dataset, q: &Query, needle: &str) {
    let m = p.check().unwrap();
    let e = m.release(d, q, &mut ReleaseRng::seeded(1)).unwrap_err().to_string();
    assert!(e.contains(needle), "'{e}' lacks '{needle}'");
}

#[test]
fn data_the_release_was_not_accounted_for_are_refused() {
    let p = MechanismParams::new(model(6), 1e-3, gpdp::ResponseScale::Bound(1.0));
    // Wrong n, both ways.
    refused(&p, &data(&[0.1, 0.2, 0.3], &[0.0; 3]), &grid(), "3 records but the release was accounted for n = 6");
    let seven = data(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], &[0.0; 7]);
    refused(&p, &seven, &grid(), "7 records but the release was accounted for n = 6");
    // A covariate outside the domain.
    refused(&p, &data(&[0.1, 0.2, 0.3, 0.4, -0.5, 0.6], &[0.0; 6]), &grid(), "data row 5");
    // Covariates of another dimension.
    let two_d = Dataset::new(Points::new(vec![0.1; 12], 2).unwrap(), vec![0.0; 6]).unwrap();
    refused(&p, &two_d, &grid(), "2-D covariates but the domain interval:0,1 is 1-D");
    // Responses beyond M_Y when the policy rejects them.
    let mut reject = p.clone();
    reject.on_unbounded = OnUnbounded::Reject;
    refused(&reject, &data(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], &[0.0, 0.0, 0.0, 0.0, 0.0, -1.5]), &grid(), "data row 6");
    // A covariate off the declared lattice.
    let mut lattice = p.clone();
    lattice.covariate_lattice = Some(CovariateLattice::parse("11", 1).unwrap());
    refused(&lattice, &data(&[0.1, 0.2, 0.3, 0.4, 0.55, 0.6], &[0.0; 6]), &grid(), "data row 5");
    // Non-finite values never become a dataset.
    assert!(Dataset::new(Points::from_1d(&[0.1, f64::NAN]), vec![0.0, 0.0]).is_err());
    assert!(Dataset::new(Points::from_1d(&[0.1, 0.2]), vec![0.0, f64::INFINITY]).is_err());
}

#[test]
fn parameters_that_void_the_guarantee_are_refused_before_any_data() {
    let bad = |f: &dyn Fn(&mut MechanismParams), needle: &str| {
        let mut p = MechanismParams::new(model(6), 1e-3, gpdp::ResponseScale::Bound(1.0));
        f(&mut p);
        let e = p.check().unwrap_err().to_string();
        assert!(e.contains(needle), "'{e}' lacks '{needle}'");
    };
    bad(&|p| p.release.ridge = 0.0, "ridge r (0)");
    bad(&|p| p.release.ridge = f64::NAN, "ridge r (NaN)");
    bad(&|p| p.release.scale = f64::INFINITY, "finite for a release");
    bad(&|p| p.release.scale = -1.0, "scale σ (-1)");
    bad(&|p| p.release.gp_noise = -0.1, "GP noise η (-0.1)");
    bad(&|p| p.delta = 0.0, "δ (0)");
    bad(&|p| p.max_epsilon = Some(0.1), "refusing to release");
    bad(&|p| p.max_epsilon = Some(f64::NAN), "max ε (NaN)");
    bad(&|p| p.release.response_bound = 0.0, "response bound M_Y (0)");
    bad(&|p| p.release.sensitivity = "diagonal".parse().unwrap(), "B.5");
    bad(&|p| p.covariate_lattice = Some(CovariateLattice::parse("5x5", 2).unwrap()), "2-D but the domain");
    assert!(Draws::new(0).is_err(), "zero draws cannot even be written down");
    // Lemma B.8 is an assumption about the data: it must be stated, and a zero
    // norm with a finite σ is refused.
    let b8 = |p: &mut MechanismParams| {
        p.release.sensitivity = "rkhs".parse().unwrap();
        p.release.rkhs_norm = Some(2.0);
    };
    bad(&b8, "state that assumption explicitly");
    bad(
        &|p| {
            b8(p);
            p.assume_rkhs_responses = true;
            p.release.rkhs_norm = Some(0.0);
        },
        "RKHS norm ‖f*‖ (0) must be > 0",
    );
    let e =
        MechanismParams::new(model(6), 1e-3, gpdp::ResponseScale::Bound(1.0)).calibrate(Solve::Draws, 3.0).unwrap_err();
    assert!(e.to_string().contains("fix the draws"), "{e}");
}

#[test]
fn a_lemma_b8_release_states_its_assumption_and_never_refuses_on_the_values() {
    let mut p = MechanismParams::new(model(6), 1e-3, gpdp::ResponseScale::Bound(2.0));
    p.release.sensitivity = "rkhs".parse().unwrap();
    p.release.rkhs_norm = Some(2.0);
    p.assume_rkhs_responses = true;
    let m = p.check().unwrap();
    let r = m.release(&six(), &grid(), &mut ReleaseRng::seeded(5)).unwrap();
    assert_eq!(r.report.privacy.components[0].sensitivity_source, gpdp::Lemma::B8Tight);
    assert!(r.report.assumptions[0].contains("noiseless value y = f*(x)"));
    // A response beyond M_Y ≥ B contradicts the assumption: it is clipped like any other (the
    // operator is told through the diagnostics), never refused — a refusal for one dataset and
    // not its neighbour would itself reveal the data (issue 22, item 1).
    let clipped = data(&[0.05, 0.2, 0.21, 0.5, 0.77, 0.9], &[0.4, -0.9, -0.7, 2.5, 0.3, -0.2]);
    let r = m.release(&clipped, &grid(), &mut ReleaseRng::seeded(5)).unwrap();
    assert_eq!(r.diagnostics.policy.responses_clipped, 1);
    // B > M_Y is refused up front, from public inputs alone.
    let mut q = p.clone();
    q.release.response_bound = 1.0;
    let e = q.check().unwrap_err().to_string();
    assert!(e.contains("RKHS norm B = 2 exceeds the response bound M_Y = 1"), "{e}");
    // A zero norm is fine for the covariance-only bound.
    let mut cov = model(6);
    cov.sensitivity = "rkhs".parse().unwrap();
    cov.rkhs_norm = Some(0.0);
    cov.scale = f64::INFINITY;
    assert!(cov.check().is_ok());
}

#[test]
fn the_release_has_exactly_the_accounted_draws_and_report() {
    for l in [1u64, 4] {
        let mut p = MechanismParams::new(model(6), 1e-3, gpdp::ResponseScale::Bound(1.0));
        p.draws = Draws::new(l).unwrap();
        let m = p.check().unwrap();
        let r = m.release(&six(), &grid(), &mut ReleaseRng::seeded(2)).unwrap();
        assert_eq!(r.paths.len() as u64, l);
        assert_eq!(&r.report.privacy, m.privacy());
        assert_eq!(r.report.privacy.components[0].draws.get(), l);
        assert_eq!(r.report.privacy.components[0].ridge, 0.8);
        // The report is the accountant's for exactly these public parameters.
        let direct = model(6).check().unwrap().epsilon(Draws::new(l).unwrap(), 1e-3, p.conversion).unwrap();
        assert_eq!(r.report.privacy, direct);
    }
    // A lattice sampler asked for where it cannot serve is refused, not replaced.
    let mut p = MechanismParams::new(model(6), 1e-3, gpdp::ResponseScale::Bound(1.0));
    p.sampler = SamplerPolicy::Lattice;
    let m = p.check().unwrap();
    let e = m.release(&six(), &grid(), &mut ReleaseRng::seeded(3)).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
}

/// Issue 22, item 1: with Lemma B.8 and B > M_Y, a dataset whose responses are exact values of an
/// f* with ‖f*‖_H ≤ B could exceed M_Y and be refused while its replace-one neighbour was
/// released. Now B > M_Y is refused before any data, and with B ≤ M_Y both neighbours are
/// released: the outcome (publish or refuse) is the same for both, whatever M_Y.
#[test]
fn lemma_b8_publishes_or_refuses_both_neighbours_alike() {
    // The reproducer: exponential ℓ = 0.5 on [0, 1], f* = 1.5·k(·, 0.5), ridge 1, scale 1.
    let f = |x: f64| 1.5 * (-(x - 0.5_f64).abs() / 0.5).exp();
    assert!((f(0.1) - 0.6739934461758323).abs() < 1e-15 && (f(0.0) - 0.5518191617571635).abs() < 1e-15);
    let d = data(&[0.1, 0.9, 0.0], &[0.6739934461758323, 0.6739934461758323, 0.5518191617571635]);
    let d2 = data(&[0.1, 0.9, 0.5], &[0.6739934461758323, 0.6739934461758323, 1.5]);
    let kernel = Kernel::exponential(0.5).unwrap();
    for m_y in [1.0, 1.2, 1.5, 2.0] {
        let release = ReleaseParams::new(kernel, Domain::interval(0.0, 1.0).unwrap(), 3, 1.0, 1.0);
        let mut p = MechanismParams::new(release, 1e-3, gpdp::ResponseScale::Bound(m_y));
        p.release.sensitivity = "rkhs".parse().unwrap();
        p.release.rkhs_norm = Some(1.5);
        p.assume_rkhs_responses = true;
        let outcome = |data: &Dataset| -> Result<(), String> {
            let m = p.check().map_err(|e| e.to_string())?;
            m.release(data, &grid(), &mut ReleaseRng::seeded(3)).map(|_| ()).map_err(|e| e.to_string())
        };
        let (a, b) = (outcome(&d), outcome(&d2));
        assert_eq!(a.is_ok(), b.is_ok(), "M_Y = {m_y}: {a:?} vs {b:?}");
        if m_y < 1.5 {
            assert!(a.unwrap_err().contains("exceeds the response bound"), "M_Y = {m_y}");
        } else {
            assert!(a.is_ok(), "M_Y = {m_y}");
        }
    }
}
