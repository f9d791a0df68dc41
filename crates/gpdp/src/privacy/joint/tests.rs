use super::*;
use crate::model::draws::Draws;
use crate::privacy::{BoundChoice, Conversion, ReleaseParams, Solve, Target};
use crate::{Domain, Kernel};

/// The Figure 3 setting: 1-D exponential kernel, ℓ = 1, n = 10, r = 1, σ = 5.
fn fig3(scale: f64) -> ReleaseParams {
    let mut p =
        ReleaseParams::new(Kernel::exponential(1.0).unwrap(), Domain::interval(0.0, 1.0).unwrap(), 10, 1.0, scale);
    p.bound = BoundChoice::Joint;
    p
}

#[test]
fn the_closed_form_matches_a_dense_gaussian_divergence() {
    // Independent: build the 2 × 2 covariances and means in the orthonormal
    // basis a = (1, 0), b = (ρ, √(1−ρ²)) and evaluate the Gaussian Rényi
    // divergence with explicit 2 × 2 inverses and determinants.
    for &(am1, s, sp, rho, a, b) in
        &[(0.7, 0.3, 0.45, 0.6, 0.8, -0.4), (0.1, 0.05, 0.4, 0.0, 0.1, 0.3), (1.2, 0.2, 0.3, 0.95, -1.0, 0.7)]
    {
        let alpha: f64 = 1.0 + am1;
        let (bx, by) = (rho, (1.0f64 - rho * rho).sqrt());
        let p = [[1.0 - s, 0.0], [0.0, 1.0]];
        let q = [[1.0 - sp * bx * bx, -sp * bx * by], [-sp * bx * by, 1.0 - sp * by * by]];
        let m = [
            [alpha * q[0][0] + (1.0 - alpha) * p[0][0], alpha * q[0][1] + (1.0 - alpha) * p[0][1]],
            [alpha * q[1][0] + (1.0 - alpha) * p[1][0], alpha * q[1][1] + (1.0 - alpha) * p[1][1]],
        ];
        let det = |x: [[f64; 2]; 2]| x[0][0] * x[1][1] - x[0][1] * x[1][0];
        let d = [a - b * bx, -b * by];
        let dm = det(m);
        let quad = (d[0] * (m[1][1] * d[0] - m[0][1] * d[1]) + d[1] * (-m[1][0] * d[0] + m[0][0] * d[1])) / dm;
        let want_cov = -(dm.ln() - (1.0 - alpha) * det(p).ln() - alpha * det(q).ln()) / (2.0 * am1);
        let (cov, mean) = two_point_divergence(am1, s, sp, rho, a, b);
        assert!((cov - want_cov).abs() < 1e-12, "{cov} vs {want_cov}");
        assert!((mean - 0.5 * alpha * quad).abs() < 1e-12 * mean.abs().max(1.0), "{mean} vs {}", 0.5 * alpha * quad);
        // ρ ↦ −ρ with B ↦ −B leaves it unchanged (§5).
        let (c2, m2) = two_point_divergence(am1, s, sp, -rho, a, -b);
        assert!((c2 - cov).abs() < 1e-14 && (m2 - mean).abs() < 1e-12);
    }
}

#[test]
fn the_certified_bound_is_above_every_point_and_within_the_gap() {
    let p = JointProblem::new(10, 1.0, 5.0, 1.0, 0.878_198_245_087_050_5, true).unwrap();
    for am1 in [0.05, 0.5, 0.9] {
        let c = certified_sup(&p, am1);
        assert!(c.upper >= c.found && c.upper <= c.found * (1.0 + REL_GAP) + 1e-12, "{c:?}");
        // A brute-force grid of points (the same exact evaluation at points)
        // never exceeds the certificate.
        let mut grid_max = f64::NEG_INFINITY;
        for i in 0..=20 {
            for j in 0..=20 {
                for k in 0..=10 {
                    let (s, t, r) = (p.s_max * i as f64 / 20.0, p.s_max * j as f64 / 20.0, k as f64 / 10.0);
                    grid_max = grid_max.max(p.upper(am1, Iv::point(s), Iv::point(t), Iv::point(r)));
                }
            }
        }
        assert!(grid_max <= c.upper * (1.0 + 1e-12), "grid {grid_max} > certified {}", c.upper);
        assert!(grid_max >= c.upper * (1.0 - 0.02), "grid {grid_max} far below certified {}", c.upper);
    }
}

