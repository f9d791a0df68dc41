"""Every key of the release spec is a keyword of ``gpdp.Mechanism``: each with
its example of crates/gpdp-cli/tests/data/spec_examples.json (shared with the
CLI's and the server's coverage test), released for real."""

import json
import pathlib

import numpy as np
import pytest

import gpdp

EXAMPLES = json.loads(
    (pathlib.Path(__file__).resolve().parents[2] / "crates/gpdp-cli/tests/data/spec_examples.json").read_text()
)

# 40 records on nodes of the 11 x 11 lattice of [0, 1]^2 (as the Rust test), |y| < 1.
I = np.arange(40)
X = np.column_stack([(I * 7 % 11) / 10.0, (I * 3 % 11) / 10.0])
Y = 0.9 * np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1])


def patched(patch):
    spec = dict(EXAMPLES["base"])
    for k, v in patch.items():
        if v is None:
            spec.pop(k, None)
        else:
            spec[k] = v
    return spec


def test_every_key_has_an_example():
    assert sorted(gpdp.spec_keys()) == sorted(EXAMPLES["examples"])


@pytest.mark.parametrize("key", sorted(EXAMPLES["examples"]))
def test_mechanism_accepts_every_key_and_releases_with_it(key):
    m = gpdp.Mechanism(n=len(Y), **patched(EXAMPLES["examples"][key]))
    r = m.release(X, Y, grid="5", seed=1)
    assert r.paths.shape[1] == 25
    assert m.epsilon > 0
    assert key in m.spec


def test_unknown_keywords_are_refused_by_name():
    with pytest.raises(gpdp.ParameterError, match="lenghtscale"):
        gpdp.Mechanism(n=40, lenghtscale=0.3, **{k: v for k, v in EXAMPLES["base"].items() if k != "lengthscale"})
