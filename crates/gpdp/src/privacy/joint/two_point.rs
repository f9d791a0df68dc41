//! The two-point constraint on the core means (docs/proofs/two-point-constraint.md,
//! cited as T§): a second, independent upper bound on the mean part of the
//! divergence over a box of (s, s', ρ), which the branch and bound takes the
//! smaller of with the polygon's.
//!
//! With v = qs/(1 − s), v' = qs'/(1 − s'), c = ρ√(vv'), the core's explained
//! prior covariance t = k(x, x') − k₋(x, x') ∈ [−h, h], h = √((1 − v)(1 − v'))
//! (T§ item 1), C₂ = [[v, c], [c, v']], T̄₂ = [[1 − v, t], [t, 1 − v']] and any
//! 2 × 2 matrix W, Ê(W) = WᵀC₂W + (I − W)ᵀT̄₂(I − W), the core means
//! z = (μ₋(x), μ₋(x')) satisfy (wᵀz)² ≤ R²·wᵀÊw for every w, R² = (n − 1)M²/r²
//! (T§ item 2). With the mean part ẽᵀHẽ at residuals ẽ = y⃗ − z, the ellipse
//! lemma (T§, "How the accountant uses it") gives
//!
//! ```text
//! mean part ≤ max_{y⃗ ∈ {(M, M), (M, −M)}} y⃗ᵀHy⃗ + 2R·√((Hy⃗)ᵀÊ(Hy⃗)) + R²·λ_max(HÊ),
//! λ_max(HÊ) ≤ (τ⁺ + √(τ⁺² − 4Δ⁻))/2,  τ⁺ ≥ tr(HÊ),  0 ≤ Δ⁻ ≤ det H·det Ê.
//! ```
//!
//! t is not a coordinate of the branch and bound: τ = t/h ∈ [−1, 1] is cut
//! into [`PIECES`] pieces, each evaluated in interval arithmetic over the whole
//! box and piece with its own W (near the optimal (C₂ + T̄₂)⁻¹T̄₂ at the
//! centre; any W is valid), and the largest piece bound is kept (the pair's t lies in
//! one piece). Valid for every normalised kernel (k(x, x) ≤ 1) and every
//! order, including the chain route's mean step (α = 1).

use super::{Coeffs, JointProblem, iv, mean_value};
use crate::privacy::interval::{Dual, Iv, Num};

/// Pieces of τ = t/h ∈ [−1, 1].
pub(super) const PIECES: usize = 8;

/// A 2 × 2 symmetric matrix [[a, b], [b, d]].
#[derive(Clone, Copy)]
struct Sym<T> {
    a: T,
    b: T,
    d: T,
}

/// The near-optimal W = (C₂ + T̄₂ + εI)⁻¹T̄₂, ε = 10⁻⁶, at a point (floating
/// point; any W gives a valid constraint), or 0 (Ê = T̄₂) when not finite.
/// W = (C₂ + T̄₂)⁻¹T̄₂ makes Ê the parallel sum, the best; ε keeps W
/// moderate where C₂ + T̄₂ is nearly singular (x' → x), at a cost O(ε) in
/// the bound, where a huge W would widen every enclosure.
pub(super) fn near_optimal_w(v: f64, vp: f64, c: f64, t: f64) -> [[f64; 2]; 2] {
    let (ta, tb, td) = (1.0 - v, t, 1.0 - vp);
    let (ka, kb, kd) = (v + ta + 1e-6, c + tb, vp + td + 1e-6);
    let det = ka * kd - kb * kb;
    let w = [
        [(kd * ta - kb * tb) / det, (kd * tb - kb * td) / det],
        [(ka * tb - kb * ta) / det, (ka * td - kb * tb) / det],
    ];
    if w.iter().flatten().all(|x| x.is_finite()) { w } else { [[0.0; 2]; 2] }
}

