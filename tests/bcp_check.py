"""fcbo-dist bcp against independent oracles:
 - synthetic rank-5 tensors of order 3 and 4 at 20 dB (gen tensor, whose
   true factors and SNR are checked first), started at rank 15 from the SVD
   and from random factors: rank 5 found, factor match score (Acar and
   Kolda, best permutation) >= 0.99 against the true factors, fit within
   1e-3 of TensorLy's parafac at rank 5 (where TensorLy is installed);
 - the shared amino-acid tensor (5 x 201 x 61): rank 3 found from 10, fit
   >= 0.97;
 - the lower bound never decreases between sweeps of the same rank;
 - .npy and HDF5 inputs give the same result; --nonneg gives non-negative
   factors;
 - 2, 3 and 4 ranks (process grids over the modes, blocks read from HDF5
   and .npy) agree with one rank to 1e-10 on the factors (matched, signs
   aligned) after 200 sweeps, on two tensors, one whose grids split a
   mode the SVD start uses;
 - --fuse (grid PARAFAC) on both tensors: FMS >= 0.98, fit within 2e-3 of
   the whole tensor's, the same bits on 2 ranks;
 - bad input (2 modes, NaN, a missing dataset, integers, more ranks than
   slices, a --fuse grid that does not fit): exit 2, a message naming
   the file, nothing written.
usage: bcp_check.py FCBO_DIST WORKDIR SHARED"""
import hashlib
import os
import subprocess
import sys

import h5py
import numpy as np
from scipy.optimize import linear_sum_assignment
import testlib
from bcp_testlib import factor_diff
from testlib import check

BIN, WORK, SHARED = sys.argv[1], sys.argv[2], sys.argv[3]
ENV = testlib.ENV
os.makedirs(WORK, exist_ok=True)
try:
    import tensorly as tl
    from tensorly.decomposition import parafac
except ImportError:
    tl = None
    print("note: TensorLy is not installed: the fit comparisons are skipped")


def run(args, expect=0, launch=()):
    cmd = list(launch) + [BIN, "bcp"] + args
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    check(r.returncode == expect, "%s: exit %d, expected %d: %s" % (" ".join(cmd), r.returncode, expect, r.stderr.strip()))
    return r


def load(d):
    with h5py.File(os.path.join(d, "bcp.h5"), "r") as f:
        n = int(f.attrs["order"])
        return {"attrs": testlib.attrs(f), "A": [f["factors/A%d" % (k + 1)][:] for k in range(n)],
                "lb": f["trace/lower_bound"][:], "rank": f["trace/rank"][:], "fit": f["trace/fit"][:],
                "lambda": f["lambda"][:]}


def fms(A, B):
    """Acar-Kolda factor match score: per matched pair of components, the
    product over modes of the cosines times a penalty for the weights'
    difference, averaged over the larger rank; the best matching."""
    C = np.ones((A[0].shape[1], B[0].shape[1]))
    for a, b in zip(A, B):
        C *= np.abs((a / np.linalg.norm(a, axis=0)).T @ (b / np.linalg.norm(b, axis=0)))
    wa = np.prod([np.linalg.norm(a, axis=0) for a in A], axis=0)
    wb = np.prod([np.linalg.norm(b, axis=0) for b in B], axis=0)
    S = (1 - np.abs(wa[:, None] - wb[None, :]) / np.maximum(wa[:, None], wb[None, :])) * C
    r, c = linear_sum_assignment(-S)
    return S[r, c].sum() / max(C.shape)


def monotone(res, name):
    lb, rk = res["lb"], res["rank"]
    same = rk[1:] == rk[:-1]
    drops = (np.diff(lb) < -1e-9 * np.abs(lb[1:])) & same
    check(not drops.any(), "%s: the bound fell at sweeps %s" % (name, np.nonzero(drops)[0] + 1))


def tensorly_fit(X, R):
    cp = parafac(tl.tensor(X), rank=R, init="svd", n_iter_max=2000, tol=1e-12)
    return 1 - np.linalg.norm(X - tl.cp_to_tensor(cp)) / np.linalg.norm(X)


