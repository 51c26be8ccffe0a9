"""dpc's automatic centres (--auto-centers gap|outliers) against numpy:
 - the outlier rule's threshold recomputed from the file's /gamma and
   /parent: median and 1.4826 MAD of log gamma over the positive gammas
   but the densest point's (every k-th of them past 2^18), z =
   scipy.stats.norm.isf(alpha / n); its centres are exactly the densest
   point and the points above the threshold;
 - on labelled blobs (2-D, 10-D, 64-D, one cluster, 270,000 points that
   take the sampled median) the outlier rule finds the true number of
   clusters with ARI 1 (an ARI computed here); the gap rule's count in the
   file is what a run with the gap rule finds;
 - bad combinations are refused with exit status 2.
usage: dpc_centers.py FCBO_DIST WORKDIR"""
import os
import sys

import h5py
import numpy as np
import scipy.stats

from testlib import check, fcbo, finish

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
SAMPLE = 1 << 18



def run(*args):
    return fcbo(BIN, *args)


def ari(a, b):
    a, b = np.ravel(a), np.ravel(b)
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    table = np.zeros((ai.max() + 1, bi.max() + 1), dtype=np.int64)
    np.add.at(table, (ai, bi), 1)
    comb = lambda x: (x * (x - 1) / 2).sum()
    index, rows, cols, total = comb(table), comb(table.sum(1)), comb(table.sum(0)), comb(np.array([len(a)]))
    expected = rows * cols / total
    top = (rows + cols) / 2
    return 1.0 if top == expected else (index - expected) / (top - expected)


def oracle(f, alpha):
    gamma, parent = f["gamma"][:], f["parent"][:]
    n = len(gamma)
    top = int(np.where(parent < 0)[0][0])
    keep = gamma > 0
    keep[top] = False
    pos = np.log(gamma[keep])
    step = -(-len(pos) // SAMPLE) if len(pos) > SAMPLE else 1
    v = pos[::step]
    med = np.median(v)
    scale = 1.4826 * np.median(np.abs(v - med))
    z = scipy.stats.norm.isf(alpha / n)
    thr = np.exp(med + z * scale)
    above = set(np.where(keep & (gamma > thr))[0].tolist())
    return thr, z, above | {top}


# (points, dims, clusters, spread, seed, least ARI): 270,000 points reach
# into each other's clusters, and their chains of denser neighbours follow.
cases = [(2000, 2, 5, 1.5, 3, 1), (3000, 10, 8, 1.5, 3, 1), (1000, 2, 1, 1.5, 3, 1), (1500, 64, 4, 1.5, 5, 1),
         (270000, 2, 4, 1.5, 4, 0.98)]
for n, d, k, spread, seed, least in cases:
    pts = os.path.join(WORK, f"b{n}-{d}-{k}.npy")
    run("gen", "blobs", "--n", n, "--dims", d, "--clusters", k, "--spread", spread, "--seed", seed, "-o", pts)
    labels = os.path.join(WORK, f"b{n}-{d}-{k}.labels.npy")
    truth = np.load(labels).ravel()
    what = f"{n} points, {d}-D, {k} clusters"
    outs = {}
    for rule in ("gap", "outliers"):
        out = os.path.join(WORK, f"o{n}-{d}-{k}-{rule}")
        r = run("dpc", pts, "-o", out, "--force", "--auto-centers", rule, "-q")
        check(r.returncode == 0, f"{what}, {rule}: exit {r.returncode}: {r.stderr}")
        outs[rule] = h5py.File(os.path.join(out, "dpc.h5"))
    g, o = outs["gap"], outs["outliers"]
    check(o.attrs["centers_rule"] == b"outliers" and g.attrs["centers_rule"] == b"gap", f"{what}: centers_rule")
    check(g.attrs["centers_gap_rule"] == g.attrs["n_clusters"] == o.attrs["centers_gap_rule"],
          f"{what}: the gap rule's count {o.attrs['centers_gap_rule']} is not what the gap rule found ({g.attrs['n_clusters']})")
    alpha = float(o.attrs["outlier_alpha"])
    thr, z, want = oracle(o, alpha)
    check(abs(o.attrs["outlier_gamma_threshold"] - thr) <= 1e-12 * thr and abs(o.attrs["outlier_z"] - z) <= 1e-9 * z,
          f"{what}: threshold {o.attrs['outlier_gamma_threshold']!r} (z {o.attrs['outlier_z']!r}), numpy {thr!r} (z {z!r})")
    got = set(o["centers"][:].tolist())
    check(got == want and o.attrs["centers_outlier_rule"] == len(want) == o.attrs["n_clusters"],
          f"{what}: outlier centres {sorted(got)[:6]}, numpy {sorted(want)[:6]}")
    check(o.attrs["n_clusters"] == k, f"{what}: the outlier rule found {o.attrs['n_clusters']} clusters")
    a = ari(o["labels"][:], truth)
    check(a >= least - 1e-12, f"{what}: ARI {a} with the outlier rule")
    for f in outs.values():
        f.close()

# a stricter level keeps fewer or as many
pts = os.path.join(WORK, "b2000-2-5.npy")
r1 = run("dpc", pts, "-o", os.path.join(WORK, "a1"), "--force", "--auto-centers", "outliers", "--outlier-alpha", 1e-9, "-q")
with h5py.File(os.path.join(WORK, "a1", "dpc.h5")) as f:
    check(r1.returncode == 0 and f.attrs["outlier_alpha"] == 1e-9 and f.attrs["n_clusters"] <= 5,
          f"--outlier-alpha 1e-9: exit {r1.returncode}, {f.attrs['n_clusters']} clusters")
for bad in (["--auto-centers", "median"], ["--centers", 3, "--auto-centers", "outliers"], ["--outlier-alpha", 2],
            ["--rho-min", 1, "--delta-min", 1, "--outlier-alpha", 0.1]):
    r = run("dpc", pts, "-o", os.path.join(WORK, "bad"), *bad)
    check(r.returncode == 2 and not os.path.exists(os.path.join(WORK, "bad", "dpc.h5")),
          f"dpc {' '.join(map(str, bad))}: exit {r.returncode}: {r.stderr}")

finish("%d checks, %d failed")
