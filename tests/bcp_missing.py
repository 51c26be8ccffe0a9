"""fcbo-dist bcp with missing entries (--missing, --mask) against what the
data were made from: rank-3 (order 3) and rank-2 (order 4) tensors from
`gen tensor` at 20 dB with 30, 50 and 70% of the entries missing at
random, started at rank 8, 3 starts (the SVD's and two random ones;
the highest lower bound kept):
 - the true rank is found;
 - the error on the held-out (missing) entries is within 25% of the
   noise's sd (the best any estimate can do is near the noise), and no
   worse than 1.1 times TensorLy's masked CP-ALS at the true rank (where
   TensorLy is installed);
 - /completed is the model's tensor (the factors' sum of products);
 - --predict-at (the missing entries' indices, .npy of int64 or text)
   gives /completed's bits at them, in the file's order; on a complete
   tensor over 2 ranks it is the factors' model there;
 - over 2 and 3 ranks the fit with missing entries has one rank's bits
   (factors, lambda, the traces, the starts, /completed, /predictions);
 - --nonneg: a non-negative rank-3 tensor half missing gives non-negative
   factors, rank 3 and a held-out error within 5% of the noise, the same
   bits on 2 ranks;
 - the lower bound never decreases between sweeps of the same rank;
 - --fuse with missing entries (NaN, a mask; 1 and 2 ranks): rank 3, the
   held-out error near the noise, the fit over the observed entries;
 - the rank checked by the bound: rank-5 50^3 tensors, 30 and 70%
   missing, which the sweeps leave at rank 6 and 7, end at rank 5 with
   a higher bound (and one component fewer would lower it), the held-out
   error within 5% of the noise's sd;
 - a --mask (HDF5 uint8, .npy bool) over the full tensor gives the same
   bits as NaN at the same entries, and 1 and 2 threads the same bits;
 - refusals, exit 2, nothing written: NaN without --missing, an
   infinity, a mask of another shape or of int32, a mask that is not
   there, every entry missing, a --fuse sub-tensor with nothing observed; --predict-at
   files of another width, an index outside the tensor, negative or not
   an integer, no rows; and `info` refuses a result whose /completed is
   not of its dims, or whose /predictions do not agree.
usage: bcp_missing.py FCBO_DIST WORKDIR"""
import os
import re
import sys

import h5py
import numpy as np

from testlib import check, fcbo, finish

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
try:
    import tensorly as tl
    from tensorly.decomposition import parafac
except ImportError:
    tl = None


def run(*args, ranks=1):
    return fcbo(BIN, *args, ranks=ranks)


def factors(path):
    with h5py.File(path) as f:
        return [f["factors/A%d" % (n + 1)][:] for n in range(int(f.attrs["order"]))]


def model(A):
    letters = "ijkl"[:len(A)]
    return np.einsum(",".join(l + "r" for l in letters) + "->" + letters, *A)


