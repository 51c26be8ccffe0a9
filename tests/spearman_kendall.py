"""spearman --method kendall against scipy.stats.kendalltau (tau-b,
method "auto": exact p for untied rows of up to 33 observations, else the
normal approximation with the tie-corrected variance): matrices full of
ties (small integers), untied ones (normal values) with n = 10 and 40,
constant and equal rows, by rows and by columns, text, CSV and .npy, one
rank and two, with --missing drop; every pair's tau (float32 in the file)
and p; --rho R selects exactly the pairs with |tau| >= R (scipy's tau, away
from R by rounding); --top-k K gives each row's K partners of largest
|tau| (then smaller j); --pvalue A selects exactly the pairs with scipy's
p <= A (each pair's p from both rows' ties; 1 and 2 ranks), --fdr Q the
pairs Benjamini-Hochberg picks from scipy's p-values, and with no
selection the count is of p <= 0.05; and the refusals: rows of 2 or of
more than 256 observations.
usage: spearman_kendall.py FCBO_DIST WORKDIR"""
import os
import sys

import h5py
import numpy as np
import scipy.stats

from testlib import check, fcbo, finish, write_matrix

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)



def run(*args, ranks=1):
    return fcbo(BIN, *args, ranks=ranks)


def pairs(out):
    with h5py.File(os.path.join(out, "spearman.h5")) as f:
        check(f.attrs["method"] == b"kendall", "%s: method attribute %s" % (out, f.attrs["method"]))
        return {(int(a), int(b)): (float(t), float(p)) for a, b, t, p in
                zip(*(f["pairs/" + k][:] for k in ("i", "j", "rho", "p")))}


def oracle(V):
    want = {}
    for a in range(len(V)):
        for b in range(a + 1, len(V)):
            if np.ptp(V[a]) == 0 or np.ptp(V[b]) == 0:
                continue
            r = scipy.stats.kendalltau(V[a], V[b])
            want[(a, b)] = (r.statistic, r.pvalue)
    return want


def p_ok(g, w):
    # rows equal up to order: tau exactly +-1; scipy's float sum may stop a hair short
    if abs(w[0]) > 1 - 1e-12:
        return abs(g[1] - w[1]) <= 1e-9 * max(w[1], 1e-300) or g[1] <= 1e-30
    return abs(g[1] - w[1]) <= 1e-9 * max(w[1], 1e-300)


rng = np.random.default_rng(23)
cases = [((30, 12), "int", ".txt", "rows", 1, 0), ((25, 10), "normal", ".txt", "rows", 2, 0),
         ((20, 40), "normal", ".npy", "rows", 1, 0), ((40, 45), "int", ".npy", "rows", 2, 0),
         ((14, 33), "int", ".csv", "columns", 1, 0), ((30, 20), "int", ".txt", "rows", 1, 0.03)]
