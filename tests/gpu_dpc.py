"""The CUDA dpc backend against the CPU backend on random points (integer
coordinates, full of ties, and real ones) in 1, 2, 3, 8, 20, 64, 128 and
130 dimensions (130 falls back to the CPU, which the summary must say), both
kernels, several sizes (not multiples of a block), with the halo, d_c
given and by --neighbors (all rows, and 2,048 sampled ones), and
blobs through the grid and without it: every array bit-identical (both
backends compute the same distances with the same roundings and the same
exp); 2 ranks on 2 GPUs give the same file.
usage: gpu_dpc.py FCBO_DIST WORKDIR GPU_BACKEND GPUS"""
import os
import subprocess
import sys

import h5py
import numpy as np
from testlib import ENV, check, finish

BIN, WORK, GB, GPUS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
HAVE_NCCL = "NCCL: built" in subprocess.run([BIN, "version"], capture_output=True, text=True).stdout


def run(args, backend, np_=1, env=None):
    cmd = [BIN, "dpc"] + args + ["--backend", backend, "--force"]
    if np_ > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np_)] + cmd
    r = subprocess.run(cmd, env=dict(ENV, **(env or {})), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return r


def load(d):
    with h5py.File(os.path.join(d, "dpc.h5"), "r") as f:
        d = {k: f[k][:] for k in ("labels", "rho", "delta", "parent", "gamma", "centers", "core_labels") if k in f}
        d["dc"] = np.array([f.attrs["dc"]])
        return d


def compare(name, a, b):
    for k in a:
        check(np.array_equal(a[k], b[k]), "%s: %s differs at %d points" % (name, k, (a[k] != b[k]).sum()))


rng = np.random.default_rng(11)
cases = [(77, 2, True), (1000, 2, False), (3001, 3, False), (2000, 1, False), (700, 8, False), (513, 20, False),
         (450, 64, True), (301, 128, False), (97, 130, False)]
for n, d, integer in cases:
    X = rng.integers(0, 5, size=(n, d)).astype(float) if integer else rng.normal(size=(n, d))
    if not integer:
        X[: n // 4] += 4
    path = os.path.join(WORK, "p%d_%d.txt" % (n, d))
    np.savetxt(path, X, fmt="%.17g")
    for kernel in ("cutoff", "gaussian"):
        name = "n=%d d=%d %s" % (n, d, kernel)
        # d_c given, and by the neighbours rule (on the GPU: a radix select).
        dc = ["--dc", "1.5" if integer else "0.8"] if kernel == "cutoff" else ["--neighbors", "7"]
        args = [path, "--kernel", kernel, "--centers", "4", "--halo"] + dc
        cpu, gpu = os.path.join(WORK, "cpu"), os.path.join(WORK, "gpu")
        run(args + ["-o", cpu, "-q"], "cpu")
        r = run(args + ["-o", gpu], GB)
        if d > 128 and GB != "cpu":
            check("run on the CPU backend" in r.stderr, "%s: no fall-back note: %s" % (name, r.stderr))
        # Both kernels bit for bit: the same distances, the same exp.
        compare(name, load(cpu), load(gpu))
        if GPUS >= 2:
            g2 = os.path.join(WORK, "gpu2")
            run(args + ["-o", g2, "-q"], GB, np_=2)
            compare(name + " 2 ranks", load(cpu), load(g2))

# Blobs large enough for many blocks, rings that run out (the local
# density peaks go to the brute-force kernel) and cells of every size;
# with and without the grid, and with d_c from --neighbors.
path = os.path.join(WORK, "blobs.txt")
subprocess.run([BIN, "gen", "blobs", "--n", "60000", "--dims", "2", "--clusters", "12", "--seed", "5", "-o", path],
               env=ENV, check=True, capture_output=True)
cpu, gpu = os.path.join(WORK, "cpu"), os.path.join(WORK, "gpu")
# FD_DPC_GPU_COLLECT=0: d_c's radix select by every digit, none of the
# last distances sorted on the host; FD_DPC_GPU_BLOCKS: the brute-force
# passes' points split among other numbers of blocks.
for extra, grid, knobs in [(["--neighbors", "20"], "on", {}), (["--dc", "0.05"], "on", {}),
                           (["--neighbors", "20"], "off", {}), (["--neighbors", "20"], "on", {"FD_DPC_GPU_COLLECT": "0"}),
                           (["--neighbors", "20"], "on", {"FD_DPC_GPU_COLLECT": "1"}),
                           (["--neighbors", "20"], "off", {"FD_DPC_GPU_BLOCKS": "1"}),
                           (["--neighbors", "20"], "on", {"FD_DPC_GPU_BLOCKS": "16"}),
                           (["--neighbors", "20"], "on", {"FD_DPC_GPU_COARSE": "always"}),
                           (["--neighbors", "20"], "on", {"FD_DPC_GPU_COARSE": "off"})]:
    name = "blobs %s grid %s %s" % (" ".join(extra), grid, knobs)
    env = dict(knobs, FD_DPC_GRID=grid)
    args = [path, "--labels", path.replace(".txt", ".labels.txt"), "--centers", "12"] + extra
    run(args + ["-o", cpu, "-q"], "cpu", env=env)
    run(args + ["-o", gpu, "-q"], GB, env=env)
    compare(name, load(cpu), load(gpu))
    if GPUS >= 2:
        # The all-gathers by NCCL on the devices (the default) and by MPI.
        g2 = os.path.join(WORK, "gpu2")
        for nccl, by in (("on", "NCCL"), ("off", "MPI")):
            r = run(args + ["-o", g2], GB, np_=2, env=dict(env, FD_NCCL=nccl))
            if GB != "cpu":
                by = by if HAVE_NCCL else "MPI"
                check("all-gathers by %s" % by in r.stderr, "%s: FD_NCCL=%s: %s" % (name, nccl, r.stderr.strip()))
            compare("%s 2 ranks FD_NCCL=%s" % (name, nccl), load(cpu), load(g2))

# Tight blobs in 1, 2 and 3 coordinates whose peaks' nearest denser points
# lie past the delta grid's rings: with FD_DPC_GPU_COARSE=always those rows
# go through the coarser grid on the GPU (a warp a row), with off all to
# the brute force, by default through the grid when 512 or more; the CPU
# takes every coarser grid.
for d, k, n in ((1, 9, 20000), (2, 9, 20000), (3, 9, 20000), (3, 300, 30000)):
    path = os.path.join(WORK, "tight%d_%d.npy" % (d, k))
    subprocess.run([BIN, "gen", "blobs", "--n", str(n), "--dims", str(d), "--clusters", str(k), "--spread",
                    "0.02" if k == 9 else "0.01", "--seed", "11" if k == 9 else "12", "-o", path],
                   env=ENV, check=True, capture_output=True)
    args = [path, "--neighbors", "20", "--centers", str(k)]
    run(args + ["-o", cpu, "-q"], "cpu")
    for coarse in ("always", "off", "auto"):
        r = run(args + ["-o", gpu, "-q"], GB, env={"FD_DPC_GPU_COARSE": coarse, "FD_GPU_VERBOSE": "1"})
        compare("%d tight %d-D blobs FD_DPC_GPU_COARSE=%s" % (k, d, coarse), load(cpu), load(gpu))
        if GB != "cpu" and coarse != "auto":
            took = "gpu dpc: delta: a coarser grid" in r.stderr
            check(took == (coarse == "always"), "%d tight %d-D blobs FD_DPC_GPU_COARSE=%s: coarser grid %s" %
                  (k, d, coarse, "taken" if took else "not taken"))
    if GPUS >= 2:
        g2 = os.path.join(WORK, "gpu2")
        run(args + ["-o", g2, "-q"], GB, np_=2, env={"FD_DPC_GPU_COARSE": "always"})
        compare("%d tight %d-D blobs 2 ranks coarse" % (k, d), load(cpu), load(g2))

finish()
