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

/// The memory the operating system can give this process now, in bytes:
/// the smaller of
/// * `MemAvailable` of /proc/meminfo on Linux (8 GiB elsewhere) — or, when
///   set, the environment variable `GPDP_MEMORY_LIMIT` (bytes, or with a
///   `G`/`M` suffix), e.g. to keep a run within a job's allocation;
/// * the room left under the process's resource limits, which the kernel
///   enforces whatever the machine has free: the address-space limit
///   (`RLIMIT_AS`, `ulimit -v`) minus the address space already mapped
///   (`VmSize`), and the data limit (`RLIMIT_DATA`, `ulimit -d`) minus the
///   data already mapped (`VmData`); read from /proc/self on Linux.
///
/// An allocation beyond a resource limit fails (Rust aborts the process),
/// so a run is judged against it before it allocates.
pub fn available_memory() -> f64 {
    memory_and_source().0
}

/// [`available_memory`] and what set it, for messages.
fn memory_and_source() -> (f64, &'static str) {
    let stated = std::env::var("GPDP_MEMORY_LIMIT").ok().and_then(|s| parse_size(&s));
    let (free, source) = match (stated, mem_available()) {
        (Some(v), _) => (v, "GPDP_MEMORY_LIMIT"),
        (None, Some(v)) => (v, "MemAvailable"),
        (None, None) => (FALLBACK_AVAILABLE, "the default when the system does not say"),
    };
    match limit_room() {
        Some((room, limit)) if room < free => (room, limit),
        _ => (free, source),
    }
}

/// `MemAvailable` of /proc/meminfo, in bytes.
fn mem_available() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    status_kib(&s, "MemAvailable:").map(|kb| kb * 1024.0)
}

/// The value in kB of the line starting with `key` of a /proc file.
fn status_kib(text: &str, key: &str) -> Option<f64> {
    text.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok())
}

/// The room under this process's address-space and data limits (the soft
/// limits, which allocations hit) and which limit it is, if either is finite.
fn limit_room() -> Option<(f64, &'static str)> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    room_under_limits(&limits, &status)
}

/// [`limit_room`] from the texts of /proc/self/limits and /proc/self/status.
fn room_under_limits(limits: &str, status: &str) -> Option<(f64, &'static str)> {
    let soft = |name: &str| -> Option<f64> {
        let line = limits.lines().map(str::trim_start).find(|l| l.starts_with(name))?;
        line[name.len()..].split_whitespace().next()?.parse::<f64>().ok()
    };
    let used = |key: &str| status_kib(status, key).map(|kb| kb * 1024.0).unwrap_or(0.0);
    let rooms = [
        soft("Max address space")
            .map(|lim| (lim - used("VmSize:"), "the room under the address-space limit, ulimit -v")),
        soft("Max data size").map(|lim| (lim - used("VmData:"), "the room under the data-size limit, ulimit -d")),
    ];
    rooms.into_iter().flatten().map(|(r, w)| (r.max(0.0), w)).reduce(|a, b| if b.0 < a.0 { b } else { a })
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
    let (available, source) = memory_and_source();
    if total.is_finite() && total <= MEMORY_SHARE * available {
        return Ok(());
    }
    let parts: Vec<String> = needs.iter().map(|n| format!("{} {}", n.what, human_bytes(n.bytes))).collect();
    Err(Error::TooLarge(format!(
        "{run} needs ≈ {} ({}) but {} of memory are available ({source}; a run may plan {:.0}% of it); {hint}",
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

    #[test]
    fn resource_limits_bound_the_available_memory() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max data size             unlimited            unlimited            bytes     \n\
                      Max address space         4294967296           unlimited            bytes     \n";
        let status = "Name:\tgpdp\nVmPeak:\t  300000 kB\nVmSize:\t  262144 kB\nVmData:\t  100000 kB\n";
        let room = |l: &str| room_under_limits(l, status).map(|(r, _)| r);
        assert_eq!(room(limits), Some(4294967296.0 - 262144.0 * 1024.0));
        assert!(room_under_limits(limits, status).unwrap().1.contains("ulimit -v"));
        let data = limits.replace("Max data size             unlimited", "Max data size             1073741824");
        assert_eq!(room(&data), Some(1073741824.0 - 100000.0 * 1024.0));
        assert!(room_under_limits(&data, status).unwrap().1.contains("ulimit -d"));
        assert_eq!(room(&limits.replace("4294967296", "unlimited")), None);
        // Already above the limit: no room at all.
        assert_eq!(room(&limits.replace("4294967296", "1000")), Some(0.0));
    }
}
