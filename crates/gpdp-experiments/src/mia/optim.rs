//! A small L-BFGS minimiser (Nocedal & Wright 2006, Alg. 7.4/7.5) with a
//! strong-Wolfe line search (Alg. 3.5/3.6, cubic interpolation with
//! safeguards). The objective may return a non-finite value for an
//! inadmissible point; the line search then shrinks the step.

/// Stopping rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsOptions {
    /// Iteration cap.
    pub max_iterations: usize,
    /// Number of stored correction pairs.
    pub memory: usize,
    /// Stop when ‖∇f‖_∞ ≤ gtol.
    pub gtol: f64,
    /// Stop when an iteration decreases f by at most ftol·max(1, |f|).
    pub ftol: f64,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions { max_iterations: 200, memory: 8, gtol: 1e-7, ftol: 1e-12 }
    }
}

/// Outcome of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct LbfgsResult {
    /// The last (best) point.
    pub x: Vec<f64>,
    /// f at `x`.
    pub f: f64,
    /// Iterations taken.
    pub iterations: usize,
    /// Objective evaluations.
    pub evaluations: usize,
    /// True if a tolerance (not the iteration cap or a failed line search) stopped it.
    pub converged: bool,
}

const C1: f64 = 1e-4;
const C2: f64 = 0.9;
const MAX_LS: usize = 40;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn inf_norm(a: &[f64]) -> f64 {
    a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

struct Trial {
    a: f64,
    f: f64,
    dg: f64,
}

/// Minimises `f` from `x0`. `f(x, grad)` returns f(x) and writes ∇f(x).
/// A non-finite value at `x0` gives `converged = false` and zero iterations.
pub fn minimize<F>(mut f: F, x0: &[f64], opts: &LbfgsOptions) -> LbfgsResult
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    let n = x0.len();
    let mut x = x0.to_vec();
    let mut g = vec![0.0; n];
    let mut fx = f(&x, &mut g);
    let mut evals = 1;
    if !fx.is_finite() || g.iter().any(|v| !v.is_finite()) {
        return LbfgsResult { x, f: fx, iterations: 0, evaluations: evals, converged: false };
    }
    let mut s_hist: Vec<Vec<f64>> = Vec::new();
    let mut y_hist: Vec<Vec<f64>> = Vec::new();
    let mut rho_hist: Vec<f64> = Vec::new();
    let mut d = vec![0.0; n];
    let mut alpha = vec![0.0; opts.memory];
    let mut xt = vec![0.0; n];
    let mut gt = vec![0.0; n];
    let mut g_best = vec![0.0; n];
    let mut converged = false;
    let mut iter = 0;
    while iter < opts.max_iterations {
        if inf_norm(&g) <= opts.gtol {
            converged = true;
            break;
        }
        // Two-loop recursion: d = −H·g.
        d.copy_from_slice(&g);
        let m = s_hist.len();
        for i in (0..m).rev() {
            alpha[i] = rho_hist[i] * dot(&s_hist[i], &d);
            for (dj, yj) in d.iter_mut().zip(&y_hist[i]) {
                *dj -= alpha[i] * yj;
            }
        }
        let gamma = if m > 0 { dot(&s_hist[m - 1], &y_hist[m - 1]) / dot(&y_hist[m - 1], &y_hist[m - 1]) } else { 1.0 };
        for dj in d.iter_mut() {
            *dj *= gamma;
        }
        for i in 0..m {
            let beta = rho_hist[i] * dot(&y_hist[i], &d);
            for (dj, sj) in d.iter_mut().zip(&s_hist[i]) {
                *dj += (alpha[i] - beta) * sj;
            }
        }
        for dj in d.iter_mut() {
            *dj = -*dj;
        }
        let mut dg0 = dot(&g, &d);
        if !(dg0 < 0.0) || m == 0 {
            // Not a descent direction (or the first step): steepest descent.
            s_hist.clear();
            y_hist.clear();
            rho_hist.clear();
            for (dj, gj) in d.iter_mut().zip(&g) {
                *dj = -gj;
            }
            dg0 = dot(&g, &d);
        }
        let step0 = if s_hist.is_empty() { 1.0f64.min(1.0 / inf_norm(&g)) } else { 1.0 };
        let ls = line_search(&mut f, &x, fx, dg0, &d, step0, &mut xt, &mut gt, &mut g_best, &mut evals);
        iter += 1;
        let Some((a, f_new)) = ls else {
            if s_hist.is_empty() {
                // No decrease even along −g: at a (numerical) minimum.
                converged = inf_norm(&g) <= 1e3 * opts.gtol.max(1e-12);
                break;
            }
            s_hist.clear();
            y_hist.clear();
            rho_hist.clear();
            continue;
        };
        // s = a·d, y = g_new − g.
        let s: Vec<f64> = d.iter().map(|dj| a * dj).collect();
        let y: Vec<f64> = g_best.iter().zip(&g).map(|(gn, go)| gn - go).collect();
        let sy = dot(&s, &y);
        for (xj, sj) in x.iter_mut().zip(&s) {
            *xj += sj;
        }
        let decrease = fx - f_new;
        fx = f_new;
        g.copy_from_slice(&g_best);
        if sy > 1e-12 * dot(&s, &s).sqrt() * dot(&y, &y).sqrt() {
            if s_hist.len() == opts.memory {
                s_hist.remove(0);
                y_hist.remove(0);
                rho_hist.remove(0);
            }
            s_hist.push(s);
            y_hist.push(y);
            rho_hist.push(1.0 / sy);
        }
        if decrease <= opts.ftol * fx.abs().max(1.0) {
            converged = true;
            break;
        }
    }
    LbfgsResult { x, f: fx, iterations: iter, evaluations: evals, converged }
}

