"""spearman --missing drop against scipy.stats.spearmanr on the complete
cases (and pandas' dropna().corr(method="spearman") where pandas is
installed): matrices with ties and NaN scattered over them, variables as
rows and as columns (--by columns), text, CSV and .npy, one rank and two;
every pair's rho (float32 in the file) and p, the dropped count; and the
refusals: NaN without --missing, an infinity, too few complete
observations, with --drop-nan-rows, with --y.
--missing pairwise against scipy.stats.spearmanr on each pair's common
observations (pandas' DataFrame.corr(method="spearman") where installed):
every pair's rho and p, by rows and columns, 1 and 2 ranks, --rho and
--pvalue (each pair's p with its own n), --top-k, --fdr (Benjamini-
Hochberg over the pairs' own p), --y, rows with two or no values, and
tiles of several blocks; its refusal with kendall.
usage: spearman_missing.py FCBO_DIST WORKDIR"""
import os
import sys

import h5py
import numpy as np
import scipy.stats

from testlib import CPU_ENV, check, fcbo, finish, write_matrix

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
try:
    import pandas as pd
except ImportError:
    pd = None



def run(*args, ranks=1):
    return fcbo(BIN, *args, ranks=ranks)


rng = np.random.default_rng(17)
for shape, frac, ext, by, ranks in [((40, 14), 0.03, ".txt", "rows", 1), ((60, 25), 0.01, ".csv", "rows", 2),
                                    ((30, 9), 0.02, ".npy", "columns", 1), ((200, 12), 0.004, ".npy", "rows", 2)]:
    X = rng.integers(0, 7, size=shape).astype(float)  # ties
    X[:3] = X[3]  # equal rows
    X[5] = 2.0    # a constant row: never selected
    X[rng.random(shape) < frac] = np.nan
    path = os.path.join(WORK, "m%dx%d%s" % (shape + (ext,)))
    write_matrix(X, path)
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

# ---------------- --missing pairwise ----------------
def pair_oracle(V, W=None):
    """{(a, b): (rho, p)} over each pair's common observations, as pandas
    (and --missing pairwise) define it: pairs of fewer than 3 common
    observations, or constant over them, have no rho.  W None: the pairs
    a < b of V's rows; else every row of V with every row of W."""
    out = {}
    for a in range(len(V)):
        for b in range(a + 1, len(V)) if W is None else range(len(W)):
            u, v = V[a], (V if W is None else W)[b]
            m = ~np.isnan(u) & ~np.isnan(v)
            if m.sum() < 3 or np.ptp(u[m]) == 0 or np.ptp(v[m]) == 0:
                continue
            r = scipy.stats.spearmanr(u[m], v[m])
            out[(a, b)] = (r.statistic, r.pvalue)
    return out


def p_close(g, w):
    """g, w: (rho, p); at |rho| = 1 ours is exact (p 0), scipy's 1 - 1e-16
    (p some 1e-50)."""
    return g[1] == 0 if abs(w[0]) > 1 - 1e-12 else abs(g[1] - w[1]) <= 1e-9 * max(w[1], 1e-300)


def compare(what, got, want, sel=None):
    """got: {(i, j): (rho, p)} from the file; want: the oracle's, of which
    sel(rho, p) are the selected (pairs within 1e-9 of the threshold may
    go either way)."""
    if sel is not None:
        must = {k for k, (r, pv) in want.items() if sel(r, pv, 1e-9)}
        may = {k for k, (r, pv) in want.items() if sel(r, pv, -1e-9)}
        check(must <= set(got) <= may, "%s: %d pairs selected, scipy %d..%d; extra %s, missing %s"
              % (what, len(got), len(must), len(may), sorted(set(got) - may)[:3], sorted(must - set(got))[:3]))
    else:
        check(set(got) == set(want), "%s: %d pairs, scipy %d; extra %s, missing %s" % (
            what, len(got), len(want), sorted(set(got) - set(want))[:3], sorted(set(want) - set(got))[:3]))
    bad = [k for k in got if k in want and (abs(got[k][0] - want[k][0]) > 1e-6 or not p_close(got[k], want[k]))]
    check(not bad, "%s: %d pairs differ from scipy, e.g. %s" % (what, len(bad), [(k, got[k], want[k]) for k in bad[:2]]))


def read_pairs(out):
    with h5py.File(os.path.join(out, "spearman.h5")) as f:
        i, j, rho, p = (f["pairs/" + k][:] for k in ("i", "j", "rho", "p"))
        attrs = dict(f.attrs)
    return {(int(a), int(b)): (float(x), float(y)) for a, b, x, y in zip(i, j, rho, p)}, attrs


