"""A float32 .npy tensor for the bcp benchmarks, quickly at any size: a
rank-5 CP tensor of Gaussian factors plus Gaussian noise at 20 dB, written
a slice of mode 1 at a time through a memory map (the whole tensor is
never in memory twice).  `fcbo-dist gen tensor` writes doubles one
element at a time, which takes minutes at 200^4.
usage: bcp_big_tensor.py OUT.npy AxBxC... [SEED]"""
import sys

import numpy as np

out, dims = sys.argv[1], [int(v) for v in sys.argv[2].split("x")]
rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
R = 5
A = [rng.standard_normal((d, R)).astype(np.float32) for d in dims]
rest = A[1]
for a in A[2:]:  # the Khatri-Rao product of modes 2.., C order
    rest = (rest[:, None, :] * a[None, :, :]).reshape(-1, R)
sigma = np.sqrt(R / 10 ** (20 / 10))  # each element's signal has variance R
X = np.lib.format.open_memmap(out, mode="w+", dtype=np.float32, shape=tuple(dims))
for i in range(dims[0]):
    s = rest @ A[0][i]
    s += sigma * rng.standard_normal(s.shape, dtype=np.float32)
    X[i] = s.reshape(dims[1:])
X.flush()