/// Ê(W) = WᵀC₂W + (I − W)ᵀT̄₂(I − W) for a fixed W, written as the affine
/// function E₀ + v·E_v + v'·E_v' + c·E_c + t·E_t of the box's quantities
/// (each entry uses each quantity once, which keeps the enclosure narrow):
/// with U = I − W (enclosed, so Ê encloses the exact matrix of this W),
///
/// ```text
/// (E_v)_ij = W₀ᵢW₀ⱼ − U₀ᵢU₀ⱼ,  (E_v')_ij = W₁ᵢW₁ⱼ − U₁ᵢU₁ⱼ,  (E_c)_ij = W₀ᵢW₁ⱼ + W₁ᵢW₀ⱼ,
/// (E_t)_ij = U₀ᵢU₁ⱼ + U₁ᵢU₀ⱼ,  (E₀)_ij = U₀ᵢU₀ⱼ + U₁ᵢU₁ⱼ.
/// ```
fn e_hat<T: Num>(v: T, vp: T, c: T, t: T, w: [[f64; 2]; 2]) -> Sym<T> {
    let one = Iv::point(1.0);
    let wi = w.map(|r| r.map(Iv::point));
    let u = [[one.sub(wi[0][0]), wi[0][1].neg()], [wi[1][0].neg(), one.sub(wi[1][1])]];
    let entry = |i: usize, j: usize| {
        let ev = wi[0][i].mul(wi[0][j]).sub(u[0][i].mul(u[0][j]));
        let evp = wi[1][i].mul(wi[1][j]).sub(u[1][i].mul(u[1][j]));
        let ec = wi[0][i].mul(wi[1][j]).add(wi[1][i].mul(wi[0][j]));
        let et = u[0][i].mul(u[1][j]).add(u[1][i].mul(u[0][j]));
        let e0 = u[0][i].mul(u[0][j]).add(u[1][i].mul(u[1][j]));
        T::iv(e0).add(v.mul(T::iv(ev))).add(vp.mul(T::iv(evp))).add(c.mul(T::iv(ec))).add(t.mul(T::iv(et)))
    };
    Sym { a: entry(0, 0), b: entry(0, 1), d: entry(1, 1) }
}

/// The core quantities of a box: (v, v', c, h) with h = √((1 − v)(1 − v')).
fn core<T: Num>(p: &JointProblem, s: T, sp: T, rho: T) -> (T, T, T, T) {
    let one = T::cst(1.0);
    let zero = T::cst(0.0);
    let q = T::cst(p.ridge).sqr();
    let v = q.mul(s).div(one.sub(s));
    let vp = q.mul(sp).div(one.sub(sp));
    let c = rho.mul(v.mul(vp).sqrt());
    let h = one.sub(v).max(zero).mul(one.sub(vp).max(zero)).sqrt();
    (v, vp, c, h)
}

fn mid(x: Iv) -> f64 {
    0.5 * (x.lo + x.hi)
}

/// The k-th piece of τ ∈ [−1, 1].
fn piece(k: usize) -> Iv {
    let at = |j: usize| -1.0 + 2.0 * j as f64 / PIECES as f64;
    Iv::new(at(k), at(k + 1))
}

/// What the parts of one box share (see `two_point_shared`).
struct Shared<T> {
    v: T,
    vp: T,
    c: T,
    h: T,
    r2: T,
    r: T,
    hm: Sym<T>,
    det_h: T,
}

/// One W per τ piece (chosen at the centre of a box).
pub(super) type Ws = [[[f64; 2]; 2]; PIECES];

impl JointProblem {
    /// The W of each τ piece, at the centre of the box (s, s', ρ).
    fn two_point_ws(sh: &Shared<Iv>) -> Ws {
        let (vm, vpm, cm, hm) = (mid(sh.v), mid(sh.vp), mid(sh.c), mid(sh.h));
        std::array::from_fn(|k| near_optimal_w(vm, vpm, cm, hm * mid(piece(k))))
    }

