"""The CUDA dpc backend against the CPU backend on random points (integer
coordinates, full of ties, and real ones) in 2, 3, 8 and 20 dimensions
(20 falls back to the CPU, which the summary must say), both kernels,
several sizes (not multiples of a block), with the halo: the cutoff
kernel's arrays bit-identical, the Gaussian rho within 1e-12 relative
and its labels identical; 2 ranks on 2 GPUs give the same file.
usage: gpu_dpc.py FCBO_DIST WORKDIR GPU_BACKEND GPUS"""
import os
import subprocess
import sys

import h5py
import numpy as np
from testlib import ENV, check, finish

BIN, WORK, GB, GPUS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def run(args, backend, np_=1):
    cmd = [BIN, "dpc"] + args + ["--backend", backend, "--force"]
    if np_ > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np_)] + cmd
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return r


def load(d):
    with h5py.File(os.path.join(d, "dpc.h5"), "r") as f:
        return {k: f[k][:] for k in ("labels", "rho", "delta", "parent", "gamma", "centers", "core_labels")}


rng = np.random.default_rng(11)
for n, d, integer in [(77, 2, True), (1000, 2, False), (3001, 3, False), (700, 8, False), (513, 20, False)]:
    X = rng.integers(0, 5, size=(n, d)).astype(float) if integer else rng.normal(size=(n, d))
    if not integer:
        X[: n // 4] += 4
    path = os.path.join(WORK, "p%d_%d.txt" % (n, d))
    np.savetxt(path, X, fmt="%.17g")
    for kernel in ("cutoff", "gaussian"):
        name = "n=%d d=%d %s" % (n, d, kernel)
        args = [path, "--kernel", kernel, "--dc", "1.5" if integer else "0.8", "--centers", "4", "--halo"]
        cpu, gpu = os.path.join(WORK, "cpu"), os.path.join(WORK, "gpu")
        run(args + ["-o", cpu, "-q"], "cpu")
        r = run(args + ["-o", gpu], GB)
        if d > 16 and GB != "cpu":
            check("run on the CPU backend" in r.stderr, "%s: no fall-back note: %s" % (name, r.stderr))
        a, b = load(cpu), load(gpu)
        if kernel == "cutoff":
            for k in a:
                check(np.array_equal(a[k], b[k]), "%s: %s differs at %d points" % (name, k, (a[k] != b[k]).sum()))
        else:
            rel = np.abs(a["rho"] - b["rho"]) / np.abs(a["rho"])
            check(rel.max() <= 1e-12, "%s: rho off by %g" % (name, rel.max()))
            for k in ("labels", "parent", "centers", "core_labels"):
                check(np.array_equal(a[k], b[k]), "%s: %s differs at %d points" % (name, k, (a[k] != b[k]).sum()))
        if GPUS >= 2:
            g2 = os.path.join(WORK, "gpu2")
            run(args + ["-o", g2, "-q"], GB, np_=2)
            c = load(g2)
            for k in ("labels", "rho", "delta", "parent"):
                check(np.array_equal(b[k], c[k]), "%s: 2 ranks: %s differs" % (name, k))

finish()
