//! Writing results: a file or a whole output directory appears complete or
//! not at all, two runs never write the same output at once, an interrupted
//! run leaves nothing behind (SIGINT/SIGTERM remove the partial output; what
//! a kill -9 leaves is removed by the next run), and the operator's private
//! log never lands in a published folder.
//!
//! Temporary names, all beside the final output: `.NAME.partial-PID/`
//! (a directory being filled), `.NAME.old-PID/` (the output being replaced),
//! `.NAME.tmp-PID` (a file being written), `.NAME.lock` (held while NAME is
//! written; contains the PID).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};

/// Paths to remove if the process is interrupted (SIGINT/SIGTERM).
static CLEANUP: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn register(p: &Path) {
    if let Ok(mut v) = CLEANUP.lock() {
        v.push(p.to_path_buf());
    }
}

fn unregister(p: &Path) {
    if let Ok(mut v) = CLEANUP.lock() {
        v.retain(|q| q != p);
    }
}

fn remove_path(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

/// Removes everything registered (the partial outputs and locks of this
/// process); called on SIGINT/SIGTERM before exiting.
pub fn remove_partial_outputs() {
    if let Ok(mut v) = CLEANUP.lock() {
        for p in v.drain(..).rev() {
            remove_path(&p);
        }
    }
}

/// Installs the SIGINT/SIGTERM handler: remove this run's partial outputs,
/// then exit with 128 + the signal number, as a shell would.
pub fn handle_termination_signals() -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            remove_partial_outputs();
            eprintln!("gpdp: interrupted (signal {sig}); partial output removed, nothing written");
            std::process::exit(128 + sig);
        }
    });
    Ok(())
}

/// Whether a process with this PID is running.
fn alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes `.NAME.partial-PID`, `.NAME.old-PID` and `.NAME.tmp-PID` left in
/// `dir` by processes that no longer run (a kill -9, a power cut).
fn remove_stale(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let f = e.file_name();
        let Some(f) = f.to_str() else { continue };
        for kind in ["partial", "old", "tmp"] {
            if let Some(pid) = f.strip_prefix(&format!(".{name}.{kind}-")).and_then(|p| p.parse::<i32>().ok())
                && pid != std::process::id() as i32
                && !alive(pid)
            {
                remove_path(&e.path());
            }
        }
    }
}

/// The exclusive right to write `dir/NAME` while it is held.
struct Lock {
    path: PathBuf,
}

impl Lock {
    fn acquire(dir: &Path, name: &str, shown: &Path) -> Result<Lock> {
        let path = dir.join(format!(".{name}.lock"));
        // The lock appears with its holder's PID already in it: written to a
        // private file first, then hard-linked into place (the link fails if
        // the lock exists). Creating it empty and writing the PID afterwards
        // let a concurrent run read an empty lock, take it for a dead one's
        // and take it over while its holder was still writing.
        let mine = dir.join(format!(".{name}.lock.{}", std::process::id()));
        register(&mine);
        let result = std::fs::write(&mine, std::process::id().to_string())
            .with_context(|| format!("cannot create {}", mine.display()))
            .and_then(|()| Self::link(&mine, &path, shown));
        let _ = std::fs::remove_file(&mine);
        unregister(&mine);
        result
    }

