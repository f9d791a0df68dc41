//! The repository keeps its promises to a new user (issue 9, items 16–18):
//! the README's two set-up commands are what CI runs and the second reuses
//! what the first built; everything the code and documents cite is in the
//! repository; there is a licence.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The commands of the README's first code block.
fn setup_commands() -> Vec<String> {
    let readme = read("README.md");
    let block = readme.split("```sh\n").nth(1).expect("a ```sh block").split("```").next().unwrap();
    block.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect()
}

#[test]
fn item_17_the_readme_setup_is_two_commands_and_ci_runs_the_second() {
    let cmds = setup_commands();
    assert_eq!(cmds, ["cargo run --release -- demo", "cargo test --workspace --release"]);
    // Both in the release profile: the tests reuse the first command's build.
    assert!(cmds.iter().all(|c| c.contains("--release")));
    let ci = read(".ci/run");
    assert!(ci.lines().any(|l| l.trim() == cmds[1]), ".ci/run does not run `{}`:\n{ci}", cmds[1]);
    // The first screen also says how to install the binary.
    let first_screen: String = read("README.md").lines().take(40).collect::<Vec<_>>().join("\n");
    assert!(first_screen.contains("cargo install --path crates/gpdp-cli"), "{first_screen}");
    assert!(root().join("crates/gpdp-cli/Cargo.toml").exists());
}

/// `(package, features)` of every crate in a `cargo tree` build graph.
fn feature_sets(args: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let o = Command::new(cargo)
        .current_dir(root())
        .args(["tree", "--prefix", "none", "--format", "{p} [{f}]"])
        .args(args)
        .output()
        .expect("cargo tree runs");
    assert!(o.status.success(), "cargo tree {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches(" (*)").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The failure this prevents: a dev-dependency enabling one more feature of
/// a crate the binary uses (e.g. `either/use_std` through criterion) makes
/// `cargo test` rebuild that crate and everything above it — faer — which
/// took 30 minutes on a loaded 2-core machine.
#[test]
fn item_17_the_test_build_reuses_every_crate_of_the_release_build() {
    let run = feature_sets(&["-p", "gpdp-cli", "-e", "normal,build"]);
    let test = feature_sets(&["--workspace", "-e", "normal,build,dev"]);
    let rebuilt: Vec<&String> = run.iter().filter(|c| !test.contains(*c)).collect();
    assert!(
        rebuilt.is_empty(),
        "the test build compiles these crates with other features than `cargo run --release`, so it rebuilds them \
         (enable the same features in crates/gpdp-cli/Cargo.toml): {rebuilt:?}"
    );
}

fn files_under(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !["target", ".git", "corpus", "artifacts"].contains(&name.as_str()) {
                files_under(&p, exts, out);
            }
        } else if exts.iter().any(|x| name.ends_with(x)) {
            out.push(p);
        }
    }
}

#[test]
fn item_17_everything_cited_is_in_the_repository() {
    let root = root();
    let mut files = Vec::new();
    files_under(&root, &[".rs", ".md", ".toml", ".py"], &mut files);
    assert!(files.len() > 50, "{} files", files.len());
    let mut cited = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        // The mathematics is cited from docs/, not from a file outside the repository.
        let (section, file) = (["SPEC", " §"].concat(), ["SPEC", ".md"].concat()); // not matched by this file
        assert!(!text.contains(&section) && !text.contains(&file), "{rel} cites the external specification");
        let mut rest = text.as_str();
        while let Some(i) = rest.find("docs/") {
            let tail = &rest[i..];
            let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || "/_-.".contains(c))).unwrap_or(tail.len());
            let path = tail[..end].trim_end_matches('.');
            if path.ends_with(".md") {
                cited.insert((path.to_string(), rel.clone()));
            }
            rest = &tail[end.max(5)..];
        }
    }
    assert!(cited.len() > 20, "{cited:?}");
    let missing: Vec<_> = cited.iter().filter(|(p, _)| !root.join(p).exists()).collect();
    assert!(missing.is_empty(), "cited but not in the repository (path, cited in): {missing:?}");
    // Every proof file is reachable from the docs index.
    let index = read("docs/README.md");
    for e in std::fs::read_dir(root.join("docs/proofs")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(index.contains(&name), "docs/README.md does not list proofs/{name}");
    }
}

#[test]
fn item_17_the_licence_is_in_the_repository_and_matches_the_manifests() {
    let mit = read("LICENSE-MIT");
    assert!(mit.contains("Permission is hereby granted, free of charge"));
    let apache = read("LICENSE-APACHE");
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0"));
    assert!(read("Cargo.toml").contains("license = \"MIT OR Apache-2.0\""));
    for c in ["gpdp", "gpdp-cli", "gpdp-experiments"] {
        assert!(read(&format!("crates/{c}/Cargo.toml")).contains("license.workspace = true"), "{c}");
    }
}

#[test]
fn item_18_every_parser_has_a_fuzz_target_with_seeds() {
    let manifest = read("fuzz/Cargo.toml");
    for target in ["data_table", "domain", "batch", "ppd", "postcodes"] {
        assert!(manifest.contains(&format!("name = \"{target}\"")), "{target} missing from fuzz/Cargo.toml");
        assert!(root().join(format!("fuzz/fuzz_targets/{target}.rs")).exists());
        let seeds = std::fs::read_dir(root().join(format!("fuzz/seeds/{target}"))).unwrap().count();
        assert!(seeds >= 1, "{target} has no seed inputs");
    }
    // The fuzz crate is not a workspace member (it needs nightly).
    assert!(manifest.contains("[workspace]"));
    assert!(!read("Cargo.toml").contains("\"fuzz\""));
}