for shape, seed in (("20x30x25", 3), ("15x20x12x18", 7)):
    h5 = os.path.join(WORK, "t%s.h5" % shape)
    npy = os.path.join(WORK, "t%s.npy" % shape)
    for path in (h5, npy):
        subprocess.run([BIN, "gen", "tensor", "--shape", shape, "--rank", "5", "--snr", "20", "--seed", str(seed), "-o",
                        path], env=ENV, check=True)
    with h5py.File(h5, "r") as f:
        X = f["tensor"][:]
        truth = [f["factors/A%d" % (k + 1)][:] for k in range(X.ndim)]
    check(list(X.shape) == [int(v) for v in shape.split("x")], "gen tensor: shape %s" % (X.shape,))
    T = truth[0]
    for k in range(1, X.ndim):  # the noiseless tensor, from the true factors
        T = np.einsum("...r,kr->...kr", T, truth[k])
    T = T.sum(-1)
    snr = 10 * np.log10((T ** 2).mean() / ((X - T) ** 2).mean())
    check(abs(snr - 20) < 0.5, "gen tensor %s: SNR %.2f dB" % (shape, snr))
    check(np.array_equal(np.load(npy), X), "gen tensor %s: .npy and .h5 differ" % shape)
    ref = tensorly_fit(X, 5) if tl else None
    for init in ("svd", "random"):
        name = "%s --init %s" % (shape, init)
        out = os.path.join(WORK, "o_%s_%s" % (shape, init))
        run([h5 + ":/tensor", "--rank", "15", "--init", init, "-o", out, "-q"])
        res = load(out)
        check(res["attrs"]["rank"] == 5, "%s: rank %d" % (name, res["attrs"]["rank"]))
        check(res["attrs"]["converged"] == 1, "%s: not converged in %d sweeps" % (name, res["attrs"]["iterations"]))
        score = fms(truth, res["A"])
        check(score >= 0.99, "%s: FMS %.4f" % (name, score))
        if ref is not None:
            check(abs(res["attrs"]["fit"] - ref) <= 1e-3, "%s: fit %.6f, TensorLy %.6f" % (name, res["attrs"]["fit"], ref))
        monotone(res, name)
    # Threads: bit for bit the same (each row of the MTTKRP sums in order).
    out = os.path.join(WORK, "o_t3")
    run([h5 + ":/tensor", "--rank", "15", "-t", "3", "-o", out, "-q", "--force"])
    a, b = load(out), load(os.path.join(WORK, "o_%s_svd" % shape))
    check(all(np.array_equal(x, y) for x, y in zip(a["A"], b["A"])), "%s: -t 3 differs from the default" % shape)
    # The same tensor as .npy: the same factors.
    out = os.path.join(WORK, "o_npy")
    run([npy, "--rank", "15", "-o", out, "-q", "--force"])
    a, b = load(out), load(os.path.join(WORK, "o_%s_svd" % shape))
    check(all(np.array_equal(x, y) for x, y in zip(a["A"], b["A"])), "%s: .npy and .h5 inputs differ" % shape)

# Many ranks: each reads its block of a process grid; after enough sweeps
# to reach the fixed point (--tol 0), the factors agree with one rank's to
# 1e-10 once components are matched and signs aligned, from HDF5 and .npy.


t4 = os.path.join(WORK, "t15x20x12x18.h5")
t4npy = os.path.join(WORK, "t15x20x12x18.npy")
# 6 x 50 x 8 x 40: the grids split the 50 (and the 40), so the SVD start
# of a split mode needs the other ranks' rows; without them 2 ranks found
# rank 3 at fit 0.67 where 1 rank finds 5 at 0.90.
t6 = os.path.join(WORK, "t6x50x8x40.h5")
subprocess.run([BIN, "gen", "tensor", "--shape", "6x50x8x40", "--rank", "5", "--seed", "11", "-o", t6], env=ENV,
               check=True)
for series in (((1, t4 + ":/tensor"), (2, t4 + ":/tensor"), (3, t4npy), (4, t4 + ":/tensor"), (4, t4npy)),
               ((1, t6 + ":/tensor"), (2, t6 + ":/tensor"), (3, t6 + ":/tensor"), (4, t6 + ":/tensor"))):
    one = None
    for nranks, spec in series:
        out = os.path.join(WORK, "np%d" % nranks)
        launch = ("mpirun", "--oversubscribe", "-np", str(nranks)) if nranks > 1 else ()
        r = run([spec, "--rank", "15", "--tol", "0", "--max-iter", "200", "-o", out, "--force"], launch=launch)
        res = load(out)
        if one is None:
            one = res
            continue
        name = "np %d (%s)" % (nranks, os.path.basename(spec))
        check("%d ranks (grid" % nranks in r.stderr, "%s: no grid in the summary: %s" % (name, r.stderr.strip()))
        d = factor_diff(one["A"], res["A"])
        check(d <= 1e-10, "%s: factors differ from one rank's by %g" % (name, d))
        check(abs(res["attrs"]["fit"] - one["attrs"]["fit"]) <= 1e-12, "%s: fit %r against %r" % (
            name, res["attrs"]["fit"], one["attrs"]["fit"]))
