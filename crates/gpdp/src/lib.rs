//! # gpdp — differentially private Gaussian-process posterior sample paths
//!
//! Releasing a draw f_D ~ GP(μ_D, σ²k_D) of a GP posterior fitted to private
//! data D is (ε, δ)-differentially private, with ε governed by the effective
//! ridge r and the kernel scale σ (Maciazek 2026, Theorem 3.1). This crate
//! makes such releases ([`Mechanism`]), computes their guarantee exactly
//! ([`privacy`]) and the exact posterior they are about ([`posterior`]).
//!
//! The crate reads as its data flow:
//!
//! ```text
//! model      kernel, domain, points, dataset, draws, query, data policy
//!   → posterior   exact μ_D, k_D (Cholesky; state-space in 1-D)
//!   → sampling    exact samplers, chosen from public inputs   (crate-private)
//!   → mechanism   policy + accounted posterior + L draws → paths + report
//!   → postprocess grids, smoothing, excursion sets, contours, GeoJSON
//! privacy    (kernel, domain, n, r, σ, η, L, δ) → bounds → RDP → (ε, δ) report
//! ```
//!
//! ## A private release
//!
//! The hyperparameters (kernel, ℓ, σ, η, and r or a target ε) are public:
//! they must be chosen without the private data. The mechanism is built from
//! them alone — its guarantee is known before any data are seen — and then
//! fits exactly that posterior and draws exactly the accounted paths.
//!
//! ```
//! use gpdp::{
//!     Dataset, Domain, Draws, Grid, Kernel, MechanismParams, Points, Query, ReleaseParams, ReleaseRng, ResponseScale, Solve,
//! };
//!
//! // Public: a 1-D exponential kernel on [0, 1], n = 6 records, σ = 0.5,
//! // two paths, δ = 10⁻³, and the smallest ridge that gives ε ≤ 5.
//! let domain = Domain::interval(0.0, 1.0)?;
//! let model = ReleaseParams::new(Kernel::exponential(0.3)?, domain.clone(), 6, 1.0, 0.5);
//! // The responses' scale is a required public choice: here |y| ≤ M_Y = 1 in
//! // the data's own units (`ResponseScale::Range` takes a range in data units).
//! let mut params = MechanismParams::new(model, 1e-3, ResponseScale::Bound(1.0));
//! params.draws = Draws::new(2)?;
//! let mechanism = params.calibrate(Solve::Ridge, 5.0)?;
//! assert!(mechanism.privacy().epsilon <= 5.0);
//!
//! // Private: the records (responses beyond M_Y = 1 are clipped).
//! let data = Dataset::new(
//!     Points::from_1d(&[0.05, 0.2, 0.21, 0.5, 0.77, 0.9]),
//!     vec![0.4, -0.9, -0.7, 1.3, 0.3, -0.2],
//! )?;
//! let query = Query::Grid(Grid::parse("50", &domain)?);
//!
//! // The release: OS-seeded ChaCha20, exactly 2 paths on the 50 grid points.
//! let release = mechanism.release(&data, &query, &mut ReleaseRng::from_os()?)?;
//! assert_eq!(release.paths.len(), 2);
//! assert!(release.report.private);
//! // `release.report` is what may be published next to the paths;
//! // `release.diagnostics` (here: one clipped response) is for the operator only.
//! assert_eq!(release.diagnostics.policy.responses_clipped, 1);
//! let published = serde_json::to_string(&release.report).unwrap();
//! assert!(!published.contains("clipped"));
//!
//! // Data the guarantee does not cover are refused, not released.
//! let wrong_n = Dataset::new(Points::from_1d(&[0.1, 0.2]), vec![0.0, 0.0])?;
//! assert!(mechanism.release(&wrong_n, &query, &mut ReleaseRng::from_os()?).is_err());
//! # Ok::<(), gpdp::Error>(())
//! ```
//!
//! ## The accountant alone
//!
//! ```
//! use gpdp::{Conversion, Draws, Kernel, ReleaseParams};
//!
//! // The paper's Figure 3 setting: 1-D exponential kernel, ℓ = 1, n = 10,
//! // r = 1, σ = 5, three posterior draws, δ = 0.05.
//! let release = ReleaseParams::new(Kernel::exponential(1.0)?, "interval:0,1".parse()?, 10, 1.0, 5.0).check()?;
//! let report = release.epsilon(Draws::new(3)?, 0.05, Conversion::Paper)?;
//! assert_eq!(report.components[0].sensitivity_source.label(), "B.7");
//! assert!(report.epsilon > 0.0 && report.epsilon < 10.0);
//! # Ok::<(), gpdp::Error>(())
//! ```
//!
//! ## What cannot be done
//!
//! A mechanism cannot be assembled by hand, changed after it was checked,
//! or asked for more draws than it accounted for — none of these compile:
//!
//! ```compile_fail,E0451
//! // Fields are private: a mechanism exists only through `check`/`calibrate`.
//! let m = gpdp::Mechanism { params: todo!(), release: todo!(), privacy: todo!(), calibration: None, policy: todo!() };
//! ```
//!
//! ```compile_fail,E0616
//! # fn f(m: &mut gpdp::Mechanism) {
//! m.params.draws = gpdp::Draws::new(5).unwrap(); // no access to the accounted parameters
//! # }
//! ```
//!
//! ```compile_fail,E0599
//! # fn f(m: &gpdp::Mechanism, d: &gpdp::Dataset, q: &gpdp::Query, r: &mut gpdp::ReleaseRng) {
//! m.release_draws(d, q, 5, r); // there is no way to ask for another number of draws
//! # }
//! ```
//!
//! ```compile_fail,E0603
//! // The samplers are not part of the release API; simulations use `gpdp::nonprivate`.
//! use gpdp::sampling::DenseSampler;
//! ```
//!
//! ```compile_fail,E0308
//! # fn f(r: gpdp::privacy::StudyRelease, acc: &mut gpdp::RdpAccountant) {
//! acc.compose_release(r, gpdp::Draws::ONE); // study-only published constants never enter an accountant
//! # }
//! ```
//!
//! Floating-point note: sampling uses f64 Gaussians, which are not hardened
//! against least-significant-bit attacks (Mironov 2012).

