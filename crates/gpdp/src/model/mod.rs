//! The release model: where the covariates live ([`domain`]), the points
//! themselves ([`points`]), the covariance ([`kernel`]), the private records
//! ([`data`]), how many draws a release makes ([`draws`]), where the released
//! paths are evaluated ([`query`]) and what the mechanism does with data that
//! break its assumptions ([`policy`]).

pub mod data;
pub mod domain;
pub mod draws;
pub mod kernel;
pub mod points;
pub mod policy;
pub mod query;
pub mod units;

pub use data::Dataset;
pub use domain::Domain;
pub use draws::Draws;
pub use kernel::{Kernel, KernelKind};
pub use points::Points;
pub use policy::{DataPolicy, OnUnbounded, PolicyOutcome};
pub use query::{CovariateLattice, Grid, Query};
pub use units::{ResponseRange, ResponseScale};
