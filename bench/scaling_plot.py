"""Speed-up and parallel efficiency against the number of ranks, from the
CSV files of bench/scaling.sh: one line per problem and machine (the
newest date of each), on the wall time and on the compute phases
(enumeration; pass 1 plus writing), with the ideal line.  Needs
matplotlib.

usage: scaling_plot.py [--results DIR] [--out docs/scaling.png]"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--results", default=os.path.join(here, "results"))
ap.add_argument("--out", default=os.path.join(here, "..", "docs", "scaling.png"))
args = ap.parse_args()


def series(path, workload, compute_cols):
    """{(label, machine): [(P, wall, compute)]} from the newest date of each."""
    if not os.path.exists(path):
        return {}
    rows = list(csv.DictReader(open(path)))
    newest = {}
    for r in rows:
        key = (r["problem"], r["machine"])
        newest[key] = max(newest.get(key, ""), r["date"])
    out = {}
    for r in rows:
        key = (r["problem"], r["machine"])
        if r["date"] != newest[key]:
            continue
        comp = sum(float(r[c]) for c in compute_cols)
        out.setdefault(("%s %s" % (workload, r["problem"]), r["machine"]), {})[int(r["ranks"])] = (
            float(r["wall_s"]), comp)
    return {k: sorted((p,) + v for p, v in d.items()) for k, d in out.items()}


data = {}
data.update(series(os.path.join(args.results, "scaling-lattice.csv"), "lattice", ["compute_s"]))
data.update(series(os.path.join(args.results, "scaling-spearman.csv"), "spearman", ["compute_s", "write_s"]))
if not data:
    sys.exit("scaling_plot.py: no scaling-*.csv rows under %s" % args.results)

fig, (ax_s, ax_e) = plt.subplots(1, 2, figsize=(11, 4.4))
pmax = max(p for pts in data.values() for p, _, _ in pts)
emax = 1.0
# A colour per problem; solid circles for the wall time, dashed squares
# for the compute phases.
colours = plt.cm.tab10.colors + plt.cm.Dark2.colors
for k, ((label, machine), pts) in enumerate(sorted(data.items())):
    p0, w0, c0 = pts[0]
    ps = [p for p, _, _ in pts]
    colour = colours[k % len(colours)]
    for idx, (base, style) in enumerate(((w0, "-o"), (c0, "--s"))):
        t = [(w if idx == 0 else c) for _, w, c in pts]
        speed = [base / x for x in t]
        eff = [s * p0 / p for s, p in zip(speed, ps)]
        ax_s.plot(ps, speed, style, color=colour, label=label if idx == 0 else None)
        ax_e.plot(ps, eff, style, color=colour)
        emax = max(emax, max(eff))
ax_s.plot([], [], "-o", color="black", label="wall time")
ax_s.plot([], [], "--s", color="black", label="compute phases")
ax_s.plot([1, pmax], [1, pmax], ":", color="grey", label="ideal")
ax_e.axhline(1.0, linestyle=":", color="grey")
for ax, title in ((ax_s, "speed-up"), (ax_e, "parallel efficiency")):
    ax.set_xlabel("ranks (one GPU each)")
    ax.set_title(title)
    ax.set_xticks(sorted({p for pts in data.values() for p, _, _ in pts}))
    ax.grid(alpha=0.3)
ax_e.set_ylim(0, 1.05 * emax + 0.05)  # superlinear points stay in view
ax_s.legend(fontsize=7, loc="upper left")
machines = sorted({m for _, m in data})
fig.suptitle("fcbo-dist strong scaling; " + "; ".join(machines), fontsize=8)
fig.tight_layout()
fig.savefig(args.out, dpi=110)
print("wrote", args.out)
