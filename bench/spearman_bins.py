"""The rho histogram of a spearman.h5 (bench/spearman-bins.sh says why):
bins in effect, the share of pairs in the fullest bins, how many of a
thread's increments equal bins would save, and the shared-memory
wavefronts of a warp's increment instruction drawn from the histogram,
with one copy of the histogram and with copies interleaved by lane."""
import sys

import h5py
import numpy as np

h = h5py.File(sys.argv[1], "r")["histogram"][:].astype(np.float64)
n = h.sum()
p = h / n
print("pairs binned: %d in %d bins, %d of them non-empty" % (n, len(h), np.count_nonzero(h)))
print("bins in effect (1 / sum p^2): %.0f" % (1.0 / np.sum(p * p)))
q = np.sort(p)[::-1].cumsum()
for share in (0.5, 0.9, 0.99):
    print("fullest bins holding %g%% of the pairs: %d" % (100 * share, int(np.searchsorted(q, share)) + 1))
# A thread's g pairs drawn independently from the histogram: distinct bins
# sum_b 1 - (1 - p_b)^g; increments saved by combining equal ones 1 - that / g.
for g in (2, 16, 32):
    distinct = np.sum(1.0 - (1.0 - p) ** g)
    print("increments saved by combining equal bins among %d pairs of a thread: %.2f%%" % (g, 100 * (1 - distinct / g)))


def wavefronts(words):
    """Per row of words (one per lane), the most distinct words one bank
    (word mod 32) is asked for: a bank serves one distinct word per
    wavefront, equal words together."""
    w = np.sort(words, axis=1)
    first = np.ones(w.shape, dtype=bool)
    first[:, 1:] = w[:, 1:] != w[:, :-1]
    counts = np.zeros((len(w), 32), dtype=np.int64)
    rows = np.broadcast_to(np.arange(len(w))[:, None], w.shape)
    np.add.at(counts, (rows[first], (w % 32)[first]), 1)
    return counts.max(axis=1)


# A warp's increment: 32 slots drawn from the histogram.
rng = np.random.default_rng(1)
draws = rng.choice(len(p), size=(200000, 32), p=p) + 1  # slots (hist_bits: bin + 1)
waves = wavefronts(draws)
print("wavefronts of a warp's increment (200,000 drawn): mean %.2f, median %.0f, max %.0f"
      % (waves.mean(), np.median(waves), waves.max()))

# C copies of the histogram interleaved word by word (slot s of copy c at
# word C s + c), lane L counting into copy L mod C: each copy's lanes then
# share 32 / C banks among fewer lanes.  With 16-bit counts two adjacent
# slots share a word (word C (s >> 1) + c, half s & 1), half the memory.
lanes = np.arange(32)
print("copies interleaved by lane (lane mod C), wavefronts of an increment (mean of 200,000), shared memory:")
for c in (1, 2, 4, 8, 16, 32):
    w32 = wavefronts(c * draws + lanes % c).mean()
    w16 = wavefronts(c * (draws >> 1) + lanes % c).mean()
    print("  C = %2d: 32-bit counts %.2f (%d KB), 16-bit counts %.2f (%d KB)"
          % (c, w32, (c * (len(p) + 2) * 4 + 1023) // 1024, w16, (c * ((len(p) + 3) // 2) * 4 + 1023) // 1024))
