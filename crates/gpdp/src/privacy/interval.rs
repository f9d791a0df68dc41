//! Interval arithmetic with outward rounding, for certified bounds
//! (docs/proofs/joint-accountant.md §6).
//!
//! An [`Iv`] [lo, hi] encloses a real number. Every operation returns an
//! interval that encloses every result of the exact operation on members of
//! its operands: the floating-point end points are computed with the
//! operation rounded to nearest and then moved outwards by one ulp
//! (`next_down`/`next_up`), which covers the ≤ ½-ulp error of IEEE 754
//! +, −, ×, ÷ and √ (correctly rounded). `ln` and `ln_1p` are not
//! correctly rounded; they come from [`super::elementary`] (the `libm`
//! crate), whose exact value lies within one double of the computed one
//! (tested against a 256-bit reference), and are moved out by two doubles.
//! A NaN anywhere gives the whole line [−∞, +∞] — a valid, if useless,
//! enclosure.

use super::elementary;

/// A closed interval [lo, hi] of reals (lo ≤ hi; ±∞ allowed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Iv {
    pub lo: f64,
    pub hi: f64,
}

const ENTIRE: Iv = Iv { lo: f64::NEG_INFINITY, hi: f64::INFINITY };

#[inline]
fn down(x: f64) -> f64 {
    if x.is_nan() { f64::NEG_INFINITY } else { x.next_down() }
}

#[inline]
fn up(x: f64) -> f64 {
    if x.is_nan() { f64::INFINITY } else { x.next_up() }
}

impl Iv {
    /// [lo, hi]; a NaN or reversed pair is the whole line.
    #[inline]
    pub fn new(lo: f64, hi: f64) -> Iv {
        if lo.is_nan() || hi.is_nan() || lo > hi { ENTIRE } else { Iv { lo, hi } }
    }

    /// The degenerate interval [x, x] (x is exact).
    #[inline]
    pub fn point(x: f64) -> Iv {
        Iv::new(x, x)
    }

    #[inline]
    pub fn add(self, o: Iv) -> Iv {
        // down/up turn a NaN (∞ − ∞) into the infinite end: never lo > hi.
        Iv { lo: down(self.lo + o.lo), hi: up(self.hi + o.hi) }
    }

    #[inline]
    pub fn sub(self, o: Iv) -> Iv {
        Iv { lo: down(self.lo - o.hi), hi: up(self.hi - o.lo) }
    }

    #[inline]
    pub fn neg(self) -> Iv {
        Iv { lo: -self.hi, hi: -self.lo }
    }

    #[inline]
    pub fn mul(self, o: Iv) -> Iv {
        let (a, b) = (self, o);
        // An exact zero factor gives exactly 0 (members are finite reals).
        if (a.lo == 0.0 && a.hi == 0.0) || (b.lo == 0.0 && b.hi == 0.0) {
            return Iv { lo: 0.0, hi: 0.0 };
        }
        // End points by the signs of the operands (the extreme products of
        // the four corners); a NaN (0 × ∞ at an infinite end point) is
        // rounded to the infinite end, which is still an enclosure.
        let (lo, hi) = if a.lo >= 0.0 {
            if b.lo >= 0.0 {
                (a.lo * b.lo, a.hi * b.hi)
            } else if b.hi <= 0.0 {
                (a.hi * b.lo, a.lo * b.hi)
            } else {
                (a.hi * b.lo, a.hi * b.hi)
            }
        } else if a.hi <= 0.0 {
            if b.lo >= 0.0 {
                (a.lo * b.hi, a.hi * b.lo)
            } else if b.hi <= 0.0 {
                (a.hi * b.hi, a.lo * b.lo)
            } else {
                (a.lo * b.hi, a.lo * b.lo)
            }
        } else if b.lo >= 0.0 {
            (a.lo * b.hi, a.hi * b.hi)
        } else if b.hi <= 0.0 {
            (a.hi * b.lo, a.lo * b.lo)
        } else {
            ((a.lo * b.hi).min(a.hi * b.lo), (a.lo * b.lo).max(a.hi * b.hi))
        };
        Iv { lo: down(lo), hi: up(hi) }
    }

    #[inline]
    pub fn div(self, o: Iv) -> Iv {
        let (a, b) = (self, o);
        if b.lo <= 0.0 && b.hi >= 0.0 {
            return ENTIRE;
        }
        if a.lo == 0.0 && a.hi == 0.0 {
            return Iv { lo: 0.0, hi: 0.0 };
        }
        let (lo, hi) = if b.lo > 0.0 {
            if a.lo >= 0.0 {
                (a.lo / b.hi, a.hi / b.lo)
            } else if a.hi <= 0.0 {
                (a.lo / b.lo, a.hi / b.hi)
            } else {
                (a.lo / b.lo, a.hi / b.lo)
            }
        } else if a.lo >= 0.0 {
            (a.hi / b.hi, a.lo / b.lo)
        } else if a.hi <= 0.0 {
            (a.hi / b.lo, a.lo / b.hi)
        } else {
            (a.hi / b.hi, a.lo / b.hi)
        };
        Iv { lo: down(lo), hi: up(hi) }
    }

