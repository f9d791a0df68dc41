//! The joint accountant (`--bound joint`): at each order α, a certified
//! upper bound on the supremum of the *exact* two-point Rényi divergence
//! over every neighbouring pair allowed by proven constraints
//! (docs/proofs/joint-accountant.md).
//!
//! After whitening by the common-core posterior covariance, one released
//! path (η = 0, finite σ) is, on any finite test set, the pair
//!
//! ```text
//! P = N(A·a, I − s·aaᵀ),  Q = N(B·b, I − s'·bbᵀ),  |a| = |b| = 1, a·b = ρ,
//! A = e·√(s(1−s))/(rσ),   B = e'·√(s'(1−s'))/(rσ),
//! ```
//!
//! with s = v/(v+r²), s' = v'/(v'+r²) ∈ [0, S], S = V/(V+r²), and the
//! residuals e = y − μ₋(x), e' = y' − μ₋(x') (§1–2 of the proof). Its
//! divergence has the closed form [`two_point_divergence`] (§3). The
//! residuals lie in a polygon Π(s, s', ρ) given by |y|, |y'| ≤ M_Y, the
//! key inequality |μ_D(x)| ≤ M_Y·√N·√(v_D(x)(1 − v_D(x)))/r for the core
//! and for each full dataset, and — for the exponential kernel on an
//! interval — Lemma B.6 (|μ_D| ≤ M_Y) (§4). The divergence is convex in
//! (e, e'), so its maximum over Π is at a vertex (§5), and the problem is
//! symmetric under ρ ↦ −ρ, so ρ ∈ [0, 1] suffices (§5). The remaining
//! supremum over (s, s', ρ) ∈ [0, S]² × [0, 1] is bounded by interval
//! branch and bound with outward rounding (§6, [`super::interval`]).

use rayon::prelude::*;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::privacy::cache::AccountingCache;
use crate::privacy::interval::{Dual, Iv, Num};

/// The public constants of the two-point problem of one release.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointProblem {
    /// Records n (the core has n − 1).
    pub n: usize,
    /// Ridge r > 0.
    pub ridge: f64,
    /// 1/σ (finite σ > 0).
    pub inv_scale: f64,
    /// Response bound M_Y > 0.
    pub response_bound: f64,
    /// S = V/(V + r²) < 1, V the proven posterior-variance bound.
    pub s_max: f64,
    /// Lemma B.6 (|μ_D| ≤ M_Y for every dataset) holds: the exponential
    /// kernel on a subset of R.
    pub bounded_mean: bool,
}

#[cfg(test)]
/// The exact divergence D_α(P‖Q) of the whitened two-point pair, split as
/// (covariance part, mean part), at α = 1 + `am1` (§3):
///
/// ```text
/// u = (α−1)s, w = −αs', c = 1 − ρ², det = 1 + u + w + u·w·c  (= det Σ_α),
/// covariance = [−log det − (α−1)·log(1−s) + α·log(1−s')] / (2(α−1)),
/// mean = (α/2)·[A²(1 + w·c) + B²(1 + u·c) − 2ρAB] / det,
/// ```
///
/// +∞ for both when det ≤ 0 (Σ_α not positive definite).
pub fn two_point_divergence(am1: f64, s: f64, sp: f64, rho: f64, a: f64, b: f64) -> (f64, f64) {
    let alpha = 1.0 + am1;
    let (u, w, c) = (am1 * s, -alpha * sp, 1.0 - rho * rho);
    let det = 1.0 + u + w + u * w * c;
    if !(det > 0.0) {
        return (f64::INFINITY, f64::INFINITY);
    }
    let cov = (-det.ln() - am1 * (1.0 - s).ln() + alpha * (1.0 - sp).ln()) / (2.0 * am1);
    let quad = (a * a * (1.0 + w * c) + b * b * (1.0 + u * c) - 2.0 * rho * a * b) / det;
    (cov, 0.5 * alpha * quad)
}

/// The residual polygon Π(s, s', ρ) = {|e| ≤ b1, |e'| ≤ b2, |e − γe'| ≤ a5,
/// |e' − γ'e| ≤ a6} (§4), as enclosures over a box of (s, s', ρ).
struct Polygon<T> {
    b1: T,
    b2: T,
    a5: T,
    a6: T,
    gamma: T,
    gammap: T,
    /// Whether b1, b2 took the coupling caps.
    caps: (bool, bool),
}

/// Vertex enclosures (e, e') and the line pairs they come from.
type Vertices = (Vec<(Iv, Iv)>, Vec<(usize, usize)>);