with h5py.File(os.path.join(WORK, "tiny.h5"), "w") as f:
    f["x"] = np.random.default_rng(1).normal(size=(2, 2, 2))
r = run([os.path.join(WORK, "tiny.h5:/x")], expect=2, launch=("mpirun", "--oversubscribe", "-np", "3"))
check("3 ranks: more than the tensor's slices" in r.stderr, "np 3 on 2 x 2 x 2: %s" % r.stderr.strip())

# --fuse (grid PARAFAC): the sub-tensors fitted alone and fused; FMS >=
# 0.98 against the true factors, the fit within 2e-3 of the whole
# tensor's; 2 ranks give the same bits (each sub-tensor is fitted alone
# either way); a grid that does not fit the tensor is refused.
for shape, grid in (("20x30x25", "2x3x2"), ("15x20x12x18", "2x2x2x2")):
    h5 = os.path.join(WORK, "t%s.h5" % shape)
    with h5py.File(h5, "r") as f:
        truth = [f["factors/A%d" % (k + 1)][:] for k in range(len(f["tensor"].shape))]
    out = os.path.join(WORK, "fuse_%s" % shape)
    run([h5 + ":/tensor", "--rank", "5", "--fuse", grid, "-o", out, "--force", "-q"])
    res = load(out)
    whole = load(os.path.join(WORK, "o_%s_svd" % shape))
    score = fms(truth, res["A"])
    check(score >= 0.98, "--fuse %s on %s: FMS %.4f" % (grid, shape, score))
    check(abs(res["attrs"]["fit"] - whole["attrs"]["fit"]) <= 2e-3, "--fuse %s on %s: fit %.5f, the whole tensor's %.5f" % (
        grid, shape, res["attrs"]["fit"], whole["attrs"]["fit"]))
    check(res["attrs"]["fuse"] == grid, "--fuse: the file says %r" % res["attrs"].get("fuse"))
    out2 = os.path.join(WORK, "fuse2_%s" % shape)
    run([h5 + ":/tensor", "--rank", "5", "--fuse", grid, "-o", out2, "--force", "-q"],
        launch=("mpirun", "--oversubscribe", "-np", "2"))
    check(all(np.array_equal(x, y) for x, y in zip(res["A"], load(out2)["A"])), "--fuse %s: 2 ranks differ" % grid)
for grid, want in (("2x2", "--fuse gives 2 modes"), ("2x0x2", "expected parts"), ("2x99x2", "99 parts of mode 2")):
    badf = os.path.join(WORK, "badfuse")
    r = run([os.path.join(WORK, "t20x30x25.h5:/tensor"), "--fuse", grid, "-o", badf], expect=2)
    check(want in r.stderr and not os.path.exists(badf), "--fuse %s: %s" % (grid, r.stderr.strip()))

# info: the summary and the factors as text.
o3 = os.path.join(WORK, "o_20x30x25_svd")
r = subprocess.run([BIN, "info", os.path.join(o3, "bcp.h5")], env=ENV, capture_output=True, text=True)
check(r.returncode == 0 and "rank:        5 (from 15" in r.stdout, "info: %s %s" % (r.stdout, r.stderr))
r = subprocess.run([BIN, "info", "--text", os.path.join(o3, "bcp.h5")], env=ENV, capture_output=True, text=True)
rows = [l.split() for l in r.stdout.splitlines() if not l.startswith("#")]
A1 = load(o3)["A"][0]
check(len(rows) == 20 + 30 + 25 and np.allclose([float(v) for v in rows[0][2:]], A1[0], rtol=1e-15),
      "info --text: %d rows" % len(rows))

