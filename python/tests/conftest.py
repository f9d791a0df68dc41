"""Shared helpers: the CLI binary the Python results are compared with."""

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def cli_path() -> pathlib.Path:
    """The `gpdp` binary: $GPDP_CLI, else the workspace's release build."""
    p = pathlib.Path(os.environ.get("GPDP_CLI", REPO / "target" / "release" / "gpdp"))
    if not p.exists():
        pytest.fail(f"the gpdp CLI is needed to compare with: build it (cargo build --release) or set GPDP_CLI ({p} missing)")
    return p


def run_cli(*args: str) -> str:
    r = subprocess.run([str(cli_path()), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"gpdp {' '.join(args)} failed: {r.stderr}")
    return r.stdout


def cli_json(*args: str):
    return json.loads(run_cli(*args, "--json"))


@pytest.fixture
def cli():
    return run_cli