#[test]
fn box_enclosures_contain_the_point_values_inside_them() {
    let p = JointProblem::new(30, 0.6, 1.0, 1.0, 0.7, false).unwrap();
    let s = p.s_max;
    let mut rng = crate::rng::ReleaseRng::seeded(4);
    let mut vertex_boxes = 0;
    for trial in 0..400 {
        // Half the boxes small (where the mean-value forms are used).
        let scale = if trial % 2 == 0 { 0.2 } else { 0.03 };
        let mut b = [(0.0, 0.0); 3];
        for (k, side) in b.iter_mut().enumerate() {
            let top = if k < 2 { s } else { 1.0 };
            let (u, w) = (rng.uniform() * top, rng.uniform() * top * scale);
            *side = (u, (u + w).min(top));
        }
        let am1 = 0.8 * p.am1_max() * rng.uniform();
        let bx = [0, 1, 2].map(|k| Iv::new(b[k].0, b[k].1));
        let ub = p.upper(am1, bx[0], bx[1], bx[2]);
        let mono = p.monotone_bound(am1, b);
        // The vertex function's mean-value form, where the vertices separate.
        let c = p.coeffs(am1, bx[0], bx[1], bx[2]);
        let poly = p.polygon(bx[0], bx[1], bx[2]);
        let (_, pairs) = p.vertex_bound(&c, &poly, f64::INFINITY);
        let vmv = pairs.as_ref().map(|pairs| p.vertex_mean_value(am1, b, poly.caps, pairs, f64::NEG_INFINITY));
        vertex_boxes += usize::from(vmv.is_some());
        for _ in 0..10 {
            let pt: Vec<f64> = b.iter().map(|&(lo, hi)| lo + (hi - lo) * rng.uniform()).collect();
            let v = p.upper(am1, Iv::point(pt[0]), Iv::point(pt[1]), Iv::point(pt[2]));
            assert!(v <= ub, "point {pt:?} value {v} above its box's bound {ub} (box {b:?}, α−1 = {am1})");
            // The corner function H (with the box's branches) dominates the
            // divergence, and its monotone/mean-value bound dominates H.
            let pv = [Iv::point(pt[0]), Iv::point(pt[1]), Iv::point(pt[2])];
            let h: Iv = p.corner_bound_with(am1, pv[0], pv[1], pv[2], Some(poly.caps));
            assert!(
                v <= h.hi * (1.0 + 1e-12) && h.hi <= mono * (1.0 + 1e-12),
                "{v} ≤ {} ≤ {mono} fails at {pt:?} (box {b:?})",
                h.hi
            );
            if let (Some(pairs), Some(vmv)) = (&pairs, vmv) {
                let f: Iv = p.vertex_function(am1, pv, poly.caps, pairs);
                assert!(
                    v <= f.hi * (1.0 + 1e-12) && f.hi <= vmv * (1.0 + 1e-12),
                    "vertex function: {v} ≤ {} ≤ {vmv} fails at {pt:?} (box {b:?})",
                    f.hi
                );
            }
        }
    }
    assert!(vertex_boxes >= 50, "only {vertex_boxes} boxes exercised the vertex function");
}

