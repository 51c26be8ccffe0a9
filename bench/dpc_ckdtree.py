"""The peer a user would write on the CPU: exact density peaks with
scipy's cKDTree (cutoff kernel, the same d_c and total order as fcbo-dist
dpc): rho by counting neighbours within d_c, delta by querying ever more
neighbours until a denser one turns up, labels in density order.  Prints
"seconds clusters" for the clustering (reading excluded).
usage: dpc_ckdtree.py POINTS.txt DC CENTERS [WORKERS]"""
import sys
import time

import numpy as np
from scipy.spatial import cKDTree

X = np.loadtxt(sys.argv[1])[:, :2]
dc, K = float(sys.argv[2]), int(sys.argv[3])
workers = int(sys.argv[4]) if len(sys.argv) > 4 else -1
t0 = time.perf_counter()
n = len(X)
tree = cKDTree(X)
# strictly closer than d_c, not counting the point itself
rho = tree.query_ball_point(X, np.nextafter(dc, 0), return_length=True, workers=workers).astype(float) - 1
order = np.lexsort((np.arange(n), -rho))       # density order: rho desc, index asc
rank = np.empty(n, dtype=np.int64)
rank[order] = np.arange(n)
delta, parent = np.full(n, np.inf), np.full(n, -1)
todo, k = np.arange(n), 8
while len(todo) and k < n:
    d, j = tree.query(X[todo], k=min(k, n), workers=workers)
    denser = rank[j] < rank[todo][:, None]
    found = denser.any(1)
    first = denser.argmax(1)
    rows = np.nonzero(found)[0]
    delta[todo[rows]] = d[rows, first[rows]]
    parent[todo[rows]] = j[rows, first[rows]]
    todo, k = todo[~found], k * 4
for i in todo:                                  # the densest point, and any left
    dd = np.sqrt(((X - X[i]) ** 2).sum(1))
    den = rank < rank[i]
    if den.any():
        j = np.argmin(np.where(den, dd, np.inf))
        delta[i], parent[i] = dd[j], j
    else:
        delta[i], parent[i] = dd.max(), -1
gamma = rho * delta
centres = np.lexsort((np.arange(n), -gamma))[:K]
labels = np.zeros(n, dtype=np.int64)
labels[centres] = np.arange(1, K + 1)
for i in order:
    if labels[i] == 0:
        labels[i] = labels[parent[i]]
print("%.3f %d" % (time.perf_counter() - t0, len(np.unique(labels))))
