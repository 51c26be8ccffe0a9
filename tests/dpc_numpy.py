"""fcbo-dist dpc against a brute-force NumPy reference written from the
definitions (Rodriguez & Laio 2014, with the total order rho descending,
index ascending): random sets of several sizes in d = 2, 3 and 8, with
integer coordinates (ties everywhere) and with real ones, both kernels.
The cutoff kernel's rho, delta and parent must be identical; the Gaussian
kernel's rho within 1e-5 relative, and delta, parent, centres and labels
identical given the program's rho.  d_c from --dc-percent and --neighbors
is checked exactly on sets small enough for the exact rule, the halo
against its definition, the ARI against a contingency table, 1 to 4
ranks give identical files, and the shared benchmarks reach the ARI of
docs/algorithms.md.  Bad input: exit 2, FILE:LINE, nothing written.
usage: dpc_numpy.py FCBO_DIST WORKDIR SHARED"""
import gzip
import math
import os
import subprocess
import sys

import h5py
import numpy as np
import testlib
from testlib import check

BIN, WORK, SHARED = sys.argv[1], sys.argv[2], sys.argv[3]
ENV = dict(testlib.ENV, FD_BACKEND="cpu", FD_DPC_TREE="always")
os.makedirs(WORK, exist_ok=True)


def run(args, np_=1, expect=0):
    cmd = [BIN, "dpc"] + args
    if np_ > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np_)] + cmd
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    check(r.returncode == expect, "%s: exit %d (expected %d): %s" % (" ".join(args), r.returncode, expect,
                                                                    r.stderr.strip()))
    return r


def load(d):
    with h5py.File(os.path.join(d, "dpc.h5"), "r") as f:
        out = {k: f[k][:] for k in ("labels", "rho", "delta", "parent", "gamma", "centers")}
        if "core_labels" in f:
            out["core"] = f["core_labels"][:]
        out["attrs"] = dict(f.attrs)
        return out


def dist2(X):
    """Squared distances, summed over coordinates in order, as the program does."""
    D = np.zeros((len(X), len(X)))
    for k in range(X.shape[1]):
        t = X[:, None, k] - X[None, :, k]
        D += t * t
    return D


def ref_rho(D2, dc, kernel):
    A = D2.copy()
    np.fill_diagonal(A, np.inf)
    if kernel == "cutoff":
        # d < d_c with d the rounded square root, as docs/algorithms.md says
        # (not D2 < fl(dc * dc), which is an ulp off either way).
        return (np.sqrt(A) < dc).sum(1).astype(float)
    return np.exp(-A / (dc * dc)).sum(1)


def ref_delta(D2, rho):
    n = len(rho)
    idx = np.arange(n)
    delta, parent = np.empty(n), np.empty(n, dtype=np.int64)
    for i in range(n):
        denser = (rho > rho[i]) | ((rho == rho[i]) & (idx < i))
        if denser.any():
            cand = np.where(denser, D2[i], np.inf)
            j = int(np.argmin(cand))
            delta[i], parent[i] = math.sqrt(D2[i, j]), j
        else:
            delta[i], parent[i] = math.sqrt(D2[i].max()), -1
    return delta, parent


def ref_labels(rho, delta, parent, k):
    n = len(rho)
    gamma = rho * delta
    order = sorted(range(n), key=lambda i: (-gamma[i], i))
    cs = order[:k]
    top = int(np.nonzero(parent < 0)[0][0])
    if top not in cs:
        cs = sorted(cs[:k - 1] + [top], key=lambda i: (-gamma[i], i))
    labels = np.zeros(n, dtype=np.int32)
    for q, c in enumerate(cs):
        labels[c] = q + 1
    for i in sorted(range(n), key=lambda i: (-rho[i], i)):
        if labels[i] == 0:
            labels[i] = labels[parent[i]]
    return np.array(cs), labels


def ref_halo(D2, dc, rho, labels):
    border = np.zeros(labels.max() + 1)
    close = (np.sqrt(D2) < dc) & (labels[:, None] != labels[None, :])
    for i, j in zip(*np.nonzero(close)):
        border[labels[i]] = max(border[labels[i]], (rho[i] + rho[j]) / 2)
    return np.where(rho < border[labels], 0, labels)


def ari(a, b):
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    C = np.zeros((ai.max() + 1, bi.max() + 1))
    np.add.at(C, (ai, bi), 1)
    c2 = lambda x: (x * (x - 1) / 2).sum()
    sij, sa, sb, n2 = c2(C), c2(C.sum(1)), c2(C.sum(0)), len(a) * (len(a) - 1) / 2
    e = sa * sb / n2
    return 1.0 if (sa + sb) / 2 == e else (sij - e) / ((sa + sb) / 2 - e)