    fn link(mine: &Path, path: &Path, shown: &Path) -> Result<Lock> {
        let path = path.to_path_buf();
        for _ in 0..2 {
            match std::fs::hard_link(mine, &path) {
                Ok(()) => {
                    register(&path);
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path).ok().and_then(|s| s.trim().parse::<i32>().ok());
                    match holder {
                        Some(pid) if alive(pid) => bail!(
                            "{} is being written by another gpdp run (pid {pid}); wait for it or choose another output",
                            shown.display()
                        ),
                        // A lock left by a dead process (or half-written): take it over.
                        _ => {
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
            }
        }
        bail!("cannot lock {} (the lock file {} keeps reappearing)", shown.display(), path.display())
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        unregister(&self.path);
    }
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

/// The directory holding `path` and its file name, after resolving it;
/// refuses the root.
fn parent_and_name(path: &Path) -> Result<(PathBuf, String)> {
    let abs = resolved(path)?;
    match (abs.parent(), abs.file_name().and_then(|n| n.to_str())) {
        (Some(parent), Some(name)) => Ok((parent.to_path_buf(), name.to_string())),
        _ => bail!("--out {} cannot be written (it is the root or has no usable name)", path.display()),
    }
}

/// Writes `bytes` to `path` via a temporary file in the same directory, so a
/// failure (a full disk, a signal) never leaves a partial file. Without
/// `force` the file appears by a hard link, which fails if `path` exists —
/// also when another run created it after [`check_out_file`] — so nothing
/// is ever replaced unasked; with `force`, by a rename (replacing it).
pub fn write_atomically(path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    let (dir, name) = parent_and_name(path)?;
    remove_stale(&dir, &name);
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    register(&tmp);
    let result = std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", path.display())).and_then(|()| {
        if force {
            std::fs::rename(&tmp, path).with_context(|| format!("cannot move the output into {}", path.display()))
        } else {
            match std::fs::hard_link(&tmp, path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => bail!(
                    "--out {} appeared while this run was computing (another run?); nothing replaced — choose another file or pass --force",
                    path.display()
                ),
                Err(e) => Err(e).with_context(|| format!("cannot create {}", path.display())),
            }
        }
    });
    let _ = std::fs::remove_file(&tmp);
    unregister(&tmp);
    result
}

/// Refuses an existing output file `out` (given by `flag`), unless `force`,
/// and a file that cannot be created: its folder must exist and accept a
/// new file (tried with an empty probe file, removed at once). Called
/// before any work is done, so that a run never computes — or publishes —
/// and then fails to write one of its outputs.
pub fn check_out_file(flag: &str, out: &Path, force: bool) -> Result<()> {
    if out.is_dir() {
        bail!("{flag} {} is a directory; give a file name", out.display());
    }
    if out.exists() && !force {
        bail!("{flag} {} exists; choose another file or pass --force to replace it", out.display());
    }
    let (dir, _) = parent_and_name(out).map_err(|_| anyhow::anyhow!("{flag} {} has no file name", out.display()))?;
    if !dir.is_dir() {
        let what = if dir.exists() { "is not a directory" } else { "does not exist" };
        bail!("{flag} {}: its folder {} {what}; create it first or choose another file", out.display(), dir.display());
    }
    probe_writable(flag, out, &dir)
}

/// Refuses an existing `out` that is not an empty directory (unless
/// `force`), an `out` that holds the current directory, and an `out` that
/// cannot be created: its nearest existing ancestor must be a directory that
/// accepts a new entry (tried with an empty probe file, removed at once).
pub fn check_out_dir(out: &Path, force: bool) -> Result<()> {
    let abs = resolved(out)?;
    if let Ok(cwd) = std::env::current_dir().and_then(|c| c.canonicalize())
        && cwd.starts_with(&abs)
    {
        bail!(
            "--out {} is (or contains) the current directory; replacing it would delete where you are working — choose a subdirectory",
            out.display()
        );
    }
    if out.exists() {
        if !out.is_dir() {
            bail!("--out {} exists and is not a directory", out.display());
        }
        let empty = std::fs::read_dir(out)
            .with_context(|| format!("--out {}: cannot list the folder", out.display()))?
            .next()
            .is_none();
        if !empty && !force {
            bail!("--out {} exists and is not empty; choose another directory or pass --force", out.display());
        }
    }
    // The output appears beside `out` (a temporary folder, then a rename):
    // the folder that will hold it, or its nearest existing ancestor, must
    // accept new entries.
    let mut dir = abs.parent().map(Path::to_path_buf).unwrap_or_else(|| abs.clone());
    while !dir.exists() {
        match dir.parent() {
            Some(p) => dir = p.to_path_buf(),
            None => break,
        }
    }
    if !dir.is_dir() {
        bail!("--out {} cannot be created: {} is not a directory", out.display(), dir.display());
    }
    probe_writable("--out", out, &dir)
}

/// Creates and removes an empty file in `dir` (the folder that will hold
/// `target`, given by `flag`): a missing permission, a read-only file system
/// or a full inode table is found before the run instead of after it.
fn probe_writable(flag: &str, target: &Path, dir: &Path) -> Result<()> {
    let probe = dir.join(format!(".gpdp-probe-{}", std::process::id()));
    register(&probe);
    let made = std::fs::OpenOptions::new().write(true).create_new(true).open(&probe);
    let result = match made {
        Ok(_) => Ok(()),
        // A probe left by a process with this PID (a previous boot): ours now.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(anyhow::anyhow!(
            "{flag} {} cannot be written: creating a file in {} fails ({e}); nothing was done",
            target.display(),
            dir.display()
        )),
    };
    let _ = std::fs::remove_file(&probe);
    unregister(&probe);
    result
}