#[test]
fn orders_are_exact_and_the_curve_is_certified_at_the_next_one_up() {
    let p = JointProblem::new(10, 1.0, 5.0, 1.0, 0.878_198_245_087_050_5, true).unwrap();
    let grid = order_grid(p.am1_max());
    assert!(grid.windows(2).all(|w| w[0] < w[1]) && *grid.last().unwrap() < p.am1_max());
    assert!(grid.iter().all(|&g| (1.0 + g) - 1.0 == g));
    let g = grid[20];
    assert_eq!(joint_rdp(&p, g), joint_rdp(&p, (g + grid[19]) / 2.0));
    assert!(joint_rdp(&p, p.am1_max() * (1.0 + 1e-9)).is_none());
}

#[test]
fn acceptance_values_of_the_joint_bound() {
    // Figure 3, δ = 0.05: the joint Rényi route L = 1 / 3 / 10 ⇒ ε ≤ 2.95 / 4.65 / 9.0; the
    // reported ε (the minimum of every route, issue 39) ⇒ ≤ 1.90 / 4.35 / 9.0 from the chain at
    // L = 1, 3 and the joint Rényi bound at L = 10; Table 1 ⇒ ε ≤ 6.2.
    let rel = fig3(5.0).check().unwrap();
    let tight = ReleaseParams { bound: BoundChoice::Tight, ..fig3(5.0) }.check().unwrap();
    for (l, target, reported, route) in
        [(1, 2.95, 1.90, "chain"), (3, 4.65, 4.35, "chain"), (10, 9.0, 9.0, "joint-rdp")]
    {
        let r = rel.epsilon(Draws::new(l).unwrap(), 0.05, Conversion::Improved).unwrap();
        let routes = r.route.as_ref().unwrap();
        let e = routes.joint_rdp;
        let t = tight.epsilon(Draws::new(l).unwrap(), 0.05, Conversion::Improved).unwrap().epsilon;
        assert!(e <= target && e < t, "L = {l}: joint {e}, tight {t}");
        assert_eq!(routes.tight_rdp, t);
        // Not below the non-certified grid search over the same region (2.908, 4.606, 8.902).
        let floor = [(1, 2.9), (3, 4.6), (10, 8.89)].iter().find(|x| x.0 == l).unwrap().1;
        assert!(e >= floor, "L = {l}: {e}");
        assert!(r.epsilon <= reported && routes.route == route, "L = {l}: {r:?}");
        let chain = routes.chain.unwrap().epsilon;
        assert_eq!(r.epsilon, chain.min(e).min(t), "L = {l}: the minimum of the routes");
    }
    let mut t1 =
        ReleaseParams::new(Kernel::exponential(1.0).unwrap(), Domain::interval(0.0, 1.0).unwrap(), 100, 1.3121, 1.0);
    t1.bound = BoundChoice::Joint;
    let e = t1.check().unwrap().epsilon(Draws::ONE, 0.005, Conversion::Improved).unwrap().epsilon;
    assert!((6.1..=6.2).contains(&e), "Table 1: {e}");
    // σ = ∞ and η > 0 fall back to the tight bound.
    let inf = fig3(f64::INFINITY).check().unwrap();
    assert!(inf.rdp_bound().joint().is_none());
}

#[test]
fn calibration_with_the_joint_bound_meets_its_target() {
    let t = std::time::Instant::now();
    let target = Target { epsilon: 3.0, delta: 0.05, conversion: Conversion::Improved.into() };
    let c = crate::privacy::calibrate(&fig3(5.0), Draws::ONE, Solve::Ridge, target).unwrap();
    assert!(c.report.epsilon <= 3.0 && c.report.epsilon > 2.9, "{c:?}");
    let tight = crate::privacy::calibrate(
        &ReleaseParams { bound: BoundChoice::Tight, ..fig3(5.0) },
        Draws::ONE,
        Solve::Ridge,
        target,
    )
    .unwrap();
    assert!(c.value < tight.value, "joint r {} vs tight r {}", c.value, tight.value);
    eprintln!("calibrate (joint): r = {} in {:?}", c.value, t.elapsed());
}

