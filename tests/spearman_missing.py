"""spearman --missing drop against scipy.stats.spearmanr on the complete
cases (and pandas' dropna().corr(method="spearman") where pandas is
installed): matrices with ties and NaN scattered over them, variables as
rows and as columns (--by columns), text, CSV and .npy, one rank and two;
every pair's rho (float32 in the file) and p, the dropped count; and the
refusals: NaN without --missing, an infinity, too few complete
observations, --missing pairwise (not yet), with --drop-nan-rows, with --y.
usage: spearman_missing.py FCBO_DIST WORKDIR"""
import os
import sys

import h5py
import numpy as np
import scipy.stats

from testlib import check, fcbo, finish

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
try:
    import pandas as pd
except ImportError:
    pd = None



def run(*args, ranks=1):
    return fcbo(BIN, *args, ranks=ranks)


def write(X, path):
    if path.endswith(".npy"):
        np.save(path, X)
    else:
        np.savetxt(path, X, fmt="%.10g", delimiter="," if path.endswith(".csv") else " ")


rng = np.random.default_rng(17)
for shape, frac, ext, by, ranks in [((40, 14), 0.03, ".txt", "rows", 1), ((60, 25), 0.01, ".csv", "rows", 2),
                                    ((30, 9), 0.02, ".npy", "columns", 1), ((200, 12), 0.004, ".npy", "rows", 2)]:
    X = rng.integers(0, 7, size=shape).astype(float)  # ties
    X[:3] = X[3]  # equal rows
    X[5] = 2.0    # a constant row: never selected
    X[rng.random(shape) < frac] = np.nan
    path = os.path.join(WORK, "m%dx%d%s" % (shape + (ext,)))
    write(X, path)
    out = os.path.join(WORK, "o" + os.path.basename(path))
    what = "%s %s --by %s, %d rank(s)" % (os.path.basename(path), shape, by, ranks)
    r = run("spearman", path, "--missing", "drop", "--by", by, "--rho", 0, "-o", out, "--force", "-q", ranks=ranks)
    check(r.returncode == 0, "%s: exit %d: %s" % (what, r.returncode, r.stderr))
    if r.returncode:
        continue
    V = X if by == "rows" else X.T  # variables as rows
    complete = ~np.isnan(V).any(axis=0)
    C = V[:, complete]
    with h5py.File(os.path.join(out, "spearman.h5")) as f:
        check(f.attrs["missing"] == b"drop" and f.attrs["dropped_observations"] == (~complete).sum()
              and f.attrs["observations"] == complete.sum(),
              "%s: attributes %s, %s of %d" % (what, f.attrs["missing"], f.attrs["dropped_observations"], (~complete).sum()))
        i, j, rho, p = (f["pairs/" + k][:] for k in ("i", "j", "rho", "p"))
    want = {}
    for a in range(len(C)):
        for b in range(a + 1, len(C)):
            if np.ptp(C[a]) == 0 or np.ptp(C[b]) == 0:
                continue
            res = scipy.stats.spearmanr(C[a], C[b])
            want[(a, b)] = (res.statistic, res.pvalue)
    got = {(int(a), int(b)): (float(x), float(y)) for a, b, x, y in zip(i, j, rho, p)}
    check(set(got) == set(want), "%s: %d pairs, scipy %d" % (what, len(got), len(want)))
    # Equal rows: rho is exactly 1 and p 0 here; scipy's rho is 1 - 1e-16
    # in floating point, and its p then some 1e-56.
    def p_ok(g, w):
        return g[1] == 0 if abs(w[0]) > 1 - 1e-12 else abs(g[1] - w[1]) <= 1e-9 * max(w[1], 1e-300)

    bad = [k for k in want if k in got and (abs(got[k][0] - want[k][0]) > 1e-6 or not p_ok(got[k], want[k]))]
    check(not bad, "%s: %d pairs differ from scipy, e.g. %s" % (what, len(bad), bad[:3]))
    if pd is not None:
        df = pd.DataFrame(V.T).dropna()
        corr = df.corr(method="spearman").to_numpy()
        badp = [k for k in got if abs(corr[k] - got[k][0]) > 1e-6]
        check(not badp, "%s: %d pairs differ from pandas" % (what, len(badp)))

# ---------------- refusals ----------------
X = rng.normal(size=(10, 8))
X[2, 3] = np.nan
nanf = os.path.join(WORK, "nan.txt")
write(X, nanf)
r = run("spearman", nanf, "--rho", 0.5)
check(r.returncode == 2 and "NaN" in r.stderr, "NaN without --missing: exit %d: %s" % (r.returncode, r.stderr))
X[4, 1] = np.inf
inff = os.path.join(WORK, "inf.npy")
write(X, inff)
r = run("spearman", inff, "--missing", "drop", "--rho", 0.5)
check(r.returncode == 2 and "infinite" in r.stderr, "an infinity with --missing drop: exit %d: %s" % (r.returncode, r.stderr))
X = rng.normal(size=(6, 5))
X[0, :3] = np.nan
few = os.path.join(WORK, "few.txt")
write(X, few)
r = run("spearman", few, "--missing", "drop", "--rho", 0.5, "-o", os.path.join(WORK, "few"))
check(r.returncode == 2 and "needs 3" in r.stderr and not os.path.exists(os.path.join(WORK, "few", "spearman.h5")),
      "too few complete observations: exit %d: %s" % (r.returncode, r.stderr))
for bad in (["--missing", "pairwise"], ["--missing", "maybe"], ["--missing", "drop", "--drop-nan-rows"],
            ["--missing", "drop", "--y", nanf]):
    r = run("spearman", nanf, "--rho", 0.5, *bad)
    check(r.returncode == 2 and "--missing" in r.stderr, "%s: exit %d: %s" % (" ".join(bad), r.returncode, r.stderr))

finish("%d checks, %d failed")
