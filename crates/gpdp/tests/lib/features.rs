//! An accountant-only build (`gpdp = { default-features = false }`) pulls
//! neither SQLite (the ledger), argmin (planning) nor contour (map
//! polygons): checked on the resolved dependency graph with `cargo tree`
//! (`--locked`: it reads the lock file and builds nothing).

use std::process::Command;

/// The crates in gpdp's normal-dependency tree for the given feature flags.
fn dependency_names(flags: &[&str]) -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new(env!("CARGO"))
        .current_dir(root)
        .args(["tree", "--locked", "-p", "gpdp", "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .args(flags)
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut names: Vec<String> = text.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect();
    names.sort();
    names.dedup();
    names
}

const HEAVY: [&str; 4] = ["rusqlite", "argmin", "argmin-math", "contour"];

#[test]
fn an_accountant_only_build_pulls_no_sqlite_argmin_or_contour() {
    let lean = dependency_names(&["--no-default-features"]);
    assert!(lean.iter().any(|n| n == "faer"), "the tree was read: {lean:?}");
    let pulled: Vec<&str> = HEAVY.iter().copied().filter(|h| lean.iter().any(|n| n == h)).collect();
    assert!(pulled.is_empty(), "an accountant-only build pulls {pulled:?}");
    // The default build does pull them (the check above can fail).
    let full = dependency_names(&[]);
    for h in HEAVY {
        assert!(full.iter().any(|n| n == h), "{h} missing from the default build's tree");
    }
}