impl Polygon<Iv> {
    /// The enclosures of Π's vertices that may be feasible on a box, and
    /// the line pairs they come from; `None` when two lines are nearly
    /// parallel over the box (then only the box corners bound Π).
    fn vertex_candidates(&self) -> Option<Vertices> {
        let p = self;
        let ls = lines(p);
        let feasible = |e: Iv, f: Iv| -> bool {
            e.abs().possibly_le(p.b1)
                && f.abs().possibly_le(p.b2)
                && e.sub(p.gamma.mul(f)).abs().possibly_le(p.a5)
                && f.sub(p.gammap.mul(e)).abs().possibly_le(p.a6)
        };
        let (mut verts, mut kept) = (Vec::new(), Vec::new());
        // Π and the divergence are symmetric under (e, e') ↦ −(e, e'), which
        // maps line i to line i ± 4: the vertices on a "+" line (i < 4)
        // stand for all of them.
        for i in 0..4 {
            for j in 0..8 {
                if i % 4 == j % 4 || (j < 4 && j < i) {
                    continue; // parallel (the two sides of one slab), or counted
                }
                let (e, f, d) = intersection(&ls, i, j);
                if d.contains_zero() {
                    return None;
                }
                if feasible(e, f) {
                    verts.push((e, f));
                    kept.push((i, j));
                }
            }
        }
        Some((verts, kept))
    }

    /// [`Self::vertex_candidates`]' vertices.
    fn vertices(&self) -> Option<Vec<(Iv, Iv)>> {
        self.vertex_candidates().map(|v| v.0)
    }
}

/// What the divergence at a residual pair needs, over a box (§3).
struct Coeffs<T> {
    alpha: T,
    det: T,
    cov: T,
    ca: T,
    cb: T,
    wa: T,
    ub: T,
    rho: T,
}

/// (α/2)·dᵀΣ_α⁻¹d at residuals (e, f) (§3).
fn objective<T: Num>(c: &Coeffs<T>, e: T, f: T) -> T {
    let (a, b) = (e.mul(c.ca), f.mul(c.cb));
    let quad = a.sqr().mul(c.wa).add(b.sqr().mul(c.ub)).sub(T::cst(2.0).mul(c.rho).mul(a).mul(b)).div(c.det);
    c.alpha.mul(quad).mul(T::cst(0.5))
}

/// A line c_e·e + c_f·e' = d.
#[derive(Clone, Copy)]
struct Line<T> {
    ce: T,
    cf: T,
    d: T,
}

/// The lines of Π: ±(e = b1), ±(e' = b2), ±(e − γe' = a5), ±(e' − γ'e = a6);
/// line i and i + 4 are the two sides of one slab.
fn lines<T: Num>(p: &Polygon<T>) -> [Line<T>; 8] {
    let (one, zero) = (T::cst(1.0), T::cst(0.0));
    let l = |sign: f64| {
        let sg = T::cst(sign);
        [
            Line { ce: one, cf: zero, d: sg.mul(p.b1) },
            Line { ce: zero, cf: one, d: sg.mul(p.b2) },
            Line { ce: one, cf: p.gamma.neg(), d: sg.mul(p.a5) },
            Line { ce: p.gammap.neg(), cf: one, d: sg.mul(p.a6) },
        ]
    };
    let (a, b) = (l(1.0), l(-1.0));
    [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]]
}

/// The intersection of lines i and j of Π and the enclosure of their
/// determinant.
fn intersection<T: Num>(ls: &[Line<T>; 8], i: usize, j: usize) -> (T, T, Iv) {
    let (l1, l2) = (ls[i], ls[j]);
    let d = l1.ce.mul(l2.cf).sub(l2.ce.mul(l1.cf));
    let e = l1.d.mul(l2.cf).sub(l2.d.mul(l1.cf)).div(d);
    let f = l1.ce.mul(l2.d).sub(l2.ce.mul(l1.d)).div(d);
    (e, f, d.val())
}

impl JointProblem {
    /// Checks the constants.
    pub fn new(
        n: usize,
        ridge: f64,
        scale: f64,
        response_bound: f64,
        variance_bound: f64,
        bounded_mean: bool,
    ) -> Result<Self> {
        crate::error::ridge(ridge)?;
        let scale = crate::error::scale(scale)?;
        if !scale.is_finite() {
            return Err(Error::Unsupported("the joint bound needs a finite scale σ (σ = inf has no mean term)".into()));
        }
        crate::error::positive("response bound M_Y", response_bound)?;
        if !(0.0..=1.0).contains(&variance_bound) || n == 0 {
            return Err(Error::InvalidParameter {
                name: "variance bound V",
                value: crate::error::fmt_value(variance_bound),
                requirement: "in [0, 1], with n ≥ 1",
            });
        }
        let q = ridge * ridge;
        Ok(JointProblem {
            n,
            ridge,
            inv_scale: 1.0 / scale,
            response_bound,
            s_max: variance_bound / (variance_bound + q),
            bounded_mean,
        })
    }

    /// Admissible orders: α − 1 < 1/τ = (1 − S)/S (then Σ_α ≻ 0 on the
    /// whole region; §3).
    pub fn am1_max(&self) -> f64 {
        if self.s_max == 0.0 { f64::INFINITY } else { (1.0 - self.s_max) / self.s_max }
    }

    /// M·√N·√(v(1 − v))/r, capped at M under Lemma B.6 (§4).
    fn mean_cap<T: Num>(&self, records: usize, v: T) -> T {
        let m = T::cst(self.response_bound);
        let key = m.mul(T::cst(records as f64).sqrt()).mul(v.mul(T::cst(1.0).sub(v)).sqrt()).div(T::cst(self.ridge));
        if self.bounded_mean { key.min(m) } else { key }
    }

