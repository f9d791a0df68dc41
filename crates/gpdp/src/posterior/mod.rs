//! The exact GP posterior: [`Posterior`] by a Cholesky factorisation of
//! K + r²I for any kernel, and `markov1d`, the O(n + m) state-space form of
//! the 1-D exponential kernel (public in [`crate::nonprivate`]: it
//! also samples).
//!
//! The posterior itself (μ_D, k_D) is **not** private: it is what the
//! mechanism samples from. Use it for diagnostics on public or synthetic data.

mod exact;
pub(crate) mod markov1d;

pub(crate) use exact::check_dense;
pub use exact::{MAX_DENSE_ENTRIES, Posterior};
