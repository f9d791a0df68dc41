"""The example script runs as documented (seeded, so quickly reproducible)."""

import subprocess
import sys

from conftest import REPO


def test_private_map_example_runs(tmp_path):
    out = tmp_path / "map.png"
    r = subprocess.run(
        [sys.executable, str(REPO / "examples" / "private_map.py"), "--seed", "1", "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "calibrated: ridge r = " in r.stdout and "ε = 1.0000" in r.stdout
    assert "NOT a private release" in r.stdout
    assert out.stat().st_size > 10_000 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
