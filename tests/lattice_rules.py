"""fcbo-dist rules against brute force, on random contexts of several
shapes and densities, full and iceberg lattices, one rank and three:
 - the stem base is exactly {P -> P''\\P : P a pseudo-intent}, the
   pseudo-intents found from their definition over all 2^m attribute sets
   (P != P'', and Q'' <= P for every pseudo-intent Q strictly inside P),
   with |P'| as support;
 - the Luxenburger basis is exactly one rule per covering pair of
   (frequent) intents with confidence >= the minimum, support, confidence
   and lift computed here from the objects;
 - each implication holds in the context, and closing any attribute set
   under the stem base gives its closure (the basis is complete);
and a context edited after the lattice run, a hostile /edges and a missing
input are refused with exit status 2, leaving no rules.h5.
usage: lattice_rules.py FCBO_DIST WORKDIR"""
import itertools
import os
import shutil
import sys

import h5py
import numpy as np

from testlib import check, fcbo, finish

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)



def read_cxt(path):
    lines = open(path).read().split("\n")
    assert lines[0] == "B"
    g, m = int(lines[2]), int(lines[3])
    rows = [l for l in lines[5 + g + m:] if l][:g]
    return np.array([[ch == "X" for ch in r] for r in rows], dtype=bool).reshape(g, m)


class Oracle:
    def __init__(self, I):
        self.I = I
        self.g, self.m = I.shape

    def extent(self, X):
        e = np.ones(self.g, dtype=bool)
        for a in X:
            e &= self.I[:, a]
        return e

    def closure(self, X):
        e = self.extent(X)
        return frozenset(a for a in range(self.m) if self.I[e, a].all())

    def all_sets(self):
        for k in range(self.m + 1):
            for X in itertools.combinations(range(self.m), k):
                yield frozenset(X)

    def stem_base(self):
        pseudo = []
        for P in self.all_sets():  # by size: every Q inside P comes first
            C = self.closure(P)
            if C == P:
                continue
            if all(self.closure(Q) <= P for Q in pseudo if Q < P):
                pseudo.append(P)
        return {(P, self.closure(P) - P, int(self.extent(P).sum())) for P in pseudo}

    def luxenburger(self, min_support, min_conf):
        intents = {self.closure(X) for X in self.all_sets()}
        supp = {B: int(self.extent(B).sum()) for B in intents}
        freq = [B for B in intents if supp[B] >= min_support]
        rules = set()
        for lo in freq:
            for up in freq:
                if not up < lo:
                    continue
                if any(up < mid < lo for mid in freq):
                    continue
                if supp[lo] == 0:
                    continue
                conf = supp[lo] / supp[up]
                if conf < min_conf:
                    continue
                concl = lo - up
                lift = conf * self.g / int(self.extent(concl).sum())
                rules.add((up, concl, supp[lo], round(conf, 12), round(lift, 12)))
        return rules


def sets(g, name):
    off, ids = g[name + "/offsets"][:], g[name + "/ids"][:]
    return [frozenset(int(a) for a in ids[off[k]:off[k + 1]]) for k in range(len(off) - 1)]


def run(*args, ranks=1, must=False):
    r = fcbo(BIN, *args, ranks=ranks)
    if must and r.returncode:
        raise SystemExit("fcbo-dist %s: exit %d: %s" % (" ".join(map(str, args)), r.returncode, r.stderr))
    return r


