use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn the_test_functions_have_their_published_minima() {
    // Published values (Surjanovic & Bingham's library; Forrester et al. 2008).
    let f = TestFunction::Forrester;
    assert!(close(f.native(&[0.75725]), -6.02074, 1e-5), "{}", f.native(&[0.75725]));
    assert!(close(f.f_min(), -6.02074, 1e-5));
    let b = TestFunction::Branin;
    let pi = std::f64::consts::PI;
    for x in [[pi, 2.275], [-pi, 12.275], [9.42478, 2.475]] {
        assert!(close(b.native(&x), 0.397887, 1e-6), "{x:?}: {}", b.native(&x));
    }
    assert!(close(b.f_min(), 0.397887, 1e-6));
    let h3 = TestFunction::Hartmann3;
    let v = h3.native(&[0.114614, 0.555649, 0.852547]);
    assert!(close(v, -3.86278, 1e-5), "{v}");
    assert!(close(h3.f_min(), -3.86278, 1e-5));
    let h6 = TestFunction::Hartmann6;
    let v = h6.native(&[0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]);
    assert!(close(v, -3.32237, 1e-5), "{v}");
    assert!(close(h6.f_min(), -3.32237, 1e-5));
    // f_min is not above the published minimiser's value (to rounding).
    for (f, x) in [
        (TestFunction::Forrester, vec![0.75725]),
        (TestFunction::Hartmann3, vec![0.114614, 0.555649, 0.852547]),
        (TestFunction::Hartmann6, vec![0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]),
    ] {
        assert!(f.f_min() <= f.native(&x) + 1e-12, "{f}");
    }
}

