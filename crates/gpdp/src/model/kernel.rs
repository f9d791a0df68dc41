//! Normalised covariance kernels (sup_x k(x, x) = 1), isotropic, on R^d.
//!
//! Conventions follow Rasmussen & Williams (2006, §4.2), as scikit-learn's
//! `Matern` and `RBF`, with d = ‖x − x'‖ (Euclidean) and lengthscale ℓ:
//!
//! | kind | k(x, x') |
//! |---|---|
//! | exponential (Matérn-1/2) | exp(−d/ℓ) |
//! | Matérn-3/2 | (1 + √3·d/ℓ)·exp(−√3·d/ℓ) |
//! | Matérn-5/2 | (1 + √5·d/ℓ + 5d²/(3ℓ²))·exp(−√5·d/ℓ) |
//! | squared exponential | exp(−d²/(2ℓ²)) |
//! | constant | 1 |
//! | diagonal | 1{x = x'} |
//!
//! All are non-negative, so Proposition 3 applies with
//! κ = inf_{x,x'∈Ω} k(x, x'); the stationary profiles decrease with distance,
//! so κ = k(diam Ω) (docs/bounds.md).

use std::fmt;
use std::str::FromStr;

use faer::Mat;

use crate::error::{Error, Result, positive};
use crate::model::domain::Domain;
use crate::model::points::{Points, distance_unchecked};

/// The kernel families gpdp knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelKind {
    /// exp(−d/ℓ) (Matérn-1/2, Ornstein–Uhlenbeck in 1-D).
    Exponential,
    /// Matérn ν = 3/2.
    Matern32,
    /// Matérn ν = 5/2.
    Matern52,
    /// exp(−d²/(2ℓ²)) (RBF).
    SquaredExponential,
    /// k ≡ 1.
    Constant,
    /// k(x, x') = 1{x = x'}.
    Diagonal,
}

impl KernelKind {
    /// All kinds, in display order.
    pub const ALL: [KernelKind; 6] = [
        KernelKind::Exponential,
        KernelKind::Matern32,
        KernelKind::Matern52,
        KernelKind::SquaredExponential,
        KernelKind::Constant,
        KernelKind::Diagonal,
    ];

    /// The canonical (command-line) name.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Exponential => "exponential",
            KernelKind::Matern32 => "matern32",
            KernelKind::Matern52 => "matern52",
            KernelKind::SquaredExponential => "squared-exponential",
            KernelKind::Constant => "constant",
            KernelKind::Diagonal => "diagonal",
        }
    }

    /// Whether the kernel has a lengthscale (the stationary, distance-based ones).
    pub fn has_lengthscale(self) -> bool {
        !matches!(self, KernelKind::Constant | KernelKind::Diagonal)
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for KernelKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let k = match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "exponential" | "exp" | "matern12" | "matern-1/2" | "laplace" => KernelKind::Exponential,
            "matern32" | "matern-3/2" => KernelKind::Matern32,
            "matern52" | "matern-5/2" => KernelKind::Matern52,
            "squared-exponential" | "se" | "rbf" | "gaussian" => KernelKind::SquaredExponential,
            "constant" => KernelKind::Constant,
            "diagonal" | "white" => KernelKind::Diagonal,
            _ => {
                return Err(Error::InvalidParameter {
                    name: "kernel",
                    value: s.to_string(),
                    requirement: "one of exponential, matern32, matern52, squared-exponential, constant, diagonal",
                });
            }
        };
        Ok(k)
    }
}

/// A normalised kernel: a family and (for stationary families) a lengthscale ℓ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kernel {
    kind: KernelKind,
    lengthscale: f64,
}

impl Kernel {
    /// A kernel of family `kind` with lengthscale ℓ > 0 (ignored, but still
    /// validated, for the constant and diagonal kernels).
    pub fn new(kind: KernelKind, lengthscale: f64) -> Result<Self> {
        positive("lengthscale ℓ", lengthscale)?;
        Ok(Kernel { kind, lengthscale })
    }

    /// The exponential kernel exp(−‖x−x'‖/ℓ).
    pub fn exponential(lengthscale: f64) -> Result<Self> {
        Kernel::new(KernelKind::Exponential, lengthscale)
    }

