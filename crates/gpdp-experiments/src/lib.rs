//! The paper's experiments as library code: membership inference (§4,
//! App. C), excursion-set utility studies (§5, App. D) and the regret study
//! of private Thompson sampling ([`thompson`]). The `gpdp` CLI
//! calls these; they print nothing and write no files.

#![warn(missing_docs)]
// `!(x > 0.0)` is deliberate throughout: unlike `x <= 0.0` it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod error;
pub mod excursion;
pub mod mia;
pub mod plume;
pub mod realdata;
pub mod shard;
pub mod study;
pub mod thompson;

pub use error::{Error, Result};
