"""Shared by the Python spearman tests (spearman_scipy.py, gpu_spearman.py):
the environment for mpirun as root, a counting check, and the random
zero-inflated count matrices with heavy ties and the awkward rows."""
import os
import sys

import numpy as np

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
counts = {"checks": 0, "failures": 0}


def check(cond, what):
    counts["checks"] += 1
    if not cond:
        counts["failures"] += 1
        print("FAIL:", what, file=sys.stderr)


def finish(fmt="%d checks, %d failed"):
    """Prints the counts and exits non-zero on any failure."""
    print(fmt % (counts["checks"], counts["failures"]))
    sys.exit(1 if counts["failures"] else 0)


def matrix(rows, n, seed, far_equal=False):
    """Rows drawn from 6 Poisson profiles, 55% zeros; row 3 constant, rows
    10 and 11 equal (rho = 1), row 12 the negative of row 13 (rho = -1);
    far_equal: the last row equals row 0 (equal rows in different tiles)."""
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 6, rows)
    prof = rng.uniform(0.2, 3, (6, n))
    x = rng.poisson(prof[groups]) * (rng.random((rows, n)) > 0.55)
    x[3] = 7
    x[10] = x[11]
    x[12] = -x[13]
    if far_equal:
        x[rows - 1] = x[0]
    return x
