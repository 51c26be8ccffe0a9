"""The peer a user would write in torch on the same GPU: CP-ALS sweeps
(for each mode: the unfolding times the Khatri-Rao product of the other
factors, divided by the Hadamard product of their Gram matrices), float32
as a torch user would.  Prints milliseconds per sweep (CUDA events, after
one warm-up sweep).
usage: bcp_torch_peer.py TENSOR.npy RANK [SWEEPS]"""
import sys

import numpy as np
import torch

X = torch.tensor(np.load(sys.argv[1]), dtype=torch.float32, device="cuda")
R, S = int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 10
N = X.dim()
g = torch.Generator(device="cuda").manual_seed(1)
A = [torch.randn(X.shape[n], R, device="cuda", generator=g) for n in range(N)]
unfold = [X.movedim(n, 0).reshape(X.shape[n], -1) for n in range(N)]  # views where possible


def khatri_rao(mats):
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, R)
    return out


def sweep():
    for n in range(N):
        others = [A[m] for m in range(N) if m != n]
        G = torch.ones(R, R, device="cuda")
        for m in others:
            G = G * (m.T @ m)
        A[n] = torch.linalg.solve(G, (unfold[n] @ khatri_rao(others)).T).T


sweep()
torch.cuda.synchronize()
t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
t0.record()
for _ in range(S):
    sweep()
t1.record()
torch.cuda.synchronize()
print("%.3f" % (t0.elapsed_time(t1) / S))