/// Refuses a run in which writing an output would replace or delete one of
/// its inputs: an input (a file or a folder; `(flag, path)`) that is the
/// same path as an output or lies inside an output folder — `--force`
/// replaces the whole folder. Paths are compared after resolving `.`, `..`
/// and symbolic links. Call it first, before anything is read or written;
/// the message names both paths.
pub fn check_inputs_apart(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<()> {
    for &(oflag, out) in outputs {
        let o = resolved(out)?;
        for &(iflag, input) in inputs {
            let i = resolved(input)?;
            if i == o {
                bail!(
                    "{iflag} {} and {oflag} {} are the same path: writing the output would replace the input — choose another {oflag}; nothing was done",
                    input.display(),
                    out.display()
                );
            }
            if i.starts_with(&o) && oflag != "--out" {
                // A file output (--log, a ledger…) given as a folder: it would replace nothing,
                // but it is not a file to write either.
                bail!(
                    "{oflag} {} is a folder (it holds {iflag} {}): {oflag} names a FILE to write, not a folder — give a file path outside the inputs' folders, e.g. {}; nothing was done",
                    out.display(),
                    input.display(),
                    out.parent()
                        .unwrap_or(Path::new("."))
                        .join(format!("{}.json", oflag.trim_start_matches('-')))
                        .display()
                );
            }
            if i.starts_with(&o) {
                bail!(
                    "{iflag} {} lies inside {oflag} {}: writing the output replaces that folder (with --force, deleting the input) — choose an {oflag} that holds none of the inputs; nothing was done",
                    input.display(),
                    out.display()
                );
            }
        }
    }
    Ok(())
}

/// Creates a fresh temporary directory next to `out`, runs `fill` in it, and
/// moves it to `out` only if `fill` succeeded. `out` must not exist or be
/// empty unless `force`; another run writing the same `out` is refused.
pub fn write_dir_atomically<T>(out: &Path, force: bool, fill: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    check_out_dir(out, force)?;
    let (parent, base) = parent_and_name(out)?;
    std::fs::create_dir_all(&parent).with_context(|| format!("cannot create {}", parent.display()))?;
    remove_stale(&parent, &base);
    let _lock = Lock::acquire(&parent, &base, out)?;
    // Checked again under the lock: another run may have just finished.
    check_out_dir(out, force)?;
    let tmp = parent.join(format!(".{base}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    register(&tmp);
    let result = std::fs::create_dir(&tmp)
        .with_context(|| format!("cannot create {}", tmp.display()))
        .and_then(|()| fill(&tmp).map_err(|e| in_users_terms(name_bare_io_error(e, out), &tmp, out)))
        .and_then(|value| replace_dir(&tmp, out, &parent, &base).map(|()| value));
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    unregister(&tmp);
    result
}

/// A bare I/O error (e.g. "No space left on device" from a writer that does
/// not name its file) gets the output's name; errors that already say what
/// failed are left as they are.
fn name_bare_io_error(e: anyhow::Error, out: &Path) -> anyhow::Error {
    let bare = e.chain().count() == 1 && (e.is::<std::io::Error>() || e.is::<csv::Error>());
    if bare { e.context(format!("cannot write {}", out.display())) } else { e }
}

/// An error of a writer that names a file in the temporary folder `tmp`
/// (`/abs/.out.partial-PID/map.png`) names it as the user will see it
/// (`out/map.png`): the temporary folder is this run's business, and it is
/// gone by the time the message is read.
fn in_users_terms(e: anyhow::Error, tmp: &Path, out: &Path) -> anyhow::Error {
    let msg = format!("{e:#}");
    let t = tmp.display().to_string();
    if msg.contains(&t) { anyhow::anyhow!(msg.replace(&t, &out.display().to_string())) } else { e }
}

/// Moves the filled `tmp` to `out`, replacing a previous `out`.
fn replace_dir(tmp: &Path, out: &Path, parent: &Path, base: &str) -> Result<()> {
    if out.exists() {
        let old = parent.join(format!(".{base}.old-{}", std::process::id()));
        register(&old);
        std::fs::rename(out, &old).with_context(|| format!("cannot move the old {} aside", out.display()))?;
        if let Err(e) = std::fs::rename(tmp, out) {
            let _ = std::fs::rename(&old, out);
            unregister(&old);
            return Err(e).with_context(|| format!("cannot move the output into {}", out.display()));
        }
        let _ = std::fs::remove_dir_all(&old);
        unregister(&old);
        Ok(())
    } else {
        std::fs::rename(tmp, out).with_context(|| format!("cannot move the output into {}", out.display()))
    }
}

/// Refuses a private file (`flag` names it, e.g. the ledger) inside the published folder.
pub fn check_private_outside(flag: &str, file: &Path, out: &Path) -> Result<()> {
    let (f, o) = (resolved(file)?, resolved(out)?);
    if f.starts_with(&o) {
        bail!(
            "{flag} {} lies inside the published folder --out {}: it describes the private data's releases and must be kept apart",
            file.display(),
            out.display()
        );
    }
    Ok(())
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

    #[test]
    fn stale_partials_of_dead_processes_are_removed_and_live_locks_respected() {
        let t = tempfile::tempdir().unwrap();
        // A PID that is not running: far above the kernel's pid_max default.
        let dead = 0x3fff_fff0;
        let stale = t.path().join(format!(".out.partial-{dead}"));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join("paths.csv"), "trunc").unwrap();
        std::fs::write(t.path().join(format!(".out.tmp-{dead}")), "").unwrap();
        let mine = t.path().join(format!(".other.partial-{dead}"));
        std::fs::create_dir(&mine).unwrap();
        let out = t.path().join("out");
        write_dir_atomically(&out, false, |d| Ok(std::fs::write(d.join("a"), "1")?)).unwrap();
        assert!(!stale.exists() && !t.path().join(format!(".out.tmp-{dead}")).exists());
        assert!(mine.exists(), "only the output's own leftovers are removed");
        assert!(!t.path().join(".out.lock").exists(), "the lock is released");
        // A lock held by a live process (this one) blocks a second writer.
        let _held = Lock::acquire(t.path(), "busy", Path::new("busy")).unwrap();
        let e = write_dir_atomically(&t.path().join("busy"), false, |_| Ok(())).unwrap_err().to_string();
        assert!(e.contains("being written by another gpdp run"), "{e}");
        // A dead process's lock is taken over.
        std::fs::write(t.path().join(".dead.lock"), dead.to_string()).unwrap();
        write_dir_atomically(&t.path().join("dead"), false, |_| Ok(())).unwrap();
    }

    #[test]
    fn a_file_is_replaced_only_with_force() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("o.csv");
        write_atomically(&p, b"first", false).unwrap();
        let e = write_atomically(&p, b"second", false).unwrap_err().to_string();
        assert!(e.contains("appeared while this run was computing"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
        write_atomically(&p, b"third", true).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"third");
        let names: Vec<_> = std::fs::read_dir(t.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["o.csv"], "no temporary file is left");
    }

    #[test]
    fn bare_write_errors_name_the_output() {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().join("o");
        let full = || std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device");
        let e = write_dir_atomically(&out, false, |_| -> Result<()> { Err(full().into()) }).unwrap_err();
        assert_eq!(format!("{e:#}"), format!("cannot write {}: No space left on device", out.display()));
        let e = write_dir_atomically(&out, false, |_| -> Result<()> { Err(anyhow::anyhow!("M_ξ = 1: no worlds")) })
            .unwrap_err();
        assert_eq!(format!("{e:#}"), "M_ξ = 1: no worlds");
        assert!(!out.exists() && std::fs::read_dir(t.path()).unwrap().next().is_none(), "nothing is left");
    }

    #[test]
    fn the_current_directory_is_never_an_output() {
        let cwd = std::env::current_dir().unwrap();
        let e = check_out_dir(Path::new("."), true).unwrap_err().to_string();
        assert!(e.contains("current directory"), "{e}");
        assert!(check_out_dir(cwd.parent().unwrap(), true).is_err());
    }
}
