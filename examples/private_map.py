#!/usr/bin/env python3
"""A private PM2.5 map from numpy arrays, end to end.

1. Fit the hyperparameters on PUBLIC data (last year's proxy readings) with
   scikit-learn — never on the private data.
2. Calibrate the ridge so that the release meets ε = 1 at δ = 1e-5.
3. Release one posterior sample path on a 120 × 120 grid from the private
   readings (an OS-seeded CSPRNG: a private release) and plot it.

Run from the repository root (after `pip install ./python[examples,test]`):

    python examples/private_map.py            # writes private_map.png
    python examples/private_map.py --seed 1   # reproducible, NOT private

The readings are the fixtures of the CLI walkthrough in the README
(examples/readings.csv and examples/last-year.csv, British National Grid metres).
"""

import argparse
import pathlib

import numpy as np

import gpdp

DATA = pathlib.Path(__file__).resolve().parent
DOMAIN = (500000.0, 510000.0, 180000.0, 190000.0)  # public: the study area (m)
RANGE = (0.0, 40.0)  # public: readings are clipped to this range (µg/m³)


def read(path):
    """(X of shape (n, 2), y) from a CSV with columns site, easting, northing, pm25."""
    t = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
    return np.column_stack([t["easting"], t["northing"]]), t["pm25"].astype(float)


def fit_public(X, y):
    """ℓ, σ and the noise std from the public proxy by maximum marginal
    likelihood (scikit-learn), on responses centred on the range's middle
    and clipped to it, as the mechanism sees them (σ and the noise in µg/m³)."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    lo, hi = RANGE
    u = np.clip(y, lo, hi) - (lo + hi) / 2
    h2 = ((hi - lo) / 2) ** 2  # variances relative to the squared half-width
    k = ConstantKernel(0.2 * h2, (1e-3 * h2, 10 * h2)) * Matern(1000.0, (50.0, 20000.0), nu=1.5) + WhiteKernel(
        0.05 * h2, (1e-5 * h2, h2)
    )
    gp = GaussianProcessRegressor(k, normalize_y=False, n_restarts_optimizer=2, random_state=0).fit(X, u)
    c, m, w = gp.kernel_.k1.k1, gp.kernel_.k1.k2, gp.kernel_.k2
    return m.get_params()["length_scale"], np.sqrt(c.get_params()["constant_value"]), np.sqrt(w.noise_level)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epsilon", type=float, default=1.0, help="target ε (default 1)")
    ap.add_argument("--seed", type=int, default=None, help="reproducible draws (NOT a private release)")
    ap.add_argument("--out", default="private_map.png", help="the figure (default private_map.png)")
    a = ap.parse_args()

    Xp, yp = read(DATA / "last-year.csv")  # public
    X, y = read(DATA / "readings.csv")  # private
    ell, sigma, noise = fit_public(Xp, yp)
    print(f"fitted on the public proxy: ℓ = {ell:.0f} m, σ = {sigma:.3f} µg/m³, noise = {noise:.3f} µg/m³")

    mech = gpdp.Mechanism(
        kernel="matern32",
        lengthscale=ell,
        domain="box:{},{},{},{}".format(*DOMAIN),
        n=len(y),
        scale=sigma,
        delta=1e-5,
        response_range=RANGE,  # required: the public scale of the readings (or response_bound=M_Y)
        units="µg/m³",
        target_epsilon=a.epsilon,
        ridge_floor=noise / sigma,  # never below the fitted noise ratio
    )
    print(f"calibrated: ridge r = {mech.ridge:.4g} ⇒ ε = {mech.epsilon:.4f} at δ = 1e-5 (one draw)")

    rel = mech.release(X, y, grid="120", seed=a.seed)
    print(rel.report["statement"])
    if not rel.private:
        print("warning: seeded draws are reproducible and NOT a private release")
    field = rel.paths[0].reshape(120, 120)  # x1 (easting) varies fastest

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 5.4), constrained_layout=True)
    im = ax.imshow(field, origin="lower", extent=DOMAIN, cmap="viridis", vmin=RANGE[0], vmax=RANGE[1])
    ax.set_xlabel("easting (m)")
    ax.set_ylabel("northing (m)")
    ax.set_title(f"Private PM2.5 map (ε = {rel.privacy.epsilon:.2f}, δ = 1e-5)" + ("" if rel.private else " — seeded, not private"))
    fig.colorbar(im, ax=ax, label="µg/m³")
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
