"""Shared by the Python spearman tests (spearman_scipy.py, gpu_spearman.py):
the random zero-inflated count matrices with heavy ties and the awkward
rows, and testlib's environment and check."""
import numpy as np
from testlib import ENV, check, counts, finish  # noqa: F401  (the tests import them from here)


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
