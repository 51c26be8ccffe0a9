"""The CUDA spearman backend against the CPU backend: for random
zero-inflated integer matrices (n = 7, 30, 64, 90, 128, 200 observations: every
row width of the kernel, 32, 64, 96 and 128 bytes, and the fallback; heavy
ties, constant, equal and opposite rows; row counts that are not multiples
of a tile, and more than one 4,096-row record) every selection mode writes
exactly the CPU backend's pairs with bit-identical rho and p, the same
counts and the same rho histogram, on one rank and, where the machine has
two GPUs, on two.  --top-k runs on the GPU too (per-row screens feeding the
host's heaps): the same partners, ties included, with k = 1, 3 and 40, k
beyond the partners a row has, and two inputs.  n > 128 falls back to the
CPU backend, which the backend attribute must say.  --method kendall
(sign vectors of n(n-1)/2 values) at 8, 12 and 16 observations on the
int8 kernel, at 17, 25, 30 and 64 on the wide one (--top-k included);
Kendall's --pvalue and --fdr on the wide one at every width, tied and
untied rows.  --missing
pairwise on the GPU (the pairs with a NaN by a kernel of their own), but
--fdr on the CPU.
usage: gpu_spearman.py FCBO_DIST WORKDIR GPU_BACKEND GPUS"""
import os
import re
import subprocess
import sys

import h5py
import numpy as np
from spearman_testlib import ENV, check, finish, matrix

BIN, WORK, GB, GPUS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
os.makedirs(WORK, exist_ok=True)