amino = os.path.join(SHARED, "data", "tensor", "amino.h5")
if os.path.exists(amino):
    out = os.path.join(WORK, "amino")
    run([amino + ":/X", "--rank", "10", "-o", out, "-q"])
    res = load(out)
    check(res["attrs"]["rank"] == 3 and res["attrs"]["fit"] >= 0.97,
          "amino: rank %d, fit %.4f" % (res["attrs"]["rank"], res["attrs"]["fit"]))
    monotone(res, "amino")
    out = os.path.join(WORK, "amino_nn")
    run([amino + ":/X", "--rank", "10", "--nonneg", "-o", out, "-q"])
    res = load(out)
    check(all((a >= 0).all() for a in res["A"]) and res["attrs"]["fit"] >= 0.9,
          "amino --nonneg: negative factors or fit %.4f" % res["attrs"]["fit"])
else:
    print("note: %s is absent: the amino checks are skipped" % amino)

# Bad input: exit 2, the file named, nothing written.
bad = os.path.join(WORK, "bad")
cases = {}
np.save(os.path.join(WORK, "two.npy"), np.ones((4, 5)))
cases["two.npy"] = "2 modes"
Y = np.ones((3, 4, 5))
Y[1, 2, 3] = np.nan
np.save(os.path.join(WORK, "nan.npy"), Y)
cases["nan.npy"] = "element (1, 2, 3) is nan"
np.save(os.path.join(WORK, "int.npy"), np.ones((3, 4, 5), dtype=np.int32))
cases["int.npy"] = "dtype '<i4'"
with h5py.File(os.path.join(WORK, "t.h5"), "w") as f:
    f["x"] = np.ones((3, 4, 5))
    f["i"] = np.ones((3, 4, 5), dtype=np.int64)
cases["t.h5:/nope"] = "no dataset '/nope'"
cases["t.h5:/i"] = "not floating point"
cases["missing.npy"] = "cannot open"
# Found by tests/fuzz: a header that promises more values than the file
# holds is refused before anything is allocated for them.
np.save(os.path.join(WORK, "short.npy"), np.ones((3, 4, 5)))
with open(os.path.join(WORK, "short.npy"), "r+b") as f:
    f.truncate(os.path.getsize(os.path.join(WORK, "short.npy")) - 8)
cases["short.npy"] = "truncated: the header promises 480 bytes of values, the file holds 472"
for spec, want in cases.items():
    r = run([os.path.join(WORK, spec), "-o", bad], expect=2)
    check(want in r.stderr, "%s: no '%s' in: %s" % (spec, want, r.stderr.strip()))
    check(not os.path.exists(bad), "%s: %s was left behind" % (spec, bad))
r = run([os.path.join(WORK, "nan.npy"), "-o", bad], expect=2, launch=("mpirun", "--oversubscribe", "-np", "2"))
check("is nan" in r.stderr and not os.path.exists(bad), "nan.npy under 2 ranks: %s" % r.stderr.strip())

# The threaded reader (a tensor that is one run of its file, read in
# chunks of 2^17 elements on -t threads, each checked as it comes): the
# bad element named is the first in C order whatever the threads, in
# .npy, float32 .npy and a contiguous HDF5 dataset, and a chunked HDF5
# dataset (H5Dread) says the same; the values themselves read alike in
# all four (the same factors and file hash as sha256sum's).
big = np.random.default_rng(3).normal(size=(40, 60, 120))  # 288,000 elements: 3 chunks
big[39, 59, 100] = np.inf  # last chunk
big[30, 10, 7] = -np.inf   # second chunk: the first in C order
specs = ("big.npy", "big32.npy", "bigc.h5:/x", "bigk.h5:/x")


def write_big(big):
    """big in the four layouts of specs: float64 and float32 .npy, a
    contiguous and a chunked HDF5 dataset."""
    np.save(os.path.join(WORK, "big.npy"), big)
    np.save(os.path.join(WORK, "big32.npy"), big.astype(np.float32))
    with h5py.File(os.path.join(WORK, "bigc.h5"), "w") as f:
        f["x"] = big
    with h5py.File(os.path.join(WORK, "bigk.h5"), "w") as f:
        f.create_dataset("x", data=big, chunks=(4, 60, 120))


write_big(big)
for spec in specs:
    for t in ("1", "2"):
        r = run([os.path.join(WORK, spec), "-o", bad, "-t", t], expect=2)
        check("element (30, 10, 7) is -inf" in r.stderr and not os.path.exists(bad),
              "%s -t %s: %s" % (spec, t, r.stderr.strip()))