for shape, frac, ext, by, ranks, sel in [((40, 14), 0.15, ".txt", "rows", 1, ("--rho", 0)),
                                         ((50, 20), 0.1, ".csv", "rows", 2, ("--rho", 0)),
                                         ((16, 30), 0.2, ".npy", "columns", 1, ("--rho", 0)),
                                         ((60, 12), 0.1, ".npy", "rows", 2, ("--pvalue", 0.2)),
                                         ((45, 11), 0.1, ".txt", "rows", 1, ("--rho", 0.4))]:
    X = rng.integers(0, 6, size=shape).astype(float)  # ties
    X[rng.random(shape) < frac] = np.nan
    V = X if by == "rows" else X.T
    V[1] = np.nan            # a variable with no value
    V[2, 2:] = np.nan        # ... with two
    V[4] = V[6]              # equal variables, NaN and all
    V[7] = 3.0               # a constant one
    V[8, :] = np.arange(V.shape[1])  # complete, no ties
    path = os.path.join(WORK, "pw%dx%d%s" % (shape + (ext,)))
    write_matrix(X, path)
    out = os.path.join(WORK, "opw" + os.path.basename(path))
    what = "pairwise %s --by %s %s %s, %d rank(s)" % (os.path.basename(path), by, *sel, ranks)
    r = run("spearman", path, "--missing", "pairwise", "--by", by, *map(str, sel), "-o", out, "--force", ranks=ranks)
    check(r.returncode == 0, "%s: exit %d: %s" % (what, r.returncode, r.stderr))
    if r.returncode:
        continue
    got, attrs = read_pairs(out)
    incomplete = int(np.isnan(V).any(axis=1).sum())
    check(attrs["missing"] == b"pairwise" and attrs["incomplete_rows"] == incomplete and attrs["dropped_observations"] == 0
          and attrs["observations"] == V.shape[1], "%s: attributes %s %s" % (what, attrs["missing"], attrs.get("incomplete_rows")))
    check("--missing pairwise: %d rows miss" % incomplete in r.stderr, "%s: the summary: %s" % (what, r.stderr))
    want = pair_oracle(V)
    check(attrs["pairs_tested"] == len(want), "%s: %d pairs tested, scipy %d" % (what, attrs["pairs_tested"], len(want)))
    if sel[0] == "--rho":
        t = sel[1]
        compare(what, got, want, None if t == 0 else lambda rr, pv, e: abs(rr) >= t + e)
    else:
        a = sel[1]
        compare(what, got, want, lambda rr, pv, e: pv <= a * (1 - e))
    if pd is not None:
        corr = pd.DataFrame(V.T).corr(method="spearman", min_periods=3).to_numpy()
        badp = [k for k in got if abs(corr[k] - got[k][0]) > 1e-6]
        check(not badp, "%s: %d pairs differ from pandas" % (what, len(badp)))

# --top-k 3: each row's 3 partners of largest |rho| over their common
# observations (ties: smaller j), on 1 and 2 ranks
X = rng.integers(0, 6, size=(40, 15)).astype(float)
X[rng.random(X.shape) < 0.15] = np.nan
X[5] = np.nan
path = os.path.join(WORK, "pwtopk.txt")
write_matrix(X, path)
want = pair_oracle(X)
rho = {}
for (a, b), (r_, _) in want.items():
    rho[(a, b)] = rho[(b, a)] = r_
for rk in (1, 2):
    out = os.path.join(WORK, "opwtopk%d" % rk)
    r = run("spearman", path, "--missing", "pairwise", "--top-k", 3, "-o", out, "--force", "-q", ranks=rk)
    check(r.returncode == 0, "pairwise --top-k 3, %d rank(s): exit %d: %s" % (rk, r.returncode, r.stderr))
    if r.returncode:
        continue
    got, _ = read_pairs(out)
    ok = True
    for a in range(len(X)):
        cand = sorted((j for j in range(len(X)) if (a, j) in rho), key=lambda j: (-round(abs(rho[(a, j)]), 12), j))
        mine = sorted(j for (i, j) in got if i == a)
        ok &= mine == sorted(cand[:3])
    bad = [k for k in got if abs(got[k][0] - rho[k]) > 1e-6 or not p_close(got[k], want[(min(k), max(k))])]
    check(ok and not bad, "pairwise --top-k 3, %d rank(s): partners differ from scipy's order, or %d values" % (rk, len(bad)))

