"""fcbo-dist spearman against scipy.stats.spearmanr, the oracle: for random
zero-inflated integer matrices with heavy ties, constant rows and equal
rows (n = 7, 30, 64, 128, 200 observations), in every input format, every
selection mode returns exactly scipy's pairs, with rho within 1e-6 and p
within 1e-6 relative (1e-300 absolute); 1 to 4 ranks give the same pairs.
usage: spearman_scipy.py FCBO_DIST WORKDIR"""
import hashlib
import os
import subprocess
import sys
import warnings

import h5py
import numpy as np
from scipy import stats
import testlib
from spearman_testlib import ENV, check, finish, matrix

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
warnings.simplefilter("ignore")


def run(args, np_=1, expect=0, env=None, quiet=True):
    cmd = [BIN, "spearman"] + args + (["-q"] if quiet else []) + ["--force"]
    if np_ > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np_)] + cmd
    r = subprocess.run(cmd, env=dict(ENV, **(env or {})), capture_output=True, text=True)
    check(r.returncode == expect, "%s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r


def pairs(path):
    f = h5py.File(path, "r")
    out = (f["pairs/i"][:], f["pairs/j"][:], f["pairs/rho"][:], f["pairs/p"][:], testlib.attrs(f),
           f["histogram"][:] if "histogram" in f else None)
    f.close()
    return out


def oracle(x, y=None):
    if y is None:
        r, p = stats.spearmanr(x, axis=1)
        return np.atleast_2d(r), np.atleast_2d(p)
    r, p = stats.spearmanr(np.vstack([x, y]), axis=1)
    return r[: len(x), len(x):], p[: len(x), len(x):]


def compare(name, got, r, p, sel, exact_one):
    i, j, rho, pv = got[:4]
    want = set(zip(*[a.tolist() for a in np.nonzero(sel)]))
    have = list(zip(i.tolist(), j.tolist()))
    check(len(have) == len(set(have)), "%s: a pair written twice" % name)
    check(set(have) == want, "%s: %d pairs, scipy %d; %d extra, %d missing" %
          (name, len(have), len(want), len(set(have) - want), len(want - set(have))))
    if len(i):
        check(np.abs(rho - r[i, j]).max() <= 1e-6, "%s: rho differs by %g" % (name, np.abs(rho - r[i, j]).max()))
        one = exact_one[i, j]
        q = p[i, j]
        err = np.abs(pv - q)
        ok = (err <= 1e-6 * q) | (err <= 1e-300)
        # scipy rounds rho = 1 to 0.9999999999999999 and reports a tiny p
        # (1e-39 for n = 7, 1e-200 for n = 30); the exact p there is 0.
        ok |= one & (pv == 0) & (q < 1e-6)
        check(ok.all(), "%s: p differs: worst %s" % (name, (pv[~ok][:3], q[~ok][:3])))


def exact_ones(x, y=None):
    y = x if y is None else y
    eq = (x[:, None, :] == y[None, :, :]).all(-1) | (x[:, None, :] == -y[None, :, :]).all(-1)
    # rank-equal rows (a monotone map of each other) also give rho = +-1
    rx = np.apply_along_axis(stats.rankdata, 1, x)
    ry = np.apply_along_axis(stats.rankdata, 1, y)
    same = (rx[:, None, :] == ry[None, :, :]).all(-1) | (rx[:, None, :] == (x.shape[1] + 1 - ry)[None, :, :]).all(-1)
    return eq | same


def write(x, path):
    if path.endswith(".npy"):
        np.save(path, x.astype(np.int32))
    elif path.endswith(".csv"):
        np.savetxt(path, x, fmt="%d", delimiter=",", header=",".join("c%d" % k for k in range(x.shape[1])), comments="")
    elif ".h5:" in path:
        fn, ds = path.split(":")
        with h5py.File(fn, "w") as f:
            f[ds] = x.astype(np.float64)
    else:
        np.savetxt(path, x, fmt="%d")


for n, rows, fmt in [(7, 150, "txt"), (30, 260, "csv"), (64, 200, "npy"), (128, 180, "h5"), (200, 120, "txt")]:
    x = matrix(rows, n, n)
    src = os.path.join(WORK, "m%d.%s" % (n, fmt)) if fmt != "h5" else os.path.join(WORK, "m%d.h5:/data/x" % n)
    write(x, src)
    r, p = oracle(x)
    upper = np.triu(np.ones_like(r, dtype=bool), 1)
    ones = exact_ones(x)
    out = os.path.join(WORK, "o%d" % n)
    for alpha in [0.05, 1e-4]:
        run([src, "-o", out, "--pvalue", str(alpha), "-t", "2"])
        compare("n=%d p<=%g" % (n, alpha), pairs(out + "/spearman.h5"), r, p, upper & (p <= alpha), ones)
    # --no-histogram: the same pairs, and no /histogram in the file (on 1
    # and 2 ranks: the master is written apart from the single file).
    for np_ in ([1, 2] if n == 30 else [1]):
        run([src, "-o", out, "--pvalue", "1e-4", "--no-histogram"], np_=np_)
        got = pairs(out + "/spearman.h5")
        compare("n=%d p<=1e-4 --no-histogram np=%d" % (n, np_), got, r, p, upper & (p <= 1e-4), ones)
        check(got[5] is None, "n=%d --no-histogram np=%d: the file has a histogram" % (n, np_))
    R = 0.4123
    run([src, "-o", out, "--rho", str(R), "-t", "1"])
    compare("n=%d |rho|>=%g" % (n, R), pairs(out + "/spearman.h5"), r, p, upper & (np.abs(r) >= R), ones)
    run([src, "-o", out, "--count-only"])
    got = pairs(out + "/spearman.h5")
    valid = upper & ~np.isnan(r)
    check(got[4]["n_pairs"] == (upper & (p <= 0.05)).sum(), "n=%d --count-only: %d pairs, scipy %d" %
          (n, got[4]["n_pairs"], (upper & (p <= 0.05)).sum()))
    check(got[4]["pairs_tested"] == valid.sum() and got[5].sum() == valid.sum(),
          "n=%d: %d pairs tested, histogram %d, expected %d" % (n, got[4]["pairs_tested"], got[5].sum(), valid.sum()))
    # The input's hash is the file's, whole, as sha256sum gives it (the
    # binary readers hash on a thread of their own, beside the parsing).
    with open(src.split(":")[0], "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    check(got[4]["input_sha256"] == digest, "n=%d (%s): input_sha256 %s, the file's %s" %
          (n, fmt, got[4]["input_sha256"], digest))
    check("fdr_cutoff_seconds" not in got[4], "n=%d --count-only: the file has fdr_cutoff_seconds" % n)
    const = int((x == x[:, :1]).all(1).sum())
    check(got[4]["constant_rows"] == const, "n=%d: constant rows %d, expected %d" % (n, got[4]["constant_rows"], const))
    # The histogram is single precision: a rho within 1e-6 of a bin edge may
    # land on either side, so the cumulative counts may differ by at most
    # the number of such values.
    want_hist, _ = np.histogram(r[valid], bins=2000, range=(-1, 1))
    rv = r[valid] * 1000
    near_edge = int((np.abs(rv - np.round(rv)) < 1e-3).sum())
    cum = np.abs(np.cumsum(got[5].astype(np.int64)) - np.cumsum(want_hist)).max()
    check(cum <= near_edge, "n=%d: histogram differs from numpy's by %d (%d values near edges)" % (n, cum, near_edge))
    # --fdr: Benjamini-Hochberg over all pairs of varying rows, computed
    # here from scipy's p-values.
    pv = p[valid]
    order = np.sort(pv)
    m = len(order)
    for Q in ([0.05, 0.3] if n in (7, 30, 128) else []):
        ks = np.nonzero(order <= np.arange(1, m + 1) * Q / m)[0]
        cut = order[ks.max()] if len(ks) else -1
        for np_ in ([1, 3] if n == 30 else [1]):
            o = os.path.join(WORK, "fdr%d" % np_)
            run([src, "-o", o, "--fdr", str(Q), "-t", "2"], np_=np_)
            got = pairs(o + "/spearman.h5")
            compare("n=%d --fdr %g np=%d" % (n, Q, np_), got, r, p, upper & (p <= cut), ones)
            check(got[4].get("fdr_cutoff_seconds", -1) >= 0, "n=%d --fdr np=%d: no fdr_cutoff_seconds" % (n, np_))
    if n == 30:
        for np_ in [1, 2, 3, 4]:
            o = os.path.join(WORK, "np%d" % np_)
            run([src, "-o", o, "--pvalue", "0.01", "-t", "1"], np_=np_)
            compare("n=30 np=%d" % np_, pairs(o + "/spearman.h5"), r, p, upper & (p <= 0.01), ones)
        # The counting pass keeps the selected pairs and writes them when
        # they fit (FD_SPEARMAN_KEEP_PAIRS of them a rank); otherwise, or
        # with 0, a second pass writes them.  The same pairs either way.
        nsel = int((upper & (p <= 0.01)).sum())
        for keep, np_, one_pass in [(None, 1, True), (None, 3, True), ("0", 1, False), ("0", 3, False),
                                    ("5", 1, False), ("5", 3, False), (str(2 * nsel), 1, True)]:
            o = os.path.join(WORK, "keep")
            res = run([src, "-o", o, "--pvalue", "0.01", "-t", "2", "--stats"], np_=np_,
                      env={"FD_SPEARMAN_KEEP_PAIRS": keep} if keep else None, quiet=False)
            name = "n=30 FD_SPEARMAN_KEEP_PAIRS=%s np=%d" % (keep, np_)
            compare(name, pairs(o + "/spearman.h5"), r, p, upper & (p <= 0.01), ones)
            check(("write (pairs kept by pass 1)" in res.stderr) == one_pass and
                  ("pass 2 (write)" in res.stderr) == (not one_pass), "%s: %s" % (name, res.stderr))

# --y: rows of one matrix against rows of another.
x, y = matrix(90, 30, 5), matrix(70, 30, 6)
write(x, os.path.join(WORK, "x.txt"))
write(y, os.path.join(WORK, "y.txt"))
r, p = oracle(x, y)
for np_ in [1, 3]:
    out = os.path.join(WORK, "xy%d" % np_)
    run([os.path.join(WORK, "x.txt"), "--y", os.path.join(WORK, "y.txt"), "-o", out, "--pvalue", "0.05"], np_=np_)
    compare("--y np=%d" % np_, pairs(out + "/spearman.h5"), r, p, p <= 0.05, exact_ones(x, y))

# --top-k: each row's K partners of largest |rho| (ties: smaller j), from
# exact integer ranks (scipy's rankdata) and exact rational comparisons.
from fractions import Fraction


def topk_oracle(x, y, K, same):
    ax = (2 * np.apply_along_axis(stats.rankdata, 1, x) - (x.shape[1] + 1)).astype(np.int64)
    ay = (2 * np.apply_along_axis(stats.rankdata, 1, y) - (y.shape[1] + 1)).astype(np.int64)
    S = ax @ ay.T
    sx, sy = (ax * ax).sum(1), (ay * ay).sum(1)
    want = set()
    for i in range(len(x)):
        if sx[i] == 0:
            continue
        cand = [j for j in range(len(y)) if sy[j] != 0 and not (same and j == i)]
        cand.sort(key=lambda j: (-Fraction(int(S[i, j]) ** 2, int(sy[j])), j))
        want |= {(i, j) for j in cand[:K]}
    return want


for K, np_ in [(1, 1), (5, 1), (5, 3), (40, 2)]:
    x = matrix(150, 30, 11)
    path = os.path.join(WORK, "tk.txt")
    write(x, path)
    out = os.path.join(WORK, "tk%d" % np_)
    run([path, "-o", out, "--top-k", str(K), "-t", "2"], np_=np_)
    got = pairs(out + "/spearman.h5")
    have = list(zip(got[0].tolist(), got[1].tolist()))
    check(len(have) == len(set(have)) and set(have) == topk_oracle(x, x, K, True),
          "--top-k %d np=%d: %d pairs, oracle %d" % (K, np_, len(have), len(topk_oracle(x, x, K, True))))
    r, p = oracle(x)
    check(np.abs(got[2] - r[got[0], got[1]]).max() <= 1e-6, "--top-k %d: rho" % K)
xs, ys = matrix(60, 30, 12), matrix(45, 30, 13)
write(xs, os.path.join(WORK, "tx.txt"))
write(ys, os.path.join(WORK, "ty.txt"))
run([os.path.join(WORK, "tx.txt"), "--y", os.path.join(WORK, "ty.txt"), "-o", os.path.join(WORK, "tkxy"), "--top-k", "3"])
got = pairs(os.path.join(WORK, "tkxy/spearman.h5"))
check(set(zip(got[0].tolist(), got[1].tolist())) == topk_oracle(xs, ys, 3, False), "--top-k 3 --y")

# --drop-nan-rows keeps the input's row numbers.
x = matrix(60, 12, 9).astype(float)
x[[4, 20]] = np.nan
path = os.path.join(WORK, "nan.txt")
np.savetxt(path, x, fmt="%g")
run([path, "-o", os.path.join(WORK, "nan")], expect=2)
run([path, "-o", os.path.join(WORK, "nan"), "--drop-nan-rows", "--pvalue", "0.05"])
keep = np.array([k for k in range(60) if k not in (4, 20)])
r, p = oracle(x[keep])
got = pairs(os.path.join(WORK, "nan/spearman.h5"))
want = {(int(keep[a]), int(keep[b])) for a, b in zip(*np.nonzero(np.triu(p <= 0.05, 1)))}
check(set(zip(got[0].tolist(), got[1].tolist())) == want, "--drop-nan-rows: pairs or row numbers differ")
check(got[4]["dropped_rows"] == 2, "--drop-nan-rows: %d dropped" % got[4]["dropped_rows"])

# --by columns: the columns are the variables, as scipy.stats.spearmanr(x)
# (axis 0) and pandas' DataFrame.corr(method="spearman") take them; the
# header names them, a name column (--row-names) names the observations;
# several ranks the same pairs.
x = matrix(40, 25, 13).T.astype(float)  # 25 observations x 40 variables, ties, a constant column
names = ["v%02d" % k for k in range(x.shape[1])]
path = os.path.join(WORK, "bycol.csv")
with open(path, "w") as f:
    f.write("obs," + ",".join(names) + "\n")
    for k, row in enumerate(x):
        f.write("o%d," % k + ",".join("%g" % v for v in row) + "\n")
r, p = stats.spearmanr(x)
for np_ in (1, 3):
    out = os.path.join(WORK, "bycol%d" % np_)
    run([path, "--by", "columns", "--row-names", "--pvalue", "0.05", "-o", out], np_=np_)
    got = pairs(os.path.join(out, "spearman.h5"))
    sel = np.triu(np.nan_to_num(p, nan=2) <= 0.05, 1)
    compare("--by columns np=%d" % np_, got, r, p, sel, exact_ones(x.T))
    with h5py.File(os.path.join(out, "spearman.h5")) as f:
        check([s.decode() for s in f["names"][:]] == names, "--by columns np=%d: /names" % np_)
    text = subprocess.run([BIN, "info", "--text", os.path.join(out, "spearman.h5")], capture_output=True, text=True).stdout
    line = text.splitlines()[0].split("\t")
    a, b = (int(v) for v in line[0].split()[:2])
    check(line[1:] == [names[a], names[b]], "--by columns: info --text names: %r" % line)
# --by rows (the default) with --row-names: the names are the rows'.
path = os.path.join(WORK, "named.txt")
with open(path, "w") as f:
    for k, row in enumerate(x.T):
        f.write("gene%d " % k + " ".join("%g" % v for v in row) + "\n")
out = os.path.join(WORK, "named")
run([path, "--row-names", "--rho", "0.5", "-o", out])
r, p = oracle(x.T)
got = pairs(os.path.join(out, "spearman.h5"))
compare("--row-names", got, r, p, np.triu(np.abs(np.nan_to_num(r)) >= 0.5, 1), exact_ones(x.T))
with h5py.File(os.path.join(out, "spearman.h5")) as f:
    check([s.decode() for s in f["names"][:]] == ["gene%d" % k for k in range(40)], "--row-names: /names")
run([path, "-o", out, "--rho", "0.5"], expect=2)  # without --row-names the names are not numbers
run([os.path.join(WORK, "bycol.csv"), "--by", "columns", "--drop-nan-rows", "--pvalue", "0.05", "-o", out], expect=2)
run([os.path.join(WORK, "bycol.csv"), "--by", "diagonals", "--pvalue", "0.05", "-o", out], expect=2)
np.save(os.path.join(WORK, "named.npy"), x)
run([os.path.join(WORK, "named.npy"), "--row-names", "--pvalue", "0.05", "-o", out], expect=2)

finish()