for shape, rank, frac, seed in [("30x25x20", 3, 0.3, 4), ("30x25x20", 3, 0.5, 5), ("30x25x20", 3, 0.7, 6),
                                ("14x12x10x9", 2, 0.5, 7)]:
    what = "%s rank %d, %d%% missing" % (shape, rank, round(frac * 100))
    t = os.path.join(WORK, "t%d.h5" % seed)
    run("gen", "tensor", "--shape", shape, "--rank", rank, "--snr", 20, "--seed", seed, "-o", t)
    with h5py.File(t) as f:
        X = f["tensor"][:]
        T = model([f["factors/A%d" % (n + 1)][:] for n in range(X.ndim)])
    noise = (X - T).std()
    M = np.random.default_rng(seed).random(X.shape) < frac  # missing
    Y = X.copy()
    Y[M] = np.nan
    y = os.path.join(WORK, "y%d.npy" % seed)
    np.save(y, Y)
    out = os.path.join(WORK, "o%d" % seed)
    # The missing entries, shuffled (the file's order is kept), as .npy or
    # as text (the order-4 case).
    at_idx = np.random.default_rng(seed).permutation(np.argwhere(M))
    at = os.path.join(WORK, "at%d.%s" % (seed, "txt" if X.ndim == 4 else "npy"))
    if X.ndim == 4:
        np.savetxt(at, at_idx, fmt="%d")
    else:
        np.save(at, at_idx)
    r = run("bcp", y, "--missing", "--rank", 8, "--starts", 3, "--completed", "--predict-at", at, "-o", out, "--force",
            "-t", 2)
    check(r.returncode == 0, "%s: exit %d: %s" % (what, r.returncode, r.stderr))
    if r.returncode:
        continue
    check("missing entries: %d of %d" % (M.sum(), M.size) in r.stderr, "%s: the summary: %s" % (what, r.stderr))
    res = os.path.join(out, "bcp.h5")
    with h5py.File(res) as f:
        a = f.attrs
        C = f["completed"][:]
        lb, rk = f["trace/lower_bound"][:], f["trace/rank"][:]
        P_idx, P = f["predictions/indices"][:], f["predictions/values"][:]
        check(a["rank"] == rank and a["missing_entries"] == M.sum() and a["observed_entries"] == (~M).sum()
              and a["missing"] == b"nan", "%s: rank %d (true %d), counts %d/%d" % (
                  what, a["rank"], rank, a["missing_entries"], a["observed_entries"]))
    A = factors(res)
    check(np.abs(C - model(A)).max() <= 1e-10 * np.abs(C).max(), "%s: /completed is not the factors' model" % what)
    check(P_idx.dtype == np.uint64 and np.array_equal(P_idx, at_idx) and np.array_equal(P, C[tuple(at_idx.T)]),
          "%s: /predictions are not /completed at the listed entries" % what)
    held = np.sqrt(((C - X)[M] ** 2).mean())
    check(held <= 1.25 * noise, "%s: held-out RMSE %.4f, noise sd %.4f" % (what, held, noise))
    drops = [i for i in range(len(lb) - 1) if rk[i + 1] == rk[i] and lb[i + 1] < lb[i] - 1e-9 * abs(lb[i])]
    check(not drops, "%s: the lower bound fell at sweeps %s" % (what, drops[:5]))
    if tl is not None:
        cp = parafac(tl.tensor(np.where(M, 0, X)), rank, mask=tl.tensor((~M).astype(float)), n_iter_max=500,
                     init="random", random_state=seed, tol=1e-10)
        theirs = np.sqrt(((tl.cp_to_tensor(cp) - X)[M] ** 2).mean())
        check(held <= 1.1 * theirs, "%s: held-out RMSE %.4f, TensorLy's masked ALS %.4f" % (what, held, theirs))
    if seed == 5:
        # The same entries missing by a mask over the full tensor: the same bits.
        full = os.path.join(WORK, "x5.npy")
        np.save(full, X)
        mh = os.path.join(WORK, "mask5.h5")
        with h5py.File(mh, "w") as f:
            f["mask"] = (~M).astype(np.uint8)
        mn = os.path.join(WORK, "mask5.npy")
        np.save(mn, ~M)
        for spec in (mh + ":/mask", mn):
            r = run("bcp", full, "--mask", spec, "--rank", 8, "--starts", 3, "-o", out + "m", "--force", "-q", "-t", 1)
            check(r.returncode == 0 and all((p == q).all() for p, q in zip(factors(out + "m/bcp.h5"), A)),
                  "--mask %s: exit %d, or other factors than NaN's: %s" % (spec, r.returncode, r.stderr))
        # Over 2 and 3 ranks (each updates its share of every mode's rows):
        # one rank's bits, starts, rank check, /completed and /predictions.
        for ranks, threads in ((2, 2), (3, 1)):
            r = run("bcp", y, "--missing", "--rank", 8, "--starts", 3, "--completed", "--predict-at", at, "-o",
                    out + "r", "--force", "-q", "-t", threads, ranks=ranks)
            same = r.returncode == 0
            if same:
                with h5py.File(res) as f, h5py.File(out + "r/bcp.h5") as g:
                    for k in ("completed", "predictions/values", "trace/lower_bound", "trace/rank", "lambda",
                              "starts/lower_bound"):
                        same = same and np.array_equal(f[k][:], g[k][:])
                    same = same and g.attrs["ranks"] == ranks
                same = same and all((p == q).all() for p, q in zip(factors(out + "r/bcp.h5"), A))
            check(same, "--missing on %d ranks: exit %d, or not one rank's bits: %s" % (ranks, r.returncode, r.stderr))
        r = run("info", res)
        check(r.returncode == 0 and "missing:     %d of %d" % (M.sum(), M.size) in r.stdout
              and "predictions: %d listed entries" % M.sum() in r.stdout, "info: %s" % r.stdout)
        # A complete tensor fitted over 2 ranks (a process grid): the
        # factors' model at the listed entries.
        few = np.array([[0, 0, 0], [29, 24, 19], [3, 7, 11], [3, 7, 11]])
        np.savetxt(os.path.join(WORK, "few.txt"), few, fmt="%d")
        r = run("bcp", full, "--rank", 4, "--predict-at", os.path.join(WORK, "few.txt"), "-o", out + "d", "--force",
                "-q", ranks=2)
        if r.returncode == 0:
            with h5py.File(out + "d/bcp.h5") as f:
                P = f["predictions/values"][:]
            want = model(factors(out + "d/bcp.h5"))[tuple(few.T)]
            check(np.abs(P - want).max() <= 1e-12 * np.abs(want).max() and P[2] == P[3],
                  "2 ranks, --predict-at: %s against %s" % (P, want))
        else:
            check(False, "2 ranks, --predict-at: exit %d: %s" % (r.returncode, r.stderr))