    fn polygon<T: Num>(&self, s: T, sp: T, rho: T) -> Polygon<T> {
        self.polygon_with(s, sp, rho, None)
    }

    /// [`Self::polygon`]; `caps` forces whether b1, b2 take the coupling
    /// caps (K₀' + K₁')/γ', (K₀ + K₁)/γ (by default: where γ', γ > 0 on the
    /// whole box), so that one function is evaluated on a box and its points.
    fn polygon_with<T: Num>(&self, s: T, sp: T, rho: T, caps: Option<(bool, bool)>) -> Polygon<T> {
        let one = T::cst(1.0);
        let q = T::cst(self.ridge * self.ridge);
        let m = T::cst(self.response_bound);
        // v = q·s/(1 − s): the core posterior variances at x and x'.
        let v = q.mul(s).div(one.sub(s));
        let vp = q.mul(sp).div(one.sub(sp));
        let k0 = self.mean_cap(self.n - 1, v);
        let k0p = self.mean_cap(self.n - 1, vp);
        // D' at x has variance v(1 − ρ²s'), D at x' has v'(1 − ρ²s).
        let r2 = rho.sqr();
        let k1 = self.mean_cap(self.n, v.mul(one.sub(r2.mul(sp))));
        let k1p = self.mean_cap(self.n, vp.mul(one.sub(r2.mul(s))));
        let root = v.mul(vp).sqrt();
        let gamma = rho.mul(root).div(vp.add(q));
        let gammap = rho.mul(root).div(v.add(q));
        let mut b1 = m.add(k0);
        let mut b2 = m.add(k0p);
        let (cap1, cap2) = caps.unwrap_or((gammap.val().lo > 0.0, gamma.val().lo > 0.0));
        if cap1 {
            b1 = b1.min(k0p.add(k1p).div(gammap));
        }
        if cap2 {
            b2 = b2.min(k0.add(k1).div(gamma));
        }
        Polygon { b1, b2, a5: m.add(k1), a6: m.add(k1p), gamma, gammap, caps: (cap1, cap2) }
    }

    /// det Σ_α, the covariance part and the mean part's coefficients (§3).
    fn coeffs<T: Num>(&self, am1: f64, s: T, sp: T, rho: T) -> Coeffs<T> {
        let one = T::cst(1.0);
        let a1 = T::cst(am1);
        let alpha = T::cst(1.0 + am1);
        let u = a1.mul(s);
        let w = alpha.mul(sp).neg();
        let c = one.sub(rho.sqr());
        let det = one.add(u).add(w).add(u.mul(w).mul(c));
        // The covariance part without cancellation (§3): with κ' = s'/(1−s')
        // and y = s − κ'(1 − sρ²) − (α−1)κ's(1 − ρ²), det = (1−s')(1 + (α−1)y)
        // and covariance = −log1p((α−1)y)/(2(α−1)) − ½log(1−s) + ½log(1−s').
        let kp = sp.div(one.sub(sp));
        let y = s.sub(kp.mul(one.sub(s.mul(rho.sqr())))).sub(a1.mul(kp).mul(s).mul(c));
        let half = T::cst(0.5);
        // At MEAN_SHIFT (α = 1) only the mean part is bounded: the chain
        // route's mean step (docs/proofs/chain-route.md §4.2, §5).
        let cov = if am1 == MEAN_SHIFT {
            T::cst(0.0)
        } else {
            a1.mul(y)
                .ln_1p()
                .neg()
                .div(T::cst(2.0 * am1))
                .sub(half.mul(one.sub(s).ln()))
                .add(half.mul(one.sub(sp).ln()))
        };
        let inv = T::cst(self.inv_scale / self.ridge);
        Coeffs {
            alpha,
            det,
            cov,
            ca: s.mul(one.sub(s)).sqrt().mul(inv),
            cb: sp.mul(one.sub(sp)).sqrt().mul(inv),
            wa: one.add(w.mul(c)),
            ub: one.add(u.mul(c)),
            rho,
        }
    }

    /// H = covariance part + the mean part's maximum over the corners
    /// (±b1, ±b2) of the box holding Π: H ≥ the divergence's maximum over
    /// Π at every (s, s', ρ) (§5), a smooth-enough function to test for
    /// monotonicity (§6).
    /// (The polygon's branches may be forced: see [`Self::polygon_with`].)
    fn corner_bound_with<T: Num>(&self, am1: f64, s: T, sp: T, rho: T, caps: Option<(bool, bool)>) -> T {
        let c = self.coeffs(am1, s, sp, rho);
        let p = self.polygon_with(s, sp, rho, caps);
        let m = objective(&c, p.b1, p.b2).max(objective(&c, p.b1, p.b2.neg()));
        c.cov.add(m)
    }