big[30, 10, 7] = big[39, 59, 100] = 0.5
write_big(big)
got = {}
for spec in specs:
    for t in ("1", "2"):
        out = os.path.join(WORK, "rd_%s_%s" % (spec.split(".")[0], t))
        r = run([os.path.join(WORK, spec), "--rank", "3", "--max-iter", "3", "-t", t, "-o", out, "-q", "--force"])
        got[spec, t] = load(out)
        with h5py.File(os.path.join(out, "bcp.h5")) as f:
            sha = f.attrs["input_sha256"]
            sha = sha.decode() if isinstance(sha, bytes) else sha
        want = hashlib.sha256(open(os.path.join(WORK, spec.split(":")[0]), "rb").read()).hexdigest()
        check(sha == want, "%s -t %s: input_sha256 %s, sha256sum %s" % (spec, t, sha, want))
for (spec, t), res in got.items():
    ref = got["big32.npy" if spec == "big32.npy" else "bigk.h5:/x", "1"]
    check(all(np.array_equal(x, y) for x, y in zip(res["A"], ref["A"])), "%s -t %s: other factors" % (spec, t))
for args, want in ((["--rank", "0"], "--rank"), (["--init", "pca"], "--init"), (["--starts", "0"], "--starts"),
                   (["--threads", "0"], "--threads"), (["--backend", "nope"], "backend 'nope'"),
                   # found by tests/fuzz: strtoull took a sign or a space (" -5" was 2^64 - 5)
                   (["--rank", " 5"], "is not a non-negative integer"), (["--seed", "-5"], "is not a non-negative integer")):
    r = run([os.path.join(WORK, "t.h5:/x")] + args, expect=2)
    check(want in r.stderr, "%s: %s" % (args, r.stderr.strip()))
r = subprocess.run([BIN, "gen", "tensor", "--shape", "4x5", "--rank", "2", "-o", os.path.join(WORK, "g.h5")],
                   env=ENV, capture_output=True, text=True)
check(r.returncode == 2 and not os.path.exists(os.path.join(WORK, "g.h5")), "gen tensor --shape 4x5: %d" % r.returncode)
r = subprocess.run([BIN, "gen", "tensor", "--shape", "4x0x5", "--rank", "2", "-o", os.path.join(WORK, "g.h5")],
                   env=ENV, capture_output=True, text=True)
check(r.returncode == 2 and "expected positive sizes" in r.stderr and not os.path.exists(os.path.join(WORK, "g.h5")),
      "gen tensor --shape 4x0x5: %d %s" % (r.returncode, r.stderr.strip()))
r = subprocess.run([BIN, "gen", "tensor", "--shape", "4x5x", "--rank", "2", "-o", os.path.join(WORK, "g.h5")],
                   env=ENV, capture_output=True, text=True)
check(r.returncode == 2 and "expected positive sizes" in r.stderr and not os.path.exists(os.path.join(WORK, "g.h5")),
      "gen tensor --shape 4x5x (found by tests/fuzz): %d %s" % (r.returncode, r.stderr.strip()))
# --starts: each start's end in /starts, the kept model the one of the
# best lower bound, and the summary names it; one start writes no /starts.
ts = os.path.join(WORK, "starts.h5")
subprocess.run([BIN, "gen", "tensor", "--shape", "30x25x20", "--rank", "3", "--seed", "21", "-o", ts], env=ENV,
               check=True, capture_output=True)
out = os.path.join(WORK, "starts")
r = run([ts + ":/tensor", "--rank", "8", "--starts", "3", "-o", out, "--force"])
with h5py.File(os.path.join(out, "bcp.h5"), "r") as f:
    a = testlib.attrs(f)
    lb, fit, rk, sw = (f["starts/" + k][:] for k in ("lower_bound", "fit", "rank", "sweeps"))
    best = int(np.argmax(lb))
    check(a["starts"] == 3 and len(lb) == 3 and a["best_start"] == best, "--starts: %s, bounds %s" % (a.get("starts"), lb))
    check(lb[best] == a["lower_bound"] and fit[best] == a["fit"] and rk[best] == a["rank"] and sw[best] == a["iterations"],
          "--starts: the kept model is not the best start's")
check("3 starts: best lower bound" in r.stderr and "(kept)" in r.stderr, "--starts summary: %s" % r.stderr.strip())
run([ts + ":/tensor", "--rank", "8", "-o", out, "--force"])
with h5py.File(os.path.join(out, "bcp.h5"), "r") as f:
    check("starts" not in f and "starts" not in f.attrs, "one start wrote /starts")
testlib.finish()
