//! The server-wide cap on the memory of the releases' state
//! (`max_state_bytes`).
//!
//! What a release holds is estimated from public quantities only — the
//! number of records n, the dimension, the revealed counts and the size of
//! the batch being evaluated — so whether a request fits under the cap
//! never depends on the data. A request that does not fit is refused (507)
//! before anything is allocated.

use std::sync::Mutex;

use crate::error::ServerError;

/// Bytes of one f64.
const F64: u64 = 8;
/// Bookkeeping per revealed point besides its coordinates (value, normal,
/// index entry and its key): a generous bound.
const PER_POINT: u64 = 128;

/// Bytes of the fitted posterior of `n` records in `dim` dimensions: its
/// n × n Cholesky factor and its points and weights.
pub fn posterior_bytes(n: usize, dim: usize) -> u64 {
    let n = n as u64;
    F64 * n * n + F64 * n * (dim as u64 + 2)
}

/// Workspace of fitting that posterior (the Gram matrix besides the factor).
pub fn fit_workspace_bytes(n: usize) -> u64 {
    let n = n as u64;
    F64 * n * n
}

/// Bytes one path holds with `m` revealed points in `dim` dimensions: the
/// m × m factor of their covariance and the points themselves.
pub fn path_bytes(m: usize, dim: usize) -> u64 {
    let m = m as u64;
    F64 * m * m + m * (F64 * dim as u64 + PER_POINT)
}

/// Workspace of extending a path with `m` revealed points by `k` new ones
/// over a posterior of `n` records: the new (m + k)² factor while the old
/// one still exists, the whitened cross-covariances L⁻¹K(X, ·) of the
/// revealed and the new points (n × (m + 2k)), Σ_RN (m × k) and the k × k
/// blocks.
pub fn extend_workspace_bytes(n: usize, m: usize, k: usize) -> u64 {
    let (n, m, k) = (n as u64, m as u64, k as u64);
    F64 * ((m + k) * (m + k) + n * (m + 2 * k) + m * k + 3 * k * k)
}

/// The state memory in use, against the cap. Anonymous evaluations
/// ([`MemoryCap::reserve_for_reads`]) may fill it only up to the cap less
/// the admin reserve; creations ([`MemoryCap::reserve`]) up to the cap.
#[derive(Debug)]
pub struct MemoryCap {
    cap: u64,
    admin_reserve: u64,
    used: Mutex<u64>,
}

/// Bytes taken from a [`MemoryCap`], given back when dropped unless kept.
#[derive(Debug)]
pub struct Reservation<'a> {
    pool: &'a MemoryCap,
    bytes: u64,
}

impl MemoryCap {
    /// A cap of `cap` bytes, none used, of which `admin_reserve` bytes
    /// anonymous evaluations may not take.
    pub fn new(cap: u64, admin_reserve: u64) -> MemoryCap {
        MemoryCap { cap, admin_reserve: admin_reserve.min(cap), used: Mutex::new(0) }
    }

    /// The cap in bytes.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Bytes held now (kept and reserved).
    pub fn used(&self) -> u64 {
        self.used.lock().map(|u| *u).unwrap_or(self.cap)
    }

    /// Takes `bytes` for `what`, or refuses (507) if the total would exceed
    /// the cap; nothing is taken on refusal.
    pub fn reserve(&self, bytes: u64, what: &str) -> Result<Reservation<'_>, ServerError> {
        self.take(bytes, what, self.cap, "")
    }

    /// [`MemoryCap::reserve`] for an anonymous evaluation: refused (507) if
    /// the total would exceed the cap less the admin reserve.
    pub fn reserve_for_reads(&self, bytes: u64, what: &str) -> Result<Reservation<'_>, ServerError> {
        let note = if self.admin_reserve > 0 {
            format!(", of which {} (admin_reserved_bytes) are kept for creating releases", human(self.admin_reserve))
        } else {
            String::new()
        };
        self.take(bytes, what, self.cap - self.admin_reserve, &note)
    }

    fn take(&self, bytes: u64, what: &str, limit: u64, note: &str) -> Result<Reservation<'_>, ServerError> {
        let mut used = self.used.lock().map_err(|_| ServerError::Store("the memory cap's lock was poisoned".into()))?;
        let total = used.saturating_add(bytes);
        if total > limit {
            return Err(ServerError::InsufficientStorage(format!(
                "{what} needs {} of state memory; {} of the server's {} (max_state_bytes{note}) are in use — try fewer points, or retire releases",
                human(bytes),
                human(*used),
                human(self.cap)
            )));
        }
        *used = total;
        Ok(Reservation { pool: self, bytes })
    }

    /// Gives back `bytes` that were kept earlier (a retired release).
    pub fn free(&self, bytes: u64) {
        if let Ok(mut used) = self.used.lock() {
            *used = used.saturating_sub(bytes);
        }
    }
}

impl Reservation<'_> {
    /// Keeps `bytes` of the reservation for good (state that now exists;
    /// give it back later with [`MemoryCap::free`]); the rest is returned
    /// when the reservation is dropped.
    pub fn keep(mut self, bytes: u64) {
        let kept = bytes.min(self.bytes);
        self.bytes -= kept;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.pool.free(self.bytes);
    }
}

/// `bytes` in binary units, for messages.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.2} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 38 item 7: anonymous evaluations cannot take the admin reserve.
    #[test]
    fn reads_leave_the_admin_reserve_for_creations() {
        let cap = MemoryCap::new(1000, 300);
        let r = cap.reserve_for_reads(600, "reads").unwrap();
        r.keep(600);
        let e = cap.reserve_for_reads(200, "more reads").unwrap_err();
        assert_eq!(e.status().as_u16(), 507);
        assert!(e.to_string().contains("admin_reserved_bytes"), "{e}");
        assert!(cap.reserve_for_reads(100, "a little").is_ok());
        // A creation may use the reserve.
        let c = cap.reserve(400, "a creation").unwrap();
        assert_eq!(cap.used(), 1000);
        drop(c);
        assert_eq!(cap.used(), 600);
    }

    #[test]
    fn reservations_are_refused_beyond_the_cap_and_returned_on_drop() {
        let cap = MemoryCap::new(1000, 0);
        let a = cap.reserve(600, "a").unwrap();
        let e = cap.reserve(500, "b").unwrap_err();
        assert_eq!(e.status().as_u16(), 507);
        assert!(e.to_string().contains("max_state_bytes"), "{e}");
        a.keep(400);
        assert_eq!(cap.used(), 400);
        let b = cap.reserve(600, "b").unwrap();
        drop(b);
        assert_eq!(cap.used(), 400);
        cap.free(400);
        assert_eq!(cap.used(), 0);
    }

    #[test]
    fn estimates_grow_as_the_squares() {
        assert_eq!(path_bytes(0, 2), 0);
        assert_eq!(path_bytes(1000, 2) - path_bytes(999, 2), 8 * 1999 + 16 + 128);
        assert_eq!(posterior_bytes(100, 1), 8 * 10_000 + 8 * 300);
        assert!(extend_workspace_bytes(4000, 0, 50) >= 8 * 4000 * 100);
    }
}