    /// The monotonicity test and mean-value form (§6): where ∂H/∂x_k has
    /// one sign on the whole box, the supremum of H over the box is on the
    /// face x_k = hi (or lo); on the reduced box, H(x) ∈ H(m) + Σ ∂_kH·(x_k − m_k).
    /// Returns an upper bound on H over the box.
    fn monotone_bound(&self, am1: f64, b: [(f64, f64); 3]) -> f64 {
        // One function on the whole box: the polygon's branches are those of
        // the box, also at the centre where the mean-value form evaluates it.
        let caps = self.polygon(iv(b[0]), iv(b[1]), iv(b[2])).caps;
        let x = [0, 1, 2].map(|k| Dual::var(Iv::new(b[k].0, b[k].1), k));
        let h = self.corner_bound_with(am1, x[0], x[1], x[2], Some(caps));
        mean_value(b, h, |m| {
            let det: Iv = self.coeffs(am1, Iv::point(m[0]), Iv::point(m[1]), Iv::point(m[2])).det;
            if det.lo <= 0.0 {
                f64::INFINITY
            } else {
                self.corner_bound_with(am1, Iv::point(m[0]), Iv::point(m[1]), Iv::point(m[2]), Some(caps)).hi
            }
        })
    }

    #[cfg(test)]
    /// Whether a pair's (s, s', ρ, e, e') lies in the region the bound
    /// covers — s, s' ∈ [0, S] and (e, e') ∈ Π(s, s', |ρ|) up to the relative
    /// tolerance `tol` (for audits against real neighbouring pairs). With
    /// ρ < 0 the pair is mapped to ρ ↦ −ρ, e' ↦ −e' (§5).
    pub fn covers(&self, s: f64, sp: f64, rho: f64, e: f64, ep: f64, tol: f64) -> bool {
        let (rho, ep) = if rho < 0.0 { (-rho, -ep) } else { (rho, ep) };
        if !(s >= 0.0
            && sp >= 0.0
            && s <= self.s_max * (1.0 + tol)
            && sp <= self.s_max * (1.0 + tol)
            && rho <= 1.0 + tol)
        {
            return false;
        }
        let (s, sp, rho) = (s.min(self.s_max), sp.min(self.s_max), rho.min(1.0));
        let p = self.polygon(Iv::point(s), Iv::point(sp), Iv::point(rho));
        let ok = |x: f64, b: Iv| x.abs() <= b.hi * (1.0 + tol) + tol;
        ok(e, p.b1) && ok(ep, p.b2) && ok(e - rho_mul(p.gamma, ep), p.a5) && ok(ep - rho_mul(p.gammap, e), p.a6)
    }

    /// An upper bound on sup over the box of max over Π of the divergence
    /// (or +∞), at α = 1 + am1.
    fn upper(&self, am1: f64, s: Iv, sp: Iv, rho: Iv) -> f64 {
        self.upper_or_below(am1, s, sp, rho, f64::NEG_INFINITY)
    }

    /// [`Self::upper`], but it may return any valid bound ≤ `enough` as
    /// soon as it has one (the branch and bound discards such boxes).
    fn upper_or_below(&self, am1: f64, s: Iv, sp: Iv, rho: Iv, enough: f64) -> f64 {
        let c = self.coeffs(am1, s, sp, rho);
        if c.det.lo <= 0.0 {
            return f64::INFINITY;
        }
        let cov = c.cov;
        let p = self.polygon(s, sp, rho);
        let objective = |e: Iv, f: Iv| -> f64 { objective(&c, e, f).hi };
        // The box corners (±b1, ±b2) bound the maximum over Π ⊂ box.
        let corners = [(p.b1, p.b2), (p.b1, p.b2.neg())];
        let box_bound = corners.iter().map(|&(e, f)| objective(e, f)).fold(f64::NEG_INFINITY, f64::max);
        if cov.hi + box_bound.max(0.0) <= enough {
            return cov.hi + box_bound.max(0.0);
        }
        let (polygon, pairs) = self.vertex_bound(&c, &p, box_bound);
        if cov.hi + polygon.max(0.0) <= enough {
            return cov.hi + polygon.max(0.0);
        }
        // The two-point constraint bounds the mean part independently of Π
        // (docs/proofs/two-point-constraint.md): the smaller bound holds.
        // (Its enclosure is abandoned once it is known not to be smaller.)
        let two_point = self.two_point_mean_bound(&c, s, sp, rho, polygon);
        let natural = cov.hi + polygon.min(two_point).max(0.0);
        // On small boxes the mean-value forms (of the corner function, of
        // the vertex function and of the two-point parts) are the sharper
        // enclosures: their excess is second order in the width.
        let (ws, wt, wr) = (s.hi - s.lo, sp.hi - sp.lo, rho.hi - rho.lo);
        if natural > enough && ws.max(wt) <= 0.05 * self.s_max && wr <= 0.05 && (ws > 0.0 || wt > 0.0 || wr > 0.0) {
            let b = [(s.lo, s.hi), (sp.lo, sp.hi), (rho.lo, rho.hi)];
            let mut best = natural;
            let keep = |best: &mut f64, other: f64| *best = best.min(other);
            // The smaller natural bound is refined first; the polygon's
            // vertex function's form is usually sharper than its corners'.
            let refine_polygon = |best: &mut f64| {
                if let Some(pairs) = &pairs {
                    keep(best, self.vertex_mean_value(am1, b, p.caps, pairs, enough));
                }
                if *best > enough {
                    keep(best, self.monotone_bound(am1, b));
                }
            };
            if two_point < polygon {
                keep(&mut best, self.two_point_mean_value(am1, b, enough));
                if best > enough {
                    refine_polygon(&mut best);
                }
            } else {
                refine_polygon(&mut best);
                if best > enough {
                    keep(&mut best, self.two_point_mean_value(am1, b, enough));
                }
            }
            best
        } else {
            natural
        }
    }