# ---------------- --nonneg ----------------
# A non-negative rank-3 tensor (factors max(N(0,1), 0): half zeros, which
# an unconstrained fit takes below 0; noise 10% of its sd),
# half of it missing: non-negative factors, the rank found, the held-out
# error within 5% of the noise's sd; 2 ranks give one rank's bits.
rng = np.random.default_rng(3)
A = [np.maximum(rng.normal(size=(d, 3)), 0) for d in (30, 25, 20)]
T = model(A)
noise = 0.1 * T.std()
X = T + noise * rng.normal(size=T.shape)
M = rng.random(T.shape) < 0.5
Y = X.copy()
Y[M] = np.nan
y = os.path.join(WORK, "nn.npy")
np.save(y, Y)
outs = []
for ranks in (1, 2):
    out = os.path.join(WORK, "nn%d" % ranks)
    r = run("bcp", y, "--missing", "--nonneg", "--rank", 8, "--starts", 3, "--completed", "-o", out, "--force", "-q",
            "-t", 1, ranks=ranks)
    check(r.returncode == 0, "--missing --nonneg on %d ranks: exit %d: %s" % (ranks, r.returncode, r.stderr))
    outs.append(out)
if all(os.path.exists(os.path.join(o, "bcp.h5")) for o in outs):
    F = factors(os.path.join(outs[0], "bcp.h5"))
    with h5py.File(os.path.join(outs[0], "bcp.h5")) as f:
        C, rank, nn = f["completed"][:], f.attrs["rank"], f.attrs["nonneg"]
    held = np.sqrt(((C - X)[M] ** 2).mean())
    check(nn == 1 and rank == 3 and min(a.min() for a in F) >= 0 and held <= 1.05 * noise,
          "--missing --nonneg: rank %d, smallest entry %g, held-out RMSE %.4f, noise sd %.4f" % (
              rank, min(a.min() for a in F), held, noise))
    check(all((p == q).all() for p, q in zip(F, factors(os.path.join(outs[1], "bcp.h5")))),
          "--missing --nonneg: 2 ranks give other factors than 1")

# ---------------- the rank checked by the bound ----------------
# Rank-5 50^3 tensors with 30% and 70% missing: the ARD prior leaves a
# spare component or two fitting the observed entries' noise (rank 6 and
# 7 from the SVD start); dropping the weakest and refitting raises the
# bound, down to the true rank, and a drop below it lowers the bound.
for frac in (0.3, 0.7):
    what = "50x50x50 rank 5, %d%% missing, the rank check" % round(frac * 100)
    t = os.path.join(WORK, "rc.h5")
    run("gen", "tensor", "--shape", "50x50x50", "--rank", 5, "--snr", 20, "--seed", 3, "-o", t)
    with h5py.File(t) as f:
        X = f["tensor"][:]
        T = model([f["factors/A%d" % (n + 1)][:] for n in range(3)])
    M = np.random.default_rng(1).random(X.shape) < frac
    Y = X.copy()
    Y[M] = np.nan
    y, out = os.path.join(WORK, "rc.npy"), os.path.join(WORK, "orc")
    np.save(y, Y)
    r = run("bcp", y, "--missing", "--rank", 8, "-o", out, "--force", "--completed")
    got = re.search(r"rank checked by the bound: rank (\d+) -> (\d+) \(lower bound (\S+) -> (\S+)\); "
                    r"one component fewer: (\S+)", r.stderr)
    check(r.returncode == 0 and got is not None, "%s: exit %d, no check in the summary: %s" % (what, r.returncode, r.stderr))
    if got is None:
        continue
    r0, r1, lb0, lb1, fewer = int(got[1]), int(got[2]), float(got[3]), float(got[4]), float(got[5])
    check(r0 > 5 and r1 == 5 and lb1 > lb0 and fewer < lb1, "%s: rank %d -> %d, bound %g -> %g, one fewer %g" % (
        what, r0, r1, lb0, lb1, fewer))
    with h5py.File(os.path.join(out, "bcp.h5")) as f:
        C, rank, lb = f["completed"][:], f.attrs["rank"], f.attrs["lower_bound"]
    check(rank == 5 and abs(lb - lb1) <= 1e-9 * abs(lb1), "%s: the file says rank %d, bound %g" % (what, rank, lb))
    held, noise = np.sqrt(((C - X)[M] ** 2).mean()), (X - T).std()
    check(held <= 1.05 * noise, "%s: held-out RMSE %.4f, noise sd %.4f" % (what, held, noise))