#![warn(missing_docs)]
// `!(x > 0.0)` is deliberate throughout: unlike `x <= 0.0` it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod audit;
#[cfg(feature = "crs")]
pub mod crs;
pub mod error;
#[cfg(feature = "csv")]
pub mod io;
#[cfg(feature = "ledger")]
pub mod ledger;
mod linalg;
pub mod mechanism;
pub mod model;
pub mod nonprivate;
#[cfg(feature = "plan")]
pub mod plan;
pub mod posterior;
pub mod postprocess;
pub mod privacy;
mod resources;
pub mod rng;
mod sampling;
pub mod spec;
pub mod thompson;

pub use error::{Error, Result};
pub use mechanism::PosteriorSystem;
pub use mechanism::{
    Diagnostics, HyperparameterSource, LazyRelease, Mechanism, MechanismParams, NeighbouringRelation, NoProgress,
    PrivateRelease, Progress, ReleaseReport,
};
pub use model::{
    CovariateLattice, DataPolicy, Dataset, Domain, Draws, Grid, Kernel, KernelKind, OnUnbounded, Points, Query,
    ResponseScale,
};
pub use posterior::Posterior;
pub use privacy::{
    Accounting, BoundChoice, Calibration, Conversion, Lemma, PldAccountant, PrivacyEvent, PrivacyReport, RdpAccountant,
    RdpTable, Release, ReleaseParams, SensitivityChoice, Solve, Target, calibrate,
};
/// Work and memory guards that front ends run before a large computation
/// (`resources.rs`): a run that would not fit is refused before it
/// allocates, naming what it would hold.
pub use resources::{Need, check_memory, check_work};
pub use rng::ReleaseRng;
pub use sampling::auto::{SamplerPlan, SamplerPolicy, SamplerSummary};
pub use spec::ReleaseSpec;
