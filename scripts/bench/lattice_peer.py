#!/usr/bin/env python3
"""A numpy/scipy peer of gpdp's lattice sampler (circulant embedding + Matheron update), for
side-by-side timing with `gpdp release --grid G --snap grid` on [0,1]^2 (issue 28, item 2).

    OPENBLAS_NUM_THREADS=1 python3 scripts/bench/lattice_peer.py DATA.csv GRID KERNEL LENGTHSCALE RIDGE SCALE

DATA.csv has columns x1,x2,y in [0,1]^2; the covariates are rounded to the nearest node of the
GRID x GRID lattice (as --snap grid does). Same algorithm as gpdp (docs/sampling.md §4): the
torus is searched as gpdp searches it (2,3,5-smooth sizes b·2^(k/4) per axis, b >= 2(G-1)),
an embedding is accepted when every eigenvalue is >= -8u(log2 M + 1)·sum|c|; one draw is
f = mu + s·(g - K(G,X) A^-1 (g(X) + e)) + sqrt(j)·xi with A = K(X,X) + r^2 I, the products
K(G,X)·w by FFT convolution on the torus. Writes nothing; prints the torus, the wall and CPU
seconds of the computation (after reading the data) and the peak RSS. Not private: a timing
peer with numpy's default generator."""
import math
import resource
import sys
import time

import numpy as np
import scipy.fft as sfft
from scipy.linalg import cho_factor, cho_solve


def profile(name, ell):
    if name == "exponential":
        return lambda d: np.exp(-d / ell)
    if name == "matern32":
        return lambda d: (1 + math.sqrt(3) * d / ell) * np.exp(-math.sqrt(3) * d / ell)
    if name == "matern52":
        def k(d):
            t = math.sqrt(5) * d / ell
            return (1 + t + t * t / 3) * np.exp(-t)
        return k
    raise SystemExit(f"unknown kernel {name}")


def smooth(n):
    m = max(n, 1)
    while True:
        k = m
        for p in (2, 3, 5):
            while k % p == 0:
                k //= p
        if k == 1:
            return m
        m += 1


def tori(g, steps=4, doublings=4):
    base = smooth(2 * (g - 1))
    out, octave = [base], base
    for _ in range(doublings):
        doubled = smooth(2 * octave)
        for k in range(1, steps):
            t = smooth(math.ceil(octave * 2 ** (k / steps)))
            if t != out[-1] and t < doubled:
                out.append(t)
        out.append(doubled)
        octave = doubled
    return out


def main():
    path, g, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ell, r, s = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    t0, c0 = time.perf_counter(), time.process_time()
    k = profile(name, ell)
    h = 1.0 / (g - 1)
    idx = np.rint(data[:, :2] / h).astype(int)  # lattice nodes (i, j) of the records
    y = data[:, 2]
    for t in tori(g):
        i = np.arange(t)
        d1 = np.minimum(i, t - i) * h
        c = k(np.sqrt(d1[:, None] ** 2 + d1[None, :] ** 2))
        lam = sfft.fft2(c, workers=1).real
        err = 8 * np.finfo(float).eps * (math.log2(t * t) + 1) * np.abs(c).sum()
        if lam.min() >= -err:
            break
    else:
        raise SystemExit("indefinite on every torus tried")
    M = t * t
    rng = np.random.default_rng(1)
    pts = idx * h
    dist = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1))
    A = cho_factor(k(dist) + r * r * np.eye(len(y)))

    def kernel_times(w):  # K(G, X)·w on the lattice, by convolution on the torus
        buf = np.zeros((t, t))
        np.add.at(buf, (idx[:, 1], idx[:, 0]), w)
        return sfft.ifft2(lam * sfft.fft2(buf, workers=1), workers=1).real[:g, :g]

    mean = kernel_times(cho_solve(A, y))
    z = rng.standard_normal((t, t)) + 1j * rng.standard_normal((t, t))
    field = sfft.fft2(np.sqrt(np.maximum(lam, 0) / M) * z, workers=1).real
    gx = field[idx[:, 1], idx[:, 0]]
    e = r * rng.standard_normal(len(y))
    j = s * s * max(1e-10, 100 * g * g * np.finfo(float).eps)
    f = mean + s * (field[:g, :g] - kernel_times(cho_solve(A, gx + e))) + math.sqrt(j) * rng.standard_normal((g, g))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert np.isfinite(f).all()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"torus {t}x{t}: {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