def bh_selection(want, Q):
    """Benjamini-Hochberg at Q over the oracle's p: the selected pairs and
    the cutoff p*."""
    ps = sorted(v[1] for v in want.values())
    ks = [k for k in range(1, len(ps) + 1) if ps[k - 1] <= k * Q / len(ps)]
    pstar = ps[max(ks) - 1] if ks else -1
    return {k for k, v in want.items() if v[1] <= pstar}, pstar


def check_fdr(what, path, want, Q, ranks, min_selected=0):
    """--missing pairwise --fdr Q on each number of ranks against BH on
    scipy's p (pairs within 1e-9 of the cutoff may go either way)."""
    sel, pstar = bh_selection(want, Q)
    near = {k for k, v in want.items() if abs(v[1] - pstar) <= 1e-9 * max(pstar, 1e-300)}
    for rk in ranks:
        out = os.path.join(WORK, "o%s%d" % (what.replace(" ", "_"), rk))
        r = run("spearman", path, "--missing", "pairwise", "--fdr", Q, "-o", out, "--force", "-q", ranks=rk)
        check(r.returncode == 0, "%s, %d rank(s): exit %d: %s" % (what, rk, r.returncode, r.stderr))
        if r.returncode:
            continue
        got, attrs = read_pairs(out)
        check(len(sel) > min_selected and set(got) - near == sel - near and attrs["pairs_tested"] == len(want),
              "%s %g, %d rank(s): %d pairs, BH on scipy's p %d (of %d tested, file %d)" % (
                  what, Q, rk, len(got), len(sel), len(want), attrs["pairs_tested"]))


# --fdr Q: Benjamini-Hochberg over every pair's own p (its own n) against
# BH on scipy's p-values, on 1 and 2 ranks
X = rng.integers(0, 8, size=(70, 14)).astype(float)
X[:20] += np.arange(14)  # correlated rows, so that some pairs pass
X[rng.random(X.shape) < 0.12] = np.nan
path = os.path.join(WORK, "pwfdr.npy")
write_matrix(X, path)
check_fdr("pairwise --fdr", path, pair_oracle(X), 0.05, (1, 2), min_selected=10)

# The same where most rows miss nothing: the complete rows' pairs are
# binned and selected by x = 1 - rho^2 at the full n (as a GPU does), the
# others by their own p, and Benjamini-Hochberg must still order them all
# by p.  Both kinds lie on each side of the cutoff; 1 and 3 ranks.
g = np.random.default_rng(0)  # its own stream: the check below holds for this draw
X = g.normal(size=(160, 12)).round(2)
X[:60] += 2 * g.normal(size=12)  # a common factor: p spread across the cutoff
holes = g.random(160) < 0.3
X[holes, g.integers(0, 12, size=holes.sum())] = np.nan
path = os.path.join(WORK, "pwfdr_mixed.npy")
write_matrix(X, path)
want = pair_oracle(X)
full = {k for k in want if not (np.isnan(X[k[0]]).any() or np.isnan(X[k[1]]).any())}
sel, pstar = bh_selection(want, 0.1)
# the cutoff lies among both kinds: each has pairs just in and just out
edge = sorted(want, key=lambda k: abs(np.log(want[k][1] / pstar)))[:40]
check(len(sel & full) > 20 and len(sel - full) > 20 and any(k in full for k in edge) and
      any(k not in full for k in edge), "pairwise --fdr mixed: the data set does not mix the kinds at the cutoff")
check_fdr("pairwise --fdr mixed", path, want, 0.1, (1, 3))

# --y: pairs of rows of two matrices, both with missing values
X = rng.normal(size=(20, 15)).round(1)
Y = rng.normal(size=(12, 15)).round(1)
X[rng.random(X.shape) < 0.15] = np.nan
Y[rng.random(Y.shape) < 0.15] = np.nan
Y[3] = np.where(np.isnan(Y[3]), np.nan, 1.0)  # constant where it has values
xf, yf = os.path.join(WORK, "pwx.txt"), os.path.join(WORK, "pwy.npy")
write_matrix(X, xf)
write_matrix(Y, yf)
out = os.path.join(WORK, "opwy")
r = run("spearman", xf, "--y", yf, "--missing", "pairwise", "--rho", 0, "-o", out, "--force", "-q", ranks=2)
check(r.returncode == 0, "pairwise --y: exit %d: %s" % (r.returncode, r.stderr))
if r.returncode == 0:
    got, attrs = read_pairs(out)
    compare("pairwise --y", got, pair_oracle(X, Y))

