"""lattice --edges against brute force: on random contexts of several
shapes and densities, with and without a minimum support (iceberg
lattices), every concept's upper covers are exactly the concepts whose
intents are maximal among those strictly inside its intent (the covering
relation of the intents' inclusion order, computed here by all pairs).
usage: lattice_edges.py FCBO_DIST WORKDIR"""
import os
import subprocess
import sys

import h5py
import numpy as np

from testlib import CPU_ENV as ENV, check, finish

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)



def brute_covers(intents):
    sets = [frozenset(x) for x in intents]
    out = []
    for b in sets:
        below = [k for k, d in enumerate(sets) if d < b]
        out.append(sorted(k for k in below if not any(sets[k] < sets[m] for m in below)))
    return out


for objects, attrs, dens, seed, supp in ((30, 8, 0.3, 1, 0), (60, 12, 0.4, 2, 0), (80, 10, 0.6, 3, 0),
                                         (120, 14, 0.25, 4, 3), (50, 9, 0.5, 5, 10), (1, 4, 0.5, 6, 0),
                                         (40, 6, 0.9, 7, 0)):
    ctx = os.path.join(WORK, "c%d.cxt" % seed)
    subprocess.run([BIN, "gen", "context", "--objects", str(objects), "--attributes", str(attrs), "--density",
                    str(dens), "--seed", str(seed), "-o", ctx], check=True, env=ENV, capture_output=True)
    out = os.path.join(WORK, "e%d" % seed)
    for threads in (1, 2):
        r = subprocess.run([BIN, "lattice", ctx, "--edges", "--min-support", str(supp), "-t", str(threads), "-o", out,
                            "--force", "-q"], env=ENV, capture_output=True, text=True)
        check(r.returncode == 0, "%s --edges: exit %d: %s" % (ctx, r.returncode, r.stderr.strip()))
        if r.returncode:
            continue
        with h5py.File(os.path.join(out, "lattice.h5")) as f:
            off, ids = f["intents/offsets"][:], f["intents/ids"][:]
            eoff, eids = f["edges/offsets"][:], f["edges/ids"][:]
            n_edges = f.attrs["n_edges"]
        intents = [ids[off[i]:off[i + 1]].tolist() for i in range(len(off) - 1)]
        got = [eids[eoff[i]:eoff[i + 1]].tolist() for i in range(len(eoff) - 1)]
        want = brute_covers(intents)
        tag = "%d x %d at %.2f, min support %d, %d threads" % (objects, attrs, dens, supp, threads)
        check(got == want, "%s: %d concepts' covers differ" % (tag, sum(g != w for g, w in zip(got, want))))
        check(n_edges == len(eids) and eoff[0] == 0, "%s: n_edges" % tag)
        info = subprocess.run([BIN, "info", os.path.join(out, "lattice.h5")], env=ENV, capture_output=True, text=True)
        check(info.returncode == 0, "%s: info refuses the file: %s" % (tag, info.stderr.strip()))
# Refused: without -o, and on several ranks (for now); nothing is written.
r = subprocess.run([BIN, "lattice", os.path.join(WORK, "c1.cxt"), "--edges", "--text"], env=ENV, capture_output=True,
                   text=True)
check(r.returncode == 2 and "give -o DIR" in r.stderr, "--edges without -o: %d %s" % (r.returncode, r.stderr.strip()))
r = subprocess.run(["mpirun", "-np", "2", BIN, "lattice", os.path.join(WORK, "c1.cxt"), "--edges", "-o",
                    os.path.join(WORK, "mp"), "-q"], env=ENV, capture_output=True, text=True)
check(r.returncode != 0 and "one rank" in r.stderr and not os.path.exists(os.path.join(WORK, "mp", "lattice.h5")),
      "--edges on 2 ranks: %d %s" % (r.returncode, r.stderr.strip()[-200:]))
# A damaged /edges is refused by info.
bad = os.path.join(WORK, "e1", "lattice.h5")
with h5py.File(bad, "r+") as f:
    f["edges/offsets"][-1] = f["edges/offsets"][-1] + 3
r = subprocess.run([BIN, "info", bad], env=ENV, capture_output=True, text=True)
check(r.returncode == 2 and "edges" in r.stderr, "damaged /edges: %d %s" % (r.returncode, r.stderr.strip()))
finish("%d checks, %d failed")