#[test]
#[ignore = "timing probe: cargo test --release -p gpdp --lib joint::tests::timing -- --ignored --nocapture"]
fn timing() {
    let mut t1 =
        ReleaseParams::new(Kernel::exponential(1.0).unwrap(), Domain::interval(0.0, 1.0).unwrap(), 100, 1.3121, 1.0);
    t1.bound = BoundChoice::Joint;
    let rel = t1.check().unwrap();
    let t = std::time::Instant::now();
    let e = rel.epsilon(Draws::ONE, 0.005, Conversion::Improved).unwrap().epsilon;
    eprintln!("Table 1: ε = {e} cold {:?} ({} threads)", t.elapsed(), rayon::current_num_threads());
    for r in [1.0, 1.1, 1.2] {
        let mut p = fig3(5.0);
        p.ridge = r;
        let rel = p.check().unwrap();
        let t = std::time::Instant::now();
        let e = rel.epsilon(Draws::ONE, 0.05, Conversion::Improved).unwrap().epsilon;
        let cold = t.elapsed();
        let t = std::time::Instant::now();
        let e2 = rel.epsilon(Draws::ONE, 0.05, Conversion::Improved).unwrap().epsilon;
        eprintln!("r = {r}: ε = {e} cold {cold:?}, cached {:?} ({e2})", t.elapsed());
        let jp = rel.rdp_bound().joint().copied().unwrap();
        let t = std::time::Instant::now();
        let g = order_grid(jp.am1_max());
        g.iter().for_each(|&a| {
            let _ = joint_rdp_estimate(&jp, a);
        });
        eprintln!("  estimates at {} orders: {:?}", g.len(), t.elapsed());
        for a in [g[30], g[40]] {
            let t = std::time::Instant::now();
            let c = certified_sup(&jp, a);
            eprintln!("  certify α−1 = {a:.4}: {:?}, {} boxes", t.elapsed(), c.boxes);
        }
    }
}

#[test]
#[ignore = "timing probe: cargo test --release -p gpdp --lib joint::tests::cached_path -- --ignored --nocapture"]
fn cached_path() {
    let rel = fig3(5.0).check().unwrap();
    let _ = rel.epsilon(Draws::ONE, 0.05, Conversion::Improved).unwrap();
    let n = 2000;
    let t = std::time::Instant::now();
    for _ in 0..n {
        let _ = rel.epsilon(Draws::ONE, 0.05, Conversion::Improved).unwrap();
    }
    eprintln!("Release::epsilon cached: {:?} per call", t.elapsed() / n);
    let b = *rel.rdp_bound();
    let grid = order_grid(b.joint().unwrap().am1_max());
    let t = std::time::Instant::now();
    for _ in 0..n {
        for &g in grid.iter() {
            let _ = b.terms_lower(g);
        }
    }
    eprintln!("71 × terms_lower: {:?}", t.elapsed() / n);
    let jp = *b.joint().unwrap();
    let _ = joint_rdp(&jp, grid[30]);
    let t = std::time::Instant::now();
    for _ in 0..n {
        let _ = joint_rdp(&jp, grid[30]);
    }
    eprintln!("joint_rdp cached: {:?}", t.elapsed() / n);
}

#[test]
fn the_certificate_does_not_depend_on_the_number_of_threads() {
    // The batches are fixed by BATCH, not by the pool: one thread and
    // three give bit-identical results (values and box counts).
    let rel = fig3(5.0).check().unwrap();
    let jp = rel.rdp_bound().joint().copied().unwrap();
    let g = order_grid(jp.am1_max());
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| [g[20], g[40]].map(|a| certified_sup(&jp, a)))
    };
    let (one, three) = (run(1), run(3));
    for (a, b) in one.iter().zip(three.iter()) {
        assert_eq!(a.upper.to_bits(), b.upper.to_bits());
        assert_eq!(a.found.to_bits(), b.found.to_bits());
        assert_eq!(a.boxes, b.boxes);
        assert!(a.boxes > 2 * BATCH, "the search used several batches ({} boxes)", a.boxes);
    }
}