for shape, kind, ext, by, ranks, nan in cases:
    X = rng.integers(0, 5, size=shape).astype(float) if kind == "int" else rng.normal(size=shape)
    if by == "rows":
        X[1] = X[0]
        X[2] = 3.0
    if nan:
        X[rng.random(shape) < nan] = np.nan
    path = os.path.join(WORK, "k%dx%d%s" % (shape + (ext,)))
    write_matrix(X, path)
    out = os.path.join(WORK, "o" + os.path.basename(path))
    what = "%s %s --by %s, %d rank(s)%s" % (os.path.basename(path), kind, by, ranks, ", --missing drop" if nan else "")
    extra = ["--missing", "drop"] if nan else []
    r = run("spearman", path, "--method", "kendall", "--by", by, "--rho", 0, "-o", out, "--force", "-q", *extra,
            ranks=ranks)
    check(r.returncode == 0, "%s: exit %d: %s" % (what, r.returncode, r.stderr))
    if r.returncode:
        continue
    V = X if by == "rows" else X.T
    if nan:
        V = V[:, ~np.isnan(V).any(axis=0)]
    want, got = oracle(V), pairs(out)
    check(set(got) == set(want), "%s: %d pairs, scipy %d" % (what, len(got), len(want)))
    bad = [k for k in want if k in got and (abs(got[k][0] - want[k][0]) > 1e-6 or not p_ok(got[k], want[k]))]
    check(not bad, "%s: %d pairs differ from scipy, e.g. %s" % (what, len(bad), [(k, got[k], want[k]) for k in bad[:2]]))

    # --rho R: exactly the pairs with |tau| >= R, those within rounding of R aside
    R = 0.31
    out2 = out + "-r"
    r = run("spearman", path, "--method", "kendall", "--by", by, "--rho", R, "-o", out2, "--force", "-q", *extra)
    sel = set(pairs(out2)) if r.returncode == 0 else set()
    near = {k for k, v in want.items() if abs(abs(v[0]) - R) < 1e-9}
    check(r.returncode == 0 and sel - near == {k for k, v in want.items() if abs(v[0]) >= R} - near,
          "%s: --rho %g selects %d pairs" % (what, R, len(sel)))

    # --pvalue A: exactly the pairs with scipy's p <= A, those within
    # rounding of A aside; the same on two ranks
    A = 0.02
    for rk in (1, 2):
        out4 = out + "-p%d" % rk
        r = run("spearman", path, "--method", "kendall", "--by", by, "--pvalue", A, "-o", out4, "--force", "-q", *extra,
                ranks=rk)
        sel = pairs(out4) if r.returncode == 0 else {}
        near = {k for k, v in want.items() if abs(v[1] - A) <= 1e-9 * A}
        check(r.returncode == 0 and set(sel) - near == {k for k, v in want.items() if v[1] <= A} - near
              and all(v[1] <= A * (1 + 1e-9) for v in sel.values()),
              "%s: --pvalue %g on %d rank(s) selects %d pairs, scipy %d: %s" % (
                  what, A, rk, len(sel), sum(v[1] <= A for v in want.values()), r.stderr))
    # --fdr Q: Benjamini-Hochberg on scipy's p-values (ties in p fall
    # together); 1 and 2 ranks
    Q = 0.1
    ps = sorted(v[1] for v in want.values())
    ks = [k for k in range(1, len(ps) + 1) if ps[k - 1] <= k * Q / len(ps)]
    pstar = ps[max(ks) - 1] if ks else -1
    for rk in (1, 2):
        out5 = out + "-f%d" % rk
        r = run("spearman", path, "--method", "kendall", "--by", by, "--fdr", Q, "-o", out5, "--force", "-q", *extra,
                ranks=rk)
        sel = pairs(out5) if r.returncode == 0 else {}
        near = {k for k, v in want.items() if abs(v[1] - pstar) <= 1e-9 * max(pstar, 1e-300)}
        check(r.returncode == 0 and set(sel) - near == {k for k, v in want.items() if v[1] <= pstar} - near,
              "%s: --fdr %g on %d rank(s) selects %d pairs, BH on scipy's p %d: %s" % (
                  what, Q, rk, len(sel), sum(v[1] <= pstar for v in want.values()), r.stderr))

    # no selection: the count is of p <= 0.05
    r = run("spearman", path, "--method", "kendall", "--by", by, *extra)
    n05 = sum(v[1] <= 0.05 for v in want.values())
    check(r.returncode == 0 and r.stderr.startswith("%d of %d pairs selected" % (n05, len(want))),
          "%s: the count of p <= 0.05: %s (scipy %d)" % (what, r.stderr.strip()[:80], n05))

    # --top-k 3 against the oracle's |tau| order (ties: smaller j)
    out3 = out + "-k"
    r = run("spearman", path, "--method", "kendall", "--by", by, "--top-k", 3, "-o", out3, "--force", "-q", *extra)
    if r.returncode == 0:
        with h5py.File(os.path.join(out3, "spearman.h5")) as f:
            gi, gj = f["pairs/i"][:], f["pairs/j"][:]
        tau = {}
        for (a, b), (t, _) in want.items():
            tau[(a, b)] = tau[(b, a)] = t
        ok = True
        for a in range(len(V)):
            cand = sorted((j for j in range(len(V)) if (a, j) in tau), key=lambda j: (-round(abs(tau[(a, j)]), 12), j))
            ok &= sorted(gj[gi == a].tolist()) == sorted(cand[:3])
        check(ok, "%s: --top-k 3 partners differ from scipy's order" % what)
    else:
        check(False, "%s: --top-k: exit %d: %s" % (what, r.returncode, r.stderr))

# ---------------- refusals ----------------
small = os.path.join(WORK, "k30x12.txt")
for bad in (["--method", "pearson"],):
    r = run("spearman", small, "--method", "kendall", *bad)
    check(r.returncode == 2 and ("--method" in r.stderr or "kendall" in r.stderr),
          "kendall %s: exit %d: %s" % (" ".join(map(str, bad)), r.returncode, r.stderr))
for cols in (2, 257):
    path = os.path.join(WORK, "w%d.txt" % cols)
    write_matrix(rng.normal(size=(5, cols)), path)
    r = run("spearman", path, "--method", "kendall", "--rho", 0.5)
    check(r.returncode == 2 and "observations" in r.stderr, "kendall on %d columns: exit %d: %s" % (cols, r.returncode, r.stderr))

finish("%d checks, %d failed")