    /// The mean part's maximum over Π's vertices on a box (§6), or the box
    /// corners' `box_bound` where that is smaller or the vertices are not
    /// separated; also the vertex pairs kept (None when not separated).
    fn vertex_bound(&self, c: &Coeffs<Iv>, p: &Polygon<Iv>, box_bound: f64) -> (f64, Option<Vec<(usize, usize)>>) {
        let Some((verts, kept)) = p.vertex_candidates() else {
            return (box_bound, None);
        };
        let vertex_bound = verts.iter().map(|&(e, f)| objective(c, e, f).hi).fold(f64::NEG_INFINITY, f64::max);
        if vertex_bound.is_finite() { (vertex_bound.min(box_bound), Some(kept)) } else { (box_bound, None) }
    }

    /// The functions F_i = covariance part + the mean part at vertex
    /// candidate i (`pairs`, a fixed set of line pairs kept on the whole
    /// box), with the polygon's branches `caps`: their maximum F ≥ the
    /// divergence's maximum over Π at every point of the box where the set
    /// was kept (§6).
    fn vertex_parts<T: Num>(&self, am1: f64, x: [T; 3], caps: (bool, bool), pairs: &[(usize, usize)]) -> Vec<T> {
        let c = self.coeffs(am1, x[0], x[1], x[2]);
        let p = self.polygon_with(x[0], x[1], x[2], Some(caps));
        let ls = lines(&p);
        pairs
            .iter()
            .map(|&(i, j)| {
                let (e, f, _) = intersection(&ls, i, j);
                c.cov.add(objective(&c, e, f))
            })
            .collect()
    }

    /// The vertex function F = max_i F_i at a point (0 without candidates).
    #[cfg(test)]
    fn vertex_function<T: Num>(&self, am1: f64, x: [T; 3], caps: (bool, bool), pairs: &[(usize, usize)]) -> T {
        let parts = self.vertex_parts(am1, x, caps, pairs);
        parts.into_iter().reduce(|a, b| a.max(b)).unwrap_or(T::cst(0.0))
    }

    /// An upper bound on F over the box: sup of max_i F_i = max_i sup F_i,
    /// each sup bounded by the monotonicity test and mean-value form of F_i
    /// (a smooth function, whose derivative enclosure is not widened by the
    /// other candidates').
    fn vertex_mean_value(
        &self,
        am1: f64,
        b: [(f64, f64); 3],
        caps: (bool, bool),
        pairs: &[(usize, usize)],
        enough: f64,
    ) -> f64 {
        let x = [0, 1, 2].map(|k| Dual::var(Iv::new(b[k].0, b[k].1), k));
        let parts = self.vertex_parts(am1, x, caps, pairs);
        // Candidates in decreasing order of their natural bounds; a part
        // whose natural bound is ≤ `enough` (or ≤ the bound so far) needs no
        // refinement, and once one part's bound stays above `enough` the
        // others keep their natural bounds (the box is split anyway).
        let mut order: Vec<usize> = (0..parts.len()).collect();
        order.sort_by(|&i, &j| parts[j].v.hi.total_cmp(&parts[i].v.hi));
        let mut at: Vec<([f64; 3], Vec<Iv>)> = Vec::new();
        let mut best = f64::NEG_INFINITY;
        for (rank, &i) in order.iter().enumerate() {
            let h = parts[i];
            if h.v.hi <= best.max(enough) {
                best = best.max(h.v.hi);
                continue;
            }
            let v = mean_value(b, h, |m| {
                if let Some((_, v)) = at.iter().find(|(c, _)| *c == m) {
                    return v[i].hi;
                }
                let v = self.vertex_parts(am1, m.map(Iv::point), caps, pairs);
                let r = v[i].hi;
                at.push((m, v));
                r
            });
            best = best.max(v);
            if v > enough {
                // The remaining parts (natural bounds ≤ this one's) are not refined.
                if let Some(&j) = order.get(rank + 1) {
                    best = best.max(parts[j].v.hi);
                }
                break;
            }
        }
        best
    }
}