#[test]
fn the_rescaled_objective_lies_in_minus_one_one_and_is_one_at_the_minimiser() {
    // g = 1 at the minimiser (in unit coordinates) …
    let pi = std::f64::consts::PI;
    assert!(close(TestFunction::Branin.g(&[(pi + 5.0) / 15.0, 2.275 / 15.0]), 1.0, 1e-9));
    assert!(close(TestFunction::Forrester.g(&[0.7572487577134084]), 1.0, 1e-12));
    assert!(close(TestFunction::Forrester.g(&[1.0]), -1.0, 1e-12));
    assert!(close(TestFunction::Branin.g(&[0.0, 0.0]), -1.0, 1e-12));
    // … and within [−1, 1] on fine grids (1-D, 2-D) and on many uniform points.
    for i in 0..=100_000 {
        let g = TestFunction::Forrester.g(&[i as f64 / 100_000.0]);
        assert!((-1.0..=1.0).contains(&g), "forrester at {i}: {g}");
    }
    for i in 0..=600 {
        for j in 0..=600 {
            let g = TestFunction::Branin.g(&[i as f64 / 600.0, j as f64 / 600.0]);
            assert!((-1.0..=1.0).contains(&g), "branin at {i},{j}: {g}");
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for f in [TestFunction::Hartmann3, TestFunction::Hartmann6] {
        let mut best = f64::NEG_INFINITY;
        for _ in 0..200_000 {
            let x: Vec<f64> = (0..f.dim()).map(|_| rng.random::<f64>()).collect();
            let g = f.g(&x);
            assert!(g > -1.0 && g <= 1.0, "{f} at {x:?}: {g}");
            best = best.max(g);
        }
        assert!(best > 0.5, "{f}: {best}");
    }
}

#[test]
fn regret_bookkeeping_on_a_hand_made_sequence() {
    // g* = 1; chosen values 0.2, 0.5, 0.4, 1.0, 0.9.
    let (s, c) = regret(&[0.2, 0.5, 0.4, 1.0, 0.9], 1.0);
    let want_s = [0.8, 0.5, 0.5, 0.0, 0.0];
    let want_c = [0.8, 1.3, 1.9, 1.9, 2.0];
    for k in 0..5 {
        assert!(close(s[k], want_s[k], 1e-15), "simple {k}: {}", s[k]);
        assert!(close(c[k], want_c[k], 1e-14), "cumulative {k}: {}", c[k]);
    }
    let (m, se) = mean_se(&[1.0, 2.0, 3.0, 6.0]);
    assert_eq!(m, 3.0);
    // Sample SD √(14/3), SE = √(14/3)/2.
    assert!(close(se, (14.0f64 / 3.0).sqrt() / 2.0, 1e-15));
    assert!(mean_se(&[2.0]).1.is_nan());
}

/// A tiny study of one function.
fn tiny(f: TestFunction) -> ThompsonStudy {
    let mut st = ThompsonStudy::new(vec![f]);
    st.rounds = vec![5];
    st.seeds = 2;
    st.epsilons = vec![3.0];
    st.grid_1d = 64;
    st.grid_2d = 8;
    st.candidates = 64;
    st
}

#[test]
fn the_ridge_calibration_meets_the_target_and_a_smaller_ridge_exceeds_it() {
    let st = tiny(TestFunction::Forrester);
    let base = st.loop_config(0, 1.0, None).unwrap();
    for target in [1.0, 3.0, 10.0] {
        let r = calibrate_ridge(&base, 4, 20, target).unwrap();
        let eps = |r: f64| {
            let mut c = base.clone();
            c.mechanism.release.ridge = r;
            c.epsilon_after(4, 20, 1).unwrap()
        };
        let at = eps(r);
        assert!(at <= target, "ε = {target}: ε(r = {r}) = {at}");
        assert!(at > 0.99 * target, "ε = {target}: ε(r = {r}) = {at} is far below the target");
        let below = eps(r * (1.0 - 3e-4));
        assert!(below > target, "ε = {target}: a ridge 3·10⁻⁴ smaller gives {below}");
    }
    assert!(calibrate_ridge(&base, 4, 20, 0.0).is_err());
}

#[test]
fn a_private_loop_reaches_at_most_its_target_and_units_are_reproducible() {
    let st = tiny(TestFunction::Forrester);
    let p = problem(&st, 0).unwrap();
    assert_eq!(p.candidates.len(), 64);
    assert_eq!(p.g_star, p.values.iter().copied().fold(f64::MIN, f64::max));
    for method in st.methods() {
        let unit = Unit { function: 0, method, seed: 1 };
        let a = run_unit(&st, &p, unit).unwrap();
        let b = run_unit(&st, &p, unit).unwrap();
        assert_eq!(a, b, "{}", method.label());
        assert_eq!(a.values.len(), 5);
        // Every chosen value is the value of a candidate.
        assert!(a.values.iter().all(|v| p.values.contains(v)), "{}", method.label());
        match method {
            Method::Private { epsilon } => {
                let e = a.epsilon.unwrap();
                assert!(e <= epsilon, "{e}");
                let r = a.ridge.unwrap();
                assert_eq!(r.ridge, r.calibrated.max(st.plain_ridge()));
                // At the calibrated ridge the loop reaches the target (to 1%).
                if r.ridge == r.calibrated {
                    assert!(e > 0.99 * epsilon, "{e}");
                }
            }
            _ => assert!(a.epsilon.is_none() && a.ridge.is_none()),
        }
    }
    // The initial records are common to the methods and differ between seeds.
    let (d0, d1) = (initial_data(&st, 0, 0).unwrap(), initial_data(&st, 0, 1).unwrap());
    assert_eq!(d0.len(), 4);
    assert_ne!(d0.y(), d1.y());
}

#[test]
fn the_shard_runs_and_the_curves_cover_every_unit() {
    let st = tiny(TestFunction::Branin);
    let all = run_shard(&st, Shard::ALL, &|_, _, _| ()).unwrap();
    assert_eq!(all.len(), st.units().len());
    let halves: Vec<(usize, UnitResult)> =
        (0..2).flat_map(|i| run_shard(&st, Shard { index: i, count: 2 }, &|_, _, _| ()).unwrap()).collect();
    let mut halves = halves;
    halves.sort_by_key(|h| h.0);
    assert_eq!(halves, all);
    let results: Vec<UnitResult> = all.into_iter().map(|r| r.1).collect();
    let c = curves(&st, &results).unwrap();
    assert_eq!(c.len(), st.methods().len());
    for curve in &c {
        assert_eq!(curve.simple_mean.len(), 5);
        // Simple regret never increases; cumulative never decreases; both ≥ 0.
        assert!(curve.simple_mean.windows(2).all(|w| w[1] <= w[0] + 1e-15));
        assert!(curve.cumulative_mean.windows(2).all(|w| w[1] >= w[0] - 1e-15));
        assert!(curve.simple_mean.iter().all(|&v| v >= 0.0));
        assert_eq!(curve.better_than_random.is_none(), curve.method == Method::Random);
    }
    assert!(curves(&st, &results[1..]).is_err());
}

#[test]
fn halton_candidates_fill_the_cube_and_grids_include_the_corners() {
    let mut st = tiny(TestFunction::Hartmann6);
    st.candidates = 100;
    let c = candidates(&st, TestFunction::Hartmann6).unwrap();
    assert_eq!((c.len(), c.dim()), (100, 6));
    assert!(c.as_slice().iter().all(|&v| v > 0.0 && v < 1.0));
    assert_eq!(c.row(0), &[0.5, 1.0 / 3.0, 0.2, 1.0 / 7.0, 1.0 / 11.0, 1.0 / 13.0]);
    let g = candidates(&st, TestFunction::Branin).unwrap();
    assert_eq!(g.len(), 64);
    assert_eq!(g.row(0), &[0.0, 0.0]);
    assert_eq!(g.row(63), &[1.0, 1.0]);
    assert_eq!(g.row(1), &[1.0 / 7.0, 0.0]);
}

/// An edit of a study's settings.
type Edit = Box<dyn Fn(&mut ThompsonStudy)>;

#[test]
fn bad_settings_are_refused_naming_the_field() {
    let ok = tiny(TestFunction::Forrester);
    assert!(ok.validate().is_ok());
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|s| s.epsilons = vec![0.0]), "target ε"),
        (Box::new(|s| s.epsilons = vec![1.0, 1.0]), "given twice"),
        (Box::new(|s| s.seeds = 0), "seeds"),
        (Box::new(|s| s.rounds = vec![0]), "rounds"),
        (Box::new(|s| s.initial = vec![1]), "n₀"),
        (Box::new(|s| s.noise = -1.0), "noise"),
        (Box::new(|s| s.delta = 1.0), "δ"),
        (Box::new(|s| s.functions = vec![]), "no test function"),
        (Box::new(|s| s.lengthscales = vec![]), "lengthscales has 0"),
    ];
    for (edit, want) in cases {
        let mut s = ok.clone();
        edit(&mut s);
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains(want), "{e} (wanted {want})");
    }
    assert!("bogus".parse::<TestFunction>().unwrap_err().to_string().contains("'bogus'"));
    assert_eq!("Hartmann6".parse::<TestFunction>().unwrap(), TestFunction::Hartmann6);
}

