"""One CP-ALS sweep of TensorLy (parafac, numpy backend, random start) on
the same tensor: milliseconds per sweep over SWEEPS sweeps (the first, with
its set-up, excluded by timing SWEEPS + 1 and 1).
usage: bcp_tensorly.py TENSOR.npy RANK SWEEPS"""
import sys
import time

import numpy as np
import tensorly as tl
from tensorly.decomposition import parafac

X = tl.tensor(np.load(sys.argv[1]))
R, S = int(sys.argv[2]), int(sys.argv[3])


def run(k):
    t0 = time.perf_counter()
    parafac(X, rank=R, init="random", n_iter_max=k, tol=0, random_state=1)
    return time.perf_counter() - t0


run(1)  # warm-up
print("%.3f" % (1e3 * (run(S + 1) - run(1)) / S))