cases = [(10, 5, 0.4, 1), (14, 7, 0.35, 2), (12, 8, 0.5, 3), (16, 6, 0.25, 4), (9, 9, 0.45, 5), (20, 8, 0.3, 6)]
for n_obj, n_attr, dens, seed in cases:
    cxt = os.path.join(WORK, f"c{seed}.cxt")
    run("gen", "context", "--objects", n_obj, "--attributes", n_attr, "--density", dens, "--seed", seed, "-o", cxt,
        must=True)
    orc = Oracle(read_cxt(cxt))
    stem = orc.stem_base()
    for min_support, min_conf, ranks, edges in [(0, 0.5, 1, False), (2, 0.3, 3, False), (0, 0.0, 1, True)]:
        d = os.path.join(WORK, f"l{seed}-{min_support}-{ranks}{'e' if edges else ''}")
        shutil.rmtree(d, ignore_errors=True)
        run("lattice", cxt, "-o", d, "--min-support", min_support, "-q", *(["--edges"] if edges else []),
            ranks=ranks, must=True)
        lat = os.path.join(d, "lattice.h5")
        r = run("rules", d, "--min-confidence", min_conf, "-q")
        what = f"seed {seed} min_support {min_support} min_conf {min_conf} ranks {ranks} edges {edges}"
        check(r.returncode == 0, f"{what}: rules exit {r.returncode}: {r.stderr}")
        if r.returncode:
            continue
        with h5py.File(os.path.join(d, "rules.h5")) as f:
            check(f.attrs["format"] == b"fcbo-dist rules" and f.attrs["complete"] == 1, f"{what}: attributes")
            imp = f["implications"]
            got = set(zip(sets(imp, "premise"), sets(imp, "conclusion"), (int(s) for s in imp["support"][:])))
            check(got == stem and len(got) == imp["support"].shape[0] == f.attrs["n_implications"],
                  f"{what}: stem base: {len(got)} implications, oracle {len(stem)}; "
                  f"extra {sorted(map(sorted, (p for p, _, _ in got - stem)))[:3]}, "
                  f"missing {sorted(map(sorted, (p for p, _, _ in stem - got)))[:3]}")
            ru = f["rules"]
            got = set(zip(sets(ru, "premise"), sets(ru, "conclusion"), (int(s) for s in ru["support"][:]),
                          (round(float(c), 12) for c in ru["confidence"][:]), (round(float(l), 12) for l in ru["lift"][:])))
            want = orc.luxenburger(min_support, min_conf)
            check(got == want and len(got) == ru["support"].shape[0] == f.attrs["n_rules"],
                  f"{what}: Luxenburger basis: {len(got)} rules, oracle {len(want)}")
            # lower/upper name the lattice's concepts the rule joins
            with h5py.File(lat) as L:
                ints = sets(L, "intents")
                sup = L["supports"][:]
            ok = all(ints[int(u)] == p and ints[int(lo)] == p | c and int(sup[int(lo)]) == s
                     for p, c, s, lo, u in zip(sets(ru, "premise"), sets(ru, "conclusion"), ru["support"][:],
                                                ru["lower"][:], ru["upper"][:]))
            check(ok, f"{what}: /rules/lower and /rules/upper are not the concepts of the rules")
    # the basis is sound and complete: closing any set under it gives its closure
    imps = [(p, c) for p, c, _ in stem]

    def close(X):
        X = set(X)
        changed = True
        while changed:
            changed = False
            for p, c in imps:
                if p <= X and not c <= X:
                    X |= c
                    changed = True
        return frozenset(X)

    check(all(close(X) == orc.closure(X) for X in orc.all_sets()), f"seed {seed}: the oracle's stem base is not complete")
    # --text prints the same implications
    t = run("rules", os.path.join(WORK, f"l{seed}-0-1"), "--text", "--basis", "stem", "-q")
    lines = [l for l in t.stdout.splitlines() if not l.startswith("#")]
    parsed = set()
    for l in lines:
        sides, sup = l.rsplit("\t", 1)
        p, c = sides.split("=>")
        parsed.add((frozenset(map(int, p.split())), frozenset(map(int, c.split())), int(sup)))
    check(t.returncode == 0 and parsed == stem, f"seed {seed}: --text's stem base differs")

