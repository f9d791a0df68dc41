//! Excursion-set utility studies (the paper's §5, App. D; docs/experiments.md).

pub mod accounting;
pub mod evaluate1d;
pub mod loss;
pub mod objective1d;
pub mod pairs1d;
pub mod search;
pub mod study1d;
pub mod study2d;
pub mod summary1d;
