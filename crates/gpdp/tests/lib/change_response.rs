//! The change-one-response accountant against an independent numpy/scipy
//! evaluation (scripts/make_change_response_fixture.py: the closed form by
//! numpy's eigendecomposition, the Gaussian profile by scipy.stats.norm and
//! brentq): the certified distance μ and ε(δ) lie at or above the reference
//! and within 10⁻⁶ of it, with and without the covariates
//! (docs/proofs/change-response.md).

use gpdp::privacy::change_response::{mu_with_covariates, mu_without_covariates};
use gpdp::privacy::gaussian::epsilon_for_delta;
use gpdp::{Draws, Kernel, KernelKind, Points};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn covariates(case: &str) -> Points {
    let mut r = csv::Reader::from_path(format!("{DATA}/change_response_{case}.csv")).unwrap();
    let v: Vec<f64> = r
        .records()
        .flat_map(|rec| rec.unwrap().iter().map(|s| s.parse::<f64>().unwrap()).collect::<Vec<_>>())
        .collect();
    Points::new(v, 2).unwrap()
}

/// a ≥ b (up to 10⁻¹²) and a within `rel` of b.
fn above_and_close(what: &str, a: f64, b: f64, rel: f64) {
    assert!(a >= b * (1.0 - 1e-12), "{what}: {a} below the reference {b}");
    assert!(a <= b * (1.0 + rel), "{what}: {a} vs the reference {b}");
}

