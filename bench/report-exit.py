#!/usr/bin/env python3
"""Where a command's time goes at its end: the seconds from the spawn to
its first and last line on standard error (fcbo-dist writes --stats at
its job's report, after the output is committed) and to its exit, as
the shell sees it.  The gap between the last line and the exit is the
process's end (closing files, HDF5, the GPU's release, the kernel's
cleanup), which --stats cannot time itself.

    bench/report-exit.py [--reps N] -- COMMAND [ARGS...]

Prints one line a run (results: bench/results/lattice-gpu-auto.txt)."""
import subprocess
import sys
import time

args = sys.argv[1:]
reps = 1
if args[:1] == ["--reps"] and len(args) > 1:
    reps, args = int(args[1]), args[2:]
if args[:1] == ["--"]:
    args = args[1:]
if not args or args[0] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0 if args else 2)
for _ in range(reps):
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first = last = None
    for line in p.stderr:
        last = time.perf_counter() - t0
        first = last if first is None else first
    rc = p.wait()
    end = time.perf_counter() - t0
    lines = "no lines" if first is None else "first line %.3f s, last line %.3f s" % (first, last)
    print("%s, exit %.3f s (status %d)" % (lines, end, rc))
