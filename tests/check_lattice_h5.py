"""Independent check of a lattice result file with h5py (a single file or a
master over parts): every stored concept is a closed pair of the context,
no intent appears twice, counts agree with the metadata.
usage: check_lattice_h5.py RESULT.h5 CONTEXT.cxt   (extents must be stored)"""
import sys

import h5py

f = h5py.File(sys.argv[1], "r")
lines = open(sys.argv[2]).read().split("\n")
n, m = int(lines[2]), int(lines[3])
rows = [set(i for i, ch in enumerate(l) if ch == "X") for l in lines[5 + n + m: 5 + 2 * n + m]]
off, ids = f["intents/offsets"][:], f["intents/ids"][:]
eoff, eids = f["extents/offsets"][:], f["extents/ids"][:]
supp = f["supports"][:]
assert f.attrs["complete"] == 1
assert len(off) == len(supp) + 1 == f.attrs["n_concepts"] + 1
assert off[0] == 0 and off[-1] == len(ids) and eoff[0] == 0 and eoff[-1] == len(eids)
seen = set()
for c in range(len(off) - 1):
    intent = frozenset(ids[off[c]:off[c + 1]].tolist())
    extent = set(eids[eoff[c]:eoff[c + 1]].tolist())
    assert intent not in seen, ("intent twice", c)
    seen.add(intent)
    assert supp[c] == len(extent), c
    assert extent == {o for o in range(n) if intent <= rows[o]}, c
    common = set(range(m))
    for o in extent:
        common &= rows[o]
    assert common == intent, c
if "parts" in f.attrs:
    assert f["ranks/concepts"][:].sum() == len(supp)
print("h5py: %d concepts, each a closed pair, none twice" % len(supp))