/// The monotonicity test and mean-value form (§6) for a function with
/// enclosure and derivative enclosures `h` on the box `b`: sides where a
/// partial derivative has one sign are reduced to the face where the
/// function is largest; on the reduced box with centre m,
/// f(x) ∈ f(m) + Σ_k ∂_kf(box)·(x_k − m_k). `at` gives an upper bound on f
/// at a point. Returns an upper bound on f over the box.
fn mean_value(b: [(f64, f64); 3], h: Dual, mut at: impl FnMut([f64; 3]) -> f64) -> f64 {
    let mut r = b;
    for k in 0..3 {
        if h.d[k].lo > 0.0 {
            r[k] = (b[k].1, b[k].1);
        } else if h.d[k].hi < 0.0 {
            r[k] = (b[k].0, b[k].0);
        }
    }
    let m = r.map(|(lo, hi)| 0.5 * (lo + hi));
    let fm = at(m);
    if !fm.is_finite() {
        return h.v.hi;
    }
    let mut mv = Iv::new(fm, fm);
    for k in 0..3 {
        mv = mv.add(h.d[k].mul(Iv::new(r[k].0, r[k].1).sub(Iv::point(m[k]))));
    }
    mv.hi.min(h.v.hi)
}

#[cfg(test)]
/// γ·x at the midpoint of γ's enclosure (γ is a point here).
fn rho_mul(g: Iv, x: f64) -> f64 {
    0.5 * (g.lo + g.hi) * x
}

/// The result of [`certified_sup`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Certified {
    /// A proven upper bound on the supremum.
    pub upper: f64,
    /// The largest value found at a point (≈ a lower bound, up to rounding).
    pub found: f64,
    /// Boxes evaluated.
    pub boxes: usize,
}

#[derive(Clone, Copy)]
struct Cell {
    ub: f64,
    b: [(f64, f64); 3],
}

impl PartialEq for Cell {
    fn eq(&self, o: &Self) -> bool {
        self.ub.total_cmp(&o.ub).is_eq()
    }
}
impl Eq for Cell {}
impl PartialOrd for Cell {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Cell {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.ub.total_cmp(&o.ub)
    }
}

/// Relative gap at which the branch and bound stops.
pub const REL_GAP: f64 = 4e-3;
/// Boxes split at once (their children are bounded in parallel).
const BATCH: usize = 32;
/// Box budget of one supremum.
pub const MAX_BOXES: usize = 30_000;

/// The two halves of a box, split at the middle of its widest side
/// (relative to the region's: s, s' ∈ [0, S], ρ ∈ [0, 1]).
fn split(b: [(f64, f64); 3], s: f64) -> [[(f64, f64); 3]; 2] {
    let widths = [(b[0].1 - b[0].0) / s.max(1e-300), (b[1].1 - b[1].0) / s.max(1e-300), b[2].1 - b[2].0];
    let k = (0..3).max_by(|&i, &j| widths[i].total_cmp(&widths[j])).unwrap_or(0);
    let mid = 0.5 * (b[k].0 + b[k].1);
    let (mut lo, mut hi) = (b, b);
    lo[k].1 = mid;
    hi[k].0 = mid;
    [lo, hi]
}

fn iv(b: (f64, f64)) -> Iv {
    Iv::new(b.0, b.1)
}

/// A certified upper bound on sup over (s, s', ρ) ∈ [0, S]² × [0, 1] and
/// (e, e') ∈ Π of D_α(P‖Q), α = 1 + am1 (§6): best-first branch and bound;
/// the returned `upper` is the largest enclosure upper bound among the
/// boxes not yet split (and the best point value), so it is ≥ the
/// supremum whether or not the gap REL_GAP was reached.
pub fn certified_sup(p: &JointProblem, am1: f64) -> Certified {
    let s = p.s_max;
    let point = |c: [(f64, f64); 3]| {
        let m = |b: (f64, f64)| 0.5 * (b.0 + b.1);
        let (ms, mt, mr) = (m(c[0]), m(c[1]), m(c[2]));
        p.upper(am1, Iv::point(ms), Iv::point(mt), Iv::point(mr))
    };
    let root = [(0.0, s), (0.0, s), (0.0, 1.0)];
    let mut heap = BinaryHeap::new();
    heap.push(Cell { ub: p.upper(am1, iv(root[0]), iv(root[1]), iv(root[2])), b: root });
    // A good first point value: the largest at a coarse grid of points.
    let mut found = point(root).max(grid_max(p, am1));
    let mut boxes = 1;
    // The largest bound of a box discarded because it was below the gap.
    let mut pruned = f64::NEG_INFINITY;
    let enough = |found: f64| found + REL_GAP * found.abs() + 1e-12;
    // Boxes are split in batches of the BATCH best, whose children are
    // bounded in parallel; the batches (and so the result) do not depend
    // on the number of threads.
    loop {
        let threshold = enough(found);
        let mut children = Vec::with_capacity(2 * BATCH);
        let mut first = None;
        while children.len() < 2 * BATCH && boxes + children.len() < MAX_BOXES {
            match heap.peek() {
                Some(top) if top.ub > threshold => {
                    let top = *top;
                    heap.pop();
                    first.get_or_insert(top);
                    children.extend(split(top.b, s));
                }
                _ => break,
            }
        }
        let Some(first) = first else { break };
        // A point value at the centre of the batch's best box (where the
        // supremum most likely is) raises the pruning threshold.
        found = found.max(point(first.b).min(first.ub));
        let bounds: Vec<f64> =
            children.par_iter().map(|b| p.upper_or_below(am1, iv(b[0]), iv(b[1]), iv(b[2]), threshold)).collect();
        boxes += children.len();
        for (b, ub) in children.into_iter().zip(bounds) {
            if ub <= threshold {
                pruned = pruned.max(ub);
            } else {
                heap.push(Cell { ub, b });
            }
        }
    }
    let top = heap.peek().map_or(f64::NEG_INFINITY, |c| c.ub);
    Certified { upper: top.max(found).max(pruned), found, boxes }
}