def write(X, path, labels=None):
    M = X if labels is None else np.column_stack([X, labels])
    np.savetxt(path, M, fmt="%.17g")


rng = np.random.default_rng(7)
cases = []
# 4 to 32 coordinates go through the kd-tree (FD_DPC_TREE=always, so
# that it is taken on these small inputs; integer points: ties in
# distance and duplicate points, which its bounds must still offer), 64
# by brute force.
for n, d, integer in [(40, 2, True), (300, 2, False), (250, 3, True), (500, 8, False), (1200, 2, False),
                      (600, 5, True), (700, 10, False), (300, 64, False), (1500, 2, "dup"), (1500, 5, "dup")]:
    # "dup": 1,500 points on 9 places (2-D, the grid) or 32 (5-D, the
    # kd-tree's leaves of equal points), dozens of equal points each (a
    # nearest denser point at distance 0 ends the search at once)
    X = rng.integers(0, (3 if d == 2 else 2) if integer == "dup" else 6, size=(n, d)).astype(float) if integer else \
        rng.normal(size=(n, d)) * [1 + k for k in range(d)]
    if not integer:
        X[: n // 3] += 6  # two groups
    truth = rng.integers(1, 4, size=n)
    path = os.path.join(WORK, "p%d_%d.txt" % (n, d))
    write(X, path, truth)
    cases.append((n, d, X, path, truth))

for n, d, X, path, truth in cases:
    D2 = dist2(X)
    iu = np.triu_indices(n, 1)
    pairs = np.sort(D2[iu])
    for kernel in ("cutoff", "gaussian"):
        name = "n=%d d=%d %s" % (n, d, kernel)
        # --dc-percent: exact below 10^7 pairs, the nearest rank.
        P = 2.5
        dc = math.sqrt(pairs[max(1, math.ceil(P / 100.0 * len(pairs))) - 1])
        if dc == 0:
            dc = math.sqrt(pairs[pairs > 0][0])
            args = ["--dc", repr(dc)]
        else:
            args = ["--dc-percent", str(P)]
        out = os.path.join(WORK, "o")
        K = 3
        r = run([path, "--columns", "1-%d" % d, "--label-column", str(d + 1), "--kernel", kernel, "--centers", str(K),
                 "--halo", "-o", out, "--force", "-q"] + args)
        if r.returncode:
            continue
        g = load(out)
        check(g["attrs"]["dc"] == dc, "%s: d_c %r, expected %r" % (name, g["attrs"]["dc"], dc))
        rho = ref_rho(D2, dc, kernel)
        if kernel == "cutoff":
            check((g["rho"] == rho).all(), "%s: rho differs at %d points" % (name, (g["rho"] != rho).sum()))
        else:
            rel = np.abs(g["rho"] - rho) / np.maximum(np.abs(rho), 1e-300)
            check(rel.max() <= 1e-5, "%s: rho off by %g relative" % (name, rel.max()))
        delta, parent = ref_delta(D2, g["rho"])
        check((g["delta"] == delta).all(), "%s: delta differs at %d points" % (name, (g["delta"] != delta).sum()))
        check((g["parent"] == parent).all(), "%s: parent differs at %d points" % (name, (g["parent"] != parent).sum()))
        cs, labels = ref_labels(g["rho"], delta, parent, K)
        check(list(g["centers"]) == list(cs), "%s: centres %s, expected %s" % (name, list(g["centers"]), list(cs)))
        check((g["labels"] == labels).all(), "%s: labels differ at %d points" % (name, (g["labels"] != labels).sum()))
        check((g["gamma"] == g["rho"] * delta).all(), "%s: gamma is not rho x delta" % name)
        core = ref_halo(D2, dc, g["rho"], labels)
        check((g["core"] == core).all(), "%s: halo differs at %d points" % (name, (g["core"] != core).sum()))
        a = ari(core, truth)
        check(abs(g["attrs"]["ari"] - a) < 1e-9, "%s: ARI %r, expected %r" % (name, g["attrs"]["ari"], a))
        # The grid (up to 3 coordinates) and the kd-tree (4 to 32) against
        # every pair.
        if d <= 32:
            o2 = os.path.join(WORK, "nogrid")
            ENV["FD_DPC_GRID"] = "off"
            run([path, "--label-column", str(d + 1), "--kernel", kernel, "--centers", str(K), "--halo", "-o", o2,
                 "--force", "-q"] + args)
            del ENV["FD_DPC_GRID"]
            h = load(o2)
            for k in ("labels", "rho", "delta", "parent", "core"):
                check(np.array_equal(g[k], h[k]), "%s: %s differs without the grid or tree" % (name, k))
        # The tree where its sampled cost allows (here, mostly not).
        if 4 <= d <= 32:
            ENV["FD_DPC_TREE"] = "auto"
            run([path, "--label-column", str(d + 1), "--kernel", kernel, "--centers", str(K), "--halo", "-o", o2,
                 "--force", "-q"] + args)
            ENV["FD_DPC_TREE"] = "always"
            h = load(o2)
            for k in ("labels", "rho", "delta", "parent", "core"):
                check(np.array_equal(g[k], h[k]), "%s: %s differs with FD_DPC_TREE=auto" % (name, k))
        # The same files from 2, 3 and 4 ranks.
        if n in (300, 1200):
            for np_ in (2, 3, 4):
                o2 = os.path.join(WORK, "np%d" % np_)
                run([path, "--label-column", str(d + 1), "--kernel", kernel, "--centers", str(K), "--halo", "-o", o2,
                     "--force", "-q", "-t", "1"] + args, np_=np_)
                h = load(o2)
                for k in ("labels", "rho", "delta", "parent", "gamma", "centers", "core"):
                    check(np.array_equal(g[k], h[k]), "%s np=%d: %s differs from one rank" % (name, np_, k))
    # --neighbors: exact up to 2,048 points, the (K n)-th smallest distance
    # over ordered pairs.
    Kn = 7.3
    off = D2[~np.eye(n, dtype=bool)]
    m = int(math.floor(Kn * n + 0.5))
    want = math.sqrt(np.sort(off)[m - 1])
    out = os.path.join(WORK, "nb")
    # (on the equal points of "dup" the distance is 0: refused, d_c = 0)
    r = run([path, "--label-column", str(d + 1), "--neighbors", str(Kn), "-o", out, "--force", "-q"],
            expect=0 if want > 0 else 2)
    if want == 0:
        check("d_c = 0" in r.stderr, "n=%d d=%d --neighbors: %s" % (n, d, r.stderr.strip()))
    if r.returncode == 0 and want > 0:
        check(load(out)["attrs"]["dc"] == want, "n=%d d=%d --neighbors: d_c %r, expected %r" %
              (n, d, load(out)["attrs"]["dc"], want))

# The kd-tree's halo skips subtrees whose points are all of the asking
# point's cluster: two 5-D clusters apart, each with a lump of 40 equal
# points (a leaf of one label) facing the other's across the gap, closer
# than d_c, so that the densest border pair lies between two leaves of
# one label each (skipping a subtree of the other label loses it).
Xb = np.vstack([rng.normal(0, 0.5, (1000, 5)), rng.normal(0, 0.5, (1000, 5)) + [4, 0, 0, 0, 0],
                np.repeat([[1.6, 0, 0, 0, 0]], 40, axis=0), np.repeat([[2.4, 0, 0, 0, 0]], 40, axis=0)])
path = os.path.join(WORK, "bridge.txt")
write(Xb, path)
out = os.path.join(WORK, "bridge")
if run([path, "--dc", "1", "--centers", "2", "--halo", "-o", out, "--force", "-q"]).returncode == 0:
    g = load(out)
    core = ref_halo(dist2(Xb), 1.0, g["rho"], g["labels"])
    check((core == 0).sum() > 0 and (g["core"] == core).all(), "bridge: halo differs at %d points (%d in the halo)" %
          ((g["core"] != core).sum(), (core == 0).sum()))

# The shared benchmarks (2-D, label 0 in *.labels0.gz is noise), with the
# parameters docs/algorithms.md gives: Gaussian kernel, d_c at 2%, the
# true number of clusters.
bench = [("aggregation", 7, 0.99), ("spiral", 3, 1.0), ("s1", 15, 0.98)]
for name, k, need in bench:
    dpath = os.path.join(SHARED, "data", "dpc", name + ".data.gz")
    if not os.path.exists(dpath):
        print("skipped %s: %s is absent" % (name, dpath))
        continue
    X = np.loadtxt(gzip.open(dpath, "rt"))
    y = np.loadtxt(gzip.open(os.path.join(SHARED, "data", "dpc", name + ".labels0.gz"), "rt"))
    path = os.path.join(WORK, name + ".txt")
    write(X, path, y)
    out = os.path.join(WORK, "b_" + name)
    r = run([path, "--label-column", "3", "--kernel", "gaussian", "--centers", str(k), "-o", out, "--force", "-q"])
    if r.returncode == 0:
        g = load(out)
        a = ari(g["labels"], y)
        check(a >= need, "%s: ARI %.4f, needs %.2f" % (name, a, need))
        check(abs(g["attrs"]["ari"] - a) < 1e-9, "%s: ARI attribute %r, expected %r" % (name, g["attrs"]["ari"], a))

# `info` summarises the file and --text prints every point.
last = os.path.join(WORK, "o")
r = subprocess.run([BIN, "info", os.path.join(last, "dpc.h5")], capture_output=True, text=True, env=ENV)
check(r.returncode == 0 and "fcbo-dist dpc result" in r.stdout and "clusters  3" in r.stdout, "info: %s %s" %
      (r.stdout, r.stderr))
r = subprocess.run([BIN, "info", "--text", os.path.join(last, "dpc.h5")], capture_output=True, text=True, env=ENV)
g = load(last)
rows = [l.split() for l in r.stdout.splitlines() if not l.startswith("#")]
check(r.returncode == 0 and len(rows) == len(g["labels"]) and
      all(int(a[1]) == g["labels"][i] and float(a[2]) == g["rho"][i] and float(a[3]) == g["delta"][i] and
          int(a[4]) == g["parent"][i] for i, a in enumerate(rows)), "info --text does not match the file")

# --plot: a PNG of the decision graph, and of the clusters for 2-D points
# (twice as wide); a plot that cannot be written fails the run and leaves
# no dpc.h5.
def png_size(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        head = f.read(24)
    return (int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")) \
        if head[:8] == b"\x89PNG\r\n\x1a\n" else None


probe = subprocess.run([BIN, "dpc", cases[0][3], "--plot", os.path.join(WORK, "probe.png"), "-q"], env=ENV,
                       capture_output=True, text=True)
if probe.returncode == 2 and "without cairo" in probe.stderr:
    print("skipped --plot: built without cairo")
else:
    for n, d, X, path, truth in (cases[1], cases[3]):
        png = os.path.join(WORK, "plot%d.png" % d)
        run([path, "--label-column", str(d + 1), "--dc", "1", "--centers", "3", "--halo", "--plot", png, "-q"])
        check(png_size(png) == ((1600 if d == 2 else 800), 800), "--plot d=%d: %s" % (d, png_size(png)))
    out = os.path.join(WORK, "plotfail")
    r = run([cases[1][3], "-o", out, "--plot", os.path.join(WORK, "no", "such", "dir", "p.png"), "-q"], expect=1)
    check(not os.path.exists(os.path.join(out, "dpc.h5")), "--plot failed but dpc.h5 was left")

# The automatic rule on well separated blobs finds their number.
blobs = os.path.join(WORK, "blobs.txt")
subprocess.run([BIN, "gen", "blobs", "--n", "3000", "--dims", "2", "--clusters", "6", "--seed", "5", "--spread", "1",
                "-o", blobs], check=True, env=ENV)
auto_out = os.path.join(WORK, "auto")
if run([blobs, "--labels", blobs.replace(".txt", ".labels.txt"), "--kernel", "gaussian", "-o", auto_out, "--force", "-q"]).returncode == 0:
    g = load(auto_out)
    y = np.loadtxt(blobs.replace(".txt", ".labels.txt"))
    check(g["attrs"]["n_clusters"] == 6 and ari(g["labels"], y) > 0.99,
          "blobs: %d clusters, ARI %.4f" % (g["attrs"]["n_clusters"], ari(g["labels"], y)))

# Bad input: FILE:LINE, exit 2, no output directory left behind.
bad = {"ragged.txt": "1 2\n3 4\n5\n", "nan.txt": "1 2\n3 nan\n", "one.txt": "1 2\n", "word.csv": "x,y\n1,2\n3,abc\n",
       "empty.txt": "\n"}
for fname, text in bad.items():
    path = os.path.join(WORK, fname)
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(WORK, "bad_" + fname)
    r = run([path, "-o", out], expect=2)
    check(not os.path.exists(out), "%s: %s was left behind" % (fname, out))
    check(fname in r.stderr, "%s: the message does not name the file: %s" % (fname, r.stderr.strip()))
for fname, want in (("ragged.txt", ":3:"), ("nan.txt", ":2:"), ("word.csv", ":3:")):
    r = run([os.path.join(WORK, fname), "-q"], expect=2)
    check(want in r.stderr, "%s: no line number %s in: %s" % (fname, want, r.stderr.strip()))
# A float64 .npy is read straight into place, a chunk of 2^17 values at a
# time on threads (matrix_bin.c): 70,000 points (two chunks) give the
# clusters of the same values as text and as float32 -> float64 rows; a
# NaN or an infinity is named by the first bad row in the file (two bad
# values in different chunks), exit 2, nothing written.
Xn = np.round(rng.normal(size=(70000, 2)) * 8, 3)
np.save(os.path.join(WORK, "n64.npy"), Xn)
write(Xn, os.path.join(WORK, "n64.txt"))
res = {}
for fname in ("n64.npy", "n64.txt"):
    out = os.path.join(WORK, "o_" + fname)
    if run([os.path.join(WORK, fname), "--dc", "0.5", "--centers", "3", "-o", out, "--force", "-q"]).returncode == 0:
        res[fname] = load(out)
if len(res) == 2:
    for k in ("rho", "delta", "parent", "labels"):
        check(np.array_equal(res["n64.npy"][k], res["n64.txt"][k]), "n64.npy: %s differs from the text file's" % k)
for bad_value, what in ((np.nan, "NaN or infinite"), (np.inf, "NaN or infinite")):
    Xb = Xn.copy()
    Xb[66000, 0] = bad_value  # the second chunk (rows 65,536 on)
    Xb[50001, 1] = bad_value  # the first
    path = os.path.join(WORK, "bad64.npy")
    np.save(path, Xb)
    out = os.path.join(WORK, "o_bad64")
    r = run([path, "-o", out], expect=2)
    check("bad64.npy: row 50001, column 2 is " + what in r.stderr and not os.path.exists(out),
          "a .npy with %r: %s" % (bad_value, r.stderr.strip()))
r = subprocess.run([BIN, "gen", "blobs", "--n", "10", "--dims", "2", "--clusters", "2", "-o",
                    os.path.join(WORK, "b.dat")], capture_output=True, text=True, env=ENV)
check(r.returncode == 2 and not os.path.exists(os.path.join(WORK, "b.dat")), "gen blobs -o b.dat: %d" % r.returncode)
# gen blobs .npy: the same points as the text file, and the same clusters.
bnpy = os.path.join(WORK, "blobs.npy")
subprocess.run([BIN, "gen", "blobs", "--n", "3000", "--dims", "2", "--clusters", "6", "--seed", "5", "--spread", "1",
                "-o", bnpy], check=True, env=ENV)
check(np.array_equal(np.load(bnpy), np.loadtxt(blobs)), "gen blobs: .npy and .txt differ")
# The coordinates alone in the points file, the truth (point i in cluster
# i mod K + 1) in a file of its own, never a column dpc could cluster on.
truth = np.arange(3000) % 6 + 1
check(np.loadtxt(blobs).shape == (3000, 2), "gen blobs: %s columns" % (np.loadtxt(blobs).shape,))
check(np.array_equal(np.loadtxt(blobs.replace(".txt", ".labels.txt")), truth), "gen blobs: .labels.txt")
check(np.array_equal(np.load(bnpy.replace(".npy", ".labels.npy")).ravel(), truth), "gen blobs: .labels.npy")
short = os.path.join(WORK, "short.labels.txt")
np.savetxt(short, truth[:-1], fmt="%d")
r = run([blobs, "--labels", short, "-q"], expect=2)
check("2999 labels for 3000 points" in r.stderr, "--labels of the wrong length: %s" % r.stderr.strip())
out2 = os.path.join(WORK, "auto_npy")
if run([bnpy, "--labels", bnpy.replace(".npy", ".labels.npy"), "--kernel", "gaussian", "-o", out2, "--force", "-q"]).returncode == 0:
    check(np.array_equal(load(out2)["labels"], load(auto_out)["labels"]), "gen blobs: .npy clusters differ from .txt")
# Every point of {0..4}^4 with d_c = 2: whole boxes of the tree at
# exactly d_c from a point, whose corners must not count (cutoff is <).
grid4 = np.array(np.meshgrid(*[np.arange(5.0)] * 4, indexing="ij")).reshape(4, -1).T
gpath = os.path.join(WORK, "grid4.txt")
write(grid4, gpath)
o = os.path.join(WORK, "grid4")
if run([gpath, "--dc", "2", "--centers", "2", "-o", o, "--force", "-q"]).returncode == 0:
    g = load(o)
    D2 = dist2(grid4)
    check((g["rho"] == ref_rho(D2, 2.0, "cutoff")).all(), "{0..4}^4, d_c 2: rho differs from every pair")
    delta, parent = ref_delta(D2, g["rho"])
    check((g["parent"] == parent).all() and (g["delta"] == delta).all(), "{0..4}^4, d_c 2: delta or parent differs")

# A deeper kd-tree, taken by its cost (FD_DPC_TREE=auto): 20,000 points
# of 8-D blobs against every pair, the halo included.
deep = os.path.join(WORK, "deep.npy")
subprocess.run([BIN, "gen", "blobs", "--n", "20000", "--dims", "8", "--clusters", "6", "--seed", "3", "-o", deep],
               check=True, env=ENV, stdout=subprocess.DEVNULL)
got = {}
for label, env in (("tree", {"FD_DPC_TREE": "auto"}), ("scan", {"FD_DPC_GRID": "off"})):
    ENV.update(env)
    o = os.path.join(WORK, "deep_" + label)
    if run([deep, "--neighbors", "20", "--centers", "6", "--halo", "-o", o, "--force", "-q"]).returncode == 0:
        got[label] = load(o)
    ENV.pop("FD_DPC_GRID", None)
    ENV["FD_DPC_TREE"] = "always"
if len(got) == 2:
    for k in ("rho", "delta", "parent", "labels", "core"):
        check(np.array_equal(got["tree"][k], got["scan"][k]), "20,000 8-D blobs: %s differs by tree" % k)
# Tight blobs in 1, 2 and 3 coordinates, where the cluster peaks' nearest
# denser points lie past the delta grid's last ring (rings * h: rings of
# at most 1024 cells, cells of about one neighbour distance): they are
# settled on coarser grids (more than 64 such rows: 300 blobs), by a scan
# of every point (fewer), or once the rings cover a grid, against the
# scan of every point.
for d, rings, k, n, need in ((1, 511, 9, 20000, 2), (2, 15, 9, 20000, 2), (3, 4, 9, 20000, 2),
                             (3, 4, 300, 30000, 65)):
    path = os.path.join(WORK, "tight%d.npy" % d if k == 9 else "tight%d_%d.npy" % (d, k))
    subprocess.run([BIN, "gen", "blobs", "--n", str(n), "--dims", str(d), "--clusters", str(k), "--spread",
                    "0.02" if k == 9 else "0.01", "--seed", "11" if k == 9 else "12", "-o", path], check=True,
                   env=ENV, stdout=subprocess.DEVNULL)
    X = np.load(path)
    got = {}
    # 300 blobs on two ranks too: each rank's rows that the coarser grids
    # take are only its own.
    runs = (("grid", {}, 1), ("scan", {"FD_DPC_GRID": "off"}, 1)) + ((("ranks", {}, 2),) if k == 300 else ())
    for label, env, np_ in runs:
        ENV.update(env)
        o = os.path.join(WORK, "tight%d_%s" % (d, label))
        if run([path, "--neighbors", "20", "--centers", str(k), "-o", o, "--force", "-q"], np_=np_).returncode == 0:
            got[label] = load(o)
        ENV.pop("FD_DPC_GRID", None)
    check(len(got) == len(runs), "%d tight %d-D blobs: %d of %d runs succeeded" % (k, d, len(got), len(runs)))
    if len(got) == len(runs):
        for key in ("rho", "delta", "parent", "labels"):
            for label in [r[0] for r in runs if r[0] != "scan"]:
                check(np.array_equal(got[label][key], got["scan"][key]),
                      "%d tight %d-D blobs: %s differs by %s" % (k, d, key, label))
        h = (X.max(0) - X.min(0)).max() / len(X) ** (1.0 / d)
        far = (got["grid"]["delta"] > 1.01 * rings * h).sum()
        check(far >= need, "%d tight %d-D blobs: %d points past the first grid's rings" % (k, d, far))
# 1-D .npy arrays and 1-D HDF5 datasets: points of one coordinate and
# labels, as NumPy and h5py save them, give what the same values as one
# column give.
X1 = np.load(os.path.join(WORK, "tight1.npy"))
lab1 = np.load(os.path.join(WORK, "tight1.labels.npy"))
np.save(os.path.join(WORK, "flat.npy"), X1.reshape(-1))
np.save(os.path.join(WORK, "flat.labels.npy"), lab1.reshape(-1).astype(np.int32))
np.save(os.path.join(WORK, "col.labels.npy"), lab1.reshape(-1, 1).astype(np.int32))
with h5py.File(os.path.join(WORK, "flat.h5"), "w") as f:
    f["x"] = X1.reshape(-1)
    f["g/labels"] = lab1.reshape(-1).astype(np.int64)
got = {}
for label, pts, labs in (("flat", "flat.npy", "flat.labels.npy"), ("col", "tight1.npy", "col.labels.npy"),
                         ("h5", "flat.h5:/x", "flat.h5:/g/labels")):
    o = os.path.join(WORK, "oned_" + label)
    if run([os.path.join(WORK, pts), "--labels", os.path.join(WORK, labs), "--neighbors", "20", "--centers", "9",
            "-o", o, "--force", "-q"]).returncode == 0:
        got[label] = load(o)
check(len(got) == 3, "1-D inputs: %d of 3 runs succeeded" % len(got))
for one in ("flat", "h5"):
    if one in got and "col" in got:
        for k in ("rho", "delta", "parent", "labels"):
            check(np.array_equal(got[one][k], got["col"][k]), "1-D %s: %s differs from one column's" % (one, k))
        check(got[one]["attrs"]["ari"] == got["col"]["attrs"]["ari"] and got[one]["attrs"]["ari"] > 0.9,
              "1-D %s labels: ARI %r against %r" % (one, got[one]["attrs"]["ari"], got["col"]["attrs"]["ari"]))
many = os.path.join(WORK, "many.txt")  # every point in the rectangle: more centres than allowed
subprocess.run([BIN, "gen", "blobs", "--n", "70000", "--dims", "2", "--clusters", "9", "-o", many], check=True, env=ENV)
r = run([many, "--dc", "1", "--rho-min", "-1", "--delta-min", "1e-300", "-q"], expect=2)
check("more than 65536 centres" in r.stderr, "rectangle of every point: %s" % r.stderr.strip())
# Inputs that read fine but cannot be clustered as asked: a label that is
# not an integer, points all equal (d_c would be 0), more neighbours than
# points.
cases_bad = {"label.txt": ("1 2 1\n3 4 2.5\n5 6 1\n", ["--label-column", "3"], "row 2: label 2.5 is not an integer"),
             "same.txt": ("1 1\n1 1\n1 1\n1 1\n", [], "d_c = 0"),
             "same2.txt": ("1 1\n1 1\n1 1\n1 1\n", ["--neighbors", "2"], "d_c = 0"),
             "few.txt": ("1 1\n2 2\n3 3\n", ["--neighbors", "5"], "more than the 2 other points")}
for fname, (text, args, want) in cases_bad.items():
    path = os.path.join(WORK, fname)
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(WORK, "bad_" + fname)
    r = run([path, "-o", out] + args, expect=2)
    check(want in r.stderr and not os.path.exists(out), "%s: %s" % (fname, r.stderr.strip()))
for args in (["--dc", "0"], ["--dc", "1", "--neighbors", "3"], ["--rho-min", "1"], ["--kernel", "box"],
             ["--columns", "3"], ["--columns", "2-1"], ["--label-column", "9"], ["--backend", "tpu"]):
    run([cases[0][3]] + args + ["-q"], expect=2)

# --predict: new points take the label of their nearest fitted point of
# higher density (counted among the fitted points with the fit's kernel
# and d_c) within d_c, else of their nearest; brute force in numpy, on one rank and
# two, in 2 and 3 dimensions, both kernels; points from the fit's blobs
# come back in the clusters of their blob (ARI 1).
def cross_d2(Q, X):
    D = np.zeros((len(Q), len(X)))
    for k in range(X.shape[1]):
        t = Q[:, None, k] - X[None, :, k]
        D += t * t
    return D


# The cutoff kernel's through the kd-tree (FD_DPC_TREE=always here), and
# by a scan of every fitted point (FD_DPC_GRID=off): the same arrays.
for d, kernel, np_ in ((2, "cutoff", 1), (3, "gaussian", 1), (2, "cutoff", 2), (8, "cutoff", 1)):
    fit = os.path.join(WORK, "pfit%d.txt" % d)
    new = os.path.join(WORK, "pnew%d.txt" % d)
    subprocess.run([BIN, "gen", "blobs", "--n", "1500", "--dims", str(d), "--clusters", "5", "--seed", "8", "--spread", "0.6", "-o", fit],
                   check=True, env=ENV, capture_output=True)
    subprocess.run([BIN, "gen", "blobs", "--n", "400", "--dims", str(d), "--clusters", "5", "--seed", "8", "--spread", "0.6", "-o", new],
                   check=True, env=ENV, capture_output=True)
    out = os.path.join(WORK, "pred%d%s%d" % (d, kernel, np_))
    run([fit, "--kernel", kernel, "--centers", "5", "--predict", new, "-o", out, "--force", "-q"], np_=np_)
    with h5py.File(os.path.join(out, "dpc.h5")) as f:
        g = {k: f["predict/" + k][:] for k in ("labels", "rho", "parent", "delta")}
        lab, rho, dc = f["labels"][:], f["rho"][:], f.attrs["dc"]
        check(f["predict"].attrs["n_points"] == 400, "--predict: n_points")
    X, Q = np.loadtxt(fit), np.loadtxt(new)
    D2 = cross_d2(Q, X)
    # The program's bound: d < d_c for the cutoff kernel (the rounded
    # root, as its density counts), d^2 < d_c^2 for the Gaussian's.
    within = np.sqrt(D2) < dc if kernel == "cutoff" else D2 < dc * dc
    qrho = (np.sqrt(D2) < dc).sum(1).astype(float) if kernel == "cutoff" else np.exp(-D2 / (dc * dc)).sum(1)
    want_parent = np.empty(len(Q), dtype=np.int64)
    for i in range(len(Q)):
        denser = np.nonzero((rho > g["rho"][i]) & within[i])[0]
        pool = denser if len(denser) else np.arange(len(X))
        want_parent[i] = pool[np.argmin(D2[i, pool])]
    tag = "--predict d=%d %s np=%d" % (d, kernel, np_)
    check(np.allclose(g["rho"], qrho, rtol=1e-9, atol=0), "%s: rho differs by %g" % (tag, np.abs(g["rho"] - qrho).max()))
    check(np.array_equal(g["parent"], want_parent), "%s: %d parents differ" % (tag, (g["parent"] != want_parent).sum()))
    check(np.array_equal(g["labels"], lab[want_parent]), "%s: labels are not the parents'" % tag)
    check(np.allclose(g["delta"], np.sqrt(D2[np.arange(len(Q)), want_parent])), "%s: delta" % tag)
    truth = np.loadtxt(new.replace(".txt", ".labels.txt"))
    check(ari(g["labels"], truth) > 0.99, "%s: ARI %.4f against the blobs" % (tag, ari(g["labels"], truth)))
    if kernel == "cutoff" and np_ == 1:
        ENV["FD_DPC_GRID"] = "off"
        run([fit, "--kernel", kernel, "--centers", "5", "--predict", new, "-o", out + "scan", "--force", "-q"])
        del ENV["FD_DPC_GRID"]
        with h5py.File(os.path.join(out + "scan", "dpc.h5")) as f:
            for k in ("labels", "rho", "parent", "delta"):
                check(np.array_equal(f["predict/" + k][:], g[k]), "%s: %s differs from the scan's" % (tag, k))
bad = os.path.join(WORK, "pnew1d.txt")
np.savetxt(bad, np.arange(10.0))
r = run([os.path.join(WORK, "pfit2.txt"), "--predict", bad, "-o", os.path.join(WORK, "predbad"), "-q"], expect=2)
check("1 coordinates, the fit's have 2" in r.stderr and not os.path.exists(os.path.join(WORK, "predbad")),
      "--predict of other dimensions: %s" % r.stderr.strip())

# The automatic centres on a small set (cutoff kernel, most densities 0 or
# 1): the gaps that count are between positive gammas; the gap down to the
# first point of density 0 made every point with a neighbour a centre
# (180 clusters of 200 points).
small = os.path.join(WORK, "small_blobs.txt")
subprocess.run([BIN, "gen", "blobs", "--n", "200", "--dims", "2", "--clusters", "3", "--seed", "1", "-o", small],
               check=True, env=ENV, capture_output=True)
for extra in ([], ["--neighbors", "10"]):
    out = os.path.join(WORK, "small_auto")
    run([small, "--labels", small.replace(".txt", ".labels.txt"), "-o", out, "--force", "-q"] + extra)
    got = load(out)
    check(got["attrs"]["n_clusters"] == 3 and ari(got["labels"], np.loadtxt(small.replace(".txt", ".labels.txt"))) == 1.0,
          "auto centres on 200 points of 3 blobs %s: %d clusters" % (extra, got["attrs"]["n_clusters"]))

testlib.finish()