    /// What every part shares on a box: the core quantities, R, H and det H.
    fn two_point_shared<T: Num>(&self, c: &Coeffs<T>, s: T, sp: T, rho: T) -> Shared<T> {
        let (v, vp, cc, h) = core(self, s, sp, rho);
        let m = self.response_bound;
        let r2 = T::cst((self.n - 1) as f64).mul(T::cst(m).sqr()).div(T::cst(self.ridge).sqr());
        // H = (α/(2 det))·[[c_a²·wa, −ρ·c_a·c_b], [·, c_b²·ub]] (the mean part ẽᵀHẽ).
        let f = c.alpha.div(T::cst(2.0).mul(c.det));
        let hm = Sym {
            a: f.mul(c.ca.sqr()).mul(c.wa),
            b: f.mul(c.rho).mul(c.ca).mul(c.cb).neg(),
            d: f.mul(c.cb.sqr()).mul(c.ub),
        };
        let det_h = hm.a.mul(hm.d).sub(hm.b.sqr());
        Shared { v, vp, c: cc, h, r2, r: r2.sqrt(), hm, det_h }
    }

    /// The ellipse lemma's bound on the mean part for τ piece `k` with its W,
    /// at the corners y⃗ = (M, M) and (M, −M); the largest over the pieces
    /// and corners is ≥ the mean part at every pair of the box (ρ ≥ 0).
    fn two_point_piece<T: Num>(&self, sh: &Shared<T>, k: usize, w: [[f64; 2]; 2]) -> [T; 2] {
        let two = T::cst(2.0);
        let m = self.response_bound;
        let t = sh.h.mul(T::iv(piece(k)));
        let e = e_hat(sh.v, sh.vp, sh.c, t, w);
        let hm = sh.hm;
        // λ_max(HÊ) = (tr + √(tr² − 4Δ))/2 with Δ = det H·det Ê ≥ 0, which
        // is increasing in tr (≥ 2√Δ) and decreasing in Δ: Δ is cut at 0.
        let tr = hm.a.mul(e.a).add(two.mul(hm.b).mul(e.b)).add(hm.d.mul(e.d));
        let det_e = e.a.mul(e.d).sub(e.b.sqr());
        let delta = sh.det_h.mul(det_e).max(T::cst(0.0));
        let lam = tr.add(tr.sqr().sub(T::cst(4.0).mul(delta)).sqrt()).mul(T::cst(0.5));
        let last = sh.r2.mul(lam);
        [m, -m].map(|y2| {
            let (ya, yb) = (T::cst(m), T::cst(y2));
            let hy = (hm.a.mul(ya).add(hm.b.mul(yb)), hm.b.mul(ya).add(hm.d.mul(yb)));
            let yhy = ya.mul(hy.0).add(yb.mul(hy.1));
            let quad = hy.0.sqr().mul(e.a).add(two.mul(hy.0).mul(hy.1).mul(e.b)).add(hy.1.sqr().mul(e.d));
            yhy.add(two.mul(sh.r).mul(quad.sqrt())).add(last)
        })
    }

    /// The pieces' natural enclosures on a box, stopping (with +∞) as soon as
    /// one exceeds `useless` (the two-point bound cannot then beat it).
    fn two_point_pieces(&self, sh: &Shared<Iv>, ws: &Ws, useless: f64) -> Option<Vec<[Iv; 2]>> {
        let mut out = Vec::with_capacity(PIECES);
        for (k, &w) in ws.iter().enumerate() {
            let p = self.two_point_piece(sh, k, w);
            if !(p[0].hi.max(p[1].hi) < useless) {
                return None;
            }
            out.push(p);
        }
        Some(out)
    }

    /// An upper bound on the mean part at every pair of the box (ρ ≥ 0) from
    /// the two-point constraint: the largest part's natural enclosure, or
    /// +∞ once it is known to be ≥ `useless` (or not finite).
    pub(super) fn two_point_mean_bound(&self, c: &Coeffs<Iv>, s: Iv, sp: Iv, rho: Iv, useless: f64) -> f64 {
        let sh = self.two_point_shared(c, s, sp, rho);
        let ws = Self::two_point_ws(&sh);
        match self.two_point_pieces(&sh, &ws, useless) {
            Some(p) => p.iter().flatten().map(|x| x.hi).fold(f64::NEG_INFINITY, f64::max),
            None => f64::INFINITY,
        }
    }

