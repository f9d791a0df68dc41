//! Every shell block of the README runs as printed (issue 26).
//!
//! Each ```` ```sh ```` block is run by `bash -euo pipefail` in a fresh copy
//! of `examples/` (the files the blocks read ship there), with the `gpdp`
//! under test first on `PATH`. A block may be marked by an HTML comment on
//! the line before its fence:
//!
//! - `<!-- readme-test: slow -->`: run only by the ignored test
//!   `slow_readme_blocks_run_as_printed` (minutes: the paper's studies);
//!   `cargo test --release --workspace --test cli -- readme_blocks:: --ignored`.
//! - `<!-- readme-test: skip: REASON -->`: not run here, for the stated
//!   reason (the set-up commands, a Python build, files that cannot be
//!   downloaded, nightly-only tools); the reason must be given.
//!
//! Unmarked blocks run in the normal suite.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::bin;

/// How a block is tested.
#[derive(Debug, Clone, PartialEq)]
enum Mark {
    Run,
    Slow,
    Skip(String),
}

#[derive(Debug)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    text: String,
    mark: Mark,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The README's shell blocks with their marks.
fn blocks(readme: &str) -> Vec<Block> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() == "```sh" {
            let mark = match i.checked_sub(1).map(|p| lines[p].trim()) {
                Some(m) if m.starts_with("<!-- readme-test:") => {
                    let body = m.trim_start_matches("<!-- readme-test:").trim_end_matches("-->").trim();
                    if body == "slow" {
                        Mark::Slow
                    } else if let Some(reason) = body.strip_prefix("skip:") {
                        Mark::Skip(reason.trim().to_string())
                    } else {
                        panic!("README line {i}: unknown readme-test mark {m:?}")
                    }
                }
                _ => Mark::Run,
            };
            let start = i;
            let mut text = String::new();
            i += 1;
            while i < lines.len() && lines[i].trim_end() != "```" {
                text.push_str(lines[i]);
                text.push('\n');
                i += 1;
            }
            assert!(i < lines.len(), "README line {}: unclosed ```sh block", start + 1);
            out.push(Block { line: start + 1, text, mark });
        }
        i += 1;
    }
    out
}

fn copy_examples(to: &Path) {
    copy_dir(&root().join("examples"), to);
}

/// Copies the files of `from` into `to`, subfolders included (e.g.
/// examples/thompson/).
fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let kind = e.file_type().unwrap();
        if kind.is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        } else if kind.is_dir() {
            let sub = to.join(e.file_name());
            std::fs::create_dir_all(&sub).unwrap();
            copy_dir(&e.path(), &sub);
        }
    }
}

/// Runs `b` in a fresh copy of `examples/`; panics with its output on
/// failure or after `limit`.
fn run(b: &Block, limit: Duration) {
    let dir = tempfile::tempdir().unwrap();
    copy_examples(dir.path());
    let bin_dir = bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let (stdout, stderr) = (dir.path().join(".stdout"), dir.path().join(".stderr"));
    let mut child = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &b.text])
        .current_dir(dir.path())
        .env("PATH", path)
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("bash runs");
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let show = |p: &Path| {
        let s = std::fs::read_to_string(p).unwrap_or_default();
        let tail: Vec<&str> = s.lines().rev().take(30).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    };
    match status {
        Some(s) if s.success() => {}
        Some(s) => panic!(
            "README block at line {} failed ({s}):\n{}\n--- stdout:\n{}\n--- stderr:\n{}",
            b.line,
            b.text,
            show(&stdout),
            show(&stderr)
        ),
        None => panic!(
            "README block at line {} took more than {limit:?}:\n{}\n--- stderr:\n{}",
            b.line,
            b.text,
            show(&stderr)
        ),
    }
}

fn readme_blocks() -> Vec<Block> {
    blocks(&std::fs::read_to_string(root().join("README.md")).unwrap())
}

#[test]
fn every_readme_shell_block_runs_as_printed() {
    let all = readme_blocks();
    for b in &all {
        if let Mark::Skip(reason) = &b.mark {
            assert!(reason.len() >= 10, "README line {}: a skipped block must say why", b.line);
        }
    }
    let runnable: Vec<&Block> = all.iter().filter(|b| b.mark == Mark::Run).collect();
    // The usage blocks: release, account, change-response, batch, calibrate,
    // the walkthrough, posterior, serve.
    assert!(runnable.len() >= 8, "only {} runnable README blocks: {all:#?}", runnable.len());
    for b in runnable {
        let t = Instant::now();
        run(b, Duration::from_secs(300));
        eprintln!("README block at line {}: {:.1} s", b.line, t.elapsed().as_secs_f64());
    }
}

/// The blocks marked slow (the paper's studies: minutes each).
#[test]
#[ignore = "minutes: cargo test --release --workspace --test cli -- readme_blocks:: --ignored"]
fn slow_readme_blocks_run_as_printed() {
    for b in readme_blocks().iter().filter(|b| b.mark == Mark::Slow) {
        run(b, Duration::from_secs(3 * 3600));
    }
}

#[test]
fn blocks_and_marks_are_parsed() {
    let md = "text\n```sh\na\nb\n```\n<!-- readme-test: slow -->\n```sh\nc\n```\n<!-- readme-test: skip: no files here -->\n```sh\nd\n```\n```rust\nx\n```\n";
    let b = blocks(md);
    assert_eq!(b.len(), 3);
    assert_eq!((b[0].line, b[0].text.as_str(), &b[0].mark), (2, "a\nb\n", &Mark::Run));
    assert_eq!((b[1].text.as_str(), &b[1].mark), ("c\n", &Mark::Slow));
    assert_eq!(b[2].mark, Mark::Skip("no files here".into()));
}

/// A failing block is reported as failing (the runner can fail).
#[test]
#[should_panic(expected = "failed")]
fn a_failing_block_fails_the_test() {
    run(&Block { line: 1, text: "gpdp account --no-such-flag\n".into(), mark: Mark::Run }, Duration::from_secs(60));
}
