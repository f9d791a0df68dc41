//! Memory and work, estimated before anything is allocated or started.
//!
//! A run that would not fit is refused with its estimate — every large
//! allocation it makes, not only the largest — and what would fit, instead
//! of aborting half-way (an allocation failure, the OOM killer) or running
//! for weeks.

use crate::error::{Error, Result};

/// One large allocation of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    /// What it holds, e.g. "the sampling covariance (m × m)".
    pub what: String,
    /// Its size in bytes.
    pub bytes: f64,
}

impl Need {
    /// `count` f64 values.
    pub fn doubles(what: impl Into<String>, count: f64) -> Self {
        Need { what: what.into(), bytes: 8.0 * count }
    }

    /// `count` items of `size` bytes.
    pub fn items(what: impl Into<String>, count: f64, size: usize) -> Self {
        Need { what: what.into(), bytes: count * size as f64 }
    }
}

/// A fallback when the operating system does not say (8 GiB).
const FALLBACK_AVAILABLE: f64 = 8.0 * GIB;

const GIB: f64 = (1u64 << 30) as f64;

/// The fraction of the available memory a run may plan to use.
pub const MEMORY_SHARE: f64 = 0.8;

/// The memory the operating system can give this process now, in bytes
/// (`MemAvailable` of /proc/meminfo on Linux; 8 GiB elsewhere). The
/// environment variable `GPDP_MEMORY_LIMIT` (bytes, or with a `G`/`M`
/// suffix) overrides it, e.g. to keep a run within a job's allocation.
pub fn available_memory() -> f64 {
    if let Some(v) = std::env::var("GPDP_MEMORY_LIMIT").ok().and_then(|s| parse_size(&s)) {
        return v;
    }
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
                .map(|kb| kb * 1024.0)
        })
        .unwrap_or(FALLBACK_AVAILABLE)
}

fn parse_size(s: &str) -> Option<f64> {
    let t = s.trim();
    let (num, mult) = match t.chars().last()? {
        'G' | 'g' => (&t[..t.len() - 1], GIB),
        'M' | 'm' => (&t[..t.len() - 1], (1u64 << 20) as f64),
        _ => (t, 1.0),
    };
    num.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0).map(|v| v * mult)
}

/// "3.2 GiB", "410 MiB", "12 KiB".
pub fn human_bytes(b: f64) -> String {
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.0} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", (b / 1024.0).max(1.0))
    }
}

/// Refuses a run whose allocations together exceed [`MEMORY_SHARE`] of
/// [`available_memory`]; the error lists them and adds `hint` (what would fit).
pub fn check_memory(run: &str, needs: &[Need], hint: &str) -> Result<()> {
    let total: f64 = needs.iter().map(|n| n.bytes).sum();
    let available = available_memory();
    if total.is_finite() && total <= MEMORY_SHARE * available {
        return Ok(());
    }
    let parts: Vec<String> = needs.iter().map(|n| format!("{} {}", n.what, human_bytes(n.bytes))).collect();
    Err(Error::TooLarge(format!(
        "{run} needs ≈ {} ({}) but {} of memory are available (a run may plan {:.0}% of it); {hint}",
        human_bytes(total),
        parts.join(", "),
        human_bytes(available),
        100.0 * MEMORY_SHARE
    )))
}

/// The longest run a command starts without being told (7 days of the
/// estimate).
pub const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// Refuses a run estimated at more than [`MAX_SECONDS`]: `units` of work at
/// `per_second` units per second (a conservative rate for one core).
pub fn check_work(run: &str, units: f64, per_second: f64, hint: &str) -> Result<()> {
    let seconds = units / per_second;
    if seconds.is_finite() && seconds <= MAX_SECONDS {
        return Ok(());
    }
    Err(Error::TooLarge(format!(
        "{run} would take ≈ {} (about {units:.2e} units of work); the limit is 7 days — {hint}",
        human_seconds(seconds)
    )))
}

fn human_seconds(s: f64) -> String {
    if !s.is_finite() {
        "forever".into()
    } else if s >= 365.0 * 86400.0 {
        format!("{:.1e} years", s / (365.0 * 86400.0))
    } else if s >= 86400.0 {
        format!("{:.0} days", s / 86400.0)
    } else {
        format!("{:.0} hours", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_name_every_allocation_and_the_remedy() {
        let needs = [Need::doubles("A (m × m)", 4e12), Need::doubles("B", 1e12)];
        let e = check_memory("this release", &needs, "use fewer points").unwrap_err().to_string();
        assert!(e.contains("needs ≈ 37252.9 GiB (A (m × m) 29802.3 GiB, B 7450.6 GiB)"), "{e}");
        assert!(e.contains("use fewer points"), "{e}");
        assert!(check_memory("small", &[Need::doubles("x", 1e3)], "").is_ok());
        assert!(check_memory("nan", &[Need::doubles("x", f64::NAN)], "").is_err());
        assert_eq!(parse_size("2G"), Some(2.0 * GIB));
        assert_eq!(parse_size("512m"), Some(512.0 * 1048576.0));
        assert_eq!(parse_size("nope"), None);
        let e = check_work("the sweep", 1e20, 1e8, "fewer repeats").unwrap_err().to_string();
        assert!(e.contains("years") && e.contains("fewer repeats"), "{e}");
        assert!(check_work("quick", 1e9, 1e8, "").is_ok());
    }
}