/// Issue 22, item 12: `--bound joint` queries took from milliseconds to 80 s (squared-exponential
/// 2-D, n = 5, r = 2, σ = 3, L = 2: every certified order ran out of boxes, and the conversion kept
/// certifying orders). A query now certifies at most MAX_CERTIFIED_ORDERS orders (each at most
/// MAX_BOXES boxes), and its answer is never above the tight bound's, in both directions.
#[test]
fn joint_queries_do_bounded_work_and_never_exceed_the_tight_bound() {
    use crate::privacy::conversion::MAX_CERTIFIED_ORDERS;
    let se = crate::model::kernel::KernelKind::SquaredExponential;
    let mut settings = vec![(se, 0.3, 5usize, 2.0, 3.0, 2u64, 1e-5)];
    // A few seeded random settings around it (2-D SE and Matérn 3/2; the slow regime is small n).
    let mut rng = crate::rng::ReleaseRng::seeded(22);
    for k in 0..5 {
        let kind = if k % 2 == 0 { se } else { crate::model::kernel::KernelKind::Matern32 };
        let u = |rng: &mut crate::rng::ReleaseRng| rng.uniform();
        settings.push((
            kind,
            0.1 + 0.6 * u(&mut rng),
            3 + (20.0 * u(&mut rng)) as usize,
            0.5 + 2.5 * u(&mut rng),
            0.5 + 4.0 * u(&mut rng),
            1 + (3.0 * u(&mut rng)) as u64,
            1e-5,
        ));
    }
    for (kind, ell, n, r, sigma, l, delta) in settings {
        let mut p = ReleaseParams::new(Kernel::new(kind, ell).unwrap(), "box:0,1,0,1".parse().unwrap(), n, r, sigma);
        let tight = ReleaseParams { bound: BoundChoice::Tight, ..p.clone() }.check().unwrap();
        p.bound = BoundChoice::Joint;
        let joint = p.check().unwrap();
        let draws = Draws::new(l).unwrap();
        let before = certificates_computed_here();
        let started = std::time::Instant::now();
        let je = joint.epsilon(draws, delta, Conversion::Improved).unwrap();
        let spent = certificates_computed_here() - before;
        let te = tight.epsilon(draws, delta, Conversion::Improved).unwrap();
        let what = format!("{kind} ℓ = {ell:.3}, n = {n}, r = {r:.3}, σ = {sigma:.3}, L = {l}");
        // The Rényi orders, and the chain route's one mean-shift certificate.
        assert!(spent <= MAX_CERTIFIED_ORDERS + 1, "{what}: {spent} certificates");
        assert!(je.epsilon <= te.epsilon, "{what}: joint ε {} > tight ε {}", je.epsilon, te.epsilon);
        // δ for the tight bound's ε: the joint δ is at most the tight one.
        let before = certificates_computed_here();
        let jd = joint.delta(draws, te.epsilon, Conversion::Improved).unwrap();
        let td = tight.delta(draws, te.epsilon, Conversion::Improved).unwrap();
        assert!(certificates_computed_here() - before <= MAX_CERTIFIED_ORDERS, "{what}: δ query");
        assert!(jd.delta <= td.delta * (1.0 + 1e-9), "{what}: joint δ {} > tight δ {}", jd.delta, td.delta);
        eprintln!(
            "{what}: joint ε {:.4} (tight {:.4}), {spent} certificates, {:.2} s",
            je.epsilon,
            te.epsilon,
            started.elapsed().as_secs_f64()
        );
    }
}