/// The order code of the chain route's mean step: with α − 1 = 0 the
/// branch and bound bounds only the mean part at α = 1,
/// ½·dᵀΣ₂⁻¹d = μ²/2, μ² = A² + B² − 2ABρ + (s'/(1 − s'))(Aρ − B)²
/// (docs/proofs/chain-route.md §4.2; the covariance part is set to 0).
/// At α = 1, u = 0, w = −s' and det Σ₁ = 1 − s' ≥ 1 − S > 0 on the whole
/// region, so every enclosure is finite. The vertex property (§5.4 there)
/// and the branch and bound's argument (joint-accountant.md §6) hold as for
/// the Rényi orders: only the objective's covariance part is dropped.
pub const MEAN_SHIFT: f64 = 0.0;

/// A certified upper bound μ̄ on the Gaussian mean-shift distance μ of the
/// chain route's mean step over the whole joint region (both orders of a
/// pair: the region is symmetric under the swap, chain-route.md §4.3, and
/// the search covers the whole square [0, S]² of (s, s')): √(2·sup μ²/2),
/// rounded up. Remembered in `cache` like the Rényi certificates.
pub fn mean_shift_bound_in(p: &JointProblem, cache: &AccountingCache) -> (f64, Certified) {
    let c = certified_sup_in(p, MEAN_SHIFT, cache);
    let mu = (2.0 * c.upper.max(0.0)).sqrt();
    // sqrt and the doubling are correctly rounded: two ulps up cover both.
    (mu.next_up().next_up(), c)
}

/// The cache key of (problem, α, kind): kind 0 certified, 1 estimate, 2
/// the chain route's statement (`privacy::chain`).
pub(crate) fn key_of(p: &JointProblem, am1: f64, kind: u64) -> [u64; 8] {
    [
        p.n as u64,
        p.ridge.to_bits(),
        p.inv_scale.to_bits(),
        p.response_bound.to_bits(),
        p.s_max.to_bits(),
        p.bounded_mean as u64,
        am1.to_bits(),
        kind,
    ]
}

