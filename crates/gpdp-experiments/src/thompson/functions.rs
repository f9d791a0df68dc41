//! The test functions of the regret study, rescaled to be maximised on the
//! unit box with values in [−1, 1].
//!
//! Each function f has a native domain (a box); the study works on [0, 1]^d
//! through the affine map u ↦ lo + u·(hi − lo), and maximises
//!
//! ```text
//! g(u) = 1 − 2·(f(x(u)) − f_min) / (f_max − f_min)
//! ```
//!
//! so that g = 1 exactly at a global minimiser of f, g ≥ −1 everywhere, and
//! larger g is better. f_min is the known global minimum; f_max is the
//! maximum of f over its domain, or an upper bound of it:
//!
//! | function | native domain | f_min | f_max |
//! |---|---|---|---|
//! | Forrester (Forrester, Sóbester & Keane 2008) | [0, 1] | −6.0207400557670825 at x ≈ 0.757249 | 16·sin 8 ≈ 15.8297 = f(1), the maximum |
//! | Branin (Branin 1972; Dixon & Szegő 1978) | [−5, 10] × [0, 15] | 10/(8π) ≈ 0.397887 at (π, 2.275) and two more points | f(−5, 0) ≈ 308.129, the maximum |
//! | Hartmann-3 | [0, 1]³ | −3.862779787332663 at ≈ (0.114589, 0.555649, 0.852547) | 0, an upper bound (f < 0 everywhere) |
//! | Hartmann-6 | [0, 1]⁶ | −3.3223680114155143 at ≈ (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573) | 0, an upper bound |
//!
//! The Hartmann constants (α, A, P) are the standard published ones
//! (Dixon & Szegő 1978; the Virtual Library of Simulation Experiments,
//! Surjanovic & Bingham). The minima of Forrester and of the Hartmann
//! functions were refined to full precision by local search from the
//! published minimisers; Branin's is exact (at its minimisers
//! x₂ − b·x₁² + c·x₁ − r = 0 and cos x₁ = −1, so f = s·t). The maxima of
//! Forrester and Branin are attained at a corner of the domain (checked on a
//! fine grid in the tests).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A test function of the regret study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestFunction {
    /// Forrester et al. (2008), 1-D: f(x) = (6x − 2)² sin(12x − 4) on [0, 1].
    Forrester,
    /// Branin–Hoo, 2-D, on [−5, 10] × [0, 15].
    Branin,
    /// Hartmann 3-D on [0, 1]³.
    Hartmann3,
    /// Hartmann 6-D on [0, 1]⁶.
    Hartmann6,
}

/// The functions in their canonical order.
pub const ALL_FUNCTIONS: [TestFunction; 4] =
    [TestFunction::Forrester, TestFunction::Branin, TestFunction::Hartmann3, TestFunction::Hartmann6];

const HARTMANN_ALPHA: [f64; 4] = [1.0, 1.2, 3.0, 3.2];
const HARTMANN3_A: [[f64; 3]; 4] = [[3.0, 10.0, 30.0], [0.1, 10.0, 35.0], [3.0, 10.0, 30.0], [0.1, 10.0, 35.0]];
const HARTMANN3_P: [[f64; 3]; 4] =
    [[3689.0, 1170.0, 2673.0], [4699.0, 4387.0, 7470.0], [1091.0, 8732.0, 5547.0], [381.0, 5743.0, 8828.0]];