/// `--bound joint` never answers more than `--bound tight` (issue 25, item 3):
/// ε(δ) and δ(ε) of `count` seeded random settings — 1-D and 2-D domains,
/// exponential, Matérn-3/2 and squared-exponential kernels, n from 2 to 600,
/// ℓ, r, σ over two decades or more, δ from 10⁻⁸ to 0.1, L from 1 to 10.
/// Returns the largest ratio joint/tight seen (≤ 1).
fn joint_is_at_most_tight_on_random_settings(count: usize, seed: u64) -> f64 {
    use crate::model::kernel::KernelKind;
    let mut rng = crate::rng::ReleaseRng::seeded(seed);
    let kinds = [KernelKind::Exponential, KernelKind::Matern32, KernelKind::SquaredExponential];
    let mut worst = 0.0f64;
    let mut checked = 0;
    for k in 0..count {
        let mut u = || rng.uniform();
        let log_uniform = |u: f64, lo: f64, hi: f64| (lo.ln() + u * (hi.ln() - lo.ln())).exp();
        let kind = kinds[k % 3];
        let domain = if u() < 0.5 { "interval:0,1" } else { "box:0,1,0,1" };
        let ell = log_uniform(u(), 0.05, 2.0);
        let n = 2 + (log_uniform(u(), 1.0, 600.0) as usize);
        let r = log_uniform(u(), 0.3, 30.0);
        let sigma = log_uniform(u(), 0.03, 30.0);
        let delta = log_uniform(u(), 1e-8, 0.1);
        let l = 1 + (u() * 10.0) as u64;
        let mut p = ReleaseParams::new(Kernel::new(kind, ell).unwrap(), domain.parse().unwrap(), n, r, sigma);
        let what =
            format!("{kind} on {domain}, ℓ = {ell:.4}, n = {n}, r = {r:.4}, σ = {sigma:.4}, δ = {delta:.2e}, L = {l}");
        let tight = ReleaseParams { bound: BoundChoice::Tight, ..p.clone() }.check().unwrap();
        p.bound = BoundChoice::Joint;
        let joint = p.check().unwrap();
        let draws = Draws::new(l).unwrap();
        let (te, je) = match (
            tight.epsilon(draws, delta, Conversion::Improved),
            joint.epsilon(draws, delta, Conversion::Improved),
        ) {
            (Ok(t), Ok(j)) => (t, j),
            // Both vacuous (no admissible order) is consistent; one vacuous is not.
            (Err(_), Err(_)) => continue,
            (t, j) => panic!("{what}: tight {:?} vs joint {:?}", t.map(|r| r.epsilon), j.map(|r| r.epsilon)),
        };
        assert!(je.epsilon <= te.epsilon, "{what}: joint ε {} > tight ε {}", je.epsilon, te.epsilon);
        let jd = joint.delta(draws, te.epsilon, Conversion::Improved).unwrap();
        let td = tight.delta(draws, te.epsilon, Conversion::Improved).unwrap();
        assert!(jd.delta <= td.delta * (1.0 + 1e-9), "{what}: joint δ {} > tight δ {}", jd.delta, td.delta);
        if te.epsilon > 0.0 {
            worst = worst.max(je.epsilon / te.epsilon);
        }
        checked += 1;
    }
    assert!(checked * 10 >= count * 9, "only {checked} of {count} settings had a finite ε");
    worst
}

#[test]
fn joint_is_at_most_tight_on_seeded_random_settings() {
    let worst = joint_is_at_most_tight_on_random_settings(16, 25);
    eprintln!("16 random settings: largest joint/tight ε ratio {worst:.6}");
}

/// The acceptance run of issue 25: 1 000 random settings (minutes):
/// `cargo test --release --workspace --lib -- joint::tests::joint_is_at_most_tight_on_1000 --ignored --nocapture`
#[test]
#[ignore = "1 000 settings take minutes: cargo test --release --workspace --lib -- joint::tests::joint_is_at_most_tight_on_1000 --ignored --nocapture"]
fn joint_is_at_most_tight_on_1000_random_settings() {
    let worst = joint_is_at_most_tight_on_random_settings(1000, 2025);
    eprintln!("1 000 random settings: largest joint/tight ε ratio {worst:.6}");
}