thread_local! {
    /// Certificates computed (cache misses) on this thread: lets tests check
    /// that one query's work is bounded (the conversion's order cap).
    static CERTIFIED_HERE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
/// The number of certificates [`certified_sup_cached`] has computed on the
/// calling thread (not counting cache hits).
pub fn certificates_computed_here() -> usize {
    CERTIFIED_HERE.with(|c| c.get())
}

#[cfg(test)]
/// [`certified_sup`], remembered per (problem, α) in the shared bounded
/// cache ([`AccountingCache::shared`]).
pub fn certified_sup_cached(p: &JointProblem, am1: f64) -> Certified {
    certified_sup_in(p, am1, AccountingCache::shared())
}

/// [`certified_sup`], remembered per (problem, α) in `cache` (a
/// deterministic function of its key: the cache never changes the value).
pub fn certified_sup_in(p: &JointProblem, am1: f64, cache: &AccountingCache) -> Certified {
    let key = key_of(p, am1, 0);
    if let Some((upper, found, boxes)) = cache.certified(&key) {
        return Certified { upper, found, boxes };
    }
    CERTIFIED_HERE.with(|c| c.set(c.get() + 1));
    let c = certified_sup(p, am1);
    cache.put_certified(key, (c.upper, c.found, c.boxes));
    c
}

#[cfg(test)]
/// The orders at which the joint bound is certified: α − 1 on a fixed grid
/// of (0, am1_max); between grid points the next one up is used (Rényi
/// divergences are non-decreasing in α, so this is an upper bound; §6).
pub fn order_grid(am1_max: f64) -> Arc<Vec<f64>> {
    order_grid_in(am1_max, AccountingCache::shared())
}

/// [`order_grid`], remembered in `cache`.
pub fn order_grid_in(am1_max: f64, cache: &AccountingCache) -> Arc<Vec<f64>> {
    if let Some(g) = cache.grid(am1_max.to_bits()) {
        return g;
    }
    let g = Arc::new(make_order_grid(am1_max));
    cache.put_grid(am1_max.to_bits(), g.clone());
    g
}

fn make_order_grid(am1_max: f64) -> Vec<f64> {
    let mut g: Vec<f64> = Vec::new();
    if am1_max.is_finite() {
        for j in (1..=8).rev() {
            g.push(am1_max * 0.5f64.powi(j + 1));
        }
        for i in 2..=64 {
            g.push(am1_max * (1.0 - 0.5f64.powf(i as f64 / 6.0)));
        }
    } else {
        for i in -8..=24 {
            g.push(2f64.powf(i as f64 / 2.0));
        }
    }
    // Orders with (1 + g) − 1 = g exactly, so that α = 1 + g is the grid order.
    let mut g: Vec<f64> = g.into_iter().map(|x| (1.0 + x) - 1.0).filter(|&x| x > 0.0 && x < am1_max).collect();
    g.sort_by(f64::total_cmp);
    g.dedup();
    g
}

#[cfg(test)]
/// The certified joint RDP of one draw at α = 1 + am1 (the next grid order
/// up), or `None` beyond the grid.
pub fn joint_rdp(p: &JointProblem, am1: f64) -> Option<f64> {
    joint_rdp_in(p, am1, AccountingCache::shared())
}

/// [`joint_rdp`] with the certificates remembered in `cache`.
pub fn joint_rdp_in(p: &JointProblem, am1: f64, cache: &AccountingCache) -> Option<f64> {
    let grid = order_grid_in(p.am1_max(), cache);
    let g = *grid.get(grid.partition_point(|&g| g < am1))?;
    let c = certified_sup_in(p, g, cache);
    c.upper.is_finite().then_some(c.upper)
}

/// The points of the estimates: a 5 × 5 × 5 grid of (s, s', ρ) and 11
/// points of the edge s = s' = S, ρ ∈ [0, 0.2] (where the maximum often is).
fn estimate_points(s_max: f64) -> Vec<[f64; 3]> {
    let mut pts: Vec<[f64; 3]> = (0..=10).map(|k| [s_max, s_max, 0.02 * k as f64]).collect();
    for i in 0..5 {
        for j in 0..5 {
            for k in 0..5 {
                pts.push([s_max * i as f64 / 4.0, s_max * j as f64 / 4.0, k as f64 / 4.0]);
            }
        }
    }
    pts
}

/// For each order α − 1 in `orders`, the largest of [`JointProblem::upper`]
/// at the points of [`estimate_points`] (the value at a point: the
/// divergence's maximum over Π there). The polygon and its vertices do not
/// depend on α, so they are computed once per point.
fn grid_maxima(p: &JointProblem, orders: &[f64]) -> Vec<f64> {
    let mut best = vec![f64::NEG_INFINITY; orders.len()];
    for x in estimate_points(p.s_max) {
        let (s, sp, rho) = (Iv::point(x[0]), Iv::point(x[1]), Iv::point(x[2]));
        let poly = p.polygon(s, sp, rho);
        let verts = poly.vertices();
        for (b, &am1) in best.iter_mut().zip(orders) {
            let c = p.coeffs(am1, s, sp, rho);
            if c.det.lo <= 0.0 {
                *b = f64::INFINITY;
                continue;
            }
            let box_bound = objective(&c, poly.b1, poly.b2).hi.max(objective(&c, poly.b1, poly.b2.neg()).hi);
            let vb = match &verts {
                Some(v) if !v.is_empty() => {
                    v.iter().map(|&(e, f)| objective(&c, e, f).hi).fold(f64::NEG_INFINITY, f64::max).min(box_bound)
                }
                _ => box_bound,
            };
            let vb = vb.min(p.two_point_mean_bound(&c, s, sp, rho, vb));
            *b = b.max(c.cov.hi + vb.max(0.0));
        }
    }
    best
}

/// The largest divergence at the points of [`estimate_points`] at one order.
fn grid_max(p: &JointProblem, am1: f64) -> f64 {
    grid_maxima(p, &[am1])[0]
}

#[cfg(test)]
/// The largest divergence at the points of `grid_max` at the next grid
/// order up from α = 1 + am1: a value ≤ the supremum (up to rounding), used
/// only to choose which orders to certify. Computed for the whole grid at
/// once and remembered per problem in the shared cache.
pub fn joint_rdp_estimate(p: &JointProblem, am1: f64) -> Option<f64> {
    joint_rdp_estimate_in(p, am1, AccountingCache::shared())
}

/// [`joint_rdp_estimate`] with the table remembered in `cache`.
pub fn joint_rdp_estimate_in(p: &JointProblem, am1: f64, cache: &AccountingCache) -> Option<f64> {
    let grid = order_grid_in(p.am1_max(), cache);
    let k = grid.partition_point(|&g| g < am1);
    if k >= grid.len() {
        return None;
    }
    let key = key_of(p, 0.0, 1);
    let est = match cache.estimates(&key) {
        Some(e) => e,
        None => {
            let e = Arc::new(grid_maxima(p, &grid));
            cache.put_estimates(key, e.clone());
            e
        }
    };
    let v = est[k];
    v.is_finite().then_some(v)
}

#[cfg(test)]
pub(crate) mod soundness;
#[cfg(test)]
mod tests;
mod two_point;
#[cfg(test)]
mod two_point_audit;