    /// The four-product forms of [`Iv::mul`] and [`Iv::div`] (reference for tests).
    #[cfg(test)]
    fn mul_ref(self, o: Iv) -> Iv {
        let c = [self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi];
        if c.iter().any(|x| x.is_nan()) {
            return ENTIRE;
        }
        let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Iv::new(down(lo), up(hi))
    }

    #[cfg(test)]
    fn div_ref(self, o: Iv) -> Iv {
        if o.lo <= 0.0 && o.hi >= 0.0 {
            return ENTIRE;
        }
        let c = [self.lo / o.lo, self.lo / o.hi, self.hi / o.lo, self.hi / o.hi];
        if c.iter().any(|x| x.is_nan()) {
            return ENTIRE;
        }
        let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Iv::new(down(lo), up(hi))
    }

    #[inline]
    pub fn sqr(self) -> Iv {
        let (a, b) = (self.lo.abs(), self.hi.abs());
        if self.lo <= 0.0 && self.hi >= 0.0 {
            Iv::new(0.0, up(a.max(b) * a.max(b)))
        } else {
            let (m, x) = (a.min(b), a.max(b));
            Iv::new(down(m * m).max(0.0), up(x * x))
        }
    }

    /// √x over the non-negative part (negative end points are cut at 0, as
    /// for quantities that are ≥ 0 in exact arithmetic).
    #[inline]
    pub fn sqrt(self) -> Iv {
        Iv::new(down(self.lo.max(0.0).sqrt()).max(0.0), up(self.hi.max(0.0).sqrt()))
    }

    /// ln x; [−∞, …] when the interval reaches 0 or below.
    pub fn ln(self) -> Iv {
        let lo = if self.lo > 0.0 { down(down(elementary::ln(self.lo))) } else { f64::NEG_INFINITY };
        let hi = if self.hi > 0.0 { up(up(elementary::ln(self.hi))) } else { f64::NEG_INFINITY };
        Iv::new(lo, hi)
    }

    /// ln(1 + x); [−∞, …] when the interval reaches −1 or below.
    pub fn ln_1p(self) -> Iv {
        let lo = if self.lo > -1.0 { down(down(elementary::ln_1p(self.lo))) } else { f64::NEG_INFINITY };
        let hi = if self.hi > -1.0 { up(up(elementary::ln_1p(self.hi))) } else { f64::NEG_INFINITY };
        Iv::new(lo, hi)
    }

    /// |x|.
    #[inline]
    pub fn abs(self) -> Iv {
        if self.lo >= 0.0 {
            self
        } else if self.hi <= 0.0 {
            self.neg()
        } else {
            Iv::new(0.0, self.hi.max(-self.lo))
        }
    }

    /// min(x, y) for x ∈ self, y ∈ o.
    #[inline]
    pub fn min(self, o: Iv) -> Iv {
        Iv::new(self.lo.min(o.lo), self.hi.min(o.hi))
    }

    /// Whether 0 ∈ self.
    pub fn contains_zero(self) -> bool {
        self.lo <= 0.0 && self.hi >= 0.0
    }