# Several tiles a side (256 rows each), a few incomplete rows among
# complete ones: the kernels' pairs and the pairwise ones meet in a tile.
X = rng.normal(size=(700, 10)).round(2)
inc = rng.choice(700, size=25, replace=False)
for a in inc:
    X[a, rng.choice(10, size=rng.integers(1, 5), replace=False)] = np.nan
path = os.path.join(WORK, "pwbig.npy")
write_matrix(X, path)
out = os.path.join(WORK, "opwbig")
r = run("spearman", path, "--missing", "pairwise", "--rho", 0.5, "-o", out, "--force", "-q", "-t", 2, ranks=2)
check(r.returncode == 0, "pairwise, 700 rows: exit %d: %s" % (r.returncode, r.stderr))
if r.returncode == 0:
    got, attrs = read_pairs(out)
    # complete pairs by the rank matrix, pairs with an incomplete row by scipy
    comp = np.setdiff1d(np.arange(700), inc)
    R = scipy.stats.rankdata(X[comp], axis=1)
    C = np.corrcoef(R)
    want = {}
    for u in range(len(comp)):
        for v in range(u + 1, len(comp)):
            if abs(C[u, v]) >= 0.5 - 1e-9:
                want[(int(comp[u]), int(comp[v]))] = (C[u, v], None)
    for a in inc:
        for b in range(700):
            if b == a or (b in inc and b < a):
                continue
            m = ~np.isnan(X[a]) & ~np.isnan(X[b])
            if m.sum() >= 3:
                rr = scipy.stats.spearmanr(X[a][m], X[b][m]).statistic
                if abs(rr) >= 0.5 - 1e-9:
                    want[(min(a, b), max(a, b))] = (rr, None)
    check(set(got) == set(want), "pairwise, 700 rows: %d pairs, oracle %d; extra %s, missing %s"
          % (len(got), len(want), sorted(set(got) - set(want))[:3], sorted(set(want) - set(got))[:3]))
    bad = [k for k in got if k in want and abs(got[k][0] - want[k][0]) > 1e-6]
    check(not bad, "pairwise, 700 rows: %d rho differ" % len(bad))
    # the scalar kernel (one rank): the same pairs
    r2 = fcbo(BIN, "spearman", path, "--missing", "pairwise", "--rho", 0.5, "-o", out + "s", "--force", "-q",
              env=dict(CPU_ENV, FD_SPEARMAN_SCALAR="1"))
    if r2.returncode == 0:
        got2, _ = read_pairs(out + "s")
        check(got2 == got, "pairwise, 700 rows: the scalar kernel's pairs differ")
    else:
        check(False, "pairwise scalar: exit %d: %s" % (r2.returncode, r2.stderr))

# ---------------- refusals ----------------
X = rng.normal(size=(10, 8))
X[2, 3] = np.nan
nanf = os.path.join(WORK, "nan.txt")
write_matrix(X, nanf)
r = run("spearman", nanf, "--rho", 0.5)
check(r.returncode == 2 and "NaN" in r.stderr, "NaN without --missing: exit %d: %s" % (r.returncode, r.stderr))
X[4, 1] = np.inf
inff = os.path.join(WORK, "inf.npy")
write_matrix(X, inff)
r = run("spearman", inff, "--missing", "drop", "--rho", 0.5)
check(r.returncode == 2 and "infinite" in r.stderr, "an infinity with --missing drop: exit %d: %s" % (r.returncode, r.stderr))
X = rng.normal(size=(6, 5))
X[0, :3] = np.nan
few = os.path.join(WORK, "few.txt")
write_matrix(X, few)
r = run("spearman", few, "--missing", "drop", "--rho", 0.5, "-o", os.path.join(WORK, "few"))
check(r.returncode == 2 and "needs 3" in r.stderr and not os.path.exists(os.path.join(WORK, "few", "spearman.h5")),
      "too few complete observations: exit %d: %s" % (r.returncode, r.stderr))
for bad in (["--missing", "maybe"], ["--missing", "drop", "--drop-nan-rows"], ["--missing", "drop", "--y", nanf],
            ["--missing", "pairwise", "--drop-nan-rows"], ["--missing", "pairwise", "--method", "kendall"]):
    r = run("spearman", nanf, "--rho", 0.5, *bad)
    check(r.returncode == 2 and "--missing" in r.stderr, "%s: exit %d: %s" % (" ".join(bad), r.returncode, r.stderr))

finish("%d checks, %d failed")