def run(args, backend, np_=1, env=None):
    cmd = [BIN, "spearman"] + args + ["--backend", backend, "-q", "--force"]
    if np_ > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np_)] + cmd
    r = subprocess.run(cmd, env=dict(ENV, **(env or {})), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return r.returncode == 0


def load(path):
    with h5py.File(path, "r") as f:
        i, j = f["pairs/i"][:], f["pairs/j"][:]
        rho, p = f["pairs/rho"][:], f["pairs/p"][:]
        o = np.lexsort((j, i))
        hist = f["histogram"][:] if "histogram" in f else None
        return i[o], j[o], rho[o], p[o], dict(f.attrs), hist


def same(name, args, backend_expected, np_gpu=1, env=None):
    cpu, gpu = os.path.join(WORK, "cpu"), os.path.join(WORK, "gpu")
    if not (run(args + ["-o", cpu], "cpu") and run(args + ["-o", gpu], GB, np_gpu, env)):
        return
    a, b = load(cpu + "/spearman.h5"), load(gpu + "/spearman.h5")
    name = "%s (%d rank%s)" % (name, np_gpu, "s" if np_gpu > 1 else "")
    check(len(a[0]) == len(b[0]) and (a[0] == b[0]).all() and (a[1] == b[1]).all(),
          "%s: pairs differ: cpu %d, gpu %d" % (name, len(a[0]), len(b[0])))
    if len(a[0]) == len(b[0]):
        check((a[2] == b[2]).all(), "%s: rho not bit-identical (%d differ)" % (name, (a[2] != b[2]).sum()))
        check((a[3] == b[3]).all(), "%s: p not bit-identical (%d differ)" % (name, (a[3] != b[3]).sum()))
    for k in ("n_pairs", "pairs_tested", "constant_rows"):
        check(a[4][k] == b[4][k], "%s: %s cpu %s, gpu %s" % (name, k, a[4][k], b[4][k]))
    if "--no-histogram" in args:
        check(a[5] is None and b[5] is None, "%s: a histogram despite --no-histogram" % name)
    elif a[5] is not None or b[5] is not None:
        check(a[5] is not None and b[5] is not None and (a[5] == b[5]).all(), "%s: histograms differ" % name)
    be = b[4]["backend"]
    be = be.decode() if isinstance(be, bytes) else be
    want = "cpu" if GB == "cpu" else backend_expected
    check(be == want, "%s: backend attribute %s, expected %s" % (name, be, want))


def write(x, path):
    np.savetxt(path, x, fmt="%d")


for n, rows in [(7, 600), (30, 5000), (64, 1500), (90, 1100), (128, 900), (200, 300)]:
    src = os.path.join(WORK, "m%d.txt" % n)
    write(matrix(rows, n, n, far_equal=True), src)
    be = "cuda" if n <= 128 else "cpu"
    for sel in (["--pvalue", "0.05"], ["--pvalue", "1e-6"], ["--rho", "0.4123"], ["--rho", "0.5"],
                ["--count-only"], ["--count-only", "--rho", "0.3"], ["--fdr", "0.05"],
                ["--pvalue", "1e-6", "--no-histogram"], ["--count-only", "--no-histogram"],
                # --fdr's pass 1 bins x on the GPU, from |u| or from |rho|;
                # at 0.5 half the pairs are kept, and the warps' queues of
                # bins for double overflow into the closer look
                ["--fdr", "0.05", "--no-histogram"], ["--count-only", "--fdr", "0.5"]):
        same("n=%d rows=%d %s" % (n, rows, " ".join(sel)), [src] + sel, be)
    for k in ("1", "3", "40"):
        same("n=%d --top-k %s" % (n, k), [src, "--top-k", k], be)
    if GPUS >= 2 and n in (7, 30):
        for sel in (["--pvalue", "0.01"], ["--fdr", "0.05"], ["--count-only"], ["--top-k", "3"]):
            same("n=%d rows=%d %s" % (n, rows, " ".join(sel)), [src] + sel, be, np_gpu=2)

# The kernels of the rows with missing values and of Kendall's wide sign
# vectors (first passed here on an H100, 2026-12-05).
NEW = {}

# --method kendall: rows of 8, 12 and 16 observations are sign vectors of
# 28, 66 and 120 values, on the int8 tensor-core kernel; from 17
# observations (136 signs) the wide kernel (spearman_gpu_wide.cu) takes
# them, over more than one record at 30 (435 signs, 7 steps of 64 bytes)
# and at 64 (2,016); --top-k of wide rows by the host's heaps from the
# wide kernel's screen (k = 3 and, beyond a row's partners, 800).
for n, rows in [(8, 700), (12, 2100), (16, 500), (17, 300), (30, 5000), (64, 700)]:
    src = os.path.join(WORK, "k%d.txt" % n)
    write(matrix(rows, n, n, far_equal=True), src)
    for sel in (["--rho", "0.4123"], ["--count-only", "--rho", "0.6"], ["--rho", "0.2", "--no-histogram"],
                ["--top-k", "3"]):
        same("kendall n=%d rows=%d %s" % (n, rows, " ".join(sel)), [src, "--method", "kendall"] + sel, "cuda",
             env=None if n <= 16 else NEW)
    if n == 17:
        same("kendall n=17 --top-k 800", [src, "--method", "kendall", "--top-k", "800"], "cuda", env=NEW)
    if GPUS >= 2 and n == 30:
        same("kendall n=30 rows=%d" % rows, [src, "--method", "kendall", "--rho", "0.3"], "cuda", np_gpu=2, env=NEW)
kx, ky = os.path.join(WORK, "kx.txt"), os.path.join(WORK, "ky.txt")
write(matrix(700, 25, 7, far_equal=True), kx)
write(matrix(4500, 25, 8, far_equal=True), ky)
for sel in (["--rho", "0.4"], ["--count-only", "--rho", "0.25"]):
    same("kendall --y n=25 %s" % " ".join(sel), [kx, "--y", ky, "--method", "kendall"] + sel, "cuda", env=NEW)
same("kendall n=30 FD_GPU_RECORDS=64", [os.path.join(WORK, "k30.txt"), "--method", "kendall", "--rho", "0.2"], "cuda",
     env=dict(NEW, FD_GPU_RECORDS="64"))

# Kendall's --pvalue and --fdr on the GPU at every width (the wide
# kernel, also below 17 observations): each pair's p from both rows'
# ties, decided (and, in --fdr's first pass, binned) on the GPU where
# double settles it, else by the host.  Tied rows (the zero-inflated
# matrices: the normal branch with tie-corrected variance), rows without
# ties (the verdict and p tabled by |S|: the exact branch at 12
# observations, the normal one at 40, with equal and opposite rows whose
# discordant pairs number 0), and rows of both kinds at 20; --y; a pair
# buffer that must grow.
for n, sels in [(8, [["--pvalue", "0.01"], ["--fdr", "0.1"]]),
                (12, [["--pvalue", "0.01"], ["--pvalue", "1e-6"], ["--fdr", "0.05"]]),
                (16, [["--pvalue", "0.05", "--no-histogram"], ["--count-only", "--fdr", "0.05"]]),
                (30, [["--pvalue", "0.01"], ["--pvalue", "1e-8"], ["--fdr", "0.05"]]), (64, [["--pvalue", "1e-3"]])]:
    for sel in sels:
        same("kendall n=%d %s" % (n, " ".join(sel)), [os.path.join(WORK, "k%d.txt" % n), "--method", "kendall"] + sel,
             "cuda")
rng_k = np.random.default_rng(11)
for n, rows in [(12, 2000), (40, 1500), (20, 3000)]:
    z = rng_k.normal(size=(rows, n))
    z[10] = z[11]
    z[12] = -z[13]
    if n == 20:
        z[::2] = np.round(z[::2])  # every other row tied
    src = os.path.join(WORK, "ku%d.txt" % n)
    np.savetxt(src, z, fmt="%.17g")
    for sel in (["--pvalue", "0.05"], ["--pvalue", "1e-4"], ["--fdr", "0.05"], ["--fdr", "0.5", "--no-histogram"]):
        same("kendall untied n=%d %s" % (n, " ".join(sel)), [src, "--method", "kendall"] + sel, "cuda")
for sel in (["--pvalue", "0.01"], ["--fdr", "0.05"]):
    same("kendall --y n=25 %s" % " ".join(sel), [kx, "--y", ky, "--method", "kendall"] + sel, "cuda")
same("kendall n=30 --pvalue 0.2 FD_GPU_RECORDS=64", [os.path.join(WORK, "k30.txt"), "--method", "kendall", "--pvalue",
                                                     "0.2"], "cuda", env={"FD_GPU_RECORDS": "64"})
same("kendall n=20 --fdr 0.2 FD_GPU_RECORDS=64", [os.path.join(WORK, "ku20.txt"), "--method", "kendall", "--fdr",
                                                  "0.2"], "cuda", env={"FD_GPU_RECORDS": "64"})
if GPUS >= 2:
    for sel in (["--pvalue", "0.01"], ["--fdr", "0.05"]):
        same("kendall n=20 %s" % " ".join(sel), [os.path.join(WORK, "ku20.txt"), "--method", "kendall"] + sel, "cuda",
             np_gpu=2)

# --missing pairwise: the pairs with a row that misses a value run on the
# GPU too (spearman_gpu_missing.cu), re-ranked over their common columns:
# NaN in 1%, 20% and 70% of the values (pairs of fewer than 3 common
# columns, rows left constant over them), rows that miss nothing but vary
# or not, over more than one 4,096-row record at 20 values; --top-k takes
# them on the host, and so does --fdr (each pair's p its key) with the
# incomplete pairs, while the GPU bins and selects the complete rows'
# pairs by x at the full n (spearman_sel_p).
rng = np.random.default_rng(5)
for n, rows, frac in [(20, 800, 0.01), (20, 5000, 0.2), (7, 600, 0.7), (30, 900, 0.2), (128, 300, 0.2)]:
    x = matrix(rows, n, n, far_equal=True).astype(float)
    x[rng.random(x.shape) < frac] = np.nan
    src = os.path.join(WORK, "pw%d_%d.txt" % (n, rows))
    np.savetxt(src, x, fmt="%g")
    for sel in (["--pvalue", "0.01"], ["--pvalue", "1e-6"], ["--rho", "0.4123"], ["--count-only"],
                ["--count-only", "--rho", "0.3"], ["--pvalue", "0.05", "--no-histogram"], ["--top-k", "3"]):
        same("pairwise n=%d rows=%d %g NaN %s" % (n, rows, frac, " ".join(sel)),
             [src, "--missing", "pairwise"] + sel, "cuda", env=NEW)
    for q in ("0.05", "0.3"):
        same("pairwise n=%d %g NaN --fdr %s" % (n, frac, q), [src, "--missing", "pairwise", "--fdr", q], "cuda", env=NEW)
    if GPUS >= 2 and n == 20:
        for sel in (["--pvalue", "0.01"], ["--fdr", "0.05"]):
            same("pairwise n=%d rows=%d %s" % (n, rows, " ".join(sel)), [src, "--missing", "pairwise"] + sel, "cuda",
                 np_gpu=2, env=NEW)
src = os.path.join(WORK, "pw20_800.txt")
same("pairwise FD_GPU_RECORDS=64", [src, "--missing", "pairwise", "--pvalue", "0.05"], "cuda",
     env=dict(NEW, FD_GPU_RECORDS="64"))
x = matrix(800, 20, 20, far_equal=True).astype(float)
np.savetxt(os.path.join(WORK, "pw_full.txt"), x, fmt="%g")
same("pairwise, no NaN", [os.path.join(WORK, "pw_full.txt"), "--missing", "pairwise", "--pvalue", "0.01"], "cuda")
# --y: NaN on both sides, and on one side only
x, y = matrix(700, 30, 5).astype(float), matrix(4500, 30, 6).astype(float)
y[rng.random(y.shape) < 0.1] = np.nan
np.savetxt(os.path.join(WORK, "pwy.txt"), y, fmt="%g")
np.savetxt(os.path.join(WORK, "pwx.txt"), x, fmt="%g")
x[rng.random(x.shape) < 0.1] = np.nan
np.savetxt(os.path.join(WORK, "pwx2.txt"), x, fmt="%g")
for xs in ("pwx.txt", "pwx2.txt"):
    for sel in (["--pvalue", "0.05"], ["--count-only"]):
        same("pairwise --y %s %s" % (xs, " ".join(sel)), [os.path.join(WORK, xs), "--y", os.path.join(WORK, "pwy.txt"),
             "--missing", "pairwise"] + sel, "cuda", env=NEW)

# The tuning knobs give the same results: a strip of one column tile, and
# strips that end inside a row; each screen of the common path alone (the
# default chooses per launch); a pair buffer of 64 pairs at first, which
# launches with more grow (--top-k: per row tile).  Each takes effect, and
# a bad value is refused.
m30, m7 = os.path.join(WORK, "m30.txt"), os.path.join(WORK, "m7.txt")
for env in ({"FD_GPU_STRIP": "1"}, {"FD_GPU_STRIP": "3"}, {"FD_GPU_SCREEN": "band"}, {"FD_GPU_SCREEN": "max"},
            {"FD_GPU_RECORDS": "64"}):
    knob = " ".join("%s=%s" % kv for kv in env.items())
    for src in (m30, m7):
        for sel in (["--pvalue", "0.05"], ["--pvalue", "1e-6"], ["--count-only"], ["--fdr", "0.05"], ["--top-k", "2"]):
            same("%s %s %s" % (os.path.basename(src), knob, " ".join(sel)), [src] + sel, "cuda", env=env)

# --top-k with more wanted than a row has partners (its heap never fills,
# so its screen lets every pair through to the end).
small = os.path.join(WORK, "small.txt")
write(matrix(150, 30, 9, far_equal=True), small)
same("150 rows --top-k 200", [small, "--top-k", "200"], "cuda")
if GB != "cpu":
    cmd = [BIN, "spearman", m30, "--count-only", "--backend", GB, "--force", "-o", os.path.join(WORK, "knob")]
    def verbose(env, sel=None):
        c = cmd if sel is None else cmd[:3] + sel + cmd[4:]
        r = subprocess.run(c, env=dict(ENV, FD_GPU_VERBOSE="1", **env), capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        m = re.search(r"(\d+) launches \((\d+) repeated for a larger pair buffer, (\d+) with the max screen\)",
                      r.stderr)
        check(r.returncode == 0 and m is not None, "%s: exit %d: %s" % (env, r.returncode, r.stderr.strip()))
        return r.stderr, (int(m.group(1)), int(m.group(3))) if m else (0, -1), int(m.group(2)) if m else 0
    err, _, _ = verbose({"FD_GPU_STRIP": "3"})
    check("a strip of 3 column tiles" in err, "FD_GPU_STRIP=3 not in effect: %s" % err)
    # --fdr's pass 1 runs strips XSTRIP = 2 times as long, and says so
    err, _, _ = verbose({"FD_GPU_STRIP": "3"}, ["--fdr", "0.05"])
    check(re.search(r"a strip of 3 column tiles a block \(6 in the [1-9]\d* launches of --fdr's pass 1\)", err),
          "FD_GPU_STRIP=3 --fdr: %s" % err)
    _, (n, nmax), _ = verbose({"FD_GPU_SCREEN": "max"})
    check(n > 0 and nmax == n, "FD_GPU_SCREEN=max: %d of %d launches with the max screen" % (nmax, n))
    _, (n, nmax), _ = verbose({"FD_GPU_SCREEN": "band"})
    check(n > 0 and nmax == 0, "FD_GPU_SCREEN=band: %d of %d launches with the max screen" % (nmax, n))
    for sel in (["--pvalue", "0.05"], ["--top-k", "2"]):
        _, _, again = verbose({"FD_GPU_RECORDS": "64"}, sel)
        check(again > 0, "FD_GPU_RECORDS=64 %s: no launch grew the pair buffer" % " ".join(sel))
    for env in ({"FD_GPU_STRIP": "0"}, {"FD_GPU_STRIP": "x"}, {"FD_GPU_STRIP": "65537"}, {"FD_GPU_SCREEN": "fast"},
                {"FD_GPU_RECORDS": "0"}, {"FD_GPU_RECORDS": "-5"}):
        r = subprocess.run(cmd, env=dict(ENV, **env), capture_output=True, text=True, stdin=subprocess.DEVNULL)
        name = list(env)[0]
        check(r.returncode == 2 and name in r.stderr, "%s: exit %d: %s" % (env, r.returncode, r.stderr.strip()))

# --fdr where nearly every pair is kept (rows of one common profile plus
# noise): every lane stages more keeps of a half in pass 1 than it holds
# (16, or 8 for rows of 97 to 128 values), so the closer look bins the
# half's keeps itself; with --fdr 0.5 above on random rows, some halves do
# and some do not.
rng = np.random.default_rng(11)
for n in (30, 100):
    common = os.path.join(WORK, "common%d.txt" % n)
    write(rng.integers(0, 40, n)[None, :] + rng.integers(0, 12, (700, n)), common)
    for sel in (["--fdr", "0.05"], ["--count-only", "--fdr", "0.05"], ["--fdr", "0.05", "--no-histogram"]):
        same("common profile n=%d %s" % (n, " ".join(sel)), [common] + sel, "cuda")

# --y: a rectangle of pairs, rows of one matrix against rows of another.
x, y = matrix(700, 30, 5, far_equal=True), matrix(4500, 30, 6, far_equal=True)
write(x, os.path.join(WORK, "x.txt"))
write(y, os.path.join(WORK, "y.txt"))
for sel in (["--pvalue", "0.05"], ["--count-only"], ["--top-k", "5"]):
    same("--y %s" % " ".join(sel), [os.path.join(WORK, "x.txt"), "--y", os.path.join(WORK, "y.txt")] + sel, "cuda")
    if GPUS >= 2:
        same("--y %s" % " ".join(sel), [os.path.join(WORK, "x.txt"), "--y", os.path.join(WORK, "y.txt")] + sel,
             "cuda", np_gpu=2)

finish("%d checks, %d failed")
