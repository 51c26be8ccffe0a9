"""The peer a user would write in torch for all-pairs Spearman on one GPU,
for timing only: ranks (argsort of argsort: ordinal ranks, ties broken by
position, so not Spearman's average ranks, at the same cost), centred and
normalised rows, float32 products of 4,096 rows at a time against the rows
after them, |r| >= r_crit for the p-value (t distribution, n - 2 degrees of
freedom), and the selected pairs' indices (nonzero).  Prints the number of
pairs selected and the seconds from the matrix on the GPU to the last
block's indices (ranks included).
usage: spearman_torch_peer.py MATRIX.npy PVALUE"""
import sys
import time

import numpy as np
import torch
from scipy import stats

x = np.load(sys.argv[1]).astype(np.float32)
alpha = float(sys.argv[2])
N, n = x.shape
t = stats.t.isf(alpha / 2, n - 2)
rc = float(t / np.sqrt(n - 2 + t * t))
dev = torch.device("cuda")
X = torch.from_numpy(x).to(dev)
torch.cuda.synchronize()
t0 = time.perf_counter()
R = torch.argsort(torch.argsort(X, dim=1), dim=1).float()
R = R - R.mean(1, keepdim=True)
R = R / R.norm(dim=1, keepdim=True).clamp_min(1e-30)
B = 4096
selected = 0
for i0 in range(0, N, B):
    C = R[i0:i0 + B] @ R[i0:].T
    mask = C.abs() >= rc
    b = min(B, N - i0)
    mask[:, :b] = torch.triu(mask[:, :b], 1)  # only j > i
    selected += int(mask.nonzero().shape[0])
    del C, mask
torch.cuda.synchronize()
print(selected, "%.3f" % (time.perf_counter() - t0))
