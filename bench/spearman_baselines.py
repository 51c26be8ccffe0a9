"""The peers a user would write in Python, timed on the same matrix as
fcbo-dist (bench/spearman.sh): scipy.stats.spearmanr over all rows, and
scipy.stats.rankdata + numpy.corrcoef (rho only, no p-values).  Prints
CSV rows: tool,rows,cols,pairs,seconds,pairs_per_s."""
import sys
import time

import numpy as np
from scipy import stats

X = np.load(sys.argv[1]) if sys.argv[1].endswith(".npy") else np.loadtxt(sys.argv[1])
N, n = X.shape
pairs = N * (N - 1) // 2
t = time.perf_counter()
r, p = stats.spearmanr(X, axis=1)
s = time.perf_counter() - t
print("scipy.stats.spearmanr,%d,%d,%d,%.3f,%.4g" % (N, n, pairs, s, pairs / s))
del r, p
t = time.perf_counter()
R = np.corrcoef(np.apply_along_axis(stats.rankdata, 1, X))
s = time.perf_counter() - t
print("rankdata+numpy.corrcoef,%d,%d,%d,%.3f,%.4g" % (N, n, pairs, s, pairs / s))