#[test]
fn curves_average_over_seeds_and_compare_with_random_search() {
    let mut st = tiny(TestFunction::Forrester);
    st.rounds = vec![2];
    st.seeds = 3;
    st.epsilons = vec![1.0];
    // g* = 1. Random search: regret 0.5 then 0.5 on every seed; the private
    // loop: 0.6, 0.4 ± a little; TS: 0 from the start; GP-UCB equal to random.
    let results: Vec<UnitResult> = st
        .units()
        .iter()
        .map(|u| {
            let jitter = [-0.01, 0.0, 0.01][u.seed];
            let values = match u.method {
                Method::Random | Method::Ucb => vec![0.5, 0.5],
                Method::Private { .. } => vec![0.4 + jitter, 0.6 + jitter],
                Method::Thompson => vec![1.0, 1.0],
            };
            UnitResult { values, g_star: 1.0, ridge: None, epsilon: None }
        })
        .collect();
    let c = curves(&st, &results).unwrap();
    let by = |m: Method| c.iter().find(|c| c.method == m).unwrap();
    let p = by(Method::Private { epsilon: 1.0 });
    // Simple regret: 0.6, 0.4 (means over the seeds); cumulative 0.6, 1.0.
    assert!(close(p.simple_mean[0], 0.6, 1e-12) && close(p.simple_mean[1], 0.4, 1e-12), "{:?}", p.simple_mean);
    assert!(close(p.cumulative_mean[1], 1.0, 1e-12), "{:?}", p.cumulative_mean);
    // SE of (−0.01, 0, 0.01): SD 0.01, SE 0.01/√3.
    assert!(close(p.simple_se[1], 0.01 / 3f64.sqrt(), 1e-12), "{}", p.simple_se[1]);
    // Better than random on simple regret (0.4 vs 0.5), not on cumulative (1.0 vs 1.0).
    assert_eq!(p.better_than_random, Some((true, false)));
    assert_eq!(by(Method::Thompson).better_than_random, Some((true, true)));
    assert_eq!(by(Method::Ucb).better_than_random, Some((false, false)));
    assert_eq!(by(Method::Random).better_than_random, None);
}
