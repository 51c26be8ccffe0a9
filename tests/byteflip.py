"""Byte-flip sweep over a result file: a reader of result files must answer
every damaged copy with a clear message and exit status 2 (or read it, if
the flip hit bytes that do not matter), never crash, hang or print garbage
without complaint.

usage: byteflip.py BIN FILE.h5 FLIPS SEED WORKDIR

Flips FLIPS single bytes (one per copy, positions spread over the file by
SEED), and for each copy runs `BIN info COPY` and `BIN info --text COPY`
under a timeout.  Prints one line per failure and a summary; exits 1 when
any run crashed (a signal), timed out, or exited with a status other than
0 or 2.  The copies of a master's parts are damaged too: the master is
copied with its parts, and the flip lands in any of the set's files.
"""
import os
import random
import shutil
import subprocess
import sys


def main():
    binary, path, flips, seed, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    src_dir = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    workload = name.split(".")[0]
    # The result and its parts (a master's), nothing else of the directory.
    files = [f for f in sorted(os.listdir(src_dir)) if f == name or (f.startswith(workload + ".") and ".part-" in f)]
    sizes = {f: os.path.getsize(os.path.join(src_dir, f)) for f in files}
    total = sum(sizes.values())
    rng = random.Random(seed)
    failures = 0
    outcomes = {}
    for k in range(flips):
        d = os.path.join(work, "flip%04d" % k)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for f in files:
            shutil.copyfile(os.path.join(src_dir, f), os.path.join(d, f))
        # A position in the concatenation of the set's files, so that large
        # files get proportionally more flips; the first 4 KiB of every
        # file (its metadata) twice as often as the rest.
        pos = rng.randrange(total)
        if rng.random() < 0.5:
            f = rng.choice(files)
            off = rng.randrange(min(4096, sizes[f]))
        else:
            for f in files:
                if pos < sizes[f]:
                    off = pos
                    break
                pos -= sizes[f]
        victim = os.path.join(d, f)
        with open(victim, "r+b") as fh:
            fh.seek(off)
            b = fh.read(1)
            fh.seek(off)
            fh.write(bytes([b[0] ^ (1 << rng.randrange(8))]))
        for args in (["info"], ["info", "--text"]):
            try:
                r = subprocess.run([binary] + args + [os.path.join(d, name)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, timeout=60)
                rc = r.returncode
                err = r.stderr.decode(errors="replace").strip().splitlines()
            except subprocess.TimeoutExpired:
                rc, err = "timeout", []
            outcomes[rc] = outcomes.get(rc, 0) + 1
            ok = rc in (0, 2) and (rc == 0 or (err and err[-1].startswith("fcbo-dist: error:")))
            if not ok:
                failures += 1
                print("FAIL: %s byte %d of %s flipped: %s exit %s: %s" % (" ".join(args), off, f, workload, rc,
                                                                         " | ".join(err[-3:])))
        if failures == 0:
            shutil.rmtree(d)
    print("%s: %d copies, outcomes %s, %d failures" % (name, flips, dict(sorted(outcomes.items(), key=str)), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
