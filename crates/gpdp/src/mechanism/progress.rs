//! Progress of a release's long steps, for the operator.
//!
//! The library never prints: [`Mechanism::release_with_progress`]
//! (crate::Mechanism) tells an observer which step runs (the CLI draws a
//! spinner on stderr). Step descriptions name public sizes only (n, m, L,
//! the sampler), never anything computed from the data.

/// An observer of the steps of a release.
pub trait Progress: Sync {
    /// A step starts.
    fn step(&self, what: &str);
    /// `done` of `total` units (e.g. draws) of the current step.
    fn advance(&self, done: u64, total: u64) {
        let _ = (done, total);
    }
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn step(&self, _what: &str) {}
}