# ---------------- --missing with --fuse ----------------
# The 30% missing rank-3 tensor cut into 2 x 2 x 1 sub-tensors, each
# fitted on its observed entries, fused: rank 3, the held-out error within
# 25% of the noise, the counts and the fit over the observed entries (the
# fit recomputed here from the factors), /completed the factors' model;
# NaN or an HDF5 uint8 mask at the same entries give the same factors, and
# 2 ranks (the sub-tensors shared out) the same factors within rounding.
with h5py.File(os.path.join(WORK, "t4.h5")) as f:
    X4 = f["tensor"][:]
    T4 = model([f["factors/A%d" % (n + 1)][:] for n in range(3)])
M4 = np.random.default_rng(4).random(X4.shape) < 0.3
with h5py.File(os.path.join(WORK, "mask4.h5"), "w") as f:
    f["mask"] = (~M4).astype(np.uint8)
np.save(os.path.join(WORK, "full4.npy"), X4)
fused = {}
for name, args, ranks in (("NaN", [os.path.join(WORK, "y4.npy"), "--missing"], 1),
                          ("mask", [os.path.join(WORK, "full4.npy"), "--mask", os.path.join(WORK, "mask4.h5") + ":/mask"], 1),
                          ("NaN, 2 ranks", [os.path.join(WORK, "y4.npy"), "--missing"], 2)):
    out = os.path.join(WORK, "fuse-" + name.replace(" ", "").replace(",", ""))
    r = run("bcp", *args, "--fuse", "2x2x1", "--rank", 3, "--completed", "-o", out, "--force", ranks=ranks)
    check(r.returncode == 0 and "missing entries: %d of %d" % (M4.sum(), M4.size) in r.stderr,
          "--fuse, %s: exit %d: %s" % (name, r.returncode, r.stderr))
    if r.returncode:
        continue
    with h5py.File(os.path.join(out, "bcp.h5")) as f:
        a, C = dict(f.attrs), f["completed"][:]
        A = [f["factors/A%d" % (n + 1)][:] for n in range(3)]
    fused[name] = A
    X_obs, C_obs = X4[~M4], model(A)[~M4]
    fit = 1 - np.sqrt(((X_obs - C_obs) ** 2).sum() / (X_obs ** 2).sum())
    held = np.sqrt(((C - X4)[M4] ** 2).mean())
    check(a["rank"] == 3 and a["missing_entries"] == M4.sum() and a["observed_entries"] == (~M4).sum(),
          "--fuse, %s: rank %d, counts %d/%d" % (name, a["rank"], a["missing_entries"], a["observed_entries"]))
    check(abs(a["fit"] - fit) <= 1e-9, "--fuse, %s: fit %.12f, over the observed entries %.12f" % (name, a["fit"], fit))
    check(held <= 1.25 * (X4 - T4).std(), "--fuse, %s: held-out RMSE %.4f, noise sd %.4f" % (name, held, (X4 - T4).std()))
    check(np.abs(C - model(A)).max() <= 1e-10 * np.abs(C).max(), "--fuse, %s: /completed is not the model" % name)