    /// An upper bound on covariance part + the two-point mean bound over the
    /// box `b`, each part bounded by its monotonicity test and mean-value form
    /// (joint-accountant.md §6) with the box's W held fixed; parts whose
    /// natural bound is ≤ `enough` are not refined, and once one part stays
    /// above `enough` the rest keep their natural bounds.
    pub(super) fn two_point_mean_value(&self, am1: f64, b: [(f64, f64); 3], enough: f64) -> f64 {
        let bx = b.map(iv);
        let c = self.coeffs(am1, bx[0], bx[1], bx[2]);
        let sh = self.two_point_shared(&c, bx[0], bx[1], bx[2]);
        let ws = Self::two_point_ws(&sh);
        let Some(pieces) = self.two_point_pieces(&sh, &ws, f64::INFINITY) else {
            return f64::INFINITY;
        };
        let parts: Vec<f64> = pieces.iter().flatten().map(|x| c.cov.add(*x).hi).collect();
        let x = [0, 1, 2].map(|k| Dual::var(bx[k], k));
        let cd = self.coeffs(am1, x[0], x[1], x[2]);
        let shd = self.two_point_shared(&cd, x[0], x[1], x[2]);
        let mut order: Vec<usize> = (0..parts.len()).collect();
        order.sort_by(|&i, &j| parts[j].total_cmp(&parts[i]));
        let mut best = f64::NEG_INFINITY;
        for (rank, &i) in order.iter().enumerate() {
            if parts[i] <= best.max(enough) {
                best = best.max(parts[i]);
                continue;
            }
            let (k, corner) = (i / 2, i % 2);
            let h = cd.cov.add(self.two_point_piece(&shd, k, ws[k])[corner]);
            let v = mean_value(b, h, |m| {
                let p = m.map(Iv::point);
                let c = self.coeffs(am1, p[0], p[1], p[2]);
                let sh = self.two_point_shared(&c, p[0], p[1], p[2]);
                c.cov.add(self.two_point_piece(&sh, k, ws[k])[corner]).hi
            })
            .min(parts[i]);
            best = best.max(v);
            if v > enough {
                if let Some(&j) = order.get(rank + 1) {
                    best = best.max(parts[j]);
                }
                break;
            }
        }
        if best.is_nan() { f64::INFINITY } else { best }
    }

    #[cfg(test)]
    /// Whether core means (m, m') satisfy T§ item 2 for the accountant's own
    /// W at the pair's `at` = (s, s', ρ, t), in 64 directions w, and item 1,
    /// up to the relative tolerance `tol` (for audits against real pairs).
    /// With ρ < 0 the pair is mapped to ρ ↦ −ρ, m' ↦ −m', t ↦ −t (T§, the
    /// symmetry).
    pub fn two_point_covers(&self, at: [f64; 4], (m, mp): (f64, f64), tol: f64) -> bool {
        let [s, sp, rho, t] = at;
        let (rho, mp, t) = if rho < 0.0 { (-rho, -mp, -t) } else { (rho, mp, t) };
        let q = self.ridge * self.ridge;
        let (v, vp) = (q * s / (1.0 - s), q * sp / (1.0 - sp));
        let c = rho * (v * vp).sqrt();
        let h2 = (1.0 - v).max(0.0) * (1.0 - vp).max(0.0);
        if t * t > h2 * (1.0 + tol) + tol {
            return false;
        }
        let w = near_optimal_w(v, vp, c, t);
        let e = e_hat(Iv::point(v), Iv::point(vp), Iv::point(c), Iv::point(t), w);
        let r2 = (self.n - 1) as f64 * self.response_bound.powi(2) / q;
        (0..64).all(|k| {
            let a = std::f64::consts::PI * k as f64 / 64.0;
            let (w1, w2) = (a.cos(), a.sin());
            let lhs = (w1 * m + w2 * mp).powi(2);
            let rhs = r2 * (w1 * w1 * e.a.hi + 2.0 * w1 * w2 * mid(e.b) + w2 * w2 * e.d.hi);
            lhs <= rhs * (1.0 + tol) + tol * r2
        })
    }
}
