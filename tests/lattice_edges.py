"""lattice --edges against brute force: on random contexts of several
shapes and densities, with and without a minimum support (iceberg
lattices), on one rank and several, by either pass, every concept's upper covers are exactly the concepts whose
intents are maximal among those strictly inside its intent (the covering
relation of the intents' inclusion order, computed here by all pairs).
usage: lattice_edges.py FCBO_DIST WORKDIR"""
import os
import subprocess
import sys

import h5py

from covers_oracle import brute_covers, read_covers
from testlib import CPU_ENV as ENV, check, fcbo, finish

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)



def check_result(out, tag):
    """The covers in out/lattice.h5 against all pairs of its own intents."""
    intents, got, n_edges, sized, virtual, parts = read_covers(os.path.join(out, "lattice.h5"))
    want = brute_covers(intents)
    check(got == want, "%s: %d concepts' covers differ" % (tag, sum(g != w for g, w in zip(got, want))))
    check(sized, "%s: n_edges" % tag)
    check(virtual == parts, "%s: /edges virtual %s over parts %s" % (tag, virtual, parts))
    info = subprocess.run([BIN, "info", os.path.join(out, "lattice.h5")], env=ENV, capture_output=True, text=True)
    check(info.returncode == 0 and ("n_edges                %d" % n_edges) in info.stdout,
          "%s: info refuses the file or has no n_edges: %s" % (tag, info.stderr.strip()))


# Sparse and dense contexts, so that every pass runs (up by columns or by
# rows, each concept taking the cheaper; down, lower covers routed to the
# rank below; FD_EDGES_PASS forces one), on 1 to 3 ranks.
for objects, attrs, dens, seed, supp in ((30, 8, 0.3, 1, 0), (60, 12, 0.4, 2, 0), (80, 10, 0.6, 3, 0),
                                         (120, 14, 0.25, 4, 3), (50, 9, 0.5, 5, 10), (1, 4, 0.5, 6, 0),
                                         (40, 6, 0.9, 7, 0), (300, 70, 0.05, 8, 0), (200, 80, 0.04, 9, 2)):
    ctx = os.path.join(WORK, "c%d.cxt" % seed)
    subprocess.run([BIN, "gen", "context", "--objects", str(objects), "--attributes", str(attrs), "--density",
                    str(dens), "--seed", str(seed), "-o", ctx], check=True, env=ENV, capture_output=True)
    out = os.path.join(WORK, "e%d" % seed)
    for threads, ranks, pas in ((1, 1, "auto"), (2, 1, "rows"), (1, 1, "columns"), (2, 1, "down"), (1, 2, "auto"),
                                (2, 3, "columns"), (1, 3, "down")):
        env = dict(ENV, FD_EDGES_PASS=pas)
        r = fcbo(BIN, "lattice", ctx, "--edges", "--min-support", supp, "-t", threads, "-o", out, "--force", "-q",
                 ranks=ranks, env=env)
        tag = "%d x %d at %.2f, min support %d, %d threads, %d ranks, %s" % (objects, attrs, dens, supp, threads,
                                                                            ranks, pas)
        check(r.returncode == 0, "%s --edges: exit %d: %s" % (tag, r.returncode, r.stderr.strip()))
        if r.returncode == 0:
            check_result(out, tag)
# The summary names the pass taken.
ctx = os.path.join(WORK, "c3.cxt")
for pas, want in (("down", "pass down"), ("rows", "pass up (upper covers; %d of %d concepts by rows"),
                  ("columns", "pass up (upper covers; 0 of %d concepts by rows")):
    r = fcbo(BIN, "lattice", ctx, "--edges", "-o", os.path.join(WORK, "s"), "--force", env=dict(ENV, FD_EDGES_PASS=pas))
    with h5py.File(os.path.join(WORK, "s", "lattice.h5")) as f:
        n = int(f.attrs["n_concepts"])
    # The top concept (empty intent here) has nothing above it and takes no way.
    want = want % ((n - 1, n) if want.count("%d") == 2 else (n,)) if "%d" in want else want
    check(r.returncode == 0 and want in r.stderr, "FD_EDGES_PASS=%s: the summary does not say %r: %s" % (
        pas, want, r.stderr.strip()))
# --stats adds the covers' phases.
r = fcbo(BIN, "lattice", ctx, "--edges", "-o", os.path.join(WORK, "s"), "--force", "--stats")
check(r.returncode == 0 and "covers: the intents gathered " in r.stderr and ", written " in r.stderr,
      "--edges --stats: no phases of the covers: %s" % r.stderr.strip()[-400:])
# Refused: without -o (on one rank and on two); a bad FD_EDGES_PASS; nothing is written.
for ranks in (1, 2):
    r = fcbo(BIN, "lattice", os.path.join(WORK, "c1.cxt"), "--edges", "--text", ranks=ranks)
    check(r.returncode == 2 and "give -o DIR" in r.stderr,
          "--edges without -o on %d ranks: %d %s" % (ranks, r.returncode, r.stderr.strip()[-300:]))
r = fcbo(BIN, "lattice", os.path.join(WORK, "c1.cxt"), "--edges", "-o", os.path.join(WORK, "bad"),
         env=dict(ENV, FD_EDGES_PASS="sideways"))
check(r.returncode == 2 and "FD_EDGES_PASS" in r.stderr and not os.path.exists(os.path.join(WORK, "bad", "lattice.h5")),
      "bad FD_EDGES_PASS: %d %s" % (r.returncode, r.stderr.strip()))
# FD_EDGES_PASS=down where the rows do not fit its memory (2 bitsets of
# 200,000 objects a attribute over 12,000 attributes: past 256 MiB):
# refused by name, nothing written; auto takes the up pass there.
r = fcbo(BIN, "gen", "context", "--objects", 200000, "--attributes", 12000, "--density", 0.0001, "--seed", 3,
         "-o", os.path.join(WORK, "wide.dat"))
r = fcbo(BIN, "lattice", os.path.join(WORK, "wide.dat"), "--edges", "-o", os.path.join(WORK, "wide"),
         env=dict(ENV, FD_EDGES_PASS="down"))
check(r.returncode == 2 and "FD_EDGES_PASS=down: the rows (200000 x 12000) do not fit" in r.stderr
      and not os.path.exists(os.path.join(WORK, "wide", "lattice.h5")), "down past its memory: %d %s" % (
          r.returncode, r.stderr.strip()[-300:]))
r = fcbo(BIN, "lattice", os.path.join(WORK, "wide.dat"), "--edges", "-o", os.path.join(WORK, "wide"), "--force")
check(r.returncode == 0 and "up" in r.stderr, "auto past down's memory: %d %s" % (r.returncode, r.stderr.strip()[-300:]))
# A damaged /edges is refused by info.
bad = os.path.join(WORK, "e1", "lattice.h5")
with h5py.File(bad, "r+") as f:
    f["edges/offsets"][-1] = f["edges/offsets"][-1] + 3
r = subprocess.run([BIN, "info", bad], env=ENV, capture_output=True, text=True)
check(r.returncode == 2 and "edges" in r.stderr, "damaged /edges: %d %s" % (r.returncode, r.stderr.strip()))
bad = os.path.join(WORK, "e2", "lattice.h5")
with h5py.File(bad, "r+") as f:
    f.attrs["n_edges"] = f.attrs["n_edges"] + 1
r = subprocess.run([BIN, "info", bad], env=ENV, capture_output=True, text=True)
check(r.returncode == 2 and "n_edges" in r.stderr, "n_edges off by one: %d %s" % (r.returncode, r.stderr.strip()))
finish("%d checks, %d failed")