    /// Whether x ≤ y is possible for some x ∈ self, y ∈ o.
    pub fn possibly_le(self, o: Iv) -> bool {
        self.lo <= o.hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enclosures_contain_the_exact_results() {
        let a = Iv::new(0.1, 0.3);
        let b = Iv::new(-0.2, 0.7);
        // Samples of a ∘ b lie inside the enclosure.
        for i in 0..=20 {
            for j in 0..=20 {
                // Samples inside the intervals (clamped: 0.1 + 0.2 rounds above 0.3).
                let x = (0.1 + 0.2 * i as f64 / 20.0).clamp(0.1, 0.3);
                let y = (-0.2 + 0.9 * j as f64 / 20.0).clamp(-0.2, 0.7);
                for (iv, v) in [(a.add(b), x + y), (a.sub(b), x - y), (a.mul(b), x * y), (b.sqr(), y * y)] {
                    assert!(iv.lo <= v && v <= iv.hi, "{v} ∉ {iv:?}");
                }
                let d = a.div(Iv::new(0.5, 2.0));
                assert!(d.lo <= x / 0.5 && x / 2.0 <= d.hi);
                let l = a.ln();
                assert!(l.lo <= x.ln() && x.ln() <= l.hi);
            }
        }
        assert_eq!(a.div(b), ENTIRE);
        assert!(Iv::point(2.0).sqrt().lo < 2f64.sqrt() && 2f64.sqrt() < Iv::point(2.0).sqrt().hi);
        // Outward rounding: 0.1 + 0.2 is not exactly 0.3 in binary; the
        // enclosure of the point sum contains both neighbours of the rounded sum.
        let s = Iv::point(0.1).add(Iv::point(0.2));
        assert!(s.lo < 0.1 + 0.2 && 0.1 + 0.2 < s.hi);
        assert_eq!(Iv::new(f64::NAN, 1.0), ENTIRE);
        assert_eq!(Iv::new(-1.0, 2.0).abs(), Iv::new(0.0, 2.0));
        assert!(Iv::new(0.0, 1.0).ln().lo == f64::NEG_INFINITY);
    }

    #[test]
    fn sign_case_products_equal_the_four_product_forms() {
        // Every sign pattern of both operands (including zero end points and
        // points), finite values: the fast forms give the same end points.
        let ends = [-3.5, -1.0, -0.25, 0.0, 0.5, 2.0, 7.0];
        let mut ivs = Vec::new();
        for &lo in &ends {
            for &hi in &ends {
                if lo <= hi {
                    ivs.push(Iv::new(lo, hi));
                }
            }
        }
        for &a in &ivs {
            for &b in &ivs {
                let (m, r) = (a.mul(b), a.mul_ref(b));
                if a == Iv::point(0.0) || b == Iv::point(0.0) {
                    assert_eq!(m, Iv::point(0.0));
                    assert!(r.lo <= 0.0 && r.hi >= 0.0);
                } else {
                    assert_eq!(m, r, "{a:?} × {b:?}");
                }
                let (d, r) = (a.div(b), a.div_ref(b));
                if a == Iv::point(0.0) && !b.contains_zero() {
                    assert_eq!(d, Iv::point(0.0));
                } else {
                    assert_eq!(d, r, "{a:?} / {b:?}");
                }
            }
        }
        // Infinite end points stay enclosures.
        let w = Iv::new(0.0, f64::INFINITY).mul(Iv::new(0.0, 2.0));
        assert!(w.lo <= 0.0 && w.hi == f64::INFINITY);
    }
}

impl Iv {
    /// The smallest interval holding both.
    #[inline]
    pub fn hull(self, o: Iv) -> Iv {
        Iv::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }

    /// max(x, y) for x ∈ self, y ∈ o.
    #[inline]
    pub fn max(self, o: Iv) -> Iv {
        Iv::new(self.lo.max(o.lo), self.hi.max(o.hi))
    }
}

/// The operations the certified bounds are written with, for plain
/// intervals ([`Iv`]) and for intervals with derivative enclosures
/// ([`Dual`]), so that one formula gives both.
pub(crate) trait Num: Copy {
    fn cst(x: f64) -> Self;
    /// A constant ranging over an interval (zero derivatives).
    fn iv(x: Iv) -> Self;
    fn val(self) -> Iv;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn sqr(self) -> Self;
    fn sqrt(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    /// min(x, y); with derivatives, the active branch's where one branch is
    /// below the other on the whole box, else the hull of both.
    fn min(self, o: Self) -> Self;
    /// max(x, y), likewise.
    fn max(self, o: Self) -> Self;
}

impl Num for Iv {
    fn cst(x: f64) -> Self {
        Iv::point(x)
    }
    fn iv(x: Iv) -> Self {
        x
    }
    fn val(self) -> Iv {
        self
    }
    fn add(self, o: Self) -> Self {
        Iv::add(self, o)
    }
    fn sub(self, o: Self) -> Self {
        Iv::sub(self, o)
    }
    fn mul(self, o: Self) -> Self {
        Iv::mul(self, o)
    }
    fn div(self, o: Self) -> Self {
        Iv::div(self, o)
    }
    fn neg(self) -> Self {
        Iv::neg(self)
    }
    fn sqr(self) -> Self {
        Iv::sqr(self)
    }
    fn sqrt(self) -> Self {
        Iv::sqrt(self)
    }
    fn ln(self) -> Self {
        Iv::ln(self)
    }
    fn ln_1p(self) -> Self {
        Iv::ln_1p(self)
    }
    fn min(self, o: Self) -> Self {
        Iv::min(self, o)
    }
    fn max(self, o: Self) -> Self {
        Iv::max(self, o)
    }
}

/// An interval enclosure of a function on a box together with enclosures
/// of its three partial derivatives over the box (forward-mode automatic
/// differentiation in interval arithmetic). Every rule is the chain rule
/// evaluated on enclosures, so each `d[k]` contains ∂f/∂x_k at every point
/// of the box where f is differentiable; at the kinks of min/max the hull
/// of both one-sided derivatives is taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Dual {
    pub v: Iv,
    pub d: [Iv; 3],
}

const ZERO: Iv = Iv { lo: 0.0, hi: 0.0 };

impl Dual {
    /// The k-th coordinate, ranging over `x`.
    pub fn var(x: Iv, k: usize) -> Dual {
        let mut d = [ZERO; 3];
        d[k] = Iv::point(1.0);
        Dual { v: x, d }
    }