    /// The family.
    pub fn kind(&self) -> KernelKind {
        self.kind
    }

    /// The lengthscale ℓ.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }

    /// k as a function of the distance d ≥ 0 (stationary families; the
    /// constant kernel gives 1, the diagonal kernel 1{d = 0}).
    #[inline]
    pub fn profile(&self, d: f64) -> f64 {
        let l = self.lengthscale;
        // Beyond a scaled distance of 746, e^(−a) underflows to 0 in double
        // precision, so every profile here is 0 as computed; returning it
        // directly keeps the Matérn forms from giving ∞·0 = NaN when a (or
        // a²) overflows.
        if d / l > 746.0 && self.kind.has_lengthscale() {
            return 0.0;
        }
        match self.kind {
            KernelKind::Exponential => (-d / l).exp(),
            KernelKind::Matern32 => {
                let a = 3f64.sqrt() * d / l;
                (1.0 + a) * (-a).exp()
            }
            KernelKind::Matern52 => {
                let a = 5f64.sqrt() * d / l;
                (1.0 + a + a * a / 3.0) * (-a).exp()
            }
            KernelKind::SquaredExponential => (-0.5 * (d / l) * (d / l)).exp(),
            KernelKind::Constant => 1.0,
            KernelKind::Diagonal => {
                if d == 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }

    /// k(x, x'); points of different dimensions are an error.
    pub fn eval(&self, x: &[f64], y: &[f64]) -> Result<f64> {
        if x.len() != y.len() {
            return Err(Error::Dimension(format!("k(x, x') of a {}-D and a {}-D point", x.len(), y.len())));
        }
        Ok(self.eval_unchecked(x, y))
    }

    /// k(x, x') for points of the same dimension (checked by the caller).
    #[inline]
    pub(crate) fn eval_unchecked(&self, x: &[f64], y: &[f64]) -> f64 {
        match self.kind {
            KernelKind::Constant => 1.0,
            KernelKind::Diagonal => {
                if x == y {
                    1.0
                } else {
                    0.0
                }
            }
            _ => self.profile(distance_unchecked(x, y)),
        }
    }

    /// k(x, x) = 1 for every family here (normalised, constant diagonal).
    #[inline]
    pub fn diag(&self, _x: &[f64]) -> f64 {
        1.0
    }

    /// κ = inf_{x,x'∈Ω} k(x, x') (Proposition 3), or `None` when it is not
    /// available (never for the families and bounded domains here).
    ///
    /// For the stationary families, κ = k(diam Ω) since the profiles are
    /// non-increasing in distance. For the diagonal kernel κ = 0 unless Ω
    /// is a single point; for the constant kernel κ = 1.
    pub fn kappa(&self, domain: &Domain) -> Option<f64> {
        self.kappa_with_exactness(domain).map(|(k, _)| k)
    }

    /// κ and whether it is exact in floating point (constant and diagonal
    /// kernels, or a single-point domain); otherwise it carries the rounding
    /// of the diameter and of the profile (a few units of roundoff).
    pub fn kappa_with_exactness(&self, domain: &Domain) -> Option<(f64, bool)> {
        match self.kind {
            KernelKind::Constant => Some((1.0, true)),
            KernelKind::Diagonal => Some((if domain.is_singleton() { 1.0 } else { 0.0 }, true)),
            _ => {
                let d = domain.diameter();
                d.is_finite().then(|| (self.profile(d), d == 0.0))
            }
        }
    }

    /// The Gram matrix K(X, X).
    pub fn gram(&self, x: &Points) -> Mat<f64> {
        let n = x.len();
        let mut k = Mat::<f64>::zeros(n, n);
        for j in 0..n {
            k[(j, j)] = self.diag(x.row(j));
            for i in j + 1..n {
                let v = self.eval_unchecked(x.row(i), x.row(j));
                k[(i, j)] = v;
                k[(j, i)] = v;
            }
        }
        k
    }

    /// The cross-covariance matrix K(A, B) (|A| × |B|).
    pub fn cross(&self, a: &Points, b: &Points) -> Mat<f64> {
        Mat::from_fn(a.len(), b.len(), |i, j| self.eval_unchecked(a.row(i), b.row(j)))
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind.has_lengthscale() {
            write!(f, "{}(ℓ={})", self.kind, self.lengthscale)
        } else {
            write!(f, "{}", self.kind)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(kind: KernelKind, l: f64) -> Kernel {
        Kernel::new(kind, l).unwrap()
    }

    #[test]
    fn profiles_match_hand_values() {
        // Hand-checked: exp(-0.5) = 0.6065306597126334,
        // (1+√3/2)exp(-√3/2) = 0.7848876539574506 (scikit-learn Matern(nu=1.5)),
        // (1+√5/2+5/12)exp(-√5/2) = 0.8286491424181255 (Matern(nu=2.5)),
        // exp(-1/8) = 0.8824969025845955 (RBF).
        let cases = [
            (KernelKind::Exponential, 0.6065306597126334),
            (KernelKind::Matern32, 0.7848876539574506),
            (KernelKind::Matern52, 0.8286491424181255),
            (KernelKind::SquaredExponential, 0.8824969025845955),
            (KernelKind::Constant, 1.0),
            (KernelKind::Diagonal, 0.0),
        ];
        for (kind, want) in cases {
            let got = k(kind, 1.0).eval(&[0.2, 0.0], &[0.2, 0.5]).unwrap();
            assert!((got - want).abs() < 1e-15, "{kind}: {got} vs {want}");
            assert_eq!(k(kind, 1.0).eval(&[0.3, 0.1], &[0.3, 0.1]).unwrap(), 1.0);
            assert!(k(kind, 1.0).eval(&[0.3, 0.1], &[0.3]).is_err(), "mismatched dimensions are an error");
        }
    }

    #[test]
    fn profiles_vanish_at_infinite_scaled_distance() {
        for kind in
            [KernelKind::Exponential, KernelKind::Matern32, KernelKind::Matern52, KernelKind::SquaredExponential]
        {
            let kernel = Kernel::new(kind, 1e-300).unwrap();
            for d in [1e10, f64::INFINITY] {
                assert_eq!(kernel.profile(d), 0.0, "{kind} at d = {d}");
            }
            assert_eq!(k(kind, 1.0).profile(f64::INFINITY), 0.0, "{kind}");
            // Large but finite: the closed forms underflow to 0, never NaN.
            assert_eq!(k(kind, 1.0).profile(1e300), 0.0, "{kind}");
        }
        assert_eq!(k(KernelKind::Constant, 1.0).profile(f64::INFINITY), 1.0);
        assert_eq!(k(KernelKind::Diagonal, 1.0).profile(f64::INFINITY), 0.0);
    }

    #[test]
    fn kappa_is_kernel_at_diameter() {
        let unit: Domain = "interval:0,1".parse().unwrap();
        let square: Domain = "box:0,1,0,1".parse().unwrap();
        assert!((k(KernelKind::Exponential, 1.0).kappa(&unit).unwrap() - (-1f64).exp()).abs() < 1e-16);
        let want = (-(2f64.sqrt()) / 0.5).exp();
        assert!((k(KernelKind::Exponential, 0.5).kappa(&square).unwrap() - want).abs() < 1e-16);
        assert_eq!(k(KernelKind::Constant, 1.0).kappa(&square), Some(1.0));
        assert_eq!(k(KernelKind::Diagonal, 1.0).kappa(&square), Some(0.0));
        // κ is the infimum: no pair in the domain has a smaller kernel value.
        let kern = k(KernelKind::Matern52, 0.3);
        let kap = kern.kappa(&square).unwrap();
        for i in 0..=10 {
            for j in 0..=10 {
                let x = [i as f64 / 10.0, 0.0];
                let y = [1.0, j as f64 / 10.0];
                assert!(kern.eval(&x, &y).unwrap() >= kap);
            }
        }
    }

    #[test]
    fn rejects_bad_lengthscale_and_names() {
        for l in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(Kernel::new(KernelKind::Exponential, l).is_err());
        }
        assert!("cubic".parse::<KernelKind>().is_err());
        for kind in KernelKind::ALL {
            assert_eq!(kind.name().parse::<KernelKind>().unwrap(), kind);
        }
    }
}
