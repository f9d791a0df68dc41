"""`pip install ./python` reuses the CLI's build (issue 26, item 5).

Cargo compiles a dependency once per feature set, choosing the features from
the packages being built. maturin builds only gpdp-python, so any crate it
shares with `cargo build --release` (the CLI) but with other features is
compiled again — and with it everything above it (faer, gpdp, …): 52 crates
and about 3 minutes on this machine. python/Cargo.toml therefore enables, on
those shared crates, the features the CLI's build enables. This test fails,
naming the crate and the line to add, when a change elsewhere in the
workspace makes the two feature sets drift apart again.
"""

import re
import shutil
import subprocess

import pytest

from conftest import REPO

pytestmark = pytest.mark.skipif(
    shutil.which("cargo") is None or not (REPO / "Cargo.toml").exists(),
    reason="needs cargo and the repository (the check reads the workspace's dependency graph)",
)


def host() -> str:
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("host: "))


def features(package: str, target: str) -> dict:
    """{crate version: set of feature lists} in `package`'s normal and build graph."""
    out = subprocess.run(
        ["cargo", "tree", "-p", package, "-e", "normal,build", "-f", "{p}|{f}", "--prefix", "none", "--target", target],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout
    found: dict = {}
    for line in out.splitlines():
        line = line.replace(" (*)", "").replace(" (proc-macro)", "")
        if "|" not in line:
            continue
        pkg, feats = line.split("|", 1)
        pkg = re.sub(r" \(.*\)$", "", pkg.strip())  # drop a path source
        found.setdefault(pkg, set()).add(feats.strip())
    return found


def test_the_extension_shares_the_clis_compiled_dependencies():
    target = host()
    cli = features("gpdp-cli", target)
    ext = features("gpdp-python", target)
    drift = []
    for pkg, sets in sorted(ext.items()):
        if pkg in cli and not sets <= cli[pkg]:
            theirs = " or ".join(f"[{s}]" for s in sorted(cli[pkg]))
            ours = " or ".join(f"[{s}]" for s in sorted(sets - cli[pkg]))
            drift.append(f"{pkg}: the CLI's build has features {theirs}, gpdp-python's {ours}")
    assert not drift, (
        "pip install ./python would recompile these crates (and every crate above them) instead of reusing the "
        "CLI's build; enable the CLI's features on them in python/Cargo.toml (see its comment):\n  " + "\n  ".join(drift)
    )
    # The check sees the shared, heavy part of the tree.
    assert any(p.startswith("faer ") for p in ext) and any(p.startswith("gpdp ") for p in ext)
