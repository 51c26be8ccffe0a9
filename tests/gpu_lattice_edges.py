"""lattice --edges on the CUDA backend (the up pass by rows on the device,
src/lattice/lattice_covers_gpu.cu) against brute force: random contexts
from 1 to 18 attribute words (past 16 the host takes every concept), with
and without a minimum support, every concept on the device
(FD_EDGES_PASS=rows) and the automatic split; a context where one concept
has 70 covers (more than a warp keeps: the host finds that one); and the
shared mushroom data against the CPU backend's covers.  The summary must
say the device took them.
With two GPUs, the same on two ranks (each rank's share on its GPU, the
pairs routed to the ranks that hold them).
usage: gpu_lattice_edges.py FCBO_DIST WORKDIR BACKEND GPUS MUSHROOM_OR_NONE"""
import os
import subprocess
import sys

from covers_oracle import brute_covers, read_covers
from testlib import CPU_ENV, ENV, check, fcbo, finish

BIN, WORK, GB, GPUS, MUSHROOM = sys.argv[1:6]
RANKS = (1, 2) if int(GPUS) >= 2 else (1,)
os.makedirs(WORK, exist_ok=True)
ON_GPU = GB == "cuda"


def run(ctx, out, env, *args, backend=GB, ranks=1):
    return fcbo(BIN, "lattice", ctx, "--backend", backend, "--edges", "-o", out, "--force", *args,
                env=dict(env or ENV), ranks=ranks)


def gpu_share(stderr):
    """How many concepts the summary says the device found (0: none)."""
    for line in stderr.splitlines():
        if "by rows on the GPU" in line:
            return int(line.split("upper covers; ")[1].split(" of ")[0])
        if "of them on the GPU" in line:
            return int(line.split()[0])
    return 0


contexts = [(30, 8, 0.3, 1, 0), (80, 10, 0.6, 3, 0), (120, 14, 0.25, 4, 3), (50, 9, 0.5, 5, 10), (40, 6, 0.9, 7, 0),
            (300, 70, 0.05, 8, 0), (200, 80, 0.04, 9, 2), (150, 300, 0.03, 10, 0), (300, 900, 0.012, 11, 0),
            (120, 1100, 0.02, 12, 0)]
for objects, attrs, dens, seed, supp in contexts:
    ctx = os.path.join(WORK, "c%d.cxt" % seed)
    subprocess.run([BIN, "gen", "context", "--objects", str(objects), "--attributes", str(attrs), "--density",
                    str(dens), "--seed", str(seed), "-o", ctx], check=True, env=CPU_ENV, capture_output=True)
    words = (attrs + 63) // 64
    for pas, ranks in [(p, k) for k in RANKS for p in ("rows", "auto")]:
        out = os.path.join(WORK, "e%d%s%d" % (seed, pas, ranks))
        tag = "%d x %d at %.2f, min support %d, FD_EDGES_PASS=%s, %d ranks" % (objects, attrs, dens, supp, pas, ranks)
        r = run(ctx, out, dict(ENV, FD_EDGES_PASS=pas), "--min-support", supp, ranks=ranks)
        check(r.returncode == 0, "%s: exit %d: %s" % (tag, r.returncode, r.stderr.strip()[-400:]))
        if r.returncode != 0:
            continue
        intents, got, _, sized, _, _ = read_covers(os.path.join(out, "lattice.h5"))
        want = brute_covers(intents)
        check(got == want, "%s: %d concepts' covers differ" % (tag, sum(g != w for g, w in zip(got, want))))
        check(sized, "%s: n_edges" % tag)
        if ON_GPU and pas == "rows" and ranks == 1:
            # Up to 16 words, every concept with a non-empty intent goes to
            # the device, which leaves those of more than 64 covers (the
            # bottom's are often the objects' rows) and, rarely, one whose
            # maximal candidates on the way outgrow 64; past 16 words none
            # goes.
            share = gpu_share(r.stderr)
            most = sum(1 for x, w in zip(intents, want) if x and len(w) <= 64)
            check(most * 0.9 <= share <= most if words <= 16 else share == 0,
                  "%s: the device found %d of %d concepts' covers (%d could be): %s" % (
                      tag, share, len(intents), most, r.stderr.strip()))

# One concept (intent 0..70) with 70 covers {i, 70}: more than a warp
# keeps, so the host finds its covers; the others stay on the device.
ctx = os.path.join(WORK, "coatoms.dat")
with open(ctx, "w") as f:
    for i in range(70):
        f.write("%d 70\n" % i)
    f.write(" ".join(str(i) for i in range(71)) + "\n")
r = run(ctx, os.path.join(WORK, "coatoms"), dict(ENV, FD_EDGES_PASS="rows"))
check(r.returncode == 0, "70 covers: exit %d: %s" % (r.returncode, r.stderr.strip()[-400:]))
if r.returncode == 0:
    intents, got, _, _, _, _ = read_covers(os.path.join(WORK, "coatoms", "lattice.h5"))
    check(got == brute_covers(intents) and max(len(c) for c in got) == 70, "70 covers: they differ")
    if ON_GPU:
        check(gpu_share(r.stderr) == len(intents) - 1, "70 covers: the device should leave that one concept: %s"
              % r.stderr.strip())

# Mushroom: 238,710 concepts, against the CPU backend's covers.  Concept
# ids follow the order of enumeration, which may differ: the covers are
# compared as pairs of intents.
def edges_by_intent(path):
    intents, covers, n, _, _, _ = read_covers(path)
    key = [tuple(x) for x in intents]
    return n, {(key[i], key[u]) for i, us in enumerate(covers) for u in us}


if MUSHROOM != "none":
    rc = run(MUSHROOM, os.path.join(WORK, "mc"), CPU_ENV, backend="cpu")
    check(rc.returncode == 0, "mushroom on the CPU: exit %d: %s" % (rc.returncode, rc.stderr.strip()[-400:]))
    nc, ec = edges_by_intent(os.path.join(WORK, "mc", "lattice.h5")) if rc.returncode == 0 else (0, set())
    for ranks in RANKS:
        rg = run(MUSHROOM, os.path.join(WORK, "mg"), ENV, ranks=ranks)
        check(rg.returncode == 0, "mushroom on %d ranks: exit %d: %s" % (ranks, rg.returncode, rg.stderr.strip()[-400:]))
        if rg.returncode != 0:
            continue
        ng, eg = edges_by_intent(os.path.join(WORK, "mg", "lattice.h5"))
        check(nc == ng == 1370991 and ec == eg, "mushroom on %d ranks: %d and %d edges, %d differ" % (
            ranks, nc, ng, len(ec ^ eg)))
        if ON_GPU:
            check(gpu_share(rg.stderr) > 0, "mushroom on %d ranks: the device found none: %s" % (
                ranks, rg.stderr.strip()))
        print("mushroom on %d ranks: " % ranks + " | ".join(
            l for l in rg.stderr.splitlines() if "covering" in l or "pass" in l))
finish("%d checks, %d failed")
