//! No import cycle among the modules of any crate of the workspace.
//!
//! Reads every crate's `src/` (file = module; `a/mod.rs` and `a.rs` are the
//! module `a`), collects the module paths each file names through `use`
//! declarations and `crate::…` / `super::…` / `self::…` paths (code after
//! `#[cfg(test)]` and `tests.rs` files are skipped), resolves each path to the
//! longest module it names, and checks that the graph has no cycle. A
//! module's edges to its own descendants (declaring and re-exporting its
//! submodules) are not counted; every other edge is, including a child's edge
//! to its parent's items.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/a/b.rs` and `src/a/b/mod.rs` → ["a", "b"]; `lib.rs`/`main.rs` → [].
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    let root_file = parts.is_empty() && matches!(stem, "lib" | "main");
    if stem != "mod" && !root_file {
        parts.push(stem.to_string());
    }
    parts
}

/// Every path `crate::…`, `super::…` or `self::…` in `code`, as module
/// segments relative to the crate root (`module` is the file's module).
fn paths_in(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let starts = ["crate::", "super::", "self::"].iter().find(|p| bytes[i..].starts_with(p.as_bytes())).copied();
        let boundary = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':';
        let Some(prefix) = starts.filter(|_| boundary) else {
            i += 1;
            continue;
        };
        // Read `seg::seg::…` (identifiers and `super`).
        let mut j = i;
        let mut segs = Vec::new();
        loop {
            let s = j;
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            if s == j {
                break;
            }
            segs.push(code[s..j].to_string());
            if bytes[j..].starts_with(b"::") {
                j += 2;
            } else {
                break;
            }
        }
        let mut base: Vec<String> = match prefix {
            "crate::" => Vec::new(),
            _ => module.to_vec(),
        };
        let mut rest = segs.into_iter().skip(1).peekable();
        if prefix == "super::" {
            base.pop();
        }
        while rest.peek().is_some_and(|s| s == "super") {
            base.pop();
            rest.next();
        }
        base.extend(rest);
        out.push(base);
        i = j.max(i + 1);
    }
    out
}

type Edges = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

/// Each module's edges to the modules it names (not its descendants).
fn edges_in(src: &Path) -> (BTreeSet<Vec<String>>, Edges) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .filter(|f| f.file_name().unwrap() != "tests.rs" && !f.components().any(|c| c.as_os_str() == "bin"))
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let mut edges: Edges = BTreeMap::new();
    for (m, f) in &modules {
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        // Drop comments (doc examples name paths that are not imports).
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| format!("{}\n", l.split(" // ").next().unwrap()))
            .collect();
        for p in paths_in(&code, m) {
            // The longest prefix of p that is a module.
            let target = (0..=p.len()).rev().map(|k| p[..k].to_vec()).find(|k| modules.contains_key(k));
            let Some(t) = target else { continue };
            if t.starts_with(m) {
                continue; // itself or a descendant
            }
            edges.entry(m.clone()).or_default().insert(t);
        }
    }
    (modules.into_keys().collect(), edges)
}

fn cycles_in(src: &Path) -> Vec<Vec<String>> {
    let (modules, edges) = edges_in(src);
    // Tarjan's strongly connected components.
    struct S<'a> {
        edges: &'a Edges,
        index: BTreeMap<Vec<String>, usize>,
        low: BTreeMap<Vec<String>, usize>,
        stack: Vec<Vec<String>>,
        on: BTreeSet<Vec<String>>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit(s: &mut S, v: &Vec<String>) {
        s.index.insert(v.clone(), s.next);
        s.low.insert(v.clone(), s.next);
        s.next += 1;
        s.stack.push(v.clone());
        s.on.insert(v.clone());
        let succ: Vec<Vec<String>> = s.edges.get(v).map(|e| e.iter().cloned().collect()).unwrap_or_default();
        for w in &succ {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(&w);
                comp.push(w.join("::"));
                if &w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = S {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for m in &modules {
        if !s.index.contains_key(m) {
            visit(&mut s, m);
        }
    }
    s.out
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_reader_finds_a_planted_cycle() {
    let dir = std::env::temp_dir().join(format!("gpdp-module-graph-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "mod c;\npub use c::C;\nuse crate::b::B;\n").unwrap();
    std::fs::write(src.join("a/c.rs"), "pub struct C;\nuse super::super::b::B; // through b\n").unwrap();
    std::fs::write(
        src.join("b.rs"),
        "pub struct B;\nfn f() -> crate::a::C { todo!() }\n#[cfg(test)]\nuse crate::nothing;\n",
    )
    .unwrap();
    let cycles = cycles_in(&src);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(cycles, vec![vec!["a".to_string(), "b".to_string()]]);
}

#[test]
fn no_crate_has_an_import_cycle() {
    let root = workspace();
    let mut found = Vec::new();
    for krate in ["crates/gpdp", "crates/gpdp-cli", "crates/gpdp-experiments", "crates/gpdp-server", "python"] {
        let src = root.join(krate).join("src");
        assert!(src.is_dir(), "{}", src.display());
        for c in cycles_in(&src) {
            found.push(format!("{krate}: {}", c.join(" ↔ ")));
        }
    }
    assert!(found.is_empty(), "import cycles among modules:\n{}", found.join("\n"));
}

/// The library reads as its data flow (crate docs): `model` → `posterior` →
/// `sampling` → `mechanism`. No module of an earlier stage names a module
/// of a later one (the old arrow `posterior::exact` → `sampling::dedupe`
/// is now `model::Points::dedupe`).
#[test]
fn the_library_reads_as_its_data_flow() {
    let src = workspace().join("crates/gpdp/src");
    let (_, edges) = edges_in(&src);
    let stages = ["model", "posterior", "sampling", "mechanism"];
    let stage = |m: &[String]| m.first().and_then(|top| stages.iter().position(|s| s == top));
    let mut upward = Vec::new();
    for (from, tos) in &edges {
        for to in tos {
            if let (Some(a), Some(b)) = (stage(from), stage(to))
                && b > a
            {
                upward.push(format!("{} → {}", from.join("::"), to.join("::")));
            }
        }
    }
    assert!(upward.is_empty(), "arrows against the data flow:\n{}", upward.join("\n"));
    // The reader sees the stages' real edges (a test that cannot fail otherwise).
    assert!(edges.values().flatten().any(|t| t.first().is_some_and(|m| m == "model")));
    assert!(edges.iter().any(|(f, t)| f.first().is_some_and(|m| m == "mechanism")
        && t.iter().any(|t| t.first().is_some_and(|m| m == "sampling"))));
}