# ---------------- refusals ----------------
d = os.path.join(WORK, "l1-0-1")
cxt = os.path.join(WORK, "c1.cxt")
lat = os.path.join(d, "lattice.h5")
os.remove(os.path.join(d, "rules.h5"))
saved = open(cxt).read()
open(cxt, "w").write(saved.replace("X", ".", 1))
r = run("rules", d)
check(r.returncode == 2 and "SHA-256" in r.stderr and not os.path.exists(os.path.join(d, "rules.h5")),
      f"an edited context: exit {r.returncode}: {r.stderr}")
os.remove(cxt)
r = run("rules", d)
check(r.returncode == 2 and "--context" in r.stderr, f"a missing context: exit {r.returncode}: {r.stderr}")
moved = os.path.join(WORK, "moved.cxt")
open(moved, "w").write(saved)
r = run("rules", d, "--context", moved, "-q")
check(r.returncode == 0 and os.path.exists(os.path.join(d, "rules.h5")), f"--context: exit {r.returncode}: {r.stderr}")
open(cxt, "w").write(saved)
# a hostile /edges: a cover id out of range
e = os.path.join(WORK, "l2-0-1e")  # made with --edges
bad = os.path.join(WORK, "bad")
shutil.rmtree(bad, ignore_errors=True)
shutil.copytree(e, bad)
os.remove(os.path.join(bad, "rules.h5"))
with h5py.File(os.path.join(bad, "lattice.h5"), "r+") as f:
    ids = f["edges/ids"]
    if ids.shape[0]:
        ids[0] = 10 ** 9
r = run("rules", bad)
check(r.returncode == 2 and "edge" in r.stderr and not os.path.exists(os.path.join(bad, "rules.h5")),
      f"a hostile /edges: exit {r.returncode}: {r.stderr}")
# info checks a rules file's counts against its datasets
good = os.path.join(WORK, "l3-0-1", "rules.h5")
r = run("info", good)
check(r.returncode == 0 and "stem base:" in r.stdout and "Luxenburger:" in r.stdout, f"info: exit {r.returncode}: {r.stderr}")
edited = os.path.join(WORK, "edited-rules.h5")
shutil.copy(good, edited)
with h5py.File(edited, "r+") as f:
    f.attrs["n_rules"] = np.uint64(f.attrs["n_rules"] + 5)
r = run("info", edited)
check(r.returncode == 2 and "rules/premise/offsets" in r.stderr, f"info of a rules file with a wrong n_rules: exit {r.returncode}: {r.stderr}")
# a hostile /intents/offsets in a lattice without /edges (whose covers
# rules computes from the intents): an offset far past the ids
bad2 = os.path.join(WORK, "bad2")
shutil.rmtree(bad2, ignore_errors=True)
shutil.copytree(os.path.join(WORK, "l3-0-1"), bad2)
os.remove(os.path.join(bad2, "rules.h5"))
with h5py.File(os.path.join(bad2, "lattice.h5"), "r+") as f:
    f["intents/offsets"][2] = 10 ** 12
r = run("rules", bad2)
check(r.returncode == 2 and "intents/offsets" in r.stderr and not os.path.exists(os.path.join(bad2, "rules.h5")),
      f"a hostile /intents/offsets: exit {r.returncode}: {r.stderr}")
# an existing rules file is kept without --force, replaced with it
before = open(good, "rb").read()
r = run("rules", os.path.join(WORK, "l3-0-1"), "--basis", "stem", "-q")
check(r.returncode == 2 and "--force" in r.stderr and open(good, "rb").read() == before,
      f"rules over an existing rules.h5 without --force: exit {r.returncode}: {r.stderr}")
r = run("rules", os.path.join(WORK, "l3-0-1"), "--basis", "stem", "--force", "-q")
with h5py.File(good) as f:
    check(r.returncode == 0 and f.attrs["n_rules"] == 0 and f.attrs["n_implications"] > 0,
          f"rules --force: exit {r.returncode}: {r.stderr}")
r = run("rules", os.path.join(WORK, "nothing-here"))
check(r.returncode == 2, f"no lattice: exit {r.returncode}")

finish("%d checks, %d failed")