/// Strong-Wolfe line search along `d` from `x`. On success returns the step
/// and f there, with the gradient in `g_out`.
#[allow(clippy::too_many_arguments)]
fn line_search<F>(
    f: &mut F,
    x: &[f64],
    f0: f64,
    dg0: f64,
    d: &[f64],
    step0: f64,
    xt: &mut [f64],
    gt: &mut [f64],
    g_out: &mut [f64],
    evals: &mut usize,
) -> Option<(f64, f64)>
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    let mut eval = |a: f64, gt: &mut [f64], evals: &mut usize| -> (f64, f64) {
        for ((t, xj), dj) in xt.iter_mut().zip(x).zip(d) {
            *t = xj + a * dj;
        }
        *evals += 1;
        let fa = f(xt, gt);
        if fa.is_finite() && gt.iter().all(|v| v.is_finite()) { (fa, dot(gt, d)) } else { (f64::INFINITY, f64::NAN) }
    };
    let mut prev = Trial { a: 0.0, f: f0, dg: dg0 };
    let mut a = step0;
    for i in 0..MAX_LS {
        let (fa, dga) = eval(a, gt, evals);
        let cur = Trial { a, f: fa, dg: dga };
        if fa > f0 + C1 * a * dg0 || (i > 0 && fa >= prev.f) {
            return zoom(&mut eval, prev, cur, f0, dg0, gt, g_out, evals);
        }
        if dga.abs() <= -C2 * dg0 {
            g_out.copy_from_slice(gt);
            return Some((a, fa));
        }
        if dga >= 0.0 {
            // Keep the gradient of `cur` in case zoom returns it unchanged.
            g_out.copy_from_slice(gt);
            return zoom(&mut eval, cur, prev, f0, dg0, gt, g_out, evals).or(Some((a, fa)));
        }
        g_out.copy_from_slice(gt);
        prev = cur;
        a *= 4.0;
    }
    // Sufficient decrease held at `prev` throughout.
    (prev.a > 0.0).then_some((prev.a, prev.f))
}