    fn map(self, v: Iv, f: Iv) -> Dual {
        // d(g∘self) = g'(self)·d(self), with f an enclosure of g' on self.v.
        Dual { v, d: [self.d[0].mul(f), self.d[1].mul(f), self.d[2].mul(f)] }
    }
}

impl Num for Dual {
    fn cst(x: f64) -> Self {
        Dual { v: Iv::point(x), d: [ZERO; 3] }
    }
    fn iv(x: Iv) -> Self {
        Dual { v: x, d: [ZERO; 3] }
    }
    fn val(self) -> Iv {
        self.v
    }
    fn add(self, o: Self) -> Self {
        Dual { v: self.v.add(o.v), d: [0, 1, 2].map(|k| self.d[k].add(o.d[k])) }
    }
    fn sub(self, o: Self) -> Self {
        Dual { v: self.v.sub(o.v), d: [0, 1, 2].map(|k| self.d[k].sub(o.d[k])) }
    }
    fn mul(self, o: Self) -> Self {
        Dual { v: self.v.mul(o.v), d: [0, 1, 2].map(|k| self.d[k].mul(o.v).add(self.v.mul(o.d[k]))) }
    }
    fn div(self, o: Self) -> Self {
        // (f/g)' = (f' − (f/g)·g')/g
        let q = self.v.div(o.v);
        Dual { v: q, d: [0, 1, 2].map(|k| self.d[k].sub(q.mul(o.d[k])).div(o.v)) }
    }
    fn neg(self) -> Self {
        Dual { v: self.v.neg(), d: [0, 1, 2].map(|k| self.d[k].neg()) }
    }
    fn sqr(self) -> Self {
        let two_v = Iv::point(2.0).mul(self.v);
        self.map(self.v.sqr(), two_v)
    }
    fn sqrt(self) -> Self {
        let r = self.v.sqrt();
        self.map(r, Iv::point(1.0).div(Iv::point(2.0).mul(r)))
    }
    fn ln(self) -> Self {
        self.map(self.v.ln(), Iv::point(1.0).div(self.v))
    }
    fn ln_1p(self) -> Self {
        self.map(self.v.ln_1p(), Iv::point(1.0).div(Iv::point(1.0).add(self.v)))
    }
    fn min(self, o: Self) -> Self {
        if self.v.hi < o.v.lo {
            self
        } else if o.v.hi < self.v.lo {
            o
        } else {
            Dual { v: self.v.min(o.v), d: [0, 1, 2].map(|k| self.d[k].hull(o.d[k])) }
        }
    }
    fn max(self, o: Self) -> Self {
        if self.v.lo > o.v.hi {
            self
        } else if o.v.lo > self.v.hi {
            o
        } else {
            Dual { v: self.v.max(o.v), d: [0, 1, 2].map(|k| self.d[k].hull(o.d[k])) }
        }
    }
}

#[cfg(test)]
mod dual_tests {
    use super::*;

    /// f(x, y, z) = ln(1 + x·y) / (1 + z²) + √x: derivative enclosures hold
    /// central differences at sampled points of the box.
    #[test]
    fn derivative_enclosures_contain_the_derivatives() {
        let b = [Iv::new(0.2, 0.3), Iv::new(0.5, 0.9), Iv::new(-0.4, 0.1)];
        let f = |x: Dual, y: Dual, z: Dual| {
            let one = Dual::cst(1.0);
            x.mul(y).ln_1p().div(one.add(z.sqr())).add(x.sqrt())
        };
        let out = f(Dual::var(b[0], 0), Dual::var(b[1], 1), Dual::var(b[2], 2));
        let g = |p: [f64; 3]| (p[0] * p[1]).ln_1p() / (1.0 + p[2] * p[2]) + p[0].sqrt();
        for i in 0..=4 {
            for j in 0..=4 {
                for l in 0..=4 {
                    let p = [0.2 + 0.025 * i as f64, 0.5 + 0.1 * j as f64, -0.4 + 0.125 * l as f64];
                    assert!(out.v.lo <= g(p) && g(p) <= out.v.hi);
                    for k in 0..3 {
                        let h = 1e-6;
                        let (mut a, mut c) = (p, p);
                        a[k] -= h;
                        c[k] += h;
                        let d = (g(c) - g(a)) / (2.0 * h);
                        assert!(out.d[k].lo - 1e-6 <= d && d <= out.d[k].hi + 1e-6, "∂{k} {d} ∉ {:?}", out.d[k]);
                    }
                }
            }
        }
    }
}
