//! Samplers with **no privacy guarantee**, for simulations on synthetic or
//! public data (studies, attacks, tests).
//!
//! These draw from any posterior they are given, at any ridge, any number of
//! times: nothing accounts for them. A release of private data goes through
//! [`crate::Mechanism`], which fits exactly the accounted posterior and
//! draws exactly the accounted number of paths. Everything here is exact
//! (docs/sampling.md): the samplers are the ones the mechanism uses.

pub use crate::posterior::markov1d::{Markov1d, prior_sample};
pub use crate::sampling::{
    DenseSampler, Lattice, LatticePlan, LatticeSampler, Process, SamplePath, SampledPaths, Sampler, StateSpaceModel,
    StateSpaceSampler,
};