const HARTMANN6_A: [[f64; 6]; 4] = [
    [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
    [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
    [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
    [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
];
const HARTMANN6_P: [[f64; 6]; 4] = [
    [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
    [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
    [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
    [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
];

/// f(x) = −Σᵢ αᵢ exp(−Σⱼ A_ij (x_j − 10⁻⁴·P_ij)²).
fn hartmann<const D: usize>(a: &[[f64; D]; 4], p: &[[f64; D]; 4], x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..4 {
        let mut e = 0.0;
        for j in 0..D {
            let d = x[j] - 1e-4 * p[i][j];
            e += a[i][j] * d * d;
        }
        s += HARTMANN_ALPHA[i] * (-e).exp();
    }
    -s
}

/// Branin: a(x₂ − b x₁² + c x₁ − r)² + s(1 − t) cos x₁ + s with a = 1,
/// b = 5.1/(4π²), c = 5/π, r = 6, s = 10, t = 1/(8π).
fn branin(x1: f64, x2: f64) -> f64 {
    let pi = std::f64::consts::PI;
    let (b, c, r, s, t) = (5.1 / (4.0 * pi * pi), 5.0 / pi, 6.0, 10.0, 1.0 / (8.0 * pi));
    let q = x2 - b * x1 * x1 + c * x1 - r;
    q * q + s * (1.0 - t) * x1.cos() + s
}

impl TestFunction {
    /// The name as the CLI and the outputs spell it.
    pub fn name(self) -> &'static str {
        match self {
            TestFunction::Forrester => "forrester",
            TestFunction::Branin => "branin",
            TestFunction::Hartmann3 => "hartmann3",
            TestFunction::Hartmann6 => "hartmann6",
        }
    }

    /// A title for figures and tables.
    pub fn title(self) -> &'static str {
        match self {
            TestFunction::Forrester => "Forrester (1-D)",
            TestFunction::Branin => "Branin (2-D)",
            TestFunction::Hartmann3 => "Hartmann-3",
            TestFunction::Hartmann6 => "Hartmann-6",
        }
    }

    /// The dimension d.
    pub fn dim(self) -> usize {
        match self {
            TestFunction::Forrester => 1,
            TestFunction::Branin => 2,
            TestFunction::Hartmann3 => 3,
            TestFunction::Hartmann6 => 6,
        }
    }

    /// The native domain, as (lower corner, upper corner).
    pub fn native_box(self) -> (Vec<f64>, Vec<f64>) {
        match self {
            TestFunction::Branin => (vec![-5.0, 0.0], vec![10.0, 15.0]),
            f => (vec![0.0; f.dim()], vec![1.0; f.dim()]),
        }
    }

    /// The known global minimum f_min (module docs).
    pub fn f_min(self) -> f64 {
        match self {
            TestFunction::Forrester => -6.020_740_055_767_082_5,
            TestFunction::Branin => 1.25 / std::f64::consts::PI,
            TestFunction::Hartmann3 => -3.862_779_787_332_663,
            TestFunction::Hartmann6 => -3.322_368_011_415_514_3,
        }
    }

    /// The maximum of f over the domain (Forrester, Branin: attained at a
    /// corner), or the upper bound 0 (Hartmann: f < 0 everywhere).
    pub fn f_max(self) -> f64 {
        match self {
            TestFunction::Forrester => self.native(&[1.0]),
            TestFunction::Branin => branin(-5.0, 0.0),
            TestFunction::Hartmann3 | TestFunction::Hartmann6 => 0.0,
        }
    }

    /// f at a point of the native domain (d coordinates; not checked).
    pub fn native(self, x: &[f64]) -> f64 {
        match self {
            TestFunction::Forrester => {
                let x = x[0];
                (6.0 * x - 2.0).powi(2) * (12.0 * x - 4.0).sin()
            }
            TestFunction::Branin => branin(x[0], x[1]),
            TestFunction::Hartmann3 => hartmann(&HARTMANN3_A, &HARTMANN3_P, x),
            TestFunction::Hartmann6 => hartmann(&HARTMANN6_A, &HARTMANN6_P, x),
        }
    }

    /// The native point of a point u of [0, 1]^d: lo + u·(hi − lo).
    pub fn to_native(self, u: &[f64]) -> Vec<f64> {
        let (lo, hi) = self.native_box();
        u.iter().zip(lo.iter().zip(&hi)).map(|(&u, (&l, &h))| l + u * (h - l)).collect()
    }

    /// The study's objective at u ∈ [0, 1]^d:
    /// g(u) = 1 − 2·(f(x(u)) − f_min)/(f_max − f_min) ∈ [−1, 1].
    pub fn g(self, u: &[f64]) -> f64 {
        let f = self.native(&self.to_native(u));
        1.0 - 2.0 * (f - self.f_min()) / (self.f_max() - self.f_min())
    }
}

impl fmt::Display for TestFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TestFunction {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase();
        ALL_FUNCTIONS.into_iter().find(|f| f.name() == t).ok_or_else(|| Error::InvalidInput {
            what: "test function",
            detail: format!("'{s}' is not one of forrester, branin, hartmann3, hartmann6"),
        })
    }
}