if len(fused) == 3:
    check(all(np.array_equal(u, v) for u, v in zip(fused["NaN"], fused["mask"])), "--fuse: mask and NaN differ")
    check(all(np.allclose(u, v, rtol=1e-10, atol=1e-12) for u, v in zip(fused["NaN"], fused["NaN, 2 ranks"])),
          "--fuse: 2 ranks differ from one")

# ---------------- refusals ----------------
y5 = os.path.join(WORK, "y5.npy")
Y = np.load(y5)
bad = os.path.join(WORK, "bad")


def refused(what, *args, ranks=1, needle=""):
    r = run("bcp", *args, "-o", bad, "--force", ranks=ranks)
    check(r.returncode == 2 and needle in r.stderr and not os.path.exists(os.path.join(bad, "bcp.h5")),
          "%s: exit %d: %s" % (what, r.returncode, r.stderr))


refused("NaN without --missing", y5, needle="finite")
Z = Y.copy()
Z[1, 2, 3] = np.inf
np.save(os.path.join(WORK, "inf.npy"), Z)
refused("an infinity", os.path.join(WORK, "inf.npy"), "--missing", needle="inf")
np.save(os.path.join(WORK, "mask-shape.npy"), np.ones((30, 25, 19), dtype=bool))
refused("a mask of another shape", y5, "--mask", os.path.join(WORK, "mask-shape.npy"), needle="shape")
np.save(os.path.join(WORK, "nothing.npy"), np.full((4, 5, 6), np.nan))
refused("every entry missing", os.path.join(WORK, "nothing.npy"), "--missing", needle="missing")
# A sub-tensor of --fuse with nothing observed: refused, naming its block.
Z = Y.copy()
Z[:15, :12] = np.nan
np.save(os.path.join(WORK, "empty-block.npy"), Z)
refused("--fuse: a sub-tensor with nothing observed", os.path.join(WORK, "empty-block.npy"), "--missing", "--fuse",
        "2x2x1", needle="every entry of the block [0:15, 0:12, 0:20] is missing")
np.save(os.path.join(WORK, "mask-int.npy"), np.ones((30, 25, 20), dtype=np.int32))
refused("a mask of int32", y5, "--mask", os.path.join(WORK, "mask-int.npy"), needle="uint8 or bool")
M5 = np.ones((30, 25, 20))
M5[2, 3, 4] = np.nan
np.save(os.path.join(WORK, "mask-nan.npy"), M5)
refused("a mask with a NaN", y5, "--mask", os.path.join(WORK, "mask-nan.npy"), needle="element 1064 (in C order) of the mask is NaN")
refused("a mask that is not there", y5, "--mask", os.path.join(WORK, "nowhere.h5") + ":/mask", needle="nowhere.h5")

for name, rows, needle in (("at-width.txt", "1 2\n", "2 columns"), ("at-range.txt", "0 0 0\n30 0 0\n", "row 2, column 1"),
                           ("at-neg.txt", "0 -1 0\n", "-1 is not an index"), ("at-frac.txt", "0 1.5 0\n", "1.5 is not"),
                           ("at-empty.txt", "", "no data rows")):
    with open(os.path.join(WORK, name), "w") as f:
        f.write(rows)
    refused("--predict-at " + name, y5, "--missing", "--predict-at", os.path.join(WORK, name), needle=needle)
refused("--predict-at on 2 ranks, an index outside", os.path.join(WORK, "x5.npy"), "--predict-at",
        os.path.join(WORK, "at-range.txt"), ranks=2, needle="row 2, column 1")

# A result whose /completed is not of the dims: info refuses it
res = os.path.join(WORK, "o5", "bcp.h5")
edited = os.path.join(WORK, "edited.h5")
with open(res, "rb") as f, open(edited, "wb") as g:
    g.write(f.read())
with h5py.File(edited, "r+") as f:
    del f["completed"]
    f["completed"] = np.zeros((30, 25, 19))
r = run("info", edited)
check(r.returncode == 2 and "completed" in r.stderr, "info of a wrong /completed: exit %d: %s" % (r.returncode, r.stderr))
with open(res, "rb") as f, open(edited, "wb") as g:
    g.write(f.read())
with h5py.File(edited, "r+") as f:
    v = f["predictions/values"][:]
    del f["predictions/values"]
    f["predictions/values"] = v[:-1]
r = run("info", edited)
check(r.returncode == 2 and "predictions" in r.stderr, "info of short /predictions: exit %d: %s" % (r.returncode, r.stderr))

finish("%d checks, %d failed")