#[test]
fn the_accountant_matches_numpy_and_scipy() {
    let mut r = csv::Reader::from_path(format!("{DATA}/change_response.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    let mut cases = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let get = |k: &str| rec[head.iter().position(|h| h == k).unwrap()].to_string();
        let num = |k: &str| get(k).parse::<f64>().unwrap();
        let case = get("case");
        let kind: KernelKind = get("kernel").parse().unwrap();
        let kernel = Kernel::new(kind, num("lengthscale")).unwrap();
        let x = covariates(&case);
        assert_eq!(x.len(), num("covariates") as usize);
        let draws = Draws::new(num("draws") as u64).unwrap();
        let (m, ridge, scale, eta, delta) =
            (num("response_bound"), num("ridge"), num("scale"), num("gp_noise"), num("delta"));
        let (mu, _) = mu_with_covariates(&kernel, &x, m, ridge, scale, eta, draws).unwrap();
        let free = mu_without_covariates(m, ridge, scale, eta, draws).unwrap();
        above_and_close(&format!("{case}: μ"), mu, num("mu"), 1e-6);
        above_and_close(&format!("{case}: μ without covariates"), free, num("mu_free"), 1e-12);
        let eps = epsilon_for_delta(mu, delta).unwrap();
        let eps_free = epsilon_for_delta(free, delta).unwrap();
        eprintln!(
            "{case}: μ = {mu:.9} (numpy {}), ε = {eps:.9} (scipy {}); without covariates ε = {eps_free:.9}",
            get("mu"),
            get("epsilon")
        );
        above_and_close(&format!("{case}: ε"), eps, num("epsilon"), 1e-6);
        above_and_close(&format!("{case}: ε without covariates"), eps_free, num("epsilon_free"), 1e-6);
        if case == "sensors400" {
            // The acceptance: ≤ 1.32 with and without the covariates.
            assert!(eps <= 1.32 && eps_free <= 1.32, "{eps} {eps_free}");
        }
        cases += 1;
    }
    assert_eq!(cases, 3);
}

mod releases {
    //! The relation as a release parameter: the mechanism's guarantee, its
    //! report, calibration, refusals and the ledger's composition.
    use super::covariates;
    use gpdp::ledger::Ledger;
    use gpdp::privacy::change_response::account;
    use gpdp::privacy::gaussian::{compose, epsilon_for_delta};
    use gpdp::{
        Conversion, Dataset, Draws, Grid, Kernel, MechanismParams, NeighbouringRelation, Points, Query, ReleaseParams,
        ReleaseRng, ResponseScale, Solve,
    };

    const DELTA: f64 = 0.0013732006791326464;

    fn sensors() -> (MechanismParams, Points) {
        let x = covariates("sensors400");
        let model =
            ReleaseParams::new(Kernel::exponential(0.14).unwrap(), "box:0,1,0,1".parse().unwrap(), 400, 5.7063, 0.12);
        let mut p = MechanismParams::new(model, DELTA, ResponseScale::Bound(1.0));
        p.relation = NeighbouringRelation::ChangeResponse;
        (p, x)
    }

    fn data(x: &Points) -> Dataset {
        let y: Vec<f64> = (0..x.len()).map(|i| ((i * 37) % 200) as f64 / 100.0 - 1.0).collect();
        Dataset::new(x.clone(), y).unwrap()
    }

    /// The mechanism's guarantee is the accountant's with the public
    /// covariates (and the bound for any covariates without them), its report
    /// states the relation in the field and the sentence, and a replace-one
    /// mechanism's ε is the RDP accountant's, several times larger.
    #[test]
    fn the_mechanism_states_the_exact_gaussian_guarantee_and_its_relation() {
        let (mut p, x) = sensors();
        let free = p.check().unwrap();
        let free_ref = account(&p.release, Draws::ONE, None, Some(DELTA), None).unwrap();
        assert_eq!(free.privacy().epsilon, free_ref.epsilon);
        assert!(free.privacy().gaussian.as_ref().unwrap().covariates.is_none());
        p.public_covariates = Some(x.clone());
        let m = p.check().unwrap();
        let with = account(&p.release, Draws::ONE, Some(&x), Some(DELTA), None).unwrap();
        assert_eq!(m.privacy().epsilon, with.epsilon);
        assert!((m.privacy().epsilon - 1.2481007666134178).abs() < 1e-6 * 1.25, "{}", m.privacy().epsilon);
        assert!(m.privacy().epsilon < free.privacy().epsilon);
        let g = m.privacy().gaussian.as_ref().unwrap();
        assert_eq!((g.mu, g.covariates, g.release.n), (with.mu, Some(400), 400));
        let rdp = g.rdp_epsilon.unwrap();
        assert!(rdp > m.privacy().epsilon && rdp < 1.6 * m.privacy().epsilon, "RDP route {rdp}");
        let rel = m
            .release(
                &data(&x),
                &Query::Grid(Grid::parse("8x8", &p.release.domain).unwrap()),
                &mut ReleaseRng::seeded(1),
            )
            .unwrap();
        assert_eq!(rel.report.neighbouring_relation, NeighbouringRelation::ChangeResponse);
        assert!(rel.report.statement.contains("protects each reading"), "{}", rel.report.statement);
        assert!(rel.report.statement.contains("exact Gaussian accounting"));
        let json = serde_json::to_value(&rel.report).unwrap();
        assert_eq!(json["neighbouring_relation"], "change-one-response, covariates public");
        assert_eq!(json["privacy"]["gaussian"]["covariates"], 400);
        // The same parameters under replace-one.
        let mut r1 = p.clone();
        r1.relation = NeighbouringRelation::ReplaceOne;
        r1.public_covariates = None;
        let m1 = r1.check().unwrap();
        assert!(m1.privacy().gaussian.is_none());
        assert!(
            m1.privacy().epsilon > 3.0 * m.privacy().epsilon,
            "{} vs {}",
            m1.privacy().epsilon,
            m.privacy().epsilon
        );
        let rel1 = m1
            .release(
                &data(&x),
                &Query::Grid(Grid::parse("4x4", &p.release.domain).unwrap()),
                &mut ReleaseRng::seeded(1),
            )
            .unwrap();
        assert_eq!(rel1.report.neighbouring_relation, NeighbouringRelation::ReplaceOne);
        assert!(rel1.report.statement.contains("protects each record"), "{}", rel1.report.statement);
        // Public covariates under replace-one are refused.
        r1.public_covariates = Some(x);
        assert!(r1.check().unwrap_err().to_string().contains("only under change-one-response"));
    }

    /// Calibrating the ridge: certified (ε ≤ target) and tight (0.1% less
    /// ridge exceeds it), with and without covariates; draws likewise.
    #[test]
    fn calibration_under_change_response_is_certified_and_tight() {
        let (mut p, x) = sensors();
        for cov in [None, Some(x)] {
            p.public_covariates = cov;
            let m = p.calibrate(Solve::Ridge, 1.0).unwrap();
            let c = m.calibration().unwrap();
            assert!(m.privacy().epsilon <= 1.0 && m.privacy().epsilon > 0.999, "{}", m.privacy().epsilon);
            assert!(c.permissive_epsilon.unwrap() > 1.0);
            let mut q = p.clone();
            q.release.ridge = c.value;
            assert_eq!(q.check().unwrap().privacy().epsilon, m.privacy().epsilon);
            let floored = p.calibrate_with_floor(1.0, Some(2.0 * c.value)).unwrap();
            assert_eq!(floored.accounted_release().params().ridge, 2.0 * c.value);
            assert!(floored.privacy().epsilon < 1.0);
        }
        assert!(p.calibrate(Solve::Draws, 1.0).is_err());
    }

    /// Misuse: a release whose covariates differ from the declared public
    /// ones, covariates of the wrong size or dimension, or outside the
    /// domain — each refused with a message naming it, before anything is drawn.
    #[test]
    fn misuse_is_refused_with_a_clear_message() {
        let (mut p, x) = sensors();
        p.public_covariates = Some(x.clone());
        let m = p.check().unwrap();
        let mut rows: Vec<Vec<f64>> = x.iter().map(|r| r.to_vec()).collect();
        rows[9][1] += 0.01;
        let moved = Dataset::new(Points::from_rows(&rows).unwrap(), data(&x).y().to_vec()).unwrap();
        let e = m.check_data(&moved).unwrap_err().to_string();
        assert!(e.contains("row 10") && e.contains("declared public covariates"), "{e}");
        let q = Query::Grid(Grid::parse("4x4", &p.release.domain).unwrap());
        assert!(m.release(&moved, &q, &mut ReleaseRng::seeded(1)).is_err());
        assert!(m.sample_paths(&moved, 10, ReleaseRng::seeded(1)).is_err());
        assert!(m.release(&data(&x), &q, &mut ReleaseRng::seeded(1)).is_ok());
        // Wrong size, wrong dimension, outside the domain.
        let short = Points::from_rows(&rows[..399]).unwrap();
        p.public_covariates = Some(short);
        assert!(p.check().unwrap_err().to_string().contains("399 rows"), "size");
        p.public_covariates = Some(Points::from_1d(&vec![0.5; 400]));
        assert!(p.check().unwrap_err().to_string().contains("1-D"), "dimension");
        rows[4][0] = 1.5;
        p.public_covariates = Some(Points::from_rows(&rows).unwrap());
        let e = p.check().unwrap_err().to_string();
        assert!(e.contains('5') && e.to_lowercase().contains("domain"), "{e}");
    }

    /// With a snapping lattice the guarantee is computed for the snapped
    /// covariates (what the release fits), not the raw ones.
    #[test]
    fn snapped_covariates_are_what_is_accounted() {
        let (mut p, x) = sensors();
        p.public_covariates = Some(x.clone());
        p.covariate_lattice = Some(gpdp::CovariateLattice::snapping(vec![5, 5]).unwrap());
        let m = p.check().unwrap();
        let snapped: Vec<[f64; 2]> =
            x.iter().map(|r| [(r[0] * 4.0).round() / 4.0, (r[1] * 4.0).round() / 4.0]).collect();
        let snapped = Points::from_rows(&snapped).unwrap();
        let want = account(&p.release, Draws::ONE, Some(&snapped), Some(DELTA), None).unwrap();
        assert_eq!(m.privacy().epsilon, want.epsilon);
        let raw = account(&p.release, Draws::ONE, Some(&x), Some(DELTA), None).unwrap();
        assert_ne!(m.privacy().epsilon, raw.epsilon);
    }

    /// The ledger: Gaussian entries compose exactly (μ² adds), a replace-one
    /// entry of the same dataset composes with them through the stored Rényi
    /// curves, and the budget refuses what would exceed it.
    #[test]
    fn the_ledger_composes_gaussian_entries_exactly_and_mixed_ones_by_curves() {
        let dir = std::env::temp_dir().join(format!("gpdp-cr-ledger-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut ledger = Ledger::open(&dir.join("l.sqlite")).unwrap();
        ledger.init("s", 3.0, DELTA, Conversion::Improved).unwrap();
        let (mut p, x) = sensors();
        p.public_covariates = Some(x.clone());
        let m = p.check().unwrap();
        let mu = m.privacy().gaussian.as_ref().unwrap().mu;
        let first = ledger.reserve_for("s", &m, &data(&x)).unwrap();
        assert_eq!(first.epsilon, m.privacy().epsilon);
        // One entry: the composed distance is μ itself, rounded up once more.
        assert!(first.composed_epsilon >= first.epsilon && first.composed_epsilon - first.epsilon <= 1e-12);
        let second = ledger.reserve("s", &m).unwrap();
        let exact = epsilon_for_delta(compose(&[mu, mu]).unwrap(), DELTA).unwrap();
        assert_eq!(second.composed_epsilon, exact);
        assert!(exact < 2.0 * first.epsilon);
        let entries = ledger.entries("s").unwrap();
        assert_eq!(entries[0].params.relation, NeighbouringRelation::ChangeResponse);
        assert_eq!(entries[0].params.gaussian_mu, Some(mu));
        // A replace-one release of the same data: the Rényi route, above the exact pair.
        let mut r1 = p.clone();
        r1.relation = NeighbouringRelation::ReplaceOne;
        r1.public_covariates = None;
        r1.release.ridge = 40.0;
        let m1 = r1.check().unwrap();
        let third = ledger.reserve("s", &m1).unwrap();
        assert!(third.composed_epsilon > exact && third.composed_epsilon > third.epsilon, "{third:?}");
        let mut acc = gpdp::privacy::RdpAccountant::new();
        acc.compose(gpdp::PrivacyEvent::gaussian(mu).unwrap()).unwrap();
        acc.compose(gpdp::PrivacyEvent::gaussian(mu).unwrap()).unwrap();
        acc.compose_release(m1.accounted_release().clone(), Draws::ONE);
        let direct = acc.epsilon(DELTA, Conversion::Improved).unwrap().epsilon;
        // The ledger converts the curves tabulated on its fixed orders: at or
        // above the accountant's optimum over all orders, and within 0.1%.
        let c = third.composed_epsilon;
        assert!(c >= direct * (1.0 - 1e-12) && c <= direct * 1.001, "{c} vs {direct}");
        // Beyond the budget: refused.
        let refused = (0..20).find_map(|_| ledger.reserve("s", &m).err()).expect("the budget ε = 3 runs out");
        assert!(refused.to_string().contains("budget"), "{refused}");
        let last = ledger.entries("s").unwrap().last().unwrap().composed_epsilon;
        assert!(last <= 3.0, "{last}");
        drop(ledger);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