/// Zoom between `lo` (sufficient decrease holds, lowest f so far) and `hi`.
/// `g_out` holds the gradient at `lo` when lo.a > 0.
#[allow(clippy::too_many_arguments)]
fn zoom<E>(
    eval: &mut E,
    mut lo: Trial,
    mut hi: Trial,
    f0: f64,
    dg0: f64,
    gt: &mut [f64],
    g_out: &mut [f64],
    evals: &mut usize,
) -> Option<(f64, f64)>
where
    E: FnMut(f64, &mut [f64], &mut usize) -> (f64, f64),
{
    for _ in 0..MAX_LS {
        let (a_min, a_max) = if lo.a < hi.a { (lo.a, hi.a) } else { (hi.a, lo.a) };
        let width = a_max - a_min;
        if width <= 1e-16 * a_max.max(1e-300) {
            break;
        }
        let mut a = 0.5 * (lo.a + hi.a);
        if hi.f.is_finite() && hi.dg.is_finite() {
            if let Some(c) = cubic_min(&lo, &hi) {
                a = c;
            }
        }
        let guard = 0.1 * width;
        a = a.clamp(a_min + guard, a_max - guard);
        let (fa, dga) = eval(a, gt, evals);
        if fa > f0 + C1 * a * dg0 || fa >= lo.f {
            hi = Trial { a, f: fa, dg: dga };
        } else {
            if dga.abs() <= -C2 * dg0 {
                g_out.copy_from_slice(gt);
                return Some((a, fa));
            }
            if dga * (hi.a - lo.a) >= 0.0 {
                hi = lo;
            }
            g_out.copy_from_slice(gt);
            lo = Trial { a, f: fa, dg: dga };
        }
    }
    (lo.a > 0.0 && lo.f < f0).then_some((lo.a, lo.f))
}

/// Minimiser of the cubic interpolating f and f' at two trial steps.
fn cubic_min(p: &Trial, q: &Trial) -> Option<f64> {
    let d1 = p.dg + q.dg - 3.0 * (p.f - q.f) / (p.a - q.a);
    let disc = d1 * d1 - p.dg * q.dg;
    if !(disc >= 0.0) {
        return None;
    }
    let d2 = (q.a - p.a).signum() * disc.sqrt();
    let a = q.a - (q.a - p.a) * (q.dg + d2 - d1) / (q.dg - p.dg + 2.0 * d2);
    a.is_finite().then_some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rosenbrock() {
        let f = |x: &[f64], g: &mut [f64]| {
            let (a, b) = (x[0], x[1]);
            g[0] = -2.0 * (1.0 - a) - 400.0 * a * (b - a * a);
            g[1] = 200.0 * (b - a * a);
            (1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2)
        };
        let opts = LbfgsOptions { max_iterations: 500, gtol: 1e-10, ftol: 0.0, ..Default::default() };
        let r = minimize(f, &[-1.2, 1.0], &opts);
        assert!(r.converged, "{r:?}");
        assert!((r.x[0] - 1.0).abs() < 1e-7 && (r.x[1] - 1.0).abs() < 1e-7, "{r:?}");
    }

    #[test]
    fn infinite_region_is_avoided() {
        // f = x − log(x) on x > 0, +∞ elsewhere; minimum at 1.
        let f = |x: &[f64], g: &mut [f64]| {
            if x[0] <= 0.0 {
                g[0] = 0.0;
                return f64::INFINITY;
            }
            g[0] = 1.0 - 1.0 / x[0];
            x[0] - x[0].ln()
        };
        let r = minimize(f, &[8.0], &LbfgsOptions { gtol: 1e-10, ..Default::default() });
        assert!((r.x[0] - 1.0).abs() < 1e-8, "{r:?}");
        let r = minimize(f, &[-1.0], &LbfgsOptions::default());
        assert!(!r.converged && r.iterations == 0);
    }
}
