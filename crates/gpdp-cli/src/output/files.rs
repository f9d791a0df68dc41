//! Writing results: a file or a whole output directory appears complete or
//! not at all, and the operator's private log never lands in a published
//! folder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Writes `bytes` to `path` via a temporary file in the same directory and a
/// rename, so a failure never leaves a partial file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp =
        dir.join(format!(".{}.tmp-{}", path.file_name().and_then(|s| s.to_str()).unwrap_or("out"), std::process::id()));
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", tmp.display()));
    }
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot move the output into {}", path.display())
    })
}

/// Refuses an existing output file `out`, unless `force` (checked before any
/// work is done).
pub fn check_out_file(out: &Path, force: bool) -> Result<()> {
    if out.is_dir() {
        bail!("--out {} is a directory; give a file name", out.display());
    }
    if out.exists() && !force {
        bail!("--out {} exists; choose another file or pass --force to replace it", out.display());
    }
    Ok(())
}

/// Refuses an existing `out` that is not an empty directory, unless `force`.
pub fn check_out_dir(out: &Path, force: bool) -> Result<()> {
    if out.exists() {
        if !out.is_dir() {
            bail!("--out {} exists and is not a directory", out.display());
        }
        let empty = std::fs::read_dir(out)?.next().is_none();
        if !empty && !force {
            bail!("--out {} exists and is not empty; choose another directory or pass --force", out.display());
        }
    }
    Ok(())
}

/// Creates a fresh temporary directory next to `out`, runs `fill` in it, and
/// moves it to `out` only if `fill` succeeded. `out` must not exist or be
/// empty unless `force`.
pub fn write_dir_atomically<T>(out: &Path, force: bool, fill: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    check_out_dir(out, force)?;
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let base = out.file_name().and_then(|s| s.to_str()).unwrap_or("out");
    let tmp = parent.join(format!(".{base}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let value = match fill(&tmp) {
        Ok(v) => v,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    if out.exists() {
        let old = parent.join(format!(".{base}.old-{}", std::process::id()));
        std::fs::rename(out, &old).with_context(|| format!("cannot move the old {} aside", out.display()))?;
        if let Err(e) = std::fs::rename(&tmp, out) {
            let _ = std::fs::rename(&old, out);
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e).with_context(|| format!("cannot move the output into {}", out.display()));
        }
        let _ = std::fs::remove_dir_all(&old);
    } else if let Err(e) = std::fs::rename(&tmp, out) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e).with_context(|| format!("cannot move the output into {}", out.display()));
    }
    Ok(value)
}

/// `p` as an absolute path with `.` and `..` resolved against the nearest
/// existing ancestor (symlinks in that ancestor resolved too).
fn resolved(p: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(p).with_context(|| format!("cannot resolve {}", p.display()))?;
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => break,
        }
    }
    let mut out = existing.canonicalize().unwrap_or_else(|_| existing.to_path_buf());
    for name in rest.into_iter().rev() {
        if name == ".." {
            out.pop();
        } else if name != "." {
            out.push(name);
        }
    }
    Ok(out)
}

/// Refuses an operator log that would be written inside the published
/// folder `out` (the log holds facts about the private data).
pub fn check_log_outside(log: &Path, out: &Path) -> Result<()> {
    let (l, o) = (resolved(log)?, resolved(out)?);
    if l.starts_with(&o) {
        bail!(
            "--log {} lies inside the published folder --out {}: the operator log describes the private data and must be kept apart",
            log.display(),
            out.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_inside_the_output_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().join("release");
        assert!(check_log_outside(&out.join("log.json"), &out).is_err());
        assert!(check_log_outside(&out.join("sub/../log.json"), &out).is_err());
        assert!(check_log_outside(&t.path().join("log.json"), &out).is_ok());
        assert!(check_log_outside(&t.path().join("release-log.json"), &out).is_ok());
        std::fs::create_dir(&out).unwrap();
        assert!(check_log_outside(&out.join("./x.json"), &out).is_err());
    }
}
