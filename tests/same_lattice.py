"""Compares two lattice result files (single files or masters over parts)
as sets of concepts: (support, intent, extent), extents when both files
hold them.  Order does not matter; anything missing or extra is printed.
usage: same_lattice.py A.h5 B.h5"""
import sys

import h5py


def concepts(path):
    f = h5py.File(path, "r")
    assert f.attrs["complete"] == 1, path
    supp = f["supports"][:]
    off, ids = f["intents/offsets"][:], f["intents/ids"][:]
    ext = "extents" in f
    if ext:
        eoff, eids = f["extents/offsets"][:], f["extents/ids"][:]
    out = []
    for c in range(len(supp)):
        e = tuple(eids[eoff[c]:eoff[c + 1]].tolist()) if ext else None
        out.append((int(supp[c]), tuple(ids[off[c]:off[c + 1]].tolist()), e))
    return out, ext


a, ea = concepts(sys.argv[1])
b, eb = concepts(sys.argv[2])
if not (ea and eb):
    a = [(s, i, None) for s, i, _ in a]
    b = [(s, i, None) for s, i, _ in b]
sa, sb = set(a), set(b)
problems = []
if len(sa) != len(a):
    problems.append("%s holds %d concepts twice" % (sys.argv[1], len(a) - len(sa)))
if len(sb) != len(b):
    problems.append("%s holds %d concepts twice" % (sys.argv[2], len(b) - len(sb)))
for name, d in (("only in " + sys.argv[1], sa - sb), ("only in " + sys.argv[2], sb - sa)):
    if d:
        problems.append("%d %s, e.g. %s" % (len(d), name, sorted(d)[:3]))
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("same %d concepts%s" % (len(a), " with extents" if ea and eb else ""))
