"""The peer a user would write in torch on the same GPU: exact density
peaks with the cutoff kernel by tiles of rows, torch.cdist, a count and a
masked minimum (the same d_c and the same order as fcbo-dist dpc).
Prints "seconds" for rho and delta (reading and the copy to the GPU
excluded).  usage: dpc_torch_peer.py POINTS.txt|.npy DC [TILE]"""
import sys
import time

import numpy as np
import torch

P = np.load(sys.argv[1]) if sys.argv[1].endswith(".npy") else np.loadtxt(sys.argv[1])
X = torch.tensor(P[:, :2], dtype=torch.float64, device="cuda")
dc, tile = float(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 4096
n = len(X)
torch.cuda.synchronize()
t0 = time.perf_counter()
rho = torch.empty(n, dtype=torch.float64, device="cuda")
for a in range(0, n, tile):
    D = torch.cdist(X[a:a + tile], X)
    rho[a:a + tile] = (D < dc).sum(1) - 1
idx = torch.arange(n, device="cuda")
delta = torch.empty(n, dtype=torch.float64, device="cuda")
for a in range(0, n, tile):
    D = torch.cdist(X[a:a + tile], X)
    r = rho[a:a + tile, None]
    denser = (rho[None, :] > r) | ((rho[None, :] == r) & (idx[None, :] < idx[a:a + tile, None]))
    m = torch.where(denser, D, torch.full_like(D, float("inf"))).min(1).values
    delta[a:a + tile] = torch.where(torch.isinf(m), D.max(1).values, m)
torch.cuda.synchronize()
print("%.3f" % (time.perf_counter() - t0))
